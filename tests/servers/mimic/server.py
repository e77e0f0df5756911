"""mimic-server: a MySQL-protocol server on mysql-mimic (PyPI), for sizeup's test suite.

mysql-mimic speaks the protocol (handshake, mysql_native_password login, text and
prepared statements, SHOW and information_schema from a schema mapping); what runs the
SQL is left to the application. This one keeps tables in memory: CREATE TABLE, INSERT,
UPDATE, DELETE and DROP TABLE here, SELECT through sqlglot's Python executor. It has no
table comments, no LOAD DATA LOCAL (mysql-mimic does not offer CLIENT_LOCAL_FILES) and
no storage engine variables, as a small MySQL-compatible service would.

    server.py --port N [--socket PATH] [--user NAME:PASSWORD]...

prints "ready tcp=PORT socket=PATH" once it accepts connections.
"""

import argparse
import asyncio
import sys

from sqlglot import exp
from sqlglot.executor import execute

from mysql_mimic import MysqlServer, Session, User
from mysql_mimic.auth import IdentityProvider, NativePasswordAuthPlugin
from mysql_mimic.errors import ErrorCode, MysqlError

# database -> table -> {"columns": [(name, type)], "rows": [dict]}
DATA: dict = {}


def value(e):
    if isinstance(e, exp.Null):
        return None
    if isinstance(e, exp.Literal):
        if e.is_string:
            return e.this
        text = e.this
        return float(text) if "." in text else int(text)
    if isinstance(e, exp.Neg):
        return -value(e.this)
    # Expressions (e.g. arithmetic): evaluated by sqlglot's executor.
    return execute(exp.select(e.copy().as_("v"))).rows[0][0]


class Store(Session):
    def db(self, name=None):
        name = name or self.database
        if not name:
            raise MysqlError("No database selected", code=ErrorCode.NO_DB_ERROR)
        return DATA.setdefault(name, {})

    def table(self, t: exp.Table):
        tables = self.db(t.db or None)
        if t.name not in tables:
            raise MysqlError(f"Table '{t.name}' doesn't exist", code=ErrorCode.NO_SUCH_TABLE)
        return tables[t.name]

    async def schema(self):
        return {
            db: {name: dict(t["columns"]) for name, t in tables.items()}
            for db, tables in DATA.items()
        }

    async def query(self, expression, sql, attrs):
        if isinstance(expression, exp.Create):
            kind = expression.args.get("kind", "").upper()
            if kind == "DATABASE":
                DATA.setdefault(expression.this.name, {})
                return [], []
            if kind == "INDEX":
                return [], []  # no indexes: every read scans
            if kind != "TABLE":
                raise MysqlError(f"CREATE {kind} is not supported here", code=ErrorCode.NOT_SUPPORTED_YET)
            schema = expression.this
            t = schema.this
            tables = self.db(t.db or None)
            if t.name in tables:
                if expression.args.get("exists"):
                    return [], []
                raise MysqlError(f"Table '{t.name}' already exists", code=ErrorCode.TABLE_EXISTS_ERROR)
            columns = [
                (c.name, c.args["kind"].sql(dialect="mysql").split("(")[0])
                for c in schema.expressions
                if isinstance(c, exp.ColumnDef)
            ]
            tables[t.name] = {"columns": columns, "rows": [], "next_id": 1}
            return [], []
        if isinstance(expression, exp.Drop):
            kind = expression.args.get("kind", "").upper()
            for t in expression.args.get("tables") or expression.expressions or [expression.this]:
                if kind == "DATABASE":
                    DATA.pop(t.name, None)
                    continue
                tables = self.db(t.db or None)
                if t.name not in tables and not expression.args.get("exists"):
                    raise MysqlError(f"Unknown table '{t.name}'", code=ErrorCode.BAD_TABLE_ERROR)
                tables.pop(t.name, None)
            return [], []
        if isinstance(expression, exp.Insert):
            t = expression.this
            target = t.this if isinstance(t, exp.Schema) else t
            names = [c.name for c in t.expressions] if isinstance(t, exp.Schema) else None
            table = self.table(target)
            names = names or [c for c, _ in table["columns"]]
            values = expression.expression
            if not isinstance(values, exp.Values):
                raise MysqlError("only INSERT ... VALUES here", code=ErrorCode.NOT_SUPPORTED_YET)
            for row in values.expressions:
                r = {c: None for c, _ in table["columns"]}
                r.update(zip(names, (value(v) for v in row.expressions)))
                if r.get("id") is None and "id" in r:
                    r["id"] = table["next_id"]
                if isinstance(r.get("id"), int):
                    table["next_id"] = max(table["next_id"], r["id"] + 1)
                table["rows"].append(r)
            self.connection.affected_rows = len(values.expressions)
            return [], []
        if isinstance(expression, (exp.Update, exp.Delete)):
            table = self.table(expression.this)
            where = expression.args.get("where")
            kept, hit = [], 0
            for r in table["rows"]:
                match = True
                if where is not None:
                    probe = exp.select(exp.Literal.number(1)).from_("t").where(where.this.copy())
                    match = bool(execute(probe, tables={"t": [r]}).rows)
                if not match:
                    kept.append(r)
                    continue
                hit += 1
                if isinstance(expression, exp.Update):
                    for eq in expression.expressions:
                        r[eq.this.name] = execute(
                            exp.select(eq.expression.copy().as_("v")).from_("t"), tables={"t": [r]}
                        ).rows[0][0]
                    kept.append(r)
            table["rows"] = kept
            return [], []
        if isinstance(expression, (exp.Select, exp.Union)):
            tables, schema = {}, {}
            for t in list(expression.find_all(exp.Table)):
                table = self.table(t)
                tables[t.name] = table["rows"]
                schema[t.name] = {c: "TEXT" for c, _ in table["columns"]}
                t.replace(exp.to_table(t.name).as_(t.alias) if t.alias else exp.to_table(t.name))
            result = execute(expression, schema=schema, tables=tables)
            return result.rows, result.columns
        raise MysqlError(f"not supported here: {sql[:60]}", code=ErrorCode.NOT_SUPPORTED_YET)


class Accounts(IdentityProvider):
    def __init__(self, users):
        self.users = users

    def get_plugins(self):
        return [NativePasswordAuthPlugin()]

    async def get_user(self, username):
        if username not in self.users:
            return None
        pw = self.users[username]
        return User(
            name=username,
            auth_string=NativePasswordAuthPlugin.create_auth_string(pw) if pw else None,
            auth_plugin=NativePasswordAuthPlugin.name,
        )


async def main():
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--socket", default="")
    p.add_argument("--user", action="append", default=[])
    a = p.parse_args()
    users = {"root": ""}
    for u in a.user:
        name, _, pw = u.partition(":")
        users[name] = pw
    DATA["sbtest"] = {}
    server = MysqlServer(session_factory=Store, identity_provider=Accounts(users))
    await server.start_server(host="127.0.0.1", port=a.port)
    port = server._server.sockets[0].getsockname()[1]
    if a.socket:
        unix = MysqlServer(session_factory=Store, identity_provider=Accounts(users))
        await unix.start_unix_server(path=a.socket)
    print(f"ready tcp={port} socket={a.socket}", flush=True)
    await server.serve_forever()


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        sys.exit(0)
