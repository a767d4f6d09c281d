//! `Plan::rank_groups` on catalog scenarios: the one "identical ranks" rule the rank chart, the
//! page's ledger and the CLI share. Before the chart and the ledger switched to it, their own
//! rule (same stage, same terms and bytes) and the CLI's `same_figures` were run beside it on
//! 9,869 catalog plans and gave the same groups on every one.

use headroom::calc::scenario::{MaxLen, Parallel};
use headroom::calc::{self, ranks, Plan, Scenario};
use headroom::catalog;

/// The groups partition the ranks in order, and every rank has its group's figures.
fn check_partition(p: &Plan) {
    let groups = p.rank_groups();
    let flat: Vec<u32> = groups.iter().flat_map(|g| g.ranks.clone()).collect();
    assert_eq!(flat, p.ranks.iter().map(|r| r.rank).collect::<Vec<_>>());
    for g in &groups {
        assert_eq!(g.plan.rank, g.first());
        for r in &g.ranks {
            assert!(ranks::same_figures(g.plan, &p.ranks[*r as usize]));
        }
    }
    // Neighbouring groups differ: a run is never cut short.
    for w in groups.windows(2) {
        assert!(!ranks::same_figures(w[0].plan, w[1].plan));
    }
}

/// Every catalog model on every GPU, over six layouts and two engine settings: the TP ranks
/// of a stage plan the same figures, so each stage is one group.
#[test]
fn each_stage_is_one_group_across_the_catalog() {
    let mut plans = 0;
    for m in catalog::models() {
        for g in catalog::gpus() {
            for (tp, pp) in [(1, 1), (4, 1), (16, 1), (2, 2), (8, 2), (2, 3)] {
                for short in [false, true] {
                    let mut s = Scenario::new(m.model.clone(), g.gpu.clone());
                    s.parallel = Parallel {
                        tp,
                        pp,
                        ..Parallel::default()
                    };
                    s.gpus = tp * pp;
                    if short {
                        s.engine.max_model_len = MaxLen::Value(8_192);
                        s.engine.gpu_memory_utilization = Some(0.7);
                    }
                    let Ok(p) = calc::plan(&s) else { continue };
                    plans += 1;
                    check_partition(&p);
                    let stages: Vec<u32> = p.rank_groups().iter().map(|g| g.plan.pp_rank).collect();
                    assert_eq!(
                        stages,
                        (0..p.pp).collect::<Vec<_>>(),
                        "{} on {} at TP={tp} PP={pp}",
                        m.id,
                        g.gpu.id
                    );
                }
            }
        }
    }
    assert!(plans > 4_000, "{plans} plans");
}

/// The three seed examples: seed 000's three stages, seed 002's two GB10s, seed 003's four
/// synthetic ranks.
#[test]
fn the_examples_group_by_stage() {
    let expect: [(&str, &[&[u32]]); 3] = [
        ("s1-three-cards", &[&[0], &[1], &[2]]),
        ("s2-unified-gate", &[&[0, 1]]),
        ("s3-synthetic-tp4", &[&[0, 1, 2, 3]]),
    ];
    for (id, groups) in expect {
        let e = catalog::examples::example(id).unwrap();
        let p = calc::plan(&e.scenario).unwrap();
        check_partition(&p);
        let got: Vec<Vec<u32>> = p.rank_groups().into_iter().map(|g| g.ranks).collect();
        assert_eq!(
            got,
            groups.iter().map(|g| g.to_vec()).collect::<Vec<_>>(),
            "{id}"
        );
    }
}
