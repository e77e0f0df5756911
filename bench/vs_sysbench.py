#!/usr/bin/env python3
"""Runs sysbench 1.0.20 and sizeup alternately against the same managed server and
prints ratios (sizeup / sysbench): prepare rows/s, tps, qps, client CPU and server CPU
per transaction, and latency at a fixed open-loop rate. Prepare also times the server
copying the rows from one of its own tables into new ones (INSERT ... SELECT and the
k index, no client): the floor no loader can beat on that server.

Client CPU is each tool's whole process (user + system, from getrusage of the child),
divided by its transactions; server CPU is the mariadbd process's /proc time over the
same run. Both tools share the 2-core box with the server, so pairs alternate and the
median of the pairs is reported.

usage: bench/vs_sysbench.py [--pairs 3] [--time 20] [--tables 8] [--table-size 250000]
                            [--threads 8] [--rate 500] [--prepare-threads 2,4]
                            [--only prepare,point_select,read_write,rate]
Needs sysbench and a built sizeup (target/release/sizeup). Uses its own SIZEUP_HOME.
"""
import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SIZEUP = os.path.join(ROOT, "target", "release", "sizeup")


def child_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def proc_cpu(pid):
    with open(f"/proc/{pid}/stat") as f:
        rest = f.read().rsplit(")", 1)[1].split()
    return (int(rest[11]) + int(rest[12])) / os.sysconf("SC_CLK_TCK")


def measured(cmd, server_pid, env):
    c0, s0, t0 = child_cpu(), proc_cpu(server_pid), time.time()
    out = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{out.stdout}\n{out.stderr}")
    return out.stdout, child_cpu() - c0, proc_cpu(server_pid) - s0, time.time() - t0


def sysbench(workload, a, sock, server_pid, env, extra=()):
    cmd = ["sysbench", workload, f"--mysql-socket={sock}", "--mysql-user=root", "--mysql-db=sbtest",
           f"--tables={a.tables}", f"--table-size={a.table_size}", f"--threads={a.threads}",
           f"--time={a.time}", "--percentile=95", *extra, "run"]
    out, ccpu, scpu, _ = measured(cmd, server_pid, env)
    tx = int(re.search(r"transactions:\s+(\d+)", out).group(1))
    q = int(re.search(r"queries:\s+(\d+)", out).group(1))
    p95 = float(re.search(r"95th percentile:\s+([\d.]+)", out).group(1))
    # sysbench prints min/avg/max; its median needs --histogram, so p50 comes from there.
    return {"tps": tx / a.time, "qps": q / a.time, "client_us": ccpu * 1e6 / tx, "server_us": scpu * 1e6 / tx,
            "p95": p95, "tx": tx, "out": out}


def sizeup(workload, a, sock, server_pid, env, extra=()):
    js = tempfile.mktemp(suffix=".json")
    cmd = [SIZEUP, "run", workload, f"--socket={sock}", "--user=root", "--database=sbtest",
           f"--tables={a.tables}", f"--table-size={a.table_size}", f"--threads={a.threads}",
           f"--time={a.time}", "--report-interval=0", f"--json={js}", *extra]
    _, ccpu, scpu, _ = measured(cmd, server_pid, env)
    doc = json.load(open(js))
    os.unlink(js)
    s = doc["summary"]
    tx = s["transactions"]
    return {"tps": s["tps"], "qps": s["qps"], "client_us": ccpu * 1e6 / tx, "server_us": scpu * 1e6 / tx,
            "p95": s["latency_ms"]["p95"], "p50": s["latency_ms"]["p50"], "tx": tx}


def median(rows, key):
    return statistics.median(r[key] for r in rows)


def compare(name, a, sock, pid, env, sb_extra=(), su_extra=()):
    sb, su = [], []
    for i in range(a.pairs):
        sb.append(sysbench(name, a, sock, pid, env, sb_extra))
        su.append(sizeup(name, a, sock, pid, env, su_extra))
        print(f"  pair {i + 1}: sysbench {sb[-1]['tps']:.0f} tps {sb[-1]['client_us']:.1f} us/tx client | "
              f"sizeup {su[-1]['tps']:.0f} tps {su[-1]['client_us']:.1f} us/tx client", flush=True)
    print(f"{name} at {a.threads} threads, {a.pairs} pairs x {a.time} s (medians):")
    print(f"  {'figure':<26} {'sysbench':>10} {'sizeup':>10} {'ratio':>7}")
    for key, label in [("tps", "tps"), ("qps", "qps"), ("client_us", "client CPU us/tx"),
                       ("server_us", "server CPU us/tx"), ("p95", "p95 ms")]:
        x, y = median(sb, key), median(su, key)
        print(f"  {label:<26} {x:>10.1f} {y:>10.1f} {y / x:>7.2f}")
    return sb, su


def mariadb(sock, sql, db="sbtest"):
    return subprocess.Popen(["mariadb", f"--socket={sock}", "-uroot", db, "-e", sql])


def server_copy(a, threads, sock, pid):
    """The floor for any loader: the server copies sbtest1 into N new tables itself
    (INSERT ... SELECT, then the k index), with no client rows and no parsing at all."""
    mariadb(sock, "DROP DATABASE IF EXISTS sbcopy; CREATE DATABASE sbcopy", "mysql").wait()
    for t in range(1, a.tables + 1):
        mariadb(sock, f"CREATE TABLE sbcopy.t{t} LIKE sbtest.sbtest1; ALTER TABLE sbcopy.t{t} DROP INDEX k_1").wait()
    s0, t0 = proc_cpu(pid), time.time()
    workers = []
    for w in range(threads):
        sql = "".join(f"INSERT INTO sbcopy.t{t} SELECT * FROM sbtest.sbtest1; CREATE INDEX k ON sbcopy.t{t}(k); "
                      for t in range(w + 1, a.tables + 1, threads))
        workers.append(mariadb(sock, sql))
    for w in workers:
        if w.wait() != 0:
            sys.exit("server-side copy failed")
    wall, scpu = time.time() - t0, proc_cpu(pid) - s0
    mariadb(sock, "DROP DATABASE sbcopy", "mysql").wait()
    return wall, scpu


def prepare_pairs(a, threads, sock, pid, env, tgt):
    rates = {"sysbench": [], "sizeup": [], "server copy": []}
    rows = a.tables * a.table_size
    for i in range(a.pairs):
        for tool in ("sysbench", "sizeup", "server copy"):
            if tool == "server copy":
                wall, scpu = server_copy(a, threads, sock, pid)
                ccpu = 0.0
            else:
                mariadb(sock, "DROP DATABASE IF EXISTS sbtest; CREATE DATABASE sbtest", "mysql").wait()
                if tool == "sysbench":
                    cmd = ["sysbench", "oltp_read_write", *tgt, f"--threads={threads}", "prepare"]
                else:
                    cmd = [SIZEUP, "prepare", "oltp_read_write", f"--socket={sock}", f"--tables={a.tables}",
                           f"--table-size={a.table_size}", f"--threads={threads}"]
                _, ccpu, scpu, wall = measured(cmd, pid, env)
            rates[tool].append(rows / wall)
            print(f"  prepare {threads} threads, pair {i + 1} {tool}: {wall:.2f} s, {rows / wall:.0f} rows/s, "
                  f"server {scpu * 1e6 / rows:.2f} us/row, client {ccpu * 1e6 / rows:.2f} us/row", flush=True)
    x, y, z = (statistics.median(rates[k]) for k in ("sysbench", "sizeup", "server copy"))
    print(f"prepare {a.tables} x {a.table_size}, {threads} threads: sysbench {x:.0f} rows/s, sizeup {y:.0f} rows/s "
          f"(ratio {y / x:.2f}); the server copying its own rows {z:.0f} rows/s (ratio {z / x:.2f})")
    # sizeup prepared after sysbench, so its tables serve the runs below.


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--pairs", type=int, default=3)
    p.add_argument("--time", type=int, default=20)
    p.add_argument("--tables", type=int, default=8)
    p.add_argument("--table-size", type=int, default=250000)
    p.add_argument("--threads", type=int, default=8)
    p.add_argument("--rate", type=int, default=500)
    p.add_argument("--only", default="prepare,point_select,read_write,rate")
    p.add_argument("--prepare-threads", default="2,4", help="loader connections, compared at each")
    a = p.parse_args()
    only = a.only.split(",")
    home = os.environ.get("SIZEUP_HOME") or tempfile.mkdtemp(prefix="sizeup-bench-")
    env = dict(os.environ, SIZEUP_HOME=home)
    subprocess.run([SIZEUP, "server", "start", "--buffer-pool", "2G", "--log-file-size", "512M",
                    "--flush-log-at-trx-commit", "2"], env=env, check=True, stdout=subprocess.DEVNULL)
    st = json.loads(subprocess.run([SIZEUP, "server", "status", "--json"], env=env, check=True,
                                   capture_output=True, text=True).stdout)[0]
    sock, pid = st["socket"], st["pid"]
    print(f"server: pid {pid}, socket {sock}; {a.tables} tables x {a.table_size} rows")
    tgt = [f"--mysql-socket={sock}", "--mysql-user=root", "--mysql-db=sbtest", f"--tables={a.tables}",
           f"--table-size={a.table_size}"]
    if "prepare" in only:
        for threads in [int(t) for t in a.prepare_threads.split(",")]:
            prepare_pairs(a, threads, sock, pid, env, tgt)
        # sizeup prepared last, so its tables serve the runs below.
    if "point_select" in only:
        compare("oltp_point_select", a, sock, pid, env)
    if "read_write" in only:
        compare("oltp_read_write", a, sock, pid, env)
    if "rate" in only:
        sb, su = [], []
        for i in range(a.pairs):
            r = sysbench("oltp_read_write", a, sock, pid, env, [f"--rate={a.rate}", "--histogram=on"])
            hist = [(float(m.group(1)), int(m.group(2))) for m in
                    re.finditer(r"^\s+([\d.]+) \|[\s*]+(\d+)\s*$", r["out"], re.M)]
            total = sum(c for _, c in hist)
            acc, p50 = 0, None
            for v, c in hist:
                acc += c
                if acc >= total / 2:
                    p50 = v
                    break
            r["p50"] = p50
            sb.append(r)
            su.append(sizeup("oltp_read_write", a, sock, pid, env, [f"--rate={a.rate}"]))
        print(f"oltp_read_write at a fixed {a.rate} tps ({a.threads} threads), {a.pairs} pairs (medians):")
        for key in ("tps", "p50", "p95", "client_us"):
            x, y = median(sb, key), median(su, key)
            print(f"  {key:<6} sysbench {x:>9.2f}  sizeup {y:>9.2f}  ratio {y / x:.2f}")
    if not os.environ.get("SIZEUP_HOME"):
        subprocess.run([SIZEUP, "server", "stop", "--purge"], env=env, stdout=subprocess.DEVNULL)


if __name__ == "__main__":
    main()
