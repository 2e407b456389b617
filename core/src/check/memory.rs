//! The `memory` section: every entry's figures recomputed from its calls (the largest heap and
//! allocation count; one stack figure that every call repeats), every entry an operation its
//! algorithm has on a backend the run measured, and every timed phase of a measured backend and
//! algorithm given an entry or a stated failure.

use super::problem::Problem;
use crate::results::{Kind, MemoryEntry, OperationMemory, Results};

fn entry(problems: &mut Vec<Problem>, m: &OperationMemory, r: &Results, e: &MemoryEntry) {
    let name = format!("memory {}", e.id());
    if !m.backends.contains(&e.backend) {
        problems.push(Problem::evidence(format!(
            "{name}: backend {} is not among the section's backends",
            e.backend
        )));
    }
    if !r.backends.iter().any(|b| b.name == e.backend) {
        problems.push(Problem::evidence(format!(
            "{name}: backend {} is not among the run's backends",
            e.backend
        )));
    }
    // The evidence fits the operation: a signing call recorded for a signature algorithm, and so on.
    match crate::algorithm::find(&e.algorithm) {
        None => problems.push(Problem::evidence(format!(
            "{name}: unknown algorithm {}",
            e.algorithm
        ))),
        Some(a) if a.kind != e.operation.kind() => problems.push(Problem::evidence(format!(
            "{name}: {} is a {:?} algorithm, {} a {:?} operation",
            e.algorithm,
            a.kind,
            e.operation.name(),
            e.operation.kind()
        ))),
        Some(_) => {}
    }
    if !matches!(e.operation.kind(), Kind::Kem | Kind::Dh | Kind::Sig) {
        problems.push(Problem::evidence(format!(
            "{name}: memory is measured for KEM, DH and signature operations only"
        )));
    }
    if e.calls.len() < 2 {
        problems.push(Problem::incomplete(format!(
            "{name}: {} call(s) measured; two at least, so the stack figures can be compared",
            e.calls.len()
        )));
        return;
    }
    let stacks: Vec<u64> = e.calls.iter().map(|c| c.stack_bytes).collect();
    if stacks.iter().any(|&s| s != stacks[0]) {
        problems.push(Problem::bound(format!(
            "{name}: the calls' stack figures differ ({stacks:?}); one call's stack depth repeats exactly"
        )));
    }
    if e.peak_stack_bytes != stacks[0] {
        problems.push(Problem::recomputed(format!(
            "{name}: peak_stack_bytes {} but the calls show {}",
            e.peak_stack_bytes, stacks[0]
        )));
    }
    if e.peak_stack_bytes == 0 {
        problems.push(Problem::bound(format!(
            "{name}: no stack beyond the empty call's: the probe did not see the call"
        )));
    }
    let heap = e.calls.iter().map(|c| c.heap_bytes).max().unwrap_or(0);
    if e.peak_heap_bytes != heap {
        problems.push(Problem::recomputed(format!(
            "{name}: peak_heap_bytes {} but the largest call's is {heap}",
            e.peak_heap_bytes
        )));
    }
    let allocs = e.calls.iter().map(|c| c.allocs).max().unwrap_or(0);
    if e.heap_allocs != allocs {
        problems.push(Problem::recomputed(format!(
            "{name}: heap_allocs {} but the most a call made is {allocs}",
            e.heap_allocs
        )));
    }
    for (i, c) in e.calls.iter().enumerate() {
        // Heap in use without an allocation cannot happen.
        if c.allocs == 0 && c.heap_bytes > 0 {
            problems.push(Problem::bound(format!(
                "{name}: call {i} has {} heap bytes and no allocation",
                c.heap_bytes
            )));
        }
    }
}

pub(crate) fn check(r: &Results) -> Vec<Problem> {
    let mut problems = Vec::new();
    let Some(m) = &r.memory else {
        return problems;
    };
    if m.heap_method.trim().is_empty() || m.stack_method.trim().is_empty() {
        problems.push(Problem::incomplete(
            "memory: the section does not say how its figures were made",
        ));
    }
    if m.harness_stack_bytes == 0 {
        problems.push(Problem::bound(
            "memory: harness_stack_bytes is 0: an empty call pushes at least its return address",
        ));
    }
    let mut seen = std::collections::HashSet::new();
    for e in &m.entries {
        if !seen.insert(e.id()) {
            problems.push(Problem::incomplete(format!(
                "memory {}: measured twice",
                e.id()
            )));
        }
        entry(&mut problems, m, r, e);
    }
    // Where the section measured an algorithm on a backend, every timed phase of that backend and
    // algorithm (the handshake form the site shows) has its figures, or says why not.
    let measured = |alg: &str| {
        m.entries.iter().any(|e| e.algorithm == alg)
            || m.failures.iter().any(|f| f.algorithm == alg)
    };
    for p in &r.phases {
        if p.form.is_handshake()
            && matches!(p.operation.kind(), Kind::Kem | Kind::Dh | Kind::Sig)
            && m.backends.contains(&p.backend)
            && measured(&p.algorithm)
            && m.entry(&p.id()).is_none()
            && !m.failures.iter().any(|f| {
                f.backend == p.backend && f.algorithm == p.algorithm && f.operation == p.operation
            })
        {
            problems.push(Problem::incomplete(format!(
                "memory: phase {} was timed but has no memory entry or failure",
                p.id()
            )));
        }
    }
    problems
}
