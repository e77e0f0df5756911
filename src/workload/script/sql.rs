//! The Rust half of `sysbench.sql` (the Lua half is sysbench.lua): connections,
//! prepared statements, result sets and bulk inserts over sizeup's lean client, with
//! each statement counted as sysbench's MySQL driver counts it:
//!
//! - a statement that returns a result set is a read (a prepared one: one whose
//!   prepare announced columns);
//! - otherwise a write when it changed rows, else other (BEGIN, COMMIT, an UPDATE
//!   that matched nothing).
//!
//! Every primitive that waits for the server is async: the script's coroutine yields
//! while it waits. Failures come back to Lua as a table (errno, state, message, and
//! the class sizeup's policy gives it) for sysbench.lua to raise as sysbench does.

use super::state::{class_name, Ctx};
use crate::client::{self, Conn, Param, StoredRows};
use crate::exec::errors::{classify, ErrorClass};
use mlua::{BorrowedBytes, Lua, MultiValue, Table, UserData, UserDataFields, UserDataMethods, UserDataRef, Value};
use std::cell::{Cell, RefCell};
use std::rc::Rc;

/// sysbench's bulk insert buffer (`BULK_PACKET_SIZE`): a multi-row INSERT is sent when
/// the next row would not fit.
const BULK_PACKET_SIZE: usize = 512 * 1024;

/// MySQL's ER_UNSUPPORTED_PS: the statement cannot be prepared, so it is sent as text
/// (sysbench's driver does the same).
const UNSUPPORTED_PS: u16 = 1295;

/// sysbench's codes for client-side failures: a lost connection, anything else.
const CR_SERVER_LOST: u16 = 2013;
const CR_UNKNOWN_ERROR: u16 = 2000;

/// One connection a script holds.
pub struct Slot {
    conn: RefCell<Option<Conn>>,
    /// Bumped whenever the connection is replaced: statements prepared on an earlier
    /// one are prepared again before their next execute.
    generation: Cell<u64>,
    bulk: RefCell<Option<Bulk>>,
    /// The worker's connection (lent during each call) rather than the script's own.
    worker: bool,
}

impl Slot {
    fn new(conn: Option<Conn>, worker: bool) -> Rc<Slot> {
        Rc::new(Slot { conn: RefCell::new(conn), generation: Cell::new(0), bulk: RefCell::new(None), worker })
    }

    /// The slot for a worker's connection (empty until lent).
    pub fn for_worker() -> Rc<Slot> {
        Slot::new(None, true)
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
    }
}

struct Bulk {
    buffer: Vec<u8>,
    /// Where the rows start (after `INSERT ... VALUES`).
    values_at: usize,
    rows: u32,
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

    /// The client error the worker loop classifies (the class travels separately).
    pub fn error(&self) -> client::Error {
        client::Error::Server { code: self.errno, state: self.state.clone(), message: self.message.clone() }
    }

    fn table(&self, lua: &Lua) -> mlua::Result<Table> {
        let t = lua.create_table()?;
        t.set("errno", self.errno)?;
        t.set("state", self.state.as_str())?;
        t.set("message", self.message.as_str())?;
        t.set("class", class_name(self.class))?;
        Ok(t)
    }
}

/// A connection handle as Lua holds it.
struct ConnHandle(Rc<Slot>);
impl UserData for ConnHandle {}

/// A prepared statement as Lua holds it.
struct StmtHandle {
    slot: Rc<Slot>,
    sql: Vec<u8>,
    /// The server-side statement and the connection generation it belongs to; `None`
    /// when it is sent as text.
    prepared: RefCell<Option<(u64, client::Statement)>>,
    text: bool,
    /// Bound parameter types (sysbench.sql.type numbers), from `bind_param`.
    types: RefCell<Vec<u8>>,
}
impl UserData for StmtHandle {}

/// A result set: its size, and for text queries its rows.
struct ResultSet {
    nrows: u64,
    nfields: u64,
    rows: Option<StoredRows>,
    next: Cell<usize>,
}

impl UserData for ResultSet {
    fn add_fields<F: UserDataFields<Self>>(fields: &mut F) {
        fields.add_field_method_get("nrows", |_, rs| Ok(rs.nrows as f64));
        fields.add_field_method_get("nfields", |_, rs| Ok(rs.nfields as f64));
    }

    fn add_methods<M: UserDataMethods<Self>>(methods: &mut M) {
        // The next row as a table of strings (NULLs left out), or nil at the end.
        methods.add_method("fetch_row", |lua, rs, ()| {
            let Some(rows) = &rs.rows else {
                return Err(mlua::Error::runtime(
                    "fetch_row(): the rows of a prepared statement's result are not kept \
                     (nor can sysbench 1.0.20 fetch them); read rows with con:query()",
                ));
            };
            let i = rs.next.get();
            if i >= rows.len() {
                return Ok(Value::Nil);
            }
            rs.next.set(i + 1);
            let mut values = Vec::new();
            rows.values(i, &mut values).map_err(mlua::Error::external)?;
            let t = lua.create_table_with_capacity(values.len(), 0)?;
            for (k, v) in values.iter().enumerate() {
                if let Some(v) = v {
                    t.raw_set(k + 1, lua.create_string(v)?)?;
                }
            }
            Ok(Value::Table(t))
        });
        methods.add_method("free", |_, _, ()| Ok(true));
    }
}

/// What a primitive returns: a value, or nil and the failure's table.
fn failed(lua: &Lua, ctx: &Ctx, f: Failure) -> mlua::Result<(Value, Value)> {
    let t = f.table(lua)?;
    *ctx.last_error.borrow_mut() = Some(f);
    Ok((Value::Nil, Value::Table(t)))
}

/// The failure of `e` on `slot`; a script's own connection that was lost is dropped,
/// to be reconnected by its next statement (the worker's is the loop's to reconnect).
fn failure(e: &client::Error, ctx: &Ctx, slot: &Slot) -> Failure {
    let f = Failure::of(e, ctx);
    if f.class == ErrorClass::Reconnect && !slot.worker {
        slot.conn.borrow_mut().take();
    }
    f
}

/// Makes sure a script's own connection is up (after a loss, it reconnects).
async fn ensure(ctx: &Ctx, slot: &Slot) -> Result<(), client::Error> {
    if slot.conn.borrow().is_some() || slot.worker {
        return Ok(());
    }
    let options = ctx.connect.as_ref().ok_or_else(|| client::Error::Protocol("no server to connect to".into()))?;
    let conn = Conn::connect(options).await?;
    *slot.conn.borrow_mut() = Some(conn);
    slot.replaced();
    Ok(())
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

fn not_connected() -> client::Error {
    client::Error::Io(std::io::Error::new(std::io::ErrorKind::NotConnected, "the connection was closed"))
}

/// Runs `f` on the slot's connection, taken out of the slot meanwhile (no borrow is
/// held while it waits).
async fn on_conn<T>(
    slot: &Slot,
    f: impl AsyncFnOnce(&mut Conn) -> Result<T, client::Error>,
) -> Result<T, client::Error> {
    let Some(mut conn) = slot.conn.borrow_mut().take() else { return Err(not_connected()) };
    let result = f(&mut conn).await;
    *slot.conn.borrow_mut() = Some(conn);
    result
}

/// Sends `sql` as text; a result set comes back as a `ResultSet` with its rows.
async fn text_query(lua: &Lua, ctx: &Ctx, slot: &Slot, sql: &[u8]) -> mlua::Result<(Value, Value)> {
    if let Err(e) = ensure(ctx, slot).await {
        return failed(lua, ctx, failure(&e, ctx, slot));
    }
    let mut rows = StoredRows::default();
    match on_conn(slot, async |conn| conn.query_stored(sql, &mut rows).await).await {
        Ok(o) => {
            count(ctx, &o, o.columns > 0);
            if o.columns == 0 {
                return Ok((Value::Nil, Value::Nil));
            }
            let rs = ResultSet { nrows: o.rows, nfields: o.columns, rows: Some(rows), next: Cell::new(0) };
            Ok((Value::UserData(lua.create_userdata(rs)?), Value::Nil))
        }
        Err(e) => failed(lua, ctx, failure(&e, ctx, slot)),
    }
}

/// A Lua value bound to a parameter of sysbench type `ty`, owned for the execute.
enum Bound {
    Int(i64),
    Float(f64),
    Bytes(BorrowedBytes),
    Null,
}

impl Bound {
    fn of(v: Value, ty: u8) -> mlua::Result<Bound> {
        const DOUBLE: u8 = 6;
        const VARCHAR: u8 = 12;
        let number = |v: &Value| match v {
            Value::Integer(i) => Some(*i as f64),
            Value::Number(n) => Some(*n),
            Value::String(s) => s.to_str().ok()?.trim().parse().ok(),
            _ => None,
        };
        Ok(match (v, ty) {
            (Value::Nil, _) => Bound::Null,
            (Value::String(s), VARCHAR) => Bound::Bytes(s.as_bytes()),
            (v, VARCHAR) => {
                return Err(mlua::Error::runtime(format!("a {} value for a string parameter", v.type_name())))
            }
            (v, DOUBLE) => Bound::Float(number(&v).ok_or_else(|| bad_number(&v))?),
            (v, _) => Bound::Int(number(&v).ok_or_else(|| bad_number(&v))? as i64),
        })
    }

    fn param(&self) -> Param<'_> {
        match self {
            Bound::Int(i) => Param::Int(*i),
            Bound::Float(f) => Param::Float(*f),
            Bound::Bytes(b) => Param::Bytes(b),
            Bound::Null => Param::Null,
        }
    }
}

fn bad_number(v: &Value) -> mlua::Error {
    mlua::Error::runtime(format!("cannot convert a {} value to a number parameter", v.type_name()))
}

/// Prepares `sql` on the slot's current connection.
async fn prepare_on(slot: &Slot, sql: &[u8]) -> Result<Option<client::Statement>, client::Error> {
    let text = std::str::from_utf8(sql).map_err(|_| client::Error::Protocol("the statement is not UTF-8".into()))?;
    match on_conn(slot, async |conn| conn.prepare(text).await).await {
        Ok(s) => Ok(Some(s)),
        Err(client::Error::Server { code: UNSUPPORTED_PS, .. }) => Ok(None),
        Err(e) => Err(e),
    }
}

async fn execute(lua: &Lua, ctx: &Ctx, h: &StmtHandle, args: MultiValue) -> mlua::Result<(Value, Value)> {
    let slot = &h.slot;
    let types = h.types.borrow().clone();
    let bound: Vec<Bound> = args
        .into_iter()
        .enumerate()
        .map(|(i, v)| Bound::of(v, types.get(i).copied().unwrap_or(4)))
        .collect::<mlua::Result<_>>()?;
    let params: Vec<Param<'_>> = bound.iter().map(Bound::param).collect();
    if h.text {
        let sql = client::interpolate(&String::from_utf8_lossy(&h.sql), &params);
        return text_query(lua, ctx, slot, sql.as_bytes()).await;
    }
    if let Err(e) = ensure(ctx, slot).await {
        return failed(lua, ctx, failure(&e, ctx, slot));
    }
    // Prepared on an earlier connection (before a reconnect): prepare it again.
    let current = h.prepared.borrow().as_ref().is_some_and(|(g, _)| *g == slot.generation.get());
    if !current {
        match prepare_on(slot, &h.sql).await {
            Ok(Some(s)) => *h.prepared.borrow_mut() = Some((slot.generation.get(), s)),
            Ok(None) => {
                let sql = client::interpolate(&String::from_utf8_lossy(&h.sql), &params);
                return text_query(lua, ctx, slot, sql.as_bytes()).await;
            }
            Err(e) => return failed(lua, ctx, failure(&e, ctx, slot)),
        }
    }
    // Taken out for the execute, so no borrow is held while it waits.
    let (generation, stmt) = h.prepared.borrow_mut().take().expect("prepared above");
    let result = on_conn(slot, async |conn| conn.exec_drop(&stmt, &params).await).await;
    let columns = stmt.columns() as u64;
    *h.prepared.borrow_mut() = Some((generation, stmt));
    match result {
        Ok(o) => {
            count(ctx, &o, columns > 0);
            if columns == 0 {
                return Ok((Value::Nil, Value::Nil));
            }
            let rs = ResultSet { nrows: o.rows, nfields: columns, rows: None, next: Cell::new(0) };
            Ok((Value::UserData(lua.create_userdata(rs)?), Value::Nil))
        }
        Err(e) => failed(lua, ctx, failure(&e, ctx, slot)),
    }
}

/// Sends the bulk insert's rows so far as one INSERT.
async fn flush(ctx: &Ctx, slot: &Slot) -> Result<(), client::Error> {
    let Some(mut sql) = slot.bulk.borrow_mut().as_mut().filter(|b| b.rows > 0).map(|b| std::mem::take(&mut b.buffer))
    else {
        return Ok(());
    };
    let result = match ensure(ctx, slot).await {
        Ok(()) => on_conn(slot, async |conn| conn.query_stored(&sql, &mut StoredRows::default()).await).await,
        Err(e) => Err(e),
    };
    if let Some(b) = slot.bulk.borrow_mut().as_mut() {
        sql.truncate(b.values_at);
        b.buffer = sql;
        b.rows = 0;
    }
    let o = result?;
    count(ctx, &o, false);
    Ok(())
}

/// The primitives sysbench.lua builds `sysbench.sql` from.
pub fn install(lua: &Lua, raw: &Table, ctx: &Rc<Ctx>) -> mlua::Result<()> {
    let c = ctx.clone();
    // The worker's connection for the first connect of a run's state, else a new one.
    raw.set(
        "connect",
        lua.create_async_function(move |lua, ()| {
            let c = c.clone();
            async move {
                if let Some(w) = c.worker.as_ref().filter(|_| !c.worker_claimed.get()) {
                    c.worker_claimed.set(true);
                    return Ok((Value::UserData(lua.create_userdata(ConnHandle(w.clone()))?), Value::Nil));
                }
                let slot = Slot::new(None, false);
                match ensure(&c, &slot).await {
                    Ok(()) => Ok((Value::UserData(lua.create_userdata(ConnHandle(slot))?), Value::Nil)),
                    Err(e) => Ok((Value::Nil, Value::String(lua.create_string(e.to_string())?))),
                }
            }
        })?,
    )?;
    let c = ctx.clone();
    raw.set(
        "disconnect",
        lua.create_async_function(move |_, h: UserDataRef<ConnHandle>| {
            let (c, slot) = (c.clone(), h.0.clone());
            async move {
                if slot.worker {
                    // The worker's connection stays open; the next connect() gets it again.
                    c.worker_claimed.set(false);
                } else if let Some(conn) = slot.conn.borrow_mut().take() {
                    conn.close().await;
                }
                Ok(())
            }
        })?,
    )?;
    let c = ctx.clone();
    raw.set(
        "reconnect",
        lua.create_async_function(move |lua, h: UserDataRef<ConnHandle>| {
            let (c, slot) = (c.clone(), h.0.clone());
            async move {
                let Some(options) = c.connect.as_ref() else { return Ok(Value::Nil) };
                match Conn::connect(options).await {
                    Ok(new) => {
                        if let Some(old) = slot.conn.borrow_mut().replace(new) {
                            old.close().await;
                        }
                        slot.replaced();
                        Ok(Value::Nil)
                    }
                    Err(e) => Ok(Value::String(lua.create_string(e.to_string())?)),
                }
            }
        })?,
    )?;
    let c = ctx.clone();
    raw.set(
        "query",
        lua.create_async_function(move |lua, (h, sql): (UserDataRef<ConnHandle>, BorrowedBytes)| {
            let (c, slot) = (c.clone(), h.0.clone());
            async move { text_query(&lua, &c, &slot, &sql).await }
        })?,
    )?;
    let c = ctx.clone();
    raw.set(
        "prepare",
        lua.create_async_function(move |lua, (h, sql): (UserDataRef<ConnHandle>, BorrowedBytes)| {
            let (c, slot) = (c.clone(), h.0.clone());
            async move {
                let sql = sql.to_vec();
                let mut handle =
                    StmtHandle { slot, sql, prepared: RefCell::new(None), text: true, types: RefCell::new(Vec::new()) };
                if !c.text_protocol {
                    if let Err(e) = ensure(&c, &handle.slot).await {
                        return failed(&lua, &c, failure(&e, &c, &handle.slot));
                    }
                    match prepare_on(&handle.slot, &handle.sql).await {
                        Ok(Some(s)) => {
                            handle.text = false;
                            *handle.prepared.borrow_mut() = Some((handle.slot.generation.get(), s));
                        }
                        Ok(None) => {}
                        Err(e) => return failed(&lua, &c, failure(&e, &c, &handle.slot)),
                    }
                }
                Ok((Value::UserData(lua.create_userdata(handle)?), Value::Nil))
            }
        })?,
    )?;
    raw.set(
        "bind",
        lua.create_function(|_, (h, types): (UserDataRef<StmtHandle>, mlua::Variadic<u8>)| {
            *h.types.borrow_mut() = types.to_vec();
            Ok(())
        })?,
    )?;
    let c = ctx.clone();
    raw.set(
        "execute",
        lua.create_async_function(move |lua, (h, args): (mlua::AnyUserData, MultiValue)| {
            let c = c.clone();
            async move {
                let h = h.borrow::<StmtHandle>()?;
                execute(&lua, &c, &h, args).await
            }
        })?,
    )?;
    raw.set(
        "close",
        lua.create_async_function(|_, h: mlua::AnyUserData| async move {
            let h = h.borrow::<StmtHandle>()?;
            let prepared = h.prepared.borrow_mut().take();
            // One prepared on an earlier connection died with it.
            if let Some((_, stmt)) = prepared.filter(|(g, _)| *g == h.slot.generation.get()) {
                let _ = on_conn(&h.slot, async |conn| conn.close_statement(&stmt).await).await;
            }
            Ok(())
        })?,
    )?;
    raw.set(
        "bulk_init",
        lua.create_function(|_, (h, sql): (UserDataRef<ConnHandle>, BorrowedBytes)| {
            if sql.len() + 1 > BULK_PACKET_SIZE {
                return Ok(Some(format!("the query is longer than {BULK_PACKET_SIZE} bytes")));
            }
            let bulk = Bulk { buffer: sql.to_vec(), values_at: sql.len(), rows: 0 };
            *h.0.bulk.borrow_mut() = Some(bulk);
            Ok(None)
        })?,
    )?;
    let c = ctx.clone();
    raw.set(
        "bulk_next",
        lua.create_async_function(move |lua, (h, row): (UserDataRef<ConnHandle>, BorrowedBytes)| {
            let (c, slot) = (c.clone(), h.0.clone());
            async move {
                let full = match slot.bulk.borrow().as_ref() {
                    None => return Err(mlua::Error::runtime("bulk_insert_next() before bulk_insert_init()")),
                    Some(b) if b.buffer.len() + row.len() + 1 + usize::from(b.rows > 0) > BULK_PACKET_SIZE => {
                        if b.rows == 0 {
                            return Err(mlua::Error::runtime(format!("a row longer than {BULK_PACKET_SIZE} bytes")));
                        }
                        true
                    }
                    Some(_) => false,
                };
                if full {
                    if let Err(e) = flush(&c, &slot).await {
                        return Ok(Some(failed(&lua, &c, failure(&e, &c, &slot))?.1));
                    }
                }
                if let Some(b) = slot.bulk.borrow_mut().as_mut() {
                    if b.rows > 0 {
                        b.buffer.push(b',');
                    }
                    b.buffer.extend_from_slice(&row);
                    b.rows += 1;
                }
                if let Some(rows) = &c.rows {
                    rows.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                }
                Ok(None)
            }
        })?,
    )?;
    let c = ctx.clone();
    raw.set(
        "bulk_done",
        lua.create_async_function(move |lua, h: UserDataRef<ConnHandle>| {
            let (c, slot) = (c.clone(), h.0.clone());
            async move {
                let result = flush(&c, &slot).await;
                slot.bulk.borrow_mut().take();
                match result {
                    Ok(()) => Ok(None),
                    Err(e) => Ok(Some(failed(&lua, &c, failure(&e, &c, &slot))?.1)),
                }
            }
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
