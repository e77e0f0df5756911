//! `sizeup agent`: this host drives load for a coordinator elsewhere.

use crate::agent::serve;
use crate::cli::AgentArgs;
use crate::Error;

pub fn agent(a: &AgentArgs) -> Result<i32, Error> {
    if a.stdio {
        serve::stdio(a.remove_self).map_err(Error::Failed)?;
        return Ok(0);
    }
    let o = serve::ListenOptions {
        addr: a.listen.clone().unwrap_or_default(),
        token: a.token.clone(),
        tls_cert: a.tls_cert.clone(),
        tls_key: a.tls_key.clone(),
        client_ca: a.client_ca.clone(),
        once: a.once,
    };
    // Serves until the process is stopped (Ctrl-C, SIGTERM).
    serve::listen(&o, &|addr, how| {
        eprintln!("sizeup agent listening on {addr} ({how})");
    })
    .map_err(Error::Usage)?;
    Ok(0)
}
