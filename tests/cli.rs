//! The `headroom` binary end to end: flags (every byte form), the JSON keys and their values on
//! the spec's example A, exit codes 0/1/2, error messages naming the flag, catalog ids,
//! `--example`, `solve`, the listings and `--help`. Each test runs the built binary.

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

fn headroom(args: &[&str]) -> Run {
    let out = Command::new(env!("CARGO_BIN_EXE_headroom"))
        .args(args)
        .output()
        .expect("the binary runs");
    let run = Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    };
    // Whatever the input, the binary never panics and never reports an internal error.
    assert!(
        !run.stderr.contains("panicked") && !run.stderr.contains("internal error"),
        "{args:?}: {}",
        run.stderr
    );
    run
}

fn json(args: &[&str]) -> (i32, Value) {
    let mut a = args.to_vec();
    a.push("--json");
    let r = headroom(&a);
    let v: Value = serde_json::from_str(&r.stdout)
        .unwrap_or_else(|e| panic!("{args:?}: not JSON ({e}): {}{}", r.stdout, r.stderr));
    (r.code, v)
}

/// A private directory for this test's files.
fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("headroom-cli-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// Llama-3.1-70B's shape as a Hugging Face config.json (spec §10 example A).
const LLAMA_70B_CONFIG: &str = r#"{
  "architectures": ["LlamaForCausalLM"],
  "model_type": "llama",
  "hidden_size": 8192,
  "intermediate_size": 28672,
  "num_attention_heads": 64,
  "num_hidden_layers": 80,
  "num_key_value_heads": 8,
  "head_dim": 128,
  "max_position_embeddings": 131072,
  "vocab_size": 128256,
  "tie_word_embeddings": false,
  "torch_dtype": "bfloat16"
}"#;

fn llama_70b_config(test: &str) -> String {
    let path = temp_dir(test).join("config.json");
    std::fs::write(&path, LLAMA_70B_CONFIG).expect("write config");
    path.to_string_lossy().into_owned()
}

/// Example A's flags: the measured terms the spec assumes, in plain bytes.
const EXAMPLE_A: &[&str] = &[
    "--gpu-memory",
    "85029158912",
    "-tp",
    "4",
    "--gpu-memory-utilization",
    "0.9",
    "--max-model-len",
    "131072",
    "--free-memory",
    "83418546176",
    "--non-torch",
    "536870912",
    "--activation-peak",
    "1342177280",
    "--cuda-graph",
    "629145600",
];

fn with<'a>(head: &[&'a str], tail: &[&'a str]) -> Vec<&'a str> {
    head.iter().chain(tail).copied().collect()
}

fn assert_example_a(v: &Value) {
    assert_eq!(v["starts"], true);
    assert_eq!(v["first_failure"], Value::Null);
    assert_eq!(v["tp"], 4);
    assert_eq!(v["pp"], 1);
    assert_eq!(v["gpu_memory_utilization"], 0.9);
    let ranks = v["ranks"].as_array().unwrap();
    assert_eq!(ranks.len(), 4);
    for r in ranks {
        assert_eq!(r["weights_bytes"], 35_278_831_616u64);
        assert_eq!(r["budget_bytes"], 76_526_243_021u64);
        assert_eq!(r["available_kv_bytes"], 38_739_217_613u64);
        assert_eq!(r["kv_bytes_per_token"], 81_920);
        assert_eq!(r["page_size_bytes"], 16_384);
        assert_eq!(r["bytes_per_block"], 1_310_720);
        assert_eq!(r["num_blocks"], 29_555);
        assert_eq!(r["kv_pool_bytes"], 38_738_329_600u64);
        assert_eq!(r["layers"], serde_json::json!([0, 80]));
    }
    let replica = &v["replica"];
    assert_eq!(replica["num_blocks"], 29_555);
    assert_eq!(replica["kv_cache_tokens"], 472_880);
    assert_eq!(replica["blocks_per_request"], 8_192);
    assert_eq!(replica["block_size"], 16);
    assert_eq!(replica["max_model_len"], 131_072);
    assert_eq!(replica["full_length_requests"], 3);
    let conc = replica["max_concurrency"].as_f64().unwrap();
    assert!((conc - 472_880.0 / 131_072.0).abs() < 1e-9, "{conc}");
    let log: Vec<&str> = v["log_lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect();
    assert!(log.contains(
        &"(EngineCore pid=P) GPU KV cache size: 472,880 tokens, Maximum concurrency for 131,072 tokens per request: 3.61x"
    ));
    assert!(log.contains(&"(Worker_TP0 pid=P) Available KV cache memory: 36.08 GiB"));
    assert!(log.contains(&"(Worker_TP0 pid=P) Model loading took 32.86 GiB memory and T seconds"));
}

#[test]
fn example_a_json_figures_from_a_config_json() {
    let config = llama_70b_config("example-a");
    let (code, v) = json(&with(&["plan", &config], EXAMPLE_A));
    assert_eq!(code, 0);
    assert_example_a(&v);
}

#[test]
fn json_keys_are_present() {
    let config = llama_70b_config("keys");
    let (_, v) = json(&with(&["plan", &config], EXAMPLE_A));
    for key in [
        "format_version",
        "vllm_version",
        "starts",
        "first_failure",
        "tp",
        "pp",
        "dp",
        "pp_partition",
        "gpu_memory_utilization",
        "ranks",
        "replica",
        "checks",
        "demand",
        "unified",
        "log_lines",
        "notes",
        "input",
    ] {
        assert!(v.get(key).is_some(), "missing top-level key {key}");
    }
    let r = &v["ranks"][0];
    for key in [
        "rank",
        "tp_rank",
        "pp_rank",
        "layers",
        "holds_embedding",
        "holds_head",
        "holds_drafter",
        "weights_bytes",
        "budget_bytes",
        "available_kv_bytes",
        "kv_heads",
        "kv_bytes_per_token",
        "page_size_bytes",
        "bytes_per_block",
        "num_blocks",
        "kv_pool_bytes",
        "free_after_start_bytes",
        "ledger",
    ] {
        assert!(r.get(key).is_some(), "missing ranks[].{key}");
    }
    for line in r["ledger"].as_array().unwrap() {
        for key in ["term", "label", "bytes", "formula", "provenance", "basis"] {
            assert!(line.get(key).is_some(), "missing ledger[].{key}: {line}");
        }
        let p = line["provenance"].as_str().unwrap();
        assert!(["exact", "estimate", "measured"].contains(&p), "{p}");
        assert!(line["bytes"].is_i64() || line["bytes"].is_u64());
    }
    let ledger = r["ledger"].as_array().unwrap();
    let term = |t: &str| ledger.iter().find(|l| l["term"] == t).unwrap();
    assert_eq!(term("budget")["bytes"], 76_526_243_021u64);
    // ceil(total x fraction) is arithmetic on the total given with --gpu-memory: a measured
    // value, so the budget is as certain as it (a device total is never "exact").
    assert_eq!(term("budget")["provenance"], "measured");
    assert_eq!(term("total")["provenance"], "measured");
    assert_eq!(term("free_at_start")["provenance"], "measured");
    assert!(term("free_at_start")["basis"]
        .as_str()
        .unwrap()
        .contains("--free-memory"));
    assert_eq!(term("weights")["provenance"], "estimate");
    for key in [
        "num_blocks",
        "limiting_rank",
        "block_size",
        "blocks_per_request",
        "max_model_len",
        "kv_cache_tokens",
        "max_concurrency",
        "full_length_requests",
        "data_parallel",
        "groups",
        "provenance",
        "basis",
    ] {
        assert!(v["replica"].get(key).is_some(), "missing replica.{key}");
    }
    let g = &v["replica"]["groups"][0];
    assert_eq!(g["spec"], "FullAttentionSpec");
    assert_eq!(g["layers"].as_array().unwrap().len(), 80);
    let phases: Vec<&str> = v["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["phase"].as_str().unwrap())
        .collect();
    assert_eq!(
        phases,
        ["init", "load", "kv_sizing", "capacity", "allocation"]
    );
    for c in v["checks"].as_array().unwrap() {
        for key in [
            "phase",
            "label",
            "ok",
            "rank",
            "message",
            "vllm_error",
            "knobs",
            "not_knobs",
        ] {
            assert!(c.get(key).is_some(), "missing checks[].{key}");
        }
    }
    for key in [
        "max_num_seqs",
        "max_num_batched_tokens",
        "per_request_bytes",
        "all_seqs_bytes",
        "all_seqs_bytes_replica",
        "pool_bytes",
        "average_len",
        "concurrency_at_average",
    ] {
        assert!(v["demand"].get(key).is_some(), "missing demand.{key}");
    }
    assert_eq!(v["unified"], Value::Null);
    assert_eq!(v["input"]["gpu"]["total_bytes"], 85_029_158_912u64);
    assert_eq!(v["input"]["gpus"], 4);
    assert_eq!(v["input"]["max_model_len"], 131_072);
}

#[test]
fn byte_forms_and_flag_spellings_give_the_same_plan() {
    let config = llama_70b_config("forms");
    let (code, v) = json(&[
        "plan",
        &config,
        "--gpu-memory=85,029,158,912",
        "--tensor_parallel_size",
        "4",
        "--gpu-memory-utilization=0.9",
        "--max_model_len=128K",
        "--free-memory",
        "77.6875GiB",
        "--non-torch",
        "512MiB",
        "--activation-peak",
        "1.25GiB",
        "--cuda-graph",
        "600MiB",
    ]);
    assert_eq!(code, 0);
    assert_example_a(&v);
}

#[test]
fn vllm_byte_suffixes() {
    let pin = |text: &str| -> Value {
        let (_, v) = json(&[
            "plan",
            "llama-3.1-8b-instruct",
            "--kv-cache-memory-bytes",
            text,
        ]);
        v["input"]["kv_cache_memory_bytes"].clone()
    };
    assert_eq!(pin("9G"), 9u64 << 30);
    assert_eq!(pin("9g"), 9_000_000_000u64);
    assert_eq!(pin("10e9"), 10_000_000_000u64);
    assert_eq!(pin("46.1GB"), 46_100_000_000u64);
    assert_eq!(pin("512MiB"), 512u64 << 20);
    assert_eq!(pin("1073741824"), 1u64 << 30);
}

#[test]
fn per_stage_lists() {
    let (code, v) = json(&[
        "plan",
        "llama-3.1-70b-instruct",
        "-tp",
        "4",
        "-pp",
        "2",
        "--weights",
        "16GiB,17GiB",
        "--available-kv",
        "20GiB,-",
    ]);
    assert!(code == 0 || code == 1, "{code}");
    let ranks = v["ranks"].as_array().unwrap();
    assert_eq!(ranks.len(), 8);
    assert_eq!(ranks[0]["weights_bytes"], 16u64 << 30);
    assert_eq!(ranks[7]["weights_bytes"], 17u64 << 30);
    assert_eq!(ranks[0]["available_kv_bytes"], 20u64 << 30);
    let r = headroom(&[
        "plan",
        "llama-3.1-70b-instruct",
        "-pp",
        "2",
        "--weights",
        "1GiB,2GiB,3GiB",
    ]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.starts_with("error: --weights: 3 values for 2"),
        "{}",
        r.stderr
    );
}

#[test]
fn available_kv_plans_the_pool_directly() {
    let config = llama_70b_config("avail");
    let (code, v) = json(&[
        "plan",
        &config,
        "--gpu-memory",
        "85029158912",
        "-tp",
        "4",
        "--max-model-len",
        "131072",
        "--available-kv",
        "38739217613",
    ]);
    assert_eq!(code, 0);
    assert_eq!(v["replica"]["num_blocks"], 29_555);
    assert_eq!(v["replica"]["kv_cache_tokens"], 472_880);
}

#[test]
fn exit_1_when_a_check_fails() {
    let config = llama_70b_config("fails");
    let (code, v) = json(&[
        "plan",
        &config,
        "--gpu-memory",
        "85029158912",
        "-tp",
        "4",
        "--max-model-len",
        "131072",
        "--available-kv",
        "8GiB",
    ]);
    assert_eq!(code, 1);
    assert_eq!(v["starts"], false);
    assert_eq!(v["first_failure"], "capacity");
    assert_eq!(v["replica"], Value::Null);
    let failed = v["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["ok"] == false)
        .unwrap();
    assert_eq!(failed["phase"], "capacity");
    assert!(failed["vllm_error"]
        .as_str()
        .unwrap()
        .contains("estimated maximum model length"));
    assert!(!failed["knobs"].as_array().unwrap().is_empty());

    // The text view says so too, and exits the same way.
    let r = headroom(&[
        "plan",
        &config,
        "--gpu-memory",
        "85029158912",
        "-tp",
        "4",
        "--free-memory",
        "60GiB",
    ]);
    assert_eq!(r.code, 1);
    assert!(r.stdout.contains("DOES NOT START"), "{}", r.stdout);
    assert!(r.stdout.contains("FAIL"));
    assert!(r.stdout.contains("Free memory on device cuda:0"));
}

#[test]
fn exit_2_names_the_flag() {
    let config = llama_70b_config("bad");
    let cases: &[(&[&str], &str)] = &[
        (
            &["plan", &config, "-tp", "3"],
            "error: --tensor-parallel-size: 3 does not divide 64 attention heads",
        ),
        (
            &["plan", &config, "--tensor-parallel-size"],
            "error: --tensor-parallel-size: needs a value",
        ),
        (
            &["plan", &config, "-tp", "four"],
            "error: --tensor-parallel-size: ",
        ),
        (
            &["plan", &config, "-tp", "-4"],
            "error: --tensor-parallel-size: ",
        ),
        (
            &["plan", &config, "-tp", "0"],
            "error: --tensor-parallel-size: ",
        ),
        (
            &["plan", &config, "--frobnicate"],
            "error: --frobnicate: unknown flag",
        ),
        // A misspelling gets a suggestion (a unique prefix, as argparse allows, is taken).
        (
            &["plan", &config, "--max-num-seqz", "8"],
            "did you mean --max-num-seqs?",
        ),
        (
            &["plan", &config, "--max-model-len", "--json"],
            "error: --max-model-len: needs a value",
        ),
        // `plan` is not pointed at a flag only `solve` takes.
        (&["plan", &config, "--fo"], "error: --fo: unknown flag"),
        (
            &["plan", &config, "--weights", "lots"],
            "error: --weights: ",
        ),
        (
            &["plan", &config, "--weights", "1.5G"],
            "error: --weights: ",
        ),
        (
            &["plan", &config, "--weights", "18446744073709551615"],
            "error: --weights: ",
        ),
        (
            &["plan", &config, "--free-memory", "99999999999999999999"],
            "error: --free-memory: ",
        ),
        (
            &["plan", &config, "--load-peak", "1e300"],
            "error: --load-peak: ",
        ),
        (
            &[
                "plan",
                &config,
                "--max-num-batched-tokens",
                "18446744073709551615",
            ],
            "error: --max-num-batched-tokens: ",
        ),
        (
            &["plan", &config, "--gpu-memory-utilization", "1.5"],
            "error: --gpu-memory-utilization: ",
        ),
        (
            &["plan", &config, "--gpu-memory-utilization", "NaN"],
            "error: --gpu-memory-utilization: ",
        ),
        (
            &["plan", &config, "--max-model-len", "1000000"],
            "error: --max-model-len: ",
        ),
        (
            &["plan", &config, "--kv-cache-dtype", "int2"],
            "error: --kv-cache-dtype: ",
        ),
        (
            &["plan", &config, "--block-size", "0"],
            "error: --block-size: ",
        ),
        (
            &["plan", &config, "--vllm-version", "0.9"],
            "error: --vllm-version: ",
        ),
        (
            &["plan", &config, "--speculative-config", "{not json"],
            "error: --speculative-config: ",
        ),
        (
            &["plan", &config, "--drafter-weights", "1GiB"],
            "error: --drafter-weights: ",
        ),
        (
            &["plan", &config, "--headroom", "8GiB"],
            "error: --headroom: ",
        ),
        (&["plan", &config, "--unit", "furlongs"], "error: --unit: "),
        (&["plan", &config, "--gpu", "h100"], "error: --gpu: "),
        (
            &["plan", &config, "--gpus", "2", "-tp", "4"],
            "error: --gpus: ",
        ),
        (
            &["plan", &config, "-pp", "2", "--pp-layer-partition", "40,41"],
            "error: --pp-layer-partition: ",
        ),
        (
            &["plan", &config, "--enforce-eager=maybe"],
            "error: --enforce-eager: ",
        ),
        (&["plan", "--example", "s9"], "error: --example: "),
        (&["plan"], "error: MODEL: "),
        (&["plan", "no-such-model"], "error: MODEL: "),
        (&["plan", "/nonexistent/dir/config.json"], "error: MODEL: "),
        (&["plan", &config, "--for", "kv-pin"], "error: --for: "),
        (&["solve", &config], "error: --for: "),
        (&["solve", &config, "--for", "speed"], "error: --for: "),
        (&["frobnicate"], "error: "),
        (&[], "error: "),
    ];
    for (args, want) in cases {
        let r = headroom(args);
        assert_eq!(r.code, 2, "{args:?}: {}{}", r.stdout, r.stderr);
        assert!(
            r.stderr.contains(want),
            "{args:?}: {:?} lacks {want:?}",
            r.stderr
        );
        assert!(r.stderr.starts_with("error: "), "{args:?}: {}", r.stderr);
        assert!(r.stdout.is_empty());
    }
}

#[test]
fn bad_config_files_are_bad_input() {
    let dir = temp_dir("configs");
    let write = |name: &str, text: &str| {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p.to_string_lossy().into_owned()
    };
    for (name, text) in [
        ("truncated.json", "{\"num_hidden_layers\": 2"),
        ("array.json", "[1, 2, 3]"),
        ("empty.json", ""),
        ("missing.json", "{\"num_hidden_layers\": 2}"),
        (
            "zero.json",
            "{\"num_hidden_layers\": 0, \"hidden_size\": 64, \"num_attention_heads\": 4, \"vocab_size\": 100, \"max_position_embeddings\": 512}",
        ),
        (
            "negative.json",
            "{\"num_hidden_layers\": -2, \"hidden_size\": 64, \"num_attention_heads\": 4, \"vocab_size\": 100, \"max_position_embeddings\": 512}",
        ),
    ] {
        let path = write(name, text);
        let r = headroom(&["plan", &path]);
        assert_eq!(r.code, 2, "{name}: {}", r.stdout);
        assert!(r.stderr.starts_with("error: MODEL: "), "{name}: {}", r.stderr);
    }
    // Over the 256 KiB a link and the page hold: refused, naming the file and the size.
    let mut big = String::from(LLAMA_70B_CONFIG.trim_end_matches('}'));
    for i in 0..30_000 {
        big.push_str(&format!(", \"filler_{i}\": {i}"));
    }
    big.push('}');
    let path = write("big.json", &big);
    let r = headroom(&["plan", &path]);
    assert_eq!(r.code, 2, "{}", r.stdout);
    assert!(
        r.stderr.starts_with("error: MODEL: ") && r.stderr.contains("over the 262,144 bytes"),
        "{}",
        r.stderr
    );
    // Not UTF-8.
    let p = dir.join("binary.json");
    std::fs::write(&p, [0xff, 0xfe, 0x00]).unwrap();
    let r = headroom(&["plan", &p.to_string_lossy()]);
    assert_eq!(r.code, 2);
    // A directory holding a config.json is read like the file.
    let config = llama_70b_config("dir");
    let d = PathBuf::from(&config)
        .parent()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let (code, v) = json(&with(&["plan", &d], EXAMPLE_A));
    assert_eq!(code, 0);
    assert_eq!(v["replica"]["num_blocks"], 29_555);
}

#[test]
fn catalog_ids_work() {
    let (code, v) = json(&["plan", "llama-3.1-8b-instruct", "--gpu", "h100-sxm-80gb"]);
    assert_eq!(code, 0);
    assert_eq!(v["input"]["gpu"]["id"], "h100-sxm-80gb");
    assert_eq!(v["ranks"].as_array().unwrap().len(), 1);
    // Without --gpu: the page's default GPU.
    let (_, d) = json(&["plan", "llama-3.1-8b-instruct"]);
    assert_eq!(d["input"]["gpu"]["id"], "h100-sxm-80gb");
    // --model is the same as the argument.
    let (_, m) = json(&["plan", "--model", "llama-3.1-8b-instruct"]);
    assert_eq!(m["replica"], v["replica"]);

    let (code, v) = json(&["plan", "deepseek-r1", "--gpu", "h200-141gb", "-tp", "8"]);
    assert!(code == 0 || code == 1, "{code}");
    assert_eq!(v["ranks"].as_array().unwrap().len(), 8);

    let (code, v) = json(&[
        "plan",
        "llama-3.1-70b-instruct",
        "--gpu",
        "h100-sxm-80gb",
        "-tp",
        "4",
        "-pp",
        "4",
    ]);
    assert!(code == 0 || code == 1, "{code}");
    assert_eq!(v["ranks"].as_array().unwrap().len(), 16);
    assert_eq!(v["pp_partition"], serde_json::json!([20, 20, 20, 20]));
    assert_eq!(v["input"]["gpus"], 16);

    // Every catalog model and GPU listed has an id that plans (or fails a check), never bad input.
    let (_, models) = json(&["models"]);
    let (_, gpus) = json(&["gpus"]);
    let models = models.as_array().unwrap();
    let gpus = gpus.as_array().unwrap();
    assert!(models.len() >= 20);
    assert!(gpus.len() >= 10);
    for m in models {
        assert!(m["source"].as_str().is_some_and(|s| !s.is_empty()));
        let id = m["id"].as_str().unwrap();
        let r = headroom(&["plan", id, "--gpu", "b200-192gb", "--max-model-len", "4096"]);
        assert!(r.code == 0 || r.code == 1, "{id}: {}", r.stderr);
    }
    for g in gpus {
        assert!(g["source"].as_str().is_some_and(|s| !s.is_empty()));
        let id = g["id"].as_str().unwrap();
        let r = headroom(&["plan", "qwen3-4b", "--gpu", id, "--max-model-len", "4096"]);
        assert!(r.code == 0 || r.code == 1, "{id}: {}", r.stderr);
    }
}

#[test]
fn listings_show_ids_and_sources() {
    for cmd in ["models", "gpus", "examples"] {
        let r = headroom(&[cmd]);
        assert_eq!(r.code, 0);
        assert!(r.stdout.contains("source: "), "{cmd}");
    }
    assert!(headroom(&["models"])
        .stdout
        .contains("llama-3.1-8b-instruct"));
    assert!(headroom(&["gpus"]).stdout.contains("h100-sxm-80gb"));
    let (_, ex) = json(&["examples"]);
    let ids: Vec<&str> = ex
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        ["s1-three-cards", "s2-unified-gate", "s3-synthetic-tp4"]
    );
    assert_eq!(headroom(&["models", "--bogus"]).code, 2);
}

#[test]
fn examples_load_and_take_flags_on_top() {
    let (code, v) = json(&["plan", "--example", "s3-synthetic-tp4"]);
    assert_eq!(code, 0);
    assert_eq!(v["tp"], 4);
    assert_eq!(v["input"]["gpu"]["total_bytes"], 80_000_000_000u64);
    assert_eq!(v["replica"]["max_model_len"], 131_072);
    assert_eq!(v["ranks"][0]["weights_bytes"], 17_500_000_000u64);

    let (_, w) = json(&[
        "plan",
        "--example",
        "s3-synthetic-tp4",
        "--max-model-len",
        "32k",
    ]);
    assert_eq!(w["replica"]["max_model_len"], 32_000);
    assert_eq!(w["tp"], 4);

    // The unified-memory gate of seed 002.
    let (_, u) = json(&["plan", "--example", "s2-unified-gate"]);
    assert_ne!(u["unified"], Value::Null);
    for key in [
        "ok",
        "needs_bytes",
        "mem_available_bytes",
        "lines",
        "utilization_note",
    ] {
        assert!(u["unified"].get(key).is_some(), "missing unified.{key}");
    }
    assert_eq!(u["checks"][0]["phase"], "unified_gate");
    // --mem-available turns the gate on for a unified-memory GPU; --headroom tunes it.
    let (_, g) = json(&[
        "plan",
        "llama-3.1-8b-instruct",
        "--gpu",
        "gb10-128gb",
        "--mem-available",
        "20GiB",
        "--headroom",
        "4GiB",
        "--kv-cache-memory-bytes",
        "4GiB",
    ]);
    assert_eq!(g["checks"][0]["phase"], "unified_gate");
    assert_eq!(g["unified"]["mem_available_bytes"], 20u64 << 30);
    // A GPU with memory of its own has no such gate: the host's MemAvailable is refused by
    // name, not compared with GPU memory.
    let r = headroom(&[
        "plan",
        "llama-3.1-8b-instruct",
        "--gpu",
        "h100-sxm-80gb",
        "--mem-available",
        "20GiB",
    ]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("--mem-available:") && r.stderr.contains("memory of its own"),
        "{}",
        r.stderr
    );

    // Seed 000 fails while loading on the heaviest stage (the article's point).
    let r = headroom(&["plan", "--example", "s1-three-cards"]);
    assert_eq!(r.code, 1);
    assert!(r.stdout.contains("model loading"));
}

#[test]
fn text_ledger_groups_tp_ranks_and_labels_provenance() {
    let config = llama_70b_config("text");
    let r = headroom(&with(&["plan", &config], EXAMPLE_A));
    assert_eq!(r.code, 0);
    let out = &r.stdout;
    assert!(
        out.contains("Ranks 0-3 (stage 0 of 1, TP ranks 0-3"),
        "{out}"
    );
    assert!(out.contains("36.08 GiB"));
    assert!(out.contains("38,739,217,613"));
    for p in ["estimate", "measured"] {
        assert!(out.contains(p), "no {p} label");
    }
    assert!(out.contains("given: --free-memory 83418546176"));
    assert!(out.contains("Checks, in phase order"));
    assert!(out.contains("knobs: "));
    assert!(out.contains("472,880 tokens"));
    assert!(out.contains("GPU KV cache size: 472,880 tokens, Maximum concurrency for 131,072 tokens per request: 3.61x"));
    assert!(out.contains("Demand"));

    let gb = headroom(&with(&["plan", &config, "--unit", "gb"], EXAMPLE_A));
    assert!(gb.stdout.contains("38.74 GB"), "{}", gb.stdout);

    // TP=4 x PP=4: one ledger per stage.
    let pp = headroom(&["plan", "llama-3.1-70b-instruct", "-tp", "4", "-pp", "4"]);
    for stage in 0..4 {
        let first = stage * 4;
        assert!(
            pp.stdout.contains(&format!(
                "Ranks {}-{} (stage {stage} of 4",
                first,
                first + 3
            )),
            "{}",
            pp.stdout
        );
    }
}

#[test]
fn solve_targets() {
    let (code, v) = json(&["solve", "llama-3.1-8b-instruct", "--for", "kv-pin"]);
    assert_eq!(code, 0);
    let pin = v["solve"]["value"].as_u64().unwrap();
    assert!(pin > 1 << 30);
    assert_eq!(v["solve"]["flag"], format!("--kv-cache-memory-bytes {pin}"));
    assert_eq!(v["plan"]["input"]["kv_cache_memory_bytes"], pin);
    assert_eq!(v["plan"]["starts"], true);

    // The whole GPU free at the snapshot, so every utilization up to 1.0 passes the init check
    // (the solver's search assumes it does; see the report on `smallest_utilization_for`).
    let (code, v) = json(&[
        "solve",
        "llama-3.1-8b-instruct",
        "--gpu-memory",
        "80GiB",
        "--free-memory",
        "80GiB",
        "--for",
        "utilization:2",
    ]);
    assert_eq!(code, 0, "{v}");
    let u = v["solve"]["value"].as_f64().unwrap();
    assert!(u > 0.0 && u <= 1.0);
    assert!(
        v["plan"]["replica"]["full_length_requests"]
            .as_u64()
            .unwrap()
            >= 2
    );

    let (code, v) = json(&[
        "solve",
        "llama-3.1-8b-instruct",
        "--for",
        "utilization:100000",
    ]);
    assert_eq!(code, 1);
    assert_eq!(v["solve"]["found"], false);
    assert_eq!(v["solve"]["value"], Value::Null);

    let (code, v) = json(&[
        "solve",
        "llama-3.1-70b-instruct",
        "--gpu",
        "h100-sxm-80gb",
        "-tp",
        "2",
        "--for",
        "max-model-len",
    ]);
    assert_eq!(code, 0);
    let len = v["solve"]["value"].as_u64().unwrap();
    assert!(len > 0 && len <= 131_072);
    assert_eq!(v["plan"]["replica"]["max_model_len"], len);

    let (_, v) = json(&[
        "solve",
        "--example",
        "s1-three-cards",
        "--for",
        "pp-partition:3.6:3",
    ]);
    assert_eq!(v["solve"]["value"], serde_json::json!([15, 16, 12]));
    assert_eq!(v["plan"]["pp_partition"], serde_json::json!([15, 16, 12]));
    // Extras heavier than a stage's share: the last stage keeps one layer, and says why.
    let r = headroom(&[
        "solve",
        "llama-3.1-8b-instruct",
        "-pp",
        "2",
        "--for",
        "pp-partition:200",
    ]);
    assert!(
        r.stdout.contains("--pp-layer-partition 31,1") && r.stdout.contains("keeps the one layer"),
        "{}",
        r.stdout
    );

    let r = headroom(&["solve", "llama-3.1-8b-instruct", "--for", "kv-pin"]);
    assert!(
        r.stdout.contains("Use: --kv-cache-memory-bytes "),
        "{}",
        r.stdout
    );
}

/// A solver's answer says how certain it is: computed from catalog estimates it is an estimate;
/// with every runtime term measured it is derived from measurements, never shown as exact.
#[test]
fn solve_answers_carry_provenance() {
    let (_, v) = json(&["solve", "llama-3.1-8b-instruct", "--for", "kv-pin"]);
    assert_eq!(v["solve"]["provenance"], "estimate", "{}", v["solve"]);
    assert!(v["solve"]["basis"]
        .as_str()
        .unwrap()
        .starts_with("derived from an estimate"));

    let measured = [
        "solve",
        "llama-3.1-8b-instruct",
        "--for",
        "kv-pin",
        "--weights",
        "14.99GiB",
        "--activation-peak",
        "1.2GiB",
        "--non-torch",
        "0.3GiB",
        "--cuda-graph",
        "0.5GiB",
        "--free-memory",
        "79GiB",
    ];
    let (code, v) = json(&measured);
    assert_eq!(code, 0);
    assert_eq!(v["solve"]["provenance"], "measured", "{}", v["solve"]);
    assert!(v["solve"]["basis"].as_str().unwrap().contains("given: --"));

    let r = headroom(&measured);
    assert!(
        r.stdout
            .contains("\n  Figures: measured (derived from a measured value: given: --"),
        "{}",
        r.stdout
    );
}

#[test]
fn help_lists_every_flag() {
    let top = headroom(&["--help"]);
    assert_eq!(top.code, 0);
    assert!(top.stdout.contains("headroom plan MODEL"));
    let plan = headroom(&["plan", "--help"]);
    assert_eq!(plan.code, 0);
    for flag in [
        "-tp, --tensor-parallel-size",
        "-pp, --pipeline-parallel-size",
        "-dp, --data-parallel-size",
        "--enable-expert-parallel",
        "--gpu-memory-utilization",
        "--kv-cache-memory-bytes",
        "--max-model-len",
        "--max-num-seqs",
        "--max-num-batched-tokens",
        "--kv-cache-dtype",
        "--block-size",
        "--enforce-eager",
        "--num-gpu-blocks-override",
        "--speculative-config",
        "--disable-hybrid-kv-cache-manager",
        "--gpu ID",
        "--gpu-memory",
        "--gpus",
        "--free-memory",
        "--vllm-version",
        "--pp-layer-partition",
        "--weights",
        "--activation-peak",
        "--non-torch",
        "--cuda-graph",
        "--load-peak",
        "--available-kv",
        "--mem-available",
        "--headroom",
        "--overhead",
        "--drafter-weights",
        "--example",
        "--unit",
        "--json",
    ] {
        assert!(plan.stdout.contains(flag), "plan --help lacks {flag}");
    }
    assert!(!plan.stdout.contains("--for"));
    let solve = headroom(&["solve", "--help"]);
    assert!(solve.stdout.contains("--for TARGET"));
    assert_eq!(headroom(&["--version"]).code, 0);
}

#[test]
fn switches_and_speculative_config() {
    let (_, eager) = json(&["plan", "llama-3.1-8b-instruct", "--enforce-eager"]);
    let graphs = eager["ranks"][0]["ledger"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["term"] == "cuda_graphs")
        .unwrap()
        .clone();
    assert_eq!(graphs["bytes"], 0);
    assert_eq!(eager["input"]["enforce_eager"], true);
    let (_, not) = json(&[
        "plan",
        "llama-3.1-8b-instruct",
        "--enforce-eager",
        "--no-enforce-eager",
    ]);
    assert_eq!(not["input"]["enforce_eager"], false);

    let (_, mtp) = json(&[
        "plan",
        "deepseek-r1",
        "--gpu",
        "h200-141gb",
        "-tp",
        "8",
        "--speculative-config",
        r#"{"method":"deepseek_mtp","num_speculative_tokens":1}"#,
        "--drafter-weights",
        "2GiB",
    ]);
    assert_eq!(mtp["input"]["speculative"]["method"], "deepseek_mtp");
    assert_eq!(mtp["ranks"][7]["holds_drafter"], true);
    let drafter = mtp["ranks"][7]["ledger"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["term"] == "drafter")
        .unwrap()
        .clone();
    assert_eq!(drafter["bytes"], 2u64 << 30);
    assert_eq!(drafter["provenance"], "measured");

    let (_, auto) = json(&["plan", "llama-3.1-8b-instruct", "--max-model-len", "-1"]);
    assert_eq!(auto["input"]["max_model_len"], "auto");
}

#[test]
fn listings_take_json_as_a_switch_and_a_full_disk_is_reported() {
    let r = headroom(&["models", "--json=false"]);
    assert_eq!(r.code, 0);
    assert!(r.stdout.starts_with("id "), "{}", r.stdout);
    let r = headroom(&["gpus", "--json=true"]);
    assert_eq!(r.code, 0);
    assert!(r.stdout.starts_with('['));
    // Output that cannot be written is an error, not a silent success.
    if let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") {
        let out = Command::new(env!("CARGO_BIN_EXE_headroom"))
            .args(["models"])
            .stdout(full)
            .output()
            .expect("the binary runs");
        assert_eq!(out.status.code(), Some(2));
        assert!(String::from_utf8_lossy(&out.stderr).contains("the output could not be written"));
    }
}

#[test]
fn kv_pin_names_vllms_own_suggestion_and_the_plan_logs_it() {
    // vLLM's log counts the graphs twice: its figure is one graph estimate below the pin.
    let r = headroom(&[
        "solve",
        "llama-3.1-70b-instruct",
        "-tp",
        "4",
        "--for",
        "kv-pin",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("--kv-cache-memory-bytes 46306148352"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .contains("vLLM's own log would suggest --kv-cache-memory=45664419840"),
        "{}",
        r.stdout
    );
    let plan = headroom(&["plan", "llama-3.1-70b-instruct", "-tp", "4"]);
    assert!(
        plan.stdout
            .contains("`--kv-cache-memory=45664419840` (42.53 GiB) to fully utilize gpu memory"),
        "{}",
        plan.stdout
    );
}

#[test]
fn notes_follow_the_unit() {
    // The unified-memory note's amounts, like the checks', follow --unit.
    let gb = headroom(&["plan", "--example", "s2-unified-gate", "--unit", "gb"]);
    let note = gb
        .stdout
        .lines()
        .find(|l| l.contains("On unified memory, gpu-memory-utilization"))
        .expect("the unified-memory note");
    assert!(note.contains(" GB ") && !note.contains("GiB"), "{note}");
    let gib = headroom(&["plan", "--example", "s2-unified-gate"]);
    assert!(
        gib.stdout.contains("of the box's 121.69 GiB total"),
        "{}",
        gib.stdout
    );
}

#[test]
fn an_examples_measurements_give_way_in_the_cli_as_on_the_page() {
    // The same rule as the page's (catalog::examples::give_way): the CLI and a link agree.
    for (args, query) in [
        (
            vec!["plan", "--example", "s1-three-cards", "--gpu", "h200-141gb"],
            "example=s1-three-cards&gpu=h200-141gb",
        ),
        (
            vec![
                "plan",
                "--example",
                "s1-three-cards",
                "-pp",
                "2",
                "--gpus",
                "2",
            ],
            "example=s1-three-cards&pp=2&gpus=2",
        ),
        (
            vec![
                "plan",
                "--example",
                "s2-unified-gate",
                "--gpu",
                "h100-sxm-80gb",
            ],
            "example=s2-unified-gate&gpu=h100-sxm-80gb",
        ),
    ] {
        let (code, cli) = json(&args);
        assert_ne!(code, 2, "{args:?}: refused: {cli}");
        let d = headroom::io::url::decode(query);
        let page = headroom::calc::plan(&headroom::io::url::scenario(&d.state).unwrap()).unwrap();
        assert_eq!(cli["starts"], page.starts(), "{args:?}");
        assert_eq!(
            cli["replica"]["num_blocks"].as_u64(),
            page.replica.as_ref().map(|r| r.num_blocks),
            "{args:?}"
        );
        assert_eq!(cli["unified"].is_null(), page.unified.is_none(), "{args:?}");
    }
    // A gate term typed for the dropped gate is refused by name in both.
    let r = headroom(&[
        "plan",
        "--example",
        "s2-unified-gate",
        "--gpu",
        "h100-sxm-80gb",
        "--headroom",
        "4GiB",
    ]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("--headroom:") && r.stderr.contains("does not apply"),
        "{}",
        r.stderr
    );
}

#[test]
fn long_flags_take_unique_prefixes_as_argparse_does() {
    // vLLM's own log suggests `--kv-cache-memory=...`: the prefix of --kv-cache-memory-bytes.
    let (code, v) = json(&["plan", "llama-3.1-8b-instruct", "--kv-cache-memory=40GiB"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["input"]["kv_cache_memory_bytes"], 40u64 << 30);
    // `plan` does not suggest `--for`, which only `solve` takes.
    let r = headroom(&["plan", "llama-3.1-8b-instruct", "--fo", "x"]);
    assert!(!r.stderr.contains("--for"), "{}", r.stderr);
    // Ambiguous prefixes are not guessed.
    let r = headroom(&["plan", "llama-3.1-8b-instruct", "--max", "8"]);
    assert_eq!(r.code, 2);
    // Ids in any case, and the Hugging Face repo as MODEL.
    assert_eq!(
        headroom(&[
            "plan",
            "meta-llama/Llama-3.1-8B-Instruct",
            "--gpu",
            "H100-SXM-80GB"
        ])
        .code,
        0
    );
    assert_eq!(headroom(&["plan", "--example", "S3-SYNTHETIC-TP4"]).code, 0);
    assert_eq!(
        headroom(&["plan", "llama-3.1-8b-instruct", "--max-model-len", "AUTO"]).code,
        0
    );
}

#[test]
fn a_draft_model_in_the_speculative_config_is_planned() {
    // vLLM infers draft_model from `model` alone; the id, repo or path names the drafter.
    let (code, v) = json(&[
        "plan",
        "qwen2.5-72b-instruct",
        "-tp",
        "4",
        "--max-model-len",
        "32768",
        "--speculative-config",
        r#"{"model": "Qwen/Qwen2.5-7B-Instruct", "num_speculative_tokens": 4}"#,
    ]);
    assert_eq!(code, 0);
    let g = &v["replica"]["groups"][0];
    assert_eq!(g["spec"], "UniformTypeKVCacheSpecs");
    assert_eq!(g["page_size_bytes"], 1_540_096);
    assert_eq!(g["layers"].as_array().unwrap().len(), 108);
    // A drafter Headroom cannot read is refused, naming the flag and the key.
    let r = headroom(&[
        "plan",
        "qwen2.5-72b-instruct",
        "--speculative-config",
        r#"{"method": "draft_model", "model": "no/such-model"}"#,
    ]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("--speculative-config"), "{}", r.stderr);
    assert!(r.stderr.contains("model:"), "{}", r.stderr);
    // An EAGLE head's `model` is not a draft model: not read.
    let r = headroom(&[
        "plan",
        "llama-3.1-8b-instruct",
        "--speculative-config",
        r#"{"method": "eagle", "model": "yuhuili/EAGLE-LLaMA3.1-Instruct-8B"}"#,
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
}

#[test]
fn models_list_the_catalogs_notes() {
    let (code, rows) = json(&["models"]);
    assert_eq!(code, 0);
    let v4 = rows
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == "deepseek-v4-flash")
        .unwrap();
    assert!(v4["notes"].as_str().unwrap().contains("compress_ratios"));
    let text = headroom(&["models"]);
    assert!(text.stdout.contains("    notes: Seeds confirm"));
}

#[test]
fn speculative_configs_vllm_refuses_are_refused() {
    let refused = |model: &str, spec: &str, says: &str| {
        let r = headroom(&[
            "plan",
            model,
            "-tp",
            "8",
            "--gpu",
            "h200-141gb",
            "--speculative-config",
            spec,
        ]);
        assert_eq!(r.code, 2, "{spec}: {}", r.stderr);
        assert!(
            r.stderr.contains("--speculative-config"),
            "{spec}: {}",
            r.stderr
        );
        assert!(r.stderr.contains(says), "{spec}: {}", r.stderr);
    };
    // No count and no draft config to take n_predict from (SpeculativeConfig._verify_args).
    refused(
        "deepseek-v3",
        r#"{"method":"mtp"}"#,
        "num_speculative_tokens must be provided",
    );
    refused(
        "llama-3.1-8b-instruct",
        r#"{"method":"ngram"}"#,
        "num_speculative_tokens must be provided",
    );
    refused(
        "qwen3-32b",
        r#"{"model":"qwen3-4b"}"#,
        "`num_speculative_tokens` was not provided",
    );
    // An EAGLE head is a checkpoint of its own.
    refused(
        "llama-3.1-8b-instruct",
        r#"{"method":"eagle","num_speculative_tokens":2}"#,
        "without speculative model",
    );
    refused(
        "llama-3.1-8b-instruct",
        r#"{"method":"ngram","num_speculative_tokens":2,"prompt_lookup_min":5,"prompt_lookup_max":2}"#,
        "prompt_lookup_min=5 must be <= prompt_lookup_max=2",
    );
    // Only vLLM's MTP model types are method names; each is renamed mtp.
    refused(
        "deepseek-v3",
        r#"{"method":"foo_mtp","num_speculative_tokens":1}"#,
        "is not one of",
    );
    refused(
        "llama-3.1-8b-instruct",
        r#"{"method":"qwen3_next_mtp","num_speculative_tokens":1}"#,
        "Unsupported speculative method: 'mtp'",
    );
    let (code, _) = json(&[
        "plan",
        "qwen3-next-80b-a3b-instruct",
        "-tp",
        "2",
        "--gpu",
        "h200-141gb",
        "--speculative-config",
        r#"{"method":"qwen3_next_mtp","num_speculative_tokens":2}"#,
    ]);
    assert_eq!(code, 0);
}

/// Issue 19, items 18 and 19: a message names the input that is at fault (the one given, not
/// an example's or a default), quotes at most a short prefix of a long text, quotes an empty
/// one, and MODEL reads only regular files and says when a catalog id shadows a local path.
#[test]
fn messages_name_the_input_at_fault_and_quote_briefly() {
    // The example's 131,072 tokens, refused by a smaller model, are the example's.
    let r = headroom(&["plan", "--example", "s3-synthetic-tp4", "qwen3-8b"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr
            .starts_with("error: --max-model-len: User-specified max_model_len (131072)"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr
            .contains("comes from the example s3-synthetic-tp4, not from an input"),
        "{}",
        r.stderr
    );
    // Given by the user, it is theirs: no such clause.
    let r = headroom(&[
        "plan",
        "--example",
        "s3-synthetic-tp4",
        "qwen3-8b",
        "--max-model-len",
        "100000",
    ]);
    assert!(!r.stderr.contains("comes from the example"), "{}", r.stderr);
    // The batched tokens the user lowered, not the example's sequences.
    let r = headroom(&[
        "plan",
        "--example",
        "s2-unified-gate",
        "--max-num-batched-tokens",
        "1",
    ]);
    assert!(
        r.stderr.starts_with("error: --max-num-batched-tokens: "),
        "{}",
        r.stderr
    );
    let r = headroom(&[
        "plan",
        "llama-3.1-8b-instruct",
        "--max-num-seqs",
        "4096",
        "--max-num-batched-tokens",
        "16384",
        "--gpu",
        "h100-sxm-80gb",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    // vLLM's own split of 32 stages is at fault, not a partition nobody gave.
    let r = headroom(&["plan", "deepseek-v4-flash", "-pp", "32"]);
    assert!(
        r.stderr
            .starts_with("error: --pipeline-parallel-size: 32: in vLLM's even split"),
        "{}",
        r.stderr
    );
    // A partition the user gave is theirs.
    let r = headroom(&[
        "plan",
        "deepseek-v4-flash",
        "-pp",
        "2",
        "--pp-layer-partition",
        "1,42",
    ]);
    assert!(
        r.stderr
            .starts_with("error: --pp-layer-partition: stage 0 holds no DeepSeek-V4 layer"),
        "{}",
        r.stderr
    );
    // Long texts come back as a prefix and a size; an empty one is quoted.
    let long = "q".repeat(100_000);
    let r = headroom(&["plan", &long]);
    assert!(r.stderr.len() < 600, "{} bytes", r.stderr.len());
    assert!(r.stderr.contains("... (100000 bytes)"), "{}", r.stderr);
    let r = headroom(&["plan", "llama-3.1-8b-instruct", &format!("--{long}"), "1"]);
    assert!(r.stderr.len() < 300, "{} bytes", r.stderr.len());
    let r = headroom(&["plan", ""]);
    assert!(r.stderr.contains("and \"\" cannot be read"), "{}", r.stderr);
    let dir = temp_dir("quoting");
    let config = dir.join("long-name.json");
    let long_type = "y".repeat(200_000);
    std::fs::write(
        &config,
        format!(r#"{{"architectures":["LlamaForCausalLM"],"model_type":"{long_type}","hidden_size":4096,"intermediate_size":14336,"num_hidden_layers":32,"num_attention_heads":32,"num_key_value_heads":8,"vocab_size":128256,"max_position_embeddings":131072,"torch_dtype":"bfloat16"}}"#),
    )
    .unwrap();
    let r = headroom(&["plan", config.to_str().unwrap()]);
    assert!(
        r.stdout.len() < 40_000,
        "{} bytes of output",
        r.stdout.len()
    );
    assert!(
        r.stdout.contains("... (200000 bytes)"),
        "{}",
        &r.stdout[..300]
    );
    // A catalog id beside a directory of the same name: the catalog, said; ./id reads it.
    let local = dir.join("qwen3-8b");
    std::fs::create_dir_all(&local).unwrap();
    std::fs::write(local.join("config.json"), "{").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_headroom"))
        .args(["plan", "qwen3-8b"])
        .current_dir(&dir)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("note: MODEL \"qwen3-8b\" is read as the catalog row; a path of that name is here too: give ./qwen3-8b"), "{stderr}");
    let out = Command::new(env!("CARGO_BIN_EXE_headroom"))
        .args(["plan", "./qwen3-8b"])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("./qwen3-8b/config.json"));
    // A device (or a named pipe) is refused at once, not read.
    let r = headroom(&["plan", "/dev/zero"]);
    assert!(r.stderr.contains("is not a regular file"), "{}", r.stderr);
}

/// Issue 19, item 16: the kv-pin answer on unequal stages is the largest that starts (the
/// smaller stage allocates the minimum block count, less than the pin), and a balanced split
/// the model refuses is the solver's failure, said under --for.
#[test]
fn solvers_answer_what_the_plan_confirms() {
    let base = ["-tp", "4", "-pp", "2", "--gpu", "h200-141gb"];
    let (code, v) = json(&with(&["solve", "deepseek-r1", "--for", "kv-pin"], &base));
    assert_eq!(code, 0);
    let pin = v["solve"]["value"].as_u64().unwrap();
    // Before: 59,587,825,120, while plans started up to 61,736,620,031.
    assert!(pin > 61_500_000_000 && pin < 61_736_620_031, "{pin}");
    let starts = |pin: u64| {
        headroom(&with(
            &[
                "plan",
                "deepseek-r1",
                "--kv-cache-memory-bytes",
                &pin.to_string(),
            ],
            &base,
        ))
        .code
    };
    assert_eq!(starts(pin), 0);
    assert_eq!(starts(pin + 200_000_000), 1);
    let r = headroom(&[
        "solve",
        "deepseek-v4-flash",
        "-pp",
        "2",
        "--gpu",
        "b200-192gb",
        "--for",
        "pp-partition:0:42",
    ]);
    assert_eq!(r.code, 2, "{}", r.stdout);
    assert!(
        r.stderr.starts_with("error: --for: the balanced split 1,42 is one this model refuses: stage 0 holds no DeepSeek-V4 layer"),
        "{}",
        r.stderr
    );
}
