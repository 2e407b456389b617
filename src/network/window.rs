//! A window of handshakes: one or more scenarios' handshakes started on one schedule, each from
//! its own client threads, and what each gave.
//!
//! At a point with delay or loss, every scenario's handshakes share one window, one cell after
//! another (`consecutive`): a cell starts its handshakes a gap apart, and the next cell starts as
//! soon as the one before has started its last, while that one's stragglers still wait on the
//! network. A lossy cell's time is mostly its slowest handshake's retransmission timers; cells
//! that each waited for their own stragglers waited out one such tail each (on the Zen 5 VM the
//! default grid's lossy cells took 130-200 s of the step's 225-257 s), a window waits out the
//! last. A straggler waits on a timer, so the overlap costs the next cell next to no CPU.
//! Interleaving the cells' starts instead was tried and measured: switching servers at every
//! handshake put the 5.6 ms cells 0.4-1.1 ms further over their model (the zero point's warm,
//! serial compute). The emulator counts packets per server port, so each cell keeps its own
//! counters.

use super::{Scenario, MIN_PER_CELL};
use crate::stack::{self, Identity};
use anyhow::{anyhow, Result};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// One scenario's part of a window.
pub(super) struct Lane<'a> {
    pub s: &'a Scenario,
    /// Its clients, one per thread, made before (untimed) and kept for the scenario's next cells:
    /// an OpenSSL client context costs milliseconds of CPU, which must neither land in a cell nor
    /// contend with its handshakes.
    pub clients: &'a mut Vec<Box<dyn stack::Client>>,
    pub id: &'a Identity,
    pub addr: SocketAddr,
    /// The handshakes' starts, from the window's opening (`interleave`); none: `n` back to back.
    pub dues: Vec<Duration>,
    pub n: usize,
    pub threads: usize,
}

/// What a lane's handshakes gave: (ready, echo) per completed handshake, how many failed, the
/// lane's wall time (its first slot to its last handshake's end) and its client CPU (its threads',
/// from the window's opening; with what clients in processes of their own report: the Go peer's
/// client processes).
pub(super) struct Sampled {
    pub times: Vec<(u64, u64)>,
    pub failed: usize,
    pub wall_ns: f64,
    pub cpu_ns: f64,
    /// How late the paced starts were against their slots, mean and largest.
    pub lag_mean_ns: f64,
    pub lag_max_ns: f64,
}

/// The starts of lanes asking for `(count, gap)` each, one lane after another: a lane's starts a
/// gap apart, the next lane's first a gap after the last. Returns each lane's starts.
pub fn consecutive(lanes: &[(usize, Duration)]) -> Vec<Vec<Duration>> {
    let mut t = Duration::ZERO;
    lanes
        .iter()
        .map(|&(n, gap)| {
            (0..n)
                .map(|_| {
                    let due = t;
                    t += gap;
                    due
                })
                .collect()
        })
        .collect()
}

/// A lane's threads: enough that a start is not held back by its handshakes still waiting on the
/// network (`expected / spacing` of them, and one more), at most `max_in_flight`, no more than
/// its handshakes, never none. `spacing`: the mean time between the lane's starts.
pub fn lane_threads(expected_ns: f64, spacing_ns: f64, max_in_flight: usize, n: usize) -> usize {
    let t = if spacing_ns > 0.0 {
        (expected_ns / spacing_ns).ceil() as usize + 1
    } else {
        1
    };
    t.clamp(1, max_in_flight.max(1)).min(n.max(1))
}

/// The window: every lane's handshakes from its own threads, in the client namespace. Once a lane
/// has started `MIN_PER_CELL`, it starts none whose slot is more than `budget` after its first
/// (back to back: once `budget` has passed); those started all finish. Which handshakes start depends only on the
/// schedule or the clock, not on how any of them went, so no sample leans towards fast ones.
pub(super) fn sample(lanes: &mut [Lane], budget: Duration) -> Result<Vec<Sampled>> {
    for l in lanes.iter_mut() {
        l.threads = l.threads.max(1).min(l.n.max(1));
        while l.clients.len() < l.threads {
            l.clients
                .push(l.s.stack.client(stack::Config::plain(&l.s.group, l.id))?);
        }
    }
    let tallies: Vec<Tally> = lanes.iter().map(|_| Tally::default()).collect();
    let gate = Gate::default();
    std::thread::scope(|scope| -> Result<()> {
        let mut handles = Vec::new();
        for (l, tally) in lanes.iter().zip(&tallies) {
            for c in l.clients.iter().take(l.threads) {
                let gate = &gate;
                let spawned =
                    std::thread::Builder::new().spawn_scoped(scope, move || -> Result<()> {
                        // In the client namespace, with what the client's first connection would
                        // start (the Go peer's process, which a child started here inherits the
                        // namespace of).
                        let entered =
                            super::lab::enter(super::lab::CLIENT).and_then(|()| c.ready(l.addr));
                        let t0 = gate.arrive();
                        entered?;
                        let t0 = t0.ok_or_else(|| anyhow!("the window was called off"))?;
                        let cpu0 = crate::alloc::thread_cpu_ns();
                        let r = run_lane(l, &**c, tally, t0, budget);
                        tally.add_cpu(crate::alloc::thread_cpu_ns() - cpu0);
                        r
                    });
                match spawned {
                    Ok(h) => handles.push(h),
                    Err(e) => {
                        // Those already waiting are let go without a start.
                        gate.open(None);
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
        .zip(lanes.iter())
        .map(|(t, l)| {
            let started = t.started.load(Relaxed).max(1) as f64;
            let first = l.dues.first().map_or(0, |d| d.as_nanos() as u64);
            Ok(Sampled {
                times: t.done.into_inner().map_err(|_| anyhow!("poisoned"))?,
                failed: t.failed.load(Relaxed),
                wall_ns: t.end_ns.load(Relaxed).saturating_sub(first) as f64,
                cpu_ns: t.cpu_ns.load(Relaxed) as f64,
                lag_mean_ns: t.lag_sum.load(Relaxed) as f64 / started,
                lag_max_ns: t.lag_max.load(Relaxed) as f64,
            })
        })
        .collect()
}

/// One thread of a lane: the lane's next handshake while it has one to start.
fn run_lane(
    l: &Lane,
    c: &dyn stack::Client,
    tally: &Tally,
    t0: Instant,
    budget: Duration,
) -> Result<()> {
    loop {
        let k = tally.next.fetch_add(1, Relaxed);
        if k >= l.n || crate::interrupt::check().is_err() {
            return Ok(());
        }
        // A paced lane's last start is fixed by its schedule; a serial one's by the clock.
        // Neither depends on how the handshakes went.
        let due = l.dues.get(k).copied();
        let over = match (due, l.dues.first()) {
            (Some(d), Some(&first)) => d - first > budget,
            _ => t0.elapsed() > budget,
        };
        if k >= MIN_PER_CELL && over {
            return Ok(());
        }
        if let Some(d) = due {
            let now = Instant::now();
            let at = t0 + d;
            if at > now {
                std::thread::sleep(at - now);
            } else {
                let lag = (now - at).as_nanos() as u64;
                tally.lag_sum.fetch_add(lag, Relaxed);
                tally.lag_max.fetch_max(lag, Relaxed);
            }
        }
        tally.started.fetch_add(1, Relaxed);
        match c.connect(l.addr, false) {
            Ok(o) => tally
                .done
                .lock()
                .map_err(|_| anyhow!("poisoned"))?
                .push((o.ready_ns as u64, o.total_ns as u64)),
            Err(_) => {
                tally.failed.fetch_add(1, Relaxed);
            }
        }
        tally
            .end_ns
            .fetch_max(t0.elapsed().as_nanos() as u64, Relaxed);
    }
}

/// A lane's counts, shared by its threads.
#[derive(Default)]
struct Tally {
    next: AtomicUsize,
    started: AtomicUsize,
    done: Mutex<Vec<(u64, u64)>>,
    failed: AtomicUsize,
    /// How late each start was against its slot (threads all busy, or one waiting out an RTO).
    lag_sum: AtomicU64,
    lag_max: AtomicU64,
    cpu_ns: AtomicU64,
    /// When its last handshake ended, from the window's opening.
    end_ns: AtomicU64,
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
    use super::{consecutive, lane_threads};
    use std::time::Duration;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn lanes_follow_each_other_each_start_a_gap_after_the_one_before() {
        // Two starts 1 ms apart, then two 2 ms apart, then one: 0, 1; 2, 4; 6.
        let d = consecutive(&[(2, MS), (2, 2 * MS), (1, 4 * MS)]);
        assert_eq!(d[0], vec![Duration::ZERO, MS]);
        assert_eq!(d[1], vec![2 * MS, 4 * MS]);
        assert_eq!(d[2], vec![6 * MS]);
        // One lane alone: a start every gap; a lane of none is empty and takes no time.
        assert_eq!(
            consecutive(&[(3, 4 * MS)])[0],
            vec![Duration::ZERO, 4 * MS, 8 * MS]
        );
        let d = consecutive(&[(2, MS), (0, 5 * MS), (1, MS)]);
        assert_eq!(d, vec![vec![Duration::ZERO, MS], vec![], vec![2 * MS]]);
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
