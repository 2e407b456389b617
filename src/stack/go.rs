//! Go's crypto/tls as a real stack: the Go peer's `client`, a child process pqprof drives over its
//! standard input (`cpu`, `evidence`, `run N`, `run N reset`, `open`), against the peer's `serve`, which
//! answers the same control lines as pqprof's own server (child.rs). Seed 000's TLS contract, as
//! for the other stacks: a fresh connection per handshake, TLS 1.3, one group, the run's
//! certificate chain, no resumption, a 32-byte echo.
//!
//! Every step runs it:
//! - `handshake`: one client process, connections in batches;
//! - `network`: the peer's `serve --bind ADDR --concurrent` in the server namespace (through
//!   `Start::wrap`), and one client process per cell thread, started by that thread (`ready`) so
//!   that it is in the client namespace, as a child inherits the namespace of the thread that
//!   starts it;
//! - `capacity`: the peer's `capacity` server pinned to the server core, client processes started
//!   by the load threads on the load core (one per thread at once), and in memory the peer's
//!   `pair` (`GoPair`): Go cannot run inside pqprof's process, so the peer makes the handshakes,
//!   both sides in one process on the core pqprof pinned, and returns each side's time.
//!
//! Each connection the load threads make is a command and an answer over a pipe, so the Go load
//! generator costs its core more per connection than an in-process client (a load step's client
//! busy share counts the processes' CPU too).

use super::{child, Availability, Config, Features, One, Pair, Sample, Teardown, TlsStack};
use crate::parse::tls::key_shares;
use crate::results::{AllocCounters, Evidence, Mode};
use anyhow::{anyhow, bail, Context, Result};
use serde::Deserialize;
use std::io::{BufRead, BufReader, Write};
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
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
        // Its client checks the chain once the Certificate is in (crypto/tls
        // handshake_client_tls13.go: readServerCertificate calls verifyServerCertificate before
        // it reads the CertificateVerify); its server writes the flight at once, after signing.
        .with_on_certificate(&["ServerHello to the chain"])
    }

    fn round_trips(&self) -> f64 {
        2.0
    }

    /// No in-situ hooks: the peer's crypto calls are Go's, timed as phases by its `phases`.
    fn features(&self) -> Features {
        Features {
            in_situ: false,
            unarmed_wrapper: false,
            in_memory: true,
            capacity: true,
            network: true,
            under_load: false,
            resumption: true,
            hello_retry: false,
            hello_retry_classical: false,
            two_shares: true,
            address_validation: false,
        }
    }

    fn cannot(&self, m: Mode) -> String {
        match m {
            Mode::HelloRetry => "go's client cannot offer the hybrid with X25519's key share alone \
                                 (crypto/tls ignores the order of its curve preferences and sends \
                                 the hybrid's share whenever it offers the hybrid)"
                .into(),
            Mode::HelloRetryClassical => "go's client cannot offer the hybrid's key share without \
                                          X25519's (crypto/tls sends both whenever it offers both, \
                                          so a server without the hybrid takes X25519's at once)"
                .into(),
            _ => format!("go does not make {} handshakes here", m.suffix()),
        }
    }

    fn availability(&self) -> Result<Availability> {
        let v = crate::go::version(&crate::go::binary()?)?;
        Ok(Availability {
            version: v.go_version,
            groups: Some(v.groups),
            auths: v.cert_keys,
            refused: Vec::new(),
        })
    }

    /// The peer's `client`, started by the first connection to an address (it is given the
    /// server's address at start), with the CA's file beside it.
    fn client(&self, c: Config) -> Result<Box<dyn super::Client>> {
        // The peer's client offers --group first and --second-share after it; Go sends a key
        // share for the first, and for X25519 beside a first hybrid.
        let (offered, _) = c.offered();
        let mut args: Vec<String> = Vec::new();
        if c.mode == Mode::Resumed {
            args.push("--resumed".into());
        }
        if let Some(g) = offered.get(1) {
            args.extend(["--second-share".into(), g.to_string()]);
        }
        lazy(offered[0], args, tcp_evidence, c.identity)
    }

    /// The peer's `serve`: the same port line and control lines as pqprof's own server, on the
    /// address, with the concurrency and the socket timeout the scenario asks for, inside
    /// `wrap` (the network grid's server namespace) when given.
    fn start_server(&self, s: &child::Start) -> Result<child::Server> {
        let resumed = (s.mode == Mode::Resumed).then_some("--resumed");
        start_server(s, resumed)
    }

    /// The peer's `capacity` server, pinned to the core before it starts (the runtime then sees
    /// one CPU).
    fn start_capacity_server(&self, s: &child::CapacityStart) -> Result<child::Server> {
        let mut cmd = Command::new(crate::go::binary()?);
        cmd.args(["capacity", "--group", s.group])
            .arg("--cert")
            .arg(&s.files.chain)
            .arg("--key")
            .arg(&s.files.key)
            .args(["--threads", &s.threads.to_string()])
            .args(s.hold.then_some("--hold"));
        if let Some(core) = s.core {
            child::pin(&mut cmd, core);
        }
        child::Server::spawn(cmd).with_context(|| format!("go capacity server for {}", s.group))
    }

    /// The peer's `pair`, started now by the calling thread, whose core it inherits (capacity's
    /// in-memory measurement runs on the server core).
    fn pair(&self, c: Config) -> Result<Box<dyn Pair>> {
        anyhow::ensure!(
            matches!(c.mode, Mode::Full | Mode::Resumed),
            "the Go pair makes full and resumed handshakes only"
        );
        let files = write_files(c.identity, "go-pair")?;
        let bin = crate::go::binary()?;
        let mut cmd = Command::new(&bin);
        cmd.args(["pair", "--group", c.group])
            .arg("--cert")
            .arg(&files.chain)
            .arg("--key")
            .arg(&files.key)
            .arg("--ca")
            .arg(&files.root)
            .args((c.mode == Mode::Resumed).then_some("--resumed"));
        let (peer, stdin, lines) = Peer::start(cmd, &bin)?;
        Ok(Box::new(GoPair {
            group: c.group.to_string(),
            process: Mutex::new(peer),
            io: Mutex::new((stdin, lines)),
            _files: files,
        }))
    }
}

/// How a client's `evidence` answer reads: over TCP crypto/tls's report with the first bytes each
/// way (`tcp_evidence`), over QUIC with the connection's datagrams (`quicgo::evidence`).
pub(super) type ReadEvidence = fn(&str) -> Result<Evidence>;

/// The peer's `client` processes for one group, with `args` after the group's (`--quic` among them:
/// the QUIC client), their evidence read by `evidence`.
pub(super) fn lazy(
    group: &str,
    args: Vec<String>,
    evidence: ReadEvidence,
    identity: &super::Identity,
) -> Result<Box<dyn super::Client>> {
    Ok(Box::new(Lazy {
        group: group.to_string(),
        args,
        evidence,
        files: write_files(identity, "go-client")?,
        idle: Mutex::new(Vec::new()),
        outside_cpu_ns: AtomicU64::new(0),
    }))
}

/// The peer's `serve` with `args` after the scenario's: the same port line and control lines as
/// pqprof's own server, on the address, with the concurrency and the socket timeout the scenario
/// asks for, inside `wrap` (the network grid's server namespace) when given.
pub(super) fn start_server<'a>(
    s: &child::Start,
    args: impl IntoIterator<Item = &'a str>,
) -> Result<child::Server> {
    let mut cmd = s.command(&crate::go::binary()?);
    cmd.args(["serve", "--group", s.group])
        .arg("--cert")
        .arg(&s.files.chain)
        .arg("--key")
        .arg(&s.files.key)
        .args(s.concurrent.then_some("--concurrent"))
        .args(args);
    if let Some(b) = s.bind {
        cmd.args(["--bind", &b.to_string()]);
    }
    if let Some(t) = s.timeout_s {
        cmd.args(["--timeout-s", &t.to_string()]);
    }
    child::Server::launch(cmd, s).with_context(|| format!("go server for {}", s.group))
}

/// The identity's files for one client or pair, in a folder of its own (`Files` removes its
/// folder when dropped, and network cells make many clients at once).
fn write_files(id: &super::Identity, purpose: &str) -> Result<super::identity::Files> {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    super::identity::Files::write(id, &format!("{purpose}-{}", NEXT.fetch_add(1, Relaxed)))
}

/// The peer's clients of one group: a process per caller at once, each started by the thread that
/// first needs it and given the server's address then; idle ones are kept for the next caller to
/// the same address. The network grid gives each cell thread a client of its own (one process
/// each); capacity's load threads share one (a process each at the most).
struct Lazy {
    group: String,
    /// The client's arguments after its group: `--resumed` (each process keeps the ticket of its
    /// last connection and resumes the next with it), `--second-share G`, `--quic --mode M`.
    args: Vec<String>,
    /// How its evidence answer reads.
    evidence: ReadEvidence,
    files: super::identity::Files,
    idle: Mutex<Vec<Client>>,
    /// The CPU time its processes reported since each started (each one's first answer is the
    /// baseline), nanoseconds as f64 bits.
    outside_cpu_ns: AtomicU64,
}

impl Lazy {
    /// Runs `f` on an idle process of `addr`'s, or on one this thread starts.
    fn with<R>(&self, addr: SocketAddr, f: impl FnOnce(&mut Client) -> Result<R>) -> Result<R> {
        let idle = {
            let mut v = self.idle.lock().map_err(|_| anyhow!("poisoned"))?;
            v.iter().position(|c| c.addr == addr).map(|i| v.swap_remove(i))
        };
        let mut c = match idle {
            Some(c) => c,
            None => Client::start(
                &crate::go::binary()?,
                (&self.group, &self.args, self.evidence),
                addr,
                &self.files.root,
            )?,
        };
        let r = f(&mut c);
        // A process that died or lost the thread of its answers is not reused.
        if c.usable() {
            self.idle.lock().map_err(|_| anyhow!("poisoned"))?.push(c);
        }
        r
    }

    fn add_cpu(&self, ns: f64) {
        let _ = self
            .outside_cpu_ns
            .fetch_update(Relaxed, Relaxed, |b| Some((f64::from_bits(b) + ns).to_bits()));
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
        let r = self.with(addr, |c| c.run(n, Teardown::Close))?;
        self.add_cpu(r.process_cpu_ns);
        Ok(r.connections)
    }

    /// Starts this thread's process for `addr` when none is idle (it has answered once: it runs,
    /// with its CA read).
    fn ready(&self, addr: SocketAddr) -> Result<()> {
        self.with(addr, |_| Ok(()))
    }

    /// What the processes spent in all since each first answered: their connections, and reading
    /// commands and writing answers (the load they put on their core).
    fn outside_cpu_ns(&self) -> f64 {
        f64::from_bits(self.outside_cpu_ns.load(Relaxed))
    }

    /// The peer measures from before its TCP connect to its handshake's end, as the others do.
    fn connect_with(&self, addr: SocketAddr, teardown: Teardown) -> Result<f64> {
        let r = self.with(addr, |c| c.run(1, teardown))?;
        self.add_cpu(r.process_cpu_ns);
        r.connections
            .first()
            .map(|o| o.ready_ns)
            .ok_or_else(|| anyhow!("the Go client made no connection"))
    }

    /// The connection stays in the peer's process, which the returned handle keeps: it closes
    /// when the process ends, once every handle and the client are dropped.
    fn open(&self, addr: SocketAddr) -> Result<Box<dyn Send>> {
        let held = self.with(addr, |c| {
            c.ask("open", c.budget(1))?;
            Ok(c.process.clone())
        })?;
        Ok(Box::new(held))
    }
}

/// A running peer process: killed and reaped when the last handle to it goes.
struct Peer {
    child: Child,
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Peer {
    /// Starts `cmd` with pipes, and a thread that reads its answers (a silent peer cannot hang
    /// pqprof). Not with PR_SET_PDEATHSIG (`interrupt::die_with_parent`), which the kernel ties to
    /// the starting thread: a client started by a network cell's thread outlives it. The peer ends
    /// when pqprof's process does (it watches its parent) or closes its stdin.
    fn start(mut cmd: Command, bin: &Path) -> Result<(Peer, ChildStdin, Receiver<String>)> {
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .with_context(|| format!("cannot start {}", bin.display()))?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            bail!("Go peer pipes")
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
        Ok((Peer { child }, stdin, lines))
    }
}

/// One command line to a peer process, one answer line back, within `timeout`; an answer
/// {"error": ...} is the error. A peer that did not answer in time is killed: its answer, should it
/// come, would be taken for the next command's.
fn ask(
    process: &Mutex<Peer>,
    stdin: &mut ChildStdin,
    lines: &Receiver<String>,
    cmd: &str,
    timeout: Duration,
) -> Result<String> {
    let exited = || {
        process
            .lock()
            .ok()
            .and_then(|mut p| p.child.try_wait().ok().flatten())
    };
    writeln!(stdin, "{cmd}")
        .and_then(|()| stdin.flush())
        .map_err(|e| anyhow!("cannot talk to the Go peer ({e}); exited: {:?}", exited()))?;
    let line = match lines.recv_timeout(timeout) {
        Ok(l) => l,
        Err(RecvTimeoutError::Timeout) => {
            if let Ok(mut p) = process.lock() {
                let _ = p.child.kill();
            }
            bail!(
                "the Go peer did not answer {cmd:?} within {} s",
                timeout.as_secs()
            )
        }
        Err(RecvTimeoutError::Disconnected) => bail!("the Go peer exited ({:?})", exited()),
    };
    if let Ok(e) = serde_json::from_str::<std::collections::HashMap<String, String>>(&line) {
        if let Some(err) = e.get("error") {
            bail!("Go peer: {err}");
        }
    }
    Ok(line)
}

/// One of the peer's client processes, for one server address.
struct Client {
    addr: SocketAddr,
    /// How its `evidence` answer reads.
    evidence: ReadEvidence,
    /// Shared with the handles of the connections it holds (`open`).
    process: Arc<Mutex<Peer>>,
    stdin: ChildStdin,
    lines: Receiver<String>,
    /// The socket timeout it was started with (the network grid's is longer).
    timeout: Duration,
    /// The process's CPU time at its last answer, nanoseconds.
    cpu_seen_ns: f64,
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
    /// The client's port and CLOCK_MONOTONIC when its clock started (a peer built before
    /// 2026-12-03 sends neither: 0).
    #[serde(default)]
    port: u16,
    #[serde(default)]
    started_ns: u64,
    /// Whether the handshake resumed (a peer built before 2026-12-05 does not say).
    #[serde(default)]
    resumed: Option<bool>,
}

#[derive(Deserialize)]
struct RunReport {
    connections: Vec<Connection>,
    cpu_ns: f64,
    process_cpu_ns: f64,
    go_mallocs: u64,
    go_alloc_bytes: u64,
}

/// The Go peer's hex, as bytes (none where it is not hex: no flight to read).
pub(super) fn hex(s: &str) -> Vec<u8> {
    pqprof_core::parse::from_hex(s).unwrap_or_default()
}

/// The TCP client's evidence: what crypto/tls reports, and the key shares parsed from the
/// connection's first bytes each way.
fn tcp_evidence(answer: &str) -> Result<Evidence> {
        let e: GoEvidence = serde_json::from_str(answer).context("Go client evidence")?;
        let (sent, received) = (hex(&e.first_sent_hex), hex(&e.first_received_hex));
        let client_shares = key_shares(&sent)
            .and_then(|(m, s)| (m == 1).then_some(s))
            .unwrap_or_default();
        let ev = Evidence {
            version: e.version,
            group: e.group,
            cipher: e.cipher,
            cert_key: e.cert_key,
            resumed: e.resumed,
            client_share: client_shares.first().copied(),
            client_shares,
            hello_retry: crate::parse::tls::is_hello_retry(&received),
            server_share: key_shares(&received)
                .and_then(|(m, s)| (m == 2).then_some(s))
                .and_then(|s| s.first().copied()),
            // 0: none (a resumption has no CertificateVerify).
            scheme: e.scheme.filter(|&s| s != 0),
            chain_bytes: e.chain_bytes,
            server_flight_bytes: e.server_flight_bytes,
            client_hello_bytes: super::tls::first_record_bytes(&sent),
            quic: None,
            server_software: None,
        };
        Ok(ev)
}


/// What `run` gives: each connection, and the CPU time the process spent since its last answer.
struct Ran {
    connections: Vec<One>,
    process_cpu_ns: f64,
}

#[derive(Deserialize)]
struct CpuReport {
    process_cpu_ns: f64,
}

impl Client {
    /// Started by the calling thread: the process is in its network namespace and on its cores.
    fn start(
        bin: &Path,
        (group, args, evidence): (&str, &[String], ReadEvidence),
        addr: SocketAddr,
        ca: &Path,
    ) -> Result<Client> {
        let timeout = super::tls::io_timeout();
        let mut cmd = Command::new(bin);
        // A client process makes one connection at a time, so a second processor would only give
        // the runtime a thread to wake at each packet, on the cores the router and the servers
        // share: in two runs of the network grid's Go stacks one after the other, one processor
        // took the client CPU per handshake down in every cell at 5.6 and 78.7 ms, by 0.67-0.77
        // (geometric mean per stack and RTT; Xeon model 207, 4769b0, 2026-12-04).
        cmd.env("GOMAXPROCS", "1");
        cmd.args(["client", "--group", group, "--addr", &addr.to_string()])
            .arg("--ca")
            .arg(ca)
            .args(["--timeout-s", &timeout.as_secs().max(1).to_string()])
            .args(args);
        let (peer, stdin, lines) = Peer::start(cmd, bin)?;
        let mut c = Client {
            addr,
            evidence,
            process: Arc::new(Mutex::new(peer)),
            stdin,
            lines,
            timeout,
            cpu_seen_ns: 0.0,
        };
        // The first answer: the process runs, and its start is not counted as any connection's.
        let first: CpuReport = serde_json::from_str(&c.ask("cpu", Duration::from_secs(10))?)
            .context("Go client cpu")?;
        c.cpu_seen_ns = first.process_cpu_ns;
        Ok(c)
    }

    /// Whether the process still runs (one that did not answer in time was killed).
    fn usable(&self) -> bool {
        self.process
            .lock()
            .is_ok_and(|mut p| matches!(p.child.try_wait(), Ok(None)))
    }

    /// How long `n` connections may take: each ends within the socket timeout, dial to close.
    fn budget(&self, n: usize) -> Duration {
        Duration::from_secs(10) + self.timeout * n.max(1) as u32
    }

    fn ask(&mut self, cmd: &str, timeout: Duration) -> Result<String> {
        ask(&self.process, &mut self.stdin, &self.lines, cmd, timeout)
    }

    /// One unmeasured connection and what it negotiated, key shares parsed from its first bytes.
    fn evidence(&mut self) -> Result<One> {
        let answer = self.ask("evidence", self.budget(1))?;
        let ev = (self.evidence)(&answer)?;
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
            port: 0,
            started_ns: 0,
            resumed: None,
        })
    }

    /// `n` connections one after another; the client process's CPU and Go allocations are shared
    /// out evenly among them (the peer counts them per batch).
    fn run(&mut self, n: usize, teardown: Teardown) -> Result<Ran> {
        let cmd = match teardown {
            Teardown::Close => format!("run {n}"),
            Teardown::Reset => format!("run {n} reset"),
        };
        let r: RunReport = serde_json::from_str(&self.ask(&cmd, self.budget(n))?)
            .context("Go client run")?;
        let k = r.connections.len().max(1) as f64;
        let since = r.process_cpu_ns - self.cpu_seen_ns;
        self.cpu_seen_ns = r.process_cpu_ns;
        Ok(Ran {
            process_cpu_ns: since,
            connections: r
                .connections
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
                    port: c.port,
                    started_ns: c.started_ns,
                    resumed: c.resumed,
                })
                .collect(),
        })
    }
}

/// The peer's `pair`: in-memory handshakes in its process, each side timed there.
struct GoPair {
    group: String,
    process: Mutex<Peer>,
    io: Mutex<(ChildStdin, Receiver<String>)>,
    _files: super::identity::Files,
}

#[derive(Deserialize)]
struct PairReport {
    client_ns: Vec<u64>,
    server_ns: Vec<u64>,
    wall_ns: Vec<u64>,
    /// Per handshake, whether the client resumed.
    resumed: Vec<bool>,
    failures: usize,
    #[serde(default)]
    last_error: Option<String>,
}

#[derive(Deserialize)]
struct PairCheck {
    group: String,
}

impl GoPair {
    fn ask(&self, cmd: &str, timeout: Duration) -> Result<String> {
        let mut io = self.io.lock().map_err(|_| anyhow!("poisoned"))?;
        let (stdin, lines) = &mut *io;
        ask(&self.process, stdin, lines, cmd, timeout)
    }

    /// `n` handshakes, timed in the peer.
    fn run(&self, n: usize) -> Result<PairReport> {
        // A handshake takes milliseconds; a minute more for a slow host.
        let timeout = Duration::from_secs(60) + Duration::from_millis(50) * n as u32;
        let r: PairReport = serde_json::from_str(&self.ask(&format!("run {n}"), timeout)?)
            .context("Go pair run")?;
        anyhow::ensure!(
            r.client_ns.len() == r.wall_ns.len() && r.server_ns.len() == r.wall_ns.len(),
            "the Go pair's sides and wall times differ in number"
        );
        Ok(r)
    }
}

impl Pair for GoPair {
    fn handshake(&self, check: bool) -> Result<Sample> {
        if check {
            let c: PairCheck = serde_json::from_str(&self.ask("check", Duration::from_secs(60))?)
                .context("Go pair check")?;
            anyhow::ensure!(
                c.group == self.group,
                "the Go pair negotiated {}, not {}",
                c.group,
                self.group
            );
        }
        self.handshakes(1)
            .pop()
            .unwrap_or_else(|| Err(anyhow!("the Go pair made no handshake")))
    }

    fn handshakes(&self, n: usize) -> Vec<Result<Sample>> {
        let r = match self.run(n) {
            Ok(r) => r,
            Err(e) => return vec![Err(e)],
        };
        let why = r.last_error.unwrap_or_default();
        let mut out: Vec<Result<Sample>> = r
            .wall_ns
            .iter()
            .zip(&r.client_ns)
            .zip(&r.server_ns)
            .enumerate()
            .map(|(k, ((&wall_ns, &client_ns), &server_ns))| {
                Ok(Sample {
                    client_ns,
                    server_ns,
                    wall_ns,
                    resumed: r.resumed.get(k).copied().unwrap_or(false),
                })
            })
            .collect();
        out.extend((0..r.failures).map(|_| Err(anyhow!("Go pair: {why}"))));
        out
    }
}
