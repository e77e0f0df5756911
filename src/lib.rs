//! sizeup: measures how much OLTP work a MySQL-family server can carry.
//!
//! A table of contents. `run` is the whole tool behind the command line, so tests
//! drive it in-process the way a user drives the binary. The workspace's crates are
//! the layers, and the compiler keeps them (a crate cannot name one above it):
//! `sizeup-model` (measurement types, statistics, verdicts, the capacity search,
//! sizing, cost: pure) <- `sizeup-store` (the SQLite results store) and
//! `sizeup-engine` (client, the one worker loop, workloads, targets, monitors,
//! managed servers) <- `sizeup-report` (`request`: options validated into a typed
//! request; `study::spec`: study files; `plan`; `report`) <- this crate: `option_file`,
//! `runner`, `cli`, `cmd` (one module per command family). The lower crates' modules
//! are re-exported here at the paths they had (`crate::stats`, `crate::exec`, ...).
//! README's "Architecture" says more.

pub use sizeup_engine::agent;
pub use sizeup_model::capture;
pub mod cli;
pub use sizeup_engine::client;
pub use sizeup_engine::live_capture;
mod cmd;
pub use sizeup_engine::exec;
pub use sizeup_model::cost;
pub use sizeup_model::error;
/// Models and sizing arithmetic over measured results (the model crate's).
pub mod model {
    pub use sizeup_model::{sizing, usl};
}
pub use sizeup_engine::monitor;
pub mod option_file;
pub use sizeup_engine::options;
pub use sizeup_engine::random;
pub use sizeup_model::result;
pub use sizeup_report::plan;
pub use sizeup_report::report;
pub use sizeup_report::request;
pub mod runner;
pub use sizeup_engine::server;
pub use sizeup_engine::stdout;
pub use sizeup_engine::target;
pub use sizeup_engine::timer;
pub use sizeup_engine::user_file;
pub use sizeup_engine::workload;
pub use sizeup_model::stats;
pub use sizeup_report::study;
pub use sizeup_store as store;

pub use error::{interrupted, Error, EXIT_INTERRUPTED, EXIT_TERMINATED};
pub use sizeup_engine::{out, outln};

/// Runs one command line; returns the process's exit code.
pub fn run(cli: cli::Cli) -> Result<i32, Error> {
    let code = cmd::run(cli);
    // Agents this command reached are let go (those started over SSH stop).
    agent::fleet::close_all();
    code
}
