//! A scenario as a ready `vllm serve` command: its environment (`CUDA_VISIBLE_DEVICES`,
//! `VLLM_PP_LAYER_PARTITION`), vLLM's flag names, and only the flags that differ from vLLM's
//! defaults for the release. What a command cannot say (the GPU, the release, measured terms)
//! is listed as left out, and named in the command's first line, a comment.
//!
//! [`super::command::import`] reads the command back into the same inputs (a property test in
//! `tests/command_round_trip.rs` plans both).

use crate::calc::scenario::{KvCacheDtype, MaxLen, Scenario};

/// The names a command gives its models: a Hugging Face repo (or a catalog id, or a path) for
/// the model, and the speculative config's `model` (`draft_model`'s drafter, an EAGLE head).
#[derive(Clone, Debug, Default)]
pub struct Names {
    pub model: String,
    pub spec_model: Option<String>,
}

/// A catalog id as `vllm serve` takes it: the row's Hugging Face repo, else the id itself.
pub fn repo_of(id: &str) -> String {
    crate::catalog::model(id)
        .filter(|r| !r.hf_repo.is_empty())
        .map_or_else(|| id.to_string(), |r| r.hf_repo.clone())
}

/// A scenario's model by its catalog row's repo, the row found by the model's name (an
/// example's model, a pasted config naming a catalog model), else by the name it is planned
/// under.
pub fn repo_of_named(s: &Scenario) -> String {
    crate::catalog::models()
        .iter()
        .find(|r| r.model.name == s.model.name && !r.hf_repo.is_empty())
        .map_or_else(|| s.model.name.clone(), |r| r.hf_repo.clone())
}

/// A command and what it leaves out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Exported {
    /// The command, one flag a line, with backslash continuations, after a comment line.
    pub text: String,
    /// The inputs of the scenario a command cannot carry, as Headroom's flags.
    pub left_out: Vec<String>,
}

/// A word as a POSIX shell reads it back: bare when it is safe, else in single quotes.
pub fn quote(word: &str) -> String {
    let safe = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:,=+@%".contains(c));
    if safe {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// The command for `s`.
pub fn command(s: &Scenario, names: &Names) -> Exported {
    let e = &s.engine;
    let p = &s.parallel;
    let mut flags: Vec<(String, Option<String>)> = Vec::new();
    let mut flag = |name: &str, value: Option<String>| flags.push((format!("--{name}"), value));
    if p.tp != 1 {
        flag("tensor-parallel-size", Some(p.tp.to_string()));
    }
    if p.pp != 1 {
        flag("pipeline-parallel-size", Some(p.pp.to_string()));
    }
    if p.dp != 1 {
        flag("data-parallel-size", Some(p.dp.to_string()));
    }
    if p.expert_parallel {
        flag("enable-expert-parallel", None);
    }
    if let Some(u) = e
        .gpu_memory_utilization
        .filter(|u| *u != s.version.default_utilization())
    {
        flag("gpu-memory-utilization", Some(format!("{u}")));
    }
    if let Some(b) = e.kv_cache_memory_bytes {
        flag("kv-cache-memory-bytes", Some(b.to_string()));
    }
    match e.max_model_len {
        MaxLen::ModelDefault => {}
        MaxLen::Value(n) => flag("max-model-len", Some(n.to_string())),
        MaxLen::Auto => flag("max-model-len", Some("auto".into())),
    }
    if let Some(n) = e.max_num_seqs {
        flag("max-num-seqs", Some(n.to_string()));
    }
    if let Some(n) = e.max_num_batched_tokens {
        flag("max-num-batched-tokens", Some(n.to_string()));
    }
    if e.kv_cache_dtype != KvCacheDtype::Auto {
        flag("kv-cache-dtype", Some(e.kv_cache_dtype.as_str().into()));
    }
    if let Some(b) = e.attention_backend {
        flag("attention-backend", Some(b.as_str().into()));
    }
    if let Some(b) = e.block_size {
        flag("block-size", Some(b.to_string()));
    }
    if e.enforce_eager {
        flag("enforce-eager", None);
    }
    if let Some(n) = e.num_gpu_blocks_override {
        flag("num-gpu-blocks-override", Some(n.to_string()));
    }
    if e.disable_hybrid_kv_cache_manager {
        flag("disable-hybrid-kv-cache-manager", None);
    }
    if e.no_async_scheduling {
        flag("no-async-scheduling", None);
    }
    if let Some(sp) = &e.speculative {
        let mut json = format!("{{\"method\":\"{}\"", sp.method.as_str());
        if !sp.count_assumed {
            json.push_str(&format!(
                ",\"num_speculative_tokens\":{}",
                sp.num_speculative_tokens
            ));
        }
        if let Some(d) = &names.spec_model {
            json.push_str(&format!(
                ",\"model\":\"{}\"",
                d.replace('\\', "\\\\").replace('"', "\\\"")
            ));
        }
        json.push('}');
        flag("speculative-config", Some(json));
    }

    let mut env = vec![format!(
        "CUDA_VISIBLE_DEVICES={}",
        (0..s.gpus)
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join(",")
    )];
    if let Some(parts) = &p.pp_layer_partition {
        env.push(format!(
            "VLLM_PP_LAYER_PARTITION={}",
            parts
                .iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(",")
        ));
    }

    let mut left_out = vec![
        format!("--gpu {}", s.gpu.id),
        format!("--vllm-version {}", s.version),
    ];
    let r = &s.runtime;
    for (name, given) in [
        (
            "weights",
            r.weights.is_some() || r.weights_per_stage.is_some(),
        ),
        ("activation-peak", r.activation_peak.is_some()),
        ("non-torch", r.non_torch.is_some()),
        ("cuda-graph", r.cuda_graph.is_some()),
        ("load-peak", r.load_peak.is_some()),
        ("free-memory", r.free_memory.is_some()),
        (
            "available-kv",
            r.available_kv.is_some() || r.available_kv_per_stage.is_some(),
        ),
        ("other-tenants", r.other_tenants.0 > 0),
        (
            "drafter-weights",
            e.speculative
                .as_ref()
                .is_some_and(|sp| sp.drafter_weights.is_some()),
        ),
        ("mem-available", s.unified.is_some()),
        ("average-request-len", s.average_request_len.is_some()),
    ] {
        if given {
            left_out.push(format!("--{name}"));
        }
    }

    let mut text = format!(
        "# vLLM {} on {} x {}; Headroom plans it with: {}\n",
        s.version,
        s.gpus,
        s.gpu.name,
        left_out.join(" ")
    );
    text.push_str(&env.join(" "));
    text.push_str(" vllm serve ");
    text.push_str(&quote(&names.model));
    for (name, value) in &flags {
        text.push_str(" \\\n  ");
        text.push_str(name);
        if let Some(v) = value {
            text.push(' ');
            text.push_str(&quote(v));
        }
    }
    text.push('\n');
    Exported { text, left_out }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_reads_back() {
        assert_eq!(quote("meta-llama/Llama-3.1-8B"), "meta-llama/Llama-3.1-8B");
        assert_eq!(quote("{\"method\":\"ngram\"}"), "'{\"method\":\"ngram\"}'");
        assert_eq!(quote("it's"), "'it'\\''s'");
        let back = super::super::shell::commands(&format!("x {}", quote("a 'b' $c"))).unwrap();
        assert_eq!(back[0].words[1].text, "a 'b' $c");
    }
}
