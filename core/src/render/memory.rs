//! The overview page's memory section: per run with a `memory` section, a table of every KEM, DH
//! and signature operation (rows) by backend (columns), each cell the phase's median time from the
//! run beside its peak heap and peak stack for one call.

use super::Run;
use crate::results::{Operation, OperationMemory, Results};
use crate::units::{bytes, count, time};
use serde::Serialize;

#[derive(Serialize)]
pub(crate) struct View {
    pub(crate) host: String,
    pub(crate) machine_id: String,
    pub(crate) date: String,
    pub(crate) wall: String,
    pub(crate) calls: String,
    pub(crate) warmup: usize,
    pub(crate) harness: String,
    pub(crate) heap_method: String,
    pub(crate) stack_method: String,
    pub(crate) backends: Vec<String>,
    pub(crate) rows: Vec<Line>,
    pub(crate) failures: Vec<String>,
}

#[derive(Serialize)]
pub(crate) struct Line {
    pub(crate) algorithm: String,
    pub(crate) operation: String,
    /// One per backend, in `backends`' order; `None` where the backend lacks the operation.
    pub(crate) cells: Vec<Option<Cell>>,
}

#[derive(Serialize)]
pub(crate) struct Cell {
    /// The phase's median time in this run, or "not timed" (an algorithm no suite uses).
    pub(crate) time: String,
    pub(crate) heap: String,
    pub(crate) stack: String,
    /// Hover text: allocations and every call's figures.
    pub title: String,
}

fn rows(m: &OperationMemory, r: &Results) -> Vec<Line> {
    let order = |alg: &str| {
        crate::algorithm::all()
            .iter()
            .position(|a| a.name == alg)
            .unwrap_or(usize::MAX)
    };
    let mut keys: Vec<(usize, Operation, &str)> = Vec::new();
    for e in &m.entries {
        let k = (order(&e.algorithm), e.operation, e.algorithm.as_str());
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    keys.sort();
    keys.into_iter()
        .map(|(_, op, alg)| Line {
            algorithm: alg.to_string(),
            operation: op.label().to_string(),
            cells: m
                .backends
                .iter()
                .map(|b| {
                    let e = m
                        .entries
                        .iter()
                        .find(|e| &e.backend == b && e.algorithm == alg && e.operation == op)?;
                    let calls: Vec<String> = e
                        .calls
                        .iter()
                        .map(|c| {
                            format!(
                                "{} heap in {} allocations, {} stack",
                                bytes(c.heap_bytes as usize),
                                c.allocs,
                                bytes(c.stack_bytes as usize)
                            )
                        })
                        .collect();
                    Some(Cell {
                        time: r
                            .phase(&e.id())
                            .map_or("not timed".into(), |p| time(p.stats.median_ns)),
                        heap: bytes(e.peak_heap_bytes as usize),
                        stack: bytes(e.peak_stack_bytes as usize),
                        // Calls that agree are said once (the front page's size budget).
                        title: if calls.windows(2).all(|w| w[0] == w[1]) && calls.len() > 1 {
                            format!(
                                "{} {} {}: {} calls, each {}",
                                e.backend,
                                e.algorithm,
                                e.operation.name(),
                                calls.len(),
                                calls[0]
                            )
                        } else {
                            format!(
                                "{} {} {}: at most {} allocations in one call; calls: {}",
                                e.backend,
                                e.algorithm,
                                e.operation.name(),
                                count(e.heap_allocs as f64),
                                calls.join("; ")
                            )
                        },
                    })
                })
                .collect(),
        })
        .collect()
}

pub(crate) fn build(runs: &[&Run]) -> Vec<View> {
    runs.iter()
        .filter_map(|run| {
            let m = run.results.memory.as_ref()?;
            let calls = m.entries.iter().map(|e| e.calls.len());
            let (lo, hi) = (calls.clone().min()?, calls.max()?);
            Some(View {
                host: run.label.clone(),
                machine_id: run.anchor.clone(),
                date: m.date_utc.clone(),
                wall: format!("{:.1} s", m.wall_seconds),
                calls: if lo == hi {
                    lo.to_string()
                } else {
                    format!("{lo}–{hi}")
                },
                warmup: m.warmup_calls,
                harness: bytes(m.harness_stack_bytes as usize),
                heap_method: m.heap_method.clone(),
                stack_method: m.stack_method.clone(),
                backends: m.backends.clone(),
                rows: rows(m, &run.results),
                failures: m
                    .failures
                    .iter()
                    .map(|f| {
                        format!(
                            "{} {} {}: {}",
                            f.backend,
                            f.algorithm,
                            f.operation.name(),
                            f.error
                        )
                    })
                    .collect(),
            })
        })
        .collect()
}
