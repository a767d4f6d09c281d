//! The first verdict of each link read from stdin (one per line, the address from `?` on), as
//! this build plans it: one JSON line per link, the list of strings the verdict program hands to
//! public/boot.js, or `null` where a build with `catalog-compiled` and without `config-reader`
//! leaves a pasted config.json unplanned (`verdict::handed_over`, as src/bin/verdict.rs does).
//!
//! `scripts/verdict-diff.py` builds this under the app's features and under each verdict
//! build's, and compares their answers on random links.

use std::io::{BufRead, Write};

fn main() {
    let stdin = std::io::stdin();
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for line in stdin.lock().lines() {
        let Ok(link) = line else {
            eprintln!("first_verdicts: stdin is not UTF-8 text");
            std::process::exit(2);
        };
        let words = (!headroom::verdict::handed_over(&link, None, None))
            .then(|| headroom::verdict::first_verdict(&link, None, None).words());
        let json = serde_json::to_string(&words).expect("a list of strings serializes");
        if writeln!(out, "{json}").is_err() {
            std::process::exit(1);
        }
    }
}
