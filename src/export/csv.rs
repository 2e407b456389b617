//! CSV (RFC 4180): fields with a comma, quote or newline are quoted, quotes doubled.

use super::{lines, Exporter, HEADER};
use crate::results::Results;
use anyhow::Result;

pub struct Csv;

fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

impl Exporter for Csv {
    fn serialize(&self, r: &Results) -> Result<Vec<u8>> {
        let mut out = HEADER.join(",") + "\n";
        for l in lines(r) {
            let opt = |x: Option<f64>| x.map_or(String::new(), |v| format!("{v:.1}"));
            out += &[
                l.kind.to_string(),
                field(&l.name),
                field(&l.stack_or_backend),
                format!("{:.1}", l.mean),
                format!("{:.1}", l.median),
                format!("{:.1}", l.p95),
                format!("{:.1}", l.p99),
                l.iterations.map_or(String::new(), |n| n.to_string()),
                opt(l.ci.map(|c| c.0)),
                opt(l.ci.map(|c| c.1)),
            ]
            .join(",");
            out.push('\n');
        }
        Ok(out.into_bytes())
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn quoting() {
        assert_eq!(super::field("a,b"), "\"a,b\"");
        assert_eq!(super::field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(super::field("plain"), "plain");
    }
}
