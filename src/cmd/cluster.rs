//! `sizeup cluster start|stop|status`: the managed Galera or primary + replica cluster.

use super::Context;
use crate::cli::ClusterCommand;
use crate::server::cluster::Cluster;
use crate::{report, request, Error};

pub fn run(cx: &Context, cmd: ClusterCommand) -> Result<i32, Error> {
    let home = cx.manager.home();
    match cmd {
        ClusterCommand::Start(a) => {
            let spec = request::cluster_spec(&a).map_err(Error::from)?;
            let started = std::time::Instant::now();
            let cluster = Cluster::start(home, &spec)?;
            crate::out!("{}", report::cluster_table(&cluster, &cluster.status()));
            crate::outln!(
                "{} cluster of {} node(s) ready in {:.1} s",
                cluster.kind.name(),
                spec.nodes,
                started.elapsed().as_secs_f64()
            );
            Ok(0)
        }
        ClusterCommand::Stop(a) => {
            let lines = Cluster::stop(home, a.purge)?;
            if lines.is_empty() {
                crate::outln!("no managed cluster to stop");
            }
            for l in lines {
                crate::outln!("{l}");
            }
            Ok(0)
        }
        ClusterCommand::Status { json } => {
            let Some(cluster) = Cluster::load(home)? else {
                if json {
                    crate::outln!("null");
                } else {
                    crate::outln!("no managed cluster (start one with `sizeup cluster start --galera --nodes 3` or `--replicas 2`)");
                }
                return Ok(0);
            };
            let status = cluster.status();
            if json {
                let doc = serde_json::json!({
                    "kind": cluster.kind,
                    "name": cluster.name,
                    "size": cluster.nodes.len(),
                    "ready": status.iter().filter(|s| s.readiness.ready()).count(),
                    "label": cluster.label(),
                    "lab": cluster.lab,
                    "settings": cluster.settings,
                    "nodes": status,
                });
                crate::outln!("{}", serde_json::to_string_pretty(&doc).expect("serialisable"));
            } else {
                crate::out!("{}", report::cluster_table(&cluster, &status));
            }
            Ok(0)
        }
    }
}
