//! The KV-cache layout exactly as vLLM 0.33.0 plans it: one spec per layer, page sizes, groups,
//! bytes per block on each worker, `num_blocks` (the minimum over workers), the capacity check,
//! the max-model-len estimate and the "GPU KV cache size" figure.
//!
//! Sources: `vllm/v1/kv_cache_interface.py` (specs and pages), `vllm/v1/core/kv_cache_planning.py`
//! (grouping, bytes per block, capacity check, auto-fit, min over workers),
//! `vllm/v1/core/kv_cache_utils.py` (concurrency and tokens). Golden vectors produced by vLLM's own
//! code pin every number here (`tests/golden`).

use std::fmt;
use std::sync::Arc;

use self::groups::{group_layers, packed_groups};
use super::units::{cdiv, format_gib};
use super::version::VllmVersion;

mod groups;

/// What one layer keeps per token, as vLLM's `KVCacheSpec` subclasses describe it.
#[derive(Clone, Debug, PartialEq)]
pub enum LayerKv {
    /// `FullAttentionSpec`: every token of the context.
    Full,
    /// `SlidingWindowSpec`: the last `window` tokens plus what is in flight.
    Sliding { window: u64 },
    /// `ChunkedLocalAttentionSpec` (Llama-4 local layers): the current chunk.
    Chunked { chunk: u64 },
    /// `MLAAttentionSpec`: one latent head of `kv_lora_rank + qk_rope_head_dim`, not split by TP.
    Mla,
    /// `SlidingWindowMLASpec`.
    MlaSliding { window: u64 },
    /// `MambaSpec`: a fixed state per request (Mamba, Mamba2, gated DeltaNet, short conv).
    Mamba {
        /// The per-rank state tensors: (shape, bytes per element).
        states: Vec<(Vec<u64>, u64)>,
        /// `2 + num_spec + checkpoint` pages in "align" mode, `1 + num_spec` otherwise.
        blocks_per_request: u64,
    },
}

impl LayerKv {
    fn is_attention(&self) -> bool {
        match self {
            LayerKv::Full
            | LayerKv::Sliding { .. }
            | LayerKv::Chunked { .. }
            | LayerKv::Mla
            | LayerKv::MlaSliding { .. } => true,
            LayerKv::Mamba { .. } => false,
        }
    }

    /// The spec type name vLLM uses, for explanations.
    pub fn type_name(&self) -> &'static str {
        match self {
            LayerKv::Full => "FullAttentionSpec",
            LayerKv::Sliding { .. } => "SlidingWindowSpec",
            LayerKv::Chunked { .. } => "ChunkedLocalAttentionSpec",
            LayerKv::Mla => "MLAAttentionSpec",
            LayerKv::MlaSliding { .. } => "SlidingWindowMLASpec",
            LayerKv::Mamba { .. } => "MambaSpec",
        }
    }
}

/// One layer's KV spec on one worker, before the block size is applied.
#[derive(Clone, Debug, PartialEq)]
pub struct LayerSpec {
    /// The global layer index (drafter layers follow the target's).
    pub index: u32,
    pub kind: LayerKv,
    /// KV heads on this rank (`max(1, kv_heads / tp)`; 1 for MLA).
    pub num_kv_heads: u64,
    /// Bytes one head keeps per token: `(head_size + head_size_v) * dtype_bytes`, or an opaque
    /// blob (656 for `fp8_ds_mla`). Unused for Mamba.
    pub per_head_token_bytes: u64,
    /// A page and block size of the spec's own, whatever the attention block size: DeepSeek-V4's
    /// caches (sliding window at 64 tokens, compressor states at 4 or 8, padded pages).
    pub fixed: Option<FixedPage>,
}

/// A spec's own (block size in tokens, page bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FixedPage {
    pub block_size: u64,
    pub page: u64,
}

impl LayerSpec {
    /// Bytes per token of this layer (attention only).
    pub fn bytes_per_token(&self) -> u64 {
        self.num_kv_heads * self.per_head_token_bytes
    }

    /// The unpadded Mamba state page.
    fn mamba_state_bytes(&self) -> u64 {
        match &self.kind {
            LayerKv::Mamba { states, .. } => states
                .iter()
                .map(|(shape, elem)| shape.iter().product::<u64>() * elem)
                .sum(),
            _ => 0,
        }
    }
}

/// The engine settings the KV plan reads.
#[derive(Clone, Debug, PartialEq)]
pub struct KvSettings {
    /// The resolved block size for attention layers (after backend choice and hybrid alignment).
    pub block_size: u64,
    pub max_model_len: MaxModelLen,
    /// `max_concurrent_batches x max_num_batched_tokens` (v0.26+); `max_num_batched_tokens` before.
    pub max_in_flight_tokens: u64,
    /// `extra_retained_tokens` of every sliding-window spec: `num_prefill_lookahead_tokens - 1`,
    /// which only multi-module MTP makes non-zero (`num_speculative_tokens - 1`).
    pub extra_retained_tokens: u64,
    pub num_gpu_blocks_override: Option<u64>,
    /// `--disable-hybrid-kv-cache-manager`: sliding and chunked layers count as full.
    pub disable_hybrid: bool,
    pub version: VllmVersion,
    /// A block-outermost layout with pages of several sizes (DeepSeek-V4): vLLM groups the
    /// layers with `_get_packed_kv_cache_groups`.
    pub packed: bool,
}

/// `--max-model-len`: a number, or `auto` (-1) with the model's own limit as the upper bound.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MaxModelLen {
    Value(u64),
    /// Auto-fit (v0.14+): the largest length every worker can hold, capped at this bound.
    Auto {
        upper: u64,
    },
}

/// One worker (GPU rank) of the engine: its layers and its budget.
#[derive(Clone, Debug, PartialEq)]
pub struct WorkerKv {
    pub layers: Vec<LayerSpec>,
    /// vLLM's "Available KV cache memory" on this rank (may be negative when overspent).
    pub available: i128,
}

/// A KV cache group: layers that share block ids.
#[derive(Clone, Debug, PartialEq)]
pub struct KvGroup {
    pub kind: LayerKv,
    pub layer_indices: Vec<u32>,
    /// Page bytes of one layer of this group (identical across a hybrid model after unification);
    /// for a `UniformTypeKVCacheSpecs` group, the sum of its layers' pages, as vLLM reports it.
    pub page_size: u64,
    /// `UniformTypeKVCacheSpecs`: layers of one attention type whose pages differ (e.g. a draft
    /// model's layers beside the target's) share each block, every layer with its own page.
    pub uniform_type: bool,
    /// Block size in tokens for this group.
    pub block_size: u64,
    /// Blocks one request at `max_model_len` needs in this group.
    pub blocks_per_request: u64,
}

impl KvGroup {
    /// vLLM's name for the group's spec.
    pub fn spec_name(&self) -> &'static str {
        if self.uniform_type {
            "UniformTypeKVCacheSpecs"
        } else {
            self.kind.type_name()
        }
    }
}

/// Per-worker outcome.
#[derive(Clone, Debug, PartialEq)]
pub struct WorkerKvPlan {
    pub bytes_per_block: u64,
    pub available: i128,
    /// `available - bytes_per_block` (one null block reserved, v0.29+).
    pub check_memory: i128,
    /// Bytes one request at `max_model_len` needs on this worker.
    pub needed: u64,
    /// `available // bytes_per_block` before the minimum.
    pub num_blocks_own: u64,
    /// Estimated longest max-model-len this worker holds (vLLM's binary search).
    pub max_len_estimate: u64,
    /// Page size per layer on this rank (first attention layer), for display.
    pub page_size: u64,
    /// Attention bytes per token on this worker (all its layers).
    pub bytes_per_token: u64,
    /// What one block holds on this worker, as (layers, page bytes) runs: one run, unless the
    /// group's layers have pages of several sizes (`UniformTypeKVCacheSpecs`).
    pub block_pages: Arc<[(u64, u64)]>,
}

/// The engine-wide KV plan.
#[derive(Clone, Debug, PartialEq)]
pub struct KvPlan {
    pub groups: Vec<KvGroup>,
    pub workers: Vec<WorkerKvPlan>,
    pub max_model_len: u64,
    /// Set when `--max-model-len auto` changed the length: (from, to).
    pub auto_fit: Option<(u64, u64)>,
    /// The worker whose memory vLLM's auto-fit line quotes: the first worker, unless a later
    /// one's estimate is strictly lower (`limiting_worker_mem`).
    pub auto_fit_worker: usize,
    pub blocks_per_request: u64,
    /// The minimum over workers (or the override).
    pub num_blocks: u64,
    /// Worker index whose ratio decided `num_blocks`.
    pub limiting_worker: usize,
    pub kv_cache_tokens: u64,
    pub max_concurrency: f64,
    /// Padding layers added to short groups (vLLM warns about them).
    pub padding_layers: u64,
}

/// Why vLLM would refuse to start at KV planning.
#[derive(Clone, Debug, PartialEq)]
pub enum KvError {
    /// "No available memory for the cache blocks" on this worker.
    NoMemory { worker: usize, bytes_per_block: u64 },
    /// "To serve at least one request with the model's max seq len ..."
    Capacity {
        worker: usize,
        max_model_len: u64,
        needed: u64,
        check_memory: i128,
        estimate: u64,
    },
    /// "Cannot auto-fit max_model_len ..."
    /// `bytes_per_block` is the worker's block: not even one token's block fits.
    AutoFit { worker: usize, bytes_per_block: u64 },
    /// An input vLLM itself would reject (no layers with a size, a zero block size).
    Invalid(String),
}

impl KvError {
    /// The message vLLM 0.33.0 raises, byte for byte.
    pub fn vllm_message(&self, version: VllmVersion) -> String {
        if !version.at_least(0, 14) {
            return self.message_before_0_14(version);
        }
        match self {
            KvError::NoMemory { .. } => "No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine (this flag also controls CPU memory reservation on the CPU backend, despite its name). See https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details.".to_string(),
            KvError::Capacity { max_model_len, needed, check_memory, estimate, .. } => {
                let models = if version.at_least(0, 22) { "model's" } else { "models's" };
                let estimate_sentence = if *estimate > 0 {
                    format!(" Based on the available memory, the estimated maximum model length is {estimate}.")
                } else {
                    String::new()
                };
                format!(
                    "To serve at least one request with the {models} max seq len ({max_model_len}), ({} GiB KV cache is needed, which is larger than the available KV cache memory ({} GiB).{estimate_sentence} Try increasing `gpu_memory_utilization` (which also controls CPU memory on the CPU backend) or decreasing `max_model_len` when initializing the engine. See https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details.",
                    format_gib(*needed as i128),
                    format_gib(*check_memory),
                )
            }
            KvError::AutoFit { .. } => "Cannot auto-fit max_model_len: not enough GPU memory available to serve even a single token. Try increasing `gpu_memory_utilization`.".to_string(),
            KvError::Invalid(m) => m.clone(),
        }
    }
}

impl KvError {
    /// vLLM 0.10.2 to 0.13.0's `check_enough_kv_cache_memory` (`vllm/v1/core/kv_cache_utils.py`):
    /// `%.2f` GiB figures, `"{estimated_msg} "` (two spaces when there is no estimate), and the
    /// conserving-memory link only in 0.13.0.
    fn message_before_0_14(&self, version: VllmVersion) -> String {
        let see = if version.at_least(0, 13) {
            " See https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details."
        } else {
            ""
        };
        let gib = |b: f64| super::units::py_fixed(b / super::units::GIB as f64, 2);
        match self {
            KvError::NoMemory { .. } => format!("No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine.{see}"),
            KvError::Capacity { max_model_len, needed, check_memory, estimate, .. } => {
                let estimated_msg = if *estimate > 0 {
                    format!("Based on the available memory, the estimated maximum model length is {estimate}.")
                } else {
                    String::new()
                };
                format!(
                    "To serve at least one request with the models's max seq len ({max_model_len}), ({} GiB KV cache is needed, which is larger than the available KV cache memory ({} GiB). {estimated_msg} Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.{see}",
                    gib(*needed as f64),
                    gib(*check_memory as f64),
                )
            }
            // No auto-fit before 0.14: `max-model-len auto` is refused before planning.
            KvError::AutoFit { .. } => "max_model_len auto (-1) is not supported before vLLM 0.14".to_string(),
            KvError::Invalid(m) => m.clone(),
        }
    }
}

impl fmt::Display for KvError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.vllm_message(VllmVersion::CURRENT))
    }
}

/// Page bytes of one attention layer at a block size: `num_heads * block_size * content`, or
/// the spec's own page when it has one.
pub fn attention_page(spec: &LayerSpec, block_size: u64) -> u64 {
    spec.fixed
        .map_or_else(|| spec.bytes_per_token() * block_size, |f| f.page)
}

/// A spec with its resolved page: what vLLM compares when it groups layers.
#[derive(Clone, Debug, PartialEq)]
struct Resolved {
    index: u32,
    kind: LayerKv,
    page: u64,
    block_size: u64,
    bytes_per_token: u64,
    /// (KV heads, bytes per head per token): part of the spec's identity, so two layers with
    /// equal pages but other shapes are different specs, as in vLLM.
    shape: (u64, u64),
}

/// `max_memory_usage_bytes(spec) / page` for one request, i.e. `cdiv(max_mem, page)`.
fn blocks_per_request(
    kind: &LayerKv,
    block_size: u64,
    max_model_len: u64,
    in_flight: u64,
    extra_retained: u64,
    disable_hybrid: bool,
) -> u64 {
    match kind {
        LayerKv::Full | LayerKv::Mla => cdiv(max_model_len, block_size),
        LayerKv::Sliding { window } | LayerKv::MlaSliding { window } => {
            if disable_hybrid {
                // unify_hybrid_kv_cache_specs turns the layer into a full-attention spec.
                return cdiv(max_model_len, block_size);
            }
            // SlidingWindowSpec.max_memory_usage_bytes: the window minus one, plus the tokens
            // retained for a multi-module drafter and the tokens in flight, never more than the
            // context; one extra block for a window crossing a block boundary.
            let tokens = (window.saturating_sub(1) + extra_retained + in_flight).min(max_model_len);
            cdiv(tokens, block_size) + 1
        }
        LayerKv::Chunked { chunk } => {
            if disable_hybrid {
                return cdiv(max_model_len, block_size);
            }
            cdiv((chunk + in_flight).min(max_model_len), block_size)
        }
        LayerKv::Mamba {
            blocks_per_request, ..
        } => *blocks_per_request,
    }
}

/// Every worker's KV layout (bytes per token, page, block, its own block count) whatever the
/// outcome: vLLM computes them before it checks any worker, so a failed sizing or capacity
/// check still has them. They depend on the layout alone (not on the length, the memory or an
/// override): read from a plan at one token with an override large enough that no check can
/// fail. Empty when the layout itself is invalid.
pub fn layouts(workers: &[WorkerKv], settings: &KvSettings) -> Vec<WorkerKvPlan> {
    let probe = KvSettings {
        max_model_len: MaxModelLen::Value(1),
        num_gpu_blocks_override: Some(1 << 40),
        ..settings.clone()
    };
    plan_kv(workers, &probe)
        .map(|p| p.workers)
        .unwrap_or_default()
}

/// Plans the KV cache of one engine: the same steps as
/// `EngineCore._initialize_kv_caches` → `get_kv_cache_configs` → `update_kv_cache_capacity`.
///
/// `workers` are the engine's ranks (TP x PP), each with its own layers and budget.
pub fn plan_kv(workers: &[WorkerKv], settings: &KvSettings) -> Result<KvPlan, KvError> {
    if workers.is_empty() {
        return Err(KvError::Invalid("the engine has no workers".into()));
    }
    if settings.block_size == 0 {
        return Err(KvError::Invalid("block-size must be at least 1".into()));
    }
    let bs = settings.block_size;
    let canon = canonical_workers(workers);
    let (all, page_of) = global_layers(workers, &canon, bs)?;
    let (raw_groups, padding_layers, uniform) = if settings.packed {
        let groups = packed_groups(&all, &page_of);
        let n = groups.len();
        (groups, 0, vec![true; n])
    } else {
        let (g, padding, uniform_type) = group_layers(&all, settings.disable_hybrid);
        let n = g.len();
        (g, padding, vec![uniform_type; n])
    };

    let (max_model_len_initial, auto_upper) = match settings.max_model_len {
        MaxModelLen::Value(v) => (v, None),
        MaxModelLen::Auto { upper } => (upper, Some(upper)),
    };
    if max_model_len_initial == 0 {
        return Err(KvError::Invalid("max-model-len must be at least 1".into()));
    }
    let (worker_bpb, worker_pages) =
        worker_blocks(workers, &canon, &raw_groups, &uniform, &page_of);
    let null_block = settings.version.at_least(0, 29);
    let mut available: Vec<i128> = workers.iter().map(|w| w.available).collect();
    // Each rank's own block count from its measured memory, before any override (what vLLM's
    // "Overriding num_gpu_blocks=N" line prints).
    let own_raw: Vec<u64> = available
        .iter()
        .zip(&worker_bpb)
        .map(|(a, bpb)| {
            if *bpb == 0 {
                0
            } else {
                (*a / i128::from(*bpb)).max(0) as u64
            }
        })
        .collect();
    if let Some(n) = settings.num_gpu_blocks_override {
        for (a, bpb) in available.iter_mut().zip(&worker_bpb) {
            *a = i128::from(n) * i128::from(*bpb);
        }
    }
    let check_memory: Vec<i128> = available
        .iter()
        .zip(&worker_bpb)
        .map(|(a, bpb)| if null_block { a - i128::from(*bpb) } else { *a })
        .collect();

    let fit = Fit {
        settings,
        groups: &raw_groups,
        canon: &canon,
        worker_bpb: &worker_bpb,
        check_memory: &check_memory,
    };
    let (max_model_len, auto_fit, auto_fit_worker) =
        fit.auto_fit(max_model_len_initial, auto_upper)?;
    fit.check_workers(max_model_len)?;

    let own: Vec<u64> = available
        .iter()
        .zip(&worker_bpb)
        .map(|(a, bpb)| {
            if *bpb == 0 {
                u64::MAX
            } else {
                (*a / i128::from(*bpb)).max(0) as u64
            }
        })
        .collect();
    let (limiting_worker, &num_blocks) = own
        .iter()
        .enumerate()
        .min_by_key(|(_, n)| **n)
        .expect("at least one worker");
    let blocks = fit.group_blocks(max_model_len);
    let blocks_per_request: u64 = blocks.iter().sum();
    let groups: Vec<KvGroup> = raw_groups
        .iter()
        .zip(&blocks)
        .zip(&uniform)
        .map(|(((k, members), b), uniform_type)| KvGroup {
            kind: k.kind.clone(),
            layer_indices: members.clone(),
            page_size: k.page,
            uniform_type: *uniform_type,
            block_size: k.block_size,
            blocks_per_request: *b,
        })
        .collect();
    let (max_concurrency, kv_cache_tokens) = capacity(
        num_blocks,
        &groups,
        blocks_per_request,
        max_model_len,
        settings.version,
    );

    let mut estimates: Vec<u64> = Vec::with_capacity(workers.len());
    for w in 0..workers.len() {
        let e = if worker_bpb[w] == 0 {
            0
        } else if fit.dup(w) {
            estimates[w - 1]
        } else {
            // vLLM's estimate searches up to the configured length (the model's own limit
            // under auto-fit, not the fitted result).
            fit.estimate(w, auto_upper.unwrap_or(max_model_len))
        };
        estimates.push(e);
    }
    let workers_out = worker_plans(
        workers,
        &fit,
        &available,
        &own_raw,
        &estimates,
        &worker_pages,
        max_model_len,
    );

    Ok(KvPlan {
        groups,
        workers: workers_out,
        max_model_len,
        auto_fit,
        auto_fit_worker,
        blocks_per_request,
        num_blocks,
        limiting_worker,
        kv_cache_tokens,
        max_concurrency,
        padding_layers,
    })
}

/// Identical neighbours (the TP ranks of a stage) hold the same layers: each worker's index of
/// the first of its run, so each is visited once.
fn canonical_workers(workers: &[WorkerKv]) -> Vec<usize> {
    let mut canon: Vec<usize> = Vec::with_capacity(workers.len());
    for w in 0..workers.len() {
        let c = if w > 0 && workers[w].layers == workers[w - 1].layers {
            canon[w - 1]
        } else {
            w
        };
        canon.push(c);
    }
    canon
}

/// The global set of layers, by index, each with its page resolved, and each index's page. A
/// layer lives on exactly one PP stage; TP ranks of a stage repeat the same indices.
fn global_layers(
    workers: &[WorkerKv],
    canon: &[usize],
    bs: u64,
) -> Result<(Vec<Resolved>, Vec<u64>), KvError> {
    // Resolve every layer's page. Attention pages follow the block size; Mamba pages are padded
    // to the attention page (hybrid alignment makes them equal).
    let attn_page_max = workers
        .iter()
        .flat_map(|w| w.layers.iter())
        .filter(|l| l.kind.is_attention())
        .map(|l| attention_page(l, bs))
        .max();
    let resolve = |l: &LayerSpec| -> Resolved {
        let page = if l.kind.is_attention() {
            attention_page(l, bs)
        } else {
            let state = l.mamba_state_bytes();
            attn_page_max.map_or(state, |a| a.max(state))
        };
        Resolved {
            index: l.index,
            kind: l.kind.clone(),
            page,
            block_size: l.fixed.map_or(bs, |f| f.block_size),
            bytes_per_token: l.bytes_per_token(),
            shape: (l.num_kv_heads, l.per_head_token_bytes),
        }
    };
    // The global layers, by index: a layer lives on one PP stage, and the TP ranks of a stage
    // repeat it.
    let max_index = workers
        .iter()
        .flat_map(|w| w.layers.iter().map(|l| l.index as usize))
        .max();
    let Some(max_index) = max_index else {
        return Err(KvError::Invalid(
            "the model has no layer with a KV cache".into(),
        ));
    };
    if max_index > 1 << 20 {
        return Err(KvError::Invalid(format!(
            "layer index {max_index} is beyond any model"
        )));
    }
    let mut by_index: Vec<Option<Resolved>> = vec![None; max_index + 1];
    for (w, wk) in workers.iter().enumerate() {
        if canon[w] != w {
            continue;
        }
        for l in &wk.layers {
            let slot = &mut by_index[l.index as usize];
            if slot.is_none() {
                *slot = Some(resolve(l));
            }
        }
    }
    let all: Vec<Resolved> = by_index.into_iter().flatten().collect();
    // Each layer's own page, by index: a block holds one page of every layer of a group.
    let mut page_of = vec![0u64; max_index + 1];
    for r in &all {
        page_of[r.index as usize] = r.page;
    }
    Ok((all, page_of))
}

/// What one block of a worker holds: runs of (layers, page bytes).
type BlockPages = Arc<[(u64, u64)]>;

/// Per worker: bytes per block is the largest group's page sum over the layers it holds
/// (padded groups are padded logically; the largest member count decides), and what one block
/// of that group holds, as runs of equal pages. Each layer brings its own page: equal within a
/// group, except in a UniformTypeKVCacheSpecs.
fn worker_blocks(
    workers: &[WorkerKv],
    canon: &[usize],
    raw_groups: &[(Resolved, Vec<u32>)],
    uniform: &[bool],
    page_of: &[u64],
) -> (Vec<u64>, Vec<BlockPages>) {
    let max_index = page_of.len() - 1;
    let mut worker_bpb: Vec<u64> = Vec::with_capacity(workers.len());
    let mut worker_pages: Vec<Arc<[(u64, u64)]>> = Vec::with_capacity(workers.len());
    for (w, wk) in workers.iter().enumerate() {
        if canon[w] != w {
            worker_bpb.push(worker_bpb[canon[w]]);
            worker_pages.push(Arc::clone(&worker_pages[canon[w]]));
            continue;
        }
        let mut held = vec![false; max_index + 1];
        for l in &wk.layers {
            held[l.index as usize] = true;
        }
        let mut best = (0u64, 0u64, None);
        for (g, (_, members)) in raw_groups.iter().enumerate() {
            let (mut sum, mut count) = (0u64, 0u64);
            for i in members.iter().filter(|i| held[**i as usize]) {
                sum += page_of[*i as usize];
                count += 1;
            }
            if sum > best.0 {
                best = (sum, count, Some(g));
            }
        }
        // What one block of the largest group holds, as runs of equal pages: one run unless
        // the group is a UniformTypeKVCacheSpecs.
        let mut runs: Vec<(u64, u64)> = Vec::with_capacity(2);
        match best.2 {
            Some(g) if uniform[g] => {
                for i in raw_groups[g].1.iter().filter(|i| held[**i as usize]) {
                    let page = page_of[*i as usize];
                    match runs.iter_mut().find(|(_, p)| *p == page) {
                        Some((n, _)) => *n += 1,
                        None => runs.push((1, page)),
                    }
                }
            }
            Some(_) => runs.push((best.1, best.0 / best.1.max(1))),
            None => {}
        }
        worker_bpb.push(best.0);
        worker_pages.push(runs.into());
    }
    (worker_bpb, worker_pages)
}

/// The length in force after auto-fit, the auto-fit's (upper, fitted), and the worker that
/// decided it.
type AutoFit = (u64, Option<(u64, u64)>, usize);

/// The global groups against each worker's memory: what a request at a length needs, and the
/// longest length that fits.
struct Fit<'a> {
    settings: &'a KvSettings,
    groups: &'a [(Resolved, Vec<u32>)],
    canon: &'a [usize],
    worker_bpb: &'a [u64],
    /// The memory each worker's checks compare with: available, less the null block (v0.29+).
    check_memory: &'a [i128],
}

impl Fit<'_> {
    /// Blocks one request at `len` tokens needs in a group.
    fn blocks_of(&self, k: &Resolved, len: u64) -> u64 {
        blocks_per_request(
            &k.kind,
            k.block_size,
            len,
            self.settings.max_in_flight_tokens,
            self.settings.extra_retained_tokens,
            self.settings.disable_hybrid,
        )
    }

    fn group_blocks(&self, len: u64) -> Vec<u64> {
        self.groups
            .iter()
            .map(|(k, _)| self.blocks_of(k, len))
            .collect()
    }

    /// _project_kv_cache_groups_to_worker keeps every global group on every worker (a group
    /// with none of this worker's layers stays, empty), so a request needs every group's
    /// blocks.
    fn needed_for(&self, w: usize, len: u64) -> u64 {
        let blocks: u64 = self
            .groups
            .iter()
            .map(|(k, _)| self.blocks_of(k, len))
            .sum();
        self.worker_bpb[w].saturating_mul(blocks)
    }

    /// A worker identical to its neighbour in layers and memory has the same outcome.
    fn dup(&self, w: usize) -> bool {
        w > 0
            && self.canon[w] == self.canon[w - 1]
            && self.check_memory[w] == self.check_memory[w - 1]
    }

    /// _estimate_max_model_len_from_groups: the largest length in [1, upper] that fits.
    fn estimate(&self, w: usize, upper: u64) -> u64 {
        let mem = self.check_memory[w];
        if mem <= 0 {
            return 0;
        }
        let (mut lo, mut hi, mut best) = (1u64, upper, 0u64);
        while lo <= hi {
            let mid = lo + (hi - lo) / 2;
            if i128::from(self.needed_for(w, mid)) <= mem {
                best = mid;
                lo = mid + 1;
            } else {
                hi = mid - 1;
            }
        }
        best
    }

    /// Auto-fit (v0.14+): the minimum over workers of the longest length that fits. Returns
    /// the length in force, the auto-fit's (upper, fitted) and the worker that decided it.
    fn auto_fit(
        &self,
        max_model_len_initial: u64,
        auto_upper: Option<u64>,
    ) -> Result<AutoFit, KvError> {
        let worker_bpb = self.worker_bpb;
        let mut max_model_len = max_model_len_initial;
        let mut auto_fit = None;
        let mut auto_fit_worker = 0;
        if let Some(upper) = auto_upper {
            let mut fit = upper;
            for (w, bpb) in worker_bpb.iter().enumerate() {
                if *bpb == 0 || self.dup(w) {
                    continue;
                }
                let e = self.estimate(w, upper);
                if e == 0 {
                    return Err(KvError::AutoFit {
                        worker: w,
                        bytes_per_block: *bpb,
                    });
                }
                if e < fit {
                    fit = e;
                    auto_fit_worker = w;
                }
            }
            auto_fit = Some((upper, fit));
            max_model_len = fit;
        }
        Ok((max_model_len, auto_fit, auto_fit_worker))
    }

    /// _check_enough_kv_cache_memory on every worker, in order.
    fn check_workers(&self, max_model_len: u64) -> Result<(), KvError> {
        let (worker_bpb, check_memory) = (self.worker_bpb, self.check_memory);
        for w in 0..worker_bpb.len() {
            if worker_bpb[w] == 0 || self.dup(w) {
                continue;
            }
            if check_memory[w] <= 0 {
                return Err(KvError::NoMemory {
                    worker: w,
                    bytes_per_block: worker_bpb[w],
                });
            }
            let needed = self.needed_for(w, max_model_len);
            if i128::from(needed) > check_memory[w] {
                return Err(KvError::Capacity {
                    worker: w,
                    max_model_len,
                    needed,
                    check_memory: check_memory[w],
                    estimate: self.estimate(w, max_model_len),
                });
            }
        }
        Ok(())
    }
}

/// Every worker's figures once the pool is sized.
#[allow(clippy::too_many_arguments)]
fn worker_plans(
    workers: &[WorkerKv],
    fit: &Fit,
    available: &[i128],
    own_raw: &[u64],
    estimates: &[u64],
    worker_pages: &[Arc<[(u64, u64)]>],
    max_model_len: u64,
) -> Vec<WorkerKvPlan> {
    let (worker_bpb, check_memory, bs) =
        (fit.worker_bpb, fit.check_memory, fit.settings.block_size);
    let needed_for = |w, len| fit.needed_for(w, len);
    workers
        .iter()
        .enumerate()
        .map(|(w, wk)| WorkerKvPlan {
            bytes_per_block: worker_bpb[w],
            available: available[w],
            check_memory: check_memory[w],
            needed: needed_for(w, max_model_len),
            num_blocks_own: own_raw[w],
            max_len_estimate: estimates[w],
            page_size: wk
                .layers
                .iter()
                .find(|l| l.kind.is_attention())
                .map_or(0, |l| attention_page(l, bs)),
            // Fixed pages: only the caches that grow with the context count per token (a
            // sliding window or a compressor state is bounded per request).
            bytes_per_token: wk
                .layers
                .iter()
                .filter(|l| l.kind.is_attention())
                .map(|l| l.bytes_per_token())
                .sum::<u64>()
                + wk.layers
                    .iter()
                    .filter_map(|l| {
                        l.fixed
                            .filter(|_| matches!(l.kind, LayerKv::Full | LayerKv::Mla))
                    })
                    .map(|f| f.page)
                    .sum::<u64>()
                    / bs,
            block_pages: Arc::clone(&worker_pages[w]),
        })
        .collect()
}

/// `get_max_concurrency_for_kv_cache_config` and the "GPU KV cache size" token figure, with the
/// float64 arithmetic vLLM uses (v0.21+: `int(concurrency * max_model_len)`; before,
/// `num_blocks // len(groups) * min(block_size)`).
fn capacity(
    num_blocks: u64,
    groups: &[KvGroup],
    blocks_per_request: u64,
    max_model_len: u64,
    version: VllmVersion,
) -> (f64, u64) {
    let concurrency = if blocks_per_request == 0 {
        0.0
    } else {
        num_blocks as f64 / blocks_per_request as f64
    };
    let tokens = if version.at_least(0, 21) {
        (concurrency * max_model_len as f64) as u64
    } else {
        let min_bs = groups.iter().map(|g| g.block_size).min().unwrap_or(1);
        num_blocks / groups.len().max(1) as u64 * min_bs
    };
    (concurrency, tokens)
}

/// `Platform._align_hybrid_block_size`: for attention + Mamba/linear-attention hybrids, the
/// attention block grows until one attention page holds a state page, in multiples of the
/// kernel alignment (`max(16, block_size)`, at least 128 for MLA hybrids, and in "align" mode
/// a multiple of the layers' prefill-checkpoint alignment, `checkpoints`, 1 when none), then
/// rounded to the backends' smallest common kernel block (16). A smaller requested block is
/// raised; a larger one stays. Returns the block size vLLM settles on.
///
/// ```
/// use headroom::calc::kv::align_hybrid_block_size;
/// // Qwen3-Next at TP 1: 2 KV heads x (256 + 256) x 2 B per token, a 1,097,728-byte state.
/// assert_eq!(align_hybrid_block_size(16, 2048, 1_097_728, false, 1), 544);
/// // On Hopper its FlashInfer prefill checkpoints every 64 tokens.
/// assert_eq!(align_hybrid_block_size(16, 2048, 1_097_728, false, 64), 576);
/// ```
pub fn align_hybrid_block_size(
    requested: u64,
    attn_page_per_token: u64,
    mamba_page: u64,
    mla: bool,
    checkpoints: u64,
) -> u64 {
    if mamba_page == 0 || attn_page_per_token == 0 {
        return requested;
    }
    let mut align = requested.max(16);
    if mla {
        align = align.max(128);
    }
    align = super::units::lcm(align, checkpoints.max(1));
    let block = align * cdiv(mamba_page, align * attn_page_per_token);
    let block = 16 * cdiv(block, 16);
    requested.max(block)
}
