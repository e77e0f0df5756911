//! sizeup's engine: what talks to servers. The MySQL client, the one worker loop
//! (`exec`), the workloads, targets, the monitors that sample the OS and the server,
//! and the servers sizeup manages. Measurement types and their arithmetic are the
//! model crate's (re-exported here at the paths the engine names them by).

pub mod agent;
pub mod client;
pub mod exec;
pub mod live_capture;
pub mod monitor;
pub mod options;
pub mod random;
pub mod server;
pub mod stdout;
pub mod target;
pub mod timer;
pub mod user_file;
pub mod watched;
pub mod workload;

pub use sizeup_model::error::{self, interrupted, Error, EXIT_INTERRUPTED, EXIT_TERMINATED};
pub use sizeup_model::{cost, result, stats};
