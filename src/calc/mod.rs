//! The accounting: what vLLM does with GPU memory on every rank, phase by phase, and why.
//!
//! `plan(&Scenario) -> Result<Plan, CalcError>` is pure: no I/O, no serde, no UI types. It follows
//! vLLM 0.33.0's worker start-up (`../shared/reference/vllm-accounting.md`): the init check, the
//! load, profiling and the KV budget, the KV layout and the capacity check, with older releases'
//! rules where they differ.

pub mod backend;
pub mod decimal;
pub mod formula;
pub mod input;
pub mod kv;
pub mod model;
pub mod plan;
pub mod ranks;
pub mod runtime;
pub mod scenario;
pub mod solve;
pub mod sweep;
pub mod units;
pub mod version;
pub mod weights;

mod planner;

use std::fmt;

pub use input::Input;
pub use plan::{Check, LedgerLine, Phase, Plan, Provenance, RankPlan, ReplicaPlan, Term};
pub use planner::plan;
pub use scenario::Scenario;

/// A scenario `plan` cannot compute, naming the field (vLLM's flag name where it has one).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CalcError {
    field: &'static str,
    message: String,
}

impl CalcError {
    pub fn new(field: &'static str, message: impl Into<String>) -> CalcError {
        CalcError {
            field,
            message: message.into(),
        }
    }

    /// The flag or config field at fault, e.g. `tensor-parallel-size`.
    pub fn field(&self) -> &'static str {
        self.field
    }

    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for CalcError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for CalcError {}

/// `vllm/distributed/utils.py::get_pp_indices` for every stage: the layer count of each stage.
///
/// The default puts `L // pp` layers on each stage and gives the remainder, one layer each, to
/// the stages before the last (`partitions[-2], partitions[-3], ...`).
///
/// ```
/// use headroom::calc::pp_partition;
/// assert_eq!(pp_partition(43, 3, None).unwrap(), vec![14, 15, 14]);
/// assert_eq!(pp_partition(30, 4, None).unwrap(), vec![7, 8, 8, 7]);
/// ```
pub fn pp_partition(n_layers: u32, pp: u32, explicit: Option<&[u32]>) -> Result<Vec<u32>, String> {
    if pp == 0 {
        return Err("pipeline-parallel-size must be at least 1".into());
    }
    if let Some(parts) = explicit {
        // vLLM's own messages for a bad VLLM_PP_LAYER_PARTITION.
        if parts.len() != pp as usize {
            return Err(format!(
                "len(partitions)={} does not match pp_size={pp}.",
                parts.len()
            ));
        }
        let sum: u64 = parts.iter().map(|p| u64::from(*p)).sum();
        if sum != u64::from(n_layers) {
            return Err(format!(
                "sum(partitions)={sum} does not match num_hidden_layers={n_layers}."
            ));
        }
        return Ok(parts.to_vec());
    }
    let base = n_layers / pp;
    let mut parts = vec![base; pp as usize];
    let remaining = n_layers % pp;
    for i in 2..remaining + 2 {
        let idx = pp as usize - i as usize;
        parts[idx] += 1;
    }
    Ok(parts)
}

impl Scenario {
    /// A scenario with vLLM's defaults for this model on one such GPU.
    pub fn new(model: model::Model, gpu: scenario::Gpu) -> Scenario {
        Scenario {
            model,
            gpu,
            gpus: 1,
            parallel: scenario::Parallel::default(),
            engine: scenario::Engine::default(),
            runtime: scenario::Runtime::default(),
            unified: None,
            version: version::VllmVersion::CURRENT,
            average_request_len: None,
        }
    }
}

/// Sorts a short list (layer indices, batch sizes, sweep points) in place. Insertion sort:
/// linear on the already-sorted lists these usually are, and a few dozen bytes of wasm per
/// element type where the standard library's sorts are kilobytes each.
pub fn sort_small<T: PartialOrd + Copy>(v: &mut [T]) {
    for i in 1..v.len() {
        let x = v[i];
        let mut j = i;
        while j > 0 && v[j - 1] > x {
            v[j] = v[j - 1];
            j -= 1;
        }
        v[j] = x;
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn sort_small_sorts() {
        let mut v = [5u32, 1, 4, 1, 3, 9, 0];
        super::sort_small(&mut v);
        assert_eq!(v, [0, 1, 1, 3, 4, 5, 9]);
        let mut e: [f64; 0] = [];
        super::sort_small(&mut e);
        let mut f = [0.9, 0.5, 0.98];
        super::sort_small(&mut f);
        assert_eq!(f, [0.5, 0.9, 0.98]);
    }

    use super::*;

    #[test]
    fn pp_partitions_match_vllm() {
        assert_eq!(pp_partition(61, 2, None).unwrap(), vec![31, 30]);
        assert_eq!(pp_partition(62, 4, None).unwrap(), vec![15, 16, 16, 15]);
        assert_eq!(pp_partition(31, 4, None).unwrap(), vec![8, 8, 8, 7]);
        assert_eq!(pp_partition(80, 1, None).unwrap(), vec![80]);
        assert!(pp_partition(43, 3, Some(&[15, 15])).is_err());
        assert!(pp_partition(43, 3, Some(&[15, 15, 12])).is_err());
        assert_eq!(
            pp_partition(43, 3, Some(&[15, 16, 12])).unwrap(),
            vec![15, 16, 12]
        );
    }
}
