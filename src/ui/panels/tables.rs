//! The panels' markup built from the plan as strings: the unified-memory gate, the per-rank
//! table (the chart's text alternative), the checks, the ledger (HTML and Markdown) and the
//! sweeps' tables. All text is escaped; none of it computes a figure.

use crate::calc::plan::{Plan, Term, UnifiedGate};
use crate::calc::scenario::Scenario;
use crate::calc::units::{thousands_signed, UnitSystem};

use super::DASH;
use crate::ui::charts::{self, xml_escape as esc};

/// The unified-memory start gate: what it needs against MemAvailable, and its terms.
pub(super) fn gate_html(g: &UnifiedGate, u: UnitSystem) -> String {
    let fig = |id: &str, label: &str, text: String, bytes: Option<u64>| {
        format!(
            r#"<div class="figure"><dt>{label}</dt><dd data-testid="{id}"{}>{}</dd></div>"#,
            bytes
                .map(|b| format!(r#" data-bytes="{b}""#))
                .unwrap_or_default(),
            esc(&text)
        )
    };
    let mut h = format!(
        r#"<div class="gate{}"><h3>Unified-memory start gate</h3><dl class="figures">{}{}{}</dl><ul class="gate-lines">"#,
        if g.ok { "" } else { " fail" },
        fig(
            "gate-needs",
            "Needs",
            charts::amount(i128::from(g.needs.0), u),
            Some(g.needs.0)
        ),
        fig(
            "gate-available",
            "MemAvailable",
            charts::amount(i128::from(g.mem_available.0), u),
            Some(g.mem_available.0)
        ),
        fig(
            "gate-verdict",
            "Verdict",
            (if g.ok { "starts" } else { "refused" }).into(),
            None
        ),
    );
    for l in &g.lines {
        h.push_str(&format!(
            r#"<li title="{}">{}: {} ({})</li>"#,
            esc(&charts::line_info(l, u)),
            esc(l.term.label()),
            esc(&charts::amount(l.bytes, u)),
            esc(&l.formula)
        ));
    }
    h.push_str(&format!(
        r#"</ul><p class="note">{}</p></div>"#,
        esc(&g.utilization_note.render(u))
    ));
    h
}

/// The per-rank figures as a table: the chart's text alternative.
pub fn rank_table_html(p: &Plan, u: UnitSystem) -> String {
    let mut h = String::from(
        r#"<table data-testid="rank-table"><caption>Per-rank memory, as a table</caption><thead><tr><th scope="col">rank</th><th scope="col">stage (layers)</th><th scope="col">budget</th><th scope="col">weights</th><th scope="col">KV pool</th><th scope="col">free after start</th><th scope="col">total</th></tr></thead><tbody>"#,
    );
    for r in &p.ranks {
        let id = r.rank;
        h.push_str(&format!(
            r#"<tr><th scope="row">rank {id}</th><td>{} ({}–{})</td>"#,
            r.pp_rank,
            r.layers.0,
            r.layers.1.saturating_sub(1)
        ));
        for (t, key) in [
            (Term::Budget, "budget"),
            (Term::Weights, "weights"),
            (Term::KvPool, "kv-pool"),
            (Term::FreeAfterStart, "free"),
            (Term::Total, "total"),
        ] {
            let v = r
                .line(t)
                .map_or(DASH.to_string(), |l| charts::amount(l.bytes, u));
            h.push_str(&format!(r#"<td data-testid="rank-{id}-{key}">{v}</td>"#));
        }
        h.push_str("</tr>");
    }
    h.push_str("</tbody></table>");
    h
}

/// The checks in phase order, with the knobs that act on each and the ones that do not, then
/// the plan's teaching notes, as HTML.
pub fn checks_html(p: &Plan, unit: UnitSystem) -> String {
    let mut h = String::from(r#"<ol class="checks" data-testid="checks">"#);
    for c in &p.checks {
        let (class, mark) = if c.ok { ("ok", "✓") } else { ("fail", "✗") };
        h.push_str(&format!(
            r#"<li class="{class}" data-phase="{}"><strong>{mark} {}</strong>{}: {}<br><small>{}{}</small></li>"#,
            c.phase.key(),
            esc(c.phase.label()),
            c.rank_to_name()
                .map(|r| format!(" (rank {r})"))
                .unwrap_or_default(),
            esc(&c.message.render(unit)),
            if c.knobs.is_empty() { String::new() } else { format!("Acts here: {}. ", esc(&c.knobs.join(", "))) },
            if c.not_knobs.is_empty() { String::new() } else { format!("Does not: {}.", esc(&c.not_knobs.join(", "))) },
        ));
    }
    h.push_str(r#"</ol><ul class="notes" data-testid="notes">"#);
    for n in &p.notes {
        h.push_str(&format!("<li>{}</li>", esc(&n.render(unit))));
    }
    h.push_str("</ul>");
    h
}

/// What makes a pasted ledger self-explanatory, put before it: the verdict (its headline and
/// second line), the model, the GPU, TP x PP and the scenario's link. `scenario` is `None` when
/// the inputs do not make one.
pub fn ledger_context(head: &str, sub: &str, scenario: Option<&Scenario>, link: &str) -> String {
    let mut md = format!("# Headroom ledger\n\n**{head}**\n\n");
    if !sub.is_empty() {
        md.push_str(&format!("{sub}\n\n"));
    }
    if let Some(s) = scenario {
        md.push_str(&format!(
            "- Model: {}\n- GPU: {}\n- TP x PP: {} x {}\n",
            s.model.name, s.gpu.name, s.parallel.tp, s.parallel.pp
        ));
    }
    md + &format!("- Scenario: <{link}>\n\n")
}

/// The ledger's tables as Markdown, one per bar's rank(s) (after [`ledger_context`], which
/// starts with the title).
pub fn ledger_markdown(plan: &Plan, unit: UnitSystem) -> String {
    let mut md = String::new();
    for group in plan.rank_groups() {
        let r = group.plan;
        md.push_str(&format!(
            "## {} (stage {}, layers {}–{})\n\n| term | value | bytes | formula | provenance |\n|---|---|---:|---|---|\n",
            charts::ranks_label(&group.ranks),
            r.pp_rank,
            r.layers.0,
            r.layers.1.saturating_sub(1)
        ));
        for l in &r.ledger {
            let basis = l.provenance.basis();
            md.push_str(&format!(
                "| {} | {} | {} | {} | {}{}{} |\n",
                l.term.label(),
                charts::amount(l.bytes, unit),
                thousands_signed(l.bytes),
                l.formula.replace('|', "\\|"),
                l.provenance.label(),
                if basis.is_empty() { "" } else { ": " },
                basis.replace('|', "\\|")
            ));
        }
        md.push('\n');
    }
    md
}

/// The ledger as HTML tables, one per distinct rank (all text escaped).
pub fn ledger_html(plan: &Plan, unit: UnitSystem) -> String {
    let mut h = String::new();
    for group in plan.rank_groups() {
        let r = group.plan;
        h.push_str(&format!(
            r#"<table class="ledger-table" data-testid="ledger-rank-{}"><caption>{} (stage {}, layers {}–{})</caption><thead><tr><th scope="col">term</th><th scope="col">value</th><th scope="col">bytes</th><th scope="col">formula</th><th scope="col">provenance</th></tr></thead><tbody>"#,
            r.rank,
            esc(&charts::ranks_label(&group.ranks)),
            r.pp_rank,
            r.layers.0,
            r.layers.1.saturating_sub(1)
        ));
        for l in &r.ledger {
            let basis = esc(l.provenance.basis());
            let kind = l.provenance.label();
            // The term's name links to its explanation in the glossary.
            let name = match super::glossary::anchor_of(l.term) {
                Some(a) => format!(r##"<a href="#term-{a}">{}</a>"##, esc(l.term.label())),
                None => esc(l.term.label()),
            };
            h.push_str(&format!(
                r#"<tr data-term="{}"><th scope="row">{name}</th><td class="num">{}</td><td class="num">{}</td><td class="formula">{}</td><td><span class="badge {kind}" title="{basis}">{kind}</span> <small>{basis}</small></td></tr>"#,
                l.term.key(),
                esc(&charts::amount(l.bytes, unit)),
                thousands_signed(l.bytes),
                esc(&l.formula),
            ));
        }
        h.push_str("</tbody></table>");
    }
    h
}

/// A sweep's text alternative: a table with a caption, column headers and rows of text.
pub(super) fn table_html<const N: usize>(
    caption: &str,
    headers: [&str; N],
    rows: impl Iterator<Item = [String; N]>,
) -> String {
    let mut h = format!("<table><caption>{}</caption><thead><tr>", esc(caption));
    for c in headers {
        h.push_str(&format!(r#"<th scope="col">{}</th>"#, esc(c)));
    }
    h.push_str("</tr></thead><tbody>");
    for row in rows {
        h.push_str("<tr>");
        for cell in row {
            h.push_str(&format!("<td>{}</td>", esc(&cell)));
        }
        h.push_str("</tr>");
    }
    h + "</tbody></table>"
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::url::Field;
    use crate::ui::plan_of;

    #[test]
    fn the_ledger_groups_identical_ranks_and_escapes_text() {
        let p = plan_of(&[(Field::Example, "s3-synthetic-tp4")]);
        let html = ledger_html(&p, UnitSystem::Decimal);
        assert_eq!(
            html.matches("<table").count(),
            1,
            "four identical TP ranks, one table"
        );
        assert!(html.contains("ranks 0–3"));
        assert!(html.contains(r#"data-term="kv_pool""#));
        assert!(html.contains("46.10 GB"));
        assert!(!html.contains("<script"));
        let md = ledger_markdown(&p, UnitSystem::Decimal);
        assert!(md.starts_with("## ranks 0–3"), "{md}");
        assert!(md.contains("| KV pool (allocated) | 46.10 GB | 46,099,333,120 |"));
        let table = rank_table_html(&p, UnitSystem::Decimal);
        assert_eq!(table.matches("<tr>").count(), 4 + 1);
        assert!(table.contains(r#"data-testid="rank-3-kv-pool">46.10 GB<"#));
        assert!(checks_html(&p, UnitSystem::Binary).contains(r#"data-phase="capacity""#));
    }

    #[test]
    fn a_pasted_ledger_says_what_it_is_the_ledger_of() {
        let mut st = crate::io::url::UrlState::default();
        st.set(Field::Example, "s3-synthetic-tp4").unwrap();
        let s = crate::io::url::scenario(&st).unwrap();
        let md = ledger_context("Starts", "", Some(&s), "https://h.example/?v=1&tp=4");
        assert!(
            md.starts_with("# Headroom ledger\n\n**Starts**\n\n- Model: "),
            "{md}"
        );
        assert!(md.contains(&format!("- GPU: {}\n", s.gpu.name)), "{md}");
        assert!(md.contains("- TP x PP: 4 x 1\n"), "{md}");
        assert!(
            md.ends_with("- Scenario: <https://h.example/?v=1&tp=4>\n\n"),
            "{md}"
        );
        // Without a scenario, the verdict's two lines and the link.
        let md = ledger_context("Cannot plan this", "No figures.", None, "?v=1");
        assert_eq!(
            md,
            "# Headroom ledger\n\n**Cannot plan this**\n\nNo figures.\n\n- Scenario: <?v=1>\n\n"
        );
    }
}
