//! Golden vectors from vLLM 0.33.0's own KV planning code (`tests/golden/oracle_kv.jsonl`,
//! made by `tests/golden/gen/run.sh` with `../shared/oracle`): every case's page sizes, bytes
//! per block, `num_blocks` per worker and the minimum, the token figure, the printed
//! concurrency, the capacity-check numbers and the exact error messages must match
//! `calc::kv::plan_kv` to the byte. CI reads only the committed files.

use headroom::calc::kv::{plan_kv, KvError, KvSettings, LayerKv, LayerSpec, MaxModelLen, WorkerKv};
use headroom::calc::pp_partition;
use headroom::calc::units::py_fixed;
use headroom::calc::version::VllmVersion;
use serde_json::Value;

const KV: &str = include_str!("golden/oracle_kv.jsonl");
const PP: &str = include_str!("golden/oracle_pp.jsonl");

fn u(v: &Value, k: &str) -> Option<u64> {
    v.get(k).and_then(Value::as_u64)
}

fn dtype_bytes(s: &str) -> u64 {
    match s {
        "fp32" | "float32" | "float" => 4,
        "bf16" | "bfloat16" | "fp16" | "float16" | "half" | "auto" => 2,
        // fp8 variants, int8, uint8: one byte.
        _ => 1,
    }
}

/// One layer of the oracle's input, as (kind, per-head-token bytes, heads).
fn layer_of(
    case: &Value,
    spec: &Value,
    index: u32,
    cache_bytes: u64,
    cache_dtype: &str,
) -> Option<LayerSpec> {
    let (kind_str, obj) = match spec {
        Value::String(s) => (s.clone(), None),
        Value::Object(o) => (
            o.get("kind")
                .and_then(Value::as_str)
                .unwrap_or("full")
                .to_string(),
            Some(spec),
        ),
        _ => ("full".into(), None),
    };
    let get = |k: &str| obj.and_then(|o| u(o, k)).or_else(|| u(case, k));
    let (name, arg) = match kind_str.split_once(':') {
        Some((n, a)) => (n.to_string(), a.parse::<u64>().ok()),
        None => (kind_str.clone(), None),
    };
    let heads = get("num_kv_heads").unwrap_or(1);
    let head = get("head_size").unwrap_or(128);
    let head_v = get("head_size_v").unwrap_or(head);
    let layer_cache = obj
        .and_then(|o| o.get("cache_dtype"))
        .and_then(Value::as_str)
        .map(dtype_bytes)
        .unwrap_or(cache_bytes);
    let attn = |kind| LayerSpec {
        index,
        kind,
        num_kv_heads: heads,
        per_head_token_bytes: (head + head_v) * layer_cache,
        fixed: None,
    };
    Some(match name.as_str() {
        "full" => attn(LayerKv::Full),
        "sliding" => attn(LayerKv::Sliding {
            window: arg.or_else(|| get("window"))?,
        }),
        "chunked" => attn(LayerKv::Chunked {
            chunk: arg.or_else(|| get("chunk"))?,
        }),
        "mla" => {
            let latent = get("kv_lora_rank").unwrap_or(512) + get("qk_rope_head_dim").unwrap_or(64);
            let per = if cache_dtype == "fp8_ds_mla" {
                656
            } else {
                latent * layer_cache
            };
            LayerSpec {
                index,
                kind: match arg.or_else(|| get("window")) {
                    Some(w) => LayerKv::MlaSliding { window: w },
                    None => LayerKv::Mla,
                },
                num_kv_heads: 1,
                per_head_token_bytes: per,
                fixed: None,
            }
        }
        "mamba" => {
            let o = obj?;
            let shapes: Vec<Vec<u64>> = o
                .get("shapes")?
                .as_array()?
                .iter()
                .map(|s| {
                    s.as_array()
                        .map(|a| a.iter().filter_map(Value::as_u64).collect())
                        .unwrap_or_default()
                })
                .collect();
            let dtypes: Vec<u64> = match o.get("dtypes") {
                Some(Value::Array(a)) => a
                    .iter()
                    .map(|d| dtype_bytes(d.as_str().unwrap_or("bf16")))
                    .collect(),
                Some(Value::String(d)) => vec![dtype_bytes(d); shapes.len()],
                _ => vec![2; shapes.len()],
            };
            LayerSpec {
                index,
                kind: LayerKv::Mamba {
                    states: shapes.into_iter().zip(dtypes).collect(),
                    // Filled from the oracle's resolved mamba mode below.
                    blocks_per_request: 0,
                },
                num_kv_heads: 0,
                per_head_token_bytes: 0,
                fixed: None,
            }
        }
        _ => return None,
    })
}

struct Case {
    name: String,
    workers: Vec<WorkerKv>,
    settings: KvSettings,
}

fn build(line: &Value) -> Case {
    let input = &line["input"];
    let out = &line["output"];
    let resolved = &out["resolved"];
    let name = line["name"].as_str().unwrap_or("?").to_string();
    let dtype = input.get("dtype").and_then(Value::as_str).unwrap_or("bf16");
    let cache_dtype = input
        .get("cache_dtype")
        .and_then(Value::as_str)
        .unwrap_or(dtype);
    let cache_bytes = if ["bf16", "fp16", "fp32", "auto"].contains(&cache_dtype) {
        dtype_bytes(input.get("model_dtype").and_then(Value::as_str).unwrap_or(
            if cache_dtype == "auto" {
                dtype
            } else {
                cache_dtype
            },
        ))
    } else {
        dtype_bytes(cache_dtype)
    };
    // Layers: an explicit list, or a cyclic pattern over num_layers.
    let specs: Vec<Value> = if let Some(l) = input.get("layers").and_then(Value::as_array) {
        l.clone()
    } else {
        let n = u(input, "num_layers").unwrap_or(1) as usize;
        let pattern = input
            .get("layer_pattern")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_else(|| {
                vec![Value::String(
                    input
                        .get("default_kind")
                        .and_then(Value::as_str)
                        .unwrap_or("full")
                        .into(),
                )]
            });
        (0..n).map(|i| pattern[i % pattern.len()].clone()).collect()
    };
    let mamba_align = resolved.get("mamba_cache_mode").and_then(Value::as_str) == Some("align");
    let mamba_blocks = if mamba_align { 2 } else { 1 };
    let mut layers: Vec<Option<LayerSpec>> = specs
        .iter()
        .enumerate()
        .map(|(i, s)| layer_of(input, s, i as u32, cache_bytes, cache_dtype))
        .collect();
    for l in layers.iter_mut().flatten() {
        if let LayerKv::Mamba {
            blocks_per_request, ..
        } = &mut l.kind
        {
            *blocks_per_request = mamba_blocks;
        }
    }
    let tp = u(input, "tensor_parallel_size").unwrap_or(1) as usize;
    let mem = input
        .get("available_memory_bytes")
        .cloned()
        .unwrap_or(Value::Null);
    let mem_list: Vec<i128> = match &mem {
        Value::Array(a) => a.iter().map(|v| v.as_i64().unwrap_or(0) as i128).collect(),
        v => vec![v.as_i64().unwrap_or(0) as i128],
    };
    // PP defaults to the length of the memory list (the oracle's rule).
    let pp = u(input, "pipeline_parallel_size")
        .map(|p| p as usize)
        .unwrap_or(if mem.is_array() {
            mem_list.len().max(1)
        } else {
            1
        });
    let explicit: Option<Vec<u32>> = input
        .get("pp_layer_partition")
        .and_then(Value::as_str)
        .map(|s| s.split(',').filter_map(|x| x.trim().parse().ok()).collect());
    let parts = pp_partition(specs.len() as u32, pp as u32, explicit.as_deref())
        .expect("valid partition in a KV case");
    // The oracle runs one worker per PP stage (TP ranks of a stage are identical), or one per
    // rank when the memory list names every rank (PP-major).
    let per_rank = mem_list.len() == pp * tp && tp > 1;
    let ranks_per_stage = if per_rank { tp } else { 1 };
    let mut workers = Vec::new();
    let mut start = 0usize;
    for (stage, n) in parts.iter().enumerate() {
        let stage_layers: Vec<LayerSpec> = layers[start..start + *n as usize]
            .iter()
            .flatten()
            .cloned()
            .collect();
        start += *n as usize;
        for t in 0..ranks_per_stage {
            let available = if per_rank {
                mem_list[stage * tp + t]
            } else if mem_list.len() == pp && pp > 1 {
                mem_list[stage]
            } else {
                mem_list[0]
            };
            workers.push(WorkerKv {
                layers: stage_layers.clone(),
                available,
            });
        }
    }
    let max_len = input
        .get("max_model_len")
        .and_then(Value::as_i64)
        .unwrap_or(4096);
    let max_model_len = if max_len < 0 {
        MaxModelLen::Auto {
            upper: u(input, "max_position_embeddings").unwrap_or(4096),
        }
    } else {
        MaxModelLen::Value(max_len as u64)
    };
    let block_size = u(resolved, "block_size").expect("resolved block size");
    // Hybrid models: our block-size alignment must land where vLLM's did.
    let mamba_page = layers
        .iter()
        .flatten()
        .filter_map(|l| match &l.kind {
            LayerKv::Mamba { states, .. } => Some(
                states
                    .iter()
                    .map(|(s, e)| s.iter().product::<u64>() * e)
                    .sum::<u64>(),
            ),
            _ => None,
        })
        .max();
    if let Some(mp) = mamba_page {
        let attn = layers
            .iter()
            .flatten()
            .find(|l| !matches!(l.kind, LayerKv::Mamba { .. }));
        if let Some(a) = attn {
            let requested = u(input, "block_size").unwrap_or(16);
            let mla = matches!(a.kind, LayerKv::Mla | LayerKv::MlaSliding { .. });
            let ours = headroom::calc::kv::align_hybrid_block_size(
                requested,
                a.bytes_per_token(),
                mp,
                mla,
                // The oracle's stub layers declare no prefill checkpoints.
                1,
            );
            assert_eq!(ours, block_size, "{name}: hybrid block size");
        }
    }
    let settings = KvSettings {
        block_size,
        max_model_len,
        max_in_flight_tokens: u(resolved, "max_in_flight_tokens").expect("in-flight tokens"),
        extra_retained_tokens: 0,
        num_gpu_blocks_override: u(input, "num_gpu_blocks_override"),
        disable_hybrid: resolved
            .get("disable_hybrid_kv_cache_manager")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        version: VllmVersion::CURRENT,
        packed: false,
    };
    Case {
        name,
        workers,
        settings,
    }
}

#[test]
fn kv_cases_match_vllm() {
    let mut checked = 0;
    let mut failures = Vec::new();
    for (i, text) in KV.lines().enumerate() {
        if text.trim().is_empty() {
            continue;
        }
        let line: Value = serde_json::from_str(text).unwrap_or_else(|e| panic!("line {i}: {e}"));
        let case = build(&line);
        let eng = &line["output"]["engine"];
        let result = plan_kv(&case.workers, &case.settings);
        let err = eng.get("error").filter(|e| !e.is_null());
        let mut fail = |what: String| failures.push(format!("{} ({}): {what}", case.name, i + 1));
        match (&result, err) {
            (Err(e), Some(expected)) => {
                let msg = e.vllm_message(VllmVersion::CURRENT);
                let want = expected["message"].as_str().unwrap_or("");
                if msg != want {
                    fail(format!("error message\n  ours: {msg}\n  vllm: {want}"));
                }
            }
            (Err(e), None) => fail(format!("we raise {e:?}, vLLM does not")),
            (Ok(_), Some(expected)) => fail(format!("vLLM raises {expected}, we do not")),
            (Ok(p), None) => {
                let want_blocks = u(eng, "num_blocks");
                if Some(p.num_blocks) != want_blocks {
                    fail(format!("num_blocks {} vs {:?}", p.num_blocks, want_blocks));
                }
                if Some(p.kv_cache_tokens) != u(eng, "kv_cache_size_tokens") {
                    fail(format!(
                        "tokens {} vs {:?}",
                        p.kv_cache_tokens,
                        u(eng, "kv_cache_size_tokens")
                    ));
                }
                let conc = eng["max_concurrency"].as_f64().unwrap_or(-1.0);
                if p.max_concurrency != conc {
                    fail(format!("concurrency {} vs {conc}", p.max_concurrency));
                }
                if let Some(log) = eng["log_line"].as_str() {
                    let ours = format!(
                        "GPU KV cache size: {} tokens, Maximum concurrency for {} tokens per request: {}x",
                        headroom::calc::units::thousands(u128::from(p.kv_cache_tokens)),
                        headroom::calc::units::thousands(u128::from(p.max_model_len)),
                        py_fixed(p.max_concurrency, 2)
                    );
                    if ours != log {
                        fail(format!("log line\n  ours: {ours}\n  vllm: {log}"));
                    }
                }
                if let Some(ws) = eng["workers"].as_array() {
                    for (w, exp) in ws.iter().enumerate() {
                        let Some(ours) = p.workers.get(w) else {
                            fail(format!("worker {w} missing"));
                            continue;
                        };
                        if Some(ours.bytes_per_block) != u(exp, "bytes_per_block") {
                            fail(format!(
                                "worker {w} bytes_per_block {} vs {:?}",
                                ours.bytes_per_block,
                                u(exp, "bytes_per_block")
                            ));
                        }
                        if Some(ours.num_blocks_own) != u(exp, "num_blocks_own") {
                            fail(format!(
                                "worker {w} num_blocks_own {} vs {:?}",
                                ours.num_blocks_own,
                                u(exp, "num_blocks_own")
                            ));
                        }
                    }
                }
                if let Some(cc) = eng["capacity_check_per_worker"].as_array() {
                    for (w, exp) in cc.iter().enumerate() {
                        let ours = &p.workers[w];
                        // The oracle reports the need at the original length; auto-fit changes it.
                        let auto = matches!(case.settings.max_model_len, MaxModelLen::Auto { .. });
                        if !auto && Some(ours.needed) != u(exp, "needed_memory_bytes") {
                            fail(format!(
                                "worker {w} needed {} vs {:?}",
                                ours.needed,
                                u(exp, "needed_memory_bytes")
                            ));
                        }
                        if exp
                            .get("check_memory_bytes")
                            .and_then(Value::as_i64)
                            .map(i128::from)
                            != Some(ours.check_memory)
                        {
                            fail(format!(
                                "worker {w} check {} vs {:?}",
                                ours.check_memory,
                                exp.get("check_memory_bytes")
                            ));
                        }
                        if let Some(e) = u(exp, "estimate_max_model_len") {
                            if ours.max_len_estimate != e {
                                fail(format!(
                                    "worker {w} estimate {} vs {e}",
                                    ours.max_len_estimate
                                ));
                            }
                        }
                    }
                }
                if let Some(groups) = eng["groups"].as_array() {
                    if groups.len() != p.groups.len() {
                        fail(format!("{} groups vs {}", p.groups.len(), groups.len()));
                    }
                }
                if let Some(after) = u(eng, "max_model_len_after_auto_fit") {
                    if after != p.max_model_len {
                        fail(format!(
                            "max_model_len after auto-fit {} vs {after}",
                            p.max_model_len
                        ));
                    }
                }
            }
        }
        // Group pages after vLLM's page unification (a sliding layer may pick a smaller kernel
        // block and then be scaled up to the common page).
        if let (Some(groups), Ok(p)) = (line["output"]["engine"]["groups"].as_array(), &result) {
            let mut want: Vec<u64> = groups
                .iter()
                .filter_map(|g| u(&g["spec"], "page_size_bytes"))
                .collect();
            let mut ours: Vec<u64> = p.groups.iter().map(|g| g.page_size).collect();
            want.sort_unstable();
            ours.sort_unstable();
            if want != ours {
                failures.push(format!("{}: group pages {ours:?} vs {want:?}", case.name));
            }
        }
        checked += 1;
    }
    assert!(checked >= 300, "only {checked} golden KV cases");
    assert!(
        failures.is_empty(),
        "{} of {checked} cases differ from vLLM:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn pp_cases_match_vllm() {
    let mut checked = 0;
    for text in PP.lines().filter(|l| !l.trim().is_empty()) {
        let line: Value = serde_json::from_str(text).unwrap();
        let input = &line["input"];
        let out = &line["output"];
        let layers = u(input, "num_layers").unwrap() as u32;
        let pp = u(input, "pp_size").unwrap() as u32;
        let explicit: Option<Result<Vec<u32>, String>> = match input.get("partition") {
            Some(Value::String(s)) => Some(
                s.split(',')
                    .map(|x| {
                        x.trim()
                            .parse::<u32>()
                            .map_err(|_| format!("Invalid partition string: {s}"))
                    })
                    .collect(),
            ),
            Some(Value::Array(a)) => Some(
                a.iter()
                    .map(|x| {
                        x.as_u64()
                            .map(|v| v as u32)
                            .ok_or_else(|| format!("Invalid partition: {x}"))
                    })
                    .collect(),
            ),
            _ => None,
        };
        let ours = match explicit {
            Some(Err(e)) => Err(e),
            Some(Ok(parts)) => pp_partition(layers, pp, Some(&parts)),
            None => pp_partition(layers, pp, None),
        };
        let name = line["name"].as_str().unwrap_or("?");
        match out.get("error").filter(|e| !e.is_null()) {
            Some(e) => {
                let want = e
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or_else(|| e.as_str().unwrap_or(""));
                assert_eq!(
                    ours.as_ref().err().map(String::as_str),
                    Some(want),
                    "{name}"
                );
            }
            None => {
                // vLLM accepts a negative stage size and returns nonsense ranges; Headroom
                // refuses it with a message instead of planning on it.
                if input["partition"].as_str().is_some_and(|p| p.contains('-')) {
                    assert!(
                        ours.is_err(),
                        "{name}: a negative partition must be refused"
                    );
                    checked += 1;
                    continue;
                }
                // `indices` maps each stage ("0", "1", ...) to its [start, end); a case with
                // `pp_rank` lists only that stage.
                let idx = out["indices"].as_object().expect("indices");
                let ranges: Vec<(usize, u64, u64)> = idx
                    .iter()
                    .map(|(k, v)| {
                        let a = v.as_array().expect("range");
                        (
                            k.parse().unwrap(),
                            a[0].as_u64().unwrap(),
                            a[1].as_u64().unwrap(),
                        )
                    })
                    .collect();
                let parts = ours.unwrap_or_else(|e| panic!("{name}: {e}"));
                let mut start = 0u64;
                let mine: Vec<(u64, u64)> = parts
                    .iter()
                    .map(|p| {
                        let r = (start, start + u64::from(*p));
                        start += u64::from(*p);
                        r
                    })
                    .collect();
                for (stage, a, b) in ranges {
                    assert_eq!(mine[stage], (a, b), "{name}: stage {stage}");
                }
            }
        }
        checked += 1;
    }
    assert!(checked >= 30, "only {checked} pp cases");
}

#[test]
fn errors_are_typed() {
    // A sanity check on the harness itself: a case with no memory must raise NoMemory.
    let w = vec![WorkerKv {
        layers: vec![LayerSpec {
            index: 0,
            kind: LayerKv::Full,
            num_kv_heads: 1,
            per_head_token_bytes: 256,
            fixed: None,
        }],
        available: 0,
    }];
    let s = KvSettings {
        block_size: 16,
        max_model_len: MaxModelLen::Value(4096),
        max_in_flight_tokens: 16384,
        extra_retained_tokens: 0,
        num_gpu_blocks_override: None,
        disable_hybrid: false,
        version: VllmVersion::CURRENT,
        packed: false,
    };
    assert!(matches!(plan_kv(&w, &s), Err(KvError::NoMemory { .. })));
}
