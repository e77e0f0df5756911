#!/usr/bin/env bash
# Runs every study file in studies/ end to end in minutes: the same file with short
# steps, two levels and small data, against private instances in a temporary state
# directory (removed at the end). A check that every shipped study still runs, with each
# series' answer printed.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${SIZEUP_BIN:-./target/release/sizeup}
work=$(mktemp -d)
trap 'SIZEUP_HOME=$work/home "$bin" server stop --purge >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
python3 - "$work" <<'PY'
import glob, os, re, sys
out = sys.argv[1]
for f in sorted(glob.glob('studies/*.toml')):
    s = open(f).read()
    scale = re.search(r'(?m)^kind = "scale"', s) is not None
    for pat, rep in [(r'levels = .*', 'levels = [1, 2]' if scale else 'levels = [1, 4]'),
                     (r'step_time = .*', 'step_time = 3'), (r'warmup = .*', 'warmup = 1'),
                     (r'sample_interval = .*', 'sample_interval = 1'), (r'table-size = .*', 'table-size = 4000'),
                     (r'tables = .*', 'tables = 2'), (r'warehouses = .*', 'warehouses = 2'),
                     (r'threads = .*', 'threads = 8'), (r'threads_per_instance = .*', 'threads_per_instance = 4'),
                     (r'log_file_size = .*', 'log_file_size = "48M"')]:
        s = re.sub(r'(?m)^' + pat + '$', rep, s)
    s = s.replace('"1G"', '"128M"')
    open(os.path.join(out, os.path.basename(f)), 'w').write(s)
PY
status=0
for f in "$work"/*.toml; do
  echo "== $(basename "$f")"
  if SIZEUP_HOME=$work/home "$bin" study run "$f" > "$work/out" 2>&1; then
    grep -E '^study [0-9]+ |answer:' "$work/out"
  else
    status=1; tail -n 20 "$work/out"
  fi
done
exit $status
