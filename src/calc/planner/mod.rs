//! `plan`: a worker's start-up in vLLM's order, for every rank of the TP x PP grid.
//!
//! 1. init check (`request_memory`): free at the snapshot >= ceil(total x utilization);
//! 2. load: weights (+ a transient peak) against physical free memory, which the fraction does
//!    not cap;
//! 3. profiling and the KV budget: `requested - non_kv - cuda_graphs`, or the pinned
//!    `--kv-cache-memory-bytes`;
//! 4. the KV layout, the capacity check and `num_blocks` (the minimum over ranks), in `kv`.

mod checks;
mod drafter;
mod finish;
mod layers;
mod ledger;
mod measured;
mod notes;
mod unified;
mod validate;
mod vllm_log;

use self::checks::{capacity_knobs, kv_knobs, kv_sizing_ok};
use self::drafter::draft_rank_weights;
use self::finish::finish;
use self::layers::{hybrid_block_size, hybrid_pages, layer_spec, layer_spec_of, v4_specs, V4State};
use self::ledger::{
    amount, demand, fill_ranks, layers_formula, line, measured_overhead, stage_measure,
};
use self::measured::measured_kv_plan;
use self::notes::sparse_mla_note;
use self::unified::unified_gate;
use self::validate::validate;
use self::vllm_log::{engine_prefix, graph_estimate_log, graph_profiling_log, worker_prefix};
use super::backend;
use super::formula::{Arg, Formula};
use super::kv::{self, KvError, KvSettings, LayerKv, LayerSpec, MaxModelLen, WorkerKv};
use super::model::{LayerKind, Model, MtpDraft};
use super::plan::*;
use super::runtime;
use super::scenario::{KvCacheDtype, MaxLen, Scenario};
use super::units::{ceil_fraction, plural, py_fixed, Bytes, GibText, Grouped};
use super::version::VllmVersion;
use super::weights::{self, Placement};
use super::{pp_partition, CalcError};

pub(super) use self::vllm_log::vllm_suggestion;

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
