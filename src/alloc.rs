//! Memory and CPU per handshake: a counting global allocator for Rust allocations, OpenSSL's
//! allocation hooks for C allocations inside libcrypto / libssl, and per-thread / per-process CPU
//! clocks. Counting is off unless a handshake command turns it on, so crypto phases are not slowed.

use crate::results::AllocCounters;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering::Relaxed};

static ENABLED: AtomicBool = AtomicBool::new(false);
static RUST_ALLOCS: AtomicU64 = AtomicU64::new(0);
static RUST_BYTES: AtomicU64 = AtomicU64::new(0);
static C_ALLOCS: AtomicU64 = AtomicU64::new(0);
static C_BYTES: AtomicU64 = AtomicU64::new(0);
// Live heap (capacity's memory per connection): on for the whole life of a capacity server, so
// every free it sees matches an allocation it saw. C sizes come from malloc_usable_size on both
// sides, which is what the allocator really holds.
static LIVE: AtomicBool = AtomicBool::new(false);
static RUST_LIVE: AtomicI64 = AtomicI64::new(0);
static C_LIVE: AtomicI64 = AtomicI64::new(0);
static ALL_LIVE: AtomicI64 = AtomicI64::new(0);
static PEAK: AtomicI64 = AtomicI64::new(0);

fn live_add(counter: &AtomicI64, bytes: i64) {
    counter.fetch_add(bytes, Relaxed);
    let now = ALL_LIVE.fetch_add(bytes, Relaxed) + bytes;
    PEAK.fetch_max(now, Relaxed);
}

/// The binary installs this as its global allocator (src/main.rs).
pub struct Counting;

// SAFETY: every call is forwarded unchanged to the system allocator; the counters are atomics.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if ENABLED.load(Relaxed) {
            RUST_ALLOCS.fetch_add(1, Relaxed);
            RUST_BYTES.fetch_add(layout.size() as u64, Relaxed);
        }
        if LIVE.load(Relaxed) {
            live_add(&RUST_LIVE, layout.size() as i64);
        }
        // SAFETY: the caller's contract for `alloc` is passed through.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if LIVE.load(Relaxed) {
            live_add(&RUST_LIVE, -(layout.size() as i64));
        }
        // SAFETY: `ptr` came from `System.alloc` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if ENABLED.load(Relaxed) {
            RUST_ALLOCS.fetch_add(1, Relaxed);
            RUST_BYTES.fetch_add(new_size as u64, Relaxed);
        }
        if LIVE.load(Relaxed) {
            live_add(&RUST_LIVE, new_size as i64 - layout.size() as i64);
        }
        // SAFETY: the caller's contract for `realloc` is passed through.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

type MallocFn =
    unsafe extern "C" fn(usize, *const std::ffi::c_char, std::ffi::c_int) -> *mut std::ffi::c_void;
type ReallocFn = unsafe extern "C" fn(
    *mut std::ffi::c_void,
    usize,
    *const std::ffi::c_char,
    std::ffi::c_int,
) -> *mut std::ffi::c_void;
type FreeFn = unsafe extern "C" fn(*mut std::ffi::c_void, *const std::ffi::c_char, std::ffi::c_int);

extern "C" {
    // OpenSSL 3: crypto/mem.c. Only succeeds before OpenSSL's first allocation.
    fn CRYPTO_set_mem_functions(m: MallocFn, r: ReallocFn, f: FreeFn) -> std::ffi::c_int;
}

unsafe extern "C" fn c_malloc(
    n: usize,
    _: *const std::ffi::c_char,
    _: std::ffi::c_int,
) -> *mut std::ffi::c_void {
    if ENABLED.load(Relaxed) {
        C_ALLOCS.fetch_add(1, Relaxed);
        C_BYTES.fetch_add(n as u64, Relaxed);
    }
    // SAFETY: plain malloc; usable size of what it returned.
    unsafe {
        let p = libc::malloc(n);
        if LIVE.load(Relaxed) && !p.is_null() {
            live_add(&C_LIVE, libc::malloc_usable_size(p) as i64);
        }
        p
    }
}

unsafe extern "C" fn c_realloc(
    p: *mut std::ffi::c_void,
    n: usize,
    _: *const std::ffi::c_char,
    _: std::ffi::c_int,
) -> *mut std::ffi::c_void {
    if ENABLED.load(Relaxed) {
        C_ALLOCS.fetch_add(1, Relaxed);
        C_BYTES.fetch_add(n as u64, Relaxed);
    }
    // SAFETY: `p` is null or came from c_malloc / c_realloc.
    unsafe {
        let live = LIVE.load(Relaxed);
        let before = if live && !p.is_null() {
            libc::malloc_usable_size(p) as i64
        } else {
            0
        };
        let q = libc::realloc(p, n);
        if live && !q.is_null() {
            live_add(&C_LIVE, libc::malloc_usable_size(q) as i64 - before);
        }
        q
    }
}

unsafe extern "C" fn c_free(
    p: *mut std::ffi::c_void,
    _: *const std::ffi::c_char,
    _: std::ffi::c_int,
) {
    // SAFETY: `p` is null or came from c_malloc / c_realloc.
    unsafe {
        if LIVE.load(Relaxed) && !p.is_null() {
            live_add(&C_LIVE, -(libc::malloc_usable_size(p) as i64));
        }
        libc::free(p)
    }
}

/// Routes OpenSSL's allocations through the counters; call before OpenSSL allocates anything.
/// Returns false if OpenSSL had already allocated (then C allocations are not counted).
pub fn hook_openssl() -> bool {
    // SAFETY: the three functions have the signatures OpenSSL 3 expects.
    unsafe { CRYPTO_set_mem_functions(c_malloc, c_realloc, c_free) == 1 }
}

/// Tracks live heap from now on; call first thing in a process that reports it (capacity server).
pub fn track_live() {
    LIVE.store(true, Relaxed);
}

/// (Rust, C) bytes in use since track_live.
pub(crate) fn live() -> (i64, i64) {
    (RUST_LIVE.load(Relaxed), C_LIVE.load(Relaxed))
}

/// Starts a new high-water mark at the bytes in use now; returns them.
pub(crate) fn reset_peak() -> i64 {
    let now = ALL_LIVE.load(Relaxed);
    PEAK.store(now, Relaxed);
    now
}

/// The most bytes in use since reset_peak.
pub(crate) fn peak() -> i64 {
    PEAK.load(Relaxed)
}

/// Bytes in use now (Rust + C).
pub(crate) fn live_total() -> i64 {
    ALL_LIVE.load(Relaxed)
}

pub(crate) fn enable(on: bool) {
    ENABLED.store(on, Relaxed);
}

/// The running totals of the counters.
pub(crate) fn counters() -> AllocCounters {
    AllocCounters {
        rust_allocs: RUST_ALLOCS.load(Relaxed),
        rust_bytes: RUST_BYTES.load(Relaxed),
        c_allocs: C_ALLOCS.load(Relaxed),
        c_bytes: C_BYTES.load(Relaxed),
    }
}

fn clock(id: libc::clockid_t) -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid out-pointer.
    unsafe { libc::clock_gettime(id, &mut ts) };
    ts.tv_sec as f64 * 1e9 + ts.tv_nsec as f64
}

/// CPU time of the calling thread, nanoseconds.
pub(crate) fn thread_cpu_ns() -> f64 {
    clock(libc::CLOCK_THREAD_CPUTIME_ID)
}

/// CLOCK_MONOTONIC, nanoseconds: one clock for every process and network namespace of the machine
/// (the emulator's and the clients' alike).
pub(crate) fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid out-pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Reads another clock (`read`) together with CLOCK_MONOTONIC: the other clock's reading and the
/// CLOCK_MONOTONIC time it was taken at, on `monotonic_ns`'s scale. A thread preempted between two
/// reads would put one clock's origin that long off the other's, and a connection's time line would
/// then end after its own clock (which `check` refuses): so the read is bracketed by two
/// CLOCK_MONOTONIC readings and taken again, a few times at most, until the bracket is tight.
pub(crate) fn with_monotonic<T>(mut read: impl FnMut() -> T) -> (T, u64) {
    /// A bracket this narrow holds no preemption, only the reads themselves; its midpoint is
    /// then well within the slack `check` gives a time line.
    const TIGHT_NS: u64 = 500;
    let mut bracketed = || {
        let before = monotonic_ns();
        let value = read();
        let bracket = monotonic_ns().saturating_sub(before);
        (value, before + bracket / 2, bracket)
    };
    let mut best = bracketed();
    for _ in 0..8 {
        if best.2 <= TIGHT_NS {
            break;
        }
        let next = bracketed();
        if next.2 < best.2 {
            best = next;
        }
    }
    (best.0, best.1)
}

/// A connection's clock: an `Instant` started now and its start on `monotonic_ns`'s scale, read
/// together (`with_monotonic`), for the time line its calls are placed on.
pub(crate) fn start_clock() -> (std::time::Instant, u64) {
    with_monotonic(std::time::Instant::now)
}

/// CPU time of the whole process (all threads), nanoseconds.
pub(crate) fn process_cpu_ns() -> f64 {
    clock(libc::CLOCK_PROCESS_CPUTIME_ID)
}
