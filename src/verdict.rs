//! The first verdict: the state a page opens with (its address, else the last state kept in
//! the browser, and a reload's texts as typed), the checked inputs, the scenario and the plan,
//! and the banner's words and the first figures. Pure: the page (`ui`) and the small verdict
//! program the loader runs before the app (`src/bin/verdict.rs`) both call it, so the words
//! painted before the app are the app's own.

use crate::calc::plan::{Plan, Provenance};
use crate::calc::scenario::Scenario;
use crate::calc::units::{grouped_fixed, plural, thousands, UnitSystem};
use crate::calc::{self};
use crate::input::query::{decode, decode_texts, Ignored, UrlState};
use crate::input::Field;

/// Where the last state is kept when the page is opened without one in its URL.
pub const STORAGE_KEY: &str = "headroom:last-query";
/// This tab's texts as typed, for a reload (session storage).
pub const TYPED_KEY: &str = "headroom:typed";
/// What a figure without a value shows.
pub const DASH: &str = "—";

/// The inputs that say what is planned: while one is in error the plan stops (and the panels
/// keep the last valid figures) instead of planning the default in its place.
pub const DEFINING: [Field; 4] = [Field::Example, Field::Model, Field::Config, Field::Gpu];

/// Why the page cannot show a plan for the current inputs: the field to flag and the message.
#[derive(Clone, Debug, PartialEq)]
pub struct Problem {
    /// The input at fault, when the message names one the form has.
    pub field: Option<Field>,
    /// The flag as the core named it (`tensor-parallel-size`).
    pub flag: String,
    pub message: String,
}

/// The checked inputs and, per field, the message of a text that failed its check.
pub type Checked = (UrlState, Vec<(Field, String)>);

/// The state the page opens with: the address's (`link`, from `?` on), else `stored`, the last
/// state kept in local storage under [`STORAGE_KEY`].
pub fn opening_state(link: &str, stored: Option<&str>) -> (UrlState, Vec<Ignored>) {
    if !link.contains('=') {
        if let Some(q) = stored {
            // A stored state was written by this page; anything it no longer accepts is
            // dropped quietly rather than reported as a URL problem.
            return (decode(q).state, Vec::new());
        }
        return (UrlState::default(), Vec::new());
    }
    let d = decode(link);
    (d.state, d.ignored)
}

/// The texts typed in this tab when its address was last written (`typed`, the session
/// storage's [`TYPED_KEY`] item), if the address is still the same (a reload): they include
/// texts in error, which the link leaves out.
pub fn typed_texts(link: &str, typed: Option<&str>) -> Option<Vec<(Field, String)>> {
    let (href, texts) = typed?.split_once('\n')?;
    let same = href == link || (link.is_empty() && href == "?v=1");
    same.then(|| decode_texts(texts))
}

/// Every input's opening text, in [`Field::ALL`]'s order, and the address's unused keys.
pub fn opening_texts(
    link: &str,
    stored: Option<&str>,
    typed: Option<&str>,
) -> (Vec<String>, Vec<Ignored>) {
    let (state, notices) = opening_state(link, stored);
    let typed = typed_texts(link, typed);
    let texts = Field::ALL
        .iter()
        .map(|f| match &typed {
            Some(t) => t
                .iter()
                .find(|(g, _)| g == f)
                .map_or(String::new(), |(_, t)| t.clone()),
            None => state.get(*f).unwrap_or("").to_string(),
        })
        .collect();
    (texts, notices)
}

/// The inputs' texts checked one by one, in [`Field::ALL`]'s order.
pub fn check<S: AsRef<str>>(texts: &[S]) -> Checked {
    let mut state = UrlState::default();
    let mut errors = Vec::new();
    for (f, text) in Field::ALL.iter().zip(texts) {
        if let Err(e) = state.set(*f, text.as_ref()) {
            errors.push((*f, e));
        }
    }
    (state, errors)
}

/// The scenario of checked inputs. A field that says what is planned (the model, its config,
/// the GPU, the example) is not replaced by the default while it is in error: another model's
/// figures under a green verdict would read as this one's.
pub fn scenario_of((state, errs): &Checked) -> Result<Scenario, Problem> {
    if let Some((f, m)) = errs.iter().find(|(f, _)| DEFINING.contains(f)) {
        return Err(Problem {
            field: Some(*f),
            flag: f.flag().to_string(),
            message: m.clone(),
        });
    }
    crate::input::scenario(state).map_err(|e| Problem {
        field: Some(e.field),
        flag: e.field.flag().to_string(),
        message: e.message,
    })
}

/// The plan of a scenario, or why there is none.
pub fn plan_of(s: &Scenario) -> Result<Plan, Problem> {
    calc::plan(s).map_err(problem)
}

/// The plan of a state's scenario, or why there is none; an error about a value only the
/// state's example set says so (`input::attribute`).
pub fn plan_of_state(state: &UrlState, s: &Scenario) -> Result<Plan, Problem> {
    calc::plan(s).map_err(|e| problem(crate::input::attribute(state, e)))
}

fn problem(e: calc::CalcError) -> Problem {
    Problem {
        field: e.input(),
        flag: e.field().to_string(),
        message: e.to_string(),
    }
}

/// The verdict's headline and its second line, from the plan.
pub fn verdict_text(plan: &Plan, unit: UnitSystem) -> (bool, String, String) {
    let (ok, head, sub) = verdict_text_plain(plan, unit);
    // Before what the plan says: a model vLLM would not load, then an estimate far from what
    // the model states of itself (every figure of the verdict stands on it).
    let first: Vec<String> = [
        plan.architecture_note.clone(),
        plan.weights_check.as_ref().map(|c| c.short()),
    ]
    .into_iter()
    .flatten()
    .chain((!sub.is_empty()).then_some(sub))
    .chain(why(plan, unit))
    .chain((!plan.scenario.is_empty()).then(|| format!("Planned: {}.", plan.scenario)))
    .collect();
    (ok, head, first.join(" "))
}

/// The one-line why of a started plan, on its deciding rank: the budget less what is not KV.
fn why(plan: &Plan, unit: UnitSystem) -> Option<String> {
    use crate::calc::Term;
    let replica = plan.replica.as_ref()?;
    let r = plan.ranks.get(replica.limiting_rank as usize)?;
    let get = |t: Term| r.line(t).map(|l| l.bytes);
    let budget = get(Term::Budget)?;
    let kv = r.available_kv;
    let amount = |b: i128| crate::calc::units::human(b, unit);
    let mut spent = 0i128;
    let parts: Vec<String> = [
        (Term::Weights, "weights"),
        (Term::Drafter, "drafter"),
        (Term::OtherConsumption, "other"),
        (Term::Activation, "activation"),
        (Term::CudaGraphs, "graphs"),
    ]
    .iter()
    .filter_map(|(t, name)| get(*t).filter(|b| *b > 0).map(|b| (*name, b)))
    .collect::<Vec<_>>()
    .into_iter()
    .map(|(name, b)| {
        spent += b;
        format!("{name} {}", amount(b))
    })
    .collect();
    // Only where the pool is what the budget leaves (not a pin, not an older release that
    // keeps the graphs outside the budget): the line must add up.
    (get(Term::KvPool).is_some() && !parts.is_empty() && budget - spent == kv).then(|| {
        format!(
            "Rank {}: budget {} - {} leaves {} for KV ({}).",
            r.rank,
            amount(budget),
            parts.join(" - "),
            amount(kv),
            r.line(Term::AvailableKv)
                .map_or("estimate", |l| l.provenance.label())
        )
    })
}

fn verdict_text_plain(plan: &Plan, unit: UnitSystem) -> (bool, String, String) {
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

/// The verdict banner: its class, its headline and its second line, from the plan (or why
/// there is none) and the plan the panels show.
///
/// `errs`: the inputs whose typed text failed its check. While one is in error the verdict
/// says so first, never under a green banner: the plan below it uses that input's default.
pub fn banner(
    plan: Result<&Plan, &Problem>,
    shown: Option<&Plan>,
    unit: UnitSystem,
    errs: &[(Field, String)],
) -> (String, String, String) {
    let typed_wrong = errs.iter().find(|(f, _)| !DEFINING.contains(f));
    if let (Ok(_), Some(p), Some((f, m))) = (plan, shown, typed_wrong) {
        let (_, head, _) = verdict_text(p, unit);
        let (what, _) = first_sentence(m);
        // The field's own message often opens with its name: say it once.
        let what = what
            .strip_prefix(f.flag())
            .and_then(|w| w.strip_prefix(": "))
            .unwrap_or(what);
        let others = errs.len() - 1;
        return (
            "verdict invalid".to_string(),
            format!("Fix --{}: {}", f.flag(), what.trim_end_matches('.')),
            format!(
                "With its default instead{}, the plan reads: {head}.",
                if others > 0 {
                    format!(
                        " (and {others} more input{} in error)",
                        if others > 1 { "s" } else { "" }
                    )
                } else {
                    String::new()
                }
            ),
        );
    }
    match (plan, shown) {
        (Err(e), shown) => {
            // A long message (vLLM's words and then why) keeps its first sentence in the
            // headline and moves the rest below, so the banner stays readable on a phone.
            let (head, sub) = headline(&e.message, &invalid_sub(&e.flag, shown.is_some()));
            (
                "verdict invalid".to_string(),
                format!("Cannot plan this: {head}"),
                sub,
            )
        }
        (Ok(_), Some(p)) => {
            let (ok, head, sub) = verdict_text(p, unit);
            (
                if ok { "verdict ok" } else { "verdict fail" }.to_string(),
                head,
                sub,
            )
        }
        (Ok(_), None) => ("verdict".into(), "Planning…".into(), String::new()),
    }
}

/// The banner's warning while inputs that do not define the scenario are in error (the
/// figures use their defaults), or nothing.
pub fn defaults_note(errs: &[(Field, String)]) -> String {
    // The fields that say what is planned stop the plan instead (`scenario_of`).
    let names: Vec<&str> = errs
        .iter()
        .map(|(f, _)| *f)
        .filter(|f| !DEFINING.contains(f))
        .map(|f| f.flag())
        .collect();
    if names.is_empty() {
        return String::new();
    }
    format!(
        "These figures use the default for {}: {} typed {} invalid (see the {}).",
        names.join(", "),
        plural(names.len() as u64, "the value", "the values"),
        plural(names.len() as u64, "is", "are"),
        plural(names.len() as u64, "field", "fields")
    )
}

/// A headline of a long message's first sentence, and the second line: the rest of it, then
/// `after`.
fn headline(message: &str, after: &str) -> (String, String) {
    let (head, rest) = first_sentence(message);
    let sub = match (rest.is_empty(), after.is_empty()) {
        (true, _) => after.to_string(),
        (false, true) => rest.to_string(),
        // The message's rest ends its sentence before the banner's own: a core message need
        // not end with a stop ("... the longest that fits is 30,256 tokens").
        (false, false) if rest.ends_with(['.', '!', '?', ':']) => format!("{rest} {after}"),
        (false, false) => format!("{rest}. {after}"),
    };
    (head.to_string(), sub)
}

/// A message over 140 characters split after its first sentence (a ". " past the 20th
/// character), else the whole message and nothing.
pub fn first_sentence(message: &str) -> (&str, &str) {
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

/// The replica's figures that lead "Pool versus demand", by test id: the text and its
/// provenance, or nothing when no pool is allocated.
pub const REPLICA_FIGURES: [&str; 3] =
    ["kv-cache-tokens", "max-concurrency", "full-length-requests"];

/// One of [`REPLICA_FIGURES`] of a plan.
pub fn replica_figure(id: &str, p: &Plan) -> Option<(String, Provenance)> {
    let r = p.replica.as_ref()?;
    let text = match id {
        "kv-cache-tokens" => thousands(u128::from(r.kv_cache_tokens)),
        "max-concurrency" => format!("{}x", grouped_fixed(r.max_concurrency, 2)),
        "full-length-requests" => thousands(u128::from(r.full_length_requests)),
        _ => return None,
    };
    Some((text, r.provenance.clone()))
}

/// What the page shows first, before anything is typed: the banner and the leading figures.
#[derive(Clone, Debug, PartialEq)]
pub struct FirstVerdict {
    /// The banner's class (`verdict ok`, `verdict fail`, `verdict invalid`).
    pub class: String,
    pub headline: String,
    pub sub: String,
    /// [`defaults_note`] of the opening inputs.
    pub warn: String,
    /// The test id of the unit radio the page opens with checked (`unit-gib`, `unit-gb`).
    pub unit: &'static str,
    /// Per [`REPLICA_FIGURES`] id: the text ([`DASH`] without a pool) and the provenance
    /// label (empty without one).
    pub figures: Vec<(&'static str, String, &'static str)>,
}

impl FirstVerdict {
    /// The list of strings the verdict programs hand to public/boot.js: the class, the headline,
    /// the second line, the warning and the unit radio's test id, then per leading figure its
    /// test id, text and provenance label.
    pub fn words(self) -> Vec<String> {
        let mut out = vec![
            self.class,
            self.headline,
            self.sub,
            self.warn,
            self.unit.to_string(),
        ];
        for (id, text, prov) in self.figures {
            out.extend([id.to_string(), text, prov.to_string()]);
        }
        out
    }
}

/// The first verdict of a page opened on `link` (its address from `?` on) with `stored` and
/// `typed` the browser's items under [`STORAGE_KEY`] and [`TYPED_KEY`].
pub fn first_verdict(link: &str, stored: Option<&str>, typed: Option<&str>) -> FirstVerdict {
    let (texts, _) = opening_texts(link, stored, typed);
    let checked = check(&texts);
    let plan = scenario_of(&checked).and_then(|s| plan_of_state(&checked.0, &s));
    let unit = checked.0.unit();
    let (class, headline, sub) = banner(plan.as_ref(), plan.as_ref().ok(), unit, &checked.1);
    let figures = REPLICA_FIGURES
        .iter()
        .map(|id| {
            let f = plan.as_ref().ok().and_then(|p| replica_figure(id, p));
            match f {
                Some((text, prov)) => (*id, text, prov.label()),
                None => (*id, DASH.to_string(), ""),
            }
        })
        .collect();
    FirstVerdict {
        class,
        headline,
        sub,
        warn: defaults_note(&checked.1),
        unit: unit_radio(unit),
        figures,
    }
}

/// The `data-testid` of the header's radio for a unit: the one the app checks, and the one the
/// first verdict checks in the shell.
pub fn unit_radio(unit: UnitSystem) -> &'static str {
    match unit {
        UnitSystem::Binary => "unit-gib",
        UnitSystem::Decimal => "unit-gb",
    }
}

/// What the page's opening state needs beyond the catalog's rows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BeyondCatalog {
    /// A pasted config.json: the config reader.
    pub config: bool,
    /// A seed example: its measurements and walkthrough.
    pub example: bool,
    /// A drafter named by draft-model: its catalog row.
    pub draft_model: bool,
    /// A model input: its catalog row, unless a pasted config.json replaces it.
    pub model: bool,
}

/// Whether this build leaves the opening state unplanned (src/bin/verdict.rs then answers an
/// empty list): a build with `catalog-compiled` and without `config-reader` has no config.json
/// reader, and leaves a pasted config.json. The page's verdict program has the reader (its
/// fourth of the code a pasted config alone runs, scripts/split-verdict.mjs) and plans every
/// state, as does every other build.
pub fn handed_over(link: &str, stored: Option<&str>, typed: Option<&str>) -> bool {
    cfg!(feature = "catalog-compiled")
        && !cfg!(feature = "config-reader")
        && beyond_catalog(link, stored, typed).config
}

/// What the page's opening state names beyond the catalog's rows: a build without the
/// config.json reader leaves a pasted config unplanned (`handed_over`).
pub fn beyond_catalog(link: &str, stored: Option<&str>, typed: Option<&str>) -> BeyondCatalog {
    let (texts, _) = opening_texts(link, stored, typed);
    let set = |field: Field| {
        Field::ALL
            .iter()
            .position(|f| *f == field)
            .and_then(|i| texts.get(i))
            .is_some_and(|t| !t.trim().is_empty())
    };
    BeyondCatalog {
        config: set(Field::Config),
        example: set(Field::Example),
        draft_model: set(Field::DraftModel),
        model: set(Field::Model),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_a_state_needs_beyond_the_catalog() {
        let beyond = |link: &str| beyond_catalog(link, None, None);
        let neither = BeyondCatalog::default();
        let config = BeyondCatalog {
            config: true,
            ..BeyondCatalog::default()
        };
        // A config every build reads alike (a build without config-reader keeps any text unread).
        let pasted = crate::input::query::base64url_encode(
            br#"{"architectures":["LlamaForCausalLM"],"model_type":"llama","num_hidden_layers":32,"hidden_size":4096,"num_attention_heads":32,"num_key_value_heads":8,"intermediate_size":14336,"vocab_size":128256,"max_position_embeddings":131072,"torch_dtype":"bfloat16"}"#,
        );
        assert_eq!(beyond("?v=1&tp=2"), neither);
        assert_eq!(
            beyond("?v=1&model=qwen3-32b&tp=2"),
            BeyondCatalog {
                model: true,
                ..BeyondCatalog::default()
            }
        );
        assert_eq!(
            beyond("?v=1&example=s1-three-cards"),
            BeyondCatalog {
                example: true,
                ..BeyondCatalog::default()
            }
        );
        assert_eq!(
            beyond(&format!(
                "?v=1&spec=draft_model&draft-model=qwen3-4b#config={pasted}"
            )),
            BeyondCatalog {
                config: true,
                draft_model: true,
                ..BeyondCatalog::default()
            }
        );
        // A pasted config in the query, in the fragment, or under a percent-encoded key.
        assert_eq!(beyond(&format!("?v=1&tp=2&config={pasted}")), config);
        assert_eq!(beyond(&format!("?v=1&tp=2#config={pasted}")), config);
        assert_eq!(beyond(&format!("?v=1&tp=2&%63onfig={pasted}")), config);
        // The stored state counts for a link without one.
        let stored = format!("?v=1&config={pasted}");
        assert_eq!(beyond_catalog("", Some(&stored), None), config);
        assert_eq!(beyond_catalog("?v=1&tp=4", Some(&stored), None), neither);
        assert_eq!(beyond_catalog("?v=1&tp=4", None, None), neither);
        assert_ne!(beyond_catalog(&stored, None, None), neither);
        // What a build plans itself: one with `catalog-compiled` and without `config-reader`
        // no config (a config the reader would refuse, `{}`, is still an unread text to it);
        // every other build everything.
        let cases = [
            ("?v=1&tp=2".to_string(), false),
            ("?v=1&model=qwen3-32b&tp=2".to_string(), false),
            ("?v=1&tp=2&config=e30".to_string(), true),
            ("?v=1&model=qwen3-32b&config=e30".to_string(), true),
            ("?v=1&example=s1-three-cards".to_string(), false),
            ("?v=1&example=s3-synthetic-tp4&util=0.8".to_string(), false),
            (format!("?v=1&example=s1-three-cards#config={pasted}"), true),
            (format!("?v=1&tp=2#config={pasted}"), true),
            (format!("?v=1&model=qwen3-32b#config={pasted}"), true),
            (
                format!("?v=1&spec=draft_model&draft-model=qwen3-4b#config={pasted}"),
                true,
            ),
        ];
        for (link, config) in cases {
            let want =
                cfg!(feature = "catalog-compiled") && !cfg!(feature = "config-reader") && config;
            assert_eq!(handed_over(&link, None, None), want, "{link}");
        }
    }

    /// Every build that reads a pasted config.json (the app, the CLI, and the first verdict's
    /// programs for a pasted config and for everything) opens its verdict with what vLLM does
    /// with an architecture it does not serve: the first verdict and the app's say the same.
    #[test]
    #[cfg(any(not(feature = "catalog-compiled"), feature = "config-reader"))]
    fn a_pasted_architecture_vllm_does_not_serve_is_said_first() {
        let link = |arch: &str| {
            let config = format!(
                r#"{{"architectures":["{arch}"],"model_type":"x","num_hidden_layers":32,"hidden_size":4096,"num_attention_heads":32,"num_key_value_heads":8,"intermediate_size":14336,"vocab_size":128256,"max_position_embeddings":131072,"torch_dtype":"bfloat16"}}"#
            );
            let pasted = crate::input::query::base64url_encode(config.as_bytes());
            format!("?v=1&gpu=h100-sxm-80gb&config={pasted}")
        };
        let sub = |arch: &str| first_verdict(&link(arch), None, None).sub;
        let unknown = sub("FooBarForCausalLM");
        assert!(
            unknown.starts_with(
                "vLLM 0.33.0 has no model class for \"FooBarForCausalLM\": only its Transformers backend might serve it. "
            ),
            "{unknown}"
        );
        let removed = sub("MPTForCausalLM");
        assert!(
            removed.starts_with(
                "vLLM 0.33.0 no longer serves \"MPTForCausalLM\" (served until 0.28.0): only its Transformers backend might. "
            ),
            "{removed}"
        );
        // Planned under a release that still served it (0.28 itself, or older): nothing to say.
        for v in ["0.28", "0.27"] {
            let older = first_verdict(&format!("{}&vllm={v}", link("MPTForCausalLM")), None, None);
            assert_eq!(older.class, "verdict ok", "{}", older.headline);
            assert!(!older.sub.contains("serves"), "{v}: {}", older.sub);
        }
        let newer = first_verdict(&format!("{}&vllm=0.29", link("MPTForCausalLM")), None, None);
        assert!(newer.sub.contains("served until 0.28.0"), "{}", newer.sub);
        assert!(!sub("LlamaForCausalLM").contains("model class"));
    }

    #[test]
    fn an_input_in_error_is_said_first_and_never_under_a_green_banner() {
        // What the form holds after typing: the texts, one of them wrong.
        let banner_of = |typed: &[(Field, &str)]| {
            let (mut texts, _) = opening_texts("", None, None);
            for (f, t) in typed {
                let i = Field::ALL.iter().position(|g| g == f).unwrap();
                texts[i] = t.to_string();
            }
            let checked = check(&texts);
            let plan = scenario_of(&checked).and_then(|s| plan_of_state(&checked.0, &s));
            let b = banner(
                plan.as_ref(),
                plan.as_ref().ok(),
                UnitSystem::Binary,
                &checked.1,
            );
            (b, defaults_note(&checked.1))
        };
        for (field, text, flag) in [
            (Field::Tp, "-2", "--tensor-parallel-size"),
            (Field::Util, "1.5", "--gpu-memory-utilization"),
        ] {
            let ((class, head, sub), warn) = banner_of(&[(field, text)]);
            assert_eq!(class, "verdict invalid", "{text}: {head}");
            assert!(head.starts_with(&format!("Fix {flag}: ")), "{head}");
            assert!(
                !head[flag.len()..].contains(&flag[2..]),
                "said once: {head}"
            );
            assert!(
                sub.starts_with("With its default instead, the plan reads: Starts"),
                "{sub}"
            );
            // The figures stay, marked as the default's.
            assert!(
                warn.starts_with("These figures use the default for"),
                "{warn}"
            );
        }
        let ((_, _, sub), _) = banner_of(&[(Field::Tp, "-2"), (Field::Util, "1.5")]);
        assert!(sub.contains("(and 1 more input in error)"), "{sub}");
        // Valid inputs: the plan's own verdict.
        let ((class, _, _), warn) = banner_of(&[(Field::Tp, "1")]);
        assert_eq!((class.as_str(), warn.as_str()), ("verdict ok", ""));
    }

    #[test]
    fn the_verdict_names_its_scenario_and_why() {
        let link =
            "?v=1&model=llama-3.1-70b-instruct&tp=4&gpus=4&gpu=h100-sxm-80gb&max-model-len=16384";
        let v = first_verdict(link, None, None);
        assert!(
            v.sub.ends_with("Planned: Llama 3.1 70B Instruct (bfloat16) on 4 x NVIDIA H100 SXM 80GB, TP 4 x PP 1; max-model-len 16,384."),
            "{v:?}"
        );
        // The why adds up: the budget less what is not KV is the KV memory.
        let why = v.sub.split("Rank ").nth(1).expect("a why");
        assert!(
            why.contains(": budget 72.85 GiB - weights ") && why.contains(" for KV (estimate)."),
            "{why}"
        );
    }

    #[test]
    fn the_default_page_starts_and_names_its_concurrency() {
        let v = first_verdict("", None, None);
        assert_eq!(v.class, "verdict ok");
        let conc = &v.figures[1];
        assert_eq!(conc.0, "max-concurrency");
        assert!(conc.1.ends_with('x') && conc.1.contains('.'), "{conc:?}");
        assert!(v.headline.contains(conc.1.trim_end_matches('x')), "{v:?}");
    }

    #[test]
    fn an_address_outranks_the_stored_state_and_a_reload_keeps_its_typed_texts() {
        let stored = Some("?v=1&tp=2");
        let (texts, _) = opening_texts("", stored, None);
        let tp = Field::ALL.iter().position(|f| *f == Field::Tp).unwrap();
        assert_eq!(texts[tp], "2");
        let (texts, _) = opening_texts("?v=1&tp=4", stored, None);
        assert_eq!(texts[tp], "4");
        // Texts typed for another address are not this one's.
        let typed = Some("?v=1&tp=4\ntp=abc");
        let (texts, _) = opening_texts("?v=1&tp=8", None, typed);
        assert_eq!(texts[tp], "8");
        let v = first_verdict("?v=1&tp=4", None, typed);
        let (texts, _) = opening_texts("?v=1&tp=4", None, typed);
        assert!(
            check(&texts).1.iter().any(|(f, _)| *f == Field::Tp),
            "{texts:?}"
        );
        assert!(v.warn.contains("tensor-parallel-size"), "{v:?}");
    }

    #[test]
    fn a_defining_field_in_error_gives_no_figures() {
        // A link's unknown GPU is ignored with a notice (the default is planned, as the app
        // does); a GPU typed before a reload stays in error and stops the plan.
        let link = "?v=1&tp=2";
        let typed = format!("{link}\ntp=2&gpu=no-such-card");
        let v = first_verdict(link, None, Some(&typed));
        assert_eq!(v.class, "verdict invalid", "{v:?}");
        assert!(v.headline.starts_with("Cannot plan this"), "{v:?}");
        assert!(v.figures.iter().all(|f| f.1 == DASH && f.2.is_empty()));
    }

    fn plan_of(pairs: &[(Field, &str)]) -> Plan {
        let mut st = UrlState::default();
        for (f, t) in pairs {
            st.set(*f, t).unwrap();
        }
        calc::plan(&crate::input::scenario(&st).unwrap()).unwrap()
    }

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

    #[test]
    fn beyond_catalog_reads_the_state_the_page_opens_with() {
        // Neither a pasted config nor an example in the state the page opens with.
        let alone = |link: &str, stored: Option<&str>, typed: Option<&str>| {
            let b = beyond_catalog(link, stored, typed);
            !b.config && !b.example
        };
        assert!(alone("", None, None));
        assert!(alone("?v=1&model=qwen3-32b&tp=2", None, None));
        assert!(!alone("?v=1&example=s1-three-cards", None, None));
        // A config the reader accepts, as a link carries it (base64url), in the query or the
        // fragment; a build without config-reader keeps its text unread, and leaves it unplanned.
        let config = "eyJhcmNoaXRlY3R1cmVzIjpbIkxsYW1hRm9yQ2F1c2FsTE0iXSwibW9kZWxfdHlwZSI6ImxsYW1hIiwibnVtX2hpZGRlbl9sYXllcnMiOjIsImhpZGRlbl9zaXplIjo2NCwibnVtX2F0dGVudGlvbl9oZWFkcyI6NCwibnVtX2tleV92YWx1ZV9oZWFkcyI6MiwiaW50ZXJtZWRpYXRlX3NpemUiOjEyOCwidm9jYWJfc2l6ZSI6MTAwMCwibWF4X3Bvc2l0aW9uX2VtYmVkZGluZ3MiOjQwOTZ9";
        assert!(!alone(&format!("?v=1&config={config}"), None, None));
        assert!(!alone(
            &format!("?v=1&gpu=l40s-48gb#config={config}"),
            None,
            None
        ));
        // A link without a state opens on the stored one; a link with one ignores it.
        assert!(!alone("", Some("?v=1&example=s2-unified-gate"), None));
        assert!(alone(
            "?v=1&tp=2",
            Some("?v=1&example=s2-unified-gate"),
            None
        ));
        // A reload keeps the texts as typed, a pasted config among them.
        assert!(!alone("?v=1", None, Some("?v=1\nconfig=%7B%7D")));
        assert!(
            alone("?v=1", None, Some("?v=2\nconfig=%7B%7D")),
            "another address"
        );
    }

    #[test]
    fn a_failing_check_s_rest_ends_its_sentence_before_the_banner_s_own() {
        let (head, sub) = headline(
            "rank 0: one 131,072-token request needs 20.00 GiB of KV, the pool has 4.62 GiB (after the null block); the longest that fits is 30,256 tokens",
            "Rank 0 decides.",
        );
        assert!(head.ends_with(';'), "{head}");
        assert_eq!(
            sub,
            "the longest that fits is 30,256 tokens. Rank 0 decides."
        );
        let (_, sub) = headline(
            &format!("{}. And a second sentence.", "x".repeat(150)),
            "After.",
        );
        assert_eq!(sub, "And a second sentence. After.");
    }
}

/// The first verdict before the app is the app's own in every build that paints it (issue 18:
/// no flash of another verdict). tests/snapshots/first_verdicts.jsonl holds 300 links and the
/// words the app's build (feature `web`) gives for each, picked by `scripts/verdict-diff.py`
/// from 30,000 random ones so that every outcome, headline kind, model, GPU, input key and
/// pasted config's architecture is there. test.sh runs this under the app's features and under
/// each verdict program's (`verdict`, which leaves the page's text out; `catalog-compiled`;
/// `config-reader`): each must give the app's words for every link it plans itself.
#[cfg(test)]
mod every_build {
    use super::*;

    const SNAPSHOT: &str = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/snapshots/first_verdicts.jsonl"
    );

    #[test]
    fn paints_the_apps_first_verdict() {
        let text = std::fs::read_to_string(SNAPSHOT).expect("the snapshot of first verdicts");
        let update = cfg!(feature = "web")
            && std::env::var("HEADROOM_UPDATE_SNAPSHOTS").is_ok_and(|v| v == "1");
        let mut rewritten = String::new();
        let (mut planned, mut differ) = (0, Vec::new());
        for line in text.lines() {
            let record: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
            let link = record["link"].as_str().expect("a link");
            let want: Vec<String> =
                serde_json::from_value(record["words"].clone()).expect("a list of words");
            if handed_over(link, None, None) {
                rewritten.push_str(line);
                rewritten.push('\n');
                continue;
            }
            planned += 1;
            let got = first_verdict(link, None, None).words();
            if got != want {
                differ.push((link.to_string(), want, got.clone()));
            }
            let record = serde_json::json!({ "link": link, "words": got });
            rewritten.push_str(&record.to_string());
            rewritten.push('\n');
        }
        if update {
            std::fs::write(SNAPSHOT, rewritten).expect("the snapshot rewritten");
            return;
        }
        // Not vacuous: a build without the config.json reader plans the links without a config
        // (about 230), every other build all 300.
        assert!(planned >= 200, "only {planned} links planned");
        let shown: Vec<String> = differ
            .iter()
            .take(3)
            .map(|(link, want, got)| {
                let words: Vec<String> = want
                    .iter()
                    .zip(got)
                    .enumerate()
                    .filter(|(_, (w, g))| w != g)
                    .map(|(i, (w, g))| format!("  word {i}: the app {w:?}\n  this build {g:?}"))
                    .collect();
                format!("{link}\n{}", words.join("\n"))
            })
            .collect();
        assert!(
            differ.is_empty(),
            "{} of {planned} links differ from the app's first verdict:\n{}\n(after a change \
             to the planner's words, in the app's build: HEADROOM_UPDATE_SNAPSHOTS=1 cargo test \
             --lib every_build)",
            differ.len(),
            shown.join("\n")
        );
    }
}
