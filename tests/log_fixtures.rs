//! Real vLLM startup logs (tests/fixtures/logs, each citing the public thread it was copied
//! from) read by the log importer: every reading it should find, with the number and unit as
//! printed and the line it is on (counted from the first line below the headers), the release
//! where the excerpt states it, and the figures that become measured inputs.

use headroom::calc::input::Input;
use headroom::import::log::read;

/// The text below the `# source:` / `# what:` headers (README: only leading header lines).
fn body(name: &str) -> String {
    let path = format!("{}/tests/fixtures/logs/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut lines = text.lines().peekable();
    let mut headers = 0;
    while lines
        .peek()
        .is_some_and(|l| l.starts_with("# source:") || l.starts_with("# what:"))
    {
        lines.next();
        headers += 1;
    }
    assert_eq!(headers, 2, "{name}: needs # source: and # what: headers");
    lines.collect::<Vec<_>>().join("\n")
}

type Expected = (
    &'static str,
    Option<&'static str>,
    &'static [(&'static str, f64, &'static str, usize)],
);

/// (file, release stated, readings as (key, value, unit, line)). Each value was checked
/// against the fixture's text.
const LOGS: &[Expected] = &[
    (
        "01-v0-medusa-gpu-blocks-cudagraph.log",
        None,
        &[
            ("model_loading", 13.4966, "GB", 5),
            ("model_loading", 4.4062, "GB", 6),
            ("num_gpu_blocks", 22839.0, "blocks", 7),
            ("num_cpu_blocks", 2048.0, "blocks", 7),
        ],
    ),
    (
        "02-v0-profiling-results-max-seq-len-error.log",
        None,
        &[
            ("model_loading", 14.9888, "GB", 1),
            ("memory_profiling", 2.89, "GiB", 2),
            ("num_gpu_blocks", 1478.0, "blocks", 3),
            ("num_cpu_blocks", 2048.0, "blocks", 3),
            ("max_concurrency", 0.82, "x", 4),
            ("v0_capacity_error", 29000.0, "tokens", 5),
        ],
    ),
    (
        "03-v0-profiling-results-table.log",
        None,
        &[("memory_profiling", 53.29, "GiB", 1)],
    ),
    (
        "04-v0-memory-profiling-takes.log",
        None,
        &[
            ("model_loading", 7.9692, "GB", 1),
            ("memory_profiling", 0.0, "GiB", 2),
        ],
    ),
    (
        "05-v0-cuda-blocks-vision.log",
        None,
        &[
            ("memory_profiling", 14.65, "GiB", 1),
            ("num_gpu_blocks", 6001.0, "blocks", 3),
            ("num_cpu_blocks", 1638.0, "blocks", 3),
        ],
    ),
    (
        "06-v1-early-gpu-blocks-concurrency.log",
        None,
        &[
            ("model_loading", 67.7229, "GB", 1),
            ("num_gpu_blocks", 1381.0, "blocks", 7),
            ("max_concurrency", 10.79, "x", 8),
        ],
    ),
    (
        "07-v0-bracket-format-concurrency.log",
        None,
        &[
            ("model_loading", 3.3414, "GB", 2),
            ("memory_profiling", 2.2, "GiB", 3),
            ("num_gpu_blocks", 5148.0, "blocks", 6),
            ("num_cpu_blocks", 9362.0, "blocks", 6),
            ("max_concurrency", 41.18, "x", 7),
        ],
    ),
    (
        "08-v0-multiproc-tp-profiling.log",
        None,
        &[
            ("memory_profiling", 1.57, "GiB", 2),
            ("memory_profiling", 1.57, "GiB", 5),
        ],
    ),
    (
        "09-v0.8.5-model-loading-tp4.log",
        None,
        &[
            ("model_loading", 14.2474, "GiB", 5),
            ("model_loading", 14.2474, "GiB", 6),
            ("model_loading", 14.2474, "GiB", 7),
            ("model_loading", 14.2474, "GiB", 8),
        ],
    ),
    (
        "10-v0.8.5-kv-cache-cudagraph-oom.log",
        None,
        &[
            ("gpu_kv_cache_tokens", 198784.0, "tokens", 1),
            ("max_concurrency", 24.27, "x", 2),
        ],
    ),
    (
        "11-v1-enginecore-dp0-kv-cache-eager-omni.log",
        None,
        &[
            ("available_kv_cache", 100.43, "GiB", 2),
            ("gpu_kv_cache_tokens", 2925232.0, "tokens", 3),
            ("max_concurrency", 89.27, "x", 4),
        ],
    ),
    (
        "12-v1-enginecore-dp0-free-memory-traceback.log",
        None,
        &[("init_error", 3.22, "GiB", 7)],
    ),
    (
        "13-v0.9.2-free-memory-error.log",
        None,
        &[("init_error", 67.24, "GiB", 1)],
    ),
    (
        "14-v1-kv-capacity-error-fp8.log",
        None,
        &[
            ("available_kv_cache", 10.55, "GiB", 3),
            ("gpu_kv_cache_tokens", 230528.0, "tokens", 4),
            ("max_concurrency", 2.31, "x", 5),
            ("capacity_error", 221000.0, "tokens", 9),
        ],
    ),
    (
        "15-v0-late-cuda-blocks-cudagraph.log",
        None,
        &[
            ("model_loading", 0.2389, "GiB", 2),
            ("memory_profiling", 2.87, "GiB", 3),
            ("num_gpu_blocks", 5218.0, "blocks", 6),
            ("num_cpu_blocks", 7281.0, "blocks", 6),
            ("max_concurrency", 40.77, "x", 7),
        ],
    ),
    (
        "16-v1-lmcache-kv-cache-dp0.log",
        None,
        &[
            ("available_kv_cache", 6.51, "GiB", 1),
            ("gpu_kv_cache_tokens", 42656.0, "tokens", 2),
            ("max_concurrency", 1.3, "x", 3),
        ],
    ),
    (
        "17-v0.11.0-non-default-args-qwen3vl-tp8.log",
        Some("0.11.0"),
        &[],
    ),
    ("19-v0.14.0rc2-pp-non-default-args.log", Some("0.14.0"), &[]),
    (
        "20-v1-estimated-cudagraph-memory.log",
        None,
        &[
            ("cuda_graph_estimate", 0.26, "GiB", 1),
            ("available_kv_cache", 17.36, "GiB", 2),
            ("gpu_kv_cache_tokens", 188640.0, "tokens", 4),
            ("max_concurrency", 5.23, "x", 5),
        ],
    ),
    (
        "21-v1-available-kv-then-enginecore-failed.log",
        None,
        &[("available_kv_cache", 6.94, "GiB", 2)],
    ),
    (
        "22-v0.27.1-cudagraph-profiling-default.log",
        None,
        &[
            ("cuda_graph_estimate", 0.36, "GiB", 2),
            ("cuda_graph_estimate", 0.36, "GiB", 4),
            ("available_kv_cache", 6.87, "GiB", 5),
        ],
    ),
];

#[test]
fn every_fixture_is_listed_and_read_as_printed() {
    let dir = format!("{}/tests/fixtures/logs", env!("CARGO_MANIFEST_DIR"));
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".log"))
        .collect();
    files.sort();
    assert_eq!(files.len(), 22, "{files:?}");
    for f in &files {
        let listed = LOGS.iter().any(|(n, _, _)| n == f);
        // One fixture holds only progress bars: it must be refused by name, not read as empty.
        assert!(listed || f.starts_with("18-"), "{f} has no expectation");
    }
    for (name, release, readings) in LOGS {
        let l = read(&body(name)).unwrap_or_else(|e| panic!("{name}: {}", e.0));
        let got: Vec<(&str, f64, &str, usize)> = l
            .readings
            .iter()
            .map(|r| (r.key, r.value, r.unit, r.line))
            .collect();
        assert_eq!(&got, readings, "{name}");
        assert_eq!(l.vllm_version.as_deref(), *release, "{name}");
        assert!(l.conflicts.is_empty(), "{name}: {:?}", l.conflicts);
    }
}

#[test]
fn a_log_of_progress_bars_only_is_refused_by_name() {
    let e = read(&body("18-v1-cuda-graph-capture-progress-tp0.log")).unwrap_err();
    assert!(e.0.contains("no line Headroom reads"), "{}", e.0);
}

#[test]
fn the_printed_terms_and_ranks_are_kept() {
    let l = read(&body("14-v1-kv-capacity-error-fp8.log")).unwrap();
    let c = l.all("capacity_error").next().unwrap();
    assert_eq!(c.field("max_seq_len"), Some(221_000.0));
    assert_eq!(c.field("needed"), Some(10.12));
    assert_eq!(c.field("available"), Some(5.59));
    assert_eq!(c.field("estimated_max_model_len"), Some(122_080.0));

    let l = read(&body("13-v0.9.2-free-memory-error.log")).unwrap();
    let e = l.all("init_error").next().unwrap();
    assert_eq!(
        ["free", "total", "requested", "utilization"].map(|f| e.field(f)),
        [Some(67.24), Some(79.25), Some(71.33), Some(0.9)]
    );
    let inputs = l.inputs();
    assert!(inputs.contains(&(Input::Util, "0.9".into())), "{inputs:?}");

    let l = read(&body("09-v0.8.5-model-loading-tp4.log")).unwrap();
    let ranks: Vec<&str> = l
        .readings
        .iter()
        .filter_map(|r| r.rank.as_deref())
        .collect();
    assert_eq!(
        ranks,
        [
            "VllmWorker rank=0",
            "VllmWorker rank=2",
            "VllmWorker rank=1",
            "VllmWorker rank=3"
        ]
    );

    let l = read(&body("03-v0-profiling-results-table.log")).unwrap();
    let p = &l.readings[0];
    assert_eq!(
        [
            "total_gpu_memory",
            "model_weights",
            "non_torch_memory",
            "activation_peak"
        ]
        .map(|f| p.field(f)),
        [Some(79.22), Some(14.96), Some(1.79), Some(1.26)]
    );

    // Two loads in a row are a target and its drafter, not two launches.
    let l = read(&body("01-v0-medusa-gpu-blocks-cudagraph.log")).unwrap();
    assert!(
        l.notes.iter().any(|n| n.contains("second model")),
        "{:?}",
        l.notes
    );
}

#[test]
fn non_default_args_become_a_command() {
    let l = read(&body("19-v0.14.0rc2-pp-non-default-args.log")).unwrap();
    let c = headroom::import::replay::args_command(&l).unwrap();
    assert_eq!(
        c.flag("pipeline_parallel_size")
            .map(|v| v.to_string())
            .as_deref(),
        Some("3")
    );
    assert_eq!(
        c.flag("gpu_memory_utilization")
            .map(|v| v.to_string())
            .as_deref(),
        Some("0.97")
    );
    assert!(
        c.model
            .as_deref()
            .is_some_and(|m| m.contains("Qwen3-VL-30B-A3B")),
        "{:?}",
        c.model
    );
}

#[test]
fn the_logs_own_figures_follow_from_its_measured_pool() {
    // logs/16: a single-GPU Qwen3-14B run at --max-model-len 32768. From the pool the log
    // measured (6.51 GiB), vLLM's block arithmetic gives the tokens and concurrency it printed.
    let args: Vec<String> = [
        "plan",
        "qwen3-14b",
        "--log",
        "-",
        "--max-model-len",
        "32768",
        "--json",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let text = body("16-v1-lmcache-kv-cache-dp0.log");
    let o = headroom::cli::run_with_stdin(&args, &mut text.as_bytes());
    assert_eq!(o.code, 0, "{o:?}");
    let d: serde_json::Value = serde_json::from_str(&o.stdout).unwrap();
    assert_eq!(d["replica"]["kv_cache_tokens"], 42_656);
    let x = d["replica"]["max_concurrency"].as_f64().unwrap();
    assert_eq!(format!("{x:.2}"), "1.30");
    // The derived bytes per token bound Qwen3-14B's own (40 layers x 8 KV heads x 128 x 2 x 2 B).
    let per_token = d["derived"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["figure"] == "kv_bytes_per_token")
        .and_then(|r| r["value"].as_f64())
        .unwrap();
    assert!(
        (163_840.0..163_840.0 * 1.001).contains(&per_token),
        "{per_token}"
    );
}

#[test]
fn a_v0_profile_replays_to_its_gpu_blocks() {
    // logs/02: Llama-3.1-8B on an RTX 3090 under the V0 engine; its profile gives 2.89 GiB of
    // KV cache and it printed "# GPU blocks: 1478". At 2 MiB a block (32 layers x 8 KV heads x
    // 128 x 2 x 2 B x 16 tokens), the printed share gives 1479, within the ±3 blocks that its
    // two decimals leave open.
    let log = read(&body("02-v0-profiling-results-max-seq-len-error.log")).unwrap();
    let s = headroom::input::scenario(&{
        let mut st = headroom::input::query::UrlState::default();
        st.set(Input::Model, "llama-3.1-8b-instruct").unwrap();
        st
    })
    .unwrap();
    let p = headroom::calc::plan(&s).unwrap();
    let v = headroom::import::replay::v0_replay(&log, &p).unwrap();
    assert_eq!((v.bytes_per_block, v.blocks, v.spread), (2 << 20, 1479, 3));
    assert!(v.blocks.abs_diff(1478) <= v.spread);
    let c = headroom::import::replay::compare(&log, &p);
    let row = c
        .iter()
        .find(|c| c.figure == "num_gpu_blocks.v0_replay")
        .unwrap();
    assert_eq!((row.predicted, row.measured), (Some(1479.0), 1478.0));
}
