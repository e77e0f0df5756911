#!/usr/bin/env bash
# The test command: unit tests, then whole-tool tests against private MariaDB instances
# that each test starts and stops itself. Ends with one line of totals.
set -euo pipefail
cd "$(dirname "$0")/.."
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
cargo test --release --locked --all-targets --no-fail-fast -- --test-threads="${SIZEUP_TEST_THREADS:-2}" 2>&1 | tee "$log" || status=$?
awk '/^test result:/ { for (i = 1; i <= NF; i++) { if ($(i+1) ~ /^passed/) p += $i; if ($(i+1) ~ /^failed/) f += $i } }
     END { printf "tests: %d passed, %d failed\n", p, f }' "$log"
exit "$status"
