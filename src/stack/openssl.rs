//! OpenSSL 3.5 through the `openssl` crate (libssl over the vendored libcrypto): client, server
//! and an in-memory pair for one key-exchange group at a time; in situ, libssl's calls into
//! libcrypto pass the linker wrappers of `insitu::openssl_wrap` (always: the plain and the timed
//! form are the same code, timed only while the recorder is armed).

use super::tls::{self, echo, echo_back, norm, tcp};
use super::wire::Counted;
use super::{side, Acceptor, Availability, Config, Features, One, Pair, Sample, Served, TlsStack};
use crate::results::{CallLabel, CallPhases, Evidence, Mode, Operation};
use anyhow::{anyhow, bail, ensure, Result};
use std::cell::RefCell;
use std::collections::VecDeque;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::rc::Rc;
use std::time::{Duration, Instant};

pub(crate) struct OpenSsl;

impl TlsStack for OpenSsl {
    fn name(&self) -> &'static str {
        "openssl"
    }

    fn protocol(&self) -> &'static str {
        "tls13"
    }

    fn composition(&self) -> crate::results::Stack {
        // An OpenSSL 3.5 server writes ServerHello to Certificate to the socket before it signs
        // the CertificateVerify (writes of 4,096, 8,166 and 3,413 bytes for an ML-DSA-65 flight,
        // seen with strace on 2026-12-01), so its client decapsulates and verifies the chain while
        // the server signs: those two segments of suites/flights.toml run at once. Only a flight
        // that overflows the 4,096-byte buffer libssl puts on the handshake's writes goes out
        // before the signing (ssl_init_wbio_buffer in ssl/ssl_lib.c, DEFAULT_BUFFER_SIZE in
        // crypto/bio/bf_buff.c, OpenSSL 3.5.5): an ECDSA flight waits whole for the
        // CertificateVerify, and the composition follows the handshakes' time line there
        // (figures::timeline::as_run).
        crate::results::Stack::new(
            "openssl",
            "OpenSSL 3.5 for everything, as libssl calls it",
            "openssl",
            "openssl",
            &[],
        )
        .with_overlap(&[("CertificateVerify, Finished", "ServerHello to the chain")])
        // Its client checks the chain once the Certificate is in (statem_clnt.c:
        // tls_post_process_server_certificate, before the CertificateVerify is read).
        .with_on_certificate(&["ServerHello to the chain"])
    }

    fn round_trips(&self) -> f64 {
        2.0
    }

    fn features(&self) -> Features {
        Features {
            in_situ: true,
            unarmed_wrapper: false,
            in_memory: true,
            capacity: true,
            network: true,
            under_load: false,
            resumption: true,
            hello_retry: true,
            hello_retry_classical: true,
            two_shares: true,
            address_validation: false,
        }
    }

    fn availability(&self) -> Result<Availability> {
        Ok(Availability {
            version: openssl::version::version().into(),
            groups: None,
            auths: None,
            refused: Vec::new(),
        })
    }

    /// libssl makes a hybrid group's key share, encapsulation and decapsulation in one provider
    /// call each (OpenSSL 3.5.5 `providers/implementations/keymgmt/mlx_kmgmt.c` `mlx_kem_gen`,
    /// `providers/implementations/kem/mlx_kem.c`): a hybrid key share makes both keys;
    /// encapsulating to it also makes an ECDH key and derives; decapsulating also derives. It
    /// sets the peer's share apart (`kx.import`), which the phases count in the encapsulation or
    /// the derive. `sig.verify.cert` is one `X509_verify`: one certificate's signature checked
    /// against its issuer's key, as webpki's in rustls.
    fn call_phases(&self) -> Vec<CallPhases> {
        use Operation::*;
        let import = Some(CallLabel::KxImport.name().to_string());
        let row = |l: CallLabel, operations: Vec<Operation>, with: Option<String>| CallPhases {
            label: l.name().into(),
            operations,
            with,
        };
        vec![
            row(CallLabel::KemKeygen, vec![KemKeygen], None),
            row(CallLabel::KemEncaps, vec![KemEncaps], None),
            row(CallLabel::KemDecaps, vec![KemDecaps], None),
            row(CallLabel::DhKeygen, vec![DhKeygen], None),
            row(CallLabel::DhDerive, vec![DhDerive], import.clone()),
            row(CallLabel::KxKeygen, vec![KemKeygen, DhKeygen], None),
            row(
                CallLabel::KxEncaps,
                vec![KemEncaps, DhKeygen, DhDerive],
                import,
            ),
            row(CallLabel::KxDecaps, vec![KemDecaps, DhDerive], None),
            row(CallLabel::SigSign, vec![SigSign], None),
            row(CallLabel::SigVerify, vec![SigVerify], None),
            row(CallLabel::SigVerifyCert, vec![SigVerify], None),
        ]
    }

    fn client(&self, c: Config) -> Result<Box<dyn super::Client>> {
        Ok(Box::new(Client {
            connector: connector(c)?,
            armed: c.armed,
            tickets: Tickets::of(c.mode),
            http: None,
        }))
    }

    fn acceptor(&self, c: Config) -> Result<Box<dyn Acceptor>> {
        Ok(Box::new(Server(acceptor(c)?)))
    }

    fn pair(&self, c: Config) -> Result<Box<dyn Pair>> {
        Ok(Box::new(InMemory {
            client: connector(c)?,
            server: acceptor(c)?,
            group: c.group.to_string(),
            tickets: Tickets::of(c.mode),
        }))
    }
}

/// What client and server contexts share: TLS 1.3 only, one group, the identity's signature
/// scheme alone (OpenSSL 3.5 lists ML-DSA first by default, ssl/t1_lib.c), no tickets, no
/// session cache.
pub(crate) fn tls13(b: &mut openssl::ssl::SslContextBuilder, c: Config) -> Result<()> {
    use openssl::ssl::{SslOptions, SslSessionCacheMode, SslVersion};
    b.set_min_proto_version(Some(SslVersion::TLS1_3))?;
    b.set_max_proto_version(Some(SslVersion::TLS1_3))?;
    // Where the mode offers more than one group, those that get a key share are marked ("*",
    // OpenSSL 3.5's group syntax); a server's config always has its one group.
    let (offered, shares) = c.offered();
    if offered.len() > 1 {
        let list: Vec<String> = offered
            .iter()
            .enumerate()
            .map(|(k, g)| format!("{}{g}", if k < shares { "*" } else { "" }))
            .collect();
        b.set_groups_list(&list.join(":"))?;
    } else {
        b.set_groups_list(c.group)?;
    }
    b.set_sigalgs_list(&c.identity.scheme_name()?)?;
    b.set_session_cache_mode(SslSessionCacheMode::OFF);
    if c.mode == Mode::Resumed {
        // Stateless tickets (OpenSSL's default), one per connection; the client keeps the
        // session each connection's ticket makes and resumes the next connection with it.
        b.set_num_tickets(1)?;
    } else {
        b.set_options(SslOptions::NO_TICKET);
    }
    Ok(())
}

/// A client context trusting the identity's root alone: what `openssl::ssl::SslConnector` sets up
/// (its options and modes, peer verification, SNI and the host name checked for each connection;
/// not its TLS 1.2 cipher list, which TLS 1.3 does not read) without its
/// `set_default_verify_paths`, which parses the system's CA bundle (about 140 certificates, tens
/// of milliseconds of CPU) for every context and looks up a missing hashed file in
/// /etc/ssl/certs on every verification: the client trusts one private root, as rustls's does.
/// Every section's OpenSSL client is this one (handshake, capacity, network), since 2026-12-02.
pub(crate) struct Connector(openssl::ssl::SslContext);

impl Connector {
    /// A connection's `Ssl`, for "localhost".
    fn ssl(&self) -> Result<openssl::ssl::Ssl> {
        use openssl::x509::verify::X509CheckFlags;
        let mut ssl = openssl::ssl::Ssl::new(&self.0)?;
        ssl.set_hostname("localhost")?;
        let param = ssl.param_mut();
        param.set_hostflags(X509CheckFlags::NO_PARTIAL_WILDCARDS);
        param.set_host("localhost")?;
        Ok(ssl)
    }

    fn connect<S: Read + Write + std::fmt::Debug>(&self, stream: S) -> Result<openssl::ssl::SslStream<S>> {
        self.resume(stream, None)
    }

    /// A handshake that offers `session`'s ticket where given.
    fn resume<S: Read + Write + std::fmt::Debug>(
        &self,
        stream: S,
        session: Option<&openssl::ssl::SslSessionRef>,
    ) -> Result<openssl::ssl::SslStream<S>> {
        let mut ssl = self.ssl()?;
        if let Some(s) = session {
            // SAFETY: the session comes from a connection of this same context (the
            // client's own), which is what SSL_set_session requires.
            unsafe { ssl.set_session(s)? };
        }
        ssl.connect(stream)
            .map_err(|e| anyhow!("OpenSSL handshake: {e}"))
    }
}

fn connector(c: Config) -> Result<Connector> {
    use openssl::ssl::{SslContextBuilder, SslMethod, SslMode, SslOptions, SslVerifyMode};
    let mut b = SslContextBuilder::new(SslMethod::tls_client())?;
    // SslConnector's options and modes (openssl 0.10 `ssl/connector.rs` `ctx`), so connections
    // behave and allocate as its did (RELEASE_BUFFERS frees an idle connection's buffers).
    b.set_options(
        (SslOptions::ALL
            | SslOptions::NO_COMPRESSION
            | SslOptions::NO_SSLV2
            | SslOptions::NO_SSLV3
            | SslOptions::SINGLE_DH_USE
            | SslOptions::SINGLE_ECDH_USE)
            & !SslOptions::DONT_INSERT_EMPTY_FRAGMENTS,
    );
    b.set_mode(
        SslMode::AUTO_RETRY
            | SslMode::ACCEPT_MOVING_WRITE_BUFFER
            | SslMode::ENABLE_PARTIAL_WRITE
            | SslMode::RELEASE_BUFFERS,
    );
    tls13(&mut b, c)?;
    b.set_verify(SslVerifyMode::PEER);
    b.cert_store_mut()
        .add_cert(openssl::x509::X509::from_der(&c.identity.root_der)?)?;
    Ok(Connector(b.build()))
}

/// The identity's leaf, the rest of its chain as extra certificates, its key. NO_AUTO_CHAIN:
/// without it libssl builds the chain to send by verifying its own leaf against its store on
/// every handshake (ssl/statem/statem_lib.c `ssl_add_cert_chain`), a cost no server needs once
/// its chain is configured.
fn acceptor(c: Config) -> Result<openssl::ssl::SslAcceptor> {
    use openssl::ssl::{SslAcceptor, SslMethod, SslMode};
    let mut b = SslAcceptor::mozilla_modern_v5(SslMethod::tls_server())?;
    tls13(&mut b, c)?;
    let mut chain = c.identity.chain_der.iter();
    let leaf = chain.next().ok_or_else(|| anyhow!("an identity without a leaf"))?;
    let leaf = openssl::x509::X509::from_der(leaf)?;
    b.set_certificate(&leaf)?;
    for der in chain {
        b.add_extra_chain_cert(openssl::x509::X509::from_der(der)?)?;
    }
    let key = openssl::pkey::PKey::private_key_from_pem(c.identity.key_pem.as_bytes())?;
    b.set_private_key(&key)?;
    b.check_private_key()?;
    b.set_mode(SslMode::NO_AUTO_CHAIN);
    Ok(b.build())
}

extern "C" {
    // OpenSSL 3.2+: the negotiated group's name, also for hybrid groups without a NID.
    fn SSL_get0_group_name(s: *mut openssl_sys::SSL) -> *const std::ffi::c_char;
    fn SSL_SESSION_is_resumable(s: *const openssl_sys::SSL_SESSION) -> std::ffi::c_int;
}

/// Whether a session can resume a connection (it holds a ticket); the openssl crate has no
/// wrapper for SSL_SESSION_is_resumable (OpenSSL 1.1.1 on).
fn resumable(s: &openssl::ssl::SslSessionRef) -> bool {
    use foreign_types::ForeignTypeRef;
    // SAFETY: a valid session pointer for the borrow's length; the call only reads it.
    unsafe { SSL_SESSION_is_resumable(s.as_ptr()) == 1 }
}

/// The group a connection negotiated, by OpenSSL's name for it ("" before the handshake).
fn group_name(ssl: &openssl::ssl::SslRef) -> String {
    use foreign_types::ForeignTypeRef;
    // SAFETY: `ssl` is a live SSL for the call; the result is NULL or points to a static name
    // string, which is copied before returning.
    unsafe {
        let p = SSL_get0_group_name(ssl.as_ptr());
        if p.is_null() {
            String::new()
        } else {
            std::ffi::CStr::from_ptr(p).to_string_lossy().into_owned()
        }
    }
}

/// SSL_ctrl commands behind the `SSL_get0_peer_signature_name` macro (OpenSSL 3.5
/// include/openssl/ssl.h.in; openssl-sys declares neither the macro nor the number).
const SSL_CTRL_GET_PEER_SIGNATURE_NAME: std::ffi::c_int = 141;

/// The IANA name of the peer's CertificateVerify scheme ("mldsa65", "ecdsa_secp256r1_sha256").
fn peer_signature_name(ssl: &openssl::ssl::SslRef) -> Option<String> {
    use foreign_types::ForeignTypeRef;
    let mut p: *const std::ffi::c_char = std::ptr::null();
    // SAFETY: `ssl` is live for the call; the ctrl writes a pointer to a name the SSL_CTX owns
    // (ssl/s3_lib.c), which is copied below before the SSL can go away.
    let ok = unsafe {
        openssl_sys::SSL_ctrl(
            ssl.as_ptr(),
            SSL_CTRL_GET_PEER_SIGNATURE_NAME,
            0,
            &mut p as *mut *const std::ffi::c_char as *mut std::ffi::c_void,
        )
    };
    // SAFETY: a non-null result is a NUL-terminated string that lives as long as the SSL_CTX.
    (ok == 1 && !p.is_null()).then(|| unsafe { std::ffi::CStr::from_ptr(p) }.to_string_lossy().into_owned())
}

/// A scheme's code point from its IANA name, through the algorithm registry.
fn scheme_code(name: &str) -> Option<u16> {
    crate::algorithm::all()
        .iter()
        .find(|a| a.tls_scheme_name.as_deref() == Some(name))
        .and_then(|a| a.tls_scheme)
}

fn evidence(ssl: &openssl::ssl::SslRef, flight: u64) -> Evidence {
    Evidence {
        scheme: peer_signature_name(ssl).and_then(|n| scheme_code(&n)),
        chain_bytes: ssl
            .peer_cert_chain()
            .map(|c| c.iter().filter_map(|x| x.to_der().ok()).map(|d| d.len()).collect())
            .unwrap_or_default(),
        server_flight_bytes: Some(flight),
        version: ssl.version_str().to_string(),
        group: group_name(ssl),
        cipher: ssl
            .current_cipher()
            .map(|c| c.name().to_string())
            .unwrap_or_default(),
        cert_key: ssl
            .peer_certificate()
            .and_then(|c| c.to_der().ok())
            .map(|d| super::identity::cert_key_type(&d))
            .unwrap_or_default(),
        resumed: ssl.session_reused(),
        ..Evidence::default()
    }
}

struct Client {
    connector: Connector,
    armed: bool,
    tickets: Tickets,
    /// `Some(server software)`: the server answers HTTP (a server of servers/), so each
    /// connection ends with a GET in place of the echo, and its evidence names the software.
    http: Option<String>,
}

/// OpenSSL's client for a server that answers HTTP (`stack::lab`): each connection a full
/// exchange, a GET and its answer, and the server's software in the evidence.
pub(crate) fn http_client(c: Config, software: String) -> Result<Box<dyn super::Client>> {
    Ok(Box::new(Client {
        connector: connector(c)?,
        armed: c.armed,
        tickets: Tickets::of(c.mode),
        http: Some(software),
    }))
}

impl Client {
    /// The exchange after the handshake: the echo, or a GET where the server answers HTTP, which
    /// asks it to close the connection after its answer, or to keep it (`open`'s, held).
    fn exchange<S: Read + Write>(&self, s: &mut S, close: bool) -> Result<()> {
        match self.http {
            Some(_) => tls::http_get(s, close),
            None => echo(s),
        }
    }
}

/// Resumed handshakes (`Mode::Resumed`): the session the last connection's ticket made, for the
/// next; `None` for every other mode.
struct Tickets(Option<std::sync::Mutex<Option<openssl::ssl::SslSession>>>);

impl Tickets {
    fn of(mode: Mode) -> Tickets {
        Tickets((mode == Mode::Resumed).then(|| std::sync::Mutex::new(None)))
    }

    fn take(&self) -> Option<openssl::ssl::SslSession> {
        self.0.as_ref()?.lock().ok()?.take()
    }

    /// Keeps the session of a connection that has read past its handshake (the ticket comes
    /// after the server's Finished), if it can resume and is not the one `used`: OpenSSL replaces
    /// the connection's session with a new one for each ticket received, so the same session means
    /// no new ticket came, and the next connection makes a full handshake rather than reuse it
    /// (its client then says it did not resume, as the server's count of resumptions does).
    fn keep(&self, ssl: &openssl::ssl::SslRef, used: Option<&openssl::ssl::SslSessionRef>) {
        use foreign_types::ForeignTypeRef;
        if let Some(t) = &self.0 {
            if let (Ok(mut t), Some(s)) = (t.lock(), ssl.session()) {
                let fresh = used.is_none_or(|u| u.as_ptr() != s.as_ptr());
                *t = (fresh && resumable(s)).then(|| s.to_owned());
            }
        }
    }
}

impl super::Client for Client {
    fn connect(&self, addr: SocketAddr, want_evidence: bool) -> Result<One> {
        let ticket = self.tickets.take();
        tls::measure_connection(self.armed, |t0| {
            let sock = Counted::tcp(tcp(addr)?);
            let mut tls = self.connector.resume(sock, ticket.as_deref())?;
            let hs = t0.elapsed();
            let flight = tls.get_ref().received;
            self.exchange(&mut tls, true)?;
            self.tickets.keep(tls.ssl(), ticket.as_deref());
            let ev = want_evidence.then(|| Evidence {
                server_software: self.http.clone(),
                ..evidence(tls.ssl(), flight)
            });
            let resumed = tls.ssl().session_reused();
            let _ = tls.shutdown();
            Ok((hs, tls.get_ref().summary(), ev, resumed))
        })
    }

    fn connect_with(&self, addr: SocketAddr, teardown: super::Teardown) -> Result<f64> {
        let t0 = Instant::now();
        let sock = tls::tcp_with(addr, teardown)?;
        let mut tls = self.connector.connect(sock)?;
        let hs = t0.elapsed();
        self.exchange(&mut tls, true)?;
        let _ = tls.shutdown();
        Ok(hs.as_nanos() as f64)
    }

    fn open(&self, addr: SocketAddr) -> Result<Box<dyn Send>> {
        let mut tls = self.connector.connect(tcp(addr)?)?;
        self.exchange(&mut tls, false)?;
        Ok(Box::new(tls))
    }
}

struct Server(openssl::ssl::SslAcceptor);

struct Connection(openssl::ssl::SslStream<TcpStream>);

impl Acceptor for Server {
    fn serve_one(&self, stream: TcpStream) -> Result<Box<dyn Served>> {
        tls::accepted(&stream);
        let mut tls = self.0.accept(stream).map_err(|e| anyhow!("accept: {e}"))?;
        echo_back(&mut tls)?;
        Ok(Box::new(Connection(tls)))
    }
}

impl Served for Connection {
    fn resumed(&self) -> bool {
        self.0.ssl().session_reused()
    }

    fn close(mut self: Box<Self>) {
        let _ = self.0.shutdown();
    }
}

/// Client and server in one thread, with a Rust in-memory stream as each side's BIO.
struct InMemory {
    client: Connector,
    server: openssl::ssl::SslAcceptor,
    group: String,
    tickets: Tickets,
}

impl Pair for InMemory {
    fn handshake(&self, check: bool) -> Result<Sample> {
        handshake_in_memory(
            (&self.client, &self.tickets),
            &self.server,
            check.then_some(self.group.as_str()),
        )
    }
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

fn handshake_in_memory(
    (connector, tickets): (&Connector, &Tickets),
    acceptor: &openssl::ssl::SslAcceptor,
    check: Option<&str>,
) -> Result<Sample> {
    use openssl::ssl::{ErrorCode, Ssl, SslStream};
    let (mut tc, mut ts) = (Duration::ZERO, Duration::ZERO);
    let (a, b): (Queue, Queue) = (Rc::default(), Rc::default());
    let start = Instant::now();
    let ticket = tickets.take();
    let mut client = side(&mut tc, || -> Result<_> {
        let mut ssl = connector.ssl()?;
        if let Some(t) = &ticket {
            // SAFETY: the session comes from a connection of this same client context.
            unsafe { ssl.set_session(t)? };
        }
        Ok(SslStream::new(
            ssl,
            MemStream {
                rx: b.clone(),
                tx: a.clone(),
            },
        )?)
    })?;
    let mut server = side(&mut ts, || -> Result<_> {
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
            client_done = side(&mut tc, || pending(client.connect()))?;
        }
        if !server_done {
            server_done = side(&mut ts, || pending(server.accept()))?;
        }
        if client_done && server_done {
            if let Some(g) = check {
                let got = group_name(client.ssl());
                ensure!(
                    norm(&got) == norm(g),
                    "OpenSSL negotiated {got}, expected {g}"
                );
                ensure!(
                    ticket.is_some() || !client.ssl().session_reused(),
                    "OpenSSL resumed a session"
                );
            }
            let resumed = client.ssl().session_reused();
            if tickets.0.is_some() {
                // The server wrote its ticket after reading the client's Finished; reading it
                // (no application data follows) is the client's, as on a socket.
                side(&mut tc, || -> Result<()> {
                    let mut byte = [0u8; 1];
                    match client.ssl_read(&mut byte) {
                        Err(e) if e.code() == ErrorCode::WANT_READ => Ok(()),
                        Ok(_) => Err(anyhow!("OpenSSL: data after the handshake")),
                        Err(e) => Err(anyhow!("OpenSSL: reading the ticket: {e}")),
                    }
                })?;
            }
            let wall = start.elapsed();
            if tickets.0.is_some() {
                tickets.keep(client.ssl(), ticket.as_deref());
                // Freed without a close_notify sent, a connection's session counts as bad and
                // OpenSSL marks it not resumable (ssl/ssl_sess.c `ssl_clear_bad_session`); a
                // client on a socket sends one as it closes, as this one does, untimed.
                client
                    .shutdown()
                    .map_err(|e| anyhow!("OpenSSL: close_notify: {e}"))?;
            }
            return Ok(Sample {
                client_ns: tc.as_nanos() as u64,
                server_ns: ts.as_nanos() as u64,
                wall_ns: wall.as_nanos() as u64,
                resumed,
            });
        }
    }
    bail!("OpenSSL: the in-memory handshake did not finish in 16 flights")
}
