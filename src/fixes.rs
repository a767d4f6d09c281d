//! What fixes it: for a scenario that does not start, the smallest changes that make it start,
//! each found by a solver or by planning the changed scenario, and each one click (the inputs
//! it sets) and a link; for one that starts, what it would take to hold more full-length
//! requests. Every candidate is planned through the one builder before it is offered, so a fix
//! that is shown starts.

use crate::calc::plan::{Plan, Term};
use crate::calc::scenario::{KvCacheDtype, Scenario};
use crate::calc::solve;
use crate::calc::units::{grouped_fixed, thousands};
use crate::calc::{self};
use crate::input::query::{self, UrlState};
use crate::input::Field;

/// One change offered.
#[derive(Clone, Debug, PartialEq)]
pub struct Fix {
    /// A stable key (`more-tp`, `max-model-len`, `utilization`, `kv-pin`, `pp-split`,
    /// `fp8-kv`), for the page's `data-testid`s.
    pub key: &'static str,
    /// What to change, in words with the values.
    pub title: String,
    /// What the changed scenario gives, planned.
    pub result: String,
    /// The state with the change, and its link.
    pub state: UrlState,
    pub link: String,
}

/// The inputs `state` had, with `changes` set; `None` where the page would refuse one.
fn changed(state: &UrlState, changes: &[(Field, String)]) -> Option<UrlState> {
    let mut next = state.clone();
    for (f, t) in changes {
        next.set(*f, t).ok()?;
    }
    Some(next)
}

/// The plan of a state, when its inputs make one.
fn plan_state(state: &UrlState) -> Option<(Scenario, Plan)> {
    let s = crate::input::scenario(state).ok()?;
    let p = calc::plan(&s).ok()?;
    Some((s, p))
}

/// What a started plan holds, in words.
fn holds(p: &Plan) -> String {
    match &p.replica {
        Some(r) => {
            let c = grouped_fixed(r.max_concurrency, 2);
            format!(
                "starts: {c} full-length {} of {} tokens at once ({} tokens of KV cache; {})",
                if c == "1.00" { "request" } else { "requests" },
                thousands(u128::from(r.max_model_len)),
                thousands(u128::from(r.kv_cache_tokens)),
                r.provenance.label()
            )
        }
        None => "starts".into(),
    }
}

/// The candidate `key` if its changed scenario starts (and, with `more_than`, holds more
/// full-length requests than that).
fn offer(
    out: &mut Vec<Fix>,
    state: &UrlState,
    key: &'static str,
    title: String,
    changes: &[(Field, String)],
    more_than: Option<f64>,
) {
    let Some(next) = changed(state, changes) else {
        return;
    };
    let Some((_, p)) = plan_state(&next) else {
        return;
    };
    if !p.starts() {
        return;
    }
    if let Some(now) = more_than {
        if p.replica.as_ref().map_or(0.0, |r| r.max_concurrency) <= now {
            return;
        }
    }
    out.push(Fix {
        key,
        title,
        result: holds(&p),
        link: query::link(&next),
        state: next,
    });
}

/// The tensor-parallel sizes above the scenario's that its model can take, smallest first (a
/// doubling at a time, at most 16).
fn larger_tp(s: &Scenario) -> Vec<u32> {
    let mut out = Vec::new();
    let mut tp = s.parallel.tp * 2;
    while tp <= 16 && out.len() < 2 {
        if s.model.n_heads % u64::from(tp) == 0 {
            out.push(tp);
        }
        tp *= 2;
    }
    out
}

/// A TP change with the GPU count it needs.
fn tp_changes(state: &UrlState, s: &Scenario, tp: u32) -> Vec<(Field, String)> {
    let mut c = vec![(Field::Tp, tp.to_string())];
    let need = tp * s.parallel.pp * s.parallel.dp;
    if state.get(Field::Gpus).is_some() && s.gpus < need {
        c.push((Field::Gpus, need.to_string()));
    }
    c
}

/// The layer-equivalents the last stage holds beyond the first (head, drafter), from the
/// plan's weights: what a balanced split moves off it.
pub fn last_stage_extras(p: &Plan) -> Option<f64> {
    let first = p.ranks.first()?;
    let last = p.ranks.last()?;
    let layers = |r: &calc::RankPlan| u64::from(r.layers.1 - r.layers.0);
    let per_layer = first.line_bytes(Term::WeightsLayers) as f64 / layers(first).max(1) as f64;
    if per_layer <= 0.0 {
        return None;
    }
    let beyond = |r: &calc::RankPlan| {
        (r.line_bytes(Term::Weights) + r.line_bytes(Term::Drafter)) as f64
            - layers(r) as f64 * per_layer
    };
    Some(((beyond(last) - beyond(first)) / per_layer).max(0.0))
}

/// The fixes for the scenario of `state` (planned as `p`): for a failing start, the changes
/// that make it start; for a starting one, those that hold more full-length requests.
pub fn fixes(state: &UrlState, s: &Scenario, p: &Plan) -> Vec<Fix> {
    let mut out = Vec::new();
    let starts = p.starts();
    let now = p.replica.as_ref().map(|r| r.max_concurrency);
    let more = if starts { now } else { None };
    let util = p.gpu_memory_utilization;
    for tp in larger_tp(s) {
        offer(
            &mut out,
            state,
            "more-tp",
            format!("--tensor-parallel-size {tp} (now {})", s.parallel.tp),
            &tp_changes(state, s, tp),
            more,
        );
        if out.iter().any(|f| f.key == "more-tp") {
            break;
        }
    }
    if !starts {
        if let Ok(Some(len)) = solve::longest_max_model_len(s) {
            if len < p.settings.max_model_len.value {
                offer(
                    &mut out,
                    state,
                    "max-model-len",
                    format!(
                        "--max-model-len {} (the longest that starts; now {})",
                        thousands(u128::from(len)),
                        thousands(u128::from(p.settings.max_model_len.value))
                    ),
                    &[(Field::MaxModelLen, len.to_string())],
                    None,
                );
            }
        }
    }
    // The smallest utilization holding one full-length request (or one more than now).
    let want = now.map_or(1, |c| (c.floor() as u64) + 1).max(1);
    if s.engine.kv_cache_memory_bytes.is_none() {
        if let Ok(Some(u)) = solve::smallest_utilization_for(s, want) {
            if (u - util).abs() > 1e-9 {
                offer(
                    &mut out,
                    state,
                    "utilization",
                    format!(
                        "--gpu-memory-utilization {u} (now {util}): the smallest that holds {want} full-length {}",
                        if want == 1 { "request" } else { "requests" }
                    ),
                    &[(Field::Util, u.to_string())],
                    more,
                );
            }
        }
    }
    // On unified memory the pin the start gate passes; elsewhere the largest that starts, for a
    // failing pinned pool.
    if (s.unified.is_some() || s.engine.kv_cache_memory_bytes.is_some()) && !starts {
        if let Ok(pin) = solve::largest_kv_pin(s) {
            if pin > 0 {
                offer(
                    &mut out,
                    state,
                    "kv-pin",
                    format!(
                        "--kv-cache-memory-bytes {} (the largest {})",
                        thousands(u128::from(pin)),
                        if s.unified.is_some() {
                            "the unified-memory start gate passes"
                        } else {
                            "that starts"
                        }
                    ),
                    &[(Field::KvBytes, pin.to_string())],
                    None,
                );
            }
        }
    }
    // Uneven stages: the balanced split.
    if s.parallel.pp > 1 && !starts {
        if let Some(extras) = last_stage_extras(p) {
            if let Ok(b) = solve::balanced_partition(s.model.n_layers, s.parallel.pp, extras, 0) {
                let list: Vec<String> = b.partition.iter().map(u32::to_string).collect();
                let now: Vec<String> = p
                    .ranks
                    .iter()
                    .filter(|r| r.tp_rank == 0)
                    .map(|r| (r.layers.1 - r.layers.0).to_string())
                    .collect();
                if list != now {
                    offer(
                        &mut out,
                        state,
                        "pp-split",
                        format!(
                            "--pp-layer-partition {} (now {}): balances {} layer-equivalents of last-stage extras",
                            list.join(","),
                            now.join(","),
                            grouped_fixed(extras, 1)
                        ),
                        &[(Field::PpPartition, list.join(","))],
                        None,
                    );
                }
            }
        }
    }
    if s.engine.kv_cache_dtype == KvCacheDtype::Auto {
        offer(
            &mut out,
            state,
            "fp8-kv",
            "--kv-cache-dtype fp8 (half the bytes per token of the attention caches)".into(),
            &[(Field::KvDtype, "fp8".into())],
            more,
        );
    }
    out
}
