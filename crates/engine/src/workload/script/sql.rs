//! The Rust half of `sysbench.sql` (the Lua half is sysbench.lua): connections,
//! prepared statements, result sets and bulk inserts over sizeup's lean client, with
//! each statement counted as sysbench's MySQL driver counts it:
//!
//! - a statement that returns a result set is a read (a prepared one: one whose
//!   prepare announced columns);
//! - otherwise a write when it changed rows, else other (BEGIN, COMMIT, an UPDATE
//!   that matched nothing).
//!
//! A primitive that needs the server does not wait itself: it leaves a [`Request`] in
//! the state's context and the script's coroutine yields; `State::call` performs the
//! request ([`perform`], async: the worker's future waits, not the thread) and resumes
//! the script with its outcome. Failures come back as a table (errno, state, message,
//! and the class sizeup's policy gives it) for sysbench.lua to raise as sysbench does.

use crate::client::{self, Conn, ConnectOptions, Param, StoredRows};
use crate::exec::errors::{classify, ErrorClass, RetryOn};
use crate::random::{IdDistribution, SharedUniqueIds, SysbenchRng};
use crate::stats::QueryCounts;
use crate::target::stall::{self, Stalled};
use crate::workload::ownership::Watched;
use mlua::{Lua, LuaString, Table, UserData, UserDataRef, Value};
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

/// How a command's statements are watched: the server to ask, and how long a statement
/// may wait for a lock or go unanswered.
#[derive(Clone)]
pub struct Watch {
    pub target: crate::target::Target,
    pub every: std::time::Duration,
    /// What a stall says failed ("script.lua's prepare").
    pub what: String,
}

/// What the Rust half of the API shares within one state.
pub struct Ctx {
    pub rng: RefCell<SysbenchRng>,
    pub dist: IdDistribution,
    pub unique: Arc<SharedUniqueIds>,
    pub(super) counts: Cell<QueryCounts>,
    pub connect: Option<ConnectOptions>,
    pub retry_on: RetryOn,
    /// The worker's own connection, lent to the script while sizeup calls it; the
    /// script's first `drv:connect()` gets it. Commands have none.
    pub worker: Option<Rc<Slot>>,
    pub worker_claimed: Cell<bool>,
    /// `--db-ps-mode=disable`: prepared statements are sent as text.
    pub text_protocol: bool,
    pub rows: Option<Arc<AtomicU64>>,
    pub watch: Option<Watch>,
    /// Why a watched statement stalled: the command fails with it, whatever the script
    /// did with the error its statement got.
    pub stalled: RefCell<Option<String>>,
    /// The last statement error: what sizeup's worker loop is told when it restarts
    /// the event.
    pub last_error: RefCell<Option<Failure>>,
    /// Scratch for random strings.
    pub scratch: RefCell<Vec<u8>>,
    /// What the script asked of the server before it yielded.
    pub pending: RefCell<Option<Request>>,
    /// The SQL of the pending query (or a bulk insert's row), reused.
    pub sql: RefCell<Vec<u8>>,
    /// The values of the pending execute, reused.
    pub params: RefCell<Params>,
    /// Tables the script's statements must not change, when there are any.
    pub guard: Option<Arc<Guard>>,
    /// Why a statement was refused (see [`Guard`]): the call fails with it, whatever
    /// the script made of the error.
    pub refused: RefCell<Option<String>>,
}

/// The tables of the database a script's statements must not change: sizeup did not
/// make them (writing_scripts_refuse_foreign_tables). A script names no tables, so each
/// statement is checked as it is sent, before the server sees it.
#[derive(Debug)]
pub struct Guard {
    pub database: String,
    /// The tables, and what else decides how the server reads a statement (its stored
    /// functions, ...).
    pub watched: Watched,
    /// What the user can do about a refusal.
    pub remedy: &'static str,
}

impl Guard {
    /// For a run: the user may let it write with `--write-foreign-tables`.
    pub const RUN: &'static str =
        "Give the run its own --database (--mysql-db), or add --write-foreign-tables to let it change them";
    /// For a command (prepare, cleanup, the script's own): sizeup's commands change only
    /// sizeup's tables.
    pub const COMMAND: &'static str =
        "sizeup's commands change only tables it made: use another --database, or drop or change it yourself";

    /// `watched`: as `ownership::foreign_tables` finds it.
    pub fn new(database: &str, watched: Watched, remedy: &'static str) -> Option<Arc<Guard>> {
        (!watched.is_empty()).then(|| Arc::new(Guard { database: database.into(), watched, remedy }))
    }

    fn check(&self, ctx: &Ctx, sql: &[u8]) -> mlua::Result<()> {
        use crate::workload::ownership::{changes_foreign, Foreign};
        let what = match changes_foreign(sql, &self.watched) {
            None => return Ok(()),
            Some(Foreign::Changes(table)) => {
                format!("it changes {}.{table}, which sizeup did not create", self.database)
            }
            Some(Foreign::Unreadable(why)) => {
                let tables = &self.watched.tables;
                format!(
                    "{why}, and {} has tables sizeup did not create ({})",
                    self.database,
                    tables[..tables.len().min(3)].join(", ")
                )
            }
        };
        let why = format!("refusing `{}`: {what}. {}", excerpt(sql), self.remedy);
        *ctx.refused.borrow_mut() = Some(why.clone());
        Err(mlua::Error::runtime(why))
    }
}

/// Checks a statement the script is about to send against its guard, if any.
fn guarded(ctx: &Ctx, sql: &[u8]) -> mlua::Result<()> {
    match &ctx.guard {
        Some(g) => g.check(ctx, sql),
        None => Ok(()),
    }
}

impl Ctx {
    pub fn count(&self, f: impl FnOnce(&mut QueryCounts)) {
        let mut c = self.counts.get();
        f(&mut c);
        self.counts.set(c);
    }
    /// The statements counted since the last take.
    pub fn take_counts(&self) -> QueryCounts {
        self.counts.take()
    }
}

/// The class a failed statement gets from sizeup's policy (`exec::errors`).
pub fn class_name(class: ErrorClass) -> &'static str {
    match class {
        ErrorClass::Retry => "retry",
        ErrorClass::Reconnect => "reconnect",
        ErrorClass::Fatal => "fatal",
        ErrorClass::Skip => "skip",
    }
}

/// sysbench's bulk insert buffer (`BULK_PACKET_SIZE`): a multi-row INSERT is sent when
/// the next row would not fit.
const BULK_PACKET_SIZE: usize = 512 * 1024;

/// MySQL's ER_UNSUPPORTED_PS: the statement cannot be prepared, so it is sent as text
/// (sysbench's driver does the same).
const UNSUPPORTED_PS: u16 = 1295;

/// sysbench's codes for client-side failures: a lost connection, anything else.
const CR_SERVER_LOST: u16 = 2013;
const CR_UNKNOWN_ERROR: u16 = 2000;

/// sysbench.sql.type numbers a bound parameter can have (bind_create narrows the rest).
const TYPE_DOUBLE: u8 = 6;
const TYPE_VARCHAR: u8 = 12;

/// One connection a script holds, and its last text result's rows.
pub struct Slot {
    conn: RefCell<Option<Conn>>,
    /// Bumped whenever the connection is replaced: statements prepared on an earlier
    /// one are prepared again before their next execute.
    generation: Cell<u64>,
    bulk: RefCell<Option<Bulk>>,
    /// The worker's connection (lent during each call) rather than the script's own.
    worker: bool,
    /// The rows of the last text query, valid until the next one (as sysbench's).
    rows: RefCell<StoredRows>,
    next_row: Cell<usize>,
    /// The connection's id on the server, once a command's watch asked (0: not yet).
    server_id: Cell<u32>,
}

impl Slot {
    fn new(worker: bool) -> Rc<Slot> {
        Rc::new(Slot {
            conn: RefCell::new(None),
            generation: Cell::new(0),
            bulk: RefCell::new(None),
            worker,
            rows: RefCell::new(StoredRows::default()),
            next_row: Cell::new(0),
            server_id: Cell::new(0),
        })
    }

    /// The slot for a worker's connection (empty until lent).
    pub fn for_worker() -> Rc<Slot> {
        Slot::new(true)
    }

    /// Hands the worker's connection to the script for the length of a call.
    pub fn lend(&self, conn: Conn) {
        *self.conn.borrow_mut() = Some(conn);
    }

    /// Takes the worker's connection back after the call.
    pub fn take_back(&self) -> Conn {
        self.conn.borrow_mut().take().unwrap_or_else(Conn::detached)
    }

    /// A new connection is in place (a worker reconnected).
    pub fn replaced(&self) {
        self.generation.set(self.generation.get() + 1);
        self.server_id.set(0);
    }
}

struct Bulk {
    buffer: Vec<u8>,
    /// Where the rows start (after `INSERT ... VALUES`).
    values_at: usize,
    rows: u32,
}

/// A prepared statement.
pub struct Stmt {
    slot: Rc<Slot>,
    sql: Vec<u8>,
    /// The server-side statement and the connection generation it belongs to.
    prepared: RefCell<Option<(u64, client::Statement)>>,
    /// Sent as text with its values written in (`--db-ps-mode=disable`, or a statement
    /// the server cannot prepare).
    text: Cell<bool>,
    /// Bound parameter types (sysbench.sql.type numbers), from `bind_param`.
    types: RefCell<Vec<u8>>,
}

struct ConnHandle(Rc<Slot>);
impl UserData for ConnHandle {}

struct StmtHandle(Rc<Stmt>);
impl UserData for StmtHandle {}

/// What a script asked of the server, performed between two resumes of its coroutine.
pub enum Request {
    Connect(Rc<Slot>),
    Disconnect(Rc<Slot>),
    Reconnect(Rc<Slot>),
    /// The SQL is in `Ctx::sql`.
    Query(Rc<Slot>),
    Prepare(Rc<Stmt>),
    /// The values are in `Ctx::params`.
    Execute(Rc<Stmt>),
    CloseStmt(Rc<Stmt>),
    /// Sends the bulk insert's rows; then appends the row in `Ctx::sql` (a row that did
    /// not fit), or ends the bulk insert.
    Flush {
        slot: Rc<Slot>,
        then_append: bool,
    },
}

/// A parameter value copied out of Lua for one execute (strings into `Params::bytes`).
#[derive(Clone, Copy)]
enum Bound {
    Int(i64),
    Float(f64),
    Bytes(usize, usize),
    Null,
}

/// The values of the next execute: reused, so an execute allocates nothing.
#[derive(Default)]
pub struct Params {
    values: Vec<Bound>,
    bytes: Vec<u8>,
}

/// A statement that failed, as the script and the worker loop learn of it.
#[derive(Clone, Debug)]
pub struct Failure {
    pub errno: u16,
    pub state: String,
    pub message: String,
    pub class: ErrorClass,
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SQL error, errno = {}, state = '{}': {}", self.errno, self.state, self.message)
    }
}

impl Failure {
    fn of(e: &client::Error, ctx: &Ctx) -> Failure {
        let class = classify(e, &ctx.retry_on);
        let (errno, state, message) = match e {
            client::Error::Server { code, state, message } => (*code, state.clone(), message.clone()),
            client::Error::Io(io) => (CR_SERVER_LOST, "HY000".into(), format!("Lost connection to server: {io}")),
            client::Error::Protocol(m) => (CR_UNKNOWN_ERROR, "HY000".into(), m.clone()),
        };
        Failure { errno, state, message, class }
    }

    /// The client error the worker loop is told of (the class travels separately).
    pub fn error(&self) -> client::Error {
        client::Error::Server { code: self.errno, state: self.state.clone(), message: self.message.clone() }
    }
}

/// The failure of `e` on `slot`, recorded as the state's last, as the table the script
/// sees. A script's own connection that was lost is dropped, to be reconnected by its
/// next statement (the worker's is the worker loop's to reconnect).
fn failed(lua: &Lua, ctx: &Ctx, slot: &Slot, e: &client::Error) -> mlua::Result<Value> {
    let f = Failure::of(e, ctx);
    if f.class == ErrorClass::Reconnect && !slot.worker {
        slot.conn.borrow_mut().take();
    }
    let t = lua.create_table()?;
    t.set("errno", f.errno)?;
    t.set("state", f.state.as_str())?;
    t.set("message", f.message.as_str())?;
    t.set("class", class_name(f.class))?;
    *ctx.last_error.borrow_mut() = Some(f);
    Ok(Value::Table(t))
}

fn not_connected() -> client::Error {
    client::Error::Io(std::io::Error::new(std::io::ErrorKind::NotConnected, "the connection was closed"))
}

/// Runs `f` (the statement `sql`, for messages) on the slot's connection, taken out of
/// the slot meanwhile (no borrow is held while it waits); a script's own connection lost
/// earlier is made again first.
async fn on_conn<T>(
    ctx: &Ctx,
    slot: &Slot,
    sql: &[u8],
    f: impl AsyncFnOnce(&mut Conn) -> Result<T, client::Error>,
) -> Result<T, client::Error> {
    let taken = slot.conn.borrow_mut().take();
    let mut conn = match taken {
        Some(c) => c,
        None if slot.worker => return Err(not_connected()),
        None => {
            let options =
                ctx.connect.as_ref().ok_or_else(|| client::Error::Protocol("no server to connect to".into()))?;
            let c = Conn::connect(options).await?;
            slot.replaced();
            c
        }
    };
    let Some(watch) = &ctx.watch else {
        let result = f(&mut conn).await;
        *slot.conn.borrow_mut() = Some(conn);
        return result;
    };
    // A command's statement: watched (an index build or a scan takes as long as its
    // table needs; a lock wait or a server that stopped answering does not end).
    if slot.server_id.get() == 0 {
        // Bounded like the watch's probes: it runs before the watch.
        let mut id = None;
        let mut row = |r: &[client::Value]| id = r[0].as_i64();
        let asked = conn.query_rows("SELECT CONNECTION_ID()", &mut row);
        crate::timer::timeout(stall::PROBE_WITHIN, asked).await.map_err(|_| {
            let why = format!("the server did not answer within {} s", stall::PROBE_WITHIN.as_secs());
            client::Error::Io(std::io::Error::new(std::io::ErrorKind::TimedOut, why))
        })??;
        slot.server_id.set(id.unwrap_or(0) as u32);
    }
    let what = match sql {
        [] => watch.what.clone(),
        sql => format!("{}, at `{}`", watch.what, excerpt(sql)),
    };
    match stall::watched(&watch.target, slot.server_id.get(), watch.every, &what, f(&mut conn)).await {
        Ok(result) => {
            *slot.conn.borrow_mut() = Some(conn);
            result
        }
        // The connection is dropped: it is mid-statement, and the command ends here.
        Err(Stalled(why)) => {
            let e = std::io::Error::new(std::io::ErrorKind::TimedOut, why.clone());
            *ctx.stalled.borrow_mut() = Some(why);
            Err(client::Error::Io(e))
        }
    }
}

/// The start of a statement, on one line, for a message that names it. Made for every
/// watched statement, so it reads only the statement's first bytes (a prepare's bulk
/// INSERTs run to hundreds of kilobytes).
fn excerpt(sql: &[u8]) -> String {
    const SHOWN: usize = 60;
    const READ: usize = 4 * SHOWN + 16;
    let head = String::from_utf8_lossy(&sql[..sql.len().min(READ)]);
    let one_line = head.split_whitespace().collect::<Vec<_>>().join(" ");
    match one_line.char_indices().nth(SHOWN) {
        Some((cut, _)) => format!("{}...", &one_line[..cut]),
        None if sql.len() > READ => format!("{one_line}..."),
        None => one_line,
    }
}

/// Counts a statement's outcome as sysbench's driver does.
fn count(ctx: &Ctx, o: &client::Outcome, read: bool) {
    ctx.count(|c| {
        if read {
            c.reads += 1
        } else if o.affected > 0 {
            c.writes += 1
        } else {
            c.other += 1
        }
    });
}

/// What a query or execute resumes the script with: rows, fields, failure.
fn answered(o: &client::Outcome, fields: u64) -> (Value, Value, Value) {
    (Value::Number(o.rows as f64), Value::Number(fields as f64), Value::Nil)
}

/// Performs a script's request; returns what its coroutine is resumed with.
pub async fn perform(lua: &Lua, ctx: &Ctx, req: Request) -> mlua::Result<(Value, Value, Value)> {
    let nothing = (Value::Nil, Value::Nil, Value::Nil);
    let message = |e: client::Error| -> mlua::Result<(Value, Value, Value)> {
        Ok((Value::String(lua.create_string(e.to_string())?), Value::Nil, Value::Nil))
    };
    match req {
        Request::Connect(slot) => match on_conn(ctx, &slot, b"", async |_| Ok(())).await {
            Ok(()) => Ok(nothing),
            Err(e) => message(e),
        },
        Request::Disconnect(slot) => {
            let conn = slot.conn.borrow_mut().take();
            if let Some(conn) = conn {
                conn.close().await;
            }
            Ok(nothing)
        }
        Request::Reconnect(slot) => {
            let Some(options) = ctx.connect.as_ref() else { return Ok(nothing) };
            match Conn::connect(options).await {
                Ok(new) => {
                    let old = slot.conn.borrow_mut().replace(new);
                    if let Some(old) = old {
                        old.close().await;
                    }
                    slot.replaced();
                    Ok(nothing)
                }
                Err(e) => message(e),
            }
        }
        Request::Query(slot) => {
            let sql = std::mem::take(&mut *ctx.sql.borrow_mut());
            let result = text_query(ctx, &slot, &sql).await;
            *ctx.sql.borrow_mut() = sql;
            match result {
                Ok(o) => Ok(answered(&o, o.columns)),
                Err(e) => Ok((Value::Nil, Value::Nil, failed(lua, ctx, &slot, &e)?)),
            }
        }
        Request::Prepare(stmt) => match prepare_on(ctx, &stmt).await {
            Ok(()) => Ok(nothing),
            Err(e) => Ok((failed(lua, ctx, &stmt.slot, &e)?, Value::Nil, Value::Nil)),
        },
        Request::Execute(stmt) => match execute(ctx, &stmt).await {
            Ok((o, fields)) => Ok(answered(&o, fields)),
            Err(e) => Ok((Value::Nil, Value::Nil, failed(lua, ctx, &stmt.slot, &e)?)),
        },
        Request::CloseStmt(stmt) => {
            let prepared = stmt.prepared.borrow_mut().take();
            // One prepared on an earlier connection died with it.
            if let Some((_, s)) = prepared.filter(|(g, _)| *g == stmt.slot.generation.get()) {
                let _ = on_conn(ctx, &stmt.slot, b"", async |conn| conn.close_statement(&s).await).await;
            }
            Ok(nothing)
        }
        Request::Flush { slot, then_append } => {
            let result = flush(ctx, &slot).await;
            if then_append {
                append(ctx, &slot, &ctx.sql.borrow());
            } else {
                slot.bulk.borrow_mut().take();
            }
            match result {
                Ok(()) => Ok(nothing),
                Err(e) => Ok((failed(lua, ctx, &slot, &e)?, Value::Nil, Value::Nil)),
            }
        }
    }
}

/// Sends `sql` as text; its rows stay in the slot for `fetch_row`.
async fn text_query(ctx: &Ctx, slot: &Slot, sql: &[u8]) -> Result<client::Outcome, client::Error> {
    let mut rows = std::mem::take(&mut *slot.rows.borrow_mut());
    let result = on_conn(ctx, slot, sql, async |conn| conn.query_stored(sql, &mut rows).await).await;
    *slot.rows.borrow_mut() = rows;
    slot.next_row.set(0);
    let o = result?;
    count(ctx, &o, o.columns > 0);
    Ok(o)
}

/// Prepares the statement on its slot's current connection (as text when the server
/// cannot prepare it).
async fn prepare_on(ctx: &Ctx, stmt: &Stmt) -> Result<(), client::Error> {
    let text =
        std::str::from_utf8(&stmt.sql).map_err(|_| client::Error::Protocol("the statement is not UTF-8".into()))?;
    match on_conn(ctx, &stmt.slot, &stmt.sql, async |conn| conn.prepare(text).await).await {
        Ok(s) => *stmt.prepared.borrow_mut() = Some((stmt.slot.generation.get(), s)),
        Err(client::Error::Server { code: UNSUPPORTED_PS, .. }) => stmt.text.set(true),
        Err(e) => return Err(e),
    }
    Ok(())
}

/// Executes with the values in `ctx.params`; returns the outcome and its result's
/// field count.
async fn execute(ctx: &Ctx, stmt: &Stmt) -> Result<(client::Outcome, u64), client::Error> {
    let params = std::mem::take(&mut *ctx.params.borrow_mut());
    let result = execute_with(ctx, stmt, &params).await;
    *ctx.params.borrow_mut() = params;
    result
}

async fn execute_with(ctx: &Ctx, stmt: &Stmt, p: &Params) -> Result<(client::Outcome, u64), client::Error> {
    const ON_STACK: usize = 16;
    let param = |b: &Bound| match *b {
        Bound::Int(i) => Param::Int(i),
        Bound::Float(f) => Param::Float(f),
        Bound::Bytes(s, e) => Param::Bytes(&p.bytes[s..e]),
        Bound::Null => Param::Null,
    };
    let mut stack = [Param::Null; ON_STACK];
    let heap: Vec<Param<'_>>;
    let params: &[Param<'_>] = if p.values.len() <= ON_STACK {
        for (slot, b) in stack.iter_mut().zip(&p.values) {
            *slot = param(b);
        }
        &stack[..p.values.len()]
    } else {
        heap = p.values.iter().map(param).collect();
        &heap
    };
    let current = stmt.prepared.borrow().as_ref().is_some_and(|(g, _)| *g == stmt.slot.generation.get());
    if !stmt.text.get() && !current {
        // Prepared on an earlier connection (before a reconnect): prepare it again.
        prepare_on(ctx, stmt).await?;
    }
    if stmt.text.get() {
        let sql = client::interpolate(&String::from_utf8_lossy(&stmt.sql), params);
        let o = text_query(ctx, &stmt.slot, sql.as_bytes()).await?;
        return Ok((o, o.columns));
    }
    // Taken out for the execute, so no borrow is held while it waits.
    let (generation, s) = stmt.prepared.borrow_mut().take().expect("prepared above");
    let result = on_conn(ctx, &stmt.slot, &stmt.sql, async |conn| conn.exec_drop(&s, params).await).await;
    let fields = s.columns() as u64;
    *stmt.prepared.borrow_mut() = Some((generation, s));
    let o = result?;
    count(ctx, &o, fields > 0);
    Ok((o, fields))
}

/// Sends the bulk insert's rows so far as one INSERT.
async fn flush(ctx: &Ctx, slot: &Slot) -> Result<(), client::Error> {
    let sql = slot.bulk.borrow_mut().as_mut().filter(|b| b.rows > 0).map(|b| std::mem::take(&mut b.buffer));
    let Some(mut sql) = sql else { return Ok(()) };
    let result = on_conn(ctx, slot, &sql, async |conn| conn.query_stored(&sql, &mut StoredRows::default()).await).await;
    if let Some(b) = slot.bulk.borrow_mut().as_mut() {
        sql.truncate(b.values_at);
        b.buffer = sql;
        b.rows = 0;
    }
    count(ctx, &result?, false);
    Ok(())
}

fn append(ctx: &Ctx, slot: &Slot, row: &[u8]) {
    if let Some(b) = slot.bulk.borrow_mut().as_mut() {
        if b.rows > 0 {
            b.buffer.push(b',');
        }
        b.buffer.extend_from_slice(row);
        b.rows += 1;
        if let Some(rows) = &ctx.rows {
            rows.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
    }
}

/// Copies one Lua value bound to a parameter of type `ty` into `p`.
fn bind(p: &mut Params, v: &Value, ty: u8) -> mlua::Result<()> {
    let number = |v: &Value| match v {
        Value::Integer(i) => Some(*i as f64),
        Value::Number(n) => Some(*n),
        Value::String(s) => s.to_str().ok()?.trim().parse().ok(),
        _ => None,
    };
    let bad = |v: &Value| mlua::Error::runtime(format!("cannot bind a {} value to this parameter", v.type_name()));
    let b = match (v, ty) {
        (Value::Nil, _) => Bound::Null,
        (Value::String(s), TYPE_VARCHAR) => {
            let start = p.bytes.len();
            p.bytes.extend_from_slice(&s.as_bytes());
            Bound::Bytes(start, p.bytes.len())
        }
        (v, TYPE_VARCHAR) => return Err(bad(v)),
        (v, TYPE_DOUBLE) => Bound::Float(number(v).ok_or_else(|| bad(v))?),
        (v, _) => Bound::Int(number(v).ok_or_else(|| bad(v))? as i64),
    };
    p.values.push(b);
    Ok(())
}

/// Copies an execute's values (as many as the statement has bound types) and leaves
/// the request.
fn stage_execute(ctx: &Ctx, stmt: &Rc<Stmt>, values: &[Value]) -> mlua::Result<bool> {
    let types = stmt.types.borrow();
    let mut p = ctx.params.borrow_mut();
    p.values.clear();
    p.bytes.clear();
    for (v, &ty) in values.iter().zip(types.iter()) {
        bind(&mut p, v, ty)?;
    }
    request(ctx, Request::Execute(stmt.clone()));
    Ok(true)
}

/// Leaves `req` for `State::call` to perform when the script yields.
fn request(ctx: &Ctx, req: Request) {
    *ctx.pending.borrow_mut() = Some(req);
}

/// The primitives sysbench.lua builds `sysbench.sql` from. Those that return `true`
/// have left a request: the Lua side yields, and is resumed with its outcome.
pub fn install(lua: &Lua, raw: &Table, ctx: &Rc<Ctx>) -> mlua::Result<()> {
    install_connections(lua, raw, ctx)?;
    install_statements(lua, raw, ctx)?;
    install_bulk(lua, raw, ctx)
}

/// connect, disconnect, reconnect, query and fetch_row on a connection handle, and
/// `ignorable` (the script's sql_error_ignorable hook accepted the last failure).
fn install_connections(lua: &Lua, raw: &Table, ctx: &Rc<Ctx>) -> mlua::Result<()> {
    let c = ctx.clone();
    // The worker's connection for the first connect of a run's state, else a new one.
    raw.set(
        "connect",
        lua.create_function(move |lua, ()| {
            if let Some(w) = c.worker.as_ref().filter(|_| !c.worker_claimed.get()) {
                c.worker_claimed.set(true);
                return Ok((lua.create_userdata(ConnHandle(w.clone()))?, false));
            }
            let slot = Slot::new(false);
            request(&c, Request::Connect(slot.clone()));
            Ok((lua.create_userdata(ConnHandle(slot))?, true))
        })?,
    )?;
    let c = ctx.clone();
    raw.set(
        "disconnect",
        lua.create_function(move |_, h: UserDataRef<ConnHandle>| {
            if h.0.worker {
                // The worker's connection stays open; the next connect() gets it again.
                c.worker_claimed.set(false);
                return Ok(false);
            }
            request(&c, Request::Disconnect(h.0.clone()));
            Ok(true)
        })?,
    )?;
    let c = ctx.clone();
    raw.set(
        "reconnect",
        lua.create_function(move |_, h: UserDataRef<ConnHandle>| {
            request(&c, Request::Reconnect(h.0.clone()));
            Ok(true)
        })?,
    )?;
    let c = ctx.clone();
    raw.set(
        "query",
        lua.create_function(move |_, (h, sql): (UserDataRef<ConnHandle>, LuaString)| {
            guarded(&c, &sql.as_bytes())?;
            let mut buf = c.sql.borrow_mut();
            buf.clear();
            buf.extend_from_slice(&sql.as_bytes());
            request(&c, Request::Query(h.0.clone()));
            Ok(true)
        })?,
    )?;
    // The next row of the connection's last text result, or nil.
    raw.set(
        "fetch_row",
        lua.create_function(|lua, h: UserDataRef<ConnHandle>| {
            let rows = h.0.rows.borrow();
            let i = h.0.next_row.get();
            if i >= rows.len() {
                return Ok(Value::Nil);
            }
            h.0.next_row.set(i + 1);
            let mut values = Vec::new();
            rows.values(i, &mut values).map_err(mlua::Error::external)?;
            let t = lua.create_table_with_capacity(values.len(), 0)?;
            for (k, v) in values.iter().enumerate() {
                if let Some(v) = v {
                    t.raw_set(k + 1, lua.create_string(v)?)?;
                }
            }
            Ok(Value::Table(t))
        })?,
    )?;
    let c = ctx.clone();
    // The script's sql_error_ignorable hook accepted the last failure: retry it.
    raw.set(
        "ignorable",
        lua.create_function(move |_, ()| {
            if let Some(f) = c.last_error.borrow_mut().as_mut() {
                f.class = ErrorClass::Retry;
            }
            Ok(true)
        })?,
    )?;
    Ok(())
}

/// prepare, bind, execute and close on a prepared statement's handle.
fn install_statements(lua: &Lua, raw: &Table, ctx: &Rc<Ctx>) -> mlua::Result<()> {
    let c = ctx.clone();
    raw.set(
        "prepare",
        lua.create_function(move |lua, (h, sql): (UserDataRef<ConnHandle>, LuaString)| {
            guarded(&c, &sql.as_bytes())?;
            let stmt = Rc::new(Stmt {
                slot: h.0.clone(),
                sql: sql.as_bytes().to_vec(),
                prepared: RefCell::new(None),
                text: Cell::new(c.text_protocol),
                types: RefCell::new(Vec::new()),
            });
            let wait = !c.text_protocol;
            if wait {
                request(&c, Request::Prepare(stmt.clone()));
            }
            Ok((lua.create_userdata(StmtHandle(stmt))?, wait))
        })?,
    )?;
    raw.set(
        "bind",
        lua.create_function(|_, (h, types): (UserDataRef<StmtHandle>, mlua::Variadic<u8>)| {
            *h.0.types.borrow_mut() = types.to_vec();
            Ok(())
        })?,
    )?;
    // Up to four values as arguments (no allocation); more through execute_many.
    let c = ctx.clone();
    raw.set(
        "execute",
        lua.create_function(move |_, (h, a, b, d, e): (UserDataRef<StmtHandle>, Value, Value, Value, Value)| {
            stage_execute(&c, &h.0, &[a, b, d, e])
        })?,
    )?;
    let c = ctx.clone();
    raw.set(
        "execute_many",
        lua.create_function(move |_, (h, values): (UserDataRef<StmtHandle>, mlua::Variadic<Value>)| {
            stage_execute(&c, &h.0, &values)
        })?,
    )?;
    let c = ctx.clone();
    raw.set(
        "close",
        lua.create_function(move |_, h: UserDataRef<StmtHandle>| {
            let live = h.0.prepared.borrow().is_some();
            if live {
                request(&c, Request::CloseStmt(h.0.clone()));
            }
            Ok(live)
        })?,
    )?;
    Ok(())
}

/// The bulk insert (sysbench's `bulk_insert_init`, `_next`, `_done`): rows gathered into
/// one packet, flushed when the next would overflow it.
fn install_bulk(lua: &Lua, raw: &Table, ctx: &Rc<Ctx>) -> mlua::Result<()> {
    let c = ctx.clone();
    raw.set(
        "bulk_init",
        lua.create_function(move |_, (h, sql): (UserDataRef<ConnHandle>, LuaString)| {
            let sql = sql.as_bytes();
            guarded(&c, &sql)?;
            if sql.len() + 1 > BULK_PACKET_SIZE {
                return Ok(Some(format!("the query is longer than {BULK_PACKET_SIZE} bytes")));
            }
            *h.0.bulk.borrow_mut() = Some(Bulk { buffer: sql.to_vec(), values_at: sql.len(), rows: 0 });
            Ok(None)
        })?,
    )?;
    let c = ctx.clone();
    raw.set(
        "bulk_next",
        lua.create_function(move |_, (h, row): (UserDataRef<ConnHandle>, LuaString)| {
            let row = row.as_bytes();
            // The statement's start and this row are read together: a start that names no
            // table ("INSERT INTO") gets its table from the rows.
            if c.guard.is_some() {
                let head = h.0.bulk.borrow().as_ref().map(|b| b.buffer[..b.values_at].to_vec()).unwrap_or_default();
                guarded(&c, &[&head[..], b" ", &row[..]].concat())?;
            }
            let full = match h.0.bulk.borrow().as_ref() {
                None => return Err(mlua::Error::runtime("bulk_insert_next() before bulk_insert_init()")),
                Some(b) => b.buffer.len() + row.len() + 1 + usize::from(b.rows > 0) > BULK_PACKET_SIZE,
            };
            if !full {
                append(&c, &h.0, &row);
                return Ok(false);
            }
            if h.0.bulk.borrow().as_ref().is_some_and(|b| b.rows == 0) {
                return Err(mlua::Error::runtime(format!("a row longer than {BULK_PACKET_SIZE} bytes")));
            }
            let mut buf = c.sql.borrow_mut();
            buf.clear();
            buf.extend_from_slice(&row);
            request(&c, Request::Flush { slot: h.0.clone(), then_append: true });
            Ok(true)
        })?,
    )?;
    let c = ctx.clone();
    raw.set(
        "bulk_done",
        lua.create_function(move |_, h: UserDataRef<ConnHandle>| {
            request(&c, Request::Flush { slot: h.0.clone(), then_append: false });
            Ok(true)
        })?,
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    /// A script's stalled command named the script and command, not which statement.
    #[test]
    fn a_script_stall_did_not_name_its_statement() {
        assert_eq!(super::excerpt(b"SELECT COUNT(*)\n   FROM sbtest1"), "SELECT COUNT(*) FROM sbtest1");
        let long = "SELECT AVG(id) FROM (SELECT * FROM sbtest1 FORCE KEY (PRIMARY) LIMIT 10000) t";
        assert_eq!(super::excerpt(long.as_bytes()), format!("{}...", &long[..60]));
        assert_eq!(super::excerpt("é".repeat(70).as_bytes()), format!("{}...", "é".repeat(60)));
        let insert = format!("INSERT INTO sbtest1 VALUES {}", "(1, 'x'),".repeat(100_000));
        assert_eq!(super::excerpt(insert.as_bytes()), format!("{}...", &insert[..60]));
        let spaced = format!("SELECT{}1 FROM t", " ".repeat(400));
        assert_eq!(super::excerpt(spaced.as_bytes()), "SELECT...");
    }
}
