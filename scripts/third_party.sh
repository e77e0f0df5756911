#!/usr/bin/env bash
# Builds the third-party MySQL-protocol servers the test suite runs sizeup against, into
# target/third-party/ (idempotent: skips what is up to date):
# - gms-server: dolthub's go-mysql-server (a Go module, reports MySQL 8.0.31), wrapped by
#   tests/servers/gms/main.go; needs Go 1.23 or later and the Go module proxy;
# - mimic/: a Python virtual environment with mysql-mimic from PyPI (reports 8.0.29),
#   served by tests/servers/mimic/server.py.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/packages.sh
out=target/third-party
mkdir -p "$out"
if ! command -v go >/dev/null 2>&1; then
  echo "go not found: the go-mysql-server tests need Go 1.23 or later (https://go.dev/dl)" >&2
  exit 1
fi
gms=$out/gms-server
if [ ! -x "$gms" ] || [ -n "$(find tests/servers/gms -newer "$gms" -type f)" ]; then
  (cd tests/servers/gms && go build -trimpath -o "../../../$gms" .)
fi
mimic=$out/mimic
stamp=$mimic/.installed
if [ ! -f "$stamp" ] || [ tests/servers/mimic/requirements.txt -nt "$stamp" ]; then
  rm -rf "$mimic"
  # Debian's python3 makes a venv only with ensurepip (python3-venv).
  python3 -c 'import ensurepip' >/dev/null 2>&1 || install python3-venv
  python3 -m venv "$mimic"
  "$mimic/bin/pip" install -q --disable-pip-version-check -r tests/servers/mimic/requirements.txt
  touch "$stamp"
fi
echo "third-party servers: $gms, $mimic (mysql-mimic $("$mimic/bin/python" -c 'import importlib.metadata as m; print(m.version("mysql-mimic"))' 2>/dev/null || echo '?'))"
