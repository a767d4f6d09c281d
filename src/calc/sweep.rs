//! The two sweeps the page draws: maximum concurrency against max-model-len, and the limiting
//! rank's KV pool against gpu-memory-utilization. Each point is one `plan` of the scenario with
//! that one setting changed, so a point says exactly what the plan at that setting says.
//!
//! They live in `calc` so every view (the page's charts and tables today, the CLI or JSON
//! tomorrow) reads the same points, and so they are tested natively without a browser.

use super::plan::{Provenance, Term};
use super::scenario::{MaxLen, Scenario};
use super::{plan, sort_small};

/// One point of the concurrency sweep: max-model-len and the plan's maximum concurrency.
#[derive(Clone, Debug, PartialEq)]
pub struct LenPoint {
    pub max_model_len: u64,
    /// vLLM's maximum concurrency; where the capacity check fails, the share of one request
    /// the pool holds (below 1); 0 where the start fails before a pool is sized.
    pub max_concurrency: f64,
    pub starts: bool,
    /// The phase that stops the start, if one does (its label).
    pub fails_at: Option<&'static str>,
    /// How certain the figure is: the pool's provenance.
    pub provenance: Provenance,
}

/// One point of the pool sweep: utilization and the limiting rank's KV pool.
#[derive(Clone, Debug, PartialEq)]
pub struct PoolPoint {
    pub utilization: f64,
    /// The pool; where none was sized (the start failed before or at the capacity check),
    /// what KV sizing had on the smallest rank, so the curve shows where it crosses.
    pub kv_pool: u64,
    /// Whether a pool was sized (a start can still fail when it is allocated).
    pub sized: bool,
    /// The phase that stops the start, if one does (its label).
    pub fails_at: Option<&'static str>,
    /// How certain the figure is: its line's provenance (the pool's, or the available KV's).
    pub provenance: Provenance,
}

/// Lengths the concurrency sweep plans: powers of two from 1,024 up to the model's limit, and
/// the current max-model-len.
fn sweep_lengths(s: &Scenario, current: u64) -> Vec<u64> {
    let limit = s.model.max_position_embeddings.max(current).max(1_024);
    let mut lens: Vec<u64> = (10..=40)
        .map(|p| 1u64 << p)
        .take_while(|l| *l <= limit)
        .collect();
    if !lens.contains(&limit) {
        lens.push(limit);
    }
    if !lens.contains(&current) {
        lens.push(current);
    }
    sort_small(&mut lens);
    lens
}

/// The max-model-len the sweep adds to its lengths: the flag, else the model's default (`auto`
/// adds the default too).
pub fn current_max_model_len(s: &Scenario) -> u64 {
    match s.engine.max_model_len {
        MaxLen::Value(v) => v,
        MaxLen::ModelDefault | MaxLen::Auto => s.model.default_max_model_len(),
    }
}

/// Maximum concurrency against max-model-len: `plan` at each length. A length whose start
/// fails stays in, with the share of a request its pool holds (the capacity check's figures)
/// or 0 (a start that fails before the pool is sized); lengths the planner refuses (past the
/// model's limit) are left out.
///
/// ```
/// use headroom::calc::{model::Model, scenario::Gpu, sweep, units::{Bytes, GIB}, Scenario};
/// let gpu = Gpu {
///     id: "test".into(),
///     name: "80 GiB".into(),
///     total: Bytes(80 * GIB),
///     total_confirmed: true,
///     unified_memory: false,
///     compute_capability: (9, 0),
/// };
/// let pts = sweep::len_sweep(&Scenario::new(Model::example_dense(), gpu));
/// assert_eq!(pts.first().map(|p| p.max_model_len), Some(1_024));
/// assert!(pts.windows(2).all(|w| w[1].max_concurrency <= w[0].max_concurrency));
/// ```
pub fn len_sweep(s: &Scenario) -> Vec<LenPoint> {
    let current = current_max_model_len(s);
    let mut probe = s.clone();
    sweep_lengths(s, current)
        .into_iter()
        .filter_map(|len| {
            probe.engine.max_model_len = MaxLen::Value(len);
            let p = plan(&probe).ok()?;
            let fails_at = p.first_failure().map(|c| c.phase.label());
            Some(match p.replica.as_ref() {
                Some(r) => LenPoint {
                    max_model_len: len,
                    max_concurrency: r.max_concurrency,
                    starts: p.starts(),
                    fails_at,
                    provenance: r.provenance.clone(),
                },
                None => LenPoint {
                    max_model_len: len,
                    max_concurrency: p.capacity_fraction.unwrap_or(0.0),
                    starts: false,
                    fails_at,
                    provenance: p
                        .limiting_rank()
                        .or_else(|| p.ranks.iter().min_by_key(|r| r.available_kv))
                        .and_then(|r| r.line(Term::AvailableKv))
                        .map_or(Provenance::Exact, |l| l.provenance.clone()),
                },
            })
        })
        .collect()
}

/// Utilizations the pool sweep plans: 0.50 to 0.98 in steps of 0.04, and the current one.
const SWEEP_UTILS: [f64; 13] = [
    0.50, 0.54, 0.58, 0.62, 0.66, 0.70, 0.74, 0.78, 0.82, 0.86, 0.90, 0.94, 0.98,
];

/// The limiting rank's KV pool against gpu-memory-utilization: `plan` at each fraction.
pub fn pool_sweep(s: &Scenario) -> Vec<PoolPoint> {
    let mut probe = s.clone();
    let current = s.gpu_memory_utilization();
    let mut utils: Vec<f64> = SWEEP_UTILS.to_vec();
    if !utils.iter().any(|u| (u - current).abs() < 1e-9) {
        utils.push(current);
        sort_small(&mut utils);
    }
    utils
        .into_iter()
        .filter_map(|u| {
            probe.engine.gpu_memory_utilization = Some(u);
            let p = plan(&probe).ok()?;
            // No limiting rank: the start failed before a pool was sized (none is allocated);
            // the point shows what KV sizing had on the smallest rank instead.
            let rank = p.limiting_rank();
            let smallest = p.ranks.iter().min_by_key(|r| r.available_kv);
            let (kv_pool, line) = match rank {
                Some(r) => (r.kv_pool.0, r.line(Term::KvPool)),
                None => (
                    smallest.map_or(0, |r| r.available_kv.max(0) as u64),
                    smallest.and_then(|r| r.line(Term::AvailableKv)),
                ),
            };
            Some(PoolPoint {
                utilization: u,
                kv_pool,
                sized: rank.is_some(),
                fails_at: p.first_failure().map(|c| c.phase.label()),
                provenance: line.map_or(Provenance::Exact, |l| l.provenance.clone()),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calc::model::Model;
    use crate::calc::scenario::Gpu;
    use crate::calc::units::{Bytes, GIB};

    fn scenario(gib: u64) -> Scenario {
        let gpu = Gpu {
            id: "test".into(),
            name: "test GPU".into(),
            total: Bytes(gib * GIB),
            total_confirmed: true,
            unified_memory: false,
            compute_capability: (9, 0),
        };
        Scenario::new(Model::example_dense(), gpu)
    }

    #[test]
    fn lengths_are_powers_of_two_up_to_the_limit_with_the_current_one() {
        let s = scenario(80);
        let powers: Vec<u64> = (10..=17).map(|p| 1u64 << p).collect();
        assert_eq!(sweep_lengths(&s, 131_072), powers);
        let mut with_current = powers.clone();
        with_current.insert(6, 40_000);
        assert_eq!(sweep_lengths(&s, 40_000), with_current);
        // A current length past the model's limit becomes the limit.
        let mut past = powers;
        past.push(200_000);
        assert_eq!(sweep_lengths(&s, 200_000), past);
    }

    #[test]
    fn the_current_point_is_in_both_sweeps() {
        let mut s = scenario(80);
        s.engine.max_model_len = MaxLen::Value(40_000);
        s.engine.gpu_memory_utilization = Some(0.925);
        let lens = len_sweep(&s);
        assert!(lens.iter().any(|p| p.max_model_len == 40_000));
        let pool = pool_sweep(&s);
        assert_eq!(pool.len(), SWEEP_UTILS.len() + 1);
        assert!(pool.iter().any(|p| p.utilization == 0.925));
        assert!(pool.windows(2).all(|w| w[0].utilization < w[1].utilization));
        // Each point is the plan at its own setting.
        for p in &pool {
            s.engine.gpu_memory_utilization = Some(p.utilization);
            let plan = plan(&s).unwrap();
            assert_eq!(p.sized, plan.replica.is_some());
            if let Some(r) = plan.limiting_rank() {
                assert_eq!(p.kv_pool, r.kv_pool.0);
            }
        }
        // A fraction on the grid is not planned twice.
        s.engine.gpu_memory_utilization = Some(0.9);
        assert_eq!(pool_sweep(&s).len(), SWEEP_UTILS.len());
    }

    #[test]
    fn without_the_flag_the_release_default_is_current() {
        let s = scenario(80);
        assert_eq!(s.gpu_memory_utilization(), s.version.default_utilization());
        assert_eq!(current_max_model_len(&s), 131_072);
    }

    #[test]
    fn a_gpu_too_small_for_the_weights_sizes_no_pool() {
        // 8B parameters in bf16 are about 15 GiB: a 16 GiB GPU has no KV memory at low
        // fractions, and no point sizes a pool there.
        let pts = pool_sweep(&scenario(16));
        assert!(!pts.is_empty());
        let low = &pts[0];
        assert_eq!(low.utilization, 0.5);
        assert!(!low.sized);
        assert_eq!(low.kv_pool, 0);
        assert!(low.fails_at.is_some());
        assert!(len_sweep(&scenario(16)).iter().all(|p| !p.starts));
    }

    #[test]
    fn failing_lengths_stay_in_with_the_share_of_a_request_they_hold() {
        // 8B on a 24 GiB GPU: about 5 GiB of KV, 40k tokens; 131,072 fails the capacity check.
        let mut s = scenario(24);
        s.engine.max_model_len = MaxLen::Value(131_072);
        let pts = len_sweep(&s);
        assert_eq!(pts.last().map(|p| p.max_model_len), Some(131_072));
        let last = &pts[pts.len() - 1];
        assert!(!last.starts && last.fails_at.is_some());
        assert!(
            last.max_concurrency > 0.0 && last.max_concurrency < 1.0,
            "{last:?}"
        );
        let plan = plan(&s).unwrap();
        assert_eq!(Some(last.max_concurrency), plan.capacity_fraction);
        assert!(pts[0].starts && pts[0].max_concurrency > 1.0);
        assert!(pts
            .windows(2)
            .all(|w| w[1].max_concurrency <= w[0].max_concurrency));
    }
}
