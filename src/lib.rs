//! sizeup: measures how much OLTP work a MySQL-family server can carry.
//!
//! A table of contents. `run` is the whole tool behind the command line, so tests
//! drive it in-process the way a user drives the binary. The layers, top down:
//! `cli` (what the user types) -> `cmd` (one module per command family) -> `plan`
//! (options validated into a typed request) -> `runner` and `study` (a measured run,
//! a series of them) -> `workload` and `exec` (the workloads and the one worker loop)
//! -> `client` and `target` (connections). Beside them: `stats`, `model`, `cost`
//! (pure), `monitor`, `server`, `store`, `report`. README's "Architecture" says more.

pub mod cli;
pub mod client;
mod cmd;
pub mod cost;
mod error;
pub mod exec;
pub mod model;
pub mod monitor;
pub mod option_file;
pub mod options;
pub mod plan;
pub mod random;
pub mod report;
pub mod result;
pub mod runner;
pub mod server;
pub mod stats;
pub mod store;
pub mod study;
pub mod target;
pub mod timer;
pub mod workload;

pub use error::{Error, EXIT_INTERRUPTED};

/// Runs one command line; returns the process's exit code.
pub fn run(cli: cli::Cli) -> Result<i32, Error> {
    cmd::run(cli)
}
