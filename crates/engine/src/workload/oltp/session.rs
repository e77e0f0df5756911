//! One worker's OLTP session: its prepared statements and random stream, and one
//! transaction of the plan per call (sysbench's `event()`). Random strings are written
//! into buffers the session keeps, and bound by reference: no allocation per statement.

use super::{Group, OltpOptions, Plan, Statement, Variant};
use crate::client::{Conn, Param};
use crate::random::{fill_template, sb_uniform, IdDistribution, UniqueIds, WorkerRng, C_TEMPLATE, PAD_TEMPLATE};
use crate::stats::QueryCounts;
use crate::workload::{Done, Failed, Session};
use std::sync::Arc;

/// sysbench 0.4's insert in complex mode: `INSERT INTO sbtest VALUES (id, 0, ' ', '...')`.
const LEGACY_PAD: &[u8] = b"aaaaaaaaaaffffffffffrrrrrrrrrreeeeeeeeeeyyyyyyyyyy";

pub struct OltpSession {
    options: Arc<OltpOptions>,
    plan: Arc<Plan>,
    ids: Arc<IdDistribution>,
    rng: WorkerRng,
    unique: UniqueIds,
    /// Prepared statements per table (index table - 1), per [`Statement`].
    prepared: Vec<[Option<crate::client::Statement>; Statement::COUNT]>,
    c: Vec<u8>,
    pad: Vec<u8>,
    sql: String,
}

impl OltpSession {
    pub fn new(options: Arc<OltpOptions>, plan: Arc<Plan>, ids: Arc<IdDistribution>, seed: u64) -> Self {
        let mut rng = crate::random::rng_from_seed(seed);
        let unique = UniqueIds::new(&mut rng);
        OltpSession {
            options,
            plan,
            ids,
            rng,
            unique,
            prepared: Vec::new(),
            c: Vec::with_capacity(C_TEMPLATE.len()),
            pad: Vec::with_capacity(PAD_TEMPLATE.len()),
            sql: String::new(),
        }
    }

    fn table(&mut self) -> u32 {
        sb_uniform(&mut self.rng, 1, self.options.tables)
    }

    fn id(&mut self) -> i64 {
        self.ids.next(&mut self.rng) as i64
    }

    /// Fresh c (and pad) values in the session's buffers.
    fn new_strings(&mut self, pad: bool) {
        self.c.clear();
        fill_template(&mut self.c, C_TEMPLATE, &mut self.rng);
        if pad {
            self.pad.clear();
            fill_template(&mut self.pad, PAD_TEMPLATE, &mut self.rng);
        }
    }

    async fn exec(
        &self,
        conn: &mut Conn,
        table: u32,
        stmt: Statement,
        params: &[Param<'_>],
        q: &mut QueryCounts,
    ) -> Result<(), Failed> {
        let failed = |error| Failed { ty: 0, statement: stmt.class(), error };
        let done = if self.options.text_protocol {
            let sql = crate::client::interpolate(&stmt.sql(table), params);
            conn.query_drop(&sql).await.map_err(failed)?
        } else {
            let prepared = self.prepared[table as usize - 1][stmt as usize]
                .as_ref()
                .expect("plan statements are prepared on connect");
            conn.exec_drop(prepared, params).await.map_err(failed)?
        };
        q.statement(done.columns, done.affected);
        Ok(())
    }

    async fn text(conn: &mut Conn, sql: &str, class: &'static str) -> Result<crate::client::Outcome, Failed> {
        conn.query_drop(sql).await.map_err(|error| Failed { ty: 0, statement: class, error })
    }

    async fn group(
        &mut self,
        conn: &mut Conn,
        group: Group,
        fixed_table: Option<u32>,
        q: &mut QueryCounts,
    ) -> Result<(), Failed> {
        let table = match fixed_table {
            Some(t) => t,
            None => self.table(),
        };
        let range = self.options.range_size.max(1) as i64;
        match group {
            Group::Single(stmt, n) => {
                for _ in 0..n {
                    let id = self.id();
                    match stmt {
                        Statement::SimpleRange
                        | Statement::SumRange
                        | Statement::OrderRange
                        | Statement::DistinctRange => {
                            self.exec(conn, table, stmt, &[Param::Int(id), Param::Int(id + range - 1)], q).await?
                        }
                        Statement::NonIndexUpdate => {
                            self.new_strings(false);
                            self.exec(conn, table, stmt, &[Param::Bytes(&self.c), Param::Int(id)], q).await?
                        }
                        _ => self.exec(conn, table, stmt, &[Param::Int(id)], q).await?,
                    }
                }
            }
            Group::DeleteInserts(n) => {
                for _ in 0..n {
                    let id = self.id();
                    self.exec(conn, table, Statement::Delete, &[Param::Int(id)], q).await?;
                    if self.plan.legacy_complex {
                        let row = [Param::Int(id), Param::Int(0), Param::Bytes(b" "), Param::Bytes(LEGACY_PAD)];
                        self.exec(conn, table, Statement::Insert, &row, q).await?;
                    } else {
                        let k = self.id();
                        self.new_strings(true);
                        let row = [Param::Int(id), Param::Int(k), Param::Bytes(&self.c), Param::Bytes(&self.pad)];
                        self.exec(conn, table, Statement::Insert, &row, q).await?;
                    }
                }
            }
            Group::TextInsert => {
                // oltp_insert.lua sends text, with id 0 (AUTO_INCREMENT) or a unique random id.
                let k = self.id();
                let id: i64 = if self.options.auto_inc { 0 } else { self.unique.next_id() as i64 - 2_147_483_648 };
                self.new_strings(true);
                let mut sql = std::mem::take(&mut self.sql);
                sql.clear();
                use std::fmt::Write;
                let _ = write!(
                    sql,
                    "INSERT INTO sbtest{table} (id, k, c, pad) VALUES ({id}, {k}, '{}', '{}')",
                    std::str::from_utf8(&self.c).expect("digits"),
                    std::str::from_utf8(&self.pad).expect("digits")
                );
                let r = Self::text(conn, &sql, "inserts").await;
                self.sql = sql;
                let done = r?;
                q.statement(done.columns, done.affected);
            }
        }
        Ok(())
    }
}

impl Session for OltpSession {
    async fn connected(&mut self, conn: &mut Conn) -> Result<(), Failed> {
        if self.options.text_protocol {
            return Ok(()); // --db-ps-mode disable: nothing to prepare
        }
        let statements = self.plan.statements();
        self.prepared = (0..self.options.tables).map(|_| Default::default()).collect();
        for table in 1..=self.options.tables {
            for &stmt in &statements {
                let p = conn.prepare(&stmt.sql(table)).await.map_err(|error| Failed {
                    ty: 0,
                    statement: stmt.class(),
                    error,
                })?;
                self.prepared[table as usize - 1][stmt as usize] = Some(p);
            }
        }
        Ok(())
    }

    async fn transaction(&mut self, conn: &mut Conn, q: &mut QueryCounts) -> Result<Done, Failed> {
        let plan = self.plan.clone();
        let fixed_table = plan.legacy_complex.then(|| self.table());
        if plan.explicit_trx {
            Self::text(conn, "BEGIN", "begin").await?;
            q.other += 1;
        }
        for &group in &plan.groups {
            self.group(conn, group, fixed_table, q).await?;
        }
        if plan.explicit_trx {
            Self::text(conn, "COMMIT", "commit").await?;
            q.other += 1;
        }
        Ok(Done { ty: 0, rolled_back: false })
    }
}
/// An OLTP workload ready to run: variant, options and the id distribution.
pub struct Oltp {
    pub variant: Variant,
    pub options: Arc<OltpOptions>,
    plan: Arc<Plan>,
    ids: Arc<IdDistribution>,
}

impl Oltp {
    pub fn new(variant: Variant, options: OltpOptions) -> Self {
        let plan = Arc::new(Plan::new(variant, &options));
        let ids = Arc::new(IdDistribution::new(&options.rand, options.table_size));
        Oltp { variant, options: Arc::new(options), plan, ids }
    }
}

/// Each user of an OLTP run gets a session of its own.
impl crate::workload::Sessions for Oltp {
    type Session = OltpSession;
    fn transaction_names(&self) -> Vec<String> {
        vec![self.variant.name().to_string()]
    }
    fn session(&self, _worker: u32, seed: u64) -> OltpSession {
        OltpSession::new(self.options.clone(), self.plan.clone(), self.ids.clone(), seed)
    }
}
