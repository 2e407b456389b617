//! `pqprof capacity`: what a TLS server sustains with each key-exchange group, for every stack with
//! `Features::capacity` (rustls, OpenSSL, Go). Three measurements, each kept raw in the results
//! file:
//! 1. in memory: handshakes per core with both sides on one pinned core (`in_memory`, over each
//!    stack's `Pair`: src/stack/rustls.rs, src/stack/openssl.rs in this thread; src/stack/go.rs
//!    in the Go peer's process, started from this thread and so on its core);
//! 2. over sockets: a server pinned to one core (`TlsStack::start_capacity_server`: server.rs in
//!    its own process, or the Go peer's) under stepped concurrency from a load generator on
//!    another core;
//! 3. memory: K established idle connections held by the server, stepped up to 10,000.
//!
//! A stack that cannot run here (the Go peer not built) is left out with a note, and so is each
//! group a stack does not negotiate.

mod h2load;
pub mod server;

use crate::auth::Step;
use crate::results::{
    mode_suffix, Against, Capacity, InMemory, LoadStep, Memory, MemoryStep, Mode, RealStack,
    Results, Sockets, StopReason, Warning,
};
use crate::stack::child::{CapacityStart, Server};
use crate::stack::{self, Availability, Config, Identity, Pair, Sample, Teardown, TlsStack};
use crate::stats;
use anyhow::{anyhow, bail, Context, Result};
use std::net::SocketAddr;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[derive(Clone)]
pub(crate) struct Options {
    pub(crate) stacks: Vec<&'static dyn TlsStack>,
    /// The servers of servers/ the step measures (`h2load`): TLS ones under h2load, and each
    /// one's memory with connections held, beside the library stacks.
    pub(crate) servers: Vec<&'static dyn TlsStack>,
    /// In memory: the 95% half-width of each rate to reach, percent, with at most this much more
    /// time per cell (0: exactly `rounds`).
    pub(crate) precision_pct: f64,
    pub(crate) precision_extra_ms: u64,
    pub(crate) groups: Vec<String>,
    /// In memory: timed handshakes per stack and group, spread over `rounds` interleaved rounds.
    pub(crate) in_memory_ms: u64,
    pub(crate) rounds: usize,
    /// Sockets: concurrency steps and how long each runs.
    pub(crate) concurrency: Vec<usize>,
    pub(crate) step_ms: u64,
    /// Groups the socket and memory measurements take (the in-memory one takes every group).
    pub(crate) socket_groups: Vec<String>,
    /// Memory: connections held at each step.
    pub(crate) connections: Vec<usize>,
    /// The authentications (suites/auth.toml): the in-memory measurement takes every group with
    /// every authentication its pairings name for this step; sockets take the baseline only.
    pub(crate) auths: crate::auth::Auths,
    /// Memory of the other authentications' held connections: fewer steps (the handshake's peak,
    /// what a chain adds while it is sent, is the figure there).
    pub(crate) auth_connections: Vec<usize>,
    /// The whole step's time to measure in, from the process's start (`budget::from_secs`: its
    /// budget less its closing; `budget_shares`); none: the fixed design above.
    pub(crate) budget: Option<Duration>,
}

/// The shares of a budgeted step's time, what the servers under h2load leave of it: in memory,
/// over sockets, memory per connection, near the proportions the fixed design's parts take.
const BUDGET_SHARES: [f64; 3] = [0.3, 0.3, 0.4];

/// The factor the in-memory and socket measurements' timed spans are shrunk by to fit their
/// shares of `budget_s`: `cells` in-memory cells of `per_cell_ms` each (rounds and precision
/// rounds), `rows` socket rows of `steps` load steps of `step_ms` each (a step costs about 10% more
/// than its span: the server's start and the connections' teardown). 1 where they fit; at least a
/// tenth.
pub(crate) fn budget_scale(
    budget_s: f64,
    inmem: (usize, f64),
    sockets: (usize, usize, f64),
) -> (f64, f64) {
    let fit = |share: f64, nominal_s: f64| {
        if nominal_s <= 0.0 {
            1.0
        } else {
            (budget_s * share / nominal_s).clamp(0.1, 1.0)
        }
    };
    let (cells, per_cell_ms) = inmem;
    let (rows, steps, step_ms) = sockets;
    (
        fit(BUDGET_SHARES[0], cells as f64 * per_cell_ms / 1e3),
        fit(
            BUDGET_SHARES[1],
            rows as f64 * steps as f64 * step_ms / 1e3 * 1.1,
        ),
    )
}

impl Options {
    pub(crate) fn default_for(quick: bool, suites: &std::path::Path) -> Result<Options> {
        let groups = ["X25519", "X25519MLKEM768", "SecP256r1MLKEM768", "MLKEM768"]
            .map(String::from)
            .to_vec();
        let kex = crate::suite::load(suites, &crate::backend::names())?;
        let auths = crate::handshake::tls_auths(suites, &kex)?;
        Ok(Options {
            stacks: stack::all()
                .iter()
                .copied()
                .filter(|s| s.features().capacity || s.features().in_memory)
                .collect(),
            servers: stack::all()
                .iter()
                .copied()
                .filter(|s| s.features().under_load)
                .collect(),
            groups,
            in_memory_ms: if quick { 300 } else { 2000 },
            precision_pct: 1.0,
            precision_extra_ms: if quick { 0 } else { 500 },
            rounds: if quick { 3 } else { 10 },
            concurrency: if quick {
                vec![1, 16]
            } else {
                vec![1, 4, 16, 64]
            },
            step_ms: if quick { 500 } else { 2000 },
            budget: None,
            socket_groups: ["X25519", "X25519MLKEM768"].map(String::from).to_vec(),
            connections: if quick {
                vec![100, 1000]
            } else {
                vec![100, 1000, 10_000]
            },
            auths,
            auth_connections: if quick { vec![100] } else { vec![1000] },
        })
    }
}

/// The classical group each group is set against.
const BASELINE: &str = "X25519";

type Files = stack::identity::Files;

/// Raises the soft open-file limit to the hard one (and the hard one where root may); -> (before, after).
pub(crate) fn raise_fd_limit(want: u64) -> (u64, u64) {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `r` is a valid out-pointer.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) } != 0 {
        return (0, 0);
    }
    let before = r.rlim_cur;
    let target = libc::rlimit {
        rlim_cur: want.max(r.rlim_cur),
        rlim_max: want.max(r.rlim_max),
    };
    // SAFETY: a valid rlimit; failure leaves the limit as it was.
    if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &target) } != 0 {
        let soft = libc::rlimit {
            rlim_cur: r.rlim_max.min(want.max(r.rlim_cur)),
            rlim_max: r.rlim_max,
        };
        // SAFETY: as above.
        unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &soft) };
    }
    // SAFETY: as above.
    unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) };
    (before, r.rlim_cur)
}

/// Kernel slab memory of the machine, bytes (/proc/meminfo "Slab:", kB): where socket structures live.
fn kernel_slab_bytes() -> u64 {
    let text = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    text.lines()
        .find(|l| l.starts_with("Slab:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

/// Kernel TCP memory of the machine, pages (/proc/net/sockstat: "TCP: inuse .. mem N").
fn kernel_tcp_pages() -> u64 {
    let text = std::fs::read_to_string("/proc/net/sockstat").unwrap_or_default();
    text.lines()
        .find(|l| l.starts_with("TCP:"))
        .and_then(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            w.iter()
                .position(|x| *x == "mem")
                .and_then(|i| w.get(i + 1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}

fn start_server(
    stack: &dyn TlsStack,
    group: &str,
    files: &Files,
    threads: usize,
    hold: bool,
    core: Option<usize>,
) -> Result<Server> {
    stack.start_capacity_server(&CapacityStart {
        group,
        files,
        threads,
        hold,
        core,
    })
}

/// The stacks asked for that run here, each with what it negotiates; the others are noted.
fn available(
    stacks: &[&'static dyn TlsStack],
    notes: &mut Vec<Warning>,
) -> Vec<(&'static dyn TlsStack, Availability)> {
    let mut out = Vec::new();
    for &st in stacks {
        match st.availability() {
            Ok(a) => out.push((st, a)),
            Err(e) => notes.push(Warning::NotMeasured {
                what: format!("capacity of the {} stack", st.name()),
                reason: format!("{e:#}"),
            }),
        }
    }
    out
}

/// Whether a stack serves `auth`'s certificates; when it does not, a note, once.
fn authenticates(
    stack: &dyn TlsStack,
    a: &Availability,
    auth: &crate::auth::Auth,
    notes: &mut Vec<Warning>,
) -> bool {
    if a.authenticates(&auth.algorithm) {
        return true;
    }
    let note = a.unauthenticated(stack.name(), auth);
    if !notes.contains(&note) {
        notes.push(note);
    }
    false
}

/// Whether a stack negotiates `group`; when it does not, a note, once per stack and group.
fn negotiates(
    stack: &dyn TlsStack,
    a: &Availability,
    group: &str,
    notes: &mut Vec<Warning>,
) -> bool {
    if a.negotiates(group) {
        return true;
    }
    let note = Warning::GroupUnsupported {
        stack: stack.name().into(),
        version: a.version.clone(),
        group: group.into(),
    };
    if !notes.contains(&note) {
        notes.push(note);
    }
    false
}

fn cpu(server: &mut Server) -> Result<server::CpuAnswer> {
    let line = server.command("cpu")?;
    serde_json::from_str(&line).with_context(|| format!("capacity server said {line:?}"))
}

/// The stacks measured over sockets and held: in memory every stack with a pair, beyond it only
/// those with a capacity server (a note for each of the others).
fn served(
    stacks: &[(&'static dyn TlsStack, Availability)],
    notes: &mut Vec<Warning>,
) -> Vec<(&'static dyn TlsStack, Availability)> {
    for (s, _) in stacks.iter().filter(|(s, _)| !s.features().capacity) {
        notes.push(Warning::NotMeasured {
            what: format!("{} over sockets and with connections held", s.name()),
            reason: format!(
                "{} has no capacity server yet (its capacity is in memory only)",
                s.name()
            ),
        });
    }
    stacks
        .iter()
        .filter(|(s, _)| s.features().capacity)
        .cloned()
        .collect()
}

/// With a budget, the timed spans shrink to their shares of the time left (a stated design: every
/// row records its counts and its interval); `None` keeps the fixed design.
fn scaled(
    opts: &Options,
    stacks: &[(&'static dyn TlsStack, Availability)],
    served: usize,
    progress: &mut dyn FnMut(&str),
) -> Option<Options> {
    // What is left of the step's time: the servers under h2load have taken theirs.
    let b = opts
        .budget?
        .saturating_sub(crate::budget::process_start().elapsed());
    // Every stack's full cells, and the resumed ones of those that resume.
    let cells: usize = stacks
        .iter()
        .map(|(st, _)| {
            pairs(opts)
                .into_iter()
                .map(|(g, a)| 1 + usize::from(resumes(*st, g, &a.name, opts)))
                .sum::<usize>()
        })
        .sum();
    let (m, s) = budget_scale(
        b.as_secs_f64(),
        (cells, (opts.in_memory_ms + opts.precision_extra_ms) as f64),
        (
            served * opts.socket_groups.len(),
            opts.concurrency.len(),
            opts.step_ms as f64,
        ),
    );
    if m < 1.0 || s < 1.0 {
        progress(&format!(
            "capacity: in memory at {:.0}% and sockets at {:.0}% of the fixed design's timed spans, to keep to the {} s left",
            m * 100.0,
            s * 100.0,
            b.as_secs()
        ));
    }
    Some(Options {
        in_memory_ms: ((opts.in_memory_ms as f64 * m) as u64).max(1),
        precision_extra_ms: (opts.precision_extra_ms as f64 * m) as u64,
        step_ms: ((opts.step_ms as f64 * s) as u64).max(50),
        ..opts.clone()
    })
}

/// Every group with each authentication it meets in the capacity step, in order: the in-memory
/// cells of a stack, before its availability is asked.
fn pairs(opts: &Options) -> Vec<(&String, &crate::auth::Auth)> {
    opts.groups
        .iter()
        .flat_map(|g| {
            opts.auths
                .for_group(g, Step::Capacity)
                .into_iter()
                .map(move |a| (g, a))
        })
        .collect()
}

/// Whether a stack's in-memory cell of a group and authentication also runs resumed: where the
/// handshake step resumes the same scenario (#34) and the stack resumes.
fn resumes(stack: &dyn TlsStack, group: &str, auth: &str, opts: &Options) -> bool {
    stack.features().resumption
        && crate::figures::modes::made(
            Mode::Resumed,
            stack.protocol(),
            group,
            Some(auth),
            &opts.auths.baseline,
        )
}

/// A memory cell: a stack, group and authentication, and the numbers of connections to hold.
type MemoryCell<'a> = (
    &'static dyn TlsStack,
    &'a String,
    &'a crate::auth::Auth,
    &'a [usize],
);

/// The memory cells: the socket groups with the baseline authentication, then the other
/// authentications' pairings of those groups, with fewer connections.
fn memory_cells<'a>(
    opts: &'a Options,
    served: &[(&'static dyn TlsStack, Availability)],
    notes: &mut Vec<Warning>,
) -> Vec<MemoryCell<'a>> {
    let mut cells: Vec<MemoryCell> = Vec::new();
    for (stack, avail) in served {
        let stack = *stack;
        for group in &opts.socket_groups {
            if !negotiates(stack, avail, group, notes) {
                continue;
            }
            for a in opts.auths.for_group(group, Step::Capacity) {
                if !authenticates(stack, avail, a, notes) {
                    continue;
                }
                let steps: &[usize] = if a.name == opts.auths.baseline {
                    &opts.connections
                } else {
                    &opts.auth_connections
                };
                cells.push((stack, group, a, steps));
            }
        }
    }
    cells
}

pub(crate) fn run(
    opts: &Options,
    results: &Results,
    progress: &mut dyn FnMut(&str),
) -> Result<Capacity> {
    let start = Instant::now();
    let date_utc = crate::host::utc_now();
    let cores = core_affinity::get_core_ids().map_or(1, |v| v.len().max(1));
    let largest = opts.connections.iter().copied().max().unwrap_or(0) as u64;
    let (fd_limit_before, fd_limit) = raise_fd_limit(2 * largest + 1024);
    let chains = stack::identity::Chains::make(
        opts.groups
            .iter()
            .flat_map(|g| opts.auths.for_group(g, Step::Capacity)),
        "capacity",
    )?;
    let (id, files) = chains.get(&opts.auths.baseline)?;
    let mut notes = Vec::new();
    let stacks = available(&opts.stacks, &mut notes);
    let served = served(&stacks, &mut notes);
    // The server core is the last (core 0 takes most interrupts). The cores are listed before
    // pinning: afterwards this thread's affinity mask holds only one.
    let all_cores: Vec<usize> = core_affinity::get_core_ids()
        .map_or_else(Vec::new, |v| v.into_iter().map(|c| c.id).collect());
    let server_core = crate::measure::pin();
    let load_core = all_cores.iter().copied().find(|c| Some(*c) != server_core);
    if load_core.is_none() {
        notes.push(Warning::OneCore);
    }

    // 1. The servers people run (servers/: nginx, HAProxy under h2load, and every one's memory
    // with connections held), first: their design is fixed, and what they take is then off the
    // time the stacks' measurements scale to.
    let (servers, servers_held) = h2load::servers(
        opts,
        &chains,
        (server_core, load_core),
        &mut notes,
        progress,
    )?;
    // With a budget, the stacks' timed spans shrink to their shares of the time left (a stated
    // design: every row records its counts and its interval).
    let scaled = scaled(opts, &stacks, served.len(), progress);
    let opts = scaled.as_ref().unwrap_or(opts);

    // 2. The stacks in memory, pinned to the server core.
    let (in_memory, resumed) =
        in_memory(opts, &stacks, cores, results, &chains, &mut notes, progress)?;

    // 3. Sockets: the server child on the server core, load threads on the load core.
    let sockets = sockets(
        opts,
        &served,
        (id, files),
        (server_core, load_core),
        &mut notes,
        progress,
    )?;

    // 4. Memory per connection: the socket groups with the baseline authentication, then the
    // other authentications' pairings of those groups, with fewer connections.
    let cells = memory_cells(opts, &served, &mut notes);
    let mut memory = Vec::new();
    let memory_started = Instant::now();
    let rows = cells.len();
    for (k, (stack, group, a, steps)) in cells.into_iter().enumerate() {
        crate::interrupt::check()?;
        // With a budget: a row whose largest step the time left will not hold (at the rate the
        // rows so far took, per connection held) leaves that step out, and says so.
        let steps = match opts.budget {
            Some(b) if k > 0 && steps.len() > 1 => {
                let held: usize = memory
                    .iter()
                    .map(|m: &Memory| m.steps.iter().map(|s| s.connections).sum::<usize>())
                    .sum();
                let per_connection_s = memory_started.elapsed().as_secs_f64() / held.max(1) as f64;
                let left_s =
                    b.as_secs_f64() - crate::budget::process_start().elapsed().as_secs_f64();
                let share_s = left_s / (rows - k) as f64;
                let all: usize = steps.iter().sum();
                if all as f64 * per_connection_s > share_s {
                    notes.push(Warning::MemoryLimited {
                        cell: format!("{} {group} + {}", stack.name(), a.name),
                        why: format!(
                            "its {}-connection step was left out to keep to the step's {} s",
                            steps[steps.len() - 1],
                            b.as_secs()
                        ),
                    });
                    &steps[..steps.len() - 1]
                } else {
                    steps
                }
            }
            _ => steps,
        };
        progress(&format!(
            "capacity: {} {group} + {}, memory of held connections",
            stack.name(),
            a.name
        ));
        let (id, files) = chains.get(&a.name)?;
        memory.push(hold(stack, group, files, id, steps, fd_limit, server_core)?);
    }
    for m in &memory {
        if let Some(why) = &m.limited_by {
            notes.push(Warning::MemoryLimited {
                cell: format!("{} {}", m.stack.name(), m.group),
                why: why.clone(),
            });
        }
    }
    Ok(Capacity {
        date_utc,
        wall_seconds: start.elapsed().as_secs_f64(),
        cores,
        server_core,
        load_core,
        fd_limit_before,
        fd_limit,
        in_memory,
        resumed,
        sockets,
        memory,
        servers,
        servers_held,
        notes,
    })
}

/// Over loopback sockets: each served stack and socket group, the server child on the server core
/// and load threads on the load core, a load step for each concurrency.
fn sockets(
    opts: &Options,
    served: &[(&'static dyn TlsStack, Availability)],
    (id, files): (&Identity, &Files),
    (server_core, load_core): (Option<usize>, Option<usize>),
    notes: &mut Vec<Warning>,
    progress: &mut dyn FnMut(&str),
) -> Result<Vec<Sockets>> {
    let mut sockets = Vec::new();
    for (stack, a) in served {
        let stack = *stack;
        for group in &opts.socket_groups {
            crate::interrupt::check()?;
            if !negotiates(stack, a, group, notes) {
                continue;
            }
            progress(&format!("capacity: {} {group} over sockets", stack.name()));
            let threads = opts.concurrency.iter().copied().max().unwrap_or(1);
            let mut srv = start_server(stack, group, files, threads, false, server_core)?;
            let client: Arc<dyn stack::Client> = Arc::from(stack.client(Config::plain(group, id))?);
            let mut steps = Vec::new();
            for &c in &opts.concurrency {
                steps.push(load_step(
                    &mut srv,
                    &client,
                    c,
                    Duration::from_millis(opts.step_ms),
                    load_core,
                )?);
            }
            let limited: Vec<usize> = steps
                .iter()
                .filter(|s| s.load_limited)
                .map(|s| s.concurrency)
                .collect();
            if !limited.is_empty() {
                notes.push(Warning::LoadLimited {
                    cell: format!("{} {group}", stack.name()),
                    concurrency: limited,
                });
            }
            sockets.push(Sockets {
                stack: RealStack::new(stack.name()),
                group: group.clone(),
                auth: Some(id.auth.name.clone()),
                server_threads: threads,
                steps,
            });
        }
    }
    Ok(sockets)
}

/// An in-memory cell: a stack's client and server over memory for one group and authentication.
struct Cell {
    stack: &'static dyn TlsStack,
    group: String,
    auth: String,
    /// Full handshakes, or resumed ones (each with the ticket the handshake before brought).
    mode: Mode,
    pair: Box<dyn Pair>,
    per_round: usize,
    samples: Vec<Sample>,
    failures: usize,
    rounds: usize,
}

/// An in-memory cell's handshakes, bootstrapped rate and precision, as its stored row.
fn in_memory_row(c: &Cell, opts: &Options, cores: usize) -> Result<InMemory> {
    let col = |f: fn(&Sample) -> u64| c.samples.iter().map(f).collect::<Vec<u64>>();
    let (client_ns, server_ns, wall_ns) = (
        col(|s| s.client_ns),
        col(|s| s.server_ns),
        col(|s| s.wall_ns),
    );
    let summary = |v: &[u64]| {
        stats::figures(v).map(|f| f.summary).ok_or_else(|| {
            anyhow!(
                "{} {}: no in-memory handshake succeeded",
                c.stack.name(),
                c.group
            )
        })
    };
    let (rate, rate_ci) =
        crate::figures::capacity::rate_per_s(&wall_ns).ok_or_else(|| anyhow!("no samples"))?;
    let (server_rate, _) =
        crate::figures::capacity::rate_per_s(&server_ns).ok_or_else(|| anyhow!("no samples"))?;
    let xs = |v: &[u64]| v.iter().map(|&x| x as f64).collect::<Vec<f64>>();
    Ok(InMemory {
        stack: RealStack::new(c.stack.name()),
        composed_stack: c.stack.composed_stack(),
        group: c.group.clone(),
        auth: Some(c.auth.clone()),
        against: None,
        client: summary(&client_ns)?,
        server: summary(&server_ns)?,
        wall: summary(&wall_ns)?,
        server_median_ci95_ns: stats::median_ci95(
            &xs(&server_ns),
            stats::BOOTSTRAP_RESAMPLES,
            stats::BOOTSTRAP_SEED,
        ),
        wall_median_ci95_ns: stats::median_ci95(
            &xs(&wall_ns),
            stats::BOOTSTRAP_RESAMPLES,
            stats::BOOTSTRAP_SEED,
        ),
        handshakes_per_s: rate,
        handshakes_per_s_ci95: rate_ci,
        precision: rate_ci.and_then(|ci| {
            let hw = stats::half_width_pct(ci, rate)?;
            Some(crate::figures::precision(
                opts.precision_pct,
                hw,
                StopReason::after(
                    hw,
                    opts.precision_pct,
                    opts.precision_extra_ms == 0,
                    false,
                    true,
                ),
                c.rounds,
                None,
            ))
        }),
        server_per_core_s: server_rate,
        servers_for_10k: 10_000.0 / (server_rate * cores.max(1) as f64),
        baseline: None,
        vs_baseline: None,
        server_delta_ns: None,
        composed_server_delta_ns: None,
        failures: c.failures,
        resumptions: (c.mode == Mode::Resumed)
            .then(|| c.samples.iter().filter(|s| s.resumed).count()),
        client_ns,
        server_ns,
        wall_ns,
    })
}

/// Each row against the classical group with the baseline authentication (the same stack), or for
/// another authentication against the same group with the baseline one.
fn against_baselines(out: &mut [InMemory], opts: &Options, results: &Results) {
    let baseline_auth = opts.auths.baseline.as_str();
    for i in 0..out.len() {
        let auth = out[i].auth.clone();
        let against = match auth.as_deref() {
            Some(a) if a != baseline_auth => Against {
                suite: out[i].group.clone(),
                auth: Some(baseline_auth.into()),
            },
            _ if out[i].group == BASELINE => continue,
            a => Against {
                suite: BASELINE.into(),
                auth: a.map(String::from),
            },
        };
        let Some(b) = out.iter().position(|b| {
            b.stack == out[i].stack && b.group == against.suite && b.auth == against.auth
        }) else {
            continue;
        };
        let (rate, median) = (out[b].server_per_core_s, out[b].server.median_ns);
        let full =
            |group: &str, auth: Option<&str>| crate::auth::full_suite(group, auth, baseline_auth);
        let m = &mut out[i];
        m.baseline = Some(against.suite.clone());
        m.vs_baseline = Some(m.server_per_core_s / rate);
        m.server_delta_ns = Some(m.server.median_ns - median);
        m.composed_server_delta_ns = crate::figures::capacity::composed_server_delta(
            results,
            &m.composed_stack(),
            &full(&m.group, auth.as_deref()),
            &full(&against.suite, against.auth.as_deref()),
        );
        m.against = Some(against);
    }
}

fn in_memory(
    opts: &Options,
    stacks: &[(&'static dyn TlsStack, Availability)],
    cores: usize,
    results: &Results,
    chains: &stack::identity::Chains,
    notes: &mut Vec<Warning>,
    progress: &mut dyn FnMut(&str),
) -> Result<(Vec<InMemory>, Vec<InMemory>)> {
    let mut cells = Vec::new();
    let pairs = pairs(opts);
    for (stack, a) in stacks {
        let stack = *stack;
        for &(group, auth) in &pairs {
            if !negotiates(stack, a, group, notes) || !authenticates(stack, a, auth, notes) {
                continue;
            }
            let (id, _) = chains.get(&auth.name)?;
            let resumes = resumes(stack, group, &auth.name, opts);
            let modes = [Mode::Full, Mode::Resumed];
            for mode in modes.into_iter().filter(|&m| m == Mode::Full || resumes) {
                let pair = stack.pair(Config {
                    mode,
                    ..Config::plain(group, id)
                })?;
                // The checked first handshake is full; a resumed pair's brings its first ticket.
                pair.handshake(true).with_context(|| {
                    format!(
                        "{} {group} + {}{} in memory",
                        stack.name(),
                        auth.name,
                        mode_suffix(mode, false)
                    )
                })?;
                // Warm-up decides how many handshakes a round takes.
                let warm: Vec<Sample> = pair.handshakes(20).into_iter().collect::<Result<_>>()?;
                let mean = warm.iter().map(|s| s.wall_ns as f64).sum::<f64>() / warm.len() as f64;
                let per_round =
                    ((opts.in_memory_ms as f64 * 1e6 / opts.rounds.max(1) as f64 / mean).round()
                        as usize)
                        .max(5);
                cells.push(Cell {
                    stack,
                    group: group.to_string(),
                    auth: auth.name.clone(),
                    mode,
                    pair,
                    per_round,
                    samples: Vec::new(),
                    failures: 0,
                    rounds: 0,
                });
            }
        }
    }
    let round_of = |c: &mut Cell| -> Result<()> {
        crate::interrupt::check()?;
        let mut failed = false;
        for r in c.pair.handshakes(c.per_round) {
            match r {
                Ok(s) => c.samples.push(s),
                Err(_) => {
                    c.failures += 1;
                    failed = true;
                }
            }
        }
        // A failed resumption used its ticket up: one untimed handshake brings the next round's.
        if failed && c.mode == Mode::Resumed {
            c.pair.handshake(false)?;
        }
        c.rounds += 1;
        Ok(())
    };
    for round in 0..opts.rounds.max(1) {
        progress(&format!(
            "capacity: in-memory handshakes, round {}/{}",
            round + 1,
            opts.rounds.max(1)
        ));
        for c in &mut cells {
            round_of(c)?;
        }
    }
    // Then more rounds of the cells whose rate is wider than the target, the widest first,
    // while the extra time lasts (`precision_extra_ms` per cell, in all).
    let extra = Instant::now();
    let extra_s = opts.precision_extra_ms as f64 / 1e3 * cells.len() as f64;
    loop {
        let mut wide: Vec<(usize, f64)> = cells
            .iter()
            .enumerate()
            .filter_map(|(i, c)| Some((i, rate_half_width_pct(&c.samples)?)))
            .filter(|&(_, hw)| hw > opts.precision_pct)
            .collect();
        wide.sort_by(|a, b| b.1.total_cmp(&a.1));
        let left = extra_s - extra.elapsed().as_secs_f64();
        // A round's handshakes were chosen to take this long (from the warm-up's mean).
        let cost = opts.in_memory_ms as f64 / 1e3 / opts.rounds.max(1) as f64;
        let Some(&(i, hw)) = wide.first().filter(|_| cost <= left) else {
            break;
        };
        progress(&format!(
            "capacity: in-memory round {} of {} {} + {}{} (±{hw:.2}%)",
            cells[i].rounds + 1,
            cells[i].stack.name(),
            cells[i].group,
            cells[i].auth,
            mode_suffix(cells[i].mode, false)
        ));
        round_of(&mut cells[i])?;
    }
    let (full, resumed): (Vec<&Cell>, Vec<&Cell>) =
        cells.iter().partition(|c| c.mode == Mode::Full);
    let rows = |cells: Vec<&Cell>| -> Result<Vec<InMemory>> {
        cells
            .into_iter()
            .map(|c| in_memory_row(c, opts, cores))
            .collect()
    };
    let mut out = rows(full)?;
    against_baselines(&mut out, opts, results);
    let mut resumed = rows(resumed)?;
    against_full(&mut resumed, &out);
    Ok((out, resumed))
}

/// Each resumed row against the full handshakes of its stack, group and authentication: what
/// resumption leaves of the server's cost.
fn against_full(resumed: &mut [InMemory], full: &[InMemory]) {
    for m in resumed {
        let Some(f) = full
            .iter()
            .find(|f| f.stack == m.stack && f.group == m.group && f.auth == m.auth)
        else {
            continue;
        };
        m.baseline = Some(f.group.clone());
        m.against = Some(Against {
            suite: f.group.clone(),
            auth: f.auth.clone(),
        });
        m.vs_baseline = Some(m.server_per_core_s / f.server_per_core_s);
        m.server_delta_ns = Some(m.server.median_ns - f.server.median_ns);
    }
}

/// The 95% half-width of the in-memory rate of these handshakes, percent of the rate.
fn rate_half_width_pct(samples: &[Sample]) -> Option<f64> {
    let wall: Vec<u64> = samples.iter().map(|s| s.wall_ns).collect();
    let (rate, ci) = crate::figures::capacity::rate_per_s(&wall)?;
    stats::half_width_pct(ci?, rate)
}

/// One load step: `concurrency` threads on the load core, each making connection after connection
/// (connect, handshake, 32-byte echo, close) until the step's time is up.
fn load_step(
    srv: &mut Server,
    client: &Arc<dyn stack::Client>,
    concurrency: usize,
    length: Duration,
    load_core: Option<usize>,
) -> Result<LoadStep> {
    let addr: SocketAddr = srv.addr;
    let stop = Arc::new(AtomicBool::new(false));
    let failed = Arc::new(AtomicU64::new(0));
    let latencies: Arc<Mutex<Vec<u64>>> = Arc::default();
    let before = cpu(srv)?;
    // The load generator's CPU: this process's, and what a client outside it (the Go peer's
    // processes) reports.
    let client_cpu0 = crate::alloc::process_cpu_ns() + client.outside_cpu_ns();
    let t0 = Instant::now();
    let handles: Vec<_> = (0..concurrency)
        .map(|_| {
            let (stop, failed, latencies, client) = (
                stop.clone(),
                failed.clone(),
                latencies.clone(),
                client.clone(),
            );
            std::thread::spawn(move || {
                if let Some(c) = load_core {
                    core_affinity::set_for_current(core_affinity::CoreId { id: c });
                }
                let mut mine = Vec::new();
                while !stop.load(Relaxed) {
                    match client.connect_with(addr, Teardown::Reset) {
                        Ok(ns) => mine.push(ns as u64),
                        Err(_) => {
                            failed.fetch_add(1, Relaxed);
                        }
                    }
                }
                if let Ok(mut l) = latencies.lock() {
                    l.extend(mine);
                }
            })
        })
        .collect();
    while t0.elapsed() < length {
        if crate::interrupt::check().is_err() {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    stop.store(true, Relaxed);
    for h in handles {
        let _ = h.join();
    }
    let duration = t0.elapsed();
    let client_cpu = crate::alloc::process_cpu_ns() + client.outside_cpu_ns() - client_cpu0;
    crate::interrupt::check()?;
    let after = cpu(srv)?;
    let latency_ns = std::mem::take(&mut *latencies.lock().map_err(|_| anyhow!("poisoned"))?);
    let completed = latency_ns.len() as u64;
    let sorted = stats::sorted(&latency_ns.iter().map(|&x| x as f64).collect::<Vec<_>>());
    let pct = |p: f64| {
        if sorted.is_empty() {
            0.0
        } else {
            stats::percentile_sorted(&sorted, p)
        }
    };
    let server_cpu_ns = after.cpu_ns - before.cpu_ns;
    let wall = duration.as_nanos() as f64;
    let (server_busy_pct, client_busy_pct) =
        (server_cpu_ns / wall * 100.0, client_cpu / wall * 100.0);
    Ok(LoadStep {
        concurrency,
        duration_ns: wall,
        completed,
        failed: failed.load(Relaxed),
        p50_ns: pct(50.0),
        p90_ns: pct(90.0),
        p99_ns: pct(99.0),
        latency_ns,
        handshakes_per_s: completed as f64 / duration.as_secs_f64(),
        server_cpu_ns,
        server_cpu_per_handshake_ns: if completed > 0 {
            server_cpu_ns / completed as f64
        } else {
            0.0
        },
        server_busy_pct,
        client_busy_pct,
        load_limited: client_busy_pct > 90.0 && client_busy_pct > server_busy_pct,
    })
}

fn mem(srv: &mut Server, n: usize) -> Result<server::MemAnswer> {
    let line = srv.command(&format!("mem {n}"))?;
    serde_json::from_str(&line).with_context(|| format!("capacity server said {line:?}"))
}

/// The memory steps that fit the open-file limit (each connection takes a descriptor in the client
/// and one in the server; 256 are kept for everything else), ascending, and why they were cut.
fn steps_within(steps: &[usize], fd_limit: u64) -> (Vec<usize>, Option<String>) {
    let room = fd_limit.saturating_sub(256) as usize;
    let mut wanted: Vec<usize> = steps.iter().copied().filter(|&k| k > 0).collect();
    wanted.sort_unstable();
    wanted.dedup();
    let max = wanted.last().copied().unwrap_or(0);
    if max <= room {
        return (wanted, None);
    }
    wanted.retain(|&k| k < room);
    if room > 0 {
        wanted.push(room);
    }
    (
        wanted,
        Some(format!(
            "{max} connections asked for; {room} fit within the open-file limit of {fd_limit}"
        )),
    )
}

/// Opens connections one after another and keeps them, measuring the server at each step.
fn hold(
    stack: &dyn TlsStack,
    group: &str,
    files: &Files,
    id: &Identity,
    steps: &[usize],
    fd_limit: u64,
    core: Option<usize>,
) -> Result<Memory> {
    let mut srv = start_server(stack, group, files, 1, true, core)?;
    let client = stack.client(Config::plain(group, id))?;
    let (wanted, limited_by) = steps_within(steps, fd_limit);
    let page = server::page_bytes();
    let snapshot = |srv: &mut Server, k: usize| -> Result<(MemoryStep, server::MemAnswer)> {
        // Let the kernel settle what the last connections queued.
        std::thread::sleep(Duration::from_millis(50));
        let m = mem(srv, k)?;
        Ok((
            MemoryStep {
                connections: m.held,
                heap_rust_bytes: m.heap_rust_bytes,
                heap_c_bytes: m.heap_c_bytes,
                heap_go_bytes: m.heap_go_bytes,
                rss_bytes: m.rss_bytes,
                kernel_tcp_pages: kernel_tcp_pages(),
                kernel_slab_bytes: kernel_slab_bytes(),
            },
            m,
        ))
    };
    let (zero, _) = snapshot(&mut srv, 0)?;
    let mut steps_out = vec![zero];
    let mut open: Vec<Box<dyn Send>> = Vec::new();
    let mut failures = 0;
    let mut last_answer = None;
    for &k in &wanted {
        while open.len() + failures < k {
            crate::interrupt::check()?;
            match client.open(srv.addr) {
                Ok(c) => open.push(c),
                Err(e) => {
                    failures += 1;
                    if failures > 10 && failures * 10 > open.len() {
                        bail!(
                            "{} {group}: {failures} of {} connections failed, the last: {e:#}",
                            stack.name(),
                            open.len() + failures
                        );
                    }
                }
            }
        }
        let (step, answer) = snapshot(&mut srv, open.len() + failures)?;
        if step.connections != open.len() {
            bail!(
                "{} {group}: the server holds {} connections, the client {}",
                stack.name(),
                step.connections,
                open.len()
            );
        }
        steps_out.push(step);
        last_answer = Some(answer);
    }
    let answer = last_answer.ok_or_else(|| anyhow!("no memory steps"))?;
    let (first, last) = (
        &steps_out[0],
        steps_out.last().ok_or_else(|| anyhow!("no steps"))?,
    );
    let per_connection = crate::figures::capacity::per_connection(first, last, page);
    let _ = srv.command("release");
    drop(open);
    let med = |v: &[i64]| stats::median(&v.iter().map(|&x| x as f64).collect::<Vec<_>>());
    Ok(Memory {
        stack: RealStack::new(stack.name()),
        group: group.into(),
        auth: Some(id.auth.name.clone()),
        peak_median_bytes: med(&answer.peak_bytes),
        retained_median_bytes: med(&answer.retained_bytes),
        peak_bytes: answer.peak_bytes,
        retained_bytes: answer.retained_bytes,
        steps: steps_out,
        per_connection,
        failures,
        limited_by,
    })
}

#[cfg(test)]
mod tests {
    use super::steps_within;

    #[test]
    fn a_budget_shrinks_the_timed_spans_to_their_shares_only_as_far_as_needed() {
        // 22 in-memory cells of 2.5 s (55 s) and 8 socket rows of 4 steps of 2 s (70.4 s with
        // their 10%) in 96 s: 28.8 s each, 52% and 41%.
        let (m, s) = super::budget_scale(96.0, (22, 2500.0), (8, 4, 2000.0));
        assert!((m - 28.8 / 55.0).abs() < 1e-12, "{m}");
        assert!((s - 28.8 / 70.4).abs() < 1e-12, "{s}");
        // Room enough: as designed; no room: a tenth, not nothing.
        assert_eq!(
            super::budget_scale(1000.0, (22, 2500.0), (8, 4, 2000.0)),
            (1.0, 1.0)
        );
        assert_eq!(
            super::budget_scale(0.0, (22, 2500.0), (8, 4, 2000.0)),
            (0.1, 0.1)
        );
        assert_eq!(
            super::budget_scale(10.0, (0, 2500.0), (0, 4, 2000.0)),
            (1.0, 1.0)
        );
    }

    #[test]
    fn memory_steps_are_cut_at_the_open_file_limit_and_say_so() {
        assert_eq!(
            steps_within(&[1000, 100, 10_000], 1 << 20),
            (vec![100, 1000, 10_000], None)
        );
        let (steps, why) = steps_within(&[100, 1000, 10_000], 1280);
        assert_eq!(steps, vec![100, 1000, 1024]);
        assert!(why
            .unwrap()
            .contains("10000 connections asked for; 1024 fit within the open-file limit of 1280"));
        assert_eq!(steps_within(&[100], 100).0, Vec::<usize>::new());
    }
}
