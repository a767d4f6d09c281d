//! The command line's flags and their lexer, and `--help`, all from one list: the input
//! schema's rows that the command line gives as flags ([`crate::input::schema::ROWS`]), then
//! the CLI's own flags that are not scenario inputs ([`CLI_ONLY`]).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::OnceLock;

use crate::calc::input::Input;
use crate::input::schema::{Cli, Section, ROWS};

use super::CliError;

/// The commands that take scenario flags.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cmd {
    Plan,
    Solve,
    Link,
    /// `headroom command`: the scenario as a `vllm serve` command.
    Command,
}

impl Cmd {
    fn name(self) -> &'static str {
        match self {
            Cmd::Plan => "plan",
            Cmd::Solve => "solve",
            Cmd::Link => "link",
            Cmd::Command => "command",
        }
    }
}

/// One flag of `plan`, `solve` and `link`.
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
    /// The default and whose it is; empty when there is none to state.
    pub default: &'static str,
    /// The input it gives; `None` for the CLI's own flags.
    pub input: Option<Input>,
    /// The one command that takes it; `None` for the scenario's flags, which all three take.
    pub only: Option<Cmd>,
    /// A command that does not take it (`link` prints a URL, not a plan: no `--json`).
    pub except: Option<Cmd>,
}

impl Flag {
    fn takes(&self, cmd: Cmd) -> bool {
        self.only.map_or(true, |c| c == cmd) && self.except != Some(cmd)
    }
}

const fn own(
    long: &'static str,
    value: Option<&'static str>,
    section: Section,
    only: Option<Cmd>,
    help: &'static str,
) -> Flag {
    Flag {
        long,
        short: None,
        value,
        section,
        help,
        default: "",
        input: None,
        only,
        except: None,
    }
}

/// The CLI's flags that are not a row of the schema: `--speculative-config`, whose JSON maps
/// onto the inputs `spec`, `spec-tokens` and `draft-model`, and the ones that choose how to
/// answer rather than what to plan.
pub const CLI_ONLY: [Flag; 7] = [
    own("from-command", Some("TEXT|-"), Section::Model, None, "Start from a vllm serve, python -m vllm.entrypoints.openai.api_server or docker run vllm/vllm-openai command (its text, or - for stdin): its flags and environment become inputs, other flags apply on top (headroom import-command shows what it reads)."),
    own("speculative-config", Some("JSON"), Section::Speculative, None, "E.g. '{\"method\":\"deepseek_mtp\",\"num_speculative_tokens\":1}'; for draft_model, \"model\" names the drafter (catalog id, Hugging Face repo or config.json path)."),
    Flag {
        except: Some(Cmd::Link),
        ..own("json", None, Section::Output, None, "Print the plan as JSON (keys in docs/cli.md).")
    },
    own("log", Some("FILE|-"), Section::Model, Some(Cmd::Plan), "A vLLM startup log (a file, or - for stdin): its non-default args are the flags (unless --from-command gives them), its measured figures (weights, available KV memory, CUDA-graph estimate, free memory) become measured inputs, and the plan ends with predicted against measured (headroom import-log shows what it reads)."),
    own("url", Some("URL"), Section::Output, Some(Cmd::Plan), "Plan the page's link (a whole URL, or only its ?query) with the page's own decoder, instead of flags."),
    own("base", Some("URL"), Section::Output, Some(Cmd::Link), "The page the link opens (default http://127.0.0.1:8080/, headroom-web's)."),
    own("for", Some("TARGET"), Section::Solve, Some(Cmd::Solve), "kv-pin | utilization:N | max-model-len | pp-partition:EXTRAS[:PINNED]."),
];

/// Every flag, in `--help` order: by section, the schema's rows in their order, then the
/// CLI's own.
pub fn flags() -> &'static [Flag] {
    static FLAGS: OnceLock<Vec<Flag>> = OnceLock::new();
    FLAGS.get_or_init(|| {
        let mut out = Vec::new();
        for section in Section::ALL {
            for r in ROWS.iter().filter(|r| r.section == section) {
                let value = match r.cli {
                    Cli::Value(meta) => Some(meta),
                    Cli::Switch => None,
                    // Given through MODEL's file or the speculative config's JSON.
                    Cli::SpeculativeConfig | Cli::ModelFile => continue,
                };
                out.push(Flag {
                    long: r.input.flag(),
                    short: r.short,
                    value,
                    section,
                    help: r.help,
                    default: r.default,
                    input: Some(r.input),
                    only: None,
                    except: None,
                });
            }
            out.extend(CLI_ONLY.iter().filter(|f| f.section == section));
        }
        out
    })
}

fn find_flag(name: &str) -> Option<&'static Flag> {
    flags()
        .iter()
        .find(|f| f.long == name || f.short.is_some_and(|s| &s[1..] == name))
}

/// The flags of one invocation, as texts keyed by their long name (the last occurrence wins,
/// as with vLLM's argparse).
#[derive(Clone, Debug, Default)]
pub struct Args {
    pub positional: Vec<String>,
    pub values: BTreeMap<&'static str, String>,
    pub help: bool,
}

/// Splits the tokens into flags and positionals; knows each flag's arity, nothing of values.
pub fn lex(tokens: &[String], cmd: Cmd) -> Result<Args, CliError> {
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
            let mut hits = flags()
                .iter()
                .filter(|f| f.long.starts_with(n) && f.takes(cmd));
            match (hits.next(), hits.next()) {
                (Some(f), None) if tok.starts_with("--") && n.len() >= 3 => Some(f),
                _ => None,
            }
        };
        let (flag, negated) = match find_flag(&name).or_else(|| prefixed(&name)) {
            Some(f) => (f, false),
            None => match name.strip_prefix("no-").and_then(find_flag) {
                Some(f) if f.value.is_none() => (f, true),
                _ => return Err(unknown_flag(tok, &name, cmd)),
            },
        };
        let shown = format!("--{}", flag.long);
        if !flag.takes(cmd) {
            let only = match (flag.only, flag.except) {
                (Some(c), _) => format!("only `headroom {}` takes it", c.name()),
                (None, Some(c)) => format!("`headroom {}` does not take it", c.name()),
                (None, None) => "not taken here".to_string(),
            };
            return Err(CliError::new(shown, only));
        }
        let text = match (flag.value, inline) {
            (None, None) => (!negated).to_string(),
            (None, Some(v)) if !negated => match v.trim().to_ascii_lowercase().as_str() {
                "true" | "1" | "yes" | "on" => "true".into(),
                "false" | "0" | "no" | "off" => "false".into(),
                _ => {
                    return Err(CliError::new(
                        shown,
                        format!(
                            "{} is not true or false (the flag alone means true)",
                            crate::calc::quoted(v)
                        ),
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

fn unknown_flag(tok: &str, name: &str, cmd: Cmd) -> CliError {
    // `plan` is not told about a flag only `solve` takes.
    let best = flags()
        .iter()
        .filter(|f| f.takes(cmd))
        .map(|f| (edit_distance(name, f.long), f.long))
        .min()
        .filter(|(d, _)| *d <= 3);
    let hint = match best {
        Some((_, long)) => format!("; did you mean --{long}?"),
        None => String::new(),
    };
    CliError::new(
        crate::calc::clipped(tok.split('=').next().unwrap_or(tok)),
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
                "  headroom plan --url URL [--json]       plan the page's link (a URL, or its ?query)\n",
                "  headroom link MODEL [flags] [--base URL]   the page's link for the scenario\n",
                "  headroom command MODEL [flags]         the scenario as a vllm serve command\n",
                "  headroom import-command TEXT|- [--json]   what Headroom reads from a launch command\n",
                "  headroom plan --from-command TEXT|- [flags]   plan a launch command (flags on top)\n",
                "  headroom import-log FILE|- [--json]    what Headroom reads from a vLLM startup log\n",
                "  headroom plan [MODEL] --log FILE|-     plan with a log's flags and measurements, predicted against measured\n",
                "  headroom models | gpus | examples [--json]   catalog rows with ids and sources\n",
                "  headroom --help | --version\n\n",
                "MODEL is a catalog id (headroom models) or a path to a Hugging Face config.json.\n",
                "Flags keep vLLM's names: headroom plan --help lists them all.\n\n",
                "Exit codes: 0 the engine starts, 1 a check fails (or solve finds no setting), 2 bad input, 3 an internal error (a bug; please report it).\n",
            ));
        }
        Some("import-command") => out.push_str(concat!(
            "Usage: headroom import-command TEXT|- [--json]\n\n",
            "Reads a launch command (TEXT, or - for stdin): vllm serve MODEL ..., python -m\n",
            "vllm.entrypoints.openai.api_server --model MODEL ..., or docker run ... vllm/vllm-openai:TAG ...,\n",
            "with the environment set before it (export lines, NAME=value prefixes, docker -e). Prints every\n",
            "flag read under vLLM's destination name with the value vLLM's parser gives, and every flag,\n",
            "argument or variable not read, with the reason. --json: {form, model, env, gpus_visible,\n",
            "vllm_version, flags, ignored, notes} (docs/cli.md). Plan it with headroom plan --from-command.\n",
        )),
                Some("import-log") => out.push_str(concat!(
            "Usage: headroom import-log FILE|- [--json]\n\n",
            "Reads a vLLM startup log (FILE, or - for stdin; at most 16 MiB) in the wording of any release:\n",
            "non-default args, the release line, Model loading took, Available KV cache memory, GPU KV cache\n",
            "size, Maximum concurrency, the CUDA-graph lines, the init and capacity errors, the V0 engine's\n",
            "Memory profiling and # GPU blocks lines, each with its line and rank. --json: {vllm_version,\n",
            "version_basis, readings, inputs, non_default_args, command, conflicts, notes} (docs/cli.md).\n",
            "Plan it with headroom plan --log FILE.\n",
        )),
        Some("models") | Some("gpus") | Some("examples") => {
            let _ = writeln!(
                out,
                "Usage: headroom {} [--json]\n\nLists the catalog rows with their ids and sources.",
                topic.unwrap_or("")
            );
        }
        Some(topic) => {
            let cmd = match topic {
                "solve" => Cmd::Solve,
                "link" => Cmd::Link,
                "command" => Cmd::Command,
                _ => Cmd::Plan,
            };
            if cmd == Cmd::Command {
                out.push_str(concat!(
                    "Usage: headroom command MODEL [flags] [--json]\n\n",
                    "Prints the scenario as a ready vllm serve command: CUDA_VISIBLE_DEVICES and\n",
                    "VLLM_PP_LAYER_PARTITION, vLLM's flag names, and only the flags that differ from vLLM's\n",
                    "defaults for the release. Its first line, a comment, names what a command cannot carry (the\n",
                    "GPU, the release, measured terms) as the flags that give it to headroom plan --from-command.\n",
                ));
            } else             if cmd == Cmd::Link {
                out.push_str(concat!(
                    "Usage: headroom link MODEL [flags] [--base URL]\n\n",
                    "Prints the page's link for the scenario the flags describe: open it, or plan it back with\n",
                    "headroom plan --url. A config.json path travels as the page's pasted config.\n",
                ));
            } else if cmd == Cmd::Solve {
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
                    "With --url, the scenario is the page's link instead of MODEL and flags.\n",
                ));
            }
            out.push_str(concat!(
                "\nBYTES: 85029158912, 1,073,741,824, 79.29GiB, 46.1GB, 512MiB, 10e9, 9G (= 9 x 2^30), 9g (= 9 x 10^9).\n",
                "N: 4096, 128k (= 128,000), 128K (= 131,072), 1e6.  --flag=value and --flag_name work too.\n",
            ));
            for section in Section::ALL {
                let listed: Vec<&Flag> = flags()
                    .iter()
                    .filter(|f| f.section == section && f.takes(cmd))
                    .collect();
                if listed.is_empty() {
                    continue;
                }
                let _ = writeln!(out, "\n{}:", section.cli_title());
                for f in listed {
                    let mut name = match f.short {
                        Some(s) => format!("{s}, --{}", f.long),
                        None => format!("--{}", f.long),
                    };
                    if let Some(v) = f.value {
                        name.push(' ');
                        name.push_str(v);
                    }
                    let text = match f.default {
                        "" => f.help.to_string(),
                        d => format!("{} Default: {d}.", f.help),
                    };
                    let lines = wrap(&text, 56);
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
