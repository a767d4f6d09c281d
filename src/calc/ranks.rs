//! Which ranks are identical: the one rule every view uses to show one ledger (or one bar) for
//! several TP ranks of a stage instead of repeating the same figures.
//!
//! Ranks share a group when they are consecutive, on the same pipeline stage, and every figure
//! a view prints for a rank is equal: the whole ledger (term, bytes, formula, provenance), the
//! layers and what the stage holds, and the KV layout (heads per layer, bytes per token, page,
//! block, blocks of its own). A view that prints a rank's group prints the first rank's
//! figures under the group's label, so any figure left out of the comparison would be shown
//! for ranks whose own figure differs.

use super::plan::{Plan, RankPlan};

/// Consecutive ranks of one stage with identical figures, and the first one's plan, which
/// stands for all of them.
#[derive(Clone, Debug, PartialEq)]
pub struct RankGroup<'a> {
    /// The ranks, in order (at least one).
    pub ranks: Vec<u32>,
    /// The first rank's plan; every rank in `ranks` has the same figures.
    pub plan: &'a RankPlan,
}

impl RankGroup<'_> {
    /// The first rank of the group.
    pub fn first(&self) -> u32 {
        self.ranks.first().copied().unwrap_or(self.plan.rank)
    }

    /// The last rank of the group.
    pub fn last(&self) -> u32 {
        self.ranks.last().copied().unwrap_or(self.plan.rank)
    }
}

/// Whether two ranks print the same figures, so one ledger can stand for both.
pub fn same_figures(a: &RankPlan, b: &RankPlan) -> bool {
    a.pp_rank == b.pp_rank
        && a.layers == b.layers
        && a.holds_embedding == b.holds_embedding
        && a.holds_head == b.holds_head
        && a.holds_drafter == b.holds_drafter
        && a.ledger == b.ledger
        && a.kv_heads == b.kv_heads
        && a.kv_bytes_per_token == b.kv_bytes_per_token
        && a.page_size == b.page_size
        && a.bytes_per_block == b.bytes_per_block
        && a.num_blocks_own == b.num_blocks_own
}

impl Plan {
    /// The ranks in order, consecutive ranks with the same figures ([`same_figures`]) in one
    /// group. Stages never share a group, so stages that differ are shown apart.
    ///
    /// ```
    /// use headroom::calc::{model::Model, scenario::{Gpu, Parallel}, units::{Bytes, GIB}};
    /// use headroom::calc::{plan, Scenario};
    /// let gpu = Gpu {
    ///     id: "test".into(),
    ///     name: "80 GiB".into(),
    ///     total: Bytes(80 * GIB),
    ///     total_confirmed: true,
    ///     unified_memory: false,
    ///     compute_capability: (9, 0),
    /// };
    /// let mut s = Scenario::new(Model::example_dense(), gpu);
    /// s.parallel = Parallel { tp: 2, pp: 2, ..Parallel::default() };
    /// s.gpus = 4;
    /// let groups: Vec<Vec<u32>> = plan(&s).unwrap().rank_groups().into_iter().map(|g| g.ranks).collect();
    /// assert_eq!(groups, [vec![0, 1], vec![2, 3]]);
    /// ```
    pub fn rank_groups(&self) -> Vec<RankGroup<'_>> {
        let mut out: Vec<RankGroup<'_>> = Vec::new();
        for r in &self.ranks {
            if let Some(last) = out.last_mut() {
                if same_figures(last.plan, r) {
                    last.ranks.push(r.rank);
                    continue;
                }
            }
            out.push(RankGroup {
                ranks: vec![r.rank],
                plan: r,
            });
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calc::model::Model;
    use crate::calc::plan::{Provenance, Term};
    use crate::calc::scenario::{Gpu, Parallel};
    use crate::calc::units::{Bytes, GIB};
    use crate::calc::{plan, Scenario};

    fn plan_of(tp: u32, pp: u32) -> Plan {
        let gpu = Gpu {
            id: "test".into(),
            name: "test GPU".into(),
            total: Bytes(80 * GIB),
            total_confirmed: true,
            unified_memory: false,
            compute_capability: (9, 0),
        };
        let mut s = Scenario::new(Model::example_dense(), gpu);
        s.parallel = Parallel {
            tp,
            pp,
            ..Parallel::default()
        };
        s.gpus = tp * pp;
        plan(&s).unwrap()
    }

    fn ranks(p: &Plan) -> Vec<Vec<u32>> {
        p.rank_groups().into_iter().map(|g| g.ranks).collect()
    }

    #[test]
    fn identical_tp_ranks_share_a_group_and_stages_do_not() {
        let p = plan_of(4, 2);
        assert_eq!(ranks(&p), [vec![0, 1, 2, 3], vec![4, 5, 6, 7]]);
        let g = &p.rank_groups()[1];
        assert_eq!((g.first(), g.last(), g.plan.rank), (4, 7, 4));
        assert_eq!(ranks(&plan_of(1, 1)), [vec![0]]);
    }

    #[test]
    fn any_printed_figure_that_differs_splits_a_group() {
        let base = plan_of(4, 1);
        // Each change touches one rank only: the group splits around it.
        let edits: [fn(&mut RankPlan); 7] = [
            |r| r.ledger[0].bytes += 1,
            |r| r.ledger[0].provenance = Provenance::Estimate("another basis".into()),
            |r| r.ledger.retain(|l| l.term != Term::KvPool),
            |r| r.num_blocks_own += 1,
            |r| r.kv_bytes_per_token += 1,
            |r| r.holds_drafter = !r.holds_drafter,
            |r| r.page_size += 1,
        ];
        for edit in edits {
            let mut p = base.clone();
            edit(&mut p.ranks[2]);
            assert_eq!(ranks(&p), [vec![0, 1], vec![2], vec![3]]);
        }
        // The formula text counts too, even with the same bytes (a build that writes
        // formulas: the first verdict's program leaves them empty).
        if crate::calc::planner::NOTES {
            let mut p = base.clone();
            let other = p.ranks[0].ledger[1].formula.clone();
            p.ranks[1].ledger[0].formula = other;
            assert_eq!(ranks(&p), [vec![0], vec![1], vec![2, 3]]);
        }
        // Equal ranks apart are not one group: groups are runs of consecutive ranks.
        let mut p = base;
        p.ranks[1].ledger[0].bytes += 1;
        p.ranks[3].ledger[0].bytes += 1;
        assert_eq!(ranks(&p), [vec![0], vec![1], vec![2], vec![3]]);
    }
}
