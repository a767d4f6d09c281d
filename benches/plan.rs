//! Time per `calc::plan` on catalog scenarios: one GPU, TP=8, TP=4 x PP=4, and a 1,000-point
//! utilization sweep. `cargo bench --bench plan --no-default-features` (no harness: std only).
//!
//! Each case is warmed up, then timed in batches with `std::time::Instant`; the report is the
//! median batch's microseconds per plan (and the fastest batch's), so a noisy neighbour skews
//! one batch, not the figure. The target is 20 µs per plan natively.

use std::hint::black_box;
use std::time::{Duration, Instant};

use headroom::calc::scenario::MaxLen;
use headroom::calc::{plan, Scenario};
use headroom::catalog;

/// The scenario of a catalog model on a catalog GPU with a TP x PP layout.
fn scenario(model: &str, gpu: &str, tp: u32, pp: u32) -> Scenario {
    let m = catalog::model(model)
        .unwrap_or_else(|| panic!("catalog model {model}"))
        .model
        .clone();
    let g = catalog::gpu(gpu)
        .unwrap_or_else(|| panic!("catalog GPU {gpu}"))
        .gpu
        .clone();
    let mut s = Scenario::new(m, g);
    s.parallel.tp = tp;
    s.parallel.pp = pp;
    s.gpus = tp * pp;
    s
}

/// Runs `f` (which plans `per_call` scenarios) until `warm` has passed, then times `batches`
/// batches of at least `min_batch` each; returns (median, best) microseconds per plan.
fn measure<F: FnMut()>(mut f: F, per_call: u32) -> (f64, f64) {
    let warm = Duration::from_millis(300);
    let min_batch = Duration::from_millis(100);
    let batches = 15;
    let start = Instant::now();
    let mut calls_per_batch = 0u64;
    while start.elapsed() < warm {
        f();
        calls_per_batch += 1;
    }
    // Size a batch from the warm-up rate.
    let rate = calls_per_batch as f64 / start.elapsed().as_secs_f64();
    let calls = ((rate * min_batch.as_secs_f64()).ceil() as u64).max(1);
    let mut per_plan: Vec<f64> = (0..batches)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..calls {
                f();
            }
            t.elapsed().as_secs_f64() * 1e6 / (calls as f64 * f64::from(per_call))
        })
        .collect();
    per_plan.sort_by(f64::total_cmp);
    (per_plan[per_plan.len() / 2], per_plan[0])
}

fn report(name: &str, (median, best): (f64, f64)) {
    println!("{name:<58} {median:>9.2} µs/plan (median)  {best:>9.2} (best)");
}

fn main() {
    // `cargo bench` passes `--bench`; an optional filter narrows the cases. Without it (as
    // under `cargo test --all-targets`) every case plans once as a smoke test, untimed.
    let filter: Option<String> = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    if !std::env::args().any(|a| a == "--bench") {
        for (model, gpu, tp, pp) in [
            ("llama-3.1-8b-instruct", "h100-sxm-80gb", 1, 1),
            ("deepseek-r1", "h200-141gb", 8, 1),
            ("llama-3.1-405b-instruct-fp8", "h200-141gb", 8, 1),
            ("llama-3.1-70b-instruct", "h100-sxm-80gb", 4, 4),
        ] {
            assert!(plan(&scenario(model, gpu, tp, pp)).is_ok(), "{model} plans");
        }
        println!("bench smoke run: 4 scenarios plan (time them with `cargo bench --bench plan`)");
        return;
    }
    let run = |name: &str| filter.as_deref().map_or(true, |f| name.contains(f));

    let mut one = scenario("llama-3.1-8b-instruct", "h100-sxm-80gb", 1, 1);
    one.engine.max_model_len = MaxLen::Value(131_072);
    let tp8 = scenario("deepseek-r1", "h200-141gb", 8, 1);
    let tp8_405b = scenario("llama-3.1-405b-instruct-fp8", "h200-141gb", 8, 1);
    let tp4pp4 = scenario("llama-3.1-70b-instruct", "h100-sxm-80gb", 4, 4);

    println!(
        "calc::plan, {} build",
        if cfg!(debug_assertions) {
            "debug"
        } else {
            "release"
        }
    );
    let cases: [(&str, &Scenario); 4] = [
        ("1 GPU: llama-3.1-8b-instruct on h100-sxm-80gb", &one),
        ("TP=8: deepseek-r1 on h200-141gb", &tp8),
        ("TP=8: llama-3.1-405b-instruct-fp8 on h200-141gb", &tp8_405b),
        (
            "TP=4 x PP=4: llama-3.1-70b-instruct on h100-sxm-80gb",
            &tp4pp4,
        ),
    ];
    for (name, s) in cases {
        if !run(name) {
            continue;
        }
        assert!(plan(s).is_ok(), "{name} plans");
        report(
            name,
            measure(
                || {
                    black_box(plan(black_box(s)).ok());
                },
                1,
            ),
        );
    }

    // A 1,000-point sweep of gpu-memory-utilization 0.5..=1.0, as a chart draws it: each point
    // clones the scenario, sets the fraction and plans.
    let name = "sweep: 1,000 utilizations 0.5..1.0, llama-3.1-8b-instruct";
    if run(name) {
        let xs: Vec<f64> = (0..1000)
            .map(|i| 0.5 + 0.5 * f64::from(i) / 999.0)
            .collect();
        let (median, best) = measure(
            || {
                for x in &xs {
                    let mut t = one.clone();
                    t.engine.gpu_memory_utilization = Some(*x);
                    black_box(plan(black_box(&t)).ok());
                }
            },
            1000,
        );
        report(name, (median, best));
        println!(
            "{:<58} {:>9.2} ms per 1,000-point sweep (median)",
            "",
            median * 1000.0 / 1000.0
        );
    }
}
