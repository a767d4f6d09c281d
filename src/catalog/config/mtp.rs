//! What `--speculative-config '{"method": "mtp"}'` finds for a config: the model types vLLM
//! accepts as MTP drafters and the draft model's shape.

use super::Fields;

use crate::calc::model::MtpDraft;
use crate::catalog::json::{Map, Value};

/// The MTP model types live with the speculative method they spell (`calc`).
use crate::calc::scenario::MTP_MODEL_TYPES;

/// What `method: mtp` finds for this config, and its MTP modules (`n_predict`), as vLLM
/// 0.33.0's `SpeculativeConfig.hf_config_override` decides them: a cascade that rewrites the
/// model type (a wrapper's text config for some families) and reads the module count from a
/// field of each family's own; the method stands when the type it ends with is one of
/// `MTPModelTypes`. (`RadioMBartPrefixForCausalLM`, an OCR decoder, is left out.)
pub(super) fn mtp_draft(f: &Fields) -> (MtpDraft, Option<u64>) {
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
