//! rustls 0.23 with its default aws-lc-rs provider: client, server and an in-memory pair, for one
//! key-exchange group at a time; in situ, the timing provider (`insitu::rustls_timed`) in place of
//! the default one.

use super::tls::{self, echo, echo_back, norm, tcp};
use super::wire::Counted;
use super::{side, Acceptor, Availability, Config, Features, One, Pair, Sample, Served, TlsStack};
use crate::results::{CallLabel, CallPhases, Evidence, Mode, Operation};
use anyhow::{anyhow, bail, ensure, Context, Result};
use rustls::crypto::{ActiveKeyExchange, SupportedKxGroup};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub struct Rustls;

impl TlsStack for Rustls {
    fn name(&self) -> &'static str {
        "rustls"
    }

    fn protocol(&self) -> &'static str {
        "tls13"
    }

    fn composition(&self) -> crate::results::Stack {
        crate::results::Stack::new(
            "rustls",
            "aws-lc (aws-lc-rs) for everything, as rustls's default provider calls it",
            "awslc",
            "awslc",
            &["tls13", "raw"],
        )
    }

    fn round_trips(&self) -> f64 {
        2.0
    }

    fn features(&self) -> Features {
        Features {
            in_situ: true,
            unarmed_wrapper: true,
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

    fn cannot(&self, m: Mode) -> String {
        format!("rustls does not make {} handshakes here", m.suffix())
    }

    fn availability(&self) -> Result<Availability> {
        Ok(Availability {
            version: "rustls 0.23 (aws-lc-rs)".into(),
            groups: None,
            auths: None,
            refused: Vec::new(),
        })
    }

    /// The timing provider names the halves of a hybrid (`kem.*`, `dh.*`) and each signature
    /// check webpki makes of a certificate (`sig.verify.cert`) as the phases are.
    fn call_phases(&self) -> Vec<CallPhases> {
        use CallLabel::*;
        [
            (KemKeygen, Operation::KemKeygen),
            (KemEncaps, Operation::KemEncaps),
            (KemDecaps, Operation::KemDecaps),
            (DhKeygen, Operation::DhKeygen),
            (DhDerive, Operation::DhDerive),
            (SigSign, Operation::SigSign),
            (SigVerify, Operation::SigVerify),
            (SigVerifyCert, Operation::SigVerify),
        ]
        .into_iter()
        .map(|(l, op)| CallPhases {
            label: l.name().into(),
            operations: vec![op],
            with: None,
        })
        .collect()
    }

    fn client(&self, c: Config) -> Result<Box<dyn super::Client>> {
        Ok(Box::new(Client {
            cfg: client_config(c)?,
            armed: c.armed,
        }))
    }

    fn acceptor(&self, c: Config) -> Result<Box<dyn Acceptor>> {
        Ok(Box::new(Server(server_config(c)?)))
    }

    fn pair(&self, c: Config) -> Result<Box<dyn Pair>> {
        Ok(Box::new(InMemory {
            client: client_config(c)?,
            server: server_config(c)?,
            group: c.group.to_string(),
        }))
    }
}

pub(crate) fn group(name: &str) -> Result<&'static dyn rustls::crypto::SupportedKxGroup> {
    use rustls::crypto::aws_lc_rs::kx_group;
    Ok(match name {
        "X25519" => kx_group::X25519,
        "X25519MLKEM768" => kx_group::X25519MLKEM768,
        "SecP256r1MLKEM768" => kx_group::SECP256R1MLKEM768,
        "MLKEM768" => kx_group::MLKEM768,
        _ => bail!("rustls: no key-exchange group {name}"),
    })
}

/// The provider for one group and the identity's signature scheme: aws-lc-rs's default, or with
/// every crypto call timed.
pub(super) fn provider(c: Config) -> Result<Arc<rustls::crypto::CryptoProvider>> {
    let scheme = c.identity.auth.scheme;
    // One group only, unless the mode offers two: with X25519 after the hybrid, rustls sends the
    // hybrid's X25519 half as a second share (its key reused, no second key generation), unless
    // the hybrid is to go alone (a retry to X25519); with X25519 first, X25519's share alone.
    let (offered, _) = c.offered();
    let mut p = if c.wrapped {
        Arc::unwrap_or_clone(crate::insitu::rustls_timed::provider(&offered, scheme)?)
    } else {
        let mut p = rustls::crypto::aws_lc_rs::default_provider();
        p.kx_groups = offered.iter().map(|g| group(g)).collect::<Result<_>>()?;
        // One CertificateVerify scheme offered: the identity's.
        p.signature_verification_algorithms =
            crate::insitu::rustls_timed::one_scheme(p.signature_verification_algorithms, scheme);
        p
    };
    if c.mode == Mode::HelloRetryClassical {
        if let Some(first) = p.kx_groups.first_mut() {
            *first = share_alone(*first);
        }
    }
    Ok(Arc::new(p))
}

/// `g` whose key exchanges name no X25519 component, so that rustls's client sends the hybrid's
/// share alone and offers X25519, listed after it, without one (`Mode::HelloRetryClassical`): a
/// client as OpenSSL's `*X25519MLKEM768:X25519` is, or rustls before it shared the hybrid's
/// X25519 half (0.23.20's `ActiveKeyExchange::hybrid_component`). Every call is `g`'s own; one
/// wrapper per group for the process (made once, kept).
fn share_alone(g: &'static dyn SupportedKxGroup) -> &'static dyn SupportedKxGroup {
    wrapped_once("share alone", g, |g| Box::new(ShareAlone(g)))
}

/// `make`'s wrapper of `g`, made once per kind and group object and kept: a provider holds its
/// groups as `&'static`. (The timed provider makes new group objects for each provider, so each
/// of those gets a wrapper of its own: a few per run.)
pub(super) fn wrapped_once(
    kind: &'static str,
    g: &'static dyn SupportedKxGroup,
    make: fn(&'static dyn SupportedKxGroup) -> Box<dyn SupportedKxGroup>,
) -> &'static dyn SupportedKxGroup {
    type Made = Vec<(&'static str, usize, &'static dyn SupportedKxGroup)>;
    static MADE: std::sync::Mutex<Made> = std::sync::Mutex::new(Vec::new());
    let key = g as *const dyn SupportedKxGroup as *const () as usize;
    let mut made = MADE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(&(.., w)) = made.iter().find(|(k, p, _)| *k == kind && *p == key) {
        return w;
    }
    let w: &'static dyn SupportedKxGroup = Box::leak(make(g));
    made.push((kind, key, w));
    w
}

#[derive(Debug)]
struct ShareAlone(&'static dyn SupportedKxGroup);

impl SupportedKxGroup for ShareAlone {
    fn start(&self) -> Result<Box<dyn ActiveKeyExchange>, rustls::Error> {
        Ok(Box::new(AloneActive(self.0.start()?)))
    }
    fn start_and_complete(
        &self,
        client_share: &[u8],
    ) -> Result<rustls::crypto::CompletedKeyExchange, rustls::Error> {
        self.0.start_and_complete(client_share)
    }
    fn ffdhe_group(&self) -> Option<rustls::ffdhe_groups::FfdheGroup<'static>> {
        self.0.ffdhe_group()
    }
    fn name(&self) -> rustls::NamedGroup {
        self.0.name()
    }
    fn fips(&self) -> bool {
        self.0.fips()
    }
    fn usable_for_version(&self, v: rustls::ProtocolVersion) -> bool {
        self.0.usable_for_version(v)
    }
}

/// The key exchange as it is, but with `hybrid_component` left at rustls's default (none).
struct AloneActive(Box<dyn ActiveKeyExchange>);

impl ActiveKeyExchange for AloneActive {
    fn complete(
        self: Box<Self>,
        peer: &[u8],
    ) -> Result<rustls::crypto::SharedSecret, rustls::Error> {
        self.0.complete(peer)
    }
    fn pub_key(&self) -> &[u8] {
        self.0.pub_key()
    }
    fn ffdhe_group(&self) -> Option<rustls::ffdhe_groups::FfdheGroup<'static>> {
        self.0.ffdhe_group()
    }
    fn group(&self) -> rustls::NamedGroup {
        self.0.group()
    }
}

thread_local! {
    /// The scheme of the last CertificateVerify this thread's client checked.
    static PEER_SCHEME: std::cell::Cell<Option<u16>> = const { std::cell::Cell::new(None) };
}

/// The scheme of the last CertificateVerify this thread's client checked, cleared.
pub(super) fn take_peer_scheme() -> Option<u16> {
    PEER_SCHEME.with(|s| s.take())
}

/// webpki's verifier, noting the CertificateVerify's scheme (rustls reports none): the only change
/// is that note; every check is webpki's, with the provider's (timed or plain) algorithms.
#[derive(Debug)]
struct Recording(Arc<rustls::client::WebPkiServerVerifier>);

impl rustls::client::danger::ServerCertVerifier for Recording {
    fn verify_server_cert(
        &self,
        end_entity: &rustls::pki_types::CertificateDer<'_>,
        intermediates: &[rustls::pki_types::CertificateDer<'_>],
        server_name: &rustls::pki_types::ServerName<'_>,
        ocsp: &[u8],
        now: rustls::pki_types::UnixTime,
    ) -> Result<rustls::client::danger::ServerCertVerified, rustls::Error> {
        self.0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp, now)
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &rustls::pki_types::CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &rustls::pki_types::CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        PEER_SCHEME.with(|s| s.set(Some(u16::from(dss.scheme))));
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

fn client_config(c: Config) -> Result<Arc<rustls::ClientConfig>> {
    client_config_with(c, provider(c)?)
}

/// The client's configuration over `provider` (quinn's evidence client notes its key exchanges).
pub(super) fn client_config_with(
    c: Config,
    provider: Arc<rustls::crypto::CryptoProvider>,
) -> Result<Arc<rustls::ClientConfig>> {
    let mut roots = rustls::RootCertStore::empty();
    roots.add(c.identity.root_der.clone().into())?;
    let webpki =
        rustls::client::WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
            .build()?;
    let mut cfg = rustls::ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13])?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(Recording(webpki)))
        .with_no_client_auth();
    cfg.resumption = if c.mode == Mode::Resumed {
        // Each connection's ticket is taken by the next (rustls uses a TLS 1.3 ticket once).
        rustls::client::Resumption::in_memory_sessions(4)
    } else {
        rustls::client::Resumption::disabled()
    };
    Ok(Arc::new(cfg))
}

/// TLS 1.3 only, no session cache; the identity's chain, leaf first. Full handshakes: no tickets;
/// resumed ones: one stateless ticket per connection, sealed by aws-lc-rs's ticketer (as
/// OpenSSL's and Go's are), whose keys rotate every 6 hours.
pub(super) fn server_config(c: Config) -> Result<Arc<rustls::ServerConfig>> {
    let certs = c
        .identity
        .chain_der
        .iter()
        .map(|d| d.clone().into())
        .collect();
    let key =
        <rustls::pki_types::PrivateKeyDer as rustls::pki_types::pem::PemObject>::from_pem_slice(
            c.identity.key_pem.as_bytes(),
        )
        .map_err(|e| anyhow!("key: {e}"))?;
    let mut cfg = rustls::ServerConfig::builder_with_provider(provider(c)?)
        .with_protocol_versions(&[&rustls::version::TLS13])?
        .with_no_client_auth()
        .with_single_cert(certs, key)?;
    cfg.session_storage = Arc::new(rustls::server::NoServerSessionStorage {});
    cfg.send_tls13_tickets = 0;
    if c.mode == Mode::Resumed {
        cfg.ticketer = rustls::crypto::aws_lc_rs::Ticketer::new()?;
        cfg.send_tls13_tickets = 1;
    }
    Ok(Arc::new(cfg))
}

struct Client {
    cfg: Arc<rustls::ClientConfig>,
    armed: bool,
}

/// A client handshake over `sock`: the time from `t0` until it is done, and the stream.
fn handshake<S: Read + Write>(
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

fn close<S: Read + Write>(tls: &mut rustls::StreamOwned<rustls::ClientConnection, S>) {
    tls.conn.send_close_notify();
    let _ = tls.conn.complete_io(&mut tls.sock);
}

impl super::Client for Client {
    fn connect(&self, addr: SocketAddr, evidence: bool) -> Result<One> {
        PEER_SCHEME.with(|s| s.set(None));
        tls::measure_connection(self.armed, |t0| {
            let sock = Counted::tcp(tcp(addr)?);
            let (hs, mut tls) = handshake(&self.cfg, sock, t0)?;
            let flight = tls.sock.received;
            echo(&mut tls)?;
            close(&mut tls);
            let ev = evidence.then(|| {
                let c = &tls.conn;
                let chain = c.peer_certificates().unwrap_or_default();
                Evidence {
                    version: c
                        .protocol_version()
                        .map(|v| format!("{v:?}"))
                        .unwrap_or_default(),
                    group: c
                        .negotiated_key_exchange_group()
                        .map(|g| format!("{:?}", g.name()))
                        .unwrap_or_default(),
                    cipher: c
                        .negotiated_cipher_suite()
                        .map(|c| format!("{:?}", c.suite()))
                        .unwrap_or_default(),
                    cert_key: c
                        .peer_certificates()
                        .and_then(|c| c.first())
                        .map(|c| super::identity::cert_key_type(c))
                        .unwrap_or_default(),
                    resumed: matches!(c.handshake_kind(), Some(rustls::HandshakeKind::Resumed)),
                    scheme: PEER_SCHEME.with(|s| s.get()),
                    chain_bytes: chain.iter().map(|d| d.len()).collect(),
                    server_flight_bytes: Some(flight),
                    ..Evidence::default()
                }
            });
            let resumed = tls.conn.handshake_kind() == Some(rustls::HandshakeKind::Resumed);
            Ok((hs, tls.sock.summary(), ev, resumed))
        })
    }

    fn connect_with(&self, addr: SocketAddr, teardown: super::Teardown) -> Result<f64> {
        let t0 = Instant::now();
        let sock = tls::tcp_with(addr, teardown)?;
        let (hs, mut tls) = handshake(&self.cfg, sock, t0)?;
        echo(&mut tls)?;
        close(&mut tls);
        Ok(hs.as_nanos() as f64)
    }

    fn open(&self, addr: SocketAddr) -> Result<Box<dyn Send>> {
        let conn = rustls::ClientConnection::new(self.cfg.clone(), "localhost".try_into()?)?;
        let mut tls = Box::new(rustls::StreamOwned::new(conn, tcp(addr)?));
        echo(&mut tls)?;
        Ok(tls)
    }
}

struct Server(Arc<rustls::ServerConfig>);

struct Connection(Box<rustls::StreamOwned<rustls::ServerConnection, TcpStream>>);

impl Acceptor for Server {
    fn serve_one(&self, stream: TcpStream) -> Result<Box<dyn Served>> {
        tls::accepted(&stream);
        let conn = rustls::ServerConnection::new(self.0.clone())?;
        let mut tls = Box::new(rustls::StreamOwned::new(conn, stream));
        echo_back(&mut tls)?;
        Ok(Box::new(Connection(tls)))
    }
}

impl Served for Connection {
    fn resumed(&self) -> bool {
        self.0.conn.handshake_kind() == Some(rustls::HandshakeKind::Resumed)
    }

    fn close(mut self: Box<Self>) {
        self.0.conn.send_close_notify();
        let _ = self.0.conn.complete_io(&mut self.0.sock);
    }
}

/// Client and server in one thread, records passed through buffers (`write_tls` / `read_tls`).
struct InMemory {
    client: Arc<rustls::ClientConfig>,
    server: Arc<rustls::ServerConfig>,
    group: String,
}

impl Pair for InMemory {
    fn handshake(&self, check: bool) -> Result<Sample> {
        handshake_in_memory(
            &self.client,
            &self.server,
            check.then_some(self.group.as_str()),
        )
    }
}

fn feed<D>(conn: &mut rustls::ConnectionCommon<D>, mut buf: &[u8]) -> Result<()> {
    while !buf.is_empty() {
        conn.read_tls(&mut buf)?;
        conn.process_new_packets()
            .map_err(|e| anyhow!("rustls: {e}"))?;
    }
    Ok(())
}

fn handshake_in_memory(
    ccfg: &Arc<rustls::ClientConfig>,
    scfg: &Arc<rustls::ServerConfig>,
    check: Option<&str>,
) -> Result<Sample> {
    let (mut tc, mut ts) = (Duration::ZERO, Duration::ZERO);
    let mut to_server = Vec::with_capacity(8192);
    let mut to_client = Vec::with_capacity(16384);
    let start = Instant::now();
    // Making the client connection makes its key share: client time.
    let mut client = side(&mut tc, || {
        rustls::ClientConnection::new(ccfg.clone(), "localhost".try_into().expect("a valid name"))
    })?;
    let mut server = side(&mut ts, || rustls::ServerConnection::new(scfg.clone()))?;
    for _ in 0..16 {
        to_server.clear();
        side(&mut tc, || -> Result<()> {
            while client.wants_write() {
                client.write_tls(&mut to_server)?;
            }
            Ok(())
        })?;
        side(&mut ts, || feed(&mut server, &to_server))?;
        to_client.clear();
        side(&mut ts, || -> Result<()> {
            while server.wants_write() {
                server.write_tls(&mut to_client)?;
            }
            Ok(())
        })?;
        side(&mut tc, || feed(&mut client, &to_client))?;
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
            // A resumed pair's server wrote its ticket after the client's Finished, and the loop
            // ran until nothing was left to write: the client holds the ticket for the next one.
            return Ok(Sample {
                client_ns: tc.as_nanos() as u64,
                server_ns: ts.as_nanos() as u64,
                wall_ns: wall.as_nanos() as u64,
                resumed: client.handshake_kind() == Some(rustls::HandshakeKind::Resumed),
            });
        }
    }
    bail!("rustls: the in-memory handshake did not finish in 16 flights")
}
