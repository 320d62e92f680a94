/*
 * taskspool — the command line client.  Thin main; see cli.c.
 */
#include "cli/cli.h"
#include "spool/log.h"

int
main(int argc, char **argv)
{
	log_init("taskspool", 0, LOG_LEVEL_WARN);
	return cli_main(argc, argv);
}
