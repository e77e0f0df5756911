#!/usr/bin/env python3
"""Reads a generated slow log with `sizeup capture` and with pt-query-digest (Debian's
percona-toolkit) and prints each one's time, throughput and peak memory (max RSS).

The log is MariaDB's file format at long_query_time = 0 as oltp_read_write writes it
(per transaction: BEGIN, 10 point selects, 4 range selects, 2 updates, a delete, an
insert, COMMIT; 16 connections; `# Time:` once a second, 20,000 statements a second),
written once to --dir and reused. sizeup reads the whole log (--size); pt-query-digest
reads its first --pt-size bytes, cut at an entry (pt-query-digest is much the slower:
its throughput is what the comparison needs). Both outputs go to /dev/null's
neighbour in --dir, never the log.

usage: bench/capture_parse.py [--size 1G] [--pt-size 200M] [--dir /tmp/sizeup-capture-bench]
Needs a built sizeup (target/release/sizeup, or $SIZEUP_BIN), /usr/bin/time and
pt-query-digest.
"""
import argparse
import os
import random
import re
import subprocess
import sys
import time


def size(text):
    m = re.fullmatch(r"(\d+)([KMG]?)", text.strip().upper())
    if not m:
        raise argparse.ArgumentTypeError(f"{text}: give a size such as 200M or 1G")
    return int(m.group(1)) << {"": 0, "K": 10, "M": 20, "G": 30}[m.group(2)]


def entry(thread, ts, text, qt):
    return (
        f"# User@Host: sbtest[sbtest] @ localhost []\n"
        f"# Thread_id: {thread}  Schema: sbtest  QC_hit: No\n"
        f"# Query_time: {qt:.6f}  Lock_time: 0.000011  Rows_sent: 1  Rows_examined: 1\n"
        f"# Rows_affected: 0  Bytes_sent: 190\n"
        f"SET timestamp={ts};\n{text};\n"
    )


def transaction(rng):
    t = rng.randrange(1, 17)
    ids = [rng.randrange(1, 1_000_000) for _ in range(16)]
    out = ["BEGIN"]
    out += [f"SELECT c FROM sbtest{t} WHERE id={i}" for i in ids[:10]]
    out += [f"SELECT c FROM sbtest{t} WHERE id BETWEEN {i} AND {i + 99}" for i in ids[10:11]]
    out += [f"SELECT SUM(k) FROM sbtest{t} WHERE id BETWEEN {i} AND {i + 99}" for i in ids[11:12]]
    out += [f"SELECT c FROM sbtest{t} WHERE id BETWEEN {i} AND {i + 99} ORDER BY c" for i in ids[12:13]]
    out += [f"SELECT DISTINCT c FROM sbtest{t} WHERE id BETWEEN {i} AND {i + 99} ORDER BY c" for i in ids[13:14]]
    out += [f"UPDATE sbtest{t} SET k=k+1 WHERE id={ids[14]}"]
    out += [f"UPDATE sbtest{t} SET c='{rng.randrange(10**11)}-{rng.randrange(10**11)}' WHERE id={ids[15]}"]
    out += [f"DELETE FROM sbtest{t} WHERE id={ids[0]}"]
    out += [f"INSERT INTO sbtest{t} (id, k, c, pad) VALUES ({ids[0]}, {ids[1]}, '{rng.randrange(10**11)}', '{rng.randrange(10**11)}')"]
    out += ["COMMIT"]
    return out


def generate(path, want):
    rng = random.Random(7)
    ts = 1_701_079_200
    in_second = 0
    with open(path, "w", buffering=1 << 22) as f:
        f.write("/usr/sbin/mariadbd, Version: 10.11.6-MariaDB-0+deb12u1-log (Debian 12). started with:\n")
        f.write("Tcp port: 3306  Unix socket: /run/mysqld/mysqld.sock\nTime\t\t    Id Command\tArgument\n")
        written = 0
        while written < want:
            for s in transaction(rng):
                if in_second == 0:
                    f.write(f"# Time: 231127 {10 + (ts // 3600) % 12:2d}:{(ts // 60) % 60:02d}:{ts % 60:02d}\n")
                e = entry(rng.randrange(8, 24), ts, s, rng.uniform(0.00005, 0.002))
                f.write(e)
                written += len(e)
                in_second += 1
                if in_second == 20_000:
                    in_second = 0
                    ts += 1


def head(src, dst, want):
    """The first `want` bytes of the log, cut before an entry."""
    with open(src, "rb") as f, open(dst, "wb") as out:
        data = f.read(want)
        cut = data.rfind(b"\n# User@Host: ")
        out.write(data[: cut + 1])


def measure(cmd):
    t0 = time.monotonic()
    r = subprocess.run(["/usr/bin/time", "-f", "%M"] + cmd, capture_output=True, text=True)
    wall = time.monotonic() - t0
    if r.returncode != 0:
        sys.exit(f"{cmd[0]} failed: {r.stderr[-2000:]}")
    rss_kb = int(r.stderr.strip().splitlines()[-1])
    return wall, rss_kb / 1024


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=size, default=size("1G"))
    ap.add_argument("--pt-size", type=size, default=size("200M"))
    ap.add_argument("--dir", default="/tmp/sizeup-capture-bench")
    a = ap.parse_args()
    sizeup = os.environ.get("SIZEUP_BIN", "target/release/sizeup")
    os.makedirs(a.dir, exist_ok=True)
    log = os.path.join(a.dir, f"slow-{a.size >> 20}M.log")
    if not os.path.exists(log) or os.path.getsize(log) < a.size:
        print(f"writing {log} ...", flush=True)
        generate(log, a.size)
    part = os.path.join(a.dir, f"slow-{a.pt_size >> 20}M.log")
    if not os.path.exists(part):
        head(log, part, a.pt_size)
    rows = []
    for name, path in [("whole", log), ("part", part)]:
        mb = os.path.getsize(path) / 1e6
        out = os.path.join(a.dir, f"{name}.capture")
        wall, rss = measure([sizeup, "capture", "--slow-log", path, "-o", out])
        rows.append(("sizeup capture", f"{mb:.0f} MB", wall, mb / wall, rss))
    mb = os.path.getsize(part) / 1e6
    wall, rss = measure(["pt-query-digest", "--no-version-check", "--output", "json", "--limit", "100000", part])
    rows.append(("pt-query-digest", f"{mb:.0f} MB", wall, mb / wall, rss))
    print(f"{'tool':<16} {'log':>8} {'seconds':>8} {'MB/s':>8} {'max RSS MB':>11}")
    for r in rows:
        print(f"{r[0]:<16} {r[1]:>8} {r[2]:>8.1f} {r[3]:>8.1f} {r[4]:>11.0f}")
    print(f"sizeup / pt-query-digest throughput on the same {mb:.0f} MB: {rows[1][3] / rows[2][3]:.1f}x")


if __name__ == "__main__":
    main()
