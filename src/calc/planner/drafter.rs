//! The speculative drafter's share of the load: a separate draft model's weights on a rank.

use crate::calc::model::Model;
use crate::calc::scenario::Scenario;
use crate::calc::weights::{self, Placement};

/// A draft model's weights on one rank: all of its layers, embedding and head, split by the
/// target's TP (vLLM requires the draft's TP to equal it), scaled to its checkpoint when the
/// catalog has one.
pub(super) fn draft_rank_weights(s: &Scenario, d: &Model, tp: u64, tp_rank: u64) -> u64 {
    let place = Placement {
        tp,
        tp_rank,
        dp: 1,
        pp: 1,
        layers: (0, d.n_layers),
        first_stage: true,
        last_stage: true,
        // create_draft_parallel_config keeps EP only for a MoE draft.
        expert_parallel: s.parallel.expert_parallel && d.moe.is_some(),
        drafter_layers: 0,
    };
    let w = weights::rank_weights(d, &place).target();
    let est = weights::checkpoint_estimate(d);
    match d.checkpoint_bytes {
        Some(c) if est > 0 => (w as f64 * c as f64 / est as f64).round() as u64,
        _ => w,
    }
}
