#!/usr/bin/env bash
# The test command: unit tests, then whole-tool tests against private MariaDB instances
# that each test starts and stops itself. Ends with one line of totals.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/packages.sh
log=$(mktemp)
apt_log=$(mktemp)
trap 'rm -f "$log" "$apt_log"' EXIT
# The report rendering test draws the report in headless Chromium, the server-metrics
# tests scrape a node_exporter of their own (Debian's prometheus-node-exporter, started on
# a loopback port, never the system service), and the capture tests hold sizeup's digests
# against pt-query-digest's (Debian's percona-toolkit): installed while the tests build,
# when absent.
apt=""
pkgs=()
command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || pkgs+=(chromium)
command -v prometheus-node-exporter >/dev/null 2>&1 || pkgs+=(prometheus-node-exporter)
command -v pt-query-digest >/dev/null 2>&1 || pkgs+=(percona-toolkit)
# The agents' tests: an sshd started in a namespace, and a real OpenMetrics parser.
[ -x /usr/sbin/sshd ] || pkgs+=(openssh-server)
/usr/bin/python3 -c 'import prometheus_client' 2>/dev/null || pkgs+=(python3-prometheus-client)
if [ ${#pkgs[@]} -gt 0 ]; then
  install "${pkgs[@]}" >"$apt_log" 2>&1 &
  apt=$!
fi
# The third-party MySQL-protocol servers (go-mysql-server, mysql-mimic) the suite runs
# sizeup against: built while the tests build.
servers_log=$(mktemp)
trap 'rm -f "$log" "$apt_log" "$servers_log"' EXIT
# After chromium's install (one apt at a time: third_party.sh may install python3-venv).
( [ -z "$apt" ] || while kill -0 "$apt" 2>/dev/null; do sleep 1; done
  bash scripts/third_party.sh ) >"$servers_log" 2>&1 &
servers=$!
status=0
cargo test --release --locked --workspace --all-targets --no-run 2>&1 | grep -v '^  Executable' || status=$?
if [ -n "$apt" ] && ! wait "$apt"; then
  cat "$apt_log" >&2
  echo "installing ${pkgs[*]} failed (the lines above): the report rendering, server-metrics, capture and agent tests need them" >&2
  status=1
fi
# Without them the other tests still run; the third_party tests fail, naming the
# missing server.
if ! wait "$servers"; then
  cat "$servers_log" >&2
  echo "building the third-party test servers failed (the lines above): tests/suite/third_party.rs will fail" >&2
fi
[ "$status" -eq 0 ] || { echo "tests: not run (the build or an install above failed)" >&2; exit "$status"; }
# One test at a time: a second test's server and client on this 2-core box are "other
# programs" to the first, which starve it, and a study then rightly answers nothing
# (issue 61). Tests still accept that answer where a busy box gives it.
cargo test --release --locked --workspace --all-targets --no-fail-fast -- --test-threads="${SIZEUP_TEST_THREADS:-1}" 2>&1 | tee "$log" || status=$?
awk '/^test result:/ { for (i = 1; i <= NF; i++) { if ($(i+1) ~ /^passed/) p += $i; if ($(i+1) ~ /^failed/) f += $i } }
     END { printf "tests: %d passed, %d failed\n", p, f }' "$log"
exit "$status"
