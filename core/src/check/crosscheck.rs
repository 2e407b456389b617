//! The `crosscheck` section: each row's difference, interval and verdict recomputed from the
//! per-round figures it stores (rows written before schema 2 have none and are only read).

use super::differs;
use crate::results::{Agreement, Results};
use crate::stats;

pub fn check(results: &Results) -> Vec<String> {
    let mut problems = Vec::new();
    let Some(c) = &results.crosscheck else { return problems };
    for r in c.rows.iter().filter(|r| !r.tool_rounds.is_empty()) {
        let name = format!("crosscheck {} {} {} vs {}", r.backend, r.algorithm, r.operation, r.tool);
        let Some((ratio, ci)) = stats::paired_ratio(&r.pqprof_rounds, &r.tool_rounds) else {
            problems.push(format!("{name}: {} pqprof rounds around {} tool rounds", r.pqprof_rounds.len(), r.tool_rounds.len()));
            continue;
        };
        differs(&mut problems, format!("{name}: diff_pct"), r.diff_pct, (ratio - 1.0) * 100.0);
        if let (Some((lo, hi)), Some((l2, h2))) = (r.diff_ci95_pct, ci) {
            differs(&mut problems, format!("{name}: diff_ci95_pct low"), lo, (l2 - 1.0) * 100.0);
            differs(&mut problems, format!("{name}: diff_ci95_pct high"), hi, (h2 - 1.0) * 100.0);
        }
        let verdict = Agreement::judge(ci, c.tolerance_pct);
        if r.verdict != Some(verdict) || r.agree != (verdict == Agreement::Agree) {
            problems.push(format!("{name}: verdict {:?} but the rounds give {}", r.verdict, verdict.text()));
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use crate::results::Agreement;

    #[test]
    fn verdicts_need_the_whole_interval() {
        assert_eq!(Agreement::judge(Some((0.97, 1.04)), 5.0), Agreement::Agree);
        assert_eq!(Agreement::judge(Some((1.06, 1.20)), 5.0), Agreement::Disagree);
        assert_eq!(Agreement::judge(Some((0.80, 0.94)), 5.0), Agreement::Disagree);
        assert_eq!(Agreement::judge(Some((1.02, 1.09)), 5.0), Agreement::Undecided);
        assert_eq!(Agreement::judge(None, 5.0), Agreement::Undecided);
    }
}
