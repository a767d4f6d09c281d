//! A Hugging Face `config.json` to a `calc::model::Model`: the one parser for catalog rows and
//! pasted configs. Errors name the config field.
//!
//! This file reads the shape (layers, heads, attention kinds, MLA, MoE, linear attention,
//! DeepSeek-V4's compressed attention); [`quant`] reads the dtype and the quantization,
//! [`max_len`] the derived context length, [`mtp`] what an MTP drafter finds.

mod max_len;
mod mtp;
mod quant;
mod structure;
mod vision;

use std::fmt;

use super::json::{self, Map, Value};

use crate::calc::model::{
    CompressedAttn, LayerKind, LinearState, Mla, Model, Moe, MtpDraft, SparseMla,
};
use max_len::derived_max_len;
use mtp::mtp_draft;
use quant::{dtype, keep_full, quant, quant_skips};

/// A config that cannot describe a model, naming the field.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError {
    pub field: String,
    pub message: String,
}

impl ConfigError {
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> ConfigError {
        ConfigError {
            field: field.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "config.json: {}", self.message)
    }
}

impl std::error::Error for ConfigError {}

/// Parses `config.json` text.
///
/// ```
/// use headroom::catalog::parse_config_json;
/// let m = parse_config_json(r#"{"num_hidden_layers": 2, "hidden_size": 64,
///     "num_attention_heads": 4, "vocab_size": 100, "max_position_embeddings": 512}"#).unwrap();
/// assert_eq!(m.head_dim, 16);
/// ```
pub fn parse_config_json(text: &str) -> Result<Model, ConfigError> {
    if text.len() > 4 << 20 {
        return Err(ConfigError::new("config", "it is larger than 4 MiB"));
    }
    // Some editors save a byte-order mark. JSON forbids it (so does Python's json.loads), but
    // it carries nothing, so a pasted file with one is read rather than refused.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let v: Value = json::parse(text)
        .map_err(|e| ConfigError::new("config", format!("it is not valid JSON: {e}")))?;
    parse_config_value(&v)
}

struct Fields<'a> {
    /// The text model's fields (a multimodal wrapper's `text_config`), then the top level.
    layers: Vec<&'a Map>,
}

impl<'a> Fields<'a> {
    fn get(&self, key: &str) -> Option<&'a Value> {
        self.layers
            .iter()
            .find_map(|m| m.get(key))
            .filter(|v| !v.is_null())
    }

    fn uint(&self, key: &str) -> Result<Option<u64>, ConfigError> {
        match self.get(key) {
            None => Ok(None),
            Some(v) => v.as_u64().map(Some).ok_or_else(|| {
                ConfigError::new(
                    key,
                    format!("{key} must be a non-negative integer, not {v}"),
                )
            }),
        }
    }

    fn need(&self, key: &str) -> Result<u64, ConfigError> {
        self.uint(key)?
            .ok_or_else(|| ConfigError::new(key, format!("{key} is missing")))
    }

    fn first(&self, keys: &[&str]) -> Result<Option<u64>, ConfigError> {
        for k in keys {
            if let Some(v) = self.uint(k)? {
                return Ok(Some(v));
            }
        }
        Ok(None)
    }

    fn boolean(&self, key: &str) -> Option<bool> {
        self.get(key).and_then(Value::as_bool)
    }

    fn string(&self, key: &str) -> Option<&'a str> {
        self.get(key).and_then(Value::as_str)
    }
}

/// DeepSeek-V4's `compress_ratios`: the first `num_hidden_layers` entries (later releases list
/// the MTP and DSpark layers too), each 0, 4 or 128.
fn compressed_attn(
    f: &Fields,
    model_type: &str,
    n_layers: u32,
    head_dim: u64,
) -> Result<Option<CompressedAttn>, ConfigError> {
    if model_type != "deepseek_v4" {
        return Ok(None);
    }
    let Some(list) = f.get("compress_ratios").and_then(Value::as_array) else {
        return Err(ConfigError::new(
            "compress_ratios",
            "compress_ratios is missing: DeepSeek-V4's caches follow it layer by layer",
        ));
    };
    if list.len() < n_layers as usize {
        return Err(ConfigError::new(
            "compress_ratios",
            format!(
                "compress_ratios has {} entries for {n_layers} layers",
                list.len()
            ),
        ));
    }
    let mut ratios = Vec::with_capacity(n_layers as usize);
    for v in list.iter().take(n_layers as usize) {
        match v.as_u64() {
            Some(r @ (0 | 4 | 128)) => ratios.push(r as u32),
            _ => {
                return Err(ConfigError::new(
                    "compress_ratios",
                    format!("compress_ratios entry {v} is not 0, 4 or 128 (the ratios vLLM 0.33.0 sizes for DeepSeek-V4)"),
                ))
            }
        }
    }
    Ok(Some(CompressedAttn {
        ratios,
        window: f.uint("sliding_window")?.unwrap_or(128),
        index_head_dim: f.uint("index_head_dim")?.unwrap_or(128),
        head_dim,
        dspark_layers: match f.uint("n_mtp_layers")? {
            None | Some(0) => 3,
            Some(n) if n <= 64 => n as u32,
            Some(n) => {
                return Err(ConfigError::new(
                    "n_mtp_layers",
                    format!("n_mtp_layers {n} is above 64"),
                ))
            }
        },
        dspark_target_layers: match f.get("dspark_target_layer_ids") {
            None => None,
            Some(v) => match v.as_array() {
                Some(ids) if ids.iter().all(|i| i.as_u64().is_some_and(|i| i < u64::from(n_layers))) && !ids.is_empty() => Some(ids.len() as u32),
                _ => {
                    return Err(ConfigError::new(
                        "dspark_target_layer_ids",
                        format!("dspark_target_layer_ids must be a non-empty list of layer indices below {n_layers}, not {v}"),
                    ))
                }
            },
        },
        dspark_markov_rank: match f.uint("dspark_markov_rank")? {
            Some(r) if r > 1 << 16 => {
                return Err(ConfigError::new(
                    "dspark_markov_rank",
                    format!("dspark_markov_rank {r} is above 65,536"),
                ))
            }
            r => r,
        },
    }))
}

/// Parses a config already read as JSON.
pub fn parse_config_value(v: &Value) -> Result<Model, ConfigError> {
    let top = v
        .as_object()
        .ok_or_else(|| ConfigError::new("config", "it must be a JSON object"))?;
    let mut layers = Vec::new();
    // A wrapper's text_config is built by transformers as its model_type's config class, so
    // keys it leaves out take that class's defaults (llava-1.5's text_config gives neither its
    // layers nor its widths). LlavaConfig's text_config is a LlamaConfig unless it says.
    let defaults = match top.get("text_config") {
        Some(Value::Object(t))
            if matches!(
                t.get("model_type").and_then(Value::as_str),
                Some("llama") | None
            ) =>
        {
            // A constant that parses (a unit test holds it to that); `ok()` keeps the panic
            // machinery and the error's Debug text out of the page's first program.
            json::parse(LLAMA_DEFAULTS).ok()
        }
        _ => None,
    };
    match top.get("text_config") {
        None | Some(Value::Null) => {}
        Some(Value::Object(t)) => layers.push(t),
        Some(_) => {
            return Err(ConfigError::new(
                "text_config",
                "text_config must be an object (the language model's config)",
            ))
        }
    }
    layers.push(top);
    if let Some(Value::Object(d)) = &defaults {
        layers.push(d);
    }
    let f = Fields { layers };

    // Nemotron-H configs written by transformers 4.57+ may leave num_hidden_layers to the
    // length of their layer list.
    let n_layers = match f.uint("num_hidden_layers")? {
        Some(n) => n,
        None => {
            match structure::nemotron_pattern(&f, "hybrid_override_pattern", "layers_block_type")? {
                Some((p, _)) => p.chars().count() as u64,
                None => f.need("num_hidden_layers")?,
            }
        }
    };
    if n_layers == 0 || n_layers > 10_000 {
        return Err(ConfigError::new(
            "num_hidden_layers",
            format!("num_hidden_layers {n_layers} must be between 1 and 10000"),
        ));
    }
    let n_layers32 = n_layers as u32;
    let hidden = f.need("hidden_size")?;
    let model_type = f.string("model_type").unwrap_or("");
    // Mamba language models have no attention: their configs give no heads.
    let heads = match f.uint("num_attention_heads")? {
        None if structure::attention_free(model_type) => 1,
        _ => f.need("num_attention_heads")?,
    };
    if heads == 0 {
        return Err(ConfigError::new(
            "num_attention_heads",
            "num_attention_heads must be at least 1",
        ));
    }
    let kv_heads = f.uint("num_key_value_heads")?.unwrap_or(heads);
    let head_dim = match f.uint("head_dim")? {
        Some(h) => h,
        None => hidden / heads,
    };
    let vocab = f.need("vocab_size")?;
    let (max_pos, max_len_key, longrope_default) = derived_max_len(&f, model_type)?;

    // MLA: DeepSeek-V2/V3/R1 and Kimi-K2 carry kv_lora_rank.
    let mla = match f.uint("kv_lora_rank")? {
        Some(kv_lora_rank) => Some(Mla {
            kv_lora_rank,
            qk_rope_head_dim: f.uint("qk_rope_head_dim")?.unwrap_or(64),
            qk_nope_head_dim: f.uint("qk_nope_head_dim")?.unwrap_or(128),
            v_head_dim: f.uint("v_head_dim")?.unwrap_or(128),
            q_lora_rank: f.uint("q_lora_rank")?,
        }),
        None => None,
    };

    let window = if f.boolean("use_sliding_window") == Some(false) {
        None
    } else {
        f.uint("sliding_window")?
    };
    let chunk = f.uint("attention_chunk_size")?;
    let kinds: Vec<LayerKind> = if mla.is_some() {
        vec![LayerKind::Mla; n_layers as usize]
    } else if let Some(types) = f.get("layer_types").and_then(Value::as_array) {
        if types.len() < n_layers as usize {
            return Err(ConfigError::new(
                "layer_types",
                format!(
                    "layer_types has {} {} for {n_layers} layers",
                    types.len(),
                    crate::calc::units::plural(types.len() as u64, "entry", "entries")
                ),
            ));
        }
        types
            .iter()
            .take(n_layers as usize)
            .map(|t| match t.as_str() {
                Some("full_attention") | Some("attention") => Ok(LayerKind::Full),
                Some("sliding_attention") => Ok(LayerKind::Sliding {
                    window: window.unwrap_or(4096),
                }),
                Some("chunked_attention") => Ok(LayerKind::Chunked {
                    chunk: chunk.unwrap_or(8192),
                }),
                Some("linear_attention") => Ok(LayerKind::GatedDeltaNet),
                Some("mamba") | Some("mamba2") => Ok(LayerKind::Mamba2),
                other => Err(ConfigError::new(
                    "layer_types",
                    match other {
                        Some(kind) => {
                            format!(
                                "layer_types entry {} is not a known layer kind",
                                crate::calc::quoted(kind)
                            )
                        }
                        None => "layer_types entries must be strings".to_string(),
                    },
                )),
            })
            .collect::<Result<_, _>>()?
    } else if let Some(interval) = f.uint("full_attention_interval")? {
        // Qwen3-Next: every `interval`-th layer is full attention, the rest gated DeltaNet.
        let interval = interval.max(1);
        (0..n_layers)
            .map(|i| {
                if (i + 1) % interval == 0 {
                    LayerKind::Full
                } else {
                    LayerKind::GatedDeltaNet
                }
            })
            .collect()
    } else if model_type == "gemma2" {
        // Gemma 2 alternates: even layers slide (`not bool(layer_idx % 2)`).
        let w = window.unwrap_or(4096);
        (0..n_layers)
            .map(|i| {
                if i % 2 == 0 {
                    LayerKind::Sliding { window: w }
                } else {
                    LayerKind::Full
                }
            })
            .collect()
    } else if let Some(pattern) = f.uint("sliding_window_pattern")? {
        // Gemma 3: every `pattern`-th layer is global, the rest slide.
        let w = window.unwrap_or(1024);
        let pattern = pattern.max(1);
        (0..n_layers)
            .map(|i| {
                if (i + 1) % pattern == 0 {
                    LayerKind::Full
                } else {
                    LayerKind::Sliding { window: w }
                }
            })
            .collect()
    } else if let Some(w) = window {
        vec![LayerKind::Sliding { window: w }; n_layers as usize]
    } else {
        vec![LayerKind::Full; n_layers as usize]
    };

    let experts = f.first(&["num_experts", "num_local_experts", "n_routed_experts"])?;
    let moe = match experts {
        Some(e) if e > 1 => {
            let dense_first = f.uint("first_k_dense_replace")?.unwrap_or(0);
            let mlp_only: Vec<u64> = f
                .get("mlp_only_layers")
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(Value::as_u64).collect())
                .unwrap_or_default();
            Some(Moe {
                n_experts: e,
                top_k: f
                    .first(&["num_experts_per_tok", "experts_per_token"])?
                    .unwrap_or(2),
                moe_intermediate_size: f
                    .first(&["moe_intermediate_size", "intermediate_size"])?
                    .unwrap_or(0),
                n_shared_experts: f.uint("n_shared_experts")?.unwrap_or(0),
                shared_intermediate_size: match f.uint("moe_shared_expert_intermediate_size")? {
                    // Nemotron-H: one width per shared expert.
                    Some(w) => {
                        Some(w.saturating_mul(f.uint("n_shared_experts")?.unwrap_or(1).max(1)))
                    }
                    None => f.first(&[
                        "shared_expert_intermediate_size",
                        "shared_intermediate_size",
                    ])?,
                },
                dense_layers: (0..n_layers)
                    .map(|i| i < dense_first || mlp_only.contains(&i))
                    .collect(),
                latent: f.uint("moe_latent_size")?,
            })
        }
        _ => None,
    };

    let linear = if kinds
        .iter()
        .any(|k| matches!(k, LayerKind::GatedDeltaNet | LayerKind::Mamba2))
    {
        Some(LinearState {
            conv_kernel: f
                .first(&["linear_conv_kernel_dim", "conv_kernel", "mamba_d_conv"])?
                .unwrap_or(4),
            k_heads: f
                .first(&["linear_num_key_heads", "n_groups", "mamba_n_groups"])?
                .unwrap_or(1),
            k_dim: f
                .first(&["linear_key_head_dim", "state_size", "mamba_d_state"])?
                .unwrap_or(128),
            v_heads: f
                .first(&["linear_num_value_heads", "mamba_n_heads"])?
                .unwrap_or(heads),
            v_dim: f
                .first(&["linear_value_head_dim", "mamba_d_head"])?
                .unwrap_or(head_dim),
        })
    } else {
        None
    };

    // Hybrid stacks and NAS models: their own layer-by-layer structure.
    let experts = moe.as_ref().map_or(0, |m| m.n_experts);
    let st = structure::read(&f, model_type, n_layers, hidden, heads, experts)?;
    let (n_layers32, kinds, linear, mut moe) = match &st {
        Some(st) => {
            let moe = moe.map(|mut m| {
                m.dense_layers.resize(st.n_layers as usize, false);
                if let Some(w) = st.shared_intermediate {
                    m.shared_intermediate_size = Some(w);
                }
                m
            });
            // An empty list keeps the generic reading's cache kinds.
            let kinds = if st.kinds.is_empty() {
                kinds
            } else {
                st.kinds.clone()
            };
            (st.n_layers, kinds, st.linear.or(linear), moe)
        }
        None => (n_layers32, kinds, linear, moe),
    };
    if let Some(m) = moe.as_mut() {
        m.dense_layers.truncate(n_layers32 as usize);
    }
    let vision = vision::read(top, hidden)?;

    let (quant, kv_fp8, quant_method) = quant(&f)?;
    // The drafter's MTP modules as vLLM counts them, else the config's next-n layers.
    let (mtp_draft, n_predict) = mtp_draft(&f);
    let mtp_layers = match n_predict {
        Some(n) => n.min(u64::from(u32::MAX)) as u32,
        None if mtp_draft == MtpDraft::Unsupported => {
            f.uint("num_nextn_predict_layers")?.unwrap_or(0) as u32
        }
        None => 0,
    };
    let model = Model {
        // The checkpoint's path, else its model_type, else its first architecture.
        name: f
            .string("_name_or_path")
            .filter(|n| !n.is_empty())
            .or(Some(model_type).filter(|t| !t.is_empty()))
            .or_else(|| {
                f.get("architectures")
                    .and_then(Value::as_array)
                    .and_then(|a| a.first())
                    .and_then(Value::as_str)
            })
            .map_or_else(
                || "a config.json without model_type".to_string(),
                crate::calc::clipped,
            ),
        // A multimodal wrapper names its own class at the top level, which vLLM loads.
        architecture: top
            .get("architectures")
            .and_then(Value::as_array)
            .and_then(|a| a.first())
            .and_then(Value::as_str)
            .map(crate::calc::clipped)
            .unwrap_or_default(),
        n_layers: n_layers32,
        hidden_size: hidden,
        n_heads: heads,
        n_kv_heads: st.as_ref().and_then(|s| s.kv_heads).unwrap_or(kv_heads),
        head_dim,
        head_dim_v: f
            .uint("v_head_dim")?
            .filter(|_| mla.is_none())
            .unwrap_or(head_dim),
        intermediate_size: f.uint("intermediate_size")?.unwrap_or(4 * hidden),
        vocab_size: vocab,
        // Absent from the file, the config class's default applies: transformers' Gemma,
        // Gemma 2 and Gemma 3 configs tie (tie_word_embeddings=True), and so do the Mamba
        // configs (PretrainedConfig's default, which they keep); the Llama, Mistral, Mixtral,
        // Qwen and DeepSeek configs do not.
        tie_word_embeddings: f.boolean("tie_word_embeddings").unwrap_or(matches!(
            model_type,
            "gemma" | "gemma2" | "gemma3" | "gemma3_text" | "mamba" | "mamba2" | "falcon_mamba"
        )),
        layers: kinds,
        mla,
        moe,
        linear,
        mtp_layers,
        mtp_draft,
        quant_skips: quant_skips(&f),
        keep_full: keep_full(&f),
        dtype: dtype(&f)?,
        quant,
        kv_fp8_from_checkpoint: kv_fp8,
        max_position_embeddings: max_pos,
        max_len_key,
        longrope_default,
        checkpoint_bytes: None,
        measured_kv: None,
        vision_encoder: top
            .get("vision_config")
            .is_some_and(|v| v.as_object().is_some()),
        vision,
        mlp_gated: st
            .as_ref()
            .and_then(|s| s.mlp_gated)
            .unwrap_or(!structure::non_gated(model_type)),
        mamba: st.as_ref().and_then(|s| s.mamba),
        ssm_state_bytes: match model_type {
            // NemotronHForCausalLMConfig.update_mamba_ssm_cache_dtype: the config's
            // mamba_ssm_cache_dtype, else float32 ("only float32 is known to have no accuracy
            // issues").
            "nemotron_h" => Some(match f.string("mamba_ssm_cache_dtype") {
                Some("bfloat16" | "float16" | "half") => 2,
                _ => 4,
            }),
            _ => None,
        },
        mtp_blocks: st
            .as_ref()
            .map(|s| s.mtp_blocks.clone())
            .unwrap_or_default(),
        blocks: st.map(|s| s.blocks).unwrap_or_default(),
        compressed: compressed_attn(&f, model_type, n_layers32, head_dim)?,
        // The indexer of DeepSeek-V3.2 sits beside an MLA latent cache.
        sparse_mla: match (f.uint("index_topk")?, &mla) {
            (Some(index_topk), Some(_)) => Some(SparseMla {
                index_topk,
                index_head_dim: f.uint("index_head_dim")?.unwrap_or(128),
            }),
            _ => None,
        },
        quant_asymmetric: f
            .get("quantization_config")
            .and_then(|q| q.get("sym"))
            .and_then(Value::as_bool)
            == Some(false),
        quant_method,
        quant_source: crate::calc::model::QuantSource::Checkpoint,
    };
    model
        .validate()
        .map_err(|(field, msg)| invalid_model(&f, field, msg))?;
    Ok(model)
}

/// The model's own check refused it (`field`, `msg`): the error names the key the config gave.
// Never inlined: no link the first verdict is trained on calls it (DESIGN.md, "Rare code").
#[inline(never)]
fn invalid_model(f: &Fields, field: &'static str, msg: String) -> ConfigError {
    // The model names a figure by its canonical key; the config may have used an alias
    // (Mixtral's num_local_experts, DeepSeek's n_routed_experts): name the key it gave.
    let given = ALIASES
        .iter()
        .find(|(canonical, _)| *canonical == field)
        .and_then(|(_, keys)| keys.iter().find(|k| f.get(k).is_some()))
        .copied()
        .unwrap_or(field);
    let msg = match msg.strip_prefix(field) {
        Some(rest) if given != field => format!("{given}{rest}"),
        _ => msg,
    };
    ConfigError::new(given, msg)
}

/// transformers' `LlamaConfig.__init__` defaults for the shape (configuration_llama.py), which a
/// wrapper's text_config inherits for the keys it omits.
const LLAMA_DEFAULTS: &str = r#"{"vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 11008,
  "num_hidden_layers": 32, "num_attention_heads": 32, "max_position_embeddings": 2048,
  "tie_word_embeddings": false}"#;

/// Keys a config may give a figure under, by the model's canonical name for it (the order
/// the reader tries them).
const ALIASES: &[(&str, &[&str])] = &[
    (
        "num_experts",
        &["num_experts", "num_local_experts", "n_routed_experts"],
    ),
    (
        "num_experts_per_tok",
        &["num_experts_per_tok", "experts_per_token"],
    ),
];

#[cfg(test)]
mod tests {
    #[test]
    fn llama_defaults_are_json() {
        let v = super::json::parse(super::LLAMA_DEFAULTS).unwrap();
        assert_eq!(
            v.get("intermediate_size").and_then(super::Value::as_u64),
            Some(11008)
        );
    }

    /// An error names the key the config gave, not the model's canonical name for it.
    #[test]
    fn errors_name_the_key_given() {
        let config = |experts_key: &str, n: u64| {
            format!(
                r#"{{"architectures":["MixtralForCausalLM"],"model_type":"mixtral","hidden_size":4096,"intermediate_size":14336,"num_hidden_layers":32,"num_attention_heads":32,"num_key_value_heads":8,"vocab_size":32000,"max_position_embeddings":32768,"{experts_key}":{n},"num_experts_per_tok":2}}"#
            )
        };
        for key in ["num_local_experts", "n_routed_experts", "num_experts"] {
            let e = super::parse_config_json(&config(key, 4_294_967_301)).unwrap_err();
            assert_eq!(e.field, key);
            assert_eq!(
                e.message,
                format!("{key} 4294967301 is far beyond any real model (at most 4096)")
            );
        }
        assert!(super::parse_config_json(&config("num_local_experts", 8)).is_ok());
    }
}
