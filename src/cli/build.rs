//! The command line's scenario: its flags become the inputs' texts, and the one builder
//! ([`crate::input::scenario()`]) makes the `Scenario`, exactly as for the page. What only a
//! terminal has (MODEL as a config.json path, a `draft_model` drafter read from a path, the
//! speculative config's JSON) is read here and handed over as inputs; `headroom link` writes
//! those inputs as the page's link, and `headroom plan --url` reads a link back through the
//! page's own decoder.

use crate::calc::input::Input;
use crate::calc::scenario::{Scenario, SpecMethod};
use crate::catalog;
use crate::input::query::{self, UrlState};
use crate::input::schema::{Cli, ROWS};

use super::args::Args;
use super::spec::{read_config_file, spec_inputs, ConfigFile};
use super::{CliError, Command, Invocation, DEFAULT_BASE};
use crate::import::log::Log;

/// The inputs a command line gives, and what it read that a link cannot hold.
struct Given {
    state: UrlState,
    /// MODEL's config.json, when MODEL is a path: the scenario names the model with it.
    config: Option<ConfigFile>,
    /// `draft_model`'s drafter read from a config.json path.
    draft_file: Option<Box<crate::calc::model::Model>>,
    /// The launch command `--from-command` read (or a log's `non-default args`).
    imported: Option<crate::import::command::Imported>,
    /// The log's measurements (`--log`), not yet in `state`: the weights, the available KV
    /// memory, the CUDA-graph estimate and the free memory, as inputs.
    measured: Vec<(Input, String)>,
    /// What the terminal should hear about how MODEL was read (a catalog id that a local
    /// path of the same name shadows).
    notes: Vec<String>,
}

use crate::import::replay::is_measurement;

/// Sets one input, refusing an empty value and naming the flag on a bad one.
fn set(state: &mut UrlState, input: Input, text: &str) -> Result<(), CliError> {
    if text.trim().is_empty() {
        return Err(CliError::new(
            format!("--{}", input.flag()),
            "needs a value, not an empty text",
        ));
    }
    state.set(input, text).map_err(|message| {
        CliError::from_input(&crate::input::InputError {
            field: input,
            message,
        })
    })
}

/// The flags as inputs: MODEL (an id, or a file whose text is the pasted config), the flags
/// that are schema rows, in the schema's order, and the speculative config's keys.
fn given(a: &Args, log: Option<&Log>) -> Result<Given, CliError> {
    let v = |k: &str| a.values.get(k).map(String::as_str);
    if a.positional.len() > 1 {
        return Err(CliError::new(
            a.positional[1].clone(),
            "unexpected argument: give one MODEL (flags start with --)",
        ));
    }
    // A launch command's inputs come first; the flags given beside it apply on top.
    let mut imported = match v("from-command") {
        Some(t) => Some(
            crate::import::command::import(t)
                .map_err(|e| CliError::new("--from-command", e.to_string()))?,
        ),
        // Without a command, the log's `non-default args` are its flags.
        None => log.and_then(crate::import::replay::args_command),
    };
    let source = if v("from-command").is_some() || log.is_none() {
        "--from-command"
    } else {
        "--log"
    };
    let model_text = match (a.positional.first(), v("model")) {
        (Some(_), Some(_)) => {
            return Err(CliError::new(
                "--model",
                "MODEL is given twice (as an argument and with --model)",
            ))
        }
        (Some(m), None) => Some(m.as_str()),
        (None, m) => m,
    };
    let from_command = model_text.is_none() && v("example").is_none();
    let mut model_note = None;
    let command_model: Option<String> = match (&imported, from_command) {
        (Some(c), true) => {
            c.model
                .as_deref()
                .map(|m| match crate::import::command::catalog_model(m) {
                    Some((id, note)) if !std::path::Path::new(m).exists() => {
                        model_note = note;
                        id
                    }
                    _ => m.to_string(),
                })
        }
        _ => None,
    };
    let model_text = model_text.or(command_model.as_deref());
    let mut state = UrlState::default();
    // The example first: an unknown one is the first thing to say.
    if let Some(id) = v("example") {
        set(&mut state, Input::Example, id)?;
    }
    let mut config = None;
    let mut notes = Vec::new();
    match model_text {
        Some(m) if catalog::model(m).is_some() => {
            // The catalog wins, as it always has; a file or directory of the same name here
            // is said, with how to read it instead.
            if std::path::Path::new(m).exists() {
                notes.push(format!(
                    "MODEL {} is read as the catalog row; a path of that name is here too: give ./{m} to read its config.json",
                    crate::calc::quoted(m)
                ));
            }
            set(&mut state, Input::Model, m)?
        }
        // The command's model is neither a catalog row nor a config.json on this machine.
        Some(m) if from_command && !std::path::Path::new(m).exists() => {
            return Err(CliError::new(
                source,
                format!("the {what}'s model {} is not in Headroom's catalog (headroom models) and is not a config.json here; give its config.json path as MODEL, on top of the {what}", crate::calc::quoted(m), what = if source == "--log" { "log" } else { "command" }),
            ));
        }
        Some(m) => {
            let file = read_config_file(m)?;
            state.set(Input::Config, &file.text).map_err(|e| {
                CliError::new("MODEL", format!("{}: {e}", file.path.display()))
            })?;
            // The checkpoint's size from its index beside the config, unless given.
            if let Some(b) = file
                .checkpoint_bytes
                .filter(|_| v("checkpoint-bytes").is_none())
            {
                set(&mut state, Input::CheckpointBytes, &b.to_string())?;
            }
            config = Some(file);
        }
        None if v("example").is_none() => {
            return Err(CliError::new(
                "MODEL",
                "missing: give a catalog id (headroom models), a path to a config.json, or --example ID",
            ))
        }
        None => {}
    }
    let (pairs, command_spec) = imported.as_ref().map(|c| c.inputs()).unzip();
    let mut measured = Vec::new();
    if let Some(l) = log {
        if !l.conflicts.is_empty() {
            return Err(CliError::new(
                "--log",
                format!(
                    "the log's readings contradict each other (two launches pasted together?): {}; give the lines of one launch",
                    l.conflicts.join("; ")
                ),
            ));
        }
        for (input, text) in l.inputs() {
            if v(input.flag()).is_some() {
                continue;
            }
            if is_measurement(input) {
                measured.push((input, text));
            } else {
                state.set(input, &text).map_err(|message| {
                    let what = match input {
                        Input::Vllm => format!(
                            "the log's release {text} ({}): {}; give --vllm-version to plan it under another release's rules",
                            l.version_basis,
                            super::without_name(&message, input.flag())
                        ),
                        other => format!("--{}: {}", other.flag(), super::without_name(&message, other.flag())),
                    };
                    CliError::new("--log", what)
                })?;
            }
        }
    }
    if let Some(pairs) = pairs {
        for (input, text) in pairs {
            if v(input.flag()).is_some() {
                continue;
            }
            state.set(input, &text).map_err(|message| {
                let from = match input {
                    Input::Gpus => "CUDA_VISIBLE_DEVICES".to_string(),
                    Input::PpPartition => "VLLM_PP_LAYER_PARTITION".to_string(),
                    Input::Vllm => "the image tag's release".to_string(),
                    other => format!("--{}", other.flag()),
                };
                CliError::new(
                    source,
                    format!("{from}: {}", super::without_name(&message, input.flag())),
                )
            })?;
        }
    }
    for row in &ROWS {
        if matches!(row.input, Input::Model | Input::Example) {
            continue;
        }
        if let (Cli::Value(_) | Cli::Switch, Some(t)) = (row.cli, v(row.input.flag())) {
            set(&mut state, row.input, t)?;
        }
    }
    let mut draft_file = None;
    let command_spec = command_spec.flatten();
    let spec_text = v("speculative-config").or(command_spec.as_deref());
    if let Some(t) = spec_text {
        let sp = spec_inputs(t).map_err(|e| {
            if v("speculative-config").is_some() {
                e
            } else {
                CliError::new(source, format!("{}: {}", e.flag, e.message))
            }
        })?;
        let method = sp.method.map_or("none", SpecMethod::as_str);
        set(&mut state, Input::Spec, method)?;
        if let Some(n) = sp.tokens {
            set(&mut state, Input::SpecTokens, &n.to_string())?;
        }
        if let Some(id) = &sp.draft_id {
            set(&mut state, Input::DraftModel, id)?;
        }
        draft_file = sp.draft_file;
    }
    if let (Some(c), Some(n)) = (imported.as_mut(), model_note) {
        c.notes.push(n);
    }
    Ok(Given {
        state,
        config,
        draft_file,
        imported,
        measured,
        notes,
    })
}

/// The scenario of the inputs, through the one builder, with what the terminal read from files.
fn scenario(g: &Given) -> Result<Scenario, CliError> {
    let mut s = crate::input::scenario(&g.state).map_err(|e| CliError::from_input(&e))?;
    if let Some(file) = &g.config {
        s.model.name.clone_from(&file.model.name);
    }
    if let (Some(m), Some(sp)) = (&g.draft_file, s.engine.speculative.as_mut()) {
        sp.draft_model = Some(m.clone());
    }
    Ok(s)
}

/// `plan` and `solve`: the scenario and how to print the answer.
pub(super) fn invocation(a: &Args) -> Result<Invocation, CliError> {
    invocation_with_log(a, None)
}

/// `plan --log`: the scenario with the log's measurements, and the one without them, whose
/// plan gives the predictions the log's figures are set beside.
pub(super) fn invocation_with_log(a: &Args, log: Option<Log>) -> Result<Invocation, CliError> {
    let mut g = given(a, log.as_ref())?;
    let predicted = if g.measured.is_empty() && log.is_none() {
        None
    } else {
        Some(scenario(&g)?)
    };
    for (input, text) in std::mem::take(&mut g.measured) {
        g.state.set(input, &text).map_err(|message| {
            CliError::new(
                "--log",
                format!(
                    "the log's {}: {}",
                    input.flag(),
                    super::without_name(&message, input.flag())
                ),
            )
        })?;
    }
    let mut notes = g.imported.as_ref().map_or_else(Vec::new, command_notes);
    notes.extend(g.notes.iter().cloned());
    if let Some(l) = &log {
        notes.extend(l.notes.iter().cloned());
    }
    let mut planned = scenario(&g)?;
    if let Some(l) = &log {
        crate::import::replay::cite(l, &mut planned);
        if l.vllm_version.is_none() && !a.values.contains_key("vllm-version") {
            notes.push(format!(
                "the log states no release ({}); it is planned under vLLM {}'s rules: give --vllm-version for another",
                l.version_basis, planned.version
            ));
        }
    }
    Ok(Invocation {
        scenario: planned,
        state: g.state.clone(),
        json: a.values.get("json").is_some_and(|t| t == "true"),
        unit: g.state.unit(),
        notes,
        replay: log
            .zip(predicted)
            .map(|(log, predicted)| Box::new(super::Replay { log, predicted })),
    })
}

/// `headroom link`: the page's address for the scenario. The scenario is built first, so a link
/// is only written for inputs the builder takes.
pub(super) fn link(a: &Args) -> Result<String, CliError> {
    let g = given(a, None)?;
    scenario(&g)?;
    if g.draft_file.is_some() {
        return Err(CliError::new(
            "--speculative-config",
            "model: a drafter read from a config.json path cannot travel in a link; name it by its catalog id or Hugging Face repo",
        ));
    }
    let base = a.values.get("base").map_or(DEFAULT_BASE, String::as_str);
    let base = base.trim();
    if base.is_empty() || base.contains(char::is_whitespace) {
        return Err(CliError::new("--base", "needs a URL without spaces"));
    }
    // A base with a query or fragment of its own gives way to the scenario's.
    let base = base.split(['?', '#']).next().unwrap_or(base);
    Ok(format!("{base}{}", query::link(&g.state)))
}

/// `headroom plan --url`: the page's link, read by the page's decoder. A parameter the page
/// would leave out with a notice is bad input here: the terminal has no notice to show.
pub(super) fn from_url(a: &Args) -> Result<Invocation, CliError> {
    let url = a.values.get("url").map_or("", String::as_str);
    let mut scenario_flags = a
        .values
        .keys()
        .filter(|k| !matches!(**k, "url" | "json"))
        .map(|k| format!("--{k}"));
    if let Some(f) = a
        .positional
        .first()
        .cloned()
        .or_else(|| scenario_flags.next())
    {
        return Err(CliError::new(
            "--url",
            format!("the link is the whole scenario; {f} cannot be given beside it"),
        ));
    }
    if url.trim().is_empty() {
        return Err(CliError::new(
            "--url",
            "needs the page's link or its ?query",
        ));
    }
    let d = query::decode(url);
    if let Some(i) = d.ignored.first() {
        return Err(CliError::new("--url", format!("{}: {}", i.key, i.reason)));
    }
    // The page's comparison: the terminal plans one scenario at a time.
    if let Some((f, _)) = d.state.iter_b().next() {
        return Err(CliError::new(
            "--url",
            format!("b.{}: the link compares two scenarios (its b. keys are scenario B); plan one at a time: drop the b. keys for A, or give B's inputs without the prefix", f.key()),
        ));
    }
    let s = crate::input::scenario(&d.state)
        .map_err(|e| CliError::new("--url", format!("{}: {}", e.field.key(), e.message)))?;
    Ok(Invocation {
        scenario: s,
        state: d.state.clone(),
        json: a.values.get("json").is_some_and(|t| t == "true"),
        unit: d.state.unit(),
        notes: Vec::new(),
        replay: None,
    })
}

/// `headroom command`: the scenario as a `vllm serve` command.
pub(super) fn command(a: &Args) -> Result<Command, CliError> {
    let g = given(a, None)?;
    let s = scenario(&g)?;
    let repo = crate::import::export::repo_of;
    let model = match (&g.config, g.state.get(Input::Model)) {
        // vllm serve takes the checkpoint's directory, which holds the config.json.
        (Some(f), _) => f
            .path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .map_or_else(|| ".".to_string(), |p| p.display().to_string()),
        (None, Some(id)) => repo(id),
        // An example's model: its catalog row by name, else the name it is planned under.
        (None, None) => crate::import::export::repo_of_named(&s),
    };
    // The speculative config's `model`: draft_model's drafter by its repo, else what the JSON
    // names (an EAGLE head's checkpoint, which Headroom does not read but vLLM needs).
    let spec_json = a
        .values
        .get("speculative-config")
        .cloned()
        .or_else(|| g.imported.as_ref().and_then(|c| c.inputs().1));
    let spec_model = g.state.get(Input::DraftModel).map(repo).or_else(|| {
        let v = crate::catalog::json::parse(spec_json.as_deref()?).ok()?;
        v.get("model")?.as_str().map(str::to_string)
    });
    let names = crate::import::export::Names { model, spec_model };
    Ok(Command::Command {
        exported: crate::import::export::command(&s, &names),
        json: a.values.get("json").is_some_and(|t| t == "true"),
    })
}

/// What a launch command held that the plan does not read and that may change the memory:
/// flags not modelled, unknown flags, unresolved variables, and the reader's notes.
fn command_notes(c: &crate::import::command::Imported) -> Vec<String> {
    let mut out: Vec<String> = c
        .ignored
        .iter()
        .filter(|i| i.reason != "does not change the start-up memory plan")
        .map(|i| {
            let shown = match &i.value {
                Some(v) if !v.is_empty() => format!("{} {v}", i.flag),
                _ => i.flag.clone(),
            };
            format!("the command's {shown} is not read: {}", i.reason)
        })
        .collect();
    out.extend(c.notes.iter().cloned());
    out
}
