//! The ledger's lines and their provenance: the helpers every phase writes with, and the lines
//! after the pool (the pool itself, what lies outside the budget, what is free once started).

use crate::calc::formula::{Arg, Formula};
use crate::calc::kv::{self, LayerKv};
use crate::calc::plan::*;
use crate::calc::scenario::{Scenario, StageTerm};
use crate::calc::units::{cdiv, Bytes, Grouped, GIB};

/// The decoder-layer weights' formula of a stage.
/// The decoder layers' line: which layers, and (when the estimate breaks them down) its bytes
/// by component kind after a `; `.
pub(super) fn layers_formula(layers: (u32, u32), tp: u32, breakdown: Option<&str>) -> Formula {
    if layers.1 <= layers.0 {
        return Formula::from("no decoder layers on this stage");
    }
    if let Some(b) = breakdown.filter(|b| !b.is_empty()) {
        return format!(
            "layers {}–{} ({} layers), linears split by TP {tp}; {b}",
            layers.0,
            layers.1 - 1,
            layers.1 - layers.0
        )
        .into();
    }
    // Inclusive, as the page's captions and vLLM's layer indices read: layers 0–31.
    Formula::template(
        "layers {}–{} ({} layers), linears split by TP {}",
        &[
            Arg::Plain(i128::from(layers.0)),
            Arg::Plain(i128::from(layers.1 - 1)),
            Arg::Plain(i128::from(layers.1 - layers.0)),
            Arg::Plain(i128::from(tp)),
        ],
    )
}

/// A ledger line. Its formula is text only the full page shows ([`super::page_text`]): empty in
/// the first verdict's program.
pub(super) fn line<F: Into<Formula>>(
    term: Term,
    bytes: i128,
    formula: impl FnOnce() -> F,
    provenance: Provenance,
) -> LedgerLine {
    LedgerLine {
        term,
        bytes,
        formula: super::page_text(|| formula().into()),
        provenance,
    }
}

/// An amount in a check's message (see [`Message`]): written in the reader's unit.
pub(super) fn amount(b: i128) -> String {
    Message::amount(b)
}

/// An amount as GiB text, for log lines, notes and formulas.
pub(super) fn gib_text(b: i128) -> String {
    format!("{:.2} GiB", b as f64 / GIB as f64)
}

/// Writes the KV figures and the after-start ledger lines into each rank.
pub(super) fn fill_ranks(
    s: &Scenario,
    ranks: &mut [RankPlan],
    kvp: &kv::KvPlan,
    block_size: u64,
    graphs_outside: bool,
) -> ReplicaPlan {
    // num_blocks is the minimum over every rank, so every rank's available figure is an input
    // of every rank's pool.
    let avail_provs: Vec<Provenance> = ranks
        .iter()
        .map(|r| line_prov(r, Term::AvailableKv))
        .collect();
    let pool_prov = Provenance::combine(&avail_provs.iter().collect::<Vec<_>>());
    // Total and budget are the same on every rank, and so is what lies outside the budget.
    let outside_prov = ranks.first().map_or(Provenance::Exact, |r| {
        Provenance::combine(&[&line_prov(r, Term::Total), &line_prov(r, Term::Budget)])
    });
    for i in 0..ranks.len() {
        let w = &kvp.workers[i];
        // A TP rank identical to its neighbour (same stage, same KV outcome, same ledger so
        // far) gets the neighbour's figures: the lines share their text.
        if i > 0 && kvp.workers[i - 1] == *w && ranks[i - 1].pp_rank == ranks[i].pp_rank {
            let n = ranks[i].ledger.len();
            if ranks[i - 1].ledger.len() > n && ranks[i - 1].ledger[..n] == ranks[i].ledger[..] {
                let (before, after) = ranks.split_at_mut(i);
                let prev = &before[i - 1];
                let r = &mut after[0];
                r.ledger.extend_from_slice(&prev.ledger[n..]);
                r.kv_bytes_per_token = prev.kv_bytes_per_token;
                r.page_size = prev.page_size;
                r.bytes_per_block = prev.bytes_per_block;
                r.num_blocks_own = prev.num_blocks_own;
                r.kv_pool = prev.kv_pool;
                r.free_after_start = prev.free_after_start;
                continue;
            }
        }
        let r = &mut ranks[i];
        r.kv_bytes_per_token = w.bytes_per_token;
        r.page_size = w.page_size;
        r.bytes_per_block = w.bytes_per_block;
        r.num_blocks_own = w.num_blocks_own;
        // Before 0.11.2 every worker allocates its own block count (get_kv_cache_configs sets
        // num_blocks to the minimum without shrinking the tensors), and uses the first `min`.
        let (blocks, slack_formula) = if s.version.shrinks_kv_tensors() {
            (
                kvp.num_blocks,
                "available - pool: block rounding and the minimum across ranks",
            )
        } else {
            (
                s.engine
                    .num_gpu_blocks_override
                    .unwrap_or(w.num_blocks_own),
                "available - pool: block rounding (before 0.11.2 each rank allocates its own blocks, not the minimum across ranks)",
            )
        };
        let pool = u128::from(blocks) * u128::from(w.bytes_per_block);
        let pool = u64::try_from(pool).unwrap_or(u64::MAX);
        r.kv_pool = Bytes(pool);
        r.ledger.push(line(
            Term::KvPool,
            i128::from(pool),
            || pool_formula(blocks, w.bytes_per_block, &w.block_pages),
            pool_prov.clone(),
        ));
        let slack = r.available_kv - i128::from(pool);
        // An override asks for a pool of its own size, whatever was available: a negative
        // line is that excess, not rounding.
        let slack_formula = match s.engine.num_gpu_blocks_override {
            Some(_) if slack < 0 => "available - pool: negative, num-gpu-blocks-override asks for more blocks than the available memory holds",
            _ => slack_formula,
        };
        r.ledger.push(line(
            Term::KvRoundingSlack,
            slack,
            || slack_formula,
            Provenance::combine(&[&line_prov(r, Term::AvailableKv), &pool_prov]),
        ));
        push_after_start(s, r, i128::from(pool), graphs_outside, &outside_prov);
    }
    let usable = kvp.num_blocks.saturating_sub(1);
    ReplicaPlan {
        num_blocks: kvp.num_blocks,
        limiting_rank: kvp.limiting_worker as u32,
        block_size,
        groups: kvp.groups.clone(),
        blocks_per_request: kvp.blocks_per_request,
        max_model_len: kvp.max_model_len,
        kv_cache_tokens: kvp.kv_cache_tokens,
        max_concurrency: kvp.max_concurrency,
        full_length_requests: usable.checked_div(kvp.blocks_per_request).unwrap_or(0),
        provenance: pool_prov,
        data_parallel: s.parallel.dp,
    }
}

/// The lines after the pool: what lies outside the budget, and what is free once started.
pub(super) fn push_after_start(
    s: &Scenario,
    r: &mut RankPlan,
    pool: i128,
    graphs_outside: bool,
    outside_prov: &Provenance,
) {
    let get = |t: Term| r.line(t).map_or(0, |l| l.bytes);
    let outside = get(Term::Total) - get(Term::Budget);
    let (held, held_prov, held_what) = held_besides(s, r);
    let mut loaded = get(Term::Weights) + get(Term::Drafter);
    let mut implied_used = false;
    // A measured pool whose weights estimate does not even load (see the load check): the
    // weights are what the measurement leaves of the budget, not the contradicted estimate.
    let stage = r.pp_rank as usize;
    if r.load_headroom < 0
        && s.runtime.for_stage(StageTerm::AvailableKv, stage).is_some()
        && s.runtime.for_stage(StageTerm::Weights, stage).is_none()
    {
        let graphs_inside = if graphs_outside {
            0
        } else {
            get(Term::CudaGraphs)
        };
        let implied = get(Term::Budget)
            - get(Term::AvailableKv)
            - get(Term::OtherConsumption)
            - get(Term::Activation)
            - graphs_inside;
        implied_used = implied.max(0) < loaded;
        loaded = loaded.min(implied.max(0));
    }
    let free_after = get(Term::FreeAtStart) - loaded - held - pool;
    r.ledger.push(line(
        Term::OutsideBudget,
        outside,
        || {
            if graphs_outside {
                Formula::from("total - budget (CUDA graphs land here before v0.20)")
            } else {
                Formula::from("total - budget")
            }
        },
        outside_prov.clone(),
    ));
    r.free_after_start = free_after;
    // The measured overhead stands in for the estimated activation, other use and graphs once
    // started; it gets its own line so the ledger adds up to what is free.
    if let Some(o) = measured_overhead(s) {
        r.ledger.push(line(
            Term::MeasuredOverhead,
            i128::from(o.bytes.0),
            || "held once started besides weights, drafter and the pool; replaces the estimated activation, other use and graphs",
            held_prov.clone(),
        ));
    }
    let after_prov = free_after_provenance(r, &held_prov);
    r.ledger.push(line(
        Term::FreeAfterStart,
        free_after,
        || if implied_used {
            Formula::from("free at start - (the weights the measured pool implies: budget - available KV - other - activation - graphs inside the budget; + other + graphs + KV pool)")
        } else {
            Formula::from(held_what)
        },
        after_prov,
    ));
}

/// The provenance of a rank's line for `term`; exact when the rank has no such line (a term
/// that is absent contributes 0 bytes, exactly).
pub(super) fn line_prov(r: &RankPlan, term: Term) -> Provenance {
    r.line(term)
        .map(|l| l.provenance.clone())
        .unwrap_or(Provenance::Exact)
}

/// The unified-memory gate's measured overhead, which stands for the activations, the other
/// use and the graphs once started.
pub(super) fn measured_overhead(s: &Scenario) -> Option<&crate::calc::scenario::Measured> {
    s.unified.as_ref().and_then(|u| u.overhead.as_ref())
}

/// What a rank holds once started besides weights, drafter and the pool. On a unified-memory
/// box with a measured overhead (seed 002: graphs, kernel workspaces and activations at the
/// prefill budget, a remainder of what the box lost), that figure; otherwise the persistent
/// other consumption and CUDA graphs (the activation peak is transient).
pub(super) fn held_besides(s: &Scenario, r: &RankPlan) -> (i128, Provenance, &'static str) {
    if let Some(o) = measured_overhead(s) {
        return (
            i128::from(o.bytes.0),
            Provenance::Measured(o.source.clone().into()),
            "free at start - (weights + drafter + the measured overhead + KV pool)",
        );
    }
    let other = r.line(Term::OtherConsumption).map_or(0, |l| l.bytes);
    let graphs = r.line(Term::CudaGraphs).map_or(0, |l| l.bytes);
    let prov = Provenance::combine(&[
        &line_prov(r, Term::OtherConsumption),
        &line_prov(r, Term::CudaGraphs),
    ]);
    (
        other + graphs,
        prov,
        "free at start - (weights + drafter + other + graphs + KV pool); the activation peak is transient",
    )
}

/// `free at start - (weights + drafter + held + KV pool)` is as uncertain as the most
/// uncertain of its terms.
pub(super) fn free_after_provenance(r: &RankPlan, held: &Provenance) -> Provenance {
    let mut parts: Vec<Provenance> = [
        Term::FreeAtStart,
        Term::Weights,
        Term::Drafter,
        Term::KvPool,
    ]
    .into_iter()
    .map(|t| line_prov(r, t))
    .collect();
    parts.push(held.clone());
    Provenance::combine(&parts.iter().collect::<Vec<_>>())
}

pub(super) fn demand(
    s: &Scenario,
    ranks: &[RankPlan],
    replica: &ReplicaPlan,
    mns: u64,
    mnbt: u64,
) -> Demand {
    let lim = &ranks[replica.limiting_rank as usize];
    let per_request = lim
        .bytes_per_block
        .saturating_mul(replica.blocks_per_request);
    let per_token_all: u128 = ranks.iter().map(|r| u128::from(r.kv_bytes_per_token)).sum();
    let avg = s
        .average_request_len
        .unwrap_or(replica.max_model_len / 4)
        .max(1);
    let conc_avg = if replica.blocks_per_request == 0 {
        0.0
    } else {
        // A request of the average length, as vLLM's max_memory_usage counts one at that
        // max-model-len: full attention holds its tokens; a sliding window or a chunk holds
        // them too while the request is shorter than the window (a window adds its boundary
        // block), never more than a full-length request; a state is fixed per request.
        let len = avg.min(replica.max_model_len);
        let per_req_blocks: u64 = replica
            .groups
            .iter()
            .map(|g| match g.kind {
                LayerKv::Full | LayerKv::Mla => cdiv(len, g.block_size),
                LayerKv::Sliding { .. } | LayerKv::MlaSliding { .. } => {
                    (cdiv(len, g.block_size) + 1).min(g.blocks_per_request)
                }
                LayerKv::Chunked { .. } => cdiv(len, g.block_size).min(g.blocks_per_request),
                _ => g.blocks_per_request,
            })
            .sum();
        replica.num_blocks.saturating_sub(1) as f64 / per_req_blocks.max(1) as f64
    };
    Demand {
        max_num_seqs: mns,
        max_num_batched_tokens: mnbt,
        per_request_bytes: per_request,
        // A request at max-model-len holds its blocks in every group: a sliding window or a
        // state caps what its layers keep, so per-token bytes x length would overstate it.
        all_seqs_bytes: u128::from(mns) * u128::from(per_request),
        all_seqs_bytes_replica: u128::from(mns)
            * ranks
                .iter()
                .map(|r| u128::from(r.bytes_per_block) * u128::from(replica.blocks_per_request))
                .sum::<u128>(),
        kv_bytes_per_token_replica: per_token_all,
        pool_bytes: lim.kv_pool.0,
        average_len: avg,
        concurrency_at_average: conc_avg,
        provenance: Provenance::Exact,
    }
}

/// The pool's formula: `num_blocks x bytes_per_block`, and what one block holds ("80 layers'
/// pages of 16,384 B + 28 layers' pages of 8,192 B"). Rendered when first read, like the
/// other ledger formulas (plan() must stay cheap).
pub(super) fn pool_formula(num_blocks: u64, bytes_per_block: u64, runs: &[(u64, u64)]) -> Formula {
    let (n, b) = (
        Arg::Grouped(i128::from(num_blocks)),
        Arg::Grouped(i128::from(bytes_per_block)),
    );
    let run = |i: usize| {
        let (count, page) = runs[i];
        [
            Arg::Plain(i128::from(count)),
            Arg::Grouped(i128::from(page)),
        ]
    };
    match runs.len() {
        0 | 1 => {
            let [c, p] = if runs.is_empty() {
                [Arg::Plain(0), Arg::Grouped(0)]
            } else {
                run(0)
            };
            Formula::template(
                "num_blocks {} (min over ranks) x bytes_per_block {} ({} layers' pages of {} B)",
                &[n, b, c, p],
            )
        }
        2 => {
            let ([c0, p0], [c1, p1]) = (run(0), run(1));
            Formula::template(
                "num_blocks {} (min over ranks) x bytes_per_block {} ({} layers' pages of {} B + {} layers' pages of {} B)",
                &[n, b, c0, p0, c1, p1],
            )
        }
        _ => {
            let mut text = format!(
                "num_blocks {} (min over ranks) x bytes_per_block {} (",
                Grouped(i128::from(num_blocks)),
                Grouped(i128::from(bytes_per_block))
            );
            for (i, (count, page)) in runs.iter().enumerate() {
                if i > 0 {
                    text.push_str(" + ");
                }
                text.push_str(&format!(
                    "{count} layers' pages of {} B",
                    Grouped(i128::from(*page))
                ));
            }
            text.push(')');
            Formula::from(text)
        }
    }
}

/// A layer-parts breakdown for the decoder layers' line: `attention 1.02 GiB, dense MLP
/// 3.50 GiB, norms 0.2 MiB`, largest first, each already scaled as the line is.
pub(super) fn parts_text(parts: &[(&'static str, u64)]) -> String {
    const MIB: f64 = (1u64 << 20) as f64;
    const GIB: f64 = (1u64 << 30) as f64;
    let mut out = String::new();
    for (name, bytes) in parts {
        if !out.is_empty() {
            out.push_str(", ");
        }
        let b = *bytes as f64;
        let amount = if b >= GIB / 100.0 {
            format!("{} GiB", crate::calc::units::grouped_fixed(b / GIB, 2))
        } else {
            format!("{:.1} MiB", b / MIB)
        };
        out.push_str(name);
        out.push(' ');
        out.push_str(&amount);
    }
    out
}
