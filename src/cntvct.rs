//! aarch64's clock for the timed region: the generic timer's virtual count, CNTVCT_EL0, read behind
//! an ISB (the read is not ordered with the instructions around it without one: Arm ARM D12.1.2,
//! "Accessing the timer registers"), at the rate CNTFRQ_EL0 gives. Linux lets user space read both
//! (CNTKCTL_EL1.EL0VCTEN; its vDSO's clock_gettime reads the same counter). The count runs at a
//! constant rate through idle and frequency changes, like an invariant TSC, but it is not a cycle
//! count: its rate is the system counter's (often tens of MHz before Armv8.6, 1 GHz from it), so
//! one tick can be longer than a short call, and `measure` batches by its resolution as well as by
//! its cost. Under qemu-user it is the host's time scaled to 62.5 MHz, which is why an emulated run
//! times nothing.

use std::arch::asm;

/// Opens a timed region: `isb; mrs cntvct_el0; isb`. The first ISB waits for what came before to
/// finish, the second keeps what follows from starting before the read.
#[inline(always)]
pub(crate) fn begin() -> u64 {
    let t: u64;
    // SAFETY: ISB has no preconditions; CNTVCT_EL0 is readable at EL0 on Linux (see the module).
    // No `nomem`: the block is a compiler barrier, so no work is moved across the read.
    unsafe { asm!("isb", "mrs {t}, cntvct_el0", "isb", t = out(reg) t, options(nostack)) };
    t
}

/// Closes a timed region: `isb; mrs cntvct_el0`, after everything in it has finished.
#[inline(always)]
pub(crate) fn end() -> u64 {
    let t: u64;
    // SAFETY: as in `begin`.
    unsafe { asm!("isb", "mrs {t}, cntvct_el0", t = out(reg) t, options(nostack)) };
    t
}

/// A read without barriers, for regions timed inside real work (`Timer::start_light`).
#[inline(always)]
pub(crate) fn read() -> u64 {
    let t: u64;
    // SAFETY: as in `begin`.
    unsafe { asm!("mrs {t}, cntvct_el0", t = out(reg) t, options(nostack)) };
    t
}

/// The counter's rate in Hz (CNTFRQ_EL0, which firmware sets to the system counter's frequency);
/// `None` if it reads 0 (a firmware that left it unset).
pub(crate) fn rate() -> Option<f64> {
    let hz: u64;
    // SAFETY: CNTFRQ_EL0 is readable at EL0 whenever the counter is (Arm ARM D12.1.1).
    unsafe { asm!("mrs {hz}, cntfrq_el0", hz = out(reg) hz, options(nomem, nostack)) };
    (hz > 0).then_some(hz as f64)
}
