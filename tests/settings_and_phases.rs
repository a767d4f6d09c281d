//! What the Plan carries for the views: the resolved engine settings (`Plan::settings`) with
//! where each came from, checked against the calc rules the views call today, on catalog
//! scenarios.

use headroom::calc::plan::Origin;
use headroom::calc::runtime;
use headroom::calc::scenario::{MaxLen, Scenario, Speculative};
use headroom::calc::units::UnitSystem;
use headroom::calc::version::VllmVersion;
use headroom::calc::{plan, Plan};
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

    s.version = VllmVersion {
        major: 0,
        minor: 19,
    };
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
        assert_eq!(b.value, runtime::v4_default_backend(&s), "{gpu}");
        assert_eq!(b.origin, Origin::Default);
    }
    // A dense model: vLLM's choice is not modelled.
    let mut s = scenario("llama-3.1-8b-instruct", "h100-sxm-80gb");
    assert_eq!(planned(&s).settings.attention_backend, None);
    s.engine.attention_backend = Some("FLASHINFER");
    let p = planned(&s);
    let b = p.settings.attention_backend.as_ref().expect("given");
    assert_eq!((b.value, b.origin), ("FLASHINFER", Origin::Given));
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
        method: "mtp".into(),
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
