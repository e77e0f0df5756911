//! What a benchmark workload is: a schema it prepares and cleans up, and a session per
//! worker that runs one transaction at a time (go-tpc's lifecycle).
//!
//! The worker loop in `exec` is generic over these traits, so every workload shares one
//! loop, and dispatch is static: no boxing on the per-transaction path.
#![allow(async_fn_in_trait)] // sessions run on a single-threaded runtime: no Send needed

pub mod bulk;
pub mod oltp;
pub mod ownership;
pub mod tpcc;

use crate::client::{Conn, Error};
use crate::stats::QueryCounts;

/// A transaction that finished (committed or rolled back on purpose).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Done {
    /// Index into [`Workload::transaction_names`].
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

pub trait Workload {
    type Session: Session;
    /// Names of the transaction types, each with its own latency histogram.
    fn transaction_names(&self) -> Vec<String>;
    /// A session for worker number `worker`, with its own random stream.
    fn session(&self, worker: u32, seed: u64) -> Self::Session;
}
