#!/usr/bin/env bash
# The layers check: the module graph has no cycles, so every module imports only modules
# below it and the code reads bottom-up. cargo-modules draws the graph (the "uses" edges
# between modules, as rust-analyzer resolves them); coreutils' tsort fails on any loop.
# Checked twice: between every module, and between the top-level layers (a layer's
# submodules taken together). CI runs it; the first run installs cargo-modules (about
# 8 minutes on 2 cores) under target/tools.
set -euo pipefail
cd "$(dirname "$0")/.."
version=0.27.0 # the newest that builds with Rust 1.95
tools=$PWD/target/tools
if ! "$tools/bin/cargo-modules" --version 2>/dev/null | grep -q "$version"; then
  echo "installing cargo-modules $version into target/tools"
  cargo install "cargo-modules@$version" --locked --quiet --root "$tools"
fi
graph=$(mktemp)
trap 'rm -f "$graph"' EXIT
PATH="$tools/bin:$PATH" cargo modules dependencies --lib --no-externs --no-sysroot --no-fns --no-traits \
  --no-types --no-owns --layout dot 2>/dev/null |
  sed -nE 's/^ *"([^"]+)" -> "([^"]+)" \[label="uses".*/\1 \2/p' >"$graph"
[ -s "$graph" ] || { echo "layers: cargo-modules drew no edges" >&2; exit 1; }
status=0
check() { # $1: what, stdin: "from to" pairs
  local loops
  if loops=$(tsort 2>&1 >/dev/null); then
    echo "layers: no cycles $1"
  else
    echo "layers: a cycle $1 (tsort names its modules):" >&2
    echo "$loops" | sed -E 's/^tsort: (-: )?/  /' >&2
    status=1
  fi
}
check "between the $(tr ' ' '\n' <"$graph" | sort -u | wc -l) modules ($(wc -l <"$graph") uses)" <"$graph"
awk '{ split($1, a, "::"); split($2, b, "::"); if (a[2] != b[2]) print a[1] "::" a[2], b[1] "::" b[2] }' "$graph" |
  sort -u | check "between the top-level layers"
exit "$status"
