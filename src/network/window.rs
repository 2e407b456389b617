//! A window of handshakes: one or more scenarios' handshakes, one cell after another, each from
//! its own client threads, and what each gave.
//!
//! At a point with delay or loss, every scenario's cells share one window. A cell starts its
//! handshakes a gap apart from its opening; the next cell opens a gap after the one before has
//! really started its last handshake (not after its schedule said it would: at 78.7 ms a cell's
//! threads can all be waiting on the network, and its starts run late), while that one's last
//! handshakes are still in flight. A lossy cell's time is mostly its slowest handshake's
//! retransmission timers; cells that each waited for their own slowest waited out one such tail
//! each (on the Zen 5 VM the default grid's lossy cells took 130-200 s of the step's 224-257 s); in a
//! window the point's tails overlap instead of adding up. At most a cell's last handshakes overlap the next
//! cell's first: about a handshake's worth at 0% loss, and under loss mostly stragglers waiting on
//! a timer.
//! Interleaving the cells' starts instead was tried and measured: switching servers at every
//! handshake put the 5.6 ms cells 0.4-1.1 ms further over their model (the zero point's warm,
//! serial compute). The emulator counts and drops packets per server port, so each cell keeps its
//! own counters.

use super::Scenario;
use crate::results::Mode;
use crate::stack::{self, Identity};
use anyhow::{anyhow, Result};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

/// One scenario's part of a window.
pub(super) struct Lane<'a> {
    pub(crate) s: &'a Scenario,
    /// Its clients, one per thread, made before (untimed) and kept for the scenario's next cells:
    /// an OpenSSL client context costs milliseconds of CPU, which must neither land in a cell nor
    /// contend with its handshakes.
    pub(crate) clients: &'a mut Vec<Box<dyn stack::Client>>,
    pub(crate) id: &'a Identity,
    pub(crate) addr: SocketAddr,
    /// The time between its starts; zero: back to back, until `n` or the budget.
    pub(crate) gap: Duration,
    pub(crate) n: usize,
    pub(crate) threads: usize,
    /// The handshakes it starts back to back before the budget may stop it (`MIN_PER_CELL`, or
    /// a round's share of it).
    pub(crate) least: usize,
}

/// One completed handshake: its times to ready and to the echo, nanoseconds, and where its
/// packets are in the emulator's record: the client's port, and when its clock started
/// (`alloc::monotonic_ns`; the window's own reading before the call where the client does not
/// say, which puts the start a little early: wire time before it has no packets to count).
#[derive(Debug, Clone, Copy)]
pub(super) struct Done {
    pub(crate) ready_ns: u64,
    pub(crate) echo_ns: u64,
    pub(crate) port: u16,
    pub(crate) started_ns: u64,
}

/// What a lane's handshakes gave: each completed handshake, how many failed, the
/// lane's wall time (its opening to its last handshake's end) and its client CPU (its threads',
/// from the window's opening, with what clients in processes of their own report: the Go peer's
/// client processes).
pub(super) struct Sampled {
    pub(crate) times: Vec<Done>,
    pub(crate) failed: usize,
    pub(crate) wall_ns: f64,
    pub(crate) cpu_ns: f64,
    /// How late the paced starts were against their slots, mean and largest.
    pub(crate) lag_mean_ns: f64,
    pub(crate) lag_max_ns: f64,
}

impl Sampled {
    /// This lane's handshakes and another round's of the same cell, as one sample: the wall and
    /// CPU times add (each round's its own, so the gaps between rounds count in neither), the
    /// lag's mean is over both rounds' starts.
    pub(crate) fn merge(&mut self, other: Sampled) {
        let (a, b) = (self.starts(), other.starts());
        self.lag_mean_ns = if a + b > 0.0 {
            (self.lag_mean_ns * a + other.lag_mean_ns * b) / (a + b)
        } else {
            0.0
        };
        self.lag_max_ns = self.lag_max_ns.max(other.lag_max_ns);
        self.times.extend(other.times);
        self.failed += other.failed;
        self.wall_ns += other.wall_ns;
        self.cpu_ns += other.cpu_ns;
    }

    fn starts(&self) -> f64 {
        (self.times.len() + self.failed) as f64
    }
}

/// A lane's threads: enough that a start is not held back by its handshakes still waiting on the
/// network (`expected / spacing` of them, and one more), at most `max_in_flight`, no more than
/// its handshakes, never none. `spacing`: the mean time between the lane's starts.
pub(crate) fn lane_threads(
    expected_ns: f64,
    spacing_ns: f64,
    max_in_flight: usize,
    n: usize,
) -> usize {
    let t = if spacing_ns > 0.0 {
        (expected_ns / spacing_ns).ceil() as usize + 1
    } else {
        1
    };
    t.clamp(1, max_in_flight.max(1)).min(n.max(1))
}

/// The window: every lane's handshakes from its own threads, in the client namespace, lane after
/// lane. A paced lane starts its `n` (fixed before, `starts_within`) at its opening plus k gaps;
/// one back to back starts none after `budget` has passed since its opening, once it has
/// `least`. Those started all finish. Which handshakes start depends only on the schedule
/// or the clock, not on how any of them went, so no sample leans towards fast ones.
pub(super) fn sample(lanes: &mut [Lane], budget: Duration) -> Result<Vec<Sampled>> {
    for l in lanes.iter_mut() {
        l.threads = l.threads.max(1).min(l.n.max(1));
        while l.clients.len() < l.threads {
            l.clients.push(l.s.stack.client(stack::Config {
                mode: l.s.mode,
                ..stack::Config::plain(&l.s.group, l.id)
            })?);
        }
    }
    let tallies: Vec<Tally> = lanes
        .iter()
        .map(|l| Tally {
            live: AtomicUsize::new(l.threads),
            ..Tally::default()
        })
        .collect();
    // Lane j opens when lane j - 1 has started its last handshake (or all its threads are done).
    let openings: Vec<Opening> = lanes.iter().map(|_| Opening::default()).collect();
    let gate = Gate::default();
    std::thread::scope(|scope| -> Result<()> {
        let mut handles = Vec::new();
        for (j, (l, tally)) in lanes.iter().zip(&tallies).enumerate() {
            let (open, next) = (&openings[j], openings.get(j + 1));
            for c in l.clients.iter().take(l.threads) {
                let gate = &gate;
                let spawned =
                    std::thread::Builder::new().spawn_scoped(scope, move || -> Result<()> {
                        // Whatever happens to this thread, a panic too, the window and the next
                        // lane are not left waiting for it (Exit's drop).
                        let mut exit = Exit {
                            gate,
                            arrived: false,
                            live: &tally.live,
                            next,
                            window_open: false,
                        };
                        // In the client namespace, with what the client's first connection would
                        // start (the Go peer's process, which a child started here inherits the
                        // namespace of).
                        let entered =
                            super::lab::enter(super::lab::CLIENT).and_then(|()| c.ready(l.addr));
                        let t0 = gate.arrive();
                        exit.arrived = true;
                        exit.window_open = t0.is_some();
                        entered.and_then(|()| {
                            let t0 = t0.ok_or_else(|| anyhow!("the window was called off"))?;
                            let cpu0 = crate::alloc::thread_cpu_ns();
                            let r = match open.wait() {
                                Some(opened) => run_lane(l, &**c, tally, opened, t0, next, budget),
                                None => Ok(()),
                            };
                            tally.add_cpu(crate::alloc::thread_cpu_ns() - cpu0);
                            r
                        })
                    });
                match spawned {
                    Ok(h) => handles.push(h),
                    Err(e) => {
                        // Those already waiting are let go without a start.
                        gate.open(None);
                        openings.iter().for_each(|o| o.open(None));
                        return Err(anyhow!("cannot start a client thread: {e}"));
                    }
                }
            }
        }
        // The window opens once every thread is in the client namespace with its client.
        gate.wait_for(handles.len());
        let outside = |l: &Lane| -> f64 {
            l.clients
                .iter()
                .take(l.threads)
                .map(|c| c.outside_cpu_ns())
                .sum()
        };
        let outside0: Vec<f64> = lanes.iter().map(outside).collect();
        let t0 = Instant::now();
        if let Some(first) = openings.first() {
            first.open(Some(t0));
        }
        gate.open(Some(t0));
        let mut first_error = None;
        for h in handles {
            let r = h
                .join()
                .map_err(|_| anyhow!("a client thread panicked"))
                .and_then(|r| r);
            if let Err(e) = r {
                first_error.get_or_insert(e);
            }
        }
        for ((l, tally), o0) in lanes.iter().zip(&tallies).zip(outside0) {
            tally.add_cpu(outside(l) - o0);
        }
        first_error.map_or(Ok(()), Err)
    })?;
    crate::interrupt::check()?;
    tallies
        .into_iter()
        .map(|t| {
            let started = t.started.load(Relaxed).max(1) as f64;
            Ok(Sampled {
                times: t.done.into_inner().map_err(|_| anyhow!("poisoned"))?,
                failed: t.failed.load(Relaxed),
                wall_ns: t
                    .end_ns
                    .load(Relaxed)
                    .saturating_sub(t.open_ns.load(Relaxed)) as f64,
                cpu_ns: t.cpu_ns.load(Relaxed) as f64,
                lag_mean_ns: t.lag_sum.load(Relaxed) as f64 / started,
                lag_max_ns: t.lag_max.load(Relaxed) as f64,
            })
        })
        .collect()
}

/// One thread of a lane opened at `opened` (the window at `t0`): the lane's next handshake while
/// it has one to start; the start of its last opens the `next` lane a gap later.
fn run_lane(
    l: &Lane,
    c: &dyn stack::Client,
    tally: &Tally,
    opened: Instant,
    t0: Instant,
    next: Option<&Opening>,
    budget: Duration,
) -> Result<()> {
    tally.open_ns.store(
        opened.saturating_duration_since(t0).as_nanos() as u64,
        Relaxed,
    );
    loop {
        let k = tally.next.fetch_add(1, Relaxed);
        if k >= l.n || crate::interrupt::check().is_err() {
            return Ok(());
        }
        // A paced lane's count is fixed before (its starts follow its opening); a serial one's
        // last start is set by the clock. Neither depends on how the handshakes went.
        if l.gap.is_zero() {
            if k >= l.least && opened.elapsed() > budget {
                return Ok(());
            }
        } else {
            let due = opened + l.gap * k as u32;
            let now = Instant::now();
            if due > now {
                std::thread::sleep(due - now);
            } else {
                let lag = (now - due).as_nanos() as u64;
                tally.lag_sum.fetch_add(lag, Relaxed);
                tally.lag_max.fetch_max(lag, Relaxed);
            }
        }
        if tally.started.fetch_add(1, Relaxed) + 1 == l.n {
            if let Some(next) = next {
                next.open(Some(Instant::now() + l.gap));
            }
        }
        let before = crate::alloc::monotonic_ns();
        match c.connect(l.addr, false) {
            Ok(o) if !is_sample(l.s.mode, o.resumed) => {
                tally.failed.fetch_add(1, Relaxed);
            }
            Ok(o) => tally
                .done
                .lock()
                .map_err(|_| anyhow!("poisoned"))?
                .push(Done {
                    ready_ns: o.ready_ns as u64,
                    echo_ns: o.total_ns as u64,
                    port: o.port,
                    started_ns: if o.started_ns > 0 {
                        o.started_ns
                    } else {
                        before
                    },
                }),
            Err(_) => {
                tally.failed.fetch_add(1, Relaxed);
            }
        }
        tally
            .end_ns
            .fetch_max(t0.elapsed().as_nanos() as u64, Relaxed);
    }
}

/// Whether a completed connection is a sample of its cell. A resumed cell measures resumptions: a
/// connection whose client says it fell back to a full handshake (no ticket came, or the server
/// refused it) is not one, and counts as failed, as the server's count of resumptions (`check`)
/// expects; where the client does not say, the server's count stands alone.
fn is_sample(mode: Mode, resumed: Option<bool>) -> bool {
    !(mode == Mode::Resumed && resumed == Some(false))
}

/// What a lane's thread owes the others when it ends, however it ends (a panic unwinds through
/// the drop too): its arrival at the gate if it never got there, and, as its lane's last thread
/// out, the next lane's opening (started all, cut, called off, failed: none waits forever).
struct Exit<'a> {
    gate: &'a Gate,
    arrived: bool,
    live: &'a AtomicUsize,
    next: Option<&'a Opening>,
    window_open: bool,
}

impl Drop for Exit<'_> {
    fn drop(&mut self) {
        if !self.arrived {
            self.gate.leave();
        }
        if self.live.fetch_sub(1, Relaxed) == 1 {
            if let Some(next) = self.next {
                next.open(self.window_open.then(Instant::now));
            }
        }
    }
}

/// When a lane opens: not yet, called off (None), or at an instant (which may be to come).
#[derive(Default)]
struct Opening {
    at: Mutex<Option<Option<Instant>>>,
    changed: Condvar,
}

impl Opening {
    /// The first opening holds; later ones (the last thread's fallback) change nothing.
    fn open(&self, at: Option<Instant>) {
        if let Ok(mut s) = self.at.lock() {
            if s.is_none() {
                *s = Some(at);
            }
        }
        self.changed.notify_all();
    }

    /// Waits until the lane is opened and its instant has come; None: called off.
    fn wait(&self) -> Option<Instant> {
        let mut s = self.at.lock().ok()?;
        let at = loop {
            if let Some(at) = *s {
                break at?;
            }
            s = self.changed.wait(s).ok()?;
        };
        drop(s);
        let now = Instant::now();
        if at > now {
            std::thread::sleep(at - now);
        }
        Some(at)
    }
}

/// A lane's counts, shared by its threads.
#[derive(Default)]
struct Tally {
    next: AtomicUsize,
    started: AtomicUsize,
    done: Mutex<Vec<Done>>,
    failed: AtomicUsize,
    /// How late each start was against its slot (threads all busy, or one waiting out an RTO).
    lag_sum: AtomicU64,
    lag_max: AtomicU64,
    cpu_ns: AtomicU64,
    /// When the lane opened and when its last handshake ended, from the window's opening.
    open_ns: AtomicU64,
    end_ns: AtomicU64,
    /// Its threads still running.
    live: AtomicUsize,
}

impl Tally {
    fn add_cpu(&self, ns: f64) {
        self.cpu_ns.fetch_add(ns.max(0.0).round() as u64, Relaxed);
    }
}

/// Where a window's threads wait until it opens: each arrives (counted), the caller waits for all
/// of them, then opens the gate with the window's start, or with none to call it off.
#[derive(Default)]
struct Gate {
    state: Mutex<(usize, Option<Option<Instant>>)>,
    changed: std::sync::Condvar,
}

impl Gate {
    /// A thread is ready: waits for the gate to open and returns the window's start (None: off).
    fn arrive(&self) -> Option<Instant> {
        let Ok(mut s) = self.state.lock() else {
            return None;
        };
        s.0 += 1;
        self.changed.notify_all();
        loop {
            if let Some(open) = s.1 {
                return open;
            }
            s = match self.changed.wait(s) {
                Ok(s) => s,
                Err(_) => return None,
            };
        }
    }

    /// A thread that will never arrive (it failed or panicked before): counted, not waiting.
    fn leave(&self) {
        if let Ok(mut s) = self.state.lock() {
            s.0 += 1;
        }
        self.changed.notify_all();
    }

    /// Waits until `n` threads have arrived.
    fn wait_for(&self, n: usize) {
        let Ok(mut s) = self.state.lock() else { return };
        while s.0 < n {
            s = match self.changed.wait(s) {
                Ok(s) => s,
                Err(_) => return,
            };
        }
    }

    fn open(&self, start: Option<Instant>) {
        if let Ok(mut s) = self.state.lock() {
            s.1 = Some(start);
        }
        self.changed.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::{is_sample, lane_threads, Done, Mode, Sampled};

    #[test]
    fn a_cells_rounds_make_one_sample() {
        let done = |ready_ns| Done {
            ready_ns,
            echo_ns: ready_ns + 1,
            port: 1,
            started_ns: 0,
        };
        let mut a = Sampled {
            times: vec![done(10), done(20)],
            failed: 0,
            wall_ns: 100.0,
            cpu_ns: 30.0,
            lag_mean_ns: 4.0,
            lag_max_ns: 6.0,
        };
        a.merge(Sampled {
            times: vec![done(30)],
            failed: 1,
            wall_ns: 50.0,
            cpu_ns: 20.0,
            lag_mean_ns: 1.0,
            lag_max_ns: 2.0,
        });
        let ready: Vec<u64> = a.times.iter().map(|t| t.ready_ns).collect();
        assert_eq!(ready, vec![10, 20, 30]);
        assert_eq!(a.failed, 1);
        assert_eq!((a.wall_ns, a.cpu_ns), (150.0, 50.0));
        // Two starts at 4 and two at 1: a mean of 2.5; the largest of both rounds.
        assert_eq!((a.lag_mean_ns, a.lag_max_ns), (2.5, 6.0));
    }

    #[test]
    fn a_resumed_cell_keeps_only_the_connections_that_resumed() {
        assert!(is_sample(Mode::Resumed, Some(true)));
        // Fell back to a full handshake: failed, not a resumption's time.
        assert!(!is_sample(Mode::Resumed, Some(false)));
        // A client that does not say: the server's count decides (`check`).
        assert!(is_sample(Mode::Resumed, None));
        // Full handshakes are the sample of a full cell.
        assert!(is_sample(Mode::Full, Some(false)));
    }

    #[test]
    fn a_lane_has_threads_for_its_handshakes_in_flight() {
        const MS: f64 = 1e6;
        // A 12 ms handshake started every 4 ms: 3 in flight, one thread more.
        assert_eq!(lane_threads(12.0 * MS, 4.0 * MS, 64, 100), 4);
        // 158 ms every 4 ms: 40 in flight, 41 threads; capped.
        assert_eq!(lane_threads(158.0 * MS, 4.0 * MS, 64, 100), 41);
        assert_eq!(lane_threads(158.0 * MS, 4.0 * MS, 32, 100), 32);
        // Never more threads than handshakes, never none.
        assert_eq!(lane_threads(158.0 * MS, 4.0 * MS, 64, 10), 10);
        assert_eq!(lane_threads(12.0 * MS, 4.0 * MS, 0, 10), 1);
        assert_eq!(lane_threads(12.0 * MS, 0.0, 64, 10), 1);
    }
}
