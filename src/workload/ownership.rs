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

/// Added to the mark while a prepare loads a table, and removed (by
/// [`mark_complete`]) only once the whole data set is loaded and indexed: a table
/// that still carries it belongs to a prepare that was interrupted or failed.
pub const INCOMPLETE: &str = "; loading, incomplete";

/// The COMMENT clause `clause` with the incomplete mark, for `CREATE TABLE`.
pub fn while_loading(clause: &str) -> String {
    format!("{}{INCOMPLETE}'", clause.trim_end_matches('\''))
}

/// Runs a prepare's own statements on its tables (`(sql, what)`: CREATE TABLE, the
/// ALTER that marks a table complete), in order on `conn`, each watched: one waits for its
/// table's metadata lock while another session holds the table, or for a backup lock.
/// One that fails or stalls undoes the prepare (`names`).
pub async fn run_or_undo(
    target: &crate::target::Target,
    conn: &mut Conn,
    names: &[String],
    statements: impl IntoIterator<Item = (String, String)>,
    every: std::time::Duration,
    workload: &str,
) -> Result<(), String> {
    let id = match crate::target::stall::server_id(conn).await {
        Ok(id) => id,
        Err(e) => return Err(undo_prepare(target, names, e, workload, &[]).await),
    };
    for (sql, what) in statements {
        let done = super::bulk::exec_retrying(conn, &sql, &what);
        // A stalled one's connection stays open (it is the caller's) until the undo has ended it.
        let (e, stalled) = match crate::target::stall::watched(target, id, every, &what, done).await {
            Ok(Ok(())) => continue,
            Ok(Err(e)) => (e, vec![]),
            Err(crate::target::stall::Stalled(e)) => (e, vec![id]),
        };
        return Err(undo_prepare(target, names, e, workload, &stalled).await);
    }
    Ok(())
}

/// The statements that replace each table's comment with its final `clause` (the data
/// set is complete), for [`run_or_undo`].
pub fn mark_complete(names: &[String], clause_of: impl Fn(&str) -> String) -> Vec<(String, String)> {
    names
        .iter()
        .map(|t| {
            let sql = format!("ALTER TABLE {} {}", crate::target::quote_ident(t), clause_of(t));
            (sql, format!("marking {t} complete"))
        })
        .collect()
}

/// What to say about a data set a prepare did not finish, and what to do.
pub fn incomplete_message(database: &str, tables: &[&str], workload: &str) -> String {
    format!(
        "{database} holds an incomplete data set: a prepare was interrupted or failed ({} still marked loading).\n\
         Run `sizeup cleanup {workload}` (with the same --database), then prepare again.",
        list(tables)
    )
}

/// The incomplete tables among `existing`, as a refusal, or `None` when all are complete.
pub fn incomplete(database: &str, existing: &[ExistingTable], workload: &str) -> Option<String> {
    let partial: Vec<&str> = existing.iter().filter(|t| t.ours && !t.complete).map(|t| t.name.as_str()).collect();
    (!partial.is_empty()).then(|| incomplete_message(database, &partial, workload))
}

/// An existing table and whether sizeup made it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExistingTable {
    pub name: String,
    pub ours: bool,
    /// False while (or after an interrupted) prepare loads it.
    pub complete: bool,
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
        .map(|(name, comment)| ExistingTable {
            ours: comment.starts_with(MARK),
            complete: !comment.contains(INCOMPLETE),
            name,
        })
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
    // The server-side lock wait below bounds a held table; the watch, slower than it,
    // bounds a server that stops answering.
    let id = crate::target::stall::server_id(&mut conn).await?;
    let every = std::time::Duration::from_secs(DROP_LOCK_WAIT_S as u64 + 15);
    let dropping = drop_on(&mut conn, target, names, pattern, is_workload_table);
    let what = format!("dropping sizeup's tables in {}", target.database);
    let report = crate::target::stall::watched(target, id, every, &what, dropping).await.map_err(|e| e.0)??;
    let _ = conn.disconnect().await;
    Ok(report)
}

async fn drop_on(
    conn: &mut Conn,
    target: &crate::target::Target,
    names: &[String],
    pattern: &str,
    is_workload_table: fn(&str) -> bool,
) -> Result<CleanupReport, String> {
    let mut report = CleanupReport::default();
    // A table another connection holds (a load whose client was killed can stay in the
    // server, seen with MariaDB 10.11) would hold the DROP for a day, the server's
    // default lock_wait_timeout: wait a bounded time and name who holds it.
    conn.query_drop(format!("SET SESSION lock_wait_timeout = LEAST(@@GLOBAL.lock_wait_timeout, {DROP_LOCK_WAIT_S})"))
        .await
        .map_err(|e| format!("setting lock_wait_timeout: {}", short_error(&e)))?;
    for t in existing_tables(conn, &target.database, names, pattern).await? {
        if !is_workload_table(&t.name) {
            continue;
        }
        if t.ours {
            let dropped =
                conn.query_drop(format!("DROP TABLE IF EXISTS {}", crate::target::quote_ident(&t.name))).await;
            if let Err(e) = dropped {
                let mut why = format!("dropping {}: {}", t.name, short_error(&e));
                if matches!(&e, mysql_async::Error::Server(s) if s.code == 1205) {
                    why.push_str(&holders(conn, &target.database).await);
                }
                return Err(why);
            }
            report.dropped.push(t.name);
        } else {
            report.kept.push(t.name);
        }
    }
    Ok(report)
}

/// The longest cleanup waits for a table another connection holds (less when the
/// server's own lock_wait_timeout is lower).
const DROP_LOCK_WAIT_S: u32 = 60;

/// The other connections busy in `database`, for a DROP that waited in vain: who to
/// end (KILL) before cleaning up again.
async fn holders(conn: &mut Conn, database: &str) -> String {
    let rows: Vec<(u64, Option<u64>, Option<String>)> = conn
        .exec(
            "SELECT ID, TIME, LEFT(INFO, 80) FROM information_schema.PROCESSLIST \
             WHERE DB = ? AND ID <> CONNECTION_ID() AND COMMAND <> 'Sleep' ORDER BY TIME DESC LIMIT 5",
            (database,),
        )
        .await
        .unwrap_or_default();
    if rows.is_empty() {
        // An idle session with an open transaction: not in the list above, and the wait
        // was this session's lock_wait_timeout (the server's own when below 60 s).
        let waited: Option<u64> = conn.query_first("SELECT @@SESSION.lock_wait_timeout").await.ok().flatten();
        return format!(
            " (another connection holds the table, idle in a transaction: cleanup waited {} s for it; end that \
             transaction or connection, then run cleanup again)",
            waited.unwrap_or(DROP_LOCK_WAIT_S as u64)
        );
    }
    let list: Vec<String> = rows
        .iter()
        .map(|(id, time, info)| {
            format!("connection {id}, {} s: {}", time.unwrap_or(0), info.as_deref().unwrap_or("(no statement)"))
        })
        .collect();
    format!(
        "; the table is held by another connection ({}): end it (KILL <id>, or restart the server if KILL \
         does not end it), then run cleanup again",
        list.join("; ")
    )
}

/// After a prepare failed part-way: ends its loader connections whose load stalled
/// (`stalled`, their server ids: the server may still hold their tables), drops the
/// tables it created (only sizeup's, of `names`) so nothing half-done stays behind, and
/// returns `error` with what became of them.
pub async fn undo_prepare(
    target: &crate::target::Target,
    names: &[String],
    mut error: String,
    workload: &str,
    stalled: &[u32],
) -> String {
    // The data set's own database named: a prepare elsewhere than the default asks for it.
    let cleanup = format!("sizeup cleanup {workload} --database {}", crate::target::shell_word(&target.database));
    if !stalled.is_empty() {
        match crate::timer::timeout(END_STALLED_WITHIN, end_stalled(target, stalled)).await {
            Ok(Ok(seen)) => error.push_str(&seen),
            Ok(Err(why)) => return stay(&error, &why, &cleanup),
            Err(_) => return stay(&error, "the server did not answer within 15 s", &cleanup),
        }
    }
    match drop_ours(target, names, "%", |_| true).await {
        Ok(r) if r.dropped.is_empty() => error,
        Ok(_) => format!("{error}\nThe partly loaded tables were dropped; nothing is left half-done: prepare again."),
        Err(_) => {
            format!("{error}\nThe partly loaded tables stay, marked incomplete: `{cleanup}` (with this prepare's connection options), then prepare again.")
        }
    }
}

/// The longest the undo of a stalled prepare tries to reach the server (a connect is
/// bounded at 10 s; the rest is two short statements per stalled connection).
const END_STALLED_WITHIN: std::time::Duration = std::time::Duration::from_secs(15);

/// The undo's answer when the server cannot be reached to end the stalled loads.
fn stay(error: &str, why: &str, cleanup: &str) -> String {
    format!(
        "{error}\nIt cannot be cleaned up now ({why}): the partly loaded tables stay, marked incomplete; \
         `{cleanup}` (with this prepare's connection options) once the server answers, then prepare again."
    )
}

/// Ends (KILL) the loader connections `ids`, which sizeup opened and whose loads got no
/// answer, and says what the server showed the first one doing, e.g.
/// "; the server showed that connection 'Waiting for table metadata lock' for 2 s: ended (KILL)".
async fn end_stalled(target: &crate::target::Target, ids: &[u32]) -> Result<String, String> {
    let mut conn = target.connect().await.map_err(|e| e.to_string())?;
    let mut seen = String::new();
    for &id in ids {
        // None: gone, the server ended it already.
        let Some((state, time)) = crate::target::stall::doing(&mut conn, id).await.map_err(|e| short_error(&e))? else {
            continue;
        };
        // 1094: it ended between the two statements.
        match conn.query_drop(format!("KILL CONNECTION {id}")).await {
            Err(mysql_async::Error::Server(e)) if e.code != 1094 => return Err(e.message),
            Err(e @ mysql_async::Error::Io(_)) => return Err(e.to_string()),
            _ => {}
        }
        if seen.is_empty() {
            let state = state.filter(|s| !s.is_empty()).unwrap_or_else(|| "busy".into());
            seen = format!("; the server showed that connection '{state}' for {} s: ended (KILL)", time.unwrap_or(0));
        }
    }
    let _ = conn.disconnect().await;
    if seen.is_empty() {
        seen = if ids.len() > 1 {
            "; the server had already ended those connections"
        } else {
            "; the server had already ended that connection"
        }
        .into();
    }
    Ok(seen)
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
    if let Some(msg) = incomplete(database, existing, workload) {
        return Some(msg);
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
        ExistingTable { name: name.into(), ours, complete: true }
    }

    #[test]
    fn an_incomplete_data_set_points_to_cleanup() {
        let clause = while_loading(&comment_clause("oltp"));
        assert_eq!(clause, "COMMENT='created by sizeup (oltp); loading, incomplete'");
        let partial = ExistingTable { name: "sbtest2".into(), ours: true, complete: false };
        let msg = refusal("sbtest", &[t("sbtest1", true), partial], "oltp_read_write").unwrap();
        assert!(msg.contains("incomplete") && msg.contains("sbtest2"), "{msg}");
        assert!(msg.contains("sizeup cleanup oltp_read_write"), "{msg}");
        assert!(msg.lines().count() <= 2, "{msg}");
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
