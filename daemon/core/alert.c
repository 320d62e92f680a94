/*
 * alert — the failure-alert decisions (see alert.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/alert.h"
#include "core/sign.h"

int
alert_mode_parse(const char *s, enum alert_mode *mode)
{
	if (s == NULL)
		return -1;
	if (strcmp(s, "every") == 0)
		*mode = ALERT_MODE_EVERY;
	else if (strcmp(s, "transition") == 0)
		*mode = ALERT_MODE_TRANSITION;
	else
		return -1;
	return 0;
}

enum alert_kind
alert_decide(enum alert_mode mode, enum alert_prev prev, int failed,
    int is_alert)
{
	if (is_alert)
		return ALERT_KIND_NONE;
	if (mode == ALERT_MODE_EVERY)
		return failed ? ALERT_KIND_FAILED : ALERT_KIND_NONE;
	if (failed)
		return prev == ALERT_PREV_FAILED ? ALERT_KIND_NONE :
		    ALERT_KIND_FAILED;
	return prev == ALERT_PREV_FAILED ? ALERT_KIND_RECOVERED :
	    ALERT_KIND_NONE;
}

int
alert_request_id(const char *id, enum alert_kind kind, size_t max,
    char *out, size_t outlen)
{
	const char *suffix;
	char hex[SIGN_HEX_LEN + 1];
	size_t idlen, slen, keep;

	if (kind == ALERT_KIND_FAILED)
		suffix = ALERT_SUFFIX_FAILED;
	else if (kind == ALERT_KIND_RECOVERED)
		suffix = ALERT_SUFFIX_RECOVERED;
	else
		return -1;
	idlen = strlen(id);
	slen = strlen(suffix);
	if (idlen + slen <= max) {
		if (outlen < idlen + slen + 1)
			return -1;
		memcpy(out, id, idlen);
		memcpy(out + idlen, suffix, slen + 1);
		return 0;
	}
	if (max < 40 || outlen < max + 1)
		return -1;
	if (sign_sha256_hex(id, idlen, hex) != 0)
		return -1;
	keep = max - slen - 17;
	memcpy(out, id, keep);
	out[keep] = '-';
	memcpy(out + keep + 1, hex, 16);
	memcpy(out + keep + 17, suffix, slen + 1);
	return 0;
}

int
alert_prev_parse(const char *data, size_t len, enum alert_prev *prev)
{
	if (len == 8 && memcmp(data, "SUCCESS\n", 8) == 0)
		*prev = ALERT_PREV_SUCCESS;
	else if (len == 7 && memcmp(data, "FAILED\n", 7) == 0)
		*prev = ALERT_PREV_FAILED;
	else
		return -1;
	return 0;
}

const char *
alert_prev_word(int failed)
{
	return failed ? "FAILED\n" : "SUCCESS\n";
}

static int
is_ws(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

int
alert_params(const char *env, size_t len, enum alert_kind kind,
    struct buf *out)
{
	size_t b = 0, e = len, i;
	int empty;

	if (kind == ALERT_KIND_NONE) {
		errno = EINVAL;
		return -1;
	}
	while (b < e && is_ws(env[b]))
		b++;
	while (e > b && is_ws(env[e - 1]))
		e--;
	if (e - b < 2 || env[b] != '{' || env[e - 1] != '}') {
		errno = EINVAL;
		return -1;
	}
	for (i = b + 1; i < e - 1 && is_ws(env[i]); i++)
		;
	empty = i == e - 1;
	if (buf_append(out, env + b, e - 1 - b) != 0 ||
	    buf_puts(out, empty ? "" : ",") != 0 ||
	    buf_puts(out, kind == ALERT_KIND_FAILED ? "\"alert\":\"failed\"}" :
	    "\"alert\":\"recovered\"}") != 0)
		return -1;
	return 0;
}
