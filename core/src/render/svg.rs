//! Inline SVG charts, written by hand: readable without JS, labelled axes, values on the bars, and
//! the Okabe-Ito palette (Okabe & Ito 2008, "Color Universal Design"), which stays distinct under
//! the common colour-vision deficiencies. Every colour also comes with a text label.

use crate::units as format;
use std::fmt::Write;

pub const PALETTE: [&str; 7] = [
    "#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442",
];

pub fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

pub struct Segment {
    pub label: String,
    pub value_ns: f64,
    pub share_pct: f64,
}

/// A stacked bar of a handshake's phases: each segment's width is its share of the composed mean.
pub fn stacked_bar(title: &str, segments: &[Segment]) -> String {
    let (w, h) = (640.0, 26.0);
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg class="stack" role="img" viewBox="0 0 {w} {}" xmlns="http://www.w3.org/2000/svg"><title>{}</title>"#,
        h + 22.0,
        escape(title)
    );
    let mut x = 0.0;
    for (i, seg) in segments.iter().enumerate() {
        let width = w * seg.share_pct / 100.0;
        let colour = PALETTE[i % PALETTE.len()];
        let _ = write!(
            s,
            r#"<rect x="{x:.3}" y="0" width="{width:.3}" height="{h}" fill="{colour}"><title>{}: {} ({:.1}%)</title></rect>"#,
            escape(&seg.label),
            format::time(seg.value_ns),
            seg.share_pct
        );
        if width > 48.0 {
            let _ = write!(
                s,
                r#"<text x="{:.1}" y="17" class="seg">{:.0}%</text>"#,
                x + 4.0,
                seg.share_pct
            );
        }
        x += width;
    }
    let _ = write!(
        s,
        r#"<text x="0" y="{}" class="axis">0%</text><text x="{w}" y="{}" class="axis" text-anchor="end">100% of the composed mean</text></svg>"#,
        h + 16.0,
        h + 16.0
    );
    s
}

pub struct Bar {
    pub label: String,
    pub value_ns: f64,
    /// Chooses the colour; bars with the same key share it.
    pub key: String,
    pub note: String,
}

/// Horizontal bars with the label on the left and the value written at the end of each bar.
pub fn bars(title: &str, axis: &str, bars: &[Bar], keys: &[String]) -> String {
    let label_w = 150.0;
    let plot_w = 300.0;
    let row = 22.0;
    let h = row * bars.len() as f64 + 30.0;
    let max = bars.iter().map(|b| b.value_ns).fold(0.0, f64::max).max(1.0);
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg class="bars" role="img" viewBox="0 0 {} {h}" xmlns="http://www.w3.org/2000/svg"><title>{}</title>"#,
        label_w + plot_w + 200.0,
        escape(title)
    );
    for (i, b) in bars.iter().enumerate() {
        let y = i as f64 * row;
        let width = plot_w * b.value_ns / max;
        let k = keys.iter().position(|k| *k == b.key).unwrap_or(0);
        let _ = write!(
            s,
            r#"<text x="{:.0}" y="{:.1}" class="label" text-anchor="end">{}</text><rect x="{label_w}" y="{:.1}" width="{width:.2}" height="{:.0}" fill="{}"/><text x="{:.1}" y="{:.1}" class="value">{}{}</text>"#,
            label_w - 6.0,
            y + 15.0,
            escape(&b.label),
            y + 3.0,
            row - 6.0,
            PALETTE[k % PALETTE.len()],
            label_w + width + 4.0,
            y + 15.0,
            escape(&format::time(b.value_ns)),
            escape(&b.note)
        );
    }
    let base = row * bars.len() as f64 + 2.0;
    let _ = write!(
        s,
        r#"<line x1="{label_w}" y1="{base}" x2="{}" y2="{base}" class="axisline"/><text x="{label_w}" y="{}" class="axis">0</text><text x="{}" y="{}" class="axis" text-anchor="end">{}</text><text x="{}" y="{}" class="axis" text-anchor="middle">{}</text></svg>"#,
        label_w + plot_w,
        base + 13.0,
        label_w + plot_w,
        base + 13.0,
        escape(&format::time(max)),
        label_w + plot_w / 2.0,
        base + 26.0,
        escape(axis)
    );
    s
}

pub struct Series {
    pub label: String,
    pub colour: String,
    /// Dashed: a published reference, not a measurement here.
    pub dashed: bool,
    pub points: Vec<(f64, f64)>,
}

/// A line chart: x and y axes with their labels and end values, a zero line when y crosses it, and
/// a legend that names every series in text.
pub fn lines(title: &str, x_label: &str, y_label: &str, series: &[Series]) -> String {
    let (left, top, plot_w, plot_h) = (56.0, 12.0, 420.0, 180.0);
    let all: Vec<(f64, f64)> = series
        .iter()
        .flat_map(|s| s.points.iter().copied())
        .filter(|(x, y)| x.is_finite() && y.is_finite())
        .collect();
    let (x0, x1) = all.iter().fold((f64::MAX, f64::MIN), |(a, b), (x, _)| {
        (a.min(*x), b.max(*x))
    });
    let (mut y0, mut y1) = all
        .iter()
        .fold((0.0f64, 0.0f64), |(a, b), (_, y)| (a.min(*y), b.max(*y)));
    if all.is_empty() || x1 <= x0 {
        return format!(
            r#"<p class="note">{}: not enough points to draw.</p>"#,
            escape(title)
        );
    }
    if y1 - y0 < 1e-9 {
        y1 += 1.0;
        y0 -= 1.0;
    }
    let px = |x: f64| left + (x - x0) / (x1 - x0) * plot_w;
    let py = |y: f64| top + (y1 - y) / (y1 - y0) * plot_h;
    let legend_h = 18.0 * series.len() as f64;
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg class="lines" role="img" viewBox="0 0 {} {}" xmlns="http://www.w3.org/2000/svg"><title>{}</title>"#,
        left + plot_w + 20.0,
        top + plot_h + 44.0 + legend_h,
        escape(title)
    );
    let _ = write!(
        s,
        r##"<line x1="{left}" y1="{top}" x2="{left}" y2="{}" stroke="#555"/><line x1="{left}" y1="{}" x2="{}" y2="{}" stroke="#555"/>"##,
        top + plot_h,
        top + plot_h,
        left + plot_w,
        top + plot_h
    );
    if y0 < 0.0 && y1 > 0.0 {
        let _ = write!(
            s,
            r##"<line x1="{left}" y1="{:.1}" x2="{}" y2="{:.1}" stroke="#aaa" stroke-dasharray="2 3"/>"##,
            py(0.0),
            left + plot_w,
            py(0.0)
        );
    }
    let _ = write!(
        s,
        r#"<text x="{}" y="{:.1}" class="axis" text-anchor="end">{:.1}</text><text x="{}" y="{:.1}" class="axis" text-anchor="end">{:.1}</text>"#,
        left - 4.0,
        top + 8.0,
        y1,
        left - 4.0,
        top + plot_h,
        y0
    );
    let _ = write!(
        s,
        r#"<text x="{left}" y="{}" class="axis">{}</text><text x="{}" y="{}" class="axis" text-anchor="end">{}</text>"#,
        top + plot_h + 14.0,
        x0,
        left + plot_w,
        top + plot_h + 14.0,
        x1
    );
    let _ = write!(
        s,
        r#"<text x="{}" y="{}" class="axis" text-anchor="middle">{}</text>"#,
        left + plot_w / 2.0,
        top + plot_h + 14.0,
        escape(x_label)
    );
    let _ = write!(
        s,
        r#"<text x="12" y="{:.1}" class="axis" transform="rotate(-90 12 {:.1})" text-anchor="middle">{}</text>"#,
        top + plot_h / 2.0,
        top + plot_h / 2.0,
        escape(y_label)
    );
    for (i, se) in series.iter().enumerate() {
        let pts: Vec<String> = se
            .points
            .iter()
            .filter(|(x, y)| x.is_finite() && y.is_finite())
            .map(|(x, y)| format!("{:.1},{:.1}", px(*x), py(*y)))
            .collect();
        let dash = if se.dashed {
            r#" stroke-dasharray="5 4""#
        } else {
            ""
        };
        let _ = write!(
            s,
            r#"<polyline fill="none" stroke="{}" stroke-width="2"{dash} points="{}"><title>{}</title></polyline>"#,
            se.colour,
            pts.join(" "),
            escape(&se.label)
        );
        for (x, y) in se
            .points
            .iter()
            .filter(|(x, y)| x.is_finite() && y.is_finite())
        {
            let _ = write!(
                s,
                r#"<circle cx="{:.1}" cy="{:.1}" r="3" fill="{}"><title>{}: {x} → {y:.2}</title></circle>"#,
                px(*x),
                py(*y),
                se.colour,
                escape(&se.label)
            );
        }
        let ly = top + plot_h + 34.0 + 18.0 * i as f64;
        let _ = write!(
            s,
            r#"<line x1="{left}" y1="{:.1}" x2="{}" y2="{:.1}" stroke="{}" stroke-width="2"{dash}/><text x="{}" y="{:.1}" class="axis">{}</text>"#,
            ly - 4.0,
            left + 24.0,
            ly - 4.0,
            se.colour,
            left + 30.0,
            ly,
            escape(&se.label)
        );
    }
    s.push_str("</svg>");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_escaped() {
        let seg = [Segment {
            label: "<script>".into(),
            value_ns: 1.0,
            share_pct: 100.0,
        }];
        let s = stacked_bar("<b>", &seg);
        assert!(!s.contains("<script>") && s.contains("&lt;script&gt;") && s.contains("&lt;b&gt;"));
        let b = [Bar {
            label: "x\"y".into(),
            value_ns: 2.0,
            key: "k".into(),
            note: String::new(),
        }];
        assert!(bars("t", "a", &b, &["k".into()]).contains("x&quot;y"));
    }
}
