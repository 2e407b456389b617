//! CSV (RFC 4180) through the `csv` crate: one row per phase and suite, nanoseconds.

use super::{lines, Exporter, HEADER};
use crate::results::Results;
use anyhow::Result;

pub(crate) struct Csv;

impl Exporter for Csv {
    fn serialize(&self, r: &Results) -> Result<Vec<u8>> {
        let mut w = csv::Writer::from_writer(Vec::new());
        w.write_record(HEADER)?;
        for l in lines(r) {
            let opt = |x: Option<f64>| x.map_or(String::new(), |v| format!("{v:.1}"));
            w.write_record([
                l.kind.to_string(),
                l.name,
                l.stack_or_backend,
                format!("{:.1}", l.mean),
                format!("{:.1}", l.median),
                format!("{:.1}", l.p95),
                format!("{:.1}", l.p99),
                l.iterations.map_or(String::new(), |n| n.to_string()),
                opt(l.ci.map(|c| c.0)),
                opt(l.ci.map(|c| c.1)),
                l.precision
                    .as_ref()
                    .map_or(String::new(), |p| format!("{:.2}", p.half_width_pct)),
                l.precision
                    .as_ref()
                    .map_or(String::new(), |p| p.reason.describe().to_string()),
            ])?;
        }
        Ok(w.into_inner()?)
    }
}
