/*
 * api_html.c — the web console's HTML: escaping every outside byte, the
 * page frame, the one stylesheet (README.md, "The web console").
 *
 * Invariants: every value that did not come from this file goes through
 * html_text() or html_attr(), which escape the five HTML metacharacters
 * (HTML Living Standard §13.1.2.6: "&", "<", ">", '"', "'"), replace a
 * byte that is not well-formed UTF-8 (RFC 3629 §3) with U+FFFD and a C0
 * control (but tab and line feed) or DEL with its Unicode control
 * picture (U+2400 + c, U+2421), so a terminal escape sequence in hook
 * output arrives as visible "␛[31m", inert.  The document is then always
 * valid UTF-8 and no outside byte can open a tag, end an attribute or
 * start a character reference.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "api/api_impl.h"

/* Length of the well-formed UTF-8 sequence at s (n bytes left), 0 when
 * it is not one (overlong, surrogate, past U+10FFFF, cut). */
static size_t
utf8_len(const unsigned char *s, size_t n)
{
	size_t len, i;
	uint32_t cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4, cp = s[0] & 0x07;
	else
		return 0;
	if (n < len)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
	    (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return len;
}

void
html_text_n(struct buf *b, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, k;

	while (i < n) {
		unsigned char ch = p[i];

		switch (ch) {
		case '&': buf_puts(b, "&amp;"); i++; continue;
		case '<': buf_puts(b, "&lt;"); i++; continue;
		case '>': buf_puts(b, "&gt;"); i++; continue;
		case '"': buf_puts(b, "&quot;"); i++; continue;
		case '\'': buf_puts(b, "&#39;"); i++; continue;
		case '\t': case '\n': buf_append(b, s + i, 1); i++; continue;
		}
		if (ch < 0x20 || ch == 0x7f) {
			/* U+2400 + c (U+2421 for DEL), in UTF-8. */
			unsigned cp = ch == 0x7f ? 0x2421 : 0x2400 + ch;
			char u[3] = { (char)(0xe0 | cp >> 12),
			    (char)(0x80 | (cp >> 6 & 0x3f)),
			    (char)(0x80 | (cp & 0x3f)) };

			buf_append(b, u, 3);
			i++;
			continue;
		}
		if ((k = utf8_len(p + i, n - i)) == 0) {
			buf_puts(b, "\xef\xbf\xbd");	/* U+FFFD */
			i++;
			continue;
		}
		buf_append(b, s + i, k);
		i += k;
	}
}

void
html_text(struct buf *b, const char *s)
{
	if (s != NULL)
		html_text_n(b, s, strlen(s));
}

void
html_raw(struct buf *b, const char *fmt, ...)
{
	char tmp[2048];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n > 0)
		buf_append(b, tmp, (size_t)n < sizeof(tmp) ? (size_t)n :
		    sizeof(tmp) - 1);
}

/* The one stylesheet: system fonts, no asset from elsewhere; contrast
 * of text on its background >= 4.5:1 (WCAG 2.1 SC 1.4.3). */
static const char css[] =
"*{box-sizing:border-box}\n"
"body{margin:0;font:15px/1.45 system-ui,sans-serif;color:#1b1b1b;"
"background:#fafafa}\n"
"header{background:#1d3557;color:#fff;padding:.5em 1em;display:flex;"
"gap:1.5em;align-items:center;flex-wrap:wrap}\n"
"header a{color:#fff}\nheader .who{margin-left:auto}\n"
"nav a{margin-right:1em}\nmain{padding:1em;max-width:80em}\n"
"h1{font-size:1.4em;margin:.2em 0 .6em}\nh2{font-size:1.15em}\n"
"table{border-collapse:collapse;margin:.5em 0 1em;background:#fff}\n"
"th,td{border:1px solid #c8c8c8;padding:.25em .5em;text-align:left;"
"vertical-align:top}\nth{background:#eef1f5}\n"
"pre{background:#fff;border:1px solid #c8c8c8;padding:.5em;"
"overflow:auto;max-height:30em;white-space:pre-wrap;word-break:break-all}\n"
".s-SUCCESS{color:#0b6b2b}.s-FAILED{color:#a4161a}"
".s-CANCELLED{color:#5c5c5c}.s-RUNNING{color:#1d4ed8}\n"
"form.inline{display:inline}\n"
"button{font:inherit;padding:.2em .8em;border:1px solid #1d3557;"
"background:#fff;color:#1d3557;border-radius:3px;cursor:pointer}\n"
"button.danger{border-color:#a4161a;color:#a4161a}\n"
"label{display:block;margin:.5em 0 .2em}\n"
"input,select{font:inherit;padding:.25em;border:1px solid #767676}\n"
".login{max-width:24em;margin:3em auto;background:#fff;padding:1.5em;"
"border:1px solid #c8c8c8}\n.err{color:#a4161a}\n"
".spark{width:24em;height:4em;background:#fff;border:1px solid #c8c8c8}\n"
".spark polyline{fill:none;stroke:#1d4ed8;stroke-width:1.5}\n"
".filters{display:flex;gap:1em;align-items:end;flex-wrap:wrap}\n";

const char *
html_css(size_t *len)
{
	*len = sizeof(css) - 1;
	return css;
}

void
html_head(struct buf *b, const char *title, const char *app,
    const char *role, const char *csrf)
{
	buf_puts(b, "<!DOCTYPE html>\n<html lang=\"en\"><head>"
	    "<meta charset=\"utf-8\">"
	    "<meta name=\"viewport\" content=\"width=device-width\">"
	    "<title>");
	html_text(b, title);
	buf_puts(b, " \xe2\x80\x94 taskspool</title>"
	    "<link rel=\"stylesheet\" href=\"/console/style.css\">"
	    "</head><body><header><strong>taskspool</strong>");
	if (app != NULL) {
		buf_puts(b, "<nav aria-label=\"Console\">"
		    "<a href=\"/console/\">Overview</a>"
		    "<a href=\"/console/tasks\">Tasks</a>"
		    "<a href=\"/console/jobs\">Jobs</a></nav>"
		    "<span class=\"who\">");
		html_text(b, app);
		if (role != NULL) {
			buf_puts(b, " (");
			html_text(b, role);
			buf_puts(b, ")");
		}
		buf_puts(b, " <form class=\"inline\" method=\"post\" "
		    "action=\"/console/logout\"><input type=\"hidden\" "
		    "name=\"csrf\" value=\"");
		html_text(b, csrf);
		buf_puts(b, "\"><button type=\"submit\">Log out</button>"
		    "</form></span>");
	}
	buf_puts(b, "</header><main>");
}

void
html_foot(struct buf *b)
{
	buf_puts(b, "</main></body></html>\n");
}
