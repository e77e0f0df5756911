#!/usr/bin/env bash
# The test command: unit tests, then whole-tool tests against private MariaDB instances
# that each test starts and stops itself.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --release --locked -- --test-threads="${SIZEUP_TEST_THREADS:-2}"
