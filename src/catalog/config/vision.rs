//! A multimodal config's vision encoder, from its `vision_config`, for an estimate of its
//! weights: a ViT of `depth` blocks (SigLIP, CLIP, Pixtral, Qwen-VL, Llama 4's), its patch and
//! position embeddings and a projector into the language model.

use super::ConfigError;
use crate::calc::blocks::VisionTower;
use crate::catalog::json::{Map, Value};

fn uint(v: &Map, keys: &[&str]) -> Result<Option<u64>, ConfigError> {
    for k in keys {
        match v.get(k) {
            None | Some(Value::Null) => continue,
            Some(x) => {
                return x.as_u64().map(Some).ok_or_else(|| {
                    ConfigError::new(
                        format!("vision_config.{k}"),
                        format!("vision_config.{k} must be a non-negative integer, not {x}"),
                    )
                })
            }
        }
    }
    Ok(None)
}

/// The tower, or `None` when the config has no `vision_config` or too little of one to size
/// (the plan then says its weights are not estimated).
pub(super) fn read(top: &Map, text_hidden: u64) -> Result<Option<VisionTower>, ConfigError> {
    let Some(v) = top.get("vision_config").and_then(Value::as_object) else {
        return Ok(None);
    };
    let depth = uint(v, &["num_hidden_layers", "depth", "num_layers"])?;
    let hidden = uint(v, &["hidden_size", "embed_dim", "width"])?;
    let (Some(depth), Some(hidden)) = (depth, hidden) else {
        return Ok(None);
    };
    let intermediate = match uint(v, &["intermediate_size"])? {
        Some(i) => i,
        None => match v.get("mlp_ratio").and_then(Value::as_f64) {
            Some(r) if r > 0.0 && r < 64.0 => (r * hidden as f64) as u64,
            _ => 4 * hidden,
        },
    };
    let patch = uint(v, &["patch_size"])?.unwrap_or(14);
    let channels = uint(v, &["num_channels", "in_chans", "in_channels"])?.unwrap_or(3);
    let temporal = uint(v, &["temporal_patch_size"])?.unwrap_or(1).max(1);
    let positions = match uint(v, &["image_size"])? {
        Some(side) if patch > 0 => (side / patch).pow(2),
        _ => 0,
    };
    for (k, value, max) in [
        ("depth", depth, 1_000u64),
        ("hidden_size", hidden, 1 << 16),
        ("intermediate_size", intermediate, 1 << 18),
        ("patch_size", patch, 1 << 10),
        ("num_channels", channels, 64),
        ("temporal_patch_size", temporal, 64),
        (
            "positions (image_size / patch_size, squared)",
            positions,
            1 << 22,
        ),
    ] {
        if value > max {
            return Err(ConfigError::new(
                format!("vision_config.{k}"),
                format!("vision_config.{k} {value} is far beyond any real vision encoder (at most {max})"),
            ));
        }
    }
    let act = v
        .get("hidden_act")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let model_type = top
        .get("model_type")
        .and_then(Value::as_str)
        .unwrap_or_default();
    Ok(Some(VisionTower {
        depth,
        hidden,
        intermediate,
        patch_inputs: channels * patch * patch * temporal,
        positions,
        // SwiGLU towers (Qwen2.5-VL, Pixtral) gate their MLP; SigLIP, CLIP and Llama 4's GELU
        // towers do not.
        gated: act == "silu",
        text_hidden,
        // LLaVA-style wrappers project with linear_1, activation, linear_2.
        projector_layers: if top.get("projector_hidden_act").is_some()
            || model_type.starts_with("llava")
        {
            2
        } else {
            1
        },
    }))
}
