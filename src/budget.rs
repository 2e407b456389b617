//! A budgeted step's clock (`--budget-s`: `make run`'s shares of `BUDGET`). It starts with the
//! process, so reading the results file and starting servers count, and its measuring ends
//! `CLOSING_SHARE` of the budget early: what follows the last measurement (the servers' last
//! stats, stopping them, pooling's last check, writing the file) is kept back for.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

static STARTED: OnceLock<Instant> = OnceLock::new();

/// When this process started its command (`main` marks it first thing; otherwise the first ask).
pub fn process_start() -> Instant {
    *STARTED.get_or_init(Instant::now)
}

/// The share of a step's budget its closing keeps. On the Zen 5 VM (2026-12-05, a 90 s handshake
/// step) the closing took 1.0 s: the last round 0.55 s past its estimate, the servers' stats
/// 0.32, stopping them 0.09, the baselines 0.07, writing 0.33. Twice that share leaves room for a
/// host at half the speed.
pub const CLOSING_SHARE: f64 = 0.02;

/// The time a step with `budget` measures in: the budget less its closing.
pub fn measuring(budget: Duration) -> Duration {
    budget.mul_f64(1.0 - CLOSING_SHARE)
}

/// `--budget-s S` as the time a step measures in (`measuring`); 0 is no budget.
pub fn from_secs(budget_s: u64) -> Option<Duration> {
    (budget_s > 0).then(|| measuring(Duration::from_secs(budget_s)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_measures_in_its_budget_less_its_closing() {
        // 2% of 90 s is 1.8 s; of 120 s, 2.4 s.
        assert_eq!(from_secs(90), Some(Duration::from_millis(88_200)));
        assert_eq!(from_secs(120), Some(Duration::from_millis(117_600)));
        assert_eq!(from_secs(0), None);
    }

    #[test]
    fn the_clock_is_read_once() {
        assert_eq!(process_start(), process_start());
    }
}
