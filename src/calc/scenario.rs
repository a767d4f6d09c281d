//! The `Scenario`: everything a user can set, under vLLM's own flag names where vLLM has one.
//! One plain struct; every input adapter (form, URL, CLI, config.json, catalog) produces it.

use super::model::Model;
use super::units::{Bytes, GIB};
use super::version::VllmVersion;

/// A GPU as the driver reports it.
#[derive(Clone, Debug, PartialEq)]
pub struct Gpu {
    pub id: String,
    pub name: String,
    /// `cudaMemGetInfo` total, below the marketing size.
    pub total: Bytes,
    /// Whether `total` was confirmed from a driver reading (else reconstructed).
    pub total_confirmed: bool,
    /// CPU and GPU share one memory (GB10 / DGX Spark): free memory is the OS's MemAvailable.
    pub unified_memory: bool,
    /// Hopper (9.x), Blackwell (10.x) ...: selects backend block sizes and graph ceilings.
    pub compute_capability: (u32, u32),
}

impl Gpu {
    /// An AMD GPU, run by vLLM's ROCm platform: its backends (TRITON_MLA, no FlashInfer) and
    /// block rules are ROCm's. Told by the device name ROCm's torch reports ("AMD Instinct
    /// MI250X"), since HIP's compute capability can be an NVIDIA one: gfx90a (MI250X) reports
    /// 9.0, Hopper's; gfx942 (MI300X) reports 9.4, which no NVIDIA part has.
    pub fn is_rocm(&self) -> bool {
        self.name.starts_with("AMD ") || self.compute_capability == (9, 4)
    }
}

/// `--kv-cache-dtype`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum KvCacheDtype {
    /// The model dtype.
    #[default]
    Auto,
    Bfloat16,
    Float16,
    /// `fp8`: one byte per element, the backend's fp8 format.
    Fp8,
    /// `fp8_e4m3`: one byte per element; most backends treat it as `fp8`, DeepSeek-V3.2's sparse
    /// backends do not.
    Fp8E4m3,
    /// `fp8_e5m2`: one byte per element; no sparse MLA backend takes it.
    Fp8E5m2,
    /// DeepSeek's 656-byte per-token blob for MLA (FlashMLA sparse).
    Fp8DsMla,
    /// `fp8_inc`: Intel Gaudi's (HPU) fp8. vLLM's CLI takes the name, but no CUDA attention
    /// backend lists it, so the plan refuses it.
    Fp8Inc,
}

impl KvCacheDtype {
    pub fn parse(s: &str) -> Result<KvCacheDtype, String> {
        match s.trim() {
            "auto" => Ok(KvCacheDtype::Auto),
            // vLLM's CacheDType names only: `--kv-cache-dtype bf16` is an invalid choice there.
            "bfloat16" => Ok(KvCacheDtype::Bfloat16),
            "float16" => Ok(KvCacheDtype::Float16),
            "fp8" => Ok(KvCacheDtype::Fp8),
            "fp8_inc" => Ok(KvCacheDtype::Fp8Inc),
            "fp8_e4m3" => Ok(KvCacheDtype::Fp8E4m3),
            "fp8_e5m2" => Ok(KvCacheDtype::Fp8E5m2),
            "fp8_ds_mla" => Ok(KvCacheDtype::Fp8DsMla),
            other => Err(format!(
                "kv-cache-dtype {} is not one of vLLM's auto, bfloat16, float16, fp8, fp8_e4m3, fp8_e5m2, fp8_inc, fp8_ds_mla{}", crate::calc::quoted(other),
                match other {
                    "bf16" => " (write bfloat16)",
                    "fp16" | "half" => " (write float16)",
                    _ => "",
                }
            )),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            KvCacheDtype::Auto => "auto",
            KvCacheDtype::Bfloat16 => "bfloat16",
            KvCacheDtype::Float16 => "float16",
            KvCacheDtype::Fp8 => "fp8",
            KvCacheDtype::Fp8E4m3 => "fp8_e4m3",
            KvCacheDtype::Fp8E5m2 => "fp8_e5m2",
            KvCacheDtype::Fp8DsMla => "fp8_ds_mla",
            KvCacheDtype::Fp8Inc => "fp8_inc",
        }
    }

    /// One byte per element (every fp8 name, fp8_ds_mla included).
    pub fn is_fp8(self) -> bool {
        matches!(
            self,
            KvCacheDtype::Fp8
                | KvCacheDtype::Fp8E4m3
                | KvCacheDtype::Fp8E5m2
                | KvCacheDtype::Fp8DsMla
                | KvCacheDtype::Fp8Inc
        )
    }
}

/// `--max-model-len`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum MaxLen {
    /// Not set: the model's `max_position_embeddings` (derived length).
    #[default]
    ModelDefault,
    Value(u64),
    /// `auto` / `-1`: vLLM fits the longest length the pool holds (v0.14+).
    Auto,
}

/// vLLM 0.33.0's `MTPModelTypes`: the model types an MTP drafter may end with, and the
/// method names `--speculative-config` takes for it (each is renamed `mtp`).
pub const MTP_MODEL_TYPES: &[&str] = &[
    "deepseek_mtp",
    "dots3_note_mtp",
    "mimo_mtp",
    "mimo_v2_mtp",
    "glm4_moe_mtp",
    "glm4_moe_lite_mtp",
    "glm_ocr_mtp",
    "ernie_mtp",
    "nemotron_h_mtp",
    "exaone_moe_mtp",
    "exaone4_5_mtp",
    "qwen3_next_mtp",
    "qwen4_exp_mtp",
    "qwen3_5_mtp",
    "longcat_flash_mtp",
    "bailing_hybrid_v3_mtp",
    "minimax_m3_mtp",
    "bailing_hybrid_mtp",
    "mtp",
    "kimi_k3_mtp",
    "pangu_ultra_moe_mtp",
    "step3p5_mtp",
    "step5_mtp",
    "hy_v3_mtp",
    "hy_v4_mtp",
    "gemma4_mtp",
    "inkling_mtp",
    "glm5_next_mtp",
];

/// The speculative config's `method`: the drafters whose memory Headroom plans.
///
/// vLLM takes several spellings for MTP and renames them all `mtp`; the spelling given is kept
/// in [`SpecMethod::Mtp`] because the log lines, notes, links and JSON print it as written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpecMethod {
    /// `mtp` or another of vLLM's MTP model types ([`MTP_MODEL_TYPES`]: `deepseek_mtp`,
    /// `qwen3_next_mtp` ...), as spelled: the model's own MTP layers on the last stage.
    Mtp(&'static str),
    /// `dspark`: DeepSeek-V4's DSpark drafter, built from the checkpoint's `mtp.*` stages.
    Dspark,
    /// `eagle`: an EAGLE head, a checkpoint of its own named by the config's `model`.
    Eagle,
    /// `eagle3`: an EAGLE-3 head, likewise a checkpoint of its own.
    Eagle3,
    /// `draft_model`: a separate smaller model, loaded whole on the last stage.
    DraftModel,
    /// `ngram`: prompt lookup, with no drafter to load.
    Ngram,
}

impl SpecMethod {
    /// The methods the page offers, in its order (after its `none`).
    pub const OFFERED: [SpecMethod; 7] = [
        SpecMethod::Mtp("mtp"),
        SpecMethod::Mtp("deepseek_mtp"),
        SpecMethod::Dspark,
        SpecMethod::Eagle,
        SpecMethod::Eagle3,
        SpecMethod::DraftModel,
        SpecMethod::Ngram,
    ];

    /// The method as the user wrote it (vLLM's name; an MTP model type as given).
    pub const fn as_str(self) -> &'static str {
        match self {
            SpecMethod::Mtp(spelling) => spelling,
            SpecMethod::Dspark => "dspark",
            SpecMethod::Eagle => "eagle",
            SpecMethod::Eagle3 => "eagle3",
            SpecMethod::DraftModel => "draft_model",
            SpecMethod::Ngram => "ngram",
        }
    }

    /// The method of that exact name: an offered one or any of [`MTP_MODEL_TYPES`] (vLLM
    /// reads each as `mtp`). `None` for any other text; each front door words its own error.
    pub fn from_name(name: &str) -> Option<SpecMethod> {
        if let Some(mtp) = MTP_MODEL_TYPES.iter().find(|t| **t == name) {
            return Some(SpecMethod::Mtp(mtp));
        }
        SpecMethod::OFFERED.into_iter().find(|m| m.as_str() == name)
    }

    /// MTP under any spelling (`SpeculativeConfig` renames them all `mtp`).
    pub fn is_mtp(self) -> bool {
        match self {
            SpecMethod::Mtp(_) => true,
            SpecMethod::Dspark
            | SpecMethod::Eagle
            | SpecMethod::Eagle3
            | SpecMethod::DraftModel
            | SpecMethod::Ngram => false,
        }
    }

    /// An EAGLE head (`eagle`, `eagle3`): one decoder layer from a checkpoint of its own.
    pub fn is_eagle(self) -> bool {
        match self {
            SpecMethod::Eagle | SpecMethod::Eagle3 => true,
            SpecMethod::Mtp(_)
            | SpecMethod::Dspark
            | SpecMethod::DraftModel
            | SpecMethod::Ngram => false,
        }
    }
}

impl std::fmt::Display for SpecMethod {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `--speculative-config` (the parts that cost memory).
#[derive(Clone, Debug, PartialEq)]
pub struct Speculative {
    pub method: SpecMethod,
    pub num_speculative_tokens: u32,
    /// Drafter weights per last-stage rank, when known (measured or from a checkpoint).
    pub drafter_weights: Option<Measured>,
    /// `draft_model`'s drafter (the speculative config's `model`), when Headroom knows its
    /// shape: its weights are estimated and its attention layers join the last stage's KV.
    pub draft_model: Option<Box<Model>>,
    /// The count was not given and Headroom planned 1: vLLM needs `num_speculative_tokens` in
    /// the speculative config (or a drafter config's `n_predict`), so the plan says so.
    pub count_assumed: bool,
}

/// A value the user gave, and where it came from.
#[derive(Clone, Debug, PartialEq)]
pub struct Measured {
    pub bytes: Bytes,
    /// E.g. "Model loading took 79.29 GiB" or "given with --weights".
    pub source: String,
}

impl Measured {
    pub fn new(bytes: u64, source: impl Into<String>) -> Measured {
        Measured {
            bytes: Bytes(bytes),
            source: source.into(),
        }
    }
}

/// Parallel layout of one engine, and how many engines.
#[derive(Clone, Debug, PartialEq)]
pub struct Parallel {
    /// `--tensor-parallel-size` / `-tp`.
    pub tp: u32,
    /// `--pipeline-parallel-size` / `-pp`.
    pub pp: u32,
    /// `--data-parallel-size`: each DP rank is its own engine with the same plan.
    pub dp: u32,
    /// `VLLM_PP_LAYER_PARTITION`.
    pub pp_layer_partition: Option<Vec<u32>>,
    /// `--enable-expert-parallel`.
    pub expert_parallel: bool,
}

impl Default for Parallel {
    fn default() -> Self {
        Parallel {
            tp: 1,
            pp: 1,
            dp: 1,
            pp_layer_partition: None,
            expert_parallel: false,
        }
    }
}

/// vLLM engine flags.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Engine {
    /// `--gpu-memory-utilization`; `None` is the version's default (0.92, or 0.90 before 0.20).
    pub gpu_memory_utilization: Option<f64>,
    /// `--kv-cache-memory-bytes`: pins the pool, ignores the fraction for it.
    pub kv_cache_memory_bytes: Option<u64>,
    pub max_model_len: MaxLen,
    /// `--max-num-seqs`; `None` is vLLM's default by GPU size.
    pub max_num_seqs: Option<u64>,
    /// `--max-num-batched-tokens`; `None` is vLLM's default by GPU size.
    pub max_num_batched_tokens: Option<u64>,
    pub kv_cache_dtype: KvCacheDtype,
    /// `--block-size`; `None` lets the attention backend choose.
    pub block_size: Option<u64>,
    pub enforce_eager: bool,
    pub num_gpu_blocks_override: Option<u64>,
    pub speculative: Option<Speculative>,
    /// `--disable-hybrid-kv-cache-manager`.
    pub disable_hybrid_kv_cache_manager: bool,
    /// `--no-async-scheduling` (or an executor without async scheduling, such as Ray's): one
    /// batch in flight per pipeline stage instead of one more.
    pub no_async_scheduling: bool,
    /// `--attention-backend`, one of [`AttentionBackend::SELECTABLE`]; `None` is vLLM's choice.
    pub attention_backend: Option<AttentionBackend>,
    /// `--quantization`, one of vLLM's methods ([`super::weight_format::METHODS`]); `None`:
    /// the checkpoint's own.
    pub quantization: Option<&'static str>,
    /// `--dtype`.
    pub dtype: super::weight_format::Dtype,
}

/// An attention backend, by vLLM's `AttentionBackendEnum` name: the ones `--attention-backend`
/// may select ([`AttentionBackend::SELECTABLE`]) and the sparse MLA backends vLLM picks itself
/// for DeepSeek-V3.2 (`runtime::sparse_mla_backend`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AttentionBackend {
    /// `FLASH_ATTN`: FlashAttention for dense attention (fp8 caches only with FA3/FA4).
    FlashAttn,
    /// `TRITON_ATTN`: the Triton kernels for dense attention.
    TritonAttn,
    /// `FLASHINFER`: FlashInfer for dense attention.
    Flashinfer,
    /// `FLEX_ATTENTION`: PyTorch's FlexAttention for dense attention.
    FlexAttention,
    /// `FLASH_ATTN_MLA`: FlashAttention's MLA kernels (Hopper).
    FlashAttnMla,
    /// `FLASHMLA`: DeepSeek's dense FlashMLA (Hopper; vLLM forced 64-token blocks before 0.18).
    Flashmla,
    /// `FLASHINFER_MLA`: FlashInfer's MLA kernels (Blackwell's default from 0.16 for
    /// qk_nope_head_dim 128).
    FlashinferMla,
    /// `CUTLASS_MLA`: CUTLASS's MLA kernels (Blackwell's default before, 128-token blocks).
    CutlassMla,
    /// `TRITON_MLA`: the Triton MLA kernels (ROCm's default).
    TritonMla,
    /// `FLASHMLA_SPARSE_DSV4`: DeepSeek-V4's FlashMLA class (fp8_ds_mla blobs).
    FlashmlaSparseDsv4,
    /// `FLASHINFER_MLA_SPARSE_DSV4`: DeepSeek-V4's FlashInfer class (SM 12.x's default; plain
    /// rows on SM 10.x).
    FlashinferMlaSparseDsv4,
    /// `FLASHMLA_SPARSE`: DeepSeek-V3.2's FlashMLA sparse backend, vLLM's pick for its fp8
    /// caches (which become fp8_ds_mla); selected for V4, the plan takes V4's FlashMLA class.
    FlashmlaSparse,
    /// `FLASHINFER_MLA_SPARSE`: DeepSeek-V3.2's FlashInfer sparse backend on SM 10.x; vLLM
    /// refuses it for V4 with a message of its own.
    FlashinferMlaSparse,
    /// `FLASHINFER_MLA_SPARSE_SM120`: FlashInfer's sparse backend for SM 12.x; refused for V4
    /// likewise.
    FlashinferMlaSparseSm120,
    /// `FLASHINFER_MLA_SPARSE_SM90`: the Hopper sparse backend vLLM picks for fp8_e4m3 (it
    /// keeps that dtype as it is); not selectable here.
    FlashinferMlaSparseSm90,
    /// `FLASH_ATTN_MLA_SPARSE`: vLLM's Hopper pick for a 16-bit V3.2 cache; not selectable here.
    FlashAttnMlaSparse,
    /// `FLASH_ATTN_MLA_SPARSE_FA4`: vLLM's SM 10.x pick for a 16-bit V3.2 cache with at most
    /// 16 heads per rank; not selectable here.
    FlashAttnMlaSparseFa4,
}

impl AttentionBackend {
    /// The backends `--attention-backend` takes, in the form's order: the dense and MLA
    /// backends of ordinary decoder attention (`calc::backend`), DeepSeek-V4's sparse backends,
    /// and the two FlashInfer names vLLM refuses for V4 with a message of its own.
    pub const SELECTABLE: [AttentionBackend; 14] = [
        AttentionBackend::FlashAttn,
        AttentionBackend::TritonAttn,
        AttentionBackend::Flashinfer,
        AttentionBackend::FlexAttention,
        AttentionBackend::FlashAttnMla,
        AttentionBackend::Flashmla,
        AttentionBackend::FlashinferMla,
        AttentionBackend::CutlassMla,
        AttentionBackend::TritonMla,
        AttentionBackend::FlashmlaSparseDsv4,
        AttentionBackend::FlashinferMlaSparseDsv4,
        AttentionBackend::FlashmlaSparse,
        AttentionBackend::FlashinferMlaSparse,
        AttentionBackend::FlashinferMlaSparseSm120,
    ];

    /// vLLM's name (`AttentionBackendEnum.NAME`).
    pub const fn as_str(self) -> &'static str {
        match self {
            AttentionBackend::FlashAttn => "FLASH_ATTN",
            AttentionBackend::TritonAttn => "TRITON_ATTN",
            AttentionBackend::Flashinfer => "FLASHINFER",
            AttentionBackend::FlexAttention => "FLEX_ATTENTION",
            AttentionBackend::FlashAttnMla => "FLASH_ATTN_MLA",
            AttentionBackend::Flashmla => "FLASHMLA",
            AttentionBackend::FlashinferMla => "FLASHINFER_MLA",
            AttentionBackend::CutlassMla => "CUTLASS_MLA",
            AttentionBackend::TritonMla => "TRITON_MLA",
            AttentionBackend::FlashmlaSparseDsv4 => "FLASHMLA_SPARSE_DSV4",
            AttentionBackend::FlashinferMlaSparseDsv4 => "FLASHINFER_MLA_SPARSE_DSV4",
            AttentionBackend::FlashmlaSparse => "FLASHMLA_SPARSE",
            AttentionBackend::FlashinferMlaSparse => "FLASHINFER_MLA_SPARSE",
            AttentionBackend::FlashinferMlaSparseSm120 => "FLASHINFER_MLA_SPARSE_SM120",
            AttentionBackend::FlashinferMlaSparseSm90 => "FLASHINFER_MLA_SPARSE_SM90",
            AttentionBackend::FlashAttnMlaSparse => "FLASH_ATTN_MLA_SPARSE",
            AttentionBackend::FlashAttnMlaSparseFa4 => "FLASH_ATTN_MLA_SPARSE_FA4",
        }
    }

    /// `--attention-backend NAME`, any case (`auto` or nothing for vLLM's choice).
    pub fn parse(text: &str) -> Result<Option<AttentionBackend>, String> {
        match text.trim() {
            "" | "auto" => Ok(None),
            t => AttentionBackend::SELECTABLE
                .into_iter()
                .find(|b| b.as_str().eq_ignore_ascii_case(t))
                .map(Some)
                .ok_or_else(|| {
                    format!(
                        "attention-backend {}: Headroom plans auto (vLLM's choice) or one of {}",
                        crate::calc::quoted(t),
                        ATTENTION_BACKENDS.join(", ")
                    )
                }),
        }
    }
}

impl std::fmt::Display for AttentionBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The `--attention-backend` names the form offers: [`AttentionBackend::SELECTABLE`]'s.
pub const ATTENTION_BACKENDS: [&str; 14] = {
    let mut names = [""; 14];
    let mut i = 0;
    while i < names.len() {
        names[i] = AttentionBackend::SELECTABLE[i].as_str();
        i += 1;
    }
    names
};

/// `--attention-backend NAME` (`auto` for vLLM's choice): [`AttentionBackend::parse`].
pub fn parse_attention_backend(text: &str) -> Result<Option<AttentionBackend>, String> {
    AttentionBackend::parse(text)
}

/// Runtime terms only a GPU can measure. Each is measured when given, else estimated.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Runtime {
    /// `--weights`: per-rank weights of the target model ("Model loading took X GiB"). On the
    /// last stage of a speculative run vLLM's figure includes the drafter, which Headroom adds
    /// as its own line: give that stage the figure minus the drafter (or the drafter as 0).
    pub weights: Option<Measured>,
    /// Per-stage weights, when stages were measured separately (an entry overrides `weights`
    /// for its stage; `None` entries fall back to `weights` or the estimate).
    pub weights_per_stage: Option<Vec<Option<Measured>>>,
    /// `--activation-peak`: the profile run's peak above the resting allocation.
    pub activation_peak: Option<Measured>,
    /// `--non-torch`: other consumption after the init snapshot.
    pub non_torch: Option<Measured>,
    /// `--cuda-graph`: CUDA-graph memory.
    pub cuda_graph: Option<Measured>,
    /// `--load-peak`: load-time transient above the weights (an expert repack, say).
    pub load_peak: Option<Measured>,
    /// `--free-memory`: free at the init snapshot.
    pub free_memory: Option<Measured>,
    /// Memory other processes hold on each GPU (counts before the snapshot).
    pub other_tenants: Bytes,
    /// `--available-kv`: vLLM's "Available KV cache memory"; plans the pool from it directly.
    pub available_kv: Option<Measured>,
    /// Per-stage "Available KV cache memory", when stages were measured separately.
    pub available_kv_per_stage: Option<Vec<Option<Measured>>>,
}

/// A runtime term that can be measured for every stage at once or stage by stage.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StageTerm {
    /// "Model loading took": `weights` / `weights_per_stage`.
    Weights,
    /// "Available KV cache memory": `available_kv` / `available_kv_per_stage`.
    AvailableKv,
}

impl Runtime {
    /// The value `term` was measured at for `stage` alone, if it was.
    pub fn stage_only(&self, term: StageTerm, stage: usize) -> Option<&Measured> {
        let per_stage = match term {
            StageTerm::Weights => &self.weights_per_stage,
            StageTerm::AvailableKv => &self.available_kv_per_stage,
        };
        per_stage
            .as_ref()
            .and_then(|v| v.get(stage))
            .and_then(Option::as_ref)
    }

    /// The value `term` holds for `stage`: its own, else the one given for every stage.
    pub fn for_stage(&self, term: StageTerm, stage: usize) -> Option<&Measured> {
        let all = match term {
            StageTerm::Weights => &self.weights,
            StageTerm::AvailableKv => &self.available_kv,
        };
        self.stage_only(term, stage).or(all.as_ref())
    }

    /// Sets `term` from a list of values: one value holds for every stage, several are one per
    /// stage (`None` keeps that stage's estimate).
    pub fn set_per_stage(&mut self, term: StageTerm, list: Vec<Option<Measured>>) {
        let (all, per_stage) = match term {
            StageTerm::Weights => (&mut self.weights, &mut self.weights_per_stage),
            StageTerm::AvailableKv => (&mut self.available_kv, &mut self.available_kv_per_stage),
        };
        if list.len() == 1 {
            *all = list.into_iter().next().flatten();
            *per_stage = None;
        } else {
            *per_stage = Some(list);
        }
    }
}

/// The unified-memory start gate of seed 002 (GB10-style boxes).
#[derive(Clone, Debug, PartialEq)]
pub struct Unified {
    /// `--mem-available`: the box's MemAvailable before the start.
    pub mem_available: Measured,
    /// `--headroom`: what the gate keeps free (8 GiB in the seed).
    pub headroom: Bytes,
    /// Everything a rank holds that is neither weights nor KV (graphs, workspaces, activations).
    pub overhead: Option<Measured>,
    /// Extra charge for a prefill budget above the calibration.
    pub prefill_term: Bytes,
    /// Extra charge for seats (concurrency) above the calibration.
    pub seat_term: Bytes,
    /// The memory guard's threshold during loading.
    pub guard_threshold: Bytes,
}

impl Default for Unified {
    fn default() -> Self {
        Unified {
            mem_available: Measured::new(0, "not given"),
            headroom: Bytes(8 * GIB),
            overhead: None,
            prefill_term: Bytes(0),
            seat_term: Bytes(0),
            guard_threshold: Bytes(8 * GIB),
        }
    }
}

/// Everything `plan` needs.
#[derive(Clone, Debug, PartialEq)]
pub struct Scenario {
    pub model: Model,
    pub gpu: Gpu,
    /// GPUs available; must be at least `tp x pp x dp`.
    pub gpus: u32,
    pub parallel: Parallel,
    pub engine: Engine,
    pub runtime: Runtime,
    pub unified: Option<Unified>,
    pub version: VllmVersion,
    /// Average request length for the concurrency-at-average figure (`None`: max-model-len / 4).
    pub average_request_len: Option<u64>,
}

impl Scenario {
    /// `--gpu-memory-utilization` as vLLM runs it: the flag, else the release's default (0.92
    /// since 0.20.0, 0.90 before).
    pub fn gpu_memory_utilization(&self) -> f64 {
        self.engine
            .gpu_memory_utilization
            .unwrap_or_else(|| self.version.default_utilization())
    }

    /// A scenario with vLLM's defaults for this model on one such GPU.
    pub fn new(model: Model, gpu: Gpu) -> Scenario {
        Scenario {
            model,
            gpu,
            gpus: 1,
            parallel: Parallel::default(),
            engine: Engine::default(),
            runtime: Runtime::default(),
            unified: None,
            version: VllmVersion::CURRENT,
            average_request_len: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_method_names_round_trip() {
        for m in SpecMethod::OFFERED {
            assert_eq!(SpecMethod::from_name(m.as_str()), Some(m), "{m}");
        }
        // Every MTP model type keeps its spelling and is MTP; nothing else is.
        for t in MTP_MODEL_TYPES {
            let m = SpecMethod::from_name(t).expect(t);
            assert_eq!((m.as_str(), m.is_mtp(), m.is_eagle()), (*t, true, false));
        }
        let eagles: Vec<&str> = SpecMethod::OFFERED
            .into_iter()
            .filter(|m| m.is_eagle())
            .map(SpecMethod::as_str)
            .collect();
        assert_eq!(eagles, ["eagle", "eagle3"]);
        for t in ["none", "", "MTP", " mtp", "eagle2", "draft-model"] {
            assert_eq!(SpecMethod::from_name(t), None, "{t:?}");
        }
    }

    #[test]
    fn attention_backend_names_round_trip() {
        // The form's list, as it was written out before the enum.
        assert_eq!(
            ATTENTION_BACKENDS,
            [
                "FLASH_ATTN",
                "TRITON_ATTN",
                "FLASHINFER",
                "FLEX_ATTENTION",
                "FLASH_ATTN_MLA",
                "FLASHMLA",
                "FLASHINFER_MLA",
                "CUTLASS_MLA",
                "TRITON_MLA",
                "FLASHMLA_SPARSE_DSV4",
                "FLASHINFER_MLA_SPARSE_DSV4",
                "FLASHMLA_SPARSE",
                "FLASHINFER_MLA_SPARSE",
                "FLASHINFER_MLA_SPARSE_SM120",
            ]
        );
        for b in AttentionBackend::SELECTABLE {
            assert_eq!(AttentionBackend::parse(b.as_str()), Ok(Some(b)));
            let lower = b.as_str().to_ascii_lowercase();
            assert_eq!(AttentionBackend::parse(&format!(" {lower} ")), Ok(Some(b)));
        }
        assert_eq!(AttentionBackend::parse("auto"), Ok(None));
        assert_eq!(AttentionBackend::parse(""), Ok(None));
        // vLLM's own picks for DeepSeek-V3.2 are not selectable, as before.
        for t in [
            "FLASHINFER_MLA_SPARSE_SM90",
            "FLASH_ATTN_MLA_SPARSE",
            "FLASH_ATTN_MLA_SPARSE_FA4",
        ] {
            assert!(AttentionBackend::parse(t)
                .unwrap_err()
                .starts_with(&format!("attention-backend {t:?}: Headroom plans auto (vLLM's choice) or one of FLASH_ATTN, TRITON_ATTN,")));
        }
    }
}
