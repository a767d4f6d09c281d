//! The inputs a scenario is built from: one closed set, named the same way by every front door.
//!
//! [`Input`] is the identity of an input (its URL key and its flag name). It lives in `calc` so
//! that a [`crate::calc::CalcError`] can name the input at fault without `calc` depending on any
//! front door; the schema that gives each input its parser, bounds, default and help is above
//! `calc` and is keyed by this type.

/// One input of a scenario. A closed set: a new input is a new variant, its URL key, its flag
/// and its schema row.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Input {
    /// A seed example as the base scenario (`s1`, `s2`, `s3`).
    Example,
    /// A catalog model id.
    Model,
    /// A custom model: the text of a pasted HF config.json (overrides `model`).
    Config,
    /// The checkpoint's bytes (`metadata.total_size` of its `model.safetensors.index.json`):
    /// the weight estimate is scaled to it.
    CheckpointBytes,
    /// `--quantization`: the weights' format (a checkpoint's method, or an online shorthand
    /// vLLM quantizes with as it loads).
    Quantization,
    /// `--dtype`: the unquantized weights' and activations' dtype.
    Dtype,
    /// A catalog GPU id.
    Gpu,
    /// The GPU's total as the driver reports it: alone, a custom GPU; with `gpu` or `example`,
    /// that GPU's total replaced (CLI `--gpu-memory`).
    GpuMemory,
    /// GPUs available (default: exactly `tp x pp x dp`).
    Gpus,
    Tp,
    Pp,
    Dp,
    /// `VLLM_PP_LAYER_PARTITION`: layers per stage, comma-separated.
    PpPartition,
    /// `--enable-expert-parallel`.
    Ep,
    /// `--gpu-memory-utilization`.
    Util,
    /// `--kv-cache-memory-bytes`.
    KvBytes,
    MaxModelLen,
    MaxNumSeqs,
    MaxNumBatchedTokens,
    KvDtype,
    BlockSize,
    /// `--enforce-eager`.
    Eager,
    NumGpuBlocksOverride,
    /// `--speculative-config` method, or `none`.
    Spec,
    /// `num_speculative_tokens` of the speculative config.
    SpecTokens,
    /// Drafter weights per last-stage rank (measured).
    Drafter,
    /// `draft_model`'s drafter (the speculative config's `model`): a catalog model id or its
    /// Hugging Face repo.
    DraftModel,
    /// `--disable-hybrid-kv-cache-manager`.
    NoHybrid,
    /// `--no-async-scheduling`.
    NoAsync,
    /// `--attention-backend`: a dense or MLA backend, one of DeepSeek-V4's sparse backends, or `auto`.
    AttnBackend,
    /// The vLLM release whose rules apply.
    Vllm,
    /// Measured weights per rank ("Model loading took"); one value, or one per stage.
    Weights,
    /// Measured activation peak of the profile run.
    Activation,
    /// Measured non-torch / other consumption after the snapshot.
    NonTorch,
    /// Measured CUDA-graph memory.
    CudaGraph,
    /// Measured load-time transient above the weights.
    LoadPeak,
    /// Measured free memory at the init snapshot.
    Free,
    /// Measured "Available KV cache memory"; one value, or one per stage.
    AvailableKv,
    /// Memory other processes hold on each GPU.
    Tenants,
    /// Unified memory: MemAvailable before the start.
    MemAvailable,
    /// Unified memory: what the start gate keeps free.
    Headroom,
    /// Unified memory: a rank's overhead besides weights and KV.
    Overhead,
    /// Unified memory: the memory guard's kill threshold during the load.
    GuardThreshold,
    /// Average request length for the concurrency-at-average figure.
    AvgLen,
    /// The unit figures are shown in: `gib` or `gb`.
    Unit,
    /// The step of an example's walkthrough the page shows (1 is the article's start). A view
    /// field: the step's inputs travel in the link beside it.
    Step,
}

impl Input {
    /// Every field, in the order the query string lists them.
    pub const ALL: [Input; 46] = [
        Input::Example,
        Input::Model,
        Input::Config,
        Input::CheckpointBytes,
        Input::Quantization,
        Input::Dtype,
        Input::Gpu,
        Input::GpuMemory,
        Input::Gpus,
        Input::Tp,
        Input::Pp,
        Input::Dp,
        Input::PpPartition,
        Input::Ep,
        Input::Util,
        Input::KvBytes,
        Input::MaxModelLen,
        Input::MaxNumSeqs,
        Input::MaxNumBatchedTokens,
        Input::KvDtype,
        Input::BlockSize,
        Input::Eager,
        Input::NumGpuBlocksOverride,
        Input::Spec,
        Input::SpecTokens,
        Input::Drafter,
        Input::DraftModel,
        Input::NoHybrid,
        Input::NoAsync,
        Input::AttnBackend,
        Input::Vllm,
        Input::Weights,
        Input::Activation,
        Input::NonTorch,
        Input::CudaGraph,
        Input::LoadPeak,
        Input::Free,
        Input::AvailableKv,
        Input::Tenants,
        Input::MemAvailable,
        Input::Headroom,
        Input::Overhead,
        Input::GuardThreshold,
        Input::AvgLen,
        Input::Unit,
        Input::Step,
    ];

    /// The query-string key.
    pub fn key(self) -> &'static str {
        match self {
            Input::Example => "example",
            Input::Model => "model",
            Input::Config => "config",
            Input::CheckpointBytes => "checkpoint-bytes",
            Input::Quantization => "quantization",
            Input::Dtype => "dtype",
            Input::Gpu => "gpu",
            Input::GpuMemory => "gpu-memory",
            Input::Gpus => "gpus",
            Input::Tp => "tp",
            Input::Pp => "pp",
            Input::Dp => "dp",
            Input::PpPartition => "pp-partition",
            Input::Ep => "ep",
            Input::Util => "util",
            Input::KvBytes => "kv-bytes",
            Input::MaxModelLen => "max-model-len",
            Input::MaxNumSeqs => "max-num-seqs",
            Input::MaxNumBatchedTokens => "max-num-batched-tokens",
            Input::KvDtype => "kv-dtype",
            Input::BlockSize => "block-size",
            Input::Eager => "eager",
            Input::NumGpuBlocksOverride => "num-gpu-blocks-override",
            Input::Spec => "spec",
            Input::SpecTokens => "spec-tokens",
            Input::Drafter => "drafter",
            Input::DraftModel => "draft-model",
            Input::NoHybrid => "no-hybrid",
            Input::NoAsync => "no-async",
            Input::AttnBackend => "attention-backend",
            Input::Vllm => "vllm",
            Input::Weights => "weights",
            Input::Activation => "activation",
            Input::NonTorch => "non-torch",
            Input::CudaGraph => "cuda-graph",
            Input::LoadPeak => "load-peak",
            Input::Free => "free",
            Input::AvailableKv => "available-kv",
            Input::Tenants => "tenants",
            Input::MemAvailable => "mem-available",
            Input::Headroom => "headroom",
            Input::Overhead => "overhead",
            Input::GuardThreshold => "guard-threshold",
            Input::AvgLen => "avg-len",
            Input::Unit => "unit",
            Input::Step => "step",
        }
    }

    /// The flag name: vLLM's where it has one, else Headroom's CLI flag. It is also the input's
    /// `data-testid` and what `CalcError::field()` returns for it.
    pub fn flag(self) -> &'static str {
        match self {
            Input::Example => "example",
            Input::Model => "model",
            Input::Config => "config",
            Input::CheckpointBytes => "checkpoint-bytes",
            Input::Quantization => "quantization",
            Input::Dtype => "dtype",
            Input::Gpu => "gpu",
            Input::GpuMemory => "gpu-memory",
            Input::Gpus => "gpus",
            Input::Tp => "tensor-parallel-size",
            Input::Pp => "pipeline-parallel-size",
            Input::Dp => "data-parallel-size",
            Input::PpPartition => "pp-layer-partition",
            Input::Ep => "enable-expert-parallel",
            Input::Util => "gpu-memory-utilization",
            Input::KvBytes => "kv-cache-memory-bytes",
            Input::MaxModelLen => "max-model-len",
            Input::MaxNumSeqs => "max-num-seqs",
            Input::MaxNumBatchedTokens => "max-num-batched-tokens",
            Input::KvDtype => "kv-cache-dtype",
            Input::BlockSize => "block-size",
            Input::Eager => "enforce-eager",
            Input::NumGpuBlocksOverride => "num-gpu-blocks-override",
            Input::Spec => "speculative-config",
            Input::SpecTokens => "num-speculative-tokens",
            Input::Drafter => "drafter-weights",
            Input::DraftModel => "draft-model",
            Input::NoHybrid => "disable-hybrid-kv-cache-manager",
            Input::NoAsync => "no-async-scheduling",
            Input::AttnBackend => "attention-backend",
            Input::Vllm => "vllm-version",
            Input::Weights => "weights",
            Input::Activation => "activation-peak",
            Input::NonTorch => "non-torch",
            Input::CudaGraph => "cuda-graph",
            Input::LoadPeak => "load-peak",
            Input::Free => "free-memory",
            Input::AvailableKv => "available-kv",
            Input::Tenants => "other-tenants",
            Input::MemAvailable => "mem-available",
            Input::Headroom => "headroom",
            Input::Overhead => "overhead",
            Input::GuardThreshold => "guard-threshold",
            Input::AvgLen => "average-request-len",
            Input::Unit => "unit",
            Input::Step => "step",
        }
    }

    /// The field a query key names.
    pub fn from_key(key: &str) -> Option<Input> {
        Input::ALL.iter().copied().find(|f| f.key() == key)
    }

    /// The field an error's flag names (`CalcError::field()`), with the spellings the core and
    /// vLLM use for the same input.
    pub fn from_flag(flag: &str) -> Option<Input> {
        let flag = flag.trim_start_matches('-');
        let alias = match flag {
            "VLLM_PP_LAYER_PARTITION" | "pp-partition" | "pp_layer_partition" => {
                Some(Input::PpPartition)
            }
            "tp" | "tensor_parallel_size" => Some(Input::Tp),
            "pp" | "pipeline_parallel_size" => Some(Input::Pp),
            "dp" | "data_parallel_size" => Some(Input::Dp),
            "gpu_memory_utilization" => Some(Input::Util),
            "kv_cache_memory_bytes" | "kv-cache-memory" => Some(Input::KvBytes),
            "max_model_len" => Some(Input::MaxModelLen),
            "max_num_seqs" => Some(Input::MaxNumSeqs),
            "max_num_batched_tokens" => Some(Input::MaxNumBatchedTokens),
            "kv_cache_dtype" => Some(Input::KvDtype),
            "q" => Some(Input::Quantization),
            "block_size" => Some(Input::BlockSize),
            "num_gpu_blocks_override" => Some(Input::NumGpuBlocksOverride),
            "num_speculative_tokens" => Some(Input::SpecTokens),
            "drafter" => Some(Input::Drafter),
            _ => None,
        };
        alias.or_else(|| {
            Input::ALL
                .iter()
                .copied()
                .find(|f| f.flag() == flag || f.key() == flag)
        })
    }
}
