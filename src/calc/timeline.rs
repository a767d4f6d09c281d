//! A rank's start-up as a timeline: for each of vLLM's phases, in order, the memory in use at
//! that moment against the GPU's physical capacity and against the utilization budget, the
//! knobs that act there, and whether the phase passed, failed or was never reached.
//!
//! Nothing here is new accounting: every figure is a ledger line, a rank's field or a check the
//! planner already wrote, read when a view asks (`Plan::timeline`), so `plan` costs no more.

use super::input::Input;
use super::plan::{Phase, Plan, Provenance, RankPlan, Term};

/// vLLM's start-up phases as a timeline shows them. `Phase` names the checks; the timeline
/// adds the moments between them (the profile run, serving) and splits none.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum StartPhase {
    /// `request_memory`: free memory at the snapshot against `ceil(total x utilization)`.
    InitCheck,
    /// `load_model`: the weights (and drafter), with any load-time transient, against the
    /// physical free memory.
    LoadWeights,
    /// `profile_run`: a batch of max-num-batched-tokens on top of the weights and the other use.
    Profile,
    /// `determine_available_memory`: what the budget leaves for the KV cache, or the pin.
    KvSizing,
    /// `_check_enough_kv_cache_memory`: one request at max-model-len against the pool.
    Capacity,
    /// The KV pool allocated, the warm-up and the CUDA graphs captured, for real.
    Allocation,
    /// Started: what stays held while the engine serves.
    Serving,
}

impl StartPhase {
    /// Every phase, in the order a start meets them.
    pub const ALL: [StartPhase; 7] = [
        StartPhase::InitCheck,
        StartPhase::LoadWeights,
        StartPhase::Profile,
        StartPhase::KvSizing,
        StartPhase::Capacity,
        StartPhase::Allocation,
        StartPhase::Serving,
    ];

    pub fn key(self) -> &'static str {
        match self {
            StartPhase::InitCheck => "init",
            StartPhase::LoadWeights => "load",
            StartPhase::Profile => "profile",
            StartPhase::KvSizing => "kv_sizing",
            StartPhase::Capacity => "capacity",
            StartPhase::Allocation => "allocation",
            StartPhase::Serving => "serving",
        }
    }

    /// The inputs that act in this phase (the README's table, one phase at a time): the
    /// utilization acts on the init check and KV sizing only, `--kv-cache-memory-bytes` on KV
    /// sizing, `--max-num-batched-tokens` on the profile run, `--enforce-eager` on the graphs,
    /// `--max-model-len` on the capacity check, not on the pool.
    pub fn knobs(self) -> &'static [Input] {
        match self {
            StartPhase::InitCheck => &[Input::Util, Input::Tenants],
            StartPhase::LoadWeights => &[
                Input::Tp,
                Input::Pp,
                Input::PpPartition,
                Input::Quantization,
                Input::Ep,
                Input::Spec,
            ],
            StartPhase::Profile => &[Input::MaxNumBatchedTokens],
            StartPhase::KvSizing => &[Input::Util, Input::KvBytes],
            StartPhase::Capacity => &[Input::MaxModelLen, Input::KvDtype],
            StartPhase::Allocation => &[Input::Eager],
            StartPhase::Serving => &[],
        }
    }

    /// The phase of the check that decides this one, if a check does (the profile run's is the
    /// pinned pool's, filed under KV sizing; serving has none).
    fn check_phase(self) -> Option<Phase> {
        match self {
            StartPhase::InitCheck => Some(Phase::Init),
            StartPhase::LoadWeights => Some(Phase::Load),
            StartPhase::Profile => None,
            StartPhase::KvSizing => Some(Phase::KvSizing),
            StartPhase::Capacity => Some(Phase::Capacity),
            StartPhase::Allocation => Some(Phase::Allocation),
            StartPhase::Serving => None,
        }
    }
}

/// How a phase went on one rank.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PhaseState {
    Ok,
    Fail,
    /// An earlier phase failed (on this rank or another), or, in the engine core's checks,
    /// vLLM stopped at an earlier rank; or the unified-memory gate kept vLLM from launching.
    NotReached,
}

/// The memory of one rank at one phase. `held` is what the worker holds above the snapshot;
/// `in_use` adds what was in use before it (context, NCCL, other processes).
#[derive(Clone, Debug, PartialEq)]
pub struct PhaseMemory {
    /// Device memory in use at the phase's peak.
    pub in_use: i128,
    /// What this worker holds at the phase's peak, above the snapshot.
    pub held: i128,
    /// The part of `held` that is transient: the load-time peak above the weights, the
    /// profile run's activation, the warm-up's activation during graph capture.
    pub transient: i128,
    /// The KV cache at this phase: the available (or pinned) memory at KV sizing, the pool
    /// from the capacity check on.
    pub kv: i128,
    /// The GPU's total as the driver reports it.
    pub capacity: i128,
    /// `ceil(total x utilization)`.
    pub budget: i128,
    /// As certain as the least certain figure it reads.
    pub provenance: Provenance,
}

impl PhaseMemory {
    /// Physical memory left at the phase's peak (negative: out of memory).
    pub fn free(&self) -> i128 {
        self.capacity - self.in_use
    }

    /// The budget left beside what the worker holds and the KV cache (negative: past the
    /// fraction, which only the init check and KV sizing enforce).
    pub fn budget_left(&self) -> i128 {
        self.budget - self.held - self.kv
    }
}

/// One phase of one rank's start.
#[derive(Clone, Debug, PartialEq)]
pub struct PhaseMoment {
    pub phase: StartPhase,
    pub state: PhaseState,
    /// `None` where the planner has no figures for the moment: the capacity check, the
    /// allocation and serving when no pool was sized.
    pub memory: Option<PhaseMemory>,
    /// The inputs that act in this phase.
    pub knobs: &'static [Input],
}

impl Plan {
    /// The start of rank `rank` phase by phase (`StartPhase::ALL` order), read from its ledger
    /// and the plan's checks; `None` for a rank the plan does not have.
    pub fn timeline(&self, rank: u32) -> Option<[PhaseMoment; 7]> {
        let r = self.ranks.get(rank as usize)?;
        let gate_refused = self
            .checks
            .iter()
            .any(|c| c.phase == Phase::UnifiedGate && !c.ok);
        let pool_sized = self.replica.is_some();
        Some(StartPhase::ALL.map(|phase| PhaseMoment {
            phase,
            state: if gate_refused {
                PhaseState::NotReached
            } else {
                self.state_on(r, phase)
            },
            memory: memory_at(r, phase, pool_sized, self.settings.warm_up_after_pool),
            knobs: phase.knobs(),
        }))
    }

    /// A phase's state on a rank: phases before the one the start stopped at passed; the one
    /// it stopped at failed on the ranks whose own figures fail it (for the engine core's KV
    /// checks, which run rank by rank, at the rank vLLM stopped at, later ranks not reached);
    /// later phases were not reached.
    fn state_on(&self, r: &RankPlan, phase: StartPhase) -> PhaseState {
        let Some(stop) = self.stopped_at else {
            return PhaseState::Ok;
        };
        if phase < stop {
            return PhaseState::Ok;
        }
        if phase > stop {
            return PhaseState::NotReached;
        }
        let at = self
            .checks
            .iter()
            .find(|c| !c.ok && Some(c.phase) == stop.check_phase())
            .and_then(|c| c.rank);
        let fails = match stop {
            StartPhase::InitCheck => r.line_bytes(Term::FreeAtStart) < r.line_bytes(Term::Budget),
            StartPhase::LoadWeights => r.load_headroom < 0,
            StartPhase::Profile => r.profile_headroom() < 0,
            StartPhase::Allocation => r.allocation_headroom(self.settings.warm_up_after_pool) < 0,
            StartPhase::KvSizing | StartPhase::Capacity => match at {
                Some(k) if r.rank > k => return PhaseState::NotReached,
                Some(k) => r.rank == k,
                None => true,
            },
            // Serving follows a start; nothing stops there.
            StartPhase::Serving => false,
        };
        if fails {
            PhaseState::Fail
        } else {
            PhaseState::Ok
        }
    }
}

/// The memory of rank `r` at `phase`, from its ledger.
fn memory_at(
    r: &RankPlan,
    phase: StartPhase,
    pool_sized: bool,
    warm_up: bool,
) -> Option<PhaseMemory> {
    let get = |t: Term| r.line_bytes(t);
    let prov = |terms: &[Term]| {
        let parts: Vec<&Provenance> = terms
            .iter()
            .filter_map(|t| r.line(*t))
            .map(|l| &l.provenance)
            .collect();
        Provenance::combine(&parts)
    };
    let pre = get(Term::PreSnapshot);
    let free0 = get(Term::FreeAtStart);
    let weights = get(Term::Weights) + get(Term::Drafter);
    let other = get(Term::OtherConsumption);
    let act = get(Term::Activation);
    let at = |held: i128, transient: i128, kv: i128, provenance: Provenance| PhaseMemory {
        in_use: pre + held,
        held,
        transient,
        kv,
        capacity: get(Term::Total),
        budget: get(Term::Budget),
        provenance,
    };
    Some(match phase {
        StartPhase::InitCheck => at(0, 0, 0, prov(&[Term::PreSnapshot])),
        StartPhase::LoadWeights => {
            let need = i128::from(r.load_need.0);
            at(
                need,
                need - weights,
                0,
                prov(&[
                    Term::PreSnapshot,
                    Term::Weights,
                    Term::Drafter,
                    Term::LoadPeak,
                ]),
            )
        }
        StartPhase::Profile => at(
            weights + other + act,
            act,
            0,
            prov(&[
                Term::PreSnapshot,
                Term::Weights,
                Term::Drafter,
                Term::OtherConsumption,
                Term::Activation,
            ]),
        ),
        StartPhase::KvSizing => at(
            weights + other,
            0,
            r.available_kv,
            prov(&[
                Term::PreSnapshot,
                Term::Weights,
                Term::Drafter,
                Term::OtherConsumption,
                Term::AvailableKv,
            ]),
        ),
        StartPhase::Capacity if pool_sized => at(
            weights + other,
            0,
            i128::from(r.kv_pool.0),
            prov(&[
                Term::PreSnapshot,
                Term::Weights,
                Term::Drafter,
                Term::OtherConsumption,
                Term::KvPool,
            ]),
        ),
        StartPhase::Allocation if pool_sized => {
            let peak = free0 - r.allocation_headroom(warm_up);
            let warm = if warm_up { act.max(0) } else { 0 };
            at(
                peak,
                warm,
                i128::from(r.kv_pool.0),
                prov(&[Term::PreSnapshot, Term::FreeAfterStart, Term::Activation]),
            )
        }
        StartPhase::Serving if pool_sized => at(
            free0 - r.free_after_start,
            0,
            i128::from(r.kv_pool.0),
            prov(&[Term::PreSnapshot, Term::FreeAfterStart]),
        ),
        StartPhase::Capacity | StartPhase::Allocation | StartPhase::Serving => return None,
    })
}
