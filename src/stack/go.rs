//! Go's crypto/tls as a real stack: the Go peer's `client`, a child process pqprof drives over its
//! standard input (`evidence`, `run N`), against the peer's `serve` (server.rs). Seed 000's TLS
//! contract, as for the other stacks: a fresh connection per handshake, TLS 1.3, one group, an
//! ECDSA P-256 certificate, no resumption, a 32-byte echo.

use super::{child, Availability, Config, One, TlsStack};
use crate::parse::tls::key_shares;
use crate::results::{AllocCounters, Evidence};
use anyhow::{anyhow, bail, Context, Result};
use serde::Deserialize;
use std::io::{BufRead, BufReader, Write};
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::Duration;

pub struct Go;

impl TlsStack for Go {
    fn name(&self) -> &'static str {
        crate::results::GoPeer::STACK
    }

    fn protocol(&self) -> &'static str {
        "tls13"
    }

    fn composition(&self) -> crate::results::Stack {
        crate::results::Stack::new(
            "go",
            "Go's standard library (crypto/mlkem, crypto/ecdh, crypto/ecdsa, crypto/mldsa, \
             crypto/aes + crypto/cipher, crypto/hkdf, crypto/hmac, crypto/sha512), \
             through the Go peer",
            "go",
            "go",
            &["tls13", "raw"],
        )
    }

    fn round_trips(&self) -> f64 {
        2.0
    }

    fn availability(&self) -> Result<Availability> {
        let v = crate::go::version(&crate::go::binary()?)?;
        Ok(Availability {
            version: v.go_version,
            groups: Some(v.groups),
        })
    }

    /// The peer's `client`, told the server's address by `connect`'s first call.
    fn client(&self, c: Config) -> Result<Box<dyn super::Client>> {
        Ok(Box::new(Lazy {
            group: c.group.to_string(),
            identity: c.identity.clone(),
            started: std::sync::Mutex::new(None),
        }))
    }

    /// The peer's `serve`: the same port line and control lines as pqprof's own server.
    fn start_server(&self, s: &child::Start) -> Result<child::Server> {
        let mut cmd = Command::new(crate::go::binary()?);
        cmd.args(["serve", "--group", s.group])
            .arg("--cert")
            .arg(&s.files.chain)
            .arg("--key")
            .arg(&s.files.key);
        child::Server::spawn(cmd)
    }
}

/// The peer's client process, started on the first connection (it is given the server's address
/// at start), with the CA's file beside it.
struct Lazy {
    group: String,
    identity: super::Identity,
    started: std::sync::Mutex<Option<(Client, super::identity::Files)>>,
}

impl Lazy {
    fn with<R>(&self, addr: SocketAddr, f: impl FnOnce(&mut Client) -> Result<R>) -> Result<R> {
        let mut g = self.started.lock().map_err(|_| anyhow!("poisoned"))?;
        if g.is_none() {
            let files = super::identity::Files::write(&self.identity, "go-client")?;
            let c = Client::start(&crate::go::binary()?, &self.group, addr, &files.root)?;
            *g = Some((c, files));
        }
        let (c, _) = g
            .as_mut()
            .ok_or_else(|| anyhow!("the Go client did not start"))?;
        f(c)
    }
}

impl super::Client for Lazy {
    /// Go's client reports a connection only in batches (`run N`); one connection alone is the
    /// unmeasured evidence connection.
    fn connect(&self, addr: SocketAddr, evidence: bool) -> Result<One> {
        if evidence {
            return self.with(addr, |c| c.evidence());
        }
        let mut v = self.connect_many(addr, 1)?;
        v.pop()
            .ok_or_else(|| anyhow!("the Go client made no connection"))
    }

    fn connect_many(&self, addr: SocketAddr, n: usize) -> Result<Vec<One>> {
        crate::interrupt::check()?;
        self.with(addr, |c| c.run(n))
    }
}

struct Client {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[derive(Deserialize)]
struct GoEvidence {
    version: String,
    group: String,
    cipher: String,
    cert_key: String,
    resumed: bool,
    first_sent_hex: String,
    first_received_hex: String,
    /// The CertificateVerify's scheme, inferred by the peer from the leaf's key (crypto/tls
    /// reports none; in TLS 1.3 the key fixes it), the certificates received and the bytes
    /// received when the handshake completed (peers/go client.go).
    #[serde(default)]
    scheme: Option<u16>,
    #[serde(default)]
    chain_bytes: Vec<usize>,
    #[serde(default)]
    server_flight_bytes: Option<u64>,
}

#[derive(Deserialize)]
struct Connection {
    total_ns: u64,
    ready_ns: u64,
    sent: u64,
    received: u64,
}

#[derive(Deserialize)]
struct RunReport {
    connections: Vec<Connection>,
    cpu_ns: f64,
    go_mallocs: u64,
    go_alloc_bytes: u64,
}

fn hex(s: &str) -> Vec<u8> {
    (0..s.len() / 2)
        .filter_map(|i| u8::from_str_radix(s.get(2 * i..2 * i + 2)?, 16).ok())
        .collect()
}

impl Client {
    fn start(bin: &Path, group: &str, addr: SocketAddr, ca: &Path) -> Result<Client> {
        let mut cmd = Command::new(bin);
        crate::interrupt::die_with_parent(&mut cmd);
        let mut child = cmd
            .args(["client", "--group", group, "--addr", &addr.to_string()])
            .arg("--ca")
            .arg(ca)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .with_context(|| format!("cannot start {}", bin.display()))?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            bail!("Go client pipes")
        };
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Ok(Client {
            child,
            stdin,
            lines,
        })
    }

    fn ask(&mut self, cmd: &str, timeout: Duration) -> Result<String> {
        writeln!(self.stdin, "{cmd}")
            .and_then(|()| self.stdin.flush())
            .map_err(|e| anyhow!("cannot talk to the Go client ({e})"))?;
        let line = match self.lines.recv_timeout(timeout) {
            Ok(l) => l,
            Err(RecvTimeoutError::Timeout) => bail!(
                "the Go client did not answer {cmd:?} within {} s",
                timeout.as_secs()
            ),
            Err(RecvTimeoutError::Disconnected) => {
                bail!("the Go client exited ({:?})", self.child.try_wait()?)
            }
        };
        if let Ok(e) = serde_json::from_str::<std::collections::HashMap<String, String>>(&line) {
            if let Some(err) = e.get("error") {
                bail!("Go client: {err}");
            }
        }
        Ok(line)
    }

    /// One unmeasured connection and what it negotiated, key shares parsed from its first bytes.
    fn evidence(&mut self) -> Result<One> {
        let e: GoEvidence = serde_json::from_str(&self.ask("evidence", Duration::from_secs(10))?)
            .context("Go client evidence")?;
        let (sent, received) = (hex(&e.first_sent_hex), hex(&e.first_received_hex));
        let ev = Evidence {
            version: e.version,
            group: e.group,
            cipher: e.cipher,
            cert_key: e.cert_key,
            resumed: e.resumed,
            client_share: key_shares(&sent)
                .and_then(|(m, s)| (m == 1).then_some(s))
                .and_then(|s| s.first().copied()),
            server_share: key_shares(&received)
                .and_then(|(m, s)| (m == 2).then_some(s))
                .and_then(|s| s.first().copied()),
            scheme: e.scheme,
            chain_bytes: e.chain_bytes,
            server_flight_bytes: e.server_flight_bytes,
            client_hello_bytes: super::tls::first_record_bytes(&sent),
        };
        Ok(One {
            total_ns: 0.0,
            ready_ns: 0.0,
            sent: 0,
            received: 0,
            cpu_ns: 0.0,
            mem: AllocCounters::default(),
            evidence: Some(ev),
            insitu: None,
            go_allocs: 0.0,
            go_bytes: 0.0,
        })
    }

    /// `n` connections one after another; the client process's CPU and Go allocations are shared
    /// out evenly among them (the peer counts them per batch).
    fn run(&mut self, n: usize) -> Result<Vec<One>> {
        let budget = Duration::from_secs(10 + n as u64 / 10);
        let r: RunReport = serde_json::from_str(&self.ask(&format!("run {n}"), budget)?)
            .context("Go client run")?;
        let k = r.connections.len().max(1) as f64;
        Ok(r.connections
            .into_iter()
            .map(|c| One {
                total_ns: c.total_ns as f64,
                ready_ns: c.ready_ns as f64,
                sent: c.sent,
                received: c.received,
                cpu_ns: r.cpu_ns / k,
                mem: AllocCounters::default(),
                evidence: None,
                insitu: None,
                go_allocs: r.go_mallocs as f64 / k,
                go_bytes: r.go_alloc_bytes as f64 / k,
            })
            .collect())
    }
}
