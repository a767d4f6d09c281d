//! The result panels, in reading order: the verdict, pool versus demand, the per-rank chart,
//! the sweeps, the checks, the ledger and what vLLM would print. Each formats fields of the
//! `Plan`; none computes a figure.

use leptos::prelude::*;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use crate::calc::plan::{Plan, Term};
use crate::calc::units::{human, thousands, thousands_signed, UnitSystem};

use super::charts;
use super::state::{current_utilization, AppState};

/// The verdict's headline and its second line, from the plan.
pub fn verdict_text(plan: &Plan) -> (bool, String, String) {
    if let Some(c) = plan.first_failure() {
        let who = c
            .rank
            .map(|r| format!("Rank {r} decides. "))
            .unwrap_or_default();
        let knobs = if c.knobs.is_empty() {
            String::new()
        } else {
            format!("What acts here: {}. ", c.knobs.join(", "))
        };
        let not = if c.not_knobs.is_empty() {
            String::new()
        } else {
            format!("What does not: {}.", c.not_knobs.join(", "))
        };
        return (
            false,
            format!("Fails at {}: {}", c.phase.label(), c.message),
            format!("{who}{knobs}{not}"),
        );
    }
    match plan.replica.as_ref() {
        Some(r) => (
            true,
            format!(
                "Starts: {:.2} full-length requests fit per replica",
                r.max_concurrency
            ),
            format!(
                "{} whole {}-token requests at once; rank {} decides the pool ({} tokens).",
                r.full_length_requests,
                thousands(u128::from(r.max_model_len)),
                r.limiting_rank,
                thousands(u128::from(r.kv_cache_tokens))
            ),
        ),
        None => (true, "Starts".into(), String::new()),
    }
}

/// The banner a newcomer reads first.
pub fn verdict(app: AppState) -> impl IntoView {
    let text = Memo::new(move |_| {
        let err = app.plan.with(|p| p.as_ref().err().cloned());
        let shown = app.shown.get();
        match (err, shown) {
            (Some(e), _) => (
                "verdict invalid".to_string(),
                format!("Cannot plan this: {}", e.message),
                "The figures below are from the last valid inputs; fix the flagged input."
                    .to_string(),
            ),
            (None, Some(p)) => {
                let (ok, head, sub) = verdict_text(&p);
                (
                    if ok { "verdict ok" } else { "verdict fail" }.to_string(),
                    head,
                    sub,
                )
            }
            (None, None) => ("verdict".into(), "Planning…".into(), String::new()),
        }
    });
    let invalid = move || {
        app.checked.with(|(_, errs)| {
            (!errs.is_empty()).then(|| {
                let names: Vec<&str> = errs.iter().map(|(f, _)| f.flag()).collect();
                format!(
                    "Invalid input ignored (its default is used): {}",
                    names.join(", ")
                )
            })
        })
    };
    view! {
        <section class=move || text.with(|t| t.0.clone()) data-testid="verdict" role="status" aria-live="polite">
            <p class="headline" data-testid="verdict-headline">{move || text.with(|t| t.1.clone())}</p>
            <p class="sub">{move || text.with(|t| t.2.clone())}</p>
            <p class="sub warn">{invalid}</p>
        </section>
    }
}

/// A figure with its label; `bytes` (when given) goes into `data-bytes` for exact reading.
fn figure(
    testid: &'static str,
    label: &'static str,
    value: impl Fn() -> (String, Option<String>) + Send + Sync + Copy + 'static,
) -> impl IntoView {
    view! {
        <div class="figure">
            <dt>{label}</dt>
            <dd data-testid=testid data-bytes=move || value().1>{move || value().0}</dd>
        </div>
    }
}

fn with_plan<T>(app: AppState, f: impl Fn(&Plan, UnitSystem) -> Option<T>) -> Option<T> {
    let unit = app.unit.get();
    app.shown.with(|p| p.as_deref().and_then(|p| f(p, unit)))
}

const DASH: &str = "—";

/// The rank whose pool decides the replica's.
fn limiting_rank(p: &Plan) -> Option<&crate::calc::plan::RankPlan> {
    p.replica
        .as_ref()
        .and_then(|r| p.ranks.get(r.limiting_rank as usize))
}

/// Pool versus demand: the figures vLLM prints and what the scheduler could ask for.
pub fn pool_figures(app: AppState) -> impl IntoView {
    let s = |o: Option<(String, Option<String>)>| o.unwrap_or((DASH.into(), None));
    let bytes = |b: i128, unit| (human(b, unit), Some(b.to_string()));
    view! {
        <section class="panel" aria-labelledby="pool-h">
            <h2 id="pool-h">"Pool versus demand"</h2>
            <dl class="figures">
                {figure("kv-cache-tokens", "GPU KV cache size (tokens)", move || s(with_plan(app, |p, _| {
                    p.replica.as_ref().map(|r| (thousands(u128::from(r.kv_cache_tokens)), None))
                })))}
                {figure("max-concurrency", "Maximum concurrency at max-model-len", move || s(with_plan(app, |p, _| {
                    p.replica.as_ref().map(|r| (format!("{:.2}x", r.max_concurrency), None))
                })))}
                {figure("full-length-requests", "Whole max-length requests that fit", move || s(with_plan(app, |p, _| {
                    p.replica.as_ref().map(|r| (r.full_length_requests.to_string(), None))
                })))}
                {figure("kv-pool", "KV pool per rank (limiting rank)", move || s(with_plan(app, |p, u| {
                    limiting_rank(p).map(|r| bytes(i128::from(r.kv_pool.0), u))
                })))}
                {figure("budget", "Budget per rank: total x utilization", move || s(with_plan(app, |p, u| {
                    p.ranks.first().map(|r| bytes(i128::from(r.budget.0), u))
                })))}
                {figure("per-request", "One max-length request (limiting rank)", move || s(with_plan(app, |p, u| {
                    p.demand.as_ref().map(|d| bytes(i128::from(d.per_request_bytes), u))
                })))}
                {figure("demand", "Demand: max-num-seqs x max-model-len (replica)", move || s(with_plan(app, |p, u| {
                    p.demand.as_ref().map(|d| {
                        let b = i128::try_from(d.all_seqs_bytes_replica).unwrap_or(i128::MAX);
                        (format!("{} ({} seqs)", human(b, u), d.max_num_seqs), Some(b.to_string()))
                    })
                })))}
                {figure("concurrency-at-average", "Concurrency at the average length", move || s(with_plan(app, |p, _| {
                    p.demand.as_ref().map(|d| (format!("{:.2} at {} tokens", d.concurrency_at_average, thousands(u128::from(d.average_len))), None))
                })))}
            </dl>
            {move || with_plan(app, |p, u| p.unified.as_ref().map(|g| {
                view! {
                    <div class="gate" class:fail=!g.ok>
                        <h3>"Unified-memory start gate"</h3>
                        <dl class="figures">
                            <div class="figure"><dt>"Needs"</dt><dd data-testid="gate-needs" data-bytes=g.needs.0.to_string()>{human(i128::from(g.needs.0), u)}</dd></div>
                            <div class="figure"><dt>"MemAvailable"</dt><dd data-testid="gate-available" data-bytes=g.mem_available.0.to_string()>{human(i128::from(g.mem_available.0), u)}</dd></div>
                            <div class="figure"><dt>"Verdict"</dt><dd data-testid="gate-verdict">{if g.ok { "starts" } else { "refused" }}</dd></div>
                        </dl>
                        <ul class="gate-lines">
                            {g.lines.iter().map(|l| view! {
                                <li title=charts::line_info(l, u)>{format!("{}: {} ({})", l.term.label(), human(l.bytes, u), l.formula)}</li>
                            }).collect_view()}
                        </ul>
                        <p class="note">{g.utilization_note.clone()}</p>
                    </div>
                }
            }))}
        </section>
    }
}

/// Shows the explanation of the focused or hovered chart shape.
fn info_handler(info: RwSignal<String>) -> impl Fn(web_sys::Event) + Copy + 'static {
    move |ev: web_sys::Event| {
        let el = ev
            .target()
            .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
            .and_then(|e| e.closest("[data-info]").ok().flatten());
        if let Some(text) = el.and_then(|e| e.get_attribute("data-info")) {
            info.set(text);
        }
    }
}

/// The per-rank budget chart, its legend, the focused segment's explanation and a table
/// alternative for screen readers.
pub fn rank_chart(app: AppState) -> impl IntoView {
    let svg = Memo::new(move |_| {
        let unit = app.unit.get();
        app.shown
            .with(|p| p.as_deref().map(|p| charts::rank_chart(p, unit)).unwrap_or_default())
    });
    let info = RwSignal::new(String::from(
        "Hover or focus a segment (Tab) for its exact bytes, formula and provenance.",
    ));
    let on_info = info_handler(info);
    let table = move || {
        with_plan(app, |p, u| {
            let rows = p
                .ranks
                .iter()
                .map(|r| {
                    let cell = |t: Term| r.line(t).map_or(DASH.to_string(), |l| human(l.bytes, u));
                    let id = r.rank;
                    view! {
                        <tr>
                            <th scope="row">{format!("rank {id}")}</th>
                            <td>{format!("{} ({}–{})", r.pp_rank, r.layers.0, r.layers.1.saturating_sub(1))}</td>
                            <td data-testid=format!("rank-{id}-budget")>{cell(Term::Budget)}</td>
                            <td data-testid=format!("rank-{id}-weights")>{cell(Term::Weights)}</td>
                            <td data-testid=format!("rank-{id}-kv-pool")>{cell(Term::KvPool)}</td>
                            <td data-testid=format!("rank-{id}-free")>{cell(Term::FreeAfterStart)}</td>
                            <td data-testid=format!("rank-{id}-total")>{cell(Term::Total)}</td>
                        </tr>
                    }
                })
                .collect_view();
            Some(rows)
        })
    };
    view! {
        <section class="panel" aria-labelledby="chart-h">
            <h2 id="chart-h">"Per-rank budget"</h2>
            <figure class="chart" data-testid="rank-chart">
                <div
                    class="svg"
                    inner_html=move || svg.get()
                    on:focusin=move |ev| on_info(ev.into())
                    on:mouseover=move |ev| on_info(ev.into())
                ></div>
                <figcaption>
                    <ul class="legend">
                        {charts::legend()
                            .into_iter()
                            .map(|(c, name)| view! { <li><svg class="swatch" viewBox="0 0 10 10" aria-hidden="true"><rect width="10" height="10" fill=c></rect></svg>{name}</li> })
                            .collect_view()}
                    </ul>
                    <p class="chart-info" aria-live="polite" data-testid="chart-info">{move || info.get()}</p>
                </figcaption>
                <table class="sr-only" data-testid="rank-table">
                    <caption>"Per-rank memory, as a table"</caption>
                    <thead><tr><th scope="col">"rank"</th><th scope="col">"stage (layers)"</th><th scope="col">"budget"</th><th scope="col">"weights"</th><th scope="col">"KV pool"</th><th scope="col">"free after start"</th><th scope="col">"total"</th></tr></thead>
                    <tbody>{table}</tbody>
                </table>
            </figure>
        </section>
    }
}

/// The two sweeps: concurrency against max-model-len and the pool against utilization.
pub fn sweeps(app: AppState) -> impl IntoView {
    let len_svg = Memo::new(move |_| {
        let current = with_plan(app, |p, _| p.replica.as_ref().map(|r| r.max_model_len)).unwrap_or(0);
        app.len_sweep.with(|pts| charts::len_sweep_chart(pts, current))
    });
    let pool_svg = Memo::new(move |_| {
        let unit = app.unit.get();
        let current = app
            .scenario
            .with(|s| s.as_ref().map(current_utilization).unwrap_or(0.0));
        app.pool_sweep
            .with(|pts| charts::pool_sweep_chart(pts, current, unit))
    });
    let info = RwSignal::new(String::new());
    let on_info = info_handler(info);
    let len_rows = move || {
        app.len_sweep.with(|pts| {
            pts.iter()
                .map(|p| view! { <tr><td>{thousands(u128::from(p.max_model_len))}</td><td>{format!("{:.2}", p.max_concurrency)}</td></tr> })
                .collect_view()
        })
    };
    let pool_rows = move || {
        let unit = app.unit.get();
        app.pool_sweep.with(|pts| {
            pts.iter()
                .map(|p| view! { <tr><td>{format!("{:.2}", p.utilization)}</td><td>{human(i128::from(p.kv_pool), unit)}</td></tr> })
                .collect_view()
        })
    };
    view! {
        <section class="panel sweeps" aria-labelledby="sweep-h" on:focusin=move |ev| on_info(ev.into()) on:mouseover=move |ev| on_info(ev.into())>
            <h2 id="sweep-h">"Sweeps"</h2>
            <figure class="chart" data-testid="len-sweep">
                <figcaption>"Maximum concurrency against max-model-len (current length ringed)"</figcaption>
                <div class="svg" inner_html=move || len_svg.get()></div>
                <table class="sr-only"><caption>"Concurrency by max-model-len"</caption><thead><tr><th scope="col">"max-model-len"</th><th scope="col">"max concurrency"</th></tr></thead><tbody>{len_rows}</tbody></table>
            </figure>
            <figure class="chart" data-testid="pool-sweep">
                <figcaption>"KV pool per rank against gpu-memory-utilization (current fraction ringed)"</figcaption>
                <div class="svg" inner_html=move || pool_svg.get()></div>
                <table class="sr-only"><caption>"KV pool by utilization"</caption><thead><tr><th scope="col">"utilization"</th><th scope="col">"KV pool"</th></tr></thead><tbody>{pool_rows}</tbody></table>
            </figure>
            <p class="chart-info" aria-live="polite">{move || info.get()}</p>
        </section>
    }
}

/// The checks in phase order, with the knobs that act on each and the ones that do not.
pub fn checks(app: AppState) -> impl IntoView {
    view! {
        <section class="panel" aria-labelledby="checks-h">
            <h2 id="checks-h">"Start-up, phase by phase"</h2>
            <ol class="checks" data-testid="checks">
                {move || with_plan(app, |p, _| Some(p.checks.iter().map(|c| view! {
                    <li class=if c.ok { "ok" } else { "fail" } data-phase=c.phase.key()>
                        <strong>{format!("{} {}", if c.ok { "✓" } else { "✗" }, c.phase.label())}</strong>
                        {c.rank.map(|r| format!(" (rank {r})"))}
                        ": " {c.message.clone()}
                        <br/>
                        <small>
                            {(!c.knobs.is_empty()).then(|| format!("Acts here: {}. ", c.knobs.join(", ")))}
                            {(!c.not_knobs.is_empty()).then(|| format!("Does not: {}.", c.not_knobs.join(", ")))}
                        </small>
                    </li>
                }).collect_view()))}
            </ol>
            <ul class="notes" data-testid="notes">
                {move || with_plan(app, |p, _| Some(p.notes.iter().map(|n| view! { <li>{n.clone()}</li> }).collect_view()))}
            </ul>
        </section>
    }
}

/// The ledger of one bar's rank(s) as Markdown.
pub fn ledger_markdown(plan: &Plan, unit: UnitSystem) -> String {
    let mut md = String::from("# Headroom ledger\n\n");
    for bar in charts::bars(plan) {
        let r = bar.plan;
        md.push_str(&format!(
            "## {} (stage {}, layers {}–{})\n\n| term | value | bytes | formula | provenance |\n|---|---|---:|---|---|\n",
            bar.label(),
            r.pp_rank,
            r.layers.0,
            r.layers.1.saturating_sub(1)
        ));
        for l in &r.ledger {
            let basis = l.provenance.basis();
            md.push_str(&format!(
                "| {} | {} | {} | {} | {}{}{} |\n",
                l.term.label(),
                human(l.bytes, unit),
                thousands_signed(l.bytes),
                l.formula.replace('|', "\\|"),
                l.provenance.label(),
                if basis.is_empty() { "" } else { ": " },
                basis.replace('|', "\\|")
            ));
        }
        md.push('\n');
    }
    md
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

/// Every figure with its formula (numbers substituted), unit and provenance, per distinct rank.
pub fn ledger(app: AppState) -> impl IntoView {
    let status = RwSignal::new(String::new());
    let copy = move |_| {
        let md = with_plan(app, |p, u| Some(ledger_markdown(p, u))).unwrap_or_default();
        copy_text(md, status);
    };
    let tables = move || {
        with_plan(app, |p: &Plan, u| {
            Some(
                charts::bars(p)
                    .into_iter()
                    .map(|bar| {
                        let r = bar.plan;
                        let caption = format!(
                            "{} (stage {}, layers {}–{})",
                            bar.label(),
                            r.pp_rank,
                            r.layers.0,
                            r.layers.1.saturating_sub(1)
                        );
                        view! {
                            <table class="ledger-table" data-testid=format!("ledger-rank-{}", r.rank)>
                                <caption>{caption}</caption>
                                <thead><tr><th scope="col">"term"</th><th scope="col">"value"</th><th scope="col">"bytes"</th><th scope="col">"formula"</th><th scope="col">"provenance"</th></tr></thead>
                                <tbody>
                                    {r.ledger.iter().map(|l| view! {
                                        <tr data-term=l.term.key()>
                                            <th scope="row">{l.term.label()}</th>
                                            <td class="num">{human(l.bytes, u)}</td>
                                            <td class="num">{thousands_signed(l.bytes)}</td>
                                            <td class="formula">{l.formula.clone()}</td>
                                            <td><span class=format!("badge {}", l.provenance.label()) title=l.provenance.basis().to_string()>{l.provenance.label()}</span>
                                                " " <small>{l.provenance.basis().to_string()}</small></td>
                                        </tr>
                                    }).collect_view()}
                                </tbody>
                            </table>
                        }
                    })
                    .collect_view(),
            )
        })
    };
    view! {
        <section class="panel" aria-labelledby="ledger-h" data-testid="ledger">
            <h2 id="ledger-h">"Ledger"</h2>
            <p>
                <button type="button" data-testid="copy-markdown" on:click=copy>"Copy as Markdown"</button>
                " " <span role="status">{move || status.get()}</span>
            </p>
            <div class="scroll">{tables}</div>
        </section>
    }
}

/// The log lines and the error texts vLLM would print.
pub fn vllm_log(app: AppState) -> impl IntoView {
    let text = move || {
        app.shown.with(|p| {
            p.as_deref().map_or(String::new(), |p: &Plan| {
                let mut lines = p.log_lines.clone();
                lines.extend(p.checks.iter().filter_map(|c| c.vllm_error.clone()));
                lines.join("\n")
            })
        })
    };
    view! {
        <section class="panel" aria-labelledby="log-h">
            <h2 id="log-h">"What vLLM would print"</h2>
            <pre class="log" data-testid="vllm-log" tabindex="0">{text}</pre>
        </section>
    }
}

/// Whether the panels show a plan older than the inputs (an input is in error).
pub fn stale(app: AppState) -> impl Fn() -> bool + Copy {
    move || app.plan.with(|p| p.is_err()) && app.shown.with(Option::is_some)
}
