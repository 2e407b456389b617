//! JSON: the run it came from, then the section's rows as objects keyed by column (units in the
//! keys), `null` where the run has no figure.

use super::{Exporter, Table, Value};
use anyhow::Result;
use serde_json::{json, Map};

pub(crate) struct Json;

impl Exporter for Json {
    fn serialize(&self, source: &super::Source, t: &Table) -> Result<Vec<u8>> {
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
        let mut doc = Map::new();
        doc.insert(source.kind.into(), json!(source.label));
        doc.insert(source.tool.0.into(), json!(source.tool.1));
        doc.insert("date_utc".into(), json!(source.date_utc));
        doc.insert("section".into(), json!(t.section));
        doc.insert("rows".into(), json!(rows));
        let doc = serde_json::Value::Object(doc);
        let mut out = serde_json::to_vec_pretty(&doc)?;
        out.push(b'\n');
        Ok(out)
    }
}
