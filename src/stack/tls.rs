//! What every TLS stack's client and server share, following seed 000's contract: TLS 1.3 only, one
//! key-exchange group at a time, resumption off on both sides, a fresh connection per handshake, a
//! 32-byte payload echoed and checked, then close.

use super::{Acceptor, Sink};
use anyhow::{anyhow, ensure, Context, Result};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{
    AtomicU64,
    Ordering::{Relaxed, Release},
};
use std::sync::Arc;
use std::time::Duration;

/// The 32-byte payload each connection echoes (seed 000's contract).
pub(crate) const PAYLOAD: [u8; 32] = *b"pqprof handshake echo payload 32";

pub(crate) const TIMEOUT: Duration = Duration::from_secs(5);

/// Socket timeouts of this process, milliseconds: TIMEOUT on loopback; `pqprof network` raises it,
/// since over a lossy path a retransmission backs off past 5 s (1 + 2 + 4 s for three lost SYNs).
static IO_TIMEOUT_MS: AtomicU64 = AtomicU64::new(5000);

pub(crate) fn set_io_timeout(t: Duration) {
    IO_TIMEOUT_MS.store(t.as_millis() as u64, Relaxed);
}

pub(crate) fn io_timeout() -> Duration {
    Duration::from_millis(IO_TIMEOUT_MS.load(Relaxed))
}

/// A client's TCP connection: no Nagle, the process's timeouts.
pub(crate) fn tcp(addr: SocketAddr) -> Result<TcpStream> {
    let s = TcpStream::connect_timeout(&addr, io_timeout())
        .with_context(|| format!("connect to {addr}"))?;
    s.set_nodelay(true)?;
    s.set_read_timeout(Some(io_timeout()))?;
    s.set_write_timeout(Some(io_timeout()))?;
    Ok(s)
}

/// Sets SO_LINGER to zero, so closing sends a reset and leaves no TIME_WAIT behind
/// (`Teardown::Reset`).
pub(crate) fn no_linger(s: &TcpStream) {
    use std::os::fd::AsRawFd;
    let l = libc::linger {
        l_onoff: 1,
        l_linger: 0,
    };
    // SAFETY: a valid socket and a valid linger struct of the size given.
    unsafe {
        libc::setsockopt(
            s.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_LINGER,
            &l as *const _ as *const libc::c_void,
            std::mem::size_of::<libc::linger>() as libc::socklen_t,
        )
    };
}

/// A load client's TCP connection (`tcp`), ending as `teardown` says.
pub(crate) fn tcp_with(addr: SocketAddr, teardown: super::Teardown) -> Result<TcpStream> {
    let s = tcp(addr)?;
    if teardown == super::Teardown::Reset {
        no_linger(&s);
    }
    Ok(s)
}

/// A server's accepted connection, set up as a client's.
pub(crate) fn accepted(stream: &TcpStream) {
    let _ = stream.set_nodelay(true);
    let _ = stream.set_read_timeout(Some(io_timeout()));
    let _ = stream.set_write_timeout(Some(io_timeout()));
}

/// The client's side of the echo: the payload out, the same 32 bytes back.
pub(crate) fn echo<S: Read + Write>(s: &mut S) -> Result<()> {
    s.write_all(&PAYLOAD)?;
    s.flush()?;
    let mut back = [0u8; 32];
    s.read_exact(&mut back).context("reading the echo")?;
    ensure!(back == PAYLOAD, "the echo differs from the payload");
    Ok(())
}

/// The client's side of an HTTP/1.1 exchange, for a server that answers HTTP rather than echoes
/// (the lab's nginx and HAProxy): one GET, then its answer read, which must be a 200, to the end
/// of its body (its Content-Length, else until the server closes).
pub(crate) fn http_get<S: Read + Write>(s: &mut S, close: bool) -> Result<()> {
    let connection = if close { "close" } else { "keep-alive" };
    s.write_all(
        format!("GET / HTTP/1.1\r\nHost: pqprof\r\nConnection: {connection}\r\n\r\n").as_bytes(),
    )?;
    s.flush()?;
    let mut got: Vec<u8> = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let head_end = got.windows(4).position(|w| w == b"\r\n\r\n");
        if let Some(h) = head_end {
            let head = String::from_utf8_lossy(&got[..h]);
            let status = head.lines().next().unwrap_or("");
            ensure!(
                status.starts_with("HTTP/1.1 200") || status.starts_with("HTTP/1.0 200"),
                "the server answered {status:?}"
            );
            let length = head.lines().find_map(|l| {
                let (k, v) = l.split_once(':')?;
                k.trim()
                    .eq_ignore_ascii_case("content-length")
                    .then(|| v.trim().parse::<usize>().ok())?
            });
            if length.is_some_and(|n| got.len() >= h + 4 + n) {
                return Ok(());
            }
        }
        let n = match s.read(&mut buf) {
            Ok(n) => n,
            // A server that closes without close_notify after its whole answer.
            Err(_) if head_end.is_some() => 0,
            Err(e) => return Err(e).context("reading the HTTP answer"),
        };
        if n == 0 {
            ensure!(head_end.is_some(), "the server closed before its answer");
            return Ok(());
        }
        got.extend_from_slice(&buf[..n]);
        ensure!(got.len() < 1 << 20, "an HTTP answer over 1 MiB");
    }
}

/// The server's side of the echo.
pub(crate) fn echo_back<S: Read + Write>(s: &mut S) -> Result<()> {
    let mut buf = [0u8; 32];
    s.read_exact(&mut buf)?;
    s.write_all(&buf)?;
    Ok(())
}

/// Lower-case with `_` and `-` taken out: how a negotiated group's name is compared with a suite's
/// ("X25519MLKEM768" from rustls's debug name, "X25519MLKEM768" or "x25519_mlkem768" elsewhere).
pub(crate) fn norm(s: &str) -> String {
    s.to_ascii_lowercase().replace(['_', '-'], "")
}

/// The connections this server process has served that resumed a session: counted before
/// `served`, whose increment releases it and whose readers acquire it, so a count of served never
/// runs ahead of it.
pub(crate) static RESUMED: AtomicU64 = AtomicU64::new(0);

/// One more connection served, and resumed if it did: the resumption first (see `RESUMED`).
fn count(served: &AtomicU64, resumed: bool) {
    if resumed {
        RESUMED.fetch_add(1, Relaxed);
    }
    served.fetch_add(1, Release);
}

/// The server loop of a stack served by this binary: accepts connections one at a time until the
/// process ends (each a full handshake and its 32 bytes echoed; with `sink`, its in-situ record
/// kept), or with `concurrent` a thread per connection (`pqprof network`: handshakes in flight at
/// once over a slow path must not wait for each other at the server).
pub fn serve_with(
    acceptor: Box<dyn Acceptor>,
    listener: TcpListener,
    served: &AtomicU64,
    sink: Option<&Sink>,
    concurrent: bool,
) -> Result<()> {
    if concurrent {
        let acceptor: Arc<dyn Acceptor> = Arc::from(acceptor);
        std::thread::scope(|scope| {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let acceptor = acceptor.clone();
                // Failures over a lossy path are the client's to count (it sees them first).
                scope.spawn(move || {
                    if let Ok(conn) = acceptor.serve_one(stream) {
                        let resumed = conn.resumed();
                        conn.close();
                        count(served, resumed);
                    }
                });
            }
        });
        return Ok(());
    }
    for stream in listener.incoming() {
        let Ok(stream) = stream else { continue };
        if sink.is_some() {
            crate::insitu::arm();
        }
        let result = acceptor.serve_one(stream).map(|c| {
            let resumed = c.resumed();
            c.close();
            resumed
        });
        let record = sink.is_some().then(crate::insitu::take);
        match result {
            Ok(resumed) => {
                // The record goes in before the count, so `stats` never sees a count without it.
                if let (Some(sink), Some(rec)) = (sink, record) {
                    sink.lock().map_err(|_| anyhow!("poisoned"))?.push(rec);
                }
                count(served, resumed);
            }
            Err(e) => eprintln!("server: {e:#}"),
        }
    }
    Ok(())
}

/// What one client connection reports: the time until the handshake was done, the wire's counts
/// and first flights, the negotiated parameters when asked, and whether the handshake resumed.
pub(crate) type Exchange = (
    Duration,
    super::wire::Counted<()>,
    Option<crate::results::Evidence>,
    bool,
);

/// The first TLS record's length with its header (a handshake record: the ClientHello), from the
/// first bytes a client sent (RFC 8446 section 5.1: type, version, 2-byte length).
pub(crate) fn first_record_bytes(sent: &[u8]) -> Option<u64> {
    match sent {
        [22, _, _, hi, lo, ..] => Some(5 + u64::from(u16::from_be_bytes([*hi, *lo]))),
        _ => None,
    }
}

/// Times one client connection made by `exchange` (which connects, handshakes, echoes and closes,
/// from `t0`): its wall time, the thread's CPU and allocations over it, the in-situ record when
/// `armed`, and the key shares of the evidence parsed from the first flights.
pub(crate) fn measure_connection(
    armed: bool,
    exchange: impl FnOnce(std::time::Instant) -> Result<Exchange>,
) -> Result<super::One> {
    use crate::parse::tls::key_shares;
    let cpu0 = crate::alloc::thread_cpu_ns();
    let mem0 = crate::alloc::counters();
    if armed {
        crate::insitu::arm();
    }
    let (t0, started_ns) = crate::alloc::start_clock();
    let r = exchange(t0);
    let total = t0.elapsed();
    let insitu = armed.then(crate::insitu::take);
    let (hs, sock, mut ev, resumed) = r?;
    if let Some(e) = ev.as_mut() {
        e.client_shares = key_shares(&sock.first_sent)
            .and_then(|(m, s)| (m == 1).then_some(s))
            .unwrap_or_default();
        e.client_share = e.client_shares.first().copied();
        e.server_share = key_shares(&sock.first_received)
            .and_then(|(m, s)| (m == 2).then_some(s))
            .and_then(|s| s.first().copied());
        e.client_hello_bytes = first_record_bytes(&sock.first_sent);
        e.hello_retry = crate::parse::tls::is_hello_retry(&sock.first_received);
    }
    Ok(super::One {
        total_ns: total.as_nanos() as f64,
        ready_ns: hs.as_nanos() as f64,
        sent: sock.sent,
        received: sock.received,
        cpu_ns: crate::alloc::thread_cpu_ns() - cpu0,
        mem: crate::alloc::counters().since(mem0),
        evidence: ev,
        insitu,
        go_allocs: 0.0,
        go_bytes: 0.0,
        port: sock.port,
        started_ns,
        resumed: Some(resumed),
    })
}
