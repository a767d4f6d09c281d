//! The weights' dtype and format as a config declares them: `torch_dtype`, the
//! `quantization_config` (method, bits, group size, fp8 KV cache) and the modules it keeps
//! unquantized.

use super::{ConfigError, Fields};
use crate::calc::blocks::{KeepFull, Part};

use crate::calc::model::{ModelDtype, WeightQuant};
use crate::catalog::json::{Map, Value};

pub(super) fn dtype(f: &Fields) -> Result<ModelDtype, ConfigError> {
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
            format!(
                "torch_dtype {} is not bfloat16, float16 or float32",
                crate::calc::quoted(other)
            ),
        )),
    }
}

/// The weights' format, whether the checkpoint declares an fp8 KV cache, and `quant_method` as
/// written (lower case; empty when unquantized).
pub(super) fn quant(f: &Fields) -> Result<(WeightQuant, bool, String), ConfigError> {
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
        // MiniMax-style checkpoints tag `quant_method: mxfp8` (vLLM loads them with ModelOpt's
        // MXFP8 config).
        "mxfp8" => WeightQuant::Mxfp8,
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
            "MXFP8" => WeightQuant::Mxfp8,
            // MIXED_PRECISION varies by layer.
            "FP8" | "FP8_PER_CHANNEL_PER_TOKEN" | "MIXED_PRECISION" => {
                WeightQuant::Fp8 { block: 0 }
            }
            other => {
                return Err(err(format!(
                    "quant_algo {}: vLLM's ModelOpt loads FP8, FP8_PER_CHANNEL_PER_TOKEN, FP8_PB_WO, NVFP4, W4A16_NVFP4, MXFP8 and MIXED_PRECISION only", crate::calc::quoted(other)
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
                    "quant_method {} is not one Headroom can size (fp8, fbgemm_fp8, ptpc_fp8, mxfp4, awq, gptq, modelopt, bitsandbytes, compressed-tensors); remove quantization_config and give the loaded weights as a measurement instead", crate::calc::quoted(other)
                ),
            ))
        }
    };
    Ok((w, kv_fp8, method))
}

/// The modules a quantization config keeps unquantized, as it lists them (regexes included),
/// less the LM head, which the estimate keeps unquantized anyway.
/// Every pattern of the quantization config's skip lists (`ignore`, `modules_to_not_convert`,
/// `exclude_modules`, also under ModelOpt's nested `quantization`), the LM head's aside.
fn skip_patterns<'a>(f: &Fields<'a>) -> Vec<&'a str> {
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
        .take(4096)
        .collect()
}

/// What a skip pattern keeps at full width.
enum Skip {
    /// A decoder part, in one layer or all.
    Part(KeepFull),
    /// Something the estimate holds at full width anyway: the embedding, routers, norms, the
    /// vision tower and projector.
    AlreadyFull,
    /// Not recognised.
    Unknown,
}

/// Reads one pattern (a module path, a glob or `re:` regex): `model.layers.3.mixer`,
/// `*.mlp.shared_expert.*`, `model.layers.*.self_attn`, `re:.*linear_attn.*`.
fn classify(pattern: &str) -> Skip {
    let p = pattern
        .strip_prefix("re:")
        .unwrap_or(pattern)
        .to_ascii_lowercase();
    let has = |words: &[&str]| words.iter().any(|w| p.contains(w));
    // `layers.12.` (or `layers\.12\.` in a regex): that layer alone.
    let layer = p
        .replace("\\.", ".")
        .split("layers.")
        .nth(1)
        .and_then(|rest| {
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            digits.parse::<u32>().ok()
        });
    let part = if has(&[
        "vision",
        "visual",
        "multi_modal_projector",
        "mm_projector",
        "embed_tokens",
        "embeddings",
        "norm",
    ]) {
        return Skip::AlreadyFull;
    } else if has(&["shared_expert", "shared_mlp"]) {
        Part::SharedExperts
    } else if has(&["latent_proj"]) {
        Part::Latent
    } else if has(&["experts", "block_sparse_moe"]) {
        Part::Experts
    } else if has(&["router", ".gate", "gate$", "e_score_correction"])
        && !has(&["gate_proj", "gate_up"])
        || p == "gate"
    {
        return Skip::AlreadyFull;
    } else if has(&["linear_attn", "in_proj_qkvz", "in_proj_ba"]) {
        Part::LinearAttention
    } else if has(&[
        "self_attn",
        "attention",
        "q_proj",
        "k_proj",
        "v_proj",
        "o_proj",
        "qkv",
        "q_a_proj",
        "q_b_proj",
        "kv_a_proj",
        "kv_b_proj",
    ]) {
        Part::Attention
    } else if has(&[
        "mamba", "in_proj", "out_proj", "conv1d", "x_proj", "dt_proj",
    ]) {
        Part::Mamba
    } else if has(&["mixer"]) {
        Part::Whole
    } else if has(&[
        "mlp",
        "gate_proj",
        "up_proj",
        "down_proj",
        "feed_forward",
        "ffn",
    ]) {
        Part::DenseMlp
    } else if layer.is_some()
        && p.trim_end_matches(['*', '.'])
            .ends_with(&format!("layers.{}", layer.unwrap_or(0)))
    {
        Part::Whole
    } else {
        return Skip::Unknown;
    };
    Skip::Part(KeepFull { part, layer })
}

/// The decoder parts the skip lists keep at full width (those Headroom recognises).
pub(super) fn keep_full(f: &Fields) -> Vec<KeepFull> {
    skip_patterns(f)
        .into_iter()
        .filter_map(|p| match classify(p) {
            Skip::Part(k) => Some(k),
            _ => None,
        })
        .collect()
}

/// The skip patterns Headroom does not recognise (the plan names them: the estimate sizes
/// those modules at the quantized width).
pub(super) fn quant_skips(f: &Fields) -> Vec<String> {
    skip_patterns(f)
        .into_iter()
        .filter(|p| matches!(classify(p), Skip::Unknown))
        .take(64)
        .map(|m| m.chars().take(80).collect())
        .collect()
}
