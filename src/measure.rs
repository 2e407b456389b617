//! The timed loop: monotonic clock plus TSC cycles, one pinned core, warm-up, iteration budgets,
//! and interleaved rounds so machine drift spreads evenly over every phase.

use crate::case::Case;
pub use crate::results::{Reason, Settings};
use anyhow::Result;
use std::time::{Duration, Instant};

/// Iterations for a phase whose warm-up call took `estimate_ns`.
pub fn iterations_for(settings: &Settings, estimate_ns: f64) -> (usize, Reason) {
    if let Some(n) = settings.forced {
        return (n.max(1), Reason::Forced);
    }
    let fit = (settings.budget_ms as f64 * 1e6 / estimate_ns.max(1.0)).floor() as usize;
    if fit >= settings.default_iterations {
        (settings.default_iterations, Reason::Default)
    } else {
        (fit.max(settings.min_iterations).min(settings.default_iterations), Reason::Budget)
    }
}

/// The cycle counter, used only where the CPU says the TSC is invariant (constant rate, not
/// stopped in idle states).
#[derive(Debug, Clone, Copy)]
pub struct Tsc {
    pub invariant: bool,
}

impl Tsc {
    pub fn detect() -> Tsc {
        Tsc { invariant: tsc_invariant() }
    }

    #[inline(always)]
    pub fn read(self) -> u64 {
        if !self.invariant {
            return 0;
        }
        read_tsc()
    }

    /// TSC ticks per second, against the monotonic clock over `d`.
    pub fn hz(self, d: Duration) -> Option<f64> {
        if !self.invariant {
            return None;
        }
        let (t0, c0) = (Instant::now(), read_tsc());
        std::thread::sleep(d);
        let (t1, c1) = (Instant::now(), read_tsc());
        Some((c1 - c0) as f64 / (t1 - t0).as_secs_f64())
    }
}

#[cfg(target_arch = "x86_64")]
fn tsc_invariant() -> bool {
    // CPUID 0x80000007 EDX bit 8: invariant TSC (Intel SDM vol. 3B 18.17.1; AMD APM vol. 3, E.4.5).
    use std::arch::x86_64::__cpuid;
    // The extended leaf is checked to exist before it is read.
    __cpuid(0x8000_0000).eax >= 0x8000_0007 && __cpuid(0x8000_0007).edx & (1 << 8) != 0
}

#[cfg(not(target_arch = "x86_64"))]
fn tsc_invariant() -> bool {
    false
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn read_tsc() -> u64 {
    // SAFETY: RDTSC has no preconditions on x86_64.
    unsafe { std::arch::x86_64::_rdtsc() }
}

#[cfg(not(target_arch = "x86_64"))]
fn read_tsc() -> u64 {
    0
}

/// Median cost of reading both clocks around an empty call, in nanoseconds.
pub fn timer_overhead_ns(tsc: Tsc) -> f64 {
    let mut v: Vec<f64> = (0..10_001)
        .map(|_| {
            let t0 = Instant::now();
            let c = tsc.read();
            std::hint::black_box(c);
            let c2 = tsc.read();
            std::hint::black_box(c2);
            t0.elapsed().as_nanos() as f64
        })
        .collect();
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Pins this thread to the last core (core 0 takes most interrupts); returns its id.
pub fn pin() -> Option<usize> {
    let ids = core_affinity::get_core_ids()?;
    let last = *ids.last()?;
    core_affinity::set_for_current(last).then_some(last.id)
}

/// Jiffies of one CPU from /proc/stat: (steal, total). `None` where /proc/stat is unavailable.
pub fn cpu_jiffies(core: Option<usize>) -> Option<(u64, u64)> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let label = core.map_or("cpu".to_string(), |c| format!("cpu{c}"));
    parse_jiffies(&stat, &label)
}

fn parse_jiffies(stat: &str, label: &str) -> Option<(u64, u64)> {
    let line = stat.lines().find(|l| l.split_whitespace().next() == Some(label))?;
    let fields: Vec<u64> = line.split_whitespace().skip(1).filter_map(|f| f.parse().ok()).collect();
    // user nice system idle iowait irq softirq steal [guest guest_nice]; guest time is already
    // counted in user, so the total stops at steal (proc(5)).
    let total = fields.iter().take(8).sum();
    Some((*fields.get(7)?, total))
}

/// One phase's raw measurement.
#[derive(Debug, Clone, Default)]
pub struct Raw {
    pub samples_ns: Vec<u64>,
    pub cycles: Vec<u64>,
    pub steal: u64,
    pub jiffies: u64,
    pub verified: usize,
    pub warmup: usize,
}

/// A phase being measured: its case, its target count and what it has so far.
pub struct Slot {
    pub case: Box<dyn Case>,
    pub target: usize,
    pub reason: Reason,
    pub raw: Raw,
    /// Time spent verifying and timing, to keep verification within its share.
    verify_time: Duration,
    timed_time: Duration,
    /// Fastest warm-up call, nanoseconds.
    pub estimate_ns: f64,
    pub error: Option<anyhow::Error>,
}

impl Slot {
    pub fn new(case: Box<dyn Case>) -> Slot {
        Slot {
            case,
            target: 0,
            reason: Reason::Default,
            raw: Raw::default(),
            verify_time: Duration::ZERO,
            timed_time: Duration::ZERO,
            estimate_ns: f64::INFINITY,
            error: None,
        }
    }
}

/// Warm-up: runs the case until `warmup_ms` has passed (at least once); returns the fastest call.
pub fn warm_up(slot: &mut Slot, settings: &Settings) -> Result<f64> {
    let start = Instant::now();
    let mut best = f64::INFINITY;
    let mut i = 0;
    while i == 0 || (start.elapsed() < Duration::from_millis(settings.warmup_ms) && i < 10_000) {
        slot.case.prepare(i)?;
        let t0 = Instant::now();
        slot.case.run();
        best = best.min(t0.elapsed().as_nanos() as f64);
        // The first output of every phase is checked before anything is timed.
        if i == 0 {
            slot.case.verify()?;
            slot.raw.verified += 1;
        }
        i += 1;
    }
    slot.raw.warmup = i;
    slot.estimate_ns = best;
    Ok(best)
}

/// Runs `n` timed iterations of a slot: prepare (untimed), run (timed), verify (untimed, within
/// half the timed time, and always the first and last of the phase).
pub fn run_chunk(slot: &mut Slot, n: usize, tsc: Tsc, core: Option<usize>) -> Result<()> {
    if n == 0 {
        return Ok(());
    }
    // The phase before this one has had the caches: one untimed call brings ours back, unless a
    // call costs more than a millisecond (where cache state is noise).
    if slot.estimate_ns < 1e6 {
        slot.case.prepare(slot.raw.samples_ns.len())?;
        slot.case.run();
    }
    let before = cpu_jiffies(core);
    for _ in 0..n {
        let i = slot.raw.samples_ns.len();
        slot.case.prepare(i)?;
        let t0 = Instant::now();
        let c0 = tsc.read();
        slot.case.run();
        let c1 = tsc.read();
        let t1 = Instant::now();
        let dt = t1 - t0;
        slot.raw.samples_ns.push(dt.as_nanos() as u64);
        if tsc.invariant {
            slot.raw.cycles.push(c1.wrapping_sub(c0));
        }
        slot.timed_time += dt;
        let last = slot.raw.samples_ns.len() == slot.target;
        if i == 0 || last || slot.verify_time * 2 < slot.timed_time {
            let v0 = Instant::now();
            slot.case.verify()?;
            slot.verify_time += v0.elapsed();
            slot.raw.verified += 1;
        }
    }
    if let (Some((s0, j0)), Some((s1, j1))) = (before, cpu_jiffies(core)) {
        slot.raw.steal += s1.saturating_sub(s0);
        slot.raw.jiffies += j1.saturating_sub(j0);
    }
    Ok(())
}

/// How many of `target` iterations round `r` of `rounds` runs (spreads the remainder).
pub fn chunk_size(target: usize, rounds: usize, r: usize) -> usize {
    let rounds = rounds.max(1);
    target * (r + 1) / rounds - target * r / rounds
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budget_sets_iterations() {
        let s = Settings::default();
        assert_eq!(iterations_for(&s, 30_000.0), (1000, Reason::Default)); // 30 us: 66,666 fit
        assert_eq!(iterations_for(&s, 10_000_000.0), (200, Reason::Budget)); // 10 ms: 200 fit
        assert_eq!(iterations_for(&s, 1.4e9), (10, Reason::Budget)); // 1.4 s: the minimum
        let forced = Settings { forced: Some(3), ..Settings::default() };
        assert_eq!(iterations_for(&forced, 1.0), (3, Reason::Forced));
    }

    #[test]
    fn chunks_add_up() {
        for (target, rounds) in [(1000, 10), (10, 10), (7, 10), (13, 4), (1, 1)] {
            let total: usize = (0..rounds).map(|r| chunk_size(target, rounds, r)).sum();
            assert_eq!(total, target);
        }
        assert_eq!(chunk_size(1000, 10, 3), 100);
    }

    #[test]
    fn proc_stat_steal() {
        let stat = "cpu  10 0 5 100 0 0 0 7 0 0\ncpu1 4 0 2 50 1 0 0 3 9 0\n";
        assert_eq!(parse_jiffies(stat, "cpu1"), Some((3, 60)));
        assert_eq!(parse_jiffies(stat, "cpu"), Some((7, 122)));
        assert_eq!(parse_jiffies(stat, "cpu2"), None);
    }
}
