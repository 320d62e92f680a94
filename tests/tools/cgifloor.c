/*
 * cgifloor — the trivial CGI program `make bench` compares taskspool.cgi
 * with: it reads CONTENT_LENGTH bytes of body and answers 202 with a small
 * JSON body, nothing else.  Its throughput through the web server is the
 * floor set by one fork+exec per request.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int
main(void)
{
	const char *cl = getenv("CONTENT_LENGTH");
	long n = cl != NULL ? atol(cl) : 0;
	char buf[4096];

	while (n > 0) {
		ssize_t r = read(0, buf, n < (long)sizeof(buf) ? (size_t)n :
		    sizeof(buf));

		if (r <= 0)
			break;
		n -= r;
	}
	fputs("Status: 202 Accepted\r\nContent-Type: application/json\r\n"
	    "Content-Length: 17\r\n\r\n{\"status\":\"ok\"}\r\n", stdout);
	return 0;
}
