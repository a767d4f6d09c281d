//! Words a newcomer can follow: every term the page uses, in a sentence, each tied to the vLLM
//! function it comes from (0.33.0's source, as the accounting spec read it). The ledger's term
//! names link here.

use crate::calc::plan::Term;
use crate::ui::charts::xml_escape as esc;

/// (anchor key, term, what it is, where vLLM computes it).
pub const WORDS: [(&str, &str, &str, &str); 20] = [
    ("budget", "Budget", "ceil(total x gpu-memory-utilization): what the worker may use in all, checked once against the free memory before loading and, after profiling, what the KV pool is sized from. It does not cap loading.", "vllm/v1/worker/utils.py::request_memory; gpu_worker.py::determine_available_memory"),
    ("snapshot", "Init snapshot", "The free and used memory vLLM reads once, before anything loads: the CUDA context, NCCL and other processes are already in it.", "vllm/utils/mem_utils.py::MemorySnapshot (gpu_worker.py::init_device)"),
    ("outside-budget", "Outside the budget (the cushion)", "total - budget: memory vLLM never plans to use, a cushion for what its estimates miss.", "the complement of request_memory's figure"),
    ("weights", "Weights (Model loading took)", "The parameters a rank holds after loading, as vLLM's log line prints them; the fraction does not limit this phase, only the physical memory does.", "gpu_model_runner.py::load_model"),
    ("activation", "Activation peak", "The largest transient of the profile run, a batch of max-num-batched-tokens: gone after the run, but vLLM keeps its share out of the KV pool, and the warm-up brings it back.", "gpu_model_runner.py::profile_run; kernel_warmup.py"),
    ("other", "Other consumption (non-torch)", "Persistent memory outside PyTorch's allocator that grew during profiling: NCCL buffers, cuBLAS workspaces, the runner's own buffers.", "vllm/utils/mem_utils.py::memory_profiling (non_torch_increase)"),
    ("graphs", "CUDA graph pool", "Memory the captured CUDA graphs keep; from v0.20 vLLM estimates it and takes it out of the budget before sizing the pool. --enforce-eager captures none.", "gpu_model_runner.py::capture_model, profile_cudagraph_memory"),
    ("available-kv", "Available KV cache memory", "What the budget leaves for the KV cache once weights, other use, the activation peak and the graphs are taken out; or the pin, when --kv-cache-memory-bytes is given.", "gpu_worker.py::determine_available_memory"),
    ("kv-pin", "KV pin", "--kv-cache-memory-bytes: the pool in bytes, given; vLLM skips the sizing (not the profile run) and ignores the fraction for the pool.", "CacheConfig.kv_cache_memory_bytes; gpu_worker.py::determine_available_memory"),
    ("page", "Page", "One layer's memory for one block of tokens: KV heads x head size x 2 (K and V) x bytes per element x block size, or the spec's own size.", "vllm/v1/kv_cache_interface.py::KVCacheSpec.page_size_bytes"),
    ("block", "Block", "block-size tokens across every KV layer of a rank: the unit the pool is counted and handed out in; bytes per block is the sum of the rank's pages.", "vllm/v1/core/kv_cache_utils.py (get_kv_cache_config_from_groups)"),
    ("num-blocks", "num_blocks", "Available memory // bytes per block, then the minimum over the ranks of the engine: every rank allocates that many.", "kv_cache_utils.py::get_kv_cache_configs"),
    ("null-block", "Null block", "Block 0, which the block pool reserves and never hands to a request (from v0.29): a request can use num_blocks - 1.", "vllm/v1/core/block_pool.py::BlockPool"),
    ("limiting-rank", "Limiting rank", "The rank with the fewest blocks of its own: its count becomes every rank's, so it bounds the replica.", "kv_cache_utils.py::get_kv_cache_configs (the minimum)"),
    ("capacity", "Capacity check", "One request of max-model-len must fit in the pool after the null block; vLLM stops with 'To serve at least one request ...' otherwise, with the length that would fit.", "kv_cache_utils.py::_check_enough_kv_cache_memory"),
    ("concurrency", "Maximum concurrency", "GPU KV cache size in tokens / max-model-len: how many full-length requests the pool holds at once.", "kv_cache_utils.py::_report_kv_cache_config"),
    ("demand", "Demand (not a reservation)", "max-num-seqs x max-model-len: what the scheduler could ask for at most; the pool is allocated once at start, and requests beyond it wait or are preempted.", "vllm/v1/core/sched/scheduler.py"),
    ("mla", "MLA latent", "Multi-head latent attention (DeepSeek) caches one compressed vector per token per layer (kv_lora_rank + qk_rope_head_dim), the same on every TP rank: TP does not split it.", "kv_cache_interface.py::MLAAttentionSpec"),
    ("sliding-window", "Sliding window", "A layer that attends to the last W tokens keeps at most W - 1 tokens plus those in flight per request, whatever the context length.", "kv_cache_interface.py::SlidingWindowSpec.max_memory_usage_bytes"),
    ("preemption", "Preemption", "When running requests need more blocks than are free, the scheduler takes some back and recomputes them later: a pool too small for the load, not a start failure.", "scheduler.py::_preempt_request"),
];

/// The glossary entry a ledger term links to.
pub fn anchor_of(t: Term) -> Option<&'static str> {
    Some(match t {
        Term::Budget => "budget",
        Term::PreSnapshot | Term::FreeAtStart => "snapshot",
        Term::OutsideBudget => "outside-budget",
        Term::Weights
        | Term::WeightsEmbedding
        | Term::WeightsLayers
        | Term::WeightsHead
        | Term::WeightsVision => "weights",
        Term::Activation => "activation",
        Term::OtherConsumption => "other",
        Term::CudaGraphs => "graphs",
        Term::AvailableKv => "available-kv",
        Term::KvPool | Term::KvRoundingSlack => "num-blocks",
        _ => return None,
    })
}

/// The glossary panel's markup.
pub fn glossary_html() -> String {
    let mut h = String::from(
        r#"<section class="panel glossary" aria-labelledby="words-h" data-testid="glossary"><h2 id="words-h">Words</h2><dl>"#,
    );
    for (key, term, what, whence) in WORDS {
        h.push_str(&format!(
            r#"<dt id="term-{key}" data-testid="term-{key}">{}</dt><dd>{} <small>vLLM: <code>{}</code></small></dd>"#,
            esc(term),
            esc(what),
            esc(whence)
        ));
    }
    h.push_str("</dl></section>");
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every link from the ledger lands on an entry, and the words the page uses are there.
    #[test]
    fn every_link_has_its_entry() {
        let keys: Vec<&str> = WORDS.iter().map(|w| w.0).collect();
        for t in [
            Term::Budget,
            Term::FreeAtStart,
            Term::OutsideBudget,
            Term::Weights,
            Term::Activation,
            Term::OtherConsumption,
            Term::CudaGraphs,
            Term::AvailableKv,
            Term::KvPool,
        ] {
            let a = anchor_of(t).unwrap();
            assert!(keys.contains(&a), "{t:?} -> {a}");
        }
        let h = glossary_html();
        for word in [
            "Null block",
            "Limiting rank",
            "Page",
            "Block",
            "Budget",
            "cushion",
            "Activation peak",
            "CUDA graph pool",
            "MLA latent",
            "Sliding window",
        ] {
            assert!(h.contains(word), "{word}");
        }
        // Each entry names the vLLM code it comes from.
        assert_eq!(h.matches("vLLM: <code>").count(), WORDS.len());
        let mut sorted = keys.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), keys.len(), "anchors are unique");
    }
}
