//! What fixes it (issue 17, item 3): every fix offered starts when planned, its link opens the
//! same inputs, and the fixes a failing scenario needs are there: more TP for a load failure,
//! the longest max-model-len for a capacity failure, the balanced split for seed 000's stages.

use headroom::calc::plan;
use headroom::fixes::{fixes, Fix};
use headroom::input::query::{decode, UrlState};
use headroom::input::{scenario, Field};

fn state(pairs: &[(Field, &str)]) -> UrlState {
    let mut st = UrlState::default();
    for (f, t) in pairs {
        st.set(*f, t).unwrap();
    }
    st
}

fn offered(pairs: &[(Field, &str)]) -> (bool, Vec<Fix>) {
    let st = state(pairs);
    let s = scenario(&st).unwrap();
    let p = plan(&s).unwrap();
    let f = fixes(&st, &s, &p);
    for fix in &f {
        let fixed = plan(&scenario(&fix.state).unwrap()).unwrap();
        assert!(fixed.starts(), "{pairs:?}: {} does not start", fix.title);
        assert!(fix.result.starts_with("starts: "), "{}", fix.result);
        let link = fix.link.trim_start_matches('?');
        assert_eq!(decode(link).state, fix.state, "{}", fix.link);
    }
    (p.starts(), f)
}

fn keys(f: &[Fix]) -> Vec<&'static str> {
    f.iter().map(|f| f.key).collect()
}

#[test]
fn a_load_failure_is_fixed_by_more_tp() {
    let (starts, f) = offered(&[(Field::Model, "llama-3.1-70b-instruct")]);
    assert!(!starts);
    let tp = f.iter().find(|f| f.key == "more-tp").expect("more TP");
    // TP=2 loads but one full-length request does not fit; TP=4 starts.
    assert!(
        tp.title.starts_with("--tensor-parallel-size 4 (now 1)"),
        "{}",
        tp.title
    );
}

#[test]
fn a_capacity_failure_is_fixed_by_a_shorter_context_or_more_tp() {
    let (starts, f) = offered(&[(Field::Model, "llama-3.1-70b-instruct"), (Field::Pp, "2")]);
    assert!(!starts);
    let k = keys(&f);
    // fp8 halves the 20 GiB one request needs, which still exceeds the 4.67 GiB pool: not
    // offered, as no utilization up to the init check's limit is.
    assert_eq!(k, ["more-tp", "max-model-len"]);
    // At a length of 32k, fp8 KV is enough: the fix is offered where it starts.
    let (_, f) = offered(&[
        (Field::Model, "llama-3.1-70b-instruct"),
        (Field::Pp, "2"),
        (Field::MaxModelLen, "40000"),
    ]);
    assert!(keys(&f).contains(&"fp8-kv"), "{:?}", keys(&f));
}

#[test]
fn seed_000_gets_a_balanced_split() {
    let (starts, f) = offered(&[(Field::Example, "s1-three-cards")]);
    assert!(!starts);
    let k = keys(&f);
    let split = f
        .iter()
        .find(|f| f.key == "pp-split")
        .expect("a balanced split");
    // The article's own answer: 14,15,14 -> 15,16,12, with the drafter and head as about 3.6
    // layers on the last stage (3.5 from this plan's weights).
    assert!(
        split
            .title
            .starts_with("--pp-layer-partition 15,16,12 (now 14,15,14)"),
        "{}",
        split.title
    );
    assert!(k.contains(&"utilization"), "{k:?}");
}

#[test]
fn a_started_scenario_is_offered_more_requests() {
    let st = state(&[(Field::Model, "llama-3.1-8b-instruct")]);
    let s = scenario(&st).unwrap();
    let p = plan(&s).unwrap();
    let now = p.replica.as_ref().unwrap().max_concurrency;
    let (starts, f) = offered(&[(Field::Model, "llama-3.1-8b-instruct")]);
    assert!(starts);
    assert!(!f.is_empty());
    for fix in &f {
        let more = plan(&scenario(&fix.state).unwrap())
            .unwrap()
            .replica
            .unwrap()
            .max_concurrency;
        assert!(more > now, "{}: {more} <= {now}", fix.title);
    }
}
