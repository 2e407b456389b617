//! How numbers look wherever pqprof shows them: the site, the text tables, the exporters. Every
//! figure comes from the JSON as is; this only formats it.

/// A duration in nanoseconds, in the unit that suits it: "840 ns", "83.3 µs", "9.57 ms", "1.412 s".
pub fn time(ns: f64) -> String {
    if !ns.is_finite() {
        return "n/a".into();
    }
    // A negative figure (an in-situ card's remainder where the calls' sum passes the mean
    // connection) keeps the unit its size calls for, with a minus sign, not "-56645 ns".
    if ns < 0.0 {
        return format!("−{}", time(-ns));
    }
    // -0.0 is not below zero, and would print "-0 ns".
    let ns = ns.abs();
    if ns < 1e3 {
        format!("{ns:.0} ns")
    } else if ns < 1e6 {
        format!("{:.1} µs", ns / 1e3)
    } else if ns < 1e9 {
        format!("{:.2} ms", ns / 1e6)
    } else {
        format!("{:.3} s", ns / 1e9)
    }
}

/// A round-trip time as a grid names it, in milliseconds with no trailing zeros: "5.6 ms",
/// "78.7 ms", "0 ms".
pub(crate) fn rtt(ns: f64) -> String {
    let ms = format!("{:.3}", ns / 1e6);
    let ms = ms.trim_end_matches('0').trim_end_matches('.');
    format!("{ms} ms")
}

/// An integer with thousands separators: 11998 -> "11,998".
pub fn count(n: f64) -> String {
    if !n.is_finite() {
        return "n/a".into();
    }
    let digits = format!("{:.0}", n.abs());
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if n < 0.0 && digits != "0" {
        out.insert(0, '−');
    }
    out
}

pub fn bytes(n: usize) -> String {
    format!("{} B", count(n as f64))
}

/// A signed percentage: "+52.4%", "−47.5%" (a real minus sign).
pub(crate) fn delta(pct: f64) -> String {
    let s = format!("{:.1}%", pct.abs());
    if pct < 0.0 && s != "0.0%" {
        format!("−{s}")
    } else {
        format!("+{s}")
    }
}

pub(crate) fn ratio(x: f64) -> String {
    format!("{x:.2}×")
}

/// A signed duration: "+85.0 µs", "−12 ns".
pub fn signed_time(ns: f64) -> String {
    if ns < 0.0 {
        format!("−{}", time(-ns))
    } else {
        format!("+{}", time(ns))
    }
}

/// A plain fixed-width text table (comfy-table, no borders), the columns in `right` right-aligned.
pub(crate) fn text_table(head: &[&str], rows: &[Vec<String>], right: &[usize]) -> String {
    use comfy_table::{presets::NOTHING, CellAlignment, ContentArrangement, Table};
    let mut t = Table::new();
    t.load_preset(NOTHING)
        .set_content_arrangement(ContentArrangement::Disabled)
        .set_header(head.to_vec());
    for r in rows {
        t.add_row(r.clone());
    }
    for &c in right {
        if let Some(col) = t.column_mut(c) {
            col.set_cell_alignment(CellAlignment::Right);
        }
    }
    t.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_pick_their_unit() {
        assert_eq!(time(840.0), "840 ns");
        assert_eq!(time(83_333.0), "83.3 µs");
        assert_eq!(time(9_570_000.0), "9.57 ms");
        assert_eq!(time(1_412_000_000.0), "1.412 s");
        assert_eq!(time(f64::NAN), "n/a");
        assert_eq!(time(-56_645.0), "−56.6 µs");
        assert_eq!(time(-0.0), "0 ns");
    }

    #[test]
    fn rtts_as_the_grid_names_them() {
        assert_eq!(rtt(5_600_000.0), "5.6 ms");
        assert_eq!(rtt(78_700_000.0), "78.7 ms");
        assert_eq!(rtt(0.0), "0 ms");
        assert_eq!(rtt(195_700_000.0), "195.7 ms");
    }

    #[test]
    fn counts_and_signs() {
        assert_eq!(count(11_998.4), "11,998");
        assert_eq!(count(999.0), "999");
        assert_eq!(count(1_000_000.0), "1,000,000");
        assert_eq!(bytes(2336), "2,336 B");
        assert_eq!(delta(52.44), "+52.4%");
        assert_eq!(delta(-47.5), "−47.5%");
        assert_eq!(delta(-0.01), "+0.0%");
        assert_eq!(ratio(2.771), "2.77×");
        assert_eq!(signed_time(-1500.0), "−1.5 µs");
        assert_eq!(signed_time(85_000.0), "+85.0 µs");
    }

    #[test]
    fn text_tables_align_columns() {
        let t = text_table(
            &["name", "value"],
            &[
                vec!["a".into(), "1".into()],
                vec!["long name".into(), "1,000".into()],
            ],
            &[1],
        );
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines.len(), 3);
        // Right-aligned: the values end in the same column.
        assert_eq!(lines[1].trim_end().len(), lines[2].trim_end().len());
    }
}
