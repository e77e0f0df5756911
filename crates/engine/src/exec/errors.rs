//! What a failed statement means for the run, classed as sysbench classes them:
//! some errors are part of OLTP life and the transaction is retried, a lost connection is
//! re-established, and anything else stops the run with the server's own message.

use crate::client::Error;

/// The class of a statement error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorClass {
    /// Deadlock (1213), lock wait timeout (1205), record changed (1020), or the codes
    /// given with `--mysql-ignore-errors`: counted, rolled back and retried.
    Retry,
    /// The connection is gone (client errors 2006/2013/2055, I/O errors, server
    /// shutdown or kill): counted, reconnected, retried.
    Reconnect,
    /// Anything else: the run stops and says why.
    Fatal,
    /// Counted, and the session goes on with its next transaction (a replay's statement
    /// that a copy of the data refused, as the application's session went on).
    Skip,
}

pub use sizeup_model::run::RetryOn;

/// Server error codes sent as a connection is being closed by the server.
const CONNECTION_CODES: [u16; 7] = [
    1053, // ER_SERVER_SHUTDOWN
    1077, // ER_NORMAL_SHUTDOWN
    1152, // ER_ABORTING_CONNECTION
    1158, // ER_NET_READ_ERROR
    1159, // ER_NET_READ_INTERRUPTED
    1160, // ER_NET_ERROR_ON_WRITE
    1927, // ER_CONNECTION_KILLED (MariaDB)
];

pub fn classify(e: &Error, retry: &RetryOn) -> ErrorClass {
    match e {
        Error::Server { code, .. } if CONNECTION_CODES.contains(code) || (2000..3000).contains(code) => {
            ErrorClass::Reconnect
        }
        Error::Server { code, .. } => match retry {
            RetryOn::All => ErrorClass::Retry,
            RetryOn::Codes(codes) if codes.contains(code) => ErrorClass::Retry,
            RetryOn::Codes(_) => ErrorClass::Fatal,
        },
        Error::Io(_) => ErrorClass::Reconnect,
        Error::Protocol(_) => ErrorClass::Fatal,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server(code: u16) -> Error {
        Error::Server { code, message: "m".into(), state: "HY000".into() }
    }

    #[test]
    fn classes_follow_sysbench() {
        let d = RetryOn::default();
        assert_eq!(classify(&server(1213), &d), ErrorClass::Retry);
        assert_eq!(classify(&server(1205), &d), ErrorClass::Retry);
        assert_eq!(classify(&server(1020), &d), ErrorClass::Retry);
        assert_eq!(classify(&server(1927), &d), ErrorClass::Reconnect);
        assert_eq!(classify(&server(2013), &d), ErrorClass::Reconnect);
        assert_eq!(classify(&server(1146), &d), ErrorClass::Fatal); // no such table
        let io = Error::Io(std::io::Error::from(std::io::ErrorKind::BrokenPipe));
        assert_eq!(classify(&io, &d), ErrorClass::Reconnect);
        assert_eq!(classify(&Error::Protocol("odd".into()), &d), ErrorClass::Fatal);
    }

    #[test]
    fn ignore_errors_option_changes_what_is_retried() {
        let dup: RetryOn = "1062, 1213".parse().unwrap();
        assert_eq!(classify(&server(1062), &dup), ErrorClass::Retry);
        assert_eq!(classify(&server(1205), &dup), ErrorClass::Fatal);
        let all: RetryOn = "all".parse().unwrap();
        assert_eq!(classify(&server(1146), &all), ErrorClass::Retry);
        assert_eq!(classify(&server(2013), &all), ErrorClass::Reconnect);
        let none: RetryOn = "none".parse().unwrap();
        assert_eq!(classify(&server(1213), &none), ErrorClass::Fatal);
        assert!(
            matches!("12x".parse::<RetryOn>(), Err(crate::error::Invalid::Value(m)) if m.contains("not an error code"))
        );
    }
}
