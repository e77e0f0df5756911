//! One transaction in progress: the statements it sends (prepared once per connection,
//! as text when the server has no room for more), counted as reads, writes or other.

use crate::client::{Conn, Error, Outcome, Param, RowSink, Statement, Value};
use crate::stats::QueryCounts;
use crate::workload::Failed;
use std::collections::HashMap;

/// Server-side statements of one connection, prepared on first use. When the server's
/// `max_prepared_stmt_count` is used up (thousands of users), statements go as text.
#[derive(Default)]
pub(super) struct Prepared {
    map: HashMap<(usize, usize), Option<Statement>>,
}

/// ER_MAX_PREPARED_STMT_COUNT_REACHED.
const TOO_MANY_STATEMENTS: u16 = 1461;

/// One transaction in progress: the connection, what it has sent, and its type.
pub(crate) struct Tx<'a> {
    pub(super) conn: &'a mut Conn,
    pub(super) prepared: &'a mut Prepared,
    pub(super) q: &'a mut QueryCounts,
    pub(super) ty: usize,
}

/// What a statement does, for the reads/writes/other counts.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Read,
    Write,
}

impl Tx<'_> {
    pub(super) fn failed(&self, statement: &'static str) -> impl FnOnce(Error) -> Failed {
        let ty = self.ty;
        move |error| Failed { ty, statement, error }
    }

    fn count(&mut self, kind: Kind) {
        match kind {
            Kind::Read => self.q.reads += 1,
            Kind::Write => self.q.writes += 1,
        }
    }

    /// Runs a constant statement with parameters, handing each row to `row` (or
    /// skipping rows when it is `None`).
    pub(super) async fn run(
        &mut self,
        label: &'static str,
        sql: &'static str,
        kind: Kind,
        params: &[Param<'_>],
        row: Option<RowSink<'_>>,
    ) -> Result<Outcome, Failed> {
        self.count(kind);
        let key = (sql.as_ptr() as usize, sql.len());
        if !self.prepared.map.contains_key(&key) {
            let stmt = match self.conn.prepare(sql).await {
                Ok(s) => Some(s),
                Err(Error::Server { code: TOO_MANY_STATEMENTS, .. }) => None,
                Err(e) => return Err(self.failed(label)(e)),
            };
            self.prepared.map.insert(key, stmt);
        }
        let fail = self.failed(label);
        match &self.prepared.map[&key] {
            Some(stmt) => match row {
                Some(row) => self.conn.exec_rows(stmt, params, row).await.map_err(fail),
                None => self.conn.exec_drop(stmt, params).await.map_err(fail),
            },
            None => {
                let text = crate::client::interpolate(sql, params);
                match row {
                    Some(row) => self.conn.query_rows(&text, row).await.map_err(fail),
                    None => self.conn.query_drop(&text).await.map_err(fail),
                }
            }
        }
    }

    pub(super) async fn exec(
        &mut self,
        label: &'static str,
        sql: &'static str,
        params: &[Param<'_>],
    ) -> Result<Outcome, Failed> {
        self.run(label, sql, Kind::Write, params, None).await
    }

    /// A read whose first row is wanted.
    pub(super) async fn first(
        &mut self,
        label: &'static str,
        sql: &'static str,
        params: &[Param<'_>],
    ) -> Result<Option<Vec<Value>>, Failed> {
        let mut first = None;
        self.run(
            label,
            sql,
            Kind::Read,
            params,
            Some(&mut |r: &[Value]| {
                if first.is_none() {
                    first = Some(r.to_vec());
                }
            }),
        )
        .await?;
        Ok(first)
    }

    /// A read whose rows are skipped (the spec's output screens are not displayed).
    pub(super) async fn read(
        &mut self,
        label: &'static str,
        sql: &'static str,
        params: &[Param<'_>],
    ) -> Result<Outcome, Failed> {
        self.run(label, sql, Kind::Read, params, None).await
    }

    /// A statement built as text, rows handed to `row`.
    pub(super) async fn text(
        &mut self,
        label: &'static str,
        sql: &str,
        kind: Kind,
        row: Option<RowSink<'_>>,
    ) -> Result<Outcome, Failed> {
        self.count(kind);
        let fail = self.failed(label);
        match row {
            Some(row) => self.conn.query_rows(sql, row).await.map_err(fail),
            None => self.conn.query_drop(sql).await.map_err(fail),
        }
    }

    pub(super) async fn commit(&mut self) -> Result<(), Failed> {
        self.q.other += 1;
        self.conn.query_drop("COMMIT").await.map(|_| ()).map_err(self.failed("commit"))
    }

    pub(super) async fn rollback(&mut self) -> Result<(), Failed> {
        self.q.other += 1;
        self.conn.query_drop("ROLLBACK").await.map(|_| ()).map_err(self.failed("rollback"))
    }
}

/// A decoded column as an integer (0 when NULL or not a number).
pub(super) fn int(row: &[Value], i: usize) -> i64 {
    row.get(i).and_then(Value::as_i64).unwrap_or(0)
}

pub(super) fn float(row: &[Value], i: usize) -> f64 {
    row.get(i).and_then(Value::as_f64).unwrap_or(0.0)
}
