//! The tests' clock (#36): with `PQPROF_TEST_BACKEND=fixed` the only backend is the deterministic
//! one (`backend::fixed`), each of whose calls advances this clock by a known time, and every timed
//! region (`measure::Timer`) reads it instead of the TSC: a run is then exact. Never on otherwise.
//! A leaf: the timer, the backend and the calibration reference all read it.

use std::sync::atomic::{AtomicU64, Ordering};

static NOW: AtomicU64 = AtomicU64::new(0);

/// Whether the hidden switch is on.
pub(crate) fn on() -> bool {
    std::env::var("PQPROF_TEST_BACKEND").is_ok_and(|v| v == "fixed")
}

pub(crate) fn advance(ns: u64) {
    NOW.fetch_add(ns, Ordering::SeqCst);
}

pub(crate) fn now() -> u64 {
    NOW.load(Ordering::SeqCst)
}
