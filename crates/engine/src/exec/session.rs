//! What the one worker loop drives: a session per worker that runs one transaction at
//! a time. Every workload implements these; the loop is generic over them, so the
//! per-transaction path has no boxing.
#![allow(async_fn_in_trait)] // sessions run on a single-threaded runtime: no Send needed

use super::errors::{classify, ErrorClass, RetryOn};
use crate::client::{Conn, Error};
use crate::stats::QueryCounts;

/// A transaction that finished (committed or rolled back on purpose).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Done {
    /// Index into [`Sessions::transaction_names`].
    pub ty: usize,
    pub rolled_back: bool,
}

/// A statement that failed, with what it was, so the user learns which one.
#[derive(Debug)]
pub struct Failed {
    pub ty: usize,
    /// The statement class, e.g. "point_selects"; empty when the error says it all (a
    /// script's error names its file and line).
    pub statement: &'static str,
    pub error: Error,
}

impl Failed {
    /// The failure in one line, `doing` naming what failed ("statement failed").
    pub fn describe(&self, doing: &str) -> String {
        if self.statement.is_empty() {
            self.error.to_string()
        } else {
            format!("{} {doing}: {}", self.statement, self.error)
        }
    }
}

/// When a session's next transaction starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pace {
    /// As the run paces its connections: at once (closed loop), or at the run's next
    /// arrival (`--rate`).
    Run,
    /// At this offset from the run's start (a replay's captured schedule); its latency
    /// counts from then, as an arrival's does.
    At(std::time::Duration),
    /// Never: the session has no more work, and its worker ends.
    Done,
}

pub trait Session {
    /// Called on every new connection (the first and each reconnect): prepares statements.
    async fn connected(&mut self, conn: &mut Conn) -> Result<(), Failed>;
    /// Runs one transaction, counting each statement it sends.
    async fn transaction(&mut self, conn: &mut Conn, queries: &mut QueryCounts) -> Result<Done, Failed>;
    /// How long the user waits before the next transaction (TPC-C's think time after
    /// the last one plus keying time for the next); `None` for no wait.
    fn pause(&mut self) -> Option<std::time::Duration> {
        None
    }
    /// When the next transaction is due ([`Pace::Run`]: as the run paces).
    fn pace(&mut self) -> Pace {
        Pace::Run
    }
    /// The next transaction starts now, `late` after it was due (0 when on time).
    fn began(&mut self, _late: std::time::Duration) {}
    /// How the worker loop handles a failed transaction: by sizeup's error classes,
    /// unless the session knows better (a script's hook may make an error retryable).
    fn error_class(&self, failed: &Failed, retry: &RetryOn) -> ErrorClass {
        classify(&failed.error, retry)
    }
    /// True when the session has no more work (a script's `event()` asked to stop):
    /// its worker ends, and the transaction that said so is not counted.
    fn finished(&self) -> bool {
        false
    }
    /// Called once when the worker's run is over, before its connection closes (a
    /// script's `thread_done()`), counting the statements it sends; an error fails the
    /// run (what was measured is kept).
    async fn finish(&mut self, _conn: &mut Conn, _queries: &mut QueryCounts) -> Result<(), String> {
        Ok(())
    }
}

/// The worker loop's view of a workload: a session per worker.
pub trait Sessions {
    type Session: Session;
    /// Names of the transaction types, each with its own latency histogram.
    fn transaction_names(&self) -> Vec<String>;
    /// A session for worker number `worker`, with its own random stream.
    fn session(&self, worker: u32, seed: u64) -> Self::Session;
}
