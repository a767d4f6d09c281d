//! Three engines' "fraction" (issue 17, item 7): the same number read three ways on the same
//! rank, each formula's figure from the plan's own lines.

use headroom::calc::plan as run_plan;
use headroom::calc::plan::Term;
use headroom::calc::units::UnitSystem;
use headroom::catalog;
use headroom::contrast::contrast;

#[test]
fn three_fractions_three_formulas() {
    let mut s = headroom::calc::Scenario::new(
        catalog::model("llama-3.1-70b-instruct")
            .unwrap()
            .model
            .clone(),
        catalog::gpu("h100-sxm-80gb").unwrap().gpu.clone(),
    );
    (s.parallel.tp, s.gpus) = (4, 4);
    s.engine.gpu_memory_utilization = Some(0.9);
    let p = run_plan(&s).unwrap();
    let (rank, f, rows) = contrast(&p, UnitSystem::Binary).unwrap();
    assert_eq!(f, 0.9);
    let r = &p.ranks[rank as usize];
    let get = |t: Term| r.line_bytes(t);
    assert_eq!(rows.len(), 3);
    assert_eq!(rows[0].kv_bytes, r.available_kv);
    let w = get(Term::Weights) + get(Term::Drafter);
    assert_eq!(
        rows[1].kv_bytes,
        (get(Term::FreeAtStart) as f64 * 0.9) as i128 - w
    );
    let trt = get(Term::Total)
        - get(Term::PreSnapshot)
        - w
        - get(Term::Activation)
        - get(Term::OtherConsumption);
    assert_eq!(rows[2].kv_bytes, (trt as f64 * 0.9) as i128);
    // The same 0.9 gives three pools: SGLang's (of the memory free before loading) and
    // TensorRT-LLM's (of what is left after the weights) both differ from vLLM's.
    assert_ne!(rows[0].kv_bytes, rows[1].kv_bytes);
    assert_ne!(rows[0].kv_bytes, rows[2].kv_bytes);
    for row in &rows {
        assert_eq!(
            row.tokens,
            Some((row.kv_bytes as u64) / r.kv_bytes_per_token)
        );
        assert!(row.formula.ends_with("GiB"), "{}", row.formula);
    }
}
