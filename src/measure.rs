//! The timed loop: a fenced TSC (or the monotonic clock) around exactly one call or one batch of
//! calls, on a pinned core, with warm-up, iteration budgets from the warm-up median, verification
//! after each chunk (never between two timed calls), and per-thread run delay beside CPU steal.

use crate::case::Case;
pub use crate::results::{Reason, Settings};
use anyhow::Result;
use std::time::{Duration, Instant};

/// Iterations (samples) for a phase whose sample takes `estimate_ns`.
pub(crate) fn iterations_for(settings: &Settings, estimate_ns: f64) -> (usize, Reason) {
    if let Some(n) = settings.forced {
        return (n.max(1), Reason::Forced);
    }
    let fit = (settings.budget_ms as f64 * 1e6 / estimate_ns.max(1.0)).floor() as usize;
    if fit >= settings.default_iterations {
        (settings.default_iterations, Reason::Default)
    } else if fit < settings.min_iterations {
        (
            settings.min_iterations.min(settings.default_iterations),
            Reason::Floor,
        )
    } else {
        (fit, Reason::Budget)
    }
}

/// A phase shorter than this many times the timer's own cost is timed in batches, so the timer
/// stays under 1% of every sample (criterion and divan batch for the same reason).
pub(crate) const BATCH_THRESHOLD: f64 = 100.0;
/// The largest batch: beyond it a sample averages away too much of the call-to-call spread.
pub(crate) const MAX_BATCH: usize = 64;

/// Calls per sample for a call of `estimate_ns` with a timer costing `overhead_ns`.
pub(crate) fn batch_for(estimate_ns: f64, overhead_ns: f64) -> usize {
    if estimate_ns <= 0.0 || estimate_ns >= BATCH_THRESHOLD * overhead_ns {
        return 1;
    }
    ((BATCH_THRESHOLD * overhead_ns / estimate_ns).ceil() as usize).clamp(1, MAX_BATCH)
}

/// The clock of the timed region. Where the CPU says the TSC is invariant (constant rate, not
/// stopped in idle states), a fenced TSC read, and nanoseconds are those cycles at the measured
/// rate, so both figures cover one span; on aarch64 the generic timer's count behind an ISB
/// (`cntvct`), at CNTFRQ_EL0's rate, which is a time and not a cycle count; elsewhere the
/// monotonic clock alone.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Timer {
    /// Counter ticks per second, when a counter is used (the TSC, or aarch64's CNTVCT_EL0).
    pub(crate) tsc_hz: Option<f64>,
    source: Source,
}

/// Where a timed region's ticks come from: one match, the TSC's arm first, as before the tests'
/// clock was added.
#[derive(Debug, Clone, Copy)]
enum Source {
    /// The TSC (or aarch64's counter) at `tsc_hz`.
    Counter,
    /// Nanoseconds of the monotonic clock since this instant.
    Monotonic(Instant),
    /// The tests' virtual clock (`crate::virtual_clock`).
    Virtual,
}

impl Timer {
    /// Detects the TSC and measures its rate against the monotonic clock over `calibrate`.
    pub(crate) fn detect(calibrate: Duration) -> Timer {
        if crate::virtual_clock::on() {
            return Timer {
                tsc_hz: None,
                source: Source::Virtual,
            };
        }
        if !tsc_invariant() {
            return Timer {
                tsc_hz: None,
                source: Source::Monotonic(Instant::now()),
            };
        }
        let hz = fixed_rate().unwrap_or_else(|| {
            let (t0, c0) = (Instant::now(), read_tsc());
            std::thread::sleep(calibrate);
            let (t1, c1) = (Instant::now(), read_tsc());
            (c1 - c0) as f64 / (t1 - t0).as_secs_f64()
        });
        Timer {
            tsc_hz: Some(hz),
            source: Source::Counter,
        }
    }

    /// The monotonic clock only (for tests and machines without an invariant TSC).
    #[cfg(test)]
    pub(crate) fn monotonic() -> Timer {
        Timer {
            tsc_hz: None,
            source: Source::Monotonic(Instant::now()),
        }
    }

    /// Opens a timed region: `lfence; rdtsc; lfence`, so nothing before it is still running and
    /// nothing after it has started.
    #[inline(always)]
    pub(crate) fn start(&self) -> u64 {
        match self.source {
            Source::Counter => tsc_begin(),
            Source::Monotonic(o) => o.elapsed().as_nanos() as u64,
            Source::Virtual => crate::virtual_clock::now(),
        }
    }

    /// Closes a timed region: `rdtscp; lfence`, after everything in it has finished.
    #[inline(always)]
    pub(crate) fn stop(&self) -> u64 {
        match self.source {
            Source::Counter => tsc_end(),
            Source::Monotonic(o) => o.elapsed().as_nanos() as u64,
            Source::Virtual => crate::virtual_clock::now(),
        }
    }

    /// Opens a region timed inside real work (in situ): a plain `rdtsc`, no fences. About 25 ns
    /// cheaper per region than `start`/`stop` on Zen 4 (24 against 52 ns added around 64 multiply-adds);
    /// the read may drift by a few tens of cycles into the work around it, which a call timed in a
    /// handshake (0.1-100 µs) can carry and a phase loop's single call cannot.
    #[inline(always)]
    pub(crate) fn start_light(&self) -> u64 {
        match self.source {
            Source::Counter => read_tsc(),
            Source::Monotonic(o) => o.elapsed().as_nanos() as u64,
            Source::Virtual => crate::virtual_clock::now(),
        }
    }

    /// Closes a region opened by `start_light`: `rdtscp`, which waits for the timed work to finish.
    #[inline(always)]
    pub(crate) fn stop_light(&self) -> u64 {
        match self.source {
            Source::Counter => tsc_end_light(),
            Source::Monotonic(o) => o.elapsed().as_nanos() as u64,
            Source::Virtual => crate::virtual_clock::now(),
        }
    }

    /// Nanoseconds in `ticks` (TSC cycles, or nanoseconds already).
    pub(crate) fn ns(&self, ticks: u64) -> f64 {
        match self.tsc_hz {
            Some(hz) => ticks as f64 * 1e9 / hz,
            None => ticks as f64,
        }
    }

    /// Whether the counter's ticks are the TSC's cycles (aarch64's counter ticks are not cycles).
    pub(crate) fn counts_cycles(&self) -> bool {
        self.tsc_hz.is_some() && cfg!(target_arch = "x86_64")
    }

    /// One tick, nanoseconds: a sample is only as fine as this (CNTVCT_EL0 at 25 MHz: 40 ns).
    pub(crate) fn resolution_ns(&self) -> f64 {
        self.tsc_hz.map_or(1.0, |hz| 1e9 / hz)
    }

    /// Median of 10,001 empty timed regions: (nanoseconds, cycles where counted). A counter coarser
    /// than one region reads 0 or 1 tick for most of them, so where the median is 2 ticks or fewer
    /// the cost is the mean over one span of 10,001 regions instead.
    pub(crate) fn overhead(&self) -> (f64, Option<f64>) {
        const N: usize = 10_001;
        let mut v: Vec<u64> = (0..N)
            .map(|_| {
                let a = self.start();
                let b = self.stop();
                b.wrapping_sub(a)
            })
            .collect();
        v.sort_unstable();
        let mut ticks = v[v.len() / 2] as f64;
        if ticks <= 2.0 {
            let a = self.start();
            for _ in 0..N {
                std::hint::black_box(self.start());
                std::hint::black_box(self.stop());
            }
            ticks = self.stop().wrapping_sub(a) as f64 / N as f64;
        }
        let ns = match self.tsc_hz {
            Some(hz) => ticks * 1e9 / hz,
            None => ticks,
        };
        (ns, self.counts_cycles().then_some(ticks))
    }
}

/// Whether the fenced TSC reads below can be used: the TSC is invariant (CPUID 0x80000007 EDX bit
/// 8; Intel SDM vol. 3B 18.17.1, AMD APM vol. 3 E.4.5) and RDTSCP, which closes every region, exists
/// (CPUID 0x80000001 EDX bit 27; Intel SDM vol. 2A CPUID, AMD APM vol. 3 E.4.2). They are separate
/// bits: a hypervisor can hide either.
#[cfg(target_arch = "x86_64")]
fn tsc_invariant() -> bool {
    use std::arch::x86_64::__cpuid;
    // The extended leaves are checked to exist before they are read.
    let max = __cpuid(0x8000_0000).eax;
    let rdtscp = max >= 0x8000_0001 && __cpuid(0x8000_0001).edx & (1 << 27) != 0;
    let invariant = max >= 0x8000_0007 && __cpuid(0x8000_0007).edx & (1 << 8) != 0;
    rdtscp && invariant
}

/// aarch64's generic timer runs at a constant rate by the architecture (Arm ARM D12.1), and Linux
/// gives user space its count.
#[cfg(target_arch = "aarch64")]
fn tsc_invariant() -> bool {
    true
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
fn tsc_invariant() -> bool {
    false
}

/// The counter's rate where the hardware states it (CNTFRQ_EL0); the TSC's is measured.
#[cfg(target_arch = "aarch64")]
fn fixed_rate() -> Option<f64> {
    crate::cntvct::rate()
}

#[cfg(not(target_arch = "aarch64"))]
fn fixed_rate() -> Option<f64> {
    None
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn read_tsc() -> u64 {
    // SAFETY: RDTSC has no preconditions on x86_64.
    unsafe { std::arch::x86_64::_rdtsc() }
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn tsc_begin() -> u64 {
    use std::arch::x86_64::{_mm_lfence, _rdtsc};
    // SAFETY: LFENCE and RDTSC have no preconditions on x86_64 (SSE2 is baseline).
    unsafe {
        _mm_lfence();
        let t = _rdtsc();
        _mm_lfence();
        t
    }
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn tsc_end() -> u64 {
    use std::arch::x86_64::{__rdtscp, _mm_lfence};
    let mut aux = 0u32;
    // SAFETY: `Timer::detect` uses the TSC only where CPUID reports RDTSCP (`tsc_invariant`);
    // `aux` is a valid out-pointer.
    unsafe {
        let t = __rdtscp(&mut aux);
        _mm_lfence();
        t
    }
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn tsc_end_light() -> u64 {
    let mut aux = 0u32;
    // SAFETY: as in `tsc_end`.
    unsafe { std::arch::x86_64::__rdtscp(&mut aux) }
}

#[cfg(target_arch = "aarch64")]
// The in-situ pair: a plain read to open, `isb; mrs` to close (it waits for the work, as rdtscp does).
use crate::cntvct::{begin as tsc_begin, end as tsc_end, end as tsc_end_light, read as read_tsc};

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
fn read_tsc() -> u64 {
    0
}
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
fn tsc_end_light() -> u64 {
    0
}
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
fn tsc_begin() -> u64 {
    0
}
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
fn tsc_end() -> u64 {
    0
}

/// Pins this thread to the last core (core 0 takes most interrupts); returns its id.
pub fn pin() -> Option<usize> {
    let ids = core_affinity::get_core_ids()?;
    let last = *ids.last()?;
    core_affinity::set_for_current(last).then_some(last.id)
}

/// Jiffies of one CPU from /proc/stat: (steal, total). `None` where /proc/stat is unavailable.
pub(crate) fn cpu_jiffies(core: Option<usize>) -> Option<(u64, u64)> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let label = core.map_or("cpu".to_string(), |c| format!("cpu{c}"));
    parse_jiffies(&stat, &label)
}

fn parse_jiffies(stat: &str, label: &str) -> Option<(u64, u64)> {
    let line = stat
        .lines()
        .find(|l| l.split_whitespace().next() == Some(label))?;
    let fields: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .filter_map(|f| f.parse().ok())
        .collect();
    // user nice system idle iowait irq softirq steal [guest guest_nice]; guest time is already
    // counted in user, so the total stops at steal (proc(5)).
    let total = fields.iter().take(8).sum();
    Some((*fields.get(7)?, total))
}

/// Nanoseconds this thread has waited on a run queue (the second field of
/// /proc/thread-self/schedstat, Documentation/scheduler/sched-stats.rst): time it was runnable but
/// another task had the CPU. Unlike /proc/stat's steal, counted in nanoseconds.
pub(crate) fn run_delay_ns() -> Option<u64> {
    parse_schedstat(&std::fs::read_to_string("/proc/thread-self/schedstat").ok()?)
}

fn parse_schedstat(text: &str) -> Option<u64> {
    text.split_whitespace().nth(1)?.parse().ok()
}

/// One phase's raw measurement.
#[derive(Debug, Clone, Default)]
pub(crate) struct Raw {
    /// Per call (a batch's total / its calls).
    pub(crate) samples_ns: Vec<u64>,
    pub(crate) cycles: Vec<u64>,
    pub(crate) steal: u64,
    pub(crate) jiffies: u64,
    pub(crate) verified: usize,
    pub(crate) warmup: usize,
    /// Run-queue wait and wall time of the chunks, nanoseconds.
    pub(crate) run_delay_ns: u64,
    pub(crate) wall_ns: u64,
    /// Sum of the timed regions, nanoseconds.
    pub(crate) timed_ns: f64,
    /// The calls timed in a handshake's state (`situ_samples`), nanoseconds each.
    pub(crate) situ_ns: Vec<u64>,
}

/// A phase being measured: its case, its target count and what it has so far.
pub(crate) struct Slot {
    pub(crate) case: Box<dyn Case>,
    /// Samples to take.
    pub(crate) target: usize,
    pub(crate) reason: Reason,
    /// Calls per sample.
    pub(crate) batch: usize,
    /// Share of calls whose output is kept and verified after the chunk (the last always).
    pub(crate) verify_share: f64,
    /// Whether the first timed call's output is checked too: not when a check costs more than the
    /// call and more than a millisecond (SLH-DSA-128s keygen, checked by a signature of seconds),
    /// where the warm-up's checked first output stands for it.
    pub(crate) check_first: bool,
    pub(crate) raw: Raw,
    /// Median warm-up call, nanoseconds.
    pub(crate) estimate_ns: f64,
    /// Whether the calls are also timed in a handshake's state (`situ_samples`).
    pub(crate) situ: bool,
    /// Calls made so far (the index of the next call).
    calls: usize,
    pub(crate) error: Option<anyhow::Error>,
}

impl Slot {
    pub(crate) fn new(case: Box<dyn Case>) -> Slot {
        Slot {
            case,
            target: 0,
            reason: Reason::Default,
            batch: 1,
            verify_share: 1.0,
            check_first: true,
            raw: Raw::default(),
            estimate_ns: f64::INFINITY,
            situ: false,
            calls: 0,
            error: None,
        }
    }
}

/// Warm-up: runs the case until `warmup_ms` has passed (at least one call); the first output is
/// verified. Sets the estimate (median call), the batch and the share of outputs to verify so that
/// checking stays within half the timed time. Returns the estimate per sample (batch x call).
pub(crate) fn warm_up(
    slot: &mut Slot,
    settings: &Settings,
    timer: &Timer,
    overhead_ns: f64,
) -> Result<f64> {
    let start = Instant::now();
    let mut times = Vec::new();
    let mut verify_ns = 0.0;
    let mut i = 0;
    // One call at least (its output is checked; for a call slower than the warm-up, as
    // SLH-DSA-128s signing at 0.2-1.3 s, more would only spend the budget), then until the
    // warm-up time is spent.
    while i < 1 || (start.elapsed() < Duration::from_millis(settings.warmup_ms) && i < 10_000) {
        slot.case.prepare(i, 0)?;
        let t0 = timer.start();
        slot.case.run(0);
        let t1 = timer.stop();
        times.push(timer.ns(t1.wrapping_sub(t0)));
        if i == 0 {
            // The first output of every phase is checked before anything is timed.
            slot.case.keep(0);
            let v0 = Instant::now();
            slot.raw.verified += slot.case.verify_kept()?;
            verify_ns = v0.elapsed().as_nanos() as f64;
        }
        i += 1;
    }
    times.sort_by(f64::total_cmp);
    slot.estimate_ns = times[times.len() / 2];
    slot.raw.warmup = i;
    slot.batch = batch_for(slot.estimate_ns, overhead_ns);
    slot.case.set_batch(slot.batch);
    // A millisecond's check is always worth it; beyond that, only if the call costs as much.
    slot.check_first = verify_ns <= slot.estimate_ns.max(1e6);
    slot.verify_share = if verify_ns > 0.0 {
        (slot.estimate_ns / (2.0 * verify_ns)).min(1.0)
    } else {
        1.0
    };
    Ok(slot.estimate_ns * slot.batch as f64)
}

/// Whether call `j` of `total` is kept for verification: the first (when `first`), the last, and
/// an even spread of `share` of the rest.
pub(crate) fn chosen(j: usize, total: usize, share: f64, first: bool) -> bool {
    (first && j == 0)
        || j + 1 == total
        || ((j + 1) as f64 * share).floor() > (j as f64 * share).floor()
}

/// The untimed calls before each chunk, nanoseconds' worth at the warm-up's estimate: what brings
/// back the caches and predictors the previous phases took. With one call a phase's median
/// depended on which phases shared its process (the methodology page gives the measurement).
pub(crate) const LEAD_IN_NS: f64 = 200_000.0;

/// How many untimed calls of `estimate_ns` fill `LEAD_IN_NS`: at least one, at most 100,000.
pub(crate) fn lead_in_calls(estimate_ns: f64) -> usize {
    ((LEAD_IN_NS / estimate_ns.max(1.0)).ceil() as usize).clamp(1, 100_000)
}

/// Runs `n` samples of a slot. Before the clock: untimed calls for `LEAD_IN_NS` to bring back the
/// caches the previous phase took (unless a call costs over a millisecond), then each sample's
/// inputs. The timed region holds the sample's calls and nothing else; outputs chosen for
/// verification are set aside (a move) and checked after the chunk.
pub(crate) fn run_chunk(
    slot: &mut Slot,
    n: usize,
    timer: &Timer,
    core: Option<usize>,
) -> Result<()> {
    if n == 0 {
        return Ok(());
    }
    let k = slot.batch.max(1);
    let total_calls = slot.target * k;
    if slot.estimate_ns < 1e6 {
        for _ in 0..lead_in_calls(slot.estimate_ns) {
            slot.case.prepare(slot.calls, 0)?;
            slot.case.run(0);
        }
    }
    let before = cpu_jiffies(core);
    let delay0 = run_delay_ns();
    let wall0 = Instant::now();
    for _ in 0..n {
        let first = slot.calls;
        for s in 0..k {
            slot.case.prepare(first + s, s)?;
        }
        let t0 = timer.start();
        for s in 0..k {
            slot.case.run(s);
        }
        let t1 = timer.stop();
        let ticks = t1.wrapping_sub(t0);
        for s in 0..k {
            if chosen(first + s, total_calls, slot.verify_share, slot.check_first) {
                slot.case.keep(s);
            }
        }
        let ns = timer.ns(ticks);
        slot.raw.timed_ns += ns;
        slot.raw.samples_ns.push((ns / k as f64).round() as u64);
        if timer.counts_cycles() {
            slot.raw
                .cycles
                .push((ticks as f64 / k as f64).round() as u64);
        }
        slot.calls += k;
    }
    slot.raw.wall_ns += wall0.elapsed().as_nanos() as u64;
    if let (Some(d0), Some(d1)) = (delay0, run_delay_ns()) {
        slot.raw.run_delay_ns += d1.saturating_sub(d0);
    }
    if let (Some((s0, j0)), Some((s1, j1))) = (before, cpu_jiffies(core)) {
        slot.raw.steal += s1.saturating_sub(s0);
        slot.raw.jiffies += j1.saturating_sub(j0);
    }
    slot.raw.verified += slot.case.verify_kept()?;
    if slot.situ {
        situ_samples(slot, n.min(SITU_PER_CHUNK), timer)?;
    }
    Ok(())
}

/// What a call in a real handshake follows, reproduced before each call timed in a handshake's
/// state: the bytes written through the caches (the parsing, record buffers and system calls
/// between two crypto calls; 1 MiB is the L2 of this project's Zen 5 VM by its
/// /sys/devices/system/cpu/cpu0/cache/index2/size, and more than its L1d of 48 KiB) and the wait for the peer's flight (a loopback round trip is 30-70 µs; the kernel's timer
/// slack, 50 µs, lengthens the sleep). A recipe, not a replica: `insitu`'s per-call table sets
/// its medians beside the calls timed in real handshakes.
pub(crate) const SITU_EVICT_BYTES: usize = 1 << 20;
pub(crate) const SITU_WAIT: Duration = Duration::from_micros(100);
/// Calls in a handshake's state after each chunk, at most: as many as the chunk timed, up to this
/// (make run's 100 calls a process in 10 rounds: 10 a chunk, 100 a process).
pub(crate) const SITU_PER_CHUNK: usize = 20;

/// Times `n` calls one at a time, each after `SITU_EVICT_BYTES` written and `SITU_WAIT` slept
/// (untimed), then its inputs made, as a handshake parses the message a call's input comes in just
/// before it; between the in-situ clock pair (`Timer::start_light`), as the real handshakes time
/// theirs. Each call takes the next input (a verification the next pooled signature); the last
/// call's output is checked.
pub(crate) fn situ_samples(slot: &mut Slot, n: usize, timer: &Timer) -> Result<()> {
    SITU_BUFFER.with_borrow_mut(|junk| -> Result<()> {
        for j in 0..n {
            // A cache line at a time, each write depending on the line's old value.
            for (i, b) in junk.iter_mut().enumerate().step_by(64) {
                *b = b.wrapping_add(i as u8);
            }
            std::hint::black_box(&mut *junk);
            std::thread::sleep(SITU_WAIT);
            slot.case.prepare(slot.calls + j, 0)?;
            let t0 = timer.start_light();
            slot.case.run(0);
            let t1 = timer.stop_light();
            slot.raw
                .situ_ns
                .push(timer.ns(t1.wrapping_sub(t0)).round() as u64);
            if j + 1 == n {
                slot.case.keep(0);
            }
        }
        Ok(())
    })?;
    slot.raw.verified += slot.case.verify_kept()?;
    Ok(())
}

thread_local! {
    /// What `situ_samples` writes through, made (and its pages faulted in) once per thread, so
    /// that no call in state follows the kernel's page faults.
    static SITU_BUFFER: std::cell::RefCell<Vec<u8>> = std::cell::RefCell::new(vec![1u8; SITU_EVICT_BYTES]);
}

/// How many of `target` samples round `r` of `rounds` takes (spreads the remainder).
pub(crate) fn chunk_size(target: usize, rounds: usize, r: usize) -> usize {
    let rounds = rounds.max(1);
    target * (r + 1) / rounds - target * r / rounds
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    #[test]
    fn budget_sets_iterations() {
        let s = Settings::default();
        assert_eq!(iterations_for(&s, 30_000.0), (1000, Reason::Default)); // 30 us: 66,666 fit
        assert_eq!(iterations_for(&s, 10_000_000.0), (200, Reason::Budget)); // 10 ms: 200 fit
        assert_eq!(iterations_for(&s, 200_000_000.0), (10, Reason::Budget)); // 200 ms: exactly the minimum fits
        assert_eq!(iterations_for(&s, 1.4e9), (10, Reason::Floor)); // 1.4 s: 1 fits, the minimum is timed
        let forced = Settings {
            forced: Some(3),
            ..Settings::default()
        };
        assert_eq!(iterations_for(&forced, 1.0), (3, Reason::Forced));
    }

    #[test]
    fn short_calls_are_batched_until_the_timer_is_under_one_percent() {
        // Timer 40 ns: calls of 4 us and more are timed alone; 881 ns needs ceil(4000 / 881) = 5.
        assert_eq!(batch_for(4000.0, 40.0), 1);
        assert_eq!(batch_for(881.0, 40.0), 5);
        assert_eq!(batch_for(1.0, 40.0), MAX_BATCH);
        assert_eq!(batch_for(0.0, 40.0), 1);
    }

    #[test]
    fn a_chunks_lead_in_fills_its_time_with_at_least_one_call() {
        assert_eq!(lead_in_calls(10_000.0), 20); // 10 µs: 20 calls make 200 µs
        assert_eq!(lead_in_calls(53.0), 3_774); // ceil(200,000 / 53)
        assert_eq!(lead_in_calls(500_000.0), 1); // longer than the lead-in: one call
        assert_eq!(lead_in_calls(0.0), 100_000); // an estimate under one tick: the cap
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
    fn verification_share_keeps_first_last_and_an_even_spread() {
        let kept: Vec<usize> = (0..10).filter(|&j| chosen(j, 10, 0.25, true)).collect();
        assert_eq!(kept, vec![0, 3, 7, 9]);
        assert_eq!((0..10).filter(|&j| chosen(j, 10, 1.0, true)).count(), 10);
        assert_eq!(
            (0..10)
                .filter(|&j| chosen(j, 10, 0.0, true))
                .collect::<Vec<_>>(),
            vec![0, 9]
        );
        // A check dearer than the call: the last only (the warm-up checked a first output).
        assert_eq!(
            (0..4)
                .filter(|&j| chosen(j, 4, 0.1, false))
                .collect::<Vec<_>>(),
            vec![3]
        );
    }

    #[test]
    fn proc_stat_steal_and_schedstat_run_delay() {
        let stat = "cpu  10 0 5 100 0 0 0 7 0 0\ncpu1 4 0 2 50 1 0 0 3 9 0\n";
        assert_eq!(parse_jiffies(stat, "cpu1"), Some((3, 60)));
        assert_eq!(parse_jiffies(stat, "cpu"), Some((7, 122)));
        assert_eq!(parse_jiffies(stat, "cpu2"), None);
        assert_eq!(parse_schedstat("123456 7890 12\n"), Some(7890));
        assert_eq!(parse_schedstat("garbage"), None);
        assert!(run_delay_ns().is_some(), "this kernel has schedstat");
    }

    /// A case that records the order of every call made on it.
    struct Recorder(Arc<Mutex<Vec<String>>>);

    impl Case for Recorder {
        fn prepare(&mut self, i: usize, s: usize) -> Result<()> {
            self.0.lock().unwrap().push(format!("prepare {i} {s}"));
            Ok(())
        }
        fn run(&mut self, s: usize) {
            self.0.lock().unwrap().push(format!("run {s}"));
        }
        fn keep(&mut self, s: usize) {
            self.0.lock().unwrap().push(format!("keep {s}"));
        }
        fn verify_kept(&mut self) -> Result<usize> {
            self.0.lock().unwrap().push("verify".into());
            Ok(1)
        }
        fn set_batch(&mut self, _: usize) {}
    }

    #[test]
    fn nothing_but_inputs_and_moves_happens_between_two_timed_calls() {
        for batch in [1, 3] {
            let log = Arc::new(Mutex::new(Vec::new()));
            let mut slot = Slot::new(Box::new(Recorder(log.clone())));
            (slot.target, slot.batch, slot.verify_share, slot.estimate_ns) = (6, batch, 0.5, 10.0);
            run_chunk(&mut slot, 6, &Timer::monotonic(), None).unwrap();
            let log = log.lock().unwrap().clone();
            // The untimed lead-in calls, then timed calls; verification only after the last one.
            let lead = lead_in_calls(10.0);
            let runs: Vec<usize> = log
                .iter()
                .enumerate()
                .filter(|(_, e)| e.starts_with("run"))
                .map(|(i, _)| i)
                .collect();
            let (first, last) = (runs[lead], *runs.last().unwrap());
            assert!(
                log[first..=last].iter().all(|e| !e.starts_with("verify")),
                "{log:?}"
            );
            assert_eq!(log.last().map(String::as_str), Some("verify"));
            assert_eq!(log.iter().filter(|e| *e == "verify").count(), 1);
            // Within a batch the calls follow each other with nothing in between.
            for w in log[first..=last].windows(2) {
                if w[0].starts_with("run") && !w[1].starts_with("run") {
                    assert!(
                        w[1].starts_with("keep") || w[1].starts_with("prepare"),
                        "{w:?}"
                    );
                }
            }
            // Every timed call's inputs were made before its batch's clock started.
            assert_eq!(
                log.iter().filter(|e| e.starts_with("run")).count(),
                lead + 6 * batch
            );
            assert_eq!(slot.raw.samples_ns.len(), 6);
        }
    }

    #[test]
    fn a_phase_in_a_handshakes_state_times_single_calls_after_the_chunk() {
        let log = Arc::new(Mutex::new(Vec::new()));
        let mut slot = Slot::new(Box::new(Recorder(log.clone())));
        (slot.target, slot.batch, slot.verify_share, slot.estimate_ns) = (30, 3, 0.5, 10.0);
        slot.situ = true;
        run_chunk(&mut slot, 30, &Timer::monotonic(), None).unwrap();
        // The chunk's 30 samples of three calls, then SITU_PER_CHUNK single calls in slot 0,
        // each prepared before it; the last one's output checked after them.
        assert_eq!(slot.raw.samples_ns.len(), 30);
        assert_eq!(slot.raw.situ_ns.len(), SITU_PER_CHUNK);
        let log = log.lock().unwrap().clone();
        let verifies: Vec<usize> = log
            .iter()
            .enumerate()
            .filter(|(_, e)| *e == "verify")
            .map(|(i, _)| i)
            .collect();
        assert_eq!(verifies.len(), 2, "{log:?}");
        let tail = &log[verifies[0] + 1..];
        let runs = tail.iter().filter(|e| e.starts_with("run")).count();
        assert_eq!(runs, SITU_PER_CHUNK);
        assert!(tail
            .iter()
            .filter(|e| e.starts_with("run"))
            .all(|e| e == "run 0"));
        for w in tail.windows(2).filter(|w| w[1].starts_with("run")) {
            assert!(w[0].starts_with("prepare"), "{w:?}");
        }
        // Each call its own input (a verification the next pooled signature).
        let mut inputs: Vec<&String> = tail.iter().filter(|e| e.starts_with("prepare")).collect();
        inputs.dedup();
        assert_eq!(inputs.len(), SITU_PER_CHUNK, "{inputs:?}");
        assert_eq!(tail[tail.len() - 2..], ["keep 0", "verify"]);
        // A chunk shorter than SITU_PER_CHUNK times as many in state as it did in the loop.
        let mut short = Slot::new(Box::new(Recorder(Arc::new(Mutex::new(Vec::new())))));
        (short.target, short.estimate_ns, short.situ) = (4, 10.0, true);
        run_chunk(&mut short, 4, &Timer::monotonic(), None).unwrap();
        assert_eq!(short.raw.situ_ns.len(), 4);
    }
}
