#!/usr/bin/env python3
"""Client CPU per transaction: one sizeup process against two agents on the same box.

A managed MariaDB holds oltp_read_only's 2 x 20,000 rows. Two `sizeup agent` processes
listen on loopback. Pairs alternate: `sizeup run` driving the connections itself, then
the same run with `--agents` (the coordinator measures, the agents drive half the
connections and half the rate each). Both are open loops at the same --rate, so each
side does the same work. Client CPU is counted two ways:
- as the run stores it (`client_cpu_us_per_txn`: the steady state; with agents, the
  coordinator's process and the agents' processes together);
- whole processes: the coordinator's rusage, plus the agents' utime + stime from
  /proc/PID/stat over the run (connecting, the handshake, the warm-up included).
The medians of the pairs are printed.

usage: bench/agents_cpu.py [--pairs 3] [--time 20] [--rate 500] [--threads 8]
Needs a built sizeup (target/release/sizeup, or $SIZEUP_BIN). Uses its own SIZEUP_HOME.
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SIZEUP = os.environ.get("SIZEUP_BIN") or os.path.join(ROOT, "target", "release", "sizeup")
TOKEN = "bench-agents-token-0123456789"
TICK = os.sysconf("SC_CLK_TCK")


def child_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def proc_cpu(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def run(a, home, port, json_path, agents=None):
    cmd = [SIZEUP, "--home", home, "run", "oltp_read_only", "--tables", "2", "--table-size", "20000",
           "--threads", str(a.threads), "--rate", str(a.rate), "--time", str(a.time), "--warmup", "2",
           "--report-interval", "0", "--host", "127.0.0.1", "--port", str(port), "--user", "root",
           "--json", json_path]
    if agents:
        cmd += ["--agents", ",".join(addr for addr, _ in agents), "--token", TOKEN]
    before = [proc_cpu(p.pid) for _, p in agents or []]
    c0 = child_cpu()
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed: {out.stderr[-2000:]}")
    whole = child_cpu() - c0 + sum(proc_cpu(p.pid) - b for (_, p), b in zip(agents or [], before))
    s = json.load(open(json_path))["summary"]
    n = s["transactions"]
    return {"tps": s["tps"], "p99": s["latency_ms"]["p99"], "stored_us": s["client_cpu_us_per_txn"],
            "whole_us": whole * 1e6 / n}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--pairs", type=int, default=3)
    p.add_argument("--time", type=int, default=20)
    p.add_argument("--rate", type=int, default=500)
    p.add_argument("--threads", type=int, default=8)
    a = p.parse_args()
    home = tempfile.mkdtemp(prefix="sizeup-bench-agents-")
    port = 23406
    subprocess.run([SIZEUP, "--home", home, "server", "start", "--buffer-pool", "256M", "--base-port", str(port)],
                   check=True, capture_output=True)
    agents = []
    try:
        subprocess.run([SIZEUP, "--home", home, "prepare", "oltp_read_only", "--tables", "2", "--table-size", "20000",
                        "--host", "127.0.0.1", "--port", str(port), "--user", "root"], check=True, capture_output=True)
        env = dict(os.environ, SIZEUP_AGENT_TOKEN=TOKEN)
        for k in range(2):
            addr = f"127.0.0.1:{port + 100 + k}"
            agents.append((addr, subprocess.Popen([SIZEUP, "agent", "--listen", addr], env=env,
                                                  stderr=subprocess.DEVNULL)))
        time.sleep(1)
        one, two = [], []
        for i in range(a.pairs):
            one.append(run(a, home, port, os.path.join(home, f"one{i}.json")))
            two.append(run(a, home, port, os.path.join(home, f"two{i}.json"), agents))
            print(f"pair {i + 1}: one process {one[-1]}\n        two agents  {two[-1]}", flush=True)
        med = lambda rows, k: statistics.median(r[k] for r in rows)
        for k in ["tps", "p99", "stored_us", "whole_us"]:
            print(f"{k:>10}: one process {med(one, k):8.1f}   two agents {med(two, k):8.1f}   "
                  f"ratio {med(two, k) / med(one, k):.2f}")
    finally:
        for _, p in agents:
            p.kill()
        subprocess.run([SIZEUP, "--home", home, "server", "stop", "--purge"], capture_output=True)


if __name__ == "__main__":
    main()
