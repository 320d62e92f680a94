#!/bin/sh
# Lint contrib/openapi/openapi.yaml with @redocly/cli (the version pinned by
# tests/openapi/package-lock.json, installed into tests/openapi/node_modules
# with `npm ci`; needs the npm registry, or its cache).  Exit status that of
# `redocly lint`: 0 when the document has no error (warnings are printed).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
cd "$here"
npm ci --no-audit --no-fund --loglevel=error
exec npx --no-install redocly lint --config "$here/redocly.yaml" "$top/contrib/openapi/openapi.yaml"
