//! Models and sizing arithmetic over measured results: the Universal Scalability Law
//! fit, and servers needed for a target. Pure, no I/O.

pub mod sizing;
pub use sizeup_model::usl;
