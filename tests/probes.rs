//! "What interviewers probe next" (issue 17, item 5): each answer reads this scenario's plans.

use headroom::calc::plan as run_plan;
use headroom::calc::units::{thousands, UnitSystem};
use headroom::catalog;
use headroom::probes::probes;

#[test]
fn answers_use_the_scenarios_numbers() {
    let ex = catalog::examples::examples()
        .into_iter()
        .find(|e| e.id == "s3-synthetic-tp4")
        .unwrap();
    let s = ex.scenario.clone();
    let p = run_plan(&s).unwrap();
    let all = probes(&s, &p, UnitSystem::Decimal);
    let keys: Vec<&str> = all.iter().map(|p| p.key).collect();
    for k in [
        "utilization-up-or-down",
        "weight-mismatch",
        "fp8-kv",
        "lower-concurrency",
        "pool-vs-occupied",
        "divide-by-tp",
        "activation-twice",
        "start-is-not-stable",
    ] {
        assert!(keys.contains(&k), "{k} in {keys:?}");
    }
    let answer = |k: &str| &all.iter().find(|p| p.key == k).unwrap().answer;
    let r = &p.ranks[p.deciding_rank().unwrap_or(0) as usize];
    // FP8 halves the bytes per token: 81,920 B per token per rank in seed 003, 40,960 with fp8.
    assert!(
        answer("fp8-kv").contains(&format!(
            "{} B per token",
            thousands(u128::from(r.kv_bytes_per_token))
        )),
        "{}",
        answer("fp8-kv")
    );
    assert!(answer("fp8-kv").contains("40,960"), "{}", answer("fp8-kv"));
    // Seed 003: 8 KV heads over TP=4: 2 per rank.
    assert!(
        answer("divide-by-tp").contains("max(1, 8 KV heads / TP 4) = 2"),
        "{}",
        answer("divide-by-tp")
    );
    assert!(
        answer("start-is-not-stable").contains("4.29 full-length requests"),
        "{}",
        answer("start-is-not-stable")
    );
    assert!(
        answer("pool-vs-occupied").contains("46.10 GB"),
        "{}",
        answer("pool-vs-occupied")
    );
}
