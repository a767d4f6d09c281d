//! Guided walkthroughs of the three seed systems: each opens in its article's starting state
//! and changes one input per step, in the article's order. Each step is a state (and a link,
//! with the `step` key); what moved between two steps is read from the two plans, never
//! written as prose about a figure.

use crate::calc::plan::{Plan, Term};
use crate::calc::units::{human, thousands, UnitSystem};
use crate::calc::{self};
use crate::input::query::{self, UrlState};
use crate::input::Field;

/// One step: its title and the one input it sets (none for the article's start).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Step {
    pub title: &'static str,
    pub set: Option<(Field, &'static str)>,
}

/// A seed system's walkthrough.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Walk {
    /// The example it walks (`catalog::examples`).
    pub example: &'static str,
    pub title: &'static str,
    pub steps: &'static [Step],
}

const fn step(title: &'static str, field: Field, text: &'static str) -> Step {
    Step {
        title,
        set: Some((field, text)),
    }
}

/// The three walkthroughs, in the seed articles' order of events.
pub const WALKS: [Walk; 3] = [
    Walk {
        example: "s1-three-cards",
        title: "Seed 000: two budgets fail at the same place, and the split that starts",
        steps: &[
            step(
                "The article's start: gpu-memory-utilization 0.85",
                Field::Util,
                "0.85",
            ),
            step("Raise the fraction to 0.90", Field::Util, "0.90"),
            step("And to 0.95", Field::Util, "0.95"),
            // The upstream reports ran without --max-model-len: vLLM plans the model's whole
            // context and checks that one such request fits, where `auto` would shrink it.
            step(
                "As the upstream reports ran: no --max-model-len, the model's full 1,048,576 tokens",
                Field::MaxModelLen,
                "1048576",
            ),
            step(
                "Move a layer off the last stage: 15,15,13 (the report: KV has 0.76 GiB, needs 1.24)",
                Field::PpPartition,
                "15,15,13",
            ),
            step(
                "Balance the drafter as layers: 15,16,12",
                Field::PpPartition,
                "15,16,12",
            ),
        ],
    },
    Walk {
        example: "s2-unified-gate",
        title: "Seed 002: the unified-memory start gate, row by row",
        steps: &[
            step("Pin the pool at 8e9 bytes", Field::KvBytes, "8e9"),
            step("10e9, the article's pin", Field::KvBytes, "10e9"),
            step("16e9", Field::KvBytes, "16e9"),
            step("20e9", Field::KvBytes, "20e9"),
        ],
    },
    Walk {
        example: "s3-synthetic-tp4",
        title: "Seed 003: the pool is preallocated; max-num-seqs x max-model-len is demand",
        steps: &[
            Step {
                title: "The article's worker: the pool of each rank",
                set: None,
            },
            step(
                "256 sequences of full length: demand, not a reservation",
                Field::MaxNumSeqs,
                "256",
            ),
        ],
    },
];

/// The walkthrough of an example, if it has one.
pub fn walk_of(example: &str) -> Option<&'static Walk> {
    WALKS.iter().find(|w| w.example == example)
}

/// The state of step `k` (1-based) of `walk`: the example, every step's input up to `k` (the
/// later value of an input replacing the earlier), the unit the page shows, and the step.
pub fn step_state(walk: &Walk, k: usize, unit: Option<&str>) -> UrlState {
    let mut st = UrlState::default();
    let _ = st.set(Field::Example, walk.example);
    if let Some(u) = unit {
        let _ = st.set(Field::Unit, u);
    }
    for s in walk.steps.iter().take(k) {
        if let Some((f, t)) = s.set {
            let _ = st.set(f, t);
        }
    }
    let _ = st.set(Field::Step, &k.to_string());
    st
}

/// A step planned: its state, link and plan (or why there is none).
#[derive(Clone, Debug, PartialEq)]
pub struct Planned {
    pub state: UrlState,
    pub link: String,
    pub plan: Result<Plan, String>,
}

/// Every step of `walk`, planned.
pub fn plan_steps(walk: &Walk, unit: Option<&str>) -> Vec<Planned> {
    (1..=walk.steps.len())
        .map(|k| {
            let state = step_state(walk, k, unit);
            let plan = crate::input::scenario(&state)
                .map_err(|e| e.message)
                .and_then(|s| calc::plan(&s).map_err(|e| e.to_string()));
            Planned {
                link: query::link(&state),
                state,
                plan,
            }
        })
        .collect()
}

/// The rank a step's figures are read on: the one that decides, else the last.
fn rank_of(p: &Plan) -> usize {
    p.deciding_rank()
        .map_or(p.ranks.len().saturating_sub(1), |r| r as usize)
        .min(p.ranks.len().saturating_sub(1))
}

/// What a step shows, read from its plan and, after the first, what moved since the step
/// before: the budget, the load phase's peak, the KV memory, the verdict, the demand.
pub fn moved(prev: Option<&Plan>, p: &Plan, unit: UnitSystem) -> Vec<String> {
    let a = |b: i128| human(b, unit);
    let r = &p.ranks[rank_of(p)];
    let budget = r.line_bytes(Term::Budget);
    let load = p
        .ranks
        .iter()
        .map(|r| i128::from(r.load_need.0))
        .max()
        .unwrap_or(0);
    let kv = p.ranks.iter().map(|r| r.available_kv).min().unwrap_or(0);
    let mut out = Vec::new();
    match prev {
        None => {
            out.push(format!("The plan {}.", p.outcome()));
            out.push(format!(
                "Rank {}: budget {}, the load phase's peak {} (the heaviest rank), KV memory {} (the least of any rank).",
                r.rank,
                a(budget),
                a(load),
                a(kv)
            ));
        }
        Some(q) => {
            let qr = &q.ranks[rank_of(q).min(q.ranks.len().saturating_sub(1))];
            let q_budget = qr.line_bytes(Term::Budget);
            let q_load = q
                .ranks
                .iter()
                .map(|r| i128::from(r.load_need.0))
                .max()
                .unwrap_or(0);
            let q_kv = q.ranks.iter().map(|r| r.available_kv).min().unwrap_or(0);
            let change = |what: &str, from: i128, to: i128| {
                if from == to {
                    format!("{what} unchanged at {}", a(to))
                } else {
                    format!(
                        "{what} {} -> {} ({}{})",
                        a(from),
                        a(to),
                        if to > from { "+" } else { "-" },
                        a((to - from).abs())
                    )
                }
            };
            out.push(format!(
                "{}; {}; {}.",
                change("Budget", q_budget, budget),
                change("the load phase's peak", q_load, load),
                change("KV memory (the least of any rank)", q_kv, kv)
            ));
            let (was, is) = (q.outcome(), p.outcome());
            out.push(if was == is {
                format!("The plan still {is}.")
            } else {
                format!("Now the plan {is}; before, it {was}.")
            });
        }
    }
    if let (Some(d), Some(rep)) = (&p.demand, &p.replica) {
        let demand = d.all_seqs_bytes_replica.min(i128::MAX as u128) as i128;
        out.push(format!(
            "Demand: max-num-seqs {} x max-model-len {} = {} across the replica, against a pool that holds {:.2} full-length requests: demand, not a reservation.",
            thousands(u128::from(d.max_num_seqs)),
            thousands(u128::from(rep.max_model_len)),
            a(demand),
            rep.max_concurrency
        ));
    }
    // A split of the pipeline: what the last stage holds beyond the first, in layers, and the
    // balanced split it gives ((pp - 1) L + (L - extras) = layers).
    if p.pp > 1 && prev.is_some_and(|q| q.pp_partition != p.pp_partition) {
        if let Some(extras) = crate::fixes::last_stage_extras(p) {
            let layers: u32 = p.pp_partition.iter().sum();
            if let Ok(b) = crate::calc::solve::balanced_partition(layers, p.pp, extras, 0) {
                out.push(format!(
                    "The last stage holds the head and the drafter, about {extras:.1} layers' worth beyond the first stage's embedding: {} gives {}.",
                    b.equation,
                    b.partition
                        .iter()
                        .map(u32::to_string)
                        .collect::<Vec<_>>()
                        .join(",")
                ));
            }
        }
    }
    if let Some(g) = &p.unified {
        out.push(format!(
            "The start gate needs {} against MemAvailable {}: {}.",
            a(i128::from(g.needs.0)),
            a(i128::from(g.mem_available.0)),
            if g.ok {
                "it passes"
            } else {
                "it refuses the start"
            }
        ));
        // The second 8 GiB check: the memory guard, once the rank holds what it holds.
        out.push(format!(
            "The memory guard: {} of MemAvailable left once the rank holds {}, against its {} threshold: {}.",
            a(g.after_start),
            a(i128::from(g.total.0)),
            a(i128::from(g.guard_threshold.0)),
            if g.guard_ok { "the rank lives" } else { "the guard kills the rank" }
        ));
    }
    out
}
