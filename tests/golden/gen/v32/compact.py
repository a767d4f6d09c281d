import json, sys
W = sys.argv[1]  # the work directory run.sh made
d=json.load(open(f'{W}/golden_full.json'))
out=[]
for c in d["cases"]:
    ps=c["per_layer_specs"]; m=ps["sparse_mla"]; ix=ps["indexer_k_cache"]
    g=c["global_groups"][0]
    e={
     "gpu_sm": c["sm"], "kv_cache_dtype": c["kv_cache_dtype_input"],
     "kv_cache_dtype_effective": c["kv_cache_dtype_after_canonicalize"],
     "sparse_mla_backend": c["mla_backend"], "tp": c["tp"], "pp": c["pp"],
     "available_kv_memory_bytes_per_rank": c["available_memory_bytes"],
     "max_model_len": c["max_model_len"], "block_size_arg": c["block_size_input"],
     "block_size": c["block_size_after_update"],
     "main_mla_bytes_per_token": m["bytes_per_token"], "main_mla_page_bytes": m["page_size_bytes"],
     "main_mla_block_stride_alignment": m["block_stride_alignment"],
     "indexer_bytes_per_token": ix["bytes_per_token"], "indexer_page_bytes": ix["page_size_bytes"],
     "indexer_block_stride_alignment": ix["block_stride_alignment"],
     "kv_cache_layout": c["kv_cache_layout"],
     "groups": [f'{x["group_spec_class"]}({x["num_mla_layers"]} mla + {x["num_indexer_layers"]} indexer)' for x in c["global_groups"]],
     "blocks_per_request": g["blocks_per_request"],
     "per_stage": [{k: s[k] for k in ("pp_rank","layers_on_stage","bytes_per_block","num_blocks_own","needed_memory_bytes","check_memory_bytes(avail-bytes_per_block)","fits","estimate_max_model_len","estimate_max_model_len_uncapped")} for s in c["per_stage"]],
     "num_blocks": c.get("num_blocks"),
     "kv_cache_size_tokens": c.get("kv_cache_size_tokens"),
     "max_concurrency": c.get("max_concurrency"),
     "log_line": c.get("log_line"),
     "error": c["error"],
    }
    out.append(e)
json.dump({"vllm_version": d["vllm_version"], "cases": out}, open(f'{W}/golden_compact.json','w'), indent=1)
print(len(out))
