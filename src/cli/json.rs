//! A `Plan` as JSON: stable snake_case keys for scripts and CI (`headroom plan --json`).
//!
//! `calc` knows nothing of serde; this module reads the `Plan` and builds `serde_json::Value`s.
//! Every key is documented in `docs/cli.md`; renaming one is a breaking change. Byte counts are
//! JSON integers: signed figures (`i128` in the plan) saturate to the `i64` range and unsigned
//! ones (`u128`) to the `u64` range, which only absurd inputs reach. Non-finite floats become
//! `null`.

use serde_json::{json, Map, Value};

use crate::calc::plan::KvGroup;
use crate::calc::plan::{Demand, UnifiedGate};
use crate::calc::scenario::{AttentionBackend, MaxLen};
use crate::calc::{Check, LedgerLine, Plan, Provenance, RankPlan, ReplicaPlan, Scenario, Term};

/// The version of this JSON layout; bumped when a key changes meaning or disappears.
pub const FORMAT_VERSION: u64 = 1;

/// A signed byte figure as a JSON integer, saturated to the `i64` range.
pub fn int(x: i128) -> Value {
    let clamped = x.clamp(i128::from(i64::MIN), i128::from(i64::MAX));
    // The clamp makes the conversion infallible.
    Value::from(i64::try_from(clamped).unwrap_or(0))
}

/// An unsigned figure as a JSON integer, saturated to the `u64` range.
pub fn uint(x: u128) -> Value {
    Value::from(u64::try_from(x).unwrap_or(u64::MAX))
}

/// A float, or `null` when it is not finite (JSON has no NaN or infinity).
pub fn float(x: f64) -> Value {
    if x.is_finite() {
        Value::from(x)
    } else {
        Value::Null
    }
}

/// One ledger line: `{term, label, bytes, formula, provenance, basis}`.
pub fn ledger_line(l: &LedgerLine) -> Value {
    json!({
        "term": l.term.key(),
        "label": l.term.label(),
        "bytes": int(l.bytes),
        "formula": &*l.formula,
        "provenance": l.provenance.label(),
        "basis": l.provenance.basis(),
    })
}

fn ledger(lines: &[LedgerLine]) -> Value {
    Value::Array(lines.iter().map(ledger_line).collect())
}

/// One rank of the TP x PP grid.
pub fn rank(r: &RankPlan) -> Value {
    json!({
        "rank": r.rank,
        "tp_rank": r.tp_rank,
        "pp_rank": r.pp_rank,
        "layers": [r.layers.0, r.layers.1],
        "holds_embedding": r.holds_embedding,
        "holds_head": r.holds_head,
        "holds_drafter": r.holds_drafter,
        "weights_bytes": r.weights.0,
        "budget_bytes": r.budget.0,
        "available_kv_bytes": int(r.available_kv),
        "kv_heads": r.kv_heads,
        "kv_bytes_per_token": r.kv_bytes_per_token,
        "page_size_bytes": r.page_size,
        "bytes_per_block": r.bytes_per_block,
        "num_blocks": r.num_blocks_own,
        // Null where the start stopped before the pool was allocated: no pool, no figure.
        "kv_pool_bytes": r.line(Term::KvPool).map(|_| r.kv_pool.0),
        "free_after_start_bytes": r.line(Term::FreeAfterStart).map(|_| int(r.free_after_start)),
        "ledger": ledger(&r.ledger),
    })
}

fn group(g: &KvGroup) -> Value {
    json!({
        "spec": g.spec_name(),
        "layers": g.layer_indices,
        "page_size_bytes": g.page_size,
        "block_size": g.block_size,
        "blocks_per_request": g.blocks_per_request,
    })
}

fn provenance(p: &Provenance) -> (Value, Value) {
    (Value::from(p.label()), Value::from(p.basis()))
}

/// The replica's KV pool and what it holds.
pub fn replica(r: &ReplicaPlan) -> Value {
    let (prov, basis) = provenance(&r.provenance);
    json!({
        // Null where a measured ratio converts the pool to tokens without the KV layout: the
        // block count is not derived (the text says so), never 0 blocks.
        "num_blocks": (!r.groups.is_empty()).then_some(r.num_blocks),
        "limiting_rank": r.limiting_rank,
        "block_size": r.block_size,
        "blocks_per_request": (!r.groups.is_empty()).then_some(r.blocks_per_request),
        "max_model_len": r.max_model_len,
        "kv_cache_tokens": r.kv_cache_tokens,
        "max_concurrency": float(r.max_concurrency),
        "full_length_requests": r.full_length_requests,
        "data_parallel": r.data_parallel,
        "groups": r.groups.iter().map(group).collect::<Vec<_>>(),
        "provenance": prov,
        "basis": basis,
    })
}

/// One check: `{phase, label, ok, rank, message, vllm_error, knobs, not_knobs}`.
pub fn check(c: &Check) -> Value {
    json!({
        "phase": c.phase.key(),
        "label": c.phase.label(),
        "ok": c.ok,
        "rank": c.rank,
        "message": &*c.message,
        "vllm_error": c.vllm_error,
        "knobs": c.knobs,
        "not_knobs": c.not_knobs,
    })
}

/// Demand against the pool.
pub fn demand(d: &Demand) -> Value {
    let (prov, basis) = provenance(&d.provenance);
    json!({
        "max_num_seqs": d.max_num_seqs,
        "max_num_batched_tokens": d.max_num_batched_tokens,
        "per_request_bytes": d.per_request_bytes,
        "all_seqs_bytes": uint(d.all_seqs_bytes),
        "all_seqs_bytes_replica": uint(d.all_seqs_bytes_replica),
        "pool_bytes": d.pool_bytes,
        "average_len": d.average_len,
        "concurrency_at_average": float(d.concurrency_at_average),
        "provenance": prov,
        "basis": basis,
    })
}

/// The unified-memory start gate.
pub fn unified(g: &UnifiedGate) -> Value {
    json!({
        "ok": g.ok,
        "needs_bytes": g.needs.0,
        "mem_available_bytes": g.mem_available.0,
        "lines": ledger(&g.lines),
        "utilization_note": &*g.utilization_note,
        "after_start_bytes": int(g.after_start),
        "guard_threshold_bytes": g.guard_threshold.0,
        "guard_ok": g.guard_ok,
    })
}

/// The whole plan. (`serde_json` sorts an object's keys, so the printed order is alphabetical.)
pub fn plan(p: &Plan) -> Value {
    let mut m = Map::new();
    m.insert("format_version".into(), Value::from(FORMAT_VERSION));
    m.insert("vllm_version".into(), Value::from(p.version.to_string()));
    m.insert("starts".into(), Value::from(p.starts()));
    m.insert(
        "first_failure".into(),
        p.first_failure()
            .map_or(Value::Null, |c| Value::from(c.phase.key())),
    );
    m.insert("tp".into(), Value::from(p.tp));
    m.insert("pp".into(), Value::from(p.pp));
    m.insert("dp".into(), Value::from(p.dp));
    m.insert("pp_partition".into(), json!(p.pp_partition));
    m.insert(
        "gpu_memory_utilization".into(),
        float(p.gpu_memory_utilization),
    );
    m.insert(
        "ranks".into(),
        Value::Array(p.ranks.iter().map(rank).collect()),
    );
    m.insert(
        "replica".into(),
        p.replica.as_ref().map_or(Value::Null, replica),
    );
    m.insert(
        "checks".into(),
        Value::Array(p.checks.iter().map(check).collect()),
    );
    m.insert(
        "demand".into(),
        p.demand.as_ref().map_or(Value::Null, demand),
    );
    m.insert(
        "unified".into(),
        p.unified.as_ref().map_or(Value::Null, unified),
    );
    m.insert("log_lines".into(), json!(p.log_lines));
    let (label, basis) = provenance(&p.log_provenance);
    m.insert("log_provenance".into(), label);
    m.insert("log_provenance_basis".into(), basis);
    m.insert(
        "notes".into(),
        json!(p.notes.iter().map(|n| &**n).collect::<Vec<&str>>()),
    );
    if let Some(c) = &p.weights_check {
        m.insert(
            "weights_check".into(),
            json!({
                "against": c.against,
                "stated": c.stated,
                "estimated": c.estimated,
                "ratio": c.ratio,
                "dominant": c.dominant.iter().map(|(k, v)| json!({"kind": k, "amount": v})).collect::<Vec<_>>(),
                "message": c.message,
            }),
        );
    }
    Value::Object(m)
}

/// What was planned: the model, the GPU and the settings that are not already in the plan.
pub fn input(s: &Scenario) -> Value {
    let max_model_len = match s.engine.max_model_len {
        MaxLen::ModelDefault => Value::Null,
        MaxLen::Value(n) => Value::from(n),
        MaxLen::Auto => Value::from("auto"),
    };
    json!({
        "model": {
            "name": s.model.name,
            "num_hidden_layers": s.model.n_layers,
            "max_position_embeddings": s.model.max_position_embeddings,
            "dtype": s.model.dtype.as_str(),
            "quant_method": Some(s.model.quant_method.as_str()).filter(|q| !q.is_empty()),
        },
        "gpu": {
            "id": s.gpu.id,
            "name": s.gpu.name,
            "total_bytes": s.gpu.total.0,
            "total_confirmed": s.gpu.total_confirmed,
            "unified_memory": s.gpu.unified_memory,
        },
        "gpus": s.gpus,
        "max_model_len": max_model_len,
        "quantization": s.engine.quantization,
        "dtype": s.engine.dtype.as_str(),
        "kv_cache_dtype": s.engine.kv_cache_dtype.as_str(),
        "kv_cache_memory_bytes": s.engine.kv_cache_memory_bytes,
        "enforce_eager": s.engine.enforce_eager,
        "async_scheduling": !s.engine.no_async_scheduling,
        "attention_backend": s.engine.attention_backend.map(AttentionBackend::as_str),
        "speculative": s.engine.speculative.as_ref().map(|sp| json!({
            "method": sp.method.as_str(),
            "num_speculative_tokens": sp.num_speculative_tokens,
        })),
    })
}

/// The document `headroom plan --json` prints: the plan's keys plus `input`.
pub fn document(s: &Scenario, p: &Plan) -> Value {
    let mut v = plan(p);
    if let Value::Object(m) = &mut v {
        m.insert("input".into(), input(s));
    }
    v
}

/// `headroom import-command --json`: `{form, model, env, gpus_visible, vllm_version, flags,
/// ignored, notes}`, `flags` keyed by vLLM's destination names with the values vLLM's parser
/// gives (numbers as numbers, the speculative config as its JSON).
pub fn imported(c: &crate::import::command::Imported) -> Value {
    use crate::import::command::FlagValue;
    let mut flags = Map::new();
    for f in &c.flags {
        let v = match &f.value {
            FlagValue::Int(n) => Value::from(*n),
            FlagValue::Float(x) => float(*x),
            FlagValue::Bool(b) => Value::from(*b),
            FlagValue::Text(t) => Value::from(t.as_str()),
            FlagValue::Json(j) => serde_json::from_str(&j.to_string()).unwrap_or(Value::Null),
        };
        flags.insert(f.dest.to_string(), v);
    }
    let env: Map<String, Value> = c
        .env
        .iter()
        .map(|(n, v)| (n.clone(), Value::from(v.as_str())))
        .collect();
    json!({
        "form": c.form.as_str(),
        "model": c.model,
        "env": env,
        "gpus_visible": c.gpus_visible,
        "vllm_version": c.vllm_version,
        "flags": flags,
        "ignored": c.ignored.iter().map(|i| json!({
            "flag": i.flag,
            "dest": i.dest,
            "value": i.value,
            "reason": i.reason,
        })).collect::<Vec<_>>(),
        "notes": c.notes,
    })
}

/// `headroom command --json`: `{command, left_out}`.
pub fn exported(e: &crate::import::export::Exported) -> Value {
    json!({
        "command": e.text,
        "left_out": e.left_out,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_saturate() {
        assert_eq!(int(-5), json!(-5));
        assert_eq!(int(i128::MAX), json!(i64::MAX));
        assert_eq!(int(i128::MIN), json!(i64::MIN));
        assert_eq!(uint(u128::MAX), json!(u64::MAX));
        assert_eq!(float(f64::NAN), Value::Null);
        assert_eq!(float(1.5), json!(1.5));
    }
}
