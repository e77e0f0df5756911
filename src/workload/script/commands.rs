//! A script's commands outside a run (`prepare`, `cleanup`, `prewarm`), dispatched as
//! sysbench does: a command listed in `sysbench.cmdline.commands` runs in one state,
//! or in `--threads` states at once (`sysbench.tid` 0..threads-1) when marked
//! `PARALLEL_COMMAND`; otherwise `prepare` and `cleanup` are the script's global
//! functions of those names.
//!
//! Lua states are not `Send`, so a command runs on a thread of its own with a
//! single-threaded runtime; the caller awaits its answer.

use super::state::{Env, Outcome, State, Watch};
use super::Script;
use crate::exec::errors::RetryOn;
use crate::random::SharedUniqueIds;
use crate::target::Target;
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
) -> Result<(), String> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    let (name, target) = (name.to_string(), target.clone());
    std::thread::Builder::new()
        .name(format!("sizeup-{name}"))
        .spawn(move || {
            let result = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
                Ok(rt) => rt.block_on(command(&script, &name, &target, threads.max(1), rows, every)),
                Err(e) => Err(format!("cannot start a runtime: {e}")),
            };
            super::state::flush_c_stdout();
            let _ = tx.send(result);
        })
        .map_err(|e| format!("cannot start a thread for the script: {e}"))?;
    rx.await.unwrap_or_else(|_| Err("the script's thread ended without an answer".into()))
}

async fn command(
    script: &Script,
    name: &str,
    target: &Target,
    threads: u32,
    rows: Option<Arc<AtomicU64>>,
    every: Duration,
) -> Result<(), String> {
    let env = Env {
        opt: super::opt_table(script, threads, None, Some(target)),
        command: name.to_string(),
        connect: Some(target.client_options()),
        retry_on: RetryOn::default(),
        unique: Arc::new(SharedUniqueIds::new(script.command_seed())),
        seed: script.command_seed(),
        rows,
        watch: Some(Watch { target: target.clone(), every, what: format!("{}'s {name}", script.path) }),
    };
    let main = State::new(script, &env, 0, None)?;
    if let Some(&(_, parallel)) = script.commands.iter().find(|(c, _)| c == name) {
        if !(parallel && threads > 1) {
            let r = main.call_command(name).await;
            return ended(script, name, &[main], vec![r]);
        }
        drop(main);
        let states = (0..threads).map(|t| State::new(script, &env, t, None)).collect::<Result<Vec<_>, _>>()?;
        // As they finish: a state whose statement stalled ends the command at once (the
        // others, cancelled, would otherwise run their whole share first).
        let mut running: futures_util::stream::FuturesUnordered<_> =
            states.iter().map(|s| async move { (s, s.call_command(name).await) }).collect();
        let mut results = Vec::new();
        while let Some((state, r)) = futures_util::StreamExt::next(&mut running).await {
            if let Some(why) = state.ctx.stalled.borrow_mut().take() {
                return Err(why);
            }
            results.push(r);
        }
        drop(running);
        return ended(script, name, &states, results);
    }
    let Some(f) = main.function(name).filter(|_| matches!(name, "prepare" | "cleanup")) else {
        return Err(format!("{} has no {name} command", script.path));
    };
    let r = match main.call(&f, mlua::Value::Nil).await {
        Outcome::Returned(_) => Ok(true),
        Outcome::Restart(_) => Err(main.restart_message()),
        Outcome::Failed(m) => Err(m),
    };
    ended(script, name, &[main], vec![r])
}

/// How a command ended, from what its states returned (`Ok(false)`: the command said it
/// failed). A statement that stalled fails it with why, whatever the script made of the
/// error the statement got.
fn ended(script: &Script, name: &str, states: &[State], results: Vec<Result<bool, String>>) -> Result<(), String> {
    if let Some(why) = states.iter().find_map(|s| s.ctx.stalled.borrow_mut().take()) {
        return Err(why);
    }
    for r in results {
        r?.then_some(()).ok_or_else(|| format!("{}: the {name} command failed", script.path))?;
    }
    Ok(())
}
