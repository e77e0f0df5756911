#!/usr/bin/env python3
"""TPC-C figures for docs/PERFORMANCE.md: load time of W warehouses, NOPM and client /
server CPU per transaction at a few user counts, and client memory with many thinking
users, on a managed instance of its own.

go-tpc is the peer the issue names, but its module cannot be fetched on these machines
(the Go module proxy answers 403 for it), so it cannot run beside sizeup here. The
script prints ratios to the go-tpc figures recorded in ../shared/BASELINES.md, measured
on a box that ran sysbench's prepare 2.0x slower than this one (13.6 s against 6.5-7.1 s
for 8 x 250,000 rows): read them with that factor in mind.

usage: bench/tpcc.py [--warehouses 4] [--loads 3] [--users 1,2,4,8,16] [--time 30]
                     [--memory-users 10000] [--memory-time 60]
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SIZEUP = os.path.join(ROOT, "target", "release", "sizeup")
GO_TPC_LOAD_S = 19.5  # 4 warehouses, 2 threads (BASELINES.md)
GO_TPC_CLIENT_US = 461.0  # 8 threads, 4 warehouses, no think time (BASELINES.md)
GO_TPC_TPMC = 30_400


def sizeup(env, *args):
    out = subprocess.run([SIZEUP, *args], env=env, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"failed: sizeup {' '.join(args)}\n{out.stdout}\n{out.stderr}")
    return out.stdout


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--warehouses", type=int, default=4)
    p.add_argument("--loads", type=int, default=3)
    p.add_argument("--users", default="1,2,4,8,16")
    p.add_argument("--time", type=int, default=30)
    p.add_argument("--memory-users", type=int, default=10000)
    p.add_argument("--memory-time", type=int, default=60)
    a = p.parse_args()
    sys.dont_write_bytecode = True  # no __pycache__ left in bench/ by the import below
    import vs_sysbench  # noqa: E402  (the one place the bench builds sizeup)
    os.environ.pop("SIZEUP_BIN", None)  # this script always runs target/release/sizeup
    vs_sysbench.build_sizeup()
    home = tempfile.mkdtemp(prefix="sizeup-bench-tpcc-")
    env = dict(os.environ, SIZEUP_HOME=home)
    max_conn = str(max(a.memory_users, 100) + 100)
    sizeup(env, "server", "start", "--max-connections", max_conn)
    try:
        loads = []
        for i in range(a.loads):
            if i:
                sizeup(env, "cleanup", "tpcc")
            out = sizeup(env, "prepare", "tpcc", f"--warehouses={a.warehouses}", "--threads=2")
            seconds = float(out.split(" in ")[1].split(" s ")[0])
            loads.append(seconds)
            print(f"load {i + 1}: {out.strip()}")
        load = statistics.median(loads)
        print(f"\nload of {a.warehouses} warehouses: median {load:.1f} s of {loads}")
        if a.warehouses == 4:
            print(f"  go-tpc (BASELINES box): {GO_TPC_LOAD_S} s -> rate ratio {GO_TPC_LOAD_S / load:.1f}x "
                  f"({GO_TPC_LOAD_S / 2.0 / load:.1f}x against go-tpc scaled to this box's speed)")

        print(f"\n{'users':>6} {'NOPM':>9} {'TPM':>9} {'client us/tx':>13} {'server us/tx':>13} {'NO p90 ms':>10}")
        for u in a.users.split(","):
            js = os.path.join(home, f"u{u}.json")
            sizeup(env, "run", "tpcc", f"--users={u}", f"--time={a.time}", "--warmup=5", "--report-interval=0",
                   f"--json={js}")
            s = json.load(open(js))["summary"]
            print(f"{u:>6} {s['nopm']:>9.0f} {s['tpm']:>9.0f} {s['client_cpu_us_per_txn']:>13.1f} "
                  f"{s['server_cpu_us_per_txn']:>13.1f} {s['types'][0]['latency_ms']['p90']:>10.2f}")
            if u == "8" and a.warehouses == 4:
                print(f"{'':>6} go-tpc at 8 threads (BASELINES box): {GO_TPC_TPMC} tpmC, client "
                      f"{GO_TPC_CLIENT_US} us/tx -> client CPU ratio {s['client_cpu_us_per_txn'] / GO_TPC_CLIENT_US:.2f}")

        if a.memory_users:
            before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
            js = os.path.join(home, "many.json")
            sizeup(env, "run", "tpcc", f"--users={a.memory_users}", "--think-time=spec",
                   f"--time={a.memory_time}", "--report-interval=0", f"--json={js}")
            rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
            s = json.load(open(js))["summary"]
            print(f"\n{a.memory_users} users with the spec's keying and think times, {a.memory_time} s: "
                  f"peak client memory {max(rss, before) / 1024:.0f} MB (max RSS of any sizeup child so far), "
                  f"{s['tps']:.0f} tps, NOPM {s['nopm']:.0f}, NO p90 {s['types'][0]['latency_ms']['p90']:.1f} ms")
    finally:
        subprocess.run([SIZEUP, "server", "stop", "--purge"], env=env, capture_output=True)


if __name__ == "__main__":
    main()
