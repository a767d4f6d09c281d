//! `--dtype` and `--quantization`: the weights' format vLLM loads, from the checkpoint's config
//! and the two flags.
//!
//! Read from vLLM 0.33.0: `ModelConfig._get_and_verify_dtype` and `_resolve_auto_dtype` (the
//! dtype, `_FLOAT16_NOT_SUPPORTED_MODELS`), `CudaPlatform.supported_dtypes` and
//! `check_if_supports_dtype` (no bfloat16 before compute capability 8.0),
//! `ModelConfig._verify_quantization` (a flag must match the checkpoint's `quant_method`, or be
//! one of its overrides), `config/quantization.py`'s online shorthands (`fp8_per_tensor` ...
//! quantize an unquantized checkpoint as it loads), and `VllmConfig._get_quantization_config`
//! (each method's minimum compute capability and activation dtypes).
//!
//! A checkpoint method (`awq`, `gptq`, `modelopt_fp4` ...) given for an unquantized config is
//! planned as that method's checkpoint of the same model, with the usual format assumed and
//! said: vLLM itself loads such weights only from such a checkpoint.

use super::input::Input;
use super::model::{ModelDtype, QuantSource, WeightQuant};
use super::planner::NOTES;
use super::scenario::{Gpu, Scenario};
use super::version::VllmVersion;
use super::CalcError;

/// `--dtype`: the weights' and activations' dtype (`auto`: the config's, as vLLM resolves it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Dtype {
    #[default]
    Auto,
    Float16,
    Bfloat16,
    Float32,
}

impl Dtype {
    /// vLLM's spellings (`_STR_DTYPE_TO_TORCH_DTYPE` and `auto`), any case.
    pub fn parse(s: &str) -> Result<Dtype, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "auto" | "" => Ok(Dtype::Auto),
            "half" | "float16" => Ok(Dtype::Float16),
            "bfloat16" => Ok(Dtype::Bfloat16),
            "float" | "float32" => Ok(Dtype::Float32),
            _ => Err(format!(
                "dtype {} is not one of vLLM's: auto, half, float16, bfloat16, float, float32",
                super::quoted(s)
            )),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Dtype::Auto => "auto",
            Dtype::Float16 => "float16",
            Dtype::Bfloat16 => "bfloat16",
            Dtype::Float32 => "float32",
        }
    }

    fn given(self) -> Option<ModelDtype> {
        match self {
            Dtype::Auto => None,
            Dtype::Float16 => Some(ModelDtype::Float16),
            Dtype::Bfloat16 => Some(ModelDtype::Bfloat16),
            Dtype::Float32 => Some(ModelDtype::Float32),
        }
    }
}

/// vLLM 0.33.0's `QUANTIZATION_METHODS` (`model_executor/layers/quantization/__init__.py`), in
/// its order: what `--quantization` accepts.
pub const METHODS: [&str; 30] = [
    "awq",
    "auto_awq",
    "fp8",
    "fbgemm_fp8",
    "fp_quant",
    "modelopt",
    "modelopt_fp4",
    "modelopt_mxfp8",
    "modelopt_mixed",
    "auto_gptq",
    "gptq",
    "gptq_marlin",
    "awq_marlin",
    "humming",
    "compressed-tensors",
    "experts_int8",
    "quark",
    "moe_wna16",
    "torchao",
    "inc",
    "mxfp4",
    "gpt_oss_mxfp4",
    "deepseek_v4_fp8",
    "online",
    "fp8_per_tensor",
    "fp8_per_block",
    "fp8_per_channel",
    "int8_per_channel_weight_only",
    "nvfp4_per_token",
    "mxfp8",
];

/// Methods older releases had and 0.33.0 does not, with the release that removed them: a
/// checkpoint of one is refused from that release on, and `--quantization` takes them under
/// older releases' rules.
pub const REMOVED: [(&str, (u32, u32)); 2] = [("bitsandbytes", (0, 28)), ("ptpc_fp8", (0, 19))];

/// The release that removed `method`, if one did.
pub fn removed_in(method: &str) -> Option<(u32, u32)> {
    REMOVED.iter().find(|(m, _)| *m == method).map(|(_, r)| *r)
}

/// The release each method first appears in, where it is later than the oldest Headroom
/// models (0.10.2), read from each release's `QUANTIZATION_METHODS` and `config/quantization.py`.
// Never inlined: no link the first verdict is trained on calls it (DESIGN.md, "Rare code").
#[inline(never)]
fn first_release(method: &str) -> Option<(u32, u32)> {
    Some(match method {
        "mxfp8" => (0, 19),
        "fp8_per_tensor"
        | "fp8_per_block"
        | "int8_per_channel_weight_only"
        | "online"
        | "humming"
        | "gpt_oss_mxfp4"
        | "deepseek_v4_fp8" => (0, 20),
        "fp8_per_channel" => (0, 24),
        "nvfp4_per_token" => (0, 26),
        _ => return None,
    })
}

/// The methods a ROCm GPU takes (`RocmPlatform.supported_quantization`).
const ROCM_METHODS: [&str; 23] = [
    "awq",
    "auto_awq",
    "awq_marlin",
    "gptq",
    "auto_gptq",
    "fp8",
    "deepseek_v4_fp8",
    "compressed-tensors",
    "fbgemm_fp8",
    "inc",
    "quark",
    "mxfp4",
    "mxfp8",
    "torchao",
    "modelopt",
    "modelopt_fp4",
    "modelopt_mxfp8",
    "modelopt_mixed",
    "fp8_per_tensor",
    "fp8_per_block",
    "fp8_per_channel",
    "online",
    "gpt_oss_mxfp4",
];

/// The canonical name of a `--quantization` value (vLLM compares them as written; Headroom
/// takes any case and `_` for `-`), or the message naming what it accepts.
pub fn parse_method(s: &str) -> Result<Option<&'static str>, String> {
    let t = s.trim().to_ascii_lowercase();
    if t.is_empty() || t == "none" {
        return Ok(None);
    }
    METHODS
        .iter()
        .copied()
        .chain(REMOVED.iter().map(|(m, _)| *m))
        .find(|m| *m == t || m.replace('-', "_") == t.replace('-', "_"))
        .map(Some)
        .ok_or_else(|| {
            format!(
                "quantization {} is not one of vLLM {}'s methods: {}",
                super::quoted(s),
                VllmVersion::CURRENT,
                METHODS.join(", ")
            )
        })
}

/// What a method does to an unquantized checkpoint's weights.
enum Effect {
    /// An online shorthand: vLLM quantizes the weights as it loads them (exact format).
    Online(WeightQuant, &'static str),
    /// A checkpoint format: planned as that method's checkpoint of the model, with the usual
    /// format assumed (said in the note).
    Checkpoint(WeightQuant, &'static str),
    /// A method Headroom cannot size without the checkpoint's own config, and why.
    Unsized(&'static str),
}

// Never inlined: no link the first verdict is trained on calls it (DESIGN.md, "Rare code").
#[inline(never)]
fn effect(method: &str, v: VllmVersion) -> Effect {
    use Effect::*;
    use WeightQuant as Q;
    match method {
        // Online per-tensor FP8 in every release: from 0.31 Fp8Config refuses online use, and
        // get_quant_config maps the flag to fp8_per_tensor with a deprecation warning.
        "fp8" => Online(Q::Fp8 { block: 0 }, if v.at_least(0, 31) {
            "FP8 weights with one scale per tensor, in every linear and expert (from 0.31 vLLM reads fp8 on an unquantized checkpoint as the deprecated spelling of fp8_per_tensor)"
        } else {
            "FP8 weights with one scale per tensor, in every linear and expert"
        }),
        // ROCm's per-token activation, per-channel weight FP8, online (before 0.19).
        "ptpc_fp8" => Online(Q::Fp8 { block: 0 }, "FP8 weights with one scale per output channel, in every linear"),
        // In-flight NF4: 4-bit blocks of 64 with their absmax.
        "bitsandbytes" => Online(Q::Int { bits: 4, group: 64 }, "4-bit NF4 weights in blocks of 64 (bitsandbytes' in-flight quantization), in every linear"),
        "mxfp4" if !v.at_least(0, 28) => Checkpoint(Q::Mxfp4, "MXFP4 routed experts with an e8m0 scale per 32; the other linears unquantized (vLLM quantizes MXFP4 online from 0.28.0 only)"),
        "fp8_per_tensor" => Online(Q::Fp8 { block: 0 }, "FP8 weights with one scale per tensor, in every linear and expert"),
        "fp8_per_channel" => Online(Q::Fp8 { block: 0 }, "FP8 weights with one scale per output channel, in every linear and expert"),
        "fp8_per_block" => Online(Q::Fp8 { block: 128 }, "FP8 weights with an fp32 scale per 128 x 128 block, in every linear and expert"),
        "mxfp8" => Online(Q::Mxfp8, "MXFP8 weights (an e8m0 scale per 32 values), in every linear and expert"),
        "mxfp4" => Online(Q::Mxfp4Linear, "MXFP4 weights (4-bit floats, an e8m0 scale per 32 values), in every linear and expert"),
        "int8_per_channel_weight_only" | "experts_int8" => Online(Q::ExpertsInt8, "INT8 routed experts with a scale per channel; the other linears stay unquantized"),
        "nvfp4_per_token" => Online(Q::ExpertsNvfp4, "NVFP4 routed experts (an fp8 scale per 16 values); the other linears stay unquantized"),
        "awq" | "auto_awq" | "awq_marlin" => Checkpoint(Q::Int { bits: 4, group: 128 }, "4-bit weights with an fp16 scale and a 4-bit zero point per 128 (AutoAWQ's usual group size)"),
        "gptq" | "auto_gptq" | "gptq_marlin" => Checkpoint(Q::Int { bits: 4, group: 128 }, "4-bit weights with an fp16 scale per 128 (GPTQ's usual bits and group size)"),
        "moe_wna16" => Checkpoint(Q::Int { bits: 4, group: 128 }, "4-bit weights with a scale per 128 (a GPTQ or AWQ checkpoint, moe_wna16's inputs)"),
        "deepseek_v4_fp8" => Checkpoint(Q::Fp8Fp4Experts { block: 128 }, "FP8 linears with 128 x 128 block scales and FP4 experts (DeepSeek-V4's format)"),
        "compressed-tensors" => Checkpoint(Q::Int8, "INT8 weights with a scale per channel (the W8A8 scheme; compressed-tensors also stores FP8, INT4 and NVFP4)"),
        "modelopt" => Checkpoint(Q::Fp8 { block: 0 }, "FP8 weights with per-tensor scales (ModelOpt's FP8)"),
        "modelopt_fp4" => Checkpoint(Q::Nvfp4, "NVFP4 weights: 4-bit floats with an fp8 scale per 16 (ModelOpt's NVFP4)"),
        "modelopt_mxfp8" => Checkpoint(Q::Mxfp8, "MXFP8 weights with an e8m0 scale per 32 (ModelOpt's MXFP8)"),
        "gpt_oss_mxfp4" => Checkpoint(Q::Mxfp4, "MXFP4 routed experts with an e8m0 scale per 32; the other linears unquantized (gpt-oss's format)"),
        "online" => Unsized("online takes its scheme from --quantization-config, which Headroom does not read; give one of the shorthands (fp8_per_tensor, fp8_per_block, fp8_per_channel, mxfp8, mxfp4, int8_per_channel_weight_only, nvfp4_per_token)"),
        "modelopt_mixed" => Unsized("modelopt_mixed chooses a format per layer, which only the checkpoint's config lists"),
        _ => Unsized("its formats vary by checkpoint"),
    }
}

/// `get_min_capability` of the method's config class (x 10: 75 is 7.5).
fn min_capability(method: &str) -> u32 {
    match method {
        "gptq" | "auto_gptq" | "gptq_marlin" | "inc" => 60,
        "compressed-tensors" | "moe_wna16" | "quark" => 70,
        "modelopt" | "modelopt_mxfp8" | "mxfp4" | "gpt_oss_mxfp4" | "experts_int8"
        | "fbgemm_fp8" => 80,
        "fp_quant" => 100,
        // awq, fp8, modelopt_fp4, humming, torchao and the online shorthands.
        _ => 75,
    }
}

/// `get_supported_act_dtypes` of the method's config class.
fn act_dtypes(method: &str) -> &'static [ModelDtype] {
    use ModelDtype::*;
    match method {
        "compressed-tensors" | "torchao" => &[Float32, Float16, Bfloat16],
        "mxfp4" | "gpt_oss_mxfp4" | "modelopt_mxfp8" | "fp_quant" => &[Bfloat16],
        _ => &[Float16, Bfloat16],
    }
}

/// Whether vLLM accepts `--quantization flag` for a checkpoint whose `quant_method` is
/// `checkpoint` (`_verify_quantization`): the same method, or one of the overrides it consults.
/// AWQ and GPTQ checkpoints take their Marlin and auto_ names (and moe_wna16 for an MoE); a
/// ModelOpt checkpoint, gpt-oss's MXFP4 and DeepSeek-V4's FP8 are claimed by their own config
/// class whatever the flag says (vLLM 0.33.0's modelopt.py, mxfp4.py, deepseek_v41's
/// quant_config.py); compressed-tensors and the rest only by their own name.
// Never inlined: no link the first verdict is trained on calls it (DESIGN.md, "Rare code").
#[inline(never)]
fn accepted(checkpoint: &str, flag: &str, m: &super::model::Model) -> Accept {
    let awq = ["awq", "auto_awq", "awq_marlin"];
    let gptq = ["gptq", "auto_gptq", "gptq_marlin"];
    if checkpoint == flag {
        return Accept::Same;
    }
    let moe = m.moe.is_some();
    if awq.contains(&checkpoint) && (awq.contains(&flag) || (moe && flag == "moe_wna16"))
        || gptq.contains(&checkpoint) && (gptq.contains(&flag) || (moe && flag == "moe_wna16"))
    {
        return Accept::Kernel;
    }
    let claimed = checkpoint.starts_with("modelopt")
        || (checkpoint == "mxfp4" && m.architecture == "GptOssForCausalLM")
        || (checkpoint == "fp8" && m.compressed.is_some());
    if claimed && flag != "humming" {
        return Accept::Claimed;
    }
    Accept::Mismatch
}

/// What `_verify_quantization` makes of a flag given with a quantized checkpoint.
enum Accept {
    Same,
    /// Another kernel for the same weights (awq_marlin for awq ...).
    Kernel,
    /// The checkpoint's own config class takes over whatever the flag says.
    Claimed,
    Mismatch,
}

/// A dtype's name as vLLM prints torch's (`torch.bfloat16`).
fn torch(d: ModelDtype) -> String {
    format!("torch.{}", d.as_str())
}

/// The config's `model_type` for vLLM's float16 refusals, read from the architecture.
fn refuses_float16(architecture: &str) -> Option<&'static str> {
    match architecture {
        "Gemma2ForCausalLM" => Some("gemma2"),
        "Gemma3ForCausalLM" => Some("gemma3_text"),
        "Gemma3ForConditionalGeneration" => Some("gemma3"),
        "Glm4ForCausalLM" => Some("glm4"),
        _ => None,
    }
}

/// The platform's dtypes in vLLM's order (`supported_dtypes`): bfloat16 from compute
/// capability 8.0 (ROCm: all three).
/// An unknown compute capability (a catalog row that could not confirm it, a custom GPU) is
/// taken as one that has them all.
fn platform_dtypes(gpu: &Gpu) -> &'static [ModelDtype] {
    use ModelDtype::*;
    if gpu.is_rocm() || gpu.compute_capability.0 >= 8 || gpu.compute_capability.0 == 0 {
        &[Bfloat16, Float16, Float32]
    } else {
        &[Float16, Float32]
    }
}

/// The dtype vLLM runs (`_get_and_verify_dtype`), with a note where it is not the config's.
fn resolve_dtype(s: &Scenario) -> Result<(ModelDtype, Option<String>), CalcError> {
    let m = &s.model;
    let config = m.dtype;
    let no_f16 = refuses_float16(&m.architecture);
    let gpu = &s.gpu;
    let (dtype, note) = match s.engine.dtype.given() {
        None => {
            let supported: Vec<ModelDtype> = platform_dtypes(gpu)
                .iter()
                .copied()
                .filter(|d| !(no_f16.is_some() && *d == ModelDtype::Float16))
                .collect();
            let preferred = supported.first().copied().unwrap_or(ModelDtype::Float32);
            if config == ModelDtype::Float32 && preferred != ModelDtype::Float32 {
                (preferred, Some(format!("The config's dtype (torch_dtype) is float32: vLLM's --dtype auto downcasts it to {}, so weights and the KV cache take 2 bytes per value.", preferred.as_str())))
            } else if supported.contains(&config) {
                (config, None)
            } else {
                (preferred, Some(format!(
                    "The {} has no {} (compute capability {}.{}): vLLM's --dtype auto falls back to {}{}.",
                    gpu.name,
                    config.as_str(),
                    gpu.compute_capability.0,
                    gpu.compute_capability.1,
                    preferred.as_str(),
                    if preferred.bytes() != config.bytes() {
                        format!(", {} bytes per value for the weights and the KV cache", preferred.bytes())
                    } else {
                        String::new()
                    }
                )))
            }
        }
        Some(d) => given_dtype(s, d, no_f16)?,
    };
    Ok((dtype, note))
}

/// `--dtype` given: vLLM's refusals, and the cast it makes of the config's dtype, in words.
// Never inlined: no link the first verdict is trained on calls it (DESIGN.md, "Rare code").
#[inline(never)]
fn given_dtype(
    s: &Scenario,
    d: ModelDtype,
    no_f16: Option<&'static str>,
) -> Result<(ModelDtype, Option<String>), CalcError> {
    let config = s.model.dtype;
    let gpu = &s.gpu;
    if d == ModelDtype::Float16 {
        if let Some(t) = no_f16 {
            return Err(CalcError::new(Input::Dtype, format!("vLLM refuses --dtype float16 for this model: \"The model type '{t}' does not support float16. Reason: Numerical instability. Please use bfloat16 or float32 instead.\"")));
        }
    }
    if d == ModelDtype::Bfloat16 && !platform_dtypes(gpu).contains(&d) {
        return Err(CalcError::new(Input::Dtype, format!(
            "vLLM refuses --dtype bfloat16 on the {}: \"Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your GPU has compute capability {}.{}. You can use float16 instead by explicitly setting the `dtype` flag in CLI, for example: --dtype=half.\"",
            gpu.name, gpu.compute_capability.0, gpu.compute_capability.1
        )));
    }
    let note = (d != config).then(|| {
        let verb = if d == ModelDtype::Float32 {
            "upcasts"
        } else if config == ModelDtype::Float32 {
            "downcasts"
        } else {
            "casts"
        };
        format!(
            "--dtype {} {verb} the config's {}: {}.",
            d.as_str(),
            config.as_str(),
            if d.bytes() == config.bytes() {
                "the bytes per value do not change".to_string()
            } else {
                format!(
                    "unquantized weights and the KV cache (kv-cache-dtype auto) take {} bytes per value",
                    d.bytes()
                )
            }
        )
    });
    Ok((d, note))
}

/// Applies `--dtype` and `--quantization` to the scenario's model (into `t`, a copy made on
/// the first change), adding what each did to `notes`.
pub(super) fn apply(
    s: &Scenario,
    t: &mut Option<Scenario>,
    notes: &mut Vec<String>,
) -> Result<(), CalcError> {
    let (dtype, dtype_note) = resolve_dtype(s)?;
    let m = &s.model;
    if dtype != m.dtype {
        let model = &mut t.get_or_insert_with(|| s.clone()).model;
        if m.quant == WeightQuant::None {
            model.checkpoint_bytes = model.checkpoint_bytes.map(|b| {
                (u128::from(b) * u128::from(dtype.bytes()) / u128::from(m.dtype.bytes().max(1)))
                    as u64
            });
        } else if dtype.bytes() != m.dtype.bytes() {
            model.checkpoint_bytes = None;
        }
        model.dtype = dtype;
    }
    if NOTES {
        notes.extend(dtype_note);
    }
    let checkpoint = m.quant_method.as_str();
    let flag = s.engine.quantization;
    let v = s.version;
    if let Some(f) = flag {
        if let Some((major, minor)) = first_release(f).filter(|(a, b)| !v.at_least(*a, *b)) {
            return Err(CalcError::new(
                Input::Quantization,
                format!("vLLM {v} has no {f} quantization method (it arrived in {major}.{minor}.0): \"Unknown quantization method: {f}.\""),
            ));
        }
        if let Some((major, minor)) = removed_in(f).filter(|(a, b)| v.at_least(*a, *b)) {
            return Err(CalcError::new(
                Input::Quantization,
                format!("vLLM {v} has no {f} quantization method (removed in {major}.{minor}.0; older releases have it: set vllm-version): \"Unknown quantization method: {f}.\""),
            ));
        }
    }
    // The method vLLM runs, and which input chose it.
    let (method, by) = match (flag, checkpoint) {
        (Some(f), "") => (f, Input::Quantization),
        (Some(f), c) => match accepted(c, f, m) {
            Accept::Same => (f, Input::Quantization),
            Accept::Kernel => {
                if NOTES { notes.push(format!("--quantization {f} loads the checkpoint's {c} weights with another of vLLM's kernels for them; the weights' bytes do not change.")); }
                (f, Input::Quantization)
            }
            Accept::Claimed => {
                if NOTES { notes.push(format!("--quantization {f} gives way to the checkpoint's {c}: vLLM's config class for it claims the checkpoint whatever the flag says, and the weights' bytes do not change.")); }
                (c, Input::Config)
            }
            Accept::Mismatch => {
                return Err(CalcError::new(Input::Quantization, format!(
                    "--quantization {f} does not match the checkpoint's quantization_config ({c}); vLLM stops: \"Quantization method specified in the model config ({c}) does not match the quantization method specified in the `quantization` argument ({f}).\" Leave --quantization out to load the checkpoint's own format."
                )))
            }
        },
        (None, "") => return Ok(()),
        (None, c) => (c, Input::Config),
    };
    let known = METHODS.contains(&method);
    let gpu = &s.gpu;
    if gpu.is_rocm() && known && !ROCM_METHODS.contains(&method) {
        return Err(CalcError::new(
            by,
            format!(
                "vLLM on ROCm refuses it: \"{method} quantization is currently not supported in {}.\"",
                gpu.name
            ),
        ));
    }
    let cc = gpu
        .compute_capability
        .0
        .saturating_mul(10)
        .saturating_add(gpu.compute_capability.1);
    let need = min_capability(method);
    // An unknown capability (0) is not checked.
    if known && !gpu.is_rocm() && cc > 0 && cc < need {
        return Err(CalcError::new(
            if by == Input::Config { Input::Gpu } else { by },
            format!(
                "vLLM refuses {method} on the {}: \"The quantization method {method} is not supported for the current GPU. Minimum capability: {need}. Current capability: {cc}.\"",
                gpu.name
            ),
        ));
    }
    if known && !act_dtypes(method).contains(&dtype) {
        let names: Vec<String> = act_dtypes(method).iter().map(|d| torch(*d)).collect();
        return Err(CalcError::new(
            if s.engine.dtype == Dtype::Auto { by } else { Input::Dtype },
            format!(
                "vLLM refuses {method} with {}: \"{} is not supported for quantization method {method}. Supported dtypes: [{}]\"",
                dtype.as_str(),
                torch(dtype),
                names.join(", ")
            ),
        ));
    }
    let Some(f) = flag.filter(|_| checkpoint.is_empty()) else {
        return Ok(());
    };
    let model = &mut t.get_or_insert_with(|| s.clone()).model;
    let (q, source) = match effect(f, v) {
        Effect::Online(q, what) => {
            if NOTES && q.experts_only() && m.moe.is_none() {
                notes.push(format!("--quantization {f} quantizes only routed experts, and this model has none: vLLM loads every weight at {}.", dtype.as_str()));
            } else if NOTES {
                notes.push(format!(
                    "--quantization {f}: vLLM quantizes this {} checkpoint as it loads it (online quantization): {what}. Embeddings, norms and the LM head stay {}. {}",
                    m.dtype.as_str(),
                    dtype.as_str(),
                    if v.at_least(0, 16) {
                        "It builds each layer in full precision and quantizes it before the next (layerwise loading), so the load holds about one unquantized layer more than the weights."
                    } else {
                        "This release loads the whole unquantized model before quantizing it, so the load needs the unquantized weights' memory (the load's transient line)."
                    }
                ));
            }
            (q, QuantSource::Online)
        }
        Effect::Checkpoint(q, what) => {
            if NOTES {
                let missing = if matches!(f, "awq" | "auto_awq" | "awq_marlin" | "gptq" | "auto_gptq" | "gptq_marlin") {
                    format!("\"Cannot find the config file for {f}\"")
                } else {
                    format!("no {f} quantization config")
                };
                notes.push(format!(
                    "--quantization {f}: vLLM loads {f} weights only from a {f} checkpoint (its config.json's quantization_config), and this config has none. The plan is that checkpoint of this model, in the usual format: {what} (assumed). Paste the quantized checkpoint's config.json for its own format and skip list. Given this unquantized checkpoint, vLLM stops while building its config, before loading: {missing}."
                ));
            }
            (q, QuantSource::Assumed)
        }
        Effect::Unsized(why) => {
            return Err(CalcError::new(
                Input::Quantization,
                format!("--quantization {f} on an unquantized config: Headroom cannot size it ({why}). Paste the quantized checkpoint's config.json instead."),
            ))
        }
    };
    model.quant = q;
    model.quant_source = source;
    model.quant_method = f.to_string();
    // The checkpoint's size was the unquantized one.
    model.checkpoint_bytes = None;
    Ok(())
}

/// What the weights' format means for their bytes, for the page's quantization field: the
/// checkpoint's own, or what `--quantization` does (online, an assumed checkpoint), with the
/// bytes per weight of the quantized linears.
pub fn describe(s: &Scenario) -> String {
    let m = &s.model;
    // The dtype vLLM runs (--dtype, or auto's pick for this GPU); a refused one leaves the
    // config's, and the plan says why.
    let dtype = resolve_dtype(s).map_or(m.dtype, |(d, _)| d);
    let per = |q: WeightQuant| {
        let (n, d) = q.bytes_per_weight(dtype);
        format!(
            "{:.3} bytes per weight, scales included",
            n as f64 / d.max(1) as f64
        )
    };
    match (s.engine.quantization, m.quant_method.as_str()) {
        (None, "") => format!(
            "Unquantized: {} weights, {} bytes each. An online method (fp8, fp8_per_tensor, fp8_per_block, mxfp8, mxfp4 ...) has vLLM quantize them as it loads; a checkpoint method (awq, gptq, compressed-tensors, modelopt_fp4 ...) plans that method's checkpoint of this model.",
            dtype.as_str(),
            dtype.bytes()
        ),
        (None, c) => format!(
            "The checkpoint's own: {c}, {} ({}); embeddings, norms and the LM head at {}.",
            m.quant.label(),
            per(m.quant),
            dtype.as_str()
        ),
        (Some(f), "") => match effect(f, s.version) {
            Effect::Online(q, what) => format!(
                "Online: vLLM quantizes this checkpoint as it loads it: {what} ({}).",
                per(q)
            ),
            Effect::Checkpoint(q, what) => format!(
                "An assumed {f} checkpoint of this model: {what} ({}). vLLM reads {f} weights only from such a checkpoint.",
                per(q)
            ),
            Effect::Unsized(why) => format!("Headroom cannot size {f} on an unquantized config: {why}."),
        },
        (Some(f), c) => format!(
            "The checkpoint is {c}: --quantization {f} must match it or be one of vLLM's overrides for it; the bytes are the checkpoint's ({}).",
            m.quant.label()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_vllm_spellings() {
        assert_eq!(Dtype::parse("half"), Ok(Dtype::Float16));
        assert_eq!(Dtype::parse("FLOAT"), Ok(Dtype::Float32));
        assert!(Dtype::parse("fp8").unwrap_err().contains("\"fp8\""));
        assert_eq!(parse_method("AWQ"), Ok(Some("awq")));
        assert_eq!(
            parse_method("compressed_tensors"),
            Ok(Some("compressed-tensors"))
        );
        assert_eq!(parse_method("none"), Ok(None));
        assert_eq!(parse_method("bitsandbytes"), Ok(Some("bitsandbytes")));
        let e = parse_method("int4").unwrap_err();
        assert!(
            e.contains("\"int4\"") && e.contains("fp8_per_tensor"),
            "{e}"
        );
    }

    #[test]
    fn flags_vllm_accepts_for_a_quantized_checkpoint() {
        let dense = super::super::model::Model::example_dense();
        let ok = |c: &str, f: &str| !matches!(accepted(c, f, &dense), Accept::Mismatch);
        assert!(ok("awq", "awq_marlin") && ok("gptq", "auto_gptq") && ok("modelopt", "fp8"));
        assert!(!ok("awq", "gptq") && !ok("fp8", "fp8_per_tensor"));
        assert!(
            !ok("gptq", "moe_wna16"),
            "moe_wna16 takes MoE checkpoints only"
        );
        assert!(!ok("compressed-tensors", "fp8") && !ok("mxfp4", "gpt_oss_mxfp4"));
    }
}
