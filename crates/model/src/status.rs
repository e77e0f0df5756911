//! How a run, a study's step, a study or a plan stands: one type, stored as the word
//! (`completed`) every release has stored.

use crate::error::Invalid;
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Under way, or its process died without saying (read back as [`Status::Abandoned`]
    /// once the process is gone).
    #[default]
    Running,
    Completed,
    /// Stopped by Ctrl-C or SIGTERM.
    Interrupted,
    Failed,
    /// Its process died while it ran.
    Abandoned,
}

impl Status {
    pub const ALL: [Status; 5] =
        [Status::Running, Status::Completed, Status::Interrupted, Status::Failed, Status::Abandoned];

    /// The word the store keeps and reports show.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Running => "running",
            Status::Completed => "completed",
            Status::Interrupted => "interrupted",
            Status::Failed => "failed",
            Status::Abandoned => "abandoned",
        }
    }

    /// The status a stored word stands for; a word this release does not know (a
    /// later release's) reads as failed: nothing is claimed for it.
    pub fn stored(word: &str) -> Status {
        word.parse().unwrap_or(Status::Failed)
    }

    /// Ended, one way or another.
    pub fn finished(self) -> bool {
        self != Status::Running
    }

    /// Ended before its work was done: interrupted, or its process died.
    pub fn cut_short(self) -> bool {
        matches!(self, Status::Interrupted | Status::Abandoned)
    }
}

/// Read as [`Status::stored`] reads a word: a later release's word is no error.
impl<'de> Deserialize<'de> for Status {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Status, D::Error> {
        Ok(Status::stored(&String::deserialize(d)?))
    }
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.as_str())
    }
}

impl std::str::FromStr for Status {
    type Err = Invalid;
    fn from_str(s: &str) -> Result<Status, Invalid> {
        Status::ALL.into_iter().find(|x| x.as_str() == s).ok_or_else(|| Invalid::Value(format!("'{s}' is no status")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_read_back_as_stored() {
        for s in Status::ALL {
            assert_eq!(Status::stored(s.as_str()), s);
            assert_eq!(serde_json::to_string(&s).unwrap(), format!("\"{s}\""));
            assert_eq!(serde_json::from_str::<Status>(&format!("\"{s}\"")).unwrap(), s);
        }
        assert_eq!(Status::stored("a later word"), Status::Failed);
        assert_eq!(serde_json::from_str::<Status>("\"a later word\"").unwrap(), Status::Failed);
        assert_eq!(format!("{:<11}|", Status::Completed), "completed  |");
    }
}
