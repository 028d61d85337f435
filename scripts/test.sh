#!/usr/bin/env bash
# One command from a fresh clone to the full test run: set up the toolchain and dependencies, then `pnpm test`
# (which builds first, then runs every vitest project: unit and e2e). The tests start their own PostgreSQL and Redis
# servers; scripts/services.sh installs them from Debian's packages when they are missing.
#
#   bash scripts/test.sh
#   bash scripts/test.sh --project unit    # extra arguments go to vitest
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

source scripts/setup.sh
# The tests start their own throwaway PostgreSQL and Redis; this installs the servers when they are missing.
source scripts/services.sh
pnpm test "$@"
