//! The end of every plan, started or stopped: the allocation check, the lines after graph
//! capture, the unified gate's check and the Plan assembled.

use super::checks::allocation_check;
use super::ledger::amount;
use super::vllm_log::{graph_estimate_log, suggestion_log, worker_prefix};
use super::Planning;
use crate::calc::plan::*;
use crate::calc::timeline::StartPhase;
use crate::calc::units::GibText;

/// The Plan, whichever phase the start stopped at: after a fitting pool the allocation check
/// and the lines vLLM writes once the graphs are captured; the unified gate's check first.
pub(super) fn finish(p: Planning, replica: Option<ReplicaPlan>, demand: Option<Demand>) -> Plan {
    let Planning {
        s,
        mut r,
        ranks,
        mut checks,
        unified,
        mut log_lines,
        notes,
        profile_failed,
    } = p;
    let util = r.util;
    let parts = std::mem::take(&mut r.parts);
    let settings = r.settings(s);
    if replica.is_some() {
        checks.extend(allocation_check(s, &ranks, &mut log_lines));
    }
    // After the graphs are captured, a started engine suggests a pin.
    let started = replica.is_some() && checks.iter().all(|c| c.ok);
    let mut suggested = false;
    let mut notes = notes;
    if started {
        // compile_or_warm_up_model captures the graphs for real, logs it, and compares the
        // pool with the profiling estimate (gpu_worker.py); the actual figures need a GPU.
        let mut capture = None;
        let mut compared = false;
        for r in ranks.iter().filter(|r| r.tp_rank == 0) {
            if s.engine.kv_cache_memory_bytes.is_some() {
                break;
            }
            if let Some(line) = graph_estimate_log(s, r, &mut capture) {
                if super::NOTES {
                    log_lines.push(line);
                }
                // vLLM's format_gib of the estimate: str(round(x, 2)).
                let est = GibText(capture.as_ref().map_or(0, |(g, _)| *g));
                let mut line = worker_prefix(s, r);
                use std::fmt::Write as _;
                let _ = write!(
                    line,
                    " CUDA graph pool memory: A GiB (actual), {est} GiB (estimated), difference: D GiB (P%)."
                );
                if super::NOTES {
                    log_lines.push(line);
                }
                compared = true;
            }
        }
        if compared && super::NOTES {
            notes.push("After the pool is allocated vLLM captures the CUDA graphs again and compares the pool with its profiling estimate (\"CUDA graph pool memory: A GiB (actual), ...\"): A, D and P stand for the measured pool, the difference and its percentage, which need a GPU; the second \"Graph capturing finished\" repeats Headroom's estimate.".into());
        }
        let mut last = None;
        for r in ranks.iter().filter(|r| r.tp_rank == 0) {
            if let Some(line) = suggestion_log(s, r, util, &mut last) {
                if super::NOTES {
                    log_lines.push(line);
                }
                suggested = true;
            }
        }
        // The suggestion's "peak activation" is not the ledger's activation line: say why,
        // with the first rank's figures.
        if let Some(r) = ranks.first().filter(|_| suggested) {
            let v = super::vllm_log::vllm_suggestion(r, s.engine.enforce_eager);
            let activation = v.peak - v.graphs;
            if v.graphs > 0 && super::NOTES {
                notes.push(format!(
                    "vLLM's --kv-cache-memory suggestion prints {} GiB \"for peak activation\" where the ledger's activation line is {} GiB: vLLM adds its CUDA-graph estimate ({} GiB) to the profile peak (gpu_worker.py: peak_activation_memory = transient_peak_headroom + cudagraph_memory_estimate_applied), then subtracts the graphs once more as \"CUDAGraph memory\", so its two suggested pins sit {} GiB below what the budget leaves.",
                    GibText(v.peak),
                    GibText(activation),
                    GibText(v.graphs),
                    GibText(v.graphs),
                ));
            }
        }
    }
    if let Some(g) = &unified {
        checks.insert(
            0,
            Check {
                phase: Phase::UnifiedGate,
                // The gate refuses before the launch; the guard kills during it. Either stops
                // the start.
                ok: g.ok && g.guard_ok,
                rank: None,
                message: format!(
                    "needs {} (weights + drafter + KV + overhead + headroom) against {} MemAvailable; once started {} would remain, {} the memory guard's {} threshold",
                    amount(i128::from(g.needs.0)),
                    amount(i128::from(g.mem_available.0)),
                    amount(g.after_start),
                    if g.guard_ok { "above" } else { "below" },
                    amount(i128::from(g.guard_threshold.0))
                ).into(),
                vllm_error: None,
                knobs: vec!["kv-cache-memory-bytes", "speculative-config", "max-num-batched-tokens", "max-num-seqs"],
                not_knobs: vec!["gpu-memory-utilization"],
            },
        );
    }
    // The suggestion's figures come from every term of the budget.
    let shown: &[Term] = if suggested {
        &[
            Term::Weights,
            Term::Drafter,
            Term::AvailableKv,
            Term::FreeAtStart,
            Term::OtherConsumption,
            Term::Activation,
            Term::CudaGraphs,
        ]
    } else {
        &[Term::Weights, Term::Drafter, Term::AvailableKv]
    };
    let mut printed: Vec<&Provenance> = ranks
        .iter()
        .flat_map(|r| shown.iter().map(|t| r.line(*t)))
        .flatten()
        .map(|l| &l.provenance)
        .collect();
    if let Some(r) = &replica {
        printed.push(&r.provenance);
    }
    let log_provenance = Provenance::combine(&printed);
    let stopped_at = stopped_at(&checks, profile_failed);
    Plan {
        log_provenance,
        version: s.version,
        tp: s.parallel.tp,
        pp: s.parallel.pp,
        dp: s.parallel.dp,
        pp_partition: parts,
        gpu_memory_utilization: util,
        ranks,
        replica,
        checks,
        demand,
        unified,
        log_lines,
        notes: notes.into_iter().map(Message::new).collect(),
        settings,
        stopped_at,
        weights_check: None,
        architecture_note: None,
        scenario: String::new(),
        capacity_fraction: None,
    }
}

/// The phase of vLLM's start that fails: the first failing check's, but for the unified gate
/// (the operator's, before vLLM launches) and the pinned pool's profile pass, filed under KV
/// sizing.
fn stopped_at(checks: &[Check], profile_failed: bool) -> Option<StartPhase> {
    checks.iter().filter(|c| !c.ok).find_map(|c| match c.phase {
        Phase::UnifiedGate => None,
        Phase::KvSizing if profile_failed => Some(StartPhase::Profile),
        Phase::Init => Some(StartPhase::InitCheck),
        Phase::Load => Some(StartPhase::LoadWeights),
        Phase::KvSizing => Some(StartPhase::KvSizing),
        Phase::Capacity => Some(StartPhase::Capacity),
        Phase::Allocation => Some(StartPhase::Allocation),
    })
}
