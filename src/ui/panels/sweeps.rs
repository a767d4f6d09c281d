//! The sweeps' panel: the two charts (or a sentence where nothing can be drawn) and their
//! tables for screen readers, bound to the app's sweep signals.

use leptos::prelude::*;

use super::super::charts;
use super::super::state::AppState;
use super::{bind_html, html_memo, table_html, with_later};
use crate::calc::units::thousands;

/// Binds the sweep charts and their tables.
pub(super) fn bind_sweeps(app: AppState) {
    bind_html(
        "len-svg",
        html_memo(move || {
            // The plan's length where a pool was sized (auto fits one), else the one asked for.
            let current = with_later(app, |p, _| p.replica.as_ref().map(|r| r.max_model_len))
                .or_else(|| {
                    app.scenario.with_untracked(|s| {
                        s.as_ref()
                            .ok()
                            .map(crate::calc::sweep::current_max_model_len)
                    })
                })
                .unwrap_or(0);
            // A length that fails before a pool is sized has no concurrency to draw (its row
            // is in the table): the chart draws the others, and a sentence names these.
            let chart = app.len_sweep.with(|pts| {
                let drawn: Vec<_> = pts
                    .iter()
                    .filter(|p| p.max_concurrency > 0.0)
                    .cloned()
                    .collect();
                let failed: Vec<_> = pts.iter().filter(|p| p.max_concurrency <= 0.0).collect();
                let note = match (failed.first(), failed.last()) {
                    (Some(a), Some(b)) if !drawn.is_empty() => charts::sweep_aside(&format!(
                        "Not drawn: {} fail{} at {}, before a pool is sized.",
                        if failed.len() == 1 {
                            format!("max-model-len {}", thousands(u128::from(a.max_model_len)))
                        } else {
                            format!(
                                "max-model-len {} to {} ({} lengths)",
                                thousands(u128::from(a.max_model_len)),
                                thousands(u128::from(b.max_model_len)),
                                failed.len()
                            )
                        },
                        if failed.len() == 1 { "s" } else { "" },
                        a.fails_at.unwrap_or("a check")
                    )),
                    _ => String::new(),
                };
                (!drawn.is_empty()).then(|| charts::len_sweep_chart(&drawn, current) + &note)
            });
            if let Some(chart) = chart {
                return chart;
            }
            // No point has a pool: say why instead of drawing a row of points on the floor.
            with_later(app, |p, _| {
                p.first_failure().map(|c| {
                    charts::sweep_note(&format!(
                        "No max-model-len gets a KV cache: the start fails at {} before the pool is sized, so there is no concurrency to draw.",
                        c.phase.label()
                    ))
                })
            })
            .unwrap_or_default()
        }),
    );
    bind_html(
        "pool-svg",
        html_memo(move || {
            let unit = app.later_unit.get();
            // The ring moves with the slow lane too: typing waits only for the per-rank chart.
            app.later.track();
            let current = app.scenario.with_untracked(|s| {
                s.as_ref()
                    .map(crate::calc::Scenario::gpu_memory_utilization)
                    .unwrap_or(0.0)
            });
            app.pool_sweep.with(|pts| {
                // Nowhere any memory left for KV: a flat line at 0 would say nothing.
                match pts.last() {
                    Some(last) if pts.iter().all(|p| p.kv_pool == 0) => charts::sweep_note(&format!(
                        "At every gpu-memory-utilization from {} to {} the start fails{}, with no memory left for the KV cache.",
                        charts::fraction(pts[0].utilization),
                        charts::fraction(last.utilization),
                        last.fails_at.map(|f| format!(" at {f}")).unwrap_or_default()
                    )),
                    _ => charts::pool_sweep_chart(pts, current, unit),
                }
            })
        }),
    );
    bind_html(
        "len-rows",
        html_memo(move || {
            app.len_sweep.with(|pts| {
                table_html(
                    "Concurrency by max-model-len",
                    ["max-model-len", "max concurrency", "provenance"],
                    pts.iter().map(|p| {
                        [
                            thousands(u128::from(p.max_model_len)),
                            match (p.starts, p.fails_at) {
                                (true, _) => format!("{:.2}", p.max_concurrency),
                                (false, Some(f)) if p.max_concurrency > 0.0 => {
                                    format!("{:.2} of one request: fails at {f}", p.max_concurrency)
                                }
                                (false, f) => {
                                    format!("no pool: fails at {}", f.unwrap_or("a check"))
                                }
                            },
                            p.provenance.label().to_string(),
                        ]
                    }),
                )
            })
        }),
    );
    bind_html(
        "pool-rows",
        html_memo(move || {
            let unit = app.later_unit.get();
            app.pool_sweep.with(|pts| {
                table_html(
                    "KV pool by utilization",
                    [
                        "utilization",
                        "KV pool (or KV memory)",
                        "start",
                        "provenance",
                    ],
                    pts.iter().map(|p| {
                        [
                            format!("{:.2}", p.utilization),
                            charts::amount(i128::from(p.kv_pool), unit),
                            p.fails_at
                                .map_or("starts".to_string(), |f| format!("fails at {f}")),
                            p.provenance.label().to_string(),
                        ]
                    }),
                )
            })
        }),
    );
}
