//! Proves pqcount's counts exact: regions of known instruction counts, each
//! run several times, on the main thread and on a second thread. Prints the
//! count the plugin must write for each region, one per line, in order
//! (`expect N`) or `same LABEL` for regions whose count is not known a priori
//! but must repeat exactly.
use std::arch::asm;
use std::hint::black_box;

// The two markers. Bodies differ (one `nop` vs two) so that LLVM's function
// merging or the linker's identical-code folding cannot fold them into one
// address. The plugin counts none of their instructions.
#[no_mangle]
#[inline(never)]
pub extern "C" fn pqprof_count_begin() {
    unsafe { asm!("nop", options(nomem, nostack, preserves_flags)) }
}

#[no_mangle]
#[inline(never)]
pub extern "C" fn pqprof_count_end() {
    unsafe { asm!("nop", "nop", options(nomem, nostack, preserves_flags)) }
}

const REPS: usize = 3;

/// Exact by construction: the calls are inside the asm block, so the region
/// is exactly 1000 `nop`s and the `bl pqprof_count_end`: 1001.
fn nops_1000_in_asm() {
    unsafe {
        asm!(
            "bl pqprof_count_begin",
            ".rept 1000", "nop", ".endr",
            "bl pqprof_count_end",
            clobber_abi("C"),
        )
    }
}

/// A counted loop in asm: mov + 100 x (subs, b.ne) + bl = 1 + 200 + 1 = 202.
fn loop_100_in_asm() {
    unsafe {
        asm!(
            "bl pqprof_count_begin",
            "mov x9, #100",
            "2:",
            "subs x9, x9, #1",
            "b.ne 2b",
            "bl pqprof_count_end",
            out("x9") _,
            clobber_abi("C"),
        )
    }
}

/// The empty region: only the `bl pqprof_count_end`: 1.
fn empty_in_asm() {
    unsafe { asm!("bl pqprof_count_begin", "bl pqprof_count_end", clobber_abi("C")) }
}

/// Markers called from Rust (as pqprof would): 500 `nop`s between them, and
/// whatever the compiler puts there. rustc 1.97 makes the second call a tail
/// call, so the region is the 500 `nop`s + `ldp x29, x30, [sp], #16` (the
/// epilogue) + `b pqprof_count_end`: 502 (see REPORT.md's disassembly).
#[inline(never)]
fn nops_500_from_rust() {
    pqprof_count_begin();
    unsafe { asm!(".rept 500", "nop", ".endr", options(nomem, nostack, preserves_flags)) }
    pqprof_count_end();
}

/// Nested: outer = bl inner-begin ... (inner region: 10 nops + bl end = 11)
/// ... the outer region holds 5 nops + bl begin + 10 nops + bl end + 5 nops + bl end.
/// Inner line is written first (11), then outer: 5 + 1 + 10 + 1 + 5 + 1 = 23.
fn nested_in_asm() {
    unsafe {
        asm!(
            "bl pqprof_count_begin",
            ".rept 5", "nop", ".endr",
            "bl pqprof_count_begin",
            ".rept 10", "nop", ".endr",
            "bl pqprof_count_end",
            ".rept 5", "nop", ".endr",
            "bl pqprof_count_end",
            clobber_abi("C"),
        )
    }
}

/// Real Rust code whose count is not known a priori but is deterministic.
#[inline(never)]
fn rust_work(n: u64) -> u64 {
    let mut h = 0xcbf29ce484222325u64;
    for i in 0..n {
        h ^= i;
        h = h.wrapping_mul(0x100000001b3);
    }
    h
}

fn main() {
    let mut expect: Vec<String> = Vec::new();
    for _ in 0..REPS {
        nops_1000_in_asm();
        expect.push("expect 1001".into());
    }
    for _ in 0..REPS {
        loop_100_in_asm();
        expect.push("expect 202".into());
    }
    for _ in 0..REPS {
        empty_in_asm();
        expect.push("expect 1".into());
    }
    for _ in 0..REPS {
        nops_500_from_rust();
        expect.push("expect 502".into());
    }
    for _ in 0..REPS {
        nested_in_asm();
        expect.push("expect 11".into());
        expect.push("expect 23".into());
    }
    for _ in 0..REPS {
        pqprof_count_begin();
        black_box(rust_work(black_box(1000)));
        pqprof_count_end();
        expect.push("same rust_work_1000".into());
    }
    // A second thread (a second vCPU in QEMU) runs its own regions; joined
    // before the main thread continues, so the lines stay in order.
    std::thread::spawn(|| {
        for _ in 0..REPS {
            nops_1000_in_asm();
        }
    })
    .join()
    .unwrap();
    for _ in 0..REPS {
        expect.push("expect 1001".into());
    }
    for e in expect {
        println!("{e}");
    }
}
