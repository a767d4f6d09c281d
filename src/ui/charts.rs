//! The charts, drawn by plotters into SVG strings (`SVGBackend::with_string`) that the page
//! inserts as inner HTML: the per-rank budget bars and the two sweeps.
//!
//! Plotters draws what the eye sees. Over it each chart gets an overlay of transparent,
//! focusable shapes carrying a `<title>` (exact bytes, formula, provenance; also their
//! accessible name), so
//! hover and keyboard focus explain every segment; each rank's group has a `data-testid`.
//! Heights are the plan's ledger figures converted to the display unit; stacking them is
//! drawing, not accounting.
//!
//! Colours: plotters writes them as attributes; `public/style.css` recolours the sentinel
//! foreground (`#010101`) and the text for dark mode.

use plotters::prelude::*;

use crate::calc::plan::{LedgerLine, Plan, RankPlan, Term};
use crate::calc::units::{human, thousands, thousands_signed, UnitSystem, GB, GIB};

use super::state::{LenPoint, PoolPoint};

/// The foreground sentinel colour; CSS maps it to the page's text colour.
const FG: RGBColor = RGBColor(1, 1, 1);
const GRID: RGBColor = RGBColor(200, 200, 200);
const TOTAL_MARK: RGBColor = RGBColor(200, 40, 40);
const FREE: RGBColor = RGBColor(255, 157, 167);

/// The stacked segments of a rank's bar, bottom to top: the budget's consumers, the pool,
/// then what lies outside the budget.
pub const SEGMENTS: [(Term, RGBColor, &str); 8] = [
    (Term::Weights, RGBColor(78, 121, 167), "weights"),
    (Term::Drafter, RGBColor(118, 183, 178), "drafter"),
    (Term::Activation, RGBColor(242, 142, 43), "activation"),
    (
        Term::OtherConsumption,
        RGBColor(237, 201, 72),
        "other consumption",
    ),
    (Term::CudaGraphs, RGBColor(176, 122, 161), "CUDA graphs"),
    (Term::KvPool, RGBColor(89, 161, 79), "KV pool"),
    (
        Term::KvRoundingSlack,
        RGBColor(140, 209, 125),
        "block-rounding slack",
    ),
    (
        Term::OutsideBudget,
        RGBColor(186, 176, 172),
        "outside the budget",
    ),
];

/// The CSS colour of a segment, for the legend.
pub fn css_color(c: RGBColor) -> String {
    format!("#{:02x}{:02x}{:02x}", c.0, c.1, c.2)
}

/// The legend: segment names with their colours, then the marks.
pub fn legend() -> Vec<(String, &'static str)> {
    let mut v: Vec<(String, &'static str)> = SEGMENTS
        .iter()
        .map(|(_, c, n)| (css_color(*c), *n))
        .collect();
    v.push((css_color(FREE), "free after start"));
    v.push((css_color(FG), "budget (utilization)"));
    v.push((css_color(TOTAL_MARK), "physical capacity"));
    v
}

/// A byte count in the display unit with two decimals and thousands separators, e.g.
/// `16,384.00 GiB` (vLLM's own log lines keep their format; this is for the page's figures).
pub fn amount(bytes: i128, unit: UnitSystem) -> String {
    // Above 10,000 GiB (GB) the figure reads better in TiB (TB), as seed 003's "11.0 TB" does.
    let (div, name) = match unit {
        UnitSystem::Binary => ((GIB as f64) * 1024.0, "TiB"),
        UnitSystem::Decimal => ((GB as f64) * 1000.0, "TB"),
    };
    let s = if (bytes.unsigned_abs() as f64) >= div * 10.0 {
        format!("{:.2} {name}", bytes as f64 / div)
    } else {
        human(bytes, unit)
    };
    let (num, name) = s.split_once(' ').unwrap_or((&s, ""));
    let (neg, num) = num.strip_prefix('-').map_or((false, num), |n| (true, n));
    let (int, frac) = num.split_once('.').unwrap_or((num, ""));
    let grouped = int
        .parse::<u128>()
        .map_or_else(|_| int.to_string(), thousands);
    format!(
        "{}{grouped}{}{frac} {name}",
        if neg { "-" } else { "" },
        if frac.is_empty() { "" } else { "." }
    )
}

fn unit_div(unit: UnitSystem) -> (f64, &'static str) {
    match unit {
        UnitSystem::Binary => (GIB as f64, "GiB"),
        UnitSystem::Decimal => (GB as f64, "GB"),
    }
}

/// Escapes text for an XML attribute or element.
pub fn xml_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// One bar: a rank, or several identical TP ranks of one stage.
#[derive(Clone, Debug)]
pub struct Bar<'a> {
    pub ranks: Vec<u32>,
    pub plan: &'a RankPlan,
}

impl Bar<'_> {
    /// "rank 3" or "ranks 4–7".
    pub fn label(&self) -> String {
        match self.ranks.as_slice() {
            [r] => format!("rank {r}"),
            [a, .., b] => format!("ranks {a}–{b}"),
            [] => String::new(),
        }
    }
}

/// Bars in rank order. Identical TP ranks of a stage share a bar once there are more than
/// eight ranks; stages always get their own bars, so stages that differ look different.
pub fn bars(plan: &Plan) -> Vec<Bar<'_>> {
    groups(plan, plan.ranks.len() > 8)
}

/// Ranks in order, identical TP ranks of a stage together when `group` (the ledger always
/// groups them: four identical tables say nothing the first does not).
pub fn groups(plan: &Plan, group: bool) -> Vec<Bar<'_>> {
    let mut out: Vec<Bar<'_>> = Vec::new();
    for r in &plan.ranks {
        if group {
            if let Some(last) = out.last_mut() {
                let same = last.plan.pp_rank == r.pp_rank
                    && last.plan.ledger.len() == r.ledger.len()
                    && last
                        .plan
                        .ledger
                        .iter()
                        .zip(&r.ledger)
                        .all(|(a, b)| a.term == b.term && a.bytes == b.bytes);
                if same {
                    last.ranks.push(r.rank);
                    continue;
                }
            }
        }
        out.push(Bar {
            ranks: vec![r.rank],
            plan: r,
        });
    }
    out
}

/// The explanation of one ledger line: name, value, exact bytes, formula and provenance.
pub fn line_info(l: &LedgerLine, unit: UnitSystem) -> String {
    let basis = l.provenance.basis();
    format!(
        "{}: {} ({} B) = {} [{}{}{}]",
        l.term.label(),
        amount(l.bytes, unit),
        thousands_signed(l.bytes),
        l.formula,
        l.provenance.label(),
        if basis.is_empty() { "" } else { ": " },
        basis
    )
}

fn bytes_of(r: &RankPlan, t: Term) -> i128 {
    r.line(t).map_or(0, |l| l.bytes)
}

/// A transparent, focusable overlay shape with its explanation.
fn hit_rect(out: &mut String, (x0, y0): (i32, i32), (x1, y1): (i32, i32), term: &str, info: &str) {
    let (x, y) = (x0.min(x1), y0.min(y1));
    let (w, h) = ((x1 - x0).abs().max(1), (y1 - y0).abs().max(2));
    let info = xml_escape(info);
    out.push_str(&format!(
        r#"<rect class="hit" x="{x}" y="{y}" width="{w}" height="{h}" tabindex="0" data-term="{term}"><title>{info}</title></rect>"#
    ));
}

/// Width and height of every chart's SVG (its viewBox; CSS scales it to the column).
pub const CHART_W: u32 = 720;
pub const CHART_H: u32 = 340;

/// The per-rank budget chart.
pub fn rank_chart(plan: &Plan, unit: UnitSystem) -> String {
    let (div, uname) = unit_div(unit);
    let bars = bars(plan);
    let n = bars.len().max(1);
    // At least three slots, so a single rank does not become a wall; bars stay centred.
    let pad = (3usize.saturating_sub(n)) as f64 / 2.0;
    let to_y = |b: i128| b as f64 / div;
    let ymax = bars
        .iter()
        .map(|b| {
            let stack: i128 = SEGMENTS
                .iter()
                .map(|(t, _, _)| bytes_of(b.plan, *t).max(0))
                .sum();
            to_y(stack.max(bytes_of(b.plan, Term::Total)))
        })
        .fold(1.0, f64::max)
        * 1.08;
    let mut svg = String::new();
    let mut overlay = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (CHART_W, CHART_H)).into_drawing_area();
        let built = ChartBuilder::on(&root)
            .margin(8)
            .x_label_area_size(34)
            .y_label_area_size(56)
            .build_cartesian_2d(-pad..n as f64 + pad, 0f64..ymax);
        let Ok(mut chart) = built else {
            return String::new();
        };
        let y_fmt = |v: &f64| format!("{v:.0}");
        let _ = chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(0)
            .y_labels(6)
            .y_desc(uname)
            .y_label_formatter(&y_fmt)
            .axis_style(FG)
            .light_line_style(TRANSPARENT)
            .bold_line_style(GRID.mix(0.5))
            .label_style(("sans-serif", 13).into_font().color(&FG))
            .draw();
        let bar_w = if n > 24 { 0.9 } else { 0.7 };
        for (i, bar) in bars.iter().enumerate() {
            let x0 = i as f64 + (1.0 - bar_w) / 2.0;
            let x1 = x0 + bar_w;
            let r = bar.plan;
            let first = bar.ranks[0];
            let stage = format!(
                "{} (stage {}, layers {}–{})",
                bar.label(),
                r.pp_rank,
                r.layers.0,
                r.layers.1.saturating_sub(1)
            );
            overlay.push_str(&format!(
                r#"<g data-testid="rank-bar-{first}" data-ranks="{}" role="group" aria-label="{}">"#,
                bar.ranks
                    .iter()
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join(","),
                xml_escape(&stage)
            ));
            let mut y = 0.0;
            for (term, color, _) in SEGMENTS {
                let Some(l) = r.line(term) else { continue };
                if l.bytes <= 0 {
                    continue;
                }
                let h = to_y(l.bytes);
                let _ = chart.draw_series(std::iter::once(Rectangle::new(
                    [(x0, y), (x1, y + h)],
                    color.filled(),
                )));
                hit_rect(
                    &mut overlay,
                    chart.backend_coord(&(x0, y)),
                    chart.backend_coord(&(x1, y + h)),
                    term.key(),
                    &format!("{}: {}", bar.label(), line_info(l, unit)),
                );
                y += h;
            }
            // Free after start: a narrow strip hanging from the physical capacity.
            let total = to_y(bytes_of(r, Term::Total));
            if let Some(l) = r.line(Term::FreeAfterStart) {
                if l.bytes > 0 {
                    let fx0 = x1;
                    let fx1 = x1 + (1.0 - bar_w) / 2.5;
                    let _ = chart.draw_series(std::iter::once(Rectangle::new(
                        [(fx0, total - to_y(l.bytes)), (fx1, total)],
                        FREE.filled(),
                    )));
                    hit_rect(
                        &mut overlay,
                        chart.backend_coord(&(fx0, total - to_y(l.bytes))),
                        chart.backend_coord(&(fx1, total)),
                        "free",
                        &format!("{}: {}", bar.label(), line_info(l, unit)),
                    );
                }
            }
            // Marks: the utilization budget and the physical capacity.
            for (term, color, width, key) in [
                (Term::Budget, FG, 3, "budget"),
                (Term::Total, TOTAL_MARK, 2, "total"),
            ] {
                let Some(l) = r.line(term) else { continue };
                let yv = to_y(l.bytes);
                let _ = chart.draw_series(std::iter::once(PathElement::new(
                    vec![(x0 - 0.04, yv), (x1 + 0.04, yv)],
                    color.stroke_width(width),
                )));
                let (px0, py) = chart.backend_coord(&(x0 - 0.04, yv));
                let (px1, _) = chart.backend_coord(&(x1 + 0.04, yv));
                hit_rect(
                    &mut overlay,
                    (px0, py - 3),
                    (px1, py + 3),
                    key,
                    &format!("{}: {}", bar.label(), line_info(l, unit)),
                );
            }
            overlay.push_str("</g>");
            let (cx, cy) = chart.backend_coord(&((x0 + x1) / 2.0, 0.0));
            let label_style = ("sans-serif", 12).into_font().color(&FG).pos(
                plotters::style::text_anchor::Pos::new(
                    plotters::style::text_anchor::HPos::Center,
                    plotters::style::text_anchor::VPos::Top,
                ),
            );
            let short = if n > 12 {
                format!("{first}")
            } else {
                bar.label()
            };
            let _ = root.draw(&Text::new(short, (cx, cy + 6), label_style.clone()));
            if plan.pp > 1 && n <= 12 {
                let _ = root.draw(&Text::new(
                    format!("stage {}", r.pp_rank),
                    (cx, cy + 20),
                    label_style,
                ));
            }
        }
        let _ = root.present();
    }
    finish(svg, &overlay, "Per-rank memory: one bar per rank")
}

/// Puts the overlay and an accessible name into plotters' SVG.
fn finish(mut svg: String, overlay: &str, name: &str) -> String {
    if let Some(i) = svg.rfind("</svg>") {
        svg.insert_str(i, &format!(r#"<g class="overlay">{overlay}</g>"#));
    }
    if let Some(i) = svg.find("<svg") {
        svg.insert_str(
            i + 4,
            &format!(r#" role="group" aria-label="{}""#, xml_escape(name)),
        );
    }
    svg
}

/// A token length as people write it: 4k, 128k, 1M.
pub fn short_len(len: u64) -> String {
    if len >= 1 << 20 && len % (1 << 20) == 0 {
        format!("{}M", len >> 20)
    } else if len >= 1024 && len % 1024 == 0 {
        format!("{}k", len >> 10)
    } else {
        thousands(u128::from(len))
    }
}

/// A line chart with focusable points; `x` positions are already in chart space.
struct Series<'a> {
    x_desc: &'a str,
    y_desc: &'a str,
    /// (x, y, label of x, info, is the current point, starts)
    points: Vec<(f64, f64, String, String, bool, bool)>,
    x_range: (f64, f64),
    x_fmt: &'a dyn Fn(&f64) -> String,
    /// The y values are log2 of the figure; labels show the figure.
    y_log2: bool,
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
        let root = SVGBackend::with_string(&mut svg, (CHART_W, 260)).into_drawing_area();
        let built = ChartBuilder::on(&root)
            .margin(10)
            .x_label_area_size(36)
            .y_label_area_size(56)
            .build_cartesian_2d(s.x_range.0..s.x_range.1, ymin..ymax);
        let Ok(mut chart) = built else {
            return String::new();
        };
        let y_fmt = |v: &f64| {
            if s.y_log2 {
                let x = 2f64.powf(*v);
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
        let _ = chart
            .configure_mesh()
            .x_labels(8)
            .y_labels(if s.y_log2 { 8 } else { 5 })
            .x_desc(s.x_desc)
            .y_desc(s.y_desc)
            .x_label_formatter(s.x_fmt)
            .y_label_formatter(&y_fmt)
            .axis_style(FG)
            .light_line_style(TRANSPARENT)
            .bold_line_style(GRID.mix(0.5))
            .label_style(("sans-serif", 13).into_font().color(&FG))
            .draw();
        let line = RGBColor(78, 121, 167);
        let _ = chart.draw_series(LineSeries::new(
            s.points.iter().map(|p| (p.0, p.1)),
            line.stroke_width(2),
        ));
        for p in &s.points {
            let color = if p.5 { line } else { TOTAL_MARK };
            let _ = chart.draw_series(std::iter::once(Circle::new(
                (p.0, p.1),
                if p.4 { 7 } else { 3 },
                if p.4 {
                    FG.stroke_width(3)
                } else {
                    color.filled()
                },
            )));
            let (px, py) = chart.backend_coord(&(p.0, p.1));
            let info = xml_escape(&p.3);
            overlay.push_str(&format!(
                r#"<circle class="hit" cx="{px}" cy="{py}" r="8" tabindex="0" data-current="{}"><title>{info}</title></circle>"#,
                p.4
            ));
        }
        let _ = root.present();
    }
    finish(svg, &overlay, s.name)
}

/// Maximum concurrency against max-model-len (log-2 x axis), the current length marked.
pub fn len_sweep_chart(points: &[LenPoint], current: u64) -> String {
    if points.is_empty() {
        return String::new();
    }
    let lg = |l: u64| (l as f64).log2();
    let x0 = lg(points[0].max_model_len);
    let x1 = lg(points[points.len() - 1].max_model_len).max(x0 + 1.0);
    let fmt = |x: &f64| short_len(2f64.powf(x.round()) as u64);
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
                    format!(
                        "max-model-len {}: maximum concurrency {:.2}{}",
                        thousands(u128::from(p.max_model_len)),
                        p.max_concurrency,
                        if p.starts { "" } else { " (does not start)" }
                    ),
                    p.max_model_len == current,
                    p.starts,
                )
            })
            .collect(),
        x_range: (x0 - 0.3, x1 + 0.3),
        x_fmt: &fmt,
        y_log2: true,
        name: "Maximum concurrency against max-model-len",
    })
}

/// The limiting rank's KV pool against gpu-memory-utilization, the current fraction marked.
pub fn pool_sweep_chart(points: &[PoolPoint], current: f64, unit: UnitSystem) -> String {
    if points.is_empty() {
        return String::new();
    }
    let (div, uname) = unit_div(unit);
    let fmt = |x: &f64| format!("{x:.2}");
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
                    format!("{:.2}", p.utilization),
                    format!(
                        "gpu-memory-utilization {}: KV pool {} ({} B){}",
                        p.utilization,
                        amount(i128::from(p.kv_pool), unit),
                        thousands(u128::from(p.kv_pool)),
                        if p.starts { "" } else { " (does not start)" }
                    ),
                    (p.utilization - current).abs() < 1e-9,
                    p.starts,
                )
            })
            .collect(),
        x_range: (0.48, 1.0),
        x_fmt: &fmt,
        y_log2: false,
        name: "KV pool against gpu-memory-utilization",
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::url::{self, Field, UrlState};
    use crate::ui::plan_of;

    #[test]
    fn one_bar_group_per_rank_with_explained_segments() {
        let p = plan_of(&[(Field::Tp, "4"), (Field::Model, "llama-3.1-70b-instruct")]);
        assert!(p.starts(), "{:?}", p.first_failure());
        let svg = rank_chart(&p, UnitSystem::Binary);
        assert!(svg.starts_with("<svg"));
        assert!(svg.contains(r#"data-testid="rank-bar-0""#));
        assert!(svg.contains(r#"data-testid="rank-bar-3""#));
        assert!(!svg.contains(r#"data-testid="rank-bar-4""#));
        // Every drawn segment has a focusable explanation with exact bytes.
        assert!(svg.contains(r#"data-term="weights""#));
        assert!(svg.contains(r#"data-term="kv_pool""#));
        assert!(svg.contains(" B) = "));
        assert!(svg.contains("<title>"));
        assert!(!svg.contains("style="), "no inline styles under the CSP");
    }

    #[test]
    fn many_identical_ranks_share_a_bar_but_stages_do_not() {
        let p = plan_of(&[
            (Field::Tp, "8"),
            (Field::Pp, "2"),
            (Field::Model, "llama-3.1-70b-instruct"),
        ]);
        let b = bars(&p);
        assert_eq!(b.len(), 2);
        assert_eq!(b[0].ranks, (0..8).collect::<Vec<_>>());
        assert_eq!(b[1].label(), "ranks 8–15");
    }

    #[test]
    fn sweeps_mark_the_current_point() {
        let mut st = UrlState::default();
        st.set(Field::MaxModelLen, "32768").unwrap();
        let s = url::scenario(&st).unwrap();
        let pts = super::super::state::len_sweep(&s);
        assert!(pts.iter().any(|p| p.max_model_len == 32_768));
        // Longer requests never raise the concurrency.
        assert!(pts
            .windows(2)
            .all(|w| w[1].max_concurrency <= w[0].max_concurrency + 1e-9));
        let svg = len_sweep_chart(&pts, 32_768);
        assert_eq!(svg.matches(r#"data-current="true""#).count(), 1);
        let pool = super::super::state::pool_sweep(&s);
        assert!(pool.windows(2).all(|w| w[1].kv_pool >= w[0].kv_pool));
        let svg = pool_sweep_chart(&pool, 0.92, UnitSystem::Decimal);
        assert!(svg.contains("GB"));
    }

    #[test]
    fn escapes_hostile_text() {
        assert_eq!(
            xml_escape(r#"<script>"a" & 'b'</script>"#),
            "&lt;script&gt;&quot;a&quot; &amp; &#39;b&#39;&lt;/script&gt;"
        );
        assert_eq!(short_len(131_072), "128k");
        assert_eq!(short_len(1 << 20), "1M");
        assert_eq!(short_len(1000), "1,000");
        assert_eq!(
            amount(9_999 * GIB as i128, UnitSystem::Binary),
            "9,999.00 GiB"
        );
        assert_eq!(
            amount(16_384 * GIB as i128, UnitSystem::Binary),
            "16.00 TiB"
        );
        assert_eq!(amount(10_995_116_277_760, UnitSystem::Decimal), "11.00 TB");
        assert_eq!(amount(-(GIB as i128) / 2, UnitSystem::Binary), "-0.50 GiB");
        assert_eq!(amount(46_099_333_120, UnitSystem::Decimal), "46.10 GB");
    }
}
