//! Real launch commands from public threads and docs (`tests/fixtures/commands/`, each citing
//! its source): every one is read, and every flag its `# expect:` line names is accounted for:
//! read with that value when Headroom reads the flag, else listed as not read with a reason.

use std::fs;
use std::path::PathBuf;

use headroom::catalog::json;
use headroom::import::command::{import, FlagValue, Imported};
use headroom::import::{flags, shell};

fn fixtures() -> Vec<(String, String)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/commands");
    let mut out: Vec<(String, String)> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "txt"))
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                fs::read_to_string(&p).unwrap(),
            )
        })
        .collect();
    out.sort();
    out
}

/// The header's `# expect:` pairs, split as a shell splits them, and the command below.
fn parse(text: &str) -> (Vec<(String, String)>, String) {
    let mut expect = Vec::new();
    let mut body = Vec::new();
    let mut header = true;
    for line in text.lines() {
        if header && (line.starts_with("# source:") || line.starts_with("# what:")) {
            continue;
        }
        if header {
            if let Some(e) = line.strip_prefix("# expect:") {
                let words = &shell::commands(e).unwrap()[0];
                let all = words
                    .assignments
                    .iter()
                    .map(|(n, w)| format!("{n}={}", w.text))
                    .chain(words.words.iter().map(|w| w.text.clone()));
                for w in all {
                    let (k, v) = w.split_once('=').unwrap_or((&w, ""));
                    expect.push((k.to_string(), v.to_string()));
                }
                continue;
            }
        }
        header = false;
        body.push(line);
    }
    (expect, body.join("\n"))
}

fn same(read: &FlagValue, want: &str) -> bool {
    match read {
        FlagValue::Int(n) => want.parse::<f64>().is_ok_and(|w| w == *n as f64),
        FlagValue::Float(x) => want.parse::<f64>().is_ok_and(|w| w == *x),
        FlagValue::Bool(b) => want.eq_ignore_ascii_case(&b.to_string()),
        FlagValue::Json(v) => json::parse(want).is_ok_and(|w| w == *v),
        FlagValue::Text(t) => t == want,
    }
}

/// The destination an ignored entry's flag names.
fn dest_of(flag: &str) -> String {
    let name = flag.split('.').next().unwrap_or(flag);
    flags::lookup(name.trim_start_matches('-'))
        .or_else(|| flags::lookup(name))
        .map_or_else(
            || name.trim_start_matches('-').replace('-', "_"),
            |f| f.dest.to_string(),
        )
}

fn accounted(c: &Imported, dest: &str, want: &str) -> Result<(), String> {
    if let Some(name) = dest
        .strip_prefix("env.")
        .or_else(|| dest.strip_prefix("var."))
    {
        return match c.env(name) {
            Some(v) if v == want || want.contains('$') => Ok(()),
            // A plain assignment expands later words; it need not be in the environment.
            None if dest.starts_with("var.") => Ok(()),
            other => Err(format!("env {name}: {other:?}, expected {want:?}")),
        };
    }
    if dest == "image_tag" {
        return Ok(());
    }
    // The flags before `--speculative-config` are read into it.
    let spec_key = match dest {
        "speculative_model" => Some("model"),
        "num_speculative_tokens" => Some("num_speculative_tokens"),
        _ => None,
    };
    if let (Some(key), Some(FlagValue::Json(v))) = (spec_key, c.flag("speculative_config")) {
        let got = v.get(key).map(|x| x.to_string());
        let ok = got.as_deref().is_some_and(|g| g.trim_matches('"') == want)
            || (key == "model" && want == "[ngram]" && v.get("method").is_some());
        return if ok {
            Ok(())
        } else {
            Err(format!(
                "{dest}: speculative_config {v}, expected {key} {want}"
            ))
        };
    }
    if let Some(v) = c.flag(dest) {
        return if want.contains('$') || same(v, want) || dest == "model" {
            Ok(())
        } else {
            Err(format!("{dest}: read {v}, expected {want}"))
        };
    }
    // `--disable-X` is the negation of `enable_X` in vLLM 0.33.0 (and the other way round).
    let twin = dest
        .strip_prefix("disable_")
        .map(|r| format!("enable_{r}"))
        .or_else(|| dest.strip_prefix("enable_").map(|r| format!("disable_{r}")));
    if c.ignored.iter().any(|i| {
        let d = i.dest.map_or_else(|| dest_of(&i.flag), str::to_string);
        d == dest || twin.as_deref() == Some(d.as_str())
    }) {
        return Ok(());
    }
    Err(format!(
        "{dest}={want}: neither read nor listed as not read"
    ))
}

#[test]
fn every_real_command_is_read_and_every_flag_accounted_for() {
    let all = fixtures();
    assert!(all.len() >= 16, "{} fixtures", all.len());
    let mut problems = Vec::new();
    for (name, text) in &all {
        assert!(text.starts_with("# source: http"), "{name} cites no source");
        let (expect, body) = parse(text);
        assert!(!expect.is_empty(), "{name}: no # expect: line");
        match import(&body) {
            Err(e) => problems.push(format!("{name}: refused: {e}")),
            Ok(c) => {
                for (dest, want) in &expect {
                    if let Err(e) = accounted(&c, dest, want) {
                        problems.push(format!("{name}: {e}"));
                    }
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
