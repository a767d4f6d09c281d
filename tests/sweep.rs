//! The sweeps (`calc::sweep`) on catalog scenarios, pinned point by point. The expected figures
//! are what the page's own sweep code (then in `ui/state.rs`) computed before it moved into
//! `calc`; 747 catalog scenarios agreed bit for bit between the two when they were compared.

use headroom::calc::scenario::{MaxLen, Parallel};
use headroom::calc::sweep::{self, LenPoint, PoolPoint};
use headroom::calc::{self, Scenario};
use headroom::catalog;
use headroom::io::url::{self, Field, UrlState};

fn scenario(model: &str, gpu: &str, tp: u32, pp: u32) -> Scenario {
    let m = catalog::model(model).expect("model row").model.clone();
    let g = catalog::gpu(gpu).expect("GPU row").gpu.clone();
    let mut s = Scenario::new(m, g);
    s.parallel = Parallel {
        tp,
        pp,
        ..Parallel::default()
    };
    s.gpus = tp * pp;
    s
}

/// One line per point, every field written exactly (floats as Rust's shortest round trip).
fn len_text(pts: &[LenPoint]) -> String {
    pts.iter()
        .map(|p| {
            format!(
                "{} {} {} {}\n",
                p.max_model_len,
                p.max_concurrency,
                if p.starts { "starts" } else { "fails" },
                p.provenance.label()
            )
        })
        .collect()
}

fn pool_text(pts: &[PoolPoint]) -> String {
    pts.iter()
        .map(|p| {
            format!(
                "{} {} {} {} {}\n",
                p.utilization,
                p.kv_pool,
                if p.sized { "sized" } else { "unsized" },
                p.fails_at.unwrap_or("starts"),
                p.provenance.label()
            )
        })
        .collect()
}

/// Checks both sweeps of a scenario against their pinned text.
fn check(s: &Scenario, len: &str, pool: &str) {
    assert_eq!(len_text(&sweep::len_sweep(s)), len);
    assert_eq!(pool_text(&sweep::pool_sweep(s)), pool);
}

/// llama-3.1-70b on four H100 SXM at max-model-len 32,768: a dense model, every point starts,
/// and the release's default (0.92) joins the fractions.
#[test]
fn a_dense_model_on_four_h100() {
    let mut s = scenario("llama-3.1-70b-instruct", "h100-sxm-80gb", 4, 1);
    s.engine.max_model_len = MaxLen::Value(32_768);
    check(&s, DENSE_LEN, DENSE_POOL);
}

/// deepseek-v3 on eight H200 (MLA): up to 0.62 no pool is sized; at 0.50 and 0.54 KV sizing
/// has nothing left, at 0.58 and 0.62 too little for one request. Its limit, 163,840, is not
/// a power of two and joins the lengths.
#[test]
fn an_mla_model_on_eight_h200() {
    let s = scenario("deepseek-v3", "h200-141gb", 8, 1);
    check(&s, MLA_LEN, MLA_POOL);
}

/// qwen3-next-80b on 2 x 2 A100 80 GB: linear-attention hybrid over two stages; at 0.50 one
/// request does not fit.
#[test]
fn a_hybrid_model_over_two_stages() {
    let s = scenario("qwen3-next-80b-a3b-instruct", "a100-sxm4-80gb", 2, 2);
    check(&s, HYBRID_LEN, HYBRID_POOL);
}

/// Seed 002's unified-memory gate: the pool is pinned in bytes (the same at every fraction),
/// long requests do not start, and at 0.98 the init check fails.
#[test]
fn the_unified_gate_example() {
    let e = catalog::examples::example("s2-unified-gate").unwrap();
    check(&e.scenario, GATE_LEN, GATE_POOL);
}

/// Seed 000's three cards: KV sizing has nothing at any fraction. Failing lengths stay in the
/// concurrency sweep (issue 19, item 6): at every length but the example's own, KV sizing has
/// nothing (0); at its own 1,048,576 the capacity check fails with the share of one request
/// the pool holds (vLLM's available / needed memory).
#[test]
fn the_three_cards_example() {
    let e = catalog::examples::example("s1-three-cards").unwrap();
    check(&e.scenario, S1_LEN, S1_POOL);
}

const S1_LEN: &str = "\
1024 0 fails estimate\n\
2048 0 fails estimate\n\
4096 0 fails estimate\n\
8192 0 fails estimate\n\
16384 0 fails estimate\n\
32768 0 fails estimate\n\
65536 0 fails estimate\n\
131072 0 fails estimate\n\
262144 0 fails estimate\n\
524288 0 fails estimate\n\
1048576 0.9707793337185991 fails estimate\n\
";

#[test]
fn the_pool_sweep_shows_the_kv_memory_where_the_start_fails() {
    let mut st = UrlState::default();
    st.set(Field::Model, "llama-3.1-70b-instruct").unwrap();
    st.set(Field::Tp, "4").unwrap();
    let pts = sweep::pool_sweep(&url::scenario(&st).unwrap());
    let failing: Vec<&PoolPoint> = pts.iter().filter(|p| p.fails_at.is_some()).collect();
    assert!(!failing.is_empty() && failing.len() < pts.len());
    // Each point's phase is the one its own plan stops at.
    let mut s = url::scenario(&st).unwrap();
    for p in &pts {
        s.engine.gpu_memory_utilization = Some(p.utilization);
        let plan = calc::plan(&s).unwrap();
        assert_eq!(p.fails_at, plan.first_failure().map(|c| c.phase.label()));
        assert_eq!(p.sized, plan.replica.is_some());
    }
    // Below the fraction where one request fits, KV sizing still had memory: the point
    // shows it (not 0), and the curve rises with the fraction.
    let capacity: Vec<&&PoolPoint> = failing
        .iter()
        .filter(|p| p.fails_at == Some("the capacity check"))
        .collect();
    assert!(!capacity.is_empty(), "{failing:?}");
    assert!(capacity.iter().all(|p| p.kv_pool > 0));
    assert!(pts.windows(2).all(|w| w[0].kv_pool <= w[1].kv_pool));
}

const DENSE_LEN: &str = "\
1024 485.59375 starts estimate\n\
2048 242.796875 starts estimate\n\
4096 121.3984375 starts estimate\n\
8192 60.69921875 starts estimate\n\
16384 30.349609375 starts estimate\n\
32768 15.1748046875 starts estimate\n\
65536 7.58740234375 starts estimate\n\
131072 3.793701171875 starts estimate\n\
";

const DENSE_POOL: &str = "\
0.5 5021368320 sized starts estimate\n\
0.54 8422686720 sized starts estimate\n\
0.58 11824005120 sized starts estimate\n\
0.62 15225323520 sized starts estimate\n\
0.66 18626641920 sized starts estimate\n\
0.7 22027960320 sized starts estimate\n\
0.74 25429278720 sized starts estimate\n\
0.78 28830597120 sized starts estimate\n\
0.82 32231915520 sized starts estimate\n\
0.86 35631923200 sized starts estimate\n\
0.9 39033241600 sized starts estimate\n\
0.92 40734556160 sized starts estimate\n\
0.94 42434560000 sized starts estimate\n\
0.98 45835878400 sized starts estimate\n\
";

const MLA_LEN: &str = "\
1024 710.1875 starts estimate\n\
2048 355.09375 starts estimate\n\
4096 177.546875 starts estimate\n\
8192 88.7734375 starts estimate\n\
16384 44.38671875 starts estimate\n\
32768 22.193359375 starts estimate\n\
65536 11.0966796875 starts estimate\n\
131072 5.54833984375 starts estimate\n\
163840 4.438671875 starts estimate\n\
";

const MLA_POOL: &str = "\
0.5 0 unsized KV cache sizing estimate\n\
0.54 0 unsized KV cache sizing estimate\n\
0.58 67462309 unsized the capacity check estimate\n\
0.62 6071860143 unsized the capacity check estimate\n\
0.66 12075540480 sized starts estimate\n\
0.7 18079580160 sized starts estimate\n\
0.74 24084744192 sized starts estimate\n\
0.78 30088783872 sized starts estimate\n\
0.82 36092823552 sized starts estimate\n\
0.86 42097987584 sized starts estimate\n\
0.9 48102027264 sized starts estimate\n\
0.92 51104047104 sized starts estimate\n\
0.94 54106066944 sized starts estimate\n\
0.98 60111230976 sized starts estimate\n\
";

const HYBRID_LEN: &str = "\
1024 1375.25 starts estimate\n\
2048 1100.2 starts estimate\n\
4096 785.8571428571429 starts estimate\n\
8192 500.09090909090907 starts estimate\n\
16384 297.35135135135135 starts estimate\n\
32768 164.2089552238806 starts estimate\n\
65536 86.62992125984252 starts estimate\n\
131072 44.54251012145749 starts estimate\n\
262144 22.545081967213115 starts estimate\n\
";

const HYBRID_POOL: &str = "\
0.5 1035065728 unsized the capacity check estimate\n\
0.54 4438622208 sized starts estimate\n\
0.58 7841120256 sized starts estimate\n\
0.62 11243618304 sized starts estimate\n\
0.66 14649458688 sized starts estimate\n\
0.7 18051956736 sized starts estimate\n\
0.74 21454454784 sized starts estimate\n\
0.78 24860295168 sized starts estimate\n\
0.82 28262793216 sized starts estimate\n\
0.86 31668633600 sized starts estimate\n\
0.9 35071131648 sized starts estimate\n\
0.92 36772380672 sized starts estimate\n\
0.94 38473629696 sized starts estimate\n\
0.98 41879470080 sized starts estimate\n\
";

const GATE_LEN: &str = "\
1024 177.5166015625 starts measured\n\
2048 88.75830078125 starts measured\n\
4096 44.379150390625 starts measured\n\
8192 22.1895751953125 starts measured\n\
16384 11.09478759765625 starts measured\n\
32768 5.547393798828125 starts measured\n\
65536 2.7736968994140625 starts measured\n\
131072 1.3868484497070313 starts measured\n\
262144 0.6934242248535156 fails measured\n\
524288 0.3467121124267578 fails measured\n\
1048576 0.1733560562133789 fails measured\n\
";

const GATE_POOL: &str = "\
0.5 10000000000 sized starts measured\n\
0.54 10000000000 sized starts measured\n\
0.58 10000000000 sized starts measured\n\
0.62 10000000000 sized starts measured\n\
0.66 10000000000 sized starts measured\n\
0.7 10000000000 sized starts measured\n\
0.74 10000000000 sized starts measured\n\
0.78 10000000000 sized starts measured\n\
0.82 10000000000 sized starts measured\n\
0.86 10000000000 sized starts measured\n\
0.9 10000000000 sized starts measured\n\
0.92 10000000000 sized starts measured\n\
0.94 10000000000 sized starts measured\n\
0.98 10000000000 unsized the init check exact\n\
";

const S1_POOL: &str = "\
0.5 0 unsized KV cache sizing estimate\n\
0.54 0 unsized KV cache sizing estimate\n\
0.58 0 unsized KV cache sizing estimate\n\
0.62 0 unsized KV cache sizing estimate\n\
0.66 0 unsized KV cache sizing estimate\n\
0.7 0 unsized KV cache sizing estimate\n\
0.74 0 unsized KV cache sizing estimate\n\
0.78 0 unsized KV cache sizing estimate\n\
0.82 0 unsized KV cache sizing estimate\n\
0.86 0 unsized KV cache sizing estimate\n\
0.9 0 unsized KV cache sizing estimate\n\
0.94 0 unsized KV cache sizing estimate\n\
0.98 0 unsized KV cache sizing estimate\n\
";

/// "Concurrency at the average length" is what the plan gives at that max-model-len (issue 19,
/// item 5): a request shorter than a sliding window holds only its own tokens there, where the
/// figure used to count the full-length request's window blocks (Gemma 3 27B: 4.09 at its
/// full 131,072 tokens, 7.01 at the average 32,768).
#[test]
fn concurrency_at_the_average_length_is_the_plan_at_that_length() {
    for (model, gpu, tp) in [
        ("gemma-3-27b-it", "h200-141gb", 1),
        ("gemma-2-9b-it", "h100-sxm-80gb", 1),
        ("gpt-oss-20b", "h100-sxm-80gb", 1),
        ("llama-3.1-8b-instruct", "h100-sxm-80gb", 1),
        ("qwen3-next-80b-a3b-instruct", "h200-141gb", 2),
    ] {
        let s = scenario(model, gpu, tp, 1);
        let p = calc::plan(&s).unwrap();
        let d = p.demand.as_ref().expect("a pool");
        let mut at = s.clone();
        at.engine.max_model_len = MaxLen::Value(d.average_len);
        let q = calc::plan(&at).unwrap();
        let r = q.replica.as_ref().unwrap();
        // The same blocks per request; the pools differ only by what max-model-len itself
        // moves (nothing here but rounding), so within 0.5 %.
        let ratio = d.concurrency_at_average / r.max_concurrency;
        assert!(
            (ratio - 1.0).abs() < 0.005,
            "{model}: {} at the average {} against the plan's {} at that length",
            d.concurrency_at_average,
            d.average_len,
            r.max_concurrency
        );
    }
}
