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
/// step timed from its process's start) the step took 91.6 s: the last round ended 0.55 s past
/// its estimate, then the servers' stats took 0.32 s, stopping them 0.09, the baselines 0.07 and
/// writing the file 0.33, about 1.4 s of closing; 2% is 1.8 s of 90 (2.4 s of the run step's
/// 120). A host much slower than this one closes in more, and says so in its step's time.
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
}
