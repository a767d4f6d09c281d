//! The load phase (`load_model`): the target's weights and the drafter's on each rank, and any
//! transient above them, against the physical free memory, which the utilization fraction does
//! not cap.

use super::drafter::{draft_rank_weights, Drafter};
use super::layers::hybrid_pages;
use super::ledger::{amount, layers_formula, line, parts_text};
use super::resolve::Resolved;
use super::stages::{RankAt, Shared};
use super::vllm_log::worker_prefix;
use super::Planning;
use crate::calc::backend;
use crate::calc::formula::{Arg, Formula};
use crate::calc::model::LayerKind;
use crate::calc::plan::*;
use crate::calc::runtime;
use crate::calc::scenario::{AttentionBackend, KvCacheDtype, Scenario, StageTerm};
use crate::calc::units::{py_fixed, GibText};
use crate::calc::weights::{self, Placement, RankWeights};

/// A rank's weights once loaded: the target's and the drafter's.
pub(super) struct Loaded {
    pub(super) w_total: u64,
    pub(super) w_prov: Provenance,
    /// The drafter's weights on this rank (0 and exact without one).
    pub(super) drafter: (u64, Provenance),
    /// Target and drafter: what vLLM's "Model loading took" counts.
    pub(super) weights_all: u64,
    /// An older release's online quantization: the unquantized weights less the quantized
    /// ones, held while the whole unquantized model loads (`None`: no such transient).
    pub(super) online_transient: Option<u64>,
}

/// The target's weights on this rank: measured, or estimated line by line (embedding, layers,
/// head); either way the "Model loading took" line.
pub(super) fn weight_lines(
    s: &Scenario,
    sh: &Shared,
    place: &Placement,
    est: &RankWeights,
    at: RankAt,
    ledger: &mut Vec<LedgerLine>,
) -> (u64, Provenance) {
    let RankAt { stage, layers, .. } = at;
    let tp = s.parallel.tp;
    let m = &s.model;
    let weight_basis = &sh.weight_basis;
    let measured_w = s.runtime.for_stage(StageTerm::Weights, stage as usize);
    let (w_total, w_prov) = match measured_w {
        Some(mw) => (mw.bytes.0, Provenance::Measured(mw.source.clone().into())),
        None => {
            let prov = Provenance::Estimate(weight_basis.clone().into());
            // Each line is scaled to the checkpoint's total on its own, and the total is their
            // sum: scaling the sum would round once where the lines round three times, and
            // the ledger would not add up by a byte.
            let (embedding, layers_b, head, vision) = (
                sh.scaled(est.embedding),
                sh.scaled(est.layers),
                sh.scaled(est.head),
                sh.scaled(est.vision),
            );
            let parts: Vec<(&'static str, u64)> = est
                .parts
                .named()
                .into_iter()
                .map(|(n, b)| (n, sh.scaled(b)))
                .collect();
            let breakdown = parts_text(&parts);
            ledger.push(line(
                Term::WeightsEmbedding,
                i128::from(embedding),
                || {
                    if place.holds_embedding(m) {
                        Formula::template(
                            "padded vocab {} / TP {} rows x hidden {} x {} B",
                            &[
                                Arg::Plain(i128::from(m.padded_vocab())),
                                Arg::Plain(i128::from(tp)),
                                Arg::Plain(i128::from(m.hidden_size)),
                                Arg::Plain(i128::from(m.dtype.bytes())),
                            ],
                        )
                    } else {
                        Formula::from("not on this stage")
                    }
                },
                prov.clone(),
            ));
            ledger.push(line(
                Term::WeightsLayers,
                i128::from(layers_b),
                || layers_formula(layers, tp, Some(&breakdown)),
                prov.clone(),
            ));
            ledger.push(line(
                Term::WeightsHead,
                i128::from(head),
                || {
                    if place.holds_head(m) {
                        if place.head_is_embedding(m) {
                            Formula::from("tied to the embedding: final norm only")
                        } else {
                            Formula::template(
                                "LM head: padded vocab / TP {} rows x hidden + final norm",
                                &[Arg::Plain(i128::from(tp))],
                            )
                        }
                    } else {
                        Formula::from("not on this stage")
                    }
                },
                prov.clone(),
            ));
            if let Some(v) = m.vision.filter(|_| place.vision) {
                ledger.push(line(
                    Term::WeightsVision,
                    i128::from(vision),
                    || format!(
                        "{} blocks of {} wide (MLP {}), patch embedding and projector: {} parameters / TP {tp} x {} B, built on {}",
                        v.depth,
                        v.hidden,
                        v.intermediate,
                        crate::calc::units::Grouped(i128::from(v.params())),
                        m.dtype.bytes(),
                        if runtime::runner_v2(s) {
                            "the first stage (Model Runner V2)"
                        } else {
                            "every stage (the V1 model runner)"
                        }
                    ),
                    Provenance::Estimate(
                        "the vision_config's depth and widths (a ViT: attention, MLP, norms, patch and position embeddings)".into(),
                    ),
                ));
            }
            (
                embedding
                    .saturating_add(layers_b)
                    .saturating_add(head)
                    .saturating_add(vision),
                prov,
            )
        }
    };
    ledger.push(line(
        Term::Weights,
        i128::from(w_total),
        || {
            Formula::template(
                "Model loading took {} GiB",
                &[Arg::Gib(i128::from(w_total))],
            )
        },
        w_prov.clone(),
    ));
    (w_total, w_prov)
}

/// The drafter's weights on a last-stage rank: given, a draft model's from its parameter
/// counts, or the MTP / EAGLE / DSpark layers'.
#[allow(clippy::too_many_arguments)]
pub(super) fn drafter_weights(
    s: &Scenario,
    d: &Drafter,
    sh: &Shared,
    place: &Placement,
    est: &RankWeights,
    at: RankAt,
    w_total: u64,
    w_prov: Provenance,
    ledger: &mut Vec<LedgerLine>,
) -> Loaded {
    let RankAt { tp_rank, last, .. } = at;
    let Drafter {
        layers: drafter_layers,
        dspark,
        draft,
    } = *d;
    let draft_model = sh.draft_model;
    let tp = s.parallel.tp;
    let tp64 = u64::from(tp);
    let m = &s.model;
    let drafter = if last && (drafter_layers > 0 || draft_model) {
        let given = s
            .engine
            .speculative
            .as_ref()
            .and_then(|sp| sp.drafter_weights.as_ref());
        match (given, draft) {
            (Some(d), _) => (d.bytes.0, Provenance::Measured(d.source.clone().into())),
            (None, Some(d)) => (
                    draft_rank_weights(s, d, tp64, u64::from(tp_rank)),
                    Provenance::Estimate(
                        format!(
                            "the draft model {} from its parameter counts ({}), all of it on every last-stage rank at TP {tp}",
                            d.name,
                            d.quant.label()
                        )
                        .into(),
                    ),
                ),
            (None, None) => {
                // DSpark's layers, projections and Markov head; other drafters are
                // MTP/EAGLE layers.
                let (bytes, what) = match dspark {
                    Some((targets, rank, head_dim)) => (
                        weights::dspark_bytes(m, place, drafter_layers, targets, rank, head_dim),
                        format!("{drafter_layers} DSpark layer(s), main_proj over {targets} target layers and a Markov head of rank {rank}, from parameter counts"),
                    ),
                    None => (
                        est.drafter,
                        format!("{drafter_layers} MTP/EAGLE layer(s) from parameter counts"),
                    ),
                };
                (sh.scaled(bytes), Provenance::Estimate(what.into()))
            }
        }
    } else {
        (0, Provenance::Exact)
    };
    if drafter.0 > 0 {
        ledger.push(line(
            Term::Drafter,
            i128::from(drafter.0),
            || "the speculative drafter, built on the last PP stage only",
            drafter.1.clone(),
        ));
    }
    let weights_all = w_total + drafter.0;
    if drafter.0 > 0 {
        // Both model runners load the drafter inside the same DeviceMemoryProfiler as
        // the target (GPUModelRunner.load_model), so vLLM's figure counts both.
        if let Some(l) = ledger.iter_mut().find(|l| l.term == Term::Weights) {
            l.formula = super::page_text(|| {
                format!(
                "target model only; vLLM's \"Model loading took {} GiB\" on this rank also counts the drafter",
                GibText(i128::from(weights_all))
            )
                .into()
            });
        }
    }
    Loaded {
        w_total,
        w_prov,
        drafter,
        weights_all,
        online_transient: None,
    }
}

/// The load's peak on this rank (weights plus a transient, or target plus drafter), checked
/// against the free memory at the snapshot; the first rank it does not fit on is kept.
pub(super) fn load_need(
    s: &Scenario,
    l: &Loaded,
    free0: u64,
    at: (u32, usize),
    ledger: &mut Vec<LedgerLine>,
    load_fail: &mut Option<(u32, String)>,
    notes: &mut Vec<String>,
) -> u64 {
    let (rank, stage) = at;
    let (w_total, weights_all) = (l.w_total, l.weights_all);
    // Load phase: weights plus a transient against physical free memory. Measured weights
    // leave no estimate of the unquantized ones to take a difference from.
    let online_transient = l
        .online_transient
        .filter(|_| s.runtime.for_stage(StageTerm::Weights, stage).is_none());
    let (load_peak, load_prov) = runtime::term(
        &s.runtime.load_peak,
        online_transient.unwrap_or(0),
        match online_transient {
            Some(_) => format!(
                "vLLM {} quantizes online after loading the whole unquantized model: the transient is the unquantized weights less the quantized ones",
                s.version
            ),
            None => "no load-time transient assumed".into(),
        },
    );
    if s.runtime.load_peak.is_some() || online_transient.is_some() {
        ledger.push(line(
            Term::LoadPeak,
            i128::from(load_peak),
            || "transient above the weights while loading (e.g. an expert repack)",
            load_prov.clone(),
        ));
    }
    // The transient belongs to the target's loading (process_weights_after_loading runs
    // per layer as the target loads); the drafter loads after it. The peak is whichever
    // is larger: target + transient, or target + drafter.
    let load_need = w_total.saturating_add(load_peak).max(weights_all);
    // A measured pool is from a later phase: loading passed on that run, so an estimate that
    // says it cannot is contradicted, not a verdict (the pool's figure outranks it).
    let pool_measured = s.runtime.for_stage(StageTerm::AvailableKv, stage).is_some();
    let weights_measured = s.runtime.for_stage(StageTerm::Weights, stage).is_some();
    if load_need > free0 && pool_measured && !weights_measured && s.runtime.load_peak.is_none() {
        if super::NOTES {
            let note = format!(
                "The estimated load peak of stage {stage} ({}) is more than the {} free, yet the measured available KV memory shows that loading passed: the weight estimate is contradicted by the measurement by at least {}; give the measured weights (--weights, \"Model loading took\") to replace it.",
                amount(i128::from(load_need)),
                amount(i128::from(free0)),
                amount(i128::from(load_need - free0))
            );
            if !notes.contains(&note) {
                notes.push(note);
            }
        }
        return load_need;
    }
    if load_need > free0 && load_fail.is_none() {
        *load_fail = Some((
            rank,
            format!(
                "rank {rank} needs {} while loading ({}) but only {} is free: CUDA out of memory while loading. gpu-memory-utilization does not act here.",
                amount(i128::from(load_need)),
                // Whichever term set the peak: the transient, or the drafter.
                if w_total.saturating_add(load_peak) >= weights_all && load_peak > 0 {
                    format!("weights plus a {} transient", amount(i128::from(load_peak)))
                } else if weights_all > w_total {
                    format!("weights {} and the drafter {}", amount(i128::from(w_total)), amount(i128::from(weights_all - w_total)))
                } else {
                    "weights".to_string()
                },
                amount(i128::from(free0))
            ),
        ));
    }
    load_need
}

/// Phase 2: the load's verdict, the lines every worker writes while loading (the KV cache
/// format, the attention backend, the block size), and once loaded "Model loading took".
/// Returns whether the start stops here.
pub(super) fn load_phase(p: &mut Planning, load_fail: &Option<(u32, String)>) -> bool {
    let Planning {
        s,
        ref r,
        ref ranks,
        ref mut checks,
        ref mut log_lines,
        ref mut notes,
        ..
    } = *p;
    let Resolved {
        ref v4,
        block_size,
        forced_block,
        ref block_basis,
        hybrid_raised,
        num_spec,
        ..
    } = *r;
    let (m, v, tp64) = (&s.model, s.version, u64::from(s.parallel.tp));
    // A rank whose estimate does not fit passed only because a measured pool outranks it.
    let contradicted = ranks.iter().find(|r| r.load_headroom < 0);
    checks.push(Check {
        phase: Phase::Load,
        ok: load_fail.is_none(),
        rank: load_fail.as_ref().map(|f| f.0),
        message: match (&load_fail, contradicted) {
            (Some((_, m)), _) => m.clone().into(),
            // A passed check's sentence: text only the full page shows.
            (None, Some(r)) => super::page_text(|| format!("passed on the measured run: the measured available KV memory shows that the weights loaded, though the estimate for rank {} is {} more than its free memory (the estimate is contradicted; see the notes)", r.rank, amount(-r.load_headroom)).into()),
            (None, None) => super::page_text(|| "weights (and any load-time transient) fit in the physical free memory of every rank; the utilization fraction does not cap this phase".into()),
        },
        vllm_error: super::page_text(|| load_fail.as_ref().map(|_| "torch.OutOfMemoryError: CUDA out of memory.".to_string())),
        knobs: vec!["tensor-parallel-size", "pipeline-parallel-size", "pp-layer-partition", "quantization", "enable-expert-parallel", "speculative-config (the drafter loads on the last stage)"],
        not_knobs: vec!["gpu-memory-utilization", "max-model-len", "kv-cache-memory-bytes"],
    });
    // DeepSeek-V4's attention classes switch auto / fp8 to fp8_ds_mla as they are built,
    // during the load; every worker says so once (written once, under the first rank's name).
    let first = worker_prefix(s, &ranks[0]);
    if v4.as_ref().is_some_and(|a| !a.plain)
        && s.engine.kv_cache_dtype != KvCacheDtype::Fp8DsMla
        && super::NOTES
    {
        log_lines.push(format!(
            "{first} Using DeepSeek's fp8_ds_mla KV cache format."
        ));
    }
    // Every worker builds its attention layers with the selected backend (cuda.py's
    // `logger.info("Using %s backend.", selected_backend)`, the enum member printed whole).
    if let Some(b) = backend::selected(s) {
        if super::NOTES {
            log_lines.push(format!(
                "{first} Using AttentionBackendEnum.{} backend.",
                b.name
            ));
        }
        if super::NOTES {
            notes.push(format!("--attention-backend {}: checked as vLLM 0.33.0 checks a selected backend (head size, KV cache dtype, kernel blocks, MLA, attention sinks, compute capability and its own kernel rules), assuming its kernels are built in (FlashAttention 3 on SM 9.x and 4 on SM 10.x, FlashMLA, FlashInfer's TRT-LLM kernels).", b.name));
        }
    }
    if backend::selected(s).is_some_and(|b| b.name == AttentionBackend::Flashinfer)
        && ![16, 32, 64].contains(&block_size)
        && m.layers
            .iter()
            .any(|l| matches!(l, LayerKind::Sliding { .. }))
        && super::NOTES
    {
        notes.push(format!("FLASHINFER's kernels take blocks of 16, 32 or 64: for its sliding-window layers vLLM picks the largest of those within --block-size {block_size} (_largest_kernel_block_within) and pads the pages; Headroom plans those layers at {block_size}, so their pages are not vLLM's."));
    }
    if let Some((_, line)) = forced_block {
        if super::NOTES {
            log_lines.push(format!("(APIServer pid=P) {line}"));
        }
        if super::NOTES {
            notes.push(format!("Block size {block_size} tokens: {block_basis}."));
        }
    }
    // update_block_size_for_backend and its line arrived in 0.18.
    let backend_line = !hybrid_raised
        && block_size != 16
        && s.engine.block_size.is_none()
        && forced_block.is_none()
        && v.at_least(0, 18);
    if backend_line && super::NOTES {
        notes.push(format!("Block size {block_size} tokens: {block_basis}."));
    }
    if load_fail.is_some() {
        // The failing rank never finishes loading, so it never prints "Model loading took".
        if super::NOTES {
            log_lines.push("torch.OutOfMemoryError: CUDA out of memory.".to_string());
        }
        return true;
    }
    // 0.10.2 and 0.11.0 log it on every worker (plain info), without the word "memory";
    // from 0.11.2 once (info_once, scope local); `%.4f` GiB before 0.14 (gpu_model_runner.py's
    // load_model), format_gib from 0.14.
    let every_worker = !v.worker_lines_once();
    // Log lines are the full page's: the first verdict's program prints none (`NOTES`).
    let logged = ranks
        .iter()
        .filter(|r| super::NOTES && (every_worker || r.tp_rank == 0));
    for r in logged {
        // The consumed memory of load_model: the target and, on the last stage, the drafter.
        let loaded = i128::from(r.weights.0) + r.line(Term::Drafter).map_or(0, |l| l.bytes);
        let line = if v.requested_is_ceil() {
            format!(
                "{} Model loading took {} GiB memory and T seconds",
                worker_prefix(s, r),
                GibText(loaded)
            )
        } else {
            format!(
                "{} Model loading took {} GiB{} and T seconds",
                worker_prefix(s, r),
                py_fixed(loaded as f64 / crate::calc::units::GIB as f64, 4),
                if every_worker { "" } else { " memory" }
            )
        };
        log_lines.push(line);
    }
    if super::NOTES {
        notes.push("In vLLM's \"Model loading took X GiB ... and T seconds\", T stands for the load time, which Headroom does not model; P in \"pid=P\" stands for the process id. vLLM writes its level, time and source file between the process and the message; Headroom leaves them out.".into());
    }
    // Each worker sets its block size once its model is loaded (`update_block_size_for_backend`
    // follows `load_model` in both executors); the sentences are alike on every rank, so they
    // are written once, with the first rank's name.
    if hybrid_raised {
        // platforms/interface.py's wording for hybrid models.
        if super::NOTES {
            log_lines.push(format!("{first} Setting attention block size to {block_size} tokens to ensure that attention page size is >= mamba page size."));
        }
    }
    // The state page is padded to the attention page; vLLM says by how much.
    if let Some((attn_1, mamba_page)) = hybrid_pages(s, tp64, num_spec) {
        let attn_page = attn_1 * block_size;
        if attn_page > mamba_page {
            let pct = (100 * (attn_page - mamba_page)) as f64 / mamba_page as f64;
            if super::NOTES {
                log_lines.push(format!(
                "{first} Padding mamba page size by {}% to ensure that mamba page size and attention page size are exactly equal.",
                py_fixed(pct, 2)
            ));
            }
        }
    }
    if backend_line {
        // The backends' names lead the basis ("FLASHMLA for an fp8 MLA cache ..."); the
        // reason is in the notes, the line stays vLLM's.
        let backend = block_basis
            .split([' ', ',', ':'])
            .next()
            .unwrap_or_default();
        if super::NOTES {
            log_lines.push(format!(
                "{first} Setting kv cache block size to {block_size} for {backend} backend(s)."
            ));
        }
    }
    false
}
