//! What a benchmark workload is, in two layers:
//!
//! - [`Workload`]: one workload with its options, owning its whole lifecycle as go-tpc's
//!   `Workloader` does: prepare, check what is prepared, start a run (a session per
//!   worker), check consistency, clean up. It also says what sizeup needs around a
//!   run: its default database, its throughput unit, what its levels count. Nothing
//!   outside `src/workload/` asks which workload it is.
//! - [`Sessions`] (defined by `exec`, whose loop drives it): a session per worker, one
//!   transaction at a time. Dispatch there is static: no boxing on the
//!   per-transaction path.
//!
//! [`Kind`] is a workload known by name alone: enough to build one from options and to
//! read a stored result back. A new workload is one module plus one line in [`KINDS`].
pub mod bulk;
pub mod error;
pub mod from_schema;
pub mod oltp;
pub mod ownership;
pub mod replay;
pub mod script;
pub mod tpcc;

use crate::error::Invalid;
use crate::exec::{RunContext, RunResult, RunSpec};
use crate::options::WorkloadArgs;
use crate::stats::{Interval, Summary};
use crate::target::{Target, Targets};
use bulk::LoadSettings;
use futures_util::future::BoxFuture;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::Duration;

pub use crate::exec::session::{Done, Failed, Session, Sessions};
pub use error::DataError;
pub use ownership::CleanupReport;
pub use tpcc::check::Outcome as CheckOutcome;

/// Every workload sizeup knows, one line each.
pub static KINDS: [&dyn Kind; 4] = [&oltp::lifecycle::OLTP, &tpcc::lifecycle::TPCC, &script::SCRIPT, &replay::REPLAY];

/// The workload a name stands for, or a message listing the names there are.
pub fn kind(name: &str) -> Result<&'static dyn Kind, Invalid> {
    KINDS.iter().copied().find(|k| k.accepts(name)).ok_or_else(|| {
        let names: Vec<&str> = KINDS.iter().flat_map(|k| k.names()).collect();
        Invalid::Value(format!("unknown workload '{name}': use one of {}", names.join(", ")))
    })
}

/// The workload of a stored result. Results name a workload this sizeup knows; one
/// it does not (a later release's) reads as transactions per second.
pub fn kind_of_result(name: &str) -> &'static dyn Kind {
    kind(name).unwrap_or(KINDS[0])
}

/// A workload with its options, ready for any step of its lifecycle.
pub fn build(name: &str, options: &WorkloadArgs) -> Result<Box<dyn Workload>, Invalid> {
    kind(name)?.build(name, options)
}

pub use sizeup_model::unit::Unit;

/// A workload known by its name.
pub trait Kind: Sync {
    /// The names it answers to (for messages).
    fn names(&self) -> Vec<&'static str>;
    fn accepts(&self, name: &str) -> bool;
    /// The database it uses when the user names none (sysbench's `sbtest`, `tpcc`).
    fn default_database(&self) -> &'static str;
    fn unit(&self) -> Unit {
        Unit::Tps
    }
    /// What its load levels count: `threads`, or `users` (TPC-C's terminals).
    fn level_name(&self) -> &'static str {
        "threads"
    }
    /// An interval's throughput in [`Kind::unit`].
    fn throughput(&self, iv: &Interval) -> f64 {
        iv.tps
    }
    /// Figures of its own added to a run's summary (NOPM, TPM).
    fn add_figures(&self, _summary: &mut Summary) {}
    /// The run option that sizes the data set: split-data scale studies divide it
    /// over the instances. `None` when sizeup does not size the data (a script's).
    fn data_size(&self) -> Option<DataSize>;
    /// The transaction types a run of `name` reports (what `p90[type]` may name).
    fn transaction_types(&self, name: &str) -> Vec<String>;
    fn build(&self, name: &str, options: &WorkloadArgs) -> Result<Box<dyn Workload>, Invalid>;
}

/// The run option that sizes a workload's data set.
pub struct DataSize {
    /// Its `sizeup run` name, e.g. `warehouses`.
    pub option: &'static str,
    pub default: u32,
    /// A split study's databases are named `<database>_<tag><share>` (tpcc_w2).
    pub tag: &'static str,
}

/// Lifecycle steps only some workloads have.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Optional {
    /// `sizeup check`: consistency conditions.
    Check,
    /// `sizeup prewarm`: read the data into the buffer pool.
    Prewarm,
}

/// How big the data asked for is, to compare with what a database holds.
pub struct SizeCheck {
    pub want: u64,
    /// What the number counts, e.g. "warehouses".
    pub what: &'static str,
    /// One number from the database: how big its data set is.
    pub sql: &'static str,
    /// A count that confirms `sql` before data is refused as too small (MAX(id) is
    /// cheap, but a server may not compare ids as numbers: mysql-mimic said 9 of 50).
    pub confirm: Option<&'static str>,
}

impl SizeCheck {
    /// One rule for data whose size differs from the size asked, for a run and a study
    /// alike (the_data_size_rule_is_one: a sweep refused tables `run` took without a
    /// word). Smaller by more than a tenth is refused: the ids drawn past what is there
    /// find nothing, and the figures would be of empty lookups. Larger by more than a
    /// tenth (oltp_insert grew them) is measured, with a note. Err: the refusal;
    /// Ok(Some): the note.
    pub fn judge(&self, database: &str, found: u64, workload: &str) -> Result<Option<String>, String> {
        let (want, what) = (self.want, self.what);
        if found.abs_diff(want) * 10 <= want {
            return Ok(None);
        }
        match found < want {
            true => Err(format!(
                "{database} holds {found} {what}, not the {want} asked for: what is drawn past {found} finds nothing. \
                 Give the size the data was prepared with, this its own database (--database), or \
                 `sizeup cleanup {workload}` first"
            )),
            false => Ok(Some(format!(
                "{database} holds {found} {what}, more than the {want} asked for (grown by inserts?): the run draws \
                 from the first {want}"
            ))),
        }
    }

    /// [`SizeCheck::judge`] of `found`, a refusal confirmed by `confirm` on `conn`.
    pub async fn judge_on(
        &self,
        conn: &mut mysql_async::Conn,
        found: u64,
        database: &str,
        workload: &str,
    ) -> Result<Option<String>, String> {
        use mysql_async::prelude::Queryable;
        let judged = self.judge(database, found, workload);
        if let (Err(_), Some(sql)) = (&judged, self.confirm) {
            if let Ok(Some(counted)) = conn.query_first::<u64, _>(sql).await {
                return self.judge(database, counted, workload);
            }
        }
        judged
    }
}

/// One workload with its options.
pub trait Workload: Send + Sync {
    /// The name it was built from, e.g. `oltp_read_write`.
    fn name(&self) -> &str;
    fn kind(&self) -> &'static dyn Kind;
    /// The data set in words, e.g. "4 table(s) x 50000 rows".
    fn data(&self) -> String;
    /// Rows a prepare loads (the progress bar's total).
    fn rows_to_load(&self) -> u64;
    /// The tables a prepared data set has.
    fn tables(&self) -> Vec<String>;
    fn size_check(&self) -> Option<SizeCheck>;
    /// The command that loads this data set, for messages.
    fn prepare_hint(&self) -> String;
    /// Loader connections when the user gives none; `None` for two per CPU.
    fn default_loaders(&self) -> Option<u32> {
        None
    }
    /// Server-side prepared statements each connection holds while it runs (checked
    /// against `max_prepared_stmt_count` before a run); 0 when it prepares none up front.
    fn statements_per_connection(&self) -> u32 {
        0
    }
    /// What a finished run's figures say of the run itself, as notes: TPC-C's completed
    /// mix against the specification's minimums. `connections` is the run's.
    fn judge(&self, _summary: &mut Summary, _connections: u32) {}
    /// How a run of it opens fewer connections, where the server allows too few.
    fn fewer_connections(&self) -> String {
        "give fewer --threads".into()
    }
    /// Creates and loads the tables with `loaders` connections sending rows as `load`
    /// says; says what it loaded.
    fn prepare<'a>(
        &'a self,
        target: &'a Target,
        loaders: u32,
        load: LoadSettings,
        seed: u64,
        rows: Arc<AtomicU64>,
    ) -> BoxFuture<'a, Result<String, DataError>>;
    /// Drops the tables sizeup created for this workload, and only those; `threads` is
    /// what a script's cleanup sees as `sysbench.opt.threads`.
    fn cleanup<'a>(&'a self, target: &'a Target, threads: u32) -> BoxFuture<'a, Result<CleanupReport, DataError>>;
    /// Whether it has a step beyond prepare, run and cleanup (asked before anything
    /// is started, so a refused command changes nothing).
    fn supports(&self, _step: Optional) -> bool {
        false
    }
    /// Checks the consistency conditions of its data ([`Optional::Check`]).
    /// Its statements are watched: one waiting for a lock for `statement_timeout`, or on
    /// a server that stopped answering, fails it as stalled.
    fn check<'a>(
        &'a self,
        _target: &'a Target,
        _statement_timeout: Duration,
    ) -> BoxFuture<'a, Result<Vec<CheckOutcome>, DataError>> {
        let name = self.name().to_string();
        Box::pin(async move { Err(Invalid::Value(format!("{name} has no consistency conditions to check")).into()) })
    }
    /// Reads the tables into the buffer pool, as sysbench's `prewarm` ([`Optional::Prewarm`]).
    /// Its statements are watched as [`Workload::check`]'s are.
    fn prewarm<'a>(
        &'a self,
        _target: &'a Target,
        _threads: u32,
        _statement_timeout: Duration,
    ) -> BoxFuture<'a, Result<(), DataError>> {
        let name = self.name().to_string();
        Box::pin(async move { Err(Invalid::Value(format!("{name} has no prewarm")).into()) })
    }
    /// A command of a script's own (`sysbench.cmdline.commands`, sysbench-tpcc's
    /// `check`), run as sysbench runs it; watched as [`Workload::check`]'s statements are.
    fn script_command<'a>(
        &'a self,
        command: &'a str,
        _target: &'a Target,
        _threads: u32,
        _statement_timeout: Duration,
    ) -> BoxFuture<'a, Result<(), DataError>> {
        let name = self.name().to_string();
        Box::pin(
            async move { Err(Invalid::Value(format!("{name} is not a script: it has no command {command}")).into()) },
        )
    }
    /// Run settings this workload cannot honour.
    /// Whether a run changes the data (inserts, updates or deletes).
    fn writes(&self) -> bool {
        true
    }
    fn check_run(&self, _spec: &RunSpec) -> Result<(), Invalid> {
        Ok(())
    }
    /// Checks the prepared data before a run and reads what the run needs of it (say,
    /// how many warehouses there are); `warn` prints mismatches worth a warning.
    fn start<'a>(
        &'a self,
        conn: &'a mut mysql_async::Conn,
        database: &'a str,
        spec: &'a RunSpec,
        warn: bool,
    ) -> BoxFuture<'a, Result<Box<dyn Runnable>, crate::Error>>;
}

/// A workload's sessions with the options its result records: what `start` returns.
pub struct Ready<W> {
    pub sessions: W,
    pub options: serde_json::Value,
}

impl<W: Sessions + Send + Sync + 'static> Runnable for Ready<W> {
    fn options(&self) -> serde_json::Value {
        self.options.clone()
    }
    fn run(
        self: Box<Self>,
        targets: &Targets,
        spec: &RunSpec,
        ctx: &RunContext,
        on_interval: &mut dyn FnMut(&Interval),
    ) -> Result<RunResult, crate::exec::RunError> {
        crate::exec::run(Arc::new(self.sessions), targets, spec, ctx, on_interval)
    }
}

/// A workload checked against its data, ready to run.
pub trait Runnable: Send {
    /// Its options as the result records them.
    fn options(&self) -> serde_json::Value;
    /// Runs it through the one worker loop (`exec::run`).
    fn run(
        self: Box<Self>,
        targets: &Targets,
        spec: &RunSpec,
        ctx: &RunContext,
        on_interval: &mut dyn FnMut(&Interval),
    ) -> Result<RunResult, crate::exec::RunError>;
    /// Asked for sysbench's output: whether the run prints its interval lines itself
    /// (a script's `sysbench.hooks.report_intermediate`, called as sysbench calls it),
    /// so the caller prints none. Asking turns the hook on: ask only when its lines are
    /// wanted (a_scripts_report_hook_is_called_only_for_sysbench_output).
    fn prints_intervals(&mut self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stored result's unit is known from its workload's name alone (the model has
    /// no workload registry): every name a workload accepts must count as it does.
    #[test]
    fn a_stored_results_unit_is_its_workloads() {
        for k in KINDS {
            for name in k.names() {
                assert_eq!(Unit::of(name), k.unit(), "{name}");
            }
        }
        assert_eq!(Unit::of("a_later_release_workload"), Unit::Tps);
    }

    /// A capture leaves out what sizeup itself sent: the size checks every run makes
    /// were captured as the application's (setup_statements_are_marked_as_sizeups).
    #[test]
    fn setup_statements_are_marked_as_sizeups() {
        let mut options = crate::options::WorkloadArgs::default();
        options.tpcc.warehouses = Some(2);
        for name in ["oltp_read_write", "tpcc"] {
            let w = kind(name).unwrap().build(name, &options).unwrap();
            let check = w.size_check().unwrap_or_else(|| panic!("{name}: a size check"));
            assert!(sizeup_model::capture::is_own(check.sql), "{name}: {}", check.sql);
            assert!(check.confirm.is_none_or(sizeup_model::capture::is_own), "{name}");
        }
    }
}
