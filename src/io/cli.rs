//! The `headroom` command line: vLLM's flags in, the same `Scenario` the page builds, the same
//! `Plan` out as a readable ledger or JSON.
//!
//! The argument parser is hand-rolled around one table, [`FLAGS`], which also writes `--help`.
//! Flags keep vLLM's own names (`--tensor-parallel-size` / `-tp`, `--gpu-memory-utilization`,
//! ...), accept `--flag value` and `--flag=value`, and, as vLLM's parser does, underscores for
//! dashes. [`run`] does everything but touch the process: it returns the exit code and the text
//! for stdout and stderr, so it is tested without spawning anything. Exit codes: 0 when the plan
//! starts, 1 when a check fails, 2 for bad input (the message names the flag).

use std::collections::BTreeMap;
use std::fmt;
use std::fmt::Write as _;
use std::io::Read;

use crate::calc::scenario::{
    KvCacheDtype, MaxLen, Measured, Scenario, Speculative, StageTerm, Unified,
};
use crate::calc::units::{
    human, parse_bytes, parse_count, thousands, thousands_signed, UnitSystem,
};
use crate::calc::version::VllmVersion;
use crate::calc::{self, solve, CalcError, Plan, RankPlan};
use crate::catalog;
use crate::io::json;

/// Exit code: the engine starts.
pub const EXIT_STARTS: i32 = 0;
/// Exit code: a check fails (the engine would not start), or a solver found no setting.
pub const EXIT_FAILS: i32 = 1;
/// Exit code: the input is invalid (unknown flag, bad value, unknown id, unreadable config).
pub const EXIT_BAD_INPUT: i32 = 2;

/// The GPU a scenario without `--gpu`, `--gpu-memory` or `--example` plans for: the page's.
pub const DEFAULT_GPU: &str = crate::io::url::DEFAULT_GPU;

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
        // "tensor-parallel-size 3 does not ..." reads "--tensor-parallel-size: 3 does not ...";
        // a sentence that only starts with the word ("weights of 0 bytes") keeps it.
        let message = msg
            .strip_prefix(field)
            .and_then(|rest| rest.strip_prefix(' '))
            .filter(|rest| rest.starts_with(|c: char| c.is_ascii_digit() || c == '"' || c == '-'))
            .filter(|_| flag.starts_with("--"))
            .unwrap_or(msg);
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

/// The flag that sets a `CalcError` field; config fields belong to `MODEL`.
fn flag_for_field(field: &str) -> String {
    if FLAGS.iter().any(|f| f.long == field) {
        return format!("--{field}");
    }
    match field {
        "extras" => "--for".into(),
        // The page's draft-model input is the speculative config's `model` here.
        "draft-model" | "num-speculative-tokens" => "--speculative-config".into(),
        _ => "MODEL".into(),
    }
}

/// Which part of `--help` a flag is listed under.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Section {
    /// What is planned: model, GPU, release.
    Model,
    /// vLLM's parallel layout.
    Parallel,
    /// vLLM's engine flags.
    Engine,
    /// Runtime terms a GPU measured (vLLM's log lines): each replaces an estimate.
    Measured,
    /// The unified-memory start gate (GB10 / DGX Spark boxes).
    Unified,
    /// How the answer is printed.
    Output,
    /// `headroom solve` only.
    Solve,
}

impl Section {
    fn title(self) -> &'static str {
        match self {
            Section::Model => "Model and hardware",
            Section::Parallel => "Parallelism (vLLM's flags)",
            Section::Engine => "Engine (vLLM's flags)",
            Section::Measured => "Measured terms (BYTES; each replaces an estimate)",
            Section::Unified => "Unified memory start gate",
            Section::Output => "Output",
            Section::Solve => "Solve",
        }
    }
}

/// One flag of `plan` / `solve`.
#[derive(Clone, Copy, Debug)]
pub struct Flag {
    /// The long name without `--`.
    pub long: &'static str,
    /// vLLM's short form, with its single dash (`-tp`).
    pub short: Option<&'static str>,
    /// The value's placeholder; `None` for a switch.
    pub value: Option<&'static str>,
    pub section: Section,
    pub help: &'static str,
}

const fn flag(
    long: &'static str,
    value: Option<&'static str>,
    section: Section,
    help: &'static str,
) -> Flag {
    Flag {
        long,
        short: None,
        value,
        section,
        help,
    }
}

/// Every flag `plan` and `solve` take, in `--help` order.
pub const FLAGS: &[Flag] = &[
    flag("model", Some("MODEL"), Section::Model, "Same as the MODEL argument: a catalog id or a path to a config.json (or its directory)."),
    flag("example", Some("ID"), Section::Model, "Start from a seed example (headroom examples); other flags apply on top."),
    flag("gpu", Some("ID"), Section::Model, "A catalog GPU id (headroom gpus). Default: h100-sxm-80gb, as on the page."),
    flag("gpu-memory", Some("BYTES"), Section::Model, "The GPU's total as the driver reports it (torch.cuda.mem_get_info total). Alone: a custom GPU; with --gpu or --example: replaces that GPU's total."),
    flag("gpus", Some("N"), Section::Model, "GPUs available. Default: tp x pp x dp."),
    flag("vllm-version", Some("V"), Section::Model, "Whose rules apply: 0.14 to 0.33 (default 0.33)."),
    Flag { long: "tensor-parallel-size", short: Some("-tp"), value: Some("N"), section: Section::Parallel, help: "Tensor-parallel size (default 1)." },
    Flag { long: "pipeline-parallel-size", short: Some("-pp"), value: Some("N"), section: Section::Parallel, help: "Pipeline-parallel size (default 1)." },
    Flag { long: "data-parallel-size", short: Some("-dp"), value: Some("N"), section: Section::Parallel, help: "Data-parallel size: each DP rank is its own engine with the same plan (default 1)." },
    flag("enable-expert-parallel", None, Section::Parallel, "Experts are owned whole by ranks instead of split by TP."),
    flag("pp-layer-partition", Some("A,B,C"), Section::Parallel, "VLLM_PP_LAYER_PARTITION: decoder layers per stage."),
    flag("gpu-memory-utilization", Some("F"), Section::Engine, "Fraction of the total vLLM budgets, in (0, 1] (default 0.92; 0.90 before 0.20)."),
    flag("kv-cache-memory-bytes", Some("BYTES"), Section::Engine, "Pin the KV pool per rank; the fraction no longer sizes it."),
    flag("max-model-len", Some("N|auto|-1"), Section::Engine, "Context length (default: vLLM's length derived from the config: its length keys and RoPE scaling); auto or -1 fits the longest the pool holds. Accepts 128k / 128K."),
    flag("max-num-seqs", Some("N"), Section::Engine, "Scheduler seats (default by GPU size)."),
    flag("max-num-batched-tokens", Some("N"), Section::Engine, "Tokens per scheduler step (default by GPU size)."),
    flag("kv-cache-dtype", Some("DTYPE"), Section::Engine, "auto, bfloat16, float16, fp8, fp8_e4m3, fp8_e5m2 or fp8_ds_mla (fp8_inc, Intel Gaudi's, is refused: no CUDA backend takes it)."),
    flag("block-size", Some("N"), Section::Engine, "Tokens per KV block (default: the attention backend's)."),
    flag("enforce-eager", None, Section::Engine, "No CUDA graphs."),
    flag("num-gpu-blocks-override", Some("N"), Section::Engine, "Use exactly N KV blocks."),
    flag("speculative-config", Some("JSON"), Section::Engine, "E.g. '{\"method\":\"deepseek_mtp\",\"num_speculative_tokens\":1}'; for draft_model, \"model\" names the drafter (catalog id, Hugging Face repo or config.json path)."),
    flag("disable-hybrid-kv-cache-manager", None, Section::Engine, "Sliding-window and chunked layers keep full-length KV."),
    flag("attention-backend", Some("NAME"), Section::Engine, "A backend for ordinary attention (FLASH_ATTN, TRITON_ATTN, FLASHINFER, FLEX_ATTENTION, FLASH_ATTN_MLA, FLASHMLA, FLASHINFER_MLA, CUTLASS_MLA, TRITON_MLA; checked as vLLM checks a selected one), or DeepSeek-V4's sparse backend: FLASHMLA_SPARSE_DSV4 or FLASHINFER_MLA_SPARSE_DSV4 (on SM 10.x: plain bf16 or fp8 rows, so a bf16 KV cache). Default: vLLM's choice."),
    flag("no-async-scheduling", None, Section::Engine, "One batch in flight per pipeline stage instead of one more (vLLM also turns async scheduling off with the Ray executor); sliding-window layers then need fewer blocks."),
    flag("free-memory", Some("BYTES"), Section::Measured, "Free memory at vLLM's init snapshot (torch.cuda.mem_get_info free)."),
    flag("weights", Some("BYTES[,..]"), Section::Measured, "Weights per rank (\"Model loading took X GiB\"); a comma list gives one value per PP stage, - keeps a stage's estimate."),
    flag("activation-peak", Some("BYTES"), Section::Measured, "The profile run's activation peak above the resting allocation."),
    flag("non-torch", Some("BYTES"), Section::Measured, "Other consumption after the snapshot (non-torch memory, runner buffers)."),
    flag("cuda-graph", Some("BYTES"), Section::Measured, "CUDA-graph memory."),
    flag("load-peak", Some("BYTES"), Section::Measured, "A load-time transient above the weights (e.g. an expert repack)."),
    flag("available-kv", Some("BYTES[,..]"), Section::Measured, "vLLM's \"Available KV cache memory\": the pool is planned from it directly; a comma list gives one value per PP stage."),
    flag("drafter-weights", Some("BYTES"), Section::Measured, "The speculative drafter's weights on a last-stage rank (needs --speculative-config)."),
    flag("other-tenants", Some("BYTES"), Section::Measured, "Memory other processes hold on each GPU (when --free-memory is not given)."),
    flag("mem-available", Some("BYTES"), Section::Unified, "The box's MemAvailable before the start; turns the unified-memory gate on (unified-memory GPUs only, e.g. gb10-128gb)."),
    flag("headroom", Some("BYTES"), Section::Unified, "What the gate keeps free (default 8 GiB)."),
    flag("guard-threshold", Some("BYTES"), Section::Unified, "The memory guard's kill threshold during the load (default 8 GiB)."),
    flag("overhead", Some("BYTES"), Section::Unified, "Everything a rank holds besides weights and KV (graphs, workspaces, activations), measured."),
    flag("unit", Some("gib|gb"), Section::Output, "Print figures in GiB (2^30, vLLM's unit; default) or GB (10^9). Bytes are exact either way."),
    flag("json", None, Section::Output, "Print the plan as JSON (keys in docs/cli.md)."),
    flag("average-request-len", Some("N"), Section::Output, "Request length for the concurrency-at-average figure (default max-model-len / 4)."),
    flag("for", Some("TARGET"), Section::Solve, "kv-pin | utilization:N | max-model-len | pp-partition:EXTRAS[:PINNED]."),
];

fn find_flag(name: &str) -> Option<&'static Flag> {
    FLAGS
        .iter()
        .find(|f| f.long == name || f.short.is_some_and(|s| &s[1..] == name))
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
}

/// A `plan` or `solve` invocation: the scenario and how to print the answer.
#[derive(Clone, Debug, PartialEq)]
pub struct Invocation {
    pub scenario: Scenario,
    pub json: bool,
    pub unit: UnitSystem,
}

/// `solve --for`.
#[derive(Clone, Debug, PartialEq)]
pub enum Target {
    /// The largest `--kv-cache-memory-bytes` that still starts.
    KvPin,
    /// The smallest `--gpu-memory-utilization` holding N full-length requests at once.
    Utilization(u64),
    /// The longest `--max-model-len` that starts.
    MaxModelLen,
    /// A PP split balancing the last stage's extras (in layer-equivalents), keeping at least
    /// `pinned` layers there.
    PpPartition { extras: f64, pinned: u32 },
}

impl Target {
    fn parse(text: &str) -> Result<Target, CliError> {
        let err = |m: String| CliError::new("--for", m);
        let t = text.trim();
        let mut parts = t.splitn(2, ':');
        let head = parts.next().unwrap_or("");
        let rest = parts.next();
        match (head, rest) {
            ("kv-pin", None) => Ok(Target::KvPin),
            ("max-model-len", None) => Ok(Target::MaxModelLen),
            ("utilization", Some(n)) => {
                let n = parse_count(n).map_err(|e| err(format!("utilization:N: {e}")))?;
                if n == 0 {
                    return Err(err("utilization:N needs N of at least 1 request".into()));
                }
                Ok(Target::Utilization(n))
            }
            ("pp-partition", Some(spec)) => {
                let mut it = spec.splitn(2, ':');
                let extras_text = it.next().unwrap_or("").trim();
                let extras: f64 = extras_text.parse().map_err(|_| {
                    err(format!(
                        "pp-partition:EXTRAS: {extras_text:?} is not a number of layer-equivalents (e.g. 3.6)"
                    ))
                })?;
                if !(extras.is_finite() && (0.0..=1e6).contains(&extras)) {
                    return Err(err(format!(
                        "pp-partition:EXTRAS: {extras_text} must be between 0 and 1000000 layer-equivalents"
                    )));
                }
                let pinned = match it.next() {
                    None => 0,
                    Some(p) => p.trim().parse::<u32>().map_err(|_| {
                        err(format!(
                            "pp-partition:EXTRAS:PINNED: {:?} is not a layer count",
                            p.trim()
                        ))
                    })?,
                };
                Ok(Target::PpPartition { extras, pinned })
            }
            _ => Err(err(format!(
                "{t:?} is not one of kv-pin, utilization:N, max-model-len, pp-partition:EXTRAS[:PINNED]"
            ))),
        }
    }

    fn label(&self) -> String {
        match self {
            Target::KvPin => "kv-pin".into(),
            Target::Utilization(n) => format!("utilization:{n}"),
            Target::MaxModelLen => "max-model-len".into(),
            Target::PpPartition { extras, pinned } => format!("pp-partition:{extras}:{pinned}"),
        }
    }
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

/// Runs the command line (without the program name). Never panics on any input.
pub fn run(args: &[String]) -> Outcome {
    let cmd = match parse(args) {
        Ok(c) => c,
        Err(e) => return Outcome::bad(&e),
    };
    match cmd {
        Command::Help(topic) => Outcome::ok(EXIT_STARTS, help(topic)),
        Command::Version => Outcome::ok(
            EXIT_STARTS,
            format!(
                "headroom {} (vLLM {} to {} rules)\n",
                env!("CARGO_PKG_VERSION"),
                VllmVersion::OLDEST,
                VllmVersion::CURRENT
            ),
        ),
        Command::Models { json } => Outcome::ok(EXIT_STARTS, list_models(json)),
        Command::Gpus { json } => Outcome::ok(EXIT_STARTS, list_gpus(json)),
        Command::Examples { json } => Outcome::ok(EXIT_STARTS, list_examples(json)),
        Command::Plan(inv) => match calc::plan(&inv.scenario) {
            Err(e) => Outcome::bad(&CliError::from_calc(&e)),
            Ok(p) => {
                let code = if p.starts() { EXIT_STARTS } else { EXIT_FAILS };
                let text = if inv.json {
                    pretty(&json::document(&inv.scenario, &p))
                } else {
                    render(&inv.scenario, &p, inv.unit)
                };
                Outcome::ok(code, text)
            }
        },
        Command::Solve(inv, target) => match run_solve(&inv, &target) {
            Err(e) => Outcome::bad(&e),
            Ok(o) => o,
        },
    }
}

fn pretty(v: &serde_json::Value) -> String {
    let mut s = serde_json::to_string_pretty(v).unwrap_or_else(|_| "null".into());
    s.push('\n');
    s
}

/// Parses the command line (without the program name).
pub fn parse(args: &[String]) -> Result<Command, CliError> {
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
        "plan" | "solve" => {
            let solve = first == "solve";
            let a = lex(rest, solve)?;
            if a.help {
                return Ok(Command::Help(topic(first)));
            }
            let inv = invocation(&a)?;
            if solve {
                let text = a.values.get("for").ok_or_else(|| {
                    CliError::new(
                        "--for",
                        "solve needs a target: kv-pin, utilization:N, max-model-len or pp-partition:EXTRAS[:PINNED]",
                    )
                })?;
                Ok(Command::Solve(inv, Target::parse(text)?))
            } else {
                Ok(Command::Plan(inv))
            }
        }
        other => Err(CliError::new(
            "",
            format!(
                "unknown command {other:?}; the commands are plan, solve, models, gpus, examples (headroom --help)"
            ),
        )),
    }
}

fn topic(t: &str) -> Option<&'static str> {
    ["plan", "solve", "models", "gpus", "examples"]
        .into_iter()
        .find(|c| *c == t)
}

/// The flags of one invocation, as texts keyed by their long name (the last occurrence wins,
/// as with vLLM's argparse).
#[derive(Clone, Debug, Default)]
struct Args {
    positional: Vec<String>,
    values: BTreeMap<&'static str, String>,
    help: bool,
}

/// Splits the tokens into flags and positionals; knows each flag's arity, nothing of values.
fn lex(tokens: &[String], solve: bool) -> Result<Args, CliError> {
    let mut a = Args::default();
    let mut i = 0;
    while i < tokens.len() {
        let tok = tokens[i].as_str();
        i += 1;
        if tok == "--" {
            a.positional.extend(tokens[i..].iter().cloned());
            break;
        }
        if tok == "-h" || tok == "--help" {
            a.help = true;
            continue;
        }
        let body = if let Some(b) = tok.strip_prefix("--") {
            b
        } else if tok.len() > 1
            && tok.starts_with('-')
            && !tok[1..].starts_with(|c: char| c.is_ascii_digit() || c == '.')
        {
            &tok[1..]
        } else {
            a.positional.push(tok.to_string());
            continue;
        };
        let (name, inline) = match body.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (body, None),
        };
        // vLLM's FlexibleArgumentParser reads `--max_model_len` as `--max-model-len`.
        let name = name.replace('_', "-");
        // argparse also takes a unique prefix of a long flag (`--kv-cache-memory`, which
        // vLLM's own log line suggests, for `--kv-cache-memory-bytes`).
        let prefixed = |n: &str| -> Option<&'static Flag> {
            let mut hits = FLAGS
                .iter()
                .filter(|f| f.long.starts_with(n) && (solve || f.section != Section::Solve));
            match (hits.next(), hits.next()) {
                (Some(f), None) if tok.starts_with("--") && n.len() >= 3 => Some(f),
                _ => None,
            }
        };
        let (flag, negated) = match find_flag(&name).or_else(|| prefixed(&name)) {
            Some(f) => (f, false),
            None => match name.strip_prefix("no-").and_then(find_flag) {
                Some(f) if f.value.is_none() => (f, true),
                _ => return Err(unknown_flag(tok, &name, solve)),
            },
        };
        let shown = format!("--{}", flag.long);
        if flag.section == Section::Solve && !solve {
            return Err(CliError::new(shown, "only `headroom solve` takes it"));
        }
        let text = match (flag.value, inline) {
            (None, None) => (!negated).to_string(),
            (None, Some(v)) if !negated => match v.trim().to_ascii_lowercase().as_str() {
                "true" | "1" | "yes" | "on" => "true".into(),
                "false" | "0" | "no" | "off" => "false".into(),
                _ => {
                    return Err(CliError::new(
                        shown,
                        format!("{v:?} is not true or false (the flag alone means true)"),
                    ))
                }
            },
            (None, Some(_)) => {
                return Err(CliError::new(
                    format!("--no-{}", flag.long),
                    "takes no value",
                ))
            }
            (Some(_), Some(v)) => v.to_string(),
            (Some(meta), None) => match tokens.get(i) {
                // A flag where its value should be (argparse: "expected one argument").
                Some(v) if v.starts_with("--") => {
                    return Err(CliError::new(
                        shown,
                        format!("needs a value ({meta}), not the flag {v}"),
                    ))
                }
                Some(v) => {
                    i += 1;
                    v.clone()
                }
                None => return Err(CliError::new(shown, format!("needs a value ({meta})"))),
            },
        };
        a.values.insert(flag.long, text);
    }
    Ok(a)
}

fn unknown_flag(tok: &str, name: &str, solve: bool) -> CliError {
    // `plan` is not told about a flag only `solve` takes.
    let best = FLAGS
        .iter()
        .filter(|f| solve || f.section != Section::Solve)
        .map(|f| (edit_distance(name, f.long), f.long))
        .min()
        .filter(|(d, _)| *d <= 3);
    let hint = match best {
        Some((_, long)) => format!("; did you mean --{long}?"),
        None => String::new(),
    };
    CliError::new(
        tok.split('=').next().unwrap_or(tok),
        format!("unknown flag{hint} (headroom plan --help lists them)"),
    )
}

/// Levenshtein distance, for "did you mean" (flag names are short; quadratic is fine).
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            cur[j + 1] = (prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

fn count_in(flag: &str, text: &str, min: u64, max: u64) -> Result<u64, CliError> {
    crate::io::url::parse_count(text, min, max).map_err(|e| CliError::new(format!("--{flag}"), e))
}

/// A compute capability as `major.minor`; `None` where the catalog has none (stored as 0.0).
fn cc_text(cc: (u32, u32)) -> Option<String> {
    (cc != (0, 0)).then(|| format!("{}.{}", cc.0, cc.1))
}

/// The largest byte count a flag takes: 1 PiB. `calc` refuses GPUs above it, so no real
/// measurement is larger, and sums of a few such terms stay far from `u64` overflow.
pub const MAX_BYTES: u64 = 1 << 50;

/// The largest count a flag takes (2^40): beyond any batch, sequence or block count, and small
/// enough that `calc`'s products of counts and sizes stay in range.
pub const MAX_COUNT: u64 = 1 << 40;

fn bytes_of(flag: &str, text: &str) -> Result<u64, CliError> {
    let b = parse_bytes(text).map_err(|e| CliError::new(format!("--{flag}"), e.0))?;
    if b > MAX_BYTES {
        return Err(CliError::new(
            format!("--{flag}"),
            format!(
                "{} B is more than 1 PiB; no GPU holds that",
                thousands(u128::from(b))
            ),
        ));
    }
    Ok(b)
}

/// One byte count, or one per PP stage separated by `,` (`;` and `/` also work); `-` keeps a
/// stage's estimate. A single integer with thousands separators stays one value
/// (`url::split_bytes_list`, the page's rule too).
fn bytes_list(flag: &str, text: &str) -> Result<Vec<Option<u64>>, CliError> {
    let pieces = crate::io::url::split_bytes_list(text);
    if pieces.len() > 1024 {
        return Err(CliError::new(format!("--{flag}"), "more than 1,024 values"));
    }
    let many = pieces.len() > 1;
    let values = pieces
        .iter()
        .enumerate()
        .map(|(i, p)| match p.trim() {
            "-" => Ok(None),
            t => bytes_of(flag, t).map(Some).map_err(|e| {
                if many {
                    CliError::new(e.flag, format!("stage {i}: {}", e.message))
                } else {
                    e
                }
            }),
        })
        .collect::<Result<Vec<_>, _>>()?;
    if values.iter().all(Option::is_none) {
        return Err(CliError::new(
            format!("--{flag}"),
            "no value given (- keeps a stage's estimate)",
        ));
    }
    Ok(values)
}

/// Reads MODEL: a catalog id, else a `config.json` path (or a directory holding one).
pub fn resolve_model(text: &str) -> Result<calc::model::Model, CliError> {
    if let Some(row) = catalog::model(text) {
        return Ok(row.model.clone());
    }
    let err = |m: String| CliError::new("MODEL", m);
    let mut path = std::path::PathBuf::from(text);
    if path.is_dir() {
        path.push("config.json");
    }
    let file = std::fs::File::open(&path).map_err(|e| {
        let near: Vec<&str> = catalog::models()
            .iter()
            .map(|r| r.id.as_str())
            .filter(|id| !text.is_empty() && id.contains(text))
            .take(5)
            .collect();
        err(format!(
            "{text:?} is not a catalog model id (headroom models{}), and {} cannot be read as a config.json: {e}",
            if near.is_empty() {
                String::new()
            } else {
                format!("; close ones: {}", near.join(", "))
            },
            path.display()
        ))
    })?;
    // A config.json is a few KiB; read at most one byte more than the parser accepts.
    let mut bytes = Vec::new();
    file.take((4 << 20) + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| err(format!("{}: cannot be read: {e}", path.display())))?;
    let text = String::from_utf8(bytes)
        .map_err(|_| err(format!("{}: is not UTF-8 text", path.display())))?;
    let mut model = catalog::parse_config_json(&text).map_err(|e| {
        err(format!(
            "{}: {} (field {})",
            path.display(),
            e.message,
            e.field
        ))
    })?;
    model.name = format!("{} ({})", model.name, path.display());
    Ok(model)
}

fn resolve_gpu(id: &str) -> Result<calc::scenario::Gpu, CliError> {
    if let Some(row) = catalog::gpu(id) {
        return Ok(row.gpu.clone());
    }
    let near: Vec<&str> = catalog::gpus()
        .iter()
        .map(|r| r.gpu.id.as_str())
        .filter(|g| !id.is_empty() && g.contains(&id.to_ascii_lowercase()))
        .collect();
    Err(CliError::new(
        "--gpu",
        format!(
            "{id:?} is not a catalog GPU id{} (headroom gpus lists them; --gpu-memory BYTES describes any other)",
            if near.is_empty() {
                String::new()
            } else {
                format!("; did you mean {}?", near.join(" or "))
            }
        ),
    ))
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
    let methods = &super::url::SPEC_METHODS[1..];
    let method = match obj.get("method") {
        Some(serde_json::Value::String(m)) => m.clone(),
        Some(other) => return Err(err(format!("method must be a string, not {other}"))),
        // vLLM infers a draft model when only `model` is given.
        None if obj.contains_key("model") => "draft_model".into(),
        None => return Err(err("method is missing".into())),
    };
    if !methods.contains(&method.as_str())
        && !crate::catalog::config::MTP_MODEL_TYPES.contains(&method.as_str())
    {
        return Err(err(format!(
            "method {method:?} is not one of {} (or another of vLLM's MTP model types, such as qwen3_next_mtp)",
            methods.join(", ")
        )));
    }
    let has_model = obj.get("model").is_some_and(|m| !m.is_null());
    // SpeculativeConfig: EAGLE heads are checkpoints of their own, named by `model`.
    if !has_model && method.starts_with("eagle") {
        return Err(err(
            "num_speculative_tokens was provided but without speculative model. (vLLM's ValueError: eagle and eagle3 need the head's checkpoint as \"model\")".into(),
        ));
    }
    // draft_model's drafter: a catalog id, its Hugging Face repo (as vLLM takes it) or a
    // config.json path. Other methods' `model` (an EAGLE head) is not read.
    let draft_model = match obj.get("model") {
        Some(serde_json::Value::String(d)) if method == "draft_model" => Some(Box::new(
            resolve_model(d).map_err(|e| err(format!("model: {}", e.message)))?,
        )),
        Some(other) if method == "draft_model" && !other.is_null() => {
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
        None | Some(serde_json::Value::Null) if method == "draft_model" => {
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
    if method == "ngram" {
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

/// Builds the scenario from the flags: the example (or the model on the GPU with vLLM's
/// defaults), then every flag given, in a fixed order.
fn invocation(a: &Args) -> Result<Invocation, CliError> {
    let v = |k: &str| a.values.get(k).map(String::as_str);
    let on = |k: &str| v(k) == Some("true");
    if a.positional.len() > 1 {
        return Err(CliError::new(
            a.positional[1].clone(),
            "unexpected argument: give one MODEL (flags start with --)",
        ));
    }
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

    // The base scenario.
    let example = match v("example") {
        Some(id) => Some(catalog::examples::example(id).ok_or_else(|| {
            let ids: Vec<&str> = catalog::examples::INFO.iter().map(|e| e.id).collect();
            CliError::new(
                "--example",
                format!(
                    "{id:?} is not an example; the examples are {}",
                    ids.join(", ")
                ),
            )
        })?),
        None => None,
    };
    let gpu_memory = v("gpu-memory")
        .map(|t| bytes_of("gpu-memory", t))
        .transpose()?;
    let example_scenario = example.as_ref().map(|e| e.scenario.clone());
    let mut s = match (example, model_text) {
        (Some(e), model) => {
            let mut s = e.scenario;
            if let Some(m) = model {
                s.model = resolve_model(m)?;
            }
            s
        }
        (None, Some(m)) => {
            let model = resolve_model(m)?;
            let gpu = match (v("gpu"), gpu_memory) {
                (None, Some(total)) => catalog::custom_gpu(total),
                _ => resolve_gpu(DEFAULT_GPU)?,
            };
            Scenario::new(model, gpu)
        }
        (None, None) => {
            return Err(CliError::new(
                "MODEL",
                "missing: give a catalog id (headroom models), a path to a config.json, or --example ID",
            ))
        }
    };
    if let Some(id) = v("gpu") {
        s.gpu = resolve_gpu(id)?;
    }
    if let Some(total) = gpu_memory {
        // The custom GPU was made above; here a chosen GPU's total is replaced.
        catalog::set_gpu_total(&mut s.gpu, total, false);
    }
    if let Some(t) = v("vllm-version") {
        s.version = VllmVersion::parse(t).map_err(|e| {
            CliError::new(
                "--vllm-version",
                e.trim_start_matches("vllm-version ").to_string(),
            )
        })?;
    }

    // Parallel layout.
    // The same bounds as the page's fields (io::url).
    let u32_flag = |k: &str, max: u64| -> Result<Option<u32>, CliError> {
        v(k).map(|t| count_in(k, t, 1, max).map(|n| n as u32))
            .transpose()
    };
    if let Some(n) = u32_flag("tensor-parallel-size", 1_024)? {
        s.parallel.tp = n;
    }
    if let Some(n) = u32_flag("pipeline-parallel-size", 1_024)? {
        s.parallel.pp = n;
    }
    if let Some(n) = u32_flag("data-parallel-size", 4_096)? {
        s.parallel.dp = n;
    }
    if v("enable-expert-parallel").is_some() {
        s.parallel.expert_parallel = on("enable-expert-parallel");
    }
    if let Some(t) = v("pp-layer-partition") {
        // The page's reader: the same counts (0 to 100,000 per stage) and messages.
        let parts =
            super::url::parse_partition(t).map_err(|e| CliError::new("--pp-layer-partition", e))?;
        s.parallel.pp_layer_partition = Some(parts);
    }
    s.gpus = match u32_flag("gpus", 65_536)? {
        Some(n) => n,
        None => s
            .parallel
            .tp
            .saturating_mul(s.parallel.pp)
            .saturating_mul(s.parallel.dp),
    };

    // Engine flags.
    if let Some(t) = v("gpu-memory-utilization") {
        let u: f64 = t.trim().parse().map_err(|_| {
            CliError::new(
                "--gpu-memory-utilization",
                format!("{:?} is not a number like 0.92", t.trim()),
            )
        })?;
        if !(u > 0.0 && u <= 1.0) {
            return Err(CliError::new(
                "--gpu-memory-utilization",
                format!("{} must be in (0, 1]", t.trim()),
            ));
        }
        s.engine.gpu_memory_utilization = Some(u);
    }
    if let Some(t) = v("kv-cache-memory-bytes") {
        s.engine.kv_cache_memory_bytes = Some(bytes_of("kv-cache-memory-bytes", t)?);
    }
    if let Some(t) = v("max-model-len") {
        // vLLM: `value.lower() == "auto"` (argparse_utils.py).
        s.engine.max_model_len = match t.trim() {
            t if t.eq_ignore_ascii_case("auto") || t == "-1" => MaxLen::Auto,
            t => MaxLen::Value(count_in("max-model-len", t, 1, MAX_COUNT)?),
        };
    }
    if let Some(t) = v("max-num-seqs") {
        s.engine.max_num_seqs = Some(count_in("max-num-seqs", t, 1, MAX_COUNT)?);
    }
    if let Some(t) = v("max-num-batched-tokens") {
        s.engine.max_num_batched_tokens =
            Some(count_in("max-num-batched-tokens", t, 1, MAX_COUNT)?);
    }
    if let Some(t) = v("kv-cache-dtype") {
        s.engine.kv_cache_dtype = KvCacheDtype::parse(t).map_err(|e| {
            CliError::new(
                "--kv-cache-dtype",
                e.trim_start_matches("kv-cache-dtype ").to_string(),
            )
        })?;
    }
    if let Some(t) = v("block-size") {
        s.engine.block_size = Some(count_in("block-size", t, 1, 1 << 20)?);
    }
    if v("enforce-eager").is_some() {
        s.engine.enforce_eager = on("enforce-eager");
    }
    if let Some(t) = v("num-gpu-blocks-override") {
        s.engine.num_gpu_blocks_override =
            Some(count_in("num-gpu-blocks-override", t, 1, MAX_COUNT)?);
    }
    if let Some(t) = v("speculative-config") {
        s.engine.speculative = parse_speculative(t)?;
    }
    if v("disable-hybrid-kv-cache-manager").is_some() {
        s.engine.disable_hybrid_kv_cache_manager = on("disable-hybrid-kv-cache-manager");
    }
    if let Some(t) = v("attention-backend") {
        s.engine.attention_backend = crate::calc::scenario::parse_attention_backend(t)
            .map_err(|e| CliError::new("--attention-backend", e))?;
    }
    if v("no-async-scheduling").is_some() {
        s.engine.no_async_scheduling = on("no-async-scheduling");
    }

    // Measured terms.
    let measured = |k: &str| -> Result<Option<Measured>, CliError> {
        v(k).map(|t| bytes_of(k, t).map(|b| Measured::new(b, format!("given: --{k} {}", t.trim()))))
            .transpose()
    };
    let stages = s.parallel.pp as usize;
    let per_stage = |k: &str| -> Result<Option<Vec<Option<Measured>>>, CliError> {
        let Some(t) = v(k) else { return Ok(None) };
        let list = bytes_list(k, t)?;
        if list.len() > 1 && list.len() != stages {
            return Err(CliError::new(
                format!("--{k}"),
                format!(
                    "{} values for {stages} pipeline stage(s); give one value, or one per stage",
                    list.len()
                ),
            ));
        }
        Ok(Some(
            list.into_iter()
                .map(|b| b.map(|b| Measured::new(b, format!("given: --{k} {}", t.trim()))))
                .collect(),
        ))
    };
    if let Some(list) = per_stage("weights")? {
        s.runtime.set_per_stage(StageTerm::Weights, list);
    }
    if let Some(list) = per_stage("available-kv")? {
        s.runtime.set_per_stage(StageTerm::AvailableKv, list);
    }
    if let Some(m) = measured("free-memory")? {
        s.runtime.free_memory = Some(m);
    }
    if let Some(m) = measured("activation-peak")? {
        s.runtime.activation_peak = Some(m);
    }
    if let Some(m) = measured("non-torch")? {
        s.runtime.non_torch = Some(m);
    }
    if let Some(m) = measured("cuda-graph")? {
        s.runtime.cuda_graph = Some(m);
    }
    if let Some(m) = measured("load-peak")? {
        s.runtime.load_peak = Some(m);
    }
    if let Some(t) = v("other-tenants") {
        s.runtime.other_tenants = calc::units::Bytes(bytes_of("other-tenants", t)?);
    }
    if let Some(m) = measured("drafter-weights")? {
        match s.engine.speculative.as_mut() {
            Some(sp) => sp.drafter_weights = Some(m),
            None => {
                return Err(CliError::new(
                    "--drafter-weights",
                    "no drafter is configured; give --speculative-config too",
                ))
            }
        }
    }

    // The unified-memory gate.
    if let Some(m) = measured("mem-available")? {
        s.unified.get_or_insert_with(Unified::default).mem_available = m;
    }
    for k in ["headroom", "overhead", "guard-threshold"] {
        if v(k).is_some() && s.unified.is_none() {
            return Err(CliError::new(
                format!("--{k}"),
                "belongs to the unified-memory gate; give --mem-available BYTES to turn it on",
            ));
        }
    }
    if let (Some(t), Some(u)) = (v("headroom"), s.unified.as_mut()) {
        u.headroom = calc::units::Bytes(bytes_of("headroom", t)?);
    }
    if let (Some(t), Some(u)) = (v("guard-threshold"), s.unified.as_mut()) {
        u.guard_threshold = calc::units::Bytes(bytes_of("guard-threshold", t)?);
    }
    if let (Some(m), Some(u)) = (measured("overhead")?, s.unified.as_mut()) {
        u.overhead = Some(m);
    }

    if let Some(t) = v("average-request-len") {
        s.average_request_len = Some(count_in("average-request-len", t, 1, 1 << 40)?);
    }
    // An example's measurements give way to the user's changes, as on the page.
    if let Some(e) = example_scenario {
        catalog::examples::give_way(&mut s, &e, |flag| v(flag).is_some())
            .map_err(|(flag, message)| CliError::new(format!("--{flag}"), message))?;
    }
    let unit = match v("unit").map(|t| t.trim().to_ascii_lowercase()) {
        None => UnitSystem::Binary,
        Some(u) if u == "gib" => UnitSystem::Binary,
        Some(u) if u == "gb" => UnitSystem::Decimal,
        Some(u) => return Err(CliError::new("--unit", format!("{u:?} is not gib or gb"))),
    };
    Ok(Invocation {
        scenario: s,
        json: on("json"),
        unit,
    })
}

// ---------------------------------------------------------------------------------------------
// solve

fn run_solve(inv: &Invocation, target: &Target) -> Result<Outcome, CliError> {
    let s = &inv.scenario;
    let calc_err = |e: CalcError| CliError::from_calc(&e);
    // The answer as (flag text, JSON value, sentence) and the scenario with it applied.
    let (found, answer_flag, value, sentence, applied): (
        bool,
        Option<String>,
        serde_json::Value,
        String,
        Scenario,
    ) = match target {
        Target::KvPin => {
            let pin = solve::largest_kv_pin(s).map_err(calc_err)?;
            if pin == 0 {
                // A pin of 0 is vLLM's "unset": there is nothing to suggest.
                (
                    false,
                    None,
                    serde_json::Value::Null,
                    "No KV pin starts: once the weights, the other use, the activation peak and the CUDA graphs are held, nothing is left for a KV cache.".to_string(),
                    s.clone(),
                )
            } else {
                let mut t = s.clone();
                t.engine.kv_cache_memory_bytes = Some(pin);
                let size = format!(
                    "{} ({} B)",
                    human(i128::from(pin), inv.unit),
                    thousands(u128::from(pin))
                );
                let sentence = if s.unified.is_some() {
                    format!("The largest KV pin the unified-memory start gate passes: {size}.")
                } else {
                    let mut t = format!(
                    "The largest KV pin that still starts: {size}, leaving room for the weights, the other use, the activation peak, the CUDA graphs and vLLM's {} margin.",
                    human(i128::from(solve::SUGGESTION_MARGIN), inv.unit)
                );
                    if let Some(y) = solve::vllm_suggested_kv_pin(s).ok().flatten() {
                        t.push_str(&format!(
                        " vLLM's own log would suggest --kv-cache-memory={y} ({}) \"to fully utilize gpu memory\": it counts the CUDA graphs twice, in the peak and as captured.",
                        human(i128::from(y), inv.unit)
                    ));
                    }
                    t
                };
                // The pin is sized from memory alone; another phase (capacity, say) can still stop
                // the start, and the sentence must not claim otherwise.
                let sentence = match calc::plan(&t)
                    .ok()
                    .as_ref()
                    .and_then(|p| p.first_failure().map(|c| c.phase.label()))
                {
                    Some(phase) => format!("{sentence} With it the start still fails at {phase}."),
                    None => sentence,
                };
                (
                    true,
                    Some(format!("--kv-cache-memory-bytes {pin}")),
                    serde_json::Value::from(pin),
                    sentence,
                    t,
                )
            }
        }
        Target::Utilization(n) => {
            let u = solve::smallest_utilization_for(s, *n).map_err(calc_err)?;
            let mut t = s.clone();
            if let Some(u) = u {
                t.engine.gpu_memory_utilization = Some(u);
                t.engine.kv_cache_memory_bytes = None;
            }
            (
                u.is_some(),
                u.map(|u| format!("--gpu-memory-utilization {u}")),
                u.map_or(serde_json::Value::Null, serde_json::Value::from),
                match u {
                    Some(u) => format!("The smallest gpu-memory-utilization holding {n} full-length request(s) at once: {u}."),
                    None => format!("No gpu-memory-utilization up to 1.0 holds {n} full-length request(s) at once."),
                },
                t,
            )
        }
        Target::MaxModelLen => {
            let len = solve::longest_max_model_len(s).map_err(calc_err)?;
            let mut t = s.clone();
            if let Some(len) = len {
                t.engine.max_model_len = MaxLen::Value(len);
            }
            (
                len.is_some(),
                len.map(|l| format!("--max-model-len {l}")),
                len.map_or(serde_json::Value::Null, serde_json::Value::from),
                match len {
                    Some(l) => format!(
                        "The longest max-model-len that starts: {} tokens.",
                        thousands(u128::from(l))
                    ),
                    None => {
                        "Not even a 1-token context starts: the failure is not the context length."
                            .into()
                    }
                },
                t,
            )
        }
        Target::PpPartition { extras, pinned } => {
            let b = solve::balanced_partition(s.model.n_layers, s.parallel.pp, *extras, *pinned)
                .map_err(calc_err)?;
            let list: Vec<String> = b.partition.iter().map(u32::to_string).collect();
            let mut t = s.clone();
            t.parallel.pp_layer_partition = Some(b.partition.clone());
            (
                true,
                Some(format!("--pp-layer-partition {}", list.join(","))),
                serde_json::json!(b.partition),
                format!(
                    "A split balancing {extras} layer-equivalents of last-stage extras over {} {}: {}  (VLLM_PP_LAYER_PARTITION={}).",
                    s.parallel.pp,
                    calc::units::plural(u64::from(s.parallel.pp), "stage", "stages"),
                    b.equation,
                    list.join(",")
                ),
                t,
            )
        }
    };
    let p = calc::plan(&applied).map_err(calc_err)?;
    let prov = solve::answer_provenance(&p);
    let code = if found && p.starts() {
        EXIT_STARTS
    } else {
        EXIT_FAILS
    };
    let text = if inv.json {
        pretty(&serde_json::json!({
            "solve": {
                "for": target.label(),
                "found": found,
                "value": value,
                "flag": answer_flag,
                "message": sentence,
                "provenance": prov.label(),
                "basis": prov.basis(),
            },
            "plan": json::document(&applied, &p),
        }))
    } else {
        let mut out = String::new();
        let _ = writeln!(out, "Solve {}: {sentence}", target.label());
        let _ = writeln!(out, "  Figures: {}", prov_with_basis(&prov));
        if let Some(f) = &answer_flag {
            let _ = writeln!(out, "  Use: {f}");
        }
        let _ = writeln!(
            out,
            "\n{}\n",
            if found {
                "The plan with that setting:"
            } else {
                "The plan as given:"
            }
        );
        out.push_str(&render(&applied, &p, inv.unit));
        out
    };
    Ok(Outcome::ok(code, text))
}

// ---------------------------------------------------------------------------------------------
// Text rendering

const LABEL_W: usize = 38;

/// "estimate (basis)", or the bare label for exact figures.
fn prov_with_basis(p: &calc::Provenance) -> String {
    match p.basis() {
        "" => p.label().to_string(),
        basis => format!("{} ({basis})", p.label()),
    }
}

fn rank_range(a: u32, b: u32) -> String {
    if a == b {
        a.to_string()
    } else {
        format!("{a}-{b}")
    }
}

/// Ranks of a stage whose figures are identical share one ledger.
fn same_figures(a: &RankPlan, b: &RankPlan) -> bool {
    a.pp_rank == b.pp_rank
        && a.ledger == b.ledger
        && a.kv_bytes_per_token == b.kv_bytes_per_token
        && a.page_size == b.page_size
        && a.bytes_per_block == b.bytes_per_block
        && a.num_blocks_own == b.num_blocks_own
        && a.kv_heads == b.kv_heads
        && a.holds_drafter == b.holds_drafter
}

fn ledger_lines(out: &mut String, lines: &[calc::LedgerLine], unit: UnitSystem) {
    let _ = writeln!(
        out,
        "  {:<LABEL_W$} {:>11} {:>19}  {:<9} formula",
        "term", "value", "bytes", "figure"
    );
    for l in lines {
        let _ = writeln!(
            out,
            "  {:<LABEL_W$} {:>11} {:>19}  {:<9} {}",
            l.term.label(),
            human(l.bytes, unit),
            thousands_signed(l.bytes),
            l.provenance.label(),
            l.formula
        );
        let basis = l.provenance.basis();
        if !basis.is_empty() {
            let _ = writeln!(
                out,
                "  {:<LABEL_W$} {:>11} {:>19}  {:<9} ({basis})",
                "", "", "", ""
            );
        }
    }
}

/// The readable plan: header and verdict, a ledger per group of identical ranks, the checks in
/// phase order, the replica, demand, the unified gate, vLLM's log lines and the notes.
pub fn render(s: &Scenario, p: &Plan, unit: UnitSystem) -> String {
    let mut out = String::new();
    let gpu_total = human(i128::from(s.gpu.total.0), unit);
    let _ = writeln!(out, "Headroom plan: {}", s.model.name);
    let _ = writeln!(
        out,
        "  GPU        {}{}, {gpu_total} = {} B each{}",
        s.gpu.name,
        if s.gpu.id == "custom" {
            String::new()
        } else {
            format!(" ({})", s.gpu.id)
        },
        thousands(u128::from(s.gpu.total.0)),
        if s.gpu.unified_memory {
            ", unified memory"
        } else {
            ""
        }
    );
    let _ = writeln!(
        out,
        "  Layout     TP={} x PP={} x DP={} on {} GPU(s); stages of {} layers",
        p.tp,
        p.pp,
        p.dp,
        s.gpus,
        p.pp_partition
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    );
    let _ = writeln!(
        out,
        "  Engine     vLLM {} rules; gpu-memory-utilization {}{}",
        p.version,
        p.gpu_memory_utilization,
        match s.engine.kv_cache_memory_bytes {
            Some(k) => format!("; kv-cache-memory-bytes {}", thousands(u128::from(k))),
            None => String::new(),
        }
    );
    match p.first_failure() {
        None => {
            let _ = writeln!(out, "  Verdict    STARTS: every check passes.");
        }
        Some(c) => {
            let _ = writeln!(
                out,
                "  Verdict    DOES NOT START: fails at {}{}.",
                c.phase.label(),
                c.rank.map_or(String::new(), |r| format!(" (rank {r})"))
            );
        }
    }

    // Ledgers, identical TP ranks of a stage grouped.
    let mut i = 0;
    while i < p.ranks.len() {
        let first = &p.ranks[i];
        let mut j = i;
        while j + 1 < p.ranks.len() && same_figures(first, &p.ranks[j + 1]) {
            j += 1;
        }
        let last = &p.ranks[j];
        let mut holds = Vec::new();
        if first.holds_embedding {
            holds.push("embedding");
        }
        if first.holds_head {
            holds.push("LM head");
        }
        if first.holds_drafter {
            holds.push("drafter");
        }
        let _ = writeln!(
            out,
            "\n{} {} (stage {} of {}, TP rank{} {}; {}{})",
            if i == j { "Rank" } else { "Ranks" },
            rank_range(first.rank, last.rank),
            first.pp_rank,
            p.pp,
            if i == j { "" } else { "s" },
            rank_range(first.tp_rank, last.tp_rank),
            if first.layers.1 > first.layers.0 {
                format!("layers {}–{}", first.layers.0, first.layers.1 - 1)
            } else {
                "no decoder layers".to_string()
            },
            if holds.is_empty() {
                String::new()
            } else {
                format!("; holds the {}", holds.join(", "))
            }
        );
        ledger_lines(&mut out, &first.ledger, unit);
        if first.bytes_per_block > 0 {
            let _ = writeln!(
                out,
                "  KV layout: {} KV head(s) per layer, {} B per token, page {} B, {} B per block; {} blocks of its own",
                first.kv_heads,
                thousands(u128::from(first.kv_bytes_per_token)),
                thousands(u128::from(first.page_size)),
                thousands(u128::from(first.bytes_per_block)),
                thousands(u128::from(first.num_blocks_own))
            );
        }
        i = j + 1;
    }

    // Checks.
    let _ = writeln!(out, "\nChecks, in phase order");
    for c in &p.checks {
        let message = c.message.render(unit);
        let _ = writeln!(
            out,
            "  {:<5} {}{}: {}",
            if c.ok { "ok" } else { "FAIL" },
            c.phase.label(),
            c.rank_to_name()
                .map_or(String::new(), |r| format!(" (rank {r})")),
            message
        );
        if let Some(e) = &c.vllm_error {
            let _ = writeln!(out, "        vLLM says: {e}");
        }
        if !c.knobs.is_empty() {
            let _ = writeln!(out, "        knobs: {}", c.knobs.join(", "));
        }
        if !c.not_knobs.is_empty() {
            let _ = writeln!(out, "        not knobs: {}", c.not_knobs.join(", "));
        }
    }

    // Replica.
    if let Some(r) = &p.replica {
        let _ = writeln!(
            out,
            "\nReplica (one engine{})",
            if r.data_parallel > 1 {
                format!(
                    "; each of the {} data-parallel replicas is the same",
                    r.data_parallel
                )
            } else {
                String::new()
            }
        );
        let row = |out: &mut String, k: &str, v: String| {
            let _ = writeln!(out, "  {k:<24} {v}");
        };
        // A pool converted with a measured ratio has no block arithmetic to show.
        let measured_ratio = r.groups.is_empty();
        row(
            &mut out,
            "num_blocks",
            if measured_ratio {
                "not derived: the pool is converted with a measured ratio".to_string()
            } else {
                format!(
                    "{} (the minimum over ranks, set by rank {}; includes the null block)",
                    thousands(u128::from(r.num_blocks)),
                    r.limiting_rank
                )
            },
        );
        row(&mut out, "block_size", format!("{} tokens", r.block_size));
        if !measured_ratio {
            row(
                &mut out,
                "blocks per request",
                format!(
                    "{} at max-model-len {}",
                    thousands(u128::from(r.blocks_per_request)),
                    thousands(u128::from(r.max_model_len))
                ),
            );
        }
        row(
            &mut out,
            "GPU KV cache size",
            format!("{} tokens", thousands(u128::from(r.kv_cache_tokens))),
        );
        row(
            &mut out,
            "maximum concurrency",
            format!("{:.2}x", r.max_concurrency),
        );
        row(
            &mut out,
            "full-length requests",
            format!(
                "{} at once{}",
                thousands(u128::from(r.full_length_requests)),
                if r.null_block_costs_a_request() {
                    " (the concurrency above counts vLLM's null block)"
                } else {
                    ""
                }
            ),
        );
        for g in &r.groups {
            row(
                &mut out,
                "KV group",
                format!(
                    "{}: {} layer(s), {} {} B, block {} tokens, {} blocks per request",
                    g.spec_name(),
                    g.layer_indices.len(),
                    if g.uniform_type {
                        "pages summing to"
                    } else {
                        "page"
                    },
                    thousands(u128::from(g.page_size)),
                    g.block_size,
                    thousands(u128::from(g.blocks_per_request))
                ),
            );
        }
        row(&mut out, "provenance", prov_with_basis(&r.provenance));
    }

    // Demand.
    if let Some(d) = &p.demand {
        let _ = writeln!(
            out,
            "\nDemand (what the scheduler could ask for; not a reservation)"
        );
        let _ =
            writeln!(
            out,
            "  max-num-seqs {} x max-model-len on the limiting rank: {} ({} across the replica)",
            thousands(u128::from(d.max_num_seqs)),
            human(d.all_seqs_bytes.min(i128::MAX as u128) as i128, unit),
            human(d.all_seqs_bytes_replica.min(i128::MAX as u128) as i128, unit)
        );
        let _ = writeln!(
            out,
            "  the pool on that rank: {}; one full-length request: {}",
            human(i128::from(d.pool_bytes), unit),
            human(i128::from(d.per_request_bytes), unit)
        );
        let _ = writeln!(
            out,
            "  max-num-batched-tokens {}; at an average of {} tokens, {:.2} requests fit at once",
            thousands(u128::from(d.max_num_batched_tokens)),
            thousands(u128::from(d.average_len)),
            d.concurrency_at_average
        );
    }

    // Unified gate.
    if let Some(g) = &p.unified {
        let _ = writeln!(
            out,
            "\nUnified-memory start gate: {} (needs {} against {} MemAvailable)",
            if g.ok { "passes" } else { "FAILS" },
            human(i128::from(g.needs.0), unit),
            human(i128::from(g.mem_available.0), unit)
        );
        ledger_lines(&mut out, &g.lines, unit);
        let _ = writeln!(out, "  {}", g.utilization_note.render(unit));
    }

    if !p.log_lines.is_empty() {
        let _ = writeln!(
            out,
            "\nvLLM would log (figures: {}{})",
            p.log_provenance.label(),
            if p.log_provenance.basis().is_empty() {
                String::new()
            } else {
                format!("; {}", p.log_provenance.basis())
            }
        );
        for l in &p.log_lines {
            let _ = writeln!(out, "  {l}");
        }
    }
    if !p.notes.is_empty() {
        let _ = writeln!(out, "\nNotes");
        for n in &p.notes {
            let _ = writeln!(out, "  - {}", n.render(unit));
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Listings

fn list_models(as_json: bool) -> String {
    let rows = catalog::models();
    if as_json {
        return pretty(&serde_json::Value::Array(
            rows.iter()
                .map(|r| {
                    serde_json::json!({
                        "id": r.id,
                        "name": r.name,
                        "hf_repo": r.hf_repo,
                        "num_hidden_layers": r.model.n_layers,
                        "max_position_embeddings": r.model.max_position_embeddings,
                        "dtype": r.model.dtype.as_str(),
                        "quantization": r.model.quant.label(),
                        "checkpoint_bytes": r.model.checkpoint_bytes,
                        "source": r.source,
                        "retrieved": r.retrieved,
                        "checkpoint_source": r.checkpoint_source,
                        "unconfirmed": r.unconfirmed,
                        "notes": r.notes,
                    })
                })
                .collect(),
        ));
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<32} {:>6} {:>10}  {:<38} name",
        "id", "layers", "context", "weights"
    );
    for r in rows {
        let _ = writeln!(
            out,
            "{:<32} {:>6} {:>10}  {:<38} {}",
            r.id,
            r.model.n_layers,
            thousands(u128::from(r.model.max_position_embeddings)),
            format!("{} {}", r.model.dtype.as_str(), r.model.quant.label()),
            r.name
        );
        let _ = writeln!(out, "    source: {} (retrieved {})", r.source, r.retrieved);
        if !r.notes.is_empty() {
            let _ = writeln!(out, "    notes: {}", r.notes);
        }
    }
    out
}

fn list_gpus(as_json: bool) -> String {
    let rows = catalog::gpus();
    if as_json {
        return pretty(&serde_json::Value::Array(
            rows.iter()
                .map(|r| {
                    serde_json::json!({
                        "id": r.gpu.id,
                        "name": r.gpu.name,
                        "total_bytes": r.gpu.total.0,
                        "total_confirmed": r.gpu.total_confirmed,
                        "unified_memory": r.gpu.unified_memory,
                        "compute_capability": cc_text(r.gpu.compute_capability),
                        "memory_marketing": r.memory_marketing,
                        "basis": r.basis,
                        "source": r.source,
                        "retrieved": r.retrieved,
                    })
                })
                .collect(),
        ));
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<16} {:>17} {:>10} {:>4}  name",
        "id", "total bytes", "GiB", "cc"
    );
    for r in rows {
        let g = &r.gpu;
        let mut flags = Vec::new();
        if g.unified_memory {
            flags.push("unified memory");
        }
        if !g.total_confirmed {
            flags.push("total not confirmed");
        }
        let _ = writeln!(
            out,
            "{:<16} {:>17} {:>10.2} {:>4}  {}{}",
            g.id,
            thousands(u128::from(g.total.0)),
            g.total.gib(),
            cc_text(g.compute_capability).unwrap_or_else(|| "?".into()),
            g.name,
            if flags.is_empty() {
                String::new()
            } else {
                format!(" [{}]", flags.join(", "))
            }
        );
        let _ = writeln!(out, "    source: {} (retrieved {})", r.source, r.retrieved);
    }
    out
}

fn list_examples(as_json: bool) -> String {
    let rows = catalog::examples::examples();
    if as_json {
        return pretty(&serde_json::Value::Array(
            rows.iter()
                .map(|e| {
                    serde_json::json!({
                        "id": e.id,
                        "title": e.title,
                        "summary": e.summary,
                        "source": e.article,
                    })
                })
                .collect(),
        ));
    }
    let mut out = String::new();
    for e in &rows {
        let _ = writeln!(out, "{:<18} {}", e.id, e.title);
        let _ = writeln!(out, "    {}", e.summary);
        let _ = writeln!(out, "    source: seed article {}", e.article);
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Help

/// `--help` text: the overview, or one command's flags.
pub fn help(topic: Option<&str>) -> String {
    let mut out = String::new();
    match topic {
        None => {
            out.push_str(concat!(
                "headroom: vLLM's GPU memory plan for every rank, exact and explained\n\n",
                "Usage:\n",
                "  headroom plan MODEL [flags]            the ledger of every rank, the checks, the KV pool\n",
                "  headroom solve MODEL [flags] --for T   the setting that makes it work (T: kv-pin,\n",
                "                                         utilization:N, max-model-len, pp-partition:EXTRAS[:PINNED])\n",
                "  headroom models | gpus | examples [--json]   catalog rows with ids and sources\n",
                "  headroom --help | --version\n\n",
                "MODEL is a catalog id (headroom models) or a path to a Hugging Face config.json.\n",
                "Flags keep vLLM's names: headroom plan --help lists them all.\n\n",
                "Exit codes: 0 the engine starts, 1 a check fails (or solve finds no setting), 2 bad input, 3 an internal error (a bug; please report it).\n",
            ));
        }
        Some("models") | Some("gpus") | Some("examples") => {
            let _ = writeln!(
                out,
                "Usage: headroom {} [--json]\n\nLists the catalog rows with their ids and sources.",
                topic.unwrap_or("")
            );
        }
        Some(cmd) => {
            let solve = cmd == "solve";
            if solve {
                out.push_str(concat!(
                    "Usage: headroom solve MODEL [flags] --for TARGET\n\n",
                    "Finds the setting that makes the scenario work, then prints the plan with it:\n",
                    "  kv-pin                      the largest --kv-cache-memory-bytes that still starts\n",
                    "  utilization:N               the smallest --gpu-memory-utilization holding N full-length requests\n",
                    "  max-model-len               the longest --max-model-len that starts\n",
                    "  pp-partition:EXTRAS[:P]     a --pp-layer-partition balancing EXTRAS layer-equivalents on the\n",
                    "                              last stage (drafter, head), keeping at least P layers there\n",
                ));
            } else {
                out.push_str(concat!(
                    "Usage: headroom plan MODEL [flags]\n\n",
                    "Plans vLLM's start-up on every rank: the init check, loading, profiling and the KV budget,\n",
                    "the KV layout and the capacity check. MODEL is a catalog id or a path to a config.json.\n",
                ));
            }
            out.push_str(concat!(
                "\nBYTES: 85029158912, 1,073,741,824, 79.29GiB, 46.1GB, 512MiB, 10e9, 9G (= 9 x 2^30), 9g (= 9 x 10^9).\n",
                "N: 4096, 128k (= 128,000), 128K (= 131,072), 1e6.  --flag=value and --flag_name work too.\n",
            ));
            for section in [
                Section::Model,
                Section::Parallel,
                Section::Engine,
                Section::Measured,
                Section::Unified,
                Section::Output,
                Section::Solve,
            ] {
                if section == Section::Solve && !solve {
                    continue;
                }
                let _ = writeln!(out, "\n{}:", section.title());
                for f in FLAGS.iter().filter(|f| f.section == section) {
                    let mut name = match f.short {
                        Some(s) => format!("{s}, --{}", f.long),
                        None => format!("--{}", f.long),
                    };
                    if let Some(v) = f.value {
                        name.push(' ');
                        name.push_str(v);
                    }
                    let lines = wrap(f.help, 56);
                    if name.len() > 40 {
                        let _ = writeln!(out, "  {name}");
                        name.clear();
                    }
                    for (k, l) in lines.iter().enumerate() {
                        let head = if k == 0 { name.as_str() } else { "" };
                        let _ = writeln!(out, "  {head:<40} {l}");
                    }
                }
            }
            out.push_str(
                "\nExit codes: 0 the engine starts, 1 a check fails (or solve finds no setting), 2 bad input, 3 an internal error (a bug; please report it).\n",
            );
        }
    }
    out
}

/// Splits text into lines of at most `width` characters at spaces (longer words stay whole).
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut cur = String::new();
    for word in text.split_whitespace() {
        if !cur.is_empty() && cur.chars().count() + 1 + word.chars().count() > width {
            lines.push(std::mem::take(&mut cur));
        }
        if !cur.is_empty() {
            cur.push(' ');
        }
        cur.push_str(word);
    }
    if !cur.is_empty() || lines.is_empty() {
        lines.push(cur);
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

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
            false,
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
        let e = lex(&args(&["--tensor-paralel-size", "4"]), false).unwrap_err();
        assert!(e.message.contains("--tensor-parallel-size"), "{e}");
        let e = lex(&args(&["--for", "kv-pin"]), false).unwrap_err();
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
        assert_eq!(s.method, "deepseek_mtp");
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
