//! Line charts with axes, tick marks and tick labels, drawn on a [`Canvas`]: the objective
//! per iteration (`trace.png`) and K and the objective against the penalty (`path.png`).
//!
//! A chart is a panel: a title above, the y label written upwards on the left, the x label
//! below. The data range is padded by 5 % on each side (a constant series gets ±1, or ±10 %
//! of its value). Linear axes get "nice" ticks (steps of 1, 2 or 5 × 10ᵏ, about five of
//! them); a logarithmic x axis gets a tick at every power of ten in range, or at the two ends
//! when the range holds fewer than two powers. Points are joined by straight lines and marked
//! with a small square. Non-finite points are left out.

use super::canvas::{BLACK, Canvas, GREY, Rgb, line_height};
use super::font::text_width;

/// Colour of the data line.
const INK: Rgb = [31, 90, 180];
/// Text scale of titles and labels.
const SCALE: usize = 2;

/// One panel: a series of (x, y) points and its labels.
#[derive(Clone, Debug)]
pub struct Chart {
    /// Written above the plot.
    pub title: String,
    /// Written below the x axis.
    pub x_label: String,
    /// Written upwards left of the y axis.
    pub y_label: String,
    /// Logarithmic x axis (all x must then be positive).
    pub x_log: bool,
    /// The points, joined in the order given.
    pub points: Vec<(f64, f64)>,
    /// Whole-number data on the (linear) x and y axes: tick steps of at least 1.
    pub integer: (bool, bool),
}

/// Several charts stacked vertically, each `width × panel_height`, as a PNG file.
pub fn charts_png(charts: &[Chart], width: usize, panel_height: usize) -> Vec<u8> {
    let mut canvas = Canvas::new(width, panel_height * charts.len().max(1), [255; 3]);
    for (i, chart) in charts.iter().enumerate() {
        chart.draw(
            &mut canvas,
            0,
            (i * panel_height) as i64,
            width,
            panel_height,
        );
    }
    canvas.to_png()
}

/// An axis: the data interval shown and where its ticks go.
struct Axis {
    lo: f64,
    hi: f64,
    log: bool,
    ticks: Vec<f64>,
}

impl Axis {
    fn new(values: impl Iterator<Item = f64>, log: bool, integer: bool) -> Self {
        let t = |v: f64| if log { v.log10() } else { v };
        let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
        for v in values {
            lo = lo.min(t(v));
            hi = hi.max(t(v));
        }
        if !lo.is_finite() || !hi.is_finite() {
            (lo, hi) = (0.0, 1.0);
        }
        if hi - lo <= 0.0 {
            let pad = if lo == 0.0 { 1.0 } else { 0.1 * lo.abs() };
            (lo, hi) = (lo - pad, hi + pad);
        } else {
            let pad = 0.05 * (hi - lo);
            (lo, hi) = (lo - pad, hi + pad);
        }
        let ticks = if log {
            let powers: Vec<f64> = (lo.ceil() as i64..=hi.floor() as i64)
                .map(|k| 10f64.powi(k as i32))
                .collect();
            if powers.len() >= 2 {
                powers
            } else {
                let pad = 0.05 / 1.1 * (hi - lo);
                vec![10f64.powf(lo + pad), 10f64.powf(hi - pad)]
            }
        } else {
            nice_ticks(lo, hi, integer)
        };
        Self { lo, hi, log, ticks }
    }

    /// Position of `v` in [0, 1] along the axis.
    fn frac(&self, v: f64) -> f64 {
        let v = if self.log { v.log10() } else { v };
        (v - self.lo) / (self.hi - self.lo)
    }
}

/// About five ticks at multiples of 1, 2 or 5 × 10ᵏ inside [lo, hi]; with `integer` the
/// step is at least 1.
fn nice_ticks(lo: f64, hi: f64, integer: bool) -> Vec<f64> {
    let raw = (hi - lo) / 5.0;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    let step = if integer { step.max(1.0) } else { step };
    let first = (lo / step).ceil() as i64;
    let last = (hi / step).floor() as i64;
    (first..=last).map(|k| k as f64 * step).collect()
}

/// A short tick label: up to four significant digits, plain between 0.001 and 10⁶, else with
/// an exponent (`1.5E7`).
pub fn tick_label(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return if v == 0.0 { "0".into() } else { format!("{v}") };
    }
    let a = v.abs();
    if (1e-3..1e6).contains(&a) {
        let digits = (3 - a.log10().floor() as i64).clamp(0, 6) as usize;
        trim_zeros(format!("{v:.digits$}"))
    } else {
        let e = a.log10().floor() as i32;
        let m = v / 10f64.powi(e);
        format!("{}E{e}", trim_zeros(format!("{m:.2}")))
    }
}

fn trim_zeros(s: String) -> String {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

impl Chart {
    /// Draws the chart into the rectangle of top-left (x0, y0) and size w × h.
    pub fn draw(&self, c: &mut Canvas, x0: i64, y0: i64, w: usize, h: usize) {
        let lh = line_height(SCALE) as i64;
        let pts: Vec<(f64, f64)> = self
            .points
            .iter()
            .copied()
            .filter(|(x, y)| x.is_finite() && y.is_finite() && (!self.x_log || *x > 0.0))
            .collect();
        let xa = Axis::new(pts.iter().map(|p| p.0), self.x_log, self.integer.0);
        let ya = Axis::new(pts.iter().map(|p| p.1), false, self.integer.1);
        let y_labels: Vec<String> = ya.ticks.iter().map(|&t| tick_label(t)).collect();
        let widest = y_labels
            .iter()
            .map(|l| text_width(l, SCALE))
            .max()
            .unwrap_or(0) as i64;
        // Plot area.
        let left = x0 + 8 + lh + widest + 12;
        let right = x0 + w as i64 - 20;
        let top = y0 + 10 + lh;
        let bottom = y0 + h as i64 - 2 * lh - 12;
        if right <= left + 10 || bottom <= top + 10 {
            return;
        }
        c.text(x0 + 8 + lh, y0 + 8, &self.title, SCALE, BLACK);
        // Axes and ticks.
        c.line(left, top, left, bottom, BLACK);
        c.line(left, bottom, right, bottom, BLACK);
        let px = |v: f64| left + (xa.frac(v) * (right - left) as f64).round() as i64;
        let py = |v: f64| bottom - (ya.frac(v) * (bottom - top) as f64).round() as i64;
        for (t, label) in ya.ticks.iter().zip(&y_labels) {
            let y = py(*t);
            c.line(left + 1, y, right, y, [235; 3]);
            c.line(left - 5, y, left, y, BLACK);
            let tw = text_width(label, SCALE) as i64;
            c.text(
                left - 8 - tw,
                y - (7 * SCALE as i64) / 2,
                label,
                SCALE,
                BLACK,
            );
        }
        let mut last_end = i64::MIN;
        for t in &xa.ticks {
            let x = px(*t);
            c.line(x, bottom, x, bottom + 5, BLACK);
            let label = tick_label(*t);
            let tw = text_width(&label, SCALE) as i64;
            let start = x - tw / 2;
            // Skip labels that would overlap the previous one.
            if start > last_end + 6 {
                c.text(start, bottom + 9, &label, SCALE, BLACK);
                last_end = start + tw;
            }
        }
        let xl = text_width(&self.x_label, SCALE) as i64;
        c.text(
            (left + right - xl) / 2,
            bottom + 9 + lh,
            &self.x_label,
            SCALE,
            BLACK,
        );
        let yl = text_width(&self.y_label, SCALE) as i64;
        c.text_up(x0 + 8, (top + bottom + yl) / 2, &self.y_label, SCALE, BLACK);
        // Data.
        for pair in pts.windows(2) {
            let (a, b) = (pair[0], pair[1]);
            c.line(px(a.0), py(a.1), px(b.0), py(b.1), INK);
        }
        for &(x, y) in &pts {
            c.fill_rect(px(x) - 2, py(y) - 2, 5, 5, INK);
        }
        c.frame(
            left,
            top,
            (right - left + 1) as usize,
            (bottom - top + 1) as usize,
            GREY,
        );
        c.line(left, top, left, bottom, BLACK);
        c.line(left, bottom, right, bottom, BLACK);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tick_labels_are_short() {
        assert_eq!(tick_label(0.0), "0");
        assert_eq!(tick_label(1500.0), "1500");
        assert_eq!(tick_label(0.25), "0.25");
        assert_eq!(tick_label(2.5e7), "2.5E7");
        assert_eq!(tick_label(-3.0), "-3");
    }

    #[test]
    fn nice_ticks_fall_on_round_steps() {
        assert_eq!(
            nice_ticks(0.0, 10.0, false),
            vec![0.0, 2.0, 4.0, 6.0, 8.0, 10.0]
        );
        let t = nice_ticks(0.13, 0.87, false);
        assert!(
            t.len() >= 3
                && t.iter()
                    .all(|v| (v * 10.0 - (v * 10.0).round()).abs() < 1e-9)
        );
    }
}
