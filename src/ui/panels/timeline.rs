//! The phase timeline's markup: one rank's start, phase by phase (`Plan::timeline`), with the
//! memory at each moment against the physical capacity and the budget, the knobs that act
//! there and the common ones that do not, each phase's check in the plan's own words, and how
//! the other ranks differ. Every sentence reads the plan; none of it computes a figure.

use crate::calc::input::Input;
use crate::calc::plan::{Phase, Plan};
use crate::calc::timeline::{PhaseMemory, PhaseMoment, PhaseState, StartPhase};
use crate::calc::units::UnitSystem;
use crate::ui::charts::{self, amount, xml_escape as esc};

/// The knobs people reach for first. Each phase names those of them that act there and those
/// that do not: the utilization acts at the init check and KV sizing only, the pin at KV
/// sizing, the batched tokens at the profile run, eager mode at the graphs, the length at the
/// capacity check and not on the pool.
pub const COMMON_KNOBS: [Input; 5] = [
    Input::Util,
    Input::KvBytes,
    Input::MaxNumBatchedTokens,
    Input::Eager,
    Input::MaxModelLen,
];

/// The `data-testid` of a phase's entry (the allocation and graph capture is `graphs`).
pub fn phase_testid(p: StartPhase) -> String {
    let key = match p {
        StartPhase::Allocation => "graphs",
        other => other.key(),
    };
    format!("timeline-phase-{key}")
}

/// The phase's title in the list.
pub fn phase_title(p: StartPhase) -> &'static str {
    match p {
        StartPhase::InitCheck => "Init check",
        StartPhase::LoadWeights => "Load the weights",
        StartPhase::Profile => "Profile run",
        StartPhase::KvSizing => "KV sizing",
        StartPhase::Capacity => "Capacity check (the pool in blocks)",
        StartPhase::Allocation => "Allocate the pool, warm up, capture CUDA graphs",
        StartPhase::Serving => "Serving",
    }
}

/// The check that decides a phase, as the plan filed it.
fn check_phase(p: StartPhase) -> Option<Phase> {
    match p {
        StartPhase::InitCheck => Some(Phase::Init),
        StartPhase::LoadWeights => Some(Phase::Load),
        StartPhase::KvSizing => Some(Phase::KvSizing),
        StartPhase::Capacity => Some(Phase::Capacity),
        StartPhase::Allocation => Some(Phase::Allocation),
        StartPhase::Profile | StartPhase::Serving => None,
    }
}

/// The rank the timeline opens at: the one that decides (the first failure's, else the
/// pool's limit), else rank 0.
pub fn default_rank(plan: &Plan) -> u32 {
    plan.deciding_rank().unwrap_or(0)
}

/// What the memory is at a phase, in one sentence.
fn memory_sentence(phase: StartPhase, m: &PhaseMemory, unit: UnitSystem) -> String {
    let a = |b: i128| amount(b, unit);
    let free = m.free();
    let mut s = format!(
        "In use {} of {} physical ({}), against the budget of {}",
        a(m.in_use),
        a(m.capacity),
        if free >= 0 {
            format!("{} free", a(free))
        } else {
            format!("{} over", a(-free))
        },
        a(m.budget)
    );
    match phase {
        StartPhase::InitCheck => s.push_str(&format!(
            "; free at the snapshot must cover the budget: {} {} {}",
            a(free),
            if free >= m.budget { "≥" } else { "<" },
            a(m.budget)
        )),
        StartPhase::LoadWeights if m.transient > 0 => s.push_str(&format!(
            "; {} of it is the load's transient peak above the weights",
            a(m.transient)
        )),
        StartPhase::LoadWeights => {
            s.push_str("; the budget does not cap loading, only the physical memory does")
        }
        StartPhase::Profile => s.push_str(&format!(
            "; the activation peak of {} is on top of the weights and the other use",
            a(m.transient)
        )),
        StartPhase::KvSizing => s.push_str(&format!("; {} left for the KV cache", a(m.kv))),
        StartPhase::Capacity => s.push_str(&format!("; the pool will take {}", a(m.kv))),
        StartPhase::Allocation => s.push_str(&format!(
            "; the pool of {} is allocated{}",
            a(m.kv),
            if m.transient > 0 {
                format!(
                    ", and the warm-up brings back {} of activations",
                    a(m.transient)
                )
            } else {
                String::new()
            }
        )),
        StartPhase::Serving => s.push_str(&format!("; {} of it is the KV pool", a(m.kv))),
    }
    s.push('.');
    s
}

/// The timeline of `rank` (or the deciding rank when it is not one of the plan's), as HTML.
pub fn timeline_html(plan: &Plan, rank: Option<u32>, unit: UnitSystem) -> String {
    let rank = rank
        .filter(|r| (*r as usize) < plan.ranks.len())
        .unwrap_or_else(|| default_rank(plan));
    let Some(t) = plan.timeline(rank) else {
        return String::new();
    };
    let groups = plan.rank_groups();
    let mine = groups.iter().position(|g| g.ranks.contains(&rank));
    let mut h =
        format!(r#"<div class="timeline" data-testid="phase-timeline" data-rank="{rank}">"#);
    // Which rank: a choice where ranks differ.
    if groups.len() > 1 {
        h.push_str(r#"<p class="timeline-rank"><label>Rank <select data-testid="timeline-rank">"#);
        for g in &groups {
            let r = g.plan;
            h.push_str(&format!(
                r#"<option value="{}"{}>{} (stage {}, layers {}–{})</option>"#,
                g.ranks[0],
                if g.ranks.contains(&rank) {
                    " selected"
                } else {
                    ""
                },
                esc(&charts::ranks_label(&g.ranks)),
                r.pp_rank,
                r.layers.0,
                r.layers.1.saturating_sub(1)
            ));
        }
        h.push_str(&format!(
            "</select></label> <small>{} distinct ranks; the grey ticks on the chart are the others.{}</small></p>",
            groups.len(),
            if plan.deciding_rank() == Some(rank) {
                " This one decides."
            } else {
                ""
            }
        ));
    } else if let Some(g) = mine.and_then(|i| groups.get(i)) {
        h.push_str(&format!(
            r#"<p class="timeline-rank"><small>{}: every rank starts alike.</small></p>"#,
            esc(&charts::ranks_label(&g.ranks))
        ));
    }
    h.push_str(&format!(
        r#"<figure class="chart" data-testid="timeline-chart"><div class="svg">{}</div><figcaption><ul class="legend">"#,
        charts::timeline_chart(plan, rank, unit)
    ));
    for (c, name) in charts::TIMELINE_SEGMENTS {
        h.push_str(&format!(
            r#"<li><svg class="swatch" viewBox="0 0 10 10" aria-hidden="true"><rect width="10" height="10" fill="{}"></rect></svg>{name}</li>"#,
            charts::css_color(c)
        ));
    }
    h.push_str(r##"<li><svg class="swatch" viewBox="0 0 10 10" aria-hidden="true"><rect y="4" width="10" height="2" fill="#010101"></rect></svg>budget (utilization)</li><li><svg class="swatch" viewBox="0 0 10 10" aria-hidden="true"><rect y="4" width="10" height="2" fill="#c82828"></rect></svg>physical capacity</li></ul><p class="chart-info" aria-live="polite">Hover or focus a bar (Tab, then the arrow keys) for its exact bytes.</p></figcaption></figure><ol class="phases">"##);
    for m in &t {
        h.push_str(&phase_html(plan, rank, m, &groups, unit));
    }
    h.push_str("</ol></div>");
    h
}

/// One phase's entry: its state, the memory, the check's sentence, the knobs, other ranks.
fn phase_html(
    plan: &Plan,
    rank: u32,
    m: &PhaseMoment,
    groups: &[crate::calc::ranks::RankGroup<'_>],
    unit: UnitSystem,
) -> String {
    let state = charts::state_key(m.state);
    let mut h = format!(
        r#"<li class="{state}" data-testid="{}" data-state="{state}"><strong>{} {}</strong> <span class="state">{}</span>"#,
        phase_testid(m.phase),
        charts::state_mark(m.state),
        phase_title(m.phase),
        charts::state_word(m.state)
    );
    let check = check_phase(m.phase).and_then(|ph| {
        // The failing check where this phase failed, else the phase's passing one.
        plan.checks
            .iter()
            .find(|c| c.phase == ph && !c.ok)
            .or_else(|| plan.checks.iter().find(|c| c.phase == ph))
    });
    if let Some(c) = check.filter(|_| m.state != PhaseState::NotReached) {
        h.push_str(&format!(
            r#"<br><span class="check">{}</span>"#,
            esc(&c.message.render(unit))
        ));
        if let (false, Some(e)) = (c.ok, &c.vllm_error) {
            h.push_str(&format!(
                r#"<br><small>vLLM says: <code>{}</code></small>"#,
                esc(e)
            ));
        }
    }
    match &m.memory {
        Some(mem) => h.push_str(&format!(
            "<br><small>{}{}</small>",
            if m.state == PhaseState::NotReached {
                "Not reached; the figures it would have: "
            } else {
                ""
            },
            esc(&memory_sentence(m.phase, mem, unit))
        )),
        None => {
            h.push_str("<br><small>No figures: no KV pool was sized before this phase.</small>")
        }
    }
    // The knobs: those that act here, then the common ones that do not.
    let acts: Vec<&str> = m.knobs.iter().map(|k| k.flag()).collect();
    let not: Vec<&str> = COMMON_KNOBS
        .iter()
        .filter(|k| !m.knobs.contains(k))
        .map(|k| k.flag())
        .collect();
    h.push_str(&format!(
        r#"<br><small class="knobs">{}Does not act here: {}.</small>"#,
        if acts.is_empty() {
            String::new()
        } else {
            format!("Acts here: {}. ", esc(&acts.join(", ")))
        },
        esc(&not.join(", "))
    ));
    // Ranks that differ: the other distinct ranks' state and memory here.
    let mut differ: Vec<String> = Vec::new();
    for g in groups.iter().filter(|g| !g.ranks.contains(&rank)) {
        let Some(other) = plan.timeline(g.ranks[0]) else {
            continue;
        };
        let o = &other[m.phase as usize];
        let here = m.memory.as_ref().map(|x| x.in_use);
        let there = o.memory.as_ref().map(|x| x.in_use);
        if o.state != m.state || here != there {
            differ.push(format!(
                "{}: {}{}",
                charts::ranks_label(&g.ranks),
                charts::state_word(o.state),
                there
                    .map(|b| format!(", {} in use", amount(b, unit)))
                    .unwrap_or_default()
            ));
        }
    }
    if !differ.is_empty() {
        h.push_str(&format!(
            r#"<br><small class="differ">Other ranks: {}.</small>"#,
            esc(&differ.join("; "))
        ));
    }
    h.push_str("</li>");
    h
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calc::timeline::StartPhase;
    use crate::ui::plan_of;
    use crate::ui::Field;

    /// Every phase has its entry and state, in order; the failing one is the plan's.
    #[test]
    fn every_phase_has_its_entry_and_the_plans_state() {
        for pairs in [
            vec![(Field::Model, "llama-3.1-8b-instruct")],
            vec![(Field::Example, "s1-three-cards")],
            vec![(Field::Example, "s2-unified-gate")],
            vec![(Field::Example, "s3-synthetic-tp4")],
            // A load failure: 405B in FP8 on one GPU.
            vec![(Field::Model, "llama-3.1-405b-instruct-fp8")],
            // Capacity fails on the second stage's neighbour: 70B on two stages, full length.
            vec![(Field::Model, "llama-3.1-70b-instruct"), (Field::Pp, "2")],
        ] {
            let p = plan_of(&pairs);
            let rank = default_rank(&p);
            let h = timeline_html(&p, None, UnitSystem::Binary);
            let t = p.timeline(rank).unwrap();
            let mut at = 0;
            for m in &t {
                let tag = format!(
                    r#"data-testid="{}" data-state="{}""#,
                    phase_testid(m.phase),
                    charts::state_key(m.state)
                );
                let i = h[at..]
                    .find(&tag)
                    .unwrap_or_else(|| panic!("{pairs:?}: {tag}"));
                at += i;
            }
            // The failing phase is the plan's first failure, named in words.
            match p.first_failure() {
                Some(c) => {
                    let stop = p.stopped_at.unwrap();
                    assert_eq!(t[stop as usize].state, PhaseState::Fail, "{pairs:?}");
                    let said = esc(&c.message.render(UnitSystem::Binary));
                    assert!(h.contains(&said), "{pairs:?}: {said}");
                }
                None => assert!(!h.contains(r#"data-state="fail""#), "{pairs:?}"),
            }
        }
    }

    /// The knobs: the utilization acts at the init check and KV sizing only, the pin at KV
    /// sizing, the batched tokens at the profile run, eager mode at the graphs, the length at
    /// the capacity check; each phase names the others as not acting.
    #[test]
    fn knobs_act_where_vllm_reads_them() {
        let p = plan_of(&[(Field::Model, "llama-3.1-8b-instruct")]);
        let h = timeline_html(&p, None, UnitSystem::Binary);
        let entry = |ph: StartPhase| {
            let tag = format!(r#"data-testid="{}""#, phase_testid(ph));
            let i = h.find(&tag).unwrap();
            let j = h[i..].find("</li>").unwrap();
            h[i..i + j].to_string()
        };
        let acts = |ph: StartPhase, k: Input| {
            let e = entry(ph);
            let knobs = e.split(r#"class="knobs">"#).nth(1).unwrap().to_string();
            let a = knobs
                .split("Does not act here:")
                .next()
                .unwrap()
                .to_string();
            a.contains(k.flag()) && a.contains("Acts here")
        };
        for (k, phases) in [
            (
                Input::Util,
                vec![StartPhase::InitCheck, StartPhase::KvSizing],
            ),
            (Input::KvBytes, vec![StartPhase::KvSizing]),
            (Input::MaxNumBatchedTokens, vec![StartPhase::Profile]),
            (Input::Eager, vec![StartPhase::Allocation]),
            (Input::MaxModelLen, vec![StartPhase::Capacity]),
        ] {
            for ph in StartPhase::ALL {
                assert_eq!(acts(ph, k), phases.contains(&ph), "{k:?} at {ph:?}");
                if !phases.contains(&ph) {
                    let e = entry(ph);
                    let not = e.split("Does not act here:").nth(1).unwrap();
                    assert!(not.contains(k.flag()), "{k:?} at {ph:?}: {not}");
                }
            }
        }
    }

    /// Ranks that differ are visible: a choice of rank, the others' figures per phase, and the
    /// chart's ticks; a rank given opens at it.
    #[test]
    fn ranks_that_differ_are_named() {
        let p = plan_of(&[(Field::Example, "s1-three-cards")]);
        assert!(p.rank_groups().len() > 1);
        let h = timeline_html(&p, None, UnitSystem::Binary);
        assert!(h.contains(r#"data-testid="timeline-rank""#));
        assert!(h.contains("Other ranks: "));
        assert!(h.contains(r#"data-term="other-ranks""#));
        let last = (p.ranks.len() - 1) as u32;
        let h = timeline_html(&p, Some(last), UnitSystem::Binary);
        assert!(h.contains(&format!(r#"data-rank="{last}""#)));
        // A rank the plan lacks opens the deciding one.
        let h = timeline_html(&p, Some(10_000), UnitSystem::Binary);
        assert!(h.contains(&format!(r#"data-rank="{}""#, default_rank(&p))));
        // One rank: no choice, and the sentence says all start alike.
        let one = plan_of(&[(Field::Model, "llama-3.1-8b-instruct")]);
        let h = timeline_html(&one, None, UnitSystem::Binary);
        assert!(!h.contains(r#"data-testid="timeline-rank""#));
        assert!(h.contains("every rank starts alike"));
    }

    /// The chart draws the plan's figures: each phase's stack sums to its memory in use (plus
    /// a KV cache sized, not yet allocated).
    #[test]
    fn the_chart_stacks_the_phase_memory() {
        let p = plan_of(&[(Field::Model, "llama-3.1-8b-instruct")]);
        for m in p.timeline(0).unwrap() {
            let Some(mem) = &m.memory else { continue };
            let parts = charts::phase_parts(m.phase, mem);
            let drawn: i128 = parts.iter().map(|(_, b)| *b).sum();
            let sized = if m.phase < StartPhase::Allocation {
                mem.kv.max(0)
            } else {
                0
            };
            assert_eq!(drawn, mem.in_use + sized, "{:?}", m.phase);
        }
        let svg = charts::timeline_chart(&p, 0, UnitSystem::Binary);
        assert_eq!(svg.matches(r#"data-testid="timeline-bar-"#).count(), 7);
    }
}
