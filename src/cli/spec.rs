//! What only the command line reads from files and JSON: MODEL as a catalog id or a
//! config.json path, and `--speculative-config`, vLLM's JSON, whose memory-relevant keys become
//! the inputs `spec`, `spec-tokens` and `draft-model` of the one builder.

use std::io::Read;

use crate::calc::scenario::{SpecMethod, Speculative};
use crate::calc::{self};
use crate::catalog;

use super::CliError;

/// Reads MODEL: a catalog id, else a `config.json` path (or a directory holding one).
pub fn resolve_model(text: &str) -> Result<calc::model::Model, CliError> {
    if let Some(row) = catalog::model(text) {
        return Ok(row.model.clone());
    }
    read_config_file(text).map(|f| f.model)
}

/// A config.json the command line read from a path: its text (the page's pasted config, for
/// the builder and for a link) and the model it describes, named with the path.
pub(super) struct ConfigFile {
    pub text: String,
    pub path: std::path::PathBuf,
    pub model: calc::model::Model,
    /// `metadata.total_size` of the `model.safetensors.index.json` beside the config, if any.
    pub checkpoint_bytes: Option<u64>,
}

/// The checkpoint's bytes from the `model.safetensors.index.json` beside a config.json: a
/// regular file of at most 64 MiB, its `total_size` read by the link's own scan.
fn index_beside(config: &std::path::Path) -> Option<u64> {
    let path = config.with_file_name("model.safetensors.index.json");
    let meta = std::fs::metadata(&path).ok()?;
    if !meta.is_file() || meta.len() > 64 << 20 {
        return None;
    }
    let text = std::fs::read_to_string(&path).ok()?;
    crate::input::values::parse_checkpoint_bytes(&text).ok()
}

/// Reads a config.json at `text` (or in the directory `text`), with errors under MODEL.
pub(super) fn read_config_file(text: &str) -> Result<ConfigFile, CliError> {
    let err = |m: String| CliError::new("MODEL", m);
    let mut path = std::path::PathBuf::from(text);
    if path.is_dir() {
        path.push("config.json");
    }
    // Only a regular file is read: opening a named pipe or a device would wait for a writer,
    // or read forever.
    if let Ok(meta) = std::fs::metadata(&path) {
        if !meta.is_file() {
            return Err(err(format!(
                "{} is not a regular file (a named pipe, socket or device); give a config.json file or its directory",
                crate::calc::quoted(&path.display().to_string())
            )));
        }
    }
    let file = std::fs::File::open(&path).map_err(|e| {
        let near: Vec<&str> = catalog::models()
            .iter()
            .map(|r| r.id.as_str())
            .filter(|id| !text.is_empty() && id.contains(text))
            .take(5)
            .collect();
        err(format!(
            "{} is not a catalog model id (headroom models{}), and {} cannot be read as a config.json: {e}", crate::calc::quoted(text),
            if near.is_empty() {
                String::new()
            } else {
                format!("; close ones: {}", near.join(", "))
            },
            crate::calc::quoted(&path.display().to_string())
        ))
    })?;
    let file_len = file.metadata().ok().map(|m| m.len());
    // A config.json is a few KiB; read at most one byte more than the parser accepts.
    let mut bytes = Vec::new();
    file.take((4 << 20) + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| err(format!("{}: cannot be read: {e}", path.display())))?;
    let text = String::from_utf8(bytes)
        .map_err(|_| err(format!("{}: is not UTF-8 text", path.display())))?;
    // The limit a link and the page share, checked before the text is parsed. A file cut at
    // the read limit is measured by its size on disk.
    let len = match file_len {
        Some(n) if text.len() > 4 << 20 => usize::try_from(n).unwrap_or(usize::MAX),
        _ => text.trim().len(),
    };
    crate::input::Field::Config
        .within_limit(len)
        .map_err(|e| err(format!("{}: {e}", path.display())))?;
    let mut model = catalog::parse_config_json(&text).map_err(|e| {
        err(format!(
            "{}: {} (field {})",
            path.display(),
            e.message,
            e.field
        ))
    })?;
    model.name = format!("{} ({})", model.name, path.display());
    let checkpoint_bytes = index_beside(&path);
    Ok(ConfigFile {
        text,
        path,
        model,
        checkpoint_bytes,
    })
}

/// `--speculative-config`: vLLM's JSON. Only the memory-relevant keys are read (`model` for
/// `draft_model` only); the others (`draft_tensor_parallel_size`, ...) are accepted and ignored.
pub fn parse_speculative(text: &str) -> Result<Option<Speculative>, CliError> {
    let err = |m: String| CliError::new("--speculative-config", m);
    let t = text.trim();
    if t.is_empty() || t == "null" || t == "none" {
        return Ok(None);
    }
    let v: serde_json::Value =
        serde_json::from_str(t).map_err(|e| err(format!("not valid JSON: {e}")))?;
    let obj = v.as_object().ok_or_else(|| {
        err(
            "must be a JSON object like {\"method\":\"deepseek_mtp\",\"num_speculative_tokens\":1}"
                .into(),
        )
    })?;
    // The page's methods, less its "none" (JSON says null).
    let methods = &crate::input::values::SPEC_METHODS[1..];
    let method = match obj.get("method") {
        // Any of vLLM's MTP model types is taken too (vLLM reads each as `mtp`).
        Some(serde_json::Value::String(m)) => SpecMethod::from_name(m).ok_or_else(|| {
            err(format!(
                "method {} is not one of {} (or another of vLLM's MTP model types, such as qwen3_next_mtp)", crate::calc::quoted(m),
                methods.join(", ")
            ))
        })?,
        Some(other) => return Err(err(format!("method must be a string, not {other}"))),
        // vLLM infers a draft model when only `model` is given.
        None if obj.contains_key("model") => SpecMethod::DraftModel,
        None => return Err(err("method is missing".into())),
    };
    let has_model = obj.get("model").is_some_and(|m| !m.is_null());
    // SpeculativeConfig: EAGLE heads are checkpoints of their own, named by `model`.
    if !has_model && method.is_eagle() {
        return Err(err(
            "num_speculative_tokens was provided but without speculative model. (vLLM's ValueError: eagle and eagle3 need the head's checkpoint as \"model\")".into(),
        ));
    }
    // draft_model's drafter: a catalog id, its Hugging Face repo (as vLLM takes it) or a
    // config.json path. Other methods' `model` (an EAGLE head) is not read.
    let draft_model = match obj.get("model") {
        Some(serde_json::Value::String(d)) if method == SpecMethod::DraftModel => Some(Box::new(
            resolve_model(d).map_err(|e| err(format!("model: {}", e.message)))?,
        )),
        Some(other) if method == SpecMethod::DraftModel && !other.is_null() => {
            return Err(err(format!("model must be a string, not {other}")))
        }
        _ => None,
    };
    let n = match obj.get("num_speculative_tokens") {
        // vLLM has no default of its own: only a draft config's n_predict stands in for it.
        // Without a `model` there is no draft config, and a draft_model checkpoint declares
        // none; an EAGLE head's config may (speculators' format), and is not read: 1.
        None | Some(serde_json::Value::Null) if !has_model => {
            return Err(err(
                "num_speculative_tokens must be provided with speculative model unless the draft model config contains an n_predict parameter. (vLLM's ValueError; give num_speculative_tokens)".into(),
            ))
        }
        None | Some(serde_json::Value::Null) if method == SpecMethod::DraftModel => {
            return Err(err(
                "A speculative model was provided, but `num_speculative_tokens` was not provided (vLLM's ValueError; the draft model's config has no n_predict to default to)".into(),
            ))
        }
        None | Some(serde_json::Value::Null) => 1,
        Some(v) => v.as_u64().filter(|n| (1..=64).contains(n)).ok_or_else(|| {
            err(format!(
                "num_speculative_tokens {v} must be an integer from 1 to 64 (vLLM takes any positive count; Headroom plans up to 64)"
            ))
        })?,
    };
    // ngram's window: one bound given stands for both; min above max is refused.
    if method == SpecMethod::Ngram {
        let bound = |k: &str| -> Result<Option<u64>, CliError> {
            match obj.get(k) {
                None | Some(serde_json::Value::Null) => Ok(None),
                Some(v) => v
                    .as_u64()
                    .map(Some)
                    .ok_or_else(|| err(format!("{k} {v} must be a non-negative integer"))),
            }
        };
        if let (Some(lo), Some(hi)) = (bound("prompt_lookup_min")?, bound("prompt_lookup_max")?) {
            if lo > hi {
                return Err(err(format!(
                    "prompt_lookup_min={lo} must be <= prompt_lookup_max={hi}"
                )));
            }
        }
    }
    Ok(Some(Speculative {
        draft_model,
        method,
        num_speculative_tokens: n as u32,
        drafter_weights: None,
        // Only an EAGLE head's count may be left out (its config is not read).
        count_assumed: !obj
            .get("num_speculative_tokens")
            .is_some_and(|v| !v.is_null()),
    }))
}

/// `--speculative-config` as the inputs the page has for it: the method, the count when the
/// JSON gives one, and the drafter of `draft_model` (a catalog id or Hugging Face repo as the
/// input `draft-model`; a config.json path, which a link cannot carry, as its model).
pub(super) struct SpecInputs {
    pub method: Option<SpecMethod>,
    pub tokens: Option<u32>,
    pub draft_id: Option<String>,
    pub draft_file: Option<Box<calc::model::Model>>,
}

pub(super) fn spec_inputs(text: &str) -> Result<SpecInputs, CliError> {
    let Some(sp) = parse_speculative(text)? else {
        return Ok(SpecInputs {
            method: None,
            tokens: None,
            draft_id: None,
            draft_file: None,
        });
    };
    // parse_speculative read the JSON already; its `model` text tells a catalog row from a file.
    let model_text = serde_json::from_str::<serde_json::Value>(text.trim())
        .ok()
        .and_then(|v| v.get("model").and_then(|m| m.as_str().map(str::to_string)));
    let (draft_id, draft_file) = match (sp.draft_model, model_text) {
        (Some(_), Some(id)) if catalog::model(&id).is_some() => (Some(id), None),
        (Some(m), _) => (None, Some(m)),
        (None, _) => (None, None),
    };
    Ok(SpecInputs {
        tokens: (!sp.count_assumed).then_some(sp.num_speculative_tokens),
        method: Some(sp.method),
        draft_id,
        draft_file,
    })
}
