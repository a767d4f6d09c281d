//! The web page (feature `web`): a Leptos app that formats the `Plan` of the scenario the user
//! sets up. Inputs are one text signal each (see [`state`]); the plan is one memo; every panel
//! reads it and none does arithmetic of its own.
//!
//! Layout: header (examples, unit, copy link), the URL notice, the verdict, then the form beside
//! the result panels (pool versus demand, per-rank chart, sweeps, checks, ledger, vLLM's log).
//!
//! Leptos owns the state (signals, memos, effects); apart from the verdict, the page's parts are
//! markup built once, with delegated listeners, that effects fill in. DESIGN.md says why (the
//! wasm's size).

pub mod charts;
mod deploy;
mod form;
pub mod panels;
mod patch;
mod sources;
pub mod state;

use leptos::prelude::*;
use wasm_bindgen::{JsCast, JsValue};

use crate::io::url::{self, Field, UrlState};

use state::AppState;

/// An effect behind one boxed closure type: every effect of the page shares one instantiation
/// of Leptos's effect code (each distinct closure type would get its own, 1 to 2 KB of wasm).
pub(crate) fn effect(f: impl Fn() + 'static) {
    let f: Box<dyn Fn()> = Box::new(f);
    Effect::new(move |_| f());
}

/// What the page last wrote of a list of items (the figures, the fields' messages, their
/// placeholders), so an effect over the whole list writes only the items that changed: one
/// effect for a list instead of one per item, each of which every input change would wake.
pub(crate) struct Written<T>(std::cell::RefCell<Vec<Option<T>>>);

impl<T: Clone + PartialEq> Written<T> {
    pub(crate) fn new() -> Written<T> {
        Written(std::cell::RefCell::new(Vec::new()))
    }

    /// Calls `write(i, before, now)` for each item of `now` that differs from what was last
    /// written at `i` (every item the first time; `before` is then `None`), and keeps `now`.
    pub(crate) fn each_changed(&self, now: &[T], mut write: impl FnMut(usize, Option<&T>, &T)) {
        let mut slots = self.0.borrow_mut();
        slots.resize(now.len(), None);
        for (i, (slot, value)) in slots.iter_mut().zip(now).enumerate() {
            if slot.as_ref() != Some(value) {
                let before = slot.replace(value.clone());
                write(i, before.as_ref(), value);
            }
        }
    }
}

/// The unit an example is read in: the article's own (seed 003 works in decimal GB).
fn example_unit(id: &str) -> Option<&'static str> {
    crate::catalog::examples::info(id)
        .filter(|e| e.unit == crate::calc::units::UnitSystem::Decimal)
        .map(|_| "gb")
}

/// The state an example link loads.
fn example_state(id: &str) -> UrlState {
    let mut s = UrlState::default();
    let _ = s.set(Field::Example, id);
    if let Some(u) = example_unit(id) {
        let _ = s.set(Field::Unit, u);
    }
    s
}

/// The header's markup, built once: the title, the examples menu (each seed system is one
/// click and a shareable link), the GiB/GB toggle and "Copy link". [`App`] listens to it.
fn header_html() -> String {
    let esc = charts::xml_escape;
    let mut h = String::from(
        r##"<a class="skip-link" href="#results" data-testid="skip-to-results">Skip to the results</a><div class="brand"><h1>Headroom</h1><p class="tagline">vLLM's GPU memory plan for every rank, exact and explained. Runs in your browser; nothing leaves it.</p></div><nav class="examples" data-testid="examples" aria-label="Examples"><span class="label">Examples:</span>"##,
    );
    for e in url::examples() {
        let href = format!("?{}", url::encode(&example_state(e.id)));
        h.push_str(&format!(
            r#"<a href="{}" data-testid="example-{}" data-example="{}" title="{}">{}</a>"#,
            esc(&href),
            esc(e.id),
            esc(e.id),
            esc(e.summary),
            esc(e.title)
        ));
    }
    h.push_str(
        r#"<a href="?v=1" data-testid="example-none" data-example="">Start over</a></nav><div class="tools"><fieldset class="unit" data-testid="unit"><legend>Unit</legend><label><input type="radio" name="unit" data-testid="unit-gib" value=""> GiB (2^30)</label><label><input type="radio" name="unit" data-testid="unit-gb" value="gb"> GB (10^9)</label></fieldset><button type="button" data-testid="copy-link">Copy link</button><button type="button" data-testid="copy-command" title="This scenario as a vllm serve command">Copy command</button><span role="status" class="status" id="link-status"></span></div>"#,
    );
    h
}

/// A click in the header: an example or "Start over" loads its state in place (the link
/// still works when opened elsewhere); "Copy link" copies the page's address.
fn on_header_click(app: AppState, link_status: RwSignal<String>, ev: &web_sys::MouseEvent) {
    let Some(target) = target_element(ev) else {
        return;
    };
    if let Some(a) = target.closest("a[data-example]").ok().flatten() {
        // Ctrl-, Cmd-, Shift- or Alt-click keeps the browser's own behaviour (a new tab or
        // window with the example's link).
        if ev.button() != 0 || ev.ctrl_key() || ev.meta_key() || ev.shift_key() || ev.alt_key() {
            return;
        }
        ev.prevent_default();
        app.notices.set(Vec::new());
        let next = match a.get_attribute("data-example").filter(|id| !id.is_empty()) {
            Some(id) => example_state(&id),
            None => UrlState::default(),
        };
        // A new history entry, so Back returns to the scenario the click replaced (the current
        // entry is brought up to date first: the URL follows the inputs 150 ms late).
        if let Ok(h) = window().history() {
            let _ = h.replace_state_with_url(&JsValue::NULL, "", Some(&current_query(app)));
            let _ = h.push_state_with_url(
                &JsValue::NULL,
                "",
                Some(&format!("?{}", url::encode(&next))),
            );
        }
        app.load(&next);
    } else if target
        .closest("[data-testid=copy-link]")
        .ok()
        .flatten()
        .is_some()
    {
        panels::copy_text(page_link(app), link_status);
    } else if target
        .closest("[data-testid=copy-command]")
        .ok()
        .flatten()
        .is_some()
    {
        match deploy::exported(app) {
            Some(e) => panels::copy_text(e.text, link_status),
            None => link_status
                .set("No command: these inputs give no scenario (see the verdict).".into()),
        }
    }
}

/// The inputs as a query string (`?v=1&...`).
fn current_query(app: AppState) -> String {
    app.checked.with_untracked(|(s, _)| url::link(s))
}

/// The page's whole address with the inputs as they are now (not the address bar, which
/// follows them 150 ms late): what "Copy link", the copied ledger and print show.
pub(crate) fn page_link(app: AppState) -> String {
    let href = window().location().href().unwrap_or_default();
    let base = href.split(['?', '#']).next().unwrap_or_default();
    format!("{base}{}", current_query(app))
}

/// The element an event happened on, if it is one.
pub(crate) fn target_element(ev: &web_sys::Event) -> Option<web_sys::Element> {
    ev.target()?.dyn_into().ok()
}

/// The nearest element matching `selector` from an event's target up (delegated listeners).
pub(crate) fn closest(ev: &web_sys::Event, selector: &str) -> Option<web_sys::Element> {
    target_element(ev)?.closest(selector).ok().flatten()
}

/// Back and Forward between entries the page pushed (example clicks): the entry's link is the
/// scenario.
fn follow_history(app: AppState) {
    let on_pop = wasm_bindgen::closure::Closure::<dyn Fn()>::new(move || {
        let d = url::decode(&state::location_link());
        app.load(&d.state);
        app.notices.set(d.ignored);
    });
    let _ = window().add_event_listener_with_callback("popstate", on_pop.as_ref().unchecked_ref());
    on_pop.forget();
}

/// The GiB/GB toggle changed.
fn on_header_change(app: AppState, ev: &web_sys::Event) {
    let Some(input) = ev
        .target()
        .and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok())
    else {
        return;
    };
    if input.name() == "unit" && input.checked() {
        app.text(Field::Unit).set(input.value());
    }
}

/// Text from a link made safe to read: control characters and the invisible ones that reorder
/// or hide text (bidi overrides, isolates and marks, zero-width characters) are shown as
/// `\u{202e}` escapes, so a link cannot make the notice say something else than it holds.
fn visible(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control()
            || matches!(c, '\u{061c}' | '\u{200b}'..='\u{200f}' | '\u{2028}'..='\u{202e}' | '\u{2060}'..='\u{2069}' | '\u{feff}')
        {
            out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    out
}

/// The notice listing what the URL carried that was not used, as markup (empty when none).
fn notice_html(items: &[url::Ignored]) -> String {
    if items.is_empty() {
        return String::new();
    }
    let esc = charts::xml_escape;
    let mut h = String::from(
        r#"<div class="notice" data-testid="url-notice" role="alert"><p>Some parameters in the link were ignored:</p><ul>"#,
    );
    // A long value is echoed once, cut to its start: the notice stays readable on a phone.
    let cut = |t: String| -> String {
        if t.chars().count() > 160 {
            format!("{}…", t.chars().take(160).collect::<String>())
        } else {
            t
        }
    };
    for i in items {
        h.push_str(&format!(
            "<li><code>{}</code>: {}</li>",
            esc(&cut(visible(&i.key))),
            esc(&cut(visible(&i.reason)))
        ));
    }
    h.push_str(r#"</ul><button type="button" data-testid="dismiss-notice">Dismiss</button></div>"#);
    h
}

/// The form beside the result panels.
fn layout(app: AppState) -> impl IntoView {
    view! {
        {deploy::deploy(app)}
        {form::form(app)}
        {panels::results(app)}
    }
}

/// On narrow screens the figures come before the form (a shared link is opened to read them).
/// The nodes are moved rather than reordered with CSS, so the Tab order stays the order seen.
fn narrow_screens_read_results_first() {
    let Some(query) = window().match_media("(max-width: 860px)").ok().flatten() else {
        return;
    };
    let arrange = {
        let query = query.clone();
        move || {
            let layout = document().get_element_by_id("layout");
            let find = |sel: &str| layout.as_ref()?.query_selector(sel).ok().flatten();
            if let (Some(layout), Some(form), Some(results)) =
                (&layout, find(":scope > .inputs"), find(":scope > .results"))
            {
                let (first, second) = if query.matches() {
                    (results, form)
                } else {
                    (form, results)
                };
                // Moving a node that holds the focus would drop it, so only move when needed.
                if first.next_element_sibling().as_ref() != Some(&second) {
                    let _ = layout.insert_before(&first, Some(&second));
                }
                // Your own deployment: above both on a wide screen; on a phone after the
                // figures (a shared link is opened to read them), before the form.
                if let Some(deploy) = find(":scope > .deploy-wrap") {
                    let before = if query.matches() { &second } else { &first };
                    if deploy.next_element_sibling().as_ref() != Some(before) {
                        let _ = layout.insert_before(&deploy, Some(before));
                    }
                }
            }
        }
    };
    arrange();
    let on_change = wasm_bindgen::closure::Closure::<dyn Fn()>::new(arrange);
    let _ = query.add_event_listener_with_callback("change", on_change.as_ref().unchecked_ref());
    on_change.forget();
}

/// The whole page.
#[component]
pub fn App() -> impl IntoView {
    // A reload brings back what was typed, a text in error included (the link leaves it out).
    let (initial, notices, b) = state::opening();
    let app = AppState::with_comparison(&initial, notices, b);
    app.mirror_to_browser();
    follow_history(app);
    let link_status = RwSignal::new(String::new());
    let unit = app.text(Field::Unit);
    // The header's live parts: the unit toggle and the copy status.
    effect(move || {
        use crate::calc::units::UnitSystem;
        let chosen = url::parse_unit(&unit.get()).unwrap_or_default();
        for u in [UnitSystem::Binary, UnitSystem::Decimal] {
            let (id, on) = (crate::verdict::unit_radio(u), u == chosen);
            if let Some(el) = document()
                .query_selector(&format!("[data-testid={id}]"))
                .ok()
                .flatten()
                .and_then(|e| e.dyn_into::<web_sys::HtmlInputElement>().ok())
            {
                el.set_checked(on);
            }
        }
    });
    effect(move || {
        let text = link_status.get();
        if let Some(el) = document().get_element_by_id("link-status") {
            el.set_text_content(Some(&text));
        }
    });
    // The verdict paints alone; the form and the panels are mounted in the next task, so the
    // first screen does not wait for their code to compile and their DOM to build. A second
    // mount (not a reactive `Option` of the layout) keeps Trunk's output smaller: the layout is
    // built once and never rebuilt as a whole.
    set_timeout(
        move || {
            if let Some(el) = document().get_element_by_id("layout") {
                // The shell's first figures (see `mount`) give way to the panels' own.
                if let Some(f) = document().get_element_by_id("shell-figures") {
                    f.remove();
                }
                leptos::mount::mount_to(el.unchecked_into(), move || layout(app)).forget();
                narrow_screens_read_results_first();
            }
        },
        std::time::Duration::ZERO,
    );
    view! {
        <header
            class="top"
            inner_html=header_html()
            on:click=move |ev| on_header_click(app, link_status, &ev)
            on:change=move |ev| on_header_change(app, &ev)
        ></header>
        // One click handler for the notice and the verdict's button.
        <div on:click=move |ev: web_sys::MouseEvent| {
                if closest(&ev, "[data-testid=verdict-goto]").is_some() {
                    panels::go_to(&panels::goto_field(app).unwrap_or_else(|| "model".into()));
                } else if closest(&ev, "[data-testid=dismiss-notice]").is_some() {
                    app.notices.set(Vec::new());
                    // The button is gone: the keyboard goes on from the verdict, next in order.
                    if let Some(v) = document()
                        .query_selector("[data-testid=verdict]")
                        .ok()
                        .flatten()
                        .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok())
                    {
                        let _ = v.set_attribute("tabindex", "-1");
                        let _ = v.focus();
                    }
                }
            }>
            <div inner_html=move || app.notices.with(|n| notice_html(n))></div>
            {panels::verdict(app)}
        </div>
        <p class="print-only">
            "Scenario (the page's link): "
            // The whole address: paper cannot be followed back by a query string alone.
            <code>{move || {
                app.checked.track();
                page_link(app)
            }}</code>
        </p>
        // Filled one task later by `layout` (see `App`).
        <main class="layout" id="layout"></main>
        <footer>
            <p>"Headroom follows vLLM 0.10.2 to 0.33 (before 0.14: dense full-attention and MLA models). Figures are exact where the badge says exact; estimates state their assumption; measured values say where they came from."</p>
        </footer>
    }
}

/// Mounts the app on the page's body, in place of the static shell `index.html` paints while
/// the wasm loads (the same header, a line saying what is being planned, and the first verdict
/// the verdict program wrote): removed and replaced in one task, so no frame shows neither.
/// The shell's three figures stay, above the layout, until the panels replace them one task
/// later: no frame lacks them, and no frame has them twice.
pub fn mount() {
    // A phone draws its charts on a canvas as wide as their column (the page's paddings take
    // 66 px of the window there), so their text stays legible unscrolled.
    let width = web_sys::window()
        .and_then(|w| w.inner_width().ok())
        .and_then(|w| w.as_f64())
        .unwrap_or(1280.0);
    charts::set_narrow((width < 640.0).then(|| (width - 66.0).max(0.0) as u32));
    let figures = document().get_element_by_id("shell-figures");
    if let Some(shell) = document().get_element_by_id("shell") {
        shell.remove();
    }
    leptos::mount::mount_to_body(App);
    if let (Some(f), Some(layout)) = (figures, document().get_element_by_id("layout")) {
        let _ = layout.before_with_node_1(&f);
    }
}

/// The plan of a page state given as (field, text) pairs, for the UI's unit tests.
#[cfg(test)]
pub(crate) fn plan_of(pairs: &[(Field, &str)]) -> crate::calc::Plan {
    let mut st = UrlState::default();
    for (f, t) in pairs {
        st.set(*f, t).unwrap();
    }
    crate::calc::plan(&url::scenario(&st).unwrap()).unwrap()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_lists_call_back_only_for_what_changed() {
        let w = Written::new();
        let mut seen = Vec::new();
        w.each_changed(&["a", "b"], |i, before, now| {
            seen.push((i, before.copied(), *now))
        });
        assert_eq!(
            seen,
            [(0, None, "a"), (1, None, "b")],
            "everything the first time"
        );
        seen.clear();
        w.each_changed(&["a", "c", "d"], |i, before, now| {
            seen.push((i, before.copied(), *now))
        });
        assert_eq!(seen, [(1, Some("b"), "c"), (2, None, "d")]);
        seen.clear();
        w.each_changed(&["a", "c", "d"], |i, before, now| {
            seen.push((i, before.copied(), *now))
        });
        assert!(seen.is_empty());
    }

    #[test]
    fn the_static_shell_paints_the_header_the_app_draws() {
        // index.html's shell is what a visitor sees while the wasm loads; the app replaces it
        // with its own header, which must be the same markup (no jump, no other examples).
        let page = include_str!("../../index.html");
        assert!(
            page.contains(&format!(r#"<header class="top">{}</header>"#, header_html())),
            "index.html's shell header differs from ui::header_html(); paste the new markup into index.html"
        );
    }

    #[test]
    fn the_static_shell_labels_its_first_figures_as_the_panels_do() {
        // The verdict program fills these three before the app runs (public/boot.js); the
        // panels then show the same figures under the same labels.
        let page = include_str!("../../index.html");
        for id in crate::verdict::REPLICA_FIGURES {
            let (_, label, _) = panels::FIGURES
                .iter()
                .find(|(i, _, _)| *i == id)
                .expect("a replica figure the panels show");
            assert!(
                page.contains(&format!(
                    r#"<dt>{label} <span class="badge"></span></dt><dd data-testid="{id}">…</dd>"#
                )),
                "index.html's shell has no figure {id} labelled {label:?}"
            );
        }
    }

    #[test]
    fn the_url_notice_shows_invisible_characters_as_escapes() {
        let items = [url::Ignored {
            key: "\u{202e}gpj.exe\u{2066}".into(),
            reason: "unknown\u{7}\u{200f} parameter <b>".into(),
        }];
        let h = notice_html(&items);
        assert!(
            h.contains(
                r"<code>\u{202e}gpj.exe\u{2066}</code>: unknown\u{7}\u{200f} parameter &lt;b&gt;"
            ),
            "{h}"
        );
        assert!(!h.chars().any(|c| c.is_control()
            || matches!(c, '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')));
        assert_eq!(visible("tp=2 ×"), "tp=2 ×");
    }
}
