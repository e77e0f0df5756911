//! What the worker loop knows of load driven elsewhere, without knowing how it travels:
//! a [`Share`] of a run this process drives for a coordinator (what its threads count
//! goes up as [`Relayed`] messages), and [`Remote`] client threads the run's measuring
//! waits on as on its own (agents). `crate::agent` carries both over the network.

use super::worker::{Control, Tally};
use super::{Clients, RunError, RunSpec};
use crate::stats::{Recorder, Summary};
use std::sync::Arc;
use tokio::sync::{mpsc, watch};

/// What the coordinator tells a running share.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    Wait,
    Go,
    Stop,
}

/// This process drives a share of a coordinator's run: its connections are numbered
/// from `first` over the whole run, and what its client threads count goes `up`.
#[derive(Clone, Debug)]
pub struct Share {
    pub index: u32,
    pub first: u32,
    pub up: mpsc::UnboundedSender<Relayed>,
    pub orders: watch::Receiver<Order>,
}

/// A share's process CPU since its go, and each client thread's.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct ShareCpu {
    pub process_s: f64,
    pub threads_s: Vec<f64>,
}

/// What a share's run says, in order: ready, then its intervals (and that it is alive
/// in between), then its end.
#[derive(Debug)]
pub enum Relayed {
    Ready,
    Tick { k: u64, rec: Recorder, cpu: ShareCpu },
    Alive { cpu: ShareCpu },
    Final(Box<ShareEnd>),
}

/// A share's last word on a run.
#[derive(Debug)]
pub struct ShareEnd {
    /// What its threads counted after the last whole interval.
    pub rec: Recorder,
    /// Seconds from its go to the end of its last thread.
    pub end_s: f64,
    pub tallies: Vec<Tally>,
    pub cpu: ShareCpu,
    /// Open loop: arrivals of its share due before its end that never started.
    pub missed: u64,
    /// Why its part failed, if it did (a lost or stalled server, a fatal error).
    pub fatal: Option<String>,
    pub ended_by_workload: u64,
}

/// The seed of share `index`'s arrival schedule: Poisson streams at rate/N that are
/// independent of each other add up to one at the rate.
pub fn arrival_seed(index: u32) -> u64 {
    (1 << 40) + index as u64
}

/// Client threads elsewhere (agents), each standing for one client thread of the run.
pub trait Remote: Send + Sync + std::fmt::Debug {
    /// How many: the run's measuring waits for each one's hand-overs.
    fn parties(&self) -> usize;
    /// Starts the run on them; their messages come as the run's own client threads'.
    fn start(self: Arc<Self>, spec: &RunSpec, control: &Arc<Control>, types: usize) -> Result<Clients, RunError>;
    /// Adds what they measured of themselves to the run's summary.
    fn conclude(&self, summary: &mut Summary);
    /// Each one's latest interval, for live metrics.
    fn live(&self) -> Vec<Live>;
}

/// One remote party's latest interval: its process's CPU in cores, its arrivals due
/// and not started, and that backlog in seconds of its schedule.
#[derive(Clone, Debug)]
pub struct Live {
    pub agent: String,
    pub cores: Option<f64>,
    pub backlog: u64,
    pub lag_s: Option<f64>,
}
