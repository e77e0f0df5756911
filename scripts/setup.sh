#!/usr/bin/env bash
# Sets sizeup up on a fresh Debian/Ubuntu machine: MariaDB server and client, galera-4,
# rsync, iproute2 and sysbench from the distribution's packages (when absent), headless
# Chromium for the report rendering test, a Rust toolchain check, and a release build.
# Then, unless --deps-only, runs the demonstration study against a private MariaDB
# instance that sizeup starts itself (never the system service).
set -euo pipefail
cd "$(dirname "$0")/.."
need=()
command -v mariadbd >/dev/null 2>&1 || [ -x /usr/sbin/mariadbd ] || [ -x /usr/sbin/mysqld ] || need+=(mariadb-server)
command -v mariadb >/dev/null 2>&1 || need+=(mariadb-client)
# The build compiles LuaJIT (for sysbench Lua scripts) from source: a C compiler and make.
command -v cc >/dev/null 2>&1 || need+=(gcc)
command -v make >/dev/null 2>&1 || need+=(make)
command -v sysbench >/dev/null 2>&1 || need+=(sysbench)
command -v openssl >/dev/null 2>&1 || need+=(openssl) # the TLS tests make their certificates with it
command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || need+=(chromium)
# Managed Galera clusters (sizeup cluster start --galera): the galera-4 provider and rsync
# for state transfers; the lab's namespaces, links and netem come with iproute2.
[ -e /usr/lib/galera/libgalera_smm.so ] || [ -e /usr/lib/libgalera_smm.so ] || need+=(galera-4)
command -v rsync >/dev/null 2>&1 || need+=(rsync)
command -v ip >/dev/null 2>&1 || [ -x /usr/sbin/ip ] || [ -x /sbin/ip ] || need+=(iproute2)
if [ ${#need[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  echo "installing ${need[*]} from the distribution's packages"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
fi
if ! command -v cargo >/dev/null 2>&1; then
  echo "cargo not found: install Rust (https://rustup.rs) and run this again" >&2
  exit 1
fi
cargo build --release --locked 2>&1 | tail -n 2
[ "${1:-}" = "--deps-only" ] && exit 0
./target/release/sizeup demo
