//! The result panels, in reading order: the verdict, pool versus demand, the per-rank chart,
//! the sweeps, the checks, the ledger and what vLLM would print. Each formats fields of the
//! `Plan`; none computes a figure.
//!
//! The verdict banner is in [`verdict`], the markup built as strings (gate, tables, checks,
//! ledger) in [`tables`]; this file wires them and the charts into the page: the effects that
//! write each panel, the charts' keyboard and hover explanations, and the clipboard.

mod compare;
mod diagnose;
mod exports;
mod glossary;
mod sweeps;
mod tables;
mod timeline;
mod verdict;

pub use tables::{checks_html, ledger_context, ledger_html, ledger_markdown, rank_table_html};
pub use verdict::{go_to, goto_field, invalid_sub, verdict, verdict_text};

use leptos::prelude::*;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use crate::calc::plan::{Plan, Provenance, Term};
use crate::calc::units::{grouped_fixed, plural, thousands, UnitSystem};

use super::charts;
use super::effect;
use super::state::AppState;
use tables::{gate_html, table_html};
use verdict::verdict_lines;

/// A figure's value: its text, for byte counts the exact bytes (`data-bytes`), and how certain
/// it is.
type FigureValue = (String, Option<String>, Provenance);

/// Writes a memo of markup into the element with this id whenever it changes.
///
/// A chart (`*-svg`) is redrawn in place where its shapes stay the same ones
/// ([`super::patch`]): only the attributes and texts that changed are set.
pub(super) fn bind_html(id: &'static str, html: Memo<String>) {
    let chart = id.ends_with("-svg");
    // The markup a chart's element holds: what its next drawing is compared with.
    let written: std::cell::RefCell<Option<super::patch::Drawn>> = Default::default();
    effect(move || {
        let h = html.get();
        if let Some(el) = document().get_element_by_id(id) {
            // A chart's shape with the keyboard focus may be replaced with the chart: note it.
            let had_focus = chart
                && document()
                    .active_element()
                    .is_some_and(|a| el.contains(Some(a.unchecked_ref())));
            if chart {
                let new = super::patch::Drawn::new(h);
                super::patch::write(&el, written.borrow().as_ref(), &new);
                *written.borrow_mut() = Some(new);
                refresh_info(id, &el, had_focus);
            } else {
                el.set_inner_html(&h);
            }
            // Reading a width forces a layout: for the two sweeps only, and in the next frame,
            // after every panel has been written.
            if matches!(id, "len-svg" | "pool-svg" | "rank-svg") {
                request_animation_frame(move || reveal_current(&el));
            }
        }
    });
}

/// A redrawn chart: the info line that explained one of its shapes explains the same shape
/// of the new chart (the same bar and term, else the same place), or goes back to its hint;
/// never the old figures. A shape that had the keyboard focus gets it back.
fn refresh_info(id: &str, chart: &web_sys::Element, had_focus: bool) {
    let Some(info) = chart
        .closest("section")
        .ok()
        .flatten()
        .and_then(|s| s.query_selector(".chart-info").ok().flatten())
    else {
        return;
    };
    // Only when the line explains a shape of this chart: "chart|bar|term|index".
    let Some(key) = info.get_attribute("data-hit") else {
        return;
    };
    let parts: Vec<&str> = key.split('|').collect();
    let [chart_id, bar, term, index] = parts[..] else {
        return;
    };
    if chart_id != id {
        return;
    }
    let by_term = (!term.is_empty())
        .then(|| {
            let scope = if bar.is_empty() {
                String::new()
            } else {
                format!("[data-testid=\"{bar}\"] ")
            };
            chart
                .query_selector(&format!("{scope}.hit[data-term=\"{term}\"]"))
                .ok()
                .flatten()
        })
        .flatten();
    let hit = by_term.or_else(|| {
        index
            .parse::<u32>()
            .ok()
            .and_then(|i| chart.query_selector_all(".hit").ok()?.item(i))
            .and_then(|n| n.dyn_into::<web_sys::Element>().ok())
    });
    match hit {
        Some(hit) => {
            info.set_text_content(hit.text_content().as_deref());
            if had_focus {
                // The chart stays one Tab stop: the stop moves to the shape focused.
                if let Ok(Some(stop)) = chart.query_selector(".hit[tabindex=\"0\"]") {
                    let _ = stop.set_attribute("tabindex", "-1");
                }
                let _ = hit.set_attribute("tabindex", "0");
                if let Ok(svg) = hit.dyn_into::<web_sys::SvgElement>() {
                    let _ = svg.focus();
                }
            }
        }
        None => {
            let _ = info.remove_attribute("data-hit");
            info.set_text_content(info.get_attribute("data-hint").as_deref());
        }
    }
}

/// A chart wider than its panel (a phone) scrolls sideways: bring its ringed current point
/// into view, centred.
fn reveal_current(el: &web_sys::Element) {
    let (scroll, client) = (el.scroll_width(), el.client_width());
    if scroll <= client {
        return;
    }
    let cx = el
        .query_selector("[data-current=true]")
        .ok()
        .flatten()
        .and_then(|c| c.get_attribute("cx").or_else(|| c.get_attribute("data-cx")))
        .and_then(|x| crate::calc::decimal::parse_f64(&x));
    let width = el
        .query_selector("svg[data-w]")
        .ok()
        .flatten()
        .and_then(|s| s.get_attribute("data-w"))
        .and_then(|w| crate::calc::decimal::parse_f64(&w))
        .unwrap_or(f64::from(charts::CHART_W));
    if let Some(cx) = cx {
        let x = cx / width * f64::from(scroll);
        el.set_scroll_left((x - f64::from(client) / 2.0).max(0.0) as i32);
    }
}

/// Writes a memo of text into the element with this id whenever it changes.
pub(super) fn bind_text(id: &'static str, text: Memo<String>) {
    effect(move || {
        let t = text.get();
        if let Some(el) = document().get_element_by_id(id) {
            el.set_text_content(Some(&t));
        }
    });
}

fn with_plan<T>(app: AppState, f: impl Fn(&Plan, UnitSystem) -> Option<T>) -> Option<T> {
    let unit = app.unit.get();
    app.shown.with(|p| p.as_deref().and_then(|p| f(p, unit)))
}

/// The same for the slow lane (the ledger, the checks, the tables): one task later.
/// The teaching lane's plan (after the next paint) and unit.
fn with_teach<T>(app: AppState, f: impl Fn(&Plan, UnitSystem) -> Option<T>) -> Option<T> {
    let unit = app.later_unit.get();
    app.teach.with(|p| p.as_deref().and_then(|p| f(p, unit)))
}

fn with_later<T>(app: AppState, f: impl Fn(&Plan, UnitSystem) -> Option<T>) -> Option<T> {
    let unit = app.later_unit.get();
    app.later.with(|p| p.as_deref().and_then(|p| f(p, unit)))
}

/// A memo of markup or text. The closure is boxed, so every such memo shares one
/// instantiation of Leptos's memo code (each distinct closure type would otherwise get its
/// own, about a kilobyte of wasm apiece).
pub(super) fn html_memo(f: impl Fn() -> String + Send + Sync + 'static) -> Memo<String> {
    let f: Box<dyn Fn() -> String + Send + Sync> = Box::new(f);
    Memo::new(move |_| f())
}

use crate::verdict::DASH;

/// Arrow keys inside a chart: in the per-rank chart, as [`stacked_step`] says; in the sweeps,
/// Right/Down to the next point and Left/Up to the previous one; Home/End to the ends. The
/// focused shape becomes the chart's one Tab stop (roving tabindex).
fn roving_focus(ev: &web_sys::KeyboardEvent) {
    let key = ev.key();
    let step: isize = match key.as_str() {
        "ArrowRight" | "ArrowDown" => 1,
        "ArrowLeft" | "ArrowUp" => -1,
        "Home" => isize::MIN,
        "End" => isize::MAX,
        _ => return,
    };
    // The chart the focused shape belongs to.
    let Some(chart) = super::closest(ev, ".svg") else {
        return;
    };
    let Ok(list) = chart.query_selector_all(".hit") else {
        return;
    };
    let n = list.length() as isize;
    if n == 0 {
        return;
    }
    let active = document().active_element();
    let at = (0..n).find(|i| {
        list.item(*i as u32)
            .zip(active.as_ref())
            .is_some_and(|(a, b)| a.is_same_node(Some(b)))
    });
    let shapes: Vec<web_sys::Element> = (0..n)
        .filter_map(|i| list.item(i as u32)?.dyn_into::<web_sys::Element>().ok())
        .collect();
    let next = match (step, at) {
        (isize::MIN, _) => 0,
        (isize::MAX, _) => n - 1,
        (s, Some(i)) => stacked_step(&shapes, i as usize, key.as_str())
            .map_or((i + s).clamp(0, n - 1), |j| j as isize),
        (_, None) => 0,
    };
    ev.prevent_default();
    for i in 0..n {
        if let Some(el) = list
            .item(i as u32)
            .and_then(|x| x.dyn_into::<web_sys::Element>().ok())
        {
            let _ = el.set_attribute("tabindex", if i == next { "0" } else { "-1" });
            if i == next {
                if let Ok(svg) = el.dyn_into::<web_sys::SvgElement>() {
                    let _ = svg.focus();
                }
            }
        }
    }
}

/// In the per-rank chart, whose shapes are stacked segments (rects) grouped by bar, the arrows
/// move as the eye does: Up and Down to the shape above or below in the same bar, Left and
/// Right to the neighbouring bar's shape of the same term (else the nearest in height).
/// `None` for shapes that are not rects (the sweeps' points): the caller steps in order.
fn stacked_step(shapes: &[web_sys::Element], at: usize, key: &str) -> Option<usize> {
    // Bars in document order: a shape's bar is its parent group.
    let mut bar = 0usize;
    let mut geometry: Vec<Option<(usize, i64, String)>> = Vec::with_capacity(shapes.len());
    for (i, el) in shapes.iter().enumerate() {
        let parent = el.parent_element();
        if i > 0 && parent != shapes[i - 1].parent_element() {
            bar += 1;
        }
        let num = |a: &str| el.get_attribute(a)?.parse::<i64>().ok();
        geometry.push(
            num("y")
                .zip(num("height"))
                .filter(|_| el.tag_name().eq_ignore_ascii_case("rect"))
                .map(|(y, h)| {
                    (
                        bar,
                        2 * y + h,
                        el.get_attribute("data-term").unwrap_or_default(),
                    )
                }),
        );
    }
    let (b, y, term) = geometry.get(at)?.clone()?;
    let shapes_in = |want: usize| {
        geometry
            .iter()
            .enumerate()
            .filter_map(move |(i, g)| g.as_ref().filter(|g| g.0 == want).map(|g| (i, g)))
    };
    match key {
        // SVG's y grows downwards: above is a smaller y.
        "ArrowUp" | "ArrowDown" => {
            let up = key == "ArrowUp";
            let found = shapes_in(b)
                .filter(|(_, g)| if up { g.1 < y } else { g.1 > y })
                .min_by_key(|(_, g)| (g.1 - y).abs())
                .map(|(i, _)| i);
            Some(found.unwrap_or(at))
        }
        "ArrowLeft" | "ArrowRight" => {
            let to = if key == "ArrowRight" {
                b + 1
            } else if b == 0 {
                return Some(at);
            } else {
                b - 1
            };
            let same = shapes_in(to).find(|(_, g)| g.2 == term).map(|(i, _)| i);
            Some(
                same.or_else(|| {
                    shapes_in(to)
                        .min_by_key(|(_, g)| (g.1 - y).abs())
                        .map(|(i, _)| i)
                })
                .unwrap_or(at),
            )
        }
        _ => None,
    }
}

/// Copies text to the clipboard and reports the outcome in `status`.
pub fn copy_text(text: String, status: RwSignal<String>) {
    let p = window().navigator().clipboard().write_text(&text);
    let ok = Closure::<dyn FnMut(JsValue)>::new(move |_| status.set("Copied.".into()));
    let err = Closure::<dyn FnMut(JsValue)>::new(move |_| {
        status.set("The browser refused the clipboard; select the text and copy it.".into())
    });
    let _ = p.then2(&ok, &err);
    // One small closure pair per click, alive until the promise settles.
    ok.forget();
    err.forget();
}

/// The figures of "Pool versus demand": test id, label, value.
pub(crate) type Figure = (
    &'static str,
    &'static str,
    fn(&Plan, UnitSystem) -> Option<FigureValue>,
);

fn replica_figure(id: &str, p: &Plan) -> Option<FigureValue> {
    crate::verdict::replica_figure(id, p).map(|(text, prov)| (text, None, prov))
}

fn bytes_value(b: i128, unit: UnitSystem, prov: &Provenance) -> FigureValue {
    (charts::amount(b, unit), Some(b.to_string()), prov.clone())
}

pub(crate) const FIGURES: [Figure; 8] = [
    // The replica's three, in the words the verdict program paints first (crate::verdict).
    ("kv-cache-tokens", "GPU KV cache size (tokens)", |p, _| {
        replica_figure("kv-cache-tokens", p)
    }),
    (
        "max-concurrency",
        "Maximum concurrency at max-model-len",
        |p, _| replica_figure("max-concurrency", p),
    ),
    (
        "full-length-requests",
        "Whole max-length requests that fit",
        |p, _| replica_figure("full-length-requests", p),
    ),
    ("kv-pool", "KV pool per rank (limiting rank)", |p, u| {
        let r = p.limiting_rank()?;
        let l = r.line(Term::KvPool)?;
        Some(bytes_value(i128::from(r.kv_pool.0), u, &l.provenance))
    }),
    ("budget", "Budget per rank: total x utilization", |p, u| {
        let r = p.ranks.first()?;
        let l = r.line(Term::Budget)?;
        Some(bytes_value(i128::from(r.budget.0), u, &l.provenance))
    }),
    (
        "per-request",
        "One max-length request (limiting rank)",
        |p, u| {
            let d = p.demand.as_ref()?;
            Some(bytes_value(
                i128::from(d.per_request_bytes),
                u,
                &d.provenance,
            ))
        },
    ),
    (
        "demand",
        "Demand: max-num-seqs x max-model-len (replica)",
        |p, u| {
            let d = p.demand.as_ref()?;
            let b = i128::try_from(d.all_seqs_bytes_replica).unwrap_or(i128::MAX);
            Some((
                format!(
                    "{} ({} {})",
                    charts::amount(b, u),
                    thousands(u128::from(d.max_num_seqs)),
                    plural(d.max_num_seqs, "sequence", "sequences")
                ),
                Some(b.to_string()),
                d.provenance.clone(),
            ))
        },
    ),
    (
        "concurrency-at-average",
        "Concurrency at the average length",
        |p, _| {
            let d = p.demand.as_ref()?;
            let r = p.replica.as_ref()?;
            let text = format!(
                "{} at {} {}",
                grouped_fixed(d.concurrency_at_average, 2),
                thousands(u128::from(d.average_len)),
                plural(d.average_len, "token", "tokens")
            );
            Some((text, None, r.provenance.clone()))
        },
    ),
];

/// The panels' markup, built once: pool versus demand, the per-rank chart, the sweeps, the
/// checks, the ledger and vLLM's log. [`results`] fills it in.
fn results_html() -> String {
    let mut h = String::from(
        r#"<div id="walkthrough"></div><section class="panel" aria-labelledby="pool-h"><h2 id="pool-h">Pool versus demand</h2><dl class="figures">"#,
    );
    for (id, label, _) in FIGURES {
        h.push_str(&format!(
            r#"<div class="figure"><dt>{label} <span class="badge" id="fig-{id}-prov"></span></dt><dd data-testid="{id}" id="fig-{id}"></dd></div>"#
        ));
    }
    h.push_str(r#"</dl><p class="figure-note" id="no-pool" data-testid="no-pool"></p><div id="gate"></div></section><section class="panel" aria-labelledby="chart-h"><h2 id="chart-h">Per-rank budget</h2><p class="narrow-only">Wider than this screen: scroll the chart sideways (it opens at the rank that decides).</p><figure class="chart" data-testid="rank-chart" aria-label="Per-rank budget chart"><div class="svg" id="rank-svg"></div><figcaption><ul class="legend">"#);
    h.push_str(&exports::legend_html());
    h.push_str(concat!(
        r#"</ul><p class="chart-info" aria-live="polite" data-testid="chart-info">Hover or focus a segment (Tab, then the arrow keys) for its exact bytes, formula and provenance.</p>{RANK_EXPORT}</figcaption><div class="sr-only" id="rank-table"></div></figure></section>"#,
        r#"<section class="panel sweeps" aria-labelledby="sweep-h"><h2 id="sweep-h">Sweeps</h2><p class="narrow-only">Wider than this screen: scroll each chart sideways.</p><figure class="chart" data-testid="len-sweep" aria-label="Maximum concurrency against max-model-len"><figcaption>Maximum concurrency against max-model-len (current length ringed; red points: the start fails there)</figcaption><div class="svg" id="len-svg"></div>{LEN_EXPORT}<div class="sr-only" id="len-rows"></div></figure><figure class="chart" data-testid="pool-sweep" aria-label="KV pool per rank against gpu-memory-utilization"><figcaption>KV pool per rank against gpu-memory-utilization (current fraction ringed; red points: the start fails there)</figcaption><div class="svg" id="pool-svg"></div>{POOL_EXPORT}<div class="sr-only" id="pool-rows"></div></figure><p class="chart-info" aria-live="polite">Hover or focus a point (Tab, then the arrow keys) for its figures.</p></section>"#,
        r#"<section class="panel" aria-labelledby="checks-h"><h2 id="checks-h">Start-up, phase by phase</h2><div id="timeline"></div><h3>The checks</h3><div id="checks"></div></section>"#,
        r#"<section class="panel" aria-labelledby="fixes-h"><h2 id="fixes-h">What fixes it</h2><div id="fixes"></div></section>"#,
        "{DIAGNOSE}",
        r#"<section class="panel" aria-labelledby="probes-h"><h2 id="probes-h">What interviewers probe next</h2><div id="probes"></div></section>"#,
        r#"<section class="panel" aria-labelledby="contrast-h"><h2 id="contrast-h">Three engines, three fractions</h2><div id="contrast"></div></section>"#,
        r#"<section class="panel" aria-labelledby="ledger-h" data-testid="ledger"><h2 id="ledger-h">Ledger</h2><p><button type="button" data-testid="copy-markdown">Copy as Markdown</button> <button type="button" data-testid="download-json" title="The plan in headroom plan --json's schema (docs/cli.md)">Download the plan as JSON</button> <span role="status" id="ledger-status"></span></p><div class="scroll" id="ledger-tables" tabindex="0" role="region" aria-label="Ledger tables (scroll sideways on a narrow screen)"></div></section>"#,
        r#"<section class="panel" aria-labelledby="log-h"><h2 id="log-h">What vLLM would print</h2><p class="log-basis" data-testid="vllm-log-provenance">Figures: <span class="badge" id="log-badge"></span> <small id="log-basis"></small></p><pre class="log" data-testid="vllm-log" tabindex="0" id="vllm-log"></pre></section>"#,
    ));
    h.push_str(&format!(
        r#"<section class="panel" aria-labelledby="ab-h" data-testid="compare"><h2 id="ab-h">Compare A and B</h2>{}</section>"#,
        compare::compare_form_html()
    ));
    h.push_str(&glossary::glossary_html());
    h.replace("{DIAGNOSE}", &diagnose::diagnose_form_html())
        .replace(
            "{RANK_EXPORT}",
            &exports::chart_buttons("headroom-rank-chart", "per-rank chart"),
        )
        .replace(
            "{LEN_EXPORT}",
            &exports::chart_buttons("headroom-concurrency-sweep", "concurrency sweep"),
        )
        .replace(
            "{POOL_EXPORT}",
            &exports::chart_buttons("headroom-pool-sweep", "pool sweep"),
        )
}

/// What the diagnose panel reads: a symptom picked, or a pasted text with its reading.
#[derive(Clone, Debug, PartialEq)]
enum Asked {
    Nothing,
    Picked(crate::diagnose::Symptom),
    Pasted(String, Result<crate::diagnose::Symptom, String>),
}

/// Focus or hover on a chart shape: its explanation goes into its panel's info line.
fn show_info(ev: &web_sys::Event) {
    let Some(hit) = super::closest(ev, ".hit") else {
        return;
    };
    let info = hit
        .closest("section")
        .ok()
        .flatten()
        .and_then(|s| s.query_selector(".chart-info").ok().flatten());
    if let (Some(info), Some(text)) = (info, hit.text_content()) {
        // Which shape it explains (its chart and place), so a redraw can follow it.
        let chart = hit.closest(".svg").ok().flatten();
        if let Some(chart) = chart {
            let hits = chart.query_selector_all(".hit").ok();
            let index = hits.and_then(|l| {
                (0..l.length()).find(|i| {
                    l.item(*i)
                        .is_some_and(|n| n.is_same_node(Some(hit.unchecked_ref())))
                })
            });
            if let Some(i) = index {
                if info.get_attribute("data-hint").is_none() {
                    let _ =
                        info.set_attribute("data-hint", &info.text_content().unwrap_or_default());
                }
                let bar = hit
                    .closest("[data-testid]")
                    .ok()
                    .flatten()
                    .and_then(|g| g.get_attribute("data-testid"))
                    .filter(|t| t.starts_with("rank-bar-"))
                    .unwrap_or_default();
                let term = hit.get_attribute("data-term").unwrap_or_default();
                let _ = info.set_attribute("data-hit", &format!("{}|{bar}|{term}|{i}", chart.id()));
            }
        }
        info.set_text_content(Some(&text));
    }
}

/// The result panels: static markup, delegated events, and effects that write the plan's
/// figures, charts, tables and log into it. The figures, the gate and the rank chart follow
/// the inputs at once; the rest follows one task later (the slow lane).
pub fn results(app: AppState) -> impl IntoView {
    let asked: RwSignal<Asked> = RwSignal::new(Asked::Nothing);
    // The example's walkthrough, its steps planned in the slow lane.
    type Walked = (
        &'static crate::walkthrough::Walk,
        Vec<crate::walkthrough::Planned>,
        Option<usize>,
    );
    let walked: Memo<Option<Walked>> = Memo::new(move |_| {
        app.teach.track();
        let (example, step, unit) = app.checked.with_untracked(|(s, _)| {
            (
                s.get(crate::input::Field::Example).map(str::to_string),
                s.get(crate::input::Field::Step)
                    .and_then(|t| t.parse::<usize>().ok()),
                s.get(crate::input::Field::Unit).map(str::to_string),
            )
        });
        let walk = crate::walkthrough::walk_of(&example?)?;
        let steps = crate::walkthrough::plan_steps(walk, unit.as_deref());
        let step = step.filter(|k| *k >= 1 && *k <= steps.len());
        Some((walk, steps, step))
    });
    bind_html(
        "walkthrough",
        html_memo(move || {
            let unit = app.later_unit.get();
            walked.with(|w| {
                w.as_ref()
                    .map(|(walk, steps, k)| diagnose::walkthrough_html(walk, steps, *k, unit))
                    .unwrap_or_default()
            })
        }),
    );
    // What fixes it, planned in the slow lane; "Apply" loads the inputs of the one clicked.
    let fix_list: Memo<Option<(Vec<crate::fixes::Fix>, bool)>> = Memo::new(move |_| {
        with_teach(app, |p, _| {
            let st = app.checked.with_untracked(|(s, _)| s.clone());
            let s = app.scenario.with_untracked(|s| s.as_ref().ok().cloned())?;
            Some((crate::fixes::fixes(&st, &s, p), p.starts()))
        })
    });
    // The leading figures: one memo for all of them and one effect that writes, per figure,
    // the value and the provenance badge that changed (a new utilization moves the values,
    // rarely a provenance). One node each instead of one per figure keeps the reactive graph's
    // bookkeeping off the input's path.
    type Shown = ((String, Option<String>), Option<Provenance>);
    let figures: Memo<Vec<Shown>> = Memo::new(move |_| {
        FIGURES
            .iter()
            .map(|(_, _, value)| match with_plan(app, *value) {
                Some((text, bytes, prov)) => ((text, bytes), Some(prov)),
                None => ((DASH.to_string(), None), None),
            })
            .collect()
    });
    let written = super::Written::new();
    effect(move || {
        figures.with(|all| {
            written.each_changed(all, |i, before: Option<&Shown>, now| {
                let Some((id, _, _)) = FIGURES.get(i) else {
                    return;
                };
                if before.map(|b| &b.0) != Some(&now.0) {
                    if let Some(el) = document().get_element_by_id(&format!("fig-{id}")) {
                        let (text, bytes) = &now.0;
                        el.set_text_content(Some(text));
                        let _ = match bytes {
                            Some(b) => el.set_attribute("data-bytes", b),
                            None => el.remove_attribute("data-bytes"),
                        };
                    }
                }
                // The figure's provenance: a badge, its basis on hover.
                if before.map(|b| &b.1) != Some(&now.1) {
                    if let Some(el) = document().get_element_by_id(&format!("fig-{id}-prov")) {
                        let prov = now.1.as_ref();
                        let label = prov.map_or("", Provenance::label);
                        el.set_class_name(&format!("badge {label}"));
                        el.set_text_content(Some(label));
                        let _ = el.set_attribute("title", prov.map_or("", Provenance::basis));
                    }
                }
            })
        })
    });
    // Why the pool's figures are dashes: vLLM allocates no pool when the start fails first.
    bind_text(
        "no-pool",
        html_memo(move || {
            with_plan(app, |p, _| {
                let f = p.first_failure().filter(|_| p.replica.is_none())?;
                Some(format!(
                    "No KV pool: the start fails at {} before vLLM allocates one, so the pool's figures are dashes (the ledger shows the memory it had).",
                    f.phase.label()
                ))
            })
            .unwrap_or_default()
        }),
    );
    bind_html(
        "gate",
        html_memo(move || {
            with_plan(app, |p, u| p.unified.as_ref().map(|g| gate_html(g, u))).unwrap_or_default()
        }),
    );
    // The plan as the per-rank chart reads it: a plan that draws alike is not drawn again.
    let chart_plan: Memo<Option<std::sync::Arc<Plan>>> = Memo::new_with_compare(
        move |_| app.shown.get(),
        |old, new| !matches!((old, new), (Some(Some(a)), Some(Some(b))) if charts::draws_alike(a, b)),
    );
    bind_html(
        "rank-svg",
        html_memo(move || {
            let unit = app.unit.get();
            chart_plan.with(|p| {
                p.as_deref()
                    .map(|p| charts::rank_chart(p, unit))
                    .unwrap_or_default()
            })
        }),
    );
    bind_html(
        "rank-table",
        html_memo(move || with_later(app, |p, u| Some(rank_table_html(p, u))).unwrap_or_default()),
    );
    sweeps::bind_sweeps(app);
    // The phase timeline of one rank: the deciding one, or the one picked.
    let timeline_rank: RwSignal<Option<u32>> = RwSignal::new(None);
    bind_html(
        "timeline",
        html_memo(move || {
            let rank = timeline_rank.get();
            with_later(app, |p, u| Some(timeline::timeline_html(p, rank, u))).unwrap_or_default()
        }),
    );
    bind_html(
        "checks",
        html_memo(move || with_later(app, |p, u| Some(checks_html(p, u))).unwrap_or_default()),
    );
    bind_html(
        "ledger-tables",
        html_memo(move || with_later(app, |p, u| Some(ledger_html(p, u))).unwrap_or_default()),
    );
    // What vLLM would print, and how certain its figures are.
    bind_text(
        "vllm-log",
        html_memo(move || {
            app.later.with(|p| {
                p.as_deref()
                    .map_or(String::new(), |p: &Plan| p.log_lines.join("\n"))
            })
        }),
    );
    let basis = Memo::new(move |_| {
        app.later.with(|p| {
            p.as_deref().map_or(
                (
                    String::new(),
                    "none yet: these inputs give no plan (see the verdict)".into(),
                ),
                |p: &Plan| {
                    let prov = &p.log_provenance;
                    (prov.label().to_string(), prov.basis().to_string())
                },
            )
        })
    });
    let stale_now = stale(app);
    effect(move || {
        let (label, why) = basis.get();
        // Dimmed figures are the last valid inputs', and the line says so.
        let why = if stale_now() && !label.is_empty() {
            format!("from the last valid inputs; {why}")
        } else {
            why
        };
        if let Some(el) = document().get_element_by_id("log-badge") {
            el.set_class_name(&format!("badge {label}"));
            el.set_text_content(Some(&label));
        }
        if let Some(el) = document().get_element_by_id("log-basis") {
            el.set_text_content(Some(&why));
        }
    });
    let status = RwSignal::new(String::new());
    bind_text("ledger-status", html_memo(move || status.get()));
    let pasted = move || {
        document()
            .get_element_by_id("diagnose-input")
            .and_then(|e| e.dyn_into::<web_sys::HtmlTextAreaElement>().ok())
            .map(|t| t.value())
            .unwrap_or_default()
    };
    let on_click = move |ev: web_sys::MouseEvent| {
        if exports::on_click(&ev, app, status) {
            return;
        }
        // A walkthrough's step link, or its buttons: the step's inputs, in place.
        let walk_to = |k: usize| {
            let state = walked.with_untracked(|w| {
                w.as_ref()
                    .and_then(|(_, steps, _)| steps.get(k.checked_sub(1)?))
                    .map(|s| s.state.clone())
            });
            if let Some(st) = state {
                super::deploy::load_state(app, &st);
            }
        };
        if let Some(a) = super::closest(&ev, "a[data-walk-step]") {
            if !(ev.ctrl_key() || ev.meta_key() || ev.shift_key() || ev.button() != 0) {
                ev.prevent_default();
                if let Some(k) = a
                    .get_attribute("data-walk-step")
                    .and_then(|t| t.parse().ok())
                {
                    walk_to(k);
                }
            }
            return;
        }
        let current = walked.with_untracked(|w| w.as_ref().map(|(_, s, k)| (s.len(), *k)));
        if super::closest(&ev, "[data-testid=walkthrough-next]").is_some() {
            if let Some((n, k)) = current {
                walk_to(k.map_or(1, |k| (k + 1).min(n)));
            }
            return;
        }
        if super::closest(&ev, "[data-testid=walkthrough-prev]").is_some() {
            if let Some((_, Some(k))) = current {
                walk_to(k.saturating_sub(1).max(1));
            }
            return;
        }
        if super::closest(&ev, "[data-testid=diagnose-run]").is_some() {
            let text = pasted();
            let read = crate::diagnose::recognise(&text);
            // The choice shows what the text was read as.
            if let (Ok(sym), Some(sel)) = (
                &read,
                document()
                    .get_element_by_id("diagnose-symptom")
                    .and_then(|e| e.dyn_into::<web_sys::HtmlSelectElement>().ok()),
            ) {
                sel.set_value(sym.key());
            }
            asked.set(Asked::Pasted(text, read));
            return;
        }
        if super::closest(&ev, "[data-testid=ab-set]").is_some() {
            let value_of = |id: &str| {
                document()
                    .get_element_by_id(id)
                    .and_then(|e| {
                        e.dyn_ref::<web_sys::HtmlInputElement>()
                            .map(web_sys::HtmlInputElement::value)
                            .or_else(|| {
                                e.dyn_ref::<web_sys::HtmlSelectElement>()
                                    .map(web_sys::HtmlSelectElement::value)
                            })
                    })
                    .unwrap_or_default()
            };
            let (key, value) = (value_of("ab-field"), value_of("ab-value"));
            let Some(field) = crate::input::Field::from_key(&key) else {
                return;
            };
            let mut st = app.checked.with_untracked(|(s, _)| s.clone());
            let err = st.set_b(field, &value).err();
            if let Some(el) = document().get_element_by_id("ab-error") {
                el.set_text_content(err.as_deref().map(|e| format!("B: {e}")).as_deref());
            }
            if err.is_none() {
                super::deploy::load_state(app, &st);
            }
            return;
        }
        if super::closest(&ev, "[data-testid=ab-clear]").is_some() {
            let mut st = app.checked.with_untracked(|(s, _)| s.clone());
            st.clear_b();
            super::deploy::load_state(app, &st);
            return;
        }
        if let Some(b) = super::closest(&ev, "[data-testid=fix-apply]") {
            let key = b.get_attribute("data-fix").unwrap_or_default();
            let fix = fix_list.with_untracked(|l| {
                l.as_ref()
                    .and_then(|(l, _)| l.iter().find(|f| f.key == key).cloned())
            });
            if let Some(f) = fix {
                super::deploy::load_state(app, &f.state);
            }
            return;
        }
        if super::closest(&ev, "[data-testid=diagnose-fill]").is_some() {
            if let Asked::Pasted(text, _) = asked.get_untracked() {
                super::deploy::import_log(app, &text);
            }
            return;
        }
        if super::closest(&ev, "[data-testid=copy-markdown]").is_some() {
            let ledger = with_later(app, |p, u| ledger_markdown(p, u).into());
            let (_, head, sub) = verdict_lines(app);
            let link = super::page_link(app);
            let context = app
                .scenario
                .with(|s| ledger_context(&head, &sub, s.as_ref().ok(), &link));
            copy_text(context + &ledger.unwrap_or_default(), status);
        }
    };
    bind_html(
        "ab-result",
        html_memo(move || {
            let b_inputs = app.b.get();
            if b_inputs.is_empty() {
                return String::new();
            }
            with_teach(app, |p, u| {
                let st = app.checked.with_untracked(|(s, _)| s.b_state())?;
                let b = crate::input::scenario(&st)
                    .map_err(|e| e.message)
                    .and_then(|s| crate::calc::plan(&s).map_err(|e| e.to_string()));
                Some(compare::ab_html(
                    p,
                    b.as_ref().map_err(String::as_str),
                    &b_inputs,
                    u,
                ))
            })
            .unwrap_or_default()
        }),
    );
    bind_html(
        "probes",
        html_memo(move || {
            with_teach(app, |p, u| {
                let s = app.scenario.with_untracked(|s| s.as_ref().ok().cloned())?;
                Some(diagnose::probes_html(&crate::probes::probes(&s, p, u)))
            })
            .unwrap_or_default()
        }),
    );
    bind_html(
        "contrast",
        html_memo(move || {
            with_teach(app, |p, u| Some(diagnose::contrast_html(p, u))).unwrap_or_default()
        }),
    );
    bind_html(
        "fixes",
        html_memo(move || {
            fix_list.with(|f| {
                f.as_ref()
                    .map(|(f, starts)| diagnose::fixes_html(f, *starts))
                    .unwrap_or_default()
            })
        }),
    );
    // Diagnose: a symptom picked or a text pasted, against the scenario as it stands.
    bind_html(
        "diagnose-result",
        html_memo(move || {
            let asked = asked.get();
            if asked == Asked::Nothing {
                return String::new();
            }
            with_later(app, |p, u| {
                let s = app.scenario.with_untracked(|s| s.as_ref().ok().cloned())?;
                Some(match &asked {
                    Asked::Nothing => String::new(),
                    Asked::Picked(sym) => diagnose::diagnosis_html(
                        &crate::diagnose::diagnose(*sym, &s, p, None, u),
                        false,
                    ),
                    Asked::Pasted(_, Err(why)) => format!(
                        r#"<p class="import-error" role="alert">Not read: {}</p>"#,
                        charts::xml_escape(why)
                    ),
                    Asked::Pasted(text, Ok(sym)) => {
                        let log = crate::import::log::read(text).ok();
                        diagnose::diagnosis_html(
                            &crate::diagnose::diagnose(*sym, &s, p, log.as_ref(), u),
                            true,
                        )
                    }
                })
            })
            .unwrap_or_else(|| {
                "<p>No plan for these inputs: the verdict says what is in error.</p>".into()
            })
        }),
    );
    let on_change = move |ev: web_sys::Event| {
        if let Some(sel) = super::closest(&ev, "[data-testid=diagnose-symptom]")
            .and_then(|e| e.dyn_into::<web_sys::HtmlSelectElement>().ok())
        {
            asked.set(
                crate::diagnose::Symptom::from_key(&sel.value())
                    .map_or(Asked::Nothing, Asked::Picked),
            );
            return;
        }
        let Some(select) = super::closest(&ev, "[data-testid=timeline-rank]") else {
            return;
        };
        let Ok(select) = select.dyn_into::<web_sys::HtmlSelectElement>() else {
            return;
        };
        timeline_rank.set(select.value().parse().ok());
        // The timeline is redrawn once the effects have run; the new choice keeps the focus.
        set_timeout(
            || {
                if let Some(el) = document()
                    .query_selector("[data-testid=timeline-rank]")
                    .ok()
                    .flatten()
                    .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok())
                {
                    let _ = el.focus();
                }
            },
            std::time::Duration::ZERO,
        );
    };
    let stale = stale(app);
    view! {
        <div
            class="results"
            id="results"
            tabindex="-1"
            class:stale=stale
            inner_html=results_html()
            on:change=on_change
            on:focusin=|ev| show_info(&ev)
            on:mouseover=|ev| show_info(&ev)
            on:keydown=|ev| roving_focus(&ev)
            on:click=on_click
        ></div>
    }
}

/// Whether the panels show a plan older than the inputs (an input is in error).
pub fn stale(app: AppState) -> impl Fn() -> bool + Copy {
    move || app.plan.with(|p| p.is_err()) && app.shown.with(Option::is_some)
}
