//! The web page (feature `web`): a Leptos app that formats the `Plan` of the scenario the user
//! sets up. Inputs are one text signal each (see [`state`]); the plan is one memo; every panel
//! reads it and none does arithmetic of its own.
//!
//! Layout: header (examples, unit, copy link), the URL notice, the verdict, then the form beside
//! the result panels (pool versus demand, per-rank chart, sweeps, checks, ledger, vLLM's log).

pub mod charts;
mod form;
pub mod panels;
pub mod state;

use leptos::prelude::*;
use wasm_bindgen::JsCast;

use crate::io::url::{self, Field, UrlState};

use state::AppState;

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

/// The examples menu: each seed system is one click and a shareable link.
fn examples_menu(app: AppState) -> impl IntoView {
    view! {
        <nav class="examples" data-testid="examples" aria-label="Examples">
            <span class="label">"Examples:"</span>
            {url::examples()
                .iter()
                .map(|e| {
                    let id = e.id;
                    let href = format!("?{}", url::encode(&example_state(id)));
                    view! {
                        <a
                            href=href
                            data-testid=format!("example-{id}")
                            title=e.summary
                            on:click=move |ev| {
                                ev.prevent_default();
                                app.notices.set(Vec::new());
                                app.load(&example_state(id));
                            }
                        >
                            {e.title}
                        </a>
                    }
                })
                .collect_view()}
            <a href="?v=1" data-testid="example-none" on:click=move |ev| {
                ev.prevent_default();
                app.notices.set(Vec::new());
                app.load(&UrlState::default());
            }>"Start over"</a>
        </nav>
    }
}

/// The GiB/GB toggle.
fn unit_toggle(app: AppState) -> impl IntoView {
    let unit = app.text(Field::Unit);
    let is_gb =
        move || url::parse_unit(&unit.get()).ok() == Some(crate::calc::units::UnitSystem::Decimal);
    view! {
        <fieldset class="unit" data-testid="unit">
            <legend>"Unit"</legend>
            <label><input type="radio" name="unit" data-testid="unit-gib" prop:checked=move || !is_gb() on:change=move |_| unit.set(String::new())/>" GiB (2^30)"</label>
            <label><input type="radio" name="unit" data-testid="unit-gb" prop:checked=is_gb on:change=move |_| unit.set("gb".into())/>" GB (10^9)"</label>
        </fieldset>
    }
}

/// The notice listing what the URL carried that was not used.
fn url_notice(app: AppState) -> impl IntoView {
    move || {
        let items = app.notices.get();
        (!items.is_empty()).then(|| {
            view! {
                <div class="notice" data-testid="url-notice" role="alert">
                    <p>"Some parameters in the link were ignored:"</p>
                    <ul>
                        {items
                            .into_iter()
                            .map(|i| view! { <li><code>{i.key}</code>": "{i.reason}</li> })
                            .collect_view()}
                    </ul>
                    <button type="button" data-testid="dismiss-notice" on:click=move |_| app.notices.set(Vec::new())>
                        "Dismiss"
                    </button>
                </div>
            }
        })
    }
}

/// The form beside the result panels.
fn layout(app: AppState) -> impl IntoView {
    let stale = panels::stale(app);
    view! {
        {form::form(app)}
        <div class="results" class:stale=stale>
            {panels::pool_figures(app)}
            {panels::rank_chart(app)}
            {panels::sweeps(app)}
            {panels::checks(app)}
            {panels::ledger(app)}
            {panels::vllm_log(app)}
        </div>
    }
}

/// The whole page.
#[component]
pub fn App() -> impl IntoView {
    let (initial, notices) = state::initial_state();
    let app = AppState::new(&initial, notices);
    app.mirror_to_browser();
    let link_status = RwSignal::new(String::new());
    let copy_link = move |_| {
        let href = window().location().href().unwrap_or_default();
        panels::copy_text(href, link_status);
    };
    // The verdict paints alone; the form and the panels are mounted in the next task, so the
    // first screen does not wait for their code to compile and their DOM to build. A second
    // mount (not a reactive `Option` of the layout) keeps Trunk's output smaller: the layout is
    // built once and never rebuilt as a whole.
    set_timeout(
        move || {
            if let Some(el) = document().get_element_by_id("layout") {
                leptos::mount::mount_to(el.unchecked_into(), move || layout(app)).forget();
            }
        },
        std::time::Duration::ZERO,
    );
    view! {
        <header class="top">
            <div class="brand">
                <h1>"Headroom"</h1>
                <p class="tagline">"vLLM's GPU memory plan for every rank, exact and explained. Runs in your browser; nothing leaves it."</p>
            </div>
            {examples_menu(app)}
            <div class="tools">
                {unit_toggle(app)}
                <button type="button" data-testid="copy-link" on:click=copy_link>"Copy link"</button>
                <span role="status" class="status">{move || link_status.get()}</span>
            </div>
        </header>
        {url_notice(app)}
        {panels::verdict(app)}
        <p class="print-only">
            "Scenario (the page's link): "
            <code>{move || app.checked.with(|(s, _)| format!("?{}", url::encode(s)))}</code>
        </p>
        // Filled one task later by `layout` (see `App`).
        <main class="layout" id="layout"></main>
        <footer>
            <p>"Headroom follows vLLM 0.14 to 0.33. Figures are exact where the badge says exact; estimates state their assumption; measured values say where they came from."</p>
        </footer>
    }
}

/// Mounts the app on the page's body.
pub fn mount() {
    leptos::mount::mount_to_body(App);
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
