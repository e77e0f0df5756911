//! sizeup's requests and answers: what a user asks for (`request`: options validated
//! into a typed run request; `study::spec`: study files; `plan`: plan files and the
//! purchase) and what sizeup says back (`report`: runs, studies, capacity, memory and
//! plans as text, HTML and exports). Above the model, the store and the engine; below
//! the command line and the runners, which it cannot name. The lower crates' modules
//! are re-exported at the paths the code names them by (`crate::stats`, ...).

pub use sizeup_engine::client;
pub use sizeup_engine::exec;
pub use sizeup_model::cost;
pub use sizeup_model::error;
/// Models and sizing arithmetic over measured results (the model crate's).
pub mod model {
    pub use sizeup_model::{sizing, usl};
}
pub use sizeup_engine::monitor;
pub use sizeup_engine::options;
pub mod plan;
pub mod report;
pub mod request;
pub use sizeup_engine::server;
pub use sizeup_engine::stdout;
pub use sizeup_model::result;
pub use sizeup_model::stats;
pub use sizeup_store as store;
pub mod study;
pub use sizeup_engine::target;
pub use sizeup_engine::timer;
pub use sizeup_engine::user_file;
pub use sizeup_engine::workload;

pub use error::Error;
pub use sizeup_engine::{out, outln};
