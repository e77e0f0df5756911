//! The measured run, end to end, from a typed [`RunRequest`]: resolve the target, make
//! sure the data is there, record server facts, run the worker loop, store each
//! interval as it comes, print, write `--json`. `sizeup run` and every study step call
//! [`measure`]; nothing here knows which workload it runs.
//!
//! Also the pieces the data commands share with it: resolving a target, loading data
//! with a progress bar, the async runtime. `study` runs whole studies.

pub mod capacity;
pub mod driver;
pub mod memory;
pub mod metrics;
pub mod observe;
pub mod plan;
pub mod study;

use crate::exec::Ended;
use crate::options::TargetArgs;
use crate::request::RunRequest;
use crate::result::{RunConfig, RunDocument};
use crate::server::{self, Manager};
use crate::stats;
use crate::target::stall;
use crate::target::{self, Target};
use crate::workload::bulk::LoadSettings;
use crate::workload::{ownership, Unit, Workload};
use crate::{monitor, option_file, report, store, Error};
pub use observe::Observer;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

/// Runs a request, storing the run as it goes; returns its document and how it ended.
/// Four stages: place it (the servers and what is watched of them), check the servers
/// and the data, execute (store the run, the worker loop, each interval stored as it
/// comes), enrich the outcome, then store and show it.
pub fn measure(
    manager: &Manager,
    results: &Path,
    req: RunRequest,
    observer: &dyn Observer,
) -> Result<(RunDocument, Ended), Error> {
    let RunRequest { workload, options, targets: places, mut spec, output, start_line, write_foreign_tables, .. } = req;
    if let Some(path) = &output.json {
        check_json_path(path)?;
    }
    // A store the run cannot be written to is refused before anything runs.
    store::Store::check_writable(results)?;
    if let Some(addr) = &places[0].metrics_addr {
        metrics::serve(addr)?;
    }
    let agents = crate::agent::fleet::Addresses::of(&places[0]);
    if !agents.is_empty() {
        agents_can_run(&*workload, start_line.is_some())?;
    }
    let mut placed = place(manager, &places, &*workload, &mut spec, observer)?;
    placed.ctx.start_line = start_line;
    let checked = check_servers(&placed.targets, &*workload, &spec, observer, write_foreign_tables)?;
    placed.ctx.watched = checked.watched.clone();
    if !agents.is_empty() {
        placed.ctx.fleet = Some(agents_for(&agents, &*workload, options, &placed.targets, &spec, observer)?);
    }
    // A replica's lag is sampled every interval (and can stop a study: lag>5s).
    spec.replica = checked.replica;
    let mut config = run_config(&placed, &checked, &*workload, &spec);
    let store = store::Store::open(results)?;
    let name = workload.name().to_string();
    let run_id = store.begin_run(&name, &placed.targets.describe(), &config)?;
    let (outcome, store_error) = execute(&placed, checked.ready, &*workload, &spec, observer, results, run_id)?;
    let mut outcome = match outcome {
        Ok(o) => o,
        Err(e) => {
            let _ =
                store.finish_run(run_id, crate::store::Status::Failed, Some(&e.to_string()), None, &BTreeMap::new());
            return Err(e.into());
        }
    };
    enrich(&mut outcome, &mut config, &placed, &checked.conflicts_before, &*workload, &spec, &store, run_id)?;
    let histograms: BTreeMap<String, String> =
        outcome.histograms.iter().map(|(n, h)| (n.clone(), stats::encode_histogram(h))).collect();
    let status = outcome.ended.status();
    // A store that fails (a full disk) must not lose the measurement: the summary is
    // printed and --json written all the same, and the failure said after them.
    let json = if output.json.is_some() { " and --json" } else { "" };
    let stored = match store_error {
        Some((n, t, e)) => {
            let _ = store.finish_run(
                run_id,
                crate::store::Status::Failed,
                Some(&format!("results store failed: {e}")),
                None,
                &histograms,
            );
            Err(format!(
                "the results store failed ({e}): run {run_id} holds its first {n} interval(s), up to {t:.1} s, \
                 and no summary; the summary above{json} has the whole run"
            ))
        }
        None => store
            .finish_run(run_id, status, outcome.fatal.as_deref(), Some(&outcome.summary), &histograms)
            .map_err(|e| {
                format!(
                    "the results store failed ({e}): run {run_id} holds all its intervals but not its summary; \
                     the summary above{json} has it"
                )
            }),
    };
    if metrics::serving() {
        metrics::finished(run_id, &name, &outcome.summary, status == crate::store::Status::Completed);
    }
    observer.finish(&observe::Finished {
        outcome: &outcome,
        config: &config,
        spec: &spec,
        name: &name,
        run_id,
        status,
    });
    let ended = outcome.ended;
    finish(doc_of(run_id, status, outcome, config, histograms), &output, stored, ended)
}

/// Where a run goes: each server, what sizeup manages or watches of it, and what the
/// run learns of its place.
struct Placed {
    /// Each server, its managed instance, and its node of this state directory's
    /// managed cluster.
    servers: Vec<(Target, Option<server::Instance>, Option<crate::server::cluster::Node>)>,
    targets: target::Targets,
    /// A server sizeup did not start, found listening on this host.
    owners: Vec<Option<monitor::owner::Owner>>,
    /// The lab's label of the first server's node (its CPU quota, its link).
    emulated: Option<String>,
    /// Any server of the run restarted after a crash moments ago: a cold figure.
    cold: Option<String>,
    ctx: crate::exec::RunContext,
}

/// Resolves the run's servers and what is watched of them; says what the user should
/// know before it runs.
fn place(
    manager: &Manager,
    places: &[TargetArgs],
    workload: &dyn Workload,
    spec: &mut crate::exec::RunSpec,
    observer: &dyn Observer,
) -> Result<Placed, Error> {
    let kind = workload.kind();
    let mut ctx = crate::exec::RunContext::default();
    // Each server, and what sizeup manages of it: an instance (its CPU and disk are
    // watched), or a node of this state directory's managed cluster (its CPU is
    // watched, and a lab node's result says it was emulated).
    let mut servers = Vec::new();
    for place in places {
        let (target, instance) = resolve_target(manager, place, kind.default_database())?;
        let node = cluster_node(manager, &target);
        servers.push((target, instance, node));
    }
    let targets = target::Targets::new(servers.iter().map(|s| s.0.clone()).collect());
    let (target, instance, node) = (&servers[0].0, servers[0].1.as_ref(), servers[0].2.as_ref());
    // The first server's data device is sampled (a managed instance's).
    ctx.data_dir = instance.map(|i| i.datadir());
    // A server sizeup did not start is watched when it listens on this host: found by
    // its socket or loopback port (a_server_on_this_host_is_watched_not_other_processes).
    let owners: Vec<Option<monitor::owner::Owner>> = servers
        .iter()
        .map(|(t, i, n)| match i.is_none() && n.is_none() {
            true => monitor::owner::find(t.socket.as_deref(), &t.host, t.port),
            false => None,
        })
        .collect();
    ctx.server_pids = servers
        .iter()
        .zip(&owners)
        .map(|((_, i, n), o)| match n {
            Some(n) => n.pid,
            None => i.as_ref().and_then(|i| i.pid).or(o.as_ref().map(|o| o.pid)),
        })
        .collect();
    // The server host's node_exporter: one scrape now, so a wrong address is said before
    // anything runs rather than found as gaps afterwards.
    spec.server_metrics = places[0].server_metrics.clone();
    if let Some(url) = &spec.server_metrics {
        monitor::node::check_url(url).map_err(Error::from)?;
        let r = monitor::node::scrape(url, std::time::Duration::from_secs(5)).map_err(|e| {
            Error::Usage(format!("--server-metrics: {e}; start node_exporter there or leave the option out"))
        })?;
        observer.note(&format!("the server host's figures come from {url} ({} CPUs)", r.cpus));
    }
    if let Some(o) = &owners[0] {
        observer.note(&format!("the server is {}: its CPU is watched as the server's", o.describe()));
    }
    let emulated = node.and_then(|n| n.lab.as_ref()).map(|l| l.label());
    let cold = servers.iter().find_map(|(_, i, n)| {
        i.as_ref().and_then(|i| i.cold_note()).or_else(|| n.as_ref().and_then(|n| n.cold_note.clone()))
    });
    if let Some(note) = &cold {
        observer.note(note);
    }
    for w in target.tls.unused(target.socket.is_some()) {
        observer.warning(&w);
    }
    Ok(Placed { servers, targets, owners, emulated, cold, ctx })
}

/// What checking the servers and the data found.
struct Checked {
    /// The workload, started against the first server's data.
    ready: Box<dyn crate::workload::Runnable>,
    /// The first server's facts (version, settings, the data's size).
    server: target::ServerFacts,
    /// Each Galera node's certification conflicts before the run.
    conflicts_before: Vec<Option<u64>>,
    replica: bool,
    /// Tables of the run's database that sizeup did not make, and what the script
    /// guard must know of the server besides.
    watched: ownership::Watched,
}

/// Checks every server (connections, prepared statements, the data) and starts the
/// workload on the first; each server's checks are watched for a stall.
fn check_servers(
    targets: &target::Targets,
    workload: &dyn Workload,
    spec: &crate::exec::RunSpec,
    observer: &dyn Observer,
    write_foreign_tables: bool,
) -> Result<Checked, Error> {
    // Round robin: each server takes its share of the connections.
    let share = spec.threads.div_ceil(targets.len() as u32);
    runtime(1)?.block_on(async {
        if targets.len() > 1 {
            refuse_writes_to_replicas(targets.all(), workload, ROUND_ROBIN_WRITES).await?;
        }
        let mut conflicts = Vec::new();
        let mut guarded = ownership::Watched::default();
        let mut replica = false;
        let mut first = None;
        for (i, t) in targets.all().iter().enumerate() {
            let mut conn = t.connect().await.map_err(|e| missing_database(e, t, workload))?;
            let id = stall::server_id(&mut conn).await.map_err(Error::from)?;
            // Watched: a table another session holds, or a server that stops answering,
            // fails the run here after a statement timeout instead of holding it forever.
            let checked = async {
                let mut server =
                    target::server_facts(&mut conn).await.map_err(|e| Error::Failed(target::short_error(&e)))?;
                target::record_tls(&mut server, t.negotiated_tls().await.map_err(Error::Failed)?);
                check_connections(&server, share, workload)?;
                guarded.merge(check_data(&mut conn, &t.database, workload, write_foreign_tables).await?);
                check_prepared_statements(&server, share, workload.statements_per_connection())?;
                if i == 0 {
                    let mut server = server.clone();
                    // The data's size beside the buffer pool, in every run's record.
                    if let Some((tables, bytes)) = target::data_size(&mut conn, &t.database).await {
                        server.data = Some(workload.data());
                        server.data_tables = Some(tables);
                        server.data_bytes = Some(bytes);
                    }
                    if server.innodb_unused.is_none() {
                        server.innodb_unused = target::tables_not_innodb(&mut conn, &t.database).await;
                    }
                    first = Some((workload.start(&mut conn, &t.database, spec, observer.warns()).await?, server));
                }
                let galera = server.variable("wsrep_on").as_deref() == Some("ON");
                conflicts.push(if galera { target::galera_conflicts(&mut conn).await } else { None });
                replica |= server.replica;
                Ok::<_, Error>(())
            };
            let what = format!("reading the data set in {} ({})", t.database, t.describe());
            stall::watched(t, id, spec.statement_timeout, &what, checked).await.map_err(|e| Error::Failed(e.0))??;
            let _ = conn.disconnect().await;
        }
        let (ready, server) = first.expect("a run has a server");
        Ok::<_, Error>(Checked { ready, server, conflicts_before: conflicts, replica, watched: guarded })
    })
}

/// What agents cannot run, refused before anything starts: a script or a capture (an
/// agent runs the built-in workloads only), a scale study's client groups.
fn agents_can_run(workload: &dyn Workload, in_a_group: bool) -> Result<(), Error> {
    let name = workload.name();
    if crate::workload::script::is_script(name) || name.ends_with(crate::workload::replay::SUFFIX) {
        return Err(Error::Usage(format!(
            "--agents: {name} runs from this process only (agents run the built-in workloads: oltp_*, tpcc); \
             leave --agents out"
        )));
    }
    if in_a_group {
        return Err(Error::Usage(
            "--agents: a scale study's client groups run at once, one per instance, and agents drive one run at \
             a time; measure instances per server from this host, or each instance count on its own"
                .into(),
        ));
    }
    Ok(())
}

/// The agents that drive the run, reached (once per process), each given the workload
/// and the servers as it reaches them, and its client threads for its share.
fn agents_for(
    agents: &crate::agent::fleet::Addresses,
    workload: &dyn Workload,
    options: crate::options::WorkloadArgs,
    targets: &target::Targets,
    spec: &crate::exec::RunSpec,
    observer: &dyn Observer,
) -> Result<Arc<crate::agent::Fleet>, Error> {
    let name = workload.name();
    let fleet = crate::agent::fleet::shared(agents, &|line| observer.note(line)).map_err(Error::Failed)?;
    let n = fleet.len() as u32;
    if spec.threads < n {
        return Err(Error::Usage(format!(
            "--threads {} cannot be shared by {n} agents: give at least one connection per agent",
            spec.threads
        )));
    }
    let wire = targets
        .all()
        .iter()
        .map(|t| {
            let local = t.socket.is_some() || matches!(t.host.as_str(), "127.0.0.1" | "localhost" | "::1");
            if local && !agents.all_on_loopback() {
                observer.warning(&format!(
                    "the agents reach the server at {}:{}: that is each agent's own host unless they run on this one; \
                     name the server with --host/--port as the agents reach it",
                    t.host, t.port
                ));
            }
            crate::agent::wire::WireTarget {
                host: t.host.clone(),
                port: t.port,
                user: t.user.clone(),
                password: t.password.clone(),
                database: t.database.clone(),
                ssl_mode: Some(t.tls.mode.name().to_string()),
                ssl_ca: t.tls.ca.clone(),
            }
        })
        .collect();
    let threads: Vec<u32> = fleet
        .cpus()
        .iter()
        .enumerate()
        .map(|(i, &cpus)| {
            let share = crate::agent::split(spec.threads as u64, n, i as u32).1 as u32;
            crate::request::default_client_threads(share, cpus, spec.rate.is_some())
        })
        .collect();
    let recipe = crate::agent::fleet::Recipe { workload: name.to_string(), options, targets: wire };
    fleet.set_recipe(recipe, threads);
    Ok(fleet)
}

/// How the run is made, as its result records it.
fn run_config(placed: &Placed, checked: &Checked, workload: &dyn Workload, spec: &crate::exec::RunSpec) -> RunConfig {
    let targets = &placed.targets;
    RunConfig {
        sizeup_version: env!("CARGO_PKG_VERSION").into(),
        workload: workload.name().to_string(),
        options: checked.ready.options(),
        run: spec.clone(),
        target: facts_of(&placed.servers[0].0),
        round_robin: match targets.len() {
            1 => Vec::new(),
            _ => targets.all().iter().map(facts_of).collect(),
        },
        server: target::ServerFacts {
            lab: placed.emulated.clone(),
            lab_cpu_quota: placed.servers[0].2.as_ref().and_then(|n| n.lab.as_ref()?.cpu_quota),
            server_process: placed.owners[0].as_ref().map(|o| o.describe()),
            server_metrics: spec.server_metrics.clone(),
            ..checked.server.clone()
        },
        host: monitor::host_facts(),
    }
}

/// What the worker loop returned, and where the interval writer failed if it did.
type Executed = (Result<crate::exec::RunResult, crate::exec::RunError>, Option<(usize, f64, store::StoreError)>);

/// Runs the worker loop on the stored run `run_id`: each interval goes to the observer
/// and is stored as it comes.
fn execute(
    placed: &Placed,
    mut ready: Box<dyn crate::workload::Runnable>,
    workload: &dyn Workload,
    spec: &crate::exec::RunSpec,
    observer: &dyn Observer,
    results: &Path,
    run_id: i64,
) -> Result<Executed, Error> {
    let kind = workload.kind();
    // A script's call that outlives its bound ends the process: the run says why.
    let last_words = {
        let results = results.to_path_buf();
        crate::exec::last_words::hold(move |why, interrupted| {
            if let Ok(store) = store::Store::open(&results) {
                let status = if interrupted { store::Status::Interrupted } else { store::Status::Failed };
                let _ = store.finish_run(run_id, status, Some(why), None, &BTreeMap::new());
            }
        })
    };
    // Asked only where the observer lets a script report: asking turns the hook on, and
    // in sizeup's own layout the hook is not called (the script is told so).
    let hooked = observer.lets_scripts_report() && ready.prints_intervals();
    observer.start(&observe::Starting {
        name: workload.name(),
        targets: &placed.targets.describe(),
        spec,
        level_word: if kind.level_name() == "users" { "user(s)" } else { "thread(s)" },
        run_id,
        nopm: kind.unit() == Unit::Nopm,
        hook_prints_intervals: hooked,
    });
    let mut seq = 0;
    let writer = store::IntervalWriter::start(results, run_id)?;
    raise_open_files_limit();
    let serving = metrics::serving();
    let outcome = ready.run(&placed.targets, spec, &placed.ctx, &mut |iv| {
        if serving {
            let agents = placed.ctx.fleet.as_ref().map(|f| f.live()).unwrap_or_default();
            metrics::interval(run_id, workload.name(), iv, agents);
        }
        observer.interval(iv);
        writer.add(seq, iv);
        seq += 1;
    });
    drop(last_words);
    Ok((outcome, writer.finish()))
}

/// Adds to the outcome what the worker loop cannot know: the workload's own figures
/// and judgement, counters that never moved, a lab node's quota, Galera's conflicts,
/// a cold server.
#[allow(clippy::too_many_arguments)]
fn enrich(
    outcome: &mut crate::exec::RunResult,
    config: &mut RunConfig,
    placed: &Placed,
    conflicts_before: &[Option<u64>],
    workload: &dyn Workload,
    spec: &crate::exec::RunSpec,
    store: &store::Store,
    run_id: i64,
) -> Result<(), Error> {
    workload.kind().add_figures(&mut outcome.summary);
    workload.judge(&mut outcome.summary, spec.threads);
    // Counters the server reports and never moved while their work ran are no figures:
    // the intervals already stored lose them too, and an InnoDB that did nothing is no
    // pool to weigh the data against (counters_that_never_move_are_absent_not_zero).
    let unmoved = crate::exec::clock::forget_unmoved(&mut outcome.intervals, &mut outcome.summary);
    if unmoved.any() {
        if unmoved.innodb {
            config.server.innodb_unused.get_or_insert_with(|| {
                "its InnoDB counters did not move while the run read rows: no InnoDB underneath".into()
            });
        }
        if let Err(e) = store.settle_run(run_id, config, &outcome.intervals) {
            outcome.summary.observed.notes.push(format!("the results store kept the counters that did not move: {e}"));
        }
    }
    // A lab node is held to its CPU quota: when it ran at the quota, that is its limit,
    // not a client starving it (the host-wide load-generator test cannot see quotas).
    // Round robin over lab nodes: their quotas together.
    let quota: Option<f64> = placed.servers.iter().map(|s| s.2.as_ref()?.lab.as_ref()?.cpu_quota).sum();
    let busy = outcome.summary.observed.os.as_ref().and_then(|o| o.server_cores);
    if let (Some(q), Some(b)) = (quota, busy) {
        if b >= 0.8 * q {
            outcome.summary.observed.notes.retain(|n| !n.starts_with(monitor::os::LOAD_GENERATOR));
            outcome.summary.observed.notes.push(format!("the node ran at its CPU quota ({b:.2} of {q} cores)"));
        }
    }
    if conflicts_before.iter().any(Option::is_some) {
        // Galera: each node's certification conflicts over the run (warm-up included).
        let after: Vec<Option<u64>> = runtime(1)?.block_on(async {
            let mut all = Vec::new();
            for (t, before) in placed.targets.all().iter().zip(conflicts_before) {
                let n = match (before, t.connect_server().await) {
                    (Some(before), Ok(mut conn)) => {
                        let n = target::galera_conflicts(&mut conn).await.map(|a| a.saturating_sub(*before));
                        let _ = conn.disconnect().await;
                        n
                    }
                    _ => None,
                };
                all.push(n);
            }
            all
        });
        outcome.summary.observed.conflicts = after.iter().flatten().copied().reduce(|a, b| a + b);
        for (share, n) in outcome.summary.nodes.iter_mut().zip(&after) {
            share.conflicts = *n;
        }
    }
    // A just-recovered server is cold: the result says so wherever it is shown (a study
    // step's line and level, the report), not only on this terminal.
    if let Some(note) = &placed.cold {
        outcome.summary.observed.notes.push(note.clone());
    }
    Ok(())
}

/// The run's document.
fn doc_of(
    run_id: i64,
    status: store::Status,
    outcome: crate::exec::RunResult,
    config: RunConfig,
    histograms: BTreeMap<String, String>,
) -> RunDocument {
    RunDocument {
        id: Some(run_id),
        status,
        error: outcome.fatal,
        config,
        summary: Some(outcome.summary),
        intervals: outcome.intervals,
        histograms,
    }
}

/// Writes `--json`, then says whether the store kept the run.
fn finish(
    doc: RunDocument,
    output: &crate::request::Output,
    stored: Result<(), String>,
    ended: Ended,
) -> Result<(RunDocument, Ended), Error> {
    if let Some(path) = &output.json {
        let text = serde_json::to_string_pretty(&doc).expect("serialisable");
        if path.as_os_str() == "-" {
            crate::outln!("{text}");
        } else {
            std::fs::write(path, text).map_err(|e| Error::Failed(format!("cannot write {}: {e}", path.display())))?;
        }
    }
    stored.map_err(Error::Failed)?;
    Ok((doc, ended))
}

/// `--json FILE` must be writable before anything runs: a run is not repeated for a
/// typo in a path. `-` is standard output.
pub fn check_json_path(path: &Path) -> Result<(), Error> {
    if path.as_os_str() == "-" {
        return Ok(());
    }
    let bad =
        |why: &str| Err(Error::Usage(format!("--json {}: {why}; give a file in a writable directory", path.display())));
    if path.is_dir() {
        return bad("is a directory");
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if !dir.is_dir() {
        return bad("its directory does not exist");
    }
    let c = std::ffi::CString::new(std::os::unix::ffi::OsStrExt::as_bytes(dir.as_os_str()));
    // SAFETY: access(2) reads a NUL-terminated path.
    let writable = c.is_ok_and(|c| unsafe { libc::access(c.as_ptr(), libc::W_OK) } == 0);
    let file_ok = !path.exists() || std::fs::OpenOptions::new().append(true).open(path).is_ok();
    if !writable || !file_ok {
        return bad("cannot be written");
    }
    Ok(())
}

/// The target as results record it (never the password).
fn facts_of(target: &Target) -> crate::result::TargetFacts {
    serde_json::from_value(serde_json::to_value(target).expect("serialisable")).unwrap_or_default()
}

/// What to do instead of round robin of a writing workload over a primary and replicas.
pub const ROUND_ROBIN_WRITES: &str = "round robin sends writes to every node; use --route split (writes to the \
                                      primary, reads to the replicas) or a read-only workload";

/// Refuses a writing workload on servers one of which is a replica: a replica must take
/// no writes (root passes its read_only, and a replica written to holds other data than
/// its primary while still reporting itself in step). A read-only workload is fine.
/// `how` says how the writes would reach every one of them, and what to do instead.
pub async fn refuse_writes_to_replicas(targets: &[Target], workload: &dyn Workload, how: &str) -> Result<(), Error> {
    if !workload.writes() {
        return Ok(());
    }
    for (i, t) in targets.iter().enumerate() {
        let mut conn = t.connect_server().await?;
        let replica = target::replication_lag(&mut conn).await.is_some();
        let _ = conn.disconnect().await;
        if replica {
            let which = match targets.len() {
                1 => t.place(),
                _ => format!("node {i} ({})", t.place()),
            };
            return Err(Error::Usage(format!("{which} is a replica and {} writes: {how}", workload.name())));
        }
    }
    Ok(())
}

/// Refuses a run whose connections would prepare more statements than the server
/// allows in all (`max_prepared_stmt_count`, error 1461 mid-start otherwise).
fn check_prepared_statements(server: &target::ServerFacts, threads: u32, per_connection: u32) -> Result<(), Error> {
    let max = server.number("max_prepared_stmt_count").unwrap_or(0);
    let need = threads as u64 * per_connection as u64;
    if max > 0 && need > max {
        return Err(Error::Usage(format!(
            "{threads} connections x {per_connection} prepared statements = {need}, more than the server allows \
             ({max}, max_prepared_stmt_count): raise it (`SET GLOBAL max_prepared_stmt_count = {}`, or managed: \
             `sizeup server start --set max_prepared_stmt_count={}`) or use fewer --threads",
            need + 100,
            need + 100
        )));
    }
    Ok(())
}

/// The server's `max_connections` and `max_prepared_stmt_count` (None where it does not
/// say), for a study that sizes its connections to them.
pub fn server_limits(manager: &Manager, req: &RunRequest) -> Result<(Option<u64>, Option<u64>), Error> {
    let workload = &*req.workload;
    let (target, _) = resolve_target(manager, req.target(), workload.kind().default_database())?;
    runtime(1)?.block_on(async {
        let mut conn = target.connect().await.map_err(|e| missing_database(e, &target, workload))?;
        let server = target::server_facts(&mut conn).await.map_err(|e| Error::Failed(target::short_error(&e)))?;
        let _ = conn.disconnect().await;
        Ok((server.number("max_connections"), server.number("max_prepared_stmt_count")))
    })
}

/// The server's connection and prepared-statement limits against `req`'s connections,
/// without running it: what a run checks first, for a study's largest level up front.
pub fn check_limits(manager: &Manager, req: &RunRequest) -> Result<(), Error> {
    let workload = &*req.workload;
    let (target, _) = resolve_target(manager, req.target(), workload.kind().default_database())?;
    let share = req.spec.threads.div_ceil(req.targets.len().max(1) as u32);
    runtime(1)?.block_on(async {
        let mut conn = target.connect().await.map_err(|e| missing_database(e, &target, workload))?;
        let server = target::server_facts(&mut conn).await.map_err(|e| Error::Failed(target::short_error(&e)))?;
        let _ = conn.disconnect().await;
        check_connections(&server, share, workload)?;
        check_prepared_statements(&server, share, workload.statements_per_connection())
    })
}

/// A missing database is a missing prepare: say which command makes it.
pub fn missing_database(e: target::ConnectError, target: &Target, workload: &dyn Workload) -> Error {
    match e {
        e if e.is_unknown_database() => Error::Usage(format!(
            "database {} does not exist on {}: run `{}` first",
            target.database,
            target.describe(),
            workload.prepare_hint()
        )),
        other => other.into(),
    }
}

/// Refuses data a prepare did not finish (tables still marked loading), and a run that
/// writes into tables sizeup did not create (sysbench's, say) unless `write_foreign`
/// (writing_runs_refuse_foreign_tables: `run oltp_delete` emptied another program's
/// `mine.sbtest1` with a one-line note). A script names no tables: the database's
/// foreign ones are returned, for its statements to be checked as it sends them.
pub async fn check_data(
    conn: &mut mysql_async::Conn,
    database: &str,
    workload: &dyn Workload,
    write_foreign: bool,
) -> Result<ownership::Watched, Error> {
    let names = workload.tables();
    if names.is_empty() {
        return match write_foreign || !workload.writes() {
            true => Ok(Default::default()),
            false => ownership::foreign_tables(conn, database).await.map_err(Error::from),
        };
    }
    let existing = ownership::existing_tables(conn, database, &names, "").await.map_err(Error::from)?;
    if let Some(msg) = ownership::incomplete(database, &existing, workload.name()) {
        return Err(Error::Usage(msg));
    }
    let foreign: Vec<&str> = existing.iter().filter(|t| !t.ours).map(|t| t.name.as_str()).collect();
    if workload.writes() && !foreign.is_empty() && !write_foreign {
        return Err(Error::Usage(format!(
            "{} table(s) of {database} ({}{}) were not created by sizeup, and {} changes rows: refusing to \
             write to them. Give the run its own --database, or add --write-foreign-tables to let it change \
             them (sysbench's own tables, for example)",
            foreign.len(),
            foreign[..foreign.len().min(3)].join(", "),
            if foreign.len() > 3 { ", ..." } else { "" },
            workload.name()
        )));
    }
    Ok(Default::default())
}

/// Refuses a run the server cannot take a connection for each of its workers.
fn check_connections(server: &target::ServerFacts, threads: u32, workload: &dyn Workload) -> Result<(), Error> {
    let max = server.number("max_connections").map_or(0, |m| m.min(u32::MAX as u64) as u32);
    connection_limit(threads, max, &workload.fewer_connections())
}

/// Refuses `threads` connections (and sizeup's own watcher) over `max` (0: unknown);
/// `fewer` says how the run could open fewer.
pub fn connection_limit(threads: u32, max: u32, fewer: &str) -> Result<(), Error> {
    if max > 0 && threads + 1 > max {
        return Err(Error::Usage(format!(
            "{threads} connections are more than the server allows ({max}, max_connections): {fewer}, or raise \
             it (managed: `sizeup server stop` then `sizeup server start --max-connections {}`)",
            threads + 10
        )));
    }
    Ok(())
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

/// The server to talk to: the one the user named (on the command line, in an option
/// file or the environment, as the mysql client reads them), or else managed instance
/// N (started with default settings if it is instance 0 and not running). Also returns
/// the managed instance, when sizeup manages it, to measure its CPU and its disk.
/// The managed cluster node `target` names (by socket, or by host and port), if any.
fn cluster_node(manager: &Manager, target: &Target) -> Option<crate::server::cluster::Node> {
    let cluster = crate::server::cluster::Cluster::load(manager.home()).ok()??;
    cluster.nodes.into_iter().find(|n| match (&target.socket, &n.socket) {
        (Some(a), Some(b)) => a == b,
        (Some(_), None) => false,
        (None, _) => n.host == target.host && n.port == target.port,
    })
}

pub fn resolve_target(
    manager: &Manager,
    given: &TargetArgs,
    default_db: &str,
) -> Result<(Target, Option<server::Instance>), Error> {
    let t = &complete_target(given)?;
    let database = t.database.clone().unwrap_or_else(|| default_db.to_string());
    crate::request::check_database(Some(&database)).map_err(Error::from)?;
    if t.names_a_server() {
        let target = Target {
            host: t.host.clone().unwrap_or_else(|| "127.0.0.1".into()),
            port: t.port.unwrap_or(3306),
            socket: t.socket.clone(),
            user: t.user.clone().unwrap_or_else(|| "root".into()),
            password: t.password.clone(),
            database,
            tls: crate::target::Tls::from_args(&t.tls_args()).map_err(Error::from)?,
        };
        // A server named by its socket or loopback port may be one of this state
        // directory's instances: then its CPU and data device are watched too.
        let loopback = matches!(target.host.as_str(), "127.0.0.1" | "localhost" | "::1");
        let ours = manager.status().ok().into_iter().flatten().find(|s| match &target.socket {
            Some(sock) => *sock == s.socket,
            None => loopback && t.port.is_some() && target.port == s.port,
        });
        let instance = match ours {
            Some(s) => manager.running(s.index).ok().flatten(),
            None => None,
        };
        return Ok((target, instance));
    }
    // A start or stop in progress (another sizeup's automatic start) ends before the
    // instance is looked at: its pid is up before its socket is
    // (two_commands_race_on_a_stopped_instance).
    drop(manager.lock()?);
    let instance = match manager.running(t.instance)? {
        Some(i) => i,
        None if t.instance == 0 => {
            // A crashed instance is reported as such by the start below.
            let crashed = manager.status()?.iter().any(|s| s.index == 0 && s.state == server::State::Crashed);
            if !crashed {
                eprintln!("no server named: starting managed MariaDB instance 0 in {}", manager.home().display());
            }
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
        tls: crate::target::Tls::from_args(&t.tls_args()).map_err(Error::from)?,
    };
    Ok((target, Some(instance)))
}

/// The target options completed from option files and the environment.
pub fn complete_target(given: &TargetArgs) -> Result<TargetArgs, Error> {
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    let files = option_file::read(given, home.as_deref()).map_err(Error::from)?;
    option_file::complete(given, &files, &option_file::environment()).map_err(Error::from)
}

pub fn runtime(threads: u32) -> Result<tokio::runtime::Runtime, Error> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads.clamp(1, 8) as usize)
        .enable_all()
        .build()
        .map_err(|e| Error::Failed(format!("cannot start the async runtime: {e}")))
}

pub fn cpus() -> u32 {
    std::thread::available_parallelism().map(|n| n.get() as u32).unwrap_or(2)
}

/// Default loader connections: two per CPU, so a server thread waiting on its log or
/// on our next piece leaves the CPU to another loader (measured on 2 CPUs: 8 x 250k
/// OLTP rows 4.4 s with 2 loaders, 3.9 s with 4; TPC-C 4 warehouses 4.1-4.2 s, 3.9 s).
pub fn loaders() -> u32 {
    2 * cpus()
}

/// Loads a workload's data into `target` with `loaders` connections and a progress bar.
pub fn prepare(
    target: &Target,
    workload: &dyn Workload,
    loaders: u32,
    load: LoadSettings,
    seed: u64,
) -> Result<String, Error> {
    let loaders = loaders.max(1);
    let rt = runtime(loaders)?;
    // Loaders the server cannot take fail mid-load (EAGAIN on its socket): say so first.
    rt.block_on(async {
        let mut conn = target.connect_server().await?;
        let facts = target::server_facts(&mut conn).await.map_err(|e| Error::Failed(target::short_error(&e)));
        let _ = conn.disconnect().await;
        check_connections(&facts?, loaders, workload)
    })?;
    report::note(&format!(
        "preparing {}: {} in {} on {} with {loaders} connection(s)",
        workload.name(),
        workload.data(),
        target.database,
        target.describe()
    ));
    let rows = Arc::new(AtomicU64::new(0));
    let bar = report::rows_bar(workload.rows_to_load(), &format!("{} on {}", target.database, target.describe()));
    let watcher = {
        let (bar, rows) = (bar.clone(), rows.clone());
        rt.spawn(async move {
            loop {
                bar.set_position(rows.load(std::sync::atomic::Ordering::Relaxed));
                crate::timer::sleep(std::time::Duration::from_millis(200)).await;
            }
        })
    };
    let result = rt.block_on(workload.prepare(target, loaders, load, seed, rows));
    watcher.abort();
    bar.finish_and_clear();
    result.map_err(Error::from)
}

/// Loads a run's data when its tables are missing, so a study is one command; tables
/// already there are used as they are (and foreign ones refused by the loaders).
/// Returns whether it loaded anything.
/// A cluster node's copy of the data node 0 holds, awaited without writing to the
/// node (a replica written to stops replicating): a replica waits for node 0's GTID
/// position, a Galera node reads causally (wsrep_sync_wait), then the tables and their
/// size are checked as `ensure_prepared` checks them.
pub fn await_replicated(
    manager: &Manager,
    primary: &TargetArgs,
    workload: &dyn Workload,
    node: &TargetArgs,
    index: usize,
) -> Result<(), Error> {
    use mysql_async::prelude::Queryable;
    const WAIT_S: u32 = 600;
    let db = workload.kind().default_database();
    let ((source, _), (target, _)) = (resolve_target(manager, primary, db)?, resolve_target(manager, node, db)?);
    let names = workload.tables();
    let fail = |why: String| Error::Failed(format!("node {index} ({}): {why}", target.describe()));
    runtime(1)?.block_on(async {
        let mut first = source.connect_server().await?;
        let gtid: Option<String> = first.query_first("SELECT @@global.gtid_binlog_pos").await.ok().flatten();
        let executed: Option<String> = match gtid {
            Some(_) => None,
            None => first.query_first("SELECT @@global.gtid_executed").await.ok().flatten(),
        };
        let _ = first.disconnect().await;
        let mut conn = target.connect_server().await?;
        if crate::target::replication_lag(&mut conn).await.is_some() {
            let waited: Option<Option<i64>> = match (&gtid, &executed) {
                (Some(pos), _) => conn.query_first(format!("SELECT MASTER_GTID_WAIT('{pos}', {WAIT_S})")).await.ok(),
                (None, Some(set)) => {
                    conn.query_first(format!("SELECT WAIT_FOR_EXECUTED_GTID_SET('{set}', {WAIT_S})")).await.ok()
                }
                _ => None,
            };
            if waited.flatten() != Some(0) {
                return Err(fail(format!(
                    "the replica did not reach node 0's GTID position within {WAIT_S} s; is it replicating from node 0?"
                )));
            }
        }
        // Galera: this session's reads wait for everything the cluster committed.
        let _ = conn.query_drop("SET SESSION wsrep_sync_wait = 1").await;
        let existing =
            ownership::existing_tables(&mut conn, &target.database, &names, "").await.map_err(Error::from)?;
        if existing.len() < names.len() {
            return Err(fail(format!(
                "it holds {} of the {} tables node 0 holds in {}: a scale-out study needs one cluster \
                 (Galera, or node 0 and its replicas); independent servers are `sizeup scale --target`",
                existing.len(),
                names.len(),
                target.database
            )));
        }
        if let Some(size) = workload.size_check() {
            let use_db = format!("USE {}", crate::target::quote_ident(&target.database));
            conn.query_drop(use_db).await.map_err(|e| fail(crate::target::short_error(&e)))?;
            let found = size_found(&mut conn, size.sql).await;
            if found != Some(size.want) {
                return Err(fail(format!("it holds {found:?} {}, node 0 {}", size.what, size.want)));
            }
        }
        let _ = conn.disconnect().await;
        Ok(())
    })
}

/// What a workload's size query finds: NULL (MAX(id) of an empty table) is 0, not a
/// panic in the row conversion (empty_tables_panic_studies); None when it failed.
async fn size_found(conn: &mut mysql_async::Conn, sql: &str) -> Option<u64> {
    use mysql_async::prelude::Queryable;
    conn.query_first::<Option<u64>, _>(sql).await.ok().flatten().map(|v| v.unwrap_or(0))
}

/// A request's data beside the server's buffer pool.
pub struct DataAndPool {
    /// The data's size (its database's tables and indexes), bytes.
    pub data: Option<u64>,
    /// The buffer pool, bytes: None when the server did not say or `unused` says why.
    pub pool: Option<u64>,
    /// Why the pool does not hold the data: the storage is not InnoDB
    /// (`target::innodb_unused`); a server's `innodb_buffer_pool_size` then is a
    /// setting of nothing (non_innodb_pool_is_not_applicable).
    pub unused: Option<String>,
}

/// The size of a request's data and the server's buffer pool.
pub fn data_and_pool(manager: &Manager, req: &RunRequest) -> Result<DataAndPool, Error> {
    let (target, _) = resolve_target(manager, req.target(), req.workload.kind().default_database())?;
    runtime(1)?.block_on(async {
        use mysql_async::prelude::Queryable;
        let mut conn = target.connect().await.map_err(|e| missing_database(e, &target, &*req.workload))?;
        let data = crate::target::data_size(&mut conn, &target.database).await.map(|(_, b)| b);
        let unused = crate::target::innodb_unused(&mut conn, &target.database).await;
        let pool: Option<u64> = match unused {
            Some(_) => None,
            None => conn.query_first("SELECT @@innodb_buffer_pool_size").await.ok().flatten(),
        };
        let _ = conn.disconnect().await;
        Ok(DataAndPool { data, pool, unused })
    })
}

pub fn ensure_prepared(manager: &Manager, req: &RunRequest) -> Result<bool, Error> {
    let workload = &*req.workload;
    let (target, _) = resolve_target(manager, req.target(), workload.kind().default_database())?;
    let names = workload.tables();
    if names.is_empty() {
        return Ok(false); // a workload that names no tables (a script) prepares its own
    }
    let mismatch = runtime(1)?.block_on(async {
        target.ensure_database(req.spec.statement_timeout).await?;
        let mut conn = target.connect().await?;
        let existing =
            ownership::existing_tables(&mut conn, &target.database, &names, "").await.map_err(Error::from)?;
        if existing.is_empty() {
            return Ok(Some(None));
        }
        if let Some(msg) = ownership::incomplete(&target.database, &existing, workload.name()) {
            return Err(Error::Usage(msg));
        }
        if existing.len() < names.len() {
            // Loading the rest would mean loading next to tables: only into our own.
            if let Some(refusal) = ownership::refusal(&target.database, &existing, workload.name())
                .filter(|_| existing.iter().any(|t| !t.ours))
            {
                return Err(Error::Failed(refusal));
            }
            return Ok(Some(Some(format!("holds {} of the {} tables this needs", existing.len(), names.len()))));
        }
        // All there (sysbench's tables too): use them if they are the size asked for,
        // since a sweep over other data measures something else.
        let Some(size) = workload.size_check() else { return Ok(None) };
        let found = size_found(&mut conn, size.sql).await;
        let judged = match found {
            Some(f) => size.judge_on(&mut conn, f, &target.database, workload.name()).await,
            None => Ok(None),
        };
        let _ = conn.disconnect().await;
        match judged {
            Err(refused) => Err(Error::Usage(refused)),
            Ok(Some(note)) => {
                report::above_bars(|| eprintln!("note: {note}"));
                Ok(None)
            }
            Ok(None) => Ok(None),
        }
    })?;
    match mismatch {
        None => Ok(false),
        Some(Some(why)) => Err(Error::Usage(format!(
            "{} {why}: give this its own database (--database, or `database` under [options] in a study file) \
             or `sizeup cleanup {}` first",
            target.database,
            workload.name()
        ))),
        Some(None) => {
            let loaders = workload.default_loaders().unwrap_or_else(loaders);
            let load = LoadSettings { method: req.load_method, statement_timeout: req.spec.statement_timeout };
            let line = prepare(&target, workload, loaders, load, req.spec.seed)?;
            report::above_bars(|| crate::outln!("{line}"));
            Ok(true)
        }
    }
}
