//! A script's commands outside a run (`prepare`, `cleanup`, `prewarm`), dispatched as
//! sysbench does: a command listed in `sysbench.cmdline.commands` runs in one state,
//! or in `--threads` states at once (`sysbench.tid` 0..threads-1) when marked
//! `PARALLEL_COMMAND`; otherwise `prepare` and `cleanup` are the script's global
//! functions of those names.
//!
//! Lua states are not `Send`, so a command runs on a thread of its own with a
//! single-threaded runtime; the caller awaits its answer. A parallel command's states
//! each get a thread, as sysbench's do: a script that sleeps (sysbench-tpcc's prepare
//! waits 30 s in every thread) or spends CPU building rows blocks only its own.

use super::state::{Env, Outcome, State, Watch};
use super::Script;
use crate::error::Invalid;
use crate::exec::errors::RetryOn;
use crate::random::SharedUniqueIds;
use crate::target::Target;
use crate::workload::DataError;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::Duration;

/// Runs the script's command `name` with `threads` (`sysbench.opt.threads`), counting
/// bulk-inserted rows into `rows`. A statement waiting for a lock for `every`, or on a
/// server that stopped answering, fails the command as stalled.
pub async fn run(
    script: Arc<Script>,
    name: &str,
    target: &Target,
    threads: u32,
    rows: Option<Arc<AtomicU64>>,
    every: Duration,
) -> Result<(), DataError> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    let (name, target) = (name.to_string(), target.clone());
    std::thread::Builder::new()
        .name(format!("sizeup-{name}"))
        .spawn(move || {
            let result = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
                Ok(rt) => rt.block_on(command(&script, &name, &target, threads.max(1), rows, every)),
                Err(e) => Err(DataError::Task(format!("cannot start a runtime: {e}"))),
            };
            super::state::flush_c_stdout();
            let _ = tx.send(result);
        })
        .map_err(|e| DataError::Task(format!("cannot start a thread for the script: {e}")))?;
    rx.await.unwrap_or_else(|_| Err(DataError::Task("the script's thread ended without an answer".into())))
}

async fn command(
    script: &Arc<Script>,
    name: &str,
    target: &Target,
    threads: u32,
    rows: Option<Arc<AtomicU64>>,
    every: Duration,
) -> Result<(), DataError> {
    let env = Env {
        guard: super::sql::Guard::new(&target.database, foreign_tables(target).await?, super::sql::Guard::COMMAND),
        opt: super::opt_table(script, threads, None, Some(target)),
        command: name.to_string(),
        connect: Some(target.client_options()),
        retry_on: RetryOn::default(),
        unique: Arc::new(SharedUniqueIds::new(script.command_seed())),
        seed: script.command_seed(),
        rows,
        watch: Some(Watch { target: target.clone(), every, what: format!("{}'s {name}", script.path) }),
    };
    let main = State::new(script, &env, 0, None).map_err(DataError::Script)?;
    if let Some(&(_, parallel)) = script.commands.iter().find(|(c, _)| c == name) {
        if !(parallel && threads > 1) {
            let r = main.call_command(name).await;
            return ended(script, name, &[main], vec![r]);
        }
        drop(main);
        return parallel_command(script, name, &env, threads).await;
    }
    let Some(f) = main.function(name).filter(|_| matches!(name, "prepare" | "cleanup")) else {
        return Err(Invalid::Value(format!("{} has no {name} command", script.path)).into());
    };
    let r = match main.call(&format!("{name}()"), &f, mlua::Value::Nil).await {
        Outcome::Returned(_) => Ok(true),
        Outcome::Restart(_) => Err(main.restart_message()),
        Outcome::Failed(m) => Err(m),
    };
    ended(script, name, &[main], vec![r])
}

/// The tables of the target's database sizeup did not make, which a command's
/// statements must not change (none in a database that does not exist yet).
async fn foreign_tables(target: &Target) -> Result<crate::workload::ownership::Watched, DataError> {
    let mut conn = match target.connect().await {
        Ok(c) => c,
        Err(e) if e.is_unknown_database() => return Ok(Default::default()),
        Err(e) => return Err(e.into()),
    };
    let foreign = crate::workload::ownership::foreign_tables(&mut conn, &target.database).await;
    let _ = conn.disconnect().await;
    foreign
}

/// Runs a parallel command in `threads` states, each on a thread of its own; a state
/// whose statement stalled ends the command at once (the others, cancelled, would
/// otherwise run their whole share first).
async fn parallel_command(script: &Arc<Script>, name: &str, env: &Env, threads: u32) -> Result<(), DataError> {
    let (done_tx, mut done_rx) = tokio::sync::mpsc::unbounded_channel();
    let (cancel_tx, cancel_rx) = tokio::sync::watch::channel(false);
    let mut handles = Vec::new();
    for tid in 0..threads {
        let (script, env, name) = (script.clone(), env.clone(), name.to_string());
        let (done, mut cancel) = (done_tx.clone(), cancel_rx.clone());
        let spawned = std::thread::Builder::new().name(format!("sizeup-{name}-{tid}")).spawn(move || {
            let rt = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
                Ok(rt) => rt,
                Err(e) => return drop(done.send((Err(format!("cannot start a runtime: {e}")), None))),
            };
            let state = match State::new(&script, &env, tid, None) {
                Ok(s) => s,
                Err(e) => return drop(done.send((Err(e), None))),
            };
            let result = rt.block_on(async {
                tokio::select! {
                    r = state.call_command(&name) => Some(r),
                    _ = cancel.wait_for(|c| *c) => None,
                }
            });
            super::state::flush_c_stdout();
            let stalled = state.ctx.stalled.borrow_mut().take();
            if let Some(r) = result {
                let _ = done.send((r, stalled));
            }
        });
        handles.push(spawned.map_err(|e| DataError::Task(format!("cannot start a thread for the script: {e}")))?);
    }
    drop(done_tx);
    let mut results = Vec::new();
    let mut outcome = Ok(());
    while let Some((r, stalled)) = done_rx.recv().await {
        if let Some(why) = stalled {
            outcome = Err(DataError::Stalled(why));
            break;
        }
        results.push(r);
    }
    // A stalled command leaves the others cancelled at their next wait (a thread in a
    // script's sleep ends after it); a finished one has threads that are ending.
    let _ = cancel_tx.send(true);
    outcome?;
    for h in handles {
        let _ = h.join();
    }
    said(script, name, results)
}

/// The states' results: a script's error, or a command that said it failed, ends it.
fn said(script: &Script, name: &str, results: Vec<Result<bool, String>>) -> Result<(), DataError> {
    for r in results {
        r.map_err(DataError::Script)?
            .then_some(())
            .ok_or_else(|| DataError::Script(format!("{}: the {name} command failed", script.path)))?;
    }
    Ok(())
}

/// How a command ended, from what its states returned (`Ok(false)`: the command said it
/// failed). A statement that stalled fails it with why, whatever the script made of the
/// error the statement got.
fn ended(script: &Script, name: &str, states: &[State], results: Vec<Result<bool, String>>) -> Result<(), DataError> {
    if let Some(why) = states.iter().find_map(|s| s.ctx.stalled.borrow_mut().take()) {
        return Err(DataError::Stalled(why));
    }
    said(script, name, results)
}
