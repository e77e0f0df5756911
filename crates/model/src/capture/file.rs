//! The capture file: gzip'd JSON lines, read and written as a stream. The first line is
//! the header (where it came from, how precise its times are, the captured tables),
//! then one line per statement (`{"s":session,"t":offset_us,"q":text,...}`), then the
//! trailer (what was counted and what was left out). A file cut short (a capture that
//! was killed) reads up to its last whole statement and says it has no trailer.

use super::slowlog::{Skipped, SlowLog};
use super::{is_own, Precision};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};

/// The version of the format this release writes and reads.
pub const VERSION: u32 = 1;

/// What the capture is of.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Header {
    pub version: u32,
    /// "slow log /var/log/mysql/slow.log", "mysql.slow_log on 10.0.0.5:3306".
    pub source: String,
    pub precision: Precision,
    /// Offset 0: the first statement's start, µs since the epoch (the server's clock).
    pub start_us: i64,
    /// The captured tables' definitions and row counts, when the capture could read
    /// them (a capture from a file alone cannot).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tables: Vec<Table>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Table {
    pub schema: String,
    pub name: String,
    /// `SHOW CREATE TABLE`'s statement.
    pub create: String,
    /// information_schema's estimate for InnoDB.
    pub rows: u64,
}

/// One captured statement.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Statement {
    /// The session (the server's connection id) that sent it.
    #[serde(rename = "s")]
    pub session: u64,
    /// When it started, µs after the capture's first statement.
    #[serde(rename = "t")]
    pub offset_us: u64,
    /// The default database, written when it differs from the session's previous
    /// statement's (`Reader` fills it in on every statement).
    #[serde(rename = "db", default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<String>,
    #[serde(rename = "q")]
    pub text: String,
    /// Its time on the server as captured, µs.
    #[serde(rename = "d", default)]
    pub query_time_us: u64,
}

/// What the capture counted and left out.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Trailer {
    pub statements: u64,
    pub sessions: u64,
    /// sizeup's own statements (it watched the server while the traffic ran).
    pub own: u64,
    /// Administrator commands (Quit, Prepare, Close stmt, Ping): no statement text to
    /// send.
    pub admin: u64,
    /// Entries with no time at all (a log without `SET timestamp` or `# Time:`).
    #[serde(default)]
    pub untimed: u64,
    pub skipped_lines: u64,
    pub skipped_entries: u64,
}

/// Why a capture could not be written or read.
#[derive(Debug, thiserror::Error)]
pub enum CaptureError {
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// Not a capture file, or one of a later format.
    #[error("{0}")]
    NotACapture(String),
    /// The slow log held no statement to capture.
    #[error("{0}")]
    Empty(String),
}

/// Writes a capture: the header, each statement, the trailer.
pub struct Writer<W: Write> {
    out: flate2::write::GzEncoder<W>,
    /// Each session's last database written.
    schemas: BTreeMap<u64, Option<String>>,
    pub trailer: Trailer,
}

impl<W: Write> Writer<W> {
    pub fn new(out: W, header: &Header) -> Result<Writer<W>, CaptureError> {
        let mut out = flate2::write::GzEncoder::new(out, flate2::Compression::fast());
        serde_json::to_writer(&mut out, &serde_json::json!({ "capture": header })).map_err(std::io::Error::from)?;
        out.write_all(b"\n")?;
        Ok(Writer { out, schemas: BTreeMap::new(), trailer: Trailer::default() })
    }

    pub fn statement(&mut self, mut s: Statement) -> Result<(), CaptureError> {
        let last = self.schemas.entry(s.session).or_insert(None);
        if *last == s.schema {
            s.schema = None;
        } else {
            last.clone_from(&s.schema);
        }
        serde_json::to_writer(&mut self.out, &s).map_err(std::io::Error::from)?;
        self.out.write_all(b"\n")?;
        self.trailer.statements += 1;
        Ok(())
    }

    /// Writes the trailer and finishes the file.
    pub fn finish(mut self) -> Result<(Trailer, W), CaptureError> {
        self.trailer.sessions = self.schemas.len() as u64;
        serde_json::to_writer(&mut self.out, &serde_json::json!({ "end": &self.trailer }))
            .map_err(std::io::Error::from)?;
        self.out.write_all(b"\n")?;
        let w = self.out.finish()?;
        Ok((self.trailer, w))
    }
}

/// Reads a capture's statements in the order written, each with its database.
pub struct Reader<R: Read> {
    lines: std::io::Lines<BufReader<flate2::read::GzDecoder<R>>>,
    pub header: Header,
    /// Read at the end; None until then, and for a file cut short.
    pub trailer: Option<Trailer>,
    schemas: BTreeMap<u64, Option<String>>,
}

impl<R: Read> Reader<R> {
    pub fn new(input: R, origin: &str) -> Result<Reader<R>, CaptureError> {
        let not = || {
            CaptureError::NotACapture(format!(
                "{origin} is not a sizeup capture (write one with `sizeup capture --slow-log FILE -o {origin}`)"
            ))
        };
        let mut lines = BufReader::new(flate2::read::GzDecoder::new(input)).lines();
        let first = lines.next().ok_or_else(not)?.map_err(|_| not())?;
        #[derive(Deserialize)]
        struct First {
            capture: Header,
        }
        let header = serde_json::from_str::<First>(&first).map_err(|_| not())?.capture;
        if header.version > VERSION {
            return Err(CaptureError::NotACapture(format!(
                "{origin} is a capture of format {} and this sizeup reads format {VERSION} or earlier: use a later release",
                header.version
            )));
        }
        Ok(Reader { lines, header, trailer: None, schemas: BTreeMap::new() })
    }
}

impl<R: Read> Iterator for Reader<R> {
    type Item = Result<Statement, CaptureError>;

    fn next(&mut self) -> Option<Self::Item> {
        let line = match self.lines.next()? {
            Ok(l) => l,
            // A file cut short ends at its last whole line.
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return None,
            Err(e) => return Some(Err(e.into())),
        };
        if line.starts_with("{\"end\"") {
            #[derive(Deserialize)]
            struct End {
                end: Trailer,
            }
            self.trailer = serde_json::from_str::<End>(&line).ok().map(|e| e.end);
            return None;
        }
        let mut s: Statement = match serde_json::from_str(&line) {
            Ok(s) => s,
            Err(e) => return Some(Err(CaptureError::NotACapture(format!("a statement line that does not read: {e}")))),
        };
        let last = self.schemas.entry(s.session).or_insert(None);
        match &s.schema {
            Some(db) => *last = Some(db.clone()),
            None => s.schema.clone_from(last),
        }
        Some(Ok(s))
    }
}

/// A slow log written as a capture to `out`. The log is read twice: once for its first
/// start and, where its times are whole seconds, how many statements each second
/// holds; then each statement is written with its offset (a second's statements
/// spread over it in their logged order). Memory stays bounded by a second's count
/// table, whatever the log's size. Returns the trailer.
pub fn from_slow_log<L: BufRead, W: Write>(
    mut open: impl FnMut() -> std::io::Result<L>,
    source: &str,
    out: W,
) -> Result<(Header, Trailer), CaptureError> {
    let mut per_second: BTreeMap<i64, u32> = BTreeMap::new();
    let (mut first, mut seconds, mut micros) = (None::<i64>, 0u64, 0u64);
    for e in SlowLog::new(open()?) {
        let e = e?;
        if e.admin || is_own(&e.text) {
            continue;
        }
        let Some((start, exact)) = e.start() else { continue };
        first = Some(first.map_or(start, |f| f.min(start)));
        if exact {
            micros += 1;
        } else {
            seconds += 1;
            *per_second.entry(start.div_euclid(1_000_000)).or_default() += 1;
        }
    }
    let Some(first) = first else {
        return Err(CaptureError::Empty(format!(
            "{source} holds no statement to capture: is it a slow log written at long_query_time = 0?"
        )));
    };
    let precision = if seconds > micros { Precision::Seconds } else { Precision::Microseconds };
    let header =
        Header { version: VERSION, source: source.to_string(), precision, start_us: first, tables: Vec::new() };
    let mut w = Writer::new(out, &header)?;
    let mut seen: BTreeMap<i64, u32> = BTreeMap::new();
    let mut log = SlowLog::new(open()?);
    for e in log.by_ref() {
        let e = e?;
        if e.admin {
            w.trailer.admin += 1;
            continue;
        }
        if is_own(&e.text) {
            w.trailer.own += 1;
            continue;
        }
        let Some((start, exact)) = e.start() else {
            w.trailer.untimed += 1;
            continue;
        };
        let start = match exact {
            true => start,
            false => {
                let second = start.div_euclid(1_000_000);
                let n = per_second.get(&second).copied().unwrap_or(1).max(1) as i64;
                let i = seen.entry(second).or_default();
                let at = second * 1_000_000 + *i as i64 * 1_000_000 / n;
                *i += 1;
                at
            }
        };
        w.statement(Statement {
            session: e.thread.unwrap_or(0),
            offset_us: (start - first).max(0) as u64,
            schema: e.schema,
            text: e.text,
            query_time_us: e.query_time_us,
        })?;
    }
    let Skipped { lines, entries } = log.skipped;
    w.trailer.skipped_lines = lines;
    w.trailer.skipped_entries = entries;
    let (trailer, _) = w.finish()?;
    Ok((header, trailer))
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOG: &str = "\
# Time: 231127 10:00:00
# User@Host: sb[sb] @ localhost []
# Thread_id: 31  Schema: sbtest  QC_hit: No
# Query_time: 0.000118  Lock_time: 0.000026  Rows_sent: 1  Rows_examined: 1
SET timestamp=1701079200;
BEGIN;
# User@Host: sb[sb] @ localhost []
# Thread_id: 32  Schema: sbtest  QC_hit: No
# Query_time: 0.000118  Lock_time: 0.000026  Rows_sent: 1  Rows_examined: 1
SET timestamp=1701079200;
SELECT c FROM sbtest1 WHERE id=1;
# User@Host: sb[sb] @ localhost []
# Thread_id: 9  Schema:   QC_hit: No
# Query_time: 0.000118  Lock_time: 0.000026  Rows_sent: 1  Rows_examined: 1
SET timestamp=1701079200;
/* sizeup */ SHOW GLOBAL STATUS;
# User@Host: sb[sb] @ localhost []
# Thread_id: 31  Schema: sbtest  QC_hit: No
# Query_time: 0.000118  Lock_time: 0.000026  Rows_sent: 1  Rows_examined: 1
SET timestamp=1701079200;
SELECT c FROM sbtest1 WHERE id=2;
# User@Host: sb[sb] @ localhost []
# Thread_id: 31  Schema: sbtest  QC_hit: No
# Query_time: 0.000118  Lock_time: 0.000026  Rows_sent: 1  Rows_examined: 1
SET timestamp=1701079200;
COMMIT;
# Time: 231127 10:00:01
# User@Host: sb[sb] @ localhost []
# Thread_id: 32  Schema: sbtest  QC_hit: No
# Query_time: 0.000118  Lock_time: 0.000026  Rows_sent: 1  Rows_examined: 1
SET timestamp=1701079201;
SELECT c FROM sbtest1 WHERE id=3;
";

    /// seconds_are_spread_in_logged_order: MariaDB's file knows the second; its four
    /// statements of 10:00:00 start a quarter of a second apart, in the order logged,
    /// and sizeup's own status read is left out and counted.
    #[test]
    fn seconds_are_spread_in_logged_order() {
        let mut out = Vec::new();
        let (header, trailer) = from_slow_log(|| Ok(LOG.as_bytes()), "slow.log", &mut out).unwrap();
        assert_eq!(header.precision, Precision::Seconds);
        assert_eq!((trailer.statements, trailer.sessions, trailer.own), (5, 2, 1));
        let r = Reader::new(&out[..], "c").unwrap();
        let got: Vec<(u64, u64, String)> = r.map(|s| s.unwrap()).map(|s| (s.session, s.offset_us, s.text)).collect();
        assert_eq!(
            got.iter().map(|g| (g.0, g.1)).collect::<Vec<_>>(),
            [(31, 0), (32, 250_000), (31, 500_000), (31, 750_000), (32, 1_000_000)]
        );
        assert_eq!(got[4].2, "SELECT c FROM sbtest1 WHERE id=3");
    }

    /// A capture reads back as written, each statement with its database, and says
    /// what it is not: another file, or a later format.
    #[test]
    fn captures_read_back_as_written() {
        let header = Header { version: VERSION, source: "t".into(), start_us: 5, ..Default::default() };
        let mut w = Writer::new(Vec::new(), &header).unwrap();
        for (i, db) in [Some("a"), Some("a"), Some("b")].into_iter().enumerate() {
            let s = Statement {
                session: 1,
                offset_us: i as u64,
                schema: db.map(Into::into),
                text: format!("SELECT {i}"),
                query_time_us: 3,
            };
            w.statement(s).unwrap();
        }
        let (trailer, bytes) = w.finish().unwrap();
        let mut r = Reader::new(&bytes[..], "c").unwrap();
        assert_eq!(r.header, header);
        let dbs: Vec<Option<String>> = r.by_ref().map(|s| s.unwrap().schema).collect();
        assert_eq!(dbs, [Some("a".into()), Some("a".into()), Some("b".into())]);
        assert_eq!(r.trailer, Some(trailer));
        // Cut short: the statements up to the cut, no trailer.
        let mut cut = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        let mut text = String::new();
        flate2::read::GzDecoder::new(&bytes[..]).read_to_string(&mut text).unwrap();
        cut.write_all(text.lines().take(2).collect::<Vec<_>>().join("\n").as_bytes()).unwrap();
        let cut = cut.finish().unwrap();
        let mut r = Reader::new(&cut[..], "c").unwrap();
        assert_eq!(r.by_ref().count(), 1);
        assert_eq!(r.trailer, None);
        assert!(
            matches!(Reader::new(&b"not gzip"[..], "x.log"), Err(CaptureError::NotACapture(m)) if m.starts_with("x.log is not a sizeup capture"))
        );
    }
}
