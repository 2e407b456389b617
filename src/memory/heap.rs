//! Peak heap of one call: the linker routes every malloc, calloc, realloc, free, posix_memalign
//! and aligned_alloc call in the pqprof executable through these wrappers (build.rs passes
//! `-Wl,--wrap=NAME` for every `fn __wrap_NAME` here, to the binary only: test programs keep the
//! plain allocator, so tests/memory.rs checks the wrapped figures through the binary). That is every heap allocation a crypto call
//! can make: Rust's global allocator (`alloc::Counting` forwards to `System`, which calls malloc),
//! liboqs, the vendored OpenSSL (CRYPTO_malloc calls malloc) and aws-lc (OPENSSL_malloc calls
//! malloc), all linked statically. Allocations made inside the C library itself (glibc's own
//! strdup, fopen) are not rerouted; no measured call makes one.
//!
//! Sizes are what the allocator holds (`malloc_usable_size`), on the way in and out alike, so a
//! free always takes back what its allocation added. When nothing is being measured the wrappers
//! do one relaxed load and pass straight through.
#![allow(clippy::missing_safety_doc)]

use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering::Relaxed};

/// Live bytes and their high-water mark over one measured call.
pub(crate) struct Tracker {
    on: AtomicBool,
    live: AtomicI64,
    peak: AtomicI64,
    allocs: AtomicU64,
}

/// What one call did to the heap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct HeapPeak {
    /// The most bytes in use above the level at `start` (0 if the call only freed).
    pub(crate) peak_bytes: u64,
    /// Allocation calls (a realloc counts as one).
    pub(crate) allocs: u64,
    /// Bytes in use at `stop` above the level at `start` (negative: the call freed more).
    pub(crate) retained_bytes: i64,
}

impl Tracker {
    pub(crate) const fn new() -> Tracker {
        Tracker {
            on: AtomicBool::new(false),
            live: AtomicI64::new(0),
            peak: AtomicI64::new(0),
            allocs: AtomicU64::new(0),
        }
    }

    /// Starts a measurement at the bytes in use now (counted as 0).
    pub(crate) fn start(&self) {
        self.live.store(0, Relaxed);
        self.peak.store(0, Relaxed);
        self.allocs.store(0, Relaxed);
        self.on.store(true, Relaxed);
    }

    pub(crate) fn stop(&self) -> HeapPeak {
        self.on.store(false, Relaxed);
        HeapPeak {
            peak_bytes: self.peak.load(Relaxed).max(0) as u64,
            allocs: self.allocs.load(Relaxed),
            retained_bytes: self.live.load(Relaxed),
        }
    }

    #[inline(always)]
    fn on(&self) -> bool {
        self.on.load(Relaxed)
    }

    /// A new block of `bytes`.
    pub(crate) fn alloc(&self, bytes: usize) {
        self.allocs.fetch_add(1, Relaxed);
        let now = self.live.fetch_add(bytes as i64, Relaxed) + bytes as i64;
        self.peak.fetch_max(now, Relaxed);
    }

    /// A block of `bytes` given back (it may predate `start`: then the level drops below 0).
    pub(crate) fn free(&self, bytes: usize) {
        self.live.fetch_sub(bytes as i64, Relaxed);
    }

    /// A realloc from `old` to `new` bytes; `moved`: the block moved, so for a moment both the old
    /// and the new block were held.
    pub(crate) fn realloc(&self, old: usize, new: usize, moved: bool) {
        if moved {
            self.alloc(new);
            self.free(old);
        } else {
            self.allocs.fetch_add(1, Relaxed);
            let now =
                self.live.fetch_add(new as i64 - old as i64, Relaxed) + new as i64 - old as i64;
            self.peak.fetch_max(now, Relaxed);
        }
    }
}

impl Default for Tracker {
    fn default() -> Self {
        Tracker::new()
    }
}

/// The tracker the wrappers feed.
pub(crate) static HEAP: Tracker = Tracker::new();

extern "C" {
    fn __real_malloc(n: usize) -> *mut c_void;
    fn __real_calloc(n: usize, size: usize) -> *mut c_void;
    fn __real_realloc(p: *mut c_void, n: usize) -> *mut c_void;
    fn __real_free(p: *mut c_void);
    fn __real_posix_memalign(out: *mut *mut c_void, align: usize, n: usize) -> i32;
    fn __real_aligned_alloc(align: usize, n: usize) -> *mut c_void;
}

/// What the allocator holds for `p` (0 for null).
///
/// # Safety
/// `p` is null or a live block of glibc's allocator.
unsafe fn usable(p: *mut c_void) -> usize {
    if p.is_null() {
        0
    } else {
        // SAFETY: the caller's contract.
        unsafe { libc::malloc_usable_size(p) }
    }
}

// The wrappers below are the C allocator's functions with its contracts unchanged: each
// `__real_NAME` call is sound when the wrapper's own call was, and `usable` is only asked about
// null or a block the allocator handed out and has not yet taken back.

#[no_mangle]
pub unsafe extern "C" fn __wrap_malloc(n: usize) -> *mut c_void {
    // SAFETY: see above.
    unsafe {
        let p = __real_malloc(n);
        if HEAP.on() && !p.is_null() {
            HEAP.alloc(usable(p));
        }
        p
    }
}

#[no_mangle]
pub unsafe extern "C" fn __wrap_calloc(n: usize, size: usize) -> *mut c_void {
    // SAFETY: see above.
    unsafe {
        let p = __real_calloc(n, size);
        if HEAP.on() && !p.is_null() {
            HEAP.alloc(usable(p));
        }
        p
    }
}

#[no_mangle]
pub unsafe extern "C" fn __wrap_realloc(p: *mut c_void, n: usize) -> *mut c_void {
    // SAFETY: see above; `p` is read as an address only once realloc has returned.
    unsafe {
        if !HEAP.on() {
            return __real_realloc(p, n);
        }
        let old = usable(p);
        let q = __real_realloc(p, n);
        if !q.is_null() {
            HEAP.realloc(old, usable(q), q != p);
        } else if n == 0 && !p.is_null() {
            // realloc(p, 0) frees p.
            HEAP.free(old);
        }
        q
    }
}

#[no_mangle]
pub unsafe extern "C" fn __wrap_free(p: *mut c_void) {
    // SAFETY: see above.
    unsafe {
        if HEAP.on() && !p.is_null() {
            HEAP.free(usable(p));
        }
        __real_free(p)
    }
}

#[no_mangle]
pub unsafe extern "C" fn __wrap_posix_memalign(
    out: *mut *mut c_void,
    align: usize,
    n: usize,
) -> i32 {
    // SAFETY: see above; `out` is written by posix_memalign when it returns 0.
    unsafe {
        let rc = __real_posix_memalign(out, align, n);
        if rc == 0 && HEAP.on() {
            HEAP.alloc(usable(*out));
        }
        rc
    }
}

#[no_mangle]
pub unsafe extern "C" fn __wrap_aligned_alloc(align: usize, n: usize) -> *mut c_void {
    // SAFETY: see above.
    unsafe {
        let p = __real_aligned_alloc(align, n);
        if HEAP.on() && !p.is_null() {
            HEAP.alloc(usable(p));
        }
        p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_peak_is_the_high_water_mark_above_the_start() {
        let t = Tracker::new();
        t.alloc(100); // 100
        t.start();
        t.alloc(64); // 64
        t.alloc(32); // 96
        t.free(64); // 32
        t.alloc(48); // 80
        t.free(100); // -20: a block from before the start
        t.alloc(16); // -4
        let h = t.stop();
        assert_eq!(
            h,
            HeapPeak {
                peak_bytes: 96,
                allocs: 4,
                retained_bytes: -4
            }
        );
        // Stopped: the wrappers pass straight through.
        assert!(!t.on());
    }

    #[test]
    fn a_moved_realloc_holds_both_blocks_for_a_moment() {
        let t = Tracker::new();
        t.start();
        t.alloc(40); // 40
        t.realloc(40, 200, true); // 240 at the moment of the copy, then 200
        t.realloc(200, 100, false); // 100 in place
        let h = t.stop();
        assert_eq!((h.peak_bytes, h.allocs, h.retained_bytes), (240, 3, 100));
    }

    #[test]
    fn a_call_that_only_frees_peaks_at_zero() {
        let t = Tracker::new();
        t.start();
        t.free(500);
        assert_eq!(t.stop().peak_bytes, 0);
    }
}
