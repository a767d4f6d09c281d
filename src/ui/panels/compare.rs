//! The A/B view: the scenario and a second one (the `b.` keys: the same inputs with some set
//! otherwise), side by side, with the difference per rank and per ledger line. All text is
//! escaped; every figure is one of the two plans'.

use crate::calc::plan::Plan;
use crate::calc::units::{thousands_signed, UnitSystem};
use crate::input::query::comparable;
use crate::input::{row_of, Field};
use crate::ui::charts::{self, xml_escape as esc};

/// The form that starts or changes a comparison: an input and its value for B.
pub fn compare_form_html() -> String {
    let mut h = String::from(
        r#"<p class="hint">Plan a second scenario, B: these inputs with one set otherwise (0.85 against 0.90, 15,15,13 against 15,16,12, bf16 against fp8 KV, TP=2 against TP=4). The link carries both.</p><p class="ab-form"><label for="ab-field">B sets</label> <select id="ab-field" data-testid="ab-field">"#,
    );
    for f in Field::ALL.into_iter().filter(|f| comparable(*f)) {
        if row_of(f).label.is_none() {
            continue;
        }
        h.push_str(&format!(
            r#"<option value="{}">{}</option>"#,
            f.key(),
            esc(f.flag())
        ));
    }
    h.push_str(r#"</select> <label for="ab-value">to</label> <input id="ab-value" data-testid="ab-value" size="14" autocomplete="off" spellcheck="false"> <button type="button" data-testid="ab-set">Compare</button> <button type="button" data-testid="ab-clear">Stop comparing</button></p><div class="import-error" id="ab-error" data-testid="ab-error" role="alert"></div><div id="ab-result"></div>"#);
    h
}

fn delta(a: i128, b: i128, unit: UnitSystem) -> String {
    if a == b {
        "same".into()
    } else {
        format!(
            "{}{}",
            if b > a { "+" } else { "-" },
            charts::amount((b - a).abs(), unit)
        )
    }
}

/// The two plans side by side: the verdicts, the replica's figures, and per distinct rank of A
/// (with B's rank of the same number) every ledger line, A, B and B - A.
pub fn ab_html(
    a: &Plan,
    b: Result<&Plan, &str>,
    b_inputs: &[(Field, String)],
    unit: UnitSystem,
) -> String {
    let sets: Vec<String> = b_inputs
        .iter()
        .map(|(f, t)| format!("{} {t}", f.flag()))
        .collect();
    let mut h = format!(
        r#"<div data-testid="ab-view"><p><strong>B</strong> sets {}.</p>"#,
        esc(&sets.join(", "))
    );
    let b = match b {
        Ok(b) => b,
        Err(why) => {
            h.push_str(&format!(
                r#"<p class="import-error">B has no plan: {}</p></div>"#,
                esc(why)
            ));
            return h;
        }
    };
    h.push_str(&format!(
        r#"<table class="ab" data-testid="ab-verdicts"><thead><tr><th scope="col"></th><th scope="col">A</th><th scope="col">B</th><th scope="col">B - A</th></tr></thead><tbody><tr data-row="verdict"><th scope="row">verdict</th><td>{}</td><td>{}</td><td></td></tr>"#,
        esc(&a.outcome()),
        esc(&b.outcome())
    ));
    let rep = |p: &Plan| {
        p.replica
            .as_ref()
            .map(|r| (r.kv_cache_tokens, r.max_concurrency))
    };
    if let (Some((at, ac)), Some((bt, bc))) = (rep(a), rep(b)) {
        h.push_str(&format!(
            r#"<tr data-row="kv-tokens"><th scope="row">KV cache tokens</th><td>{}</td><td>{}</td><td>{}</td></tr><tr data-row="concurrency"><th scope="row">full-length requests at once</th><td>{ac:.2}</td><td>{bc:.2}</td><td>{:+.2}</td></tr>"#,
            crate::calc::units::thousands(u128::from(at)),
            crate::calc::units::thousands(u128::from(bt)),
            thousands_signed(i128::from(bt) - i128::from(at)),
            bc - ac
        ));
    }
    h.push_str("</tbody></table>");
    for group in a.rank_groups() {
        let ra = group.plan;
        let Some(rb) = b.ranks.get(ra.rank as usize) else {
            continue;
        };
        h.push_str(&format!(
            r#"<div class="scroll" tabindex="0" role="region" aria-label="A against B, {}"><table class="ab" data-testid="ab-rank-{}"><caption>{} (B: rank {}, layers {}–{})</caption><thead><tr><th scope="col">term</th><th scope="col">A</th><th scope="col">B</th><th scope="col">B - A</th></tr></thead><tbody>"#,
            esc(&charts::ranks_label(&group.ranks)),
            ra.rank,
            esc(&charts::ranks_label(&group.ranks)),
            rb.rank,
            rb.layers.0,
            rb.layers.1.saturating_sub(1)
        ));
        let mut terms: Vec<crate::calc::plan::Term> = ra.ledger.iter().map(|l| l.term).collect();
        for l in &rb.ledger {
            if !terms.contains(&l.term) {
                terms.push(l.term);
            }
        }
        for t in terms {
            let (x, y) = (ra.line(t).map(|l| l.bytes), rb.line(t).map(|l| l.bytes));
            let show = |v: Option<i128>| v.map_or("—".to_string(), |v| charts::amount(v, unit));
            let d = match (x, y) {
                (Some(x), Some(y)) => delta(x, y, unit),
                _ => String::new(),
            };
            h.push_str(&format!(
                r#"<tr data-term="{}" data-a="{}" data-b="{}"{}><th scope="row">{}</th><td class="num">{}</td><td class="num">{}</td><td class="num">{}</td></tr>"#,
                t.key(),
                x.map_or(String::new(), |v| v.to_string()),
                y.map_or(String::new(), |v| v.to_string()),
                if x != y { r#" class="moved""# } else { "" },
                esc(t.label()),
                esc(&show(x)),
                esc(&show(y)),
                esc(&d)
            ));
        }
        h.push_str("</tbody></table></div>");
    }
    h.push_str("</div>");
    h
}
