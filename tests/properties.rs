//! Invariants of `calc::plan` over many generated scenarios: sharding never adds weight, a
//! bigger budget never shrinks the pool, the replica's blocks are the minimum over ranks, every
//! figure's provenance is as uncertain as its inputs, and no input, however absurd, panics.
//!
//! The generator is a tiny deterministic PRNG (SplitMix64), so a failure names its seed and
//! case and reproduces exactly; no dependency beyond std.

use std::panic::{catch_unwind, AssertUnwindSafe};

use headroom::calc::model::{LayerKind, Model, ModelDtype, WeightQuant};
use headroom::calc::scenario::{
    Gpu, KvCacheDtype, MaxLen, Measured, Parallel, Scenario, SpecMethod, Speculative, Unified,
};
use headroom::calc::units::{Bytes, GIB, MIB};
use headroom::calc::version::VllmVersion;
use headroom::calc::weights::{rank_weights, Placement};
use headroom::calc::{plan, Phase, Plan, Provenance, RankPlan, Term};
use headroom::catalog;

// ---------------------------------------------------------------------------------------------
// A deterministic PRNG.

/// SplitMix64: small, fast, and good enough to spread test cases.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n > 0).
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.below(hi - lo + 1)
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }

    fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len() as u64) as usize]
    }

    /// A float in [lo, hi).
    fn float(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (self.next() >> 11) as f64 / (1u64 << 53) as f64 * (hi - lo)
    }
}

/// Cases per property: 400 by default; `HEADROOM_PROPERTY_CASES=40000` for a deeper run.
fn cases() -> u64 {
    std::env::var("HEADROOM_PROPERTY_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(400)
}

fn catalog_gpu(rng: &mut Rng) -> Gpu {
    let rows = catalog::gpus();
    rows[rng.below(rows.len() as u64) as usize].gpu.clone()
}

/// Whether vLLM can build the model at TP `tp`: the KV heads split over it, or it is a
/// multiple of them (QKVParallelLinear); MLA and DeepSeek-V4 have no KV heads to split.
fn kv_splits(m: &Model, tp: u64) -> bool {
    let kv = m.n_kv_heads.max(1);
    m.mla.is_some() || m.compressed.is_some() || kv % tp == 0 || tp % kv == 0
}

fn catalog_model(rng: &mut Rng) -> Model {
    let rows = catalog::models();
    rows[rng.below(rows.len() as u64) as usize].model.clone()
}

/// A plausible scenario: a catalog model on catalog GPUs with a valid grid and ordinary flags.
fn sane_scenario(rng: &mut Rng) -> Scenario {
    let model = catalog_model(rng);
    let mut gpu = catalog_gpu(rng);
    // DeepSeek-V4 has attention backends for SM 9.x, 10.x and 12.x only (refused elsewhere);
    // quantized checkpoints need compute capability 7.5 or 8.0 (vLLM's minimum per method).
    while model.compressed.is_some() && !matches!(gpu.compute_capability.0, 0 | 9 | 10 | 12)
        || !model.quant_method.is_empty() && matches!(gpu.compute_capability.0, 1..=7)
    {
        gpu = catalog_gpu(rng);
    }
    let mut s = Scenario::new(model, gpu);
    let heads = s.model.n_heads;
    let tps: Vec<u32> = [1u32, 2, 4, 8, 16]
        .into_iter()
        .filter(|t| heads % u64::from(*t) == 0 && kv_splits(&s.model, u64::from(*t)))
        .collect();
    let tp = *rng.pick(&tps);
    let pp = *rng.pick(&[1u32, 1, 2, 3, 4]);
    let pp = pp.min(s.model.n_layers);
    s.parallel = Parallel {
        tp,
        pp,
        dp: 1,
        pp_layer_partition: None,
        expert_parallel: s.model.moe.is_some() && rng.chance(30),
    };
    s.gpus = tp * pp;
    s.engine.gpu_memory_utilization = Some(rng.float(0.5, 0.99));
    if rng.chance(50) {
        let cap = s.model.max_position_embeddings.max(1);
        s.engine.max_model_len = MaxLen::Value(rng.range(1, cap.min(262_144)));
    }
    if rng.chance(20) {
        s.engine.kv_cache_dtype = KvCacheDtype::Fp8;
    }
    s.engine.enforce_eager = rng.chance(20);
    s
}

// ---------------------------------------------------------------------------------------------
// Sharding.

#[test]
fn more_tp_never_raises_per_rank_weights() {
    let mut rng = Rng::new(1);
    for row in catalog::models() {
        let m = &row.model;
        for ep in [false, true] {
            if ep && m.moe.is_none() {
                continue;
            }
            let mut last: Option<(u64, u64)> = None;
            for tp in [1u64, 2, 4, 8, 16, 32, 64] {
                if m.n_heads % tp != 0 || !kv_splits(m, tp) {
                    continue;
                }
                // The heaviest rank of the grid (expert parallelism gives remainders to the
                // lowest ranks), for a random stage.
                let pp = rng.range(1, 4).min(u64::from(m.n_layers));
                let stage = rng.below(pp);
                let parts = headroom::calc::pp_partition(m.n_layers, pp as u32, None).unwrap();
                let start: u32 = parts[..stage as usize].iter().sum();
                let end = start + parts[stage as usize];
                let heaviest = (0..tp)
                    .map(|tp_rank| {
                        rank_weights(
                            m,
                            &Placement {
                                tp,
                                tp_rank,
                                dp: 1,
                                pp,
                                layers: (start, end),
                                first_stage: stage == 0,
                                last_stage: stage == pp - 1,
                                expert_parallel: ep,
                                drafter_layers: 0,
                                vision: false,
                            },
                        )
                        .target()
                    })
                    .max()
                    .unwrap();
                let full = rank_weights(
                    m,
                    &Placement {
                        tp,
                        tp_rank: 0,
                        dp: 1,
                        pp: 1,
                        layers: (0, m.n_layers),
                        first_stage: true,
                        last_stage: true,
                        expert_parallel: ep,
                        drafter_layers: 0,
                        vision: false,
                    },
                )
                .target();
                if let Some((prev_tp, prev)) = last {
                    assert!(
                        full <= prev,
                        "{} (ep {ep}): TP {tp} holds {full} B per rank, TP {prev_tp} held {prev} B",
                        row.id
                    );
                }
                last = Some((tp, full));
                assert!(heaviest > 0, "{}: a rank with no weights", row.id);
            }
        }
    }
}

#[test]
fn more_tp_never_raises_planned_weights() {
    // The same through `plan`, where the catalog's checkpoint calibration also applies.
    let mut rng = Rng::new(2);
    for case in 0..cases() / 4 {
        let mut s = sane_scenario(&mut rng);
        s.engine.speculative = None;
        s.parallel.pp = 1;
        s.parallel.expert_parallel = false;
        let mut last: Option<(u32, u64)> = None;
        for tp in [1u32, 2, 4, 8, 16] {
            if s.model.n_heads % u64::from(tp) != 0 || !kv_splits(&s.model, u64::from(tp)) {
                continue;
            }
            s.parallel.tp = tp;
            s.gpus = tp;
            let p = plan(&s).unwrap_or_else(|e| panic!("case {case}: {e}"));
            let w = p.ranks.iter().map(|r| r.weights.0).max().unwrap();
            if let Some((ptp, pw)) = last {
                assert!(
                    w <= pw,
                    "case {case} {}: TP {tp} {w} > TP {ptp} {pw}",
                    s.model.name
                );
            }
            last = Some((tp, w));
        }
    }
}

#[test]
fn more_dp_never_raises_planned_weights() {
    // Each DP rank is its own engine, but MoE experts are sharded over TP x DP: more DP
    // never adds weight to a rank, and for a dense model it changes nothing.
    let mut rng = Rng::new(9);
    for case in 0..cases() / 4 {
        let mut s = sane_scenario(&mut rng);
        s.engine.speculative = None;
        let mut last: Option<(u32, u64)> = None;
        for dp in [1u32, 2, 4] {
            s.parallel.dp = dp;
            s.gpus = s.parallel.tp * s.parallel.pp * dp;
            let p = plan(&s).unwrap_or_else(|e| panic!("case {case}: {e}"));
            let w = p.ranks.iter().map(|r| r.weights.0).max().unwrap();
            if let Some((pdp, pw)) = last {
                assert!(
                    w <= pw,
                    "case {case} {}: DP {dp} {w} > DP {pdp} {pw}",
                    s.model.name
                );
                if s.model.moe.is_none() {
                    assert_eq!(
                        w, pw,
                        "case {case} {}: a dense model moved with DP",
                        s.model.name
                    );
                }
            }
            last = Some((dp, w));
        }
    }
}

#[test]
fn kv_heads_per_rank_never_below_one() {
    let mut rng = Rng::new(3);
    for case in 0..cases() {
        let mut s = sane_scenario(&mut rng);
        // Push TP past the KV heads where the attention heads allow it.
        if rng.chance(50) {
            for tp in [64u32, 32, 16, 8] {
                if s.model.n_heads % u64::from(tp) == 0 && kv_splits(&s.model, u64::from(tp)) {
                    s.parallel.tp = tp;
                    s.parallel.pp = 1;
                    s.gpus = tp;
                    break;
                }
            }
        }
        let Ok(p) = plan(&s) else { continue };
        for r in &p.ranks {
            assert!(
                r.kv_heads >= 1,
                "case {case} {}: rank {} has 0 KV heads",
                s.model.name,
                r.rank
            );
            if s.model.mla.is_none() && r.kv_bytes_per_token > 0 {
                assert!(r.kv_heads >= (s.model.n_kv_heads / u64::from(p.tp)).max(1));
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The budget and the pool.

#[test]
fn a_larger_budget_never_shrinks_the_pool() {
    let mut rng = Rng::new(4);
    let mut compared = 0;
    for case in 0..cases() {
        let s = sane_scenario(&mut rng);
        let mut pools: Vec<(f64, u64, u64)> = Vec::new();
        for util in [0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.92, 0.95, 0.99, 1.0] {
            let mut t = s.clone();
            t.engine.gpu_memory_utilization = Some(util);
            let p = plan(&t).unwrap_or_else(|e| panic!("case {case}: {e}"));
            // A budget above the free memory fails vLLM's init check before any pool exists
            // (request_memory); the property is about the pool of engines that get that far.
            if p.checks.iter().any(|c| c.phase == Phase::Init && !c.ok) {
                continue;
            }
            let pool = p.ranks.iter().map(|r| r.kv_pool.0).min().unwrap_or(0);
            let blocks = p.replica.as_ref().map_or(0, |r| r.num_blocks);
            let avail = p.ranks.iter().map(|r| r.available_kv).min().unwrap();
            if let Some((u0, pool0, blocks0)) = pools.last().copied() {
                assert!(
                    pool >= pool0 && blocks >= blocks0,
                    "case {case} {}: utilization {util} pool {pool} / {blocks} blocks < {u0}: {pool0} / {blocks0}",
                    s.model.name
                );
            }
            // The available figure grows with the budget too, byte for byte.
            let _ = avail;
            pools.push((util, pool, blocks));
        }
        if pools.iter().any(|p| p.1 > 0) {
            compared += 1;
        }
    }
    assert!(
        compared > cases() / 10,
        "only {compared} cases reached a pool"
    );
}

#[test]
fn available_kv_grows_with_the_budget_byte_for_byte() {
    let mut rng = Rng::new(5);
    for case in 0..cases() {
        let s = sane_scenario(&mut rng);
        let mut a = s.clone();
        a.engine.gpu_memory_utilization = Some(0.8);
        let mut b = s.clone();
        b.engine.gpu_memory_utilization = Some(0.9);
        let (pa, pb) = (plan(&a).unwrap(), plan(&b).unwrap());
        for (ra, rb) in pa.ranks.iter().zip(&pb.ranks) {
            let budget_gain = i128::from(rb.budget.0) - i128::from(ra.budget.0);
            assert!(budget_gain > 0);
            assert_eq!(
                rb.available_kv - ra.available_kv,
                budget_gain,
                "case {case}: the budget's growth goes to KV exactly"
            );
            // Nothing else on the rank moves with the fraction.
            assert_eq!(ra.weights, rb.weights);
            assert_eq!(ra.load_need, rb.load_need);
        }
    }
}

#[test]
fn replica_blocks_are_the_minimum_over_ranks() {
    let mut rng = Rng::new(6);
    let mut seen = 0;
    for case in 0..cases() {
        let mut s = sane_scenario(&mut rng);
        // Uneven stages make the minimum matter.
        if s.parallel.pp > 1 && rng.chance(50) {
            let n = s.model.n_layers;
            let pp = s.parallel.pp;
            let mut parts = vec![1u32; pp as usize];
            let mut left = n - pp;
            for part in parts.iter_mut().take(pp as usize - 1) {
                let take = rng.below(u64::from(left) + 1) as u32;
                *part += take;
                left -= take;
            }
            parts[pp as usize - 1] += left;
            s.parallel.pp_layer_partition = Some(parts);
        }
        let p = match plan(&s) {
            Ok(p) => p,
            // A random split can leave a DeepSeek-V4 stage without a ratio-4 layer, which
            // vLLM refuses too.
            Err(e) if s.model.compressed.is_some() && e.field() == "pp-layer-partition" => continue,
            // A random split can leave a stage of attention-free layers only (a hybrid
            // model's MLP layers), which no KV pool can be sized for.
            Err(e) if e.message().contains("holds no layer with a KV cache") => continue,
            Err(e) => panic!("case {case}: {e}"),
        };
        let Some(replica) = &p.replica else { continue };
        if s.model.measured_kv.is_some() {
            continue;
        }
        seen += 1;
        let min = p.ranks.iter().map(|r| r.num_blocks_own).min().unwrap();
        if s.engine.num_gpu_blocks_override.is_none() {
            assert_eq!(replica.num_blocks, min, "case {case} {}", s.model.name);
        }
        let lim = &p.ranks[replica.limiting_rank as usize];
        assert_eq!(
            lim.num_blocks_own, min,
            "case {case}: the limiting rank holds the minimum"
        );
        for r in &p.ranks {
            assert_eq!(
                r.kv_pool.0,
                replica.num_blocks * r.bytes_per_block,
                "case {case}"
            );
            assert!(i128::from(r.kv_pool.0) <= r.available_kv, "case {case}");
            assert!(
                r.num_blocks_own as i128 == r.available_kv / i128::from(r.bytes_per_block.max(1)),
                "case {case}: a rank's own blocks are available // bytes_per_block"
            );
        }
    }
    assert!(
        seen > cases() / 10,
        "only {seen} cases reached the KV layout"
    );
}

// ---------------------------------------------------------------------------------------------
// Provenance: exact only when every input is exact; an estimate is never labelled measured.

fn rank_of(p: &Provenance) -> u8 {
    match p {
        Provenance::Exact => 0,
        Provenance::Measured(_) => 1,
        Provenance::Estimate(_) => 2,
    }
}

fn prov(r: &RankPlan, t: Term) -> Option<&Provenance> {
    r.line(t).map(|l| &l.provenance)
}

/// The kind a figure computed from `inputs` must carry: the most uncertain input's.
fn combined<'a>(inputs: impl IntoIterator<Item = Option<&'a Provenance>>) -> u8 {
    inputs.into_iter().flatten().map(rank_of).max().unwrap_or(0)
}

fn check_provenance(s: &Scenario, p: &Plan, case: u64) {
    let label = |k: u8| ["exact", "measured", "estimate"][k as usize];
    let pinned = s.engine.kv_cache_memory_bytes.is_some();
    for r in &p.ranks {
        let stage = r.pp_rank as usize;
        // The inputs: each is measured exactly when the scenario gives it.
        let expect_input = |t: Term, given: bool| {
            if let Some(pr) = prov(r, t) {
                let want = if given { "measured" } else { "estimate" };
                assert_eq!(pr.label(), want, "case {case}: rank {} {t:?}", r.rank);
            }
        };
        let total = prov(r, Term::Total).expect("total");
        assert_eq!(
            total.label(),
            // A device total read or given is a measurement; an unconfirmed one an estimate.
            if s.gpu.total_confirmed {
                "measured"
            } else {
                "estimate"
            },
            "case {case}: the driver total"
        );
        expect_input(Term::FreeAtStart, s.runtime.free_memory.is_some());
        let w_given = s
            .runtime
            .weights_per_stage
            .as_ref()
            .and_then(|v| v.get(stage))
            .is_some_and(Option::is_some)
            || s.runtime.weights.is_some();
        expect_input(Term::Weights, w_given);
        expect_input(Term::Activation, s.runtime.activation_peak.is_some());
        // Other use not measured itself but implied by a measured available figure is derived
        // from that figure and the other terms; otherwise it is an input.
        let implied = r.line(Term::OtherConsumption).is_some_and(|l| {
            l.formula
                .starts_with("implied by the measured available KV")
        });
        if implied {
            let want = combined([
                prov(r, Term::AvailableKv),
                prov(r, Term::Total),
                prov(r, Term::Weights),
                prov(r, Term::Drafter),
                prov(r, Term::Activation),
                prov(r, Term::CudaGraphs),
            ]);
            assert_eq!(
                prov(r, Term::OtherConsumption).unwrap().label(),
                label(want),
                "case {case}: rank {} implied other use",
                r.rank
            );
            assert!(s.runtime.non_torch.is_none() && !pinned);
        } else {
            expect_input(Term::OtherConsumption, s.runtime.non_torch.is_some());
        }
        if !s.engine.enforce_eager {
            expect_input(Term::CudaGraphs, s.runtime.cuda_graph.is_some());
        }
        let drafter_given = s
            .engine
            .speculative
            .as_ref()
            .is_some_and(|sp| sp.drafter_weights.is_some());
        expect_input(Term::Drafter, drafter_given);
        for t in [
            Term::WeightsEmbedding,
            Term::WeightsLayers,
            Term::WeightsHead,
        ] {
            if let Some(pr) = prov(r, t) {
                assert_eq!(pr.label(), "estimate", "case {case}: {t:?}");
            }
        }

        // The derived figures: as uncertain as their inputs, no more and no less.
        let mut derived: Vec<(Term, u8)> = vec![
            (
                Term::PreSnapshot,
                combined([prov(r, Term::Total), prov(r, Term::FreeAtStart)]),
            ),
            (Term::Budget, combined([prov(r, Term::Total)])),
        ];
        let stage_avail_given = s
            .runtime
            .available_kv_per_stage
            .as_ref()
            .and_then(|v| v.get(stage))
            .is_some_and(Option::is_some)
            || s.runtime.available_kv.is_some();
        let avail = if pinned {
            0
        } else if stage_avail_given {
            1
        } else {
            combined([
                prov(r, Term::Budget),
                prov(r, Term::Weights),
                prov(r, Term::Drafter),
                prov(r, Term::Activation),
                prov(r, Term::OtherConsumption),
                prov(r, Term::CudaGraphs),
            ])
        };
        derived.push((Term::AvailableKv, avail));
        if r.line(Term::KvPool).is_some() {
            // num_blocks is the minimum over every rank, so every rank's available figure is
            // an input of every rank's pool; a measured KV ratio makes it at least measured.
            let mut pool = combined(p.ranks.iter().map(|q| prov(q, Term::AvailableKv)));
            if s.model.measured_kv.is_some() {
                pool = pool.max(1);
            }
            derived.push((Term::KvPool, pool));
            derived.push((
                Term::KvRoundingSlack,
                combined([prov(r, Term::AvailableKv), prov(r, Term::KvPool)]),
            ));
            derived.push((
                Term::OutsideBudget,
                combined([prov(r, Term::Total), prov(r, Term::Budget)]),
            ));
            // On a unified box with a measured overhead, that figure replaces other + graphs.
            let measured = Provenance::Measured("".into());
            let held = match s.unified.as_ref().and_then(|u| u.overhead.as_ref()) {
                Some(_) => [Some(&measured), None],
                None => [prov(r, Term::OtherConsumption), prov(r, Term::CudaGraphs)],
            };
            derived.push((
                Term::FreeAfterStart,
                combined(
                    [
                        prov(r, Term::FreeAtStart),
                        prov(r, Term::Weights),
                        prov(r, Term::Drafter),
                        prov(r, Term::KvPool),
                    ]
                    .into_iter()
                    .chain(held),
                ),
            ));
        }
        for (t, want) in derived {
            if let Some(pr) = prov(r, t) {
                assert_eq!(
                    pr.label(),
                    label(want),
                    "case {case}: rank {} {t:?} is labelled {} but its inputs make it {} ({})",
                    r.rank,
                    pr.label(),
                    label(want),
                    r.line(t).unwrap().formula
                );
            }
        }
    }
    if let Some(replica) = &p.replica {
        let want = p
            .ranks
            .iter()
            .filter_map(|q| prov(q, Term::KvPool))
            .map(rank_of)
            .max()
            .unwrap_or(0);
        assert!(
            rank_of(&replica.provenance) >= want,
            "case {case}: the replica is labelled {} but a rank's pool is {}",
            replica.provenance.label(),
            label(want)
        );
    }
    if let Some(g) = &p.unified {
        for l in &g.lines {
            let given = match l.term {
                Term::Weights | Term::Drafter => None,
                Term::KvPool if pinned => Some(0),
                Term::OtherConsumption => Some(if s.unified.as_ref().unwrap().overhead.is_some() {
                    1
                } else {
                    2
                }),
                _ => None,
            };
            if let Some(want) = given {
                assert_eq!(
                    l.provenance.label(),
                    label(want),
                    "case {case}: gate {:?}",
                    l.term
                );
            }
        }
    }
}

/// A scenario where each runtime term is measured or estimated at random.
fn mixed_provenance_scenario(rng: &mut Rng) -> Scenario {
    let mut s = sane_scenario(rng);
    let g = |rng: &mut Rng, lo: u64, hi: u64, what: &str| {
        Some(Measured::new(
            rng.range(lo, hi),
            format!("generated {what}"),
        ))
    };
    s.gpu.total_confirmed = rng.chance(50);
    let total = s.gpu.total.0;
    if rng.chance(50) {
        s.runtime.free_memory = g(rng, total / 2, total, "free");
    }
    if rng.chance(40) {
        s.runtime.weights = g(rng, GIB, total / 2, "weights");
    }
    if s.parallel.pp > 1 && rng.chance(50) {
        let stages = (0..s.parallel.pp)
            .map(|_| {
                if rng.chance(50) {
                    g(rng, GIB, total / 2, "stage weights")
                } else {
                    None
                }
            })
            .collect();
        s.runtime.weights_per_stage = Some(stages);
    }
    for slot in [
        &mut s.runtime.activation_peak,
        &mut s.runtime.non_torch,
        &mut s.runtime.cuda_graph,
    ] {
        if rng.chance(50) {
            *slot = Some(Measured::new(rng.range(0, 2 * GIB), "generated term"));
        }
    }
    if rng.chance(15) {
        s.runtime.available_kv = g(rng, GIB, total / 4, "available KV");
    }
    if s.parallel.pp > 1 && rng.chance(20) {
        let stages = (0..s.parallel.pp)
            .map(|_| {
                if rng.chance(50) {
                    g(rng, GIB, total / 4, "stage KV")
                } else {
                    None
                }
            })
            .collect();
        s.runtime.available_kv_per_stage = Some(stages);
    }
    if rng.chance(15) {
        s.engine.kv_cache_memory_bytes = Some(rng.range(GIB, total / 4));
    }
    if s.model.mtp_layers > 0 && rng.chance(30) {
        s.engine.speculative = Some(Speculative {
            count_assumed: false,
            draft_model: None,
            method: SpecMethod::Mtp("deepseek_mtp"),
            num_speculative_tokens: 1,
            drafter_weights: if rng.chance(50) {
                Some(Measured::new(rng.range(MIB, 4 * GIB), "generated drafter"))
            } else {
                None
            },
        });
    }
    s.engine.no_async_scheduling = rng.chance(15);
    if rng.chance(10) {
        // The gate applies to unified-memory GPUs only (plan refuses it elsewhere).
        s.gpu.unified_memory = true;
        s.unified = Some(Unified {
            mem_available: Measured::new(total, "generated MemAvailable"),
            overhead: if rng.chance(50) {
                Some(Measured::new(rng.range(0, 8 * GIB), "generated overhead"))
            } else {
                None
            },
            ..Unified::default()
        });
    }
    s
}

#[test]
fn provenance_is_exact_only_when_inputs_are_exact() {
    let mut rng = Rng::new(7);
    for case in 0..cases() * 2 {
        let s = mixed_provenance_scenario(&mut rng);
        let Ok(p) = plan(&s) else { continue };
        check_provenance(&s, &p, case);
    }
}

#[test]
fn seed_examples_carry_honest_provenance() {
    for e in catalog::examples::examples() {
        let p = plan(&e.scenario).unwrap();
        check_provenance(&e.scenario, &p, 0);
    }
}

#[test]
fn an_all_exact_scenario_has_only_exact_or_measured_figures() {
    // Every runtime term given: no figure may be labelled an estimate.
    let mut rng = Rng::new(8);
    for case in 0..cases() / 2 {
        let mut s = sane_scenario(&mut rng);
        s.engine.speculative = None;
        s.gpu.total_confirmed = true;
        let total = s.gpu.total.0;
        let m = |b: u64| Some(Measured::new(b, "given"));
        s.runtime.free_memory = m(total - GIB);
        s.runtime.weights = m(total / 3);
        s.runtime.activation_peak = m(GIB / 2);
        s.runtime.non_torch = m(GIB / 2);
        s.runtime.cuda_graph = m(GIB / 4);
        let p = plan(&s).unwrap();
        for r in &p.ranks {
            for l in &r.ledger {
                assert_ne!(
                    l.provenance.label(),
                    "estimate",
                    "case {case}: rank {} {:?} = {} ({})",
                    r.rank,
                    l.term,
                    l.formula,
                    l.provenance.basis()
                );
            }
        }
        if let Some(rep) = &p.replica {
            assert_ne!(rep.provenance.label(), "estimate", "case {case}");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// No scenario panics.

const U64S: &[u64] = &[
    0,
    1,
    2,
    3,
    7,
    16,
    64,
    1 << 20,
    1 << 32,
    1 << 40,
    1 << 50,
    (1 << 50) + 1,
    1 << 62,
    u64::MAX / 2,
    u64::MAX - 1,
    u64::MAX,
];
const U32S: &[u32] = &[
    0,
    1,
    2,
    3,
    4,
    7,
    8,
    16,
    64,
    1024,
    1025,
    65_536,
    65_537,
    u32::MAX / 2,
    u32::MAX,
];
const FLOATS: &[f64] = &[
    0.0,
    -0.0,
    -1.0,
    1e-300,
    0.01,
    0.5,
    0.9,
    0.92,
    1.0,
    1.0000001,
    2.0,
    f64::NAN,
    f64::INFINITY,
    f64::NEG_INFINITY,
    f64::MIN_POSITIVE,
    f64::EPSILON,
];

fn wild_u64(rng: &mut Rng) -> u64 {
    if rng.chance(60) {
        *rng.pick(U64S)
    } else {
        rng.next() >> rng.below(64)
    }
}

fn wild_u32(rng: &mut Rng) -> u32 {
    if rng.chance(70) {
        *rng.pick(U32S)
    } else {
        (rng.next() >> 32) as u32 >> rng.below(32)
    }
}

fn maybe_measured(rng: &mut Rng) -> Option<Measured> {
    rng.chance(40).then(|| Measured::new(wild_u64(rng), "wild"))
}

fn wild_model(rng: &mut Rng) -> Model {
    let mut m = if rng.chance(50) {
        catalog_model(rng)
    } else {
        Model::example_dense()
    };
    let fields: [&mut u64; 6] = [
        &mut m.hidden_size,
        &mut m.n_heads,
        &mut m.n_kv_heads,
        &mut m.head_dim,
        &mut m.intermediate_size,
        &mut m.vocab_size,
    ];
    for f in fields {
        if rng.chance(20) {
            *f = wild_u64(rng);
        }
    }
    if rng.chance(15) {
        m.head_dim_v = wild_u64(rng);
    }
    if rng.chance(15) {
        m.max_position_embeddings = wild_u64(rng);
    }
    if rng.chance(10) {
        m.checkpoint_bytes = Some(wild_u64(rng));
    }
    if rng.chance(10) {
        m.mtp_layers = wild_u32(rng);
    }
    if rng.chance(10) {
        m.n_layers = wild_u32(rng);
    }
    if rng.chance(20) && m.n_layers < 1 << 16 {
        m.layers = vec![LayerKind::Full; m.n_layers as usize];
    }
    if rng.chance(10) {
        let (window, chunk) = (wild_u64(rng), wild_u64(rng));
        let kinds = [
            LayerKind::Full,
            LayerKind::Sliding { window },
            LayerKind::Chunked { chunk },
            LayerKind::Mla,
            LayerKind::GatedDeltaNet,
            LayerKind::Mamba2,
            LayerKind::SharedKv,
        ];
        for l in m.layers.iter_mut() {
            if rng.chance(30) {
                *l = rng.pick(&kinds).clone();
            }
        }
    }
    if let Some(moe) = m.moe.as_mut() {
        if rng.chance(20) {
            moe.n_experts = wild_u64(rng);
        }
        if rng.chance(20) {
            moe.moe_intermediate_size = wild_u64(rng);
        }
        if rng.chance(10) {
            moe.top_k = wild_u64(rng);
        }
        if rng.chance(10) {
            moe.dense_layers.clear();
        }
    }
    if let Some(mla) = m.mla.as_mut() {
        if rng.chance(20) {
            mla.kv_lora_rank = wild_u64(rng);
        }
        if rng.chance(10) {
            mla.q_lora_rank = Some(wild_u64(rng));
        }
    }
    if let Some(l) = m.linear.as_mut() {
        if rng.chance(20) {
            l.conv_kernel = wild_u64(rng);
        }
        if rng.chance(20) {
            l.v_heads = wild_u64(rng);
        }
    }
    if rng.chance(10) {
        m.dtype = *rng.pick(&[
            ModelDtype::Bfloat16,
            ModelDtype::Float16,
            ModelDtype::Float32,
        ]);
    }
    if rng.chance(10) {
        let (block, group) = (wild_u64(rng), wild_u64(rng));
        m.quant = *rng.pick(&[
            WeightQuant::None,
            WeightQuant::Fp8 { block },
            WeightQuant::Int8,
            WeightQuant::Int { bits: 4, group },
            WeightQuant::Nvfp4,
            WeightQuant::Mxfp4,
        ]);
    }
    m
}

fn wild_scenario(rng: &mut Rng) -> Scenario {
    let model = wild_model(rng);
    let mut gpu = catalog_gpu(rng);
    if rng.chance(30) {
        gpu.total = Bytes(wild_u64(rng));
    }
    if rng.chance(10) {
        gpu.compute_capability = (wild_u32(rng), wild_u32(rng));
    }
    gpu.unified_memory = rng.chance(10);
    let mut s = Scenario::new(model, gpu);
    s.parallel = Parallel {
        tp: if rng.chance(50) {
            *rng.pick(&[1, 2, 4, 8])
        } else {
            wild_u32(rng)
        },
        pp: if rng.chance(50) {
            *rng.pick(&[1, 2, 3])
        } else {
            wild_u32(rng)
        },
        dp: if rng.chance(70) { 1 } else { wild_u32(rng) },
        pp_layer_partition: rng
            .chance(15)
            .then(|| (0..rng.below(6)).map(|_| wild_u32(rng)).collect()),
        expert_parallel: rng.chance(20),
    };
    s.gpus = if rng.chance(50) {
        s.parallel
            .tp
            .saturating_mul(s.parallel.pp)
            .saturating_mul(s.parallel.dp)
    } else {
        wild_u32(rng)
    };
    let e = &mut s.engine;
    e.gpu_memory_utilization = rng.chance(60).then(|| *rng.pick(FLOATS));
    e.kv_cache_memory_bytes = rng.chance(20).then(|| wild_u64(rng));
    e.max_model_len = match rng.below(4) {
        0 => MaxLen::ModelDefault,
        1 => MaxLen::Auto,
        _ => MaxLen::Value(wild_u64(rng)),
    };
    e.max_num_seqs = rng.chance(30).then(|| wild_u64(rng));
    e.max_num_batched_tokens = rng.chance(30).then(|| wild_u64(rng));
    e.kv_cache_dtype = *rng.pick(&[
        KvCacheDtype::Auto,
        KvCacheDtype::Bfloat16,
        KvCacheDtype::Float16,
        KvCacheDtype::Fp8,
        KvCacheDtype::Fp8DsMla,
    ]);
    e.block_size = rng.chance(20).then(|| wild_u64(rng));
    e.enforce_eager = rng.chance(30);
    e.num_gpu_blocks_override = rng.chance(15).then(|| wild_u64(rng));
    e.speculative = rng.chance(25).then(|| Speculative {
        count_assumed: false,
        draft_model: None,
        // A method outside these is no longer representable (SpecMethod is closed).
        method: *rng.pick(&[
            SpecMethod::Mtp("deepseek_mtp"),
            SpecMethod::Mtp("mtp"),
            SpecMethod::Dspark,
            SpecMethod::Eagle,
            SpecMethod::Eagle3,
            SpecMethod::Ngram,
            SpecMethod::DraftModel,
        ]),
        num_speculative_tokens: wild_u32(rng),
        drafter_weights: maybe_measured(rng),
    });
    e.disable_hybrid_kv_cache_manager = rng.chance(20);
    e.no_async_scheduling = rng.chance(20);
    e.attention_backend = rng
        .chance(10)
        .then(|| *rng.pick(&headroom::calc::scenario::AttentionBackend::SELECTABLE));
    let r = &mut s.runtime;
    r.weights = maybe_measured(rng);
    r.weights_per_stage = rng
        .chance(15)
        .then(|| (0..rng.below(5)).map(|_| maybe_measured(rng)).collect());
    r.activation_peak = maybe_measured(rng);
    r.non_torch = maybe_measured(rng);
    r.cuda_graph = maybe_measured(rng);
    r.load_peak = maybe_measured(rng);
    r.free_memory = maybe_measured(rng);
    r.other_tenants = Bytes(if rng.chance(20) { wild_u64(rng) } else { 0 });
    r.available_kv = maybe_measured(rng);
    r.available_kv_per_stage = rng
        .chance(15)
        .then(|| (0..rng.below(5)).map(|_| maybe_measured(rng)).collect());
    if rng.chance(20) {
        s.unified = Some(Unified {
            mem_available: Measured::new(wild_u64(rng), "wild"),
            headroom: Bytes(wild_u64(rng)),
            overhead: maybe_measured(rng),
            prefill_term: Bytes(wild_u64(rng)),
            seat_term: Bytes(wild_u64(rng)),
            guard_threshold: Bytes(wild_u64(rng)),
        });
    }
    if rng.chance(15) {
        s.version = VllmVersion {
            major: wild_u32(rng) % 3,
            minor: wild_u32(rng) % 60,
            patch: wild_u32(rng) % 4,
        };
    }
    s.average_request_len = rng.chance(20).then(|| wild_u64(rng));
    s
}

thread_local! {
    /// Set while this thread runs a scenario that may panic: the hook stays quiet there.
    static QUIET: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Installs, once, a panic hook that is silent on threads inside [`panics`] and the default
/// elsewhere, so other tests' failures still print. (Swapping the global hook per test would
/// race between tests running in parallel.)
fn quiet_hook() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !QUIET.with(|q| q.get()) || std::env::var_os("HEADROOM_LOUD").is_some() {
                default(info);
            }
        }));
    });
}

/// Runs `plan` and every solver on `s`; returns a description of the panic, if any.
fn panics(s: &Scenario) -> Option<String> {
    quiet_hook();
    QUIET.with(|q| q.set(true));
    let result = catch_unwind(AssertUnwindSafe(|| {
        let p = plan(s);
        if let Ok(p) = &p {
            // Touch every figure a view would format.
            for r in &p.ranks {
                for l in &r.ledger {
                    let _ = format!("{} {} {}", l.bytes, l.formula, l.provenance.basis());
                }
            }
            let _ = format!("{:?}", p.replica);
            let _ = p.starts();
        }
        let _ = headroom::calc::solve::largest_kv_pin(s);
        p.map(|_| ())
            .map_err(|e| (e.field(), e.message().to_string()))
    }));
    QUIET.with(|q| q.set(false));
    match result {
        Ok(Err((field, message))) => {
            // An error names a field and says something.
            assert!(!field.is_empty(), "an error without a field: {message}");
            assert!(!message.is_empty(), "an empty message for {field}");
            None
        }
        Ok(Ok(())) => None,
        Err(e) => Some(
            e.downcast_ref::<String>()
                .cloned()
                .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "a non-string panic".into()),
        ),
    }
}

#[test]
fn no_scenario_panics() {
    let mut rng = Rng::new(0x4EAD_0001);
    let mut failures = Vec::new();
    let mut errors = 0;
    for case in 0..cases() * 10 {
        let s = wild_scenario(&mut rng);
        if let Some(msg) = panics(&s) {
            failures.push(format!("case {case}: {msg}\n  {:?}", short(&s)));
        } else if plan(&s).is_err() {
            errors += 1;
        }
    }
    assert!(
        failures.is_empty(),
        "{} panics, first ones:\n{}",
        failures.len(),
        failures
            .iter()
            .take(8)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert!(
        errors > 0,
        "the wild generator never produced an error; it is not wild enough"
    );
}

fn short(s: &Scenario) -> String {
    format!(
        "model {} layers {} h {} heads {}/{} hd {} inter {} vocab {} | gpu {} | tp {} pp {} dp {} gpus {} part {:?} | util {:?} pin {:?} len {:?} seqs {:?} mnbt {:?} block {:?} override {:?} spec {:?} | w {:?} free {:?} | v {}",
        s.model.name, s.model.n_layers, s.model.hidden_size, s.model.n_heads, s.model.n_kv_heads,
        s.model.head_dim, s.model.intermediate_size, s.model.vocab_size, s.gpu.total.0,
        s.parallel.tp, s.parallel.pp, s.parallel.dp, s.gpus, s.parallel.pp_layer_partition,
        s.engine.gpu_memory_utilization, s.engine.kv_cache_memory_bytes, s.engine.max_model_len,
        s.engine.max_num_seqs, s.engine.max_num_batched_tokens, s.engine.block_size,
        s.engine.num_gpu_blocks_override,
        s.engine.speculative.as_ref().map(|x| (&x.method, x.num_speculative_tokens)),
        s.runtime.weights.as_ref().map(|m| m.bytes.0),
        s.runtime.free_memory.as_ref().map(|m| m.bytes.0),
        s.version,
    )
}

#[test]
fn named_extremes_are_errors_with_a_field() {
    let base = || {
        let gpu = catalog::gpu("h100-sxm-80gb")
            .or_else(|| catalog::gpus().first())
            .unwrap()
            .gpu
            .clone();
        Scenario::new(Model::example_dense(), gpu)
    };
    type Set = Box<dyn Fn(&mut Scenario)>;
    let cases: Vec<(&str, Set)> = vec![
        ("tensor-parallel-size", Box::new(|s| s.parallel.tp = 0)),
        ("pipeline-parallel-size", Box::new(|s| s.parallel.pp = 0)),
        ("data-parallel-size", Box::new(|s| s.parallel.dp = 0)),
        (
            "tensor-parallel-size",
            Box::new(|s| {
                s.parallel.tp = 3;
                s.gpus = 3
            }),
        ),
        (
            "tensor-parallel-size",
            Box::new(|s| {
                s.parallel.tp = u32::MAX;
                s.gpus = u32::MAX
            }),
        ),
        (
            "pipeline-parallel-size",
            Box::new(|s| {
                s.parallel.pp = 33;
                s.gpus = 33
            }),
        ),
        (
            "gpus",
            Box::new(|s| {
                s.parallel.tp = 2;
                s.gpus = 1
            }),
        ),
        // One engine of 64 x 1,024 ranks printed 406 MB of JSON (issue 19, item 13); the
        // engine is bounded at 1,024 GPUs and the deployment at 65,536.
        (
            "pipeline-parallel-size",
            Box::new(|s| {
                s.parallel.tp = 64;
                s.parallel.pp = 1024;
                s.gpus = 65_536
            }),
        ),
        (
            "data-parallel-size",
            Box::new(|s| {
                s.parallel.tp = 32;
                s.parallel.dp = 4096;
                s.gpus = 131_072
            }),
        ),
        ("gpu-memory", Box::new(|s| s.gpu.total = Bytes(0))),
        ("gpu-memory", Box::new(|s| s.gpu.total = Bytes(u64::MAX))),
        // A block-count override whose pool passes 2^64 bytes is refused, not saturated
        // (issue 19, item 15: the pool read u64::MAX and the ledger went negative).
        (
            "num-gpu-blocks-override",
            Box::new(|s| {
                s.gpu.total = Bytes(1 << 50);
                s.engine.num_gpu_blocks_override = Some(1 << 32);
                s.engine.block_size = Some(1 << 20);
            }),
        ),
        (
            "gpu-memory-utilization",
            Box::new(|s| s.engine.gpu_memory_utilization = Some(0.0)),
        ),
        (
            "gpu-memory-utilization",
            Box::new(|s| s.engine.gpu_memory_utilization = Some(f64::NAN)),
        ),
        (
            "gpu-memory-utilization",
            Box::new(|s| s.engine.gpu_memory_utilization = Some(1.5)),
        ),
        (
            "max-model-len",
            Box::new(|s| s.engine.max_model_len = MaxLen::Value(0)),
        ),
        (
            "max-model-len",
            Box::new(|s| s.engine.max_model_len = MaxLen::Value(u64::MAX)),
        ),
        (
            "max-model-len",
            Box::new(|s| s.engine.max_model_len = MaxLen::Value(131_073)),
        ),
        (
            "max-num-seqs",
            Box::new(|s| s.engine.max_num_seqs = Some(0)),
        ),
        (
            "max-num-batched-tokens",
            Box::new(|s| s.engine.max_num_batched_tokens = Some(0)),
        ),
        ("block-size", Box::new(|s| s.engine.block_size = Some(0))),
        (
            "block-size",
            Box::new(|s| s.engine.block_size = Some(u64::MAX)),
        ),
        (
            "num-gpu-blocks-override",
            Box::new(|s| s.engine.num_gpu_blocks_override = Some(0)),
        ),
        (
            "kv-cache-dtype",
            Box::new(|s| s.engine.kv_cache_dtype = KvCacheDtype::Fp8DsMla),
        ),
        (
            "num_hidden_layers",
            Box::new(|s| {
                s.model.n_layers = 0;
                s.model.layers.clear()
            }),
        ),
        (
            "layer_types",
            Box::new(|s| s.model.layers.pop().map(|_| ()).unwrap_or(())),
        ),
        ("hidden_size", Box::new(|s| s.model.hidden_size = 0)),
        ("num_key_value_heads", Box::new(|s| s.model.n_kv_heads = 0)),
        ("head_dim", Box::new(|s| s.model.head_dim = 0)),
        (
            "pp-layer-partition",
            Box::new(|s| {
                s.parallel.pp = 2;
                s.gpus = 2;
                s.parallel.pp_layer_partition = Some(vec![1, 2])
            }),
        ),
        (
            "speculative-config",
            Box::new(|s| {
                s.engine.speculative = Some(Speculative {
                    count_assumed: false,
                    draft_model: None,
                    method: SpecMethod::Eagle,
                    num_speculative_tokens: 0,
                    drafter_weights: None,
                })
            }),
        ),
    ];
    for (field, set) in &cases {
        let mut s = base();
        set(&mut s);
        match catch_unwind(AssertUnwindSafe(|| plan(&s))) {
            Err(_) => panic!("{field}: plan panicked"),
            Ok(Ok(_)) => panic!("{field}: plan accepted {:?}", short(&s)),
            Ok(Err(e)) => assert_eq!(e.field(), *field, "{}", e.message()),
        }
    }
}

#[test]
fn tiny_gpus_fail_a_check_instead_of_panicking() {
    // Below 1 GiB a total is refused by name (no CUDA context and model fit); above, a GPU
    // too small for the model plans, and the plan names the failing phase.
    for total in [1u64, 1024, MIB, 512 * MIB] {
        let s = Scenario::new(
            Model::example_dense(),
            Gpu {
                id: "tiny".into(),
                name: "tiny".into(),
                total: Bytes(total),
                total_confirmed: true,
                unified_memory: false,
                compute_capability: (8, 0),
            },
        );
        let e = plan(&s).unwrap_err();
        assert_eq!(e.field(), "gpu-memory", "{total} B");
    }
    for total in [GIB, 2 * GIB, 4 * GIB] {
        let gpu = Gpu {
            id: "tiny".into(),
            name: "tiny".into(),
            total: Bytes(total),
            total_confirmed: true,
            unified_memory: false,
            compute_capability: (8, 0),
        };
        let s = Scenario::new(Model::example_dense(), gpu);
        let p = catch_unwind(AssertUnwindSafe(|| plan(&s)))
            .unwrap_or_else(|_| panic!("{total} B: panicked"))
            .unwrap_or_else(|e| panic!("{total} B: {e}"));
        assert!(!p.starts(), "{total} B starts");
        let f = p.first_failure().unwrap();
        assert!(!f.message.is_empty());
    }
}

#[test]
fn scenarios_at_the_validation_bounds_do_not_panic() {
    // Every field at (or just under) the largest value validation accepts, in random
    // combinations: the arithmetic must hold at the edge of what is allowed, not only far
    // inside it.
    let mut rng = Rng::new(0xB0_0D5);
    let mut failures = Vec::new();
    let mut planned = 0;
    for case in 0..cases() * 2 {
        let mut m = if rng.chance(50) {
            catalog_model(&mut rng)
        } else {
            Model::example_dense()
        };
        let edge = |rng: &mut Rng, max: u64| {
            if rng.chance(50) {
                max
            } else {
                rng.range(1, max)
            }
        };
        if rng.chance(40) {
            m.n_layers = edge(&mut rng, 10_000) as u32;
            let kind = m.layers.first().cloned().unwrap_or(LayerKind::Full);
            m.layers = vec![kind; m.n_layers as usize];
            if let Some(moe) = m.moe.as_mut() {
                moe.dense_layers = vec![false; m.n_layers as usize];
            }
        }
        m.hidden_size = edge(&mut rng, 1 << 18);
        m.n_heads = edge(&mut rng, 1 << 12);
        m.n_kv_heads = edge(&mut rng, 1 << 12);
        m.head_dim = edge(&mut rng, 1 << 12);
        m.head_dim_v = edge(&mut rng, 1 << 12);
        m.intermediate_size = edge(&mut rng, 1 << 20);
        m.vocab_size = edge(&mut rng, 1 << 26);
        m.max_position_embeddings = edge(&mut rng, 1 << 32);
        if let Some(moe) = m.moe.as_mut() {
            moe.n_experts = edge(&mut rng, 1 << 12);
            moe.moe_intermediate_size = edge(&mut rng, 1 << 20);
        }
        let mut s = Scenario::new(m, catalog_gpu(&mut rng));
        s.gpu.total = Bytes(edge(&mut rng, 1 << 50));
        let tp = *rng.pick(&[1u32, 2, 4, 8]);
        s.parallel.tp = tp;
        s.parallel.pp = (*rng.pick(&[1u32, 2, 4])).min(s.model.n_layers);
        s.gpus = s.parallel.tp * s.parallel.pp;
        s.model.n_heads = (s.model.n_heads / u64::from(tp)).max(1) * u64::from(tp);
        s.engine.max_model_len = match rng.below(3) {
            0 => MaxLen::Auto,
            1 => MaxLen::Value(edge(&mut rng, s.model.max_position_embeddings)),
            _ => MaxLen::ModelDefault,
        };
        s.engine.block_size = rng.chance(30).then(|| edge(&mut rng, 1 << 20));
        s.engine.max_num_seqs = rng.chance(30).then(|| edge(&mut rng, 1 << 32));
        s.engine.max_num_batched_tokens = rng.chance(30).then(|| edge(&mut rng, 1 << 32));
        s.engine.num_gpu_blocks_override = rng.chance(20).then(|| edge(&mut rng, 1 << 32));
        s.engine.kv_cache_memory_bytes = rng.chance(30).then(|| edge(&mut rng, 1 << 50));
        if rng.chance(30) {
            s.runtime.weights = Some(Measured::new(edge(&mut rng, 1 << 50), "edge"));
        }
        if rng.chance(30) {
            s.runtime.free_memory = Some(Measured::new(edge(&mut rng, 1 << 50), "edge"));
        }
        if rng.chance(20) {
            s.unified = Some(Unified {
                mem_available: Measured::new(edge(&mut rng, 1 << 50), "edge"),
                headroom: Bytes(edge(&mut rng, 1 << 50)),
                overhead: Some(Measured::new(edge(&mut rng, 1 << 50), "edge")),
                prefill_term: Bytes(edge(&mut rng, 1 << 50)),
                seat_term: Bytes(edge(&mut rng, 1 << 50)),
                guard_threshold: Bytes(0),
            });
        }
        if let Some(msg) = panics(&s) {
            failures.push(format!("case {case}: {msg}\n  {}", short(&s)));
        } else if plan(&s).is_ok() {
            planned += 1;
        }
    }
    assert!(
        failures.is_empty(),
        "{} panics, first ones:\n{}",
        failures.len(),
        failures
            .iter()
            .take(8)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert!(planned > 0, "no edge scenario planned");
}

// ---------------------------------------------------------------------------------------------
// The ledger adds up, and the text and the JSON tell the same plan.

/// Every total of a rank's ledger against its parts, byte for byte, where the plan derives it
/// (a measured figure stands on its own and is not re-derived).
fn check_sums(p: &Plan, what: &str) {
    for r in &p.ranks {
        let get = |t: Term| r.line(t).map(|l| l.bytes);
        let at = |t: Term| get(t).unwrap_or(0);
        let rank = r.rank;
        if let (Some(e), Some(l), Some(h), Some(w)) = (
            get(Term::WeightsEmbedding),
            get(Term::WeightsLayers),
            get(Term::WeightsHead),
            get(Term::Weights),
        ) {
            assert_eq!(
                e + l + h + at(Term::WeightsVision),
                w,
                "{what}, rank {rank}: the weight lines sum to the weights"
            );
        }
        if let (Some(total), Some(pre), Some(free)) = (
            get(Term::Total),
            get(Term::PreSnapshot),
            get(Term::FreeAtStart),
        ) {
            assert_eq!(
                total - pre,
                free,
                "{what}, rank {rank}: free at the snapshot"
            );
        }
        if let Some(outside) = get(Term::OutsideBudget) {
            assert_eq!(
                at(Term::Total) - at(Term::Budget),
                outside,
                "{what}, rank {rank}: outside the budget"
            );
        }
        if let (Some(pool), Some(slack)) = (get(Term::KvPool), get(Term::KvRoundingSlack)) {
            assert_eq!(
                at(Term::AvailableKv) - pool,
                slack,
                "{what}, rank {rank}: available - pool"
            );
        }
        if let Some(pool) = get(Term::KvPool) {
            assert_eq!(
                i128::from(r.kv_pool.0),
                pool,
                "{what}, rank {rank}: the pool"
            );
        }
        let free_after = get(Term::FreeAfterStart);
        // A measured pool over weights that do not load implies the weights it left room for
        // (its formula says so); every other rank is the plain difference.
        let implied = r.load_headroom < 0;
        if let (Some(free_after), false) = (free_after, implied) {
            let held = get(Term::MeasuredOverhead)
                .unwrap_or_else(|| at(Term::OtherConsumption) + at(Term::CudaGraphs));
            assert_eq!(
                at(Term::FreeAtStart)
                    - at(Term::Weights)
                    - at(Term::Drafter)
                    - held
                    - at(Term::KvPool),
                free_after,
                "{what}, rank {rank}: free after start"
            );
            assert_eq!(r.free_after_start, free_after, "{what}, rank {rank}");
        }
    }
}

/// The text (`headroom plan`) and the JSON (`--json`) of one plan: the same verdict, every
/// ledger figure, the replica's counts, every check's message; no field of the JSON claims a
/// figure the plan did not reach.
fn check_text_and_json(s: &Scenario, p: &Plan, what: &str) {
    use headroom::calc::units::{thousands, thousands_signed, UnitSystem};
    let text = headroom::cli::render(s, p, UnitSystem::Binary);
    let json = headroom::cli::json::document(s, p);
    let starts = json["starts"].as_bool().unwrap();
    assert_eq!(starts, p.starts(), "{what}");
    assert_eq!(
        text.contains("Verdict    STARTS"),
        starts,
        "{what}: the text's verdict is the JSON's"
    );
    for (r, jr) in p.ranks.iter().zip(json["ranks"].as_array().unwrap()) {
        let ledger = jr["ledger"].as_array().unwrap();
        assert_eq!(ledger.len(), r.ledger.len(), "{what}");
        for (l, jl) in r.ledger.iter().zip(ledger) {
            assert_eq!(
                jl["bytes"].as_i64().map(i128::from),
                Some(l.bytes),
                "{what}"
            );
            let shown = thousands_signed(l.bytes);
            assert!(
                text.contains(&format!(" {shown}  ")),
                "{what}, rank {}: {} {shown} is not in the text",
                r.rank,
                l.term.key()
            );
        }
        let reached = r.line(Term::KvPool).is_some();
        assert_eq!(jr["kv_pool_bytes"].is_null(), !reached, "{what}");
        assert_eq!(
            jr["free_after_start_bytes"].is_null(),
            r.line(Term::FreeAfterStart).is_none(),
            "{what}"
        );
        // The KV layout is there whenever vLLM laid the cache out: a pool, or a capacity
        // check that failed (its message quotes the layout); a measured ratio has none.
        let capacity_failed = p.checks.iter().any(|c| c.phase == Phase::Capacity && !c.ok);
        if (reached || capacity_failed) && s.model.measured_kv.is_none() {
            assert!(
                r.bytes_per_block > 0,
                "{what}: rank {} has no block",
                r.rank
            );
        }
        assert_eq!(
            jr["bytes_per_block"].as_u64(),
            Some(r.bytes_per_block),
            "{what}"
        );
        if r.bytes_per_block > 0 {
            assert!(
                text.contains(&format!(
                    "{} B per block; {} blocks of its own",
                    thousands(u128::from(r.bytes_per_block)),
                    thousands(u128::from(r.num_blocks_own))
                )),
                "{what}: the text's KV layout"
            );
        }
    }
    for c in &p.checks {
        assert!(text.contains(&*c.message), "{what}: check {:?}", c.phase);
    }
    if let Some(rep) = &p.replica {
        let jr = &json["replica"];
        assert_eq!(
            jr["kv_cache_tokens"].as_u64(),
            Some(rep.kv_cache_tokens),
            "{what}"
        );
        assert!(
            text.contains(&format!(
                "{} tokens",
                thousands(u128::from(rep.kv_cache_tokens))
            )),
            "{what}: the text's KV cache size"
        );
        if rep.groups.is_empty() {
            assert!(jr["num_blocks"].is_null(), "{what}: blocks not derived");
            assert!(text.contains("not derived"), "{what}");
        } else {
            assert_eq!(jr["num_blocks"].as_u64(), Some(rep.num_blocks), "{what}");
            assert!(rep.num_blocks > 0, "{what}: a started pool has blocks");
            assert!(
                text.contains(&thousands(u128::from(rep.num_blocks))),
                "{what}: the text's num_blocks"
            );
        }
    }
}

/// A sane scenario with the flags that change the ledger's shape: uneven stages, a pinned
/// pool, a block-count override, an older release.
fn shaped_scenario(rng: &mut Rng) -> Scenario {
    let mut s = sane_scenario(rng);
    if s.parallel.pp > 1 && rng.chance(40) {
        let n = s.model.n_layers;
        let pp = s.parallel.pp;
        let mut parts = vec![1u32; pp as usize];
        let mut left = n - pp;
        for part in parts.iter_mut().take(pp as usize - 1) {
            let take = rng.below(u64::from(left) + 1) as u32;
            *part += take;
            left -= take;
        }
        parts[pp as usize - 1] += left;
        s.parallel.pp_layer_partition = Some(parts);
    }
    match rng.below(6) {
        0 => s.engine.kv_cache_memory_bytes = Some(rng.range(GIB, 60 * GIB)),
        1 => s.engine.num_gpu_blocks_override = Some(rng.range(1, 200_000)),
        _ => {}
    }
    if rng.chance(25) {
        let versions: Vec<VllmVersion> = VllmVersion::releases().collect();
        s.version = *rng.pick(&versions);
    }
    s
}

#[test]
fn every_ledger_total_is_the_sum_of_its_parts_and_text_agrees_with_json() {
    let mut rng = Rng::new(17);
    let mut planned = 0;
    for case in 0..cases() {
        let s = shaped_scenario(&mut rng);
        let Ok(p) = plan(&s) else { continue };
        planned += 1;
        let what = format!("case {case} ({}, {})", s.model.name, s.gpu.id);
        check_sums(&p, &what);
        check_text_and_json(&s, &p, &what);
    }
    assert!(planned > cases() / 2, "only {planned} cases planned");
    for ex in catalog::examples::examples() {
        let p = plan(&ex.scenario).unwrap();
        check_sums(&p, ex.id);
        check_text_and_json(&ex.scenario, &p, ex.id);
    }
}

// ---------------------------------------------------------------------------------------------
// Solvers: the answer starts, and a little more does not.

/// `largest_kv_pin`: the pin starts (as far as memory goes), and the pin plus vLLM's margin
/// and two blocks of the largest rank (scaled to the smallest stage's block) does not. Unequal stages included (issue 19, item 16:
/// the smaller stage allocates less than the pin, which the answer missed by up to 2 GB).
#[test]
fn the_largest_kv_pin_is_the_largest() {
    use headroom::calc::solve::{largest_kv_pin, SUGGESTION_MARGIN};
    let mut rng = Rng::new(16);
    let (mut checked, mut unequal) = (0, 0);
    for case in 0..cases() {
        let mut s = shaped_scenario(&mut rng);
        s.engine.kv_cache_memory_bytes = None;
        s.engine.num_gpu_blocks_override = None;
        let Ok(base) = plan(&s) else { continue };
        if !base.starts() || s.model.measured_kv.is_some() {
            continue;
        }
        let Ok(pin) = largest_kv_pin(&s) else {
            continue;
        };
        if pin == 0 {
            continue;
        }
        let what = format!(
            "case {case} ({}, {}, {:?}, vLLM {}, eager {})",
            s.model.name, s.gpu.id, s.parallel, s.version, s.engine.enforce_eager
        );
        let memory_fails = |pin: u64| {
            let mut t = s.clone();
            t.engine.kv_cache_memory_bytes = Some(pin);
            let p = plan(&t).unwrap_or_else(|e| panic!("{what}: {e}"));
            p.checks
                .iter()
                .any(|c| !c.ok && matches!(c.phase, Phase::KvSizing | Phase::Allocation))
        };
        assert!(
            !memory_fails(pin),
            "{what}: the answer {pin} does not start"
        );
        let largest = base.ranks.iter().map(|r| r.bytes_per_block).max().unwrap();
        let smallest = base
            .ranks
            .iter()
            .map(|r| r.bytes_per_block)
            .filter(|b| *b > 0)
            .min()
            .unwrap();
        // A smaller stage's pool grows by its own block per block of the largest: the margin
        // is used up on it only after margin x largest / smallest more of the pin.
        let beyond = pin
            + ((u128::from(SUGGESTION_MARGIN + 2 * largest) * u128::from(largest))
                / u128::from(smallest)) as u64;
        assert!(
            memory_fails(beyond),
            "{what}: {beyond} still starts; the answer {pin} is not the largest"
        );
        checked += 1;
        if base.ranks.iter().any(|r| r.bytes_per_block != largest) {
            unequal += 1;
        }
    }
    assert!(checked > cases() / 10, "only {checked} cases checked");
    assert!(unequal > 0, "no case had unequal stages");
}
