//! One connection of a probe: a TCP connect, then a TLS 1.3 handshake by rustls offering the
//! scenario's groups, over a stream that keeps what each side sent, so that the ClientHello, the
//! retry and the server's flight are read from the bytes themselves.

use super::verifier::{Recorded, Verifier};
use anyhow::Result;
use pqprof_core::figures::probe::{self as figures, Scenario};
use pqprof_core::parse::tls;
use pqprof_core::results::ProbeConnection;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Bytes kept of each direction: a hybrid ClientHello and any server's first flights (an
/// ML-DSA-87 chain with its CertificateVerify is about 20 KB).
const KEPT: usize = 64 * 1024;

/// The socket as rustls sees it, one TLS record at most per read, with the first `KEPT` bytes of
/// each direction kept and the bytes handed to rustls counted. One record a read, so that what
/// rustls has read when its handshake is done ends with the server's Finished: a server that
/// sends its tickets at once (Go's crypto/tls does, when it asks for no client certificate) has
/// them read after, and they are not counted in its flight. Room for all of it is taken before
/// the handshake starts.
struct Tape<'a> {
    sock: &'a TcpStream,
    sent: Vec<u8>,
    received: Vec<u8>,
    /// Read from the socket, not yet handed to rustls, from `at`.
    pending: Vec<u8>,
    at: usize,
    /// What is left of the record being handed over.
    record_left: usize,
    /// Every byte handed to rustls, kept or not.
    received_total: u64,
}

impl Tape<'_> {
    /// One read of the socket into `pending`; false at its end.
    fn fill(&mut self) -> std::io::Result<bool> {
        if self.at > 0 {
            self.pending.drain(..self.at);
            self.at = 0;
        }
        let mut chunk = [0u8; 16 * 1024];
        let n = (&*self.sock).read(&mut chunk)?;
        self.pending.extend_from_slice(&chunk[..n]);
        Ok(n > 0)
    }

    fn buffered(&self) -> &[u8] {
        &self.pending[self.at..]
    }
}

impl Read for Tape<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.buffered().is_empty() && !self.fill()? {
            return Ok(0);
        }
        if self.record_left == 0 {
            // The next record's header, whole (it may come in two reads).
            while self.buffered().len() < 5 {
                if !self.fill()? {
                    break;
                }
            }
            let b = self.buffered();
            self.record_left = match b {
                [_, _, _, hi, lo, ..] => 5 + usize::from(u16::from_be_bytes([*hi, *lo])),
                _ => b.len(),
            };
        }
        let n = buf.len().min(self.buffered().len()).min(self.record_left);
        buf[..n].copy_from_slice(&self.buffered()[..n]);
        self.at += n;
        self.record_left -= n;
        self.received_total += n as u64;
        let room = KEPT.saturating_sub(self.received.len()).min(n);
        self.received.extend_from_slice(&buf[..room]);
        Ok(n)
    }
}

impl Write for Tape<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = (&*self.sock).write(buf)?;
        self.keep_sent(&[std::io::IoSlice::new(buf)], n);
        Ok(n)
    }
    /// rustls writes its queued records with one vectored write: forwarded as one, so that the
    /// wire sees what it would without the tape.
    fn write_vectored(&mut self, bufs: &[std::io::IoSlice<'_>]) -> std::io::Result<usize> {
        let n = (&*self.sock).write_vectored(bufs)?;
        self.keep_sent(bufs, n);
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        (&*self.sock).flush()
    }
}

impl Tape<'_> {
    /// Keeps the first `n` bytes of `bufs`, those the socket took, while there is room.
    fn keep_sent(&mut self, bufs: &[std::io::IoSlice<'_>], n: usize) {
        let mut left = n;
        for b in bufs {
            let take = left.min(b.len());
            let room = KEPT.saturating_sub(self.sent.len()).min(take);
            self.sent.extend_from_slice(&b[..room]);
            left -= take;
            if left == 0 {
                break;
            }
        }
    }
}

/// What a connection needs beyond its scenario.
pub(super) struct Setup<'a> {
    /// Where to connect: the first that answers, in the resolver's order (a name may resolve to
    /// ::1 first and the server listen on 127.0.0.1 alone).
    pub(super) addresses: &'a [SocketAddr],
    pub(super) server_name: rustls::pki_types::ServerName<'static>,
    pub(super) verifier: &'a Arc<Verifier>,
    pub(super) timeout: Duration,
    /// Keep the server's records up to its ServerHello (the questions; not the latency rounds).
    pub(super) keep_server_hello: bool,
}

/// A connection's record, the chain it was sent (when it completed), the address that answered,
/// and, when it failed, why, where the failure says the peer is no TLS 1.3 server at all or
/// cannot be reached (`fatal`) rather than answering this scenario alone.
pub(super) struct Made {
    pub(super) record: ProbeConnection,
    pub(super) chain: Vec<Vec<u8>>,
    pub(super) fatal: Option<String>,
    pub(super) mss: u32,
    pub(super) address: Option<SocketAddr>,
}

pub(super) fn make(s: &Scenario, setup: &Setup, start_ms: f64) -> Made {
    let (offered, shared) = s.offered();
    let mut made = Made {
        record: ProbeConnection {
            scenario: s.name().into(),
            offered: offered.iter().map(|g| g.to_string()).collect(),
            shared,
            round: s.round(),
            start_ms,
            error: None,
            negotiated: None,
            hello_retry: false,
            client_hello_bytes: Vec::new(),
            client_shares: Vec::new(),
            server_flight_bytes: 0,
            server_hello_hex: None,
            scheme: None,
            connect_ns: 0,
            handshake_ns: 0,
        },
        chain: Vec::new(),
        fatal: None,
        mss: 0,
        address: None,
    };
    let config = match config(&offered, setup.verifier) {
        Ok(c) => c,
        Err(e) => {
            made.fatal = Some(format!("{e:#}"));
            return made;
        }
    };
    let mut last_error = None;
    let mut connected = None;
    for &address in setup.addresses {
        let t0 = Instant::now();
        match TcpStream::connect_timeout(&address, setup.timeout) {
            Ok(s) => {
                made.record.connect_ns = t0.elapsed().as_nanos() as u64;
                connected = Some((s, address));
                break;
            }
            Err(e) => last_error = Some(connect_error(&e, address, setup.timeout)),
        }
    }
    let Some((sock, address)) = connected else {
        let why = last_error.unwrap_or_else(|| "no address to connect to".into());
        made.record.error = Some(why.clone());
        made.fatal = Some(why);
        return made;
    };
    made.address = Some(address);
    made.mss = crate::stack::wire::mss(&sock).unwrap_or(0);
    let _ = sock.set_nodelay(true);
    let _ = sock.set_read_timeout(Some(setup.timeout));
    let _ = sock.set_write_timeout(Some(setup.timeout));
    let mut tape = Tape {
        sock: &sock,
        sent: Vec::with_capacity(KEPT),
        received: Vec::with_capacity(KEPT),
        pending: Vec::with_capacity(KEPT),
        at: 0,
        record_left: 0,
        received_total: 0,
    };
    let _ = setup.verifier.take();
    // Timed: the ClientHello's making (the client's key generation) through the client's
    // Finished written; the tape's copies of the bytes are the only other work inside.
    let t1 = Instant::now();
    let outcome = handshake(config, setup.server_name.clone(), &mut tape);
    let handshake_ns = t1.elapsed().as_nanos() as u64;
    let noted: Recorded = setup.verifier.take();
    let record = &mut made.record;
    read_tape(&tape, record, setup.keep_server_hello);
    match outcome.map(|conn| chosen(&conn)) {
        Ok((negotiated, chain)) => {
            record.handshake_ns = handshake_ns;
            record.negotiated = Some(
                figures::group_by_code(negotiated)
                    .map_or_else(|| format!("0x{negotiated:04x}"), |g| g.name.into()),
            );
            record.scheme = noted.scheme;
            made.chain = chain;
            let _ = sock.shutdown(std::net::Shutdown::Both);
        }
        Err(e) => {
            let (why, fatal) = failure(&e, &tape, noted.certificate_error.as_deref());
            record.error = Some(why.clone());
            if fatal {
                made.fatal = Some(why);
            }
        }
    }
    made
}

/// A client offering `offered` (shares as the order gives them: rustls shares the first group,
/// and with the hybrid first, its X25519 half as X25519's share), TLS 1.3 only, no resumption.
fn config(offered: &[&str], verifier: &Arc<Verifier>) -> Result<Arc<rustls::ClientConfig>> {
    let mut p = rustls::crypto::aws_lc_rs::default_provider();
    p.kx_groups = offered
        .iter()
        .map(|g| crate::stack::rustls_group(g))
        .collect::<Result<_>>()?;
    let mut cfg = rustls::ClientConfig::builder_with_provider(Arc::new(p))
        .with_protocol_versions(&[&rustls::version::TLS13])?
        .dangerous()
        .with_custom_certificate_verifier(verifier.clone())
        .with_no_client_auth();
    cfg.resumption = rustls::client::Resumption::disabled();
    Ok(Arc::new(cfg))
}

/// The handshake, through the client's Finished written; nothing else (the connection is read
/// and dropped after the clock stops).
fn handshake(
    config: Arc<rustls::ClientConfig>,
    name: rustls::pki_types::ServerName<'static>,
    tape: &mut Tape,
) -> std::result::Result<rustls::ClientConnection, Failure> {
    let mut conn = rustls::ClientConnection::new(config, name).map_err(Failure::Tls)?;
    while conn.is_handshaking() {
        conn.complete_io(tape).map_err(Failure::from_io)?;
    }
    while conn.wants_write() {
        conn.write_tls(tape).map_err(Failure::Io)?;
    }
    Ok(conn)
}

/// The group chosen (its code point) and the chain, DER, leaf first.
fn chosen(conn: &rustls::ClientConnection) -> (u16, Vec<Vec<u8>>) {
    let group = conn
        .negotiated_key_exchange_group()
        .map_or(0, |g| u16::from(g.name()));
    let chain = conn
        .peer_certificates()
        .unwrap_or_default()
        .iter()
        .map(|c| c.to_vec())
        .collect();
    (group, chain)
}

enum Failure {
    Tls(rustls::Error),
    Io(std::io::Error),
}

impl Failure {
    /// rustls reports its own errors through io::Error's InvalidData.
    fn from_io(e: std::io::Error) -> Failure {
        if e.kind() == std::io::ErrorKind::InvalidData {
            if let Some(t) = e.get_ref().and_then(|r| r.downcast_ref::<rustls::Error>()) {
                return Failure::Tls(t.clone());
            }
        }
        Failure::Io(e)
    }
}

/// A failed handshake in one line, and whether it ends the probe: a peer that is not a TLS 1.3
/// server, or one whose certificate does not verify, answers no scenario; an alert or a reset
/// answers this one.
fn failure(e: &Failure, tape: &Tape, certificate: Option<&str>) -> (String, bool) {
    use rustls::AlertDescription as A;
    let received = !tape.received.is_empty();
    match e {
        Failure::Tls(rustls::Error::AlertReceived(A::ProtocolVersion)) => (
            "the server does not speak TLS 1.3 (alert protocol_version)".into(),
            true,
        ),
        Failure::Tls(rustls::Error::AlertReceived(a)) => {
            (format!("refused (alert {})", alert_name(*a)), false)
        }
        Failure::Tls(rustls::Error::InvalidCertificate(c)) => (
            format!(
                "its certificate does not verify ({}); --ca FILE names its root, --insecure skips the check",
                certificate.map_or_else(|| format!("{c:?}"), String::from)
            ),
            true,
        ),
        Failure::Tls(rustls::Error::PeerIncompatible(p)) => (
            format!("the server does not speak TLS 1.3 as offered ({p:?})"),
            true,
        ),
        Failure::Tls(t) if !starts_like_tls(&tape.received) => (
            format!(
                "not a TLS server: it answered {} ({t})",
                first_bytes(&tape.received)
            ),
            true,
        ),
        Failure::Tls(t) => (format!("the handshake failed: {t}"), false),
        Failure::Io(io) => match io.kind() {
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => {
                (format!("no answer from the server within the timeout ({io})"), !received)
            }
            std::io::ErrorKind::UnexpectedEof
            | std::io::ErrorKind::ConnectionReset
            | std::io::ErrorKind::BrokenPipe
            | std::io::ErrorKind::ConnectionAborted => (
                format!(
                    "the server closed the connection {} ({io})",
                    if received { "mid-handshake" } else { "before answering" }
                ),
                false,
            ),
            _ => (format!("the handshake failed: {io}"), false),
        },
    }
}

/// An alert as RFC 8446 section 6 names it ("handshake_failure").
fn alert_name(a: rustls::AlertDescription) -> String {
    let debug = format!("{a:?}");
    let mut out = String::new();
    for (i, ch) in debug.chars().enumerate() {
        if ch.is_ascii_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(ch.to_ascii_lowercase());
    }
    out
}

/// Whether bytes open as a TLS record would: handshake (22) or alert (21), version 3.x.
fn starts_like_tls(b: &[u8]) -> bool {
    matches!(b, [21 | 22, 3, _, ..]) || b.is_empty()
}

/// The first bytes a peer sent, as text where they are printable ("HTTP/1.1 400 Bad Request"),
/// else in hex.
fn first_bytes(b: &[u8]) -> String {
    let head = &b[..b.len().min(24)];
    if head.iter().all(|c| c.is_ascii_graphic() || *c == b' ') {
        format!("{:?}", String::from_utf8_lossy(head))
    } else {
        head.iter()
            .map(|c| format!("{c:02x}"))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

fn connect_error(e: &std::io::Error, address: SocketAddr, timeout: Duration) -> String {
    match e.kind() {
        std::io::ErrorKind::ConnectionRefused => {
            format!("{address}: connection refused (nothing listens there)")
        }
        std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock => format!(
            "{address}: no answer to the TCP handshake within {} s (filtered, or down)",
            timeout.as_secs_f64()
        ),
        _ => format!("{address}: cannot connect: {e}"),
    }
}

/// The ClientHellos, the key shares, the retry and the server's flight, from the tape.
fn read_tape(tape: &Tape, record: &mut ProbeConnection, keep_server_hello: bool) {
    record.client_hello_bytes = tls::client_hello_sizes(&tape.sent);
    record.client_shares = tls::key_shares(&tape.sent)
        .map(|(_, shares)| shares.into_iter().map(|(g, n)| (g, n as u64)).collect())
        .unwrap_or_default();
    record.hello_retry = tls::is_hello_retry(&tape.received);
    // The server's flight runs from its last ServerHello to its Finished, the last bytes it
    // sent before the client's Finished (its tickets, if any, follow that). Not the bytes read
    // between two writes of the client: rustls writes its ChangeCipherSpec as soon as it has read
    // the ServerHello, in the middle of the flight.
    record.server_flight_bytes = tls::last_server_hello_at(&tape.received)
        .map_or(0, |at| tape.received_total.saturating_sub(at as u64));
    if keep_server_hello {
        let hello = tls::plaintext_records(&tape.received);
        if !hello.is_empty() {
            record.server_hello_hex = Some(pqprof_core::parse::to_hex(&hello));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alerts_are_named_as_the_rfc_names_them() {
        assert_eq!(
            alert_name(rustls::AlertDescription::HandshakeFailure),
            "handshake_failure"
        );
        assert_eq!(
            alert_name(rustls::AlertDescription::ProtocolVersion),
            "protocol_version"
        );
    }

    #[test]
    fn a_peer_that_is_not_tls_is_shown_by_its_first_bytes() {
        assert!(!starts_like_tls(b"HTTP/1.1 400 Bad Request\r\n"));
        assert!(starts_like_tls(&[22, 3, 3, 0, 5]));
        assert_eq!(
            first_bytes(b"SSH-2.0-OpenSSH_10.0"),
            "\"SSH-2.0-OpenSSH_10.0\""
        );
        assert_eq!(first_bytes(&[0, 255]), "00 ff");
    }
}
