//! The phase timeline's chart: one rank's start, a bar per phase, drawn like the other charts
//! (plotters into an SVG string, with a focusable overlay that carries each shape's figure).

use plotters::prelude::{Color, RGBColor};
use plotters_backend::text_anchor::{HPos, VPos};
use plotters_backend::DrawingBackend;

use super::{
    amount, finish, hit_rect, ranks_label, ticks, unit_div, xml_escape, Label, Plot, FG, TOTAL_MARK,
};
use crate::calc::plan::Plan;
use crate::calc::timeline::{PhaseMemory, PhaseMoment, PhaseState, StartPhase};
use crate::calc::units::{thousands_signed, UnitSystem};

/// The timeline's phase names, larger: its chart shrinks to a phone's column.
const PHASE_LABEL: Label = Label::new(13.0, HPos::Center, VPos::Top);

/// The phase timeline's colours: what was in use before vLLM's snapshot, what the worker
/// holds steadily, the KV cache (allocated, or only sized), and the transient peaks.
pub const TIMELINE_SEGMENTS: [(RGBColor, &str); 5] = [
    (RGBColor(186, 176, 172), "in use before the snapshot"),
    (
        RGBColor(78, 121, 167),
        "weights, drafter, other use, graphs",
    ),
    (RGBColor(89, 161, 79), "KV pool (allocated)"),
    (
        RGBColor(190, 226, 182),
        "KV memory sized, not yet allocated",
    ),
    (
        RGBColor(242, 142, 43),
        "transient peak (load, profile, warm-up)",
    ),
];

/// The short name of a start phase under its bar.
pub fn phase_short(p: StartPhase) -> &'static str {
    match p {
        StartPhase::InitCheck => "init",
        StartPhase::LoadWeights => "load",
        StartPhase::Profile => "profile",
        StartPhase::KvSizing => "KV sizing",
        StartPhase::Capacity => "capacity",
        StartPhase::Allocation => "graphs",
        StartPhase::Serving => "serving",
    }
}

/// The mark of a phase's state: passed, failed, not reached.
pub fn state_mark(s: PhaseState) -> &'static str {
    match s {
        PhaseState::Ok => "✓",
        PhaseState::Fail => "✗",
        PhaseState::NotReached => "–",
    }
}

/// The stacked parts of a phase's memory, bottom to top, as (colour index, bytes): before the
/// snapshot, held steadily, the allocated pool, the pool only sized, the transient peak.
pub fn phase_parts(phase: StartPhase, m: &PhaseMemory) -> [(usize, i128); 5] {
    let allocated = phase >= StartPhase::Allocation;
    let pool = if allocated { m.kv.max(0) } else { 0 };
    let sized = if allocated { 0 } else { m.kv.max(0) };
    let steady = (m.held - m.transient - pool).max(0);
    [
        (0, (m.in_use - m.held).max(0)),
        (1, steady),
        (2, pool),
        (3, sized),
        (4, m.transient.max(0)),
    ]
}

/// One rank's start as a chart: a bar per phase of the memory in use at its peak (the KV
/// memory stacked on top where it is sized but not yet allocated), against the physical
/// capacity (red) and the utilization budget (dark). Phases not reached are faded, the failing
/// one is marked; the other distinct ranks' totals are short grey ticks, so ranks that differ
/// show. Every shape has its exact figure in its title.
pub fn timeline_chart(plan: &Plan, rank: u32, unit: UnitSystem) -> String {
    let Some(t) = plan.timeline(rank) else {
        return String::new();
    };
    let (div, uname) = unit_div(unit);
    let to_y = |b: i128| b as f64 / div;
    let groups = plan.rank_groups();
    let others: Vec<(String, [PhaseMoment; 7])> = groups
        .iter()
        .filter(|g| !g.ranks.contains(&rank))
        .filter_map(|g| Some((ranks_label(&g.ranks), plan.timeline(g.ranks[0])?)))
        .collect();
    let top = |m: &PhaseMemory, phase: StartPhase| {
        phase_parts(phase, m).iter().map(|(_, b)| *b).sum::<i128>()
    };
    let mut ymax: f64 = 1.0;
    for moments in std::iter::once(&t).chain(others.iter().map(|(_, m)| m)) {
        for m in moments.iter() {
            if let Some(mem) = &m.memory {
                ymax = ymax.max(to_y(top(mem, m.phase))).max(to_y(mem.capacity));
            }
        }
    }
    let ymax = ymax * 1.08;
    let mut svg = String::new();
    let mut overlay = String::new();
    {
        // Narrower than the other charts: seven bars fit a phone's width without scrolling.
        let mut plot = Plot::new(
            &mut svg,
            (TIMELINE_W, TIMELINE_H),
            8,
            40,
            (0.0, 7.0),
            (0.0, ymax),
        );
        plot.y_axis(&ticks(0.0, ymax, 6), &|v| format!("{v:.0}"), uname);
        for (i, m) in t.iter().enumerate() {
            let (x0, x1) = (i as f64 + 0.18, i as f64 + 0.82);
            let faded = m.state == PhaseState::NotReached;
            let name = phase_short(m.phase);
            overlay.push_str(&format!(
                r#"<g data-testid="timeline-bar-{}" data-state="{}" role="group" aria-label="{}">"#,
                m.phase.key(),
                state_key(m.state),
                xml_escape(name)
            ));
            if let Some(mem) = &m.memory {
                let mut y = 0.0;
                for (c, b) in phase_parts(m.phase, mem) {
                    if b <= 0 {
                        continue;
                    }
                    let (color, what) = TIMELINE_SEGMENTS[c];
                    let h = to_y(b);
                    let style = if faded {
                        color.mix(0.35).filled()
                    } else {
                        color.filled()
                    };
                    plot.rect_style((x0, y), (x1, y + h), style);
                    hit_rect(
                        &mut overlay,
                        plot.at((x0, y)),
                        plot.at((x1, y + h)),
                        what,
                        &format!(
                            "{name}: {what}: {} ({} B)",
                            amount(b, unit),
                            thousands_signed(b)
                        ),
                    );
                    y += h;
                }
            }
            // The failing phase: a red frame around its bar.
            if m.state == PhaseState::Fail {
                let h = m.memory.as_ref().map_or(0.0, |mem| to_y(top(mem, m.phase)));
                let (a, b) = (
                    plot.at((x0 - 0.06, 0.0)),
                    plot.at((x1 + 0.06, h.max(ymax * 0.04))),
                );
                let _ = plot.svg.draw_rect(
                    (a.0.min(b.0), a.1.min(b.1)),
                    (a.0.max(b.0), a.1.max(b.1)),
                    &TOTAL_MARK.stroke_width(3),
                    false,
                );
            }
            overlay.push_str("</g>");
            // Other ranks' totals at this phase: a grey tick each.
            for (label, moments) in &others {
                let Some(mem) = &moments[i].memory else {
                    continue;
                };
                let yv = to_y(top(mem, moments[i].phase));
                let (px0, py) = plot.at((x0 + 0.1, yv));
                let (px1, _) = plot.at((x1 - 0.1, yv));
                plot.line((px0, py), (px1, py), &OTHER_RANKS.stroke_width(3));
                hit_rect(
                    &mut overlay,
                    (px0, py - 3),
                    (px1, py + 3),
                    "other-ranks",
                    &format!(
                        "{name}, {label}: {} in use ({} B), {}",
                        amount(top(mem, moments[i].phase), unit),
                        thousands_signed(top(mem, moments[i].phase)),
                        state_word(moments[i].state)
                    ),
                );
            }
            let (cx, cy) = plot.at(((x0 + x1) / 2.0, 0.0));
            plot.text(name, &PHASE_LABEL, (cx, cy + 6));
            plot.text(state_mark(m.state), &PHASE_LABEL, (cx, cy + 22));
        }
        // The two marks across every phase: physical capacity and the utilization budget.
        if let Some(mem) = t.iter().find_map(|m| m.memory.as_ref()) {
            for (bytes, color, width, key, what) in [
                (
                    mem.budget,
                    FG,
                    2,
                    "budget",
                    "budget: ceil(total x utilization)",
                ),
                (
                    mem.capacity,
                    TOTAL_MARK,
                    2,
                    "total",
                    "physical capacity (the driver's total)",
                ),
            ] {
                let yv = to_y(bytes);
                let (px0, py) = plot.at((0.05, yv));
                let (px1, _) = plot.at((6.95, yv));
                plot.line((px0, py), (px1, py), &color.stroke_width(width));
                hit_rect(
                    &mut overlay,
                    (px0, py - 3),
                    (px1, py + 3),
                    key,
                    &format!(
                        "{what}: {} ({} B)",
                        amount(bytes, unit),
                        thousands_signed(bytes)
                    ),
                );
            }
        }
        plot.finish();
    }
    finish(
        svg,
        &overlay,
        &format!("Rank {rank}'s memory at each start-up phase"),
        TIMELINE_W,
    )
}

/// The timeline chart's size (its viewBox; CSS lets it shrink to a phone's column).
pub const TIMELINE_W: u32 = 420;
pub const TIMELINE_H: u32 = 300;

/// Other ranks' ticks on the timeline chart.
const OTHER_RANKS: RGBColor = RGBColor(90, 90, 90);

/// The `data-state` of a phase.
pub fn state_key(s: PhaseState) -> &'static str {
    match s {
        PhaseState::Ok => "ok",
        PhaseState::Fail => "fail",
        PhaseState::NotReached => "not-reached",
    }
}

/// A phase's state in words.
pub fn state_word(s: PhaseState) -> &'static str {
    match s {
        PhaseState::Ok => "passes",
        PhaseState::Fail => "fails here",
        PhaseState::NotReached => "not reached",
    }
}
