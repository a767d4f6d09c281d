//! The A/B comparison's link (issue 17, item 6): `b.` keys are scenario B's inputs, checked as
//! the inputs themselves, written after A's and read back; B is A with them on top; the CLI,
//! which plans one scenario, refuses them by name.

use headroom::input::query::{decode, encode};
use headroom::input::{scenario, Field};

#[test]
fn b_keys_round_trip_and_make_scenario_b() {
    let d = decode("?v=1&model=llama-3.1-70b-instruct&tp=2&b.tp=4&b.kv-dtype=fp8");
    assert!(d.ignored.is_empty(), "{:?}", d.ignored);
    let b: Vec<(Field, &str)> = d.state.iter_b().collect();
    assert_eq!(b, [(Field::Tp, "4"), (Field::KvDtype, "fp8")]);
    let again = decode(&encode(&d.state));
    assert_eq!(again.state, d.state);
    let bs = d.state.b_state().unwrap();
    assert_eq!(bs.get(Field::Tp), Some("4"));
    assert_eq!(bs.get(Field::Model), Some("llama-3.1-70b-instruct"));
    assert!(bs.iter_b().next().is_none());
    let (a, b) = (scenario(&d.state).unwrap(), scenario(&bs).unwrap());
    assert_eq!((a.parallel.tp, b.parallel.tp), (2, 4));
    // A value B's input would refuse is named, and the page's own keys cannot differ.
    let bad = decode("?v=1&b.tp=0&b.unit=gb&b.nonsense=1");
    let keys: Vec<&str> = bad.ignored.iter().map(|i| i.key.as_str()).collect();
    assert_eq!(keys, ["b.tp", "b.unit", "b.nonsense"]);
    assert!(bad.state.b_state().is_none());
}

#[test]
fn the_cli_plans_one_scenario() {
    let out = headroom::cli::run(&[
        "plan".into(),
        "--url".into(),
        "?v=1&model=llama-3.1-8b-instruct&b.util=0.8".into(),
    ]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr
            .contains("--url: b.util: the link compares two scenarios"),
        "{}",
        out.stderr
    );
}
