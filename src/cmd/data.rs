//! `sizeup prepare|cleanup|check|prewarm`: a workload's data, through its lifecycle.

use super::Context;
use crate::cli::{CheckArgs, CleanupArgs, PrepareArgs, PrewarmArgs, WorkloadArgs};
use crate::runner::{self, resolve_target, runtime};
use crate::target::stall;
use crate::workload::bulk::LoadSettings;
use crate::workload::{self, Optional, Workload};
use crate::{request, Error};

fn workload(name: &str, options: &WorkloadArgs) -> Result<Box<dyn Workload>, Error> {
    workload::build(name, options).map_err(Error::from)
}

/// `sysbench`: started the sysbench way, sizeup's own closing line goes to stderr, so
/// stdout carries what sysbench's does.
pub fn prepare(cx: &Context, a: &PrepareArgs, sysbench: bool) -> Result<i32, Error> {
    let w = workload(&a.workload, &a.workload_args)?;
    let statement_timeout = request::statement_timeout(a.statement_timeout).map_err(Error::from)?;
    this_host_only(&a.target)?;
    let (target, _) = resolve_target(&cx.manager, &a.target, w.kind().default_database())?;
    if a.threads == Some(0) {
        return Err(Error::Usage("--threads must be at least 1 (the connections that load)".into()));
    }
    let loaders = a.threads.or(w.default_loaders()).unwrap_or_else(runner::loaders);
    let load = LoadSettings { method: a.load_method, statement_timeout };
    let line = runner::prepare(&target, &*w, loaders, load, request::seed(a.workload_args.oltp.rand_seed))?;
    say(&line, sysbench);
    Ok(0)
}

pub fn cleanup(cx: &Context, a: &CleanupArgs, sysbench: bool) -> Result<i32, Error> {
    let options = WorkloadArgs { script_options: a.script_options.clone(), ..WorkloadArgs::default() };
    let w = workload(&a.workload, &options)?;
    // A study measuring this server may be using these very tables
    // (cleanup_waits_for_a_running_study: one dropped a plan's table mid-sweep).
    let key = crate::runner::study::measurement_key(&a.target)?;
    if let Some(holder) = cx.manager.measured_by(&key) {
        return Err(Error::Usage(format!(
            "refusing to drop tables while {holder} measures this server: it may be using them. Clean up when it \
             has ended"
        )));
    }
    this_host_only(&a.target)?;
    let (target, _) = resolve_target(&cx.manager, &a.target, w.kind().default_database())?;
    let report = runtime(1)?.block_on(w.cleanup(&target, a.threads.max(1))).map_err(Error::from)?;
    let mut said = format!("dropped {} table(s) in {} on {}", report.dropped.len(), target.database, target.describe());
    if !report.kept.is_empty() {
        said.push_str(&format!("\nleft alone (not created by sizeup): {}", report.kept.join(", ")));
    }
    say(&said, sysbench);
    Ok(0)
}

/// A command's closing line: on stdout, or on stderr when stdout carries sysbench's
/// output alone.
fn say(line: &str, sysbench: bool) {
    match sysbench {
        true => eprintln!("{line}"),
        false => crate::outln!("{line}"),
    }
}

/// The workload's consistency conditions; exit 1 when any fails.
pub fn check(cx: &Context, a: &CheckArgs) -> Result<i32, Error> {
    let w = workload(&a.workload, &WorkloadArgs::default())?;
    if !w.supports(Optional::Check) {
        return Err(Error::Usage(format!("{} has no consistency conditions to check (tpcc has)", w.name())));
    }
    let every = request::statement_timeout(a.watch.statement_timeout).map_err(Error::from)?;
    this_host_only(&a.target)?;
    let (target, _) = resolve_target(&cx.manager, &a.target, w.kind().default_database())?;
    let rt = runtime(1)?;
    // The same check of the data a run makes first, so a missing prepare says so.
    rt.block_on(async {
        let mut conn = target.connect().await.map_err(|e| runner::missing_database(e, &target, &*w))?;
        let id = stall::server_id(&mut conn).await.map_err(Error::from)?;
        let checked = async {
            // The check reads only: others' tables are safe from it.
            runner::check_data(&mut conn, &target.database, &*w, true).await?;
            let spec = crate::exec::RunSpec::default();
            w.start(&mut conn, &target.database, &spec, false).await.map(drop)
        };
        let what = format!("reading the data set in {} ({})", target.database, target.describe());
        stall::watched(&target, id, every, &what, checked).await.map_err(|e| Error::Failed(e.0))??;
        let _ = conn.disconnect().await;
        Ok::<_, Error>(())
    })?;
    let outcomes = rt.block_on(w.check(&target, every)).map_err(Error::from)?;
    let mut failed = 0;
    for o in &outcomes {
        crate::outln!("condition {:>2}: {}  {}", o.number, if o.passed { "pass" } else { "FAIL" }, o.condition);
        if !o.passed {
            failed += 1;
            crate::outln!("              {} offending row(s), e.g.:", o.violations);
            for e in &o.examples {
                crate::outln!("                {e}");
            }
        }
    }
    crate::outln!(
        "{} of {} consistency conditions hold in {}",
        outcomes.len() - failed,
        outcomes.len(),
        target.database
    );
    Ok(if failed > 0 { 1 } else { 0 })
}

pub fn prewarm(cx: &Context, a: &PrewarmArgs) -> Result<i32, Error> {
    let w = workload(&a.workload, &a.workload_args)?;
    if a.script_command.is_none() && !w.supports(Optional::Prewarm) {
        return Err(Error::Usage(format!("`sizeup prewarm` knows the OLTP workloads, not {}", w.name())));
    }
    let every = request::statement_timeout(a.watch.statement_timeout).map_err(Error::from)?;
    this_host_only(&a.target)?;
    let (target, _) = resolve_target(&cx.manager, &a.target, w.kind().default_database())?;
    if let Some(command) = &a.script_command {
        // sysbench's --threads default for a script's command.
        let threads = a.threads.unwrap_or(1).max(1);
        runtime(threads)?.block_on(w.script_command(command, &target, threads, every)).map_err(Error::from)?;
        return Ok(0);
    }
    let threads = a.threads.unwrap_or_else(runner::cpus).max(1);
    let started = std::time::Instant::now();
    runtime(threads)?.block_on(w.prewarm(&target, threads, every)).map_err(Error::from)?;
    crate::outln!("prewarmed {} in {:.1} s", w.data(), started.elapsed().as_secs_f64());
    Ok(0)
}

/// Data commands run from this host: agents drive measured runs only.
fn this_host_only(t: &crate::options::TargetArgs) -> Result<(), Error> {
    if t.agents.is_empty() && t.agents_ssh.is_empty() {
        return Ok(());
    }
    Err(Error::Usage(
        "--agents/--agents-ssh: this command works on the data from this host; agents drive measured runs \
         (run, studies, plans) only: leave them out"
            .into(),
    ))
}
