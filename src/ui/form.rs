//! The inputs, under vLLM's own flag names, each with the default it takes when left empty
//! (shown as the placeholder), the provenance of the value it feeds, and the message of the
//! check it fails, beside it.
//!
//! The form is data: [`SECTIONS`] lists every input once; one generic component renders each
//! kind. Every input's `data-testid` and `id` are its flag name.

use leptos::prelude::*;

use crate::calc::plan::{Plan, Term};
use crate::calc::scenario::{MaxLen, Scenario};
use crate::calc::units::UnitSystem;
use crate::calc::version::VllmVersion;
use crate::catalog;
use crate::io::url::{Field, SPEC_METHODS};

use super::state::{current_utilization, AppState};

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

struct Input {
    field: Field,
    label: &'static str,
    kind: Kind,
}

const fn input(field: Field, label: &'static str, kind: Kind) -> Input {
    Input { field, label, kind }
}

const KV_DTYPES: [&str; 7] = [
    "auto",
    "bfloat16",
    "float16",
    "fp8",
    "fp8_e4m3",
    "fp8_e5m2",
    "fp8_ds_mla",
];

/// Every input, in sections.
const SECTIONS: [(&str, &[Input]); 6] = [
    (
        "Model and hardware",
        &[
            input(Field::Model, "Model (search the catalog)", Kind::Model),
            input(
                Field::Config,
                "Custom model: paste its config.json",
                Kind::Config,
            ),
            input(Field::Gpu, "GPU", Kind::Gpu),
            input(Field::Gpus, "GPUs available", Kind::Text),
            input(Field::Vllm, "vLLM version", Kind::Version),
        ],
    ),
    (
        "Parallelism",
        &[
            input(Field::Tp, "Tensor parallel size", Kind::Text),
            input(Field::Pp, "Pipeline parallel size", Kind::Text),
            input(
                Field::PpPartition,
                "Layers per stage (VLLM_PP_LAYER_PARTITION)",
                Kind::Text,
            ),
            input(Field::Dp, "Data parallel size", Kind::Text),
            input(Field::Ep, "Expert parallel", Kind::Check),
        ],
    ),
    (
        "Engine flags",
        &[
            input(Field::Util, "GPU memory utilization", Kind::Text),
            input(Field::KvBytes, "KV cache memory bytes", Kind::Text),
            input(Field::MaxModelLen, "Max model len", Kind::Text),
            input(Field::MaxNumSeqs, "Max num seqs", Kind::Text),
            input(
                Field::MaxNumBatchedTokens,
                "Max num batched tokens",
                Kind::Text,
            ),
            input(Field::KvDtype, "KV cache dtype", Kind::Choice(&KV_DTYPES)),
            input(Field::BlockSize, "Block size", Kind::Text),
            input(Field::Eager, "Enforce eager (no CUDA graphs)", Kind::Check),
            input(
                Field::NumGpuBlocksOverride,
                "GPU blocks override",
                Kind::Text,
            ),
            input(
                Field::NoHybrid,
                "Disable hybrid KV cache manager",
                Kind::Check,
            ),
        ],
    ),
    (
        "Speculative decoding",
        &[
            input(Field::Spec, "Method", Kind::Choice(&SPEC_METHODS)),
            input(Field::SpecTokens, "Speculative tokens", Kind::Text),
            input(
                Field::Drafter,
                "Drafter weights per last-stage rank",
                Kind::Text,
            ),
        ],
    ),
    (
        "Measured terms (override the estimates)",
        &[
            input(
                Field::Weights,
                "Weights per rank: Model loading took (one, or one per stage)",
                Kind::Text,
            ),
            input(Field::Activation, "Activation peak", Kind::Text),
            input(Field::NonTorch, "Non-torch / other consumption", Kind::Text),
            input(Field::CudaGraph, "CUDA graph memory", Kind::Text),
            input(Field::LoadPeak, "Load-time transient peak", Kind::Text),
            input(Field::Free, "Free memory at the init snapshot", Kind::Text),
            input(
                Field::AvailableKv,
                "Available KV cache memory (one, or one per stage)",
                Kind::Text,
            ),
            input(
                Field::Tenants,
                "Held by other processes per GPU",
                Kind::Text,
            ),
            input(Field::AvgLen, "Average request length (tokens)", Kind::Text),
        ],
    ),
    (
        "Unified memory start gate",
        &[
            input(
                Field::MemAvailable,
                "MemAvailable before the start",
                Kind::Text,
            ),
            input(Field::Headroom, "Headroom the gate keeps free", Kind::Text),
            input(
                Field::Overhead,
                "Overhead besides weights and KV",
                Kind::Text,
            ),
        ],
    ),
];

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

/// What an empty input means: vLLM's default, the example's value or the estimate.
fn default_text(field: Field, s: &Scenario, p: Option<&Plan>, unit: UnitSystem) -> String {
    let rank0 = p.and_then(|p| p.ranks.first());
    let line = |t: Term| {
        rank0
            .and_then(|r| r.line(t))
            .map(|l| super::charts::amount(l.bytes, unit))
    };
    let t = match field {
        Field::Model => s.model.name.clone(),
        Field::Config => "{ \"num_hidden_layers\": 32, ... }".into(),
        Field::Gpu => s.gpu.name.clone(),
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
        Field::Util => format!("{}", current_utilization(s)),
        Field::KvBytes => s
            .engine
            .kv_cache_memory_bytes
            .map_or("not set: the budget sizes the pool".into(), |b| {
                b.to_string()
            }),
        Field::MaxModelLen => match (s.engine.max_model_len, p.and_then(|p| p.replica.as_ref())) {
            (_, Some(r)) => r.max_model_len.to_string(),
            (MaxLen::Value(v), None) => v.to_string(),
            (MaxLen::Auto, None) => "auto".into(),
            (MaxLen::ModelDefault, None) => s.model.max_position_embeddings.to_string(),
        },
        Field::MaxNumSeqs => p
            .and_then(|p| p.demand.as_ref())
            .map_or(String::new(), |d| d.max_num_seqs.to_string()),
        Field::MaxNumBatchedTokens => p
            .and_then(|p| p.demand.as_ref())
            .map_or(String::new(), |d| d.max_num_batched_tokens.to_string()),
        Field::BlockSize => p
            .and_then(|p| p.replica.as_ref())
            .map_or("backend's choice".into(), |r| r.block_size.to_string()),
        Field::NumGpuBlocksOverride => "not set".into(),
        Field::SpecTokens => s
            .engine
            .speculative
            .as_ref()
            .map_or(String::new(), |sp| sp.num_speculative_tokens.to_string()),
        Field::Weights
        | Field::Drafter
        | Field::Activation
        | Field::NonTorch
        | Field::CudaGraph
        | Field::LoadPeak
        | Field::Free
        | Field::AvailableKv
        | Field::Tenants => term_of(field).and_then(line).unwrap_or_default(),
        Field::MemAvailable => s
            .unified
            .as_ref()
            .map_or("not a unified-memory box".into(), |u| {
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
        Field::AvgLen => p
            .and_then(|p| p.demand.as_ref())
            .map_or(String::new(), |d| d.average_len.to_string()),
        Field::Example
        | Field::Ep
        | Field::Eager
        | Field::NoHybrid
        | Field::KvDtype
        | Field::Spec
        | Field::Unit => String::new(),
    };
    if t.is_empty() {
        t
    } else {
        format!("default: {t}")
    }
}

/// The scenario's value of a checkbox field.
fn checked_in(field: Field, s: &Scenario) -> bool {
    match field {
        Field::Ep => s.parallel.expert_parallel,
        Field::Eager => s.engine.enforce_eager,
        Field::NoHybrid => s.engine.disable_hybrid_kv_cache_manager,
        _ => false,
    }
}

/// The scenario's value of a choice field, for the label of the empty choice.
fn chosen_in(field: Field, s: &Scenario) -> String {
    match field {
        Field::KvDtype => s.engine.kv_cache_dtype.as_str().into(),
        Field::Spec => s
            .engine
            .speculative
            .as_ref()
            .map_or("none".into(), |sp| sp.method.clone()),
        _ => String::new(),
    }
}

/// One labelled input with its default, provenance badge and error message. `defaults` holds
/// every field's placeholder, indexed like `Field::ALL`.
fn field_view(
    app: AppState,
    defaults: Memo<Vec<String>>,
    errors: Memo<Vec<Option<String>>>,
    inp: &'static Input,
) -> AnyView {
    let f = inp.field;
    let index = Field::ALL.iter().position(|x| *x == f).unwrap_or(0);
    let flag = f.flag();
    let text = app.text(f);
    let err_id = format!("{flag}-err");
    let error = move || errors.with(|e| e.get(index).cloned().flatten());
    let placeholder = move || defaults.with(|d| d.get(index).cloned().unwrap_or_default());
    let set = move |ev: leptos::ev::Event| text.set(event_target_value(&ev));
    let control = match inp.kind {
        Kind::Text | Kind::Model => view! {
            <input
                type="text"
                id=flag
                name=flag
                data-testid=flag
                autocomplete="off"
                spellcheck="false"
                list=if inp.kind == Kind::Model { Some("model-list") } else { None }
                prop:value=move || text.get()
                placeholder=placeholder
                aria-invalid=move || error().is_some().to_string()
                aria-describedby=err_id.clone()
                on:input=set
            />
        }
        .into_any(),
        Kind::Config => view! {
            <textarea
                id=flag
                name=flag
                data-testid=flag
                rows="3"
                spellcheck="false"
                prop:value=move || text.get()
                placeholder=placeholder
                aria-invalid=move || error().is_some().to_string()
                aria-describedby=err_id.clone()
                on:input=set
            ></textarea>
        }
        .into_any(),
        Kind::Check => view! {
            <input
                type="checkbox"
                id=flag
                name=flag
                data-testid=flag
                prop:checked=move || {
                    app.scenario.with(|s| s.as_ref().map(|s| checked_in(f, s)).unwrap_or(false))
                }
                on:change=move |ev| {
                    text.set(if event_target_checked(&ev) { "true" } else { "false" }.into())
                }
            />
        }
        .into_any(),
        Kind::Choice(options) => {
            let default_label = move || {
                app.scenario.with(|s| {
                    s.as_ref()
                        .map(|s| format!("default ({})", chosen_in(f, s)))
                        .unwrap_or_else(|_| "default".into())
                })
            };
            view! {
                <select id=flag name=flag data-testid=flag prop:value=move || text.get() on:change=set>
                    <option value="">{default_label}</option>
                    {options.iter().map(|o| view! { <option value=*o>{*o}</option> }).collect_view()}
                </select>
            }
            .into_any()
        }
        Kind::Gpu => {
            let default_label = move || {
                app.scenario.with(|s| {
                    s.as_ref()
                        .map(|s| format!("default ({})", s.gpu.name))
                        .unwrap_or_else(|_| "default".into())
                })
            };
            view! {
                <select id=flag name=flag data-testid=flag prop:value=move || text.get() on:change=set>
                    <option value="">{default_label}</option>
                    {catalog::gpus()
                        .iter()
                        .map(|g| view! { <option value=g.gpu.id.clone()>{g.gpu.name.clone()}</option> })
                        .collect_view()}
                </select>
            }
            .into_any()
        }
        Kind::Version => {
            let versions: Vec<String> = (VllmVersion::OLDEST.minor..=VllmVersion::CURRENT.minor)
                .rev()
                .map(|m| format!("0.{m}"))
                .collect();
            view! {
                <select id=flag name=flag data-testid=flag prop:value=move || text.get() on:change=set>
                    <option value="">{format!("default ({})", VllmVersion::CURRENT)}</option>
                    {versions.into_iter().map(|v| view! { <option value=v.clone()>{v.clone()}</option> }).collect_view()}
                </select>
            }
            .into_any()
        }
    };
    let badge = term_of(f).map(|t| {
        let prov = move || {
            app.later.with(|p| {
                p.as_ref()
                    .and_then(|p| p.ranks.first())
                    .and_then(|r| r.line(t))
                    .map(|l| (l.provenance.label(), l.provenance.basis().to_string()))
            })
        };
        view! {
            <span
                class=move || format!("badge {}", prov().map_or("", |p| p.0))
                title=move || prov().map(|p| p.1).unwrap_or_default()
            >
                {move || prov().map(|p| p.0)}
            </span>
        }
    });
    let wide = matches!(inp.kind, Kind::Check);
    let source = matches!(f, Field::Model | Field::Gpu).then(|| {
        let text = move || {
            app.later.track();
            app.scenario
                .with_untracked(|s| s.as_ref().ok().and_then(|s| row_source(f, s)))
        };
        view! { <p class="source" data-testid=format!("{flag}-source")>{text}</p> }
    });
    view! {
        <div class="field" class:check=wide class:invalid=move || error().is_some()>
            <label for=flag>
                <span class="name">{inp.label}</span>
                <code class="flag">{format!("--{flag}")}</code>
                {badge}
            </label>
            {control}
            {source}
            <p class="err" id=format!("{flag}-err") role="alert">
                {error}
            </p>
        </div>
    }
    .into_any()
}

/// Where the chosen model's or GPU's catalog row came from (shown under the picker).
fn row_source(field: Field, s: &Scenario) -> Option<String> {
    match field {
        Field::Model => catalog::models()
            .iter()
            .find(|r| r.model.name == s.model.name)
            .map(|r| {
                let unconfirmed = if r.unconfirmed.is_empty() {
                    String::new()
                } else {
                    format!(" Unconfirmed: {}.", r.unconfirmed.join(", "))
                };
                format!(
                    "Catalog row {} (retrieved {}): {}.{unconfirmed}",
                    r.id, r.retrieved, r.source
                )
            }),
        Field::Gpu => catalog::gpus()
            .iter()
            .find(|g| g.gpu.id == s.gpu.id)
            .map(|g| {
                format!(
                    "Total {} B: {} (retrieved {}; {}).",
                    crate::calc::units::thousands(u128::from(g.gpu.total.0)),
                    g.basis,
                    g.retrieved,
                    g.source
                )
            }),
        _ => None,
    }
}

/// The layer-partition editor: the effective split (vLLM's default when the partition is
/// unset), one input per stage. Changing a stage writes the whole list into
/// `--pp-layer-partition`; the core checks the sum against the model's layers.
fn partition_editor(app: AppState) -> impl IntoView {
    let text = app.text(Field::PpPartition);
    // The list being edited: the typed one when it reads as a list, else the plan's split.
    let current = move || {
        crate::io::url::parse_partition(&text.get()).unwrap_or_else(|_| {
            app.shown.with(|p| {
                p.as_ref()
                    .map(|p| p.pp_partition.clone())
                    .unwrap_or_default()
            })
        })
    };
    let parts = Memo::new(move |_| current());
    move || {
        let list = parts.get();
        let summary = list
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(", ");
        view! {
            <div class="stages">
                <p class="chips" data-testid="pp-partition-effective">
                    {format!("Effective split: {summary}")}
                </p>
                {list
                    .iter()
                    .enumerate()
                    .map(|(i, n)| {
                        let id = format!("pp-stage-{i}");
                        let (label_for, input_id) = (id.clone(), id.clone());
                        view! {
                            <label class="stage" for=label_for>
                                {format!("stage {i}")}
                                <input
                                    type="number"
                                    min="1"
                                    id=input_id
                                    data-testid=id
                                    prop:value=n.to_string()
                                    on:change=move |ev| {
                                        // Read the list now, untracked: a rebuilt editor keeps its
                                        // first handlers, so nothing captured at render is current.
                                        let mut l: Vec<String> = untrack(current)
                                            .iter()
                                            .map(u32::to_string)
                                            .collect();
                                        if let Some(slot) = l.get_mut(i) {
                                            *slot = event_target_value(&ev).trim().to_string();
                                        }
                                        text.set(l.join(","));
                                    }
                                />
                            </label>
                        }
                    })
                    .collect_view()}
            </div>
        }
    }
}

/// The whole form.
pub fn form(app: AppState) -> impl IntoView {
    // One memo for every field's message: it changes only when a message does.
    let errors = Memo::new(move |_| Field::ALL.iter().map(|f| app.error(*f)).collect::<Vec<_>>());
    // One memo for every placeholder, so the inputs subscribe to one source, not three each.
    // Defaults and badges follow the slow lane: they change rarely, and typing should only
    // wait for the verdict, the figures and the chart.
    let defaults = Memo::new(move |_| {
        let unit = app.later_unit.get();
        app.later.track();
        app.scenario.with_untracked(|s| match s {
            Ok(s) => app.later.with(|p| {
                Field::ALL
                    .iter()
                    .map(|f| default_text(*f, s, p.as_deref(), unit))
                    .collect()
            }),
            Err(_) => vec![String::new(); Field::ALL.len()],
        })
    });
    let fields = move || {
        app.ready.get().then(|| {
            // The catalog is parsed whole here, in the slow lane, not before the first verdict.
            let models = catalog::models();
            view! {
            <datalist id="model-list">
                {models
                    .iter()
                    .map(|m| view! { <option value=m.id.clone()>{m.name.clone()}</option> })
                    .collect_view()}
            </datalist>
            {SECTIONS
                .iter()
                .enumerate()
                .map(|(i, (title, inputs))| {
                    view! {
                        <fieldset>
                            <legend>{*title}</legend>
                            {inputs.iter().map(|inp| field_view(app, defaults, errors, inp)).collect_view()}
                            {(i == 1).then(|| partition_editor(app))}
                        </fieldset>
                    }
                })
                .collect_view()}
                <p class="hint">
                "Empty inputs take the default shown in grey. Byte counts accept 79.29GiB, 46.1GB, 10e9, 9g (10^9) and 9G (2^30); token counts accept 128k and 128K."
            </p>
            }
        })
    };
    view! {
        <form class="inputs" aria-label="Scenario inputs" on:submit=|ev| ev.prevent_default()>
            {fields}
        </form>
    }
}
