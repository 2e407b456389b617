//! The suites' flows (`SuiteResult::flow`): every phase's calls placed in full among the segments,
//! the calls the protocols fix on their side, the overlap the composition stack declares, and the
//! three figures recomputed from the phases (`flow::figures`).

use super::differs;
use super::problem::Problem;
use crate::flow::fixed_side;
use crate::results::{Flow, Results, SuiteResult};

pub(crate) fn check(results: &Results) -> Vec<Problem> {
    let mut problems = Vec::new();
    for s in &results.suites {
        if let Some(f) = &s.flow {
            suite(&mut problems, results, s, f);
        }
    }
    problems
}

fn suite(problems: &mut Vec<Problem>, results: &Results, s: &SuiteResult, f: &Flow) {
    let name = format!("suite {} [{}] flow", s.name, s.stack);
    // Each phase's calls, all of them and no more, among the segments.
    for p in &s.phases {
        let placed: f64 = f
            .segments
            .iter()
            .flat_map(|g| &g.parts)
            .filter(|q| {
                q.backend == p.backend && q.algorithm == p.algorithm && q.operation == p.operation
            })
            .map(|q| q.count)
            .sum();
        if (placed - f64::from(p.count)).abs() > 1e-6 {
            problems.push(Problem::incomplete(format!(
                "{name}: {} has {placed} calls in the segments and {} in the suite",
                p.id(),
                p.count
            )));
        }
    }
    for g in &f.segments {
        for q in &g.parts {
            if !s.phases.iter().any(|p| {
                p.backend == q.backend && p.algorithm == q.algorithm && p.operation == q.operation
            }) {
                problems.push(Problem::incomplete(format!(
                    "{name}: segment \"{}\" holds {} {} {}, which the suite does not",
                    g.name, q.backend, q.algorithm, q.operation
                )));
            }
            if let Some(side) = fixed_side(q.operation).filter(|x| *x != g.side) {
                problems.push(Problem::evidence(format!(
                    "{name}: segment \"{}\" is the {}'s, but the protocol has the {side} make {}",
                    g.name, g.side, q.operation
                )));
            }
        }
    }
    // The overlap is the composition stack's, pairing a server segment with a client one.
    let declared = results
        .stacks
        .iter()
        .find(|st| st.name == s.stack)
        .map(|st| st.overlap.clone())
        .unwrap_or_default();
    if f.overlap != declared {
        problems.push(Problem::evidence(format!(
            "{name}: overlap {:?}, but stack {} declares {declared:?}",
            f.overlap, s.stack
        )));
    }
    for (a, b) in &f.overlap {
        let side = |n: &str| f.segments.iter().find(|g| g.name == n).map(|g| g.side);
        if let (Some(x), Some(y)) = (side(a), side(b)) {
            if x == y {
                problems.push(Problem::evidence(format!(
                    "{name}: \"{a}\" and \"{b}\" overlap but are both the {x}'s"
                )));
            }
        }
    }
    let Some(fresh) = crate::flow::figures(f.segments.clone(), &f.overlap, &results.phases) else {
        problems.push(Problem::incomplete(format!(
            "{name}: a phase of its segments is not measured"
        )));
        return;
    };
    for (g, h) in f.segments.iter().zip(&fresh.segments) {
        differs(
            problems,
            format!("{name}: segment \"{}\" median_ns", g.name),
            g.median_ns,
            h.median_ns,
        );
    }
    for (what, stored, recomputed) in [
        ("client_ns", f.client_ns, fresh.client_ns),
        ("server_ns", f.server_ns, fresh.server_ns),
        ("latency_ns", f.latency_ns, fresh.latency_ns),
        (
            "client_half95_ns",
            f.client_half95_ns,
            fresh.client_half95_ns,
        ),
        (
            "server_half95_ns",
            f.server_half95_ns,
            fresh.server_half95_ns,
        ),
        (
            "latency_half95_ns",
            f.latency_half95_ns,
            fresh.latency_half95_ns,
        ),
    ] {
        differs(problems, format!("{name}: {what}"), stored, recomputed);
    }
}
