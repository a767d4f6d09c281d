//! The architecture's invariants (docs/architecture.md), checked on the source tree so that a
//! change that breaks one fails here with the file and line, not in a review months later.
//!
//! - `calc` is pure and std-only: it imports nothing from the crate's other layers, nor serde,
//!   leptos or the browser;
//! - `calc/mod.rs` is a facade: module declarations and re-exports only;
//! - no function in `src/calc` is longer than 200 lines, and no file under `src/` longer than
//!   1,000 non-blank lines outside its test module;
//! - the views read the Plan: the page never calls the planner's internals.

use std::fs;
use std::path::{Path, PathBuf};

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn src(sub: &str) -> Vec<PathBuf> {
    let mut files = Vec::new();
    sources(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src").join(sub),
        &mut files,
    );
    files.sort();
    files
}

fn rel(p: &Path) -> String {
    p.strip_prefix(env!("CARGO_MANIFEST_DIR"))
        .unwrap_or(p)
        .display()
        .to_string()
}

/// The lines before the file's inline test module (`#[cfg(test)]` followed by `mod NAME`).
fn code_lines(text: &str) -> Vec<&str> {
    let lines: Vec<&str> = text.lines().collect();
    let mut end = lines.len();
    for i in 0..lines.len().saturating_sub(1) {
        if lines[i].trim() == "#[cfg(test)]" && lines[i + 1].trim_start().starts_with("mod ") {
            end = i;
            break;
        }
    }
    lines[..end].to_vec()
}

/// Blanks out string and char literals and line comments, so braces inside them do not count.
fn strip(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars().peekable();
    let mut in_str = false;
    while let Some(c) = chars.next() {
        if in_str {
            match c {
                '\\' => {
                    chars.next();
                }
                '"' => in_str = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_str = true,
            '/' if chars.peek() == Some(&'/') => break,
            '\'' => {
                // A char literal ('{', '\'') or a lifetime ('a): skip a literal only.
                let rest: String = chars.clone().take(3).collect();
                if let Some(escaped) = rest.strip_prefix('\\') {
                    if let Some(end) = escaped.find('\'') {
                        for _ in 0..end + 2 {
                            chars.next();
                        }
                    }
                } else if rest.chars().nth(1) == Some('\'') {
                    chars.next();
                    chars.next();
                }
            }
            _ => out.push(c),
        }
    }
    out
}

/// Every code line (test modules aside) of the files under `sub` that contains any of `words`,
/// as `file:line: text`.
fn offending_lines(sub: &str, words: &[&str]) -> Vec<String> {
    let mut bad = Vec::new();
    for f in src(sub) {
        let text = fs::read_to_string(&f).unwrap();
        for (n, line) in code_lines(&text).iter().enumerate() {
            let l = strip(line);
            if words.iter().any(|w| l.contains(w)) {
                bad.push(format!("{}:{}: {}", rel(&f), n + 1, line.trim()));
            }
        }
    }
    bad
}

/// `(name, first line, length in lines)` of every `fn` with a body.
fn functions(text: &str) -> Vec<(String, usize, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let t = strip(line);
        let t = t.trim_start();
        let decl = [
            "pub(crate) fn ",
            "pub(super) fn ",
            "pub fn ",
            "const fn ",
            "pub const fn ",
            "fn ",
        ]
        .iter()
        .find_map(|p| t.strip_prefix(p));
        let Some(rest) = decl else { continue };
        let name: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let (mut depth, mut started) = (0i64, false);
        for (j, l) in lines.iter().enumerate().skip(i) {
            for c in strip(l).chars() {
                match c {
                    '{' => {
                        depth += 1;
                        started = true;
                    }
                    '}' => depth -= 1,
                    ';' if !started && depth == 0 => break,
                    _ => {}
                }
            }
            if !started && strip(l).contains(';') {
                break;
            }
            if started && depth <= 0 {
                out.push((name.clone(), i + 1, j - i + 1));
                break;
            }
        }
    }
    out
}

#[test]
fn no_function_in_calc_is_longer_than_200_lines() {
    let mut long = Vec::new();
    for f in src("calc") {
        let text = fs::read_to_string(&f).unwrap();
        let code = code_lines(&text).join("\n");
        for (name, line, len) in functions(&code) {
            if len > 200 {
                long.push(format!("{}:{line}: fn {name} is {len} lines", rel(&f)));
            }
        }
    }
    assert!(
        long.is_empty(),
        "split these functions:\n{}",
        long.join("\n")
    );
}

#[test]
fn no_source_file_is_longer_than_1000_non_blank_lines() {
    let mut long = Vec::new();
    for f in src("") {
        let text = fs::read_to_string(&f).unwrap();
        let n = code_lines(&text)
            .iter()
            .filter(|l| !l.trim().is_empty())
            .count();
        if n > 1000 {
            long.push(format!("{}: {n} non-blank lines", rel(&f)));
        }
    }
    assert!(long.is_empty(), "split these files:\n{}", long.join("\n"));
}

#[test]
fn calc_is_pure_and_std_only() {
    let forbidden = [
        "crate::catalog",
        "crate::io",
        "crate::input",
        "crate::cli",
        "crate::ui",
        "serde",
        "leptos",
        "wasm_bindgen",
        "web_sys",
        "js_sys",
        "plotters",
        "std::fs",
        "std::net",
        "std::process",
        "std::env",
        "println!",
        "eprintln!",
    ];
    let bad = offending_lines("calc", &forbidden);
    assert!(
        bad.is_empty(),
        "calc must stay pure and std-only:\n{}",
        bad.join("\n")
    );
}

#[test]
fn calc_mod_is_a_facade() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/calc/mod.rs");
    let text = fs::read_to_string(&path).unwrap();
    let mut bad = Vec::new();
    let mut in_use = false;
    for (n, line) in text.lines().enumerate() {
        let t = line.trim();
        if in_use {
            in_use = !t.ends_with(';');
            continue;
        }
        if t.is_empty() || t.starts_with("//") || t.starts_with("#[") {
            continue;
        }
        let decl =
            t.starts_with("pub mod ") || t.starts_with("mod ") || t.starts_with("pub(crate) mod ");
        if decl {
            continue;
        }
        if t.starts_with("pub use ") || t.starts_with("use ") {
            in_use = !t.ends_with(';');
            continue;
        }
        bad.push(format!("src/calc/mod.rs:{}: {t}", n + 1));
    }
    assert!(
        bad.is_empty(),
        "calc/mod.rs declares and re-exports only:\n{}",
        bad.join("\n")
    );
}

#[test]
fn the_cli_does_not_import_the_page_url_module() {
    // A link goes through the input layer's codec (`input::query`), which the page uses too;
    // `io::url` is the page's own module.
    let bad = offending_lines("cli", &["io::url", "crate::ui"]);
    assert!(
        bad.is_empty(),
        "the CLI reads the input layer, not the page:\n{}",
        bad.join("\n")
    );
}

/// What a layer beside the core never names: the views, the browser, serde.
const VIEWS_AND_SERDE: [&str; 7] = [
    "crate::cli",
    "crate::ui",
    "crate::io",
    "leptos",
    "wasm_bindgen",
    "web_sys",
    "serde",
];

#[test]
fn the_input_layer_is_std_only_and_below_the_views() {
    let bad = offending_lines("input", &VIEWS_AND_SERDE);
    assert!(
        bad.is_empty(),
        "input turns text into a Scenario and imports no view:\n{}",
        bad.join("\n")
    );
}

#[test]
fn views_read_the_plan_not_the_planner() {
    // The page and the CLI format a Plan (and `calc::settings` for a refused scenario); the
    // rules that make its figures live behind calc's facade, so a view never repeats them.
    let internals = [
        "calc::runtime",
        "calc::backend",
        "calc::kv",
        "calc::weights",
        "calc::planner",
        "batch_defaults",
        "v4_default_backend",
    ];
    for sub in ["ui", "cli"] {
        let bad = offending_lines(sub, &internals);
        assert!(
            bad.is_empty(),
            "{sub} reaches past the Plan into calc's internals:\n{}",
            bad.join("\n")
        );
    }
}

#[test]
fn the_importers_are_std_only_and_below_the_views() {
    let mut forbidden = VIEWS_AND_SERDE.to_vec();
    forbidden.extend(["std::fs", "std::process"]);
    let bad = offending_lines("import", &forbidden);
    assert!(
        bad.is_empty(),
        "import reads text a user pasted, touches nothing, imports no view:\n{}",
        bad.join("\n")
    );
}
