//! SSH over loopback with russh, client and server, one key-exchange method offered on each side.
//! Timed: connect and key exchange (until NEWKEYS), then `none` authentication, then disconnect.
//! The negotiated method is read from the two KEXINIT packets on the wire (RFC 4253 section 7.1).

use super::{Availability, Config, Features, One, Sink, TlsStack};
use crate::alloc;
use crate::results::Evidence;
use anyhow::{anyhow, ensure, Context, Result};
use russh::keys::ssh_key::private::Ed25519Keypair;
use russh::{client, server, Preferred};
use std::borrow::Cow;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::task::{Context as TaskContext, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

pub(crate) struct Russh;

impl TlsStack for Russh {
    fn name(&self) -> &'static str {
        "russh"
    }

    fn protocol(&self) -> &'static str {
        "ssh"
    }

    /// russh 0.65 computes its key exchange with RustCrypto's ml-kem and curve25519-dalek
    /// (`russh:src/kex/hybrid_mlkem.rs` and `curve25519.rs`), under x25519-dalek here.
    fn composition(&self) -> crate::results::Stack {
        crate::results::Stack::new(
            "russh",
            "RustCrypto (ml-kem, curve25519-dalek, ed25519-dalek, sha2), as russh 0.65 calls it",
            "rustcrypto",
            "rustcrypto",
            &["ssh"],
        )
    }

    /// TCP connect, then the version and KEXINIT exchange before the key exchange's own.
    fn round_trips(&self) -> f64 {
        3.0
    }

    fn features(&self) -> Features {
        Features {
            network: true,
            ..Features::default()
        }
    }

    fn availability(&self) -> Result<Availability> {
        Ok(Availability {
            version: "russh 0.65".into(),
            groups: None,
            auths: None,
            refused: Vec::new(),
        })
    }

    fn client(&self, c: Config) -> Result<Box<dyn super::Client>> {
        Ok(Box::new(Client::new(c.group)?))
    }

    fn serve(
        &self,
        c: Config,
        listener: super::Listener,
        served: &'static AtomicU64,
        _sink: Option<&'static Sink>,
        concurrent: bool,
    ) -> Result<()> {
        serve(c.group, listener.tcp()?, served, concurrent)
    }
}

pub(crate) fn kex_name(method: &str) -> Result<russh::kex::Name> {
    Ok(match method {
        "curve25519-sha256" => russh::kex::CURVE25519,
        "mlkem768x25519-sha256" => russh::kex::MLKEM768X25519_SHA256,
        _ => return Err(anyhow!("russh: no key exchange {method}")),
    })
}

fn preferred(method: &str) -> Result<Preferred> {
    Ok(Preferred {
        kex: Cow::Owned(vec![kex_name(method)?]),
        ..Preferred::default()
    })
}

/// Counts bytes and keeps the first flight of each direction, for a tokio stream.
struct Counted<S> {
    inner: S,
    wire: Arc<Mutex<super::wire::Counted<()>>>,
}

impl<S: AsyncRead + Unpin> AsyncRead for Counted<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut TaskContext<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let r = Pin::new(&mut self.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = &r {
            let new = &buf.filled()[before..];
            if let Ok(mut w) = self.wire.lock() {
                w.received += new.len() as u64;
                super::wire::keep(&mut w.first_received, new);
            }
        }
        r
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Counted<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut TaskContext<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let r = Pin::new(&mut self.inner).poll_write(cx, buf);
        if let Poll::Ready(Ok(n)) = &r {
            if let Ok(mut w) = self.wire.lock() {
                w.sent += *n as u64;
                super::wire::keep(&mut w.first_sent, &buf[..*n]);
            }
        }
        r
    }
    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }
    fn poll_shutdown(
        mut self: Pin<&mut Self>,
        cx: &mut TaskContext<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

struct ClientHandler;

impl client::Handler for ClientHandler {
    type Error = russh::Error;

    async fn check_server_key(
        &mut self,
        _key: &russh::keys::PublicKeyOrCertificate,
    ) -> Result<bool, Self::Error> {
        // A fresh host key per run; host key checking is not what is measured.
        Ok(true)
    }
}

pub(crate) struct Client {
    rt: tokio::runtime::Runtime,
    config: Arc<client::Config>,
    /// The key exchange offered, for the configuration of a held connection (`open`).
    method: String,
    /// A server not pqprof's own (sshd of servers/). Its refusal of `none` authentication ends a
    /// connection as pqprof's acceptance does.
    server: Option<Foreign>,
}

/// What the evidence says of a server of servers/: its software ("sshd 10.0p2") and host key
/// ("ECDSA-P256 host key").
pub(crate) struct Foreign {
    pub(crate) software: String,
    pub(crate) host_key: String,
}

impl Client {
    pub(crate) fn for_server(method: &str, server: Foreign) -> Result<Client> {
        Ok(Client {
            server: Some(server),
            ..Client::new(method)?
        })
    }

    pub(crate) fn new(method: &str) -> Result<Client> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        Ok(Client {
            rt,
            config: Arc::new(config(method, Some(super::tls::io_timeout()))?),
            method: method.to_string(),
            server: None,
        })
    }
}

impl Client {
    /// The server's answer to `none` authentication as it should be: pqprof's own server accepts
    /// it, and a server of servers/ (sshd) refuses it, which ends the exchange as well.
    fn answered(&self, auth: client::AuthResult) -> Result<()> {
        ensure!(
            auth.success() || self.server.is_some(),
            "the server refused none authentication"
        );
        Ok(())
    }
}

/// A TCP connection to `addr` within the socket timeout, without Nagle's delay.
async fn tcp(addr: std::net::SocketAddr) -> Result<tokio::net::TcpStream> {
    let tcp = tokio::time::timeout(
        super::tls::io_timeout(),
        tokio::net::TcpStream::connect(addr),
    )
    .await
    .context("connect timed out")??;
    tcp.set_nodelay(true)?;
    Ok(tcp)
}

/// The SSH identification and key exchange over `stream`, within the socket timeout.
async fn key_exchange<S>(
    config: Arc<client::Config>,
    stream: S,
) -> Result<client::Handle<ClientHandler>>
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    Ok(tokio::time::timeout(
        super::tls::io_timeout(),
        client::connect_stream(config, stream, ClientHandler),
    )
    .await
    .context("SSH key exchange timed out")??)
}

/// The client's configuration: `method` alone offered, and a connection idle for `inactivity`
/// closed (none for a held one, which is idle on purpose).
fn config(method: &str, inactivity: Option<std::time::Duration>) -> Result<client::Config> {
    Ok(client::Config {
        preferred: preferred(method)?,
        nodelay: true,
        inactivity_timeout: inactivity,
        ..Default::default()
    })
}

impl super::Client for Client {
    /// A connection held open after its key exchange and the server's answer to `none`
    /// authentication (a refusal from sshd, which then waits for another method until its
    /// LoginGraceTime): the session's task stays in this client's runtime until the connection
    /// is dropped with the client.
    fn open(&self, addr: std::net::SocketAddr) -> Result<Box<dyn Send>> {
        let config = Arc::new(config(&self.method, None)?);
        let handle = self.rt.block_on(async {
            let mut handle = key_exchange(config, tcp(addr).await?).await?;
            let auth = tokio::time::timeout(
                super::tls::io_timeout(),
                handle.authenticate_none("pqprof"),
            )
            .await
            .context("no answer to none authentication")??;
            self.answered(auth)?;
            Ok::<_, anyhow::Error>(handle)
        })?;
        Ok(Box::new(handle))
    }

    fn connect(&self, addr: std::net::SocketAddr, evidence: bool) -> Result<One> {
        let cpu0 = alloc::thread_cpu_ns();
        let mem0 = alloc::counters();
        let wire = Arc::new(Mutex::new(super::wire::Counted::new(())));
        let (t0, started_ns) = crate::alloc::start_clock();
        let (kex, _auth, total, w) = self.rt.block_on(async {
            let tcp = tcp(addr).await?;
            wire.lock().map_err(|_| anyhow!("poisoned"))?.port = tcp.local_addr()?.port();
            let stream = Counted {
                inner: tcp,
                wire: wire.clone(),
            };
            let mut handle = key_exchange(self.config.clone(), stream).await?;
            let kex = t0.elapsed();
            let auth = handle.authenticate_none("pqprof").await?;
            self.answered(auth)?;
            let authed = t0.elapsed();
            handle
                .disconnect(russh::Disconnect::ByApplication, "", "en")
                .await?;
            let total = t0.elapsed();
            let w = wire.lock().map_err(|_| anyhow!("poisoned"))?.summary();
            // Untimed: the session's task sends the disconnect and closes the connection. Left
            // pending, it ran inside the next connection's timed region (a current-thread runtime
            // drives it only in the next `block_on`), and the last connection of a round stayed
            // open until the server's inactivity timeout, which `stats` then waited out (5 s).
            let _ = tokio::time::timeout(super::tls::io_timeout(), handle).await;
            Ok::<_, anyhow::Error>((kex, authed, total, w))
        })?;
        let ev = evidence.then(|| {
            let ours = crate::parse::ssh::kexinit_methods(&w.first_sent).unwrap_or_default();
            let theirs = crate::parse::ssh::kexinit_methods(&w.first_received).unwrap_or_default();
            Evidence {
                // A server of servers/ names itself in its identification line
                // ("SSH-2.0-OpenSSH_10.0p2 Debian-7", RFC 4253 section 4.2).
                version: match &self.server {
                    Some(_) => identification(&w.first_received),
                    None => "SSH-2.0".into(),
                },
                group: ours
                    .iter()
                    .find(|m| theirs.contains(m))
                    .cloned()
                    .unwrap_or_default(),
                cipher: String::new(),
                cert_key: self
                    .server
                    .as_ref()
                    .map_or_else(|| "Ed25519 host key".into(), |f| f.host_key.clone()),
                server_software: self.server.as_ref().map(|f| f.software.clone()),
                resumed: false,
                ..Evidence::default()
            }
        });
        Ok(One {
            total_ns: total.as_nanos() as f64,
            ready_ns: kex.as_nanos() as f64,
            sent: w.sent,
            received: w.received,
            cpu_ns: alloc::thread_cpu_ns() - cpu0,
            mem: alloc::counters().since(mem0),
            evidence: ev,
            insitu: None,
            go_allocs: 0.0,
            go_bytes: 0.0,
            port: w.port,
            started_ns,
            resumed: None,
        })
    }
}

/// The peer's identification line, without its end of line; "SSH-2.0" where none is readable.
fn identification(received: &[u8]) -> String {
    let line = received.split(|&b| b == b'\n').next().unwrap_or_default();
    let text = String::from_utf8_lossy(line).trim_end().to_string();
    if text.starts_with("SSH-") {
        text
    } else {
        "SSH-2.0".into()
    }
}

#[derive(Clone)]
struct ServerHandler;

impl server::Handler for ServerHandler {
    type Error = russh::Error;

    async fn auth_none(&mut self, _user: &str) -> Result<server::Auth, Self::Error> {
        Ok(server::Auth::Accept)
    }
}

/// The server side, in its own process: one session at a time until killed.
/// With `concurrent`, each session runs as its own task (`pqprof network`).
pub(crate) fn serve(
    method: &str,
    listener: std::net::TcpListener,
    served: &'static AtomicU64,
    concurrent: bool,
) -> Result<()> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let mut seed = [0u8; 32];
    getrandom::fill(&mut seed).map_err(|e| anyhow!("getrandom: {e}"))?;
    let key = russh::keys::PrivateKey::from(Ed25519Keypair::from_seed(&seed));
    let config = Arc::new(server::Config {
        keys: vec![key],
        preferred: preferred(method)?,
        methods: russh::MethodSet::from(&[russh::MethodKind::None][..]),
        auth_rejection_time: Duration::ZERO,
        auth_rejection_time_initial: Some(Duration::ZERO),
        inactivity_timeout: Some(super::tls::io_timeout()),
        ..Default::default()
    });
    listener.set_nonblocking(true)?;
    rt.block_on(async {
        let listener = tokio::net::TcpListener::from_std(listener)?;
        loop {
            let (tcp, _) = listener.accept().await?;
            tcp.set_nodelay(true)?;
            if concurrent {
                let config = config.clone();
                // Over a lossy path a client's last packets may never arrive, and the session
                // then ends in an early EOF: expected there, so not reported line by line.
                tokio::spawn(async move {
                    if let Ok(session) = server::run_stream(config, tcp, ServerHandler).await {
                        if session.await.is_ok() {
                            served.fetch_add(1, Relaxed);
                        }
                    }
                });
                continue;
            }
            match server::run_stream(config.clone(), tcp, ServerHandler).await {
                Ok(session) => match session.await {
                    Ok(()) => {
                        served.fetch_add(1, Relaxed);
                    }
                    Err(e) => eprintln!("ssh server: {e}"),
                },
                Err(e) => eprintln!("ssh server: {e}"),
            }
        }
    })
}
