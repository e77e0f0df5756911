//! The error every command returns. `main` prints it as one line and exits 1; a
//! command that ends on its own terms (a failed check, an interrupted run) returns
//! its exit code instead.

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Bad input: the message says what to change.
    #[error("{0}")]
    Usage(String),
    /// Something the user asked for could not be done.
    #[error("{0}")]
    Failed(String),
    #[error(transparent)]
    Server(#[from] crate::server::ServerError),
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
    #[error(transparent)]
    Connect(#[from] crate::target::ConnectError),
}

/// Exit code of a run stopped with Ctrl-C (as shells report SIGINT).
pub const EXIT_INTERRUPTED: i32 = 130;
