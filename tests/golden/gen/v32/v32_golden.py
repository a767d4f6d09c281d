#!/usr/bin/env python3
"""DeepSeek-V3.2 KV-cache planning golden vectors, computed by vLLM 0.33.0's own code.

Run by tests/golden/gen/v32/run.sh with the oracle's venv (stdout: every case as JSON).

What is real vLLM code here:
  * ModelConfig/CacheConfig/ParallelConfig/SchedulerConfig/VllmConfig built from a
    DeepSeek-V3.2 config.json (architectures DeepseekV32ForCausalLM, 61 layers).
  * DeepseekV32ForCausalLM.verify_and_update_config (model_executor/models/config.py).
  * The indexer cache layers are REAL DeepseekV32IndexerCache modules
    (model_executor/models/deepseek_v2.py), constructed exactly as
    DeepseekV32Indexer does (models/deepseek_v32/attention.py:95-100):
    head_dim = 128 + 128 // 128 * 4 = 132, dtype uint8.
  * The main sparse-MLA layer is a stand-in whose get_kv_cache_spec IS
    MLAAttention.get_kv_cache_spec, with the attributes MLAAttention.__init__
    would set (head_size = 512 + 64, kv_cache_dtype after the real
    _canonicalize_sparse_mla_kv_cache_dtype, topk_buffer_width = index_topk,
    indexer non-None).
  * Backends: real FlashMLASparseBackend, FlashInferMLASparseTRTLLMBackend,
    FlashAttnMLASparseFA4Backend, DeepseekV32IndexerBackend. FLASH_ATTN_MLA_SPARSE
    cannot be imported without CUDA, so a stand-in subclass copies its declared
    kernel block sizes [MultipleOf(64)] and customize_spec (align_blocks_to_rows).
  * Platform.update_block_size_for_backend, worker get_kv_cache_spec
    (incl. customize_attention_spec), resolve_kv_cache_layout,
    get_global_kv_cache_groups, get_kv_cache_configs, generate_scheduler_kv_cache_config,
    update_kv_cache_capacity: all vLLM.
  * SM100 is emulated by patching current_platform.is_device_capability_family
    (read by FlashMLASparseBackend for fp8 kernel block sizes / alignment).
"""
from __future__ import annotations

import ast
import functools
import json
import logging
import os
import sys
import tempfile

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("VLLM_NO_USAGE_STATS", "1")
os.environ["VLLM_LOGGING_STREAM"] = "ext://sys.stderr"
os.environ.setdefault("VLLM_LOGGING_LEVEL", "WARNING")
_OUT = sys.stdout
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
from vllm.distributed.kv_transfer.kv_connector.utils import (  # noqa: E402
    get_current_attn_backends,
)
from vllm.distributed.utils import get_pp_indices  # noqa: E402
from vllm.model_executor.layers.attention.mla_attention import (  # noqa: E402
    MLAAttention,
    _canonicalize_sparse_mla_kv_cache_dtype,
)
from vllm.model_executor.layers.attention_layer_base import AttentionLayerBase  # noqa
from vllm.model_executor.models.config import (  # noqa: E402
    DeepseekV32ForCausalLM as V32ConfigHook,
)
from vllm.model_executor.models.deepseek_v2 import DeepseekV32IndexerCache  # noqa
from vllm.platforms import current_platform  # noqa: E402
from vllm.v1.attention.backend import AttentionBackend, MultipleOf  # noqa: E402
from vllm.v1.attention.backends.mla.sparse_utils import align_blocks_to_rows  # noqa
from vllm.v1.attention.backends.registry import AttentionBackendEnum  # noqa: E402
from vllm.v1.attention.backends.utils import (  # noqa: E402
    get_supported_kv_cache_layouts,
    resolve_kv_cache_layout,
)
from vllm.v1.core import kv_cache_planning as planning  # noqa: E402
from vllm.v1.core import kv_cache_utils as kvu  # noqa: E402
from vllm.v1.core.single_type_kv_cache_manager import (  # noqa: E402
    register_all_kvcache_specs,
)
from vllm.v1.kv_cache_interface import UniformTypeKVCacheSpecs  # noqa: E402
from vllm.v1.worker.gpu.attn_utils import get_kv_cache_spec  # noqa: E402

GiB = 1 << 30

# DeepSeek-V3.2 config.json (the fields vLLM reads; values as published).
V32_HF_CONFIG = {
    "architectures": ["DeepseekV32ForCausalLM"],
    "model_type": "deepseek_v32",
    "attention_bias": False,
    "attention_dropout": 0.0,
    "bos_token_id": 0,
    "eos_token_id": 1,
    "first_k_dense_replace": 3,
    "hidden_act": "silu",
    "hidden_size": 7168,
    "index_head_dim": 128,
    "index_n_heads": 64,
    "index_topk": 2048,
    "intermediate_size": 18432,
    "kv_lora_rank": 512,
    "max_position_embeddings": 163840,
    "moe_intermediate_size": 2048,
    "moe_layer_freq": 1,
    "n_group": 8,
    "n_routed_experts": 256,
    "n_shared_experts": 1,
    "norm_topk_prob": True,
    "num_attention_heads": 128,
    "num_experts_per_tok": 8,
    "num_hidden_layers": 61,
    "num_key_value_heads": 128,
    "num_nextn_predict_layers": 1,
    "q_lora_rank": 1536,
    "qk_nope_head_dim": 128,
    "qk_rope_head_dim": 64,
    "rms_norm_eps": 1e-06,
    "rope_scaling": {
        "beta_fast": 32,
        "beta_slow": 1,
        "factor": 40,
        "mscale": 1.0,
        "mscale_all_dim": 1.0,
        "original_max_position_embeddings": 4096,
        "type": "yarn",
    },
    "rope_theta": 10000,
    "routed_scaling_factor": 2.5,
    "scoring_func": "sigmoid",
    "tie_word_embeddings": False,
    "topk_group": 4,
    "topk_method": "noaux_tc",
    "torch_dtype": "bfloat16",
    "use_cache": True,
    "vocab_size": 129280,
}


# ---------------------------------------------------------------------------
# Backends
# ---------------------------------------------------------------------------
class FlashAttnMLASparseStandIn(AttentionBackend):
    """FLASH_ATTN_MLA_SPARSE (v1/attention/backends/mla/flashattn_mla_sparse.py:41-59)
    needs the CUDA FA extension to import; KV accounting only reads these two
    methods, copied verbatim."""

    @staticmethod
    def get_supported_kernel_block_sizes(kv_cache_spec=None):
        return [MultipleOf(64)]

    @classmethod
    def customize_spec(cls, spec):
        return align_blocks_to_rows(spec)

    @staticmethod
    def get_name():
        return "FLASH_ATTN_MLA_SPARSE"

    @classmethod
    def is_mla(cls):
        return True

    @classmethod
    def is_sparse(cls):
        return True


def backend_cls(name):
    if name == "FLASH_ATTN_MLA_SPARSE":
        return FlashAttnMLASparseStandIn
    if name == "FLASH_ATTN_MLA_SPARSE_FA4":
        # flashattn_mla_sparse.py:275-287: FlashAttnMLASparseFA4Backend subclasses
        # FlashInferMLASparseTRTLLMBackend and only changes (for KV accounting)
        # the kernel block sizes to [MultipleOf(64)]; customize_spec is inherited
        # (align_blocks_to_rows(spec, 64)). Module needs CUDA FA to import.
        from vllm.v1.attention.backends.mla.flashinfer_mla_sparse import (
            FlashInferMLASparseTRTLLMBackend,
        )

        return type(
            "FlashAttnMLASparseFA4StandIn",
            (FlashInferMLASparseTRTLLMBackend,),
            {
                "get_supported_kernel_block_sizes": staticmethod(
                    lambda kv_cache_spec=None: [MultipleOf(64)]
                ),
                "get_name": staticmethod(lambda: "FLASH_ATTN_MLA_SPARSE_FA4"),
            },
        )
    if name == "DEEPSEEK_V32_INDEXER":
        from vllm.v1.attention.backends.mla.indexer import DeepseekV32IndexerBackend

        return DeepseekV32IndexerBackend
    return AttentionBackendEnum[name].get_class()


class MLAStandIn(AttentionLayerBase):
    """get_kv_cache_spec IS MLAAttention.get_kv_cache_spec."""

    get_kv_cache_spec = MLAAttention.get_kv_cache_spec
    is_draft_layer = False
    kv_sharing_target_layer_name = None

    def __init__(self, **kw):
        self.__dict__.update(kw)

    def get_attn_backend(self):
        return self.attn_backend


# ---------------------------------------------------------------------------
def cuda_backend_priorities():
    """Run vllm/platforms/cuda.py::_get_backend_priorities from its own source
    (the module itself cannot be imported without libcuda)."""
    import vllm.platforms as P

    path = os.path.join(os.path.dirname(P.__file__), "cuda.py")
    tree = ast.parse(open(path).read())
    fn = next(
        n for n in tree.body
        if isinstance(n, ast.FunctionDef) and n.name == "_get_backend_priorities"
    )
    mod = ast.Module(body=[fn], type_ignores=[])
    ns = {
        "cache": functools.cache,
        "AttentionBackendEnum": AttentionBackendEnum,
        "DeviceCapability": object,
        "CacheDType": str,
    }
    exec(compile(mod, path, "exec"), ns)
    from vllm.platforms.interface import DeviceCapability

    f = ns["_get_backend_priorities"]
    out = {}
    for cap in ((9, 0), (10, 0)):
        for kv in ("auto", "fp8", "fp8_ds_mla"):
            for nh in (16, 32, 64, 128):
                key = f"SM{cap[0]}{cap[1]} kv={kv} heads_per_rank={nh}"
                pr = f(True, DeviceCapability(*cap), nh, kv, False, 576, False)
                # only the sparse ones matter (dense MLA backends reject use_sparse)
                out[key] = [b.name for b in pr]
    return out


def spec_info(spec, vllm_config):
    d = {
        "class": type(spec).__name__,
        "block_size": spec.block_size,
        "page_size_bytes": spec.page_size_bytes,
    }
    for a in (
        "head_size",
        "num_kv_heads",
        "cache_dtype_str",
        "state_content_bytes",
        "page_size_padded",
        "topk_buffer_width",
        "is_index_group_leader",
        "max_tp_shards",
        "dcp_sharded",
    ):
        if hasattr(spec, a):
            d[a] = getattr(spec, a)
    if hasattr(spec, "dtype"):
        d["dtype"] = str(spec.dtype).replace("torch.", "")
    if hasattr(spec, "cache_role"):
        d["cache_role"] = spec.cache_role.value
    if hasattr(spec, "kv_quant_mode"):
        d["kv_quant_mode"] = spec.kv_quant_mode.name
    if hasattr(spec, "state_content_size_bytes"):
        d["bytes_per_token"] = spec.state_content_size_bytes
    if hasattr(spec, "real_page_size_bytes"):
        d["real_page_size_bytes"] = spec.real_page_size_bytes
    d["block_stride_alignment"] = repr(spec.block_stride_alignment)
    d["effective_block_stride_alignment_bytes"] = spec.get_block_stride_alignment()
    d["max_memory_usage_bytes"] = spec.max_memory_usage_bytes(vllm_config)
    return d


_TMP = tempfile.mkdtemp(prefix="v32_cfg_")


def model_dir(cfg):
    d = os.path.join(_TMP, str(abs(hash(json.dumps(cfg, sort_keys=True)))))
    if not os.path.isdir(d):
        os.makedirs(d)
        with open(os.path.join(d, "config.json"), "w") as f:
            json.dump(cfg, f)
    return d


class LogCap(logging.Handler):
    def __init__(self):
        super().__init__(level=logging.INFO)
        self.records = []

    def emit(self, r):
        self.records.append(f"{r.levelname}: {r.getMessage()}")


def run_case(
    *,
    sm: int,
    kv_cache_dtype: str,
    mla_backend: str,
    tp: int,
    pp: int,
    avail: int | list[int],
    max_model_len: int,
    block_size: int | None = None,
    num_layers: int = 61,
    max_num_seqs: int = 256,
    max_num_batched_tokens: int = 8192,
    pp_partition: str | None = None,
):
    case = dict(
        sm=sm, kv_cache_dtype_input=kv_cache_dtype, mla_backend=mla_backend, tp=tp,
        pp=pp, available_memory_bytes=avail, max_model_len=max_model_len,
        block_size_input=block_size, num_layers=num_layers,
    )
    avail_stage = avail if isinstance(avail, list) else [avail] * pp
    # one worker per (pp stage, tp rank), PP-major like vLLM's executor
    avail_workers = [a for a in avail_stage for _ in range(tp)]

    cfg = dict(V32_HF_CONFIG, num_hidden_layers=num_layers)
    mdir = model_dir(cfg)
    if pp_partition is not None:
        os.environ["VLLM_PP_LAYER_PARTITION"] = pp_partition
    else:
        os.environ.pop("VLLM_PP_LAYER_PARTITION", None)

    cap = LogCap()
    vlog = logging.getLogger("vllm")
    vlog.addHandler(cap)
    old = vlog.level
    vlog.setLevel(logging.INFO)
    orig_family = type(current_platform).is_device_capability_family
    type(current_platform).is_device_capability_family = classmethod(
        lambda cls, capability, device_id=0: capability == sm
    )
    try:
        model_config = ModelConfig(
            model=mdir, tokenizer=mdir, skip_tokenizer_init=True,
            max_model_len=max_model_len, dtype="bfloat16",
        )
        ck = dict(cache_dtype=kv_cache_dtype, enable_prefix_caching=True)
        if block_size is not None:
            ck["block_size"] = block_size
        cache_config = CacheConfig(**ck)
        parallel_config = ParallelConfig(
            tensor_parallel_size=tp, pipeline_parallel_size=pp
        )
        scheduler_config = SchedulerConfig(
            max_num_seqs=max_num_seqs,
            max_num_batched_tokens=max_num_batched_tokens,
            max_model_len=model_config.max_model_len,
            is_encoder_decoder=False,
        )
        vc = VllmConfig(
            model_config=model_config, cache_config=cache_config,
            parallel_config=parallel_config, scheduler_config=scheduler_config,
            device_config=DeviceConfig(device="cuda"),
        )
        with set_current_vllm_config(vc):
            # model-specific config hook (bfloat16 -> auto)
            V32ConfigHook.verify_and_update_config(vc)
            hf = model_config.hf_text_config
            backend = backend_cls(mla_backend)
            # MLAAttention.__init__ (mla_attention.py:523-529)
            kv_dtype = cache_config.cache_dtype
            norm = _canonicalize_sparse_mla_kv_cache_dtype(backend, kv_dtype)
            if norm != kv_dtype:
                cache_config.cache_dtype = norm
                kv_dtype = norm
            case["kv_cache_dtype_after_canonicalize"] = kv_dtype
            # per-backend declared support for candidate block sizes
            case["supports_block_size"] = {
                b.get_name(): {
                    str(s): b.supports_block_size(s) for s in (16, 32, 64, 128, 256)
                }
                for b in (backend, backend_cls("DEEPSEEK_V32_INDEXER"))
            }

            sfc = vc.compilation_config.static_forward_context
            sfc.clear()
            objs = {}
            names = []
            index_head_dim = hf.index_head_dim
            quant_block = 128
            for i in range(num_layers):
                # DeepseekV32Attention.__init__: indexer (and its k_cache) is
                # built before MLAAttention.__init__ registers the attn layer.
                kname = f"model.layers.{i}.self_attn.indexer.k_cache"
                kc = DeepseekV32IndexerCache(
                    head_dim=index_head_dim + index_head_dim // quant_block * 4,
                    dtype=torch.uint8,
                    prefix=kname,
                    cache_config=cache_config,
                )
                aname = f"model.layers.{i}.self_attn.attn"
                mla = MLAStandIn(
                    kv_cache_dtype=kv_dtype,
                    head_size=hf.kv_lora_rank + hf.qk_rope_head_dim,
                    sliding_window=None,
                    topk_buffer_width=hf.index_topk,
                    indexer=object(),
                    non_causal_multi_token_decode=False,
                    attn_backend=backend,
                    layer_name=aname,
                )
                sfc[aname] = mla
                objs[kname] = kc
                objs[aname] = mla
                names += [(i, kname), (i, aname)]
            # Platform.update_block_size_for_backend (runs after load_model)
            bs_before = cache_config.block_size
            current_platform.update_block_size_for_backend(vc)
            case["block_size_before_update"] = bs_before
            case["user_specified_block_size"] = cache_config.user_specified_block_size
            case["block_size_after_update"] = cache_config.block_size
            case["non_ssm_backends_in_layer_order"] = [
                b.get_name() for b in current_platform._find_non_ssm_backends(vc)
            ]

            # per-worker specs
            ranges = [get_pp_indices(num_layers, r, pp) for r in range(pp)]
            case["pp_stage_layer_ranges"] = [list(r) for r in ranges]
            specs_per_worker, layouts = [], []
            for (s, e) in ranges:
                sfc.clear()
                sfc.update({n: objs[n] for i, n in names if s <= i < e})
                st = get_kv_cache_spec(vc)
                lay = [
                    x.name
                    for x in get_supported_kv_cache_layouts(get_current_attn_backends(vc))
                ]
                for _ in range(tp):
                    specs_per_worker.append(dict(st))
                    layouts.append(lay)
            sfc.clear()
            sfc.update(objs)
            first = specs_per_worker[0]
            case["per_layer_specs"] = {
                "indexer_k_cache": spec_info(
                    first["model.layers.0.self_attn.indexer.k_cache"], vc
                ),
                "sparse_mla": spec_info(first["model.layers.0.self_attn.attn"], vc),
            }
            distinct = {
                (type(sp).__name__, sp.page_size_bytes)
                for w in specs_per_worker for sp in w.values()
            }
            case["distinct_layer_specs"] = sorted(distinct)
            case["layers_with_kv_spec_per_worker"] = sorted(
                {len(w) for w in specs_per_worker}
            )

            # EngineCore._initialize_kv_caches
            register_all_kvcache_specs(vc)
            all_specs = [sp for w in specs_per_worker for sp in w.values()]
            layout = resolve_kv_cache_layout(vc, layouts, all_specs)
            case["kv_cache_layout"] = layout.name
            gg = planning.get_global_kv_cache_groups(vc, specs_per_worker)
            case["global_groups"] = [
                {
                    "group_spec_class": type(g.kv_cache_spec).__name__,
                    "num_layers": len(g.layer_names),
                    "num_indexer_layers": sum("k_cache" in n for n in g.layer_names),
                    "num_mla_layers": sum(n.endswith(".attn") for n in g.layer_names),
                    "first_layer_names": g.layer_names[:3],
                    "group_page_size_bytes": g.kv_cache_spec.page_size_bytes,
                    "group_block_size": g.kv_cache_spec.block_size,
                    "group_max_memory_usage_bytes": g.kv_cache_spec.max_memory_usage_bytes(vc),
                    "blocks_per_request": (
                        g.kv_cache_spec.max_memory_usage_pages(vc)
                        if isinstance(g.kv_cache_spec, UniformTypeKVCacheSpecs)
                        else None
                    ),
                }
                for g in gg
            ]
            builder = planning.DefaultKVCacheConfigBuilder()
            per_stage = []
            for st_idx in range(pp):
                w = st_idx * tp
                proj = planning._project_kv_cache_groups_to_worker(gg, specs_per_worker[w])
                bpb = planning._pool_bytes_per_block_from_builder(builder, vc, proj)
                need = planning._max_memory_usage_bytes_from_groups(builder, vc, proj)
                chk = avail_workers[w] - bpb
                est = planning._estimate_max_model_len_from_groups(builder, vc, proj, chk)
                saved = model_config.max_model_len
                model_config.max_model_len = 1 << 26
                try:
                    est_unc = planning._estimate_max_model_len_from_groups(
                        builder, vc, proj, chk
                    )
                finally:
                    model_config.max_model_len = saved
                per_stage.append(
                    {
                        "pp_rank": st_idx,
                        "layers_on_stage": len(specs_per_worker[w]),
                        "bytes_per_block": bpb,
                        "num_blocks_own": avail_workers[w] // bpb,
                        "needed_memory_bytes": need,
                        "check_memory_bytes(avail-bytes_per_block)": chk,
                        "fits": need <= chk,
                        "estimate_max_model_len": est,
                        "estimate_max_model_len_uncapped": est_unc,
                    }
                )
            case["per_stage"] = per_stage
            try:
                cfgs = planning.get_kv_cache_configs(
                    vc, specs_per_worker, avail_workers, gg
                )
                case["error"] = None
            except ValueError as e:
                case["error"] = str(e)
                cfgs = None
            if cfgs is not None:
                case["num_blocks"] = cfgs[0].num_blocks
                case["kv_cache_tensors_worker0"] = [
                    {
                        "size": t.size, "num_layers": len(t.layers),
                        "layer_stride": t.layer_stride, "block_stride": t.block_stride,
                        "offset": t.offset, "first_layer": t.layers[0],
                    }
                    for t in cfgs[0].kv_cache_tensors
                ]
                sched = kvu.generate_scheduler_kv_cache_config(cfgs)
                groups = sched.kv_cache_groups
                part = [g.kv_cache_spec.block_size for g in groups
                        if g.kv_cache_spec.prefix_cacheable]
                cache_config.block_size = min(part or [g.kv_cache_spec.block_size for g in groups])
                kvu.update_kv_cache_capacity(vc, sched)
                case["scheduler_block_size"] = cache_config.block_size
                case["kv_cache_size_tokens"] = cache_config.kv_cache_size_tokens
                case["max_concurrency"] = cache_config.kv_cache_max_concurrency
                case["num_blocks_x_block_size"] = sched.num_blocks * cache_config.block_size
                case["log_line"] = (
                    f"GPU KV cache size: {cache_config.kv_cache_size_tokens:,} tokens, "
                    f"Maximum concurrency for {model_config.max_model_len:,} tokens "
                    f"per request: {cache_config.kv_cache_max_concurrency:.2f}x"
                )
    finally:
        type(current_platform).is_device_capability_family = orig_family
        vlog.removeHandler(cap)
        vlog.setLevel(old)
    case["vllm_log"] = [r for r in cap.records if "KV cache" in r or "block size" in r
                        or "Using" in r]
    return case


def main():
    out = {"vllm_version": vllm.__version__, "cases": []}
    try:
        out["cuda_backend_priorities_mla"] = cuda_backend_priorities()
    except Exception as e:  # pragma: no cover
        out["cuda_backend_priorities_mla"] = repr(e)

    # (sm, cache dtype as passed, the sparse backend vLLM's CUDA selector picks)
    scenarios = [
        (90, "auto", "FLASH_ATTN_MLA_SPARSE"),      # H100/H200, bf16 cache
        (90, "fp8_ds_mla", "FLASHMLA_SPARSE"),      # H100/H200, fp8_ds_mla
        (90, "fp8", "FLASHMLA_SPARSE"),             # H100/H200, fp8 -> fp8_ds_mla
        (100, "auto", "FLASH_ATTN_MLA_SPARSE_FA4"), # B200 TP8 (16 heads/rank), bf16
        (100, "auto", "FLASHMLA_SPARSE"),           # B200 TP<=4 (>16 heads/rank), bf16
        (100, "fp8_ds_mla", "FLASHMLA_SPARSE"),     # B200 fp8_ds_mla
        (100, "fp8", "FLASHINFER_MLA_SPARSE"),      # B200 fp8 (standard fp8, 576 B)
    ]
    for sm, kv, be in scenarios:
        for avail in (40 * GiB, 10 * GiB):
            for mml in (163840, 32768):
                out["cases"].append(run_case(
                    sm=sm, kv_cache_dtype=kv, mla_backend=be, tp=8, pp=1,
                    avail=avail, max_model_len=mml,
                ))
    # PP=2 (61 layers -> 31/30 by get_pp_indices), TP=8
    for sm, kv, be in [(90, "auto", "FLASH_ATTN_MLA_SPARSE"),
                       (90, "fp8_ds_mla", "FLASHMLA_SPARSE")]:
        for avail in (40 * GiB, 10 * GiB):
            out["cases"].append(run_case(
                sm=sm, kv_cache_dtype=kv, mla_backend=be, tp=8, pp=2,
                avail=avail, max_model_len=163840,
            ))
        # unequal memory per stage
        out["cases"].append(run_case(
            sm=sm, kv_cache_dtype=kv, mla_backend=be, tp=8, pp=2,
            avail=[10 * GiB, 12 * GiB], max_model_len=163840,
        ))
    # user --block-size
    for bs in (128, 256):
        for sm, kv, be in [(90, "auto", "FLASH_ATTN_MLA_SPARSE"),
                           (90, "fp8_ds_mla", "FLASHMLA_SPARSE"),
                           (100, "fp8_ds_mla", "FLASHMLA_SPARSE")]:
            out["cases"].append(run_case(
                sm=sm, kv_cache_dtype=kv, mla_backend=be, tp=8, pp=1,
                avail=40 * GiB, max_model_len=163840, block_size=bs,
            ))
    # fallback sparse backends (same KV numbers expected)
    for sm, kv, be in [(90, "auto", "FLASHMLA_SPARSE"),
                       (90, "auto", "FLASHINFER_MLA_SPARSE_SM90"),
                       (100, "auto", "FLASHINFER_MLA_SPARSE")]:
        out["cases"].append(run_case(
            sm=sm, kv_cache_dtype=kv, mla_backend=be, tp=8, pp=1,
            avail=40 * GiB, max_model_len=163840,
        ))
    # other quantized cache dtypes
    for sm, kv, be in [(90, "fp8_e4m3", "FLASHINFER_MLA_SPARSE_SM90"),
                       (100, "fp8_e4m3", "FLASHINFER_MLA_SPARSE"),
                       (100, "nvfp4_ds_mla", "FLASHMLA_SPARSE")]:
        out["cases"].append(run_case(
            sm=sm, kv_cache_dtype=kv, mla_backend=be, tp=8, pp=1,
            avail=40 * GiB, max_model_len=163840,
        ))
    # max_model_len not a multiple of the block size
    for sm, kv, be in [(90, "auto", "FLASH_ATTN_MLA_SPARSE"),
                       (90, "fp8_ds_mla", "FLASHMLA_SPARSE")]:
        out["cases"].append(run_case(
            sm=sm, kv_cache_dtype=kv, mla_backend=be, tp=8, pp=1,
            avail=40 * GiB, max_model_len=100000,
        ))
    # --kv-cache-dtype bfloat16 (mapped to auto by the V3.2 config hook)
    out["cases"].append(run_case(
        sm=90, kv_cache_dtype="bfloat16", mla_backend="FLASH_ATTN_MLA_SPARSE",
        tp=8, pp=1, avail=40 * GiB, max_model_len=163840,
    ))
    _OUT.write(json.dumps(out, indent=1, default=str) + "\n")


if __name__ == "__main__":
    main()
