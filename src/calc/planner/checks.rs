//! The phase checks' builders and the knobs that act in each phase, and the last phase's check:
//! the pool and the CUDA graphs allocated for real against physical free memory.

use super::ledger::{amount, gib_text, measured_overhead};
use crate::calc::model::LayerKind;
use crate::calc::plan::*;
use crate::calc::scenario::Scenario;

pub(super) fn kv_sizing_ok() -> Check {
    Check {
        phase: Phase::KvSizing,
        ok: true,
        rank: None,
        message: "every rank has memory left for KV cache blocks".into(),
        vllm_error: None,
        knobs: kv_knobs(Phase::KvSizing),
        not_knobs: vec!["max-model-len"],
    }
}

/// The capacity check's knobs: with sliding-window or chunked layers (DeepSeek-V4's included)
/// a request also holds the tokens in flight, `max_concurrent_batches x max-num-batched-tokens`.
pub(super) fn capacity_knobs(s: &Scenario) -> Vec<&'static str> {
    let mut knobs = kv_knobs(Phase::Capacity);
    // --disable-hybrid-kv-cache-manager makes those layers full attention (not V4's caches).
    let windows = !s.engine.disable_hybrid_kv_cache_manager
        && s.model
            .layers
            .iter()
            .any(|l| matches!(l, LayerKind::Sliding { .. } | LayerKind::Chunked { .. }));
    if s.model.compressed.is_some() || windows {
        knobs.push("max-num-batched-tokens (sliding-window layers keep the tokens in flight)");
        knobs.push("no-async-scheduling (one batch fewer in flight)");
    }
    knobs
}

pub(super) fn kv_knobs(phase: Phase) -> Vec<&'static str> {
    match phase {
        Phase::Capacity => vec![
            "max-model-len",
            "gpu-memory-utilization",
            "kv-cache-memory-bytes",
            "kv-cache-dtype",
            "tensor-parallel-size (not for MLA or DeepSeek-V4: their caches are not split)",
            "pipeline-parallel-size",
        ],
        Phase::KvSizing => vec![
            "gpu-memory-utilization",
            "kv-cache-memory-bytes",
            "max-num-batched-tokens (activation)",
            "enforce-eager (graphs)",
            "tensor-parallel-size",
            "pp-layer-partition (move layers off the deciding stage)",
            "speculative-config (the drafter lives on the last stage)",
            "block-size (one block must fit beside the null block)",
            "num-gpu-blocks-override",
        ],
        Phase::Allocation => vec![
            "kv-cache-memory-bytes (a pin is allocated as given)",
            "gpu-memory-utilization (before v0.20 the graphs lie outside it)",
            "enforce-eager (graphs)",
            "tensor-parallel-size",
            "pipeline-parallel-size",
        ],
        Phase::UnifiedGate | Phase::Init | Phase::Load => vec![],
    }
}

/// The last phase: the pool and then the CUDA graphs are allocated for real, so physical free
/// memory, not the budget, decides. Checked on the rank with the least left once started.
pub(super) fn allocation_check(
    s: &Scenario,
    ranks: &[RankPlan],
    log_lines: &mut Vec<String>,
) -> Option<Check> {
    let warm_up = warm_up_after_pool(s);
    let act_of = |r: &RankPlan| r.free_after_start - r.allocation_headroom(warm_up);
    let worst = ranks
        .iter()
        .min_by_key(|r| r.allocation_headroom(warm_up))?;
    let get = |t: Term| worst.line(t).map_or(0, |l| l.bytes);
    let act = act_of(worst);
    let free = worst.free_after_start - act;
    let (ok, message) = if free >= 0 {
        (
            true,
            // A passed check's sentence: text only the full page shows.
            super::page_text(|| {
                format!(
                "rank {}: {} stays free once the pool and graphs are allocated (the least of any rank){}",
                worst.rank,
                amount(free + act),
                if act > 0 {
                    format!(
                        ", {} beyond the activation peak the warm-up needs again",
                        amount(free)
                    )
                } else {
                    String::new()
                }
            )
            }),
        )
    } else if free + act + get(Term::CudaGraphs) < 0 {
        if super::NOTES {
            log_lines.push(format!(
                "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate {}.",
                gib_text(i128::from(worst.kv_pool.0))
            ));
        }
        (
            false,
            format!(
                "rank {}: the KV pool of {} does not fit in what loading left free; {} more would be needed",
                worst.rank,
                amount(i128::from(worst.kv_pool.0)),
                amount(-(free + act + get(Term::CudaGraphs)))
            ),
        )
    } else if free + get(Term::CudaGraphs) < 0 {
        if super::NOTES {
            log_lines.push("torch.OutOfMemoryError: CUDA out of memory.".to_string());
        }
        (
            false,
            format!(
                "rank {}: the pool fits, but the warm-up after it (a batch of max-num-batched-tokens, FlashInfer's autotune) needs the activation peak ({}) again and runs out of memory; {} more would be needed",
                worst.rank,
                amount(act),
                amount(-(free + get(Term::CudaGraphs)))
            ),
        )
    } else {
        if super::NOTES {
            log_lines.push("torch.OutOfMemoryError: CUDA out of memory.".to_string());
        }
        (
            false,
            format!(
                "rank {}: the pool fits{}, but capturing CUDA graphs ({}) then runs out of memory; {} more would be needed",
                worst.rank,
                if act > 0 {
                    format!(
                        " and so does the warm-up's activation peak ({}), which the allocator keeps",
                        amount(act)
                    )
                } else {
                    String::new()
                },
                amount(get(Term::CudaGraphs)),
                amount(-free)
            ),
        )
    };
    Some(Check {
        phase: Phase::Allocation,
        ok,
        rank: Some(worst.rank),
        message: message.into(),
        vllm_error: super::page_text(|| {
            (!ok).then(|| "torch.OutOfMemoryError: CUDA out of memory.".to_string())
        }),
        knobs: {
            let mut k = kv_knobs(Phase::Allocation);
            if act > 0 {
                k.push("max-num-batched-tokens (the warm-up's batch)");
            }
            k
        },
        not_knobs: vec![
            "max-model-len (it does not size the pool)",
            "max-num-seqs (demand, not a reservation)",
        ],
    })
}

/// Between the pool and the graphs, vLLM warms up (gpu_worker.compile_or_warm_up_model): on SM
/// 9.0 and later FlashInfer's autotune runs a batch of max-num-batched-tokens
/// (kernel_warmup.py), so the activation peak comes back on top of the pool, and the allocator
/// keeps it while the graphs are captured. Within the budget that room is always there (the
/// pool leaves the peak's share of it); a pinned pool or a block-count override can take it.
/// Read from 0.33.0, applied from 0.20; not on ROCm (no FlashInfer), nor where a measured
/// overhead stands for the activations.
pub(super) fn warm_up_after_pool(s: &Scenario) -> bool {
    s.version.at_least(0, 20)
        && s.gpu.compute_capability.0 >= 9
        && !s.gpu.is_rocm()
        && measured_overhead(s).is_none()
}
