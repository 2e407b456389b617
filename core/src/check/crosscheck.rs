//! The `crosscheck` section: each row's difference, interval and verdict recomputed from the
//! per-round figures it stores (rows written before schema 2 have none and are only read).

use super::differs;
use super::problem::Problem;
use crate::results::{should_continue, Agreement, CrosscheckRow, Results};
use crate::stats;
use std::collections::BTreeMap;

pub(crate) fn check(results: &Results) -> Vec<Problem> {
    let mut problems = Vec::new();
    let Some(c) = &results.crosscheck else {
        return problems;
    };
    for r in c.rows.iter().filter(|r| !r.tool_rounds.is_empty()) {
        let name = format!("crosscheck {} vs {}", r.id(), r.tool);
        let Some((ratio, ci)) = stats::paired_ratio(&r.pqprof_rounds, &r.tool_rounds) else {
            problems.push(Problem::incomplete(format!(
                "{name}: {} pqprof rounds around {} tool rounds",
                r.pqprof_rounds.len(),
                r.tool_rounds.len()
            )));
            continue;
        };
        differs(
            &mut problems,
            format!("{name}: diff_pct"),
            r.diff_pct,
            (ratio - 1.0) * 100.0,
        );
        if let (Some((lo, hi)), Some((l2, h2))) = (r.diff_ci95_pct, ci) {
            differs(
                &mut problems,
                format!("{name}: diff_ci95_pct low"),
                lo,
                (l2 - 1.0) * 100.0,
            );
            differs(
                &mut problems,
                format!("{name}: diff_ci95_pct high"),
                hi,
                (h2 - 1.0) * 100.0,
            );
        }
        let verdict = Agreement::judge(ci, c.tolerance_pct);
        if r.verdict != Some(verdict) || r.agree != (verdict == Agreement::Agree) {
            problems.push(Problem::recomputed(format!(
                "{name}: verdict {:?} but the rounds give {}",
                r.verdict,
                verdict.text()
            )));
        }
    }
    if let Some(max) = c.max_rounds {
        problems.extend(stopping_rule(&c.rows, c.rounds, max, c.tolerance_pct));
    }
    problems
}

/// Replays the adaptive rule: each tool run stopped at the first round count from `min` on where
/// every phase it reports was decided, or at `max`, and its phases all have that many rounds.
fn stopping_rule(
    rows: &[CrosscheckRow],
    min: usize,
    max: usize,
    tolerance_pct: f64,
) -> Vec<Problem> {
    let mut problems = Vec::new();
    let mut groups: BTreeMap<usize, Vec<&CrosscheckRow>> = BTreeMap::new();
    for r in rows.iter().filter(|r| !r.tool_rounds.is_empty()) {
        match r.group {
            Some(g) => groups.entry(g).or_default().push(r),
            None => problems.push(Problem::incomplete(format!(
                "crosscheck {} {} vs {}: no tool run index (adaptive rounds need one)",
                r.algorithm, r.operation, r.tool
            ))),
        }
    }
    for (g, rs) in groups {
        let n = rs[0].tool_rounds.len();
        if rs
            .iter()
            .any(|r| r.tool_rounds.len() != n || r.pqprof_rounds.len() != n + 1)
        {
            problems.push(Problem::incomplete(format!(
                "crosscheck tool run {g}: its phases have different round counts"
            )));
            continue;
        }
        if n < min || n > max {
            problems.push(Problem::bound(format!(
                "crosscheck tool run {g}: {n} rounds, outside {min}..={max}"
            )));
            continue;
        }
        let verdicts = |k: usize| -> Vec<Agreement> {
            rs.iter()
                .map(|r| {
                    Agreement::judge(
                        stats::paired_ratio(&r.pqprof_rounds[..=k], &r.tool_rounds[..k])
                            .and_then(|x| x.1),
                        tolerance_pct,
                    )
                })
                .collect()
        };
        // Every round count before n must have asked for another round, and n must not.
        if let Some(k) = (1..n).find(|&k| !should_continue(&verdicts(k), k, min, max)) {
            problems.push(Problem::bound(format!(
                "crosscheck tool run {g}: every phase was decided after {k} rounds, yet it ran {n}"
            )));
        }
        if should_continue(&verdicts(n), n, min, max) {
            problems.push(Problem::bound(format!("crosscheck tool run {g}: stopped after {n} rounds with a phase undecided and {max} allowed")));
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::stopping_rule;
    use crate::results::{Agreement, CrosscheckRow, Form, Operation};

    /// A row of tool run `group` whose round i has ratio pqprof / tool = `ratios[i]`.
    fn row(group: usize, ratios: &[f64]) -> CrosscheckRow {
        CrosscheckRow {
            tool: "liboqs speed_kem".into(),
            backend: "liboqs".into(),
            algorithm: "ML-KEM-768".into(),
            operation: Operation::KemKeygen,
            statistic: "mean TSC cycles".into(),
            pqprof: 1.0,
            pqprof_median_ns: 1.0,
            tool_value: 1.0,
            diff_pct: 0.0,
            agree: true,
            note: String::new(),
            form: Form::Handshake,
            pqprof_rounds: vec![1.0; ratios.len() + 1],
            tool_rounds: ratios.iter().map(|r| 1.0 / r).collect(),
            diff_ci95_pct: None,
            verdict: None,
            group: Some(group),
        }
    }

    #[test]
    fn the_stopping_rule_is_replayed() {
        // By hand (t-interval on the log ratios, 5% tolerance): [1, 1.08, 1, 1, 1] straddles
        // +5% (upper end 1.060), one more round at 1.00 brings it inside (upper end 1.047).
        let noisy = [1.0, 1.08, 1.0, 1.0, 1.0, 1.0];
        assert!(stopping_rule(&[row(0, &noisy), row(0, &[1.0; 6])], 2, 10, 5.0).is_empty());
        // Stopped one round early, or went on past a decided round: both caught.
        assert_eq!(stopping_rule(&[row(0, &noisy[..5])], 2, 10, 5.0).len(), 1);
        assert_eq!(stopping_rule(&[row(0, &[1.0; 3])], 2, 10, 5.0).len(), 1);
        // Undecided at the cap is allowed; past the cap, or rows of one run out of step, are not.
        assert!(stopping_rule(&[row(0, &noisy[..4])], 2, 4, 5.0).is_empty());
        assert_eq!(
            stopping_rule(&[row(0, &[1.0; 2]), row(0, &[1.0; 3])], 2, 10, 5.0).len(),
            1
        );
        assert_eq!(
            stopping_rule(&[row(1, &[1.0; 2]), row(2, &[1.0; 2])], 2, 10, 5.0).len(),
            0
        );
    }

    #[test]
    fn verdicts_need_the_whole_interval() {
        assert_eq!(Agreement::judge(Some((0.97, 1.04)), 5.0), Agreement::Agree);
        assert_eq!(
            Agreement::judge(Some((1.06, 1.20)), 5.0),
            Agreement::Disagree
        );
        assert_eq!(
            Agreement::judge(Some((0.80, 0.94)), 5.0),
            Agreement::Disagree
        );
        assert_eq!(
            Agreement::judge(Some((1.02, 1.09)), 5.0),
            Agreement::Undecided
        );
        assert_eq!(Agreement::judge(None, 5.0), Agreement::Undecided);
    }
}
