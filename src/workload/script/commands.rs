//! A script's commands outside a run (`prepare`, `cleanup`, `prewarm`), dispatched as
//! sysbench does: a command listed in `sysbench.cmdline.commands` runs in one state,
//! or in `--threads` states at once (`sysbench.tid` 0..threads-1) when marked
//! `PARALLEL_COMMAND`; otherwise `prepare` and `cleanup` are the script's global
//! functions of those names.
//!
//! Lua states are not `Send`, so a command runs on a thread of its own with a
//! single-threaded runtime; the caller awaits its answer.

use super::state::{Env, Outcome, State};
use super::Script;
use crate::exec::errors::RetryOn;
use crate::random::SharedUniqueIds;
use crate::target::Target;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

/// Runs the script's command `name` with `threads` (`sysbench.opt.threads`), counting
/// bulk-inserted rows into `rows`.
pub async fn run(
    script: Arc<Script>,
    name: &str,
    target: &Target,
    threads: u32,
    rows: Option<Arc<AtomicU64>>,
) -> Result<(), String> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    let (name, target) = (name.to_string(), target.clone());
    std::thread::Builder::new()
        .name(format!("sizeup-{name}"))
        .spawn(move || {
            let result = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
                Ok(rt) => rt.block_on(command(&script, &name, &target, threads.max(1), rows)),
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
) -> Result<(), String> {
    let env = Env {
        opt: super::opt_table(script, threads, None, Some(target)),
        command: name.to_string(),
        connect: Some(target.client_options()),
        retry_on: RetryOn::default(),
        unique: Arc::new(SharedUniqueIds::new(script.command_seed())),
        seed: script.command_seed(),
        rows,
    };
    let main = State::new(script, &env, 0, None)?;
    let failed = || format!("{}: the {name} command failed", script.path);
    if let Some(&(_, parallel)) = script.commands.iter().find(|(c, _)| c == name) {
        if !(parallel && threads > 1) {
            return main.call_command(name).await?.then_some(()).ok_or_else(failed);
        }
        drop(main);
        let states = (0..threads).map(|t| State::new(script, &env, t, None)).collect::<Result<Vec<_>, _>>()?;
        let results = futures_util::future::join_all(states.iter().map(|s| s.call_command(name))).await;
        for r in results {
            r?.then_some(()).ok_or_else(failed)?;
        }
        return Ok(());
    }
    let Some(f) = main.function(name).filter(|_| matches!(name, "prepare" | "cleanup")) else {
        return Err(format!("{} has no {name} command", script.path));
    };
    match main.call(&f, mlua::Value::Nil).await {
        Outcome::Returned(_) => Ok(()),
        Outcome::Restart(_) => Err(main.restart_message()),
        Outcome::Failed(m) => Err(m),
    }
}
