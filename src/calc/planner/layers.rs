//! The KV cache specs of a rank's layers, as vLLM's attention classes register them: the
//! element size, the hybrid models' state pages and their block size, DeepSeek-V4's caches.

use super::drafter::Drafter;
use super::resolve::Resolved;
use crate::calc::kv::{self, LayerKv, LayerSpec};
use crate::calc::model::{LayerKind, Model};
use crate::calc::runtime;
use crate::calc::scenario::{KvCacheDtype, Scenario};

/// The KV cache element size of model `m`'s layers: `auto` follows that model's own dtype (a
/// draft model's layers follow the draft's); fp8_ds_mla's 656-byte blob is handled by the caller.
pub(super) fn kv_elem_bytes_of(s: &Scenario, m: &Model) -> u64 {
    match s.engine.kv_cache_dtype {
        KvCacheDtype::Auto if m.kv_fp8_from_checkpoint => 1,
        KvCacheDtype::Auto => m.dtype.bytes(),
        KvCacheDtype::Bfloat16 | KvCacheDtype::Float16 => 2,
        KvCacheDtype::Fp8
        | KvCacheDtype::Fp8E4m3
        | KvCacheDtype::Fp8E5m2
        | KvCacheDtype::Fp8DsMla
        | KvCacheDtype::Fp8Inc => 1,
    }
}

/// One layer's spec on a rank with TP `tp`.
#[inline]
pub(super) fn layer_spec(
    s: &Scenario,
    index: u32,
    kind: &LayerKind,
    tp: u64,
    num_spec: u64,
) -> Option<LayerSpec> {
    layer_spec_of(s, &s.model, index, kind, tp, num_spec)
}

/// One layer's spec of model `m` (the target, or a draft model) on a rank with TP `tp`.
pub(super) fn layer_spec_of(
    s: &Scenario,
    m: &Model,
    index: u32,
    kind: &LayerKind,
    tp: u64,
    num_spec: u64,
) -> Option<LayerSpec> {
    let elem = kv_elem_bytes_of(s, m);
    let heads = (m.n_kv_heads / tp).max(1);
    let per_head = (m.head_dim + m.head_dim_v) * elem;
    let attn = |kind: LayerKv| LayerSpec {
        index,
        kind,
        num_kv_heads: heads,
        per_head_token_bytes: per_head,
        fixed: None,
    };
    // DeepSeek-V3.2: the sparse backend vLLM picks decides whether an fp8 cache becomes the
    // fp8_ds_mla blob.
    let ds_mla = s.engine.kv_cache_dtype == KvCacheDtype::Fp8DsMla
        || (m.sparse_mla.is_some() && runtime::sparse_mla_backend(s).ds_mla);
    let mla_bytes = |mla: &crate::calc::model::Mla| {
        if ds_mla {
            656
        } else {
            (mla.kv_lora_rank + mla.qk_rope_head_dim) * elem
        }
    };
    let state = |conv_dim: u64, rec: Vec<u64>| {
        let st = m.linear.expect("linear state validated");
        let dt = m.dtype.bytes();
        LayerKv::Mamba {
            states: vec![
                (vec![st.conv_kernel - 1 + num_spec, conv_dim], dt),
                (rec, m.ssm_state_bytes.unwrap_or(dt)),
            ],
            blocks_per_request: 2 + num_spec + prefill_checkpoint(s, kind).0,
        }
    };
    Some(match kind {
        LayerKind::Full => attn(LayerKv::Full),
        LayerKind::Sliding { window } => attn(LayerKv::Sliding { window: *window }),
        LayerKind::Chunked { chunk } => attn(LayerKv::Chunked { chunk: *chunk }),
        LayerKind::Mla => {
            let mla = m.mla.as_ref()?;
            LayerSpec {
                index,
                kind: LayerKv::Mla,
                num_kv_heads: 1,
                per_head_token_bytes: mla_bytes(mla),
                fixed: None,
            }
        }
        // Gated DeltaNet and Mamba2 keep states of one shape: a conv state over the value
        // channels and two key (B, C) projections, and a recurrent state per value head.
        LayerKind::GatedDeltaNet | LayerKind::Mamba2 => {
            let st = m.linear?;
            // Mamba2 with n_groups not a multiple of TP (only 1 is allowed): every rank keeps
            // its own copy of the group (extra_groups_for_head_shards in mamba2_state_shape).
            let groups = if matches!(kind, LayerKind::Mamba2) && st.k_heads % tp != 0 {
                tp
            } else {
                st.k_heads
            };
            let conv = (st.v_heads * st.v_dim + 2 * groups * st.k_dim) / tp;
            LayerSpec {
                index,
                kind: state(conv, vec![st.v_heads / tp, st.v_dim, st.k_dim]),
                num_kv_heads: 0,
                per_head_token_bytes: 0,
                fixed: None,
            }
        }
        LayerKind::SharedKv | LayerKind::NoCache => return None,
    })
}

/// A linear-attention layer's prefill checkpoint in "align" mode (prefix caching on, the
/// default for hybrid models): (blocks it adds per request, the token alignment of its
/// checkpoints, if it takes them inside a prefill). vLLM 0.33.0:
/// - `MambaMixer2.get_kv_cache_spec` always sets `num_prefill_checkpoint_blocks=1`, and
///   declares no alignment;
/// - `QwenGatedDeltaNetAttention` sets it, with an alignment of 64 tokens
///   (`FLASHINFER_GDN_CHECKPOINT_ALIGNMENT`), only when its prefill runs on FlashInfer: on
///   Hopper (SM 9.0), and on Blackwell (SM 10.x, 12.x) with key heads of 128 and CUDA 13.
pub(super) fn prefill_checkpoint(s: &Scenario, kind: &LayerKind) -> (u64, Option<u64>) {
    match kind {
        LayerKind::Mamba2 => (1, None),
        LayerKind::GatedDeltaNet if gdn_prefill_on_flashinfer(s) => (1, Some(64)),
        _ => (0, None),
    }
}

/// `_resolve_gdn_prefill_backend` on CUDA: FlashInfer on Hopper, and on Blackwell when the key
/// head is 128 wide (vLLM 0.33's wheels are built for CUDA 13). Elsewhere Triton, which takes
/// no checkpoints inside a prefill: ROCm has no FlashInfer, whatever capability HIP reports
/// (MI250X's gfx90a reports Hopper's 9.0).
pub(super) fn gdn_prefill_on_flashinfer(s: &Scenario) -> bool {
    if s.gpu.is_rocm() {
        return false;
    }
    let k128 = s.model.linear.is_some_and(|l| l.k_dim == 128);
    match s.gpu.compute_capability {
        (9, 0) => true,
        (10 | 12, _) => k128,
        _ => false,
    }
}

/// `get_mamba_prefill_checkpoint_alignment`: the LCM of every linear-attention layer's
/// alignment, or 1 when any layer declares none.
pub(super) fn checkpoint_alignment(s: &Scenario) -> u64 {
    let mut align = 1;
    for k in &s.model.layers {
        if matches!(k, LayerKind::GatedDeltaNet | LayerKind::Mamba2) {
            match prefill_checkpoint(s, k).1 {
                Some(a) => align = crate::calc::units::lcm(align, a),
                None => return 1,
            }
        }
    }
    align
}

/// A hybrid model's pages at TP `tp`: (attention bytes per token, the largest unpadded
/// linear-attention state), or `None` for a model without both.
pub(super) fn hybrid_pages(s: &Scenario, tp: u64, num_spec: u64) -> Option<(u64, u64)> {
    let m = &s.model;
    let mamba_page = m
        .layers
        .iter()
        .enumerate()
        .filter(|(_, k)| matches!(k, LayerKind::GatedDeltaNet | LayerKind::Mamba2))
        .filter_map(|(i, k)| layer_spec(s, i as u32, k, tp, num_spec))
        .map(|l| match &l.kind {
            LayerKv::Mamba { states, .. } => states
                .iter()
                .map(|(sh, e)| sh.iter().product::<u64>() * e)
                .sum::<u64>(),
            _ => 0,
        })
        .max()?;
    let attn_1 = m
        .layers
        .iter()
        .enumerate()
        .find_map(|(i, k)| {
            layer_spec(s, i as u32, k, tp, 0).filter(|l| !matches!(l.kind, LayerKv::Mamba { .. }))
        })
        .map(|l| l.bytes_per_token())?;
    (mamba_page > 0 && attn_1 > 0).then_some((attn_1, mamba_page))
}

/// `_align_hybrid_block_size`: the attention block grows until its page holds a Mamba state,
/// rounded to the kernel alignment (16, or 128 for MLA hybrids, and a multiple of the prefill
/// checkpoints' alignment).
pub(super) fn hybrid_block_size(
    s: &Scenario,
    tp: u64,
    num_spec: u64,
    requested: u64,
) -> Option<(u64, String)> {
    // The state includes the speculative tokens' conv rows (get_mamba_state_shape_from_config).
    let (attn_1, mamba_page) = hybrid_pages(s, tp, num_spec)?;
    let checkpoints = checkpoint_alignment(s);
    let block = kv::align_hybrid_block_size(
        requested,
        attn_1,
        mamba_page,
        s.model.mla.is_some(),
        checkpoints,
    );
    if block > requested {
        Some((
            block,
            format!(
                "raised to {block} so the attention page ({} B/token x {block}) holds a {}-byte linear-attention state{} (vLLM's _align_hybrid_block_size)",
                attn_1,
                mamba_page,
                if checkpoints > 1 {
                    format!(", in multiples of the {checkpoints}-token prefill checkpoints")
                } else {
                    String::new()
                }
            ),
        ))
    } else {
        None
    }
}

/// DeepSeek-V4's caches on one rank, in the order `DeepseekV4Attention` registers them (vLLM
/// 0.33.0, fp8_ds_mla layout): per layer, at ratio 4 the indexer's K cache and its compressor
/// state; in every layer the sliding-window cache; above ratio 1 the compressed KV and its
/// compressor state. MTP layers keep the sliding window only. Each cache gets its own index
/// (five per layer, in registration order), as the packed grouping reads the order.
pub(super) fn v4_specs(
    c: &crate::calc::model::CompressedAttn,
    layers: (u32, u32),
    n_layers: u32,
    drafter_layers: u32,
    block_size: u64,
    layout: V4State,
) -> Vec<LayerSpec> {
    let V4State {
        bytes: state,
        align,
    } = layout;
    // page = round_up(states x content, align), states = block size / tokens per state.
    let page = |block: u64, tokens_per_state: u64, content: u64| {
        ((block / tokens_per_state) * content).div_ceil(align) * align
    };
    // The fixed page says it all (kv counts the growing caches' pages per token).
    let spec = |index: u32, kind: LayerKv, block: u64, page: u64| LayerSpec {
        index,
        num_kv_heads: 1,
        per_head_token_bytes: 0,
        kind,
        fixed: Some(kv::FixedPage {
            block_size: block,
            page,
        }),
    };
    let index_bytes = crate::calc::model::indexer_key_bytes(c.index_head_dim);
    let mut out = Vec::new();
    let ids = (layers.0..layers.1).chain(n_layers..n_layers + drafter_layers);
    for id in ids {
        let ratio = match c.ratios.get(id as usize) {
            Some(&r) if id < n_layers => u64::from(r.max(1)),
            _ => 1,
        };
        let base = id * 5;
        if ratio == 4 {
            out.push(spec(
                base,
                LayerKv::Mla,
                block_size,
                page(block_size, 4, index_bytes),
            ));
            // The indexer's compressor: fp32 states of 2 x 2 x index_head_dim, 4-token blocks.
            out.push(spec(
                base + 1,
                LayerKv::MlaSliding { window: 8 },
                4,
                page(4, 1, 2 * 2 * c.index_head_dim * 4),
            ));
        }
        out.push(spec(
            base + 2,
            LayerKv::MlaSliding { window: c.window },
            64,
            page(64, 1, state),
        ));
        if ratio > 1 {
            out.push(spec(
                base + 3,
                LayerKv::Mla,
                block_size,
                page(block_size, ratio, state),
            ));
            // The compressor's state: overlap 2 at ratio 4 (window 8, 4-token blocks), 1 at
            // ratio 128 (window 128, 8-token blocks); 2 x overlap x head_dim fp32 values.
            let (overlap, block) = if ratio == 4 { (2, 4) } else { (1, 8) };
            out.push(spec(
                base + 4,
                LayerKv::MlaSliding {
                    window: overlap * ratio,
                },
                block,
                page(block, 1, 2 * overlap * c.head_dim * 4),
            ));
        }
    }
    out
}

/// A DeepSeek-V4 KV state (one token of the sliding window, one compressed entry) and the page
/// alignment of its layout.
#[derive(Clone, Copy)]
pub(super) struct V4State {
    pub(super) bytes: u64,
    pub(super) align: u64,
}

impl V4State {
    /// fp8_ds_mla: 448 B of fp8 NoPE, 128 B of bf16 RoPE and 8 B of scales per state, pages
    /// padded to 576 B (attention.py); FlashInfer's plain rows on SM 10.x: head_dim elements of
    /// bf16 or fp8, pages padded to 512 B.
    pub(super) fn of(s: &Scenario, c: &crate::calc::model::CompressedAttn, plain: bool) -> V4State {
        if plain {
            let elem = if s.engine.kv_cache_dtype.is_fp8() {
                1
            } else {
                2
            };
            V4State {
                bytes: c.head_dim * elem,
                align: 512,
            }
        } else {
            V4State {
                bytes: 584,
                align: 576,
            }
        }
    }
}

/// The KV specs of one rank's layers, the drafter's on the last stage. DeepSeek-V4 registers
/// caches of its own, the MTP layer's included.
pub(super) fn rank_specs(
    s: &Scenario,
    r: &Resolved,
    d: &Drafter,
    layers: (u32, u32),
    last: bool,
) -> Vec<LayerSpec> {
    let m = &s.model;
    let tp64 = u64::from(s.parallel.tp);
    let Resolved {
        block_size,
        num_spec,
        ref v4,
        ..
    } = *r;
    let Drafter {
        layers: drafter_layers,
        draft,
        ..
    } = *d;
    let specs = if let Some(c) = m.compressed.as_ref().filter(|_| m.measured_kv.is_none()) {
        let drafted = if last { drafter_layers } else { 0 };
        v4_specs(
            c,
            layers,
            m.n_layers,
            drafted,
            block_size,
            V4State::of(s, c, v4.as_ref().is_some_and(|a| a.plain)),
        )
    } else {
        let mut specs: Vec<LayerSpec> = (layers.0..layers.1)
            .filter_map(|i| layer_spec(s, i, &m.layers[i as usize], tp64, num_spec))
            .collect();
        // A draft model's attention layers are registered like the target's: their KV
        // lives in the same pool, on the ranks that run the drafter.
        if let Some(d) = draft.filter(|_| last && m.measured_kv.is_none()) {
            for (j, k) in d.layers.iter().enumerate() {
                let index = m.n_layers + j as u32;
                if let Some(sp) = layer_spec_of(s, d, index, k, tp64, num_spec) {
                    specs.push(sp);
                }
            }
        }
        if last && drafter_layers > 0 && m.measured_kv.is_none() {
            // MTP layers repeat the model's last decoder layer; an EAGLE head is one
            // full-attention layer.
            let eagle = s
                .engine
                .speculative
                .as_ref()
                .is_some_and(|sp| sp.method.is_eagle());
            let kind = match m.layers.last() {
                Some(k) if !eagle => k.clone(),
                _ if m.mla.is_some() => LayerKind::Mla,
                _ => LayerKind::Full,
            };
            for j in 0..drafter_layers {
                if let Some(sp) = layer_spec(s, m.n_layers + j, &kind, tp64, num_spec) {
                    specs.push(sp);
                }
            }
        }
        // DeepSeek-V3.2: every MLA layer (the MTP layer too) also keeps the indexer's K
        // cache, an MLAAttentionSpec of one 132-byte head whatever --kv-cache-dtype says.
        // Its layer index follows every attention layer's.
        if let Some(sp) = m.sparse_mla.filter(|_| m.measured_kv.is_none()) {
            let base = m.n_layers + drafter_layers + draft.map_or(0, |d| d.n_layers);
            let indexed: Vec<u32> = specs
                .iter()
                .filter(|l| l.kind == LayerKv::Mla && l.index < m.n_layers + drafter_layers)
                .map(|l| l.index)
                .collect();
            for i in indexed {
                specs.push(LayerSpec {
                    index: base + i,
                    kind: LayerKv::Mla,
                    num_kv_heads: 1,
                    per_head_token_bytes: sp.cache_bytes_per_token(),
                    fixed: None,
                });
            }
        }
        specs
    };
    specs
}
