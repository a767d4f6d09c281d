//! The one scenario builder: the inputs' texts, keyed by [`Field`], become a `calc::Scenario`.
//!
//! Every front door ends here: the page's form and link ([`super::query`]), `headroom plan` and
//! `headroom link` (the CLI maps its flags, and its speculative config's JSON, onto the same
//! inputs). A text is checked by its schema row when it enters a [`UrlState`]; what is left
//! for [`scenario`] is what only the combination shows (a gate term without a gate, a drafter
//! term without a drafter, an example's measurements that no longer apply).

use std::fmt;
use std::sync::OnceLock;

use crate::calc::input::Input as Field;
use crate::calc::scenario::{
    parse_attention_backend, KvCacheDtype, Measured, Scenario, SpecMethod, Speculative, StageTerm,
    Unified,
};
use crate::calc::units::Bytes;
use crate::calc::version::VllmVersion;
use crate::catalog;

use super::query::UrlState;
use super::schema::{model_row, unknown_gpu, unknown_model, Rule};
use super::values::{
    parse_bool, parse_byte_count, parse_bytes_list, parse_config, parse_count, parse_fraction,
    parse_max_len, parse_method, parse_partition, DEFAULT_GPU, DEFAULT_MODEL,
};

/// Why a state could not become a scenario: the field to flag and the message to show there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputError {
    pub field: Field,
    pub message: String,
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// The scenario of one seed example, built once per example: every plan of an example
/// scenario starts from it, and building it reads catalog rows.
pub(crate) fn example_scenario(id: &str) -> Option<&'static Scenario> {
    use catalog::examples::SCENARIOS;
    static BUILT: [OnceLock<Scenario>; SCENARIOS.len()] =
        [const { OnceLock::new() }; SCENARIOS.len()];
    let i = catalog::examples::position(id)?;
    Some(BUILT[i].get_or_init(SCENARIOS[i].1))
}

/// The base scenario of a state: the example's, else the chosen (or default) model on the
/// chosen (or default) GPU with vLLM's defaults.
fn base(state: &UrlState) -> Result<Scenario, InputError> {
    if let Some(id) = state.get(Field::Example) {
        if let Some(s) = example_scenario(id) {
            return Ok(s.clone());
        }
        return Err(InputError {
            field: Field::Example,
            message: format!(
                "example {} is not one of the seed examples",
                crate::calc::quoted(id)
            ),
        });
    }
    let model = catalog::model(DEFAULT_MODEL)
        .or_else(|| catalog::models().first())
        .map(|r| r.model.clone());
    let gpu = catalog::gpu(DEFAULT_GPU)
        .or_else(|| catalog::gpus().first())
        .map(|r| r.gpu.clone());
    match (model, gpu) {
        (Some(m), Some(g)) => Ok(Scenario::new(m, g)),
        _ => Err(InputError {
            field: Field::Model,
            message: "the catalog is empty".into(),
        }),
    }
}

/// A plan's error about a value an example set and no input gave names the example, so vLLM's
/// own words ("User-specified max_model_len (131072) ...") are not read as the user's doing:
/// `--example s3-synthetic-tp4 qwen3-8b` keeps the example's 131,072 tokens, which the smaller
/// model refuses.
pub fn attribute(state: &UrlState, e: crate::calc::CalcError) -> crate::calc::CalcError {
    let (Some(example), Some(input)) = (state.get(Field::Example), e.input()) else {
        return e;
    };
    if state.get(input).is_some() || matches!(input, Field::Model | Field::Config | Field::Gpu) {
        return e;
    }
    let message = format!(
        "{} ({} comes from the example {example}, not from an input; give {} to change it)",
        e.message(),
        input.flag(),
        input.flag()
    );
    crate::calc::CalcError::new(e.culprit(), message)
}

/// The scenario a state describes: the base scenario with every field the user set applied.
/// Texts in a `UrlState` are already valid, so the errors here are the ones only the
/// combination shows (an unknown id from a hand-built state, a bad config).
pub fn scenario(state: &UrlState) -> Result<Scenario, InputError> {
    let mut s = base(state)?;
    let fail = |field: Field, message: String| InputError { field, message };
    let measured = |field: Field, text: &str| -> Result<Measured, InputError> {
        let bytes =
            parse_byte_count(text).map_err(|e| fail(field, format!("{}: {e}", field.flag())))?;
        Ok(Measured::new(
            bytes,
            format!("given: --{} {text}", field.flag()),
        ))
    };
    // The gate's other terms tune a gate that only MemAvailable (or an example) turns on.
    let gated = s.unified.is_some() || state.get(Field::MemAvailable).is_some();
    for (field, text) in state.iter() {
        let err = |m: String| fail(field, m);
        if matches!(
            field,
            Field::Headroom | Field::Overhead | Field::GuardThreshold
        ) && !gated
        {
            return Err(err(format!(
                "{} belongs to the unified-memory gate; give mem-available to turn it on",
                field.flag()
            )));
        }
        match field {
            Field::Example | Field::Unit => {}
            Field::Step if state.get(Field::Example).is_none() => {
                return Err(err(
                    "step belongs to an example's walkthrough; give example".into(),
                ))
            }
            Field::Step => {}
            // A pasted config.json replaces the model (it comes after it): the name is only
            // checked then, so the program for a pasted config needs no other row.
            Field::Model if state.get(Field::Config).is_some() => {
                if !catalog::model_known(text) {
                    return Err(err(unknown_model(field, text)));
                }
            }
            Field::Model => {
                s.model = model_row(field, text).map_err(err)?.model.clone();
            }
            Field::Config => {
                s.model = parse_config(text).map_err(err)?;
                name_pasted(&mut s.model);
            }
            Field::Gpu => {
                let row = catalog::gpu(text).ok_or_else(|| err(unknown_gpu(text)))?;
                s.gpu = row.gpu.clone();
            }
            Field::Gpus => s.gpus = count(field, text)? as u32,
            Field::Tp => s.parallel.tp = count(field, text)? as u32,
            Field::Pp => s.parallel.pp = count(field, text)? as u32,
            Field::Dp => s.parallel.dp = count(field, text)? as u32,
            Field::PpPartition => {
                s.parallel.pp_layer_partition = Some(parse_partition(text).map_err(err)?)
            }
            Field::Quantization => {
                s.engine.quantization =
                    crate::calc::weight_format::parse_method(text).map_err(err)?
            }
            Field::Dtype => {
                s.engine.dtype = crate::calc::weight_format::Dtype::parse(text).map_err(err)?
            }
            Field::Ep => s.parallel.expert_parallel = parse_bool(text).map_err(err)?,
            Field::Util => {
                s.engine.gpu_memory_utilization = Some(parse_fraction(text).map_err(err)?)
            }
            Field::KvBytes => {
                s.engine.kv_cache_memory_bytes = Some(parse_byte_count(text).map_err(err)?)
            }
            Field::MaxModelLen => s.engine.max_model_len = parse_max_len(text).map_err(err)?,
            Field::MaxNumSeqs => s.engine.max_num_seqs = Some(count(field, text)?),
            Field::MaxNumBatchedTokens => {
                s.engine.max_num_batched_tokens = Some(count(field, text)?)
            }
            Field::KvDtype => s.engine.kv_cache_dtype = KvCacheDtype::parse(text).map_err(err)?,
            Field::BlockSize => s.engine.block_size = Some(count(field, text)?),
            Field::Eager => s.engine.enforce_eager = parse_bool(text).map_err(err)?,
            Field::NumGpuBlocksOverride => {
                s.engine.num_gpu_blocks_override = Some(count(field, text)?)
            }
            Field::Spec => match parse_method(text).map_err(err)? {
                None => s.engine.speculative = None,
                Some(method) => {
                    let old = s.engine.speculative.take();
                    s.engine.speculative = Some(Speculative {
                        draft_model: None,
                        num_speculative_tokens: old
                            .as_ref()
                            .map_or(1, |o| o.num_speculative_tokens),
                        // An example's drafter brings its count; otherwise 1 stands in
                        // until spec-tokens gives one (the plan notes it).
                        count_assumed: old.as_ref().map_or(true, |o| o.count_assumed),
                        // An example's drafter measurement belongs to its method: another
                        // method's drafter is estimated (or given with drafter-weights).
                        // (every MTP name builds the same drafter: vLLM reads them as mtp).
                        drafter_weights: old
                            .filter(|o| {
                                o.method == method || (o.method.is_mtp() && method.is_mtp())
                            })
                            .and_then(|o| o.drafter_weights),
                        method,
                    });
                }
            },
            // Applied after the loop, once the method (or the GPU, or the model) is known.
            Field::SpecTokens
            | Field::Drafter
            | Field::DraftModel
            | Field::GpuMemory
            | Field::CheckpointBytes => {}
            Field::NoHybrid => {
                s.engine.disable_hybrid_kv_cache_manager = parse_bool(text).map_err(err)?
            }
            Field::NoAsync => s.engine.no_async_scheduling = parse_bool(text).map_err(err)?,
            Field::AttnBackend => {
                s.engine.attention_backend = parse_attention_backend(text).map_err(err)?
            }
            Field::Vllm => s.version = VllmVersion::parse(text).map_err(err)?,
            Field::Weights => s
                .runtime
                .set_per_stage(StageTerm::Weights, measured_list(field, text)?),
            Field::Activation => s.runtime.activation_peak = Some(measured(field, text)?),
            Field::NonTorch => s.runtime.non_torch = Some(measured(field, text)?),
            Field::CudaGraph => s.runtime.cuda_graph = Some(measured(field, text)?),
            Field::LoadPeak => s.runtime.load_peak = Some(measured(field, text)?),
            Field::Free => s.runtime.free_memory = Some(measured(field, text)?),
            Field::AvailableKv => s
                .runtime
                .set_per_stage(StageTerm::AvailableKv, measured_list(field, text)?),
            Field::Tenants => s.runtime.other_tenants = Bytes(parse_byte_count(text).map_err(err)?),
            Field::MemAvailable => {
                s.unified.get_or_insert_with(Unified::default).mem_available =
                    measured(field, text)?
            }
            Field::Headroom => {
                s.unified.get_or_insert_with(Unified::default).headroom =
                    Bytes(parse_byte_count(text).map_err(err)?)
            }
            Field::Overhead => {
                s.unified.get_or_insert_with(Unified::default).overhead =
                    Some(measured(field, text)?)
            }
            Field::GuardThreshold => {
                s.unified
                    .get_or_insert_with(Unified::default)
                    .guard_threshold = Bytes(parse_byte_count(text).map_err(err)?)
            }
            Field::AvgLen => s.average_request_len = Some(count(field, text)?),
        }
    }
    if let Some(text) = state.get(Field::CheckpointBytes) {
        let b = super::values::parse_checkpoint_bytes(text)
            .map_err(|e| fail(Field::CheckpointBytes, e))?;
        s.model.checkpoint_bytes = Some(b);
    }
    // The drafter's terms need a drafter (the CLI refuses them the same way).
    let no_drafter = |field: Field| {
        fail(
            field,
            format!(
                "{} belongs to speculative decoding; choose a method in spec (speculative-config) first",
                field.flag()
            ),
        )
    };
    if let Some(text) = state.get(Field::SpecTokens) {
        let n = count(Field::SpecTokens, text)? as u32;
        let spec = s
            .engine
            .speculative
            .as_mut()
            .ok_or_else(|| no_drafter(Field::SpecTokens))?;
        spec.num_speculative_tokens = n;
        spec.count_assumed = false;
    }
    if let Some(text) = state.get(Field::Drafter) {
        let m = measured(Field::Drafter, text)?;
        let spec = s
            .engine
            .speculative
            .as_mut()
            .ok_or_else(|| no_drafter(Field::Drafter))?;
        spec.drafter_weights = Some(m);
    }
    if let Some(text) = state.get(Field::DraftModel) {
        let row = model_row(Field::DraftModel, text).map_err(|e| fail(Field::DraftModel, e))?;
        let spec = s
            .engine
            .speculative
            .as_mut()
            .filter(|sp| sp.method == SpecMethod::DraftModel)
            .ok_or_else(|| {
                fail(
                    Field::DraftModel,
                    "draft-model names the drafter of the draft_model method; choose draft_model in spec (speculative-config) first".into(),
                )
            })?;
        spec.draft_model = Some(Box::new(row.model.clone()));
    }
    if let Some(text) = state.get(Field::GpuMemory) {
        let total = parse_byte_count(text).map_err(|e| fail(Field::GpuMemory, e))?;
        let alone = state.get(Field::Gpu).is_none() && state.get(Field::Example).is_none();
        catalog::set_gpu_total(&mut s.gpu, total, alone);
    }
    // An example's measurements give way to the user's changes (the CLI applies the same rule).
    if state.get(Field::Example).is_some() {
        let example = base(state)?;
        let typed = |flag: &str| Field::from_flag(flag).is_some_and(|f| state.get(f).is_some());
        catalog::examples::give_way(&mut s, &example, typed).map_err(|(flag, message)| {
            fail(Field::from_flag(flag).unwrap_or(Field::Example), message)
        })?;
    }
    // Without `gpus`, the deployment has exactly the GPUs its layout uses.
    if state.get(Field::Gpus).is_none() && state.get(Field::Example).is_none() {
        s.gpus = s
            .parallel
            .tp
            .saturating_mul(s.parallel.pp)
            .saturating_mul(s.parallel.dp);
    }
    Ok(s)
}

fn count(field: Field, text: &str) -> Result<u64, InputError> {
    // count() is only called for count fields; another rule has no bound to give.
    let Rule::Count { min, max } = field.rule() else {
        return Err(InputError {
            field,
            message: format!("{}: not a count", field.flag()),
        });
    };
    parse_count(text, min, max).map_err(|e| InputError {
        field,
        message: format!("{}: {e}", field.flag()),
    })
}

fn measured_list(field: Field, text: &str) -> Result<Vec<Option<Measured>>, InputError> {
    let values = parse_bytes_list(text).map_err(|e| InputError {
        field,
        message: format!("{}: {e}", field.flag()),
    })?;
    Ok(values
        .into_iter()
        .map(|b| b.map(|b| Measured::new(b, format!("given: --{} {text}", field.flag()))))
        .collect())
}

/// A pasted config.json without `_name_or_path` is named by its `model_type` or architecture
/// ("llama"): the page says what it is instead, by the catalog row of the same shape, else by
/// its architecture and size ("llama, shaped like Llama 3.1 8B Instruct"; "LlamaForCausalLM,
/// 40 layers, hidden 5120"). Of two rows of one shape it takes the one quantized as the config
/// is, else the unquantized one: a bf16 or AWQ Qwen3 32B config is shaped like Qwen3 32B, an
/// FP8 one like Qwen3 32B FP8.
fn name_pasted(m: &mut crate::calc::model::Model) {
    if m.name.contains('/') || m.name.contains(' ') {
        return;
    }
    let same = |c: &&catalog::Shape| {
        c.architecture == m.architecture
            && c.n_layers == m.n_layers
            && c.hidden_size == m.hidden_size
            && c.n_heads == m.n_heads
            && c.n_kv_heads == m.n_kv_heads
            && c.intermediate_size == m.intermediate_size
            && c.vocab_size == m.vocab_size
    };
    // Of the rows of this shape, the first quantized as the config is, else the first
    // unquantized one (the shape's base model), else the first.
    let row = catalog::shapes().iter().filter(same).min_by_key(|c| {
        if c.quant_method == m.quant_method {
            0
        } else if c.quant_method.is_empty() {
            1
        } else {
            2
        }
    });
    let name = match row {
        Some(r) => format!("{}, shaped like {}", m.name, r.name),
        None if m.name == m.architecture || m.architecture.is_empty() => format!(
            "{}, {} layers, hidden {}",
            m.name, m.n_layers, m.hidden_size
        ),
        None => format!(
            "{} ({}, {} layers, hidden {})",
            m.name, m.architecture, m.n_layers, m.hidden_size
        ),
    };
    m.name = name;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calc::scenario::MaxLen;
    use crate::input::query::{decode, encode};

    #[test]
    fn states_become_scenarios() {
        let mut st = UrlState::default();
        st.set(Field::Tp, "2").unwrap();
        st.set(Field::Util, "0.85").unwrap();
        st.set(Field::Weights, "51.64GiB,53.76GiB,52.86GiB")
            .unwrap();
        st.set(Field::KvBytes, "10e9").unwrap();
        st.set(Field::MaxModelLen, "8k").unwrap();
        st.set(Field::Spec, "mtp").unwrap();
        st.set(Field::SpecTokens, "2").unwrap();
        st.set(Field::Drafter, "5.06GiB").unwrap();
        st.set(Field::MemAvailable, "114.5GiB").unwrap();
        let s = scenario(&st).expect("catalog default model and gpu");
        assert_eq!(s.parallel.tp, 2);
        assert_eq!(s.gpus, 2);
        assert_eq!(s.engine.gpu_memory_utilization, Some(0.85));
        assert_eq!(s.engine.kv_cache_memory_bytes, Some(10_000_000_000));
        assert_eq!(s.engine.max_model_len, MaxLen::Value(8_000));
        assert_eq!(s.runtime.weights_per_stage.as_ref().map(Vec::len), Some(3));
        let spec = s.engine.speculative.as_ref().unwrap();
        assert_eq!(
            (spec.method.as_str(), spec.num_speculative_tokens),
            ("mtp", 2)
        );
        assert!(spec.drafter_weights.is_some());
        assert!(s.unified.is_some());
    }

    #[test]
    fn the_gate_belongs_to_unified_memory() {
        // Headroom or overhead alone would gate the start on a MemAvailable of 0.
        let mut st = UrlState::default();
        st.set(Field::Headroom, "4GiB").unwrap();
        let e = scenario(&st).unwrap_err();
        assert_eq!(e.field, Field::Headroom);
        assert!(e.message.contains("give mem-available"), "{}", e.message);
        st.set(Field::MemAvailable, "60GiB").unwrap();
        // On a GPU with memory of its own, plan refuses the gate by name ...
        let s = scenario(&st).unwrap();
        let e = crate::calc::plan(&s).unwrap_err();
        assert_eq!(e.field(), "mem-available");
        assert!(e.message().contains("memory of its own"), "{}", e.message());
        // ... and on a unified-memory GPU it plans it.
        st.set(Field::Gpu, "gb10-128gb").unwrap();
        let p = crate::calc::plan(&scenario(&st).unwrap()).unwrap();
        assert!(p.unified.is_some());
        // An example that carries the gate takes its terms without mem-available.
        let mut st = UrlState::default();
        st.set(Field::Example, "s2-unified-gate").unwrap();
        st.set(Field::Headroom, "4GiB").unwrap();
        assert_eq!(scenario(&st).unwrap().unified.unwrap().headroom.0, 4 << 30);
    }

    #[test]
    fn every_example_is_a_url() {
        for e in catalog::examples::examples() {
            let mut st = UrlState::default();
            st.set(Field::Example, e.id).unwrap();
            assert_eq!(encode(&st), format!("v=1&example={}", e.id));
            assert_eq!(scenario(&decode(&encode(&st)).state).unwrap(), e.scenario);
        }
    }

    #[test]
    #[cfg_attr(
        all(feature = "catalog-compiled", not(feature = "config-reader")),
        ignore = "a pasted config.json: a build without config-reader leaves it unplanned"
    )]
    fn custom_config_travels_in_the_url() {
        let config = r#"{"architectures":["LlamaForCausalLM"],"hidden_size":4096,"intermediate_size":14336,"num_attention_heads":32,"num_hidden_layers":32,"num_key_value_heads":8,"vocab_size":128256,"max_position_embeddings":131072,"torch_dtype":"bfloat16","tie_word_embeddings":false,"model_type":"llama"}"#;
        let mut st = UrlState::default();
        st.set(Field::Config, config).unwrap();
        st.set(Field::Model, &catalog::models()[0].id).unwrap();
        let q = encode(&st);
        assert!(q.contains("config=eyJ"));
        let d = decode(&q);
        assert_eq!(d.state, st);
        assert_eq!(d.ignored, vec![]);
        // The config names the model; the catalog id beside it is only remembered.
        assert_eq!(scenario(&d.state).unwrap().model.n_layers, 32);
    }

    /// Qwen3 32B and its FP8 checkpoint have one shape; a pasted config is named after the row
    /// quantized as it is (the FP8 row comes first in the catalog's order).
    #[test]
    #[cfg_attr(
        all(feature = "catalog-compiled", not(feature = "config-reader")),
        ignore = "a pasted config.json: a build without config-reader leaves it unplanned"
    )]
    fn a_pasted_config_is_named_after_the_row_quantized_as_it_is() {
        let config = |row: &str| {
            let v: serde_json::Value = serde_json::from_str(row).unwrap();
            v["config"].to_string()
        };
        let named = |text: &str| {
            let mut st = UrlState::default();
            st.set(Field::Config, text).unwrap();
            scenario(&st).unwrap().model.name
        };
        let bf16 = config(include_str!("../../catalog/models/qwen3-32b.json"));
        let fp8 = config(include_str!("../../catalog/models/qwen3-32b-fp8.json"));
        assert_eq!(named(&bf16), "qwen3, shaped like Qwen3 32B");
        assert_eq!(named(&fp8), "qwen3, shaped like Qwen3 32B FP8");
        // Quantized another way than either row: the unquantized row of the shape.
        let other = fp8.replace(r#""quant_method":"fp8""#, r#""quant_method":"fbgemm_fp8""#);
        assert_ne!(other, fp8);
        assert_eq!(named(&other), "qwen3, shaped like Qwen3 32B");
    }
}
