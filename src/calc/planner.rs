//! `plan`: a worker's start-up in vLLM's order, for every rank of the TP x PP grid.
//!
//! 1. init check (`request_memory`): free at the snapshot >= ceil(total x utilization);
//! 2. load: weights (+ a transient peak) against physical free memory, which the fraction does
//!    not cap;
//! 3. profiling and the KV budget: `requested - non_kv - cuda_graphs`, or the pinned
//!    `--kv-cache-memory-bytes`;
//! 4. the KV layout, the capacity check and `num_blocks` (the minimum over ranks), in `kv`.

use super::backend;
use super::formula::{Arg, Formula};
use super::kv::{self, KvError, KvSettings, LayerKv, LayerSpec, MaxModelLen, WorkerKv};
use super::model::{LayerKind, Model, MtpDraft};
use super::plan::*;
use super::runtime;
use super::scenario::{KvCacheDtype, MaxLen, Scenario};
use super::solve::SUGGESTION_MARGIN;
use super::units::{
    cdiv, ceil_fraction, plural, py_fixed, py_float_str, Bytes, GibText, Grouped, GIB,
};
use super::version::VllmVersion;
use super::weights::{self, Placement};
use super::{pp_partition, CalcError};

/// The KV cache element size of model `m`'s layers: `auto` follows that model's own dtype (a
/// draft model's layers follow the draft's); fp8_ds_mla's 656-byte blob is handled by the caller.
fn kv_elem_bytes_of(s: &Scenario, m: &Model) -> u64 {
    match s.engine.kv_cache_dtype {
        KvCacheDtype::Auto if m.kv_fp8_from_checkpoint => 1,
        KvCacheDtype::Auto => m.dtype.bytes(),
        KvCacheDtype::Bfloat16 | KvCacheDtype::Float16 => 2,
        d => {
            debug_assert!(d.is_fp8());
            1
        }
    }
}

/// One layer's spec on a rank with TP `tp`.
#[inline]
fn layer_spec(
    s: &Scenario,
    index: u32,
    kind: &LayerKind,
    tp: u64,
    num_spec: u64,
) -> Option<LayerSpec> {
    layer_spec_of(s, &s.model, index, kind, tp, num_spec)
}

/// One layer's spec of model `m` (the target, or a draft model) on a rank with TP `tp`.
fn layer_spec_of(
    s: &Scenario,
    m: &Model,
    index: u32,
    kind: &LayerKind,
    tp: u64,
    num_spec: u64,
) -> Option<LayerSpec> {
    let elem = kv_elem_bytes_of(s, m);
    let heads = (m.n_kv_heads / tp).max(1);
    let per_head = (m.head_dim + m.head_dim_v) * elem;
    let attn = |kind: LayerKv| LayerSpec {
        index,
        kind,
        num_kv_heads: heads,
        per_head_token_bytes: per_head,
        fixed: None,
    };
    // DeepSeek-V3.2: the sparse backend vLLM picks decides whether an fp8 cache becomes the
    // fp8_ds_mla blob.
    let ds_mla = s.engine.kv_cache_dtype == KvCacheDtype::Fp8DsMla
        || (m.sparse_mla.is_some() && runtime::sparse_mla_backend(s).ds_mla);
    let mla_bytes = |mla: &super::model::Mla| {
        if ds_mla {
            656
        } else {
            (mla.kv_lora_rank + mla.qk_rope_head_dim) * elem
        }
    };
    let state = |conv_dim: u64, rec: Vec<u64>| {
        let st = m.linear.expect("linear state validated");
        let dt = m.dtype.bytes();
        LayerKv::Mamba {
            states: vec![
                (vec![st.conv_kernel - 1 + num_spec, conv_dim], dt),
                (rec, dt),
            ],
            blocks_per_request: 2 + num_spec + prefill_checkpoint(s, kind).0,
        }
    };
    Some(match kind {
        LayerKind::Full => attn(LayerKv::Full),
        LayerKind::Sliding { window } => attn(LayerKv::Sliding { window: *window }),
        LayerKind::Chunked { chunk } => attn(LayerKv::Chunked { chunk: *chunk }),
        LayerKind::Mla => {
            let mla = m.mla.as_ref()?;
            LayerSpec {
                index,
                kind: LayerKv::Mla,
                num_kv_heads: 1,
                per_head_token_bytes: mla_bytes(mla),
                fixed: None,
            }
        }
        LayerKind::GatedDeltaNet => {
            let st = m.linear?;
            let conv = (2 * st.k_heads * st.k_dim + st.v_heads * st.v_dim) / tp;
            LayerSpec {
                index,
                kind: state(conv, vec![st.v_heads / tp, st.v_dim, st.k_dim]),
                num_kv_heads: 0,
                per_head_token_bytes: 0,
                fixed: None,
            }
        }
        LayerKind::Mamba2 => {
            let st = m.linear?;
            let conv = (st.v_heads * st.v_dim + 2 * st.k_heads * st.k_dim) / tp;
            LayerSpec {
                index,
                kind: state(conv, vec![st.v_heads / tp, st.v_dim, st.k_dim]),
                num_kv_heads: 0,
                per_head_token_bytes: 0,
                fixed: None,
            }
        }
        LayerKind::SharedKv => return None,
    })
}

/// A linear-attention layer's prefill checkpoint in "align" mode (prefix caching on, the
/// default for hybrid models): (blocks it adds per request, the token alignment of its
/// checkpoints, if it takes them inside a prefill). vLLM 0.33.0:
/// - `MambaMixer2.get_kv_cache_spec` always sets `num_prefill_checkpoint_blocks=1`, and
///   declares no alignment;
/// - `QwenGatedDeltaNetAttention` sets it, with an alignment of 64 tokens
///   (`FLASHINFER_GDN_CHECKPOINT_ALIGNMENT`), only when its prefill runs on FlashInfer: on
///   Hopper (SM 9.0), and on Blackwell (SM 10.x, 12.x) with key heads of 128 and CUDA 13.
fn prefill_checkpoint(s: &Scenario, kind: &LayerKind) -> (u64, Option<u64>) {
    match kind {
        LayerKind::Mamba2 => (1, None),
        LayerKind::GatedDeltaNet if gdn_prefill_on_flashinfer(s) => (1, Some(64)),
        _ => (0, None),
    }
}

/// `_resolve_gdn_prefill_backend` on CUDA: FlashInfer on Hopper, and on Blackwell when the key
/// head is 128 wide (vLLM 0.33's wheels are built for CUDA 13). Elsewhere Triton, which takes
/// no checkpoints inside a prefill. ROCm's MI300X reports 9.4, not Hopper's 9.0.
fn gdn_prefill_on_flashinfer(s: &Scenario) -> bool {
    let k128 = s.model.linear.is_some_and(|l| l.k_dim == 128);
    match s.gpu.compute_capability {
        (9, 0) => true,
        (10 | 12, _) => k128,
        _ => false,
    }
}

/// `get_mamba_prefill_checkpoint_alignment`: the LCM of every linear-attention layer's
/// alignment, or 1 when any layer declares none.
fn checkpoint_alignment(s: &Scenario) -> u64 {
    let mut align = 1;
    for k in &s.model.layers {
        if matches!(k, LayerKind::GatedDeltaNet | LayerKind::Mamba2) {
            match prefill_checkpoint(s, k).1 {
                Some(a) => align = super::units::lcm(align, a),
                None => return 1,
            }
        }
    }
    align
}

/// A hybrid model's pages at TP `tp`: (attention bytes per token, the largest unpadded
/// linear-attention state), or `None` for a model without both.
fn hybrid_pages(s: &Scenario, tp: u64, num_spec: u64) -> Option<(u64, u64)> {
    let m = &s.model;
    let mamba_page = m
        .layers
        .iter()
        .enumerate()
        .filter(|(_, k)| matches!(k, LayerKind::GatedDeltaNet | LayerKind::Mamba2))
        .filter_map(|(i, k)| layer_spec(s, i as u32, k, tp, num_spec))
        .map(|l| match &l.kind {
            LayerKv::Mamba { states, .. } => states
                .iter()
                .map(|(sh, e)| sh.iter().product::<u64>() * e)
                .sum::<u64>(),
            _ => 0,
        })
        .max()?;
    let attn_1 = m
        .layers
        .iter()
        .enumerate()
        .find_map(|(i, k)| {
            layer_spec(s, i as u32, k, tp, 0).filter(|l| !matches!(l.kind, LayerKv::Mamba { .. }))
        })
        .map(|l| l.bytes_per_token())?;
    (mamba_page > 0 && attn_1 > 0).then_some((attn_1, mamba_page))
}

/// `_align_hybrid_block_size`: the attention block grows until its page holds a Mamba state,
/// rounded to the kernel alignment (16, or 128 for MLA hybrids, and a multiple of the prefill
/// checkpoints' alignment).
fn hybrid_block_size(
    s: &Scenario,
    tp: u64,
    num_spec: u64,
    requested: u64,
) -> Option<(u64, String)> {
    // The state includes the speculative tokens' conv rows (get_mamba_state_shape_from_config).
    let (attn_1, mamba_page) = hybrid_pages(s, tp, num_spec)?;
    let checkpoints = checkpoint_alignment(s);
    let block = kv::align_hybrid_block_size(
        requested,
        attn_1,
        mamba_page,
        s.model.mla.is_some(),
        checkpoints,
    );
    if block > requested {
        Some((
            block,
            format!(
                "raised to {block} so the attention page ({} B/token x {block}) holds a {}-byte linear-attention state{} (vLLM's _align_hybrid_block_size)",
                attn_1,
                mamba_page,
                if checkpoints > 1 {
                    format!(", in multiples of the {checkpoints}-token prefill checkpoints")
                } else {
                    String::new()
                }
            ),
        ))
    } else {
        None
    }
}

/// The decoder-layer weights' formula of a stage.
fn layers_formula(layers: (u32, u32), tp: u32) -> Formula {
    if layers.1 <= layers.0 {
        return Formula::from("no decoder layers on this stage");
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

/// A stage's entry of a per-stage measurement list (`None` when the list or entry is absent).
fn stage_measure(
    list: &Option<Vec<Option<super::scenario::Measured>>>,
    stage: usize,
) -> Option<&super::scenario::Measured> {
    list.as_ref()
        .and_then(|v| v.get(stage))
        .and_then(Option::as_ref)
}

fn line(
    term: Term,
    bytes: i128,
    formula: impl Into<Formula>,
    provenance: Provenance,
) -> LedgerLine {
    LedgerLine {
        term,
        bytes,
        formula: formula.into(),
        provenance,
    }
}

/// An amount in a check's message (see [`Message`]): written in the reader's unit.
fn amount(b: i128) -> String {
    Message::amount(b)
}

/// An amount as GiB text, for log lines, notes and formulas.
fn gib_text(b: i128) -> String {
    format!("{:.2} GiB", b as f64 / GIB as f64)
}

fn validate(s: &Scenario) -> Result<(), CalcError> {
    let p = &s.parallel;
    if p.tp == 0 {
        return Err(CalcError::new(
            "tensor-parallel-size",
            "tensor-parallel-size must be at least 1",
        ));
    }
    if p.pp == 0 {
        return Err(CalcError::new(
            "pipeline-parallel-size",
            "pipeline-parallel-size must be at least 1",
        ));
    }
    if p.dp == 0 {
        return Err(CalcError::new(
            "data-parallel-size",
            "data-parallel-size must be at least 1",
        ));
    }
    if p.tp > 1024 || p.pp > 1024 || p.dp > 65_536 {
        return Err(CalcError::new(
            "tensor-parallel-size",
            format!(
                "a {} x {} x {} grid is beyond any deployment Headroom models",
                p.tp, p.pp, p.dp
            ),
        ));
    }
    s.model
        .validate()
        .map_err(|(field, msg)| CalcError::new(field, msg))?;
    // Each dimension is bounded; their product can still describe an impossible model.
    let est = weights::checkpoint_estimate(&s.model);
    if est > 1 << 56 {
        return Err(CalcError::new(
            "config",
            format!(
                "the model's weights would be about {} bytes, beyond any deployment",
                Grouped(i128::from(est))
            ),
        ));
    }
    let heads = s.model.n_heads;
    if heads % u64::from(p.tp) != 0 {
        return Err(CalcError::new(
            "tensor-parallel-size",
            format!(
                "tensor-parallel-size {} does not divide {heads} attention heads (vLLM requires it)",
                p.tp
            ),
        ));
    }
    // Building the model: QKVParallelLinear splits the KV heads over TP, or replicates them
    // when TP is larger (divide(kv_heads, tp) or divide(tp, kv_heads)), and the vocab-parallel
    // embedding splits the padded vocabulary (divide(padded, tp)); vLLM's ensure_divisibility
    // asserts. MLA's latent and DeepSeek-V4's caches have no KV heads to split.
    let tp = u64::from(p.tp);
    let kv = s.model.n_kv_heads;
    if s.model.mla.is_none() && s.model.compressed.is_none() && kv > 0 {
        let (a, b) = if tp >= kv { (tp, kv) } else { (kv, tp) };
        if a % b != 0 {
            return Err(CalcError::new(
                "tensor-parallel-size",
                format!(
                    "tensor-parallel-size {tp} neither divides the {kv} KV heads nor is a multiple of them: vLLM stops while building the model (QKVParallelLinear: AssertionError: {a} is not divisible by {b})"
                ),
            ));
        }
    }
    let padded = s.model.padded_vocab();
    if padded % tp != 0 {
        return Err(CalcError::new(
            "tensor-parallel-size",
            format!(
                "tensor-parallel-size {tp} does not divide the padded vocabulary of {padded}: vLLM stops while building the model (VocabParallelEmbedding: AssertionError: {padded} is not divisible by {tp})"
            ),
        ));
    }
    if p.pp > s.model.n_layers {
        return Err(CalcError::new(
            "pipeline-parallel-size",
            format!(
                "pipeline-parallel-size {} exceeds the {} decoder layers",
                p.pp, s.model.n_layers
            ),
        ));
    }
    let needed = u64::from(p.tp) * u64::from(p.pp) * u64::from(p.dp);
    if u64::from(s.gpus) < needed {
        return Err(CalcError::new(
            "gpus",
            format!(
                "{} {} fewer than tensor-parallel-size x pipeline-parallel-size x data-parallel-size = {needed}",
                s.gpus,
                plural(u64::from(s.gpus), "GPU is", "GPUs are")
            ),
        ));
    }
    if s.gpu.total.0 < GIB {
        return Err(CalcError::new(
            "gpu-memory",
            format!(
                "gpu-memory: a GPU of {} B cannot hold vLLM's CUDA context and a model; give its total memory (at least 1 GiB), e.g. 80GiB",
                Grouped(i128::from(s.gpu.total.0))
            ),
        ));
    }
    if s.gpu.total.0 > 1 << 50 {
        return Err(CalcError::new(
            "gpu-memory",
            format!(
                "gpu-memory: {} B is more than 1 PiB, which is not a real GPU; give the total the driver reports, e.g. 85029027840",
                Grouped(i128::from(s.gpu.total.0))
            ),
        ));
    }
    // Checkpoint formats vLLM 0.33.0 does not load (its quantization registry and AutoGPTQ's
    // type map); older releases were not read for them.
    if s.version == VllmVersion::CURRENT {
        let q = s.model.quant_method.as_str();
        if matches!(q, "bitsandbytes" | "ptpc_fp8") {
            return Err(CalcError::new(
                "config",
                format!("vLLM {} has no {q} quantization method, so it cannot load this checkpoint (older releases may: set vllm-version)", VllmVersion::CURRENT),
            ));
        }
        if matches!(q, "gptq" | "gptq_marlin")
            && (s.model.quant_asymmetric
                || matches!(
                    s.model.quant,
                    super::model::WeightQuant::Int { bits: 2 | 3, .. }
                ))
        {
            return Err(CalcError::new(
                "config",
                format!("vLLM {}'s GPTQ loader takes symmetric 4- and 8-bit weights only (AutoGPTQConfig.TYPE_MAP)", VllmVersion::CURRENT),
            ));
        }
    }
    if !(s.version >= VllmVersion::OLDEST && s.version <= VllmVersion::CURRENT) {
        return Err(CalcError::new(
            "vllm-version",
            format!(
                "vllm-version {} is outside the releases Headroom models ({} to {})",
                s.version,
                VllmVersion::OLDEST,
                VllmVersion::CURRENT
            ),
        ));
    }
    // Byte figures the user gives: each at most 1 PiB, like the GPU, so that sums of them
    // (weights + drafter + transient, the gate's needs) cannot overflow.
    let r = &s.runtime;
    let mut given: Vec<(&'static str, u64)> = vec![("other-tenants", r.other_tenants.0)];
    let opt = |field: &'static str, m: &Option<super::scenario::Measured>| {
        m.as_ref().map(|m| (field, m.bytes.0))
    };
    given.extend(opt("weights", &r.weights));
    given.extend(opt("activation-peak", &r.activation_peak));
    given.extend(opt("non-torch", &r.non_torch));
    given.extend(opt("cuda-graph", &r.cuda_graph));
    given.extend(opt("load-peak", &r.load_peak));
    given.extend(opt("free-memory", &r.free_memory));
    given.extend(opt("available-kv", &r.available_kv));
    // A list is one value per pipeline stage; a list of another length is not read as
    // anything (no value is dropped or repeated silently).
    for (field, list) in [
        ("weights", &r.weights_per_stage),
        ("available-kv", &r.available_kv_per_stage),
    ] {
        if let Some(list) = list {
            if list.len() != s.parallel.pp as usize {
                return Err(CalcError::new(
                    field,
                    format!(
                        "{field}: {} values for {} pipeline {}; give one value, or one per stage",
                        list.len(),
                        s.parallel.pp,
                        plural(u64::from(s.parallel.pp), "stage", "stages")
                    ),
                ));
            }
        }
    }
    for m in r.weights_per_stage.iter().flatten() {
        given.extend(opt("weights", m));
    }
    // Loading always holds something (the embedding, the layers); a measured 0 is a slip.
    let zero =
        "weights of 0 bytes: \"Model loading took\" is never 0 (use - to keep a stage's estimate)";
    if r.weights.as_ref().is_some_and(|m| m.bytes.0 == 0) {
        return Err(CalcError::new("weights", zero));
    }
    for (stage, m) in r.weights_per_stage.iter().flatten().enumerate() {
        if m.as_ref().is_some_and(|m| m.bytes.0 == 0) {
            return Err(CalcError::new("weights", format!("stage {stage}: {zero}")));
        }
    }
    for m in r.available_kv_per_stage.iter().flatten() {
        given.extend(opt("available-kv", m));
    }
    if let Some(sp) = &s.engine.speculative {
        given.extend(opt("drafter-weights", &sp.drafter_weights));
    }
    given.extend(
        s.engine
            .kv_cache_memory_bytes
            .map(|k| ("kv-cache-memory-bytes", k)),
    );
    // The gate compares a start with the OS's MemAvailable, which is the GPU's free memory
    // only where the two share one memory. On a GPU with memory of its own it would gate the
    // start on host RAM: a figure that means nothing.
    if s.unified.is_some() && !s.gpu.unified_memory {
        return Err(CalcError::new(
            "mem-available",
            format!(
                "the unified-memory gate (mem-available) applies where the GPU shares the host's memory, like the GB10; {} has memory of its own, so the host's MemAvailable does not gate its start (for such a box, pick a unified-memory GPU and give its total as gpu-memory)",
                s.gpu.name
            ),
        ));
    }
    if let Some(u) = &s.unified {
        given.extend([
            ("mem-available", u.mem_available.bytes.0),
            ("headroom", u.headroom.0),
            ("prefill-term", u.prefill_term.0),
            ("seat-term", u.seat_term.0),
            ("guard-threshold", u.guard_threshold.0),
        ]);
        given.extend(opt("overhead", &u.overhead));
    }
    if let Some(mk) = &s.model.measured_kv {
        given.push(("measured.kv_pool_bytes", mk.pool_bytes));
        if mk.tokens == 0 || mk.tokens > 1 << 40 {
            return Err(CalcError::new(
                "measured.kv_tokens",
                format!(
                    "measured.kv_tokens {} must be between 1 and 2^40",
                    mk.tokens
                ),
            ));
        }
    }
    for (field, b) in given {
        if b > 1 << 50 {
            return Err(CalcError::new(
                field,
                format!(
                    "{field} {} is more than 1 PiB, beyond any GPU",
                    Grouped(i128::from(b))
                ),
            ));
        }
    }
    // Memory free on a device cannot exceed the device: a measurement above the total (typed,
    // or an example's kept after its GPU total was replaced) would plan memory that is not there.
    let total = s.gpu.total.0;
    // What is left of a GPU (free memory, MemAvailable, the KV cache memory vLLM reports)
    // cannot be more than the GPU holds.
    let mut free_like = vec![
        ("free-memory", r.free_memory.as_ref()),
        (
            "mem-available",
            s.unified.as_ref().map(|u| &u.mem_available),
        ),
        ("available-kv", r.available_kv.as_ref()),
    ];
    free_like.extend(
        r.available_kv_per_stage
            .iter()
            .flatten()
            .map(|m| ("available-kv", m.as_ref())),
    );
    if r.other_tenants.0 > total {
        return Err(CalcError::new(
            "other-tenants",
            format!(
                "other-tenants {} B is more than the GPU's total of {} B",
                Grouped(i128::from(r.other_tenants.0)),
                Grouped(i128::from(total))
            ),
        ));
    }
    for (field, m) in free_like {
        if let Some(m) = m.filter(|m| m.bytes.0 > total) {
            return Err(CalcError::new(
                field,
                format!(
                    "{field} {} B ({}) is more than the GPU's total of {} B",
                    Grouped(i128::from(m.bytes.0)),
                    m.source,
                    Grouped(i128::from(total))
                ),
            ));
        }
    }
    // Counts the user gives: far above any real setting, low enough that products of them
    // (in-flight tokens, capture sizes, demand) stay within 64 bits.
    let counts = [
        ("max-num-seqs", s.engine.max_num_seqs),
        ("max-num-batched-tokens", s.engine.max_num_batched_tokens),
        ("num-gpu-blocks-override", s.engine.num_gpu_blocks_override),
        ("average-request-len", s.average_request_len),
    ];
    for (field, v) in counts {
        if let Some(v) = v {
            if v > 1 << 32 {
                return Err(CalcError::new(
                    field,
                    format!(
                        "{field} {} is beyond any deployment (at most 2^32)",
                        Grouped(i128::from(v))
                    ),
                ));
            }
        }
    }
    if let Some(u) = s.engine.gpu_memory_utilization {
        if !(u > 0.0 && u <= 1.0) {
            return Err(CalcError::new(
                "gpu-memory-utilization",
                format!("gpu-memory-utilization {u} must be in (0, 1]"),
            ));
        }
    }
    if let Some(b) = s.engine.block_size {
        if b == 0 || b > 1 << 20 {
            return Err(CalcError::new(
                "block-size",
                format!("block-size {b} must be between 1 and 1048576"),
            ));
        }
    }
    if let MaxLen::Value(v) = s.engine.max_model_len {
        if v == 0 {
            return Err(CalcError::new(
                "max-model-len",
                "max-model-len must be at least 1, or auto",
            ));
        }
        if v > 1 << 32 {
            return Err(CalcError::new(
                "max-model-len",
                format!("max-model-len {v} is beyond any model's context"),
            ));
        }
    }
    if s.engine.max_num_seqs == Some(0) {
        return Err(CalcError::new(
            "max-num-seqs",
            "max-num-seqs must be at least 1",
        ));
    }
    if s.engine.max_num_batched_tokens == Some(0) {
        return Err(CalcError::new(
            "max-num-batched-tokens",
            "max-num-batched-tokens must be at least 1",
        ));
    }
    if s.engine.num_gpu_blocks_override == Some(0) {
        return Err(CalcError::new(
            "num-gpu-blocks-override",
            "num-gpu-blocks-override must be at least 1",
        ));
    }
    // A selected backend: the dense and MLA ones for ordinary attention (vLLM checks them and
    // stops when one cannot serve the model), V4's sparse ones for DeepSeek-V4 (below).
    if let Some(name) = s.engine.attention_backend {
        match (backend::find(name), s.model.compressed.is_some()) {
            (Some(_), _) if s.gpu.is_rocm() => {
                return Err(CalcError::new(
                    "attention-backend",
                    format!("attention-backend {name}: Headroom plans a selected backend on CUDA GPUs; ROCm's own backends (ROCM_ATTN, ROCM_AITER_FA, ROCM_AITER_MLA ...) have not been read, so leave it auto on this GPU"),
                ))
            }
            (Some(b), false) => backend::validate(s, b)?,
            (Some(_), true) => {
                return Err(CalcError::new(
                    "attention-backend",
                    format!("attention-backend {name}: DeepSeek-V4's attention runs on its own sparse backends (FLASHMLA_SPARSE_DSV4, FLASHINFER_MLA_SPARSE_DSV4); Headroom has not read what vLLM does with {name} for V4's layers, so choose one of those or auto"),
                ))
            }
            (None, false) => {
                return Err(CalcError::new(
                    "attention-backend",
                    format!(
                        "attention-backend {name}: the sparse backends are planned for DeepSeek-V4 only; for {} choose one of {} or auto (vLLM's choice)",
                        s.model.name,
                        backend::BACKENDS.iter().map(|b| b.name).collect::<Vec<_>>().join(", ")
                    ),
                ))
            }
            (None, true) => {}
        }
    }
    if s.engine.kv_cache_dtype == KvCacheDtype::Fp8Inc {
        return Err(CalcError::new(
            "kv-cache-dtype",
            "kv-cache-dtype fp8_inc is Intel Gaudi's (HPU) fp8: no CUDA or ROCm attention backend lists it (read in vLLM 0.33.0), so the engine stops with \"No valid attention backend found\"; use fp8 or fp8_e4m3",
        ));
    }
    if matches!(s.engine.kv_cache_dtype, KvCacheDtype::Fp8DsMla)
        && s.model.mla.is_none()
        && s.model.compressed.is_none()
    {
        return Err(CalcError::new(
            "kv-cache-dtype",
            "kv-cache-dtype fp8_ds_mla applies only to DeepSeek's MLA and V4 models",
        ));
    }
    // Dense MLA (DeepSeek-V2/V3/R1, Kimi-K2): no backend vLLM can pick takes these caches
    // (FLASH_ATTN_MLA keeps 16-bit ones; FLASHMLA, FLASHINFER_MLA, CUTLASS_MLA and TRITON_MLA
    // add fp8 and fp8_e4m3); only the sparse backends read fp8_ds_mla. A selected backend gets
    // vLLM's own message from `backend::validate`.
    if s.model.mla.is_some()
        && s.model.sparse_mla.is_none()
        && s.model.compressed.is_none()
        && s.engine.attention_backend.is_none()
        && matches!(
            s.engine.kv_cache_dtype,
            KvCacheDtype::Fp8DsMla | KvCacheDtype::Fp8E5m2
        )
    {
        return Err(CalcError::new(
            "kv-cache-dtype",
            format!(
                "kv-cache-dtype {}: none of the dense MLA backends {} can run takes it (FLASH_ATTN_MLA lists auto, float16 and bfloat16; FLASHMLA, FLASHINFER_MLA, CUTLASS_MLA and TRITON_MLA add fp8 and fp8_e4m3; fp8_ds_mla is the sparse backends' format, for DeepSeek-V3.2 and V4), so the engine stops with \"No valid attention backend found\"; use fp8 or fp8_e4m3",
                s.engine.kv_cache_dtype.as_str(),
                s.model.name
            ),
        ));
    }
    if s.model
        .layers
        .iter()
        .any(|l| matches!(l, LayerKind::GatedDeltaNet | LayerKind::Mamba2))
        && s.model.linear.is_none()
    {
        return Err(CalcError::new(
            "linear_conv_kernel_dim",
            "the model has linear-attention layers but no state shape (linear_* fields)",
        ));
    }
    if let Some(sp) = &s.engine.speculative {
        if sp.num_speculative_tokens == 0 || sp.num_speculative_tokens > 64 {
            return Err(CalcError::new(
                "speculative-config",
                format!(
                    "num_speculative_tokens {} must be between 1 and 64",
                    sp.num_speculative_tokens
                ),
            ));
        }
    }
    Ok(())
}

/// Computes the plan of every rank. Pure; the same scenario always gives the same plan.
///
/// ```
/// use headroom::calc::{plan, Scenario};
/// use headroom::calc::model::Model;
/// use headroom::calc::scenario::Gpu;
/// use headroom::calc::units::Bytes;
/// let gpu = Gpu { id: "h100".into(), name: "H100".into(), total: Bytes(85_029_158_912),
///     total_confirmed: false, unified_memory: false, compute_capability: (9, 0) };
/// let p = plan(&Scenario::new(Model::example_dense(), gpu)).unwrap();
/// assert!(p.starts());
/// ```
pub fn plan(s: &Scenario) -> Result<Plan, CalcError> {
    let mut notes: Vec<String> = Vec::new();
    let mut t: Option<Scenario> = None;
    // vLLM reads the pin with `if kv_cache_memory_bytes := ...`: 0 is false, so it profiles.
    if s.engine.kv_cache_memory_bytes == Some(0) {
        t.get_or_insert_with(|| s.clone())
            .engine
            .kv_cache_memory_bytes = None;
        notes.push("kv-cache-memory-bytes 0 is the same as leaving it unset: vLLM tests it with `if kv_cache_memory_bytes := ...`, where 0 is false, so the pool is profiled from gpu-memory-utilization.".into());
    }
    // `--dtype auto` (ModelConfig's _resolve_auto_dtype) downcasts a float32 checkpoint to the
    // platform's first dtype: bfloat16, or float16 before Ampere. Both are 2 bytes.
    if s.model.dtype == super::model::ModelDtype::Float32 {
        let m = &mut t.get_or_insert_with(|| s.clone()).model;
        let half = if s.gpu.compute_capability.0 >= 8 {
            super::model::ModelDtype::Bfloat16
        } else {
            super::model::ModelDtype::Float16
        };
        m.dtype = half;
        m.checkpoint_bytes = m.checkpoint_bytes.map(|b| b / 2);
        notes.push(format!(
            "The config's dtype (torch_dtype) is float32: vLLM's default --dtype auto downcasts it to {}, so weights and the KV cache take 2 bytes per value (Headroom has no --dtype flag).",
            half.as_str()
        ));
    }
    let shared_experts = s.model.moe.as_ref().is_some_and(|moe| {
        moe.n_shared_experts > 0 || moe.shared_intermediate_size.is_some_and(|i| i > 0)
    });
    if shared_experts && s.parallel.expert_parallel && s.parallel.tp > 1 && s.parallel.dp > 1 {
        notes.push("Expert parallelism with tensor-parallel-size > 1 and data-parallel-size > 1 makes vLLM's MoE sequence-parallel (use_sequence_parallel_moe, under the default allgather_reducescatter all2all backend): the shared experts are built whole on every rank, not split by TP, and the weights count them so.".into());
    }
    // A catalog row's estimate is scaled to its checkpoint's size, which counts them.
    if !s.model.quant_skips.is_empty()
        && s.model.checkpoint_bytes.is_none()
        && s.runtime.weights.is_none()
        && s.runtime.weights_per_stage.is_none()
    {
        let shown: Vec<&str> = s
            .model
            .quant_skips
            .iter()
            .take(4)
            .map(String::as_str)
            .collect();
        notes.push(format!(
            "The quantization config keeps {}{} unquantized; vLLM loads those at full width, while Headroom's estimate sizes every decoder linear at the quantized width, so it is low by their difference. Give the measured weights (vLLM's \"Model loading took\") for the exact figure.",
            shown.join(", "),
            if s.model.quant_skips.len() > 4 {
                format!(" and {} more", s.model.quant_skips.len() - 4)
            } else {
                String::new()
            }
        ));
    }
    if s.model.vision_encoder && s.model.checkpoint_bytes.is_none() {
        notes.push("The config has a vision_config: the vision encoder's weights are not in the estimate, which sizes the language model. Give the measured weights (vLLM's \"Model loading took\") to include them.".into());
    }
    let mut p = plan_given(t.as_ref().unwrap_or(s))?;
    p.notes.splice(0..0, notes.into_iter().map(Message::new));
    Ok(p)
}

fn plan_given(s: &Scenario) -> Result<Plan, CalcError> {
    validate(s)?;
    let v = s.version;
    let tp = s.parallel.tp;
    let pp = s.parallel.pp;
    let tp64 = u64::from(tp);
    let m: &Model = &s.model;
    let util = s
        .engine
        .gpu_memory_utilization
        .unwrap_or(v.default_utilization());
    let total = s.gpu.total.0;
    let mut notes: Vec<String> = Vec::new();

    // --max-model-len: the model's derived length when unset; vLLM refuses longer ones.
    let derived = m.max_position_embeddings.max(1);
    // LongRoPE defaults to its original length (better quality on shorter sequences).
    let default_len = m.default_max_model_len();
    if m.longrope_default.is_some() && s.engine.max_model_len == MaxLen::ModelDefault {
        notes.push(format!(
            "LongRoPE: vLLM defaults max-model-len to original_max_position_embeddings ({default_len}), not the derived {derived}; give --max-model-len for longer requests."
        ));
    }
    if m.max_len_key.starts_with("none") && !matches!(s.engine.max_model_len, MaxLen::Value(_)) {
        notes.push("The config gives no context length (max_position_embeddings or another length key): vLLM assumes 2048.".into());
    }
    let max_len = match s.engine.max_model_len {
        MaxLen::ModelDefault => MaxModelLen::Value(default_len),
        MaxLen::Value(n) => {
            // With no length key in the config, vLLM takes the length given as it is.
            if n > derived && !m.max_len_key.starts_with("none") {
                return Err(CalcError::new(
                    "max-model-len",
                    format!(
                        "User-specified max_model_len ({n}) is greater than the derived max_model_len ({} in model's config.json). vLLM refuses it unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1.",
                        m.max_len_key
                    ),
                ));
            }
            MaxModelLen::Value(n)
        }
        MaxLen::Auto => {
            if !v.at_least(0, 14) {
                return Err(CalcError::new(
                    "max-model-len",
                    "max-model-len auto needs vLLM 0.14 or newer",
                ));
            }
            MaxModelLen::Auto { upper: default_len }
        }
    };
    let len_for_defaults = runtime::batch_defaults_len(s);
    let (mnbt, mns, _batch_basis) = runtime::batch_defaults(s, len_for_defaults);
    // SchedulerConfig.verify_max_model_len: the defaults keep max_num_seqs <= the batched
    // tokens; given values that break it stop the engine before it starts.
    if mnbt < mns {
        return Err(CalcError::new(
            if s.engine.max_num_seqs.is_some() {
                "max-num-seqs"
            } else {
                "max-num-batched-tokens"
            },
            format!("max_num_batched_tokens ({mnbt}) must be greater than or equal to max_num_seqs ({mns})."),
        ));
    }
    let in_flight = runtime::in_flight_tokens(
        v,
        pp,
        mnbt,
        runtime::async_scheduling(s),
        runtime::runner_v2(s),
    );
    let num_spec = s
        .engine
        .speculative
        .as_ref()
        .map_or(0, |sp| u64::from(sp.num_speculative_tokens));

    // Multi-module MTP (`use_multi_module_mtp`: more than one MTP layer and speculative token)
    // reads num_speculative_tokens ahead mid-prefill, so every sliding window keeps that many
    // tokens less one beyond its trailing edge (kv_cache_planning.py, vLLM 0.33.0).
    let extra_retained_tokens = match &s.engine.speculative {
        Some(sp)
            if sp.method.contains("mtp")
                && m.mtp_layers.max(1).min(sp.num_speculative_tokens) > 1 =>
        {
            num_spec - 1
        }
        _ => 0,
    };
    let parts =
        pp_partition(m.n_layers, pp, s.parallel.pp_layer_partition.as_deref()).map_err(|e| {
            // vLLM's words, then how far off a list of the right length is.
            let sum = s
                .parallel
                .pp_layer_partition
                .as_deref()
                .filter(|l| l.len() == pp as usize)
                .map(|l| l.iter().map(|n| u64::from(*n)).sum::<u64>());
            let n = u64::from(m.n_layers);
            match sum {
                Some(sum) if sum != n => {
                    let (off, way) = if sum > n {
                        (sum - n, "too many")
                    } else {
                        (n - sum, "short")
                    };
                    CalcError::new(
                        "pp-layer-partition",
                        format!(
                            "pp-layer-partition (VLLM_PP_LAYER_PARTITION): {e} That is {off} {} {way}.",
                            plural(off, "layer", "layers")
                        ),
                    )
                }
                _ => CalcError::new(
                    "pp-layer-partition",
                    format!("pp-layer-partition (VLLM_PP_LAYER_PARTITION): {e}"),
                ),
            }
        })?;
    if parts.contains(&0) {
        notes.push("A pipeline stage has no decoder layers; it still holds its share of the embedding or head.".into());
    }

    // Block size: the user's, else the backend's; hybrid models raise it to fit a state page.
    let (mut block_size, mut block_basis) = match s.engine.block_size {
        Some(b) => (b, format!("--block-size {b}")),
        None => runtime::default_block_size(s),
    };
    // Before 0.18 the platform forces an MLA model's block for its backend, a given one too.
    let forced_block = runtime::forced_mla_block(s, block_size);
    if let Some((b, line)) = forced_block {
        block_basis = format!("{block_basis}, forced to {b} by vLLM {v} (\"{line}\")");
        block_size = b;
    }
    // Every CUDA attention backend declares kernel blocks of a multiple of 16 (v0.18+, when
    // backends choose and check block sizes); DeepSeek-V3.2 and V4 check stricter sizes below,
    // and hybrid models have their block raised to an aligned size.
    let hybrid = m
        .layers
        .iter()
        .any(|l| matches!(l, LayerKind::GatedDeltaNet | LayerKind::Mamba2));
    if let Some(b) = s.engine.block_size.filter(|b| b % 16 != 0) {
        if v.at_least(0, 18)
            && !s.gpu.is_rocm()
            && m.sparse_mla.is_none()
            && m.compressed.is_none()
            && !hybrid
        {
            return Err(CalcError::new(
                "block-size",
                format!("--block-size {b}: every CUDA attention backend in vLLM 0.33.0 takes blocks of a multiple of 16 (FLASH_ATTN and TRITON_ATTN any multiple, FLASHINFER 16, 32 or 64, the MLA backends 16, 32, 64 or 128), so vLLM finds no valid backend (\"block_size not supported\"); use a multiple of 16"),
            ));
        }
    }
    if let Some(sp) = m.sparse_mla {
        if s.engine.kv_cache_dtype == KvCacheDtype::Fp8E5m2 {
            return Err(CalcError::new(
                "kv-cache-dtype",
                "kv-cache-dtype fp8_e5m2: no sparse MLA backend DeepSeek-V3.2 can use takes it (vLLM 0.33.0's FLASHMLA_SPARSE, FLASHINFER_MLA_SPARSE and its SM90 variant list fp8, fp8_e4m3 and fp8_ds_mla); choose one of those",
            ));
        }
        if block_size % 64 != 0 {
            return Err(CalcError::new(
                "block-size",
                format!("DeepSeek-V3.2's indexer cache (DEEPSEEK_V32_INDEXER) takes 64-token blocks: vLLM finds no common block size with --block-size {block_size}; use a multiple of 64"),
            ));
        }
        if m.measured_kv.is_none() {
            notes.push(sparse_mla_note(
                s,
                sp,
                len_for_defaults,
                mns,
                mnbt,
                num_spec,
            ));
        }
    }
    // DeepSeek-V4's attention class, decided once: the checks, the pages and the log read it.
    let v4 = m.compressed.as_ref().map(|_| runtime::v4_attention(s));
    if let (Some(c), Some(attn)) = (&m.compressed, &v4) {
        // Only the indexer declares a KV layout; a stage without a ratio-4 layer has none, and
        // vLLM 0.33.0's resolve_kv_cache_layout refuses workers that disagree.
        let mut start = 0usize;
        for (stage, n) in parts.iter().enumerate() {
            let end = start + *n as usize;
            if m.measured_kv.is_none()
                && !c.ratios[start.min(c.ratios.len())..end.min(c.ratios.len())].contains(&4)
            {
                return Err(CalcError::new(
                    "pp-layer-partition",
                    format!("stage {stage} holds no DeepSeek-V4 layer of compress ratio 4, so no indexer cache: vLLM 0.33.0 stops with \"Workers disagree on supported KV cache layouts\"; give every stage a layer of compress ratio 4"),
                ));
            }
            start = end;
        }
        if block_size % 256 != 0 {
            return Err(CalcError::new(
                "block-size",
                format!("DeepSeek-V4's attention and indexer kernels take 256-token blocks: vLLM finds no backend for --block-size {block_size}; use a multiple of 256"),
            ));
        }
        if let Some(b @ ("FLASHINFER_MLA_SPARSE" | "FLASHINFER_MLA_SPARSE_SM120")) =
            s.engine.attention_backend
        {
            return Err(CalcError::new(
                "attention-backend",
                format!("{b} is not a DeepSeek V4 attention backend. Use FLASHINFER_MLA_SPARSE_DSV4 for DeepSeek V4 FlashInfer sparse MLA."),
            ));
        }
        let cc = s.gpu.compute_capability;
        if attn.plain {
            // FlashInfer's plain rows (off SM 12.x; the capability is checked below).
            match s.engine.kv_cache_dtype {
                KvCacheDtype::Fp8DsMla => {
                    return Err(CalcError::new(
                        "kv-cache-dtype",
                        "FLASHINFER_MLA_SPARSE_DSV4 SM10x uses the plain per-tensor FP8 KV layout, not fp8_ds_mla",
                    ))
                }
                KvCacheDtype::Float16 | KvCacheDtype::Fp8E5m2 => {
                    return Err(CalcError::new(
                        "kv-cache-dtype",
                        format!("kv-cache-dtype {}: FLASHINFER_MLA_SPARSE_DSV4 on SM 10.x takes auto, bfloat16, fp8 and fp8_e4m3 only (vLLM: \"kv_cache_dtype not supported\")", s.engine.kv_cache_dtype.as_str()),
                    ))
                }
                _ => {}
            }
        } else if matches!(
            s.engine.kv_cache_dtype,
            KvCacheDtype::Bfloat16 | KvCacheDtype::Float16
        ) {
            return Err(CalcError::new(
                "kv-cache-dtype",
                format!("DeepseekV4 fp8_ds_mla layout only supports fp8 kv-cache, got {}. Please set `--kv-cache-dtype fp8` or select a backend that supports bfloat16 KV cache (on SM 10.x, --attention-backend FLASHINFER_MLA_SPARSE_DSV4).", s.engine.kv_cache_dtype.as_str()),
            ));
        }
        if !s.version.at_least(0, 33) {
            notes.push(format!(
                "DeepSeek-V4's caches, backends and drafters are planned as vLLM 0.33.0 builds them, whatever the release chosen: Headroom has not read how vLLM {} treats V4, and a release from before V4's support cannot load it at all.",
                s.version
            ));
        }
        // The backends' supports_compute_capability: FlashMLA's SM 9.x and 10.x, FlashInfer's
        // 10.x and 12.x. An unknown capability (0) is not checked; ROCm (9.4) has backends of
        // its own (models/deepseek_v4/amd), noted below.
        let rocm = s.gpu.is_rocm();
        if cc.0 != 0 && !rocm {
            let fits = if attn.backend == "FLASHMLA_SPARSE_DSV4" {
                matches!(cc.0, 9 | 10)
            } else {
                matches!(cc.0, 10 | 12)
            };
            if !fits {
                let (field, chosen) = match s.engine.attention_backend {
                    Some(_) => ("attention-backend", "Selected backend"),
                    None => ("gpu", "vLLM's choice for this GPU,"),
                };
                return Err(CalcError::new(
                    field,
                    format!(
                        "{chosen} {} is not valid for this configuration. Reason: ['compute capability not supported']: DeepSeek-V4's backends in vLLM 0.33.0 run on SM 9.x and 10.x (FlashMLA) and 10.x and 12.x (FlashInfer); this GPU is SM {}.{}",
                        attn.backend, cc.0, cc.1
                    ),
                ));
            }
        }
        if rocm {
            notes.push("On ROCm vLLM 0.33.0 runs DeepSeek-V4 with backends of its own (ROCM_FLASHMLA_SPARSE_DSV4 and others in models/deepseek_v4/amd), which Headroom has not read: the plan uses the CUDA layout and backend names.".into());
        } else if cc.0 == 0 {
            notes.push("This GPU's compute capability is not in the catalog, so whether a DeepSeek-V4 backend runs on it is not checked (FlashMLA's need SM 9.x or 10.x, FlashInfer's 10.x or 12.x).".into());
        }
        if m.measured_kv.is_none() {
            let format = if attn.plain {
                let (bytes, name) = if s.engine.kv_cache_dtype.is_fp8() {
                    (c.head_dim, "fp8 (per-tensor e4m3)")
                } else {
                    (2 * c.head_dim, "bf16")
                };
                format!("FLASHINFER_MLA_SPARSE_DSV4 on SM 10.x stores plain {name} rows ({bytes} B per state, pages padded to 512 B)")
            } else {
                "vLLM stores them in DeepSeek's fp8_ds_mla format (584 B per state, pages padded to 576 B)".into()
            };
            notes.push(format!("DeepSeek-V4: every layer keeps a 128-token sliding-window cache (64-token blocks); layers of compress ratio 4 and 128 also keep compressed KV (256-token blocks) and a compressor state (4- or 8-token blocks), and ratio 4 an indexer cache and its compressor. {format} and packs them into groups (_get_packed_kv_cache_groups; five for V4-Flash); nothing is split by TP. Read from vLLM 0.33.0's source and checked against its code on synthetic layouts. Outside the pool (not in the ledger): top-k index buffers (max-num-batched-tokens x 512 x 4 B each), with speculative decoding a 256 MiB hidden-state buffer, and on SM 12.x FlashInfer's 128 MiB workspace."));
        }
    }
    let mut hybrid_raised = false;
    if let Some((b, why)) = hybrid_block_size(s, tp64, num_spec, block_size) {
        block_size = b;
        notes.push(format!("Block size {b} tokens: {why}."));
        block_basis = why;
        hybrid_raised = true;
    }

    // Drafter: MTP/EAGLE layers live on the last stage only.
    let mtp = s
        .engine
        .speculative
        .as_ref()
        .filter(|sp| sp.method.contains("mtp"));
    if mtp.is_some() {
        match &m.mtp_draft {
            MtpDraft::Mapped => {}
            // vLLM renames every MTP alias (deepseek_mtp ...) to mtp before it looks.
            MtpDraft::Unsupported => return Err(CalcError::new(
                "speculative-config",
                format!(
                    "Unsupported speculative method: 'mtp' (vLLM's NotImplementedError). vLLM has an MTP drafter only for the model families whose config it maps to one (DeepSeek-V3/V3.2/V4, Qwen3-Next, Qwen3.5, GLM-4.5, MiMo, ERNIE 4.5 MoE, ...), and {} ({}) is not one of them: use eagle, eagle3, draft_model or ngram.",
                    m.name,
                    if m.architecture.is_empty() { "no architecture given" } else { m.architecture.as_str() },
                ),
            )),
            MtpDraft::Refused(message) => {
                return Err(CalcError::new("speculative-config", message.clone()))
            }
        }
    }
    // MTP modules are reused round-robin: more tokens than modules must be a multiple of them.
    if let Some(sp) = mtp.filter(|sp| {
        let n = sp.num_speculative_tokens;
        m.mtp_layers > 0 && n > m.mtp_layers && n % m.mtp_layers != 0
    }) {
        return Err(CalcError::new(
            "num-speculative-tokens",
            format!(
                "num_speculative_tokens:{} must be divisible by n_predict={} (vLLM's ValueError: the config's {} MTP layers are reused in turn, so more tokens than layers must be a multiple of them)",
                sp.num_speculative_tokens, m.mtp_layers, m.mtp_layers
            ),
        ));
    }
    if s.engine
        .speculative
        .as_ref()
        .is_some_and(|sp| sp.count_assumed)
    {
        notes.push("num_speculative_tokens was not given, so Headroom plans 1 speculative token. vLLM has no default of its own: it takes a drafter config's n_predict where there is one, and otherwise stops with \"num_speculative_tokens must be provided with speculative model unless the draft model config contains an n_predict parameter.\" Give the count (spec-tokens on the page, num_speculative_tokens in the speculative config).".into());
    }
    if mtp.is_some() && m.mtp_layers == 0 {
        notes.push("The model's config declares no MTP layers (vLLM's n_predict: num_nextn_predict_layers, or mtp_num_hidden_layers for Qwen3.5): vLLM's MTP speculation reads them from the checkpoint, so this drafter of one layer is a guess, and the start may fail when vLLM finds none.".into());
    }
    // DSpark's heads (target layers, Markov rank, head_dim) size its weights below.
    let mut dspark: Option<(u32, u64, u64)> = None;
    let drafter_layers: u32 = match &s.engine.speculative {
        Some(sp) if sp.method == "dspark" => match &m.compressed {
            Some(c) => {
                let missing = match (c.dspark_target_layers, c.dspark_markov_rank) {
                    (Some(targets), Some(rank)) => {
                        dspark = Some((targets, rank, c.head_dim));
                        None
                    }
                    (None, None) => Some("dspark_target_layer_ids and dspark_markov_rank"),
                    (None, _) => Some("dspark_target_layer_ids"),
                    _ => Some("dspark_markov_rank"),
                };
                if let Some(missing) = missing {
                    return Err(CalcError::new(
                        "speculative-config",
                        format!(
                            "dspark: vLLM builds DeepSeek-V4's DSpark drafter (DSparkDeepseekV4Model) from the config's dspark_target_layer_ids and dspark_markov_rank, and this config has no {missing}, so the drafter cannot be built. Checkpoints that ship DSpark stages under mtp.* declare them: give that config.json, or use mtp."
                        ),
                    ));
                }
                let declared = if m.mtp_layers > 0 && m.mtp_layers < c.dspark_layers {
                    format!(
                        " The config declares {} MTP layer(s) (num_nextn_predict_layers); DSpark reads mtp.0 to mtp.{} whatever that says.",
                        m.mtp_layers,
                        c.dspark_layers - 1
                    )
                } else {
                    String::new()
                };
                notes.push(format!(
                    "DSpark on DeepSeek-V4: vLLM builds {n} draft decoder layers (n_mtp_layers, 3 when the config does not say) on the last stage, in the target's weight format, from the checkpoint's mtp.* weights; each keeps a sliding-window cache only. Without num_speculative_tokens vLLM takes the draft config's block_size (dspark_block_size); Headroom takes the value given, 1 by default.{declared}",
                    n = c.dspark_layers,
                ));
                c.dspark_layers
            }
            None => {
                return Err(CalcError::new(
                    "speculative-config",
                    format!(
                        "dspark is planned for DeepSeek-V4, whose checkpoint carries the draft layers (mtp.*); for {} a DSpark drafter is a checkpoint of its own (Qwen3, Gemma 4 ...) whose shape Headroom does not know",
                        m.name
                    ),
                ))
            }
        },
        Some(sp) if sp.method.contains("mtp") => m.mtp_layers.max(1),
        Some(sp) if sp.method.starts_with("eagle") => {
            notes.push(format!(
                "{}: vLLM loads the head's own checkpoint, named by the speculative config's model (without one it stops: \"num_speculative_tokens was provided but without speculative model\"); Headroom plans a head of one decoder layer of the target's shape on the last stage, unless drafter-weights gives its size.",
                sp.method
            ));
            1
        }
        _ => 0,
    };
    // A separate draft model, when its shape is known.
    let draft: Option<&Model> = s
        .engine
        .speculative
        .as_ref()
        .filter(|sp| sp.method == "draft_model")
        .and_then(|sp| sp.draft_model.as_deref());
    if let Some(d) = draft {
        notes.push(format!(
            "The draft model {} is loaded whole on every last-stage rank (vLLM builds it with the target's TP and no PP): its {} layer(s) add their KV to that stage's pool; its own activation peak and CUDA graphs are not estimated.",
            d.name, d.n_layers
        ));
        // DraftModelProposer refuses it before loading (use_heterogeneous_vocab, which would
        // allow it, is not a setting Headroom reads).
        if d.vocab_size != m.vocab_size {
            return Err(CalcError::new(
                "draft-model",
                format!(
                    "Target and draft model should have the same vocabulary size. Target model vocab_size={}. Draft model vocab_size={}. Using models with different tokenizers can cause out-of-bounds errors during speculative decoding. (vLLM accepts it only with use_heterogeneous_vocab in the speculative config.)",
                    m.vocab_size, d.vocab_size
                ),
            ));
        }
    }
    if let Some(sp) = s
        .engine
        .speculative
        .as_ref()
        .filter(|sp| sp.method == "draft_model" && sp.draft_model.is_none())
    {
        // vLLM needs the drafter named; Headroom can still plan its measured weights.
        if sp.drafter_weights.is_none() {
            return Err(CalcError::new(
                "draft-model",
                "draft_model needs its drafter: name it in draft-model (the speculative config's \"model\"), or give its measured weights in drafter-weights. Without a model vLLM stops with \"num_speculative_tokens was provided but without speculative model.\"",
            ));
        }
        notes.push("A draft_model drafter is a model of its own, whose shape Headroom does not know until it is named (draft-model on the page, the speculative config's model on the CLI): its weights are the figure given, and its KV cache layers on the last stage are not in the plan, so the pool shown there is larger than vLLM's.".into());
    }

    // Estimated checkpoint calibration: scale component estimates to a known checkpoint total.
    let est_total = weights::checkpoint_estimate(m);
    let scale = m
        .checkpoint_bytes
        .filter(|_| est_total > 0)
        .map(|c| c as f64 / est_total as f64);
    let weight_basis = match (scale, m.checkpoint_bytes) {
        (Some(f), Some(c)) => format!(
            "parameter counts ({}) scaled by {:.3} to the checkpoint's {} bytes",
            m.quant.label(),
            f,
            Grouped(c as i128)
        ),
        _ => format!("parameter counts x bytes per weight ({})", m.quant.label()),
    };
    let scaled = |b: u64| -> u64 { scale.map_or(b, |f| (b as f64 * f).round() as u64) };

    let ranks_n = tp * pp;
    let (pre_est, pre_basis) = runtime::pre_snapshot_estimate(ranks_n);
    let requested = ceil_fraction(total, util);
    let budget_formula = format!(
        "ceil({} x {util}) = {}",
        Grouped(total as i128),
        Grouped(requested as i128)
    );
    let graphs_on = !s.engine.enforce_eager;
    let sizes = runtime::cudagraph_sizes(s, mns, mnbt);
    let mut ranks: Vec<RankPlan> = Vec::new();
    let mut workers: Vec<WorkerKv> = Vec::new();
    let mut checks: Vec<Check> = Vec::new();
    // About a dozen engine lines and six or so a stage: one allocation instead of a doubling run.
    let mut log_lines: Vec<String> = Vec::with_capacity(16 + 8 * parts.len());
    let mut init_fail: Option<(u32, String, String)> = None;
    let mut load_fail: Option<(u32, String)> = None;
    let mut stage_start = 0u32;

    let tp_ranks_identical = !(s.parallel.expert_parallel
        && m.moe
            .as_ref()
            .is_some_and(|moe| moe.n_experts % (tp64 * u64::from(s.parallel.dp)).max(1) != 0));
    // The first lines of every rank's ledger (total, pre-snapshot, free, budget) are the same
    // on every rank: build them once.
    let mut head: Vec<LedgerLine> = Vec::with_capacity(4);
    head.push(line(
        Term::Total,
        i128::from(total),
        format!("{} B as the driver reports it", Grouped(total as i128)),
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
            format!("{} B measured", Grouped(f.bytes.0 as i128)),
        ),
        None => {
            let used = pre_est + s.runtime.other_tenants.0;
            (
                total.saturating_sub(used),
                Provenance::Estimate(pre_basis.clone().into()),
                format!(
                    "{} - {} (context/NCCL) - {} (other tenants)",
                    Grouped(total as i128),
                    Grouped(pre_est as i128),
                    Grouped(s.runtime.other_tenants.0 as i128)
                ),
            )
        }
    };
    head.push(line(
        Term::PreSnapshot,
        i128::from(total) - i128::from(free0),
        format!(
            "total - free at snapshot = {}",
            Grouped((total - free0.min(total)) as i128)
        ),
        // What is in use is what the free figure's estimate assumes (the context and NCCL):
        // its basis comes first.
        Provenance::combine(&[&free_prov, &head[0].provenance]),
    ));
    head.push(line(
        Term::FreeAtStart,
        i128::from(free0),
        free_formula,
        free_prov.clone(),
    ));
    head.push(line(
        Term::Budget,
        i128::from(requested),
        budget_formula.clone(),
        Provenance::combine(&[&head[0].provenance]),
    ));

    // Runtime terms that do not depend on the stage, or only on being the last one.
    let activation_for = |last: bool| {
        let (est, basis) = runtime::activation_estimate(m, tp64, mnbt, mns, last);
        runtime::term(&s.runtime.activation_peak, est, basis)
    };
    let activation_mid = activation_for(false);
    let activation_last = activation_for(true);
    let other_term = {
        let (est, basis) = runtime::other_consumption_estimate();
        runtime::term(&s.runtime.non_torch, est, basis)
    };
    let graphs_term = if graphs_on {
        let (est, basis) = runtime::cuda_graph_estimate(sizes.len());
        runtime::term(&s.runtime.cuda_graph, est, basis)
    } else {
        if s.runtime.cuda_graph.is_some() {
            notes.push(
                "The measured CUDA-graph memory is not used: --enforce-eager captures no graphs."
                    .into(),
            );
        }
        (0, Provenance::Exact)
    };
    // n-gram speculation looks tokens up in the prompt: there is no draft model to load.
    let draft_model = s
        .engine
        .speculative
        .as_ref()
        .is_some_and(|sp| sp.method != "ngram");
    if !draft_model
        && s.engine
            .speculative
            .as_ref()
            .is_some_and(|sp| sp.drafter_weights.is_some())
    {
        notes.push(
            "The drafter weights given are not used: ngram speculation has no draft model.".into(),
        );
    }
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
                let mut r = ranks.last().cloned().expect("rank 0 of the stage");
                r.rank = rank;
                r.tp_rank = tp_rank;
                ranks.push(r);
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
                    && stage_measure(&s.runtime.weights_per_stage, prev)
                        == stage_measure(&s.runtime.weights_per_stage, stage as usize)
                    && stage_measure(&s.runtime.available_kv_per_stage, prev)
                        == stage_measure(&s.runtime.available_kv_per_stage, stage as usize);
                if same {
                    let mut r = ranks[prev * tp as usize].clone();
                    r.rank = rank;
                    r.pp_rank = stage;
                    r.layers = layers;
                    if let Some(l) = r.ledger.iter_mut().find(|l| l.term == Term::WeightsLayers) {
                        l.formula = layers_formula(layers, tp);
                    }
                    ranks.push(r);
                    let mut w = workers[prev].clone();
                    for l in &mut w.layers {
                        l.index += layers.0 - prev_layers.0;
                    }
                    workers.push(w);
                    continue;
                }
            }
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
            };
            let est = weights::rank_weights(m, &place);
            // About twenty lines per rank: allocate once.
            let mut ledger = Vec::with_capacity(24);
            ledger.extend_from_slice(&head);
            // Weights on this rank.
            let measured_w = s
                .runtime
                .weights_per_stage
                .as_ref()
                .and_then(|v| v.get(stage as usize))
                .and_then(Option::as_ref)
                .or(s.runtime.weights.as_ref());
            let (w_total, w_prov) = match measured_w {
                Some(mw) => (mw.bytes.0, Provenance::Measured(mw.source.clone().into())),
                None => {
                    let prov = Provenance::Estimate(weight_basis.clone().into());
                    ledger.push(line(
                        Term::WeightsEmbedding,
                        i128::from(scaled(est.embedding)),
                        if place.holds_embedding(m) {
                            Formula::template(
                                "padded vocab {} / TP {} rows x hidden {} x {} B",
                                &[
                                    Arg::Plain(i128::from(m.padded_vocab())),
                                    Arg::Plain(i128::from(tp)),
                                    Arg::Plain(i128::from(m.hidden_size)),
                                    Arg::Plain(i128::from(m.dtype.bytes())),
                                ],
                            )
                        } else {
                            Formula::from("not on this stage")
                        },
                        prov.clone(),
                    ));
                    ledger.push(line(
                        Term::WeightsLayers,
                        i128::from(scaled(est.layers)),
                        layers_formula(layers, tp),
                        prov.clone(),
                    ));
                    ledger.push(line(
                        Term::WeightsHead,
                        i128::from(scaled(est.head)),
                        if place.holds_head(m) {
                            if place.head_is_embedding(m) {
                                Formula::from("tied to the embedding: final norm only")
                            } else {
                                Formula::template(
                                    "LM head: padded vocab / TP {} rows x hidden + final norm",
                                    &[Arg::Plain(i128::from(tp))],
                                )
                            }
                        } else {
                            Formula::from("not on this stage")
                        },
                        prov.clone(),
                    ));
                    (scaled(est.target()), prov)
                }
            };
            ledger.push(line(
                Term::Weights,
                i128::from(w_total),
                Formula::template(
                    "Model loading took {} GiB",
                    &[Arg::Gib(i128::from(w_total))],
                ),
                w_prov.clone(),
            ));
            let drafter = if last && (drafter_layers > 0 || draft_model) {
                let given = s
                    .engine
                    .speculative
                    .as_ref()
                    .and_then(|sp| sp.drafter_weights.as_ref());
                match (given, draft) {
                    (Some(d), _) => (d.bytes.0, Provenance::Measured(d.source.clone().into())),
                    (None, Some(d)) => (
                            draft_rank_weights(s, d, tp64, u64::from(tp_rank)),
                            Provenance::Estimate(
                                format!(
                                    "the draft model {} from its parameter counts ({}), all of it on every last-stage rank at TP {tp}",
                                    d.name,
                                    d.quant.label()
                                )
                                .into(),
                            ),
                        ),
                    (None, None) => {
                        // DSpark's layers, projections and Markov head; other drafters are
                        // MTP/EAGLE layers.
                        let (bytes, what) = match dspark {
                            Some((targets, rank, head_dim)) => (
                                weights::dspark_bytes(m, &place, drafter_layers, targets, rank, head_dim),
                                format!("{drafter_layers} DSpark layer(s), main_proj over {targets} target layers and a Markov head of rank {rank}, from parameter counts"),
                            ),
                            None => (
                                est.drafter,
                                format!("{drafter_layers} MTP/EAGLE layer(s) from parameter counts"),
                            ),
                        };
                        (scaled(bytes), Provenance::Estimate(what.into()))
                    }
                }
            } else {
                (0, Provenance::Exact)
            };
            if drafter.0 > 0 {
                ledger.push(line(
                    Term::Drafter,
                    i128::from(drafter.0),
                    "the speculative drafter, built on the last PP stage only",
                    drafter.1.clone(),
                ));
            }
            let weights_all = w_total + drafter.0;
            if drafter.0 > 0 {
                // Both model runners load the drafter inside the same DeviceMemoryProfiler as
                // the target (GPUModelRunner.load_model), so vLLM's figure counts both.
                if let Some(l) = ledger.iter_mut().find(|l| l.term == Term::Weights) {
                    l.formula = format!(
                        "target model only; vLLM's \"Model loading took {} GiB\" on this rank also counts the drafter",
                        GibText(i128::from(weights_all))
                    )
                    .into();
                }
            }

            // Load phase: weights plus a transient against physical free memory.
            let (load_peak, load_prov) = runtime::term(
                &s.runtime.load_peak,
                0,
                "no load-time transient assumed".into(),
            );
            if s.runtime.load_peak.is_some() {
                ledger.push(line(
                    Term::LoadPeak,
                    i128::from(load_peak),
                    "transient above the weights while loading (e.g. an expert repack)",
                    load_prov.clone(),
                ));
            }
            // The transient belongs to the target's loading (process_weights_after_loading runs
            // per layer as the target loads); the drafter loads after it. The peak is whichever
            // is larger: target + transient, or target + drafter.
            let load_need = w_total.saturating_add(load_peak).max(weights_all);
            if load_need > free0 && load_fail.is_none() {
                load_fail = Some((
                    rank,
                    format!(
                        "rank {rank} needs {} while loading ({}) but only {} is free: CUDA out of memory while loading. gpu-memory-utilization does not act here.",
                        amount(i128::from(load_need)),
                        // Whichever term set the peak: the transient, or the drafter.
                        if w_total.saturating_add(load_peak) >= weights_all && load_peak > 0 {
                            format!("weights plus a {} transient", amount(i128::from(load_peak)))
                        } else if weights_all > w_total {
                            format!("weights {} and the drafter {}", amount(i128::from(w_total)), amount(i128::from(weights_all - w_total)))
                        } else {
                            "weights".to_string()
                        },
                        amount(i128::from(free0))
                    ),
                ));
            }

            // Profiling terms (the same on every stage but for the last one's logits).
            let (act, act_prov) = if last {
                activation_last.clone()
            } else {
                activation_mid.clone()
            };
            let (other, other_prov) = other_term.clone();
            let (cg, cg_prov) = graphs_term.clone();
            ledger.push(line(
                Term::Activation,
                i128::from(act),
                "profile run's peak above the resting allocation (transient_peak_headroom)",
                act_prov.clone(),
            ));
            ledger.push(line(Term::OtherConsumption, i128::from(other), "persistent non-weight use after the snapshot (runner buffers, workspaces, non-torch)", other_prov.clone()));
            ledger.push(line(
                Term::CudaGraphs,
                i128::from(cg),
                if !graphs_on {
                    Formula::from("--enforce-eager: no CUDA graphs")
                } else if s.engine.kv_cache_memory_bytes.is_some_and(|b| b > 0) {
                    // The pinned path returns before the graph estimate (gpu_worker.py).
                    Formula::template(
                        "{} capture sizes; captured after the pinned pool, which no estimate of them sizes",
                        &[Arg::Plain(sizes.len() as i128)],
                    )
                } else if v.graphs_inside_budget() {
                    Formula::template(
                        "{} capture sizes; vLLM subtracts its own estimate of them inside the budget (v0.20+)",
                        &[Arg::Plain(sizes.len() as i128)],
                    )
                } else {
                    Formula::template(
                        "{} capture sizes; outside the budget before v0.20",
                        &[Arg::Plain(sizes.len() as i128)],
                    )
                },
                cg_prov.clone(),
            ));
            let cg_in_budget = if v.graphs_inside_budget() { cg } else { 0 };

            // The KV budget.
            let stage_avail = s
                .runtime
                .available_kv_per_stage
                .as_ref()
                .and_then(|v| v.get(stage as usize))
                .and_then(Option::as_ref)
                .or(s.runtime.available_kv.as_ref());
            let (available, avail_prov, avail_formula): (i128, Provenance, Formula) = if let Some(
                k,
            ) =
                s.engine.kv_cache_memory_bytes
            {
                (
                        i128::from(k),
                        Provenance::Exact,
                        Formula::template("--kv-cache-memory-bytes {}: pinned, gpu-memory-utilization ignored for the pool", &[Arg::Grouped(i128::from(k))]),
                    )
            } else if let Some(a) = stage_avail {
                (
                    i128::from(a.bytes.0),
                    Provenance::Measured(a.source.clone().into()),
                    Formula::template("{} B measured", &[Arg::Grouped(i128::from(a.bytes.0))]),
                )
            } else {
                let non_kv = i128::from(weights_all) + i128::from(other) + i128::from(act);
                let a = i128::from(requested) - non_kv - i128::from(cg_in_budget);
                (
                    a,
                    Provenance::combine(&[
                        &head[0].provenance,
                        &w_prov,
                        &drafter.1,
                        &act_prov,
                        &other_prov,
                        &cg_prov,
                    ]),
                    Formula::template(
                        "{} - ({} weights{} + {} other + {} activation) - {} graphs = {}",
                        &[
                            Arg::Grouped(i128::from(requested)),
                            Arg::Grouped(i128::from(weights_all)),
                            Arg::Text(if weights_all > w_total {
                                " and drafter"
                            } else {
                                ""
                            }),
                            Arg::Grouped(i128::from(other)),
                            Arg::Grouped(i128::from(act)),
                            Arg::Grouped(i128::from(cg_in_budget)),
                            Arg::Grouped(a),
                        ],
                    ),
                )
            };
            ledger.push(line(
                Term::AvailableKv,
                available,
                avail_formula,
                avail_prov.clone(),
            ));
            // A measured available figure says how much the profile used besides KV: when the
            // other use was not measured itself, it is what the estimates leave of that, so
            // the ledger adds up to the budget and "free after start" holds what was used.
            if s.engine.kv_cache_memory_bytes.is_none()
                && stage_avail.is_some()
                && s.runtime.non_torch.is_none()
            {
                let implied = i128::from(requested)
                    - available
                    - i128::from(weights_all)
                    - i128::from(act)
                    - i128::from(cg_in_budget);
                if implied >= 0 {
                    if let Some(l) = ledger.iter_mut().find(|l| l.term == Term::OtherConsumption) {
                        l.bytes = implied;
                        l.formula = Formula::template(
                            "implied by the measured available KV: budget {} - available {} - weights {} - activation {} - graphs {}",
                            &[
                                Arg::Grouped(i128::from(requested)),
                                Arg::Grouped(available),
                                Arg::Grouped(i128::from(weights_all)),
                                Arg::Grouped(i128::from(act)),
                                Arg::Grouped(i128::from(cg_in_budget)),
                            ],
                        );
                        l.provenance = Provenance::combine(&[
                            &avail_prov,
                            &head[0].provenance,
                            &w_prov,
                            &drafter.1,
                            &act_prov,
                            &cg_prov,
                        ]);
                    }
                } else if !notes
                    .iter()
                    .any(|n| n.starts_with("The measured available KV"))
                {
                    notes.push(format!(
                        "The measured available KV memory leaves {} less for non-KV use than the estimated weights, activation and graphs take: an estimate is high.",
                        amount(-implied)
                    ));
                }
            }

            // Init check (`request_memory`), also with --kv-cache-memory-bytes.
            if free0 < requested && init_fail.is_none() {
                let msg = format!(
                    "Free memory on device cuda:{tp_rank} ({}/{} GiB) on startup is less than desired GPU memory utilization ({}, {} GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.",
                    GibText(i128::from(free0)),
                    GibText(i128::from(total)),
                    crate::calc::units::py_float_str(util),
                    GibText(i128::from(requested))
                );
                init_fail = Some((
                    rank,
                    format!(
                        "rank {rank}: {} free at start is less than the budget ceil(total x {util}) = {}",
                        amount(i128::from(free0)),
                        amount(i128::from(requested))
                    ),
                    msg,
                ));
            }

            // KV specs of this rank's layers (+ drafter layers on the last stage). DeepSeek-V4
            // registers caches of its own, the MTP layer's included.
            let specs = if let Some(c) = m.compressed.as_ref().filter(|_| m.measured_kv.is_none()) {
                let drafted = if last { drafter_layers } else { 0 };
                v4_specs(
                    c,
                    layers,
                    m.n_layers,
                    drafted,
                    block_size,
                    V4State::of(s, c, v4.as_ref().is_some_and(|a| a.plain)),
                )
            } else {
                let mut specs: Vec<LayerSpec> = (layers.0..layers.1)
                    .filter_map(|i| layer_spec(s, i, &m.layers[i as usize], tp64, num_spec))
                    .collect();
                // A draft model's attention layers are registered like the target's: their KV
                // lives in the same pool, on the ranks that run the drafter.
                if let Some(d) = draft.filter(|_| last && m.measured_kv.is_none()) {
                    for (j, k) in d.layers.iter().enumerate() {
                        let index = m.n_layers + j as u32;
                        if let Some(sp) = layer_spec_of(s, d, index, k, tp64, num_spec) {
                            specs.push(sp);
                        }
                    }
                }
                if last && drafter_layers > 0 && m.measured_kv.is_none() {
                    // MTP layers repeat the model's last decoder layer; an EAGLE head is one
                    // full-attention layer.
                    let eagle = s
                        .engine
                        .speculative
                        .as_ref()
                        .is_some_and(|sp| sp.method.starts_with("eagle"));
                    let kind = match m.layers.last() {
                        Some(k) if !eagle => k.clone(),
                        _ if m.mla.is_some() => LayerKind::Mla,
                        _ => LayerKind::Full,
                    };
                    for j in 0..drafter_layers {
                        if let Some(sp) = layer_spec(s, m.n_layers + j, &kind, tp64, num_spec) {
                            specs.push(sp);
                        }
                    }
                }
                // DeepSeek-V3.2: every MLA layer (the MTP layer too) also keeps the indexer's K
                // cache, an MLAAttentionSpec of one 132-byte head whatever --kv-cache-dtype says.
                // Its layer index follows every attention layer's.
                if let Some(sp) = m.sparse_mla.filter(|_| m.measured_kv.is_none()) {
                    let base = m.n_layers + drafter_layers + draft.map_or(0, |d| d.n_layers);
                    let indexed: Vec<u32> = specs
                        .iter()
                        .filter(|l| l.kind == LayerKv::Mla && l.index < m.n_layers + drafter_layers)
                        .map(|l| l.index)
                        .collect();
                    for i in indexed {
                        specs.push(LayerSpec {
                            index: base + i,
                            kind: LayerKv::Mla,
                            num_kv_heads: 1,
                            per_head_token_bytes: sp.cache_bytes_per_token(),
                            fixed: None,
                        });
                    }
                }
                specs
            };
            workers.push(WorkerKv {
                layers: specs,
                available,
            });

            ranks.push(RankPlan {
                rank,
                tp_rank,
                pp_rank: stage,
                layers,
                holds_embedding: place.holds_embedding(m),
                holds_head: place.holds_head(m),
                holds_drafter: last && drafter.0 > 0,
                ledger,
                weights: Bytes(w_total),
                budget: Bytes(requested),
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
    }

    // Phase 0: the unified-memory gate (checked before the launch).
    let unified = s
        .unified
        .as_ref()
        .map(|u| unified_gate(s, u, &ranks, &mut notes));

    // Phase 1: init check.
    let init_ok = init_fail.is_none();
    checks.push(Check {
        phase: Phase::Init,
        ok: init_ok,
        rank: init_fail.as_ref().map(|f| f.0),
        message: match &init_fail {
            Some((_, m, _)) => m.clone().into(),
            None => format!(
                "free memory at start covers the budget ceil(total x {util}) = {} on every rank",
                amount(i128::from(requested))
            )
            .into(),
        },
        vllm_error: init_fail.as_ref().map(|f| f.2.clone()),
        knobs: vec!["gpu-memory-utilization", "other processes on the GPU"],
        not_knobs: vec!["max-model-len", "max-num-seqs", "kv-cache-memory-bytes"],
    });
    // Hybrid models: the config hook turns the Mamba cache to "align" mode, as prefix caching
    // is on by default (MambaModelConfig.verify_and_update_config, in the API server).
    if m.linear.is_some() && v == VllmVersion::CURRENT && !m.architecture.is_empty() {
        log_lines.push(format!(
            "(APIServer pid=P) Mamba cache mode is set to 'align' for {} by default when prefix caching is enabled",
            m.architecture
        ));
    }
    // 0.26 to 0.32 turn async scheduling off for these drafters (VllmConfig.__post_init__).
    if !s.engine.no_async_scheduling && !runtime::async_scheduling(s) {
        if let Some(sp) = &s.engine.speculative {
            log_lines.push(format!("(APIServer pid=P) Async scheduling not supported with {}-based speculative decoding and will be disabled.", sp.method));
        }
    }
    if let Some((_, _, msg)) = &init_fail {
        log_lines.push(format!("ValueError: {msg}"));
        return Ok(finish(
            s, util, parts, ranks, None, checks, None, unified, log_lines, notes,
        ));
    }

    // Phase 2: load.
    checks.push(Check {
        phase: Phase::Load,
        ok: load_fail.is_none(),
        rank: load_fail.as_ref().map(|f| f.0),
        message: match &load_fail {
            Some((_, m)) => m.clone().into(),
            None => "weights (and any load-time transient) fit in the physical free memory of every rank; the utilization fraction does not cap this phase".into(),
        },
        vllm_error: load_fail.as_ref().map(|_| "torch.OutOfMemoryError: CUDA out of memory.".to_string()),
        knobs: vec!["tensor-parallel-size", "pipeline-parallel-size", "pp-layer-partition", "quantization", "enable-expert-parallel", "speculative-config (the drafter loads on the last stage)"],
        not_knobs: vec!["gpu-memory-utilization", "max-model-len", "kv-cache-memory-bytes"],
    });
    // DeepSeek-V4's attention classes switch auto / fp8 to fp8_ds_mla as they are built,
    // during the load; every worker says so once (written once, under the first rank's name).
    let first = worker_prefix(s, &ranks[0]);
    if v4.as_ref().is_some_and(|a| !a.plain) && s.engine.kv_cache_dtype != KvCacheDtype::Fp8DsMla {
        log_lines.push(format!(
            "{first} Using DeepSeek's fp8_ds_mla KV cache format."
        ));
    }
    // Every worker builds its attention layers with the selected backend (cuda.py's
    // `logger.info("Using %s backend.", selected_backend)`, the enum member printed whole).
    if let Some(b) = backend::selected(s) {
        log_lines.push(format!(
            "{first} Using AttentionBackendEnum.{} backend.",
            b.name
        ));
        notes.push(format!("--attention-backend {}: checked as vLLM 0.33.0 checks a selected backend (head size, KV cache dtype, kernel blocks, MLA, attention sinks, compute capability and its own kernel rules), assuming its kernels are built in (FlashAttention 3 on SM 9.x and 4 on SM 10.x, FlashMLA, FlashInfer's TRT-LLM kernels).", b.name));
    }
    if backend::selected(s).is_some_and(|b| b.name == "FLASHINFER")
        && ![16, 32, 64].contains(&block_size)
        && m.layers
            .iter()
            .any(|l| matches!(l, LayerKind::Sliding { .. }))
    {
        notes.push(format!("FLASHINFER's kernels take blocks of 16, 32 or 64: for its sliding-window layers vLLM picks the largest of those within --block-size {block_size} (_largest_kernel_block_within) and pads the pages; Headroom plans those layers at {block_size}, so their pages are not vLLM's."));
    }
    if let Some((_, line)) = forced_block {
        log_lines.push(format!("(APIServer pid=P) {line}"));
        notes.push(format!("Block size {block_size} tokens: {block_basis}."));
    }
    // update_block_size_for_backend and its line arrived in 0.18.
    let backend_line = !hybrid_raised
        && block_size != 16
        && s.engine.block_size.is_none()
        && forced_block.is_none()
        && v.at_least(0, 18);
    if backend_line {
        notes.push(format!("Block size {block_size} tokens: {block_basis}."));
    }
    if load_fail.is_some() {
        // The failing rank never finishes loading, so it never prints "Model loading took".
        log_lines.push("torch.OutOfMemoryError: CUDA out of memory.".to_string());
        return Ok(finish(
            s, util, parts, ranks, None, checks, None, unified, log_lines, notes,
        ));
    }
    for r in ranks.iter().filter(|r| r.tp_rank == 0) {
        // The consumed memory of load_model: the target and, on the last stage, the drafter.
        let loaded = i128::from(r.weights.0) + r.line(Term::Drafter).map_or(0, |l| l.bytes);
        log_lines.push(format!(
            "{} Model loading took {} GiB memory and T seconds",
            worker_prefix(s, r),
            GibText(loaded)
        ));
    }
    notes.push("In vLLM's \"Model loading took X GiB memory and T seconds\", T stands for the load time, which Headroom does not model; P in \"pid=P\" stands for the process id. vLLM writes its level, time and source file between the process and the message; Headroom leaves them out.".into());
    // Each worker sets its block size once its model is loaded (`update_block_size_for_backend`
    // follows `load_model` in both executors); the sentences are alike on every rank, so they
    // are written once, with the first rank's name.
    if hybrid_raised {
        // platforms/interface.py's wording for hybrid models.
        log_lines.push(format!("{first} Setting attention block size to {block_size} tokens to ensure that attention page size is >= mamba page size."));
    }
    // The state page is padded to the attention page; vLLM says by how much.
    if let Some((attn_1, mamba_page)) = hybrid_pages(s, tp64, num_spec) {
        let attn_page = attn_1 * block_size;
        if attn_page > mamba_page {
            let pct = (100 * (attn_page - mamba_page)) as f64 / mamba_page as f64;
            log_lines.push(format!(
                "{first} Padding mamba page size by {}% to ensure that mamba page size and attention page size are exactly equal.",
                py_fixed(pct, 2)
            ));
        }
    }
    if backend_line {
        // The backends' names lead the basis ("FLASHMLA for an fp8 MLA cache ..."); the
        // reason is in the notes, the line stays vLLM's.
        let backend = block_basis
            .split([' ', ',', ':'])
            .next()
            .unwrap_or_default();
        log_lines.push(format!(
            "{first} Setting kv cache block size to {block_size} for {backend} backend(s)."
        ));
    }
    // A pinned pool skips the sizing, not the profile run (gpu_worker.determine_available_memory
    // runs profile_run first): a batch of max-num-batched-tokens on top of what loading left.
    // Within the budget the same shortfall leaves no KV memory, which the sizing reports.
    if s.engine.kv_cache_memory_bytes.is_some_and(|b| b > 0) && measured_overhead(s).is_none() {
        let room = |r: &RankPlan| {
            let get = |t: Term| r.line(t).map_or(0, |l| l.bytes);
            get(Term::FreeAtStart)
                - get(Term::Weights)
                - get(Term::Drafter)
                - get(Term::OtherConsumption)
        };
        let act = |r: &RankPlan| r.line(Term::Activation).map_or(0, |l| l.bytes);
        if let Some(r) = ranks.iter().find(|r| room(r) < act(r)) {
            checks.push(Check {
                phase: Phase::KvSizing,
                ok: false,
                rank: Some(r.rank),
                message: format!(
                    "rank {}: vLLM still runs its profile pass with a pinned pool, and the pass's activation peak ({}) does not fit in what loading left ({}); {} more would be needed",
                    r.rank,
                    amount(act(r)),
                    amount(room(r)),
                    amount(act(r) - room(r))
                )
                .into(),
                vllm_error: Some("torch.OutOfMemoryError: CUDA out of memory.".into()),
                knobs: vec![
                    "max-num-batched-tokens (the profile's batch)",
                    "tensor-parallel-size",
                    "pipeline-parallel-size",
                    "quantization",
                ],
                not_knobs: vec![
                    "kv-cache-memory-bytes (the pool comes after the profile)",
                    "gpu-memory-utilization (a pin ignores it)",
                ],
            });
            log_lines.push("torch.OutOfMemoryError: CUDA out of memory.".to_string());
            return Ok(finish(
                s, util, parts, ranks, None, checks, None, unified, log_lines, notes,
            ));
        }
    }
    let mut graph_line = None;
    let mut graph_estimate = None;
    for r in ranks.iter().filter(|r| r.tp_rank == 0) {
        if let Some(k) = s.engine.kv_cache_memory_bytes {
            let free0 = r.line(Term::FreeAtStart).map_or(0, |l| l.bytes);
            log_lines.push(format!(
                "{} Initial free memory {} GiB, reserved {} GiB memory for KV Cache as specified by kv_cache_memory_bytes config and skipped memory profiling. This does not respect the gpu_memory_utilization config. Only use kv_cache_memory_bytes config when you want manual control of KV cache memory size. If OOM'ed, check the difference of initial free memory between the current run and the previous run where kv_cache_memory_bytes is suggested and update it correspondingly.",
                worker_prefix(s, r),
                GibText(free0),
                GibText(i128::from(k))
            ));
        } else {
            if let Some(line) = graph_estimate_log(s, r, &mut graph_estimate) {
                log_lines.push(line);
            }
            log_lines.push(format!(
                "{} Available KV cache memory: {} GiB",
                worker_prefix(s, r),
                GibText(r.available_kv)
            ));
            if let Some(line) = graph_profiling_log(s, r, util, &mut graph_line) {
                log_lines.push(line);
            }
        }
    }

    // Phases 3 and 4: KV sizing and capacity.
    if m.measured_kv.is_some() {
        return Ok(measured_kv_plan(
            s,
            util,
            parts,
            ranks,
            checks,
            unified,
            log_lines,
            notes,
            len_for_defaults,
            mns,
            mnbt,
            block_size,
        ));
    }
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
        Err(e) => {
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
                KvError::Invalid(msg) => return Err(CalcError::new("model", msg.clone())),
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
                vllm_error: Some(e.vllm_message(v)),
                knobs: if phase == Phase::Capacity {
                    capacity_knobs(s)
                } else {
                    kv_knobs(phase)
                },
                not_knobs: vec!["max-num-seqs (demand, not a reservation)"],
            });
            // get_kv_cache_configs logs the override on every worker before it checks any.
            if let Some(n) = s.engine.num_gpu_blocks_override {
                let bpb = kv::bytes_per_block(&workers, &settings);
                for (i, r) in ranks.iter().enumerate() {
                    let b = bpb.get(i / per_stage).copied().unwrap_or(0);
                    if b > 0 {
                        log_lines.push(format!(
                            "{} Overriding num_gpu_blocks={} with num_gpu_blocks_override={n}",
                            engine_prefix(s),
                            r.available_kv.div_euclid(i128::from(b))
                        ));
                    }
                }
            }
            log_lines.push(format!("ValueError: {}", e.vllm_message(v)));
            Ok(finish(
                s, util, parts, ranks, None, checks, None, unified, log_lines, notes,
            ))
        }
        Ok(kvp) => {
            checks.push(kv_sizing_ok());
            checks.push(Check {
                phase: Phase::Capacity,
                ok: true,
                rank: Some(kvp.limiting_worker as u32),
                message: format!(
                    "one {}-token request needs {} {}; the pool has {} blocks (limiting rank {})",
                    Grouped(i128::from(kvp.max_model_len)),
                    Grouped(i128::from(kvp.blocks_per_request)),
                    plural(kvp.blocks_per_request, "block", "blocks"),
                    Grouped(i128::from(kvp.num_blocks)),
                    kvp.limiting_worker
                )
                .into(),
                vllm_error: None,
                knobs: capacity_knobs(s),
                not_knobs: vec!["max-num-seqs (demand, not a reservation)"],
            });
            if let Some(n) = s.engine.num_gpu_blocks_override {
                // get_kv_cache_configs logs it once per worker, every TP rank included.
                for (w, r) in kvp.workers.iter().zip(&ranks) {
                    // Python's floor division: a rank without memory prints a negative count.
                    if w.bytes_per_block == 0 {
                        continue;
                    }
                    let own = r.available_kv.div_euclid(i128::from(w.bytes_per_block));
                    log_lines.push(format!(
                        "{} Overriding num_gpu_blocks={own} with num_gpu_blocks_override={n}",
                        engine_prefix(s)
                    ));
                }
            }
            if let Some((from, to)) = kvp.auto_fit {
                let lim = &kvp.workers[kvp.auto_fit_worker];
                if to >= from {
                    log_lines.push(format!("{} Auto-fit max_model_len: full model context length {from} fits in available KV cache memory ({} GiB GPU)", engine_prefix(s), GibText(lim.check_memory)));
                } else {
                    log_lines.push(format!("{} Auto-fit max_model_len: reduced from {from} to {to} to fit in available KV cache memory ({} GiB GPU)", engine_prefix(s), GibText(lim.check_memory)));
                }
            }
            if kvp.padding_layers > 0 {
                notes.push(format!("vLLM pads short KV groups with {} logical layer(s) (it warns: \"Add {} padding layers, may waste at most ...\").", kvp.padding_layers, kvp.padding_layers));
            }
            let conc = py_fixed(kvp.max_concurrency, 2);
            if v.at_least(0, 28) {
                log_lines.push(format!(
                    "{} GPU KV cache size: {} tokens, Maximum concurrency for {} tokens per request: {conc}x",
                    engine_prefix(s),
                    Grouped(i128::from(kvp.kv_cache_tokens)),
                    Grouped(i128::from(kvp.max_model_len))
                ));
            } else {
                log_lines.push(format!(
                    "{} GPU KV cache size: {} tokens",
                    engine_prefix(s),
                    Grouped(i128::from(kvp.kv_cache_tokens))
                ));
                log_lines.push(format!(
                    "{} Maximum concurrency for {} tokens per request: {conc}x",
                    engine_prefix(s),
                    Grouped(i128::from(kvp.max_model_len))
                ));
            }
            let graphs_outside = !s.version.graphs_inside_budget();
            let replica = fill_ranks(s, &mut ranks, &kvp, block_size, graphs_outside);
            let demand = Some(demand(s, &ranks, &replica, mns, mnbt));
            Ok(finish(
                s,
                util,
                parts,
                ranks,
                Some(replica),
                checks,
                demand,
                unified,
                log_lines,
                notes,
            ))
        }
    }
}

fn kv_sizing_ok() -> Check {
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
fn capacity_knobs(s: &Scenario) -> Vec<&'static str> {
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

fn kv_knobs(phase: Phase) -> Vec<&'static str> {
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
fn allocation_check(
    s: &Scenario,
    ranks: &[RankPlan],
    log_lines: &mut Vec<String>,
) -> Option<Check> {
    // Between the pool and the graphs, vLLM warms up (gpu_worker.compile_or_warm_up_model):
    // on SM 9.0 and later FlashInfer's autotune runs a batch of max-num-batched-tokens
    // (kernel_warmup.py), so the activation peak comes back on top of the pool, and the
    // allocator keeps it while the graphs are captured. Within the budget that room is always
    // there (the pool leaves the peak's share of it); a pinned pool or a block-count override
    // can take it. Read from 0.33.0, applied from 0.20; not on ROCm (no FlashInfer), nor where
    // a measured overhead stands for the activations.
    let warm_up = s.version.at_least(0, 20)
        && s.gpu.compute_capability.0 >= 9
        && !s.gpu.is_rocm()
        && measured_overhead(s).is_none();
    let act_of = |r: &RankPlan| {
        if warm_up {
            r.line(Term::Activation).map_or(0, |l| l.bytes.max(0))
        } else {
            0
        }
    };
    let worst = ranks
        .iter()
        .min_by_key(|r| r.free_after_start - act_of(r))?;
    let get = |t: Term| worst.line(t).map_or(0, |l| l.bytes);
    let act = act_of(worst);
    let free = worst.free_after_start - act;
    let (ok, message) = if free >= 0 {
        (
            true,
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
            ),
        )
    } else if free + act + get(Term::CudaGraphs) < 0 {
        log_lines.push(format!(
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate {}.",
            gib_text(i128::from(worst.kv_pool.0))
        ));
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
        log_lines.push("torch.OutOfMemoryError: CUDA out of memory.".to_string());
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
        log_lines.push("torch.OutOfMemoryError: CUDA out of memory.".to_string());
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
        vllm_error: (!ok).then(|| "torch.OutOfMemoryError: CUDA out of memory.".to_string()),
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

/// Writes the KV figures and the after-start ledger lines into each rank.
fn fill_ranks(
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
        let pool = u128::from(kvp.num_blocks) * u128::from(w.bytes_per_block);
        let pool = u64::try_from(pool).unwrap_or(u64::MAX);
        r.kv_pool = Bytes(pool);
        r.ledger.push(line(
            Term::KvPool,
            i128::from(pool),
            pool_formula(kvp.num_blocks, w.bytes_per_block, &w.block_pages),
            pool_prov.clone(),
        ));
        let slack = r.available_kv - i128::from(pool);
        r.ledger.push(line(
            Term::KvRoundingSlack,
            slack,
            "available - pool: block rounding and the minimum across ranks",
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
fn push_after_start(
    s: &Scenario,
    r: &mut RankPlan,
    pool: i128,
    graphs_outside: bool,
    outside_prov: &Provenance,
) {
    let get = |t: Term| r.line(t).map_or(0, |l| l.bytes);
    let outside = get(Term::Total) - get(Term::Budget);
    let (held, held_prov, held_what) = held_besides(s, r);
    let free_after = get(Term::FreeAtStart) - get(Term::Weights) - get(Term::Drafter) - held - pool;
    r.ledger.push(line(
        Term::OutsideBudget,
        outside,
        if graphs_outside {
            Formula::from("total - budget (CUDA graphs land here before v0.20)")
        } else {
            Formula::from("total - budget")
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
            "held once started besides weights, drafter and the pool; replaces the estimated activation, other use and graphs",
            held_prov.clone(),
        ));
    }
    let after_prov = free_after_provenance(r, &held_prov);
    r.ledger.push(line(
        Term::FreeAfterStart,
        free_after,
        held_what,
        after_prov,
    ));
}

/// The provenance of a rank's line for `term`; exact when the rank has no such line (a term
/// that is absent contributes 0 bytes, exactly).
fn line_prov(r: &RankPlan, term: Term) -> Provenance {
    r.line(term)
        .map(|l| l.provenance.clone())
        .unwrap_or(Provenance::Exact)
}

/// The unified-memory gate's measured overhead, which stands for the activations, the other
/// use and the graphs once started.
fn measured_overhead(s: &Scenario) -> Option<&super::scenario::Measured> {
    s.unified.as_ref().and_then(|u| u.overhead.as_ref())
}

/// What a rank holds once started besides weights, drafter and the pool. On a unified-memory
/// box with a measured overhead (seed 002: graphs, kernel workspaces and activations at the
/// prefill budget, a remainder of what the box lost), that figure; otherwise the persistent
/// other consumption and CUDA graphs (the activation peak is transient).
fn held_besides(s: &Scenario, r: &RankPlan) -> (i128, Provenance, &'static str) {
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
fn free_after_provenance(r: &RankPlan, held: &Provenance) -> Provenance {
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

fn demand(s: &Scenario, ranks: &[RankPlan], replica: &ReplicaPlan, mns: u64, mnbt: u64) -> Demand {
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
        // Full-attention share scales with length; state/window groups do not.
        let per_req_blocks: u64 = replica
            .groups
            .iter()
            .map(|g| match g.kind {
                LayerKv::Full | LayerKv::Mla => cdiv(avg.min(replica.max_model_len), g.block_size),
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

/// Models whose KV layout the formulas cannot describe: a measured pool/tokens ratio.
#[allow(clippy::too_many_arguments)]
fn measured_kv_plan(
    s: &Scenario,
    util: f64,
    parts: Vec<u32>,
    mut ranks: Vec<RankPlan>,
    mut checks: Vec<Check>,
    unified: Option<UnifiedGate>,
    mut log_lines: Vec<String>,
    mut notes: Vec<String>,
    max_len: u64,
    mns: u64,
    mnbt: u64,
    block_size: u64,
) -> Plan {
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
    notes.push(if s.model.compressed.is_some() {
        "The pool is converted to tokens with the measured ratio this scenario carries, not with vLLM's block arithmetic, which Headroom applies to this layout without it (the token figures in vLLM's log lines follow the ratio too).".into()
    } else {
        "This model's KV layout is not described by vLLM's standard specs here; its pool is converted to tokens with a measured ratio, not vLLM's block arithmetic (so are the token figures in vLLM's log lines).".into()
    });
    // tokens(rank) = available x tokens_ref / pool_ref x (all layers / this stage's layers)
    let tokens_of = |r: &RankPlan| -> u128 {
        let stage_layers = u128::from(r.layers.1 - r.layers.0).max(1);
        let a = r.available_kv.max(0) as u128;
        a * u128::from(mk.tokens) * n / (u128::from(mk.pool_bytes.max(1)) * stage_layers)
    };
    let (lim_idx, tokens) = ranks
        .iter()
        .enumerate()
        .map(|(i, r)| (i, tokens_of(r)))
        .min_by_key(|(_, t)| *t)
        .unwrap_or((0, 0));
    let tokens = u64::try_from(tokens).unwrap_or(u64::MAX);
    // Nothing left for the cache on some rank: vLLM stops at KV sizing, as on the block path.
    let auto = matches!(s.engine.max_model_len, MaxLen::Auto);
    let starved = ranks
        .iter()
        .find(|r| r.available_kv <= 0)
        .map(|r| {
            let why = format!(
                "rank {}: nothing is left for the KV cache ({} available)",
                r.rank,
                amount(r.available_kv)
            );
            (
                r,
                KvError::NoMemory {
                    worker: r.rank as usize,
                    bytes_per_block: 0,
                },
                why,
            )
        })
        .or_else(|| {
            (auto && tokens == 0).then(|| {
                let r = &ranks[lim_idx];
                let why = format!(
                    "rank {}: {} of KV does not hold one token at the measured ratio",
                    r.rank,
                    amount(r.available_kv)
                );
                (
                    r,
                    KvError::AutoFit {
                        worker: r.rank as usize,
                        bytes_per_block: 0,
                    },
                    why,
                )
            })
        });
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
            vllm_error: Some(e.vllm_message(s.version)),
            knobs: kv_knobs(phase),
            not_knobs: vec!["max-model-len"],
        });
        log_lines.push(format!("ValueError: {}", e.vllm_message(s.version)));
        return finish(
            s, util, parts, ranks, None, checks, None, unified, log_lines, notes,
        );
    }
    // --max-model-len auto: the longest length the smallest pool holds, capped at the model's.
    let max_len = if auto {
        let fit = tokens.min(max_len);
        // vLLM quotes the first worker's memory unless another's length is strictly shorter.
        let lim = &ranks[if fit < max_len { lim_idx } else { 0 }];
        if fit < max_len {
            log_lines.push(format!(
                "{} Auto-fit max_model_len: reduced from {max_len} to {fit} to fit in available KV cache memory ({} GiB GPU)",
                engine_prefix(s),
                GibText(lim.available_kv)
            ));
        } else {
            log_lines.push(format!(
                "{} Auto-fit max_model_len: full model context length {max_len} fits in available KV cache memory ({} GiB GPU)",
                engine_prefix(s),
                GibText(lim.available_kv)
            ));
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
            "about the pinned/available KV memory (block rounding unknown without the KV layout); its tokens come from the measured ratio",
            prov.clone(),
        ));
        push_after_start(s, r, pool, graphs_outside, &outside_prov);
    }
    if ok {
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
    finish(
        s,
        util,
        parts,
        ranks,
        Some(replica),
        checks,
        Some(demand),
        unified,
        log_lines,
        notes,
    )
}

/// Seed 002's start gate: needs = weights + drafter + KV pin + overhead + prefill + seats +
/// headroom, against MemAvailable on every box.
fn unified_gate(
    s: &Scenario,
    u: &super::scenario::Unified,
    ranks: &[RankPlan],
    notes: &mut Vec<String>,
) -> UnifiedGate {
    let r = ranks
        .iter()
        .max_by_key(|r| {
            r.line(Term::Weights).map_or(0, |l| l.bytes)
                + r.line(Term::Drafter).map_or(0, |l| l.bytes)
        })
        .expect("at least one rank");
    let w = r.line(Term::Weights).cloned().expect("weights line");
    let d = r.line(Term::Drafter).cloned();
    let kv = match s.engine.kv_cache_memory_bytes {
        Some(k) => line(
            Term::KvPool,
            i128::from(k),
            format!(
                "--kv-cache-memory-bytes {} = {}",
                Grouped(i128::from(k)),
                gib_text(i128::from(k))
            ),
            Provenance::Exact,
        ),
        None => line(
            Term::KvPool,
            r.available_kv,
            "the budget's KV share (pin it with --kv-cache-memory-bytes on unified memory)",
            r.line(Term::AvailableKv)
                .map(|l| l.provenance.clone())
                .unwrap_or(Provenance::Exact),
        ),
    };
    let overhead = match &u.overhead {
        Some(o) => line(
            Term::OtherConsumption,
            i128::from(o.bytes.0),
            "overhead: graphs, workspaces, activations (a remainder, not each part)",
            Provenance::Measured(o.source.clone().into()),
        ),
        None => {
            let sum = r.line(Term::Activation).map_or(0, |l| l.bytes)
                + r.line(Term::OtherConsumption).map_or(0, |l| l.bytes)
                + r.line(Term::CudaGraphs).map_or(0, |l| l.bytes);
            line(
                Term::OtherConsumption,
                sum,
                "activation + other + graphs estimates",
                Provenance::Estimate("sum of the estimated runtime terms".into()),
            )
        }
    };
    let mut lines = vec![w, kv, overhead];
    if let Some(d) = d {
        lines.insert(1, d);
    }
    let extras =
        i128::from(u.prefill_term.0) + i128::from(u.seat_term.0) + i128::from(u.headroom.0);
    let held: i128 = lines.iter().map(|l| l.bytes).sum::<i128>();
    let needs: i128 = held + extras;
    let needs = needs.max(0) as u64;
    let ok = needs <= u.mem_available.bytes.0;
    let util = s
        .engine
        .gpu_memory_utilization
        .unwrap_or(s.version.default_utilization());
    let budget = ceil_fraction(s.gpu.total.0, util);
    let note = format!(
        "On unified memory, gpu-memory-utilization {util} asks for {} of the box's {} total, but the OS, page cache and other containers hold memory vLLM never subtracts: only {} is available. Pin the pool with --kv-cache-memory-bytes and gate the start on MemAvailable.",
        amount(i128::from(budget)),
        amount(i128::from(s.gpu.total.0)),
        amount(i128::from(u.mem_available.bytes.0))
    );
    notes.push(note.clone());
    // The memory guard (seed 002) polls MemAvailable during the load and kills the rank after
    // three polls in a row under its threshold: what is left once the rank holds everything.
    let after_start = i128::from(u.mem_available.bytes.0) - held;
    UnifiedGate {
        lines,
        total: Bytes(held.max(0) as u64),
        needs: Bytes(needs),
        mem_available: u.mem_available.bytes,
        ok,
        utilization_note: Message::new(note),
        after_start,
        guard_threshold: u.guard_threshold,
        guard_ok: after_start >= i128::from(u.guard_threshold.0),
    }
}

/// DeepSeek-V4's caches on one rank, in the order `DeepseekV4Attention` registers them (vLLM
/// 0.33.0, fp8_ds_mla layout): per layer, at ratio 4 the indexer's K cache and its compressor
/// state; in every layer the sliding-window cache; above ratio 1 the compressed KV and its
/// compressor state. MTP layers keep the sliding window only. Each cache gets its own index
/// (five per layer, in registration order), as the packed grouping reads the order.
fn v4_specs(
    c: &super::model::CompressedAttn,
    layers: (u32, u32),
    n_layers: u32,
    drafter_layers: u32,
    block_size: u64,
    layout: V4State,
) -> Vec<LayerSpec> {
    let V4State {
        bytes: state,
        align,
    } = layout;
    // page = round_up(states x content, align), states = block size / tokens per state.
    let page = |block: u64, tokens_per_state: u64, content: u64| {
        ((block / tokens_per_state) * content).div_ceil(align) * align
    };
    // The fixed page says it all (kv counts the growing caches' pages per token).
    let spec = |index: u32, kind: LayerKv, block: u64, page: u64| LayerSpec {
        index,
        num_kv_heads: 1,
        per_head_token_bytes: 0,
        kind,
        fixed: Some(kv::FixedPage {
            block_size: block,
            page,
        }),
    };
    let index_bytes = super::model::indexer_key_bytes(c.index_head_dim);
    let mut out = Vec::new();
    let ids = (layers.0..layers.1).chain(n_layers..n_layers + drafter_layers);
    for id in ids {
        let ratio = match c.ratios.get(id as usize) {
            Some(&r) if id < n_layers => u64::from(r.max(1)),
            _ => 1,
        };
        let base = id * 5;
        if ratio == 4 {
            out.push(spec(
                base,
                LayerKv::Mla,
                block_size,
                page(block_size, 4, index_bytes),
            ));
            // The indexer's compressor: fp32 states of 2 x 2 x index_head_dim, 4-token blocks.
            out.push(spec(
                base + 1,
                LayerKv::MlaSliding { window: 8 },
                4,
                page(4, 1, 2 * 2 * c.index_head_dim * 4),
            ));
        }
        out.push(spec(
            base + 2,
            LayerKv::MlaSliding { window: c.window },
            64,
            page(64, 1, state),
        ));
        if ratio > 1 {
            out.push(spec(
                base + 3,
                LayerKv::Mla,
                block_size,
                page(block_size, ratio, state),
            ));
            // The compressor's state: overlap 2 at ratio 4 (window 8, 4-token blocks), 1 at
            // ratio 128 (window 128, 8-token blocks); 2 x overlap x head_dim fp32 values.
            let (overlap, block) = if ratio == 4 { (2, 4) } else { (1, 8) };
            out.push(spec(
                base + 4,
                LayerKv::MlaSliding {
                    window: overlap * ratio,
                },
                block,
                page(block, 1, 2 * overlap * c.head_dim * 4),
            ));
        }
    }
    out
}

/// A DeepSeek-V4 KV state (one token of the sliding window, one compressed entry) and the page
/// alignment of its layout.
#[derive(Clone, Copy)]
struct V4State {
    bytes: u64,
    align: u64,
}

impl V4State {
    /// fp8_ds_mla: 448 B of fp8 NoPE, 128 B of bf16 RoPE and 8 B of scales per state, pages
    /// padded to 576 B (attention.py); FlashInfer's plain rows on SM 10.x: head_dim elements of
    /// bf16 or fp8, pages padded to 512 B.
    fn of(s: &Scenario, c: &super::model::CompressedAttn, plain: bool) -> V4State {
        if plain {
            let elem = if s.engine.kv_cache_dtype.is_fp8() {
                1
            } else {
                2
            };
            V4State {
                bytes: c.head_dim * elem,
                align: 512,
            }
        } else {
            V4State {
                bytes: 584,
                align: 576,
            }
        }
    }
}

/// DeepSeek-V3.2's note: the layout Headroom plans, and the indexer's buffers outside the pool
/// that its estimates leave out, sized from vLLM 0.33.0's source (read, not measured).
fn sparse_mla_note(
    s: &Scenario,
    sp: super::model::SparseMla,
    max_len: u64,
    mns: u64,
    mnbt: u64,
    num_spec: u64,
) -> String {
    let m = &s.model;
    let layers = u64::from(m.n_layers);
    // topk_indices_buffer: one int32 row of index_topk per batched token, shared by the layers.
    let topk = mnbt * sp.index_topk * 4;
    // One index group per indexer layer: (rows + 1) x (2048 x 4 + 4) bytes.
    let rows = mnbt.min(mns * (1 + num_spec));
    let groups = layers * (rows + 1) * (2048 * 4 + 4);
    let factor = if max_len <= 262_144 { 5 } else { 2 };
    // The indexer's K-gather workspace, reserved in the profile run.
    let gather = max_len * 8 * factor * sp.cache_bytes_per_token();
    // FlashMLA's sparse prefill workspace, with an fp8_ds_mla cache only.
    let prefill = if runtime::sparse_mla_backend(s).ds_mla {
        factor * max_len * 576 * 2
    } else {
        0
    };
    let logits = 512 << 20;
    let total = topk + groups + gather + prefill + logits;
    format!(
        "DeepSeek-V3.2's sparse MLA: beside its latent cache, every layer keeps the indexer's K cache ({} B per token: fp8 keys and their scales), and vLLM puts both in one UniformTypeKVCacheSpecs group, in blocks of 64 tokens or a multiple of 64 (DEEPSEEK_V32_INDEXER's kernel block). Outside the pool, the indexer also takes buffers Headroom's estimates leave out: top-k indices {}, index groups {}, the K-gather workspace {}{} and a 512 MiB logits transient, about {} per rank (sizes read from vLLM 0.33.0's source, not measured).",
        sp.cache_bytes_per_token(),
        amount(i128::from(topk)),
        amount(i128::from(groups)),
        amount(i128::from(gather)),
        if prefill > 0 {
            format!(", FlashMLA's prefill workspace {}", amount(i128::from(prefill)))
        } else {
            String::new()
        },
        amount(i128::from(total))
    )
}

/// The pool's formula: `num_blocks x bytes_per_block`, and what one block holds ("80 layers'
/// pages of 16,384 B + 28 layers' pages of 8,192 B"). Rendered when first read, like the
/// other ledger formulas (plan() must stay cheap).
fn pool_formula(num_blocks: u64, bytes_per_block: u64, runs: &[(u64, u64)]) -> Formula {
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

/// A draft model's weights on one rank: all of its layers, embedding and head, split by the
/// target's TP (vLLM requires the draft's TP to equal it), scaled to its checkpoint when the
/// catalog has one.
fn draft_rank_weights(s: &Scenario, d: &Model, tp: u64, tp_rank: u64) -> u64 {
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

/// The process a rank's log lines come from, as vLLM 0.33.0 names it
/// (`WorkerProc.setup_proc_title_and_log_prefix`, `logger._FORMAT`): one GPU runs the worker
/// inside the engine core ("uni" executor); more than one get a worker process each, named
/// `Worker` with `_DP`, `_PP`, `_TP` and `_EP` ranks where that dimension is larger than one.
/// This is DP rank 0's engine, and its EP rank is the TP rank.
fn worker_prefix(s: &Scenario, r: &RankPlan) -> String {
    let p = &s.parallel;
    if u64::from(p.tp) * u64::from(p.pp) * u64::from(p.dp) <= 1 {
        return engine_prefix(s);
    }
    // Built by hand: a plan writes a dozen of these, and `write!` costs more than the rest.
    let mut name = String::with_capacity(32);
    name.push_str("(Worker");
    if p.dp > 1 {
        name.push_str("_DP0");
    }
    if p.pp > 1 {
        name.push_str("_PP");
        push_digits(&mut name, r.pp_rank);
    }
    if p.tp > 1 {
        name.push_str("_TP");
        push_digits(&mut name, r.tp_rank);
    }
    if p.expert_parallel {
        name.push_str("_EP");
        push_digits(&mut name, r.tp_rank);
    }
    name.push_str(" pid=P)");
    name
}

/// "prefix body", reusing the prefix's allocation (the bodies are long sentences).
fn prefixed(mut prefix: String, body: &str) -> String {
    prefix.reserve(body.len() + 1);
    prefix.push(' ');
    prefix.push_str(body);
    prefix
}

/// Appends `n` in decimal.
fn push_digits(out: &mut String, mut n: u32) {
    let mut buf = [0u8; 10];
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    for b in &buf[i..] {
        out.push(char::from(*b));
    }
}

/// The engine core's prefix: the scheduler side, which logs the pool's tokens and concurrency.
fn engine_prefix(s: &Scenario) -> String {
    if s.parallel.dp > 1 {
        "(EngineCore_DP0 pid=P)"
    } else {
        "(EngineCore pid=P)"
    }
    .to_string()
}

/// vLLM 0.33.0's log of the graph capture it runs while profiling, to estimate the graphs it
/// subtracts inside the budget: Model Runner V2 (0.33.0's default) logs its `capture_model`'s
/// "Graph capturing finished in %.0f secs, took %.2f GiB" (V1's "Estimated CUDA graph memory"
/// line is not printed). The seconds are not known (N); the GiB are Headroom's graph figure.
/// Read from 0.33.0's source only, like the lines after it.
fn graph_estimate_log(
    s: &Scenario,
    r: &RankPlan,
    last: &mut Option<(i128, String)>,
) -> Option<String> {
    let graphs = r.line(Term::CudaGraphs).map_or(0, |l| l.bytes);
    if s.version != VllmVersion::CURRENT || graphs <= 0 || s.engine.enforce_eager {
        return None;
    }
    // Stages with the same estimate share the figure's text.
    if !matches!(last, Some((g, _)) if *g == graphs) {
        *last = Some((graphs, py_fixed(graphs as f64 / GIB as f64, 2)));
    }
    let gib = &last.as_ref()?.1;
    let mut line = worker_prefix(s, r);
    line.reserve(48 + gib.len());
    line.push_str(" Graph capturing finished in N secs, took ");
    line.push_str(gib);
    line.push_str(" GiB");
    Some(line)
}

/// vLLM 0.33.0's `determine_available_memory` log when the CUDA graph estimate is subtracted
/// inside the budget (the default since 0.20.0): what the fraction would be without it. The
/// wording was read from 0.33.0's source only, so older releases do not print it here.
fn graph_profiling_log(
    s: &Scenario,
    r: &RankPlan,
    util: f64,
    last: &mut Option<(i128, i128, String)>,
) -> Option<String> {
    let graphs = r.line(Term::CudaGraphs).map_or(0, |l| l.bytes);
    if s.version != VllmVersion::CURRENT || graphs <= 0 || s.engine.enforce_eager {
        return None;
    }
    let total = r.line(Term::Total)?.bytes;
    // Stages alike in graphs and total print the same sentence: write it once.
    if !matches!(last, Some((g, t, _)) if *g == graphs && *t == total) {
        let delta = graphs as f64 / total as f64;
        // `%.4f` of `min(round(x, 4), 1.0)`: `%.4f` rounds the exact value once, as round()
        // does, and any x above 1 prints as 1.0000 either way.
        let suggested = py_fixed((util + delta).min(1.0), 4);
        *last = Some((
            graphs,
            total,
            format!(
                "CUDA graph memory profiling is enabled (default since v0.21.0). The current --gpu-memory-utilization={} is equivalent to --gpu-memory-utilization={} without CUDA graph memory profiling. To maintain the same effective KV cache size as before, increase --gpu-memory-utilization to {suggested}. To disable, set VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0.",
                py_fixed(util, 4),
                py_fixed(util - delta, 4),
            ),
        ));
    }
    last.as_ref()
        .map(|(_, _, body)| prefixed(worker_prefix(s, r), body))
}

/// vLLM 0.33.0's suggestion after graph capture (`Worker.compile_or_warm_up_model`) for one
/// rank, in bytes. As coded, the graphs count twice: once in the peak (the estimate subtracted
/// inside the budget), once as captured. The plan's log line and `solve` both read it here.
pub(super) struct Suggestion {
    /// Weights, drafter and other use (vLLM's "consumed memory (weights + non-torch)").
    pub consumed: i128,
    /// The activation peak plus the graph estimate applied inside the budget.
    pub peak: i128,
    pub graphs: i128,
    /// `--kv-cache-memory` "to fit into requested memory".
    pub to_requested: i128,
    /// `--kv-cache-memory` "to fully utilize gpu memory".
    pub to_gpu: i128,
}

pub(super) fn vllm_suggestion(r: &RankPlan, eager: bool) -> Suggestion {
    let get = |t: Term| r.line(t).map_or(0, |l| l.bytes);
    let graphs = if eager { 0 } else { get(Term::CudaGraphs) };
    let consumed = get(Term::Weights) + get(Term::Drafter) + get(Term::OtherConsumption);
    let peak = get(Term::Activation) + graphs;
    let non_kv = consumed + peak + graphs;
    let margin = i128::from(SUGGESTION_MARGIN);
    Suggestion {
        consumed,
        peak,
        graphs,
        to_requested: get(Term::Budget) - non_kv - margin,
        to_gpu: get(Term::FreeAtStart) - non_kv - margin,
    }
}

/// The suggestion's log line, printed when the pool was profiled (no pin). Read from 0.33.0's
/// source only.
fn suggestion_log(
    s: &Scenario,
    r: &RankPlan,
    util: f64,
    last: &mut Option<([i128; 7], String)>,
) -> Option<String> {
    if s.version != VllmVersion::CURRENT || s.engine.kv_cache_memory_bytes.is_some() {
        return None;
    }
    let get = |t: Term| r.line(t).map_or(0, |l| l.bytes);
    let v = vllm_suggestion(r, s.engine.enforce_eager);
    let (free, total, requested) = (get(Term::FreeAtStart), get(Term::Total), get(Term::Budget));
    let key = [
        free,
        total,
        requested,
        v.consumed,
        v.peak,
        v.graphs,
        r.available_kv,
    ];
    // Stages alike in every figure (the middle ones) print the same sentence: write it once.
    if !matches!(last, Some((k, _)) if *k == key) {
        let g = GibText;
        let body = format!(
            "Free memory on device ({}/{} GiB) on startup. Desired GPU memory utilization is ({}, {} GiB). Actual usage is {} GiB for consumed memory (weights + non-torch), {} GiB for peak activation, and {} GiB for CUDAGraph memory. Replace gpu_memory_utilization config with `--kv-cache-memory={}` ({} GiB) to fit into requested memory, or `--kv-cache-memory={}` ({} GiB) to fully utilize gpu memory. Current kv cache memory in use is {} GiB.",
            g(free),
            g(total),
            py_float_str(util),
            g(requested),
            g(v.consumed),
            g(v.peak),
            g(v.graphs),
            v.to_requested,
            g(v.to_requested),
            v.to_gpu,
            g(v.to_gpu),
            g(r.available_kv)
        );
        *last = Some((key, body));
    }
    last.as_ref()
        .map(|(_, body)| prefixed(worker_prefix(s, r), body))
}

#[allow(clippy::too_many_arguments)]
fn finish(
    s: &Scenario,
    util: f64,
    parts: Vec<u32>,
    ranks: Vec<RankPlan>,
    replica: Option<ReplicaPlan>,
    mut checks: Vec<Check>,
    demand: Option<Demand>,
    unified: Option<UnifiedGate>,
    mut log_lines: Vec<String>,
    notes: Vec<String>,
) -> Plan {
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
                log_lines.push(line);
                // vLLM's format_gib of the estimate: str(round(x, 2)).
                let est = GibText(capture.as_ref().map_or(0, |(g, _)| *g));
                let mut line = worker_prefix(s, r);
                use std::fmt::Write as _;
                let _ = write!(
                    line,
                    " CUDA graph pool memory: A GiB (actual), {est} GiB (estimated), difference: D GiB (P%)."
                );
                log_lines.push(line);
                compared = true;
            }
        }
        if compared {
            notes.push("After the pool is allocated vLLM captures the CUDA graphs again and compares the pool with its profiling estimate (\"CUDA graph pool memory: A GiB (actual), ...\"): A, D and P stand for the measured pool, the difference and its percentage, which need a GPU; the second \"Graph capturing finished\" repeats Headroom's estimate.".into());
        }
        let mut last = None;
        for r in ranks.iter().filter(|r| r.tp_rank == 0) {
            if let Some(line) = suggestion_log(s, r, util, &mut last) {
                log_lines.push(line);
                suggested = true;
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
    }
}
