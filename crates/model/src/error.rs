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
    /// A lower layer's own error (a server, the store, a connection), kept whole.
    #[error(transparent)]
    Other(Box<dyn std::error::Error + Send + Sync>),
}

/// An error a layer below the commands returns, which `?` turns into [`Error`]. The
/// layers mark their own error types with it, so this, the lowest module, names none
/// of them.
pub trait LayerError: std::error::Error + Send + Sync + 'static {}

impl<E: LayerError> From<E> for Error {
    fn from(e: E) -> Self {
        Error::Other(Box::new(e))
    }
}

/// Exit code of a run stopped with Ctrl-C (as shells report SIGINT).
pub const EXIT_INTERRUPTED: i32 = 130;
/// Exit code of a command stopped by SIGTERM (128 + 15).
pub const EXIT_TERMINATED: i32 = 143;

/// Whether `code` says the command was stopped by Ctrl-C or SIGTERM.
pub fn interrupted(code: i32) -> bool {
    code == EXIT_INTERRUPTED || code == EXIT_TERMINATED
}
