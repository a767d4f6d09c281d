//! DeepSeek-V3.2 golden vectors from vLLM 0.33.0's own code (`tests/golden/oracle_v32.json`,
//! made by `tests/golden/gen/v32/run.sh`): the sparse MLA latent plus the lightning indexer's
//! K cache in every layer, one `UniformTypeKVCacheSpecs` group, 64-token blocks, on Hopper
//! (SM 9.0) and Blackwell (SM 10.0), at TP 8 and PP 1 or 2. Each case is planned the way the
//! page plans a link, with vLLM's "Available KV cache memory" given as a measurement, and must
//! match vLLM's block size, bytes per block on every stage, `num_blocks`, token figure and
//! concurrency, or fail the capacity check with vLLM's estimate. CI reads only the committed file.

use headroom::calc::{plan, Phase};
use headroom::io::url;
use serde_json::Value;

const V32: &str = include_str!("golden/oracle_v32.json");

fn list(v: &Value) -> Vec<u64> {
    match v {
        Value::Array(a) => a.iter().map(|x| x.as_u64().unwrap()).collect(),
        other => vec![other.as_u64().unwrap()],
    }
}

#[test]
fn deepseek_v32_kv_layout_matches_vllm() {
    let doc: Value = serde_json::from_str(V32).unwrap();
    let cases = doc["cases"].as_array().unwrap();
    let mut checked = 0;
    for c in cases {
        let kv = c["kv_dtype"].as_str().unwrap();
        let sm = c["sm"].as_u64().unwrap();
        // Headroom has no nvfp4_ds_mla.
        if kv == "nvfp4_ds_mla" {
            continue;
        }
        let gpu = if sm == 90 { "h200-141gb" } else { "b200-192gb" };
        let avail: Vec<String> = list(&c["avail"]).iter().map(u64::to_string).collect();
        let mut q = format!(
            "model=deepseek-v3.2&gpu={gpu}&tp={}&pp={}&available-kv={}&max-model-len={}&kv-dtype={kv}",
            c["tp"],
            c["pp"],
            avail.join(","),
            c["L"]
        );
        if let Some(b) = c["block_size_arg"].as_u64() {
            q.push_str(&format!("&block-size={b}"));
        }
        let d = url::decode(&q);
        assert!(d.ignored.is_empty(), "{q}: {:?}", d.ignored);
        let s = url::scenario(&d.state).unwrap_or_else(|e| panic!("{q}: {}", e.message));
        let p = plan(&s).unwrap_or_else(|e| panic!("{q}: {e}"));
        if c["raises"].as_bool().unwrap() {
            let f = p.first_failure().unwrap_or_else(|| panic!("{q}: starts"));
            assert_eq!(f.phase, Phase::Capacity, "{q}: {}", f.message);
            let est = list(&c["est_max_len"])[0];
            let err = f.vllm_error.as_deref().unwrap();
            assert!(
                err.contains(&format!("the estimated maximum model length is {est}.")),
                "{q}: {err}"
            );
        } else {
            assert!(
                p.starts(),
                "{q}: {:?}",
                p.first_failure().map(|f| &f.message)
            );
            let stages: Vec<u64> = p
                .ranks
                .iter()
                .filter(|r| r.tp_rank == 0)
                .map(|r| r.bytes_per_block)
                .collect();
            assert_eq!(
                stages,
                list(&c["bytes_per_block"]),
                "{q}: bytes per block per stage"
            );
            let r = p.replica.as_ref().unwrap();
            assert_eq!(r.block_size, c["B"].as_u64().unwrap(), "{q}: block size");
            assert_eq!(
                r.num_blocks,
                c["num_blocks"].as_u64().unwrap(),
                "{q}: num_blocks"
            );
            assert_eq!(
                r.kv_cache_tokens,
                c["kv_tokens"].as_u64().unwrap(),
                "{q}: tokens"
            );
            let conc = c["max_conc"].as_f64().unwrap();
            assert_eq!(r.max_concurrency, conc, "{q}: concurrency");
            assert_eq!(r.groups.len(), 1, "{q}");
            assert_eq!(r.groups[0].spec_name(), "UniformTypeKVCacheSpecs", "{q}");
            // Each layer once as its latent and once as its indexer cache.
            assert_eq!(r.groups[0].layer_indices.len(), 122, "{q}");
        }
        checked += 1;
    }
    assert_eq!(checked, 36, "cases checked");
}
