//! Bulk loading for prepare. Rows are generated as tab-separated text and go in by the
//! cheapest way the server takes:
//! - MariaDB: array binding (COM_STMT_BULK_EXECUTE on sizeup's own client), one prepared
//!   INSERT run over every row of a chunk. Measured (8 x 250,000 sbtest rows, 2 loaders),
//!   the server spent about what it spends copying its own rows, and less than parsing
//!   the same rows as LOAD DATA text;
//! - elsewhere `LOAD DATA LOCAL INFILE` (far less server parsing per row than multi-row
//!   INSERTs);
//! - when the server forbids LOCAL INFILE, multi-row INSERTs of the same rows.
//!
//! Generated fields never contain tabs, newlines or backslashes; `\N` is NULL.

use crate::client;
use crate::error::Invalid;
pub use crate::options::LoadMethod;
use crate::target::stall::{self, Stalled};
use crate::target::{short_error, Target};
use crate::workload::DataError;
use bytes::Bytes;
use mysql_async::prelude::Queryable;
use mysql_async::Conn;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Duration;

/// Bytes per piece handed to the driver while streaming rows.
pub const PIECE_BYTES: usize = 256 * 1024;

/// Rows being written as tab-separated text, cut into pieces of about [`PIECE_BYTES`].
pub struct Rows {
    pieces: Vec<Bytes>,
    buf: Vec<u8>,
    pub count: u64,
}

impl Default for Rows {
    fn default() -> Self {
        Rows { pieces: Vec::new(), buf: Vec::with_capacity(PIECE_BYTES + 1024), count: 0 }
    }
}

impl Rows {
    /// The buffer the current row is written into (fields separated by `\t`).
    #[inline]
    pub fn line(&mut self) -> &mut Vec<u8> {
        &mut self.buf
    }

    /// Ends the current row.
    #[inline]
    pub fn end_row(&mut self) {
        self.buf.push(b'\n');
        self.count += 1;
        if self.buf.len() >= PIECE_BYTES {
            let full = std::mem::replace(&mut self.buf, Vec::with_capacity(PIECE_BYTES + 1024));
            self.pieces.push(Bytes::from(full));
        }
    }

    pub fn finish(mut self) -> Vec<Bytes> {
        if !self.buf.is_empty() {
            self.pieces.push(Bytes::from(std::mem::take(&mut self.buf)));
        }
        self.pieces
    }
}

/// How a prepare loads: the method, and how long one load of rows may wait for the
/// server before the prepare fails as stalled (the run's `--statement-timeout`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LoadSettings {
    pub method: LoadMethod,
    pub statement_timeout: Duration,
}

impl Default for LoadSettings {
    fn default() -> Self {
        LoadSettings {
            method: LoadMethod::Auto,
            statement_timeout: Duration::from_secs_f64(crate::exec::DEFAULT_STATEMENT_TIMEOUT),
        }
    }
}

/// Largest array-binding command: a 25,000-row sbtest chunk (about 5 MB) goes in one,
/// and the server's max_allowed_packet (16 MB by default) halves it when smaller.
const BULK_COMMAND_MAX: usize = 8 << 20;

/// Session settings a loader asks for: our own fresh tables have nothing to check unique
/// or foreign keys against but what we generate. Optional: a server without them (or one
/// that refuses them) loads with its own, and one note says so.
const LOADER_SESSION: [&str; 2] = ["unique_checks=0", "foreign_key_checks=0"];

/// A loader's connection: how it loads, its id on the server, and whether a load on it
/// stalled (then it is held open for the undo, never closed: a polite close could wait
/// on the server forever).
pub struct Loader {
    link: Link,
    id: u32,
    stalled: bool,
}

enum Link {
    /// Array binding, on sizeup's own client: prepared INSERTs per table and columns,
    /// and the largest command to send.
    Bulk { conn: Box<client::Conn>, inserts: HashMap<(String, String), client::Statement>, limit: usize },
    /// LOAD DATA LOCAL or multi-row INSERTs, on the control driver.
    Text { conn: Conn, method: LoadMethod },
}

/// How a prepare's loaders send rows, decided once from what the server offers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Way {
    ArrayBinding,
    LoadData,
    Insert,
}

/// Why LOAD DATA LOCAL cannot be used, from the server's greeting (`offered`:
/// CLIENT_LOCAL_FILES, None when sizeup's client could not ask) and its `local_infile`
/// (None when it has no such variable): None when nothing speaks against it.
pub fn local_infile_refusal(offered: Option<bool>, local_infile: Option<&str>) -> Option<String> {
    if offered == Some(false) {
        return Some("the server does not offer LOAD DATA LOCAL (no CLIENT_LOCAL_FILES in its greeting)".into());
    }
    match local_infile.map(|v| v.trim().to_ascii_uppercase()) {
        Some(v) if v == "0" || v == "OFF" => Some("the server has local_infile=OFF".into()),
        _ => None,
    }
}

/// Decides how rows go in (`method`, and what the server offers): array binding where it
/// takes it, LOAD DATA LOCAL where its greeting and `local_infile` allow, else INSERTs
/// with one line saying why. An explicit method the server cannot take is an error.
async fn decide(target: &Target, method: LoadMethod, bound: Duration) -> Result<Way, DataError> {
    if method == LoadMethod::Insert {
        return Ok(Way::Insert);
    }
    let mut offered = None;
    match client::Conn::connect(&target.client_options()).await {
        Ok(conn) => {
            let bulk = conn.bulk();
            offered = Some(conn.offers_local_files());
            conn.close().await;
            if bulk && matches!(method, LoadMethod::Auto | LoadMethod::ArrayBinding) {
                return Ok(Way::ArrayBinding);
            }
        }
        Err(e) if method == LoadMethod::ArrayBinding => return Err(e.into()),
        // The control driver's connect below says why.
        Err(_) => {}
    }
    if method == LoadMethod::ArrayBinding {
        return Err(Invalid::Value(format!(
            "{} does not offer array binding (COM_STMT_BULK_EXECUTE, MariaDB 10.2 and later); \
             use --load-method auto, load-data or insert",
            target.describe()
        ))
        .into());
    }
    let mut conn = target.connect().await?;
    let asked = conn.query_first::<Option<String>, _>("SELECT @@GLOBAL.local_infile");
    let local_infile = match crate::timer::timeout(bound, asked).await {
        Ok(answer) => answer.ok().flatten().flatten(),
        Err(_) => {
            let waited = bound.as_secs_f64();
            return Err(DataError::Stalled(format!("reading the server's local_infile: no answer within {waited} s")));
        }
    };
    let _ = conn.disconnect().await;
    match local_infile_refusal(offered, local_infile.as_deref()) {
        None => Ok(Way::LoadData),
        Some(why) if method == LoadMethod::Auto => {
            eprintln!("note: loading by multi-row INSERTs: {why}");
            Ok(Way::Insert)
        }
        Some(why) => {
            Err(Invalid::Value(format!("--load-method load-data: {why}; use --load-method auto or insert")).into())
        }
    }
}

impl Loader {
    /// Connects a loader that sends rows as `sending` says.
    pub async fn open(target: &Target, sending: &Sending) -> Result<Loader, DataError> {
        let method = sending.settings.method;
        let bound = sending.settings.statement_timeout;
        let way = *sending.way.get_or_try_init(|| decide(target, method, bound)).await?;
        match way {
            Way::ArrayBinding => {
                sending.bulk.store(true, Ordering::Relaxed);
                let conn = client::Conn::connect(&target.client_options()).await?;
                return Ok(Self::bulk(conn, sending).await?);
            }
            Way::Insert => sending.use_insert.store(true, Ordering::Relaxed),
            Way::LoadData => {}
        }
        let mut conn = target.connect().await?;
        for s in LOADER_SESSION {
            if let Err(e) = conn.query_drop(format!("SET SESSION {s}")).await {
                sending.refused(s, &short_error(&e));
            }
        }
        let id = crate::target::stall::server_id(&mut conn).await?;
        let method = if way == Way::Insert { LoadMethod::Insert } else { method };
        Ok(Loader { id, link: Link::Text { conn, method }, stalled: false })
    }

    async fn bulk(mut conn: client::Conn, sending: &Sending) -> Result<Loader, client::Error> {
        for s in LOADER_SESSION {
            if let Err(e) = conn.query_drop(&format!("SET SESSION {s}")).await {
                sending.refused(s, &said(&e));
            }
        }
        // Values in the tables' own character set, so the server stores them as they
        // come: converting from utf8mb4 was 14 % of its work loading latin1 tables.
        // (ucs2, utf16 and utf32 cannot be a client's character set: those databases
        // keep utf8mb4 and the conversion.)
        let _ = conn
            .query_drop(
                "SET SESSION character_set_client=@@character_set_database, \
                 character_set_connection=@@character_set_database",
            )
            .await;
        let (mut packet, mut id) = (None, None);
        conn.query_rows("SELECT @@max_allowed_packet, CONNECTION_ID()", &mut |r| {
            (packet, id) = (r[0].as_i64(), r[1].as_i64());
        })
        .await?;
        let limit = (packet.unwrap_or(0).max(0) as usize / 2).min(BULK_COMMAND_MAX);
        let link = Link::Bulk { conn: Box::new(conn), inserts: HashMap::new(), limit };
        Ok(Loader { link, id: id.unwrap_or(0) as u32, stalled: false })
    }

    /// Loads `pieces` into `table` (`columns` lists the fields of each line, in order).
    /// Under `auto`, when the server refuses LOCAL INFILE, this and every later load of
    /// the prepare send INSERTs. A statement the server has not answered within the
    /// statement timeout (retries of it included) fails the prepare as stalled.
    pub async fn load(
        &mut self,
        table: &str,
        columns: &str,
        pieces: Vec<Bytes>,
        sending: &Sending,
    ) -> Result<(), DataError> {
        sending.interrupted()?;
        let mut clock = Statements::new(sending.settings.statement_timeout);
        match self.load_rows(table, columns, pieces, sending, &mut clock).await {
            Err(Load::Stalled(what)) => {
                self.stalled = true;
                sending.stall(self.id);
                Err(DataError::Stalled(format!("loading {table}: {}", clock.stalled(&what))))
            }
            Err(Load::Failed(e)) => Err(e),
            Ok(()) => Ok(()),
        }
    }

    async fn load_rows(
        &mut self,
        table: &str,
        columns: &str,
        pieces: Vec<Bytes>,
        sending: &Sending,
        clock: &mut Statements,
    ) -> Result<(), Load> {
        let use_insert = &sending.use_insert;
        if pieces.is_empty() {
            return Ok(());
        }
        match &mut self.link {
            Link::Text { conn, method: LoadMethod::Insert } => {
                use_insert.store(true, Ordering::Relaxed);
                insert(conn, table, columns, &pieces, clock).await
            }
            Link::Text { conn, method } => {
                if !use_insert.load(Ordering::Relaxed) {
                    let Some(refused) = load_data(conn, table, columns, &pieces, *method, clock).await? else {
                        return Ok(());
                    };
                    // Said once, by the first loader the server refused.
                    if !use_insert.swap(true, Ordering::Relaxed) {
                        eprintln!("note: loading by multi-row INSERTs: the server refused LOAD DATA LOCAL ({refused})");
                    }
                }
                insert(conn, table, columns, &pieces, clock).await
            }
            Link::Bulk { conn, inserts, limit } => {
                let key = (table.to_string(), columns.to_string());
                if !inserts.contains_key(&key) {
                    let marks = vec!["?"; columns.split(',').count()].join(",");
                    let sql = format!("INSERT INTO {table} ({columns}) VALUES ({marks})");
                    let prepared = clock.bound("a PREPARE of its INSERT".into(), conn.prepare(&sql)).await?;
                    let stmt = prepared.map_err(|e| Load::Failed(e.into()))?;
                    inserts.insert(key.clone(), stmt);
                }
                let stmt = &inserts[&key];
                let rows = pieces.iter().map(|p| memchr::memchr_iter(b'\n', p).count()).sum::<usize>();
                let mut attempt = 0;
                loop {
                    // One transaction per call, as one LOAD DATA statement is, whatever
                    // number of commands the rows take.
                    let sent = async {
                        conn.query_drop("BEGIN").await?;
                        conn.exec_bulk(stmt, fields(&pieces), *limit).await?;
                        conn.query_drop("COMMIT").await
                    };
                    let e = match clock.bound(format!("an array-bound INSERT of {rows} rows"), sent).await? {
                        Ok(_) => return Ok(()),
                        Err(e) => e,
                    };
                    // A lock wait timeout leaves the transaction open: end it either way.
                    let _ = conn.query_drop("ROLLBACK").await;
                    if !retry(client_code(&e), &mut attempt).await {
                        let (what, reason) = (format!("loading {table}"), said(&e));
                        return Err(Load::Failed(DataError::Statement { what, reason }));
                    }
                }
            }
        }
    }

    /// Runs one statement (an index build), retried as loads are, and watched: it takes
    /// as long as its table needs, as long as the server (`target`) works on it.
    pub async fn exec(&mut self, target: &Target, sql: &str, what: &str, sending: &Sending) -> Result<(), DataError> {
        let (id, every) = (self.id, sending.settings.statement_timeout);
        stall::watched(target, id, every, what, self.exec_unwatched(sql, what)).await.unwrap_or_else(|Stalled(e)| {
            self.stalled = true;
            sending.stall(id);
            Err(DataError::Stalled(e))
        })
    }

    async fn exec_unwatched(&mut self, sql: &str, what: &str) -> Result<(), DataError> {
        match &mut self.link {
            Link::Text { conn, .. } => exec_retrying(conn, sql, what).await,
            Link::Bulk { conn, .. } => {
                let mut attempt = 0;
                loop {
                    let e = match conn.query_drop(sql).await {
                        Ok(_) => return Ok(()),
                        Err(e) => e,
                    };
                    if !retry(client_code(&e), &mut attempt).await {
                        return Err(DataError::Data(format!("{what}: {}", said(&e))));
                    }
                }
            }
        }
    }

    /// Closes the connection, or, when a load on it stalled, hands it to `sending` to hold
    /// open until the undo has seen what the server shows it doing and ended it.
    pub async fn close(self, sending: &Sending) {
        if self.stalled {
            sending.hold(self.link);
            return; // no goodbye: the server may never read one
        }
        match self.link {
            Link::Bulk { conn, .. } => conn.close().await,
            Link::Text { conn, .. } => {
                let _ = conn.disconnect().await;
            }
        }
    }
}

/// How the loaders of one prepare send rows: what was asked for, and what they found.
#[derive(Default)]
pub struct Sending {
    pub settings: LoadSettings,
    /// How rows go in, decided by the first loader.
    way: tokio::sync::OnceCell<Way>,
    /// Optional settings the server refused, said once each.
    refused: Mutex<Vec<&'static str>>,
    /// A loader used array binding.
    bulk: AtomicBool,
    /// INSERTs: asked for, or the server refused LOCAL INFILE (then for every later load).
    use_insert: AtomicBool,
    /// Server ids of the loader connections whose load stalled, for the undo to end.
    stalled: Mutex<Vec<u32>>,
    /// Those connections, open until the prepare (and its undo) ends and drops them.
    held: Mutex<Vec<Box<dyn Send>>>,
    /// SIGINT and SIGTERM received before the prepare began: one more stops its loads.
    signals_at: u64,
}

impl Sending {
    pub fn new(settings: LoadSettings) -> Self {
        // A prepare's first signal stops its loads, so the undo can say what it dropped
        // (prepare_interrupted_without_a_word: SIGTERM ended the process at once and left
        // the tables marked loading); a second ends the process at once.
        crate::exec::install_signal_handler();
        Sending { settings, signals_at: crate::exec::signals_received(), ..Default::default() }
    }

    /// Says so once the user interrupted the prepare.
    fn interrupted(&self) -> Result<(), DataError> {
        match crate::exec::signals_received() > self.signals_at {
            true => Err(DataError::Interrupted),
            false => Ok(()),
        }
    }

    /// Decides how rows go in (once per prepare): called before the tables are made, so a
    /// method the server cannot take is refused with nothing to undo.
    pub async fn decide(&self, target: &Target) -> Result<(), DataError> {
        let (method, bound) = (self.settings.method, self.settings.statement_timeout);
        self.way.get_or_try_init(|| decide(target, method, bound)).await.map(drop)
    }

    /// Notes, once per prepare, that the server refused the optional setting `what`.
    fn refused(&self, what: &'static str, why: &str) {
        let mut said = self.refused.lock().expect("no panics while held");
        if !said.contains(&what) {
            said.push(what);
            eprintln!("note: the server refused SET SESSION {what} ({why}); loading without it");
        }
    }

    /// The server ids of the connections whose load stalled.
    pub fn stalled(&self) -> Vec<u32> {
        self.stalled.lock().expect("no panics while held").clone()
    }

    /// Records that the statement on connection `id` stalled, for the undo to end.
    pub fn stall(&self, id: u32) {
        self.stalled.lock().expect("no panics while held").push(id);
    }

    /// Keeps a stalled statement's connection open until the prepare (and its undo) ends:
    /// MariaDB ends a lock wait whose client went away within a second, and with it the
    /// undo's only sight of what the statement waited on.
    pub fn hold(&self, conn: impl Send + 'static) {
        self.held.lock().expect("no panics while held").push(Box::new(conn));
    }

    /// How rows went in, for the report.
    pub fn describe(&self) -> &'static str {
        if self.bulk.load(Ordering::Relaxed) {
            "array binding"
        } else if self.use_insert.load(Ordering::Relaxed) {
            "multi-row INSERT"
        } else {
            "LOAD DATA LOCAL"
        }
    }
}

/// The rows of tab-separated `pieces` as lists of fields, `\N` as NULL (memchr: this
/// pass over every byte loaded is most of a loader's own work after generating rows).
fn fields(pieces: &[Bytes]) -> impl Iterator<Item = impl Iterator<Item = Option<&[u8]>>> {
    pieces.iter().flat_map(|p| Lines(p)).map(|line| {
        let mut rest = Some(line);
        std::iter::from_fn(move || {
            let l = rest?;
            let field = match memchr::memchr(b'\t', l) {
                Some(i) => {
                    rest = Some(&l[i + 1..]);
                    &l[..i]
                }
                None => {
                    rest = None;
                    l
                }
            };
            Some((field != b"\\N").then_some(field))
        })
    })
}

/// The non-empty lines of a piece.
struct Lines<'a>(&'a [u8]);

impl<'a> Iterator for Lines<'a> {
    type Item = &'a [u8];
    fn next(&mut self) -> Option<&'a [u8]> {
        loop {
            if self.0.is_empty() {
                return None;
            }
            let end = memchr::memchr(b'\n', self.0).unwrap_or(self.0.len());
            let line = &self.0[..end];
            self.0 = &self.0[(end + 1).min(self.0.len())..];
            if !line.is_empty() {
                return Some(line);
            }
        }
    }
}

/// Server errors meaning LOAD DATA LOCAL is not allowed.
pub const LOCAL_INFILE_REFUSED: [u16; 3] = [1148, 4166, 3948];

/// Loads `pieces` by LOAD DATA LOCAL; the server's words when it refuses LOCAL INFILE
/// (MariaDB 1148 / 4166, MySQL 8's local_infile=OFF 3948) and `method` is `auto`,
/// which then falls back to INSERTs. (The server's greeting and `local_infile`, read
/// before any load, decide first; these codes catch what they did not tell.)
async fn load_data(
    conn: &mut Conn,
    table: &str,
    columns: &str,
    pieces: &[Bytes],
    method: LoadMethod,
    clock: &mut Statements,
) -> Result<Option<String>, Load> {
    let sql = format!(
        "LOAD DATA LOCAL INFILE 'sizeup-{table}' INTO TABLE {table} CHARACTER SET latin1 \
         FIELDS TERMINATED BY '\\t' LINES TERMINATED BY '\\n' ({columns})"
    );
    let rows = pieces.iter().map(|p| memchr::memchr_iter(b'\n', p).count()).sum::<usize>();
    let mut attempt = 0;
    loop {
        // The driver wants the data as its own ('static): Bytes clones share the buffers.
        let owned: Vec<Bytes> = pieces.to_vec();
        let stream = futures_util::stream::iter(owned.into_iter().map(Ok));
        conn.set_infile_handler(async move { Ok(Box::pin(stream) as mysql_async::InfileData) });
        let e = match clock.bound(format!("a LOAD DATA LOCAL of {rows} rows"), conn.query_drop(&sql)).await? {
            Ok(()) => return Ok(None),
            Err(e) => e,
        };
        let code = control_code(&e);
        if code.is_some_and(|c| LOCAL_INFILE_REFUSED.contains(&c)) {
            if method == LoadMethod::Auto {
                return Ok(Some(short_error(&e)));
            }
            return Err(Load::Failed(
                Invalid::Value(format!(
                    "loading {table}: the server refuses LOAD DATA LOCAL ({}); use --load-method auto or insert",
                    short_error(&e)
                ))
                .into(),
            ));
        }
        if !retry(code, &mut attempt).await {
            return Err(Load::Failed(DataError::sql(format!("loading {table}"), &e)));
        }
    }
}

/// How a load ended when it did not load.
enum Load {
    /// A statement (named) got no answer within the statement timeout.
    Stalled(String),
    Failed(DataError),
}

/// The statements of one load, each bounded by the statement timeout, and what the
/// server answered before one stalled: the stall message says what was seen.
struct Statements {
    bound: Duration,
    started: std::time::Instant,
    answered: u32,
}

impl Statements {
    fn new(bound: Duration) -> Self {
        Statements { bound, started: std::time::Instant::now(), answered: 0 }
    }

    /// Runs one statement (`what`, e.g. "an INSERT of 1000 rows") within the bound.
    async fn bound<T>(&mut self, what: String, statement: impl std::future::Future<Output = T>) -> Result<T, Load> {
        match crate::timer::timeout(self.bound, statement).await {
            Ok(r) => {
                self.answered += 1;
                Ok(r)
            }
            Err(_) => Err(Load::Stalled(what)),
        }
    }

    /// The stall, and what came before it, e.g. "an INSERT of 1000 rows got no answer
    /// within 60 s (--statement-timeout), after the server answered 24 of this load's
    /// statements in 480.2 s: the load stalled".
    fn stalled(&self, what: &str) -> String {
        let before = match self.answered {
            0 => String::new(),
            n => format!(
                ", after the server answered {n} of this load's statement(s) in {:.1} s",
                self.started.elapsed().saturating_sub(self.bound).as_secs_f64()
            ),
        };
        format!(
            "{what} got no answer within {} s (--statement-timeout){before}: the load stalled",
            self.bound.as_secs_f64()
        )
    }
}

/// Errors the run engine retries (deadlock 1213, lock wait timeout 1205, record
/// changed 1020): the statement was rolled back whole, so loading it again is safe.
pub const RETRY_CODES: [u16; 3] = [1213, 1205, 1020];
/// Attempts after the first before a load gives up.
pub const RETRIES: u32 = 10;

fn control_code(e: &mysql_async::Error) -> Option<u16> {
    match e {
        mysql_async::Error::Server(s) => Some(s.code),
        _ => None,
    }
}

/// A loader's client error in words: a connection the server ended (KILL, a restart)
/// says so rather than only "Broken pipe".
fn said(e: &client::Error) -> String {
    use std::io::ErrorKind::{BrokenPipe, ConnectionAborted, ConnectionReset};
    match e {
        client::Error::Io(io) if matches!(io.kind(), BrokenPipe | ConnectionReset | ConnectionAborted) => {
            format!("the server closed the connection ({io})")
        }
        e => e.to_string(),
    }
}

fn client_code(e: &client::Error) -> Option<u16> {
    match e {
        client::Error::Server { code, .. } => Some(*code),
        _ => None,
    }
}

/// Whether a failed step is tried again (after a short wait): a server error the run
/// engine retries, at most [`RETRIES`] times.
async fn retry(code: Option<u16>, attempt: &mut u32) -> bool {
    if !code.is_some_and(|c| RETRY_CODES.contains(&c)) || *attempt >= RETRIES {
        return false;
    }
    *attempt += 1;
    crate::timer::sleep(std::time::Duration::from_millis(20 * *attempt as u64)).await;
    true
}

/// One statement of a load, retried as loads are.
pub async fn exec_retrying(conn: &mut Conn, sql: &str, what: &str) -> Result<(), DataError> {
    let mut attempt = 0;
    loop {
        let e = match conn.query_drop(sql).await {
            Ok(()) => return Ok(()),
            Err(e) => e,
        };
        if !retry(control_code(&e), &mut attempt).await {
            return Err(DataError::sql(what, &e));
        }
    }
}

/// The fallback: the same rows as multi-row INSERTs of 1,000 rows, every field quoted
/// (the server converts '12' to a number as LOAD DATA does); each INSERT within the
/// statement timeout.
async fn insert(
    conn: &mut Conn,
    table: &str,
    columns: &str,
    pieces: &[Bytes],
    clock: &mut Statements,
) -> Result<(), Load> {
    let head = format!("INSERT INTO {table} ({columns}) VALUES ");
    let mut sql = head.clone();
    let mut n = 0;
    let what = format!("loading {table}");
    for row in fields(pieces) {
        sql.push_str(if n > 0 { ",(" } else { "(" });
        for (i, field) in row.enumerate() {
            if i > 0 {
                sql.push(',');
            }
            match field {
                None => sql.push_str("NULL"),
                Some(f) => {
                    sql.push('\'');
                    let text = std::str::from_utf8(f)
                        .map_err(|_| Load::Failed(DataError::Data(format!("{what}: generated non-text"))))?;
                    sql.push_str(text);
                    sql.push('\'');
                }
            }
        }
        sql.push(')');
        n += 1;
        if n == 1000 {
            let full = std::mem::replace(&mut sql, head.clone());
            clock
                .bound(format!("an INSERT of {n} rows"), exec_retrying(conn, &full, &what))
                .await?
                .map_err(Load::Failed)?;
            n = 0;
        }
    }
    if n > 0 {
        clock.bound(format!("an INSERT of {n} rows"), exec_retrying(conn, &sql, &what)).await?.map_err(Load::Failed)?;
    }
    Ok(())
}

/// Waits for every loader task; the first error (a loader's own, or its panic) wins.
pub async fn join_loaders(loaders: Vec<tokio::task::JoinHandle<Result<(), DataError>>>) -> Result<(), DataError> {
    let mut first_error = None;
    for l in loaders {
        match l.await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                first_error.get_or_insert(e);
            }
            Err(e) => {
                first_error.get_or_insert(DataError::Task(format!("a loader stopped: {e}")));
            }
        }
    }
    first_error.map_or(Ok(()), Err)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::errors::RetryOn;

    #[test]
    fn loaders_retry_what_the_run_engine_retries() {
        let RetryOn::Codes(mut engine) = RetryOn::default() else { panic!("the default is a list") };
        let mut ours = RETRY_CODES.to_vec();
        engine.sort();
        ours.sort();
        assert_eq!(ours, engine);
        let deadlock = mysql_async::Error::Server(mysql_async::ServerError {
            code: 1213,
            message: "Deadlock found when trying to get lock; try restarting transaction".into(),
            state: "40001".into(),
        });
        assert_eq!(control_code(&deadlock), Some(1213));
        assert!(RETRY_CODES.contains(&1213));
        let killed = mysql_async::Error::Server(mysql_async::ServerError {
            code: 1317,
            message: "Query execution was interrupted".into(),
            state: "70100".into(),
        });
        assert!(!RETRY_CODES.contains(&control_code(&killed).unwrap()));
    }

    #[test]
    fn mysql_8_local_infile_off_falls_back_to_inserts_like_mariadb() {
        // MariaDB: 1148 (not allowed), 4166 (disabled); MySQL 8: 3948 (local_infile=OFF).
        for code in [1148, 4166, 3948] {
            assert!(LOCAL_INFILE_REFUSED.contains(&code), "{code}");
        }
    }

    #[test]
    fn load_data_local_is_chosen_from_the_greeting_and_local_infile() {
        assert_eq!(local_infile_refusal(Some(true), Some("1")), None);
        assert_eq!(local_infile_refusal(Some(true), Some("ON")), None);
        assert_eq!(local_infile_refusal(None, None), None, "nothing says no: try it");
        let off = local_infile_refusal(Some(true), Some("0")).unwrap();
        assert!(off.contains("local_infile=OFF"), "{off}");
        assert_eq!(local_infile_refusal(None, Some("OFF")), Some(off));
        let not_offered = local_infile_refusal(Some(false), Some("1")).unwrap();
        assert!(not_offered.contains("CLIENT_LOCAL_FILES"), "{not_offered}");
    }

    #[test]
    fn stall_message_says_what_was_seen_per_statement() {
        let mut clock = Statements::new(Duration::from_secs(60));
        assert_eq!(
            clock.stalled("an INSERT of 1000 rows"),
            "an INSERT of 1000 rows got no answer within 60 s (--statement-timeout): the load stalled"
        );
        clock.answered = 24;
        let said = clock.stalled("an INSERT of 1000 rows");
        assert!(said.contains("after the server answered 24 of this load's statement(s) in "), "{said}");
    }

    #[tokio::test(start_paused = true)]
    async fn each_statement_has_its_own_timeout() {
        // Three statements of 40 s each under a 60 s bound: the whole load takes 120 s
        // and none stalled (the bound was the whole load's before issue 46).
        let mut clock = Statements::new(Duration::from_secs(60));
        for _ in 0..3 {
            let slow = crate::timer::sleep(Duration::from_secs(40));
            assert!(clock.bound("an INSERT of 1000 rows".into(), slow).await.is_ok());
        }
        let stuck = crate::timer::sleep(Duration::from_secs(61));
        let Err(Load::Stalled(what)) = clock.bound("an INSERT of 7 rows".into(), stuck).await else {
            panic!("a statement over the bound stalls")
        };
        assert_eq!(what, "an INSERT of 7 rows");
        assert_eq!(clock.answered, 3);
    }
}
