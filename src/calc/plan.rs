//! The `Plan`: what `calc::plan` returns and every view formats. Per-rank ledgers, the replica's
//! KV pool, the checks in phase order, demand, and the log lines vLLM would print.
//!
//! Views never compute: every figure they show is a field here, with its formula and provenance.

use std::borrow::Cow;
use std::sync::Arc;

use super::formula::Formula;
pub use super::kv::KvGroup;
use super::scenario::AttentionBackend;
use super::timeline::StartPhase;
use super::units::{human, Bytes, UnitSystem};
use super::version::VllmVersion;

/// Where a figure came from. Every ledger line carries one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Provenance {
    /// Exact arithmetic on exact inputs: what vLLM computes, to the byte.
    Exact,
    /// An estimate; the text states the assumption it rests on. (`Arc<str>`: the TP ranks of
    /// a stage share their ledgers' text, so a plan's copies cost no allocation.)
    Estimate(Arc<str>),
    /// A value the user gave or read from a log; the text says which.
    Measured(Arc<str>),
}

impl Provenance {
    /// `exact`, `estimate` or `measured`: the badge and the JSON value.
    pub fn label(&self) -> &'static str {
        match self {
            Provenance::Exact => "exact",
            Provenance::Estimate(_) => "estimate",
            Provenance::Measured(_) => "measured",
        }
    }

    /// The assumption or the measurement's origin, empty for exact figures.
    pub fn basis(&self) -> &str {
        match self {
            Provenance::Exact => "",
            Provenance::Estimate(s) | Provenance::Measured(s) => s,
        }
    }

    /// Exact only when every input is exact; otherwise the first non-exact input's kind.
    pub fn combine(parts: &[&Provenance]) -> Provenance {
        // A basis that is already "derived from ..." is kept as is (the same shared text), so
        // chains of derived figures neither stack the prefix nor copy the text.
        let derived = |prefix: &'static str, p: &Provenance| -> Arc<str> {
            match p {
                Provenance::Estimate(b) | Provenance::Measured(b)
                    if b.starts_with("derived from") =>
                {
                    Arc::clone(b)
                }
                Provenance::Estimate(b) | Provenance::Measured(b) => derived_text(prefix, b),
                Provenance::Exact => Arc::from(prefix),
            }
        };
        if let Some(m) = parts.iter().find(|p| matches!(p, Provenance::Estimate(_))) {
            return Provenance::Estimate(derived("derived from an estimate: ", m));
        }
        if let Some(m) = parts.iter().find(|p| matches!(p, Provenance::Measured(_))) {
            return Provenance::Measured(derived("derived from a measured value: ", m));
        }
        Provenance::Exact
    }
}

/// "derived from an estimate: " + basis. A plan derives the same basis for every rank and many
/// lines, so the last result is kept (with its source, so the pointer stays that source's).
fn derived_text(prefix: &'static str, basis: &Arc<str>) -> Arc<str> {
    type Memo = Option<(&'static str, Arc<str>, Arc<str>)>;
    thread_local! {
        static LAST: std::cell::RefCell<Memo> = const { std::cell::RefCell::new(None) };
    }
    LAST.with(|last| {
        let mut last = last.borrow_mut();
        if let Some((p, src, out)) = last.as_ref() {
            if std::ptr::eq(*p, prefix) && Arc::ptr_eq(src, basis) {
                return Arc::clone(out);
            }
        }
        let mut text = String::with_capacity(prefix.len() + basis.len());
        text.push_str(prefix);
        text.push_str(basis);
        let out: Arc<str> = Arc::from(text);
        *last = Some((prefix, Arc::clone(basis), Arc::clone(&out)));
        out
    })
}

/// What a ledger line is: the closed set of terms a rank's memory is made of.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Term {
    /// The driver's total (`cudaMemGetInfo`).
    Total,
    /// In use before vLLM's init snapshot: CUDA context, NCCL, cuBLAS handles, other tenants.
    PreSnapshot,
    /// Free at the init snapshot.
    FreeAtStart,
    /// `ceil(total x gpu_memory_utilization)`.
    Budget,
    /// Weights: the input embedding.
    WeightsEmbedding,
    /// Weights: the decoder layers of this stage.
    WeightsLayers,
    /// Weights: final norm and LM head.
    WeightsHead,
    /// Weights: the vision encoder and its projector (multimodal models, where built).
    WeightsVision,
    /// The target model's weights on this rank: what "Model loading took" prints, except on a
    /// last stage with a drafter, where vLLM's figure also counts the drafter.
    Weights,
    /// The speculative drafter's weights (last stage only).
    Drafter,
    /// The load-time transient peak above the weights (e.g. an expert repack).
    LoadPeak,
    /// The profile run's activation peak above the resting allocation.
    Activation,
    /// Persistent non-weight consumption after the snapshot (runner buffers, workspaces).
    OtherConsumption,
    /// CUDA-graph memory.
    CudaGraphs,
    /// "Available KV cache memory".
    AvailableKv,
    /// The allocated KV tensor: `num_blocks x bytes_per_block`.
    KvPool,
    /// Budget not given to the KV pool because of block rounding and the min across ranks.
    KvRoundingSlack,
    /// Total minus budget: memory vLLM never plans to touch.
    OutsideBudget,
    /// On a unified-memory box with a measured overhead (seed 002): everything a started rank
    /// holds besides weights, drafter and the pool (graphs, workspaces, activations).
    MeasuredOverhead,
    /// Free on the device once the engine has started.
    FreeAfterStart,
}

impl Term {
    /// Stable snake_case key for JSON, URLs and `data-testid`s.
    pub fn key(self) -> &'static str {
        match self {
            Term::Total => "total",
            Term::PreSnapshot => "pre_snapshot",
            Term::FreeAtStart => "free_at_start",
            Term::Budget => "budget",
            Term::WeightsEmbedding => "weights_embedding",
            Term::WeightsLayers => "weights_layers",
            Term::WeightsHead => "weights_head",
            Term::WeightsVision => "weights_vision",
            Term::Weights => "weights",
            Term::Drafter => "drafter",
            Term::LoadPeak => "load_peak",
            Term::Activation => "activation",
            Term::OtherConsumption => "other_consumption",
            Term::CudaGraphs => "cuda_graphs",
            Term::AvailableKv => "available_kv",
            Term::KvPool => "kv_pool",
            Term::KvRoundingSlack => "kv_rounding_slack",
            Term::OutsideBudget => "outside_budget",
            Term::MeasuredOverhead => "measured_overhead",
            Term::FreeAfterStart => "free_after_start",
        }
    }

    /// A short human name.
    pub fn label(self) -> &'static str {
        match self {
            Term::Total => "GPU total (driver)",
            Term::PreSnapshot => "In use before the init snapshot",
            Term::FreeAtStart => "Free at the init snapshot",
            Term::Budget => "Budget: ceil(total x utilization)",
            Term::WeightsEmbedding => "Weights: embedding",
            Term::WeightsLayers => "Weights: decoder layers",
            Term::WeightsHead => "Weights: final norm + LM head",
            Term::WeightsVision => "Weights: vision encoder + projector",
            Term::Weights => "Weights (Model loading took)",
            Term::Drafter => "Drafter weights",
            Term::LoadPeak => "Load-time transient peak",
            Term::Activation => "Activation peak (profile run)",
            Term::OtherConsumption => "Other consumption after the snapshot",
            Term::CudaGraphs => "CUDA graphs",
            Term::AvailableKv => "Available KV cache memory",
            Term::KvPool => "KV pool (allocated)",
            Term::KvRoundingSlack => "Left unused by the pool (block rounding, smallest rank)",
            Term::OutsideBudget => "Outside the budget",
            Term::MeasuredOverhead => "Overhead once started (measured)",
            Term::FreeAfterStart => "Free after start",
        }
    }
}

/// One figure: its value, the formula with the numbers substituted, and where it came from.
#[derive(Clone, Debug, PartialEq)]
pub struct LedgerLine {
    pub term: Term,
    /// Signed: an overspent budget shows as a negative available figure, as vLLM computes it.
    pub bytes: i128,
    pub formula: Formula,
    pub provenance: Provenance,
}

/// One GPU of the TP x PP grid.
#[derive(Clone, Debug, PartialEq)]
pub struct RankPlan {
    /// Rank within the engine: `pp_rank * tp + tp_rank`.
    pub rank: u32,
    pub tp_rank: u32,
    pub pp_rank: u32,
    /// Decoder layers `[start, end)` of this stage.
    pub layers: (u32, u32),
    pub holds_embedding: bool,
    pub holds_head: bool,
    pub holds_drafter: bool,
    /// The ledger, in the order a reader should meet it.
    pub ledger: Vec<LedgerLine>,
    /// Weights on this rank (what "Model loading took" prints).
    pub weights: Bytes,
    pub budget: Bytes,
    pub available_kv: i128,
    /// KV heads this rank stores per layer (`max(1, kv_heads / tp)`, 1 for MLA).
    pub kv_heads: u64,
    pub kv_bytes_per_token: u64,
    pub page_size: u64,
    pub bytes_per_block: u64,
    /// This rank's own `available // bytes_per_block`, before the minimum.
    pub num_blocks_own: u64,
    /// The KV tensor this rank allocates: `replica num_blocks x bytes_per_block`.
    pub kv_pool: Bytes,
    /// Free memory once started (negative: the start fails for lack of memory).
    pub free_after_start: i128,
    /// What loading needs at its peak: weights + drafter + the load-time transient. The
    /// utilization fraction does not cap this phase; physical free memory does.
    pub load_need: Bytes,
    /// Free at the init snapshot minus `load_need` (negative: loading runs out of memory).
    pub load_headroom: i128,
}

impl RankPlan {
    /// The ledger line for a term, if this rank has one.
    pub fn line(&self, term: Term) -> Option<&LedgerLine> {
        self.ledger.iter().find(|l| l.term == term)
    }

    /// The bytes of a term's line; 0 when the rank has none (an absent term holds nothing).
    pub fn line_bytes(&self, term: Term) -> i128 {
        self.line(term).map_or(0, |l| l.bytes)
    }

    /// What the profile run leaves above its activation peak: free at the snapshot less the
    /// weights, drafter and other use, less the activation (negative: the pass runs out of
    /// memory, which only a pinned pool lets happen, as the budget would leave no KV memory).
    pub fn profile_headroom(&self) -> i128 {
        let get = |t: Term| self.line_bytes(t);
        get(Term::FreeAtStart)
            - get(Term::Weights)
            - get(Term::Drafter)
            - get(Term::OtherConsumption)
            - get(Term::Activation)
    }

    /// What stays free once the pool is allocated and the graphs captured, less the warm-up's
    /// activation peak when it runs between them (`Settings::warm_up_after_pool`); negative:
    /// the allocation runs out of memory.
    pub fn allocation_headroom(&self, warm_up: bool) -> i128 {
        let act = if warm_up {
            self.line(Term::Activation).map_or(0, |l| l.bytes.max(0))
        } else {
            0
        };
        self.free_after_start - act
    }
}

/// The whole replica (one engine; each DP rank is its own copy).
#[derive(Clone, Debug, PartialEq)]
pub struct ReplicaPlan {
    /// `num_blocks`: the minimum over ranks (includes the null block).
    pub num_blocks: u64,
    /// The rank whose `available / bytes_per_block` decided `num_blocks`.
    pub limiting_rank: u32,
    pub block_size: u64,
    pub groups: Vec<KvGroup>,
    pub blocks_per_request: u64,
    pub max_model_len: u64,
    /// "GPU KV cache size: N tokens".
    pub kv_cache_tokens: u64,
    /// "Maximum concurrency for L tokens per request: X".
    pub max_concurrency: f64,
    /// Whole requests at max-model-len that fit at once: `floor((num_blocks - 1) / blocks_per_request)`.
    pub full_length_requests: u64,
    pub provenance: Provenance,
    /// Data-parallel replicas: each has the same plan.
    pub data_parallel: u32,
}

impl ReplicaPlan {
    /// Whether vLLM's concurrency figure counts a whole request more than fits: it divides
    /// every block, the null block included, and whole requests get the others (a pool of
    /// exactly two requests' blocks reads 2.00x and holds one).
    pub fn null_block_costs_a_request(&self) -> bool {
        self.num_blocks > 0 && (self.max_concurrency as u64) > self.full_length_requests
    }

    /// Whether the printed token figure is smaller than the whole requests that fit hold: vLLM
    /// 0.20 and older print `num_blocks // groups x block_size`, which a pool of several groups
    /// (sliding windows needing fewer blocks) outgrows.
    pub fn tokens_below_whole_requests(&self) -> bool {
        u128::from(self.full_length_requests) * u128::from(self.max_model_len)
            > u128::from(self.kv_cache_tokens)
    }
}

/// Where a resolved engine setting came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// The user's flag, taken as given.
    Given,
    /// vLLM's default for this release, GPU or model.
    Default,
    /// A value Headroom assumes where vLLM has no default of its own (one speculative token
    /// when the count is not given).
    Assumed,
    /// vLLM replaced the given or default value: an MLA block forced before 0.18, a hybrid
    /// model's block raised to fit its state page.
    Adjusted,
}

/// One resolved engine setting: the value in force, where it came from, and why in words.
#[derive(Clone, Debug, PartialEq)]
pub struct Setting<T> {
    pub value: T,
    pub origin: Origin,
    /// The flag, or whose default or adjustment (`vLLM's default from 0.20`).
    pub basis: Cow<'static, str>,
}

/// The engine settings the planner resolved, so a view shows what a start runs with without
/// repeating the planner's rules.
///
/// ```
/// use headroom::calc::model::Model;
/// use headroom::calc::plan::Origin;
/// use headroom::calc::scenario::Gpu;
/// use headroom::calc::units::Bytes;
/// use headroom::calc::{plan, Scenario};
/// let gpu = Gpu { id: "h100".into(), name: "H100".into(), total: Bytes(85_029_158_912),
///     total_confirmed: false, unified_memory: false, compute_capability: (9, 0) };
/// let p = plan(&Scenario::new(Model::example_dense(), gpu)).unwrap();
/// assert_eq!(p.settings.gpu_memory_utilization.value, 0.92);
/// assert_eq!(p.settings.gpu_memory_utilization.origin, Origin::Default);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    /// `--gpu-memory-utilization` in force: given, or the release's default.
    pub gpu_memory_utilization: Setting<f64>,
    /// The release's default utilization (0.92 from vLLM 0.20, 0.90 before), given or not.
    pub default_utilization: f64,
    /// `--max-num-seqs`: given, or vLLM's default for this GPU (clamped to the batched tokens).
    pub max_num_seqs: Setting<u64>,
    /// `--max-num-batched-tokens`: given, or vLLM's default for this GPU (clamped to
    /// max-num-seqs x max-model-len).
    pub max_num_batched_tokens: Setting<u64>,
    /// The max-model-len the defaults and estimates read: given, the model's own, or (auto)
    /// the upper bound of the fit; the length in force after auto-fit is the replica's.
    pub max_model_len: Setting<u64>,
    /// The attention block size: given or the backend's, possibly forced or raised by vLLM.
    pub block_size: Setting<u64>,
    /// The attention backend where the plan depends on it: the one selected, DeepSeek-V4's by
    /// GPU, or DeepSeek-V3.2's sparse MLA backend by GPU and dtype; `None` where vLLM's own
    /// choice is not modelled.
    pub attention_backend: Option<Setting<AttentionBackend>>,
    /// The tokens in flight: `max_concurrent_batches x max-num-batched-tokens` (v0.26+), which
    /// bounds a sliding-window layer's blocks.
    pub in_flight_tokens: u64,
    /// `num_speculative_tokens`; `None` without speculative decoding.
    pub num_speculative_tokens: Option<Setting<u64>>,
    /// Between the pool and the graphs vLLM warms up with a batch of max-num-batched-tokens
    /// (FlashInfer's autotune: from 0.20, on SM 9.0 and later, not on ROCm, not where a
    /// measured overhead stands for the activations), so the activation peak returns then.
    pub warm_up_after_pool: bool,
}

/// The phases of a start, in order. Each check names the knobs that act on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Unified-memory boxes: the operator's start gate against MemAvailable.
    UnifiedGate,
    /// `request_memory`: free at the snapshot >= ceil(total x utilization).
    Init,
    /// Loading weights (and transient peaks) against physical free memory.
    Load,
    /// Profiling: is anything left for the KV cache?
    KvSizing,
    /// Can one request at max-model-len fit in the pool?
    Capacity,
    /// Allocating the KV pool, then capturing CUDA graphs, against physical free memory. The
    /// budget does not guard this phase when the pool is pinned with `--kv-cache-memory-bytes`,
    /// or (before v0.20) for the graphs, which lie outside the budget.
    Allocation,
}

impl Phase {
    pub fn key(self) -> &'static str {
        match self {
            Phase::UnifiedGate => "unified_gate",
            Phase::Init => "init",
            Phase::Load => "load",
            Phase::KvSizing => "kv_sizing",
            Phase::Capacity => "capacity",
            Phase::Allocation => "allocation",
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Phase::UnifiedGate => "the unified-memory start gate",
            Phase::Init => "the init check",
            Phase::Load => "model loading",
            Phase::KvSizing => "KV cache sizing",
            Phase::Capacity => "the capacity check",
            Phase::Allocation => "allocating the KV cache and CUDA graphs",
        }
    }
}

/// One check, passed or failed.
#[derive(Clone, Debug, PartialEq)]
pub struct Check {
    pub phase: Phase,
    pub ok: bool,
    /// The deciding rank, when one rank decides.
    pub rank: Option<u32>,
    /// A plain-language sentence: what was compared, with numbers. It reads as text in GiB;
    /// [`Message::render`] writes its byte amounts in GB instead.
    pub message: Message,
    /// The error vLLM itself would raise, byte for byte, when it fails.
    pub vllm_error: Option<String>,
    /// Flags that act on this phase, and flags that do not (the common misconception).
    pub knobs: Vec<&'static str>,
    pub not_knobs: Vec<&'static str>,
}

impl Check {
    /// The rank a view names beside the phase: none when the sentence starts with it already
    /// ("rank 2: ...").
    pub fn rank_to_name(&self) -> Option<u32> {
        self.rank
            .filter(|r| !self.message.starts_with(&format!("rank {r}")))
    }
}

/// A check's sentence with its byte amounts kept as bytes, so a view writes them in the
/// reader's unit. It derefs to the text in GiB (vLLM's unit).
///
/// ```
/// use headroom::calc::plan::Message;
/// use headroom::calc::units::UnitSystem;
/// let m = Message::new(format!("{} free", Message::amount(1 << 30)));
/// assert_eq!(&*m, "1.00 GiB free");
/// assert_eq!(m.render(UnitSystem::Decimal), "1.07 GB free");
/// // Amounts below 0.005 of the unit are written in bytes.
/// let tiny = Message::new(format!("{} free", Message::amount(4096)));
/// assert_eq!(&*tiny, "4,096 B free");
/// ```
#[derive(Clone, Debug)]
pub struct Message {
    /// The sentence with each amount as `\u{E000}bytes\u{E001}` (private-use characters).
    marked: String,
    /// The sentence in GiB, written on first read (a sweep plans thousands nobody reads).
    text: std::sync::OnceLock<String>,
}

impl PartialEq for Message {
    fn eq(&self, other: &Self) -> bool {
        self.marked == other.marked
    }
}

const OPEN: char = '\u{E000}';
const CLOSE: char = '\u{E001}';

impl Message {
    /// A sentence whose amounts were written with [`Message::amount`].
    pub fn new(marked: String) -> Message {
        Message {
            marked,
            text: std::sync::OnceLock::new(),
        }
    }

    /// The sentence in GiB, vLLM's unit.
    fn text(&self) -> &str {
        self.text
            .get_or_init(|| Message::write(&self.marked, UnitSystem::Binary))
    }

    /// A byte amount inside a sentence for [`Message::new`].
    pub fn amount(bytes: i128) -> String {
        format!("{OPEN}{bytes}{CLOSE}")
    }

    /// The sentence with its amounts in `unit` (GiB or GB, two decimals).
    pub fn render(&self, unit: UnitSystem) -> String {
        match unit {
            UnitSystem::Binary => self.text().to_string(),
            UnitSystem::Decimal => Message::write(&self.marked, unit),
        }
    }

    fn write(marked: &str, unit: UnitSystem) -> String {
        let mut out = String::with_capacity(marked.len());
        let mut rest = marked;
        while let Some(i) = rest.find(OPEN) {
            out.push_str(&rest[..i]);
            let after = &rest[i + OPEN.len_utf8()..];
            let end = after.find(CLOSE).unwrap_or(after.len());
            // Written by `amount` as an optional '-' and digits.
            let text = &after[..end];
            let magnitude = text.bytes().filter(u8::is_ascii_digit).fold(0i128, |n, d| {
                n.saturating_mul(10).saturating_add(i128::from(d - b'0'))
            });
            let bytes = if text.starts_with('-') {
                -magnitude
            } else {
                magnitude
            };
            let shown = human(bytes, unit);
            // An amount too small for two decimals reads as "0.00 GiB" beside others that do
            // too: say it in bytes.
            if bytes != 0 && shown.trim_start_matches('-').starts_with("0.00 ") {
                out.push_str(&format!("{} B", super::units::Grouped(bytes)));
            } else {
                out.push_str(&shown);
            }
            rest = after.get(end + CLOSE.len_utf8()..).unwrap_or("");
        }
        out.push_str(rest);
        out
    }
}

impl From<String> for Message {
    fn from(marked: String) -> Message {
        Message::new(marked)
    }
}

impl From<&str> for Message {
    fn from(text: &str) -> Message {
        Message::new(text.to_string())
    }
}

/// The empty sentence.
impl Default for Message {
    fn default() -> Message {
        Message::new(String::new())
    }
}

impl std::ops::Deref for Message {
    type Target = str;
    fn deref(&self) -> &str {
        self.text()
    }
}

impl std::fmt::Display for Message {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.text())
    }
}

/// Demand: what the scheduler could ask for, against the pool (demand, not a reservation).
#[derive(Clone, Debug, PartialEq)]
pub struct Demand {
    pub max_num_seqs: u64,
    pub max_num_batched_tokens: u64,
    /// Bytes on the limiting rank for one request at max-model-len (block-rounded).
    pub per_request_bytes: u64,
    /// `max_num_seqs` requests at max-model-len on the limiting rank: `max_num_seqs x
    /// per_request_bytes` (windows and states cap what their layers keep).
    pub all_seqs_bytes: u128,
    /// The same across every rank of the replica.
    pub all_seqs_bytes_replica: u128,
    /// KV bytes per token summed over every rank of the replica (the whole model's KV per
    /// position when each rank holds its share of the heads).
    pub kv_bytes_per_token_replica: u128,
    /// The pool on the limiting rank.
    pub pool_bytes: u64,
    /// Concurrent requests at an average length (given or max-model-len / 4).
    pub average_len: u64,
    pub concurrency_at_average: f64,
    /// How certain the per-request and demand bytes are: exact block arithmetic on the model's
    /// shape, or the measured KV ratio's provenance. (`pool_bytes` and `concurrency_at_average`
    /// come from the pool: the replica's provenance.)
    pub provenance: Provenance,
}

/// The unified-memory start gate (GB10-style boxes), as seed 002 describes it.
#[derive(Clone, Debug, PartialEq)]
pub struct UnifiedGate {
    pub lines: Vec<LedgerLine>,
    /// What one rank holds: the sum of `lines` (weights + drafter + KV pin + overhead).
    pub total: Bytes,
    /// `total` + prefill and seat terms + the start headroom.
    pub needs: Bytes,
    pub mem_available: Bytes,
    pub ok: bool,
    /// Why `--gpu-memory-utilization` misfires here, with this box's numbers.
    pub utilization_note: Message,
    /// MemAvailable left once the rank holds `total` (negative: it cannot).
    pub after_start: i128,
    /// The memory guard's threshold: a rank is killed below it during the load.
    pub guard_threshold: Bytes,
    /// Whether `after_start` stays at or above the guard's threshold.
    pub guard_ok: bool,
}

/// Everything `plan()` found.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    pub version: VllmVersion,
    pub tp: u32,
    pub pp: u32,
    pub dp: u32,
    pub pp_partition: Vec<u32>,
    pub gpu_memory_utilization: f64,
    pub ranks: Vec<RankPlan>,
    /// `None` when planning stopped before KV sizing (the engine does not start).
    pub replica: Option<ReplicaPlan>,
    pub checks: Vec<Check>,
    pub demand: Option<Demand>,
    pub unified: Option<UnifiedGate>,
    /// What vLLM would print, in order.
    pub log_lines: Vec<String>,
    /// Where the figures in `log_lines` come from: they print the weights, the available KV
    /// memory and the pool, so they are estimates whenever those are.
    pub log_provenance: Provenance,
    /// Teaching notes: a sentence per non-obvious fact this scenario shows.
    pub notes: Vec<Message>,
    /// The engine settings the start runs with, and where each came from.
    pub settings: Settings,
    /// The phase of vLLM's start that fails, if one does (the unified-memory gate, which is
    /// the operator's, is only in `checks`); `Plan::timeline` reads it.
    pub stopped_at: Option<StartPhase>,
    /// The weight estimate against the count the model's name states or its checkpoint's
    /// total_size, when they disagree by more than 25 % (`calc::plausible`).
    pub weights_check: Option<super::plausible::WeightsCheck>,
    /// When vLLM 0.33.0 has no model class for the config's architecture (removed, or never
    /// registered): the verdict's short sentence (`calc::architectures`).
    pub architecture_note: Option<String>,
    /// The scenario in words, for a verdict that says what it is about: the model and its
    /// weight format, the GPUs, the grid and the flags that differ from vLLM's defaults.
    pub scenario: String,
    /// Where the capacity check fails: the share of one max-model-len request the smallest
    /// pool holds (vLLM's available KV memory / the memory one request needs, below 1).
    pub capacity_fraction: Option<f64>,
}

impl Plan {
    /// True when every check passes.
    pub fn starts(&self) -> bool {
        self.checks.iter().all(|c| c.ok)
    }

    /// The first failing check, in phase order.
    pub fn first_failure(&self) -> Option<&Check> {
        self.checks.iter().find(|c| !c.ok)
    }

    /// The outcome in a few words, for views that set plans side by side: the failing phase
    /// and its rank, or what the started pool holds with its provenance.
    pub fn outcome(&self) -> String {
        match (self.first_failure(), &self.replica) {
            (Some(c), _) => format!(
                "fails at {}{}",
                c.phase.label(),
                c.rank.map(|r| format!(" (rank {r})")).unwrap_or_default()
            ),
            (None, Some(r)) => format!(
                "starts: {:.2} full-length requests of {} tokens ({})",
                r.max_concurrency,
                super::units::thousands(u128::from(r.max_model_len)),
                r.provenance.label()
            ),
            (None, None) => "starts".into(),
        }
    }

    /// The rank that decides the outcome: the first failing check's, else the one whose pool
    /// bounds the replica (none when neither names a rank).
    pub fn deciding_rank(&self) -> Option<u32> {
        self.first_failure()
            .and_then(|c| c.rank)
            .or(self.replica.as_ref().map(|r| r.limiting_rank))
    }

    /// The rank whose pool decides the replica's (none when no pool was sized).
    pub fn limiting_rank(&self) -> Option<&RankPlan> {
        self.replica
            .as_ref()
            .and_then(|r| self.ranks.get(r.limiting_rank as usize))
    }
}
