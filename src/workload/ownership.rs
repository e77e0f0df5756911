//! Which tables sizeup made. The mark is the table's own COMMENT, so it travels with the
//! data: any sizeup, on any machine, can tell its tables from a user's (or sysbench's)
//! and refuse to load into or drop the others.

use crate::target::short_error;
use mysql_async::prelude::Queryable;
use mysql_async::Conn;

/// Table comment sizeup writes on every table it creates.
pub const MARK: &str = "created by sizeup";

pub fn comment_clause(workload: &str) -> String {
    format!("COMMENT='{MARK} ({workload})'")
}

/// An existing table and whether sizeup made it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExistingTable {
    pub name: String,
    pub ours: bool,
}

/// Tables of `database` whose names are in `names` (or, when `names` is empty, that
/// match the SQL LIKE `pattern`).
pub async fn existing_tables(
    conn: &mut Conn,
    database: &str,
    names: &[String],
    pattern: &str,
) -> Result<Vec<ExistingTable>, String> {
    let rows: Vec<(String, String)> = conn
        .exec(
            "SELECT TABLE_NAME, TABLE_COMMENT FROM information_schema.TABLES \
             WHERE TABLE_SCHEMA = ? AND TABLE_NAME LIKE ? ORDER BY TABLE_NAME",
            (database, pattern),
        )
        .await
        .map_err(|e| format!("reading the table list of {database}: {}", short_error(&e)))?;
    Ok(rows
        .into_iter()
        .filter(|(n, _)| names.is_empty() || names.contains(n))
        .map(|(name, comment)| ExistingTable { ours: comment.starts_with(MARK), name })
        .collect())
}

#[derive(Debug, Default, PartialEq, serde::Serialize)]
pub struct CleanupReport {
    pub dropped: Vec<String>,
    /// Tables of the workload's names that sizeup did not create, left alone.
    pub kept: Vec<String>,
}

/// Drops the tables of `target`'s database named in `names` (or matching `pattern`
/// and accepted by `is_workload_table`) that sizeup created, and only those.
pub async fn drop_ours(
    target: &crate::target::Target,
    names: &[String],
    pattern: &str,
    is_workload_table: fn(&str) -> bool,
) -> Result<CleanupReport, String> {
    let mut conn = match target.connect().await {
        Ok(c) => c,
        Err(e) if e.is_unknown_database() => {
            return Ok(CleanupReport::default()); // unknown database: nothing to drop
        }
        Err(e) => return Err(e.to_string()),
    };
    let mut report = CleanupReport::default();
    for t in existing_tables(&mut conn, &target.database, names, pattern).await? {
        if !is_workload_table(&t.name) {
            continue;
        }
        if t.ours {
            conn.query_drop(format!("DROP TABLE IF EXISTS {}", crate::target::quote_ident(&t.name)))
                .await
                .map_err(|e| format!("dropping {}: {}", t.name, short_error(&e)))?;
            report.dropped.push(t.name);
        } else {
            report.kept.push(t.name);
        }
    }
    Ok(report)
}

/// The refusal when tables are in the way of a prepare, or `None` when all are free.
pub fn refusal(database: &str, existing: &[ExistingTable], workload: &str) -> Option<String> {
    let foreign: Vec<&str> = existing.iter().filter(|t| !t.ours).map(|t| t.name.as_str()).collect();
    let ours: Vec<&str> = existing.iter().filter(|t| t.ours).map(|t| t.name.as_str()).collect();
    if !foreign.is_empty() {
        return Some(format!(
            "{database} already has tables sizeup did not create ({}); refusing to load into them.\n\
             Use another --database, or drop them yourself if they are disposable.",
            list(&foreign)
        ));
    }
    if !ours.is_empty() {
        return Some(format!(
            "{database} already holds a prepared data set ({}).\n\
             Run it as it is, or `sizeup cleanup {workload}` first to prepare afresh.",
            list(&ours)
        ));
    }
    None
}

fn list(names: &[&str]) -> String {
    if names.len() <= 4 {
        names.join(", ")
    } else {
        format!("{}, ... {} in all", names[..3].join(", "), names.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(name: &str, ours: bool) -> ExistingTable {
        ExistingTable { name: name.into(), ours }
    }

    #[test]
    fn foreign_tables_are_refused_first() {
        let msg = refusal("sbtest", &[t("sbtest1", true), t("sbtest2", false)], "oltp_read_write").unwrap();
        assert!(msg.contains("did not create (sbtest2)"), "{msg}");
    }

    #[test]
    fn own_tables_point_to_cleanup() {
        let msg = refusal("sbtest", &[t("sbtest1", true)], "oltp_read_write").unwrap();
        assert!(msg.contains("sizeup cleanup oltp_read_write"), "{msg}");
        assert_eq!(refusal("sbtest", &[], "x"), None);
    }

    #[test]
    fn long_lists_are_shortened() {
        let many: Vec<_> = (1..=9).map(|i| t(&format!("sbtest{i}"), false)).collect();
        let msg = refusal("db", &many, "x").unwrap();
        assert!(msg.contains("9 in all"), "{msg}");
    }
}
