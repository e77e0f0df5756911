//! Why a workload's data step (prepare, cleanup, check, prewarm, a script's own
//! command) stopped: one type for every workload, so callers and tests tell a refused
//! statement from tables that are not sizeup's, or from an interrupt, by kind.

use crate::error::Invalid;
use crate::target::ConnectError;

#[derive(Debug, thiserror::Error)]
pub enum DataError {
    /// Input the step cannot take (an option, a load method the server refuses).
    #[error(transparent)]
    Invalid(#[from] Invalid),
    /// The server could not be reached.
    #[error(transparent)]
    Connect(#[from] ConnectError),
    /// sizeup's own lean connection (the loaders' array binding) failed.
    #[error(transparent)]
    Client(#[from] crate::client::Error),
    /// A statement the server refused or lost: what sizeup was doing, and the server's
    /// own words.
    #[error("{what}: {reason}")]
    Statement { what: String, reason: String },
    /// A statement that ran past its bound or waited on a lock, said with what it waited on.
    #[error("{0}")]
    Stalled(String),
    /// Tables sizeup did not make, which it will not load into, change or drop.
    #[error("{0}")]
    NotOurs(String),
    /// The data is not what the step needs (tables missing, a size that differs, a
    /// statement sizeup cannot read).
    #[error("{0}")]
    Data(String),
    /// A Lua script's own error, or its command's.
    #[error("{0}")]
    Script(String),
    /// A prepare that failed, and what became of the tables it made: dropped, or what
    /// stayed and how to remove it.
    #[error("{error}{account}")]
    Undone { error: Box<DataError>, account: String },
    /// Ctrl-C or SIGTERM stopped it.
    #[error("interrupted (SIGINT or SIGTERM): the load stopped")]
    Interrupted,
    /// A helper task that ended without its result (it panicked or was cancelled).
    #[error("{0}")]
    Task(String),
}

impl DataError {
    /// A refused or lost statement, with the server's words in one line.
    pub fn sql(what: impl Into<String>, e: &mysql_async::Error) -> DataError {
        DataError::Statement { what: what.into(), reason: crate::target::short_error(e) }
    }
}

impl From<crate::target::stall::Stalled> for DataError {
    fn from(s: crate::target::stall::Stalled) -> Self {
        DataError::Stalled(s.0)
    }
}

impl From<crate::target::stall::NoId> for DataError {
    fn from(e: crate::target::stall::NoId) -> Self {
        use crate::target::stall::NoId;
        match e {
            NoId::Refused(e) => DataError::sql("reading the connection's id", &e),
            stalled @ NoId::NoAnswer(_) => DataError::Stalled(stalled.to_string()),
        }
    }
}

impl crate::error::LayerError for DataError {}

#[cfg(test)]
mod tests {
    use super::*;

    /// A data step's error is told apart by kind; an undone prepare keeps the error that
    /// stopped it and says after it what became of the tables.
    #[test]
    fn a_data_steps_error_keeps_its_kind_through_the_undo() {
        let stalled: DataError = crate::target::stall::Stalled("loading sbtest1: the load stalled".into()).into();
        assert!(matches!(&stalled, DataError::Stalled(m) if m.ends_with("stalled")));
        let undone = DataError::Undone { error: Box::new(stalled), account: "\nDropped the table(s)".into() };
        assert_eq!(undone.to_string(), "loading sbtest1: the load stalled\nDropped the table(s)");
        assert!(matches!(&undone, DataError::Undone { error, .. } if matches!(**error, DataError::Stalled(_))));
        let refused = DataError::Statement { what: "dropping t".into(), reason: "no (error 1)".into() };
        assert_eq!(refused.to_string(), "dropping t: no (error 1)");
        let bad: DataError = Invalid::Value("--load-method load-data: no".into()).into();
        assert!(matches!(bad, DataError::Invalid(Invalid::Value(_))));
    }
}
