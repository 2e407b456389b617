//! `pqprof network`: real TLS 1.3 and SSH handshakes through an emulated network, on a grid of
//! round-trip times and loss rates (Paquin, Stebila & Tamvada, PQCrypto 2020), with what the link
//! really did at every point and a model beside every measurement.
//!
//! The client runs in this process (threads moved into the client namespace), each server in its
//! own process in the server namespace, and the emulator (router.rs) in the router namespace. The
//! three namespaces are set up and taken down by lab.rs, whatever happens.

pub mod lab;
pub(crate) mod probe;
pub mod router;
mod share;
mod window;

use crate::auth::Step;
use crate::figures::network::{
    busy_pct, loss_pct, mean_ns, percentiles_ns, tolerance_ns, Conditions, ModelInputs,
};
use crate::results::{
    mode_suffix, Against, Cell, CellCpu, CellEvidence, CellPace, Link, Mode, Model, Network, Point,
    RealStack, Release, Warning,
};
use crate::stack::child::{Server, Start};
use crate::stack::{self, tls, Config, Identity, TlsStack};
use crate::stats;
use anyhow::{anyhow, bail, Context, Result};
use lab::Lab;
use std::collections::BTreeMap;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The half-width a cell's p50 is reported against (the run's default target; a cell's count is
/// fixed by its point, not chased).
const CELL_TARGET_PCT: f64 = 1.0;

/// Paquin et al.'s percentiles.
pub(crate) const PERCENTILES: [f64; 7] = [25.0, 37.5, 50.0, 62.5, 75.0, 85.0, 95.0];
/// Socket timeouts over the emulated path: three lost SYNs back off 1 + 2 + 4 s.
const TIMEOUT: Duration = Duration::from_secs(30);
/// Handshakes every cell has, whatever its time budget.
const MIN_PER_CELL: usize = 10;
/// Connects that measure the link before each point.
const PROBES: usize = 16;

#[derive(Debug, Clone)]
pub(crate) struct Grid {
    pub(crate) name: String,
    pub(crate) rtts_ms: Vec<f64>,
    pub(crate) losses_pct: Vec<f64>,
    /// The losses at which the authentications beyond the baseline run (every RTT): the
    /// certificates' cost is in the round trips and the bytes, which the loss-free point shows and
    /// one lossy point tests; the whole grid for them is `--all-auths`.
    pub(crate) auth_losses_pct: Vec<f64>,
}

impl Grid {
    pub(crate) fn named(name: &str) -> Result<Grid> {
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

pub(crate) struct Options {
    pub(crate) grid: Grid,
    pub(crate) per_point: usize,
    /// After this long a cell starts no new handshake (once it has MIN_PER_CELL).
    pub(crate) cell_budget: Duration,
    /// The whole step's time to measure in, from the process's start (`budget::from_secs`: its
    /// budget less its closing): each cell's budget is then at most an even share of what is left
    /// (`cell_allowance`); none: `cell_budget` alone.
    pub(crate) budget: Option<Duration>,
    /// The most handshakes in flight at once (a cell's threads).
    pub(crate) parallel: usize,
    /// The endpoints' offered load, percent of one core (network::pace).
    pub(crate) load_pct: f64,
    pub(crate) rate_mbit: Option<f64>,
    /// Every TLS group (MLKEM768, SecP256r1MLKEM768 too), not only X25519 and X25519MLKEM768.
    pub(crate) all_groups: bool,
    /// Every authentication at every point of the grid, not only at `auth_losses_pct`.
    pub(crate) all_auths: bool,
    pub(crate) stacks: Vec<String>,
    /// The authentications (suites/auth.toml).
    pub(crate) auths: crate::auth::Auths,
    /// Each TLS group's key shares on the wire, client's and server's, bytes (its key-exchange
    /// suite's), which a resumption's evidence is held to.
    pub(crate) shares: Vec<(String, (usize, usize))>,
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
    /// Full handshakes, or resumed ones (#34): each of a client's connections with the ticket its
    /// connection before brought, at the zero point and the points without loss.
    mode: Mode,
}

impl Scenario {
    fn name(&self) -> String {
        format!(
            "{} {}{}{}",
            self.stack.name(),
            self.group,
            self.auth
                .as_ref()
                .filter(|_| !self.baseline_auth)
                .map_or(String::new(), |a| format!(" + {a}")),
            mode_suffix(self.mode, false)
        )
    }

    fn config<'a>(&'a self, id: &'a Identity) -> Config<'a> {
        Config {
            mode: self.mode,
            ..Config::plain(&self.group, id)
        }
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

/// The scenarios of every stack asked for that runs here, in the groups it negotiates with the
/// certificates it serves; a stack that cannot run (the Go peer not built), a group it does not
/// negotiate or a certificate it does not serve is a note.
fn scenarios(opts: &Options, notes: &mut Vec<Warning>) -> Vec<Scenario> {
    let mut out = Vec::new();
    let baseline = opts.auths.baseline.clone();
    for &stack in stack::all().iter().filter(|s| s.features().network) {
        if !(opts.stacks.is_empty() || opts.stacks.iter().any(|n| n == stack.name())) {
            continue;
        }
        let available = match stack.availability() {
            Ok(a) => a,
            Err(e) => {
                notes.push(Warning::NotMeasured {
                    what: format!("the {} stack through the network", stack.name()),
                    reason: format!("{e:#}"),
                });
                continue;
            }
        };
        let tls = stack.protocol() == "tls13";
        let groups = groups(stack.protocol(), opts.all_groups);
        for g in &groups {
            if !available.negotiates(g) {
                notes.push(Warning::GroupUnsupported {
                    stack: stack.name().into(),
                    version: available.version.clone(),
                    group: g.to_string(),
                });
                continue;
            }
            let classical = (*g != groups[0]).then(|| groups[0].to_string());
            let auths: Vec<Option<String>> = if tls {
                opts.auths
                    .for_group(g, Step::Network)
                    .into_iter()
                    .filter(|a| {
                        opts.auths
                            .pairs(g, &a.name, Step::Network, stack.transport())
                    })
                    .filter(|a| {
                        let serves = available.authenticates(&a.algorithm);
                        let note = available.unauthenticated(stack.name(), a);
                        if !serves && !notes.contains(&note) {
                            notes.push(note);
                        }
                        serves
                    })
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
                // Resumed beside full where the handshake step resumes the same scenario, and
                // QUIC's validated addresses (#35) likewise, each against its full twin.
                let f = stack.features();
                let twins: Vec<Scenario> = [
                    (Mode::Resumed, f.resumption),
                    (Mode::Token, f.address_validation),
                    (Mode::Retry, f.address_validation),
                ]
                .into_iter()
                .filter(|&(m, can)| {
                    can && crate::figures::modes::made(
                        m,
                        stack.protocol(),
                        g,
                        auth.as_deref(),
                        &baseline,
                    )
                })
                .map(|(mode, _)| Scenario {
                    stack,
                    group: g.to_string(),
                    baseline: classical.clone(),
                    auth: auth.clone(),
                    baseline_auth,
                    against: Some(Against {
                        suite: g.to_string(),
                        auth: auth.clone(),
                    }),
                    mode,
                })
                .collect();
                out.push(Scenario {
                    stack,
                    group: g.to_string(),
                    baseline: classical.clone(),
                    auth,
                    baseline_auth,
                    against,
                    mode: Mode::Full,
                });
                out.extend(twins);
            }
        }
    }
    out
}

/// A point from its cells of every mode: the full handshakes', the resumed ones' and QUIC's
/// validated addresses', each in its list.
fn point(rtt_ns: f64, loss_pct: f64, link: Link, cells: Vec<(Mode, Cell)>) -> Point {
    let mut p = Point {
        rtt_ns,
        loss_pct,
        link,
        cells: Vec::new(),
        resumed: Vec::new(),
        validated: Vec::new(),
    };
    for (mode, c) in cells {
        match mode {
            Mode::Resumed => p.resumed.push(c),
            m if m.validates_address() => p.validated.push(c),
            _ => p.cells.push(c),
        }
    }
    p
}

/// How a cell's handshakes start: one every `gap`, from `threads` client threads, so the endpoints'
/// offered load stays a small part of a core and no handshake waits for another's compute (on 2
/// cores, shared with the router, every collision of two handshakes' crypto is latency the network
/// did not cause).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Pace {
    pub(crate) gap: Duration,
    pub(crate) threads: usize,
    /// The zero-point median it was set from (none: one at a time).
    pub(crate) zero_ns: Option<f64>,
}

impl Pace {
    /// One handshake at a time, back to back (the zero point: the model's compute term).
    pub(crate) const SERIAL: Pace = Pace {
        gap: Duration::ZERO,
        threads: 1,
        zero_ns: None,
    };
}

/// The pace of a cell from the scenario's zero-point median (its compute and the path, one at a
/// time) and how long a connection holds its client thread (its expected handshake and the
/// echo's round trip): a start every `zero / load` (the endpoints then compute for about `load` of
/// a core on average), with enough threads that a start is not held back by connections still
/// waiting on the network (`hold / gap` of them, and one more), at most `max_in_flight`, and no
/// more than there are handshakes.
pub(crate) fn pace(zero_ns: f64, hold_ns: f64, load: f64, max_in_flight: usize, n: usize) -> Pace {
    let gap_ns = (zero_ns / load.clamp(0.01, 1.0)).max(0.0);
    Pace {
        gap: Duration::from_nanos(gap_ns.round() as u64),
        threads: window::lane_threads(hold_ns, gap_ns, max_in_flight, n),
        zero_ns: (zero_ns > 0.0).then_some(zero_ns),
    }
}

/// A round of a cell's time budget: `cell_budget` over the `rounds` its cell runs in, or with a
/// step budget, at most an even share of the time left among the `cells_left` cells' rounds
/// still to run (the cell then starts no handshake after it, once it has its round's share of
/// `MIN_PER_CELL`; those started finish, so a lossy cell may take longer).
pub(crate) fn cell_allowance(
    opts: &Options,
    elapsed: Duration,
    cells_left: usize,
    rounds: usize,
) -> Duration {
    let cell = opts.cell_budget / rounds.max(1) as u32;
    match opts.budget {
        Some(b) => cell.min(b.saturating_sub(elapsed) / cells_left.max(1) as u32),
        None => cell,
    }
}

/// The step's clock (from the process's start, `budget::process_start`) and the cells' rounds
/// still to run, for `cell_allowance`. The even share of the time left foresees neither the
/// points' links still to set up nor what the cells' rounds take beyond the time they are given
/// (a lossy cell's floor of handshakes, a window's last handshakes finishing): each is expected
/// to take as long as those so far did on average, and that is kept out of the shares, so that
/// the step ends near its budget rather than past it by their sum.
struct Budget {
    start: Instant,
    cells_left: usize,
    /// Cells' rounds run, and their time beyond what they were given, in all.
    cells_run: usize,
    over: Duration,
    /// Points whose link is still to set up, those set up, and their time in all.
    points_left: usize,
    points_set_up: usize,
    setting_up: Duration,
}

impl Budget {
    fn allowance(&self, opts: &Options, rounds: usize) -> Duration {
        let reserve = expected(self.over, self.cells_run, self.cells_left)
            + expected(self.setting_up, self.points_set_up, self.points_left);
        cell_allowance(
            opts,
            self.start.elapsed() + reserve,
            self.cells_left,
            rounds,
        )
    }

    /// `cells` rounds of cells ran, given `given` in all, and took `took`.
    fn ran(&mut self, cells: usize, given: Duration, took: Duration) {
        self.cells_run += cells;
        self.over += took.saturating_sub(given);
    }

    /// A point's link was set up in `took`.
    fn set_up(&mut self, took: Duration) {
        self.points_left = self.points_left.saturating_sub(1);
        self.points_set_up += 1;
        self.setting_up += took;
    }
}

/// What `left` more of something are expected to take, as long each as the `done` so far took
/// on average (`total` in all); nothing before any was done.
fn expected(total: Duration, done: usize, left: usize) -> Duration {
    match u32::try_from(done) {
        Ok(n) if n > 0 => (total / n).saturating_mul(u32::try_from(left).unwrap_or(u32::MAX)),
        _ => Duration::ZERO,
    }
}

/// A paced cell's handshakes within its allowance: those whose start, a `gap` after the one
/// before, is at most `allowance` after its first, never fewer than `least` (nor more than
/// asked). Fixed before the cell starts, so which handshakes run does not depend on how any went.
/// Back to back (no gap), the count asked: the clock stops those cells (window::sample).
pub(crate) fn starts_within(
    asked: usize,
    allowance: Duration,
    gap: Duration,
    least: usize,
) -> usize {
    if gap.is_zero() {
        return asked;
    }
    let fit = usize::try_from(allowance.as_nanos() / gap.as_nanos())
        .unwrap_or(usize::MAX)
        .saturating_add(1);
    fit.max(least).min(asked)
}

/// The points of `grid` in the order they run: (RTT ms, loss %), the zero point first.
fn points_of(grid: &Grid) -> Vec<(f64, f64)> {
    let each = grid
        .rtts_ms
        .iter()
        .flat_map(|&r| grid.losses_pct.iter().map(move |&l| (r, l)));
    std::iter::once((0.0, 0.0)).chain(each).collect()
}

/// The rounds of the zero point and of each point without loss (`schedule`).
const ROUNDS: usize = 3;

/// How many rounds a point of `loss_pct` runs in.
fn rounds_at(loss_pct: f64) -> usize {
    if loss_pct == 0.0 {
        ROUNDS
    } else {
        1
    }
}

/// The windows of the grid (`points_of`) in the order they run, as (point, round): the zero point
/// and the points without loss in `rounds` rounds, each round all of them in the grid's order,
/// each cell a share of its handshakes, with every lossy point once, in one round, after the
/// first. A cell and the zero point its model stands on then sample the same minutes of a host
/// whose speed drifts, and no cell's figure is one burst of the host's: in one round apiece the
/// zero point ran minutes before the 78.7 ms row, and two zero-point cells a second apart read
/// 1.43 and 2.18 ms where the second, quic-go's hybrid with a leaf alone, has less to do (Xeon
/// model 207, 4769b0, 2026-12-04). A lossy point waits out its retransmission timers, whose tails
/// one window overlaps (in rounds it would wait them out once a round) and no budget cuts; the
/// rounds after it share what time the tails leave. Run last, those tails put the step at 303 s
/// against its 198; run before the rounds, they left the 78.7 ms cells without loss 21
/// handshakes each (make runs of 2026-12-04 20:02 and 20:21, same Xeon).
fn schedule(grid: &[(f64, f64)], rounds: usize) -> Vec<(usize, usize)> {
    let clean: Vec<usize> = (0..grid.len()).filter(|&k| grid[k].1 == 0.0).collect();
    let lossy = (0..grid.len()).filter(|&k| grid[k].1 != 0.0);
    let mut order: Vec<(usize, usize)> = clean.iter().map(|&k| (k, 0)).collect();
    order.extend(lossy.map(|k| (k, 0)));
    for r in 1..rounds.max(1) {
        order.extend(clean.iter().map(|&k| (k, r)));
    }
    order
}

/// Round `round`'s share of `n` handshakes over `rounds` rounds: the shares differ by at most
/// one and add up to `n`.
fn round_share(n: usize, round: usize, rounds: usize) -> usize {
    let r = rounds.max(1);
    n * (round + 1) / r - n * round / r
}

/// How often a paced lane really starts a handshake: every `gap`, unless all its `threads` are
/// busy first, each connection holding its thread for about `hold_ns` (`hold_ns`: the handshake
/// and the echo's round trip); then every `hold_ns / threads`. Counting a cell's handshakes by
/// this keeps a long-RTT cell within its allowance: by the gap alone (and threads sized to the
/// handshake without its echo), each 78.7 ms cell of the Xeon's (model 207) make run of
/// 2026-12-04 started 180 handshakes up to 0.8 s behind schedule, and the step took 220 s
/// against its 198.
pub(crate) fn start_interval(gap: Duration, hold_ns: f64, threads: usize) -> Duration {
    if gap.is_zero() {
        return gap;
    }
    let busy = hold_ns.max(0.0) / threads.max(1) as f64;
    gap.max(Duration::from_nanos(busy.round() as u64))
}

/// Point `k` of the grid, at `rtt_ms` and `loss` %, as its cells see it, with its link measured
/// now (noted where it misses its target); the zero point's sets the base RTT and the emulator's
/// offset.
fn at_point(
    router: &mut Router,
    probe: SocketAddr,
    (k, rtt_ms, loss): (usize, f64, f64),
    opts: &Options,
    (base_rtt_ns, offset_ns): (&mut f64, &mut f64),
    notes: &mut Vec<Warning>,
) -> Result<(At, Link)> {
    let rtt = rtt_ms * 1e6;
    let (link, one_way) = link(router, probe, rtt, *offset_ns)?;
    if !link.valid {
        notes.push(Warning::InvalidPoint {
            rtt_ms,
            loss_pct: loss,
            measured_ms: link.rtt_median_ns / 1e6,
            tolerance_ms: link.tolerance_ns / 1e6,
        });
    }
    if k == 0 {
        // The RTT the zero point's handshakes already include: each further point's model adds
        // only what its round trips take beyond it.
        *base_rtt_ns = link.rtt_median_ns;
        *offset_ns = *base_rtt_ns / 2.0;
    }
    let at = At {
        k,
        rtt_ms,
        loss,
        conditions: Conditions {
            rtt_ns: if k == 0 { rtt } else { link.rtt_median_ns },
            measured: k > 0,
            base_rtt_ns: *base_rtt_ns,
            loss_pct: loss,
            rate_mbit: opts.rate_mbit,
            quic_loss_model: crate::netmodel::QUIC_LOSS_MODEL,
        },
        one_way,
    };
    Ok((at, link))
}

/// What the kernel's queue dropped in each point's cells (`grid`'s point, the cells' names),
/// over its rounds, as notes.
fn queue_drops(grid: &[(f64, f64)], drops: BTreeMap<(usize, String), u64>) -> Vec<Warning> {
    drops
        .into_iter()
        .map(|((k, cell), dropped)| Warning::QueueDrops {
            rtt_ms: grid[k].0,
            loss_pct: grid[k].1,
            cell,
            dropped,
        })
        .collect()
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

    fn stats(&mut self) -> Result<router::Stats> {
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

/// The emulator in the router namespace, with no delay, and a probe server behind it, through
/// which a first probe has run (discarded: on a VM the first connects of a fresh namespace ran up
/// to 4x slower, 1.32 ms against the zero point's 0.31 ms on a Zen 3 VM, and the path's own RTT
/// taken off the delays, `base_rtt_ns`, is the zero point's).
fn start_emulator() -> Result<(Router, Probe)> {
    let exe = std::env::current_exe()?;
    let mut cmd = Lab::command(lab::ROUTER, &exe);
    cmd.args(["netem-router", "--client-if", lab::ROUTER_CLIENT_IF]);
    let mut router =
        Router(Server::spawn(cmd).context("the emulator (netem-router) in the router namespace")?);
    router.set([0.0, 0.0], 0.0, 1)?;
    let probe = Probe::start()?;
    probe_link(probe.addr)
        .context("TCP connect through the router (is the NFQUEUE target there?)")?;
    Ok((router, probe))
}

/// How late a thread wakes past a 1 ms sleep, 200 times, at the emulator's 1 ns timer slack
/// (`Network::wake_ns`), with a note where that is slow.
fn wake_probe(notes: &mut Vec<Warning>) -> Vec<u64> {
    // In a thread of its own: the slack is inherited by the threads and processes a thread starts,
    // and the endpoints keep the default.
    let wake_ns = std::thread::spawn(|| {
        // SAFETY: a plain prctl on this thread.
        unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0) };
        let nap = Duration::from_millis(1);
        (0..200)
            .map(|_| {
                let t0 = Instant::now();
                std::thread::sleep(nap);
                t0.elapsed().saturating_sub(nap).as_nanos() as u64
            })
            .collect::<Vec<u64>>()
    })
    .join()
    .unwrap_or_default();
    if let Some((p50_us, p90_us)) = crate::figures::network::slow_wake(&wake_ns) {
        notes.push(Warning::SlowWake { p50_us, p90_us });
    }
    wake_ns
}

/// Probes each point's link until a connect through it takes the target RTT: the first probe at
/// RTT / 2 less half the base RTT each way, then (at most twice, while the median is more than the
/// tolerance off) the delay corrected by half the error, at most by the tolerance. The endpoints'
/// wake-up from idle on a VM grows with the wait (a connect blocks for the whole RTT), which the
/// base RTT, measured with no delay, does not show. A probe of 16 connects can also catch a burst
/// of the host's noise, so the probe closest to the target is kept, with its delay. Returns the
/// delay applied, that probe's times and the probes made.
fn calibrate(
    router: &mut Router,
    addr: SocketAddr,
    rtt: f64,
    offset_ns: f64,
    tolerance: f64,
) -> Result<(f64, Vec<u64>, u32)> {
    let mut one_way = (rtt / 2.0 - offset_ns).max(0.0);
    let mut best: Option<(f64, f64, Vec<u64>)> = None;
    let mut made = 0;
    for probes in 1..=3 {
        made = probes;
        router.set([one_way, one_way], 0.0, 1)?;
        let times = probe_link(addr)?;
        let median = stats::median(&times.iter().map(|&x| x as f64).collect::<Vec<_>>());
        let error = rtt - median;
        if best.as_ref().is_none_or(|b| error.abs() < b.0.abs()) {
            best = Some((error, one_way, times));
        }
        if rtt == 0.0 || error.abs() <= tolerance || probes == 3 {
            break;
        }
        one_way = (one_way + (error / 2.0).clamp(-tolerance, tolerance)).max(0.0);
    }
    let (_, delay, times) = best.ok_or_else(|| anyhow!("no probe of the link"))?;
    // Set again: the kept probe may not be the last.
    router.set([delay, delay], 0.0, 1)?;
    Ok((delay, times, made))
}

/// The link at a point of RTT `rtt` (ns), calibrated (`calibrate`), with the delay applied each way.
fn link(router: &mut Router, addr: SocketAddr, rtt: f64, offset_ns: f64) -> Result<(Link, f64)> {
    let tolerance = tolerance_ns(rtt);
    let (one_way, connect_ns, probes) = calibrate(router, addr, rtt, offset_ns, tolerance)?;
    let median = stats::median(&connect_ns.iter().map(|&x| x as f64).collect::<Vec<_>>());
    let link = Link {
        valid: (median - rtt).abs() <= tolerance,
        rtt_median_ns: median,
        tolerance_ns: tolerance,
        connect_ns,
        one_way_ns: Some(one_way),
        probes: Some(probes),
    };
    Ok((link, one_way))
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
    serve_in_lab(s.stack, &s.group, files, s.mode)
}

/// A server of `stack` in the server namespace, serving `group` with the identity of `files`, a
/// thread (or task) per connection.
fn serve_in_lab(
    stack: &dyn TlsStack,
    group: &str,
    files: &stack::identity::Files,
    mode: Mode,
) -> Result<Server> {
    let (program, args) = Lab::wrap(lab::SERVER);
    stack.start_server(&Start {
        group,
        files,
        instrumented: false,
        wrap: Some((&program, args)),
        bind: Some(lab::SERVER_ADDR.parse()?),
        concurrent: true,
        timeout_s: Some(TIMEOUT.as_secs()),
        mode,
    })
}

/// The server's CPU time, the connections it saw resume and those it served, since it started,
/// once it has served `served` (the window's handshakes are done at the client before the server
/// has counted the last: it counts a connection once its close returns).
fn server_stats(server: &mut Server, served: u64) -> Result<(f64, u64, u64)> {
    server.send(&format!("stats {served}"))?;
    stats_answer(server)
}

/// A server's answer to `stats N` (`server_stats`), once sent.
fn stats_answer(server: &mut Server) -> Result<(f64, u64, u64)> {
    let line = server.answer()?;
    let v: serde_json::Value =
        serde_json::from_str(&line).with_context(|| format!("server said {line:?}"))?;
    let cpu = v["cpu_ns"]
        .as_f64()
        .ok_or_else(|| anyhow!("no cpu_ns in {line}"))?;
    Ok((
        cpu,
        v["resumed"].as_u64().unwrap_or(0),
        v["served"].as_u64().unwrap_or(0),
    ))
}

/// What every cell of the grid uses: fixed before the first, and the servers, clients and first
/// flights its cells share.
struct Bench<'a> {
    opts: &'a Options,
    scenarios: &'a [Scenario],
    chains: &'a stack::identity::Chains,
    baseline: &'a str,
    mss: Option<u32>,
    initcwnd: u32,
    servers: Vec<Server>,
    /// Each scenario's clients, one per thread, made as a cell first needs them.
    pools: Vec<Vec<Box<dyn stack::Client>>>,
    /// What each scenario's first connection shows, checked against it: the server's first
    /// flight, for the model's round trips.
    flights: Vec<Flights>,
}

/// A point of the grid as its cells see it.
struct At {
    /// The point's place in the grid (0: the zero point).
    k: usize,
    rtt_ms: f64,
    loss: f64,
    /// The link the model counts.
    conditions: Conditions,
    /// The emulator's delay each way, nanoseconds.
    one_way: f64,
}

impl<'a> Bench<'a> {
    /// The scenarios with a cell at point `k` of loss `loss`: every one at the zero point, the
    /// baseline's authentication everywhere, the others at their losses (all: `--all-auths`).
    fn here(&self, k: usize, loss: f64) -> Vec<usize> {
        (0..self.scenarios.len())
            .filter(|&j| {
                let s = &self.scenarios[j];
                (loss == 0.0 || self.runs_lossy(s)) && (k == 0 || self.auth_runs_at(s, loss))
            })
            .collect()
    }

    /// The scenario's authentication has cells at `loss` (any loss: the zero point aside).
    fn auth_runs_at(&self, s: &Scenario, loss: f64) -> bool {
        s.baseline_auth || self.opts.all_auths || self.opts.grid.auth_losses_pct.contains(&loss)
    }

    /// Whether the scenario runs under loss at all. Resumed cells run only where the loss is 0 (a
    /// lost packet would cost a ticket, and the next one a full handshake); so do tokens and
    /// Retries (each is set against its full twin at no loss). Over QUIC only the key exchanges,
    /// with the baseline chain, run under loss: with a post-quantum chain's flight of several
    /// rounds, a few of quinn's handshakes under loss never completed (1 to 4 in 30 at 5%, Xeon
    /// 4769b0, 2026-12-04). Four of five stalled clients had taken in 23 to 27 datagrams without
    /// one ACK frame they could read (the server's Initial, with the ServerHello, lost; its
    /// Handshake packets undecryptable without it) and sent only their Initial's probe timeouts,
    /// backing off from 999 ms: the gap of quinn-rs/quinn#1075 (open), which the 30 s timeout
    /// turns into a failure. The network notes say which cells that leaves out (`held_from_loss`).
    fn runs_lossy(&self, s: &Scenario) -> bool {
        s.mode == Mode::Full && (s.stack.transport().is_tcp() || s.baseline_auth)
    }

    /// The note for the full QUIC scenarios the grid would run under loss but for quinn's stall
    /// (`runs_lossy`), naming them; none where there are none.
    fn held_from_loss(&self) -> Option<Warning> {
        let lossy: Vec<f64> = self
            .opts
            .grid
            .losses_pct
            .iter()
            .copied()
            .filter(|&l| l > 0.0)
            .collect();
        let held: Vec<String> = self
            .scenarios
            .iter()
            .filter(|s| {
                s.mode == Mode::Full
                    && !self.runs_lossy(s)
                    && lossy.iter().any(|&l| self.auth_runs_at(s, l))
            })
            .map(|s| {
                format!(
                    "{} {} + {}",
                    s.stack.name(),
                    s.group,
                    s.auth.as_deref().unwrap_or(self.baseline)
                )
            })
            .collect();
        (!held.is_empty()).then(|| Warning::NotMeasured {
            what: format!("under loss over QUIC: {}", held.join(", ")),
            reason: "a lost server Initial, the one with the ServerHello, stalled some of quinn's \
                     handshakes with post-quantum chains until the 30 s timeout \
                     (quinn-rs/quinn#1075; in the quick grid at 10% loss on the Xeon 4769b0, \
                     2026-12-04, 2, 1 and 2 of the ML-DSA-44, -65 and -87 cells' handshakes), so \
                     over QUIC only the baseline chain runs under loss, for quic-go as for quinn \
                     (the two QUIC stacks' lossy cells the same; whether quic-go stalls so is not \
                     measured)"
                .into(),
        })
    }

    /// Scenario `j`'s cell at `at` in round `round` (of `rounds`): its model from the zero
    /// point's cell, its pace (`fixed`: the pace its first round had) and its round's count.
    fn plan(
        &mut self,
        j: usize,
        at: &At,
        zero_point: Option<&Point>,
        allowance: Duration,
        (round, rounds): (usize, usize),
        before: Option<(Pace, &[window::Done])>,
    ) -> Result<Plan<'a>> {
        let fixed = before.map(|b| b.0);
        let s = &self.scenarios[j];
        let (id, _) = self
            .chains
            .get(s.auth.as_deref().unwrap_or(self.baseline))?;
        if at.k == 0 && round == 0 {
            let shares = self
                .opts
                .shares
                .iter()
                .find(|(g, _)| *g == s.group)
                .map(|x| x.1);
            self.flights[j] = evidence(s, id, shares, self.servers[j].addr)?;
        }
        let round_trips =
            s.stack.round_trips() + extra_round_trips(&self.flights[j], self.mss, self.initcwnd);
        let all = crate::figures::network::handshakes_at(self.opts.per_point, at.k == 0, at.loss);
        let asked = round_share(all, round, rounds);
        let zero_model = self.zero_model(j, at, zero_point, round_trips);
        // A connection holds its client thread for its handshake and the echo's round trip.
        let hold_ns = zero_model
            .as_ref()
            .map_or(0.0, |m| m.expected_ns + at.conditions.rtt_ns);
        let pace = match (&zero_model, fixed) {
            (_, Some(p)) => p,
            (Some(m), None) if at.k > 0 => pace(
                m.zero_ns,
                hold_ns,
                self.opts.load_pct / 100.0,
                self.opts.parallel,
                all,
            ),
            _ => Pace::SERIAL,
        };
        // A cell of several rounds has at least MIN_PER_CELL in all.
        let least = MIN_PER_CELL.div_ceil(rounds.max(1));
        let interval = start_interval(pace.gap, hold_ns, pace.threads);
        let count = starts_within(asked, allowance, interval, least);
        // A full handshake of the answer table's needs what its difference's interval does
        // (share.rs), from its handshakes' interquartile range: the zero point's, or once a round
        // has run here the wider of that and its own; the rounds left make up what it lacks.
        let answer = s.mode == Mode::Full
            && crate::figures::answer::in_answer(
                s.stack.protocol(),
                &s.group,
                s.auth.as_deref(),
                self.baseline,
            );
        let had = before.map_or(0, |b| b.1.len());
        let need = match self.zero_cell(j, zero_point) {
            Some(z) if answer && at.k > 0 => {
                let spread = |v: &[u64]| {
                    let q = percentiles_ns(v, &[25.0, 75.0]);
                    q[1] - q[0]
                };
                let done: Vec<u64> =
                    before.map_or(Vec::new(), |b| b.1.iter().map(|t| t.ready_ns).collect());
                let wide = if done.len() >= least {
                    spread(&z.ready_ns).max(spread(&done))
                } else {
                    spread(&z.ready_ns)
                };
                let target = crate::figures::network::extra_target_ns(at.conditions.rtt_ns);
                let left = rounds.saturating_sub(round).max(1);
                Some(
                    share::needed(wide, target)
                        .saturating_sub(done.len())
                        .div_ceil(left),
                )
            }
            _ => None,
        };
        Ok(Plan {
            j,
            id,
            round_trips,
            count,
            least,
            zero_model,
            pace,
            want: share::Want {
                interval,
                even: count,
                need,
                least,
                // A cell of the answer may make up in a later round what the first, sized by the
                // zero point's spread, fell short of: up to what is left of the handshakes the
                // point asks of it in all, not only this round's share of them. On the Zen 5 VM
                // (38df4d) a round's share, 60, held Go's ML-DSA-65 chain at 5.6 ms to 60 of the
                // 87 its spread there asked in the last round.
                asked: if need.is_some() && round > 0 {
                    all.saturating_sub(had)
                } else {
                    asked
                },
            },
        })
    }

    /// Scenario `j`'s cell at the zero point (none: no zero point yet).
    fn zero_cell<'p>(&self, j: usize, zero_point: Option<&'p Point>) -> Option<&'p Cell> {
        let s = &self.scenarios[j];
        let p = zero_point?;
        let cells = match s.mode {
            Mode::Resumed => &p.resumed,
            Mode::Token | Mode::Retry => &p.validated,
            _ => &p.cells,
        };
        cells.iter().find(|c| {
            c.stack.name() == s.stack.name()
                && c.group == s.group
                && c.auth == s.auth
                && (s.mode == Mode::Resumed || c.mode == s.mode)
        })
    }

    /// Scenario `j`'s model at `at` from its cell at the zero point (none: no zero point yet, or
    /// the zero point itself, which is its own).
    fn zero_model(
        &self,
        j: usize,
        at: &At,
        zero_point: Option<&Point>,
        round_trips: f64,
    ) -> Option<Model> {
        let s = &self.scenarios[j];
        let z = self.zero_cell(j, zero_point)?;
        let path = path(s.stack, &self.flights[j], self.mss);
        let paced = paced(&self.flights[j]);
        Some(model_for(z, round_trips, path, paced, at.conditions))
    }

    /// One round of the cells `plans` at `at`, in one window (window.rs): what each cell's
    /// handshakes gave, in the order of `plans`, and what the kernel's queue dropped.
    fn window(
        &mut self,
        plans: &[Plan],
        at: &At,
        allowance: Duration,
        router: &mut Router,
    ) -> Result<(Vec<Piece>, u64)> {
        // Each lane's clients, and a resumed lane's first tickets, before the window: neither
        // lands in its counters or CPU. The tickets come over a clean link: under the point
        // before's conditions (5.6 ms at 20% loss, before the 78.7 ms row) the primings of the
        // resumed lanes' new threads, one after another, took most of a minute of the step on the
        // Xeon (model 207).
        let seed = 0x5eed ^ (at.k as u64) << 8;
        router.set([0.0, 0.0], 0.0, seed)?;
        for p in plans {
            self.clients_for(p)?;
        }
        if plans
            .iter()
            .any(|p| self.scenarios[p.j].mode == Mode::Token)
        {
            router.set([at.one_way, at.one_way], 0.0, seed)?;
            self.renew_tokens(plans)?;
        }
        // Set after the evidence connections: the counters are the window's handshakes'.
        router.set([at.one_way, at.one_way], at.loss / 100.0, seed)?;
        let scpu0: Vec<(f64, u64, u64)> = plans
            .iter()
            .map(|p| server_stats(&mut self.servers[p.j], 0))
            .collect::<Result<_>>()?;
        let (scenarios, servers) = (self.scenarios, &self.servers);
        let mut pools: BTreeMap<usize, &mut Vec<Box<dyn stack::Client>>> = self
            .pools
            .iter_mut()
            .enumerate()
            .filter(|(j, _)| plans.iter().any(|p| p.j == *j))
            .collect();
        let mut lanes: Vec<window::Lane> = plans
            .iter()
            .map(|p| {
                Ok(window::Lane {
                    s: &scenarios[p.j],
                    clients: pools
                        .remove(&p.j)
                        .ok_or_else(|| anyhow!("scenario {} twice in one window", p.j))?,
                    id: p.id,
                    addr: servers[p.j].addr,
                    gap: p.pace.gap,
                    n: p.count,
                    threads: p.pace.threads,
                    least: p.least,
                })
            })
            .collect::<Result<_>>()?;
        let sampled = window::sample(&mut lanes, allowance)?;
        drop(lanes);
        let stats = router.stats()?;
        // Every server is asked at once: under loss a QUIC server whose client's close was lost
        // counts that connection only at its idle timeout, so `stats N` waits its 5 s, and asked
        // in turn the QUIC cells of a lossy point waited 5 s each (the 5.6 ms, 5% loss point
        // spent 20 s so after its 7.4 s of handshakes on the Zen 5 VM, 38df4d).
        for ((p, sampled), (_, _, served0)) in plans.iter().zip(&sampled).zip(&scpu0) {
            let done = served0 + sampled.times.len() as u64;
            self.servers[p.j]
                .send(&format!("stats {done}"))
                .with_context(|| format!("{}: stats {done}", self.scenarios[p.j].name()))?;
        }
        let mut pieces = Vec::new();
        for ((p, sampled), (cpu0, resumed0, _)) in plans.iter().zip(sampled).zip(scpu0) {
            let (cpu1, resumed1, _) = stats_answer(&mut self.servers[p.j])
                .with_context(|| format!("{}: its server's stats", self.scenarios[p.j].name()))?;
            pieces.push(Piece {
                counters: stats.port(self.servers[p.j].addr.port()),
                sampled,
                server_cpu: cpu1 - cpu0,
                resumed: resumed1 - resumed0,
            });
        }
        Ok((pieces, stats.kernel_queue_dropped))
    }

    /// Every client a token lane of `plans` will use connects once more, all at once, through
    /// the link as it is (the point's delay): quic-go's server restores the RTT a token carries
    /// (netmodel::quic_go_pacing_ns), so each token a cell presents must come from a connection
    /// at its point's RTT, not from the clean link's priming or another point's round.
    fn renew_tokens(&self, plans: &[Plan]) -> Result<()> {
        let jobs: Vec<(&dyn stack::Client, SocketAddr, String)> = plans
            .iter()
            .filter(|p| self.scenarios[p.j].mode == Mode::Token)
            .flat_map(|p| {
                let (addr, name) = (self.servers[p.j].addr, self.scenarios[p.j].name());
                let want = p.pace.threads.max(1).min(p.count.max(1));
                self.pools[p.j]
                    .iter()
                    .take(want)
                    .map(move |c| (&**c, addr, name.clone()))
            })
            .collect();
        std::thread::scope(|scope| {
            let handles: Vec<_> = jobs
                .iter()
                .map(|&(c, addr, _)| scope.spawn(move || connect_once(c, addr)))
                .collect();
            for (h, (_, _, name)) in handles.into_iter().zip(&jobs) {
                h.join()
                    .map_err(|_| anyhow!("a token's thread panicked"))?
                    .with_context(|| format!("{name}: its token at this point's RTT"))?;
            }
            Ok(())
        })
    }

    /// Round `round` of point `at`'s cells (of `rounds`), each cell's handshakes added to `runs`
    /// (with its first round's plan), paced from `zero` (the zero point's rounds so far); what
    /// the kernel's queue dropped added to `drops` by point and cells.
    #[allow(clippy::too_many_arguments)]
    fn round(
        &mut self,
        at: &At,
        (round, rounds): (usize, usize),
        zero: Option<&Point>,
        runs: &mut BTreeMap<usize, (Plan<'a>, Piece)>,
        router: &mut Router,
        budget: &mut Budget,
        drops: &mut BTreeMap<(usize, String), u64>,
    ) -> Result<()> {
        // The zero point one handshake at a time, a window per cell: it is the model's compute
        // term, so no two handshakes may share the cores. Elsewhere every cell of the point in
        // one window, one after another (window.rs).
        let here = self.here(at.k, at.loss);
        let windows: Vec<Vec<usize>> = if at.k == 0 {
            here.iter().map(|&j| vec![j]).collect()
        } else {
            vec![here]
        };
        for w in windows {
            crate::interrupt::check()?;
            let began = Instant::now();
            let allowance = budget.allowance(self.opts, rounds);
            budget.cells_left = budget.cells_left.saturating_sub(w.len());
            let cells = w.len();
            let plans: Vec<Plan> = w
                .iter()
                .map(|&j| {
                    let before = runs
                        .get(&j)
                        .map(|(p, piece)| (p.pace, &piece.sampled.times[..]));
                    self.plan(j, at, zero, allowance, (round, rounds), before)
                })
                .collect::<Result<_>>()?;
            // Without loss the answer's cells get what their differences need (share.rs); under
            // loss the timers set the spread, which the zero point does not foretell.
            let counts = if at.k > 0 && at.loss == 0.0 && plans.len() > 1 {
                let wants: Vec<share::Want> = plans.iter().map(|p| p.want).collect();
                share::counts(&wants, allowance.saturating_mul(plans.len() as u32))
            } else {
                plans.iter().map(|p| p.count).collect()
            };
            let plans: Vec<Plan> = plans
                .into_iter()
                .zip(counts)
                .map(|(p, n)| p.with_count(n))
                .collect();
            let (pieces, dropped) = self.window(&plans, at, allowance, router)?;
            if dropped > 0 {
                let cells: Vec<String> = w.iter().map(|&j| self.scenarios[j].name()).collect();
                *drops.entry((at.k, cells.join(", "))).or_default() += dropped;
            }
            for (p, piece) in plans.into_iter().zip(pieces) {
                match runs.get_mut(&p.j) {
                    Some((_, kept)) => kept.merge(piece),
                    None => {
                        runs.insert(p.j, (p, piece));
                    }
                }
            }
            let given = allowance.saturating_mul(u32::try_from(cells).unwrap_or(u32::MAX));
            budget.ran(cells, given, began.elapsed());
        }
        Ok(())
    }

    /// The cells of point `at` from every round's handshakes (`runs`: each scenario's plan of
    /// its first round, and its rounds' pieces together), each modelled on its cell of
    /// `zero_point` (none: the zero point itself, its own model); with `notes`, each cell whose
    /// endpoints were busy noted there.
    fn cells(
        &self,
        at: &At,
        rounds: usize,
        runs: &BTreeMap<usize, (Plan<'a>, Piece)>,
        zero_point: Option<&Point>,
        mut notes: Option<&mut Vec<Warning>>,
    ) -> Vec<(Mode, Cell)> {
        let mut cells = Vec::new();
        for (&j, (p, piece)) in runs {
            let mut p = p.clone();
            p.zero_model = self.zero_model(j, at, zero_point, p.round_trips);
            let mut c = self.cell(
                p,
                at,
                runs.len(),
                &piece.sampled,
                &piece.counters,
                piece.server_cpu,
            );
            if let Some(pace) = c.pace.as_mut() {
                pace.rounds = (rounds > 1).then_some(rounds);
            }
            let mode = self.scenarios[j].mode;
            c.resumptions = (mode == Mode::Resumed).then_some(piece.resumed);
            if let Some(notes) = notes.as_deref_mut() {
                if at.k > 0 && (c.client_busy_pct > 80.0 || c.server_busy_pct > 80.0) {
                    notes.push(Warning::BusyEndpoint {
                        rtt_ms: at.rtt_ms,
                        loss_pct: at.loss,
                        cell: self.scenarios[j].name(),
                        client_pct: c.client_busy_pct,
                        server_pct: c.server_busy_pct,
                    });
                }
            }
            cells.push((mode, c));
        }
        cells
    }

    /// A plan's clients, one per thread, made now (untimed); a resumed scenario's new clients
    /// each make one connection first, in the client namespace through the link as it is, so that
    /// each has a ticket when the window opens (a token scenario's: `renew_tokens`).
    fn clients_for(&mut self, p: &Plan) -> Result<()> {
        let s = &self.scenarios[p.j];
        let addr = self.servers[p.j].addr;
        let pool = &mut self.pools[p.j];
        let want = p.pace.threads.max(1).min(p.count.max(1));
        while pool.len() < want {
            let c = s.stack.client(s.config(p.id))?;
            if s.mode == Mode::Resumed {
                prime(&*c, addr).with_context(|| format!("{}: its first ticket", s.name()))?;
            }
            pool.push(c);
        }
        Ok(())
    }

    /// A cell from what its handshakes gave; at the zero point its own model.
    fn cell(
        &self,
        p: Plan,
        at: &At,
        window_cells: usize,
        sampled: &window::Sampled,
        counters: &router::Counters,
        server_cpu: f64,
    ) -> Cell {
        let s = &self.scenarios[p.j];
        let model = p.zero_model.unwrap_or_else(|| {
            // The zero point is its own compute term.
            let n = (sampled.times.len() + sampled.failed).max(1) as f64;
            let ready: Vec<u64> = sampled.times.iter().map(|t| t.ready_ns).collect();
            let per = |v: [u64; 2]| [v[0] as f64 / n, v[1] as f64 / n];
            crate::figures::network::model(
                ModelInputs {
                    zero_ns: percentiles_ns(&ready, &[50.0])[0],
                    round_trips: p.round_trips,
                    data_packets: per(counters.data_packets),
                    bytes: per(counters.bytes),
                    path: path(s.stack, &self.flights[p.j], self.mss),
                    stall: None,
                    paced: paced(&self.flights[p.j]),
                },
                Conditions {
                    loss_pct: 0.0,
                    ..at.conditions
                },
            )
        });
        let mut c = cell(s, sampled, counters, server_cpu, p.pace, model);
        c.server_flight_bytes = self.flights[p.j].server;
        c.quic = self.flights[p.j].quic.clone();
        if at.k == 0 {
            c.evidence = Some(self.flights[p.j].evidence.clone());
        }
        if let Some(pace) = c.pace.as_mut() {
            pace.window_cells = (at.k > 0).then_some(window_cells);
        }
        c
    }
}

/// What a cell's handshakes gave in a window, with the emulator's and its server's counts; a
/// cell of several rounds, each round's together (`merge`).
struct Piece {
    sampled: window::Sampled,
    counters: router::Counters,
    server_cpu: f64,
    resumed: u64,
}

impl Piece {
    fn merge(&mut self, o: Piece) {
        self.sampled.merge(o.sampled);
        self.counters.merge(o.counters);
        self.server_cpu += o.server_cpu;
        self.resumed += o.resumed;
    }
}

/// What a cell of a window asks for, worked out before the window opens.
#[derive(Clone)]
struct Plan<'a> {
    /// The scenario's index.
    j: usize,
    id: &'a Identity,
    round_trips: f64,
    count: usize,
    /// What the window starts before its budget may stop a back-to-back cell (`least` of
    /// `starts_within`).
    least: usize,
    zero_model: Option<Model>,
    /// Its pace; once its count is set (`with_count`), its threads no more than its count.
    pace: Pace,
    /// What the window's sharing needs of it (share.rs).
    want: share::Want,
}

impl Plan<'_> {
    /// The plan with `count` handshakes, its threads no more than them.
    fn with_count(self, count: usize) -> Self {
        Plan {
            count,
            pace: Pace {
                threads: self.pace.threads.min(count.max(1)),
                ..self.pace
            },
            ..self
        }
    }
}

/// A cell's figures from its raw data (the same functions `check` uses).
fn cell(
    s: &Scenario,
    sampled: &window::Sampled,
    c: &router::Counters,
    server_cpu: f64,
    pace: Pace,
    model: Model,
) -> Cell {
    let (times, failed) = (&sampled.times, sampled.failed);
    let cpu = CellCpu {
        wall_ns: sampled.wall_ns,
        client_ns: sampled.cpu_ns,
        server_ns: server_cpu,
    };
    let ready: Vec<u64> = times.iter().map(|t| t.ready_ns).collect();
    let echo: Vec<u64> = times.iter().map(|t| t.echo_ns).collect();
    let wire = per_handshake(times, &c.held, |spans, a, b| {
        Some(crate::figures::network::wire_within(spans, a, b))
    });
    // TLS 1.3 over TCP only: its client sends no data within the server's flight, where over
    // QUIC every ACK is a data packet and SSH's first run is the server's banner.
    let server_flight_ns = if s.stack.protocol() == "tls13" && s.stack.transport().is_tcp() {
        let spans = per_handshake(
            times,
            &c.flights,
            crate::figures::network::first_flight_within,
        );
        if spans.is_empty() {
            if let Some(why) = no_flight(times, &c.flights) {
                eprintln!("network: {}: {why}", s.name());
            }
        }
        spans
    } else {
        Vec::new()
    };
    let split = crate::figures::network::split(&ready, &wire);
    let n = (ready.len() + failed).max(1) as f64;
    let per = |v: [u64; 2]| [v[0] as f64 / n, v[1] as f64 / n];
    Cell {
        protocol: s.stack.protocol().into(),
        mode: if s.mode == Mode::Resumed {
            Mode::Full
        } else {
            s.mode
        },
        resumptions: None,
        stack: RealStack::new(s.stack.name()),
        group: s.group.clone(),
        auth: s.auth.clone(),
        server_flight_bytes: None,
        transport: s.stack.transport(),
        evidence: None,
        quic: None,
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
        client_busy_pct: busy_pct(cpu.client_ns, cpu.wall_ns),
        server_busy_pct: busy_pct(cpu.server_ns, cpu.wall_ns),
        cpu: Some(cpu),
        pace: Some(CellPace {
            gap_ns: pace.gap.as_nanos() as f64,
            threads: pace.threads,
            lag_mean_ns: Some(sampled.lag_mean_ns),
            lag_max_ns: Some(sampled.lag_max_ns),
            window_cells: None,
            rounds: None,
            zero_ns: pace.zero_ns,
        }),
        release: Some(Release {
            released: c.released,
            late_sum_ns: c.late_sum_ns,
            late_max_ns: c.late_max_ns,
            late_over_1ms: c.late_over_1ms,
        }),
        split,
        wire_ns: wire,
        server_flight_ns,
        model,
    }
}

/// Each handshake's figure from the emulator's record of its connection (spans by the client's
/// port) within its own clock, [started, started + ready): its wire time (`wire_within`) or its
/// server's flight (`first_flight_within`). None for the cell where a handshake's connection is not
/// in the record (a client that did not say its port) or gives none, rather than a figure of 0.
fn per_handshake(
    times: &[window::Done],
    record: &BTreeMap<u16, Vec<[u64; 2]>>,
    figure: impl Fn(&[[u64; 2]], u64, u64) -> Option<u64>,
) -> Vec<u64> {
    times
        .iter()
        .map(|t| {
            let spans = record.get(&t.port).filter(|_| t.port != 0)?;
            figure(spans, t.started_ns, t.started_ns + t.ready_ns)
        })
        .collect::<Option<Vec<_>>>()
        .unwrap_or_default()
}

/// Why a cell has no server flight spans, where one of its handshakes has none: which handshake,
/// its clock, and the runs of server data the emulator saw on its port nearest its start (check
/// refuses such a cell among others that have them; this line is what tells why).
fn no_flight(times: &[window::Done], flights: &BTreeMap<u16, Vec<[u64; 2]>>) -> Option<String> {
    let runs_of = |t: &window::Done| flights.get(&t.port).map(Vec::as_slice).unwrap_or(&[]);
    let (k, t) = times.iter().enumerate().find(|(_, t)| {
        let end = t.started_ns + t.ready_ns;
        t.port == 0
            || crate::figures::network::first_flight_within(runs_of(t), t.started_ns, end).is_none()
    })?;
    let at = format!("handshake {k} of {}", times.len());
    if t.port == 0 {
        return Some(format!(
            "{at}: its client gave no port to find its packets by"
        ));
    }
    let mut from_start: Vec<i128> = runs_of(t)
        .iter()
        .map(|r| i128::from(r[0]) - i128::from(t.started_ns))
        .collect();
    from_start.sort_by_key(|d| d.abs());
    let nearest: Vec<String> = from_start
        .iter()
        .take(4)
        .map(|d| format!("{d:+} ns"))
        .collect();
    Some(format!(
        "{at} (port {}, {} ns from its start to ready) has no run of server data in its clock; \
         of the port's {} runs, the nearest start at [{}] from it",
        t.port,
        t.ready_ns,
        from_start.len(),
        nearest.join(", ")
    ))
}

pub(crate) fn run(opts: &Options, progress: &mut dyn FnMut(&str)) -> Result<Network> {
    if let Some(why) = lab::unavailable() {
        bail!(Unavailable(why));
    }
    let start = Instant::now();
    let date_utc = crate::host::utc_now();
    tls::set_io_timeout(TIMEOUT);
    let lab = Lab::new()?;
    lab.rate(opts.rate_mbit)?;
    let mut notes = lab.notes.clone();
    let wake_ns = wake_probe(&mut notes);
    let congestion_control = lab.congestion_control.clone();
    let (mut router, probe) = start_emulator()?;
    let (mut base_rtt_ns, mut offset_ns) = (0.0, 0.0);

    let scenarios = scenarios(opts, &mut notes);
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
        let mut bench = Bench {
            opts,
            scenarios: &scenarios,
            chains: &chains,
            baseline: &baseline,
            mss,
            initcwnd,
            servers: scenarios
                .iter()
                .map(|s| start_server(s, &chains, &baseline))
                .collect::<Result<_>>()?,
            pools: scenarios.iter().map(|_| Vec::new()).collect(),
            flights: vec![Flights::default(); scenarios.len()],
        };
        notes.extend(bench.held_from_loss());
        let grid = points_of(&opts.grid);
        let order = schedule(&grid, ROUNDS);
        // The cells' rounds still to run, for a budget's even shares.
        let mut budget = Budget {
            start: crate::budget::process_start(),
            cells_left: order
                .iter()
                .map(|&(k, _)| bench.here(k, grid[k].1).len())
                .sum(),
            cells_run: 0,
            over: Duration::ZERO,
            points_left: grid.len(),
            points_set_up: 0,
            setting_up: Duration::ZERO,
        };
        let mut ats: Vec<Option<(At, Link)>> = grid.iter().map(|_| None).collect();
        // Each point's cells so far: their first round's plan, and every round's handshakes.
        let mut runs: Vec<BTreeMap<usize, (Plan, Piece)>> =
            grid.iter().map(|_| BTreeMap::new()).collect();
        let mut drops: BTreeMap<(usize, String), u64> = BTreeMap::new();
        for &(k, round) in &order {
            crate::interrupt::check()?;
            let (rtt_ms, loss) = grid[k];
            let rounds = rounds_at(loss);
            let of = if rounds > 1 {
                format!(", round {}/{rounds}", round + 1)
            } else {
                String::new()
            };
            let n = grid.len();
            progress(&format!(
                "network: point {}/{n}: RTT {rtt_ms} ms, loss {loss}%{of}",
                k + 1
            ));
            if ats[k].is_none() {
                let point = (k, rtt_ms, loss);
                let base = (&mut base_rtt_ns, &mut offset_ns);
                let began = Instant::now();
                let at = at_point(&mut router, probe.addr, point, opts, base, &mut notes)?;
                budget.set_up(began.elapsed());
                ats[k] = Some(at);
            }
            let Some((at, _)) = &ats[k] else {
                unreachable!("set above")
            };
            // The zero point's rounds so far pace the cells after it (their model is made
            // again from all of its rounds at the end).
            let zero = (k > 0).then(|| {
                let (z, link) = ats[0].as_ref().expect("the zero point runs first");
                let cells = bench.cells(z, 1, &runs[0], None, None);
                point(0.0, 0.0, link.clone(), cells)
            });
            let (round, runs) = ((round, rounds), &mut runs[k]);
            bench.round(
                at,
                round,
                zero.as_ref(),
                runs,
                &mut router,
                &mut budget,
                &mut drops,
            )?;
        }
        notes.extend(queue_drops(&grid, drops));
        // Every point's cells from all its rounds, each modelled on the whole zero point.
        let mut points: Vec<Point> = Vec::new();
        for (k, &(rtt_ms, loss)) in grid.iter().enumerate() {
            let (at, link) = ats[k].as_ref().expect("every point ran");
            let cells = bench.cells(
                at,
                rounds_at(loss),
                &runs[k],
                points.first(),
                Some(&mut notes),
            );
            points.push(point(rtt_ms * 1e6, loss, link.clone(), cells));
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
        load_pct: Some(opts.load_pct),
        per_point: opts.per_point,
        cell_budget_s: if opts.cell_budget == Duration::MAX { 0.0 } else { opts.cell_budget.as_secs_f64() },
        percentiles: PERCENTILES.to_vec(),
        wake_ns,
        quic_loss_model: crate::netmodel::QUIC_LOSS_MODEL,
        points,
        notes,
    })
}

/// The datagrams of the scenario's first flight that quic-go's pacer spaces, if it does.
fn paced(f: &Flights) -> Option<u64> {
    f.quic
        .as_ref()
        .and_then(|q| crate::netmodel::quic_paced(q, crate::netmodel::QUIC_LOSS_MODEL))
}

fn model_for(
    z: &Cell,
    round_trips: f64,
    path: Vec<crate::netmodel::Flight>,
    paced: Option<u64>,
    at: Conditions,
) -> Model {
    let n = crate::figures::network::handshakes(z);
    crate::figures::network::model(
        ModelInputs {
            zero_ns: percentiles_ns(&z.ready_ns, &[50.0])[0],
            round_trips,
            data_packets: [z.data_packets[0] as f64 / n, z.data_packets[1] as f64 / n],
            bytes: z.bytes_per_handshake,
            path,
            // The run's flows are not at hand here: figures::network::set_stalls, once they are.
            stall: None,
            paced,
        },
        at,
    )
}

/// The scenario's first connection through the zero point, with its evidence checked against the
/// scenario (as `pqprof handshake` does): the server's first flight, bytes.
fn evidence(
    s: &Scenario,
    id: &Identity,
    shares: Option<(usize, usize)>,
    addr: SocketAddr,
) -> Result<Flights> {
    let c = s.stack.client(s.config(id))?;
    let one = std::thread::scope(|scope| {
        scope
            .spawn(|| -> Result<stack::One> {
                lab::enter(lab::CLIENT)?;
                if s.mode == Mode::Resumed || s.mode == Mode::Token {
                    // A full handshake brings the ticket the evidence connection resumes with, or
                    // the token it presents.
                    c.connect(addr, false)?;
                }
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
        shares,
        auth,
        mode: s.mode,
        transport: s.stack.transport(),
    };
    let wrong = crate::figures::evidence::contradictions(&d, &ev);
    anyhow::ensure!(wrong.is_empty(), "{}: {}", s.name(), wrong.join("; "));
    Ok(Flights {
        server: ev.server_flight_bytes,
        client_hello: ev.client_hello_bytes,
        quic: ev.quic.clone(),
        evidence: CellEvidence {
            declared_shares: shares,
            auth: auth.cloned(),
            seen: ev,
        },
    })
}

/// One connection of `c` to `addr` from a thread in the client namespace, unmeasured: a resumed
/// client's first ticket (Go's peer process starts in that namespace, and keeps it).
fn prime(c: &dyn stack::Client, addr: SocketAddr) -> Result<()> {
    std::thread::scope(|scope| {
        scope
            .spawn(|| connect_once(c, addr))
            .join()
            .map_err(|_| anyhow!("a priming thread panicked"))?
    })
}

/// One unmeasured connection of `c` from the calling thread, moved into the client namespace
/// (a priming's, or a token's renewal).
fn connect_once(c: &dyn stack::Client, addr: SocketAddr) -> Result<()> {
    lab::enter(lab::CLIENT)?;
    c.ready(addr)?;
    c.connect(addr, false).map(drop)
}

/// A scenario's first flights, bytes, from its evidence connection (TLS; SSH has neither).
#[derive(Debug, Clone, Default)]
struct Flights {
    server: Option<u64>,
    client_hello: Option<u64>,
    /// QUIC: the Initial flight and the server's first, as datagrams.
    quic: Option<crate::results::QuicEvidence>,
    /// All it showed, beside what it declared: the zero point's cells keep it for `check`.
    evidence: CellEvidence,
}

/// The handshake's critical path for the loss model: SYN, SYN-ACK and, for each exchange after
/// the connect, a flight each way; TLS's first exchange in the segments its ClientHello and its
/// server's flight take at the MSS, every other flight one segment.
fn path(stack: &dyn TlsStack, f: &Flights, mss: Option<u32>) -> Vec<crate::netmodel::Flight> {
    // QUIC: its Initial flight and the server's rounds, in datagrams.
    if let Some(q) = &f.quic {
        return crate::netmodel::quic_critical_path(q, crate::netmodel::QUIC_LOSS_MODEL);
    }
    let segments = |b: Option<u64>| match (b, mss) {
        (Some(b), Some(m)) if m > 0 => b.div_ceil(u64::from(m)) as u32,
        _ => 1,
    };
    let exchanges = (stack.round_trips() - 1.0).max(0.0).round() as u32;
    crate::netmodel::critical_path(exchanges, segments(f.client_hello), segments(f.server))
}

/// Round trips beyond the stack's own that the server's first flight adds: over TCP one for each
/// initial window it overflows (slow start, RFC 5681); over QUIC those the anti-amplification
/// budget and then slow start add (RFC 9000 section 8.1; `netmodel::quic_round_trips`).
fn extra_round_trips(f: &Flights, mss: Option<u32>, initcwnd: u32) -> f64 {
    if let Some(q) = &f.quic {
        return f64::from(crate::netmodel::quic_extra_round_trips(q));
    }
    match (f.server, mss) {
        (Some(f), Some(m)) => crate::netmodel::slow_start_round_trips(f, m, initcwnd) as f64,
        _ => 0.0,
    }
}

/// This machine cannot run the grid: a one-line reason, not a failure of the run.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct Unavailable(pub String);

#[cfg(test)]
mod tests {
    #[test]
    fn a_handshake_without_a_flight_in_its_clock_is_named_with_the_ports_runs() {
        let done = |port, started_ns| super::window::Done {
            ready_ns: 100,
            echo_ns: 150,
            port,
            started_ns,
        };
        let runs = std::collections::BTreeMap::from([
            (7, vec![[1_020, 1_030]]),
            (8, vec![[1_950, 1_960]]),
        ]);
        // Port 7's run starts within [1000, 1100); port 8's starts 50 ns before its clock.
        assert_eq!(super::no_flight(&[done(7, 1_000)], &runs), None);
        let why = super::no_flight(&[done(7, 1_000), done(8, 2_000)], &runs).unwrap();
        assert!(why.starts_with("handshake 1 of 2 (port 8, 100 ns"), "{why}");
        assert!(
            why.ends_with("of the port's 1 runs, the nearest start at [-50 ns] from it"),
            "{why}"
        );
        let no_port = super::no_flight(&[done(0, 1_000)], &runs).unwrap();
        assert!(
            no_port.ends_with("its client gave no port to find its packets by"),
            "{no_port}"
        );
    }

    #[test]
    fn the_zero_point_runs_first_then_each_rtt_with_its_losses() {
        let g = super::Grid::named("default").unwrap();
        let p = super::points_of(&g);
        assert_eq!(p.len(), 9);
        assert_eq!(&p[..3], &[(0.0, 0.0), (5.6, 0.0), (5.6, 1.0)]);
        assert_eq!(p[5], (78.7, 0.0));
        assert_eq!(p[8], (78.7, 20.0));
    }

    #[test]
    fn the_first_round_then_the_lossy_points_then_the_other_rounds_without_loss() {
        let g = super::Grid::named("default").unwrap();
        let order = super::schedule(&super::points_of(&g), 3);
        // The zero point, 5.6 and 78.7 ms without loss (points 0, 1 and 5); the lossy points
        // (2, 3, 4 at 5.6 ms, 6, 7, 8 at 78.7); the two other rounds without loss.
        assert_eq!(&order[..3], &[(0, 0), (1, 0), (5, 0)]);
        let lossy = [(2, 0), (3, 0), (4, 0), (6, 0), (7, 0), (8, 0)];
        assert_eq!(&order[3..9], &lossy);
        assert_eq!(
            &order[9..],
            &[(0, 1), (1, 1), (5, 1), (0, 2), (1, 2), (5, 2)]
        );
        // Every point once in one round; each of those without loss three times in three.
        let once: Vec<usize> = super::schedule(&super::points_of(&g), 1)
            .iter()
            .map(|&(k, _)| k)
            .collect();
        assert_eq!(once, vec![0, 1, 5, 2, 3, 4, 6, 7, 8]);
        for k in 0..9 {
            let n = order.iter().filter(|&&(p, _)| p == k).count();
            assert_eq!(n, if [0, 1, 5].contains(&k) { 3 } else { 1 }, "point {k}");
        }
        assert_eq!(
            (super::rounds_at(0.0), super::rounds_at(1.0)),
            (super::ROUNDS, 1)
        );
    }

    #[test]
    fn a_cells_handshakes_are_shared_out_over_its_rounds() {
        use super::round_share;
        assert_eq!(
            (0..3).map(|r| round_share(180, r, 3)).collect::<Vec<_>>(),
            [60, 60, 60]
        );
        assert_eq!(
            (0..3).map(|r| round_share(10, r, 3)).collect::<Vec<_>>(),
            [3, 3, 4]
        );
        assert_eq!(round_share(30, 0, 1), 30);
        assert_eq!(round_share(7, 0, 0), 7);
    }

    #[test]
    fn a_lane_whose_threads_are_all_busy_starts_as_they_free() {
        use super::{start_interval, starts_within};
        use std::time::Duration;
        let ms = Duration::from_millis;
        // 32 threads, 160 ms each: one free every 5 ms, later than the 2 ms gap.
        assert_eq!(start_interval(ms(2), 160e6, 32), ms(5));
        // 6 threads, 10 ms each: one free every 1.67 ms, so the gap rules.
        assert_eq!(start_interval(ms(2), 10e6, 6), ms(2));
        // Back to back stays back to back (the clock stops those cells).
        assert_eq!(start_interval(Duration::ZERO, 160e6, 1), Duration::ZERO);
        // So a 78.7 ms cell's count is by the 5 ms: 1 s holds 201 starts, not 501.
        assert_eq!(
            starts_within(
                1000,
                ms(1000),
                start_interval(ms(2), 160e6, 32),
                super::MIN_PER_CELL
            ),
            201
        );
    }

    #[test]
    fn with_a_budget_a_cell_gets_at_most_an_even_share_of_what_is_left() {
        use std::time::Duration;
        let mut opts = super::Options {
            grid: super::Grid::named("quick").unwrap(),
            per_point: 30,
            cell_budget: Duration::from_secs(2),
            budget: None,
            parallel: 32,
            load_pct: 25.0,
            rate_mbit: None,
            all_groups: false,
            all_auths: false,
            stacks: Vec::new(),
            auths: crate::auth::Auths::baseline_only(),
            shares: Vec::new(),
        };
        let at = |o: &super::Options, elapsed: u64, left: usize| {
            super::cell_allowance(o, Duration::from_secs(elapsed), left, 1)
        };
        assert_eq!(at(&opts, 100, 3), Duration::from_secs(2));
        opts.budget = Some(Duration::from_secs(174));
        // 150 s spent, 24 left for 16 cells: 1.5 s each; 100 s left for 10: the cell's own 2 s.
        assert_eq!(at(&opts, 150, 16), Duration::from_millis(1500));
        assert_eq!(at(&opts, 74, 10), Duration::from_secs(2));
        // Past the budget: no time, so each cell makes its floor of handshakes and stops.
        assert_eq!(at(&opts, 200, 4), Duration::ZERO);
        // In three rounds a round of a cell has a third of its 2 s, and within the step's
        // budget a share per cell's round (`cells_left` counts rounds).
        let third = |o: &super::Options, elapsed: u64, left: usize| {
            super::cell_allowance(o, Duration::from_secs(elapsed), left, 3)
        };
        assert_eq!(third(&opts, 74, 10), Duration::from_secs(2) / 3);
        assert_eq!(third(&opts, 150, 48), Duration::from_millis(500));
        // 20 cells' rounds ran 10 s past what they were given, half a second each: the 16 still
        // to run are expected to take 8 s more, which their shares leave out. Before any ran,
        // nothing is expected.
        let s = Duration::from_secs;
        assert_eq!(super::expected(s(10), 20, 16), s(8));
        assert_eq!(super::expected(s(10), 0, 16), Duration::ZERO);
        assert_eq!(super::expected(s(10), 20, 0), Duration::ZERO);
        // 150 s spent and 8 s expected beyond the shares: 16 s left for 16 cells, 1 s each.
        assert_eq!(at(&opts, 158, 16), s(1));
        // And the counts follow: starts 20 ms apart within 1.5 s are 76 (at 0, 20, ..., 1500
        // ms), in no time the floor of 10; a cell asked for fewer than the floor keeps its count,
        // and one back to back its count (the clock stops it).
        let ms = Duration::from_millis;
        assert_eq!(
            super::starts_within(90, ms(1500), ms(20), super::MIN_PER_CELL),
            76
        );
        assert_eq!(
            super::starts_within(90, ms(1490), ms(20), super::MIN_PER_CELL),
            75
        );
        assert_eq!(
            super::starts_within(60, ms(1500), ms(20), super::MIN_PER_CELL),
            60
        );
        assert_eq!(
            super::starts_within(90, Duration::ZERO, ms(20), super::MIN_PER_CELL),
            super::MIN_PER_CELL
        );
        assert_eq!(
            super::starts_within(6, Duration::ZERO, ms(20), super::MIN_PER_CELL),
            6
        );
        // A round's floor is its share of the cell's: 4 a round, 12 in three.
        assert_eq!(super::starts_within(60, Duration::ZERO, ms(20), 4), 4);
        assert_eq!(
            super::starts_within(90, Duration::ZERO, Duration::ZERO, super::MIN_PER_CELL),
            90
        );
        // No budget at all (--cell-seconds 0): every handshake asked for.
        assert_eq!(
            super::starts_within(90, Duration::MAX, ms(4), super::MIN_PER_CELL),
            90
        );
    }

    #[test]
    fn a_cell_starts_a_handshake_every_zero_over_load_with_threads_for_those_in_flight() {
        use super::{pace, Pace};
        use std::time::Duration;
        const MS: f64 = 1e6;
        // 1 ms of compute at 25% load: a start every 4 ms; a 12 ms handshake keeps 3 in
        // flight, and one thread more.
        assert_eq!(
            pace(1.0 * MS, 12.0 * MS, 0.25, 64, 100),
            Pace {
                gap: Duration::from_millis(4),
                threads: 4,
                zero_ns: Some(1.0 * MS),
            }
        );
        // At 78.7 ms: 158 ms / 4 ms = 39.5, so 40 in flight, 41 threads; capped at 32.
        assert_eq!(pace(1.0 * MS, 158.0 * MS, 0.25, 64, 100).threads, 41);
        assert_eq!(pace(1.0 * MS, 158.0 * MS, 0.25, 32, 100).threads, 32);
        // Never more threads than handshakes, never none.
        assert_eq!(pace(1.0 * MS, 158.0 * MS, 0.25, 64, 10).threads, 10);
        assert_eq!(pace(1.0 * MS, 12.0 * MS, 0.25, 0, 10).threads, 1);
        // A load of a whole core: starts a zero-point apart.
        assert_eq!(
            pace(2.0 * MS, 12.0 * MS, 1.0, 64, 100).gap,
            Duration::from_millis(2)
        );
        // No zero point: back to back, one thread.
        assert_eq!(pace(0.0, 12.0 * MS, 0.25, 64, 100), Pace::SERIAL);
    }
}
