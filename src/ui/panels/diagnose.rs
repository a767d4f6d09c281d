//! The diagnose panel's markup: a symptom picked or an error pasted, read against the live
//! scenario by `crate::diagnose`. All text is escaped; the figures are the diagnosis's.

use crate::diagnose::{Diagnosis, Symptom};
use crate::ui::charts::xml_escape as esc;

/// The panel's static part: the choice, the paste box, the button and the result's place.
pub fn diagnose_form_html() -> String {
    let mut h = String::from(
        r#"<section class="panel diagnose" aria-labelledby="diag-h"><h2 id="diag-h">Diagnose a failure</h2><p class="hint">Pick what you saw, or paste vLLM's error (with the traceback's last lines for an out-of-memory error): the phase it points to, what it proves and what not, the knob to move with this scenario's numbers, and what would disprove it.</p><p><label for="diagnose-symptom">Symptom</label> <select id="diagnose-symptom" data-testid="diagnose-symptom"><option value="">(pick one, or paste below)</option>"#,
    );
    for s in Symptom::ALL {
        h.push_str(&format!(
            r#"<option value="{}">{}</option>"#,
            s.key(),
            esc(s.label())
        ));
    }
    h.push_str(r#"</select></p><label for="diagnose-input">Or the error vLLM printed</label><textarea id="diagnose-input" data-testid="diagnose-input" rows="4" spellcheck="false" autocomplete="off" autocapitalize="off" placeholder="ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` ..."></textarea><p><button type="button" data-testid="diagnose-run">Diagnose this text</button></p><div class="diagnose-result" data-testid="diagnose-result" id="diagnose-result" aria-live="polite"></div></section>"#);
    h
}

/// A walkthrough: its steps (each a link, the current one marked), what each shows and what
/// moved since the step before, and the buttons to step through.
pub fn walkthrough_html(
    walk: &crate::walkthrough::Walk,
    steps: &[crate::walkthrough::Planned],
    current: Option<usize>,
    unit: crate::calc::units::UnitSystem,
) -> String {
    let mut h = format!(
        r#"<section class="panel walkthrough" data-testid="walkthrough" aria-labelledby="walk-h"><h2 id="walk-h">Walkthrough: {}</h2><p class="hint">One input changes per step; the timeline, the chart and the ledger below follow. Each step is a link.</p><ol>"#,
        esc(walk.title)
    );
    let mut prev: Option<&crate::calc::Plan> = None;
    for (i, (step, planned)) in walk.steps.iter().zip(steps).enumerate() {
        let k = i + 1;
        let here = current == Some(k);
        h.push_str(&format!(
            r#"<li data-testid="walkthrough-step" data-step="{k}"{}><a href="{}" data-walk-step="{k}">{}</a>"#,
            if here { r#" class="current" aria-current="step""# } else { "" },
            esc(&planned.link),
            esc(step.title)
        ));
        match &planned.plan {
            Ok(p) => {
                for line in crate::walkthrough::moved(prev, p, unit) {
                    h.push_str(&format!("<br><small>{}</small>", esc(&line)));
                }
                prev = Some(p);
            }
            Err(e) => h.push_str(&format!("<br><small>No plan: {}</small>", esc(e))),
        }
        h.push_str("</li>");
    }
    h.push_str(&format!(
        r#"</ol><p><button type="button" data-testid="walkthrough-prev"{}>Previous step</button> <button type="button" data-testid="walkthrough-next"{}>{}</button></p></section>"#,
        if current.map_or(true, |c| c <= 1) { " disabled" } else { "" },
        if current.is_some_and(|c| c >= steps.len()) { " disabled" } else { "" },
        if current.is_none() { "Start the walkthrough" } else { "Next step" }
    ));
    h
}

/// Three engines, three fractions: the same number under vLLM, SGLang and TensorRT-LLM.
pub fn contrast_html(p: &crate::calc::Plan, unit: crate::calc::units::UnitSystem) -> String {
    let Some((rank, f, rows)) = crate::contrast::contrast(p, unit) else {
        return String::new();
    };
    let mut h = format!(
        r#"<p class="hint">The same fraction, {f}, given to each engine, read on rank {rank}. The word means three things: a share of the total, of what is free before loading, or of what is left after the weights and the activation peak. Estimates: SGLang's fixed overhead and its own default fraction, and TensorRT-LLM's estimation cache, are left out.</p><ul class="contrast" data-testid="engine-contrast">"#
    );
    for r in rows {
        h.push_str(&format!(
            r#"<li data-engine="{}" data-bytes="{}"><strong>{}</strong> <code>{}</code>: <strong>{}</strong> of KV cache, {} <span class="badge {}">{}</span><br>A fraction of {}.<br><small>{}</small><br><small class="source">{}</small></li>"#,
            esc(r.engine),
            r.kv_bytes,
            esc(r.engine),
            esc(r.knob),
            esc(&crate::ui::charts::amount(r.kv_bytes, unit)),
            esc(&crate::contrast::tokens_text(r.tokens)),
            r.provenance,
            r.provenance,
            esc(r.of),
            esc(&r.formula),
            esc(r.source)
        ));
    }
    h.push_str("</ul>");
    h
}

/// What interviewers probe next, each answered with this scenario's numbers.
pub fn probes_html(probes: &[crate::probes::Probe]) -> String {
    let mut h = String::from(
        r#"<p class="hint">Seed 003's questions and common mistakes; each answer plans this scenario with the change it asks about.</p><div data-testid="probes">"#,
    );
    for p in probes {
        h.push_str(&format!(
            r#"<details data-testid="probe-{}"><summary>{}</summary><p>{}</p></details>"#,
            p.key,
            esc(p.question),
            esc(&p.answer)
        ));
    }
    h.push_str("</div>");
    h
}

/// What fixes it: each change with what it gives, one click and a link.
pub fn fixes_html(fixes: &[crate::fixes::Fix], starts: bool) -> String {
    let mut h = format!(
        r#"<p class="hint">{}</p><ul class="fixes" data-testid="fixes">"#,
        if starts {
            "It starts. What it would take to hold more full-length requests at once, each planned:"
        } else {
            "The smallest changes that make it start, each planned with the change:"
        }
    );
    for f in fixes {
        h.push_str(&format!(
            r#"<li data-testid="fix-{}"><strong>{}</strong>: {}. <button type="button" data-testid="fix-apply" data-fix="{}">Apply</button> <a data-testid="fix-link" href="{}">link</a></li>"#,
            f.key,
            esc(&f.title),
            esc(&f.result),
            f.key,
            esc(&f.link)
        ));
    }
    if fixes.is_empty() {
        h.push_str(if starts {
            "<li>Nothing Headroom tries (more TP, a higher utilization, fp8 KV) holds more here.</li>"
        } else {
            "<li>None of the changes Headroom tries (more TP, a shorter max-model-len, the utilization, the KV pin, a balanced split, fp8 KV) makes it start on its own: the diagnosis and the timeline name the phase to work on.</li>"
        });
    }
    h.push_str("</ul>");
    h
}

/// A diagnosis as HTML.
pub fn diagnosis_html(d: &Diagnosis, from_text: bool) -> String {
    let mut h = format!(
        r#"<div data-symptom="{}" data-phase="{}"><p class="diag-phase"><strong>{}</strong>: {}.</p>"#,
        d.symptom.key(),
        d.phase.map_or("none", |p| p.key()),
        if from_text {
            format!("Read as {}", esc(d.symptom.label()))
        } else {
            esc(d.symptom.label())
        },
        esc(&format!("it points to {}", d.phase_name))
    );
    if !d.pasted.is_empty() {
        h.push_str("<p>The text's own figures: ");
        h.push_str(&esc(&d.pasted.join("; ")));
        h.push_str(r#". <button type="button" data-testid="diagnose-fill">Fill the scenario with them</button></p>"#);
    }
    h.push_str(&format!(
        r#"<dl class="diag"><dt>What it proves</dt><dd data-testid="diagnose-proves">{}</dd><dt>What it does not</dt><dd data-testid="diagnose-not">{}</dd><dt>What to move</dt><dd data-testid="diagnose-moves"><ul>"#,
        esc(&d.proves),
        esc(&d.not_proved)
    ));
    for m in &d.moves {
        h.push_str(&format!("<li>{}</li>", esc(m)));
    }
    h.push_str(&format!(
        r#"</ul></dd><dt>What would disprove it</dt><dd data-testid="diagnose-disproof">{}</dd></dl>"#,
        esc(&d.disproof)
    ));
    if !d.scenario.is_empty() {
        h.push_str(&format!(
            r#"<p class="hint" data-testid="diagnose-scenario">{}</p>"#,
            esc(&d.scenario)
        ));
    }
    h.push_str("</div>");
    h
}
