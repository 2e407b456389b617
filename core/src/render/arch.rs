//! The architectures section of the front page: per phase, instructions per call on each
//! architecture side by side (`figures::arch`), the newest counted run of each machine a column;
//! a time only under a column timed on real hardware, never under an emulated one.

use super::Run;
use crate::figures::arch::{self, SideBySide};
use crate::units as format;
use serde::Serialize;

#[derive(Serialize)]
pub(crate) struct View {
    pub(crate) columns: Vec<ColumnView>,
    pub(crate) rows: Vec<RowView>,
    /// The column the ratios are to ("Intel Xeon x86_64 · host vm · 5d798a, callgrind").
    pub(crate) reference: String,
}

#[derive(Serialize)]
pub(crate) struct ColumnView {
    pub(crate) machine: String,
    /// "x86_64", "aarch64 (emulated: neoverse-n1)".
    pub(crate) architecture: String,
    pub(crate) counter: String,
    pub(crate) date: String,
    pub(crate) json_href: String,
    /// Whether the column has a time sub-column (a run on real hardware).
    pub(crate) timed: bool,
}

#[derive(Serialize)]
pub(crate) struct RowView {
    pub(crate) backend: String,
    pub(crate) algorithm: String,
    pub(crate) operation: String,
    pub(crate) cells: Vec<Cell>,
}

#[derive(Serialize)]
pub(crate) struct Cell {
    pub(crate) instructions: String,
    pub(crate) ratio: String,
    /// Median per call; empty under an emulated column.
    pub(crate) time: String,
}

/// The section from the newest counted run of each machine (`runs`), or `None` when no aarch64
/// run is among them.
pub(crate) fn build(runs: &[&Run]) -> Option<View> {
    let results: Vec<_> = runs.iter().map(|r| &r.results).collect();
    let t: SideBySide = arch::side_by_side(&results);
    if t.rows.is_empty() {
        return None;
    }
    let columns: Vec<ColumnView> = t
        .columns
        .iter()
        .map(|c| {
            let run = runs[c.run];
            ColumnView {
                machine: super::machine_label(&run.results.run.host),
                architecture: c.architecture.clone(),
                counter: c.counter.unwrap_or("not counted").into(),
                date: run.results.run.date_utc.clone(),
                json_href: run.json_href.clone(),
                timed: c.timed,
            }
        })
        .collect();
    let reference = t.reference.map_or_else(
        || "no x86-64 run counted instructions".into(),
        |k| format!("{}, {}", columns[k].machine, columns[k].counter),
    );
    let rows = t
        .rows
        .iter()
        .map(|r| RowView {
            backend: r.phase.backend.clone(),
            algorithm: r.phase.algorithm.clone(),
            operation: r.phase.operation.name().into(),
            cells: (0..t.columns.len())
                .map(|k| Cell {
                    instructions: r.instructions[k].map_or_else(|| "–".into(), format::count),
                    ratio: match (t.reference, r.ratio[k]) {
                        (Some(base), Some(x)) if base != k => format::ratio(x),
                        _ => String::new(),
                    },
                    time: r.median_ns[k].map_or_else(String::new, format::time),
                })
                .collect(),
        })
        .collect();
    Some(View {
        columns,
        rows,
        reference,
    })
}
