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
    /// Stored runs with no figure to compute from.
    #[error(transparent)]
    Unmeasured(#[from] Unmeasured),
    /// Input sizeup cannot take, by kind.
    #[error(transparent)]
    Invalid(#[from] Invalid),
    /// A lower layer's own error (a server, the store, a connection), kept whole.
    #[error(transparent)]
    Other(Box<dyn std::error::Error + Send + Sync>),
}

impl Error {
    /// Whether it is bad input (the user's to change), rather than something that failed.
    pub fn is_usage(&self) -> bool {
        matches!(self, Error::Usage(_) | Error::Invalid(_))
    }
}

/// Input sizeup cannot take (an option, a file's setting, an objective), said as one
/// sentence that names what to change. The variant names the kind of input that broke,
/// so callers and tests tell them apart by kind, not by their words.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum Invalid {
    /// One entry of a list an option takes (`--latency 'p99<2'`, `--stop-when 'cpu>x'`):
    /// what is wrong with it, and how the entries are written.
    #[error("{option} '{entry}': {why}; {grammar}")]
    Entry { option: &'static str, entry: String, why: String, grammar: &'static str },
    /// The same objective, level or setting given twice.
    #[error("{0}")]
    Twice(String),
    /// A transaction type no workload here reports: a bound on it could never be checked.
    #[error("{option} {name}: no workload here reports a transaction type '{ty}'; its types are {types}")]
    UnknownType { option: &'static str, name: String, ty: String, types: String },
    /// A time without its unit, or no time at all.
    #[error("'{given}': give a time with its unit, e.g. 0.2ms or 200us")]
    Time { given: String },
    /// Something that must be given and was not.
    #[error("{0}")]
    Missing(String),
    /// A value outside what sizeup can use (a range, a count, an amount, a name).
    #[error("{0}")]
    Value(String),
    /// Settings that cannot go together, or one that does not belong where it was given.
    #[error("{0}")]
    Conflict(String),
    /// A file sizeup cannot read or parse (a study, plan, option or user file).
    #[error("{0}")]
    File(String),
    /// A command line the parser refused, as the parser wrote it (it starts with
    /// "error:" and shows the usage).
    #[error("{0}")]
    CommandLine(String),
    /// One of the above, found in a file (its name first).
    #[error("{origin}: {what}")]
    In { origin: String, what: Box<Invalid> },
}

impl Invalid {
    /// The same complaint, said as found in `origin` (a study file, a plan file).
    pub fn found_in(self, origin: &str) -> Invalid {
        Invalid::In { origin: origin.to_string(), what: Box::new(self) }
    }

    /// The complaint itself, wherever it was found.
    pub fn what(&self) -> &Invalid {
        match self {
            Invalid::In { what, .. } => what.what(),
            other => other,
        }
    }
}

/// Stored runs that hold no figure to compute from.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum Unmeasured {
    #[error("a step without runs")]
    NoRuns,
    #[error("a run without a summary")]
    NoSummary,
    /// A stored latency histogram that does not decode or merge.
    #[error("{0}")]
    Histogram(String),
    /// No interval after the warm-up counted: why.
    #[error("{0}")]
    NotCounted(String),
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

/// A number as an error message echoes it: 1e308 as `1e308`, not 309 digits.
pub fn shown(v: f64) -> String {
    if v.is_finite() && v.abs() >= 1e9 {
        format!("{v:e}")
    } else {
        v.to_string()
    }
}
