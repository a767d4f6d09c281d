//! The stage loop: every rank of the TP x PP grid through the load and the profile run, in
//! vLLM's order, each with its ledger and the KV specs of its layers. Ranks that plan alike (the
//! TP ranks of a stage, a middle stage shaped like the one before) are copied, not replanned.

use super::drafter::Drafter;
use super::init::init_fail;
use super::layers::rank_specs;
use super::ledger::{layers_formula, line};
use super::load::{drafter_weights, load_need, weight_lines};
use super::profile::{available_kv, profile_lines};
use super::resolve::Resolved;
use crate::calc::kv::WorkerKv;
use crate::calc::plan::*;
use crate::calc::runtime;
use crate::calc::scenario::{Scenario, SpecMethod, StageTerm};
use crate::calc::units::{ceil_fraction, Bytes, Grouped};
use crate::calc::weights::{self, Placement};

/// What every rank's ledger starts from: the lines and terms that are the same on every rank,
/// or differ only on the last stage.
pub(super) struct Shared {
    /// The first lines of every rank's ledger (total, pre-snapshot, free, budget).
    pub(super) head: Vec<LedgerLine>,
    /// Free memory at the snapshot.
    pub(super) free0: u64,
    /// `ceil(total x utilization)`: what the init check compares (before 0.14 vLLM compares
    /// the float `total x utilization`, which an integer free figure passes exactly when it
    /// passes the ceiling).
    pub(super) requested: u64,
    /// The budget the KV sizing starts from: `ceil(total x utilization)` from 0.14; before,
    /// `floor(total x utilization)`, as `int(total x utilization - non_kv)` truncates the float.
    pub(super) budget: u64,
    /// `total x utilization` in float64, as vLLM before 0.14 keeps it.
    pub(super) requested_f: f64,
    pub(super) weight_basis: String,
    /// The calibration of the weight estimates to a known checkpoint total.
    pub(super) scale: Option<f64>,
    pub(super) activation_mid: (u64, Provenance),
    pub(super) activation_last: (u64, Provenance),
    pub(super) other_term: (u64, Provenance),
    pub(super) graphs_term: (u64, Provenance),
    pub(super) graphs_on: bool,
    /// The CUDA graph capture sizes.
    pub(super) sizes: Vec<u64>,
    /// A drafter with weights to load (every method but n-gram).
    pub(super) draft_model: bool,
    /// The TP ranks of a stage plan alike (no uneven expert placement).
    pub(super) tp_ranks_identical: bool,
    /// The model as its unquantized checkpoint, when a release before 0.16 quantizes it
    /// online: those releases load it whole before quantizing, a transient of the difference.
    pub(super) unquantized: Option<crate::calc::model::Model>,
}

impl Shared {
    /// A component estimate scaled to the checkpoint's total.
    pub(super) fn scaled(&self, b: u64) -> u64 {
        self.scale.map_or(b, |f| (b as f64 * f).round() as u64)
    }
}

/// Where one rank sits in the grid.
#[derive(Clone, Copy)]
pub(super) struct RankAt {
    pub(super) stage: u32,
    pub(super) tp_rank: u32,
    pub(super) rank: u32,
    /// The decoder layers of its stage, `[start, end)`.
    pub(super) layers: (u32, u32),
    pub(super) first: bool,
    pub(super) last: bool,
}

/// Every rank planned through the profile run, and the first rank each early phase fails on.
pub(super) struct Stages {
    pub(super) ranks: Vec<RankPlan>,
    /// One worker per stage with identical TP ranks, else one per rank.
    pub(super) workers: Vec<WorkerKv>,
    /// The first rank whose free memory is below the budget: (rank, message, vLLM's error).
    pub(super) init_fail: Option<(u32, String, String)>,
    /// The first rank whose load does not fit: (rank, message).
    pub(super) load_fail: Option<(u32, String)>,
}

pub(super) fn shared(s: &Scenario, r: &Resolved, notes: &mut Vec<String>) -> Shared {
    let Resolved {
        util, mns, mnbt, ..
    } = *r;
    let tp = s.parallel.tp;
    let pp = s.parallel.pp;
    let tp64 = u64::from(tp);
    let m = &s.model;
    let total = s.gpu.total.0;
    // Estimated checkpoint calibration: scale component estimates to a known checkpoint total.
    let est_total = weights::checkpoint_estimate(m);
    let scale = m
        .checkpoint_bytes
        .filter(|_| est_total > 0)
        .map(|c| c as f64 / est_total as f64);
    // The weights' estimate's basis in words: text only the full page shows.
    let weight_basis = super::page_text(|| {
        let basis = match (scale, m.checkpoint_bytes) {
            (Some(f), Some(c)) => format!(
                "parameter counts ({}) scaled by {:.3} to the checkpoint's {} bytes",
                m.quant.label(),
                f,
                Grouped(c as i128)
            ),
            _ => format!("parameter counts x bytes per weight ({})", m.quant.label()),
        };
        let basis = match weights::keep_full_text(m) {
            Some(k) => format!("{basis}; {k}"),
            None => basis,
        };
        // A format `--quantization` assumed for an unquantized config is the estimate's
        // assumption.
        if m.quant_source == crate::calc::model::QuantSource::Assumed {
            format!(
                "{basis}; the format is assumed: {} on an unquantized config plans that method's usual checkpoint",
                m.quant_method
            )
        } else {
            basis
        }
    });

    let ranks_n = tp * pp;
    let v = s.version;
    let (pre_est, pre_basis) = runtime::pre_snapshot_estimate(ranks_n, v);
    let requested = ceil_fraction(total, util);
    let requested_f = total as f64 * util;
    let budget = if v.requested_is_ceil() {
        requested
    } else {
        // Before 0.14 (Worker.init_device): requested_memory = total x utilization, a float;
        // the KV budget is int(requested_memory - non_kv), so the fraction of a byte is lost.
        requested_f.floor() as u64
    };
    // The budget's formula: text only the full page shows.
    let budget_formula = super::page_text(|| {
        if v.requested_is_ceil() {
            format!(
                "ceil({} x {util}) = {}",
                Grouped(total as i128),
                Grouped(requested as i128)
            )
        } else {
            format!(
            "{} x {util} = {} (a float before 0.14: int(total x {util} - non_kv) drops the fraction)",
            Grouped(total as i128),
            crate::calc::units::py_float_str(requested_f)
        )
        }
    });
    let graphs_on = !s.engine.enforce_eager;
    let sizes = runtime::cudagraph_sizes(s, mns, mnbt);
    let tp_ranks_identical = !(s.parallel.expert_parallel
        && m.moe
            .as_ref()
            .is_some_and(|moe| moe.n_experts % (tp64 * u64::from(s.parallel.dp)).max(1) != 0));
    let (head, free0) = head_lines(s, budget, budget_formula, pre_est, pre_basis);

    // Runtime terms that do not depend on the stage, or only on being the last one.
    let activation_for = |last: bool| {
        let (est, basis) = runtime::activation_estimate(m, tp64, mnbt, mns, last);
        runtime::term(&s.runtime.activation_peak, est, basis)
    };
    let activation_mid = activation_for(false);
    let activation_last = activation_for(true);
    let other_term = {
        let (est, basis) = runtime::other_consumption_estimate(ranks_n, v);
        runtime::term(&s.runtime.non_torch, est, basis)
    };
    let graphs_term = if graphs_on {
        let (est, basis) = runtime::cuda_graph_estimate(sizes.len(), s.version);
        runtime::term(&s.runtime.cuda_graph, est, basis)
    } else {
        if s.runtime.cuda_graph.is_some() && super::NOTES {
            notes.push(
                "The measured CUDA-graph memory is not used: --enforce-eager captures no graphs."
                    .into(),
            );
        }
        (0, Provenance::Exact)
    };
    // n-gram speculation looks tokens up in the prompt: there is no draft model to load.
    let draft_model = match s.engine.speculative.as_ref().map(|sp| sp.method) {
        None | Some(SpecMethod::Ngram) => false,
        Some(
            SpecMethod::Mtp(_)
            | SpecMethod::Dspark
            | SpecMethod::Eagle
            | SpecMethod::Eagle3
            | SpecMethod::DraftModel,
        ) => true,
    };
    if !draft_model
        && s.engine
            .speculative
            .as_ref()
            .is_some_and(|sp| sp.drafter_weights.is_some())
        && super::NOTES
    {
        notes.push(
            "The drafter weights given are not used: ngram speculation has no draft model.".into(),
        );
    }
    let unquantized = (m.quant_source == crate::calc::model::QuantSource::Online
        && !s.version.at_least(0, 16))
    .then(|| unquantized(m));
    Shared {
        unquantized,
        head,
        free0,
        requested,
        budget,
        requested_f,
        weight_basis,
        scale,
        activation_mid,
        activation_last,
        other_term,
        graphs_term,
        graphs_on,
        sizes,
        draft_model,
        tp_ranks_identical,
    }
}

/// The model as its unquantized checkpoint, which an online quantization before 0.16 loads
/// whole first.
// Never inlined: no link the first verdict is trained on calls it (DESIGN.md, "Rare code").
#[inline(never)]
fn unquantized(m: &crate::calc::model::Model) -> crate::calc::model::Model {
    crate::calc::model::Model {
        quant: crate::calc::model::WeightQuant::None,
        ..m.clone()
    }
}

/// The first lines of every rank's ledger (total, pre-snapshot, free, budget) are the same on
/// every rank: built once. Returns them with the free memory at the snapshot.
fn head_lines(
    s: &Scenario,
    requested: u64,
    budget_formula: String,
    pre_est: u64,
    pre_basis: String,
) -> (Vec<LedgerLine>, u64) {
    let total = s.gpu.total.0;
    let mut head: Vec<LedgerLine> = Vec::with_capacity(4);
    head.push(line(
        Term::Total,
        i128::from(total),
        || format!("{} B as the driver reports it", Grouped(total as i128)),
        // A driver total read off a device (a catalog reading, a total given, an article's
        // card) is a measurement, never exact arithmetic.
        if s.gpu.total_confirmed {
            Provenance::Measured(format!("{}: the driver total as read", s.gpu.name).into())
        } else {
            Provenance::Estimate(
                (format!("{}: driver total not confirmed from a reading", s.gpu.name)).into(),
            )
        },
    ));

    // Before the snapshot: context, NCCL, other tenants; or the measured free figure.
    let (free0, free_prov, free_formula) = match &s.runtime.free_memory {
        Some(f) => (
            f.bytes.0,
            Provenance::Measured(f.source.clone().into()),
            super::page_text(|| format!("{} B measured", Grouped(f.bytes.0 as i128))),
        ),
        None => {
            let used = pre_est + s.runtime.other_tenants.0;
            (
                total.saturating_sub(used),
                Provenance::Estimate(pre_basis.clone().into()),
                super::page_text(|| {
                    format!(
                        "{} - {} (context/NCCL) - {} (other tenants)",
                        Grouped(total as i128),
                        Grouped(pre_est as i128),
                        Grouped(s.runtime.other_tenants.0 as i128)
                    )
                }),
            )
        }
    };
    head.push(line(
        Term::PreSnapshot,
        i128::from(total) - i128::from(free0),
        || {
            format!(
                "total - free at snapshot = {}",
                Grouped((total - free0.min(total)) as i128)
            )
        },
        // What is in use is what the free figure's estimate assumes (the context and NCCL):
        // its basis comes first.
        Provenance::combine(&[&free_prov, &head[0].provenance]),
    ));
    head.push(line(
        Term::FreeAtStart,
        i128::from(free0),
        || free_formula,
        free_prov.clone(),
    ));
    head.push(line(
        Term::Budget,
        i128::from(requested),
        || budget_formula.clone(),
        Provenance::combine(&[&head[0].provenance]),
    ));
    (head, free0)
}

/// Plans every rank, stage by stage.
pub(super) fn plan_stages(
    s: &Scenario,
    r: &Resolved,
    d: &Drafter,
    sh: &Shared,
    notes: &mut Vec<String>,
) -> Stages {
    let tp = s.parallel.tp;
    let pp = s.parallel.pp;
    let m = &s.model;
    let parts = &r.parts;
    let tp_ranks_identical = sh.tp_ranks_identical;
    let mut out = Stages {
        ranks: Vec::new(),
        workers: Vec::new(),
        init_fail: None,
        load_fail: None,
    };
    let mut stage_start = 0u32;
    for (stage, n_layers) in parts.iter().enumerate() {
        let stage = stage as u32;
        let layers = (stage_start, stage_start + n_layers);
        stage_start += n_layers;
        let first = stage == 0;
        let last = stage == pp - 1;
        for tp_rank in 0..tp {
            let rank = stage * tp + tp_rank;
            // TP ranks of a stage hold the same shards, so they plan identically; only uneven
            // expert placement (E % ep != 0 under expert parallelism) makes them differ.
            if tp_rank > 0 && tp_ranks_identical {
                let mut r = out.ranks.last().cloned().expect("rank 0 of the stage");
                r.rank = rank;
                r.tp_rank = tp_rank;
                out.ranks.push(r);
                // The KV plan sees one worker per stage; its figures are copied back to
                // every TP rank below.
                continue;
            }
            // A middle stage shaped like the one before it (same layer count, same layer
            // kinds, same measurements, neither first nor last) plans identically but for its
            // layer indices: copy it and shift them.
            if tp_rank == 0 && tp_ranks_identical && stage >= 2 && !last {
                let prev = (stage - 1) as usize;
                let prev_layers = (layers.0 - parts[prev], layers.0);
                let range = |(a, b): (u32, u32)| a as usize..b as usize;
                let same = parts[prev] == *n_layers
                    && m.layers[range(prev_layers)] == m.layers[range(layers)]
                    && m.moe.as_ref().map_or(true, |moe| {
                        moe.dense_layers.get(range(prev_layers))
                            == moe.dense_layers.get(range(layers))
                    })
                    && m.blocks.get(range(prev_layers)) == m.blocks.get(range(layers))
                    && [StageTerm::Weights, StageTerm::AvailableKv]
                        .iter()
                        .all(|&t| {
                            s.runtime.stage_only(t, prev) == s.runtime.stage_only(t, stage as usize)
                        });
                if same {
                    let mut r = out.ranks[prev * tp as usize].clone();
                    r.rank = rank;
                    r.pp_rank = stage;
                    r.layers = layers;
                    if let Some(l) = r.ledger.iter_mut().find(|l| l.term == Term::WeightsLayers) {
                        // Same shapes, same breakdown: only the layer indices move.
                        l.formula = super::page_text(|| {
                            let breakdown = l.formula.split_once("; ").map(|(_, b)| b.to_string());
                            layers_formula(layers, tp, breakdown.as_deref())
                        });
                    }
                    out.ranks.push(r);
                    let mut w = out.workers[prev].clone();
                    for l in &mut w.layers {
                        l.index += layers.0 - prev_layers.0;
                    }
                    out.workers.push(w);
                    continue;
                }
            }
            let at = RankAt {
                stage,
                tp_rank,
                rank,
                layers,
                first,
                last,
            };
            plan_rank(s, r, d, sh, at, &mut out, notes);
        }
    }
    out
}

/// One rank through the load and the profile run: its ledger, and its layers' KV specs.
fn plan_rank(
    s: &Scenario,
    r: &Resolved,
    d: &Drafter,
    sh: &Shared,
    at: RankAt,
    out: &mut Stages,
    notes: &mut Vec<String>,
) {
    let RankAt {
        stage,
        tp_rank,
        rank,
        layers,
        first,
        last,
    } = at;
    let tp64 = u64::from(s.parallel.tp);
    let pp = s.parallel.pp;
    let m = &s.model;
    let free0 = sh.free0;
    let (head, drafter_layers) = (&sh.head, d.layers);
    let place = Placement {
        tp: tp64,
        tp_rank: u64::from(tp_rank),
        dp: u64::from(s.parallel.dp),
        pp: u64::from(pp),
        layers,
        first_stage: first,
        last_stage: last,
        expert_parallel: s.parallel.expert_parallel,
        drafter_layers: if last { drafter_layers } else { 0 },
        // `_mark_tower_model`: Model Runner V2 builds the vision tower on the first stage
        // only, the V1 runner on every stage.
        vision: m.vision.is_some() && (first || !crate::calc::runtime::runner_v2(s)),
    };
    let est = weights::rank_weights(m, &place);
    // About twenty lines per rank: allocate once.
    let mut ledger = Vec::with_capacity(24);
    ledger.extend_from_slice(head);
    let (w_total, w_prov) = weight_lines(s, sh, &place, &est, at, &mut ledger);
    let mut loaded = drafter_weights(s, d, sh, &place, &est, at, w_total, w_prov, &mut ledger);
    // An older release's online quantization: the unquantized weights load whole first.
    loaded.online_transient = sh.unquantized.as_ref().map(|u| {
        weights::rank_weights(u, &place)
            .target()
            .saturating_sub(est.target())
    });
    let load_need = load_need(
        s,
        &loaded,
        free0,
        (rank, stage as usize),
        &mut ledger,
        &mut out.load_fail,
        notes,
    );
    let profiled = profile_lines(s, sh, last, &mut ledger);
    let available = available_kv(s, sh, stage, &loaded, &profiled, &mut ledger, notes);
    init_fail(s, r.util, sh, at, &mut out.init_fail);
    let specs = rank_specs(s, r, d, layers, last);
    let drafter = &loaded.drafter;
    out.workers.push(WorkerKv {
        layers: specs,
        available,
    });

    out.ranks.push(RankPlan {
        rank,
        tp_rank,
        pp_rank: stage,
        layers,
        holds_embedding: place.holds_embedding(m),
        holds_head: place.holds_head(m),
        holds_drafter: last && drafter.0 > 0,
        ledger,
        weights: Bytes(w_total),
        budget: Bytes(sh.budget),
        available_kv: available,
        kv_heads: if m.mla.is_some() {
            1
        } else {
            (m.n_kv_heads / tp64).max(1)
        },
        kv_bytes_per_token: 0,
        page_size: 0,
        bytes_per_block: 0,
        num_blocks_own: 0,
        kv_pool: Bytes(0),
        free_after_start: 0,
        load_need: Bytes(load_need),
        load_headroom: i128::from(free0) - i128::from(load_need),
    });
}
