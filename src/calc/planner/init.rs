//! The init check (`Worker.init_device`, `request_memory`): the free memory at the snapshot
//! against `ceil(total x utilization)`, on every rank, also with `--kv-cache-memory-bytes`;
//! with the lines the API server writes before the workers start.

use super::ledger::amount;
use super::stages::{RankAt, Shared};
use super::Planning;
use crate::calc::plan::*;
use crate::calc::runtime;
use crate::calc::scenario::Scenario;
use crate::calc::units::{gib_round_f64, GibText};
use crate::calc::version::VllmVersion;

/// The init check on one rank: the first rank whose free memory is below the budget is kept,
/// with vLLM's error.
pub(super) fn init_fail(
    s: &Scenario,
    util: f64,
    sh: &Shared,
    at: RankAt,
    init_fail: &mut Option<(u32, String, String)>,
) {
    let RankAt { tp_rank, rank, .. } = at;
    let (free0, requested) = (sh.free0, sh.requested);
    let total = s.gpu.total.0;
    if free0 < requested && init_fail.is_none() {
        // vLLM's own error: text only the full page shows.
        let msg = super::page_text(|| {
            if s.version.requested_is_ceil() {
                format!(
                "Free memory on device cuda:{tp_rank} ({}/{} GiB) on startup is less than desired GPU memory utilization ({}, {} GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.",
                GibText(i128::from(free0)),
                GibText(i128::from(total)),
                crate::calc::units::py_float_str(util),
                GibText(i128::from(requested))
            )
            } else {
                // 0.10.2 to 0.13.0 (Worker.init_device): no device name, every figure
                // round(x / GiB, 2), the requested one of the float total x utilization.
                format!(
                "Free memory on device ({}/{} GiB) on startup is less than desired GPU memory utilization ({}, {} GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.",
                GibText(i128::from(free0)),
                GibText(i128::from(total)),
                crate::calc::units::py_float_str(util),
                gib_round_f64(sh.requested_f)
            )
            }
        });
        let what = budget_words(s.version, util);
        *init_fail = Some((
            rank,
            format!(
                "rank {rank}: {} free at start is less than the budget {what} = {}",
                amount(i128::from(free0)),
                amount(i128::from(requested))
            ),
            msg,
        ));
    }
}

/// The budget as the init check words it: `ceil(total x 0.9)` where the release rounds it up
/// (`requested_is_ceil`), else `total x 0.9`.
fn budget_words(v: VllmVersion, util: f64) -> String {
    if v.requested_is_ceil() {
        format!("ceil(total x {util})")
    } else {
        format!("total x {util}")
    }
}

/// Phase 1: the init check's verdict and the API server's lines before it. Returns whether the
/// start stops here.
pub(super) fn init_phase(
    p: &mut Planning,
    init_fail: &Option<(u32, String, String)>,
    requested: u64,
) -> bool {
    let Planning {
        s,
        ref r,
        ref mut checks,
        ref mut log_lines,
        ..
    } = *p;
    let (m, v, util) = (&s.model, s.version, r.util);
    let init_ok = init_fail.is_none();
    checks.push(Check {
        phase: Phase::Init,
        ok: init_ok,
        rank: init_fail.as_ref().map(|f| f.0),
        message: match &init_fail {
            Some((_, m, _)) => m.clone().into(),
            // A passed check's sentence: text only the full page shows.
            None => super::page_text(|| {
                format!(
                    "free memory at start covers the budget {} = {} on every rank",
                    budget_words(v, util),
                    amount(i128::from(requested))
                )
                .into()
            }),
        },
        vllm_error: super::page_text(|| init_fail.as_ref().map(|f| f.2.clone())),
        knobs: vec!["gpu-memory-utilization", "other processes on the GPU"],
        not_knobs: vec!["max-model-len", "max-num-seqs", "kv-cache-memory-bytes"],
    });
    // Hybrid models: the config hook turns the Mamba cache to "align" mode, as prefix caching
    // is on by default (MambaModelConfig.verify_and_update_config, in the API server).
    if m.linear.is_some() && v == VllmVersion::CURRENT && !m.architecture.is_empty() && super::NOTES
    {
        log_lines.push(format!(
            "(APIServer pid=P) Mamba cache mode is set to 'align' for {} by default when prefix caching is enabled",
            m.architecture
        ));
    }
    // 0.26 to 0.32 turn async scheduling off for these drafters (VllmConfig.__post_init__).
    if !s.engine.no_async_scheduling && !runtime::async_scheduling(s) {
        if let Some(sp) = &s.engine.speculative {
            if super::NOTES {
                log_lines.push(format!("(APIServer pid=P) Async scheduling not supported with {}-based speculative decoding and will be disabled.", sp.method));
            }
        }
    }
    if let Some((_, _, msg)) = &init_fail {
        if super::NOTES {
            log_lines.push(format!("ValueError: {msg}"));
        }
        return true;
    }
    false
}
