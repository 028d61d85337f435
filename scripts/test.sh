#!/usr/bin/env bash
# One command from a fresh clone to the full test run: set up the toolchain and dependencies, then `pnpm test`
# (which builds first, then runs every vitest project: unit and e2e).
#
#   bash scripts/test.sh
#   bash scripts/test.sh --project unit    # extra arguments go to vitest
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

source scripts/setup.sh
pnpm test "$@"
