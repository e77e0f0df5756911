//! sizeup's model: what a measurement is and what it means. Measurement types (a run's
//! intervals and summary, the OS's and the server's samples), statistics, and the
//! arithmetic over them. Nothing here talks to a server, a network or a database file:
//! the compiler keeps it so (this crate depends on no client, runtime or store), and
//! its tests need no server.

pub mod cost;
pub mod monitor;
pub mod result;
pub mod run;
pub mod stats;
pub mod unit;
pub mod usl;
