//! What a capture holds: its length, sessions and rate, the read/write share, and one
//! row per digest (count, share of the server's time, mean and p99 as captured), the
//! digests by their share of time, as pt-query-digest ranks them.

use super::file::Statement;
use super::fingerprint::fingerprint;
use super::Kind;
use hdrhistogram::Histogram;
use std::collections::{BTreeMap, HashMap};

/// One digest's statements.
#[derive(Clone, Debug)]
pub struct Row {
    pub digest: String,
    pub kind: Kind,
    pub count: u64,
    /// Its statements' time on the server, µs, all together.
    pub time_us: u64,
    /// Of all statements' time.
    pub share: f64,
    pub mean_ms: f64,
    pub p99_ms: f64,
    /// One statement as captured, to show what the digest stands for.
    pub example: String,
}

/// A capture summarised.
#[derive(Clone, Debug, Default)]
pub struct Summary {
    pub statements: u64,
    pub sessions: u64,
    /// From the first statement's start to the last one's end, seconds.
    pub duration_s: f64,
    /// Statements by kind.
    pub kinds: BTreeMap<Kind, u64>,
    /// By share of time, largest first.
    pub rows: Vec<Row>,
}

impl Summary {
    pub fn per_second(&self) -> Option<f64> {
        (self.duration_s > 0.0).then(|| self.statements as f64 / self.duration_s)
    }

    /// Of the statements that read or write, the share that write.
    pub fn write_share(&self) -> Option<f64> {
        let r = self.kinds.get(&Kind::Read).copied().unwrap_or(0);
        let w = self.kinds.get(&Kind::Write).copied().unwrap_or(0);
        (r + w > 0).then(|| w as f64 / (r + w) as f64)
    }
}

struct Acc {
    kind: Kind,
    count: u64,
    time_us: u64,
    hist: Histogram<u64>,
    example: String,
}

/// Summarises statements as they stream by: one histogram per digest, nothing per
/// statement.
#[derive(Default)]
pub struct Digester {
    by: HashMap<String, Acc>,
    sessions: std::collections::HashSet<u64>,
    kinds: BTreeMap<Kind, u64>,
    statements: u64,
    first_us: Option<u64>,
    last_end_us: u64,
}

impl Digester {
    pub fn add(&mut self, s: &Statement) {
        let digest = fingerprint(&s.text);
        let kind = Kind::of(&s.text);
        let acc = self.by.entry(digest).or_insert_with(|| Acc {
            kind,
            count: 0,
            time_us: 0,
            hist: Histogram::new(3).expect("3 significant figures"),
            example: s.text.chars().take(200).collect(),
        });
        acc.count += 1;
        acc.time_us += s.query_time_us;
        acc.hist.saturating_record(s.query_time_us.max(1));
        self.sessions.insert(s.session);
        *self.kinds.entry(kind).or_default() += 1;
        self.statements += 1;
        self.first_us = Some(self.first_us.map_or(s.offset_us, |f| f.min(s.offset_us)));
        self.last_end_us = self.last_end_us.max(s.offset_us + s.query_time_us);
    }

    pub fn finish(self) -> Summary {
        let total: u64 = self.by.values().map(|a| a.time_us).sum();
        let mut rows: Vec<Row> = self
            .by
            .into_iter()
            .map(|(digest, a)| Row {
                digest,
                kind: a.kind,
                count: a.count,
                time_us: a.time_us,
                share: if total > 0 { a.time_us as f64 / total as f64 } else { 0.0 },
                mean_ms: a.time_us as f64 / a.count.max(1) as f64 / 1000.0,
                p99_ms: a.hist.value_at_quantile(0.99) as f64 / 1000.0,
                example: a.example,
            })
            .collect();
        rows.sort_by(|a, b| b.time_us.cmp(&a.time_us).then(b.count.cmp(&a.count)).then(a.digest.cmp(&b.digest)));
        let first = self.first_us.unwrap_or(0);
        Summary {
            statements: self.statements,
            sessions: self.sessions.len() as u64,
            duration_s: self.last_end_us.saturating_sub(first) as f64 / 1e6,
            kinds: self.kinds,
            rows,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_capture_is_summarised_by_digest() {
        let mut d = Digester::default();
        let st = |session, t, text: &str, us| Statement {
            session,
            offset_us: t,
            schema: None,
            text: text.into(),
            query_time_us: us,
        };
        for i in 0..100u64 {
            d.add(&st(i % 4, i * 10_000, &format!("SELECT c FROM sbtest1 WHERE id={i}"), 100));
        }
        d.add(&st(1, 500_000, "UPDATE sbtest1 SET k=k+1 WHERE id=3", 9_900));
        d.add(&st(2, 989_999, "COMMIT", 10_001));
        let s = d.finish();
        assert_eq!((s.statements, s.sessions), (102, 4));
        assert_eq!(s.duration_s, 1.0);
        assert_eq!(s.write_share(), Some(1.0 / 101.0));
        assert_eq!(s.rows.len(), 3);
        assert_eq!(s.rows[0].digest, "commit", "the largest share of time first");
        let select = s.rows.iter().find(|r| r.digest == "select c from sbtest? where id=?").unwrap();
        assert_eq!((select.count, select.kind), (100, Kind::Read));
        assert!((select.share - 10_000.0 / 29_901.0).abs() < 1e-12);
        assert!((select.p99_ms - 0.1).abs() < 0.001, "{}", select.p99_ms);
    }
}
