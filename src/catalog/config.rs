//! A Hugging Face `config.json` to a `calc::model::Model`: the one parser for catalog rows and
//! pasted configs. Errors name the config field.

use std::fmt;

use super::json::{self, Map, Value};

use crate::calc::model::{
    CompressedAttn, LayerKind, LinearState, Mla, Model, ModelDtype, Moe, MtpDraft, SparseMla,
    WeightQuant,
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
    // AWQ reads q_group_size first (AutoAWQConfig.from_config); a group_size of -1 is one
    // scale per output row over the whole input (GPTQ's per-channel), counted here as a group
    // too large for its scales to matter.
    let group_key = match method.as_str() {
        "awq" | "awq_marlin" => q.get("q_group_size").or_else(|| q.get("group_size")),
        _ => q.get("group_size"),
    };
    let group = match group_key {
        Some(v) if v.as_f64() == Some(-1.0) => 1 << 20,
        Some(v) => v.as_u64().unwrap_or(128),
        None => 128,
    };
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
    // vLLM multiplies the length by the factor as it is: a factor that is not a positive
    // number, or one that makes the length absurd, is refused here rather than planned.
    if let Some(x) = factor.flatten() {
        if !x.is_finite() || x <= 0.0 {
            return Err(ConfigError::new(
                "rope_scaling",
                format!(
                    "rope_scaling factor {} must be a positive number (vLLM multiplies max_position_embeddings by it)",
                    crate::calc::units::py_float_str(x)
                ),
            ));
        }
        if len as f64 * x > 1e9 {
            return Err(ConfigError::new(
                "rope_scaling",
                format!(
                    "rope_scaling factor {} makes the derived context length {len} x {} over 1,000,000,000 tokens; check the config",
                    crate::calc::units::py_float_str(x),
                    crate::calc::units::py_float_str(x)
                ),
            ));
        }
    }
    if let Some(x) = factor.flatten().filter(|x| *x != 1.0) {
        let scaled = len as f64 * x;
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
        mtp_layers,
        mtp_draft,
        quant_skips: quant_skips(&f),
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

/// What `method: mtp` finds for this config, and its MTP modules (`n_predict`), as vLLM
/// 0.33.0's `SpeculativeConfig.hf_config_override` decides them: a cascade that rewrites the
/// model type (a wrapper's text config for some families) and reads the module count from a
/// field of each family's own; the method stands when the type it ends with is one of
/// `MTPModelTypes`. (`RadioMBartPrefixForCausalLM`, an OCR decoder, is left out.)
fn mtp_draft(f: &Fields) -> (MtpDraft, Option<u64>) {
    let Some(&top) = f.layers.last() else {
        return (MtpDraft::Unsupported, None);
    };
    // transformers' get_text_config(): the wrapper's text_config, else the config itself.
    let text = if f.layers.len() > 1 { f.layers[0] } else { top };
    let archs = |m: &Map| -> Vec<String> {
        m.get("architectures")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect()
    };
    let uint = |m: &Map, key: &str| m.get(key).and_then(Value::as_u64);
    let first = archs(top).into_iter().next().unwrap_or_default();
    let a0 = first.as_str();
    let mut cfg = top;
    let mut mt = cfg
        .get("model_type")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let mut n: Option<Option<u64>> = None;
    let mut refused: Option<String> = None;
    let nextn = |m: &Map| uint(m, "num_nextn_predict_layers");

    if mt == "dots3_note" {
        n = Some(Some(nextn(cfg).unwrap_or(1)));
        mt = "dots3_note_mtp".into();
    }
    if matches!(mt.as_str(), "deepseek_v3" | "deepseek_v32" | "glm_moe_dsa") {
        mt = "deepseek_mtp".into();
    }
    if mt == "deepseek_mtp" {
        n = Some(nextn(cfg));
    }
    if matches!(mt.as_str(), "deepseek_v4" | "deepseek_v41") {
        if mt == "deepseek_v41" {
            refused = Some("DeepSeek V4.1 has no classic-MTP draft: its checkpoints ship DSpark stages under mtp.* (main_proj/markov_head/confidence_head) and carry no e_proj/h_proj/enorm/hnorm/hc_head weights. Use speculative method 'dspark' instead of 'mtp'.".into());
        }
        mt = "deepseek_mtp".into();
        n = Some(nextn(cfg));
    }
    if mt == "pangu_ultra_moe" {
        mt = "pangu_ultra_moe_mtp".into();
    }
    if mt == "pangu_ultra_moe_mtp" {
        n = Some(nextn(cfg));
    }
    if mt == "kimi_k3" {
        n = Some(nextn(text));
        mt = "kimi_k3_mtp".into();
    }
    if a0 == "MiMoForCausalLM" {
        mt = "mimo_mtp".into();
        n = Some(nextn(cfg));
    }
    // vLLM builds the first MiMo-V2 MTP layer only (_MIMO_V2_*_NUM_MTP_LAYERS = 1).
    if matches!(
        a0,
        "MiMoV2ForCausalLM" | "MiMoV2OmniForCausalLM" | "MiMoV2FlashForCausalLM"
    ) {
        mt = "mimo_v2_mtp".into();
        n = Some(Some(1));
    }
    for (arch, to) in [
        ("Glm4MoeForCausalLM", "glm4_moe_mtp"),
        ("Glm4MoeLiteForCausalLM", "glm4_moe_lite_mtp"),
        ("GlmOcrForConditionalGeneration", "glm_ocr_mtp"),
    ] {
        if a0 == arch {
            mt = to.into();
            n = Some(nextn(cfg));
        }
    }
    if mt == "ernie4_5_moe" {
        mt = "ernie_mtp".into();
    }
    if mt == "ernie_mtp" {
        n = Some(nextn(cfg));
    }
    if matches!(
        a0,
        "NemotronH_Super_Omni_Reasoning_V3" | "NemotronH_Omni_Reasoning_V3"
    ) {
        cfg = text;
        mt = cfg
            .get("model_type")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
    }
    if matches!(mt.as_str(), "nemotron_h" | "nemotron_h_puzzle")
        && nextn(cfg).is_some_and(|k| k > 0)
    {
        mt = "nemotron_h_mtp".into();
    }
    if mt == "nemotron_h_mtp" {
        n = Some(Some(nextn(cfg).unwrap_or(1)));
    }
    if mt == "qwen3_next" {
        mt = "qwen3_next_mtp".into();
    }
    if mt == "qwen3_next_mtp" {
        n = Some(nextn(cfg));
    }
    if matches!(mt.as_str(), "qwen4_exp" | "qwen4_exp_text") {
        mt = "qwen4_exp_mtp".into();
    }
    if mt == "qwen4_exp_mtp" {
        n = Some(uint(text, "mtp_num_hidden_layers").or(nextn(text)));
    }
    let cfg_archs = archs(cfg);
    if a0 == "BailingMoeV3VLForConditionalGeneration" {
        cfg = text;
    }
    if matches!(
        a0,
        "BailingMoeV3ForCausalLM" | "BailingMoeV3VLForConditionalGeneration"
    ) {
        mt = "bailing_hybrid_v3_mtp".into();
    } else if mt == "bailing_hybrid" || cfg_archs.iter().any(|a| a == "BailingMoeV2_5ForCausalLM") {
        mt = "bailing_hybrid_mtp".into();
    }
    if matches!(mt.as_str(), "bailing_hybrid_mtp" | "bailing_hybrid_v3_mtp") {
        n = Some(nextn(cfg));
    }
    if mt == "exaone_moe" {
        mt = "exaone_moe_mtp".into();
    }
    if mt == "exaone_moe_mtp" {
        n = Some(nextn(cfg));
    }
    if mt.contains("exaone4_5") {
        mt = "exaone4_5_mtp".into();
        n = Some(nextn(cfg));
    }
    if matches!(
        mt.as_str(),
        "qwen3_5" | "qwen3_5_moe" | "qwen3_5_text" | "qwen3_5_moe_text"
    ) {
        mt = "qwen3_5_mtp".into();
        n = Some(uint(cfg, "mtp_num_hidden_layers").or(uint(text, "mtp_num_hidden_layers")));
    }
    if matches!(mt.as_str(), "intern_s2_preview" | "interns2_mobius") {
        mt = "qwen3_5_mtp".into();
        n = Some(uint(text, "mtp_num_hidden_layers"));
    }
    if mt == "longcat_flash" {
        mt = "longcat_flash_mtp".into();
        n = Some(Some(nextn(cfg).unwrap_or(1)));
    }
    let cfg_a0 = archs(cfg).into_iter().next().unwrap_or_default();
    if matches!(mt.as_str(), "step3p5" | "step3p7")
        || matches!(
            cfg_a0.as_str(),
            "Step3p5ForCausalLM" | "Step3p7ForConditionalGeneration"
        )
    {
        cfg = text;
        mt = "step3p5_mtp".into();
        n = Some(Some(nextn(cfg).unwrap_or(1)));
    }
    if matches!(mt.as_str(), "step5" | "step5_vl")
        || archs(cfg)
            .iter()
            .any(|a| a == "Step5ForCausalLM" || a == "Step5ForConditionalGeneration")
    {
        cfg = text;
        mt = "step5_mtp".into();
        n = Some(Some(nextn(cfg).unwrap_or(1)));
    }
    for (from, to) in [("hy_v3", "hy_v3_mtp"), ("hy_v4", "hy_v4_mtp")] {
        if mt == from {
            mt = to.into();
            n = Some(nextn(cfg));
        }
    }
    if matches!(mt.as_str(), "inkling_mm_model" | "inkling_model") {
        let depths = cfg
            .get("mtp_config")
            .and_then(Value::as_object)
            .and_then(&nextn)
            .unwrap_or(0);
        if depths < 1 {
            refused = Some("The Inkling checkpoint does not contain MTP weights".into());
        }
        mt = "inkling_mtp".into();
        n = Some(Some(depths));
    }
    if matches!(mt.as_str(), "gemma4_assistant" | "gemma4_unified_assistant") {
        mt = "gemma4_mtp".into();
        n = Some(Some(1));
    }
    if mt == "minimax_m3_vl" || a0 == "MiniMaxM3SparseForConditionalGeneration" {
        cfg = text;
        mt = "minimax_m3_mtp".into();
        n = Some(Some(uint(cfg, "num_mtp_modules").unwrap_or(1)));
    } else if mt == "minimax_m3_mtp" || a0 == "MiniMaxM3MTP" {
        n = Some(Some(uint(cfg, "num_mtp_modules").unwrap_or(1)));
    }
    if mt == "glm5_next" {
        mt = "glm5_next_mtp".into();
        n = Some(nextn(text));
    }
    if !MTP_MODEL_TYPES.contains(&mt.as_str()) {
        return (MtpDraft::Unsupported, None);
    }
    // A config already of an MTP type carries its own n_predict.
    let mut n = n.unwrap_or_else(|| uint(cfg, "n_predict"));
    // Without one, these MTP classes build one layer (getattr(config, ..., 1)); DeepSeek's
    // and most others read num_nextn_predict_layers and need it.
    if n.is_none()
        && matches!(
            mt.as_str(),
            "qwen3_next_mtp" | "qwen3_5_mtp" | "exaone_moe_mtp" | "exaone4_5_mtp"
        )
    {
        n = Some(1);
    }
    match refused {
        Some(message) => (MtpDraft::Refused(message), n),
        None => (MtpDraft::Mapped, n),
    }
}

/// The modules a quantization config keeps unquantized, as it lists them (regexes included),
/// less the LM head, which the estimate keeps unquantized anyway.
fn quant_skips(f: &Fields) -> Vec<String> {
    let Some(q) = f.get("quantization_config").and_then(Value::as_object) else {
        return Vec::new();
    };
    let nested = q.get("quantization").and_then(Value::as_object);
    ["ignore", "modules_to_not_convert", "exclude_modules"]
        .iter()
        .flat_map(|k| {
            q.get(k)
                .or_else(|| nested.and_then(|n| n.get(k)))
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
        })
        .filter_map(Value::as_str)
        .filter(|m| {
            !m.trim_start_matches("re:")
                .trim_end_matches('$')
                .ends_with("lm_head")
        })
        .take(64)
        .map(|m| m.chars().take(80).collect())
        .collect()
}
