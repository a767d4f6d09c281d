//! The three seed systems as loadable scenarios (`../shared/reference/seed-cases.md`): each
//! figure the articles state comes out of `calc::plan` on these inputs.

use crate::calc::model::{LayerKind, MeasuredKv, Model};
use crate::calc::scenario::{Gpu, MaxLen, Measured, Parallel, SpecMethod, Speculative, Unified};
use crate::calc::units::{Bytes, UnitSystem, GB, GIB};
use crate::calc::Scenario;

/// One example system: its menu entry (`id`, `title`, ... read through it) and its scenario.
#[derive(Clone, Debug)]
pub struct Example {
    pub info: &'static ExampleInfo,
    pub scenario: Scenario,
}

impl std::ops::Deref for Example {
    type Target = ExampleInfo;

    fn deref(&self) -> &ExampleInfo {
        self.info
    }
}

fn gib_f(x: f64) -> u64 {
    (x * GIB as f64).round() as u64
}

fn gb_f(x: f64) -> u64 {
    (x * GB as f64).round() as u64
}

/// DeepSeek-V4-Flash from the catalog, or a shape with the seeds' layer count when the row is
/// missing (it never is in a release build; the catalog tests check it).
fn dsv4() -> Model {
    super::model("deepseek-v4-flash")
        .map(|r| r.model.clone())
        .unwrap_or_else(dsv4_shape)
}

/// A stand-in of DeepSeek-V4-Flash's shape, for a catalog without its row.
// Never inlined: no link the first verdict is trained on calls it (DESIGN.md, "Rare code").
#[inline(never)]
fn dsv4_shape() -> Model {
    let mut m = Model::example_dense();
    m.name = "DeepSeek-V4-Flash (shape)".into();
    m.n_layers = 43;
    m.layers = vec![LayerKind::Full; 43];
    m
}

/// S1 (seed 000): DeepSeek-V4-Flash on three 63.5 GiB cards, PP=3, with the MTP drafter on the
/// last stage, at vLLM's default split 14, 15, 14 and utilization 0.90. The heaviest stage's
/// weights are the article's 53.3 GiB; the load transient is the 4 GiB expert repack.
pub fn s1_three_cards() -> Scenario {
    let mut model = dsv4();
    // The article's max context for these cards is in the hundreds of thousands; vLLM's log
    // line reported 959,488, which needs the model's 1M context.
    if model.max_position_embeddings < 1_048_576 {
        model.max_position_embeddings = 1_048_576;
        model.max_len_key =
            "max_position_embeddings=1048576 (the seed articles' 1M context)".into();
    }
    let gpu = Gpu {
        id: "mining-64gb".into(),
        name: "64 GB card (63.5 GiB usable)".into(),
        total: Bytes(gib_f(63.5)),
        total_confirmed: true,
        unified_memory: false,
        compute_capability: (9, 0),
    };
    let mut s = Scenario::new(model, gpu);
    s.gpus = 3;
    s.parallel = Parallel {
        pp: 3,
        ..Parallel::default()
    };
    s.engine.gpu_memory_utilization = Some(0.90);
    // The article's engine reported the context it could hold (959,488 tokens) rather than
    // being given one: `auto` lets the pool decide, as there.
    s.engine.max_model_len = MaxLen::Auto;
    s.engine.speculative = Some(Speculative {
        count_assumed: false,
        draft_model: None,
        method: SpecMethod::Mtp("deepseek_mtp"),
        num_speculative_tokens: 1,
        drafter_weights: Some(Measured::new(
            12 * GIB,
            "seed 000: the draft module is about 12 GiB",
        )),
    });
    let w = |x: f64| Measured::new(gib_f(x), "seed 000: stated weights of the stage");
    // Only the heaviest stage's weights are stated; the other stages are estimated from the
    // catalog row (labelled estimates).
    s.runtime.weights_per_stage = Some(vec![None, Some(w(53.3)), None]);
    s.runtime.load_peak = Some(Measured::new(
        4 * GIB,
        "seed 000: expert repack holds 2 GiB in and 2 GiB out at its heaviest",
    ));
    s.runtime.free_memory = Some(Measured::new(
        gib_f(63.5),
        "seed 000: free memory is close to 63.5 GiB before loading",
    ));
    s
}

/// S2 (seed 002): DeepSeek-V4-Flash NVFP4, TP=2 over two GB10 boxes, KV pinned at 10e9 B,
/// gated by the operator's start gate against ~114.5 GiB MemAvailable.
pub fn s2_unified_gate() -> Scenario {
    let model = dsv4();
    let gpu = super::gpu("gb10-128gb")
        .map(|r| r.gpu.clone())
        .unwrap_or(Gpu {
            id: "gb10-128gb".into(),
            name: "NVIDIA GB10 (DGX Spark)".into(),
            total: Bytes(gib_f(121.69)),
            total_confirmed: false,
            unified_memory: true,
            compute_capability: (12, 1),
        });
    let mut model = model;
    // What the article's engine printed: its 10e9 B pin backed 181,777 tokens. vLLM 0.33.0's
    // own arithmetic for this layout gives 843,348 at the same pin (tests/golden_v4.rs), so
    // the article ran another build; the example converts its pool with the article's ratio.
    model.measured_kv = Some(MeasuredKv {
        pool_bytes: 10_000_000_000,
        tokens: 181_777,
        tp: 2,
        source: "seed 002: '--kv-cache-memory 10e9 ... backs 181,777 tokens' on one rank (DeepSeek-V4-Flash-0731 NVFP4, TP=2, 2x DGX Spark GB10, the vLLM build the article ran; 0.33.0's arithmetic gives 843,348 for the same pin)".into(),
    });
    let mut s = Scenario::new(model, gpu);
    s.gpus = 2;
    s.parallel = Parallel {
        tp: 2,
        ..Parallel::default()
    };
    s.engine.kv_cache_memory_bytes = Some(10_000_000_000);
    // The article does not state --max-model-len; at the model's own 1,048,576 tokens the
    // 10e9 pin cannot hold one request and vLLM would refuse the start the article serves.
    // `auto` lets the plan fit the longest length the pinned pool holds.
    s.engine.max_model_len = MaxLen::Auto;
    s.engine.max_num_batched_tokens = Some(8_192);
    s.engine.max_num_seqs = Some(8);
    s.runtime.weights = Some(Measured::new(
        gib_f(79.29),
        "seed 002: vLLM \"Model loading took 79.29 GiB\"",
    ));
    s.runtime.free_memory = Some(Measured::new(
        gib_f(117.2),
        "seed 002: 117.2 GiB available before the start",
    ));
    s.unified = Some(Unified {
        mem_available: Measured::new(gib_f(114.5), "seed 002: ~114.5 GiB free at Start"),
        headroom: Bytes(8 * GIB),
        overhead: Some(Measured::new(
            gib_f(13.4),
            "seed 002: 102.0 - 79.29 - 9.31, a remainder (graphs, workspaces, activations)",
        )),
        prefill_term: Bytes(0),
        seat_term: Bytes(0),
        guard_threshold: Bytes(8 * GIB),
    });
    s
}

/// The S2 drafter: 10.12 GiB in the shard headers, split over two ranks. The article's drafter
/// is DSpark (the checkpoint's mtp.* weights), but the catalog's V4-Flash config declares none
/// of the DSpark heads vLLM builds it from, so the example plans it as the MTP drafter with the
/// article's weights: the gate reads only those, and the pool is the article's measured ratio.
pub fn s2_drafter() -> Speculative {
    Speculative {
        count_assumed: false,
        draft_model: None,
        method: SpecMethod::Mtp("deepseek_mtp"),
        num_speculative_tokens: 1,
        drafter_weights: Some(Measured::new(
            gib_f(5.06),
            "seed 002: shard headers, 10.12 / 2 (not measured: the drafter has not loaded yet)",
        )),
    }
}

/// S3 (seed 003): a synthetic 70 GB checkpoint over four 80 GB devices, TP=4, utilization
/// 0.92, an assumed 10 GB of other budgeted use; 80 full-attention layers, 8 KV heads of 128,
/// BF16 KV. Decimal GB throughout.
pub fn s3_synthetic_tp4() -> Scenario {
    let mut model = Model::example_dense();
    model.name = "Synthetic 80-layer GQA (seed 003)".into();
    model.n_layers = 80;
    model.layers = vec![LayerKind::Full; 80];
    model.hidden_size = 8192;
    model.n_heads = 64;
    model.intermediate_size = 28672;
    // The article's checkpoint: estimates (another TP, another split) scale to it.
    model.checkpoint_bytes = Some(70 * GB);
    let gpu = Gpu {
        id: "synthetic-80gb".into(),
        name: "80 GB device (decimal)".into(),
        total: Bytes(80 * GB),
        total_confirmed: true,
        unified_memory: false,
        compute_capability: (9, 0),
    };
    let mut s = Scenario::new(model, gpu);
    s.gpus = 4;
    s.parallel = Parallel {
        tp: 4,
        ..Parallel::default()
    };
    s.engine.gpu_memory_utilization = Some(0.92);
    s.engine.max_model_len = MaxLen::Value(131_072);
    s.engine.max_num_seqs = Some(256);
    let given = |b: u64, what: &str| Measured::new(b, format!("seed 003: {what}"));
    s.runtime.weights = Some(given(gb_f(17.5), "70 GB checkpoint / 4 ranks"));
    s.runtime.non_torch = Some(given(
        10 * GB,
        "assumed 10 GB for all non-weight, non-KV use in the budget",
    ));
    s.runtime.activation_peak = Some(given(0, "included in the 10 GB allowance"));
    s.runtime.cuda_graph = Some(given(0, "included in the 10 GB allowance"));
    s.runtime.free_memory = Some(given(80 * GB, "a synthetic, otherwise empty device"));
    s
}

/// What the examples menu shows of one example, and how to build its scenario. Static, so
/// listing the examples (the page's menu, `example=` checks) never builds a scenario.
#[derive(Clone, Copy, Debug)]
pub struct ExampleInfo {
    pub id: &'static str,
    pub title: &'static str,
    pub summary: &'static str,
    /// The article it comes from.
    pub article: &'static str,
    /// The unit the article works in (seed 003 uses decimal GB; the others GiB).
    pub unit: UnitSystem,
    /// Builds the scenario (parses the catalog rows it uses).
    pub build: fn() -> Scenario,
}

impl ExampleInfo {
    /// The example with its scenario built.
    pub fn example(&'static self) -> Example {
        Example {
            info: self,
            scenario: (self.build)(),
        }
    }
}

/// What builds an example's scenario (it reads the catalog rows it uses).
pub type Build = fn() -> Scenario;

/// Each example's id and scenario, without the menu's words: what the first verdict's programs
/// read (`input::scenario`), so they carry no title, summary or article name.
pub const SCENARIOS: [(&str, Build); 3] = [
    ("s1-three-cards", s1_three_cards),
    ("s2-unified-gate", s2_unified_gate),
    ("s3-synthetic-tp4", s3_synthetic_tp4),
];

/// All three, in article order.
pub const INFO: [ExampleInfo; 3] = [
    ExampleInfo {
        id: SCENARIOS[0].0,
        title: "Three cards, pipeline parallel (DeepSeek-V4-Flash, PP=3)",
        summary: "gpu-memory-utilization acts at the init check and KV sizing, not while loading; the drafter on the last stage shifts the balanced split.",
        article: "000: why two configs crashing on the same line mean VRAM is not the cause",
        unit: UnitSystem::Binary,
        build: SCENARIOS[0].1,
    },
    ExampleInfo {
        id: SCENARIOS[1].0,
        title: "A start gate on unified memory (2x GB10, TP=2)",
        summary: "On unified memory the fraction misfires; the pool is pinned in bytes and the start is gated on MemAvailable.",
        article: "002: memory budget, what one start must fit",
        unit: UnitSystem::Binary,
        build: SCENARIOS[1].1,
    },
    ExampleInfo {
        id: SCENARIOS[2].0,
        title: "A synthetic TP=4 worker (80 GB devices, decimal GB)",
        summary: "The pool is preallocated from the budget; max-num-seqs x max-model-len is demand, not a reservation.",
        article: "003: vLLM crashes with out of memory during startup; debug it",
        unit: UnitSystem::Decimal,
        build: SCENARIOS[2].1,
    },
];

/// The position in [`SCENARIOS`] (and [`INFO`]) of the example with this id, in any case.
pub fn position(id: &str) -> Option<usize> {
    SCENARIOS
        .iter()
        .position(|(e, _)| e.eq_ignore_ascii_case(id.trim()))
}

/// The menu entry with this id.
pub fn info(id: &str) -> Option<&'static ExampleInfo> {
    let all: &'static [ExampleInfo] = &INFO;
    position(id).map(|i| &all[i])
}

/// All three, in article order, with their scenarios built.
pub fn examples() -> Vec<Example> {
    INFO.iter().map(ExampleInfo::example).collect()
}

/// The example with this id (only its scenario is built).
pub fn example(id: &str) -> Option<Example> {
    info(id).map(ExampleInfo::example)
}

/// An example's measurements give way when the user changes what they were taken on, so
/// nothing blocks on (or silently carries) a value no field shows:
/// - another model: every measurement of the example's model (weights, drafter, the runtime
///   terms, the unified gate's overhead) and its speculative method;
/// - another GPU: its free memory, available KV and unified-memory gate (the gate also on a
///   GPU without unified memory); a replaced total below a reading drops that reading;
/// - another sharding (tensor-parallel size, pipeline size, layer split or expert
///   parallelism): every per-rank reading (weights, available KV, the runtime terms, the
///   gate's overhead), each rank now holding another share; the drafter's only with another
///   tensor-parallel size or expert parallelism, as it sits whole on the last stage;
/// - another pipeline size: its per-stage lists.
///
/// `typed(flag)` says whether the user gave that flag themself; what they typed stays. A gate
/// term the user typed for a gate that goes is refused by name. The CLI and the page both
/// apply it after every flag.
///
/// Never inlined: the first verdict's program for catalog links compiles a function whole on
/// its first call, and a link without an example would compile this one inside
/// `input::scenario` (12.8 KB of wasm) without running it.
#[inline(never)]
pub fn give_way(
    s: &mut Scenario,
    example: &Scenario,
    typed: impl Fn(&str) -> bool,
) -> Result<(), (&'static str, String)> {
    let other_gpu = s.gpu.id != example.gpu.id;
    let other_model = s.model != example.model;
    // Another sharding: each rank holds another share of the weights, the drafter, the
    // activations and the communicators, so every per-rank reading is stale. The split is
    // compared as vLLM applies it (a typed default split is the same split).
    let split = |sc: &Scenario| {
        crate::calc::pp_partition(
            sc.model.n_layers,
            sc.parallel.pp,
            sc.parallel.pp_layer_partition.as_deref(),
        )
        .ok()
    };
    let other_layout = s.parallel.tp != example.parallel.tp
        || s.parallel.pp != example.parallel.pp
        || s.parallel.expert_parallel != example.parallel.expert_parallel
        || split(s) != split(example);
    let total = s.gpu.total.0;
    let pp = s.parallel.pp as usize;
    let r = &mut s.runtime;
    if other_model || other_layout {
        if !typed("weights") {
            r.weights = None;
            r.weights_per_stage = None;
        }
        for (flag, slot) in [
            ("activation-peak", &mut r.activation_peak),
            ("non-torch", &mut r.non_torch),
            ("cuda-graph", &mut r.cuda_graph),
            ("load-peak", &mut r.load_peak),
        ] {
            if !typed(flag) {
                *slot = None;
            }
        }
    }
    if (other_model || other_gpu || other_layout) && !typed("available-kv") {
        r.available_kv = None;
        r.available_kv_per_stage = None;
    }
    // Free memory was read on the example's GPU, and cannot exceed a smaller total.
    if !typed("free-memory")
        && (other_gpu || r.free_memory.as_ref().is_some_and(|m| m.bytes.0 > total))
    {
        r.free_memory = None;
    }
    for (flag, list) in [
        ("weights", &mut r.weights_per_stage),
        ("available-kv", &mut r.available_kv_per_stage),
    ] {
        if !typed(flag) && list.as_ref().is_some_and(|l| l.len() != pp) {
            *list = None;
        }
    }
    // The drafter's and the gate's readings are per rank too. The drafter sits whole on the
    // last stage: its share per rank follows TP and EP, not PP or the layer split.
    let other_drafter_sharding = s.parallel.tp != example.parallel.tp
        || s.parallel.expert_parallel != example.parallel.expert_parallel;
    if (other_model || other_drafter_sharding) && !typed("drafter-weights") {
        if let Some(sp) = s.engine.speculative.as_mut() {
            sp.drafter_weights = None;
        }
    }
    if (other_model || other_layout) && !typed("overhead") {
        if let Some(u) = s.unified.as_mut() {
            u.overhead = None;
        }
    }
    // Another model has no use for the example's drafter unless the user chose one.
    let spec_typed = [
        "speculative-config",
        "num-speculative-tokens",
        "drafter-weights",
    ]
    .iter()
    .any(|f| typed(f));
    if other_model && !spec_typed {
        s.engine.speculative = None;
    }
    let gate_applies = s.gpu.unified_memory
        && !other_gpu
        && s.unified
            .as_ref()
            .is_some_and(|u| u.mem_available.bytes.0 <= total);
    if s.unified.is_some() && !typed("mem-available") && !gate_applies {
        s.unified = None;
        for flag in ["headroom", "overhead", "guard-threshold"] {
            if typed(flag) {
                return Err((
                    flag,
                    format!(
                        "{flag} belongs to the example's unified-memory gate, which does not apply to {}; give mem-available to gate this GPU",
                        s.gpu.name
                    ),
                ));
            }
        }
    }
    Ok(())
}
