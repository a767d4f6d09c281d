//! DeepSeek-V4-Flash golden vectors from vLLM 0.33.0's own code (`tests/golden/oracle_v4.json`,
//! made by `tests/golden/gen/v4/run.sh`): the sliding-window, compressed, indexer and
//! compressor-state caches of every layer, packed into five groups, on the seeds' two systems
//! (S2: TP 2 on GB10 with a 10e9 B pin; S1: PP 3 at the article's splits). Each case is planned
//! the way the page plans a link, with the available KV memory given as a measurement, and must
//! match vLLM's groups, bytes per block on every rank, `num_blocks`, the fitted length, the token
//! figure and concurrency, or fail the capacity check with vLLM's message. CI reads only the
//! committed file.
//!
//! Every case is checked: the MTP and DSpark drafters (one and three draft layers with a
//! sliding-window cache each), runs without async scheduling (`no-async`) and FlashInfer's plain
//! bf16/fp8 rows on SM 10.x (`attention-backend=FLASHINFER_MLA_SPARSE_DSV4`).

use headroom::calc::{plan, Phase};
use headroom::io::url;
use serde_json::Value;

const V4: &str = include_str!("golden/oracle_v4.json");

fn list(v: &Value) -> Vec<u64> {
    match v {
        Value::Array(a) => a.iter().map(|x| x.as_u64().unwrap()).collect(),
        other => vec![other.as_u64().unwrap()],
    }
}

#[test]
fn deepseek_v4_kv_layout_matches_vllm() {
    let cases: Vec<Value> = serde_json::from_str(V4).unwrap();
    let mut checked = 0;
    for c in &cases {
        let i = &c["input"];
        let id = c["id"].as_str().unwrap();
        let spec = match &i["spec"] {
            Value::Null => None,
            s if s["method"] == "mtp" => Some("mtp"),
            s if s["method"] == "dspark" => {
                assert_eq!(s["layers"], 3, "{id}: DSpark's layer count");
                Some("dspark")
            }
            _ => continue,
        };
        let (gpu, backend) = match i["attn"].as_str().unwrap() {
            "flashmla" => ("h200-141gb", None),
            "flashinfer_sm120" => ("gb10-128gb", None),
            // --attention-backend FLASHINFER_MLA_SPARSE_DSV4 on SM 10.x: plain rows.
            "flashinfer_sm100" => ("b200-192gb", Some("FLASHINFER_MLA_SPARSE_DSV4")),
            other => panic!("{id}: attention {other}"),
        };
        let avail: Vec<String> = list(&i["available"]).iter().map(u64::to_string).collect();
        let len = match i["max_model_len"].as_i64().unwrap() {
            -1 => "auto".to_string(),
            n => n.to_string(),
        };
        let mut q = format!(
            "model=deepseek-v4-flash&gpu={gpu}&tp={}&pp={}&available-kv={}&max-model-len={len}&max-num-batched-tokens={}&kv-dtype={}",
            i["tp"],
            i["pp"],
            avail.join(","),
            i["max_num_batched_tokens"],
            i["kv_cache_dtype"].as_str().unwrap_or("auto")
        );
        if let Some(p) = i["partition"].as_str() {
            q.push_str(&format!("&pp-partition={p}"));
        }
        if let Some(m) = spec {
            q.push_str(&format!("&spec={m}"));
        }
        if let Some(b) = backend {
            q.push_str(&format!("&attention-backend={b}"));
        }
        // Ray's executor has no async scheduling: one batch in flight, not two.
        if i["async_scheduling"] == Value::Bool(false) {
            q.push_str("&no-async=true");
        }
        let d = url::decode(&q);
        assert!(d.ignored.is_empty(), "{id}: {:?}", d.ignored);
        let mut s = url::scenario(&d.state).unwrap_or_else(|e| panic!("{id}: {}", e.message));
        if spec == Some("dspark") {
            // The catalog's V4-Flash config declares no DSpark heads, which vLLM needs to build
            // the drafter; the KV layout does not read them (the generator built none either).
            let c = s.model.compressed.as_mut().unwrap();
            c.dspark_target_layers = Some(3);
            c.dspark_markov_rank = Some(256);
        }
        let p = plan(&s).unwrap_or_else(|e| panic!("{id}: {e}"));
        if let Some(err) = c["error"].as_str() {
            let f = p
                .first_failure()
                .unwrap_or_else(|| panic!("{id}: starts, vLLM raises {err}"));
            assert_eq!(f.phase, Phase::Capacity, "{id}: {}", f.message);
            let ours = f.vllm_error.as_deref().unwrap();
            assert!(ours.starts_with(err), "{id}:\n ours: {ours}\n vllm: {err}");
        } else {
            assert!(
                p.starts(),
                "{id}: {:?}",
                p.first_failure().map(|f| &f.message)
            );
            let ranks: Vec<u64> = p.ranks.iter().map(|r| r.bytes_per_block).collect();
            assert_eq!(
                ranks,
                list(&c["bytes_per_block_per_worker"]),
                "{id}: bytes per block"
            );
            let r = p.replica.as_ref().unwrap();
            assert_eq!(r.block_size, 256, "{id}");
            assert_eq!(
                r.max_model_len,
                c["max_model_len"].as_u64().unwrap(),
                "{id}"
            );
            assert_eq!(r.num_blocks, c["num_blocks"].as_u64().unwrap(), "{id}");
            assert_eq!(
                r.blocks_per_request,
                c["blocks_per_request"].as_u64().unwrap(),
                "{id}"
            );
            assert_eq!(
                r.kv_cache_tokens,
                c["kv_cache_size_tokens"].as_u64().unwrap(),
                "{id}"
            );
            assert_eq!(
                r.max_concurrency,
                c["max_concurrency"].as_f64().unwrap(),
                "{id}"
            );
            let log = c["log_line"].as_str().unwrap();
            assert!(
                p.log_lines.iter().any(|l| l.ends_with(log)),
                "{id}: {log}\n{:#?}",
                p.log_lines
            );
            // The five groups: their block sizes, layer counts and page sums.
            let groups = c["groups"].as_array().unwrap();
            assert_eq!(r.groups.len(), groups.len(), "{id}");
            for (g, want) in r.groups.iter().zip(groups) {
                let pages: u64 = want["pages"]
                    .as_object()
                    .unwrap()
                    .iter()
                    .map(|(page, n)| page.parse::<u64>().unwrap() * n.as_u64().unwrap())
                    .sum();
                assert_eq!(g.block_size, want["block_size"].as_u64().unwrap(), "{id}");
                assert_eq!(
                    g.layer_indices.len() as u64,
                    want["layers"].as_u64().unwrap(),
                    "{id}"
                );
                assert_eq!(g.page_size, pages, "{id}");
            }
        }
        checked += 1;
    }
    assert_eq!(checked, 70, "cases checked");
}
