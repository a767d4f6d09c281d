//! The inputs, under vLLM's own flag names, each with the default it takes when left empty
//! (shown as the placeholder), the provenance of the value it feeds, and the message of the
//! check it fails, beside it.
//!
//! The form is data: the input schema's rows ([`crate::input::schema::ROWS`]) give every
//! input's label, help, section and kind ([`sections`]); [`field_html`] writes each kind's
//! markup once, one delegated listener reads every control, and effects write values,
//! defaults, badges and messages back. Every input's `data-testid` and `id` are its flag name.

use leptos::prelude::*;
use wasm_bindgen::{JsCast, JsValue};

use crate::calc::plan::{Plan, Settings, Term};
use crate::calc::scenario::ATTENTION_BACKENDS;
use crate::calc::scenario::{MaxLen, Scenario};
use crate::calc::units::UnitSystem;
use crate::calc::version::VllmVersion;
use crate::catalog;
use crate::input::schema::{row_of, Rule, Section, ROWS};
use crate::io::url::{self, Field, SPEC_METHODS};
use std::borrow::Cow;

use super::charts::xml_escape;
use super::effect;
use super::state::AppState;

/// How an input is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// A text box (numbers accept vLLM's forms such as `128k` or `10e9`).
    Text,
    /// A checkbox whose unset state is the scenario's value.
    Check,
    /// A choice from a fixed list; the empty choice is the default.
    Choice(&'static [&'static str]),
    /// The model: a text box searching the catalog (a datalist).
    Model,
    /// The GPU: a choice from the catalog.
    Gpu,
    /// The vLLM release.
    Version,
    /// A pasted config.json.
    Config,
}

/// One input of the form: its field, its label and how it is drawn.
struct Input {
    field: Field,
    label: &'static str,
    /// What the input means (the schema's help), shown as the label's tooltip.
    help: &'static str,
    kind: Kind,
}

const KV_DTYPES: [&str; 8] = [
    "auto",
    "bfloat16",
    "float16",
    "fp8",
    "fp8_e4m3",
    "fp8_e5m2",
    "fp8_ds_mla",
    "fp8_inc",
];

/// The inputs a new user needs: shown at once; the rest of each section sits behind its "more"
/// disclosure (the measured terms and the unified gate entirely).
const COMMON: [Field; 15] = [
    Field::Model,
    Field::Config,
    Field::Gpu,
    Field::Gpus,
    Field::Quantization,
    Field::Vllm,
    Field::Tp,
    Field::Pp,
    Field::PpPartition,
    Field::Dp,
    Field::Util,
    Field::KvBytes,
    Field::MaxModelLen,
    Field::MaxNumSeqs,
    Field::KvDtype,
];

/// vLLM 0.33.0's methods, then those older releases had (chosen under their rules).
const QUANTIZATIONS: [&str; 32] = {
    use crate::calc::weight_format::{METHODS, REMOVED};
    let mut all = [""; 32];
    let mut i = 0;
    while i < METHODS.len() {
        all[i] = METHODS[i];
        i += 1;
    }
    while i < all.len() {
        all[i] = REMOVED[i - METHODS.len()].0;
        i += 1;
    }
    all
};

/// How the form draws an input that takes this rule's values.
fn kind_of(rule: Rule) -> Kind {
    match rule {
        Rule::Bool => Kind::Check,
        Rule::KvDtype => Kind::Choice(&KV_DTYPES),
        Rule::Quantization => Kind::Choice(&QUANTIZATIONS),
        // Every spelling the link and vLLM take, so a link's own shows as chosen.
        Rule::Dtype => Kind::Choice(&["auto", "half", "float16", "bfloat16", "float", "float32"]),
        Rule::AttnBackend => Kind::Choice(&ATTENTION_BACKENDS),
        Rule::Method => Kind::Choice(&SPEC_METHODS),
        Rule::ModelId => Kind::Model,
        Rule::GpuId => Kind::Gpu,
        Rule::Version => Kind::Version,
        Rule::Config | Rule::Checkpoint => Kind::Config,
        Rule::Count { .. }
        | Rule::Bytes
        | Rule::BytesList
        | Rule::Partition
        | Rule::Fraction
        | Rule::MaxLen
        | Rule::Unit
        | Rule::ExampleId => Kind::Text,
    }
}

/// Every input the form shows, in sections: the schema's rows that have a label, in the
/// schema's order (the example menu and the unit toggle are in the header).
fn sections() -> Vec<(Section, Vec<Input>)> {
    Section::ALL
        .iter()
        .map(|&section| {
            let inputs = ROWS
                .iter()
                .filter(|r| r.section == section)
                .filter_map(|r| {
                    Some(Input {
                        field: r.input,
                        label: r.label?,
                        help: r.help,
                        kind: kind_of(r.rule),
                    })
                })
                .collect::<Vec<_>>();
            (section, inputs)
        })
        .filter(|(_, inputs)| !inputs.is_empty())
        .collect()
}

/// The ledger term a measured input replaces, for its provenance badge.
fn term_of(field: Field) -> Option<Term> {
    Some(match field {
        Field::Weights => Term::Weights,
        Field::Drafter => Term::Drafter,
        Field::Activation => Term::Activation,
        Field::NonTorch => Term::OtherConsumption,
        Field::CudaGraph => Term::CudaGraphs,
        Field::LoadPeak => Term::LoadPeak,
        Field::Free => Term::FreeAtStart,
        Field::AvailableKv => Term::AvailableKv,
        Field::Tenants => Term::PreSnapshot,
        _ => return None,
    })
}

/// A per-stage figure short enough for a phone's box: one amount when every stage has it,
/// else the numbers with the unit once (`49.67, 53.30, 49.67 GiB`); a stage left short reads
/// `none` (with how short when it is the only stage).
fn stage_list(stages: &[i128], unit: UnitSystem) -> String {
    match stages {
        [] => String::new(),
        [b] if *b < 0 => format!("none ({} short)", shortfall(-b, unit)),
        _ if stages.iter().all(|b| *b < 0) => "none (every stage short)".into(),
        [first, rest @ ..] if rest.iter().all(|b| b == first) => {
            super::charts::amount(*first, unit)
        }
        _ => {
            let (div, name) = super::charts::unit_div(unit);
            let parts: Vec<String> = stages
                .iter()
                .map(|b| {
                    if *b < 0 {
                        "none".into()
                    } else {
                        crate::calc::units::grouped_fixed(*b as f64 / div, 2)
                    }
                })
                .collect();
            // After a short last stage the unit reads as a note: "2.56, none (GiB)".
            if stages.last().is_some_and(|b| *b < 0) {
                format!("{} ({name})", parts.join(", "))
            } else {
                format!("{} {name}", parts.join(", "))
            }
        }
    }
}

/// The rank whose ledger a measured input's placeholder and badge read: the drafter's (the
/// last stage) for drafter-weights, else rank 0.
fn rank_for(field: Field, p: &Plan) -> Option<&crate::calc::plan::RankPlan> {
    if field == Field::Drafter {
        p.ranks.iter().find(|r| r.holds_drafter)
    } else {
        p.ranks.first()
    }
}

/// The provenance a measured input's badge shows. A per-stage input (weights, available-kv)
/// speaks for every stage: where the stages' figures differ in kind (one stage measured, the
/// others estimated), the badge is the least certain of them, so an estimate never wears a
/// measured badge.
fn badge_provenance(field: Field, term: Term, p: &Plan) -> Option<crate::calc::plan::Provenance> {
    use crate::calc::plan::Provenance;
    let own = rank_for(field, p)?.line(term)?.provenance.clone();
    if !matches!(field, Field::Weights | Field::AvailableKv) {
        return Some(own);
    }
    let stages: Vec<&Provenance> = p
        .ranks
        .iter()
        .filter(|r| r.tp_rank == 0)
        .filter_map(|r| r.line(term).map(|l| &l.provenance))
        .collect();
    if stages.iter().all(|pr| pr.label() == own.label()) {
        Some(own)
    } else {
        Some(Provenance::combine(&stages))
    }
}

/// A shortfall as the verdict would state it: in the unit, or in bytes when it rounds to 0.
fn shortfall(bytes: i128, unit: UnitSystem) -> String {
    let a = super::charts::amount(bytes, unit);
    if a.starts_with("0.00 ") {
        format!("{} B", crate::calc::units::thousands(bytes.unsigned_abs()))
    } else {
        a
    }
}

/// The settings in force: the plan's, or, for a scenario the planner refuses, what vLLM would
/// have started with.
fn settings_of<'a>(s: &Scenario, p: Option<&'a Plan>) -> Cow<'a, Settings> {
    match p {
        Some(p) => Cow::Borrowed(&p.settings),
        None => Cow::Owned(crate::calc::settings(s)),
    }
}

/// What an empty input means, short enough for its placeholder: vLLM's default, the example's
/// value or the estimate (empty for the checkboxes, which show the scenario's value instead).
fn default_value(field: Field, s: &Scenario, p: Option<&Plan>, unit: UnitSystem) -> String {
    let rank0 = p.and_then(|p| p.ranks.first());
    let line = |t: Term| {
        rank0
            .and_then(|r| r.line(t))
            .map(|l| super::charts::amount(l.bytes, unit))
    };
    match field {
        Field::Model => s.model.name.clone(),
        Field::Config => format!("{{ \"num_hidden_layers\": {}, ... }}", s.model.n_layers),
        Field::Gpu => s.gpu.name.clone(),
        Field::GpuMemory => crate::calc::units::thousands(u128::from(s.gpu.total.0)),
        Field::Gpus => s.gpus.to_string(),
        Field::Vllm => s.version.to_string(),
        Field::Tp => s.parallel.tp.to_string(),
        Field::Pp => s.parallel.pp.to_string(),
        Field::Dp => s.parallel.dp.to_string(),
        Field::PpPartition => p.map_or(String::new(), |p| {
            p.pp_partition
                .iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(",")
        }),
        Field::Util => format!("{}", settings_of(s, p).gpu_memory_utilization.value),
        Field::KvBytes => s
            .engine
            .kv_cache_memory_bytes
            .map_or("not set".into(), |b| {
                crate::calc::units::thousands(u128::from(b))
            }),
        Field::MaxModelLen => match (s.engine.max_model_len, p.and_then(|p| p.replica.as_ref())) {
            (_, Some(r)) => r.max_model_len.to_string(),
            (MaxLen::Value(v), None) => v.to_string(),
            (MaxLen::Auto, None) => "auto".into(),
            (MaxLen::ModelDefault, None) => settings_of(s, p).max_model_len.value.to_string(),
        },
        Field::MaxNumSeqs | Field::MaxNumBatchedTokens => {
            // The plan's figures; without them (a start that fails early), vLLM's defaults
            // for this GPU at the context asked for.
            let (mnbt, mns) = match p.and_then(|p| p.demand.as_ref()) {
                Some(d) => (d.max_num_batched_tokens, d.max_num_seqs),
                None => {
                    let st = settings_of(s, p);
                    (st.max_num_batched_tokens.value, st.max_num_seqs.value)
                }
            };
            if field == Field::MaxNumSeqs {
                mns
            } else {
                mnbt
            }
            .to_string()
        }
        Field::BlockSize => p
            .and_then(|p| p.replica.as_ref())
            .map_or("backend's choice".into(), |r| r.block_size.to_string()),
        Field::NumGpuBlocksOverride => "not set".into(),
        Field::SpecTokens => s
            .engine
            .speculative
            .as_ref()
            .map_or(String::new(), |sp| sp.num_speculative_tokens.to_string()),
        Field::Activation | Field::NonTorch | Field::CudaGraph | Field::LoadPeak | Field::Free => {
            term_of(field).and_then(line).unwrap_or_default()
        }
        // The drafter lives on the last stage.
        Field::Drafter => p
            .and_then(|p| rank_for(field, p))
            .and_then(|r| r.line(Term::Drafter))
            .map(|l| super::charts::amount(l.bytes, unit))
            .unwrap_or_default(),
        // One figure per pipeline stage, as the list takes them. A budget smaller than what a
        // stage takes leaves nothing for its pool, and a negative amount would read like a
        // value to type.
        Field::Weights | Field::AvailableKv => p
            .map(|p| {
                let stages: Vec<i128> = p
                    .ranks
                    .iter()
                    .filter(|r| r.tp_rank == 0)
                    .filter_map(|r| r.line(term_of(field)?))
                    .map(|l| l.bytes)
                    .collect();
                stage_list(&stages, unit)
            })
            .unwrap_or_default(),
        // Other processes hold nothing unless given (the badge speaks for the whole
        // pre-snapshot term, CUDA context included).
        Field::Tenants => "none".into(),
        Field::MemAvailable => s.unified.as_ref().map_or("not unified memory".into(), |u| {
            super::charts::amount(i128::from(u.mem_available.bytes.0), unit)
        }),
        Field::Headroom => s.unified.as_ref().map_or(String::new(), |u| {
            super::charts::amount(i128::from(u.headroom.0), unit)
        }),
        Field::Overhead => s
            .unified
            .as_ref()
            .and_then(|u| u.overhead.as_ref())
            .map_or(String::new(), |o| {
                super::charts::amount(i128::from(o.bytes.0), unit)
            }),
        Field::GuardThreshold => s.unified.as_ref().map_or(String::new(), |u| {
            super::charts::amount(i128::from(u.guard_threshold.0), unit)
        }),
        Field::AvgLen => p
            .and_then(|p| p.demand.as_ref())
            .map_or(String::new(), |d| d.average_len.to_string()),
        Field::KvDtype => s.engine.kv_cache_dtype.as_str().into(),
        Field::CheckpointBytes => s.model.checkpoint_bytes.map_or("none".into(), |b| {
            crate::calc::units::thousands(u128::from(b))
        }),
        Field::Quantization if s.model.quant_method.is_empty() => "none: unquantized".into(),
        Field::Quantization => format!("the checkpoint's: {}", s.model.quant_method),
        Field::Dtype => format!("auto: {}", s.model.dtype.as_str()),
        Field::AttnBackend if s.model.compressed.is_some() => settings_of(s, p)
            .attention_backend
            .as_ref()
            .map_or("vLLM's choice", |b| b.value.as_str())
            .into(),
        Field::AttnBackend => "vLLM's choice".into(),
        Field::Spec => s
            .engine
            .speculative
            .as_ref()
            .map_or("none".into(), |sp| sp.method.as_str().into()),
        Field::DraftModel => s
            .engine
            .speculative
            .as_ref()
            .and_then(|sp| sp.draft_model.as_ref())
            .map_or("none".into(), |d| d.name.clone()),
        Field::Example
        | Field::Ep
        | Field::Eager
        | Field::NoHybrid
        | Field::NoAsync
        | Field::Unit
        | Field::Step => String::new(),
    }
}

/// Whether the form draws this field as a list with a "default" choice.
fn is_list(field: Field) -> bool {
    let r = row_of(field);
    r.label.is_some() && matches!(kind_of(r.rule), Kind::Choice(_) | Kind::Gpu | Kind::Version)
}

/// Whether the form draws this field as a checkbox (as its schema row says).
fn is_check(field: Field) -> bool {
    let r = row_of(field);
    r.label.is_some() && kind_of(r.rule) == Kind::Check
}

/// Appends `text`, escaped for HTML.
fn push_esc(h: &mut String, text: &str) {
    h.push_str(&xml_escape(text));
}

/// One labelled input: the label with the flag and (for measured terms) the provenance badge,
/// the control, the catalog source under the pickers, and the error line. Values, defaults,
/// badges and errors are filled in by [`form`]'s effects.
fn field_html(h: &mut String, inp: &Input) {
    let flag = inp.field.flag();
    let check = inp.kind == Kind::Check;
    h.push_str(&format!(
        r#"<div class="field{}" id="{flag}-field"><label for="{flag}" title=""#,
        if check { " check" } else { "" }
    ));
    push_esc(h, inp.help);
    h.push_str(r#""><span class="name">"#);
    push_esc(h, inp.label);
    // Under each label, what sets it on the command line; the draft model is a key of vLLM's
    // speculative config there, not a flag of its own.
    if inp.field == Field::DraftModel {
        h.push_str(r#"</span> <code class="flag">--speculative-config {"model": ...}</code>"#);
    } else {
        h.push_str(&format!(r#"</span> <code class="flag">--{flag}</code>"#));
    }
    if term_of(inp.field).is_some() {
        h.push_str(&format!(
            r#" <span class="badge" id="{flag}-badge"></span>"#
        ));
    }
    h.push_str("</label>");
    let common = format!(
        r#"id="{flag}" name="{flag}" data-testid="{flag}" data-field="{flag}" aria-describedby="{flag}-err""#
    );
    let options = |h: &mut String, list: &mut dyn Iterator<Item = (String, String)>| {
        h.push_str(&format!(
            r#"<select {common}><option value="" id="{flag}-default">default</option>"#
        ));
        for (value, text) in list {
            h.push_str(r#"<option value=""#);
            push_esc(h, &value);
            h.push_str(r#"">"#);
            push_esc(h, &text);
            h.push_str("</option>");
        }
        h.push_str("</select>");
    };
    match inp.kind {
        Kind::Text | Kind::Model => h.push_str(&format!(
            r#"<input type="text" {common} autocomplete="off" spellcheck="false"{}>"#,
            if inp.kind == Kind::Model {
                r#" list="model-list""#
            } else {
                ""
            }
        )),
        Kind::Config => h.push_str(&format!(
            r#"<textarea {common} rows="3" spellcheck="false"></textarea>"#
        )),
        Kind::Check => h.push_str(&format!(r#"<input type="checkbox" {common}>"#)),
        Kind::Choice(list) => options(h, &mut list.iter().map(|o| (o.to_string(), o.to_string()))),
        Kind::Gpu => options(
            h,
            &mut catalog::gpus()
                .iter()
                .map(|g| (g.gpu.id.clone(), g.gpu.name.clone())),
        ),
        Kind::Version => options(
            h,
            &mut VllmVersion::releases().map(|v| (v.to_string(), v.to_string())),
        ),
    }
    if matches!(inp.field, Field::Model | Field::Gpu | Field::Quantization) {
        h.push_str(&format!(
            r#"<p class="source" id="{flag}-source" data-testid="{flag}-source"></p>"#
        ));
    }
    h.push_str(&format!(
        r#"<p class="err" id="{flag}-err" aria-live="polite"></p></div>"#
    ));
}

/// The form's markup: every section and input, the catalog's model list, the hint.
fn form_html() -> String {
    let mut h = String::from(r#"<datalist id="model-list">"#);
    for m in catalog::models() {
        h.push_str(r#"<option value=""#);
        push_esc(&mut h, &m.id);
        h.push_str(r#"">"#);
        push_esc(&mut h, &m.name);
        h.push_str("</option>");
    }
    h.push_str("</datalist>");
    for (section, inputs) in sections() {
        h.push_str("<fieldset><legend>");
        push_esc(&mut h, section.form_title());
        h.push_str("</legend>");
        let (common, more): (Vec<&Input>, Vec<&Input>) =
            inputs.iter().partition(|i| COMMON.contains(&i.field));
        for inp in &common {
            field_html(&mut h, inp);
            if inp.field == Field::PpPartition {
                h.push_str(r#"<div class="stages" id="pp-stages"></div>"#);
            }
        }
        // The rest one click away; a link or an error that sets one opens it (see `form`).
        if !more.is_empty() {
            let key = section.form_title().to_ascii_lowercase().replace(' ', "-");
            let what = if common.is_empty() {
                format!("Show the {} inputs", more.len())
            } else {
                format!("{} more", more.len())
            };
            h.push_str(&format!(
                r#"<details class="more" data-testid="more-{key}"><summary>{what}<span class="set-count"></span></summary>"#
            ));
            for inp in &more {
                field_html(&mut h, inp);
            }
            h.push_str("</details>");
        }
        h.push_str("</fieldset>");
    }
    h.push_str(
        r#"<p class="hint">Empty inputs take the default shown in grey. Byte counts accept 79.29GiB, 46.1GB, 10e9, 9g (10^9) and 9G (2^30); token counts accept 128k and 128K.</p>"#,
    );
    h
}

/// The partition editor's summary line: the split of the figures shown, which is not the
/// typed one while that is invalid.
fn stages_summary(effective: &[u32]) -> String {
    // A link refused from the start (the split or any other input) has no figures to show a
    // split for.
    if effective.is_empty() {
        return "No figures yet: an input is refused (the message is at its field).".into();
    }
    let split = effective
        .iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(", ");
    format!("Split in the figures: {split}")
}

/// The layer-partition editor's markup: the split in effect and one input per stage, holding
/// what was typed.
fn stages_html(list: &[String], effective: &[u32]) -> String {
    let mut h = format!(
        r#"<p class="chips" data-testid="pp-partition-effective">{}</p>"#,
        stages_summary(effective)
    );
    for (i, n) in list.iter().enumerate() {
        h.push_str(&format!(
            r#"<label class="stage" for="pp-stage-{i}">stage {i}<input type="text" inputmode="numeric" autocomplete="off" id="pp-stage-{i}" data-testid="pp-stage-{i}" data-stage="{i}" value="{}"></label>"#,
            xml_escape(n)
        ));
    }
    h
}

/// Brings the partition editor to `list`: the same number of stages keeps the inputs (and the
/// focus, so Tab moves on from a stage just edited) and sets their values; another number
/// rebuilds them, keeping the focus on the same stage where it still exists.
fn sync_stages(list: &[String], effective: &[u32]) {
    let Some(box_) = by_id("pp-stages") else {
        return;
    };
    let shown = box_
        .query_selector_all("input[data-stage]")
        .map_or(0, |n| n.length() as usize);
    if shown == list.len() && shown > 0 {
        for (i, n) in list.iter().enumerate() {
            if let Some(input) = by_id(&format!("pp-stage-{i}")) {
                set_prop(&input, "value", &JsValue::from_str(n));
            }
        }
        if let Some(p) = box_
            .query_selector("[data-testid=pp-partition-effective]")
            .ok()
            .flatten()
        {
            p.set_text_content(Some(&stages_summary(effective)));
        }
        return;
    }
    let focused = document()
        .active_element()
        .and_then(|e| e.get_attribute("data-stage"));
    box_.set_inner_html(&stages_html(list, effective));
    if let Some(input) = focused
        .and_then(|i| by_id(&format!("pp-stage-{i}")))
        .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok())
    {
        let _ = input.focus();
    }
}

/// An element of the form by id.
fn by_id(id: &str) -> Option<web_sys::Element> {
    document().get_element_by_id(id)
}

/// Sets a DOM property (`value`, `checked`) when it differs, so typing is never disturbed.
fn set_prop(el: &web_sys::Element, name: &str, value: &JsValue) {
    let key = JsValue::from_str(name);
    let now = js_sys::Reflect::get(el, &key).unwrap_or(JsValue::UNDEFINED);
    if &now != value {
        let _ = js_sys::Reflect::set(el, &key, value);
    }
}

/// An input or change anywhere in the form: the field's text follows the control, and a stage
/// of the partition editor rewrites the whole list as it is typed.
fn on_form_event(app: AppState, parts: Memo<Vec<String>>, ev: &web_sys::Event) {
    let Some(el) = super::target_element(ev) else {
        return;
    };
    let value = |el: &web_sys::Element| {
        js_sys::Reflect::get(el, &JsValue::from_str("value"))
            .ok()
            .and_then(|v| v.as_string())
            .unwrap_or_default()
    };
    if let Some(field) = el
        .get_attribute("data-field")
        .and_then(|f| Field::from_flag(&f))
    {
        let text = if el.get_attribute("type").as_deref() == Some("checkbox") {
            let on = js_sys::Reflect::get(&el, &JsValue::from_str("checked"))
                .ok()
                .and_then(|v| v.as_bool())
                .unwrap_or(false);
            app.checked
                .with_untracked(|(state, _)| url::flag_text(state, field, on))
                .to_string()
        } else {
            value(&el)
        };
        // A pasted model.safetensors.index.json becomes its total_size, so the link carries
        // a number, not the file (a text that is not one stays, and its field says why).
        let text = match field {
            Field::CheckpointBytes if text.trim_start().starts_with('{') => {
                crate::input::values::parse_checkpoint_bytes(&text)
                    .map(|b| b.to_string())
                    .unwrap_or(text)
            }
            _ => text,
        };
        let signal = app.text(field);
        if signal.get_untracked() != text {
            signal.set(text);
        }
    } else if let Some(i) = el
        .get_attribute("data-stage")
        .and_then(|i| i.parse::<usize>().ok())
    {
        let mut list = parts.get_untracked();
        if let Some(slot) = list.get_mut(i) {
            *slot = value(&el).trim().to_string();
        }
        let joined = list.join(",");
        // A lone stage emptied while typing would read as "no list" and refill its box with
        // the plan's split under the cursor; it waits for the change event instead.
        if joined.is_empty() && ev.type_() != "change" {
            return;
        }
        let signal = app.text(Field::PpPartition);
        if signal.get_untracked() != joined {
            signal.set(joined);
        }
    }
}

/// The whole form: static markup built once, one delegated listener for every control, and
/// effects that write values, defaults, badges, sources and messages into it. (A Leptos view
/// per input cost about 28 KB gzip of wasm; this is a few.)
pub fn form(app: AppState) -> impl IntoView {
    // One memo for every field's message: it changes only when a message does.
    let errors = Memo::new(move |_| Field::ALL.iter().map(|f| app.error(*f)).collect::<Vec<_>>());
    // Defaults, badges and sources follow the slow lane: they change rarely, and typing should
    // only wait for the verdict, the figures and the chart.
    let defaults = Memo::new(move |_| {
        let unit = app.later_unit.get();
        app.later.track();
        // The scenario can change while the plan keeps its last value (an input in error, then
        // another GPU): the slow lane's tick follows it.
        app.tick.track();
        app.scenario.with_untracked(|s| match s {
            Ok(s) => app.later.with(|p| {
                Field::ALL
                    .iter()
                    .map(|f| {
                        // A list shows its default as a choice of its own: what the state
                        // without this field's choice would use, not the current choice.
                        if is_list(*f) && !app.text(*f).with_untracked(String::is_empty) {
                            app.checked.with_untracked(|(state, _)| {
                                let mut without = state.clone();
                                let _ = without.set(*f, "");
                                url::scenario(&without)
                                    .map(|d| default_value(*f, &d, None, unit))
                                    .unwrap_or_default()
                            })
                        } else {
                            default_value(*f, s, p.as_deref(), unit)
                        }
                    })
                    .collect()
            }),
            Err(_) => vec![String::new(); Field::ALL.len()],
        })
    });
    // The list the partition editor shows: the typed one, as typed (an invalid stage stays in
    // its box, flagged at the field, instead of resetting the others), else the plan's split.
    let text = app.text(Field::PpPartition);
    let effective = Memo::new(move |_| {
        app.shown.with(|p| {
            p.as_ref()
                .map(|p| p.pp_partition.clone())
                .unwrap_or_default()
        })
    });
    // One box per stage of the pipeline size asked for (none for one stage): a typed list of
    // another length shows as many boxes as there are stages, padded or cut, so it can be
    // mended where it is flagged.
    let stages = Memo::new(move |_| {
        app.scenario
            .with(|s| s.as_ref().ok().map(|s| s.parallel.pp as usize))
    });
    let parts = Memo::new(move |_| {
        let typed = text.get();
        let pp = stages.get();
        if pp == Some(1) {
            return Vec::new();
        }
        if typed.trim().is_empty() {
            effective.with(|e| e.iter().map(u32::to_string).collect())
        } else {
            let mut list = typed
                .split(',')
                .take(1_024)
                .map(|p| p.trim().to_string())
                .collect::<Vec<String>>();
            if let Some(pp) = pp {
                list.resize(pp, String::new());
            }
            list
        }
    });
    for f in Field::ALL.iter() {
        let (f, text) = (*f, app.text(*f));
        // The control shows its text (or, for a checkbox, the scenario's value).
        if is_check(f) {
            // The scenario's value; while another input is in error, the box's own text. A
            // memo: the scenario changes with every input, the box seldom.
            let on = Memo::new(move |_| {
                let own = text.with(|t| url::parse_bool(t).unwrap_or(false));
                app.scenario.with(|s| {
                    s.as_ref()
                        .ok()
                        .and_then(|s| url::flag_value(f, s))
                        .unwrap_or(own)
                })
            });
            effect(move || {
                // A click sets the box again, to what the scenario makes of it.
                text.track();
                let on = on.get();
                if let Some(el) = by_id(f.flag()) {
                    set_prop(&el, "checked", &JsValue::from_bool(on));
                }
            });
        } else {
            effect(move || {
                let text = text.get();
                if let Some(el) = by_id(f.flag()) {
                    set_prop(&el, "value", &JsValue::from_str(&text));
                }
            });
        }
    }
    // The fields' messages, beside them: one effect for all, writing the ones that changed.
    let shown_errors = super::Written::new();
    effect(move || {
        errors.with(|all| {
            shown_errors.each_changed(all, |i, _, message| {
                let Some(&f) = Field::ALL.get(i) else { return };
                let flag = f.flag();
                if let Some(p) = by_id(&format!("{flag}-err")) {
                    p.set_text_content(Some(message.as_deref().unwrap_or("")));
                }
                if let Some(el) = by_id(flag) {
                    let _ = el.set_attribute("aria-invalid", &message.is_some().to_string());
                }
                if let Some(div) = by_id(&format!("{flag}-field")) {
                    let _ = div
                        .class_list()
                        .toggle_with_force("invalid", message.is_some());
                }
                // The partition editor's stage boxes are the same input, one box per stage.
                if f == Field::PpPartition {
                    if let Some(div) = by_id("pp-stages") {
                        let _ = div
                            .class_list()
                            .toggle_with_force("invalid", message.is_some());
                    }
                }
            })
        })
    });
    // Defaults: placeholders, and the label of each list's empty choice; only those that
    // changed are written (a new utilization moves a few of some forty; the controls are
    // built once, so what was written stays written).
    let shown_defaults = super::Written::new();
    effect(move || {
        defaults.with(|d| {
            shown_defaults.each_changed(d, |i, _, value| {
                let Some(&f) = Field::ALL.get(i) else { return };
                let flag = f.flag();
                if let Some(option) = by_id(&format!("{flag}-default")) {
                    let label = if value.is_empty() {
                        "default".to_string()
                    } else {
                        format!("default ({value})")
                    };
                    option.set_text_content(Some(&label));
                } else if let Some(el) = by_id(flag).filter(|_| !is_check(f)) {
                    // A model's name is long enough alone (an example's fills a phone's box).
                    let placeholder = if value.is_empty() || f == Field::Model {
                        value.clone()
                    } else {
                        format!("default: {value}")
                    };
                    let _ = el.set_attribute("placeholder", &placeholder);
                }
            })
        });
    });
    // Provenance badges of the measured terms, and the catalog sources under the pickers.
    effect(move || {
        app.later.with(|p| {
            for f in Field::ALL {
                let Some(t) = term_of(f) else { continue };
                let Some(el) = by_id(&format!("{}-badge", f.flag())) else {
                    continue;
                };
                let prov = p
                    .as_deref()
                    .and_then(|p| badge_provenance(f, t, p))
                    .map(|pr| (pr.label(), pr.basis().to_string()));
                let (label, basis) = prov.unwrap_or_default();
                el.set_class_name(&format!("badge {label}"));
                el.set_text_content(Some(label));
                let _ = el.set_attribute("title", &basis);
            }
        });
    });
    // A disclosure opens when one of its inputs is set (a link, a reload, an import) or in
    // error, and its summary counts those set; the user closes it again if they like.
    let set_and_wrong = Memo::new(move |_| {
        let wrong = errors.get();
        Field::ALL
            .iter()
            .zip(wrong)
            .filter(|(f, e)| {
                !COMMON.contains(f) && (!app.text(**f).with(String::is_empty) || e.is_some())
            })
            .map(|(f, e)| (*f, e.is_some()))
            .collect::<Vec<_>>()
    });
    effect(move || {
        set_and_wrong.with(|flagged| {
            let Some(list) = document().query_selector_all("details.more").ok() else {
                return;
            };
            for i in 0..list.length() {
                let Some(d) = list
                    .item(i)
                    .and_then(|n| n.dyn_into::<web_sys::Element>().ok())
                else {
                    continue;
                };
                let inside = |f: &Field| {
                    d.query_selector(&format!("[data-field=\"{}\"]", f.flag()))
                        .ok()
                        .flatten()
                        .is_some()
                };
                let here: Vec<&(Field, bool)> = flagged.iter().filter(|(f, _)| inside(f)).collect();
                if !here.is_empty() {
                    let _ = d.set_attribute("open", "");
                }
                let set = here.len();
                if let Ok(Some(c)) = d.query_selector(".set-count") {
                    c.set_text_content(Some(&if set == 0 {
                        String::new()
                    } else {
                        format!(" ({set} set)")
                    }));
                }
            }
        });
    });
    // The catalog sources under the pickers follow the scenario (a change of GPU can leave the
    // plan alike); a memo of each text, so typing elsewhere writes nothing.
    // What the sources depend on: the model, the GPU's row and total, the weight format and
    // the release. Typing in any other input leaves this key, and so the sources, as they were
    // (they are long texts, linked word by word).
    let source_key = Memo::new(move |_| {
        let pasted = !app.text(Field::Config).with(String::is_empty);
        app.scenario.with(|s| {
            s.as_ref().ok().map(|s| {
                (
                    s.model.name.clone(),
                    s.gpu.id.clone(),
                    s.gpu.total,
                    s.engine.quantization,
                    s.engine.dtype,
                    s.version,
                    pasted,
                )
            })
        })
    });
    for (f, id) in [
        (Field::Model, "model-source"),
        (Field::Gpu, "gpu-source"),
        (Field::Quantization, "quantization-source"),
    ] {
        super::panels::bind_html(
            id,
            super::panels::html_memo(move || {
                let Some(key) = source_key.get() else {
                    return String::new();
                };
                app.scenario.with_untracked(|s| {
                    s.as_ref()
                        .ok()
                        .and_then(|s| super::sources::row_source(f, s, key.6))
                        .map(|t| super::sources::linked(&t))
                        .unwrap_or_default()
                })
            }),
        );
    }
    // The partition editor follows every edit of the list (even one that leaves the split as
    // it was, so a refused stage value does not linger).
    effect(move || {
        text.track();
        effective.with(|e| parts.with(|l| sync_stages(l, e)));
    });
    let handler = move |ev: web_sys::Event| on_form_event(app, parts, &ev);
    view! {
        <form
            class="inputs"
            aria-label="Scenario inputs"
            inner_html=form_html()
            on:submit=|ev| ev.prevent_default()
            on:input=handler
            on:change=handler
        ></form>
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ui::plan_of;

    /// The form shows every labelled schema row once, in six sections, and draws each input
    /// the way its rule reads (a switch as a checkbox, a closed set as a list).
    #[test]
    fn the_form_is_the_schema() {
        let s = sections();
        let titles: Vec<&str> = s.iter().map(|(sec, _)| sec.form_title()).collect();
        assert_eq!(
            titles,
            [
                "Model and hardware",
                "Parallelism",
                "Engine flags",
                "Speculative decoding",
                "Measured terms (override the estimates)",
                "Unified memory start gate"
            ]
        );
        let shown: Vec<Field> = s
            .iter()
            .flat_map(|(_, inputs)| inputs.iter().map(|i| i.field))
            .collect();
        for f in Field::ALL {
            let n = shown.iter().filter(|g| **g == f).count();
            assert_eq!(n, usize::from(row_of(f).label.is_some()), "{f:?}");
        }
        // The header holds these; the form does not.
        for f in [Field::Example, Field::Unit, Field::GuardThreshold] {
            assert!(!shown.contains(&f), "{f:?}");
        }
        assert!(is_check(Field::Eager) && !is_check(Field::Tp));
        assert!(is_list(Field::KvDtype) && is_list(Field::Gpu) && !is_list(Field::Model));
    }

    fn placeholder(pairs: &[(Field, &str)], field: Field) -> String {
        let mut st = url::UrlState::default();
        for (f, t) in pairs {
            st.set(*f, t).unwrap();
        }
        let s = url::scenario(&st).unwrap();
        let p = plan_of(pairs);
        default_value(field, &s, Some(&p), UnitSystem::Binary)
    }

    #[test]
    fn stage_placeholders_show_every_stage_and_the_drafter_rank() {
        // S1: the last stage is short; its drafter is measured there.
        let s1 = [(Field::Example, "s1-three-cards")];
        assert_eq!(
            placeholder(&s1, Field::AvailableKv),
            "6.20, 2.56, none (GiB)"
        );
        assert_eq!(placeholder(&s1, Field::Drafter), "12.00 GiB");
        // Its weights: stage 1 measured, the others estimated; the badge is the estimate.
        let p = plan_of(&s1);
        let w = |r: usize| p.ranks[r].line(Term::Weights).unwrap().provenance.label();
        assert_eq!((w(0), w(1)), ("estimate", "measured"));
        let badge = |f| badge_provenance(f, term_of(f).unwrap(), &p).unwrap();
        assert_eq!(badge(Field::Weights).label(), "estimate");
        assert_eq!(badge(Field::Drafter).label(), "measured");
        // A first stage measured and later ones estimated: still the estimate.
        let p = plan_of(&[
            (Field::Model, "llama-3.1-70b-instruct"),
            (Field::Pp, "3"),
            (Field::Weights, "45GiB,-,-"),
        ]);
        assert_eq!(
            p.ranks[0].line(Term::Weights).unwrap().provenance.label(),
            "measured"
        );
        let w = badge_provenance(Field::Weights, Term::Weights, &p).unwrap();
        assert_eq!(w.label(), "estimate");
        assert_eq!(placeholder(&s1, Field::Weights), "49.67, 53.30, 49.67 GiB");
        // A short later stage of a split that leaves the first with room.
        let split = [
            (Field::Model, "llama-3.1-70b-instruct"),
            (Field::Tp, "2"),
            (Field::Pp, "2"),
            (Field::PpPartition, "10,70"),
            (Field::Util, "0.6"),
        ];
        let kv = placeholder(&split, Field::AvailableKv);
        assert!(
            kv.ends_with(", none (GiB)") && !kv.starts_with("none"),
            "{kv}"
        );
        // One stage: how short; equal stages: one amount.
        let gib = 1i128 << 30;
        let b = UnitSystem::Binary;
        assert_eq!(stage_list(&[-5 * gib], b), "none (5.00 GiB short)");
        assert_eq!(stage_list(&[2 * gib, 2 * gib], b), "2.00 GiB");
        assert_eq!(stage_list(&[-gib, 2 * gib], b), "none, 2.00 GiB");
        assert_eq!(stage_list(&[-gib, -gib], b), "none (every stage short)");
        // A shortfall that rounds to 0.00 GiB is given in bytes.
        assert_eq!(shortfall(1_048_576, b), "1,048,576 B");
        assert_eq!(shortfall(5 << 30, b), "5.00 GiB");
    }
}
