//! Solvers that answer "what setting would make this work": the largest KV pin, the smallest
//! utilization for N full-length requests, the longest max-model-len, a balanced PP split.
//! Each runs `plan` (or its pieces) repeatedly; none has arithmetic of its own beyond searching.

use super::plan::{Plan, Provenance, Term};
use super::planner::vllm_suggestion;
use super::scenario::{MaxLen, Scenario};
use super::units::Bytes;
use super::{plan, CalcError, Culprit, Input};

/// vLLM's suggestion log keeps 150 MiB spare; defined beside the log line it belongs to.
pub use super::planner::SUGGESTION_MARGIN;

/// How certain a solver's answer is: the provenance of every term the start rests on in the
/// plan with the answer applied (free memory, weights, drafter, other use, activation, graphs,
/// a measured overhead, and the pool). An answer computed from estimates is an estimate.
pub fn answer_provenance(p: &Plan) -> Provenance {
    let terms = [
        Term::FreeAtStart,
        Term::Weights,
        Term::Drafter,
        Term::OtherConsumption,
        Term::Activation,
        Term::CudaGraphs,
        Term::MeasuredOverhead,
    ];
    let mut parts: Vec<&Provenance> = p
        .ranks
        .iter()
        .flat_map(|r| terms.map(|t| r.line(t)))
        .flatten()
        .map(|l| &l.provenance)
        .collect();
    if let Some(r) = &p.replica {
        parts.push(&r.provenance);
    }
    Provenance::combine(&parts)
}

/// The largest `--kv-cache-memory-bytes` that still starts.
///
/// On unified memory, the start gate decides; otherwise every rank must hold its weights,
/// drafter, other consumption, activation peak, graphs and the pool in its free memory, less
/// vLLM's 150 MiB margin (the "to fully utilize gpu memory" suggestion).
pub fn largest_kv_pin(s: &Scenario) -> Result<u64, CalcError> {
    let p = plan(s)?;
    if let (Some(g), Some(u)) = (&p.unified, &s.unified) {
        let without_kv: i128 = g
            .lines
            .iter()
            .filter(|l| l.term != Term::KvPool)
            .map(|l| l.bytes)
            .sum::<i128>()
            + i128::from(u.prefill_term.0 + u.seat_term.0 + u.headroom.0);
        return Ok((i128::from(g.mem_available.0) - without_kv).max(0) as u64);
    }
    // vLLM's "to fully utilize gpu memory" figure with the graphs counted once: room for the
    // weights, drafter, other use, activation peak, graphs and the 150 MiB margin. The peak
    // only where the warm-up runs it again on top of the pool (the plan's own rule); elsewhere
    // the pool may take its room, and the plan starts.
    let eager = s.engine.enforce_eager;
    let warm_up = p.settings.warm_up_after_pool;
    let rooms: Vec<(i128, u64)> = p
        .ranks
        .iter()
        .map(|r| {
            let v = vllm_suggestion(r, eager);
            let peak = if warm_up {
                0
            } else {
                r.line(Term::Activation).map_or(0, |l| l.bytes)
            };
            (v.to_gpu + v.graphs + peak, r.bytes_per_block)
        })
        .collect();
    let best = rooms.iter().map(|(room, _)| *room).min().unwrap_or(0);
    // Where the pin already gives every rank the most blocks it holds (equal stages), it stays
    // the byte figure vLLM's own suggestion works in; only a larger block count moves it.
    let largest = rooms.iter().map(|(_, b)| *b).max().unwrap_or(0);
    let pin = match blocks_pin(s, &p, &rooms) {
        Some(more) if largest > 0 && more / i128::from(largest) > best / i128::from(largest) => {
            more
        }
        _ => best,
    };
    Ok(pin.max(0) as u64)
}

/// The pin as vLLM turns it into blocks, where stages differ: every rank's pool is the pin,
/// but from 0.11.2 each allocates only the minimum block count over ranks, `pin // the largest
/// block`, times its own block. A stage with fewer layers (a smaller block) then holds less
/// than the pin, and the pin may exceed its room: the largest pin is the one whose block count
/// fits every rank, `(N + 1) x largest block - 1` with `N = min(room // block)`. `None` where
/// the plan has no KV layout to read (a measured ratio, a start that stops before it) or the
/// release allocates every rank's own count (before 0.11.2), so the pin itself must fit.
fn blocks_pin(s: &Scenario, p: &Plan, rooms: &[(i128, u64)]) -> Option<i128> {
    if !s.version.shrinks_kv_tensors()
        || s.model.measured_kv.is_some()
        || p.replica.as_ref().is_some_and(|r| r.groups.is_empty())
    {
        return None;
    }
    let largest = rooms.iter().map(|(_, b)| *b).max()?;
    if largest == 0 || rooms.iter().any(|(room, _)| *room < 0) {
        return None;
    }
    let n = rooms
        .iter()
        .filter(|(_, b)| *b > 0)
        .map(|(room, b)| room / i128::from(*b))
        .min()?;
    Some((n + 1) * i128::from(largest) - 1)
}

/// What vLLM 0.33's own suggestion log ("`--kv-cache-memory=Y` to fully utilize gpu memory")
/// prints for this plan: the pin of [`largest_kv_pin`] less the CUDA graphs once more, because
/// the log counts them twice (in the peak, and as captured). `None` when vLLM prints no such
/// line: a pinned pool, another release, or no graphs.
pub fn vllm_suggested_kv_pin(s: &Scenario) -> Result<Option<u64>, CalcError> {
    if s.engine.kv_cache_memory_bytes.is_some()
        || s.unified.is_some()
        || s.engine.enforce_eager
        || s.version != super::version::VllmVersion::CURRENT
    {
        return Ok(None);
    }
    let p = plan(s)?;
    let mut best: Option<i128> = None;
    for r in &p.ranks {
        let v = vllm_suggestion(r, false);
        if v.graphs <= 0 {
            return Ok(None);
        }
        best = Some(best.map_or(v.to_gpu, |b| b.min(v.to_gpu)));
    }
    Ok(best.map(|b| b.max(0) as u64))
}

/// The smallest `--gpu-memory-utilization` (to 4 decimals) at which `n` full-length requests
/// fit at once, or `None` when even 1.0 does not hold them.
pub fn smallest_utilization_for(s: &Scenario, n: u64) -> Result<Option<f64>, CalcError> {
    let with = |u: u32| -> Result<Plan, CalcError> {
        let mut t = s.clone();
        t.engine.gpu_memory_utilization = Some(f64::from(u) / 10_000.0);
        t.engine.kv_cache_memory_bytes = None;
        plan(&t)
    };
    let init_ok = |p: &Plan| {
        p.checks
            .iter()
            .find(|c| c.phase == super::plan::Phase::Init)
            .is_some_and(|c| c.ok)
    };
    // A fraction above free / total fails the init check, so the pool only grows with the
    // fraction up to the largest one that passes it: search below that.
    let (mut lo, mut hi) = (1u32, 10_000u32);
    if !init_ok(&with(lo)?) {
        return Ok(None);
    }
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        if init_ok(&with(mid)?) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    let top = lo;
    let holds = |u: u32| -> Result<bool, CalcError> {
        let p = with(u)?;
        Ok(p.starts()
            && p.replica
                .as_ref()
                .is_some_and(|r| r.full_length_requests >= n))
    };
    if !holds(top)? {
        return Ok(None);
    }
    let (mut lo, mut hi) = (1u32, top);
    while lo < hi {
        let mid = (lo + hi) / 2;
        if holds(mid)? {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    Ok(Some(f64::from(lo) / 10_000.0))
}

/// The longest `--max-model-len` that starts, up to the model's own limit.
pub fn longest_max_model_len(s: &Scenario) -> Result<Option<u64>, CalcError> {
    let upper = s.model.max_position_embeddings.max(1);
    let starts = |len: u64| -> Result<bool, CalcError> {
        let mut t = s.clone();
        t.engine.max_model_len = MaxLen::Value(len);
        Ok(plan(&t)?.starts())
    };
    if !starts(1)? {
        return Ok(None);
    }
    let (mut lo, mut hi) = (1u64, upper);
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        if starts(mid)? {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    Ok(Some(lo))
}

/// A PP split that balances weight across stages when the last stage carries extras.
#[derive(Clone, Debug, PartialEq)]
pub struct BalancedSplit {
    /// Extras on the last stage (drafter, head) in layer-equivalents.
    pub extras_layers: f64,
    /// `L` in `(pp - 1) L + (L - extras) = layers`.
    pub per_stage: f64,
    /// `L - extras`: what the last stage should hold.
    pub last_stage: f64,
    /// An integer split: the last stage rounded, the rest spread as vLLM spreads a remainder.
    pub partition: Vec<u32>,
    /// The equation with the numbers, for the explanation.
    pub equation: String,
}

/// Something that lives only on the last stage (a drafter, the LM head), counted in decoder
/// layers: `extra / per_layer` (seed 000: 12 GiB / 3.33 GiB = 3.6 layers). The input to
/// [`balanced_partition`].
///
/// ```
/// use headroom::calc::solve::layer_equivalents;
/// use headroom::calc::units::{Bytes, GIB};
/// let x = layer_equivalents(Bytes(12 * GIB), Bytes(3 * GIB)).unwrap();
/// assert_eq!(x, 4.0);
/// ```
pub fn layer_equivalents(extra: Bytes, per_layer: Bytes) -> Result<f64, CalcError> {
    if per_layer.0 == 0 {
        return Err(CalcError::new(
            Culprit::SolverArg("per-layer weights"),
            "a decoder layer of 0 bytes cannot measure anything in layers",
        ));
    }
    Ok(extra.0 as f64 / per_layer.0 as f64)
}

/// Solves `(pp - 1) L + (L - extras) = layers` (seed 000: `2L + (L - 3.6) = 43`), keeping at
/// least `pinned_last` layers on the last stage (layers a drafter reads).
///
/// ```
/// use headroom::calc::solve::balanced_partition;
/// let b = balanced_partition(43, 3, 3.6, 3).unwrap();
/// assert_eq!(b.partition, vec![15, 16, 12]);
/// // Extras heavier than a stage's share still leave the last stage one layer.
/// assert_eq!(balanced_partition(32, 2, 200.0, 0).unwrap().partition, vec![31, 1]);
/// ```
pub fn balanced_partition(
    layers: u32,
    pp: u32,
    extras_layers: f64,
    pinned_last: u32,
) -> Result<BalancedSplit, CalcError> {
    if pp == 0 || pp > layers {
        return Err(CalcError::new(
            Input::Pp,
            format!("pipeline-parallel-size {pp} must be between 1 and the {layers} layers"),
        ));
    }
    if !(extras_layers.is_finite() && extras_layers >= 0.0) {
        return Err(CalcError::new(
            Culprit::SolverArg("extras"),
            "last-stage extras must be a finite, non-negative number of layers",
        ));
    }
    if pp > 1 && pinned_last > layers - (pp - 1) {
        return Err(CalcError::new(
            Culprit::SolverArg("for"),
            format!(
                "{pinned_last} layers cannot be pinned to the last stage: with {pp} stages of at least one layer each, it holds at most {} of the {layers}",
                layers - (pp - 1)
            ),
        ));
    }
    let per_stage = (f64::from(layers) + extras_layers) / f64::from(pp);
    let last = per_stage - extras_layers;
    // Every stage keeps at least one layer: extras heavier than a stage's share would
    // otherwise leave the last stage empty, a rank that holds the head and nothing else.
    let last_int = (last.round().max(1.0) as u32)
        .max(pinned_last)
        .min(layers - (pp - 1));
    let rest = layers - last_int;
    // The remainder goes to the stages nearest the last one, as vLLM's default split does.
    let mut parts = Vec::with_capacity(pp as usize);
    if pp > 1 {
        let n = pp - 1;
        parts = vec![rest / n; n as usize];
        for i in 0..(rest % n) as usize {
            parts[n as usize - 1 - i] += 1;
        }
        parts.push(last_int);
    } else {
        parts.push(layers);
    }
    let mut equation =
        format!(
        "{}L + (L - {extras_layers:.1}) = {layers}  =>  L = {per_stage:.1}, last stage = {last:.1}",
        if pp == 2 { String::new() } else { (pp - 1).to_string() }
    );
    if pp > 1 && pinned_last > 1 && f64::from(pinned_last) > last.round() {
        equation.push_str(&format!(
            "; the last stage keeps the {pinned_last} layers pinned to it"
        ));
    } else if pp > 1 && last < 0.5 && pinned_last <= 1 {
        equation.push_str(
            "; the extras outweigh a stage's share, so the last stage keeps the one layer every stage needs",
        );
    }
    Ok(BalancedSplit {
        extras_layers,
        per_stage,
        last_stage: last,
        partition: parts,
        equation,
    })
}
