//! vLLM's defaults that depend on the GPU and release (batch sizes, block size, CUDA-graph
//! sizes, in-flight tokens) and the runtime terms only a GPU can measure, estimated with their
//! stated basis when the user gave no measurement.

use super::model::{LayerKind, Model};
use super::plan::Provenance;
use super::scenario::{AttentionBackend, KvCacheDtype, MaxLen, Measured, Scenario, SpecMethod};
use super::units::{GIB, MIB};
use super::version::VllmVersion;

// An estimate's basis in words is text only the full page shows (empty in the first verdict's
// program, which shows only that a figure is an estimate).
use super::planner::page_text;

/// `max_num_batched_tokens` and `max_num_seqs` defaults for `vllm serve`
/// (`EngineArgs.get_batch_defaults`, API-server column), then the clamps vLLM applies to values
/// the user did not set.
pub fn batch_defaults(s: &Scenario, max_model_len: u64) -> (u64, u64, &'static str) {
    let total = s.gpu.total.0;
    let id = s.gpu.id.to_ascii_lowercase();
    // The 160 GiB tier (B200, B300, MI300X) arrived in 0.28.
    let (mnbt, mns, basis) = if total >= 160 * GIB && s.version.at_least(0, 28) {
        (
            16_384,
            1_024,
            "vLLM's default for GPUs of 160 GiB or more (0.28+)",
        )
    } else if total >= 70 * GIB && !id.contains("a100") && !s.gpu.unified_memory {
        (
            8_192,
            1_024,
            "vLLM's API-server default for GPUs of 70 GiB or more",
        )
    } else {
        (
            2_048,
            256,
            "vLLM's API-server default for GPUs under 70 GiB and A100",
        )
    };
    let mns_user = s.engine.max_num_seqs;
    let mnbt_user = s.engine.max_num_batched_tokens;
    let mut mnbt = mnbt_user.unwrap_or(mnbt);
    let mut mns = mns_user.unwrap_or(mns);
    // The clamp to max_num_seqs x max_model_len moved into EngineArgs in 0.11.2; in 0.11.0
    // and 0.10.2 `_set_default_args` sets the API server's default, so SchedulerConfig's
    // clamp (only for a value it defaults itself) never runs.
    if mnbt_user.is_none() && s.version.at_least_patch(0, 11, 2) {
        mnbt = mnbt.min(mns.saturating_mul(max_model_len));
    }
    if mns_user.is_none() {
        mns = mns.min(mnbt);
    }
    (mnbt, mns, basis)
}

/// The length vLLM sizes the batch defaults for: the one asked for, else the model's default
/// (which is also `auto`'s upper bound).
pub fn batch_defaults_len(s: &Scenario) -> u64 {
    match s.engine.max_model_len {
        MaxLen::Value(n) => n,
        MaxLen::ModelDefault | MaxLen::Auto => s.model.default_max_model_len(),
    }
}

/// `max_concurrent_batches x max_num_batched_tokens`: how many tokens can be in flight, which
/// bounds a sliding-window layer's blocks (v0.26+; before, `max_num_batched_tokens` alone).
/// With async scheduling Model Runner V2 keeps `pp + 1` batches in flight and V1 two at PP 1;
/// without it, a batch per pipeline stage (`VllmConfig.max_concurrent_batches`).
pub fn in_flight_tokens(
    version: VllmVersion,
    pp: u32,
    mnbt: u64,
    async_scheduling: bool,
    runner_v2: bool,
) -> u64 {
    let batches = if !version.at_least(0, 26) {
        1
    } else if !async_scheduling {
        u64::from(pp)
    } else if runner_v2 {
        u64::from(pp) + 1
    } else if pp == 1 {
        2
    } else {
        u64::from(pp)
    };
    batches * mnbt
}

/// The speculative method, if any (every MTP spelling is one [`SpecMethod::Mtp`], as
/// `SpeculativeConfig` renames them all `mtp`).
fn spec_method(s: &Scenario) -> Option<SpecMethod> {
    s.engine.speculative.as_ref().map(|sp| sp.method)
}

/// Whether async scheduling is on: unless `--no-async-scheduling`, vLLM 0.26 to 0.32 turn it
/// off by default for speculative methods outside EAGLE/MTP, ngram_gpu and DSpark
/// (`draft_model` kept from 0.28), with a warning; 0.33's Model Runner V2 keeps it.
pub fn async_scheduling(s: &Scenario) -> bool {
    if s.engine.no_async_scheduling {
        return false;
    }
    let v = s.version;
    match spec_method(s) {
        Some(SpecMethod::Ngram) => !v.at_least(0, 26) || v.at_least(0, 33),
        Some(SpecMethod::DraftModel) => !v.at_least(0, 26) || v.at_least(0, 28),
        None
        | Some(SpecMethod::Mtp(_) | SpecMethod::Dspark | SpecMethod::Eagle | SpecMethod::Eagle3) => {
            true
        }
    }
}

/// Whether vLLM runs Model Runner V2 (`VllmConfig.use_v2_model_runner`, without
/// `VLLM_USE_V2_MODEL_RUNNER`). From 0.29 it is the default unless a feature it lacks is on
/// (ngram to 0.31, draft_model in 0.29 and 0.30, EAGLE3 with PP in 0.29); in 0.26 to 0.28 only
/// for dense, non-hybrid models and a few MoE architectures, with the same speculative
/// exceptions (draft_model included). 0.33 is taken as V2 throughout.
pub fn runner_v2(s: &Scenario) -> bool {
    let v = s.version;
    if !v.at_least(0, 26) {
        return false;
    }
    if v.at_least(0, 33) {
        return true;
    }
    let method = spec_method(s);
    if v.at_least(0, 29) {
        return match method {
            Some(SpecMethod::Ngram) => v.at_least(0, 32),
            Some(SpecMethod::DraftModel) => v.at_least(0, 31),
            Some(SpecMethod::Eagle3) if s.parallel.pp > 1 => v.at_least(0, 30),
            None
            | Some(
                SpecMethod::Mtp(_) | SpecMethod::Dspark | SpecMethod::Eagle | SpecMethod::Eagle3,
            ) => true,
        };
    }
    // 0.26 to 0.28: _is_default_v2_model_runner_model, then the unsupported features.
    let m = &s.model;
    let mut defaults = vec![
        "DeepseekV2ForCausalLM",
        "GraniteMoeForCausalLM",
        "InklingForCausalLM",
        "InklingForConditionalGeneration",
        "LongcatFlashNgramForCausalLM",
        "Qwen2MoeForCausalLM",
    ];
    if v.at_least(0, 27) {
        defaults.push("KimiK3ForConditionalGeneration");
    }
    if v.at_least(0, 28) {
        defaults.push("DeepseekV4ForCausalLM");
    }
    let default_arch = defaults.contains(&m.architecture.as_str());
    let hybrid = m
        .layers
        .iter()
        .any(|l| matches!(l, LayerKind::GatedDeltaNet | LayerKind::Mamba2));
    let default_model =
        !(hybrid && !(default_arch && v.at_least(0, 27))) && (default_arch || m.moe.is_none());
    match method {
        Some(SpecMethod::Ngram | SpecMethod::DraftModel) => false,
        None
        | Some(SpecMethod::Mtp(_) | SpecMethod::Dspark | SpecMethod::Eagle | SpecMethod::Eagle3) => {
            default_model
        }
    }
}

/// DeepSeek-V3.2's sparse MLA backend as vLLM 0.33.0 picks it (platforms/cuda.py's priorities),
/// and whether its cache takes DeepSeek's fp8_ds_mla blob (656 B per token): asked for, or made
/// of any other fp8 cache by FLASHMLA_SPARSE (`_canonicalize_sparse_mla_kv_cache_dtype`).
/// `name` is `None` off SM 9.0 and 10.x and on ROCm, where the choice was not evaluated (an fp8
/// cache is then taken as FlashMLA's).
pub struct SparseMlaBackend {
    pub name: Option<AttentionBackend>,
    pub ds_mla: bool,
}

pub fn sparse_mla_backend(s: &Scenario) -> SparseMlaBackend {
    let dtype = s.engine.kv_cache_dtype;
    let fp8 = dtype.is_fp8() || s.model.kv_fp8_from_checkpoint;
    let heads = s.model.n_heads / u64::from(s.parallel.tp.max(1));
    let name = match s.gpu.compute_capability {
        // ROCm's sparse MLA backends were not read (MI250X reports Hopper's 9.0).
        _ if s.gpu.is_rocm() => None,
        // The only Hopper backend that keeps fp8_e4m3 as it is.
        (9, 0) if dtype == KvCacheDtype::Fp8E4m3 => Some(AttentionBackend::FlashinferMlaSparseSm90),
        (9, 0) if fp8 => Some(AttentionBackend::FlashmlaSparse),
        (9, 0) => Some(AttentionBackend::FlashAttnMlaSparse),
        (10, _) if dtype == KvCacheDtype::Fp8DsMla => Some(AttentionBackend::FlashmlaSparse),
        (10, _) if fp8 => Some(AttentionBackend::FlashinferMlaSparse),
        (10, _) if heads <= 16 => Some(AttentionBackend::FlashAttnMlaSparseFa4),
        (10, _) => Some(AttentionBackend::FlashmlaSparse),
        _ => None,
    };
    let ds_mla = dtype == KvCacheDtype::Fp8DsMla
        || (fp8
            && match name {
                Some(n) => n == AttentionBackend::FlashmlaSparse,
                None => dtype != KvCacheDtype::Fp8E4m3,
            });
    SparseMlaBackend { name, ds_mla }
}

/// DeepSeek-V4's attention class as vLLM 0.33.0 picks it (`_select_dsv4_attn_cls`): FlashInfer
/// on SM 12.x or when `FLASHINFER_MLA_SPARSE_DSV4` is asked for, else FlashMLA. Every class but
/// FlashInfer's off SM 12.x stores fp8_ds_mla blobs; that one stores plain rows (`plain`).
pub struct V4Attention {
    pub backend: AttentionBackend,
    pub plain: bool,
}

pub fn v4_attention(s: &Scenario) -> V4Attention {
    match s.engine.attention_backend {
        Some(AttentionBackend::FlashinferMlaSparseDsv4) => V4Attention {
            backend: AttentionBackend::FlashinferMlaSparseDsv4,
            plain: s.gpu.compute_capability.0 != 12,
        },
        // Any other name plans FlashMLA's class (`validate` refuses the dense names and the
        // two FlashInfer sparse names for V4).
        Some(
            AttentionBackend::FlashAttn
            | AttentionBackend::TritonAttn
            | AttentionBackend::Flashinfer
            | AttentionBackend::FlexAttention
            | AttentionBackend::FlashAttnMla
            | AttentionBackend::Flashmla
            | AttentionBackend::FlashinferMla
            | AttentionBackend::CutlassMla
            | AttentionBackend::TritonMla
            | AttentionBackend::FlashmlaSparseDsv4
            | AttentionBackend::FlashmlaSparse
            | AttentionBackend::FlashinferMlaSparse
            | AttentionBackend::FlashinferMlaSparseSm120
            | AttentionBackend::FlashinferMlaSparseSm90
            | AttentionBackend::FlashAttnMlaSparse
            | AttentionBackend::FlashAttnMlaSparseFa4,
        ) => V4Attention {
            backend: AttentionBackend::FlashmlaSparseDsv4,
            plain: false,
        },
        None => V4Attention {
            backend: v4_default(s),
            plain: false,
        },
    }
}

/// DeepSeek-V4's backend without `--attention-backend`: FlashInfer on SM 12.x, else FlashMLA.
fn v4_default(s: &Scenario) -> AttentionBackend {
    if s.gpu.compute_capability.0 == 12 {
        AttentionBackend::FlashinferMlaSparseDsv4
    } else {
        AttentionBackend::FlashmlaSparseDsv4
    }
}

/// The name of DeepSeek-V4's backend without `--attention-backend` (the form's placeholder).
pub fn v4_default_backend(s: &Scenario) -> &'static str {
    v4_default(s).as_str()
}

/// Before 0.18, `CudaPlatform.check_and_update_config` forced a dense MLA model's block size
/// (the user's too) for the backend it picked: CUTLASS_MLA on Blackwell (from 0.16 FLASHINFER_MLA
/// when qk_nope_head_dim is 128), FlashMLA where its dense kernels run (Hopper). The forced size
/// and vLLM's log line, or `None` when the block stands.
pub fn forced_mla_block(s: &Scenario, block: u64) -> Option<(u64, &'static str)> {
    let m = &s.model;
    let mla = m.mla.as_ref()?;
    if s.version.at_least(0, 18)
        || m.sparse_mla.is_some()
        || m.compressed.is_some()
        || s.gpu.is_rocm()
    {
        return None;
    }
    let cc = s.gpu.compute_capability.0;
    let exact = !s.version.at_least_patch(0, 11, 2);
    let backend = match s.engine.attention_backend {
        Some(b) => b,
        None if cc == 10 && s.version.at_least(0, 16) && mla.qk_nope_head_dim == 128 => {
            AttentionBackend::FlashinferMla
        }
        None if cc == 10 => AttentionBackend::CutlassMla,
        None => AttentionBackend::Flashmla,
    };
    match backend {
        // 0.10.2 and 0.11.0 test the exact value (`block_size != 64`, `!= 128`): a multiple
        // of 64 or 128 is forced too; from 0.11.2 a multiple stands.
        AttentionBackend::Flashmla if cc == 9 && (block % 64 != 0 || (exact && block != 64)) => {
            Some((
                64,
                "Forcing kv cache block size to 64 for FlashMLA backend.",
            ))
        }
        AttentionBackend::CutlassMla if block % 128 != 0 || (exact && block != 128) => Some((
            128,
            "Forcing kv cache block size to 128 for CUTLASS_MLA backend.",
        )),
        AttentionBackend::FlashinferMla if block != 32 && block % 64 != 0 => Some((
            64,
            "Forcing kv cache block size to 64 for FlashInferMLA backend.",
        )),
        // A block these three already take (or FlashMLA off Hopper) stands; the other
        // backends force none.
        AttentionBackend::Flashmla
        | AttentionBackend::CutlassMla
        | AttentionBackend::FlashinferMla
        | AttentionBackend::FlashAttn
        | AttentionBackend::TritonAttn
        | AttentionBackend::Flashinfer
        | AttentionBackend::FlexAttention
        | AttentionBackend::FlashAttnMla
        | AttentionBackend::TritonMla
        | AttentionBackend::FlashmlaSparseDsv4
        | AttentionBackend::FlashinferMlaSparseDsv4
        | AttentionBackend::FlashmlaSparse
        | AttentionBackend::FlashinferMlaSparse
        | AttentionBackend::FlashinferMlaSparseSm120
        | AttentionBackend::FlashinferMlaSparseSm90
        | AttentionBackend::FlashAttnMlaSparse
        | AttentionBackend::FlashAttnMlaSparseFa4 => None,
    }
}

/// The attention backend's block size when `--block-size` is not given
/// (`Platform.update_block_size_for_backend`, v0.18+; hard-coded choices before).
pub fn default_block_size(s: &Scenario) -> (u64, String) {
    let cc = s.gpu.compute_capability.0;
    // DeepSeek-V4: the attention and indexer backends declare 256-token blocks only; the
    // sliding-window (64) and compressor-state (4, 8) caches keep their own sizes.
    if s.model.compressed.is_some() {
        // The backends in layer order, as vLLM 0.33.0's _find_non_ssm_backends lists them.
        let attn = v4_attention(s).backend;
        return (
            256,
            format!("DEEPSEEK_SPARSE_SWA/{attn}/DEEPSEEK_V4_INDEXER/CompressorBackend: DeepSeek-V4's attention and indexer kernels take 256-token blocks (its sliding-window and compressor caches keep 64, 4 and 8)"),
        );
    }
    // A backend the user selected (its checks are in `backend::validate`).
    if let Some(b) = super::backend::selected(s).filter(|_| s.version.at_least(0, 18)) {
        return selected_block(b);
    }
    if s.model.mla.is_some() {
        let fp8 = s.engine.kv_cache_dtype.is_fp8() || s.model.kv_fp8_from_checkpoint;
        // Before 0.18 the block stays 16 unless the platform forces it (`forced_mla_block`).
        if !s.version.at_least(0, 18) {
            return if s.model.sparse_mla.is_some() {
                (
                    64,
                    "FlashMLASparse: vLLM before 0.18 forced 64-token blocks for DeepSeek-V3.2"
                        .into(),
                )
            } else {
                (16, "vLLM's default block size (16)".into())
            };
        }
        // DeepSeek-V3.2: the indexer's backend takes 64-token blocks only, and the sparse MLA
        // backends all accept 64 (vLLM 0.33.0, platforms/cuda.py's priorities).
        if s.model.sparse_mla.is_some() {
            return match sparse_mla_backend(s).name {
                Some(backend) => (
                    64,
                    format!("DEEPSEEK_V32_INDEXER/{backend}: the indexer's kernel block 64, which the sparse MLA backend accepts"),
                ),
                None => (
                    64,
                    "DEEPSEEK_V32_INDEXER: the indexer's kernel block 64 (the sparse MLA backend on this GPU was not evaluated)".into(),
                ),
            };
        }
        // On ROCm the default MLA backend is TRITON_MLA.
        if s.gpu.is_rocm() {
            return (16, "TRITON_MLA on ROCm (without AITER): block 16".into());
        }
        return match cc {
            10..=11 => (
                32,
                "FLASHINFER_MLA on Blackwell: smallest kernel block 32".into(),
            ),
            9 if fp8 => (
                64,
                "FLASHMLA for an fp8 MLA cache on Hopper: kernel block 64".into(),
            ),
            9 => (
                16,
                "FLASH_ATTN_MLA on Hopper with a 16-bit cache: block 16".into(),
            ),
            _ => (16, "TRITON_MLA: block 16".into()),
        };
    }
    (16, "FlashAttention's preferred block size (16)".into())
}

/// The block of a backend the user selected: its preferred kernel block.
// Never inlined: no link the first verdict is trained on calls it (DESIGN.md, "Rare code").
#[inline(never)]
fn selected_block(b: &super::backend::Backend) -> (u64, String) {
    (
        b.kernel.preferred(),
        format!(
            "{}, selected with --attention-backend: its preferred kernel block",
            b.name
        ),
    )
}

/// vLLM's CUDA-graph capture sizes (`VllmConfig._set_cudagraph_sizes`), counted.
pub fn cudagraph_sizes(s: &Scenario, mns: u64, mnbt: u64) -> Vec<u64> {
    if !s.version.at_least_patch(0, 11, 2) {
        // 0.10.2 and 0.11.0: SchedulerConfig's cuda_graph_sizes = [min(2 x max_num_seqs, 512)],
        // then [1, 2, 4] + range(8, that + 1, 8), kept where at most max_num_batched_tokens.
        let cap = mns.saturating_mul(2).min(512);
        let mut sizes: Vec<u64> = vec![1, 2, 4];
        sizes.extend((8..=cap).step_by(8));
        sizes.retain(|x| *x <= mnbt);
        return sizes;
    }
    if !s.version.at_least(0, 14) {
        // 0.11.2 to 0.13.0 (`VllmConfig._set_cudagraph_sizes`): min(2 x max_num_seqs, 512)
        // (0.13 scales max_num_seqs by 1 + the speculative tokens, which Headroom refuses
        // there), capped at max_num_batched_tokens; 1, 2, 4, multiples of 8 below 256, then of
        // 16 up to it.
        let max = mns.saturating_mul(2).min(512).min(mnbt).max(1);
        let mut sizes: Vec<u64> = [1, 2, 4].into_iter().filter(|x| *x <= max).collect();
        if max >= 8 {
            sizes.extend((8..(max + 1).min(256)).step_by(8));
        }
        if max >= 256 {
            sizes.extend((256..=max).step_by(16));
        }
        return sizes;
    }
    let spec_tokens = s
        .engine
        .speculative
        .as_ref()
        .map_or(0, |sp| u64::from(sp.num_speculative_tokens));
    let decode_len = 1 + spec_tokens;
    // `is_device_capability_family(100)`: Blackwell datacenter parts (10.x) only.
    let ceiling = if s.gpu.compute_capability.0 == 10 && s.version.at_least(0, 28) {
        1024
    } else {
        512
    };
    let cap = (mns.saturating_mul(decode_len).saturating_mul(2)).min(ceiling);
    // The uniform decode batches to cover: with draft tokens (0.33), every request count of
    // the 1, 2, 4 / 8 / 16 grid times the query length, within the ceiling.
    let uniform: Vec<u64> = if decode_len > 1 && s.version.at_least(0, 33) {
        let reqs = mns.min(ceiling);
        let mut counts: Vec<u64> = [1, 2, 4].into_iter().filter(|n| *n <= reqs).collect();
        counts.extend((8..(reqs + 1).min(256)).step_by(8));
        counts.extend((256..=reqs).step_by(16));
        counts.push(reqs);
        counts
            .into_iter()
            .map(|n| n * decode_len)
            .filter(|t| *t <= cap)
            .collect()
    } else if decode_len == 1 && mns <= cap {
        vec![mns]
    } else {
        Vec::new()
    };
    let max = cap.min(mnbt).max(1);
    let mut sizes: Vec<u64> = [1, 2, 4].into_iter().filter(|x| *x <= max).collect();
    sizes.extend((8..(max + 1).min(256)).step_by(8));
    if max >= 256 {
        sizes.extend((256..=max).step_by(16));
    }
    if mnbt <= max {
        sizes.push(mnbt);
    }
    sizes.extend(uniform.into_iter().filter(|t| *t <= mnbt));
    super::sort_small(&mut sizes);
    sizes.dedup();
    sizes
}

/// A runtime term: the user's measurement when given, else an estimate with its basis.
pub fn term(measured: &Option<Measured>, estimate: u64, basis: String) -> (u64, Provenance) {
    match measured {
        Some(m) => (m.bytes.0, Provenance::Measured(m.source.clone().into())),
        None => (estimate, Provenance::Estimate(basis.into())),
    }
}

/// In use before the init snapshot: CUDA context and cuBLAS handles, plus NCCL communicators
/// when there is more than one rank (from 0.11.0: 0.10.2 takes the snapshot before NCCL
/// starts, and its communicators are other use, [`other_consumption_estimate`]). Typical
/// figures, not a measurement.
pub fn pre_snapshot_estimate(ranks: u32, version: VllmVersion) -> (u64, String) {
    let context = 512 * MIB;
    let nccl = if ranks > 1 && version.nccl_before_snapshot() {
        512 * MIB
    } else {
        0
    };
    let basis = page_text(|| {
        if !version.nccl_before_snapshot() {
            "typical CUDA context + cuBLAS handles (0.5 GiB); vLLM 0.10.2 takes its snapshot before NCCL starts"
        } else if ranks > 1 {
            "typical CUDA context + cuBLAS handles (0.5 GiB) and NCCL communicators (0.5 GiB)"
        } else {
            "typical CUDA context + cuBLAS handles (0.5 GiB)"
        }
        .to_string()
    });
    (context + nccl, basis)
}

/// The profile run's activation peak above the resting allocation: hidden states and the MLP
/// (or MoE workspace) for `max_num_batched_tokens` tokens, plus fp32 logits for
/// `min(max_num_seqs, max_num_batched_tokens)` rows on the last stage.
pub fn activation_estimate(
    model: &Model,
    tp: u64,
    mnbt: u64,
    mns: u64,
    last_stage: bool,
) -> (u64, String) {
    let act = model.dtype.bytes();
    let h = model.hidden_size;
    let inter = match &model.moe {
        Some(m) => (m.top_k * m.moe_intermediate_size).max(model.intermediate_size),
        None => model.intermediate_size,
    };
    // Residual + normed hidden + attention output (4 x hidden) and the gate/up output
    // (2 x intermediate / tp) live together at the MLP's peak.
    let per_token = 4 * h + 2 * inter / tp.max(1);
    let hidden = mnbt.saturating_mul(per_token).saturating_mul(act);
    let reqs = mns.min(mnbt);
    let logits = if last_stage {
        // compute_logits in fp32 and the sampler's softmax copy.
        reqs.saturating_mul(model.padded_vocab() / tp.max(1))
            .saturating_mul(4 * 2)
    } else {
        0
    };
    (
        hidden.saturating_add(logits),
        page_text(|| {
            format!(
                "{mnbt} batched tokens x (4 x hidden + 2 x intermediate / TP) x {act} B{}",
                if last_stage {
                    format!(" + {reqs} rows of fp32 logits (x2 for the sampler)")
                } else {
                    String::new()
                }
            )
        }),
    )
}

/// Persistent consumption after the snapshot besides weights: runner buffers, attention and
/// cuBLAS workspaces. The spec's worked examples assume 0.5 GiB. In vLLM 0.10.2 the NCCL
/// communicators of more than one rank start after the snapshot (`Worker.init_device`), so
/// they are non-torch memory inside the budget: a typical 0.5 GiB more.
pub fn other_consumption_estimate(ranks: u32, version: VllmVersion) -> (u64, String) {
    let nccl_after = ranks > 1 && !version.nccl_before_snapshot();
    let basis = page_text(|| {
        if nccl_after {
            "typical runner buffers and kernel workspaces (0.5 GiB, as in the spec's worked examples) and NCCL communicators (0.5 GiB), which vLLM 0.10.2 starts after its memory snapshot, so the budget pays for them"
        } else {
            "typical runner buffers and kernel workspaces (0.5 GiB, as in the spec's worked examples)"
        }
        .to_string()
    });
    (if nccl_after { 1024 * MIB } else { 512 * MIB }, basis)
}

/// CUDA-graph memory: about 6 MiB per captured graph, PIECEWISE and FULL for each size
/// (FULL_AND_PIECEWISE, the default from 0.11.0); PIECEWISE only in 0.10.2, whose
/// `cudagraph_mode` default is PIECEWISE.
pub fn cuda_graph_estimate(n_sizes: usize, version: VllmVersion) -> (u64, String) {
    let modes: u64 = if version.at_least(0, 11) { 2 } else { 1 };
    let graphs = modes * n_sizes as u64;
    (
        graphs * 6 * MIB,
        page_text(|| {
            if modes == 2 {
                format!("{n_sizes} capture sizes x 2 modes x ~6 MiB per graph")
            } else {
                format!("{n_sizes} capture sizes x 1 mode (PIECEWISE, vLLM 0.10.2's default) x ~6 MiB per graph")
            }
        }),
    )
}
