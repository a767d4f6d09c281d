//! What a launch command gives the page: catalog ids for its models, the speculative
//! config as the page's inputs.

use super::command::Imported;
use crate::calc::input::Input;
use crate::catalog::json;

/// What a launch command gives the page: the inputs to set (the model as a catalog id when the
/// catalog has it, the speculative config as the page's method, count and drafter), and what
/// the page should say beside them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PageInputs {
    pub pairs: Vec<(Input, String)>,
    /// The command's model when the catalog does not know it: the page asks for its
    /// config.json (the other inputs stand).
    pub unknown_model: Option<String>,
    /// The reader's notes, and the speculative config's keys the page has no input for.
    pub notes: Vec<String>,
}

impl Imported {
    /// The page's inputs for this command (see [`PageInputs`]).
    pub fn page_inputs(&self) -> PageInputs {
        let (mut pairs, spec) = self.inputs();
        let mut notes = self.notes.clone();
        let mut unknown_model = None;
        if let Some(m) = &self.model {
            match catalog_model(m) {
                Some((id, note)) => {
                    pairs.insert(0, (Input::Model, id));
                    notes.extend(note);
                }
                None => unknown_model = Some(m.clone()),
            }
        }
        if let Some(v) = spec.as_deref().and_then(|t| json::parse(t).ok()) {
            let method = v.get("method").and_then(json::Value::as_str);
            let model = v.get("model").and_then(json::Value::as_str);
            // vLLM infers a draft model when only `model` is given.
            let method = method.or(model.map(|_| "draft_model"));
            if let Some(m) = method {
                pairs.push((Input::Spec, m.to_string()));
            }
            if let Some(n) = v
                .get("num_speculative_tokens")
                .and_then(json::Value::as_u64)
            {
                pairs.push((Input::SpecTokens, n.to_string()));
            }
            match (method, model) {
                (Some("draft_model"), Some(d)) => pairs.push((Input::DraftModel, d.to_string())),
                (_, Some(d)) => notes.push(format!(
                    "The speculative config's model {d} is the drafter's own checkpoint, which Headroom does not read: it plans the method's drafter from the target's shape."
                )),
                _ => {}
            }
        }
        PageInputs {
            pairs,
            unknown_model,
            notes,
        }
    }
}

/// The catalog row a command's model names: its id or Hugging Face repo, or, for a local path
/// (`./Qwen/Qwen3-8B`, `/models/Qwen3-8B`), the one row whose repo ends in the path's last
/// components, with a note that says so. `None` when no row, or more than one, matches.
pub fn catalog_model(model: &str) -> Option<(String, Option<String>)> {
    use crate::catalog;
    if let Some(r) = catalog::model(model) {
        return Some((r.id.clone(), None));
    }
    let parts: Vec<&str> = model
        .trim_end_matches('/')
        .split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .collect();
    let base = parts.last()?;
    let tail2 = (parts.len() >= 2).then(|| format!("{}/{}", parts[parts.len() - 2], base));
    let mut hits = catalog::models().iter().filter(|r| {
        let repo = r.hf_repo.to_ascii_lowercase();
        tail2
            .as_ref()
            .is_some_and(|t| repo == t.to_ascii_lowercase())
            || repo.rsplit('/').next() == Some(base.to_ascii_lowercase().as_str())
    });
    let row = hits.next()?;
    if hits.next().is_some() {
        return None;
    }
    Some((
        row.id.clone(),
        Some(format!(
            "The model {model} is a local path; Headroom plans the catalog's {} ({}), whose name it ends in. If the checkpoint differs, give its config.json as MODEL.",
            row.hf_repo, row.id
        )),
    ))
}
