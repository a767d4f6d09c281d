//! `--quantization` and `--dtype` (issue 19, item 4): what each does to the weights' bytes, as
//! vLLM 0.33.0 reads them (`calc::weight_format`), through the link's front door.

use headroom::calc::{plan, Plan, Term};
use headroom::io::url::{self, InputError};

fn plan_of(query: &str) -> Result<Plan, (String, String)> {
    let d = url::decode(query);
    assert!(d.ignored.is_empty(), "{query}: ignored {:?}", d.ignored);
    let s =
        url::scenario(&d.state).map_err(|e: InputError| (e.field.flag().to_string(), e.message))?;
    plan(&s).map_err(|e| (e.field().to_string(), e.message().to_string()))
}

fn weights(p: &Plan) -> i128 {
    p.ranks[0].line_bytes(Term::Weights)
}

fn notes(p: &Plan) -> String {
    p.notes
        .iter()
        .map(|n| (**n).to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Llama 3.1 8B's config with a quantization_config, as a link's `config` value.
fn quantized_llama(quant: &str) -> String {
    let row = headroom::catalog::model("llama-3.1-8b-instruct").unwrap();
    let text = std::fs::read_to_string("catalog/models/llama-3.1-8b-instruct.json").unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let mut config = v["config"].clone();
    config["quantization_config"] = serde_json::from_str(quant).unwrap();
    assert_eq!(row.model.n_layers, 32);
    url::base64url_encode(config.to_string().as_bytes())
}

#[test]
fn an_online_shorthand_quantizes_the_linears_and_keeps_the_tables() {
    let bf16 = plan_of("model=llama-3.1-8b-instruct").unwrap();
    let fp8 = plan_of("model=llama-3.1-8b-instruct&quantization=fp8_per_tensor").unwrap();
    let r = &fp8.ranks[0];
    let (bf_layers, fp_layers) = (
        bf16.ranks[0].line_bytes(Term::WeightsLayers),
        r.line_bytes(Term::WeightsLayers),
    );
    // Linears at 1 byte from 2; the norms stay bfloat16, a few KiB per layer.
    assert!(
        fp_layers * 2 > bf_layers && fp_layers * 2 < bf_layers + (1 << 20),
        "{fp_layers} vs {bf_layers}"
    );
    assert_eq!(
        r.line_bytes(Term::WeightsEmbedding),
        bf16.ranks[0].line_bytes(Term::WeightsEmbedding)
    );
    let n = notes(&fp8);
    assert!(
        n.contains("online quantization") && n.contains("layerwise"),
        "{n}"
    );
    assert!(fp8.scenario.contains("FP8") && fp8.scenario.contains("quantization fp8_per_tensor"));
    assert!(fp8.replica.as_ref().unwrap().num_blocks > bf16.replica.as_ref().unwrap().num_blocks);
}

#[test]
fn a_checkpoint_method_on_an_unquantized_config_is_planned_as_that_checkpoint_and_said() {
    let p = plan_of("model=llama-3.1-70b-instruct&quantization=awq&tp=2").unwrap();
    let n = notes(&p);
    assert!(
        n.contains("(assumed)") && n.contains("Cannot find the config file for awq"),
        "{n}"
    );
    assert!(
        p.scenario
            .contains("INT4 (group 128), an assumed awq checkpoint"),
        "{}",
        p.scenario
    );
    // 70.6B parameters: about 4.25 bits per linear weight plus bf16 tables, halved by TP 2.
    let w = weights(&p) as f64 / (1u64 << 30) as f64;
    assert!((17.5..19.5).contains(&w), "{w} GiB");
    let line = p.ranks[0].line(Term::Weights).unwrap();
    assert!(line.provenance.label() == "estimate");
    // The ledger's basis says the format is the assumption, not the checkpoint's.
    assert!(
        line.provenance
            .basis()
            .contains("the format is assumed: awq"),
        "{}",
        line.provenance.basis()
    );
}

#[test]
fn experts_only_shorthands_touch_the_experts_alone() {
    let bf16 = plan_of("model=qwen3-30b-a3b").unwrap();
    let int8 = plan_of("model=qwen3-30b-a3b&quantization=int8_per_channel_weight_only").unwrap();
    let (a, b) = (weights(&bf16), weights(&int8));
    // 30.5B parameters of which about 29B are routed experts: nearly halved.
    assert!(b * 100 < a * 55 && b * 100 > a * 48, "{b} vs {a}");
    // A dense model has no experts: nothing changes, and the note says why.
    let dense =
        plan_of("model=llama-3.1-8b-instruct&quantization=int8_per_channel_weight_only").unwrap();
    assert_eq!(
        weights(&dense),
        weights(&plan_of("model=llama-3.1-8b-instruct").unwrap())
    );
    assert!(notes(&dense).contains("has none"));
}

#[test]
fn a_flag_must_match_the_checkpoint_as_vllm_checks_it() {
    let awq = quantized_llama(
        r#"{"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": true, "version": "gemm"}"#,
    );
    let plain = plan_of(&format!("config={awq}")).unwrap();
    let marlin = plan_of(&format!("config={awq}&quantization=awq_marlin")).unwrap();
    assert_eq!(weights(&plain), weights(&marlin));
    assert!(notes(&marlin).contains("another of vLLM's kernels"));
    let (field, msg) = plan_of(&format!("config={awq}&quantization=gptq")).unwrap_err();
    assert_eq!(field, "quantization");
    assert!(msg.contains("Quantization method specified in the model config (awq) does not match the quantization method specified in the `quantization` argument (gptq)."), "{msg}");
    // moe_wna16 overrides AWQ for MoE checkpoints only.
    assert_eq!(
        plan_of(&format!("config={awq}&quantization=moe_wna16"))
            .unwrap_err()
            .0,
        "quantization"
    );
}

#[test]
fn minimum_capabilities_and_activation_dtypes_are_vllms() {
    let (field, msg) =
        plan_of("model=llama-3.1-8b-instruct&quantization=fp8_per_tensor&gpu=v100-pcie-32gb")
            .unwrap_err();
    assert_eq!(field, "quantization");
    assert!(
        msg.contains("Minimum capability: 75. Current capability: 70."),
        "{msg}"
    );
    // The checkpoint's own format on a GPU too old for it is the GPU's fault.
    let (field, msg) = plan_of("model=gpt-oss-20b&gpu=v100-pcie-32gb").unwrap_err();
    assert_eq!(field, "gpu");
    assert!(msg.contains("mxfp4"), "{msg}");
    // MXFP4 runs with bfloat16 activations only.
    let (field, msg) =
        plan_of("model=llama-3.1-8b-instruct&quantization=mxfp4&dtype=float16").unwrap_err();
    assert_eq!(field, "dtype");
    assert!(
        msg.contains("torch.float16 is not supported for quantization method mxfp4"),
        "{msg}"
    );
}

#[test]
fn dtype_sets_the_bytes_of_unquantized_weights_and_an_auto_kv_cache() {
    let bf16 = plan_of("model=llama-3.1-8b-instruct").unwrap();
    let fp32 = plan_of("model=llama-3.1-8b-instruct&dtype=float32").unwrap();
    assert_eq!(
        fp32.ranks[0].line_bytes(Term::WeightsLayers),
        2 * bf16.ranks[0].line_bytes(Term::WeightsLayers)
    );
    let (a, b) = (
        bf16.replica.as_ref().unwrap().groups[0].page_size,
        fp32.replica.as_ref().unwrap().groups[0].page_size,
    );
    assert_eq!(b, 2 * a);
    assert!(notes(&fp32).contains("upcasts"));
    let half = plan_of("model=llama-3.1-8b-instruct&dtype=half").unwrap();
    assert_eq!(weights(&half), weights(&bf16));
    // vLLM's refusals, with its words.
    let (field, msg) = plan_of("model=gemma-3-27b-it&dtype=float16").unwrap_err();
    assert_eq!(field, "dtype");
    assert!(msg.contains("'gemma3' does not support float16"), "{msg}");
    let (field, msg) =
        plan_of("model=llama-3.1-8b-instruct&dtype=bfloat16&gpu=v100-pcie-32gb").unwrap_err();
    assert_eq!(field, "dtype");
    assert!(
        msg.contains("Bfloat16 is only supported on GPUs with compute capability of at least 8.0")
    );
    // auto on a GPU without bfloat16 falls back to float16 (same bytes), said.
    let v100 = plan_of("model=llama-3.1-8b-instruct&gpu=v100-pcie-32gb").unwrap();
    assert!(
        notes(&v100).contains("falls back to float16"),
        "{}",
        notes(&v100)
    );
}

#[test]
fn release_rules_decide_which_methods_exist() {
    let (field, msg) =
        plan_of("model=llama-3.1-8b-instruct&quantization=fp8_per_tensor&vllm=0.19").unwrap_err();
    assert_eq!(field, "quantization");
    assert!(msg.contains("arrived in 0.20.0"), "{msg}");
    let (field, msg) =
        plan_of("model=llama-3.1-8b-instruct&quantization=bitsandbytes").unwrap_err();
    assert_eq!(field, "quantization");
    assert!(msg.contains("removed in 0.28.0"), "{msg}");
    let bnb = plan_of("model=llama-3.1-8b-instruct&quantization=bitsandbytes&vllm=0.27").unwrap();
    assert!(weights(&bnb) * 100 < weights(&plan_of("model=llama-3.1-8b-instruct").unwrap()) * 45);
    // ptpc_fp8 left in 0.19: online FP8 before it, refused from it, by the same list that
    // refuses such a checkpoint.
    assert_eq!(
        plan_of("model=llama-3.1-8b-instruct&quantization=ptpc_fp8&vllm=0.19")
            .unwrap_err()
            .0,
        "quantization"
    );
    let ptpc = plan_of("model=llama-3.1-8b-instruct&quantization=ptpc_fp8&vllm=0.18").unwrap();
    assert!(
        weights(&ptpc) * 100
            < weights(&plan_of("model=llama-3.1-8b-instruct&vllm=0.18").unwrap()) * 60
    );
    // Before 0.16, online quantization loads the whole unquantized model first: a transient
    // of the difference, on the load's line.
    let old = plan_of("model=llama-3.1-8b-instruct&quantization=fp8&vllm=0.14").unwrap();
    let t = old.ranks[0].line_bytes(Term::LoadPeak);
    let w = weights(&old);
    let bf = weights(&plan_of("model=llama-3.1-8b-instruct&vllm=0.14").unwrap());
    assert_eq!(t, bf - w);
    assert!(notes(&old).contains("loads the whole unquantized model"));
    // From 0.31 fp8 on an unquantized checkpoint is fp8_per_tensor's deprecated spelling.
    let new = plan_of("model=llama-3.1-8b-instruct&quantization=fp8").unwrap();
    assert_eq!(new.ranks[0].line_bytes(Term::LoadPeak), 0);
    assert!(notes(&new).contains("deprecated spelling of fp8_per_tensor"));
}

#[test]
fn a_checkpoint_size_scales_a_pasted_config_and_a_pasted_index_gives_it() {
    let cfg = quantized_llama(r#"null"#);
    let bare = plan_of(&format!("config={cfg}")).unwrap();
    let sized = plan_of(&format!("config={cfg}&checkpoint-bytes=17e9")).unwrap();
    assert!(weights(&sized) > weights(&bare));
    let basis = sized.ranks[0]
        .line(Term::Weights)
        .unwrap()
        .provenance
        .basis()
        .to_string();
    assert!(
        basis.contains("to the checkpoint's 17,000,000,000 bytes"),
        "{basis}"
    );
    // The index file as pasted: its total_size, however large the weight map around it.
    let mut index = String::from(r#"{"metadata": {"total_size": 17000000000}, "weight_map": {"#);
    for i in 0..20_000 {
        index.push_str(&format!(
            r#""model.layers.{i}.w": "model-00001.safetensors","#
        ));
    }
    index.push_str(r#""x": "y"}}"#);
    assert_eq!(
        headroom::input::values::parse_checkpoint_bytes(&index),
        Ok(17_000_000_000)
    );
    let e = headroom::input::values::parse_checkpoint_bytes(r#"{"metadata": {}}"#).unwrap_err();
    assert!(e.contains("model.safetensors.index.json"), "{e}");
}

#[test]
fn the_field_says_what_the_format_means_for_the_bytes() {
    use headroom::calc::weight_format::describe;
    let scenario = |q: &str| {
        let d = url::decode(q);
        url::scenario(&d.state).unwrap()
    };
    let plain = describe(&scenario("model=llama-3.1-8b-instruct"));
    assert!(
        plain.starts_with("Unquantized: bfloat16 weights, 2 bytes each."),
        "{plain}"
    );
    let online = describe(&scenario(
        "model=llama-3.1-8b-instruct&quantization=fp8_per_block",
    ));
    assert!(
        online.contains("Online:") && online.contains("1.000 bytes per weight"),
        "{online}"
    );
    let awq = describe(&scenario("model=llama-3.1-8b-instruct&quantization=awq"));
    assert!(
        awq.contains("An assumed awq checkpoint") && awq.contains("0.520 bytes per weight"),
        "{awq}"
    );
    // The dtype the plan runs, not the config's.
    let fp32 = describe(&scenario("model=llama-3.1-8b-instruct&dtype=float32"));
    assert!(
        fp32.starts_with("Unquantized: float32 weights, 4 bytes each."),
        "{fp32}"
    );
    let own = describe(&scenario("model=qwen2.5-32b-instruct-gptq-int4"));
    assert!(
        own.starts_with("The checkpoint's own: gptq, INT4 (group 128)"),
        "{own}"
    );
}
