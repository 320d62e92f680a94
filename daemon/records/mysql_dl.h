/*
 * mysql_dl — libmariadb (MariaDB Connector/C) loaded with dlopen(3) for
 * taskspool.cgi.  The CGI runs once per request and is linked with
 * --as-needed so that it loads no library it does not call; answering
 * GET /api/tasks from MariaDB needs libmariadb (and libssl and libz
 * behind it), but only when the `mariadb` key is set and only for that
 * request.  So the CGI links its own copy of records_mariadb.c, compiled
 * with -DTS_MYSQL_DL: this header then turns every mysql_* call of that
 * file into a call through a pointer filled by mysql_dl_load().  The
 * daemon and the CLI link libmariadb as usual and never use this.
 *
 * The list below must name every mysql_* function records_mariadb.c
 * calls (a missing one makes the CGI link fail, with libmariadb NEEDED;
 * the Makefile checks that the CGI has no libmariadb dependency).
 */
#ifndef TASKSPOOL_MYSQL_DL_H
#define TASKSPOOL_MYSQL_DL_H

#include <stddef.h>
#include <mysql.h>

#define MYSQL_DL_FUNCS(X) \
	X(mysql_close) \
	X(mysql_commit) \
	X(mysql_errno) \
	X(mysql_error) \
	X(mysql_field_count) \
	X(mysql_free_result) \
	X(mysql_init) \
	X(mysql_next_result) \
	X(mysql_options) \
	X(mysql_query) \
	X(mysql_real_connect) \
	X(mysql_real_query) \
	X(mysql_rollback) \
	X(mysql_stmt_affected_rows) \
	X(mysql_stmt_bind_param) \
	X(mysql_stmt_bind_result) \
	X(mysql_stmt_close) \
	X(mysql_stmt_errno) \
	X(mysql_stmt_error) \
	X(mysql_stmt_execute) \
	X(mysql_stmt_fetch) \
	X(mysql_stmt_free_result) \
	X(mysql_stmt_init) \
	X(mysql_stmt_prepare) \
	X(mysql_stmt_store_result) \
	X(mysql_store_result)

#define MYSQL_DL_DECL(f) extern __typeof__(f) *mysql_dl_##f;
MYSQL_DL_FUNCS(MYSQL_DL_DECL)
#undef MYSQL_DL_DECL

/*
 * Load libmariadb.so.3 (RTLD_NOW | RTLD_LOCAL) and resolve every function
 * of MYSQL_DL_FUNCS, once per process (not thread-safe: the CGI is one
 * thread).  Returns 0, or -1 with dlerror()'s text in why (whylen bytes);
 * a failure is remembered and reported again by later calls.
 */
int mysql_dl_load(char *why, size_t whylen);

#ifdef TS_MYSQL_DL
#define mysql_close (*mysql_dl_mysql_close)
#define mysql_commit (*mysql_dl_mysql_commit)
#define mysql_errno (*mysql_dl_mysql_errno)
#define mysql_error (*mysql_dl_mysql_error)
#define mysql_field_count (*mysql_dl_mysql_field_count)
#define mysql_free_result (*mysql_dl_mysql_free_result)
#define mysql_init (*mysql_dl_mysql_init)
#define mysql_next_result (*mysql_dl_mysql_next_result)
#define mysql_options (*mysql_dl_mysql_options)
#define mysql_query (*mysql_dl_mysql_query)
#define mysql_real_connect (*mysql_dl_mysql_real_connect)
#define mysql_real_query (*mysql_dl_mysql_real_query)
#define mysql_rollback (*mysql_dl_mysql_rollback)
#define mysql_stmt_affected_rows (*mysql_dl_mysql_stmt_affected_rows)
#define mysql_stmt_bind_param (*mysql_dl_mysql_stmt_bind_param)
#define mysql_stmt_bind_result (*mysql_dl_mysql_stmt_bind_result)
#define mysql_stmt_close (*mysql_dl_mysql_stmt_close)
#define mysql_stmt_errno (*mysql_dl_mysql_stmt_errno)
#define mysql_stmt_error (*mysql_dl_mysql_stmt_error)
#define mysql_stmt_execute (*mysql_dl_mysql_stmt_execute)
#define mysql_stmt_fetch (*mysql_dl_mysql_stmt_fetch)
#define mysql_stmt_free_result (*mysql_dl_mysql_stmt_free_result)
#define mysql_stmt_init (*mysql_dl_mysql_stmt_init)
#define mysql_stmt_prepare (*mysql_dl_mysql_stmt_prepare)
#define mysql_stmt_store_result (*mysql_dl_mysql_stmt_store_result)
#define mysql_store_result (*mysql_dl_mysql_store_result)
#endif

#endif
