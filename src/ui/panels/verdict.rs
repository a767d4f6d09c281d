//! The verdict banner: the plan's headline (starts, or the phase that fails and why) and its
//! second line, the message while an input is in error, and the button that goes to the input
//! at fault.

use leptos::prelude::*;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use crate::calc::plan::Plan;
use crate::calc::units::{grouped_fixed, plural, thousands, UnitSystem};

use crate::ui::state::{AppState, DEFINING};

/// The verdict's headline and its second line, from the plan.
pub fn verdict_text(plan: &Plan, unit: UnitSystem) -> (bool, String, String) {
    if let Some(c) = plan.first_failure() {
        let who = c
            .rank
            .map(|r| format!("Rank {r} decides. "))
            .unwrap_or_default();
        let knobs = if c.knobs.is_empty() {
            String::new()
        } else {
            format!("What acts here: {}. ", c.knobs.join(", "))
        };
        let not = if c.not_knobs.is_empty() {
            String::new()
        } else {
            format!("What does not: {}.", c.not_knobs.join(", "))
        };
        let (head, sub) = headline(&c.message.render(unit), &format!("{who}{knobs}{not}"));
        return (false, format!("Fails at {}: {head}", c.phase.label()), sub);
    }
    let Some(r) = plan.replica.as_ref() else {
        return (true, "Starts".into(), String::new());
    };
    // vLLM's concurrency as the headline prints it, once.
    let conc = grouped_fixed(r.max_concurrency, 2);
    (
        true,
        format!(
            "Starts: {conc} full-length {} per replica",
            if conc == "1.00" {
                "request fits"
            } else {
                "requests fit"
            }
        ),
        format!(
            "{} whole {}-token {} at once{}; rank {} decides the pool ({} tokens{}).",
            thousands(u128::from(r.full_length_requests)),
            thousands(u128::from(r.max_model_len)),
            plural(r.full_length_requests, "request", "requests"),
            if r.null_block_costs_a_request() {
                format!(
                    " (vLLM's {conc}x counts its null block, 1 of the {} blocks, which holds no request)",
                    thousands(u128::from(r.num_blocks))
                )
            } else {
                String::new()
            },
            r.limiting_rank,
            thousands(u128::from(r.kv_cache_tokens)),
            if r.tokens_below_whole_requests() {
                " as this vLLM prints it: blocks / KV groups x block size, fewer than whole requests hold"
            } else {
                ""
            }
        ),
    )
}

/// The verdict's second line while an input is in error: the panels show the last valid
/// inputs' figures when there were any (the page was opened on an invalid link otherwise).
pub fn invalid_sub(flag: &str, has_figures: bool) -> String {
    if has_figures {
        format!("The figures below are from the last valid inputs; fix {flag}.")
    } else {
        format!("No figures until the inputs are valid; fix {flag}.")
    }
}

/// A headline of a long message's first sentence, and the second line: the rest of it, then
/// `after`.
fn headline(message: &str, after: &str) -> (String, String) {
    let (head, rest) = first_sentence(message);
    let sub = match (rest.is_empty(), after.is_empty()) {
        (true, _) => after.to_string(),
        (false, true) => rest.to_string(),
        (false, false) => format!("{rest} {after}"),
    };
    (head.to_string(), sub)
}

/// A message over 140 characters split after its first sentence (a ". " past the 20th
/// character), else the whole message and nothing.
fn first_sentence(message: &str) -> (&str, &str) {
    if message.len() <= 140 {
        return (message, "");
    }
    let tail = message.get(20..).unwrap_or("");
    // A sentence, else a clause: vLLM's words often run on after a semicolon.
    match tail.find(". ").or_else(|| tail.find("; ")) {
        Some(i) => {
            let cut = 20 + i + 1;
            (&message[..cut], message[cut..].trim_start())
        }
        None => (message, ""),
    }
}

/// The field a click on the verdict's button goes to: the one in error, else (on narrow
/// screens, where the form follows the figures) the first input.
pub fn goto_field(app: AppState) -> Option<String> {
    app.plan
        .with(|p| {
            p.as_ref()
                .err()
                .and_then(|e| e.field)
                .map(|f| f.flag().to_string())
        })
        .or_else(|| {
            app.checked
                .with(|(_, errs)| errs.first().map(|(f, _)| f.flag().to_string()))
        })
}

/// Scrolls to an input and gives it the keyboard.
pub fn go_to(flag: &str) {
    // The field's box, label included, comes to the top; then the input takes the keyboard.
    if let Some(field) = document().get_element_by_id(&format!("{flag}-field")) {
        field.scroll_into_view();
    }
    // A split typed in the stage boxes: the first box that is empty or not a count, else the
    // first box.
    let stage = (flag == "pp-layer-partition")
        .then(|| document().query_selector_all("#pp-stages input").ok())
        .flatten()
        .and_then(|boxes| {
            let all: Vec<web_sys::Element> = (0..boxes.length())
                .filter_map(|i| boxes.item(i)?.dyn_into::<web_sys::Element>().ok())
                .collect();
            let value = |el: &web_sys::Element| {
                js_sys::Reflect::get(el, &JsValue::from_str("value"))
                    .ok()
                    .and_then(|v| v.as_string())
                    .unwrap_or_default()
            };
            // A box's text is a one-stage list: the list's own reader says whether it is a count.
            let bad = all
                .iter()
                .find(|el| crate::io::url::parse_partition(&value(el)).is_err());
            bad.or(all.first()).cloned()
        });
    if let Some(el) = stage
        .or_else(|| document().get_element_by_id(flag))
        .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok())
    {
        let _ = el.focus();
    }
}

/// The verdict as the banner shows it: its class, its headline and its second line.
pub(super) fn verdict_lines(app: AppState) -> (String, String, String) {
    let err = app.plan.with(|p| p.as_ref().err().cloned());
    match (err, app.shown.get()) {
        (Some(e), shown) => {
            // A long message (vLLM's words and then why) keeps its first sentence in the
            // headline and moves the rest below, so the banner stays readable on a phone.
            let (head, sub) = headline(&e.message, &invalid_sub(&e.flag, shown.is_some()));
            (
                "verdict invalid".to_string(),
                format!("Cannot plan this: {head}"),
                sub,
            )
        }
        (None, Some(p)) => {
            let (ok, head, sub) = verdict_text(&p, app.unit.get());
            (
                if ok { "verdict ok" } else { "verdict fail" }.to_string(),
                head,
                sub,
            )
        }
        (None, None) => ("verdict".into(), "Planning…".into(), String::new()),
    }
}

/// The banner a newcomer reads first.
pub fn verdict(app: AppState) -> impl IntoView {
    let text = Memo::new(move |_| verdict_lines(app));
    let target = Memo::new(move |_| goto_field(app));
    let invalid = move || {
        app.checked.with(|(_, errs)| {
            // The fields that say what is planned stop the plan instead (AppState::new).
            let names: Vec<&str> = errs
                .iter()
                .map(|(f, _)| *f)
                .filter(|f| !DEFINING.contains(f))
                .map(|f| f.flag())
                .collect();
            (!names.is_empty()).then(|| {
                format!(
                    "These figures use the default for {}: {} typed {} invalid (see the {}).",
                    names.join(", "),
                    plural(names.len() as u64, "the value", "the values"),
                    plural(names.len() as u64, "is", "are"),
                    plural(names.len() as u64, "field", "fields")
                )
            })
        })
    };
    view! {
        <section class=move || text.with(|t| t.0.clone()) data-testid="verdict">
            // The live region is the text; the button below is not read with every change.
            <div role="status" aria-live="polite">
                <p class="headline" data-testid="verdict-headline">{move || text.with(|t| t.1.clone())}</p>
                <p class="sub">{move || text.with(|t| t.2.clone())}</p>
                <p class="sub warn">{invalid}</p>
            </div>
            <button
                type="button"
                data-testid="verdict-goto"
                class=move || if target.with(Option::is_some) { "goto" } else { "goto narrow-screen" }
            >
                {move || target.get().map_or("Change the inputs".to_string(), |f| format!("Go to {f}"))}
            </button>
        </section>
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::url::Field;
    use crate::ui::plan_of;

    #[test]
    fn a_long_message_keeps_its_first_sentence_in_the_headline() {
        assert_eq!(first_sentence("short. message"), ("short. message", ""));
        let long = format!(
            "Unsupported speculative method: 'mtp' (vLLM's NotImplementedError). {}",
            "x".repeat(120)
        );
        let (head, rest) = first_sentence(&long);
        assert_eq!(
            head,
            "Unsupported speculative method: 'mtp' (vLLM's NotImplementedError)."
        );
        assert_eq!(rest, "x".repeat(120));
        // Else after the first clause.
        let clause = format!(
            "mem-available belongs to unified memory; {}",
            "y".repeat(120)
        );
        assert_eq!(
            first_sentence(&clause),
            (
                "mem-available belongs to unified memory;",
                "y".repeat(120).as_str()
            )
        );
        // No break: whole. A multi-byte character at the 20th byte does not panic.
        let one = "é".repeat(100);
        assert_eq!(first_sentence(&one), (one.as_str(), ""));
    }

    #[test]
    fn the_verdict_names_the_figure_or_the_failing_phase() {
        let ok = plan_of(&[(Field::Example, "s3-synthetic-tp4")]);
        let (starts, head, sub) = verdict_text(&ok, UnitSystem::Binary);
        assert!(starts);
        assert_eq!(head, "Starts: 4.29 full-length requests fit per replica");
        assert!(sub.contains("131,072-token"));
        let bad = plan_of(&[
            (Field::Model, "llama-3.1-70b-instruct"),
            (Field::Util, "0.5"),
        ]);
        let (starts, head, _) = verdict_text(&bad, UnitSystem::Binary);
        assert!(!starts);
        assert!(head.starts_with("Fails at "), "{head}");
        // A pool of exactly two requests' blocks: the null block leaves one whole request,
        // and the second line says why vLLM's figure reads 2.00x.
        let two = plan_of(&[
            (Field::Model, "llama-3.1-70b-instruct"),
            (Field::Tp, "4"),
            (Field::KvBytes, "20GiB"),
        ]);
        let (_, head, sub) = verdict_text(&two, UnitSystem::Binary);
        assert!(
            head.starts_with("Starts: 2.00 full-length requests"),
            "{head}"
        );
        assert!(sub.starts_with("1 whole 131,072-token request at once (vLLM's 2.00x counts its null block, 1 of the 16,384 blocks"), "{sub}");
    }

    #[test]
    fn an_invalid_input_only_claims_last_valid_figures_when_there_are_some() {
        assert_eq!(
            invalid_sub("tensor-parallel-size", true),
            "The figures below are from the last valid inputs; fix tensor-parallel-size."
        );
        let none = invalid_sub("tensor-parallel-size", false);
        assert_eq!(
            none,
            "No figures until the inputs are valid; fix tensor-parallel-size."
        );
    }
}
