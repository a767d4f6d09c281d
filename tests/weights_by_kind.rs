//! Weights per layer kind against shapes computed by hand from vLLM 0.33.0's model classes
//! (issue 20): Nemotron-H's pattern of Mamba2 / attention / relu2 MLP / latent MoE layers, its
//! MTP stack, DeciLM's heterogeneous block_configs, Jamba's Mamba1 and expert periods, Granite
//! 4's shared MLP, pure Mamba LMs, and a vision tower.

use headroom::calc::blocks::{Ffn, Mixer};
use headroom::calc::model::LayerKind;
use headroom::calc::weights::{checkpoint_estimate, rank_weights, Placement};
use headroom::catalog::parse_config_json;

fn place(tp: u64, layers: u32) -> Placement {
    Placement {
        tp,
        tp_rank: 0,
        dp: 1,
        pp: 1,
        layers: (0, layers),
        first_stage: true,
        last_stage: true,
        expert_parallel: false,
        drafter_layers: 0,
        vision: false,
    }
}

/// A small Nemotron-H: hidden 256, vocab 1000 (padded to 1024), pattern M-M*E.
const NEMOTRON_H: &str = r#"{
  "architectures": ["NemotronHForCausalLM"], "model_type": "nemotron_h",
  "hidden_size": 256, "vocab_size": 1000, "num_hidden_layers": 6,
  "hybrid_override_pattern": "M-M*E", "max_position_embeddings": 4096,
  "num_attention_heads": 8, "num_key_value_heads": 2, "head_dim": 32,
  "intermediate_size": 1024, "mamba_num_heads": 16, "mamba_head_dim": 32,
  "n_groups": 2, "ssm_state_size": 64, "conv_kernel": 4, "use_conv_bias": true,
  "use_bias": false, "mlp_hidden_act": "relu2",
  "n_routed_experts": 8, "num_experts_per_tok": 2, "moe_intermediate_size": 128,
  "n_shared_experts": 1, "moe_shared_expert_intermediate_size": 192,
  "moe_latent_size": 64, "tie_word_embeddings": false, "torch_dtype": "bfloat16"
}"#;

#[test]
fn nemotron_h_reads_its_pattern_layer_by_layer() {
    let m = parse_config_json(NEMOTRON_H).unwrap();
    // vLLM builds len(hybrid_override_pattern) layers, not num_hidden_layers.
    assert_eq!(m.n_layers, 5);
    assert_eq!(
        m.layers,
        vec![
            LayerKind::Mamba2,
            LayerKind::NoCache,
            LayerKind::Mamba2,
            LayerKind::Full,
            LayerKind::NoCache
        ]
    );
    assert_eq!(m.block(1).ffn, Ffn::Mlp(1024));
    assert_eq!(m.block(1).mixer, Mixer::None);
    assert_eq!(m.block(4).ffn, Ffn::Moe);
    assert!(!m.mlp_gated);

    let h = 256u64;
    // Mamba2 mixer (MambaMixer2): inner 16 x 32 = 512, groups x state = 2 x 64 = 128.
    let mamba_linear = h * (2 * 512 + 2 * 128 + 16) + 512 * h;
    let conv_dim = 512 + 2 * 128;
    let mamba_small = conv_dim * 4 + conv_dim + 3 * 16 + 512;
    let mamba = mamba_linear + mamba_small + h; // + the layer's one norm
                                                // relu2 MLP: up and down only.
    let mlp = 2 * h * 1024 + h;
    // Attention: q 8 x 32, k and v 2 x 32, o.
    let attn = h * 256 + 2 * h * 64 + 256 * h + h;
    // MoE: experts in the latent width (64), two replicated latent projections, the router,
    // one relu2 shared expert of 192 in the hidden width.
    let moe = 8 * 2 * 64 * 128 + 2 * h * 64 + h * 8 + 2 * h * 192 + h;
    let layers = 2 * mamba + mlp + attn + moe;
    let w = rank_weights(&m, &place(1, 5));
    assert_eq!(w.layers, 2 * layers);
    assert_eq!(w.parts.mamba, 2 * 2 * (mamba_linear + mamba_small));
    assert_eq!(w.parts.dense_mlp, 2 * 2 * h * 1024);
    assert_eq!(w.parts.shared_experts, 2 * 2 * h * 192);
    assert_eq!(w.parts.norms, 2 * 5 * h);
    // Embedding and LM head: 1024 padded rows each, the final norm.
    assert_eq!(w.embedding, 2 * 1024 * h);
    assert_eq!(w.head, 2 * (1024 * h + h));
}

#[test]
fn mamba2_groups_replicate_when_tp_does_not_divide_them() {
    // n_groups 1 at TP 4: extra_groups_for_head_shards gives every rank its own copy of the
    // group, so B and C (2 x state) stay whole per rank while the heads split.
    let cfg = NEMOTRON_H
        .replace("\"n_groups\": 2", "\"n_groups\": 1")
        .replace("\"M-M*E\"", "\"MMMM\"");
    let m = parse_config_json(&cfg).unwrap();
    let h = 256u64;
    let per_rank_linear = (h * (2 * 512 + 2 * 4 * 64 + 16) + 512 * h) / 4;
    let conv_dim = 512 + 2 * 4 * 64;
    let per_rank_small = (conv_dim * 4 + conv_dim + 3 * 16 + 512) / 4;
    let w = rank_weights(&m, &place(4, 4));
    assert_eq!(w.parts.mamba, 4 * 2 * (per_rank_linear + per_rank_small));
}

#[test]
fn nemotron_h_mtp_is_its_own_stack() {
    let cfg = NEMOTRON_H.replace(
        "\"tie_word_embeddings\": false",
        "\"tie_word_embeddings\": false, \"num_nextn_predict_layers\": 1, \"mtp_hybrid_override_pattern\": \"*E\"",
    );
    let m = parse_config_json(&cfg).unwrap();
    assert_eq!(m.mtp_blocks.len(), 2);
    let mut p = place(1, 5);
    p.drafter_layers = 1;
    let h = 256u64;
    let attn = h * 256 + 2 * h * 64 + 256 * h + h;
    let moe = 8 * 2 * 64 * 128 + 2 * h * 64 + h * 8 + 2 * h * 192 + h;
    // eh_proj (2h -> h) and three norms.
    let module = attn + moe + 2 * h * h + 3 * h;
    assert_eq!(rank_weights(&m, &p).drafter, 2 * module);
}

#[test]
fn decilm_block_configs_give_each_layer_its_own_shape() {
    let cfg = r#"{
      "architectures": ["DeciLMForCausalLM"], "model_type": "nemotron-nas",
      "hidden_size": 1024, "num_attention_heads": 16, "num_hidden_layers": 3,
      "vocab_size": 1024, "max_position_embeddings": 4096, "tie_word_embeddings": false,
      "block_configs": [
        {"attention": {"n_heads_in_group": 4, "no_op": false, "replace_with_linear": false},
         "ffn": {"ffn_mult": 2.625, "no_op": false, "replace_with_linear": false}},
        {"attention": {"n_heads_in_group": null, "no_op": true, "replace_with_linear": false},
         "ffn": {"ffn_mult": 1.3125, "no_op": false, "replace_with_linear": false}},
        {"attention": {"n_heads_in_group": 8, "no_op": false, "replace_with_linear": false},
         "ffn": {"ffn_mult": null, "no_op": true, "replace_with_linear": false}}
      ]
    }"#;
    let m = parse_config_json(cfg).unwrap();
    assert_eq!(
        m.layers,
        vec![LayerKind::Full, LayerKind::NoCache, LayerKind::Full]
    );
    // _ffn_mult_to_intermediate_size: int(2 x 2.625 x 1024 / 3) = 1792, a multiple of 256;
    // int(2 x 1.3125 x 1024 / 3) = 896, up to 1024.
    assert_eq!(m.block(0).ffn, Ffn::Mlp(1792));
    assert_eq!(m.block(1).ffn, Ffn::Mlp(1024));
    assert_eq!(m.block(2).ffn, Ffn::None);
    assert_eq!(m.block(0).mixer, Mixer::AttentionKvHeads(4));
    assert_eq!(m.block(2).mixer, Mixer::AttentionKvHeads(2));
    let h = 1024u64;
    let attn = |kv: u64| 2 * h * h + 2 * h * kv * 64;
    let expect = attn(4) + 3 * h * 1792 + 2 * h // layer 0
        + 3 * h * 1024 + h // layer 1: no attention, one norm
        + attn(2) + h; // layer 2: no MLP
    assert_eq!(rank_weights(&m, &place(1, 3)).layers, 2 * expect);
}

#[test]
fn jamba_alternates_mamba1_attention_and_experts_by_period() {
    let cfg = r#"{
      "architectures": ["JambaForCausalLM"], "model_type": "jamba",
      "hidden_size": 256, "intermediate_size": 512, "num_hidden_layers": 4,
      "num_attention_heads": 8, "num_key_value_heads": 2, "vocab_size": 1024,
      "max_position_embeddings": 4096, "attn_layer_period": 4, "attn_layer_offset": 2,
      "expert_layer_period": 2, "expert_layer_offset": 1, "num_experts": 4,
      "num_experts_per_tok": 2, "mamba_d_state": 16, "mamba_d_conv": 4, "mamba_expand": 2,
      "mamba_dt_rank": 16, "mamba_conv_bias": true, "mamba_proj_bias": false
    }"#;
    let m = parse_config_json(cfg).unwrap();
    assert_eq!(m.block(2).mixer, Mixer::Attention);
    assert_eq!(m.block(0).mixer, Mixer::Mamba);
    assert_eq!(m.block(1).ffn, Ffn::Moe);
    assert_eq!(m.block(0).ffn, Ffn::Mlp(512));
    let (h, i, n, r) = (256u64, 512u64, 16u64, 16u64);
    // MambaMixer: in_proj h -> 2I, x_proj I -> r + 2N, dt_proj r -> I (+ bias), out_proj,
    // conv1d I x 4 + bias, A_log I x N, D.
    let mamba = h * 2 * i + i * (r + 2 * n) + r * i + i * h + i * 4 + i + i * n + i + i;
    assert_eq!(rank_weights(&m, &place(1, 4)).parts.mamba, 2 * 3 * mamba);
}

#[test]
fn granite_4_dense_hybrid_uses_its_shared_mlp() {
    let cfg = r#"{
      "architectures": ["GraniteMoeHybridForCausalLM"], "model_type": "granitemoehybrid",
      "hidden_size": 256, "intermediate_size": 512, "shared_intermediate_size": 768,
      "num_local_experts": 0, "num_hidden_layers": 2, "num_attention_heads": 8,
      "num_key_value_heads": 2, "vocab_size": 1024, "max_position_embeddings": 4096,
      "layer_types": ["mamba", "attention"], "mamba_n_heads": 16, "mamba_d_head": 32,
      "mamba_n_groups": 1, "mamba_d_state": 64, "mamba_d_conv": 4, "mamba_expand": 2
    }"#;
    let m = parse_config_json(cfg).unwrap();
    assert_eq!(m.block(0).ffn, Ffn::Mlp(768));
    assert_eq!(m.layers, vec![LayerKind::Mamba2, LayerKind::Full]);
    assert_eq!(
        rank_weights(&m, &place(1, 2)).parts.dense_mlp,
        2 * 2 * 3 * 256 * 768
    );
}

#[test]
fn a_mamba_lm_has_no_attention_and_no_mlp() {
    let cfg = r#"{
      "architectures": ["MambaForCausalLM"], "model_type": "mamba",
      "hidden_size": 768, "intermediate_size": 1536, "num_hidden_layers": 2,
      "state_size": 16, "conv_kernel": 4, "time_step_rank": 48, "use_bias": false,
      "use_conv_bias": true, "vocab_size": 50280, "tie_word_embeddings": true
    }"#;
    let m = parse_config_json(cfg).unwrap();
    let w = rank_weights(&m, &place(1, 2));
    assert_eq!(w.parts.attention + w.parts.dense_mlp, 0);
    let (h, i, n, r) = (768u64, 1536u64, 16u64, 48u64);
    let mamba = h * 2 * i + i * (r + 2 * n) + r * i + i * h + i * 4 + i + i * n + i + i;
    assert_eq!(w.parts.mamba, 2 * 2 * mamba);
    // Tied: the head is the embedding, plus the final norm.
    assert_eq!(w.head, 2 * h);
}

#[test]
fn a_vision_tower_is_estimated_and_placed() {
    let cfg = r#"{
      "architectures": ["LlavaForConditionalGeneration"], "model_type": "llava",
      "projector_hidden_act": "gelu",
      "text_config": {"model_type": "llama", "hidden_size": 4096, "intermediate_size": 11008,
        "num_hidden_layers": 32, "num_attention_heads": 32, "vocab_size": 32064,
        "max_position_embeddings": 4096},
      "vision_config": {"model_type": "clip_vision_model", "hidden_size": 1024,
        "intermediate_size": 4096, "num_hidden_layers": 24, "patch_size": 14,
        "image_size": 336, "hidden_act": "quick_gelu"}
    }"#;
    let m = parse_config_json(cfg).unwrap();
    let v = m.vision.expect("a tower");
    assert_eq!(
        (v.depth, v.hidden, v.positions, v.projector_layers),
        (24, 1024, 576, 2)
    );
    // CLIP ViT-L/14-336 has 303.5M parameters; LLaVA-1.5's projector 1024x4096 + 4096x4096.
    let tower = v.params() - (1024 * 4096 + 4096 * 4096);
    assert!((300_000_000..310_000_000).contains(&tower), "{tower}");
    let mut p = place(2, 32);
    assert_eq!(rank_weights(&m, &p).vision, 0);
    p.vision = true;
    assert_eq!(rank_weights(&m, &p).vision, v.params() / 2 * 2);
    assert!(checkpoint_estimate(&m) > rank_weights(&m, &place(1, 32)).target());
}

#[test]
fn nonsense_patterns_name_the_key() {
    let bad = NEMOTRON_H.replace("\"M-M*E\"", "\"M-X\"");
    let e = parse_config_json(&bad).unwrap_err();
    assert_eq!(e.field, "hybrid_override_pattern");
    assert!(e.message.contains("\"X\" at layer 2"), "{}", e.message);
    let bad = NEMOTRON_H.replace("\"mamba_num_heads\": 16", "\"mamba_num_heads\": 99999999");
    assert!(parse_config_json(&bad).is_err());
}

#[test]
fn a_quantization_configs_skip_list_keeps_parts_at_full_width() {
    // NVFP4 (9 bytes per 16 weights) but for layer 1's attention and every layer's MLP down
    // projection (the whole MLP is sized at full width: Headroom reads a part, not a matrix).
    let cfg = r#"{
      "architectures": ["LlamaForCausalLM"], "model_type": "llama",
      "hidden_size": 1024, "intermediate_size": 4096, "num_hidden_layers": 2,
      "num_attention_heads": 16, "num_key_value_heads": 4, "vocab_size": 1024,
      "max_position_embeddings": 4096, "torch_dtype": "bfloat16",
      "quantization_config": {"quant_method": "modelopt", "quant_algo": "NVFP4",
        "exclude_modules": ["lm_head", "model.layers.1.self_attn*", "re:.*mlp\\.down_proj.*",
          "model.embed_tokens", "some.thing.else"]}
    }"#;
    let m = parse_config_json(cfg).unwrap();
    assert_eq!(m.keep_full.len(), 2, "{:?}", m.keep_full);
    // The pattern Headroom cannot place stays named for the plan's note.
    assert_eq!(m.quant_skips, vec!["some.thing.else".to_string()]);
    let h = 1024u64;
    let attn_params = h * 1024 + 2 * h * 256 + 1024 * h;
    let mlp_params = 3 * h * 4096;
    let nvfp4 = |p: u64| (p * 9).div_ceil(16);
    let w = rank_weights(&m, &place(1, 2));
    assert_eq!(w.parts.attention, nvfp4(attn_params) + 2 * attn_params);
    assert_eq!(w.parts.dense_mlp, 2 * 2 * mlp_params);
    let basis = headroom::calc::weights::keep_full_text(&m).unwrap();
    assert_eq!(
        basis,
        "the quantization config keeps attention (1 layer), dense MLPs (all layers) at bfloat16"
    );
}

#[test]
fn every_catalog_model_agrees_with_the_size_its_name_states() {
    for row in headroom::catalog::models() {
        let c = headroom::calc::plausible::check(&row.model);
        assert!(c.is_none(), "{}: {:?}", row.id, c.map(|c| c.message));
    }
}

#[test]
fn an_estimate_far_from_its_name_or_its_total_size_is_said_first() {
    use headroom::calc::plausible::{census, check};
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/corpus/weights/meta-llama-llama-3.1-8b-instruct.json"
    ))
    .unwrap();
    let v = headroom::catalog::json::parse(&text).unwrap();
    let mut m = headroom::catalog::parse_config_value(v.get("config").unwrap()).unwrap();
    assert_eq!(census(&m).total, 8_030_261_248);
    m.name = "example/Llama-3.1-70B-Instruct (/tmp/config.json)".into();
    let c = check(&m).expect("8B against the name's 70B");
    assert!((c.ratio - 8.03 / 70.0).abs() < 1e-3, "{}", c.ratio);
    assert_eq!(c.dominant[0].0, "dense MLP");
    assert_eq!(
        c.short(),
        "Doubtful weights: the estimate counts 8B parameters where the name says 70B (0.11x); largest part: dense MLP."
    );
    // Within 25 % of the name: nothing to say (Llama 3.1 8B is 8.03B).
    m.name = "meta-llama/Llama-3.1-8B-Instruct".into();
    assert_eq!(check(&m), None);
    // A total_size that is twice the estimate's bytes: the scale would be 0.5.
    m.checkpoint_bytes = Some(2 * checkpoint_estimate(&m));
    let c = check(&m).expect("against the total_size");
    assert!(c.against.contains("total_size") && (c.ratio - 0.5).abs() < 1e-9);
    // The plan says it first, and the verdict's second line opens with it.
    let gpu = headroom::calc::scenario::Gpu {
        id: "h100".into(),
        name: "H100".into(),
        total: headroom::calc::units::Bytes(85_029_158_912),
        total_confirmed: false,
        unified_memory: false,
        compute_capability: (9, 0),
    };
    m.checkpoint_bytes = None;
    m.name = "example/Llama-3.1-70B-Instruct".into();
    let p = headroom::calc::plan(&headroom::calc::Scenario::new(m, gpu)).unwrap();
    assert!(p.notes[0].starts_with("The weights estimate counts 8B total parameters"));
    let (_, _, sub) =
        headroom::verdict::verdict_text(&p, headroom::calc::units::UnitSystem::Binary);
    assert!(sub.starts_with("Doubtful weights:"), "{sub}");
}

#[test]
fn an_architecture_vllm_does_not_serve_is_said_first() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/corpus/weights/meta-llama-llama-3.1-8b-instruct.json"
    ))
    .unwrap();
    let v = headroom::catalog::json::parse(&text).unwrap();
    let gpu = headroom::catalog::gpu("h100-sxm-80gb").unwrap().gpu.clone();
    let verdict = |arch: &str| {
        let mut m = headroom::catalog::parse_config_value(v.get("config").unwrap()).unwrap();
        m.architecture = arch.into();
        let p = headroom::calc::plan(&headroom::calc::Scenario::new(m, gpu.clone())).unwrap();
        let (_, _, sub) =
            headroom::verdict::verdict_text(&p, headroom::calc::units::UnitSystem::Binary);
        (
            p.notes.first().map(|n| n.to_string()).unwrap_or_default(),
            sub,
        )
    };
    let (note, sub) = verdict("FooBarForCausalLM");
    assert!(
        note.starts_with(
            "vLLM 0.33.0 has no model class for the config's architecture \"FooBarForCausalLM\""
        ),
        "{note}"
    );
    assert!(
        sub.starts_with("vLLM 0.33.0 has no model class for \"FooBarForCausalLM\""),
        "{sub}"
    );
    // vLLM served MiniMax-M1's class until 0.23.0 (registry.py's _PREVIOUSLY_SUPPORTED_MODELS).
    let (note, sub) = verdict("MiniMaxM1ForCausalLM");
    assert!(
        sub.starts_with("vLLM 0.33.0 no longer serves \"MiniMaxM1ForCausalLM\" (served until 0.23.0): only its Transformers backend might."),
        "{sub}"
    );
    assert!(
        note.contains("\"Model architecture MiniMaxM1ForCausalLM was supported in vLLM until v0.23.0, and is not supported anymore.\""),
        "{note}"
    );
    let (note, sub) = verdict("LlamaForCausalLM");
    assert!(
        !note.contains("model class") && sub.starts_with(char::is_numeric),
        "{sub}"
    );
}
