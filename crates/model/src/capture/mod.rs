//! A capture of a server's own traffic: each session's statements with the moment each
//! started, read from the slow log (`long_query_time = 0`) and written as one compact
//! file that `sizeup capture show` summarises and `sizeup replay` plays back.
//!
//! - `slowlog`: the slow log as MariaDB and MySQL write it, entry by entry;
//! - `fingerprint`: a statement's digest, as pt-query-digest groups it;
//! - `file`: the capture file (gzip'd JSON lines: a header, the statements, a trailer);
//! - `digest`: what a capture holds, by digest (count, share of time, mean and p99).

pub mod digest;
pub mod file;
pub mod fingerprint;
pub mod rows;
pub mod schedule;
pub mod slowlog;

use serde::{Deserialize, Serialize};

/// How each statement's start is known: to the µs (MySQL 8's file, MariaDB's
/// `mysql.slow_log` table), or to the second only (MariaDB's file), where a second's
/// statements are spread over it in their logged order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Precision {
    #[default]
    Microseconds,
    Seconds,
}

impl Precision {
    pub fn words(self) -> &'static str {
        match self {
            Precision::Microseconds => "to the microsecond",
            Precision::Seconds => "to the second (each second's statements spread over it in their logged order)",
        }
    }
}

/// The comment sizeup starts its own statements to a server with (its status, variable
/// and process-list reads while it measures): a capture leaves them out.
pub const OWN_MARK: &str = "/* sizeup */";

/// Whether sizeup sent `text` to watch the server, not the application.
pub fn is_own(text: &str) -> bool {
    text.trim_start().starts_with(OWN_MARK)
}

/// What a statement does to data: a replay's `--read-only` keeps only `Read`, and
/// `capture show` gives the read/write share.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// SELECT, SHOW, DESCRIBE, EXPLAIN (without FOR UPDATE or INTO a table or file).
    Read,
    /// INSERT, UPDATE, DELETE, REPLACE, LOAD DATA, SELECT ... FOR UPDATE, DDL.
    Write,
    /// Transaction control, SET, USE, and the rest: they change no rows.
    Other,
}

impl Kind {
    /// A statement's kind from its first word (comments before it skipped).
    pub fn of(text: &str) -> Kind {
        let t = skip_comments(text);
        let word: String = t.chars().take_while(|c| c.is_ascii_alphabetic()).collect::<String>().to_ascii_lowercase();
        match word.as_str() {
            "select" | "with" => {
                let lower = t.to_ascii_lowercase();
                if lower.contains(" for update") || (lower.contains(" into ") && !lower.contains(" into @")) {
                    Kind::Write
                } else {
                    Kind::Read
                }
            }
            "show" | "describe" | "desc" | "explain" => Kind::Read,
            "insert" | "update" | "delete" | "replace" | "load" | "create" | "alter" | "drop" | "truncate"
            | "rename" => Kind::Write,
            _ => Kind::Other,
        }
    }
}

/// `text` after any leading comments and blanks.
fn skip_comments(mut t: &str) -> &str {
    loop {
        t = t.trim_start();
        if let Some(rest) = t.strip_prefix("/*") {
            match rest.find("*/") {
                Some(i) => t = &rest[i + 2..],
                None => return "",
            }
        } else if t.starts_with("-- ") || t.starts_with('#') {
            match t.find('\n') {
                Some(i) => t = &t[i + 1..],
                None => return "",
            }
        } else {
            return t;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statements_are_reads_writes_or_neither() {
        assert_eq!(Kind::of("SELECT c FROM sbtest1 WHERE id=5"), Kind::Read);
        assert_eq!(Kind::of("/* app */ select 1"), Kind::Read);
        assert_eq!(Kind::of("SELECT c FROM t WHERE id=5 FOR UPDATE"), Kind::Write);
        assert_eq!(Kind::of("SELECT 1 INTO @x"), Kind::Read);
        assert_eq!(Kind::of("UPDATE sbtest1 SET k=k+1 WHERE id=7"), Kind::Write);
        assert_eq!(Kind::of("  insert into t values (1)"), Kind::Write);
        assert_eq!(Kind::of("BEGIN"), Kind::Other);
        assert_eq!(Kind::of("COMMIT"), Kind::Other);
        assert!(is_own("/* sizeup */ SHOW GLOBAL STATUS") && !is_own("SHOW GLOBAL STATUS"));
    }
}
