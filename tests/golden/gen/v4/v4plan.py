#!/usr/bin/env python3
"""Run vLLM 0.33.0's own KV-cache planning on DeepSeek-V4-Flash layer specs.

The per-layer specs come from the *real* vLLM classes:
  - vllm.v1.attention.backends.mla.sparse_swa.DeepseekV4SWACache      (instantiated)
  - vllm.models.deepseek_v4.compressor.CompressorStateCache             (instantiated)
  - vllm.models.deepseek_v4.attention.DeepseekV4IndexerCache            (instantiated)
  - vllm.models.deepseek_v4.attention.DeepseekV4Attention.get_kv_cache_spec
    (bound to a light stand-in, since the real layer needs CUDA streams/weights)
registered in static_forward_context in the same order DeepseekV4Attention.__init__
registers them, then collected with vllm.v1.worker.gpu.attn_utils.get_kv_cache_spec
(which applies customize_attention_spec), grouped with get_global_kv_cache_groups,
and planned with get_kv_cache_configs / update_kv_cache_capacity, exactly as
EngineCore._initialize_kv_caches does.

Usage:  python v4plan.py < cases.json   (object or list of objects) -> JSON
"""
from __future__ import annotations

import json
import logging
import os
import sys
import traceback

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("VLLM_NO_USAGE_STATS", "1")
os.environ["VLLM_LOGGING_STREAM"] = "ext://sys.stderr"
_STDOUT = sys.stdout
sys.stdout = sys.stderr

import torch  # noqa: E402
import vllm  # noqa: E402
from vllm.config import (  # noqa: E402
    CacheConfig,
    DeviceConfig,
    ModelConfig,
    ParallelConfig,
    SchedulerConfig,
    VllmConfig,
    set_current_vllm_config,
)
from vllm.config.vllm import VllmConfig as _VC  # noqa: E402
from vllm.distributed.kv_transfer.kv_connector.utils import (  # noqa: E402
    get_current_attn_backends,
)
from vllm.distributed.utils import get_pp_indices  # noqa: E402
from vllm.model_executor.layers.attention_layer_base import (  # noqa: E402
    AttentionLayerBase,
)
from vllm.models.deepseek_v4.attention import (  # noqa: E402
    DeepseekV4Attention,
    DeepseekV4IndexerCache,
    _resolve_dsv4_kv_cache_dtype,
)
from vllm.models.deepseek_v4.compressor import CompressorStateCache  # noqa: E402
from vllm.models.deepseek_v4.nvidia.flashinfer_sparse import (  # noqa: E402
    DeepseekV4FlashInferMLAAttention,
    DeepseekV4FlashInferSM120Attention,
)
from vllm.models.deepseek_v4.nvidia.flashmla import (  # noqa: E402
    DeepseekV4FlashMLAAttention,
)
from vllm.platforms import current_platform  # noqa: E402
from vllm.v1.attention.backends.mla.indexer import dsa_indexer_uses_fp4  # noqa: E402
from vllm.v1.attention.backends.mla.sparse_swa import DeepseekV4SWACache  # noqa: E402
from vllm.v1.attention.backends.utils import (  # noqa: E402
    get_supported_kv_cache_layouts,
    resolve_kv_cache_layout,
)
from vllm.v1.core import kv_cache_planning as P  # noqa: E402
from vllm.v1.core import kv_cache_utils as U  # noqa: E402
from vllm.v1.core.single_type_kv_cache_manager import (  # noqa: E402
    register_all_kvcache_specs,
)
from vllm.v1.kv_cache_interface import UniformTypeKVCacheSpecs  # noqa: E402
from vllm.v1.worker.gpu.attn_utils import get_kv_cache_spec  # noqa: E402
from vllm.models.deepseek_v4.common.ops.fused_indexer_q import (  # noqa: E402
    MXFP4_BLOCK_SIZE,
)

# Answer like CudaPlatform (see oracle README, "Mocks" 3).
type(current_platform).support_hybrid_kv_cache = classmethod(lambda cls: True)

ATTN_CLASSES = {
    # SM90/SM100 default, and --attention-backend FLASHMLA_SPARSE(_DSV4)
    "flashmla": DeepseekV4FlashMLAAttention,
    # SM12x default (DGX Spark GB10 = 12.1)
    "flashinfer_sm120": DeepseekV4FlashInferSM120Attention,
    # SM100 with --attention-backend FLASHINFER_MLA_SPARSE_DSV4 (plain rows)
    "flashinfer_sm100": DeepseekV4FlashInferMLAAttention,
}

# A folder holding config.json (run.sh makes one from ./config.json).
MODEL_DIR = os.environ.get("V4_MODEL_DIR", os.path.join(os.path.dirname(os.path.abspath(__file__)), "model"))


class AttnStandIn(AttentionLayerBase):
    """Carries exactly the attributes DeepseekV4Attention.get_kv_cache_spec reads."""

    get_kv_cache_spec = DeepseekV4Attention.get_kv_cache_spec

    def __init__(self, backend_cls, **kw):
        self._backend = backend_cls
        self.__dict__.update(kw)

    def get_attn_backend(self):
        return self._backend


def build_layers(vllm_config, layer_ids, attn_cls, n_main, draft_ids=()):
    """Register the KV-cache modules of the given layers, in the order
    DeepseekV4Attention.__init__ (models/deepseek_v4/attention.py) creates them."""
    hf = vllm_config.model_config.hf_config
    cache_config = vllm_config.cache_config
    sfc = vllm_config.compilation_config.static_forward_context
    head_dim = hf.head_dim
    for lid in list(layer_ids) + list(draft_ids):
        is_draft = lid in draft_ids
        prefix = f"model.layers.{lid}.attn"
        if lid < n_main:
            ratio = max(1, hf.compress_rates.get(hf.layer_types[lid], 0))
        else:
            ratio = 1  # MTP / DSpark layers (attention.py: layer_id >= num_hidden_layers)
        before = set(sfc)
        if ratio == 4:  # indexer (attention.py DeepseekV4Indexer.__init__)
            use_fp4 = dsa_indexer_uses_fp4(vllm_config)
            idx_head = hf.index_head_dim
            k_head = (
                idx_head // 2 + idx_head // MXFP4_BLOCK_SIZE
                if use_fp4
                else idx_head + idx_head // 128 * 4
            )
            DeepseekV4IndexerCache(
                head_dim=k_head,
                dtype=torch.uint8,
                prefix=f"{prefix}.indexer.k_cache",
                cache_config=cache_config,
                compress_ratio=ratio,
            )
            coff = 2
            CompressorStateCache(
                state_dim=2 * coff * idx_head,
                dtype=torch.float32,
                compress_ratio=ratio,
                prefix=f"{prefix}.indexer.compressor.state_cache",
            )
        kv_dtype, kv_torch_dtype = _resolve_dsv4_kv_cache_dtype(
            attn_cls.use_fp8_ds_mla_layout, cache_config.cache_dtype, cache_config
        )
        DeepseekV4SWACache(
            head_dim=head_dim,
            window_size=hf.sliding_window,
            dtype=kv_torch_dtype,
            prefix=f"{prefix}.swa_cache",
            cache_config=cache_config,
            backend_cls=attn_cls.swa_backend_cls,
        )
        sfc[prefix] = AttnStandIn(
            attn_cls.backend_cls,
            compress_ratio=ratio,
            head_dim=head_dim,
            kv_cache_dtype=kv_dtype,
            kv_cache_torch_dtype=kv_torch_dtype,
        )
        if ratio > 1:
            coff = 1 + (ratio == 4)
            CompressorStateCache(
                state_dim=2 * coff * head_dim,
                dtype=torch.float32,
                compress_ratio=ratio,
                prefix=f"{prefix}.compressor.state_cache",
            )
        if is_draft:
            for name in set(sfc) - before:
                sfc[name].is_draft_layer = True


def spec_row(name, spec, vc):
    d = {
        "name": name,
        "type": type(spec).__name__,
        "block_size": spec.block_size,
        "dtype": str(getattr(spec, "dtype", "")).replace("torch.", ""),
        "head_size": getattr(spec, "head_size", None),
        "tokens_per_state": getattr(spec, "tokens_per_state", None),
        "state_content_bytes": getattr(spec, "state_content_bytes", None),
        "alignment": getattr(spec, "alignment", None),
        "sliding_window": getattr(spec, "sliding_window", None),
        "real_page_size_bytes": getattr(spec, "real_page_size_bytes", None),
        "page_size_bytes": spec.page_size_bytes,
        "block_stride_alignment": str(spec.block_stride_alignment),
        "get_block_stride_alignment": spec.get_block_stride_alignment(),
        "max_tp_shards": getattr(spec, "max_tp_shards", None),
        "cache_dtype_str": getattr(spec, "cache_dtype_str", None),
        "model_version": getattr(spec, "model_version", None),
        "is_draft": spec.is_draft,
        "max_memory_usage_bytes": spec.max_memory_usage_bytes(vc),
    }
    if hasattr(spec, "tokens_per_state") and not isinstance(spec.tokens_per_state, int):
        d["tokens_per_state"] = str(spec.tokens_per_state)
    return d


def distinct_specs(rows):
    out = {}
    for r in rows:
        kind = r["name"].split(".attn")[-1] or "(attn)"
        key = json.dumps({k: v for k, v in r.items() if k != "name"}, sort_keys=True)
        if key not in out:
            out[key] = dict(r, role=kind, count=0, layers=[])
            out[key].pop("name")
        out[key]["count"] += 1
        out[key]["layers"].append(int(r["name"].split(".")[2]))
    return list(out.values())


def run(case):
    attn_cls = ATTN_CLASSES[case.get("attn", "flashmla")]
    tp = int(case.get("tp", 1))
    pp = int(case.get("pp", 1))
    mml = int(case.get("max_model_len", -1))
    mnbt = int(case.get("max_num_batched_tokens", 8192))
    mns = int(case.get("max_num_seqs", 256))
    kv = case.get("kv_cache_dtype", "auto")
    spec = case.get("spec")  # None | {"method": "mtp"|"dspark", "layers": n}
    env = dict(case.get("env") or {})
    if case.get("partition"):
        env["VLLM_PP_LAYER_PARTITION"] = case["partition"]
    old_env = {k: os.environ.get(k) for k in env}
    os.environ.update({k: str(v) for k, v in env.items()})
    try:
        mc = ModelConfig(
            model=MODEL_DIR,
            tokenizer=MODEL_DIR,
            skip_tokenizer_init=True,
            max_model_len=mml,
            dtype="bfloat16",
        )
        cc_kw = dict(cache_dtype=kv, enable_prefix_caching=case.get("prefix_caching", True))
        if case.get("block_size"):
            cc_kw["block_size"] = int(case["block_size"])
        if case.get("kv_cache_memory_bytes"):
            cc_kw["kv_cache_memory_bytes"] = int(case["kv_cache_memory_bytes"])
        cc = CacheConfig(**cc_kw)
        pc = ParallelConfig(tensor_parallel_size=tp, pipeline_parallel_size=pp)
        sc_kw = dict(
            max_num_seqs=mns,
            max_num_batched_tokens=mnbt,
            max_model_len=mc.max_model_len,
            is_encoder_decoder=False,
        )
        if case.get("async_scheduling") is not None:
            sc_kw["async_scheduling"] = bool(case["async_scheduling"])
        sc = SchedulerConfig(**sc_kw)
        extra = {}
        if case.get("indexer_kv_dtype"):
            from vllm.config import AttentionConfig
            extra["attention_config"] = AttentionConfig(indexer_kv_dtype=case["indexer_kv_dtype"])
        vc = VllmConfig(
            **extra,
            model_config=mc,
            cache_config=cc,
            parallel_config=pc,
            scheduler_config=sc,
            device_config=DeviceConfig(device="cuda"),
        )
        out = {"case": case}
        with set_current_vllm_config(vc):
            n = mc.hf_config.num_hidden_layers
            sfc = vc.compilation_config.static_forward_context
            sfc.clear()
            # All layers once, to let the platform pick the block size from the
            # backends (Platform.update_block_size_for_backend).
            n_draft = 0 if not spec else int(spec.get("layers", 1))
            draft_ids = tuple(range(n, n + n_draft))
            build_layers(vc, range(n), attn_cls, n, draft_ids)
            current_platform.update_block_size_for_backend(vc)
            out["resolved"] = {
                "block_size": cc.block_size,
                "cache_dtype": cc.cache_dtype,
                "backends": [b.get_name() for b in current_platform._find_non_ssm_backends(vc)],
                "max_in_flight_tokens": vc.max_in_flight_tokens,
                "max_concurrent_batches": vc.max_concurrent_batches,
                "async_scheduling": sc.async_scheduling,
                "use_v2_model_runner": vc.use_v2_model_runner,
                "num_prefill_lookahead_tokens(real, no spec object)": vc.num_prefill_lookahead_tokens,
                "indexer_fp4": dsa_indexer_uses_fp4(vc),
            }
            # Per PP stage: rebuild that stage's layers (drafter on the last stage).
            stage_ranges = [get_pp_indices(n, r, pp) for r in range(pp)]
            out["stages"] = [list(r) for r in stage_ranges]
            kv_specs, layouts = [], []
            for r, (s, e) in enumerate(stage_ranges):
                sfc.clear()
                build_layers(vc, range(s, e), attn_cls, n,
                             draft_ids if r == pp - 1 else ())
                specs = get_kv_cache_spec(vc)
                lay = [l.name for l in get_supported_kv_cache_layouts(
                    get_current_attn_backends(vc))]
                for _ in range(tp):
                    kv_specs.append(dict(specs))
                    layouts.append(lay)
            register_all_kvcache_specs(vc)
            rows = []
            seen = set()
            for specs in kv_specs:
                for name, sp in specs.items():
                    if name not in seen:
                        seen.add(name)
                        rows.append(spec_row(name, sp, vc))
            out["distinct_specs"] = distinct_specs(rows)
            if case.get("per_layer"):
                out["per_layer"] = rows
            layout = resolve_kv_cache_layout(
                vc, layouts, [s for sp in kv_specs for s in sp.values()])
            out["kv_cache_layout"] = layout.name
            groups = P.get_global_kv_cache_groups(vc, kv_specs)
            out["groups"] = []
            for g in groups:
                gs = g.kv_cache_spec
                members = (gs.kv_cache_specs.values()
                           if isinstance(gs, UniformTypeKVCacheSpecs) else [gs])
                pages = {}
                for m in members:
                    pages[m.page_size_bytes] = pages.get(m.page_size_bytes, 0) + 1
                out["groups"].append({
                    "num_layers": len(g.layer_names),
                    "block_size": gs.block_size,
                    "type": type(next(iter(members))).__name__,
                    "sliding_window": getattr(next(iter(members)), "sliding_window", None),
                    "pages_count": {str(k): v for k, v in pages.items()},
                    "page_size_bytes_sum": gs.page_size_bytes,
                    "max_memory_usage_bytes": gs.max_memory_usage_bytes(vc),
                    "blocks_per_request": -(-gs.max_memory_usage_bytes(vc) // gs.page_size_bytes),
                    "first_layers": g.layer_names[:3],
                })
            avail = case["available"]
            if not isinstance(avail, list):
                avail = [int(avail)] * (pp * tp)
            elif len(avail) == pp:
                avail = [int(a) for a in avail for _ in range(tp)]
            builder = P.DefaultKVCacheConfigBuilder()
            workers = []
            for w, specs in enumerate(kv_specs):
                proj = P._project_kv_cache_groups_to_worker(groups, specs)
                bpb = P._pool_bytes_per_block_from_builder(builder, vc, proj)
                ent = {
                    "worker": w,
                    "available": avail[w],
                    "bytes_per_block": bpb,
                    "num_blocks_own": avail[w] // bpb,
                    "needed_bytes_at_max_model_len": P._max_memory_usage_bytes_from_groups(builder, vc, proj),
                    "check_memory": avail[w] - bpb,
                    "groups_on_worker": [len(g.layer_names) for g in proj],
                }
                ent["fits"] = ent["needed_bytes_at_max_model_len"] <= ent["check_memory"]
                ent["needed_GiB"] = ent["needed_bytes_at_max_model_len"] / 2**30
                ent["check_memory_GiB"] = ent["check_memory"] / 2**30
                saved = mc.max_model_len
                mc.max_model_len = int(case.get("estimate_upper", max(saved, 1 << 22)))
                ent["estimate_max_model_len_uncapped"] = P._estimate_max_model_len_from_groups(
                    builder, vc, proj, avail[w] - bpb)
                mc.max_model_len = saved
                workers.append(ent)
            out["workers"] = workers
            mml_before = mc.max_model_len
            try:
                configs = P.get_kv_cache_configs(vc, kv_specs, avail, groups)
                out["max_model_len"] = mc.max_model_len
                out["auto_fit"] = (mml_before, mc.max_model_len)
                sched = U.generate_scheduler_kv_cache_config(configs)
                out["num_blocks"] = sched.num_blocks
                out["blocks_per_request"] = sum(
                    -(-g.kv_cache_spec.max_memory_usage_bytes(vc) // g.kv_cache_spec.page_size_bytes)
                    for g in sched.kv_cache_groups)
                tokens, conc = U.get_kv_cache_capacity(vc, sched)
                out["kv_cache_size_tokens"] = tokens
                out["max_concurrency"] = conc
                out["log_line"] = (f"GPU KV cache size: {tokens:,} tokens, Maximum concurrency "
                                   f"for {mc.max_model_len:,} tokens per request: {conc:.2f}x")
                out["num_blocks_x_256"] = sched.num_blocks * 256
            except Exception as e:  # capacity check
                out["error"] = {"type": type(e).__name__, "message": str(e)}
        return out
    finally:
        for k, v in old_env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def main():
    data = json.load(sys.stdin)
    cases = data if isinstance(data, list) else [data]
    res = []
    for c in cases:
        try:
            res.append(run(c))
        except Exception as e:
            res.append({"case": c, "exception": repr(e), "tb": traceback.format_exc()})
    _STDOUT.write(json.dumps(res if isinstance(data, list) else res[0], indent=1) + "\n")


if __name__ == "__main__":
    main()
