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
//! Colours: plotters writes them as attributes; `public/page.css` recolours the sentinel
//! foreground (`#010101`) and the text for dark mode.

use plotters::prelude::{Color, RGBColor, SVGBackend, ShapeStyle};
use plotters_backend::text_anchor::{HPos, Pos, VPos};
use plotters_backend::{
    BackendColor, BackendCoord, BackendTextStyle, DrawingBackend, FontFamily, FontTransform,
};

use crate::calc::plan::{LedgerLine, Plan, Provenance, RankPlan, Term};
use crate::calc::ranks::RankGroup;
use crate::calc::units::{grouped_fixed, human, thousands, thousands_signed, UnitSystem, GB, GIB};

mod sweeps;
mod timeline;
pub use sweeps::{fraction, len_sweep_chart, pool_sweep_chart, sweep_aside, sweep_note};
pub use timeline::{
    phase_parts, phase_short, state_key, state_mark, state_word, timeline_chart, TIMELINE_H,
    TIMELINE_SEGMENTS, TIMELINE_W,
};

/// The foreground sentinel colour; CSS maps it to the page's text colour.
const FG: RGBColor = RGBColor(1, 1, 1);
const GRID: RGBColor = RGBColor(200, 200, 200);
const TOTAL_MARK: RGBColor = RGBColor(200, 40, 40);

/// The stacked segments of a rank's bar, bottom to top: the budget's consumers, the pool,
/// then what lies outside the budget.
pub const SEGMENTS: [(Term, RGBColor, &str); 9] = [
    (Term::Weights, RGBColor(78, 121, 167), "weights"),
    (Term::Drafter, RGBColor(118, 183, 178), "drafter"),
    (Term::Activation, RGBColor(242, 142, 43), "activation"),
    (
        Term::OtherConsumption,
        RGBColor(237, 201, 72),
        "other consumption",
    ),
    (Term::CudaGraphs, RGBColor(176, 122, 161), "CUDA graphs"),
    (
        Term::MeasuredOverhead,
        RGBColor(156, 117, 95),
        "overhead (measured, unified memory)",
    ),
    (Term::KvPool, RGBColor(89, 161, 79), "KV pool"),
    (
        Term::KvRoundingSlack,
        RGBColor(140, 209, 125),
        "unused by the pool",
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

/// The legend: segment names with their colours, then the marks, each with the `data-term`
/// of the shapes it names (the page lists an entry only where a bar draws such a shape).
pub fn legend() -> Vec<(String, &'static str, &'static str)> {
    let mut v: Vec<(String, &'static str, &'static str)> = SEGMENTS
        .iter()
        .map(|(t, c, n)| (css_color(*c), *n, t.key()))
        .collect();
    v.push((css_color(TOTAL_MARK), "free after start (hatched)", "free"));
    v.push((css_color(FG), "budget (utilization)", "budget"));
    v.push((css_color(TOTAL_MARK), "physical capacity", "total"));
    v
}

/// The canvas width on a narrow screen, 0 on a wide one.
static NARROW: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

/// Draws the charts for a narrow screen (a phone) on a canvas as wide as the column is in CSS
/// pixels (`Some(px)`, held to 240..=640), so a unit is about a pixel and their text stays
/// legible without scrolling sideways; `None` draws them at [`CHART_W`]. Set once, before the
/// first chart.
pub fn set_narrow(column_px: Option<u32>) {
    NARROW.store(
        column_px.map_or(0, |w| w.clamp(240, 640)),
        std::sync::atomic::Ordering::Relaxed,
    );
}

fn narrow() -> Option<u32> {
    Some(NARROW.load(std::sync::atomic::Ordering::Relaxed)).filter(|w| *w > 0)
}

/// The charts' width in SVG units: [`CHART_W`], or the column's on a narrow screen.
pub fn chart_w() -> u32 {
    narrow().unwrap_or(CHART_W)
}

/// A byte count in the display unit with two decimals and thousands separators, e.g.
/// `16,384.00 GiB` (vLLM's own log lines keep their format; this is for the page's figures).
pub fn amount(bytes: i128, unit: UnitSystem) -> String {
    // Above 10,000 GiB (GB) the figure reads better in TiB (TB), as seed 003's "11.0 TB" does.
    let (div, name) = match unit {
        UnitSystem::Binary => ((GIB as f64) * 1024.0, "TiB"),
        UnitSystem::Decimal => ((GB as f64) * 1000.0, "TB"),
    };
    if (bytes.unsigned_abs() as f64) >= div * 10.0 {
        format!("{} {name}", grouped_fixed(bytes as f64 / div, 2))
    } else {
        human(bytes, unit)
    }
}

/// The display unit's size in bytes and its name: GiB or GB.
pub(crate) fn unit_div(unit: UnitSystem) -> (f64, &'static str) {
    match unit {
        UnitSystem::Binary => (GIB as f64, "GiB"),
        UnitSystem::Decimal => (GB as f64, "GB"),
    }
}

/// Escapes text for an XML attribute or element.
pub fn xml_escape(s: &str) -> String {
    // The runs between special characters are copied whole: every chart's titles pass here,
    // on every input change.
    let mut out = String::with_capacity(s.len() + 16);
    let mut from = 0;
    for (i, b) in s.bytes().enumerate() {
        let entity = match b {
            b'&' => "&amp;",
            b'<' => "&lt;",
            b'>' => "&gt;",
            b'"' => "&quot;",
            b'\'' => "&#39;",
            _ => continue,
        };
        out.push_str(&s[from..i]);
        out.push_str(entity);
        from = i + 1;
    }
    out.push_str(&s[from..]);
    out
}

/// One bar: a rank, or a group of identical ranks of one stage (`Plan::rank_groups`).
#[derive(Clone, Debug)]
pub struct Bar<'a> {
    pub ranks: Vec<u32>,
    pub plan: &'a RankPlan,
}

impl Bar<'_> {
    /// "rank 3" or "ranks 4–7".
    pub fn label(&self) -> String {
        ranks_label(&self.ranks)
    }
}

impl<'a> From<RankGroup<'a>> for Bar<'a> {
    fn from(g: RankGroup<'a>) -> Bar<'a> {
        Bar {
            ranks: g.ranks,
            plan: g.plan,
        }
    }
}

/// A group's ranks as the page names them: "rank 3" or "ranks 4–7".
pub fn ranks_label(ranks: &[u32]) -> String {
    match ranks {
        [r] => format!("rank {r}"),
        [a, .., b] => format!("ranks {a}–{b}"),
        [] => String::new(),
    }
}

/// Bars in rank order. Identical ranks of a stage (`Plan::rank_groups`, the rule the ledger
/// and the CLI use too) share a bar once there are more than eight ranks; stages always get
/// their own bars, so stages that differ look different.
pub fn bars(plan: &Plan) -> Vec<Bar<'_>> {
    if plan.ranks.len() > 8 {
        plan.rank_groups().into_iter().map(Bar::from).collect()
    } else {
        plan.ranks
            .iter()
            .map(|r| Bar {
                ranks: vec![r.rank],
                plan: r,
            })
            .collect()
    }
}

/// The explanation of one ledger line: name, value, exact bytes, formula and provenance.
pub fn line_info(l: &LedgerLine, unit: UnitSystem) -> String {
    format!(
        "{}: {} ({} B) = {} {}",
        l.term.label(),
        amount(l.bytes, unit),
        thousands_signed(l.bytes),
        l.formula,
        provenance_note(&l.provenance)
    )
}

/// How certain a figure is, as the charts' explanations say it: `[exact]`,
/// `[estimate: basis]` or `[measured: source]`.
pub fn provenance_note(p: &Provenance) -> String {
    let basis = p.basis();
    format!(
        "[{}{}{}]",
        p.label(),
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
        r#"<rect class="hit" x="{x}" y="{y}" width="{w}" height="{h}" tabindex="-1" data-term="{term}"><title>{info}</title></rect>"#
    ));
}

/// Width and height of every chart's SVG (its viewBox; CSS scales it to the column).
pub const CHART_W: u32 = 720;
pub const CHART_H: u32 = 340;

/// Text as the charts draw it: sans-serif in the foreground colour, anchored and rotated as
/// asked. Plotters' SVG backend writes it (a `<text>` element); no font is loaded.
#[derive(Clone, Copy)]
struct Label {
    size: f64,
    anchor: Pos,
    rotate: bool,
    /// A fixed dark colour instead of the theme's foreground.
    dark: bool,
}

impl Label {
    const fn new(size: f64, h: HPos, v: VPos) -> Label {
        Label {
            size,
            anchor: Pos { h_pos: h, v_pos: v },
            rotate: false,
            dark: false,
        }
    }
}

impl BackendTextStyle for Label {
    type FontError = std::fmt::Error;

    fn color(&self) -> BackendColor {
        if self.dark {
            RGBColor(20, 20, 20).to_backend_color()
        } else {
            FG.to_backend_color()
        }
    }

    fn size(&self) -> f64 {
        self.size
    }

    fn transform(&self) -> FontTransform {
        if self.rotate {
            FontTransform::Rotate270
        } else {
            FontTransform::None
        }
    }

    fn anchor(&self) -> Pos {
        self.anchor
    }

    fn family(&self) -> FontFamily<'_> {
        FontFamily::SansSerif
    }

    fn layout_box(&self, _text: &str) -> Result<((i32, i32), (i32, i32)), std::fmt::Error> {
        // The SVG backend leaves layout to the browser and never asks.
        Ok(((0, 0), (0, 0)))
    }

    fn draw<E, F: FnMut(i32, i32, BackendColor) -> Result<(), E>>(
        &self,
        _text: &str,
        _pos: BackendCoord,
        _draw: F,
    ) -> Result<Result<(), E>, std::fmt::Error> {
        Ok(Ok(()))
    }
}

/// Tick labels, axis names and bar labels.
const TICK: Label = Label::new(13.0, HPos::Right, VPos::Center);
const BELOW: Label = Label::new(13.0, HPos::Center, VPos::Top);
const BAR_LABEL: Label = Label::new(12.0, HPos::Center, VPos::Top);
const SIDE_LABEL: Label = Label::new(12.0, HPos::Left, VPos::Center);
/// Inside a bar: dark text whatever the theme (the segments' colours are mid-tones).
const IN_BAR: Label = Label {
    dark: true,
    ..Label::new(12.0, HPos::Center, VPos::Center)
};
const REF_LABEL: Label = Label::new(12.0, HPos::Right, VPos::Bottom);

/// A linear map from data values to pixels along one axis.
#[derive(Clone, Copy)]
struct Axis {
    lo: f64,
    hi: f64,
    from: f64,
    to: f64,
}

impl Axis {
    fn px(&self, v: f64) -> i32 {
        let span = self.hi - self.lo;
        let t = if span > 0.0 {
            (v - self.lo) / span
        } else {
            0.0
        };
        (self.from + t * (self.to - self.from)).round() as i32
    }
}

/// Round tick values in `lo..=hi`, at most `n` intervals (steps of 1, 2, 2.5 or 5 times a
/// power of ten).
fn ticks(lo: f64, hi: f64, n: usize) -> Vec<f64> {
    let span = hi - lo;
    if !(span > 0.0 && span.is_finite()) || n == 0 {
        return vec![lo];
    }
    let raw = span / n as f64;
    let mag = 10f64.powi(raw.log10().floor() as i32);
    // 2.5 only from 25 up, so whole-number labels stay whole.
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .filter(|m| **m != 2.5 || mag >= 10.0)
        .map(|m| m * mag)
        .find(|st| span / st <= n as f64)
        .unwrap_or(10.0 * mag);
    let first = (lo / step).ceil() as i64;
    let last = (hi / step).floor() as i64;
    (first..=last).map(|k| k as f64 * step).collect()
}

/// The whole numbers in `lo..=hi`, thinned to about eight, fewer on a phone (the log-2 axes
/// tick at whole powers of two).
fn whole_ticks(lo: f64, hi: f64) -> impl Iterator<Item = i64> {
    let (lo, hi) = (lo.ceil() as i64, hi.floor() as i64);
    // About eight labels; on a phone's canvas, one per 50 units.
    let most = (i64::from(chart_w()) / 50).clamp(4, 8);
    let step = ((hi - lo) / most + 1).max(1);
    (lo..=hi).filter(move |k| (k - lo) % step == 0)
}

/// A chart's plot area on an SVG backend: the two axes, the y grid and tick labels, the axis
/// names. `y_label` formats a y tick.
struct Plot<'a> {
    svg: SVGBackend<'a>,
    x: Axis,
    y: Axis,
}

impl<'a> Plot<'a> {
    /// Margins as before: 8 px around, 56 px for the y labels, `x_area` px below for x labels.
    fn new(
        buf: &'a mut String,
        (w, h): (u32, u32),
        margin: i32,
        x_area: i32,
        (x_lo, x_hi): (f64, f64),
        (y_lo, y_hi): (f64, f64),
    ) -> Plot<'a> {
        let left = margin + 56;
        let bottom = h as i32 - margin - x_area;
        Plot {
            svg: SVGBackend::with_string(buf, (w, h)),
            x: Axis {
                lo: x_lo,
                hi: x_hi,
                from: f64::from(left),
                to: f64::from(w as i32 - margin),
            },
            y: Axis {
                lo: y_lo,
                hi: y_hi,
                from: f64::from(bottom),
                to: f64::from(margin),
            },
        }
    }

    fn at(&self, (x, y): (f64, f64)) -> (i32, i32) {
        (self.x.px(x), self.y.px(y))
    }

    fn text(&mut self, text: &str, style: &Label, at: (i32, i32)) {
        let _ = self.svg.draw_text(text, style, at);
    }

    fn line(&mut self, from: (i32, i32), to: (i32, i32), style: &ShapeStyle) {
        let _ = self.svg.draw_line(from, to, style);
    }

    fn rect_style(&mut self, a: (f64, f64), b: (f64, f64), style: ShapeStyle) {
        let (a, b) = (self.at(a), self.at(b));
        let _ = self.svg.draw_rect(
            (a.0.min(b.0), a.1.min(b.1)),
            (a.0.max(b.0), a.1.max(b.1)),
            &style,
            true,
        );
    }

    fn rect(&mut self, a: (f64, f64), b: (f64, f64), color: RGBColor) {
        let (a, b) = (self.at(a), self.at(b));
        let _ = self.svg.draw_rect(
            (a.0.min(b.0), a.1.min(b.1)),
            (a.0.max(b.0), a.1.max(b.1)),
            &color,
            true,
        );
    }

    /// The y axis with grid lines and labels at `ys`, and the axis name.
    fn y_axis(&mut self, ys: &[f64], label: &dyn Fn(f64) -> String, name: &str) {
        let (x0, x1) = (self.x.from as i32, self.x.to as i32);
        let grid = GRID.mix(0.5).stroke_width(1);
        for &v in ys {
            let y = self.y.px(v);
            self.line((x0, y), (x1, y), &grid);
            self.line((x0 - 5, y), (x0, y), &FG.stroke_width(1));
            self.text(&label(v), &TICK, (x0 - 9, y));
        }
        let (top, bottom) = (self.y.to as i32, self.y.from as i32);
        self.line((x0 - 1, top), (x0 - 1, bottom), &FG.stroke_width(1));
        let mid = (top + bottom) / 2;
        let style = Label {
            rotate: true,
            ..BELOW
        };
        self.text(name, &style, (8, mid));
    }

    /// The x axis with labels at `xs`, and the axis name below them.
    fn x_axis(&mut self, xs: &[(f64, String)], name: &str) {
        let (x0, x1) = (self.x.from as i32, self.x.to as i32);
        let y = self.y.from as i32;
        self.line((x0 - 1, y + 1), (x1, y + 1), &FG.stroke_width(1));
        for (v, text) in xs {
            let x = self.x.px(*v);
            self.line((x, y + 1), (x, y + 6), &FG.stroke_width(1));
            self.text(text, &BELOW, (x, y + 9));
        }
        self.text(name, &BELOW, ((x0 + x1) / 2, y + 24));
    }

    fn finish(mut self) {
        let _ = self.svg.present();
    }
}

/// Whether a rank's bar shows `term`. A measured overhead stands in for the estimated
/// activation, other use and graphs. "Outside the budget" sits on top only when the segments
/// below fill the budget exactly (the pool sized from it); a pinned pool, a measured overhead
/// or graphs outside the budget (before v0.20) leave the budget mark and the free strip to
/// tell the rest.
fn drawn(r: &RankPlan, term: Term) -> bool {
    let overhead = r.line(Term::MeasuredOverhead).is_some();
    match term {
        Term::Activation | Term::OtherConsumption | Term::CudaGraphs => !overhead,
        Term::OutsideBudget => {
            let below: i128 = SEGMENTS
                .iter()
                .filter(|(t, _, _)| *t != Term::OutsideBudget && drawn(r, *t))
                .map(|(t, _, _)| bytes_of(r, *t).max(0))
                .sum();
            below == bytes_of(r, Term::Budget)
        }
        _ => true,
    }
}

/// A segment's name where a phone's column has little room beside the bar.
fn short_name(name: &str) -> &str {
    match name {
        "other consumption" => "other",
        "CUDA graphs" => "graphs",
        "free after start" => "free",
        "outside the budget" => "outside budget",
        "unused by the pool" => "unused",
        n => n,
    }
}

/// Whether two plans draw the same per-rank chart: the same ranks, the same deciding rank and
/// stages, all [`rank_chart`] reads of a plan. A new max-model-len or max-num-seqs moves the
/// figures, not the budget, and does not redraw the chart.
pub fn draws_alike(a: &Plan, b: &Plan) -> bool {
    a.pp == b.pp && a.deciding_rank() == b.deciding_rank() && a.ranks == b.ranks
}

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
                .filter(|(t, _, _)| drawn(b.plan, *t))
                .map(|(t, _, _)| bytes_of(b.plan, *t).max(0))
                .sum();
            to_y(stack.max(bytes_of(b.plan, Term::Total)))
        })
        .fold(1.0, f64::max)
        * 1.08;
    // On a narrow screen past four bars the canvas widens (60 units a bar) and scrolls.
    let width = match narrow() {
        Some(w) if n > 4 => w + (n as u32 - 4).min(200) * 60,
        _ => chart_w(),
    };
    let mut svg = String::new();
    let mut overlay = String::new();
    // The free space's boxes, hatched with one SVG pattern after plotters has drawn (a
    // pattern is one node where drawn lines were dozens, and every redraw parses them).
    let mut hatches: Vec<((i32, i32), (i32, i32))> = Vec::new();
    {
        let mut plot = Plot::new(
            &mut svg,
            (width, CHART_H),
            8,
            34,
            // A lone bar sits left of centre: its labels take the room on its right.
            if n == 1 {
                (-0.35, 2.65)
            } else {
                (-pad, n as f64 + pad)
            },
            (0.0, ymax),
        );
        plot.y_axis(&ticks(0.0, ymax, 6), &|v| format!("{v:.0}"), uname);
        let bar_w = if n > 24 { 0.9 } else { 0.7 };
        let deciding = plan.deciding_rank().unwrap_or(0);
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
            // The rank that decides (the first failure's, else the pool's limit): a chart
            // that scrolls on a phone brings it into view.
            let current = if bar.ranks.contains(&deciding) {
                format!(
                    r#" data-current="true" data-cx="{}""#,
                    plot.at(((x0 + x1) / 2.0, 0.0)).0
                )
            } else {
                String::new()
            };
            overlay.push_str(&format!(
                r#"<g data-testid="rank-bar-{first}" data-ranks="{}"{current} role="group" aria-label="{}">"#,
                bar.ranks
                    .iter()
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join(","),
                xml_escape(&stage)
            ));
            let mut y = 0.0;
            // Each drawn segment: name, bytes, middle and height in pixels (for its label).
            let mut segs: Vec<(&str, i128, i32, i32)> = Vec::new();
            for (term, color, name) in SEGMENTS {
                if !drawn(r, term) {
                    continue;
                }
                let Some(l) = r.line(term) else { continue };
                if l.bytes <= 0 {
                    continue;
                }
                let h = to_y(l.bytes);
                plot.rect((x0, y), (x1, y + h), color);
                let (top, bottom) = (plot.at((x0, y + h)).1, plot.at((x0, y)).1);
                segs.push((name, l.bytes, (top + bottom) / 2, bottom - top));
                hit_rect(
                    &mut overlay,
                    plot.at((x0, y)),
                    plot.at((x1, y + h)),
                    term.key(),
                    &format!("{}: {}", bar.label(), line_info(l, unit)),
                );
                y += h;
            }
            // Free after start: the top of the GPU that nothing holds once the engine runs,
            // hatched over the bar from the physical capacity down (over "outside the budget",
            // or the empty space above a pinned pool).
            let total = to_y(bytes_of(r, Term::Total));
            if let Some(l) = r.line(Term::FreeAfterStart) {
                if l.bytes > 0 {
                    let (a, b) = (plot.at((x0, total - to_y(l.bytes))), plot.at((x1, total)));
                    hatches.push((a, b));
                    hit_rect(
                        &mut overlay,
                        a,
                        b,
                        "free",
                        &format!("{}: {}", bar.label(), line_info(l, unit)),
                    );
                    segs.push((
                        "free after start",
                        l.bytes,
                        (a.1 + b.1) / 2,
                        (a.1 - b.1).abs(),
                    ));
                }
            }
            // Names and amounts: beside a lone bar, all of them (with leader lines, pushed
            // apart); inside a bar, where the segment is tall and wide enough.
            let (bx0, by) = plot.at((x0, 0.0));
            let bx1 = plot.at((x1, 0.0)).0;
            if n == 1 {
                let mut next = i32::MAX;
                let mut placed: Vec<(i32, i32, String)> = Vec::new();
                // A segment below a hundredth of the unit has nothing to say beside the bar.
                let tiny = (unit_div(unit).0 / 100.0) as i128;
                for (name, bytes, mid, _) in segs.iter().rev().filter(|s| s.1 >= tiny) {
                    // Top down: each label at its segment's middle, or below the one above.
                    let y = (*mid).max(if next == i32::MAX { i32::MIN } else { next });
                    let name = if narrow().is_some() {
                        short_name(name)
                    } else {
                        name
                    };
                    placed.push((*mid, y, format!("{name} {}", amount(*bytes, unit))));
                    next = y + 15;
                }
                // Labels pushed past the axis move up as a block.
                let overflow = placed.last().map_or(0, |p| (p.1 - (by - 6)).max(0));
                for (mid, y, text) in &placed {
                    let y = y - overflow;
                    plot.line((bx1 + 2, *mid), (bx1 + 14, y), &FG.mix(0.6).stroke_width(1));
                    plot.text(text, &SIDE_LABEL, (bx1 + 17, y));
                }
            } else if bx1 - bx0 >= 64 {
                // The hatched free space covers the top of the bar ("outside the budget"
                // included): its figures are in the hover, not under the hatching.
                let hatched = segs.iter().any(|s| s.0 == "free after start");
                for (name, bytes, mid, h) in &segs {
                    let covered =
                        hatched && matches!(*name, "outside the budget" | "free after start");
                    if *h >= 16 && !covered {
                        let text = if bx1 - bx0 >= 150 {
                            format!("{name} {}", amount(*bytes, unit))
                        } else {
                            amount(*bytes, unit)
                        };
                        plot.text(&text, &IN_BAR, ((bx0 + bx1) / 2, *mid));
                    }
                }
            }
            // Marks: the utilization budget and the physical capacity.
            let _ = total;
            for (term, color, width, key) in [
                (Term::Budget, FG, 3, "budget"),
                (Term::Total, TOTAL_MARK, 2, "total"),
            ] {
                let Some(l) = r.line(term) else { continue };
                let yv = to_y(l.bytes);
                let (px0, py) = plot.at((x0 - 0.04, yv));
                let (px1, _) = plot.at((x1 + 0.04, yv));
                plot.line((px0, py), (px1, py), &color.stroke_width(width));
                hit_rect(
                    &mut overlay,
                    (px0, py - 3),
                    (px1, py + 3),
                    key,
                    &format!("{}: {}", bar.label(), line_info(l, unit)),
                );
            }
            overlay.push_str("</g>");
            let (cx, cy) = plot.at(((x0 + x1) / 2.0, 0.0));
            // Past twelve bars a full label does not fit: the stage number where a bar groups
            // a stage's TP ranks, else the rank, and the axis says which.
            let short = match (n > 12, bar.ranks.len() > 1) {
                (false, _) => bar.label(),
                (true, true) => format!("s{}", r.pp_rank),
                (true, false) => format!("{first}"),
            };
            plot.text(&short, &BAR_LABEL, (cx, cy + 6));
            if plan.pp > 1 && n <= 12 {
                plot.text(&format!("stage {}", r.pp_rank), &BAR_LABEL, (cx, cy + 20));
            }
        }
        if n > 12 {
            let grouped = bars.iter().any(|b| b.ranks.len() > 1);
            let (mid, bottom) = plot.at((n as f64 / 2.0, 0.0));
            plot.text(
                if grouped {
                    "pipeline stage (each bar: the stage's identical TP ranks)"
                } else {
                    "rank"
                },
                &BAR_LABEL,
                (mid, bottom + 20),
            );
        }
        plot.finish();
    }
    if !hatches.is_empty() {
        let red = css_color(TOTAL_MARK);
        let mut h = format!(
            r#"<defs><pattern id="free-hatch" patternUnits="userSpaceOnUse" width="7" height="7" patternTransform="rotate(45)"><line x1="0" y1="0" x2="0" y2="7" stroke="{red}" stroke-opacity="0.85"></line></pattern></defs>"#
        );
        for ((x0, y0), (x1, y1)) in hatches {
            h.push_str(&format!(
                r#"<rect x="{}" y="{}" width="{}" height="{}" fill="url(#free-hatch)" stroke="{red}"></rect>"#,
                x0.min(x1),
                y0.min(y1),
                (x1 - x0).abs(),
                (y1 - y0).abs()
            ));
        }
        if let Some(i) = svg.rfind("</svg>") {
            svg.insert_str(i, &h);
        }
    }
    finish(svg, &overlay, "Per-rank memory: one bar per rank", width)
}

/// Puts the overlay and an accessible name into plotters' SVG.
///
/// Keyboard: the chart is one Tab stop (its first shape); the arrow keys move between shapes
/// (`panels::roving_focus`), so a wide TP grid does not put dozens of stops before the rest of
/// the page.
///
/// A chart drawn for a narrow screen ([`set_narrow`]) says how many screen widths it spans:
/// 1 when it fits, more for many ranks (they scroll).
fn finish(mut svg: String, overlay: &str, name: &str, width: u32) -> String {
    let overlay = overlay.replacen(r#"tabindex="-1""#, r#"tabindex="0""#, 1);
    if let Some(i) = svg.rfind("</svg>") {
        svg.insert_str(i, &format!(r#"<g class="overlay">{overlay}</g>"#));
    }
    // The page's style policy allows no inline styles: the minimum width is a data attribute
    // public/page.css reads (how many screen widths the chart spans).
    let min = match narrow() {
        None => String::new(),
        Some(w) => format!(r#" data-span="{}""#, width.div_ceil(w).clamp(1, 8)),
    };
    if let Some(i) = svg.find("<svg") {
        svg.insert_str(
            i + 4,
            &format!(
                r#" role="group" aria-label="{}" data-w="{width}"{min}"#,
                xml_escape(name)
            ),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::url::{self, Field, UrlState};
    use crate::ui::plan_of;

    #[test]
    fn fractions_show_two_decimals_at_least() {
        assert_eq!(fraction(0.5), "0.50");
        assert_eq!(fraction(0.54), "0.54");
        assert_eq!(fraction(0.925), "0.925");
        assert_eq!(fraction(1.0), "1.00");
    }

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
        // One Tab stop; the arrow keys reach the rest.
        assert_eq!(svg.matches(r#"tabindex="0""#).count(), 1);
        assert!(svg.matches(r#"tabindex="-1""#).count() >= 8);
    }

    #[test]
    fn a_new_length_draws_alike_a_new_budget_does_not() {
        let base = [
            (Field::Model, "qwen3-32b"),
            (Field::Tp, "2"),
            (Field::Gpu, "a100-sxm4-80gb"),
        ];
        let with = |extra: (Field, &'static str)| {
            let mut pairs = base.to_vec();
            pairs.push(extra);
            plan_of(&pairs)
        };
        let (a, b) = (
            with((Field::MaxModelLen, "32768")),
            with((Field::MaxModelLen, "8192")),
        );
        assert_ne!(a.replica, b.replica, "the figures moved");
        assert!(draws_alike(&a, &b));
        assert_eq!(
            rank_chart(&a, UnitSystem::Binary),
            rank_chart(&b, UnitSystem::Binary)
        );
        let c = with((Field::Util, "0.8"));
        assert!(!draws_alike(&a, &c));
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
        let pts = crate::calc::sweep::len_sweep(&s);
        assert!(pts.iter().any(|p| p.max_model_len == 32_768));
        // Longer requests never raise the concurrency.
        assert!(pts
            .windows(2)
            .all(|w| w[1].max_concurrency <= w[0].max_concurrency + 1e-9));
        let svg = len_sweep_chart(&pts, 32_768);
        assert_eq!(svg.matches(r#"data-current="true""#).count(), 1);
        let pool = crate::calc::sweep::pool_sweep(&s);
        assert!(pool.windows(2).all(|w| w[1].kv_pool >= w[0].kv_pool));
        let svg = pool_sweep_chart(&pool, 0.92, UnitSystem::Decimal);
        assert!(svg.contains("GB"));
    }

    #[test]
    fn a_failing_current_length_is_drawn_failing_and_ringed() {
        // 70B at TP 2 and 128K fails the capacity check (issue 19, item 6): the sweep keeps
        // the failing lengths and the current one, red, and says what share of a request fits.
        let p = [
            (Field::Model, "llama-3.1-70b-instruct"),
            (Field::Tp, "2"),
            (Field::MaxModelLen, "131072"),
        ];
        let mut st = UrlState::default();
        for (f, v) in p {
            st.set(f, v).unwrap();
        }
        let s = url::scenario(&st).unwrap();
        let pts = crate::calc::sweep::len_sweep(&s);
        assert_eq!(pts.last().map(|p| p.max_model_len), Some(131_072));
        let svg = len_sweep_chart(&pts, 131_072);
        let current = svg
            .split("<circle")
            .find(|c| c.contains(r#"data-current="true""#))
            .unwrap();
        assert!(current.contains(r#"data-starts="false""#), "{current}");
        assert!(
            current.contains("of one full-length request (fails at"),
            "{current}"
        );
        assert!(svg.matches(r#"data-starts="false""#).count() >= 2);
        assert!(svg.contains("one full-length request"));
    }

    #[test]
    fn a_lone_bar_names_its_segments_and_hatches_the_free_space() {
        let p = plan_of(&[(Field::Model, "llama-3.1-8b-instruct")]);
        let svg = rank_chart(&p, UnitSystem::Binary);
        for name in [
            "weights 14.96 GiB",
            "KV pool ",
            "activation ",
            "CUDA graphs ",
            "free after start ",
        ] {
            assert!(svg.contains(name), "{name}");
        }
        assert!(svg.contains(r#"data-term="free""#));
        // The legend names every shape a chart can draw, each by its shapes' data-term.
        let keys: Vec<&str> = legend().iter().map(|l| l.2).collect();
        for k in [
            "weights",
            "kv_pool",
            "free",
            "budget",
            "total",
            "outside_budget",
        ] {
            assert!(keys.contains(&k), "{k}");
        }
    }

    #[test]
    fn ticks_are_round_and_inside_the_range() {
        assert_eq!(ticks(0.0, 87.5, 6), vec![0.0, 20.0, 40.0, 60.0, 80.0]);
        assert_eq!(
            ticks(0.0, 131.4, 6),
            vec![0.0, 25.0, 50.0, 75.0, 100.0, 125.0]
        );
        assert_eq!(ticks(0.0, 14.0, 6), vec![0.0, 5.0, 10.0], "no 2.5 below 25");
        assert_eq!(
            whole_ticks(9.7, 17.2).collect::<Vec<_>>(),
            (10..=17).collect::<Vec<_>>()
        );
        assert_eq!(
            whole_ticks(0.0, 20.0).collect::<Vec<_>>(),
            [0, 3, 6, 9, 12, 15, 18]
        );
        let t = ticks(0.5, 1.0, 5);
        assert_eq!(t.len(), 6);
        assert_eq!(
            t.iter().map(|x| format!("{x:.1}")).collect::<Vec<_>>(),
            ["0.5", "0.6", "0.7", "0.8", "0.9", "1.0"]
        );
        assert_eq!(
            ticks(3.0, 3.0, 5),
            vec![3.0],
            "an empty range keeps its value"
        );
        assert_eq!(ticks(0.0, f64::INFINITY, 5), vec![0.0]);
        let a = Axis {
            lo: 0.0,
            hi: 10.0,
            from: 300.0,
            to: 10.0,
        };
        assert_eq!((a.px(0.0), a.px(10.0), a.px(5.0)), (300, 10, 155));
    }

    #[test]
    fn the_charts_are_plotters_svg_with_our_axes() {
        let p = plan_of(&[(Field::Model, "llama-3.1-8b-instruct")]);
        let svg = rank_chart(&p, UnitSystem::Binary);
        // Plotters' SVG backend writes the shapes and the text; the axis name is rotated.
        assert!(svg.contains("<rect"));
        assert!(svg.contains(r#"transform="rotate(270, 8, "#));
        assert!(svg.contains(">\nGiB\n</text>"));
        assert!(
            svg.contains(">\n80\n</text>"),
            "a y tick at 80 GiB on an H100"
        );
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
