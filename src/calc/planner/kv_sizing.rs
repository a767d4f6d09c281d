//! KV sizing and the capacity check (`get_kv_cache_configs`, `_check_enough_kv_cache_memory`):
//! the KV layout of every worker, `num_blocks` (the minimum over ranks), the longest request
//! that fits, and the lines the engine core writes about the pool.

use super::checks::{capacity_knobs, kv_knobs, kv_sizing_ok};
use super::finish::finish;
use super::ledger::{amount, demand, fill_ranks};
use super::vllm_log::engine_prefix;
use super::Planning;
use crate::calc::kv::{self, KvError, KvPlan, KvSettings, WorkerKv};
use crate::calc::plan::*;
use crate::calc::units::{plural, py_fixed, GibText, Grouped};
use crate::calc::{CalcError, Input, Scenario};

/// Phases 3 and 4 on the block path: the KV plan of every worker, then the checks and lines of
/// its outcome.
pub(super) fn size_kv(
    p: Planning,
    workers: Vec<WorkerKv>,
    tp_ranks_identical: bool,
) -> Result<Plan, CalcError> {
    let s = p.s;
    let m = &s.model;
    let tp = s.parallel.tp;
    let v = s.version;
    let r = &p.r;
    let (block_size, max_len, in_flight, extra_retained_tokens) = (
        r.block_size,
        r.max_len,
        r.in_flight,
        r.extra_retained_tokens,
    );
    let settings = KvSettings {
        block_size,
        max_model_len: max_len,
        max_in_flight_tokens: in_flight,
        extra_retained_tokens,
        num_gpu_blocks_override: s.engine.num_gpu_blocks_override,
        disable_hybrid: s.engine.disable_hybrid_kv_cache_manager,
        version: v,
        // DeepSeek-V4's indexer backend declares a block-outermost layout, and its caches'
        // pages differ: vLLM packs them (`_get_packed_kv_cache_groups`).
        packed: m.compressed.is_some(),
    };
    // With identical TP ranks, `workers` holds one worker per stage: spread the per-worker
    // figures and indices back over the stage's TP ranks.
    let per_stage = if tp_ranks_identical { tp as usize } else { 1 };
    let kv_result = kv::plan_kv(&workers, &settings)
        .map(|mut kvp| {
            if per_stage > 1 {
                kvp.workers = kvp
                    .workers
                    .into_iter()
                    .flat_map(|w| std::iter::repeat(w).take(per_stage))
                    .collect();
                kvp.limiting_worker *= per_stage;
            }
            kvp
        })
        .map_err(|e| match e {
            KvError::NoMemory {
                worker,
                bytes_per_block,
            } => KvError::NoMemory {
                worker: worker * per_stage,
                bytes_per_block,
            },
            KvError::AutoFit {
                worker,
                bytes_per_block,
            } => KvError::AutoFit {
                worker: worker * per_stage,
                bytes_per_block,
            },
            KvError::Capacity {
                worker,
                max_model_len,
                needed,
                check_memory,
                estimate,
            } => KvError::Capacity {
                worker: worker * per_stage,
                max_model_len,
                needed,
                check_memory,
                estimate,
            },
            KvError::Invalid(m) => KvError::Invalid(m),
        });
    match kv_result {
        Err(e) => kv_failed(p, e, &workers, &settings, per_stage),
        Ok(kvp) => {
            pool_in_range(s, &kvp)?;
            Ok(kv_fits(p, kvp))
        }
    }
}

/// A block-count override times a rank's block is the pool vLLM allocates: past 2^64 bytes
/// no figure can hold it (and no device could), so the override is refused, naming it,
/// instead of a pool saturated at u64::MAX that the ledger's sums then contradict.
fn pool_in_range(s: &Scenario, kvp: &KvPlan) -> Result<(), CalcError> {
    let Some(n) = s.engine.num_gpu_blocks_override else {
        return Ok(());
    };
    let Some(bpb) = kvp.workers.iter().map(|w| w.bytes_per_block).max() else {
        return Ok(());
    };
    if u64::try_from(u128::from(n) * u128::from(bpb)).is_ok() {
        return Ok(());
    }
    Err(CalcError::new(
        Input::NumGpuBlocksOverride,
        format!(
            "num-gpu-blocks-override {} blocks of {} B each (block-size x every layer's page) make a pool beyond 2^64 bytes (16 EiB); at most {} blocks of this size can be counted",
            Grouped(i128::from(n)),
            Grouped(i128::from(bpb)),
            Grouped(i128::from(u64::MAX / bpb))
        ),
    ))
}

/// KV sizing or the capacity check failed: on which rank, why, and vLLM's error.
fn kv_failed(
    mut p: Planning,
    e: KvError,
    workers: &[WorkerKv],
    settings: &KvSettings,
    per_stage: usize,
) -> Result<Plan, CalcError> {
    // vLLM lays out every worker's cache before it checks any: a failed check still has each
    // rank's bytes per token, page, block and own block count (the messages quote them).
    let layouts = kv::layouts(workers, settings);
    for (i, r) in p.ranks.iter_mut().enumerate() {
        if let Some(w) = layouts.get(i / per_stage) {
            r.kv_bytes_per_token = w.bytes_per_token;
            r.page_size = w.page_size;
            r.bytes_per_block = w.bytes_per_block;
            r.num_blocks_own = w.num_blocks_own;
        }
    }
    let Planning {
        s,
        ref ranks,
        ref mut checks,
        ref mut log_lines,
        ..
    } = p;
    let v = s.version;
    let (phase, rank) = match &e {
        KvError::NoMemory { worker, .. } => (Phase::KvSizing, *worker as u32),
        // The auto-fit runs before _check_enough_kv_cache_memory and raises first. With
        // nothing left after the null block, that check would have failed KV sizing
        // ("No available memory"); so does this, whatever the length setting.
        KvError::AutoFit {
            worker,
            bytes_per_block,
        } if ranks[*worker].available_kv <= i128::from(*bytes_per_block) => {
            (Phase::KvSizing, *worker as u32)
        }
        // Some memory is left, but less than one token's block: the capacity check.
        KvError::Capacity { worker, .. } | KvError::AutoFit { worker, .. } => {
            (Phase::Capacity, *worker as u32)
        }
        KvError::Invalid(msg) => return Err(CalcError::new(Input::Model, msg.clone())),
    };
    let message = match &e {
        KvError::Capacity { max_model_len, needed, check_memory, estimate, .. } => format!(
            "rank {rank}: one {}-token request needs {} of KV, the pool has {} (after the null block); the longest that fits is {} tokens",
            Grouped(i128::from(*max_model_len)),
            amount(i128::from(*needed)),
            amount(*check_memory),
            Grouped(i128::from(*estimate))
        ),
        // Memory is there, but the null block takes all of it: an override of one
        // block, or one block larger than the memory.
        KvError::NoMemory { bytes_per_block, .. }
            if ranks[rank as usize].available_kv > 0 =>
        {
            match s.engine.num_gpu_blocks_override {
                Some(n) => format!(
                    "rank {rank}: num-gpu-blocks-override {n} leaves no block for requests once the null block is taken"
                ),
                None => format!(
                    "rank {rank}: one block ({} B: block-size x every layer's page) takes all of the {} available, leaving nothing after the null block",
                    Grouped(i128::from(*bytes_per_block)),
                    amount(ranks[rank as usize].available_kv)
                ),
            }
        }
        KvError::AutoFit {
            bytes_per_block, ..
        } => {
            let avail = ranks[rank as usize].available_kv;
            let left = avail - i128::from(*bytes_per_block);
            if left > 0 {
                format!(
                    "rank {rank}: max-model-len auto finds no length that fits: {} is left after the null block, less than the one block ({} B) a single token takes",
                    amount(left),
                    Grouped(i128::from(*bytes_per_block))
                )
            } else if avail > 0 {
                format!(
                    "rank {rank}: max-model-len auto finds no length that fits: one block ({} B) takes all of the {} available, leaving nothing after the null block",
                    Grouped(i128::from(*bytes_per_block)),
                    amount(avail)
                )
            } else {
                format!(
                    "rank {rank}: max-model-len auto finds no length that fits: nothing is left for the KV cache ({} available)",
                    amount(avail)
                )
            }
        }
        _ => format!(
            "rank {rank}: nothing is left for the KV cache ({} available)",
            amount(ranks[rank as usize].available_kv)
        ),
    };
    if phase == Phase::Capacity {
        // vLLM checks each rank's memory, then its capacity, in rank order: past the
        // failing rank nothing was checked, so "every rank" would overclaim when a
        // later rank has none.
        let mut ok = kv_sizing_ok();
        if ranks.iter().any(|r| r.rank > rank && r.available_kv <= 0) {
            ok.message = format!(
                "{} memory left for KV cache blocks (vLLM stops at rank {rank}'s capacity check; a later rank has none)",
                if rank == 0 {
                    "rank 0 has".to_string()
                } else {
                    format!("ranks 0 to {rank} have")
                }
            )
            .into();
        }
        checks.push(ok);
    }
    checks.push(Check {
        phase,
        ok: false,
        rank: Some(rank),
        message: message.into(),
        vllm_error: super::page_text(|| Some(e.vllm_message(v))),
        knobs: if phase == Phase::Capacity {
            capacity_knobs(s)
        } else {
            kv_knobs(phase)
        },
        not_knobs: vec!["max-num-seqs (demand, not a reservation)"],
    });
    // get_kv_cache_configs logs the override on every worker before it checks any.
    if let Some(n) = s.engine.num_gpu_blocks_override {
        // From 0.14 the override is applied to every worker before any check; 0.11.0 to 0.13.0
        // check every worker first (get_kv_cache_configs), and 0.10.2 checks and sizes one
        // worker after another (get_kv_cache_config), so only those before the failing one log.
        let logged = if v.at_least(0, 14) {
            ranks.len()
        } else if v.at_least(0, 11) {
            0
        } else {
            rank as usize
        };
        for (i, r) in ranks.iter().enumerate().take(logged) {
            let b = layouts.get(i / per_stage).map_or(0, |w| w.bytes_per_block);
            if b > 0 && super::NOTES {
                log_lines.push(format!(
                    "{} Overriding num_gpu_blocks={} with num_gpu_blocks_override={n}",
                    engine_prefix(s),
                    r.available_kv.div_euclid(i128::from(b))
                ));
            }
        }
    }
    if super::NOTES {
        log_lines.push(format!("ValueError: {}", e.vllm_message(v)));
    }
    let fraction = match e {
        KvError::Capacity {
            needed,
            check_memory,
            ..
        } if needed > 0 => Some(check_memory.max(0) as f64 / needed as f64),
        _ => None,
    };
    let mut plan = finish(p, None, None);
    plan.capacity_fraction = fraction;
    Ok(plan)
}

/// The pool fits: the checks passed, the engine core's lines, and every rank's KV figures.
fn kv_fits(mut p: Planning, kvp: KvPlan) -> Plan {
    let Planning {
        s,
        ref r,
        ref mut ranks,
        ref mut checks,
        ref mut log_lines,
        ref mut notes,
        ..
    } = p;
    let v = s.version;
    let (block_size, mns, mnbt) = (r.block_size, r.mns, r.mnbt);
    checks.push(kv_sizing_ok());
    checks.push(Check {
        phase: Phase::Capacity,
        ok: true,
        rank: Some(kvp.limiting_worker as u32),
        // A passed check's sentence: text only the full page shows.
        message: super::page_text(|| {
            format!(
                "one {}-token request needs {} {}; the pool has {} blocks (limiting rank {})",
                Grouped(i128::from(kvp.max_model_len)),
                Grouped(i128::from(kvp.blocks_per_request)),
                plural(kvp.blocks_per_request, "block", "blocks"),
                Grouped(i128::from(kvp.num_blocks)),
                kvp.limiting_worker
            )
            .into()
        }),
        vllm_error: None,
        knobs: capacity_knobs(s),
        not_knobs: vec!["max-num-seqs (demand, not a reservation)"],
    });
    // get_kv_cache_configs logs the override once per worker, every TP rank included.
    let overrides: Vec<Option<String>> = kvp
        .workers
        .iter()
        .zip(ranks.iter())
        .map(|(w, r)| {
            let n = s.engine.num_gpu_blocks_override.filter(|_| super::NOTES)?;
            // Python's floor division: a rank without memory prints a negative count.
            if w.bytes_per_block == 0 {
                return None;
            }
            let own = r.available_kv.div_euclid(i128::from(w.bytes_per_block));
            Some(format!(
                "{} Overriding num_gpu_blocks={own} with num_gpu_blocks_override={n}",
                engine_prefix(s)
            ))
        })
        .collect();
    if v.shrinks_kv_tensors() {
        log_lines.extend(overrides.iter().flatten().cloned());
    }
    if let Some((from, to)) = kvp.auto_fit {
        let lim = &kvp.workers[kvp.auto_fit_worker];
        if to >= from {
            if super::NOTES {
                log_lines.push(format!("{} Auto-fit max_model_len: full model context length {from} fits in available KV cache memory ({} GiB GPU)", engine_prefix(s), GibText(lim.check_memory)));
            }
        } else {
            if super::NOTES {
                log_lines.push(format!("{} Auto-fit max_model_len: reduced from {from} to {to} to fit in available KV cache memory ({} GiB GPU)", engine_prefix(s), GibText(lim.check_memory)));
            }
        }
    }
    if kvp.padding_layers > 0 && super::NOTES {
        notes.push(format!("vLLM pads short KV groups with {} logical layer(s) (it warns: \"Add {} padding layers, may waste at most ...\").", kvp.padding_layers, kvp.padding_layers));
    }
    let conc = if super::NOTES {
        py_fixed(kvp.max_concurrency, 2)
    } else {
        String::new()
    };
    if !v.shrinks_kv_tensors() {
        // 0.10.2 and 0.11.0 log each worker's own figures before the minimum, plain info
        // (get_kv_cache_config / get_kv_cache_config_from_groups), after its override line.
        for (w, line) in kvp.workers.iter().zip(overrides) {
            log_lines.extend(line);
            let own = s.engine.num_gpu_blocks_override.unwrap_or(w.num_blocks_own);
            if super::NOTES {
                log_lines.push(format!(
                    "{} GPU KV cache size: {} tokens",
                    engine_prefix(s),
                    Grouped(i128::from(own * block_size))
                ));
            }
            let own_conc = own as f64 / kvp.blocks_per_request.max(1) as f64;
            if super::NOTES {
                log_lines.push(format!(
                    "{} Maximum concurrency for {} tokens per request: {}x",
                    engine_prefix(s),
                    Grouped(i128::from(kvp.max_model_len)),
                    py_fixed(own_conc, 2)
                ));
            }
        }
    } else if !v.at_least(0, 12) {
        // 0.11.2's _report_kv_cache_config: the tokens info_once, the concurrency plain info
        // for every worker's config (all alike after the minimum).
        if super::NOTES {
            log_lines.push(format!(
                "{} GPU KV cache size: {} tokens",
                engine_prefix(s),
                Grouped(i128::from(kvp.kv_cache_tokens))
            ));
        }
        for _ in &kvp.workers {
            if super::NOTES {
                log_lines.push(format!(
                    "{} Maximum concurrency for {} tokens per request: {conc}x",
                    engine_prefix(s),
                    Grouped(i128::from(kvp.max_model_len))
                ));
            }
        }
    } else if v.at_least(0, 28) {
        if super::NOTES {
            log_lines.push(format!(
            "{} GPU KV cache size: {} tokens, Maximum concurrency for {} tokens per request: {conc}x",
            engine_prefix(s),
            Grouped(i128::from(kvp.kv_cache_tokens)),
            Grouped(i128::from(kvp.max_model_len))
        ));
        }
    } else {
        if super::NOTES {
            log_lines.push(format!(
                "{} GPU KV cache size: {} tokens",
                engine_prefix(s),
                Grouped(i128::from(kvp.kv_cache_tokens))
            ));
        }
        if super::NOTES {
            log_lines.push(format!(
                "{} Maximum concurrency for {} tokens per request: {conc}x",
                engine_prefix(s),
                Grouped(i128::from(kvp.max_model_len))
            ));
        }
    }
    let graphs_outside = !s.version.graphs_inside_budget();
    let replica = fill_ranks(s, ranks, &kvp, block_size, graphs_outside);
    let demand = Some(demand(s, ranks, &replica, mns, mnbt));
    finish(p, Some(replica), demand)
}
