//! `pqprof handshake`: real TLS 1.3 and SSH handshakes on loopback, client here and server in a
//! child process, measured beside the composed figures: latency, bytes each way, CPU and memory per
//! handshake, with the negotiated parameters checked on an unmeasured first connection.

pub mod alloc;
mod go;
pub mod inmem;
pub mod insitu;
pub mod openssl_wrap;
mod paired;
pub(crate) mod server;
pub mod ssh;
pub mod tls;
pub mod wire;

use crate::results::{
    AllocCounters, Evidence, Handshakes, InSitu, InSituConnection, PerHandshake, RealStack,
    Results, Scenario,
};
use crate::stats;
use crate::suite::{self, TrackKind};
use anyhow::{anyhow, ensure, Context, Result};
use server::{Server, ServerStats};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Instant;

pub use server::server_main;

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
    /// The client's in-situ record (instrumented scenarios).
    pub insitu: Option<insitu::Record>,
    /// Go's allocations (the Go peer's runtime counters), per connection.
    pub go_allocs: f64,
    pub go_bytes: f64,
}

enum Client {
    Tls(tls::Client),
    Ssh(ssh::Client),
    Go(go::Client),
}

impl Client {
    fn evidence(&mut self, addr: SocketAddr) -> Result<One> {
        match self {
            Client::Tls(c) => c.connect(addr, true),
            Client::Ssh(c) => c.connect(addr, true),
            Client::Go(c) => c.evidence(),
        }
    }

    /// `n` measured connections, one after another.
    fn connect_many(&mut self, addr: SocketAddr, n: usize) -> Result<Vec<One>> {
        let one = |c: &dyn Fn() -> Result<One>| -> Result<Vec<One>> {
            let mut v = Vec::with_capacity(n);
            for _ in 0..n {
                crate::interrupt::check()?;
                v.push(c()?);
            }
            Ok(v)
        };
        match self {
            Client::Tls(c) => one(&|| c.connect(addr, false)),
            Client::Ssh(c) => one(&|| c.connect(addr, false)),
            Client::Go(c) => {
                crate::interrupt::check()?;
                c.run(n)
            }
        }
    }
}

struct Running {
    protocol: String,
    suite: String,
    stack: RealStack,
    instrumented: bool,
    declared: Option<(usize, usize)>,
    server: Server,
    client: Client,
    evidence: Evidence,
    ones: Vec<One>,
    sample_medians: Vec<f64>,
    /// Set when a connection failed: the scenario stops and is reported as failed.
    failed: bool,
}

impl Running {
    fn name(&self) -> String {
        format!(
            "{} {} on {}{}",
            self.protocol,
            self.suite,
            self.stack.name(),
            if self.instrumented { " (in situ)" } else { "" }
        )
    }
}

pub struct Options {
    pub suites: PathBuf,
    pub samples: usize,
    pub per_sample: usize,
    /// Only these stacks (all when empty).
    pub stacks: Vec<String>,
}

/// An instrumented scenario makes as many connections as the plain one (so the two medians compare
/// like for like and show the timers' cost), all timed, and keeps the per-connection records of
/// every this-many-th connection (the records are large; their means need fewer).
pub const INSITU_SHARE: usize = 5;

/// The composition stack made of the code a real stack runs (see `plan::stacks`).
pub fn composed_stack(stack: RealStack) -> &'static str {
    match stack {
        RealStack::Rustls => "rustls",
        RealStack::OpenSsl => "openssl",
        RealStack::Russh => "russh",
        RealStack::Go => "go",
    }
}

fn check_evidence(r: &Running, ev: &Evidence) -> Result<()> {
    let norm = |s: &str| s.to_ascii_lowercase().replace(['_', '-'], "");
    ensure!(
        norm(&ev.group) == norm(&r.suite),
        "negotiated {:?}, expected {}",
        ev.group,
        r.suite
    );
    ensure!(
        !ev.resumed,
        "the first connection was resumed, not a full handshake"
    );
    if r.protocol == "tls13" {
        ensure!(
            ev.version.contains("1.3") || ev.version.contains("1_3"),
            "negotiated {}, not TLS 1.3",
            ev.version
        );
        ensure!(
            ev.cert_key == "ECDSA P-256",
            "server certificate key is {}",
            ev.cert_key
        );
        if let Some((c, s)) = r.declared {
            ensure!(
                ev.client_share.map(|x| x.1) == Some(c),
                "ClientHello key_share {:?}, the suite declares {c} bytes",
                ev.client_share
            );
            ensure!(
                ev.server_share.map(|x| x.1) == Some(s),
                "ServerHello key_share {:?}, the suite declares {s} bytes",
                ev.server_share
            );
        }
    }
    Ok(())
}

pub fn run(
    opts: &Options,
    results: &Results,
    progress: &mut dyn FnMut(&str),
) -> Result<Handshakes> {
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
    let mut notes = Vec::new();
    let wanted = |s: RealStack| opts.stacks.is_empty() || opts.stacks.iter().any(|n| n == s.name());
    // Go's crypto/tls through the Go peer, where it is built and has the group.
    let go_peer = if wanted(RealStack::Go) {
        crate::go::binary().and_then(|b| crate::go::version(&b).map(|v| (b, v)))
    } else {
        Err(anyhow!("not asked for"))
    };
    if let (Err(e), true) = (&go_peer, wanted(RealStack::Go)) {
        notes.push(format!("Go stack not measured: {e:#}"));
    }
    let mut running: Vec<Running> = Vec::new();
    for s in suites.iter().filter(|s| s.kind == TrackKind::Kex) {
        // rustls and OpenSSL: a plain scenario and an instrumented one; russh and Go have no hook.
        let mut variants: Vec<(RealStack, bool)> = match s.protocol.as_str() {
            "tls13" => vec![
                (RealStack::Rustls, false),
                (RealStack::Rustls, true),
                (RealStack::OpenSsl, false),
                (RealStack::OpenSsl, true),
            ],
            "ssh" => vec![(RealStack::Russh, false)],
            _ => Vec::new(),
        };
        if let Ok((_, v)) = &go_peer {
            if s.protocol == "tls13" && v.groups.contains(&s.name) {
                variants.push((RealStack::Go, false));
            } else if s.protocol == "tls13" {
                notes.push(format!(
                    "Go {} does not negotiate {}: no Go row for it",
                    v.go_version, s.name
                ));
            }
        }
        variants.retain(|(s, _)| wanted(*s));
        for &(stack, instrumented) in &variants {
            let setup = (|| -> Result<Running> {
                let server = match (&go_peer, stack) {
                    (Ok((bin, _)), RealStack::Go) => Server::start_go(bin, &s.name, &cert, &key)?,
                    _ => Server::start(&s.protocol, stack, &s.name, &cert, &key, instrumented)?,
                };
                let client = match (&go_peer, stack) {
                    (Ok((bin, _)), RealStack::Go) => {
                        Client::Go(go::Client::start(bin, &s.name, server.addr, &cert)?)
                    }
                    _ if s.protocol == "ssh" => Client::Ssh(ssh::Client::new(&s.name)?),
                    _ => Client::Tls(tls::Client::new(stack, &s.name, &id, instrumented)?),
                };
                let mut r = Running {
                    protocol: s.protocol.clone(),
                    suite: s.name.clone(),
                    stack,
                    instrumented,
                    declared: s.wire_shares(),
                    server,
                    client,
                    evidence: Evidence::default(),
                    ones: Vec::new(),
                    sample_medians: Vec::new(),
                    failed: false,
                };
                let warm = r.client.evidence(r.server.addr)?;
                let ev = warm.evidence.unwrap_or_default();
                check_evidence(&r, &ev)?;
                r.evidence = ev;
                // The warm-up connection is the one served so far.
                r.server.command("reset 1")?;
                Ok(r)
            })();
            match setup {
                Ok(r) => running.push(r),
                Err(e) => failures.push(format!(
                    "{} {} on {}{}: {e:#}",
                    s.protocol,
                    s.name,
                    stack.name(),
                    if instrumented { " (in situ)" } else { "" }
                )),
            }
        }
    }
    let n = running.len();
    for k in 0..opts.samples {
        progress(&format!("sample {}/{}", k + 1, opts.samples));
        for j in 0..n {
            // Rotated so no scenario always runs first or after the same one.
            let r = &mut running[(j + k) % n];
            if r.failed {
                continue;
            }
            let addr = r.server.addr;
            match r.client.connect_many(addr, opts.per_sample) {
                Ok(ones) => {
                    let totals: Vec<f64> = ones.iter().map(|o| o.total_ns).collect();
                    if !totals.is_empty() {
                        r.sample_medians.push(stats::median(&totals));
                    }
                    r.ones.extend(ones);
                }
                Err(e) if e.downcast_ref::<crate::interrupt::Interrupted>().is_some() => {
                    return Err(e)
                }
                Err(e) => {
                    let exited = r
                        .server
                        .child
                        .try_wait()
                        .ok()
                        .flatten()
                        .map_or(String::new(), |s| format!(" (the server exited: {s})"));
                    failures.push(format!("{}: {e:#}{exited}", r.name()));
                    r.failed = true;
                }
            }
        }
    }

    let mut scenarios = Vec::new();
    for r in running.iter_mut().filter(|r| !r.failed) {
        let made = r.ones.len();
        let ss = match r.server.command(&format!("stats {made}")).and_then(|l| {
            serde_json::from_str::<ServerStats>(&l).with_context(|| format!("server stats {l:?}"))
        }) {
            Ok(ss) => ss,
            Err(e) => {
                failures.push(format!(
                    "{}: the server's figures are lost: {e:#}",
                    r.name()
                ));
                continue;
            }
        };
        match scenario(r, ss) {
            Ok(s) => scenarios.push(s),
            Err(e) => failures.push(format!("{}: {e:#}", r.name())),
        }
    }
    drop(running); // kills and reaps every server and client
    let _ = std::fs::remove_dir_all(&dir);
    // Measured after the scenarios, on the client's core, so it does not disturb them.
    let call_cost_ns = scenarios
        .iter()
        .any(|s| s.instrumented)
        .then(insitu::call_cost_ns);
    fill_baselines(&mut scenarios, &suites, results, call_cost_ns);
    paired::measure(&mut scenarios, &id, progress)?;
    Ok(Handshakes {
        date_utc: crate::run::utc_now(),
        wall_seconds: start.elapsed().as_secs_f64(),
        samples: opts.samples,
        per_sample: opts.per_sample,
        scenarios,
        failures,
        insitu_call_cost_ns: call_cost_ns,
        notes: notes.into_iter().chain([
            "Client figures are measured in the pqprof process, server figures in its child (CPU from CLOCK_PROCESS_CPUTIME_ID, divided by connections served).".into(),
            "Rust allocations are counted by a counting global allocator; C allocations inside OpenSSL through CRYPTO_set_mem_functions; C allocations inside aws-lc (rustls, russh) are not counted.".into(),
            format!("Instrumented scenarios (in situ) time every crypto call where it happens, client and server, on as many connections as the plain scenario, interleaved with it; every {INSITU_SHARE}th connection's record is kept. russh and Go have no hook for their crypto: their rows have no in-situ split."),
            "Go: client and server are the Go peer's processes (peers/go); their CPU is the process's (getrusage) per connection, their allocations runtime.MemStats (Mallocs, TotalAlloc) per connection.".into(),
        ]).collect(),
    })
}

fn scenario(r: &Running, ss: ServerStats) -> Result<Scenario> {
    let total: Vec<f64> = r.ones.iter().map(|o| o.total_ns).collect();
    ensure!(!total.is_empty(), "no connection was measured");
    let count = r.ones.len() as f64;
    let sum = |f: &dyn Fn(&One) -> f64| r.ones.iter().map(f).sum::<f64>() / count;
    let mem = r
        .ones
        .iter()
        .fold(AllocCounters::default(), |a, o| AllocCounters {
            rust_allocs: a.rust_allocs + o.mem.rust_allocs,
            rust_bytes: a.rust_bytes + o.mem.rust_bytes,
            c_allocs: a.c_allocs + o.mem.c_allocs,
            c_bytes: a.c_bytes + o.mem.c_bytes,
        });
    let sorted = stats::sorted(&total);
    let insitu = if r.instrumented {
        Some(in_situ(r, &ss)?)
    } else {
        None
    };
    Ok(Scenario {
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
        client_mem: PerHandshake {
            go_allocs: sum(&|o| o.go_allocs),
            go_bytes: sum(&|o| o.go_bytes),
            ..mem.per(count)
        },
        server_mem: PerHandshake {
            go_allocs: ss.go_mallocs as f64 / ss.served.max(1) as f64,
            go_bytes: ss.go_alloc_bytes as f64 / ss.served.max(1) as f64,
            ..ss.mem.per(ss.served as f64)
        },
        vs_baseline_ratio: None,
        measured_delta_ns: None,
        composed_delta_ns: None,
        composed_stack: composed_stack(r.stack).into(),
        instrumented: r.instrumented,
        insitu,
        insitu_overhead_pct: None,
        insitu_overhead_est_pct: None,
        insitu_overhead_paired: None,
        insitu_overhead_paired_loopback: None,
    })
}

/// Pairs the client's records with the server's, connection by connection (the server serves one
/// connection at a time, in the order the client makes them).
fn in_situ(r: &Running, ss: &ServerStats) -> Result<InSitu> {
    ensure!(
        ss.insitu.len() == r.ones.len(),
        "the server recorded {} connections, the client {}",
        ss.insitu.len(),
        r.ones.len()
    );
    let labels: Vec<String> = insitu::LABELS.iter().map(|l| l.to_string()).collect();
    let mut connections = Vec::new();
    let (mut cc, mut sc) = (vec![0.0; labels.len()], vec![0.0; labels.len()]);
    let (mut ch, mut sh) = (0.0, 0.0);
    for (one, server) in r.ones.iter().zip(&ss.insitu).step_by(INSITU_SHARE) {
        let client = one
            .insitu
            .clone()
            .ok_or_else(|| anyhow!("a connection without its in-situ record"))?;
        let total_ns = one.total_ns.round() as u64;
        let crypto: u64 = client.ns.iter().chain(&server.ns).sum();
        for i in 0..labels.len() {
            cc[i] += f64::from(client.calls.get(i).copied().unwrap_or(0));
            sc[i] += f64::from(server.calls.get(i).copied().unwrap_or(0));
        }
        ch += client.hashed_bytes as f64;
        sh += server.hashed_bytes as f64;
        connections.push(InSituConnection {
            total_ns,
            client: client.ns.to_vec(),
            server: server.ns.to_vec(),
            remainder_ns: total_ns as i64 - crypto as i64,
        });
    }
    let n = connections.len().max(1) as f64;
    let mean = |v: Vec<f64>| v.into_iter().map(|x| x / n).collect();
    Ok(InSitu::from_connections(
        labels,
        connections,
        (mean(cc), mean(sc)),
        (ch / n, sh / n),
    ))
}

fn fill_baselines(
    scenarios: &mut [Scenario],
    suites: &[suite::Suite],
    results: &Results,
    call_cost_ns: Option<f64>,
) {
    let key = |s: &Scenario| (s.suite.clone(), s.stack, s.instrumented);
    type Snap = ((String, RealStack, bool), f64, Option<(f64, f64, f64)>);
    let snapshot: Vec<Snap> = scenarios
        .iter()
        .map(|s| {
            (
                key(s),
                s.median_ns,
                s.insitu
                    .as_ref()
                    .map(|i| (i.crypto_ns, i.remainder_ns, i.calls_per_handshake())),
            )
        })
        .collect();
    for s in scenarios.iter_mut() {
        // The timers' cost: the instrumented median against the plain one, and calls x cost per call.
        if !s.instrumented {
            if let Some((_, m, i)) = snapshot
                .iter()
                .find(|(k, _, _)| *k == (s.suite.clone(), s.stack, true))
            {
                s.insitu_overhead_pct = Some((m / s.median_ns - 1.0) * 100.0);
                if let (Some((_, _, calls)), Some(cost)) = (i, call_cost_ns) {
                    s.insitu_overhead_est_pct = Some(calls * cost / s.median_ns * 100.0);
                }
            }
        }
        let Some(base) = suites
            .iter()
            .find(|x| x.name == s.suite)
            .and_then(|x| x.baseline.clone())
        else {
            continue;
        };
        if base == s.suite {
            continue;
        }
        if let Some((_, m, base_insitu)) = snapshot
            .iter()
            .find(|(k, _, _)| *k == (base.clone(), s.stack, s.instrumented))
        {
            s.vs_baseline_ratio = Some(s.median_ns / m);
            s.measured_delta_ns = Some(s.median_ns - m);
            if let (Some(i), Some((bc, br, _))) = (s.insitu.as_mut(), base_insitu) {
                i.crypto_delta_ns = Some(i.crypto_ns - bc);
                i.remainder_delta_ns = Some(i.remainder_ns - br);
            }
        }
        let composed = |n: &str| {
            results
                .suite(n, composed_stack(s.stack))
                .map(|x| x.composed.median_ns)
        };
        if let (Some(a), Some(b)) = (composed(&s.suite), composed(&base)) {
            s.composed_delta_ns = Some(a - b);
        }
    }
}

/// The scenario table as text; `results` holds the phases the in-situ calls are set beside.
pub fn table(h: &Handshakes, results: &Results) -> String {
    use crate::units::{count, ratio, text_table, time};
    let head = [
        "proto",
        "suite",
        "stack",
        "median",
        "RSD",
        "p95",
        "vs base",
        "bytes c>s / s>c",
        "client CPU",
        "server CPU",
        "client allocs / B",
        "server allocs / B",
    ];
    let rows: Vec<Vec<String>> = h
        .scenarios
        .iter()
        .map(|sc| {
            let mem = |m: &crate::results::PerHandshake| {
                format!("{} / {}", count(m.allocs()), count(m.bytes()))
            };
            vec![
                sc.protocol.clone(),
                sc.suite.clone(),
                format!(
                    "{}{}",
                    sc.stack.name(),
                    if sc.instrumented { " (in situ)" } else { "" }
                ),
                time(sc.median_ns),
                format!("{:.1}%", sc.rsd_pct),
                time(sc.p95_ns),
                sc.vs_baseline_ratio.map_or("base".into(), ratio),
                format!(
                    "{} / {}",
                    count(sc.client_to_server_bytes),
                    count(sc.server_to_client_bytes)
                ),
                time(sc.client_cpu_ns),
                time(sc.server_cpu_ns),
                mem(&sc.client_mem),
                mem(&sc.server_mem),
            ]
        })
        .collect();
    let mut s = text_table(&head, &rows, &[3, 4, 5, 6, 7, 8, 9, 10, 11]) + "\n";
    // Where the hybrid's extra time goes: measured, in situ, composed.
    let rows: Vec<Vec<String>> = h
        .scenarios
        .iter()
        .filter(|p| !p.instrumented && p.measured_delta_ns.is_some())
        .map(|p| {
            let i = h
                .scenarios
                .iter()
                .find(|x| x.instrumented && x.suite == p.suite && x.stack == p.stack)
                .and_then(|x| x.insitu.as_ref());
            let t = |x: Option<f64>| x.map_or("–".into(), crate::units::signed_time);
            vec![
                p.suite.clone(),
                p.stack.name().into(),
                t(p.measured_delta_ns),
                t(i.and_then(|i| i.crypto_delta_ns)),
                t(i.and_then(|i| i.remainder_delta_ns)),
                format!("{} ({})", t(p.composed_delta_ns), p.composed_stack),
            ]
        })
        .collect();
    if !rows.is_empty() {
        s += "\nAgainst the baseline group, per connection:\n";
        s += &text_table(
            &[
                "suite",
                "stack",
                "measured Δ",
                "in-situ crypto Δ",
                "remainder Δ",
                "composed Δ (stack)",
            ],
            &rows,
            &[2, 3, 4, 5],
        );
        s += "\n";
    }
    // Each key-exchange and signature call, in situ against the phase loop.
    let rows: Vec<Vec<String>> = h
        .scenarios
        .iter()
        .filter(|p| p.instrumented)
        .flat_map(|p| {
            crate::incontext::per_call(results, p)
                .into_iter()
                .map(move |c| {
                    vec![
                        p.suite.clone(),
                        p.stack.name().into(),
                        c.label.clone(),
                        c.implementation(),
                        time(c.insitu_ns),
                        time(c.loop_ns),
                        ratio(c.ratio()),
                    ]
                })
        })
        .collect();
    if !rows.is_empty() {
        s += "\nPer call, in situ (median, both sides) against the phase loop (median):\n";
        s += &text_table(
            &[
                "suite",
                "stack",
                "call",
                "algorithm (backend)",
                "in situ",
                "phase loop",
                "ratio",
            ],
            &rows,
            &[4, 5, 6],
        );
        s += "\n";
    }
    // The timers' cost three ways; the paired one is the measurement, the others its cross-checks.
    let rows: Vec<Vec<String>> = h
        .scenarios
        .iter()
        .filter_map(|p| p.insitu_overhead_paired.as_ref().map(|o| (p, o)))
        .map(|(p, o)| {
            let pct = |x: Option<f64>| x.map_or("–".into(), |o| format!("{o:+.2}%"));
            let signed = crate::units::signed_time;
            // The median of the block differences where stored (the headline), else the mean.
            let paired = |o: &crate::results::PairedOverhead| match &o.median {
                Some(m) => format!(
                    "{} ({} to {}) = {:+.2}% (≤ {:+.2}%)",
                    signed(m.delta_ns),
                    signed(m.lo95_ns),
                    signed(m.hi95_ns),
                    m.pct,
                    m.pct_hi95
                ),
                None => format!(
                    "mean {} ± {} = {:+.2}% (≤ {:+.2}%)",
                    signed(o.delta_ns),
                    time(o.delta_half95_ns),
                    o.pct,
                    o.pct_hi95
                ),
            };
            let mean = |o: &crate::results::PairedOverhead| {
                format!("{} ± {}", signed(o.delta_ns), time(o.delta_half95_ns))
            };
            let wrapper = |o: &crate::results::PairedOverhead| {
                o.median
                    .as_ref()
                    .and_then(|m| m.wrapper_ns)
                    .or(o.wrapper_ns)
                    .map_or("–".into(), signed)
            };
            let lo = p.insitu_overhead_paired_loopback.as_ref();
            vec![
                p.suite.clone(),
                p.stack.name().into(),
                pct(p.insitu_overhead_pct),
                pct(p.insitu_overhead_est_pct),
                paired(o),
                wrapper(o),
                lo.map_or("–".into(), paired),
                lo.map_or("–".into(), mean),
                lo.map_or("–".into(), wrapper),
            ]
        })
        .collect();
    if !rows.is_empty() {
        s += "\nIn-situ timers' cost, over the plain loopback median (paired: the median of the block differences, its 95% interval and upper end; on loopback also their mean ± 95% half-width):\n";
        s += &text_table(
            &[
                "suite",
                "stack",
                "two medians",
                "calls × cost",
                "paired in memory",
                "provider alone",
                "paired on loopback",
                "loopback mean",
                "provider alone",
            ],
            &rows,
            &[2, 3, 4, 5, 6, 7, 8],
        );
        s += "\n";
    }
    for f in &h.failures {
        s += &format!("failed: {f}\n");
    }
    s
}
