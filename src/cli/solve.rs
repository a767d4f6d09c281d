//! `headroom solve --for TARGET`: the setting that makes a scenario work, and the plan with it.

use std::fmt::Write as _;

use crate::calc::scenario::{MaxLen, Scenario};
use crate::calc::units::{human, parse_count, thousands};
use crate::calc::{self, solve, CalcError};

use super::text::{prov_with_basis, render};
use super::{json, pretty, CliError, Invocation, Outcome, EXIT_FAILS, EXIT_STARTS};

/// `solve --for`.
#[derive(Clone, Debug, PartialEq)]
pub enum Target {
    /// The largest `--kv-cache-memory-bytes` that still starts.
    KvPin,
    /// The smallest `--gpu-memory-utilization` holding N full-length requests at once.
    Utilization(u64),
    /// The longest `--max-model-len` that starts.
    MaxModelLen,
    /// A PP split balancing the last stage's extras (in layer-equivalents), keeping at least
    /// `pinned` layers there.
    PpPartition { extras: f64, pinned: u32 },
}

impl Target {
    pub(super) fn parse(text: &str) -> Result<Target, CliError> {
        let err = |m: String| CliError::new("--for", m);
        let t = text.trim();
        let mut parts = t.splitn(2, ':');
        let head = parts.next().unwrap_or("");
        let rest = parts.next();
        match (head, rest) {
            ("kv-pin", None) => Ok(Target::KvPin),
            ("max-model-len", None) => Ok(Target::MaxModelLen),
            ("utilization", Some(n)) => {
                let n = parse_count(n).map_err(|e| err(format!("utilization:N: {e}")))?;
                if n == 0 {
                    return Err(err("utilization:N needs N of at least 1 request".into()));
                }
                Ok(Target::Utilization(n))
            }
            ("pp-partition", Some(spec)) => {
                let mut it = spec.splitn(2, ':');
                let extras_text = it.next().unwrap_or("").trim();
                let extras: f64 = extras_text.parse().map_err(|_| {
                    err(format!(
                        "pp-partition:EXTRAS: {} is not a number of layer-equivalents (e.g. 3.6)", crate::calc::quoted(extras_text)
                    ))
                })?;
                if !(extras.is_finite() && (0.0..=1e6).contains(&extras)) {
                    return Err(err(format!(
                        "pp-partition:EXTRAS: {extras_text} must be between 0 and 1000000 layer-equivalents"
                    )));
                }
                let pinned = match it.next() {
                    None => 0,
                    Some(p) => p.trim().parse::<u32>().map_err(|_| {
                        err(format!(
                            "pp-partition:EXTRAS:PINNED: {:?} is not a layer count",
                            p.trim()
                        ))
                    })?,
                };
                Ok(Target::PpPartition { extras, pinned })
            }
            _ => Err(err(format!(
                "{} is not one of kv-pin, utilization:N, max-model-len, pp-partition:EXTRAS[:PINNED]", crate::calc::quoted(t)
            ))),
        }
    }

    fn label(&self) -> String {
        match self {
            Target::KvPin => "kv-pin".into(),
            Target::Utilization(n) => format!("utilization:{n}"),
            Target::MaxModelLen => "max-model-len".into(),
            Target::PpPartition { extras, pinned } => format!("pp-partition:{extras}:{pinned}"),
        }
    }
}

/// Solves for the target, then plans the scenario with the answer applied.
pub(super) fn run_solve(inv: &Invocation, target: &Target) -> Result<Outcome, CliError> {
    let s = &inv.scenario;
    let calc_err = |e: CalcError| CliError::from_calc(&e);
    // The answer as (flag text, JSON value, sentence) and the scenario with it applied.
    let (found, answer_flag, value, sentence, applied): (
        bool,
        Option<String>,
        serde_json::Value,
        String,
        Scenario,
    ) = match target {
        Target::KvPin => {
            let pin = solve::largest_kv_pin(s).map_err(calc_err)?;
            if pin == 0 {
                // A pin of 0 is vLLM's "unset": there is nothing to suggest.
                (
                    false,
                    None,
                    serde_json::Value::Null,
                    "No KV pin starts: once the weights, the other use, the activation peak and the CUDA graphs are held, nothing is left for a KV cache.".to_string(),
                    s.clone(),
                )
            } else {
                let mut t = s.clone();
                t.engine.kv_cache_memory_bytes = Some(pin);
                let size = format!(
                    "{} ({} B)",
                    human(i128::from(pin), inv.unit),
                    thousands(u128::from(pin))
                );
                let sentence = if s.unified.is_some() {
                    format!("The largest KV pin the unified-memory start gate passes: {size}.")
                } else {
                    let warm_up = calc::plan(s)
                        .map(|p| p.settings.warm_up_after_pool)
                        .unwrap_or(true);
                    let mut t = format!(
                    "The largest KV pin that still starts: {size}, leaving room for the weights, the other use, {}the CUDA graphs and vLLM's {} margin{}.",
                    if warm_up { "the activation peak, " } else { "" },
                    human(i128::from(solve::SUGGESTION_MARGIN), inv.unit),
                    if warm_up { "" } else { " (on this GPU and release no warm-up runs the activation peak again once the pool is allocated, so the pool may take its room)" }
                );
                    if let Some(y) = solve::vllm_suggested_kv_pin(s).ok().flatten() {
                        t.push_str(&format!(
                        " vLLM's own log would suggest --kv-cache-memory={y} ({}) \"to fully utilize gpu memory\": it counts the CUDA graphs twice, in the peak and as captured.",
                        human(i128::from(y), inv.unit)
                    ));
                    }
                    t
                };
                // The pin is sized from memory alone; another phase (capacity, say) can still stop
                // the start, and the sentence must not claim otherwise.
                let sentence = match calc::plan(&t)
                    .ok()
                    .as_ref()
                    .and_then(|p| p.first_failure().map(|c| c.phase.label()))
                {
                    Some(phase) => format!("{sentence} With it the start still fails at {phase}."),
                    None => sentence,
                };
                (
                    true,
                    Some(format!("--kv-cache-memory-bytes {pin}")),
                    serde_json::Value::from(pin),
                    sentence,
                    t,
                )
            }
        }
        Target::Utilization(n) => {
            let u = solve::smallest_utilization_for(s, *n).map_err(calc_err)?;
            let mut t = s.clone();
            if let Some(u) = u {
                t.engine.gpu_memory_utilization = Some(u);
                t.engine.kv_cache_memory_bytes = None;
            }
            (
                u.is_some(),
                u.map(|u| format!("--gpu-memory-utilization {u}")),
                u.map_or(serde_json::Value::Null, serde_json::Value::from),
                match u {
                    Some(u) => format!("The smallest gpu-memory-utilization holding {n} full-length request(s) at once: {u}."),
                    None => format!("No gpu-memory-utilization up to 1.0 holds {n} full-length request(s) at once."),
                },
                t,
            )
        }
        Target::MaxModelLen => {
            let len = solve::longest_max_model_len(s).map_err(calc_err)?;
            let mut t = s.clone();
            if let Some(len) = len {
                t.engine.max_model_len = MaxLen::Value(len);
            }
            (
                len.is_some(),
                len.map(|l| format!("--max-model-len {l}")),
                len.map_or(serde_json::Value::Null, serde_json::Value::from),
                match len {
                    Some(l) => format!(
                        "The longest max-model-len that starts: {} tokens.",
                        thousands(u128::from(l))
                    ),
                    None => {
                        "Not even a 1-token context starts: the failure is not the context length."
                            .into()
                    }
                },
                t,
            )
        }
        Target::PpPartition { extras, pinned } => {
            let b = solve::balanced_partition(s.model.n_layers, s.parallel.pp, *extras, *pinned)
                .map_err(calc_err)?;
            let list: Vec<String> = b.partition.iter().map(u32::to_string).collect();
            let mut t = s.clone();
            t.parallel.pp_layer_partition = Some(b.partition.clone());
            // The split is the solver's, not the user's: a split the model refuses is the
            // solver's answer failing, said under --for with the model's reason.
            if let Err(e) = calc::plan(&t) {
                if e.input() == Some(calc::Input::PpPartition)
                    && s.parallel.pp_layer_partition.is_none()
                {
                    return Err(CliError::new(
                        "--for",
                        format!(
                            "the balanced split {} is one this model refuses: {}; try fewer layers pinned to the last stage, or other extras",
                            list.join(","),
                            e.message()
                        ),
                    ));
                }
            }
            (
                true,
                Some(format!("--pp-layer-partition {}", list.join(","))),
                serde_json::json!(b.partition),
                format!(
                    "A split balancing {extras} layer-equivalents of last-stage extras over {} {}: {}  (VLLM_PP_LAYER_PARTITION={}).",
                    s.parallel.pp,
                    calc::units::plural(u64::from(s.parallel.pp), "stage", "stages"),
                    b.equation,
                    list.join(",")
                ),
                t,
            )
        }
    };
    let p = calc::plan(&applied).map_err(calc_err)?;
    let prov = solve::answer_provenance(&p);
    let code = if found && p.starts() {
        EXIT_STARTS
    } else {
        EXIT_FAILS
    };
    let text = if inv.json {
        pretty(&serde_json::json!({
            "solve": {
                "for": target.label(),
                "found": found,
                "value": value,
                "flag": answer_flag,
                "message": sentence,
                "provenance": prov.label(),
                "basis": prov.basis(),
            },
            "plan": json::document(&applied, &p),
        }))
    } else {
        let mut out = String::new();
        let _ = writeln!(out, "Solve {}: {sentence}", target.label());
        let _ = writeln!(out, "  Figures: {}", prov_with_basis(&prov));
        if let Some(f) = &answer_flag {
            let _ = writeln!(out, "  Use: {f}");
        }
        let _ = writeln!(
            out,
            "\n{}\n",
            if found {
                "The plan with that setting:"
            } else {
                "The plan as given:"
            }
        );
        out.push_str(&render(&applied, &p, inv.unit));
        out
    };
    let mut o = Outcome::ok(code, text);
    o.stderr = super::notes(&inv.notes);
    Ok(o)
}
