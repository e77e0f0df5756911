//! sizeup: measures how much OLTP work a MySQL-family server can carry.
//!
//! `run` is the whole tool behind the command line, so tests drive it in-process the
//! way a user drives the binary. Each command here is orchestration only: the work
//! lives in the modules named after what they are.

pub mod cli;
pub mod client;
pub mod cost;
pub mod exec;
pub mod model;
pub mod monitor;
pub mod random;
pub mod report;
pub mod result;
pub mod server;
pub mod stats;
pub mod store;
pub mod study;
pub mod target;
pub mod workload;

use cli::plan;
use cli::{Cli, Command, RunArgs, RunsCommand, ServerCommand, TargetArgs};
use exec::Ended;
use result::RunDocument;
use server::Manager;
use std::collections::BTreeMap;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use target::Target;
use workload::oltp::{self, Oltp};
use workload::tpcc::{self, Tpcc};
use workload::Workload;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Bad input: the message says what to change.
    #[error("{0}")]
    Usage(String),
    /// Something the user asked for could not be done.
    #[error("{0}")]
    Failed(String),
    #[error(transparent)]
    Server(#[from] server::ServerError),
    #[error(transparent)]
    Store(#[from] store::StoreError),
    #[error(transparent)]
    Connect(#[from] target::ConnectError),
}

/// Exit code of a run stopped with Ctrl-C (as shells report SIGINT).
pub const EXIT_INTERRUPTED: i32 = 130;

/// What a run prints as it goes.
#[derive(Clone, Copy)]
pub enum Print<'a> {
    /// Interval lines and the summary, as `sizeup run`.
    Full,
    /// Nothing: the caller reports.
    Quiet,
    /// Nothing, but each interval is handed to the caller's progress display.
    Progress(&'a (dyn Fn(&stats::Interval) + Sync)),
}

impl Print<'_> {
    fn full(&self) -> bool {
        matches!(self, Print::Full)
    }
}

pub fn run(cli: Cli) -> Result<i32, Error> {
    let home = cli.home.clone().filter(|h| !h.as_os_str().is_empty()).unwrap_or_else(server::default_home);
    let results = cli.results.clone().unwrap_or_else(|| home.join("results.db"));
    let manager = Manager::new(&home);
    match cli.command {
        Command::Server(cmd) => server_command(&manager, cmd),
        Command::Prepare(a) if a.workload == "tpcc" => prepare_tpcc(&manager, &a),
        Command::Prepare(a) => {
            let variant = plan::oltp_variant(&a.workload).map_err(Error::Usage)?;
            let options = plan::oltp_options(&a.oltp).map_err(Error::Usage)?;
            let (target, _) = resolve_target(&manager, &a.target, "sbtest")?;
            let threads = a.threads.unwrap_or_else(loaders).max(1);
            prepare_oltp(&target, variant.name(), &options, threads, plan::seed(a.oltp.rand_seed))?;
            Ok(0)
        }
        Command::Cleanup(a) if a.workload == "tpcc" => {
            let (target, _) = resolve_target(&manager, &a.target, "tpcc")?;
            let report = runtime(1)?.block_on(tpcc::load::cleanup(&target)).map_err(Error::Failed)?;
            println!("dropped {} table(s) in {} on {}", report.dropped.len(), target.database, target.describe());
            if !report.kept.is_empty() {
                println!("left alone (not created by sizeup): {}", report.kept.join(", "));
            }
            Ok(0)
        }
        Command::Check(a) => check_tpcc(&manager, &a),
        Command::Cleanup(a) => {
            plan::oltp_variant(&a.workload).map_err(Error::Usage)?;
            let (target, _) = resolve_target(&manager, &a.target, "sbtest")?;
            let report = runtime(1)?.block_on(oltp::cleanup(&target)).map_err(Error::Failed)?;
            println!("dropped {} table(s) in {} on {}", report.dropped.len(), target.database, target.describe());
            if !report.kept.is_empty() {
                println!("left alone (not created by sizeup): {}", report.kept.join(", "));
            }
            Ok(0)
        }
        Command::Prewarm(a) => {
            plan::oltp_variant(&a.workload).map_err(Error::Usage)?;
            let (target, _) = resolve_target(&manager, &a.target, "sbtest")?;
            let threads = a.threads.unwrap_or_else(cpus).max(1);
            let started = std::time::Instant::now();
            runtime(threads)?
                .block_on(oltp::prewarm(&target, a.tables, a.table_size, threads))
                .map_err(Error::Failed)?;
            println!("prewarmed {} table(s) in {:.1} s", a.tables, started.elapsed().as_secs_f64());
            Ok(0)
        }
        Command::Run(a) => {
            let (doc, ended) = run_benchmark(&manager, &results, &a, Print::Full)?;
            Ok(match ended {
                Ended::Completed => 0,
                Ended::Interrupted => EXIT_INTERRUPTED,
                Ended::Failed => {
                    eprintln!("error: the run stopped: {}", doc.error.unwrap_or_default());
                    1
                }
            })
        }
        Command::Runs(cmd) => {
            let store = store::Store::open(&results)?;
            match cmd {
                RunsCommand::List => print!("{}", report::runs_table(&store.list_runs()?)),
                RunsCommand::Export(cli::ExportArgs { id, format, output }) => {
                    write_out(output.as_deref(), &report::export::run(&store.load_run(id)?, format))?
                }
                RunsCommand::Show { id, json } => {
                    let doc = store.load_run(id)?;
                    if json {
                        println!("{}", serde_json::to_string_pretty(&doc).expect("serialisable"));
                    } else {
                        print_document(&doc);
                    }
                }
            }
            Ok(0)
        }
        Command::Demo(a) => demo(&manager, &results, &a),
        Command::Sweep(a) => {
            let name = format!("sweep {} {}", a.workload, a.threads);
            let spec = plan::study_spec(study::spec::Kind::Sweep, &a.workload, &a.threads, &a.study, name)
                .map_err(Error::Usage)?;
            study::run(&manager, &results, &spec, None)
        }
        Command::Scale(a) => {
            let name = format!("scale {} {} instances", a.workload, a.instances);
            let mut spec = plan::study_spec(study::spec::Kind::Scale, &a.workload, &a.instances, &a.study, name)
                .map_err(Error::Usage)?;
            spec.scale = study::spec::ScaleSpec {
                threads_per_instance: a.threads_per_instance,
                threads: a.threads,
                buffer_pool_per_instance: a.buffer_pool_per_instance.clone(),
                split: a.split,
                buffer_pool: a.buffer_pool.clone(),
                targets: a.targets.clone(),
            };
            spec.server.set = a.set.clone();
            study::run(&manager, &results, &spec, None)
        }
        Command::Study(cmd) => study_command(&manager, &results, cmd),
        Command::Report(a) => {
            let store = store::Store::open(&results)?;
            let items = a.items.iter().map(|i| report_item(&store, i)).collect::<Result<Vec<_>, _>>()?;
            if a.target_tps.is_some_and(|t| t.is_nan() || t <= 0.0)
                || !(0.0..=1.0).contains(&a.efficiency)
                || a.efficiency == 0.0
            {
                return Err(Error::Usage("--target-tps must be above 0 and --efficiency in (0, 1]".into()));
            }
            let sizing = a.target_tps.map(|target| report::html::Sizing { target, efficiency: a.efficiency });
            let html = report::html::report(&items, &now_utc(), sizing);
            std::fs::write(&a.html, html)
                .map_err(|e| Error::Failed(format!("cannot write {}: {e}", a.html.display())))?;
            println!("wrote {} ({} item(s))", a.html.display(), items.len());
            Ok(0)
        }
        Command::Compare(a) => compare(&results, &a),
        Command::Model(cli::ModelCommand::Usl { points, from }) => model_usl(&results, points, from),
        Command::Size(a) => size(&results, &a),
    }
}

/// `sizeup model usl`: fit points given, or each series of a stored study.
fn model_usl(results: &std::path::Path, points: Option<String>, from: Option<String>) -> Result<i32, Error> {
    // (series name, unit, points)
    type PointSet = (String, String, Vec<(f64, f64)>);
    let sets: Vec<PointSet> = match (points, from) {
        (Some(p), _) => {
            vec![("the points given".into(), "throughput".into(), model::usl::parse_points(&p).map_err(Error::Usage)?)]
        }
        (None, Some(f)) => {
            let Ref::Study(id) = parse_ref(&f)? else {
                return Err(Error::Usage("--from takes a study (s3 or study:3)".into()));
            };
            let store = store::Store::open(results)?;
            let row = store.load_study(id)?;
            let spec = stored_spec(&row)?;
            study::results_of(&spec, &row)
                .map_err(Error::Failed)?
                .into_iter()
                .map(|s| {
                    let pts = s.levels.iter().map(|l| (l.level as f64, l.throughput.mean)).collect();
                    (s.name, s.unit, pts)
                })
                .collect()
        }
        (None, None) => return Err(Error::Usage("give --points N:X,... or --from STUDY".into())),
    };
    let mut failed = 0;
    for (name, unit, pts) in sets {
        match model::usl::fit(&pts) {
            Ok(f) => print!("{}", report::usl_text(&name, &unit, &f)),
            Err(e) => {
                failed += 1;
                println!("{name}: cannot fit: {e}");
            }
        }
    }
    Ok(if failed > 0 { 1 } else { 0 })
}

/// `sizeup size`: servers needed and requirement checks from stored studies.
fn size(results: &std::path::Path, a: &cli::SizeArgs) -> Result<i32, Error> {
    if a.target_tps.is_nan() || a.target_tps <= 0.0 {
        return Err(Error::Usage("--target-tps must be above 0".into()));
    }
    let e: f64 =
        match a.efficiency.as_str() {
            "measured" => {
                return Err(Error::Usage(
                    "--efficiency measured needs a scale-out measurement (several servers serving one workload), \
                 which sizeup cannot make on one host yet: give E as a number, e.g. --efficiency 0.9"
                        .into(),
                ))
            }
            v => v.parse().ok().filter(|e: &f64| *e > 0.0 && *e <= 1.0).ok_or_else(|| {
                Error::Usage(format!("--efficiency {v}: give a number above 0 and at most 1, e.g. 0.9"))
            })?,
        };
    let bound = match &a.latency {
        None => None,
        Some(l) => Some(
            l.trim()
                .strip_prefix("p95<")
                .and_then(|v| v.trim().trim_end_matches("ms").parse::<f64>().ok())
                .filter(|v| *v > 0.0)
                .ok_or_else(|| Error::Usage(format!("--latency '{l}': write p95<MS, e.g. p95<50")))?,
        ),
    };
    let given_cost = a.cost.as_deref().map(cost::CostInputs::parse).transpose().map_err(Error::Usage)?;
    let store = store::Store::open(results)?;
    let mut out = String::new();
    let mut answered = false;
    let mut sweeps = Vec::new();
    for f in &a.from {
        let Ref::Study(id) = parse_ref(f)? else {
            return Err(Error::Usage(format!("--from {f}: give a study (s3 or study:3)")));
        };
        let row = store.load_study(id)?;
        let spec = stored_spec(&row)?;
        let series = study::results_of(&spec, &row).map_err(Error::Failed)?;
        if spec.kind == study::spec::Kind::Scale {
            for s in &series {
                let plans = model::sizing::plans(s, a.target_tps, e, bound).map_err(Error::Failed)?;
                out += &report::sizing_text(
                    &format!("study {id}: {}", s.name),
                    &s.unit,
                    a.target_tps,
                    e,
                    bound,
                    &plans,
                    given_cost.as_ref().or(spec.cost_of(&s.name)),
                );
                answered = true;
            }
        } else {
            sweeps.extend(series);
        }
    }
    if let Some(at) = a.at_connections {
        let verdicts = model::sizing::requirement(&sweeps, a.target_tps, at);
        if verdicts.is_empty() {
            return Err(Error::Usage(format!("no sweep among --from measured {at} connections")));
        }
        out += &report::requirement_text(a.target_tps, at, &verdicts);
        answered = true;
    }
    if !answered {
        return Err(Error::Usage(
            "nothing to size from: give a scale study (sizeup scale, studies/2-instance-scale-up.toml) \
             or --at-connections N with sweep studies"
                .into(),
        ));
    }
    print!("{out}");
    Ok(0)
}

/// A run (`12`, `run:12`) or a study (`s3`, `study:3`) named on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ref {
    Run(i64),
    Study(i64),
}

pub fn parse_ref(s: &str) -> Result<Ref, Error> {
    let bad = || {
        Error::Usage(format!("'{s}' names no run or study: write 12 or run:12 for a run, s3 or study:3 for a study"))
    };
    let s = s.trim();
    let (study, id) = if let Some(id) = s.strip_prefix("study:").or_else(|| s.strip_prefix('s')) {
        (true, id)
    } else {
        (false, s.strip_prefix("run:").unwrap_or(s))
    };
    let id: i64 = id.parse().map_err(|_| bad())?;
    Ok(if study { Ref::Study(id) } else { Ref::Run(id) })
}

/// The spec a study was stored with.
fn stored_spec(row: &store::StudyRow) -> Result<study::spec::StudySpec, Error> {
    serde_json::from_value(row.spec.clone())
        .map_err(|e| Error::Failed(format!("study {} was stored by another sizeup version: {e}", row.id)))
}

fn load_study_item(store: &store::Store, id: i64) -> Result<report::html::Item, Error> {
    let row = store.load_study(id)?;
    let spec: study::spec::StudySpec = stored_spec(&row)?;
    let series = study::results_of(&spec, &row).map_err(Error::Failed)?;
    let sample_run = row.steps.iter().flat_map(|s| s.runs.first()).next().and_then(|&r| store.load_run(r).ok());
    Ok(report::html::Item::Study { row: Box::new(row), spec: Box::new(spec), series, sample_run })
}

fn report_item(store: &store::Store, s: &str) -> Result<report::html::Item, Error> {
    match parse_ref(s)? {
        Ref::Run(id) => Ok(report::html::Item::Run(store.load_run(id)?)),
        Ref::Study(id) => load_study_item(store, id),
    }
}

/// The time now as ISO 8601 UTC, without a date crate.
fn now_utc() -> String {
    let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs()) as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Civil from days (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + (m <= 2) as i64;
    format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z", rem / 3600, rem / 60 % 60, rem % 60)
}

/// `sizeup compare A B`.
fn compare(results: &std::path::Path, a: &cli::CompareArgs) -> Result<i32, Error> {
    let store = store::Store::open(results)?;
    let text = match (parse_ref(&a.a)?, parse_ref(&a.b)?) {
        (Ref::Run(x), Ref::Run(y)) => {
            let (da, db) = (store.load_run(x)?, store.load_run(y)?);
            let c = report::compare::runs(&da, &db).map_err(Error::Failed)?;
            if let Some(path) = &a.html {
                let html = report::compare::html(
                    &c,
                    vec![report::html::Item::Run(da), report::html::Item::Run(db)],
                    &now_utc(),
                );
                std::fs::write(path, html)
                    .map_err(|e| Error::Failed(format!("cannot write {}: {e}", path.display())))?;
            }
            report::compare::table(&c)
        }
        (Ref::Study(x), Ref::Study(y)) => {
            use report::compare::Steps;
            let load = |id: i64| -> Result<(report::html::Item, Steps), Error> {
                let item = load_study_item(&store, id)?;
                let report::html::Item::Study { row, .. } = &item else { unreachable!() };
                // Each level's steps (repeats), each with its runs (instances).
                let mut steps = Steps::new();
                for st in row.steps.iter().filter(|s| s.status == "completed") {
                    let runs = st.runs.iter().map(|&r| store.load_run(r)).collect::<Result<Vec<_>, _>>()?;
                    steps.entry((st.series.clone(), st.level)).or_default().push(runs);
                }
                Ok((item, steps))
            };
            let ((ia, ra), (ib, rb)) = (load(x)?, load(y)?);
            let c = report::compare::studies(&ia, &ra, &ib, &rb).map_err(Error::Failed)?;
            if let Some(path) = &a.html {
                let html = report::compare::html(&c, vec![ia, ib], &now_utc());
                std::fs::write(path, html)
                    .map_err(|e| Error::Failed(format!("cannot write {}: {e}", path.display())))?;
            }
            report::compare::table(&c)
        }
        _ => return Err(Error::Usage("compare two runs or two studies, not one of each".into())),
    };
    print!("{text}");
    Ok(0)
}

fn study_command(manager: &Manager, results: &std::path::Path, cmd: cli::StudyCommand) -> Result<i32, Error> {
    use cli::StudyCommand;
    match cmd {
        StudyCommand::Run { file } => {
            let text = std::fs::read_to_string(&file)
                .map_err(|e| Error::Usage(format!("cannot read study file {}: {e}", file.display())))?;
            let spec = study::spec::StudySpec::from_toml(&text, &file.display().to_string()).map_err(Error::Usage)?;
            study::run(manager, results, &spec, None)
        }
        StudyCommand::Resume { id } => {
            let store = store::Store::open(results)?;
            let row = store.load_study(id)?;
            let spec: study::spec::StudySpec = stored_spec(&row)?;
            match row.status.as_str() {
                "completed" => {
                    println!("study {id} is complete; nothing to resume");
                    print!("{}", report::study_tables(&spec, &study::results_of(&spec, &row).map_err(Error::Failed)?));
                    Ok(0)
                }
                "running" => Err(Error::Usage(format!(
                    "study {id} is still running in another sizeup process; stop that one first"
                ))),
                _ => study::run(manager, results, &spec, Some(id)),
            }
        }
        StudyCommand::Show { id, json } => {
            let store = store::Store::open(results)?;
            let id = match id {
                Some(id) => id,
                None => store.list_studies()?.last().map(|s| s.id).ok_or_else(|| {
                    Error::Usage(
                        "no studies stored yet: run `sizeup sweep`, `sizeup scale` or `sizeup study run FILE`".into(),
                    )
                })?,
            };
            let row = store.load_study(id)?;
            if json {
                println!("{}", serde_json::to_string_pretty(&row).expect("serialisable"));
                return Ok(0);
            }
            let spec: study::spec::StudySpec = stored_spec(&row)?;
            println!("study {} — {} — {} ({}, started {})", row.id, row.name, row.status, row.kind, row.started_at);
            if !spec.description.is_empty() {
                println!("{}", spec.description.trim());
            }
            print!("{}", report::study_tables(&spec, &study::results_of(&spec, &row).map_err(Error::Failed)?));
            let runs: Vec<String> = row.steps.iter().flat_map(|s| s.runs.iter().map(|r| r.to_string())).collect();
            println!(
                "
runs: {}",
                runs.join(" ")
            );
            Ok(0)
        }
        StudyCommand::Export(cli::ExportArgs { id, format, output }) => {
            let store = store::Store::open(results)?;
            let row = store.load_study(id)?;
            let spec: study::spec::StudySpec = stored_spec(&row)?;
            let series = study::results_of(&spec, &row).map_err(Error::Failed)?;
            let text = report::export::study(&row, &series, report::level_name(&spec), format);
            write_out(output.as_deref(), &text)?;
            Ok(0)
        }
        StudyCommand::List => {
            let store = store::Store::open(results)?;
            print!("{}", report::studies_table(&store.list_studies()?));
            Ok(0)
        }
    }
}

/// Text to a file, or to standard output.
fn write_out(path: Option<&std::path::Path>, text: &str) -> Result<(), Error> {
    match path {
        Some(p) => std::fs::write(p, text).map_err(|e| Error::Failed(format!("cannot write {}: {e}", p.display()))),
        None => {
            print!("{text}");
            Ok(())
        }
    }
}

fn runtime(threads: u32) -> Result<tokio::runtime::Runtime, Error> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads.clamp(1, 8) as usize)
        .enable_all()
        .build()
        .map_err(|e| Error::Failed(format!("cannot start the async runtime: {e}")))
}

/// Runs a load into `target` on `threads` runtime threads with a progress bar over
/// `rows` of `total`.
fn with_progress<T>(
    threads: u32,
    total: u64,
    rows: &Arc<AtomicU64>,
    target: &Target,
    load: impl std::future::Future<Output = T>,
) -> Result<T, Error> {
    let rt = runtime(threads)?;
    let bar = report::rows_bar(total, &format!("{} on {}", target.database, target.describe()));
    let watcher = {
        let (bar, rows) = (bar.clone(), rows.clone());
        rt.spawn(async move {
            loop {
                bar.set_position(rows.load(std::sync::atomic::Ordering::Relaxed));
                tokio::time::sleep(std::time::Duration::from_millis(200)).await;
            }
        })
    };
    let result = rt.block_on(load);
    watcher.abort();
    bar.finish_and_clear();
    Ok(result)
}

fn server_command(manager: &Manager, cmd: ServerCommand) -> Result<i32, Error> {
    match cmd {
        ServerCommand::Start(a) => {
            if a.instances == 0 {
                return Err(Error::Usage("--instances must be at least 1".into()));
            }
            let settings = plan::server_settings(&a).map_err(Error::Usage)?;
            let status = manager.start(a.instances, &settings, a.base_port, a.datadir_root.as_deref())?;
            print!("{}", report::server_table(&status));
            Ok(0)
        }
        ServerCommand::Stop(a) => {
            let stopped = manager.stop(a.instance, a.purge)?;
            if stopped.is_empty() {
                println!("no managed instances to stop");
            }
            for s in stopped {
                println!("instance {} stopped{}", s.index, if a.purge { " and removed" } else { "" });
            }
            Ok(0)
        }
        ServerCommand::Status { json } => {
            let status = manager.status()?;
            if json {
                println!("{}", serde_json::to_string_pretty(&status).expect("serialisable"));
            } else {
                print!("{}", report::server_table(&status));
            }
            Ok(0)
        }
    }
}

/// The server to talk to: the one the user named, or managed instance N (started with
/// default settings if it is instance 0 and not running). Also returns the server's pid
/// instance when sizeup manages it, to measure its CPU and its disk.
pub fn resolve_target(
    manager: &Manager,
    t: &TargetArgs,
    default_db: &str,
) -> Result<(Target, Option<server::Instance>), Error> {
    let database = t.database.clone().unwrap_or_else(|| default_db.to_string());
    if database.is_empty() || database.len() > 64 {
        return Err(Error::Usage(format!("--database '{database}' is not a database name")));
    }
    if plan::names_a_server(t) {
        let target = Target {
            host: t.host.clone().unwrap_or_else(|| "127.0.0.1".into()),
            port: t.port.unwrap_or(3306),
            socket: t.socket.clone(),
            user: t.user.clone().unwrap_or_else(|| "root".into()),
            password: t.password.clone(),
            database,
            tls: target::Tls::from_args(&t.tls_args()).map_err(Error::Usage)?,
        };
        return Ok((target, None));
    }
    let instance = match manager.running(t.instance)? {
        Some(i) => i,
        None if t.instance == 0 => {
            eprintln!("no server named: starting managed MariaDB instance 0 in {}", manager.home().display());
            let settings = manager.settings_of(0)?.unwrap_or_default();
            manager.start(1, &settings, None, None)?;
            manager
                .running(0)?
                .ok_or_else(|| Error::Failed("managed instance 0 did not stay up; see `sizeup server status`".into()))?
        }
        None => {
            return Err(Error::Usage(format!(
                "managed instance {} is not running; start it with `sizeup server start --instances {}`",
                t.instance,
                t.instance + 1
            )))
        }
    };
    let target = Target {
        host: "127.0.0.1".into(),
        port: instance.port,
        socket: Some(instance.socket.clone()),
        user: t.user.clone().unwrap_or_else(|| instance.user().to_string()),
        password: t.password.clone(),
        database,
        tls: target::Tls::from_args(&t.tls_args()).map_err(Error::Usage)?,
    };
    Ok((target, Some(instance)))
}

fn prepare_oltp(
    target: &Target,
    workload: &str,
    options: &oltp::OltpOptions,
    threads: u32,
    seed: u64,
) -> Result<(), Error> {
    let rows = Arc::new(AtomicU64::new(0));
    let total = options.tables as u64 * options.table_size as u64;
    report::note(&format!(
        "preparing {workload}: {} table(s) x {} rows in {} on {} with {threads} connection(s)",
        options.tables,
        options.table_size,
        target.database,
        target.describe()
    ));
    let load = oltp::prepare(target, options, threads, seed, rows.clone());
    let result = with_progress(threads, total, &rows, target, load)?;
    let report = result.map_err(Error::Failed)?;
    report::above_bars(|| {
        println!(
            "prepared {} table(s), {} rows in {:.1} s ({:.0} rows/s, {})",
            report.tables, report.rows, report.seconds, report.rows_per_second, report.method
        )
    });
    Ok(())
}

/// Checks the run's tables are there, so a missing prepare is a clear message rather
/// than a failed statement.
async fn check_tables(
    target: &Target,
    options: &oltp::OltpOptions,
    workload: &str,
    print: bool,
) -> Result<serde_json::Value, Error> {
    let tables = options.tables;
    use mysql_async::prelude::Queryable;
    let mut conn = target.connect().await.map_err(|e| match e {
        target::ConnectError::Unreachable { ref reason, .. } if reason.contains("1049") => Error::Usage(format!(
            "database {} does not exist on {}: run `sizeup prepare {workload}` first",
            target.database,
            target.describe()
        )),
        other => other.into(),
    })?;
    let present: Vec<String> = conn
        .exec(
            "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME LIKE 'sbtest%'",
            (&target.database,),
        )
        .await
        .map_err(|e| Error::Failed(target::short_error(&e)))?;
    if let Some(missing) = (1..=tables).map(|i| format!("sbtest{i}")).find(|t| !present.contains(t)) {
        return Err(Error::Usage(format!(
            "{}.{missing} does not exist: run `sizeup prepare {workload} --tables {tables}` (with the same --table-size) first",
            target.database
        )));
    }
    // A --table-size that differs from the data prepared is a silent error in sysbench:
    // ids are drawn from 1..table-size whatever the table holds. Say so.
    let max_id: Option<Option<u64>> = conn.query_first("SELECT MAX(id) FROM sbtest1").await.unwrap_or(None);
    if let Some(Some(max_id)) = max_id.filter(|_| print) {
        let size = options.table_size as u64;
        if size > max_id + max_id / 10 || size * 2 < max_id {
            eprintln!(
                "warning: {}.sbtest1 holds ids up to {max_id} but --table-size is {size}: the run draws ids from 1..{size}; \
                 pass the --table-size the tables were prepared with",
                target.database
            );
        }
    }
    let facts = target::server_facts(&mut conn).await.map_err(|e| Error::Failed(target::short_error(&e)))?;
    let _ = conn.disconnect().await;
    Ok(facts)
}

/// Runs an OLTP workload from `sizeup run` arguments, storing it as it goes.
pub fn run_oltp(
    manager: &Manager,
    results: &std::path::Path,
    a: &RunArgs,
    print: Print,
) -> Result<(RunDocument, Ended), Error> {
    let variant = plan::oltp_variant(&a.workload).map_err(Error::Usage)?;
    let options = plan::oltp_options(&a.oltp).map_err(Error::Usage)?;
    let mut spec = plan::run_spec(a).map_err(Error::Usage)?;
    let (target, instance) = resolve_target(manager, &a.target, "sbtest")?;
    spec.watch_instance(instance.as_ref());
    let server = runtime(1)?.block_on(check_tables(&target, &options, variant.name(), print.full()))?;
    let config = serde_json::json!({
        "sizeup_version": env!("CARGO_PKG_VERSION"),
        "workload": variant.name(),
        "options": options,
        "run": spec,
        "target": target,
        "server": server,
        "host": monitor::host_facts(),
    });
    let workload = Arc::new(Oltp::new(variant, options));
    measure(results, a, print, workload, Measured { name: variant.name(), target, spec, config, tpcc: false })
}

/// What `measure` needs besides the workload.
struct Measured<'a> {
    name: &'a str,
    target: Target,
    spec: exec::RunSpec,
    config: serde_json::Value,
    /// TPC-C's figures and interval lines.
    tpcc: bool,
}

/// Runs a prepared workload, storing the run as it goes, printing as `print` says,
/// and writing `--json`.
fn measure<W: Workload + Send + Sync + 'static>(
    results: &std::path::Path,
    a: &RunArgs,
    print: Print,
    workload: Arc<W>,
    m: Measured,
) -> Result<(RunDocument, Ended), Error> {
    let Measured { name, target, spec, config, tpcc } = m;
    let store = store::Store::open(results)?;
    let run_id = store.begin_run(name, &target.describe(), &config)?;
    if print.full() {
        eprintln!(
            "running {name} on {} with {} {}{} (run {run_id})",
            target.describe(),
            spec.threads,
            if tpcc { "user(s)" } else { "thread(s)" },
            spec.rate.map_or(String::new(), |r| format!(" at {r} tps open loop"))
        );
    }
    let print_lines = print.full() && a.report_interval > 0.0;
    let open_loop = spec.rate.is_some();
    let mut seq = 0;
    let mut store_error = None;
    raise_open_files_limit();
    let outcome = exec::run(workload, &target, &spec, |iv| {
        if print_lines {
            println!("{}", if tpcc { report::tpcc_interval_line(iv) } else { report::interval_line(iv, open_loop) });
        }
        if let Print::Progress(show) = print {
            show(iv);
        }
        if let Err(e) = store.add_interval(run_id, seq, iv) {
            store_error.get_or_insert(e);
        }
        seq += 1;
    });
    let mut outcome = match outcome {
        Ok(o) => o,
        Err(e) => {
            let _ = store.finish_run(run_id, "failed", Some(&e), None, &BTreeMap::new());
            return Err(Error::Failed(e));
        }
    };
    if tpcc {
        tpcc::add_figures(&mut outcome.summary);
    }
    if let Some(e) = store_error {
        eprintln!("warning: some intervals were not stored: {e}");
    }
    let histograms: BTreeMap<String, String> =
        outcome.histograms.iter().map(|(n, h)| (n.clone(), stats::encode_histogram(h))).collect();
    let status = match outcome.ended {
        Ended::Completed => "completed",
        Ended::Interrupted => "interrupted",
        Ended::Failed => "failed",
    };
    store.finish_run(run_id, status, outcome.fatal.as_deref(), Some(&outcome.summary), &histograms)?;
    if print.full() {
        if outcome.summary.seconds == 0.0 && outcome.ended == Ended::Completed {
            eprintln!("warning: the warm-up covered the whole run: nothing was measured");
        }
        print!("{}", report::summary_table(&outcome.summary, &format!("{name} summary (run {run_id}, {status})")));
        if a.histogram {
            let mut all = stats::new_histogram();
            for (_, h) in &outcome.histograms {
                all.add(h).expect("same bounds");
            }
            print!("\n{}", report::latency_histogram(&all));
        }
    }
    let doc = RunDocument {
        id: Some(run_id),
        status: status.to_string(),
        error: outcome.fatal.clone(),
        config,
        summary: Some(outcome.summary),
        intervals: outcome.intervals,
        histograms,
    };
    if let Some(path) = &a.json {
        std::fs::write(path, serde_json::to_string_pretty(&doc).expect("serialisable"))
            .map_err(|e| Error::Failed(format!("cannot write {}: {e}", path.display())))?;
    }
    Ok((doc, outcome.ended))
}

/// Thousands of users need thousands of sockets: lift the soft limit to the hard one.
fn raise_open_files_limit() {
    let mut l = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: plain system calls on a local struct.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut l) == 0 && l.rlim_cur < l.rlim_max {
            l.rlim_cur = l.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &l);
        }
    }
}

/// `sizeup run`: TPC-C or an OLTP workload.
pub fn run_benchmark(
    manager: &Manager,
    results: &std::path::Path,
    a: &RunArgs,
    print: Print,
) -> Result<(RunDocument, Ended), Error> {
    if a.workload == "tpcc" {
        run_tpcc(manager, results, a, print)
    } else {
        run_oltp(manager, results, a, print)
    }
}

fn prepare_tpcc(manager: &Manager, a: &cli::PrepareArgs) -> Result<i32, Error> {
    let warehouses = a.tpcc.warehouses.unwrap_or(1);
    if warehouses == 0 || warehouses > 100_000 {
        return Err(Error::Usage(format!("--warehouses {warehouses}: give 1 or more")));
    }
    let (target, _) = resolve_target(manager, &a.target, "tpcc")?;
    load_tpcc(&target, warehouses, a.threads.unwrap_or_else(loaders), plan::seed(a.oltp.rand_seed))?;
    Ok(0)
}

fn cpus() -> u32 {
    std::thread::available_parallelism().map(|n| n.get() as u32).unwrap_or(2)
}

/// Default loader connections: two per CPU, so a server thread waiting on its log or
/// on our next piece leaves the CPU to another loader (measured on 2 CPUs: 8 x 250k
/// OLTP rows 4.4 s with 2 loaders, 3.9 s with 4; TPC-C 4 warehouses 4.1-4.2 s, 3.9 s).
fn loaders() -> u32 {
    2 * cpus()
}

fn load_tpcc(target: &Target, warehouses: u32, threads: u32, seed: u64) -> Result<(), Error> {
    let threads = threads.max(1);
    report::note(&format!(
        "preparing tpcc: {warehouses} warehouse(s) in {} on {} with {threads} connection(s)",
        target.database,
        target.describe()
    ));
    let rows = Arc::new(AtomicU64::new(0));
    let total = tpcc::load::ROWS_PER_WAREHOUSE * warehouses as u64 + tpcc::load::ITEMS as u64;
    let load = tpcc::load::prepare(target, warehouses, threads, seed, rows.clone());
    let result = with_progress(threads, total, &rows, target, load)?;
    let r = result.map_err(Error::Failed)?;
    report::above_bars(|| {
        println!(
            "prepared tpcc: {} warehouse(s), {} rows, {:.0} MB of row text in {:.1} s ({:.0} rows/s, {})",
            r.warehouses,
            r.rows,
            r.bytes as f64 / 1e6,
            r.seconds,
            r.rows_per_second,
            r.method
        )
    });
    Ok(())
}

/// Loads a run's data when its tables are missing, so a study is one command; tables
/// already there are used as they are (and foreign ones refused by the loaders).
/// Returns whether it loaded anything.
pub fn ensure_prepared(manager: &Manager, a: &RunArgs) -> Result<bool, Error> {
    let tpcc = a.workload == "tpcc";
    let (target, _) = resolve_target(manager, &a.target, if tpcc { "tpcc" } else { "sbtest" })?;
    let names: Vec<String> = if tpcc {
        tpcc::schema::TABLES.iter().map(|t| t.to_string()).collect()
    } else {
        (1..=a.oltp.tables).map(|i| format!("sbtest{i}")).collect()
    };
    let workload_name = if tpcc { "tpcc" } else { a.workload.as_str() };
    let mismatch = runtime(1)?.block_on(async {
        use mysql_async::prelude::Queryable;
        target.ensure_database().await?;
        let mut conn = target.connect().await?;
        let existing = workload::ownership::existing_tables(&mut conn, &target.database, &names, "%")
            .await
            .map_err(Error::Failed)?;
        if existing.is_empty() {
            return Ok(Some(None));
        }
        if existing.len() < names.len() {
            // Loading the rest would mean loading next to tables: only into our own.
            if let Some(refusal) = workload::ownership::refusal(&target.database, &existing, workload_name)
                .filter(|_| existing.iter().any(|t| !t.ours))
            {
                return Err(Error::Failed(refusal));
            }
            return Ok(Some(Some(format!("holds {} of the {} tables this needs", existing.len(), names.len()))));
        }
        // All there (sysbench's tables too): use them if they are the size asked for,
        // since a sweep over other data measures something else.
        let found: Option<u64> = if tpcc {
            conn.query_first("SELECT COUNT(*) FROM warehouse").await.ok().flatten()
        } else {
            conn.query_first("SELECT MAX(id) FROM sbtest1").await.ok().flatten()
        };
        let _ = conn.disconnect().await;
        let (want, what) = if tpcc {
            (a.tpcc.warehouses.map(u64::from), "warehouses")
        } else {
            (Some(a.oltp.table_size as u64), "rows per table")
        };
        Ok(match (found, want) {
            (Some(f), Some(w)) if f.abs_diff(w) * 10 > w => {
                Some(Some(format!("holds {f} {what}, not the {w} asked for")))
            }
            _ => None,
        })
    })?;
    match mismatch {
        None => return Ok(false),
        Some(Some(why)) => {
            return Err(Error::Usage(format!(
                "{} {why}: give this its own database (--database, or `database` under [options] in a study file) \
                 or `sizeup cleanup {workload_name}` first",
                target.database
            )))
        }
        Some(None) => {}
    }
    let seed = plan::seed(a.oltp.rand_seed);
    if tpcc {
        load_tpcc(&target, a.tpcc.warehouses.unwrap_or(1), loaders(), seed)?;
    } else {
        let variant = plan::oltp_variant(&a.workload).map_err(Error::Usage)?;
        let options = plan::oltp_options(&a.oltp).map_err(Error::Usage)?;
        prepare_oltp(&target, variant.name(), &options, loaders(), seed)?;
    }
    Ok(true)
}

fn check_tpcc(manager: &Manager, a: &cli::CleanupArgs) -> Result<i32, Error> {
    if a.workload != "tpcc" {
        return Err(Error::Usage(format!("`sizeup check` knows tpcc only (got '{}')", a.workload)));
    }
    let (target, _) = resolve_target(manager, &a.target, "tpcc")?;
    let rt = runtime(1)?;
    rt.block_on(tpcc_facts(&target, 0))?;
    let outcomes = rt.block_on(tpcc::check::check(&target)).map_err(Error::Failed)?;
    let mut failed = 0;
    for o in &outcomes {
        println!("condition {:>2}: {}  {}", o.number, if o.passed { "pass" } else { "FAIL" }, o.condition);
        if !o.passed {
            failed += 1;
            println!("              {} offending row(s), e.g.:", o.violations);
            for e in &o.examples {
                println!("                {e}");
            }
        }
    }
    println!("{} of {} consistency conditions hold in {}", outcomes.len() - failed, outcomes.len(), target.database);
    Ok(if failed > 0 { 1 } else { 0 })
}

/// What a TPC-C run needs to know of its database: warehouses, the load's C_LAST, and
/// the server facts. Says clearly when the tables are missing or the server cannot
/// take `users` connections.
async fn tpcc_facts(target: &Target, users: u32) -> Result<(u32, Option<u32>, serde_json::Value), Error> {
    use mysql_async::prelude::Queryable;
    let mut conn = target.connect().await.map_err(|e| match e {
        target::ConnectError::Unreachable { ref reason, .. } if reason.contains("1049") => Error::Usage(format!(
            "database {} does not exist on {}: run `sizeup prepare tpcc --warehouses W` first",
            target.database,
            target.describe()
        )),
        other => other.into(),
    })?;
    let facts = target::server_facts(&mut conn).await.map_err(|e| Error::Failed(target::short_error(&e)))?;
    let max: u32 = facts.get("max_connections").and_then(|v| v.as_str()).and_then(|v| v.parse().ok()).unwrap_or(0);
    if max > 0 && users + 1 > max {
        return Err(Error::Usage(format!(
            "{users} users need {users} connections but the server allows {max} (max_connections): \
             raise it (managed: `sizeup server stop` then `sizeup server start --max-connections {}`)",
            users + 10
        )));
    }
    let tables: Vec<(String, String)> = conn
        .exec(
            "SELECT TABLE_NAME, TABLE_COMMENT FROM information_schema.TABLES WHERE TABLE_SCHEMA = ?",
            (&target.database,),
        )
        .await
        .map_err(|e| Error::Failed(target::short_error(&e)))?;
    if let Some(missing) = tpcc::schema::TABLES.iter().find(|t| !tables.iter().any(|(n, _)| n == *t)) {
        return Err(Error::Usage(format!(
            "{}.{missing} does not exist: run `sizeup prepare tpcc --warehouses W` first",
            target.database
        )));
    }
    let c_last = tables.iter().find(|(n, _)| n == "item").and_then(|(_, c)| tpcc::schema::c_last_from_comment(c));
    let warehouses: Option<u32> =
        conn.query_first("SELECT COUNT(*) FROM warehouse").await.map_err(|e| Error::Failed(target::short_error(&e)))?;
    let warehouses = warehouses.unwrap_or(0);
    if warehouses == 0 {
        return Err(Error::Usage(format!(
            "{}.warehouse is empty: run `sizeup prepare tpcc --warehouses W` first",
            target.database
        )));
    }
    let _ = conn.disconnect().await;
    Ok((warehouses, c_last, facts))
}

/// Runs TPC-C from `sizeup run tpcc` arguments.
fn run_tpcc(
    manager: &Manager,
    results: &std::path::Path,
    a: &RunArgs,
    print: Print,
) -> Result<(RunDocument, Ended), Error> {
    let mut a = a.clone();
    if let Some(users) = a.users {
        a.threads = users;
    }
    let mix = tpcc::parse_mix(&a.tpcc.mix).map_err(Error::Usage)?;
    let think_time = a.tpcc.think_time == "spec";
    if think_time && a.rate > 0.0 {
        return Err(Error::Usage(
            "--think-time spec paces each user itself; leave out --rate (or use --think-time none)".into(),
        ));
    }
    let mut spec = plan::run_spec(&a).map_err(Error::Usage)?;
    let (target, instance) = resolve_target(manager, &a.target, "tpcc")?;
    spec.watch_instance(instance.as_ref());
    let (warehouses, c_last, server) = runtime(1)?.block_on(tpcc_facts(&target, spec.threads))?;
    if let Some(w) = a.tpcc.warehouses.filter(|&w| w != warehouses) {
        eprintln!("warning: --warehouses {w} ignored: {} holds {warehouses} warehouse(s)", target.database);
    }
    let constants = tpcc::random::Constants::for_run(&mut random::rng_from_seed(spec.seed ^ 0x7cc), c_last);
    let options = tpcc::TpccOptions {
        warehouses,
        users: spec.threads,
        mix,
        all_warehouses: a.tpcc.all_warehouses,
        think_time,
        constants,
    };
    let config = serde_json::json!({
        "sizeup_version": env!("CARGO_PKG_VERSION"),
        "workload": "tpcc",
        "options": options,
        "run": spec,
        "target": target,
        "server": server,
        "host": monitor::host_facts(),
    });
    let workload = Arc::new(Tpcc { options: Arc::new(options) });
    measure(results, &a, print, workload, Measured { name: "tpcc", target, spec, config, tpcc: true })
}

fn print_document(doc: &RunDocument) {
    let workload = doc.config.get("workload").and_then(|w| w.as_str()).unwrap_or("?");
    println!("run {} — {workload} — {}", doc.id.unwrap_or(0), doc.status);
    if let Some(e) = &doc.error {
        println!("stopped by: {e}");
    }
    let open_loop = doc.config.pointer("/run/rate").is_some_and(|r| !r.is_null());
    for iv in &doc.intervals {
        if workload == "tpcc" {
            println!("{}", report::tpcc_interval_line(iv));
        } else {
            println!("{}", report::interval_line(iv, open_loop));
        }
    }
    if let Some(s) = &doc.summary {
        print!("{}", report::summary_table(s, "summary"));
    }
}

/// The README's first command ends here: a short connection sweep on the managed
/// default instance, stored as a study, so a newcomer sees a finished study within a
/// minute or two. Tables already prepared at the demo's size are reused.
fn demo(manager: &Manager, results: &std::path::Path, a: &cli::DemoArgs) -> Result<i32, Error> {
    let options = [("tables", serde_json::json!(4)), ("table-size", serde_json::json!(a.table_size))];
    let spec = study::spec::StudySpec {
        name: "demo: oltp_read_write connection sweep".into(),
        description: String::new(),
        kind: study::spec::Kind::Sweep,
        workloads: vec!["oltp_read_write".into()],
        levels: study::spec::Levels::List(vec![1, 2, 4, 8]),
        step_time: a.step_time,
        warmup: 1.0,
        repeat: 1,
        sample_interval: 1.0_f64.min(a.step_time),
        steady_last: 1.0,
        stop_when: String::new(),
        options: options.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
        server: Default::default(),
        configs: Vec::new(),
        scale: Default::default(),
        power: Default::default(),
        cost: None,
    };
    let code = study::run(manager, results, &spec, None)?;
    if code == 0 {
        println!("the managed server keeps running (`sizeup server stop`)");
    }
    Ok(code)
}
