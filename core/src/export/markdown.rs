//! A Markdown table: the column names with their units in the heading, the figures in human units.

use super::{Exporter, Table, Unit, Value};
use crate::units as format;
use anyhow::Result;

pub(crate) struct Markdown;

impl Exporter for Markdown {
    fn serialize(&self, source: &super::Source, t: &Table) -> Result<Vec<u8>> {
        let cell = |s: &str| s.replace('|', "\\|");
        let kind = match source.kind {
            "probe" => "Probe",
            _ => "Run",
        };
        let mut out = format!(
            "{kind}: {} ({}), {}\n\n",
            source.label, source.tool.1, t.section
        );
        let heads: Vec<String> = t.columns.iter().map(|c| cell(&c.name)).collect();
        out += &format!("| {} |\n", heads.join(" | "));
        let aligns: Vec<&str> = t
            .columns
            .iter()
            .map(|c| if c.unit == Unit::Text { "---" } else { "---:" })
            .collect();
        out += &format!("|{}|\n", aligns.join("|"));
        for row in &t.rows {
            let cells: Vec<String> = t
                .columns
                .iter()
                .zip(row)
                .map(|(c, v)| match v {
                    Value::Text(s) => cell(s),
                    Value::Number(None) => String::new(),
                    Value::Number(Some(x)) => human(c.unit, *x),
                })
                .collect();
            out += &format!("| {} |\n", cells.join(" | "));
        }
        Ok(out.into_bytes())
    }
}

/// A figure as the site writes it.
fn human(unit: Unit, x: f64) -> String {
    match unit {
        Unit::Ns => format::time(x),
        Unit::Bytes => format!("{} B", format::count(x)),
        Unit::Pct => format!("{x:.1}%"),
        Unit::Ratio => format!("{x:.3}"),
        Unit::PerSecond => format!("{}/s", format::count(x)),
        Unit::Count => format::count(x),
        Unit::Text => x.to_string(),
    }
}
