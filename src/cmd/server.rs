//! `sizeup server start|stop|status`: managed private instances.

use super::Context;
use crate::cli::ServerCommand;
use crate::{report, request, Error};

pub fn run(cx: &Context, cmd: ServerCommand) -> Result<i32, Error> {
    let manager = &cx.manager;
    match cmd {
        ServerCommand::Start(a) => {
            if a.instances == 0 || a.instances > crate::server::MAX_INSTANCES {
                return Err(Error::Usage(format!(
                    "--instances must be from 1 to {} (got {})",
                    crate::server::MAX_INSTANCES,
                    a.instances
                )));
            }
            if let Some(p) = a.base_port {
                crate::server::check_ports(p, a.instances).map_err(Error::Usage)?;
            }
            let settings = request::server_settings(&a.server).map_err(Error::from)?;
            let status = manager.start_by_user(a.instances, &settings, a.base_port, a.datadir_root.as_deref())?;
            crate::out!("{}", report::server_table(&status));
            Ok(0)
        }
        ServerCommand::Stop(a) => {
            // A study loading them would fail "server lost", never told why.
            if let Some(holder) = manager.measured_by("managed") {
                return Err(Error::Usage(format!(
                    "a study is measuring the managed instances ({holder}): stopping them now would end it as a \
                     lost server. Wait for it to end, or interrupt it first (`sizeup study resume` continues it)"
                )));
            }
            let stopped = manager.stop(a.instance, a.purge)?;
            if stopped.is_empty() {
                crate::outln!("no managed instances to stop");
            }
            for s in stopped {
                crate::outln!("instance {} stopped{}", s.index, if a.purge { " and removed" } else { "" });
            }
            Ok(0)
        }
        ServerCommand::Status { json } => {
            let status = manager.status()?;
            if json {
                crate::outln!("{}", serde_json::to_string_pretty(&status).expect("serialisable"));
            } else {
                crate::out!("{}", report::server_table(&status));
            }
            let crashed: Vec<String> = status
                .iter()
                .filter(|s| s.state == crate::server::State::Crashed)
                .map(|s| s.index.to_string())
                .collect();
            if !crashed.is_empty() {
                eprintln!(
                    "instance(s) {} crashed or were killed: `sizeup server start --instances N` restarts them \
                     (InnoDB recovers the data; measurements right after start on a cold buffer pool)",
                    crashed.join(", ")
                );
            }
            Ok(0)
        }
    }
}
