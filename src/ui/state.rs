//! The page's state: one text signal per input (keyed by `io::url::Field`), and the memos every
//! panel reads: the checked inputs, the `Scenario`, the `Plan`, and the two sweeps.
//!
//! Effects only touch the outside world: the URL (`history.replaceState`), local storage and
//! the document title. Nothing here computes a figure; the plan comes from `calc::plan` and
//! the sweeps from `calc::sweep`.

use std::sync::Arc;

use leptos::prelude::*;

use super::effect;

use crate::calc::scenario::Scenario;
use crate::calc::sweep::{self, LenPoint, PoolPoint};
use crate::calc::units::UnitSystem;
use crate::calc::Plan;
use crate::io::url::{self, Field, Ignored, UrlState};

pub use crate::verdict::{Problem, DEFINING};
use crate::verdict::{STORAGE_KEY, TYPED_KEY};

/// The inputs and everything derived from them. `Copy`: every handle is a signal or memo.
#[derive(Clone, Copy)]
pub struct AppState {
    texts: [RwSignal<String>; Field::ALL.len()],
    /// Parameters the URL carried that were not used; cleared when dismissed.
    pub notices: RwSignal<Vec<Ignored>>,
    /// The checked inputs and, per field, the message of a text that failed its check.
    pub checked: Memo<(UrlState, Vec<(Field, String)>)>,
    pub scenario: Memo<Result<Scenario, Problem>>,
    pub plan: Memo<Result<Arc<Plan>, Problem>>,
    /// The last plan that could be computed: panels keep showing it, dimmed, while an input
    /// is in error.
    pub shown: Memo<Option<Arc<Plan>>>,
    pub unit: Memo<UnitSystem>,
    /// `shown` and `unit` one task later: the slow lane's panels read these.
    pub later: Memo<Option<Arc<Plan>>>,
    pub later_unit: Memo<UnitSystem>,
    /// Counts the slow lane's runs: one task after every change of the scenario, the shown
    /// plan or the unit (what follows the scenario even while the plan keeps its last value).
    pub tick: RwSignal<u64>,
    pub len_sweep: Memo<Vec<LenPoint>>,
    pub pool_sweep: Memo<Vec<PoolPoint>>,
    /// A startup log compared on the page: its figures that the inputs hold are cited as read
    /// from it (the line and the text), and the comparison reads it.
    pub cited: RwSignal<Option<Arc<crate::import::log::Log>>>,
    /// The comparison's inputs (`b.` keys): scenario B is the inputs with these on top.
    pub b: RwSignal<Vec<(Field, String)>>,
    /// `later` after the next paint: the teaching panels read this.
    pub teach: Memo<Option<Arc<Plan>>>,
}

impl AppState {
    /// Builds the signals from the opening texts (every input's, in [`Field::ALL`]'s order:
    /// [`opening`]) and the memos on them.
    pub fn new(initial: &[String], notices: Vec<Ignored>) -> AppState {
        AppState::with_comparison(initial, notices, Vec::new())
    }

    /// [`AppState::new`] with a comparison's inputs (`b.` keys) from the opening address.
    pub fn with_comparison(
        initial: &[String],
        notices: Vec<Ignored>,
        b: Vec<(Field, String)>,
    ) -> AppState {
        let texts: [RwSignal<String>; Field::ALL.len()] =
            std::array::from_fn(|i| RwSignal::new(initial.get(i).cloned().unwrap_or_default()));
        let b = RwSignal::new(b);
        let checked = Memo::new(move |_| {
            let texts: Vec<String> = texts.iter().map(|t| t.get()).collect();
            let mut c = crate::verdict::check(&texts);
            b.with(|b| {
                for (f, t) in b {
                    let _ = c.0.set_b(*f, t);
                }
            });
            c
        });
        let cited: RwSignal<Option<Arc<crate::import::log::Log>>> = RwSignal::new(None);
        let scenario = Memo::new(move |_| -> Result<Scenario, Problem> {
            checked.with(|c| {
                let mut s = crate::verdict::scenario_of(c)?;
                cited.with(|l| {
                    if let Some(l) = l {
                        crate::import::replay::cite(l, &mut s);
                    }
                });
                Ok(s)
            })
        });
        let plan = Memo::new(move |_| {
            scenario.with(|s| match s {
                Err(p) => Err(p.clone()),
                Ok(s) => checked
                    .with(|(st, _)| crate::verdict::plan_of_state(st, s))
                    .map(Arc::new),
            })
        });
        let shown = Memo::new(move |prev: Option<&Option<Arc<Plan>>>| {
            plan.with(|p| match p {
                Ok(p) => Some(p.clone()),
                Err(_) => prev.cloned().flatten(),
            })
        });
        let unit = Memo::new(move |_| checked.with(|(s, _)| s.unit()));
        // The slow lane. The sweeps plan about thirty scenarios, and the ledger, the checks
        // and the tables rebuild a lot of DOM; they follow the inputs one task after the
        // verdict, the figures and the rank chart, so those update at once while typing.
        let tick = RwSignal::new(0u64);
        effect(move || {
            scenario.track();
            shown.track();
            unit.track();
            set_timeout(move || tick.update(|t| *t += 1), std::time::Duration::ZERO);
        });
        let later = Memo::new(move |_| {
            if tick.get() == 0 {
                return None;
            }
            shown.get_untracked()
        });
        let later_unit = Memo::new(move |_| {
            tick.track();
            unit.get_untracked()
        });
        // The teaching lane: the panels that plan variants of the scenario (what fixes it, the
        // walkthrough, the probes, the engines, the comparison) follow the slow lane after the
        // next paint, so the frame after an input shows the figures without waiting for them.
        let teach_tick = RwSignal::new(0u64);
        effect(move || {
            tick.track();
            request_animation_frame(move || {
                set_timeout(
                    move || teach_tick.update(|t| *t += 1),
                    std::time::Duration::ZERO,
                )
            });
        });
        let teach = Memo::new(move |_| {
            if teach_tick.get() == 0 {
                return None;
            }
            shown.get_untracked()
        });
        let len_sweep = Memo::new(move |_| {
            if tick.get() == 0 {
                return Vec::new();
            }
            scenario.with_untracked(|s| s.as_ref().map(sweep::len_sweep).unwrap_or_default())
        });
        let pool_sweep = Memo::new(move |_| {
            if tick.get() == 0 {
                return Vec::new();
            }
            scenario.with_untracked(|s| s.as_ref().map(sweep::pool_sweep).unwrap_or_default())
        });
        AppState {
            texts,
            notices: RwSignal::new(notices),
            checked,
            scenario,
            plan,
            shown,
            unit,
            later,
            tick,
            later_unit,
            len_sweep,
            pool_sweep,
            cited,
            b,
            teach,
        }
    }

    /// The text signal of one input.
    pub fn text(&self, field: Field) -> RwSignal<String> {
        let i = Field::ALL
            .iter()
            .position(|f| *f == field)
            .expect("every field has a signal");
        self.texts[i]
    }

    /// The message for a field whose text failed its check, or that the core named.
    pub fn error(&self, field: Field) -> Option<String> {
        let own = self.checked.with(|(_, errs)| {
            errs.iter()
                .find(|(f, _)| *f == field)
                .map(|(_, m)| m.clone())
        });
        own.or_else(|| {
            self.plan.with(|p| match p {
                Err(pr) if pr.field == Some(field) => Some(pr.message.clone()),
                _ => None,
            })
        })
    }

    /// Replaces every input at once (an example, a URL): fields not in `state` are cleared.
    pub fn load(&self, state: &UrlState) {
        for (i, f) in Field::ALL.iter().enumerate() {
            let t = state.get(*f).unwrap_or("").to_string();
            if self.texts[i].get_untracked() != t {
                self.texts[i].set(t);
            }
        }
        let b: Vec<(Field, String)> = state.iter_b().map(|(f, t)| (f, t.to_string())).collect();
        if self.b.get_untracked() != b {
            self.b.set(b);
        }
    }

    /// Starts the effects that mirror the state into the URL, local storage and the title.
    pub fn mirror_to_browser(&self) {
        let checked = self.checked;
        // The URL and local storage are written at most every 150 ms, with the newest state:
        // replaceState is slow in browsers (an IPC, several ms), and typing should not wait.
        // The link is made then too, not while the figures wait for the input's effects.
        let pending = StoredValue::new(false);
        let texts = self.texts;
        effect(move || {
            checked.track();
            texts.iter().for_each(Track::track);
            let first = pending
                .try_update_value(|p| !std::mem::replace(p, true))
                .unwrap_or(false);
            if first {
                set_timeout(
                    move || {
                        if pending.try_update_value(std::mem::take) != Some(true) {
                            return;
                        }
                        let Some(href) = checked.try_with_untracked(|(s, _)| url::link(s)) else {
                            return;
                        };
                        // The texts as typed, for a reload (a text in error is not in the link).
                        let typed: Vec<(Field, String)> = Field::ALL
                            .iter()
                            .zip(texts.iter())
                            .map(|(f, t)| (*f, t.get_untracked()))
                            .collect();
                        let pairs: Vec<(Field, &str)> =
                            typed.iter().map(|(f, t)| (*f, t.as_str())).collect();
                        let typed = url::encode_texts(&pairs);
                        let w = window();
                        if let Ok(h) = w.history() {
                            let _ = h.replace_state_with_url(
                                &wasm_bindgen::JsValue::NULL,
                                "",
                                Some(&href),
                            );
                        }
                        if let Ok(Some(ls)) = w.local_storage() {
                            let _ = ls.set_item(STORAGE_KEY, &href);
                        }
                        // This tab's reload brings back what was typed, errors included.
                        if let Ok(Some(ss)) = w.session_storage() {
                            let _ = ss.set_item(TYPED_KEY, &format!("{href}\n{typed}"));
                        }
                    },
                    std::time::Duration::from_millis(150),
                );
            }
        });
        let plan = self.plan;
        // The title changes with the outcome, not with every figure.
        let title = Memo::new(move |_| {
            plan.with(|p| match p {
                Ok(p) if p.starts() => "starts".to_string(),
                Ok(p) => p
                    .first_failure()
                    .map_or("fails".into(), |c| format!("fails at {}", c.phase.label())),
                Err(e) => format!("{} is invalid", e.flag),
            })
        });
        effect(move || title.with(|t| document().set_title(&format!("Headroom: {t}"))));
    }
}

/// The page's address from `?` on: the query and the fragment (a long config travels there).
pub fn location_link() -> String {
    let l = window().location();
    format!(
        "{}{}",
        l.search().unwrap_or_default(),
        l.hash().unwrap_or_default()
    )
}

/// Every input's opening text and the address's unused keys: the address's state, else the
/// last one kept in local storage, and on a reload the texts typed in this tab (errors
/// included, which the link leaves out). The verdict program opens the same way
/// (`crate::verdict::opening_texts`).
pub fn opening() -> (Vec<String>, Vec<Ignored>, Vec<(Field, String)>) {
    let link = location_link();
    let item = |store: Option<web_sys::Storage>, key: &str| store?.get_item(key).ok().flatten();
    let w = window();
    let stored = item(w.local_storage().ok().flatten(), STORAGE_KEY);
    let typed = item(w.session_storage().ok().flatten(), TYPED_KEY);
    let (texts, notices) =
        crate::verdict::opening_texts(&link, stored.as_deref(), typed.as_deref());
    // The comparison (`b.` keys) of the same opening state.
    let b = crate::verdict::opening_state(&link, stored.as_deref())
        .0
        .iter_b()
        .map(|(f, t)| (f, t.to_string()))
        .collect();
    (texts, notices, b)
}
