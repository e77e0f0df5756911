//! A statement's digest: its text with the values taken out, so that statements that
//! differ only in their values group together. The rules are pt-query-digest's
//! (Percona Toolkit's `QueryRewriter::fingerprint`), step for step, so that a capture's
//! digests are the ones a DBA already reads in pt-query-digest's report:
//!
//! `SELECT c FROM sbtest1 WHERE id=5025` -> `select c from sbtest? where id=?`
//!
//! (numbers anywhere, table names' digits included, become `?`; strings, NULL, IN and
//! VALUES lists collapse; comments, `ASC` after ORDER BY and LIMIT's values go).

use regex::Regex;
use std::sync::OnceLock;

struct Rules {
    call: Regex,
    multi_insert: Regex,
    multi_line_comment: Regex,
    use_db: Regex,
    escaped_quote: Regex,
    double_quoted: Regex,
    single_quoted: Regex,
    number: Regex,
    leftover: Regex,
    null: Regex,
    lists: Regex,
    limit: Regex,
    asc: Regex,
    select_start: Regex,
}

fn rules() -> &'static Rules {
    static RULES: OnceLock<Rules> = OnceLock::new();
    RULES.get_or_init(|| {
        let re = |r: &str| Regex::new(r).expect("a valid rule");
        Rules {
            call: re(r"(?i)\A\s*(call\s+\S+)\("),
            multi_insert: re(r"(?is)\A((?:INSERT|REPLACE)(?: IGNORE)?\s+INTO.+?VALUES\s*\(.*?\))\s*,\s*\("),
            multi_line_comment: re(r"(?s)/\*[^!].*?\*/"),
            use_db: re(r"(?i)\Ause \S+\n?\z"),
            escaped_quote: re(r#"\\["']"#),
            double_quoted: re(r#"(?s)".*?""#),
            single_quoted: re(r"(?s)'.*?'"),
            number: re(r"[0-9+-][0-9a-f.xb+-]*"),
            leftover: re(r"[xb.+-]\?"),
            null: re(r"(?-u:\b)null(?-u:\b)"),
            lists: re(r"(?-u:\b)(in|values?)(?:[\s,]*\([\s?,]*\))+"),
            limit: re(r"(?-u:\b)limit \?(?:, ?\?| offset \?)?"),
            asc: re(r"(?i)(.+?)\s+ASC"),
            select_start: re(r"(?-u:\b)select\s"),
        }
    })
}

/// The digest of `query`, as pt-query-digest writes it.
pub fn fingerprint(query: &str) -> String {
    let r = rules();
    if query.starts_with("SELECT /*!40001 SQL_NO_CACHE */ * FROM `") {
        return "mysqldump".into();
    }
    if percona_toolkit_mark(query) {
        return "percona-toolkit".into();
    }
    if query.starts_with("administrator command: ") {
        return query.into();
    }
    if let Some(c) = r.call.captures(query) {
        return c[1].to_lowercase();
    }
    let mut q: String = match r.multi_insert.captures(query) {
        Some(c) => c[1].to_string(),
        None => query.to_string(),
    };
    q = strip_one_line_comments(&q);
    q = r.multi_line_comment.replace_all(&q, "").into_owned();
    if r.use_db.is_match(&q) {
        return "use ?".into();
    }
    q = r.escaped_quote.replace_all(&q, "").into_owned();
    q = r.double_quoted.replace_all(&q, "?").into_owned();
    q = r.single_quoted.replace_all(&q, "?").into_owned();
    q = r.number.replace_all(&q, "?").into_owned();
    q = r.leftover.replace_all(&q, "?").into_owned();
    let q = q.trim_start();
    let q = q.strip_suffix('\n').unwrap_or(q);
    // Runs of blanks become one space; then lower case.
    let mut out = String::with_capacity(q.len());
    let mut blank = false;
    for c in q.chars() {
        if matches!(c, ' ' | '\n' | '\t' | '\r' | '\x0c') {
            if !blank {
                out.push(' ');
            }
            blank = true;
        } else {
            out.push(c);
            blank = false;
        }
    }
    let mut q = out.to_lowercase();
    q = r.null.replace_all(&q, "?").into_owned();
    q = r.lists.replace_all(&q, "$1(?+)").into_owned();
    if q.contains(" union") {
        q = collapse_unions(&q);
    }
    q = r.limit.replace(&q, "limit ?").into_owned();
    if let Some(at) = q.to_ascii_lowercase().find("order by ").filter(|&i| word_start(&q, i)) {
        let from = at + "order by ".len();
        let rest = r.asc.replace_all(&q[from..], "$1").into_owned();
        q = format!("{}{rest}", &q[..from]);
    }
    q
}

/// `/*word.word:N/N*/`: a Percona Toolkit tool's own statement.
fn percona_toolkit_mark(q: &str) -> bool {
    let b = q.as_bytes();
    let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut i = 0;
    while let Some(p) = q[i..].find("/*").map(|p| p + i) {
        let mut j = p + 2;
        let start = j;
        while j < b.len() && word(b[j]) {
            j += 1;
        }
        if j > start && j < b.len() && b[j] == b'.' {
            let k0 = j + 1;
            let mut k = k0;
            while k < b.len() && word(b[k]) {
                k += 1;
            }
            if k > k0
                && b.len() >= k + 6
                && b[k] == b':'
                && b[k + 1].is_ascii_digit()
                && b[k + 2] == b'/'
                && b[k + 3].is_ascii_digit()
                && &b[k + 4..k + 6] == b"*/"
            {
                return true;
            }
        }
        i = p + 2;
    }
    false
}

/// `--` or `#` to the end of the line, where no quote comes first (pt-query-digest's
/// one-line comment rule: crude on purpose, as it is there).
fn strip_one_line_comments(q: &str) -> String {
    let b = q.as_bytes();
    let mut out = String::with_capacity(q.len());
    let mut i = 0;
    let mut copied = 0;
    while i < b.len() {
        let len = match b[i] {
            b'#' => 1,
            b'-' if b.get(i + 1) == Some(&b'-') => 2,
            _ => 0,
        };
        if len == 0 {
            i += 1;
            continue;
        }
        let mut j = i + len;
        while j < b.len() && !matches!(b[j], b'\'' | b'"' | b'\r' | b'\n') {
            j += 1;
        }
        if j == b.len() || matches!(b[j], b'\r' | b'\n') {
            out.push_str(&q[copied..i]);
            copied = j;
            i = j;
        } else {
            i += 1;
        }
    }
    out.push_str(&q[copied..]);
    out
}

fn word_start(q: &str, i: usize) -> bool {
    i == 0 || !q.as_bytes()[i - 1].is_ascii_alphanumeric() && q.as_bytes()[i - 1] != b'_'
}

/// `select A union select A union all select A` -> `select A /*repeat union all*/`:
/// a SELECT repeated by UNION, written once (the last separator named).
fn collapse_unions(q: &str) -> String {
    let r = rules();
    let mut out = String::new();
    let mut pos = 0;
    'outer: while let Some(m) = r.select_start.find_at(q, pos) {
        let start = m.start();
        // The shortest SELECT that a UNION repeats at least once.
        for end in (m.end()..q.len()).filter(|&e| q.is_char_boundary(e)) {
            let body = &q[start..end];
            let mut at = end;
            let mut sep = None;
            loop {
                let rest = &q[at..];
                let s = [" union all ", " union "].into_iter().find(|s| rest.starts_with(s));
                let Some(s) = s else { break };
                if !q[at + s.len()..].starts_with(body) {
                    break;
                }
                sep = Some(s.trim_end());
                at += s.len() + body.len();
            }
            if let Some(sep) = sep {
                out.push_str(&q[pos..start]);
                out.push_str(body);
                out.push_str(&format!(" /*repeat{sep}*/"));
                pos = at;
                continue 'outer;
            }
        }
        out.push_str(&q[pos..m.end()]);
        pos = m.end();
    }
    out.push_str(&q[pos..]);
    out
}

#[cfg(test)]
mod tests {
    use super::fingerprint as f;

    /// The cases pt-query-digest's own tests pin (QueryRewriter.t), and sysbench's
    /// statements.
    #[test]
    fn digests_are_pt_query_digests() {
        assert_eq!(f("SELECT c FROM sbtest1 WHERE id=5025"), "select c from sbtest? where id=?");
        assert_eq!(
            f("SELECT c FROM sbtest1 WHERE id BETWEEN 5025 AND 5124 ORDER BY c"),
            "select c from sbtest? where id between ? and ? order by c"
        );
        assert_eq!(
            f("INSERT INTO sbtest1 (id, k, c, pad) VALUES (5025, 4993, '8385-7', '673-72')"),
            "insert into sbtest? (id, k, c, pad) values(?+)"
        );
        assert_eq!(f("UPDATE sbtest1 SET k=k+1 WHERE id=7"), "update sbtest? set k=k? where id=?");
        assert_eq!(f("BEGIN"), "begin");
        assert_eq!(f("select * from a where b in (1, 2, 3) and c = NULL"), "select * from a where b in(?+) and c = ?");
        assert_eq!(f("INSERT INTO t VALUES (1,'a'),(2,'b'),(3,'c')"), "insert into t values(?+)");
        assert_eq!(f("SELECT * FROM t LIMIT 10, 20"), "select * from t limit ?");
        assert_eq!(f("SELECT * FROM t ORDER BY a ASC, b ASC"), "select * from t order by a, b");
        assert_eq!(f("select 1 -- comment\nfrom t"), "select ? from t");
        assert_eq!(f("select /* hint */ a from t"), "select a from t");
        assert_eq!(f("select /*!40001 hint */ a from t"), "select /*!? hint */ a from t");
        assert_eq!(f("use sbtest"), "use ?");
        assert_eq!(f("CALL foo(1, 2)"), "call foo");
        assert_eq!(f("administrator command: Quit"), "administrator command: Quit");
        assert_eq!(f("SELECT /*!40001 SQL_NO_CACHE */ * FROM `t`"), "mysqldump");
        assert_eq!(f("REPLACE /*foo.bar:3/3*/ INTO checksum.checksum"), "percona-toolkit");
        assert_eq!(
            f("select a from t union select a from t union all select a from t"),
            "select a from t /*repeat union all*/"
        );
        // Upper-case hex digits are not in pt's number rule: 0x1F leaves an `f`.
        assert_eq!(f("SELECT \"x\" , 0x1F, -1.5e3 FROM t"), "select ? , ?f, ? from t");
    }
}
