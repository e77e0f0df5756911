#!/usr/bin/env python3
"""A replay's client CPU per statement against sysbench's per query at the same rate.

sysbench 1.0.20 runs oltp_read_only at a fixed --rate on a managed server while its
slow log (long_query_time = 0) records it; `sizeup capture` makes that a capture, and
`sizeup replay CAPTURE --speed 1 --read-only` plays it back: the same statements at the
same moments. Then pairs alternate, the slow log off: sysbench at the rate, the replay
at 1x. Client CPU is each tool's whole process (user + system, getrusage of the child)
over its statements; the medians of the pairs are printed.

usage: bench/replay_vs_sysbench.py [--pairs 3] [--time 20] [--rate 200] [--threads 8]
Needs sysbench and a built sizeup (target/release/sizeup, or $SIZEUP_BIN). Uses its own
SIZEUP_HOME.
"""
import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SIZEUP = os.environ.get("SIZEUP_BIN") or os.path.join(ROOT, "target", "release", "sizeup")


def child_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def measured(cmd, env):
    c0 = child_cpu()
    out = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed: {out.stderr[-2000:]}")
    return out.stdout, child_cpu() - c0


def sql(sock, text):
    subprocess.run(["mariadb", "--no-defaults", "-uroot", f"--socket={sock}", "-e", text], check=True)


def sysbench(a, sock, env):
    cmd = ["sysbench", "oltp_read_only", "--db-driver=mysql", f"--mysql-socket={sock}", "--mysql-user=root",
           "--mysql-db=sbtest", "--tables=2", "--table-size=20000", f"--threads={a.threads}", f"--rate={a.rate}",
           f"--time={a.time}", "run"]
    out, cpu = measured(cmd, env)
    q = int(re.search(r"queries:\s+(\d+)", out).group(1))
    return {"statements": q, "per_s": q / a.time, "client_us": cpu * 1e6 / q}


def replay(capture, sock, env, json_path):
    cmd = [SIZEUP, "replay", capture, "--speed", "1", "--read-only", "--socket", sock, "--database", "sbtest",
           "--json", json_path]
    _, cpu = measured(cmd, env)
    s = json.load(open(json_path))["summary"]
    n = s["transactions"] + s["errors"]
    # The process's CPU (the capture read and fingerprinted, the run), and the run's own
    # figure (the measured time's client CPU per statement, as sizeup reports it).
    return {"statements": n, "per_s": s["tps"], "client_us": cpu * 1e6 / n, "run_us": s.get("client_cpu_us_per_txn")}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--pairs", type=int, default=3)
    p.add_argument("--time", type=int, default=20)
    p.add_argument("--rate", type=int, default=200)
    p.add_argument("--threads", type=int, default=8)
    a = p.parse_args()
    home = tempfile.mkdtemp(prefix="sizeup-replay-bench-")
    env = dict(os.environ, SIZEUP_HOME=home)
    subprocess.run([SIZEUP, "server", "start"], env=env, check=True, capture_output=True)
    try:
        sock = os.path.join(home, "instances", "0", "mysqld.sock")
        subprocess.run([SIZEUP, "prepare", "oltp_read_only", "--tables", "2", "--table-size", "20000"], env=env,
                       check=True, capture_output=True)
        log = os.path.join(home, "bench-slow.log")
        sql(sock, f"SET GLOBAL slow_query_log_file = '{log}'; SET GLOBAL long_query_time = 0; "
                  "SET GLOBAL slow_query_log = 1")
        captured = sysbench(a, sock, env)
        sql(sock, "SET GLOBAL slow_query_log = 0")
        capture = os.path.join(home, "sysbench.capture")
        subprocess.run([SIZEUP, "capture", "--slow-log", log, "-o", capture], env=env, check=True, capture_output=True)
        print(f"captured sysbench oltp_read_only --rate {a.rate}: {captured['statements']} statements "
              f"({captured['per_s']:.0f}/s)")
        rows = []
        for i in range(a.pairs):
            sb = sysbench(a, sock, env)
            su = replay(capture, sock, env, os.path.join(home, f"replay-{i}.json"))
            rows.append((sb, su))
            print(f"pair {i + 1}: sysbench {sb['per_s']:.0f} queries/s, {sb['client_us']:.1f} us/query; "
                  f"replay {su['per_s']:.0f} statements/s, {su['client_us']:.1f} us/statement "
                  f"(the run alone: {su['run_us']} us)")
        med = lambda rs, k: statistics.median(r[k] for r in rs)
        sbm, sum_ = med([r[0] for r in rows], "client_us"), med([r[1] for r in rows], "client_us")
        print(f"median client CPU: sysbench {sbm:.1f} us/query, sizeup replay {sum_:.1f} us/statement "
              f"({sum_ / sbm:.2f}x)")
    finally:
        subprocess.run([SIZEUP, "server", "stop"], env=env, capture_output=True)


if __name__ == "__main__":
    main()
