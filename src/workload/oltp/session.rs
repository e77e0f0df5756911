//! One worker's OLTP session: its prepared statements and random stream, and one
//! transaction of the plan per call (sysbench's `event()`).

use super::{Group, OltpOptions, Plan, Statement};
use crate::random::{
    fill_template, uniform, IdDistribution, UniqueIds, WorkerRng, C_TEMPLATE, PAD_TEMPLATE,
};
use crate::stats::QueryCounts;
use crate::workload::{Done, Failed, Session};
use mysql_async::prelude::Queryable;
use mysql_async::{Conn, Params, Value};
use std::sync::Arc;

/// sysbench 0.4's insert in complex mode: `INSERT INTO sbtest VALUES (id, 0, ' ', '...')`.
const LEGACY_PAD: &str = "aaaaaaaaaaffffffffffrrrrrrrrrreeeeeeeeeeyyyyyyyyyy";

pub struct OltpSession {
    options: Arc<OltpOptions>,
    plan: Arc<Plan>,
    ids: Arc<IdDistribution>,
    rng: WorkerRng,
    unique: UniqueIds,
    /// Prepared statements per table (index table - 1), per [`Statement`].
    prepared: Vec<[Option<mysql_async::Statement>; Statement::COUNT]>,
}

impl OltpSession {
    pub fn new(
        options: Arc<OltpOptions>,
        plan: Arc<Plan>,
        ids: Arc<IdDistribution>,
        seed: u64,
    ) -> Self {
        let mut rng = crate::random::rng_from_seed(seed);
        let unique = UniqueIds::new(&mut rng);
        OltpSession {
            options,
            plan,
            ids,
            rng,
            unique,
            prepared: Vec::new(),
        }
    }

    fn table(&mut self) -> u32 {
        uniform(&mut self.rng, 1, self.options.tables)
    }

    fn random_string(&mut self, template: &str) -> Vec<u8> {
        let mut v = Vec::with_capacity(template.len());
        fill_template(&mut v, template, &mut self.rng);
        v
    }

    async fn exec(
        &self,
        conn: &mut Conn,
        table: u32,
        stmt: Statement,
        params: Vec<Value>,
        queries: &mut QueryCounts,
    ) -> Result<(), Failed> {
        let prepared = self.prepared[table as usize - 1][stmt as usize]
            .as_ref()
            .expect("plan statements are prepared on connect");
        conn.exec_drop(prepared, Params::Positional(params))
            .await
            .map_err(|error| Failed {
                ty: 0,
                statement: stmt.class(),
                error,
            })?;
        if stmt.is_read() {
            queries.reads += 1;
        } else {
            queries.writes += 1;
        }
        Ok(())
    }

    async fn text(&self, conn: &mut Conn, sql: &str, class: &'static str) -> Result<(), Failed> {
        conn.query_drop(sql).await.map_err(|error| Failed {
            ty: 0,
            statement: class,
            error,
        })
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
                    let id = self.ids.next(&mut self.rng) as i64;
                    let params = match stmt {
                        Statement::SimpleRange
                        | Statement::SumRange
                        | Statement::OrderRange
                        | Statement::DistinctRange => {
                            vec![Value::Int(id), Value::Int(id + range - 1)]
                        }
                        Statement::NonIndexUpdate => {
                            vec![Value::Bytes(self.random_string(C_TEMPLATE)), Value::Int(id)]
                        }
                        _ => vec![Value::Int(id)],
                    };
                    self.exec(conn, table, stmt, params, q).await?;
                }
            }
            Group::DeleteInserts(n) => {
                for _ in 0..n {
                    let id = self.ids.next(&mut self.rng) as i64;
                    let insert = if self.plan.legacy_complex {
                        vec![
                            Value::Int(id),
                            Value::Int(0),
                            Value::Bytes(b" ".to_vec()),
                            Value::Bytes(LEGACY_PAD.into()),
                        ]
                    } else {
                        let k = self.ids.next(&mut self.rng) as i64;
                        vec![
                            Value::Int(id),
                            Value::Int(k),
                            Value::Bytes(self.random_string(C_TEMPLATE)),
                            Value::Bytes(self.random_string(PAD_TEMPLATE)),
                        ]
                    };
                    self.exec(conn, table, Statement::Delete, vec![Value::Int(id)], q)
                        .await?;
                    self.exec(conn, table, Statement::Insert, insert, q).await?;
                }
            }
            Group::TextInsert => {
                // oltp_insert.lua sends text, with id 0 (AUTO_INCREMENT) or a unique random id.
                let k = self.ids.next(&mut self.rng);
                let id: i64 = if self.options.auto_inc {
                    0
                } else {
                    self.unique.next_id() as i64 - 2_147_483_648
                };
                let c = self.random_string(C_TEMPLATE);
                let pad = self.random_string(PAD_TEMPLATE);
                let sql = format!(
                    "INSERT INTO sbtest{table} (id, k, c, pad) VALUES ({id}, {k}, '{}', '{}')",
                    std::str::from_utf8(&c).expect("digits"),
                    std::str::from_utf8(&pad).expect("digits")
                );
                self.text(conn, &sql, "inserts").await?;
                q.writes += 1;
            }
        }
        Ok(())
    }
}

impl Session for OltpSession {
    async fn connected(&mut self, conn: &mut Conn) -> Result<(), Failed> {
        let statements = self.plan.statements();
        self.prepared = (0..self.options.tables)
            .map(|_| Default::default())
            .collect();
        for table in 1..=self.options.tables {
            for &stmt in &statements {
                let p = conn.prep(stmt.sql(table)).await.map_err(|error| Failed {
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
            self.text(conn, "BEGIN", "begin").await?;
            q.other += 1;
        }
        for &group in &plan.groups {
            self.group(conn, group, fixed_table, q).await?;
        }
        if plan.explicit_trx {
            self.text(conn, "COMMIT", "commit").await?;
            q.other += 1;
        }
        Ok(Done {
            ty: 0,
            rolled_back: false,
        })
    }
}
