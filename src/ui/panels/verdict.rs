//! The verdict banner: the plan's headline (starts, or the phase that fails and why) and its
//! second line, the message while an input is in error, and the button that goes to the input
//! at fault.

use leptos::prelude::*;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use crate::ui::state::AppState;

pub use crate::verdict::{invalid_sub, verdict_text};

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
        // An input behind a closed disclosure ("more") is shown first.
        if let Ok(Some(d)) = field.closest("details") {
            let _ = d.set_attribute("open", "");
        }
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
    let unit = app.unit.get();
    let shown = app.shown.get();
    app.checked.with(|(_, errs)| {
        app.plan.with(|p| {
            crate::verdict::banner(p.as_ref().map(|p| &**p), shown.as_deref(), unit, errs)
        })
    })
}

/// The banner a newcomer reads first.
pub fn verdict(app: AppState) -> impl IntoView {
    let text = Memo::new(move |_| verdict_lines(app));
    let target = Memo::new(move |_| goto_field(app));
    let invalid = move || {
        app.checked
            .with(|(_, errs)| crate::verdict::defaults_note(errs))
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
