//! Plain-text ledger snapshots of representative catalog scenarios, compared with the committed
//! `tests/snapshots/*.txt`. A formula, an estimate or a rounding rule that changes shows up as a
//! reviewed diff of numbers. Run with `HEADROOM_UPDATE_SNAPSHOTS=1` to rewrite the files after
//! checking that the change is intended.

use std::fmt::Write as _;
use std::fs;
use std::path::PathBuf;

use headroom::calc::scenario::{MaxLen, Parallel, SpecMethod, Speculative};
use headroom::calc::units::thousands_signed;
use headroom::calc::{plan, Plan, Scenario};
use headroom::catalog;

fn scenario(model: &str, gpu: &str, tp: u32, pp: u32) -> Scenario {
    let m = catalog::model(model)
        .unwrap_or_else(|| panic!("no model {model}"))
        .model
        .clone();
    let g = catalog::gpu(gpu)
        .unwrap_or_else(|| panic!("no GPU {gpu}"))
        .gpu
        .clone();
    let mut s = Scenario::new(m, g);
    s.parallel = Parallel {
        tp,
        pp,
        ..Parallel::default()
    };
    s.gpus = tp * pp;
    s
}

/// The snapshot cases: (file name, title, scenario).
fn cases() -> Vec<(&'static str, &'static str, Scenario)> {
    let mut dense = scenario("llama-3.1-70b-instruct", "h100-sxm-80gb", 4, 1);
    dense.engine.gpu_memory_utilization = Some(0.9);
    dense.engine.max_model_len = MaxLen::Value(131_072);

    let mut mla = scenario("deepseek-v3", "h200-141gb", 8, 1);
    mla.engine.max_model_len = MaxLen::Value(163_840);
    mla.engine.speculative = Some(Speculative {
        count_assumed: false,
        draft_model: None,
        method: SpecMethod::Mtp("deepseek_mtp"),
        num_speculative_tokens: 1,
        drafter_weights: None,
    });

    let mut swa = scenario("gpt-oss-120b", "h100-sxm-80gb", 1, 1);
    swa.engine.max_model_len = MaxLen::Value(131_072);

    let mut hybrid_pp = scenario("qwen3-next-80b-a3b-instruct", "a100-sxm4-80gb", 2, 2);
    hybrid_pp.engine.max_model_len = MaxLen::Value(65_536);

    // Four stages: the middle ones are shaped alike, so they must plan alike but for their
    // layer indices (planner shortcut), including a linear-attention hybrid pattern.
    let mut dense_pp4 = scenario("llama-3.1-70b-instruct", "h100-sxm-80gb", 2, 4);
    dense_pp4.engine.max_model_len = MaxLen::Value(131_072);
    let mut hybrid_pp4 = scenario("qwen3-next-80b-a3b-instruct", "h100-sxm-80gb", 2, 4);
    hybrid_pp4.engine.max_model_len = MaxLen::Value(65_536);

    vec![
        (
            "llama-3.1-70b-tp2-pp4-h100",
            "Llama-3.1-70B, TP=2 x PP=4 on H100 SXM, 131,072 tokens (four stages)",
            dense_pp4,
        ),
        (
            "qwen3-next-80b-tp2-pp4-h100",
            "Qwen3-Next-80B-A3B, TP=2 x PP=4 on H100 SXM, 65,536 tokens (four hybrid stages)",
            hybrid_pp4,
        ),
        (
            "llama-3.1-70b-tp4-h100",
            "Llama-3.1-70B, TP=4 on H100 SXM, utilization 0.9, 131,072 tokens (dense GQA)",
            dense,
        ),
        (
            "deepseek-v3-tp8-h200-mtp",
            "DeepSeek-V3, TP=8 on H200, MTP drafter, 163,840 tokens (MLA, MoE, FP8 blocks)",
            mla,
        ),
        (
            "gpt-oss-120b-h100",
            "gpt-oss-120b on one H100 SXM, 131,072 tokens (sliding-window hybrid, MXFP4 experts)",
            swa,
        ),
        (
            "qwen3-next-80b-tp2-pp2-a100",
            "Qwen3-Next-80B-A3B, TP=2 x PP=2 on A100 80GB, 65,536 tokens (gated DeltaNet hybrid)",
            hybrid_pp,
        ),
    ]
}

/// The ledger text: every rank's lines (term, bytes, provenance, formula, basis), then the
/// replica, the checks in phase order and vLLM's log lines.
fn render(title: &str, s: &Scenario, p: &Plan) -> String {
    let mut out = String::new();
    let w = &mut out;
    writeln!(w, "# {title}").unwrap();
    writeln!(
        w,
        "# model {:?}, GPU {} ({} B) x {}, TP {} PP {} DP {}, utilization {}, vLLM {}",
        s.model.name,
        s.gpu.id,
        s.gpu.total.0,
        s.gpus,
        p.tp,
        p.pp,
        p.dp,
        p.gpu_memory_utilization,
        p.version
    )
    .unwrap();
    writeln!(w, "# stages {:?}", p.pp_partition).unwrap();
    let mut shown: Vec<(u32, Vec<String>)> = Vec::new();
    for r in &p.ranks {
        let lines: Vec<String> = r
            .ledger
            .iter()
            .map(|l| {
                let mut t = format!(
                    "  {:<18} {:>20}  {:<8}  {}",
                    l.term.key(),
                    thousands_signed(l.bytes),
                    l.provenance.label(),
                    l.formula
                );
                if !l.provenance.basis().is_empty() {
                    write!(
                        t,
                        "\n  {:<18} {:>20}  {:<8}  ({})",
                        "",
                        "",
                        "",
                        l.provenance.basis()
                    )
                    .unwrap();
                }
                t
            })
            .collect();
        writeln!(w).unwrap();
        let head = format!(
            "rank {} (stage {}, tp rank {}, layers {}..{}{}{}{})",
            r.rank,
            r.pp_rank,
            r.tp_rank,
            r.layers.0,
            r.layers.1,
            if r.holds_embedding { ", embedding" } else { "" },
            if r.holds_head { ", head" } else { "" },
            if r.holds_drafter { ", drafter" } else { "" },
        );
        if let Some((same, _)) = shown.iter().find(|(_, l)| *l == lines) {
            writeln!(w, "{head}: the same ledger as rank {same}").unwrap();
            continue;
        }
        writeln!(w, "{head}").unwrap();
        for l in &lines {
            writeln!(w, "{l}").unwrap();
        }
        writeln!(
            w,
            "  kv heads {}, kv bytes/token {}, page {}, bytes/block {}, own blocks {}, free after start {}",
            r.kv_heads,
            r.kv_bytes_per_token,
            r.page_size,
            r.bytes_per_block,
            r.num_blocks_own,
            thousands_signed(r.free_after_start)
        )
        .unwrap();
        shown.push((r.rank, lines));
    }
    writeln!(w).unwrap();
    match &p.replica {
        Some(r) => writeln!(
            w,
            "replica: {} blocks of {} tokens (limiting rank {}), {} blocks per request, {} tokens, concurrency {:.4}, {} full-length requests, {}",
            r.num_blocks, r.block_size, r.limiting_rank, r.blocks_per_request, r.kv_cache_tokens,
            r.max_concurrency, r.full_length_requests, r.provenance.label()
        )
        .unwrap(),
        None => writeln!(w, "replica: none (the engine stops before KV sizing)").unwrap(),
    }
    for c in &p.checks {
        writeln!(
            w,
            "check {:<12} {}  {}",
            c.phase.key(),
            if c.ok { "ok  " } else { "FAIL" },
            c.message
        )
        .unwrap();
    }
    for l in &p.log_lines {
        writeln!(w, "log   {l}").unwrap();
    }
    out
}

#[test]
fn ledger_snapshots() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots");
    let update = std::env::var("HEADROOM_UPDATE_SNAPSHOTS").is_ok_and(|v| v == "1");
    let mut stale = Vec::new();
    for (name, title, s) in cases() {
        let p = plan(&s).unwrap_or_else(|e| panic!("{name}: {e}"));
        let text = render(title, &s, &p);
        let path = dir.join(format!("{name}.txt"));
        let committed = fs::read_to_string(&path).unwrap_or_default();
        if committed != text {
            if update {
                fs::write(&path, &text).unwrap();
            } else {
                let diff = first_difference(&committed, &text);
                stale.push(format!("{}: {diff}", path.display()));
            }
        }
    }
    assert!(
        stale.is_empty(),
        "ledger snapshots differ (review, then HEADROOM_UPDATE_SNAPSHOTS=1 cargo test --no-default-features --test snapshots):\n{}",
        stale.join("\n")
    );
}

/// The first differing line, for the failure message.
fn first_difference(old: &str, new: &str) -> String {
    if old.is_empty() {
        return "missing".into();
    }
    let (mut a, mut b) = (old.lines(), new.lines());
    let mut n = 1;
    loop {
        match (a.next(), b.next()) {
            (Some(x), Some(y)) if x == y => n += 1,
            (x, y) => {
                return format!(
                    "line {n}:\n  committed: {}\n  now:       {}",
                    x.unwrap_or("<end>"),
                    y.unwrap_or("<end>")
                )
            }
        }
    }
}

#[test]
fn snapshot_cases_start() {
    // The snapshots are of engines that start, so they show every line down to the pool.
    for (name, _, s) in cases() {
        let p = plan(&s).unwrap();
        assert!(
            p.starts(),
            "{name}: {:?}",
            p.first_failure().map(|c| &c.message)
        );
    }
}
