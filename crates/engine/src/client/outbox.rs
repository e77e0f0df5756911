//! Commands held back while a client thread still has other connections to serve, then
//! written together in one system call through io_uring.
//!
//! Why: every command wakes a server thread, and on a small box the woken thread often
//! preempts the client at the end of the `send` that woke it. One `io_uring_enter` for
//! all the commands a thread has ready costs one syscall exit, and so at most one such
//! preemption, instead of one per command (oltp_point_select: ~12 % less client CPU per
//! query, docs/PERFORMANCE.md).
//!
//! Holding is on only while `batched` polls its future, so a thread flushes before it
//! sleeps and nothing waits on a held command. The first command of each poll is not
//! held but written at once: while the client works through the rest of the answers
//! that woke it, that statement keeps a server CPU busy that would otherwise idle
//! (point select over a unix socket, 8 connections: host idle 5.7 % to 3.6-4.2 %, +2-4 %
//! tps, same client CPU per query; over TCP loopback neither a gain nor a loss;
//! docs/PERFORMANCE.md, session 19). Where io_uring is unavailable (old
//! kernels, seccomp, `kernel.io_uring_disabled`, or `SIZEUP_IO_URING=off`) commands are
//! written straight away, as before.
use std::cell::{Cell, RefCell};
use std::future::Future;
use std::os::fd::RawFd;

/// Larger commands are written directly (after whatever is held, to keep the order).
const HOLD_MAX: usize = 16 * 1024;
/// At most this many submission queue entries: more held commands go in several rounds.
const RING_ENTRIES_MAX: usize = 256;

struct Outbox {
    ring: Option<io_uring::IoUring>,
    /// The held commands' bytes, back to back, and each one's socket and range.
    bytes: Vec<u8>,
    held: Vec<(RawFd, usize, usize)>,
    /// The sockets in `held`: a second command for one of them flushes the first, as
    /// the ring does not keep two sends to one socket in order. FxHash, as SipHash
    /// cost about 140 instructions a point select (callgrind, session 23).
    fds: rustc_hash::FxHashSet<RawFd>,
    /// Bytes the ring sent of each held command (`usize::MAX`: failed, leave it).
    sent: Vec<usize>,
}

/// What `hold` does with the next command on this thread.
#[derive(Clone, Copy, PartialEq)]
enum Holding {
    /// Outside `batched`: written by the caller.
    Off,
    /// The first command of a poll: written by the caller, and later ones held.
    First,
    On,
}

thread_local! {
    static HOLDING: Cell<Holding> = const { Cell::new(Holding::Off) };
    static OUTBOX: RefCell<Option<Outbox>> = const { RefCell::new(None) };
}

/// Whether this process may use io_uring for commands (`SIZEUP_IO_URING=off` says no).
fn allowed() -> bool {
    !std::env::var("SIZEUP_IO_URING").is_ok_and(|v| matches!(v.as_str(), "off" | "0" | "no" | "false"))
}

/// How this host's client threads will write commands, for the run's recorded config.
pub fn how() -> &'static str {
    if !allowed() {
        "one write per command (SIZEUP_IO_URING=off)"
    } else if io_uring::IoUring::new(2).is_ok() {
        "io_uring, batched per client thread"
    } else {
        "one write per command (io_uring unavailable)"
    }
}

/// Polls `fut` with commands held during each poll and written together after it.
/// Without io_uring this is `fut` itself.
/// `connections`: how many this thread serves, which sizes its ring.
pub async fn batched<F: Future>(connections: usize, fut: F) -> F::Output {
    let usable = OUTBOX.with(|o| {
        let mut o = o.borrow_mut();
        if o.is_none() && allowed() {
            let entries = connections.clamp(2, RING_ENTRIES_MAX).next_power_of_two() as u32;
            if let Ok(ring) = io_uring::IoUring::new(entries) {
                *o = Some(Outbox {
                    ring: Some(ring),
                    bytes: Vec::with_capacity(4096),
                    held: Vec::new(),
                    fds: Default::default(),
                    sent: Vec::new(),
                });
            }
        }
        o.as_ref().is_some_and(|o| o.ring.is_some())
    });
    if !usable {
        return fut.await;
    }
    let mut fut = std::pin::pin!(fut);
    std::future::poll_fn(|cx| {
        HOLDING.with(|h| h.set(Holding::First));
        let r = fut.as_mut().poll(cx);
        HOLDING.with(|h| h.set(Holding::Off));
        flush();
        r
    })
    .await
}

/// Takes a copy of `bytes` to be sent on `fd` at the next flush. False when the caller
/// must write them itself (not holding now, the poll's first command, or too large);
/// anything held has then been flushed already, so the caller's write keeps its place in
/// line.
pub fn hold(fd: RawFd, bytes: &[u8]) -> bool {
    let holding = HOLDING.with(|h| match h.get() {
        Holding::Off => false,
        Holding::First => {
            h.set(Holding::On);
            false
        }
        Holding::On => bytes.len() <= HOLD_MAX,
    });
    OUTBOX.with(|o| {
        let mut o = o.borrow_mut();
        let Some(o) = o.as_mut() else { return false };
        if !holding || o.fds.contains(&fd) {
            o.flush();
        }
        if holding {
            let start = o.bytes.len();
            o.bytes.extend_from_slice(bytes);
            o.held.push((fd, start, bytes.len()));
            o.fds.insert(fd);
        }
        holding
    })
}

/// Drops what is held for `fd`: its connection is going away, and the number may be
/// reused by the next socket opened before the flush.
pub fn forget(fd: RawFd) {
    // `try_with`: a connection may be dropped while its thread is being torn down.
    let _ = OUTBOX.try_with(|o| {
        if let Some(o) = o.borrow_mut().as_mut() {
            if o.fds.remove(&fd) {
                o.held.retain(|&(f, _, _)| f != fd);
            }
        }
    });
}

/// Writes every held command of this thread.
pub fn flush() {
    OUTBOX.with(|o| {
        if let Some(o) = o.borrow_mut().as_mut() {
            o.flush();
        }
    });
}

impl Outbox {
    /// A failed send is not reported here: the peer is gone, and the read of that
    /// command's answer sees it and takes the lost-connection path.
    fn flush(&mut self) {
        if self.held.is_empty() {
            return;
        }
        self.sent.clear();
        self.sent.resize(self.held.len(), 0);
        // A lone command goes by a plain send: one system call either way, and on this
        // box io_uring's costs ~1 us more per command (docs/PERFORMANCE.md).
        let ring = self.ring.as_mut().filter(|_| self.held.len() > 1);
        if let Some(ring) = ring {
            if submit(ring, &self.bytes, &self.held, &mut self.sent).is_err() {
                // The ring failed as a whole (not one socket): stop using it on this thread.
                self.ring = None;
            }
        }
        // Whatever the ring did not send (a short send, or no ring) goes out directly.
        for (&(fd, start, len), &done) in self.held.iter().zip(&self.sent) {
            if done < len {
                write_direct(fd, &self.bytes[start + done..start + len]);
            }
        }
        self.held.clear();
        self.fds.clear();
        self.bytes.clear();
    }
}

fn submit(
    ring: &mut io_uring::IoUring,
    bytes: &[u8],
    held: &[(RawFd, usize, usize)],
    sent: &mut [usize],
) -> std::io::Result<()> {
    let per_round = ring.params().sq_entries() as usize;
    for (round, chunk) in held.chunks(per_round).enumerate() {
        {
            let mut sq = ring.submission();
            for (i, &(fd, start, len)) in chunk.iter().enumerate() {
                let e = io_uring::opcode::Send::new(io_uring::types::Fd(fd), bytes[start..].as_ptr(), len as u32)
                    .flags(libc::MSG_NOSIGNAL | libc::MSG_WAITALL)
                    .build()
                    .user_data((round * per_round + i) as u64);
                // Safety: the bytes stay put (not touched) until every entry has completed
                // below, and the queue has room: a round is at most its size, and it is empty here.
                unsafe { sq.push(&e) }.map_err(|_| std::io::Error::other("io_uring submission queue full"))?;
            }
        }
        let mut left = chunk.len();
        while left > 0 {
            match ring.submit_and_wait(left) {
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
            for cqe in ring.completion() {
                left -= 1;
                if cqe.result() > 0 {
                    sent[cqe.user_data() as usize] = cqe.result() as usize;
                } else {
                    // Failed: mark as sent, the read that follows reports the lost peer.
                    sent[cqe.user_data() as usize] = usize::MAX;
                }
            }
        }
    }
    Ok(())
}

/// A plain blocking-style send of a few bytes: used only when the ring is gone or sent
/// part of a command, which a request/answer protocol with an empty socket buffer
/// practically never does.
fn write_direct(fd: RawFd, mut bytes: &[u8]) {
    while !bytes.is_empty() {
        // Safety: a valid buffer and length; the socket is owned by a live connection.
        let n = unsafe { libc::send(fd, bytes.as_ptr().cast(), bytes.len(), libc::MSG_NOSIGNAL) };
        if n >= 0 {
            bytes = &bytes[n as usize..];
            continue;
        }
        match std::io::Error::last_os_error().kind() {
            std::io::ErrorKind::Interrupted => {}
            std::io::ErrorKind::WouldBlock => {
                let mut p = libc::pollfd { fd, events: libc::POLLOUT, revents: 0 };
                // Safety: one valid pollfd.
                unsafe { libc::poll(&mut p, 1, 1000) };
            }
            _ => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use std::os::fd::AsRawFd;
    use std::os::unix::net::UnixStream;

    fn pending(peer: &mut UnixStream) -> Vec<u8> {
        peer.set_nonblocking(true).unwrap();
        let mut buf = vec![0; 1 << 16];
        let mut got = Vec::new();
        loop {
            match peer.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => got.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                Err(e) => panic!("{e}"),
            }
        }
        got
    }

    /// What `Stream::write_all` does: hold, or write now. True when held.
    fn put(s: &UnixStream, bytes: &[u8]) -> bool {
        if hold(s.as_raw_fd(), bytes) {
            return true;
        }
        std::io::Write::write_all(&mut &*s, bytes).unwrap();
        false
    }

    fn ring_in_use() -> bool {
        OUTBOX.with(|o| o.borrow().as_ref().is_some_and(|o| o.ring.is_some()))
    }

    #[tokio::test(flavor = "current_thread")]
    async fn held_commands_go_out_after_the_poll_in_order() {
        let (first, mut pf) = UnixStream::pair().unwrap();
        let (a, mut pa) = UnixStream::pair().unwrap();
        let (b, mut pb) = UnixStream::pair().unwrap();
        let (c, mut pc) = UnixStream::pair().unwrap();
        let big = vec![7u8; HOLD_MAX + 1];
        // A ring of 2 entries: 3 held commands take two rounds.
        let (first_held, first_sent, held, before_flush, after_second, after_big) = batched(2, async {
            // The poll's first command is written at once, whatever follows.
            let first_held = put(&first, b"f1");
            let first_sent = pending(&mut pf);
            let held = [put(&a, b"a1"), put(&b, b"b1"), put(&c, b"c1")];
            let before_flush = (pending(&mut pa), pending(&mut pb), pending(&mut pc));
            // A second command for a socket: what is held goes first.
            let after_second = (put(&a, b"a2"), pending(&mut pa));
            // Too large to hold: what is held goes out first, then the caller's write.
            assert!(!put(&a, &big));
            let after_big = pending(&mut pa);
            put(&b, b"b2");
            (first_held, first_sent, held, before_flush, after_second, after_big)
        })
        .await;
        assert!(!first_held, "the first command of a poll is never held");
        assert_eq!(first_sent, b"f1", "the first command of a poll is on the wire before the poll ends");
        if ring_in_use() {
            assert_eq!(held, [true; 3], "with io_uring, small commands are held while polling");
            assert_eq!(before_flush, (vec![], vec![], vec![]), "nothing is written during the poll");
            assert_eq!(after_second, (true, b"a1".to_vec()), "a second command flushes the first");
        } else {
            eprintln!("io_uring unavailable here: only the direct path was tested");
            assert_eq!(held, [false; 3]);
        }
        let mut on_a = [before_flush.0, after_second.1, after_big].concat();
        while on_a.len() < 4 + big.len() {
            on_a.extend(pending(&mut pa));
        }
        assert_eq!(&on_a[..4], b"a1a2", "held bytes precede a direct write on the same socket");
        assert_eq!(&on_a[4..], &big[..]);
        assert_eq!([before_flush.1, pending(&mut pb)].concat(), b"b1b2");
        assert_eq!([before_flush.2, pending(&mut pc)].concat(), b"c1");
        // Outside `batched` nothing is held.
        assert!(!hold(a.as_raw_fd(), b"now"));
    }

    #[tokio::test(flavor = "current_thread")]
    async fn each_poll_writes_its_first_command_at_once() {
        let (a, mut pa) = UnixStream::pair().unwrap();
        let (b, mut pb) = UnixStream::pair().unwrap();
        let seen = batched(2, async {
            let first_poll = (put(&a, b"a1"), put(&b, b"b1"), pending(&mut pa), pending(&mut pb));
            // Pending once: the poll ends (what is held goes out) and a new one begins.
            tokio::task::yield_now().await;
            let flushed = pending(&mut pb);
            let second_poll = (put(&b, b"b2"), put(&a, b"a2"), pending(&mut pb), pending(&mut pa));
            (first_poll, flushed, second_poll)
        })
        .await;
        if !ring_in_use() {
            eprintln!("io_uring unavailable here: nothing is held");
            return;
        }
        let (first_poll, flushed, second_poll) = seen;
        assert_eq!(first_poll, (false, true, b"a1".to_vec(), vec![]), "first poll: a1 at once, b1 held");
        assert_eq!(flushed, b"b1", "what a poll held is written when it ends");
        assert_eq!(second_poll, (false, true, b"b2".to_vec(), vec![]), "second poll: b2 at once, a2 held");
        assert_eq!(pending(&mut pa), b"a2");
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_forgotten_socket_gets_nothing() {
        let (a, mut pa) = UnixStream::pair().unwrap();
        let (b, mut pb) = UnixStream::pair().unwrap();
        let (z, _pz) = UnixStream::pair().unwrap();
        let held = batched(2, async {
            put(&z, b"the poll's first, written at once");
            let held = hold(a.as_raw_fd(), b"gone");
            forget(a.as_raw_fd());
            put(&b, b"kept");
            held
        })
        .await;
        assert_eq!(held, ring_in_use());
        assert_eq!(pending(&mut pa), b"");
        assert_eq!(pending(&mut pb), b"kept");
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_closed_peer_does_not_stop_the_others() {
        let (a, pa) = UnixStream::pair().unwrap();
        let (b, mut pb) = UnixStream::pair().unwrap();
        let (z, _pz) = UnixStream::pair().unwrap();
        drop(pa);
        batched(2, async {
            put(&z, b"the poll's first, written at once");
            hold(a.as_raw_fd(), b"to nobody");
            put(&b, b"to b");
        })
        .await;
        assert_eq!(pending(&mut pb), b"to b");
    }
}
