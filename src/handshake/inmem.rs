//! Full TLS 1.3 handshakes in memory: client and server in one thread on one pinned core, passing
//! records through buffers instead of sockets (rustls `write_tls` / `read_tls`; OpenSSL with a
//! Rust in-memory stream as its BIO). Every call one side makes is timed to that side, so a
//! handshake gives the client's CPU time, the server's, and the wall time of the whole exchange.

use super::tls::{self, ClientKind, Identity};
use crate::results::RealStack;
use anyhow::{anyhow, bail, ensure, Result};
use std::cell::RefCell;
use std::collections::VecDeque;
use std::io::{Read, Write};
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// One handshake's times, nanoseconds.
#[derive(Debug, Clone, Copy)]
pub struct Sample {
    pub client_ns: u64,
    pub server_ns: u64,
    pub wall_ns: u64,
}

/// A client and server configuration for one stack and group, made once.
pub struct Pair {
    client: tls::Client,
    server: tls::Acceptor,
    group: String,
}

impl Pair {
    /// `wrapped`: rustls with the timing provider (OpenSSL's calls are always routed through the
    /// wrappers; for both, nothing is timed unless the recorder is armed).
    pub fn new(stack: RealStack, group: &str, id: &Identity, wrapped: bool) -> Result<Pair> {
        Ok(Pair {
            client: tls::Client::new(stack, group, id, wrapped)?,
            server: tls::acceptor(stack, group, id, wrapped)?,
            group: group.to_string(),
        })
    }

    /// One full handshake; with `check`, the negotiated group is verified.
    pub fn handshake(&self, check: bool) -> Result<Sample> {
        match (&self.client.kind, &self.server) {
            (ClientKind::Rustls(c), tls::Acceptor::Rustls(s)) => {
                rustls_handshake(c, s, check.then_some(self.group.as_str()))
            }
            (ClientKind::OpenSsl(c), tls::Acceptor::OpenSsl(s)) => {
                openssl_handshake(c, s, check.then_some(self.group.as_str()))
            }
            _ => bail!("client and server of different stacks"),
        }
    }
}

/// Time one side's call.
fn timed<R>(acc: &mut Duration, f: impl FnOnce() -> R) -> R {
    let t = Instant::now();
    let r = f();
    *acc += t.elapsed();
    r
}

fn norm(s: &str) -> String {
    s.to_ascii_lowercase().replace(['_', '-'], "")
}

/// Gives every byte of `buf` to a rustls connection and processes the records.
fn feed<D>(conn: &mut rustls::ConnectionCommon<D>, mut buf: &[u8]) -> Result<()> {
    while !buf.is_empty() {
        conn.read_tls(&mut buf)?;
        conn.process_new_packets()
            .map_err(|e| anyhow!("rustls: {e}"))?;
    }
    Ok(())
}

fn rustls_handshake(
    ccfg: &Arc<rustls::ClientConfig>,
    scfg: &Arc<rustls::ServerConfig>,
    check: Option<&str>,
) -> Result<Sample> {
    let (mut tc, mut ts) = (Duration::ZERO, Duration::ZERO);
    let mut to_server = Vec::with_capacity(8192);
    let mut to_client = Vec::with_capacity(16384);
    let start = Instant::now();
    // Making the client connection makes its key share: client time.
    let mut client = timed(&mut tc, || {
        rustls::ClientConnection::new(ccfg.clone(), "localhost".try_into().expect("a valid name"))
    })?;
    let mut server = timed(&mut ts, || rustls::ServerConnection::new(scfg.clone()))?;
    for _ in 0..16 {
        to_server.clear();
        timed(&mut tc, || -> Result<()> {
            while client.wants_write() {
                client.write_tls(&mut to_server)?;
            }
            Ok(())
        })?;
        timed(&mut ts, || feed(&mut server, &to_server))?;
        to_client.clear();
        timed(&mut ts, || -> Result<()> {
            while server.wants_write() {
                server.write_tls(&mut to_client)?;
            }
            Ok(())
        })?;
        timed(&mut tc, || feed(&mut client, &to_client))?;
        if !client.is_handshaking()
            && !server.is_handshaking()
            && !client.wants_write()
            && !server.wants_write()
        {
            let wall = start.elapsed();
            if let Some(g) = check {
                let got = client
                    .negotiated_key_exchange_group()
                    .map(|x| format!("{:?}", x.name()))
                    .unwrap_or_default();
                ensure!(
                    norm(&got) == norm(g),
                    "rustls negotiated {got}, expected {g}"
                );
            }
            return Ok(Sample {
                client_ns: tc.as_nanos() as u64,
                server_ns: ts.as_nanos() as u64,
                wall_ns: wall.as_nanos() as u64,
            });
        }
    }
    bail!("rustls: the in-memory handshake did not finish in 16 flights")
}

/// One direction of an in-memory connection: what one side wrote and the other has not read.
type Queue = Rc<RefCell<VecDeque<u8>>>;

/// A stream over two queues; reading an empty queue would block, which OpenSSL turns into
/// WANT_READ, as with a non-blocking socket.
struct MemStream {
    rx: Queue,
    tx: Queue,
}

impl Read for MemStream {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let mut q = self.rx.borrow_mut();
        if q.is_empty() {
            return Err(std::io::ErrorKind::WouldBlock.into());
        }
        let n = q.len().min(buf.len());
        for (d, s) in buf.iter_mut().zip(q.drain(..n)) {
            *d = s;
        }
        Ok(n)
    }
}

impl Write for MemStream {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.tx.borrow_mut().extend(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

extern "C" {
    fn SSL_get0_group_name(s: *mut openssl_sys::SSL) -> *const std::ffi::c_char;
}

fn openssl_handshake(
    connector: &openssl::ssl::SslConnector,
    acceptor: &openssl::ssl::SslAcceptor,
    check: Option<&str>,
) -> Result<Sample> {
    use openssl::ssl::{ErrorCode, Ssl, SslStream};
    let (mut tc, mut ts) = (Duration::ZERO, Duration::ZERO);
    let (a, b): (Queue, Queue) = (Rc::default(), Rc::default());
    let start = Instant::now();
    let mut client = timed(&mut tc, || -> Result<_> {
        let ssl = connector.configure()?.into_ssl("localhost")?;
        Ok(SslStream::new(
            ssl,
            MemStream {
                rx: b.clone(),
                tx: a.clone(),
            },
        )?)
    })?;
    let mut server = timed(&mut ts, || -> Result<_> {
        Ok(SslStream::new(
            Ssl::new(acceptor.context())?,
            MemStream {
                rx: a.clone(),
                tx: b.clone(),
            },
        )?)
    })?;
    let (mut client_done, mut server_done) = (false, false);
    let pending = |r: Result<(), openssl::ssl::Error>| -> Result<bool> {
        match r {
            Ok(()) => Ok(true),
            Err(e) if e.code() == ErrorCode::WANT_READ => Ok(false),
            Err(e) => Err(anyhow!("OpenSSL: {e}")),
        }
    };
    for _ in 0..16 {
        if !client_done {
            client_done = timed(&mut tc, || pending(client.connect()))?;
        }
        if !server_done {
            server_done = timed(&mut ts, || pending(server.accept()))?;
        }
        if client_done && server_done {
            let wall = start.elapsed();
            if let Some(g) = check {
                use foreign_types::ForeignTypeRef;
                // SAFETY: the SSL is live; the result is NULL or a static string.
                let got = unsafe {
                    let p = SSL_get0_group_name(client.ssl().as_ptr());
                    if p.is_null() {
                        String::new()
                    } else {
                        std::ffi::CStr::from_ptr(p).to_string_lossy().into_owned()
                    }
                };
                ensure!(
                    norm(&got) == norm(g),
                    "OpenSSL negotiated {got}, expected {g}"
                );
                ensure!(!client.ssl().session_reused(), "OpenSSL resumed a session");
            }
            return Ok(Sample {
                client_ns: tc.as_nanos() as u64,
                server_ns: ts.as_nanos() as u64,
                wall_ns: wall.as_nanos() as u64,
            });
        }
    }
    bail!("OpenSSL: the in-memory handshake did not finish in 16 flights")
}

/// Block medians of in-memory handshakes with the plain configuration, the wrapped one unarmed
/// (rustls only: OpenSSL's calls always pass the wrappers) and the wrapped one armed.
pub struct PairedBlocks {
    pub plain: Vec<f64>,
    pub wrapped: Vec<f64>,
    pub timed: Vec<f64>,
}

/// The in-situ timers' cost, paired: `blocks` blocks of `per_block` handshakes per variant on this
/// thread, the order of the variants turning every block (`block_order`) so drift within a block
/// falls on every variant alike. The armed handshakes are
/// timed from `arm` to `take`, as a loopback connection's are.
pub fn paired_blocks(
    stack: RealStack,
    group: &str,
    id: &Identity,
    blocks: usize,
    per_block: usize,
) -> Result<PairedBlocks> {
    let plain = Pair::new(stack, group, id, false)?;
    // OpenSSL has one configuration: its wrapped calls are the plain ones, unarmed.
    let wrapped = match stack {
        RealStack::Rustls => Some(Pair::new(stack, group, id, true)?),
        _ => None,
    };
    plain.handshake(true)?;
    let wrapped_or_plain = wrapped.as_ref().unwrap_or(&plain);
    wrapped_or_plain.handshake(true)?;
    let block = |pair: &Pair, armed: bool| -> Result<f64> {
        let mut ns = Vec::with_capacity(per_block);
        for _ in 0..per_block {
            crate::interrupt::check()?;
            if armed {
                super::insitu::arm();
            }
            let t = Instant::now();
            let r = pair.handshake(false);
            let e = t.elapsed();
            if armed {
                super::insitu::take();
            }
            r?;
            ns.push(e.as_nanos() as f64);
        }
        Ok(crate::stats::median(&ns))
    };
    // Warm every variant before the first block.
    for _ in 0..2 {
        block(&plain, false)?;
        block(wrapped_or_plain, true)?;
    }
    let mut out = PairedBlocks {
        plain: Vec::new(),
        wrapped: Vec::new(),
        timed: Vec::new(),
    };
    let variants: &[u8] = if wrapped.is_some() {
        &[0, 1, 2]
    } else {
        &[0, 2]
    };
    for b in 0..blocks {
        for i in block_order(b, variants.len()) {
            match variants[i] {
                0 => out.plain.push(block(&plain, false)?),
                1 => out.wrapped.push(block(wrapped_or_plain, false)?),
                _ => out.timed.push(block(wrapped_or_plain, true)?),
            }
        }
    }
    Ok(out)
}

/// The order of `n` (2 or 3) variants in block `b`: every permutation in turn, so that over each
/// full cycle every variant takes every place equally often and (for three) follows every other
/// equally often and never itself. Reversing one order each block would put the middle one of
/// three always just after a switch, and never twice in a row as the first and last ones are.
pub fn block_order(b: usize, n: usize) -> Vec<usize> {
    const THREE: [[usize; 3]; 6] = [
        [0, 1, 2],
        [1, 2, 0],
        [2, 0, 1],
        [2, 1, 0],
        [1, 0, 2],
        [0, 2, 1],
    ];
    match n {
        3 => THREE[b % 6].to_vec(),
        _ if b % 2 == 0 => (0..n).collect(),
        _ => (0..n).rev().collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::block_order;

    #[test]
    fn every_variant_takes_every_place_equally_often() {
        for n in [2, 3] {
            let cycle = if n == 3 { 6 } else { 2 };
            let orders: Vec<Vec<usize>> = (0..cycle).map(|b| block_order(b, n)).collect();
            for v in 0..n {
                for place in 0..n {
                    let times = orders.iter().filter(|o| o[place] == v).count();
                    assert_eq!(
                        times,
                        cycle / n,
                        "variant {v} at place {place} of {orders:?}"
                    );
                }
            }
            assert!(orders.iter().all(|o| {
                let mut s = o.clone();
                s.sort();
                s == (0..n).collect::<Vec<_>>()
            }));
            // Run back to back, cycle after cycle: with three, every variant follows every other
            // equally often and never itself; with two, each runs twice in a row equally often.
            let run: Vec<usize> = orders.concat();
            let mut follows = vec![vec![0; n]; n];
            for k in 0..run.len() {
                follows[run[k]][run[(k + 1) % run.len()]] += 1;
            }
            if n == 3 {
                for a in 0..n {
                    for b in 0..n {
                        assert_eq!(
                            follows[a][b],
                            if a == b { 0 } else { 3 },
                            "{a} then {b} in {run:?}"
                        );
                    }
                }
            } else {
                assert_eq!(
                    (follows[0][0], follows[1][1], follows[0][1], follows[1][0]),
                    (1, 1, 1, 1),
                    "{run:?}"
                );
            }
        }
    }
}
