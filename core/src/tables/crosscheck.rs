//! The `crosscheck` section as text: what `pqprof crosscheck` prints after measuring.

use crate::results::{Agreement, Crosscheck};

/// The verdict table as text.
pub fn table(c: &Crosscheck) -> String {
    use crate::units::text_table;
    let head = [
        "tool",
        "backend",
        "algorithm",
        "operation",
        "statistic",
        "pqprof",
        "tool",
        "diff (95% interval)",
        "verdict",
    ];
    let rows: Vec<Vec<String>> = c
        .rows
        .iter()
        .map(|r| {
            vec![
                r.tool.clone(),
                r.backend.clone(),
                r.algorithm.clone(),
                format!("{}{}", r.operation, r.form.suffix()),
                r.statistic.clone(),
                format!("{:.0}", r.pqprof),
                format!("{:.0}", r.tool_value),
                format!(
                    "{:+.1}%{}",
                    r.diff_pct,
                    r.diff_ci95_pct
                        .map_or(String::new(), |(lo, hi)| format!(" ({lo:+.1} to {hi:+.1})"))
                ),
                match r.verdict {
                    Some(Agreement::Agree) => "agree".to_string(),
                    Some(v) => format!("{}: {}", v.text().to_uppercase(), r.note),
                    None if r.agree => "agree".to_string(),
                    None => format!("DISAGREE: {}", r.note),
                },
            ]
        })
        .collect();
    let mut s = text_table(&head, &rows, &[5, 6, 7]) + "\n";
    s += "\nPublished references (pqprof median TSC cycles / reference; like-for-like only on the same microarchitecture):\n";
    let rows: Vec<Vec<String>> = c
        .references
        .iter()
        .map(|r| {
            vec![
                r.algorithm.clone(),
                r.operation.name().into(),
                r.backend.clone(),
                format!("{:.2}", r.pqprof_cycles),
                format!("{:.2}", r.reference_cycles),
                format!("{:.2}x", r.ratio),
                format!(
                    "{} on {}{}",
                    r.implementation,
                    r.machine,
                    if r.comparable {
                        ""
                    } else {
                        ", other microarchitecture"
                    }
                ),
                r.source.clone(),
            ]
        })
        .collect();
    s += &text_table(
        &[
            "algorithm",
            "operation",
            "backend",
            "pqprof",
            "reference",
            "ratio",
            "implementation",
            "source",
        ],
        &rows,
        &[3, 4, 5],
    );
    s + "\n"
}
