//! `pqprof network`: real TLS 1.3 and SSH handshakes through an emulated network, on a grid of
//! round-trip times and loss rates (Paquin, Stebila & Tamvada, PQCrypto 2020), with what the link
//! really did at every point and a model beside every measurement.
//!
//! The client runs in this process (threads moved into the client namespace), each server in its
//! own process in the server namespace, and the emulator (router.rs) in the router namespace. The
//! three namespaces are set up and taken down by lab.rs, whatever happens.

pub mod lab;
pub mod router;

use crate::auth::Step;
use crate::figures::network::{loss_pct, mean_ns, percentiles_ns, tolerance_ns};
use crate::results::{Against, Cell, Link, Model, Network, Point, RealStack, Warning};
use crate::stack::child::{Server, Start};
use crate::stack::{self, tls, Config, Identity, TlsStack};
use crate::stats;
use anyhow::{anyhow, bail, Context, Result};
use lab::Lab;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Paquin et al.'s percentiles.
/// The half-width a cell's p50 is reported against (the run's default target; a cell's count is
/// fixed by its point, not chased).
const CELL_TARGET_PCT: f64 = 1.0;

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
    /// The losses at which the authentications beyond the baseline run (every RTT): the
    /// certificates' cost is in the round trips and the bytes, which the loss-free point shows and
    /// one lossy point tests; the whole grid for them is `--all-auths`.
    pub auth_losses_pct: Vec<f64>,
}

impl Grid {
    pub fn named(name: &str) -> Result<Grid> {
        let (rtts, losses): (Vec<f64>, Vec<f64>) = match name {
            // Small enough for `make run` on 2 cores (a lossy point's cells wait out retransmission
            // timeouts: 10% is in the paquin grid).
            "default" => (vec![5.6, 78.7], vec![0.0, 1.0, 5.0, 20.0]),
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
        let auth_losses_pct = if name == "quick" {
            vec![0.0]
        } else {
            vec![0.0, 5.0]
        };
        Ok(Grid {
            name: name.into(),
            rtts_ms: rtts,
            losses_pct: losses,
            auth_losses_pct,
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
    /// Every authentication at every point of the grid, not only at `auth_losses_pct`.
    pub all_auths: bool,
    pub stacks: Vec<String>,
    /// The authentications (suites/auth.toml).
    pub auths: crate::auth::Auths,
}

#[derive(Clone)]
struct Scenario {
    stack: &'static dyn TlsStack,
    group: String,
    baseline: Option<String>,
    /// TLS: the authentication its server presents; whether it is the baseline one.
    auth: Option<String>,
    baseline_auth: bool,
    against: Option<Against>,
}

impl Scenario {
    fn name(&self) -> String {
        format!(
            "{} {}{}",
            self.stack.name(),
            self.group,
            self.auth
                .as_ref()
                .filter(|_| !self.baseline_auth)
                .map_or(String::new(), |a| format!(" + {a}"))
        )
    }
}

/// The groups of each protocol the grid runs: its classical baseline first, then the hybrid
/// (and with `all_groups` the other TLS groups).
fn groups(protocol: &str, all_groups: bool) -> Vec<&'static str> {
    match protocol {
        "tls13" if all_groups => vec!["X25519", "X25519MLKEM768", "MLKEM768", "SecP256r1MLKEM768"],
        "tls13" => vec!["X25519", "X25519MLKEM768"],
        "ssh" => vec!["curve25519-sha256", "mlkem768x25519-sha256"],
        _ => Vec::new(),
    }
}

fn scenarios(opts: &Options) -> Vec<Scenario> {
    let mut out = Vec::new();
    let baseline = opts.auths.baseline.clone();
    for &stack in stack::all().iter().filter(|s| s.features().network) {
        if !(opts.stacks.is_empty() || opts.stacks.iter().any(|n| n == stack.name())) {
            continue;
        }
        let tls = stack.protocol() == "tls13";
        let groups = groups(stack.protocol(), opts.all_groups);
        for g in &groups {
            let classical = (*g != groups[0]).then(|| groups[0].to_string());
            let auths: Vec<Option<String>> = if tls {
                opts.auths
                    .for_group(g, Step::Network)
                    .into_iter()
                    .map(|a| Some(a.name.clone()))
                    .collect()
            } else {
                vec![None]
            };
            for auth in auths {
                let baseline_auth = auth.as_ref().is_none_or(|a| *a == baseline);
                let against = if baseline_auth {
                    classical.clone().map(|c| Against {
                        suite: c,
                        auth: auth.clone(),
                    })
                } else {
                    Some(Against {
                        suite: g.to_string(),
                        auth: Some(baseline.clone()),
                    })
                };
                out.push(Scenario {
                    stack,
                    group: g.to_string(),
                    baseline: classical.clone(),
                    auth,
                    baseline_auth,
                    against,
                });
            }
        }
    }
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
    /// Each direction's delay (nanoseconds), the loss probability, the seed of the drops.
    fn set(&mut self, delay_ns: [f64; 2], loss: f64, seed: u64) -> Result<()> {
        let ns = |x: f64| x.max(0.0).round() as u64;
        let a = self.0.command(&format!(
            "set {} {} {loss} {loss} {seed}",
            ns(delay_ns[0]),
            ns(delay_ns[1])
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

fn start_server(s: &Scenario, chains: &stack::identity::Chains, baseline: &str) -> Result<Server> {
    let (_, files) = chains.get(s.auth.as_deref().unwrap_or(baseline))?;
    let (program, args) = Lab::wrap(lab::SERVER);
    s.stack.start_server(&Start {
        group: &s.group,
        files,
        instrumented: false,
        wrap: Some((&program, args)),
        bind: Some(lab::SERVER_ADDR.parse()?),
        concurrent: true,
        timeout_s: Some(TIMEOUT.as_secs()),
    })
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
    id: &Identity,
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
                let c = s.stack.client(Config::plain(&s.group, id))?;
                loop {
                    let k = next.fetch_add(1, Relaxed);
                    if k >= n
                        || (k >= MIN_PER_CELL && t0.elapsed() > budget)
                        || crate::interrupt::check().is_err()
                    {
                        break;
                    }
                    match c.connect(addr, false) {
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
    Cell {
        protocol: s.stack.protocol().into(),
        stack: RealStack::new(s.stack.name()),
        group: s.group.clone(),
        auth: s.auth.clone(),
        server_flight_bytes: None,
        baseline: s.baseline.clone(),
        against: s.against.clone(),
        ready_percentiles_ns: percentiles_ns(&ready, &PERCENTILES),
        echo_percentiles_ns: percentiles_ns(&echo, &PERCENTILES),
        ready_p50_ci95_ns: crate::figures::network::ready_intervals(&ready).0,
        ready_p95_ci95_ns: crate::figures::network::ready_intervals(&ready).1,
        precision: crate::figures::network::p50_precision(&ready, CELL_TARGET_PCT),
        ready_mean_ns: if ready.is_empty() {
            0.0
        } else {
            mean_ns(&ready)
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
        observed_loss_pct: [
            loss_pct(c.dropped[0], c.packets[0]),
            loss_pct(c.dropped[1], c.packets[1]),
        ],
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
    let date_utc = crate::host::utc_now();
    tls::set_io_timeout(TIMEOUT);
    let lab = Lab::new()?;
    lab.rate(opts.rate_mbit)?;
    let mut notes = lab.notes.clone();
    let congestion_control = lab.congestion_control.clone();
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
    let base_rtt_ns = stats::median(&base.iter().map(|&x| x as f64).collect::<Vec<_>>());
    let offset_ns = base_rtt_ns / 2.0;

    let scenarios = scenarios(opts);
    let baseline = opts.auths.baseline.clone();
    let chains = stack::identity::Chains::make(
        std::iter::once(&baseline)
            .chain(scenarios.iter().filter_map(|s| s.auth.as_ref()))
            .filter_map(|n| opts.auths.find(n)),
        "net",
    )?;
    let (mss, initcwnd) = (lab::mss(probe.addr).ok(), lab::initcwnd(lab::SERVER));
    let mtu = lab::mtu(lab::CLIENT, "c-r").ok();
    let result = (|| -> Result<Vec<Point>> {
        let mut servers: Vec<Server> = scenarios
            .iter()
            .map(|s| start_server(s, &chains, &baseline))
            .collect::<Result<_>>()?;
        // What each scenario's first connection shows, checked against it: the server's first
        // flight, for the model's round trips.
        let mut flights: Vec<Option<u64>> = vec![None; scenarios.len()];
        let mut points: Vec<Point> = Vec::new();
        // The zero point first (no delay, no loss): the model's compute term and packet counts.
        let mut grid: Vec<(f64, f64)> = vec![(0.0, 0.0)];
        for &r in &opts.grid.rtts_ms {
            for &l in &opts.grid.losses_pct {
                grid.push((r, l));
            }
        }
        for (k, &(rtt_ms, loss)) in grid.iter().enumerate() {
            crate::interrupt::check()?;
            progress(&format!(
                "network: point {}/{}: RTT {rtt_ms} ms, loss {loss}%",
                k + 1,
                grid.len()
            ));
            let rtt = rtt_ms * 1e6;
            let one_way = (rtt / 2.0 - offset_ns).max(0.0);
            router.set([one_way, one_way], 0.0, 1)?;
            let connect_ns = probe_link(probe.addr)?;
            let median = stats::median(&connect_ns.iter().map(|&x| x as f64).collect::<Vec<_>>());
            let tolerance = tolerance_ns(rtt);
            let link = Link {
                valid: (median - rtt).abs() <= tolerance,
                rtt_median_ns: median,
                tolerance_ns: tolerance,
                connect_ns,
            };
            if !link.valid {
                notes.push(Warning::InvalidPoint {
                    rtt_ms,
                    loss_pct: loss,
                    measured_ms: median / 1e6,
                    tolerance_ms: tolerance / 1e6,
                });
            }
            let mut cells = Vec::new();
            for (j, (s, server)) in scenarios.iter().zip(servers.iter_mut()).enumerate() {
                crate::interrupt::check()?;
                // Another authentication than the baseline: at its points only.
                if k > 0
                    && !s.baseline_auth
                    && !opts.all_auths
                    && !opts.grid.auth_losses_pct.contains(&loss)
                {
                    continue;
                }
                let (id, _) = chains.get(s.auth.as_deref().unwrap_or(&baseline))?;
                let seed = 0x5eed ^ (k as u64) << 8;
                router.set([one_way, one_way], loss / 100.0, seed)?;
                let (cpu0, scpu0, t0) = (
                    crate::alloc::process_cpu_ns(),
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
                if k == 0 {
                    flights[j] = evidence(s, id, server.addr)?;
                }
                let (times, failed) = handshakes(
                    s,
                    id,
                    server.addr,
                    opts.per_point,
                    parallel,
                    opts.cell_budget,
                )?;
                let wall = t0.elapsed().as_nanos() as f64;
                let (client_cpu, server_cpu) = (
                    crate::alloc::process_cpu_ns() - cpu0,
                    server_cpu_ns(server)? - scpu0,
                );
                let counters = router.stats()?;
                if counters.kernel_queue_dropped > 0 {
                    notes.push(Warning::QueueDrops {
                        rtt_ms,
                        loss_pct: loss,
                        cell: s.name(),
                        dropped: counters.kernel_queue_dropped,
                    });
                }
                let zero = points.first().and_then(|p| {
                    p.cells.iter().find(|c| {
                        c.stack.name() == s.stack.name() && c.group == s.group && c.auth == s.auth
                    })
                });
                // TCP connect and the exchange, and a round trip more for each initial window the
                // server's first flight overflows (slow start, RFC 5681; netmodel).
                let round_trips = s.stack.round_trips()
                    + match (flights[j], mss, initcwnd) {
                        (Some(f), Some(m), w) => {
                            crate::netmodel::slow_start_round_trips(f, m, w) as f64
                        }
                        _ => 0.0,
                    };
                let model = match zero {
                    Some(z) => model_for(z, round_trips, rtt, base_rtt_ns, loss, opts.rate_mbit),
                    None => {
                        let n = (times.len() + failed).max(1) as f64;
                        let zero_ns =
                            percentiles_ns(&times.iter().map(|t| t.0).collect::<Vec<_>>(), &[50.0])
                                [0];
                        let data = [
                            counters.data_packets[0] as f64 / n,
                            counters.data_packets[1] as f64 / n,
                        ];
                        let bytes = [counters.bytes[0] as f64 / n, counters.bytes[1] as f64 / n];
                        Model {
                            zero_ns,
                            round_trips,
                            data_packets: data,
                            bytes,
                            expected_ns: crate::netmodel::expected_ns(
                                zero_ns,
                                round_trips,
                                rtt,
                                base_rtt_ns,
                                0.0,
                                data,
                                bytes,
                                opts.rate_mbit,
                            ),
                        }
                    }
                };
                let mut c = cell(
                    s, &times, failed, &counters, wall, client_cpu, server_cpu, model,
                );
                c.server_flight_bytes = flights[j];
                if k > 0 && (c.client_busy_pct > 80.0 || c.server_busy_pct > 80.0) {
                    notes.push(Warning::BusyEndpoint {
                        rtt_ms,
                        loss_pct: loss,
                        cell: s.name(),
                        client_pct: c.client_busy_pct,
                        server_pct: c.server_busy_pct,
                    });
                }
                cells.push(c);
            }
            points.push(Point {
                rtt_ns: rtt,
                loss_pct: loss,
                link,
                cells,
            });
        }
        Ok(points)
    })();
    drop(chains);
    drop(probe);
    drop(router);
    drop(lab);
    let points = result?;
    Ok(Network {
        date_utc,
        wall_seconds: start.elapsed().as_secs_f64(),
        emulator: "nfqueue: pqprof netem-router (user-space delay and loss on NFQUEUE in the router namespace's FORWARD chain; SCHED_FIFO)".into(),
        grid: opts.grid.name.clone(),
        congestion_control,
        mtu,
        mss,
        initcwnd: Some(initcwnd),
        offloads_off: true,
        rate_mbit: opts.rate_mbit,
        base_rtt_ns,
        offset_ns,
        parallel: opts.parallel,
        per_point: opts.per_point,
        cell_budget_s: if opts.cell_budget == Duration::MAX { 0.0 } else { opts.cell_budget.as_secs_f64() },
        percentiles: PERCENTILES.to_vec(),
        points,
        notes,
    })
}

fn model_for(
    zero: &Cell,
    round_trips: f64,
    rtt: f64,
    base_rtt_ns: f64,
    loss_pct: f64,
    rate: Option<f64>,
) -> Model {
    let zero_ns = zero
        .ready_percentiles_ns
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
        zero_ns,
        round_trips,
        data_packets: data,
        bytes,
        expected_ns: crate::netmodel::expected_ns(
            zero_ns,
            round_trips,
            rtt,
            base_rtt_ns,
            loss_pct / 100.0,
            data,
            bytes,
            rate,
        ),
    }
}

/// The scenario's first connection through the zero point, with its evidence checked against the
/// scenario (as `pqprof handshake` does): the server's first flight, bytes.
fn evidence(s: &Scenario, id: &Identity, addr: SocketAddr) -> Result<Option<u64>> {
    let c = s.stack.client(Config::plain(&s.group, id))?;
    let one = std::thread::scope(|scope| {
        scope
            .spawn(|| -> Result<stack::One> {
                lab::enter(lab::CLIENT)?;
                c.connect(addr, true)
            })
            .join()
            .map_err(|_| anyhow!("the evidence thread panicked"))?
    })?;
    let ev = one.evidence.unwrap_or_default();
    let auth = (s.stack.protocol() == "tls13").then_some(&id.auth);
    let d = crate::figures::evidence::Declared {
        protocol: s.stack.protocol(),
        group: &s.group,
        shares: None,
        auth,
    };
    let wrong = crate::figures::evidence::contradictions(&d, &ev);
    anyhow::ensure!(wrong.is_empty(), "{}: {}", s.name(), wrong.join("; "));
    Ok(ev.server_flight_bytes)
}

/// This machine cannot run the grid: a one-line reason, not a failure of the run.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Unavailable(pub String);

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
