//! Custom workloads: unmodified sysbench 1.0.20 Lua scripts (`sizeup run my.lua
//! --my-option=3`), run by sizeup's engine so they get its latency, studies, store and
//! reports. An event is one call of the script's `event()`.
//!
//! The script runs in embedded LuaJIT (mlua, built from source: no system library),
//! one state per worker as sysbench has one per thread, with sysbench's API
//! (`sysbench.opt`, `sysbench.cmdline`, `sysbench.hooks`, `sysbench.rand`,
//! `sysbench.sql`, the error classes) over sizeup's lean client and random numbers.
//!
//! Deliberately not here: a script's own `thread_run()` loop (sizeup's worker loop is
//! the loop), its report hooks (sizeup reports; the hooks are noted and not called),
//! `sysbench.histogram`, drivers other than MySQL. sysbench 0.5's `db_*` API is here as
//! sysbench 1.0 keeps it, in the prelude over `sysbench.sql`.

pub mod options;

mod bound;
mod commands;
mod session;
mod sql;
mod state;

use crate::error::Invalid;
use crate::exec::RunSpec;
use crate::options::WorkloadArgs;
use crate::random::RandOptions;
use crate::target::Target;
use crate::workload::DataError;
use crate::workload::{CleanupReport, DataSize, Kind, Optional, Runnable, SizeCheck, Workload};
use crate::Error;
use futures_util::future::BoxFuture;
use options::{OptValue, OptionDef};
use std::collections::BTreeMap;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::Duration;

/// The sysbench release whose API this is.
pub const SYSBENCH_VERSION: &str = "1.0.20";

/// sysbench's first line (`sysbench 1.0.20 (using system LuaJIT 2.1.0-beta3)`), as
/// sizeup gives it: where a parser looks for sysbench's version, it finds the API's.
pub fn version_line() -> String {
    format!("sysbench {SYSBENCH_VERSION} (sizeup {}, using LuaJIT)", env!("CARGO_PKG_VERSION"))
}

/// A workload name that is a script: a `.lua` file named by a path, or by a name that is
/// not one of the built-in oltp_* names, or that is a file here. `oltp_read_write.lua`
/// with no such file here stays the built-in (sysbench would find its own copy);
/// `./oltp_read_write.lua` or `/usr/share/sysbench/oltp_read_write.lua` is the script.
pub fn is_script(name: &str) -> bool {
    name.ends_with(".lua")
        && (name.contains('/')
            || super::oltp::Variant::from_name(name).is_none()
            || std::path::Path::new(name).is_file())
}

/// A script read and checked: its source, its options, what it defines.
pub struct Script {
    /// As the user named it (messages and `sysbench.cmdline.script_path`).
    pub path: String,
    source: String,
    pub defs: Vec<OptionDef>,
    /// No `sysbench.cmdline.options` (sysbench 0.5 style): every option given is the
    /// script's, as text, and a global too.
    pub legacy: bool,
    /// Its options: the defaults, with the values given over them.
    pub values: BTreeMap<String, OptValue>,
    /// Its custom commands (`sysbench.cmdline.commands`) and whether each is parallel.
    commands: Vec<(String, bool)>,
    has_event: bool,
    /// It sets `sysbench.hooks.report_intermediate`.
    report_hook: bool,
    rand: RandOptions,
    /// `--rand-seed` (0: none given).
    rand_seed: u64,
    /// `--db-ps-mode=disable`.
    text_protocol: bool,
    workload_args: WorkloadArgs,
}

impl Script {
    /// Reads the script and its options (loading it once, as sysbench does before it
    /// reads its command line), with `given` (by sysbench name) over the defaults.
    pub fn load(path: &str, command: &str, args: &WorkloadArgs) -> Result<Script, String> {
        Ok(Script::load_probed(path, command, args)?.0)
    }

    /// As `load`, with the state the script was loaded in (no server), for a command
    /// that runs without one (`help`).
    fn load_probed(path: &str, command: &str, args: &WorkloadArgs) -> Result<(Script, state::State), String> {
        let source = crate::user_file::read_to_string(
            std::path::Path::new(path),
            crate::user_file::TEXT_LIMIT,
            "a Lua script is a few hundred KiB at most",
        )
        .map_err(|e| format!("cannot read the script {path}: {e}"))?;
        let rand = super::oltp::lifecycle::options_of(&args.oltp).map_err(|e| e.to_string())?.rand;
        let mut script = Script {
            path: path.to_string(),
            source,
            defs: Vec::new(),
            legacy: false,
            values: BTreeMap::new(),
            commands: Vec::new(),
            has_event: false,
            report_hook: false,
            rand,
            rand_seed: args.oltp.rand_seed,
            text_protocol: args.db_ps_mode == "disable",
            workload_args: args.clone(),
        };
        let env = state::Env {
            opt: opt_table(&script, 1, None, None),
            command: command.into(),
            connect: None,
            retry_on: Default::default(),
            unique: Arc::new(crate::random::SharedUniqueIds::new(1)),
            seed: 1,
            rows: None,
            watch: None,
            guard: None,
        };
        let probe = state::State::new(&script, &env, 0, None)?;
        let defs = probe.option_defs()?;
        script.legacy = defs.is_none();
        script.defs = defs.unwrap_or_default();
        script.commands = probe.commands();
        script.has_event = probe.function("event").is_some();
        script.report_hook = probe.hook("report_intermediate").is_some();
        script.values = options::values(path, &script.defs, script.legacy, &args.script_options)?;
        Ok((script, probe))
    }

    /// The seed of commands' generators: sysbench seeds nothing before a command, so
    /// its data is the same every time unless a seed is given.
    fn command_seed(&self) -> u32 {
        if self.rand_seed == 0 {
            1
        } else {
            self.rand_seed as u32
        }
    }

    fn has_command(&self, name: &str) -> bool {
        self.commands.iter().any(|(c, _)| c == name)
    }
}

/// The script's options, sorted, to split a command line by (`cli`), read from the
/// script run for `command`, and whether it is a legacy one (no options table).
pub fn option_defs(path: &str, command: &str) -> Result<(Vec<OptionDef>, bool), String> {
    let script = Script::load(path, command, &WorkloadArgs::default())?;
    Ok((script.defs, script.legacy))
}

/// sysbench's `SCRIPT` with no command: the script is loaded (its top-level code runs,
/// with `sysbench.cmdline.command` nil) and nothing more.
pub fn load_alone(path: &str) -> Result<(), String> {
    crate::outln!("{}\n", version_line());
    let loaded = Script::load(path, "", &WorkloadArgs::default());
    state::flush_c_stdout();
    loaded.map(drop)
}

/// sysbench's `SCRIPT help`: the script's own `help()` (a global function or a
/// `help` command) when it has one, else its options; a script with neither does not
/// implement help, as sysbench says. `shown` is the name the user gave.
pub fn help_command(path: &str, shown: &str) -> Result<(), String> {
    crate::outln!("{}\n", version_line());
    let (script, state) = Script::load_probed(path, "help", &WorkloadArgs::default())?;
    let name = shown.rsplit('/').next().unwrap_or(shown);
    let own = state.commands().iter().any(|(c, _)| c == "help");
    if own || state.function("help").is_some() {
        let outcome = if own {
            futures_util::FutureExt::now_or_never(state.call_command("help")).map(|r| r.map(|_| ()))
        } else {
            let f = state.function("help").expect("checked");
            futures_util::FutureExt::now_or_never(state.call("help()", &f, mlua::Value::Nil)).map(|o| match o {
                state::Outcome::Returned(_) => Ok(()),
                state::Outcome::Restart(_) => Err(state.restart_message()),
                state::Outcome::Failed(m) => Err(m),
            })
        };
        state::flush_c_stdout();
        return outcome.unwrap_or_else(|| Err(format!("{name}: help() waited for a server; it has none")));
    }
    match script.legacy || script.defs.is_empty() {
        false => {
            crate::out!("{}", options::help(shown, &script.defs));
            Ok(())
        }
        true => Err(format!("'{name}' test does not implement the 'help' command.")),
    }
}

/// `sysbench.opt`: the script's options, then sysbench's own with sizeup's values.
fn opt_table(
    script: &Script,
    threads: u32,
    spec: Option<&RunSpec>,
    target: Option<&Target>,
) -> Vec<(String, OptValue)> {
    use OptValue::{Bool, List, Number, Text};
    let secs = |d: Option<std::time::Duration>| Number(d.map_or(0.0, |d| d.as_secs_f64()));
    let o = &script.workload_args.oltp;
    let ignore = match spec.map(|s| &s.retry_on) {
        Some(crate::exec::errors::RetryOn::All) => vec!["all".to_string()],
        Some(crate::exec::errors::RetryOn::Codes(c)) => c.iter().map(u16::to_string).collect(),
        None => vec!["1213".into(), "1020".into(), "1205".into()],
    };
    let mut out: Vec<(String, OptValue)> = script.values.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    let own = [
        ("threads", Number(threads as f64)),
        ("events", Number(spec.and_then(|s| s.events).unwrap_or(0) as f64)),
        ("time", secs(spec.and_then(|s| s.time))),
        ("rate", Number(spec.and_then(|s| s.rate).unwrap_or(0.0))),
        ("report_interval", secs(spec.map(|s| s.interval))),
        ("warmup_time", secs(spec.map(|s| s.warmup))),
        ("percentile", Number(spec.map_or(95.0, |s| s.percentile))),
        ("histogram", Bool(false)),
        ("debug", Bool(false)),
        ("validate", Bool(false)),
        ("verbosity", Number(3.0)),
        ("rand_type", Text(o.rand_type.clone())),
        ("rand_spec_iter", Number(o.rand_spec_iter as f64)),
        ("rand_spec_pct", Number(o.rand_spec_pct as f64)),
        ("rand_spec_res", Number(o.rand_spec_res as f64)),
        ("rand_seed", Number(o.rand_seed as f64)),
        ("rand_pareto_h", Number(o.rand_pareto_h)),
        ("rand_zipfian_exp", Number(o.rand_zipfian_exp)),
        ("db_driver", Text("mysql".into())),
        ("db_ps_mode", Text(script.workload_args.db_ps_mode.clone())),
        ("db_debug", Bool(false)),
        ("mysql_host", List(target.map(|t| vec![t.host.clone()]).unwrap_or_default())),
        ("mysql_port", List(target.map(|t| vec![t.port.to_string()]).unwrap_or_default())),
        (
            "mysql_socket",
            List(target.and_then(|t| t.socket.as_ref()).map(|s| vec![s.display().to_string()]).unwrap_or_default()),
        ),
        ("mysql_user", Text(target.map(|t| t.user.clone()).unwrap_or_default())),
        // Never the password: a script has no need of it (its connections are sizeup's).
        ("mysql_password", Text(String::new())),
        ("mysql_db", Text(target.map(|t| t.database.clone()).unwrap_or_default())),
        ("mysql_ignore_errors", List(ignore)),
        ("mysql_dry_run", Bool(false)),
        (
            "mysql_ssl",
            Bool(target.is_some_and(|t| {
                use crate::target::SslMode::*;
                matches!(t.tls.mode, Required | VerifyCa | VerifyIdentity)
            })),
        ),
        ("mysql_ssl_cipher", Text(String::new())),
        ("mysql_compression", Bool(false)),
        ("mysql_debug", Bool(false)),
        ("forced_shutdown", Text("off".into())),
        ("thread_stack_size", Number(65536.0)),
        ("report_checkpoints", List(Vec::new())),
        ("help", Bool(false)),
        ("version", Bool(false)),
        // The deprecated spellings sysbench 0.5 scripts read as globals (num_threads,
        // max_requests, max_time, tx_rate), with the values their new names have.
        ("num_threads", Number(threads as f64)),
        ("max_requests", Number(spec.and_then(|s| s.events).unwrap_or(0) as f64)),
        ("max_time", secs(spec.and_then(|s| s.time))),
        ("tx_rate", Number(spec.and_then(|s| s.rate).unwrap_or(0.0))),
    ];
    for (name, value) in own {
        if !script.values.contains_key(name) {
            out.push((name.to_string(), value));
        }
    }
    out
}

pub struct ScriptKind;
pub static SCRIPT: ScriptKind = ScriptKind;

impl Kind for ScriptKind {
    fn names(&self) -> Vec<&'static str> {
        vec!["path/to/script.lua"]
    }
    fn accepts(&self, name: &str) -> bool {
        is_script(name)
    }
    fn default_database(&self) -> &'static str {
        "sbtest"
    }
    fn data_size(&self) -> Option<DataSize> {
        None // the script sizes its own data
    }
    fn transaction_types(&self, _name: &str) -> Vec<String> {
        vec!["event".into()] // every event() is one transaction, as in sysbench
    }
    fn build(&self, name: &str, options: &WorkloadArgs) -> Result<Box<dyn Workload>, Invalid> {
        Ok(Box::new(ScriptWorkload { script: Arc::new(Script::load(name, "run", options).map_err(Invalid::File)?) }))
    }
}

pub struct ScriptWorkload {
    script: Arc<Script>,
}

impl ScriptWorkload {
    /// The tables of the database, to tell what a cleanup dropped.
    async fn tables(target: &Target) -> Result<Vec<String>, DataError> {
        use mysql_async::prelude::Queryable;
        let mut conn = target.connect().await?;
        let names: Vec<String> =
            conn.query("SHOW TABLES").await.map_err(|e| DataError::sql("listing the tables", &e))?;
        let _ = conn.disconnect().await;
        Ok(names)
    }

    /// Marks the tables of the database not in `before` as made by sizeup (`script`).
    async fn mark_made(target: &Target, before: &[String], script: &str) -> Result<(), DataError> {
        let mut conn = target.connect().await?;
        let marked = crate::workload::ownership::mark_made(&mut conn, &target.database, before, script).await;
        let _ = conn.disconnect().await;
        marked
            .map_err(|e| DataError::Data(format!("{e}: runs that change rows will refuse the tables the prepare made")))
    }
}

impl Workload for ScriptWorkload {
    fn name(&self) -> &str {
        &self.script.path
    }
    fn kind(&self) -> &'static dyn Kind {
        &SCRIPT
    }
    fn data(&self) -> String {
        "the data its prepare command makes".into()
    }
    fn rows_to_load(&self) -> u64 {
        0
    }
    fn tables(&self) -> Vec<String> {
        Vec::new() // only the script knows
    }
    fn size_check(&self) -> Option<SizeCheck> {
        None
    }
    fn prepare_hint(&self) -> String {
        format!("sizeup prepare {} (with the same options)", self.script.path)
    }
    fn default_loaders(&self) -> Option<u32> {
        Some(1) // sysbench's --threads default, which parallel prepare commands split by
    }
    fn prepare<'a>(
        &'a self,
        target: &'a Target,
        loaders: u32,
        load: crate::workload::bulk::LoadSettings,
        _seed: u64,
        rows: Arc<AtomicU64>,
    ) -> BoxFuture<'a, Result<String, DataError>> {
        Box::pin(async move {
            if load.method != crate::workload::bulk::LoadMethod::Auto {
                return Err(Invalid::Value(
                    "--load-method is for tpcc and the built-in OLTP workloads: a script's prepare sends its rows \
                     as the script says; leave it out"
                        .into(),
                )
                .into());
            }
            let started = std::time::Instant::now();
            // As for the built-in workloads, the database is made when missing.
            target.ensure_database(load.statement_timeout).await?;
            let every = load.statement_timeout;
            // The tables the prepare makes become sizeup's, so its runs may write them and
            // its cleanup drop them; marked however the prepare ends (an interrupted one's
            // tables are dropped by cleanup like the rest).
            let before = Self::tables(target).await?;
            let prepared =
                commands::run(self.script.clone(), "prepare", target, loaders, Some(rows.clone()), every).await;
            let marked = Self::mark_made(target, &before, &self.script.path).await;
            prepared?;
            marked?;
            let rows = match rows.load(std::sync::atomic::Ordering::Relaxed) {
                0 => String::new(),
                n => format!(", {n} rows through bulk inserts"),
            };
            Ok(format!("{} prepared in {:.1} s{rows}", self.script.path, started.elapsed().as_secs_f64()))
        })
    }
    fn cleanup<'a>(&'a self, target: &'a Target, threads: u32) -> BoxFuture<'a, Result<CleanupReport, DataError>> {
        Box::pin(async move {
            let before = Self::tables(target).await?;
            let every = Duration::from_secs_f64(crate::exec::DEFAULT_STATEMENT_TIMEOUT);
            commands::run(self.script.clone(), "cleanup", target, threads, None, every).await?;
            let after = Self::tables(target).await?;
            let dropped = before.into_iter().filter(|t| !after.contains(t)).collect();
            Ok(CleanupReport { dropped, kept: Vec::new() })
        })
    }
    fn supports(&self, step: Optional) -> bool {
        step == Optional::Prewarm && self.script.has_command("prewarm")
    }
    fn prewarm<'a>(
        &'a self,
        target: &'a Target,
        threads: u32,
        every: Duration,
    ) -> BoxFuture<'a, Result<(), DataError>> {
        Box::pin(commands::run(self.script.clone(), "prewarm", target, threads, None, every))
    }
    fn script_command<'a>(
        &'a self,
        command: &'a str,
        target: &'a Target,
        threads: u32,
        every: Duration,
    ) -> BoxFuture<'a, Result<(), DataError>> {
        Box::pin(async move {
            if !self.script.has_command(command) {
                let all: Vec<&str> = self.script.commands.iter().map(|(c, _)| c.as_str()).collect();
                return Err(Invalid::Value(format!(
                    "{} has no command {command} (sysbench.cmdline.commands has: {})",
                    self.script.path,
                    if all.is_empty() { "none".to_string() } else { all.join(", ") }
                ))
                .into());
            }
            commands::run(self.script.clone(), command, target, threads, None, every).await
        })
    }
    fn start<'a>(
        &'a self,
        _conn: &'a mut mysql_async::Conn,
        _database: &'a str,
        _spec: &'a RunSpec,
        _warn: bool,
    ) -> BoxFuture<'a, Result<Box<dyn Runnable>, Error>> {
        Box::pin(async move {
            if !self.script.has_event {
                return Err(Error::Usage(format!("cannot find the event() function in {}", self.script.path)));
            }
            let options = serde_json::json!({ "script": self.script.path, "options": self.script.values });
            let run: Box<dyn Runnable> =
                Box::new(session::ScriptRun { script: self.script.clone(), options, report_hook: false });
            Ok(run)
        })
    }
}
