//! A capture replayed (`sizeup replay CAPTURE --speed K`): each captured session is one
//! connection that sends its statements in their captured order, each due at its
//! captured offset divided by the speed. Open loop: a statement's latency counts from
//! when it was due, so a session that falls behind shows it in its latency, and how
//! far behind the sessions started is said beside the figures. Transactions stay
//! together (a session's statements are never reordered or shared).
//!
//! On a copy of the data, writes diverge from what was captured: a statement the server
//! refuses (a duplicate key, a row that is gone) is counted by its error code and
//! digest and the session goes on, as the application's did.

use super::{DataSize, Done, Failed, Kind, Optional, Ready, Runnable, SizeCheck, Workload};
use crate::client::{Conn, Error as ClientError};
use crate::error::Invalid;
use crate::exec::errors::{classify, ErrorClass, RetryOn};
use crate::exec::session::{Pace, Session, Sessions};
use crate::exec::RunSpec;
use crate::options::{RunOptions, WorkloadArgs};
use crate::stats::{QueryCounts, Summary};
use crate::target::Target;
use crate::workload::{CleanupReport, DataError};
use futures_util::future::BoxFuture;
use sizeup_model::capture::file::Reader;
use sizeup_model::capture::schedule::{ReplayOptions, Schedule};
use sizeup_model::capture::Kind as StatementKind;
use sizeup_model::unit::Unit;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A capture file is named by its path, ending so.
pub const SUFFIX: &str = sizeup_model::unit::CAPTURE_SUFFIX;
/// The shortest interval a study's fast replay of a short capture is measured in.
pub const MIN_INTERVAL_S: f64 = 0.1;
/// Room after a replay's last statement is due, for it and the ones before it to end.
pub const GRACE_S: f64 = 5.0;
/// What a replay on data made from the capture's schema says beside its figures.
pub const MADE_NOTE: &str =
    "the data was made from the capture's schema (--prepare-from-schema), not copied: its values \
     are drawn, so plans, index selectivity and row sizes differ from the captured server's; these figures hold for \
     this data";
/// A statement that starts this much after it was due started late.
pub const LATE: Duration = Duration::from_millis(10);

pub struct ReplayKind;
pub static REPLAY: ReplayKind = ReplayKind;

impl Kind for ReplayKind {
    fn names(&self) -> Vec<&'static str> {
        vec!["path/to/traffic.capture"]
    }
    fn accepts(&self, name: &str) -> bool {
        name.ends_with(SUFFIX)
    }
    /// A replay's statements name their own databases; its connections start in one
    /// every server has.
    fn default_database(&self) -> &'static str {
        "information_schema"
    }
    fn unit(&self) -> Unit {
        Unit::Statements
    }
    fn data_size(&self) -> Option<DataSize> {
        None // the captured server's data, copied
    }
    fn transaction_types(&self, name: &str) -> Vec<String> {
        load(name, false).map(|s| s.types.clone()).unwrap_or_default()
    }
    fn build(&self, name: &str, options: &WorkloadArgs) -> Result<Box<dyn Workload>, Invalid> {
        let r = &options.replay;
        let speed = if r.speed > 0.0 { r.speed } else { 1.0 };
        if !speed.is_finite() {
            return Err(Invalid::Value(format!("--speed {speed}: give a factor above 0, such as 1,2,4")));
        }
        let schedule = match &r.schedule {
            Some(s) => s.clone(),
            None => load(name, r.read_only)?,
        };
        if schedule.statements == 0 {
            return Err(Invalid::Value(format!(
                "{name} holds no statement to replay{}",
                if r.read_only { " with --read-only (every one changes data)" } else { "" }
            )));
        }
        Ok(Box::new(Replay {
            path: name.to_string(),
            speed,
            read_only: r.read_only,
            writes_allowed: r.writes_allowed,
            schedule,
            tally: Arc::new(Tally::default()),
            steady_from: std::sync::OnceLock::new(),
            made_from_schema: std::sync::OnceLock::new(),
        }))
    }
}

/// A run of `schedule` at `speed`, as `sizeup replay` and a rate study's levels make
/// it: one connection (and client thread, unless told) per captured session, the
/// database most sessions start in unless one is given, and the capture's span at
/// that speed with room for the last statements. A warm-up longer than a fifth of the
/// span is cut to that, so that most of the capture is measured.
pub fn run_options(o: &mut RunOptions, path: &str, schedule: Arc<Schedule>, speed: f64) -> Result<(), Invalid> {
    if o.rate > 0.0 {
        return Err(Invalid::Conflict("--rate and a replay: the capture sets the pace (--speed scales it)".into()));
    }
    let sessions = schedule.sessions.len().max(1) as u32;
    // Open loop, as a rate run: one client thread per connection unless told. One
    // thread for several busy sessions held a capture of 16,300 statements a second
    // to 10,500 at any speed; one each replayed it at 16,300.
    o.threads = sessions;
    o.session.client_threads.get_or_insert(sessions);
    if o.target.database.is_none() {
        o.target.database = Some(schedule.schema.clone().ok_or_else(|| {
            Invalid::Missing(format!("{path} names no database: give the one its statements ran in (--database)"))
        })?);
    }
    let span_s = schedule.span_us as f64 / 1e6 / speed;
    o.time = span_s + GRACE_S;
    // Most of the capture is measured, however short it is at this speed.
    o.warmup = o.warmup.min(span_s / 5.0);
    o.workload.replay = crate::options::ReplayArgs {
        speed,
        read_only: o.workload.oltp.read_only,
        writes_allowed: o.write_foreign_tables,
        schedule: Some(schedule),
    };
    Ok(())
}

/// A capture's schedule, read whole once per process: a study asks for it at each
/// step, a check and a report, and a large capture takes seconds to read. A file
/// changed since is read again.
pub fn load(path: &str, read_only: bool) -> Result<Arc<Schedule>, Invalid> {
    type Key = (String, bool, Option<std::time::SystemTime>);
    static READ: Mutex<Option<(Key, Arc<Schedule>)>> = Mutex::new(None);
    let modified = std::fs::metadata(path).and_then(|m| m.modified()).ok();
    let key = (path.to_string(), read_only, modified);
    let mut read = READ.lock().expect("not poisoned");
    if let Some((k, s)) = read.as_ref() {
        if *k == key {
            return Ok(s.clone());
        }
    }
    let f = std::fs::File::open(path).map_err(|e| Invalid::File(format!("{path}: {e}")))?;
    let r = Reader::new(std::io::BufReader::new(f), path).map_err(|e| Invalid::File(e.to_string()))?;
    let tables = r.header.tables.clone();
    let mut s = Schedule::of(r, read_only).map_err(|e| Invalid::File(format!("{path}: {e}")))?;
    s.tables = tables;
    let s = Arc::new(s);
    *read = Some((key, s.clone()));
    Ok(s)
}

/// What the sessions saw beyond the worker loop's counts: late starts, statements left
/// when the run ended, errors by code and digest.
#[derive(Default)]
pub struct Tally {
    pub late: AtomicU64,
    pub latest_us: AtomicU64,
    pub started: AtomicU64,
    /// Each session's first statement not sent when it ended: (session index, index).
    pub reached: Mutex<Vec<(usize, usize)>>,
    /// (server error code, type index) -> count.
    pub errors: Mutex<BTreeMap<(u16, u32), u64>>,
}

pub struct Replay {
    path: String,
    speed: f64,
    read_only: bool,
    writes_allowed: bool,
    schedule: Arc<Schedule>,
    tally: Arc<Tally>,
    /// Where the run's measured time begins, known at its start: the first interval
    /// boundary at or after the warm-up, as the worker loop counts it.
    steady_from: std::sync::OnceLock<Duration>,
    /// The data was made from the capture's schema, not copied (found at the start).
    made_from_schema: std::sync::OnceLock<bool>,
}

impl Replay {
    /// The connections a replay opens: one per captured session.
    pub fn sessions(&self) -> usize {
        self.schedule.sessions.len()
    }

    /// Statements due from `from` to `to` seconds into the run, at this speed, of each
    /// session's from its `first(session)`-th statement on.
    fn due_between(&self, from: f64, to: f64, first: impl Fn(usize) -> usize) -> u64 {
        let (from_us, to_us) = (from * 1e6 * self.speed, to * 1e6 * self.speed);
        let due = |(i, s): (usize, &sizeup_model::capture::schedule::Session)| {
            let rest = &s.statements[first(i).min(s.statements.len())..];
            let at = |t: f64| rest.partition_point(|d| (d.offset_us as f64) < t);
            (at(to_us) - at(from_us)) as u64
        };
        self.schedule.sessions.iter().enumerate().map(due).sum()
    }
}

impl Workload for Replay {
    fn name(&self) -> &str {
        &self.path
    }
    fn kind(&self) -> &'static dyn Kind {
        &REPLAY
    }
    fn data(&self) -> String {
        "the captured server's data (a copy, or tables made from its schema)".into()
    }
    fn rows_to_load(&self) -> u64 {
        self.schedule.tables.iter().map(|t| t.rows).sum()
    }
    fn tables(&self) -> Vec<String> {
        Vec::new()
    }
    fn size_check(&self) -> Option<SizeCheck> {
        None
    }
    fn prepare_hint(&self) -> String {
        "a copy of the captured server's data restored (mariadb-dump, mariadb-backup)".into()
    }
    fn writes(&self) -> bool {
        self.schedule.writes > 0
    }
    fn supports(&self, _step: Optional) -> bool {
        false
    }
    /// Tables made from the capture's recorded schema, when no copy of the data
    /// exists (`--prepare-from-schema`; a copy restored is the right way).
    fn prepare<'a>(
        &'a self,
        target: &'a Target,
        _loaders: u32,
        _load: super::bulk::LoadSettings,
        seed: u64,
        rows: Arc<AtomicU64>,
    ) -> BoxFuture<'a, Result<String, DataError>> {
        Box::pin(async move { super::from_schema::make(target, &self.schedule.tables, seed, &rows).await })
    }
    fn cleanup<'a>(&'a self, _target: &'a Target, _threads: u32) -> BoxFuture<'a, Result<CleanupReport, DataError>> {
        Box::pin(async move {
            Err(Invalid::Value("a replay made no tables: the copy it ran on is yours to drop".into()).into())
        })
    }
    fn check_run(&self, spec: &RunSpec) -> Result<(), Invalid> {
        if spec.rate.is_some() {
            return Err(Invalid::Conflict(
                "--rate and a replay: the capture's own schedule sets the pace (--speed scales it)".into(),
            ));
        }
        Ok(())
    }
    fn fewer_connections(&self) -> String {
        format!(
            "{} replays {} captured sessions, one connection each ({} at once at most in the capture)",
            self.path,
            self.sessions(),
            self.schedule.most_at_once
        )
    }
    fn judge(&self, summary: &mut Summary, _connections: u32) {
        let t = &self.tally;
        // What was due over the measured time is what this speed offered; what was due
        // and never started is missed, as an open loop's arrivals are.
        let from = self.steady_from.get().copied().unwrap_or_default().as_secs_f64();
        let to = from + summary.seconds;
        let due = self.due_between(from, to, |_| 0);
        if summary.seconds > 0.0 {
            summary.offered_rate = Some(due as f64 / summary.seconds);
        }
        // Only those due in the measured time: a warm-up's unsent statements are no part
        // of what the level offered (they made "fell 124 % behind" on a slow server).
        let reached: BTreeMap<usize, usize> = t.reached.lock().expect("not poisoned").iter().copied().collect();
        let next = |i: usize| reached.get(&i).copied().unwrap_or(0);
        summary.missed_arrivals = self.due_between(from, to, next);
        let left = self.due_between(0.0, f64::INFINITY, next);
        let started = t.started.load(Ordering::Relaxed);
        let late = t.late.load(Ordering::Relaxed);
        if late > 0 {
            summary.observed.notes.push(format!(
                "the sessions did not keep up with {}x: {late} of {started} statements started more than {} ms \
                 after they were due (the latest {:.0} ms); their latency counts from when they were due",
                self.speed,
                LATE.as_millis(),
                t.latest_us.load(Ordering::Relaxed) as f64 / 1000.0
            ));
        }
        if left > 0 {
            summary
                .observed
                .notes
                .push(format!("{left} captured statements were not replayed: the run ended before they were reached"));
        }
        let errors = t.errors.lock().expect("not poisoned");
        if !errors.is_empty() {
            let total: u64 = errors.values().sum();
            let mut by: Vec<(&(u16, u32), &u64)> = errors.iter().collect();
            by.sort_by(|a, b| b.1.cmp(a.1));
            let said: Vec<String> = by
                .iter()
                .take(5)
                .map(|((code, ty), n)| {
                    format!(
                        "{n} x error {code} on {}",
                        self.schedule.types.get(*ty as usize).map_or("?", |s| s.as_str())
                    )
                })
                .collect();
            summary.observed.notes.push(format!(
                "{total} statements failed on this copy and the sessions went on (writes diverge from the captured \
                 server's): {}{}",
                said.join("; "),
                if by.len() > 5 { "; ..." } else { "" }
            ));
        }
        if self.made_from_schema.get().copied().unwrap_or(false) {
            summary.observed.notes.push(MADE_NOTE.into());
        }
        if self.schedule.writes_left_out > 0 {
            summary.observed.notes.push(format!(
                "--read-only: {} captured statements that change data were left out",
                self.schedule.writes_left_out
            ));
        }
    }
    fn start<'a>(
        &'a self,
        conn: &'a mut mysql_async::Conn,
        _database: &'a str,
        spec: &'a RunSpec,
        _warn: bool,
    ) -> BoxFuture<'a, Result<Box<dyn Runnable>, crate::Error>> {
        Box::pin(async move {
            if self.schedule.writes > 0 && !self.writes_allowed {
                return Err(crate::Error::Usage(format!(
                    "{} changes rows ({} INSERT, UPDATE, DELETE and other statements that write): replay it on a copy \
                     of the data and say so with --write-foreign-tables, or replay only what reads with --read-only",
                    self.path, self.schedule.writes
                )));
            }
            if (spec.threads as usize) < self.sessions() {
                return Err(crate::Error::Usage(format!(
                    "{} has {} sessions and the run {} connections: a replay opens one per session",
                    self.path,
                    self.sessions(),
                    spec.threads
                )));
            }
            let _ = self.steady_from.set(crate::exec::steady_from(spec));
            let made = super::from_schema::made_from_schema(conn, &self.schedule.tables).await;
            let _ = self.made_from_schema.set(made);
            let options = serde_json::to_value(ReplayOptions {
                capture: self.path.clone(),
                speed: self.speed,
                read_only: self.read_only,
                sessions: self.sessions(),
                statements: self.schedule.statements,
                captured_rate: self.schedule.rate(),
                transactions_per_statement: Some(self.schedule.transactions_per_statement()),
                made_from_schema: made,
            })
            .expect("serialisable");
            let sessions =
                ReplaySessions { schedule: self.schedule.clone(), speed: self.speed, tally: self.tally.clone() };
            let run: Box<dyn Runnable> = Box::new(Ready { sessions, options });
            Ok(run)
        })
    }
}

pub struct ReplaySessions {
    schedule: Arc<Schedule>,
    speed: f64,
    tally: Arc<Tally>,
}

impl Sessions for ReplaySessions {
    type Session = ReplaySession;
    fn transaction_names(&self) -> Vec<String> {
        self.schedule.types.clone()
    }
    fn session(&self, worker: u32, _seed: u64) -> ReplaySession {
        ReplaySession {
            schedule: self.schedule.clone(),
            index: worker as usize,
            next: 0,
            speed: self.speed,
            tally: self.tally.clone(),
            started: 0,
            late: 0,
            latest_us: 0,
        }
    }
}

pub struct ReplaySession {
    schedule: Arc<Schedule>,
    /// Which captured session: one worker each (workers beyond them have none).
    index: usize,
    next: usize,
    speed: f64,
    tally: Arc<Tally>,
    /// This session's starts, late starts and latest start, added to `tally` at the end.
    started: u64,
    late: u64,
    latest_us: u64,
}

impl ReplaySession {
    fn statements(&self) -> &[sizeup_model::capture::schedule::Due] {
        self.schedule.sessions.get(self.index).map_or(&[], |s| &s.statements[..])
    }
}

impl Session for ReplaySession {
    async fn connected(&mut self, conn: &mut Conn) -> Result<(), Failed> {
        // A reconnect starts in the database of the statement it goes on with.
        let schema = self.statements()[..self.next.min(self.statements().len())]
            .iter()
            .rev()
            .find_map(|d| d.schema.clone())
            .or_else(|| self.statements().iter().find_map(|d| d.schema.clone()));
        if let Some(db) = schema {
            let sql = format!("USE `{}`", db.replace('`', "``"));
            conn.query_drop(&sql).await.map_err(|error| Failed { ty: 0, statement: "USE", error })?;
        }
        Ok(())
    }

    fn pace(&mut self) -> Pace {
        match self.statements().get(self.next) {
            None => Pace::Done,
            Some(d) => Pace::At(Duration::from_secs_f64(d.offset_us as f64 / 1e6 / self.speed)),
        }
    }

    fn began(&mut self, late: Duration) {
        // Counted here and added to the shared tally once, at the end: no shared write
        // per statement across the client threads.
        self.started += 1;
        if late > LATE {
            self.late += 1;
            self.latest_us = self.latest_us.max(late.as_micros() as u64);
        }
    }

    async fn transaction(&mut self, conn: &mut Conn, queries: &mut QueryCounts) -> Result<Done, Failed> {
        let Some(d) = self.statements().get(self.next).cloned() else {
            return Ok(Done { ty: 0, rolled_back: false });
        };
        self.next += 1;
        let ty = d.ty as usize;
        if let Some(db) = &d.schema {
            let sql = format!("USE `{}`", db.replace('`', "``"));
            conn.query_drop(&sql).await.map_err(|error| Failed { ty, statement: "USE", error })?;
        }
        let outcome = conn.query_drop(&d.text).await;
        match d.kind {
            StatementKind::Read => queries.reads += 1,
            StatementKind::Write => queries.writes += 1,
            StatementKind::Other => queries.other += 1,
        }
        outcome.map_err(|error| Failed { ty, statement: "", error })?;
        Ok(Done { ty, rolled_back: false })
    }

    /// A statement the copy refuses is counted by its code and the session goes on; a
    /// lost connection is reconnected, as for any workload.
    fn error_class(&self, failed: &Failed, retry: &RetryOn) -> ErrorClass {
        match (&failed.error, classify(&failed.error, retry)) {
            (_, ErrorClass::Reconnect) => ErrorClass::Reconnect,
            (ClientError::Server { code, .. }, _) => {
                *self.tally.errors.lock().expect("not poisoned").entry((*code, failed.ty as u32)).or_default() += 1;
                ErrorClass::Skip
            }
            (_, class) => class,
        }
    }

    async fn finish(&mut self, _conn: &mut Conn, _queries: &mut QueryCounts) -> Result<(), String> {
        let t = &self.tally;
        t.reached.lock().expect("not poisoned").push((self.index, self.next));
        t.started.fetch_add(self.started, Ordering::Relaxed);
        t.late.fetch_add(self.late, Ordering::Relaxed);
        t.latest_us.fetch_max(self.latest_us, Ordering::Relaxed);
        Ok(())
    }
}
