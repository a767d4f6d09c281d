//! How vLLM groups the layers of every worker into KV cache groups (`get_kv_cache_groups`): one
//! group per spec, or DeepSeek-V4's packed groups of pages of several sizes
//! (`_get_packed_kv_cache_groups`).

use super::{LayerKv, Resolved};
use crate::calc::units::cdiv;

/// Groups the union of every worker's layers the way `get_kv_cache_groups` does, returning
/// (kind, page, block_size, layer indices) per group, the padding layer count, and whether the
/// one group is a `UniformTypeKVCacheSpecs` (its page is then the sum of its layers' pages).
pub(super) fn group_layers(
    all: &[Resolved],
    disable_hybrid: bool,
) -> (Vec<(Resolved, Vec<u32>)>, u64, bool) {
    // Normalise the spec identity vLLM compares: with the hybrid manager disabled, sliding and
    // chunked layers become full-attention specs (they keep their page).
    let identity = |r: &Resolved| -> Resolved {
        let mut r = r.clone();
        r.index = 0;
        if disable_hybrid {
            r.kind = match r.kind {
                LayerKv::Sliding { .. } | LayerKv::Chunked { .. } => LayerKv::Full,
                LayerKv::MlaSliding { .. } => LayerKv::Mla,
                other => other,
            };
        }
        r
    };
    // Buckets of identical specs, in order of first appearance.
    let mut buckets: Vec<(Resolved, Vec<u32>)> = Vec::new();
    for r in all {
        let id = identity(r);
        match buckets.iter_mut().find(|(k, _)| *k == id) {
            Some((_, v)) => v.push(r.index),
            None => buckets.push((id, vec![r.index])),
        }
    }
    if buckets.len() <= 1 {
        return (buckets, 0, false);
    }
    // Same spec type with different pages (e.g. different head sizes, all full attention):
    // one UniformTypeKVCacheSpecs group holding every layer.
    let same_type = buckets.iter().all(|(k, _)| {
        std::mem::discriminant(&k.kind) == std::mem::discriminant(&buckets[0].0.kind)
            && k.block_size == buckets[0].0.block_size
    }) && matches!(buckets[0].0.kind, LayerKv::Full | LayerKv::Mla);
    if same_type {
        let mut layers: Vec<u32> = buckets.iter().flat_map(|(_, v)| v.clone()).collect();
        crate::calc::sort_small(&mut layers);
        // UniformTypeKVCacheSpecs.page_size_bytes: the sum over its layers.
        let mut first = buckets[0].0.clone();
        first.page = buckets.iter().map(|(k, v)| k.page * v.len() as u64).sum();
        return (vec![(first, layers)], 0, true);
    }
    // True hybrid: _get_kv_cache_groups_uniform_page_size.
    let min_n = buckets.iter().map(|(_, v)| v.len()).min().unwrap_or(1);
    let max_n = buckets.iter().map(|(_, v)| v.len()).max().unwrap_or(1);
    let group_size = if (max_n as f64) < 1.5 * min_n as f64 {
        max_n
    } else {
        min_n
    };
    let mut groups = Vec::new();
    let mut padding = 0u64;
    for (kind, layers) in buckets {
        let n_groups = cdiv(layers.len() as u64, group_size as u64) as usize;
        for i in 0..n_groups {
            let members: Vec<u32> = layers.iter().skip(i).step_by(n_groups).copied().collect();
            padding += (group_size - members.len()) as u64;
            groups.push((kind.clone(), members));
        }
    }
    (groups, padding, false)
}

/// The type family `UniformTypeKVCacheSpecs.is_uniform_type` compares (with the block size):
/// full attention and MLA are one family, a sliding window is one per window size.
fn family(kind: &LayerKv) -> (u8, u64) {
    match kind {
        LayerKv::Full | LayerKv::Mla => (0, 0),
        LayerKv::Sliding { window } | LayerKv::MlaSliding { window } => (1, *window),
        LayerKv::Chunked { chunk } => (2, *chunk),
        LayerKv::Mamba { .. } => (3, 0),
    }
}

/// `_approximate_gcd`: the d in `[lower_bound, max(values)]` that pads the values least when
/// each is rounded up to a multiple of d; ties go to the larger d.
fn approximate_gcd(values: &[u64], lower_bound: u64) -> u64 {
    let min_d = lower_bound.max(1);
    let max_d = values.iter().copied().max().unwrap_or(1);
    if min_d > max_d {
        return min_d;
    }
    let mut best = (min_d, u64::MAX);
    for d in min_d..=max_d {
        let pad: u64 = values.iter().map(|x| (d - x % d) % d).sum();
        if pad < best.1 || (pad == best.1 && d > best.0) {
            best = (d, pad);
        }
    }
    best.0
}

/// One bucket of `_get_packed_kv_cache_groups`: its first layer, its layers in order, and
/// its layers by page size (in order of first appearance).
struct Bucket {
    first: Resolved,
    order: Vec<u32>,
    by_page: Vec<(u64, Vec<u32>)>,
}

impl Bucket {
    /// As many layers of each page size: a repeating pattern.
    fn balanced(&self) -> bool {
        self.by_page
            .iter()
            .all(|(_, v)| v.len() == self.by_page[0].1.len())
    }

    /// `get_max_layers_per_page_size`.
    fn most(&self) -> u64 {
        self.by_page
            .iter()
            .map(|(_, v)| v.len() as u64)
            .max()
            .unwrap_or(0)
    }
}

/// `_get_packed_kv_cache_groups` (vLLM 0.33.0) for a block-outermost layout: layers are
/// bucketed by type family and block size, in order; a balanced bucket is a repeating pattern
/// and splits into `cdiv(layers per page size, repeats)` groups taken round-robin, any other
/// bucket stays whole. Every group is a `UniformTypeKVCacheSpecs`, its page the sum of its
/// layers' pages. (No Mamba or circular-buffer bucket is planned through here.)
pub(super) fn packed_groups(all: &[Resolved], page_of: &[u64]) -> Vec<(Resolved, Vec<u32>)> {
    let mut buckets: Vec<Bucket> = Vec::new();
    for r in all {
        let key = (family(&r.kind), r.block_size);
        let i = match buckets
            .iter()
            .position(|b| (family(&b.first.kind), b.first.block_size) == key)
        {
            Some(i) => i,
            None => {
                buckets.push(Bucket {
                    first: r.clone(),
                    order: Vec::new(),
                    by_page: Vec::new(),
                });
                buckets.len() - 1
            }
        };
        let b = &mut buckets[i];
        b.order.push(r.index);
        match b.by_page.iter_mut().find(|(p, _)| *p == r.page) {
            Some((_, v)) => v.push(r.index),
            None => b.by_page.push((r.page, vec![r.index])),
        }
    }
    // Balanced buckets that mix page sizes stay whole: the largest sets the floor.
    let min_repeats = buckets
        .iter()
        .filter(|b| b.balanced() && b.by_page.len() > 1)
        .map(Bucket::most)
        .max()
        .unwrap_or(0);
    let repeats = (min_repeats > 0).then(|| {
        let counts: Vec<u64> = buckets
            .iter()
            .filter(|b| b.balanced())
            .map(Bucket::most)
            .collect();
        approximate_gcd(&counts, min_repeats)
    });
    let mut groups = Vec::new();
    for b in buckets {
        let n = match repeats {
            Some(r) if b.balanced() => cdiv(b.most(), r).max(1) as usize,
            _ => 1,
        };
        let mut member_lists: Vec<Vec<u32>> = Vec::with_capacity(n);
        if n == 1 {
            member_lists.push(b.order.clone());
        } else {
            // Pattern repeat i holds the i-th layer of every page size; group g takes the
            // repeats g, g + n, g + 2n, ...
            let len = b.by_page[0].1.len();
            for g in 0..n {
                let mut members = Vec::new();
                for i in (g..len).step_by(n) {
                    for (_, v) in &b.by_page {
                        members.push(v[i]);
                    }
                }
                member_lists.push(members);
            }
        }
        for members in member_lists {
            let mut head = b.first.clone();
            head.page = members.iter().map(|i| page_of[*i as usize]).sum();
            groups.push((head, members));
        }
    }
    groups
}
