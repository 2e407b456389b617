//! CSV (RFC 4180) through the `csv` crate: a header of column keys with their units, then one
//! record per row; numbers as measured, an empty field where the run has none.

use super::{Exporter, Table, Value};
use anyhow::Result;

pub(crate) struct Csv;

impl Exporter for Csv {
    fn serialize(&self, _: &super::Source, t: &Table) -> Result<Vec<u8>> {
        let mut w = csv::Writer::from_writer(Vec::new());
        w.write_record(t.columns.iter().map(super::Column::key))?;
        for row in &t.rows {
            w.write_record(row.iter().map(|v| match v {
                Value::Text(s) => s.clone(),
                Value::Number(Some(x)) => number(*x),
                Value::Number(None) => String::new(),
            }))?;
        }
        Ok(w.into_inner()?)
    }
}

/// A number as a spreadsheet reads it back: whole numbers without a fraction, others to 0.001.
pub(super) fn number(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{x:.0}")
    } else {
        format!("{x:.3}")
    }
}
