//! Raw arguments, validated once into what the rest of sizeup trusts. Every message
//! here says what was wrong and what to do instead.

use super::{OltpArgs, RunArgs, ServerStartArgs, StudyArgs, TargetArgs};
use crate::exec::RunSpec;
use crate::monitor::os::{parse_power_model, Power};
use crate::random::{RandOptions, RandType};
use crate::server::ServerSettings;
use crate::study::spec::{self, Kind, Levels, PowerSpec, StudySpec};
use crate::workload::oltp::{OltpOptions, Variant};
use std::time::Duration;

/// The workload named on the command line.
pub fn oltp_variant(name: &str) -> Result<Variant, String> {
    Variant::from_name(name).ok_or_else(|| {
        let names: Vec<&str> = Variant::ALL.iter().map(|(n, _)| *n).collect();
        format!("unknown workload '{name}': use one of {}", names.join(", "))
    })
}

pub fn oltp_options(a: &OltpArgs) -> Result<OltpOptions, String> {
    let rand_type: RandType = a.rand_type.parse()?;
    if a.tables == 0 {
        return Err("--tables must be at least 1".into());
    }
    if a.table_size > i32::MAX as u32 {
        return Err(format!("--table-size {} is larger than an INT id can hold", a.table_size));
    }
    if !(0.0..1.0).contains(&a.rand_pareto_h) || a.rand_pareto_h == 0.0 {
        return Err("--rand-pareto-h must be between 0 and 1".into());
    }
    if a.rand_spec_res >= 100 || a.rand_spec_pct > 100 {
        return Err("--rand-spec-res must be below 100 and --rand-spec-pct at most 100".into());
    }
    if a.rand_zipfian_exp <= 0.0 {
        return Err("--rand-zipfian-exp must be above 0".into());
    }
    let engine = a.mysql_storage_engine.trim();
    if engine.is_empty() || !engine.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(format!("--mysql-storage-engine '{engine}' is not an engine name"));
    }
    Ok(OltpOptions {
        tables: a.tables,
        table_size: a.table_size,
        range_size: a.range_size,
        point_selects: a.point_selects,
        simple_ranges: a.simple_ranges,
        sum_ranges: a.sum_ranges,
        order_ranges: a.order_ranges,
        distinct_ranges: a.distinct_ranges,
        index_updates: a.index_updates,
        non_index_updates: a.non_index_updates,
        delete_inserts: a.delete_inserts,
        range_selects: a.range_selects,
        auto_inc: a.auto_inc,
        skip_trx: a.skip_trx,
        secondary: a.secondary,
        create_secondary: a.create_secondary,
        storage_engine: engine.to_string(),
        read_only: a.read_only,
        rand: RandOptions {
            rand_type,
            spec_iter: a.rand_spec_iter.max(1),
            spec_pct: a.rand_spec_pct,
            spec_res: a.rand_spec_res,
            pareto_h: a.rand_pareto_h,
            zipfian_exp: a.rand_zipfian_exp,
        },
    })
}

/// A seed from the options, or from the clock when 0 (as sysbench's --rand-seed=0).
pub fn seed(rand_seed: u64) -> u64 {
    if rand_seed != 0 {
        return rand_seed;
    }
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(1)
}

fn seconds(name: &str, v: f64) -> Result<Duration, String> {
    if !v.is_finite() || v < 0.0 {
        return Err(format!("--{name} must be a number of seconds, 0 or more (got {v})"));
    }
    Ok(Duration::from_secs_f64(v))
}

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
///   2 threads; 6 connections: 103k against 93k).
pub fn default_client_threads(connections: u32, cpus: u32, open_loop: bool) -> u32 {
    if open_loop {
        connections.min(256)
    } else if connections <= 2 * cpus {
        connections.min(cpus)
    } else {
        cpus.div_ceil(4)
    }
    .max(1)
}

/// The run parameters from `sizeup run`'s arguments.
pub fn run_spec(a: &RunArgs) -> Result<RunSpec, String> {
    if a.threads == 0 {
        return Err("--threads must be at least 1".into());
    }
    let time = seconds("time", a.time)?;
    if time.is_zero() && a.events == 0 {
        return Err("with --time 0 the run needs --events N to end".into());
    }
    if !a.rate.is_finite() || a.rate < 0.0 {
        return Err("--rate must be transactions per second, 0 or more".into());
    }
    let report = seconds("report-interval", a.report_interval)?;
    let interval = if report.is_zero() { Duration::from_secs(1) } else { report };
    if interval < Duration::from_millis(100) {
        return Err("--report-interval must be at least 0.1 s".into());
    }
    let warmup = seconds("warmup", a.warmup)?;
    if !time.is_zero() && warmup >= time {
        return Err(format!(
            "--warmup {} s leaves nothing to measure in a --time {} s run; make it shorter",
            a.warmup, a.time
        ));
    }
    let delay = seconds("delay", a.session.delay / 1000.0)?;
    let cpus = std::thread::available_parallelism().map(|n| n.get() as u32).unwrap_or(1);
    let default_threads = default_client_threads(a.threads, cpus, a.rate > 0.0);
    let client_threads = a.session.client_threads.unwrap_or(default_threads).max(1);
    if !(a.percentile > 0.0 && a.percentile <= 100.0) {
        return Err(format!("--percentile must be above 0 and at most 100 (got {})", a.percentile));
    }
    if a.db_driver != "mysql" {
        return Err(format!(
            "--db-driver {}: sizeup speaks the MySQL protocol only (MySQL, MariaDB, Percona Server)",
            a.db_driver
        ));
    }
    Ok(RunSpec {
        threads: a.threads,
        time: (!time.is_zero()).then_some(time),
        events: (a.events > 0).then_some(a.events),
        warmup,
        rate: (a.rate > 0.0).then_some(a.rate),
        interval,
        delay: (!delay.is_zero()).then_some(delay),
        client_threads,
        seed: seed(a.oltp.rand_seed),
        server_pid: None,
        data_dir: None,
        start_line: a.start_line.clone(),
        power: power(a.power.power_model.as_deref(), a.power.watts)?,
        percentile: a.percentile,
        retry_on: a.session.mysql_ignore_errors.parse()?,
    })
}

/// `--power-model idle=W,max=W` or `--watts W` (one of them at most).
pub fn power(model: Option<&str>, watts: Option<f64>) -> Result<Power, String> {
    match (model, watts) {
        (Some(_), Some(_)) => Err("give --power-model or --watts, not both".into()),
        (Some(m), None) => parse_power_model(m),
        (None, Some(w)) if w.is_finite() && w > 0.0 => Ok(Power::Given { watts: w }),
        (None, Some(w)) => Err(format!("--watts {w}: give the system's power draw in watts, above 0")),
        (None, None) => Ok(Power::None),
    }
}

/// The study a `sizeup sweep` or `sizeup scale` command line describes.
pub fn study_spec(kind: Kind, workload: &str, levels: &str, a: &StudyArgs, name: String) -> Result<StudySpec, String> {
    let value = |v: serde_json::Result<serde_json::Value>| v.expect("serialisable");
    let parts = [
        value(serde_json::to_value(&a.target)),
        value(serde_json::to_value(&a.oltp)),
        value(serde_json::to_value(&a.tpcc)),
        value(serde_json::to_value(&a.session)),
    ];
    let options = spec::options_of(&parts);
    let spec = StudySpec {
        name: a.name.clone().unwrap_or(name),
        description: String::new(),
        kind,
        workloads: vec![workload.to_string()],
        levels: Levels::Text(levels.to_string()),
        step_time: a.step_time,
        warmup: a.warmup,
        repeat: a.repeat,
        sample_interval: a.sample_interval,
        steady_last: a.steady_last,
        stop_when: a.stop_when.clone(),
        options,
        server: Default::default(),
        configs: Vec::new(),
        scale: Default::default(),
        power: PowerSpec { model: a.power.power_model.clone(), watts: a.power.watts },
        cost: None,
    };
    Ok(spec)
}

/// True when the user named a server; otherwise the managed instance is used.
pub fn names_a_server(t: &TargetArgs) -> bool {
    t.host.is_some() || t.port.is_some() || t.socket.is_some()
}

pub fn server_settings(a: &ServerStartArgs) -> Result<ServerSettings, String> {
    if a.flush_log_at_trx_commit > 2 {
        return Err("--flush-log-at-trx-commit must be 0, 1 or 2".into());
    }
    for (flag, v) in [("buffer-pool", &a.buffer_pool), ("log-file-size", &a.log_file_size)] {
        let ok = !v.is_empty()
            && v.trim_end_matches(['K', 'M', 'G', 'T', 'k', 'm', 'g', 't']).chars().all(|c| c.is_ascii_digit())
            && v.chars().next().is_some_and(|c| c.is_ascii_digit());
        if !ok {
            return Err(format!("--{flag} '{v}' is not a size; write it like 512M or 2G"));
        }
    }
    let mut extra = Vec::new();
    for s in &a.set {
        let (k, v) = s
            .split_once('=')
            .ok_or_else(|| format!("--set '{s}' needs the form name=value, e.g. --set innodb_io_capacity=2000"))?;
        let k = k.trim();
        if k.is_empty() || !k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') || v.contains('\n') {
            return Err(format!("--set '{s}': '{k}' is not a server option name"));
        }
        extra.push((k.to_string(), v.trim().to_string()));
    }
    Ok(ServerSettings {
        buffer_pool: a.buffer_pool.clone(),
        log_file_size: a.log_file_size.clone(),
        flush_log_at_trx_commit: a.flush_log_at_trx_commit,
        max_connections: a.max_connections,
        extra,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Cli, Command};
    use clap::Parser;

    fn run_args(args: &[&str]) -> RunArgs {
        let mut v = vec!["sizeup", "run", "oltp_read_write"];
        v.extend_from_slice(args);
        match Cli::try_parse_from(v).unwrap().command {
            Command::Run(r) => r,
            _ => unreachable!(),
        }
    }

    #[test]
    fn client_threads_follow_the_measured_rule() {
        // 2 CPUs: a thread per connection up to 2 per CPU, then one thread.
        let on2: Vec<u32> = (1..=8).map(|c| default_client_threads(c, 2, false)).collect();
        assert_eq!(on2, [1, 2, 2, 2, 1, 1, 1, 1]);
        // 32 CPUs: up to 64 connections get a thread per connection up to 32; then 8.
        assert_eq!(default_client_threads(20, 32, false), 20);
        assert_eq!(default_client_threads(64, 32, false), 32);
        assert_eq!(default_client_threads(200, 32, false), 8);
        // Open loop: a thread per connection, capped.
        assert_eq!(default_client_threads(8, 2, true), 8);
        assert_eq!(default_client_threads(1000, 2, true), 256);
        assert_eq!(default_client_threads(0, 2, false), 1);
    }

    #[test]
    fn run_spec_takes_the_options() {
        let s =
            run_spec(&run_args(&["--threads=8", "--time=60", "--warmup=10", "--rate=500", "--rand-seed=9"])).unwrap();
        assert_eq!(s.threads, 8);
        assert_eq!(s.time, Some(Duration::from_secs(60)));
        assert_eq!(s.warmup, Duration::from_secs(10));
        assert_eq!(s.rate, Some(500.0));
        assert_eq!(s.seed, 9);
        assert_eq!(s.events, None);
    }

    #[test]
    fn bad_run_options_say_what_to_do() {
        let e = run_spec(&run_args(&["--threads=0"])).unwrap_err();
        assert!(e.contains("at least 1"), "{e}");
        let e = run_spec(&run_args(&["--time=0"])).unwrap_err();
        assert!(e.contains("--events"), "{e}");
        let e = run_spec(&run_args(&["--time=10", "--warmup=10"])).unwrap_err();
        assert!(e.contains("shorter"), "{e}");
        let e = oltp_variant("oltp_read_wrte").unwrap_err();
        assert!(e.contains("oltp_read_write"), "{e}");
        let e = oltp_options(&run_args(&["--rand-type=normal"]).oltp).unwrap_err();
        assert!(e.contains("uniform"), "{e}");
    }

    #[test]
    fn server_settings_are_checked() {
        let mut a = ServerStartArgs {
            instances: 1,
            buffer_pool: "256M".into(),
            log_file_size: "64M".into(),
            flush_log_at_trx_commit: 1,
            max_connections: 100,
            set: vec!["innodb_io_capacity=2000".into()],
            datadir_root: None,
            base_port: None,
        };
        let s = server_settings(&a).unwrap();
        assert_eq!(s.extra, vec![("innodb_io_capacity".to_string(), "2000".to_string())]);
        a.buffer_pool = "lots".into();
        assert!(server_settings(&a).unwrap_err().contains("not a size"));
        a.buffer_pool = "1G".into();
        a.set = vec!["oops".into()];
        assert!(server_settings(&a).unwrap_err().contains("name=value"));
    }
}
