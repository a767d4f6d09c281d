//! Teaching notes too long to sit inline where the planner decides what they describe.

use super::ledger::amount;
use crate::calc::runtime;
use crate::calc::scenario::Scenario;

/// DeepSeek-V3.2's note: the layout Headroom plans, and the indexer's buffers outside the pool
/// that its estimates leave out, sized from vLLM 0.33.0's source (read, not measured).
pub(super) fn sparse_mla_note(
    s: &Scenario,
    sp: crate::calc::model::SparseMla,
    max_len: u64,
    mns: u64,
    mnbt: u64,
    num_spec: u64,
) -> String {
    let m = &s.model;
    let layers = u64::from(m.n_layers);
    // topk_indices_buffer: one int32 row of index_topk per batched token, shared by the layers.
    let topk = mnbt * sp.index_topk * 4;
    // One index group per indexer layer: (rows + 1) x (2048 x 4 + 4) bytes.
    let rows = mnbt.min(mns * (1 + num_spec));
    let groups = layers * (rows + 1) * (2048 * 4 + 4);
    let factor = if max_len <= 262_144 { 5 } else { 2 };
    // The indexer's K-gather workspace, reserved in the profile run.
    let gather = max_len * 8 * factor * sp.cache_bytes_per_token();
    // FlashMLA's sparse prefill workspace, with an fp8_ds_mla cache only.
    let prefill = if runtime::sparse_mla_backend(s).ds_mla {
        factor * max_len * 576 * 2
    } else {
        0
    };
    let logits = 512 << 20;
    let total = topk + groups + gather + prefill + logits;
    format!(
        "DeepSeek-V3.2's sparse MLA: beside its latent cache, every layer keeps the indexer's K cache ({} B per token: fp8 keys and their scales), and vLLM puts both in one UniformTypeKVCacheSpecs group, in blocks of 64 tokens or a multiple of 64 (DEEPSEEK_V32_INDEXER's kernel block). Outside the pool, the indexer also takes buffers Headroom's estimates leave out: top-k indices {}, index groups {}, the K-gather workspace {}{} and a 512 MiB logits transient, about {} per rank (sizes read from vLLM 0.33.0's source, not measured).",
        sp.cache_bytes_per_token(),
        amount(i128::from(topk)),
        amount(i128::from(groups)),
        amount(i128::from(gather)),
        if prefill > 0 {
            format!(", FlashMLA's prefill workspace {}", amount(i128::from(prefill)))
        } else {
            String::new()
        },
        amount(i128::from(total))
    )
}
