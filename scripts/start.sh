#!/usr/bin/env bash
# One command from a fresh clone to a running gateway: set up the toolchain and dependencies, build, start.
#
#   bash scripts/start.sh                  # listens on PORT (default 8787)
#   PORT=9000 bash scripts/start.sh
#
# Extra arguments are passed to dist/server.js.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

source scripts/setup.sh
pnpm build
export PORT="${PORT:-8787}"
exec node dist/server.js "$@"
