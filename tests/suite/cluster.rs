//! Managed clusters on real servers: a 3-node Galera cluster forms and replicates, a
//! primary's writes reach both replicas with their lag readable, a lab cluster runs in
//! its namespaces under the CPU quota the kernel reports, and everything started is gone
//! after `cluster stop`, after a start that fails, and after a test that panics midway.
//! These tests run as root (here and in CI): the lab needs namespaces and cgroups.

use crate::common;
use common::sizeup;
use mysql_async::prelude::Queryable;
use sizeup::server::cluster::{self, Cluster, ClusterKind, Node, NodeRole};
use sizeup::server::State;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// A state directory holding one test's cluster; dropping it (a test that ends, passes
/// or panics) stops the cluster and removes its data and everything its lab made.
struct ClusterHome {
    home: tempfile::TempDir,
    base_port: u16,
}

impl ClusterHome {
    fn new() -> ClusterHome {
        ClusterHome {
            home: tempfile::Builder::new().prefix("sizeup-cluster-").tempdir().unwrap(),
            base_port: base_port(),
        }
    }

    fn path(&self) -> &Path {
        self.home.path()
    }

    fn sizeup(&self, args: &[&str]) -> Result<i32, sizeup::Error> {
        let h = self.path().to_string_lossy().into_owned();
        let mut v = vec!["--home", h.as_str()];
        v.extend_from_slice(args);
        sizeup(&v)
    }

    /// `cluster start` with small servers and this test's ports, plus `args`.
    fn start(&self, args: &[&str]) -> Result<i32, sizeup::Error> {
        let port = self.base_port.to_string();
        let mut v = vec!["cluster", "start", "--buffer-pool", "64M", "--log-file-size", "48M", "--base-port", &port];
        v.extend_from_slice(args);
        self.sizeup(&v)
    }

    fn cluster(&self) -> Cluster {
        Cluster::load(self.path()).unwrap().expect("a cluster is remembered")
    }

    /// The tag the lab names its namespaces and cgroups with (sizeup-TAG-...).
    fn tag(&self) -> String {
        self.cluster().name.trim_start_matches("sizeup-").to_string()
    }
}

impl Drop for ClusterHome {
    fn drop(&mut self) {
        let _ = self.sizeup(&["cluster", "stop", "--purge"]);
    }
}

/// A base port for one test's cluster: slots of 128 ports (a cluster's span) between
/// 14400 and 19900, below the other tests' ports and the kernel's ephemeral range, with
/// the ports a 3-node cluster uses free.
fn base_port() -> u16 {
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let spread = std::process::id() * 7;
    loop {
        let slot = (spread + NEXT.fetch_add(1, Ordering::Relaxed)) % 42;
        let base = 14400 + slot as u16 * 128;
        let used = (0..3u16).flat_map(|i| [base + i, base + 32 + i, base + 64 + i, base + 96 + i]);
        if used.into_iter().all(|p| std::net::TcpListener::bind(("127.0.0.1", p)).is_ok()) {
            return base;
        }
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap()
}

/// Runs statements on a node through the target the API gives (TCP in the lab, else
/// its socket); returns the first column of the last statement's rows.
fn sql(node: &Node, statements: &[&str]) -> Vec<String> {
    runtime().block_on(async {
        let mut conn = node.target("mysql").connect_server().await.unwrap_or_else(|e| panic!("{e}"));
        let mut last = Vec::new();
        for s in statements {
            let rows: Vec<mysql_async::Row> =
                conn.query(*s).await.unwrap_or_else(|e| panic!("{} on {}: {e}", s, node.describe()));
            last = rows
                .iter()
                .map(|r| match r.as_ref(r.len() - 1) {
                    Some(mysql_async::Value::Bytes(b)) => String::from_utf8_lossy(b).into_owned(),
                    Some(v) => v.as_sql(true),
                    None => String::new(),
                })
                .collect();
        }
        let _ = conn.disconnect().await;
        last
    })
}

/// Polls `check` every 100 ms for up to `bound`.
fn eventually(bound: Duration, mut check: impl FnMut() -> bool) -> bool {
    let started = Instant::now();
    while started.elapsed() < bound {
        if check() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    check()
}

fn ip(args: &[&str]) -> String {
    let out = Command::new("ip").args(args).output().expect("iproute2 is installed");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The cpu controller's cgroup directories named with `tag` (v1 `cpu` or v2).
fn cgroups_with(tag: &str) -> Vec<PathBuf> {
    let roots = ["/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpu,cpuacct", "/sys/fs/cgroup"];
    roots
        .iter()
        .filter_map(|r| std::fs::read_dir(r).ok())
        .flat_map(|d| d.flatten())
        .filter(|e| e.file_name().to_string_lossy().starts_with(&format!("sizeup-{tag}-")))
        .map(|e| e.path())
        .collect()
}

/// What the lab leaves on the host for `tag`: namespaces, the uplink, cgroups.
fn lab_leftovers(tag: &str) -> Vec<String> {
    let mut v: Vec<String> =
        ip(&["netns", "list"]).lines().filter(|l| l.contains(&format!("sizeup-{tag}-"))).map(String::from).collect();
    if Path::new("/sys/class/net").join(format!("sz{tag}c")).exists() {
        v.push(format!("interface sz{tag}c"));
    }
    v.extend(cgroups_with(tag).iter().map(|p| p.display().to_string()));
    v
}

/// A CPU quota in cores from a cgroup's own files, as the kernel holds them.
fn quota_from_files(dir: &Path) -> f64 {
    if let Ok(max) = std::fs::read_to_string(dir.join("cpu.max")) {
        let v: Vec<f64> = max.split_whitespace().map(|x| x.parse().unwrap()).collect();
        return v[0] / v[1];
    }
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap().trim().parse::<f64>().unwrap();
    read("cpu.cfs_quota_us") / read("cpu.cfs_period_us")
}

/// Whether this kernel has netem, asked independently of sizeup: a scratch namespace
/// and a netem qdisc on its loopback.
fn kernel_has_netem() -> bool {
    let ns = format!("sizeup-test-netem-{}", std::process::id());
    let _ = Command::new("ip").args(["netns", "add", &ns]).status();
    let ok = Command::new("tc")
        .args(["-n", &ns, "qdisc", "add", "dev", "lo", "root", "netem", "delay", "1ms"])
        .output()
        .is_ok_and(|o| o.status.success());
    let _ = Command::new("ip").args(["netns", "del", &ns]).status();
    ok
}

fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| !s.contains(") Z"))
}

#[test]
fn galera_three_nodes_form_replicate_and_stop() {
    let c = ClusterHome::new();
    let started = Instant::now();
    assert_eq!(c.start(&["--galera", "--nodes", "3"]).unwrap(), 0);
    eprintln!("3-node Galera cluster started in {:.1} s", started.elapsed().as_secs_f64());
    let cluster = c.cluster();
    assert_eq!(cluster.kind, ClusterKind::Galera);
    assert_eq!(cluster.nodes.len(), 3);
    assert_eq!(cluster.label(), None, "no lab, no emulation label");
    for n in &cluster.nodes {
        assert_eq!((n.role, n.state), (NodeRole::Galera, State::Running));
        assert_eq!(n.port, c.base_port + n.index as u16);
        assert!(n.socket.is_some(), "outside the lab a node offers its socket");
        // Read from every node itself.
        let size = sql(n, &["SHOW GLOBAL STATUS LIKE 'wsrep_cluster_size'"]);
        assert_eq!(size, vec!["3"], "{}", n.describe());
        assert_eq!(sql(n, &["SELECT CONCAT(@@binlog_format, ' ', @@innodb_autoinc_lock_mode)"]), vec!["ROW 2"]);
    }
    // A write on node 0 is read on node 2 (a causal read: wsrep_sync_wait).
    sql(
        &cluster.nodes[0],
        &[
            "CREATE DATABASE clustertest",
            "CREATE TABLE clustertest.t (id INT PRIMARY KEY, v INT)",
            "INSERT INTO clustertest.t VALUES (1, 42)",
        ],
    );
    let read = sql(&cluster.nodes[2], &["SET SESSION wsrep_sync_wait = 1", "SELECT v FROM clustertest.t WHERE id = 1"]);
    assert_eq!(read, vec!["42"]);
    // Conflict counters and readiness, as study code reads them.
    let conflicts = runtime().block_on(cluster::galera_conflicts(&cluster.nodes[1])).unwrap();
    assert_eq!((conflicts.cert_failures, conflicts.bf_aborts), (0, 0));
    let status = cluster.status();
    assert!(status.iter().all(|s| s.readiness.ready()), "{status:?}");

    // Asking for 2 nodes shrinks the cluster: node 2 leaves cleanly.
    assert_eq!(c.start(&["--galera", "--nodes", "2"]).unwrap(), 0);
    let two = c.cluster();
    assert_eq!(two.nodes[2].state, State::Stopped);
    assert_eq!(sql(&two.nodes[1], &["SHOW GLOBAL STATUS LIKE 'wsrep_cluster_size'"]), vec!["2"]);

    let pids: Vec<i32> = cluster.nodes.iter().filter_map(|n| n.pid).collect();
    assert_eq!(c.sizeup(&["cluster", "stop"]).unwrap(), 0);
    assert!(c.cluster().nodes.iter().all(|n| n.state == State::Stopped));
    assert!(eventually(Duration::from_secs(5), || pids.iter().all(|&p| !alive(p))), "servers still running");
    // Node 0 left last: it is the one safe to bootstrap the next start.
    let grastate = std::fs::read_to_string(c.path().join("cluster/node0/data/grastate.dat")).unwrap();
    assert!(grastate.contains("safe_to_bootstrap: 1"), "{grastate}");
}

#[test]
fn primary_and_two_replicas_replicate_with_lag_readable() {
    let c = ClusterHome::new();
    assert_eq!(c.start(&["--replicas", "2"]).unwrap(), 0);
    let cluster = c.cluster();
    let primary = cluster.primary().expect("node 0 is the primary");
    assert_eq!(primary.index, 0);
    let replicas: Vec<&Node> = cluster.replicas().collect();
    assert_eq!(replicas.len(), 2);
    for r in &replicas {
        let state = sql(r, &["SHOW SLAVE STATUS"]);
        assert_eq!(state.len(), 1, "replication is configured on {}", r.describe());
        assert_eq!(sql(r, &["SELECT @@read_only"]), vec!["1"]);
    }
    sql(
        primary,
        &[
            "CREATE DATABASE clustertest",
            "CREATE TABLE clustertest.t (id INT PRIMARY KEY, v INT)",
            "INSERT INTO clustertest.t VALUES (1, 7), (2, 8)",
        ],
    );
    for r in &replicas {
        let arrived = eventually(Duration::from_secs(30), || {
            sql(r, &["SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'clustertest'"]) == ["1"]
                && sql(r, &["SELECT SUM(v) FROM clustertest.t"]) == ["15"]
        });
        assert!(arrived, "the primary's rows did not reach {}", r.describe());
        let lag = runtime().block_on(cluster::replication_lag_s(r)).unwrap();
        assert!(lag.is_some_and(|l| l >= 0.0), "lag of {}: {lag:?}", r.describe());
    }
    assert_eq!(runtime().block_on(cluster::replication_lag_s(primary)).unwrap(), None, "a primary has no lag");
    let status = cluster.status();
    assert!(status.iter().all(|s| s.readiness.ready()), "{status:?}");
    // The replication logins carry no password sizeup kept: none in its state file.
    let state = std::fs::read_to_string(c.path().join("cluster.json")).unwrap();
    assert!(!state.to_ascii_lowercase().contains("password"), "{state}");
}

#[test]
fn lab_nodes_run_in_their_namespaces_under_the_quota_the_kernel_reports() {
    let c = ClusterHome::new();
    let netem = kernel_has_netem();
    assert_eq!(
        c.start(&[
            "--galera",
            "--nodes",
            "2",
            "--node-cpus",
            "0.3",
            "--link-delay",
            "0.2ms",
            "--link-jitter",
            "0.05ms"
        ])
        .unwrap(),
        0
    );
    let cluster = c.cluster();
    let tag = c.tag();
    for n in &cluster.nodes {
        let lab = n.lab.as_ref().expect("lab facts");
        let ns = lab.netns.as_deref().expect("a namespace per node (tests run as root)");
        assert_eq!(ns, format!("sizeup-{tag}-{}", n.index));
        // The server process itself is in that namespace and in the cgroup.
        let pid = n.pid.unwrap();
        assert_eq!(ip(&["netns", "identify", &pid.to_string()]).trim(), ns);
        let cg = lab.cgroup.as_deref().expect("a CPU cgroup per node");
        let procs = std::fs::read_to_string(cg.join("cgroup.procs")).unwrap();
        assert!(procs.lines().any(|l| l == pid.to_string()), "{pid} not in {}", cg.display());
        // The quota as the kernel's files hold it, and as sizeup recorded it.
        assert!((quota_from_files(cg) - 0.3).abs() < 1e-9);
        assert_eq!(lab.cpu_quota, Some(0.3));
        // The link delay as `tc qdisc show` in the namespace reports it.
        let out = Command::new("tc").args(["-n", ns, "qdisc", "show", "dev", "eth0"]).output().unwrap();
        let qdisc = String::from_utf8_lossy(&out.stdout).into_owned();
        if netem {
            assert!(qdisc.contains("netem") && qdisc.contains("delay 200us"), "{qdisc}");
            assert_eq!(lab.link_delay_ms, Some(0.2));
            assert_eq!(lab.link_jitter_ms, Some(0.05));
        } else {
            // This kernel has no netem: the delay is not there, and the facts say so.
            assert!(!qdisc.contains("netem"), "{qdisc}");
            assert_eq!(lab.link_delay_ms, None);
            assert!(lab.notes.iter().any(|l| l.contains("link delay 0.2 ms not applied")), "{:?}", lab.notes);
        }
        // Reachable over its namespace address only: no socket offered, loopback refused.
        assert!(n.socket.is_none());
        assert!(n.host.starts_with("10.213."), "{}", n.host);
        assert!(std::net::TcpStream::connect((n.host.as_str(), n.port)).is_ok());
        assert!(std::net::TcpStream::connect(("127.0.0.1", n.port)).is_err(), "{} answers on loopback", n.describe());
    }
    let label = cluster.label().unwrap();
    assert!(label.starts_with("emulated (node CPU quota 0.3"), "{label}");
    // Galera formed across the namespaces: nodes talk over their own addresses, and a
    // client in the root namespace writes to one and reads from the other over TCP.
    let members = sql(&cluster.nodes[1], &["SHOW GLOBAL STATUS LIKE 'wsrep_incoming_addresses'"]);
    assert!(members[0].contains(&cluster.nodes[0].host) && members[0].contains(&cluster.nodes[1].host), "{members:?}");
    sql(
        &cluster.nodes[0],
        &["CREATE DATABASE labtest", "CREATE TABLE labtest.t (id INT PRIMARY KEY)", "INSERT INTO labtest.t VALUES (5)"],
    );
    assert_eq!(sql(&cluster.nodes[1], &["SET SESSION wsrep_sync_wait = 1", "SELECT id FROM labtest.t"]), vec!["5"]);

    assert!(!lab_leftovers(&tag).is_empty());
    assert_eq!(c.sizeup(&["cluster", "stop"]).unwrap(), 0);
    assert_eq!(lab_leftovers(&tag), Vec::<String>::new(), "cluster stop left lab parts behind");
}

#[test]
fn a_test_that_panics_midway_leaves_nothing_behind() {
    let mut seen = None;
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let c = ClusterHome::new();
        assert_eq!(c.start(&["--replicas", "1", "--node-cpus", "0.2"]).unwrap(), 0);
        let pids: Vec<i32> = c.cluster().nodes.iter().filter_map(|n| n.pid).collect();
        seen = Some((c.tag(), pids, c.path().to_path_buf()));
        assert!(!lab_leftovers(&c.tag()).is_empty());
        panic!("a failing assertion midway");
    }));
    assert!(outcome.is_err());
    let (tag, pids, home) = seen.expect("the cluster started");
    assert_eq!(lab_leftovers(&tag), Vec::<String>::new());
    assert!(eventually(Duration::from_secs(5), || pids.iter().all(|&p| !alive(p))), "servers still running");
    assert!(!home.exists());
}

#[test]
fn a_node_that_cannot_start_is_named_and_nothing_stays() {
    let c = ClusterHome::new();
    // A server option no server knows: node 0 fails, after its namespace and cgroup exist.
    let err = c
        .start(&["--replicas", "1", "--node-cpus", "0.2", "--set", "no_such_server_option=1"])
        .unwrap_err()
        .to_string();
    assert!(err.contains("node 0"), "{err}");
    assert!(err.contains("unknown variable 'no_such_server_option=1'"), "the log's lines name the cause: {err}");
    assert_eq!(lab_leftovers(&c.tag()), Vec::<String>::new());
    assert!(c.cluster().nodes.iter().all(|n| n.state == State::Stopped));

    // Node 1's port taken: node 0 is up when node 1 fails, and is stopped again.
    let _taken = std::net::TcpListener::bind(("127.0.0.1", c.base_port + 1)).unwrap();
    let err = c.start(&["--replicas", "1"]).unwrap_err().to_string();
    assert!(err.contains(&format!("port {} on 127.0.0.1 is in use", c.base_port + 1)), "{err}");
    let after = c.cluster();
    assert_eq!(after.nodes.len(), 1, "node 1 never got as far as its datadir");
    let log = std::fs::read_to_string(&after.nodes[0].error_log).unwrap();
    assert!(log.contains("ready for connections"), "node 0 had started");
    assert_eq!(after.nodes[0].state, State::Stopped, "node 0 was left running");
}

#[test]
fn cluster_flags_are_checked_before_anything_starts() {
    let c = ClusterHome::new();
    for (args, says) in [
        (&["cluster", "start"][..], "say which cluster"),
        (&["cluster", "start", "--galera"][..], "--galera needs --nodes"),
        (&["cluster", "start", "--nodes", "3"][..], "add --galera"),
        (&["cluster", "start", "--galera", "--nodes", "0"][..], "from 1 to 32"),
        (&["cluster", "start", "--galera", "--nodes", "2", "--replicas", "1"][..], "choose one"),
        (&["cluster", "start", "--replicas", "1", "--link-delay", "fast"][..], "not a duration"),
        (&["cluster", "start", "--replicas", "1", "--link-jitter", "1ms"][..], "needs --link-delay"),
        (&["cluster", "start", "--replicas", "2", "--node-cpus", "64"][..], "more than this host's"),
        (&["cluster", "start", "--replicas", "1", "--base-port", "65500"][..], "--base-port 65500"),
    ] {
        match c.sizeup(args) {
            Err(e) if e.is_usage() => assert!(e.to_string().contains(says), "{args:?}: {e}"),
            other => panic!("{args:?}: {other:?}"),
        }
    }
    assert!(Cluster::load(c.path()).unwrap().is_none(), "nothing was started or remembered");
}

/// A command line's words.
fn words(line: &str) -> Vec<&str> {
    line.split_whitespace().collect()
}

/// The study engine on a real cluster: `sizeup scale-out` over 1..3 Galera nodes
/// resizes the cluster per level, stores e(N) for each count, counts certification
/// conflicts, and `sizeup size --efficiency measured` sizes from it.
#[test]
fn a_scale_out_study_over_one_to_three_galera_nodes_stores_e_of_n() {
    let c = ClusterHome::new();
    assert_eq!(c.start(&["--galera", "--nodes", "3"]).unwrap(), 0);
    let code = c.sizeup(&words("scale-out oltp_read_write --nodes 1..3 --threads-per-node 2 --step-time 2 --warmup 1 --tables 1 --table-size 1000")).unwrap();
    if !common::answered(code, &c.path().join("results.db"), "") {
        return;
    }
    let store = sizeup::store::Store::open(&c.path().join("results.db")).unwrap();
    let row = store.list_studies().unwrap().pop().unwrap();
    assert_eq!((row.kind.as_str(), row.status.as_str()), ("scale-out", "completed"));
    let series: Vec<sizeup::study::figures::SeriesResult> =
        serde_json::from_value(row.result.clone().unwrap()["series"].clone()).unwrap();
    let e = &series[0].efficiency;
    assert_eq!(e.iter().map(|m| m.nodes).collect::<Vec<_>>(), [1, 2, 3]);
    assert_eq!(e[0].e, 1.0);
    for m in e {
        assert!(m.e > 0.0 && m.low <= m.e && m.e <= m.high, "{m:?}");
    }
    for (step, n) in row.steps.iter().zip(1..) {
        // One client group per node, each against its own node, the cluster n nodes big.
        let runs: Vec<_> = step.runs.iter().map(|&id| store.load_run(id).unwrap()).collect();
        assert_eq!(runs.len(), n);
        let ports: std::collections::BTreeSet<String> =
            runs.iter().map(|r| format!("{:?}{}", r.config.target.socket, r.config.target.port)).collect();
        assert_eq!(ports.len(), n);
        for r in &runs {
            assert_eq!(r.config.server.variable("wsrep_on").as_deref(), Some("ON"));
            assert!(r.summary.as_ref().unwrap().observed.conflicts.is_some(), "Galera conflicts are counted");
            // The node's own server process was watched.
            assert!(r.summary.as_ref().unwrap().observed.os.as_ref().unwrap().server_cores.is_some());
        }
    }
    // Sizing from it: a target one node carries needs one server, at e(1) = 1.
    let sid = format!("s{}", row.id);
    let one = series[0].levels[0].throughput.mean;
    let target = format!("{:.0}", one * 0.9);
    assert_eq!(c.sizeup(&["size", "--target-tps", &target, "--from", &sid, "--efficiency", "measured"]).unwrap(), 0);
}

/// The read/write split on a primary and two replicas: the replicas take the reads
/// (their own statement counters say so), the primary the writes, and each replica's
/// lag is sampled every interval.
#[test]
fn a_read_write_split_sends_reads_to_the_replicas_and_records_lag() {
    let c = ClusterHome::new();
    assert_eq!(c.start(&["--replicas", "2"]).unwrap(), 0);
    let cluster = c.cluster();
    let selects = |n: &Node| sql(n, &["SHOW GLOBAL STATUS LIKE 'Com_select'"])[0].parse::<u64>().unwrap();
    let counters =
        |name: &str, n: &Node| sql(n, &[&format!("SHOW GLOBAL STATUS LIKE '{name}'")])[0].parse::<u64>().unwrap();
    let before: Vec<u64> = cluster.nodes.iter().map(selects).collect();
    let updates_before = counters("Com_update", &cluster.nodes[0]);
    let code = c.sizeup(&words("scale-out oltp_read_only --nodes 3 --route split --threads-per-node 2 --write-threads 1 --step-time 3 --warmup 1 --tables 1 --table-size 1000 --stop-when lag>30s")).unwrap();
    if !common::answered(code, &c.path().join("results.db"), "") {
        return;
    }
    let cluster = c.cluster();
    let after: Vec<u64> = cluster.nodes.iter().map(selects).collect();
    // oltp_read_only runs 14 SELECTs per transaction: thousands on each replica.
    for i in 1..3 {
        assert!(after[i] - before[i] > 1000, "replica {i}: {} -> {}", before[i], after[i]);
    }
    assert!(counters("Com_update", &cluster.nodes[0]) > updates_before, "writes went to the primary");
    let store = sizeup::store::Store::open(&c.path().join("results.db")).unwrap();
    let row = store.list_studies().unwrap().pop().unwrap();
    let runs: Vec<_> = row.steps[0].runs.iter().map(|&id| store.load_run(id).unwrap()).collect();
    let workloads: Vec<&str> = runs.iter().map(|r| r.config.workload.as_str()).collect();
    assert_eq!(workloads.iter().filter(|w| **w == "oltp_write_only").count(), 1);
    assert_eq!(workloads.iter().filter(|w| **w == "oltp_read_only").count(), 2);
    for r in runs.iter().filter(|r| r.config.workload == "oltp_read_only") {
        let s = r.summary.as_ref().unwrap();
        assert!(s.observed.max_lag_s.is_some_and(|l| l >= 0.0), "lag recorded: {:?}", s.observed.max_lag_s);
        assert!(r.intervals.iter().any(|iv| iv.lag_s.is_some()), "lag sampled per interval");
    }
    // split_total_is_labelled_as_both_workloads: the step adds the primary's write
    // transactions to the replicas' reads, and the study said "oltp_read_only carried".
    let spec: sizeup::study::spec::StudySpec = serde_json::from_value(row.spec.clone()).unwrap();
    let series: Vec<sizeup::study::figures::SeriesResult> =
        serde_json::from_value(row.result.clone().unwrap()["series"].clone()).unwrap();
    let tables = sizeup::report::study_tables(&spec, &series);
    assert!(
        tables.contains("oltp_read_only on the replicas (the primary at 1 node) + oltp_write_only on the primary"),
        "{tables}"
    );
}

/// Where a test reaches a node as a `--target`: its socket, else host:port.
fn place(n: &Node) -> String {
    match &n.socket {
        Some(s) => s.display().to_string(),
        None => format!("{}:{}", n.host, n.port),
    }
}

/// Round robin per connection on a 2-node Galera cluster: a scale-out study with
/// `--route round-robin` runs one client group per step and stores e(N); then
/// `sizeup run --target A --target B` with 4 connections lands 2 on each node, and
/// both nodes' own statement counters show they served the reads.
#[test]
fn round_robin_deals_connections_over_galera_nodes_and_stores_e_of_n() {
    let c = ClusterHome::new();
    assert_eq!(c.start(&["--galera", "--nodes", "2"]).unwrap(), 0);
    let code = c.sizeup(&words("scale-out oltp_read_write --nodes 1..2 --route round-robin --threads-per-node 2 --step-time 2 --warmup 1 --tables 1 --table-size 1000")).unwrap();
    if !common::answered(code, &c.path().join("results.db"), "") {
        return;
    }
    let store = sizeup::store::Store::open(&c.path().join("results.db")).unwrap();
    let row = store.list_studies().unwrap().pop().unwrap();
    assert_eq!((row.kind.as_str(), row.status.as_str()), ("scale-out", "completed"));
    assert_eq!(row.spec["scale"]["route"], "round-robin", "the study records its route");
    let series: Vec<sizeup::study::figures::SeriesResult> =
        serde_json::from_value(row.result.clone().unwrap()["series"].clone()).unwrap();
    let e = &series[0].efficiency;
    // e(N) from the levels that count (a level other programs starved is none).
    let counted: Vec<u32> = series[0].capacity().map(|l| l.level).collect();
    let nodes: Vec<u32> = e.iter().map(|m| m.nodes).collect();
    assert_eq!(nodes, if counted.contains(&1) { counted.clone() } else { vec![] }, "{series:?}");
    if let Some(two) = e.iter().find(|m| m.nodes == 2) {
        assert!(two.e > 0.0 && two.low <= two.e && two.e <= two.high, "{two:?}");
    }
    // One client group per step: at 2 nodes its 4 connections dealt 2 + 2.
    let runs: Vec<_> =
        row.steps.iter().map(|s| s.runs.iter().map(|&id| store.load_run(id).unwrap()).collect::<Vec<_>>()).collect();
    assert_eq!(runs.iter().map(Vec::len).collect::<Vec<_>>(), [1, 1]);
    assert!(runs[0][0].config.round_robin.is_empty(), "one node: a plain run");
    let two = &runs[1][0];
    assert_eq!(two.config.run.threads, 4);
    assert_eq!(two.config.round_robin.len(), 2, "the run records every node");
    let s = two.summary.as_ref().unwrap();
    assert_eq!(s.nodes.iter().map(|n| n.connections).collect::<Vec<_>>(), [2, 2]);
    for n in &s.nodes {
        assert!(n.transactions > 0, "{n:?}");
        assert!(n.conflicts.is_some(), "each node's Galera conflicts are counted: {n:?}");
        assert!(n.server_cores.is_some(), "each node's server process is watched: {n:?}");
    }
    assert!(s.observed.conflicts.is_some());

    // `sizeup run` over both nodes, on the data the study loaded.
    let cluster = c.cluster();
    let selects = |n: &Node| sql(n, &["SHOW GLOBAL STATUS LIKE 'Com_select'"])[0].parse::<u64>().unwrap();
    let before: Vec<u64> = cluster.nodes.iter().map(selects).collect();
    let json = c.path().join("rr.json").display().to_string();
    let (a, b) = (place(&cluster.nodes[0]), place(&cluster.nodes[1]));
    let line = format!(
        "run oltp_read_only --target {a} --target {b} --threads 4 --time 2 --tables 1 --table-size 1000 --json {json}"
    );
    assert_eq!(c.sizeup(&words(&line)).unwrap(), 0);
    let after: Vec<u64> = cluster.nodes.iter().map(selects).collect();
    for i in 0..2 {
        // oltp_read_only runs 14 SELECTs per transaction.
        assert!(after[i] - before[i] > 100, "node {i}: {} -> {}", before[i], after[i]);
    }
    let doc: sizeup::result::RunDocument = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(doc.config.round_robin.len(), 2);
    let nodes = &doc.summary.as_ref().unwrap().nodes;
    assert_eq!(nodes.iter().map(|n| n.connections).collect::<Vec<_>>(), [2, 2]);
    assert!(nodes.iter().all(|n| n.transactions > 0), "{nodes:?}");
}

/// Round robin over a primary and a replica: a writing workload is refused before
/// anything runs, with the hint to split reads and writes; a read-only one runs on
/// both, with the replica's lag sampled.
#[test]
fn round_robin_over_a_replica_reads_only() {
    let c = ClusterHome::new();
    assert_eq!(c.start(&["--replicas", "1"]).unwrap(), 0);
    let refused = |line: &str| match c.sizeup(&words(line)) {
        Err(e) if e.is_usage() => e.to_string(),
        other => panic!("{line}: {other:?}"),
    };
    let m = refused("scale-out oltp_read_write --nodes 1..2 --route round-robin --threads-per-node 2 --step-time 2 --warmup 1 --tables 1 --table-size 1000");
    assert!(m.contains("is a replica") && m.contains("--route split"), "{m}");
    assert!(!m.contains('\n'), "one line: {m}");
    // every_node_and_split_routes_never_write_to_a_replica: the default route ran
    // oltp_read_write on each replica (root passes read_only), and split ran a writing
    // series workload on them; the replicas then held other data than the primary while
    // reporting lag 0, and an efficiency was stored.
    let m = refused("scale-out oltp_read_write --nodes 1..2 --threads-per-node 2 --step-time 2 --warmup 1 --tables 1 --table-size 1000");
    assert!(m.contains("node1/mysqld.sock is a replica") && m.contains("every-node"), "{m}");
    let m = refused("scale-out oltp_read_write --nodes 1..2 --route split --threads-per-node 2 --step-time 2 --warmup 1 --tables 1 --table-size 1000");
    assert!(m.contains("is a replica") && m.contains("read-only"), "{m}");
    assert!(
        sizeup::store::Store::open(&c.path().join("results.db")).map_or(true, |s| s.list_studies().unwrap().is_empty()),
        "nothing stored for a refused study"
    );
    let code = c.sizeup(&words("scale-out oltp_read_only --nodes 2 --route round-robin --threads-per-node 2 --step-time 2 --warmup 1 --tables 1 --table-size 1000")).unwrap();
    if !common::answered(code, &c.path().join("results.db"), "") {
        return;
    }
    let store = sizeup::store::Store::open(&c.path().join("results.db")).unwrap();
    let row = store.list_studies().unwrap().pop().unwrap();
    assert_eq!(row.status, sizeup::store::Status::Completed);
    let run = store.load_run(row.steps[0].runs[0]).unwrap();
    let s = run.summary.as_ref().unwrap();
    assert_eq!(s.nodes.len(), 2);
    assert!(s.nodes.iter().all(|n| n.transactions > 0), "{:?}", s.nodes);
    assert!(s.nodes[1].max_lag_s.is_some_and(|l| l >= 0.0), "the replica's lag: {:?}", s.nodes[1]);
    assert_eq!(s.nodes[0].max_lag_s, None, "a primary has no lag");
    assert!(run.intervals.iter().any(|iv| iv.lag_s.is_some()), "lag sampled per interval");
    // `sizeup run` refuses the same, now that the data is there.
    let cluster = c.cluster();
    let (a, b) = (place(&cluster.nodes[0]), place(&cluster.nodes[1]));
    let m = refused(&format!("run oltp_read_write --target {a} --target {b} --tables 1 --table-size 1000 --time 1"));
    assert!(m.contains("node 1") && m.contains("--route split"), "{m}");
}

/// failed_resize_stopped_the_whole_cluster: a node that could not start in a resize (a
/// Galera node killed while it joined; here, its port held by another program) made
/// `cluster start` stop every node, the ones that had been running and serving too.
#[test]
fn a_failed_resize_leaves_the_nodes_that_ran_running() {
    let c = ClusterHome::new();
    assert_eq!(c.start(&["--replicas", "1"]).unwrap(), 0);
    let held = std::net::TcpListener::bind(("127.0.0.1", c.base_port + 2)).unwrap();
    let e = c.start(&["--replicas", "2"]).unwrap_err().to_string();
    assert!(e.contains(&(c.base_port + 2).to_string()), "{e}");
    let k = c.cluster();
    assert_eq!(k.running().map(|n| n.index).collect::<Vec<_>>(), [0, 1], "{:?}", k.nodes);
    drop(held);
    // The resize goes through once the port is free.
    assert_eq!(c.start(&["--replicas", "2"]).unwrap(), 0);
    assert_eq!(c.cluster().running().count(), 3);
}
