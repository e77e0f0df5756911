//! What the one worker loop drives: a session per worker that runs one transaction at
//! a time. Every workload implements these; the loop is generic over them, so the
//! per-transaction path has no boxing.
#![allow(async_fn_in_trait)] // sessions run on a single-threaded runtime: no Send needed

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
    /// The statement class, e.g. "point_selects".
    pub statement: &'static str,
    pub error: Error,
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
}

/// The worker loop's view of a workload: a session per worker.
pub trait Sessions {
    type Session: Session;
    /// Names of the transaction types, each with its own latency histogram.
    fn transaction_names(&self) -> Vec<String>;
    /// A session for worker number `worker`, with its own random stream.
    fn session(&self, worker: u32, seed: u64) -> Self::Session;
}
