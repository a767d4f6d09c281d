//! The two sweeps' line charts: maximum concurrency against max-model-len and the KV pool
//! against gpu-memory-utilization, each point focusable with its figures, failing points red
//! and the current setting ringed.

use plotters::prelude::{Color, RGBColor};
use plotters_backend::DrawingBackend;

use super::{
    amount, chart_w, finish, provenance_note, short_len, ticks, unit_div, whole_ticks, xml_escape,
    Plot, FG, REF_LABEL, TOTAL_MARK,
};
use crate::calc::sweep::{LenPoint, PoolPoint};
use crate::calc::units::{thousands, UnitSystem};

/// A line chart with focusable points; `x` positions are already in chart space.
struct Series<'a> {
    x_desc: &'a str,
    y_desc: &'a str,
    /// (x, y, label of x, info, is the current point, starts)
    points: Vec<(f64, f64, String, String, bool, bool)>,
    x_range: (f64, f64),
    /// Where the x labels go, and what they say.
    x_ticks: Vec<(f64, String)>,
    /// The y values are log2 of the figure; labels show the figure.
    y_log2: bool,
    /// A dashed reference line at this y (chart space), with its label.
    reference: Option<(f64, &'a str)>,
    name: &'a str,
}

fn line_chart(s: Series<'_>) -> String {
    let (ymin, ymax) = if s.y_log2 {
        let lo = s.points.iter().map(|p| p.1).fold(f64::INFINITY, f64::min);
        let hi = s
            .points
            .iter()
            .map(|p| p.1)
            .fold(f64::NEG_INFINITY, f64::max);
        (lo.floor().min(0.0) - 0.2, hi.ceil().max(lo + 1.0) + 0.2)
    } else {
        (
            0.0,
            s.points.iter().map(|p| p.1).fold(0.0, f64::max).max(1e-9) * 1.12,
        )
    };
    let mut svg = String::new();
    let mut overlay = String::new();
    {
        let mut plot = Plot::new(&mut svg, (chart_w(), 260), 10, 36, s.x_range, (ymin, ymax));
        let y_label = |v: f64| {
            if s.y_log2 {
                let x = 2f64.powf(v);
                if x < 1.0 {
                    format!("{x:.2}")
                } else {
                    format!("{x:.0}")
                }
            } else if ymax < 10.0 {
                format!("{v:.1}")
            } else {
                format!("{v:.0}")
            }
        };
        // Log-2 charts tick at whole powers of two, others at round values.
        let ys = if s.y_log2 {
            whole_ticks(ymin, ymax).map(|k| k as f64).collect()
        } else {
            ticks(ymin, ymax, 5)
        };
        plot.y_axis(&ys, &y_label, s.y_desc);
        plot.x_axis(&s.x_ticks, s.x_desc);
        let line = RGBColor(78, 121, 167);
        // Where one full request fits (concurrency 1): below it the start fails.
        if let Some(y) = s.reference {
            let (x0, x1) = (plot.x.from as i32, plot.x.to as i32);
            let py = plot.y.px(y.0);
            let mut x = x0;
            while x < x1 {
                plot.line((x, py), ((x + 6).min(x1), py), &TOTAL_MARK.stroke_width(1));
                x += 10;
            }
            plot.text(y.1, &REF_LABEL, (x1 - 4, py - 3));
        }
        let path: Vec<(i32, i32)> = s.points.iter().map(|p| plot_at(&plot, p)).collect();
        let _ = plot.svg.draw_path(path, &line.stroke_width(2));
        for p in &s.points {
            let color = if p.5 { line } else { TOTAL_MARK };
            let (px, py) = plot_at(&plot, p);
            let _ = plot.svg.draw_circle((px, py), 4, &color, true);
            // The current setting: a ring in the point's own colour, so a failing current
            // point reads as failing.
            if p.4 {
                let ring = if p.5 { FG } else { TOTAL_MARK };
                let _ = plot
                    .svg
                    .draw_circle((px, py), 8, &ring.stroke_width(3), false);
            }
            let info = xml_escape(&p.3);
            overlay.push_str(&format!(
                r#"<circle class="hit" cx="{px}" cy="{py}" r="9" tabindex="-1" data-current="{}" data-starts="{}"><title>{info}</title></circle>"#,
                p.4, p.5
            ));
        }
        plot.finish();
    }
    finish(svg, &overlay, s.name, chart_w())
}

fn plot_at(plot: &Plot<'_>, p: &(f64, f64, String, String, bool, bool)) -> (i32, i32) {
    plot.at((p.0, p.1))
}

/// Maximum concurrency against max-model-len (log-2 x axis), the current length marked.
pub fn len_sweep_chart(points: &[LenPoint], current: u64) -> String {
    if points.is_empty() {
        return String::new();
    }
    let lg = |l: u64| (l as f64).log2();
    let x0 = lg(points[0].max_model_len);
    let x1 = lg(points[points.len() - 1].max_model_len).max(x0 + 1.0);
    // A label at every power of two the sweep spans, thinned to about eight.
    let x_ticks = whole_ticks(x0, x1)
        .map(|k| (k as f64, short_len(1u64 << k.clamp(0, 62))))
        .collect();
    line_chart(Series {
        x_desc: "max-model-len (tokens, log scale)",
        y_desc: "max concurrency (log scale)",
        points: points
            .iter()
            .map(|p| {
                (
                    lg(p.max_model_len),
                    p.max_concurrency.max(1.0 / 64.0).log2(),
                    short_len(p.max_model_len),
                    match (p.starts, p.fails_at) {
                        (true, _) => format!(
                            "max-model-len {}: maximum concurrency {:.2} {}",
                            thousands(u128::from(p.max_model_len)),
                            p.max_concurrency,
                            provenance_note(&p.provenance)
                        ),
                        (false, _) if p.max_concurrency > 0.0 => format!(
                            "max-model-len {}: does not start; the pool holds {:.2} of one full-length request (fails at {}) {}",
                            thousands(u128::from(p.max_model_len)),
                            p.max_concurrency,
                            p.fails_at.unwrap_or("a check"),
                            provenance_note(&p.provenance)
                        ),
                        (false, f) => format!(
                            "max-model-len {}: does not start (fails at {}, before a pool is sized; drawn at the chart's floor) {}",
                            thousands(u128::from(p.max_model_len)),
                            f.unwrap_or("a check"),
                            provenance_note(&p.provenance)
                        ),
                    },
                    p.max_model_len == current,
                    p.starts,
                )
            })
            .collect(),
        x_range: (x0 - 0.3, x1 + 0.3),
        x_ticks,
        y_log2: true,
        reference: Some((0.0, "one full-length request")),
        name: "Maximum concurrency against max-model-len",
    })
}

/// A sentence under a sweep about points it does not draw.
pub fn sweep_aside(text: &str) -> String {
    format!(r#"<p class="sweep-aside">{}</p>"#, xml_escape(text))
}

/// A sentence in place of a sweep that has nothing to draw.
pub fn sweep_note(text: &str) -> String {
    format!(r#"<p class="sweep-note">{}</p>"#, xml_escape(text))
}

/// A utilization as typed, with at least two decimals (0.50, 0.54, 0.925), so a sweep's
/// labels line up without rounding the user's own fraction.
pub fn fraction(u: f64) -> String {
    let mut t = format!("{u}");
    let decimals = t.split_once('.').map_or(0, |(_, d)| d.len());
    if decimals == 0 {
        t.push('.');
    }
    t.push_str(&"0".repeat(2usize.saturating_sub(decimals)));
    t
}

/// The limiting rank's KV pool against gpu-memory-utilization, the current fraction marked.
pub fn pool_sweep_chart(points: &[PoolPoint], current: f64, unit: UnitSystem) -> String {
    if points.is_empty() {
        return String::new();
    }
    let (div, uname) = unit_div(unit);
    let y_desc = format!("KV pool per rank ({uname})");
    line_chart(Series {
        x_desc: "gpu-memory-utilization",
        y_desc: &y_desc,
        points: points
            .iter()
            .map(|p| {
                (
                    p.utilization,
                    p.kv_pool as f64 / div,
                    fraction(p.utilization),
                    format!(
                        "gpu-memory-utilization {}: {} {} ({} B){}{} {}",
                        fraction(p.utilization),
                        if p.sized { "KV pool" } else { "KV memory" },
                        amount(i128::from(p.kv_pool), unit),
                        thousands(u128::from(p.kv_pool)),
                        if p.sized { "" } else { ", no pool" },
                        p.fails_at
                            .map_or(String::new(), |f| format!(": the start fails at {f}")),
                        provenance_note(&p.provenance)
                    ),
                    (p.utilization - current).abs() < 1e-9,
                    p.fails_at.is_none(),
                )
            })
            .collect(),
        x_range: (0.48, 1.0),
        x_ticks: ticks(0.5, 1.0, 5)
            .into_iter()
            .map(|x| (x, format!("{x:.1}")))
            .collect(),
        y_log2: false,
        reference: None,
        name: "KV pool against gpu-memory-utilization",
    })
}
