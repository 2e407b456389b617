//! In-situ timing: every cryptographic call a real handshake makes, timed where it happens and
//! summed per connection and per kind of call (`CallLabel`, shared with the results schema), on
//! each side. rustls's calls pass through a timing provider (`rustls_timed.rs`), libssl's calls
//! into libcrypto through linker wrappers (`openssl_wrap.rs`); both record into this thread's
//! recorder, which only counts while armed.

pub mod openssl_wrap;
pub mod rustls_timed;

use crate::measure::Timer;
pub use crate::results::CallLabel;
use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

/// Labels a record holds: every `CallLabel`, indexed by `label as usize`.
const LABELS: usize = CallLabel::COUNT;

/// One connection's in-situ figures on one side: nanoseconds and calls per label. Arrays, not
/// vectors: a server keeps one per connection while it serves, and taking one must not allocate
/// (see `sink`).
#[derive(Debug, Clone, Copy, Default, serde::Serialize, serde::Deserialize)]
pub struct Record {
    pub ns: [u64; LABELS],
    pub calls: [u32; LABELS],
    /// Bytes fed to the transcript hash.
    pub(crate) hashed_bytes: u64,
    /// When each label's calls ran: its first call's start and its last call's end, nanoseconds
    /// after `arm` (both 0 where no call was made).
    pub(crate) first_ns: [u64; LABELS],
    pub(crate) last_ns: [u64; LABELS],
    /// CLOCK_MONOTONIC at `arm`, nanoseconds: one clock for the client's and the server's
    /// processes, which puts the two sides' calls on one time line.
    pub(crate) armed_at_ns: u64,
}

impl Record {
    /// No call timed and nothing hashed.
    pub(crate) fn is_empty(&self) -> bool {
        self.calls.iter().all(|&c| c == 0) && self.hashed_bytes == 0
    }

    /// Adds the calls of `o`, timed in another window of the same connection: a server that
    /// serves every connection on one thread (quinn's, a datagram at a time) times each
    /// connection's share of its work apart and adds the windows up. The time line stays on one
    /// clock: each label's first start is the earlier of the two, its last end the later, both
    /// counted from the earlier window's arming.
    pub(crate) fn merge(&mut self, o: &Record) {
        if o.is_empty() {
            return;
        }
        if self.is_empty() {
            *self = *o;
            return;
        }
        let at = self.armed_at_ns.min(o.armed_at_ns);
        let (ds, d_o) = (self.armed_at_ns - at, o.armed_at_ns - at);
        for i in 0..LABELS {
            let (mine, theirs) = (self.calls[i] > 0, o.calls[i] > 0);
            (self.first_ns[i], self.last_ns[i]) = match (mine, theirs) {
                (true, true) => (
                    (self.first_ns[i] + ds).min(o.first_ns[i] + d_o),
                    (self.last_ns[i] + ds).max(o.last_ns[i] + d_o),
                ),
                (true, false) => (self.first_ns[i] + ds, self.last_ns[i] + ds),
                (false, true) => (o.first_ns[i] + d_o, o.last_ns[i] + d_o),
                (false, false) => (0, 0),
            };
            self.ns[i] += o.ns[i];
            self.calls[i] += o.calls[i];
        }
        self.hashed_bytes += o.hashed_bytes;
        self.armed_at_ns = at;
    }
}

/// Plain cells, not a `RefCell`: a timed call touches the recorder twice and every borrow check
/// there is on the handshake's path. Ticks are kept raw and turned into nanoseconds by `take`.
struct Recorder {
    armed: Cell<bool>,
    depth: Cell<u32>,
    ticks: [Cell<u64>; LABELS],
    calls: [Cell<u32>; LABELS],
    /// The tick at `arm`, and each label's first start and last end in ticks.
    start: Cell<u64>,
    first: [Cell<u64>; LABELS],
    last: [Cell<u64>; LABELS],
    armed_at: Cell<u64>,
    hashed: Cell<u64>,
}

thread_local! {
    static REC: Recorder = const {
        Recorder {
            armed: Cell::new(false),
            depth: Cell::new(0),
            ticks: [const { Cell::new(0) }; LABELS],
            calls: [const { Cell::new(0) }; LABELS],
            hashed: Cell::new(0),
            start: Cell::new(0),
            first: [const { Cell::new(0) }; LABELS],
            last: [const { Cell::new(0) }; LABELS],
            armed_at: Cell::new(0),
        }
    };
}

/// How many threads are armed. While none is, a wrapped call (a plain run, or a phase loop of the
/// openssl backend through the linker wrappers) returns after one load, without the thread-local
/// lookup. A thread always sees its own `arm`, so an armed thread never skips its own calls.
static ARMED_THREADS: AtomicUsize = AtomicUsize::new(0);

static TIMER: OnceLock<Timer> = OnceLock::new();

fn timer() -> &'static Timer {
    TIMER.get_or_init(|| Timer::detect(std::time::Duration::from_millis(50)))
}

/// Starts counting on this thread from zero.
pub fn arm() {
    let t = timer();
    REC.with(|r| {
        if !r.armed.replace(true) {
            ARMED_THREADS.fetch_add(1, Ordering::Relaxed);
        }
        r.depth.set(0);
        r.ticks.iter().for_each(|c| c.set(0));
        r.calls.iter().for_each(|c| c.set(0));
        r.hashed.set(0);
        r.first.iter().chain(&r.last).for_each(|c| c.set(0));
        let (start, armed_at) = crate::alloc::with_monotonic(|| t.start_light());
        r.armed_at.set(armed_at);
        r.start.set(start);
    });
}

/// Stops counting and returns what was counted since `arm`.
pub fn take() -> Record {
    let t = timer();
    REC.with(|r| {
        if r.armed.replace(false) {
            ARMED_THREADS.fetch_sub(1, Ordering::Relaxed);
        }
        let at = |c: &Cell<u64>| t.ns(c.get().saturating_sub(r.start.get())).round() as u64;
        let called = |i: usize| r.calls[i].get() > 0;
        Record {
            ns: std::array::from_fn(|i| t.ns(r.ticks[i].get()).round() as u64),
            calls: std::array::from_fn(|i| r.calls[i].get()),
            hashed_bytes: r.hashed.get(),
            first_ns: std::array::from_fn(|i| if called(i) { at(&r.first[i]) } else { 0 }),
            last_ns: std::array::from_fn(|i| if called(i) { at(&r.last[i]) } else { 0 }),
            armed_at_ns: r.armed_at.get(),
        }
    })
}

/// Where a server keeps its connections' records: room for `connections` made and touched up
/// front, so that keeping a record neither allocates nor faults a page in while connections are
/// served. A growing vector of records (two heap vectors each) cost the next loopback handshake
/// about 4 us on the Zen 4 VM (paired, 4,800 connections per variant, with and without keeping
/// them), twice what the timed calls cost.
pub fn sink(connections: usize) -> std::sync::Mutex<Vec<Record>> {
    let mut v = Vec::with_capacity(connections);
    // Every record written once; `black_box` keeps the writes from becoming a zeroed allocation
    // whose pages would still fault in while connections are served.
    v.extend((0..connections).map(|_| std::hint::black_box(Record::default())));
    v.clear();
    std::sync::Mutex::new(v)
}

pub(crate) fn armed() -> bool {
    REC.with(|r| r.armed.get())
}

/// Runs `f`, adding its time to `label` when armed and not inside another timed call (a signature
/// check inside a certificate check counts once, as the certificate check).
#[inline]
pub(crate) fn timed<R>(label: CallLabel, f: impl FnOnce() -> R) -> R {
    if ARMED_THREADS.load(Ordering::Relaxed) == 0 {
        return f();
    }
    // One thread-local lookup per call; `f` may nest another timed call (cells, no borrows).
    REC.with(|rec| {
        if !rec.armed.get() {
            return f();
        }
        let depth = rec.depth.get();
        rec.depth.set(depth + 1);
        if depth > 0 {
            let out = f();
            rec.depth.set(depth);
            return out;
        }
        let t = timer();
        let t0 = t.start_light();
        let out = f();
        let t1 = t.stop_light();
        rec.depth.set(0);
        let i = label as usize;
        rec.ticks[i].set(rec.ticks[i].get() + t1.wrapping_sub(t0));
        if rec.calls[i].get() == 0 {
            rec.first[i].set(t0);
        }
        rec.last[i].set(t1);
        rec.calls[i].set(rec.calls[i].get() + 1);
        out
    })
}

/// What one timed call costs beyond the call itself, in nanoseconds: an armed `timed` around an
/// empty closure, the median of 21 batches of 10,000 on this thread. Calls per handshake times this
/// is the timers' cost, estimated without the noise of two handshake medians.
pub(crate) fn call_cost_ns() -> f64 {
    const BATCH: u32 = 10_000;
    arm();
    let mut batches: Vec<f64> = (0..21)
        .map(|_| {
            let t = std::time::Instant::now();
            for _ in 0..BATCH {
                timed(CallLabel::HashUpdate, || std::hint::black_box(()));
            }
            t.elapsed().as_nanos() as f64 / f64::from(BATCH)
        })
        .collect();
    take();
    batches.sort_by(f64::total_cmp);
    batches[batches.len() / 2]
}

fn add_hashed(n: usize) {
    if ARMED_THREADS.load(Ordering::Relaxed) == 0 {
        return;
    }
    REC.with(|r| {
        if r.armed.get() {
            r.hashed.set(r.hashed.get() + n as u64);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sink_keeps_its_records_without_moving() {
        let sink = sink(100);
        let mut v = sink.lock().expect("not poisoned");
        assert!(v.is_empty() && v.capacity() >= 100);
        let at = v.as_ptr();
        for i in 0..100u64 {
            arm();
            timed(CallLabel::KdfExpand, || std::hint::black_box(i));
            v.push(take());
        }
        assert_eq!(v.as_ptr(), at, "no reallocation within the room made");
        assert!(v.iter().all(
            |r| r.calls[CallLabel::KdfExpand as usize] == 1 && r.calls.iter().sum::<u32>() == 1
        ));
    }

    #[test]
    fn a_record_says_when_each_label_ran() {
        arm();
        let spin = || {
            let t = std::time::Instant::now();
            while t.elapsed() < std::time::Duration::from_micros(50) {}
        };
        timed(CallLabel::SigSign, spin);
        timed(CallLabel::KdfExpand, spin);
        timed(CallLabel::SigSign, spin);
        let r = take();
        let (s, k) = (CallLabel::SigSign as usize, CallLabel::KdfExpand as usize);
        // Two signings around an expansion: the signings' span holds the expansion's, and each
        // span at least its calls' time (each end rounded to the nanosecond); 50 us a call, as
        // the monotonic clock spins, within 1% on the timer's calibrated counter.
        assert!(r.first_ns[s] < r.first_ns[k] && r.last_ns[k] < r.last_ns[s]);
        assert!(r.last_ns[s] - r.first_ns[s] + 1 >= r.ns[s] && r.ns[s] >= 99_000);
        assert!(
            r.last_ns[k] - r.first_ns[k] + 1 >= r.ns[k] && r.ns[k] >= 49_500,
            "{r:?}"
        );
        let untouched = CallLabel::SigVerify as usize;
        assert_eq!((r.first_ns[untouched], r.last_ns[untouched]), (0, 0));
        assert!(r.armed_at_ns > 0);
    }

    #[test]
    fn only_armed_outer_calls_count() {
        assert_eq!(timed(CallLabel::SigSign, || 7), 7);
        assert!(
            take().ns.iter().all(|n| *n == 0),
            "not armed: nothing counted"
        );
        arm();
        timed(CallLabel::SigVerifyCert, || {
            timed(CallLabel::SigVerify, || std::hint::black_box(1))
        });
        timed(CallLabel::KdfExpand, || ());
        let r = take();
        assert_eq!(r.calls[CallLabel::SigVerifyCert as usize], 1);
        assert_eq!(
            r.calls[CallLabel::SigVerify as usize],
            0,
            "a call inside a timed call is part of it"
        );
        assert_eq!(r.calls[CallLabel::KdfExpand as usize], 1);
        assert!(!armed());
    }

    #[test]
    fn windows_of_one_connection_add_up_on_one_clock() {
        let (k, s, v) = (
            CallLabel::KemEncaps as usize,
            CallLabel::SigSign as usize,
            CallLabel::SigVerify as usize,
        );
        // Armed at 1,000 ns: an encapsulation from 10 to 40 and a signing from 50 to 250 after it.
        let mut a = Record {
            armed_at_ns: 1_000,
            hashed_bytes: 300,
            ..Record::default()
        };
        (a.ns[k], a.calls[k], a.first_ns[k], a.last_ns[k]) = (30, 1, 10, 40);
        (a.ns[s], a.calls[s], a.first_ns[s], a.last_ns[s]) = (200, 1, 50, 250);
        // Armed at 5,000: a second signing from 5,100 to 5,300 and a verification from 5,400 to
        // 5,420, on the clock of the first window 4,100-4,300 and 4,400-4,420.
        let mut b = Record {
            armed_at_ns: 5_000,
            hashed_bytes: 50,
            ..Record::default()
        };
        (b.ns[s], b.calls[s], b.first_ns[s], b.last_ns[s]) = (200, 1, 100, 300);
        (b.ns[v], b.calls[v], b.first_ns[v], b.last_ns[v]) = (20, 1, 400, 420);
        let mut m = Record::default();
        m.merge(&b);
        m.merge(&Record::default());
        m.merge(&a);
        assert_eq!(m.armed_at_ns, 1_000);
        assert_eq!(
            (m.ns[s], m.calls[s], m.first_ns[s], m.last_ns[s]),
            (400, 2, 50, 4_300)
        );
        assert_eq!((m.ns[k], m.first_ns[k], m.last_ns[k]), (30, 10, 40));
        assert_eq!((m.ns[v], m.first_ns[v], m.last_ns[v]), (20, 4_400, 4_420));
        assert_eq!(m.hashed_bytes, 350);
        let none = CallLabel::KdfExpand as usize;
        assert_eq!(
            (m.calls[none], m.first_ns[none], m.last_ns[none]),
            (0, 0, 0)
        );
    }
}
