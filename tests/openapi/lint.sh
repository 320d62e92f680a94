#!/bin/sh
# Lint contrib/openapi/openapi.yaml with @redocly/cli (recommended rules,
# redocly.yaml), then generate TypeScript types from it with
# openapi-typescript (a stock generator) into tests/openapi/gen/ and
# compile client-check.ts against them with tsc --strict.  The versions
# are those tests/openapi/package-lock.json pins, installed into
# tests/openapi/node_modules with `npm ci` (needs the npm registry, or its
# cache; node_modules/ and gen/ are not committed).  Exit status 0 when
# the document has no lint error (warnings are printed) and the generated
# types compile with the client's uses.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
cd "$here"
npm ci --no-audit --no-fund --loglevel=error
npx --no-install redocly lint --config "$here/redocly.yaml" "$top/contrib/openapi/openapi.yaml"
mkdir -p "$here/gen"
npx --no-install openapi-typescript "$top/contrib/openapi/openapi.yaml" -o "$here/gen/api.d.ts"
npx --no-install tsc -p "$here/tsconfig.json"
echo "lint.sh: lint clean; openapi-typescript types compile with client-check.ts"
