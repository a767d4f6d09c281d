//! The speculative drafter as vLLM builds it: MTP, EAGLE and DSpark layers on the last stage, a
//! separate draft model loaded whole on every last-stage rank, and the checks vLLM makes first.

use crate::calc::model::{Model, MtpDraft};
use crate::calc::scenario::{Scenario, SpecMethod};
use crate::calc::weights::{self, Placement};
use crate::calc::{CalcError, Input};

/// DSpark's heads: the target layers it reads, its Markov rank, its head_dim.
pub(super) type DsparkHeads = (u32, u64, u64);

/// The drafter the last stage builds.
pub(super) struct Drafter<'a> {
    /// MTP / EAGLE / DSpark decoder layers on the last stage (0 without one).
    pub(super) layers: u32,
    /// DSpark's heads (target layers, Markov rank, head_dim), which size its weights.
    pub(super) dspark: Option<DsparkHeads>,
    /// A separate draft model, when its shape is known.
    pub(super) draft: Option<&'a Model>,
}

/// The drafter of `s`, after vLLM's checks on it, with its notes.
pub(super) fn drafter<'a>(
    s: &'a Scenario,
    notes: &mut Vec<String>,
) -> Result<Drafter<'a>, CalcError> {
    check_mtp(s, notes)?;
    let (layers, dspark) = drafter_layers(s, notes)?;
    let draft = draft_model(s, notes)?;
    Ok(Drafter {
        layers,
        dspark,
        draft,
    })
}

/// MTP: a model family vLLM maps to an MTP drafter, and a token count its modules divide.
fn check_mtp(s: &Scenario, notes: &mut Vec<String>) -> Result<(), CalcError> {
    let m = &s.model;
    // Drafter: MTP/EAGLE layers live on the last stage only.
    let mtp = s
        .engine
        .speculative
        .as_ref()
        .filter(|sp| sp.method.is_mtp());
    if mtp.is_some() {
        match &m.mtp_draft {
            MtpDraft::Mapped => {}
            // vLLM renames every MTP alias (deepseek_mtp ...) to mtp before it looks.
            MtpDraft::Unsupported => return Err(CalcError::new(
                Input::Spec,
                format!(
                    "Unsupported speculative method: 'mtp' (vLLM's NotImplementedError). vLLM has an MTP drafter only for the model families whose config it maps to one (DeepSeek-V3/V3.2/V4, Qwen3-Next, Qwen3.5, GLM-4.5, MiMo, ERNIE 4.5 MoE, ...), and {} ({}) is not one of them: use eagle, eagle3, draft_model or ngram.",
                    m.name,
                    if m.architecture.is_empty() { "no architecture given" } else { m.architecture.as_str() },
                ),
            )),
            MtpDraft::Refused(message) => {
                return Err(CalcError::new(Input::Spec, message.clone()))
            }
        }
    }
    // MTP modules are reused round-robin: more tokens than modules must be a multiple of them.
    if let Some(sp) = mtp.filter(|sp| {
        let n = sp.num_speculative_tokens;
        m.mtp_layers > 0 && n > m.mtp_layers && n % m.mtp_layers != 0
    }) {
        return Err(CalcError::new(
            Input::SpecTokens,
            format!(
                "num_speculative_tokens:{} must be divisible by n_predict={} (vLLM's ValueError: the config's {} MTP layers are reused in turn, so more tokens than layers must be a multiple of them)",
                sp.num_speculative_tokens, m.mtp_layers, m.mtp_layers
            ),
        ));
    }
    if s.engine
        .speculative
        .as_ref()
        .is_some_and(|sp| sp.count_assumed)
        && super::NOTES
    {
        notes.push("num_speculative_tokens was not given, so Headroom plans 1 speculative token. vLLM has no default of its own: it takes a drafter config's n_predict where there is one, and otherwise stops with \"num_speculative_tokens must be provided with speculative model unless the draft model config contains an n_predict parameter.\" Give the count (spec-tokens on the page, num_speculative_tokens in the speculative config).".into());
    }
    if mtp.is_some() && m.mtp_layers == 0 && super::NOTES {
        notes.push("The model's config declares no MTP layers (vLLM's n_predict: num_nextn_predict_layers, or mtp_num_hidden_layers for Qwen3.5): vLLM's MTP speculation reads them from the checkpoint, so this drafter of one layer is a guess, and the start may fail when vLLM finds none.".into());
    }
    Ok(())
}

/// The drafter's decoder layers on the last stage, and DSpark's heads.
fn drafter_layers(
    s: &Scenario,
    notes: &mut Vec<String>,
) -> Result<(u32, Option<DsparkHeads>), CalcError> {
    let m = &s.model;
    // DSpark's heads (target layers, Markov rank, head_dim) size its weights below.
    let mut dspark: Option<DsparkHeads> = None;
    let drafter_layers: u32 = match s.engine.speculative.as_ref().map(|sp| sp.method) {
        Some(SpecMethod::Dspark) => match &m.compressed {
            Some(c) => {
                let missing = match (c.dspark_target_layers, c.dspark_markov_rank) {
                    (Some(targets), Some(rank)) => {
                        dspark = Some((targets, rank, c.head_dim));
                        None
                    }
                    (None, None) => Some("dspark_target_layer_ids and dspark_markov_rank"),
                    (None, _) => Some("dspark_target_layer_ids"),
                    _ => Some("dspark_markov_rank"),
                };
                if let Some(missing) = missing {
                    return Err(CalcError::new(
                        Input::Spec,
                        format!(
                            "dspark: vLLM builds DeepSeek-V4's DSpark drafter (DSparkDeepseekV4Model) from the config's dspark_target_layer_ids and dspark_markov_rank, and this config has no {missing}, so the drafter cannot be built. Checkpoints that ship DSpark stages under mtp.* declare them: give that config.json, or use mtp."
                        ),
                    ));
                }
                let declared = if m.mtp_layers > 0 && m.mtp_layers < c.dspark_layers {
                    format!(
                        " The config declares {} MTP layer(s) (num_nextn_predict_layers); DSpark reads mtp.0 to mtp.{} whatever that says.",
                        m.mtp_layers,
                        c.dspark_layers - 1
                    )
                } else {
                    String::new()
                };
                if super::NOTES { notes.push(format!(
                    "DSpark on DeepSeek-V4: vLLM builds {n} draft decoder layers (n_mtp_layers, 3 when the config does not say) on the last stage, in the target's weight format, from the checkpoint's mtp.* weights; each keeps a sliding-window cache only. Without num_speculative_tokens vLLM takes the draft config's block_size (dspark_block_size); Headroom takes the value given, 1 by default.{declared}",
                    n = c.dspark_layers,
                )); }
                c.dspark_layers
            }
            None => {
                return Err(CalcError::new(
                    Input::Spec,
                    format!(
                        "dspark is planned for DeepSeek-V4, whose checkpoint carries the draft layers (mtp.*); for {} a DSpark drafter is a checkpoint of its own (Qwen3, Gemma 4 ...) whose shape Headroom does not know",
                        m.name
                    ),
                ))
            }
        },
        Some(SpecMethod::Mtp(_)) => m.mtp_layers.max(1),
        Some(method @ (SpecMethod::Eagle | SpecMethod::Eagle3)) => {
            if super::NOTES { notes.push(format!(
                "{method}: vLLM loads the head's own checkpoint, named by the speculative config's model (without one it stops: \"num_speculative_tokens was provided but without speculative model\"); Headroom plans a head of one decoder layer of the target's shape on the last stage, unless drafter-weights gives its size.",
            )); }
            1
        }
        // A draft model's layers are its own (`draft_model` below); ngram has none.
        None | Some(SpecMethod::DraftModel | SpecMethod::Ngram) => 0,
    };
    Ok((drafter_layers, dspark))
}

/// A separate draft model: its shape when named, its vocabulary against the target's.
fn draft_model<'a>(
    s: &'a Scenario,
    notes: &mut Vec<String>,
) -> Result<Option<&'a Model>, CalcError> {
    let m = &s.model;
    // A separate draft model, when its shape is known.
    let draft: Option<&Model> = s
        .engine
        .speculative
        .as_ref()
        .filter(|sp| sp.method == SpecMethod::DraftModel)
        .and_then(|sp| sp.draft_model.as_deref());
    if let Some(d) = draft {
        if super::NOTES {
            notes.push(format!(
            "The draft model {} is loaded whole on every last-stage rank (vLLM builds it with the target's TP and no PP): its {} layer(s) add their KV to that stage's pool; its own activation peak and CUDA graphs are not estimated.",
            d.name, d.n_layers
        ));
        }
        // DraftModelProposer refuses it before loading (use_heterogeneous_vocab, which would
        // allow it, is not a setting Headroom reads).
        if d.vocab_size != m.vocab_size {
            return Err(CalcError::new(
                Input::DraftModel,
                format!(
                    "Target and draft model should have the same vocabulary size. Target model vocab_size={}. Draft model vocab_size={}. Using models with different tokenizers can cause out-of-bounds errors during speculative decoding. (vLLM accepts it only with use_heterogeneous_vocab in the speculative config.)",
                    m.vocab_size, d.vocab_size
                ),
            ));
        }
    }
    if let Some(sp) = s
        .engine
        .speculative
        .as_ref()
        .filter(|sp| sp.method == SpecMethod::DraftModel && sp.draft_model.is_none())
    {
        // vLLM needs the drafter named; Headroom can still plan its measured weights.
        if sp.drafter_weights.is_none() {
            return Err(CalcError::new(
                Input::DraftModel,
                "draft_model needs its drafter: name it in draft-model (the speculative config's \"model\"), or give its measured weights in drafter-weights. Without a model vLLM stops with \"num_speculative_tokens was provided but without speculative model.\"",
            ));
        }
        if super::NOTES {
            notes.push("A draft_model drafter is a model of its own, whose shape Headroom does not know until it is named (draft-model on the page, the speculative config's model on the CLI): its weights are the figure given, and its KV cache layers on the last stage are not in the plan, so the pool shown there is larger than vLLM's.".into());
        }
    }
    Ok(draft)
}

/// A draft model's weights on one rank: all of its layers, embedding and head, split by the
/// target's TP (vLLM requires the draft's TP to equal it), scaled to its checkpoint when the
/// catalog has one.
pub(super) fn draft_rank_weights(s: &Scenario, d: &Model, tp: u64, tp_rank: u64) -> u64 {
    let place = Placement {
        tp,
        tp_rank,
        dp: 1,
        pp: 1,
        layers: (0, d.n_layers),
        first_stage: true,
        last_stage: true,
        // create_draft_parallel_config keeps EP only for a MoE draft.
        expert_parallel: s.parallel.expert_parallel && d.moe.is_some(),
        drafter_layers: 0,
        vision: false,
    };
    let w = weights::rank_weights(d, &place).target();
    let est = weights::checkpoint_estimate(d);
    match d.checkpoint_bytes {
        Some(c) if est > 0 => (w as f64 * c as f64 / est as f64).round() as u64,
        _ => w,
    }
}
