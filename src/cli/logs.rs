//! `headroom import-log FILE|-` and `headroom plan --log FILE|-`: a vLLM startup log read,
//! printed as readings, and replayed against a plan (predicted against measured).

use serde_json::{json, Map, Value};

use super::json::{float, imported};
use super::CliError;
use crate::import::log::{read, Log, MAX_LOG};
use crate::import::replay::{args_command, compare, derived, Comparison, Derived};

/// The log's text: a file, or stdin for `-`, at most [`MAX_LOG`] bytes (one more is read so
/// the reader refuses a longer one by its size). Bytes that are not UTF-8 (a cut-off
/// multi-byte character, a binary paste) become U+FFFD, as a terminal shows them.
pub(super) fn log_text(
    arg: &str,
    stdin: &mut dyn std::io::Read,
    flag: &str,
) -> Result<String, CliError> {
    use std::io::Read as _;
    let mut bytes = Vec::new();
    let limit = MAX_LOG as u64 + 1;
    if arg == "-" {
        stdin
            .take(limit)
            .read_to_end(&mut bytes)
            .map_err(|e| CliError::new(flag, format!("stdin cannot be read: {e}")))?;
    } else {
        let file = std::fs::File::open(arg)
            .map_err(|e| CliError::new(flag, format!("{arg}: cannot be opened: {e}")))?;
        file.take(limit)
            .read_to_end(&mut bytes)
            .map_err(|e| CliError::new(flag, format!("{arg}: cannot be read: {e}")))?;
    }
    Ok(String::from_utf8(bytes)
        .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()))
}

/// Reads the log at `arg` (a path, or `-`), naming `flag` on any error.
pub(super) fn read_log(
    arg: &str,
    stdin: &mut dyn std::io::Read,
    flag: &str,
) -> Result<Log, CliError> {
    let text = log_text(arg, stdin, flag)?;
    read(&text).map_err(|e| CliError::new(flag, e.0))
}

/// `headroom import-log --json`: `{vllm_version, version_basis, readings, inputs,
/// non_default_args, flags, conflicts, notes}`. Each reading is `{key, value, unit, line,
/// rank}` with its other printed figures beside them (`tokens_per_request`, `free`, ...).
pub fn log_json(l: &Log) -> Value {
    let readings: Vec<Value> = l
        .readings
        .iter()
        .map(|r| {
            let mut o = Map::new();
            o.insert("key".into(), r.key.into());
            o.insert("value".into(), float(r.value));
            o.insert("unit".into(), r.unit.into());
            o.insert("line".into(), r.line.into());
            o.insert("rank".into(), r.rank.clone().into());
            for (name, v) in &r.fields {
                o.insert((*name).into(), float(*v));
            }
            Value::Object(o)
        })
        .collect();
    let inputs: Map<String, Value> = l
        .inputs()
        .into_iter()
        .map(|(i, t)| (i.flag().to_string(), Value::from(t)))
        .collect();
    let args: Map<String, Value> = l
        .non_default_args
        .iter()
        .map(|(k, v)| (k.clone(), Value::from(v.as_str())))
        .collect();
    json!({
        "vllm_version": l.vllm_version,
        "version_basis": l.version_basis,
        "readings": readings,
        "inputs": inputs,
        "non_default_args": if l.non_default_args_line.is_some() { Value::Object(args) } else { Value::Null },
        "command": args_command(l).map(|c| imported(&c)),
        "conflicts": l.conflicts,
        "notes": l.notes,
    })
}

/// `headroom import-log`: what the log says, a line per reading.
pub fn log_view(l: &Log) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "vLLM log; release {} ({})",
        l.vllm_version.as_deref().unwrap_or("not known"),
        l.version_basis
    );
    let _ = writeln!(out, "\nReadings (as printed):");
    if l.readings.is_empty() {
        let _ = writeln!(out, "  none: no line Headroom knows");
    }
    for r in &l.readings {
        let fields: Vec<String> = r.fields.iter().map(|(n, v)| format!("{n} {v}")).collect();
        let _ = writeln!(
            out,
            "  line {:>5}  {:<22} {} {}{}{}",
            r.line,
            r.key,
            r.value,
            r.unit,
            r.rank
                .as_deref()
                .map_or(String::new(), |k| format!("  [{k}]")),
            if fields.is_empty() {
                String::new()
            } else {
                format!("  ({})", fields.join(", "))
            }
        );
    }
    if let Some(line) = l.non_default_args_line {
        let _ = writeln!(out, "\nnon-default args (line {line}):");
        for (k, v) in &l.non_default_args {
            let _ = writeln!(out, "  {k} = {v}");
        }
    }
    let inputs = l.inputs();
    if !inputs.is_empty() {
        let _ = writeln!(out, "\nAs Headroom's inputs (headroom plan --log):");
        for (i, t) in inputs {
            let _ = writeln!(out, "  --{} {t}", i.flag());
        }
    }
    for c in &l.conflicts {
        let _ = writeln!(out, "\ncontradiction: {c}");
    }
    for n in &l.notes {
        let _ = writeln!(out, "note: {n}");
    }
    out
}

/// The comparison as JSON: `[{figure, unit, predicted, measured, difference, line, rank}]`.
pub fn comparison_json(c: &[Comparison]) -> Value {
    Value::Array(
        c.iter()
            .map(|c| {
                json!({
                    "figure": c.figure,
                    "unit": c.unit,
                    "predicted": c.predicted.map(float),
                    "measured": float(c.measured),
                    "difference": c.difference.map(float),
                    "line": c.line,
                    "rank": c.rank,
                    "relative": c.relative().map(float),
                    "predicted_provenance": c.provenance.as_ref().map(|p| p.label()),
                    "predicted_basis": c.provenance.as_ref().map(|p| p.basis()),
                })
            })
            .collect(),
    )
}

/// What the log implies, as JSON: `[{figure, value, unit, from}]`, each derived.
pub fn derived_json(d: &[Derived]) -> Value {
    Value::Array(
        d.iter()
            .map(|d| {
                json!({
                    "figure": d.figure,
                    "value": float(d.value),
                    "unit": d.unit,
                    "from": d.from,
                    "provenance": "derived",
                })
            })
            .collect(),
    )
}

/// The comparison and the derived figures, as the plan's last section.
pub fn comparison_view(c: &[Comparison], d: &[Derived]) -> String {
    use std::fmt::Write as _;
    let mut out =
        String::from("\nPredicted (without the log's measurements) against measured (the log):\n");
    if c.is_empty() {
        out.push_str("  the log prints no figure Headroom predicts\n");
    }
    let _ = writeln!(
        out,
        "  {:<36} {:>14} {:>14} {:>12}  line  prediction",
        "figure", "predicted", "measured", "difference"
    );
    for c in c {
        let num = |x: f64| format!("{x} {}", c.unit);
        let _ = writeln!(
            out,
            "  {:<36} {:>14} {:>14} {:>12}  {}{}  {}",
            c.figure,
            c.predicted.map_or_else(|| "not reached".into(), num),
            num(c.measured),
            c.difference
                .map_or_else(|| "-".into(), |d| format!("{d:+}")),
            c.line,
            c.rank.map_or(String::new(), |r| format!(" (rank {r})")),
            c.provenance.as_ref().map_or("", |p| p.label())
        );
    }
    if !d.is_empty() {
        out.push_str("\nWhat the log implies (derived, not printed by vLLM):\n");
        for d in d {
            let _ = writeln!(out, "  {} = {} {}: {}", d.figure, d.value, d.unit, d.from);
        }
    }
    out
}

/// Both views' inputs: the comparison of a replayed log against the prediction's plan, and
/// why there is none when the scenario without the log's measurements cannot be planned.
pub(super) fn replay_figures(
    log: &Log,
    predicted: &crate::calc::Scenario,
) -> (Vec<Comparison>, Vec<Derived>, Option<String>) {
    match crate::calc::plan(predicted) {
        Ok(p) => (compare(log, &p), derived(log, &p), None),
        Err(e) => (
            Vec::new(),
            Vec::new(),
            Some(format!(
                "no comparison: the scenario without the log's measurements cannot be planned ({e})"
            )),
        ),
    }
}
