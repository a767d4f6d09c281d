//! The first verdict's copy of the catalog (`--features verdict` without `web`): the same rows
//! with the prose only the full page shows (sources, bases, notes, unconfirmed lists, retrieval
//! dates) emptied and the JSON compacted, written to `$OUT_DIR/catalog-min/`. The first verdict
//! shows a plan's figures and provenance labels, never a row's sources, and every byte of its
//! program is on the page's critical path; the full page, the CLI and the tests read
//! `catalog/` itself (`catalog::catalog_file!`).

use std::fs;
use std::path::Path;

use serde_json::Value;

/// Row keys whose text only the full page shows (a GPU's memory as sold is its picker's).
const PROSE: &[&str] = &[
    "source",
    "notes",
    "retrieved",
    "total_bytes_basis",
    "memory_marketing",
];

fn strip(v: &mut Value) {
    if let Value::Object(m) = v {
        for k in PROSE {
            if let Some(x) = m.get_mut(*k) {
                *x = Value::String(String::new());
            }
        }
        if let Some(x) = m.get_mut("unconfirmed") {
            *x = Value::Array(Vec::new());
        }
        // A checkpoint's or a measurement's source is prose too.
        for k in ["checkpoint", "measured"] {
            if let Some(Value::Object(c)) = m.get_mut(k) {
                if let Some(x) = c.get_mut("source") {
                    *x = Value::String(String::new());
                }
            }
        }
    }
}

fn main() {
    println!("cargo:rerun-if-changed=catalog");
    println!("cargo:rerun-if-changed=build.rs");
    let out = Path::new(&std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("catalog-min");
    fs::create_dir_all(out.join("models")).expect("OUT_DIR is writable");
    let read = |p: &Path| -> Value {
        let text = fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
    };
    let mut gpus = read(Path::new("catalog/gpus.json"));
    if let Value::Array(rows) = &mut gpus {
        rows.iter_mut().for_each(strip);
    }
    fs::write(out.join("gpus.json"), gpus.to_string()).expect("write gpus.json");
    let mut names: Vec<_> = fs::read_dir("catalog/models")
        .expect("catalog/models")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    names.sort();
    for p in names {
        let mut row = read(&p);
        strip(&mut row);
        fs::write(
            out.join("models").join(p.file_name().expect("a file name")),
            row.to_string(),
        )
        .expect("write a model row");
    }
}
