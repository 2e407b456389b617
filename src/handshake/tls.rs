//! TLS 1.3 over loopback with rustls (aws-lc-rs provider) and OpenSSL 3.5, client and server, one
//! key-exchange group at a time, resumption off on both sides, following seed 000's contract: a
//! fresh connection per handshake, a 32-byte payload echoed and checked, then close.

use super::wire::Counted;
use super::{One, PAYLOAD};
use crate::parse::tls::key_shares;
use crate::results::{Evidence, RealStack};
use anyhow::{anyhow, bail, ensure, Context, Result};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub const TIMEOUT: Duration = Duration::from_secs(5);

/// Socket timeouts of this process, milliseconds: TIMEOUT on loopback; `pqprof network` raises it,
/// since over a lossy path a retransmission backs off past 5 s (1 + 2 + 4 s for three lost SYNs).
static IO_TIMEOUT_MS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(5000);

pub fn set_io_timeout(t: Duration) {
    IO_TIMEOUT_MS.store(t.as_millis() as u64, std::sync::atomic::Ordering::Relaxed);
}

pub fn io_timeout() -> Duration {
    Duration::from_millis(IO_TIMEOUT_MS.load(std::sync::atomic::Ordering::Relaxed))
}

/// The certificate both servers present: ECDSA P-256, made at start (rcgen).
pub struct Identity {
    pub cert_der: Vec<u8>,
    pub cert_pem: String,
    pub key_pem: String,
}

pub fn identity() -> Result<Identity> {
    let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256)?;
    let cert = rcgen::CertificateParams::new(vec!["localhost".to_string()])?.self_signed(&key)?;
    Ok(Identity {
        cert_der: cert.der().to_vec(),
        cert_pem: cert.pem(),
        key_pem: key.serialize_pem(),
    })
}

/// DER of the prime256v1 OID inside an ecPublicKey SPKI: how the certificate's key type is checked.
const P256_OID: [u8; 10] = [0x06, 0x08, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07];

fn cert_key_type(der: &[u8]) -> String {
    if der.windows(P256_OID.len()).any(|w| w == P256_OID) {
        "ECDSA P-256".into()
    } else {
        "other".into()
    }
}

fn rustls_group(name: &str) -> Result<&'static dyn rustls::crypto::SupportedKxGroup> {
    use rustls::crypto::aws_lc_rs::kx_group;
    Ok(match name {
        "X25519" => kx_group::X25519,
        "X25519MLKEM768" => kx_group::X25519MLKEM768,
        "SecP256r1MLKEM768" => kx_group::SECP256R1MLKEM768,
        "MLKEM768" => kx_group::MLKEM768,
        _ => bail!("rustls: no key-exchange group {name}"),
    })
}

fn rustls_provider(group: &str) -> Result<Arc<rustls::crypto::CryptoProvider>> {
    let mut p = rustls::crypto::aws_lc_rs::default_provider();
    // One group only: by default the client also sends an X25519 share beside a hybrid one.
    p.kx_groups = vec![rustls_group(group)?];
    Ok(Arc::new(p))
}

/// What client and server contexts share: TLS 1.3 only, one group, no tickets, no session cache.
pub(crate) fn openssl_tls13(b: &mut openssl::ssl::SslContextBuilder, group: &str) -> Result<()> {
    use openssl::ssl::{SslOptions, SslSessionCacheMode, SslVersion};
    b.set_min_proto_version(Some(SslVersion::TLS1_3))?;
    b.set_max_proto_version(Some(SslVersion::TLS1_3))?;
    b.set_groups_list(group)?;
    b.set_options(SslOptions::NO_TICKET);
    b.set_session_cache_mode(SslSessionCacheMode::OFF);
    Ok(())
}

fn tcp(addr: SocketAddr) -> Result<TcpStream> {
    let s = TcpStream::connect_timeout(&addr, io_timeout())
        .with_context(|| format!("connect to {addr}"))?;
    s.set_nodelay(true)?;
    s.set_read_timeout(Some(io_timeout()))?;
    s.set_write_timeout(Some(io_timeout()))?;
    Ok(s)
}

/// A client ready to make handshakes with one stack and one group.
pub struct Client {
    pub(crate) kind: ClientKind,
    /// Time every crypto call of each connection (the recorder is armed around it).
    instrumented: bool,
}

pub(crate) enum ClientKind {
    Rustls(Arc<rustls::ClientConfig>),
    OpenSsl(openssl::ssl::SslConnector),
}

/// rustls's provider for one group: plain, or with every crypto call timed.
fn provider(group: &str, instrumented: bool) -> Result<Arc<rustls::crypto::CryptoProvider>> {
    if instrumented {
        super::insitu::rustls_timed::provider(group)
    } else {
        rustls_provider(group)
    }
}

impl Client {
    pub fn new(stack: RealStack, group: &str, id: &Identity, instrumented: bool) -> Result<Client> {
        let kind = match stack {
            RealStack::Rustls => {
                let mut roots = rustls::RootCertStore::empty();
                roots.add(id.cert_der.clone().into())?;
                let mut cfg =
                    rustls::ClientConfig::builder_with_provider(provider(group, instrumented)?)
                        .with_protocol_versions(&[&rustls::version::TLS13])?
                        .with_root_certificates(roots)
                        .with_no_client_auth();
                cfg.resumption = rustls::client::Resumption::disabled();
                ClientKind::Rustls(Arc::new(cfg))
            }
            RealStack::OpenSsl => {
                use openssl::ssl::{SslConnector, SslMethod};
                let mut b = SslConnector::builder(SslMethod::tls_client())?;
                openssl_tls13(&mut b, group)?;
                b.cert_store_mut()
                    .add_cert(openssl::x509::X509::from_der(&id.cert_der)?)?;
                ClientKind::OpenSsl(b.build())
            }
            RealStack::Russh => bail!("russh is an SSH stack"),
            RealStack::Go => bail!("Go's TLS runs in the Go peer"),
        };
        Ok(Client { kind, instrumented })
    }

    /// A client with the timing provider (rustls) that never arms the recorder: the provider's own
    /// cost, without timers.
    pub fn wrapped_unarmed(stack: RealStack, group: &str, id: &Identity) -> Result<Client> {
        Ok(Client {
            instrumented: false,
            ..Client::new(stack, group, id, true)?
        })
    }

    /// One connection: connect, handshake, echo 32 bytes, close. Evidence only when asked.
    pub fn connect(&self, addr: SocketAddr, evidence: bool) -> Result<One> {
        let cpu0 = super::alloc::thread_cpu_ns();
        let mem0 = super::alloc::counters();
        if self.instrumented {
            super::insitu::arm();
        }
        let t0 = Instant::now();
        let r = self.exchange(addr, evidence, t0);
        let total = t0.elapsed();
        let insitu = self.instrumented.then(super::insitu::take);
        let (hs, sock, ev) = r?;
        let mut ev = ev;
        if let Some(e) = ev.as_mut() {
            e.client_share = key_shares(&sock.first_sent)
                .and_then(|(m, s)| (m == 1).then_some(s))
                .and_then(|s| s.first().copied());
            e.server_share = key_shares(&sock.first_received)
                .and_then(|(m, s)| (m == 2).then_some(s))
                .and_then(|s| s.first().copied());
        }
        Ok(One {
            total_ns: total.as_nanos() as f64,
            ready_ns: hs.as_nanos() as f64,
            sent: sock.sent,
            received: sock.received,
            cpu_ns: super::alloc::thread_cpu_ns() - cpu0,
            mem: super::alloc::counters().since(mem0),
            evidence: ev,
            insitu,
            go_allocs: 0.0,
            go_bytes: 0.0,
        })
    }

    /// Connect, handshake, echo, close, with `prepare` applied to the socket first: -> nanoseconds
    /// from connect to handshake complete (capacity's load steps).
    pub fn connect_with(&self, addr: SocketAddr, prepare: fn(&TcpStream)) -> Result<f64> {
        let t0 = Instant::now();
        let sock = tcp(addr)?;
        prepare(&sock);
        match &self.kind {
            ClientKind::Rustls(cfg) => {
                let (hs, mut tls) = rustls_handshake(cfg, sock, t0)?;
                echo(&mut tls)?;
                rustls_close(&mut tls);
                Ok(hs.as_nanos() as f64)
            }
            ClientKind::OpenSsl(connector) => {
                let mut tls = connector
                    .configure()?
                    .connect("localhost", sock)
                    .map_err(|e| anyhow!("OpenSSL handshake: {e}"))?;
                let hs = t0.elapsed();
                echo(&mut tls)?;
                let _ = tls.shutdown();
                Ok(hs.as_nanos() as f64)
            }
        }
    }

    /// Connect, handshake, echo, and keep the connection open (memory per connection).
    pub fn open(&self, addr: SocketAddr) -> Result<Open> {
        let sock = tcp(addr)?;
        Ok(match &self.kind {
            ClientKind::Rustls(cfg) => {
                let conn = rustls::ClientConnection::new(cfg.clone(), "localhost".try_into()?)?;
                let mut tls = Box::new(rustls::StreamOwned::new(conn, sock));
                echo(&mut tls)?;
                Open::Rustls(tls)
            }
            ClientKind::OpenSsl(connector) => {
                let mut tls = connector
                    .configure()?
                    .connect("localhost", sock)
                    .map_err(|e| anyhow!("OpenSSL handshake: {e}"))?;
                echo(&mut tls)?;
                Open::OpenSsl(tls)
            }
        })
    }

    /// Connect, handshake, echo, close: -> (time to handshake done, bytes, evidence).
    fn exchange(
        &self,
        addr: SocketAddr,
        evidence: bool,
        t0: Instant,
    ) -> Result<(Duration, Counted<()>, Option<Evidence>)> {
        let sock = Counted::new(tcp(addr)?);
        Ok(match &self.kind {
            ClientKind::Rustls(cfg) => {
                let (hs, mut tls) = rustls_handshake(cfg, sock, t0)?;
                echo(&mut tls)?;
                rustls_close(&mut tls);
                let ev = evidence.then(|| Evidence {
                    version: tls
                        .conn
                        .protocol_version()
                        .map(|v| format!("{v:?}"))
                        .unwrap_or_default(),
                    group: tls
                        .conn
                        .negotiated_key_exchange_group()
                        .map(|g| format!("{:?}", g.name()))
                        .unwrap_or_default(),
                    cipher: tls
                        .conn
                        .negotiated_cipher_suite()
                        .map(|c| format!("{:?}", c.suite()))
                        .unwrap_or_default(),
                    cert_key: tls
                        .conn
                        .peer_certificates()
                        .and_then(|c| c.first())
                        .map(|c| cert_key_type(c))
                        .unwrap_or_default(),
                    resumed: !matches!(
                        tls.conn.handshake_kind(),
                        Some(rustls::HandshakeKind::Full)
                    ),
                    ..Evidence::default()
                });
                (hs, tls.sock.summary(), ev)
            }
            ClientKind::OpenSsl(connector) => {
                let mut tls = connector
                    .configure()?
                    .connect("localhost", sock)
                    .map_err(|e| anyhow!("OpenSSL handshake: {e}"))?;
                let hs = t0.elapsed();
                echo(&mut tls)?;
                let ev = evidence.then(|| openssl_evidence(tls.ssl()));
                let _ = tls.shutdown();
                (hs, tls.get_ref().summary(), ev)
            }
        })
    }
}

/// A client connection kept open after its echo.
pub enum Open {
    Rustls(Box<rustls::StreamOwned<rustls::ClientConnection, TcpStream>>),
    OpenSsl(openssl::ssl::SslStream<TcpStream>),
}

/// A rustls client handshake over `sock`: the time from `t0` until it is done, and the stream.
fn rustls_handshake<S: Read + Write>(
    cfg: &Arc<rustls::ClientConfig>,
    sock: S,
    t0: Instant,
) -> Result<(Duration, rustls::StreamOwned<rustls::ClientConnection, S>)> {
    let conn = rustls::ClientConnection::new(cfg.clone(), "localhost".try_into()?)?;
    let mut tls = rustls::StreamOwned::new(conn, sock);
    while tls.conn.is_handshaking() {
        tls.conn
            .complete_io(&mut tls.sock)
            .context("rustls handshake")?;
    }
    Ok((t0.elapsed(), tls))
}

fn rustls_close<S: Read + Write>(tls: &mut rustls::StreamOwned<rustls::ClientConnection, S>) {
    tls.conn.send_close_notify();
    let _ = tls.conn.complete_io(&mut tls.sock);
}

fn echo<S: Read + Write>(s: &mut S) -> Result<()> {
    s.write_all(&PAYLOAD)?;
    s.flush()?;
    let mut back = [0u8; 32];
    s.read_exact(&mut back).context("reading the echo")?;
    ensure!(back == PAYLOAD, "the echo differs from the payload");
    Ok(())
}

extern "C" {
    // OpenSSL 3.2+: the negotiated group's name, also for hybrid groups without a NID.
    fn SSL_get0_group_name(s: *mut openssl_sys::SSL) -> *const std::ffi::c_char;
}

fn openssl_evidence(ssl: &openssl::ssl::SslRef) -> Evidence {
    use foreign_types::ForeignTypeRef;
    // SAFETY: the SSL is live for the call; the result is NULL or a static name string.
    let group = unsafe {
        let p = SSL_get0_group_name(ssl.as_ptr());
        if p.is_null() {
            String::new()
        } else {
            std::ffi::CStr::from_ptr(p).to_string_lossy().into_owned()
        }
    };
    Evidence {
        version: ssl.version_str().to_string(),
        group,
        cipher: ssl
            .current_cipher()
            .map(|c| c.name().to_string())
            .unwrap_or_default(),
        cert_key: ssl
            .peer_certificate()
            .and_then(|c| c.to_der().ok())
            .map(|d| cert_key_type(&d))
            .unwrap_or_default(),
        resumed: ssl.session_reused(),
        ..Evidence::default()
    }
}

/// A server's configuration for one stack and group: TLS 1.3 only, no tickets, no session cache.
pub enum Acceptor {
    Rustls(Arc<rustls::ServerConfig>),
    OpenSsl(openssl::ssl::SslAcceptor),
}

pub fn acceptor(
    stack: RealStack,
    group: &str,
    id: &Identity,
    instrumented: bool,
) -> Result<Acceptor> {
    Ok(match stack {
        RealStack::Rustls => {
            let certs = vec![id.cert_der.clone().into()];
            let key = <rustls::pki_types::PrivateKeyDer as rustls::pki_types::pem::PemObject>::from_pem_slice(id.key_pem.as_bytes()).map_err(|e| anyhow!("key: {e}"))?;
            let mut cfg =
                rustls::ServerConfig::builder_with_provider(provider(group, instrumented)?)
                    .with_protocol_versions(&[&rustls::version::TLS13])?
                    .with_no_client_auth()
                    .with_single_cert(certs, key)?;
            cfg.session_storage = Arc::new(rustls::server::NoServerSessionStorage {});
            cfg.send_tls13_tickets = 0;
            Acceptor::Rustls(Arc::new(cfg))
        }
        RealStack::OpenSsl => {
            use openssl::ssl::{SslAcceptor, SslMethod};
            let mut b = SslAcceptor::mozilla_modern_v5(SslMethod::tls_server())?;
            openssl_tls13(&mut b, group)?;
            let cert = openssl::x509::X509::from_der(&id.cert_der)?;
            let key = openssl::pkey::PKey::private_key_from_pem(id.key_pem.as_bytes())?;
            b.set_certificate(&cert)?;
            b.set_private_key(&key)?;
            Acceptor::OpenSsl(b.build())
        }
        RealStack::Russh | RealStack::Go => {
            bail!("{} does not run in pqprof's TLS server", stack.name())
        }
    })
}

/// A connection the server has completed: handshake done, 32 bytes echoed, still open.
pub enum Served {
    Rustls(Box<rustls::StreamOwned<rustls::ServerConnection, TcpStream>>),
    OpenSsl(openssl::ssl::SslStream<TcpStream>),
}

impl Served {
    /// close_notify, then the socket closes on drop.
    pub fn close(self) {
        match self {
            Served::Rustls(mut tls) => {
                tls.conn.send_close_notify();
                let _ = tls.conn.complete_io(&mut tls.sock);
            }
            Served::OpenSsl(mut tls) => {
                let _ = tls.shutdown();
            }
        }
    }
}

/// One connection on the server side: the handshake, then the 32-byte echo.
pub fn serve_one(acceptor: &Acceptor, stream: TcpStream) -> Result<Served> {
    let _ = stream.set_nodelay(true);
    let _ = stream.set_read_timeout(Some(io_timeout()));
    let _ = stream.set_write_timeout(Some(io_timeout()));
    let mut buf = [0u8; 32];
    Ok(match acceptor {
        Acceptor::Rustls(cfg) => {
            let conn = rustls::ServerConnection::new(cfg.clone())?;
            let mut tls = Box::new(rustls::StreamOwned::new(conn, stream));
            tls.read_exact(&mut buf)?;
            tls.write_all(&buf)?;
            Served::Rustls(tls)
        }
        Acceptor::OpenSsl(acceptor) => {
            let mut tls = acceptor
                .accept(stream)
                .map_err(|e| anyhow!("accept: {e}"))?;
            tls.read_exact(&mut buf)?;
            tls.write_all(&buf)?;
            Served::OpenSsl(tls)
        }
    })
}

/// The server side, in its own process: accepts connections one at a time until killed. Each gets
/// a full handshake (no tickets, no session cache) and its 32 bytes echoed.
pub fn serve(
    stack: RealStack,
    group: &str,
    id: &Identity,
    listener: TcpListener,
    served: &std::sync::atomic::AtomicU64,
    insitu: Option<&std::sync::Mutex<Vec<super::insitu::Record>>>,
    concurrent: bool,
) -> Result<()> {
    serve_with(
        acceptor(stack, group, id, insitu.is_some())?,
        listener,
        served,
        insitu,
        concurrent,
    )
}

/// `serve` with an acceptor made by the caller (the paired overhead measurement serves the timing
/// provider unarmed).
pub fn serve_with(
    acceptor: Acceptor,
    listener: TcpListener,
    served: &std::sync::atomic::AtomicU64,
    insitu: Option<&std::sync::Mutex<Vec<super::insitu::Record>>>,
    concurrent: bool,
) -> Result<()> {
    if concurrent {
        // A thread per connection (`pqprof network`: handshakes in flight at once over a slow
        // path must not wait for each other at the server).
        let acceptor = Arc::new(acceptor);
        std::thread::scope(|scope| {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let acceptor = acceptor.clone();
                // Failures over a lossy path are the client's to count (it sees them first).
                scope.spawn(move || {
                    if let Ok(conn) = serve_one(&acceptor, stream) {
                        conn.close();
                        served.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    }
                });
            }
        });
        return Ok(());
    }
    for stream in listener.incoming() {
        let Ok(stream) = stream else { continue };
        if insitu.is_some() {
            super::insitu::arm();
        }
        let result = serve_one(&acceptor, stream).map(Served::close);
        let record = insitu.is_some().then(super::insitu::take);
        match result {
            Ok(()) => {
                // The record goes in before the count, so `stats` never sees a count without it.
                if let (Some(sink), Some(rec)) = (insitu, record) {
                    sink.lock().map_err(|_| anyhow!("poisoned"))?.push(rec);
                }
                served.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
            Err(e) => eprintln!("server: {e:#}"),
        }
    }
    Ok(())
}
