//! The page's size is a budget (README, "Speed and size"), and one call can cost more than a
//! week of trimming: `str::parse::<f64>` links core's float parser, whose table of powers of
//! five does not compress (about 15 KB gzip of the page). Code the browser build compiles reads
//! decimals with `calc::decimal::parse_f64`, which this test holds it to.

use std::fs;
use std::path::Path;

/// Every `.rs` file under `dir`, recursively.
fn sources(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn the_browser_build_never_parses_floats_with_core() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&root, &mut files);
    let mut offenders = Vec::new();
    for f in files {
        // The CLI is not in the browser build; its float parsing costs nothing there.
        if f.ends_with("io/cli.rs") || f.ends_with("bin/headroom.rs") {
            continue;
        }
        let text = fs::read_to_string(&f).unwrap();
        // Unit tests inside a module may compare against core's parser.
        let code = text.split("#[cfg(test)]").next().unwrap_or("");
        for (n, line) in code.lines().enumerate() {
            let l = line.trim_start();
            if l.starts_with("//") {
                continue;
            }
            if l.contains("parse::<f64>") || l.contains("parse::<f32>") {
                offenders.push(format!("{}:{}: {}", f.display(), n + 1, l));
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "use calc::decimal::parse_f64 instead:\n{}",
        offenders.join("\n")
    );
}
