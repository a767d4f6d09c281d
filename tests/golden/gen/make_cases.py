#!/usr/bin/env python3
"""Golden-vector generator for Headroom's KV-cache planner tests.

Two jobs, both deterministic (fixed seed, no clock, no environment reads):

  make_cases.py gen   --out DIR
      writes DIR/cases.jsonl          one {"name","category","input"} per case
             DIR/oracle_in.jsonl      just the "input" objects, same order
                                       (feed this to `oracle.py --jsonl`)

  make_cases.py merge --cases DIR/cases.jsonl --outputs DIR/oracle_out.jsonl \
                      --kv tests/golden/oracle_kv.jsonl --pp tests/golden/oracle_pp.jsonl \
                      [--failures DIR/failures.jsonl]
      pairs every case with the oracle's answer, trims the answer to what the
      Rust tests need, drops cases on which the oracle itself crashed
      (`input_error`), and writes the two golden files (sorted keys, one case
      per line). Crashed cases go to --failures.

The oracle is /work/shared/oracle/oracle.py (vLLM 0.33.0's own planning code);
see tests/golden/gen/README.md.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import re
import sys
from collections import Counter

SEED = 20251129
GiB = 1 << 30
DSIZE = {"bf16": 2, "fp16": 2, "fp32": 4, "fp8": 1, "fp8_e4m3": 1, "fp8_e5m2": 1}

# --------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------


class Cases:
    def __init__(self):
        self.rows = []
        self.names = set()

    def add(self, category, name, inp):
        name = f"{category}/{name}"
        base, k = name, 2
        while name in self.names:
            name = f"{base}#{k}"
            k += 1
        self.names.add(name)
        inp = dict(inp)
        if inp.get("mode", "kv") == "kv":
            # full group membership (layer indices) for the Rust tests
            inp["include_layer_names"] = True
        self.rows.append({"name": name, "category": category, "input": inp})


def dense_bytes_per_token(num_layers, heads, head, dtype):
    return num_layers * heads * 2 * head * DSIZE[dtype]


def dense_need(num_layers, heads, head, dtype, mml, bs):
    bs = bs or 16
    return num_layers * heads * 2 * head * DSIZE[dtype] * bs * (-(-mml // bs))


def jitter(rng, x):
    """Make a round number un-round (so floor divisions matter)."""
    x = int(x)
    return max(1, x + rng.randint(-(1 << 20), 1 << 20) + rng.randint(0, 4095))


def logu(rng, lo, hi):
    return math.exp(rng.uniform(math.log(lo), math.log(hi)))


# --------------------------------------------------------------------------
# realistic per-rank state shapes
# --------------------------------------------------------------------------


def mamba2_shapes(tp, intermediate=8192, n_groups=8, d_state=128, n_heads=128,
                  head_dim=64, conv_kernel=4):
    """vLLM MambaStateShapeCalculator.mamba2_state_shape (n_groups padded to tp)."""
    groups = n_groups + (0 if n_groups % tp == 0 else tp - n_groups)
    conv_dim = intermediate + 2 * groups * d_state
    return [[conv_kernel - 1, conv_dim // tp], [n_heads // tp, head_dim, d_state]]


def gdn_shapes(tp, k_heads=16, v_heads=32, k_dim=128, v_dim=128, conv_kernel=4):
    """Gated DeltaNet (Qwen3-Next) conv + recurrent state per rank."""
    conv_dim = 2 * k_heads * k_dim + v_heads * v_dim
    return [[conv_kernel - 1, conv_dim // tp], [v_heads // tp, k_dim, v_dim]]


def mamba1_shapes(tp, intermediate=8192, d_state=16, conv_kernel=4):
    return [[conv_kernel - 1, intermediate // tp], [intermediate // tp, d_state]]


NEMOTRON_H_8B = "M-M-M-M*-M-M-M-M*-M-M-M-M*-M-M-M-M*-M-M-M-M*-M-M-M-M-M-"  # 52


# --------------------------------------------------------------------------
# categories
# --------------------------------------------------------------------------

DENSE_LAYERS = [16, 22, 24, 26, 28, 32, 36, 40, 42, 46, 48, 60, 61, 62, 64, 80, 88, 94, 95, 126]
HEADS = list(range(1, 17))
HEAD_SIZES = [64, 80, 96, 128, 256]
DTYPES = ["bf16", "bf16", "bf16", "fp16", "fp32", "fp8", "fp8", "fp8_e4m3", "fp8_e5m2"]
BLOCKS = [16, 16, 32, 64, None, None]
MMLS = [512, 1000, 2048, 4096, 8191, 8192, 10000, 16384, 32768, 32769, 65536, 100000,
        131071, 131072, 200000, 262144, 524288, 1048576]


def cat_dense(C, rng):
    # hand-picked real models first
    named = [
        # name, layers, kv heads per rank, head, dtype, tp, mml, avail
        ("llama3_8b_tp1", 32, 8, 128, "bf16", 1, 131072, 40 * GiB),
        ("llama3_8b_fp8_tp1", 32, 8, 128, "fp8", 1, 131072, 40 * GiB),
        ("llama3_70b_tp4", 80, 2, 128, "bf16", 4, 131072, 40 * GiB),
        ("llama3_70b_tp8", 80, 1, 128, "bf16", 8, 131072, 50 * GiB),
        ("llama3_70b_tp16_replicated", 80, 1, 128, "bf16", 16, 131072, 50 * GiB),
        ("llama3_405b_tp8", 126, 1, 128, "bf16", 8, 131072, 20 * GiB),
        ("llama3_405b_tp16_replicated", 126, 1, 128, "fp8", 16, 131072, 25 * GiB),
        ("qwen2_7b", 28, 4, 128, "bf16", 1, 32768, 12 * GiB),
        ("qwen2_72b_tp4", 80, 2, 128, "bf16", 4, 32768, 30 * GiB),
        ("qwen3_32b_tp2", 64, 4, 128, "bf16", 2, 40960, 25 * GiB),
        ("mistral_7b", 32, 8, 128, "bf16", 1, 32768, 14 * GiB),
        ("phi3_mini_fp16_tp2", 32, 16, 96, "fp16", 2, 4096, 6 * GiB),
        ("gemma_2b_mqa", 18 + 4, 1, 256, "bf16", 1, 8192, 3 * GiB),
        ("stablelm_head80", 24, 8, 80, "fp16", 1, 4096, 2 * GiB),
        ("falcon_40b_tp8_replicated", 60, 1, 64, "bf16", 8, 2048, 30 * GiB),
        ("yi_34b_fp32", 60, 8, 128, "fp32", 1, 4096, 50 * GiB),
        ("llama2_13b_mha_tp2", 40, 20, 128, "fp16", 2, 4096, 20 * GiB),
    ]
    for name, L, h, hs, dt, tp, mml, av in named:
        for bs in (16, None):
            C.add("dense", f"{name}_bs{bs}", {
                "num_layers": L, "num_kv_heads": h, "head_size": hs, "dtype": dt,
                "tensor_parallel_size": tp, "block_size": bs, "max_model_len": mml,
                "max_num_batched_tokens": 8192, "available_memory_bytes": av,
            })
    # random sweep
    for i in range(70):
        L = rng.choice(DENSE_LAYERS)
        h = rng.choice(HEADS)
        hs = rng.choice(HEAD_SIZES)
        dt = rng.choice(DTYPES)
        bs = rng.choice(BLOCKS)
        mml = rng.choice(MMLS) if rng.random() < 0.8 else rng.randint(300, 400000)
        tp = rng.choice([1, 1, 2, 4, 8])
        need = dense_need(L, h, hs, dt if dt in DSIZE else "bf16", mml, bs)
        if rng.random() < 0.25:
            avail = jitter(rng, rng.uniform(1, 80) * GiB)
        else:
            avail = jitter(rng, need * logu(rng, 1.05, 60))
        avail = min(avail, 150 * GiB + rng.randint(0, 1 << 20))
        inp = {
            "num_layers": L, "num_kv_heads": h, "head_size": hs, "dtype": dt,
            "tensor_parallel_size": tp, "block_size": bs, "max_model_len": mml,
            "max_num_batched_tokens": rng.choice([2048, 8192, 16384]),
            "available_memory_bytes": avail,
        }
        if rng.random() < 0.15:
            inp["attn_backend"] = rng.choice(["FLASHINFER", "TRITON_ATTN"])
        if rng.random() < 0.1:
            inp["head_size_v"] = rng.choice([64, 128])
        C.add("dense", f"rand{i:02d}_L{L}_h{h}x{hs}_{dt}_bs{bs}_len{mml}_tp{tp}", inp)
    # large user block sizes
    for backend, bs, mml in (("FLASH_ATTN", 128, 131072), ("FLASH_ATTN", 256, 100000),
                             ("FLASHINFER", 256, 131071), ("TRITON_ATTN", 1024, 8191)):
        C.add("dense", f"llama8b_{backend}_bs{bs}_len{mml}", {
            "num_layers": 32, "num_kv_heads": 8, "head_size": 128, "dtype": "bf16",
            "attn_backend": backend, "block_size": bs, "max_model_len": mml,
            "available_memory_bytes": jitter(rng, 30 * GiB),
        })
    # TP beyond the KV heads: per-rank heads = 1 at several TP sizes
    for tp in (8, 16, 32):
        for L, hs in ((32, 128), (80, 128), (48, 64)):
            C.add("dense", f"tp{tp}_beyond_kv_heads_L{L}_h1x{hs}", {
                "num_layers": L, "num_kv_heads": 1, "head_size": hs, "dtype": "bf16",
                "tensor_parallel_size": tp, "block_size": 16, "max_model_len": 65536,
                "available_memory_bytes": jitter(rng, rng.uniform(5, 60) * GiB),
            })


def cat_mla(C, rng):
    variants = []
    for L, lora, rope in ((61, 512, 64), (27, 512, 64), (60, 512, 64), (47, 256, 32), (26, 256, 32)):
        for dt, backend, bs in (
            ("bf16", None, None), ("bf16", None, 16), ("bf16", None, 64),
            ("bf16", "FLASHMLA", None), ("fp8", "FLASHMLA", 64), ("fp8", None, 64),
            ("fp8_ds_mla", "FLASHMLA", None), ("fp8_ds_mla", "FLASHMLA_SPARSE", None),
            ("bf16", "FLASHINFER_MLA", None), ("bf16", "CUTLASS_MLA", None),
        ):
            variants.append((L, lora, rope, dt, backend, bs))
    rng.shuffle(variants)
    for k, (L, lora, rope, dt, backend, bs) in enumerate(variants[:40]):
        tp = rng.choice([1, 8, 8, 16])
        mml = rng.choice([4096, 32768, 131072, 163840, 100000, 8191])
        bpt = L * (656 if dt == "fp8_ds_mla" else (lora + rope) * DSIZE[dt])
        avail = jitter(rng, bpt * mml * logu(rng, 1.05, 40))
        inp = {
            "num_layers": L, "default_kind": "mla", "kv_lora_rank": lora,
            "qk_rope_head_dim": rope, "dtype": dt, "block_size": bs,
            "tensor_parallel_size": tp, "max_model_len": mml,
            "available_memory_bytes": avail,
        }
        if backend:
            inp["mla_backend"] = backend
        C.add("mla", f"L{L}_{lora}+{rope}_{dt}_{backend or 'default'}_bs{bs}_len{mml}_tp{tp}_{k}", inp)


def cat_swa(C, rng):
    # gpt-oss: alternating sliding:128 / full, head 64
    for L, model in ((36, "120b"), (24, "20b")):
        for tp, h in ((1, 8), (2, 4), (8, 1)):
            for mnbt in (2048, 8192, 16384):
                mml = rng.choice([131072, 32768, 8192, 100000])
                C.add("swa_gptoss", f"gptoss{model}_tp{tp}_mnbt{mnbt}_len{mml}", {
                    "num_layers": L, "layer_pattern": ["sliding:128", "full"],
                    "num_kv_heads": h, "head_size": 64, "dtype": "bf16",
                    "tensor_parallel_size": tp, "block_size": rng.choice([16, None]),
                    "max_model_len": mml, "max_num_batched_tokens": mnbt,
                    "available_memory_bytes": jitter(rng, rng.uniform(2, 60) * GiB),
                })
    # gemma-2: sliding:4096 / full
    for L, h, hs, name in ((42, 8, 256, "9b"), (46, 16, 128, "27b"), (26, 4, 256, "2b")):
        for mml in (8192, 4096, 2048, 8000):
            mnbt = rng.choice([2048, 8192, 16384])
            C.add("swa_gemma2", f"gemma2_{name}_len{mml}_mnbt{mnbt}", {
                "num_layers": L, "layer_pattern": ["sliding:4096", "full"],
                "num_kv_heads": h, "head_size": hs, "dtype": rng.choice(["bf16", "bf16", "fp8"]),
                "block_size": 16, "max_model_len": mml, "max_num_batched_tokens": mnbt,
                "available_memory_bytes": jitter(rng, rng.uniform(1, 30) * GiB),
            })
    # gemma-3: 5 x sliding:1024 then 1 full
    g3 = ["sliding:1024"] * 5 + ["full"]
    for L, h, hs, name in ((26, 1, 256, "1b"), (34, 4, 256, "4b"), (48, 8, 256, "12b"), (62, 16, 128, "27b")):
        for mml, mnbt in ((32768, 8192), (131072, 2048), (131072, 16384), (1000, 8192), (8192, 8192)):
            C.add("swa_gemma3", f"gemma3_{name}_len{mml}_mnbt{mnbt}", {
                "num_layers": L, "layer_pattern": g3, "num_kv_heads": h, "head_size": hs,
                "dtype": "bf16", "block_size": rng.choice([16, None]), "max_model_len": mml,
                "max_num_batched_tokens": mnbt,
                "available_memory_bytes": jitter(rng, rng.uniform(1, 40) * GiB),
            })
    # windows larger than max_model_len
    for L, w, mml in ((32, 4096, 2048), (28, 32768, 16384), (40, 131072, 100000), (36, 8192, 8191)):
        C.add("swa_misc", f"window{w}_gt_len{mml}_L{L}", {
            "num_layers": L, "layer_pattern": [f"sliding:{w}", "full"], "num_kv_heads": 8,
            "head_size": 128, "dtype": "bf16", "block_size": 16, "max_model_len": mml,
            "available_memory_bytes": jitter(rng, rng.uniform(2, 20) * GiB),
        })
    # all-sliding (Mistral-7B v0.1 style), sliding with TP/PP-free variety
    for w, mml in ((4096, 32768), (4096, 4096), (2047, 65536)):
        C.add("swa_misc", f"all_sliding{w}_len{mml}", {
            "layers": [f"sliding:{w}"] * 32,
            "num_kv_heads": 8, "head_size": 128, "dtype": "bf16", "block_size": 16,
            "max_model_len": mml, "available_memory_bytes": jitter(rng, 12 * GiB),
        })
    # large block sizes (FlashInfer kernels are [16, 32, 64]; FA takes MultipleOf(16))
    for backend, bs in (("FLASHINFER", 64), ("FLASHINFER", 128), ("FLASHINFER", 1024),
                        ("FLASH_ATTN", 256), ("TRITON_ATTN", 512)):
        C.add("swa_misc", f"gptoss120b_{backend}_bs{bs}", {
            "num_layers": 36, "layer_pattern": ["sliding:128", "full"], "num_kv_heads": 8,
            "head_size": 64, "dtype": "bf16", "attn_backend": backend, "block_size": bs,
            "max_model_len": 131072, "available_memory_bytes": jitter(rng, 28 * GiB),
        })
    C.add("swa_misc", "gemma3_12b_FLASHINFER_bs128", {
        "num_layers": 48, "layer_pattern": g3, "num_kv_heads": 8, "head_size": 256,
        "dtype": "bf16", "attn_backend": "FLASHINFER", "block_size": 128,
        "max_model_len": 131072, "available_memory_bytes": jitter(rng, 30 * GiB),
    })
    # async scheduling off changes max_concurrent_batches
    C.add("swa_misc", "gemma2_9b_async_off", {
        "num_layers": 42, "layer_pattern": ["sliding:4096", "full"], "num_kv_heads": 8,
        "head_size": 256, "dtype": "bf16", "block_size": 16, "max_model_len": 8192,
        "async_scheduling": False, "available_memory_bytes": 10 * GiB + 12345,
    })
    # hybrid KV cache manager disabled: sliding layers count as full
    for name, L, pat, h, hs, mml in (
        ("gptoss120b", 36, ["sliding:128", "full"], 8, 64, 131072),
        ("gemma2_9b", 42, ["sliding:4096", "full"], 8, 256, 8192),
        ("gemma3_12b", 48, g3, 8, 256, 32768),
        ("gemma3_27b_err", 62, g3, 16, 128, 131072),
    ):
        C.add("swa_disable_hma", f"{name}_disable_hma", {
            "num_layers": L, "layer_pattern": pat, "num_kv_heads": h, "head_size": hs,
            "dtype": "bf16", "block_size": 16, "max_model_len": mml,
            "disable_hybrid_kv_cache_manager": True,
            "available_memory_bytes": jitter(rng, rng.uniform(8, 30) * GiB),
        })


def cat_chunked(C, rng):
    pat = ["chunked:8192"] * 3 + ["full"]
    for L, h, tp in ((48, 8, 1), (48, 2, 4), (48, 1, 8)):
        for mml, mnbt in ((1048576, 8192), (131072, 16384), (8192, 2048), (10000, 8192)):
            C.add("chunked", f"llama4_L{L}_tp{tp}_len{mml}_mnbt{mnbt}", {
                "num_layers": L, "layer_pattern": pat, "num_kv_heads": h, "head_size": 128,
                "dtype": rng.choice(["bf16", "fp8"]), "tensor_parallel_size": tp,
                "block_size": rng.choice([16, None]), "max_model_len": mml,
                "max_num_batched_tokens": mnbt,
                "available_memory_bytes": jitter(rng, rng.uniform(10, 70) * GiB),
            })
    C.add("chunked", "llama4_L48_disable_hma", {
        "num_layers": 48, "layer_pattern": pat, "num_kv_heads": 8, "head_size": 128,
        "dtype": "bf16", "block_size": 16, "max_model_len": 131072,
        "disable_hybrid_kv_cache_manager": True, "available_memory_bytes": 60 * GiB + 777,
    })
    C.add("chunked", "llama4_L48_hma_explicit_false", {
        "num_layers": 48, "layer_pattern": pat, "num_kv_heads": 8, "head_size": 128,
        "dtype": "bf16", "block_size": 16, "max_model_len": 131072,
        "disable_hybrid_kv_cache_manager": False, "available_memory_bytes": 60 * GiB + 777,
    })


def _mamba_layer(shapes, dtypes, mtype):
    return {"kind": "mamba", "shapes": shapes, "dtypes": dtypes, "mamba_type": mtype}


def cat_mamba(C, rng):
    # Nemotron-H-8B-like Mamba2 hybrid: M mamba, * attention, - MLP (no cache)
    for tp in (1, 2, 4, 8):
        shapes = mamba2_shapes(tp)
        for ssm_dt in ("bfloat16", "float32"):
            for pc, mode, bs in ((True, None, None), (False, None, None), (True, None, 16),
                                 (False, None, 16), (True, "align", 2048)):
                if tp in (2, 8) and (bs is not None):
                    continue
                layer = _mamba_layer(shapes, ["bfloat16", ssm_dt], "MAMBA2")
                pattern = [layer if c == "M" else ("full" if c == "*" else "none")
                           for c in NEMOTRON_H_8B]
                mml = rng.choice([65536, 131072, 8192])
                inp = {
                    "layers": pattern, "num_kv_heads": max(1, 8 // tp), "head_size": 128,
                    "dtype": "bf16", "tensor_parallel_size": tp, "block_size": bs,
                    "max_model_len": mml, "max_num_batched_tokens": 8192,
                    "enable_prefix_caching": pc,
                    "available_memory_bytes": jitter(rng, rng.uniform(4, 50) * GiB),
                }
                if mode:
                    inp["mamba_cache_mode"] = mode
                C.add("mamba2_hybrid",
                      f"nemotronh8b_tp{tp}_ssm{ssm_dt}_pc{int(pc)}_bs{bs}_len{mml}", inp)
    # Bamba-9B-like: 32 layers, attention at 9/18/27, n_groups=1 (padded per TP)
    for tp in (1, 2, 4):
        shapes = mamba2_shapes(tp, n_groups=1)
        layer = _mamba_layer(shapes, ["bfloat16", "bfloat16"], "MAMBA2")
        layers = ["full" if i in (9, 18, 27) else layer for i in range(32)]
        for pc in (True, False):
            C.add("mamba2_hybrid", f"bamba9b_tp{tp}_pc{int(pc)}", {
                "layers": layers, "num_kv_heads": max(1, 8 // tp), "head_size": 128,
                "dtype": "bf16", "tensor_parallel_size": tp, "max_model_len": 32768,
                "enable_prefix_caching": pc,
                "available_memory_bytes": jitter(rng, rng.uniform(4, 30) * GiB),
            })
    # PC off with an explicit mamba_block_size
    shapes = mamba2_shapes(1)
    layer = _mamba_layer(shapes, ["bfloat16", "float32"], "MAMBA2")
    C.add("mamba2_hybrid", "nemotronh8b_pc0_mamba_block_size_4096", {
        "layers": [layer if c == "M" else ("full" if c == "*" else "none") for c in NEMOTRON_H_8B],
        "num_kv_heads": 8, "head_size": 128, "dtype": "bf16", "max_model_len": 65536,
        "enable_prefix_caching": False, "mamba_block_size": 4096,
        "available_memory_bytes": 20 * GiB + 99,
    })
    # PC on with an explicit mamba_block_size, and an explicit mamba_cache_mode "none"
    # (which vLLM switches to "align" because prefix caching is on)
    for label, extra in (("pc1_mamba_block_size_2048", {"mamba_block_size": 2048}),
                         ("pc1_mode_none_forced_align", {"mamba_cache_mode": "none"}),
                         ("pc0_mode_align_forced_none", {"mamba_cache_mode": "align",
                                                         "enable_prefix_caching": False})):
        inp = {
            "layers": [layer if c == "M" else ("full" if c == "*" else "none")
                       for c in NEMOTRON_H_8B],
            "num_kv_heads": 8, "head_size": 128, "dtype": "bf16", "max_model_len": 65536,
            "enable_prefix_caching": True, "available_memory_bytes": 20 * GiB + 99,
        }
        inp.update(extra)
        C.add("mamba2_hybrid", f"nemotronh8b_{label}", inp)
    # Jamba-like Mamba1 hybrid (attention every 8th layer, offset 4)
    for tp in (1, 2):
        layer = _mamba_layer(mamba1_shapes(tp), ["bfloat16", "float32"], "MAMBA1")
        layers = ["full" if i % 8 == 4 else layer for i in range(32)]
        for pc in (True, False):
            C.add("mamba1_hybrid", f"jamba_mini_tp{tp}_pc{int(pc)}", {
                "layers": layers, "num_kv_heads": max(1, 8 // tp), "head_size": 128,
                "dtype": "bf16", "tensor_parallel_size": tp, "max_model_len": 65536,
                "enable_prefix_caching": pc,
                "available_memory_bytes": jitter(rng, rng.uniform(8, 40) * GiB),
            })


def cat_gdn(C, rng):
    # Qwen3-Next-80B-A3B-like: 48 layers, 3 GDN then 1 full attention (2 KV heads x 256)
    for tp in (1, 2, 4, 8):
        shapes = gdn_shapes(tp)
        for ssm_dt in ("bfloat16", "float32"):
            for pc, bs in ((True, None), (False, None), (True, 16), (True, 64), (False, 1024)):
                if ssm_dt == "float32" and bs is not None:
                    continue
                layer = _mamba_layer(shapes, ["bfloat16", ssm_dt], "GDN_ATTN")
                mml = rng.choice([262144, 65536, 32768])
                C.add("gdn_hybrid", f"qwen3next_tp{tp}_ssm{ssm_dt}_pc{int(pc)}_bs{bs}_len{mml}", {
                    "num_layers": 48, "layer_pattern": [layer, layer, layer, "full"],
                    "num_kv_heads": max(1, 2 // tp), "head_size": 256, "dtype": "bf16",
                    "tensor_parallel_size": tp, "block_size": bs, "max_model_len": mml,
                    "enable_prefix_caching": pc,
                    "available_memory_bytes": jitter(rng, rng.uniform(3, 40) * GiB),
                })
    # fp8 attention cache with a GDN hybrid
    layer = _mamba_layer(gdn_shapes(4), ["bfloat16", "bfloat16"], "GDN_ATTN")
    C.add("gdn_hybrid", "qwen3next_tp4_fp8kv", {
        "num_layers": 48, "layer_pattern": [layer, layer, layer, "full"], "num_kv_heads": 1,
        "head_size": 256, "dtype": "fp8", "tensor_parallel_size": 4, "max_model_len": 262144,
        "available_memory_bytes": 30 * GiB + 5,
    })


def cat_pp(C, rng):
    splits = [(61, 2), (30, 4), (62, 4), (31, 4), (43, 3), (80, 3), (126, 4), (32, 2), (95, 4), (88, 3)]
    for L, pp in splits:
        for variant in ("equal", "unequal"):
            h, hs = rng.choice([(8, 128), (2, 128), (1, 128), (4, 64), (16, 256)])
            tp = rng.choice([1, 2, 4])
            base = jitter(rng, rng.uniform(8, 40) * GiB)
            if variant == "equal":
                avail = base
            else:
                avail = [jitter(rng, base * rng.uniform(0.5, 1.5)) for _ in range(pp)]
            C.add("pp", f"L{L}_pp{pp}_tp{tp}_{variant}_h{h}x{hs}", {
                "num_layers": L, "num_kv_heads": h, "head_size": hs, "dtype": "bf16",
                "tensor_parallel_size": tp, "pipeline_parallel_size": pp, "block_size": 16,
                "max_model_len": rng.choice([32768, 131072, 8192]),
                "available_memory_bytes": avail,
            })
    # custom partitions
    for L, part in ((80, "30,30,20"), (80, "40,20,20"), (61, "1,60"), (32, "20,4,4,4"),
                    (62, "10,20,20,12"), (48, "12,12,12,12")):
        pp = len(part.split(","))
        avail = [jitter(rng, rng.uniform(10, 30) * GiB) for _ in range(pp)]
        C.add("pp", f"L{L}_partition_{part.replace(',', '-')}", {
            "num_layers": L, "num_kv_heads": 8, "head_size": 128, "dtype": "bf16",
            "pipeline_parallel_size": pp, "pp_layer_partition": part, "block_size": 16,
            "max_model_len": 65536, "available_memory_bytes": avail,
        })
    # per-worker memory lists (tp*pp entries, PP-major)
    for L, pp, tp in ((80, 2, 2), (61, 2, 4), (62, 4, 2), (43, 3, 2)):
        avail = [jitter(rng, rng.uniform(15, 40) * GiB) for _ in range(pp * tp)]
        C.add("pp", f"L{L}_pp{pp}_tp{tp}_per_worker", {
            "num_layers": L, "num_kv_heads": 8 // tp, "head_size": 128, "dtype": "bf16",
            "tensor_parallel_size": tp, "pipeline_parallel_size": pp, "block_size": 16,
            "max_model_len": 131072, "available_memory_bytes": avail,
        })
    # a stage that holds no layers at all
    C.add("pp", "L32_partition_16-16-0_empty_last_stage", {
        "num_layers": 32, "num_kv_heads": 8, "head_size": 128, "dtype": "bf16",
        "pipeline_parallel_size": 3, "pp_layer_partition": "16,16,0", "block_size": 16,
        "max_model_len": 32768, "available_memory_bytes": [10 * GiB + 1, 12 * GiB + 3, 1 * GiB],
    })
    # PP on other layer kinds
    gl = _mamba_layer(gdn_shapes(2), ["bfloat16", "bfloat16"], "GDN_ATTN")
    C.add("pp", "qwen3next_pp2_tp2", {
        "num_layers": 48, "layer_pattern": [gl, gl, gl, "full"], "num_kv_heads": 1,
        "head_size": 256, "dtype": "bf16", "tensor_parallel_size": 2, "max_model_len": 262144,
        "available_memory_bytes": [20 * GiB + 5, 17 * GiB + 3],
    })
    C.add("pp", "qwen3next_pp3_tp2_pc0", {
        "num_layers": 48, "layer_pattern": [gl, gl, gl, "full"], "num_kv_heads": 1,
        "head_size": 256, "dtype": "bf16", "tensor_parallel_size": 2, "max_model_len": 262144,
        "enable_prefix_caching": False, "pipeline_parallel_size": 3,
        "available_memory_bytes": 15 * GiB + 5,
    })
    C.add("pp", "deepseek_v3_mla_pp2_tp8", {
        "num_layers": 61, "default_kind": "mla", "dtype": "bf16", "block_size": 64,
        "tensor_parallel_size": 8, "max_model_len": 163840,
        "available_memory_bytes": [20 * GiB + 3, 26 * GiB + 11],
    })
    C.add("pp", "gptoss120b_pp2", {
        "num_layers": 36, "layer_pattern": ["sliding:128", "full"], "num_kv_heads": 8,
        "head_size": 64, "dtype": "bf16", "block_size": 16, "max_model_len": 131072,
        "available_memory_bytes": [30 * GiB + 1, 25 * GiB + 2],
    })
    C.add("pp", "gptoss120b_pp4_mnbt2048", {
        "num_layers": 36, "layer_pattern": ["sliding:128", "full"], "num_kv_heads": 8,
        "head_size": 64, "dtype": "bf16", "block_size": 16, "max_model_len": 131072,
        "max_num_batched_tokens": 2048, "pipeline_parallel_size": 4,
        "available_memory_bytes": 20 * GiB + 17,
    })
    C.add("pp", "gemma3_27b_pp3", {
        "num_layers": 62, "layer_pattern": ["sliding:1024"] * 5 + ["full"], "num_kv_heads": 16,
        "head_size": 128, "dtype": "bf16", "block_size": 16, "max_model_len": 131072,
        "available_memory_bytes": [12 * GiB, 14 * GiB + 5, 9 * GiB + 7],
    })
    C.add("pp", "llama70b_pp2_too_long", {
        "num_layers": 80, "num_kv_heads": 8, "head_size": 128, "dtype": "bf16",
        "block_size": 16, "max_model_len": 1048576,
        "available_memory_bytes": [40 * GiB, 30 * GiB + 1],
    })
    C.add("pp", "llama70b_pp4_autofit", {
        "num_layers": 80, "num_kv_heads": 8, "head_size": 128, "dtype": "bf16",
        "block_size": 16, "max_model_len": -1, "max_position_embeddings": 1048576,
        "available_memory_bytes": [9 * GiB + 1, 7 * GiB + 9, 8 * GiB + 3, 10 * GiB],
    })
    C.add("pp", "llama70b_pp2_override", {
        "num_layers": 80, "num_kv_heads": 8, "head_size": 128, "dtype": "bf16",
        "block_size": 16, "max_model_len": 8192, "num_gpu_blocks_override": 3000,
        "available_memory_bytes": [20 * GiB, 10 * GiB],
    })


def cat_capacity(C, rng):
    # "To serve at least one request ..." with an estimate > 0
    for i in range(22):
        kind = rng.choice(["dense", "dense", "dense", "mla", "swa", "gemma3"])
        mml = rng.choice([131072, 1048576, 262144, 100000, 32768, 8191])
        if kind == "dense":
            L, h, hs, dt, bs = rng.choice(DENSE_LAYERS), rng.choice(HEADS), rng.choice(HEAD_SIZES), \
                rng.choice(DTYPES), rng.choice(BLOCKS)
            need = dense_need(L, h, hs, dt, mml, bs)
            inp = {"num_layers": L, "num_kv_heads": h, "head_size": hs, "dtype": dt,
                   "block_size": bs}
        elif kind == "mla":
            L, bs = 61, rng.choice([16, 64, None])
            need = L * 576 * 2 * mml
            inp = {"num_layers": L, "default_kind": "mla", "dtype": "bf16", "block_size": bs}
        elif kind == "swa":
            L = 36
            need = 18 * 8 * 128 * 2 * mml
            inp = {"num_layers": L, "layer_pattern": ["sliding:128", "full"], "num_kv_heads": 8,
                   "head_size": 64, "dtype": "bf16", "block_size": 16}
        else:
            L = 62
            need = 11 * 16 * 256 * 2 * mml
            inp = {"num_layers": L, "layer_pattern": ["sliding:1024"] * 5 + ["full"],
                   "num_kv_heads": 16, "head_size": 128, "dtype": "bf16", "block_size": 16}
        inp["max_model_len"] = mml
        inp["available_memory_bytes"] = jitter(rng, need * rng.uniform(0.02, 0.97))
        C.add("capacity_error", f"{kind}{i:02d}_len{mml}", inp)
    # Estimate = 0: bytes_per_block < available < 2*bytes_per_block (message omits the estimate)
    for L, h, hs, bs in ((32, 8, 128, 16), (80, 1, 128, 16), (61, 1, 576, 64)):
        bpb = L * h * 2 * hs * 2 * bs
        if hs == 576:
            bpb = L * 576 * 2 * bs
            base = {"num_layers": L, "default_kind": "mla", "dtype": "bf16", "block_size": bs}
        else:
            base = {"num_layers": L, "num_kv_heads": h, "head_size": hs, "dtype": "bf16",
                    "block_size": bs}
        for frac in (1.0 + 1e-9, 1.5, 1.999):
            inp = dict(base, max_model_len=4096, available_memory_bytes=int(bpb * frac) + 1)
            C.add("capacity_error_est0", f"L{L}_bs{bs}_avail{frac:.3f}bpb", inp)
    # SWA: one block per group is not enough -> estimate 0
    C.add("capacity_error_est0", "gptoss_avail_1.5bpb", {
        "num_layers": 36, "layer_pattern": ["sliding:128", "full"], "num_kv_heads": 8,
        "head_size": 64, "dtype": "bf16", "block_size": 16, "max_model_len": 131072,
        "available_memory_bytes": 18 * 16 * 8 * 64 * 4 * 3 // 2,
    })
    # "No available memory for the cache blocks"
    bpb = 32 * 8 * 128 * 4 * 16
    for label, av in (("zero", 0), ("negative", -1 * GiB), ("exactly_one_block", bpb),
                      ("one_block_minus_1", bpb - 1), ("one_byte", 1)):
        C.add("no_memory", label, {
            "num_layers": 32, "num_kv_heads": 8, "head_size": 128, "dtype": "bf16",
            "block_size": 16, "max_model_len": 8192, "available_memory_bytes": av,
        })
    C.add("no_memory", "pp2_second_stage_zero", {
        "num_layers": 32, "num_kv_heads": 8, "head_size": 128, "dtype": "bf16",
        "block_size": 16, "max_model_len": 8192, "available_memory_bytes": [10 * GiB, 0],
    })


def cat_autofit(C, rng):
    models = [
        ("llama8b", {"num_layers": 32, "num_kv_heads": 8, "head_size": 128, "dtype": "bf16"}),
        ("llama70b_tp4", {"num_layers": 80, "num_kv_heads": 2, "head_size": 128, "dtype": "bf16",
                          "tensor_parallel_size": 4}),
        ("dsv3_mla", {"num_layers": 61, "default_kind": "mla", "dtype": "bf16", "block_size": 64}),
        ("gptoss120b", {"num_layers": 36, "layer_pattern": ["sliding:128", "full"],
                        "num_kv_heads": 8, "head_size": 64, "dtype": "bf16"}),
        ("gemma3_12b", {"num_layers": 48, "layer_pattern": ["sliding:1024"] * 5 + ["full"],
                        "num_kv_heads": 8, "head_size": 256, "dtype": "bf16"}),
        ("qwen3next_tp4", {"num_layers": 48, "layer_pattern": [
            _mamba_layer(gdn_shapes(4), ["bfloat16", "bfloat16"], "GDN_ATTN")] * 3 + ["full"],
            "num_kv_heads": 1, "head_size": 256, "dtype": "bf16", "tensor_parallel_size": 4}),
    ]
    for k, (name, m) in enumerate(models):
        for mpe, avail_gib in ((131072, 80.0), (131072, 3.3), (1048576, 7.7), (32768, 0.9)):
            # vLLM logs the auto-fit result with info_once (de-duplicated per
            # process by message text), so every case gets its own GiB figure.
            avail_gib = round(avail_gib * (1 + 0.013 * k), 2)
            inp = dict(m, max_model_len=-1, max_position_embeddings=mpe,
                       available_memory_bytes=jitter(rng, avail_gib * GiB))
            C.add("autofit", f"{name}_mpe{mpe}_{avail_gib}gib", inp)
    # cannot fit a single token
    C.add("autofit", "llama8b_cannot_fit_one_token", {
        "num_layers": 32, "num_kv_heads": 8, "head_size": 128, "dtype": "bf16", "block_size": 16,
        "max_model_len": -1, "max_position_embeddings": 131072,
        "available_memory_bytes": 32 * 8 * 128 * 4 * 16 * 3 // 2,
    })
    C.add("autofit", "gptoss_cannot_fit_one_token", {
        "num_layers": 36, "layer_pattern": ["sliding:128", "full"], "num_kv_heads": 8,
        "head_size": 64, "dtype": "bf16", "block_size": 16, "max_model_len": -1,
        "max_position_embeddings": 131072,
        "available_memory_bytes": 18 * 16 * 8 * 64 * 4 + 1000,
    })


def cat_override(C, rng):
    for i, (L, h, hs, mml, ov) in enumerate((
        (32, 8, 128, 8192, 1000), (32, 8, 128, 8192, 100), (32, 8, 128, 131072, 8000),
        (80, 2, 128, 32768, 20000), (80, 2, 128, 32768, 2048), (28, 4, 128, 4096, 1),
    )):
        C.add("override", f"dense{i}_L{L}_len{mml}_override{ov}", {
            "num_layers": L, "num_kv_heads": h, "head_size": hs, "dtype": "bf16",
            "block_size": 16, "max_model_len": mml, "num_gpu_blocks_override": ov,
            "available_memory_bytes": jitter(rng, rng.uniform(5, 40) * GiB),
        })
    C.add("override", "gptoss120b_override_5000", {
        "num_layers": 36, "layer_pattern": ["sliding:128", "full"], "num_kv_heads": 8,
        "head_size": 64, "dtype": "bf16", "block_size": 16, "max_model_len": 131072,
        "num_gpu_blocks_override": 5000, "available_memory_bytes": 30 * GiB,
    })
    C.add("override", "dsv3_override_3000", {
        "num_layers": 61, "default_kind": "mla", "dtype": "bf16", "block_size": 64,
        "max_model_len": 163840, "num_gpu_blocks_override": 3000,
        "available_memory_bytes": 20 * GiB,
    })
    layer = _mamba_layer(gdn_shapes(2), ["bfloat16", "bfloat16"], "GDN_ATTN")
    C.add("override", "qwen3next_tp2_override_400", {
        "num_layers": 48, "layer_pattern": [layer, layer, layer, "full"], "num_kv_heads": 1,
        "head_size": 256, "dtype": "bf16", "tensor_parallel_size": 2, "max_model_len": 65536,
        "num_gpu_blocks_override": 400, "available_memory_bytes": 20 * GiB,
    })
    C.add("override", "override_with_autofit", {
        "num_layers": 32, "num_kv_heads": 8, "head_size": 128, "dtype": "bf16",
        "block_size": 16, "max_model_len": -1, "max_position_embeddings": 131072,
        "num_gpu_blocks_override": 2500, "available_memory_bytes": 40 * GiB,
    })


def cat_pp_indices(C, rng):
    for L, pp in ((80, 3), (61, 4), (61, 2), (30, 4), (62, 4), (31, 4), (43, 3), (126, 8),
                  (32, 1), (7, 8), (3, 4), (95, 6), (88, 5), (64, 16), (60, 7)):
        C.add("pp_indices_default", f"L{L}_pp{pp}", {"mode": "pp_indices", "num_layers": L,
                                                     "pp_size": pp})
    parts = (
        # valid
        (80, 3, "30,30,20"), (80, 3, "1,1,78"), (61, 2, "31,30"), (62, 4, "16,15,15,16"),
        (32, 4, "8,8,8,8"), (48, 3, "0,24,24"),
        # wrong sum
        (80, 3, "30,30,21"), (62, 4, "10,10,10,10"), (40, 2, "-5,45"),
        # wrong count
        (80, 3, "30,30"), (80, 3, "20,20,20,20"), (48, 2, "48"), (16, 4, "4,4,4,4,0"),
        # zero entries
        (61, 3, "61,0,0"), (32, 3, "16,16,0"), (30, 4, "10,10,10,0"), (80, 3, "40,40,0"),
        (24, 3, "0,0,24"),
    )
    for L, pp, part in parts:
        C.add("pp_indices_partition", f"L{L}_pp{pp}_part{part.replace(',', '_')}", {
            "mode": "pp_indices", "num_layers": L, "pp_size": pp, "partition": part})
    C.add("pp_indices_partition", "L80_pp3_list_partition_rank1", {
        "mode": "pp_indices", "num_layers": 80, "pp_size": 3, "pp_rank": 1,
        "partition": [30, 30, 20]})


def cat_draft(C, rng):
    """A target with a draft_model drafter: the draft's attention layers join the same pool with
    their own heads and head size, so pages differ and vLLM groups every layer in one
    UniformTypeKVCacheSpecs (or a hybrid split when the kinds differ). Last, so the earlier
    categories draw the same random numbers as before."""
    def layers(target, draft):
        out = []
        for n, kind, h, hs in (target, draft):
            out += [{"kind": kind, "num_kv_heads": h, "head_size": hs}] * n
        return out
    named = [
        # name, target (layers, kind, heads per rank, head), draft, dtype, tp, mml, avail
        ("llama70b_tp4_llama8b", (80, "full", 2, 128), (32, "full", 2, 128), "bf16", 131072, 40 * GiB),
        ("llama70b_tp4_llama1b", (80, "full", 2, 128), (16, "full", 2, 64), "bf16", 131072, 40 * GiB),
        ("llama70b_tp8_llama1b_fp8", (80, "full", 1, 128), (16, "full", 1, 64), "fp8", 131072, 50 * GiB),
        ("llama8b_llama1b", (32, "full", 8, 128), (16, "full", 8, 64), "bf16", 131072, 30 * GiB),
        ("qwen32b_tp2_qwen05b", (64, "full", 4, 128), (24, "full", 1, 64), "bf16", 40960, 25 * GiB),
        ("llama405b_tp8_llama8b", (126, "full", 1, 128), (32, "full", 1, 128), "bf16", 131072, 20 * GiB),
        ("llama70b_tp4_llama1b_tight", (80, "full", 2, 128), (16, "full", 2, 64), "bf16", 131072, 21 * GiB),
    ]
    for name, tgt, dft, dt, mml, av in named:
        for bs in (16, None):
            C.add("draft_model", f"{name}_bs{bs}", {
                "layers": layers(tgt, dft), "dtype": dt, "block_size": bs,
                "max_model_len": mml, "max_num_batched_tokens": 8192,
                "available_memory_bytes": av,
            })
    for i in range(12):
        tgt = (rng.choice(DENSE_LAYERS), "full", rng.choice([1, 2, 4, 8]), rng.choice([64, 128, 256]))
        dft = (rng.choice([12, 16, 22, 24, 28, 32]), "full", rng.choice([1, 2, 4, 8]), rng.choice([64, 128]))
        dt = rng.choice(["bf16", "bf16", "fp16", "fp8"])
        mml = rng.choice([4096, 8192, 32768, 131072])
        need = dense_need(tgt[0], tgt[2], tgt[3], dt, mml, 16) + dense_need(dft[0], dft[2], dft[3], dt, mml, 16)
        avail = jitter(rng, need * logu(rng, 0.8, 30))
        C.add("draft_model", f"rand{i:02d}_L{tgt[0]}h{tgt[2]}x{tgt[3]}_L{dft[0]}h{dft[2]}x{dft[3]}_{dt}_len{mml}", {
            "layers": layers(tgt, dft), "dtype": dt, "block_size": rng.choice([16, None]),
            "max_model_len": mml, "max_num_batched_tokens": 8192, "available_memory_bytes": avail,
        })
    # auto length with a draft of another page size
    C.add("draft_model", "llama70b_tp4_llama1b_auto", {
        "layers": layers((80, "full", 2, 128), (16, "full", 2, 64)), "dtype": "bf16",
        "block_size": 16, "max_model_len": -1, "max_position_embeddings": 131072,
        "max_num_batched_tokens": 8192, "available_memory_bytes": 3 * GiB,
    })


def generate():
    rng = random.Random(SEED)
    C = Cases()
    cat_dense(C, rng)
    cat_mla(C, rng)
    cat_swa(C, rng)
    cat_chunked(C, rng)
    cat_mamba(C, rng)
    cat_gdn(C, rng)
    cat_pp(C, rng)
    cat_capacity(C, rng)
    cat_autofit(C, rng)
    cat_override(C, rng)
    cat_pp_indices(C, rng)
    cat_draft(C, rng)
    return C.rows


# --------------------------------------------------------------------------
# trimming the oracle output
# --------------------------------------------------------------------------
LOG_KEEP = re.compile(r"Auto-fit|Overriding|Setting|Padding|padding layers")
SPEC_KEYS = ("type", "block_size", "page_size_bytes", "real_page_size_bytes",
             "max_memory_usage_bytes", "sliding_window", "attention_chunk_size",
             "page_size_padded", "num_kv_heads", "head_size", "head_size_v", "dtype")


def _layer_index(name):
    m = re.search(r"layers\.(\d+)\.", name)
    return int(m.group(1)) if m else name


def _expand_indices(v):
    if isinstance(v, list):
        return v
    v = str(v)
    m = re.fullmatch(r"(\d+)\.\.(\d+)(?: step (\d+))?", v)
    if m:
        a, b, s = int(m.group(1)), int(m.group(2)), int(m.group(3) or 1)
        return list(range(a, b + 1, s))
    return [int(v)]


def _spec(d):
    return {k: d[k] for k in SPEC_KEYS if k in d}


def _dedup(lines):
    """Drop repeats of a line (the oracle calls the grouping code once per public
    helper and once for the engine path, so "Add N padding layers" repeats)."""
    seen, out = set(), []
    for line in lines:
        if line not in seen:
            seen.add(line)
            out.append(line)
    return out


def trim_kv(out):
    if "input_error" in out:
        return {"input_error": out["input_error"]}
    r = out["resolved"]
    res = {k: r.get(k) for k in (
        "block_size", "mamba_block_size", "mamba_page_size_padded", "mamba_cache_mode",
        "max_concurrent_batches", "max_in_flight_tokens", "disable_hybrid_kv_cache_manager",
        "cache_dtype", "model_dtype", "backends", "enable_prefix_caching",
        "user_specified_block_size")}
    layers = []
    for row in out.get("layers", []):
        d = _spec(row)
        d["layer_indices"] = _expand_indices(row["layer_indices"])
        d["pp_rank"] = row.get("pp_rank")
        layers.append(d)
    e = out["engine"]
    eng = {}
    if "groups" in e:
        eng["groups"] = [{
            "num_layers": g["num_layers"],
            "layer_indices": [_layer_index(n) for n in g["layer_names"]],
            "spec": _spec(g["spec"]),
        } for g in e["groups"]]
    if "capacity_check_per_worker" in e:
        eng["capacity_check_per_worker"] = [
            {k: c.get(k) for k in ("pp_rank", "bytes_per_block", "needed_memory_bytes",
                                   "check_memory_bytes", "fits", "estimate_max_model_len",
                                   "estimate_max_model_len_uncapped", "note") if k in c}
            for c in e["capacity_check_per_worker"]]
    if "workers" in e:
        eng["workers"] = [{k: w[k] for k in ("pp_rank", "available_memory_bytes",
                                               "bytes_per_block", "num_blocks_own",
                                               "num_blocks")} for w in e["workers"]]
    for k in ("num_blocks", "blocks_per_request_per_group", "scheduler_block_size",
              "kv_cache_size_tokens", "max_concurrency", "log_line",
              "max_model_len_after_auto_fit", "auto_fit_changed_max_model_len", "error"):
        if k in e:
            eng[k] = e[k]
    pub = []
    for p in out.get("public_functions", []):
        d = {k: p.get(k) for k in ("pp_rank", "estimate_max_model_len",
                                   "estimate_max_model_len_uncapped",
                                   "estimate_max_model_len_memory_arg",
                                   "pool_bytes_per_block", "max_memory_usage_bytes")
             if k in p}
        ce = p.get("check_enough_kv_cache_memory")
        if ce is not None:
            d["check_raises"] = ce["raises"]
            if ce["raises"]:
                d["check_message"] = ce.get("message")
        if "note" in p:
            d["note"] = p["note"]
        pub.append(d)
    return {
        "resolved": res,
        "pp_stage_layer_ranges": out.get("pp_stage_layer_ranges"),
        "layers": layers,
        "engine": eng,
        "public_functions": pub,
        "vllm_log": _dedup([line for line in out.get("vllm_log", []) if LOG_KEEP.search(line)]),
    }


def trim_pp(out):
    if "input_error" in out:
        return {"input_error": out["input_error"]}
    return {k: out.get(k) for k in ("indices", "error", "VLLM_PP_LAYER_PARTITION")}


def merge(args):
    cases = [json.loads(line) for line in open(args.cases) if line.strip()]
    outs = [json.loads(line) for line in open(args.outputs) if line.strip()]
    if len(cases) != len(outs):
        sys.exit(f"{len(cases)} cases but {len(outs)} oracle outputs")
    kv, pp, fail = [], [], []
    for c, o in zip(cases, outs):
        is_pp = c["input"].get("mode") == "pp_indices"
        if "input_error" in o:
            fail.append({"name": c["name"], "category": c["category"], "input": c["input"],
                         "input_error": o["input_error"],
                         "traceback_tail": o.get("traceback", "").strip().splitlines()[-6:]})
            continue
        row = {"name": c["name"], "category": c["category"], "input": c["input"],
               "output": trim_pp(o) if is_pp else trim_kv(o)}
        (pp if is_pp else kv).append(row)
    # sanity: every successful auto-fit must have its (info_once) log line
    problems = []
    for row in kv:
        o = row["output"]
        if row["input"].get("max_model_len") == -1 and not o["engine"].get("error"):
            if not any("Auto-fit" in line for line in o["vllm_log"]):
                problems.append(f"{row['name']}: auto-fit log line missing (info_once dedup?)")
    for p in problems:
        print("WARNING", p)
    for path, rows in ((args.kv, kv), (args.pp, pp)):
        with open(path, "w") as f:
            for row in rows:
                f.write(json.dumps(row, sort_keys=True, separators=(",", ":")) + "\n")
    if args.failures:
        with open(args.failures, "w") as f:
            for row in fail:
                f.write(json.dumps(row, sort_keys=True) + "\n")
    cnt = Counter(r["category"] for r in kv + pp)
    print(f"kv cases: {len(kv)}, pp_indices cases: {len(pp)}, oracle failures: {len(fail)}")
    for k in sorted(cnt):
        print(f"  {k:28s} {cnt[k]}")
    for r in fail:
        print(f"  FAILED {r['name']}: {r['input_error']['type']}: {r['input_error']['message'][:200]}")


def gen(args):
    rows = generate()
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "cases.jsonl"), "w") as f:
        for r in rows:
            f.write(json.dumps(r, sort_keys=True) + "\n")
    with open(os.path.join(args.out, "oracle_in.jsonl"), "w") as f:
        for r in rows:
            f.write(json.dumps(r["input"], sort_keys=True) + "\n")
    cnt = Counter(r["category"] for r in rows)
    print(f"{len(rows)} cases")
    for k in sorted(cnt):
        print(f"  {k:28s} {cnt[k]}")


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("gen")
    g.add_argument("--out", required=True)
    m = sub.add_parser("merge")
    m.add_argument("--cases", required=True)
    m.add_argument("--outputs", required=True)
    m.add_argument("--kv", required=True)
    m.add_argument("--pp", required=True)
    m.add_argument("--failures")
    args = ap.parse_args()
    gen(args) if args.cmd == "gen" else merge(args)


if __name__ == "__main__":
    main()
