//! The `headroom` command line: vLLM's flags in, the same `Scenario` the page builds, the same
//! `Plan` out as a readable ledger or JSON.
//!
//! The flags are the input schema's rows ([`crate::input::schema::ROWS`]) plus the CLI's own few
//! ([`args::CLI_ONLY`]); the lexer ([`args`]) turns them into the inputs' texts and the one
//! builder ([`crate::input::scenario()`]) makes the scenario, as for the page. Flags keep vLLM's
//! own names (`--tensor-parallel-size` / `-tp`, `--gpu-memory-utilization`, ...), accept
//! `--flag value` and `--flag=value`, and, as vLLM's parser does, underscores for dashes.
//! `headroom link` writes the page's link for a scenario and `headroom plan --url` plans one,
//! through the page's own query codec. [`run`] does everything but touch the process: it
//! returns the exit code and the text for stdout and stderr, so it is tested without spawning
//! anything. Exit codes: 0 when the plan starts, 1 when a check fails, 2 for bad input (the
//! message names the flag).

pub mod args;
mod build;
pub mod json;
mod logs;
mod solve;
mod spec;
mod text;

use std::fmt;

use crate::calc::input::Input;
use crate::calc::scenario::Scenario;
use crate::calc::units::UnitSystem;
use crate::calc::version::VllmVersion;
use crate::calc::{self, CalcError};
use crate::input::InputError;

pub use crate::input::schema::Section;
pub use args::{help, Flag, CLI_ONLY};
pub use solve::Target;
pub use spec::{parse_speculative, resolve_model};
pub use text::render;

/// Exit code: the engine starts.
pub const EXIT_STARTS: i32 = 0;
/// Exit code: a check fails (the engine would not start), or a solver found no setting.
pub const EXIT_FAILS: i32 = 1;
/// Exit code: the input is invalid (unknown flag, bad value, unknown id, unreadable config).
pub const EXIT_BAD_INPUT: i32 = 2;

/// The GPU a scenario without `--gpu`, `--gpu-memory` or `--example` plans for: the page's.
pub const DEFAULT_GPU: &str = crate::input::values::DEFAULT_GPU;

/// The page a link opens when `headroom link` is given no `--base`: `headroom-web`'s address.
pub const DEFAULT_BASE: &str = "http://127.0.0.1:8080/";

/// Bad input, naming the flag (or `MODEL`) at fault.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CliError {
    /// `--tensor-parallel-size`, `MODEL`, `--for`, ... or empty for the command itself.
    pub flag: String,
    pub message: String,
}

impl CliError {
    pub fn new(flag: impl Into<String>, message: impl Into<String>) -> CliError {
        CliError {
            flag: flag.into(),
            message: message.into(),
        }
    }

    /// A `calc` error, under the flag its field names. `CalcError` messages often begin with the
    /// field's own name ("tensor-parallel-size 3 does not divide ..."); the flag already says it.
    pub fn from_calc(e: &CalcError) -> CliError {
        let field = e.field();
        let flag = flag_for_field(field);
        let msg = e.message();
        let message = if flag.starts_with("--") {
            without_name(msg, field)
        } else {
            msg
        };
        CliError::new(flag, message)
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.flag.is_empty() {
            write!(f, "error: {}", self.message)
        } else {
            write!(f, "error: {}: {}", self.flag, self.message)
        }
    }
}

/// A message without the flag name it begins with: "tensor-parallel-size: 3 ..." and
/// "tensor-parallel-size 3 does not ..." read "--tensor-parallel-size: 3 ..." once the flag
/// stands in front; a sentence that only starts with the word ("weights of 0 bytes") keeps it.
fn without_name<'a>(message: &'a str, name: &str) -> &'a str {
    let Some(rest) = message.strip_prefix(name) else {
        return message;
    };
    if let Some(rest) = rest.strip_prefix(": ") {
        return rest;
    }
    rest.strip_prefix(' ')
        .filter(|rest| rest.starts_with(|c: char| c.is_ascii_digit() || c == '"' || c == '-'))
        .unwrap_or(message)
}

/// The flag that gives an input on the command line: the speculative config's keys are
/// `--speculative-config`, a pasted config is MODEL's file.
fn flag_for_input(input: Input) -> String {
    match input {
        Input::Model | Input::Config => "MODEL".into(),
        Input::Spec | Input::SpecTokens | Input::DraftModel => "--speculative-config".into(),
        other => format!("--{}", other.flag()),
    }
}

impl CliError {
    /// An input error of the one builder, under the flag that gave the input.
    pub fn from_input(e: &InputError) -> CliError {
        let flag = flag_for_input(e.field);
        let message = without_name(&e.message, e.field.flag());
        // A key of the speculative config keeps its name ("num-speculative-tokens: ...").
        if flag == "--speculative-config" && e.field != Input::Spec {
            return CliError::new(flag, e.message.clone());
        }
        CliError::new(flag, message)
    }
}

/// The flag that sets a `CalcError` field; config fields belong to `MODEL`.
fn flag_for_field(field: &str) -> String {
    if args::flags().iter().any(|f| f.long == field) {
        return format!("--{field}");
    }
    match field {
        "extras" => "--for".into(),
        // The page's draft-model input is the speculative config's `model` here.
        "draft-model" | "num-speculative-tokens" => "--speculative-config".into(),
        _ => "MODEL".into(),
    }
}

/// What the user asked for.
#[derive(Clone, Debug, PartialEq)]
pub enum Command {
    /// `--help` text for the command (`None`: the overview).
    Help(Option<&'static str>),
    Version,
    Models {
        json: bool,
    },
    Gpus {
        json: bool,
    },
    Examples {
        json: bool,
    },
    Plan(Invocation),
    Solve(Invocation, Target),
    /// `headroom link`: the page's address for the scenario.
    Link(String),
    /// `headroom command`: the scenario as a `vllm serve` command (and what it leaves out).
    Command {
        exported: crate::import::export::Exported,
        json: bool,
    },
    /// `headroom import-command`: what a launch command says.
    ImportCommand {
        imported: crate::import::command::Imported,
        json: bool,
    },
    /// `headroom import-log`: what a startup log says.
    ImportLog {
        log: Box<crate::import::log::Log>,
        json: bool,
    },
}

/// `plan --log`: the log, and the scenario without its measurements, whose plan predicts the
/// figures the log printed.
#[derive(Clone, Debug, PartialEq)]
pub struct Replay {
    pub log: crate::import::log::Log,
    pub predicted: Scenario,
}

/// A `plan` or `solve` invocation: the scenario and how to print the answer.
#[derive(Clone, Debug, PartialEq)]
pub struct Invocation {
    pub scenario: Scenario,
    /// The inputs it was built from: a plan's error about a value only an example set says so.
    pub state: crate::input::UrlState,
    pub json: bool,
    pub unit: UnitSystem,
    /// What the front door noticed and the plan cannot say (a launch command's flags that
    /// may change the memory but are not modelled); printed on stderr as `note:` lines.
    pub notes: Vec<String>,
    /// `--log`: the log replayed against the plan (its comparison is printed with it).
    pub replay: Option<Box<Replay>>,
}

/// What `run` produced: the exit code and the text for each stream.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Outcome {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Outcome {
    fn ok(code: i32, stdout: String) -> Outcome {
        Outcome {
            code,
            stdout,
            stderr: String::new(),
        }
    }

    fn bad(e: &CliError) -> Outcome {
        Outcome {
            code: EXIT_BAD_INPUT,
            stdout: String::new(),
            stderr: format!("{e}\n"),
        }
    }
}

/// Runs the command line (without the program name). Never panics on any input. A `-` where
/// a command's text goes reads nothing: [`run_with_stdin`] gives it the process's stdin.
pub fn run(args: &[String]) -> Outcome {
    run_with_stdin(args, &mut std::io::empty())
}

/// The longest text read from stdin (bytes): the importers' own limit, and one byte more so
/// that a longer text is refused by them with its size.
const MAX_STDIN: u64 = crate::import::shell::MAX_TEXT as u64 + 1;

/// Reads stdin for a `-` argument, as UTF-8 text of at most [`MAX_STDIN`] bytes.
fn read_stdin(stdin: &mut dyn std::io::Read, flag: &str) -> Result<String, CliError> {
    use std::io::Read as _;
    let mut bytes = Vec::new();
    stdin
        .take(MAX_STDIN)
        .read_to_end(&mut bytes)
        .map_err(|e| CliError::new(flag, format!("stdin cannot be read: {e}")))?;
    String::from_utf8(bytes).map_err(|_| CliError::new(flag, "stdin is not UTF-8 text"))
}

/// [`run`], with `stdin` read where an argument is `-`.
pub fn run_with_stdin(args: &[String], stdin: &mut dyn std::io::Read) -> Outcome {
    let cmd = match parse_with_stdin(args, stdin) {
        Ok(c) => c,
        Err(e) => return Outcome::bad(&e),
    };
    match cmd {
        Command::Help(topic) => Outcome::ok(EXIT_STARTS, help(topic)),
        Command::Version => Outcome::ok(
            EXIT_STARTS,
            format!(
                "headroom {} (vLLM {}, 0.11.0, 0.11.2, 0.12, 0.13 and 0.14 to {} rules)\n",
                env!("CARGO_PKG_VERSION"),
                VllmVersion::OLDEST,
                VllmVersion::CURRENT
            ),
        ),
        Command::Models { json } => Outcome::ok(EXIT_STARTS, text::list_models(json)),
        Command::Gpus { json } => Outcome::ok(EXIT_STARTS, text::list_gpus(json)),
        Command::Examples { json } => Outcome::ok(EXIT_STARTS, text::list_examples(json)),
        Command::Link(url) => Outcome::ok(EXIT_STARTS, format!("{url}\n")),
        Command::Command { exported, json } => Outcome::ok(
            EXIT_STARTS,
            if json {
                pretty(&json::exported(&exported))
            } else {
                exported.text
            },
        ),
        Command::ImportCommand { imported, json } => Outcome::ok(
            EXIT_STARTS,
            if json {
                pretty(&json::imported(&imported))
            } else {
                text::imported(&imported)
            },
        ),
        Command::ImportLog { log, json } => Outcome::ok(
            EXIT_STARTS,
            if json {
                pretty(&logs::log_json(&log))
            } else {
                logs::log_view(&log)
            },
        ),
        Command::Plan(inv) => match calc::plan(&inv.scenario) {
            Err(e) => Outcome::bad(&CliError::from_calc(&crate::input::attribute(
                &inv.state, e,
            ))),
            Ok(p) => {
                let code = if p.starts() { EXIT_STARTS } else { EXIT_FAILS };
                let replay = inv
                    .replay
                    .as_ref()
                    .map(|r| logs::replay_figures(&r.log, &r.predicted));
                let text = if inv.json {
                    let mut doc = json::document(&inv.scenario, &p);
                    if let (Some((c, d, _)), Some(o)) = (&replay, doc.as_object_mut()) {
                        o.insert("comparison".into(), logs::comparison_json(c));
                        o.insert("derived".into(), logs::derived_json(d));
                    }
                    pretty(&doc)
                } else {
                    let mut t = render(&inv.scenario, &p, inv.unit);
                    if let Some((c, d, _)) = &replay {
                        t.push_str(&logs::comparison_view(c, d));
                    }
                    t
                };
                let mut o = Outcome::ok(code, text);
                let mut all = inv.notes.clone();
                all.extend(replay.and_then(|(_, _, why)| why));
                o.stderr = notes(&all);
                o
            }
        },
        Command::Solve(inv, target) => match solve::run_solve(&inv, &target) {
            Err(e) => Outcome::bad(&e),
            Ok(o) => o,
        },
    }
}

/// The `note:` lines of an invocation, for stderr.
fn notes(notes: &[String]) -> String {
    notes.iter().map(|n| format!("note: {n}\n")).collect()
}

fn pretty(v: &serde_json::Value) -> String {
    let mut s = serde_json::to_string_pretty(v).unwrap_or_else(|_| "null".into());
    s.push('\n');
    s
}

/// Parses the command line (without the program name); a `-` text reads nothing.
pub fn parse(args: &[String]) -> Result<Command, CliError> {
    parse_with_stdin(args, &mut std::io::empty())
}

/// [`parse`], with `stdin` read where an argument is `-`.
pub fn parse_with_stdin(
    args: &[String],
    stdin: &mut dyn std::io::Read,
) -> Result<Command, CliError> {
    let Some(first) = args.first() else {
        return Err(CliError::new(
            "",
            "no command; try `headroom plan MODEL [flags]` or `headroom --help`",
        ));
    };
    let rest = &args[1..];
    match first.as_str() {
        "-h" | "--help" | "help" => Ok(Command::Help(rest.first().and_then(|t| topic(t)))),
        "-V" | "--version" | "version" => Ok(Command::Version),
        "models" | "gpus" | "examples" => {
            let mut as_json = false;
            for a in rest {
                match a.as_str() {
                    // Switches take =true|false everywhere (docs/cli.md).
                    "--json" | "--json=true" => as_json = true,
                    "--json=false" | "--no-json" => as_json = false,
                    "-h" | "--help" => return Ok(Command::Help(topic(first))),
                    other => {
                        return Err(CliError::new(
                            other,
                            format!("`headroom {first}` takes only --json"),
                        ))
                    }
                }
            }
            Ok(match first.as_str() {
                "models" => Command::Models { json: as_json },
                "gpus" => Command::Gpus { json: as_json },
                _ => Command::Examples { json: as_json },
            })
        }
        "import-command" => {
            let mut as_json = false;
            let mut text: Option<&String> = None;
            for a in rest {
                match a.as_str() {
                    "--json" | "--json=true" => as_json = true,
                    "--json=false" | "--no-json" => as_json = false,
                    "-h" | "--help" => return Ok(Command::Help(topic(first))),
                    _ if text.is_none() => text = Some(a),
                    other => {
                        return Err(CliError::new(
                            other,
                            "`headroom import-command` takes one TEXT (quote the whole command, or give - and pipe it) and --json",
                        ))
                    }
                }
            }
            let text = text.ok_or_else(|| {
                CliError::new(
                    "TEXT",
                    "missing: give the command as one quoted argument, or - to read it from stdin",
                )
            })?;
            let text = if text == "-" {
                read_stdin(stdin, "TEXT")?
            } else {
                text.clone()
            };
            let imported = crate::import::command::import(&text)
                .map_err(|e| CliError::new("TEXT", e.to_string()))?;
            Ok(Command::ImportCommand {
                imported,
                json: as_json,
            })
        }
        "import-log" => {
            let mut as_json = false;
            let mut file: Option<&String> = None;
            for a in rest {
                match a.as_str() {
                    "--json" | "--json=true" => as_json = true,
                    "--json=false" | "--no-json" => as_json = false,
                    "-h" | "--help" => return Ok(Command::Help(topic(first))),
                    _ if file.is_none() => file = Some(a),
                    other => {
                        return Err(CliError::new(
                            other,
                            "`headroom import-log` takes one FILE (or - to read the log from stdin) and --json",
                        ))
                    }
                }
            }
            let file = file.ok_or_else(|| {
                CliError::new(
                    "FILE",
                    "missing: give the log's path, or - to read it from stdin",
                )
            })?;
            let log = logs::read_log(file, stdin, "FILE")?;
            Ok(Command::ImportLog {
                log: Box::new(log),
                json: as_json,
            })
        }
        "plan" | "solve" | "link" | "command" => {
            let cmd = match first.as_str() {
                "plan" => args::Cmd::Plan,
                "solve" => args::Cmd::Solve,
                "command" => args::Cmd::Command,
                _ => args::Cmd::Link,
            };
            let mut a = args::lex(rest, cmd)?;
            if a.help {
                return Ok(Command::Help(topic(first)));
            }
            if a.values.get("from-command").is_some_and(|t| t == "-") {
                let t = read_stdin(stdin, "--from-command")?;
                a.values.insert("from-command", t);
            }
            match cmd {
                args::Cmd::Link => build::link(&a).map(Command::Link),
                args::Cmd::Command => build::command(&a),
                args::Cmd::Plan if a.values.contains_key("url") => {
                    build::from_url(&a).map(Command::Plan)
                }
                args::Cmd::Plan => {
                    let log = match a.values.get("log") {
                        Some(f) => Some(logs::read_log(f, stdin, "--log")?),
                        None => None,
                    };
                    build::invocation_with_log(&a, log).map(Command::Plan)
                }
                args::Cmd::Solve => {
                    let inv = build::invocation(&a)?;
                    let text = a.values.get("for").ok_or_else(|| {
                        CliError::new(
                            "--for",
                            "solve needs a target: kv-pin, utilization:N, max-model-len or pp-partition:EXTRAS[:PINNED]",
                        )
                    })?;
                    Ok(Command::Solve(inv, Target::parse(text)?))
                }
            }
        }
        other => Err(CliError::new(
            "",
            format!(
                "unknown command {}; the commands are plan, solve, link, command, import-command, import-log, models, gpus, examples (headroom --help)", crate::calc::quoted(other)
            ),
        )),
    }
}

fn topic(t: &str) -> Option<&'static str> {
    [
        "plan",
        "solve",
        "link",
        "command",
        "import-command",
        "import-log",
        "models",
        "gpus",
        "examples",
    ]
    .into_iter()
    .find(|c| *c == t)
}

#[cfg(test)]
mod tests {
    use super::args::{lex, Cmd};
    use super::*;
    use crate::calc::units::parse_count;
    use crate::input::values::parse_bytes_list;

    /// The CLI's lists are the page's (`input::values::parse_bytes_list`).
    fn bytes_list(_flag: &str, text: &str) -> Result<Vec<Option<u64>>, String> {
        parse_bytes_list(text)
    }

    fn args(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn counts_take_vllm_forms() {
        assert_eq!(parse_count("4096").unwrap(), 4096);
        assert_eq!(parse_count("128k").unwrap(), 128_000);
        assert_eq!(parse_count("128K").unwrap(), 131_072);
        assert_eq!(parse_count("1e6").unwrap(), 1_000_000);
        assert!(parse_count("1.5").is_err());
        assert!(parse_count("-3").is_err());
        assert!(parse_count("four").is_err());
        assert!(parse_count("").is_err());
        assert!(parse_count("1e400").is_err());
    }

    #[test]
    fn lists_split_on_commas_but_not_thousands() {
        assert_eq!(
            bytes_list("w", "1,073,741,824").unwrap(),
            vec![Some(1 << 30)]
        );
        assert_eq!(
            bytes_list("w", "1GiB,-,2GiB").unwrap(),
            vec![Some(1 << 30), None, Some(2 << 30)]
        );
        assert_eq!(
            bytes_list("w", "35278831616,35278831616").unwrap(),
            vec![Some(35_278_831_616), Some(35_278_831_616)]
        );
        assert!(bytes_list("w", "-,-").is_err());
    }

    #[test]
    fn flags_lex_in_every_spelling() {
        let a = lex(
            &args(&[
                "m",
                "-tp",
                "4",
                "--pipeline_parallel_size=2",
                "--enforce-eager",
                "--no-json",
                "--max-model-len",
                "-1",
            ]),
            Cmd::Plan,
        )
        .unwrap();
        assert_eq!(a.positional, vec!["m"]);
        assert_eq!(a.values["tensor-parallel-size"], "4");
        assert_eq!(a.values["pipeline-parallel-size"], "2");
        assert_eq!(a.values["enforce-eager"], "true");
        assert_eq!(a.values["json"], "false");
        assert_eq!(a.values["max-model-len"], "-1");
    }

    #[test]
    fn unknown_flags_suggest() {
        let e = lex(&args(&["--tensor-paralel-size", "4"]), Cmd::Plan).unwrap_err();
        assert!(e.message.contains("--tensor-parallel-size"), "{e}");
        let e = lex(&args(&["--for", "kv-pin"]), Cmd::Plan).unwrap_err();
        assert_eq!(e.flag, "--for");
    }

    #[test]
    fn calc_errors_name_the_flag() {
        let e = CalcError::new(
            calc::Input::Tp,
            "tensor-parallel-size 3 does not divide 64 attention heads",
        );
        assert_eq!(
            CliError::from_calc(&e).to_string(),
            "error: --tensor-parallel-size: 3 does not divide 64 attention heads"
        );
        let e = CalcError::new(
            calc::Culprit::ConfigKey("num_hidden_layers"),
            "num_hidden_layers must be at least 1",
        );
        assert_eq!(
            CliError::from_calc(&e).to_string(),
            "error: MODEL: num_hidden_layers must be at least 1"
        );
    }

    #[test]
    fn speculative_config_reads_vllm_json() {
        let s = parse_speculative(r#"{"method":"deepseek_mtp","num_speculative_tokens":2}"#)
            .unwrap()
            .unwrap();
        assert_eq!(s.method.as_str(), "deepseek_mtp");
        assert_eq!(s.num_speculative_tokens, 2);
        assert!(!s.count_assumed);
        // An EAGLE head's count may come from its config, which is not read: 1, noted.
        let s =
            parse_speculative(r#"{"method":"eagle","model":"yuhuili/EAGLE-LLaMA3-Instruct-8B"}"#)
                .unwrap()
                .unwrap();
        assert_eq!((s.num_speculative_tokens, s.count_assumed), (1, true));
        assert!(parse_speculative("{").is_err());
        assert!(parse_speculative(r#"{"method":"magic"}"#).is_err());
        assert!(parse_speculative(r#"{"method":"eagle","num_speculative_tokens":0}"#).is_err());
    }

    #[test]
    fn targets_parse() {
        assert_eq!(Target::parse("kv-pin").unwrap(), Target::KvPin);
        assert_eq!(
            Target::parse("utilization:3").unwrap(),
            Target::Utilization(3)
        );
        assert_eq!(
            Target::parse("pp-partition:3.6:3").unwrap(),
            Target::PpPartition {
                extras: 3.6,
                pinned: 3
            }
        );
        assert!(Target::parse("pp-partition:x").is_err());
        assert!(Target::parse("utilization").is_err());
        assert!(Target::parse("fastest").is_err());
    }

    #[test]
    fn empty_and_unknown_commands_are_bad_input() {
        assert_eq!(run(&[]).code, EXIT_BAD_INPUT);
        assert_eq!(run(&args(&["frobnicate"])).code, EXIT_BAD_INPUT);
        assert_eq!(run(&args(&["--help"])).code, EXIT_STARTS);
    }
}
