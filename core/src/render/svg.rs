//! Inline SVG charts, written by hand: readable without JS, labelled axes, values on the bars, and
//! the Okabe-Ito palette (Okabe & Ito 2008, "Color Universal Design"), which stays distinct under
//! the common colour-vision deficiencies. Every colour also comes with a text label.

use crate::units as format;
use std::fmt::Write;

pub const PALETTE: [&str; 7] = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442"];

pub fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;").replace('\'', "&#39;")
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
    let _ = write!(s, r#"<svg class="stack" role="img" viewBox="0 0 {w} {}" xmlns="http://www.w3.org/2000/svg"><title>{}</title>"#, h + 22.0, escape(title));
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
            let _ = write!(s, r#"<text x="{:.1}" y="17" class="seg">{:.0}%</text>"#, x + 4.0, seg.share_pct);
        }
        x += width;
    }
    let _ = write!(s, r#"<text x="0" y="{}" class="axis">0%</text><text x="{w}" y="{}" class="axis" text-anchor="end">100% of the composed mean</text></svg>"#, h + 16.0, h + 16.0);
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
    let _ = write!(s, r#"<svg class="bars" role="img" viewBox="0 0 {} {h}" xmlns="http://www.w3.org/2000/svg"><title>{}</title>"#, label_w + plot_w + 200.0, escape(title));
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_escaped() {
        let seg = [Segment { label: "<script>".into(), value_ns: 1.0, share_pct: 100.0 }];
        let s = stacked_bar("<b>", &seg);
        assert!(!s.contains("<script>") && s.contains("&lt;script&gt;") && s.contains("&lt;b&gt;"));
        let b = [Bar { label: "x\"y".into(), value_ns: 2.0, key: "k".into(), note: String::new() }];
        assert!(bars("t", "a", &b, &["k".into()]).contains("x&quot;y"));
    }
}
