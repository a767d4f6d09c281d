//! The settings a worker starts with, resolved from the scenario as vLLM resolves them before
//! its workers start: the utilization in force, `--max-model-len`, the batch defaults, the tokens
//! in flight, the layer partition and the block size (forced for MLA before 0.18, raised for
//! hybrid models), with the checks vLLM makes on them.

use super::checks::warm_up_after_pool;
use super::layers::hybrid_block_size;
use super::notes::sparse_mla_note;
use super::validate;
use std::borrow::Cow;

use crate::calc::kv::MaxModelLen;
use crate::calc::model::LayerKind;
use crate::calc::plan::{Origin, Setting, Settings};
use crate::calc::runtime::{self, V4Attention};
use crate::calc::scenario::{AttentionBackend, MaxLen, Scenario, SpecMethod};
use crate::calc::units::plural;
use crate::calc::{pp_partition, CalcError, Input};

/// A block size vLLM's platform forces for an MLA backend (before 0.18), and its log line.
pub(super) type ForcedBlock = Option<(u64, &'static str)>;

/// What the planner resolved before the first rank is planned; every later phase reads it.
pub(super) struct Resolved {
    /// `--gpu-memory-utilization`, or the release's default.
    pub(super) util: f64,
    pub(super) max_len: MaxModelLen,
    /// The length the batch defaults and the estimates read (`auto` reads the model's).
    pub(super) len_for_defaults: u64,
    /// `--max-num-batched-tokens`, given or defaulted by GPU.
    pub(super) mnbt: u64,
    /// `--max-num-seqs`, given or defaulted by GPU.
    pub(super) mns: u64,
    /// Whose batch defaults these are (by GPU and release).
    pub(super) batch_basis: &'static str,
    /// `max_concurrent_batches x max-num-batched-tokens` (v0.26+).
    pub(super) in_flight: u64,
    pub(super) num_spec: u64,
    pub(super) extra_retained_tokens: u64,
    /// The decoder layers of each pipeline stage.
    pub(super) parts: Vec<u32>,
    pub(super) block_size: u64,
    /// The block size before a hybrid model's raise: the one the sparse MLA and DeepSeek-V4
    /// checks read.
    pub(super) requested_block: u64,
    /// Where the block size came from, in words.
    pub(super) block_basis: String,
    /// Before 0.18 the platform's forced MLA block and its log line.
    pub(super) forced_block: ForcedBlock,
    /// A hybrid model's block raised to fit its state page.
    pub(super) hybrid_raised: bool,
    /// DeepSeek-V4's attention class, decided once: the checks, the pages and the log read it.
    pub(super) v4: Option<V4Attention>,
}

/// The settings alone, as vLLM settles them, with no refusal and no note: what `resolve`
/// checks, and what `calc::settings` shows for a scenario the planner refuses. `parts` is left
/// empty (`resolve` fills it from the checked partition); `checked` says the scenario passed
/// `validate`, without which the hybrid block size (which reads the layer shapes) is not
/// raised.
pub(super) fn settle(s: &Scenario, checked: bool) -> Resolved {
    let v = s.version;
    let m = &s.model;
    let default_len = m.default_max_model_len();
    let max_len = match s.engine.max_model_len {
        MaxLen::ModelDefault => MaxModelLen::Value(default_len),
        MaxLen::Value(n) => MaxModelLen::Value(n),
        MaxLen::Auto => MaxModelLen::Auto { upper: default_len },
    };
    let len_for_defaults = runtime::batch_defaults_len(s);
    let (mnbt, mns, batch_basis) = runtime::batch_defaults(s, len_for_defaults);
    let in_flight = runtime::in_flight_tokens(
        v,
        s.parallel.pp,
        mnbt,
        runtime::async_scheduling(s),
        runtime::runner_v2(s),
    );
    let num_spec = s
        .engine
        .speculative
        .as_ref()
        .map_or(0, |sp| u64::from(sp.num_speculative_tokens));
    // Multi-module MTP (`use_multi_module_mtp`: more than one MTP layer and speculative token)
    // reads num_speculative_tokens ahead mid-prefill, so every sliding window keeps that many
    // tokens less one beyond its trailing edge (kv_cache_planning.py, vLLM 0.33.0).
    let speculative = s.engine.speculative.as_ref();
    let extra_retained_tokens = match speculative.map(|sp| (sp.method, sp.num_speculative_tokens)) {
        Some((SpecMethod::Mtp(_), n)) if m.mtp_layers.max(1).min(n) > 1 => num_spec - 1,
        // One MTP module or one token, or not MTP: nothing is read ahead.
        None
        | Some((
            SpecMethod::Mtp(_)
            | SpecMethod::Dspark
            | SpecMethod::Eagle
            | SpecMethod::Eagle3
            | SpecMethod::DraftModel
            | SpecMethod::Ngram,
            _,
        )) => 0,
    };
    let (mut block_size, mut block_basis, forced_block) = initial_block_size(s);
    let requested_block = block_size;
    // DeepSeek-V4's attention class, decided once: the checks, the pages and the log read it.
    let v4 = m.compressed.as_ref().map(|_| runtime::v4_attention(s));
    let mut hybrid_raised = false;
    if checked {
        if let Some((b, why)) = hybrid_block_size(s, u64::from(s.parallel.tp), num_spec, block_size)
        {
            block_size = b;
            block_basis = why;
            hybrid_raised = true;
        }
    }
    Resolved {
        util: s.gpu_memory_utilization(),
        max_len,
        len_for_defaults,
        mnbt,
        mns,
        batch_basis,
        in_flight,
        num_spec,
        extra_retained_tokens,
        parts: Vec::new(),
        block_size,
        requested_block,
        block_basis,
        forced_block,
        hybrid_raised,
        v4,
    }
}

/// The settings `settle` gives, checked as vLLM checks them before its workers start, with the
/// notes they call for; the layer partition filled in. The scenario has passed `validate`.
pub(super) fn resolve(s: &Scenario, notes: &mut Vec<String>) -> Result<Resolved, CalcError> {
    let mut r = settle(s, true);
    check_max_model_len(s, notes)?;
    let (mnbt, mns) = (r.mnbt, r.mns);
    // SchedulerConfig.verify_max_model_len: the defaults keep max_num_seqs <= the batched
    // tokens; given values that break it stop the engine before it starts.
    if mnbt < mns {
        return Err(CalcError::new(
            batch_culprit(s),
            format!("max_num_batched_tokens ({mnbt}) must be greater than or equal to max_num_seqs ({mns})."),
        ));
    }
    r.parts = partition(s)?;
    if r.parts.contains(&0) && super::NOTES {
        notes.push("A pipeline stage has no decoder layers; it still holds its share of the embedding or head.".into());
    }
    check_block_size(s)?;
    let m = &s.model;
    if let Some(sp) = m.sparse_mla {
        validate::sparse_mla(s, r.requested_block)?;
        if m.measured_kv.is_none() && super::NOTES {
            notes.push(sparse_mla_note(
                s,
                sp,
                r.len_for_defaults,
                mns,
                mnbt,
                r.num_spec,
            ));
        }
    }
    if let (Some(c), Some(attn)) = (&m.compressed, &r.v4) {
        validate::v4(s, c, attn, &r.parts, r.requested_block, notes)?;
    }
    if r.hybrid_raised && super::NOTES {
        notes.push(format!(
            "Block size {} tokens: {}.",
            r.block_size, r.block_basis
        ));
    }
    Ok(r)
}

/// Which of the two batch settings to name when the batched tokens fall below the sequences:
/// the one given, or, with both given (an example sets one, the user the other), the one
/// further from its default in the direction that breaks the rule (tokens lowered, sequences
/// raised). `--max-num-batched-tokens 1` on an example with 8 sequences names the tokens.
// Never inlined: no link the first verdict is trained on calls it (DESIGN.md, "Rare code").
#[inline(never)]
fn batch_culprit(s: &Scenario) -> Input {
    match (s.engine.max_num_batched_tokens, s.engine.max_num_seqs) {
        (Some(_), None) => Input::MaxNumBatchedTokens,
        (None, _) => Input::MaxNumSeqs,
        (Some(mnbt), Some(mns)) => {
            let mut defaults = s.clone();
            defaults.engine.max_num_batched_tokens = None;
            defaults.engine.max_num_seqs = None;
            let (d_mnbt, d_mns, _) =
                runtime::batch_defaults(&defaults, runtime::batch_defaults_len(s));
            // Lowered by d_mnbt / mnbt against raised by mns / d_mns, compared without division.
            if u128::from(d_mnbt) * u128::from(d_mns) >= u128::from(mnbt.max(1)) * u128::from(mns)
                && mnbt < d_mnbt
            {
                Input::MaxNumBatchedTokens
            } else {
                Input::MaxNumSeqs
            }
        }
    }
}

/// `--max-model-len`'s refusals and notes: vLLM refuses a length past the model's derived one,
/// and `auto` before 0.14.
fn check_max_model_len(s: &Scenario, notes: &mut Vec<String>) -> Result<(), CalcError> {
    let v = s.version;
    let m = &s.model;
    let derived = m.max_position_embeddings.max(1);
    // LongRoPE defaults to its original length (better quality on shorter sequences).
    let default_len = m.default_max_model_len();
    if m.longrope_default.is_some()
        && s.engine.max_model_len == MaxLen::ModelDefault
        && super::NOTES
    {
        notes.push(format!(
            "LongRoPE: vLLM defaults max-model-len to original_max_position_embeddings ({default_len}), not the derived {derived}; give --max-model-len for longer requests."
        ));
    }
    if m.max_len_key.starts_with("none")
        && !matches!(s.engine.max_model_len, MaxLen::Value(_))
        && super::NOTES
    {
        notes.push("The config gives no context length (max_position_embeddings or another length key): vLLM assumes 2048.".into());
    }
    match s.engine.max_model_len {
        MaxLen::ModelDefault => {}
        // With no length key in the config, vLLM takes the length given as it is.
        MaxLen::Value(n) if n > derived && !m.max_len_key.starts_with("none") => {
            return Err(CalcError::new(
                Input::MaxModelLen,
                format!(
                    "User-specified max_model_len ({n}) is greater than the derived max_model_len ({} in model's config.json). vLLM refuses it unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1.",
                    m.max_len_key
                ),
            ));
        }
        MaxLen::Value(_) => {}
        MaxLen::Auto if !v.at_least(0, 14) => {
            return Err(CalcError::new(
                Input::MaxModelLen,
                format!("max-model-len auto needs vLLM 0.14 or newer: vLLM {v} has no auto-fit (-1 and auto arrived with _auto_fit_max_model_len in 0.14.0)"),
            ));
        }
        MaxLen::Auto => {}
    }
    Ok(())
}

/// The layers of each pipeline stage, with vLLM's words for a bad partition and how far off a
/// list of the right length is.
fn partition(s: &Scenario) -> Result<Vec<u32>, CalcError> {
    let pp = s.parallel.pp;
    let m = &s.model;
    let parts = pp_partition(m.n_layers, pp, s.parallel.pp_layer_partition.as_deref())
        .map_err(|e| bad_partition(s, &e))?;
    stages_hold_a_cache(s, &parts)?;
    Ok(parts)
}

/// vLLM's words for a partition it refuses (`e`), then how far off a list of the right length is.
// Never inlined: no link the first verdict is trained on calls it (DESIGN.md, "Rare code").
#[inline(never)]
fn bad_partition(s: &Scenario, e: &str) -> CalcError {
    let pp = s.parallel.pp;
    let m = &s.model;
    let sum = s
        .parallel
        .pp_layer_partition
        .as_deref()
        .filter(|l| l.len() == pp as usize)
        .map(|l| l.iter().map(|n| u64::from(*n)).sum::<u64>());
    let n = u64::from(m.n_layers);
    match sum {
        Some(sum) if sum != n => {
            let (off, way) = if sum > n {
                (sum - n, "too many")
            } else {
                (n - sum, "short")
            };
            CalcError::new(
                Input::PpPartition,
                format!(
                    "pp-layer-partition (VLLM_PP_LAYER_PARTITION): {e} That is {off} {} {way}.",
                    plural(off, "layer", "layers")
                ),
            )
        }
        _ => CalcError::new(
            Input::PpPartition,
            format!("pp-layer-partition (VLLM_PP_LAYER_PARTITION): {e}"),
        ),
    }
}

/// Every stage holds a layer with a KV cache or state, where the model has one: vLLM 0.33
/// projects the model's KV groups onto each stage (`_project_kv_cache_groups_to_worker`) and
/// divides the stage's memory by the bytes of one block of them (`get_kv_cache_configs`); on a
/// stage of only attention-free layers (Nemotron-H's MLP and MoE layers, a NAS layer whose
/// attention is a no-op) those groups hold no layer and a block no bytes.
fn stages_hold_a_cache(s: &Scenario, parts: &[u32]) -> Result<(), CalcError> {
    use crate::calc::model::LayerKind;
    let empty = |l: &LayerKind| matches!(l, LayerKind::NoCache | LayerKind::SharedKv);
    let layers = &s.model.layers;
    if parts.len() < 2 || layers.iter().all(empty) {
        return Ok(());
    }
    let mut start = 0usize;
    for (stage, n) in parts.iter().enumerate() {
        let end = (start + *n as usize).min(layers.len());
        if start < end && layers[start..end].iter().all(empty) {
            let by_list = s.parallel.pp_layer_partition.is_some();
            return Err(CalcError::new(
                if by_list { Input::PpPartition } else { Input::Pp },
                format!(
                    "stage {stage} (layers {start}–{}) holds no layer with a KV cache or state: they are all attention-free, so vLLM's KV groups hold none of this stage's layers and a block of them no bytes, which get_kv_cache_configs divides the stage's memory by. Give the stage an attention or Mamba layer{}.",
                    end - 1,
                    if by_list {
                        " (pp-layer-partition)"
                    } else {
                        " with pp-layer-partition, or another pipeline-parallel-size"
                    }
                ),
            ));
        }
        start = end;
    }
    Ok(())
}

/// Block size: the user's, else the backend's; hybrid models raise it later to fit a state
/// page. Returns the size, its basis and the platform's forced MLA block (before 0.18).
fn initial_block_size(s: &Scenario) -> (u64, String, ForcedBlock) {
    let v = s.version;
    let (mut block_size, mut block_basis) = match s.engine.block_size {
        Some(b) => (b, format!("--block-size {b}")),
        None => runtime::default_block_size(s),
    };
    // Before 0.18 the platform forces an MLA model's block for its backend, a given one too.
    let forced_block = runtime::forced_mla_block(s, block_size);
    if let Some((b, line)) = forced_block {
        block_basis = format!("{block_basis}, forced to {b} by vLLM {v} (\"{line}\")");
        block_size = b;
    }
    (block_size, block_basis, forced_block)
}

/// Every CUDA attention backend declares kernel blocks of a multiple of 16 (v0.18+, when
/// backends choose and check block sizes); DeepSeek-V3.2 and V4 check stricter sizes in
/// `validate`, and hybrid models have their block raised to an aligned size.
fn check_block_size(s: &Scenario) -> Result<(), CalcError> {
    let v = s.version;
    let m = &s.model;
    let hybrid = m
        .layers
        .iter()
        .any(|l| matches!(l, LayerKind::GatedDeltaNet | LayerKind::Mamba2));
    if let Some(b) = s.engine.block_size.filter(|b| b % 16 != 0) {
        if v.at_least(0, 18)
            && !s.gpu.is_rocm()
            && m.sparse_mla.is_none()
            && m.compressed.is_none()
            && !hybrid
        {
            return Err(CalcError::new(
                Input::BlockSize,
                format!("--block-size {b}: every CUDA attention backend in vLLM 0.33.0 takes blocks of a multiple of 16 (FLASH_ATTN and TRITON_ATTN any multiple, FLASHINFER 16, 32 or 64, the MLA backends 16, 32, 64 or 128), so vLLM finds no valid backend (\"block_size not supported\"); use a multiple of 16"),
            ));
        }
    }
    Ok(())
}

impl Resolved {
    /// The settings as the Plan carries them, with where each came from. Takes the block
    /// size's basis (already written for the notes) rather than a copy of it.
    pub(super) fn settings(&mut self, s: &Scenario) -> Settings {
        let v = s.version;
        let given = |b: &'static str| Cow::Borrowed(b);
        let default_utilization = v.default_utilization();
        let gpu_memory_utilization = Setting {
            value: self.util,
            origin: origin(s.engine.gpu_memory_utilization.is_some()),
            basis: match s.engine.gpu_memory_utilization {
                Some(_) => given("--gpu-memory-utilization"),
                None if v.at_least(0, 20) => given("vLLM's default from 0.20"),
                None => given("vLLM's default before 0.20"),
            },
        };
        let batch = |user: Option<u64>, value: u64, flag: &'static str| Setting {
            value,
            origin: origin(user.is_some()),
            basis: given(if user.is_some() {
                flag
            } else {
                self.batch_basis
            }),
        };
        let max_num_seqs = batch(s.engine.max_num_seqs, self.mns, "--max-num-seqs");
        let max_num_batched_tokens = batch(
            s.engine.max_num_batched_tokens,
            self.mnbt,
            "--max-num-batched-tokens",
        );
        let max_model_len = Setting {
            value: self.len_for_defaults,
            origin: origin(matches!(s.engine.max_model_len, MaxLen::Value(_))),
            basis: given(match s.engine.max_model_len {
                MaxLen::Value(_) => "--max-model-len",
                MaxLen::ModelDefault => "the model's own length",
                MaxLen::Auto => "auto: the model's own length bounds the fit",
            }),
        };
        let block_origin = if self.forced_block.is_some() || self.hybrid_raised {
            Origin::Adjusted
        } else {
            origin(s.engine.block_size.is_some())
        };
        let block_size = Setting {
            value: self.block_size,
            origin: block_origin,
            basis: Cow::Owned(std::mem::take(&mut self.block_basis)),
        };
        Settings {
            gpu_memory_utilization,
            default_utilization,
            max_num_seqs,
            max_num_batched_tokens,
            max_model_len,
            block_size,
            attention_backend: self.attention_backend(s),
            in_flight_tokens: self.in_flight,
            num_speculative_tokens: s.engine.speculative.as_ref().map(|sp| Setting {
                value: self.num_spec,
                origin: if sp.count_assumed {
                    Origin::Assumed
                } else {
                    Origin::Given
                },
                basis: given(if sp.count_assumed {
                    "not given: Headroom plans 1 (vLLM has no default)"
                } else {
                    "num_speculative_tokens"
                }),
            }),
            warm_up_after_pool: warm_up_after_pool(s),
        }
    }

    /// The backend the plan reads: the one selected, DeepSeek-V4's class, or DeepSeek-V3.2's
    /// sparse MLA backend.
    fn attention_backend(&self, s: &Scenario) -> Option<Setting<AttentionBackend>> {
        let default = |value: AttentionBackend, basis: &'static str| Setting {
            value,
            origin: Origin::Default,
            basis: Cow::Borrowed(basis),
        };
        if let Some(b) = s.engine.attention_backend {
            return Some(Setting {
                value: b,
                origin: Origin::Given,
                basis: Cow::Borrowed("--attention-backend"),
            });
        }
        if let Some(a) = &self.v4 {
            return Some(default(
                a.backend,
                "DeepSeek-V4's attention class: FlashInfer on SM 12.x, else FlashMLA",
            ));
        }
        if s.model.sparse_mla.is_some() {
            return runtime::sparse_mla_backend(s).name.map(|n| {
                default(
                    n,
                    "DeepSeek-V3.2's sparse MLA backend for this GPU and KV cache dtype",
                )
            });
        }
        None
    }
}

/// Given when the user set it, else vLLM's default.
fn origin(given: bool) -> Origin {
    if given {
        Origin::Given
    } else {
        Origin::Default
    }
}
