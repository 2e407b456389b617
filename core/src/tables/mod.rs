//! Each section of a results file as a text table, printed by the command that measured it
//! (`pqprof crosscheck`, `handshake`, `capacity`, `network`, `memory`; `run` prints its warnings).
//! A stored file is read on the site (`pqprof render`) or as CSV or Markdown (`pqprof export`).
//! One file per section; they only read results.

pub mod capacity;
pub mod crosscheck;
pub mod handshake;
pub mod memory;
pub mod network;
pub mod probe;

use crate::results::{group_warnings, Warning};

/// Warnings grouped by kind: per kind its count and what to do, then its `top` heaviest, and how
/// many more the results file holds.
pub fn warnings(warnings: &[Warning], top: usize) -> String {
    let mut s = String::new();
    for g in group_warnings(warnings, top) {
        s += &format!("warning: {} × {}: {}\n", g.count, g.title, g.advice);
        for w in &g.top {
            s += &format!("  {w}\n");
        }
        if !g.rest.is_empty() {
            s += &format!("  … and {} more in the results file\n", g.rest.len());
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use crate::results::{Form, Operation, PhaseId, Warning};

    #[test]
    fn warnings_print_grouped_with_their_count() {
        let spread = |rsd: f64| Warning::Spread {
            phase: PhaseId::new("liboqs", "X25519", Operation::DhKeygen, Form::Handshake),
            rsd_pct: rsd,
            rejection_loop: false,
        };
        let text = super::warnings(&[spread(11.0), spread(50.0), Warning::OneCore], 1);
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].starts_with("warning: 2 × noisy phases:"), "{text}");
        assert!(
            lines[1].contains("50.0%") && lines[2].contains("1 more"),
            "{text}"
        );
        assert!(lines[3].starts_with("warning: 1 × capacity:"), "{text}");
    }
}
