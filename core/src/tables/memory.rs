//! The `memory` section as text: what `pqprof memory` prints after measuring. One row per phase,
//! its median time from the run beside its peak heap and stack.

use crate::results::{OperationMemory, Results};
use crate::units::{bytes, count, text_table, time};

pub fn table(m: &OperationMemory, r: &Results) -> String {
    let rows: Vec<Vec<String>> = m
        .entries
        .iter()
        .map(|e| {
            vec![
                e.backend.clone(),
                e.algorithm.clone(),
                e.operation.name().to_string(),
                r.phase(&e.id())
                    .map_or("not timed".into(), |p| time(p.stats.median_ns)),
                bytes(e.peak_heap_bytes as usize),
                count(e.heap_allocs as f64),
                bytes(e.peak_stack_bytes as usize),
                e.calls.len().to_string(),
            ]
        })
        .collect();
    let mut s = text_table(
        &[
            "backend",
            "algorithm",
            "operation",
            "median time",
            "peak heap",
            "allocations",
            "peak stack",
            "calls",
        ],
        &rows,
        &[3, 4, 5, 6, 7],
    );
    s.push('\n');
    for f in &m.failures {
        s += &format!(
            "not measured: {} {} {}: {}\n",
            f.backend,
            f.algorithm,
            f.operation.name(),
            f.error
        );
    }
    s += &format!(
        "Heap: {}.\nStack: {}; the empty call's {} B are subtracted.\n",
        m.heap_method, m.stack_method, m.harness_stack_bytes
    );
    s
}
