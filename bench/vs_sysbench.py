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
                            [--only prepare,point_select,read_write,rate,wire,sweep,tls,script,lead]
                            [--direct] [--control] [--sweep-threads 1,2,4,8,16]
                            [--lead-threads 1,2,4,8,16,32,64]
`sweep` (not in the default set) runs oltp_point_select at each of --sweep-threads.
`lead` (not in the default set; prepares first) prints one table: point select and
read/write at each of --lead-threads over the unix socket and TCP loopback, then prepare
with each of --prepare-threads against the server-copy floor. With --control, sysbench
also runs a second time in each pair, and the table shows it against itself.
`tls` (not in the default set; needs openssl) starts the server with a certificate made
here and runs point select and read/write over TCP loopback with TLS and without, for
both tools, alternating: the TLS cost per transaction on the client and on the server.
`script` (not in the default set) runs sysbench's oltp_read_write.lua three ways,
alternating: by sysbench, by sizeup's Lua engine, and sizeup's built-in oltp_read_write.
`wire` (needs tcpdump, root) captures each tool's fixed-rate run on TCP loopback and
compares its p50/p95 with the same transactions timed on the wire.
Needs sysbench and a built sizeup (target/release/sizeup, or $SIZEUP_BIN). Uses its own
SIZEUP_HOME.
"""
import argparse
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SIZEUP = os.environ.get("SIZEUP_BIN") or os.path.join(ROOT, "target", "release", "sizeup")


def build_sizeup():
    """Builds sizeup as a user does (unless SIZEUP_BIN names another binary), so the bench
    never measures a stale binary. (Since resolver 1, `cargo test` and `cargo build` make
    the same binary; before, the test build carried other features.)"""
    if not os.environ.get("SIZEUP_BIN"):
        subprocess.run(["cargo", "build", "--release", "--locked", "--bin", "sizeup"], cwd=ROOT, check=True,
                       capture_output=True)


def child_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def proc_cpu(pid):
    with open(f"/proc/{pid}/stat") as f:
        rest = f.read().rsplit(")", 1)[1].split()
    return (int(rest[11]) + int(rest[12])) / os.sysconf("SC_CLK_TCK")


def host_idle():
    """(idle + iowait, all) jiffies and context switches of the whole host, from /proc/stat."""
    with open("/proc/stat") as f:
        lines = f.read().splitlines()
    v = [int(x) for x in lines[0].split()[1:9]]
    ctxt = next(int(l.split()[1]) for l in lines if l.startswith("ctxt "))
    return v[3] + v[4], sum(v), ctxt


LAST_SWITCHES = [0]


def status(sock, name):
    out = subprocess.run(["mariadb", f"--socket={sock}", "-uroot", "-N", "-e", f"SHOW GLOBAL STATUS LIKE '{name}'"],
                         capture_output=True, text=True).stdout.split()
    return int(out[1]) if len(out) > 1 else 0


def settle(server_pid, sock=None, limit=120.0):
    """Waits until the server is quiet, so that no run pays for the one before it: with
    `sock`, first until InnoDB has written its dirty pages (after a load: otherwise the
    next contender's run flushes the previous one's rows), then until the server process
    uses under 2 % of a CPU over half a second (purge, drops, flushing done)."""
    t0 = time.time()
    if sock:
        old = subprocess.run(["mariadb", f"--socket={sock}", "-uroot", "-N", "-e",
                              "SELECT @@GLOBAL.innodb_max_dirty_pages_pct"], capture_output=True, text=True).stdout.strip()
        subprocess.run(["mariadb", f"--socket={sock}", "-uroot", "-e", "SET GLOBAL innodb_max_dirty_pages_pct=0"])
        while status(sock, "Innodb_buffer_pool_pages_dirty") > 200 and time.time() - t0 < limit:
            time.sleep(0.5)
        subprocess.run(["mariadb", f"--socket={sock}", "-uroot", "-e", f"SET GLOBAL innodb_max_dirty_pages_pct={old}"])
    while time.time() - t0 < limit:
        c0 = proc_cpu(server_pid)
        time.sleep(0.5)
        if proc_cpu(server_pid) - c0 < 0.01:
            return


def measured(cmd, server_pid, env, cwd=None):
    """Runs cmd; returns its stdout, client CPU s, server CPU s, wall s and the host's idle %
    (the host's context switches over the run are left in LAST_SWITCHES[0])."""
    settle(server_pid)
    c0, s0, t0, h0 = child_cpu(), proc_cpu(server_pid), time.time(), host_idle()
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=cwd)
    if out.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{out.stdout}\n{out.stderr}")
    h1 = host_idle()
    idle = 100.0 * (h1[0] - h0[0]) / max(1, h1[1] - h0[1])
    LAST_SWITCHES[0] = h1[2] - h0[2]
    return out.stdout, child_cpu() - c0, proc_cpu(server_pid) - s0, time.time() - t0, idle


def sysbench(workload, a, sock, server_pid, env, extra=(), target=None, cwd=None):
    cmd = ["sysbench", workload, *(target or [f"--mysql-socket={sock}"]), "--mysql-user=root", "--mysql-db=sbtest",
           f"--tables={a.tables}", f"--table-size={a.table_size}", f"--threads={a.threads}",
           f"--time={a.time}", "--percentile=95", *extra, "run"]
    out, ccpu, scpu, _, idle = measured(cmd, server_pid, env, cwd)
    tx = int(re.search(r"transactions:\s+(\d+)", out).group(1))
    q = int(re.search(r"queries:\s+(\d+)", out).group(1))
    p95 = float(re.search(r"95th percentile:\s+([\d.]+)", out).group(1))
    # sysbench prints min/avg/max; its median needs --histogram, so p50 comes from there.
    return {"tps": tx / a.time, "qps": q / a.time, "client_us": ccpu * 1e6 / tx, "server_us": scpu * 1e6 / tx,
            "p95": p95, "tx": tx, "out": out, "idle": idle, "cs": LAST_SWITCHES[0] / tx}


def sizeup(workload, a, sock, server_pid, env, extra=(), target=None):
    js = tempfile.mktemp(suffix=".json")
    cmd = [SIZEUP, "run", workload, *(target or [f"--socket={sock}"]), "--user=root", "--database=sbtest",
           f"--tables={a.tables}", f"--table-size={a.table_size}", f"--threads={a.threads}",
           f"--time={a.time}", "--report-interval=0", f"--json={js}", *extra]
    _, ccpu, scpu, _, idle = measured(cmd, server_pid, env)
    doc = json.load(open(js))
    os.unlink(js)
    s = doc["summary"]
    tx = s["transactions"]
    cipher = json.dumps(doc.get("config", {}))
    m = re.search(r'"tls_cipher":\s*"([^"]*)"', cipher)
    return {"cipher": m.group(1) if m else None, "tps": s["tps"], "qps": s["qps"], "client_us": ccpu * 1e6 / tx, "server_us": scpu * 1e6 / tx,
            "p95": s["latency_ms"]["p95"], "p50": s["latency_ms"]["p50"], "tx": tx, "idle": idle,
            "cs": LAST_SWITCHES[0] / tx}


def median(rows, key):
    return statistics.median(r[key] for r in rows)


def compare(name, a, sock, pid, env, sb_extra=(), su_extra=()):
    """Alternates the tools; with --direct, a third run per round is sizeup writing each
    command itself (SIZEUP_IO_URING=off), the client before io_uring batching."""
    sb, su, sd = [], [], []
    direct_env = dict(env, SIZEUP_IO_URING="off")
    for i in range(a.pairs):
        sb.append(sysbench(name, a, sock, pid, env, sb_extra))
        su.append(sizeup(name, a, sock, pid, env, su_extra))
        line = (f"  pair {i + 1}: sysbench {sb[-1]['tps']:.0f} tps {sb[-1]['client_us']:.2f} us/tx client | "
                f"sizeup {su[-1]['tps']:.0f} tps {su[-1]['client_us']:.2f} us/tx client")
        if a.direct:
            sd.append(sizeup(name, a, sock, pid, direct_env, su_extra))
            line += f" | direct {sd[-1]['tps']:.0f} tps {sd[-1]['client_us']:.2f}"
        print(line, flush=True)
    print(f"{name} at {a.threads} threads, {a.pairs} pairs x {a.time} s (medians; ratio = sizeup / sysbench, "
          f"then the median and range of the per-pair ratios):")
    print(f"  {'figure':<20} {'sysbench':>10} {'sizeup':>10} {'ratio':>7} {'pairs':>18}" +
          (f" {'direct':>10} {'ratio':>7}" if a.direct else ""))
    for key, label in [("tps", "tps"), ("qps", "qps"), ("client_us", "client CPU us/tx"),
                       ("server_us", "server CPU us/tx"), ("p95", "p95 ms")]:
        x, y = median(sb, key), median(su, key)
        per = sorted(u[key] / b[key] for u, b in zip(su, sb))
        row = (f"  {label:<20} {x:>10.2f} {y:>10.2f} {y / x:>7.2f} "
               f"{statistics.median(per):>6.2f} [{per[0]:.2f}-{per[-1]:.2f}]")
        if a.direct:
            z = median(sd, key)
            row += f" {z:>10.2f} {z / x:>7.2f}"
        print(row)
    # CPU nobody used during the run (idle + iowait of the whole host): a client that
    # leaves the server's CPUs idle loses throughput without costing more per query.
    row = f"  {'host idle %':<20} {median(sb, 'idle'):>10.2f} {median(su, 'idle'):>10.2f}"
    print(row + (f" {'':>7} {'':>18} {median(sd, 'idle'):>10.2f}" if a.direct else ""))
    return sb, su


def sweep(a, sock, pid, env):
    """oltp_point_select at several thread counts, the tools alternating at each: the low
    counts show whether the client keeps the server's CPUs busy."""
    rows = []
    for threads in [int(t) for t in a.sweep_threads.split(",")]:
        b = argparse.Namespace(**{**vars(a), "threads": threads})
        sb, su = [], []
        for _ in range(a.pairs):
            sb.append(sysbench("oltp_point_select", b, sock, pid, env))
            su.append(sizeup("oltp_point_select", b, sock, pid, env))
        per = sorted(u["tps"] / s["tps"] for u, s in zip(su, sb))
        rows.append((threads, median(sb, "tps"), median(su, "tps"), statistics.median(per), per[0], per[-1],
                     median(sb, "client_us"), median(su, "client_us")))
        print(f"  {threads} threads done", flush=True)
    print(f"oltp_point_select by threads, {a.pairs} pairs x {a.time} s each (medians; tps ratio: median and "
          f"range of the per-pair ratios):")
    print(f"  {'threads':>7} {'sysbench tps':>13} {'sizeup tps':>11} {'ratio':>6} {'range':>12} "
          f"{'client us sb':>13} {'sizeup':>7}")
    for t, x, y, r, lo, hi, cx, cy in rows:
        print(f"  {t:>7} {x:>13.0f} {y:>11.0f} {r:>6.2f} {f'[{lo:.2f}-{hi:.2f}]':>12} {cx:>13.2f} {cy:>7.2f}")


FLOOR = os.path.join(ROOT, "target", "release", "examples", "round_trip_floor")


def build_floor():
    subprocess.run(["cargo", "build", "--release", "--locked", "--example", "round_trip_floor"], cwd=ROOT,
                   check=True, capture_output=True)


def floor_cmd(workload, threads, sock, target, a):
    """The bare client's command for a workload at `threads` connections, over the socket
    or `target` (its flags from tcp_targets)."""
    return [FLOOR, *(target or ["--socket", sock]), "--threads", str(threads), "--tables", str(a.tables),
            "--table-size", str(a.table_size), "--workload", workload.removeprefix("oltp_")]


def floor(workload, threads, sock, pid, env, target, a):
    """A bare client's transactions on this box and link (see bench/round_trip_floor.rs),
    run like a contender, in each way a client can arrange its threads: one thread per
    connection (its four ways of waiting, a quarter of the time each), and each thread
    driving 2, 4 or 8 of the connections (half the time each); above 8 connections, one or
    two threads driving them all (sizeup's ways on two CPUs), so that a cell costs no more
    than at 8. Returns {per_thread:
    {"client_us": least client CPU per transaction, "tps": most transactions per
    second}}."""
    base = floor_cmd(workload, threads, sock, target, a)
    shared = [k for k in (2, 4, 8) if k <= threads and threads % k == 0] if threads <= 8 else [threads // 2, threads]
    found = {}
    for k, secs in [(1, a.time)] + [(k, a.time / 2) for k in shared]:
        out, _, _, _, _ = measured(base + ["--time", str(secs), "--per-thread", str(k)], pid, env)
        modes = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
        found[k] = {"client_us": min(m["client_us"] for m in modes), "tps": max(m["per_s"] for m in modes)}
    return found


def floor_best(fl, sb):
    """The bare client's arrangement closest to meeting both targets against sysbench
    (medians of the pairs): (connections per thread, client us, cpu/sb, tps/sb, whether it
    meets both)."""
    best = None
    for k in fl[0]:
        us = statistics.median(f[k]["client_us"] for f in fl)
        cpu = statistics.median(f[k]["client_us"] / s["client_us"] for f, s in zip(fl, sb))
        tps = statistics.median(f[k]["tps"] / s["tps"] for f, s in zip(fl, sb))
        score = min(tps / 1.05, 0.70 / cpu)
        if best is None or score > best[0]:
            best = (score, k, us, cpu, tps)
    score, k, us, cpu, tps = best
    return k, us, cpu, tps, score >= 1.0


def tcp_targets(port):
    """Plain TCP loopback to the server on `port`, as flags for sysbench, sizeup and the
    bare client (round_trip_floor)."""
    return (["--mysql-host=127.0.0.1", f"--mysql-port={port}", "--mysql-ssl=off"],
            ["--host=127.0.0.1", f"--port={port}", "--ssl-mode=DISABLED"],
            ["--host", "127.0.0.1", "--port", str(port)])


def lead(a, sock, pid, env, port, prepared):
    """Issue 18's table: point select and read/write at each of --lead-threads, over the
    unix socket and over TCP loopback, the tools alternating (and swapping which goes
    first each pair), then prepare against the server-copy floor: one table, every cell
    with the per-pair median and range of sizeup / sysbench."""
    transports = {"socket": (None, None, None),
                  "tcp": tcp_targets(port)}
    transports = {k: v for k, v in transports.items() if k in a.links.split(",")}
    # The bare client is built with cargo, which a lent machine has not.
    if a.floor_up_to > 0:
        build_floor()
    rows = []
    for name, short in (("oltp_point_select", "point select"), ("oltp_read_write", "read/write")):
        if name.removeprefix("oltp_") not in a.lead_workloads.split(","):
            continue
        for transport, (sb_tgt, su_tgt, floor_tgt) in transports.items():
            for threads in [int(t) for t in a.lead_threads.split(",")]:
                b = argparse.Namespace(**{**vars(a), "threads": threads})
                sb, su, fl, aa, va = [], [], [], [], []
                runs = [lambda: sb.append(sysbench(name, b, sock, pid, env, target=sb_tgt)),
                        lambda: su.append(sizeup(name, b, sock, pid, env, target=su_tgt))]
                # --variant-threads: sizeup a second time in each pair with other client
                # threads ("conn": one per connection), to set the default's rule against.
                if a.variant_threads and transport in a.variant_links.split(","):
                    n = threads if a.variant_threads == "conn" else int(a.variant_threads)
                    runs.append(lambda: va.append(sizeup(name, b, sock, pid, env, [f"--client-threads={n}"],
                                                         target=su_tgt)))
                # --control: sysbench a second time in each pair, so the cell shows how far
                # one tool differs from itself between the runs of a pair on this box.
                if a.control:
                    runs.append(lambda: aa.append(sysbench(name, b, sock, pid, env, target=sb_tgt)))
                # The bare client runs in every pair up to --floor-up-to connections, in
                # turn with the tools, so its figures meet the same moments of the box's noise.
                if threads <= a.floor_up_to:
                    runs.append(lambda: fl.append(floor(name, threads, sock, pid, env, floor_tgt, b)))
                for i in range(a.pairs):
                    for run in runs[i % len(runs):] + runs[:i % len(runs)]:
                        run()
                rows.append((short, transport, threads, sb, su, fl, aa))
                tps = sorted(u["tps"] / s["tps"] for u, s in zip(su, sb))
                cpu = sorted(u["client_us"] / s["client_us"] for u, s in zip(su, sb))
                same = sorted(x["tps"] / s["tps"] for x, s in zip(aa, sb))
                vtps = sorted(v["tps"] / s["tps"] for v, s in zip(va, sb))
                vcpu = sorted(v["client_us"] / s["client_us"] for v, s in zip(va, sb))
                print(f"  {short} {transport} {threads:>2} threads: sysbench {median(sb, 'tps'):.0f} tps "
                      f"{median(sb, 'client_us'):.2f} us/tx, sizeup {median(su, 'tps'):.0f} tps "
                      f"{median(su, 'client_us'):.2f} us/tx: tps {statistics.median(tps):.2f} "
                      f"[{tps[0]:.2f}-{tps[-1]:.2f}], client CPU {statistics.median(cpu):.2f}"
                      + (f"; client threads {a.variant_threads}: {median(va, 'tps'):.0f} tps, tps "
                         f"{statistics.median(vtps):.2f} [{vtps[0]:.2f}-{vtps[-1]:.2f}], client CPU "
                         f"{statistics.median(vcpu):.2f}" if va else "")
                      + (f"; sysbench against itself {statistics.median(same):.2f} [{same[0]:.2f}-{same[-1]:.2f}]"
                         if same else ""), flush=True)
    print(f"\nsizeup against sysbench: {a.pairs} alternating pairs x {a.time} s per cell, {a.tables} tables x "
          f"{a.table_size} rows; ratios are sizeup / sysbench, the median of the per-pair ratios "
          f"[range]; met = tps >= 1.05x and client CPU <= 0.70x.\n"
          f"floor: a bare client (bench/round_trip_floor.rs: the workload's prepared statements and nothing "
          f"else) run in turn with the tools in every pair up to {a.floor_up_to} connections, in each "
          f"arrangement of its threads: one per connection (four ways of waiting), and 2, 4 or 8 connections "
          f"to a thread (one epoll each); above 8 connections, one or two threads for them all. 'arr' is the arrangement (threads x connections each) closest to "
          f"meeting both targets, 'floor us' its client CPU per transaction, 'cpu/sb' that against "
          f"sysbench's, 'tps/sb' its transactions per second against sysbench's (medians of the pairs). "
          f"'floor misses' says what the closest arrangement misses when none meets both: no client that "
          f"waits for each answer meets that cell on this box."
          + (" 'sb/sb': with --control, sysbench's second run of each pair against its first (tps, "
             "median [range]): the spread a tool shows against itself here." if a.control else ""))
    print(f"  {'workload':<12} {'link':<6} {'thr':>3} {'sysbench tps':>12} {'sizeup tps':>10} "
          f"{'tps ratio':>17} {'client us/tx sb':>15} {'sizeup':>8} {'ratio':>5} {'server ratio':>12} "
          f"{'idle % sb':>9} {'sizeup':>6} {'cs/tx sb':>8} {'sizeup':>6} {'floor us':>8} {'cpu/sb':>6} "
          f"{'tps/sb':>6} {'arr':>5}{'sb/sb'.rjust(17) if a.control else ''}  met")
    for short, transport, threads, sb, su, fl, aa in rows:
        tps = sorted(u["tps"] / s["tps"] for u, s in zip(su, sb))
        cpu = sorted(u["client_us"] / s["client_us"] for u, s in zip(su, sb))
        srv = statistics.median(u["server_us"] / s["server_us"] for u, s in zip(su, sb))
        t, c = statistics.median(tps), statistics.median(cpu)
        nan = float("nan")
        arrangement, blocked = "-", []
        if fl:
            k, floor_us, floor_cpu, floor_tps, reachable = floor_best(fl, sb)
            arrangement = f"{threads // k}x{k}"
            if not reachable:
                blocked = [what for what, ok in (("tps", floor_tps >= 1.05), ("cpu", floor_cpu <= 0.70)) if not ok]
        else:
            floor_us = floor_cpu = floor_tps = nan
        control = ""
        if aa:
            same = sorted(x["tps"] / s["tps"] for x, s in zip(aa, sb))
            control = f" {statistics.median(same):.2f} [{same[0]:.2f}-{same[-1]:.2f}]"
        missed = [what for what, ok in (("tps", t >= 1.05), ("cpu", c <= 0.70)) if not ok]
        verdict = "NO: " + ", ".join(missed) if missed else "yes"
        # The bare client tried every arrangement of threads sizeup could use.
        if missed and blocked:
            verdict += "; floor misses " + ", ".join(blocked)
        print(f"  {short:<12} {transport:<6} {threads:>3} {median(sb, 'tps'):>12.0f} {median(su, 'tps'):>10.0f} "
              f"{t:>5.2f} {f'[{tps[0]:.2f}-{tps[-1]:.2f}]':>11} {median(sb, 'client_us'):>15.2f} "
              f"{median(su, 'client_us'):>8.2f} {c:>5.2f} {srv:>12.2f} {median(sb, 'idle'):>9.2f} "
              f"{median(su, 'idle'):>6.2f} {median(sb, 'cs'):>8.2f} {median(su, 'cs'):>6.2f} "
              f"{floor_us:>8.2f} {floor_cpu:>6.2f} {floor_tps:>6.2f} {arrangement:>5}{control}  {verdict}")
    # Not `floor`: that name is the floor runner called above, and a loop variable of the
    # same name made it a local of this function (NameError in the first cell, session 19).
    for threads, (x, y, z, per_triple) in prepared:
        r = statistics.median(per_triple)
        print(f"  {'prepare':<12} {'socket':<6} {threads:>3} loaders: sysbench {x:,.0f} rows/s, sizeup {y:,.0f} "
              f"rows/s ({y / x:.2f}x), server copy floor {z:,.0f} rows/s: sizeup at {100 * r:.0f} % of the "
              f"floor [{per_triple[0]:.2f}-{per_triple[-1]:.2f}] (median of the triples; {100 * y / z:.0f} % of the medians)  "
              f"{'yes' if r >= 0.9 else 'NO'}")


def script_three_ways(a, sock, pid, env):
    """sysbench's oltp_read_write.lua run by sysbench and by sizeup's Lua engine, and
    sizeup's built-in oltp_read_write, alternating: what running a script costs the client."""
    path = "/usr/share/sysbench/oltp_read_write.lua"
    rows = {"sysbench script": [], "sizeup script": [], "sizeup built-in": []}
    for i in range(a.pairs):
        rows["sysbench script"].append(sysbench(path, a, sock, pid, env))
        rows["sizeup script"].append(sizeup(path, a, sock, pid, env))
        rows["sizeup built-in"].append(sizeup("oltp_read_write", a, sock, pid, env))
        print(f"  round {i + 1}: " + " | ".join(f"{k} {v[-1]['tps']:.0f} tps {v[-1]['client_us']:.1f} us/tx"
                                              for k, v in rows.items()), flush=True)
    base = rows["sysbench script"]
    print(f"oltp_read_write.lua at {a.threads} threads, {a.pairs} rounds x {a.time} s (medians; ratio to "
          f"sysbench: median and range of the per-round ratios):")
    for key, label in [("tps", "tps"), ("client_us", "client CPU us/tx"), ("server_us", "server CPU us/tx"),
                       ("p95", "p95 ms")]:
        line = f"  {label:<18}"
        for name, r in rows.items():
            per = sorted(x[key] / b[key] for x, b in zip(r, base))
            line += f" {name} {median(r, key):>8.2f}"
            if r is not base:
                line += f" ({statistics.median(per):.2f} [{per[0]:.2f}-{per[-1]:.2f}])"
        print(line)


def make_certs(d):
    """A CA, a server certificate for localhost and a client certificate, made with
    openssl in d under the names sysbench 1.0.20 opens from its working directory when
    --mysql-ssl=on (client-key.pem, client-cert.pem, cacert.pem)."""
    def ossl(*args):
        subprocess.run(["openssl", *args], cwd=d, check=True, capture_output=True)
    ossl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca-key.pem", "-out", "ca.pem",
         "-days", "2", "-subj", "/CN=sizeup bench CA")
    ossl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server-key.pem", "-out", "server.csr",
         "-subj", "/CN=localhost")
    # Version 3 certificates (an -extfile): rustls cannot read version 1 ones.
    open(os.path.join(d, "server.ext"), "w").write("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
    open(os.path.join(d, "client.ext"), "w").write("extendedKeyUsage=clientAuth\n")
    ossl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca-key.pem", "-CAcreateserial",
         "-out", "server-cert.pem", "-days", "2", "-extfile", "server.ext")
    ossl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "client-key.pem", "-out", "client.csr",
         "-subj", "/CN=sizeup bench client")
    ossl("x509", "-req", "-in", "client.csr", "-CA", "ca.pem", "-CAkey", "ca-key.pem", "-CAcreateserial",
         "-out", "client-cert.pem", "-days", "2", "-extfile", "client.ext")
    shutil.copy(os.path.join(d, "ca.pem"), os.path.join(d, "cacert.pem"))
    return [f"ssl_ca={d}/ca.pem", f"ssl_cert={d}/server-cert.pem", f"ssl_key={d}/server-key.pem"]


def tls_cost(a, sock, pid, env, port, certs):
    """Each workload over TCP loopback, plain and TLS, for both tools, alternating within
    each round: the TLS cost is the difference in CPU per transaction."""
    tcp_sb = ["--mysql-host=127.0.0.1", f"--mysql-port={port}"]
    tcp_su = ["--host=127.0.0.1", f"--port={port}"]
    # Both tools present the same client certificate (sysbench always does with TLS on).
    modes = [("sysbench", "plain", ["--mysql-ssl=off"]), ("sysbench", "tls", ["--mysql-ssl=on"]),
             ("sizeup", "plain", ["--ssl-mode=DISABLED"]),
             ("sizeup", "tls", ["--ssl-mode=VERIFY_CA", f"--ssl-ca={certs}/ca.pem",
                                f"--ssl-cert={certs}/client-cert.pem", f"--ssl-key={certs}/client-key.pem"])]
    for name in ("oltp_point_select", "oltp_read_write"):
        rows = {(tool, m): [] for tool, m, _ in modes}
        for i in range(a.pairs):
            for tool, m, extra in modes:
                if tool == "sysbench":
                    r = sysbench(name, a, sock, pid, env, extra, tcp_sb, cwd=certs)
                else:
                    r = sizeup(name, a, sock, pid, env, extra, tcp_su)
                rows[(tool, m)].append(r)
            print(f"  {name} round {i + 1}: " + ", ".join(
                f"{t} {m} {rows[(t, m)][-1]['tps']:.0f} tps" for t, m, _ in modes), flush=True)
        cipher = next((r.get("cipher") for r in rows[("sizeup", "tls")] if r.get("cipher")), "?")
        print(f"{name} at {a.threads} threads over TCP loopback, {a.pairs} rounds x {a.time} s (medians; "
              f"sizeup's TLS: {cipher}):")
        print(f"  {'tool':<9} {'tps plain':>10} {'tps TLS':>9} {'ratio':>6} {'client us/tx':>13} {'TLS':>8} "
              f"{'+us':>6} {'server us/tx':>13} {'TLS':>8} {'+us':>6}")
        for tool in ("sysbench", "sizeup"):
            p, t = rows[(tool, "plain")], rows[(tool, "tls")]
            tp, tt, cp, ct, sp, st = (median(p, "tps"), median(t, "tps"), median(p, "client_us"),
                                      median(t, "client_us"), median(p, "server_us"), median(t, "server_us"))
            print(f"  {tool:<9} {tp:>10.0f} {tt:>9.0f} {tt / tp:>6.2f} {cp:>13.2f} {ct:>8.2f} {ct - cp:>+6.2f} "
                  f"{sp:>13.2f} {st:>8.2f} {st - sp:>+6.2f}")


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
        # Each starts from a quiet server (the previous rows written, drops done), and the
        # order changes each pair. The copy needs a loaded sbtest1, so it goes last in the
        # first pair; sizeup loads last in the final pair, so its tables serve later runs.
        tools = ["sysbench", "sizeup"] if i % 2 == 0 or i == a.pairs - 1 else ["sizeup", "sysbench"]
        order = tools + ["server copy"] if i == 0 else ["server copy"] + tools
        for tool in order:
            if tool != "server copy":
                mariadb(sock, "DROP DATABASE IF EXISTS sbtest; CREATE DATABASE sbtest", "mysql").wait()
            settle(pid, sock)
            if tool == "server copy":
                wall, scpu = server_copy(a, threads, sock, pid)
                ccpu = 0.0
            else:
                if tool == "sysbench":
                    cmd = ["sysbench", "oltp_read_write", *tgt, f"--threads={threads}", "prepare"]
                else:
                    cmd = [SIZEUP, "prepare", "oltp_read_write", f"--socket={sock}", f"--tables={a.tables}",
                           f"--table-size={a.table_size}", f"--threads={threads}"]
                _, ccpu, scpu, wall, _ = measured(cmd, pid, env)
            rates[tool].append(rows / wall)
            print(f"  prepare {threads} threads, pair {i + 1} {tool}: {wall:.2f} s, {rows / wall:.0f} rows/s, "
                  f"server {scpu * 1e6 / rows:.2f} us/row, client {ccpu * 1e6 / rows:.2f} us/row", flush=True)
    x, y, z = (statistics.median(rates[k]) for k in ("sysbench", "sizeup", "server copy"))
    # Against the floor per triple, as the OLTP cells compare per pair: a triple runs back
    # to back, so drift in the machine's speed over the minutes cancels.
    per_triple = sorted(su / cp for su, cp in zip(rates["sizeup"], rates["server copy"]))
    print(f"prepare {a.tables} x {a.table_size}, {threads} threads: sysbench {x:.0f} rows/s, sizeup {y:.0f} rows/s "
          f"(ratio {y / x:.2f}); the server copying its own rows {z:.0f} rows/s (ratio {z / x:.2f}); sizeup / copy "
          f"per triple {' '.join(f'{r:.2f}' for r in per_triple)}")
    return x, y, z, per_triple
    # sizeup prepared after sysbench, so its tables serve the runs below.


def wire_latencies(pcap, server_port):
    """Per-transaction time on the wire, from a loopback capture: each connection's
    BEGIN leaving the client to the server's answer to its COMMIT. Neither tool's own
    clock is involved, so this checks both tools' latency figures."""
    import struct
    data = open(pcap, "rb").read()
    magic = struct.unpack("<I", data[:4])[0]
    scale = 1e-9 if magic == 0xA1B23C4D else 1e-6
    link = struct.unpack("<I", data[20:24])[0]
    off, out, state, pending, prepared = 24, [], {}, {}, {}
    while off + 16 <= len(data):
        sec, frac, incl, _ = struct.unpack("<IIII", data[off:off + 16])
        pkt, off = data[off + 16:off + 16 + incl], off + 16 + incl
        t = sec + frac * scale
        ip = pkt[14:] if link == 1 else pkt[16:]  # Ethernet or Linux cooked capture
        if len(ip) < 20 or ip[0] >> 4 != 4:
            continue
        tcp = ip[(ip[0] & 15) * 4:]
        sport, dport = struct.unpack(">HH", tcp[:4])
        payload = tcp[(tcp[12] >> 4) * 4:]
        if len(payload) < 5:
            continue
        if dport == server_port:  # client -> server: a command
            word = next((w for w in (b"BEGIN", b"COMMIT") if payload[5:5 + len(w)].upper() == w), None)
            if payload[4] == 0x16 and word:  # COM_STMT_PREPARE (sysbench prepares both)
                pending[sport] = word
                continue
            if payload[4] == 0x17:  # COM_STMT_EXECUTE: which statement?
                word = prepared.get((sport, payload[5:9]))
            elif payload[4] != 0x03:  # COM_QUERY (sizeup sends both as text)
                word = None
            if word == b"BEGIN":
                state[sport] = [t, False]
            elif word == b"COMMIT" and sport in state:
                state[sport][1] = True
        elif dport in pending and payload[4] == 0x00:  # the prepare's answer names the id
            prepared[(dport, payload[5:9])] = pending.pop(dport)
        elif sport == server_port and dport in state and state[dport][1]:
            out.append((t - state.pop(dport)[0]) * 1000)
    return sorted(out)


def percentile(sorted_ms, q):
    return sorted_ms[min(len(sorted_ms) - 1, int(q * len(sorted_ms)))]


def wire(a, sock, pid, env, port):
    """Each tool at the fixed rate over TCP loopback, captured with tcpdump: its own
    p50/p95 against the same transactions' wire times."""
    tgt_tcp = ["--mysql-host=127.0.0.1", f"--mysql-port={port}"]
    rows = {"sysbench": [], "sizeup": []}
    for i in range(a.pairs):
        for tool in ("sysbench", "sizeup"):
            pcap = tempfile.mktemp(suffix=".pcap")
            cap = subprocess.Popen(["tcpdump", "-i", "lo", "-s", "96", "-w", pcap, "-U",
                                    f"tcp port {port}"], stderr=subprocess.DEVNULL)
            time.sleep(1)
            if tool == "sysbench":
                r = sysbench("oltp_read_write", a, sock, pid, env, [f"--rate={a.rate}", "--histogram=on"], tgt_tcp)
                r["p50"] = sysbench_p50(r["out"])
            else:
                r = sizeup("oltp_read_write", a, sock, pid, env, [f"--rate={a.rate}"],
                           ["--host=127.0.0.1", f"--port={port}"])
            time.sleep(0.5)
            cap.terminate()
            cap.wait()
            w = wire_latencies(pcap, port)
            os.unlink(pcap)
            r.update(wire_n=len(w), wire_p50=percentile(w, 0.5), wire_p95=percentile(w, 0.95))
            rows[tool].append(r)
            print(f"  wire pair {i + 1} {tool}: {r['tx']} transactions, {len(w)} on the wire; "
                  f"p50 {r['p50']:.3f} ms (wire {r['wire_p50']:.3f}), p95 {r['p95']:.3f} ms "
                  f"(wire {r['wire_p95']:.3f})", flush=True)
    print(f"oltp_read_write at a fixed {a.rate} tps over TCP loopback, {a.pairs} pairs (medians, ms):")
    print(f"  {'':<9} {'p50':>7} {'wire p50':>9} {'ratio':>6} {'p95':>7} {'wire p95':>9} {'ratio':>6}")
    for tool, r in rows.items():
        p50, w50, p95, w95 = (median(r, k) for k in ("p50", "wire_p50", "p95", "wire_p95"))
        print(f"  {tool:<9} {p50:>7.3f} {w50:>9.3f} {p50 / w50:>6.2f} {p95:>7.3f} {w95:>9.3f} {p95 / w95:>6.2f}")


def sysbench_p50(out):
    """sysbench prints min/avg/max; its median comes from --histogram."""
    hist = [(float(m.group(1)), int(m.group(2))) for m in
            re.finditer(r"^\s+([\d.]+) \|[\s*]+(\d+)\s*$", out, re.M)]
    total, acc = sum(c for _, c in hist), 0
    for v, c in hist:
        acc += c
        if acc >= total / 2:
            return v
    return None


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--pairs", type=int, default=3)
    p.add_argument("--time", type=int, default=20)
    p.add_argument("--tables", type=int, default=8)
    p.add_argument("--table-size", type=int, default=250000)
    p.add_argument("--threads", type=int, default=8)
    p.add_argument("--rate", type=int, default=500)
    p.add_argument("--only", default="prepare,point_select,read_write,rate,wire")
    p.add_argument("--prepare-threads", default="2,4", help="loader connections, compared at each")
    p.add_argument("--sweep-threads", default="1,2,4,8,16", help="thread counts for --only sweep")
    p.add_argument("--lead-threads", default="1,2,4,8,16,32,64", help="thread counts for --only lead")
    p.add_argument("--floor-up-to", type=int, default=64,
                   help="run the bare client in the lead table's cells up to this many connections")
    p.add_argument("--lead-workloads", default="point_select,read_write", help="lead: the workloads to measure")
    p.add_argument("--links", default="socket,tcp", help="lead: the links to measure (socket, tcp)")
    p.add_argument("--variant-threads", default="",
                   help="lead: also run sizeup with this many client threads ('conn': one per connection)")
    p.add_argument("--variant-links", default="socket", help="lead: the links the variant runs on")
    p.add_argument("--control", action="store_true",
                   help="lead: also run sysbench a second time in each pair and print its spread against itself")
    p.add_argument("--direct", action="store_true",
                   help="also run sizeup with SIZEUP_IO_URING=off (one write per command) in each round")
    a = p.parse_args()
    build_sizeup()
    only = a.only.split(",")
    home = os.environ.get("SIZEUP_HOME") or tempfile.mkdtemp(prefix="sizeup-bench-")
    env = dict(os.environ, SIZEUP_HOME=home)
    tls_set, certs = [], None
    if "tls" in only:
        certs = tempfile.mkdtemp(prefix="sizeup-bench-certs-")
        for kv in make_certs(certs):
            tls_set += ["--set", kv]
    subprocess.run([SIZEUP, "server", "start", "--buffer-pool", "2G", "--log-file-size", "512M",
                    "--flush-log-at-trx-commit", "2",
                    # sysbench's read/write prepares its statements per table and connection:
                    # 256 connections pass the default 16,382.
                    "--set", "max_prepared_stmt_count=1048576", *tls_set], env=env, check=True, stdout=subprocess.DEVNULL)
    try:
        st = json.loads(subprocess.run([SIZEUP, "server", "status", "--json"], env=env, check=True,
                                       capture_output=True, text=True).stdout)[0]
        sock, pid, port = st["socket"], st["pid"], st["port"]
        print(f"server: pid {pid}, socket {sock}; {a.tables} tables x {a.table_size} rows")
        tgt = [f"--mysql-socket={sock}", "--mysql-user=root", "--mysql-db=sbtest", f"--tables={a.tables}",
               f"--table-size={a.table_size}"]
        prepared = []
        # --prepare-threads '' (where no mariadb client is, as on a lent machine): no comparison.
        if ("prepare" in only or "lead" in only) and a.prepare_threads:
            for threads in [int(t) for t in a.prepare_threads.split(",")]:
                prepared.append((threads, prepare_pairs(a, threads, sock, pid, env, tgt)))
            # sizeup prepared last, so its tables serve the runs below.
        else:
            subprocess.run([SIZEUP, "prepare", "oltp_read_write", f"--socket={sock}", f"--tables={a.tables}",
                            f"--table-size={a.table_size}", "--threads=2"], env=env, check=True,
                           stdout=subprocess.DEVNULL)
        if "point_select" in only:
            compare("oltp_point_select", a, sock, pid, env)
        if "read_write" in only:
            compare("oltp_read_write", a, sock, pid, env)
        if "sweep" in only:
            sweep(a, sock, pid, env)
        if "lead" in only:
            lead(a, sock, pid, env, port, prepared)
        if "script" in only:
            script_three_ways(a, sock, pid, env)
        if "tls" in only:
            tls_cost(a, sock, pid, env, port, certs)
        if "rate" in only:
            sb, su = [], []
            for i in range(a.pairs):
                r = sysbench("oltp_read_write", a, sock, pid, env, [f"--rate={a.rate}", "--histogram=on"])
                r["p50"] = sysbench_p50(r["out"])
                sb.append(r)
                su.append(sizeup("oltp_read_write", a, sock, pid, env, [f"--rate={a.rate}"]))
            print(f"oltp_read_write at a fixed {a.rate} tps ({a.threads} threads), {a.pairs} pairs (medians):")
            for key in ("tps", "p50", "p95", "client_us"):
                x, y = median(sb, key), median(su, key)
                print(f"  {key:<6} sysbench {x:>9.2f}  sizeup {y:>9.2f}  ratio {y / x:.2f}")
        if "wire" in only:
            if shutil.which("tcpdump"):
                wire(a, sock, pid, env, port)
            else:
                print("wire check skipped: tcpdump is not installed (apt-get install tcpdump)")
    finally:
        # A failed step (sys.exit) still stops the server this script started.
        if not os.environ.get("SIZEUP_HOME"):
            subprocess.run([SIZEUP, "server", "stop", "--purge"], env=env, stdout=subprocess.DEVNULL)
            # The state directory this script made (the purge leaves its bookkeeping).
            shutil.rmtree(home, ignore_errors=True)
        if certs:
            shutil.rmtree(certs, ignore_errors=True)


if __name__ == "__main__":
    main()
