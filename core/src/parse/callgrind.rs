//! The totals of a callgrind output file (valgrind's callgrind format, "Callgrind Format
//! Specification" in the valgrind manual): the `events:` line names the counters, the `totals:` (or
//! `summary:`) line gives their sums over what was collected.

use anyhow::{bail, Result};

pub fn totals(text: &str) -> Result<(Vec<String>, Vec<u64>)> {
    let mut events: Option<Vec<String>> = None;
    let mut totals: Option<Vec<u64>> = None;
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("events:") {
            events = Some(rest.split_whitespace().map(str::to_string).collect());
        } else if let Some(rest) = line
            .strip_prefix("totals:")
            .or_else(|| line.strip_prefix("summary:"))
        {
            let v: Result<Vec<u64>, _> = rest.split_whitespace().map(str::parse).collect();
            match v {
                Ok(v) => totals = Some(v),
                Err(_) => bail!("a totals line that is not numbers: {line}"),
            }
        }
    }
    match (events, totals) {
        (Some(e), Some(mut t)) if !e.is_empty() && t.len() <= e.len() => {
            // Trailing zero counts may be left out (the format allows it).
            t.resize(e.len(), 0);
            Ok((e, t))
        }
        (Some(_), Some(_)) => bail!("more totals than events"),
        (None, _) => bail!("no events: line"),
        (_, None) => bail!("no totals: line (was anything collected?)"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_events_and_totals() {
        let text = "version: 1\ncreator: callgrind-3.19.0\nevents: Ir Dr Dw I1mr\nfn=(1) f\n1 5 2\ntotals: 1000 200 50\n";
        let (e, t) = totals(text).unwrap();
        assert_eq!(e, vec!["Ir", "Dr", "Dw", "I1mr"]);
        assert_eq!(t, vec![1000, 200, 50, 0]);
        assert!(totals("events: Ir\n").is_err());
        assert!(totals("totals: 1\n").is_err());
        assert!(totals("events: Ir\ntotals: 1 2\n").is_err());
        assert!(totals("events: Ir\ntotals: x\n").is_err());
    }
}
