//! Memory and CPU per handshake: a counting global allocator for Rust allocations, OpenSSL's
//! allocation hooks for C allocations inside libcrypto / libssl, and per-thread / per-process CPU
//! clocks. Counting is off unless a handshake command turns it on, so crypto phases are not slowed.

use crate::results::AllocCounters;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};

static ENABLED: AtomicBool = AtomicBool::new(false);
static RUST_ALLOCS: AtomicU64 = AtomicU64::new(0);
static RUST_BYTES: AtomicU64 = AtomicU64::new(0);
static C_ALLOCS: AtomicU64 = AtomicU64::new(0);
static C_BYTES: AtomicU64 = AtomicU64::new(0);

/// The binary installs this as its global allocator (src/main.rs).
pub struct Counting;

// SAFETY: every call is forwarded unchanged to the system allocator; the counters are atomics.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if ENABLED.load(Relaxed) {
            RUST_ALLOCS.fetch_add(1, Relaxed);
            RUST_BYTES.fetch_add(layout.size() as u64, Relaxed);
        }
        // SAFETY: the caller's contract for `alloc` is passed through.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System.alloc` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if ENABLED.load(Relaxed) {
            RUST_ALLOCS.fetch_add(1, Relaxed);
            RUST_BYTES.fetch_add(new_size as u64, Relaxed);
        }
        // SAFETY: the caller's contract for `realloc` is passed through.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

type MallocFn = unsafe extern "C" fn(usize, *const std::ffi::c_char, std::ffi::c_int) -> *mut std::ffi::c_void;
type ReallocFn = unsafe extern "C" fn(*mut std::ffi::c_void, usize, *const std::ffi::c_char, std::ffi::c_int) -> *mut std::ffi::c_void;
type FreeFn = unsafe extern "C" fn(*mut std::ffi::c_void, *const std::ffi::c_char, std::ffi::c_int);

extern "C" {
    // OpenSSL 3: crypto/mem.c. Only succeeds before OpenSSL's first allocation.
    fn CRYPTO_set_mem_functions(m: MallocFn, r: ReallocFn, f: FreeFn) -> std::ffi::c_int;
}

unsafe extern "C" fn c_malloc(n: usize, _: *const std::ffi::c_char, _: std::ffi::c_int) -> *mut std::ffi::c_void {
    if ENABLED.load(Relaxed) {
        C_ALLOCS.fetch_add(1, Relaxed);
        C_BYTES.fetch_add(n as u64, Relaxed);
    }
    // SAFETY: plain malloc.
    unsafe { libc::malloc(n) }
}

unsafe extern "C" fn c_realloc(p: *mut std::ffi::c_void, n: usize, _: *const std::ffi::c_char, _: std::ffi::c_int) -> *mut std::ffi::c_void {
    if ENABLED.load(Relaxed) {
        C_ALLOCS.fetch_add(1, Relaxed);
        C_BYTES.fetch_add(n as u64, Relaxed);
    }
    // SAFETY: `p` is null or came from c_malloc / c_realloc.
    unsafe { libc::realloc(p, n) }
}

unsafe extern "C" fn c_free(p: *mut std::ffi::c_void, _: *const std::ffi::c_char, _: std::ffi::c_int) {
    // SAFETY: `p` is null or came from c_malloc / c_realloc.
    unsafe { libc::free(p) }
}

/// Routes OpenSSL's allocations through the counters; call before OpenSSL allocates anything.
/// Returns false if OpenSSL had already allocated (then C allocations are not counted).
pub fn hook_openssl() -> bool {
    // SAFETY: the three functions have the signatures OpenSSL 3 expects.
    unsafe { CRYPTO_set_mem_functions(c_malloc, c_realloc, c_free) == 1 }
}

pub fn enable(on: bool) {
    ENABLED.store(on, Relaxed);
}

/// The running totals of the counters.
pub fn counters() -> AllocCounters {
    AllocCounters { rust_allocs: RUST_ALLOCS.load(Relaxed), rust_bytes: RUST_BYTES.load(Relaxed), c_allocs: C_ALLOCS.load(Relaxed), c_bytes: C_BYTES.load(Relaxed) }
}

fn clock(id: libc::clockid_t) -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid out-pointer.
    unsafe { libc::clock_gettime(id, &mut ts) };
    ts.tv_sec as f64 * 1e9 + ts.tv_nsec as f64
}

/// CPU time of the calling thread, nanoseconds.
pub fn thread_cpu_ns() -> f64 {
    clock(libc::CLOCK_THREAD_CPUTIME_ID)
}

/// CPU time of the whole process (all threads), nanoseconds.
pub fn process_cpu_ns() -> f64 {
    clock(libc::CLOCK_PROCESS_CPUTIME_ID)
}
