//! A `vllm serve` line in and out: for generated scenarios, the command `headroom command`
//! writes, read back with `headroom plan --from-command` (with the flags a command cannot
//! carry, the GPU, the release and measured terms, given on top, as its comment line says),
//! plans exactly what the flags plan: same exit code, same JSON. Also: `import-command`'s
//! JSON keys, stdin, flags on top of a command, and refusals that name the input. Runs
//! `cli::run` in process with a fixed seed, so a failure names a reproducible case.

use headroom::catalog;
use headroom::cli::{run, run_with_stdin, Outcome, EXIT_BAD_INPUT};

mod common;
use common::Rng;

fn strings(xs: &[&str]) -> Vec<String> {
    xs.iter().map(|s| s.to_string()).collect()
}

fn cli(args: &[String]) -> Outcome {
    run(args)
}

/// Generated flags, split into those a vLLM command carries and those only Headroom takes.
fn scenario(r: &mut Rng) -> (Vec<String>, Vec<String>) {
    let models = catalog::models();
    let mut vllm = vec![models[r.below(models.len())].id.clone()];
    let mut own = Vec::new();
    if r.one_in(2) {
        let gpus = catalog::gpus();
        own.push("--gpu".into());
        own.push(gpus[r.below(gpus.len())].gpu.id.clone());
    }
    if r.one_in(3) {
        own.push("--vllm-version".into());
        own.push(r.pick(&["0.14", "0.19", "0.20", "0.26", "0.33"]).into());
    }
    let vllm_flags: &[(&str, &[&str])] = &[
        ("--tensor-parallel-size", &["1", "2", "4", "8"]),
        ("--pipeline-parallel-size", &["1", "2", "3"]),
        ("--data-parallel-size", &["1", "2"]),
        ("--gpus", &["4", "8", "16"]),
        ("--gpu-memory-utilization", &["0.9", "0.85", "0.92", "0.95"]),
        ("--kv-cache-memory-bytes", &["4GiB", "10e9", "20GiB"]),
        ("--max-model-len", &["auto", "4096", "32k", "131072"]),
        ("--max-num-seqs", &["64", "256", "1024"]),
        ("--max-num-batched-tokens", &["2048", "8192", "16k"]),
        ("--kv-cache-dtype", &["auto", "fp8", "fp8_e5m2"]),
        ("--block-size", &["16", "32", "64"]),
        ("--num-gpu-blocks-override", &["1000", "8192"]),
        (
            "--attention-backend",
            &["FLASHINFER", "FLASH_ATTN", "TRITON_ATTN"],
        ),
        (
            "--speculative-config",
            &[
                r#"{"method":"ngram","num_speculative_tokens":4}"#,
                r#"{"method":"eagle","model":"yuhuili/EAGLE-LLaMA3-Instruct-8B"}"#,
                r#"{"method":"draft_model","model":"llama-3.2-1b-instruct","num_speculative_tokens":2}"#,
            ],
        ),
    ];
    for (flag, values) in vllm_flags {
        if r.one_in(4) {
            vllm.push(flag.to_string());
            vllm.push(r.pick(values).to_string());
        }
    }
    if r.one_in(6) {
        vllm.push("--pp-layer-partition".into());
        vllm.push(r.pick(&["10,22", "16,16", "20,20,20"]).into());
    }
    for switch in [
        "--enforce-eager",
        "--enable-expert-parallel",
        "--disable-hybrid-kv-cache-manager",
        "--no-async-scheduling",
    ] {
        if r.one_in(6) {
            vllm.push(switch.into());
        }
    }
    let measured: &[(&str, &str)] = &[
        ("--weights", "16GiB"),
        ("--free-memory", "70GiB"),
        ("--activation-peak", "2GiB"),
        ("--other-tenants", "1GiB"),
        ("--unit", "gb"),
    ];
    for (flag, value) in measured {
        if r.one_in(8) {
            own.push(flag.to_string());
            own.push(value.to_string());
        }
    }
    (vllm, own)
}

#[test]
fn an_exported_command_plans_what_the_flags_plan() {
    let mut r = Rng(0xC0FF_EE15_5EED_0016);
    let (mut exported, mut refused, mut starts) = (0, 0, 0);
    for case in 0..300 {
        let (vllm, own) = scenario(&mut r);
        let mut plan_args = strings(&["plan"]);
        plan_args.extend(vllm.iter().cloned());
        plan_args.extend(own.iter().cloned());
        plan_args.push("--json".into());
        let plan = cli(&plan_args);

        let mut cmd_args = strings(&["command"]);
        cmd_args.extend(vllm.iter().cloned());
        cmd_args.extend(own.iter().cloned());
        let cmd = cli(&cmd_args);
        if cmd.code != 0 {
            // command refuses only bad input, and plan refuses it with the same message.
            assert_eq!(
                cmd.code, EXIT_BAD_INPUT,
                "case {case} {vllm:?} {own:?}: {cmd:?}"
            );
            assert_eq!(
                (plan.code, &plan.stderr),
                (EXIT_BAD_INPUT, &cmd.stderr),
                "case {case} {vllm:?} {own:?}"
            );
            refused += 1;
            continue;
        }
        exported += 1;
        let text = cmd.stdout.clone();
        assert!(text.starts_with("# vLLM "), "case {case}: {text}");
        assert!(text.contains(" vllm serve "), "case {case}: {text}");
        // The flags the command leaves out go on top, as its comment line names them; the
        // text through stdin every other case.
        let mut back_args = strings(&["plan", "--from-command"]);
        let back = if case % 2 == 0 {
            back_args.push(text.clone());
            back_args.extend(own.iter().cloned());
            back_args.push("--json".into());
            cli(&back_args)
        } else {
            back_args.push("-".into());
            back_args.extend(own.iter().cloned());
            back_args.push("--json".into());
            run_with_stdin(&back_args, &mut text.as_bytes())
        };
        assert_eq!(
            back, plan,
            "case {case}: {vllm:?} {own:?}\ncommand:\n{text}"
        );
        if plan.code == 0 {
            starts += 1;
        }
    }
    assert!(exported >= 150, "{exported} exported");
    assert!(refused >= 5, "{refused} refused");
    assert!(starts >= 30, "{starts} start");
}

#[test]
fn the_command_carries_only_what_differs_from_vllms_defaults() {
    let out = cli(&strings(&[
        "command",
        "llama-3.1-70b-instruct",
        "-tp",
        "4",
        "--gpu-memory-utilization",
        "0.92",
        "--pipeline-parallel-size",
        "1",
        "--max-model-len",
        "8192",
        "--weights",
        "33GiB",
    ]));
    assert_eq!(out.code, 0, "{out:?}");
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert!(lines[0].starts_with("# vLLM 0.33 on 4 x "), "{}", lines[0]);
    assert!(
        lines[0].contains("--gpu h100-sxm-80gb --vllm-version 0.33 --weights"),
        "{}",
        lines[0]
    );
    assert_eq!(
        lines[1],
        "CUDA_VISIBLE_DEVICES=0,1,2,3 vllm serve meta-llama/Llama-3.1-70B-Instruct \\"
    );
    assert_eq!(
        &lines[2..],
        ["  --tensor-parallel-size 4 \\", "  --max-model-len 8192"]
    );
}

#[test]
fn import_command_prints_what_it_reads() {
    let text = "export VLLM_PP_LAYER_PARTITION=14,15,14\n\
                docker run --gpus all -e HF_TOKEN=hf_x vllm/vllm-openai:v0.10.1 \\\n  \
                --model Qwen/Qwen3-8B -tp 1 --max_model_len 32K --port 8000 --enable-lora";
    let out = cli(&strings(&["import-command", text, "--json"]));
    assert_eq!(out.code, 0, "{out:?}");
    let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(v["form"], "docker");
    assert_eq!(v["model"], "Qwen/Qwen3-8B");
    assert_eq!(v["vllm_version"], "0.10.1");
    assert_eq!(v["gpus_visible"], serde_json::Value::Null);
    assert_eq!(v["env"]["HF_TOKEN"], "hf_x");
    assert_eq!(v["env"]["VLLM_PP_LAYER_PARTITION"], "14,15,14");
    assert_eq!(v["flags"]["max_model_len"], 32768);
    assert_eq!(v["flags"]["tensor_parallel_size"], 1);
    let ignored: Vec<&str> = v["ignored"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["flag"].as_str().unwrap())
        .collect();
    assert_eq!(ignored, ["--port", "--enable-lora"]);
    // The same from stdin, and as text.
    let out2 = run_with_stdin(
        &strings(&["import-command", "-", "--json"]),
        &mut text.as_bytes(),
    );
    assert_eq!(out2, out);
    let t = cli(&strings(&["import-command", text]));
    assert!(t.stdout.contains("max_model_len"), "{}", t.stdout);
    assert!(
        t.stdout.contains("--enable-lora: not modelled yet"),
        "{}",
        t.stdout
    );
}

#[test]
fn flags_on_top_of_a_command_win() {
    let cmd = "vllm serve meta-llama/Llama-3.1-8B-Instruct --gpu-memory-utilization 0.5 -tp 2";
    let a = cli(&strings(&[
        "plan",
        "--from-command",
        cmd,
        "--gpu-memory-utilization",
        "0.8",
        "--json",
    ]));
    let b = cli(&strings(&[
        "plan",
        "llama-3.1-8b-instruct",
        "-tp",
        "2",
        "--gpu-memory-utilization",
        "0.8",
        "--json",
    ]));
    assert_eq!(a, b);
}

#[test]
fn a_bad_command_names_what_is_wrong() {
    for (args, says) in [
        (&["import-command", "vllm serve 'm"][..], "error: TEXT: command: line 1: a single quote"),
        (&["import-command"][..], "error: TEXT: missing"),
        (&["import-command", "{\"a\": 1}"][..], "config.json"),
        (
            &["plan", "--from-command", "vllm serve org/unknown-model -tp 2"][..],
            "error: --from-command: the command's model \"org/unknown-model\" is not in Headroom's catalog",
        ),
        (
            &["plan", "--from-command", "vllm serve meta-llama/Llama-3.1-8B-Instruct -tp 0"][..],
            "error: --from-command: --tensor-parallel-size: ",
        ),
        (
            &["plan", "--from-command", "vllm serve meta-llama/Llama-3.1-8B-Instruct -tp x"][..],
            "error: --from-command: -tp: invalid int value",
        ),
        (
            &["plan", "--from-command", "VLLM_USE_V1=0 vllm serve meta-llama/Llama-3.1-8B-Instruct"][..],
            "error: --from-command: VLLM_USE_V1: ",
        ),
    ] {
        let out = cli(&strings(args));
        assert_eq!(out.code, EXIT_BAD_INPUT, "{args:?}: {out:?}");
        assert!(out.stderr.contains(says), "{args:?}: {}", out.stderr);
        assert!(out.stdout.is_empty());
    }
    // A huge paste is refused by its size, at once.
    let huge = format!("vllm serve m {}", "--x 1 ".repeat(300_000));
    let out = run_with_stdin(&strings(&["import-command", "-"]), &mut huge.as_bytes());
    assert_eq!(out.code, EXIT_BAD_INPUT);
    assert!(out.stderr.contains("bytes"), "{}", out.stderr);
}
