-- sizeup's implementation of the sysbench 1.0.20 Lua API that scripts use, over the
-- Rust primitives passed in as `raw` (src/workload/script/sql.rs and state.rs). It
-- follows sysbench's documented behaviour; the code is sizeup's own. Loaded into every
-- Lua state before the script.
--
-- Why the statements yield: a client thread serves many workers, so a script must not
-- block it while the server works. The script runs in a coroutine; a statement leaves
-- a request and yields, sizeup performs the request asynchronously (the worker's
-- future waits, not the thread) and resumes the coroutine with the outcome.

local raw = ...
local ffi = require("ffi")
local type, error, select, setmetatable, tostring, unpack = type, error, select, setmetatable, tostring, unpack
local format = string.format

sysbench.error = { NONE = 0, RESTART_EVENT = 1 }
sysbench.hooks = {}

-- Not supported: sizeup keeps the run's latency histograms itself. Any use of it
-- (`sysbench.histogram.new(...)`) is one clear error at the script's line.
sysbench.histogram = setmetatable({}, {
   __index = function(_, name)
      error(format("sysbench.histogram.%s: sysbench.histogram is not supported by sizeup (it keeps "
         .. "the run's latency histograms itself)", tostring(name)), 2)
   end,
})

-- os.exit would end sizeup where it stands: the run unstored, its server connections
-- dropped mid-transaction. It is an error at the script's line instead, which ends the
-- command as any script error does.
os.exit = function(code)
   error(format("the script called os.exit(%s): sizeup ends the command here instead of the process",
      tostring(code)), 2)
end

-- Command line ---------------------------------------------------------------------
-- sizeup reads sysbench.cmdline.options itself, before any state runs the script.

local cmdline = sysbench.cmdline
cmdline.ARG_NULL, cmdline.ARG_BOOL, cmdline.ARG_INT, cmdline.ARG_SIZE = 0, 1, 2, 3
cmdline.ARG_DOUBLE, cmdline.ARG_STRING, cmdline.ARG_LIST, cmdline.ARG_FILE, cmdline.ARG_MAX = 4, 5, 6, 7, 8
cmdline.PARALLEL_COMMAND = true

function cmdline.read_cmdline_options()
   return true
end

function cmdline.command_defined(name)
   local commands = cmdline.commands
   return type(commands) == "table" and commands[name] ~= nil and commands[name][1] ~= nil
end

function cmdline.command_parallel(name)
   return cmdline.command_defined(name) and cmdline.commands[name][2] == cmdline.PARALLEL_COMMAND
end

-- A command succeeds unless its function returns false (nil counts as success).
function cmdline.call_command(name)
   if not cmdline.command_defined(name) then
      return false
   end
   local rc = cmdline.commands[name][1]()
   if rc == nil then
      return true
   end
   return rc and true or false
end

cmdline.print_test_options = raw.print_options

-- Reports. sizeup prints and stores its own; started the sysbench way, it calls a
-- script's report_intermediate hook with each interval's counts (sysbench's stat table),
-- and these are the formats sysbench offers such a hook, in sysbench's layout.
local function rates(stat)
   local s = stat.time_interval
   return stat.events / s, (stat.reads + stat.writes + stat.other) / s, stat.reads / s, stat.writes / s,
      stat.other / s, stat.errors / s, stat.reconnects / s
end

function sysbench.report_default(stat)
   local tps, qps, r, w, o, err, rec = rates(stat)
   print(format("[ %.0fs ] thds: %u tps: %4.2f qps: %4.2f (r/w/o: %4.2f/%4.2f/%4.2f) lat (ms,%u%%): %4.2f "
      .. "err/s %4.2f reconn/s: %4.2f", stat.time_total, stat.threads_running, tps, qps, r, w, o,
      sysbench.opt.percentile, stat.latency_pct * 1000, err, rec))
end

function sysbench.report_csv(stat)
   local tps, qps, r, w, o, err, rec = rates(stat)
   print(format("%.0f,%u,%4.2f,%4.2f,%4.2f,%4.2f,%4.2f,%4.2f,%4.2f,%4.2f", stat.time_total,
      stat.threads_running, tps, qps, r, w, o, stat.latency_pct * 1000, err, rec))
end

-- One JSON object per report in one array; the array closes when the state does.
local json_open = nil
function sysbench.report_json(stat)
   if json_open == nil then
      io.write("[\n")
      json_open = newproxy(true)
      getmetatable(json_open).__gc = function() io.write("\n]\n") end
   else
      io.write(",\n")
   end
   local tps, qps, r, w, o, err, rec = rates(stat)
   io.write(format('  {\n    "time": %4.0f,\n    "threads": %u,\n    "tps": %4.2f,\n    "qps": {\n'
      .. '      "total": %4.2f,\n      "reads": %4.2f,\n      "writes": %4.2f,\n      "other": %4.2f\n'
      .. '    },\n    "latency": %4.2f,\n    "errors": %4.2f,\n    "reconnects": %4.2f\n  }',
      stat.time_total, stat.threads_running, tps, qps, r, w, o, stat.latency_pct * 1000, err, rec))
end

-- Random numbers: sysbench's algorithms, in Rust (src/random.rs) ----------------------

sysbench.rand = {
   default = raw.default,
   uniform = raw.uniform,
   gaussian = raw.gaussian,
   special = raw.special,
   pareto = raw.pareto,
   zipfian = raw.zipfian,
   unique = raw.unique,
   string = raw.string,
   varstring = raw.varstring,
   uniform_double = raw.uniform_double,
}

-- sysbench returns a uint64_t cdata; so does this.
function sysbench.rand.uniform_uint64()
   local hi, lo = raw.uint64_parts()
   return ffi.cast("uint64_t", hi) * 4294967296ULL + lo
end

-- sysbench's C layer ----------------------------------------------------------------
-- sysbench declares these types and functions with ffi.cdef before any script runs
-- (its src/lua/internal/*.lua), and scripts build on them: Percona-Lab's sysbench-tpcc
-- declares `void sb_counter_inc(int, sb_counter_type)` and calls it through ffi.C.
-- The declarations are sysbench's; the functions behind them are sizeup's, reached
-- through ffi.C as sysbench's own exported C functions are (anything else ffi.C names,
-- usleep for one, is still the C library's).

ffi.cdef[[
typedef enum { DB_ERROR_NONE, DB_ERROR_IGNORABLE, DB_ERROR_FATAL } sql_error_t;
typedef enum {
  SB_CNT_OTHER, SB_CNT_READ, SB_CNT_WRITE, SB_CNT_TRX, SB_CNT_ERROR, SB_CNT_RECONNECT, SB_CNT_MAX
} sb_counter_type;
typedef enum {
  SQL_TYPE_NONE, SQL_TYPE_TINYINT, SQL_TYPE_SMALLINT, SQL_TYPE_INT, SQL_TYPE_BIGINT, SQL_TYPE_FLOAT,
  SQL_TYPE_DOUBLE, SQL_TYPE_TIME, SQL_TYPE_DATE, SQL_TYPE_DATETIME, SQL_TYPE_TIMESTAMP, SQL_TYPE_CHAR,
  SQL_TYPE_VARCHAR
} sql_bind_type_t;
typedef enum {
  SB_ARG_TYPE_NULL, SB_ARG_TYPE_BOOL, SB_ARG_TYPE_INT, SB_ARG_TYPE_SIZE, SB_ARG_TYPE_DOUBLE,
  SB_ARG_TYPE_STRING, SB_ARG_TYPE_LIST, SB_ARG_TYPE_FILE, SB_ARG_TYPE_MAX
} sb_arg_type_t;
typedef struct histogram sb_histogram_t;
void sb_event_start(int thread_id);
void sb_event_stop(int thread_id);
bool sb_more_events(int thread_id);
uint64_t sb_rand_uniform_uint64(void);
uint32_t sb_rand_default(uint32_t, uint32_t);
uint32_t sb_rand_uniform(uint32_t, uint32_t);
uint32_t sb_rand_gaussian(uint32_t, uint32_t);
uint32_t sb_rand_special(uint32_t, uint32_t);
uint32_t sb_rand_pareto(uint32_t, uint32_t);
uint32_t sb_rand_unique(void);
void sb_rand_str(const char *, char *);
double sb_rand_uniform_double(void);
void sb_print_test_options(void);
]]

local function own_loop()
   error("sizeup's worker loop starts and stops events itself; a script cannot drive it", 2)
end

local provided = {
   sb_counter_inc = function(_, kind)
      raw.counter_inc(tonumber(kind) or -1)
   end,
   sb_rand_uniform_uint64 = sysbench.rand.uniform_uint64,
   sb_rand_default = raw.default,
   sb_rand_uniform = raw.uniform,
   sb_rand_gaussian = raw.gaussian,
   sb_rand_special = raw.special,
   sb_rand_pareto = raw.pareto,
   sb_rand_unique = raw.unique,
   sb_rand_uniform_double = raw.uniform_double,
   -- Fills the caller's buffer as sysbench's C function does.
   sb_rand_str = function(fmt, buf)
      local s = raw.string(ffi.string(fmt))
      ffi.copy(buf, s, #s)
   end,
   sb_print_test_options = raw.print_options,
   sb_event_start = own_loop,
   sb_event_stop = own_loop,
   sb_more_events = own_loop,
}

local C = ffi.C
ffi.C = setmetatable({}, {
   __index = function(_, name)
      local f = provided[name]
      if f ~= nil then
         return f
      end
      return C[name]
   end,
   __tostring = function() return tostring(C) end,
})

-- SQL ------------------------------------------------------------------------------

local sql = {
   type = {
      NONE = 0, TINYINT = 1, SMALLINT = 2, INT = 3, BIGINT = 4, FLOAT = 5, DOUBLE = 6,
      TIME = 7, DATE = 8, DATETIME = 9, TIMESTAMP = 10, CHAR = 11, VARCHAR = 12,
   },
   error = { NONE = 0, IGNORABLE = 1, FATAL = 2 },
}
sysbench.sql = sql
local T = sql.type

-- A failed statement, as sysbench raises it: errors sizeup retries (deadlocks, lock
-- wait timeouts, --mysql-ignore-errors, a lost connection) and those the script's
-- sql_error_ignorable hook accepts restart the event with an error table the script
-- may catch; anything else is a message naming the script's line. `level` counts the
-- frames up to the script (this function is 1).
local function raise(con, err, query, level)
   local desc = {
      connection = con, query = query,
      sql_errno = err.errno, sql_state = err.state, sql_errmsg = err.message,
   }
   local hook = sysbench.hooks.sql_error_ignorable
   if err.class ~= "fatal" or (type(hook) == "function" and hook(desc) and raw.ignorable()) then
      desc.errcode = sysbench.error.RESTART_EVENT
      error(desc, level)
   end
   error(format("SQL error, errno = %d, state = '%s': %s", err.errno, err.state, err.message), level)
end

-- Statements: a primitive that returns true has left a request for sizeup, and the
-- script's coroutine yields until sizeup has performed it (see the top of this file).
local REQUEST = 1
local yield = coroutine.yield

-- A metatable for objects printed as sysbench prints its own (`<sql_connection>`).
local function class(name)
   local c = {}
   c.__index = c
   c.__tostring = function() return "<" .. name .. ">" end
   return c
end

local Driver, Connection = class("sql_driver"), class("sql_connection")
local Statement, Param = class("sql_statement"), class("sql_param")

-- A result set is valid until the connection's next query, as sysbench's: one table
-- per connection (text results, whose rows can be fetched) and per prepared statement.
local Result = class("sql_result")

function Result:fetch_row()
   return raw.fetch_row(self._h)
end

function Result:free()
   return true
end

local PreparedResult = class("sql_result")
PreparedResult.free = Result.free

function PreparedResult:fetch_row()
   error("fetch_row(): the rows of a prepared statement's result are not kept (nor can sysbench "
      .. "1.0.20 fetch them); read rows with con:query()", 2)
end

function sql.driver(name)
   if name ~= nil and name ~= "mysql" then
      error("failed to initialize the DB driver: sizeup speaks the MySQL protocol only", 2)
   end
   return setmetatable({}, Driver)
end

function Driver:connect()
   local handle, wait = raw.connect()
   if wait then
      local err = yield(REQUEST)
      if err then
         error("connection creation failed: " .. err, 2)
      end
   end
   return setmetatable({ _h = handle, _rs = setmetatable({ _h = handle }, Result) }, Connection)
end

function Driver:name()
   return "mysql"
end

function Connection:disconnect()
   if raw.disconnect(self._h) then
      yield(REQUEST)
   end
   return true
end

function Connection:reconnect()
   raw.reconnect(self._h)
   local err = yield(REQUEST)
   if err then
      error("reconnect failed: " .. err, 2)
   end
   return true
end

-- Sends a query for the connection method calling it (errors name the script's line).
local function text_query(con, query)
   raw.query(con._h, query)
   local nrows, nfields, err = yield(REQUEST)
   if err then
      raise(con, err, query, 4)
   end
   return nrows, nfields
end

-- What a statement without a result set gives, as sysbench's: a NULL pointer (cdata
-- that equals nil, yet is true in a test).
local NO_RESULT = ffi.cast("void *", nil)

-- `rs` with the outcome of a statement, or NO_RESULT when it has no result set.
local function result(rs, nrows, nfields)
   if nfields == 0 then
      return NO_RESULT
   end
   rs.nrows, rs.nfields = nrows, nfields
   return rs
end

-- The statement's result.
function Connection:query(query)
   local nrows, nfields = text_query(self, query)
   return result(self._rs, nrows, nfields)
end

-- The first row's values, or nil.
function Connection:query_row(query)
   local nrows, nfields = text_query(self, query)
   if nfields == 0 or nrows == 0 then
      return nil
   end
   return unpack(raw.fetch_row(self._h), 1, nfields)
end

local function bulk_init_at(con, query)
   local problem = raw.bulk_init(con._h, query)
   if problem then
      error("db_bulk_insert_init() failed: " .. problem, 3)
   end
   return true
end

function Connection:bulk_insert_init(query)
   local ok = bulk_init_at(self, query)
   return ok
end

-- Waits for a bulk insert's INSERT when the primitive sent one.
local function bulk_sent(sent, what)
   local err = sent and yield(REQUEST)
   if err then
      error(format("%s failed: SQL error, errno = %d, state = '%s': %s", what, err.errno, err.state, err.message), 3)
   end
   return true
end

-- (Not tail calls: an error names the script's line, two frames up.)
function Connection:bulk_insert_next(values)
   local ok = bulk_sent(raw.bulk_next(self._h, values), "db_bulk_insert_next()")
   return ok
end

function Connection:bulk_insert_done()
   local ok = bulk_sent(raw.bulk_done(self._h), "db_bulk_insert_done()")
   return ok
end

-- The bodies of prepare and execute, called at the same depth by the methods and by
-- sysbench 0.5's db_* calls, so an error names the script's line (four frames up).
local function prepare_at(con, query)
   local handle, wait = raw.prepare(con._h, query)
   if wait then
      local err = yield(REQUEST)
      if err then
         raise(con, err, query, 4)
      end
   end
   local rs = setmetatable({}, PreparedResult)
   return setmetatable({ _h = handle, _con = con, _sql = query, _params = {}, _n = 0, _rs = rs }, Statement)
end

function Connection:prepare(query)
   local stmt = prepare_at(self, query)
   return stmt
end

function Statement:bind_create(btype, max_len)
   if btype == T.TINYINT or btype == T.SMALLINT or btype == T.INT or btype == T.BIGINT then
      return setmetatable({ type = T.BIGINT, max_len = 8 }, Param)
   elseif btype == T.FLOAT or btype == T.DOUBLE then
      return setmetatable({ type = T.DOUBLE, max_len = 8 }, Param)
   elseif btype == T.CHAR or btype == T.VARCHAR then
      return setmetatable({ type = T.VARCHAR, max_len = max_len }, Param)
   end
   error("Unsupported argument type: " .. tostring(btype), 2)
end

function Statement:bind_param(...)
   local n = select("#", ...)
   if n < 1 then
      return nil
   end
   self._params, self._n = { ... }, n
   local types = {}
   for i = 1, n do
      types[i] = self._params[i].type
   end
   raw.bind(self._h, unpack(types, 1, n))
   return 0
end

local values = {} -- reused: one event at a time runs in a state
local function execute_at(self)
   local p, n = self._params, self._n
   if n <= 4 then
      local a, b, c, d = p[1], p[2], p[3], p[4]
      raw.execute(self._h, a and a.value, b and b.value, c and c.value, d and d.value)
   else
      for i = 1, n do
         values[i] = p[i].value
      end
      raw.execute_many(self._h, unpack(values, 1, n))
   end
   local nrows, nfields, err = yield(REQUEST)
   if err then
      raise(self._con, err, self._sql, 4)
   end
   return result(self._rs, nrows, nfields)
end

function Statement:execute()
   local rs = execute_at(self)
   return rs
end

function Statement:close()
   if raw.close(self._h) then
      yield(REQUEST)
   end
   return 0
end

-- A bound parameter keeps its value in Lua; execute() hands the values to Rust.
function Param:set(value)
   if value ~= nil and self.type == T.VARCHAR then
      value = tostring(value)
      if #value > self.max_len then
         value = value:sub(1, self.max_len)
      end
   end
   self.value = value
end

function Param:set_rand_str(fmt)
   if self.type ~= T.VARCHAR then
      error("Unsupported argument type: " .. tostring(self.type), 2)
   end
   local s = raw.string(fmt)
   if #s > self.max_len then
      s = s:sub(1, self.max_len)
   end
   self.value = s
end

-- sysbench 0.5's API, as sysbench 1.0 keeps it for old scripts (its sb_lua.c), over
-- the primitives above: one connection per state, opened on first use; db_query()
-- returns nothing; db_bind_param() takes its types from the table's values (a number
-- is an integer, a string text) and db_execute() reads the values from that table each
-- time. Unlike sysbench 1.0, a fatal error in db_execute() fails the run (sysbench
-- carries on).
-- Each wrapper calls the shared bodies directly, so errors name the script's line.
local legacy = { con = nil }
local function legacy_con()
   if legacy.con == nil then
      legacy.con = sysbench.sql.driver():connect()
   end
   return legacy.con
end
local function legacy_open()
   if legacy.con == nil then
      error("Uninitialized database connection", 3)
   end
   return legacy.con
end
local LegacyStatement = {}
LegacyStatement.__index = LegacyStatement

sysbench.db = {
   DB_ERROR_NONE = 0,
   DB_ERROR_RESTART_TRANSACTION = 1,
   DB_ERROR_FAILED = 2,
}
function sysbench.db.connect()
   legacy_con()
end
function sysbench.db.disconnect()
   if legacy.con ~= nil then
      legacy.con:disconnect()
      legacy.con = nil
   end
end
function sysbench.db.query(query)
   text_query(legacy_con(), query)
end
function sysbench.db.bulk_insert_init(query)
   bulk_init_at(legacy_con(), query)
end
function sysbench.db.bulk_insert_next(v)
   local ok = bulk_sent(raw.bulk_next(legacy_open()._h, v), "db_bulk_insert_next()")
   return ok
end
function sysbench.db.bulk_insert_done()
   local ok = bulk_sent(raw.bulk_done(legacy_open()._h), "db_bulk_insert_done()")
   return ok
end
function sysbench.db.prepare(query)
   local stmt = prepare_at(legacy_con(), query)
   return setmetatable({ stmt = stmt, keys = {}, binds = {} }, LegacyStatement)
end
function sysbench.db.bind_param(s, params)
   legacy_open()
   if type(params) ~= "table" then
      error("table was expected", 2)
   end
   local keys = {}
   for k in pairs(params) do
      if type(k) ~= "number" then
         error("db_bind_param(): the table's keys must be numbers (got " .. type(k) .. ")", 2)
      end
      keys[#keys + 1] = k
   end
   if #keys == 0 then
      error("table is empty", 2)
   end
   table.sort(keys)
   local binds = {}
   for i, k in ipairs(keys) do
      local v = params[k]
      if type(v) == "number" then
         binds[i] = s.stmt:bind_create(T.INT)
      elseif type(v) == "string" then
         binds[i] = s.stmt:bind_create(T.VARCHAR, 2 ^ 31)
      else
         error("Unsupported variable type: " .. type(v), 2)
      end
   end
   s.stmt:bind_param(unpack(binds))
   s.params, s.keys, s.binds = params, keys, binds
end
function sysbench.db.bind_result()
   -- sysbench 1.0 binds the table but never fills it from a result.
end
function sysbench.db.execute(s)
   legacy_open()
   for i, k in ipairs(s.keys) do
      local v = s.params[k]
      if v ~= nil and s.binds[i].type == T.BIGINT then
         local x = tonumber(v)
         if x == nil then
            error("db_execute(): parameter " .. k .. " is not a number: " .. tostring(v), 2)
         end
         -- sysbench keeps it in a C int: the fraction goes.
         v = x >= 0 and math.floor(x) or math.ceil(x)
      end
      s.binds[i]:set(v)
   end
   local rs = execute_at(s.stmt)
   return rs
end
function sysbench.db.store_results()
end
function sysbench.db.free_results(rs)
   if type(rs) == "table" and rs.free then
      rs:free()
   end
end
function sysbench.db.close(s)
   legacy_open()
   s.stmt:close()
end

-- Compatibility names sysbench 1.0 keeps from earlier releases -------------------------

thread_id = sysbench.tid
test = sysbench.cmdline.script_path

function sb_rnd()
   return tonumber(sysbench.rand.uniform_uint64() % 4294967296)
end

sb_rand = sysbench.rand.default
sb_rand_str = sysbench.rand.string
sb_rand_uniform = sysbench.rand.uniform
sb_rand_gaussian = sysbench.rand.gaussian
sb_rand_special = sysbench.rand.special

function sb_rand_uniq(a, b)
   a = a or 0
   b = b or 4294967295
   local v
   repeat
      v = sysbench.rand.unique()
   until v >= a and v <= b
   return v
end

for _, name in ipairs({ "connect", "disconnect", "query", "bulk_insert_init", "bulk_insert_next",
   "bulk_insert_done", "prepare", "bind_param", "bind_result", "execute", "store_results",
   "free_results", "close" }) do
   _G["db_" .. name] = sysbench.db[name]
end
DB_ERROR_NONE = sysbench.db.DB_ERROR_NONE
DB_ERROR_RESTART_TRANSACTION = sysbench.db.DB_ERROR_RESTART_TRANSACTION
DB_ERROR_FAILED = sysbench.db.DB_ERROR_FAILED

mysql_table_engine = mysql_table_engine or "innodb"
myisam_max_rows = 1000000

-- How sizeup calls the script: every call runs in one coroutine per state, which
-- sizeup resumes with a function and its argument and which yields either a request
-- (REQUEST, from the statements above) or the call's outcome: FINISHED, then 0 and what
-- the function returned, 1 and the restart-event table, or 2 and the error message
-- (with the script's file and line).
local FINISHED = 2
local RESTART = sysbench.error.RESTART_EVENT

-- A yield from the script itself (outside a coroutine of its own) would reach sizeup in
-- place of a statement's request: refused at the script's line. A coroutine the script
-- made yields as ever.
local running = coroutine.running
local own_thread = nil
coroutine.yield = function(...)
   if running() == own_thread then
      error(raw.yielded, 2)
   end
   return yield(...)
end

return function(f, arg)
   own_thread = running()
   while true do
      local ok, ret = pcall(f, arg)
      local status = 0
      if not ok then
         if type(ret) == "table" and ret.errcode == RESTART then
            status = 1
         else
            status = 2
            if type(ret) ~= "string" then
               ret = "(error object is a " .. type(ret) .. " value)"
            end
         end
      end
      f, arg = yield(FINISHED, status, ret)
   end
end
