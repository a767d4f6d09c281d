//! Three engines, three "fractions": the same deployment's KV memory under vLLM's
//! `--gpu-memory-utilization`, SGLang's `--mem-fraction-static` and TensorRT-LLM's
//! `free_gpu_memory_fraction`, each given the same number, each with its own formula (the
//! accounting spec, section 8, read from SGLang 0.5.23's and TensorRT-LLM's source). The point
//! is the word: a fraction of the total, of what is free before loading, or of what is left
//! after the weights and the activation peak.

use crate::calc::plan::{Plan, Term};
use crate::calc::units::{human, thousands, UnitSystem};

/// One engine's reading of the fraction, on one rank.
#[derive(Clone, Debug, PartialEq)]
pub struct EngineRow {
    pub engine: &'static str,
    pub knob: &'static str,
    /// What the fraction is a fraction of, in words.
    pub of: &'static str,
    /// The formula with this rank's numbers.
    pub formula: String,
    /// The KV memory it gives (negative: none).
    pub kv_bytes: i128,
    /// Tokens of KV cache that memory holds on this rank, at this rank's bytes per token.
    pub tokens: Option<u64>,
    /// Where the formula comes from.
    pub source: &'static str,
    /// How certain the figure is: vLLM's row is the plan's own line; the other engines'
    /// formulas read the plan's figures and leave their own overheads out (estimates).
    pub provenance: &'static str,
}

/// The rank the contrast reads: the one that decides, else rank 0.
fn rank(p: &Plan) -> usize {
    (p.deciding_rank().unwrap_or(0) as usize).min(p.ranks.len().saturating_sub(1))
}

/// The three rows for the plan's deciding rank, with the plan's fraction given to each engine.
/// `None` for a plan with no ranks.
pub fn contrast(p: &Plan, unit: UnitSystem) -> Option<(u32, f64, Vec<EngineRow>)> {
    let r = p.ranks.get(rank(p))?;
    let a = |b: i128| human(b, unit);
    let get = |t: Term| r.line_bytes(t);
    let f = p.gpu_memory_utilization;
    let (total, pre, free0) = (
        get(Term::Total),
        get(Term::PreSnapshot),
        get(Term::FreeAtStart),
    );
    let weights = get(Term::Weights) + get(Term::Drafter);
    let (act, other) = (get(Term::Activation), get(Term::OtherConsumption));
    let tokens = |kv: i128| {
        (r.kv_bytes_per_token > 0 && kv > 0)
            .then(|| (kv as u128 / u128::from(r.kv_bytes_per_token)) as u64)
    };
    let times = |x: i128| (x as f64 * f) as i128;
    // vLLM: the plan's own figure (a pin replaces it; the formula says which).
    let vllm = r.available_kv;
    // vLLM: the plan's own line, its formula as the ledger writes it (a pin replaces the
    // fraction's sizing, and the formula says so).
    let formula = r
        .line(Term::AvailableKv)
        .map(|l| l.formula.to_string())
        .unwrap_or_default();
    let vllm_formula = format!("{formula} B, {}", a(vllm));
    let sglang = times(free0) - weights;
    let trt = times(total - pre - weights - act - other);
    let rows = vec![
        EngineRow {
            engine: "vLLM",
            knob: "--gpu-memory-utilization",
            of: "the GPU's total; everything the worker uses comes out of it, and the rest is the KV pool",
            formula: vllm_formula,
            kv_bytes: vllm,
            tokens: tokens(vllm),
            source: "vllm/v1/worker/gpu_worker.py::determine_available_memory (0.33.0)",
            provenance: r.line(Term::AvailableKv).map_or("estimate", |l| l.provenance.label()),
        },
        EngineRow {
            engine: "SGLang",
            knob: "--mem-fraction-static",
            of: "the memory free before the weights load; it bounds the weights plus the KV pool, and the rest is left for activations and CUDA graphs",
            formula: format!(
                "{} free before loading x {f} - {} weights = {}",
                a(free0),
                a(weights),
                a(sglang)
            ),
            kv_bytes: sglang,
            tokens: tokens(sglang),
            source: "sglang/srt/mem_cache/kv_cache_configurator.py::_profile_available_bytes (0.5.23)",
            provenance: "estimate",
        },
        EngineRow {
            engine: "TensorRT-LLM",
            knob: "free_gpu_memory_fraction",
            of: "the memory still free after the weights and the activation peak, at the time the KV cache is created",
            formula: format!(
                "({} total - {} in use before - {} weights - {} activation - {} other) x {f} = {}",
                a(total),
                a(pre),
                a(weights),
                a(act),
                a(other),
                a(trt)
            ),
            kv_bytes: trt,
            tokens: tokens(trt),
            source: "tensorrt_llm/_torch/pyexecutor/_util.py::KvCacheCreator._cal_max_memory",
            provenance: "estimate",
        },
    ];
    Some((r.rank, f, rows))
}

/// The rows' tokens in words.
pub fn tokens_text(t: Option<u64>) -> String {
    t.map_or("none".into(), |t| {
        format!("{} tokens", thousands(u128::from(t)))
    })
}
