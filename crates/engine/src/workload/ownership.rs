//! Which tables sizeup made. The mark is the table's own COMMENT, so it travels with the
//! data: any sizeup, on any machine, can tell its tables from a user's (or sysbench's)
//! and refuse to load into or drop the others. A server that does not keep table
//! comments (go-mysql-server drops one on a table with a PRIMARY KEY and ignores ALTER
//! TABLE ... COMMENT; mysql-mimic has none) gets the marks in a table of sizeup's own in
//! the same database, [`MARKS_TABLE`], checked after every CREATE and ALTER that marks.

use crate::target::{literal, short_error};
pub use crate::watched::Watched;
use crate::workload::DataError;
use mysql_async::prelude::Queryable;
use mysql_async::Conn;

/// Table comment sizeup writes on every table it creates.
pub const MARK: &str = "created by sizeup";

pub fn comment_clause(workload: &str) -> String {
    format!("COMMENT='{MARK} ({workload})'")
}

/// sizeup's own table of marks, for servers that lose table comments: one row per table
/// sizeup made in that database (its name, and the comment it would carry).
pub const MARKS_TABLE: &str = "sizeup_marks";

/// The comment text of a COMMENT clause (`COMMENT='...'`).
fn clause_text(clause: &str) -> &str {
    clause.trim().trim_start_matches("COMMENT=").trim_matches('\'')
}

/// Makes sure every table of `names` carries the mark `clause_of(table)` gives (a COMMENT
/// clause): reads the comments back and, where the server did not keep one, records the
/// mark in [`MARKS_TABLE`] (created the first time, with one note saying why). True
/// when the marks are kept there: later marks go there too (a server that drops comments
/// may refuse ALTER TABLE ... COMMENT as well).
pub async fn keep_marks(
    conn: &mut Conn,
    database: &str,
    names: &[String],
    clause_of: impl Fn(&str) -> String,
) -> Result<bool, DataError> {
    let read = |e: mysql_async::Error| DataError::sql(format!("checking sizeup's marks in {database}"), &e);
    let comments = raw_comments(conn, database).await.map_err(read)?;
    let marks_table = comments.iter().any(|(n, _)| n == MARKS_TABLE);
    let lost: Vec<(&String, String)> = names
        .iter()
        .map(|n| (n, clause_of(n)))
        .filter(|(n, clause)| {
            let kept = comments.iter().find(|(t, _)| t == *n).and_then(|(_, c)| c.as_deref()).unwrap_or("");
            kept != clause_text(clause) || marks_table
        })
        .collect();
    if lost.is_empty() {
        return Ok(false);
    }
    let table = format!("{}.{}", crate::target::quote_ident(database), MARKS_TABLE);
    if !marks_table {
        let create = format!(
            "CREATE TABLE IF NOT EXISTS {table} (name VARCHAR(64) NOT NULL PRIMARY KEY, mark VARCHAR(255) NOT NULL) {}",
            comment_clause("marks")
        );
        conn.query_drop(create).await.map_err(|e| {
            DataError::sql(
                format!(
                    "the server does not keep table comments (sizeup's mark on the tables it makes), and creating \
                     {database}.{MARKS_TABLE} to keep them instead failed"
                ),
                &e,
            )
        })?;
        eprintln!(
            "note: the server does not keep table comments: sizeup records the tables it made in {database}.{MARKS_TABLE}"
        );
    }
    let recorded: Vec<String> = match marks_table {
        true => conn.query(format!("SELECT name FROM {table}")).await.map_err(read)?,
        false => Vec::new(),
    };
    for (name, clause) in lost {
        // One statement per mark, so a refused one leaves the row it had.
        let (quoted, mark) = (literal(name), literal(clause_text(&clause)));
        let sql = match recorded.contains(name) {
            true => format!("UPDATE {table} SET mark = {mark} WHERE name = {quoted}"),
            false => format!("INSERT INTO {table} VALUES ({quoted}, {mark})"),
        };
        conn.query_drop(sql).await.map_err(|e| DataError::sql(format!("recording sizeup's mark on {name}"), &e))?;
    }
    Ok(true)
}

/// Forgets the marks of tables that are gone (dropped by hand), so a table of that
/// name made later by someone else is not taken for sizeup's; drops the marks table
/// when it marks nothing. `tables`: every table of the database now.
async fn forget_missing(conn: &mut Conn, database: &str, tables: &[String]) -> Result<(), DataError> {
    let table = format!("{}.{MARKS_TABLE}", crate::target::quote_ident(database));
    let failed = |e: mysql_async::Error| DataError::sql(format!("tidying {MARKS_TABLE}"), &e);
    let recorded: Vec<String> = conn.query(format!("SELECT name FROM {table}")).await.map_err(failed)?;
    let mut left = recorded.len();
    for gone in recorded.iter().filter(|n| !tables.contains(n)) {
        conn.query_drop(format!("DELETE FROM {table} WHERE name = {}", literal(gone))).await.map_err(failed)?;
        left -= 1;
    }
    if left == 0 {
        conn.query_drop(format!("DROP TABLE IF EXISTS {table}")).await.map_err(failed)?;
    }
    Ok(())
}

/// [`keep_marks`] for a prepare: one that cannot mark its tables undoes itself.
pub async fn marked_or_undo(
    target: &crate::target::Target,
    conn: &mut Conn,
    names: &[String],
    clause_of: impl Fn(&str) -> String,
    workload: &str,
) -> Result<bool, DataError> {
    match keep_marks(conn, &target.database, names, clause_of).await {
        Ok(in_table) => Ok(in_table),
        Err(e) => Err(undo_prepare(target, names, e, workload, &[]).await),
    }
}

/// Every table of `database` with its comment, as the server keeps them.
async fn raw_comments(conn: &mut Conn, database: &str) -> Result<Vec<(String, Option<String>)>, mysql_async::Error> {
    conn.query(format!(
        "{} SELECT TABLE_NAME, TABLE_COMMENT FROM information_schema.TABLES WHERE TABLE_SCHEMA = {} ORDER BY TABLE_NAME",
        sizeup_model::capture::OWN_MARK,
        crate::target::literal(database)
    ))
    .await
}

/// Every table of `database` with sizeup's mark on it: its comment, or the mark recorded
/// in [`MARKS_TABLE`] (which wins: it is written only where the comment was lost). The
/// marks table itself is left out.
pub async fn comments(conn: &mut Conn, database: &str) -> Result<Vec<(String, String)>, mysql_async::Error> {
    let raw = raw_comments(conn, database).await?;
    let mut marks: Vec<(String, String)> = Vec::new();
    if raw.iter().any(|(n, _)| n == MARKS_TABLE) {
        let sql = format!("SELECT name, mark FROM {}.{MARKS_TABLE}", crate::target::quote_ident(database));
        marks = conn.query(sql).await?;
    }
    Ok(raw
        .into_iter()
        .filter(|(n, _)| n != MARKS_TABLE)
        .map(|(n, c)| {
            let mark = marks.iter().find(|(t, _)| *t == n).map(|(_, m)| m.clone());
            let c = mark.unwrap_or_else(|| c.unwrap_or_default());
            (n, c)
        })
        .collect())
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
) -> Result<(), DataError> {
    let id = match crate::target::stall::server_id(conn).await {
        Ok(id) => id,
        Err(e) => return Err(undo_prepare(target, names, e.into(), workload, &[]).await),
    };
    for (sql, what) in statements {
        let done = super::bulk::exec_retrying(conn, &sql, &what);
        // A stalled one's connection stays open (it is the caller's) until the undo has ended it.
        let (e, stalled) = match crate::target::stall::watched(target, id, every, &what, done).await {
            Ok(Ok(())) => continue,
            Ok(Err(e)) => (e, vec![]),
            Err(stalled) => (stalled.into(), vec![id]),
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
/// start with `prefix`).
pub async fn existing_tables(
    conn: &mut Conn,
    database: &str,
    names: &[String],
    prefix: &str,
) -> Result<Vec<ExistingTable>, DataError> {
    let rows = comments(conn, database)
        .await
        .map_err(|e| DataError::sql(format!("reading the table list of {database}"), &e))?;
    Ok(rows
        .into_iter()
        .filter(|(n, _)| if names.is_empty() { n.starts_with(prefix) } else { names.contains(n) })
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
) -> Result<CleanupReport, DataError> {
    let mut conn = match target.connect().await {
        Ok(c) => c,
        Err(e) if e.is_unknown_database() => {
            return Ok(CleanupReport::default()); // unknown database: nothing to drop
        }
        Err(e) => return Err(e.into()),
    };
    // The server-side lock wait below bounds a held table; the watch, slower than it,
    // bounds a server that stops answering.
    let id = crate::target::stall::server_id(&mut conn).await?;
    let every = std::time::Duration::from_secs(DROP_LOCK_WAIT_S as u64 + 15);
    let dropping = drop_on(&mut conn, target, names, pattern, is_workload_table);
    let what = format!("dropping sizeup's tables in {}", target.database);
    let report = crate::target::stall::watched(target, id, every, &what, dropping).await??;
    let _ = conn.disconnect().await;
    Ok(report)
}

async fn drop_on(
    conn: &mut Conn,
    target: &crate::target::Target,
    names: &[String],
    pattern: &str,
    is_workload_table: fn(&str) -> bool,
) -> Result<CleanupReport, DataError> {
    let mut report = CleanupReport::default();
    // A table another connection holds (a load whose client was killed can stay in the
    // server, seen with MariaDB 10.11) would hold the DROP for a day, the server's
    // default lock_wait_timeout: wait a bounded time and name who holds it.
    // Optional: a server without the setting (or that evaluates no expression there)
    // drops with its own wait.
    let bounded = format!("SET SESSION lock_wait_timeout = LEAST(@@GLOBAL.lock_wait_timeout, {DROP_LOCK_WAIT_S})");
    if let Err(e) = conn.query_drop(bounded).await {
        let plain = format!("SET SESSION lock_wait_timeout = {DROP_LOCK_WAIT_S}");
        if conn.query_drop(plain).await.is_err() {
            eprintln!(
                "note: the server refused a bounded lock_wait_timeout ({}): dropping with its own",
                short_error(&e)
            );
        }
    }
    let marks = format!("{}.{MARKS_TABLE}", crate::target::quote_ident(&target.database));
    let has_marks = raw_comments(conn, &target.database)
        .await
        .map_err(|e| DataError::sql(format!("reading the table list of {}", target.database), &e))?
        .iter()
        .any(|(n, _)| n == MARKS_TABLE);
    for t in existing_tables(conn, &target.database, names, pattern).await? {
        if !is_workload_table(&t.name) {
            continue;
        }
        if t.ours {
            let dropped =
                conn.query_drop(format!("DROP TABLE IF EXISTS {}", crate::target::quote_ident(&t.name))).await;
            if let Err(e) = dropped {
                let mut reason = short_error(&e);
                if matches!(&e, mysql_async::Error::Server(s) if s.code == 1205) {
                    reason.push_str(&holders(conn, &target.database).await);
                }
                return Err(DataError::Statement { what: format!("dropping {}", t.name), reason });
            }
            if has_marks {
                let forget = format!("DELETE FROM {marks} WHERE name = {}", literal(&t.name));
                conn.query_drop(forget).await.map_err(|e| DataError::sql(format!("dropping {}", t.name), &e))?;
            }
            report.dropped.push(t.name);
        } else {
            report.kept.push(t.name);
        }
    }
    // The marks table goes with the last table it marks.
    if has_marks {
        let tables: Vec<String> = raw_comments(conn, &target.database)
            .await
            .map_err(|e| DataError::sql(format!("reading the table list of {}", target.database), &e))?
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        forget_missing(conn, &target.database, &tables).await?;
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
        .query(format!(
            "SELECT ID, TIME, LEFT(INFO, 80) FROM information_schema.PROCESSLIST \
             WHERE DB = {} AND ID <> CONNECTION_ID() AND COMMAND <> 'Sleep' ORDER BY TIME DESC LIMIT 5",
            crate::target::literal(database)
        ))
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
    error: DataError,
    workload: &str,
    stalled: &[u32],
) -> DataError {
    let undone = |account: String| DataError::Undone { error: Box::new(error), account };
    // The data set's own database named: a prepare elsewhere than the default asks for it.
    let cleanup = format!("sizeup cleanup {workload} --database {}", crate::target::shell_word(&target.database));
    let mut account = String::new();
    if !stalled.is_empty() {
        match crate::timer::timeout(END_STALLED_WITHIN, end_stalled(target, stalled)).await {
            Ok(Ok(seen)) => account.push_str(&seen),
            Ok(Err(why)) => return undone(stay(&account, &why.to_string(), &cleanup)),
            Err(_) => return undone(stay(&account, "the server did not answer within 15 s", &cleanup)),
        }
    }
    // What was there before and after, read from the server, not inferred from what
    // the drop reported (a drop that fails part-way has dropped some).
    let before = tables_now(target, names).await;
    let failed = drop_ours(target, names, "", |_| true).await.err().map(|e| e.to_string());
    let after = tables_now(target, names).await;
    undone(undo_said(&account, before, failed, after, &cleanup))
}

/// The tables of `names` the server has now (None: it could not be asked).
async fn tables_now(target: &crate::target::Target, names: &[String]) -> Option<Vec<ExistingTable>> {
    let mut conn = target.connect().await.ok()?;
    let tables = existing_tables(&mut conn, &target.database, names, "").await.ok();
    let _ = conn.disconnect().await;
    tables
}

/// The undo's account: `error`, then exactly which tables were dropped (there `before`
/// and gone `after`) and which stayed (`after`; None when the server could not be
/// asked), those sizeup cannot tell as its own named apart; `failed`: why the drop failed.
pub fn undo_said(
    error: &str,
    before: Option<Vec<ExistingTable>>,
    failed: Option<String>,
    after: Option<Vec<ExistingTable>>,
    cleanup: &str,
) -> String {
    let names = |v: &[&ExistingTable]| list(&v.iter().map(|t| t.name.as_str()).collect::<Vec<_>>());
    let mut said = error.to_string();
    let why = failed.map(|w| format!(" (the undo failed: {w})")).unwrap_or_default();
    let Some(after) = after else {
        said.push_str(&format!(
            "\nWhat stayed is unknown{why}: `{cleanup}` (with this prepare's connection options) once the server \
             answers, then prepare again."
        ));
        return said;
    };
    let gone: Vec<&ExistingTable> =
        before.iter().flatten().filter(|t| !after.iter().any(|a| a.name == t.name)).collect();
    if !gone.is_empty() {
        said.push_str(&format!("\nDropped the table(s) this prepare made: {}.", names(&gone)));
    }
    let ours: Vec<&ExistingTable> = after.iter().filter(|t| t.ours).collect();
    let unmarked: Vec<&ExistingTable> = after.iter().filter(|t| !t.ours).collect();
    if after.is_empty() {
        if !gone.is_empty() {
            said.push_str(" Nothing of it is left: prepare again.");
        }
        return said;
    }
    said.push_str(&format!("\nStill there{why}:"));
    if !ours.is_empty() {
        said.push_str(&format!(
            " {}: `{cleanup}` (with this prepare's connection options) drops them, then prepare again.",
            names(&ours)
        ));
    }
    if !unmarked.is_empty() {
        said.push_str(&format!(
            " {}: without sizeup's mark (the server kept neither the table comment nor a row in {MARKS_TABLE}), \
             so sizeup will not drop them: drop them yourself if this prepare made them.",
            names(&unmarked)
        ));
    }
    said
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
async fn end_stalled(target: &crate::target::Target, ids: &[u32]) -> Result<String, DataError> {
    let mut conn = target.connect().await?;
    let mut seen = String::new();
    for &id in ids {
        // None: gone, the server ended it already.
        let asked = crate::target::stall::doing(&mut conn, id).await;
        let Some((state, time)) = asked.map_err(|e| DataError::sql(format!("asking what connection {id} does"), &e))?
        else {
            continue;
        };
        // 1094: it ended between the two statements.
        match conn.query_drop(format!("KILL CONNECTION {id}")).await {
            Err(e @ mysql_async::Error::Server(_)) if !matches!(&e, mysql_async::Error::Server(s) if s.code == 1094) => {
                return Err(DataError::sql(format!("ending connection {id}"), &e))
            }
            Err(e @ mysql_async::Error::Io(_)) => return Err(DataError::sql(format!("ending connection {id}"), &e)),
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

/// The tables of `database` sizeup did not make (its marks table aside): those a
/// script's statements must not change unless the user says so. An unknown database
/// has none. Where there are some, the guard also learns what it must know of the
/// server besides ([`Watched`]); a connection whose statements sizeup cannot read (its
/// client character set, its sql_mode), or a server whose stored functions it cannot
/// list, is refused.
pub async fn foreign_tables(conn: &mut Conn, database: &str) -> Result<Watched, DataError> {
    let rows = comments(conn, database)
        .await
        .map_err(|e| DataError::sql(format!("reading the table list of {database}"), &e))?;
    let mut watched = Watched {
        tables: rows.into_iter().filter(|(_, c)| !c.starts_with(MARK)).map(|(n, _)| n).collect(),
        ..Default::default()
    };
    if !watched.tables.is_empty() {
        let names = watched.tables.clone();
        let tables: Vec<&str> = names.iter().map(String::as_str).collect();
        let refuse = |why: DataError| {
            DataError::NotOurs(format!(
                "{why}, and {database} has tables sizeup did not create ({}): refusing to run a script's \
                 statements there, which sizeup could not check.\nGive the script its own --database, or (for a \
                 run) add --write-foreign-tables to let it change them",
                list(&tables)
            ))
        };
        reading(conn, &mut watched).await.map_err(refuse)?;
    }
    Ok(watched)
}

/// Marks the tables of `database` a script's command made (those not in `before`) as
/// sizeup's, keeping any comment the script gave them after the mark. A server that
/// refuses the ALTER or loses the comment gets the mark in [`MARKS_TABLE`].
pub async fn mark_made(conn: &mut Conn, database: &str, before: &[String], script: &str) -> Result<(), DataError> {
    let read = |e: mysql_async::Error| DataError::sql(format!("reading the table list of {database}"), &e);
    let made: Vec<(String, String)> = raw_comments(conn, database)
        .await
        .map_err(read)?
        .into_iter()
        .filter(|(n, _)| n != MARKS_TABLE && !before.contains(n))
        .map(|(n, c)| (n, c.unwrap_or_default()))
        .filter(|(_, c)| !c.starts_with(MARK))
        .collect();
    if made.is_empty() {
        return Ok(());
    }
    let mark_of = |name: &str| {
        let own = made.iter().find(|(n, _)| n == name).map(|(_, c)| c.as_str()).unwrap_or("");
        match own {
            "" => format!("{MARK} ({script})"),
            own => format!("{MARK} ({script}); {own}"),
        }
    };
    for (name, _) in &made {
        let table = format!("{}.{}", crate::target::quote_ident(database), crate::target::quote_ident(name));
        // Refused or ignored by some servers: keep_marks then records the mark.
        let _ = conn.query_drop(format!("ALTER TABLE {table} COMMENT = {}", literal(&mark_of(name)))).await;
    }
    let names: Vec<String> = made.iter().map(|(n, _)| n.clone()).collect();
    keep_marks(conn, database, &names, |n| format!("COMMENT='{}'", mark_of(n))).await.map(|_| ())
}

/// What the guard must know of the server besides the tables (see [`Watched`]): its
/// stored and loadable functions, and the client character set `DEFAULT` means where
/// sizeup cannot read statements in it. Err: why sizeup cannot read this connection's
/// statements at all (its character set or sql_mode), or cannot list the functions.
async fn reading(conn: &mut Conn, watched: &mut Watched) -> Result<(), DataError> {
    // A server that cannot say (a third-party one) is taken at its handshake: utf8mb4,
    // and strings and names as the default sql_mode reads them.
    let session: Option<(Option<String>, Option<String>, Option<String>)> = conn
        .query_first("SELECT @@SESSION.character_set_client, @@GLOBAL.character_set_client, @@SESSION.sql_mode")
        .await
        .ok()
        .flatten();
    if let Some((client, global, mode)) = session {
        if let Some(c) = client.filter(|c| !readable_charset(c.as_bytes())) {
            return Err(DataError::Data(format!(
                "the server gives sizeup's connections the client character set {c}, in which sizeup cannot read \
                 statements"
            )));
        }
        let mode = mode.unwrap_or_default().to_ascii_uppercase();
        let unread = ["NO_BACKSLASH_ESCAPES", "ANSI_QUOTES"].into_iter().find(|f| mode.split(',').any(|m| m == *f));
        if let Some(flag) = unread {
            return Err(DataError::Data(format!(
                "the server's sql_mode has {flag}, with which sizeup cannot read statements"
            )));
        }
        if let Some(g) = global.filter(|g| !readable_charset(g.as_bytes())) {
            watched.default_charset = Some(g.to_lowercase());
        }
    }
    let routines = "SELECT ROUTINE_TYPE, ROUTINE_NAME FROM information_schema.ROUTINES \
                    WHERE ROUTINE_TYPE IN ('FUNCTION', 'PACKAGE')";
    let routines: Vec<(String, String)> = conn.query(routines).await.map_err(|e| {
        DataError::Data(format!(
            "sizeup cannot list the server's stored functions (information_schema.ROUTINES: {}), whose calls run \
             statements it cannot read",
            short_error(&e)
        ))
    })?;
    for (kind, name) in routines {
        match kind.eq_ignore_ascii_case("PACKAGE") {
            true => watched.packages.push(name.to_lowercase()),
            false => watched.functions.push((name.to_lowercase(), "a stored function")),
        }
    }
    // Loadable functions, where the user may read their list (MySQL's is in both).
    for sql in ["SELECT name FROM mysql.func", "SELECT UDF_NAME FROM performance_schema.user_defined_functions"] {
        if let Ok(names) = conn.query::<String, _>(sql).await {
            watched.functions.extend(names.into_iter().map(|n| (n.to_lowercase(), "a loadable function")));
        }
    }
    watched.functions.sort();
    watched.functions.dedup();
    watched.packages.sort();
    watched.packages.dedup();
    Ok(())
}

/// Client character sets in which the server reads a statement's bytes as sizeup does:
/// no character of theirs ends in a byte that is a backslash or a backtick on its own
/// (as in big5, cp932, gbk, sjis and gb18030), and no byte of 0x80 or more separates
/// words (as 0xA0 does in latin1 and in most single-byte sets, and 0xFF in cp852: MariaDB
/// 10.11 probed byte by byte). The single-byte sets without one are left out too: their
/// tables are the server's own and may differ.
const READABLE_CHARSETS: [&str; 9] =
    ["utf8mb4", "utf8mb3", "utf8", "ascii", "binary", "ujis", "eucjpms", "euckr", "gb2312"];

fn readable_charset(name: &[u8]) -> bool {
    READABLE_CHARSETS.iter().any(|c| c.as_bytes().eq_ignore_ascii_case(name))
}

/// What `sql` would do to the tables sizeup did not make (`watched`): the first of them
/// it may change, when it has a word that changes data or tables (INSERT, UPDATE,
/// DELETE, REPLACE, TRUNCATE, LOAD, CREATE, ALTER, DROP, RENAME; not `FOR UPDATE`, nor
/// the string functions INSERT(), REPLACE() and TRUNCATE()) and names the table anywhere
/// (bare or quoted, compared without case). Strings and comments are skipped; a
/// versioned comment without a version (`/*! ...*/`) is read as SQL. Conservative:
/// `INSERT INTO mine SELECT ... FROM theirs` is refused too. SQL the statement runs from
/// a string (`PREPARE s FROM '...'`, `EXECUTE IMMEDIATE '...'`) is read the same way.
/// [`Foreign::Unreadable`], while there are foreign tables at all: SQL it cannot read
/// (from a variable, a procedure's, a stored function's), and what makes the server
/// read the statements after it otherwise than sizeup does (a changed sql_mode or
/// client character set).
pub fn changes_foreign<'a>(sql: &[u8], watched: &'a Watched) -> Option<Foreign<'a>> {
    if watched.tables.is_empty() {
        return None;
    }
    let (words, versioned) = words(sql);
    let unreadable = |why: &str| Some(Foreign::Unreadable(why.to_string()));
    if versioned {
        // Read or skipped by the server's version, which sizeup does not follow.
        return unreadable(
            "it holds a versioned comment (/*!NNNNN ...*/ or /*M! ...*/), which a server reads or skips by its version",
        );
    }
    let is = |w: &Word, k: &str| matches!(w, Word::Bare(b) if b.eq_ignore_ascii_case(k.as_bytes()));
    let runs_sql = words.iter().enumerate().find_map(|(i, w)| {
        let next = words.get(i + 1);
        match () {
            _ if is(w, "prepare") => words[i..].iter().position(|w| is(w, "from")).map(|p| words.get(i + p + 1)),
            _ if is(w, "execute") && next.is_some_and(|n| is(n, "immediate")) => Some(words.get(i + 2)),
            _ if is(w, "call") => Some(None),
            _ => None,
        }
    });
    // Escapes and strings the server joins would read otherwise than written here
    // (`'DEL\ETE ...'`, `'TRUNCATE ' 'sbtest1'`): unreadable.
    let position = |w: &Word| words.iter().position(|x| std::ptr::eq(x, w));
    match runs_sql {
        Some(Some(w @ Word::Str(inner))) => {
            let joined = position(w).and_then(|i| words.get(i + 1)).is_some_and(|n| matches!(n, Word::Str(_)));
            if inner.contains(&b'\\') || joined {
                return unreadable(HIDDEN);
            }
            return changes_foreign(inner, watched);
        }
        Some(_) => return unreadable(HIDDEN),
        None => {}
    }
    // A database dropped or replaced takes its tables along.
    let whole = words.windows(2).any(|p| {
        (is(&p[0], "drop") || is(&p[0], "replace") || is(&p[0], "alter") || is(&p[0], "create"))
            && (is(&p[1], "database") || is(&p[1], "schema"))
    });
    if whole {
        return unreadable("it creates, changes or drops a whole database");
    }
    // A changed sql_mode makes strings and names read otherwise than this reads them.
    if words.iter().any(|w| named(w, "sql_mode")) {
        return unreadable("it names sql_mode, which changes how the server reads strings and names");
    }
    if let Some(why) = sets_charset(&words, watched).or_else(|| calls(&words, watched)) {
        return Some(Foreign::Unreadable(why));
    }
    changed_name(&words, &watched.tables).map(Foreign::Changes)
}

/// Why SQL run from elsewhere cannot be read.
const HIDDEN: &str = "it runs SQL sizeup cannot read (from a variable or a procedure)";

/// What a statement would do to tables sizeup did not make.
#[derive(Debug, PartialEq)]
pub enum Foreign<'a> {
    /// It changes (or names, in a statement that changes) this table.
    Changes(&'a str),
    /// It runs SQL sizeup cannot read, or makes the server read what follows otherwise
    /// than sizeup does: why, as "it ...".
    Unreadable(String),
}

/// A name, bare or quoted (`` `x` ``, or "x", which ANSI_QUOTES makes a name).
fn named(w: &Word, name: &str) -> bool {
    matches!(w, Word::Bare(b) | Word::Quoted(b) if b.eq_ignore_ascii_case(name.as_bytes()))
}

/// Why `words` set the client character set to one sizeup cannot read statements in
/// (see [`READABLE_CHARSETS`]), if they do: `SET NAMES x`, `SET CHARACTER SET x`, `SET
/// CHARSET x` (also later in a SET's list), and `character_set_client = x` anywhere
/// (`@@session.character_set_client`, `SET STATEMENT ... FOR`), its name bare or quoted.
fn sets_charset(words: &[Word], watched: &Watched) -> Option<String> {
    let is = |w: &Word, k: &str| matches!(w, Word::Bare(b) if b.eq_ignore_ascii_case(k.as_bytes()));
    for (i, w) in words.iter().enumerate() {
        let charset_set = (is(w, "character") || is(w, "char")) && words.get(i + 1).is_some_and(|n| is(n, "set"));
        let value = if is(w, "names") || is(w, "charset") || charset_set {
            // An item of a SET's list: right after SET (or SESSION ...), or after a
            // comma with a SET before it.
            let prev = i.checked_sub(1).map(|p| &words[p]);
            let first = prev.is_some_and(|p| ["set", "session", "local", "global"].iter().any(|k| is(p, k)));
            let later = matches!(prev, Some(Word::Sign(b','))) && words[..i].iter().any(|w| is(w, "set"));
            if !(first || later) {
                continue;
            }
            let at = if charset_set { i + 2 } else { i + 1 };
            match words.get(at) {
                // A column `names` given a value (SET NAMES takes no `=`); CHARSET().
                Some(Word::Sign(b'=' | b':')) if is(w, "names") => continue,
                Some(Word::Open) => continue,
                Some(Word::Sign(b'=')) => at + 1,
                _ => at,
            }
        } else if named(w, "character_set_client") {
            match (words.get(i + 1), words.get(i + 2)) {
                (Some(Word::Sign(b'=')), _) => i + 2,
                (Some(Word::Sign(b':')), Some(Word::Sign(b'='))) => i + 3,
                _ => continue, // read, not set
            }
        } else {
            continue;
        };
        // The value alone: a name or a string, then the end of the item.
        let after = words.get(value + 1);
        let alone = after.is_none_or(|a| matches!(a, Word::Sign(b',' | b';')) || is(a, "collate") || is(a, "for"));
        let to =
            |name: &str| format!("it sets the client character set to {name}, in which sizeup cannot read statements");
        match words.get(value) {
            Some(w) if alone && is(w, "default") => {
                if let Some(c) = &watched.default_charset {
                    return Some(to(&format!("DEFAULT ({c} on this server)")));
                }
            }
            Some(Word::Bare(b) | Word::Str(b) | Word::Quoted(b)) if alone => {
                if !readable_charset(b) {
                    return Some(to(&String::from_utf8_lossy(b)));
                }
            }
            _ => {
                return Some(
                    "it sets the client character set to a value sizeup cannot tell (a variable or an expression), \
                     and so cannot read the statements after it"
                        .into(),
                )
            }
        }
    }
    None
}

/// Why `words` call a function whose statements sizeup cannot read, if they do: a name
/// (bare or quoted, of any database) followed by `(` that is one of the server's stored
/// or loadable functions, or a function of one of its stored packages (`pkg.f(`). A
/// built-in of the same name is refused too.
fn calls(words: &[Word], watched: &Watched) -> Option<String> {
    words.windows(2).enumerate().find_map(|(i, p)| {
        let (Word::Bare(n) | Word::Quoted(n), Word::Open) = (&p[0], &p[1]) else { return None };
        let name = String::from_utf8_lossy(n);
        let lower = name.to_lowercase();
        if let Some((_, what)) = watched.functions.iter().find(|(f, _)| *f == lower) {
            return Some(format!("it calls {name}(), {what}, whose statements sizeup cannot read"));
        }
        let package = match i.checked_sub(2).map(|q| (&words[q], &words[q + 1])) {
            Some((Word::Bare(k) | Word::Quoted(k), Word::Sign(b'.'))) => {
                let k = String::from_utf8_lossy(k).to_lowercase();
                watched.packages.iter().find(|p| **p == k)
            }
            _ => None,
        };
        package.map(|k| format!("it calls {name}() of the stored package {k}, whose statements sizeup cannot read"))
    })
}

fn changed_name<'a>(words: &[Word<'_>], foreign: &'a [String]) -> Option<&'a str> {
    const CHANGES: [&str; 10] =
        ["insert", "update", "delete", "replace", "truncate", "load", "create", "alter", "drop", "rename"];
    let changes = words.iter().enumerate().any(|(i, w)| match w {
        Word::Bare(b) => {
            let is = |k: &str| b.eq_ignore_ascii_case(k.as_bytes());
            let function =
                matches!(words.get(i + 1), Some(Word::Open)) && (is("insert") || is("replace") || is("truncate"));
            let locking_read =
                is("update") && i > 0 && matches!(words[i - 1], Word::Bare(p) if p.eq_ignore_ascii_case(b"for"));
            CHANGES.iter().any(|k| is(k)) && !function && !locking_read
        }
        _ => false,
    });
    if !changes {
        return None;
    }
    // sizeup's marks table too: a row there would pass a foreign table off as sizeup's.
    foreign
        .iter()
        .map(String::as_str)
        .chain(std::iter::once(MARKS_TABLE))
        .find(|name| words.iter().any(|w| named(w, name)))
}

/// A word of a statement: a bare word (keyword or name), a quoted name (`` `x` `` or
/// "x", which ANSI_QUOTES makes a name), a string ('x', as written: escapes kept), an
/// opening parenthesis, or any other sign (`=`, `,`, `.`, `@`, `)`, ...).
#[derive(Debug, PartialEq)]
enum Word<'a> {
    Bare(&'a [u8]),
    Quoted(&'a [u8]),
    Str(&'a [u8]),
    Open,
    Sign(u8),
}

/// The words of `sql`, and whether it holds a versioned comment that some servers read
/// as SQL and others skip: one with a version (`/*!50100 ...*/`: by the server's), or
/// MariaDB's (`/*M! ...*/`, which MySQL skips).
fn words(sql: &[u8]) -> (Vec<Word<'_>>, bool) {
    let mut out = Vec::new();
    let mut i = 0;
    let (mut in_versioned, mut uncertain) = (false, false);
    let word_byte = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c >= 0x80;
    while i < sql.len() {
        let c = sql[i];
        let next = sql.get(i + 1).copied();
        match c {
            b'\'' | b'"' | b'`' => {
                let start = i + 1;
                let mut j = start;
                while j < sql.len() {
                    if sql[j] == b'\\' && c != b'`' {
                        j += 2;
                        continue;
                    }
                    if sql[j] == c {
                        if sql.get(j + 1) == Some(&c) {
                            j += 2; // a doubled quote inside
                            continue;
                        }
                        break;
                    }
                    j += 1;
                }
                let inside = &sql[start..j.min(sql.len())];
                out.push(if c == b'\'' { Word::Str(inside) } else { Word::Quoted(inside) });
                i = j + 1;
            }
            b'/' if next == Some(b'*') => {
                let mariadb = sql.get(i + 2) == Some(&b'M') && sql.get(i + 3) == Some(&b'!');
                if sql.get(i + 2) == Some(&b'!') || mariadb {
                    // Versioned: the server runs what is inside; skip the marker only.
                    // `/*M!` is MariaDB's (MySQL skips it), a number the least version.
                    i += if mariadb { 4 } else { 3 };
                    in_versioned = true;
                    uncertain |= mariadb || sql.get(i).is_some_and(u8::is_ascii_digit);
                    while i < sql.len() && sql[i].is_ascii_digit() {
                        i += 1;
                    }
                } else {
                    i = sql[i + 2..].windows(2).position(|w| w == b"*/").map_or(sql.len(), |p| i + 2 + p + 2);
                }
            }
            b'*' if in_versioned && next == Some(b'/') => {
                in_versioned = false;
                i += 2;
            }
            b'#' => i = sql[i..].iter().position(|&b| b == b'\n').map_or(sql.len(), |p| i + p),
            // The server's `-- ` comment: two dashes, then a space or any control character.
            b'-' if next == Some(b'-') && sql.get(i + 2).is_none_or(|&b| b <= b' ' || b == 0x7f) => {
                i = sql[i..].iter().position(|&b| b == b'\n').map_or(sql.len(), |p| i + p)
            }
            b'(' => {
                out.push(Word::Open);
                i += 1;
            }
            c if word_byte(c) => {
                let start = i;
                while i < sql.len() && word_byte(sql[i]) {
                    i += 1;
                }
                out.push(Word::Bare(&sql[start..i]));
            }
            c if c <= b' ' => i += 1,
            c => {
                out.push(Word::Sign(c));
                i += 1;
            }
        }
    }
    (out, uncertain)
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

    /// What `changes_foreign` says of `sql` in a database whose foreign tables (and
    /// server functions, tagged) are `watched`: the table, "?" when unreadable.
    fn guard(watched: &[&str]) -> impl Fn(&[u8]) -> Option<String> {
        let w = Watched::from_list(watched.iter().map(|s| s.to_string()).collect());
        move |sql: &[u8]| match changes_foreign(sql, &w) {
            Some(Foreign::Changes(t)) => Some(t.to_string()),
            Some(Foreign::Unreadable(_)) => Some("?".into()),
            None => None,
        }
    }

    /// Why `changes_foreign` finds `sql` unreadable (panics if it does not).
    fn why(watched: &[&str], sql: &[u8]) -> String {
        let w = Watched::from_list(watched.iter().map(|s| s.to_string()).collect());
        match changes_foreign(sql, &w) {
            Some(Foreign::Unreadable(why)) => why,
            other => panic!("{}: {other:?}", String::from_utf8_lossy(sql)),
        }
    }

    #[test]
    fn statements_that_change_foreign_tables_are_found() {
        let g = guard(&["sbtest1", "Orders"]);
        let hit = |sql: &str| g(sql.as_bytes());
        let s = |t: &str| Some(t.to_string());
        assert_eq!(hit("UPDATE sbtest1 SET k=k+1 WHERE id=?"), s("sbtest1"));
        assert_eq!(hit("delete from `SBTEST1` where id=1"), s("sbtest1"));
        assert_eq!(hit("INSERT INTO sbtest.sbtest1 (id, k) VALUES (1, 2)"), s("sbtest1"));
        assert_eq!(hit("DROP TABLE IF EXISTS orders"), s("Orders"));
        assert_eq!(hit("/*! ALTER TABLE sbtest1 DISABLE KEYS */"), s("sbtest1"));
        assert_eq!(hit("CREATE INDEX k_1 ON sbtest1(k)"), s("sbtest1"));
        assert_eq!(hit("  -- a comment\nTRUNCATE sbtest1"), s("sbtest1"));
        // SQL run from a string is read; from a variable or a procedure it cannot be
        // (a retest emptied the table with SET @q / PREPARE st FROM @q / EXECUTE st).
        assert_eq!(hit("PREPARE st FROM 'DELETE FROM sbtest1'"), s("sbtest1"));
        assert_eq!(hit("EXECUTE IMMEDIATE 'TRUNCATE sbtest1'"), s("sbtest1"));
        assert_eq!(hit("PREPARE st FROM @q"), s("?"));
        assert_eq!(hit("EXECUTE IMMEDIATE CONCAT('DEL', 'ETE FROM sbtest1')"), s("?"));
        assert_eq!(hit("CALL cleanup_all()"), s("?"));
        // A review's ways through: escapes the server undoes, strings it joins, a whole
        // database, a changed sql_mode, the marks table.
        assert_eq!(hit("PREPARE s FROM 'DEL\\ETE FROM sbtest1'"), s("?"));
        assert_eq!(hit("EXECUTE IMMEDIATE 'TRUNCATE ' 'sbtest1'"), s("?"));
        assert_eq!(hit("DROP DATABASE sbtest"), s("?"));
        assert_eq!(hit("CREATE OR REPLACE SCHEMA sbtest"), s("?"));
        assert_eq!(hit("SET SESSION sql_mode = 'NO_BACKSLASH_ESCAPES'"), s("?"));
        assert_eq!(hit("INSERT INTO sizeup_marks VALUES ('sbtest1', 'created by sizeup')"), s("sizeup_marks"));
        // Conservative: a name read by a statement that writes elsewhere counts.
        assert_eq!(hit("INSERT INTO mine SELECT * FROM sbtest1"), s("sbtest1"));
        // Comments as the server ends them: `--` then any control character.
        assert_eq!(hit("SELECT 1 --\x0b '\nUPDATE sbtest1 SET k = 1 -- '"), s("sbtest1"));
        assert_eq!(hit("SELECT 1 --\x01 '\nUPDATE sbtest1 SET k = 1 -- '"), s("sbtest1"));
        // A numbered versioned comment is SQL or a comment by the server's version:
        // `/*!99999 '*/` is skipped by today's servers, the string it opens here is not.
        assert_eq!(hit("/*!99999 '*/ UPDATE sbtest1 SET k = 1 -- '"), s("?"));
        assert_eq!(hit("PREPARE s FROM /*!99999 'SELECT 1' */ @q"), s("?"));
        assert_eq!(hit("/*M!100100 '*/ UPDATE sbtest1 SET k = 1 -- '"), s("?"));
        assert_eq!(hit("/*M! '*/ UPDATE sbtest1 SET k = 1 -- '"), s("?"));
        // Only `/*!` and `/*M!` are versioned: `/*Mike's */` is a comment.
        assert_eq!(hit("/*Mike's note*/ UPDATE sbtest1 SET k = 1 -- '"), s("sbtest1"));
        assert!(why(&["sbtest1"], b"/*!40000 ALTER TABLE sbtest1 DISABLE KEYS */").contains("versioned comment"));
    }

    /// a_multibyte_charset_hides_a_statement_from_the_guard (issue 63, item 1).
    #[test]
    fn a_client_character_set_sizeup_cannot_read_is_refused() {
        let g = guard(&["sbtest1"]);
        let hit = |sql: &str| g(sql.as_bytes());
        let refused = |sql: &str| why(&["sbtest1"], sql.as_bytes());
        let to = |c: &str| format!("it sets the client character set to {c}, in which sizeup cannot read statements");
        for (sql, charset) in [
            ("SET NAMES gbk", "gbk"),
            ("set names 'SJIS' COLLATE sjis_bin", "SJIS"),
            ("SET NAMES `big5`", "big5"),
            ("SET NAMES cp932", "cp932"),
            ("SET NAMES gb18030", "gb18030"),
            ("SET NAMES latin1", "latin1"),
            ("SET CHARACTER SET gbk", "gbk"),
            ("SET CHAR SET gbk", "gbk"),
            ("SET CHARSET gbk", "gbk"),
            ("SET @a = 1, NAMES gbk", "gbk"),
            ("SET @a = 1, CHARACTER SET 'gbk'", "gbk"),
            ("SET character_set_client = gbk", "gbk"),
            ("SET SESSION character_set_client := 'gbk'", "gbk"),
            ("SET @@session.`character_set_client` = gbk", "gbk"),
            ("SET @@SESSION.\"CHARACTER_SET_CLIENT\" = gbk", "gbk"),
            ("SET STATEMENT character_set_client = gbk FOR SELECT 1", "gbk"),
            ("SET character_set_client = 28", "28"), // a collation's number: gbk_chinese_ci
            ("/*! SET NAMES gbk */", "gbk"),
        ] {
            assert_eq!(refused(sql), to(charset), "{sql}");
        }
        // A value that is not one plain name: refused.
        for sql in [
            "SET NAMES @cs",
            "SET character_set_client = @utf8mb4",
            "SET character_set_client = !'latin1'",
            "SET character_set_client = 'utf8mb4' | 28",
            "SET character_set_client = CONCAT('g', 'bk')",
            "SET character_set_client = 'big' '5'",
            "SET character_set_client = (SELECT 'gbk')",
            "SET character_set_client = @@global.character_set_client",
        ] {
            assert!(refused(sql).contains("to a value sizeup cannot tell"), "{sql}");
        }
        // In SQL run from a string too.
        assert_eq!(hit("PREPARE s FROM 'SET NAMES gbk'"), Some("?".into()));
        assert_eq!(hit("EXECUTE IMMEDIATE 'SET character_set_client = sjis'"), Some("?".into()));
        // Character sets sizeup reads as the server does, DEFAULT, and what only names
        // or reads them, pass.
        for sql in [
            "SET NAMES utf8mb4",
            "SET NAMES 'utf8mb4' COLLATE 'utf8mb4_bin'",
            "SET NAMES utf8",
            "SET NAMES binary",
            "SET NAMES DEFAULT",
            "SET CHARACTER SET utf8mb3, @a = 1",
            "SET character_set_client = utf8mb4",
            "SET character_set_client = DEFAULT",
            "SET STATEMENT character_set_client = utf8mb4 FOR SELECT 1",
            "SELECT @@character_set_client",
            "SELECT CHARSET(c), names FROM t",
            "SELECT a, names FROM t",
            "UPDATE sbtest2 SET names = 'gbk', k = 1",
            "UPDATE sbtest2 SET k = 1, names = 'gbk'",
            "CREATE TABLE t (c CHAR(10) CHARACTER SET gbk) DEFAULT CHARSET=gbk",
            "SELECT CONVERT(c USING gbk), CAST(c AS CHAR CHARACTER SET sjis) FROM t",
            "SHOW VARIABLES LIKE 'character_set_client'",
            "SET @q = 'SET NAMES gbk'",
        ] {
            assert_eq!(hit(sql), None, "{sql}");
        }
        // DEFAULT is the server's global client character set.
        let default = why(&["sbtest1", "\0Dlatin1"], b"SET NAMES DEFAULT");
        assert_eq!(default, to("DEFAULT (latin1 on this server)"));
        assert!(why(&["sbtest1", "\0Dgbk"], b"SET character_set_client = DEFAULT").contains("DEFAULT (gbk"));
    }

    /// a_backticked_sql_mode_is_seen_by_the_guard (issue 63, item 2): a quoted name is
    /// the name, for every name the guard looks for.
    #[test]
    fn quoted_names_are_names() {
        let g = guard(&["sbtest1"]);
        let hit = |sql: &str| g(sql.as_bytes());
        for sql in [
            "SET SESSION `sql_mode` = 'NO_BACKSLASH_ESCAPES'",
            "SET @@SESSION.`SQL_MODE` = 'NO_BACKSLASH_ESCAPES'",
            "SET \"sql_mode\" = 'ANSI_QUOTES'",
            "SET STATEMENT `sql_mode` = 'NO_BACKSLASH_ESCAPES' FOR SELECT 1",
            "PREPARE s FROM 'SET `sql_mode` = 1'",
        ] {
            assert_eq!(hit(sql), Some("?".into()), "{sql}");
            assert!(why(&["sbtest1"], sql.as_bytes()).contains("it names sql_mode"), "{sql}");
        }
        assert!(why(&["sbtest1"], b"SET `character_set_client` = gbk").contains("to gbk"));
        assert_eq!(hit("UPDATE `sbtest1` SET k = 1"), Some("sbtest1".into()));
        assert_eq!(hit("UPDATE \"SBTEST1\" SET k = 1"), Some("sbtest1".into()));
        assert_eq!(hit("UPDATE `fdb`.`sbtest1` SET k = 1"), Some("sbtest1".into()));
        assert_eq!(hit("UPDATE sbtest2 SET c = 'sql_mode'"), None, "a string is no name");
    }

    /// stored_functions_are_unreadable_to_the_guard (issue 63, item 3).
    #[test]
    fn calls_of_the_servers_functions_are_unreadable() {
        let watched = ["sbtest1", "\0Ff1", "\0FÄrger", "\0Lsys_exec", "\0Ppkg"];
        let g = guard(&watched);
        let hit = |sql: &str| g(sql.as_bytes());
        let refused = |sql: &str| why(&watched, sql.as_bytes());
        assert_eq!(refused("SELECT f1()"), "it calls f1(), a stored function, whose statements sizeup cannot read");
        for (sql, name) in [
            ("DO f1()", "f1"),
            ("DO F1 ()", "F1"),
            ("SELECT fdb.f1()", "f1"),
            ("SELECT `otherdb`.`F1`()", "F1"),
            ("SELECT \"f1\"()", "f1"),
            ("SELECT c FROM t WHERE id = f1 /* x */ ()", "f1"),
            ("SELECT f1\n(\n)", "f1"),
            ("SELECT f1\x0b()", "f1"),
            ("SELECT 1 FROM t WHERE k IN (SELECT f1())", "f1"),
            ("INSERT INTO t VALUES (f1())", "f1"),
            ("SELECT ärger()", "ärger"),
        ] {
            assert!(refused(sql).starts_with(&format!("it calls {name}(), a stored function")), "{sql}");
        }
        assert!(refused("SELECT sys_exec('x')").contains("sys_exec(), a loadable function"));
        assert!(refused("SELECT pkg.f9()").contains("f9() of the stored package pkg"));
        assert!(refused("SELECT fdb.`pkg`.f9()").contains("f9() of the stored package pkg"));
        // In SQL run from a string, and in the body of a function or trigger made.
        assert_eq!(hit("PREPARE s FROM 'SELECT f1()'"), Some("?".into()));
        assert_eq!(hit("CREATE FUNCTION f2() RETURNS INT RETURN f1()"), Some("?".into()));
        let body = "CREATE FUNCTION f3() RETURNS INT MODIFIES SQL DATA BEGIN UPDATE sbtest1 SET k = 1; RETURN 1; END";
        assert_eq!(hit(body), Some("sbtest1".into()));
        // Names that are no call of one pass: a string, a column, another function.
        for sql in [
            "SELECT 'f1()' FROM t",
            "SELECT f1 FROM t",
            "SELECT f10(), pkg2.f9(), pkg(), COUNT(*) FROM t",
            "UPDATE sbtest2 SET f1 = 2",
        ] {
            assert_eq!(hit(sql), None, "{sql}");
        }
        // A server with no functions: a call is no refusal.
        assert_eq!(guard(&["sbtest1"])(b"SELECT f1()"), None);
    }

    /// sysbench's bundled scripts only touch their own tables: none of their statements
    /// is refused beside foreign tables and functions (the suite's
    /// sysbench_scripts_run_beside_foreign_tables_and_functions runs them).
    #[test]
    fn sysbench_statements_pass_the_guard() {
        let g = guard(&["keep", "\0Ff4", "\0Fformat_bytes", "\0Dlatin1"]);
        let c = "'68487932199-96439406143-93774651418-41631865787-96406072701'";
        let statements = [
            "CREATE TABLE sbtest1(\n  id INTEGER NOT NULL AUTO_INCREMENT,\n  k INTEGER DEFAULT '0' NOT NULL,\n  \
             c CHAR(120) DEFAULT '' NOT NULL,\n  pad CHAR(60) DEFAULT '' NOT NULL,\n  PRIMARY KEY (id)\n) \
             /*! ENGINE = innodb */ "
                .to_string(),
            format!("INSERT INTO sbtest1(k, c, pad) VALUES(5014, {c}, '22195207048-70116052123')"),
            "CREATE INDEX k_1 ON sbtest1(k)".into(),
            "SELECT c FROM sbtest1 WHERE id=?".into(),
            "SELECT c FROM sbtest1 WHERE id BETWEEN ? AND ?".into(),
            "SELECT SUM(k) FROM sbtest1 WHERE id BETWEEN ? AND ?".into(),
            "SELECT c FROM sbtest1 WHERE id BETWEEN ? AND ? ORDER BY c".into(),
            "SELECT DISTINCT c FROM sbtest1 WHERE id BETWEEN ? AND ? ORDER BY c".into(),
            "UPDATE sbtest1 SET k=k+1 WHERE id=?".into(),
            "UPDATE sbtest1 SET c=? WHERE id=?".into(),
            "DELETE FROM sbtest1 WHERE id=?".into(),
            "INSERT INTO sbtest1 (id, k, c, pad) VALUES (?, ?, ?, ?)".into(),
            "BEGIN".into(),
            "COMMIT".into(),
            "SELECT id, k, c, pad FROM sbtest1 WHERE k IN (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)".into(),
            "SELECT count(k) FROM sbtest1 WHERE k BETWEEN ? AND ? OR k BETWEEN ? AND ?".into(),
            "CREATE TABLE IF NOT EXISTS sbtest1 (\n  id INTEGER UNSIGNED NOT NULL AUTO_INCREMENT,\n  \
             k INTEGER UNSIGNED DEFAULT '0' NOT NULL,\n  PRIMARY KEY (id)\n) ENGINE = InnoDB"
                .into(),
            "INSERT INTO sbtest1 VALUES(1,2),(3,4)".into(),
            "DROP TABLE IF EXISTS sbtest1".into(),
            "ANALYZE TABLE sbtest1".into(),
            "SELECT * FROM sbtest1 FOR UPDATE".into(),
        ];
        for sql in &statements {
            assert_eq!(g(sql.as_bytes()), None, "{sql}");
        }
    }

    #[test]
    fn reads_and_other_tables_are_not_changes() {
        let g = guard(&["sbtest1"]);
        let hit = |sql: &str| g(sql.as_bytes());
        assert_eq!(hit("SELECT c FROM sbtest1 WHERE id=?"), None);
        assert_eq!(hit("SELECT c FROM sbtest1 WHERE id=? FOR UPDATE"), None);
        assert_eq!(hit("SELECT REPLACE(c, 'a', 'b'), INSERT(c, 1, 2, 'x'), TRUNCATE(k, 2) FROM sbtest1"), None);
        assert_eq!(hit("UPDATE sbtest2 SET c='sbtest1' WHERE id=1"), None, "a string is no name");
        assert_eq!(hit("UPDATE sbtest2 SET k=1 /* sbtest1 */ WHERE id=1 # sbtest1"), None);
        assert_eq!(hit("UPDATE sbtest12 SET k=1"), None, "whole words only");
        assert_eq!(hit("DELETE FROM sbtest1"), Some("sbtest1".into()));
        assert_eq!(changes_foreign(b"DELETE FROM sbtest1", &Watched::default()), None);
        assert_eq!(hit("SET @q = 'DELETE FROM sbtest2'"), None);
        assert_eq!(hit("PREPARE s FROM 'SELECT c FROM sbtest1'"), None);
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

    #[test]
    fn undo_reports_what_it_dropped_and_what_stayed() {
        let tables = |v: &[&str], ours: bool| v.iter().map(|n| t(n, ours)).collect::<Vec<_>>();
        let cleanup = "sizeup cleanup tpcc --database tpcc";
        let nine =
            ["customer", "district", "history", "item", "new_order", "order_line", "orders", "stock", "warehouse"];
        let all = undo_said("error: x", Some(tables(&["item", "stock"], true)), None, Some(vec![]), cleanup);
        assert_eq!(
            all,
            "error: x\nDropped the table(s) this prepare made: item, stock. Nothing of it is left: prepare again."
        );
        // 8 of 9 stayed, their marks lost: said by name, not "nothing is left".
        let stayed = tables(&[&nine[..3], &nine[4..]].concat(), false);
        let some = undo_said("error: x", Some(tables(&nine, false)), None, Some(stayed), cleanup);
        assert!(some.contains("Dropped the table(s) this prepare made: item."), "{some}");
        assert!(
            some.contains("Still there: customer, district, history, ... 8 in all: without sizeup's mark"),
            "{some}"
        );
        assert!(!some.contains("Nothing of it is left"), "{some}");
        // The drop failed part-way: what it did drop is still said, and why it stopped.
        let part = undo_said(
            "error: x",
            Some(tables(&["sbtest1", "sbtest2"], true)),
            Some("dropping sbtest2: lock wait".into()),
            Some(tables(&["sbtest2"], true)),
            cleanup,
        );
        assert!(part.contains("Dropped the table(s) this prepare made: sbtest1."), "{part}");
        assert!(
            part.contains("Still there (the undo failed: dropping sbtest2: lock wait): sbtest2: `sizeup cleanup"),
            "{part}"
        );
        let failed_nothing_left = undo_said("error: x", Some(vec![]), Some("gone".into()), Some(vec![]), cleanup);
        assert_eq!(failed_nothing_left, "error: x", "no empty 'Still there'");
        let unknown = undo_said("error: x", None, Some("gone".into()), None, cleanup);
        assert!(unknown.contains("What stayed is unknown (the undo failed: gone)"), "{unknown}");
        assert_eq!(undo_said("error: x", Some(vec![]), None, Some(vec![]), cleanup), "error: x");
    }
}
