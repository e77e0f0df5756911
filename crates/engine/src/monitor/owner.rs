//! The process on this host that serves a socket or a loopback port: a server sizeup
//! did not start (go-mysql-server, Dolt, a MariaDB of another state directory) is
//! watched as the server when it listens here, instead of being counted among "other
//! processes" (a_server_on_this_host_is_watched_not_other_processes).
//!
//! The listening socket's inode comes from `/proc/net/unix` (by path) or
//! `/proc/net/tcp` and `tcp6` (by port, LISTEN state); the process is the one holding
//! that inode among its open files (`/proc/PID/fd/* -> socket:[INODE]`). The parsers
//! are pure and tested on captured lines; what cannot be read (another user's files
//! without root, another network namespace) finds nothing, never a wrong process.

use std::path::Path;

/// A server's process found by what it listens on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Owner {
    pub pid: i32,
    /// Its command name (`/proc/PID/comm`).
    pub name: String,
    /// What it was found by: "its socket /tmp/x.sock", "its loopback port 3306".
    pub by: String,
}

impl Owner {
    /// "pid 1234 (gms-server), found by its loopback port 39727".
    pub fn describe(&self) -> String {
        format!("pid {} ({}), found by {}", self.pid, self.name, self.by)
    }
}

/// Inodes of the listening unix sockets bound to `path` in `/proc/net/unix` text.
pub fn unix_inodes(text: &str, path: &str) -> Vec<u64> {
    text.lines()
        .skip(1)
        .filter_map(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            // Num RefCount Protocol Flags Type St Inode Path; flag 0x10000 = listening.
            let flags = u32::from_str_radix(f.get(3)?, 16).ok()?;
            (f.len() >= 8 && flags & 0x10000 != 0 && f[7..].join(" ") == path).then(|| f[6].parse().ok())?
        })
        .collect()
}

/// Inodes of the TCP sockets listening on `port` in `/proc/net/tcp` or `tcp6` text
/// (any local address: a loopback connection reaches a wildcard listener too).
pub fn tcp_inodes(text: &str, port: u16) -> Vec<u64> {
    text.lines()
        .skip(1)
        .filter_map(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            let (_, p) = f.get(1)?.rsplit_once(':')?;
            // st 0A: LISTEN.
            (u16::from_str_radix(p, 16).ok()? == port && *f.get(3)? == "0A").then(|| f.get(9)?.parse().ok())?
        })
        .collect()
}

/// The process holding one of `inodes` open, by scanning `/proc/*/fd`.
fn holder(inodes: &[u64]) -> Option<i32> {
    if inodes.is_empty() {
        return None;
    }
    let wanted: Vec<String> = inodes.iter().map(|i| format!("socket:[{i}]")).collect();
    let me = std::process::id() as i32;
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else { continue };
        if pid == me {
            continue;
        }
        let Ok(fds) = std::fs::read_dir(entry.path().join("fd")) else { continue };
        for fd in fds.flatten() {
            if let Ok(link) = std::fs::read_link(fd.path()) {
                if wanted.iter().any(|w| link.as_os_str() == w.as_str()) {
                    return Some(pid);
                }
            }
        }
    }
    None
}

fn owner(inodes: Vec<u64>, by: String) -> Option<Owner> {
    let pid = holder(&inodes)?;
    let name = std::fs::read_to_string(format!("/proc/{pid}/comm")).map(|s| s.trim().to_string()).unwrap_or_default();
    Some(Owner { pid, name, by })
}

/// The process serving `socket`, or else `host:port` when the host is this one's
/// loopback; None when it is elsewhere or cannot be found.
pub fn find(socket: Option<&Path>, host: &str, port: u16) -> Option<Owner> {
    if let Some(s) = socket {
        let text = std::fs::read_to_string("/proc/net/unix").ok()?;
        let mut inodes = unix_inodes(&text, &s.display().to_string());
        if let Ok(real) = std::fs::canonicalize(s) {
            inodes.extend(unix_inodes(&text, &real.display().to_string()));
        }
        return owner(inodes, format!("its socket {}", s.display()));
    }
    let loopback = matches!(host, "127.0.0.1" | "localhost" | "::1") || host.starts_with("127.");
    // An address of this host's own (a server bound to it for agents on other hosts):
    // only a local address can be bound to.
    let local = || {
        host.parse::<std::net::IpAddr>()
            .is_ok_and(|ip| !ip.is_unspecified() && std::net::UdpSocket::bind((ip, 0)).is_ok())
    };
    if !loopback && !local() {
        return None;
    }
    let mut inodes = Vec::new();
    for f in ["/proc/net/tcp", "/proc/net/tcp6"] {
        inodes.extend(tcp_inodes(&std::fs::read_to_string(f).unwrap_or_default(), port));
    }
    let what = match loopback {
        true => format!("its loopback port {port}"),
        false => format!("its port {port} on {host}, an address of this host"),
    };
    owner(inodes, what)
}

#[cfg(test)]
mod tests {
    use super::*;

    const UNIX: &str = "\
Num       RefCount Protocol Flags    Type St Inode Path
ffff8f0b0a1c6000: 00000002 00000000 00010000 0001 01 431122 /tmp/sizeup-gms-x/gms.sock
ffff8f0b0a1c6400: 00000003 00000000 00000000 0001 03 431130 /tmp/sizeup-gms-x/gms.sock
ffff8f0b0a1c6800: 00000002 00000000 00010000 0001 01 9912 /run/other.sock
ffff8f0b0a1c6c00: 00000002 00000000 00000000 0002 01 7001
";

    const TCP: &str = "\
  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:9B2F 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 555001 1 0000000000000000 100 0 0 10 0
   1: 0100007F:9B2F 0100007F:D2C4 01 00000000:00000000 00:00000000 00000000     0        0 555002 1 0000000000000000 20 4 30 10 -1
   2: 00000000:0CEA 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 555003 1 0000000000000000 100 0 0 10 0
";

    #[test]
    fn a_socket_is_found_by_its_listening_entry() {
        // The listener, not a connection to it (state 03) or another path.
        assert_eq!(unix_inodes(UNIX, "/tmp/sizeup-gms-x/gms.sock"), vec![431122]);
        assert_eq!(unix_inodes(UNIX, "/tmp/none.sock"), Vec::<u64>::new());
    }

    #[test]
    fn a_port_is_found_by_its_listening_entry() {
        // 0x9B2F = 39727: the LISTEN row, not the established connection.
        assert_eq!(tcp_inodes(TCP, 39727), vec![555001]);
        // 0x0CEA = 3306 on the wildcard address.
        assert_eq!(tcp_inodes(TCP, 3306), vec![555003]);
        assert_eq!(tcp_inodes(TCP, 3307), Vec::<u64>::new());
    }

    #[test]
    fn sizeups_own_sockets_and_other_hosts_are_no_server() {
        // A real loopback listener held by this process: `find` skips it (sizeup is
        // never its own server). A server found by its port: tests/suite/third_party.rs.
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        assert_eq!(find(None, "127.0.0.1", port), None, "sizeup's own sockets are not a server");
        assert_eq!(find(None, "10.1.2.3", port), None, "another host's server is not looked for here");
    }
}
