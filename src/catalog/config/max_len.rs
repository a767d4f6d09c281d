//! The context length vLLM derives from a config when `--max-model-len` is not given: the
//! length keys, `model_max_length` and RoPE scaling.

use super::{ConfigError, Fields};

use crate::catalog::json::{Map, Value};

/// vLLM's derived context length (`_get_and_verify_max_len` with
/// `derive_max_model_len_and_key`, 0.33.0): the smallest of nine length keys, `model_max_length`
/// when given, times the RoPE scaling factor unless the scaling type already scaled the length
/// (YaRN, Llama 3, LongRoPE) or the model is Gemma 3; 2048 when no key is there. Returns the
/// length, how it was derived (for messages), and LongRoPE's default (the original length).
pub(super) fn derived_max_len(
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
