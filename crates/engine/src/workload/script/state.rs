//! One Lua state running a script with sysbench's API, as sysbench makes one per
//! thread: LuaJIT with every library (ffi included, as sysbench opens them), sysbench's
//! module path, the `sysbench` table (tid, opt, cmdline, rand, sql, hooks), then the
//! script itself. Random numbers come from the state's own generator, seeded as
//! sysbench seeds its thread's (`crate::random::SysbenchRng`).
//!
//! It does not drive the script: `session` (a run) and `commands` (prepare, cleanup)
//! call its functions.

use super::bound::{self, Watched};
use super::options::{normalise, ArgType, OptValue, OptionDef};
pub use super::sql::Watch;
use super::sql::{self, Ctx, Slot};
use super::{version_line, Script, SYSBENCH_VERSION};
use crate::client::ConnectOptions;
use crate::exec::errors::RetryOn;
use crate::random::{self, IdDistribution, SharedUniqueIds, SysbenchRng};
use crate::stats::QueryCounts;
use mlua::{Function, Lua, LuaOptions, MultiValue, StdLib, Table, Thread, Value};
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

/// What a state is made with, beyond the script.
#[derive(Clone)]
pub struct Env {
    /// `sysbench.opt`: sysbench's own options and the script's, by sysbench's names.
    pub opt: Vec<(String, OptValue)>,
    /// `sysbench.cmdline.command` (empty: none, nil to the script).
    pub command: String,
    /// How further connections (`drv:connect()` beyond the first) reach the server;
    /// `None` while only the script's options are read.
    pub connect: Option<ConnectOptions>,
    pub retry_on: RetryOn,
    pub unique: Arc<SharedUniqueIds>,
    /// `--rand-seed` as sysbench's `srandom()` takes it.
    pub seed: u32,
    /// Rows added by bulk inserts, for a prepare's progress bar.
    pub rows: Option<Arc<AtomicU64>>,
    /// A command's statements are watched (see `target::stall`); a run's have the
    /// worker loop's statement timeout instead.
    pub watch: Option<Watch>,
    /// Tables its statements must not change (see `sql::Guard`).
    pub guard: Option<Arc<sql::Guard>>,
}

/// Writes out what scripts wrote with `io.write` (C's buffered stdout).
pub fn flush_c_stdout() {
    // SAFETY: fflush(NULL) flushes every C output stream; no pointer is dereferenced.
    unsafe { libc::fflush(std::ptr::null_mut()) };
}

/// A script that yields itself (outside a coroutine of its own) would take sizeup's
/// place in the loop between statements.
const YIELDED: &str =
    "the script called coroutine.yield() outside a coroutine of its own, which sizeup does not support";

/// A state with the script loaded.
pub struct State {
    pub lua: Lua,
    /// The script's path, for messages.
    pub path: String,
    pub ctx: Rc<Ctx>,
    /// The coroutine every call runs in (see sysbench.lua's last lines), and its body
    /// to make a new one should it die.
    thread: RefCell<Thread>,
    body: Function,
    /// Its calls, watched so that one that does not return is stopped (see `bound`).
    watched: Arc<Watched>,
    /// Why the hook stopped the call in progress.
    stopped: Rc<RefCell<Option<String>>>,
}

/// How a protected call ended.
pub enum Outcome {
    /// Returned, with its first return value.
    Returned(Value),
    /// Raised sysbench's restart-event error (a table with `errcode`).
    Restart(Table),
    /// Raised anything else: the message, with the script's file and line.
    Failed(String),
}

impl State {
    /// A state for thread `tid` with `script` loaded; `worker` is the connection a run
    /// lends it.
    pub fn new(script: &Script, env: &Env, tid: u32, worker: Option<Rc<Slot>>) -> Result<State, String> {
        // SAFETY: a script is the user's own code, trusted as sysbench trusts it; sysbench
        // opens every library, ffi and debug included, and scripts use them.
        let lua = unsafe { Lua::unsafe_new_with(StdLib::ALL, LuaOptions::new()) };
        // A run's worker states are the ones with a connection to borrow.
        let watched = Watched::new(&script.path, worker.is_some());
        let ctx = Rc::new(Ctx {
            rng: RefCell::new(SysbenchRng::for_thread(env.seed, tid)),
            dist: IdDistribution::new(&script.rand, 1),
            unique: env.unique.clone(),
            counts: Cell::new(QueryCounts::default()),
            connect: env.connect.clone(),
            retry_on: env.retry_on.clone(),
            worker,
            worker_claimed: Cell::new(false),
            text_protocol: script.text_protocol,
            rows: env.rows.clone(),
            watch: env.watch.clone(),
            stalled: RefCell::new(None),
            last_error: RefCell::new(None),
            scratch: RefCell::new(Vec::new()),
            pending: RefCell::new(None),
            sql: RefCell::new(Vec::new()),
            params: RefCell::new(sql::Params::default()),
            guard: env.guard.clone(),
            refused: RefCell::new(None),
        });
        let stopped = Rc::new(RefCell::new(None));
        bound::install_hook(&lua, watched.clone(), stopped.clone()).map_err(|e| message(&e))?;
        let body = setup(&lua, script, env, tid, &ctx).map_err(|e| message(&e))?;
        let thread = RefCell::new(lua.create_thread(body.clone()).map_err(|e| message(&e))?);
        let state = State { lua, path: script.path.clone(), ctx, thread, body, watched, stopped };
        // The script's body runs in the coroutine too: it may use sysbench.sql.
        let chunk = state.lua.load(&*script.source).set_name(format!("@{}", script.path));
        let main = chunk.into_function().map_err(|e| message(&e))?;
        match futures_util::FutureExt::now_or_never(state.call("top-level code", &main, Value::Nil)) {
            Some(Outcome::Returned(_)) => {}
            Some(Outcome::Failed(m)) => return Err(m),
            Some(Outcome::Restart(_)) => return Err(state.restart_message()),
            None => return Err(format!("{}: the script's body waited for the server while loading", script.path)),
        }
        state.export_legacy_globals(env).map_err(|e| message(&e))?;
        Ok(state)
    }

    /// A global function of the script, if it defines one.
    pub fn function(&self, name: &str) -> Option<Function> {
        self.lua.globals().get::<Option<Function>>(name).ok().flatten()
    }

    /// A hook the script set in `sysbench.hooks`.
    pub fn hook(&self, name: &str) -> Option<Function> {
        let hooks: Table = self.lua.globals().get::<Table>("sysbench").ok()?.get("hooks").ok()?;
        hooks.get::<Option<Function>>(name).ok().flatten()
    }

    /// Calls `f(arg)` in the state's coroutine, protected (a script error is an outcome,
    /// not a Rust error), performing each request the script yields with. `what` names
    /// the call in messages (`event()`).
    pub async fn call(&self, what: &str, f: &Function, arg: impl mlua::IntoLua) -> Outcome {
        let _call = self.watched.call(what);
        self.stopped.borrow_mut().take();
        let outcome = self.call_watched(f, arg).await;
        // Stopped past its bound: that is why, whatever the script made of the error.
        if let Some(why) = self.stopped.borrow_mut().take() {
            return Outcome::Failed(why);
        }
        // A refused statement: that is why, even if the script caught the error.
        match self.ctx.refused.borrow_mut().take() {
            Some(why) => Outcome::Failed(format!("{}: {what}: {why}", self.path)),
            None => outcome,
        }
    }

    async fn call_watched(&self, f: &Function, arg: impl mlua::IntoLua) -> Outcome {
        const REQUEST: i64 = 1;
        const FINISHED: i64 = 2;
        let arg = match arg.into_lua(&self.lua) {
            Ok(a) => a,
            Err(e) => return Outcome::Failed(message(&e)),
        };
        let mut input = (Value::Function(f.clone()), arg, Value::Nil);
        loop {
            let resumed = {
                let _lua = self.watched.running();
                self.thread.borrow().resume::<(Value, Value, Value)>(input)
            };
            // What the coroutine yielded: sysbench.lua's code, or anything from a script
            // that yielded it (which the prelude's coroutine.yield refuses first).
            let resumed = resumed.map(|(code, a, b)| {
                let code = match code {
                    Value::Integer(i) => i,
                    Value::Number(n) if n.fract() == 0.0 => n as i64,
                    _ => 0,
                };
                (code, a, b)
            });
            match resumed {
                Ok((REQUEST, _, _)) => {
                    let Some(req) = self.ctx.pending.borrow_mut().take() else {
                        return self.broken(YIELDED.into());
                    };
                    input = match sql::perform(&self.lua, &self.ctx, req).await {
                        Ok(v) => v,
                        Err(e) => return self.broken(message(&e)),
                    };
                }
                Ok((FINISHED, status, v)) => {
                    let status = match status {
                        Value::Integer(i) => Some(i as f64),
                        Value::Number(n) => Some(n),
                        _ => None,
                    };
                    return match (status, v) {
                        (Some(0.0), v) => Outcome::Returned(v),
                        (Some(1.0), Value::Table(t)) => Outcome::Restart(t),
                        (_, v) => Outcome::Failed(v.to_string().unwrap_or_else(|_| "a script error".into())),
                    };
                }
                Ok(_) => return self.broken(format!("{}: {YIELDED}", self.path)),
                Err(e) => return self.broken(message(&e)),
            }
        }
    }

    /// The coroutine is in a state sizeup cannot resume: a new one for the next call.
    fn broken(&self, why: String) -> Outcome {
        if let Ok(t) = self.lua.create_thread(self.body.clone()) {
            *self.thread.borrow_mut() = t;
        }
        Outcome::Failed(why)
    }

    /// Calls `sysbench.cmdline.call_command(name)`: false when the command says it failed.
    pub async fn call_command(&self, name: &str) -> Result<bool, String> {
        let call: Function = self.cmdline().and_then(|c| c.get("call_command")).map_err(|e| message(&e))?;
        let what = match name {
            "prepare" | "cleanup" | "help" => format!("{name}()"),
            _ => format!("{name} command"),
        };
        match self.call(&what, &call, name.to_string()).await {
            Outcome::Returned(v) => Ok(v.as_boolean().unwrap_or(false)),
            Outcome::Restart(_) => Err(self.restart_message()),
            Outcome::Failed(m) => Err(m),
        }
    }

    /// What a restart-event error that escaped a command means.
    pub fn restart_message(&self) -> String {
        match self.ctx.last_error.borrow().as_ref() {
            Some(f) => f.to_string(),
            None => "the script raised a restart-event error outside an event".into(),
        }
    }

    fn cmdline(&self) -> mlua::Result<Table> {
        self.lua.globals().get::<Table>("sysbench")?.get("cmdline")
    }

    /// The script's `sysbench.cmdline.options`, sorted by name as sysbench lists them;
    /// `None` when it has none (a sysbench 0.5-style script).
    pub fn option_defs(&self) -> Result<Option<Vec<OptionDef>>, String> {
        let Some(options) = self.cmdline().and_then(|c| c.get::<Option<Table>>("options")).map_err(|e| message(&e))?
        else {
            return Ok(None);
        };
        let mut defs = Vec::new();
        for pair in options.pairs::<Value, Value>() {
            let (name, def) = pair.map_err(|e| message(&e))?;
            let (Value::String(name), Value::Table(def)) = (&name, &def) else {
                return Err("wrong table structure in sysbench.cmdline.options".into());
            };
            // sysbench names options with `_` (`["dash-opt"]` is sysbench.opt.dash_opt).
            let name = normalise(&name.to_string_lossy());
            let description: Value = def.get(1).map_err(|e| message(&e))?;
            let description = match description {
                Value::Nil => return Err(format!("nil description for option {name}")),
                v => v.to_string().unwrap_or_default(),
            };
            let default: Value = def.get(2).map_err(|e| message(&e))?;
            let declared: Option<i64> = def.get(3).ok().flatten();
            let (default, inferred) = match &default {
                Value::Nil => (None, ArgType::String),
                Value::Boolean(b) => (Some(if *b { "on" } else { "off" }.to_string()), ArgType::Bool),
                Value::Table(t) => {
                    let items: Vec<String> =
                        t.sequence_values::<Value>().filter_map(|v| v.ok()?.to_string().ok()).collect();
                    (Some(items.join(",")), ArgType::List)
                }
                Value::Number(_) | Value::Integer(_) => (default.to_string().ok(), ArgType::Double),
                v => (v.to_string().ok(), ArgType::String),
            };
            let kind = match declared {
                Some(n) => ArgType::from_number(n).ok_or_else(|| format!("cannot determine type for option {name}"))?,
                None => inferred,
            };
            defs.push(OptionDef { name, description, default, kind });
        }
        defs.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(Some(defs))
    }

    /// The script's custom commands (`sysbench.cmdline.commands`) and whether each runs
    /// in parallel.
    pub fn commands(&self) -> Vec<(String, bool)> {
        let Ok(Some(commands)) = self.cmdline().and_then(|c| c.get::<Option<Table>>("commands")) else {
            return Vec::new();
        };
        let mut out: Vec<(String, bool)> = commands
            .pairs::<String, Table>()
            .filter_map(|p| p.ok())
            .filter(|(_, def)| def.get::<Option<Function>>(1).ok().flatten().is_some())
            .map(|(name, def)| {
                let parallel = def.get::<Option<bool>>(2).ok().flatten() == Some(true);
                (name, parallel)
            })
            .collect();
        out.sort();
        out
    }

    /// Scripts without `sysbench.cmdline.options` (sysbench 0.5 style) read options as
    /// globals; sysbench sets them after the script ran, sparing its functions' names.
    fn export_legacy_globals(&self, env: &Env) -> mlua::Result<()> {
        if self.cmdline()?.get::<Option<Table>>("options")?.is_some() {
            return Ok(());
        }
        let globals = self.lua.globals();
        for (name, value) in &env.opt {
            if !matches!(globals.get::<Value>(name.as_str())?, Value::Function(_)) {
                globals.set(name.as_str(), lua_value(&self.lua, value)?)?;
            }
        }
        Ok(())
    }
}

/// The `sysbench` table, the Rust primitives and the prelude; returns the prelude's
/// protected-call function.
fn setup(lua: &Lua, script: &Script, env: &Env, tid: u32, ctx: &Rc<Ctx>) -> mlua::Result<Function> {
    set_package_path(lua, &script.path)?;
    let sysbench = lua.create_table()?;
    sysbench.set("tid", tid)?;
    sysbench.set("version", SYSBENCH_VERSION)?;
    sysbench.set("version_string", version_line())?;
    let cmdline = lua.create_table()?;
    let argv = lua.create_table()?;
    for (i, a) in std::env::args().enumerate() {
        argv.raw_set(i, a)?;
    }
    cmdline.set("argv", argv)?;
    // No command (a script loaded alone): nil, as sysbench leaves it.
    if !env.command.is_empty() {
        cmdline.set("command", env.command.as_str())?;
    }
    cmdline.set("script_path", script.path.as_str())?;
    sysbench.set("cmdline", cmdline)?;
    let opt = lua.create_table()?;
    for (name, value) in &env.opt {
        opt.set(name.as_str(), lua_value(lua, value)?)?;
    }
    sysbench.set("opt", opt)?;
    lua.globals().set("sysbench", sysbench)?;
    // print() through Rust's stdout, so a script's lines and sizeup's keep their order.
    lua.globals().set(
        "print",
        lua.create_function(|_, args: MultiValue| {
            let line: Vec<String> = args.iter().map(|v| v.to_string().unwrap_or_default()).collect();
            crate::outln!("{}", line.join("\t"));
            Ok(())
        })?,
    )?;

    let raw = lua.create_table()?;
    raw.set("yielded", YIELDED)?;
    install_rand(lua, &raw, ctx)?;
    sql::install(lua, &raw, ctx)?;
    let help = super::options::help(&script.path, &script.defs);
    raw.set(
        "print_options",
        lua.create_function(move |_, ()| {
            crate::out!("{help}");
            Ok(())
        })?,
    )?;
    lua.load(include_str!("sysbench.lua")).set_name("=sizeup's sysbench API").call(raw)
}

/// sysbench's module path (`sb_lua_set_paths`): the current directory, LuaRocks,
/// the system's Lua directories and sysbench's own scripts (where `oltp_common.lua`
/// lives), with `LUA_PATH` and its `;;` honoured. The script's own directory comes
/// after `./`, so a script next to its modules runs from anywhere.
fn set_package_path(lua: &Lua, script: &str) -> mlua::Result<()> {
    let dir = std::path::Path::new(script).parent().filter(|d| !d.as_os_str().is_empty());
    let mut path = String::from("./?.lua;./?/init.lua;");
    if let Some(dir) = dir {
        path.push_str(&format!("{0}/?.lua;{0}/?/init.lua;", dir.display()));
    }
    if let Some(home) = std::env::var_os("HOME") {
        let home = home.to_string_lossy();
        for p in ["/.luarocks/share/lua/5.1/?.lua;", "/.luarocks/share/lua/5.1/?/init.lua;"] {
            path.push_str(&home);
            path.push_str(p);
        }
    }
    path.push_str("/usr/local/share/lua/5.1/?.lua;/usr/share/lua/5.1/?.lua;/usr/share/sysbench/?.lua");
    if let Ok(given) = std::env::var("LUA_PATH") {
        path = given.replace(";;", &format!(";{path};"));
    }
    let package: Table = lua.globals().get("package")?;
    package.set("path", path)
}

/// sysbench's uint32_t arguments: a Lua number truncated, then taken modulo 2^32.
fn u32_of(x: f64) -> u32 {
    x as i64 as u32
}

fn install_rand(lua: &Lua, raw: &Table, ctx: &Rc<Ctx>) -> mlua::Result<()> {
    type Draw = fn(&IdDistribution, &mut SysbenchRng, u32, u32) -> u32;
    let ranged: [(&str, Draw); 6] = [
        ("uniform", |_, r, a, b| random::sb_uniform(r, a, b)),
        ("default", |d, r, a, b| d.draw(r, a, b)),
        ("gaussian", |d, r, a, b| d.gaussian(r, a, b)),
        ("special", |d, r, a, b| d.special(r, a, b)),
        ("pareto", |d, r, a, b| d.pareto(r, a, b)),
        ("zipfian", |d, r, a, b| d.zipfian(r, a, b)),
    ];
    for (name, draw) in ranged {
        let c = ctx.clone();
        let f = lua.create_function(move |_, (a, b): (f64, f64)| {
            Ok(draw(&c.dist, &mut c.rng.borrow_mut(), u32_of(a), u32_of(b)) as f64)
        })?;
        raw.set(name, f)?;
    }
    // sysbench's sb_counter_inc(thread, type), by its sb_counter_type numbers: the
    // state's own counts (a script passes its own sysbench.tid). SB_CNT_TRX is not
    // counted: an event is one call of event(), as sizeup times it.
    let c = ctx.clone();
    raw.set(
        "counter_inc",
        lua.create_function(move |_, kind: i64| {
            c.count(|q| match kind {
                0 => q.other += 1,
                1 => q.reads += 1,
                2 => q.writes += 1,
                4 => q.errors += 1,
                5 => q.reconnects += 1,
                _ => {}
            });
            Ok(())
        })?,
    )?;
    let c = ctx.clone();
    raw.set("unique", lua.create_function(move |_, ()| Ok(c.unique.next_id() as f64))?)?;
    let c = ctx.clone();
    raw.set("uniform_double", lua.create_function(move |_, ()| Ok(random::unit_double(&mut *c.rng.borrow_mut())))?)?;
    let c = ctx.clone();
    raw.set(
        "uint64_parts",
        lua.create_function(move |_, ()| {
            let v = rand::RngCore::next_u64(&mut *c.rng.borrow_mut());
            Ok(((v >> 32) as f64, (v & 0xffff_ffff) as f64))
        })?,
    )?;
    let c = ctx.clone();
    raw.set(
        "string",
        lua.create_function(move |lua, fmt: mlua::LuaString| {
            let mut out = c.scratch.borrow_mut();
            out.clear();
            random::sb_rand_str(&mut out, &fmt.as_bytes(), &mut *c.rng.borrow_mut());
            lua.create_string(&out[..])
        })?,
    )?;
    let c = ctx.clone();
    raw.set(
        "varstring",
        lua.create_function(move |lua, (min, max): (f64, f64)| {
            if min > max || max <= 0.0 {
                return Err(mlua::Error::runtime("varstring: need 0 < min_len <= max_len"));
            }
            let mut out = c.scratch.borrow_mut();
            out.clear();
            random::sb_rand_varstr(&mut out, u32_of(min), u32_of(max), &mut *c.rng.borrow_mut());
            lua.create_string(&out[..])
        })?,
    )?;
    Ok(())
}

/// An option value as Lua sees it.
pub fn lua_value(lua: &Lua, v: &OptValue) -> mlua::Result<Value> {
    Ok(match v {
        OptValue::Bool(b) => Value::Boolean(*b),
        OptValue::Number(n) => Value::Number(*n),
        OptValue::Text(s) => Value::String(lua.create_string(s)?),
        OptValue::List(items) => Value::Table(lua.create_sequence_from(items.iter().map(String::as_str))?),
        OptValue::Nil => Value::Nil,
    })
}

/// A Lua error as one message: the script's own words with its file and line, without
/// mlua's wrapping or a traceback.
pub fn message(e: &mlua::Error) -> String {
    let text = match e {
        mlua::Error::RuntimeError(m) | mlua::Error::SyntaxError { message: m, .. } => m.clone(),
        mlua::Error::CallbackError { cause, .. } => return message(cause),
        mlua::Error::WithContext { cause, .. } => return message(cause),
        other => other.to_string(),
    };
    text.split("\nstack traceback:").next().unwrap_or(&text).trim_end().to_string()
}
