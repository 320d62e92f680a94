#!/bin/sh
# tsapi.sh — a POSIX shell client for the taskspool HTTP API (README.md,
# "The HTTP API"): signs each request with TS1-HMAC-SHA256 using openssl
# dgst, sends it with curl, and polls a task until it finishes.
#
#   tsapi.sh submit FILE|-        POST /api/tasks with the file's exact bytes
#   tsapi.sh get ID               GET /api/tasks/ID
#   tsapi.sh wait ID [SECONDS]    poll GET /api/tasks/ID until SUCCESS,
#                                 FAILED or CANCELLED (default 60 s)
#   tsapi.sh cancel ID            DELETE /api/tasks/ID
#   tsapi.sh hold ID              POST /api/tasks/ID/hold (empty body)
#   tsapi.sh release ID           POST /api/tasks/ID/release (empty body)
#   tsapi.sh list [QUERY]         GET /api/tasks?QUERY (QUERY in canonical
#                                 form: names sorted, e.g. limit=5&status=FAILED)
#   tsapi.sh register URL         POST /api/callbacks/register
#   tsapi.sh request METHOD PATH[?QUERY] [FILE]   any signed request
#                                 (GET, POST, PUT, DELETE; QUERY in
#                                 canonical form as for list: the query
#                                 is signed as written)
#
# Environment: TS_URL (e.g. https://tasks.example.com, the API is under
# /api), TS_APP_ID, TS_SECRET (the AppSecret text, used as issued),
# TS_TRACEPARENT (optional: sent as the W3C traceparent header).
# The response body goes to stdout; with TS_VERBOSE=1 the status line and
# headers go to stderr.  Exit status: 0 for a 2xx answer, 1 for any other
# answer, 2 for usage or transport errors; wait exits 0 only on SUCCESS.
set -eu

: "${TS_URL:?set TS_URL}" "${TS_APP_ID:?set TS_APP_ID}" "${TS_SECRET:?set TS_SECRET}"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tsapi.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# request METHOD PATH QUERY BODYFILE: sign (README.md, "Signing a request") and send.
request() {
	method=$1 path=$2 query=$3 body=$4
	ts=$(date +%s)
	nonce=$(openssl rand -hex 16)
	bhash=$(openssl dgst -sha256 -r <"$body" | cut -d' ' -f1)
	# The canonical string: 8 lines, LF-separated, no LF at the end.
	printf 'TS1-HMAC-SHA256\n%s\n%s\n%s\n%s\n%s\n%s\n%s' "$method" "$path" \
	    "$query" "$TS_APP_ID" "$ts" "$nonce" "$bhash" >"$tmp/cs"
	sig=$(openssl dgst -sha256 -hmac "$TS_SECRET" -r <"$tmp/cs" | cut -d' ' -f1)
	url="$TS_URL$path${query:+?$query}"
	set -- -sS -X "$method" -o "$tmp/out" -D "$tmp/hdr" -w '%{http_code}' \
	    -H "X-App-Id: $TS_APP_ID" -H "X-Timestamp: $ts" \
	    -H "X-Nonce: $nonce" -H "X-Signature: $sig" -H 'Expect:'
	if [ -n "${TS_TRACEPARENT:-}" ]; then
		set -- "$@" -H "traceparent: $TS_TRACEPARENT"
	fi
	if [ -s "$body" ] || [ "$method" = POST ]; then
		set -- "$@" -H 'Content-Type: application/json' --data-binary "@$body"
	fi
	code=$(curl "$@" "$url") || exit 2
	[ "${TS_VERBOSE:-0}" = 1 ] && cat "$tmp/hdr" >&2
	cat "$tmp/out"
	case $code in 2??) return 0 ;; *) return 1 ;; esac
}

empty() { : >"$tmp/empty"; echo "$tmp/empty"; }

cmd=${1:-}
[ $# -gt 0 ] && shift
case $cmd in
submit)
	[ $# -eq 1 ] || { echo "usage: tsapi.sh submit FILE|-" >&2; exit 2; }
	if [ "$1" = - ]; then cat >"$tmp/body"; else cp "$1" "$tmp/body"; fi
	request POST /api/tasks "" "$tmp/body" ;;
get)
	[ $# -eq 1 ] || { echo "usage: tsapi.sh get ID" >&2; exit 2; }
	request GET "/api/tasks/$1" "" "$(empty)" ;;
cancel)
	[ $# -eq 1 ] || { echo "usage: tsapi.sh cancel ID" >&2; exit 2; }
	request DELETE "/api/tasks/$1" "" "$(empty)" ;;
hold|release)
	[ $# -eq 1 ] || { echo "usage: tsapi.sh $cmd ID" >&2; exit 2; }
	request POST "/api/tasks/$1/$cmd" "" "$(empty)" ;;
list)
	request GET /api/tasks "${1:-}" "$(empty)" ;;
register)
	[ $# -eq 1 ] || { echo "usage: tsapi.sh register URL" >&2; exit 2; }
	printf '{"url":"%s"}' "$1" >"$tmp/body"
	request POST /api/callbacks/register "" "$tmp/body" ;;
request)
	[ $# -ge 2 ] || { echo "usage: tsapi.sh request METHOD PATH [FILE]" >&2; exit 2; }
	body=${3:-$(empty)}
	case $2 in *\?*) q=${2#*\?}; p=${2%%\?*} ;; *) q=; p=$2 ;; esac
	request "$1" "$p" "$q" "$body" ;;
wait)
	[ $# -ge 1 ] || { echo "usage: tsapi.sh wait ID [SECONDS]" >&2; exit 2; }
	end=$(( $(date +%s) + ${2:-60} ))
	while :; do
		out=$(request GET "/api/tasks/$1" "" "$(empty)") || { echo "$out"; exit 1; }
		# The first "status" member is the task's (quotes inside
		# strings are escaped, so no string can contain it).
		st=$(printf '%s\n' "$out" | awk '{ i = index($0, "\"status\":\"");
		    if (i) { s = substr($0, i + 10); print substr(s, 1, index(s, "\"") - 1) } }')
		case $st in
		SUCCESS) echo "$out"; exit 0 ;;
		FAILED|CANCELLED) echo "$out"; exit 1 ;;
		esac
		[ "$(date +%s)" -lt "$end" ] || { echo "$out"; exit 1; }
		sleep 0.2
	done ;;
*)
	sed -n '2,20s/^# \{0,1\}//p' "$0" >&2
	exit 2 ;;
esac
