#!/usr/bin/env python3
"""Variants of one cell, in turn: sysbench and sizeup with different flags or environment
(or sysbench twice), through vs_sysbench.py's own runners (the same flags, and the same
wait for a quiet server before each run), the order rotated each round. Prints every
run, then each variant against the first, per round: the median and range of the tps
and client-CPU ratios.

usage: SIZEUP_HOME=DIR bench/variants.py [--tcp] [--rounds 4] [--time 10]
                                         WORKLOAD THREADS VARIANT...
A variant is `sysbench`, `sizeup`, or `sizeup:ITEM,ITEM...` where an item is a flag for
`sizeup run` (`--client-threads=2`), `ENV=NAME=VALUE` for its environment
(`ENV=SIZEUP_IO_URING=off`) or `BIN=PATH` for another sizeup binary; or `floor:WAY`, the
bare client (bench/round_trip_floor.rs) with one thread per connection waiting WAY
(blocking, poll, epoll or uring), or `floor:K`, K connections to a thread (one epoll each). The server is the
one running under $SIZEUP_HOME (`sizeup server start`), prepared with --tables 8
--table-size 250000 unless --tables/--table-size say otherwise.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

sys.dont_write_bytecode = True  # no __pycache__ left in bench/ by the import below
import vs_sysbench as vb  # noqa: E402


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--tcp", action="store_true", help="TCP loopback instead of the unix socket")
    p.add_argument("--rounds", type=int, default=4)
    p.add_argument("--time", type=int, default=10)
    p.add_argument("--tables", type=int, default=8)
    p.add_argument("--table-size", type=int, default=250000)
    p.add_argument("workload")
    p.add_argument("threads", type=int)
    p.add_argument("variants", nargs="+")
    a = p.parse_args()
    vb.build_sizeup()
    if not os.environ.get("SIZEUP_HOME"):
        sys.exit("set SIZEUP_HOME to the state directory of a server started with `sizeup server start`")
    st = subprocess.run([vb.SIZEUP, "server", "status", "--json"], capture_output=True, text=True)
    servers = json.loads(st.stdout or "[]") if st.returncode == 0 else []
    if not servers:
        sys.exit(f"no server runs under SIZEUP_HOME={os.environ['SIZEUP_HOME']}: start one with `sizeup server start`")
    sock, pid, port = servers[0]["socket"], servers[0]["pid"], servers[0]["port"]
    env = dict(os.environ)
    sb_target, su_target, floor_target = vb.tcp_targets(port) if a.tcp else (None, None, None)
    default_bin = vb.SIZEUP

    floor_built = []

    def run(variant):
        if variant == "sysbench":
            return vb.sysbench(a.workload, a, sock, pid, env, target=sb_target)
        tool, _, items = variant.partition(":")
        if tool == "floor":
            if not floor_built:
                vb.build_floor()
                floor_built.append(True)
            how = ["--per-thread", items] if items.isdigit() else ["--mode", items or "blocking"]
            return floor_run(how)
        if tool != "sizeup":
            sys.exit(f"unknown variant {variant!r}: use sysbench, sizeup, sizeup:ITEM,... or floor:WAY|K")
        flags, e, vb.SIZEUP = [], dict(env), default_bin
        for item in filter(None, items.split(",")):
            if item.startswith("ENV="):
                name, _, value = item[4:].partition("=")
                e[name] = value
            elif item.startswith("BIN="):
                vb.SIZEUP = item[4:]
            else:
                flags.append(item)
        return vb.sizeup(a.workload, a, sock, pid, e, extra=flags, target=su_target)

    def floor_run(how):
        cmd = vb.floor_cmd(a.workload, a.threads, sock, floor_target, a) + ["--time", str(a.time), *how]
        out, ccpu, scpu, _, idle = vb.measured(cmd, pid, env)
        m = json.loads(next(line for line in out.splitlines() if line.startswith("{")))
        tx = max(1, m["transactions"])
        return {"tps": m["per_s"], "client_us": m["client_us"], "server_us": scpu * 1e6 / tx, "idle": idle,
                "cs": vb.LAST_SWITCHES[0] / tx}

    results = [[] for _ in a.variants]
    n = len(a.variants)
    for i in range(a.rounds):
        for j in [(i + k) % n for k in range(n)]:
            r = run(a.variants[j])
            results[j].append(r)
            print(f"round {i} {a.variants[j]:<32} tps {r['tps']:9.1f} client us/tx {r['client_us']:7.2f} "
                  f"server us/tx {r['server_us']:7.2f} idle % {r['idle']:5.2f} cs/tx {r['cs']:5.2f}", flush=True)
    print(f"{a.workload}, {a.threads} connections, {'TCP' if a.tcp else 'socket'}, {a.rounds} rounds x {a.time} s; "
          f"against {a.variants[0]}, per round: median [range]")
    for variant, rs in zip(a.variants, results):
        tps = sorted(r["tps"] / b["tps"] for r, b in zip(rs, results[0]))
        cpu = sorted(r["client_us"] / b["client_us"] for r, b in zip(rs, results[0]))
        print(f"  {variant:<32} tps {statistics.median(tps):.3f} [{tps[0]:.2f}-{tps[-1]:.2f}]  client CPU "
              f"{statistics.median(cpu):.3f} [{cpu[0]:.2f}-{cpu[-1]:.2f}]  median tps "
              f"{statistics.median(r['tps'] for r in rs):.0f}, idle % {statistics.median(r['idle'] for r in rs):.2f}")


if __name__ == "__main__":
    main()
