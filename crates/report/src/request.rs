//! Raw options, validated once into what the rest of sizeup trusts: a [`RunRequest`]
//! for a measured run (from `sizeup run`'s command line and from every study step
//! alike) and [`ServerSettings`] for managed instances. Every message here says what
//! was wrong and what to do instead.
//!
//! Pure: nothing here talks to a server or the store.

use crate::error::Invalid;
use crate::exec::RunSpec;
use crate::options::{RunOptions, TargetArgs};
use crate::server::ServerSettings;
use crate::workload::{self, Workload};
use std::path::PathBuf;
use std::time::Duration;

/// One measured run, validated: what the runner needs and nothing it must re-check.
pub struct RunRequest {
    pub workload: Box<dyn Workload>,
    /// The options it was built from: agents build it again from them.
    pub options: crate::options::WorkloadArgs,
    /// Where the server is (resolved by the runner: a named server or a managed
    /// instance); with several, the connections are dealt round robin over them and
    /// the first holds the data. Never empty.
    pub targets: Vec<TargetArgs>,
    pub spec: RunSpec,
    pub output: Output,
    /// How missing tables are loaded (`--load-method`).
    pub load_method: crate::options::LoadMethod,
    /// `--write-foreign-tables`: a writing run may change tables sizeup did not create.
    pub write_foreign_tables: bool,
    /// Runs that must start measuring together (the client groups of a scale step).
    pub start_line: Option<std::sync::Arc<crate::exec::StartLine>>,
}

/// What a run prints and writes besides the store.
#[derive(Clone, Debug, Default)]
pub struct Output {
    /// Interval lines while it runs (`--report-interval` above 0).
    pub interval_lines: bool,
    /// A latency histogram after the summary (`--histogram`).
    pub histogram: bool,
    /// The whole result as JSON (`--json`).
    pub json: Option<PathBuf>,
    /// Errors only (sysbench's `--verbosity` below 3).
    pub quiet: bool,
    /// sysbench's output, for a command line in sysbench's order: its header, interval
    /// lines and closing block alone (`sizeup runs show` has sizeup's summary).
    pub sysbench: bool,
    /// `--rand-seed` as given (0: none), which sysbench's header names.
    pub rand_seed: u64,
}

/// The run `workload` with `o` describes, checked.
pub fn run_request(workload: &str, o: &RunOptions) -> Result<RunRequest, Invalid> {
    let workload = workload::build(workload, &o.workload)?;
    let spec = run_spec(o)?;
    workload.check_run(&spec)?;
    check_database(o.target.database.as_deref())?;
    Ok(RunRequest {
        workload,
        options: o.workload.clone(),
        targets: targets(o)?,
        spec,
        load_method: o.load_method,
        write_foreign_tables: o.write_foreign_tables,
        output: Output {
            interval_lines: o.report_interval > 0.0,
            histogram: o.histogram,
            json: o.json.clone(),
            quiet: o.verbosity < 3,
            sysbench: false,
            rand_seed: o.workload.oltp.rand_seed,
        },
        start_line: None,
    })
}

impl RunRequest {
    /// The first server: where the data is checked and loaded.
    pub fn target(&self) -> &TargetArgs {
        &self.targets[0]
    }
}

/// The servers a run's connections go to: `--target` list, else the one the target
/// options name (or the managed instance).
fn targets(o: &RunOptions) -> Result<Vec<TargetArgs>, Invalid> {
    if o.targets.is_empty() {
        return Ok(vec![o.target.clone()]);
    }
    if o.target.host.is_some() || o.target.port.is_some() || o.target.socket.is_some() {
        return Err(Invalid::Value(
            "give the servers either as --target HOST:PORT (repeatable) or as --host/--port/--socket".into(),
        ));
    }
    Ok(o.targets.iter().map(|t| o.target.at(t)).collect())
}

/// The server's own schemas: never a benchmark's database.
pub const SYSTEM_SCHEMAS: [&str; 4] = ["mysql", "sys", "information_schema", "performance_schema"];

/// A database name the server can take (sysbench's `sbtest` when none is given).
pub fn check_database(name: Option<&str>) -> Result<(), Invalid> {
    match name {
        Some(d) if d.is_empty() || d.len() > 64 => {
            Err(Invalid::Value(format!("--database '{d}' is not a database name")))
        }
        Some(d) if d.contains('\\') => Err(Invalid::Value(format!(
            "--database '{d}' holds a backslash, which servers read differently by sql_mode: give a name without one"
        ))),
        Some(d) if SYSTEM_SCHEMAS.iter().any(|s| s.eq_ignore_ascii_case(d)) => Err(Invalid::Value(format!(
            "--database {d} is a system schema of the server; sizeup never loads into or runs on it: \
             give a database of its own, e.g. --database sbtest"
        ))),
        _ => Ok(()),
    }
}

/// A seed from the options, or from the clock when 0 (as sysbench's --rand-seed=0).
pub fn seed(rand_seed: u64) -> u64 {
    if rand_seed != 0 {
        return rand_seed;
    }
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(1)
}

/// The longest duration any time option takes: one year (`--time`, `--warmup`, a
/// study's `step_time` and `warmup`). Beyond it a typo, not a measurement.
pub const MAX_SECONDS: f64 = 366.0 * 86_400.0;
/// The longest `--report-interval` and `--delay` (in seconds): one hour.
pub const MAX_INTERVAL_SECONDS: f64 = 3_600.0;
/// The highest `--rate`: a million arrivals a second, far above what one client host
/// can start, and low enough that the arrival schedule stays cheap.
pub const MAX_RATE: f64 = 1_000_000.0;
/// The most connections one run opens (`--threads`, `--users`).
pub const MAX_THREADS: u32 = 10_000;

pub use crate::error::shown;

/// Seconds from an option, 0 to `max`; the message names the option and the range.
pub fn seconds_in(name: &str, v: f64, max: f64) -> Result<Duration, Invalid> {
    if !v.is_finite() || !(0.0..=max).contains(&v) {
        return Err(Invalid::Value(format!("{name} must be between 0 and {max} seconds (got {})", shown(v))));
    }
    Ok(Duration::from_secs_f64(v))
}

/// `--statement-timeout` (a run's and a prepare's): at least a second.
pub fn statement_timeout(v: f64) -> Result<Duration, Invalid> {
    let d = seconds_in("--statement-timeout", v, MAX_SECONDS)?;
    if d < Duration::from_secs(1) {
        return Err(Invalid::Value(format!("--statement-timeout must be at least 1 second (got {v})")));
    }
    Ok(d)
}

fn seconds(name: &str, v: f64) -> Result<Duration, Invalid> {
    seconds_in(&format!("--{name}"), v, MAX_SECONDS)
}

/// From this many CPUs on, a closed loop gets one client thread per connection.
pub const BIG_HOST_CPUS: u32 = 8;

/// OS threads that drive `connections` when the user names none. Measured on 2 CPUs
/// (oltp_point_select, docs/PERFORMANCE.md):
/// - Open loop: one per connection, because a lone thread woken from epoll for each
///   response added ~0.7 ms to every transaction at low load (p50 1.59 ms against
///   0.81 ms at 500 tps, 8 connections).
/// - Closed loop, up to 2 connections per CPU: one per connection up to one per CPU.
///   A lone client thread serving a few connections leaves server CPUs idle while it
///   works (2 connections: 49k tps against 107k with 2 threads, 3: 69k / 91k, 4: 78k /
///   92k), and an idle virtual CPU is slow to wake.
/// - Closed loop, more connections: one per 4 CPUs, the cheapest under load (8
///   connections: 107k tps at 3.7 us client CPU per query against 103k at 4.8 us with
///   2 threads; 6 connections: 103k against 93k), but at least one per 16 connections
///   up to one per CPU. A lone thread serving 32 or more is a serial stage the server
///   waits on (point select, 32 connections: 28-32k tps with the host 3.5-7 % idle and
///   the server paying 52-58 us per query, against 35-39k, 0.1-0.4 % idle and 43-49 us
///   with 2 threads, at 7.8-8.4 us client CPU per query either way; 64: 29k against
///   40k); up to 24 a second thread only costs (16: 7.7 against 10.5 us, same tps).
///
/// On 8 CPUs or more, closed loops too get one thread per connection (up to 256): on 16
/// CPUs (issue 50, docs/PERFORMANCE.md) the rule above gave 4 threads to 64 connections
/// and 0.85x sysbench's point-select tps; 16 threads gave 0.93-0.96x; one per connection
/// 1.04-1.07x at 5.3 us client CPU per transaction against 5.2 us with 4 threads. There
/// the server's CPUs outnumber what one client thread can feed, and the scheduler shares
/// a saturated host by runnable thread, as it does with sysbench's one thread each.
pub fn default_client_threads(connections: u32, cpus: u32, open_loop: bool) -> u32 {
    if open_loop || cpus >= BIG_HOST_CPUS {
        connections.min(256)
    } else if connections <= 2 * cpus {
        connections.min(cpus)
    } else {
        cpus.div_ceil(4).max(connections / 16).min(cpus)
    }
    .max(1)
}

/// The worker loop's parameters from the run options (`--users` stands for `--threads`).
pub fn run_spec(a: &RunOptions) -> Result<RunSpec, Invalid> {
    let (threads, flag) = match a.users {
        // --threads left at its default of 1 cannot be told from one given as 1.
        Some(u) if a.threads != 1 && a.threads != u => {
            return Err(Invalid::Value(format!("--users {u} and --threads {} disagree: give one of them", a.threads)))
        }
        Some(u) => (u, "--users"),
        None => (a.threads, "--threads"),
    };
    if threads == 0 {
        return Err(Invalid::Value(format!("{flag} must be at least 1")));
    }
    if threads > MAX_THREADS {
        return Err(Invalid::Value(format!(
            "{flag} {threads} is more than sizeup opens ({MAX_THREADS} connections at most)"
        )));
    }
    let time = seconds("time", a.time)?;
    if time.is_zero() && a.events == 0 {
        return Err(Invalid::Value("with --time 0 the run needs --events N to end".into()));
    }
    if !a.rate.is_finite() || !(0.0..=MAX_RATE).contains(&a.rate) {
        return Err(Invalid::Value(format!(
            "--rate must be transactions per second between 0 (as fast as possible) and {MAX_RATE} (got {})",
            shown(a.rate)
        )));
    }
    let report = seconds_in("--report-interval", a.report_interval, MAX_INTERVAL_SECONDS)?;
    let interval = if report.is_zero() { Duration::from_secs(1) } else { report };
    if interval < Duration::from_millis(100) {
        return Err(Invalid::Value("--report-interval must be at least 0.1 s".into()));
    }
    let warmup = seconds("warmup", a.warmup)?;
    if !time.is_zero() && warmup >= time {
        return Err(Invalid::Value(format!(
            "--warmup {} s leaves nothing to measure in a --time {} s run; make it shorter",
            a.warmup, a.time
        )));
    }
    if !a.session.delay.is_finite() || !(0.0..=MAX_INTERVAL_SECONDS * 1000.0).contains(&a.session.delay) {
        return Err(Invalid::Value(format!(
            "--delay must be between 0 and {} milliseconds (got {})",
            MAX_INTERVAL_SECONDS * 1000.0,
            shown(a.session.delay)
        )));
    }
    let delay = Duration::from_secs_f64(a.session.delay / 1000.0);
    let server_lost_timeout = seconds_in("--server-lost-timeout", a.server_lost_timeout, MAX_INTERVAL_SECONDS)?;
    let statement_timeout = statement_timeout(a.statement_timeout)?;
    let cpus = std::thread::available_parallelism().map(|n| n.get() as u32).unwrap_or(1);
    let default_threads = default_client_threads(threads, cpus, a.rate > 0.0);
    if a.session.client_threads == Some(0) {
        return Err(Invalid::Value("--client-threads must be at least 1 (leave it out for the default)".into()));
    }
    let client_threads = a.session.client_threads.unwrap_or(default_threads);
    if !(a.percentile > 0.0 && a.percentile <= 100.0) {
        return Err(Invalid::Value(format!("--percentile must be above 0 and at most 100 (got {})", a.percentile)));
    }
    if a.forced_shutdown != "off" && !a.forced_shutdown.parse::<f64>().is_ok_and(|v| v.is_finite() && v >= 0.0) {
        return Err(Invalid::Value(format!(
            "--forced-shutdown {}: give seconds (0 or more) or off",
            a.forced_shutdown
        )));
    }
    if a.db_driver != "mysql" {
        return Err(Invalid::Value(format!(
            "--db-driver {}: sizeup speaks the MySQL protocol only (MySQL, MariaDB, Percona Server)",
            a.db_driver
        )));
    }
    Ok(RunSpec {
        threads,
        run_connections: None,
        time: (!time.is_zero()).then_some(time),
        events: (a.events > 0).then_some(a.events),
        warmup,
        rate: (a.rate > 0.0).then_some(a.rate),
        interval,
        delay: (!delay.is_zero()).then_some(delay),
        client_threads,
        seed: seed(a.workload.oltp.rand_seed),
        server_metrics: None,
        power: power(a.power.power_model.as_deref(), a.power.watts)?,
        percentile: a.percentile,
        retry_on: a.session.mysql_ignore_errors.parse()?,
        server_lost_timeout,
        statement_timeout,
        replica: false,
        settle: None,
    })
}

pub use crate::monitor::os::{power, MAX_WATTS};

/// Managed instances' settings from `server start`'s options or a study's `[server]`.
/// A size as server options take it: digits, then K, M, G or T (or none: bytes).
pub fn is_size(v: &str) -> bool {
    let digits = v.strip_suffix(['K', 'M', 'G', 'T', 'k', 'm', 'g', 't']).unwrap_or(v);
    !digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit())
}

pub fn server_settings(a: &crate::options::ServerArgs) -> Result<ServerSettings, Invalid> {
    if a.flush_log_at_trx_commit > 2 {
        return Err(Invalid::Value("--flush-log-at-trx-commit must be 0, 1 or 2".into()));
    }
    for (flag, v) in [("buffer-pool", &a.buffer_pool), ("log-file-size", &a.log_file_size)] {
        if !is_size(v) {
            return Err(Invalid::Value(format!("--{flag} '{v}' is not a size; write it like 512M or 2G")));
        }
    }
    let mut extra = Vec::new();
    for s in &a.set {
        let (k, v) = s.split_once('=').ok_or_else(|| {
            Invalid::Value(format!("--set '{s}' needs the form name=value, e.g. --set innodb_io_capacity=2000"))
        })?;
        let k = k.trim();
        if k.is_empty() || !k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') || v.contains('\n') {
            return Err(Invalid::Value(format!("--set '{s}': '{k}' is not a server option name")));
        }
        managed_option(k, v.trim()).map_err(|why| Invalid::Value(format!("--set '{s}': {why}")))?;
        extra.push((k.to_string(), v.trim().to_string()));
    }
    if let Some(b) = &a.bind_address {
        b.parse::<std::net::IpAddr>().map_err(|_| {
            Invalid::Value(format!("--bind-address '{b}' is not an IP address; give e.g. 0.0.0.0 or 10.0.0.5"))
        })?;
    }
    Ok(ServerSettings {
        buffer_pool: a.buffer_pool.clone(),
        log_file_size: a.log_file_size.clone(),
        flush_log_at_trx_commit: a.flush_log_at_trx_commit,
        max_connections: a.max_connections,
        extra,
        bind_address: a.bind_address.clone(),
    })
}

/// Options sizeup writes itself into an instance's option file: where its files and
/// endpoints are, and who it runs as (set_may_not_move_what_sizeup_manages: `--set
/// datadir=/elsewhere` wrote outside the state directory; `--set socket=...` left
/// `server start` waiting 120 s on the socket sizeup knows).
const MANAGED_OPTIONS: [&str; 10] = [
    "datadir",
    "socket",
    "port",
    "bind_address",
    "pid_file",
    "log_error",
    "tmpdir",
    "user",
    "basedir",
    "skip_networking",
];

/// Options that place files the server writes: a path in them would put the instance's
/// files outside its directory.
const FILE_PLACING_OPTIONS: [&str; 12] = [
    "innodb_data_home_dir",
    "innodb_log_group_home_dir",
    "innodb_undo_directory",
    "innodb_tmpdir",
    "innodb_data_file_path",
    "log_bin",
    "log_bin_index",
    "relay_log",
    "relay_log_index",
    "general_log_file",
    "slow_query_log_file",
    "log_basename",
];

/// Refuses a `--set` of what sizeup manages. Names as the server reads them: `-` and `_`
/// alike, any case, and a unique prefix (mariadbd takes `--sock` for `--socket`).
fn managed_option(name: &str, value: &str) -> Result<(), Invalid> {
    let n = name.to_ascii_lowercase().replace('-', "_");
    // Any prefix: mariadbd takes `soc` for `socket` and `pid` for `pid_file` (one it
    // finds ambiguous it refuses anyway).
    let named = |full: &str| !n.is_empty() && full.starts_with(&n);
    if let Some(m) = MANAGED_OPTIONS.iter().find(|m| named(m)) {
        return Err(Invalid::Value(format!(
            "sizeup sets {m} itself (an instance's files, socket and port stay in its state directory); \
             leave it out, or use --home, --base-port"
        )));
    }
    if let Some(n) = FILE_PLACING_OPTIONS.iter().find(|m| named(m)).filter(|_| value.contains('/')) {
        return Err(Invalid::Value(format!(
            "{n} would place the server's files at a path; sizeup keeps an instance's files in its own \
             directory: give a plain name, or leave it out"
        )));
    }
    Ok(())
}

/// `cluster start`'s flags, validated into the cluster to start.
pub fn cluster_spec(a: &crate::options::ClusterStartArgs) -> Result<crate::server::cluster::ClusterSpec, Invalid> {
    use crate::server::cluster::{ClusterKind, ClusterSpec, MAX_NODES};
    let (kind, nodes) = match (a.galera, a.nodes, a.replicas) {
        (true, Some(n), None) if (1..=MAX_NODES).contains(&n) => (ClusterKind::Galera, n),
        (true, Some(n), None) => {
            return Err(Invalid::Value(format!("--nodes must be from 1 to {MAX_NODES} (got {n})")))
        }
        (true, None, None) => return Err(Invalid::Value("--galera needs --nodes N (1 to 32)".into())),
        (false, None, Some(r)) if r < MAX_NODES => (ClusterKind::Replicas, r + 1),
        (false, None, Some(r)) => {
            return Err(Invalid::Value(format!("--replicas must be from 0 to {} (got {r})", MAX_NODES - 1)))
        }
        (false, Some(_), _) => {
            return Err(Invalid::Value("--nodes is the size of a Galera cluster: add --galera".into()))
        }
        (true, _, Some(_)) => return Err(Invalid::Value("choose one: --galera --nodes N, or --replicas N".into())),
        (false, None, None) => {
            return Err(Invalid::Value("say which cluster: --galera --nodes N, or --replicas N".into()))
        }
    };
    if let Some(p) = a.base_port {
        let span = crate::server::cluster::PORT_SPAN;
        if p < crate::server::MIN_PORT || p as u32 + span > 65536 {
            return Err(Invalid::Value(format!(
                "--base-port {p}: a cluster uses {span} ports from its base, so it must be from {} to {}",
                crate::server::MIN_PORT,
                65536 - span
            )));
        }
    }
    let l = &a.lab;
    let lab = if l.lab || l.node_cpus.is_some() || l.link_delay.is_some() || l.link_jitter.is_some() {
        if !(l.client_cpus.is_finite() && l.client_cpus >= 0.0) {
            return Err(Invalid::Value(format!("--client-cpus {}: a number of cores, 0 or more", l.client_cpus)));
        }
        let spec = crate::server::lab::LabSpec {
            node_cpus: l.node_cpus,
            link_delay_ms: l
                .link_delay
                .as_deref()
                .map(|d| crate::server::lab::parse_ms("link-delay", d))
                .transpose()?,
            link_jitter_ms: l
                .link_jitter
                .as_deref()
                .map(|d| crate::server::lab::parse_ms("link-jitter", d))
                .transpose()?,
            client_cpus: l.client_cpus,
        };
        spec.check(nodes, crate::server::lab::host_cpus())?;
        Some(spec)
    } else {
        None
    };
    Ok(ClusterSpec { kind, nodes, settings: server_settings(&a.server)?, base_port: a.base_port, lab })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::ServerArgs;
    use clap::Parser;

    #[test]
    fn targets_are_a_list_or_the_host_options_not_both() {
        let mut o =
            RunOptions { targets: vec!["db1:3307".into(), "/tmp/b.sock".into(), "db3".into()], ..Default::default() };
        o.target.user = Some("bench".into());
        let t = targets(&o).unwrap();
        assert_eq!((t[0].host.as_deref(), t[0].port, t[0].user.as_deref()), (Some("db1"), Some(3307), Some("bench")));
        assert_eq!((t[1].socket.as_deref(), t[1].host.as_deref()), (Some(std::path::Path::new("/tmp/b.sock")), None));
        assert_eq!((t[2].host.as_deref(), t[2].port), (Some("db3"), None));
        o.target.port = Some(3306);
        assert!(matches!(targets(&o), Err(Invalid::Value(m)) if m.contains("either as --target")));
        // No list: the one server the target options name.
        assert_eq!(targets(&RunOptions::default()).unwrap(), vec![TargetArgs::default()]);
    }

    #[derive(Parser)]
    struct Run {
        #[command(flatten)]
        o: RunOptions,
    }

    fn options(args: &[&str]) -> RunOptions {
        let mut v = vec!["run"];
        v.extend_from_slice(args);
        Run::try_parse_from(v).unwrap().o
    }

    #[test]
    fn client_threads_follow_the_measured_rule() {
        // 2 CPUs: a thread per connection up to 2 per CPU, then one thread, then from
        // 32 connections one per 16 up to one per CPU.
        let on2: Vec<u32> = (1..=8).map(|c| default_client_threads(c, 2, false)).collect();
        assert_eq!(on2, [1, 2, 2, 2, 1, 1, 1, 1]);
        let more: Vec<u32> = [16, 24, 31, 32, 64, 1000].map(|c| default_client_threads(c, 2, false)).to_vec();
        assert_eq!(more, [1, 1, 1, 2, 2, 2]);
        // 4 CPUs keep the 2-CPU rule (not measured there).
        assert_eq!(default_client_threads(20, 4, false), 1);
        assert_eq!(default_client_threads(64, 4, false), 4);
        // On 8 CPUs and more, one per connection, as sysbench: the 16-CPU measurements.
        assert_eq!(default_client_threads(64, 16, false), 64);
        assert_eq!(default_client_threads(20, 32, false), 20);
        assert_eq!(default_client_threads(1024, 32, false), 256);
        // Open loop: a thread per connection, capped.
        assert_eq!(default_client_threads(8, 2, true), 8);
        assert_eq!(default_client_threads(1000, 2, true), 256);
        assert_eq!(default_client_threads(0, 2, false), 1);
    }

    #[test]
    fn run_spec_takes_the_options() {
        let s =
            run_spec(&options(&["--threads=8", "--time=60", "--warmup=10", "--rate=500", "--rand-seed=9"])).unwrap();
        assert_eq!(s.threads, 8);
        assert_eq!(s.time, Some(Duration::from_secs(60)));
        assert_eq!(s.warmup, Duration::from_secs(10));
        assert_eq!(s.rate, Some(500.0));
        assert_eq!(s.seed, 9);
        assert_eq!(s.events, None);
        assert_eq!(run_spec(&options(&["--users=12"])).unwrap().threads, 12);
    }

    #[test]
    fn bad_run_options_say_what_to_do() {
        let e = run_spec(&options(&["--threads=0"])).unwrap_err();
        assert!(matches!(&e, Invalid::Value(m) if m.contains("at least 1")), "{e}");
        let e = run_spec(&options(&["--time=0"])).unwrap_err();
        assert!(matches!(&e, Invalid::Value(m) if m.contains("--events")), "{e}");
        // client_threads_zero_is_refused: it ran with one.
        let e = run_spec(&options(&["--client-threads=0"])).unwrap_err();
        assert!(matches!(&e, Invalid::Value(m) if m.contains("--client-threads must be at least 1")), "{e}");
        let e = run_spec(&options(&["--time=10", "--warmup=10"])).unwrap_err();
        assert!(matches!(&e, Invalid::Value(m) if m.contains("shorter")), "{e}");
        let e = run_request("oltp_read_wrte", &options(&[])).err().unwrap();
        assert!(matches!(&e, Invalid::Value(m) if m.contains("oltp_read_write")), "{e}");
        let e = run_request("oltp_read_write", &options(&["--rand-type=normal"])).err().unwrap();
        assert!(matches!(&e, Invalid::Value(m) if m.contains("uniform")), "{e}");
        let e = run_request(workload::tpcc::NAME, &options(&["--think-time=spec", "--rate=10"])).err().unwrap();
        assert!(matches!(&e, Invalid::Value(m) if m.contains("--think-time spec")), "{e}");
        // think_time_spec_with_delay_is_refused: accepted silently, both pausing.
        let e = run_request(workload::tpcc::NAME, &options(&["--think-time=spec", "--delay=10"])).err().unwrap();
        assert!(matches!(&e, Invalid::Value(m) if m.contains("leave out --delay")), "{e}");
    }

    #[test]
    fn system_schemas_are_refused_as_database() {
        for d in ["mysql", "sys", "INFORMATION_SCHEMA", "performance_schema"] {
            let e = check_database(Some(d)).unwrap_err();
            assert!(
                matches!(&e, Invalid::Value(m) if m.contains("system schema"))
                    && matches!(&e, Invalid::Value(m) if m.contains("--database")),
                "{e}"
            );
        }
        assert!(check_database(Some("sbtest")).is_ok());
        assert!(check_database(Some("mysql_bench")).is_ok());
    }

    #[test]
    fn huge_durations_rates_and_threads_are_refused_with_the_range() {
        for (args, want) in [
            (&["--time=99999999999999999999"][..], "--time must be between 0 and"),
            (&["--warmup=1e30"], "--warmup must be between 0 and"),
            (&["--delay=1e300"], "--delay must be between 0 and"),
            (&["--report-interval=1e300"], "--report-interval must be between 0 and"),
            (&["--time=-1"], "--time must be between 0 and"),
            (&["--rate=1e9"], "--rate must be"),
            (&["--rate=1e308"], "--rate must be"),
            (&["--rate=NaN"], "--rate must be"),
            (&["--threads=4294967295"], "10000 connections at most"),
            (&["--users=20000"], "--users 20000"),
            (&["--server-lost-timeout=1e9"], "--server-lost-timeout must be between"),
            (&["--statement-timeout=0"], "--statement-timeout must be at least 1"),
        ] {
            let e = run_spec(&options(args)).err().unwrap_or_else(|| panic!("{args:?} accepted"));
            assert!(matches!(&e, Invalid::Value(m) if m.contains(want)), "{args:?}: {e}");
            assert!(matches!(&e, Invalid::Value(m) if !m.contains('\n')), "{e}");
        }
        let s = run_spec(&options(&[])).unwrap();
        assert_eq!(s.server_lost_timeout, Duration::from_secs(30));
        assert_eq!(s.statement_timeout, Duration::from_secs(60));
    }

    /// users_and_threads_that_disagree_are_refused: `--threads 3 --users 5` ran 5.
    #[test]
    fn users_and_threads_that_disagree_are_refused() {
        let e = run_spec(&options(&["--users=5", "--threads=3"])).unwrap_err();
        assert!(matches!(&e, Invalid::Value(m) if m.contains("--users 5 and --threads 3 disagree")), "{e}");
        assert_eq!(run_spec(&options(&["--users=5", "--threads=5"])).unwrap().threads, 5);
    }

    #[test]
    fn run_tpcc_users_0_names_the_users_option() {
        let e = run_spec(&options(&["--users=0"])).unwrap_err();
        assert!(matches!(&e, Invalid::Value(m) if m.starts_with("--users must be at least 1")), "{e}");
    }

    #[test]
    fn server_settings_are_checked() {
        let mut a = ServerArgs {
            buffer_pool: "256M".into(),
            log_file_size: "64M".into(),
            flush_log_at_trx_commit: 1,
            max_connections: 100,
            set: vec!["innodb_io_capacity=2000".into()],
            bind_address: None,
        };
        let s = server_settings(&a).unwrap();
        assert_eq!(s.extra, vec![("innodb_io_capacity".to_string(), "2000".to_string())]);
        a.buffer_pool = "lots".into();
        assert!(matches!(server_settings(&a), Err(Invalid::Value(m)) if m.contains("not a size")));
        a.buffer_pool = "1G".into();
        a.set = vec!["oops".into()];
        assert!(matches!(server_settings(&a), Err(Invalid::Value(m)) if m.contains("name=value")));
    }

    /// huge_numbers_are_echoed_short: `--time 1e308` was echoed as 309 digits and
    /// `--watts 1e308` gave "inf W".
    #[test]
    fn huge_numbers_are_echoed_short() {
        let e = seconds_in("--time", 1e308, MAX_SECONDS).unwrap_err();
        assert!(matches!(&e, Invalid::Value(m) if m.ends_with("(got 1e308)")), "{e}");
        assert!(matches!(power(None, Some(1e308)), Err(Invalid::Value(m)) if m.contains("--watts 1e308: ")));
        assert_eq!(power(None, Some(450.0)).unwrap(), crate::monitor::os::Power::Given { watts: 450.0 });
    }

    /// set_may_not_move_what_sizeup_manages: `--set datadir=/elsewhere` started mariadbd
    /// on a directory outside the state directory; `--set socket=...` left `server
    /// start` waiting 120 s, then "not ready", with the server up on the other socket.
    #[test]
    fn set_may_not_move_what_sizeup_manages() {
        let refused = |set: &str| {
            let a = ServerArgs {
                buffer_pool: "256M".into(),
                log_file_size: "64M".into(),
                flush_log_at_trx_commit: 1,
                max_connections: 100,
                set: vec![set.into()],
                bind_address: None,
            };
            server_settings(&a).err()
        };
        assert!(
            matches!(&refused("datadir=/elsewhere").unwrap(), Invalid::Value(m) if m.contains("sizeup sets datadir itself"))
        );
        assert!(
            matches!(&refused("socket=/tmp/x.sock").unwrap(), Invalid::Value(m) if m.contains("sizeup sets socket itself"))
        );
        assert!(matches!(&refused("Pid-File=/tmp/p").unwrap(), Invalid::Value(m) if m.contains("pid_file")));
        assert!(matches!(&refused("sock=/tmp/x.sock").unwrap(), Invalid::Value(m) if m.contains("socket")));
        // Shorter prefixes too (a retest: `soc=` waited 120 s; `pid=`, `innodb_data_home=`
        // and `general_log_fil=` got through).
        assert!(matches!(&refused("soc=/tmp/x.sock").unwrap(), Invalid::Value(m) if m.contains("socket")));
        assert!(matches!(&refused("pid=/tmp/x.pid").unwrap(), Invalid::Value(m) if m.contains("pid_file")));
        assert!(
            matches!(&refused("innodb_data_home=/tmp/d").unwrap(), Invalid::Value(m) if m.contains("innodb_data_home_dir would place"))
        );
        assert!(
            matches!(&refused("general_log_fil=/tmp/g.log").unwrap(), Invalid::Value(m) if m.contains("general_log_file would place"))
        );
        assert!(
            matches!(&refused("log_bin=/var/log/b").unwrap(), Invalid::Value(m) if m.contains("log_bin would place"))
        );
        assert!(refused("innodb_log_group_home_dir=../../x").is_some());
        // A name relative to the datadir, TLS files the server reads, and other options stay.
        for ok in [
            "log_bin=binlog",
            "ssl_cert=/etc/c.pem",
            "innodb_buffer_pool_size=6M",
            "portability=1",
            "general_log=1",
            "slow_query_log=ON",
        ] {
            assert_eq!(refused(ok), None, "{ok}");
        }
    }
}
