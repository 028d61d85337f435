#!/usr/bin/env bash
# One command from a fresh clone to the gateway on Deno: set up the toolchain and dependencies (Deno comes from the
# npm registry, as the `deno` package, into node_modules), then run adapters/deno/server.ts.
#
#   bash scripts/start-deno.sh                       # listens on PORT (default 8787)
#   TORII_CONFIG=torii.yaml bash scripts/start-deno.sh
#
# `exec`, and the Deno binary itself rather than the package's Node wrapper (node_modules/.bin/deno spawns it as a
# child and does not pass signals on): SIGTERM and SIGINT reach the server, which drains and exits.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

source scripts/setup.sh
deno_binary="node_modules/deno/deno"
# The package fetches its platform binary on first use when its install script did not.
[ -x "$deno_binary" ] || node node_modules/deno/bin.cjs --version > /dev/null
export PORT="${PORT:-8787}"
exec "$deno_binary" run --allow-net --allow-env --allow-read --allow-write adapters/deno/server.ts "$@"
