//! A model's architecture as the memory math needs it: layers and their attention kinds, heads,
//! MLA latent sizes, MoE shapes, linear-attention state shapes, vocab, dtype and quantization.
//!
//! `catalog` builds this from a Hugging Face `config.json`; nothing here parses text.

/// The model's compute dtype (`torch_dtype`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ModelDtype {
    #[default]
    Bfloat16,
    Float16,
    Float32,
}

impl ModelDtype {
    pub fn bytes(self) -> u64 {
        match self {
            ModelDtype::Bfloat16 | ModelDtype::Float16 => 2,
            ModelDtype::Float32 => 4,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            ModelDtype::Bfloat16 => "bfloat16",
            ModelDtype::Float16 => "float16",
            ModelDtype::Float32 => "float32",
        }
    }
}

/// How the checkpoint's linear weights are stored.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub enum WeightQuant {
    /// Unquantized: the model dtype.
    #[default]
    None,
    /// FP8 weights; `block` = 128 means one fp32 scale per 128 x 128 block (DeepSeek style),
    /// 0 means per-tensor/per-channel scales (negligible).
    Fp8 { block: u64 },
    /// INT8 weights (W8A8), per-channel scales.
    Int8,
    /// `bits`-bit integers (2, 3, 4 or 8) with an fp16 scale and a `bits`-bit zero point per
    /// `group` weights (AWQ/GPTQ; bitsandbytes NF4 as 4-bit with groups of 64).
    Int { bits: u64, group: u64 },
    /// NVFP4: 4-bit floats with an fp8 scale per 16 weights.
    Nvfp4,
    /// MXFP4: 4-bit floats with an e8m0 scale per 32 weights (gpt-oss: experts only).
    Mxfp4,
    /// FP8 linears with `block` x `block` scales and 4-bit float experts with one scale byte per
    /// 32 weights (DeepSeek-V4: `quant_method: fp8` with `expert_dtype: fp4`).
    Fp8Fp4Experts { block: u64 },
    /// MXFP8: FP8 with an e8m0 scale per 32 weights, in every linear and expert.
    Mxfp8,
    /// MXFP4 in every linear and expert (vLLM's online `mxfp4`), not the experts alone.
    Mxfp4Linear,
    /// INT8 routed experts with per-channel scales, the other linears unquantized (vLLM's
    /// online `int8_per_channel_weight_only` and `experts_int8`).
    ExpertsInt8,
    /// NVFP4 routed experts, the other linears unquantized (vLLM's online `nvfp4_per_token`).
    ExpertsNvfp4,
}

impl WeightQuant {
    /// Bytes per weight, scales included, as a rational (numerator, denominator).
    pub fn bytes_per_weight(self, dtype: ModelDtype) -> (u64, u64) {
        match self {
            WeightQuant::None => (dtype.bytes(), 1),
            // 1 byte + 4 bytes per block^2 weights.
            WeightQuant::Fp8 { block } | WeightQuant::Fp8Fp4Experts { block } if block > 0 => {
                (block * block + 4, block * block)
            }
            WeightQuant::Fp8 { .. }
            | WeightQuant::Fp8Fp4Experts { .. }
            | WeightQuant::Int8
            | WeightQuant::ExpertsInt8 => (1, 1),
            // bits/8 bytes + (2-byte scale + bits/8-byte zero) per group.
            WeightQuant::Int { bits, group } => (group * bits + 16 + bits, 8 * group.max(1)),
            // Half a byte + one fp8 scale per 16.
            WeightQuant::Nvfp4 | WeightQuant::ExpertsNvfp4 => (9, 16),
            // Half a byte + one e8m0 scale per 32.
            WeightQuant::Mxfp4 | WeightQuant::Mxfp4Linear => (17, 32),
            // A byte + one e8m0 scale per 32.
            WeightQuant::Mxfp8 => (33, 32),
        }
    }

    pub fn label(self) -> String {
        match self {
            WeightQuant::None => "unquantized".into(),
            WeightQuant::Fp8 { block } if block > 0 => {
                format!("FP8 ({block}x{block} block scales)")
            }
            WeightQuant::Fp8 { .. } => "FP8".into(),
            WeightQuant::Int8 => "INT8".into(),
            WeightQuant::Int { bits, group } => format!("INT{bits} (group {group})"),
            WeightQuant::Nvfp4 => "NVFP4".into(),
            WeightQuant::Mxfp4 => "MXFP4 (experts)".into(),
            WeightQuant::Fp8Fp4Experts { block } => {
                format!("FP8 ({block}x{block} block scales), FP4 experts")
            }
            WeightQuant::Mxfp8 => "MXFP8".into(),
            WeightQuant::Mxfp4Linear => "MXFP4".into(),
            WeightQuant::ExpertsInt8 => "INT8 (experts)".into(),
            WeightQuant::ExpertsNvfp4 => "NVFP4 (experts)".into(),
        }
    }

    /// MXFP4 checkpoints (gpt-oss) quantize only the experts.
    pub fn experts_only(self) -> bool {
        matches!(
            self,
            WeightQuant::Mxfp4 | WeightQuant::ExpertsInt8 | WeightQuant::ExpertsNvfp4
        )
    }

    /// The format of one linear: experts and the other linears differ in mixed checkpoints.
    ///
    /// ```
    /// use headroom::calc::model::WeightQuant;
    /// let q = WeightQuant::Fp8Fp4Experts { block: 128 };
    /// assert_eq!(q.for_linear(true), WeightQuant::Mxfp4);
    /// assert_eq!(q.for_linear(false), WeightQuant::Fp8 { block: 128 });
    /// assert_eq!(WeightQuant::Mxfp4.for_linear(false), WeightQuant::None);
    /// ```
    pub fn for_linear(self, is_expert: bool) -> WeightQuant {
        match self {
            WeightQuant::Mxfp4 | WeightQuant::ExpertsInt8 | WeightQuant::ExpertsNvfp4
                if !is_expert =>
            {
                WeightQuant::None
            }
            WeightQuant::Fp8Fp4Experts { .. } if is_expert => WeightQuant::Mxfp4,
            WeightQuant::Fp8Fp4Experts { block } => WeightQuant::Fp8 { block },
            other => other,
        }
    }
}

/// What one decoder layer keeps in the KV cache.
#[derive(Clone, Debug, PartialEq)]
pub enum LayerKind {
    /// Full attention over the whole context.
    Full,
    /// Sliding-window attention over the last `window` tokens.
    Sliding { window: u64 },
    /// Chunked local attention (Llama 4).
    Chunked { chunk: u64 },
    /// Multi-head latent attention (DeepSeek): one latent per token, not split by TP.
    Mla,
    /// Gated DeltaNet linear attention (Qwen3-Next): a fixed recurrent state per request.
    GatedDeltaNet,
    /// Mamba2 mixer: a fixed conv + SSM state per request.
    Mamba2,
    /// Reuses another layer's KV (`kv_sharing_target_layer_name`): no cache of its own.
    SharedKv,
    /// A layer without attention or state (a Nemotron-H MLP or MoE layer, a NAS layer whose
    /// attention is a no-op): no cache at all.
    NoCache,
}

impl LayerKind {
    pub fn label(&self) -> String {
        match self {
            LayerKind::Full => "full".into(),
            LayerKind::Sliding { window } => format!("sliding:{window}"),
            LayerKind::Chunked { chunk } => format!("chunked:{chunk}"),
            LayerKind::Mla => "mla".into(),
            LayerKind::GatedDeltaNet => "gated-deltanet".into(),
            LayerKind::Mamba2 => "mamba2".into(),
            LayerKind::SharedKv => "shared-kv".into(),
            LayerKind::NoCache => "no-cache".into(),
        }
    }
}

/// MLA dimensions (DeepSeek-V2/V3/R1, Kimi-K2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mla {
    pub kv_lora_rank: u64,
    pub qk_rope_head_dim: u64,
    pub qk_nope_head_dim: u64,
    pub v_head_dim: u64,
    /// `None`: queries are projected directly (no q LoRA).
    pub q_lora_rank: Option<u64>,
}

/// Mixture-of-experts shape.
#[derive(Clone, Debug, PartialEq)]
pub struct Moe {
    pub n_experts: u64,
    pub top_k: u64,
    pub moe_intermediate_size: u64,
    pub n_shared_experts: u64,
    /// Intermediate size of the shared expert(s) in total (Qwen style), if different.
    pub shared_intermediate_size: Option<u64>,
    /// Per layer: true when the layer has a dense MLP instead of experts.
    pub dense_layers: Vec<bool>,
    /// `moe_latent_size` (Nemotron 3 Super): the experts work in this width, behind a
    /// replicated hidden -> latent and latent -> hidden projection pair.
    pub latent: Option<u64>,
}

/// Linear-attention (gated DeltaNet) or Mamba2 state dimensions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LinearState {
    pub conv_kernel: u64,
    /// GDN: key heads; Mamba2: n_groups.
    pub k_heads: u64,
    /// GDN: key head dim; Mamba2: d_state.
    pub k_dim: u64,
    /// GDN: value heads; Mamba2: SSM heads.
    pub v_heads: u64,
    /// GDN: value head dim; Mamba2: head dim.
    pub v_dim: u64,
}

/// KV bytes per token measured for an architecture the formulas cannot describe yet:
/// a pool of `pool_bytes` backed `tokens` tokens on one rank.
#[derive(Clone, Debug, PartialEq)]
pub struct MeasuredKv {
    pub pool_bytes: u64,
    pub tokens: u64,
    /// The TP size the measurement was taken at.
    pub tp: u32,
    pub source: String,
}

/// DeepSeek-V4's attention, as vLLM 0.33.0's `DeepseekV4Attention` registers its caches.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompressedAttn {
    /// `compress_ratios`, one per decoder layer: 0 (sliding window only), 4 or 128.
    pub ratios: Vec<u32>,
    /// `sliding_window` (128).
    pub window: u64,
    /// `index_head_dim` (128): the indexer of the ratio-4 layers.
    pub index_head_dim: u64,
    /// `head_dim` (512): the compressor states' width.
    pub head_dim: u64,
    /// `n_mtp_layers`: the DSpark drafter's decoder layers (`DSparkDeepseekV4Model` builds 3
    /// when the config does not say).
    pub dspark_layers: u32,
    /// How many target layers feed the DSpark drafter (`dspark_target_layer_ids`), when the
    /// config declares them: vLLM cannot build DSpark without them.
    pub dspark_target_layers: Option<u32>,
    /// `dspark_markov_rank`: the width of DSpark's Markov head, when declared.
    pub dspark_markov_rank: Option<u64>,
}

/// DeepSeek-V3.2's lightning indexer, as `DeepseekV32IndexerCache` sizes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SparseMla {
    /// `index_topk`: tokens each query attends to (sizes the indexer's buffers).
    pub index_topk: u64,
    /// `index_head_dim`: the indexer key's width (128).
    pub index_head_dim: u64,
}

/// Bytes per token (per state for DeepSeek-V4) of a DeepSeek indexer's K cache: fp8 keys plus
/// one fp32 scale per 128 values, stored as uint8 (`head_dim + head_dim // 128 * 4` = 132).
pub fn indexer_key_bytes(index_head_dim: u64) -> u64 {
    index_head_dim + index_head_dim / 128 * 4
}

impl SparseMla {
    /// Bytes per token of the indexer K cache ([`indexer_key_bytes`]).
    pub fn cache_bytes_per_token(&self) -> u64 {
        indexer_key_bytes(self.index_head_dim)
    }
}

/// Whether vLLM has an MTP drafter for a config: `SpeculativeConfig.hf_config_override` maps
/// some model types and architectures to an MTP model (`deepseek_v3` to `deepseek_mtp` ...),
/// and `method: mtp` on any other stops the engine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MtpDraft {
    /// "Unsupported speculative method: 'mtp'" (vLLM's NotImplementedError).
    Unsupported,
    /// An MTP model of [`Model::mtp_layers`] modules.
    Mapped,
    /// Mapped, then refused with vLLM's own message (DeepSeek-V4.1, Inkling without MTP
    /// weights).
    Refused(String),
}

/// A model, as the accounting sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct Model {
    pub name: String,
    /// The config's first `architectures` entry (vLLM's model class), `""` when absent.
    pub architecture: String,
    pub n_layers: u32,
    pub hidden_size: u64,
    pub n_heads: u64,
    pub n_kv_heads: u64,
    pub head_dim: u64,
    /// V head size when it differs from K (enters the page as `head_size + head_size_v`).
    pub head_dim_v: u64,
    pub intermediate_size: u64,
    pub vocab_size: u64,
    pub tie_word_embeddings: bool,
    /// One entry per decoder layer.
    pub layers: Vec<LayerKind>,
    pub mla: Option<Mla>,
    pub moe: Option<Moe>,
    pub linear: Option<LinearState>,
    /// The MTP modules vLLM builds as the drafter (its `n_predict`): DeepSeek's
    /// `num_nextn_predict_layers`, Qwen3.5's `mtp_num_hidden_layers`, 1 for MiMo-V2 ... (0 when
    /// the config does not say).
    pub mtp_layers: u32,
    /// What `method: mtp` finds for this config ([`MtpDraft`]).
    pub mtp_draft: MtpDraft,
    /// Modules the quantization config keeps unquantized (compressed-tensors' `ignore`,
    /// `modules_to_not_convert`, ModelOpt's `exclude_modules`), the LM head aside: the
    /// estimate does not read them, and says so.
    pub quant_skips: Vec<String>,
    /// The decoder parts the quantization config keeps at full width, read from its skip
    /// list (those Headroom recognises; the rest stay in `quant_skips`).
    pub keep_full: Vec<crate::calc::blocks::KeepFull>,
    pub dtype: ModelDtype,
    pub quant: WeightQuant,
    /// A KV scheme the quantization config declares (turns `auto` into fp8).
    pub kv_fp8_from_checkpoint: bool,
    /// vLLM's derived context length: the largest `--max-model-len` it accepts.
    pub max_position_embeddings: u64,
    /// How that length was derived, for messages (`max_position_embeddings=131072`).
    pub max_len_key: String,
    /// LongRoPE models default to their original length, below the derived one.
    pub longrope_default: Option<u64>,
    /// The checkpoint's total bytes (safetensors), when known.
    pub checkpoint_bytes: Option<u64>,
    pub measured_kv: Option<MeasuredKv>,
    /// The config describes a vision encoder (`vision_config`).
    pub vision_encoder: bool,
    /// The vision encoder's shape, when its `vision_config` gives enough to estimate it.
    pub vision: Option<crate::calc::blocks::VisionTower>,
    /// Per-layer structure when layers differ beyond their [`LayerKind`] and MoE pattern
    /// (hybrid Mamba stacks, NAS `block_configs`); empty: derived ([`Model::block`]).
    pub blocks: Vec<crate::calc::blocks::Block>,
    /// An MTP module's own decoder stack (Nemotron-H's `mtp_hybrid_override_pattern`); empty:
    /// one layer like the target's last.
    pub mtp_blocks: Vec<crate::calc::blocks::Block>,
    /// Bytes per value of the Mamba SSM state when it is not the model's dtype: Nemotron-H's
    /// `mamba_ssm_cache_dtype` (vLLM's NemotronHForCausalLMConfig sets float32 unless the
    /// config or --mamba-ssm-cache-dtype says otherwise).
    pub ssm_state_bytes: Option<u64>,
    /// The Mamba mixers' shape, for a model with Mamba layers.
    pub mamba: Option<crate::calc::blocks::MambaShape>,
    /// Whether the MLP and expert activations are gated (SwiGLU / GeGLU: gate, up and down
    /// projections) or not (`relu2`, GELU MLPs: up and down only).
    pub mlp_gated: bool,
    /// DeepSeek-V3.2's sparse attention (`index_topk` on an MLA model): every MLA layer also
    /// keeps the lightning indexer's K cache, and the sparse MLA backends take 64-token blocks.
    pub sparse_mla: Option<SparseMla>,
    /// DeepSeek-V4's attention (`compress_ratios`): a sliding window in every layer, and
    /// compressed KV with its compressor state (and, at ratio 4, an indexer) in most.
    pub compressed: Option<CompressedAttn>,
    /// `quantization_config.quant_method` as written (lower case), `""` when unquantized.
    pub quant_method: String,
    /// GPTQ's `sym: false` (zero points): vLLM 0.33's AutoGPTQ takes symmetric weights only.
    pub quant_asymmetric: bool,
    /// Where the weights' format comes from ([`QuantSource`]).
    pub quant_source: QuantSource,
}

/// Where a model's weight format comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum QuantSource {
    /// The checkpoint's config (or unquantized).
    #[default]
    Checkpoint,
    /// `--quantization` with an online method: vLLM quantizes the unquantized checkpoint as it
    /// loads it.
    Online,
    /// `--quantization` with a checkpoint method on an unquantized config: that method's
    /// checkpoint of the model, its usual format assumed (`calc::weight_format`).
    Assumed,
}

impl Model {
    /// The context length vLLM plans when `--max-model-len` is not given: the derived one, or
    /// LongRoPE's original length.
    pub fn default_max_model_len(&self) -> u64 {
        self.longrope_default
            .map_or(self.max_position_embeddings, |o| {
                o.clamp(1, self.max_position_embeddings.max(1))
            })
            .max(1)
    }

    /// A small dense model for tests and examples (Llama-3.1-8B's shape).
    pub fn example_dense() -> Model {
        Model {
            name: "Llama-3.1-8B (shape)".into(),
            architecture: "LlamaForCausalLM".into(),
            n_layers: 32,
            hidden_size: 4096,
            n_heads: 32,
            n_kv_heads: 8,
            head_dim: 128,
            head_dim_v: 128,
            intermediate_size: 14336,
            vocab_size: 128_256,
            tie_word_embeddings: false,
            layers: vec![LayerKind::Full; 32],
            mla: None,
            moe: None,
            linear: None,
            mtp_layers: 0,
            mtp_draft: MtpDraft::Unsupported,
            quant_skips: Vec::new(),
            keep_full: Vec::new(),
            dtype: ModelDtype::Bfloat16,
            quant: WeightQuant::None,
            kv_fp8_from_checkpoint: false,
            max_position_embeddings: 131_072,
            max_len_key: "max_position_embeddings=131072".into(),
            longrope_default: None,
            checkpoint_bytes: None,
            measured_kv: None,
            vision_encoder: false,
            vision: None,
            blocks: Vec::new(),
            mtp_blocks: Vec::new(),
            ssm_state_bytes: None,
            mamba: None,
            mlp_gated: true,
            sparse_mla: None,
            compressed: None,
            quant_method: String::new(),
            quant_asymmetric: false,
            quant_source: QuantSource::Checkpoint,
        }
    }

    /// Validates the shape, naming the field that is wrong.
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        let positive = [
            ("num_hidden_layers", self.n_layers as u64),
            ("hidden_size", self.hidden_size),
            ("num_attention_heads", self.n_heads),
            ("vocab_size", self.vocab_size),
            ("max_position_embeddings", self.max_position_embeddings),
        ];
        for (field, v) in positive {
            if v == 0 {
                return Err((field, format!("{field} must be at least 1")));
            }
        }
        if self.layers.len() != self.n_layers as usize {
            return Err((
                "layer_types",
                format!(
                    "layer_types has {} {} but num_hidden_layers is {}",
                    self.layers.len(),
                    super::units::plural(self.layers.len() as u64, "entry", "entries"),
                    self.n_layers
                ),
            ));
        }
        // An MLA layer caches its latent and its rotary part per token: with both 0 it caches
        // nothing, and every figure built on its page size would divide by zero.
        if let Some(m) = &self.mla {
            if m.kv_lora_rank == 0 && m.qk_rope_head_dim == 0 {
                return Err((
                    "kv_lora_rank",
                    "kv_lora_rank and qk_rope_head_dim are both 0: an MLA layer would cache nothing".into(),
                ));
            }
        }
        // Heads beyond any model make head_dim (hidden / heads) 0: name the field given.
        if self.n_heads > 1 << 12 {
            return Err((
                "num_attention_heads",
                format!(
                    "num_attention_heads {} is far beyond any real model (at most 4096)",
                    self.n_heads
                ),
            ));
        }
        if self.mla.is_none() && self.layers.iter().any(|l| l.uses_heads()) {
            if self.n_kv_heads == 0 {
                return Err((
                    "num_key_value_heads",
                    "num_key_value_heads must be at least 1".into(),
                ));
            }
            if self.head_dim == 0 {
                return Err(("head_dim", "head_dim must be at least 1".into()));
            }
            // Grouped-query attention shares each KV head among a whole number of query heads.
            if self.n_kv_heads > self.n_heads || self.n_heads % self.n_kv_heads != 0 {
                return Err((
                    "num_key_value_heads",
                    format!(
                        "num_key_value_heads {} must divide num_attention_heads {}",
                        self.n_kv_heads, self.n_heads
                    ),
                ));
            }
        }
        // Upper bounds far above any real model (the largest have hidden 16-25k, 128 heads of
        // at most 512, 512 experts), chosen so that the weight and KV arithmetic on one layer
        // cannot overflow 64 bits whatever the other fields are.
        let mut bounds: Vec<(&'static str, u64, u64)> = vec![
            ("num_hidden_layers", u64::from(self.n_layers), 10_000),
            ("hidden_size", self.hidden_size, 1 << 18),
            ("num_attention_heads", self.n_heads, 1 << 12),
            ("num_key_value_heads", self.n_kv_heads, 1 << 12),
            ("head_dim", self.head_dim, 1 << 12),
            ("v_head_dim", self.head_dim_v, 1 << 12),
            ("intermediate_size", self.intermediate_size, 1 << 20),
            ("vocab_size", self.vocab_size, 1 << 26),
            (
                "max_position_embeddings",
                self.max_position_embeddings,
                1 << 32,
            ),
            ("num_nextn_predict_layers", u64::from(self.mtp_layers), 64),
            (
                "checkpoint.total_bytes",
                self.checkpoint_bytes.unwrap_or(0),
                1 << 56,
            ),
        ];
        for l in &self.layers {
            match l {
                LayerKind::Sliding { window: 0 } => {
                    return Err(("sliding_window", "sliding_window must be at least 1".into()))
                }
                LayerKind::Chunked { chunk: 0 } => {
                    return Err((
                        "attention_chunk_size",
                        "attention_chunk_size must be at least 1".into(),
                    ))
                }
                LayerKind::Sliding { window } => bounds.push(("sliding_window", *window, 1 << 32)),
                LayerKind::Chunked { chunk } => {
                    bounds.push(("attention_chunk_size", *chunk, 1 << 32))
                }
                LayerKind::Full
                | LayerKind::Mla
                | LayerKind::GatedDeltaNet
                | LayerKind::Mamba2
                | LayerKind::SharedKv
                | LayerKind::NoCache => {}
            }
        }
        if let Some(m) = &self.mla {
            bounds.extend([
                ("kv_lora_rank", m.kv_lora_rank, 1 << 14),
                ("qk_rope_head_dim", m.qk_rope_head_dim, 1 << 12),
                ("qk_nope_head_dim", m.qk_nope_head_dim, 1 << 12),
                ("v_head_dim", m.v_head_dim, 1 << 12),
                ("q_lora_rank", m.q_lora_rank.unwrap_or(0), 1 << 16),
            ]);
        }
        if let Some(m) = &self.moe {
            bounds.extend([
                ("num_experts", m.n_experts, 1 << 12),
                ("num_experts_per_tok", m.top_k, 1 << 12),
                ("moe_intermediate_size", m.moe_intermediate_size, 1 << 20),
                ("n_shared_experts", m.n_shared_experts, 1 << 8),
                (
                    "shared_expert_intermediate_size",
                    m.shared_intermediate_size.unwrap_or(0),
                    1 << 24,
                ),
            ]);
        }
        if let Some(l) = &self.linear {
            bounds.extend([
                ("linear_conv_kernel_dim", l.conv_kernel, 1 << 10),
                ("linear_num_key_heads", l.k_heads, 1 << 12),
                ("linear_key_head_dim", l.k_dim, 1 << 12),
                ("linear_num_value_heads", l.v_heads, 1 << 12),
                ("linear_value_head_dim", l.v_dim, 1 << 12),
            ]);
        }
        match self.quant {
            WeightQuant::Fp8 { block } | WeightQuant::Fp8Fp4Experts { block } => {
                bounds.push(("weight_block_size", block, 1 << 12))
            }
            WeightQuant::Int { group, .. } => bounds.push(("group_size", group, 1 << 20)),
            WeightQuant::None
            | WeightQuant::Int8
            | WeightQuant::Nvfp4
            | WeightQuant::Mxfp4
            | WeightQuant::Mxfp8
            | WeightQuant::Mxfp4Linear
            | WeightQuant::ExpertsInt8
            | WeightQuant::ExpertsNvfp4 => {}
        }
        for (field, value, max) in bounds {
            if value > max {
                return Err((
                    field,
                    format!("{field} {value} is far beyond any real model (at most {max})"),
                ));
            }
        }
        Ok(())
    }

    /// Whether vLLM builds this model's embedding and LM head on every pipeline stage: these
    /// classes create them without asking the stage (vLLM 0.33.0's mixtral.py, qwen3_moe.py,
    /// qwen3_next.py, gpt_oss.py, gemma2.py, gemma3.py), where Llama, Qwen2/3 and DeepSeek put
    /// a `PPMissingLayer` on the stages that do not use them.
    pub fn tables_on_every_stage(&self) -> bool {
        matches!(
            self.architecture.as_str(),
            "MixtralForCausalLM"
                | "Qwen3MoeForCausalLM"
                | "Qwen3NextForCausalLM"
                | "GptOssForCausalLM"
                | "Gemma2ForCausalLM"
                | "Gemma3ForCausalLM"
                | "Gemma3ForConditionalGeneration"
        )
    }

    /// Layer `i`'s structure: the config's own where it gives one per layer, else attention (or
    /// the layer's linear-attention mixer) with a dense MLP or the experts.
    pub fn block(&self, i: usize) -> crate::calc::blocks::Block {
        use crate::calc::blocks::{Block, Ffn, Mixer};
        if let Some(b) = self.blocks.get(i) {
            return *b;
        }
        let mixer = match self.layers.get(i) {
            Some(LayerKind::GatedDeltaNet) => Mixer::GatedDeltaNet,
            Some(LayerKind::Mamba2) => Mixer::Mamba,
            Some(LayerKind::NoCache) => Mixer::None,
            _ => Mixer::Attention,
        };
        let ffn = match &self.moe {
            Some(moe) if !moe.dense_layers.get(i).copied().unwrap_or(false) => Ffn::Moe,
            _ => Ffn::Mlp(self.intermediate_size),
        };
        Block { mixer, ffn }
    }

    /// Padded vocab: vLLM pads embedding rows to a multiple of 64 (`DEFAULT_VOCAB_PADDING_SIZE`).
    pub fn padded_vocab(&self) -> u64 {
        self.vocab_size.div_ceil(64) * 64
    }
}

impl LayerKind {
    fn uses_heads(&self) -> bool {
        matches!(
            self,
            LayerKind::Full | LayerKind::Sliding { .. } | LayerKind::Chunked { .. }
        )
    }
}
