//! The results store: one SQLite file holding every run, written as the run goes
//! (the run row first, then each interval as it is emitted), so a crash or a kill loses
//! nothing already measured. Versioned schema with forward migrations.
//!
//! Passwords never reach it: configs are built from `Target`'s serialised form, which
//! leaves the password out.

use rusqlite::types::{FromSql, FromSqlResult, ToSql, ToSqlOutput, ValueRef};
use rusqlite::{params, Connection, OpenFlags, OptionalExtension};
use sizeup_model::result::RunDocument;
use sizeup_model::stats::{Interval, Summary};
pub use sizeup_model::status::Status;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database file could not be opened or written.
    #[error("results store {path}: {source}")]
    Sql { path: String, source: rusqlite::Error },
    /// The file was written by a newer sizeup.
    #[error("results store {path} has schema version {found}, newer than this sizeup understands ({supported}); upgrade sizeup or use another --results file")]
    TooNew { path: String, found: i64, supported: i64 },
    /// No run with that id.
    #[error("no run {0} in the results store (see `sizeup runs list`)")]
    NoSuchRun(i64),
    /// No plan with that id.
    #[error("no plan {0} in the results store (see `sizeup plan --list`)")]
    NoSuchPlan(i64),
    /// No study with that id.
    #[error("no study {0} in the results store (see `sizeup study list`)")]
    NoSuchStudy(i64),
    /// A command that writes was given a store it cannot write.
    #[error("the results store {path} is read-only ({why}): make it writable, or give --home (or --results) another directory")]
    ReadOnly { path: String, why: String },
    /// A read-only store that cannot be read without writing to it.
    #[error("the results store {path} cannot be read: {why}")]
    Unreadable { path: String, why: String },
    /// The thread that writes a run's intervals could not start.
    #[error("results store {path}: cannot start the thread that writes intervals: {reason}")]
    Writer { path: String, reason: String },
}

impl sizeup_model::error::LayerError for StoreError {}

/// A study as stored: its spec, status, and the steps finished so far.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct StudyRow {
    pub id: i64,
    pub name: String,
    pub kind: String,
    pub started_at: String,
    pub finished_at: Option<String>,
    pub status: Status,
    pub spec: serde_json::Value,
    pub result: Option<serde_json::Value>,
    pub steps: Vec<StepRow>,
}

impl StudyRow {
    /// Why a failed study failed, as stored with it.
    pub fn error(&self) -> Option<&str> {
        self.result.as_ref()?.get("error")?.as_str()
    }
}

/// A purchase plan as stored: its request (`plan::PlanSpec`) and state
/// (`plan::PlanState`: the host, each stage decided and its study).
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct PlanRow {
    pub id: i64,
    pub name: String,
    pub started_at: String,
    pub finished_at: Option<String>,
    /// running, completed, interrupted, failed, abandoned (its process died).
    pub status: Status,
    pub spec: serde_json::Value,
    pub state: serde_json::Value,
}

/// One level-and-repeat of a study.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct StepRow {
    pub series: String,
    pub level: u32,
    pub repeat: u32,
    /// completed, interrupted or failed.
    pub status: Status,
    pub runs: Vec<i64>,
    pub figures: Option<serde_json::Value>,
}

/// Each entry migrates the schema from version i to i + 1.
const MIGRATIONS: &[&str] = &[
    r#"
CREATE TABLE runs (
    id INTEGER PRIMARY KEY,
    started_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')),
    finished_at TEXT,
    workload TEXT NOT NULL,
    target TEXT NOT NULL,
    status TEXT NOT NULL,
    error TEXT,
    config TEXT NOT NULL,
    summary TEXT
);
CREATE TABLE intervals (
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    t REAL NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (run_id, seq)
);
CREATE TABLE histograms (
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    txn_type TEXT NOT NULL,
    hdr TEXT NOT NULL,
    PRIMARY KEY (run_id, txn_type)
);
"#,
    // v2: the recording process, so a run whose process died unfinished reads as abandoned.
    r#"ALTER TABLE runs ADD COLUMN pid INTEGER;"#,
    // v3: studies, and their steps (one row per level and repeat, naming its runs).
    r#"
CREATE TABLE studies (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    kind TEXT NOT NULL,
    started_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')),
    finished_at TEXT,
    status TEXT NOT NULL,
    spec TEXT NOT NULL,
    result TEXT,
    pid INTEGER
);
CREATE TABLE study_steps (
    study_id INTEGER NOT NULL REFERENCES studies(id) ON DELETE CASCADE,
    series TEXT NOT NULL,
    level INTEGER NOT NULL,
    repeat INTEGER NOT NULL,
    status TEXT NOT NULL,
    runs TEXT NOT NULL,
    figures TEXT,
    PRIMARY KEY (study_id, series, level, repeat)
);
"#,
    // v4: purchase plans (`sizeup plan`): the request, and the state its studies left.
    r#"
CREATE TABLE plans (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    started_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')),
    finished_at TEXT,
    status TEXT NOT NULL,
    spec TEXT NOT NULL,
    state TEXT NOT NULL,
    pid INTEGER
);
"#,
];

pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

pub struct Store {
    conn: Connection,
    path: PathBuf,
}

/// A status as the store keeps it, the word every release stored (`completed`), written
/// and read through rusqlite's `ToSql`/`FromSql` (the model's `Status` cannot take
/// rusqlite's traits itself: neither is this crate's). A word no release wrote reads
/// as failed.
struct Stored(Status);

impl ToSql for Stored {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(ToSqlOutput::from(self.0.as_str()))
    }
}

impl FromSql for Stored {
    fn column_result(value: ValueRef<'_>) -> FromSqlResult<Self> {
        value.as_str().map(|word| Stored(Status::stored(word)))
    }
}

/// A run still marked running whose recording process is gone was cut off (killed, or
/// the machine stopped): it reads as `abandoned`. Its intervals so far are kept.
fn live_status(Stored(status): Stored, pid: Option<i64>) -> Status {
    let gone = |pid: i64| pid != std::process::id() as i64 && std::fs::metadata(format!("/proc/{pid}")).is_err();
    match pid {
        Some(pid) if status == Status::Running && gone(pid) => Status::Abandoned,
        _ => status,
    }
}

/// The store's schema version; a later release's store is refused, not misread.
fn schema_version(conn: &Connection, path: &Path) -> Result<i64, StoreError> {
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .map_err(|source| StoreError::Sql { path: path.display().to_string(), source })?;
    if version > SCHEMA_VERSION {
        return Err(StoreError::TooNew { path: path.display().to_string(), found: version, supported: SCHEMA_VERSION });
    }
    Ok(version)
}

/// One line of `sizeup runs list`.
#[derive(Debug, Clone, serde::Serialize)]
pub struct RunRow {
    pub id: i64,
    pub started_at: String,
    pub workload: String,
    pub target: String,
    pub status: Status,
    pub threads: Option<u64>,
    pub tps: Option<f64>,
    pub p95_ms: Option<f64>,
    /// "outage" or "stall" when the server was lost or stalled during the run: its
    /// figures are no capacity figure.
    pub fault: Option<&'static str>,
}

/// A run's intervals, written to the store by a thread of their own. The measuring
/// loop closes each interval (its CPU and OS figures, the warm-up's CPU baseline) as
/// the client threads hand it over; a write that waits on the disk there shifts those
/// figures. Measured on the 2-core box during a test run: the store's fsync took 0.3 to
/// 3.2 s, and a scale step's group then took its warm-up CPU baseline at the run's end.
pub struct IntervalWriter {
    tx: Option<std::sync::mpsc::Sender<(usize, Interval)>>,
    thread: Option<std::thread::JoinHandle<Option<(usize, f64, StoreError)>>>,
}

impl IntervalWriter {
    /// Writes into run `run` of the store at `path` (a connection of its own).
    pub fn start(path: &Path, run: i64) -> Result<IntervalWriter, StoreError> {
        let store = Store::open(path)?;
        let (tx, rx) = std::sync::mpsc::channel::<(usize, Interval)>();
        let thread = std::thread::Builder::new()
            .name("sizeup-store".into())
            .spawn(move || {
                for (seq, iv) in rx {
                    if let Err(e) = store.add_interval(run, seq, &iv) {
                        // The first failure: the stored intervals stop here (no later one
                        // is tried, so the store holds an unbroken prefix of the run).
                        return Some((seq, iv.t - iv.duration, e));
                    }
                }
                None
            })
            .map_err(|e| StoreError::Writer { path: path.display().to_string(), reason: e.to_string() })?;
        Ok(IntervalWriter { tx: Some(tx), thread: Some(thread) })
    }

    /// Queues interval number `seq` (after a failure it is dropped).
    pub fn add(&self, seq: usize, iv: &Interval) {
        if let Some(tx) = &self.tx {
            let _ = tx.send((seq, iv.clone()));
        }
    }

    /// Waits for every queued interval to be written; the first failure, if any: its
    /// interval number, the time the stored prefix reaches, and the error.
    pub fn finish(mut self) -> Option<(usize, f64, StoreError)> {
        self.tx = None;
        self.thread.take().and_then(|t| t.join().ok().flatten())
    }
}

impl Store {
    /// The store for a command that writes (runs, studies), created if missing. A store
    /// it cannot write is refused here, with the reason: SQLite would open it for reading
    /// and fail at the first write ("attempt to write a readonly database").
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        let err = |source| StoreError::Sql { path: path.display().to_string(), source };
        if let Some(dir) = path.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        Self::check_writable(path)?;
        let conn = Connection::open(path).map_err(err)?;
        if conn.is_readonly(rusqlite::MAIN_DB).map_err(err)? {
            let why = "SQLite could open it only for reading".to_string();
            return Err(StoreError::ReadOnly { path: path.display().to_string(), why });
        }
        Self::with_schema(conn, path)
    }

    /// Refuses a store that cannot be written (the file, or its directory, where SQLite
    /// keeps the -wal and -shm files beside it), without creating or opening it: a
    /// command that writes checks this before it does any work.
    pub fn check_writable(path: &Path) -> Result<(), StoreError> {
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        let file = path.exists().then_some(path);
        for p in file.into_iter().chain([dir]) {
            if let Some(why) = unwritable(p, p == dir) {
                return Err(StoreError::ReadOnly { path: path.display().to_string(), why });
            }
        }
        Ok(())
    }

    /// The store for a command that only reads (listings, reports, comparisons, sizing):
    /// opened read-only, so it writes nothing and works on a read-only file or file
    /// system. A missing store reads as an empty one and is not created.
    pub fn open_read_only(path: &Path) -> Result<Store, StoreError> {
        let err = |source| StoreError::Sql { path: path.display().to_string(), source };
        if !path.exists() {
            return Self::with_schema(Connection::open_in_memory().map_err(err)?, path);
        }
        let conn = Self::open_for_reading(path)?;
        conn.busy_timeout(std::time::Duration::from_secs(10)).map_err(err)?;
        let version = schema_version(&conn, path)?;
        if version < SCHEMA_VERSION {
            // An older store is upgraded once, by whichever command opens it first: the
            // reading queries name the newer columns and tables.
            drop(conn);
            return match Self::check_writable(path) {
                Ok(()) => Self::open(path),
                Err(StoreError::ReadOnly { why, .. }) => Err(StoreError::Unreadable {
                    path: path.display().to_string(),
                    why: format!(
                        "it has schema version {version}, older than this sizeup reads ({SCHEMA_VERSION}), and is \
                         read-only ({why}), so it cannot be upgraded: make it writable once (any sizeup command \
                         then upgrades it)"
                    ),
                }),
                Err(e) => Err(e),
            };
        }
        Ok(Store { conn, path: path.to_path_buf() })
    }

    /// A read-only connection. The store is in WAL mode, whose readers need the -shm
    /// file beside the store: on a directory that cannot be written, where SQLite can
    /// neither create it nor find it, the store is opened `immutable` (no -shm, no
    /// locks: nothing can change a file there). Immutable reads skip the -wal file, so
    /// a store left with one (not closed cleanly) is refused rather than read short.
    fn open_for_reading(path: &Path) -> Result<Connection, StoreError> {
        let err = |source| StoreError::Sql { path: path.display().to_string(), source };
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(path, flags).map_err(err)?;
        // Opening reads nothing yet: the first query is what needs the -shm file.
        let probe = conn.query_row("PRAGMA schema_version", [], |r| r.get::<_, i64>(0));
        // Without a -shm file it may create, SQLite says "unable to open database file"
        // (a read-only file system) or "attempt to write a readonly database" (a
        // directory of another user's).
        let cantopen = match probe {
            Ok(_) => return Ok(conn),
            Err(rusqlite::Error::SqliteFailure(e, _)) => {
                matches!(e.code, rusqlite::ErrorCode::CannotOpen | rusqlite::ErrorCode::ReadOnly)
            }
            Err(_) => false,
        };
        let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        let shm = sibling(path, "-shm");
        if !cantopen || shm.exists() || unwritable(dir, true).is_none() {
            return probe.map(|_| conn).map_err(err);
        }
        let wal = sibling(path, "-wal");
        if std::fs::metadata(&wal).is_ok_and(|m| m.len() > 0) {
            return Err(StoreError::Unreadable {
                path: path.display().to_string(),
                why: format!(
                    "it is read-only, and its write-ahead log {} holds changes not yet in it (it was not closed \
                     cleanly), which SQLite \
                     reads only with a {} file it cannot create there: copy the store's files to a writable \
                     directory and give that to --results",
                    wal.display(),
                    shm.display()
                ),
            });
        }
        drop(conn);
        let conn =
            Connection::open_with_flags(uri(path, "immutable=1"), flags | OpenFlags::SQLITE_OPEN_URI).map_err(err)?;
        conn.query_row("PRAGMA schema_version", [], |r| r.get::<_, i64>(0)).map_err(err)?;
        Ok(conn)
    }

    fn with_schema(mut conn: Connection, path: &Path) -> Result<Store, StoreError> {
        let err = |source| StoreError::Sql { path: path.display().to_string(), source };
        conn.busy_timeout(std::time::Duration::from_secs(10)).map_err(err)?;
        // Switching a new file to WAL while another process does the same can answer
        // "database is locked" at once, past the busy handler (SQLite's deadlock
        // avoidance): retried for up to 10 s (a_new_store_opened_by_many_at_once_is_migrated_once).
        let mut tries = 0;
        while let Err(e) = conn.pragma_update(None, "journal_mode", "WAL") {
            let busy = matches!(
                e.sqlite_error_code(),
                Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
            );
            tries += 1;
            if !busy || tries > 1000 {
                return Err(err(e));
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        conn.pragma_update(None, "foreign_keys", "ON").map_err(err)?;
        if schema_version(&conn, path)? < SCHEMA_VERSION {
            // Under the write lock, the version read again: two processes opening a new
            // store at once would otherwise both migrate it, the second failing on
            // "table studies already exists" (two_commands_race_on_a_stopped_instance).
            let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate).map_err(err)?;
            let version = schema_version(&tx, path)?;
            for sql in MIGRATIONS.iter().skip(version as usize) {
                tx.execute_batch(sql).map_err(err)?;
            }
            tx.pragma_update(None, "user_version", SCHEMA_VERSION).map_err(err)?;
            tx.commit().map_err(err)?;
        }
        Ok(Store { conn, path: path.to_path_buf() })
    }

    fn err(&self, source: rusqlite::Error) -> StoreError {
        StoreError::Sql { path: self.path.display().to_string(), source }
    }

    pub fn begin_run(
        &self,
        workload: &str,
        target: &str,
        config: &sizeup_model::result::RunConfig,
    ) -> Result<i64, StoreError> {
        let config = serde_json::to_string(config).expect("serialisable");
        self.conn
            .execute(
                "INSERT INTO runs (workload, target, status, config, pid) VALUES (?1, ?2, ?5, ?3, ?4)",
                params![workload, target, config, std::process::id(), Stored(Status::Running)],
            )
            .map_err(|e| self.err(e))?;
        Ok(self.conn.last_insert_rowid())
    }

    pub fn add_interval(&self, run: i64, seq: usize, iv: &Interval) -> Result<(), StoreError> {
        let data = serde_json::to_string(iv).expect("serialisable");
        self.conn
            .execute(
                "INSERT INTO intervals (run_id, seq, t, data) VALUES (?1, ?2, ?3, ?4)",
                params![run, seq as i64, iv.t, data],
            )
            .map_err(|e| self.err(e))?;
        Ok(())
    }

    /// What a run's end learned about its server, written over what its start stored:
    /// the facts and the intervals (counters found not to move are left out of both).
    pub fn settle_run(
        &self,
        run: i64,
        config: &sizeup_model::result::RunConfig,
        intervals: &[Interval],
    ) -> Result<(), StoreError> {
        let tx = self.conn.unchecked_transaction().map_err(|e| self.err(e))?;
        let config = serde_json::to_string(config).expect("serialisable");
        tx.execute("UPDATE runs SET config = ?2 WHERE id = ?1", params![run, config]).map_err(|e| self.err(e))?;
        for (seq, iv) in intervals.iter().enumerate() {
            let data = serde_json::to_string(iv).expect("serialisable");
            tx.execute("UPDATE intervals SET data = ?3 WHERE run_id = ?1 AND seq = ?2", params![run, seq as i64, data])
                .map_err(|e| self.err(e))?;
        }
        tx.commit().map_err(|e| self.err(e))
    }

    pub fn finish_run(
        &self,
        run: i64,
        status: Status,
        error: Option<&str>,
        summary: Option<&Summary>,
        histograms: &BTreeMap<String, String>,
    ) -> Result<(), StoreError> {
        let summary = summary.map(|s| serde_json::to_string(s).expect("serialisable"));
        let tx = self.conn.unchecked_transaction().map_err(|e| self.err(e))?;
        tx.execute(
            "UPDATE runs SET status = ?2, error = ?3, summary = ?4, finished_at = strftime('%Y-%m-%dT%H:%M:%SZ','now') WHERE id = ?1",
            params![run, Stored(status), error, summary],
        )
        .map_err(|e| self.err(e))?;
        for (name, hdr) in histograms {
            tx.execute(
                "INSERT OR REPLACE INTO histograms (run_id, txn_type, hdr) VALUES (?1, ?2, ?3)",
                params![run, name, hdr],
            )
            .map_err(|e| self.err(e))?;
        }
        tx.commit().map_err(|e| self.err(e))
    }

    pub fn list_runs(&self) -> Result<Vec<RunRow>, StoreError> {
        let mut st = self
            .conn
            .prepare("SELECT id, started_at, workload, target, status, config, summary, pid FROM runs ORDER BY id")
            .map_err(|e| self.err(e))?;
        let rows = st
            .query_map([], |r| {
                let config: String = r.get(5)?;
                let summary: Option<String> = r.get(6)?;
                let config: sizeup_model::result::RunConfig = serde_json::from_str(&config).unwrap_or_default();
                let summary: Option<Summary> = summary.and_then(|s| serde_json::from_str(&s).ok());
                Ok(RunRow {
                    id: r.get(0)?,
                    started_at: r.get(1)?,
                    workload: r.get(2)?,
                    target: r.get(3)?,
                    status: live_status(r.get(4)?, r.get(7)?),
                    threads: Some(config.run.threads as u64),
                    tps: summary.as_ref().map(|s| s.tps),
                    p95_ms: summary.as_ref().map(|s| s.latency_ms.p95),
                    fault: summary.as_ref().and_then(|s| s.fault()),
                })
            })
            .map_err(|e| self.err(e))?;
        rows.collect::<Result<Vec<_>, _>>().map_err(|e| self.err(e))
    }

    pub fn begin_study(&self, name: &str, kind: &str, spec: &serde_json::Value) -> Result<i64, StoreError> {
        self.conn
            .execute(
                "INSERT INTO studies (name, kind, status, spec, pid) VALUES (?1, ?2, ?5, ?3, ?4)",
                params![name, kind, spec.to_string(), std::process::id(), Stored(Status::Running)],
            )
            .map_err(|e| self.err(e))?;
        Ok(self.conn.last_insert_rowid())
    }

    /// Marks a study running (again, from this process), or finished with `result`.
    pub fn set_study_status(
        &self,
        id: i64,
        status: Status,
        result: Option<&serde_json::Value>,
    ) -> Result<(), StoreError> {
        let finished = status.finished();
        self.conn
            .execute(
                "UPDATE studies SET status = ?2, result = COALESCE(?3, result), pid = ?4, \
                 finished_at = CASE WHEN ?5 THEN strftime('%Y-%m-%dT%H:%M:%SZ','now') END WHERE id = ?1",
                params![id, Stored(status), result.map(|r| r.to_string()), std::process::id(), finished],
            )
            .map_err(|e| self.err(e))?;
        Ok(())
    }

    /// Records (or replaces: a rerun of an interrupted step) one step of a study.
    pub fn record_step(&self, id: i64, step: &StepRow) -> Result<(), StoreError> {
        self.conn
            .execute(
                "INSERT OR REPLACE INTO study_steps (study_id, series, level, repeat, status, runs, figures) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                params![
                    id,
                    step.series,
                    step.level,
                    step.repeat,
                    Stored(step.status),
                    serde_json::to_string(&step.runs).expect("serialisable"),
                    step.figures.as_ref().map(|f| f.to_string())
                ],
            )
            .map_err(|e| self.err(e))?;
        Ok(())
    }

    pub fn begin_plan(&self, name: &str, spec: &serde_json::Value) -> Result<i64, StoreError> {
        self.conn
            .execute(
                "INSERT INTO plans (name, status, spec, state, pid) VALUES (?1, ?4, ?2, '{}', ?3)",
                params![name, spec.to_string(), std::process::id(), Stored(Status::Running)],
            )
            .map_err(|e| self.err(e))?;
        Ok(self.conn.last_insert_rowid())
    }

    /// Stores a plan's state and status (running again from this process, or finished).
    pub fn set_plan(&self, id: i64, status: Status, state: &serde_json::Value) -> Result<(), StoreError> {
        let finished = status.finished();
        self.conn
            .execute(
                "UPDATE plans SET status = ?2, state = ?3, pid = ?4, \
                 finished_at = CASE WHEN ?5 THEN strftime('%Y-%m-%dT%H:%M:%SZ','now') END WHERE id = ?1",
                params![id, Stored(status), state.to_string(), std::process::id(), finished],
            )
            .map_err(|e| self.err(e))?;
        Ok(())
    }

    pub fn load_plan(&self, id: i64) -> Result<PlanRow, StoreError> {
        self.conn
            .query_row(
                "SELECT id, name, started_at, finished_at, status, spec, state, pid FROM plans WHERE id = ?1",
                [id],
                |r| {
                    let json = |i: usize| -> rusqlite::Result<serde_json::Value> {
                        let t: String = r.get(i)?;
                        Ok(serde_json::from_str(&t).unwrap_or(serde_json::Value::Null))
                    };
                    Ok(PlanRow {
                        id: r.get(0)?,
                        name: r.get(1)?,
                        started_at: r.get(2)?,
                        finished_at: r.get(3)?,
                        status: live_status(r.get(4)?, r.get(7)?),
                        spec: json(5)?,
                        state: json(6)?,
                    })
                },
            )
            .optional()
            .map_err(|e| self.err(e))?
            .ok_or(StoreError::NoSuchPlan(id))
    }

    pub fn list_plans(&self) -> Result<Vec<PlanRow>, StoreError> {
        self.ids("SELECT id FROM plans ORDER BY id")?.into_iter().map(|id| self.load_plan(id)).collect()
    }

    /// The ids a query lists, in its order.
    fn ids(&self, sql: &str) -> Result<Vec<i64>, StoreError> {
        let mut st = self.conn.prepare(sql).map_err(|e| self.err(e))?;
        let rows = st.query_map([], |r| r.get(0)).map_err(|e| self.err(e))?;
        rows.collect::<Result<_, _>>().map_err(|e| self.err(e))
    }

    /// The last study of that name (a plan's studies are named after the plan and stage).
    pub fn study_named(&self, name: &str) -> Result<Option<i64>, StoreError> {
        self.conn
            .query_row("SELECT max(id) FROM studies WHERE name = ?1", [name], |r| r.get(0))
            .map_err(|e| self.err(e))
    }

    pub fn list_studies(&self) -> Result<Vec<StudyRow>, StoreError> {
        self.ids("SELECT id FROM studies ORDER BY id")?.into_iter().map(|id| self.load_study(id)).collect()
    }

    pub fn load_study(&self, id: i64) -> Result<StudyRow, StoreError> {
        type Head = (String, String, String, Option<String>, Status, String, Option<String>);
        let head: Option<Head> = self
            .conn
            .query_row(
                "SELECT name, kind, started_at, finished_at, status, spec, result, pid FROM studies WHERE id = ?1",
                [id],
                |r| {
                    Ok((
                        r.get(0)?,
                        r.get(1)?,
                        r.get(2)?,
                        r.get(3)?,
                        live_status(r.get(4)?, r.get(7)?),
                        r.get(5)?,
                        r.get(6)?,
                    ))
                },
            )
            .optional()
            .map_err(|e| self.err(e))?;
        let (name, kind, started_at, finished_at, status, spec, result) = head.ok_or(StoreError::NoSuchStudy(id))?;
        let mut st = self
            .conn
            .prepare(
                "SELECT series, level, repeat, status, runs, figures FROM study_steps WHERE study_id = ?1 \
                 ORDER BY rowid",
            )
            .map_err(|e| self.err(e))?;
        let steps = st
            .query_map([id], |r| {
                let runs: String = r.get(4)?;
                let figures: Option<String> = r.get(5)?;
                Ok(StepRow {
                    series: r.get(0)?,
                    level: r.get(1)?,
                    repeat: r.get(2)?,
                    status: r.get::<_, Stored>(3)?.0,
                    runs: serde_json::from_str(&runs).unwrap_or_default(),
                    figures: figures.and_then(|f| serde_json::from_str(&f).ok()),
                })
            })
            .map_err(|e| self.err(e))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| self.err(e))?;
        Ok(StudyRow {
            id,
            name,
            kind,
            started_at,
            finished_at,
            status,
            spec: serde_json::from_str(&spec).unwrap_or_default(),
            result: result.and_then(|r| serde_json::from_str(&r).ok()),
            steps,
        })
    }

    /// A stored run as the same document `--json` writes.
    pub fn load_run(&self, id: i64) -> Result<RunDocument, StoreError> {
        let row: Option<(Status, Option<String>, String, Option<String>)> = self
            .conn
            .query_row("SELECT status, error, config, summary, pid FROM runs WHERE id = ?1", [id], |r| {
                Ok((live_status(r.get(0)?, r.get(4)?), r.get(1)?, r.get(2)?, r.get(3)?))
            })
            .optional()
            .map_err(|e| self.err(e))?;
        let (status, error, config, summary) = row.ok_or(StoreError::NoSuchRun(id))?;
        let mut st =
            self.conn.prepare("SELECT data FROM intervals WHERE run_id = ?1 ORDER BY seq").map_err(|e| self.err(e))?;
        let intervals = st
            .query_map([id], |r| r.get::<_, String>(0))
            .map_err(|e| self.err(e))?
            .filter_map(|d| d.ok().and_then(|d| serde_json::from_str(&d).ok()))
            .collect();
        let mut st =
            self.conn.prepare("SELECT txn_type, hdr FROM histograms WHERE run_id = ?1").map_err(|e| self.err(e))?;
        let histograms = st
            .query_map([id], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))
            .map_err(|e| self.err(e))?
            .filter_map(Result::ok)
            .collect();
        Ok(RunDocument {
            id: Some(id),
            status,
            error,
            config: serde_json::from_str(&config).unwrap_or_default(),
            summary: summary.and_then(|s| serde_json::from_str(&s).ok()),
            intervals,
            histograms,
        })
    }
}

/// `path` with `suffix` appended to its file name (SQLite's -wal and -shm files).
fn sibling(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_os_string();
    name.push(suffix);
    PathBuf::from(name)
}

/// A SQLite URI for `path` with a query string: the characters a URI gives meaning to
/// are escaped, so any file name opens as itself.
fn uri(path: &Path, query: &str) -> String {
    use std::os::unix::ffi::OsStrExt;
    let mut out = String::from("file:");
    if path.is_absolute() {
        // An empty authority: "file:///x", never "file://x" (a host named x).
        out.push_str("//");
    }
    for &b in path.as_os_str().as_bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'/' | b'-' | b'.' | b'_' | b'~' => out.push(b as char),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    format!("{out}?{query}")
}

/// Why `path` (a file, or with `dir` the directory that holds one) cannot be written,
/// if it cannot. access(2) knows a read-only mount even for root, whom file modes do
/// not stop.
fn unwritable(path: &Path, dir: bool) -> Option<String> {
    use std::os::unix::{ffi::OsStrExt, fs::PermissionsExt};
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    // SAFETY: access(2) on a NUL-terminated path.
    if unsafe { libc::access(c.as_ptr(), libc::W_OK) } == 0 {
        return None;
    }
    let e = std::io::Error::last_os_error();
    let mode = std::fs::metadata(path).map(|m| m.permissions().mode() & 0o7777).unwrap_or(0);
    match e.raw_os_error() {
        Some(libc::EROFS) => Some("read-only file system".into()),
        Some(libc::EACCES) | Some(libc::EPERM) if dir => {
            Some(format!("its directory {} has mode {mode:o}", path.display()))
        }
        Some(libc::EACCES) | Some(libc::EPERM) => Some(format!("mode {mode:o}")),
        // Missing (the store is created) or another failure SQLite will name itself.
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sizeup_model::stats::{Recorder, Summary};

    #[test]
    fn a_run_reads_back_as_written() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("results.db");
        let store = Store::open(&path).unwrap();
        let mut config = sizeup_model::result::RunConfig::default();
        config.run.threads = 8;
        let id = store.begin_run("oltp_read_write", "socket /x as root", &config).unwrap();
        let mut rec = Recorder::new(1);
        rec.transaction(0, 1500, false);
        let names = vec!["oltp_read_write".to_string()];
        let iv = Interval::from_recorder(&rec, &names, 1.0, 1.0, false, 8, 95.0);
        store.add_interval(id, 0, &iv).unwrap();
        // Until finished, the run is there with its intervals (a crash loses nothing).
        let doc = Store::open(&path).unwrap().load_run(id).unwrap();
        assert_eq!(doc.status, Status::Running);
        assert_eq!(doc.intervals, vec![iv.clone()]);
        let summary = Summary::from_recorder(&rec, &names, 1.0, 0);
        let hist: BTreeMap<_, _> = [("oltp_read_write".to_string(), "abc".to_string())].into();
        store.finish_run(id, Status::Completed, None, Some(&summary), &hist).unwrap();
        let doc = store.load_run(id).unwrap();
        assert_eq!(doc.summary, Some(summary));
        assert_eq!(doc.histograms, hist);
        let rows = store.list_runs().unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].threads, Some(8));
        assert_eq!(rows[0].tps, Some(1.0));
        assert!(matches!(store.load_run(99), Err(StoreError::NoSuchRun(99))));
    }

    #[test]
    fn a_run_whose_process_died_reads_as_abandoned() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("r.db")).unwrap();
        let id = store.begin_run("oltp_point_select", "t", &Default::default()).unwrap();
        assert_eq!(store.load_run(id).unwrap().status, Status::Running, "our own process is alive");
        // A pid that cannot exist (above the kernel's pid_max).
        store.conn.execute("UPDATE runs SET pid = 99999999 WHERE id = ?1", [id]).unwrap();
        assert_eq!(store.load_run(id).unwrap().status, Status::Abandoned);
        assert_eq!(store.list_runs().unwrap()[0].status, Status::Abandoned);
    }

    /// statuses_are_stored_through_tosql_and_fromsql: the word every release stored
    /// goes in and comes back through rusqlite's traits; a later release's word reads as
    /// failed, not as an error.
    #[test]
    fn statuses_are_stored_through_tosql_and_fromsql() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("r.db")).unwrap();
        let id = store.begin_run("oltp_point_select", "t", &Default::default()).unwrap();
        let word = |id: i64| -> String {
            store.conn.query_row("SELECT status FROM runs WHERE id = ?1", [id], |r| r.get(0)).unwrap()
        };
        assert_eq!(word(id), "running");
        for status in Status::ALL.into_iter().filter(|s| *s != Status::Running) {
            store.finish_run(id, status, None, None, &BTreeMap::new()).unwrap();
            assert_eq!(word(id), status.as_str());
            assert_eq!(store.load_run(id).unwrap().status, status);
        }
        store.conn.execute("UPDATE runs SET status = 'a later word' WHERE id = ?1", [id]).unwrap();
        assert_eq!(store.load_run(id).unwrap().status, Status::Failed);
    }

    #[test]
    fn version_1_stores_are_migrated() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v1.db");
        let c = Connection::open(&path).unwrap();
        c.execute_batch(MIGRATIONS[0]).unwrap();
        c.pragma_update(None, "user_version", 1).unwrap();
        c.execute("INSERT INTO runs (workload, target, status, config) VALUES ('w', 't', 'completed', '{}')", [])
            .unwrap();
        drop(c);
        let store = Store::open(&path).unwrap();
        assert_eq!(store.list_runs().unwrap()[0].status, Status::Completed);
        let v: i64 = store.conn.query_row("PRAGMA user_version", [], |r| r.get(0)).unwrap();
        assert_eq!(v, SCHEMA_VERSION);
    }

    #[test]
    fn a_new_store_opened_by_many_at_once_is_migrated_once() {
        for _ in 0..10 {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("r.db");
            let opened: Vec<_> = (0..4)
                .map(|_| {
                    let p = path.clone();
                    std::thread::spawn(move || Store::open(&p).map(|_| ()).map_err(|e| e.to_string()))
                })
                .collect();
            for t in opened {
                t.join().unwrap().unwrap();
            }
            let v: i64 = Store::open(&path).unwrap().conn.query_row("PRAGMA user_version", [], |r| r.get(0)).unwrap();
            assert_eq!(v, SCHEMA_VERSION);
        }
    }

    #[test]
    fn a_plan_keeps_its_state_and_reads_as_abandoned_when_its_process_died() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("r.db")).unwrap();
        let id = store.begin_plan("plan 5000", &serde_json::json!({ "target_tps": 5000.0 })).unwrap();
        let state = serde_json::json!({ "stages": [{ "stage": "sweep", "study": 3 }] });
        store.set_plan(id, Status::Running, &state).unwrap();
        let row = store.load_plan(id).unwrap();
        assert_eq!((row.status, row.state.clone(), row.finished_at), (Status::Running, state.clone(), None));
        assert_eq!(row.spec["target_tps"], 5000.0);
        store.conn.execute("UPDATE plans SET pid = 99999999 WHERE id = ?1", [id]).unwrap();
        assert_eq!(store.load_plan(id).unwrap().status, Status::Abandoned);
        store.set_plan(id, Status::Completed, &state).unwrap();
        let row = store.load_plan(id).unwrap();
        assert!(row.status == Status::Completed && row.finished_at.is_some());
        assert_eq!(store.list_plans().unwrap().len(), 1);
        assert!(matches!(store.load_plan(9), Err(StoreError::NoSuchPlan(9))));
        // A plan's studies are found by name.
        let s = store.begin_study("plan 1: connection sweep", "sweep", &serde_json::json!({})).unwrap();
        assert_eq!(store.study_named("plan 1: connection sweep").unwrap(), Some(s));
        assert_eq!(store.study_named("plan 2: connection sweep").unwrap(), None);
    }

    #[test]
    fn a_study_keeps_its_steps() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("r.db")).unwrap();
        let id = store.begin_study("sweep", "sweep", &serde_json::json!({"levels": [1, 2]})).unwrap();
        let step = StepRow {
            series: "oltp_read_only".into(),
            level: 1,
            repeat: 1,
            status: Status::Interrupted,
            runs: vec![7],
            figures: None,
        };
        store.record_step(id, &step).unwrap();
        // The rerun of an interrupted step replaces it.
        let done =
            StepRow { status: Status::Completed, runs: vec![8], figures: Some(serde_json::json!({"x": 1})), ..step };
        store.record_step(id, &done).unwrap();
        let s = store.load_study(id).unwrap();
        assert_eq!((s.status, s.steps.clone()), (Status::Running, vec![done]));
        store.set_study_status(id, Status::Completed, Some(&serde_json::json!({"peak": 2}))).unwrap();
        let s = store.load_study(id).unwrap();
        assert_eq!(s.status, Status::Completed);
        assert!(s.finished_at.is_some());
        assert_eq!(s.result, Some(serde_json::json!({"peak": 2})));
        assert_eq!(store.list_studies().unwrap().len(), 1);
        assert!(matches!(store.load_study(9), Err(StoreError::NoSuchStudy(9))));
    }

    #[test]
    fn reading_opens_the_store_read_only() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.db");
        let id = Store::open(&path).unwrap().begin_run("w", "t", &Default::default()).unwrap();
        let store = Store::open_read_only(&path).unwrap();
        assert_eq!(store.load_run(id).unwrap().status, Status::Running);
        assert!(store.conn.is_readonly(rusqlite::MAIN_DB).unwrap());
        let e = store.begin_run("w", "t", &Default::default()).unwrap_err().to_string();
        assert!(e.contains("readonly"), "{e}");
        // A missing store is read as empty, and not created.
        let none = dir.path().join("none.db");
        assert!(Store::open_read_only(&none).unwrap().list_runs().unwrap().is_empty());
        assert!(!none.exists());
    }

    #[test]
    fn uris_escape_what_sqlite_reads_as_uri_syntax() {
        assert_eq!(uri(Path::new("/a b/x?#%.db"), "immutable=1"), "file:///a%20b/x%3F%23%25.db?immutable=1");
        assert_eq!(uri(Path::new("r.db"), "mode=ro"), "file:r.db?mode=ro");
    }

    #[test]
    fn newer_schema_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.db");
        Connection::open(&path).unwrap().pragma_update(None, "user_version", 99).unwrap();
        let e = Store::open(&path).err().unwrap();
        assert!(e.to_string().contains("newer than this sizeup understands"), "{e}");
    }
}
