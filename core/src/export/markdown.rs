//! A Markdown table with human units.

use super::{lines, Exporter};
use crate::results::Results;
use crate::units as format;
use anyhow::Result;

pub(crate) struct Markdown;

impl Exporter for Markdown {
    fn serialize(&self, r: &Results) -> Result<Vec<u8>> {
        let mut out = format!("Run: {} ({})\n\n", r.label(), r.run.tool_commit);
        out += "| Kind | Name | Stack / backend | Mean | Median | p95 | p99 | Iterations | Median 95% interval | Precision |\n";
        out += "|---|---|---|---:|---:|---:|---:|---:|---|---|\n";
        for l in lines(r) {
            let cell = |s: &str| s.replace('|', "\\|");
            out += &format!(
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
                l.kind,
                cell(&l.name),
                cell(&l.stack_or_backend),
                format::time(l.mean),
                format::time(l.median),
                format::time(l.p95),
                format::time(l.p99),
                l.iterations
                    .map_or(String::new(), |n| format::count(n as f64)),
                l.ci.map_or(String::new(), |(a, b)| format!(
                    "{} – {}",
                    format::time(a),
                    format::time(b)
                )),
                crate::figures::precision_label(l.precision.as_ref())
            );
        }
        Ok(out.into_bytes())
    }
}
