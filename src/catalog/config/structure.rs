//! Layer-by-layer structure for the architectures whose layers differ beyond their attention
//! kind, read the way vLLM 0.33.0's model classes build them:
//! - Nemotron-H (`hybrid_override_pattern`: `M` Mamba2, `*` attention, `-` MLP, `E` MoE, one
//!   block per layer, each with one norm; relu2 MLPs and experts; `moe_latent_size`;
//!   `mtp_hybrid_override_pattern` for the MTP module);
//! - Granite 4 hybrids (`layer_types` of mamba / attention, every layer with experts and a
//!   shared MLP, or a dense shared MLP alone);
//! - Jamba (Mamba1 mixers, attention every `attn_layer_period`-th layer, experts every
//!   `expert_layer_period`-th);
//! - Falcon-H1 (attention and a Mamba2 mixer side by side in every layer);
//! - Mamba and Mamba2 language models (a mixer and a norm per layer, no MLP, no attention);
//! - DeciLM / Nemotron-NAS `block_configs` (per-layer attention with its own KV heads, or none,
//!   and an MLP of its own width, or none).

use super::{ConfigError, Fields};
use crate::calc::blocks::{Block, Ffn, MambaShape, Mixer};
use crate::calc::model::{LayerKind, LinearState};
use crate::catalog::json::Value;

/// What [`read`] found: it replaces the generic reading's layer kinds.
pub(super) struct Structure {
    pub(super) n_layers: u32,
    pub(super) kinds: Vec<LayerKind>,
    pub(super) blocks: Vec<Block>,
    pub(super) mtp_blocks: Vec<Block>,
    pub(super) mamba: Option<MambaShape>,
    /// The KV side of the Mamba mixers (their conv and SSM states).
    pub(super) linear: Option<LinearState>,
    /// `None`: keep the generic reading's gating.
    pub(super) mlp_gated: Option<bool>,
    /// NAS models: the KV heads most attention layers have.
    pub(super) kv_heads: Option<u64>,
    /// The shared expert's width where the config implies one without saying
    /// (Llama 4: one shared expert as wide as the routed ones).
    pub(super) shared_intermediate: Option<u64>,
}

/// The architectures whose config has no attention heads (pure state-space models).
pub(super) fn attention_free(model_type: &str) -> bool {
    matches!(model_type, "mamba" | "mamba2" | "falcon_mamba")
}

fn pattern_block(c: char, intermediate: u64) -> Option<(Block, LayerKind)> {
    Some(match c {
        'M' => (
            Block {
                mixer: Mixer::Mamba,
                ffn: Ffn::None,
            },
            LayerKind::Mamba2,
        ),
        '*' => (
            Block {
                mixer: Mixer::Attention,
                ffn: Ffn::None,
            },
            LayerKind::Full,
        ),
        '-' => (
            Block {
                mixer: Mixer::None,
                ffn: Ffn::Mlp(intermediate),
            },
            LayerKind::NoCache,
        ),
        'E' => (
            Block {
                mixer: Mixer::None,
                ffn: Ffn::Moe,
            },
            LayerKind::NoCache,
        ),
        _ => return None,
    })
}

/// A pattern's blocks and their cache kinds.
type Stack = (Vec<Block>, Vec<LayerKind>);

/// Nemotron-H's layer pattern: `hybrid_override_pattern` ("M-M*E"), or the list transformers
/// 4.57 and later write instead (`layers_block_type`: mamba, mlp, attention, moe), whose
/// `hybrid_override_pattern` property maps it back to the same letters. Returns the pattern
/// and the key it came from.
pub(super) fn nemotron_pattern(
    f: &Fields,
    string_key: &'static str,
    list_key: &'static str,
) -> Result<Option<(String, &'static str)>, ConfigError> {
    if let Some(v) = f.get(string_key) {
        let Some(p) = v.as_str() else {
            return Err(ConfigError::new(
                string_key,
                format!("{string_key} must be a string of M, *, - and E"),
            ));
        };
        return Ok(Some((p.to_string(), string_key)));
    }
    let Some(v) = f.get(list_key) else {
        return Ok(None);
    };
    let Some(list) = v.as_array() else {
        return Err(ConfigError::new(
            list_key,
            format!("{list_key} must be a list of mamba, mlp, attention and moe"),
        ));
    };
    if list.len() > 10_000 {
        return Err(ConfigError::new(
            list_key,
            format!("{list_key} has {} layers (at most 10000)", list.len()),
        ));
    }
    let mut p = String::with_capacity(list.len());
    for (i, t) in list.iter().enumerate() {
        p.push(match t.as_str() {
            Some("mamba") => 'M',
            Some("attention") => '*',
            Some("mlp") => '-',
            Some("moe") => 'E',
            _ => {
                return Err(ConfigError::new(
                    list_key,
                    format!("{list_key} entry {i} is {t}: vLLM's Nemotron-H builds only mamba, attention, mlp and moe layers"),
                ))
            }
        });
    }
    Ok(Some((p, list_key)))
}

fn pattern(f: &Fields, key: &'static str, intermediate: u64) -> Result<Option<Stack>, ConfigError> {
    let list_key = if key == "hybrid_override_pattern" {
        "layers_block_type"
    } else {
        "mtp_layers_block_type"
    };
    let Some((p, key)) = nemotron_pattern(f, key, list_key)? else {
        return Ok(None);
    };
    let p = p.as_str();
    if p.len() > 10_000 {
        return Err(ConfigError::new(
            key,
            format!("{key} has {} layers (at most 10000)", p.len()),
        ));
    }
    let mut blocks = Vec::with_capacity(p.len());
    let mut kinds = Vec::with_capacity(p.len());
    for (i, c) in p.chars().enumerate() {
        let Some((b, k)) = pattern_block(c, intermediate) else {
            return Err(ConfigError::new(
                key,
                format!(
                    "{key} has {} at layer {i}: vLLM's Nemotron-H builds only M (Mamba2), * (attention), - (MLP) and E (MoE) layers",
                    crate::calc::quoted(&c.to_string())
                ),
            ));
        };
        blocks.push(b);
        kinds.push(k);
    }
    Ok(Some((blocks, kinds)))
}

/// Mamba2's conv and SSM states as the shared linear-state shape: groups x state for B and C,
/// heads x head_dim values.
fn mamba2_state(m: &MambaShape) -> LinearState {
    LinearState {
        conv_kernel: m.conv_kernel,
        k_heads: m.n_groups,
        k_dim: m.d_state,
        v_heads: m.n_heads,
        v_dim: m.d_inner / m.n_heads.max(1),
    }
}

/// Mamba1's states (conv over the inner width, SSM of inner x state) in the same shape: the
/// inner width as heads of 64, no B / C groups.
fn mamba1_state(m: &MambaShape) -> LinearState {
    LinearState {
        conv_kernel: m.conv_kernel,
        k_heads: 0,
        k_dim: m.d_state,
        v_heads: m.d_inner.div_ceil(64),
        v_dim: 64,
    }
}

#[allow(clippy::too_many_arguments)]
fn mamba2(
    f: &Fields,
    hidden: u64,
    d_inner_keys: &[&str],
    expand_key: &str,
    heads_keys: &[&str],
    head_dim_keys: &[&str],
    prefix: &str,
) -> Result<MambaShape, ConfigError> {
    let key = |k: &str| format!("{prefix}{k}");
    let expand = f.uint(expand_key)?.unwrap_or(2);
    let heads = f.first(heads_keys)?;
    let head_dim = f.first(head_dim_keys)?;
    let d_inner = match (f.first(d_inner_keys)?, heads, head_dim) {
        (Some(d), _, _) => d,
        (None, Some(h), Some(d)) => h.saturating_mul(d),
        _ => expand * hidden,
    };
    let n_heads = match (heads, head_dim) {
        (Some(h), _) => h,
        (None, Some(d)) if d > 0 => d_inner / d,
        _ => d_inner / 64,
    };
    let biases = mixer_biases(f, prefix);
    let shape = MambaShape {
        version: 2,
        d_inner,
        d_state: f
            .first(&[&key("d_state"), "ssm_state_size", "state_size"])?
            .unwrap_or(128),
        conv_kernel: f.first(&[&key("d_conv"), "conv_kernel"])?.unwrap_or(4),
        n_groups: f
            .first(&[&key("n_groups"), "n_groups"])?
            .unwrap_or(1)
            .max(1),
        n_heads,
        dt_rank: 0,
        proj_bias: biases.0,
        conv_bias: biases.1,
    };
    check(&shape)?;
    Ok(shape)
}

/// A Mamba mixer's (projection, conv) biases: `mamba_proj_bias` / `mamba_conv_bias` (Granite,
/// Jamba, Falcon-H1) or `use_bias` / `use_conv_bias` (Nemotron-H, Mamba LMs); no projection
/// bias and a conv bias when the config says nothing.
fn mixer_biases(f: &Fields, prefix: &str) -> (bool, bool) {
    let flag = |k: &str, plain: &str, default: bool| {
        f.boolean(&format!("{prefix}{k}"))
            .or_else(|| f.boolean(plain))
            .unwrap_or(default)
    };
    (
        flag("proj_bias", "use_bias", false),
        flag("conv_bias", "use_conv_bias", true),
    )
}

fn check(m: &MambaShape) -> Result<(), ConfigError> {
    for (k, v, max) in [
        ("mamba d_inner", m.d_inner, 1u64 << 20),
        ("ssm_state_size", m.d_state, 1 << 12),
        ("conv_kernel", m.conv_kernel, 1 << 10),
        ("n_groups", m.n_groups, 1 << 12),
        ("mamba_num_heads", m.n_heads, 1 << 14),
        ("time_step_rank", m.dt_rank, 1 << 16),
    ] {
        if v > max {
            return Err(ConfigError::new(
                k,
                format!("{k} {v} is far beyond any real model (at most {max})"),
            ));
        }
    }
    if m.d_inner == 0 {
        return Err(ConfigError::new(
            "mamba d_inner",
            "the Mamba mixer's inner width (heads x head_dim, or expand x hidden) is 0",
        ));
    }
    Ok(())
}

fn mamba1(f: &Fields, hidden: u64, prefix: &str) -> Result<MambaShape, ConfigError> {
    let key = |k: &str| format!("{prefix}{k}");
    let d_inner = if prefix.is_empty() {
        // MambaConfig: intermediate_size is the inner width.
        match f.uint("intermediate_size")? {
            Some(i) => i,
            None => f.uint("expand")?.unwrap_or(2) * hidden,
        }
    } else {
        f.uint(&key("expand"))?.unwrap_or(2) * hidden
    };
    // "auto" (and absent) is ceil(hidden / 16).
    let dt_rank = match f.get(&key("dt_rank")).or_else(|| f.get("time_step_rank")) {
        Some(v) => v.as_u64().unwrap_or(hidden.div_ceil(16)),
        None => hidden.div_ceil(16),
    };
    let biases = mixer_biases(f, prefix);
    let shape = MambaShape {
        version: 1,
        d_inner,
        d_state: f.first(&[&key("d_state"), "state_size"])?.unwrap_or(16),
        conv_kernel: f.first(&[&key("d_conv"), "conv_kernel"])?.unwrap_or(4),
        n_groups: 0,
        n_heads: 0,
        dt_rank,
        proj_bias: biases.0,
        conv_bias: biases.1,
    };
    check(&shape)?;
    Ok(shape)
}

/// DeciLM's `_ffn_mult_to_intermediate_size`: int(2 x mult x hidden / 3), up to a multiple of
/// 256.
fn ffn_mult_width(mult: f64, hidden: u64) -> u64 {
    let i = (2.0 * mult * hidden as f64 / 3.0) as u64;
    i.div_ceil(256) * 256
}

fn nas(
    f: &Fields,
    configs: &[Value],
    n_layers: u64,
    hidden: u64,
    heads: u64,
) -> Result<Structure, ConfigError> {
    const KEY: &str = "block_configs";
    if configs.len() as u64 != n_layers {
        return Err(ConfigError::new(
            KEY,
            format!(
                "block_configs has {} entries for {n_layers} layers",
                configs.len()
            ),
        ));
    }
    let mut blocks = Vec::with_capacity(configs.len());
    let mut kinds = Vec::with_capacity(configs.len());
    let mut kv_counts: Vec<(u64, usize)> = Vec::new();
    for (i, c) in configs.iter().enumerate() {
        let bad = |what: &str| ConfigError::new(KEY, format!("block_configs entry {i}: {what}"));
        let attn = c
            .get("attention")
            .ok_or_else(|| bad("attention is missing"))?;
        let ffn = c.get("ffn").ok_or_else(|| bad("ffn is missing"))?;
        let flag = |v: &Value, k: &str| v.get(k).and_then(Value::as_bool).unwrap_or(false);
        let (mixer, kind) = if flag(attn, "no_op") {
            (Mixer::None, LayerKind::NoCache)
        } else if flag(attn, "replace_with_linear") {
            (Mixer::Linear, LayerKind::NoCache)
        } else {
            let group = attn
                .get("n_heads_in_group")
                .and_then(Value::as_u64)
                .filter(|g| *g > 0 && heads % g == 0)
                .ok_or_else(|| bad("attention.n_heads_in_group must divide num_attention_heads"))?;
            let kv = heads / group;
            match kv_counts.iter_mut().find(|(k, _)| *k == kv) {
                Some(e) => e.1 += 1,
                None => kv_counts.push((kv, 1)),
            }
            (Mixer::AttentionKvHeads(kv), LayerKind::Full)
        };
        let ffn = if flag(ffn, "no_op") {
            Ffn::None
        } else if flag(ffn, "replace_with_linear") {
            Ffn::Linear
        } else if let Some(m) = ffn.get("ffn_mult").and_then(Value::as_f64) {
            if !(m > 0.0 && m < 1e4) {
                return Err(bad("ffn.ffn_mult must be a positive number below 10000"));
            }
            Ffn::Mlp(ffn_mult_width(m, hidden))
        } else if let Some(w) = ffn.get("intermediate_size").and_then(Value::as_u64) {
            Ffn::Mlp(w.min(1 << 20))
        } else {
            return Err(bad("ffn has neither ffn_mult nor intermediate_size"));
        };
        blocks.push(Block { mixer, ffn });
        kinds.push(kind);
    }
    let _ = f;
    Ok(Structure {
        n_layers: n_layers as u32,
        kinds,
        blocks,
        mtp_blocks: Vec::new(),
        mamba: None,
        linear: None,
        mlp_gated: None,
        kv_heads: kv_counts.iter().max_by_key(|(_, n)| *n).map(|(k, _)| *k),
        shared_intermediate: None,
    })
}

/// The structure of an architecture whose layers differ, or `None` for the generic reading.
pub(super) fn read(
    f: &Fields,
    model_type: &str,
    n_layers: u64,
    hidden: u64,
    heads: u64,
    experts: u64,
) -> Result<Option<Structure>, ConfigError> {
    let intermediate = f.uint("intermediate_size").ok().flatten();
    if let Some(configs) = f.get("block_configs").and_then(Value::as_array) {
        return nas(f, configs, n_layers, hidden, heads).map(Some);
    }
    if f.get("hybrid_override_pattern").is_some()
        || (model_type == "nemotron_h" && f.get("layers_block_type").is_some())
    {
        // Nemotron-H: intermediate_size may be a list, one per MLP layer (the first if one).
        let mlp = match f.get("intermediate_size") {
            Some(Value::Array(a)) => a.first().and_then(Value::as_u64).unwrap_or(4 * hidden),
            _ => intermediate.unwrap_or(4 * hidden),
        };
        let Some((blocks, kinds)) = pattern(f, "hybrid_override_pattern", mlp)? else {
            return Ok(None);
        };
        if blocks.is_empty() {
            return Err(ConfigError::new(
                "hybrid_override_pattern",
                "hybrid_override_pattern is empty",
            ));
        }
        let mtp_blocks = pattern(f, "mtp_hybrid_override_pattern", mlp)?
            .map(|(b, _)| b)
            .unwrap_or_default();
        let mamba = mamba2(
            f,
            hidden,
            &[],
            "expand",
            &["mamba_num_heads"],
            &["mamba_head_dim"],
            "mamba_",
        )?;
        return Ok(Some(Structure {
            n_layers: blocks.len() as u32,
            kinds,
            blocks,
            mtp_blocks,
            linear: Some(mamba2_state(&mamba)),
            mamba: Some(mamba),
            mlp_gated: Some(false),
            kv_heads: None,
            shared_intermediate: None,
        }));
    }
    let n = n_layers as usize;
    match model_type {
        // Llama 4 (Llama4TextMoe): every interleave_moe_layer_step-th layer has 16 / 128
        // routed experts and one shared expert, both intermediate_size wide; the others a
        // dense MLP of intermediate_size_mlp. The cache kinds are the generic reading's.
        "llama4_text" | "llama4" if experts > 1 => {
            let step = f.uint("interleave_moe_layer_step")?.unwrap_or(1);
            let inter = intermediate.unwrap_or(4 * hidden);
            let dense = f.uint("intermediate_size_mlp")?.unwrap_or(inter);
            let blocks = (0..n_layers)
                .map(|i| Block {
                    mixer: Mixer::Attention,
                    ffn: if step > 0 && (i + 1) % step == 0 {
                        Ffn::Moe
                    } else {
                        Ffn::Mlp(dense)
                    },
                })
                .collect();
            Ok(Some(Structure {
                n_layers: n_layers as u32,
                kinds: Vec::new(),
                blocks,
                mtp_blocks: Vec::new(),
                mamba: None,
                linear: None,
                mlp_gated: None,
                kv_heads: None,
                shared_intermediate: Some(inter),
            }))
        }
        "granitemoehybrid" => {
            let types = f.get("layer_types").and_then(Value::as_array);
            let mamba = mamba2(
                f,
                hidden,
                &[],
                "mamba_expand",
                &["mamba_n_heads"],
                &["mamba_d_head"],
                "mamba_",
            )?;
            let shared = f.uint("shared_intermediate_size")?.unwrap_or(0);
            let ffn = if experts > 0 {
                Ffn::Moe
            } else if shared > 0 {
                Ffn::Mlp(shared)
            } else {
                Ffn::None
            };
            let mut blocks = Vec::with_capacity(n);
            let mut kinds = Vec::with_capacity(n);
            for i in 0..n {
                let t = types.and_then(|t| t.get(i)).and_then(Value::as_str);
                let (mixer, kind) = match t {
                    Some("attention") => (Mixer::Attention, LayerKind::Full),
                    Some("mamba") | None => (Mixer::Mamba, LayerKind::Mamba2),
                    Some(other) => {
                        return Err(ConfigError::new(
                            "layer_types",
                            format!(
                                "layer_types entry {} is neither mamba nor attention",
                                crate::calc::quoted(other)
                            ),
                        ))
                    }
                };
                blocks.push(Block { mixer, ffn });
                kinds.push(kind);
            }
            Ok(Some(Structure {
                n_layers: n_layers as u32,
                kinds,
                blocks,
                mtp_blocks: Vec::new(),
                linear: Some(mamba2_state(&mamba)),
                mamba: Some(mamba),
                mlp_gated: None,
                kv_heads: None,
                shared_intermediate: None,
            }))
        }
        "jamba" => {
            let attn_period = f.uint("attn_layer_period")?.unwrap_or(8).max(1);
            let attn_offset = f.uint("attn_layer_offset")?.unwrap_or(4);
            let expert_period = f.uint("expert_layer_period")?.unwrap_or(2).max(1);
            let expert_offset = f.uint("expert_layer_offset")?.unwrap_or(1);
            let mamba = mamba1(f, hidden, "mamba_")?;
            let inter = intermediate.unwrap_or(4 * hidden);
            let mut blocks = Vec::with_capacity(n);
            let mut kinds = Vec::with_capacity(n);
            for i in 0..n_layers {
                let (mixer, kind) = if i % attn_period == attn_offset {
                    (Mixer::Attention, LayerKind::Full)
                } else {
                    (Mixer::Mamba, LayerKind::Mamba2)
                };
                let ffn = if experts > 1 && i % expert_period == expert_offset {
                    Ffn::Moe
                } else {
                    Ffn::Mlp(inter)
                };
                blocks.push(Block { mixer, ffn });
                kinds.push(kind);
            }
            Ok(Some(Structure {
                n_layers: n_layers as u32,
                kinds,
                blocks,
                mtp_blocks: Vec::new(),
                linear: Some(mamba1_state(&mamba)),
                mamba: Some(mamba),
                mlp_gated: None,
                kv_heads: None,
                shared_intermediate: None,
            }))
        }
        "falcon_h1" => {
            let mamba = mamba2(
                f,
                hidden,
                &["mamba_d_ssm"],
                "mamba_expand",
                &["mamba_n_heads"],
                &["mamba_d_head"],
                "mamba_",
            )?;
            let inter = intermediate.unwrap_or(4 * hidden);
            let block = Block {
                mixer: Mixer::AttentionAndMamba,
                ffn: Ffn::Mlp(inter),
            };
            Ok(Some(Structure {
                n_layers: n_layers as u32,
                // Each layer keeps both an attention KV cache and a Mamba state; the cache
                // side is planned as attention (the state is not in the KV figures).
                kinds: vec![LayerKind::Full; n],
                blocks: vec![block; n],
                mtp_blocks: Vec::new(),
                linear: None,
                mamba: Some(mamba),
                mlp_gated: None,
                kv_heads: None,
                shared_intermediate: None,
            }))
        }
        "mamba" | "falcon_mamba" | "mamba2" => {
            let mamba = if model_type == "mamba2" {
                mamba2(f, hidden, &[], "expand", &["num_heads"], &["head_dim"], "")?
            } else {
                mamba1(f, hidden, "")?
            };
            let block = Block {
                mixer: Mixer::Mamba,
                ffn: Ffn::None,
            };
            Ok(Some(Structure {
                n_layers: n_layers as u32,
                kinds: vec![LayerKind::Mamba2; n],
                blocks: vec![block; n],
                mtp_blocks: Vec::new(),
                linear: Some(if mamba.version == 1 {
                    mamba1_state(&mamba)
                } else {
                    mamba2_state(&mamba)
                }),
                mamba: Some(mamba),
                mlp_gated: None,
                kv_heads: None,
                shared_intermediate: None,
            }))
        }
        _ => Ok(None),
    }
}

/// Whether an architecture's MLPs and experts are non-gated (an up and a down projection):
/// relu2 in Nemotron and Nemotron-H, GELU MLPs in StarCoder2, GPT-BigCode, Falcon, GPT-NeoX,
/// Phi-1/2, GPT-J, OPT, BLOOM, MPT.
pub(super) fn non_gated(model_type: &str) -> bool {
    matches!(
        model_type,
        "nemotron"
            | "nemotron_h"
            | "starcoder2"
            | "gpt_bigcode"
            | "falcon"
            | "gpt_neox"
            | "phi"
            | "gptj"
            | "opt"
            | "bloom"
            | "mpt"
    )
}
