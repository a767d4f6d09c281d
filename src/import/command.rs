//! A pasted launch command, read as vLLM would read it: `vllm serve MODEL ...`, `python -m
//! vllm.entrypoints.openai.api_server --model MODEL ...` or `docker run ... vllm/vllm-openai:TAG
//! ...`, with the environment set before it. Every flag is accounted for: read (under vLLM's
//! destination name, with the value vLLM's parser would give), or listed as ignored with the
//! reason. [`Imported::inputs`] turns what was read into Headroom's inputs for the one builder.
//!
//! ```
//! use headroom::import::command::{import, Form};
//! let c = import("CUDA_VISIBLE_DEVICES=0,1 vllm serve meta-llama/Llama-3.1-8B-Instruct \\\n  -tp 2 --max_model_len 32K --port 8000").unwrap();
//! assert_eq!(c.form, Form::Serve);
//! assert_eq!(c.gpus_visible, Some(2));
//! assert_eq!(c.flag("tensor_parallel_size").unwrap().to_string(), "2");
//! assert_eq!(c.flag("max_model_len").unwrap().to_string(), "32768");
//! assert_eq!(c.ignored[0].flag, "--port");
//! ```

use std::fmt;

use super::flags::{self, Effect, Takes, VllmFlag};
use super::numbers::py_int;
pub use super::page::{catalog_model, PageInputs};
use super::shell::{self, Word};
use crate::calc::decimal::parse_f64;
use crate::calc::input::Input;
use crate::catalog::json;

/// How the command starts vLLM.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    /// `vllm serve MODEL ...`
    Serve,
    /// `python -m vllm.entrypoints.openai.api_server --model MODEL ...`
    ApiServer,
    /// `docker run ... vllm/vllm-openai:TAG ...` (or podman)
    Docker,
}

impl Form {
    pub fn as_str(self) -> &'static str {
        match self {
            Form::Serve => "vllm serve",
            Form::ApiServer => "api_server",
            Form::Docker => "docker",
        }
    }
}

/// A flag's value as vLLM's parser gives it.
#[derive(Clone, Debug, PartialEq)]
pub enum FlagValue {
    Int(i64),
    Float(f64),
    Bool(bool),
    Text(String),
    Json(json::Value),
}

impl fmt::Display for FlagValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FlagValue::Int(n) => write!(f, "{n}"),
            FlagValue::Float(x) => write!(f, "{x}"),
            FlagValue::Bool(b) => write!(f, "{b}"),
            FlagValue::Text(t) => f.write_str(t),
            FlagValue::Json(v) => write!(f, "{v}"),
        }
    }
}

/// A flag read into the scenario.
#[derive(Clone, Debug, PartialEq)]
pub struct ReadFlag {
    /// vLLM's destination name (`tensor_parallel_size`).
    pub dest: &'static str,
    /// The flag as written (`-tp`, `--tensor_parallel_size`).
    pub written: String,
    pub value: FlagValue,
    pub line: usize,
}

/// A flag, argument or variable not read, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ignored {
    /// As written (`--port`, `$EXTRA_ARGS`, `VLLM_LOGGING_LEVEL`).
    pub flag: String,
    /// vLLM's destination name of the flag, when vLLM 0.33.0 has it.
    pub dest: Option<&'static str>,
    pub value: Option<String>,
    pub reason: String,
}

/// What a launch command says.
#[derive(Clone, Debug, PartialEq)]
pub struct Imported {
    pub form: Form,
    /// The model as given: a Hugging Face repo, a path or a catalog id.
    pub model: Option<String>,
    /// The environment the command runs with: assignments and `export`s before it, its own
    /// prefix assignments, docker's `-e`; in order, the last assignment of a name winning.
    pub env: Vec<(String, String)>,
    /// GPUs visible to vLLM (`CUDA_VISIBLE_DEVICES`, docker's `--gpus`), when the text says.
    pub gpus_visible: Option<u32>,
    /// The release, when the text names one (a docker image tag `v0.10.1`): `0.10`.
    pub vllm_version: Option<String>,
    pub flags: Vec<ReadFlag>,
    pub ignored: Vec<Ignored>,
    /// What the reader noticed (a config file it cannot see, an allocator setting).
    pub notes: Vec<String>,
}

/// A command Headroom cannot read, with the reason and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImportError {
    /// What the error is about: a flag as written, a variable, or `command`.
    pub input: String,
    pub message: String,
}

impl fmt::Display for ImportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.input, self.message)
    }
}

impl std::error::Error for ImportError {}

fn err(input: impl Into<String>, message: impl Into<String>) -> ImportError {
    ImportError {
        input: input.into(),
        message: message.into(),
    }
}

/// Reads a launch command.
pub fn import(text: &str) -> Result<Imported, ImportError> {
    let cmds = shell::commands(text).map_err(|e| err("command", e.to_string()))?;
    let mut env: Vec<(String, String)> = Vec::new();
    let mut notes = Vec::new();
    let mut found: Option<(Form, Vec<Word>, usize)> = None;
    let mut docker = Docker::default();
    let mut launches = 0;
    for c in &cmds {
        let (form, args, prefix_env) = match launch(&c.words, &mut docker) {
            Some(l) => l,
            None => {
                if found.is_none() {
                    env.extend(
                        c.assignments
                            .iter()
                            .map(|(n, w)| (n.clone(), w.text.clone())),
                    );
                }
                continue;
            }
        };
        launches += 1;
        if found.is_some() {
            continue;
        }
        env.extend(
            c.assignments
                .iter()
                .map(|(n, w)| (n.clone(), w.text.clone())),
        );
        env.extend(prefix_env);
        found = Some((form, args, c.line));
    }
    let Some((form, args, line)) = found else {
        let t = text.trim_start();
        let hint = if t.starts_with('{') {
            " (this looks like JSON: paste a config.json into the custom-model box)"
        } else if t.contains("INFO") || t.contains("WARNING") {
            " (this looks like a log: paste it as a log)"
        } else {
            ""
        };
        return Err(err(
            "command",
            format!("no vLLM launch found: expected `vllm serve MODEL ...`, `python -m vllm.entrypoints.openai.api_server ...` or `docker run ... vllm/vllm-openai:TAG ...`{hint}"),
        ));
    };
    if launches > 1 {
        notes.push(format!(
            "The text holds {launches} vLLM launches; Headroom read the first (line {line})."
        ));
    }
    if form == Form::Docker {
        env.extend(docker.env.iter().cloned());
    }
    let mut out = Imported {
        form,
        model: None,
        env,
        gpus_visible: None,
        vllm_version: docker.version.clone(),
        flags: Vec::new(),
        ignored: Vec::new(),
        notes,
    };
    if let Some(tag) = &docker.tag {
        if out.vllm_version.is_none() {
            out.notes.push(format!(
                "The image tag {} does not name a release; give --vllm-version for its rules.",
                crate::calc::quoted(tag)
            ));
        }
    }
    read_args(&mut out, &args)?;
    // Later assignments win; keep one entry a name.
    let mut dedup: Vec<(String, String)> = Vec::new();
    for (n, v) in std::mem::take(&mut out.env) {
        dedup.retain(|(m, _)| *m != n);
        dedup.push((n, v));
    }
    out.env = dedup;
    out.gpus_visible = docker.gpus.flatten();
    read_env(&mut out)?;
    Ok(out)
}

/// What `docker run`'s own options say.
#[derive(Default)]
struct Docker {
    env: Vec<(String, String)>,
    /// `--gpus`: `Some(Some(n))` a count, `Some(None)` all (unknown here).
    gpus: Option<Option<u32>>,
    tag: Option<String>,
    version: Option<String>,
}

/// `docker run` options that take a value (the ones a vLLM launch uses, and the common rest).
const DOCKER_VALUE_OPTS: &[&str] = &[
    "-e",
    "--env",
    "--env-file",
    "-p",
    "--publish",
    "-v",
    "--volume",
    "--mount",
    "--name",
    "--gpus",
    "--ipc",
    "--shm-size",
    "--runtime",
    "--network",
    "--net",
    "-w",
    "--workdir",
    "--entrypoint",
    "-u",
    "--user",
    "--ulimit",
    "--device",
    "--cpus",
    "--cpuset-cpus",
    "-m",
    "--memory",
    "--restart",
    "-l",
    "--label",
    "--add-host",
    "-h",
    "--hostname",
    "--platform",
    "--pull",
    "--log-driver",
    "--log-opt",
    "--security-opt",
    "--cap-add",
    "--cap-drop",
    "--group-add",
    "--tmpfs",
    "--pid",
    "--uts",
    "--cgroupns",
    "--health-cmd",
    "--stop-signal",
    "--memory-swap",
    "--dns",
];

/// A launch: its form, the words vLLM parses, and the environment its own line sets.
type Launch = (Form, Vec<Word>, Vec<(String, String)>);

/// The launch in a command's words: its form, the arguments vLLM parses, and environment the
/// command line itself sets (`env A=1 vllm serve`).
fn launch(words: &[Word], docker: &mut Docker) -> Option<Launch> {
    let mut i = 0;
    let mut env = Vec::new();
    // Wrappers that run the rest: env, sudo, nohup, exec, time, uv run, numactl ...
    loop {
        let w = words.get(i)?.text.as_str();
        match w {
            "env" | "sudo" | "nohup" | "exec" | "time" | "stdbuf" | "numactl" | "taskset" => {
                i += 1;
                // Their own options (`sudo -E`, `numactl --interleave=all`).
                while words.get(i).is_some_and(|w| w.text.starts_with('-')) {
                    i += 1;
                }
            }
            "uv" if words.get(i + 1).is_some_and(|w| w.text == "run") => i += 2,
            _ if w.contains('=') && shell::is_name(w.split('=').next().unwrap_or("")) => {
                let (n, v) = w.split_once('=').unwrap_or((w, ""));
                env.push((n.to_string(), v.to_string()));
                i += 1;
            }
            _ => break,
        }
    }
    let w0 = words.get(i)?.text.as_str();
    let base = w0.rsplit('/').next().unwrap_or(w0);
    if base == "vllm" && words.get(i + 1).is_some_and(|w| w.text == "serve") {
        return Some((Form::Serve, words[i + 2..].to_vec(), env));
    }
    if base.starts_with("python") {
        // The interpreter's own options before `-m` (`-u`, `-X opt`, `-W arg`).
        i += 1;
        while let Some(w) = words
            .get(i)
            .filter(|w| w.text.starts_with('-') && w.text != "-m")
        {
            i += if matches!(w.text.as_str(), "-X" | "-W") {
                2
            } else {
                1
            };
        }
        i -= 1;
        let m = words.get(i + 1)?;
        let module = words.get(i + 2)?;
        if m.text == "-m"
            && matches!(
                module.text.as_str(),
                "vllm.entrypoints.openai.api_server" | "vllm.entrypoints.api_server"
            )
        {
            return Some((Form::ApiServer, words[i + 3..].to_vec(), env));
        }
        if m.text == "-m"
            && module.text == "vllm.entrypoints.cli.main"
            && words.get(i + 3).is_some_and(|w| w.text == "serve")
        {
            return Some((Form::Serve, words[i + 4..].to_vec(), env));
        }
        return None;
    }
    if (base == "docker" || base == "podman") && words.get(i + 1).is_some_and(|w| w.text == "run") {
        return docker_run(&words[i + 2..], docker).map(|(f, a)| (f, a, env));
    }
    None
}

/// `docker run [OPTIONS] IMAGE [ARGS]` with a vLLM image: the options it reads, the image's
/// release, and the arguments vLLM's entrypoint parses.
fn docker_run(words: &[Word], d: &mut Docker) -> Option<(Form, Vec<Word>)> {
    let mut i = 0;
    while let Some(w) = words.get(i) {
        let t = w.text.as_str();
        if !t.starts_with('-') {
            break;
        }
        let (name, inline) = match t.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n, Some(v.to_string())),
            _ => (t, None),
        };
        let takes = DOCKER_VALUE_OPTS.contains(&name);
        let value = if takes {
            match inline {
                Some(v) => Some(v),
                None => {
                    i += 1;
                    words.get(i).map(|w| w.text.clone())
                }
            }
        } else {
            None
        };
        match (name, value) {
            ("-e" | "--env", Some(v)) => match v.split_once('=') {
                Some((n, val)) => d.env.push((n.to_string(), val.to_string())),
                // `-e NAME` passes the host's value, unknown here.
                None => d.env.push((v.clone(), format!("${v}"))),
            },
            ("--gpus", Some(v)) => d.gpus = Some(docker_gpus(&v)),
            _ => {}
        }
        i += 1;
    }
    let image = words.get(i)?;
    if !image.text.to_ascii_lowercase().contains("vllm") {
        return None;
    }
    if let Some((_, tag)) = image.text.rsplit_once(':').filter(|(r, _)| !r.is_empty()) {
        d.tag = Some(tag.to_string());
        d.version = release_of_tag(tag);
    }
    let mut rest = &words[i + 1..];
    // `... vllm/vllm-openai vllm serve MODEL`: an explicit command after the image.
    if rest.first().is_some_and(|w| w.text == "vllm")
        && rest.get(1).is_some_and(|w| w.text == "serve")
    {
        rest = &rest[2..];
    }
    Some((Form::Docker, rest.to_vec()))
}

/// `--gpus all`, `--gpus 2`, `--gpus '"device=0,1"'`.
fn docker_gpus(v: &str) -> Option<u32> {
    let v = v.trim_matches(|c| c == '"' || c == '\'');
    if let Some(list) = v.strip_prefix("device=") {
        return u32::try_from(list.split(',').filter(|s| !s.trim().is_empty()).count()).ok();
    }
    v.parse().ok()
}

/// `v0.10.1.1` or `0.9.2` as `0.10.1` / `0.9.2`, `v0.20` as `0.20`; `latest`, `nightly` and digests name none.
pub fn release_of_tag(tag: &str) -> Option<String> {
    let t = tag.strip_prefix('v').unwrap_or(tag);
    let mut parts = t.split(['.', '-', '+']);
    let major: u32 = parts.next()?.parse().ok()?;
    let minor: u32 = parts.next()?.parse().ok()?;
    // The patch is kept (releases within 0.11 differ: 0.11.0 against 0.11.2), its leading
    // digits only ("0.14.0rc2" is 0.14.0).
    let patch: String = parts
        .next()
        .unwrap_or("")
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    Some(if patch.is_empty() {
        format!("{major}.{minor}")
    } else {
        format!("{major}.{minor}.{}", patch.parse::<u32>().ok()?)
    })
}

/// The arguments after the launch: flags by vLLM's table, the model by its position.
fn read_args(out: &mut Imported, args: &[Word]) -> Result<(), ImportError> {
    let mut spec = SpecShortcuts::default();
    read_words(out, args, &mut spec)?;
    spec.merge(out)
}

/// The speculative config's keys given as flags of their own.
#[derive(Default)]
struct SpecShortcuts {
    keys: Vec<(&'static str, String)>,
    /// The removed flags among them, as written.
    legacy: Vec<String>,
    line: usize,
}

impl SpecShortcuts {
    /// Into `speculative_config`, as vLLM 0.33.0 merges `--spec-*` (a key given both ways is
    /// its error); the removed flags are read the same way, with a note.
    fn merge(self, out: &mut Imported) -> Result<(), ImportError> {
        if self.keys.is_empty() {
            return Ok(());
        }
        let mut obj: Vec<(String, json::Value)> = match out.flag("speculative_config") {
            Some(FlagValue::Json(json::Value::Object(m))) => {
                m.iter().map(|(k, v)| (k.to_string(), v.clone())).collect()
            }
            _ => Vec::new(),
        };
        for (key, text) in &self.keys {
            if obj.iter().any(|(k, _)| k == key) {
                return Err(err(
                    "--speculative-config",
                    format!("{key} is given both in the JSON and as a flag (vLLM's ValueError)"),
                ));
            }
            let value = if *key == "num_speculative_tokens" {
                let n = py_int(text).ok_or_else(|| {
                    err(
                        *key,
                        format!("invalid int value: {}", crate::calc::quoted(text)),
                    )
                })?;
                json::parse(&n.to_string()).map_err(|e| err(*key, e.to_string()))?
            } else if *key == "model" && text == "[ngram]" {
                obj.push(("method".into(), json::Value::String("ngram".into())));
                continue;
            } else {
                json::Value::String(text.clone())
            };
            obj.push((key.to_string(), value));
        }
        let text = format!(
            "{{{}}}",
            obj.iter()
                .map(|(k, v)| format!("{}:{v}", json::Value::String(k.clone())))
                .collect::<Vec<_>>()
                .join(",")
        );
        let value = json::parse(&text).map_err(|e| err("--speculative-config", e.to_string()))?;
        if !self.legacy.is_empty() {
            out.notes.push(format!(
                "{} {}: removed from vLLM (0.33.0 refuses {}); read as --speculative-config '{text}'.",
                self.legacy.join(" and "),
                if self.legacy.len() > 1 { "are the flags before --speculative-config" } else { "is a flag from before --speculative-config" },
                if self.legacy.len() > 1 { "them" } else { "it" },
            ));
        }
        out.flags.retain(|f| f.dest != "speculative_config");
        out.flags.push(ReadFlag {
            dest: "speculative_config",
            written: self
                .legacy
                .first()
                .cloned()
                .unwrap_or_else(|| "--spec-*".into()),
            value: FlagValue::Json(value),
            line: self.line,
        });
        Ok(())
    }
}

fn read_words(
    out: &mut Imported,
    args: &[Word],
    spec: &mut SpecShortcuts,
) -> Result<(), ImportError> {
    let mut i = 0;
    let mut options_done = false;
    while let Some(w) = args.get(i) {
        i += 1;
        let t = w.text.as_str();
        if !w.unresolved.is_empty() && !t.starts_with('-') {
            out.ignored.push(Ignored {
                dest: None,
                flag: t.to_string(),
                value: None,
                reason: format!(
                    "a shell variable: value unknown ({})",
                    w.unresolved.join(", ")
                ),
            });
            continue;
        }
        if options_done || !t.starts_with('-') || t == "-" || is_number(t) {
            if out.model.is_none() && out.form != Form::ApiServer {
                out.model = Some(t.to_string());
                out.flags.push(ReadFlag {
                    dest: "model",
                    written: "MODEL".into(),
                    value: FlagValue::Text(t.to_string()),
                    line: w.line,
                });
            } else {
                out.ignored.push(Ignored {
                    dest: None,
                    flag: t.to_string(),
                    value: None,
                    reason: "an argument vllm serve does not take (one MODEL only)".into(),
                });
            }
            continue;
        }
        if t == "--" {
            options_done = true;
            continue;
        }
        let (name, inline) = match t.split_once('=') {
            Some((n, v)) => (n, Some(v.to_string())),
            None => (t, None),
        };
        // `-O3`, `-O=3`, `-O 3`: vLLM rewrites them to `--optimization-level 3`.
        if let Some(level) = t.strip_prefix("-O").filter(|_| !t.starts_with("--")) {
            let value = match level.strip_prefix('=').unwrap_or(level) {
                // `-O VALUE`: a level, or (releases before the optimization level) the
                // compilation config's JSON.
                "" => match args.get(i).filter(|n| !n.text.starts_with('-')) {
                    Some(n) => {
                        i += 1;
                        n.text.clone()
                    }
                    None => String::new(),
                },
                l => l.to_string(),
            };
            let reason = match lookup("-O").map(|f| f.effect) {
                Some(Effect::NotModelled(what)) => format!("not modelled yet: {what}"),
                _ => "does not change the start-up memory plan".into(),
            };
            let level = matches!(value.as_str(), "" | "0" | "1" | "2" | "3");
            out.ignored.push(Ignored {
                dest: Some(if level {
                    "optimization_level"
                } else {
                    "compilation_config"
                }),
                flag: "-O".into(),
                value: Some(value),
                reason,
            });
            continue;
        }
        // The speculative shortcuts: vLLM 0.33.0's `--spec-method/-model/-tokens`, and the
        // flags before `--speculative-config` (removed; older commands still carry them).
        let spec_key = match name.trim_start_matches('-').replace('_', "-").as_str() {
            "spec-method" => Some(("method", false)),
            "spec-model" => Some(("model", false)),
            "spec-tokens" => Some(("num_speculative_tokens", false)),
            "speculative-model" => Some(("model", true)),
            "num-speculative-tokens" => Some(("num_speculative_tokens", true)),
            _ => None,
        };
        if let Some((key, legacy)) = spec_key {
            let value = match inline {
                Some(v) => v,
                None => match args.get(i).filter(|n| !n.text.starts_with("--")) {
                    Some(n) => {
                        i += 1;
                        n.text.clone()
                    }
                    None => {
                        return Err(err(
                            name,
                            "expects a value (vLLM's argparse: \"expected one argument\")",
                        ))
                    }
                },
            };
            if legacy && !spec.legacy.iter().any(|l| l == name) {
                spec.legacy.push(name.to_string());
            }
            spec.keys.retain(|(k, _)| *k != key);
            spec.keys.push((key, value));
            spec.line = w.line;
            continue;
        }
        // `--compilation-config.level 3`: a key of a JSON-valued flag.
        let (base, key) = match name.split_once('.') {
            Some((b, k)) if b.starts_with("--") => (b, Some(k)),
            _ => (name, None),
        };
        let Some((flag, negated)) = resolve(base) else {
            unknown(out, args, &mut i, name, inline);
            continue;
        };
        let value: Option<String> = match (flag.takes, negated) {
            (Takes::Switch { .. }, true) => Some("false".into()),
            (Takes::Switch { .. }, false) => Some(inline.unwrap_or_else(|| "true".into())),
            (Takes::List, _) => {
                let mut items: Vec<String> = inline.into_iter().collect();
                while let Some(n) = args.get(i).filter(|n| !n.text.starts_with("--")) {
                    if items.is_empty() || !n.text.starts_with('-') || is_number(&n.text) {
                        items.push(n.text.clone());
                        i += 1;
                    } else {
                        break;
                    }
                }
                Some(items.join(" "))
            }
            (Takes::Value | Takes::Json, _) => match inline {
                Some(v) => Some(v),
                None => match args.get(i) {
                    Some(n) if !n.text.starts_with("--") => {
                        i += 1;
                        if !n.unresolved.is_empty() && flag.effect == Effect::Read {
                            out.ignored.push(Ignored {
                                dest: Some(flag.dest),
                                flag: name.to_string(),
                                value: Some(n.text.clone()),
                                reason: format!(
                                    "a shell variable: value unknown ({})",
                                    n.unresolved.join(", ")
                                ),
                            });
                            continue;
                        }
                        Some(n.text.clone())
                    }
                    _ => {
                        return Err(err(
                            name,
                            "expects a value (vLLM's argparse: \"expected one argument\")",
                        ))
                    }
                },
            },
        };
        let value = value.unwrap_or_default();
        if !w.unresolved.is_empty() && flag.effect == Effect::Read {
            out.ignored.push(Ignored {
                dest: Some(flag.dest),
                flag: name.to_string(),
                value: Some(value),
                reason: format!(
                    "a shell variable: value unknown ({})",
                    w.unresolved.join(", ")
                ),
            });
            continue;
        }
        match flag.effect {
            Effect::Read if key.is_none() => {
                let v = convert(flag, name, &value)?;
                if flag.dest == "model" {
                    out.model = Some(value.clone());
                    out.flags.retain(|f| f.dest != "model");
                }
                out.flags.retain(|f| f.dest != flag.dest);
                out.flags.push(ReadFlag {
                    dest: flag.dest,
                    written: name.to_string(),
                    value: v,
                    line: w.line,
                });
            }
            Effect::Read => out.ignored.push(Ignored {
                dest: Some(flag.dest),
                flag: name.to_string(),
                value: Some(value),
                reason: "not modelled yet: a single key of this JSON flag (give the whole JSON)"
                    .into(),
            }),
            Effect::NoEffect => out.ignored.push(Ignored {
                dest: Some(flag.dest),
                flag: name.to_string(),
                value: match flag.takes {
                    Takes::Switch { .. } if value == "true" => None,
                    _ => Some(value),
                },
                reason: "does not change the start-up memory plan".into(),
            }),
            Effect::NotModelled(what) => {
                let value = match flag.takes {
                    Takes::Switch { .. } if value == "true" => None,
                    _ => Some(value),
                };
                if flag.dest == "config" {
                    out.notes.push(format!(
                        "--config {}: the file is not available here, so its settings are missing; paste its flags into the command.",
                        value.as_deref().unwrap_or("")
                    ));
                }
                out.ignored.push(Ignored {
                    dest: Some(flag.dest),
                    flag: name.to_string(),
                    value,
                    reason: format!("not modelled yet: {what}"),
                });
            }
        }
    }
    Ok(())
}

/// A flag vLLM 0.33.0 does not have: its value (if the next word looks like one) goes with it.
fn unknown(out: &mut Imported, args: &[Word], i: &mut usize, name: &str, inline: Option<String>) {
    let value = inline.or_else(|| {
        let n = args
            .get(*i)
            .filter(|n| !n.text.starts_with('-') || is_number(&n.text))?;
        // A value, unless it is the model (`vllm serve --foo MODEL` is ambiguous; a path or a
        // repo id reads as the model).
        if out.model.is_none() && out.form != Form::ApiServer && n.text.contains('/') {
            return None;
        }
        *i += 1;
        Some(n.text.clone())
    });
    out.ignored.push(Ignored {
        dest: None,
        flag: name.to_string(),
        value,
        reason: "not a flag of vLLM 0.33.0 (removed, misspelt, or newer): vllm serve 0.33.0 would refuse it".into(),
    });
}

/// A flag as vLLM's parser finds it, and whether the spelling negates it: the name, `--no-X`
/// of a negatable switch, the `enable-`/`disable-` twin vLLM's `EnableDisableAction` accepts,
/// or a unique prefix of a long name (argparse's abbreviations).
fn resolve(name: &str) -> Option<(&'static VllmFlag, bool)> {
    if let Some(f) = lookup(name) {
        return Some((f, false));
    }
    let negatable = |f: &&VllmFlag| matches!(f.takes, Takes::Switch { negatable: true });
    let long = name.strip_prefix("--")?.replace('_', "-");
    if let Some(rest) = long.strip_prefix("no-") {
        if let Some(f) = flags::lookup(rest).filter(negatable) {
            return Some((f, true));
        }
    }
    let twin = if let Some(rest) = long.strip_prefix("disable-") {
        Some(format!("enable-{rest}"))
    } else {
        long.strip_prefix("enable-")
            .map(|rest| format!("disable-{rest}"))
    };
    if let Some(f) = twin.and_then(|t| flags::lookup(&t)).filter(negatable) {
        return Some((f, true));
    }
    if long.len() >= 3 && !long.contains('.') {
        let mut hits = flags::FLAGS
            .iter()
            .filter(|f| f.name.starts_with(long.as_str()));
        if let (Some(f), None) = (hits.next(), hits.next()) {
            return Some((f, false));
        }
    }
    None
}

fn lookup(name: &str) -> Option<&'static VllmFlag> {
    flags::lookup(name)
}

fn is_number(t: &str) -> bool {
    parse_f64(t).is_some()
}

/// A count as `calc::units::parse_count` reads it (vLLM's `human_readable_int`), in `i64`.
fn count(t: &str) -> Result<i64, String> {
    let n = crate::calc::units::parse_count(t).map_err(|e| e.0)?;
    i64::try_from(n).map_err(|_| format!("{} is too large", crate::calc::quoted(t)))
}

/// The value as vLLM's parser gives it, for the flags Headroom reads.
fn convert(flag: &VllmFlag, written: &str, value: &str) -> Result<FlagValue, ImportError> {
    let bad = |m: String| err(written, m);
    Ok(match flag.dest {
        "tensor_parallel_size"
        | "pipeline_parallel_size"
        | "data_parallel_size"
        | "max_num_seqs"
        | "block_size"
        | "num_gpu_blocks_override" => FlagValue::Int(
            py_int(value)
                .ok_or_else(|| bad(format!("invalid int value: {value:?} (vLLM's argparse)")))?,
        ),
        // vLLM's human_readable_int (`32k`, `32K`), as the page and the CLI read counts; `10e9`
        // too, which vLLM's int() refuses but means plainly.
        "max_num_batched_tokens" | "kv_cache_memory_bytes" => {
            FlagValue::Int(count(value).map_err(bad)?)
        }
        "max_model_len" => {
            let t = value.trim();
            if t == "-1" || t.eq_ignore_ascii_case("auto") {
                FlagValue::Int(-1)
            } else {
                FlagValue::Int(count(t).map_err(bad)?)
            }
        }
        "gpu_memory_utilization" => FlagValue::Float(
            parse_f64(value.trim())
                .ok_or_else(|| bad(format!("invalid float value: {value:?} (vLLM's argparse)")))?,
        ),
        "enable_expert_parallel"
        | "enforce_eager"
        | "disable_hybrid_kv_cache_manager"
        | "async_scheduling" => FlagValue::Bool(match value.trim().to_ascii_lowercase().as_str() {
            "true" | "1" | "yes" => true,
            "false" | "0" | "no" => false,
            _ => return Err(bad(format!("{value:?} is not true or false"))),
        }),
        "speculative_config" => {
            FlagValue::Json(json::parse(value).map_err(|e| bad(format!("not valid JSON: {e}")))?)
        }
        _ => FlagValue::Text(value.to_string()),
    })
}

/// The environment's part: the visible GPUs, the layer partition, the engine and allocator.
fn read_env(out: &mut Imported) -> Result<(), ImportError> {
    let env = out.env.clone();
    for (name, value) in &env {
        let unresolved = value.contains('$') || value.contains('`');
        match name.as_str() {
            "CUDA_VISIBLE_DEVICES" | "NVIDIA_VISIBLE_DEVICES" | "HIP_VISIBLE_DEVICES" | "ROCR_VISIBLE_DEVICES" if !unresolved => {
                if value.trim() == "all" {
                    continue;
                }
                let n = value.split(',').filter(|s| !s.trim().is_empty()).count();
                out.gpus_visible = u32::try_from(n).ok();
            }
            "VLLM_USE_V1" if value.trim() == "0" => {
                return Err(err(
                    "VLLM_USE_V1",
                    "0 selects vLLM's V0 engine, whose start-up Headroom does not plan (it plans the V1 engine, the only one from vLLM 0.11); remove it to plan the V1 engine",
                ));
            }
            "PYTORCH_CUDA_ALLOC_CONF" => out.notes.push(format!(
                "PYTORCH_CUDA_ALLOC_CONF={value}: the allocator's settings change how much of what PyTorch reserves is free, which Headroom's figures do not model (seed 000's three-card start broke with expandable_segments)."
            )),
            "VLLM_PP_LAYER_PARTITION" | "CUDA_VISIBLE_DEVICES" | "VLLM_USE_V1" => {}
            "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS" => out.ignored.push(Ignored {
                dest: None,
                flag: name.clone(),
                value: Some(value.clone()),
                reason: "not modelled yet: Headroom applies the release's default (subtracted from 0.20, not before)".into(),
            }),
            n if n.starts_with("VLLM_") => out.ignored.push(Ignored {
                dest: None,
                flag: name.clone(),
                value: Some(value.clone()),
                reason: "an environment variable Headroom does not read".into(),
            }),
            _ => {}
        }
    }
    Ok(())
}

impl Imported {
    /// A flag read, by vLLM's destination name.
    pub fn flag(&self, dest: &str) -> Option<&FlagValue> {
        self.flags.iter().find(|f| f.dest == dest).map(|f| &f.value)
    }

    /// An environment variable's value.
    pub fn env(&self, name: &str) -> Option<&str> {
        self.env
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// What was read as Headroom's inputs (texts the one builder takes), in the order read,
    /// and `--speculative-config`'s JSON text, which each front door maps onto its inputs.
    /// The model is left to the front door: a catalog id, a repo, or a config.json it finds.
    pub fn inputs(&self) -> (Vec<(Input, String)>, Option<String>) {
        let mut pairs: Vec<(Input, String)> = Vec::new();
        let mut spec = None;
        let async_given = self.flag("async_scheduling").is_some();
        for f in &self.flags {
            let text = f.value.to_string();
            let input = match f.dest {
                "tensor_parallel_size" => Input::Tp,
                "pipeline_parallel_size" => Input::Pp,
                "data_parallel_size" => Input::Dp,
                "gpu_memory_utilization" => Input::Util,
                "max_model_len" => Input::MaxModelLen,
                "max_num_seqs" => Input::MaxNumSeqs,
                "max_num_batched_tokens" => Input::MaxNumBatchedTokens,
                "kv_cache_dtype" => Input::KvDtype,
                "quantization" => Input::Quantization,
                "dtype" => Input::Dtype,
                "block_size" => Input::BlockSize,
                "kv_cache_memory_bytes" => Input::KvBytes,
                "enable_expert_parallel" => Input::Ep,
                "enforce_eager" => Input::Eager,
                "num_gpu_blocks_override" => Input::NumGpuBlocksOverride,
                "disable_hybrid_kv_cache_manager" => Input::NoHybrid,
                "attention_backend" => Input::AttnBackend,
                "async_scheduling" => {
                    pairs.push((
                        Input::NoAsync,
                        (f.value == FlagValue::Bool(false)).to_string(),
                    ));
                    continue;
                }
                // vLLM turns async scheduling off with the Ray executor.
                "distributed_executor_backend" if text == "ray" && !async_given => {
                    pairs.push((Input::NoAsync, "true".into()));
                    continue;
                }
                "speculative_config" => {
                    spec = Some(text);
                    continue;
                }
                _ => continue,
            };
            pairs.push((input, text));
        }
        if let Some(p) = self.env("VLLM_PP_LAYER_PARTITION") {
            pairs.push((Input::PpPartition, p.to_string()));
        }
        if let Some(n) = self.gpus_visible {
            pairs.push((Input::Gpus, n.to_string()));
        }
        if let Some(v) = &self.vllm_version {
            pairs.push((Input::Vllm, v.clone()));
        }
        (pairs, spec)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_three_forms() {
        let a = import("vllm serve Qwen/Qwen3-8B --tensor-parallel-size 2").unwrap();
        assert_eq!(
            (a.form, a.model.as_deref()),
            (Form::Serve, Some("Qwen/Qwen3-8B"))
        );
        let b = import("python3 -m vllm.entrypoints.openai.api_server --model Qwen/Qwen3-8B -tp=2")
            .unwrap();
        assert_eq!(
            (b.form, b.model.as_deref()),
            (Form::ApiServer, Some("Qwen/Qwen3-8B"))
        );
        assert_eq!(b.flag("tensor_parallel_size"), Some(&FlagValue::Int(2)));
        let c = import("docker run --runtime nvidia --gpus '\"device=0,1\"' -e HF_TOKEN=x -p 8000:8000 --ipc=host vllm/vllm-openai:v0.10.1.1 --model Qwen/Qwen3-8B -tp 2").unwrap();
        assert_eq!(c.form, Form::Docker);
        assert_eq!(c.vllm_version.as_deref(), Some("0.10.1"));
        assert_eq!(c.gpus_visible, Some(2));
        assert_eq!(c.env("HF_TOKEN"), Some("x"));
        assert_eq!(c.model.as_deref(), Some("Qwen/Qwen3-8B"));
    }

    #[test]
    fn numbers_as_vllm_reads_them() {
        let c = import("vllm serve m --max-model-len 32k --max-num-batched-tokens 8K --kv-cache-memory-bytes 10e9 --gpu-memory-utilization .9").unwrap();
        assert_eq!(c.flag("max_model_len"), Some(&FlagValue::Int(32_000)));
        assert_eq!(
            c.flag("max_num_batched_tokens"),
            Some(&FlagValue::Int(8192))
        );
        assert_eq!(
            c.flag("kv_cache_memory_bytes"),
            Some(&FlagValue::Int(10_000_000_000))
        );
        assert_eq!(
            c.flag("gpu_memory_utilization"),
            Some(&FlagValue::Float(0.9))
        );
        let e = import("vllm serve m -tp four").unwrap_err();
        assert_eq!(e.input, "-tp");
        let e = import("vllm serve m --max-model-len 1.5K").unwrap_err();
        assert!(e.message.contains("Decimals"), "{e}");
        assert_eq!(
            import("vllm serve m --max-model-len auto")
                .unwrap()
                .flag("max_model_len"),
            Some(&FlagValue::Int(-1))
        );
    }

    #[test]
    fn switches_and_negations() {
        let c =
            import("vllm serve m --enforce-eager --no-async-scheduling --enable_expert_parallel")
                .unwrap();
        assert_eq!(c.flag("enforce_eager"), Some(&FlagValue::Bool(true)));
        assert_eq!(c.flag("async_scheduling"), Some(&FlagValue::Bool(false)));
        assert_eq!(
            c.flag("enable_expert_parallel"),
            Some(&FlagValue::Bool(true))
        );
        let (pairs, _) = c.inputs();
        assert!(pairs.contains(&(Input::NoAsync, "true".into())));
        assert!(pairs.contains(&(Input::Eager, "true".into())));
    }

    #[test]
    fn every_flag_is_accounted_for() {
        let c = import("vllm serve m --port 8000 --enable-lora --frobnicate 3 --served-model-name x -tp 2 $EXTRA").unwrap();
        let names: Vec<&str> = c.ignored.iter().map(|i| i.flag.as_str()).collect();
        assert_eq!(
            names,
            [
                "--port",
                "--enable-lora",
                "--frobnicate",
                "--served-model-name",
                "$EXTRA"
            ]
        );
        assert!(
            c.ignored[1].reason.starts_with("not modelled yet"),
            "{:?}",
            c.ignored[1]
        );
        assert!(
            c.ignored[2].reason.contains("not a flag"),
            "{:?}",
            c.ignored[2]
        );
        assert_eq!(c.ignored[2].value.as_deref(), Some("3"));
        assert!(c.ignored[4].reason.contains("shell variable"));
    }

    #[test]
    fn environment_and_variables() {
        let c = import("export VLLM_PP_LAYER_PARTITION=14,15,14\nexport PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\nMEM=0.85\nCUDA_VISIBLE_DEVICES=0,1,2 vllm serve m -pp 3 --gpu-memory-utilization $MEM --max-num-seqs $SEQS").unwrap();
        assert_eq!(c.gpus_visible, Some(3));
        assert_eq!(
            c.flag("gpu_memory_utilization"),
            Some(&FlagValue::Float(0.85))
        );
        assert!(c.flag("max_num_seqs").is_none());
        assert!(c
            .ignored
            .iter()
            .any(|i| i.flag == "--max-num-seqs" && i.reason.contains("$SEQS")));
        assert!(c.notes.iter().any(|n| n.contains("expandable_segments")));
        let (pairs, _) = c.inputs();
        assert!(pairs.contains(&(Input::PpPartition, "14,15,14".into())));
        assert!(pairs.contains(&(Input::Gpus, "3".into())));
        let e = import("VLLM_USE_V1=0 vllm serve m").unwrap_err();
        assert_eq!(e.input, "VLLM_USE_V1");
    }

    #[test]
    fn the_page_gets_catalog_ids_and_the_speculative_inputs() {
        let c = import("vllm serve meta-llama/Llama-3.1-8B-Instruct -tp 2 --speculative-config '{\"method\": \"ngram\", \"num_speculative_tokens\": 4}'").unwrap();
        let p = c.page_inputs();
        assert_eq!(p.pairs[0], (Input::Model, "llama-3.1-8b-instruct".into()));
        assert!(p.pairs.contains(&(Input::Tp, "2".into())));
        assert!(p.pairs.contains(&(Input::Spec, "ngram".into())));
        assert!(p.pairs.contains(&(Input::SpecTokens, "4".into())));
        assert_eq!(p.unknown_model, None);
        let c = import("vllm serve org/not-in-the-catalog --max-model-len 8k").unwrap();
        let p = c.page_inputs();
        assert_eq!(p.unknown_model.as_deref(), Some("org/not-in-the-catalog"));
        assert_eq!(p.pairs, [(Input::MaxModelLen, "8000".into())]);
    }

    #[test]
    fn not_a_command() {
        let e = import("{\"num_hidden_layers\": 32}").unwrap_err();
        assert!(e.message.contains("config.json"), "{e}");
        assert!(import("").is_err());
        assert!(import("vllm serve m --speculative-config '{bad'")
            .unwrap_err()
            .message
            .contains("JSON"));
        assert!(import("vllm serve m --max-model-len")
            .unwrap_err()
            .message
            .contains("expects a value"));
    }
}
