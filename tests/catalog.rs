//! The catalog is data with provenance, checked here: every file is listed and parses, ids are
//! unique, sorted and match their file names, every row says where it came from, the required
//! GPUs are present, every model plans, weight estimates agree with the checkpoint sizes the
//! rows carry, and the files stay in their canonical form.
//!
//! Canonical form: 2-space indentation, one value per line, `"key": value`, empty arrays and
//! objects as `[]` / `{}`, a final newline; numbers and strings exactly as written. Run with
//! `HEADROOM_REWRITE_CATALOG=1` to rewrite the files into it instead of failing.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use headroom::calc::scenario::{MaxLen, Parallel};
use headroom::calc::weights::checkpoint_estimate;
use headroom::calc::{plan, Scenario};
use headroom::catalog::{self, parse_gpus, parse_model_row, MODEL_FILES};

fn catalog_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("catalog")
}

fn model_paths() -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = fs::read_dir(catalog_dir().join("models"))
        .expect("catalog/models")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    paths.sort();
    paths
}

fn stem(p: &Path) -> String {
    p.file_stem().unwrap().to_string_lossy().into_owned()
}

// ---------------------------------------------------------------------------------------------
// Files, ids, order.

#[test]
fn every_model_file_is_listed_and_parses() {
    let listed: BTreeSet<&str> = MODEL_FILES.iter().map(|(id, _)| *id).collect();
    let on_disk: BTreeSet<String> = model_paths().iter().map(|p| stem(p)).collect();
    for id in &on_disk {
        assert!(
            listed.contains(id.as_str()),
            "catalog/models/{id}.json is not in MODEL_FILES"
        );
    }
    for id in &listed {
        assert!(
            on_disk.contains(*id),
            "MODEL_FILES lists {id} but catalog/models/{id}.json is missing"
        );
    }
    assert_eq!(
        listed.len(),
        MODEL_FILES.len(),
        "MODEL_FILES lists an id twice"
    );
    for (id, text) in MODEL_FILES {
        // The embedded text is the file's text (include_str! of the same path).
        let disk =
            fs::read_to_string(catalog_dir().join("models").join(format!("{id}.json"))).unwrap();
        assert_eq!(
            *text, disk,
            "{id}: the embedded row differs from the file; rebuild"
        );
        let row = parse_model_row(text).unwrap_or_else(|e| panic!("{id}: {e} ({})", e.field));
        assert_eq!(row.id, *id, "{id}.json carries id {:?}", row.id);
    }
    // Nothing is silently skipped at run time.
    assert_eq!(catalog::models().len(), MODEL_FILES.len());
}

#[test]
fn model_ids_are_unique_sorted_and_well_formed() {
    let ids: Vec<&str> = MODEL_FILES.iter().map(|(id, _)| *id).collect();
    // MODEL_FILES is in file-name order (`ls catalog/models`), which sorts ".json" after "-":
    // compare the file names, as the directory listing does.
    let names: Vec<String> = ids.iter().map(|id| format!("{id}.json")).collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted, "MODEL_FILES is not sorted by file name");
    let unique: BTreeSet<&str> = ids.iter().copied().collect();
    assert_eq!(unique.len(), ids.len(), "duplicate ids");
    for id in ids {
        assert!(
            !id.is_empty()
                && id
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.')
                && !id.starts_with('-')
                && !id.ends_with('-'),
            "{id}: ids are lowercase, digits, dashes and dots"
        );
    }
    assert!(MODEL_FILES.len() >= 25, "only {} models", MODEL_FILES.len());
}

#[test]
fn every_model_row_says_where_it_came_from() {
    for (id, text) in MODEL_FILES {
        let row = parse_model_row(text).unwrap();
        assert!(!row.source.trim().is_empty(), "{id}: no source");
        assert!(
            is_date(&row.retrieved),
            "{id}: retrieved {:?} is not YYYY-MM-DD",
            row.retrieved
        );
        assert!(!row.name.trim().is_empty(), "{id}: no name");
        assert!(
            row.hf_repo.contains('/'),
            "{id}: hf_repo {:?} is not org/name",
            row.hf_repo
        );
        let raw: serde_json::Value = serde_json::from_str(text).unwrap();
        for key in ["unconfirmed", "notes", "config"] {
            assert!(
                raw.get(key).is_some(),
                "{id}: the required key {key} is missing"
            );
        }
        if let Some(c) = raw.get("checkpoint") {
            assert!(
                c["total_bytes"].as_u64().is_some_and(|b| b > 0),
                "{id}: checkpoint.total_bytes"
            );
            assert!(
                c["source"].as_str().is_some_and(|s| !s.trim().is_empty()),
                "{id}: checkpoint.source"
            );
            assert!(c["confirmed"].is_boolean(), "{id}: checkpoint.confirmed");
            assert_eq!(row.checkpoint_source.as_deref(), c["source"].as_str());
            if c["confirmed"] == false {
                assert!(
                    row.unconfirmed.iter().any(|u| u.starts_with("checkpoint")),
                    "{id}: an unconfirmed checkpoint size is not listed in unconfirmed"
                );
            }
        }
        if let Some(m) = raw.get("measured") {
            assert!(
                m["source"].as_str().is_some_and(|s| !s.trim().is_empty()),
                "{id}: measured.source"
            );
            assert!(
                m["kv_bytes_per_token_per_layer"].is_number(),
                "{id}: measured.kv_bytes_per_token_per_layer"
            );
        }
    }
}

#[test]
fn every_gpu_row_is_sourced_and_sorted() {
    let text = fs::read_to_string(catalog_dir().join("gpus.json")).unwrap();
    let rows = parse_gpus(&text).expect("gpus.json parses");
    assert_eq!(
        rows.len(),
        catalog::gpus().len(),
        "the embedded gpus.json differs from the file"
    );
    let ids: Vec<&str> = rows.iter().map(|r| r.gpu.id.as_str()).collect();
    let mut sorted = ids.clone();
    sorted.sort();
    assert_eq!(ids, sorted, "gpus.json is not sorted by id");
    let unique: BTreeSet<&str> = ids.iter().copied().collect();
    assert_eq!(unique.len(), ids.len(), "duplicate GPU ids");
    for r in &rows {
        let id = &r.gpu.id;
        assert!(r.gpu.total.0 > 0, "{id}: total 0");
        assert!(r.gpu.total.0 < 1 << 50, "{id}: total beyond 1 PiB");
        assert!(!r.source.trim().is_empty(), "{id}: no source");
        assert!(is_date(&r.retrieved), "{id}: retrieved {:?}", r.retrieved);
        assert!(!r.basis.trim().is_empty(), "{id}: no total_bytes_basis");
        assert!(!r.gpu.name.trim().is_empty(), "{id}: no name");
        // Marketing "GB" on these parts is a binary size (an "80 GB" H100 has 80 GiB of HBM);
        // the driver reports that or less (reserved memory), and not far below the decimal
        // reading of the same figure.
        if let Some(gb) = marketing_gb(&r.memory_marketing) {
            let total = r.gpu.total.0 as f64;
            assert!(
                total <= gb * (1u64 << 30) as f64 && total >= 0.85 * gb * 1e9,
                "{id}: total {} does not fit the marketing {gb} GB",
                r.gpu.total.0
            );
        }
    }
    let raw: serde_json::Value = serde_json::from_str(&text).unwrap();
    for g in raw.as_array().unwrap() {
        for key in [
            "id",
            "name",
            "memory_marketing",
            "total_bytes",
            "total_bytes_basis",
            "total_bytes_confirmed",
            "unified_memory",
            "compute_capability",
            "architecture",
            "source",
            "retrieved",
        ] {
            assert!(
                g.get(key).is_some(),
                "{}: the required key {key} is missing",
                g["id"]
            );
        }
    }
}

#[test]
fn the_required_gpus_are_present() {
    // (what, a predicate on the row): one row must match each.
    type Matches = dyn Fn(&catalog::GpuRow) -> bool;
    let want: &[(&str, &Matches)] = &[
        ("A100 40GB", &|r| {
            r.gpu.name.contains("A100") && r.gpu.id.contains("40")
        }),
        ("A100 80GB", &|r| {
            r.gpu.name.contains("A100") && r.gpu.id.contains("80")
        }),
        ("H100 SXM", &|r| {
            r.gpu.id.contains("h100") && r.gpu.id.contains("sxm")
        }),
        ("H100 PCIe", &|r| {
            r.gpu.id.contains("h100") && r.gpu.id.contains("pcie")
        }),
        ("H200", &|r| r.gpu.id.starts_with("h200")),
        ("B200", &|r| r.gpu.id.contains("b200")),
        ("L40S", &|r| r.gpu.id.contains("l40s")),
        ("L4", &|r| r.gpu.id.starts_with("l4-")),
        ("A10G", &|r| r.gpu.id.contains("a10g")),
        ("T4", &|r| r.gpu.id.starts_with("t4")),
        ("RTX 3090", &|r| r.gpu.id.contains("3090")),
        ("RTX 4090", &|r| r.gpu.id.contains("4090")),
        ("RTX 5090", &|r| r.gpu.id.contains("5090")),
        ("MI300X", &|r| r.gpu.id.contains("mi300x")),
        ("GB10", &|r| {
            r.gpu.id.contains("gb10") && r.gpu.unified_memory
        }),
    ];
    for (what, matches) in want {
        let n = catalog::gpus().iter().filter(|r| matches(r)).count();
        assert_eq!(n, 1, "{what}: {n} rows match");
    }
    // The seed examples look GB10 up by id.
    assert!(catalog::gpu("gb10-128gb").is_some());
    assert!(catalog::model("deepseek-v4-flash").is_some());
}

fn is_date(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 10
        && b[4] == b'-'
        && b[7] == b'-'
        && b.iter()
            .enumerate()
            .all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit())
}

/// "80 GB HBM3" -> 80.0; `None` when the text does not start with a GB figure.
fn marketing_gb(s: &str) -> Option<f64> {
    let mut it = s.split_whitespace();
    let n: f64 = it.next()?.parse().ok()?;
    (it.next()? == "GB").then_some(n)
}

// ---------------------------------------------------------------------------------------------
// Every model plans.

fn h200() -> headroom::calc::scenario::Gpu {
    catalog::gpu("h200-141gb").expect("H200 row").gpu.clone()
}

#[test]
fn every_model_plans_on_every_gpu_without_an_error() {
    // TP 1, vLLM's defaults: a model too big for the GPU fails a check; it is never an Err,
    // except DeepSeek-V4 on a GPU none of its attention backends runs on.
    for m in catalog::models() {
        for g in catalog::gpus() {
            let s = Scenario::new(m.model.clone(), g.gpu.clone());
            let cc = g.gpu.compute_capability;
            if m.model.compressed.is_some() && !matches!(cc.0, 0 | 9 | 10 | 12) {
                let e = plan(&s).expect_err("no V4 backend on this GPU");
                assert_eq!(e.field(), "gpu", "{}", g.gpu.id);
                // Before 7.5 vLLM refuses its FP8 checkpoint first, while building the config.
                assert!(
                    e.message().contains("compute capability not supported")
                        || e.message().contains("Minimum capability: 75"),
                    "{e}"
                );
                continue;
            }
            // A checkpoint format the GPU is too old for (FP8 and MXFP4 before 7.5 / 8.0): vLLM's
            // minimum capability of the method, filed under the GPU.
            let res = plan(&s);
            if let (Err(e), true) = (&res, cc.0 > 0 && cc < (8, 0)) {
                assert_eq!(e.field(), "gpu", "{} on {}: {e}", m.id, g.gpu.id);
                assert!(e.message().contains("Minimum capability"), "{e}");
                assert!(!m.model.quant_method.is_empty(), "{}", m.id);
                continue;
            }
            let p = res.unwrap_or_else(|e| panic!("{} on {}: {e} ({})", m.id, g.gpu.id, e.field()));
            assert_eq!(p.ranks.len(), 1);
            if !p.starts() {
                assert!(p.first_failure().is_some());
            }
        }
    }
}

#[test]
fn every_model_starts_on_enough_h200s() {
    // The smallest TP x PP grid of H200s on which the model starts at an 8,192-token context
    // (or its own limit, if shorter): every catalog model fits on at most 4 x 8 of them.
    for m in catalog::models() {
        let mut found = None;
        'grid: for pp in [1u32, 2, 4] {
            for tp in [1u32, 2, 4, 8] {
                if m.model.n_heads % u64::from(tp) != 0 || pp > m.model.n_layers {
                    continue;
                }
                let mut s = Scenario::new(m.model.clone(), h200());
                s.parallel = Parallel {
                    tp,
                    pp,
                    ..Parallel::default()
                };
                s.gpus = tp * pp;
                s.engine.max_model_len = MaxLen::Value(m.model.max_position_embeddings.min(8_192));
                let p = plan(&s).unwrap_or_else(|e| panic!("{} TP {tp} PP {pp}: {e}", m.id));
                if p.starts() {
                    found = Some((tp, pp, p));
                    break 'grid;
                }
            }
        }
        let (tp, pp, p) =
            found.unwrap_or_else(|| panic!("{} starts on no grid of up to 32 H200s", m.id));
        let replica = p.replica.as_ref().expect("a started plan has a replica");
        assert!(
            replica.kv_cache_tokens >= 8_192.min(m.model.max_position_embeddings),
            "{}",
            m.id
        );
        assert_eq!(p.ranks.len() as u32, tp * pp);
        // Weights are spread: no rank of a multi-GPU plan holds the whole estimate.
        if let (true, Some(ck)) = (tp * pp > 1, m.model.checkpoint_bytes) {
            let most = p.ranks.iter().map(|r| r.weights.0).max().unwrap();
            assert!(most < ck, "{}", m.id);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Weight estimates against what the rows say.

#[test]
fn weight_estimates_match_the_checkpoint_sizes_rows_carry() {
    // The planner scales its component estimates to a row's checkpoint total; the unscaled
    // estimate from parameter counts must already be close, or the components are wrong.
    let mut checked = 0;
    for m in catalog::models() {
        let Some(ck) = m.model.checkpoint_bytes else {
            continue;
        };
        let est = checkpoint_estimate(&m.model);
        let ratio = est as f64 / ck as f64;
        assert!(
            (0.9..=1.1).contains(&ratio),
            "{}: the estimate {est} B is {ratio:.3}x the checkpoint's {ck} B ({})",
            m.id,
            m.model.quant.label()
        );
        checked += 1;
    }
    assert!(checked >= 2, "only {checked} rows carry a checkpoint size");
}

#[test]
fn unquantized_estimates_match_the_parameter_count_in_the_name() {
    // "qwen3-32b", "gemma-2-27b-it", "qwen3-235b-a22b": the total parameter count, in billions,
    // is in the id. A 16-bit checkpoint is 2 bytes per parameter (names round, hence the
    // tolerance).
    let mut checked = 0;
    for m in catalog::models() {
        if m.model.quant != headroom::calc::model::WeightQuant::None || m.model.dtype.bytes() != 2 {
            continue;
        }
        let Some(billions) = params_in_id(&m.id) else {
            continue;
        };
        let est_params = checkpoint_estimate(&m.model) as f64 / 2.0 / 1e9;
        let ratio = est_params / billions;
        assert!(
            (0.88..=1.12).contains(&ratio),
            "{}: {est_params:.2}B parameters estimated, the name says {billions}B ({ratio:.3}x)",
            m.id
        );
        checked += 1;
    }
    assert!(checked >= 15, "only {checked} rows checked");
}

/// The first `-<N>b` segment of an id, e.g. `qwen3-235b-a22b` -> 235; `8x7b` forms are skipped,
/// and so is Llama 4's `17b-16e`, which names the active count before the experts.
fn params_in_id(id: &str) -> Option<f64> {
    let segs: Vec<&str> = id.split('-').collect();
    segs.iter().enumerate().find_map(|(i, seg)| {
        let n = seg.strip_suffix('b')?;
        if n.is_empty() || !n.chars().all(|c| c.is_ascii_digit() || c == '.') {
            return None;
        }
        let experts_next = segs
            .get(i + 1)
            .and_then(|s| s.strip_suffix('e'))
            .is_some_and(|e| !e.is_empty() && e.chars().all(|c| c.is_ascii_digit()));
        if experts_next {
            return None;
        }
        n.parse().ok()
    })
}

// ---------------------------------------------------------------------------------------------
// Canonical form.

/// Re-emits JSON text in the canonical layout without touching a token: strings, numbers and
/// literals are copied byte for byte, so key order and number spelling survive.
fn canonical(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut depth = 0usize;
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    let indent = |out: &mut String, depth: usize| {
        out.push('\n');
        for _ in 0..depth {
            out.push_str("  ");
        }
    };
    let next_significant = |mut j: usize| -> Option<char> {
        while j < chars.len() {
            if !chars[j].is_whitespace() {
                return Some(chars[j]);
            }
            j += 1;
        }
        None
    };
    while i < chars.len() {
        let c = chars[i];
        match c {
            '"' => {
                out.push(c);
                i += 1;
                while i < chars.len() {
                    let d = chars[i];
                    out.push(d);
                    i += 1;
                    if d == '\\' && i < chars.len() {
                        out.push(chars[i]);
                        i += 1;
                    } else if d == '"' {
                        break;
                    }
                }
                continue;
            }
            '{' | '[' => {
                out.push(c);
                let close = if c == '{' { '}' } else { ']' };
                if next_significant(i + 1) == Some(close) {
                    // An empty container stays on one line.
                    out.push(close);
                    let mut j = i + 1;
                    while chars[j] != close {
                        j += 1;
                    }
                    i = j + 1;
                    continue;
                }
                depth += 1;
                indent(&mut out, depth);
            }
            '}' | ']' => {
                depth = depth.saturating_sub(1);
                indent(&mut out, depth);
                out.push(c);
            }
            ',' => {
                out.push(',');
                indent(&mut out, depth);
            }
            ':' => out.push_str(": "),
            c if c.is_whitespace() => {}
            c => out.push(c),
        }
        i += 1;
    }
    out.push('\n');
    out
}

/// The object keys of the top level, in file order.
fn top_level_keys(text: &str) -> Vec<String> {
    let canon = canonical(text);
    canon
        .lines()
        .filter(|l| l.starts_with("  \"") && !l.starts_with("   "))
        .filter_map(|l| {
            l.trim()
                .strip_prefix('"')?
                .split_once("\":")
                .map(|(k, _)| k.to_string())
        })
        .collect()
}

#[test]
fn canonical_form_is_stable_and_parses() {
    let sample = "{\"a\":[1, 2,{\"b\" :\"x, y: {z}\\\"\"}],\"e\":[ ],\"f\":{},\"n\":1e-06}";
    let c = canonical(sample);
    assert_eq!(
        c,
        "{\n  \"a\": [\n    1,\n    2,\n    {\n      \"b\": \"x, y: {z}\\\"\"\n    }\n  ],\n  \"e\": [],\n  \"f\": {},\n  \"n\": 1e-06\n}\n"
    );
    assert_eq!(canonical(&c), c, "canonical form is a fixed point");
    let a: serde_json::Value = serde_json::from_str(sample).unwrap();
    let b: serde_json::Value = serde_json::from_str(&c).unwrap();
    assert_eq!(a, b);
}

#[test]
fn catalog_files_are_canonical() {
    let rewrite = std::env::var("HEADROOM_REWRITE_CATALOG").is_ok_and(|v| v == "1");
    let mut files = model_paths();
    files.push(catalog_dir().join("gpus.json"));
    let mut stale = Vec::new();
    for path in files {
        let text = fs::read_to_string(&path).unwrap();
        let canon = canonical(&text);
        // Re-emitting never changes what the file says.
        let before: serde_json::Value = serde_json::from_str(&text).unwrap();
        let after: serde_json::Value = serde_json::from_str(&canon).unwrap();
        assert_eq!(
            before,
            after,
            "{}: canonical form changed the data",
            path.display()
        );
        if canon != text {
            if rewrite {
                fs::write(&path, &canon).unwrap();
            } else {
                stale.push(path.display().to_string());
            }
        }
    }
    assert!(
        stale.is_empty(),
        "not in canonical form (run HEADROOM_REWRITE_CATALOG=1 cargo test --no-default-features --test catalog):\n{}",
        stale.join("\n")
    );
}

#[test]
fn model_row_keys_follow_the_readme_order() {
    // catalog/README.md: id, name, hf_repo, source, retrieved, config, checkpoint, measured,
    // unconfirmed, notes.
    let order = [
        "id",
        "name",
        "hf_repo",
        "source",
        "retrieved",
        "config",
        "checkpoint",
        "measured",
        "unconfirmed",
        "notes",
    ];
    for (id, text) in MODEL_FILES {
        let keys = top_level_keys(text);
        let positions: Vec<usize> = keys
            .iter()
            .map(|k| {
                order
                    .iter()
                    .position(|o| o == k)
                    .unwrap_or_else(|| panic!("{id}: unknown key {k}"))
            })
            .collect();
        assert!(
            positions.windows(2).all(|w| w[0] < w[1]),
            "{id}: keys {keys:?} are not in the README's order"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// The app's JSON reader against serde_json.

/// The same value read by `catalog::json` and by `serde_json`: same structure, same strings,
/// same integers, and floats equal to the bit.
fn same(ours: &catalog::json::Value, theirs: &serde_json::Value, at: &str) {
    use catalog::json::Value as O;
    use serde_json::Value as T;
    match (ours, theirs) {
        (O::Null, T::Null) => {}
        (O::Bool(a), T::Bool(b)) => assert_eq!(a, b, "{at}"),
        (O::String(a), T::String(b)) => assert_eq!(a, b, "{at}"),
        (O::Number(_), T::Number(n)) => {
            assert_eq!(ours.as_u64(), n.as_u64(), "{at}: as_u64");
            assert_eq!(
                ours.as_f64().map(f64::to_bits),
                n.as_f64().map(f64::to_bits),
                "{at}: as_f64"
            );
        }
        (O::Array(a), T::Array(b)) => {
            assert_eq!(a.len(), b.len(), "{at}: length");
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                same(x, y, &format!("{at}[{i}]"));
            }
        }
        (O::Object(a), T::Object(b)) => {
            assert_eq!(a.len(), b.len(), "{at}: keys");
            for (k, v) in a.iter() {
                same(v, &b[k], &format!("{at}.{k}"));
            }
        }
        _ => panic!("{at}: {ours} is not {theirs}"),
    }
}

#[test]
fn the_apps_json_reader_reads_every_catalog_file_as_serde_json_does() {
    let mut files = model_paths();
    files.push(catalog_dir().join("gpus.json"));
    for path in files {
        let text = fs::read_to_string(&path).unwrap();
        let ours = catalog::json::parse(&text).unwrap();
        let theirs: serde_json::Value = serde_json::from_str(&text).unwrap();
        same(&ours, &theirs, &stem(&path));
    }
    // Numbers at the edges: the largest u64, past it, negative, tiny, huge, many digits.
    let edge = r#"[18446744073709551615, 18446744073709551616, -9223372036854775808, -1,
        0.1, 2.2250738585072014e-308, 5e-324, 1.7976931348623157e308, 0.30000000000000004,
        1e-05, 8.0, 123456789012345678901234567890, 3.141592653589793238462643383279]"#;
    let ours = catalog::json::parse(edge).unwrap();
    let theirs: serde_json::Value = serde_json::from_str(edge).unwrap();
    same(&ours, &theirs, "edge");
}

#[test]
fn a_catalog_row_with_a_wrong_field_names_it() {
    let text = MODEL_FILES
        .iter()
        .find(|(id, _)| *id == "llama-3.1-8b-instruct")
        .unwrap()
        .1;
    let broken = text.replacen("\"retrieved\": \"", "\"retrieved\": 7, \"was\": \"", 1);
    let e = parse_model_row(&broken).unwrap_err();
    assert_eq!(e.field, "retrieved");
    assert!(
        e.message
            .contains("retrieved must be a string, not a number"),
        "{e}"
    );
    let e = parse_model_row("[1]").unwrap_err();
    assert!(e.message.contains("must be a JSON object"), "{e}");
    let e = parse_gpus("[{\"id\": \"x\"}]").unwrap_err();
    assert!(e.message.contains("name is missing"), "{e}");
}

#[test]
fn mtp_drafters_are_the_families_vllm_maps() {
    use headroom::calc::model::MtpDraft;
    // vLLM 0.33.0's SpeculativeConfig.hf_config_override maps deepseek_v3, deepseek_v32,
    // deepseek_v4, qwen3_next, qwen3_5 (Qwen3.5) and Glm4MoeForCausalLM (GLM-4.5) to MTP models; Kimi-K2 shares DeepSeek-V3's architecture under
    // model_type kimi_k2, which it does not map.
    let with: Vec<(&str, u32)> = catalog::models()
        .iter()
        .filter(|r| r.model.mtp_draft == MtpDraft::Mapped)
        .map(|r| (r.id.as_str(), r.model.mtp_layers))
        .collect();
    assert_eq!(
        with,
        [
            ("deepseek-r1", 1),
            ("deepseek-v3.2", 1),
            ("deepseek-v3", 1),
            ("deepseek-v4-flash", 1),
            ("glm-4.5-air", 1),
            ("qwen3-next-80b-a3b-instruct", 1),
            ("qwen3.5-35b-a3b", 1),
            ("qwen3.5-397b-a17b-nvfp4", 1)
        ]
    );
    // (what `method: mtp` finds, the MTP modules vLLM builds) for a config's distinctive keys.
    let parse = |extra: &str| {
        let m = catalog::parse_config_json(&format!(
            r#"{{"hidden_size":1024,"num_attention_heads":8,"num_hidden_layers":4,"vocab_size":1000,{extra}}}"#
        ))
        .unwrap();
        (m.mtp_draft, m.mtp_layers)
    };
    let mapped = |n| (MtpDraft::Mapped, n);
    let cases: &[(&str, (MtpDraft, u32))] = &[
        (
            r#""model_type":"glm4_moe","architectures":["Glm4MoeForCausalLM"],"num_nextn_predict_layers":1"#,
            mapped(1),
        ),
        // Architectures are matched on the first only.
        (
            r#""model_type":"glm4_moe","architectures":["Foo","Glm4MoeForCausalLM"]"#,
            (MtpDraft::Unsupported, 0),
        ),
        // MiMo-V2: vLLM builds the first MTP layer only, whatever the config declares.
        (
            r#""model_type":"mimo_v2_flash","architectures":["MiMoV2FlashForCausalLM"],"num_nextn_predict_layers":3"#,
            mapped(1),
        ),
        (
            r#""model_type":"mimo","architectures":["MiMoForCausalLM"],"num_nextn_predict_layers":1"#,
            mapped(1),
        ),
        (
            r#""model_type":"nemotron_h","num_nextn_predict_layers":2"#,
            mapped(2),
        ),
        (r#""model_type":"nemotron_h""#, (MtpDraft::Unsupported, 0)),
        // Only two Nemotron-H wrappers are read through their text config.
        (
            r#""model_type":"x","architectures":["NemotronH_Nano_VL_V2"],"text_config":{"model_type":"nemotron_h","num_nextn_predict_layers":1}"#,
            (MtpDraft::Unsupported, 1),
        ),
        (
            r#""model_type":"x","architectures":["NemotronH_Omni_Reasoning_V3"],"text_config":{"model_type":"nemotron_h","num_nextn_predict_layers":1}"#,
            mapped(1),
        ),
        // Qwen3.5 counts mtp_num_hidden_layers, at the top or in the text config.
        (
            r#""model_type":"qwen3_5","mtp_num_hidden_layers":2,"num_nextn_predict_layers":5"#,
            mapped(2),
        ),
        (
            r#""model_type":"qwen3_5","text_config":{"model_type":"qwen3_5_text","mtp_num_hidden_layers":3}"#,
            mapped(3),
        ),
        (
            r#""model_type":"minimax_m3_vl","text_config":{"model_type":"minimax_m3","num_mtp_modules":2}"#,
            mapped(2),
        ),
        (
            r#""model_type":"x","architectures":["MiniMaxM3SparseForConditionalGeneration"]"#,
            mapped(1),
        ),
        (r#""model_type":"gemma4_assistant""#, mapped(1)),
        (r#""model_type":"longcat_flash""#, mapped(1)),
        (
            r#""model_type":"inkling_model","mtp_config":{"num_nextn_predict_layers":2}"#,
            mapped(2),
        ),
        (
            r#""model_type":"inkling_model""#,
            (
                MtpDraft::Refused("The Inkling checkpoint does not contain MTP weights".into()),
                0,
            ),
        ),
        // Already an MTP type: its own n_predict.
        (
            r#""model_type":"ernie_mtp","num_nextn_predict_layers":1"#,
            mapped(1),
        ),
        (r#""model_type":"mimo_mtp","n_predict":2"#, mapped(2)),
        // Not one of MTPModelTypes, however it is spelt; a wrapper is read at its top level.
        (r#""model_type":"foo_mtp""#, (MtpDraft::Unsupported, 0)),
        (
            r#""model_type":"muse_glimmer_assistant""#,
            (MtpDraft::Unsupported, 0),
        ),
        (
            r#""model_type":"llava","text_config":{"model_type":"deepseek_v3"}"#,
            (MtpDraft::Unsupported, 0),
        ),
        (
            r#""model_type":"llama","architectures":["LlamaForCausalLM"]"#,
            (MtpDraft::Unsupported, 0),
        ),
    ];
    for (extra, want) in cases {
        assert_eq!(&parse(extra), want, "{extra}");
    }
    let (v41, _) = parse(r#""model_type":"deepseek_v41","num_nextn_predict_layers":1"#);
    assert!(
        matches!(&v41, MtpDraft::Refused(m) if m.contains("Use speculative method 'dspark'")),
        "{v41:?}"
    );
}

#[test]
fn every_catalog_architecture_is_served() {
    // The first verdict's program for catalog links leaves vLLM's registry out
    // (planner/mod.rs): it plans only these rows and the seed examples, so none may need the
    // registry's words.
    for m in catalog::models() {
        let arch = &m.model.architecture;
        assert_eq!(
            headroom::calc::architectures::note(arch),
            None,
            "{}: {arch}",
            m.id
        );
    }
    for e in catalog::examples::examples() {
        let arch = &e.scenario.model.architecture;
        assert_eq!(
            headroom::calc::architectures::note(arch),
            None,
            "{}: {arch}",
            e.id
        );
    }
}

#[test]
fn the_registry_texts_are_sorted_one_name_per_line() {
    use headroom::calc::architectures::{served_until, supported, REMOVED, SUPPORTED};
    let names: Vec<&str> = SUPPORTED.lines().collect();
    assert!(names.len() > 400, "{}", names.len());
    assert!(
        names.windows(2).all(|w| w[0] < w[1]),
        "SUPPORTED sorted, no repeats"
    );
    assert!(names.iter().all(|n| !n.is_empty() && !n.contains(' ')));
    let removed: Vec<&str> = REMOVED.lines().collect();
    assert!(
        removed.windows(2).all(|w| w[0] < w[1]),
        "REMOVED sorted, no repeats"
    );
    for line in removed {
        let (name, since) = line.split_once(' ').expect("name and release");
        assert!(!supported(name), "{name} both served and removed");
        let until = served_until(name).expect("a release");
        assert_eq!(
            since,
            format!("{}.{}.{}", until.major, until.minor, until.patch),
            "{line}"
        );
    }
    // Every entry is found by the search, and nothing between or around them.
    for n in &names {
        assert!(supported(n), "{n}");
        assert!(!supported(&format!("{n}X")) || names.contains(&format!("{n}X").as_str()));
    }
    for line in REMOVED.lines() {
        let name = line.split(' ').next().unwrap();
        assert!(served_until(name).is_some(), "{name}");
    }
    for absent in [
        "",
        " ",
        "A",
        "ZZZ",
        "0.24.0",
        "AquilaForCausalLM 0.24.0",
        "\n",
        "é",
    ] {
        assert!(!supported(absent), "{absent:?}");
        assert_eq!(served_until(absent), None, "{absent:?}");
    }
    // A name that is a prefix of a removed one is not removed itself.
    assert_eq!(served_until("Aquila"), None);
    assert_eq!(
        served_until("AquilaForCausalLM"),
        Some(headroom::calc::version::VllmVersion::new(0, 24))
    );
    assert!(!supported("LlamaForCausal") && supported("LlamaForCausalLM"));
}
