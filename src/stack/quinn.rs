//! quinn-proto 0.11 (QUIC v1, RFC 9000 and 9001) over rustls 0.23 and aws-lc-rs: the TLS 1.3
//! handshakes of `rustls.rs`, the same configurations and certificates, carried in QUIC packets
//! over UDP. quinn-proto is sans-IO, so this file is its I/O: a blocking loop over one UDP socket
//! per client connection, one socket and every connection for the server, and for the in-memory
//! pair two endpoints passing datagrams through memory.
//!
//! In a full handshake the client offers no address-validation token and the server issues none,
//! so every connection is a first contact: the server may send at most three times the bytes it
//! has received until the client's first Handshake packet validates the address (RFC 9000 section
//! 8.1). With `Mode::Token` the server sends two NEW_TOKEN frames a connection and the client
//! presents one in the next connection's first Initial (section 8.1.3); with `Mode::Retry` the
//! server answers each first Initial with a Retry (section 8.1.2). The client's Initial datagrams
//! are padded to 1,200 bytes (section 14.1).

use super::quic_wire::Wire;
use super::{side, Acceptor, Availability, Config, Features, One, Pair, Sample, TlsStack};
use crate::results::{Evidence, Mode, Transport};
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

pub(crate) struct Quinn;

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

    /// In situ, rustls's timing provider as over TCP (`Config::wrapped`), unarmed a configuration
    /// of its own.
    fn features(&self) -> Features {
        Features {
            in_situ: true,
            unarmed_wrapper: true,
            in_memory: true,
            network: true,
            address_validation: true,
            ..Features::default()
        }
    }

    /// rustls's labels: its timing provider makes every call.
    fn call_phases(&self) -> Vec<crate::results::CallPhases> {
        super::rustls::Rustls.call_phases()
    }

    fn cannot(&self, m: Mode) -> String {
        format!(
            "the {} handshake is not built for QUIC yet: quinn makes full handshakes, with a \
             NEW_TOKEN token and after a Retry (#35)",
            m.suffix()
        )
    }

    /// Every group rustls negotiates.
    fn availability(&self) -> Result<Availability> {
        Ok(Availability {
            version: "quinn-proto 0.11 (rustls 0.23, aws-lc-rs)".into(),
            groups: None,
            auths: None,
            refused: Vec::new(),
        })
    }

    fn client(&self, c: Config) -> Result<Box<dyn super::Client>> {
        ensure!(
            matches!(c.mode, Mode::Full | Mode::Token | Mode::Retry),
            "quinn: {} are not built",
            c.mode.described()
        );
        // With tokens, the evidence connection presents one that a plain connection brought.
        let tokens: Arc<dyn quinn_proto::TokenStore> = if c.mode == Mode::Token {
            Arc::new(quinn_proto::TokenMemoryCache::default())
        } else {
            Arc::new(quinn_proto::NoneTokenStore)
        };
        Ok(Box::new(Client {
            plain: client_config(c, false, tokens.clone())?,
            noted: client_config(c, true, tokens)?,
            armed: c.armed,
        }))
    }

    fn pair(&self, c: Config) -> Result<Box<dyn Pair>> {
        ensure!(c.mode == Mode::Full, "quinn: only full handshakes in memory");
        let none = || Arc::new(quinn_proto::NoneTokenStore);
        Ok(Box::new(InMemory {
            client: client_config(c, false, none())?,
            noted: client_config(c, true, none())?,
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
        sink: Option<&'static super::Sink>,
        _concurrent: bool,
    ) -> Result<()> {
        let (sock, _held) = listener.udp()?;
        serve(&sock, server_config(c)?, served, c.mode == Mode::Retry, sink)
    }

    fn acceptor(&self, _c: Config) -> Result<Box<dyn Acceptor>> {
        bail!("quinn serves over UDP, not from a TCP acceptor")
    }
}

/// The client's QUIC configuration: rustls's, over a provider whose key exchanges note their
/// shares (`noted`, for the connection that records evidence) or rustls's own; `tokens` keeps the
/// NEW_TOKEN tokens servers send (`Mode::Token`) or none.
fn client_config(
    c: Config,
    noted: bool,
    tokens: Arc<dyn quinn_proto::TokenStore>,
) -> Result<ClientConfig> {
    let provider = super::rustls::provider(c)?;
    let provider = if noted {
        let mut p = (*provider).clone();
        p.kx_groups = p.kx_groups.into_iter().map(note::wrap).collect();
        Arc::new(p)
    } else {
        provider
    };
    let mut tls = (*super::rustls::client_config_with(c, provider)?).clone();
    tls.alpn_protocols = vec![super::quic_wire::ALPN.to_vec()];
    let quic = quinn_proto::crypto::rustls::QuicClientConfig::try_from(Arc::new(tls))
        .map_err(|e| anyhow!("quinn client: {e}"))?;
    let mut cfg = ClientConfig::new(Arc::new(quic));
    cfg.token_store(tokens);
    cfg.transport_config(transport());
    Ok(cfg)
}

fn server_config(c: Config) -> Result<Arc<ServerConfig>> {
    let mut tls = (*super::rustls::server_config(c)?).clone();
    tls.alpn_protocols = vec![super::quic_wire::ALPN.to_vec()];
    let quic = quinn_proto::crypto::rustls::QuicServerConfig::try_from(Arc::new(tls))
        .map_err(|e| anyhow!("quinn server: {e}"))?;
    let mut cfg = ServerConfig::with_crypto(Arc::new(quic));
    if c.mode == Mode::Token {
        // quinn's default: two tokens a connection, each good once.
        cfg.validation_token
            .sent(2)
            .log(Arc::new(OnceLog(std::sync::Mutex::default())));
    } else {
        // No NEW_TOKEN frames: the next connection is a first contact too.
        cfg.validation_token.sent(0);
    }
    cfg.transport_config(transport());
    Ok(Arc::new(cfg))
}

/// The server's record of the NEW_TOKEN tokens presented: each is accepted once (RFC 9000 section
/// 8.1.4 asks that a token not validate twice). quinn's own, a Bloom filter, is a feature this
/// build leaves out; a set is exact for the connections a run makes.
struct OnceLog(std::sync::Mutex<std::collections::HashSet<u128>>);

impl quinn_proto::TokenLog for OnceLog {
    fn check_and_insert(
        &self,
        nonce: u128,
        _issued: std::time::SystemTime,
        _lifetime: Duration,
    ) -> std::result::Result<(), quinn_proto::TokenReuseError> {
        let mut seen = self
            .0
            .lock()
            .map_err(|_| quinn_proto::TokenReuseError)?;
        if seen.insert(nonce) {
            Ok(())
        } else {
            Err(quinn_proto::TokenReuseError)
        }
    }
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
    // No path MTU discovery: datagrams stay at QUIC's 1,200 bytes (the methodology says so).
    let allow_mtud = false;
    Endpoint::new(Arc::new(EndpointConfig::default()), server, allow_mtud, None)
}

/// A nonblocking UDP socket on an ephemeral port of `addr`'s family.
fn client_socket(addr: SocketAddr) -> Result<UdpSocket> {
    let any: SocketAddr = if addr.is_ipv4() {
        (std::net::Ipv4Addr::UNSPECIFIED, 0).into()
    } else {
        (std::net::Ipv6Addr::UNSPECIFIED, 0).into()
    };
    let sock = UdpSocket::bind(any)?;
    sock.set_nonblocking(true)?;
    Ok(sock)
}

/// Waits until `sock` has a datagram or `until` comes, to the nanosecond (a socket's receive
/// timeout would round up to the kernel's tick, 1-4 ms, and wake timers late).
fn readable(sock: &UdpSocket, until: Instant) -> Result<()> {
    use std::os::fd::AsRawFd;
    let wait = until.saturating_duration_since(Instant::now());
    let ts = libc::timespec {
        tv_sec: wait.as_secs() as libc::time_t,
        tv_nsec: wait.subsec_nanos() as libc::c_long,
    };
    let mut fd = libc::pollfd {
        fd: sock.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd and a valid timespec, for the duration of the call; no signal mask.
    let n = unsafe { libc::ppoll(&mut fd, 1, &ts, std::ptr::null()) };
    if n < 0 {
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e.into());
        }
    }
    Ok(())
}

/// The next datagram on a nonblocking socket, if one is there.
fn receive(sock: &UdpSocket, buf: &mut [u8]) -> Result<Option<(usize, SocketAddr)>> {
    match sock.recv_from(buf) {
        Ok(d) => Ok(Some(d)),
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// A connection's datagrams to send now, each passed to `send` with its size, until it has none.
fn transmit(
    c: &mut quinn_proto::Connection,
    buf: &mut Vec<u8>,
    mut send: impl FnMut(&[u8], SocketAddr) -> Result<()>,
) -> Result<()> {
    loop {
        buf.clear();
        let Some(t) = c.poll_transmit(Instant::now(), 1, buf) else {
            return Ok(());
        };
        send(&buf[..t.size], t.destination)?;
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

/// A client thread's datagram buffers, made once and lent to each of its connections outside the
/// timed region: what a QUIC client keeps with its socket, not what a connection costs.
struct Buffers {
    send: Vec<u8>,
    recv: Vec<u8>,
}

thread_local! {
    static BUFFERS: std::cell::RefCell<Option<Buffers>> = const { std::cell::RefCell::new(None) };
}

impl Buffers {
    fn take() -> Buffers {
        BUFFERS
            .with(|b| b.borrow_mut().take())
            .unwrap_or_else(|| Buffers {
                send: Vec::with_capacity(DATAGRAM),
                recv: vec![0; DATAGRAM],
            })
    }

    fn give_back(self) {
        BUFFERS.with(|b| *b.borrow_mut() = Some(self));
    }
}

/// One connection of the client: its endpoint, socket and state.
struct Conn {
    endpoint: Endpoint,
    handle: ConnectionHandle,
    conn: quinn_proto::Connection,
    sock: UdpSocket,
    bufs: Buffers,
    wire: Wire,
}

impl Conn {
    /// Sends what the connection has to send, and passes its events to the endpoint and back.
    fn flush(&mut self) -> Result<()> {
        let (sock, wire) = (&self.sock, &mut self.wire);
        transmit(&mut self.conn, &mut self.bufs.send, |d, to| {
            sock.send_to(d, to)?;
            wire.sent(d);
            Ok(())
        })?;
        events(&mut self.endpoint, self.handle, &mut self.conn);
        Ok(())
    }

    /// Waits for datagrams until the connection's next timer, handles every one there, then the
    /// timer if it is due.
    fn wait(&mut self, deadline: Instant) -> Result<()> {
        ensure!(
            Instant::now() < deadline,
            "quinn: no answer in {:?}",
            super::tls::io_timeout()
        );
        let until = self.conn.poll_timeout().map_or(deadline, |t| t.min(deadline));
        readable(&self.sock, until)?;
        while let Some((n, from)) = receive(&self.sock, &mut self.bufs.recv)? {
            let d = &self.bufs.recv[..n];
            self.wire.received(d);
            self.bufs.send.clear();
            let data = BytesMut::from(d);
            match self
                .endpoint
                .handle(Instant::now(), from, None, None, data, &mut self.bufs.send)
            {
                Some(DatagramEvent::ConnectionEvent(_, ev)) => self.conn.handle_event(ev),
                Some(DatagramEvent::Response(t)) => {
                    let d = &self.bufs.send[..t.size];
                    self.sock.send_to(d, t.destination)?;
                    self.wire.sent(d);
                }
                Some(DatagramEvent::NewConnection(_)) | None => {}
            }
        }
        let now = Instant::now();
        if self.conn.poll_timeout().is_some_and(|t| t <= now) {
            self.conn.handle_timeout(now);
        }
        Ok(())
    }

    /// Drives the connection until `done` says so from its events.
    fn drive(
        &mut self,
        mut done: impl FnMut(&mut quinn_proto::Connection, Event) -> Result<bool>,
    ) -> Result<()> {
        let deadline = Instant::now() + super::tls::io_timeout();
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
            self.wait(deadline)?;
        }
    }
}

struct Client {
    plain: ClientConfig,
    noted: ClientConfig,
    /// Arms the in-situ recorder around each connection, as `tls::measure_connection` does.
    armed: bool,
}

impl super::Client for Client {
    /// From the UDP socket and the first Initial until the client has verified the server's
    /// Finished (its `Connected` event), then a stream with the 32-byte echo, then close
    /// (CONNECTION_CLOSE, not waited for). The endpoint (its random seed, its keys for stateless
    /// resets) and the datagram buffers are made before the clock starts: a client keeps them
    /// across connections.
    fn connect(&self, addr: SocketAddr, evidence: bool) -> Result<One> {
        if evidence {
            note::clear();
            super::rustls::take_peer_scheme();
        }
        let cfg = if evidence { &self.noted } else { &self.plain };
        let mut endpoint = endpoint(None);
        let bufs = Buffers::take();
        let cpu0 = crate::alloc::thread_cpu_ns();
        let mem0 = crate::alloc::counters();
        if self.armed {
            crate::insitu::arm();
        }
        let (t0, started_ns) = crate::alloc::start_clock();
        // Everything between arming and taking runs in one expression, so that a socket or a
        // connect that fails still ends with `take`: a thread left armed would time every wrapped
        // call of the process after it.
        let made = client_socket(addr).and_then(|sock| {
            let (handle, conn) = endpoint
                .connect(Instant::now(), cfg.clone(), addr, "localhost")
                .map_err(|e| anyhow!("quinn connect: {e}"))?;
            let mut c = Conn {
                endpoint,
                handle,
                conn,
                sock,
                bufs,
                wire: Wire::default(),
            };
            let r = exchange(&mut c, t0);
            Ok((c, r))
        });
        let total = t0.elapsed();
        let insitu = self.armed.then(crate::insitu::take);
        let (cpu, mem) = (
            crate::alloc::thread_cpu_ns() - cpu0,
            crate::alloc::counters().since(mem0),
        );
        let (c, r) = made?;
        let port = c.sock.local_addr().map_or(0, |a| a.port());
        let ready = r?;
        let ev = evidence.then(|| evidence_of(&c));
        let wire = c.wire;
        c.bufs.give_back();
        Ok(One {
            total_ns: total.as_nanos() as f64,
            ready_ns: ready.as_nanos() as f64,
            sent: wire.sent,
            received: wire.received,
            cpu_ns: cpu,
            mem,
            evidence: ev,
            insitu,
            go_allocs: 0.0,
            go_bytes: 0.0,
            port,
            started_ns,
            resumed: None,
        })
    }
}

/// The handshake, the echo and the close of one client connection: the time from `t0` until its
/// handshake completed.
fn exchange(c: &mut Conn, t0: Instant) -> Result<Duration> {
    c.drive(|_, ev| Ok(matches!(ev, Event::Connected)))?;
    let ready = t0.elapsed();
    c.wire.handshake_done();
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
    ensure!(
        back == super::tls::PAYLOAD,
        "the echo differs from the payload"
    );
    c.conn
        .close(Instant::now(), VarInt::from_u32(0), bytes::Bytes::new());
    c.flush()?;
    Ok(ready)
}

/// What the evidence connection showed: the key exchanges its client made (`note`), the
/// CertificateVerify's scheme, the certificates, the version the server's first long header
/// carried, and the first flights' datagrams.
fn evidence_of(c: &Conn) -> Evidence {
    let chain: Vec<rustls::pki_types::CertificateDer<'static>> = c
        .conn
        .crypto_session()
        .peer_identity()
        .and_then(|p| p.downcast().ok())
        .map(|b: Box<Vec<_>>| *b)
        .unwrap_or_default();
    let n = note::take();
    let version = c.wire.version.unwrap_or(0);
    Evidence {
        // QUIC version 1 carries TLS 1.3 only (RFC 9001 section 4.2).
        version: super::quic_wire::version_name(version),
        group: n
            .completed
            .map(|g| format!("{:?}", rustls::NamedGroup::from(g.0)))
            .unwrap_or_default(),
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
        quic: Some(super::quic_wire::quic_evidence(&c.wire, version)),
        ..Evidence::default()
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
fn read_to_end(
    conn: &mut quinn_proto::Connection,
    id: StreamId,
    out: &mut Vec<u8>,
) -> Result<bool> {
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

/// A connection the server holds: its streams' bytes so far, and whether it echoed one.
struct Held {
    conn: quinn_proto::Connection,
    streams: HashMap<StreamId, Vec<u8>>,
    echoed: bool,
}

impl Held {
    /// Reads stream `id`; once the client has finished it, the same bytes back, finished.
    fn echo(&mut self, id: StreamId) {
        let got = self.streams.entry(id).or_default();
        if read_to_end(&mut self.conn, id, got).unwrap_or(false) {
            let got = self.streams.remove(&id).unwrap_or_default();
            self.echoed |= write_all(&mut self.conn, id, &got).is_ok();
        }
    }
}

/// The server loop: every connection on one socket. Each datagram goes to its connection, and
/// only the connections a datagram or a due timer touched are polled. Each stream a client opens
/// is echoed back; a connection the client closed after its echo counts as served. With `retry`,
/// a first Initial whose address no token validates is answered with a Retry.
///
/// With a `sink` (in situ), each datagram's handling and each connection's turn is a window of
/// its own, armed and taken, and added to the record of the connection it was for (`Windows`);
/// a connection's record goes to the sink when it counts as served.
fn serve(
    sock: &UdpSocket,
    cfg: Arc<ServerConfig>,
    served: &AtomicU64,
    retry: bool,
    sink: Option<&super::Sink>,
) -> Result<()> {
    sock.set_nonblocking(true)?;
    let mut ep = endpoint(Some(cfg));
    // Room for the connections in flight at once on loopback (the one served and a few
    // draining), made before the first, so that keeping a record seldom allocates.
    let mut windows = Windows {
        sink,
        records: HashMap::with_capacity(64),
    };
    let mut conns: HashMap<ConnectionHandle, Held> = HashMap::new();
    let mut timers: HashMap<ConnectionHandle, Instant> = HashMap::new();
    let mut buf = Vec::with_capacity(DATAGRAM);
    let mut rbuf = vec![0u8; DATAGRAM];
    let mut touched: Vec<ConnectionHandle> = Vec::new();
    let send = |d: &[u8], to: SocketAddr| -> Result<()> {
        // A datagram the kernel refuses is a loss QUIC recovers from.
        let _ = sock.send_to(d, to);
        Ok(())
    };
    loop {
        let next = timers.values().min().copied();
        readable(sock, next.unwrap_or_else(|| Instant::now() + Duration::from_secs(1)))?;
        touched.clear();
        while let Some((n, from)) = receive(sock, &mut rbuf)? {
            buf.clear();
            let data = BytesMut::from(&rbuf[..n]);
            windows.open();
            let mut this = None;
            match ep.handle(Instant::now(), from, None, None, data, &mut buf) {
                Some(DatagramEvent::ConnectionEvent(h, ev)) => {
                    if let Some(c) = conns.get_mut(&h) {
                        c.conn.handle_event(ev);
                        touched.push(h);
                        this = Some(h);
                    }
                }
                Some(DatagramEvent::NewConnection(incoming))
                    if retry && !incoming.remote_address_validated() =>
                {
                    buf.clear();
                    match ep.retry(incoming, &mut buf) {
                        Ok(t) => send(&buf[..t.size], t.destination)?,
                        // Not when the Initial answers a Retry already (`may_retry`).
                        Err(e) => ep.ignore(e.into_incoming()),
                    }
                }
                Some(DatagramEvent::NewConnection(incoming)) => {
                    buf.clear();
                    match ep.accept(incoming, Instant::now(), &mut buf, None) {
                        Ok((h, conn)) => {
                            conns.insert(
                                h,
                                Held {
                                    conn,
                                    streams: HashMap::new(),
                                    echoed: false,
                                },
                            );
                            touched.push(h);
                            this = Some(h);
                        }
                        Err(e) => {
                            if let Some(t) = e.response {
                                send(&buf[..t.size], t.destination)?;
                            }
                        }
                    }
                }
                Some(DatagramEvent::Response(t)) => send(&buf[..t.size], t.destination)?,
                None => {}
            }
            windows.close(this);
        }
        let now = Instant::now();
        touched.extend(timers.iter().filter(|(_, &t)| t <= now).map(|(&h, _)| h));
        touched.sort_unstable();
        touched.dedup();
        for &h in &touched {
            let Some(c) = conns.get_mut(&h) else { continue };
            windows.open();
            let mut done = false;
            if c.conn.poll_timeout().is_some_and(|t| t <= now) {
                c.conn.handle_timeout(now);
            }
            while let Some(ev) = c.conn.poll() {
                match ev {
                    Event::Stream(StreamEvent::Opened { dir: Dir::Bi }) => {
                        while let Some(id) = c.conn.streams().accept(Dir::Bi) {
                            c.echo(id);
                        }
                    }
                    Event::Stream(StreamEvent::Readable { id }) => c.echo(id),
                    Event::ConnectionLost {
                        reason: quinn_proto::ConnectionError::ApplicationClosed(_),
                    } if c.echoed => {
                        c.echoed = false;
                        done = true;
                    }
                    _ => {}
                }
            }
            transmit(&mut c.conn, &mut buf, send)?;
            let mut drained = false;
            while let Some(ev) = c.conn.poll_endpoint_events() {
                drained |= ev.is_drained();
                if let Some(back) = ep.handle_event(h, ev) {
                    c.conn.handle_event(back);
                }
            }
            windows.close(Some(h));
            if done {
                // The record goes in before the count, so `stats` never sees a count without it.
                windows.keep(h)?;
                served.fetch_add(1, std::sync::atomic::Ordering::Release);
            }
            match c.conn.poll_timeout() {
                _ if drained => {
                    conns.remove(&h);
                    timers.remove(&h);
                    windows.records.remove(&h);
                }
                Some(t) => {
                    timers.insert(h, t);
                }
                None => {
                    timers.remove(&h);
                }
            }
        }
    }
}

/// The server's in-situ records while it serves (`serve`): the calls of each window, from `open`
/// to `close`, added to the record of the connection the window was for. A window for none (a
/// datagram no connection takes, or a Retry, whose Initial keys the endpoint derives) is dropped.
struct Windows<'a> {
    /// Where served connections' records go; none: not in situ, no window is armed.
    sink: Option<&'a super::Sink>,
    records: HashMap<ConnectionHandle, crate::insitu::Record>,
}

impl Windows<'_> {
    fn open(&self) {
        if self.sink.is_some() {
            crate::insitu::arm();
        }
    }

    fn close(&mut self, of: Option<ConnectionHandle>) {
        if self.sink.is_none() {
            return;
        }
        let r = crate::insitu::take();
        // A window without a call (an acknowledgement, a connection draining) makes no entry.
        if let (Some(h), false) = (of, r.is_empty()) {
            self.records.entry(h).or_default().merge(&r);
        }
    }

    /// Moves a served connection's record to the sink.
    fn keep(&mut self, h: ConnectionHandle) -> Result<()> {
        if let Some(sink) = self.sink {
            let r = self.records.remove(&h).unwrap_or_default();
            sink.lock().map_err(|_| anyhow!("poisoned"))?.push(r);
        }
        Ok(())
    }
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
    /// the group the client completed is the scenario's. Each side's calls are timed to it; the
    /// two endpoints are made before (a server keeps its endpoint across connections).
    fn handshake(&self, check: bool) -> Result<Sample> {
        let client_addr: SocketAddr = "127.0.0.1:40001".parse()?;
        let server_addr: SocketAddr = "127.0.0.1:40002".parse()?;
        if check {
            note::clear();
        }
        let mut sep = endpoint(Some(self.server.clone()));
        let mut cep = endpoint(None);
        let cfg = if check { &self.noted } else { &self.client };
        let mut buf = Vec::with_capacity(DATAGRAM);
        let (mut tc, mut ts) = (Duration::ZERO, Duration::ZERO);
        let start = Instant::now();
        let (ch, mut cc) = side(&mut tc, || {
            cep.connect(Instant::now(), cfg.clone(), server_addr, "localhost")
        })
        .map_err(|e| anyhow!("quinn connect: {e}"))?;
        let mut server: Option<(ConnectionHandle, quinn_proto::Connection)> = None;
        let (mut c_up, mut s_up) = (false, false);
        for _ in 0..64 {
            // Client to server.
            let mut out = Vec::new();
            side(&mut tc, || -> Result<()> {
                transmit(&mut cc, &mut buf, |d, _| {
                    out.push(BytesMut::from(d));
                    Ok(())
                })?;
                events(&mut cep, ch, &mut cc);
                while let Some(ev) = cc.poll() {
                    c_up |= matches!(ev, Event::Connected);
                }
                Ok(())
            })?;
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
                side(&mut ts, || -> Result<()> {
                    while let Some(ev) = s.poll() {
                        s_up |= matches!(ev, Event::Connected);
                    }
                    transmit(s, &mut buf, |d, _| {
                        back.push(BytesMut::from(d));
                        Ok(())
                    })?;
                    events(&mut sep, *sh, s);
                    Ok(())
                })?;
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
            let moved = to_server + to_client > 0;
            if c_up && s_up && !moved {
                let wall = start.elapsed();
                if check {
                    let got = note::take()
                        .completed
                        .map(|g| format!("{:?}", rustls::NamedGroup::from(g.0)));
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
                    resumed: false,
                });
            }
            if !moved {
                // Nothing moved: the next timer (a pacing delay, an ACK delay) is due first.
                let next = [
                    cc.poll_timeout(),
                    server.as_mut().and_then(|s| s.1.poll_timeout()),
                ];
                let Some(t) = next.into_iter().flatten().min() else {
                    bail!("quinn: the in-memory handshake stalled with no timer");
                };
                std::thread::sleep(t.saturating_duration_since(Instant::now()));
                let now = Instant::now();
                side(&mut tc, || cc.handle_timeout(now));
                if let Some((_, s)) = server.as_mut() {
                    side(&mut ts, || s.handle_timeout(now));
                }
            }
        }
        bail!("quinn: the in-memory handshake did not finish in 64 exchanges")
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
    pub(crate) struct Noted {
        /// (code point, bytes) of each share started, in order.
        pub(crate) started: Vec<(u16, usize)>,
        /// (code point, bytes of the server's share) of the exchange completed.
        pub(crate) completed: Option<(u16, usize)>,
        pub(crate) retried: bool,
    }

    thread_local! {
        static NOTED: RefCell<Noted> = RefCell::new(Noted::default());
    }

    pub(crate) fn clear() {
        NOTED.with(|n| *n.borrow_mut() = Noted::default());
    }

    pub(crate) fn take() -> Noted {
        NOTED.with(|n| std::mem::take(&mut *n.borrow_mut()))
    }

    /// `g`, noting its calls; one wrapper per group for the process (made once, kept).
    pub(crate) fn wrap(g: &'static dyn SupportedKxGroup) -> &'static dyn SupportedKxGroup {
        crate::stack::rustls::wrapped_once("noting", g, |g| Box::new(Noting(g)))
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
