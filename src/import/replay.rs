//! A startup log replayed against a plan: its `non-default args` as a launch command's flags,
//! and each reading set beside the figure Headroom predicts for it, with the difference, and
//! what the log implies on its own (labelled as derived). Predictions come from a plan made
//! without the log's measurements, so the comparison says how far Headroom's estimates are
//! from what the run printed.
//!
//! ```
//! use headroom::import::{log, replay};
//! let l = log::read("INFO 01-01 00:00:00 [utils.py:1] non-default args: {'model_tag': 'meta-llama/Llama-3.1-8B-Instruct', 'tensor_parallel_size': 2, 'enforce_eager': True}").unwrap();
//! let c = replay::args_command(&l).unwrap();
//! assert_eq!(c.model.as_deref(), Some("meta-llama/Llama-3.1-8B-Instruct"));
//! assert_eq!(c.flag("tensor_parallel_size").map(|v| v.to_string()).as_deref(), Some("2"));
//! assert_eq!(c.flag("enforce_eager").map(|v| v.to_string()).as_deref(), Some("true"));
//! ```

use super::command::{import, Form, Ignored, Imported};
use super::export::quote;
use super::log::{python_to_json, Log, Reading};
use crate::calc::input::Input;
use crate::calc::plan::{Plan, Provenance, RankPlan, Term};
use crate::calc::units::GIB;

/// The log's `non-default args` as a launch command's flags (vLLM's destination names, the
/// values as printed), read by the command importer one by one so that one value it cannot
/// read is listed as ignored instead of losing the rest. `None` without that line.
pub fn args_command(log: &Log) -> Option<Imported> {
    log.non_default_args_line?;
    let line = log.non_default_args_line.unwrap_or(0);
    let model = log
        .non_default_args
        .iter()
        .find(|(k, _)| k == "model_tag" || k == "model")
        .map(|(_, v)| unquote(v));
    let head = format!(
        "vllm serve {}",
        quote(model.as_deref().unwrap_or("the-model"))
    );
    let mut out = import(&head).ok()?;
    out.model = model;
    out.form = Form::Serve;
    for (dest, value) in &log.non_default_args {
        if dest == "model_tag" || dest == "model" {
            continue;
        }
        let flag = format!("--{dest}");
        let text = value.trim();
        let words = match text {
            "None" => continue,
            "True" => flag.clone(),
            "False" => format!("--no-{dest}"),
            t if t.starts_with(['{', '[', '(']) => {
                format!("{flag} {}", quote(&python_to_json(t)))
            }
            t => format!("{flag} {}", quote(&unquote(t))),
        };
        match import(&format!("{head} {words}")) {
            Ok(one) => {
                for mut f in one.flags {
                    f.line = line;
                    out.flags.retain(|g| g.dest != f.dest);
                    out.flags.push(f);
                }
                out.ignored.extend(one.ignored);
                out.notes.extend(one.notes);
            }
            Err(e) => out.ignored.push(Ignored {
                flag,
                dest: None,
                value: Some(text.to_string()),
                reason: format!("the log's value is not read: {}", e.message),
            }),
        }
    }
    Some(out)
}

/// The inputs a log measures (the weights, the available KV memory, the CUDA-graph estimate,
/// an init error's free memory); the others it gives (the release, an init error's
/// utilization) are settings, and hold for the prediction too.
pub fn is_measurement(i: Input) -> bool {
    matches!(
        i,
        Input::Weights | Input::AvailableKv | Input::CudaGraph | Input::Free
    )
}

/// What a log gives the page: the inputs of its `non-default args` (as a pasted command's),
/// its settings, and its measurements, each as Headroom's inputs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogInputs {
    pub command: Option<super::page::PageInputs>,
    pub settings: Vec<(Input, String)>,
    pub measured: Vec<(Input, String)>,
}

/// The page's inputs for a log (see [`LogInputs`]).
pub fn log_inputs(log: &Log) -> LogInputs {
    let (measured, settings) = log
        .inputs()
        .into_iter()
        .partition(|(i, _)| is_measurement(*i));
    LogInputs {
        command: args_command(log).map(|c| c.page_inputs()),
        settings,
        measured,
    }
}

/// The measured terms of `s` that hold a figure of the log get the log as their source
/// ("read from the log, line 4: Available KV cache memory 54.2 GiB"), so every figure planned
/// from them says where it came from. A term given otherwise (a flag beside the log, a value
/// typed over it) keeps its own source: only a term whose bytes are the log's is cited.
pub fn cite(log: &Log, s: &mut crate::calc::scenario::Scenario) {
    use crate::calc::scenario::Measured;
    let gib = |v: f64| (v * GIB as f64).round() as u64;
    let source = |key: &str, bytes: u64| -> Option<String> {
        log.all(key).find_map(|r| {
            let (b, what) = match key {
                "init_error" => (
                    r.field("free").map(gib)?,
                    format!("free memory {} GiB in the init error", r.field("free")?),
                ),
                "capacity_error" => (
                    r.field("available").map(gib)?,
                    format!(
                        "available KV cache memory {} GiB in the capacity error",
                        r.field("available")?
                    ),
                ),
                _ => (r.bytes()?, format!("{} {} {}", label(key), r.value, r.unit)),
            };
            (b == bytes).then(|| format!("read from the log, line {}: {what}", r.line))
        })
    };
    let cite_one = |m: &mut Option<Measured>, keys: &[&str]| {
        if let Some(m) = m.as_mut() {
            if let Some(src) = keys.iter().find_map(|k| source(k, m.bytes.0)) {
                m.source = src;
            }
        }
    };
    let rt = &mut s.runtime;
    cite_one(&mut rt.weights, &["model_loading"]);
    cite_one(
        &mut rt.available_kv,
        &["available_kv_cache", "capacity_error"],
    );
    cite_one(&mut rt.cuda_graph, &["cuda_graph_estimate"]);
    cite_one(&mut rt.free_memory, &["init_error"]);
    for list in [&mut rt.weights_per_stage, &mut rt.available_kv_per_stage] {
        for m in list.iter_mut().flatten() {
            cite_one(
                m,
                &["model_loading", "available_kv_cache", "capacity_error"],
            );
        }
    }
}

/// A reading's key as vLLM's line words it.
fn label(key: &str) -> &'static str {
    match key {
        "model_loading" => "Model loading took",
        "available_kv_cache" => "Available KV cache memory:",
        "cuda_graph_estimate" => "Estimated CUDA graph memory:",
        _ => "",
    }
}

/// A Python string literal's text (`'abc'` gives `abc`); any other text as it is.
fn unquote(v: &str) -> String {
    let v = v.trim();
    let q = v.chars().next();
    if matches!(q, Some('\'' | '"')) && v.len() >= 2 && v.ends_with(q.unwrap_or(' ')) {
        v[1..v.len() - 1].replace("\\'", "'").replace("\\\"", "\"")
    } else {
        v.to_string()
    }
}

/// One figure the log printed, beside Headroom's prediction for it.
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    /// What the figure is: the reading's key (`model_loading`, `available_kv_cache`, ...), or
    /// the key and its field (`capacity_error.available`).
    pub figure: String,
    /// The unit both numbers are in: the log's (`GiB`, `tokens`, `x`, `blocks`).
    pub unit: &'static str,
    /// Headroom's figure, `None` when the plan stopped before the phase that prints it.
    pub predicted: Option<f64>,
    pub measured: f64,
    /// `measured - predicted`.
    pub difference: Option<f64>,
    pub line: usize,
    /// The plan's rank the figure is compared on (`None`: an engine-wide figure).
    pub rank: Option<u32>,
    /// How certain the prediction is: the plan's own provenance of the figure (an estimate
    /// when it rests on one), `None` without a prediction.
    pub provenance: Option<Provenance>,
}

impl Comparison {
    /// The difference as a share of the prediction, when there is one to divide by.
    pub fn relative(&self) -> Option<f64> {
        let p = self.predicted.filter(|p| *p != 0.0)?;
        Some(self.difference? / p)
    }
}

/// A figure the log implies but does not print, and how it was worked out.
#[derive(Clone, Debug, PartialEq)]
pub struct Derived {
    pub figure: &'static str,
    pub value: f64,
    pub unit: &'static str,
    pub from: String,
}

/// The plan's rank a log line came from: `rank=N`, or `PPi` and `TPj` in the process name
/// (rank `i x tp + j`), or `TPj` alone; `None` when the prefix names no worker.
pub fn rank_of(label: Option<&str>, tp: u32) -> Option<u32> {
    let label = label?;
    let number_after = |tag: &str| super::log::label_number(label, tag);
    if let Some(r) = number_after("rank=") {
        return Some(r);
    }
    let tp_rank = number_after("TP");
    match (number_after("PP"), tp_rank) {
        (Some(pp), Some(t)) => pp.checked_mul(tp)?.checked_add(t),
        (None, Some(t)) => Some(t),
        (Some(pp), None) => pp.checked_mul(tp),
        (None, None) => None,
    }
}

fn gib(b: i128) -> f64 {
    b as f64 / GIB as f64
}

/// Rounds to the printed precision's neighbourhood, so that differences read as printed.
fn round4(x: f64) -> f64 {
    (x * 10_000.0).round() / 10_000.0
}

/// Each reading the plan predicts, beside the prediction: the weights and available KV memory
/// of the rank the line came from (rank 0 when the line names none), the CUDA-graph figures,
/// the token, concurrency and block figures of the replica, and the figures in an init or
/// capacity error. `predicted` is the plan made without the log's measurements.
pub fn compare(log: &Log, predicted: &Plan) -> Vec<Comparison> {
    let mut out = Vec::new();
    let rank_plan = |r: &Reading| -> (Option<u32>, Option<&RankPlan>) {
        let at = rank_of(r.rank.as_deref(), predicted.tp).unwrap_or(0);
        (Some(at), predicted.ranks.get(at as usize))
    };
    let smallest = predicted.ranks.iter().min_by_key(|r| r.available_kv);
    let replica = predicted.replica.as_ref();
    let v0 = v0_replay(log, predicted);
    // vLLM 0.10.2 and 0.11.0 print each worker's own pool (before the minimum), in worker
    // order, under the engine's prefix: the n-th line is worker n's.
    let per_worker =
        !predicted.version.shrinks_kv_tensors() && log.all("gpu_kv_cache_tokens").count() > 1;
    let (mut token_line, mut conc_line) = (0usize, 0usize);
    let own = |n: usize| -> Option<(f64, f64)> {
        let (p, r) = (replica?, predicted.ranks.get(n)?);
        Some((
            (r.num_blocks_own * p.block_size) as f64,
            r.num_blocks_own as f64 / p.blocks_per_request.max(1) as f64,
        ))
    };
    for r in &log.readings {
        let mut push = |figure: String, unit: &'static str, pred: Option<f64>, meas: f64, rank| {
            let pred = pred.map(round4);
            out.push(Comparison {
                figure,
                unit,
                predicted: pred,
                measured: meas,
                difference: pred.map(|p| round4(meas - p)),
                line: r.line,
                rank,
                provenance: None,
            });
        };
        match r.key {
            "model_loading" => {
                let (at, rp) = rank_plan(r);
                // vLLM's figure counts the drafter on the last stage (the planner's own line).
                push(
                    r.key.into(),
                    r.unit,
                    rp.map(|p| gib(i128::from(p.weights.0) + p.line_bytes(Term::Drafter))),
                    r.value,
                    at,
                );
            }
            "available_kv_cache" => {
                let (at, rp) = rank_plan(r);
                let ran = predicted.replica.is_some() || rp.is_some_and(|p| p.available_kv != 0);
                push(
                    r.key.into(),
                    r.unit,
                    rp.filter(|_| ran).map(|p| gib(p.available_kv)),
                    r.value,
                    at,
                );
            }
            "cuda_graph_estimate" | "cuda_graph_actual" => {
                let (at, rp) = rank_plan(r);
                let g = rp
                    .and_then(|p| p.line(Term::CudaGraphs))
                    .map(|l| gib(l.bytes));
                if r.unit == "GiB" {
                    push(r.key.into(), r.unit, g, r.value, at);
                }
            }
            "gpu_kv_cache_tokens" if per_worker => {
                token_line += 1;
                let n = token_line - 1;
                push(
                    r.key.into(),
                    r.unit,
                    own(n).map(|o| o.0),
                    r.value,
                    Some(n as u32),
                );
            }
            "gpu_kv_cache_tokens" => push(
                r.key.into(),
                r.unit,
                replica.map(|p| p.kv_cache_tokens as f64),
                r.value,
                None,
            ),
            "max_concurrency" => {
                let same_len = r
                    .field("tokens_per_request")
                    .zip(replica)
                    .is_some_and(|(t, p)| t == p.max_model_len as f64);
                if per_worker {
                    conc_line += 1;
                    let n = conc_line - 1;
                    push(
                        r.key.into(),
                        r.unit,
                        own(n).filter(|_| same_len).map(|o| o.1),
                        r.value,
                        Some(n as u32),
                    );
                } else {
                    push(
                        r.key.into(),
                        r.unit,
                        replica.filter(|_| same_len).map(|p| p.max_concurrency),
                        r.value,
                        None,
                    );
                }
                if let Some(t) = r.field("tokens_per_request") {
                    push(
                        "max_concurrency.tokens_per_request".into(),
                        "tokens",
                        replica.map(|p| p.max_model_len as f64),
                        t,
                        None,
                    );
                }
            }
            // A V0 log: the blocks its own printed profile gives (V1's pool is another engine's).
            "num_gpu_blocks" if v0.is_some() => push(
                "num_gpu_blocks.v0_replay".into(),
                r.unit,
                v0.map(|v| v.blocks as f64),
                r.value,
                None,
            ),
            "num_gpu_blocks" => push(
                r.key.into(),
                r.unit,
                replica.map(|p| p.num_blocks as f64),
                r.value,
                None,
            ),
            "capacity_error" => {
                if let Some(a) = r.field("available") {
                    push(
                        "capacity_error.available".into(),
                        "GiB",
                        smallest.map(|p| gib(p.available_kv)),
                        a,
                        smallest.map(|p| p.rank),
                    );
                }
            }
            "init_error" => {
                let rp = predicted.ranks.first();
                let term = |t: Term| rp.and_then(|p| p.line(t)).map(|l| gib(l.bytes));
                for (field, t) in [
                    ("free", Term::FreeAtStart),
                    ("total", Term::Total),
                    ("requested", Term::Budget),
                ] {
                    if let Some(v) = r.field(field) {
                        push(format!("init_error.{field}"), "GiB", term(t), v, Some(0));
                    }
                }
            }
            _ => {}
        }
    }
    for c in &mut out {
        c.provenance = c
            .predicted
            .and_then(|_| predicted_provenance(predicted, &c.figure, c.rank));
    }
    out
}

/// The plan's provenance of a compared figure: its ledger line's on the rank, the replica's
/// for the pool's figures; a V0 replay rests on the log's own profile.
fn predicted_provenance(p: &Plan, figure: &str, rank: Option<u32>) -> Option<Provenance> {
    let line = |t: Term| {
        p.ranks
            .get(rank.unwrap_or(0) as usize)
            .and_then(|r| r.line(t))
            .map(|l| l.provenance.clone())
    };
    match figure {
        "model_loading" => line(Term::Weights),
        "available_kv_cache" | "capacity_error.available" => line(Term::AvailableKv),
        "cuda_graph_estimate" | "cuda_graph_actual" => line(Term::CudaGraphs),
        "init_error.free" => line(Term::FreeAtStart),
        "init_error.total" => line(Term::Total),
        "init_error.requested" => line(Term::Budget),
        "max_concurrency.tokens_per_request" => Some(Provenance::Exact),
        "num_gpu_blocks.v0_replay" => Some(Provenance::Measured(
            "the log's own Memory profiling terms, in blocks of the plan's layout".into(),
        )),
        _ => p.replica.as_ref().map(|r| r.provenance.clone()),
    }
}

/// The V0 engine's pool replayed from a log's `Memory profiling` terms: the KV share it
/// printed (else the budget less the weights, the activation peak and the non-torch memory it
/// printed), in blocks of the plan's layout. The V0 `Worker.determine_num_available_blocks`
/// (read in vLLM 0.8.5 and 0.9.2): `num_gpu_blocks = int(available_kv_cache_memory //
/// cache_block_size)`, with
/// `CacheEngine.get_cache_block_size` = block size x KV heads x head size x 2 (K and V) x dtype
/// bytes x layers, which is a V1 full-attention group's bytes per block.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct V0Replay {
    /// The KV share, GiB as printed (or worked out from the printed terms).
    pub kv_gib: f64,
    pub bytes_per_block: u64,
    pub blocks: u64,
    /// How many blocks the printed precision (0.005 GiB) leaves open either way.
    pub spread: u64,
    pub line: usize,
}

/// [`V0Replay`] for the log's first profile, when the plan has one full-attention group.
pub fn v0_replay(log: &Log, predicted: &Plan) -> Option<V0Replay> {
    let r = log.all("memory_profiling").next()?;
    let kv = r
        .field("kv_cache_size")
        .or(r.field("available_kv_cache_memory"))
        .or_else(|| {
            let budget = r.field("budget")?;
            Some(
                budget
                    - r.field("model_weights")?
                    - r.field("activation_peak")?
                    - r.field("non_torch_memory")?,
            )
        })?;
    let p = predicted.replica.as_ref().filter(|p| p.groups.len() == 1)?;
    let bpb = predicted
        .ranks
        .get(p.limiting_rank as usize)?
        .bytes_per_block;
    if bpb == 0 || kv < 0.0 {
        return None;
    }
    let gib = GIB as f64;
    Some(V0Replay {
        kv_gib: kv,
        bytes_per_block: bpb,
        blocks: (kv * gib / bpb as f64).floor() as u64,
        spread: (0.005 * gib / bpb as f64).ceil() as u64,
        line: r.line,
    })
}

/// What the log implies on its own: the KV bytes a token costs (the pool over its tokens),
/// the blocks the pool holds (its tokens over the block size the plan resolved), and the
/// non-KV use besides the weights (the budget, less the weights and the pool the log shows).
pub fn derived(log: &Log, predicted: &Plan) -> Vec<Derived> {
    let mut out = Vec::new();
    if let Some(v) = v0_replay(log, predicted) {
        out.push(Derived {
            figure: "v0_num_gpu_blocks",
            value: v.blocks as f64,
            unit: "blocks",
            from: format!(
                "the V0 profile's KV share {:.2} GiB (line {}) over {} B per block of the plan's layout, as V0's determine_num_available_blocks divides; the printed precision leaves ±{} blocks",
                v.kv_gib, v.line, v.bytes_per_block, v.spread
            ),
        });
    }
    let first = |key: &str| log.all(key).next();
    let kv = first("available_kv_cache");
    let tokens = first("gpu_kv_cache_tokens");
    if let (Some(k), Some(t)) = (kv, tokens) {
        if let (Some(b), true) = (k.bytes(), t.value > 0.0) {
            out.push(Derived {
                figure: "kv_bytes_per_token",
                value: (b as f64 / t.value).floor(),
                unit: "B",
                from: format!(
                    "available KV memory (line {}) over the pool's tokens (line {}); the pool is a whole number of blocks, so this is an upper bound",
                    k.line, t.line
                ),
            });
        }
    }
    if let (Some(t), Some(p)) = (tokens, predicted.replica.as_ref()) {
        if p.groups.len() == 1 && p.block_size > 0 {
            out.push(Derived {
                figure: "num_blocks",
                value: (t.value / p.block_size as f64).floor(),
                unit: "blocks",
                from: format!(
                    "the pool's tokens (line {}) over the block size {} the plan resolved",
                    t.line, p.block_size
                ),
            });
        }
    }
    let w = first("model_loading");
    if let (Some(w), Some(k), Some(r0)) = (w, kv, predicted.ranks.first()) {
        if let (Some(wb), Some(kb)) = (w.bytes(), k.bytes()) {
            let rest = i128::from(r0.budget.0) - i128::from(wb) - i128::from(kb);
            let what = if predicted.version.graphs_inside_budget() {
                "the activation peak, other consumption and the CUDA-graph estimate"
            } else {
                "the activation peak and other consumption"
            };
            out.push(Derived {
                figure: "non_kv_besides_weights",
                value: round4(gib(rest)),
                unit: "GiB",
                from: format!(
                    "the budget ({:.2} GiB) less the weights (line {}) and the available KV memory (line {}): {what}",
                    gib(i128::from(r0.budget.0)),
                    w.line,
                    k.line
                ),
            });
        }
    }
    out
}
