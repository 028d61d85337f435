#!/usr/bin/env bash
# Bootstraps a fresh clone: a Node new enough for this repository, the pinned pnpm, and the locked dependencies.
#
#   bash scripts/setup.sh      # set up (idempotent; a second run only re-checks)
#   source scripts/setup.sh    # the same, and leaves the toolchain first on this shell's PATH
#
# Node: the `node` on PATH is used when it is at least $TORII_MIN_NODE. Otherwise the pinned Node is installed from
# the npm registry (the `node-<os>-<arch>` package) into $TORII_TOOLCHAIN, so a machine whose system Node is 20 and
# that has no pnpm needs only npm. pnpm: the version pinned by package.json's `packageManager`, installed the same way.
# Nothing is installed when the toolchain already holds those versions. Then `pnpm install --frozen-lockfile`.
#
# Environment:
#   TORII_TOOLCHAIN            where the toolchain lives (default: $HOME/.cache/torii/toolchain)
#   TORII_NODE_VERSION         the Node to install when the one on PATH is too old (default: 24.21.0)
#   TORII_MIN_NODE             the oldest Node on PATH that is used as is (default: 22.13.0)
#   TORII_SETUP_SKIP_INSTALL=1 set up the toolchain and PATH only; skip `pnpm install`

# Everything runs in a function so that `source` neither changes the caller's shell options nor exits it.
torii_setup() {
  local root
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)" || return 1

  local toolchain="${TORII_TOOLCHAIN:-$HOME/.cache/torii/toolchain}"
  local node_version="${TORII_NODE_VERSION:-24.21.0}"
  # package.json asks for Node >=22.13.0 (node:sqlite without a flag); pnpm 11 itself refuses to run below 22.13.
  local min_node="${TORII_MIN_NODE:-22.13.0}"
  local pnpm_version
  pnpm_version="$(sed -n 's/.*"packageManager": *"pnpm@\([0-9][0-9A-Za-z.-]*\).*/\1/p' "$root/package.json")"
  pnpm_version="${pnpm_version:-11.28.11}"

  local os arch
  case "$(uname -s)" in
    Linux) os=linux ;;
    Darwin) os=darwin ;;
    *)
      echo "setup: unsupported OS $(uname -s); install Node >= $min_node and pnpm $pnpm_version yourself" >&2
      return 1
      ;;
  esac
  case "$(uname -m)" in
    x86_64 | amd64) arch=x64 ;;
    aarch64 | arm64) arch=arm64 ;;
    *)
      echo "setup: unsupported CPU $(uname -m); install Node >= $min_node and pnpm $pnpm_version yourself" >&2
      return 1
      ;;
  esac
  local node_package="node-$os-$arch"

  # The installed version of a package in the toolchain, or nothing.
  toolchain_version() {
    sed -n 's/^ *"version": *"\([^"]*\)".*/\1/p' "$toolchain/node_modules/$1/package.json" 2>/dev/null | head -n 1
  }
  # Whether version $1 >= version $2.
  version_at_least() {
    [ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -n 1)" = "$2" ]
  }

  # Which Node: the toolchain's pinned one if present, else the one on PATH if new enough, else install the pinned one.
  local path_node_version=""
  if command -v node >/dev/null 2>&1; then
    path_node_version="$(node -p 'process.versions.node' 2>/dev/null || true)"
  fi
  local want_node=0
  if [ "$(toolchain_version "$node_package")" = "$node_version" ]; then
    want_node=1 # already there: keep it (npm would prune it from the toolchain otherwise)
  elif [ -z "$path_node_version" ] || ! version_at_least "$path_node_version" "$min_node"; then
    want_node=1
    echo "setup: node ${path_node_version:-(none)} on PATH is older than $min_node; using Node $node_version from $toolchain"
  fi

  local -a packages=("pnpm@$pnpm_version")
  local missing=0
  [ "$(toolchain_version pnpm)" = "$pnpm_version" ] || missing=1
  if [ "$want_node" = 1 ]; then
    packages+=("$node_package@$node_version")
    [ "$(toolchain_version "$node_package")" = "$node_version" ] || missing=1
  fi

  if [ "$missing" = 1 ]; then
    if ! command -v npm >/dev/null 2>&1; then
      if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "setup: no npm on PATH; installing Debian's npm to bootstrap the toolchain"
        DEBIAN_FRONTEND=noninteractive apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq npm >/dev/null ||
          return 1
      else
        echo "setup: npm is needed once to install ${packages[*]} into $toolchain; install Node/npm and retry" >&2
        return 1
      fi
    fi
    echo "setup: installing ${packages[*]} into $toolchain"
    mkdir -p "$toolchain" || return 1
    # One install for all of them: `npm install --no-save` removes from the prefix whatever it was not asked for.
    npm_config_loglevel=error npm_config_fund=false npm_config_audit=false npm_config_update_notifier=false \
      npm install --no-save --no-package-lock --prefix "$toolchain" "${packages[@]}" || return 1
  fi

  # The toolchain's bin (node when installed there, pnpm) goes first, once.
  local bin="$toolchain/node_modules/.bin"
  PATH=":$PATH:"
  PATH="${PATH//:$bin:/:}"
  PATH="${PATH#:}"
  PATH="${PATH%:}"
  export PATH="$bin:$PATH"
  hash -r

  if ! version_at_least "$(node -p 'process.versions.node')" "$min_node"; then
    echo "setup: node $(node -p 'process.versions.node') is still first on PATH; expected >= $min_node" >&2
    return 1
  fi
  if [ "$(pnpm --version 2>/dev/null)" != "$pnpm_version" ]; then
    echo "setup: pnpm on PATH is $(pnpm --version 2>/dev/null || echo missing), expected $pnpm_version" >&2
    return 1
  fi
  echo "setup: node $(node -p 'process.versions.node') ($(command -v node)), pnpm $pnpm_version"

  if [ "${TORII_SETUP_SKIP_INSTALL:-0}" != 1 ]; then
    (cd "$root" && pnpm install --frozen-lockfile) || return 1
  fi
}

if (return 0 2>/dev/null); then
  # Sourced: report failure without closing the caller's shell (a caller under `set -e` still stops here).
  torii_setup
  __torii_setup_status=$?
  unset -f torii_setup toolchain_version version_at_least
  if [ "$__torii_setup_status" != 0 ]; then
    unset __torii_setup_status
    return 1
  fi
  unset __torii_setup_status
else
  set -euo pipefail
  torii_setup
fi
