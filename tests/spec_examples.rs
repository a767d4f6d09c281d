//! The three worked examples of the spec's section 10 (`vllm-accounting.md`), to the last
//! integer: every assumed runtime figure is given as a measurement, the rest is `calc::plan`.

use headroom::calc::model::{LayerKind, Mla, Model};
use headroom::calc::scenario::{Gpu, KvCacheDtype, MaxLen, Measured, Parallel, SpecMethod};
use headroom::calc::units::Bytes;
use headroom::calc::{plan, Plan, Scenario, Term};

const H100: u64 = 85_029_158_912;
const H200: u64 = 150_118_055_936;

fn gpu(total: u64, cc: u32) -> Gpu {
    Gpu {
        id: "spec".into(),
        name: "spec GPU".into(),
        total: Bytes(total),
        total_confirmed: true,
        unified_memory: false,
        compute_capability: (cc, 0),
    }
}

fn given(b: u64) -> Option<Measured> {
    Some(Measured::new(b, "spec §10 assumption"))
}

fn rank0_line(p: &Plan, t: Term) -> i128 {
    p.ranks[0].line(t).expect("line").bytes
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

#[test]
fn example_a_llama_70b_tp4() {
    let mut s = Scenario::new(llama70b(), gpu(H100, 9));
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
    s.runtime.cuda_graph = given(629_145_600);
    let p = plan(&s).unwrap();
    assert!(p.starts(), "{:?}", p.first_failure());
    // Step 3: weights from the config, exactly.
    assert_eq!(p.ranks[0].weights.0, 35_278_831_616);
    assert_eq!(rank0_line(&p, Term::Budget), 76_526_243_021);
    assert_eq!(p.ranks[0].available_kv, 38_739_217_613);
    assert_eq!(p.ranks[0].page_size, 16_384);
    assert_eq!(p.ranks[0].bytes_per_block, 1_310_720);
    let r = p.replica.as_ref().unwrap();
    assert_eq!(r.num_blocks, 29_555);
    assert_eq!(p.ranks[0].kv_pool.0, 38_738_329_600);
    assert_eq!(r.blocks_per_request, 8_192);
    assert_eq!(r.kv_cache_tokens, 472_880);
    assert!(p.log_lines.iter().any(|l| l == "(EngineCore pid=P) GPU KV cache size: 472,880 tokens, Maximum concurrency for 131,072 tokens per request: 3.61x"), "{:#?}", p.log_lines);
    assert!(p
        .log_lines
        .iter()
        .any(|l| l.ends_with("Model loading took 32.86 GiB memory and T seconds")));
    assert!(p
        .log_lines
        .iter()
        .any(|l| l.ends_with("Available KV cache memory: 36.08 GiB")));
    // Step 5's graph log: d = 629,145,600 / total.
    assert!(p.log_lines.iter().any(|l| l.ends_with("The current --gpu-memory-utilization=0.9000 is equivalent to --gpu-memory-utilization=0.8926 without CUDA graph memory profiling. To maintain the same effective KV cache size as before, increase --gpu-memory-utilization to 0.9074. To disable, set VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0.")), "{:#?}", p.log_lines);
    // Step 10: the suggestion after graph capture, the graphs counted twice as vLLM codes it.
    let suggestion = p
        .log_lines
        .iter()
        .find(|l| l.contains("Replace gpu_memory_utilization config"))
        .expect("the suggestion log");
    assert!(
        suggestion.contains("Desired GPU memory utilization is (0.9, 71.27 GiB)")
            && suggestion.contains(
                "`--kv-cache-memory=37952785613` (35.35 GiB) to fit into requested memory"
            )
            && suggestion.contains(
                "`--kv-cache-memory=44845088768` (41.77 GiB) to fully utilize gpu memory"
            )
            && suggestion.ends_with("Current kv cache memory in use is 36.08 GiB."),
        "{suggestion}"
    );
}

#[test]
fn example_a_max_len_estimate_with_8_gib() {
    let mut s = Scenario::new(llama70b(), gpu(H100, 9));
    s.gpus = 4;
    s.parallel = Parallel {
        tp: 4,
        ..Parallel::default()
    };
    s.engine.max_model_len = MaxLen::Value(131_072);
    s.runtime.available_kv = given(8_589_934_592);
    let mut m = s.model.clone();
    m.max_position_embeddings = 1 << 20;
    s.model = m;
    s.engine.max_model_len = MaxLen::Value(1 << 20);
    let p = plan(&s).unwrap();
    let c = p.first_failure().unwrap();
    let e = c.vllm_error.as_ref().unwrap();
    assert!(
        e.contains("the estimated maximum model length is 104832."),
        "{e}"
    );
}

fn deepseek_v3() -> Model {
    let mut m = Model::example_dense();
    m.n_layers = 61;
    m.layers = vec![LayerKind::Mla; 61];
    m.hidden_size = 7168;
    m.n_heads = 128;
    m.n_kv_heads = 128;
    m.mla = Some(Mla {
        kv_lora_rank: 512,
        qk_rope_head_dim: 64,
        qk_nope_head_dim: 128,
        v_head_dim: 128,
        q_lora_rank: Some(1536),
    });
    m.max_position_embeddings = 163_840;
    m.mtp_layers = 1;
    m.mtp_draft = headroom::calc::model::MtpDraft::Mapped;
    m
}

fn example_b(dtype: KvCacheDtype) -> Scenario {
    let mut s = Scenario::new(deepseek_v3(), gpu(H200, 9));
    s.gpus = 8;
    s.parallel = Parallel {
        tp: 8,
        ..Parallel::default()
    };
    s.engine.kv_cache_dtype = dtype;
    s.runtime.free_memory = given(147_970_572_288);
    s.runtime.weights = given(85_176_107_008);
    s.runtime.non_torch = given(1_073_741_824);
    s.runtime.activation_peak = given(3_758_096_384);
    s.runtime.cuda_graph = given(1_288_490_189);
    s
}

#[test]
fn example_b_deepseek_v3_tp8_mla() {
    let p = plan(&example_b(KvCacheDtype::Auto)).unwrap();
    assert_eq!(rank0_line(&p, Term::Budget), 138_108_611_462);
    assert_eq!(p.ranks[0].available_kv, 46_812_176_057);
    assert_eq!(p.ranks[0].page_size, 18_432);
    assert_eq!(p.ranks[0].bytes_per_block, 1_124_352);
    let r = p.replica.as_ref().unwrap();
    assert_eq!(r.num_blocks, 41_634);
    assert_eq!(r.kv_cache_tokens, 666_144);
    assert!(p
        .log_lines
        .iter()
        .any(|l| l.ends_with("Available KV cache memory: 43.6 GiB")));
    assert!(p.log_lines.iter().any(|l| l == "(EngineCore pid=P) GPU KV cache size: 666,144 tokens, Maximum concurrency for 163,840 tokens per request: 4.07x"));
}

#[test]
fn example_b_fp8_kv_uses_flashmla_block_64() {
    let p = plan(&example_b(KvCacheDtype::Fp8)).unwrap();
    assert_eq!(p.ranks[0].page_size, 36_864);
    assert_eq!(p.ranks[0].bytes_per_block, 2_248_704);
    let r = p.replica.as_ref().unwrap();
    assert_eq!(r.num_blocks, 20_817);
    assert_eq!(r.blocks_per_request, 2_560);
    assert_eq!(r.kv_cache_tokens, 1_332_288);
}

#[test]
fn example_b_mtp_adds_a_layer_on_the_last_stage() {
    let mut s = example_b(KvCacheDtype::Auto);
    s.engine.speculative = Some(headroom::calc::scenario::Speculative {
        count_assumed: false,
        draft_model: None,
        method: SpecMethod::Mtp("deepseek_mtp"),
        num_speculative_tokens: 1,
        drafter_weights: given(0),
    });
    let p = plan(&s).unwrap();
    assert_eq!(p.ranks[0].bytes_per_block, 1_142_784);
    assert_eq!(p.replica.as_ref().unwrap().num_blocks, 40_963);
}

fn gpt_oss_120b() -> Model {
    let mut m = Model::example_dense();
    m.n_layers = 36;
    m.layers = (0..36)
        .map(|i| {
            if i % 2 == 0 {
                LayerKind::Sliding { window: 128 }
            } else {
                LayerKind::Full
            }
        })
        .collect();
    m.hidden_size = 2880;
    m.n_heads = 64;
    m.n_kv_heads = 8;
    m.head_dim = 64;
    m.head_dim_v = 64;
    m.max_position_embeddings = 131_072;
    m
}

fn example_c(len: u64) -> Plan {
    let mut s = Scenario::new(gpt_oss_120b(), gpu(H100, 9));
    s.engine.max_model_len = MaxLen::Value(len);
    s.runtime.free_memory = given(83_955_417_088);
    s.runtime.weights = given(69_127_766_016);
    s.runtime.non_torch = given(536_870_912);
    s.runtime.activation_peak = given(2_147_483_648);
    s.runtime.cuda_graph = given(805_306_368);
    plan(&s).unwrap()
}

#[test]
fn example_c_gpt_oss_120b_sliding_window() {
    let p = example_c(131_072);
    assert_eq!(rank0_line(&p, Term::Budget), 78_226_826_200);
    assert_eq!(p.ranks[0].available_kv, 5_609_399_256);
    assert_eq!(p.ranks[0].page_size, 32_768);
    assert_eq!(p.ranks[0].bytes_per_block, 589_824);
    let r = p.replica.as_ref().unwrap();
    assert_eq!(r.groups.len(), 2);
    assert_eq!(r.num_blocks, 9_510);
    assert_eq!(r.blocks_per_request, 9_225);
    assert_eq!(r.kv_cache_tokens, 135_121);
    assert!(p
        .log_lines
        .iter()
        .any(|l| l.ends_with("Available KV cache memory: 5.22 GiB")));
    assert!(p.log_lines.iter().any(|l| l == "(EngineCore pid=P) GPU KV cache size: 135,121 tokens, Maximum concurrency for 131,072 tokens per request: 1.03x"));
}

#[test]
fn example_c_at_32k_context() {
    let p = example_c(32_768);
    let r = p.replica.as_ref().unwrap();
    assert_eq!(r.blocks_per_request, 3_081);
    assert_eq!(r.kv_cache_tokens, 101_143);
}

fn example_c_version(v: &str) -> Plan {
    let mut s = Scenario::new(gpt_oss_120b(), gpu(H100, 9));
    s.version = headroom::calc::version::VllmVersion::parse(v).unwrap();
    s.engine.gpu_memory_utilization = Some(0.92);
    s.engine.max_model_len = MaxLen::Value(131_072);
    s.runtime.free_memory = given(83_955_417_088);
    s.runtime.weights = given(69_127_766_016);
    s.runtime.non_torch = given(536_870_912);
    s.runtime.activation_peak = given(2_147_483_648);
    s.runtime.cuda_graph = given(805_306_368);
    plan(&s).unwrap()
}

#[test]
fn example_c_under_older_rules() {
    // Spec §10 C step 8: before 0.26 the sliding bound used max_num_batched_tokens alone.
    let p = example_c_version("0.25");
    let r = p.replica.as_ref().unwrap();
    assert_eq!(r.blocks_per_request, 8_713);
    assert_eq!(r.kv_cache_tokens, 143_061);
    // Before 0.28 the capacity log was two lines.
    assert!(p
        .log_lines
        .iter()
        .any(|l| l == "(EngineCore pid=P) GPU KV cache size: 143,061 tokens"));
    assert!(p.log_lines.iter().any(
        |l| l == "(EngineCore pid=P) Maximum concurrency for 131,072 tokens per request: 1.09x"
    ));
    // Before 0.21 the token figure was num_blocks // groups x block_size.
    let p = example_c_version("0.20");
    assert_eq!(p.replica.as_ref().unwrap().kv_cache_tokens, 76_080);
}

#[test]
fn graphs_move_outside_the_budget_before_0_20() {
    let now = example_c_version("0.33");
    let old = example_c_version("0.19");
    // The same graph memory no longer comes out of the KV pool.
    assert_eq!(
        old.ranks[0].available_kv - now.ranks[0].available_kv,
        805_306_368
    );
    // And the default utilization was 0.90.
    let mut s = Scenario::new(gpt_oss_120b(), gpu(H100, 9));
    s.version = headroom::calc::version::VllmVersion::parse("0.19").unwrap();
    assert_eq!(plan(&s).unwrap().gpu_memory_utilization, 0.90);
}

#[test]
fn the_log_carries_the_error_vllm_raises_and_no_line_it_would_not_print() {
    // Llama-3.1-70B on one H100: loading runs out of memory, so no rank logs its loading time.
    let mut s = Scenario::new(llama70b(), gpu(H100, 9));
    s.engine.max_model_len = MaxLen::Value(131_072);
    let p = plan(&s).unwrap();
    let failed = p.first_failure().unwrap();
    assert_eq!(failed.phase, headroom::calc::Phase::Load);
    assert!(p
        .log_lines
        .iter()
        .any(|l| Some(l) == failed.vllm_error.as_ref()));
    assert!(!p.log_lines.iter().any(|l| l.contains("Model loading took")));
    // A capacity failure prints vLLM's ValueError text.
    let mut s = Scenario::new(Model::example_dense(), gpu(H100, 9));
    s.runtime.available_kv = given(1 << 30);
    let p = plan(&s).unwrap();
    let e = p.first_failure().unwrap().vllm_error.clone().unwrap();
    assert!(
        p.log_lines.iter().any(|l| l.ends_with(&e)),
        "{:#?}",
        p.log_lines
    );
}

#[test]
fn the_log_says_how_certain_its_figures_are() {
    use headroom::calc::Provenance;
    // Every runtime term of example C is given: the printed figures are measured-derived.
    let p = example_c(131_072);
    assert!(
        matches!(p.log_provenance, Provenance::Measured(_)),
        "{:?}",
        p.log_provenance
    );
    // Nothing given: the weights and budget are estimates, and so are the log's figures.
    let p = plan(&Scenario::new(Model::example_dense(), gpu(H100, 9))).unwrap();
    assert!(
        matches!(p.log_provenance, Provenance::Estimate(_)),
        "{:?}",
        p.log_provenance
    );
}
