//! What the Plan carries for the views: the resolved engine settings (`Plan::settings`) with
//! where each came from, checked against the calc rules the views call today, and each rank's
//! start phase by phase (`Plan::timeline`), checked against the rank's own figures and the
//! plan's checks, on catalog scenarios and the seed examples.

use headroom::calc::plan::Origin;
use headroom::calc::runtime;
use headroom::calc::scenario::{AttentionBackend, MaxLen, Scenario, SpecMethod, Speculative};
use headroom::calc::timeline::{PhaseState, StartPhase};
use headroom::calc::units::UnitSystem;
use headroom::calc::version::VllmVersion;
use headroom::calc::{plan, Input, Phase, Plan, Term};
use headroom::catalog;

fn scenario(model: &str, gpu: &str) -> Scenario {
    let m = catalog::model(model).unwrap_or_else(|| panic!("no model {model}"));
    let g = catalog::gpu(gpu).unwrap_or_else(|| panic!("no gpu {gpu}"));
    Scenario::new(m.model.clone(), g.gpu.clone())
}

fn planned(s: &Scenario) -> Plan {
    plan(s).unwrap_or_else(|e| panic!("plan failed: {e} ({})", e.field()))
}

#[test]
fn utilization_default_follows_the_release() {
    let mut s = scenario("llama-3.1-8b-instruct", "h100-sxm-80gb");
    let p = planned(&s);
    let u = &p.settings.gpu_memory_utilization;
    assert_eq!((u.value, u.origin), (0.92, Origin::Default));
    assert_eq!(p.settings.default_utilization, 0.92);
    assert_eq!(u.value, p.gpu_memory_utilization);

    s.version = VllmVersion::new(0, 19);
    let p = planned(&s);
    let u = &p.settings.gpu_memory_utilization;
    assert_eq!((u.value, u.origin), (0.90, Origin::Default));
    assert_eq!(p.settings.default_utilization, 0.90);

    s.version = VllmVersion::CURRENT;
    s.engine.gpu_memory_utilization = Some(0.85);
    let p = planned(&s);
    let u = &p.settings.gpu_memory_utilization;
    assert_eq!((u.value, u.origin), (0.85, Origin::Given));
    // The default stays the release's, for a view that shows it beside the value given.
    assert_eq!(p.settings.default_utilization, 0.92);
}

#[test]
fn batch_defaults_are_the_gpus() {
    for gpu in ["h100-sxm-80gb", "l4-24gb", "b200-192gb", "a100-sxm4-80gb"] {
        let mut s = scenario("llama-3.1-8b-instruct", gpu);
        s.engine.max_model_len = MaxLen::Value(8192);
        let p = planned(&s);
        let (mnbt, mns, basis) = runtime::batch_defaults(&s, runtime::batch_defaults_len(&s));
        let st = &p.settings;
        assert_eq!(st.max_num_seqs.value, mns, "{gpu}");
        assert_eq!(st.max_num_batched_tokens.value, mnbt, "{gpu}");
        assert_eq!(st.max_num_seqs.origin, Origin::Default);
        assert_eq!(st.max_num_seqs.basis, basis);
        // A started engine's demand reads the same figures.
        let d = p
            .demand
            .as_ref()
            .unwrap_or_else(|| panic!("llama 8B starts on {gpu}"));
        assert_eq!((d.max_num_seqs, d.max_num_batched_tokens), (mns, mnbt));
    }
    let mut s = scenario("llama-3.1-8b-instruct", "h100-sxm-80gb");
    s.engine.max_num_seqs = Some(64);
    let p = planned(&s);
    assert_eq!(p.settings.max_num_seqs.value, 64);
    assert_eq!(p.settings.max_num_seqs.origin, Origin::Given);
    assert_eq!(p.settings.max_num_batched_tokens.origin, Origin::Default);
}

#[test]
fn block_size_given_default_or_raised() {
    let mut s = scenario("llama-3.1-8b-instruct", "h100-sxm-80gb");
    let p = planned(&s);
    let b = &p.settings.block_size;
    assert_eq!((b.value, b.origin), (16, Origin::Default));
    assert_eq!(Some(b.value), p.replica.as_ref().map(|r| r.block_size));

    s.engine.block_size = Some(32);
    let p = planned(&s);
    let b = &p.settings.block_size;
    assert_eq!((b.value, b.origin), (32, Origin::Given));
    assert_eq!(b.basis, "--block-size 32");

    // A hybrid model's block is raised to fit its state page (the note says why).
    let mut s = scenario("qwen3-next-80b-a3b-instruct", "h200-141gb");
    (s.parallel.tp, s.gpus) = (4, 4);
    s.engine.max_model_len = MaxLen::Value(8192);
    let p = planned(&s);
    let b = &p.settings.block_size;
    assert_eq!(b.origin, Origin::Adjusted);
    assert!(b.value > 16, "{}", b.value);
    assert_eq!(Some(b.value), p.replica.as_ref().map(|r| r.block_size));
    assert!(p
        .notes
        .iter()
        .any(|n| n.render(UnitSystem::Binary)
            == format!("Block size {} tokens: {}.", b.value, b.basis)));
}

#[test]
fn attention_backend_is_the_one_the_plan_reads() {
    // DeepSeek-V4 by GPU, as the form's placeholder shows it today.
    for gpu in ["b200-192gb", "rtx-5090-32gb", "h200-141gb"] {
        let s = scenario("deepseek-v4-flash", gpu);
        let p = planned(&s);
        let b = p.settings.attention_backend.as_ref().expect("V4's backend");
        assert_eq!(b.value.as_str(), runtime::v4_default_backend(&s), "{gpu}");
        assert_eq!(b.origin, Origin::Default);
    }
    // A dense model: vLLM's choice is not modelled.
    let mut s = scenario("llama-3.1-8b-instruct", "h100-sxm-80gb");
    assert_eq!(planned(&s).settings.attention_backend, None);
    s.engine.attention_backend = Some(AttentionBackend::Flashinfer);
    let p = planned(&s);
    let b = p.settings.attention_backend.as_ref().expect("given");
    assert_eq!((b.value.as_str(), b.origin), ("FLASHINFER", Origin::Given));
}

#[test]
fn in_flight_and_speculative_tokens() {
    let mut s = scenario("llama-3.1-8b-instruct", "h100-sxm-80gb");
    s.parallel.pp = 2;
    s.gpus = 2;
    let p = planned(&s);
    let st = &p.settings;
    assert_eq!(
        st.in_flight_tokens,
        runtime::in_flight_tokens(
            s.version,
            2,
            st.max_num_batched_tokens.value,
            runtime::async_scheduling(&s),
            runtime::runner_v2(&s),
        )
    );
    assert_eq!(st.num_speculative_tokens, None);
    assert_eq!(st.max_model_len.origin, Origin::Default);
    assert_eq!(st.max_model_len.value, s.model.default_max_model_len());

    let mut s = scenario("deepseek-v4-flash", "b200-192gb");
    s.engine.speculative = Some(Speculative {
        method: SpecMethod::Mtp("mtp"),
        num_speculative_tokens: 1,
        drafter_weights: None,
        draft_model: None,
        count_assumed: true,
    });
    s.engine.max_model_len = MaxLen::Value(4096);
    let p = planned(&s);
    let n = p
        .settings
        .num_speculative_tokens
        .as_ref()
        .expect("speculative");
    assert_eq!((n.value, n.origin), (1, Origin::Assumed));
    assert_eq!(p.settings.max_model_len.value, 4096);
    assert_eq!(p.settings.max_model_len.origin, Origin::Given);
}

// ---------------------------------------------------------------------------------------------
// The timeline.

fn examples() -> Vec<Scenario> {
    catalog::examples::examples()
        .into_iter()
        .map(|e| e.scenario)
        .collect()
}

/// Every rank's timeline against its own ledger figures.
fn figures_match(p: &Plan) {
    for r in &p.ranks {
        let t = p.timeline(r.rank).expect("a rank of the plan");
        let phases: Vec<StartPhase> = t.iter().map(|m| m.phase).collect();
        assert_eq!(phases, StartPhase::ALL);
        let get = |term: Term| r.line(term).map_or(0, |l| l.bytes);
        let mem = |ph: StartPhase| t[ph as usize].memory.clone();
        for m in t.iter().filter_map(|m| m.memory.as_ref()) {
            assert_eq!(m.capacity, get(Term::Total));
            assert_eq!(m.budget, get(Term::Budget));
            assert_eq!(m.in_use - m.held, get(Term::PreSnapshot));
        }
        let init = mem(StartPhase::InitCheck).unwrap();
        assert_eq!(init.held, 0);
        // The init check passes exactly when what is free covers the budget.
        assert_eq!(init.free(), get(Term::FreeAtStart));
        let load = mem(StartPhase::LoadWeights).unwrap();
        assert_eq!(load.held, i128::from(r.load_need.0));
        assert_eq!(load.free(), r.load_headroom);
        assert_eq!(
            load.held - load.transient,
            get(Term::Weights) + get(Term::Drafter)
        );
        let profile = mem(StartPhase::Profile).unwrap();
        assert_eq!(profile.transient, get(Term::Activation));
        let sizing = mem(StartPhase::KvSizing).unwrap();
        assert_eq!(sizing.kv, r.available_kv);
        assert_eq!(profile.held - profile.transient, sizing.held);
        match (mem(StartPhase::Serving), &p.replica) {
            (Some(serving), Some(_)) => {
                assert_eq!(serving.free(), r.free_after_start, "rank {}", r.rank);
                assert_eq!(serving.kv, i128::from(r.kv_pool.0));
                let alloc = mem(StartPhase::Allocation).unwrap();
                assert_eq!(alloc.free(), r.free_after_start - alloc.transient);
                assert_eq!(
                    alloc.free(),
                    r.allocation_headroom(p.settings.warm_up_after_pool)
                );
            }
            (None, None) => assert!(mem(StartPhase::Allocation).is_none()),
            (s, rep) => panic!("serving {s:?} with replica {}", rep.is_some()),
        }
    }
}

/// States: phases before the one the start stops at pass on every rank, the one it stops at
/// fails on some rank, later ones are never reached; a start that passes every check passes
/// every phase.
fn states_match(p: &Plan) {
    let gate_refused = p
        .checks
        .iter()
        .any(|c| c.phase == Phase::UnifiedGate && !c.ok);
    for r in &p.ranks {
        let t = p.timeline(r.rank).unwrap();
        for m in &t {
            let want = match p.stopped_at {
                _ if gate_refused => PhaseState::NotReached,
                None => PhaseState::Ok,
                Some(stop) if m.phase < stop => PhaseState::Ok,
                Some(stop) if m.phase > stop => PhaseState::NotReached,
                Some(_) => m.state,
            };
            assert_eq!(m.state, want, "rank {} {:?}", r.rank, m.phase);
        }
    }
    if let (Some(stop), false) = (p.stopped_at, gate_refused) {
        let failing: Vec<u32> = p
            .ranks
            .iter()
            .filter(|r| p.timeline(r.rank).unwrap()[stop as usize].state == PhaseState::Fail)
            .map(|r| r.rank)
            .collect();
        let check = p.first_failure().expect("a failing check");
        if let Some(rank) = check.rank {
            assert!(
                failing.contains(&rank),
                "{stop:?}: {failing:?} lacks rank {rank}"
            );
        }
        assert!(!failing.is_empty(), "{stop:?} fails on no rank");
    } else {
        assert!(p.starts() || gate_refused, "{:?}", p.first_failure());
    }
}

#[test]
fn timeline_reads_each_ranks_figures() {
    let mut scenarios = examples();
    let mut s = scenario("llama-3.1-8b-instruct", "h100-sxm-80gb");
    s.engine.max_model_len = MaxLen::Value(8192);
    scenarios.push(s.clone());
    // Init fails: other processes hold more than the fraction leaves.
    let mut init = s.clone();
    init.runtime.other_tenants = headroom::calc::units::Bytes(20 << 30);
    scenarios.push(init);
    // Load fails: 405B in FP8 on one GPU.
    scenarios.push(scenario("llama-3.1-405b-instruct-fp8", "h100-sxm-80gb"));
    // Capacity fails on a pipeline: the full context of a 70B model on two stages.
    let mut cap = scenario("llama-3.1-70b-instruct", "h100-sxm-80gb");
    (cap.parallel.pp, cap.gpus) = (2, 2);
    scenarios.push(cap);
    // A pinned pool larger than the profile run leaves room for.
    let mut pin = s.clone();
    pin.engine.kv_cache_memory_bytes = Some(70 << 30);
    scenarios.push(pin);
    // A pinned pool skips the sizing, not the profile run, whose batch no longer fits.
    let mut profile = scenario("llama-3.1-8b-instruct", "l4-24gb");
    profile.engine.max_model_len = MaxLen::Value(8192);
    profile.engine.kv_cache_memory_bytes = Some(1 << 30);
    profile.engine.max_num_batched_tokens = Some(1 << 20);
    scenarios.push(profile);
    let mut stops = Vec::new();
    for s in &scenarios {
        let p = planned(s);
        figures_match(&p);
        states_match(&p);
        stops.push(p.stopped_at);
    }
    // The scenarios above stop where they were built to.
    for want in [
        StartPhase::InitCheck,
        StartPhase::LoadWeights,
        StartPhase::Profile,
        StartPhase::KvSizing,
        StartPhase::Capacity,
        StartPhase::Allocation,
    ] {
        assert!(stops.contains(&Some(want)), "{want:?} not in {stops:?}");
    }
    assert!(stops.contains(&None));
}

#[test]
fn timeline_stops_at_the_failing_phase() {
    let mut s = scenario("llama-3.1-8b-instruct", "h100-sxm-80gb");
    s.engine.max_model_len = MaxLen::Value(8192);
    s.runtime.other_tenants = headroom::calc::units::Bytes(20 << 30);
    let p = planned(&s);
    assert_eq!(p.stopped_at, Some(StartPhase::InitCheck));
    let t = p.timeline(0).unwrap();
    assert_eq!(t[0].state, PhaseState::Fail);
    assert!(t[1..].iter().all(|m| m.state == PhaseState::NotReached));
    // Figures stay for the phases the planner has them for, reached or not.
    assert!(t[StartPhase::KvSizing as usize].memory.is_some());
    assert!(t[StartPhase::Serving as usize].memory.is_none());
    assert!(p.timeline(1).is_none());

    // KV checks run rank by rank: past the rank vLLM stopped at nothing is reached.
    let mut cap = scenario("llama-3.1-70b-instruct", "h100-sxm-80gb");
    (cap.parallel.pp, cap.gpus) = (2, 2);
    let p = planned(&cap);
    assert_eq!(p.stopped_at, Some(StartPhase::Capacity));
    let k = p
        .first_failure()
        .and_then(|c| c.rank)
        .expect("the capacity check's rank");
    for r in &p.ranks {
        let state = p.timeline(r.rank).unwrap()[StartPhase::Capacity as usize].state;
        let want = match r.rank.cmp(&k) {
            std::cmp::Ordering::Less => PhaseState::Ok,
            std::cmp::Ordering::Equal => PhaseState::Fail,
            std::cmp::Ordering::Greater => PhaseState::NotReached,
        };
        assert_eq!(state, want, "rank {}", r.rank);
    }
}

#[test]
fn knobs_act_where_the_readme_says() {
    let acts = |i: Input| -> Vec<StartPhase> {
        StartPhase::ALL
            .into_iter()
            .filter(|p| p.knobs().contains(&i))
            .collect()
    };
    assert_eq!(
        acts(Input::Util),
        [StartPhase::InitCheck, StartPhase::KvSizing]
    );
    assert_eq!(acts(Input::KvBytes), [StartPhase::KvSizing]);
    assert_eq!(acts(Input::MaxNumBatchedTokens), [StartPhase::Profile]);
    assert_eq!(acts(Input::Eager), [StartPhase::Allocation]);
    assert_eq!(acts(Input::MaxModelLen), [StartPhase::Capacity]);
}

#[test]
fn settings_without_a_plan_are_the_plans() {
    // `calc::settings` is what the form shows for a refused scenario; for an accepted one it
    // must be the plan's own, on every catalog model (its own length and a short one) on a few
    // GPUs, and on the examples.
    let mut all = examples();
    for m in catalog::models() {
        for gpu in ["h100-sxm-80gb", "l4-24gb", "b200-192gb"] {
            let mut s = scenario(&m.id, gpu);
            all.push(s.clone());
            s.engine.max_model_len = MaxLen::Value(4096);
            all.push(s);
        }
    }
    let mut compared = 0;
    for s in &all {
        if let Ok(p) = plan(s) {
            assert_eq!(headroom::calc::settings(s), p.settings, "{}", s.model.name);
            compared += 1;
        }
    }
    assert!(compared > 100, "only {compared} scenarios planned");
}

#[test]
fn settings_of_a_refused_scenario_are_vllms_defaults() {
    let mut s = scenario("llama-3.1-8b-instruct", "h100-sxm-80gb");
    s.engine.max_model_len = MaxLen::Value(1 << 30);
    assert!(plan(&s).is_err());
    let st = headroom::calc::settings(&s);
    let (mnbt, mns, _) = runtime::batch_defaults(&s, runtime::batch_defaults_len(&s));
    assert_eq!(st.max_model_len.value, 1 << 30);
    assert_eq!(
        (st.max_num_batched_tokens.value, st.max_num_seqs.value),
        (mnbt, mns)
    );
    assert_eq!(st.gpu_memory_utilization.value, 0.92);
}
