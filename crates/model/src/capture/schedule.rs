//! A capture as a replay plays it: each session's statements in order with the moment
//! each is due, the digests that name their latency histograms, and how many sessions
//! are open at once (what the server's max_connections must allow).

use super::file::Statement;
use super::fingerprint::fingerprint;
use super::Kind;
use std::collections::HashMap;
use std::sync::Arc;

/// The digests a replay keeps a latency histogram of, by count; the rest are one type.
pub const MAX_TYPES: usize = 24;
/// The type of the digests beyond [`MAX_TYPES`].
pub const OTHER_TYPE: &str = "other statements";

/// One statement as replayed.
#[derive(Clone, Debug, PartialEq)]
pub struct Due {
    /// When it is due, µs after the replay's start at speed 1.
    pub offset_us: u64,
    /// Its latency histogram: an index into [`Schedule::types`].
    pub ty: u32,
    pub kind: Kind,
    /// The database it ran in, when it differs from the session's statement before.
    pub schema: Option<Arc<str>>,
    pub text: Arc<str>,
}

/// One captured session: one connection of the replay.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Session {
    pub id: u64,
    pub statements: Vec<Due>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Schedule {
    pub sessions: Vec<Session>,
    /// Latency histograms' names: the digests with the most statements, then
    /// [`OTHER_TYPE`] when there are more.
    pub types: Vec<String>,
    pub statements: u64,
    /// Statements that change data, replayed.
    pub writes: u64,
    /// Left out by `--read-only`: statements that change data.
    pub writes_left_out: u64,
    /// From the first statement's start to the last one's, µs at speed 1.
    pub span_us: u64,
    /// The most sessions between their first and last statement at one moment.
    pub most_at_once: u32,
    /// The database most sessions start in (a replay's connections start there).
    pub schema: Option<String>,
    /// The application's transactions: each COMMIT or ROLLBACK, and each statement
    /// that reads or writes outside BEGIN ... COMMIT (autocommit).
    pub transactions: u64,
    /// The captured tables' definitions and row counts (a live capture's; a slow-log
    /// file's capture has none).
    pub tables: Vec<super::file::Table>,
}

impl Schedule {
    /// The statements of a capture, as a replay plays them; `read_only` leaves out the
    /// ones that change data (transaction control stays).
    pub fn of<E>(statements: impl Iterator<Item = Result<Statement, E>>, read_only: bool) -> Result<Schedule, E> {
        let mut by_session: HashMap<u64, usize> = HashMap::new();
        let mut sessions: Vec<Session> = Vec::new();
        let mut digests: HashMap<String, (u64, u32)> = HashMap::new();
        let mut texts: HashMap<Box<str>, Arc<str>> = HashMap::new();
        let mut last_schema: HashMap<u64, Option<Arc<str>>> = HashMap::new();
        let (mut n, mut writes, mut writes_left_out) = (0u64, 0u64, 0u64);
        let mut provisional: Vec<Vec<String>> = Vec::new();
        let mut open: HashMap<u64, bool> = HashMap::new();
        let mut transactions = 0u64;
        for s in statements {
            let s = s?;
            let kind = Kind::of(&s.text);
            if read_only && kind == Kind::Write {
                writes_left_out += 1;
                continue;
            }
            let in_txn = open.entry(s.session).or_insert(false);
            transactions += u64::from(counts_as_transaction(&s.text, kind, in_txn));
            writes += u64::from(kind == Kind::Write);
            let digest = fingerprint(&s.text);
            let next = digests.len() as u32;
            let entry = digests.entry(digest.clone()).or_insert((0, next));
            entry.0 += 1;
            let i = *by_session.entry(s.session).or_insert_with(|| {
                sessions.push(Session { id: s.session, statements: Vec::new() });
                provisional.push(Vec::new());
                sessions.len() - 1
            });
            let schema: Option<Arc<str>> = s.schema.as_deref().map(Arc::from);
            let last = last_schema.entry(s.session).or_insert(None);
            let changed = schema.is_some() && *last != schema;
            if changed {
                last.clone_from(&schema);
            }
            // Statements repeat (BEGIN, COMMIT): one copy of each text.
            let text = match texts.get(s.text.as_str()) {
                Some(t) => t.clone(),
                None if s.text.len() <= 64 => {
                    let t: Arc<str> = Arc::from(s.text.as_str());
                    texts.insert(s.text.clone().into_boxed_str(), t.clone());
                    t
                }
                None => Arc::from(s.text.as_str()),
            };
            sessions[i].statements.push(Due {
                offset_us: s.offset_us,
                ty: entry.1,
                kind,
                schema: if changed { schema } else { None },
                text,
            });
            provisional[i].push(digest);
            n += 1;
        }
        // The busiest digests name their own histograms; the rest share one.
        let mut ranked: Vec<(&String, &(u64, u32))> = digests.iter().collect();
        ranked.sort_by(|a, b| b.1 .0.cmp(&a.1 .0).then(a.0.cmp(b.0)));
        let mut types: Vec<String> = ranked.iter().take(MAX_TYPES).map(|(d, _)| (*d).clone()).collect();
        let other = (ranked.len() > MAX_TYPES).then(|| {
            types.push(OTHER_TYPE.to_string());
            types.len() as u32 - 1
        });
        let index: HashMap<&str, u32> = types.iter().enumerate().map(|(i, d)| (d.as_str(), i as u32)).collect();
        for (s, digests) in sessions.iter_mut().zip(&provisional) {
            for (d, digest) in s.statements.iter_mut().zip(digests) {
                d.ty = index.get(digest.as_str()).copied().or(other).expect("a digest is ranked or other");
            }
            // A session's statements in the order they started (the log's order is
            // by their end).
            s.statements.sort_by_key(|d| d.offset_us);
        }
        let first = sessions.iter().filter_map(|s| s.statements.first()).map(|d| d.offset_us).min().unwrap_or(0);
        let last = sessions.iter().filter_map(|s| s.statements.last()).map(|d| d.offset_us).max().unwrap_or(0);
        let mut starts: HashMap<&str, usize> = HashMap::new();
        for s in &sessions {
            if let Some(db) = s.statements.iter().find_map(|d| d.schema.as_deref()) {
                *starts.entry(db).or_default() += 1;
            }
        }
        let schema = starts.into_iter().max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(a.0))).map(|(db, _)| db.to_string());
        Ok(Schedule {
            schema,
            most_at_once: most_at_once(&sessions),
            sessions,
            types,
            statements: n,
            writes,
            writes_left_out,
            span_us: last - first,
            transactions,
            tables: Vec::new(),
        })
    }

    /// Statements a second at speed 1, over the capture's span.
    pub fn rate(&self) -> f64 {
        self.statements as f64 / (self.span_us as f64 / 1e6).max(1e-3)
    }

    /// The application's transactions per statement replayed (1 where it never opened
    /// a transaction).
    pub fn transactions_per_statement(&self) -> f64 {
        if self.statements == 0 {
            return 1.0;
        }
        self.transactions as f64 / self.statements as f64
    }
}

/// Whether a statement ends a transaction of the application's: COMMIT and ROLLBACK
/// end one begun by BEGIN or START TRANSACTION; a read or write outside one is one
/// (autocommit). `in_txn` is the session's state, updated.
fn counts_as_transaction(text: &str, kind: Kind, in_txn: &mut bool) -> bool {
    let word = |w: &str| {
        let t = text.trim_start();
        t.len() >= w.len() && t[..w.len()].eq_ignore_ascii_case(w)
    };
    if word("BEGIN") || word("START TRANSACTION") {
        *in_txn = true;
        return false;
    }
    if word("COMMIT") || word("ROLLBACK") && !word("ROLLBACK TO") {
        let ended = *in_txn;
        *in_txn = false;
        return ended;
    }
    !*in_txn && kind != Kind::Other
}

/// What a replay records as its workload options in each stored run: the capture,
/// the speed and the scale that turns its statements into the captured traffic's.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ReplayOptions {
    pub capture: String,
    pub speed: f64,
    pub read_only: bool,
    pub sessions: usize,
    pub statements: u64,
    /// Statements a second at speed 1.
    #[serde(default)]
    pub captured_rate: f64,
    /// The application's transactions per statement (COMMITs and autocommit statements).
    #[serde(default)]
    pub transactions_per_statement: Option<f64>,
    /// The data was made from the capture's schema (`--prepare-from-schema`), not
    /// copied.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub made_from_schema: bool,
}

/// The most sessions open at one moment, each from its first statement to its last.
fn most_at_once(sessions: &[Session]) -> u32 {
    let mut edges: Vec<(u64, i32)> = Vec::new();
    for s in sessions {
        if let (Some(a), Some(b)) = (s.statements.first(), s.statements.last()) {
            edges.push((a.offset_us, 1));
            edges.push((b.offset_us, -1));
        }
    }
    // At one moment, an opening counts before a closing.
    edges.sort_by_key(|&(t, d)| (t, -d));
    let (mut open, mut most) = (0i32, 0i32);
    for (_, d) in edges {
        open += d;
        most = most.max(open);
    }
    most as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    fn st(session: u64, t: u64, db: Option<&str>, text: &str) -> Result<Statement, ()> {
        Ok(Statement { session, offset_us: t, schema: db.map(Into::into), text: text.into(), query_time_us: 10 })
    }

    #[test]
    fn a_capture_becomes_one_connection_per_session_in_order() {
        let capture = vec![
            st(7, 0, Some("shop"), "BEGIN"),
            st(8, 5, Some("shop"), "SELECT * FROM orders WHERE id = 1"),
            st(7, 20, Some("shop"), "UPDATE orders SET n = 2 WHERE id = 3"),
            st(7, 10, Some("shop"), "SELECT * FROM orders WHERE id = 2"),
            st(8, 30, Some("crm"), "SELECT 1"),
            st(7, 40, Some("shop"), "COMMIT"),
        ];
        let s = Schedule::of(capture.clone().into_iter(), false).unwrap();
        assert_eq!(s.sessions.len(), 2);
        assert_eq!((s.statements, s.span_us, s.most_at_once), (6, 40, 2));
        let seven: Vec<&str> = s.sessions[0].statements.iter().map(|d| &*d.text).collect();
        assert_eq!(
            seven,
            ["BEGIN", "SELECT * FROM orders WHERE id = 2", "UPDATE orders SET n = 2 WHERE id = 3", "COMMIT"],
            "in the order they started"
        );
        let eight = &s.sessions[1].statements;
        assert_eq!((eight[0].schema.as_deref(), eight[1].schema.as_deref()), (Some("shop"), Some("crm")));
        assert_eq!(s.types[eight[0].ty as usize], "select * from orders where id = ?");
        assert_eq!(s.types[0], "select * from orders where id = ?", "the busiest digest first");
        assert_eq!(s.schema.as_deref(), Some("shop"));
        assert_eq!(s.transactions, 3, "one BEGIN ... COMMIT and two autocommit SELECTs");
        let read_only = Schedule::of(capture.into_iter(), true).unwrap();
        assert_eq!((read_only.statements, read_only.writes, read_only.writes_left_out), (5, 0, 1));
        assert_eq!(s.writes, 1);
    }

    #[test]
    fn digests_beyond_the_busiest_share_one_histogram() {
        // Digits become `?` in a digest: the columns are named by letters.
        let name = |i: u64| format!("{}{}", (b'a' + (i / 26) as u8) as char, (b'a' + (i % 26) as u8) as char);
        let capture = (0..MAX_TYPES as u64 + 5).map(|i| st(1, i, None, &format!("SELECT {} FROM t", name(i))));
        let s = Schedule::of(capture, false).unwrap();
        assert_eq!(s.types.len(), MAX_TYPES + 1);
        assert_eq!(s.types.last().unwrap(), OTHER_TYPE);
        let other = s.sessions[0].statements.iter().filter(|d| d.ty as usize == MAX_TYPES).count();
        assert_eq!(other, 5);
    }

    #[test]
    fn transactions_are_commits_and_autocommit_statements() {
        let capture = vec![
            st(1, 0, None, "begin"),
            st(1, 1, None, "SELECT 1"),
            st(1, 2, None, "UPDATE t SET a = 1"),
            st(1, 3, None, "ROLLBACK TO SAVEPOINT s"),
            st(1, 4, None, "COMMIT"),
            st(1, 5, None, "SET NAMES utf8mb4"),
            st(1, 6, None, "INSERT INTO t VALUES (1)"),
            st(1, 7, None, "commit"),
            st(2, 0, None, "START TRANSACTION READ ONLY"),
            st(2, 1, None, "SELECT 2"),
            st(2, 2, None, "rollback"),
        ];
        let s = Schedule::of(capture.into_iter(), false).unwrap();
        // BEGIN..COMMIT, the autocommit INSERT (its COMMIT ends nothing), START..ROLLBACK.
        assert_eq!(s.transactions, 3);
        assert!((s.transactions_per_statement() - 3.0 / 11.0).abs() < 1e-9);
        assert_eq!(s.rate(), 11_000.0, "a span under a millisecond counts as one");
    }

    #[test]
    fn sessions_that_never_overlap_need_one_connection_at_a_time() {
        let capture = vec![st(1, 0, None, "SELECT 1"), st(1, 10, None, "SELECT 1"), st(2, 11, None, "SELECT 1")];
        assert_eq!(Schedule::of(capture.into_iter(), false).unwrap().most_at_once, 1);
    }
}
