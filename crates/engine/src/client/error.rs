//! The client's error: a lost connection, the server's error packet, or a reply this
//! client does not understand. Its own module, below the rest of the client.

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The connection failed or was lost.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// The server answered with an error packet.
    #[error("{message} (error {code})")]
    Server { code: u16, state: String, message: String },
    /// The server said something this client does not understand or support.
    #[error("{0}")]
    Protocol(String),
}

impl Error {
    pub(super) fn protocol(s: impl Into<String>) -> Self {
        Error::Protocol(s.into())
    }
}
