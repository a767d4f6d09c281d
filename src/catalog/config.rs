//! A Hugging Face `config.json` to a `calc::model::Model`: the one parser for catalog rows and
//! pasted configs. Errors name the config field.

use std::fmt;

use super::json::{self, Map, Value};

use crate::calc::model::{
    CompressedAttn, LayerKind, LinearState, Mla, Model, ModelDtype, Moe, SparseMla, WeightQuant,
};

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

fn dtype(f: &Fields) -> Result<ModelDtype, ConfigError> {
    for key in ["torch_dtype", "dtype"] {
        if f.get(key)
            .is_some_and(|v| v.as_str().is_none() && !v.is_null())
        {
            return Err(ConfigError::new(
                "torch_dtype",
                format!("{key} must be a string such as \"bfloat16\""),
            ));
        }
    }
    match f.string("torch_dtype").or_else(|| f.string("dtype")) {
        None | Some("bfloat16") => Ok(ModelDtype::Bfloat16),
        Some("float16") | Some("half") => Ok(ModelDtype::Float16),
        Some("float32") | Some("float") => Ok(ModelDtype::Float32),
        Some(other) => Err(ConfigError::new(
            "torch_dtype",
            format!("torch_dtype {other:?} is not bfloat16, float16 or float32"),
        )),
    }
}

/// The weights' format, whether the checkpoint declares an fp8 KV cache, and `quant_method` as
/// written (lower case; empty when unquantized).
fn quant(f: &Fields) -> Result<(WeightQuant, bool, String), ConfigError> {
    let err = |m: String| ConfigError::new("quantization_config", m);
    let q = match f.get("quantization_config") {
        None | Some(Value::Null) => return Ok((WeightQuant::None, false, String::new())),
        Some(Value::Object(q)) => q,
        Some(_) => return Err(err("quantization_config must be an object".into())),
    };
    if q.get("quant_method").and_then(Value::as_str).is_none() {
        return Err(err(
            "quantization_config has no quant_method string, so the weights' format is unknown"
                .into(),
        ));
    }
    let method = q
        .get("quant_method")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_ascii_lowercase();
    // ModelOpt keeps its algorithms under `quantization` in the traditional format.
    let modelopt = q
        .get("quantization")
        .and_then(Value::as_object)
        .filter(|_| method.starts_with("modelopt"))
        .unwrap_or(q);
    let kv_fp8 = q.get("kv_cache_scheme").is_some_and(|v| !v.is_null())
        || modelopt.get("kv_cache_quant_algo").and_then(Value::as_str) == Some("FP8");
    let algo = modelopt
        .get("quant_algo")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_ascii_uppercase();
    let group = q.get("group_size").and_then(Value::as_u64).unwrap_or(128);
    // vLLM's GPTQ and AWQ configs read the width with get_from_keys, which raises without it
    // (AWQ also takes `w_bit`).
    let width = match method.as_str() {
        "awq" | "awq_marlin" => q.get("w_bit").or_else(|| q.get("bits")),
        _ => q.get("bits"),
    };
    if width.is_none()
        && matches!(
            method.as_str(),
            "gptq" | "gptq_marlin" | "awq" | "awq_marlin"
        )
    {
        return Err(err(format!(
            "quantization_config.bits is missing: vLLM's {method} loader reads the weights' width from it"
        )));
    }
    if method == "bitsandbytes"
        && q.get("load_in_8bit").and_then(Value::as_bool) == Some(true)
        && q.get("load_in_4bit").and_then(Value::as_bool) == Some(true)
    {
        return Err(err(
            "quantization_config sets both load_in_8bit and load_in_4bit; a checkpoint is one or the other"
                .into(),
        ));
    }
    let bits = match width {
        None => 4,
        Some(b) => b.as_u64().ok_or_else(|| {
            err(format!(
                "quantization_config.bits {b} is not a whole number"
            ))
        })?,
    };
    // The first entry of a list-valued key (`weight_block_size`, `block_structure`).
    let first_of = |m: &Map, key: &str| {
        m.get(key)
            .and_then(Value::as_array)
            .and_then(|a| a.first())
            .and_then(Value::as_u64)
            .unwrap_or(0)
    };
    let ct_weights = q
        .get("config_groups")
        .and_then(Value::as_object)
        .and_then(|g| g.iter().find_map(|(_, v)| v.get("weights")))
        .and_then(Value::as_object);
    let w = match method.as_str() {
        "fp8" => {
            let block = first_of(q, "weight_block_size");
            // DeepSeek-V4 stores its experts in 4-bit floats next to FP8 block-scaled linears; the
            // config says so outside quantization_config.
            if f.string("expert_dtype") == Some("fp4") {
                WeightQuant::Fp8Fp4Experts { block }
            } else {
                WeightQuant::Fp8 { block }
            }
        }
        "fbgemm_fp8" | "ptpc_fp8" => WeightQuant::Fp8 { block: 0 },
        "mxfp4" => WeightQuant::Mxfp4,
        // vLLM's AWQConfig supports 4-bit only; GPTQConfig 2, 3, 4 and 8.
        "awq" | "awq_marlin" if bits != 4 => {
            return Err(err(format!(
                "quantization_config.bits {bits}: vLLM's AWQ supports only 4-bit weights"
            )))
        }
        "gptq" | "gptq_marlin" if ![2, 3, 4, 8].contains(&bits) => {
            return Err(err(format!(
                "quantization_config.bits {bits}: vLLM's GPTQ supports 2, 3, 4 and 8 bits"
            )))
        }
        "awq" | "gptq" | "awq_marlin" | "gptq_marlin" => WeightQuant::Int { bits, group },
        // ModelOpt's algorithms (modelopt.py LINEAR_ALGOS and MIXED_PRECISION).
        m if m.starts_with("modelopt") => match algo.as_str() {
            "NVFP4" | "W4A16_NVFP4" => WeightQuant::Nvfp4,
            "FP8_PB_WO" => WeightQuant::Fp8 { block: 128 },
            // MXFP8's e8m0 scale per 32 weights is 3 %; MIXED_PRECISION varies by layer.
            "FP8" | "FP8_PER_CHANNEL_PER_TOKEN" | "MXFP8" | "MIXED_PRECISION" => {
                WeightQuant::Fp8 { block: 0 }
            }
            other => {
                return Err(err(format!(
                    "quant_algo {other:?}: vLLM's ModelOpt loads FP8, FP8_PER_CHANNEL_PER_TOKEN, FP8_PB_WO, NVFP4, W4A16_NVFP4, MXFP8 and MIXED_PRECISION only"
                )))
            }
        },
        // LLM.int8 with load_in_8bit; otherwise 4-bit (NF4/FP4) in blocks of 64.
        "bitsandbytes" if q.get("load_in_8bit").and_then(Value::as_bool) == Some(true) => {
            WeightQuant::Int8
        }
        "bitsandbytes" => WeightQuant::Int { bits: 4, group: 64 },
        // The weights' scheme of the first config group: width, int or float, group size.
        "compressed-tensors" => match ct_weights {
            Some(w) => {
                let num_bits = w.get("num_bits").and_then(Value::as_u64).unwrap_or(8);
                let float = w.get("type").and_then(Value::as_str) == Some("float");
                let block = first_of(w, "block_structure");
                // Per-channel (no group): a scale per row, negligible beside the weights.
                let group = w
                    .get("group_size")
                    .and_then(Value::as_u64)
                    .filter(|g| *g > 0)
                    .unwrap_or(1 << 16);
                match (num_bits, float) {
                    (4, true) if group == 32 => WeightQuant::Mxfp4,
                    (4, true) => WeightQuant::Nvfp4,
                    (8, true) => WeightQuant::Fp8 { block },
                    (8, false) => WeightQuant::Int8,
                    (bits @ 2..=4, false) => WeightQuant::Int { bits, group },
                    (bits, _) => {
                        return Err(err(format!(
                            "compressed-tensors weights of {bits} bits ({}) are not a format Headroom can size",
                            if float { "float" } else { "int" }
                        )))
                    }
                }
            }
            // No config groups: the older, flat form.
            None => {
                let text = Value::Object(q.clone()).to_string().to_ascii_lowercase();
                if text.contains("nvfp4") || text.contains("\"num_bits\":4") && text.contains("float") {
                    WeightQuant::Nvfp4
                } else if text.contains("\"num_bits\":4") {
                    WeightQuant::Int { bits: 4, group }
                } else if text.contains("\"type\":\"float\"") {
                    WeightQuant::Fp8 { block: 0 }
                } else {
                    WeightQuant::Int8
                }
            }
        },
        other => {
            return Err(ConfigError::new(
                "quantization_config",
                format!(
                    "quant_method {other:?} is not one Headroom can size (fp8, fbgemm_fp8, ptpc_fp8, mxfp4, awq, gptq, modelopt, bitsandbytes, compressed-tensors); remove quantization_config and give the loaded weights as a measurement instead"
                ),
            ))
        }
    };
    Ok((w, kv_fp8, method))
}

/// vLLM's derived context length (`_get_and_verify_max_len` with
/// `derive_max_model_len_and_key`, 0.33.0): the smallest of nine length keys, `model_max_length`
/// when given, times the RoPE scaling factor unless the scaling type already scaled the length
/// (YaRN, Llama 3, LongRoPE) or the model is Gemma 3; 2048 when no key is there. Returns the
/// length, how it was derived (for messages), and LongRoPE's default (the original length).
fn derived_max_len(
    f: &Fields,
    model_type: &str,
) -> Result<(u64, String, Option<u64>), ConfigError> {
    const KEYS: [&str; 9] = [
        "max_position_embeddings",
        "n_positions",
        "max_seq_len",
        "seq_length",
        "model_max_length",
        "max_target_positions",
        "max_sequence_length",
        "max_seq_length",
        "seq_len",
    ];
    let mut best: Option<(u64, &str)> = None;
    for key in KEYS {
        if let Some(v) = f.uint(key)? {
            if best.map_or(true, |(b, _)| v < b) {
                best = Some((v, key));
            }
        }
    }
    if let Some(v) = f.uint("model_max_length")?.filter(|v| *v > 0) {
        best = Some((v, "model_max_length"));
    }
    let (len, key) = best.unwrap_or((2048, ""));
    let mut how = if key.is_empty() {
        "none of the length keys (vLLM assumes 2048)".to_string()
    } else {
        format!("{key}={len}")
    };
    // RoPE parameters (vLLM reads the text config's): one dict, or one per layer type.
    let rope = ["rope_parameters", "rope_scaling"]
        .iter()
        .find_map(|k| f.get(k).and_then(Value::as_object));
    let params: Vec<&Map> = match rope {
        Some(r) if r.iter().any(|(_, v)| v.as_object().is_some()) => {
            r.iter().filter_map(|(_, v)| v.as_object()).collect()
        }
        Some(r) => vec![r],
        None => Vec::new(),
    };
    // patch_rope_parameters: `type` is the old key; "su" is LongRoPE's old name, and
    // "*-yarn" variants are YaRN.
    let kind = |p: &Map| {
        let t = p
            .get("rope_type")
            .or_else(|| p.get("type"))
            .and_then(Value::as_str)
            .unwrap_or("default");
        match t {
            "su" => "longrope".to_string(),
            t if t.contains("yarn") && t != "deepseek_yarn" => "yarn".to_string(),
            t => t.to_string(),
        }
    };
    // The last layer type's factor wins; a null factor counts as 1 (vLLM warns).
    let mut factor: Option<Option<f64>> = None;
    if !model_type.contains("gemma3") {
        for p in &params {
            let t = kind(p);
            let scaled = [
                "longrope",
                "llama3",
                "yarn",
                "deepseek_yarn",
                "deepseek_llama_scaling",
            ];
            if !scaled.contains(&t.as_str()) {
                if let Some(x) = p.get("factor") {
                    factor = Some(x.as_f64());
                }
            }
        }
    }
    let mut len = len;
    if let Some(x) = factor
        .flatten()
        .filter(|x| x.is_finite() && *x > 0.0 && *x != 1.0)
    {
        let scaled = (len as f64 * x).min(1e12);
        len = scaled as u64;
        how = format!(
            "{how} x RoPE factor {}",
            crate::calc::units::py_float_str(x)
        );
    }
    let longrope = params
        .iter()
        .any(|p| kind(p) == "longrope")
        .then(|| f.uint("original_max_position_embeddings").ok().flatten())
        .flatten();
    Ok((len, how, longrope))
}

/// Parses a config already read as JSON.
pub fn parse_config_value(v: &Value) -> Result<Model, ConfigError> {
    let top = v
        .as_object()
        .ok_or_else(|| ConfigError::new("config", "it must be a JSON object"))?;
    let mut layers = Vec::new();
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
    let f = Fields { layers };

    let n_layers = f.need("num_hidden_layers")?;
    if n_layers == 0 || n_layers > 10_000 {
        return Err(ConfigError::new(
            "num_hidden_layers",
            format!("num_hidden_layers {n_layers} must be between 1 and 10000"),
        ));
    }
    let n_layers32 = n_layers as u32;
    let hidden = f.need("hidden_size")?;
    let heads = f.need("num_attention_heads")?;
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
    let model_type = f.string("model_type").unwrap_or("");
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
                            format!("layer_types entry {kind:?} is not a known layer kind")
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
                shared_intermediate_size: f.uint("shared_expert_intermediate_size")?,
                dense_layers: (0..n_layers)
                    .map(|i| i < dense_first || mlp_only.contains(&i))
                    .collect(),
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

    let (quant, kv_fp8, quant_method) = quant(&f)?;
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
            .unwrap_or("a config.json without model_type")
            .to_string(),
        // A multimodal wrapper names its own class at the top level, which vLLM loads.
        architecture: top
            .get("architectures")
            .and_then(Value::as_array)
            .and_then(|a| a.first())
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
        n_layers: n_layers32,
        hidden_size: hidden,
        n_heads: heads,
        n_kv_heads: kv_heads,
        head_dim,
        head_dim_v: f
            .uint("v_head_dim")?
            .filter(|_| mla.is_none())
            .unwrap_or(head_dim),
        intermediate_size: f.uint("intermediate_size")?.unwrap_or(4 * hidden),
        vocab_size: vocab,
        // Absent from the file, the config class's default applies: transformers' Gemma,
        // Gemma 2 and Gemma 3 configs tie (tie_word_embeddings=True); the Llama, Mistral,
        // Mixtral, Qwen and DeepSeek configs do not.
        tie_word_embeddings: f.boolean("tie_word_embeddings").unwrap_or(matches!(
            model_type,
            "gemma" | "gemma2" | "gemma3" | "gemma3_text"
        )),
        layers: kinds,
        mla,
        moe,
        linear,
        mtp_layers: f.uint("num_nextn_predict_layers")?.unwrap_or(0) as u32,
        mtp_draft: has_mtp_draft(&f),
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
    };
    model
        .validate()
        .map_err(|(field, msg)| ConfigError::new(field, msg))?;
    Ok(model)
}

/// Whether vLLM 0.33.0 has an MTP drafter for this config: the model types and architectures
/// `SpeculativeConfig.hf_config_override` rewrites to an MTP model (read from its source), the
/// MTP types themselves, and Nemotron-H when it declares next-n layers. With any other config,
/// `method: mtp` stops the engine ("Unsupported speculative method: 'mtp'").
fn has_mtp_draft(f: &Fields) -> bool {
    const TYPES: &[&str] = &[
        "dots3_note",
        "deepseek_v3",
        "deepseek_v32",
        "glm_moe_dsa",
        "deepseek_v4",
        "pangu_ultra_moe",
        "kimi_k3",
        "ernie4_5_moe",
        "qwen3_next",
        "qwen4_exp",
        "qwen4_exp_text",
        "bailing_hybrid",
        "exaone_moe",
        "qwen3_5",
        "qwen3_5_moe",
        "qwen3_5_text",
        "qwen3_5_moe_text",
        "intern_s2_preview",
        "interns2_mobius",
        "longcat_flash",
        "step3p5",
        "step3p7",
        "step5",
        "step5_vl",
        "hy_v3",
        "hy_v4",
        "inkling_mm_model",
        "inkling_model",
        "gemma4_assistant",
        "gemma4_unified_assistant",
        "minimax_m3_vl",
        "glm5_next",
        "muse_glimmer_assistant",
        "mtp",
    ];
    const ARCHITECTURES: &[&str] = &[
        "MiMoForCausalLM",
        "MiMoV2ForCausalLM",
        "MiMoV2OmniForCausalLM",
        "MiMoV2FlashForCausalLM",
        "Glm4MoeForCausalLM",
        "Glm4MoeLiteForCausalLM",
        "GlmOcrForConditionalGeneration",
        "BailingMoeV3ForCausalLM",
        "BailingMoeV3VLForConditionalGeneration",
        "BailingMoeV2_5ForCausalLM",
        "Step3p5ForCausalLM",
        "Step3p7ForConditionalGeneration",
        "Step5ForCausalLM",
        "Step5ForConditionalGeneration",
    ];
    let next_n = f
        .get("num_nextn_predict_layers")
        .and_then(Value::as_u64)
        .is_some_and(|n| n > 0);
    let mtp_type = |t: &str| {
        TYPES.contains(&t)
            || t.ends_with("_mtp")
            || t.contains("exaone4_5")
            || (matches!(t, "nemotron_h" | "nemotron_h_puzzle") && next_n)
    };
    // The top level, as vLLM reads it (a wrapper's text_config is not what it maps).
    f.layers.last().is_some_and(|m| {
        m.get("model_type")
            .and_then(Value::as_str)
            .is_some_and(mtp_type)
            || m.get("architectures")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .any(|a| ARCHITECTURES.contains(&a) || (a.starts_with("NemotronH_") && next_n))
    })
}
