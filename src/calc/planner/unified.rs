//! The unified-memory gate (seed 002): a start gated on MemAvailable, checked before the launch.

use super::ledger::{amount, gib_text, line};
use crate::calc::plan::*;
use crate::calc::scenario::Scenario;
use crate::calc::units::{ceil_fraction, Bytes, Grouped};

/// Seed 002's start gate: needs = weights + drafter + KV pin + overhead + prefill + seats +
/// headroom, against MemAvailable on every box.
pub(super) fn unified_gate(
    s: &Scenario,
    u: &crate::calc::scenario::Unified,
    ranks: &[RankPlan],
    notes: &mut Vec<String>,
) -> UnifiedGate {
    let r = ranks
        .iter()
        .max_by_key(|r| {
            r.line(Term::Weights).map_or(0, |l| l.bytes)
                + r.line(Term::Drafter).map_or(0, |l| l.bytes)
        })
        .expect("at least one rank");
    let w = r.line(Term::Weights).cloned().expect("weights line");
    let d = r.line(Term::Drafter).cloned();
    let kv = match s.engine.kv_cache_memory_bytes {
        Some(k) => line(
            Term::KvPool,
            i128::from(k),
            || {
                format!(
                    "--kv-cache-memory-bytes {} = {}",
                    Grouped(i128::from(k)),
                    gib_text(i128::from(k))
                )
            },
            Provenance::Exact,
        ),
        None => line(
            Term::KvPool,
            r.available_kv,
            || "the budget's KV share (pin it with --kv-cache-memory-bytes on unified memory)",
            r.line(Term::AvailableKv)
                .map(|l| l.provenance.clone())
                .unwrap_or(Provenance::Exact),
        ),
    };
    let overhead = match &u.overhead {
        Some(o) => line(
            Term::OtherConsumption,
            i128::from(o.bytes.0),
            || "overhead: graphs, workspaces, activations (a remainder, not each part)",
            Provenance::Measured(o.source.clone().into()),
        ),
        None => {
            let sum = r.line(Term::Activation).map_or(0, |l| l.bytes)
                + r.line(Term::OtherConsumption).map_or(0, |l| l.bytes)
                + r.line(Term::CudaGraphs).map_or(0, |l| l.bytes);
            line(
                Term::OtherConsumption,
                sum,
                || "activation + other + graphs estimates",
                Provenance::Estimate("sum of the estimated runtime terms".into()),
            )
        }
    };
    let mut lines = vec![w, kv, overhead];
    if let Some(d) = d {
        lines.insert(1, d);
    }
    let extras =
        i128::from(u.prefill_term.0) + i128::from(u.seat_term.0) + i128::from(u.headroom.0);
    let held: i128 = lines.iter().map(|l| l.bytes).sum::<i128>();
    let needs: i128 = held + extras;
    let needs = needs.max(0) as u64;
    let ok = needs <= u.mem_available.bytes.0;
    let util = s.gpu_memory_utilization();
    let budget = ceil_fraction(s.gpu.total.0, util);
    let note = format!(
        "On unified memory, gpu-memory-utilization {util} asks for {} of the box's {} total, but the OS, page cache and other containers hold memory vLLM never subtracts: only {} is available. Pin the pool with --kv-cache-memory-bytes and gate the start on MemAvailable.",
        amount(i128::from(budget)),
        amount(i128::from(s.gpu.total.0)),
        amount(i128::from(u.mem_available.bytes.0))
    );
    if super::NOTES {
        notes.push(note.clone());
    }
    // The memory guard (seed 002) polls MemAvailable during the load and kills the rank after
    // three polls in a row under its threshold: what is left once the rank holds everything.
    let after_start = i128::from(u.mem_available.bytes.0) - held;
    UnifiedGate {
        lines,
        total: Bytes(held.max(0) as u64),
        needs: Bytes(needs),
        mem_available: u.mem_available.bytes,
        ok,
        utilization_note: Message::new(note),
        after_start,
        guard_threshold: u.guard_threshold,
        guard_ok: after_start >= i128::from(u.guard_threshold.0),
    }
}
