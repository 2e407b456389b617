//! Peak stack of one call, by stack painting: on a thread of its own with a known stack, the probe
//! fills everything below its stack pointer with a pattern, makes the call through a function
//! pointer, and scans up from the bottom of the stack for the first word the call overwrote. The
//! figure is the stack pointer minus that word's address: the deepest the call reached, return
//! addresses and every frame of every library it called included, at 8-byte granularity.
//!
//! The probe's own share (the return address into the call, the frames between the probe and the
//! operation: the closure and the case's `run`) is what an empty case shows through the same path;
//! `measure` reports it and the caller subtracts it.

use super::heap::HeapPeak;
#[cfg(target_arch = "x86_64")]
use super::heap::HEAP;
use anyhow::{bail, ensure, Result};
#[cfg(target_arch = "x86_64")]
use std::hint::black_box;

/// What every word below the stack pointer is set to before the call. Any value serves; an odd
/// one is unlikely to be what a call writes.
pub(crate) const PATTERN: u64 = 0x5a3c_96e1_a55a_c3e7;

/// The stack every probed call runs on. Much more than any measured call needs (the deepest,
/// SLH-DSA and Falcon keygen, use tens of KiB); a call that reaches the bottom is an error.
pub(crate) const STACK_BYTES: usize = 8 << 20;

/// Left unpainted above the stack's lowest address (beside glibc's guard page).
const BOTTOM_MARGIN: usize = 4096;

/// The index of the lowest word in `words` (lowest address first) that no longer holds `pattern`:
/// the deepest write. `None` if the call wrote nothing there.
pub(crate) fn deepest_write(words: &[u64], pattern: u64) -> Option<usize> {
    words.iter().position(|&w| w != pattern)
}

/// Stack bytes from a painted region's top (the stack pointer at the call) down to the deepest
/// write found in it; `words` start at the region's lowest address `lo`.
pub(crate) fn depth(lo: usize, sp: usize, words: &[u64], pattern: u64) -> Option<usize> {
    deepest_write(words, pattern).map(|i| sp - (lo + 8 * i))
}

/// One probed call.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Probe {
    /// Bytes below the probe's stack pointer the call reached (harness frames included).
    pub(crate) stack_bytes: usize,
    pub(crate) heap: HeapPeak,
}

/// The lowest usable address of this thread's stack (glibc's guard page lies below it).
fn stack_low() -> Result<usize> {
    // SAFETY: `attr` is initialised by pthread_getattr_np before it is read and destroyed after;
    // the out-pointers are valid locals.
    unsafe {
        let mut attr: libc::pthread_attr_t = std::mem::zeroed();
        ensure!(
            libc::pthread_getattr_np(libc::pthread_self(), &mut attr) == 0,
            "pthread_getattr_np failed"
        );
        let mut addr: *mut libc::c_void = std::ptr::null_mut();
        let mut size: libc::size_t = 0;
        let rc = libc::pthread_attr_getstack(&attr, &mut addr, &mut size);
        libc::pthread_attr_destroy(&mut attr);
        ensure!(rc == 0, "pthread_attr_getstack failed");
        Ok(addr as usize)
    }
}

/// Fills every word from `lo` up to the stack pointer with `pattern`; returns the stack pointer.
/// In the caller's frame (always inlined), so nothing lies between the painted words and the
/// calls the caller makes next.
///
/// # Safety
/// `lo` is 8-byte aligned and lies below the stack pointer on this thread's own stack, and no
/// live data lies between them (below the stack pointer nothing is live: the asm block does not
/// promise `nostack`, so the compiler keeps no red zone in use across it).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn paint_below_sp(lo: usize, pattern: u64) -> usize {
    let sp: usize;
    // SAFETY: the caller's contract; `rep stosq` writes rcx words upward from rdi (the direction
    // flag is clear at every call boundary, as the ABI requires).
    unsafe {
        std::arch::asm!(
            "mov {sp}, rsp",
            "mov rcx, {sp}",
            "sub rcx, rdi",
            "shr rcx, 3",
            "rep stosq",
            sp = out(reg) sp,
            inout("rdi") lo => _,
            out("rcx") _,
            in("rax") pattern,
        );
    }
    sp
}

/// Paints, calls `f` once, scans. The heap tracker runs over the call alone.
#[cfg(target_arch = "x86_64")]
#[inline(never)]
fn probe_at(lo: usize, f: &mut dyn FnMut()) -> Result<Probe> {
    HEAP.start();
    // SAFETY: `lo` is this thread's stack bottom plus a margin, aligned (see `probe`).
    let sp = unsafe { paint_below_sp(lo, PATTERN) };
    black_box(&mut *f)();
    let heap = HEAP.stop();
    // SAFETY: [lo, sp) is this thread's own stack, just painted; it is only read.
    let words = unsafe { std::slice::from_raw_parts(lo as *const u64, (sp - lo) / 8) };
    let Some(stack_bytes) = depth(lo, sp, words, PATTERN) else {
        bail!("the probe saw no stack write at all (not even a return address)");
    };
    ensure!(
        stack_bytes + 64 < sp - lo,
        "the call reached the bottom of its {STACK_BYTES}-byte stack"
    );
    Ok(Probe { stack_bytes, heap })
}

#[cfg(not(target_arch = "x86_64"))]
fn probe_at(_lo: usize, _f: &mut dyn FnMut()) -> Result<Probe> {
    bail!("stack painting is implemented for x86-64 only")
}

/// Measures one call of `f` on the current thread, which must be one `on_thread` started.
pub(crate) fn probe(f: &mut dyn FnMut()) -> Result<Probe> {
    let lo = (stack_low()? + BOTTOM_MARGIN + 7) & !7;
    probe_at(lo, f)
}

/// Runs `body` on a new thread with a `STACK_BYTES` stack, for `probe`.
pub(crate) fn on_thread<T: Send>(body: impl FnOnce() -> Result<T> + Send) -> Result<T> {
    std::thread::scope(|s| {
        let h = std::thread::Builder::new()
            .name("pqprof-memory".into())
            .stack_size(STACK_BYTES)
            .spawn_scoped(s, body)?;
        match h.join() {
            Ok(r) => r,
            Err(_) => bail!("the measuring thread panicked"),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_deepest_write_is_the_lowest_changed_word() {
        let p = PATTERN;
        // Lowest address first: two untouched words, then the call's deepest write.
        let words = [p, p, 0x1234, p, 7, 0];
        assert_eq!(deepest_write(&words, p), Some(2));
        // A region at 0x1000 whose stack pointer was at its top (0x1000 + 6 words): the call
        // reached 4 words = 32 bytes below it.
        assert_eq!(depth(0x1000, 0x1030, &words, p), Some(32));
        // A write of one byte leaves the rest of its word painted: the word counts.
        let byte = (p & !0xff) | 0x01;
        assert_eq!(depth(0x1000, 0x1030, &[p, byte, 0, 0, 0, 0], p), Some(40));
        // Untouched: no write.
        assert_eq!(deepest_write(&[p; 4], p), None);
        assert_eq!(deepest_write(&[], p), None);
    }

    #[cfg(target_arch = "x86_64")]
    #[inline(never)]
    fn uses_stack(n: usize) -> u8 {
        let mut buf = [0u8; 16 * 1024];
        for (i, b) in buf.iter_mut().take(n).enumerate() {
            *b = i as u8;
        }
        black_box(&mut buf);
        buf[n / 2]
    }

    #[test]
    #[cfg(target_arch = "x86_64")]
    fn a_16_kib_buffer_shows_on_the_stack_and_repeats_exactly() {
        let figures = on_thread(|| {
            let empty = probe(&mut || {})?.stack_bytes;
            let mut v = Vec::new();
            for _ in 0..3 {
                v.push(
                    probe(&mut || {
                        black_box(uses_stack(black_box(16 * 1024)));
                    })?
                    .stack_bytes,
                );
            }
            Ok((empty, v))
        })
        .unwrap();
        let (empty, v) = figures;
        assert!(empty > 0 && empty < 1024, "empty call: {empty}");
        assert!(v[0] - empty >= 16 * 1024, "{v:?} {empty}");
        // A frame of 16 KiB and a little: the loop's spills, the return address.
        assert!(v[0] - empty < 16 * 1024 + 1024, "{v:?} {empty}");
        assert_eq!(v[0], v[1]);
        assert_eq!(v[1], v[2]);
    }
}
