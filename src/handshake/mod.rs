//! `pqprof handshake`: real TLS 1.3 and SSH handshakes on loopback, client here and server in a
//! child process, measured beside the composed figures: latency, bytes each way, CPU and memory per
//! handshake, with the negotiated parameters checked on an unmeasured first connection.

pub mod alloc;
pub mod ssh;
pub mod tls;
pub mod wire;

use crate::results::{AllocCounters, Evidence, Handshakes, RealStack, Results, Scenario};
use crate::stats;
use crate::suite::{self, TrackKind};
use anyhow::{anyhow, bail, ensure, Context, Result};
use serde::{Deserialize, Serialize};
use std::io::{BufRead, BufReader, Write};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::Instant;

/// The 32-byte payload each connection echoes (seed 000's contract).
pub const PAYLOAD: [u8; 32] = *b"pqprof handshake echo payload 32";

/// One connection.
pub struct One {
    pub total_ns: f64,
    /// Until the handshake (TLS) or key exchange (SSH) completed.
    pub ready_ns: f64,
    pub sent: u64,
    pub received: u64,
    pub cpu_ns: f64,
    pub mem: AllocCounters,
    pub evidence: Option<Evidence>,
}

/// A running server child; killed and reaped on drop, whatever happens.
struct Server {
    child: Child,
    stdin: ChildStdin,
    /// Lines the server prints, read by a thread so a silent server cannot hang the client.
    lines: std::sync::mpsc::Receiver<String>,
    addr: SocketAddr,
}

/// How long the server may take to answer a control line (its port, reset, stats).
const ANSWER: std::time::Duration = std::time::Duration::from_secs(10);

fn read_lines(stdout: ChildStdout) -> std::sync::mpsc::Receiver<String> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[derive(Debug, Serialize, Deserialize)]
struct ServerStats {
    served: u64,
    cpu_ns: f64,
    mem: AllocCounters,
}

impl Server {
    fn start(protocol: &str, stack: RealStack, suite: &str, cert: &Path, key: &Path) -> Result<Server> {
        let exe = std::env::current_exe()?;
        let mut cmd = Command::new(exe);
        crate::interrupt::die_with_parent(&mut cmd);
        let mut child = cmd
            .args(["handshake-server", "--protocol", protocol, "--stack", stack.name(), "--group", suite])
            .arg("--cert")
            .arg(cert)
            .arg("--key")
            .arg(key)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .context("cannot start the handshake server")?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else { bail!("server pipes") };
        let mut server = Server { child, stdin, lines: read_lines(stdout), addr: SocketAddr::from(([127, 0, 0, 1], 0)) };
        let line = server.line().context("the server did not report its port")?;
        let port: u16 = line.strip_prefix("port ").and_then(|p| p.trim().parse().ok()).ok_or_else(|| anyhow!("server said {line:?}"))?;
        server.addr.set_port(port);
        Ok(server)
    }

    fn line(&mut self) -> Result<String> {
        // A dead server closes the pipe and a hung one says nothing: both are errors, not hangs.
        match self.lines.recv_timeout(ANSWER) {
            Ok(line) => Ok(line.trim().to_string()),
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => bail!("the server did not answer within {} s", ANSWER.as_secs()),
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => bail!("the server exited ({:?})", self.child.try_wait()?),
        }
    }

    fn command(&mut self, cmd: &str) -> Result<String> {
        let sent = writeln!(self.stdin, "{cmd}").and_then(|()| self.stdin.flush());
        if let Err(e) = sent {
            bail!("cannot talk to the server ({e}); it exited: {:?}", self.child.try_wait()?);
        }
        self.line()
    }
}

/// The hidden `handshake-server` command: serve one stack and group on 127.0.0.1 until stdin closes.
pub fn server_main(protocol: &str, stack: RealStack, group: &str, cert: &Path, key: &Path) -> Result<()> {
    alloc::enable(true);
    let served = Box::leak(Box::new(std::sync::atomic::AtomicU64::new(0)));
    let listener = std::net::TcpListener::bind("127.0.0.1:0").context("cannot bind a loopback port")?;
    println!("port {}", listener.local_addr()?.port());
    std::io::stdout().flush()?;
    let id = tls::Identity { cert_der: std::fs::read(cert)?, cert_pem: String::new(), key_pem: std::fs::read_to_string(key)? };
    let (proto, group) = (protocol.to_string(), group.to_string());
    let served_ref: &'static std::sync::atomic::AtomicU64 = served;
    std::thread::spawn(move || {
        let r = if proto == "ssh" { ssh::serve(&group, listener, served_ref) } else { tls::serve(stack, &group, &id, listener, served_ref) };
        if let Err(e) = r {
            eprintln!("server: {e:#}");
            std::process::exit(2);
        }
    });
    // For the robustness test: a server that dies mid-run (PQPROF_SERVER_DIES_AFTER=N connections).
    if let Some(n) = std::env::var("PQPROF_SERVER_DIES_AFTER").ok().and_then(|v| v.parse::<u64>().ok()) {
        std::thread::spawn(move || loop {
            if served_ref.load(std::sync::atomic::Ordering::Relaxed) >= n {
                std::process::exit(3);
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        });
    }
    let (mut mem0, mut cpu0, mut served0) = (alloc::counters(), alloc::process_cpu_ns(), 0);
    for line in std::io::stdin().lock().lines() {
        match line?.trim() {
            "reset" => {
                (mem0, cpu0, served0) = (alloc::counters(), alloc::process_cpu_ns(), served.load(std::sync::atomic::Ordering::Relaxed));
                println!("ok");
            }
            "stats" => {
                let s = ServerStats {
                    served: served.load(std::sync::atomic::Ordering::Relaxed) - served0,
                    cpu_ns: alloc::process_cpu_ns() - cpu0,
                    mem: alloc::counters().since(mem0),
                };
                println!("{}", serde_json::to_string(&s)?);
            }
            _ => println!("?"),
        }
        std::io::stdout().flush()?;
    }
    Ok(())
}

enum Client {
    Tls(tls::Client),
    Ssh(ssh::Client),
}

impl Client {
    fn connect(&self, addr: SocketAddr, evidence: bool) -> Result<One> {
        match self {
            Client::Tls(c) => c.connect(addr, evidence),
            Client::Ssh(c) => c.connect(addr, evidence),
        }
    }
}

struct Running {
    protocol: String,
    suite: String,
    stack: RealStack,
    declared: Option<(usize, usize)>,
    server: Server,
    client: Client,
    evidence: Evidence,
    ones: Vec<One>,
    sample_medians: Vec<f64>,
    /// Set when a connection failed: the scenario stops and is reported as failed.
    failed: bool,
}

pub struct Options {
    pub suites: PathBuf,
    pub samples: usize,
    pub per_sample: usize,
}

fn check_evidence(r: &Running, ev: &Evidence) -> Result<()> {
    let norm = |s: &str| s.to_ascii_lowercase().replace(['_', '-'], "");
    ensure!(norm(&ev.group) == norm(&r.suite), "negotiated {:?}, expected {}", ev.group, r.suite);
    ensure!(!ev.resumed, "the first connection was resumed, not a full handshake");
    if r.protocol == "tls13" {
        ensure!(ev.version.contains("1.3") || ev.version.contains("1_3"), "negotiated {}, not TLS 1.3", ev.version);
        ensure!(ev.cert_key == "ECDSA P-256", "server certificate key is {}", ev.cert_key);
        if let Some((c, s)) = r.declared {
            ensure!(ev.client_share.map(|x| x.1) == Some(c), "ClientHello key_share {:?}, the suite declares {c} bytes", ev.client_share);
            ensure!(ev.server_share.map(|x| x.1) == Some(s), "ServerHello key_share {:?}, the suite declares {s} bytes", ev.server_share);
        }
    }
    Ok(())
}

pub fn run(opts: &Options, results: &Results, progress: &mut dyn FnMut(&str)) -> Result<Handshakes> {
    let start = Instant::now();
    alloc::enable(true);
    let suites = suite::load(&opts.suites, &crate::backend::NAMES)?;
    let id = tls::identity()?;
    let dir = std::env::temp_dir().join(format!("pqprof-hs-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let (cert, key) = (dir.join("cert.der"), dir.join("key.pem"));
    std::fs::write(&cert, &id.cert_der)?;
    std::fs::write(&key, &id.key_pem)?;

    let mut failures = Vec::new();
    let mut running: Vec<Running> = Vec::new();
    for s in suites.iter().filter(|s| s.kind == TrackKind::Kex) {
        let stacks: &[RealStack] = match s.protocol.as_str() {
            "tls13" => &[RealStack::Rustls, RealStack::OpenSsl],
            "ssh" => &[RealStack::Russh],
            _ => &[],
        };
        for &stack in stacks {
            let setup = (|| -> Result<Running> {
                let client = if s.protocol == "ssh" { Client::Ssh(ssh::Client::new(&s.name)?) } else { Client::Tls(tls::Client::new(stack, &s.name, &id)?) };
                let server = Server::start(&s.protocol, stack, &s.name, &cert, &key)?;
                let mut r = Running {
                    protocol: s.protocol.clone(),
                    suite: s.name.clone(),
                    stack,
                    declared: s.wire_shares(),
                    server,
                    client,
                    evidence: Evidence::default(),
                    ones: Vec::new(),
                    sample_medians: Vec::new(),
                    failed: false,
                };
                let warm = r.client.connect(r.server.addr, true)?;
                let ev = warm.evidence.unwrap_or_default();
                check_evidence(&r, &ev)?;
                r.evidence = ev;
                r.server.command("reset")?;
                Ok(r)
            })();
            match setup {
                Ok(r) => running.push(r),
                Err(e) => failures.push(format!("{} {} on {}: {e:#}", s.protocol, s.name, stack.name())),
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);

    let n = running.len();
    for k in 0..opts.samples {
        progress(&format!("sample {}/{}", k + 1, opts.samples));
        for j in 0..n {
            // Rotated so no scenario always runs first or after the same one.
            let r = &mut running[(j + k) % n];
            if r.failed {
                continue;
            }
            let mut totals = Vec::new();
            for _ in 0..opts.per_sample {
                crate::interrupt::check()?;
                match r.client.connect(r.server.addr, false) {
                    Ok(one) => {
                        totals.push(one.total_ns);
                        r.ones.push(one);
                    }
                    Err(e) => {
                        let exited = r.server.child.try_wait().ok().flatten().map_or(String::new(), |s| format!(" (the server exited: {s})"));
                        failures.push(format!("{} {} on {}: {e:#}{exited}", r.protocol, r.suite, r.stack.name()));
                        r.failed = true;
                        break;
                    }
                }
            }
            if !totals.is_empty() {
                r.sample_medians.push(stats::median(&totals));
            }
        }
    }

    let mut scenarios = Vec::new();
    for r in running.iter_mut().filter(|r| !r.failed) {
        let ss = match r.server.command("stats").and_then(|l| serde_json::from_str::<ServerStats>(&l).with_context(|| format!("server stats {l:?}"))) {
            Ok(ss) => ss,
            Err(e) => {
                failures.push(format!("{} {} on {}: the server's figures are lost: {e:#}", r.protocol, r.suite, r.stack.name()));
                continue;
            }
        };
        let total: Vec<f64> = r.ones.iter().map(|o| o.total_ns).collect();
        if total.is_empty() {
            continue;
        }
        let count = r.ones.len() as f64;
        let sum = |f: &dyn Fn(&One) -> f64| r.ones.iter().map(f).sum::<f64>() / count;
        let mem = r.ones.iter().fold(AllocCounters::default(), |a, o| AllocCounters {
            rust_allocs: a.rust_allocs + o.mem.rust_allocs,
            rust_bytes: a.rust_bytes + o.mem.rust_bytes,
            c_allocs: a.c_allocs + o.mem.c_allocs,
            c_bytes: a.c_bytes + o.mem.c_bytes,
        });
        let sorted = stats::sorted(&total);
        scenarios.push(Scenario {
            protocol: r.protocol.clone(),
            suite: r.suite.clone(),
            stack: r.stack,
            evidence: r.evidence.clone(),
            median_ns: stats::percentile_sorted(&sorted, 50.0),
            p95_ns: stats::percentile_sorted(&sorted, 95.0),
            ready_median_ns: stats::median(&r.ones.iter().map(|o| o.ready_ns).collect::<Vec<_>>()),
            sample_medians_ns: r.sample_medians.clone(),
            rsd_pct: stats::rsd_pct(&r.sample_medians),
            client_to_server_bytes: sum(&|o| o.sent as f64),
            server_to_client_bytes: sum(&|o| o.received as f64),
            declared_wire_bytes: r.declared.map(|(c, s)| c + s),
            client_cpu_ns: sum(&|o| o.cpu_ns),
            server_cpu_ns: ss.cpu_ns / (ss.served.max(1) as f64),
            client_mem: mem.per(count),
            server_mem: ss.mem.per(ss.served as f64),
            vs_baseline_ratio: None,
            measured_delta_ns: None,
            composed_delta_ns: None,
        });
    }
    drop(running); // kills and reaps every server
    fill_baselines(&mut scenarios, &suites, results);
    Ok(Handshakes {
        date_utc: crate::run::utc_now(),
        wall_seconds: start.elapsed().as_secs_f64(),
        samples: opts.samples,
        per_sample: opts.per_sample,
        scenarios,
        failures,
        notes: vec![
            "Client figures are measured in the pqprof process, server figures in its child (CPU from CLOCK_PROCESS_CPUTIME_ID, divided by connections served).".into(),
            "Rust allocations are counted by a counting global allocator; C allocations inside OpenSSL through CRYPTO_set_mem_functions; C allocations inside aws-lc (rustls, russh) are not counted.".into(),
        ],
    })
}

fn fill_baselines(scenarios: &mut [Scenario], suites: &[suite::Suite], results: &Results) {
    let medians: Vec<(String, RealStack, f64)> = scenarios.iter().map(|s| (s.suite.clone(), s.stack, s.median_ns)).collect();
    for s in scenarios.iter_mut() {
        let Some(base) = suites.iter().find(|x| x.name == s.suite).and_then(|x| x.baseline.clone()) else { continue };
        if base == s.suite {
            continue;
        }
        if let Some((_, _, m)) = medians.iter().find(|(n, st, _)| *n == base && *st == s.stack) {
            s.vs_baseline_ratio = Some(s.median_ns / m);
            s.measured_delta_ns = Some(s.median_ns - m);
        }
        let stack = if s.stack == RealStack::OpenSsl { "openssl" } else { "default" };
        let composed = |n: &str| results.suites.iter().find(|x| x.name == n && x.stack == stack).map(|x| x.composed.median_ns);
        if let (Some(a), Some(b)) = (composed(&s.suite), composed(&base)) {
            s.composed_delta_ns = Some(a - b);
        }
    }
}

/// The scenario table as text.
pub fn table(h: &Handshakes) -> String {
    use crate::units::{count, ratio, text_table, time};
    let head = ["proto", "suite", "stack", "median", "RSD", "p95", "vs base", "bytes c>s / s>c", "client CPU", "server CPU", "client allocs / B", "server allocs / B"];
    let rows: Vec<Vec<String>> = h
        .scenarios
        .iter()
        .map(|sc| {
            let mem = |m: &crate::results::PerHandshake| format!("{} / {}", count(m.rust_allocs + m.c_allocs), count(m.rust_bytes + m.c_bytes));
            vec![
                sc.protocol.clone(),
                sc.suite.clone(),
                sc.stack.name().into(),
                time(sc.median_ns),
                format!("{:.1}%", sc.rsd_pct),
                time(sc.p95_ns),
                sc.vs_baseline_ratio.map_or("base".into(), ratio),
                format!("{} / {}", count(sc.client_to_server_bytes), count(sc.server_to_client_bytes)),
                time(sc.client_cpu_ns),
                time(sc.server_cpu_ns),
                mem(&sc.client_mem),
                mem(&sc.server_mem),
            ]
        })
        .collect();
    let mut s = text_table(&head, &rows, &[3, 4, 5, 6, 7, 8, 9, 10, 11]) + "\n";
    for f in &h.failures {
        s += &format!("failed: {f}\n");
    }
    s
}
