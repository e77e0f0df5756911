//! sizeup's model: what a measurement is and what it means. Measurement types (a run's
//! intervals and summary, the OS's and the server's samples), statistics, and the
//! arithmetic over them. Nothing here talks to a server, a network or a database file:
//! the compiler keeps it so (this crate depends on no client, runtime or store), and
//! its tests need no server.

pub mod capture;
pub mod cost;
pub mod error;
pub mod monitor;
pub mod plan;
pub mod result;
pub mod run;
pub mod sizing;
pub mod stats;
pub mod status;
pub mod study;
pub mod unit;
pub mod usl;

/// A size as the server options take it (512M, 2G; a bare number is bytes).
pub fn size_bytes(v: &str) -> Option<u64> {
    let (digits, unit) = v.split_at(v.find(|c: char| !c.is_ascii_digit()).unwrap_or(v.len()));
    let shift = match unit.to_ascii_uppercase().as_str() {
        "" => 0,
        "K" => 10,
        "M" => 20,
        "G" => 30,
        "T" => 40,
        _ => return None,
    };
    digits.parse::<u64>().ok()?.checked_mul(1 << shift)
}
