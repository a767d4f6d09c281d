//! The accounting: what vLLM does with GPU memory on every rank, phase by phase, and why.
//!
//! `plan(&Scenario) -> Result<Plan, CalcError>` is pure: no I/O, no serde, no UI types. It follows
//! vLLM 0.33.0's worker start-up (`../shared/reference/vllm-accounting.md`): the init check, the
//! load, profiling and the KV budget, the KV layout and the capacity check, with older releases'
//! rules where they differ.

pub mod architectures;
pub mod backend;
pub mod blocks;
pub mod decimal;
pub mod formula;
pub mod input;
pub mod kv;
pub mod model;
pub mod plan;
pub mod plausible;
pub mod ranks;
pub mod runtime;
pub mod scenario;
pub mod solve;
pub mod sweep;
pub mod timeline;
pub mod units;
pub mod version;
pub mod weight_format;
pub mod weights;

mod error;
mod parallel;
mod planner;
mod util;

pub use error::{CalcError, Culprit};
pub use input::Input;
pub use parallel::pp_partition;
pub use plan::{Check, LedgerLine, Phase, Plan, Provenance, RankPlan, ReplicaPlan, Term};
pub use planner::{plan, settings};
pub use scenario::Scenario;
pub use util::{clipped, quoted, sort_by_less, sort_small};
