//! The least client CPU one statement's round trip costs on this box: a client that does
//! nothing but send prepared statements (COM_STMT_EXECUTE, as sysbench sends them) and
//! wait for each answer, one thread per connection as sysbench runs. No workload logic,
//! no result decoding beyond finding the answer's end, no statistics. Whatever it spends
//! is the kernel's price of the round trips (the send, waking the server, sleeping, being
//! woken, the receive), which every client pays.
//!
//! `--workload point_select` (the default) sends oltp_point_select's statement;
//! `read_write` sends oltp_read_write's transaction with sysbench's default options:
//! BEGIN, 10 point selects, the four range selects of 100 rows, the two updates, a delete
//! and the insert of the same row, COMMIT (a refused statement, such as a deadlock,
//! starts the transaction again). Fixed strings stand in for sysbench's random ones.
//!
//! It waits four ways, a quarter of the time each, and prints each one's transactions per
//! second and client CPU per transaction (user + system of the whole process, getrusage)
//! as a JSON line: `blocking` (blocking recv), `poll` (recv, EAGAIN, poll, recv:
//! libmariadb's way), `epoll` (edge-triggered epoll, tokio's way) and `uring` (send and
//! receive linked in one io_uring_enter). bench/vs_sysbench.py takes the least client
//! CPU and the most transactions among them (each may come from a different way), then
//! reports the arrangement of threads closest to meeting both of its targets.
//!
//! With `--per-thread K` (K > 1) each thread drives K of the connections instead, waiting
//! in one epoll for whichever answers first (`shared`): the floor of a client that shares
//! its threads, as sizeup does from 4 connections on this box.
//!
//! usage: round_trip_floor (--socket PATH | --host H --port P) --threads N --time S
//!        [--tables 8] [--table-size 250000] [--mode blocking|poll|epoll|uring]
//!        [--per-thread K] [--workload point_select|read_write]
//!        (user root, no password, database sbtest; --mode: that way only, the whole time;
//!        --threads is the number of connections)
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, RawFd};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

const MODES: [&str; 4] = ["blocking", "poll", "epoll", "uring"];

/// Room for the largest answer: a range select's 100 rows of `c` (about 13 kB).
const ANSWER_MAX: usize = 64 * 1024;

struct Args {
    socket: Option<String>,
    host: String,
    port: u16,
    threads: usize,
    time: f64,
    tables: u32,
    table_size: u64,
    /// Only this way of waiting, for the whole time (to set its rate beside a tool's).
    mode: Option<String>,
    /// Connections each thread drives (more than 1: the `shared` way of waiting only).
    per_thread: usize,
    /// oltp_read_write's transaction rather than the point select alone.
    read_write: bool,
}

fn args() -> Args {
    let mut a = Args {
        socket: None,
        host: "127.0.0.1".into(),
        port: 3306,
        threads: 1,
        time: 8.0,
        tables: 8,
        table_size: 250_000,
        mode: None,
        per_thread: 1,
        read_write: false,
    };
    let v: Vec<String> = std::env::args().skip(1).collect();
    for pair in v.chunks(2) {
        let [k, val] = pair else { panic!("options take a value: {pair:?}") };
        let val = val.clone();
        match k.as_str() {
            "--socket" => a.socket = Some(val),
            "--host" => a.host = val,
            "--port" => a.port = val.parse().expect("--port"),
            "--threads" => a.threads = val.parse().expect("--threads"),
            "--time" => a.time = val.parse().expect("--time"),
            "--tables" => a.tables = val.parse().expect("--tables"),
            "--table-size" => a.table_size = val.parse().expect("--table-size"),
            "--mode" if MODES.contains(&val.as_str()) => a.mode = Some(val),
            "--per-thread" => a.per_thread = val.parse().expect("--per-thread"),
            "--workload" if val == "point_select" || val == "read_write" => a.read_write = val == "read_write",
            _ => panic!("unknown option {k}"),
        }
    }
    a
}

/// A blocking socket of either kind, read and written through its descriptor.
enum Sock {
    Unix(std::os::unix::net::UnixStream),
    Tcp(std::net::TcpStream),
}

impl Sock {
    fn connect(a: &Args) -> Sock {
        match &a.socket {
            Some(p) => Sock::Unix(std::os::unix::net::UnixStream::connect(p).expect("connect")),
            None => {
                let s = std::net::TcpStream::connect((a.host.as_str(), a.port)).expect("connect");
                s.set_nodelay(true).unwrap();
                Sock::Tcp(s)
            }
        }
    }
    fn fd(&self) -> RawFd {
        match self {
            Sock::Unix(s) => s.as_raw_fd(),
            Sock::Tcp(s) => s.as_raw_fd(),
        }
    }
    fn set_nonblocking(&self, on: bool) {
        match self {
            Sock::Unix(s) => s.set_nonblocking(on).unwrap(),
            Sock::Tcp(s) => s.set_nonblocking(on).unwrap(),
        }
    }
    fn read_packet(&mut self) -> (u8, Vec<u8>) {
        let mut h = [0u8; 4];
        self.read_exact(&mut h);
        let len = h[0] as usize | (h[1] as usize) << 8 | (h[2] as usize) << 16;
        let mut p = vec![0; len];
        self.read_exact(&mut p);
        (h[3], p)
    }
    fn read_exact(&mut self, b: &mut [u8]) {
        match self {
            Sock::Unix(s) => s.read_exact(b).expect("read"),
            Sock::Tcp(s) => s.read_exact(b).expect("read"),
        }
    }
    fn write_packet(&mut self, seq: u8, p: &[u8]) {
        let mut b = vec![p.len() as u8, (p.len() >> 8) as u8, (p.len() >> 16) as u8, seq];
        b.extend_from_slice(p);
        match self {
            Sock::Unix(s) => s.write_all(&b).expect("write"),
            Sock::Tcp(s) => s.write_all(&b).expect("write"),
        }
    }
}

/// oltp_read_write's statements in the order of `Script::command`'s kinds; the first alone
/// is oltp_point_select.
const STATEMENTS: [&str; 9] = [
    "SELECT c FROM sbtest{t} WHERE id=?",
    "SELECT c FROM sbtest{t} WHERE id BETWEEN ? AND ?",
    "SELECT SUM(k) FROM sbtest{t} WHERE id BETWEEN ? AND ?",
    "SELECT c FROM sbtest{t} WHERE id BETWEEN ? AND ? ORDER BY c",
    "SELECT DISTINCT c FROM sbtest{t} WHERE id BETWEEN ? AND ? ORDER BY c",
    "UPDATE sbtest{t} SET k=k+1 WHERE id=?",
    "UPDATE sbtest{t} SET c=? WHERE id=?",
    "DELETE FROM sbtest{t} WHERE id=?",
    "INSERT INTO sbtest{t} (id, k, c, pad) VALUES (?, ?, ?, ?)",
];

/// Logs in as root with no password and prepares the workload's statements on each
/// table: the returned ids are per table, per kind.
fn session(a: &Args) -> (Sock, Vec<Vec<u32>>) {
    let mut s = Sock::connect(a);
    let (seq, _greeting) = s.read_packet();
    // PROTOCOL_41 | SECURE_CONNECTION | PLUGIN_AUTH | CONNECT_WITH_DB | TRANSACTIONS
    let caps: u32 = 512 | 32768 | (1 << 19) | 8 | 8192;
    let mut r = Vec::new();
    r.extend_from_slice(&caps.to_le_bytes());
    r.extend_from_slice(&(1u32 << 24).to_le_bytes());
    r.push(45);
    r.extend_from_slice(&[0; 23]);
    r.extend_from_slice(b"root\0\0sbtest\0mysql_native_password\0");
    s.write_packet(seq.wrapping_add(1), &r);
    let (_, ok) = s.read_packet();
    assert_eq!(ok[0], 0, "login as root without a password failed: {}", String::from_utf8_lossy(&ok));
    let kinds = if a.read_write { STATEMENTS.len() } else { 1 };
    let mut ids = Vec::new();
    for t in 1..=a.tables {
        let mut table = Vec::new();
        for sql in &STATEMENTS[..kinds] {
            let sql = format!("\x16{}", sql.replace("{t}", &t.to_string()));
            s.write_packet(0, sql.as_bytes());
            let (_, p) = s.read_packet();
            assert_eq!(p[0], 0, "prepare failed: {}", String::from_utf8_lossy(&p));
            table.push(u32::from_le_bytes([p[1], p[2], p[3], p[4]]));
            let (columns, params) = (u16::from_le_bytes([p[5], p[6]]), u16::from_le_bytes([p[7], p[8]]));
            // Parameter and column definitions, each group closed by an EOF packet.
            for n in [params, columns] {
                if n > 0 {
                    for _ in 0..=n {
                        s.read_packet();
                    }
                }
            }
        }
        ids.push(table);
    }
    (s, ids)
}

/// True when `buf` holds a whole answer: an OK or error packet, or a binary result set
/// (its two EOF packets; its rows start with 0x00 too, so only the first packet can be OK).
fn complete(buf: &[u8]) -> bool {
    let (mut i, mut eofs) = (0, 0);
    while i + 4 <= buf.len() {
        let len = buf[i] as usize | (buf[i + 1] as usize) << 8 | (buf[i + 2] as usize) << 16;
        if i + 4 + len > buf.len() {
            return false;
        }
        match buf[i + 4] {
            0x00 if i == 0 => return true,
            0xff => return true,
            0xfe if len < 9 => {
                eofs += 1;
                if eofs == 2 {
                    return true;
                }
            }
            _ => {}
        }
        i += 4 + len;
    }
    false
}

/// True when a whole answer is an error packet.
fn refused(buf: &[u8]) -> bool {
    buf.len() > 4 && buf[4] == 0xff
}

fn process_cpu() -> f64 {
    // Safety: getrusage fills the struct it is given.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let t = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    t(ru.ru_utime) + t(ru.ru_stime)
}

/// A statement's parameter.
enum P<'a> {
    Int(u64),
    Str(&'a [u8]),
}

/// sysbench's `c` (120 characters) and `pad` (60); fixed, as generating them is workload
/// logic, not the round trip's price.
const C: &[u8; 119] = b"83868641912-28773972837-60736120486-75162659906-27563526494-20381887404-41576422241-93426793964-56405065102-33518432330";
const PAD: &[u8; 59] = b"67847967377-48000963322-62604785301-91415491898-96926520291";

/// What one connection sends, command by command.
struct Script<'a> {
    /// Prepared statement ids per table, per kind (`STATEMENTS`).
    stmts: &'a [Vec<u32>],
    read_write: bool,
    /// The next command's place in the read/write transaction (0: BEGIN ... 19: COMMIT).
    step: usize,
    /// The table and row the delete removed, which the insert puts back.
    deleted: (usize, u64),
    x: u64,
    table_size: u64,
}

impl<'a> Script<'a> {
    fn new(stmts: &'a [Vec<u32>], a: &Args, seed: u64) -> Self {
        Script { stmts, read_write: a.read_write, step: 0, deleted: (0, 1), x: seed | 1, table_size: a.table_size }
    }

    fn random(&mut self) -> u64 {
        self.x ^= self.x << 13;
        self.x ^= self.x >> 7;
        self.x ^= self.x << 17;
        self.x
    }

    /// A random table and a random row in it.
    fn pick(&mut self) -> (usize, u64) {
        let x = self.random();
        ((x % self.stmts.len() as u64) as usize, (x >> 8) % self.table_size + 1)
    }

    /// The next command, into `cmd`.
    fn command(&mut self, cmd: &mut Vec<u8>) {
        cmd.clear();
        cmd.extend_from_slice(&[0, 0, 0, 0]);
        if !self.read_write {
            let (t, id) = self.pick();
            execute(cmd, self.stmts[t][0], &[P::Int(id)]);
        } else {
            let (t, id) = self.pick();
            let to = (id + 99).min(self.table_size);
            match self.step {
                0 => cmd.extend_from_slice(b"\x03BEGIN"),
                1..=10 => execute(cmd, self.stmts[t][0], &[P::Int(id)]),
                11..=14 => execute(cmd, self.stmts[t][self.step - 10], &[P::Int(id), P::Int(to)]),
                15 => execute(cmd, self.stmts[t][5], &[P::Int(id)]),
                16 => execute(cmd, self.stmts[t][6], &[P::Str(C), P::Int(id)]),
                17 => {
                    self.deleted = (t, id);
                    execute(cmd, self.stmts[t][7], &[P::Int(id)]);
                }
                18 => {
                    let ((t, id), k) = (self.deleted, self.random() % self.table_size + 1);
                    execute(cmd, self.stmts[t][8], &[P::Int(id), P::Int(k), P::Str(C), P::Str(PAD)]);
                }
                _ => cmd.extend_from_slice(b"\x03COMMIT"),
            }
        }
        let len = cmd.len() - 4;
        cmd[..3].copy_from_slice(&(len as u32).to_le_bytes()[..3]);
    }

    /// After the command's answer: true when it ended a transaction. A refused statement
    /// (a deadlock) starts the read/write transaction again.
    fn answered(&mut self, refused: bool) -> bool {
        if !self.read_write {
            return true;
        }
        let ended = !refused && self.step == 19;
        self.step = if refused || ended { 0 } else { self.step + 1 };
        ended
    }
}

/// COM_STMT_EXECUTE: id, no cursor, 1 iteration, null bitmap, types, the values.
fn execute(cmd: &mut Vec<u8>, stmt: u32, params: &[P]) {
    cmd.push(0x17);
    cmd.extend_from_slice(&stmt.to_le_bytes());
    cmd.extend_from_slice(&[0, 1, 0, 0, 0]);
    cmd.extend(std::iter::repeat_n(0, params.len().div_ceil(8)));
    cmd.push(1);
    for p in params {
        // LONGLONG unsigned, or VAR_STRING.
        cmd.extend_from_slice(match p {
            P::Int(_) => &[8, 0x80],
            P::Str(_) => &[0xfd, 0],
        });
    }
    for p in params {
        match p {
            P::Int(v) => cmd.extend_from_slice(&v.to_le_bytes()),
            P::Str(s) => {
                cmd.push(s.len() as u8);
                cmd.extend_from_slice(s);
            }
        }
    }
}

/// Several connections' round trips from one thread until `until`, one command in flight
/// on each (as a closed-loop benchmark client), the least a thread-sharing client does:
/// wait in epoll for any answer, read it, send that connection's next command at once.
/// Returns the transactions.
fn drive_shared(conns: &[(Sock, Vec<Vec<u32>>)], scripts: &mut [Script], until: Instant) -> u64 {
    // Safety (all libc calls below): valid descriptors, buffers and lengths.
    let ep = unsafe { libc::epoll_create1(0) };
    let mut bufs = vec![vec![0u8; ANSWER_MAX]; conns.len()];
    let mut got = vec![0usize; conns.len()];
    let mut cmd = Vec::with_capacity(256);
    let send = |fd: RawFd, cmd: &[u8]| unsafe { libc::send(fd, cmd.as_ptr().cast(), cmd.len(), libc::MSG_NOSIGNAL) };
    for (i, ((s, _), script)) in conns.iter().zip(scripts.iter_mut()).enumerate() {
        s.set_nonblocking(true);
        let mut ev = libc::epoll_event { events: libc::EPOLLIN as u32, u64: i as u64 };
        unsafe { libc::epoll_ctl(ep, libc::EPOLL_CTL_ADD, s.fd(), &mut ev) };
        script.command(&mut cmd);
        send(s.fd(), &cmd);
    }
    let mut evs = vec![libc::epoll_event { events: 0, u64: 0 }; conns.len()];
    let mut n = 0;
    while Instant::now() < until {
        let ready = unsafe { libc::epoll_wait(ep, evs.as_mut_ptr(), evs.len() as i32, 1000) };
        for ev in &evs[..ready.max(0) as usize] {
            let i = ev.u64 as usize;
            let (s, script) = (&conns[i].0, &mut scripts[i]);
            let (buf, g) = (&mut bufs[i], &mut got[i]);
            let r = unsafe { libc::recv(s.fd(), buf[*g..].as_mut_ptr().cast(), buf.len() - *g, 0) };
            if r > 0 {
                *g += r as usize;
            }
            if complete(&buf[..*g]) {
                n += script.answered(refused(&buf[..*g])) as u64;
                *g = 0;
                script.command(&mut cmd);
                send(s.fd(), &cmd);
            }
        }
    }
    // Let the last answers arrive, so the connections are clean for the next run.
    for (i, (s, _)) in conns.iter().enumerate() {
        s.set_nonblocking(false);
        let (buf, g) = (&mut bufs[i], &mut got[i]);
        while !complete(&buf[..*g]) {
            let r = unsafe { libc::recv(s.fd(), buf[*g..].as_mut_ptr().cast(), buf.len() - *g, 0) };
            assert!(r > 0, "the server closed the connection");
            *g += r as usize;
        }
        scripts[i].answered(refused(&buf[..*g]));
    }
    unsafe { libc::close(ep) };
    n
}

/// One connection's round trips in `mode` until `until`; returns the transactions.
fn drive(s: &Sock, script: &mut Script, mode: &str, until: Instant) -> u64 {
    let fd = s.fd();
    s.set_nonblocking(mode != "blocking");
    let mut ring = io_uring::IoUring::new(4).expect("io_uring");
    // Safety (all libc calls below): valid descriptors, buffers and lengths.
    let ep = unsafe { libc::epoll_create1(0) };
    let mut ev = libc::epoll_event { events: (libc::EPOLLIN | libc::EPOLLET) as u32, u64: 1 };
    unsafe { libc::epoll_ctl(ep, libc::EPOLL_CTL_ADD, fd, &mut ev) };
    let mut buf = vec![0u8; ANSWER_MAX];
    let mut cmd = Vec::with_capacity(256);
    let mut n = 0;
    while Instant::now() < until {
        script.command(&mut cmd);
        let mut got = 0;
        let recv =
            |buf: &mut [u8], got: usize| unsafe { libc::recv(fd, buf[got..].as_mut_ptr().cast(), buf.len() - got, 0) };
        if mode == "uring" {
            let send = io_uring::opcode::Send::new(io_uring::types::Fd(fd), cmd.as_ptr(), cmd.len() as u32)
                .build()
                .flags(io_uring::squeue::Flags::IO_LINK)
                .user_data(1);
            let rd = io_uring::opcode::Recv::new(io_uring::types::Fd(fd), buf.as_mut_ptr(), buf.len() as u32)
                .build()
                .user_data(2);
            unsafe {
                ring.submission().push(&send).unwrap();
                ring.submission().push(&rd).unwrap();
            }
            ring.submit_and_wait(2).expect("io_uring_enter");
            for c in ring.completion() {
                if c.user_data() == 2 {
                    got = c.result().max(0) as usize;
                }
            }
        } else {
            unsafe { libc::send(fd, cmd.as_ptr().cast(), cmd.len(), libc::MSG_NOSIGNAL) };
        }
        while !complete(&buf[..got]) {
            match mode {
                "blocking" => {
                    let r = recv(&mut buf, got);
                    assert!(r > 0, "the server closed the connection");
                    got += r as usize;
                }
                // The rest of an answer the linked receive did not hold (non-blocking).
                "poll" | "uring" => {
                    let r = recv(&mut buf, got);
                    if r > 0 {
                        got += r as usize;
                    } else {
                        let mut p = libc::pollfd { fd, events: libc::POLLIN, revents: 0 };
                        unsafe { libc::poll(&mut p, 1, 1000) };
                    }
                }
                _ => {
                    let mut evs = [libc::epoll_event { events: 0, u64: 0 }; 4];
                    unsafe { libc::epoll_wait(ep, evs.as_mut_ptr(), 4, 1000) };
                    let r = recv(&mut buf, got);
                    if r > 0 {
                        got += r as usize;
                    }
                }
            }
        }
        n += script.answered(refused(&buf[..got])) as u64;
    }
    unsafe { libc::close(ep) };
    n
}

fn main() {
    let a = args();
    assert!(
        a.per_thread >= 1 && a.threads.is_multiple_of(a.per_thread),
        "--threads must be a multiple of --per-thread"
    );
    let sessions: Vec<_> = (0..a.threads).map(|_| session(&a)).collect();
    // Kept across the ways of waiting: a read/write transaction goes on where it was.
    let mut scripts: Vec<Script> =
        sessions.iter().enumerate().map(|(i, (_, ids))| Script::new(ids, &a, 0x9e37_79b9 * (i as u64 + 1))).collect();
    let modes: Vec<&str> = if a.per_thread > 1 {
        vec!["shared"]
    } else {
        MODES.into_iter().filter(|m| a.mode.as_deref().is_none_or(|only| only == *m)).collect()
    };
    let slice = Duration::from_secs_f64(a.time / modes.len() as f64);
    for mode in modes {
        let done = AtomicU64::new(0);
        let (c0, t0) = (process_cpu(), Instant::now());
        let until = t0 + slice;
        std::thread::scope(|sc| {
            for (group, scripts) in sessions.chunks(a.per_thread).zip(scripts.chunks_mut(a.per_thread)) {
                let done = &done;
                sc.spawn(move || {
                    let n = match (group, &mut *scripts) {
                        ([(s, _)], [script]) => drive(s, script, mode, until),
                        _ => drive_shared(group, scripts, until),
                    };
                    done.fetch_add(n, Ordering::Relaxed);
                });
            }
        });
        let (cpu, secs, n) = (process_cpu() - c0, t0.elapsed().as_secs_f64(), done.load(Ordering::Relaxed));
        println!(
            "{{\"mode\": \"{mode}\", \"per_thread\": {}, \"transactions\": {n}, \"per_s\": {:.1}, \"client_us\": {:.3}}}",
            a.per_thread,
            n as f64 / secs,
            cpu * 1e6 / n.max(1) as f64
        );
    }
}
