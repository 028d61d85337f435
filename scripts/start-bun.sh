#!/usr/bin/env bash
# One command from a fresh clone to the gateway on Bun: set up the toolchain and dependencies (Bun comes from the npm
# registry, as the `bun` package, into node_modules), then run adapters/bun/server.ts.
#
#   bash scripts/start-bun.sh                       # listens on PORT (default 8787)
#   TORII_CONFIG=torii.yaml bash scripts/start-bun.sh
#
# `exec`, so SIGTERM and SIGINT reach the server, which drains and exits.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

source scripts/setup.sh
bun_binary="node_modules/bun/bin/bun.exe"
# The package puts its platform binary in place in its install script; run that when it did not run.
"$bun_binary" --version > /dev/null 2>&1 || node node_modules/bun/install.js
export PORT="${PORT:-8787}"
exec "$bun_binary" adapters/bun/server.ts "$@"
