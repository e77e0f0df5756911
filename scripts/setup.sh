#!/usr/bin/env bash
# Sets sizeup up on a fresh Debian/Ubuntu machine and, unless --deps-only, runs the
# demonstration study against a private MariaDB instance that sizeup starts itself
# (never the system service).
#
# The release build starts as soon as what it compiles against is there (a C compiler,
# pkg-config, SQLite's and LuaJIT's headers) and runs while the rest installs from the
# distribution's packages: MariaDB server and client, galera-4, rsync and iproute2 (managed
# clusters and the lab), sysbench (its Lua scripts, and the peer the tests compare with)
# and openssl (the TLS tests' certificates). Headless Chromium, which only the report
# rendering test uses, is test.sh's to install.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/packages.sh
if ! command -v cargo >/dev/null 2>&1; then
  echo "cargo not found: install Rust (https://rustup.rs) and run this again" >&2
  exit 1
fi

build_needs=()
command -v cc >/dev/null 2>&1 || build_needs+=(gcc libc6-dev)
command -v pkg-config >/dev/null 2>&1 || build_needs+=(pkg-config)
pkg-config --exists sqlite3 2>/dev/null || build_needs+=(libsqlite3-dev)
pkg-config --exists luajit 2>/dev/null || build_needs+=(libluajit-5.1-dev)
install "${build_needs[@]}"

log=$(mktemp)
cargo build --release --locked >"$log" 2>&1 &
build=$!
trap 'kill $build 2>/dev/null || true; rm -f "$log"' EXIT

needs=()
command -v mariadbd >/dev/null 2>&1 || [ -x /usr/sbin/mariadbd ] || [ -x /usr/sbin/mysqld ] || needs+=(mariadb-server)
command -v mariadb >/dev/null 2>&1 || needs+=(mariadb-client)
[ -e /usr/lib/galera/libgalera_smm.so ] || [ -e /usr/lib/libgalera_smm.so ] || needs+=(galera-4)
command -v rsync >/dev/null 2>&1 || needs+=(rsync)
command -v ip >/dev/null 2>&1 || [ -x /usr/sbin/ip ] || [ -x /sbin/ip ] || needs+=(iproute2)
command -v sysbench >/dev/null 2>&1 || needs+=(sysbench)
command -v openssl >/dev/null 2>&1 || needs+=(openssl)
install "${needs[@]}"

if ! wait "$build"; then
  tail -n 30 "$log" >&2
  echo "the release build failed (the lines above are its last)" >&2
  exit 1
fi
tail -n 1 "$log"
[ "${1:-}" = "--deps-only" ] && exit 0
./target/release/sizeup demo
