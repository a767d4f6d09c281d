//! vLLM's own log lines, byte for byte where the figures are Headroom's: the process prefixes,
//! the CUDA-graph lines and the KV-cache-memory suggestion after graph capture.

use crate::calc::plan::*;
use crate::calc::scenario::Scenario;
use crate::calc::units::{py_fixed, py_float_str, GibText, GIB, MIB};
use crate::calc::version::VllmVersion;

/// The process a rank's log lines come from, as vLLM 0.33.0 names it
/// (`WorkerProc.setup_proc_title_and_log_prefix`, `logger._FORMAT`): one GPU runs the worker
/// inside the engine core ("uni" executor); more than one get a worker process each, named
/// `Worker` with `_DP`, `_PP`, `_TP` and `_EP` ranks where that dimension is larger than one.
/// This is DP rank 0's engine, and its EP rank is the TP rank.
pub(super) fn worker_prefix(s: &Scenario, r: &RankPlan) -> String {
    let p = &s.parallel;
    if u64::from(p.tp) * u64::from(p.pp) * u64::from(p.dp) <= 1 {
        return engine_prefix(s);
    }
    // Built by hand: a plan writes a dozen of these, and `write!` costs more than the rest.
    let mut name = String::with_capacity(32);
    name.push_str("(Worker");
    if p.dp > 1 {
        name.push_str("_DP0");
    }
    if p.pp > 1 {
        name.push_str("_PP");
        push_digits(&mut name, r.pp_rank);
    }
    if p.tp > 1 {
        name.push_str("_TP");
        push_digits(&mut name, r.tp_rank);
    }
    if p.expert_parallel {
        name.push_str("_EP");
        push_digits(&mut name, r.tp_rank);
    }
    name.push_str(" pid=P)");
    name
}

/// "prefix body", reusing the prefix's allocation (the bodies are long sentences).
pub(super) fn prefixed(mut prefix: String, body: &str) -> String {
    prefix.reserve(body.len() + 1);
    prefix.push(' ');
    prefix.push_str(body);
    prefix
}

/// Appends `n` in decimal.
pub(super) fn push_digits(out: &mut String, mut n: u32) {
    let mut buf = [0u8; 10];
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    for b in &buf[i..] {
        out.push(char::from(*b));
    }
}

/// The engine core's prefix: the scheduler side, which logs the pool's tokens and concurrency.
pub(super) fn engine_prefix(s: &Scenario) -> String {
    if s.parallel.dp > 1 {
        "(EngineCore_DP0 pid=P)"
    } else {
        "(EngineCore pid=P)"
    }
    .to_string()
}

/// vLLM 0.33.0's log of the graph capture it runs while profiling, to estimate the graphs it
/// subtracts inside the budget: Model Runner V2 (0.33.0's default) logs its `capture_model`'s
/// "Graph capturing finished in %.0f secs, took %.2f GiB" (V1's "Estimated CUDA graph memory"
/// line is not printed). The seconds are not known (N); the GiB are Headroom's graph figure.
/// Read from 0.33.0's source only, like the lines after it.
pub(super) fn graph_estimate_log(
    s: &Scenario,
    r: &RankPlan,
    last: &mut Option<(i128, String)>,
) -> Option<String> {
    // Log lines are the full page's: the first verdict's program prints none (`NOTES`).
    if !super::NOTES {
        return None;
    }
    let graphs = r.line(Term::CudaGraphs).map_or(0, |l| l.bytes);
    if s.version != VllmVersion::CURRENT || graphs <= 0 || s.engine.enforce_eager {
        return None;
    }
    // Stages with the same estimate share the figure's text.
    if !matches!(last, Some((g, _)) if *g == graphs) {
        *last = Some((graphs, py_fixed(graphs as f64 / GIB as f64, 2)));
    }
    let gib = &last.as_ref()?.1;
    let mut line = worker_prefix(s, r);
    line.reserve(48 + gib.len());
    line.push_str(" Graph capturing finished in N secs, took ");
    line.push_str(gib);
    line.push_str(" GiB");
    Some(line)
}

/// vLLM 0.33.0's `determine_available_memory` log when the CUDA graph estimate is subtracted
/// inside the budget (the default since 0.20.0): what the fraction would be without it. The
/// wording was read from 0.33.0's source only, so older releases do not print it here.
pub(super) fn graph_profiling_log(
    s: &Scenario,
    r: &RankPlan,
    util: f64,
    last: &mut Option<(i128, i128, String)>,
) -> Option<String> {
    if !super::NOTES {
        return None;
    }
    let graphs = r.line(Term::CudaGraphs).map_or(0, |l| l.bytes);
    if s.version != VllmVersion::CURRENT || graphs <= 0 || s.engine.enforce_eager {
        return None;
    }
    let total = r.line(Term::Total)?.bytes;
    // Stages alike in graphs and total print the same sentence: write it once.
    if !matches!(last, Some((g, t, _)) if *g == graphs && *t == total) {
        let delta = graphs as f64 / total as f64;
        // `%.4f` of `min(round(x, 4), 1.0)`: `%.4f` rounds the exact value once, as round()
        // does, and any x above 1 prints as 1.0000 either way.
        let suggested = py_fixed((util + delta).min(1.0), 4);
        *last = Some((
            graphs,
            total,
            format!(
                "CUDA graph memory profiling is enabled (default since v0.21.0). The current --gpu-memory-utilization={} is equivalent to --gpu-memory-utilization={} without CUDA graph memory profiling. To maintain the same effective KV cache size as before, increase --gpu-memory-utilization to {suggested}. To disable, set VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0.",
                py_fixed(util, 4),
                py_fixed(util - delta, 4),
            ),
        ));
    }
    last.as_ref()
        .map(|(_, _, body)| prefixed(worker_prefix(s, r), body))
}

/// vLLM's suggestion log keeps 150 MiB spare (`Worker._compile_or_warm_up_model`).
pub const SUGGESTION_MARGIN: u64 = 150 * MIB;

/// vLLM 0.33.0's suggestion after graph capture (`Worker.compile_or_warm_up_model`) for one
/// rank, in bytes. As coded, the graphs count twice: once in the peak (the estimate subtracted
/// inside the budget), once as captured. The plan's log line and `solve` both read it here.
pub(in crate::calc) struct Suggestion {
    /// Weights, drafter and other use (vLLM's "consumed memory (weights + non-torch)").
    pub consumed: i128,
    /// The activation peak plus the graph estimate applied inside the budget.
    pub peak: i128,
    pub graphs: i128,
    /// `--kv-cache-memory` "to fit into requested memory".
    pub to_requested: i128,
    /// `--kv-cache-memory` "to fully utilize gpu memory".
    pub to_gpu: i128,
}

// Never inlined: no link the first verdict is trained on calls it (DESIGN.md, "Rare code").
#[inline(never)]
pub(in crate::calc) fn vllm_suggestion(r: &RankPlan, eager: bool) -> Suggestion {
    let get = |t: Term| r.line(t).map_or(0, |l| l.bytes);
    let graphs = if eager { 0 } else { get(Term::CudaGraphs) };
    let consumed = get(Term::Weights) + get(Term::Drafter) + get(Term::OtherConsumption);
    let peak = get(Term::Activation) + graphs;
    let non_kv = consumed + peak + graphs;
    let margin = i128::from(SUGGESTION_MARGIN);
    Suggestion {
        consumed,
        peak,
        graphs,
        to_requested: get(Term::Budget) - non_kv - margin,
        to_gpu: get(Term::FreeAtStart) - non_kv - margin,
    }
}

/// The suggestion's log line, printed when the pool was profiled (no pin). Read from 0.33.0's
/// source only.
pub(super) fn suggestion_log(
    s: &Scenario,
    r: &RankPlan,
    util: f64,
    last: &mut Option<([i128; 7], String)>,
) -> Option<String> {
    if !super::NOTES {
        return None;
    }
    if s.version != VllmVersion::CURRENT || s.engine.kv_cache_memory_bytes.is_some() {
        return None;
    }
    let get = |t: Term| r.line(t).map_or(0, |l| l.bytes);
    let v = vllm_suggestion(r, s.engine.enforce_eager);
    let (free, total, requested) = (get(Term::FreeAtStart), get(Term::Total), get(Term::Budget));
    let key = [
        free,
        total,
        requested,
        v.consumed,
        v.peak,
        v.graphs,
        r.available_kv,
    ];
    // Stages alike in every figure (the middle ones) print the same sentence: write it once.
    if !matches!(last, Some((k, _)) if *k == key) {
        let g = GibText;
        let body = format!(
            "Free memory on device ({}/{} GiB) on startup. Desired GPU memory utilization is ({}, {} GiB). Actual usage is {} GiB for consumed memory (weights + non-torch), {} GiB for peak activation, and {} GiB for CUDAGraph memory. Replace gpu_memory_utilization config with `--kv-cache-memory={}` ({} GiB) to fit into requested memory, or `--kv-cache-memory={}` ({} GiB) to fully utilize gpu memory. Current kv cache memory in use is {} GiB.",
            g(free),
            g(total),
            py_float_str(util),
            g(requested),
            g(v.consumed),
            g(v.peak),
            g(v.graphs),
            v.to_requested,
            g(v.to_requested),
            v.to_gpu,
            g(v.to_gpu),
            g(r.available_kv)
        );
        *last = Some((key, body));
    }
    last.as_ref()
        .map(|(_, body)| prefixed(worker_prefix(s, r), body))
}
