//! Inline SVG charts, written by hand: readable without JS, labelled axes, values on the bars, and
//! the Okabe-Ito palette (Okabe & Ito 2008, "Color Universal Design"), which stays distinct under
//! the common colour-vision deficiencies. Every colour also comes with a text label.

use crate::units as format;
use std::fmt::Write;

pub(crate) const PALETTE: [&str; 7] = [
    "#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442",
];

pub(crate) fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

pub(crate) struct Segment {
    pub(crate) label: String,
    pub(crate) value_ns: f64,
    pub(crate) share_pct: f64,
}

/// A stacked bar of a handshake's phases: each segment's width is its share of the composed mean.
/// Without its legend, which `stacked_figure` adds.
fn stacked_bar_coloured(
    title: &str,
    segments: &[Segment],
    colour_of: &dyn Fn(usize) -> &'static str,
) -> String {
    let (w, h) = (360.0, 20.0);
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg class="stack" role="img" viewBox="0 0 {w} {h}" xmlns="http://www.w3.org/2000/svg"><title>{}</title>"#,
        escape(title)
    );
    let mut x = 0.0;
    for (i, seg) in segments.iter().enumerate() {
        let width = (w * seg.share_pct / 100.0).max(0.0);
        let colour = colour_of(i);
        let _ = write!(
            s,
            r#"<rect x="{x:.3}" y="0" width="{width:.3}" height="{h}" fill="{colour}"><title>{}: {} ({:.1}%)</title></rect>"#,
            escape(&seg.label),
            format::time(seg.value_ns),
            seg.share_pct
        );
        if width > 30.0 {
            let _ = write!(
                s,
                r#"<text x="{:.1}" y="14.5" class="seg">{:.0}%</text>"#,
                x + 4.0,
                seg.share_pct
            );
        }
        x += width;
    }
    s.push_str("</svg>");
    s
}

/// Grey for what a bar or chart lumps together ("other"), apart from the palette's colours.
pub(crate) const OTHER: &str = "#999999";

/// The most segments a stacked bar shows apart: beyond the palette, colours would repeat and the
/// legend could not tell two segments apart.
pub(crate) const MAX_SEGMENTS: usize = PALETTE.len() - 1;

/// A stacked bar with its legend, in one figure: every colour named with its time and share. More
/// than `MAX_SEGMENTS` segments keep the largest apart and lump the rest as "other" (grey).
pub(crate) fn stacked_figure(title: &str, segments: &[Segment]) -> String {
    let mut shown: Vec<Segment> = Vec::new();
    if segments.len() > MAX_SEGMENTS {
        let mut order: Vec<usize> = (0..segments.len()).collect();
        order.sort_by(|&a, &b| segments[b].value_ns.total_cmp(&segments[a].value_ns));
        let keep: Vec<usize> = order[..MAX_SEGMENTS - 1].to_vec();
        let mut other = Segment {
            label: String::new(),
            value_ns: 0.0,
            share_pct: 0.0,
        };
        let mut lumped = 0;
        for (i, seg) in segments.iter().enumerate() {
            if keep.contains(&i) {
                shown.push(Segment {
                    label: seg.label.clone(),
                    value_ns: seg.value_ns,
                    share_pct: seg.share_pct,
                });
            } else {
                other.value_ns += seg.value_ns;
                other.share_pct += seg.share_pct;
                lumped += 1;
            }
        }
        other.label = format!("{lumped} other kinds");
        shown.push(other);
    } else {
        shown = segments
            .iter()
            .map(|s| Segment {
                label: s.label.clone(),
                value_ns: s.value_ns,
                share_pct: s.share_pct,
            })
            .collect();
    }
    let lumped = segments.len() > MAX_SEGMENTS;
    let colour = |i: usize| {
        if lumped && i == shown.len() - 1 {
            OTHER
        } else {
            PALETTE[i % PALETTE.len()]
        }
    };
    let mut s = String::from(r#"<figure class="stacked">"#);
    s.push_str(&stacked_bar_coloured(title, &shown, &colour));
    s.push_str(r#"<figcaption class="legend">"#);
    for (i, seg) in shown.iter().enumerate() {
        let _ = write!(
            s,
            r#"<span class="key"><i style="background:{}"></i>{} {} ({:.1}%)</span>"#,
            colour(i),
            escape(&seg.label),
            format::time(seg.value_ns),
            seg.share_pct
        );
    }
    s.push_str("</figcaption></figure>");
    s
}

pub(crate) struct Bar {
    pub(crate) label: String,
    pub(crate) value_ns: f64,
    /// Chooses the colour; bars with the same key share it.
    pub(crate) key: String,
    pub(crate) note: String,
}

/// Horizontal bars with the label on the left and the value written at the end of each bar.
pub(crate) fn bars(title: &str, axis: &str, bars: &[Bar], keys: &[String]) -> String {
    bars_in(title, axis, bars, keys, &format::time)
}

/// The same with values in another unit (`value_ns` then holds that unit: bytes, a rate).
pub(crate) fn bars_in(
    title: &str,
    axis: &str,
    bars: &[Bar],
    keys: &[String],
    unit: &dyn Fn(f64) -> String,
) -> String {
    let label_w = 200.0;
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
            escape(&unit(b.value_ns)),
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
        escape(&unit(max)),
        label_w + plot_w / 2.0,
        base + 26.0,
        escape(axis)
    );
    s
}

/// One line of a `chart`: points joined (or set apart, for a published reference beside the
/// measurements), with a shaded band (x, low, high) where the figure has a noise band.
pub(crate) struct Line {
    pub(crate) label: String,
    pub(crate) colour: String,
    pub(crate) dashed: bool,
    pub(crate) points_only: bool,
    pub(crate) points: Vec<(f64, f64)>,
    pub(crate) band: Vec<(f64, f64, f64)>,
}

pub(crate) struct Axes<'a> {
    pub(crate) x_label: &'a str,
    pub(crate) y_label: &'a str,
    /// A logarithmic y axis, for latencies that run from milliseconds to seconds.
    pub(crate) log_y: bool,
    /// Where to mark the x axis, and how.
    pub(crate) x_ticks: Vec<(f64, String)>,
    pub(crate) y_unit: &'a dyn Fn(f64) -> String,
}

/// Round tick values between `lo` and `hi`: 1, 2 or 5 times a power of ten apart, 3 to 6 of them.
fn linear_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let span = (hi - lo).abs().max(f64::MIN_POSITIVE);
    let raw = span / 4.0;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| span / s <= 5.0)
        .unwrap_or(10.0 * mag);
    let mut t = (lo / step).ceil() * step;
    let mut out = Vec::new();
    while t <= hi + step * 1e-9 && out.len() < 12 {
        out.push(if t.abs() < step * 1e-9 { 0.0 } else { t });
        t += step;
    }
    out
}

/// A chart's plot area and its data's ranges: where a value falls in the picture.
struct Frame {
    left: f64,
    top: f64,
    plot_w: f64,
    plot_h: f64,
    x0: f64,
    x1: f64,
    ty0: f64,
    ty1: f64,
    log_y: bool,
}

impl Frame {
    fn ty(&self, y: f64) -> f64 {
        if self.log_y {
            y.log10()
        } else {
            y
        }
    }
    fn px(&self, x: f64) -> f64 {
        self.left + (x - self.x0) / (self.x1 - self.x0) * self.plot_w
    }
    fn py(&self, y: f64) -> f64 {
        self.top + (self.ty1 - self.ty(y)) / (self.ty1 - self.ty0) * self.plot_h
    }
    /// A value the y axis can show (positive on a log scale).
    fn ok(&self, y: f64) -> bool {
        y.is_finite() && (!self.log_y || y > 0.0)
    }
}

/// The y axis's ticks, widening `y0..y1` to whole decades (log) or to the outer ticks (linear, from
/// zero where the data start below half their top).
fn y_ticks(log_y: bool, y0: &mut f64, y1: &mut f64) -> Vec<f64> {
    if log_y {
        let (a, b) = (y0.log10().floor() as i32, y1.log10().ceil() as i32);
        *y0 = 10f64.powi(a);
        *y1 = 10f64.powi(b.max(a + 1));
        return (a..=b.max(a + 1)).map(|e| 10f64.powi(e)).collect();
    }
    if *y0 > 0.0 && *y0 < *y1 * 0.5 {
        *y0 = 0.0;
    }
    if *y1 - *y0 < 1e-9 * y1.abs().max(1.0) {
        *y0 -= y0.abs().max(1.0) * 0.05;
        *y1 += y1.abs().max(1.0) * 0.05;
    }
    let t = linear_ticks(*y0, *y1);
    if let (Some(a), Some(b)) = (t.first(), t.last()) {
        *y0 = y0.min(*a);
        *y1 = y1.max(*b);
    }
    t
}

/// The frame for these lines' points and bands, with the y ticks; `None` where nothing can be drawn.
fn frame(axes: &Axes, lines: &[Line]) -> Option<(Frame, Vec<f64>)> {
    let ok = |y: f64| y.is_finite() && (!axes.log_y || y > 0.0);
    let mut xs: Vec<f64> = Vec::new();
    let mut ys: Vec<f64> = Vec::new();
    for l in lines {
        for &(x, y) in &l.points {
            if x.is_finite() && ok(y) {
                xs.push(x);
                ys.push(y);
            }
        }
        for &(x, lo, hi) in &l.band {
            if x.is_finite() && ok(lo) && ok(hi) {
                xs.push(x);
                ys.extend([lo, hi]);
            }
        }
    }
    if xs.is_empty() {
        return None;
    }
    let (mut x0, mut x1) = xs
        .iter()
        .fold((f64::MAX, f64::MIN), |(a, b), x| (a.min(*x), b.max(*x)));
    let (mut y0, mut y1) = ys
        .iter()
        .fold((f64::MAX, f64::MIN), |(a, b), y| (a.min(*y), b.max(*y)));
    if x1 <= x0 {
        x0 -= 1.0;
        x1 += 1.0;
    }
    let ticks = y_ticks(axes.log_y, &mut y0, &mut y1);
    let mut f = Frame {
        left: 62.0,
        top: 10.0,
        plot_w: 400.0,
        plot_h: 170.0,
        x0,
        x1,
        ty0: 0.0,
        ty1: 0.0,
        log_y: axes.log_y,
    };
    (f.ty0, f.ty1) = (f.ty(y0), f.ty(y1));
    Some((f, ticks))
}

/// The grid, the ticks' labels and both axes with their titles.
fn axes_svg(s: &mut String, f: &Frame, axes: &Axes, y_ticks: &[f64]) {
    let (left, top, plot_w, plot_h) = (f.left, f.top, f.plot_w, f.plot_h);
    for &t in y_ticks {
        let y = f.py(t);
        let _ = write!(
            s,
            r##"<line x1="{left}" y1="{y:.1}" x2="{}" y2="{y:.1}" stroke="#e4e4e4"/><text x="{}" y="{:.1}" class="axis" text-anchor="end">{}</text>"##,
            left + plot_w,
            left - 4.0,
            y + 4.0,
            escape(&(axes.y_unit)(t))
        );
    }
    for (x, label) in &axes.x_ticks {
        if *x < f.x0 || *x > f.x1 {
            continue;
        }
        // Ends anchored inward, so a label at either end stays inside the picture.
        let anchor = if *x <= f.x0 {
            "start"
        } else if *x >= f.x1 {
            "end"
        } else {
            "middle"
        };
        let _ = write!(
            s,
            r#"<text x="{:.1}" y="{}" class="axis" text-anchor="{anchor}">{}</text>"#,
            f.px(*x),
            top + plot_h + 14.0,
            escape(label)
        );
    }
    let _ = write!(
        s,
        r##"<line x1="{left}" y1="{top}" x2="{left}" y2="{b}" stroke="#555"/><line x1="{left}" y1="{b}" x2="{}" y2="{b}" stroke="#555"/><text x="{}" y="{}" class="axis" text-anchor="middle">{}</text><text x="12" y="{:.1}" class="axis" transform="rotate(-90 12 {:.1})" text-anchor="middle">{}</text>"##,
        left + plot_w,
        left + plot_w / 2.0,
        top + plot_h + 28.0,
        escape(axes.x_label),
        top + plot_h / 2.0,
        top + plot_h / 2.0,
        escape(axes.y_label),
        b = top + plot_h
    );
}

/// A line's interval band, where it has two or more drawable points.
fn band_svg(s: &mut String, f: &Frame, l: &Line) {
    let band: Vec<&(f64, f64, f64)> = l
        .band
        .iter()
        .filter(|(x, lo, hi)| x.is_finite() && f.ok(*lo) && f.ok(*hi))
        .collect();
    if band.len() < 2 {
        return;
    }
    let upper = band
        .iter()
        .map(|(x, _, hi)| format!("{:.1},{:.1}", f.px(*x), f.py(*hi)));
    let lower = band
        .iter()
        .rev()
        .map(|(x, lo, _)| format!("{:.1},{:.1}", f.px(*x), f.py(*lo)));
    let _ = write!(
        s,
        r#"<polygon points="{}" fill="{}" fill-opacity="0.15" stroke="none"/>"#,
        upper.chain(lower).collect::<Vec<_>>().join(" "),
        l.colour
    );
}

/// The `i`-th line: its polyline (unless points only), its marks with their titles and its legend
/// entry.
fn line_svg(s: &mut String, f: &Frame, axes: &Axes, i: usize, l: &Line) {
    let left = f.left;
    let pts: Vec<(f64, f64)> = l
        .points
        .iter()
        .copied()
        .filter(|(x, y)| x.is_finite() && f.ok(*y))
        .collect();
    let dash = if l.dashed {
        r#" stroke-dasharray="5 4""#
    } else {
        ""
    };
    if !l.points_only && pts.len() > 1 {
        let _ = write!(
            s,
            r#"<polyline fill="none" stroke="{}" stroke-width="2"{dash} points="{}"><title>{}</title></polyline>"#,
            l.colour,
            pts.iter()
                .map(|(x, y)| format!("{:.1},{:.1}", f.px(*x), f.py(*y)))
                .collect::<Vec<_>>()
                .join(" "),
            escape(&l.label)
        );
    }
    for (x, y) in &pts {
        let (cx, cy) = (f.px(*x), f.py(*y));
        if l.points_only {
            let _ = write!(
                s,
                r#"<rect x="{:.1}" y="{:.1}" width="6" height="6" fill="none" stroke="{}" stroke-width="1.5"><title>{}: {}</title></rect>"#,
                cx - 3.0,
                cy - 3.0,
                l.colour,
                escape(&l.label),
                escape(&(axes.y_unit)(*y))
            );
        } else {
            let _ = write!(
                s,
                r#"<circle cx="{cx:.1}" cy="{cy:.1}" r="2.5" fill="{}"><title>{}: {}</title></circle>"#,
                l.colour,
                escape(&l.label),
                escape(&(axes.y_unit)(*y))
            );
        }
    }
    let ly = f.top + f.plot_h + 46.0 + 16.0 * i as f64;
    let swatch = if l.points_only {
        format!(
            r#"<rect x="{}" y="{:.1}" width="6" height="6" fill="none" stroke="{}" stroke-width="1.5"/>"#,
            left + 9.0,
            ly - 7.0,
            l.colour
        )
    } else {
        format!(
            r#"<line x1="{left}" y1="{:.1}" x2="{}" y2="{:.1}" stroke="{}" stroke-width="2"{dash}/>"#,
            ly - 4.0,
            left + 24.0,
            ly - 4.0,
            l.colour
        )
    };
    let _ = write!(
        s,
        r#"{swatch}<text x="{}" y="{ly:.1}" class="axis">{}</text>"#,
        left + 30.0,
        escape(&l.label)
    );
}

/// A line chart in SVG with labelled axes and ticks, optional bands, and a legend naming every line
/// in text. Non-finite points (and non-positive ones on a log axis) are left out.
pub(crate) fn chart(title: &str, axes: &Axes, lines: &[Line]) -> String {
    let Some((f, ticks)) = frame(axes, lines) else {
        return format!(r#"<p class="note">{}: nothing to draw.</p>"#, escape(title));
    };
    let height = f.top + f.plot_h + 40.0 + 16.0 * lines.len() as f64;
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg class="chart" role="img" viewBox="0 0 {} {height}" xmlns="http://www.w3.org/2000/svg"><title>{}</title>"#,
        f.left + f.plot_w + 16.0,
        escape(title)
    );
    axes_svg(&mut s, &f, axes, &ticks);
    for l in lines {
        band_svg(&mut s, &f, l);
    }
    for (i, l) in lines.iter().enumerate() {
        line_svg(&mut s, &f, axes, i, l);
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
        let s = stacked_figure("<b>", &seg);
        assert!(!s.contains("<script>") && s.contains("&lt;script&gt;") && s.contains("&lt;b&gt;"));
        let b = [Bar {
            label: "x\"y".into(),
            value_ns: 2.0,
            key: "k".into(),
            note: String::new(),
        }];
        assert!(bars("t", "a", &b, &["k".into()]).contains("x&quot;y"));
    }

    #[test]
    fn ticks_are_round_and_cover_the_range() {
        assert_eq!(linear_ticks(0.0, 10.0), vec![0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
        assert_eq!(linear_ticks(-3.0, 7.0), vec![-2.0, 0.0, 2.0, 4.0, 6.0]);
        let t = linear_ticks(0.0, 0.3);
        assert!(t.len() >= 3 && t.len() <= 7, "{t:?}");
    }

    #[test]
    fn a_stacked_figure_names_every_colour_it_draws() {
        let segs: Vec<Segment> = (0..9)
            .map(|i| Segment {
                label: format!("s{i}"),
                value_ns: f64::from(i + 1),
                share_pct: f64::from(i + 1) / 45.0 * 100.0,
            })
            .collect();
        let f = stacked_figure("t", &segs);
        // Nine segments: the five largest apart, the four smallest lumped as "other" in grey.
        assert_eq!(f.matches("<rect").count(), 6, "{f}");
        assert_eq!(f.matches(r#"class="key""#).count(), 6);
        assert!(f.contains("4 other kinds") && f.contains(OTHER));
        for colour in f.split("fill=\"").skip(1).map(|x| &x[..7]) {
            assert!(f.contains(&format!("background:{colour}")), "{colour}");
        }
        // Few segments: each its own key with its share.
        let f = stacked_figure("t", &segs[..2]);
        assert!(
            f.contains("s0 1 ns (2.2%)") && f.contains("s1 2 ns (4.4%)"),
            "{f}"
        );
    }
}
