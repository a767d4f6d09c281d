//! KV sizing and the capacity check for a model whose KV layout the formulas cannot describe:
//! the pool is converted to tokens with a measured pool/tokens ratio.

use super::checks::{kv_knobs, kv_sizing_ok};
use super::finish::finish;
use super::ledger::{amount, line, line_prov, push_after_start};
use super::vllm_log::engine_prefix;
use super::Planning;
use crate::calc::kv::KvError;
use crate::calc::plan::*;
use crate::calc::scenario::MaxLen;
use crate::calc::units::{py_fixed, Bytes, GibText, Grouped};

/// Models whose KV layout the formulas cannot describe: a measured pool/tokens ratio.
pub(super) fn measured_kv_plan(mut p: Planning) -> Plan {
    let s = p.s;
    let (max_len, mns, mnbt, block_size) =
        (p.r.len_for_defaults, p.r.mns, p.r.mnbt, p.r.block_size);
    let notes = &mut p.notes;
    let mk = s.model.measured_kv.clone().expect("checked by caller");
    let n = u128::from(s.model.n_layers.max(1));
    let prov = Provenance::Measured(
        (format!(
            "{} B backed {} tokens ({}); bytes per token scale with a stage's layers",
            Grouped(i128::from(mk.pool_bytes)),
            Grouped(i128::from(mk.tokens)),
            mk.source
        ))
        .into(),
    );
    if super::NOTES {
        notes.push(if s.model.compressed.is_some() {
        "The pool is converted to tokens with the measured ratio this scenario carries, not with vLLM's block arithmetic, which Headroom applies to this layout without it (the token figures in vLLM's log lines follow the ratio too).".into()
    } else {
        "This model's KV layout is not described by vLLM's standard specs here; its pool is converted to tokens with a measured ratio, not vLLM's block arithmetic (so are the token figures in vLLM's log lines).".into()
    });
    }
    // tokens(rank) = available x tokens_ref / pool_ref x (all layers / this stage's layers)
    let tokens_of = |r: &RankPlan| -> u128 {
        let stage_layers = u128::from(r.layers.1 - r.layers.0).max(1);
        let a = r.available_kv.max(0) as u128;
        a * u128::from(mk.tokens) * n / (u128::from(mk.pool_bytes.max(1)) * stage_layers)
    };
    let (lim_idx, tokens) = p
        .ranks
        .iter()
        .enumerate()
        .map(|(i, r)| (i, tokens_of(r)))
        .min_by_key(|(_, t)| *t)
        .unwrap_or((0, 0));
    let tokens = u64::try_from(tokens).unwrap_or(u64::MAX);
    if starved(&mut p, tokens, lim_idx) {
        return finish(p, None, None);
    }
    let Planning {
        ref mut ranks,
        ref mut checks,
        ref mut log_lines,
        ..
    } = p;
    let auto = matches!(s.engine.max_model_len, MaxLen::Auto);
    // --max-model-len auto: the longest length the smallest pool holds, capped at the model's.
    let max_len = if auto {
        let fit = tokens.min(max_len);
        // vLLM quotes the first worker's memory unless another's length is strictly shorter.
        let lim = &ranks[if fit < max_len { lim_idx } else { 0 }];
        if fit < max_len {
            if super::NOTES {
                log_lines.push(format!(
                "{} Auto-fit max_model_len: reduced from {max_len} to {fit} to fit in available KV cache memory ({} GiB GPU)",
                engine_prefix(s),
                GibText(lim.available_kv)
            ));
            }
        } else {
            if super::NOTES {
                log_lines.push(format!(
                "{} Auto-fit max_model_len: full model context length {max_len} fits in available KV cache memory ({} GiB GPU)",
                engine_prefix(s),
                GibText(lim.available_kv)
            ));
            }
        }
        fit.max(1)
    } else {
        max_len
    };
    let lim = &ranks[lim_idx];
    let stage_layers = u128::from(lim.layers.1 - lim.layers.0).max(1);
    let needed = u128::from(max_len) * u128::from(mk.pool_bytes) * stage_layers
        / (u128::from(mk.tokens.max(1)) * n);
    let needed = u64::try_from(needed).unwrap_or(u64::MAX);
    let ok = lim.available_kv >= i128::from(needed);
    checks.push(kv_sizing_ok());
    checks.push(Check {
        phase: Phase::Capacity,
        ok,
        rank: Some(lim.rank),
        message: format!(
            "rank {}: one {}-token request needs {} of KV, the pool has {} (measured ratio)",
            lim.rank,
            Grouped(i128::from(max_len)),
            amount(i128::from(needed)),
            amount(lim.available_kv)
        )
        .into(),
        vllm_error: None,
        knobs: kv_knobs(Phase::Capacity),
        not_knobs: vec!["max-num-seqs (demand, not a reservation)"],
    });
    let conc = tokens as f64 / max_len.max(1) as f64;
    // The token figure is the minimum over ranks of each rank's available memory through the
    // measured ratio: every rank's available figure and the ratio are its inputs.
    let mut inputs: Vec<Provenance> = ranks
        .iter()
        .map(|r| line_prov(r, Term::AvailableKv))
        .collect();
    inputs.push(prov.clone());
    // Bytes per request and per token come from the ratio alone.
    let ratio_prov = prov.clone();
    let prov = Provenance::combine(&inputs.iter().collect::<Vec<_>>());
    let graphs_outside = !s.version.graphs_inside_budget();
    let outside_prov = ranks.first().map_or(Provenance::Exact, |r| {
        Provenance::combine(&[&line_prov(r, Term::Total), &line_prov(r, Term::Budget)])
    });
    for r in ranks.iter_mut() {
        let pool = r.available_kv.max(0);
        r.kv_pool = Bytes(pool as u64);
        // Without the model's KV layout the block rounding is unknown: the pool is taken as
        // the available (or pinned) memory, as certain as the measured ratio that stands in
        // for the layout.
        r.ledger.push(line(
            Term::KvPool,
            pool,
            || "about the pinned/available KV memory (block rounding unknown without the KV layout); its tokens come from the measured ratio",
            prov.clone(),
        ));
        push_after_start(s, r, pool, graphs_outside, &outside_prov);
    }
    if ok && super::NOTES {
        log_lines.push(format!(
            "{} GPU KV cache size: {} tokens, Maximum concurrency for {} tokens per request: {}x",
            engine_prefix(s),
            Grouped(i128::from(tokens)),
            Grouped(i128::from(max_len)),
            py_fixed(conc, 2)
        ));
    }
    let replica = ReplicaPlan {
        num_blocks: 0,
        limiting_rank: lim_idx as u32,
        // The scheduler's block size is known even where the layout is not.
        block_size,
        groups: vec![],
        blocks_per_request: 0,
        max_model_len: max_len,
        kv_cache_tokens: tokens,
        max_concurrency: conc,
        full_length_requests: tokens / max_len.max(1),
        provenance: prov,
        data_parallel: s.parallel.dp,
    };
    let per_token = if tokens == 0 {
        0
    } else {
        (ranks[lim_idx].kv_pool.0 as u128 / u128::from(tokens)) as u64
    };
    let demand = Demand {
        max_num_seqs: mns,
        max_num_batched_tokens: mnbt,
        per_request_bytes: needed,
        all_seqs_bytes: u128::from(mns) * u128::from(max_len) * u128::from(per_token),
        all_seqs_bytes_replica: u128::from(mns)
            * u128::from(max_len)
            * u128::from(per_token)
            * ranks.len() as u128,
        kv_bytes_per_token_replica: u128::from(per_token) * ranks.len() as u128,
        pool_bytes: ranks[lim_idx].kv_pool.0,
        average_len: s.average_request_len.unwrap_or(max_len / 4).max(1),
        concurrency_at_average: tokens as f64
            / s.average_request_len.unwrap_or(max_len / 4).max(1) as f64,
        provenance: ratio_prov,
    };
    finish(p, Some(replica), Some(demand))
}

/// The rank that stops the start, its error and why in words: nothing left for the KV cache
/// (KV sizing fails), or, under max-model-len auto, not one token at the measured ratio (the
/// capacity check's auto-fit).
// Never inlined: no link the first verdict is trained on calls it (DESIGN.md, "Rare code").
#[inline(never)]
fn starved_rank(r: &RankPlan, auto_fit: bool) -> (&RankPlan, KvError, String) {
    let (worker, kv) = (r.rank as usize, amount(r.available_kv));
    if auto_fit {
        let why = format!(
            "rank {}: {kv} of KV does not hold one token at the measured ratio",
            r.rank
        );
        (
            r,
            KvError::AutoFit {
                worker,
                bytes_per_block: 0,
            },
            why,
        )
    } else {
        let why = format!(
            "rank {}: nothing is left for the KV cache ({kv} available)",
            r.rank
        );
        (
            r,
            KvError::NoMemory {
                worker,
                bytes_per_block: 0,
            },
            why,
        )
    }
}

/// Nothing left for the cache on some rank (KV sizing fails, as on the block path), or no token
/// that fits under `--max-model-len auto` (the capacity check). Returns whether the start stops.
fn starved(p: &mut Planning, tokens: u64, lim_idx: usize) -> bool {
    let Planning {
        s,
        ref ranks,
        ref mut checks,
        ref mut log_lines,
        ..
    } = *p;
    // Nothing left for the cache on some rank: vLLM stops at KV sizing, as on the block path.
    let auto = matches!(s.engine.max_model_len, MaxLen::Auto);
    let starved = ranks
        .iter()
        .find(|r| r.available_kv <= 0)
        .map(|r| starved_rank(r, false))
        .or_else(|| (auto && tokens == 0).then(|| starved_rank(&ranks[lim_idx], true)));
    if let Some((r, e, why)) = starved {
        // The auto-fit is part of the capacity check; no memory at all fails KV sizing.
        let phase = if matches!(e, KvError::AutoFit { .. }) {
            checks.push(kv_sizing_ok());
            Phase::Capacity
        } else {
            Phase::KvSizing
        };
        checks.push(Check {
            phase,
            ok: false,
            rank: Some(r.rank),
            message: why.into(),
            vllm_error: super::page_text(|| Some(e.vllm_message(s.version))),
            knobs: kv_knobs(phase),
            not_knobs: vec!["max-model-len"],
        });
        if super::NOTES {
            log_lines.push(format!("ValueError: {}", e.vllm_message(s.version)));
        }
        return true;
    }
    false
}
