//! `pqprof network`: real TLS 1.3 and SSH handshakes through an emulated network, on a grid of
//! round-trip times and loss rates (Paquin, Stebila & Tamvada, PQCrypto 2020), with what the link
//! really did at every point and a model beside every measurement.
//!
//! The client runs in this process (threads moved into the client namespace), each server in its
//! own process in the server namespace, and the emulator (router.rs) in the router namespace. The
//! three namespaces are set up and taken down by lab.rs, whatever happens.

pub mod lab;
pub mod router;

use crate::check::network::{percentiles_ms, tolerance_ms};
use crate::handshake::server::Server;
use crate::handshake::{ssh, tls};
use crate::results::{Cell, Link, Model, Network, Point, RealStack};
use crate::stats;
use anyhow::{anyhow, bail, Context, Result};
use lab::Lab;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Paquin et al.'s percentiles.
pub const PERCENTILES: [f64; 7] = [25.0, 37.5, 50.0, 62.5, 75.0, 85.0, 95.0];
/// Socket timeouts over the emulated path: three lost SYNs back off 1 + 2 + 4 s.
const TIMEOUT: Duration = Duration::from_secs(30);
/// Handshakes every cell has, whatever its time budget.
const MIN_PER_CELL: usize = 10;
/// Connects that measure the link before each point.
const PROBES: usize = 16;

#[derive(Debug, Clone)]
pub struct Grid {
    pub name: String,
    pub rtts_ms: Vec<f64>,
    pub losses_pct: Vec<f64>,
}

impl Grid {
    pub fn named(name: &str) -> Result<Grid> {
        let (rtts, losses): (Vec<f64>, Vec<f64>) = match name {
            // Small enough for `make run` on 2 cores.
            "default" => (vec![5.6, 78.7], vec![0.0, 1.0, 5.0, 10.0, 20.0]),
            // CI: the real thing, end to end, in seconds.
            "quick" => (vec![5.6], vec![0.0, 10.0]),
            // Paquin et al.'s RTTs (their data files: 5.609, 31.169, 78.699, 195.719 ms) and losses
            // (emulation-exp/code/kex/experiment.py).
            "paquin" => (
                vec![5.6, 31.1, 78.7, 195.7],
                vec![
                    0.0, 0.1, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0,
                    11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0, 20.0,
                ],
            ),
            other => bail!("unknown grid {other:?}: default, paquin or quick"),
        };
        Ok(Grid {
            name: name.into(),
            rtts_ms: rtts,
            losses_pct: losses,
        })
    }
}

pub struct Options {
    pub grid: Grid,
    pub per_point: usize,
    /// After this long a cell starts no new handshake (once it has MIN_PER_CELL).
    pub cell_budget: Duration,
    pub parallel: usize,
    pub rate_mbit: Option<f64>,
    /// Every TLS group (MLKEM768, SecP256r1MLKEM768 too), not only X25519 and X25519MLKEM768.
    pub all_groups: bool,
    pub stacks: Vec<String>,
}

#[derive(Debug, Clone)]
struct Scenario {
    protocol: &'static str,
    stack: RealStack,
    group: String,
    baseline: Option<String>,
    /// Round trips before the client completes: TCP connect + TLS 1.3's one; SSH's version and
    /// KEXINIT exchange before its key exchange.
    round_trips: f64,
}

fn scenarios(opts: &Options) -> Vec<Scenario> {
    let mut tls_groups = vec!["X25519", "X25519MLKEM768"];
    if opts.all_groups {
        tls_groups.extend(["MLKEM768", "SecP256r1MLKEM768"]);
    }
    let mut out = Vec::new();
    for stack in [RealStack::Rustls, RealStack::OpenSsl] {
        for g in &tls_groups {
            out.push(Scenario {
                protocol: "tls13",
                stack,
                group: g.to_string(),
                baseline: (*g != "X25519").then(|| "X25519".into()),
                round_trips: 2.0,
            });
        }
    }
    for g in ["curve25519-sha256", "mlkem768x25519-sha256"] {
        out.push(Scenario {
            protocol: "ssh",
            stack: RealStack::Russh,
            group: g.into(),
            baseline: (g != "curve25519-sha256").then(|| "curve25519-sha256".into()),
            round_trips: 3.0,
        });
    }
    out.retain(|s| opts.stacks.is_empty() || opts.stacks.iter().any(|n| n == s.stack.name()));
    out
}

/// Handshakes in flight at an RTT: `parallel` up to 5.6 ms, growing with the RTT so the offered load
/// (handshakes per second) stays what 2 cores serve without becoming the bottleneck, up to
/// Paquin et al.'s 40 processes.
pub fn in_flight(parallel: usize, rtt_ms: f64) -> usize {
    ((parallel as f64 * (rtt_ms / 5.6).max(1.0)).round() as usize).clamp(1, 40)
}

/// The emulator's control channel (router.rs, a child in the router namespace).
struct Router(Server);

impl Router {
    fn set(&mut self, delay_ms: [f64; 2], loss: f64, seed: u64) -> Result<()> {
        let ns = |ms: f64| (ms.max(0.0) * 1e6).round() as u64;
        let a = self.0.command(&format!(
            "set {} {} {loss} {loss} {seed}",
            ns(delay_ms[0]),
            ns(delay_ms[1])
        ))?;
        if a != "\"ok\"" {
            bail!("the emulator refused the setting: {a}");
        }
        Ok(())
    }

    fn stats(&mut self) -> Result<router::Counters> {
        let line = self.0.command("stats")?;
        serde_json::from_str(&line).with_context(|| format!("the emulator said {line:?}"))
    }
}

/// A listener in the server namespace that accepts and drops connections: the link probe.
struct Probe {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Probe {
    fn start() -> Result<Probe> {
        let (tx, rx) = std::sync::mpsc::channel();
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::spawn(move || {
            let listener = (|| -> Result<TcpListener> {
                lab::enter(lab::SERVER)?;
                let l = TcpListener::bind((lab::SERVER_ADDR, 0))?;
                l.set_nonblocking(true)?;
                Ok(l)
            })();
            let listener = match listener {
                Ok(l) => {
                    let _ = tx.send(l.local_addr().map_err(|e| anyhow!(e)));
                    l
                }
                Err(e) => {
                    let _ = tx.send(Err(e));
                    return;
                }
            };
            while !flag.load(Relaxed) {
                match listener.accept() {
                    Ok(_) => {}
                    Err(_) => std::thread::sleep(Duration::from_millis(2)),
                }
            }
        });
        let addr = rx.recv().map_err(|_| anyhow!("the probe thread died"))??;
        Ok(Probe {
            addr,
            stop,
            thread: Some(thread),
        })
    }
}

impl Drop for Probe {
    fn drop(&mut self) {
        self.stop.store(true, Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Connect times from the client namespace, `PROBES` of them, 4 at a time.
fn probe_link(addr: SocketAddr) -> Result<Vec<u64>> {
    let times: Arc<Mutex<Vec<u64>>> = Arc::default();
    let next = Arc::new(AtomicUsize::new(0));
    let handles: Vec<_> = (0..4)
        .map(|_| {
            let (times, next) = (times.clone(), next.clone());
            std::thread::spawn(move || -> Result<()> {
                lab::enter(lab::CLIENT)?;
                while next.fetch_add(1, Relaxed) < PROBES {
                    let t0 = Instant::now();
                    let s = TcpStream::connect_timeout(&addr, TIMEOUT)?;
                    let ns = t0.elapsed().as_nanos() as u64;
                    drop(s);
                    times.lock().map_err(|_| anyhow!("poisoned"))?.push(ns);
                }
                Ok(())
            })
        })
        .collect();
    for h in handles {
        h.join().map_err(|_| anyhow!("a probe thread panicked"))??;
    }
    let v = std::mem::take(&mut *times.lock().map_err(|_| anyhow!("poisoned"))?);
    Ok(v)
}

fn start_server(s: &Scenario, files: &(std::path::PathBuf, std::path::PathBuf)) -> Result<Server> {
    let exe = std::env::current_exe()?;
    let mut cmd = Lab::command(lab::SERVER, &exe);
    cmd.args([
        "handshake-server",
        "--protocol",
        s.protocol,
        "--stack",
        s.stack.name(),
        "--group",
        &s.group,
        "--bind",
        lab::SERVER_ADDR,
        "--concurrent",
        "--timeout-s",
    ])
    .arg(TIMEOUT.as_secs().to_string())
    .arg("--cert")
    .arg(&files.0)
    .arg("--key")
    .arg(&files.1);
    let mut server =
        Server::spawn(cmd).with_context(|| format!("{} server for {}", s.stack.name(), s.group))?;
    server.addr.set_ip(lab::SERVER_ADDR.parse()?);
    Ok(server)
}

fn server_cpu_ns(server: &mut Server) -> Result<f64> {
    let line = server.command("stats 0")?;
    let v: serde_json::Value =
        serde_json::from_str(&line).with_context(|| format!("server said {line:?}"))?;
    v["cpu_ns"]
        .as_f64()
        .ok_or_else(|| anyhow!("no cpu_ns in {line}"))
}

/// `n` handshakes, `parallel` in flight, from client-namespace threads: (ready, echo) per
/// completed handshake, and how many failed.
/// After `budget`, no new handshake starts once `MIN_PER_CELL` have; those started all finish. Which
/// handshakes start depends only on the clock, not on how any of them went, so the sample is not
/// biased towards fast ones.
fn handshakes(
    s: &Scenario,
    id: &tls::Identity,
    addr: SocketAddr,
    n: usize,
    parallel: usize,
    budget: Duration,
) -> Result<(Vec<(u64, u64)>, usize)> {
    let t0 = Instant::now();
    let done: Arc<Mutex<Vec<(u64, u64)>>> = Arc::default();
    let failed = Arc::new(AtomicUsize::new(0));
    let next = Arc::new(AtomicUsize::new(0));
    std::thread::scope(|scope| -> Result<()> {
        let mut handles = Vec::new();
        for _ in 0..parallel.max(1).min(n.max(1)) {
            let (done, failed, next) = (done.clone(), failed.clone(), next.clone());
            handles.push(scope.spawn(move || -> Result<()> {
                lab::enter(lab::CLIENT)?;
                enum C {
                    Tls(tls::Client),
                    Ssh(ssh::Client),
                }
                let c = match s.protocol {
                    "ssh" => C::Ssh(ssh::Client::new(&s.group)?),
                    _ => C::Tls(tls::Client::new(s.stack, &s.group, id, false)?),
                };
                loop {
                    let k = next.fetch_add(1, Relaxed);
                    if k >= n
                        || (k >= MIN_PER_CELL && t0.elapsed() > budget)
                        || crate::interrupt::check().is_err()
                    {
                        break;
                    }
                    let one = match &c {
                        C::Tls(c) => c.connect(addr, false),
                        C::Ssh(c) => c.connect(addr, false),
                    };
                    match one {
                        Ok(o) => done
                            .lock()
                            .map_err(|_| anyhow!("poisoned"))?
                            .push((o.ready_ns as u64, o.total_ns as u64)),
                        Err(_) => {
                            failed.fetch_add(1, Relaxed);
                        }
                    }
                }
                Ok(())
            }));
        }
        for h in handles {
            h.join()
                .map_err(|_| anyhow!("a client thread panicked"))??;
        }
        Ok(())
    })?;
    crate::interrupt::check()?;
    let v = std::mem::take(&mut *done.lock().map_err(|_| anyhow!("poisoned"))?);
    Ok((v, failed.load(Relaxed)))
}

/// A cell's figures from its raw data (the same functions `check` uses).
#[allow(clippy::too_many_arguments)]
fn cell(
    s: &Scenario,
    times: &[(u64, u64)],
    failed: usize,
    c: &router::Counters,
    wall: f64,
    client_cpu: f64,
    server_cpu: f64,
    model: Model,
) -> Cell {
    let ready: Vec<u64> = times.iter().map(|t| t.0).collect();
    let echo: Vec<u64> = times.iter().map(|t| t.1).collect();
    let n = (ready.len() + failed).max(1) as f64;
    let per = |v: [u64; 2]| [v[0] as f64 / n, v[1] as f64 / n];
    let loss = |d: usize| {
        if c.packets[d] > 0 {
            c.dropped[d] as f64 / c.packets[d] as f64 * 100.0
        } else {
            0.0
        }
    };
    Cell {
        protocol: s.protocol.into(),
        stack: s.stack,
        group: s.group.clone(),
        baseline: s.baseline.clone(),
        ready_ms: percentiles_ms(&ready, &PERCENTILES),
        echo_ms: percentiles_ms(&echo, &PERCENTILES),
        ready_mean_ms: if ready.is_empty() {
            0.0
        } else {
            stats::mean(&ready.iter().map(|&x| x as f64 / 1e6).collect::<Vec<_>>())
        },
        ready_ns: ready,
        echo_ns: echo,
        failed,
        packets: c.packets,
        bytes: c.bytes,
        data_packets: c.data_packets,
        dropped: c.dropped,
        packets_per_handshake: per(c.packets),
        bytes_per_handshake: per(c.bytes),
        observed_loss_pct: [loss(0), loss(1)],
        client_busy_pct: client_cpu / wall * 100.0,
        server_busy_pct: server_cpu / wall * 100.0,
        model,
    }
}

pub fn run(opts: &Options, progress: &mut dyn FnMut(&str)) -> Result<Network> {
    if let Some(why) = lab::unavailable() {
        bail!(Unavailable(why));
    }
    let start = Instant::now();
    let date_utc = crate::run::utc_now();
    tls::set_io_timeout(TIMEOUT);
    let lab = Lab::new()?;
    lab.rate(opts.rate_mbit)?;
    let mut notes = lab.notes.clone();
    let exe = std::env::current_exe()?;
    let mut cmd = Lab::command(lab::ROUTER, &exe);
    cmd.args(["netem-router", "--client-if", lab::ROUTER_CLIENT_IF]);
    let mut router =
        Router(Server::spawn(cmd).context("the emulator (netem-router) in the router namespace")?);
    router.set([0.0, 0.0], 0.0, 1)?;
    let probe = Probe::start()?;
    // Through the router with no delay: the path's own RTT, taken off the delays below.
    let base = probe_link(probe.addr)
        .context("TCP connect through the router (is the NFQUEUE target there?)")?;
    let base_rtt_ms = stats::median(&base.iter().map(|&x| x as f64 / 1e6).collect::<Vec<_>>());
    let offset_ms = base_rtt_ms / 2.0;

    let id = tls::identity()?;
    let dir = std::env::temp_dir().join(format!("pqprof-net-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let files = (dir.join("cert.der"), dir.join("key.pem"));
    std::fs::write(&files.0, &id.cert_der)?;
    std::fs::write(&files.1, &id.key_pem)?;
    let scenarios = scenarios(opts);
    let result = (|| -> Result<Vec<Point>> {
        let mut servers: Vec<Server> = scenarios
            .iter()
            .map(|s| start_server(s, &files))
            .collect::<Result<_>>()?;
        let mut points: Vec<Point> = Vec::new();
        // The zero point first (no delay, no loss): the model's compute term and packet counts.
        let mut grid: Vec<(f64, f64)> = vec![(0.0, 0.0)];
        for &r in &opts.grid.rtts_ms {
            for &l in &opts.grid.losses_pct {
                grid.push((r, l));
            }
        }
        for (k, &(rtt, loss_pct)) in grid.iter().enumerate() {
            crate::interrupt::check()?;
            progress(&format!(
                "network: point {}/{}: RTT {rtt} ms, loss {loss_pct}%",
                k + 1,
                grid.len()
            ));
            let one_way = (rtt / 2.0 - offset_ms).max(0.0);
            router.set([one_way, one_way], 0.0, 1)?;
            let connect_ns = probe_link(probe.addr)?;
            let median = stats::median(
                &connect_ns
                    .iter()
                    .map(|&x| x as f64 / 1e6)
                    .collect::<Vec<_>>(),
            );
            let tolerance = tolerance_ms(rtt);
            let link = Link {
                valid: (median - rtt).abs() <= tolerance,
                rtt_median_ms: median,
                tolerance_ms: tolerance,
                connect_ns,
            };
            if !link.valid {
                notes.push(format!("RTT {rtt} ms, loss {loss_pct}%: measured RTT {median:.3} ms is outside ±{tolerance:.2} ms; the point is marked invalid"));
            }
            let mut cells = Vec::new();
            for (s, server) in scenarios.iter().zip(servers.iter_mut()) {
                crate::interrupt::check()?;
                let seed = 0x5eed ^ (k as u64) << 8;
                router.set([one_way, one_way], loss_pct / 100.0, seed)?;
                let (cpu0, scpu0, t0) = (
                    crate::handshake::alloc::process_cpu_ns(),
                    server_cpu_ns(server)?,
                    Instant::now(),
                );
                // The zero point one handshake at a time: it is the model's compute term, so no two
                // handshakes may share the cores.
                let parallel = if k == 0 {
                    1
                } else {
                    in_flight(opts.parallel, rtt)
                };
                let (times, failed) = handshakes(
                    s,
                    &id,
                    server.addr,
                    opts.per_point,
                    parallel,
                    opts.cell_budget,
                )?;
                let wall = t0.elapsed().as_nanos() as f64;
                let (client_cpu, server_cpu) = (
                    crate::handshake::alloc::process_cpu_ns() - cpu0,
                    server_cpu_ns(server)? - scpu0,
                );
                let counters = router.stats()?;
                if counters.kernel_queue_dropped > 0 {
                    notes.push(format!("RTT {rtt} ms, loss {loss_pct}%, {} {}: the kernel dropped {} packets at a full queue", s.stack.name(), s.group, counters.kernel_queue_dropped));
                }
                let zero = points.first().and_then(|p| {
                    p.cells
                        .iter()
                        .find(|c| c.stack == s.stack && c.group == s.group)
                });
                let model = match zero {
                    Some(z) => model_for(s, z, rtt, base_rtt_ms, loss_pct, opts.rate_mbit),
                    None => {
                        let n = (times.len() + failed).max(1) as f64;
                        let zero_ms =
                            percentiles_ms(&times.iter().map(|t| t.0).collect::<Vec<_>>(), &[50.0])
                                [0];
                        let data = [
                            counters.data_packets[0] as f64 / n,
                            counters.data_packets[1] as f64 / n,
                        ];
                        let bytes = [counters.bytes[0] as f64 / n, counters.bytes[1] as f64 / n];
                        Model {
                            zero_ms,
                            round_trips: s.round_trips,
                            data_packets: data,
                            bytes,
                            expected_ms: crate::netmodel::expected_ms(
                                zero_ms,
                                s.round_trips,
                                rtt,
                                base_rtt_ms,
                                0.0,
                                data,
                                bytes,
                                opts.rate_mbit,
                            ),
                        }
                    }
                };
                let c = cell(
                    s, &times, failed, &counters, wall, client_cpu, server_cpu, model,
                );
                if k > 0 && (c.client_busy_pct > 80.0 || c.server_busy_pct > 80.0) {
                    notes.push(format!(
                        "RTT {rtt} ms, loss {loss_pct}%, {} {}: client {:.0}% / server {:.0}% of a core busy: compute may be part of the latency",
                        s.stack.name(),
                        s.group,
                        c.client_busy_pct,
                        c.server_busy_pct
                    ));
                }
                cells.push(c);
            }
            points.push(Point {
                rtt_ms: rtt,
                loss_pct,
                link,
                cells,
            });
        }
        Ok(points)
    })();
    let _ = std::fs::remove_dir_all(&dir);
    drop(probe);
    drop(router);
    drop(lab);
    let points = result?;
    Ok(Network {
        date_utc,
        wall_seconds: start.elapsed().as_secs_f64(),
        emulator: "nfqueue: pqprof netem-router (user-space delay and loss on NFQUEUE in the router namespace's FORWARD chain; SCHED_FIFO)".into(),
        grid: opts.grid.name.clone(),
        congestion_control: String::new(),
        offloads_off: true,
        rate_mbit: opts.rate_mbit,
        base_rtt_ms,
        offset_ms,
        parallel: opts.parallel,
        per_point: opts.per_point,
        cell_budget_s: if opts.cell_budget == Duration::MAX { 0.0 } else { opts.cell_budget.as_secs_f64() },
        percentiles: PERCENTILES.to_vec(),
        points,
        notes,
    })
    .map(|mut n| {
        n.congestion_control = cc_of(&n.notes);
        n
    })
}

/// What Lab chose, from its note when it could not pick cubic; else cubic.
fn cc_of(notes: &[String]) -> String {
    notes
        .iter()
        .find_map(|n| {
            n.strip_prefix("cubic is not in this kernel; the endpoints use ")
                .map(String::from)
        })
        .unwrap_or_else(|| "cubic".into())
}

fn model_for(
    s: &Scenario,
    zero: &Cell,
    rtt: f64,
    base_rtt_ms: f64,
    loss_pct: f64,
    rate: Option<f64>,
) -> Model {
    let zero_ms = zero
        .ready_ms
        .get(PERCENTILES.iter().position(|&p| p == 50.0).unwrap_or(2))
        .copied()
        .unwrap_or(0.0);
    let n = (zero.ready_ns.len() + zero.failed).max(1) as f64;
    let data = [
        zero.data_packets[0] as f64 / n,
        zero.data_packets[1] as f64 / n,
    ];
    let bytes = zero.bytes_per_handshake;
    Model {
        zero_ms,
        round_trips: s.round_trips,
        data_packets: data,
        bytes,
        expected_ms: crate::netmodel::expected_ms(
            zero_ms,
            s.round_trips,
            rtt,
            base_rtt_ms,
            loss_pct / 100.0,
            data,
            bytes,
            rate,
        ),
    }
}

/// This machine cannot run the grid: a one-line reason, not a failure of the run.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Unavailable(pub String);

/// The section as text: per point and scenario, the median and p95 and packets each way.
pub fn table(n: &Network) -> String {
    let mut t = comfy_table::Table::new();
    t.load_preset(comfy_table::presets::NOTHING);
    t.set_header(vec![
        "RTT",
        "loss",
        "link RTT",
        "stack",
        "group",
        "p50",
        "p95",
        "mean",
        "model",
        "packets c→s / s→c",
        "lost c→s / s→c",
        "failed",
    ]);
    for p in &n.points {
        for (i, c) in p.cells.iter().enumerate() {
            t.add_row(vec![
                if i == 0 {
                    format!("{} ms", p.rtt_ms)
                } else {
                    String::new()
                },
                if i == 0 {
                    format!("{}%", p.loss_pct)
                } else {
                    String::new()
                },
                if i == 0 {
                    format!(
                        "{:.2} ms{}",
                        p.link.rtt_median_ms,
                        if p.link.valid { "" } else { " INVALID" }
                    )
                } else {
                    String::new()
                },
                c.stack.name().to_string(),
                c.group.clone(),
                format!("{:.1} ms", c.ready_ms.get(2).copied().unwrap_or(0.0)),
                format!("{:.1} ms", c.ready_ms.get(6).copied().unwrap_or(0.0)),
                format!("{:.1} ms", c.ready_mean_ms),
                format!("{:.1} ms", c.model.expected_ms),
                format!(
                    "{:.1} / {:.1}",
                    c.packets_per_handshake[0], c.packets_per_handshake[1]
                ),
                format!(
                    "{:.1}% / {:.1}%",
                    c.observed_loss_pct[0], c.observed_loss_pct[1]
                ),
                c.failed.to_string(),
            ]);
        }
    }
    let mut s = format!(
        "Network grid {} ({}; base RTT {:.3} ms, congestion control {}):\n",
        n.grid, n.emulator, n.base_rtt_ms, n.congestion_control
    );
    s += &t.to_string();
    s.push('\n');
    for note in &n.notes {
        s += &format!("note: {note}\n");
    }
    s
}

#[cfg(test)]
mod tests {
    #[test]
    fn in_flight_grows_with_the_rtt_up_to_paquins_forty() {
        assert_eq!(super::in_flight(8, 0.0), 8);
        assert_eq!(super::in_flight(8, 5.6), 8);
        assert_eq!(super::in_flight(8, 11.2), 16);
        assert_eq!(super::in_flight(8, 78.7), 40);
        assert_eq!(super::in_flight(0, 5.6), 1);
    }
}
