//! Diagnose from a symptom: a symptom picked or an error text pasted, read against the live
//! scenario, becomes the phase it points to, what that evidence proves and what it does not,
//! which knob to move in which direction with this scenario's numbers (the solvers' answers),
//! and the observation that would disprove the diagnosis.
//!
//! The skill the seed articles teach: find the phase that failed and the knob that acts there,
//! instead of moving a flag blindly. Every sentence here reads the plan, a solver or the pasted
//! text's own numbers (through the log reader, `import::log`); none is fixed prose about a
//! figure.

use crate::calc::plan::{Phase, Plan, Term};
use crate::calc::scenario::{KvCacheDtype, Scenario};
use crate::calc::solve;
use crate::calc::timeline::StartPhase;
use crate::calc::units::{thousands, UnitSystem};
use crate::calc::{self, Input};
use crate::import::log::Log;

/// What a user saw. Each points to one phase of the start (or to none: `cuInit` fails before
/// vLLM plans anything; preemption happens while serving).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Symptom {
    /// "Free memory on device ... on startup is less than desired GPU memory utilization".
    InitFree,
    /// A CUDA out-of-memory error while the weights load.
    OomLoad,
    /// A CUDA out-of-memory error in the profile run.
    OomProfile,
    /// "No available memory for the cache blocks".
    NoCacheBlocks,
    /// "To serve at least one request with the model's max seq len ..." (and V0's "The model's
    /// max seq len ... is larger than the maximum number of tokens that can be stored in KV
    /// cache", and 0.14's auto-fit refusal).
    Capacity,
    /// A CUDA out-of-memory error while the pool is allocated or the CUDA graphs captured.
    OomGraphs,
    /// Requests preempted under load.
    Preemption,
    /// `NV_ERR_NO_MEMORY` on a unified-memory box (GB10, Grace).
    NvErrNoMemory,
    /// `cuInit` fails (or `cudaGetDeviceCount`) while `nvidia-smi` looks fine.
    CuInit,
    /// Two configurations with different budgets fail at the same place (seed 000).
    SameFailureTwoBudgets,
}

impl Symptom {
    pub const ALL: [Symptom; 10] = [
        Symptom::InitFree,
        Symptom::OomLoad,
        Symptom::OomProfile,
        Symptom::NoCacheBlocks,
        Symptom::Capacity,
        Symptom::OomGraphs,
        Symptom::Preemption,
        Symptom::NvErrNoMemory,
        Symptom::CuInit,
        Symptom::SameFailureTwoBudgets,
    ];

    /// A stable key (the page's choice values).
    pub fn key(self) -> &'static str {
        match self {
            Symptom::InitFree => "init-free-memory",
            Symptom::OomLoad => "oom-loading",
            Symptom::OomProfile => "oom-profiling",
            Symptom::NoCacheBlocks => "no-cache-blocks",
            Symptom::Capacity => "to-serve-one-request",
            Symptom::OomGraphs => "oom-graph-capture",
            Symptom::Preemption => "preemption",
            Symptom::NvErrNoMemory => "nv-err-no-memory",
            Symptom::CuInit => "cuinit",
            Symptom::SameFailureTwoBudgets => "same-failure-two-budgets",
        }
    }

    pub fn from_key(key: &str) -> Option<Symptom> {
        Symptom::ALL.into_iter().find(|s| s.key() == key)
    }

    /// The symptom as a user would name it.
    pub fn label(self) -> &'static str {
        match self {
            Symptom::InitFree => {
                "\"Free memory on device ... is less than desired GPU memory utilization\""
            }
            Symptom::OomLoad => "CUDA out of memory while loading the weights",
            Symptom::OomProfile => "CUDA out of memory in the profile run",
            Symptom::NoCacheBlocks => "\"No available memory for the cache blocks\"",
            Symptom::Capacity => {
                "\"To serve at least one request with the model's max seq len ...\""
            }
            Symptom::OomGraphs => "CUDA out of memory during CUDA graph capture",
            Symptom::Preemption => "Requests preempted under load",
            Symptom::NvErrNoMemory => "NV_ERR_NO_MEMORY on unified memory (GB10, Grace)",
            Symptom::CuInit => "cuInit fails while nvidia-smi looks fine",
            Symptom::SameFailureTwoBudgets => {
                "Two configurations with different budgets fail at the same place"
            }
        }
    }

    /// The start phase the symptom points to.
    pub fn phase(self) -> Option<StartPhase> {
        match self {
            Symptom::InitFree => Some(StartPhase::InitCheck),
            Symptom::OomLoad => Some(StartPhase::LoadWeights),
            Symptom::OomProfile => Some(StartPhase::Profile),
            Symptom::NoCacheBlocks => Some(StartPhase::KvSizing),
            Symptom::Capacity => Some(StartPhase::Capacity),
            Symptom::OomGraphs | Symptom::NvErrNoMemory => Some(StartPhase::Allocation),
            Symptom::Preemption => Some(StartPhase::Serving),
            Symptom::CuInit | Symptom::SameFailureTwoBudgets => None,
        }
    }
}

/// The longest error text read (bytes): a traceback is a few KiB; a whole log is read by the
/// log import instead.
pub const MAX_TEXT: usize = 1 << 20;

/// A pasted error text matched to a symptom, in any release's wording; or why not.
pub fn recognise(text: &str) -> Result<Symptom, String> {
    if text.len() > MAX_TEXT {
        return Err(format!(
            "the text is {} bytes, over the {} a pasted error may have; paste the error and the traceback's last lines",
            thousands(text.len() as u128),
            thousands(MAX_TEXT as u128)
        ));
    }
    let t = text.to_ascii_lowercase();
    let has = |needles: &[&str]| needles.iter().any(|n| t.contains(n));
    if t.trim().is_empty() {
        return Err("the text is empty: paste vLLM's error, or pick a symptom".into());
    }
    if has(&["nv_err_no_memory"]) {
        return Ok(Symptom::NvErrNoMemory);
    }
    if has(&[
        "cuinit",
        "cuda driver initialization failed",
        "unexpected error from cudagetdevicecount",
        "cuda_error_not_initialized",
        "no cuda gpus are available",
    ]) {
        return Ok(Symptom::CuInit);
    }
    if has(&["is less than desired gpu memory utilization"]) {
        return Ok(Symptom::InitFree);
    }
    if has(&["no available memory for the cache blocks"]) {
        return Ok(Symptom::NoCacheBlocks);
    }
    if has(&[
        "to serve at least one request with the model",
        "can be stored in kv cache",
        "cannot auto-fit max_model_len",
    ]) {
        return Ok(Symptom::Capacity);
    }
    if has(&["preempted", "preemption"]) {
        return Ok(Symptom::Preemption);
    }
    if has(&[
        "out of memory",
        "outofmemoryerror",
        "cuda_error_out_of_memory",
    ]) {
        // The traceback's function names place the OOM: capture before the profile (the
        // capture's dummy runs share the profile's functions), then loading.
        if has(&[
            "capture_model",
            "cudagraph",
            "cuda_graph",
            "cuda graph",
            "graph capture",
            "capturing",
        ]) {
            return Ok(Symptom::OomGraphs);
        }
        if has(&[
            "profile_run",
            "determine_available_memory",
            "determine_num_available_blocks",
            "_dummy_sampler_run",
            "dummy_run",
            "profile",
        ]) {
            return Ok(Symptom::OomProfile);
        }
        if has(&[
            "load_model",
            "load_weights",
            "model_loader",
            "loading weights",
            "loading safetensors",
            "weight_loader",
            "create_weights",
            "linear weights",
        ]) {
            return Ok(Symptom::OomLoad);
        }
        if has(&[
            "initialize_kv_cache",
            "_allocate_kv_cache",
            "kv_cache_tensors",
            "allocate_kv",
        ]) {
            return Ok(Symptom::OomGraphs);
        }
        return Err("a CUDA out-of-memory error, but the text does not say in which phase: paste the traceback's lines with the function names (load_model, profile_run, capture_model), or pick the phase from the list".into());
    }
    Err("no vLLM start-up error Headroom knows is in the text (the init free-memory check, an OOM with its traceback, \"No available memory for the cache blocks\", \"To serve at least one request ...\", preemption, NV_ERR_NO_MEMORY, cuInit): pick a symptom from the list".into())
}

/// A diagnosis: every sentence with the scenario's numbers.
#[derive(Clone, Debug, PartialEq)]
pub struct Diagnosis {
    pub symptom: Symptom,
    /// The phase, in words (`None` for a symptom before any phase).
    pub phase: Option<StartPhase>,
    pub phase_name: &'static str,
    /// What the evidence proves.
    pub proves: String,
    /// What it does not.
    pub not_proved: String,
    /// The knobs to move, each with its direction and this scenario's numbers.
    pub moves: Vec<String>,
    /// The observation that would disprove the diagnosis.
    pub disproof: String,
    /// How the scenario as entered compares: does it fail at the same phase?
    pub scenario: String,
    /// The figures the pasted text carries, as read.
    pub pasted: Vec<String>,
}

/// The phase's name in a sentence.
pub fn phase_name(p: Option<StartPhase>) -> &'static str {
    match p {
        Some(StartPhase::InitCheck) => "the init check (request_memory)",
        Some(StartPhase::LoadWeights) => "loading the weights (load_model)",
        Some(StartPhase::Profile) => "the profile run (profile_run)",
        Some(StartPhase::KvSizing) => "KV cache sizing (determine_available_memory)",
        Some(StartPhase::Capacity) => "the capacity check (_check_enough_kv_cache_memory)",
        Some(StartPhase::Allocation) => "allocating the pool and capturing CUDA graphs",
        Some(StartPhase::Serving) => "serving (the scheduler)",
        None => "before any memory phase",
    }
}

/// The figures a pasted text carries, through the log reader: the init error's free, total and
/// requested memory, the capacity error's need and pool, the log's available KV memory.
fn pasted_figures(log: &Log) -> Vec<String> {
    let mut out = Vec::new();
    for r in &log.readings {
        match r.key {
            "init_error" => {
                let (free, total, req, u) = (
                    r.field("free").unwrap_or(0.0),
                    r.field("total").unwrap_or(0.0),
                    r.field("requested").unwrap_or(0.0),
                    r.field("utilization").unwrap_or(0.0),
                );
                out.push(format!(
                    "free at start {free} {unit} of {total} {unit}; {u} of it asked for is {req} {unit}, so other processes held {:.2} {unit} (line {})",
                    total - free,
                    r.line,
                    unit = r.unit
                ));
            }
            "capacity_error" => out.push(format!(
                "one request of {} tokens needs {} GiB of KV; the pool had {} GiB{} (line {})",
                r.field("max_seq_len").unwrap_or(0.0),
                r.field("needed").unwrap_or(0.0),
                r.field("available").unwrap_or(0.0),
                r.field("estimated_max_model_len")
                    .map(|e| format!("; vLLM estimates {e} tokens fit"))
                    .unwrap_or_default(),
                r.line
            )),
            "v0_capacity_error" => out.push(format!(
                "max seq len {} against {} tokens of KV cache (line {})",
                r.field("max_seq_len").unwrap_or(0.0),
                r.field("kv_tokens").unwrap_or(0.0),
                r.line
            )),
            "available_kv_cache" | "model_loading" => out.push(format!(
                "{} {} {} (line {})",
                if r.key == "model_loading" {
                    "Model loading took"
                } else {
                    "Available KV cache memory"
                },
                r.value,
                r.unit,
                r.line
            )),
            _ => {}
        }
    }
    out
}

/// The smallest `--gpu-memory-utilization` (to 4 decimals) at which the start gets past
/// `phase`, or `None`: a bisection on the plan itself, up to the largest fraction the init
/// check lets through (free at the snapshot over the total, on the tightest rank); below it a
/// larger budget never stops a start earlier.
fn smallest_utilization_past(s: &Scenario, phase: StartPhase) -> Option<f64> {
    let past = |u: u32| {
        let mut t = s.clone();
        t.engine.gpu_memory_utilization = Some(f64::from(u) / 10_000.0);
        t.engine.kv_cache_memory_bytes = None;
        calc::plan(&t).is_ok_and(|p| p.stopped_at.map_or(true, |st| st > phase))
    };
    let base = calc::plan(s).ok()?;
    let top = base
        .ranks
        .iter()
        .map(|r| {
            let total = r.line_bytes(Term::Total).max(1) as f64;
            (r.line_bytes(Term::FreeAtStart) as f64 / total * 10_000.0).floor() as u32
        })
        .min()?
        .clamp(1, 10_000);
    if !past(top) {
        return None;
    }
    let (mut lo, mut hi) = (1u32, top);
    while lo < hi {
        let mid = (lo + hi) / 2;
        if past(mid) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    Some(f64::from(lo) / 10_000.0)
}

/// The diagnosis of `symptom` against the scenario `s` and its plan. `pasted` is the pasted
/// text as the log reader read it, when there is one.
pub fn diagnose(
    symptom: Symptom,
    s: &Scenario,
    plan: &Plan,
    pasted: Option<&Log>,
    unit: UnitSystem,
) -> Diagnosis {
    let a = |b: i128| calc::units::human(b, unit);
    let phase = symptom.phase();
    // The rank to read: the one the failing check names, else the deciding one.
    let rank = plan.deciding_rank().unwrap_or(0) as usize;
    let r = &plan.ranks[rank.min(plan.ranks.len().saturating_sub(1))];
    let get = |t: Term| r.line_bytes(t);
    let util = plan.gpu_memory_utilization;
    // Whether the scenario as entered stops at the symptom's phase: the sentences say "here"
    // only then, and otherwise that the machine differs from the scenario.
    let fails_here = phase.is_some() && plan.stopped_at == phase;
    let (proves, not_proved, moves, disproof): (String, String, Vec<String>, String) = match symptom {
        Symptom::InitFree => {
            let free = get(Term::FreeAtStart);
            let total = get(Term::Total);
            // The pasted error's own free and total where it has them: the machine's figures.
            let read = pasted.and_then(|l| l.readings.iter().find(|r| r.key == "init_error"));
            let (f, t, whose) = match read.and_then(|r| Some((r.field("free")?, r.field("total")?))) {
                Some((f, t)) if t > 0.0 => (f, t, "the error's free / total"),
                _ => (free as f64, total.max(1) as f64, "free / total here"),
            };
            let most = (f / t * 100.0).floor() / 100.0;
            let here = if fails_here {
                format!("Here: {} free of {}, against a budget of {}.", a(free), a(total), a(get(Term::Budget)))
            } else {
                format!("Here the check passes ({} free of {}, a budget of {}): the machine had less free than the scenario assumes.", a(free), a(total), a(get(Term::Budget)))
            };
            (
                format!(
                    "At vLLM's first snapshot, before anything loads, the free memory on a GPU was below the budget ceil(total x the fraction). {here}"
                ),
                "Nothing about the model: no weight, KV cache or max-model-len is read yet. A smaller model or a shorter context would fail the same way.".into(),
                vec![
                    format!("Lower --gpu-memory-utilization to at most {most:.2} ({whose}), which shrinks the KV pool by the same share of the GPU; or"),
                    format!("free the GPU: {} is in use before vLLM starts here (CUDA context, NCCL, other processes); stop the other processes on it.", a(get(Term::PreSnapshot))),
                ],
                "If nvidia-smi shows the GPU nearly empty right before the launch and the error persists, something starts on it in between (another replica, a previous engine still exiting), or the process sees another device (CUDA_VISIBLE_DEVICES).".into(),
            )
        }
        Symptom::OomLoad => {
            let need = i128::from(r.load_need.0);
            let mut more_tp = s.clone();
            more_tp.parallel.tp = s.parallel.tp * 2;
            more_tp.gpus = more_tp.gpus.max(more_tp.parallel.tp * s.parallel.pp * s.parallel.dp);
            let tp_line = match calc::plan(&more_tp) {
                Ok(p) => {
                    let w = p.ranks.iter().map(|r| r.load_need.0).max().unwrap_or(0);
                    format!(
                        "More tensor parallelism: at --tensor-parallel-size {} a rank loads {} (now {}){}.",
                        more_tp.parallel.tp,
                        a(i128::from(w)),
                        a(need),
                        if p.ranks.iter().all(|r| r.load_headroom >= 0) { ", which fits" } else { ", still too much" }
                    )
                }
                Err(e) => format!("More tensor parallelism: --tensor-parallel-size {} is refused here ({e}); add pipeline stages instead (--pipeline-parallel-size), which split the layers.", more_tp.parallel.tp),
            };
            (
                format!(
                    "The weights (with any load-time transient) did not fit in the physical free memory: rank {} needs {} while loading and has {} free.",
                    r.rank, a(need), a(get(Term::FreeAtStart))
                ),
                format!("Anything about --gpu-memory-utilization ({util} here): it does not cap loading, so raising or lowering it changes nothing in this phase. Nor max-model-len or the KV cache, which come later."),
                vec![
                    tp_line,
                    "Or a quantized checkpoint (fp8, AWQ / GPTQ int4), or --pipeline-parallel-size to split the layers.".into(),
                ],
                "If the log printed \"Model loading took X GiB\" before the error, loading finished: the OOM is in the profile run or the graph capture, not here.".into(),
            )
        }
        Symptom::OomProfile => {
            let act = get(Term::Activation);
            let mnbt = plan.settings.max_num_batched_tokens.value;
            (
                format!(
                    "The profile run's batch of {} tokens did not fit on top of the weights: its activation peak is about {} here, on {} of weights and {} of other use.",
                    thousands(u128::from(mnbt)), a(act), a(get(Term::Weights)), a(get(Term::OtherConsumption))
                ),
                "Anything about the KV cache: it is sized after this run and not allocated yet; max-model-len and max-num-seqs do not size it.".into(),
                vec![format!(
                    "Lower --max-num-batched-tokens from {} to {}: the activation falls roughly with it (to about {}).",
                    thousands(u128::from(mnbt)), thousands(u128::from((mnbt / 2).max(1))), a(act / 2)
                )],
                "If the log printed \"Available KV cache memory\" before the error, the profile run finished: the OOM came while the pool was allocated or the graphs captured.".into(),
            )
        }
        Symptom::NoCacheBlocks => {
            let past = smallest_utilization_past(s, StartPhase::KvSizing);
            let u_for_one = solve::smallest_utilization_for(s, 1).ok().flatten();
            let pin = solve::largest_kv_pin(s).unwrap_or(0);
            let mut moves = vec![match (past, u_for_one) {
                (Some(u), _) if !fails_here || u <= util => format!("At {util} KV sizing finds blocks here (it does from {u}): the machine's weights or other use are larger than the scenario's. Enter its figures (a startup log: \"Model loading took\", \"Available KV cache memory\"), or raise --gpu-memory-utilization above {util}."),
                (Some(u), Some(one)) if one > u => format!("Raise --gpu-memory-utilization from {util} to at least {u}, where KV sizing finds blocks ({one} holds one full-length request)."),
                (Some(u), _) => format!("Raise --gpu-memory-utilization from {util} to at least {u}, where KV sizing finds blocks."),
                (None, _) => "No --gpu-memory-utilization the init check lets through leaves room here: the weights, other use and activation take the whole budget; move what acts on them (TP, PP, quantization, --max-num-batched-tokens).".into(),
            }];
            if pin > 0 {
                moves.push(format!("Or pin the pool: --kv-cache-memory-bytes {} at most (the largest pin the memory holds here).", thousands(u128::from(pin))));
            }
            (
                if fails_here {
                    format!(
                        "The budget less the weights, other use and activation peak left nothing for KV blocks on rank {}: {} available.",
                        r.rank, a(r.available_kv)
                    )
                } else {
                    format!(
                        "On the machine, the budget less the weights, other use and activation peak left nothing for KV blocks. Here it leaves {} on rank {}, so the machine differs from the scenario in one of those terms.",
                        a(r.available_kv), r.rank
                    )
                },
                "That the context is too long: max-model-len does not size the pool, so lowering it does not help here. Nor max-num-seqs (demand, not a reservation).".into(),
                moves,
                "If the log printed \"Available KV cache memory: X GiB\" with X above zero on every rank, the sizing had memory: the failure is later (the capacity check).".into(),
            )
        }
        Symptom::Capacity => {
            let longest = solve::longest_max_model_len(s).ok().flatten();
            let u_for_one = solve::smallest_utilization_for(s, 1).ok().flatten();
            let mut moves = Vec::new();
            let current = plan.settings.max_model_len.value;
            match longest {
                Some(l) if l < current => moves.push(format!("Lower --max-model-len from {} to at most {} tokens (the longest that starts here).", thousands(u128::from(current)), thousands(u128::from(l)))),
                Some(l) => moves.push(format!("Here {} tokens fit (up to {}): the machine's pool was smaller than the scenario's; enter its figures (a startup log), or lower --max-model-len to what its message estimates.", thousands(u128::from(current)), thousands(u128::from(l)))),
                None => {}
            }
            if let Some(u) = u_for_one.filter(|u| *u > util) {
                moves.push(format!("Or raise --gpu-memory-utilization from {util} to {u}, which holds one full-length request."));
            }
            if s.engine.kv_cache_dtype == KvCacheDtype::Auto {
                moves.push("Or --kv-cache-dtype fp8, which halves the bytes per token of the attention caches.".into());
            }
            let pool = plan
                .checks
                .iter()
                .find(|c| c.phase == Phase::Capacity)
                .map(|c| c.message.render(unit))
                .unwrap_or_default();
            (
                format!("The pool exists, but one request of max-model-len needs more blocks than it holds. Here: {pool}."),
                "That memory is short in general, or that fewer concurrent requests would help: max-num-seqs is demand, not a reservation; the check asks for one request only.".into(),
                moves,
                "If vLLM's message estimates a maximum model length at or above your --max-model-len, the pool did hold one request: look at the release's null block or another rank.".into(),
            )
        }
        Symptom::OomGraphs => {
            let graphs = get(Term::CudaGraphs);
            let pin = solve::largest_kv_pin(s).unwrap_or(0);
            let headroom = r.allocation_headroom(plan.settings.warm_up_after_pool);
            let mut moves = vec![format!(
                "--enforce-eager: no CUDA graphs, {} freed per rank (slower decoding).",
                a(graphs)
            )];
            if s.engine.kv_cache_memory_bytes.is_some() {
                moves.push(format!("Lower the pin --kv-cache-memory-bytes to at most {} (the largest the memory holds here).", thousands(u128::from(pin))));
            } else {
                moves.push(format!("Or lower --gpu-memory-utilization from {util}: the pool shrinks by the same share of the GPU and leaves the graphs room."));
            }
            (
                format!(
                    "The pool was sized, then allocating it with the CUDA graphs (and the warm-up's activations) ran past the physical memory: rank {} has {} once the pool and graphs are in.",
                    r.rank, a(headroom)
                ),
                "That the weights or the context are too large: loading and the capacity check passed. max-model-len does not size the pool.".into(),
                moves,
                "If the log printed \"Graph capturing finished\" before the error, capture succeeded: the OOM is while serving (a request's own activations).".into(),
            )
        }
        Symptom::Preemption => match (&plan.replica, &plan.demand) {
            (Some(rep), Some(d)) => (
                format!(
                    "The scheduler ran out of KV blocks for the requests running at that moment and preempted some. Here the pool holds {} tokens: {:.2} requests of {} tokens, {:.2} at an average of {} tokens.",
                    thousands(u128::from(rep.kv_cache_tokens)),
                    rep.max_concurrency,
                    thousands(u128::from(rep.max_model_len)),
                    d.concurrency_at_average,
                    thousands(u128::from(d.average_len))
                ),
                format!("A start failure or a leak: the engine started and works. Nor that max-num-seqs ({}) was reserved: it is demand the pool need not hold.", thousands(u128::from(d.max_num_seqs))),
                vec![
                    format!("Lower --max-num-seqs toward {} so fewer requests run at once, or", (d.concurrency_at_average.floor() as u64).max(1)),
                    "a larger pool: --gpu-memory-utilization up, --kv-cache-dtype fp8, or more TP.".into(),
                ],
                format!("If preemptions happen with fewer than {:.0} requests running, something else holds blocks (a long prefix cache, speculative tokens) and the pool is not what runs out.", d.concurrency_at_average.floor()),
            ),
            _ => (
                "Preemption happens while serving; this scenario does not start, so there is no pool to compare with.".into(),
                "Anything about the failing start: fix that first (the timeline names its phase).".into(),
                Vec::new(),
                "If the engine started on the machine, the scenario's inputs differ from it: measure and enter them (a startup log).".into(),
            ),
        },
        Symptom::NvErrNoMemory => {
            let pin = solve::largest_kv_pin(s).unwrap_or(0);
            (
                if s.gpu.unified_memory {
                    format!("On unified memory the driver could not back an allocation with the host's memory: the OS ran out (MemAvailable), not a GPU budget. {} shares {} with the CPU.", s.gpu.name, a(get(Term::Total)))
                } else {
                    format!("NV_ERR_NO_MEMORY comes from unified-memory boxes (GB10, Grace); {} has memory of its own, so pick a unified-memory GPU to read this symptom against its scenario.", s.gpu.name)
                },
                "That gpu-memory-utilization was too high in the usual sense: on unified memory the fraction is of a total the OS shares, and does not guard the host.".into(),
                vec![
                    format!("Pin the pool in bytes: --kv-cache-memory-bytes at most {} here, instead of a fraction.", thousands(u128::from(pin))),
                    "Give the start gate's MemAvailable (mem-available) so the page checks the start against the host's free memory.".into(),
                ],
                "If free -g showed plenty of available memory at the failure, the allocation was not short of host memory: look at a driver or container limit.".into(),
            )
        }
        Symptom::CuInit => (
            "The CUDA driver did not initialise in vLLM's process: nothing of the memory accounting was reached, so no figure of this plan applies.".into(),
            "Anything about memory, the model or the flags: no utilization, length or TP setting changes this.".into(),
            vec!["Check what the process sees: the container's GPU access (--gpus all, the NVIDIA container toolkit), CUDA_VISIBLE_DEVICES, and that the driver supports the CUDA version of the image (a forward-compatibility package where it does not).".into()],
            "If python -c 'import torch; print(torch.cuda.is_available())' prints True in the same container and environment, the driver is fine and the failure is elsewhere.".into(),
        ),
        Symptom::SameFailureTwoBudgets => {
            let fails = plan.first_failure().map(|c| c.phase);
            let knobs = plan
                .stopped_at
                .map(|p| p.knobs().iter().map(|i: &Input| i.flag()).collect::<Vec<_>>().join(", "))
                .unwrap_or_default();
            (
                "The failing phase does not read the budget: a phase that did would move with it. That is evidence against a capacity (KV) cause; the utilization acts only at the init check and KV sizing.".into(),
                "That memory is plentiful: the failing phase may still be short of physical memory (loading, allocation), which the fraction does not cap.".into(),
                vec![match fails {
                    Some(f) => format!("This scenario fails at {}; move what acts there: {knobs}.", f.label()),
                    None => "This scenario starts: enter the failing machine's figures (its startup log) to see the phase.".into(),
                }],
                "If the two runs' logs show different \"Available KV cache memory\" before failing at the same line, the budget was read: the failure is at or after KV sizing.".into(),
            )
        }
    };
    let scenario = match (phase, plan.stopped_at) {
        (None, _) => String::new(),
        (Some(p), Some(stop)) if p == stop => format!(
            "The scenario as entered fails at the same phase: {}.",
            phase_name(Some(stop))
        ),
        (Some(_), Some(stop)) => format!(
            "The scenario as entered fails earlier or elsewhere, at {}: fix that first, or enter the machine's own figures (a startup log) if it got further there.",
            phase_name(Some(stop))
        ),
        (Some(StartPhase::Serving), None) => "The scenario as entered starts, as an engine that preempts has.".into(),
        (Some(p), None) => format!(
            "The scenario as entered starts: the machine differs from it at {} (enter its figures: a startup log, the free memory, the weights it loaded).",
            phase_name(Some(p))
        ),
    };
    Diagnosis {
        symptom,
        phase,
        phase_name: phase_name(phase),
        proves,
        not_proved,
        moves,
        disproof,
        scenario,
        pasted: pasted.map(pasted_figures).unwrap_or_default(),
    }
}
