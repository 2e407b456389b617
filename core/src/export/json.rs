//! JSON: the run it came from, then the section's rows as objects keyed by column (units in the
//! keys), `null` where the run has no figure.

use super::{Exporter, Table, Value};
use crate::results::Results;
use anyhow::Result;
use serde_json::{json, Map};

pub(crate) struct Json;

impl Exporter for Json {
    fn serialize(&self, r: &Results, t: &Table) -> Result<Vec<u8>> {
        let rows: Vec<serde_json::Value> = t
            .rows
            .iter()
            .map(|row| {
                let mut o = Map::new();
                for (c, v) in t.columns.iter().zip(row) {
                    let v = match v {
                        Value::Text(s) => json!(s),
                        // Whole numbers (counts, bytes) as integers.
                        Value::Number(Some(x)) if x.fract() == 0.0 && x.abs() < 9.0e15 => {
                            json!(*x as i64)
                        }
                        Value::Number(Some(x)) if x.is_finite() => json!(x),
                        Value::Number(_) => serde_json::Value::Null,
                    };
                    o.insert(c.key(), v);
                }
                serde_json::Value::Object(o)
            })
            .collect();
        let doc = json!({
            "run": r.label(),
            "tool_commit": r.run.tool_commit,
            "date_utc": r.run.date_utc,
            "section": t.section,
            "rows": rows,
        });
        let mut out = serde_json::to_vec_pretty(&doc)?;
        out.push(b'\n');
        Ok(out)
    }
}
