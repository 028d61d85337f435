#!/usr/bin/env bash
# Makes sure the servers the tests start are installed: `redis-server`, and a PostgreSQL server (`initdb` and
# `postgres`, looked for where Debian puts them, /usr/lib/postgresql/<version>/bin, or in $TORII_POSTGRES_BIN).
# The tests start and stop their own throwaway instances (tests/services/global-setup.ts); this only installs.
#
#   bash scripts/services.sh     # install what is missing (Debian/Ubuntu, as root), quietly
#   source scripts/services.sh   # the same, from another script (.ci/run); never exits the caller's shell
#
# Nothing is installed when both are present. Not root, or no apt-get: it says what is missing and how to get it.
# Tests can also use servers of your own: set TORII_TEST_DATABASE_URL and TORII_TEST_REDIS_URL.

torii_services() {
  local directory=""
  local -a missing=()
  # Fills `missing` with the packages whose programs are not found, and `directory` with PostgreSQL's bin directory.
  torii_find_missing() {
    missing=()
    command -v redis-server >/dev/null 2>&1 || [ -n "${TORII_REDIS_SERVER:-}" ] || missing+=(redis-server)
    local candidate
    directory=""
    for candidate in ${TORII_POSTGRES_BIN:-} /usr/lib/postgresql/*/bin; do
      if [ -x "$candidate/initdb" ] && [ -x "$candidate/postgres" ]; then
        directory="$candidate"
        break
      fi
    done
    [ -n "$directory" ] || missing+=(postgresql)
  }
  torii_find_missing

  if [ "${#missing[@]}" = 0 ]; then
    echo "services: redis-server and PostgreSQL ($directory) are installed"
    return 0
  fi
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "services: missing ${missing[*]}; install them (Debian/Ubuntu: sudo apt-get install ${missing[*]})," \
      "or set TORII_TEST_DATABASE_URL / TORII_TEST_REDIS_URL to running servers" >&2
    return 1
  fi

  echo "services: installing ${missing[*]} from Debian packages"
  # Keep packages from starting their own servers (a default cluster on 5432, redis on 6379): the tests start theirs.
  local policy=/usr/sbin/policy-rc.d created_policy=0
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod +x "$policy" && created_policy=1
  fi
  local status=0
  {
    DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
  } >/dev/null || status=$?
  [ "$created_policy" = 1 ] && rm -f "$policy"
  if [ "$status" != 0 ]; then
    echo "services: apt-get install ${missing[*]} failed (status $status)" >&2
    return 1
  fi
  local installed=("${missing[@]}")
  torii_find_missing
  if [ "${#missing[@]}" != 0 ]; then
    echo "services: installed ${installed[*]}, but ${missing[*]} still not found" >&2
    return 1
  fi
  echo "services: installed ${installed[*]} (PostgreSQL in $directory)"
}

if (return 0 2>/dev/null); then
  torii_services
  __torii_services_status=$?
  unset -f torii_services torii_find_missing
  if [ "$__torii_services_status" != 0 ]; then
    unset __torii_services_status
    return 1
  fi
  unset __torii_services_status
else
  set -euo pipefail
  torii_services
fi
