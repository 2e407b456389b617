//! quinn-proto 0.11 (QUIC v1, RFC 9000 and 9001) over rustls 0.23 and aws-lc-rs: the TLS 1.3
//! handshakes of `rustls.rs`, the same configurations and certificates, carried in QUIC packets
//! over UDP. quinn-proto is sans-IO, so this file is its I/O: a blocking loop over one UDP socket
//! per client connection, one socket and every connection for the server, and for the in-memory
//! pair two endpoints passing datagrams through memory.
//!
//! The client offers no address-validation token and the server issues none, so every
//! connection is a first contact: the server may send at most three times the bytes it has
//! received until the client's first Handshake packet validates the address (RFC 9000 section
//! 8.1). The client's Initial datagrams are padded to 1,200 bytes (section 14.1).

use super::{side, Acceptor, Availability, Config, Features, One, Pair, Sample, TlsStack};
use crate::results::{Evidence, Mode, QuicEvidence, Transport};
use anyhow::{anyhow, bail, ensure, Result};
use bytes::BytesMut;
use quinn_proto::{
    ClientConfig, ConnectionHandle, DatagramEvent, Dir, Endpoint, EndpointConfig, Event,
    ServerConfig, StreamEvent, StreamId, VarInt,
};
use std::collections::HashMap;
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::{Duration, Instant};

pub struct Quinn;

/// The QUIC version every connection uses: 1 (RFC 9000).
const VERSION: u32 = 1;
/// Largest UDP payload read at once.
const DATAGRAM: usize = 65_536;

impl TlsStack for Quinn {
    fn name(&self) -> &'static str {
        "quinn"
    }

    fn protocol(&self) -> &'static str {
        "tls13"
    }

    fn transport(&self) -> Transport {
        Transport::Quic
    }

    /// rustls's provider does every crypto call of the handshake: the same composition as rustls
    /// over TCP (QUIC's packet and header protection are not among the phases yet).
    fn composition(&self) -> crate::results::Stack {
        super::rustls::Rustls.composition()
    }

    /// The client completes after one round trip: no TCP connect before the Initial.
    fn round_trips(&self) -> f64 {
        crate::netmodel::QUIC_ROUND_TRIPS
    }

    fn features(&self) -> Features {
        Features {
            in_memory: true,
            network: true,
            ..Features::default()
        }
    }

    fn cannot(&self, m: Mode) -> String {
        format!(
            "the {} handshake is not built for QUIC yet: quinn makes full handshakes (#35)",
            m.suffix()
        )
    }

    /// Every group rustls negotiates.
    fn availability(&self) -> Result<Availability> {
        Ok(Availability {
            version: "quinn-proto 0.11 (rustls 0.23, aws-lc-rs)".into(),
            groups: None,
            auths: None,
        })
    }

    fn client(&self, c: Config) -> Result<Box<dyn super::Client>> {
        ensure!(c.mode == Mode::Full, "quinn: only full handshakes");
        Ok(Box::new(Client {
            plain: client_config(c, false)?,
            noted: client_config(c, true)?,
        }))
    }

    fn pair(&self, c: Config) -> Result<Box<dyn Pair>> {
        Ok(Box::new(InMemory {
            client: client_config(c, false)?,
            noted: client_config(c, true)?,
            server: server_config(c)?,
            group: c.group.to_string(),
        }))
    }

    /// Every connection on one UDP socket.
    fn serve(
        &self,
        c: Config,
        listener: super::Listener,
        served: &'static AtomicU64,
        _sink: Option<&'static super::Sink>,
        _concurrent: bool,
    ) -> Result<()> {
        let (sock, _held) = listener.udp()?;
        serve(&sock, server_config(c)?, served)
    }

    fn acceptor(&self, _c: Config) -> Result<Box<dyn Acceptor>> {
        bail!("quinn serves over UDP, not from a TCP acceptor")
    }
}

/// The client's QUIC configuration: rustls's, over a provider whose key exchanges note their
/// shares (`noted`, for the connection that records evidence) or rustls's own; no token store.
fn client_config(c: Config, noted: bool) -> Result<ClientConfig> {
    let provider = super::rustls::provider(c)?;
    let provider = if noted {
        let mut p = (*provider).clone();
        p.kx_groups = p.kx_groups.into_iter().map(note::wrap).collect();
        Arc::new(p)
    } else {
        provider
    };
    let tls = super::rustls::client_config_with(c, provider)?;
    let quic = quinn_proto::crypto::rustls::QuicClientConfig::try_from(tls)
        .map_err(|e| anyhow!("quinn client: {e}"))?;
    let mut cfg = ClientConfig::new(Arc::new(quic));
    cfg.token_store(Arc::new(quinn_proto::NoneTokenStore));
    cfg.transport_config(transport());
    Ok(cfg)
}

fn server_config(c: Config) -> Result<Arc<ServerConfig>> {
    let tls = super::rustls::server_config(c)?;
    let quic = quinn_proto::crypto::rustls::QuicServerConfig::try_from(tls)
        .map_err(|e| anyhow!("quinn server: {e}"))?;
    let mut cfg = ServerConfig::with_crypto(Arc::new(quic));
    // No NEW_TOKEN frames: the next connection is a first contact too.
    cfg.validation_token.sent(0);
    cfg.transport_config(transport());
    Ok(Arc::new(cfg))
}

/// quinn's defaults, with an idle timeout as the TCP stacks' socket timeouts.
fn transport() -> Arc<quinn_proto::TransportConfig> {
    let mut t = quinn_proto::TransportConfig::default();
    t.max_idle_timeout(VarInt::from_u64(super::tls::io_timeout().as_millis() as u64)
        .ok()
        .map(Into::into));
    Arc::new(t)
}

fn endpoint(server: Option<Arc<ServerConfig>>) -> Endpoint {
    Endpoint::new(Arc::new(EndpointConfig::default()), server, false, None)
}

/// What the client saw of one connection on the wire, UDP payload bytes.
#[derive(Debug, Default, Clone, Copy)]
struct Wire {
    sent: u64,
    received: u64,
    /// The datagrams of the client's first flight (before it received anything), and their bytes.
    first_datagrams: u64,
    first_bytes: u64,
    /// Received when the handshake completed.
    flight_datagrams: u64,
    flight_bytes: u64,
}

/// One connection of the client: its endpoint, socket and state.
struct Conn {
    endpoint: Endpoint,
    handle: ConnectionHandle,
    conn: quinn_proto::Connection,
    sock: UdpSocket,
    buf: Vec<u8>,
    wire: Wire,
    heard: bool,
}

impl Conn {
    fn open(cfg: &ClientConfig, addr: SocketAddr) -> Result<Conn> {
        let bind: SocketAddr = if addr.is_ipv4() {
            "0.0.0.0:0".parse()?
        } else {
            "[::]:0".parse()?
        };
        let sock = UdpSocket::bind(bind)?;
        let mut endpoint = endpoint(None);
        let (handle, conn) = endpoint
            .connect(Instant::now(), cfg.clone(), addr, "localhost")
            .map_err(|e| anyhow!("quinn connect: {e}"))?;
        Ok(Conn {
            endpoint,
            handle,
            conn,
            sock,
            buf: Vec::with_capacity(DATAGRAM),
            wire: Wire::default(),
            heard: false,
        })
    }

    /// Sends what the connection has to send, and passes its events to the endpoint and back.
    fn flush(&mut self) -> Result<()> {
        loop {
            self.buf.clear();
            let Some(t) = self.conn.poll_transmit(Instant::now(), 1, &mut self.buf) else {
                break;
            };
            self.sock.send_to(&self.buf[..t.size], t.destination)?;
            self.wire.sent += t.size as u64;
            if !self.heard {
                self.wire.first_datagrams += 1;
                self.wire.first_bytes += t.size as u64;
            }
        }
        while let Some(ev) = self.conn.poll_endpoint_events() {
            if let Some(back) = self.endpoint.handle_event(self.handle, ev) {
                self.conn.handle_event(back);
            }
        }
        Ok(())
    }

    /// Waits for one datagram until the connection's next timer, and handles it or the timer.
    fn wait(&mut self, rbuf: &mut [u8], deadline: Instant) -> Result<()> {
        let now = Instant::now();
        ensure!(now < deadline, "quinn: no answer in {:?}", super::tls::io_timeout());
        let until = self.conn.poll_timeout().map_or(deadline, |t| t.min(deadline));
        let wait = until.saturating_duration_since(now).max(Duration::from_micros(1));
        self.sock.set_read_timeout(Some(wait))?;
        match self.sock.recv_from(rbuf) {
            Ok((n, from)) => {
                self.heard = true;
                self.wire.received += n as u64;
                let data = BytesMut::from(&rbuf[..n]);
                self.buf.clear();
                match self
                    .endpoint
                    .handle(Instant::now(), from, None, None, data, &mut self.buf)
                {
                    Some(DatagramEvent::ConnectionEvent(_, ev)) => self.conn.handle_event(ev),
                    Some(DatagramEvent::Response(t)) => {
                        self.sock.send_to(&self.buf[..t.size], t.destination)?;
                    }
                    Some(DatagramEvent::NewConnection(_)) | None => {}
                }
            }
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                self.conn.handle_timeout(Instant::now());
            }
            Err(e) => return Err(e.into()),
        }
        Ok(())
    }

    /// Drives the connection until `done` says so from its events.
    fn drive(&mut self, mut done: impl FnMut(&mut quinn_proto::Connection, Event) -> Result<bool>) -> Result<()> {
        let deadline = Instant::now() + super::tls::io_timeout();
        let mut rbuf = vec![0u8; DATAGRAM];
        loop {
            self.flush()?;
            while let Some(ev) = self.conn.poll() {
                if let Event::ConnectionLost { reason } = &ev {
                    bail!("quinn: connection lost: {reason}");
                }
                if done(&mut self.conn, ev)? {
                    self.flush()?;
                    return Ok(());
                }
            }
            self.wait(&mut rbuf, deadline)?;
        }
    }
}

struct Client {
    plain: ClientConfig,
    noted: ClientConfig,
}

impl super::Client for Client {
    /// Connect (the first Initial), handshake until the client has the server's Finished, open a
    /// stream, echo 32 bytes, close (CONNECTION_CLOSE, not waited for).
    fn connect(&self, addr: SocketAddr, evidence: bool) -> Result<One> {
        let cpu0 = crate::alloc::thread_cpu_ns();
        let mem0 = crate::alloc::counters();
        if evidence {
            note::clear();
            super::rustls::take_peer_scheme();
        }
        let t0 = Instant::now();
        let mut c = Conn::open(if evidence { &self.noted } else { &self.plain }, addr)?;
        c.drive(|_, ev| Ok(matches!(ev, Event::Connected)))?;
        let ready = t0.elapsed();
        c.wire.flight_datagrams = c.conn.stats().udp_rx.datagrams;
        c.wire.flight_bytes = c.wire.received;
        let id = c
            .conn
            .streams()
            .open(Dir::Bi)
            .ok_or_else(|| anyhow!("quinn: no stream"))?;
        write_all(&mut c.conn, id, &super::tls::PAYLOAD)?;
        let mut back = Vec::with_capacity(32);
        c.drive(|conn, ev| {
            if let Event::Stream(StreamEvent::Readable { id: r }) = ev {
                if r == id {
                    return read_to_end(conn, id, &mut back);
                }
            }
            Ok(false)
        })?;
        ensure!(back == super::tls::PAYLOAD, "the echo differs from the payload");
        c.conn.close(Instant::now(), VarInt::from_u32(0), bytes::Bytes::new());
        c.flush()?;
        let total = t0.elapsed();
        let ev = evidence.then(|| evidence_of(&c));
        Ok(One {
            total_ns: total.as_nanos() as f64,
            ready_ns: ready.as_nanos() as f64,
            sent: c.wire.sent,
            received: c.wire.received,
            cpu_ns: crate::alloc::thread_cpu_ns() - cpu0,
            mem: crate::alloc::counters().since(mem0),
            evidence: ev,
            insitu: None,
            go_allocs: 0.0,
            go_bytes: 0.0,
        })
    }
}

/// What the evidence connection showed: the key exchanges its client made (`note`), the
/// CertificateVerify's scheme, the certificates, and the first flights' datagrams.
fn evidence_of(c: &Conn) -> Evidence {
    let chain: Vec<rustls::pki_types::CertificateDer<'static>> = c
        .conn
        .crypto_session()
        .peer_identity()
        .and_then(|p| p.downcast().ok())
        .map(|b: Box<Vec<_>>| *b)
        .unwrap_or_default();
    let n = note::take();
    Evidence {
        version: format!("QUIC v{VERSION} (TLS 1.3, RFC 9001)"),
        group: n.completed.map(|g| g.0).map(group_name).unwrap_or_default(),
        cert_key: chain
            .first()
            .map(|d| super::identity::cert_key_type(d))
            .unwrap_or_default(),
        scheme: super::rustls::take_peer_scheme(),
        chain_bytes: chain.iter().map(|d| d.len()).collect(),
        server_flight_bytes: Some(c.wire.flight_bytes),
        client_shares: n.started.clone(),
        client_share: n.started.first().copied(),
        server_share: n.completed,
        hello_retry: n.retried,
        quic: Some(QuicEvidence {
            version: VERSION,
            client_initial_datagrams: c.wire.first_datagrams,
            client_initial_bytes: c.wire.first_bytes,
            server_datagrams: c.wire.flight_datagrams,
            server_bytes: c.wire.flight_bytes,
            token: false,
        }),
        ..Evidence::default()
    }
}

/// A TLS code point's group name, as the suites name it.
fn group_name(code: u16) -> String {
    match code {
        0x001d => "X25519".into(),
        0x0017 => "secp256r1".into(),
        0x11ec => "X25519MLKEM768".into(),
        0x11eb => "SecP256r1MLKEM768".into(),
        0x0201 => "MLKEM768".into(),
        other => format!("0x{other:04x}"),
    }
}

fn write_all(conn: &mut quinn_proto::Connection, id: StreamId, data: &[u8]) -> Result<()> {
    let mut s = conn.send_stream(id);
    let n = s.write(data).map_err(|e| anyhow!("quinn write: {e}"))?;
    ensure!(n == data.len(), "quinn: wrote {n} of {} bytes", data.len());
    s.finish().map_err(|e| anyhow!("quinn finish: {e}"))?;
    Ok(())
}

/// Reads what `id` has into `out`; true once the stream is finished.
fn read_to_end(conn: &mut quinn_proto::Connection, id: StreamId, out: &mut Vec<u8>) -> Result<bool> {
    let mut s = conn.recv_stream(id);
    let mut chunks = s.read(true).map_err(|e| anyhow!("quinn read: {e}"))?;
    let finished = loop {
        match chunks.next(usize::MAX) {
            Ok(Some(c)) => out.extend_from_slice(&c.bytes),
            Ok(None) => break true,
            Err(quinn_proto::ReadError::Blocked) => break false,
            Err(e) => {
                let _ = chunks.finalize();
                bail!("quinn read: {e}");
            }
        }
    };
    let _ = chunks.finalize();
    Ok(finished)
}

/// The server loop: every connection on one socket; each stream the client opens is echoed back
/// and finished; a connection the client has closed counts as served.
fn serve(sock: &UdpSocket, cfg: Arc<ServerConfig>, served: &AtomicU64) -> Result<()> {
    let mut ep = endpoint(Some(cfg));
    let mut conns: HashMap<ConnectionHandle, (quinn_proto::Connection, bool)> = HashMap::new();
    let mut buf = Vec::with_capacity(DATAGRAM);
    let mut rbuf = vec![0u8; DATAGRAM];
    loop {
        let next = conns.values_mut().filter_map(|(c, _)| c.poll_timeout()).min();
        let wait = next.map_or(Duration::from_secs(1), |t| {
            t.saturating_duration_since(Instant::now())
                .max(Duration::from_micros(1))
        });
        sock.set_read_timeout(Some(wait))?;
        match sock.recv_from(&mut rbuf) {
            Ok((n, from)) => {
                buf.clear();
                let data = BytesMut::from(&rbuf[..n]);
                match ep.handle(Instant::now(), from, None, None, data, &mut buf) {
                    Some(DatagramEvent::ConnectionEvent(h, ev)) => {
                        if let Some((c, _)) = conns.get_mut(&h) {
                            c.handle_event(ev);
                        }
                    }
                    Some(DatagramEvent::NewConnection(incoming)) => {
                        buf.clear();
                        match ep.accept(incoming, Instant::now(), &mut buf, None) {
                            Ok((h, c)) => {
                                conns.insert(h, (c, false));
                            }
                            Err(e) => {
                                if let Some(t) = e.response {
                                    let _ = sock.send_to(&buf[..t.size], t.destination);
                                }
                            }
                        }
                    }
                    Some(DatagramEvent::Response(t)) => {
                        let _ = sock.send_to(&buf[..t.size], t.destination);
                    }
                    None => {}
                }
            }
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(e) => return Err(e.into()),
        }
        let now = Instant::now();
        let mut gone = Vec::new();
        for (&h, (c, echoed)) in conns.iter_mut() {
            if c.poll_timeout().is_some_and(|t| t <= now) {
                c.handle_timeout(now);
            }
            while let Some(ev) = c.poll() {
                match ev {
                    Event::Stream(StreamEvent::Opened { dir: Dir::Bi }) => {
                        while let Some(id) = c.streams().accept(Dir::Bi) {
                            *echoed |= echo_back(c, id);
                        }
                    }
                    Event::Stream(StreamEvent::Readable { id }) => *echoed |= echo_back(c, id),
                    Event::ConnectionLost { .. } if *echoed => {
                        *echoed = false;
                        served.fetch_add(1, std::sync::atomic::Ordering::Release);
                    }
                    _ => {}
                }
            }
            loop {
                buf.clear();
                let Some(t) = c.poll_transmit(now, 1, &mut buf) else { break };
                let _ = sock.send_to(&buf[..t.size], t.destination);
            }
            while let Some(ev) = c.poll_endpoint_events() {
                let drained = ev.is_drained();
                if let Some(back) = ep.handle_event(h, ev) {
                    c.handle_event(back);
                }
                if drained {
                    gone.push(h);
                }
            }
        }
        for h in gone {
            conns.remove(&h);
        }
    }
}

/// The server's side of the echo: once the client's stream is finished, the same bytes back and
/// finished; true when it was.
fn echo_back(c: &mut quinn_proto::Connection, id: StreamId) -> bool {
    let mut got = Vec::new();
    read_to_end(c, id, &mut got).unwrap_or(false) && write_all(c, id, &got).is_ok()
}

/// Client and server endpoints in one thread, datagrams passed through memory.
struct InMemory {
    client: ClientConfig,
    noted: ClientConfig,
    server: Arc<ServerConfig>,
    group: String,
}

impl Pair for InMemory {
    /// The handshake until both sides are connected and nothing is left to send; with `check`,
    /// the group the client completed is the scenario's.
    fn handshake(&self, check: bool) -> Result<Sample> {
        let client_addr: SocketAddr = "127.0.0.1:40001".parse()?;
        let server_addr: SocketAddr = "127.0.0.1:40002".parse()?;
        if check {
            note::clear();
        }
        let (mut tc, mut ts) = (Duration::ZERO, Duration::ZERO);
        let start = Instant::now();
        let mut sep = side(&mut ts, || endpoint(Some(self.server.clone())));
        let mut cep = side(&mut tc, || endpoint(None));
        let cfg = if check { &self.noted } else { &self.client };
        let (ch, mut cc) = side(&mut tc, || {
            cep.connect(Instant::now(), cfg.clone(), server_addr, "localhost")
        })
        .map_err(|e| anyhow!("quinn connect: {e}"))?;
        let mut server: Option<(ConnectionHandle, quinn_proto::Connection)> = None;
        let (mut c_up, mut s_up) = (false, false);
        let mut buf = Vec::with_capacity(DATAGRAM);
        for _ in 0..64 {
            // Client to server.
            let mut out = Vec::new();
            side(&mut tc, || {
                poll_out(&mut cc, &mut buf, &mut out);
                events(&mut cep, ch, &mut cc);
                while let Some(ev) = cc.poll() {
                    c_up |= matches!(ev, Event::Connected);
                }
            });
            let to_server = out.len();
            side(&mut ts, || -> Result<()> {
                for d in out {
                    buf.clear();
                    match sep.handle(Instant::now(), client_addr, None, None, d, &mut buf) {
                        Some(DatagramEvent::NewConnection(i)) => {
                            buf.clear();
                            let (h, c) = sep
                                .accept(i, Instant::now(), &mut buf, None)
                                .map_err(|e| anyhow!("quinn accept: {}", e.cause))?;
                            server = Some((h, c));
                        }
                        Some(DatagramEvent::ConnectionEvent(_, ev)) => {
                            if let Some((_, s)) = server.as_mut() {
                                s.handle_event(ev);
                            }
                        }
                        _ => {}
                    }
                }
                Ok(())
            })?;
            // Server to client.
            let mut back = Vec::new();
            if let Some((sh, s)) = server.as_mut() {
                side(&mut ts, || {
                    while let Some(ev) = s.poll() {
                        s_up |= matches!(ev, Event::Connected);
                    }
                    poll_out(s, &mut buf, &mut back);
                    events(&mut sep, *sh, s);
                });
            }
            let to_client = back.len();
            side(&mut tc, || {
                for d in back {
                    buf.clear();
                    if let Some(DatagramEvent::ConnectionEvent(_, ev)) =
                        cep.handle(Instant::now(), server_addr, None, None, d, &mut buf)
                    {
                        cc.handle_event(ev);
                    }
                }
                while let Some(ev) = cc.poll() {
                    c_up |= matches!(ev, Event::Connected);
                }
            });
            if to_server == 0 && to_client == 0 && !(c_up && s_up) {
                // Nothing moved: the next timer (a pacing delay, an ACK delay) is due first.
                let next = [cc.poll_timeout(), server.as_mut().and_then(|s| s.1.poll_timeout())];
                let Some(t) = next.into_iter().flatten().min() else {
                    bail!("quinn: the in-memory handshake stalled with no timer");
                };
                std::thread::sleep(t.saturating_duration_since(Instant::now()));
                let now = Instant::now();
                side(&mut tc, || cc.handle_timeout(now));
                if let Some((_, s)) = server.as_mut() {
                    side(&mut ts, || s.handle_timeout(now));
                }
                continue;
            }
            if c_up && s_up && to_server == 0 && to_client == 0 {
                let wall = start.elapsed();
                if check {
                    let got = note::take().completed.map(|g| group_name(g.0));
                    ensure!(
                        got.as_deref().map(super::tls::norm) == Some(super::tls::norm(&self.group)),
                        "quinn negotiated {got:?}, expected {}",
                        self.group
                    );
                }
                return Ok(Sample {
                    client_ns: tc.as_nanos() as u64,
                    server_ns: ts.as_nanos() as u64,
                    wall_ns: wall.as_nanos() as u64,
                });
            }
        }
        bail!("quinn: the in-memory handshake did not finish in 64 exchanges")
    }
}

/// Every datagram the connection has to send now, into `out`.
fn poll_out(c: &mut quinn_proto::Connection, buf: &mut Vec<u8>, out: &mut Vec<BytesMut>) {
    loop {
        buf.clear();
        let Some(t) = c.poll_transmit(Instant::now(), 1, buf) else {
            break;
        };
        out.push(BytesMut::from(&buf[..t.size]));
    }
}

/// The connection's events for its endpoint, and the endpoint's answers.
fn events(ep: &mut Endpoint, h: ConnectionHandle, c: &mut quinn_proto::Connection) {
    while let Some(ev) = c.poll_endpoint_events() {
        if let Some(back) = ep.handle_event(h, ev) {
            c.handle_event(back);
        }
    }
}

/// Key exchanges that note what they do, for the evidence: the shares a client starts (code
/// point, bytes) and the one it completes with the server's share; a group started after the
/// first ClientHello was sent answers a HelloRetryRequest. Thread-local: a client's connection
/// runs in one thread.
mod note {
    use rustls::crypto::{ActiveKeyExchange, SharedSecret, SupportedKxGroup};
    use rustls::ffdhe_groups::FfdheGroup;
    use rustls::{Error, NamedGroup, ProtocolVersion};
    use std::cell::RefCell;

    #[derive(Debug, Default, Clone)]
    pub struct Noted {
        /// (code point, bytes) of each share started, in order.
        pub started: Vec<(u16, usize)>,
        /// (code point, bytes of the server's share) of the exchange completed.
        pub completed: Option<(u16, usize)>,
        pub retried: bool,
    }

    thread_local! {
        static NOTED: RefCell<Noted> = RefCell::new(Noted::default());
    }

    pub fn clear() {
        NOTED.with(|n| *n.borrow_mut() = Noted::default());
    }

    pub fn take() -> Noted {
        NOTED.with(|n| std::mem::take(&mut *n.borrow_mut()))
    }

    pub fn wrap(g: &'static dyn SupportedKxGroup) -> &'static dyn SupportedKxGroup {
        Box::leak(Box::new(Noting(g)))
    }

    #[derive(Debug)]
    struct Noting(&'static dyn SupportedKxGroup);

    impl SupportedKxGroup for Noting {
        fn start(&self) -> Result<Box<dyn ActiveKeyExchange>, Error> {
            let inner = self.0.start()?;
            let share = (u16::from(self.0.name()), inner.pub_key().len());
            NOTED.with(|n| {
                let mut n = n.borrow_mut();
                n.retried |= !n.started.is_empty() && n.started.iter().all(|s| s.0 != share.0);
                n.started.push(share);
            });
            Ok(Box::new(Active(inner)))
        }
        fn ffdhe_group(&self) -> Option<FfdheGroup<'static>> {
            self.0.ffdhe_group()
        }
        fn name(&self) -> NamedGroup {
            self.0.name()
        }
        fn fips(&self) -> bool {
            self.0.fips()
        }
        fn usable_for_version(&self, v: ProtocolVersion) -> bool {
            self.0.usable_for_version(v)
        }
    }

    struct Active(Box<dyn ActiveKeyExchange>);

    impl ActiveKeyExchange for Active {
        fn complete(self: Box<Self>, peer: &[u8]) -> Result<SharedSecret, Error> {
            let done = (u16::from(self.0.group()), peer.len());
            let r = self.0.complete(peer)?;
            NOTED.with(|n| n.borrow_mut().completed = Some(done));
            Ok(r)
        }
        fn pub_key(&self) -> &[u8] {
            self.0.pub_key()
        }
        fn ffdhe_group(&self) -> Option<FfdheGroup<'static>> {
            self.0.ffdhe_group()
        }
        fn group(&self) -> NamedGroup {
            self.0.group()
        }
    }
}
