//! Every scenario `plan` refuses before it plans: the bounds on what a user can give and the
//! combinations vLLM 0.33.0 stops on before its workers start. The checks that need a resolved
//! setting (the block size, the layer partition, DeepSeek-V4's attention class) are here too,
//! called once `resolve` has it.

use crate::calc::backend;
use crate::calc::model::{CompressedAttn, LayerKind};
use crate::calc::runtime::V4Attention;
use crate::calc::scenario::{AttentionBackend, KvCacheDtype, MaxLen, Scenario};
use crate::calc::units::{plural, Grouped, GIB};
use crate::calc::version::VllmVersion;
use crate::calc::weights::{self};
use crate::calc::{CalcError, Culprit, Input};

/// The scenario's own bounds, in the order a user meets them: the grid and the model, the
/// release, the measured figures, the engine settings.
pub(super) fn validate(s: &Scenario) -> Result<(), CalcError> {
    grid_and_model(s)?;
    release(s)?;
    measurements(s)?;
    engine_settings(s)
}

/// The TP x PP x DP grid, the model's shape against it and the GPU.
/// The most GPUs one engine (TP x PP) may have.
pub const MAX_ENGINE_GPUS: u64 = 1024;
/// The most GPUs a deployment (TP x PP x DP) may have: the `gpus` input's own bound.
pub const MAX_GPUS: u64 = 65_536;

fn grid_and_model(s: &Scenario) -> Result<(), CalcError> {
    let p = &s.parallel;
    if p.tp == 0 {
        return Err(CalcError::new(
            Input::Tp,
            "tensor-parallel-size must be at least 1",
        ));
    }
    if p.pp == 0 {
        return Err(CalcError::new(
            Input::Pp,
            "pipeline-parallel-size must be at least 1",
        ));
    }
    if p.dp == 0 {
        return Err(CalcError::new(
            Input::Dp,
            "data-parallel-size must be at least 1",
        ));
    }
    if p.tp > 1024 || p.pp > 1024 || p.dp > 65_536 {
        return Err(CalcError::new(
            Input::Tp,
            format!(
                "a {} x {} x {} grid is beyond any deployment Headroom models",
                p.tp, p.pp, p.dp
            ),
        ));
    }
    // One engine's grid: every per-rank figure, line and log line is planned for each of its
    // GPUs, so the grid is bounded where outputs stay small; 1,024 GPUs in one engine is far
    // above any published vLLM deployment (16 nodes of 8 at TP=8 x PP=16 for Llama 405B).
    let world = u64::from(p.tp) * u64::from(p.pp);
    if world > MAX_ENGINE_GPUS {
        return Err(CalcError::new(
            if p.pp > 1 { Input::Pp } else { Input::Tp },
            format!(
                "tensor-parallel-size x pipeline-parallel-size = {} x {} = {} GPUs in one engine; Headroom plans engines of at most {} GPUs (far above any published deployment): use fewer stages or a smaller TP, and data-parallel-size for more replicas",
                p.tp,
                p.pp,
                Grouped(i128::from(world)),
                Grouped(i128::from(MAX_ENGINE_GPUS))
            ),
        ));
    }
    let all = world * u64::from(p.dp);
    if all > MAX_GPUS {
        return Err(CalcError::new(
            Input::Dp,
            format!(
                "data-parallel-size {} replicas of {} GPUs are {} GPUs, more than the {} Headroom plans",
                Grouped(i128::from(p.dp)),
                Grouped(i128::from(world)),
                Grouped(i128::from(all)),
                Grouped(i128::from(MAX_GPUS))
            ),
        ));
    }
    s.model
        .validate()
        .map_err(|(key, msg)| CalcError::new(Culprit::ConfigKey(key), msg))?;
    // Each dimension is bounded; their product can still describe an impossible model.
    let est = weights::checkpoint_estimate(&s.model);
    if est > 1 << 56 {
        return Err(CalcError::new(
            Input::Config,
            format!(
                "the model's weights would be about {} bytes, beyond any deployment",
                Grouped(i128::from(est))
            ),
        ));
    }
    let heads = s.model.n_heads;
    if heads % u64::from(p.tp) != 0 {
        return Err(CalcError::new(
            Input::Tp,
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
                Input::Tp,
                format!(
                    "tensor-parallel-size {tp} neither divides the {kv} KV heads nor is a multiple of them: vLLM stops while building the model (QKVParallelLinear: AssertionError: {a} is not divisible by {b})"
                ),
            ));
        }
    }
    let padded = s.model.padded_vocab();
    if padded % tp != 0 {
        return Err(CalcError::new(
            Input::Tp,
            format!(
                "tensor-parallel-size {tp} does not divide the padded vocabulary of {padded}: vLLM stops while building the model (VocabParallelEmbedding: AssertionError: {padded} is not divisible by {tp})"
            ),
        ));
    }
    if p.pp > s.model.n_layers {
        return Err(CalcError::new(
            Input::Pp,
            format!(
                "pipeline-parallel-size {} exceeds the {} decoder layers",
                p.pp, s.model.n_layers
            ),
        ));
    }
    let needed = u64::from(p.tp) * u64::from(p.pp) * u64::from(p.dp);
    if u64::from(s.gpus) < needed {
        return Err(CalcError::new(
            Input::Gpus,
            format!(
                "{} {} fewer than tensor-parallel-size x pipeline-parallel-size x data-parallel-size = {needed}",
                s.gpus,
                plural(u64::from(s.gpus), "GPU is", "GPUs are")
            ),
        ));
    }
    if s.gpu.total.0 < GIB {
        return Err(CalcError::new(
            Input::GpuMemory,
            format!(
                "gpu-memory: a GPU of {} B cannot hold vLLM's CUDA context and a model; give its total memory (at least 1 GiB), e.g. 80GiB",
                Grouped(i128::from(s.gpu.total.0))
            ),
        ));
    }
    if s.gpu.total.0 > 1 << 50 {
        return Err(CalcError::new(
            Input::GpuMemory,
            format!(
                "gpu-memory: {} B is more than 1 PiB, which is not a real GPU; give the total the driver reports, e.g. 85029027840",
                Grouped(i128::from(s.gpu.total.0))
            ),
        ));
    }
    Ok(())
}

/// Checkpoint formats and the releases Headroom has read.
fn release(s: &Scenario) -> Result<(), CalcError> {
    // Checkpoint formats a release no longer loads (its quantization registry).
    let q = s.model.quant_method.as_str();
    if let Some((major, minor)) =
        crate::calc::weight_format::removed_in(q).filter(|(a, b)| s.version.at_least(*a, *b))
    {
        return Err(CalcError::new(
            Input::Config,
            format!("vLLM {} has no {q} quantization method (removed in {major}.{minor}.0), so it cannot load this checkpoint (older releases do: set vllm-version)", s.version),
        ));
    }
    // AutoGPTQ's type map; older releases were not read for it.
    if s.version == VllmVersion::CURRENT
        && matches!(q, "gptq" | "gptq_marlin")
        && (s.model.quant_asymmetric
            || matches!(
                s.model.quant,
                crate::calc::model::WeightQuant::Int { bits: 2 | 3, .. }
            ))
    {
        return Err(CalcError::new(
            Input::Config,
            format!("vLLM {}'s GPTQ loader takes symmetric 4- and 8-bit weights only (AutoGPTQConfig.TYPE_MAP)", VllmVersion::CURRENT),
        ));
    }
    if !s.version.is_modelled() {
        return Err(CalcError::new(
            Input::Vllm,
            format!(
                "vllm-version {} is outside the releases Headroom models ({} to {}: 0.10.2, 0.11.0, 0.11.2, 0.12, 0.13 and 0.14 onward)",
                s.version,
                VllmVersion::OLDEST,
                VllmVersion::CURRENT
            ),
        ));
    }
    super::releases::before_0_14(s)?;
    Ok(())
}

/// The byte figures a user gives (measurements, the unified gate's terms): bounded, one per
/// stage where they are lists, and no more than the GPU holds where they are free memory.
fn measurements(s: &Scenario) -> Result<(), CalcError> {
    // Byte figures the user gives: each at most 1 PiB, like the GPU, so that sums of them
    // (weights + drafter + transient, the gate's needs) cannot overflow.
    let r = &s.runtime;
    let mut given: Vec<(Culprit, u64)> = vec![(Input::Tenants.into(), r.other_tenants.0)];
    let opt = |field: Input, m: &Option<crate::calc::scenario::Measured>| {
        m.as_ref().map(|m| (Culprit::Input(field), m.bytes.0))
    };
    given.extend(opt(Input::Weights, &r.weights));
    given.extend(opt(Input::Activation, &r.activation_peak));
    given.extend(opt(Input::NonTorch, &r.non_torch));
    given.extend(opt(Input::CudaGraph, &r.cuda_graph));
    given.extend(opt(Input::LoadPeak, &r.load_peak));
    given.extend(opt(Input::Free, &r.free_memory));
    given.extend(opt(Input::AvailableKv, &r.available_kv));
    // A list is one value per pipeline stage; a list of another length is not read as
    // anything (no value is dropped or repeated silently).
    for (field, list) in [
        (Input::Weights, &r.weights_per_stage),
        (Input::AvailableKv, &r.available_kv_per_stage),
    ] {
        if let Some(list) = list {
            if list.len() != s.parallel.pp as usize {
                return Err(CalcError::new(
                    field,
                    format!(
                        "{}: {} values for {} pipeline {}; give one value, or one per stage",
                        field.flag(),
                        list.len(),
                        s.parallel.pp,
                        plural(u64::from(s.parallel.pp), "stage", "stages")
                    ),
                ));
            }
        }
    }
    for m in r.weights_per_stage.iter().flatten() {
        given.extend(opt(Input::Weights, m));
    }
    // Loading always holds something (the embedding, the layers); a measured 0 is a slip.
    let zero =
        "weights of 0 bytes: \"Model loading took\" is never 0 (use - to keep a stage's estimate)";
    if r.weights.as_ref().is_some_and(|m| m.bytes.0 == 0) {
        return Err(CalcError::new(Input::Weights, zero));
    }
    for (stage, m) in r.weights_per_stage.iter().flatten().enumerate() {
        if m.as_ref().is_some_and(|m| m.bytes.0 == 0) {
            return Err(CalcError::new(
                Input::Weights,
                format!("stage {stage}: {zero}"),
            ));
        }
    }
    for m in r.available_kv_per_stage.iter().flatten() {
        given.extend(opt(Input::AvailableKv, m));
    }
    if let Some(sp) = &s.engine.speculative {
        given.extend(opt(Input::Drafter, &sp.drafter_weights));
    }
    given.extend(
        s.engine
            .kv_cache_memory_bytes
            .map(|k| (Input::KvBytes.into(), k)),
    );
    // The gate compares a start with the OS's MemAvailable, which is the GPU's free memory
    // only where the two share one memory. On a GPU with memory of its own it would gate the
    // start on host RAM: a figure that means nothing.
    if s.unified.is_some() && !s.gpu.unified_memory {
        return Err(CalcError::new(
            Input::MemAvailable,
            format!(
                "the unified-memory gate (mem-available) applies where the GPU shares the host's memory, like the GB10; {} has memory of its own, so the host's MemAvailable does not gate its start (for such a box, pick a unified-memory GPU and give its total as gpu-memory)",
                s.gpu.name
            ),
        ));
    }
    if let Some(u) = &s.unified {
        given.extend([
            (Input::MemAvailable.into(), u.mem_available.bytes.0),
            (Input::Headroom.into(), u.headroom.0),
            (Culprit::ExampleTerm("prefill-term"), u.prefill_term.0),
            (Culprit::ExampleTerm("seat-term"), u.seat_term.0),
            (Input::GuardThreshold.into(), u.guard_threshold.0),
        ]);
        given.extend(opt(Input::Overhead, &u.overhead));
    }
    if let Some(mk) = &s.model.measured_kv {
        given.push((Culprit::ConfigKey("measured.kv_pool_bytes"), mk.pool_bytes));
        if mk.tokens == 0 || mk.tokens > 1 << 40 {
            return Err(CalcError::new(
                Culprit::ConfigKey("measured.kv_tokens"),
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
                    "{} {} is more than 1 PiB, beyond any GPU",
                    field.name(),
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
        (Input::Free, r.free_memory.as_ref()),
        (
            Input::MemAvailable,
            s.unified.as_ref().map(|u| &u.mem_available),
        ),
        (Input::AvailableKv, r.available_kv.as_ref()),
    ];
    free_like.extend(
        r.available_kv_per_stage
            .iter()
            .flatten()
            .map(|m| (Input::AvailableKv, m.as_ref())),
    );
    if r.other_tenants.0 > total {
        return Err(CalcError::new(
            Input::Tenants,
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
                    "{} {} B ({}) is more than the GPU's total of {} B",
                    field.flag(),
                    Grouped(i128::from(m.bytes.0)),
                    m.source,
                    Grouped(i128::from(total))
                ),
            ));
        }
    }
    Ok(())
}

/// The engine's counts and settings: bounds, the selected backend and the KV cache dtype
/// against the model's attention, the speculative config.
fn engine_settings(s: &Scenario) -> Result<(), CalcError> {
    // Counts the user gives: far above any real setting, low enough that products of them
    // (in-flight tokens, capture sizes, demand) stay within 64 bits.
    let counts = [
        (Input::MaxNumSeqs, s.engine.max_num_seqs),
        (Input::MaxNumBatchedTokens, s.engine.max_num_batched_tokens),
        (
            Input::NumGpuBlocksOverride,
            s.engine.num_gpu_blocks_override,
        ),
        (Input::AvgLen, s.average_request_len),
    ];
    for (field, v) in counts {
        if let Some(v) = v {
            if v > 1 << 32 {
                return Err(CalcError::new(
                    field,
                    format!(
                        "{} {} is beyond any deployment (at most 2^32)",
                        field.flag(),
                        Grouped(i128::from(v))
                    ),
                ));
            }
        }
    }
    if let Some(u) = s.engine.gpu_memory_utilization {
        if !(u > 0.0 && u <= 1.0) {
            return Err(CalcError::new(
                Input::Util,
                format!("gpu-memory-utilization {u} must be in (0, 1]"),
            ));
        }
    }
    if let Some(b) = s.engine.block_size {
        if b == 0 || b > 1 << 20 {
            return Err(CalcError::new(
                Input::BlockSize,
                format!("block-size {b} must be between 1 and 1048576"),
            ));
        }
    }
    if let MaxLen::Value(v) = s.engine.max_model_len {
        if v == 0 {
            return Err(CalcError::new(
                Input::MaxModelLen,
                "max-model-len must be at least 1, or auto",
            ));
        }
        if v > 1 << 32 {
            return Err(CalcError::new(
                Input::MaxModelLen,
                format!("max-model-len {v} is beyond any model's context"),
            ));
        }
    }
    if s.engine.max_num_seqs == Some(0) {
        return Err(CalcError::new(
            Input::MaxNumSeqs,
            "max-num-seqs must be at least 1",
        ));
    }
    if s.engine.max_num_batched_tokens == Some(0) {
        return Err(CalcError::new(
            Input::MaxNumBatchedTokens,
            "max-num-batched-tokens must be at least 1",
        ));
    }
    if s.engine.num_gpu_blocks_override == Some(0) {
        return Err(CalcError::new(
            Input::NumGpuBlocksOverride,
            "num-gpu-blocks-override must be at least 1",
        ));
    }
    // A selected backend: the dense and MLA ones for ordinary attention (vLLM checks them and
    // stops when one cannot serve the model), V4's sparse ones for DeepSeek-V4 (below).
    if let Some(name) = s.engine.attention_backend {
        match (backend::find(name), s.model.compressed.is_some()) {
            (Some(_), _) if s.gpu.is_rocm() => {
                return Err(CalcError::new(
                    Input::AttnBackend,
                    format!("attention-backend {name}: Headroom plans a selected backend on CUDA GPUs; ROCm's own backends (ROCM_ATTN, ROCM_AITER_FA, ROCM_AITER_MLA ...) have not been read, so leave it auto on this GPU"),
                ))
            }
            (Some(b), false) => backend::validate(s, b)?,
            (Some(_), true) => {
                return Err(CalcError::new(
                    Input::AttnBackend,
                    format!("attention-backend {name}: DeepSeek-V4's attention runs on its own sparse backends (FLASHMLA_SPARSE_DSV4, FLASHINFER_MLA_SPARSE_DSV4); Headroom has not read what vLLM does with {name} for V4's layers, so choose one of those or auto"),
                ))
            }
            (None, false) => {
                return Err(CalcError::new(
                    Input::AttnBackend,
                    format!(
                        "attention-backend {name}: the sparse backends are planned for DeepSeek-V4 only; for {} choose one of {} or auto (vLLM's choice)",
                        s.model.name,
                        backend::BACKENDS.iter().map(|b| b.name.as_str()).collect::<Vec<_>>().join(", ")
                    ),
                ))
            }
            (None, true) => {}
        }
    }
    if s.engine.kv_cache_dtype == KvCacheDtype::Fp8Inc {
        return Err(CalcError::new(
            Input::KvDtype,
            "kv-cache-dtype fp8_inc is Intel Gaudi's (HPU) fp8: no CUDA or ROCm attention backend lists it (read in vLLM 0.33.0), so the engine stops with \"No valid attention backend found\"; use fp8 or fp8_e4m3",
        ));
    }
    if matches!(s.engine.kv_cache_dtype, KvCacheDtype::Fp8DsMla)
        && s.model.mla.is_none()
        && s.model.compressed.is_none()
    {
        return Err(CalcError::new(
            Input::KvDtype,
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
            Input::KvDtype,
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
            Culprit::ConfigKey("linear_conv_kernel_dim"),
            "the model has linear-attention layers but no state shape (linear_* fields)",
        ));
    }
    if let Some(sp) = &s.engine.speculative {
        if sp.num_speculative_tokens == 0 || sp.num_speculative_tokens > 64 {
            return Err(CalcError::new(
                Input::Spec,
                format!(
                    "num_speculative_tokens {} must be between 1 and 64",
                    sp.num_speculative_tokens
                ),
            ));
        }
    }
    Ok(())
}

/// DeepSeek-V3.2's sparse MLA: the KV cache dtypes its backends take and the indexer's blocks.
pub(super) fn sparse_mla(s: &Scenario, block_size: u64) -> Result<(), CalcError> {
    if s.engine.kv_cache_dtype == KvCacheDtype::Fp8E5m2 {
        return Err(CalcError::new(
            Input::KvDtype,
            "kv-cache-dtype fp8_e5m2: no sparse MLA backend DeepSeek-V3.2 can use takes it (vLLM 0.33.0's FLASHMLA_SPARSE, FLASHINFER_MLA_SPARSE and its SM90 variant list fp8, fp8_e4m3 and fp8_ds_mla); choose one of those",
        ));
    }
    if block_size % 64 != 0 {
        return Err(CalcError::new(
            Input::BlockSize,
            format!("DeepSeek-V3.2's indexer cache (DEEPSEEK_V32_INDEXER) takes 64-token blocks: vLLM finds no common block size with --block-size {block_size}; use a multiple of 64"),
        ));
    }
    Ok(())
}

/// DeepSeek-V4's caches and backends as vLLM 0.33.0 checks them: an indexer on every stage,
/// 256-token blocks, the backend's KV cache dtypes and compute capabilities; with the notes
/// that say what is planned and what is not.
pub(super) fn v4(
    s: &Scenario,
    c: &CompressedAttn,
    attn: &V4Attention,
    parts: &[u32],
    block_size: u64,
    notes: &mut Vec<String>,
) -> Result<(), CalcError> {
    let m = &s.model;
    // Only the indexer declares a KV layout; a stage without a ratio-4 layer has none, and
    // vLLM 0.33.0's resolve_kv_cache_layout refuses workers that disagree.
    let mut start = 0usize;
    for (stage, n) in parts.iter().enumerate() {
        let end = start + *n as usize;
        if m.measured_kv.is_none()
            && !c.ratios[start.min(c.ratios.len())..end.min(c.ratios.len())].contains(&4)
        {
            let why = format!("stage {stage} holds no DeepSeek-V4 layer of compress ratio 4, so no indexer cache: vLLM 0.33.0 stops with \"Workers disagree on supported KV cache layouts\"");
            // A split the user gave is at fault; else it is vLLM's own split of this many
            // stages, and the stage count is what to change.
            return Err(match s.parallel.pp_layer_partition {
                Some(_) => CalcError::new(
                    Input::PpPartition,
                    format!("{why}; give every stage a layer of compress ratio 4"),
                ),
                None => CalcError::new(
                    Input::Pp,
                    format!(
                        "pipeline-parallel-size {}: in vLLM's even split of {} layers, {why}; use fewer stages, or give pp-layer-partition with a layer of compress ratio 4 in every stage",
                        s.parallel.pp,
                        m.n_layers
                    ),
                ),
            });
        }
        start = end;
    }
    if block_size % 256 != 0 {
        return Err(CalcError::new(
            Input::BlockSize,
            format!("DeepSeek-V4's attention and indexer kernels take 256-token blocks: vLLM finds no backend for --block-size {block_size}; use a multiple of 256"),
        ));
    }
    if let Some(
        b @ (AttentionBackend::FlashinferMlaSparse | AttentionBackend::FlashinferMlaSparseSm120),
    ) = s.engine.attention_backend
    {
        return Err(CalcError::new(
            Input::AttnBackend,
            format!("{b} is not a DeepSeek V4 attention backend. Use FLASHINFER_MLA_SPARSE_DSV4 for DeepSeek V4 FlashInfer sparse MLA."),
        ));
    }
    let cc = s.gpu.compute_capability;
    if attn.plain {
        // FlashInfer's plain rows (off SM 12.x; the capability is checked below).
        match s.engine.kv_cache_dtype {
            KvCacheDtype::Fp8DsMla => {
                return Err(CalcError::new(
                    Input::KvDtype,
                    "FLASHINFER_MLA_SPARSE_DSV4 SM10x uses the plain per-tensor FP8 KV layout, not fp8_ds_mla",
                ))
            }
            KvCacheDtype::Float16 | KvCacheDtype::Fp8E5m2 => {
                return Err(CalcError::new(
                    Input::KvDtype,
                    format!("kv-cache-dtype {}: FLASHINFER_MLA_SPARSE_DSV4 on SM 10.x takes auto, bfloat16, fp8 and fp8_e4m3 only (vLLM: \"kv_cache_dtype not supported\")", s.engine.kv_cache_dtype.as_str()),
                ))
            }
            // The four it takes (fp8_inc was refused above, for every backend).
            KvCacheDtype::Auto
            | KvCacheDtype::Bfloat16
            | KvCacheDtype::Fp8
            | KvCacheDtype::Fp8E4m3
            | KvCacheDtype::Fp8Inc => {}
        }
    } else if matches!(
        s.engine.kv_cache_dtype,
        KvCacheDtype::Bfloat16 | KvCacheDtype::Float16
    ) {
        return Err(CalcError::new(
            Input::KvDtype,
            format!("DeepseekV4 fp8_ds_mla layout only supports fp8 kv-cache, got {}. Please set `--kv-cache-dtype fp8` or select a backend that supports bfloat16 KV cache (on SM 10.x, --attention-backend FLASHINFER_MLA_SPARSE_DSV4).", s.engine.kv_cache_dtype.as_str()),
        ));
    }
    if !s.version.at_least(0, 33) && super::NOTES {
        notes.push(format!(
            "DeepSeek-V4's caches, backends and drafters are planned as vLLM 0.33.0 builds them, whatever the release chosen: Headroom has not read how vLLM {} treats V4, and a release from before V4's support cannot load it at all.",
            s.version
        ));
    }
    // The backends' supports_compute_capability: FlashMLA's SM 9.x and 10.x, FlashInfer's
    // 10.x and 12.x. An unknown capability (0) is not checked; ROCm (an AMD GPU) has backends of
    // its own (models/deepseek_v4/amd), noted below.
    let rocm = s.gpu.is_rocm();
    if cc.0 != 0 && !rocm {
        let fits = if attn.backend == AttentionBackend::FlashmlaSparseDsv4 {
            matches!(cc.0, 9 | 10)
        } else {
            matches!(cc.0, 10 | 12)
        };
        if !fits {
            let (field, chosen) = match s.engine.attention_backend {
                Some(_) => (Input::AttnBackend, "Selected backend"),
                None => (Input::Gpu, "vLLM's choice for this GPU,"),
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
        if super::NOTES {
            notes.push("On ROCm vLLM 0.33.0 runs DeepSeek-V4 with backends of its own (ROCM_FLASHMLA_SPARSE_DSV4 and others in models/deepseek_v4/amd), which Headroom has not read: the plan uses the CUDA layout and backend names.".into());
        }
    } else if cc.0 == 0 && super::NOTES {
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
        if super::NOTES {
            notes.push(format!("DeepSeek-V4: every layer keeps a 128-token sliding-window cache (64-token blocks); layers of compress ratio 4 and 128 also keep compressed KV (256-token blocks) and a compressor state (4- or 8-token blocks), and ratio 4 an indexer cache and its compressor. {format} and packs them into groups (_get_packed_kv_cache_groups; five for V4-Flash); nothing is split by TP. Read from vLLM 0.33.0's source and checked against its code on synthetic layouts. Outside the pool (not in the ledger): top-k index buffers (max-num-batched-tokens x 512 x 4 B each), with speculative decoding a 256 MiB hidden-state buffer, and on SM 12.x FlashInfer's 128 MiB workspace."));
        }
    }
    Ok(())
}
