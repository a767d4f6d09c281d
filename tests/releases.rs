//! vLLM 0.10.2, 0.11.0, 0.11.2, 0.12.0 and 0.13.0: golden figures worked by hand from each
//! release's source (`/work/research/src/vllm-V/`, summarised in `research/releases.md`),
//! integer by integer as in `vllm-accounting.md` section 10, and the releases Headroom refuses.
//!
//! The scenario is the spec's Example A (Llama-3.1-70B, TP 4, 4 x H100, utilization 0.9,
//! 131,072 tokens) with its assumed runtime figures given as measurements: free at the snapshot
//! 83,418,546,176, weights 35,278,831,616 (from the config), other use 536,870,912, activation
//! peak 1,342,177,280, so `non_kv = 37,157,879,808`. CUDA graphs lie outside the budget in all
//! of these releases.

use headroom::calc::model::{LayerKind, Model};
use headroom::calc::scenario::{
    Gpu, KvCacheDtype, MaxLen, Measured, Parallel, SpecMethod, Speculative,
};
use headroom::calc::units::Bytes;
use headroom::calc::version::VllmVersion;
use headroom::calc::{plan, Plan, Scenario, Term};

const H100: u64 = 85_029_158_912;

fn given(b: u64) -> Option<Measured> {
    Some(Measured::new(b, "spec §10 assumption"))
}

fn llama70b() -> Model {
    let mut m = Model::example_dense();
    m.n_layers = 80;
    m.layers = vec![LayerKind::Full; 80];
    m.hidden_size = 8192;
    m.n_heads = 64;
    m.intermediate_size = 28672;
    m
}

fn example_a(version: &str) -> Scenario {
    let gpu = Gpu {
        id: "spec".into(),
        name: "spec GPU".into(),
        total: Bytes(H100),
        total_confirmed: true,
        unified_memory: false,
        compute_capability: (9, 0),
    };
    let mut s = Scenario::new(llama70b(), gpu);
    s.version = VllmVersion::parse(version).unwrap();
    s.gpus = 4;
    s.parallel = Parallel {
        tp: 4,
        ..Parallel::default()
    };
    s.engine.gpu_memory_utilization = Some(0.9);
    s.engine.max_model_len = MaxLen::Value(131_072);
    s.runtime.free_memory = given(83_418_546_176);
    s.runtime.non_torch = given(536_870_912);
    s.runtime.activation_peak = given(1_342_177_280);
    s
}

fn count(p: &Plan, line: &str) -> usize {
    p.log_lines.iter().filter(|l| *l == line).count()
}

fn worker(tp: u32) -> String {
    format!("(Worker_TP{tp} pid=P)")
}

/// The figures every release 0.10.2 to 0.13.0 shares on Example A.
///
/// `gpu_worker.py::Worker.init_device`: `requested_memory = total x util =
/// 76,526,243,020.8` (a float); `determine_available_memory`: `int(76,526,243,020.8 -
/// 37,157,879,808) = 39,368,363,212` (0.14's `ceil` gives ...213). `kv_cache_interface.py`:
/// page `2 x 16 x 2 heads x 128 x 2 B = 16,384`, 80 layers: 1,310,720 B a block.
/// `kv_cache_utils.py::get_num_blocks`: `39,368,363,212 // 16,384 // 80 = 30,035`; per request
/// `cdiv(131,072, 16) = 8,192` blocks; `30,035 / 8,192 = 3.666...` -> `3.67x`; tokens
/// `30,035 // 1 x 16 = 480,560`.
fn shared_figures(p: &Plan) {
    assert!(p.starts(), "{:?}", p.first_failure());
    let r0 = &p.ranks[0];
    assert_eq!(r0.weights.0, 35_278_831_616);
    assert_eq!(r0.line(Term::Budget).unwrap().bytes, 76_526_243_020);
    assert_eq!(r0.available_kv, 39_368_363_212);
    assert_eq!(r0.bytes_per_block, 1_310_720);
    let r = p.replica.as_ref().unwrap();
    assert_eq!(r.num_blocks, 30_035);
    assert_eq!(r.blocks_per_request, 8_192);
    assert_eq!(r.kv_cache_tokens, 480_560);
    assert_eq!(p.ranks[0].kv_pool.0, 30_035 * 1_310_720);
    assert_eq!(p.gpu_memory_utilization, 0.9);
}

#[test]
fn example_a_under_0_13_and_0_12_logs_once_with_fixed_places() {
    for v in ["0.13", "0.13.0", "0.12", "0.12.0"] {
        let p = plan(&example_a(v)).unwrap();
        shared_figures(&p);
        // load_model: info_once("Model loading took %.4f GiB memory and %.6f seconds").
        assert_eq!(
            count(
                &p,
                &format!(
                    "{} Model loading took 32.8560 GiB memory and T seconds",
                    worker(0)
                )
            ),
            1,
            "{v}: {:#?}",
            p.log_lines
        );
        // determine_available_memory: info_once("Available KV cache memory: %.2f GiB").
        let avail = format!("{} Available KV cache memory: 36.66 GiB", worker(0));
        assert_eq!(count(&p, &avail), 1, "{v}: {:#?}", p.log_lines);
        assert!(
            !p.log_lines.iter().any(|l| l.starts_with(&worker(1))),
            "{v}"
        );
        // _report_kv_cache_config: both info_once.
        assert_eq!(
            count(&p, "(EngineCore pid=P) GPU KV cache size: 480,560 tokens"),
            1
        );
        assert_eq!(
            count(
                &p,
                "(EngineCore pid=P) Maximum concurrency for 131,072 tokens per request: 3.67x"
            ),
            1,
            "{v}"
        );
    }
}

#[test]
fn example_a_under_0_11_2_logs_the_concurrency_per_worker() {
    for v in ["0.11", "0.11.2"] {
        let p = plan(&example_a(v)).unwrap();
        assert_eq!(p.version.to_string(), "0.11.2");
        shared_figures(&p);
        assert_eq!(
            count(
                &p,
                &format!(
                    "{} Model loading took 32.8560 GiB memory and T seconds",
                    worker(0)
                )
            ),
            1
        );
        assert_eq!(
            count(
                &p,
                &format!("{} Available KV cache memory: 36.66 GiB", worker(0))
            ),
            1
        );
        // _report_kv_cache_config: the tokens info_once, the concurrency plain logger.info
        // for each of the four workers' configs.
        assert_eq!(
            count(&p, "(EngineCore pid=P) GPU KV cache size: 480,560 tokens"),
            1
        );
        assert_eq!(
            count(
                &p,
                "(EngineCore pid=P) Maximum concurrency for 131,072 tokens per request: 3.67x"
            ),
            4,
            "{:#?}",
            p.log_lines
        );
    }
}

#[test]
fn example_a_under_0_11_0_and_0_10_2_logs_every_worker() {
    for v in ["0.11.0", "0.10", "0.10.2"] {
        let p = plan(&example_a(v)).unwrap();
        shared_figures(&p);
        for tp in 0..4 {
            // load_model: logger.info("Model loading took %.4f GiB and %.6f seconds").
            assert_eq!(
                count(
                    &p,
                    &format!(
                        "{} Model loading took 32.8560 GiB and T seconds",
                        worker(tp)
                    )
                ),
                1,
                "{v}: {:#?}",
                p.log_lines
            );
            assert_eq!(
                count(
                    &p,
                    &format!("{} Available KV cache memory: 36.66 GiB", worker(tp))
                ),
                1
            );
        }
        // get_kv_cache_config(_from_groups): each worker's own pair, before the minimum.
        assert_eq!(
            count(&p, "(EngineCore pid=P) GPU KV cache size: 480,560 tokens"),
            4
        );
        assert_eq!(
            count(
                &p,
                "(EngineCore pid=P) Maximum concurrency for 131,072 tokens per request: 3.67x"
            ),
            4
        );
        assert!(
            !p.log_lines.iter().any(|l| l.contains("GiB memory and")),
            "{v}"
        );
    }
}

#[test]
fn the_0_14_budget_is_one_byte_more_on_the_same_inputs() {
    let p = plan(&example_a("0.14")).unwrap();
    assert_eq!(p.ranks[0].line(Term::Budget).unwrap().bytes, 76_526_243_021);
    assert_eq!(p.ranks[0].available_kv, 39_368_363_213);
    assert_eq!(p.replica.unwrap().num_blocks, 30_035);
}

/// `Worker.init_device`, 0.10.2 to 0.13.0: `f"Free memory on device ({GiB(free)}/{GiB(total)}
/// GiB) on startup is less than desired GPU memory utilization ({util}, {GiB(requested)}
/// GiB). ..."` with `GiB = lambda b: round(b / GiB_bytes, 2)`: no device name.
#[test]
fn the_init_error_names_no_device_before_0_14() {
    for v in ["0.10.2", "0.11.0", "0.11.2", "0.12", "0.13"] {
        let mut s = example_a(v);
        s.runtime.free_memory = given(75_161_927_680);
        let p = plan(&s).unwrap();
        let c = p.first_failure().unwrap();
        assert_eq!(
            c.vllm_error.as_deref(),
            Some("Free memory on device (70.0/79.19 GiB) on startup is less than desired GPU memory utilization (0.9, 71.27 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes."),
            "{v}"
        );
    }
    let mut s = example_a("0.14");
    s.runtime.free_memory = given(75_161_927_680);
    let e = plan(&s)
        .unwrap()
        .first_failure()
        .unwrap()
        .vllm_error
        .clone()
        .unwrap();
    assert!(
        e.starts_with("Free memory on device cuda:0 (70.0/79.19 GiB)"),
        "{e}"
    );
}

/// `kv_cache_utils.py::check_enough_kv_cache_memory`, per worker: needed = the sum of the
/// worker's 80 layers' `max_memory_usage_bytes` = `80 x 8,192 x 16,384 = 10,737,418,240`
/// (10.00 GiB) against 8 GiB; `estimate_max_model_len`'s binary search: 6,553 blocks of 16
/// tokens fit, so 104,848 (no null block before 0.29).
#[test]
fn the_capacity_error_per_release() {
    let tail = "Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.";
    let see =
        " See https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details.";
    for v in ["0.10.2", "0.11.0", "0.11.2", "0.12", "0.13"] {
        let mut s = example_a(v);
        s.runtime.available_kv = given(8_589_934_592);
        let p = plan(&s).unwrap();
        let e = p.first_failure().unwrap().vllm_error.clone().unwrap();
        let url = if v == "0.13" { see } else { "" };
        assert_eq!(
            e,
            format!("To serve at least one request with the models's max seq len (131072), (10.00 GiB KV cache is needed, which is larger than the available KV cache memory (8.00 GiB). Based on the available memory, the estimated maximum model length is 104848. {tail}{url}"),
            "{v}"
        );
        // Less than one block: no estimate, and "{estimated_msg} " leaves two spaces.
        s.runtime.available_kv = given(1_000_000);
        let e = plan(&s)
            .unwrap()
            .first_failure()
            .unwrap()
            .vllm_error
            .clone()
            .unwrap();
        assert_eq!(
            e,
            format!("To serve at least one request with the models's max seq len (131072), (10.00 GiB KV cache is needed, which is larger than the available KV cache memory (0.00 GiB).  {tail}{url}"),
            "{v}"
        );
        s.runtime.available_kv = None;
        s.runtime.weights = given(70 * (1 << 30));
        s.runtime.free_memory = given(H100 - (1 << 20));
        let c = plan(&s).unwrap().first_failure().cloned().unwrap();
        assert_eq!(
            c.vllm_error.unwrap(),
            format!("No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine.{url}"),
            "{v}"
        );
    }
}

/// 0.11.0 and 0.10.2 set every worker's num_blocks to the minimum without shrinking its
/// tensors (`get_kv_cache_configs`: "We do not need to shrink the tensor size"): each rank
/// allocates its own block count. 0.11.2 shrinks them ("Shrink tensor size proportionally").
#[test]
fn before_0_11_2_every_rank_allocates_its_own_blocks() {
    for (v, shrinks) in [
        ("0.11.0", false),
        ("0.10.2", false),
        ("0.11.2", true),
        ("0.13", true),
    ] {
        let mut s = example_a(v);
        s.gpus = 8;
        s.parallel.pp = 2;
        s.parallel.pp_layer_partition = Some(vec![41, 39]);
        let p = plan(&s).unwrap();
        assert!(p.starts(), "{v}: {:?}", p.first_failure());
        let n = p.replica.as_ref().unwrap().num_blocks;
        let differs = p.ranks.iter().any(|r| r.num_blocks_own != n);
        assert!(differs, "{v}: the two stages hold different block counts");
        for r in &p.ranks {
            let blocks = if shrinks { n } else { r.num_blocks_own };
            assert_eq!(
                r.kv_pool.0,
                blocks * r.bytes_per_block,
                "{v} rank {}",
                r.rank
            );
        }
        // The per-worker lines of 0.11.0 / 0.10.2 quote each worker's own tokens.
        let tokens: Vec<&String> = p
            .log_lines
            .iter()
            .filter(|l| l.contains("GPU KV cache size"))
            .collect();
        if shrinks {
            assert_eq!(tokens.len(), 1, "{v}");
        } else {
            assert_eq!(tokens.len(), 8, "{v}");
            let own = p.ranks.iter().map(|r| r.num_blocks_own).max().unwrap();
            assert!(tokens
                .iter()
                .any(|l| l.ends_with(&format!("{} tokens", grouped(own * 16)))));
        }
    }
}

fn grouped(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// 0.10.2's `Worker.init_device` takes the snapshot before `init_worker_distributed_environment`:
/// NCCL's memory is not in the pre-snapshot use but in the non-torch increase, inside the budget.
#[test]
fn nccl_counts_against_the_budget_in_0_10_2() {
    let estimate = |v: &str| {
        let mut s = example_a(v);
        s.runtime.free_memory = None;
        s.runtime.non_torch = None;
        let p = plan(&s).unwrap();
        let r = &p.ranks[0];
        (
            r.line(Term::PreSnapshot).unwrap().bytes,
            r.line(Term::OtherConsumption).unwrap().bytes,
        )
    };
    assert_eq!(estimate("0.10.2"), (536_870_912, 1_073_741_824));
    assert_eq!(estimate("0.11.0"), (1_073_741_824, 536_870_912));
}

/// `--kv-cache-memory-bytes` (from 0.10.2): the worker's sentence, plain `logger.info` on every
/// worker; 0.10.2 and 0.11.0 print the free memory unrounded, "GiB" unspaced and "does does".
#[test]
fn the_pinned_pool_sentence_per_release() {
    let tail = "Only use kv_cache_memory_bytes config when you want manual control of KV cache memory size. If OOM'ed, check the difference of initial free memory between the current run and the previous run where kv_cache_memory_bytes is suggested and update it correspondingly.";
    for (v, body) in [
        ("0.11.0", "Initial free memory 77.6895751953125 GiB, reserved 30.00GiB memory for KV Cache as specified by kv_cache_memory_bytes config and skipped memory profiling. This does does not respect the gpu_memory_utilization config."),
        ("0.10.2", "Initial free memory 77.6895751953125 GiB, reserved 30.00GiB memory for KV Cache as specified by kv_cache_memory_bytes config and skipped memory profiling. This does does not respect the gpu_memory_utilization config."),
        ("0.11.2", "Initial free memory 77.69 GiB, reserved 30.00 GiB memory for KV Cache as specified by kv_cache_memory_bytes config and skipped memory profiling. This does not respect the gpu_memory_utilization config."),
        ("0.13", "Initial free memory 77.69 GiB, reserved 30.00 GiB memory for KV Cache as specified by kv_cache_memory_bytes config and skipped memory profiling. This does not respect the gpu_memory_utilization config."),
    ] {
        let mut s = example_a(v);
        s.engine.kv_cache_memory_bytes = Some(30 << 30);
        let p = plan(&s).unwrap();
        assert!(p.starts(), "{v}: {:?}", p.first_failure());
        for tp in 0..4 {
            assert_eq!(count(&p, &format!("{} {body} {tail}", worker(tp))), 1, "{v}: {:#?}", p.log_lines);
        }
        // 30 GiB // 1,310,720 = 24,576 blocks.
        assert_eq!(p.replica.as_ref().unwrap().num_blocks, 24_576);
    }
}

/// `EngineArgs._set_default_args` (0.10.2, 0.11.0) sets the API server's 8,192 with no clamp to
/// `max_num_seqs x max_model_len`; 0.11.2 clamps it (`min(1,024 x 4, 8,192) = 4,096`).
/// Graph sizes: 0.11.0's `[1, 2, 4] + range(8, 513, 8)` is 67, 0.12's `[1, 2, 4] + 8..248 +
/// 256..512 step 16` is 51; 0.10.2 captures PIECEWISE only.
#[test]
fn batch_defaults_and_graph_sizes_per_release() {
    let mnbt = |v: &str| {
        let mut s = example_a(v);
        s.engine.max_model_len = MaxLen::Value(4);
        plan(&s).unwrap().settings.max_num_batched_tokens.value
    };
    assert_eq!(mnbt("0.11.0"), 8_192);
    assert_eq!(mnbt("0.10.2"), 8_192);
    assert_eq!(mnbt("0.11.2"), 4_096);
    assert_eq!(mnbt("0.13"), 4_096);
    let graphs = |v: &str| {
        let mut s = example_a(v);
        s.runtime.cuda_graph = None;
        plan(&s).unwrap().ranks[0]
            .line(Term::CudaGraphs)
            .unwrap()
            .bytes
    };
    let mib = 1 << 20;
    assert_eq!(graphs("0.11.0"), 67 * 2 * 6 * mib);
    assert_eq!(graphs("0.10.2"), 67 * 6 * mib);
    assert_eq!(graphs("0.12"), 51 * 2 * 6 * mib);
}

#[test]
fn releases_are_read_as_named() {
    let v = |s: &str| VllmVersion::parse(s).map(|v| v.to_string());
    assert_eq!(v("0.19.1").unwrap(), "0.19");
    assert_eq!(v("0.11").unwrap(), "0.11.2");
    assert_eq!(v("v0.11.0").unwrap(), "0.11.0");
    assert_eq!(v("0.10").unwrap(), "0.10.2");
    assert_eq!(v("0.12").unwrap(), "0.12");
    for (s, says) in [
        ("0.11.1", "0.11.1 was not read"),
        ("0.10.1", "only 0.10.2 of the 0.10 series"),
        ("0.12.1", "only 0.12.0 was"),
        ("0.9", "snapshot is taken before NCCL"),
        ("0.9.2", "no kv-cache-memory-bytes"),
        ("0.8.5", "no free-memory check at start"),
        ("0.8", "turns sliding windows into full attention"),
        ("0.7", "V0 engine only"),
    ] {
        let e = v(s).unwrap_err();
        assert!(e.contains(says), "{s}: {e}");
    }
    let all: Vec<String> = VllmVersion::releases().map(|r| r.to_string()).collect();
    assert_eq!(
        &all[all.len() - 5..],
        ["0.13", "0.12", "0.11.2", "0.11.0", "0.10.2"]
    );
    for r in VllmVersion::releases() {
        assert_eq!(VllmVersion::parse(&r.to_string()), Ok(r));
        assert!(r.is_modelled());
    }
}

#[test]
fn what_is_not_modelled_before_0_14_is_refused_by_name() {
    let err = |s: &Scenario| plan(s).unwrap_err().to_string();
    let mut s = example_a("0.13");
    s.engine.max_model_len = MaxLen::Auto;
    let e = err(&s);
    assert!(e.contains("vLLM 0.13 has no auto-fit"), "{e}");

    let mut s = example_a("0.12");
    s.model.layers[0] = LayerKind::Sliding { window: 4096 };
    let e = err(&s);
    assert!(
        e.contains("vLLM 0.12 ") && e.contains("sliding:4096"),
        "{e}"
    );

    let mut s = example_a("0.11.2");
    s.engine.speculative = Some(Speculative {
        method: SpecMethod::Ngram,
        num_speculative_tokens: 3,
        drafter_weights: None,
        draft_model: None,
        count_assumed: false,
    });
    let e = err(&s);
    assert!(
        e.contains("vLLM 0.11.2") && e.contains("speculative decoding"),
        "{e}"
    );

    let mut s = example_a("0.10.2");
    s.engine.kv_cache_dtype = KvCacheDtype::Fp8DsMla;
    let e = err(&s);
    assert!(e.contains("vLLM 0.10.2 has no fp8_ds_mla"), "{e}");

    let mut s = example_a("0.11.0");
    s.gpu.unified_memory = true;
    let e = err(&s);
    assert!(
        e.contains("vLLM 0.11.0") && e.contains("MemAvailable"),
        "{e}"
    );
}
