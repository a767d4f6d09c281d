//! The profile run and the KV budget (`determine_available_memory`): each rank's activation
//! peak, other use and CUDA graphs, and what the budget leaves for the KV cache, or the pinned
//! `--kv-cache-memory-bytes`; after the load, the pinned pool's profile pass and the
//! "Available KV cache memory" lines.

use super::ledger::{amount, line, measured_overhead};
use super::load::Loaded;
use super::stages::Shared;
use super::vllm_log::{graph_estimate_log, graph_profiling_log, worker_prefix};
use super::Planning;
use crate::calc::formula::{Arg, Formula};
use crate::calc::plan::*;
use crate::calc::scenario::{Scenario, StageTerm};
use crate::calc::units::{py_fixed, py_float_str, GibText};

/// A rank's profile-run terms.
pub(super) struct Profiled {
    pub(super) act: u64,
    pub(super) act_prov: Provenance,
    pub(super) other: u64,
    pub(super) other_prov: Provenance,
    pub(super) cg_prov: Provenance,
    /// The graphs as the budget counts them: inside it from v0.20, outside before.
    pub(super) cg_in_budget: u64,
}

/// The profiling terms (the same on every stage but for the last one's logits).
pub(super) fn profile_lines(
    s: &Scenario,
    sh: &Shared,
    last: bool,
    ledger: &mut Vec<LedgerLine>,
) -> Profiled {
    let v = s.version;
    let Shared {
        activation_last,
        activation_mid,
        other_term,
        graphs_term,
        graphs_on,
        sizes,
        ..
    } = sh;
    let graphs_on = *graphs_on;
    let (act, act_prov) = if last {
        activation_last.clone()
    } else {
        activation_mid.clone()
    };
    let (other, other_prov) = other_term.clone();
    let (cg, cg_prov) = graphs_term.clone();
    ledger.push(line(
        Term::Activation,
        i128::from(act),
        || "profile run's peak above the resting allocation (transient_peak_headroom)",
        act_prov.clone(),
    ));
    ledger.push(line(
        Term::OtherConsumption,
        i128::from(other),
        || "persistent non-weight use after the snapshot (runner buffers, workspaces, non-torch)",
        other_prov.clone(),
    ));
    ledger.push(line(
        Term::CudaGraphs,
        i128::from(cg),
        || if !graphs_on {
            Formula::from("--enforce-eager: no CUDA graphs")
        } else if s.engine.kv_cache_memory_bytes.is_some_and(|b| b > 0) {
            // The pinned path returns before the graph estimate (gpu_worker.py).
            Formula::template(
                "{} capture sizes; captured after the pinned pool, which no estimate of them sizes",
                &[Arg::Plain(sizes.len() as i128)],
            )
        } else if v.graphs_inside_budget() {
            Formula::template(
                "{} capture sizes; vLLM subtracts its own estimate of them inside the budget (v0.20+)",
                &[Arg::Plain(sizes.len() as i128)],
            )
        } else {
            Formula::template(
                "{} capture sizes; outside the budget before v0.20",
                &[Arg::Plain(sizes.len() as i128)],
            )
        },
        cg_prov.clone(),
    ));
    let cg_in_budget = if v.graphs_inside_budget() { cg } else { 0 };
    Profiled {
        act,
        act_prov,
        other,
        other_prov,
        cg_prov,
        cg_in_budget,
    }
}

/// The KV budget of a rank: pinned, measured, or what the budget leaves after the weights and
/// the profile run; with a measured figure, the other use it implies.
pub(super) fn available_kv(
    s: &Scenario,
    sh: &Shared,
    stage: u32,
    l: &Loaded,
    p: &Profiled,
    ledger: &mut Vec<LedgerLine>,
    notes: &mut Vec<String>,
) -> i128 {
    let (head, requested) = (&sh.head, sh.budget);
    let Loaded {
        w_total,
        ref w_prov,
        ref drafter,
        weights_all,
        ..
    } = *l;
    let Profiled {
        act,
        ref act_prov,
        other,
        ref other_prov,
        ref cg_prov,
        cg_in_budget,
    } = *p;
    // The KV budget.
    let stage_avail = s.runtime.for_stage(StageTerm::AvailableKv, stage as usize);
    let (available, avail_prov, avail_formula): (i128, Provenance, Formula) =
        if let Some(k) = s.engine.kv_cache_memory_bytes {
            (
            i128::from(k),
            Provenance::Exact,
            Formula::template(
                "--kv-cache-memory-bytes {}: pinned, gpu-memory-utilization ignored for the pool",
                &[Arg::Grouped(i128::from(k))],
            ),
        )
        } else if let Some(a) = stage_avail {
            (
                i128::from(a.bytes.0),
                Provenance::Measured(a.source.clone().into()),
                Formula::template("{} B measured", &[Arg::Grouped(i128::from(a.bytes.0))]),
            )
        } else {
            let non_kv = i128::from(weights_all) + i128::from(other) + i128::from(act);
            let a = if s.version.requested_is_ceil() {
                i128::from(requested) - non_kv - i128::from(cg_in_budget)
            } else {
                // Before 0.14: int(requested_memory - non_kv), the float requested memory
                // less an int, truncated toward zero (gpu_worker.py::determine_available_memory).
                (sh.requested_f - non_kv as f64).trunc() as i128
            };
            (
                a,
                Provenance::combine(&[
                    &head[0].provenance,
                    w_prov,
                    &drafter.1,
                    act_prov,
                    other_prov,
                    cg_prov,
                ]),
                Formula::template(
                    "{} - ({} weights{} + {} other + {} activation) - {} graphs = {}",
                    &[
                        Arg::Grouped(i128::from(requested)),
                        Arg::Grouped(i128::from(weights_all)),
                        Arg::Text(if weights_all > w_total {
                            " and drafter"
                        } else {
                            ""
                        }),
                        Arg::Grouped(i128::from(other)),
                        Arg::Grouped(i128::from(act)),
                        Arg::Grouped(i128::from(cg_in_budget)),
                        Arg::Grouped(a),
                    ],
                ),
            )
        };
    ledger.push(line(
        Term::AvailableKv,
        available,
        || avail_formula,
        avail_prov.clone(),
    ));
    if s.engine.kv_cache_memory_bytes.is_none()
        && stage_avail.is_some()
        && s.runtime.non_torch.is_none()
    {
        implied_other(sh, available, &avail_prov, l, p, ledger, notes);
    }
    available
}

/// A measured available figure says how much the profile used besides KV: when the other use
/// was not measured itself, it is what the estimates leave of that, so the ledger adds up to
/// the budget and "free after start" holds what was used.
fn implied_other(
    sh: &Shared,
    available: i128,
    avail_prov: &Provenance,
    l: &Loaded,
    p: &Profiled,
    ledger: &mut [LedgerLine],
    notes: &mut Vec<String>,
) {
    let (head, requested) = (&sh.head, sh.budget);
    let Loaded {
        ref w_prov,
        ref drafter,
        weights_all,
        ..
    } = *l;
    let Profiled {
        act,
        ref act_prov,
        ref cg_prov,
        cg_in_budget,
        ..
    } = *p;
    let implied = i128::from(requested)
        - available
        - i128::from(weights_all)
        - i128::from(act)
        - i128::from(cg_in_budget);
    if implied >= 0 {
        if let Some(l) = ledger.iter_mut().find(|l| l.term == Term::OtherConsumption) {
            l.bytes = implied;
            l.formula = super::page_text(|| {
                Formula::template(
                "implied by the measured available KV: budget {} - available {} - weights {} - activation {} - graphs {}",
                &[
                    Arg::Grouped(i128::from(requested)),
                    Arg::Grouped(available),
                    Arg::Grouped(i128::from(weights_all)),
                    Arg::Grouped(i128::from(act)),
                    Arg::Grouped(i128::from(cg_in_budget)),
                ],
            )
            });
            l.provenance = Provenance::combine(&[
                avail_prov,
                &head[0].provenance,
                w_prov,
                &drafter.1,
                act_prov,
                cg_prov,
            ]);
        }
    } else if !notes
        .iter()
        .any(|n| n.starts_with("The measured available KV"))
        && super::NOTES
    {
        notes.push(format!(
            "The measured available KV memory leaves {} less for non-KV use than the estimated weights, activation and graphs take: an estimate is high.",
            amount(-implied)
        ));
    }
}

/// A pinned pool skips the sizing, not the profile run: the check of that pass on every rank.
/// Returns whether the start stops here.
pub(super) fn pinned_profile_phase(p: &mut Planning) -> bool {
    let Planning {
        s,
        ref ranks,
        ref mut checks,
        ref mut log_lines,
        ..
    } = *p;
    // A pinned pool skips the sizing, not the profile run (gpu_worker.determine_available_memory
    // runs profile_run first): a batch of max-num-batched-tokens on top of what loading left.
    // Within the budget the same shortfall leaves no KV memory, which the sizing reports.
    if s.engine.kv_cache_memory_bytes.is_some_and(|b| b > 0) && measured_overhead(s).is_none() {
        let room = |r: &RankPlan| {
            let get = |t: Term| r.line(t).map_or(0, |l| l.bytes);
            get(Term::FreeAtStart)
                - get(Term::Weights)
                - get(Term::Drafter)
                - get(Term::OtherConsumption)
        };
        let act = |r: &RankPlan| r.line(Term::Activation).map_or(0, |l| l.bytes);
        if let Some(r) = ranks.iter().find(|r| r.profile_headroom() < 0) {
            checks.push(Check {
                phase: Phase::KvSizing,
                ok: false,
                rank: Some(r.rank),
                message: format!(
                    "rank {}: vLLM still runs its profile pass with a pinned pool, and the pass's activation peak ({}) does not fit in what loading left ({}); {} more would be needed",
                    r.rank,
                    amount(act(r)),
                    amount(room(r)),
                    amount(act(r) - room(r))
                )
                .into(),
                vllm_error: super::page_text(|| Some("torch.OutOfMemoryError: CUDA out of memory.".into())),
                knobs: vec![
                    "max-num-batched-tokens (the profile's batch)",
                    "tensor-parallel-size",
                    "pipeline-parallel-size",
                    "quantization",
                ],
                not_knobs: vec![
                    "kv-cache-memory-bytes (the pool comes after the profile)",
                    "gpu-memory-utilization (a pin ignores it)",
                ],
            });
            if super::NOTES {
                log_lines.push("torch.OutOfMemoryError: CUDA out of memory.".to_string());
            }
            p.profile_failed = true;
            return true;
        }
    }
    false
}

/// What each stage's first worker writes once profiled: the pinned pool's sentence, or the
/// graph capture, "Available KV cache memory" and the CUDA graph profiling sentence.
pub(super) fn profiled_logs(p: &mut Planning) {
    let Planning {
        s,
        ref r,
        ref ranks,
        ref mut log_lines,
        ..
    } = *p;
    let util = r.util;
    let mut graph_line = None;
    let mut graph_estimate = None;
    if !s.version.requested_is_ceil() {
        log_lines.extend(ranks.iter().filter_map(|r| profiled_log_before_0_14(s, r)));
        return;
    }
    for r in ranks.iter().filter(|r| r.tp_rank == 0) {
        if let Some(k) = s.engine.kv_cache_memory_bytes {
            let free0 = r.line(Term::FreeAtStart).map_or(0, |l| l.bytes);
            if super::NOTES {
                log_lines.push(format!(
                "{} Initial free memory {} GiB, reserved {} GiB memory for KV Cache as specified by kv_cache_memory_bytes config and skipped memory profiling. This does not respect the gpu_memory_utilization config. Only use kv_cache_memory_bytes config when you want manual control of KV cache memory size. If OOM'ed, check the difference of initial free memory between the current run and the previous run where kv_cache_memory_bytes is suggested and update it correspondingly.",
                worker_prefix(s, r),
                GibText(free0),
                GibText(i128::from(k))
            ));
            }
        } else {
            if let Some(line) = graph_estimate_log(s, r, &mut graph_estimate) {
                if super::NOTES {
                    log_lines.push(line);
                }
            }
            if super::NOTES {
                log_lines.push(format!(
                    "{} Available KV cache memory: {} GiB",
                    worker_prefix(s, r),
                    GibText(r.available_kv)
                ));
            }
            if let Some(line) = graph_profiling_log(s, r, util, &mut graph_line) {
                if super::NOTES {
                    log_lines.push(line);
                }
            }
        }
    }
}

/// A worker's line once profiled, vLLM 0.10.2 to 0.13.0 (`Worker.determine_available_memory`):
/// `"Available KV cache memory: %.2f GiB"` (`info_once(scope="local")` from 0.11.2, plain
/// `info` on every worker before), or the pinned pool's sentence (plain `info` on every worker;
/// in 0.10.2 and 0.11.0 with the free memory unrounded, "GiB" unspaced and "does does").
/// `None` for a worker that does not print it.
fn profiled_log_before_0_14(s: &Scenario, r: &RankPlan) -> Option<String> {
    if !super::NOTES {
        return None;
    }
    let v = s.version;
    let gib = |b: i128| b as f64 / crate::calc::units::GIB as f64;
    if let Some(k) = s.engine.kv_cache_memory_bytes {
        let free0 = r.line(Term::FreeAtStart).map_or(0, |l| l.bytes);
        let k = i128::from(k);
        let body = if v.at_least_patch(0, 11, 2) {
            format!(
                "Initial free memory {} GiB, reserved {} GiB memory for KV Cache as specified by kv_cache_memory_bytes config and skipped memory profiling. This does not respect the gpu_memory_utilization config.",
                py_fixed(gib(free0), 2),
                py_fixed(gib(k), 2)
            )
        } else {
            format!(
                "Initial free memory {} GiB, reserved {}GiB memory for KV Cache as specified by kv_cache_memory_bytes config and skipped memory profiling. This does does not respect the gpu_memory_utilization config.",
                py_float_str(gib(free0)),
                py_fixed(gib(k), 2)
            )
        };
        return Some(format!(
            "{} {body} Only use kv_cache_memory_bytes config when you want manual control of KV cache memory size. If OOM'ed, check the difference of initial free memory between the current run and the previous run where kv_cache_memory_bytes is suggested and update it correspondingly.",
            worker_prefix(s, r)
        ));
    }
    if v.worker_lines_once() && r.tp_rank != 0 {
        return None;
    }
    // vLLM formats the float budget less non_kv; the integer figure is under a byte from it.
    Some(format!(
        "{} Available KV cache memory: {} GiB",
        worker_prefix(s, r),
        py_fixed(gib(r.available_kv), 2)
    ))
}
