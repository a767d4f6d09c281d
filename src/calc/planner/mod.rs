//! `plan`: a worker's start-up in vLLM's order, for every rank of the TP x PP grid.
//!
//! `plan` normalises the scenario, then `plan_given` runs the phases, each in its own file:
//! `validate` (every refusal), `resolve` (the settings in force), `drafter`, the stage loop
//! (`stages`: every rank through `load` and `profile`, their KV specs from `layers`), the
//! unified-memory gate (`unified`), the phase checks of `init`, `load` and `profile`, KV
//! sizing and capacity (`kv_sizing`, or `measured` for a measured ratio), and `finish`
//! (allocation and graphs, the Plan). vLLM's log lines are written with `vllm_log`'s helpers.
//!
//! 1. init check (`request_memory`): free at the snapshot >= ceil(total x utilization);
//! 2. load: weights (+ a transient peak) against physical free memory, which the fraction does
//!    not cap;
//! 3. profiling and the KV budget: `requested - non_kv - cuda_graphs`, or the pinned
//!    `--kv-cache-memory-bytes`;
//! 4. the KV layout, the capacity check and `num_blocks` (the minimum over ranks), in `kv`.

mod checks;
mod drafter;
mod finish;
mod init;
mod kv_sizing;
mod layers;
mod ledger;
mod load;
mod measured;
mod notes;
mod profile;
mod releases;
mod resolve;
mod stages;
mod unified;
mod validate;
mod vllm_log;

use self::finish::finish;
use self::measured::measured_kv_plan;
use self::resolve::Resolved;
use self::unified::unified_gate;
use self::validate::validate;
use super::plan::*;
use super::scenario::Scenario;
use super::CalcError;

pub(super) use self::vllm_log::vllm_suggestion;

/// Whether the plan writes its notes and vLLM's log lines: the first verdict's program shows
/// neither, so it does not carry their text (a constant false drops each sentence from that
/// build; the app, the CLI and the tests have them all).
pub(crate) const NOTES: bool = !cfg!(all(feature = "verdict", not(feature = "web")));

/// Text only the full page shows, written where the plan keeps text ([`NOTES`]): a ledger
/// line's formula, an estimate's basis in words, a passed check's sentence, vLLM's own error.
/// The first verdict's program reads none of them (it shows failures, figures and provenance
/// labels), so there it is empty and the program carries neither the words nor the code that
/// writes them.
pub(crate) fn page_text<T: Default>(text: impl FnOnce() -> T) -> T {
    if NOTES {
        text()
    } else {
        T::default()
    }
}
pub use self::vllm_log::SUGGESTION_MARGIN;

/// A plan under way once every rank is planned: the scenario, the settings resolved, and what
/// the phases have written so far. Each phase after the stage loop takes it, and `finish`
/// turns it into the `Plan`, whichever phase the start stops at.
struct Planning<'a> {
    s: &'a Scenario,
    r: Resolved,
    ranks: Vec<RankPlan>,
    checks: Vec<Check>,
    unified: Option<UnifiedGate>,
    log_lines: Vec<String>,
    notes: Vec<String>,
    /// The pinned pool's profile pass ran out of memory (its check is filed under KV sizing).
    profile_failed: bool,
}

/// Computes the plan of every rank. Pure; the same scenario always gives the same plan.
///
/// ```
/// use headroom::calc::{plan, Scenario};
/// use headroom::calc::model::Model;
/// use headroom::calc::scenario::Gpu;
/// use headroom::calc::units::Bytes;
/// let gpu = Gpu { id: "h100".into(), name: "H100".into(), total: Bytes(85_029_158_912),
///     total_confirmed: false, unified_memory: false, compute_capability: (9, 0) };
/// let p = plan(&Scenario::new(Model::example_dense(), gpu)).unwrap();
/// assert!(p.starts());
/// ```
pub fn plan(s: &Scenario) -> Result<Plan, CalcError> {
    let mut notes: Vec<String> = Vec::new();
    let mut t: Option<Scenario> = None;
    // vLLM reads the pin with `if kv_cache_memory_bytes := ...`: 0 is false, so it profiles.
    if s.engine.kv_cache_memory_bytes == Some(0) {
        t.get_or_insert_with(|| s.clone())
            .engine
            .kv_cache_memory_bytes = None;
        if self::NOTES {
            notes.push("kv-cache-memory-bytes 0 is the same as leaving it unset: vLLM tests it with `if kv_cache_memory_bytes := ...`, where 0 is false, so the pool is profiled from gpu-memory-utilization.".into());
        }
    }
    // `--dtype` and `--quantization` (or the config's own): the weights' format vLLM loads.
    super::weight_format::apply(s, &mut t, &mut notes)?;
    let shared_experts = s.model.moe.as_ref().is_some_and(|moe| {
        moe.n_shared_experts > 0 || moe.shared_intermediate_size.is_some_and(|i| i > 0)
    });
    if shared_experts
        && s.parallel.expert_parallel
        && s.parallel.tp > 1
        && s.parallel.dp > 1
        && self::NOTES
    {
        notes.push("Expert parallelism with tensor-parallel-size > 1 and data-parallel-size > 1 makes vLLM's MoE sequence-parallel (use_sequence_parallel_moe, under the default allgather_reducescatter all2all backend): the shared experts are built whole on every rank, not split by TP, and the weights count them so.".into());
    }
    // A catalog row's estimate is scaled to its checkpoint's size, which counts them.
    if !s.model.quant_skips.is_empty()
        && s.model.checkpoint_bytes.is_none()
        && s.runtime.weights.is_none()
        && s.runtime.weights_per_stage.is_none()
    {
        let shown: Vec<&str> = s
            .model
            .quant_skips
            .iter()
            .take(4)
            .map(String::as_str)
            .collect();
        if self::NOTES {
            notes.push(format!(
            "The quantization config keeps {}{} unquantized, modules Headroom does not recognise (it reads attention, linear attention, Mamba mixers, MLPs, experts, shared experts and latent projections, by layer); vLLM loads them at full width while the estimate sizes them at the quantized width, so it is low by their difference. Give the measured weights (vLLM's \"Model loading took\") for the exact figure.",
            shown.join(", "),
            if s.model.quant_skips.len() > 4 {
                format!(" and {} more", s.model.quant_skips.len() - 4)
            } else {
                String::new()
            }
        ));
        }
    }
    if s.model.vision_encoder && s.model.checkpoint_bytes.is_none() {
        match s.model.vision {
            Some(v) => {
                if self::NOTES {
                    notes.push(format!(
                "The config has a vision_config: the vision encoder and its projector are estimated from it ({} blocks of {} wide, about {} parameters) and counted on the ranks vLLM builds them on: the first pipeline stage under Model Runner V2, every stage under the V1 runner. Give the measured weights (vLLM's \"Model loading took\") for the exact figure.",
                v.depth,
                v.hidden,
                super::units::Grouped(i128::from(v.params()))
            ))
                }
            }
            None => {
                if self::NOTES {
                    notes.push("The config has a vision_config without the depth and width needed to estimate it: the vision encoder's weights are not in the estimate, which sizes the language model. Give the measured weights (vLLM's \"Model loading took\") to include them.".into())
                }
            }
        }
    }
    let mut p = plan_given(t.as_ref().unwrap_or(s))?;
    // Measured weights replace the estimate: nothing to doubt then.
    if s.runtime.weights.is_none() && s.runtime.weights_per_stage.is_none() {
        p.weights_check = super::plausible::check(&s.model);
    }
    if let Some(c) = &p.weights_check {
        notes.insert(0, c.message.clone());
    }
    if NOTES {
        notes.extend(deployment_notes(s, &p));
    }
    p.scenario = scenario_words(t.as_ref().unwrap_or(s));
    // vLLM's registry, which the verdict opens with. The program for catalog links leaves it
    // out: it plans only catalog rows and the seed examples, and vLLM serves each one's
    // architecture (the test `every_catalog_architecture_is_served`).
    #[cfg(not(all(
        feature = "verdict",
        not(feature = "web"),
        feature = "catalog-compiled",
        not(feature = "config-reader")
    )))]
    {
        if let Some((n, short)) =
            super::architectures::note_and_short(&s.model.architecture, s.version)
        {
            if NOTES {
                notes.insert(0, n);
            }
            p.architecture_note = Some(short);
        }
    }
    p.notes.splice(0..0, notes.into_iter().map(Message::new));
    Ok(p)
}

/// The scenario in words: `Llama 3.1 70B Instruct (unquantized bfloat16) on 4 x NVIDIA H100
/// SXM 80GB, TP 4 x PP 1; max-model-len 16,384`. Only flags that differ from vLLM's defaults
/// are named.
fn scenario_words(s: &Scenario) -> String {
    use super::scenario::{KvCacheDtype, MaxLen};
    use super::units::thousands;
    let m = &s.model;
    let p = &s.parallel;
    let format = match m.quant {
        super::model::WeightQuant::None => m.dtype.as_str().to_string(),
        q if m.quant_source == super::model::QuantSource::Assumed => {
            format!("{}, an assumed {} checkpoint", q.label(), m.quant_method)
        }
        q => q.label(),
    };
    let used = p.tp * p.pp * p.dp;
    let mut out = format!(
        "{} ({format}) on {used} x {}, TP {} x PP {}{}",
        super::clipped(&m.name),
        s.gpu.name,
        p.tp,
        p.pp,
        if p.dp > 1 {
            format!(" x DP {}", p.dp)
        } else {
            String::new()
        }
    );
    let mut flags: Vec<String> = Vec::new();
    match s.engine.max_model_len {
        MaxLen::Value(v) => flags.push(format!("max-model-len {}", thousands(u128::from(v)))),
        MaxLen::Auto => flags.push("max-model-len auto".into()),
        MaxLen::ModelDefault => {}
    }
    if let Some(u) = s.engine.gpu_memory_utilization {
        flags.push(format!("gpu-memory-utilization {u}"));
    }
    if let Some(k) = s.engine.kv_cache_memory_bytes {
        flags.push(format!(
            "kv-cache-memory-bytes {}",
            thousands(u128::from(k))
        ));
    }
    if let Some(q) = s.engine.quantization {
        flags.push(format!("quantization {q}"));
    }
    if s.engine.dtype != super::weight_format::Dtype::Auto {
        flags.push(format!("dtype {}", s.engine.dtype.as_str()));
    }
    if s.engine.kv_cache_dtype != KvCacheDtype::Auto {
        flags.push(format!(
            "kv-cache-dtype {}",
            s.engine.kv_cache_dtype.as_str()
        ));
    }
    if let Some(n) = s.engine.max_num_seqs {
        flags.push(format!("max-num-seqs {n}"));
    }
    if let Some(n) = s.engine.max_num_batched_tokens {
        flags.push(format!(
            "max-num-batched-tokens {}",
            thousands(u128::from(n))
        ));
    }
    if s.engine.enforce_eager {
        flags.push("enforce-eager".into());
    }
    if let Some(sp) = &s.engine.speculative {
        flags.push(format!(
            "speculative {} x {}",
            sp.method.as_str(),
            sp.num_speculative_tokens
        ));
    }
    if let Some(part) = &p.pp_layer_partition {
        let parts: Vec<String> = part.iter().map(u32::to_string).collect();
        flags.push(format!("pp-layer-partition {}", parts.join(",")));
    }
    if p.expert_parallel {
        flags.push("enable-expert-parallel".into());
    }
    if !flags.is_empty() {
        out.push_str("; ");
        out.push_str(&flags.join(", "));
    }
    out
}

/// What the GPU count and the grid say beyond one engine: GPUs left idle (and what data
/// parallelism would do with them), the totals of several replicas, a TP wider than a node.
fn deployment_notes(s: &Scenario, p: &Plan) -> Vec<String> {
    use super::units::plural;
    let mut out = Vec::new();
    let (tp, pp, dp) = (
        u64::from(s.parallel.tp),
        u64::from(s.parallel.pp),
        u64::from(s.parallel.dp),
    );
    let engine = tp * pp;
    let used = engine * dp;
    let gpus = u64::from(s.gpus);
    let per = p.replica.as_ref().map(|r| r.full_length_requests);
    if gpus > used {
        let idle = gpus - used;
        let replicas = gpus / engine;
        let more = if replicas > dp {
            format!(
                " --data-parallel-size {replicas} would run {replicas} engines of TP {tp} x PP {pp}{}.",
                match per {
                    Some(n) => format!(
                        ", each holding {n} full-length {} at once ({} in all)",
                        plural(n, "request", "requests"),
                        n.saturating_mul(replicas)
                    ),
                    None => String::new(),
                }
            )
        } else {
            String::new()
        };
        out.push(format!(
            "{idle} of the {gpus} GPUs {} idle: the plan uses TP {tp} x PP {pp} x DP {dp} = {used}.{more}",
            if idle == 1 { "is" } else { "are" }
        ));
    }
    if let (true, Some(r)) = (dp > 1, p.replica.as_ref()) {
        out.push(format!(
            "The deployment: {dp} replicas (data-parallel-size), each an engine with this plan on {engine} {}: {} full-length {}-token requests at once and {} tokens of KV cache in all, on {used} GPUs.",
            plural(engine, "GPU", "GPUs"),
            r.full_length_requests.saturating_mul(dp),
            super::units::thousands(u128::from(r.max_model_len)),
            super::units::thousands(u128::from(r.kv_cache_tokens) * u128::from(dp)),
        ));
    }
    if tp > 8 {
        out.push(format!(
            "tensor-parallel-size {tp} spans more GPUs than one 8-GPU node (HGX / DGX) holds: every layer's all-reduce then crosses the network between nodes unless the GPUs share one NVLink domain (GB200 NVL72); the usual layout keeps TP within a node and splits the layers across nodes with pipeline-parallel-size."
        ));
    }
    out
}

/// The settings a start would run with, where each comes from, for any scenario, the ones
/// `plan` refuses too (the view of a refused scenario still shows vLLM's defaults). For a
/// scenario `plan` accepts, the same as `plan(s)?.settings`.
///
/// ```
/// use headroom::calc::model::Model;
/// use headroom::calc::scenario::{Gpu, MaxLen};
/// use headroom::calc::units::Bytes;
/// use headroom::calc::{plan, settings, Scenario};
/// let gpu = Gpu { id: "h100".into(), name: "H100".into(), total: Bytes(85_029_158_912),
///     total_confirmed: false, unified_memory: false, compute_capability: (9, 0) };
/// let mut s = Scenario::new(Model::example_dense(), gpu);
/// assert_eq!(settings(&s), plan(&s).unwrap().settings);
/// s.engine.max_model_len = MaxLen::Value(1 << 30); // past the model's length: refused
/// assert!(plan(&s).is_err());
/// assert_eq!(settings(&s).max_model_len.value, 1 << 30);
/// ```
pub fn settings(s: &Scenario) -> Settings {
    resolve::settle(s, validate(s).is_ok()).settings(s)
}

/// The phases in vLLM's order; each returns early, through `finish`, where the start stops.
fn plan_given(s: &Scenario) -> Result<Plan, CalcError> {
    validate(s)?;
    let mut notes: Vec<String> = Vec::new();
    let r = resolve::resolve(s, &mut notes)?;
    let d = drafter::drafter(s, &mut notes)?;
    let sh = stages::shared(s, &r, &mut notes);
    let stages::Stages {
        ranks,
        workers,
        init_fail,
        load_fail,
    } = stages::plan_stages(s, &r, &d, &sh, &mut notes);

    // Phase 0: the unified-memory gate (checked before the launch).
    let unified = s
        .unified
        .as_ref()
        .map(|u| unified_gate(s, u, &ranks, &mut notes));
    // About a dozen engine lines and six or so a stage: one allocation instead of a doubling run.
    let log_lines: Vec<String> = Vec::with_capacity(16 + 8 * r.parts.len());
    let mut p = Planning {
        s,
        r,
        ranks,
        checks: Vec::new(),
        unified,
        log_lines,
        notes,
        profile_failed: false,
    };
    // Phases 1 and 2: init check and load.
    if init::init_phase(&mut p, &init_fail, sh.requested) || load::load_phase(&mut p, &load_fail) {
        return Ok(finish(p, None, None));
    }
    // The profile run, also under a pinned pool.
    if profile::pinned_profile_phase(&mut p) {
        return Ok(finish(p, None, None));
    }
    profile::profiled_logs(&mut p);

    // Phases 3 and 4: KV sizing and capacity.
    if s.model.measured_kv.is_some() {
        return Ok(measured_kv_plan(p));
    }
    kv_sizing::size_kv(p, workers, sh.tp_ranks_identical)
}
