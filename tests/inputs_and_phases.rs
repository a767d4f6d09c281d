//! Defects found by exploring the page, kept as tests: scenarios are read from a link the way
//! the page reads them (`io::url`), so the page, the CLI and these tests share one path.

use headroom::calc::{plan, Phase, Plan, Term};
use headroom::io::url::{self, Field, InputError};

/// The plan of a link, or the field and message the page would flag.
fn plan_of(query: &str) -> Result<Plan, (String, String)> {
    let d = url::decode(query);
    assert!(d.ignored.is_empty(), "{query}: ignored {:?}", d.ignored);
    let s =
        url::scenario(&d.state).map_err(|e: InputError| (e.field.key().to_string(), e.message))?;
    plan(&s).map_err(|e| (e.field().to_string(), e.message().to_string()))
}

/// The field and message for a value the link's reader refuses before any plan.
fn refused(query: &str) -> (String, String) {
    let d = url::decode(query);
    match d.ignored.first() {
        Some(i) => (i.key.clone(), i.reason.clone()),
        None => plan_of(query)
            .err()
            .unwrap_or_else(|| panic!("{query} was accepted")),
    }
}

#[test]
fn a_pinned_pool_larger_than_free_memory_fails_when_it_is_allocated() {
    // Llama-3.1-8B on one H100: loading leaves about 63 GiB; a 70 GiB pin cannot be allocated.
    let p = plan_of("model=llama-3.1-8b-instruct&kv-bytes=70GiB").unwrap();
    assert!(!p.starts());
    let f = p.first_failure().unwrap();
    assert_eq!(f.phase, Phase::Allocation);
    assert_eq!(f.rank, Some(0));
    assert!(
        f.message.contains("the KV pool of 70.00 GiB does not fit"),
        "{}",
        f.message
    );
    assert!(p
        .log_lines
        .iter()
        .any(|l| l == "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 70.00 GiB."));
    assert!(p.ranks[0].free_after_start < 0);
    // The phases before it passed: the pin does not go through the budget.
    assert!(p
        .checks
        .iter()
        .take_while(|c| c.phase != Phase::Allocation)
        .all(|c| c.ok));

    // A pin that fits starts, and the allocation check says what stays free.
    let p = plan_of("model=llama-3.1-8b-instruct&kv-bytes=40GiB").unwrap();
    assert!(p.starts());
    let a = p.checks.last().unwrap();
    assert_eq!((a.phase, a.ok), (Phase::Allocation, true));
    assert!(a.message.contains("stays free"), "{}", a.message);
}

#[test]
fn the_default_plan_lists_the_allocation_phase_last() {
    let p = plan_of("").unwrap();
    let phases: Vec<Phase> = p.checks.iter().map(|c| c.phase).collect();
    assert_eq!(
        phases,
        [
            Phase::Init,
            Phase::Load,
            Phase::KvSizing,
            Phase::Capacity,
            Phase::Allocation
        ]
    );
    assert!(p.starts());
}

#[test]
fn counts_must_be_whole_and_commas_only_group_thousands() {
    for (query, field, says) in [
        ("tp=2.5", "tp", "not a whole number"),
        ("tp=1.9", "tp", "not a whole number"),
        ("tp=1,6", "tp", "groups of three digits"),
        (
            "max-model-len=4096.7",
            "max-model-len",
            "not a whole number",
        ),
        ("block-size=16.9", "block-size", "not a whole number"),
        (
            "spec=mtp&spec-tokens=2.5",
            "spec-tokens",
            "not a whole number",
        ),
        ("max-num-seqs=8GiB", "max-num-seqs", "unknown unit"),
        ("kv-bytes=1.5", "kv-bytes", "not a whole number"),
        ("kv-bytes=1e-3", "kv-bytes", "not a whole number"),
        // In a per-stage list a comma separates stages (the CLI's rule too): three values.
        ("weights=1,2,3", "weights", "3 values for 1 pipeline stage"),
        ("tp=18446744073709551616", "tp", "larger than 2^64 - 1"),
    ] {
        let (f, message) = refused(query);
        assert_eq!(f, field, "{query}: {message}");
        assert!(message.contains(says), "{query}: {message}");
        assert!(
            !message.contains("bytes") || field == "kv-bytes" || field == "weights",
            "{query}: {message}"
        );
    }
    // What stays accepted: thousands separators where they belong, vLLM's suffixes, exponents.
    for query in [
        "max-model-len=131,072",
        "max-model-len=128K",
        "max-model-len=1.5k",
        "max-num-batched-tokens=8_192",
        "kv-bytes=1,073,741,824",
        "kv-bytes=10e9",
        "kv-bytes=1.5g",
    ] {
        assert!(plan_of(query).is_ok(), "{query}");
    }
    assert_eq!(url::parse_count("131,072", 1, 1 << 31), Ok(131_072));
    assert_eq!(url::parse_count("1.5k", 1, 1 << 31), Ok(1_500));
    let range = url::parse_count("2000", 1, 1024).unwrap_err();
    assert_eq!(range, "2,000 must be between 1 and 1,024");
}

#[test]
fn a_per_stage_list_must_have_one_value_per_stage() {
    for (query, field, says) in [
        (
            "weights=10GiB,20GiB",
            "weights",
            "2 values for 1 pipeline stage;",
        ),
        (
            "pp=2&weights=10GiB,20GiB,30GiB",
            "weights",
            "3 values for 2 pipeline stages;",
        ),
        (
            "available-kv=10GiB,20GiB",
            "available-kv",
            "2 values for 1 pipeline stage;",
        ),
    ] {
        let (f, message) = plan_of(query)
            .err()
            .unwrap_or_else(|| panic!("{query} was accepted"));
        assert_eq!(f, field, "{query}");
        assert!(message.contains(says), "{query}: {message}");
    }
    // A measured 0 is refused, as one value or as a stage's.
    for query in ["weights=0", "pp=2&weights=10GiB,0GiB"] {
        let (f, m) = plan_of(query).unwrap_err();
        assert_eq!(f, "weights", "{query}");
        assert!(m.contains("never 0"), "{query}: {m}");
    }
    // One value, or exactly one per stage, is fine.
    assert!(plan_of("weights=10GiB").is_ok());
    assert!(plan_of("pp=2&weights=10GiB,12GiB").is_ok());
    assert_eq!(Field::from_key("available-kv"), Some(Field::AvailableKv));
}

#[test]
fn messages_count_in_words() {
    let (_, m) = plan_of("gpus=1&tp=8").unwrap_err();
    assert!(m.starts_with("1 GPU is fewer than"), "{m}");
    let (_, m) = plan_of("gpus=3&tp=8").unwrap_err();
    assert!(m.starts_with("3 GPUs are fewer than"), "{m}");
}

#[test]
fn demand_counts_a_request_by_its_blocks_so_windows_cap_it() {
    // Gemma 3 keeps 1,024 tokens in five of six layers: a max-length request is far smaller
    // than max-model-len x bytes per token over every layer.
    let p = plan_of("model=gemma-3-12b-it").unwrap();
    let d = p.demand.as_ref().unwrap();
    let per_token_all_layers = u128::from(p.ranks[0].kv_bytes_per_token)
        * u128::from(p.replica.as_ref().unwrap().max_model_len);
    assert!(u128::from(d.per_request_bytes) < per_token_all_layers / 2);
    assert_eq!(
        d.all_seqs_bytes,
        u128::from(d.max_num_seqs) * u128::from(d.per_request_bytes)
    );
    assert_eq!(d.all_seqs_bytes_replica, d.all_seqs_bytes, "one rank");
    // Full attention: the same figure either way (131,072 is a whole number of blocks).
    let p = plan_of("model=llama-3.1-8b-instruct&tp=2").unwrap();
    let d = p.demand.as_ref().unwrap();
    let len = u128::from(p.replica.as_ref().unwrap().max_model_len);
    assert_eq!(
        d.all_seqs_bytes,
        u128::from(d.max_num_seqs) * len * u128::from(p.ranks[0].kv_bytes_per_token)
    );
    assert_eq!(d.all_seqs_bytes_replica, 2 * d.all_seqs_bytes);
}

#[test]
fn figures_for_people_group_thousands() {
    use headroom::calc::units::{grouped_fixed, human, UnitSystem, GIB};
    assert_eq!(grouped_fixed(15_685.0, 2), "15,685.00");
    assert_eq!(grouped_fixed(-1_234_567.891, 1), "-1,234,567.9");
    assert_eq!(grouped_fixed(999.999, 2), "1,000.00");
    assert_eq!(grouped_fixed(12.5, 0), "12");
    assert_eq!(
        human(16_384 * GIB as i128, UnitSystem::Binary),
        "16,384.00 GiB"
    );
}

#[test]
fn a_pasted_config_json_is_checked_and_named_once() {
    use headroom::catalog::parse_config_json;
    let base =
        r#""num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "vocab_size": 100"#;
    let with = |extra: &str| format!("{{{base}, {extra}}}");
    for (text, field, says) in [
        (
            with(r#""max_position_embeddings": 512, "num_key_value_heads": 8"#),
            "num_key_value_heads",
            "must divide num_attention_heads 4",
        ),
        (
            with(r#""max_position_embeddings": 512, "num_key_value_heads": 3"#),
            "num_key_value_heads",
            "must divide",
        ),
        (
            with(r#""max_position_embeddings": 0"#),
            "max_position_embeddings",
            "at least 1",
        ),
        (
            with(r#""max_position_embeddings": 512, "sliding_window": 0"#),
            "sliding_window",
            "at least 1",
        ),
        (
            with(
                r#""max_position_embeddings": 512, "quantization_config": {"quant_method": "banana"}"#,
            ),
            "quantization_config",
            "\"banana\" is not one Headroom can size",
        ),
        (
            with(r#""max_position_embeddings": 512, "kv_lora_rank": 0, "qk_rope_head_dim": 0"#),
            "kv_lora_rank",
            "would cache nothing",
        ),
    ] {
        let e = parse_config_json(&text).expect_err(&text);
        assert_eq!(e.field, field, "{text}");
        assert!(e.message.contains(says), "{text}: {}", e.message);
    }
    // A byte-order mark is skipped; broken JSON says "config.json" once.
    let ok = format!("\u{feff}{}", with(r#""max_position_embeddings": 512"#));
    assert_eq!(parse_config_json(&ok).unwrap().max_position_embeddings, 512);
    let e = parse_config_json("{nope").unwrap_err().to_string();
    assert_eq!(e.matches("config.json").count(), 1, "{e}");
    let (f, m) = refused(&format!("config={}", url::base64url_encode(b"{nope")));
    assert_eq!(f, "config");
    assert_eq!(m.matches("config.json").count(), 1, "{m}");
}

#[test]
fn a_pin_too_small_for_one_block_fails_kv_sizing_with_or_without_auto_length() {
    // One block of Llama-3.1-8B is 2 MiB. A 1 MiB pin leaves nothing after the null block:
    // vLLM raises "No available memory" for a fixed length and "Cannot auto-fit" for auto
    // (the auto-fit runs first), but both are the same shortfall, so both fail KV sizing.
    for (len, says, vllm) in [
        (
            "",
            "one block (2,097,152 B",
            "No available memory for the cache blocks",
        ),
        (
            "&max-model-len=auto",
            "auto finds no length that fits: one block (2,097,152 B) takes all",
            "Cannot auto-fit max_model_len",
        ),
    ] {
        let p = plan_of(&format!("model=llama-3.1-8b-instruct&kv-bytes=1MiB{len}")).unwrap();
        let f = p.first_failure().unwrap();
        assert_eq!(f.phase, Phase::KvSizing, "{len}: {}", f.message);
        assert!(f.message.contains(says), "{len}: {}", f.message);
        assert!(f.vllm_error.as_deref().unwrap().starts_with(vllm), "{len}");
    }
    // 3 MiB leaves 1 MiB after the null block: memory for blocks, but not one token's block,
    // so the auto length fails where the length is checked.
    let p = plan_of("model=llama-3.1-8b-instruct&kv-bytes=3MiB&max-model-len=auto").unwrap();
    let f = p.first_failure().unwrap();
    assert_eq!(f.phase, Phase::Capacity, "{}", f.message);
    assert!(
        f.message
            .contains("1,048,576 B is left after the null block"),
        "{}",
        f.message
    );
}

#[test]
fn kv_sizing_says_why_when_memory_is_there_but_no_block_is() {
    let p = plan_of("model=llama-3.1-8b-instruct&block-size=1048576").unwrap();
    let f = p.first_failure().unwrap();
    assert_eq!(f.phase, Phase::KvSizing);
    assert!(
        f.message.contains("one block (137,438,953,472 B"),
        "{}",
        f.message
    );
    assert!(f.knobs.iter().any(|k| k.starts_with("block-size")));
    let p = plan_of("model=llama-3.1-8b-instruct&num-gpu-blocks-override=1").unwrap();
    let f = p.first_failure().unwrap();
    assert!(
        f.message
            .contains("num-gpu-blocks-override 1 leaves no block"),
        "{}",
        f.message
    );
    // vLLM's own words stay vLLM's.
    assert!(f
        .vllm_error
        .as_deref()
        .unwrap()
        .starts_with("No available memory for the cache blocks."));
}

#[test]
fn check_messages_follow_the_unit_toggle() {
    use headroom::calc::units::UnitSystem;
    // Seed 003 works in GB: the init check's budget must read in GB there too.
    let p = plan_of("example=s3-synthetic-tp4").unwrap();
    let init = p.checks.iter().find(|c| c.phase == Phase::Init).unwrap();
    let gb = init.message.render(UnitSystem::Decimal);
    assert!(gb.contains(" GB") && !gb.contains("GiB"), "{gb}");
    assert!(init.message.contains(" GiB"), "{}", &*init.message);
    // No marker leaks into any text a view reads.
    for c in &p.checks {
        for t in [c.message.to_string(), c.message.render(UnitSystem::Decimal)] {
            assert!(!t.contains(['\u{e000}', '\u{e001}']), "{t}");
        }
    }
}

#[test]
fn a_measured_overhead_is_a_ledger_line_and_the_ledger_adds_up() {
    use headroom::calc::Term;
    let p = plan_of("example=s2-unified-gate").unwrap();
    let r = &p.ranks[0];
    let get = |t: Term| r.line(t).map_or(0, |l| l.bytes);
    let overhead = get(Term::MeasuredOverhead);
    assert_eq!(
        format!("{:.1}", overhead as f64 / (1u64 << 30) as f64),
        "13.4"
    );
    assert_eq!(
        get(Term::FreeAfterStart),
        get(Term::FreeAtStart)
            - get(Term::Weights)
            - get(Term::Drafter)
            - overhead
            - get(Term::KvPool)
    );
    // Without a unified box there is no such line.
    let p = plan_of("").unwrap();
    assert!(p.ranks[0].line(Term::MeasuredOverhead).is_none());
}

#[test]
fn the_page_takes_a_gpu_total_alone_or_for_a_catalog_gpu() {
    // Alone: a custom GPU of that total (an A6000 reports 51,033,931,776 B).
    let d = url::decode("gpu-memory=51,033,931,776&model=llama-3.1-8b-instruct");
    let s = url::scenario(&d.state).unwrap();
    assert_eq!(s.gpu.id, "custom");
    assert_eq!(s.gpu.total.0, 51_033_931_776);
    assert!(s.gpu.total_confirmed);
    assert!(plan(&s).unwrap().starts());
    // With a catalog GPU: its total replaced, and now a measurement.
    let d = url::decode("gpu=a100-sxm4-80gb&gpu-memory=85GB");
    let s = url::scenario(&d.state).unwrap();
    assert_eq!(s.gpu.id, "a100-sxm4-80gb");
    assert_eq!(s.gpu.total.0, 85_000_000_000);
    assert!(
        s.gpu.name.contains("total given: 85,000,000,000 B"),
        "{}",
        s.gpu.name
    );
    // A bad total is flagged at the field.
    let (f, m) = refused("gpu-memory=lots");
    assert_eq!(f, "gpu-memory");
    assert!(m.contains("not a byte count"), "{m}");
}

#[test]
fn docs_url_md_lists_every_query_key_and_its_flag() {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/url.md")).unwrap();
    for f in Field::ALL {
        let row = format!("| `{}` | `{}`", f.key(), f.flag());
        assert!(doc.contains(&row), "docs/url.md has no row starting {row}");
    }
    for e in url::examples() {
        assert!(doc.contains(&format!("`{}`", e.id)), "example {}", e.id);
    }
}

#[test]
fn free_memory_above_the_gpu_total_is_refused() {
    let (f, m) = plan_of("model=llama-3.1-8b-instruct&gpu-memory=40GiB&free=60GiB").unwrap_err();
    assert_eq!(f, "free-memory");
    assert!(
        m.contains("is more than the GPU's total of 42,949,672,960 B"),
        "{m}"
    );
    // An example's readings above a replaced total give way (no field shows them to fix);
    // typed ones are refused, as above.
    let p = plan_of("example=s2-unified-gate&gpu-memory=100GiB").unwrap();
    assert!(p.unified.is_none());
    let (f, _) = plan_of("example=s2-unified-gate&gpu-memory=100GiB&free=110GiB").unwrap_err();
    assert_eq!(f, "free-memory");
    assert!(plan_of("model=llama-3.1-8b-instruct&gpu-memory=80GiB&free=60GiB").is_ok());
}

#[test]
fn a_model_is_found_by_its_id_in_any_case_or_by_its_name() {
    for typed in ["qwen3-14b", "QWEN3-14B", "Qwen3 14B", " qwen3_14b "] {
        let s = url::scenario(&url::decode(&format!("model={}", typed.replace(' ', "%20"))).state);
        assert_eq!(
            s.map(|s| s.model.name).ok().as_deref(),
            Some("Qwen3 14B"),
            "{typed:?}"
        );
    }
    assert!(headroom::catalog::model("Llama 3.1 8B Instruct").is_some());
    let (f, m) = refused("model=qwen-nonexistent");
    assert_eq!(f, "model");
    assert!(m.contains("pick one from the list"), "{m}");
}

#[test]
fn a_measured_available_kv_implies_the_other_use_so_the_ledger_adds_up() {
    use headroom::calc::Term;
    let p = plan_of("model=llama-3.1-70b-instruct&tp=4&pp=2&available-kv=20GiB,-").unwrap();
    let r = &p.ranks[0];
    let get = |t: Term| r.line(t).map_or(0, |l| l.bytes);
    let other = r.line(Term::OtherConsumption).unwrap();
    assert!(
        other
            .formula
            .starts_with("implied by the measured available KV"),
        "{}",
        &*other.formula
    );
    // Budget = weights + activation + other + graphs + available, to the byte.
    assert_eq!(
        get(Term::Budget),
        get(Term::Weights)
            + get(Term::Activation)
            + get(Term::OtherConsumption)
            + get(Term::CudaGraphs)
            + get(Term::AvailableKv)
    );
    // Stage 1 kept its estimate.
    let last = p.ranks.last().unwrap();
    assert!(!last
        .line(Term::OtherConsumption)
        .unwrap()
        .formula
        .starts_with("implied"));
}

#[test]
fn the_url_notice_names_a_key_once() {
    let (key, reason) = refused("gpus=65537");
    assert_eq!(key, "gpus");
    assert_eq!(reason, "65,537 must be between 1 and 65,536");
}

#[test]
fn values_that_cannot_act_are_noted_not_counted() {
    use headroom::calc::Term;
    let p = plan_of("spec=ngram&drafter=1GiB").unwrap();
    assert!(p.ranks.iter().all(|r| r.line(Term::Drafter).is_none()));
    assert!(p
        .notes
        .iter()
        .any(|n| n.contains("ngram speculation has no draft model")));
    let p = plan_of("spec=eagle&drafter=1GiB").unwrap();
    assert_eq!(p.ranks[0].line(Term::Drafter).unwrap().bytes, 1 << 30);
    let p = plan_of("eager=true&cuda-graph=1GiB").unwrap();
    assert_eq!(p.ranks[0].line(Term::CudaGraphs).map_or(0, |l| l.bytes), 0);
    assert!(p
        .notes
        .iter()
        .any(|n| n.contains("--enforce-eager captures no graphs")));
}

#[test]
fn the_null_block_can_cost_a_whole_request() {
    let p = plan_of("model=llama-3.1-70b-instruct&tp=4&kv-bytes=20GiB").unwrap();
    let r = p.replica.as_ref().unwrap();
    assert_eq!(
        (format!("{:.2}", r.max_concurrency), r.full_length_requests),
        ("2.00".to_string(), 1)
    );
    assert!(r.null_block_costs_a_request());
    assert!(!plan_of("")
        .unwrap()
        .replica
        .unwrap()
        .null_block_costs_a_request());
}

#[test]
fn linear_attention_prefill_checkpoints_follow_vllm_0_33() {
    use headroom::calc::kv::LayerKv;
    let groups = |query: &str| {
        let p = plan_of(query).unwrap();
        let r = p.replica.clone().expect("a pool");
        let state: Vec<u64> = r
            .groups
            .iter()
            .filter(|g| matches!(g.kind, LayerKv::Mamba { .. }))
            .map(|g| g.blocks_per_request)
            .collect();
        (r.block_size, state, p.log_lines)
    };
    // Qwen3-Next's gated DeltaNet prefills on FlashInfer on Hopper: a checkpoint block per
    // request, and blocks in multiples of its 64-token checkpoints (576, not 544, at TP 2).
    let (block, state, log) =
        groups("model=qwen3-next-80b-a3b-instruct&tp=2&pp=4&gpu=h100-sxm-80gb&max-model-len=65536");
    assert_eq!(block, 576);
    assert!(
        !state.is_empty() && state.iter().all(|b| *b == 3),
        "{state:?}"
    );
    assert!(
        log.iter().any(|l| l.ends_with(") Padding mamba page size by 7.46% to ensure that mamba page size and attention page size are exactly equal.")),
        "{log:?}"
    );
    // On an A100 it prefills on Triton: no checkpoints, so 2 blocks per request and 544.
    let (block, state, log) = groups(
        "model=qwen3-next-80b-a3b-instruct&tp=2&pp=4&gpu=a100-sxm4-80gb&max-model-len=65536",
    );
    assert_eq!(block, 544);
    assert!(state.iter().all(|b| *b == 2), "{state:?}");
    assert!(
        log.iter()
            .any(|l| l.contains(") Padding mamba page size by 1.49% ")),
        "{log:?}"
    );
    // ROCm has no FlashInfer: MI300X (9.4) and MI250X (HIP's 9.0, Hopper's number) prefill
    // on Triton.
    for (gpu, pp) in [("mi300x-192gb", 4), ("mi250x-gcd-64gb", 8)] {
        let (block, state, _) = groups(&format!(
            "model=qwen3-next-80b-a3b-instruct&tp=2&pp={pp}&gpu={gpu}&max-model-len=65536"
        ));
        assert_eq!((block, state[0]), (544, 2), "{gpu}");
    }
    // Mamba2 mixers always keep a checkpoint block in align mode, on any GPU.
    let config = r#"{"architectures":["TestHybrid"],"model_type":"test_hybrid","hidden_size":4096,"intermediate_size":8192,"num_attention_heads":32,"num_key_value_heads":8,"head_dim":128,"num_hidden_layers":8,"vocab_size":32000,"max_position_embeddings":8192,"torch_dtype":"bfloat16","layer_types":["mamba","mamba","mamba","full_attention","mamba","mamba","mamba","full_attention"],"mamba_d_conv":4,"mamba_n_groups":8,"mamba_d_state":128,"mamba_n_heads":128,"mamba_d_head":64}"#;
    for gpu in ["h100-sxm-80gb", "a100-sxm4-80gb"] {
        let mut st = url::UrlState::default();
        st.set(Field::Config, config).unwrap();
        st.set(Field::Gpu, gpu).unwrap();
        let (block, state, _) = groups(&url::encode(&st));
        // The page of vLLM's golden Nemotron-H case (10,240 conv channels, 128 x 64 x 128
        // SSM): 528-token blocks, unaffected by Mamba2's checkpoints, which declare no alignment.
        assert_eq!(block, 528, "{gpu}");
        assert!(state.iter().all(|b| *b == 3), "{gpu}: {state:?}");
    }
}

#[test]
fn a_zero_pin_is_unset_as_in_vllm() {
    // `if kv_cache_memory_bytes := ...`: 0 is false, so vLLM profiles the pool.
    let zero = plan_of("model=llama-3.1-8b-instruct&kv-bytes=0").unwrap();
    let unset = plan_of("model=llama-3.1-8b-instruct").unwrap();
    assert!(zero.starts());
    assert_eq!(zero.replica, unset.replica);
    assert!(zero.notes[0].contains("0 is false"), "{:?}", zero.notes);
    assert!(!zero.log_lines.iter().any(|l| l.contains("reserved")));
}

#[test]
fn more_sequences_than_batched_tokens_stop_the_engine() {
    // SchedulerConfig.verify_max_model_len.
    let (field, message) = refused("model=llama-3.1-8b-instruct&max-num-seqs=16384");
    assert_eq!(field, "max-num-seqs");
    assert_eq!(
        message,
        "max_num_batched_tokens (8192) must be greater than or equal to max_num_seqs (16384)."
    );
    // Both given: the one moved furthest in the direction that breaks the rule. 256 batched
    // tokens are 32x below the default 8,192; 512 sequences are below the default 1,024.
    let (field, _) =
        refused("model=llama-3.1-8b-instruct&max-num-seqs=512&max-num-batched-tokens=256");
    assert_eq!(field, "max-num-batched-tokens");
    let (field, _) =
        refused("model=llama-3.1-8b-instruct&max-num-seqs=65536&max-num-batched-tokens=4096");
    assert_eq!(field, "max-num-seqs");
    // Unset, max_num_seqs follows the batched tokens down.
    assert!(plan_of("model=llama-3.1-8b-instruct&max-num-batched-tokens=256").is_ok());
}

/// The plan of Llama-3.1-8B's config with `edit` applied to it, pasted as a custom model.
fn pasted(edit: impl Fn(&mut serde_json::Value)) -> Result<Plan, (String, String)> {
    pasted_at(None, edit)
}

/// [`pasted`] under another vLLM release's rules.
fn pasted_at(
    version: Option<&str>,
    edit: impl Fn(&mut serde_json::Value),
) -> Result<Plan, (String, String)> {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/catalog/models/llama-3.1-8b-instruct.json"
    ))
    .unwrap();
    let raw: serde_json::Value = serde_json::from_str(&text).unwrap();
    let mut config = raw["config"].clone();
    edit(&mut config);
    let mut st = url::UrlState::default();
    // The form and the link check a config when it is set, as they do every field.
    st.set(Field::Config, &config.to_string())
        .map_err(|m| ("config".to_string(), m))?;
    if let Some(v) = version {
        st.set(Field::Vllm, v).unwrap();
    }
    plan_of(&url::encode(&st))
}

#[test]
fn pasted_configs_are_sized_as_vllm_loads_them() {
    let base = pasted(|_| {}).unwrap();
    let w = |p: &Plan| p.ranks[0].weights.0;
    // float32 checkpoints are downcast by --dtype auto: the same 2 bytes per value.
    let fp32 = pasted(|c| c["torch_dtype"] = "float32".into()).unwrap();
    assert_eq!(w(&fp32), w(&base));
    assert_eq!(fp32.replica, base.replica);
    assert!(fp32
        .notes
        .iter()
        .any(|n| n.contains("downcasts it to bfloat16")));
    // Quantized weights at their own width. vLLM 0.33 loads no bitsandbytes checkpoint and
    // GPTQ at 4 or 8 bits only; older releases (not read for this) are sized as written.
    let q = |qc: serde_json::Value| pasted(move |c| c["quantization_config"] = qc.clone());
    let old = |qc: serde_json::Value| {
        pasted_at(Some("0.20"), move |c| c["quantization_config"] = qc.clone())
    };
    let json = |t: &str| -> serde_json::Value { serde_json::from_str(t).unwrap() };
    let bnb8 = old(json(
        r#"{"quant_method": "bitsandbytes", "load_in_8bit": true}"#,
    ))
    .unwrap();
    let bnb4 = old(json(
        r#"{"quant_method": "bitsandbytes", "load_in_4bit": true}"#,
    ))
    .unwrap();
    let gptq3 = old(json(
        r#"{"quant_method": "gptq", "bits": 3, "group_size": 128}"#,
    ))
    .unwrap();
    let base_old = pasted_at(Some("0.20"), |_| {}).unwrap();
    assert!(w(&bnb4) < w(&bnb8) && w(&bnb8) < w(&base_old));
    let gptq4 = q(json(
        r#"{"quant_method": "gptq", "bits": 4, "group_size": 128}"#,
    ))
    .unwrap();
    let gptq8 = q(json(
        r#"{"quant_method": "gptq", "bits": 8, "group_size": 128}"#,
    ))
    .unwrap();
    assert!(w(&gptq3) < w(&gptq4) && w(&gptq4) < w(&gptq8) && w(&gptq8) < w(&base));
    for qc in [
        r#"{"quant_method": "bitsandbytes", "load_in_4bit": true}"#,
        r#"{"quant_method": "gptq", "bits": 3, "group_size": 128}"#,
    ] {
        let (f, m) = q(json(qc)).unwrap_err();
        assert_eq!(f, "config", "{qc}");
        assert!(m.contains("vLLM 0.33"), "{qc}: {m}");
    }
    // Widths vLLM does not load, and formats that cannot be read, are refused by name.
    for (qc, field, says) in [
        (
            json(r#"{"quant_method": "gptq", "bits": 5}"#),
            "quantization_config",
            "2, 3, 4 and 8",
        ),
        (
            json(r#"{"quant_method": "awq", "bits": 8}"#),
            "quantization_config",
            "only 4-bit",
        ),
        (
            json(r#"{"bits": 4}"#),
            "quantization_config",
            "no quant_method",
        ),
        (
            json(r#"{"quant_method": "gptq"}"#),
            "quantization_config",
            "bits is missing",
        ),
        (
            json(r#"{"quant_method": "bitsandbytes", "load_in_8bit": true, "load_in_4bit": true}"#),
            "quantization_config",
            "both load_in_8bit and load_in_4bit",
        ),
        (
            serde_json::json!("fp8"),
            "quantization_config",
            "must be an object",
        ),
    ] {
        let (f, m) = q(qc.clone()).unwrap_err();
        assert_eq!(f, "config", "{qc}");
        assert!(m.contains(field) && m.contains(says), "{qc}: {m}");
    }
    let (_, m) = pasted(|c| c["torch_dtype"] = 5.into()).unwrap_err();
    assert!(m.contains("torch_dtype must be a string"), "{m}");
    let (_, m) = pasted(|c| c["text_config"] = "oops".into()).unwrap_err();
    assert!(m.contains("text_config must be an object"), "{m}");
    // A vision tower is not estimated, and the plan says so.
    let vl = pasted(|c| c["vision_config"] = serde_json::json!({"hidden_size": 1024})).unwrap();
    assert_eq!(w(&vl), w(&base));
    assert!(vl.notes.iter().any(|n| n.contains("vision encoder")));
}

#[test]
fn drafter_terms_need_a_drafter_and_mtp_needs_mtp_layers() {
    for (q, key) in [
        ("model=llama-3.1-8b-instruct&drafter=1GiB", "drafter"),
        ("model=llama-3.1-8b-instruct&spec-tokens=3", "spec-tokens"),
    ] {
        let (field, message) = refused(q);
        assert_eq!(field, key, "{q}");
        assert!(
            message.contains("choose a method in spec"),
            "{q}: {message}"
        );
    }
    // With a method they are taken.
    assert!(
        plan_of("model=deepseek-v3&tp=8&gpu=h200-141gb&spec=deepseek_mtp&spec-tokens=2").is_ok()
    );
    // MTP on a family vLLM has no MTP drafter for stops the engine, as vLLM's
    // SpeculativeConfig does (NotImplementedError); Kimi-K2 is DeepSeek-V3's architecture
    // under its own model type, which vLLM does not map.
    for model in [
        "llama-3.1-8b-instruct",
        "qwen3-32b",
        "gemma-3-27b-it",
        "kimi-k2-instruct",
    ] {
        for method in ["mtp", "deepseek_mtp"] {
            let (field, message) =
                plan_of(&format!("model={model}&gpu=h200-141gb&tp=8&spec={method}")).unwrap_err();
            assert_eq!(field, "speculative-config", "{model}: {message}");
            assert!(
                message.contains("Unsupported speculative method: 'mtp'"),
                "{model}: {message}"
            );
        }
    }
    // A family vLLM maps whose config declares no MTP layers plans a one-layer guess, and
    // says so.
    let d = url::decode("model=deepseek-v3&tp=8&gpu=h200-141gb&spec=mtp");
    let mut s = url::scenario(&d.state).unwrap();
    s.model.mtp_layers = 0;
    let p = plan(&s).unwrap();
    assert!(
        p.notes.iter().any(|n| n.contains("declares no MTP layers")),
        "{:?}",
        p.notes
    );
    assert!(plan_of("model=qwen3-next-80b-a3b-instruct&gpu=h200-141gb&tp=2&spec=mtp").is_ok());
    // Three MTP modules take 1, 2, 3, 6 ... tokens, not 4 (SpeculativeConfig: "must be
    // divisible by n_predict").
    let d = url::decode("model=deepseek-v3&tp=8&gpu=h200-141gb&spec=mtp");
    let mut s = url::scenario(&d.state).unwrap();
    s.model.mtp_layers = 3;
    for (n, ok) in [
        (1, true),
        (2, true),
        (3, true),
        (4, false),
        (6, true),
        (7, false),
    ] {
        s.engine
            .speculative
            .as_mut()
            .unwrap()
            .num_speculative_tokens = n;
        match plan(&s) {
            Ok(_) => assert!(ok, "{n} tokens"),
            Err(e) => {
                assert!(!ok, "{n} tokens: {e}");
                assert_eq!(e.field(), "num-speculative-tokens");
                assert!(e.message().contains(&format!(
                    "num_speculative_tokens:{n} must be divisible by n_predict=3"
                )));
            }
        }
    }
    let p = plan_of("model=deepseek-v3&tp=8&gpu=h200-141gb&spec=deepseek_mtp").unwrap();
    assert!(!p.notes.iter().any(|n| n.contains("declares no MTP layers")));
}

#[test]
fn dspark_is_deepseek_v4s_three_layer_drafter() {
    // DeepSeek-V4 builds three DSpark layers from the checkpoint's mtp.* weights, each with a
    // sliding-window cache (the KV side is checked against vLLM's own code in golden_v4.rs),
    // and needs the config's DSpark heads to do so.
    let base = "model=deepseek-v4-flash&tp=2&gpu=gb10-128gb&kv-bytes=10e9";
    let (f, m) = refused(&format!("{base}&spec=dspark"));
    assert_eq!(f, "speculative-config");
    assert!(
        m.contains("no dspark_target_layer_ids and dspark_markov_rank"),
        "{m}"
    );
    let scenario = |q: &str, heads: bool| {
        let d = url::decode(q);
        let mut s = url::scenario(&d.state).unwrap();
        if heads {
            let c = s.model.compressed.as_mut().unwrap();
            c.dspark_target_layers = Some(3);
            c.dspark_markov_rank = Some(256);
        }
        s
    };
    let drafter = |p: &Plan| {
        let r = p.ranks.last().unwrap();
        let l = r.ledger.iter().find(|l| l.term == Term::Drafter).unwrap();
        (l.bytes, l.provenance.basis().to_string())
    };
    let with_mtp = plan(&scenario(&format!("{base}&spec=mtp"), true)).unwrap();
    let p = plan(&scenario(&format!("{base}&spec=dspark"), true)).unwrap();
    let ((mtp, _), (dspark, basis)) = (drafter(&with_mtp), drafter(&p));
    // Three decoder layers (MTP's one has an eh_proj DSpark lacks) plus main_proj over three
    // target layers and the Markov head's two 129,280 x 256 tables.
    let ratio = dspark as f64 / mtp as f64;
    assert!((3.0..3.2).contains(&ratio), "{dspark} / {mtp}");
    assert!(basis.contains("main_proj over 3 target layers"), "{basis}");
    let note = p.notes.iter().find(|n| n.starts_with("DSpark")).unwrap();
    assert!(note.contains("3 draft decoder layers"), "{note}");
    assert!(note.contains("reads mtp.0 to mtp.2"), "{note}");
    // Two more sliding-window caches than MTP's one layer, in the packed groups.
    let cached = |p: &Plan| -> usize {
        let r = p.replica.as_ref().unwrap();
        r.groups.iter().map(|g| g.layer_indices.len()).sum()
    };
    assert_eq!(cached(&p), cached(&with_mtp) + 2);
    // Elsewhere a DSpark drafter is a checkpoint of its own, whose shape Headroom lacks.
    let (f, m) = refused("model=qwen3-8b&spec=dspark");
    assert_eq!(f, "speculative-config");
    assert!(m.contains("planned for DeepSeek-V4"), "{m}");
}

#[test]
fn attention_backend_picks_deepseek_v4s_layout() {
    // FlashInfer's DSV4 backend on SM 10.x keeps plain rows: bf16 under auto, so the fp8_ds_mla
    // switch is not logged (the layouts' pages are checked in golden_v4.rs).
    let base = "model=deepseek-v4-flash&gpu=b200-192gb&tp=2";
    let plain = plan_of(&format!(
        "{base}&attention-backend=FLASHINFER_MLA_SPARSE_DSV4"
    ))
    .unwrap();
    let packed = plan_of(base).unwrap();
    assert!(plain.ranks[0].bytes_per_block > packed.ranks[0].bytes_per_block);
    let ds_mla = |p: &Plan| {
        p.log_lines
            .iter()
            .any(|l| l.contains("fp8_ds_mla KV cache format"))
    };
    assert!(!ds_mla(&plain) && ds_mla(&packed));
    assert!(plain.notes.iter().any(|n| n.contains("plain bf16 rows")));
    assert!(plain
        .log_lines
        .iter()
        .any(|l| l.contains("/FLASHINFER_MLA_SPARSE_DSV4/")));
    // Names are matched without case, as vLLM's enum lookup does.
    assert!(plan_of(&format!("{base}&attention-backend=flashmla_sparse_dsv4")).is_ok());
    for (q, field, says) in [
        (
            format!("{base}&attention-backend=FLASHINFER_MLA_SPARSE_DSV4&kv-dtype=fp8_ds_mla"),
            "kv-cache-dtype",
            "not fp8_ds_mla",
        ),
        (
            format!("{base}&attention-backend=FLASHINFER_MLA_SPARSE"),
            "attention-backend",
            "is not a DeepSeek V4 attention backend",
        ),
        (
            "model=deepseek-v4-flash&gpu=h200-141gb&tp=2&attention-backend=FLASHINFER_MLA_SPARSE_DSV4".into(),
            "attention-backend",
            "compute capability not supported",
        ),
        (
            "model=llama-3.1-8b-instruct&attention-backend=FLASHMLA_SPARSE".into(),
            "attention-backend",
            "DeepSeek-V4 only",
        ),
        (
            format!("{base}&attention-backend=FLASH_ATTN"),
            "attention-backend",
            "DeepSeek-V4's attention runs on its own sparse backends",
        ),
    ] {
        let (f, m) = refused(&q);
        assert_eq!(f, field, "{q}: {m}");
        assert!(m.contains(says), "{q}: {m}");
    }
    // bf16 is refused by FlashMLA's fp8_ds_mla layout, which points at the FlashInfer backend.
    let (f, m) = refused(&format!("{base}&kv-dtype=bfloat16"));
    assert_eq!(f, "kv-cache-dtype");
    assert!(m.contains("FLASHINFER_MLA_SPARSE_DSV4"), "{m}");
}

#[test]
fn multi_module_mtp_keeps_more_of_each_sliding_window() {
    // kv_cache_planning.py: extra_retained_tokens = num_prefill_lookahead_tokens - 1, which is
    // num_speculative_tokens - 1 when more than one MTP layer and token are used; every sliding
    // window then needs cdiv(min(W - 1 + extra + in flight, len), block) + 1 blocks.
    let sliding = |mtp_layers: u32, tokens: u32| -> (u64, u64, u64) {
        let d = url::decode(&format!(
            "model=gemma-3-27b-it&gpu=h200-141gb&max-model-len=131072&max-num-batched-tokens=2048&spec=mtp&spec-tokens={tokens}"
        ));
        let mut s = url::scenario(&d.state).unwrap();
        // A synthetic MTP model with Gemma 3's windows (vLLM has no Gemma 3 drafter).
        s.model.mtp_layers = mtp_layers;
        s.model.mtp_draft = headroom::calc::model::MtpDraft::Mapped;
        let p = plan(&s).unwrap();
        let r = p.replica.unwrap();
        let g = r
            .groups
            .iter()
            .find(|g| matches!(g.kind, headroom::calc::kv::LayerKv::Sliding { .. }))
            .unwrap();
        let headroom::calc::kv::LayerKv::Sliding { window } = g.kind else {
            unreachable!()
        };
        (g.blocks_per_request, window, g.block_size)
    };
    // In flight: PP + 1 = 2 batches of 2,048 tokens.
    let (one_layer, w, b) = sliding(1, 3);
    assert_eq!(one_layer, (w - 1 + 4096).div_ceil(b) + 1);
    let (three_layers, _, _) = sliding(3, 3);
    assert_eq!(three_layers, (w - 1 + 2 + 4096).div_ceil(b) + 1);
    assert!(
        three_layers > one_layer,
        "the case must cross a block boundary"
    );
    // One speculative token reads no further ahead, whatever the layers.
    assert_eq!(sliding(3, 1).0, one_layer);
}

/// The replica's block count and the graph capture sizes of rank 0, from a link.
fn blocks_and_graphs(query: &str) -> (u64, String) {
    let p = plan_of(query).unwrap();
    let graphs = p.ranks[0]
        .line(headroom::calc::Term::CudaGraphs)
        .map(|l| l.formula.to_string())
        .unwrap_or_default();
    (p.replica.expect("a pool").num_blocks, graphs)
}

#[test]
fn speculative_decoding_follows_vllm_0_33() {
    // MTP with PP > 1 loads its own embedding but shares the target's LM head.
    let (blocks, _) = blocks_and_graphs(
        "model=deepseek-v3&tp=8&pp=2&gpu=h200-141gb&spec=deepseek_mtp&spec-tokens=1",
    );
    assert_eq!(blocks, 158_487);
    // Draft tokens add uniform decode batches to the capture sizes: 60 with 2 tokens.
    let (blocks, graphs) =
        blocks_and_graphs("model=deepseek-v3&tp=8&gpu=h200-141gb&spec=deepseek_mtp&spec-tokens=2");
    assert!(graphs.starts_with("60 capture sizes"), "{graphs}");
    assert_eq!(blocks, 43_256);
    // A hybrid model's state grows by the draft tokens' conv rows, and so does its block.
    for (tokens, block, pad) in [(1, 576, "5.88"), (6, 640, "9.59")] {
        let p = plan_of(&format!(
            "model=qwen3-next-80b-a3b-instruct&tp=2&pp=4&spec=mtp&spec-tokens={tokens}"
        ))
        .unwrap();
        assert_eq!(
            p.replica.as_ref().unwrap().block_size,
            block,
            "{tokens} tokens"
        );
        assert!(
            p.log_lines
                .iter()
                .any(|l| l.contains(&format!(") Padding mamba page size by {pad}% "))),
            "{tokens} tokens: {:?}",
            p.log_lines
        );
    }
    // A separate draft model is not silently dropped: unnamed and unmeasured, vLLM refuses it;
    // with its weights measured, the plan says its layers are missing.
    let (f, m) = refused("model=llama-3.1-70b-instruct&tp=4&spec=draft_model");
    assert_eq!(f, "draft-model");
    assert!(
        m.ends_with("\"num_speculative_tokens was provided but without speculative model.\""),
        "{m}"
    );
    let p = plan_of("model=llama-3.1-70b-instruct&tp=4&spec=draft_model&drafter=2GiB").unwrap();
    assert!(
        p.notes.iter().any(|n| n.contains("draft_model drafter")),
        "{:?}",
        p.notes
    );
}

#[test]
fn the_1024_graph_ceiling_is_for_blackwell_datacenter_parts_only() {
    // SM 12 (RTX 5090) keeps 512: 51 sizes, not 83.
    let (blocks, graphs) = blocks_and_graphs(
        "model=qwen3-8b&gpu=rtx-5090-32gb&max-num-seqs=512&max-num-batched-tokens=8192",
    );
    assert!(graphs.starts_with("51 capture sizes"), "{graphs}");
    assert_eq!(blocks, 5_143);
}

#[test]
fn the_default_context_length_is_derived_as_vllm_derives_it() {
    let len = |p: &Plan| p.replica.as_ref().map(|r| r.max_model_len);
    // Linear RoPE scaling multiplies the length.
    let linear = pasted(|c| {
        c["max_position_embeddings"] = 4096.into();
        c["rope_scaling"] = serde_json::json!({"rope_type": "linear", "factor": 4.0});
    })
    .unwrap();
    assert_eq!(len(&linear), Some(16_384));
    // Llama 3's (like YaRN's) already-scaled length is kept.
    let llama3 = pasted(|_| {}).unwrap();
    assert_eq!(len(&llama3), Some(131_072));
    // LongRoPE defaults to the original length, and says so; the derived one stays allowed.
    let longrope = |c: &mut serde_json::Value| {
        c["max_position_embeddings"] = 131_072.into();
        c["original_max_position_embeddings"] = 4096.into();
        c["rope_scaling"] =
            serde_json::json!({"type": "longrope", "long_factor": [1.0], "short_factor": [1.0]});
    };
    let p = pasted(longrope).unwrap();
    assert_eq!(len(&p), Some(4096));
    assert!(
        p.notes.iter().any(|n| n.contains("LongRoPE")),
        "{:?}",
        p.notes
    );
    // The smallest length key wins; model_max_length overrides them.
    let p = pasted(|c| c["seq_length"] = 8192.into()).unwrap();
    assert_eq!(len(&p), Some(8192));
    let p = pasted(|c| c["model_max_length"] = 65_536.into()).unwrap();
    assert_eq!(len(&p), Some(65_536));
    // A user length above the derived one names how it was derived.
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/catalog/models/llama-3.1-8b-instruct.json"
    ))
    .unwrap();
    let mut config: serde_json::Value = serde_json::from_str(&text).unwrap();
    let config = &mut config["config"];
    config["max_position_embeddings"] = 4096.into();
    config["rope_scaling"] = serde_json::json!({"rope_type": "linear", "factor": 4.0});
    let mut st = url::UrlState::default();
    st.set(Field::Config, &config.to_string()).unwrap();
    st.set(Field::MaxModelLen, "20000").unwrap();
    let (field, message) = plan_of(&url::encode(&st)).unwrap_err();
    assert_eq!(field, "max-model-len");
    assert!(
        message.contains("max_position_embeddings=4096 x RoPE factor 4.0"),
        "{message}"
    );
    // No length key at all: vLLM assumes 2048.
    let p = pasted(|c| {
        c.as_object_mut().unwrap().remove("max_position_embeddings");
    })
    .unwrap();
    assert_eq!(len(&p), Some(2048));
    assert!(
        p.notes.iter().any(|n| n.contains("assumes 2048")),
        "{:?}",
        p.notes
    );
}

#[test]
fn deepseek_v32_keeps_an_indexer_cache_beside_its_latent() {
    // Every layer: a 576-wide latent (1152 B in bf16) and the indexer's 132 B, 64-token blocks:
    // 61 x 64 x (1152 + 132) = 5,012,736 B per block (tests/golden_v32.rs pins the rest).
    let p = plan_of("model=deepseek-v3.2&tp=8&gpu=h200-141gb").unwrap();
    assert_eq!(p.ranks[0].bytes_per_block, 5_012_736);
    assert_eq!(p.replica.as_ref().unwrap().block_size, 64);
    let note = p
        .notes
        .iter()
        .find(|n| n.contains("sparse MLA"))
        .expect("the sparse MLA note");
    assert!(note.contains("132 B per token"), "{note}");
    assert!(
        note.contains("per rank (sizes read from vLLM 0.33.0's source"),
        "{note}"
    );
    assert!(p
        .log_lines
        .iter()
        .any(|l| l.ends_with("Setting kv cache block size to 64 for DEEPSEEK_V32_INDEXER/FLASH_ATTN_MLA_SPARSE backend(s).")));
    // fp8 on Hopper: FLASHMLA_SPARSE turns it into fp8_ds_mla (656 B); Blackwell keeps fp8 (576 B).
    let h = plan_of("model=deepseek-v3.2&tp=8&gpu=h200-141gb&kv-dtype=fp8").unwrap();
    assert_eq!(h.ranks[0].bytes_per_block, 61 * 64 * (656 + 132));
    let b = plan_of("model=deepseek-v3.2&tp=8&gpu=b200-192gb&kv-dtype=fp8").unwrap();
    assert_eq!(b.ranks[0].bytes_per_block, 61 * 64 * (576 + 132));
    // fp8_e4m3 on Hopper: FLASHINFER_MLA_SPARSE_SM90 keeps plain fp8 rows (576 B);
    // fp8_e5m2 has no sparse backend at all.
    let e = plan_of("model=deepseek-v3.2&tp=8&gpu=h200-141gb&kv-dtype=fp8_e4m3").unwrap();
    assert_eq!(e.ranks[0].bytes_per_block, 61 * 64 * (576 + 132));
    assert!(e
        .log_lines
        .iter()
        .any(|l| l.contains("DEEPSEEK_V32_INDEXER/FLASHINFER_MLA_SPARSE_SM90")));
    let (f, m) = refused("model=deepseek-v3.2&tp=8&gpu=h200-141gb&kv-dtype=fp8_e5m2");
    assert_eq!(f, "kv-cache-dtype");
    assert!(m.contains("no sparse MLA backend"), "{m}");
    // fp8_inc is Intel Gaudi's name: vLLM's CLI takes it, no CUDA backend does. It stays in
    // the URL (the field shows it) and the plan is refused at the field.
    let d = url::decode("model=llama-3.1-8b-instruct&kv-dtype=fp8_inc");
    assert!(d.ignored.is_empty(), "{:?}", d.ignored);
    assert!(url::encode(&d.state).contains("kv-dtype=fp8_inc"));
    let (f, m) = refused("model=llama-3.1-8b-instruct&kv-dtype=fp8_inc");
    assert_eq!(f, "kv-cache-dtype");
    assert!(m.contains("No valid attention backend found"), "{m}");
    // The indexer takes 64-token blocks only: vLLM finds no common block size otherwise.
    let (f, m) = refused("model=deepseek-v3.2&tp=8&gpu=h200-141gb&block-size=32");
    assert_eq!(f, "block-size");
    assert!(m.contains("multiple of 64"), "{m}");
    assert!(plan_of("model=deepseek-v3.2&tp=8&gpu=h200-141gb&block-size=128").is_ok());
    // DeepSeek-V3 has no indexer: its pages stay the latent's alone.
    let p = plan_of("model=deepseek-v3&tp=8&gpu=h200-141gb").unwrap();
    assert!(!p.notes.iter().any(|n| n.contains("sparse MLA")));
    assert_eq!(p.ranks[0].bytes_per_block % (61 * 1152), 0);
}

#[test]
fn rocm_mla_keeps_tritons_block() {
    // MI300X reports 9.4 and MI250X 9.0 (HIP's major and minor for gfx942 and gfx90a): neither
    // is Hopper, so no FlashMLA 64-token block for an fp8 cache.
    for (gpu, tp) in [("mi300x-192gb", 8), ("mi250x-gcd-64gb", 16)] {
        let p = plan_of(&format!(
            "model=deepseek-v3&tp={tp}&gpu={gpu}&kv-dtype=fp8&weights=40GiB"
        ))
        .unwrap();
        assert_eq!(p.replica.unwrap().block_size, 16, "{gpu}");
        assert!(!p.log_lines.iter().any(|l| l.contains("FLASHMLA")), "{gpu}");
    }
}

#[test]
fn an_amd_gpu_is_planned_under_rocm_whatever_its_capability() {
    // MI250X's HIP capability 9.0 is Hopper's number: it is still ROCm, with ROCm's rules.
    let (_, m) =
        refused("model=llama-3.1-8b-instruct&gpu=mi250x-gcd-64gb&attention-backend=TRITON_ATTN");
    assert!(m.contains("ROCm"), "{m}");
    let (f, m) = refused("model=llama-3.1-8b-instruct&gpu=mi250x-gcd-64gb&vllm=0.13");
    assert_eq!(f, "gpu");
    assert!(m.contains("ROCm"), "{m}");
    // FlashInfer's warm-up after the pool is CUDA's (capability 9 and later): none on ROCm.
    let warm = |gpu: &str| {
        plan_of(&format!("model=llama-3.1-8b-instruct&gpu={gpu}"))
            .unwrap()
            .settings
            .warm_up_after_pool
    };
    assert!(warm("h100-sxm-80gb"));
    assert!(!warm("mi300x-192gb"));
    assert!(!warm("mi250x-gcd-64gb"));
    // ROCm's list of quantization methods, not CUDA's minimum capabilities.
    let (f, m) =
        refused("model=llama-3.1-8b-instruct&gpu=mi250x-gcd-64gb&quantization=experts_int8");
    assert_eq!(f, "quantization");
    assert!(m.contains("vLLM on ROCm refuses it"), "{m}");
    assert!(
        plan_of("model=llama-3.1-8b-instruct&gpu=h100-sxm-80gb&quantization=experts_int8").is_ok()
    );
    // DeepSeek-V3.2's sparse backends are CUDA's: none named on ROCm (not read there).
    let sparse = |gpu: &str| {
        plan_of(&format!(
            "model=deepseek-v3.2&tp=16&gpu={gpu}&weights=45GiB"
        ))
        .unwrap()
        .log_lines
        .iter()
        .any(|l| l.contains("MLA_SPARSE"))
    };
    assert!(sparse("h200-141gb"));
    assert!(!sparse("mi250x-gcd-64gb"));
}

#[test]
fn refusals_name_the_stage_and_the_total() {
    let (field, message) = refused("model=llama-3.1-70b-instruct&pp=3&weights=45GiB,0,-");
    assert_eq!(field, "weights");
    assert!(
        message.starts_with("stage 1: weights of 0 bytes"),
        "{message}"
    );
    let (field, message) = refused("model=llama-3.1-8b-instruct&tenants=100GiB");
    assert_eq!(field, "other-tenants");
    assert!(message.contains("more than the GPU's total"), "{message}");
    let (field, _) = refused("model=llama-3.1-8b-instruct&gpu-memory=700MiB");
    assert_eq!(field, "gpu-memory");
}

#[test]
fn an_examples_measurements_give_way_to_the_users_changes() {
    // S2's gate on an H100: the gate is a unified-memory notion, so it goes.
    let p = plan_of("example=s2-unified-gate&gpu=h100-sxm-80gb").unwrap();
    assert!(p.unified.is_none());
    // A gate term typed for that gate is refused by name rather than dropped silently.
    let (field, message) = refused("example=s2-unified-gate&gpu=h100-sxm-80gb&headroom=4GiB");
    assert_eq!(field, "headroom");
    assert!(message.contains("does not apply"), "{message}");
    // S1's three-stage weights under PP=2: the list no longer fits, so the estimates plan.
    let p = plan_of("example=s1-three-cards&pp=2").unwrap();
    assert_eq!(p.pp, 2);
    // Typed by the user, the same values are still refused by name.
    let (field, _) = refused("example=s1-three-cards&pp=2&weights=1GiB,2GiB,3GiB");
    assert_eq!(field, "weights");
}

#[test]
fn an_examples_per_rank_readings_give_way_to_another_sharding() {
    use headroom::calc::plan::Provenance;
    let weights = |p: &Plan, rank: usize| p.ranks[rank].line(Term::Weights).unwrap().clone();
    let measured =
        |p: &Plan, rank: usize| matches!(weights(p, rank).provenance, Provenance::Measured(_));
    // S3's 17.5 GB a rank is a quarter of its 70 GB checkpoint: at TP 1 a rank holds all of
    // it (estimated from the checkpoint), which leaves no room for a request.
    let p = plan_of("example=s3-synthetic-tp4").unwrap();
    assert!(measured(&p, 0));
    assert!(p.first_failure().is_none());
    let p = plan_of("example=s3-synthetic-tp4&tp=1&gpus=1").unwrap();
    assert!(!measured(&p, 0));
    assert_eq!(weights(&p, 0).bytes, 70_000_000_000);
    assert!(
        p.first_failure().is_some(),
        "70 GB on one 80 GB card at 0.92 does not start"
    );
    // What the user types stays.
    let p = plan_of("example=s3-synthetic-tp4&tp=1&gpus=1&weights=20GB").unwrap();
    assert!(measured(&p, 0));
    // S1's stage weights were read at its 14, 15, 14 split: another split estimates them,
    // the same split typed out keeps them. The drafter sits whole on the last stage, so its
    // reading stays under any split (it gives way to another TP or EP).
    // (The article states the heaviest stage's weights: rank 1's.)
    assert!(measured(&plan_of("example=s1-three-cards").unwrap(), 1));
    let p = plan_of("example=s1-three-cards&pp-partition=15,16,12").unwrap();
    assert!((0..3).all(|r| !measured(&p, r)));
    let drafter = p.ranks[2].line(Term::Drafter).unwrap();
    assert!(matches!(drafter.provenance, Provenance::Measured(_)));
    let p = plan_of("example=s1-three-cards&pp-partition=14,15,14").unwrap();
    assert!(measured(&p, 1));
}

#[test]
fn an_auto_fit_that_holds_no_token_fails_at_the_capacity_check() {
    // vLLM's auto-fit takes the capacity check's place: with or without `auto`, a 3 MiB pin
    // (one 2 MiB block besides the null block) fails there, and the sentence says why.
    for q in [
        "model=llama-3.1-8b-instruct&kv-bytes=3MiB",
        "model=llama-3.1-8b-instruct&kv-bytes=3MiB&max-model-len=auto",
    ] {
        let p = plan_of(q).unwrap();
        let f = p.first_failure().unwrap();
        assert_eq!(f.phase, Phase::Capacity, "{q}");
    }
    let p = plan_of("model=llama-3.1-8b-instruct&kv-bytes=3MiB&max-model-len=auto").unwrap();
    let f = p.first_failure().unwrap();
    assert!(
        f.message
            .contains("less than the one block (2,097,152 B) a single token takes"),
        "{}",
        &*f.message
    );
    assert!(f
        .vllm_error
        .as_deref()
        .unwrap()
        .starts_with("Cannot auto-fit max_model_len"));
}

#[test]
fn context_length_edge_cases_follow_vllm() {
    let len = |p: &Plan| p.replica.as_ref().map(|r| r.max_model_len);
    // No length key: a given length is taken as it is.
    let mut st = url::UrlState::default();
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/catalog/models/llama-3.1-8b-instruct.json"
    ))
    .unwrap();
    let mut raw: serde_json::Value = serde_json::from_str(&text).unwrap();
    raw["config"]
        .as_object_mut()
        .unwrap()
        .remove("max_position_embeddings");
    st.set(Field::Config, &raw["config"].to_string()).unwrap();
    st.set(Field::MaxModelLen, "4096").unwrap();
    let p = plan_of(&url::encode(&st)).unwrap();
    assert_eq!(len(&p), Some(4096));
    assert!(!p.notes.iter().any(|n| n.contains("assumes 2048")));
    // "su" is LongRoPE's old name.
    let su = pasted(|c| {
        c["max_position_embeddings"] = 131_072.into();
        c["original_max_position_embeddings"] = 4096.into();
        c["rope_scaling"] =
            serde_json::json!({"type": "su", "long_factor": [1.0], "short_factor": [1.0]});
    })
    .unwrap();
    assert_eq!(len(&su), Some(4096));
    // RoPE inside text_config is the text model's.
    let nested = pasted(|c| {
        let inner = c.clone();
        *c = serde_json::json!({"model_type": "llava", "text_config": inner});
        c["text_config"]["max_position_embeddings"] = 4096.into();
        c["text_config"]["rope_scaling"] =
            serde_json::json!({"rope_type": "linear", "factor": 4.0});
    })
    .unwrap();
    assert_eq!(len(&nested), Some(16_384));
    // A YaRN variant keeps its already-scaled length.
    let yarn = pasted(|c| {
        c["max_position_embeddings"] = 32_768.into();
        c["rope_scaling"] = serde_json::json!({"rope_type": "telechat3-yarn", "factor": 4.0});
    })
    .unwrap();
    assert_eq!(len(&yarn), Some(32_768));
    // The last layer type's factor wins, and a null factor counts as 1.
    let null_last = pasted(|c| {
        c["max_position_embeddings"] = 4096.into();
        c["rope_scaling"] = serde_json::json!({
            "full_attention": {"rope_type": "linear", "factor": 4.0},
            "sliding_attention": {"rope_type": "linear", "factor": null}
        });
    })
    .unwrap();
    assert_eq!(len(&null_last), Some(4096));
}

#[test]
fn quantization_formats_follow_vllm_0_33_loaders() {
    let json = |t: &str| -> serde_json::Value { serde_json::from_str(t).unwrap() };
    let q = |qc: &str| {
        let qc = json(qc);
        pasted(move |c| c["quantization_config"] = qc.clone())
    };
    let w = |p: &Plan| p.ranks[0].weights.0;
    // GPTQ: symmetric only at 0.33, and `bits` (not AWQ's `w_bit`).
    let (_, m) =
        q(r#"{"quant_method": "gptq", "bits": 4, "group_size": 128, "sym": false}"#).unwrap_err();
    assert!(m.contains("symmetric"), "{m}");
    let (_, m) = q(r#"{"quant_method": "gptq", "w_bit": 4}"#).unwrap_err();
    assert!(m.contains("bits is missing"), "{m}");
    assert!(q(r#"{"quant_method": "awq", "w_bit": 4, "q_group_size": 128}"#).is_ok());
    // ModelOpt: the algorithms vLLM loads, also in the nested `quantization` form.
    let nvfp4 = q(r#"{"quant_method": "modelopt", "quantization": {"quant_algo": "NVFP4", "kv_cache_quant_algo": "FP8"}}"#).unwrap();
    let fp8 = q(r#"{"quant_method": "modelopt", "quant_algo": "FP8"}"#).unwrap();
    assert!(w(&nvfp4) < w(&fp8));
    let (_, m) = q(r#"{"quant_method": "modelopt", "quant_algo": "W4A8_AWQ"}"#).unwrap_err();
    assert!(m.contains("ModelOpt loads"), "{m}");
    // compressed-tensors: the weights' own scheme, not a word anywhere in the config.
    let w4a8 = q(r#"{"quant_method": "compressed-tensors", "config_groups": {"group_0": {"weights": {"num_bits": 4, "type": "int", "group_size": 128}, "input_activations": {"num_bits": 8, "type": "float"}}}}"#).unwrap();
    let w4a16 = q(r#"{"quant_method": "compressed-tensors", "config_groups": {"group_0": {"weights": {"num_bits": 4, "type": "int", "group_size": 128}}}}"#).unwrap();
    assert_eq!(w(&w4a8), w(&w4a16), "int4 weights either way");
    let nvfp4_ct = q(r#"{"quant_method": "compressed-tensors", "config_groups": {"group_0": {"weights": {"num_bits": 4, "type": "float", "group_size": 16}}}}"#).unwrap();
    assert!(w(&nvfp4_ct) != w(&w4a8));
}

#[test]
fn kv_sizing_does_not_claim_ranks_vllm_never_checked() {
    // Rank 0 fails its capacity check before vLLM reaches rank 1, which has no memory.
    let p = plan_of("model=llama-3.1-70b-instruct&pp=3&available-kv=10GiB,0,5GiB").unwrap();
    let sizing = p
        .checks
        .iter()
        .find(|c| c.phase == Phase::KvSizing)
        .unwrap();
    assert!(
        sizing.message.starts_with("rank 0 has memory left"),
        "{}",
        &*sizing.message
    );
    assert!(!sizing.message.contains("every rank"));
    // An auto-fit with nothing after the null block says so, not "0.00 GiB is left".
    let p = plan_of("model=llama-3.1-8b-instruct&kv-bytes=1&max-model-len=auto").unwrap();
    let f = p.first_failure().unwrap();
    assert!(!f.message.contains("0.00 GiB"), "{}", &*f.message);
}

#[test]
fn an_examples_measurements_leave_with_its_model() {
    // Llama on S1's cards: none of DeepSeek-V4's stage weights, drafter or repack peak.
    let p = plan_of("example=s1-three-cards&model=llama-3.1-8b-instruct").unwrap();
    use headroom::calc::Term;
    for r in &p.ranks {
        // The cards' own readings (free memory) stay: they describe the GPU, not the model.
        let model_terms = [
            Term::Weights,
            Term::Drafter,
            Term::LoadPeak,
            Term::Activation,
            Term::AvailableKv,
        ];
        for l in r.ledger.iter().filter(|l| model_terms.contains(&l.term)) {
            assert!(
                !l.provenance.basis().contains("seed"),
                "{:?} still carries {}",
                l.term,
                l.provenance.basis()
            );
        }
        assert!(!r.holds_drafter);
    }
    let p = plan_of("example=s2-unified-gate&model=llama-3.1-8b-instruct").unwrap();
    assert!(!p.ranks[0]
        .line(headroom::calc::Term::Weights)
        .unwrap()
        .provenance
        .basis()
        .contains("79.29"));
}

#[test]
fn a_draft_model_adds_its_weights_and_its_kv_layers_to_the_last_stage() {
    // Qwen2.5-72B at TP 4 keeps 2 KV heads per rank; a Qwen2.5-7B drafter keeps 1 (4 / 4).
    // vLLM registers the draft's 28 attention layers beside the target's 80; their pages
    // differ (16 tokens x 2 x 128 x 2 B x heads), so one UniformTypeKVCacheSpecs group holds
    // all 108 and a block takes 80 x 16,384 + 28 x 8,192 = 1,540,096 B.
    let base = "model=qwen2.5-72b-instruct&tp=4&max-model-len=32768";
    let plain = plan_of(base).unwrap();
    let p = plan_of(&format!(
        "{base}&spec=draft_model&draft-model=Qwen/Qwen2.5-7B-Instruct"
    ))
    .unwrap();
    let r = &p.replica.as_ref().unwrap();
    assert_eq!(r.groups.len(), 1);
    assert!(r.groups[0].uniform_type);
    assert_eq!(r.groups[0].spec_name(), "UniformTypeKVCacheSpecs");
    assert_eq!(r.groups[0].layer_indices.len(), 108);
    assert_eq!(r.groups[0].page_size, 1_540_096);
    assert_eq!(p.ranks[0].bytes_per_block, 1_540_096);
    assert_eq!(
        plain.ranks[0].bytes_per_block,
        80 * 16_384,
        "without the draft, 80 pages"
    );
    let pool = p.ranks[0].line(Term::KvPool).unwrap();
    assert!(
        pool.formula
            .contains("80 layers' pages of 16,384 B + 28 layers' pages of 8,192 B"),
        "{}",
        &*pool.formula
    );
    // The drafter's weights: Qwen2.5-7B's parameters at TP 4, an estimate that names it.
    let d = p.ranks[0].line(Term::Drafter).unwrap();
    assert_eq!(d.provenance.label(), "estimate");
    assert!(
        d.provenance.basis().contains("Qwen2.5 7B"),
        "{}",
        d.provenance.basis()
    );
    let gib = d.bytes as f64 / (1u64 << 30) as f64;
    assert!(
        (3.3..3.8).contains(&gib),
        "7.6B params x 2 B / 4 = about 3.5 GiB, not {gib}"
    );
    // A measured drafter replaces the estimate; the KV layers stay.
    let m = plan_of(&format!(
        "{base}&spec=draft_model&draft-model=qwen2.5-7b-instruct&drafter=2GiB"
    ))
    .unwrap();
    assert_eq!(m.ranks[0].line(Term::Drafter).unwrap().bytes, 2 << 30);
    assert_eq!(m.ranks[0].bytes_per_block, 1_540_096);
}

#[test]
fn a_draft_model_is_refused_where_it_cannot_apply() {
    let (f, m) = refused("model=qwen2.5-72b-instruct&draft-model=qwen2.5-7b-instruct");
    assert_eq!(f, "draft-model");
    assert!(m.contains("choose draft_model"), "{m}");
    let (f, m) = refused("model=qwen2.5-72b-instruct&spec=mtp&draft-model=qwen2.5-7b-instruct");
    assert_eq!(f, "draft-model");
    assert!(m.contains("draft_model"), "{m}");
    let (f, m) = refused("model=qwen2.5-72b-instruct&spec=draft_model&draft-model=nope-1b");
    assert_eq!(f, "draft-model");
    assert!(m.contains("not in the catalog"), "{m}");
    // A drafter with another vocabulary: vLLM's DraftModelProposer refuses it before loading.
    let (f, m) = refused(
        "model=qwen2.5-72b-instruct&tp=4&spec=draft_model&draft-model=llama-3.1-8b-instruct",
    );
    assert_eq!(f, "draft-model");
    assert!(
        m.starts_with("Target and draft model should have the same vocabulary size. Target model vocab_size=152064. Draft model vocab_size=128256."),
        "{m}"
    );
    // DeepSeek-V4 stores its caches as fp8_ds_mla: saying so is accepted, as vLLM accepts it.
    assert!(plan_of("model=deepseek-v4-flash&gpu=h200-141gb&tp=8&kv-dtype=fp8_ds_mla").is_ok());
    // Without a named draft model, the plan says its layers are missing.
    let p = plan_of("model=qwen2.5-72b-instruct&tp=4&spec=draft_model&drafter=1GiB").unwrap();
    assert!(p
        .notes
        .iter()
        .any(|n| n.contains("does not know until it is named")));
}

#[test]
fn a_hybrid_model_logs_its_mamba_cache_mode_first() {
    // MambaModelConfig's hook runs when the API server builds the config, before any worker.
    let p = plan_of("model=qwen3-next-80b-a3b-instruct&tp=4").unwrap();
    assert_eq!(
        p.log_lines[0],
        "(APIServer pid=P) Mamba cache mode is set to 'align' for Qwen3NextForCausalLM by default when prefix caching is enabled"
    );
    // A worker sets its block size once its model is loaded (the executors call
    // update_block_size_for_backend after load_model).
    let at = |needle: &str| p.log_lines.iter().position(|l| l.contains(needle)).unwrap();
    assert!(at("Model loading took") < at("Setting attention block size"));
    assert!(at("Setting attention block size") < at("Padding mamba page size"));
    assert!(at("Padding mamba page size") < at("Available KV cache memory"));
    // Not for a model without state layers, nor under older rules.
    let p = plan_of("model=llama-3.1-8b-instruct").unwrap();
    assert!(!p.log_lines.iter().any(|l| l.contains("Mamba cache mode")));
    let p = plan_of("model=qwen3-next-80b-a3b-instruct&tp=4&vllm=0.30").unwrap();
    assert!(!p.log_lines.iter().any(|l| l.contains("Mamba cache mode")));
}

#[test]
fn deepseek_v4_plans_its_own_caches_and_refuses_what_vllm_refuses() {
    // Nothing is split by TP: every rank's block holds the widest group, the 256-token caches
    // of all 43 layers: 21 x (37,440 + 8,640) + 20 x 1,728 = 1,002,240 B.
    let p = plan_of("model=deepseek-v4-flash&gpu=h200-141gb&tp=8").unwrap();
    assert!(p.ranks.iter().all(|r| r.bytes_per_block == 1_002_240));
    let r = p.replica.as_ref().unwrap();
    assert_eq!(r.block_size, 256);
    let blocks: Vec<u64> = r.groups.iter().map(|g| g.block_size).collect();
    assert_eq!(blocks, [64, 64, 256, 4, 8]);
    assert!(p
        .log_lines
        .iter()
        .any(|l| l.ends_with("Using DeepSeek's fp8_ds_mla KV cache format.")));
    // vLLM's backends in layer order, as its _find_non_ssm_backends lists them.
    assert!(p.log_lines.iter().any(|l| l.ends_with(
        "Setting kv cache block size to 256 for DEEPSEEK_SPARSE_SWA/FLASHMLA_SPARSE_DSV4/DEEPSEEK_V4_INDEXER/CompressorBackend backend(s)."
    )));
    assert!(p
        .notes
        .iter()
        .any(|n| n.starts_with("DeepSeek-V4: every layer keeps")));
    // A bf16 cache, a block that is not a multiple of 256, a stage without an indexer.
    let (f, m) = refused("model=deepseek-v4-flash&gpu=h200-141gb&tp=8&kv-dtype=bfloat16");
    assert_eq!(f, "kv-cache-dtype");
    assert!(m.contains("only supports fp8"), "{m}");
    let (f, _) = refused("model=deepseek-v4-flash&gpu=h200-141gb&tp=8&block-size=128");
    assert_eq!(f, "block-size");
    assert!(plan_of("model=deepseek-v4-flash&gpu=h200-141gb&tp=8&block-size=512").is_ok());
    // On an SM 8.0 part vLLM has no V4 attention backend: refused at the GPU. FlashMLA does not
    // run on SM 12.x either, where FlashInfer is the default.
    let (f, m) = refused("model=deepseek-v4-flash&gpu=a100-sxm4-80gb&tp=8");
    assert_eq!(f, "gpu");
    assert!(m.contains("this GPU is SM 8.0"), "{m}");
    let (f, m) = refused(
        "model=deepseek-v4-flash&gpu=gb10-128gb&tp=2&attention-backend=FLASHMLA_SPARSE_DSV4",
    );
    assert_eq!(f, "attention-backend");
    assert!(m.contains("compute capability not supported"), "{m}");
    assert!(plan_of("model=deepseek-v4-flash&gpu=gb10-128gb&tp=2").is_ok());
    // An Ada GPU (SM 8.9) has neither backend.
    let (f, m) = refused("model=deepseek-v4-flash&gpu=l4-24gb&tp=8&pp=2");
    assert_eq!(f, "gpu");
    assert!(m.contains("this GPU is SM 8.9"), "{m}");
    // An unknown capability (a catalog row that has none) is not checked, and the plan says so.
    let mut s =
        url::scenario(&url::decode("model=deepseek-v4-flash&gpu=l4-24gb&tp=8&pp=2").state).unwrap();
    s.gpu.compute_capability = (0, 0);
    let p = plan(&s).unwrap();
    assert!(p.notes.iter().any(|n| n.contains("is not checked")));
    let (f, m) = refused("model=deepseek-v4-flash&gpu=h200-141gb&pp=2&pp-partition=2,41");
    assert_eq!(f, "pp-layer-partition");
    assert!(
        m.contains("Workers disagree on supported KV cache layouts"),
        "{m}"
    );
}

#[test]
fn an_examples_drafter_measurement_belongs_to_its_method() {
    let drafter = |q: &str| {
        let d = url::decode(q);
        assert!(d.ignored.is_empty(), "{q}: {:?}", d.ignored);
        let s = url::scenario(&d.state).unwrap();
        s.engine
            .speculative
            .and_then(|sp| sp.drafter_weights)
            .map(|m| m.bytes.0)
    };
    // S1's 12 GiB was the deepseek_mtp module: it stays with that method, not with another.
    assert_eq!(drafter("example=s1-three-cards"), Some(12 << 30));
    assert_eq!(
        drafter("example=s1-three-cards&spec=deepseek_mtp"),
        Some(12 << 30)
    );
    assert_eq!(drafter("example=s1-three-cards&spec=eagle"), None);
    // A drafter given by hand is kept whatever the method.
    assert_eq!(
        drafter("example=s1-three-cards&spec=eagle&drafter=3GiB"),
        Some(3 << 30)
    );
}

#[test]
fn the_capacity_check_names_the_in_flight_knobs_where_windows_hold_them() {
    let knobs = |q: &str| {
        let p = plan_of(q).unwrap();
        p.checks
            .iter()
            .find(|c| c.phase == Phase::Capacity)
            .unwrap()
            .knobs
            .clone()
    };
    let windowed = knobs("model=gemma-3-27b-it&gpu=h200-141gb");
    assert!(windowed
        .iter()
        .any(|k| k.starts_with("no-async-scheduling")));
    assert!(windowed
        .iter()
        .any(|k| k.starts_with("max-num-batched-tokens")));
    let full = knobs("model=llama-3.1-8b-instruct");
    assert!(!full.iter().any(|k| k.starts_with("no-async-scheduling")));
    // Without the hybrid manager the windows are full attention: in-flight tokens do not act.
    let unified = knobs("model=gemma-3-27b-it&gpu=h200-141gb&no-hybrid=true");
    assert!(!unified.iter().any(|k| k.starts_with("no-async-scheduling")));
}

#[test]
fn a_block_size_no_cuda_backend_takes_is_refused() {
    let (f, m) = refused("model=llama-3.1-8b-instruct&block-size=7");
    assert_eq!(f, "block-size");
    assert!(m.contains("multiple of 16"), "{m}");
    assert!(plan_of("model=llama-3.1-8b-instruct&block-size=48").is_ok());
    // Before 0.18 the block size was not checked against the backends.
    assert!(plan_of("model=llama-3.1-8b-instruct&block-size=8&vllm=0.17").is_ok());
}

#[test]
fn a_pasted_config_with_dspark_heads_plans_the_dspark_drafter() {
    let row: serde_json::Value =
        serde_json::from_str(include_str!("../catalog/models/deepseek-v4-flash.json")).unwrap();
    let mut config = row["config"].clone();
    config["dspark_target_layer_ids"] = serde_json::json!([40, 41, 42]);
    config["dspark_markov_rank"] = serde_json::json!(256);
    let with = |config: &serde_json::Value| -> Result<Plan, String> {
        let mut st = url::decode("gpu=gb10-128gb&tp=2&kv-bytes=10e9&spec=dspark").state;
        st.set(Field::Config, &config.to_string())?;
        let s = url::scenario(&st).map_err(|e| e.message)?;
        plan(&s).map_err(|e| e.message().to_string())
    };
    let p = with(&config).unwrap();
    assert!(p.starts(), "{:?}", p.first_failure());
    let drafter = p.ranks[0]
        .ledger
        .iter()
        .find(|l| l.term == Term::Drafter)
        .unwrap();
    assert!(drafter
        .provenance
        .basis()
        .contains("main_proj over 3 target layers"));
    // A target layer past the model is refused by name.
    config["dspark_target_layer_ids"] = serde_json::json!([40, 41, 43]);
    let e = with(&config).unwrap_err();
    assert!(e.contains("dspark_target_layer_ids"), "{e}");
    // Without the Markov rank vLLM cannot build the drafter either.
    config["dspark_target_layer_ids"] = serde_json::json!([40, 41, 42]);
    config.as_object_mut().unwrap().remove("dspark_markov_rank");
    let e = with(&config).unwrap_err();
    assert!(e.contains("no dspark_markov_rank"), "{e}");
}

#[test]
fn a_partition_of_the_wrong_sum_says_how_far_off_it_is() {
    let (f, m) = refused("model=llama-3.1-70b-instruct&pp=3&pp-partition=20,20,18");
    assert_eq!(f, "pp-layer-partition");
    assert!(
        m.starts_with("pp-layer-partition (VLLM_PP_LAYER_PARTITION): sum(partitions)=58 does not match num_hidden_layers=80.")
            && m.ends_with("That is 22 layers short."),
        "{m}"
    );
    let (_, m) = refused("model=llama-3.1-70b-instruct&pp=3&pp-partition=30,30,21");
    assert!(m.ends_with("That is 1 layer too many."), "{m}");
}

#[test]
fn an_absurd_measurement_is_refused_at_its_own_field() {
    for (q, field) in [
        ("spec=eagle&drafter=18446744073709551615", "drafter-weights"),
        ("weights=18446744073709551615", "weights"),
        ("available-kv=18446744073709551615", "available-kv"),
    ] {
        let (f, m) = plan_of(q).unwrap_err();
        assert_eq!(f, field, "{q}: {m}");
        assert!(m.starts_with(&format!("{field} ")), "{q}: {m}");
        assert!(m.contains("beyond any GPU"), "{q}: {m}");
    }
    let (f, m) = plan_of("gpu-memory=0").unwrap_err();
    assert_eq!(f, "gpu-memory");
    assert!(m.starts_with("gpu-memory: "), "{m}");
}

#[test]
fn tp_must_split_the_kv_heads_and_the_padded_vocabulary() {
    // Qwen3-14B: 40 attention heads, 8 KV heads, 151,936 vocabulary rows.
    for (tp, says) in [
        (5, "AssertionError: 8 is not divisible by 5"),
        (10, "AssertionError: 10 is not divisible by 8"),
    ] {
        let (f, m) = plan_of(&format!("model=qwen3-14b&tp={tp}&gpus={tp}")).unwrap_err();
        assert_eq!(f, "tensor-parallel-size");
        assert!(m.contains(says), "{tp}: {m}");
    }
    // 8 splits them; 16 replicates each KV head on two ranks (and 40 heads need 8 or 40 ...).
    assert!(plan_of("model=qwen3-14b&tp=8&gpus=8").is_ok());
    // MLA has no KV heads to split.
    assert!(plan_of("model=deepseek-v3&tp=8&gpu=h200-141gb").is_ok());
}

#[test]
fn a_pinned_pool_leaves_room_for_the_warm_up_or_fails_at_allocation() {
    // The warm-up after the pool (FlashInfer's autotune at max-num-batched-tokens, SM 9.0+)
    // needs the activation peak again: a pin that leaves less fails at allocation.
    let alloc = |q: &str| {
        let p = plan_of(q).unwrap();
        p.checks
            .iter()
            .find(|c| c.phase == Phase::Allocation)
            .cloned()
            .unwrap()
    };
    let tight = alloc("model=qwen3-8b&kv-bytes=61G");
    assert!(!tight.ok, "{}", &*tight.message);
    assert!(
        tight.message.contains("warm-up's activation peak"),
        "{}",
        &*tight.message
    );
    assert!(tight
        .knobs
        .iter()
        .any(|k| k.starts_with("max-num-batched-tokens")));
    let c = alloc("model=qwen3-8b&kv-bytes=61G&max-num-batched-tokens=2048");
    assert!(c.ok, "a smaller warm-up batch fits: {}", &*c.message);
    // A pool sized by the budget always leaves the peak's share.
    assert!(alloc("model=qwen3-8b").ok);
    // No FlashInfer autotune before SM 9.0: the A100 keeps no warm-up peak.
    let a100 = alloc("model=qwen3-8b&gpu=a100-sxm4-80gb&kv-bytes=61G");
    assert!(
        a100.ok && !a100.message.contains("warm-up"),
        "{}",
        &*a100.message
    );
}

#[test]
fn some_families_build_their_tables_on_every_stage() {
    // vLLM 0.33.0's Mixtral, Qwen3-MoE, Qwen3-Next, gpt-oss and Gemma 2/3 classes build the
    // embedding and the LM head on every pipeline stage; Llama, Qwen2/3 and DeepSeek only
    // where they are used.
    let tables = |q: &str, rank: usize| {
        let p = plan_of(q).unwrap();
        let r = &p.ranks[rank];
        let get = |t: Term| r.line(t).map_or(0, |l| l.bytes);
        (
            get(Term::WeightsEmbedding),
            get(Term::WeightsHead),
            r.holds_embedding,
            r.holds_head,
        )
    };
    // A middle stage (rank 1 of 3).
    let (embed, head, e, h) = tables(
        "model=mixtral-8x7b-instruct-v0.1&pp=3&gpus=3&gpu=h200-141gb",
        1,
    );
    assert!(embed > 0 && head > embed / 2 && e && h, "{embed} {head}");
    // Tied (Gemma 3): the head is the stage's own embedding, plus the final norm.
    let (embed, head, _, _) = tables("model=gemma-3-27b-it&pp=3&gpus=3", 1);
    assert_eq!(embed, 2_818_572_288);
    assert!(head > 0 && head < 100_000, "final norm only: {head}");
    let (embed, head, e, h) = tables("model=llama-3.1-8b-instruct&pp=3&gpus=3", 1);
    assert_eq!((embed, head, e, h), (0, 0, false, false));
}

#[test]
fn sequence_parallel_moe_keeps_the_shared_experts_whole() {
    // EP with TP 8 and DP 2: DeepseekV2MLP's shared expert is built with disable_tp. The routed
    // experts are split over TP x DP = 16 ranks with or without EP, so the two differ by the
    // shared experts alone: 58 MoE layers x 7/8 of an FP8 shared expert with its scales
    // (44,050,944 B whole, 5,506,368 B an eighth).
    let layers = |q: &str| {
        let p = plan_of(q).unwrap();
        let note = p
            .notes
            .iter()
            .any(|n| n.contains("use_sequence_parallel_moe"));
        (p.ranks[0].line(Term::WeightsLayers).unwrap().bytes, note)
    };
    let base = "model=deepseek-v3&gpu=h200-141gb&tp=8&dp=2&gpus=16";
    let (ep, ep_note) = layers(&format!("{base}&ep=true"));
    let (no_ep, no_note) = layers(base);
    assert!(ep_note && !no_note);
    assert_eq!(ep - no_ep, 58 * (44_050_944 - 5_506_368));
    // Without DP the MoE is not sequence-parallel: EP only moves whole experts.
    let (_, note) = layers("model=deepseek-v3&gpu=h200-141gb&tp=8&ep=true");
    assert!(!note);
}

#[test]
fn a_quantization_skip_list_is_named_in_a_note() {
    let with = |q: serde_json::Value| {
        pasted(|c| {
            c["quantization_config"] = q.clone();
        })
        .unwrap()
    };
    let note = |p: &Plan| p.notes.iter().find(|n| n.contains("unquantized,")).cloned();
    let fp8 = |ignore: serde_json::Value| {
        with(serde_json::json!({
            "quant_method": "compressed-tensors", "format": "float-quantized",
            "config_groups": {"group_0": {"targets": ["Linear"], "weights": {"num_bits": 8, "type": "float", "strategy": "channel"}}},
            "ignore": ignore
        }))
    };
    // A pattern Headroom cannot place is named: the estimate sizes it at the quantized width.
    let p = fp8(serde_json::json!(["lm_head", "re:.*adapter.*"]));
    let n = note(&p).expect("a note");
    assert!(
        n.contains("re:.*adapter.*") && !n.contains("lm_head"),
        "{n}"
    );
    // One it recognises (every MLP) is sized at full width instead, and said in the basis.
    let mlp = fp8(serde_json::json!(["lm_head", "re:.*mlp.*"]));
    assert_eq!(note(&mlp), None);
    let layers = |p: &Plan| p.ranks[0].line(Term::WeightsLayers).unwrap().clone();
    assert!(layers(&mlp).bytes > layers(&p).bytes);
    assert!(
        layers(&mlp)
            .provenance
            .basis()
            .contains("keeps dense MLPs (all layers) at bfloat16"),
        "{:?}",
        layers(&mlp).provenance
    );
    // The LM head alone is what the estimate does anyway.
    let p = with(serde_json::json!({
        "quant_method": "compressed-tensors", "format": "float-quantized",
        "config_groups": {"group_0": {"targets": ["Linear"], "weights": {"num_bits": 8, "type": "float", "strategy": "channel"}}},
        "ignore": ["lm_head"]
    }));
    assert_eq!(note(&p), None);
}

#[test]
fn int_group_sizes_as_vllm_reads_them() {
    let weights = |q: serde_json::Value| {
        let p = pasted(|c| c["quantization_config"] = q.clone()).unwrap();
        p.ranks[0].line(Term::Weights).unwrap().bytes
    };
    let awq = |extra: serde_json::Value| {
        let mut q = serde_json::json!({"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": true});
        for (k, v) in extra.as_object().unwrap() {
            q[k] = v.clone();
        }
        weights(q)
    };
    // AutoAWQConfig reads q_group_size before group_size: groups of 64 hold more scales.
    assert!(awq(serde_json::json!({"q_group_size": 64})) > awq(serde_json::json!({})));
    // GPTQ's -1 is one scale per row: fewer scales than groups of 128, not 128.
    let gptq = |g: i64| {
        weights(
            serde_json::json!({"quant_method": "gptq", "bits": 4, "group_size": g, "sym": true, "desc_act": false}),
        )
    };
    assert!(gptq(-1) < gptq(128));
}

#[test]
fn the_block_override_is_logged_once_per_worker() {
    // get_kv_cache_configs logs it for every worker's spec: TP 2 x PP 2 is four lines.
    let p = plan_of("model=qwen3-8b&tp=2&pp=2&gpus=4&num-gpu-blocks-override=3000").unwrap();
    let n = p
        .log_lines
        .iter()
        .filter(|l| l.contains("Overriding num_gpu_blocks="))
        .count();
    assert_eq!(n, 4);
}

#[test]
fn a_pinned_pool_still_runs_the_profile_pass() {
    // 67.71 GiB of weights, 0.5 GiB other and a 15.36 GiB activation peak at 131,072 batched
    // tokens do not fit in 78.19 GiB free: the profile pass runs out before any pool exists.
    let q = "model=qwen2.5-72b-instruct&tp=2&gpus=2&kv-bytes=3G&max-model-len=8192&max-num-batched-tokens=131072&max-num-seqs=256";
    let p = plan_of(q).unwrap();
    let f = p.first_failure().unwrap();
    assert_eq!(f.phase, Phase::KvSizing);
    assert!(f.message.contains("profile pass"), "{}", &*f.message);
    assert!(p.replica.is_none());
    // A batch the rank can hold passes the profile.
    let p = plan_of(&q.replace("131072", "8192")).unwrap();
    assert!(p.checks.iter().all(|c| c.phase != Phase::KvSizing || c.ok));
}

#[test]
fn a_speculative_count_not_given_is_planned_as_one_and_said_so() {
    let assumed = |p: &Plan| {
        p.notes
            .iter()
            .any(|n| n.contains("num_speculative_tokens was not given"))
    };
    let base = "model=deepseek-v3&tp=8&gpu=h200-141gb&spec=deepseek_mtp";
    let p = plan_of(base).unwrap();
    assert!(assumed(&p), "{:?}", p.notes);
    let given = plan_of(&format!("{base}&spec-tokens=1")).unwrap();
    assert!(!assumed(&given));
    // Same figures: the note is the only difference.
    assert_eq!(p.replica, given.replica);
    // An example's drafter brings its own count, also under another method.
    for q in [
        "example=s1-three-cards",
        "example=s1-three-cards&spec=ngram",
    ] {
        let p = plan_of(q).unwrap();
        assert!(!assumed(&p), "{q}: {:?}", p.notes);
    }
}

#[test]
fn a_selected_attention_backend_is_checked_and_sets_the_block() {
    // CUTLASS_MLA on Blackwell: kernel block 128, said the way vLLM says it.
    let p = plan_of("model=deepseek-v3&tp=8&gpu=b200-192gb&attention-backend=CUTLASS_MLA").unwrap();
    let r = p.replica.as_ref().unwrap();
    assert_eq!(r.block_size, 128);
    assert!(p
        .log_lines
        .iter()
        .any(|l| l.ends_with("Using AttentionBackendEnum.CUTLASS_MLA backend.")));
    assert!(p
        .log_lines
        .iter()
        .any(|l| l.ends_with("Setting kv cache block size to 128 for CUTLASS_MLA backend(s).")));
    // A dense backend on a dense model changes no figure.
    let auto = plan_of("model=llama-3.1-8b-instruct").unwrap();
    let fi = plan_of("model=llama-3.1-8b-instruct&attention-backend=flashinfer").unwrap();
    assert_eq!(auto.replica, fi.replica);
    // vLLM's refusals, reasons in validate_configuration's order.
    let (f, m) = refused("model=llama-3.1-8b-instruct&attention-backend=FLASHMLA");
    assert_eq!(f, "attention-backend");
    assert!(m.starts_with("Selected backend AttentionBackendEnum.FLASHMLA is not valid for this configuration. Reason: ['head_size not supported', 'non-MLA not supported']"), "{m}");
    let (_, m) = refused("model=deepseek-v3&tp=8&gpu=b200-192gb&attention-backend=FLASHMLA");
    assert!(
        m.contains("Reason: ['FlashMLA Dense is only supported on Hopper devices.']"),
        "{m}"
    );
    let (_, m) = refused("model=gpt-oss-20b&gpu=a100-sxm4-80gb&attention-backend=FLASH_ATTN");
    assert!(m.contains("Reason: ['attention sinks not supported', 'sink not supported on compute capability < 9.0']"), "{m}");
    let (_, m) = refused(
        "model=llama-3.1-8b-instruct&gpu=a100-sxm4-80gb&attention-backend=FLASH_ATTN&kv-dtype=fp8",
    );
    assert!(
        m.contains("Reason: ['kv_cache_dtype not supported', 'FP8 KV cache requires FA3 on SM90"),
        "{m}"
    );
    let (_, m) = refused("model=deepseek-v3.2&tp=8&gpu=h200-141gb&attention-backend=FLASHMLA");
    assert!(m.contains("Reason: ['sparse not supported']"), "{m}");
    // Not planned: dense names for V4, any selection on ROCm.
    let (f, _) =
        refused("model=deepseek-v4-flash&tp=4&gpu=h200-141gb&attention-backend=FLASH_ATTN");
    assert_eq!(f, "attention-backend");
    let (_, m) =
        refused("model=llama-3.1-8b-instruct&gpu=mi300x-192gb&attention-backend=TRITON_ATTN");
    assert!(m.contains("ROCm"), "{m}");
    assert!(plan_of("model=gpt-oss-20b&gpu=a100-sxm4-80gb&attention-backend=TRITON_ATTN").is_ok());
}

/// The audit of 2026-12-01: each case's figure from vLLM's source for that release.
#[test]
fn older_releases_schedule_and_size_as_their_source_says() {
    let tokens = |q: &str| plan_of(q).unwrap().replica.unwrap().kv_cache_tokens;
    // 0.26 to 0.32 turn async scheduling off for ngram: a batch per stage is in flight, as
    // with --no-async-scheduling, and vLLM warns.
    let ngram = "model=gpt-oss-120b&vllm=0.32&spec=ngram&spec-tokens=3";
    assert_eq!(tokens(ngram), tokens(&format!("{ngram}&no-async=true")));
    assert_eq!(tokens(ngram), 246_514);
    assert!(plan_of(ngram).unwrap().log_lines.iter().any(|l| {
        l.ends_with(
        "Async scheduling not supported with ngram-based speculative decoding and will be disabled."
    )
    }));
    // 0.33's Model Runner V2 keeps it.
    let now = "model=gpt-oss-120b&spec=ngram&spec-tokens=3";
    assert_ne!(tokens(now), tokens(&format!("{now}&no-async=true")));
    // The 160 GiB batch tier arrived in 0.28.
    let d = |v: &str| {
        plan_of(&format!("model=gpt-oss-120b&gpu=b200-192gb&vllm={v}"))
            .unwrap()
            .demand
            .unwrap()
            .max_num_batched_tokens
    };
    assert_eq!((d("0.27"), d("0.28")), (8_192, 16_384));
    // 0.26 to 0.28 run dense models on Model Runner V2: pp + 1 batches in flight, as from 0.29.
    assert_eq!(
        tokens("model=gemma-3-27b-it&pp=2&vllm=0.28"),
        tokens("model=gemma-3-27b-it&pp=2&vllm=0.29")
    );
    // Before 0.18 the platform forced an MLA block: CUTLASS_MLA's 128 on Blackwell in 0.14,
    // FlashMLA's 64 on Hopper over a given 16; nothing on Ampere.
    let block = |q: &str| plan_of(q).unwrap().replica.unwrap().block_size;
    let v3 = "model=deepseek-v3&tp=8";
    assert_eq!(block(&format!("{v3}&gpu=b200-192gb&vllm=0.14")), 128);
    assert_eq!(
        block(&format!("{v3}&gpu=b200-192gb&vllm=0.17&block-size=16")),
        64
    );
    assert_eq!(
        block(&format!("{v3}&gpu=h200-141gb&vllm=0.14&block-size=16")),
        64
    );
    let p = plan_of(&format!("{v3}&gpu=h200-141gb&vllm=0.17&block-size=32")).unwrap();
    assert_eq!(p.replica.as_ref().unwrap().block_size, 64);
    assert!(p
        .log_lines
        .iter()
        .any(|l| l.ends_with("Forcing kv cache block size to 64 for FlashMLA backend.")));
    assert!(!p
        .log_lines
        .iter()
        .any(|l| l.contains("Setting kv cache block size")));
}

#[test]
fn dense_mla_refuses_the_caches_no_backend_takes() {
    for dtype in ["fp8_ds_mla", "fp8_e5m2"] {
        let (f, m) = refused(&format!(
            "model=deepseek-v3&tp=8&gpu=h200-141gb&kv-dtype={dtype}"
        ));
        assert_eq!(f, "kv-cache-dtype", "{m}");
        assert!(m.contains("No valid attention backend found"), "{m}");
    }
    assert!(plan_of("model=deepseek-v3&tp=8&gpu=h200-141gb&kv-dtype=fp8").is_ok());
}

#[test]
fn override_and_auto_fit_lines_follow_vllms_order() {
    // The override is logged on every worker before the capacity check that then fails.
    let p = plan_of("model=llama-3.1-8b-instruct&num-gpu-blocks-override=8192").unwrap();
    let at = |needle: &str| p.log_lines.iter().position(|l| l.contains(needle));
    let o = at("Overriding num_gpu_blocks=28228 with num_gpu_blocks_override=8192")
        .expect("override line");
    assert!(o < at("ValueError: To serve at least one request").expect("error line"));
    // Auto-fit quotes the first worker's memory unless another's length is strictly shorter.
    let p = plan_of("model=llama-3.1-8b-instruct&pp=2&max-model-len=auto&available-kv=40e9,30e9")
        .unwrap();
    assert!(
        p.log_lines
            .iter()
            .any(|l| l.ends_with("fits in available KV cache memory (37.25 GiB GPU)")),
        "{:?}",
        p.log_lines
    );
}

#[test]
fn a_rope_factor_that_is_not_a_positive_number_is_refused() {
    for f in ["-2", "0", "1e308"] {
        let cfg = format!(
            r#"{{"architectures":["LlamaForCausalLM"],"model_type":"llama","hidden_size":4096,"num_attention_heads":32,"num_key_value_heads":8,"num_hidden_layers":32,"intermediate_size":14336,"vocab_size":128256,"max_position_embeddings":4096,"rope_scaling":{{"type":"linear","factor":{f}}}}}"#
        );
        let q = format!("config={}", url::base64url_encode(cfg.as_bytes()));
        let (field, m) = refused(&q);
        assert_eq!(field, "config", "{f}: {m}");
        assert!(m.contains("rope_scaling"), "{f}: {m}");
    }
}

#[test]
fn s1s_drafter_reading_stays_when_only_the_layer_split_changes() {
    use headroom::calc::Phase;
    // README: "split 15,15,13 fails the capacity check needing vLLM's 1.24 GiB per request".
    let p = plan_of("example=s1-three-cards&util=0.95&max-model-len=163840&pp-partition=15,15,13")
        .unwrap();
    let last = p.ranks.last().unwrap();
    assert_eq!(last.line(Term::Drafter).unwrap().bytes, 12 << 30);
    let fail = p.checks.iter().find(|c| !c.ok).expect("a failing check");
    assert_eq!(fail.phase, Phase::Capacity, "{}", fail.message);
    assert!(fail.message.contains("1.24 GiB"), "{}", fail.message);
    // mtp is deepseek_mtp's own name in vLLM: the reading stays.
    let p = plan_of("example=s1-three-cards&spec=mtp").unwrap();
    assert_eq!(
        p.ranks.last().unwrap().line(Term::Drafter).unwrap().bytes,
        12 << 30
    );
    // Another TP shards the drafter otherwise: the reading gives way to an estimate.
    let p = plan_of("example=s1-three-cards&tp=2&gpus=6").unwrap();
    assert_ne!(
        p.ranks.last().unwrap().line(Term::Drafter).unwrap().bytes,
        12 << 30
    );
}

#[test]
fn field_messages_name_their_field_and_example_ids_ignore_case() {
    assert!(plan_of("example=S1-THREE-CARDS").is_ok());
    let (f, m) = refused("gpu-memory=18446744073709551615");
    assert_eq!(f, "gpu-memory");
    assert!(m.starts_with("gpu-memory: "), "{m}");
    let (f, m) = refused("weights=1,0");
    assert_eq!(f, "weights");
    assert!(
        m.starts_with("weights: 2 values for 1 pipeline stage"),
        "{m}"
    );
    let (f, m) = refused("available-kv=1e6GiB");
    assert_eq!(f, "available-kv");
    assert!(m.contains("is more than the GPU's total"), "{m}");
}

#[test]
fn a_long_config_travels_in_the_fragment_and_reads_back() {
    // A config.json of 60 KB: valid JSON with a long field the parser does not read.
    let cfg = format!(
        r#"{{"architectures":["LlamaForCausalLM"],"model_type":"llama","hidden_size":4096,"num_attention_heads":32,"num_key_value_heads":8,"num_hidden_layers":32,"intermediate_size":14336,"vocab_size":128256,"max_position_embeddings":131072,"junk":"{}"}}"#,
        "x".repeat(60_000)
    );
    let mut st = url::UrlState::default();
    st.set(Field::Config, &cfg).unwrap();
    st.set(Field::Tp, "2").unwrap();
    let link = url::link(&st);
    let (query, fragment) = link.split_once('#').expect("a fragment");
    assert!(query.len() <= url::MAX_QUERY_LEN, "{}", query.len());
    assert!(query.contains("tp=2") && !query.contains("config="));
    assert!(fragment.starts_with("config="));
    let d = url::decode(&link);
    assert!(d.ignored.is_empty(), "{:?}", d.ignored);
    assert_eq!(d.state, st);
    // A short one stays in the query, as before; an anchor fragment is not a parameter.
    let mut small = url::UrlState::default();
    small.set(Field::Tp, "2").unwrap();
    assert_eq!(url::link(&small), "?v=1&tp=2");
    let d = url::decode("?v=1&tp=2#ledger");
    assert!(d.ignored.is_empty());
    assert_eq!(d.state, small);
}

/// GPUs the grid leaves idle, several replicas' totals and a TP wider than a node are said
/// (issue 19, item 8): `gpus=8` with TP 2 used to give the text of `gpus=2`.
#[test]
fn idle_gpus_replicas_and_wide_tp_are_said() {
    let note = |q: &str, start: &str| {
        plan_of(q)
            .unwrap()
            .notes
            .iter()
            .find(|n| n.starts_with(start))
            .map(|n| n.to_string())
    };
    let base = "model=llama-3.1-8b-instruct&gpu=h100-sxm-80gb&tp=2";
    let idle = note(&format!("{base}&gpus=8"), "6 of the 8 GPUs are idle").expect("idle GPUs");
    let per = plan_of(base).unwrap().replica.unwrap().full_length_requests;
    assert!(
        idle.contains(&format!(
            "--data-parallel-size 4 would run 4 engines of TP 2 x PP 1, each holding {per} full-length requests at once ({} in all)",
            4 * per
        )),
        "{idle}"
    );
    assert_eq!(note(&format!("{base}&gpus=2"), "0 of"), None);
    let dp = note(&format!("{base}&gpus=8&dp=4"), "The deployment: 4 replicas").expect("totals");
    assert!(dp.contains(&format!("{} full-length", 4 * per)), "{dp}");
    assert!(note(&format!("{base}&gpus=8&dp=4"), "6 of").is_none());
    let wide = "model=llama-3.1-70b-instruct&gpu=h100-sxm-80gb&tp=16&gpus=16";
    assert!(note(
        wide,
        "tensor-parallel-size 16 spans more GPUs than one 8-GPU node"
    )
    .is_some());
    assert!(note(base, "tensor-parallel-size").is_none());
}

#[test]
fn a_stage_of_attention_free_layers_only_is_refused_naming_the_split() {
    // Nemotron 3 Nano's layer 1 is an MoE layer ("MEMEM*..."): alone on a stage it keeps no
    // KV cache or state, and vLLM's groups hold none of that stage's layers.
    let (field, msg) = refused("model=nemotron-3-nano-30b-a3b&pp=3&pp-partition=1,1,50");
    assert_eq!(field, "pp-layer-partition");
    assert!(
        msg.starts_with("stage 1 (layers 1–1) holds no layer with a KV cache or state"),
        "{msg}"
    );
    // A split that gives every stage a Mamba or attention layer plans.
    assert!(plan_of("model=nemotron-3-nano-30b-a3b&pp=3&pp-partition=2,25,25").is_ok());
}
