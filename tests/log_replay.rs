//! A vLLM startup log in: `headroom import-log` and `headroom plan --log`. The round trip: for
//! generated scenarios that start, the log lines Headroom says vLLM would print, read back with
//! `plan --log`, compare with Headroom's own predictions to within the printed precision. Also
//! the JSON keys, stdin, the log's flags and release, and refusals that name the input.

use headroom::catalog;
use headroom::cli::{run, run_with_stdin, Outcome, EXIT_BAD_INPUT, EXIT_STARTS};
use serde_json::Value;

mod common;
use common::Rng;

fn strings(xs: &[&str]) -> Vec<String> {
    xs.iter().map(|s| s.to_string()).collect()
}

fn with_stdin(args: &[String], text: &str) -> Outcome {
    run_with_stdin(args, &mut text.as_bytes())
}

fn json(o: &Outcome) -> Value {
    serde_json::from_str(&o.stdout).unwrap_or_else(|e| panic!("{e}: {o:?}"))
}

fn scenario(r: &mut Rng) -> Vec<String> {
    let models = catalog::models();
    let mut out = vec![models[r.below(models.len())].id.clone()];
    let flags: &[(&str, &[&str])] = &[
        ("-tp", &["1", "2", "4", "8"]),
        ("-pp", &["1", "2"]),
        ("--gpu-memory-utilization", &["0.85", "0.9", "0.95"]),
        ("--max-model-len", &["4096", "32768"]),
        ("--kv-cache-dtype", &["auto", "fp8"]),
        (
            "--vllm-version",
            &[
                "0.10.2", "0.11.0", "0.11.2", "0.12", "0.14", "0.20", "0.27", "0.33",
            ],
        ),
        ("--gpu", &["h100-sxm-80gb", "h200-141gb", "a100-sxm4-80gb"]),
    ];
    for (flag, values) in flags {
        if r.one_in(2) {
            out.push(flag.to_string());
            out.push(r.pick(values).to_string());
        }
    }
    if r.one_in(4) {
        out.push("--enforce-eager".into());
    }
    out
}

/// The tolerance of a figure printed by vLLM: `%.2f` GiB and concurrency, whole tokens.
fn tolerance(unit: &str) -> f64 {
    match unit {
        "GiB" | "x" => 0.0051,
        _ => 0.0,
    }
}

#[test]
fn headrooms_own_log_lines_replay_to_its_own_predictions() {
    let mut r = Rng(0x10C5_EED5_0016_0003);
    let (mut replayed, mut compared) = (0, 0);
    for case in 0..120 {
        let flags = scenario(&mut r);
        let mut args = strings(&["plan"]);
        args.extend(flags.iter().cloned());
        args.push("--json".into());
        let plan = run(&args);
        if plan.code != EXIT_STARTS {
            continue;
        }
        let doc = json(&plan);
        let lines: Vec<&str> = doc["log_lines"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l.as_str().unwrap())
            .collect();
        let log = lines.join("\n");
        let mut back = strings(&["plan", "--log", "-"]);
        back.extend(flags.iter().cloned());
        back.push("--json".into());
        let out = with_stdin(&back, &log);
        assert_eq!(
            out.code, EXIT_STARTS,
            "case {case} {flags:?}: {out:?}\n{log}"
        );
        let d = json(&out);
        let rows = d["comparison"].as_array().unwrap();
        assert!(!rows.is_empty(), "case {case}: {log}");
        for row in rows {
            let unit = row["unit"].as_str().unwrap();
            let p = row["predicted"].as_f64();
            let m = row["measured"].as_f64().unwrap();
            let p = p.unwrap_or_else(|| panic!("case {case}: {row} not predicted"));
            assert!(
                (p - m).abs() <= tolerance(unit),
                "case {case} {flags:?}: {row}\n{log}"
            );
            compared += 1;
        }
        // The measured plan's pool is the predicted one's, to within the printed rounding.
        let pool = |d: &Value| d["replica"]["num_blocks"].as_f64().unwrap();
        let (a, b) = (pool(&doc), pool(&d));
        assert!(
            (a - b).abs() <= (a * 0.002).max(2.0),
            "case {case}: {a} vs {b}"
        );
        replayed += 1;
    }
    assert!(replayed >= 40, "only {replayed} cases started");
    assert!(compared >= 200, "only {compared} figures compared");
}

const LOG_033: &str = "(APIServer pid=1) INFO 11-20 10:00:00 [api_server.py:1] vLLM API server version 0.33.0
(APIServer pid=1) INFO 11-20 10:00:00 [utils.py:1] non-default args: {'model_tag': 'meta-llama/Llama-3.1-8B-Instruct', 'max_model_len': 32768, 'gpu_memory_utilization': 0.9, 'port': 8001}
(EngineCore pid=7) INFO 11-20 10:00:30 [gpu_model_runner.py:1] Model loading took 14.99 GiB memory and 20.1 seconds
(EngineCore pid=7) INFO 11-20 10:00:40 [gpu_worker.py:1] Available KV cache memory: 54.2 GiB
(EngineCore pid=7) INFO 11-20 10:00:40 [kv_cache_utils.py:1] GPU KV cache size: 443,968 tokens
(EngineCore pid=7) INFO 11-20 10:00:40 [kv_cache_utils.py:1] Maximum concurrency for 32,768 tokens per request: 13.55x
";

#[test]
fn import_log_prints_the_readings_with_their_keys() {
    let o = with_stdin(&strings(&["import-log", "-", "--json"]), LOG_033);
    assert_eq!(o.code, 0, "{o:?}");
    let d = json(&o);
    for k in [
        "vllm_version",
        "version_basis",
        "readings",
        "inputs",
        "non_default_args",
        "command",
        "conflicts",
        "notes",
    ] {
        assert!(d.get(k).is_some(), "{k}: {d}");
    }
    assert_eq!(d["vllm_version"], "0.33.0");
    let r = &d["readings"][1];
    assert_eq!(
        (&r["key"], &r["value"], &r["unit"], &r["line"], &r["rank"]),
        (
            &Value::from("available_kv_cache"),
            &Value::from(54.2),
            &Value::from("GiB"),
            &Value::from(4),
            &Value::from("EngineCore")
        )
    );
    assert_eq!(d["readings"][3]["tokens_per_request"], 32768.0);
    assert_eq!(d["inputs"]["available-kv"], "58196806861");
    assert_eq!(d["command"]["flags"]["max_model_len"], 32768);
    // The text view names every reading and its line.
    let t = with_stdin(&strings(&["import-log", "-"]), LOG_033);
    assert!(
        t.stdout
            .contains("line     4  available_kv_cache     54.2 GiB"),
        "{}",
        t.stdout
    );
}

#[test]
fn plan_log_takes_the_logs_flags_and_measurements() {
    let o = with_stdin(&strings(&["plan", "--log", "-", "--json"]), LOG_033);
    assert_eq!(o.code, EXIT_STARTS, "{o:?}");
    let d = json(&o);
    assert_eq!(d["input"]["max_model_len"], 32768, "{}", d["input"]);
    let figures: Vec<&str> = d["comparison"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["figure"].as_str().unwrap())
        .collect();
    assert_eq!(
        figures,
        [
            "model_loading",
            "available_kv_cache",
            "gpu_kv_cache_tokens",
            "max_concurrency",
            "max_concurrency.tokens_per_request"
        ]
    );
    for c in d["comparison"].as_array().unwrap() {
        let (p, m, diff) = (
            c["predicted"].as_f64().unwrap(),
            c["measured"].as_f64().unwrap(),
            c["difference"].as_f64().unwrap(),
        );
        assert!((m - p - diff).abs() < 1e-3, "{c}");
    }
    assert!(d["derived"]
        .as_array()
        .unwrap()
        .iter()
        .all(|x| x["provenance"] == "derived"));
    // The pool is the log's: measured, not estimated.
    let rank0 = &d["ranks"][0];
    let avail = rank0["ledger"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["term"] == "available_kv")
        .unwrap();
    assert_eq!(avail["provenance"], "measured", "{avail}");
    assert_eq!(
        avail["basis"], "read from the log, line 4: Available KV cache memory: 54.2 GiB",
        "{avail}"
    );
    // A flag beside the log wins over the log's.
    let o = with_stdin(
        &strings(&["plan", "--log", "-", "--max-model-len", "8192", "--json"]),
        LOG_033,
    );
    assert_eq!(json(&o)["input"]["max_model_len"], 8192);
}

#[test]
fn a_measured_pool_outranks_an_estimated_load_failure() {
    let est = run(&strings(&["plan", "llama-3.1-70b-instruct"]));
    assert!(
        est.stdout.contains("fails at model loading"),
        "{}",
        est.stdout
    );
    let o = run(&strings(&[
        "plan",
        "llama-3.1-70b-instruct",
        "--available-kv",
        "10GiB",
        "--max-model-len",
        "8192",
    ]));
    assert_eq!(o.code, EXIT_STARTS, "{o:?}");
    assert!(
        o.stdout.contains("passed on the measured run"),
        "{}",
        o.stdout
    );
    assert!(
        o.stdout
            .contains("contradicted by the measurement by at least"),
        "{}",
        o.stdout
    );
}

#[test]
fn bad_logs_are_refused_by_name() {
    let bad = |args: &[&str], text: &str, want: &str| {
        let o = with_stdin(&strings(args), text);
        assert_eq!(o.code, EXIT_BAD_INPUT, "{args:?}: {o:?}");
        assert!(o.stderr.contains(want), "{args:?}: {}", o.stderr);
        assert!(o.stdout.is_empty());
    };
    bad(
        &["import-log", "-"],
        "hello\nworld\n",
        "no line Headroom reads",
    );
    bad(&["import-log"], "", "FILE: missing");
    bad(
        &["import-log", "/nonexistent/x.log"],
        "",
        "cannot be opened",
    );
    bad(&["import-log", "-", "extra"], "", "takes one FILE");
    // Two launches pasted together: flagged, never averaged.
    bad(
        &["plan", "llama-3.1-8b-instruct", "--log", "-"],
        "Available KV cache memory: 6.51 GiB\nGPU KV cache size: 1 tokens\nAvailable KV cache memory: 9.10 GiB\n",
        "contradict each other",
    );
    // A release Headroom does not model is named, with the way out.
    bad(
        &["plan", "llama-3.1-8b-instruct", "--log", "-"],
        "vLLM API server version 0.9.2\nAvailable KV cache memory: 6.51 GiB\n",
        "--vllm-version",
    );
    // A model Headroom does not know asks for its config.json.
    bad(
        &["plan", "--log", "-"],
        "non-default args: {'model_tag': 'someone/unknown-model-7b', 'tensor_parallel_size': 2}\n",
        "--log: the log's model \"someone/unknown-model-7b\" is not in Headroom's catalog",
    );
    // Over 16 MiB: refused with its size, in linear time.
    // A 50 MB paste: refused by its size after reading 16 MiB and one byte, never all of it.
    let huge = "Available KV cache memory: 6.51 GiB\n".repeat(50_000_000 / 36);
    bad(&["import-log", "-"], &huge, "over 16777216 bytes");
    // Hostile text: ANSI colours, carriage returns and invalid UTF-8 are not a crash.
    let o = run_with_stdin(
        &strings(&["import-log", "-", "--json"]),
        &mut &b"\x1b[1;36m(EngineCore pid=1)\x1b[0m Available KV cache memory: 6.51 GiB\r\n\xff\xfe\n"[..],
    );
    assert_eq!(o.code, 0, "{o:?}");
    assert_eq!(json(&o)["readings"][0]["value"], 6.51);
}

#[test]
fn a_pipeline_log_of_0_11_0_is_one_start_with_a_pool_per_worker() {
    // vLLM 0.11.0 prints each worker's own pool under the engine's prefix, before the minimum:
    // read back, the lines are that start's workers (not two launches), each compared with its
    // own worker's prediction.
    let flags = strings(&[
        "llama-3.1-70b-instruct",
        "--vllm-version",
        "0.11.0",
        "-tp",
        "4",
        "-pp",
        "2",
        "--pp-layer-partition",
        "41,39",
        "--max-model-len",
        "32768",
    ]);
    let mut args = strings(&["plan"]);
    args.extend(flags.iter().cloned());
    args.push("--json".into());
    let doc = json(&run(&args));
    let log: Vec<&str> = doc["log_lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect();
    assert!(
        log.iter()
            .filter(|l| l.contains("GPU KV cache size"))
            .count()
            == 8,
        "{log:?}"
    );
    let mut back = strings(&["plan", "--log", "-"]);
    back.extend(flags);
    back.push("--json".into());
    let out = with_stdin(&back, &log.join("\n"));
    assert_eq!(out.code, EXIT_STARTS, "{out:?}");
    let d = json(&out);
    let rows: Vec<&Value> = d["comparison"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["figure"] == "gpu_kv_cache_tokens")
        .collect();
    assert_eq!(rows.len(), 8);
    let distinct: std::collections::BTreeSet<i64> = rows
        .iter()
        .map(|c| c["measured"].as_f64().unwrap() as i64)
        .collect();
    assert!(distinct.len() > 1, "the stages' pools differ: {distinct:?}");
    for c in rows {
        assert_eq!(c["difference"], 0.0, "{c}");
    }
}
