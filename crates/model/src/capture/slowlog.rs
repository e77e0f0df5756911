//! The slow query log as MariaDB and MySQL 5.7/8.x write it to a file, read as a stream
//! of entries in bounded memory: one entry (its header lines and its statement) at a
//! time, whatever the file's size.
//!
//! An entry is a few `# ` header lines, then `use db;` when the default database
//! changed, `SET timestamp=N;` (the statement's start, in whole seconds), then the
//! statement, over as many lines as it has:
//!
//! ```text
//! # Time: 231127 10:00:00                      (MariaDB: only when the second changed)
//! # Time: 2023-11-27T10:00:00.123456Z          (MySQL 5.7 and 8.x: every entry)
//! # User@Host: sb[sb] @ localhost []  Id:    12
//! # Thread_id: 12  Schema: sbtest  QC_hit: No  (MariaDB)
//! # Query_time: 0.000118  Lock_time: 0.000026  Rows_sent: 1  Rows_examined: 1
//! use sbtest;
//! SET timestamp=1701079200;
//! SELECT c FROM sbtest1 WHERE id=5025;
//! ```
//!
//! A server that starts (or a log that is flushed) writes three lines of its own
//! ("... Version: ... started with:", "Tcp port: ...", "Time Id Command Argument"):
//! they belong to no entry. A log cut mid-entry (rotated, or copied while written)
//! loses that entry only: lines before the first header are skipped, and a last entry
//! without its statement is dropped and counted.

use std::io::BufRead;

/// One logged statement.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Entry {
    /// The connection that ran it (`Id:` or `# Thread_id:`); None when the log does
    /// not say (a short log format).
    pub thread: Option<u64>,
    /// `user[user] @ host [ip]` as logged.
    pub user_host: String,
    /// The default database it ran in, when known.
    pub schema: Option<String>,
    /// `# Time:` in µs since the epoch (UTC), when the entry or one before it in the
    /// same second had one; `micros` says whether it had a fraction.
    pub time_us: Option<i64>,
    pub micros: bool,
    /// `SET timestamp=N`: the statement's start, whole seconds since the epoch.
    pub timestamp: Option<i64>,
    /// log_slow_extra's `Start:`, µs since the epoch (MySQL 8.0.14 and later).
    pub start_us: Option<i64>,
    pub query_time_us: u64,
    pub lock_time_us: u64,
    pub rows_sent: u64,
    pub rows_examined: u64,
    /// The statement as sent, without the `;` the log ends it with.
    pub text: String,
    /// `# administrator command: Quit;` and its kind: not a statement a session sent
    /// as text (Quit, Prepare, Close stmt, Ping, ...).
    pub admin: bool,
}

impl Entry {
    /// When the statement started, µs since the epoch, and whether to the µs (else the
    /// second is known, and the µs are 0). `Start:` when the log has it; else `# Time:`
    /// with µs, which MySQL writes at the statement's end (start = end - Query_time) or,
    /// in some releases, at its start: the one whose second is `SET timestamp`'s is
    /// taken. Else `SET timestamp`, else `# Time:`'s second.
    pub fn start(&self) -> Option<(i64, bool)> {
        if let Some(s) = self.start_us {
            return Some((s, true));
        }
        if let (Some(t), true) = (self.time_us, self.micros) {
            let from_end = t - self.query_time_us as i64;
            let second = |us: i64| us.div_euclid(1_000_000);
            return Some(match self.timestamp {
                Some(ts) if second(from_end) != ts && second(t) == ts => (t, true),
                _ => (from_end, true),
            });
        }
        match (self.timestamp, self.time_us) {
            (Some(ts), _) => Some((ts * 1_000_000, false)),
            (None, Some(t)) => Some((t - self.query_time_us as i64, false)),
            (None, None) => None,
        }
    }
}

/// What reading the log skipped, said beside what it found.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Skipped {
    /// Lines before the first entry's header (a log cut mid-entry) and the server's own
    /// start-up lines.
    pub lines: u64,
    /// Entries without a statement (the log ended, or was cut, inside them).
    pub entries: u64,
}

/// Reads entries one by one from a slow log.
pub struct SlowLog<R> {
    input: R,
    line: Vec<u8>,
    /// A line read but not yet used: the header that began the next entry.
    pending: Option<Vec<u8>>,
    /// `# Time:` lasts until the next one (MariaDB writes it once a second).
    time: Option<(i64, bool)>,
    /// `use db;` lasts until the next one (MySQL writes it when the database changes,
    /// for the log, not per connection).
    schema: Option<String>,
    pub skipped: Skipped,
    /// Bytes read so far.
    pub bytes: u64,
}

impl<R: BufRead> SlowLog<R> {
    pub fn new(input: R) -> SlowLog<R> {
        SlowLog {
            input,
            line: Vec::new(),
            pending: None,
            time: None,
            schema: None,
            skipped: Skipped::default(),
            bytes: 0,
        }
    }

    /// The next line without its line end; None at the end of the input.
    fn next_line(&mut self) -> std::io::Result<Option<Vec<u8>>> {
        if let Some(l) = self.pending.take() {
            return Ok(Some(l));
        }
        self.line.clear();
        let n = self.input.read_until(b'\n', &mut self.line)?;
        if n == 0 {
            return Ok(None);
        }
        self.bytes += n as u64;
        while matches!(self.line.last(), Some(b'\n' | b'\r')) {
            self.line.pop();
        }
        Ok(Some(std::mem::take(&mut self.line)))
    }

    /// The next entry; None at the end. An error only when the input cannot be read.
    pub fn next_entry(&mut self) -> std::io::Result<Option<Entry>> {
        // Up to the first header line of an entry.
        let first = loop {
            let Some(l) = self.next_line()? else { return Ok(None) };
            if starts_entry(&l) {
                break l;
            }
            if !l.is_empty() {
                self.skipped.lines += 1;
            }
        };
        let mut e = Entry::default();
        let mut text: Vec<u8> = Vec::new();
        let mut in_text = false;
        let mut line = Some(first);
        while let Some(l) = line {
            if in_text || !l.starts_with(b"#") {
                if in_text && starts_entry(&l) {
                    self.pending = Some(l);
                    break;
                }
                if server_banner(&l) {
                    self.skipped.lines += 1;
                } else if !in_text && is_use(&l) {
                    // `use sbtest;`, or quoted as MariaDB writes it: use `sbtest`;
                    let db = String::from_utf8_lossy(trim_semicolon(&l[4..])).trim().to_string();
                    self.schema = Some(match db.strip_prefix('`').and_then(|d| d.strip_suffix('`')) {
                        Some(quoted) => quoted.replace("``", "`"),
                        None => db,
                    });
                } else if !in_text && log_settings(&l) {
                    // `SET timestamp=N;`, or with the ids a statement set:
                    // `SET last_insert_id=5,insert_id=6,timestamp=N;`.
                    let set = String::from_utf8_lossy(trim_semicolon(&l[4..])).into_owned();
                    for pair in set.split(',') {
                        if let Some(("timestamp", v)) = pair.split_once('=').map(|(k, v)| (k.trim(), v)) {
                            e.timestamp = v.trim().parse().ok();
                        }
                    }
                } else {
                    if in_text {
                        text.push(b'\n');
                    }
                    text.extend_from_slice(&l);
                    in_text = true;
                }
            } else if l.starts_with(b"# administrator command: ") && !in_text {
                text.extend_from_slice(&l[2..]);
                e.admin = true;
                in_text = true;
            } else {
                // A header line of this entry (`# Time:` only before any other header).
                if l.starts_with(b"# Time: ") && (e.thread.is_some() || !e.user_host.is_empty()) {
                    self.pending = Some(l);
                    break;
                }
                self.header(&l, &mut e);
            }
            line = self.next_line()?;
        }
        if !in_text {
            self.skipped.entries += 1;
            return self.next_entry();
        }
        while matches!(text.last(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            text.pop();
        }
        if text.last() == Some(&b';') {
            text.pop();
        }
        e.text = String::from_utf8_lossy(&text).into_owned();
        if let Some((t, micros)) = self.time {
            e.time_us = Some(t);
            e.micros = micros;
        }
        if e.schema.is_none() {
            e.schema = self.schema.clone();
        }
        Ok(Some(e))
    }

    fn header(&mut self, l: &[u8], e: &mut Entry) {
        let l = String::from_utf8_lossy(l);
        if let Some(t) = l.strip_prefix("# Time: ") {
            self.time = parse_time(t.trim());
            return;
        }
        if let Some(rest) = l.strip_prefix("# User@Host: ") {
            let (who, id) = match rest.find("Id:") {
                Some(i) => (&rest[..i], rest[i + 3..].trim().parse().ok()),
                None => (rest, None),
            };
            e.user_host = who.trim().to_string();
            e.thread = e.thread.or(id);
            return;
        }
        // `# Key: value  Key: value ...` lines: Thread_id and Schema (MariaDB), the
        // times and counts, log_slow_extra's Start.
        let fields = l.trim_start_matches('#').split_whitespace().collect::<Vec<_>>();
        for pair in fields.windows(2) {
            let (k, v) = (pair[0], pair[1]);
            match k {
                "Thread_id:" => e.thread = v.parse().ok().or(e.thread),
                "Schema:" if !v.ends_with(':') => e.schema = Some(v.to_string()),
                "Query_time:" => e.query_time_us = seconds_us(v),
                "Lock_time:" => e.lock_time_us = seconds_us(v),
                "Rows_sent:" => e.rows_sent = v.parse().unwrap_or(0),
                "Rows_examined:" => e.rows_examined = v.parse().unwrap_or(0),
                "Start:" => e.start_us = parse_time(v).filter(|t| t.1).map(|t| t.0),
                _ => {}
            }
        }
    }
}

impl<R: BufRead> Iterator for SlowLog<R> {
    type Item = std::io::Result<Entry>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_entry().transpose()
    }
}

/// The lines an entry starts with: `# Time:` or `# User@Host:` (a log without the
/// time line), or MariaDB's `# Thread_id:` where User@Host was left out.
fn starts_entry(l: &[u8]) -> bool {
    l.starts_with(b"# Time: ") || l.starts_with(b"# User@Host: ")
}

/// The lines a server writes when it opens the log.
fn server_banner(l: &[u8]) -> bool {
    // Cheap tests first: this runs on every statement line.
    if l.ends_with(b"started with:") || l.ends_with(b"embedded library") {
        return String::from_utf8_lossy(l).contains(", Version: ");
    }
    if l.starts_with(b"Tcp port: ") || l.starts_with(b"TCP Port: ") {
        return true;
    }
    l.starts_with(b"Time")
        && l.len() < 80
        && String::from_utf8_lossy(l).split_whitespace().collect::<Vec<_>>() == ["Time", "Id", "Command", "Argument"]
}

/// The `SET` line the server writes with an entry (case-sensitive, as it writes it:
/// a user's `set timestamp=...` is a statement).
fn log_settings(l: &[u8]) -> bool {
    l.starts_with(b"SET timestamp=") || l.starts_with(b"SET insert_id=") || l.starts_with(b"SET last_insert_id=")
}

fn is_use(l: &[u8]) -> bool {
    l.len() > 4 && l[..4].eq_ignore_ascii_case(b"use ") && l.ends_with(b";") && !l[4..].contains(&b' ')
}

fn trim_semicolon(v: &[u8]) -> &[u8] {
    v.strip_suffix(b";").unwrap_or(v)
}

/// "0.000118" seconds in µs.
fn seconds_us(v: &str) -> u64 {
    let (whole, frac) = v.split_once('.').unwrap_or((v, ""));
    let whole: u64 = whole.parse().unwrap_or(0);
    let mut digits: String = frac.chars().take(6).collect();
    while digits.len() < 6 {
        digits.push('0');
    }
    whole * 1_000_000 + digits.parse::<u64>().unwrap_or(0)
}

/// `# Time:` in µs since the epoch, and whether it had a fraction: MySQL's
/// `2023-11-27T10:00:00.123456Z` (or with an offset, `+01:00`), MariaDB's
/// `231127 10:00:00` or `231127  9:00:00` (the server's local time: read as UTC, which
/// moves every entry alike; offsets, not dates, are what a capture keeps).
pub fn parse_time(t: &str) -> Option<(i64, bool)> {
    let t = t.trim();
    if let Some((date, rest)) = t.split_once('T') {
        let (y, mo, d) = ymd(date, '-')?;
        let (clock, offset_s) = match rest.find(['Z', '+']).or_else(|| rest.rfind('-')) {
            Some(i) => (&rest[..i], offset(&rest[i..])?),
            None => (rest, 0),
        };
        let (secs, micros, frac) = hms(clock)?;
        return Some(((days(y, mo, d) * 86_400 + secs - offset_s) * 1_000_000 + micros, frac));
    }
    let mut parts = t.split_whitespace();
    let date = parts.next()?;
    let clock = parts.next()?;
    if date.len() != 6 || !date.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n = |r: std::ops::Range<usize>| date[r].parse::<i64>().ok();
    let (y, mo, d) = (2000 + n(0..2)?, n(2..4)?, n(4..6)?);
    let (secs, micros, frac) = hms(clock)?;
    Some(((days(y, mo, d) * 86_400 + secs) * 1_000_000 + micros, frac))
}

fn ymd(date: &str, sep: char) -> Option<(i64, i64, i64)> {
    let mut it = date.split(sep).map(|p| p.parse::<i64>().ok());
    Some((it.next()??, it.next()??, it.next()??))
}

/// "10:00:00.123456" as (seconds of the day, µs, whether it had a fraction).
fn hms(clock: &str) -> Option<(i64, i64, bool)> {
    let (clock, frac) = match clock.split_once('.') {
        Some((c, f)) => (c, Some(f)),
        None => (clock, None),
    };
    let (h, m, s) = ymd(clock, ':')?;
    let micros = frac.map_or(0, |f| seconds_us(&format!("0.{f}")) as i64);
    Some((h * 3600 + m * 60 + s, micros, frac.is_some()))
}

/// "Z", "+01:00", "-05:00" in seconds east of UTC.
fn offset(o: &str) -> Option<i64> {
    if o == "Z" {
        return Some(0);
    }
    let sign = if o.starts_with('-') { -1 } else { 1 };
    let (h, m) = o[1..].split_once(':')?;
    Some(sign * (h.parse::<i64>().ok()? * 3600 + m.parse::<i64>().ok()? * 60))
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(log: &str) -> (Vec<Entry>, Skipped) {
        let mut s = SlowLog::new(log.as_bytes());
        let v: Vec<Entry> = s.by_ref().map(Result::unwrap).collect();
        (v, s.skipped)
    }

    /// A MariaDB 10.11 file: `# Time:` once a second, Thread_id and Schema on their
    /// own line, Rows_affected below the times, the server's banner at the top.
    #[test]
    fn mariadb_slow_logs_read_entry_by_entry() {
        let log = "\
/usr/sbin/mariadbd, Version: 10.11.6-MariaDB-0+deb12u1-log (Debian 12). started with:
Tcp port: 3306  Unix socket: /run/mysqld/mysqld.sock
Time		    Id Command	Argument
# Time: 231127 10:00:00
# User@Host: sb[sb] @ localhost []
# Thread_id: 31  Schema: sbtest  QC_hit: No
# Query_time: 0.000118  Lock_time: 0.000026  Rows_sent: 1  Rows_examined: 1
# Rows_affected: 0  Bytes_sent: 190
use sbtest;
SET timestamp=1701079200;
SELECT c FROM sbtest1 WHERE id=5025;
# User@Host: sb[sb] @ localhost []
# Thread_id: 32  Schema: sbtest  QC_hit: No
# Query_time: 0.001000  Lock_time: 0.000000  Rows_sent: 0  Rows_examined: 0
# Rows_affected: 1  Bytes_sent: 52
SET timestamp=1701079200;
UPDATE sbtest1
   SET k=k+1
 WHERE id=7;
# Time: 231127  9:00:01
# User@Host: sb[sb] @ localhost []
# Thread_id: 31  Schema: sbtest  QC_hit: No
# Query_time: 0.000010  Lock_time: 0.000000  Rows_sent: 0  Rows_examined: 0
SET timestamp=1701079201;
COMMIT;
";
        let (v, skipped) = entries(log);
        assert_eq!(v.len(), 3, "{v:#?}");
        assert_eq!(skipped.lines, 3, "the banner");
        assert_eq!((v[0].thread, v[0].schema.as_deref()), (Some(31), Some("sbtest")));
        assert_eq!(v[0].text, "SELECT c FROM sbtest1 WHERE id=5025");
        assert_eq!((v[0].query_time_us, v[0].lock_time_us, v[0].rows_examined), (118, 26, 1));
        assert_eq!(v[1].text, "UPDATE sbtest1\n   SET k=k+1\n WHERE id=7", "a statement over several lines");
        assert_eq!(v[1].start(), Some((1_701_079_200_000_000, false)), "to the second");
        assert_eq!(v[1].time_us, v[0].time_us, "# Time: lasts until the next one");
        assert_eq!(v[2].text, "COMMIT");
        assert_eq!(
            parse_time("231127  9:00:01"),
            Some(((days(2023, 11, 27) * 86_400 + 9 * 3600 + 1) * 1_000_000, false))
        );
    }

    /// MySQL 8's file, as its manual shows it: `# Time:` with µs on every entry, the
    /// connection in User@Host's `Id:`, `use` only when the database changed (for the
    /// log, not the connection), an administrator command, and log_slow_extra's fields.
    #[test]
    fn mysql_8_slow_logs_read_with_their_microseconds() {
        let log = "\
/usr/sbin/mysqld, Version: 8.0.35 (MySQL Community Server - GPL). started with:
Tcp port: 3306  Unix socket: /var/run/mysqld/mysqld.sock
Time                 Id Command    Argument
# Time: 2023-11-27T10:00:00.500000Z
# User@Host: app[app] @ localhost []  Id:     8
# Query_time: 0.200000  Lock_time: 0.000002 Rows_sent: 1  Rows_examined: 1
use `shop`;
SET timestamp=1701079200;
SELECT * FROM orders WHERE id = 5;
# Time: 2023-11-27T10:00:00.600000Z
# User@Host: app[app] @ localhost []  Id:     9
# Query_time: 0.000050  Lock_time: 0.000000 Rows_sent: 0  Rows_examined: 0
SET last_insert_id=5,insert_id=6,timestamp=1701079200;
# administrator command: Quit;
# Time: 2023-11-27T10:00:01.000100Z
# User@Host: app[app] @ localhost []  Id:     8
# Query_time: 0.000100  Lock_time: 0.000001 Rows_sent: 0  Rows_examined: 0 Thread_id: 8 Errno: 0 Killed: 0 Bytes_received: 0 Bytes_sent: 11 Read_first: 0 Read_last: 0 Read_key: 0 Read_next: 0 Read_prev: 0 Read_rnd: 0 Read_rnd_next: 0 Sort_merge_passes: 0 Sort_range_count: 0 Sort_rows: 0 Sort_scan_count: 0 Created_tmp_disk_tables: 0 Created_tmp_tables: 0 Start: 2023-11-27T10:00:01.000000Z End: 2023-11-27T10:00:01.000100Z
SET timestamp=1701079201;
COMMIT;
";
        let (v, _) = entries(log);
        assert_eq!(v.len(), 3, "{v:#?}");
        let t0 = (days(2023, 11, 27) * 86_400 + 10 * 3600) * 1_000_000;
        assert_eq!(v[0].start(), Some((t0 + 300_000, true)), "# Time less Query_time");
        assert_eq!((v[0].thread, v[0].schema.as_deref()), (Some(8), Some("shop")));
        assert_eq!(v[1].schema.as_deref(), Some("shop"), "use lasts for the log");
        assert!(v[1].admin && v[1].text == "administrator command: Quit", "{:?}", v[1]);
        assert_eq!(v[2].start(), Some((t0 + 1_000_000, true)), "log_slow_extra's Start");
        assert_eq!(parse_time("2023-11-27T11:00:00.000001+01:00"), Some((t0 + 1, true)));
    }

    /// a_log_cut_mid_entry_loses_that_entry_only: a rotated log that starts inside a
    /// statement, and one that ends inside the header of the next.
    #[test]
    fn a_log_cut_mid_entry_loses_that_entry_only() {
        let log = "\
 WHERE id=7;
# Query_time: 0.1  Lock_time: 0.0 Rows_sent: 0  Rows_examined: 0
SET timestamp=1701079200;
SELECT 1;
# Time: 2023-11-27T10:00:00.000001Z
# User@Host: app[app] @ localhost []  Id:     8
# Query_time: 0.000001  Lock_time: 0.0 Rows_sent: 1  Rows_examined: 0
SET timestamp=1701079200;
SELECT 2;
# Time: 2023-11-27T10:00:00.000002Z
# User@Host: app[app] @ localhost []  Id:     8
# Query_ti";
        let (v, skipped) = entries(log);
        assert_eq!(v.iter().map(|e| e.text.as_str()).collect::<Vec<_>>(), ["SELECT 2"]);
        assert_eq!((skipped.lines, skipped.entries), (4, 1));
    }
}
