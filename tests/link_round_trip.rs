//! The terminal and the page hand scenarios to each other: for generated command lines,
//! `headroom plan --url "$(headroom link FLAGS)" --json` prints exactly what
//! `headroom plan FLAGS --json` prints (same exit code, same stdout, same stderr), and a
//! command line `link` refuses is refused by `plan` with the same message. Runs `cli::run` in
//! process with a fixed seed, so a failure names a reproducible case.

use headroom::catalog;
use headroom::cli::{run, Outcome, DEFAULT_BASE, EXIT_BAD_INPUT};

mod common;
use common::Rng;

fn cli(args: &[String]) -> Outcome {
    run(args)
}

/// A flag with a value, in one of the spellings vLLM's parser takes.
fn flag(r: &mut Rng, out: &mut Vec<String>, long: &str, short: Option<&str>, value: &str) {
    match (r.below(4), short) {
        (0, Some(s)) => {
            out.push(s.to_string());
            out.push(value.to_string());
        }
        (1, _) => out.push(format!("--{long}={value}")),
        (2, _) => {
            out.push(format!("--{}", long.replace('-', "_")));
            out.push(value.to_string());
        }
        _ => {
            out.push(format!("--{long}"));
            out.push(value.to_string());
        }
    }
}

/// One generated command line (without the command): a model or an example, then any of the
/// scenario's flags with values that plan, fail a check, or are refused.
fn scenario_flags(r: &mut Rng) -> Vec<String> {
    let mut a = Vec::new();
    let models = catalog::models();
    if r.one_in(5) {
        let e = &catalog::examples::INFO[r.below(catalog::examples::INFO.len())];
        a.push("--example".to_string());
        a.push(e.id.to_string());
        if r.one_in(3) {
            a.push(models[r.below(models.len())].id.clone());
        }
    } else {
        a.push(models[r.below(models.len())].id.clone());
    }
    if r.one_in(2) {
        let gpus = catalog::gpus();
        let id = &gpus[r.below(gpus.len())].gpu.id;
        flag(r, &mut a, "gpu", None, id);
    }
    if r.one_in(8) {
        let v = r.pick(&["80GB", "85029158912", "40GiB"]);
        flag(r, &mut a, "gpu-memory", None, v);
    }
    let choices: &[(&str, Option<&str>, &[&str])] = &[
        (
            "tensor-parallel-size",
            Some("-tp"),
            &["1", "2", "4", "8", "3"],
        ),
        ("pipeline-parallel-size", Some("-pp"), &["1", "2", "4"]),
        ("data-parallel-size", Some("-dp"), &["1", "2"]),
        ("gpus", None, &["1", "4", "8", "16"]),
        (
            "gpu-memory-utilization",
            None,
            &["0.9", "0.85", "0.95", "1", "0.5"],
        ),
        (
            "kv-cache-memory-bytes",
            None,
            &["4GiB", "10e9", "20GiB", "1,073,741,824"],
        ),
        (
            "max-model-len",
            None,
            &["auto", "4096", "32k", "-1", "131072", "128K"],
        ),
        ("max-num-seqs", None, &["64", "256", "1024", "2000000"]),
        (
            "max-num-batched-tokens",
            None,
            &["2048", "8192", "16k", "2000000"],
        ),
        (
            "kv-cache-dtype",
            None,
            &["auto", "fp8", "bfloat16", "fp8_e5m2"],
        ),
        ("block-size", None, &["16", "32", "64"]),
        ("num-gpu-blocks-override", None, &["1000", "8192"]),
        (
            "attention-backend",
            None,
            &["auto", "FLASHINFER", "FLASH_ATTN", "TRITON_ATTN"],
        ),
        ("vllm-version", None, &["0.14", "0.19.1", "0.33", "v0.20.0"]),
        ("weights", None, &["16GiB", "16GiB,17GiB", "15.5GiB,-"]),
        ("available-kv", None, &["20GiB", "30GiB,-"]),
        ("free-memory", None, &["70GiB", "78GiB"]),
        ("activation-peak", None, &["2GiB", "1.5GB"]),
        ("non-torch", None, &["1GiB"]),
        ("cuda-graph", None, &["0.5GiB", "512MiB"]),
        ("load-peak", None, &["3GiB"]),
        ("other-tenants", None, &["1GiB", "0"]),
        ("average-request-len", None, &["1000", "4k"]),
        ("unit", None, &["gib", "gb"]),
    ];
    for (long, short, values) in choices {
        if r.one_in(5) {
            let v = r.pick(values);
            flag(r, &mut a, long, *short, v);
        }
    }
    for switch in [
        "enforce-eager",
        "enable-expert-parallel",
        "disable-hybrid-kv-cache-manager",
        "no-async-scheduling",
    ] {
        match r.below(8) {
            0 => a.push(format!("--{switch}")),
            1 => a.push(format!("--{switch}=false")),
            _ => {}
        }
    }
    // The unified-memory gate: its terms mostly with mem-available, sometimes alone (refused).
    let gate = r.one_in(4);
    if gate {
        let m = r.pick(&["100GiB", "60GiB"]);
        flag(r, &mut a, "mem-available", None, m);
    }
    for (long, value) in [
        ("headroom", "4GiB"),
        ("guard-threshold", "6GiB"),
        ("overhead", "3GiB"),
    ] {
        if (gate && r.one_in(2)) || r.one_in(30) {
            flag(r, &mut a, long, None, value);
        }
    }
    let spec = r.one_in(4);
    if spec {
        let spec = r.pick(&[
            r#"{"method":"mtp","num_speculative_tokens":1}"#,
            r#"{"method":"deepseek_mtp","num_speculative_tokens":2}"#,
            r#"{"method":"eagle","model":"yuhuili/EAGLE-LLaMA3-Instruct-8B"}"#,
            r#"{"method":"eagle3","model":"x","num_speculative_tokens":3}"#,
            r#"{"method":"ngram","num_speculative_tokens":4,"prompt_lookup_max":4}"#,
            r#"{"method":"draft_model","model":"llama-3.2-1b-instruct","num_speculative_tokens":2}"#,
            "null",
        ]);
        flag(r, &mut a, "speculative-config", None, spec);
    }
    if (spec && r.one_in(2)) || r.one_in(30) {
        flag(r, &mut a, "drafter-weights", None, "1GiB");
    }
    a
}

fn strings(xs: &[&str]) -> Vec<String> {
    xs.iter().map(|s| s.to_string()).collect()
}

#[test]
fn a_link_plans_what_the_flags_plan() {
    let mut r = Rng(0x5EED_1AB5_0F15_0015);
    let (mut linked, mut refused, mut starts) = (0, 0, 0);
    // 450 cases: with 42 models and 29 GPUs (small cards and 400B models among them), about
    // one in ten draws starts.
    for case in 0..450 {
        let flags = scenario_flags(&mut r);
        let mut plan_args = strings(&["plan"]);
        plan_args.extend(flags.iter().cloned());
        plan_args.push("--json".into());
        let plan = cli(&plan_args);

        let mut link_args = strings(&["link"]);
        link_args.extend(flags.iter().cloned());
        let link = cli(&link_args);
        if link.code != 0 {
            // link refuses only bad input, and plan refuses it with the same message.
            assert_eq!(link.code, EXIT_BAD_INPUT, "case {case} {flags:?}: {link:?}");
            assert_eq!(
                (plan.code, &plan.stderr),
                (EXIT_BAD_INPUT, &link.stderr),
                "case {case} {flags:?}"
            );
            refused += 1;
            continue;
        }
        linked += 1;
        let url = link.stdout.trim_end();
        assert!(url.starts_with(DEFAULT_BASE), "case {case}: {url}");
        assert!(link.stdout.ends_with('\n') && !url.contains('\n'));
        // The whole URL, or (every other case) only its query, as the page's address bar has it.
        let given = if case % 2 == 0 {
            url.to_string()
        } else {
            url[url.find('?').unwrap()..].to_string()
        };
        let back = cli(&strings(&["plan", "--url", &given, "--json"]));
        assert_eq!(back, plan, "case {case}: {flags:?}\nlink {given}");
        if plan.code == 0 {
            starts += 1;
        }
    }
    // The generator reaches every outcome: plans that start, links written, inputs refused.
    assert!(linked >= 150, "{linked} linked");
    assert!(refused >= 5, "{refused} refused");
    assert!(starts >= 30, "{starts} start");
}

#[test]
fn link_takes_a_base_and_refuses_what_a_link_cannot_hold() {
    let out = cli(&strings(&[
        "link",
        "llama-3.1-8b-instruct",
        "-tp",
        "2",
        "--base",
        "https://example.org/headroom/?old=1#x",
    ]));
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(
        out.stdout,
        "https://example.org/headroom/?v=1&model=llama-3.1-8b-instruct&tp=2\n"
    );
    for (args, flag) in [
        (&["link"][..], "error: MODEL: "),
        (
            &["link", "llama-3.1-8b-instruct", "--json"],
            "error: --json: ",
        ),
        (
            &["link", "llama-3.1-8b-instruct", "-tp", "0"],
            "error: --tensor-parallel-size: ",
        ),
        (
            &["link", "llama-3.1-8b-instruct", "--base", ""],
            "error: --base: ",
        ),
        (
            &["link", "llama-3.1-8b-instruct", "--for", "kv-pin"],
            "error: --for: ",
        ),
        (
            &["plan", "llama-3.1-8b-instruct", "--base", "x"],
            "error: --base: ",
        ),
        (
            &["solve", "llama-3.1-8b-instruct", "--url", "?tp=2"],
            "error: --url: ",
        ),
    ] {
        let out = cli(&strings(args));
        assert_eq!(out.code, EXIT_BAD_INPUT, "{args:?}: {out:?}");
        assert!(out.stderr.starts_with(flag), "{args:?}: {}", out.stderr);
        assert!(out.stdout.is_empty());
    }
}

#[test]
fn plan_url_names_the_input_at_fault() {
    for (url, says) in [
        ("?v=1&tp=0", "--url: tp: "),
        ("?v=1&bogus=1", "--url: bogus: unknown parameter"),
        ("?v=2&tp=2", "--url: v: format version 2"),
        ("?tp=2&tp=4", "--url: tp: repeated"),
        ("http://127.0.0.1:8080/?headroom=4GiB", "--url: headroom: "),
        ("?model=no-such-model", "--url: model: "),
        ("", "--url: needs"),
    ] {
        let out = cli(&strings(&["plan", "--url", url]));
        assert_eq!(out.code, EXIT_BAD_INPUT, "{url}: {out:?}");
        assert!(out.stderr.contains(says), "{url}: {}", out.stderr);
    }
    // A link is the whole scenario: flags beside it are refused, not merged.
    let out = cli(&strings(&["plan", "--url", "?tp=2", "-tp", "4"]));
    assert_eq!(out.code, EXIT_BAD_INPUT);
    assert!(
        out.stderr.contains("--tensor-parallel-size"),
        "{}",
        out.stderr
    );
    // A bare query and a whole URL plan the same; no parameters is the page's default.
    let a = cli(&strings(&["plan", "--url", "?v=1&tp=2&gpus=2", "--json"]));
    let b = cli(&strings(&[
        "plan",
        "--url",
        "http://127.0.0.1:8080/?v=1&tp=2&gpus=2",
        "--json",
    ]));
    assert_eq!(a.code, 0, "{a:?}");
    assert_eq!(a, b);
    let d = cli(&strings(&["plan", "--url", "?v=1", "--json"]));
    let flags = cli(&strings(&["plan", "llama-3.1-8b-instruct", "--json"]));
    assert_eq!(d, flags);
}

#[test]
fn the_page_address_alone_plans_the_default_page() {
    // The page opened without a query plans its default model on its default GPU.
    let default = cli(&strings(&[
        "plan",
        headroom::input::values::DEFAULT_MODEL,
        "--json",
    ]));
    for url in [
        "http://127.0.0.1:8080/",
        "https://example.org/headroom/",
        "?",
        "?v=1",
    ] {
        let out = cli(&strings(&["plan", "--url", url, "--json"]));
        assert_eq!(out, default, "{url}");
    }
}
