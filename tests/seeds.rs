//! The seed articles' figures (`../shared/reference/seed-cases.md`, cases S1, S2, S3), each read
//! from a `Plan` field or a solver result of the loadable examples in
//! `headroom::catalog::examples` and compared at the article's own precision and unit (GiB for
//! seeds 000 and 002, decimal GB for seed 003).
//!
//! Nothing here recomputes the accounting. A test may subtract two `Plan` figures when the
//! article's figure is itself a difference of the two (budget - weights, needs - total).

use headroom::calc::scenario::{MaxLen, Measured, Scenario};
use headroom::calc::solve::{balanced_partition, largest_kv_pin, layer_equivalents};
use headroom::calc::units::{Bytes, GB, GIB};
use headroom::calc::{plan, Phase, Plan, RankPlan, Term};
use headroom::catalog::examples::{self, s2_drafter};

// ---------------------------------------------------------------------------------------------
// Helpers: figures at the article's precision.

fn gib(bytes: impl Into<i128>) -> f64 {
    bytes.into() as f64 / GIB as f64
}

fn gb(bytes: impl Into<i128>) -> f64 {
    bytes.into() as f64 / GB as f64
}

/// Asserts that `value`, printed with as many decimals as the article's figure has, is the
/// article's figure.
#[track_caller]
fn shown(what: &str, value: f64, article: &str) {
    let decimals = article.split_once('.').map_or(0, |(_, d)| d.len());
    let ours = format!("{value:.decimals$}");
    assert_eq!(
        ours, article,
        "{what}: {value} shows as {ours}, the article says {article}"
    );
}

/// A figure that sits exactly on a rounding tie at the article's precision: the value shows as
/// `tie` with one more decimal, and the article printed one of the two neighbours.
#[track_caller]
fn shown_tie(what: &str, value: f64, tie: &str, article: &str) {
    let decimals = article.split_once('.').map_or(0, |(_, d)| d.len());
    let finer = decimals + 1;
    assert_eq!(
        format!("{value:.finer$}"),
        tie,
        "{what}: {value} is not the tie {tie}"
    );
    let step = 10f64.powi(-(decimals as i32));
    let t: f64 = tie.parse().unwrap();
    let a: f64 = article.parse().unwrap();
    assert!(
        (a - (t - step / 2.0)).abs() < step / 10.0 || (a - (t + step / 2.0)).abs() < step / 10.0,
        "{what}: the article's {article} is not a neighbour of the tie {tie}"
    );
}

fn line(r: &RankPlan, t: Term) -> i128 {
    r.line(t)
        .unwrap_or_else(|| panic!("rank {} has no {t:?} line", r.rank))
        .bytes
}

fn example(id: &str) -> Scenario {
    examples::example(id)
        .unwrap_or_else(|| panic!("example {id} is missing"))
        .scenario
}

fn planned(s: &Scenario) -> Plan {
    plan(s).unwrap_or_else(|e| panic!("plan failed: {} ({})", e, e.field()))
}

fn check(p: &Plan, phase: Phase) -> &headroom::calc::Check {
    p.checks
        .iter()
        .find(|c| c.phase == phase)
        .unwrap_or_else(|| panic!("no {phase:?} check in {:#?}", p.checks))
}

// ---------------------------------------------------------------------------------------------
// S1: three cards, pipeline parallel (seed 000).

fn s1_at(util: f64) -> Plan {
    let mut s = example("s1-three-cards");
    s.engine.gpu_memory_utilization = Some(util);
    planned(&s)
}

/// The stage the article calls the heaviest card at the default split: 15 layers, 53.3 GiB.
fn s1_fifteen_layer_rank(p: &Plan) -> &RankPlan {
    p.ranks
        .iter()
        .find(|r| r.layers.1 - r.layers.0 == 15)
        .expect("a 15-layer stage")
}

#[test]
fn s1_budgets_at_three_fractions() {
    // 63.5 GiB x 0.85 / 0.90 / 0.95 = 54.0 / 57.1 / 60.3 GiB.
    let b85 = s1_at(0.85).ranks[0].budget;
    let b90 = s1_at(0.90).ranks[0].budget;
    let b95 = s1_at(0.95).ranks[0].budget;
    shown("budget at 0.85", gib(b85.0), "54.0");
    // 63.5 x 0.90 = 57.15 is a tie at one decimal. vLLM's ceil() puts the budget under one byte
    // above it (57.15000000037 GiB), which rounds half-up to 57.2; the article printed 57.1
    // (Python's round() of the float product 63.5 * 0.9, which lands just below 57.15).
    shown_tie("budget at 0.90", gib(b90.0), "57.15", "57.1");
    shown("budget at 0.95", gib(b95.0), "60.3");
    // The article's "resource difference" between the two failing configs.
    shown(
        "budget difference 0.90 - 0.85",
        gib(b90.0) - gib(b85.0),
        "3.2",
    );
    // Every rank has the same budget: the fraction applies to each card's own total.
    let p = s1_at(0.90);
    assert!(p.ranks.iter().all(|r| r.budget == b90));
    assert_eq!(p.gpu_memory_utilization, 0.90);
}

#[test]
fn s1_default_split_is_vllms() {
    // get_pp_indices(43, ., 3): the remainder goes to the stage before the last.
    let p = s1_at(0.90);
    assert_eq!(p.pp_partition, vec![14, 15, 14]);
    assert_eq!(p.pp, 3);
    let layers: Vec<(u32, u32)> = p.ranks.iter().map(|r| r.layers).collect();
    assert_eq!(layers, vec![(0, 14), (14, 29), (29, 43)]);
    // The drafter and the LM head live on the last stage only.
    assert!(p.ranks[2].holds_head && p.ranks[2].holds_drafter);
    assert!(!p.ranks[0].holds_head && !p.ranks[1].holds_drafter);
    assert!(p.ranks[0].holds_embedding);
}

#[test]
fn s1_heaviest_card_leaves_little_at_each_fraction() {
    // Heaviest card at the default split: 15 layers, 53.3 GiB of weights; budget - weights
    // leaves 0.7 / 3.9 / 7.0 GiB at 0.85 / 0.90 / 0.95.
    for (util, left) in [(0.85, "0.7"), (0.90, "3.9"), (0.95, "7.0")] {
        let p = s1_at(util);
        let r = s1_fifteen_layer_rank(&p);
        shown(
            "stated weights of the 15-layer stage",
            gib(r.weights.0),
            "53.3",
        );
        assert_eq!(line(r, Term::Weights), i128::from(r.weights.0));
        assert_eq!(
            r.line(Term::Weights).unwrap().provenance.label(),
            "measured"
        );
        let budget = line(r, Term::Budget);
        shown(
            &format!("budget - weights at {util}"),
            gib(budget - line(r, Term::Weights)),
            left,
        );
    }
    // "KV at 0.85 on the heaviest card: 54.0 - about 53 GiB = about 1 GiB: too little." The
    // plan's available KV also pays the activation peak, other consumption and graphs, so it is
    // below the 0.7 GiB difference, whatever those estimates are.
    let p = s1_at(0.85);
    let r = s1_fifteen_layer_rank(&p);
    assert!(r.available_kv < line(r, Term::Budget) - line(r, Term::Weights));
    assert!(gib(r.available_kv) < 1.0);
}

#[test]
fn s1_load_phase_fits_and_utilization_does_not_act_there() {
    // The article's capacity math: weights about 54 GiB + the 4 GiB repack transient = 58 GiB
    // against 63.5 GiB physical, 5.5 GiB of headroom. Its configuration without speculative
    // decoding ("3 cards, no speculative decoding, memory utilization 0.85") on every stage.
    let variant = |util: f64| {
        let mut s = example("s1-three-cards");
        s.engine.speculative = None;
        s.runtime.weights_per_stage = None;
        s.runtime.weights = Some(Measured::new(
            54 * GIB,
            "seed 000: weights per card about 54 GiB",
        ));
        s.engine.gpu_memory_utilization = Some(util);
        planned(&s)
    };
    let at85 = variant(0.85);
    for r in &at85.ranks {
        shown("transient", gib(line(r, Term::LoadPeak)), "4");
        shown("load need", gib(r.load_need.0), "58");
        shown(
            "physical free at load",
            gib(line(r, Term::FreeAtStart)),
            "63.5",
        );
        shown("load headroom", gib(r.load_headroom), "5.5");
    }
    let load = check(&at85, Phase::Load);
    assert!(load.ok, "{}", load.message);
    assert!(load.not_knobs.contains(&"gpu-memory-utilization"));
    assert!(!load.knobs.contains(&"gpu-memory-utilization"));
    // Moving the fraction changes the budget by 3.2 GiB and the load phase by not one byte.
    let at95 = variant(0.95);
    for (a, b) in at85.ranks.iter().zip(&at95.ranks) {
        assert_eq!(a.load_need, b.load_need);
        assert_eq!(a.load_headroom, b.load_headroom);
        assert_ne!(a.budget, b.budget);
    }
    assert_eq!(check(&at95, Phase::Load).ok, load.ok);
    // The fraction does act at the init check and at KV sizing.
    let init = check(&at85, Phase::Init);
    assert!(init.knobs.contains(&"gpu-memory-utilization"));
    assert!(at85.ranks[0].available_kv < at95.ranks[0].available_kv);
    // "What the knob really controls is the KV pool: 63.5 x 0.85 = 54.0 GiB minus roughly 53
    // GiB of weights leaves about 1 GiB for KV, and three cards won't start." With 54 GiB on
    // each card the engine loads, then stops at KV sizing; at 0.95 it gets past it.
    let stop = at85.first_failure().expect("0.85 does not start");
    assert_eq!(stop.phase, Phase::KvSizing, "{}", stop.message);
    assert!(stop.knobs.contains(&"gpu-memory-utilization"));
    // The example fits the length to the pool (`auto`), and vLLM's auto-fit raises before its
    // memory check does: nothing is left after the null block either way.
    assert!(stop
        .vllm_error
        .as_deref()
        .unwrap()
        .starts_with("Cannot auto-fit max_model_len: not enough GPU memory available to serve even a single token."));
    assert!(check(&at95, Phase::KvSizing).ok);
}

#[test]
fn s1_drafter_in_layer_equivalents_and_the_balanced_split() {
    // "That draft module is about 12 GiB, and each layer is about 3.33 GiB, so it's worth
    // about 3.6 layers." The 12 GiB is the plan's drafter line; 3.33 GiB is the article's figure.
    let p = s1_at(0.90);
    let last = p.ranks.last().unwrap();
    let drafter = line(last, Term::Drafter);
    shown("drafter", gib(drafter), "12");
    let per_layer = Bytes((3.33 * GIB as f64).round() as u64);
    let x = layer_equivalents(Bytes(drafter as u64), per_layer).unwrap();
    shown("drafter in layers", x, "3.6");

    // 2L + (L - 3.6) = 43: L about 15.5, last stage about 11.9, so last stage <= 12.
    let b = balanced_partition(43, 3, 3.6, 3).unwrap();
    shown("L", b.per_stage, "15.5");
    shown("last stage", b.last_stage, "11.9");
    assert_eq!(b.partition.len(), 3);
    assert_eq!(b.partition.iter().sum::<u32>(), 43);
    let last_n = *b.partition.last().unwrap();
    assert!(last_n <= 12, "{:?}", b.partition);
    // Hard constraint: the drafter reads layers 40-42, which must be in the last stage.
    let last_start = 43 - last_n;
    assert!(last_start <= 40, "{:?}", b.partition);
    assert!(
        b.equation.contains("15.5") && b.equation.contains("11.9"),
        "{}",
        b.equation
    );
    // The split plans, and its last stage holds layers 40..43.
    let mut s = example("s1-three-cards");
    s.parallel.pp_layer_partition = Some(b.partition.clone());
    let p = planned(&s);
    assert_eq!(p.pp_partition, b.partition);
    let last = p.ranks.last().unwrap();
    assert!(
        last.layers.0 <= 40 && last.layers.1 == 43,
        "{:?}",
        last.layers
    );
}

#[test]
fn s1_reported_splits_start_or_fail_as_the_article_says() {
    // Splits 15,15,13 (does not start: "KV has 0.76 GiB, one max-length request needs 1.24
    // GiB") and 15,16,12 / 16,16,11 (start), on the cards at 0.95 ("three cards need
    // 0.94-0.95"). DeepSeek-V4's layout as vLLM 0.33.0 plans it (tests/golden_v4.rs): at a
    // 163,840-token length and the 2,048 batched tokens of a card under 70 GiB (PP 3 keeps four
    // batches in flight), one request needs 3,994 blocks of 332,928 B on the last stage =
    // 1,329,714,432 B, the article's 1.24 GiB to the digit. The KV each stage has depends on
    // the weights the article states for one stage only (the rest are estimates), so the test
    // asserts the outcome and vLLM's figure, not the 0.76 GiB.
    for (split, starts) in [
        (vec![15, 15, 13], false),
        (vec![15, 16, 12], true),
        (vec![16, 16, 11], true),
    ] {
        let mut s = example("s1-three-cards");
        s.parallel.pp_layer_partition = Some(split.clone());
        s.engine.gpu_memory_utilization = Some(0.95);
        s.engine.max_model_len = MaxLen::Value(163_840);
        let p = planned(&s);
        assert_eq!(p.pp_partition, split);
        let last = p.ranks.last().unwrap();
        assert_eq!(last.layers, (43 - split[2], 43));
        assert!(last.layers.0 <= 40, "layers 40-42 feed the drafter");
        assert!(last.holds_drafter);
        assert_eq!(p.starts(), starts, "{split:?}: {:?}", p.first_failure());
        if !starts {
            let f = p.first_failure().unwrap();
            assert_eq!(f.phase, Phase::Capacity);
            assert_eq!(f.rank, Some(2), "the drafter's stage has the least KV");
            assert!(
                f.vllm_error
                    .as_deref()
                    .unwrap()
                    .contains("(163840), (1.24 GiB KV cache is needed"),
                "{:?}",
                f.vllm_error
            );
            assert!(gib(p.ranks[2].available_kv) < 1.24);
        }
    }
    // The measured footprints for 15, 16, 12 (51.64 / 53.76 / 52.86 GiB) with the 4 GiB
    // repack all load within 63.5 GiB.
    let mut s = example("s1-three-cards");
    s.parallel.pp_layer_partition = Some(vec![15, 16, 12]);
    s.engine.speculative.as_mut().unwrap().drafter_weights = None;
    s.engine.speculative = None;
    let w = |x: f64| {
        Some(Measured::new(
            (x * GIB as f64).round() as u64,
            "seed 000: measured footprint",
        ))
    };
    s.runtime.weights_per_stage = Some(vec![w(51.64), w(53.76), w(52.86)]);
    let p = planned(&s);
    let stated: Vec<String> = p
        .ranks
        .iter()
        .map(|r| format!("{:.2}", gib(r.weights.0)))
        .collect();
    assert_eq!(stated, ["51.64", "53.76", "52.86"]);
    assert!(check(&p, Phase::Load).ok);
}

// ---------------------------------------------------------------------------------------------
// S2: a start gate on unified memory (seed 002).

fn s2_with(pin: u64, drafter: bool) -> Scenario {
    let mut s = example("s2-unified-gate");
    s.engine.kv_cache_memory_bytes = Some(pin);
    s.engine.speculative = drafter.then(s2_drafter);
    s
}

fn gate_line(p: &Plan, t: Term) -> i128 {
    p.unified
        .as_ref()
        .expect("a unified gate")
        .lines
        .iter()
        .find(|l| l.term == t)
        .unwrap_or_else(|| panic!("no {t:?} line in the gate"))
        .bytes
}

#[test]
fn s2_what_one_rank_holds() {
    let p = planned(&example("s2-unified-gate"));
    assert_eq!((p.tp, p.pp), (2, 1));
    // The start the article serves: the gate passes and so does every vLLM check.
    assert!(p.starts(), "{:?}", p.first_failure());
    let r = &p.ranks[0];
    shown("weights (Model loading took)", gib(r.weights.0), "79.29");
    assert_eq!(
        r.line(Term::Weights).unwrap().provenance.label(),
        "measured"
    );
    // KV pool at 10e9 B: 9.31 GiB, backing 181,777 tokens (the catalog's measured ratio).
    assert_eq!(r.kv_pool.0, 10_000_000_000);
    shown("KV pool", gib(r.kv_pool.0), "9.31");
    let replica = p.replica.as_ref().expect("a replica");
    assert_eq!(replica.kv_cache_tokens, 181_777);
    assert_eq!(replica.provenance.label(), "measured");
    // Overhead, a remainder: 102.0 - 79.29 - 9.31 = 13.4.
    shown(
        "overhead",
        gib(gate_line(&p, Term::OtherConsumption)),
        "13.4",
    );
    let g = p.unified.as_ref().unwrap();
    // Held by one rank, no drafter: 102.0 GiB; 117.2 available before, 15.2 after.
    shown("held", gib(g.total.0), "102.0");
    shown("available before", gib(line(r, Term::FreeAtStart)), "117.2");
    shown(
        "available after",
        gib(line(r, Term::FreeAtStart) - i128::from(g.total.0)),
        "15.2",
    );
    // The rank's own ledger agrees: free after start uses the measured overhead.
    shown("free after start", gib(r.free_after_start), "15.2");
    assert_eq!(line(r, Term::FreeAfterStart), r.free_after_start);
    // The start headroom: needs - total.
    shown("start headroom", gib(g.needs.0) - gib(g.total.0), "8.0");
    // The drafter per rank: 10.12 / 2 = 5.06 GiB, an estimate from shard headers.
    let pd = planned(&s2_with(10_000_000_000, true));
    shown(
        "drafter per rank",
        gib(line(&pd.ranks[0], Term::Drafter)),
        "5.06",
    );
    assert!(
        pd.ranks.iter().all(|r| r.holds_drafter),
        "PP=1: every rank is the last stage"
    );
    // vLLM loads the drafter inside the same memory profiler as the target, so its log line
    // counts both: 79.29 + 5.06.
    assert!(
        pd.log_lines
            .iter()
            .any(|l| l == "(Worker_TP0 pid=P) Model loading took 84.35 GiB memory and T seconds"),
        "{:#?}",
        pd.log_lines
    );
}

#[test]
fn s2_auto_max_model_len_fits_the_pinned_pool() {
    // The article does not state --max-model-len. At the model's own 1,048,576 the 10e9 pin
    // cannot hold one request and vLLM would refuse to start; with `auto` the longest length
    // the pool holds is the pool's 181,777 tokens, and the start the article serves passes
    // every check.
    let mut s = example("s2-unified-gate");
    s.engine.max_model_len = MaxLen::Value(1_048_576);
    let full = planned(&s);
    assert_eq!(full.first_failure().unwrap().phase, Phase::Capacity);
    s.engine.max_model_len = MaxLen::Auto;
    let auto = planned(&s);
    assert!(auto.starts(), "{:?}", auto.first_failure());
    let replica = auto.replica.as_ref().unwrap();
    assert_eq!(replica.max_model_len, 181_777);
    assert_eq!(replica.kv_cache_tokens, 181_777);
    assert_eq!(replica.full_length_requests, 1);
    assert!(
        auto.log_lines.iter().any(|l| l.starts_with(
            "(EngineCore pid=P) Auto-fit max_model_len: reduced from 1048576 to 181777"
        )),
        "{:#?}",
        auto.log_lines
    );
}

#[test]
fn s2_gate_table() {
    // | KV pin | KV GiB | needs, no drafter | needs, drafter | vs ~114.5 free |
    let rows = [
        (8_000_000_000u64, "7.45", "108.1", "113.2", (true, true)),
        (10_000_000_000, "9.31", "110.0", "115.1", (true, false)),
        (16_000_000_000, "14.90", "115.6", "120.7", (false, false)),
        (20_000_000_000, "18.63", "119.3", "124.4", (false, false)),
    ];
    for (pin, kv, needs_plain, needs_drafter, (ok_plain, ok_drafter)) in rows {
        let plain = planned(&s2_with(pin, false));
        let drafted = planned(&s2_with(pin, true));
        shown(
            &format!("KV at pin {pin}"),
            gib(gate_line(&plain, Term::KvPool)),
            kv,
        );
        let gp = plain.unified.as_ref().unwrap();
        let gd = drafted.unified.as_ref().unwrap();
        shown("MemAvailable", gib(gp.mem_available.0), "114.5");
        shown(
            &format!("needs at {pin}, no drafter"),
            gib(gp.needs.0),
            needs_plain,
        );
        shown(
            &format!("needs at {pin}, drafter"),
            gib(gd.needs.0),
            needs_drafter,
        );
        assert_eq!(gp.ok, ok_plain, "verdict at {pin}, no drafter");
        assert_eq!(gd.ok, ok_drafter, "verdict at {pin}, drafter");
        // The gate is the plan's first check, and decides it when it refuses.
        assert_eq!(plain.checks[0].phase, Phase::UnifiedGate);
        assert_eq!(plain.checks[0].ok, ok_plain);
        if !ok_drafter {
            assert_eq!(drafted.first_failure().unwrap().phase, Phase::UnifiedGate);
        }
    }
}

#[test]
fn s2_largest_pins_that_pass() {
    // 114.5 - 8 - 79.29 - 13.4 = 13.81 GiB = 14.8e9 B without the drafter; 8.75 GiB = 9.4e9 B
    // with it.
    let plain = largest_kv_pin(&s2_with(10_000_000_000, false)).unwrap();
    let drafted = largest_kv_pin(&s2_with(10_000_000_000, true)).unwrap();
    shown("largest pin, GiB", gib(plain), "13.81");
    shown("largest pin, e9 B", gb(plain), "14.8");
    shown("largest pin with drafter, GiB", gib(drafted), "8.75");
    shown("largest pin with drafter, e9 B", gb(drafted), "9.4");
    // And the gate passes exactly there.
    assert!(planned(&s2_with(plain, false)).unified.unwrap().ok);
    assert!(!planned(&s2_with(plain + 1, false)).unified.unwrap().ok);
    assert!(planned(&s2_with(drafted, true)).unified.unwrap().ok);
    assert!(!planned(&s2_with(drafted + 1, true)).unified.unwrap().ok);
}

#[test]
fn s2_a_guessed_overhead_passes_the_gate() {
    // Generation 234: 76.68 + 14.90 + 4.3 + 8 = 103.9 GiB against about 117 available: the gate
    // passed it; the real overhead was 13.4 GiB and the memory guard killed the start.
    let g = |x: f64| (x * GIB as f64).round() as u64;
    let mut s = s2_with(16_000_000_000, false);
    s.runtime.weights = Some(Measured::new(
        g(76.68),
        "seed 002: shard headers said 76.68",
    ));
    let u = s.unified.as_mut().unwrap();
    u.overhead = Some(Measured::new(
        g(4.3),
        "seed 002: overhead copied from another model",
    ));
    u.mem_available = Measured::new(g(117.0), "seed 002: about 117 available");
    let p = planned(&s);
    let gate = p.unified.as_ref().unwrap();
    shown(
        "needs with the guessed overhead",
        gib(gate.needs.0),
        "103.9",
    );
    assert!(gate.ok);
    // The same start with the real overhead needs 9.1 GiB more.
    s.unified.as_mut().unwrap().overhead =
        Some(Measured::new(g(13.4), "seed 002: the measured remainder"));
    let real = planned(&s);
    shown(
        "needs, real - guessed",
        gib(real.unified.as_ref().unwrap().needs.0) - gib(gate.needs.0),
        "9.1",
    );
}

#[test]
fn s2_utilization_misfires_on_unified_memory() {
    let p = planned(&example("s2-unified-gate"));
    let g = p.unified.as_ref().unwrap();
    assert!(
        g.utilization_note.contains("gpu-memory-utilization"),
        "{}",
        g.utilization_note
    );
    assert!(
        g.utilization_note.contains("--kv-cache-memory-bytes"),
        "{}",
        g.utilization_note
    );
    assert!(
        g.utilization_note.contains("114.50 GiB"),
        "{}",
        g.utilization_note
    );
    assert!(p.notes.contains(&g.utilization_note));
    let gate = check(&p, Phase::UnifiedGate);
    assert!(gate.not_knobs.contains(&"gpu-memory-utilization"));
    assert!(gate.knobs.contains(&"kv-cache-memory-bytes"));
    // With the pool pinned, the fraction does not move it.
    let mut s = example("s2-unified-gate");
    s.engine.gpu_memory_utilization = Some(0.5);
    let half = planned(&s);
    assert_eq!(half.ranks[0].kv_pool, p.ranks[0].kv_pool);
    assert_eq!(half.unified.as_ref().unwrap().needs, g.needs);
    assert_eq!(
        p.ranks[0]
            .line(Term::AvailableKv)
            .unwrap()
            .provenance
            .label(),
        "exact",
        "a pinned pool is exactly the pin"
    );
}

// ---------------------------------------------------------------------------------------------
// S3: a synthetic TP=4 worker (seed 003), decimal GB.

#[test]
fn s3_one_rank_in_decimal_gb() {
    let p = planned(&example("s3-synthetic-tp4"));
    assert_eq!((p.tp, p.pp, p.ranks.len()), (4, 1, 4));
    assert!(p.starts(), "{:?}", p.first_failure());
    for r in &p.ranks {
        assert_eq!(r.layers, (0, 80));
        shown("capacity", gb(line(r, Term::Total)), "80.0");
        shown("executor budget 80.0 x 0.92", gb(r.budget.0), "73.6");
        shown("resident weights 70 / 4", gb(r.weights.0), "17.5");
        shown(
            "other budgeted use",
            gb(line(r, Term::OtherConsumption)),
            "10.0",
        );
        shown("available KV pool", gb(r.available_kv), "46.1");
        shown(
            "outside the budget",
            gb(line(r, Term::OutsideBudget)),
            "6.4",
        );
        // KV heads: 8 over TP 4.
        assert_eq!(r.kv_heads, 2);
        assert_eq!(r.kv_bytes_per_token, 81_920);
    }
}

#[test]
fn s3_kv_arithmetic_and_demand() {
    let p = planned(&example("s3-synthetic-tp4"));
    let d = p.demand.as_ref().expect("demand");
    let replica = p.replica.as_ref().expect("replica");
    // Whole-model KV per position 2 x 80 x 8 x 128 x 2 = 327,680 B; per rank / 4 = 81,920 B.
    assert_eq!(d.kv_bytes_per_token_replica, 327_680);
    assert_eq!(
        p.ranks[replica.limiting_rank as usize].kv_bytes_per_token,
        81_920
    );
    // One 131,072-position request per rank = 10,737,418,240 B.
    assert_eq!(replica.max_model_len, 131_072);
    assert_eq!(d.per_request_bytes, 10_737_418_240);
    shown("one request, GB", gb(d.per_request_bytes), "10.7374");
    // 46.1 / 10.7374 = 4.29 full-length requests, so 4.
    assert_eq!(format!("{:.2}", replica.max_concurrency), "4.29");
    assert_eq!(replica.full_length_requests, 4);
    // 256 maximum-length requests across the four ranks: about 11.0 TB of demand.
    assert_eq!(d.max_num_seqs, 256);
    shown(
        "256 requests, TB",
        d.all_seqs_bytes_replica as f64 / 1e12,
        "11.0",
    );
    // Demand, not a startup reservation: the plan starts with a pool of about 46.1 GB.
    assert!(p.starts());
    assert!(d.all_seqs_bytes_replica > u128::from(d.pool_bytes) * 4);
    let cap = check(&p, Phase::Capacity);
    assert!(cap.not_knobs.iter().any(|k| k.starts_with("max-num-seqs")));
}

#[test]
fn s3_probes_the_article_teaches() {
    // "Should utilization go up or down?" Up enlarges an automatically sized pool.
    let mut s = example("s3-synthetic-tp4");
    s.engine.gpu_memory_utilization = Some(0.95);
    let up = planned(&s);
    let base = planned(&example("s3-synthetic-tp4"));
    assert!(up.ranks[0].kv_pool > base.ranks[0].kv_pool);
    // "Does FP8 KV halve total memory?" It halves the KV payload per token, not the weights.
    let mut s = example("s3-synthetic-tp4");
    s.engine.kv_cache_dtype = headroom::calc::scenario::KvCacheDtype::Fp8;
    let fp8 = planned(&s);
    assert_eq!(
        fp8.ranks[0].kv_bytes_per_token * 2,
        base.ranks[0].kv_bytes_per_token
    );
    assert_eq!(fp8.ranks[0].weights, base.ranks[0].weights);
    // A shorter max-model-len changes the capacity check, not the already budgeted pool.
    let mut s = example("s3-synthetic-tp4");
    s.engine.max_model_len = MaxLen::Value(32_768);
    let short = planned(&s);
    assert_eq!(short.ranks[0].kv_pool, base.ranks[0].kv_pool);
    assert!(short.replica.unwrap().full_length_requests > 4);
}

#[test]
fn every_example_id_loads() {
    let ids: Vec<&str> = examples::examples().iter().map(|e| e.id).collect();
    assert_eq!(
        ids,
        ["s1-three-cards", "s2-unified-gate", "s3-synthetic-tp4"]
    );
    for e in examples::examples() {
        assert!(plan(&e.scenario).is_ok(), "{}", e.id);
        assert!(!e.title.is_empty() && !e.summary.is_empty() && !e.article.is_empty());
    }
}

#[test]
fn s2_memory_guard_after_the_start() {
    // Seed 002: against ~114.5 GiB available, the 10e9 start without the drafter holds
    // 102.0 GiB and leaves 12.5 GiB, above the guard's 8 GiB; the drafter start at 16e9 would
    // hold 112.7 GiB and leave 1.8 GiB, under it.
    let p = planned(&s2_with(10_000_000_000, false));
    let g = p.unified.as_ref().expect("gate");
    shown("MemAvailable after the start", gib(g.after_start), "12.5");
    assert!(g.guard_ok);
    let p = planned(&s2_with(16_000_000_000, true));
    let g = p.unified.as_ref().expect("gate");
    shown("MemAvailable after the start", gib(g.after_start), "1.8");
    assert!(!g.guard_ok);
    assert!(check(&p, Phase::UnifiedGate)
        .message
        .contains("below the memory guard's 8.00 GiB threshold"));
}

#[test]
fn s1_the_balanced_split_starts_where_the_default_does_not() {
    // Seed 000: the default split 14, 15, 14 does not start; 15, 16, 12 runs. Here the
    // last stage carries the 12 GiB drafter, so at 0.90 it has nothing left for KV at the
    // default split, while the balanced split moves two layers off it. (Only the 15-layer
    // stage's 53.3 GiB is stated; the other stages' weights are labelled estimates.)
    let p = planned(&example("s1-three-cards"));
    let c = p.first_failure().expect("the default split fails");
    assert_eq!(c.phase, Phase::KvSizing);
    assert_eq!(c.rank, Some(2));
    assert!(c.knobs.iter().any(|k| k.starts_with("pp-layer-partition")));
    let mut s = example("s1-three-cards");
    s.parallel.pp_layer_partition = Some(vec![15, 16, 12]);
    s.runtime.weights_per_stage = None;
    let p = planned(&s);
    assert!(p.starts(), "{:?}", p.first_failure());
}

#[test]
fn demand_says_how_certain_it_is() {
    // S3's demand is vLLM's block arithmetic on the model's shape: exact.
    let s3 = planned(&example("s3-synthetic-tp4"));
    let d = s3.demand.as_ref().expect("S3 starts");
    assert_eq!(d.provenance.label(), "exact");
    // S2's KV layout is converted with seed 002's measured ratio: its demand is measured too,
    // never shown as exact.
    let s2 = planned(&example("s2-unified-gate"));
    let d = s2.demand.as_ref().expect("S2 has a demand");
    assert_eq!(d.provenance.label(), "measured", "{:?}", d.provenance);
    assert!(
        d.provenance.basis().contains("002"),
        "{}",
        d.provenance.basis()
    );
}
