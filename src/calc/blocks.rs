//! What each decoder layer is built of, for its weights: the mixer (attention, a Mamba mixer,
//! gated DeltaNet, a linear, or nothing) and the feed-forward part (a dense MLP of some width,
//! experts, a linear, or nothing), as vLLM's model classes build them. Hybrid stacks
//! (Nemotron-H's `hybrid_override_pattern`, Jamba, Granite 4, Bamba) and NAS-pruned models
//! (DeciLM `block_configs`) differ layer by layer; every other model is derived from its
//! [`LayerKind`](super::model::LayerKind)s and MoE shape ([`Model::block`](super::model::Model::block)).
//!
//! `catalog` fills these from a config; nothing here parses text.

/// The mixing part of a decoder layer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mixer {
    /// Self-attention (MHA / GQA / MLA, as the model's heads and `mla` say).
    Attention,
    /// Self-attention with its own KV head count (NAS-pruned layers: `n_heads_in_group`).
    AttentionKvHeads(u64),
    /// A Mamba (1 or 2) mixer, shaped by [`Model::mamba`](super::model::Model::mamba).
    Mamba,
    /// Attention and a Mamba2 mixer side by side in one layer (Falcon-H1).
    AttentionAndMamba,
    /// Gated DeltaNet linear attention (Qwen3-Next, Qwen3.5).
    GatedDeltaNet,
    /// A single hidden x hidden linear in place of attention (DeciLM `replace_with_linear`).
    Linear,
    /// No mixer (a Nemotron-H MLP or MoE layer, a DeciLM `no_op` attention).
    None,
}

/// The feed-forward part of a decoder layer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ffn {
    /// A dense MLP of this intermediate width (gated or not per [`Model::mlp_gated`](super::model::Model::mlp_gated)).
    Mlp(u64),
    /// The routed experts, router and shared experts of [`Model::moe`](super::model::Model::moe).
    Moe,
    /// A single hidden x hidden linear (DeciLM `replace_with_linear`).
    Linear,
    /// No feed-forward part.
    None,
}

/// One decoder layer's structure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Block {
    pub mixer: Mixer,
    pub ffn: Ffn,
}

/// A Mamba mixer's shape, as `MambaMixer` (version 1) and `MambaMixer2` (version 2) build it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MambaShape {
    /// 1: selective scan with `x_proj` / `dt_proj` (Mamba, Jamba, Falcon-Mamba); 2: SSD heads
    /// with groups (Mamba2, Nemotron-H, Bamba, Granite 4, Falcon-H1, Zamba2).
    pub version: u8,
    /// The inner width (`expand x hidden`, or `mamba_num_heads x mamba_head_dim`).
    pub d_inner: u64,
    /// `ssm_state_size` / `mamba_d_state`.
    pub d_state: u64,
    /// `conv_kernel` / `mamba_d_conv`.
    pub conv_kernel: u64,
    /// Mamba2: `n_groups`. Mamba1: 0.
    pub n_groups: u64,
    /// Mamba2: SSM heads. Mamba1: 0.
    pub n_heads: u64,
    /// Mamba1: `time_step_rank` (the rank of `dt_proj`). Mamba2: 0.
    pub dt_rank: u64,
    /// `use_bias` / `mamba_proj_bias`: biases on in_proj and out_proj.
    pub proj_bias: bool,
    /// `use_conv_bias` / `mamba_conv_bias`.
    pub conv_bias: bool,
}

impl MambaShape {
    /// Parameters of one mixer at TP 1: (linear weights, conv + per-head parameters + norm).
    ///
    /// ```
    /// use headroom::calc::blocks::MambaShape;
    /// // Nemotron-H-8B's mixer: hidden 4096, 128 heads x 64 = 8192 inner, 8 groups, state 128.
    /// let m = MambaShape { version: 2, d_inner: 8192, d_state: 128, conv_kernel: 4,
    ///     n_groups: 8, n_heads: 128, dt_rank: 0, proj_bias: false, conv_bias: true };
    /// let (linear, small) = m.params(4096, 1);
    /// // in_proj 4096 x (2 x 8192 + 2 x 8 x 128 + 128) + out_proj 8192 x 4096
    /// assert_eq!(linear, 4096 * (16_384 + 2_048 + 128) + 8192 * 4096);
    /// // conv1d (8192 + 2,048) x 4 + bias, A / D / dt_bias 3 x 128, gated norm 8192
    /// assert_eq!(small, 10_240 * 4 + 10_240 + 3 * 128 + 8192);
    /// ```
    pub fn params(&self, hidden: u64, tp: u64) -> (u64, u64) {
        let h = hidden;
        let i = self.d_inner;
        let n = self.d_state;
        let tp = tp.max(1);
        if self.version == 1 {
            // in_proj h -> 2I, x_proj I -> dt_rank + 2N, dt_proj dt_rank -> I (+ bias),
            // out_proj I -> h; conv1d I x K (+ bias), A_log I x N, D I. All split over I.
            let r = self.dt_rank;
            let linear = h * 2 * i + i * (r + 2 * n) + r * i + i * h;
            let bias = u64::from(self.proj_bias) * (2 * i + h);
            let small = i * self.conv_kernel + u64::from(self.conv_bias) * i + i * n + i + i;
            return ((linear + bias) / tp, small / tp);
        }
        // MambaMixer2: with n_groups not a multiple of TP (only n_groups 1 is allowed), every
        // rank keeps its own copy of the group (`extra_groups_for_head_shards`).
        let groups = if self.n_groups % tp == 0 {
            self.n_groups
        } else {
            tp
        };
        let gn = groups * n;
        let conv_dim = i + 2 * gn;
        let linear = h * (2 * i + 2 * gn + self.n_heads) + i * h;
        let bias = u64::from(self.proj_bias) * (2 * i + 2 * gn + self.n_heads + h);
        let small = conv_dim * self.conv_kernel
            + u64::from(self.conv_bias) * conv_dim
            + 3 * self.n_heads
            + i;
        ((linear + bias) / tp, small / tp)
    }
}

/// A vision encoder estimated from its `vision_config`: a ViT of `depth` blocks, a patch
/// embedding and a projector into the language model's width.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VisionTower {
    pub depth: u64,
    pub hidden: u64,
    pub intermediate: u64,
    /// Input channels x patch area (3 x 14 x 14 ...), the patch embedding's input.
    pub patch_inputs: u64,
    /// Position embeddings (patches per image side squared, when the config gives them).
    pub positions: u64,
    /// Gated MLP (three matrices) in each block, as SwiGLU towers (Qwen2.5-VL, Pixtral) have.
    pub gated: bool,
    /// The language model's hidden size, the projector's output.
    pub text_hidden: u64,
    /// Linears in the projector: 1 (Gemma 3, Llama 4: one matrix into the language model's
    /// width) or 2 (LLaVA's `linear_1`, activation, `linear_2`).
    pub projector_layers: u64,
}

impl VisionTower {
    /// Parameters of the tower and its projector (TP 1): each block's q/k/v/o with biases,
    /// MLP and two norms, the patch and position embeddings, a post norm, and the projector
    /// from the tower's width into the language model's.
    ///
    /// ```
    /// use headroom::calc::blocks::VisionTower;
    /// // SigLIP-so400m (Gemma 3's tower): 27 blocks of 1152 wide, MLP 4304, 14 x 14 patches.
    /// let v = VisionTower { depth: 27, hidden: 1152, intermediate: 4304,
    ///     patch_inputs: 3 * 14 * 14, positions: 4096, gated: false, text_hidden: 5376,
    ///     projector_layers: 1 };
    /// let p = v.params();
    /// assert!(p > 400_000_000 && p < 440_000_000, "{p}");
    /// ```
    pub fn params(&self) -> u64 {
        let h = self.hidden;
        let mats = if self.gated { 3 } else { 2 };
        let block =
            4 * h * h + 4 * h + mats * h * self.intermediate + self.intermediate + h + 4 * h;
        let embed = self.patch_inputs * h + h + self.positions * h + 2 * h;
        let t = self.text_hidden;
        let projector = match self.projector_layers {
            0 => 0,
            1 => h * t,
            n => h * t + (n - 1) * t * t,
        };
        self.depth * block + embed + projector
    }
}

/// A component of a decoder layer, as a quantization config's skip list names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part {
    /// Whatever mixes in the layer (Nemotron-H calls its attention, Mamba, MLP and MoE blocks
    /// all `mixer`): with a layer index, the whole layer.
    Whole,
    Attention,
    LinearAttention,
    Mamba,
    DenseMlp,
    Experts,
    SharedExperts,
    /// `moe_latent_size`'s two projections.
    Latent,
}

impl Part {
    /// This part's bit in a per-layer mask.
    pub fn bit(self) -> u16 {
        1 << (self as u16)
    }
}

/// A part a quantization config keeps at full width (`ignore`, `modules_to_not_convert`,
/// `exclude_modules`): in one layer, or in all of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeepFull {
    pub part: Part,
    pub layer: Option<u32>,
}
