//! The project's own fuzz harness (issue 19, item 20): every text input Headroom reads (the
//! page's link, a config.json, the CLI's arguments, a launch command, a startup log, a pasted
//! error) gets generated inputs, mutations of real ones, and must give an answer or a message:
//! no panic, no input that takes a second, no output that outgrows what was given.
//!
//! The default test command runs a short deterministic slice (2,000 inputs per target). The
//! full run is outside it:
//!
//! ```sh
//! FUZZ_CASES=1000000 cargo test --release --no-default-features --test fuzz -- --ignored --nocapture
//! ```
//!
//! (`FUZZ_SEED` picks another sequence; a failure prints its seed, case and input.)

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::{Duration, Instant};

/// SplitMix64: deterministic, so a failure reproduces from its seed and case.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.below(xs.len())]
    }
}

/// Pieces that tend to break parsers: numbers at and past the bounds, units, separators,
/// escapes, quotes, brackets, non-ASCII text, keys of every input.
const TOKENS: &[&str] = &[
    "0",
    "1",
    "-1",
    "4294967295",
    "4294967296",
    "18446744073709551615",
    "1e308",
    "NaN",
    "inf",
    "0.92",
    "1.5",
    "128k",
    "128K",
    "1,024",
    "79.29GiB",
    "10e9",
    "9G",
    "%",
    "%zz",
    "%00",
    "&",
    "=",
    "#",
    "?",
    "v=1",
    "b.",
    "b.tp=",
    "tp=",
    "pp=",
    "util=",
    "config=",
    "example=",
    "step=",
    "model=",
    "gpu=",
    "kv-bytes=",
    "pp-partition=",
    "{",
    "}",
    "[",
    "]",
    "\"",
    "'",
    "\\",
    ",",
    ";",
    ":",
    " ",
    "\n",
    "\t",
    "é",
    "😀",
    "\u{202e}",
    "\u{0}",
    "--",
    "-tp",
    "--tensor-parallel-size",
    "--max-model-len",
    "--kv-cache-memory-bytes",
    "--speculative-config",
    "--url",
    "--json",
    "plan",
    "solve",
    "--for",
    "kv-pin",
    "utilization:4",
    "pp-partition:3.6",
    "auto",
    "llama-3.1-8b-instruct",
    "deepseek-v4-flash",
    "s1-three-cards",
    "h100-sxm-80gb",
    "fp8",
    "null",
    "true",
    "false",
    "num_hidden_layers",
    "\"hidden_size\":",
    "\"layer_types\":[",
    "ValueError:",
    "CUDA out of memory",
    "Available KV cache memory: ",
    "GiB",
    "non-default args: {",
];

/// A mutation of `seed`: a few random edits (insert a token, delete a span, repeat a span,
/// replace a byte), kept at char boundaries.
fn mutate(rng: &mut Rng, seed: &str) -> String {
    let mut s = seed.to_string();
    for _ in 0..1 + rng.below(6) {
        let at = |rng: &mut Rng, s: &str| {
            let mut i = rng.below(s.len() + 1);
            while !s.is_char_boundary(i) {
                i -= 1;
            }
            i
        };
        match rng.below(5) {
            0 | 1 => {
                let i = at(rng, &s);
                let t = rng.pick(TOKENS);
                s.insert_str(i, t);
            }
            2 if !s.is_empty() => {
                let (a, b) = (at(rng, &s), at(rng, &s));
                let (a, b) = (a.min(b), a.max(b));
                s.replace_range(a..b, "");
            }
            3 if !s.is_empty() && s.len() < 200_000 => {
                let (a, b) = (at(rng, &s), at(rng, &s));
                let (a, b) = (a.min(b), a.max(b));
                let piece = s[a..b].repeat(1 + rng.below(4));
                s.insert_str(b, &piece);
            }
            _ => {
                let i = at(rng, &s);
                let t = rng.pick(TOKENS);
                s.insert_str(i, &t.repeat(1 + rng.below(64)));
            }
        }
    }
    s
}

/// Runs `f` on `input`: no panic, done within a second, the output at most linear in the input
/// (`out` bytes returned by `f`, against 64 KiB + 64 x the input).
fn check(target: &str, seed: u64, case: u64, input: &str, f: &dyn Fn(&str) -> usize) {
    let t = Instant::now();
    let out = catch_unwind(AssertUnwindSafe(|| f(input)));
    let took = t.elapsed();
    let show = || {
        let mut s: String = input.chars().take(300).collect();
        if s.len() < input.len() {
            s.push_str(&format!("... ({} bytes)", input.len()));
        }
        s
    };
    // The panic hook is quiet while inputs run: a failure prints itself before it panics.
    let fail = |why: String| -> ! {
        eprintln!("{why}");
        panic!("{why}");
    };
    match out {
        Err(_) => fail(format!(
            "{target}: seed {seed} case {case} panicked on {:?}",
            show()
        )),
        Ok(n) => {
            if took >= Duration::from_secs(1) {
                fail(format!(
                    "{target}: seed {seed} case {case} took {took:?} on {:?}",
                    show()
                ));
            }
            if n > 64 * 1024 + 64 * input.len() {
                fail(format!(
                    "{target}: seed {seed} case {case}: {n} bytes of output for {} of input: {:?}",
                    input.len(),
                    show()
                ));
            }
        }
    }
}

fn fixtures(dir: &str) -> Vec<String> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(dir);
    let mut v: Vec<String> = std::fs::read_dir(&path)
        .map(|d| {
            d.filter_map(|e| std::fs::read_to_string(e.ok()?.path()).ok())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// The seeds of each target, and what it runs.
/// A target: its name, its seed inputs, and what it runs (returning the bytes it wrote).
type Target = (&'static str, Vec<String>, Box<dyn Fn(&str) -> usize>);

fn targets() -> Vec<Target> {
    use headroom::calc;
    let links = vec![
        "?v=1".to_string(),
        "?v=1&model=llama-3.1-70b-instruct&tp=4&gpu=h100-sxm-80gb&max-model-len=16384".into(),
        "?v=1&example=s1-three-cards&util=0.85&b.util=0.90&step=1".into(),
        "?v=1&example=s2-unified-gate&kv-bytes=16e9".into(),
        "?v=1&model=deepseek-v4-flash&pp=2&pp-partition=21,22&spec=mtp&spec-tokens=2".into(),
    ];
    // The catalog's config.json objects, as pasted.
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("catalog/models");
    let mut configs: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| {
            let text = std::fs::read_to_string(e.ok()?.path()).ok()?;
            let v: serde_json::Value = serde_json::from_str(&text).ok()?;
            serde_json::to_string_pretty(v.get("config")?).ok()
        })
        .collect();
    // And the corpus's configs whose layers differ (hybrid Mamba patterns, NAS block_configs,
    // Mamba LMs, vision towers), read with Headroom's own reader (they carry Python's
    // Infinity, which serde_json refuses).
    let corpus = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/weights");
    for name in [
        "nvidia-nvidia-nemotron-3-super-120b-a12b-fp8.json",
        "nvidia-nvidia-nemotron-3-ultra-550b-a55b-bf16.json",
        "nvidia-llama-3_3-nemotron-super-49b-v1.json",
        "state-spaces-mamba-2.8b-hf.json",
        "llava-hf-llava-1.5-7b-hf.json",
        "meta-llama-llama-4-scout-17b-16e-instruct.json",
    ] {
        let text = std::fs::read_to_string(corpus.join(name)).unwrap();
        let v = headroom::catalog::json::parse(&text).unwrap();
        configs.push(v.get("config").unwrap().to_string());
    }
    configs.sort();
    // A plan's size follows its grid, which is bounded, not the text: what must stay linear in
    // the input are the messages that quote it.
    let plan_len = |s: &calc::Scenario| calc::plan(s).map_or_else(|e| e.to_string().len(), |_| 0);
    vec![
        (
            "link",
            links,
            Box::new(move |t: &str| {
                let d = headroom::input::query::decode(t);
                let n = d.ignored.iter().map(|i| i.reason.len() + i.key.len()).sum::<usize>();
                n + headroom::input::scenario(&d.state).map_or(0, |s| plan_len(&s))
            }),
        ),
        (
            "config",
            configs,
            Box::new(move |t: &str| match headroom::catalog::parse_config_json(t) {
                Ok(m) => {
                    let g = headroom::catalog::gpu("h100-sxm-80gb").unwrap().gpu.clone();
                    plan_len(&calc::Scenario::new(m, g))
                }
                Err(e) => e.message.len(),
            }),
        ),
        (
            "cli",
            vec![
                "plan llama-3.1-8b-instruct -tp 1 --max-model-len 8192".into(),
                "solve deepseek-r1 -tp 4 -pp 2 --gpu h200-141gb --for kv-pin".into(),
                "plan --example s1-three-cards --gpu-memory-utilization 0.95 --json".into(),
                "link llama-3.1-70b-instruct -tp 4".into(),
            ],
            Box::new(|t: &str| {
                let args: Vec<String> = t.split(' ').map(str::to_string).collect();
                // Only the catalog and the page's inputs: a path argument would read files.
                if args.iter().any(|a| a.contains('/') || a.starts_with('.')) {
                    return 0;
                }
                let o = headroom::cli::run(&args);
                // The text plan prints every distinct rank; its length follows the grid.
                o.stdout.len().min(64 * 1024) + o.stderr.len()
            }),
        ),
        (
            "command",
            fixtures("commands"),
            Box::new(|t: &str| match headroom::import::command::import(t) {
                Ok(c) => c.notes.iter().map(String::len).sum(),
                Err(e) => e.to_string().len(),
            }),
        ),
        (
            "log",
            fixtures("logs"),
            Box::new(|t: &str| match headroom::import::log::read(t) {
                Ok(l) => l.notes.iter().map(String::len).sum::<usize>() + l.conflicts.iter().map(String::len).sum::<usize>(),
                Err(e) => e.0.len(),
            }),
        ),
        (
            "error text",
            vec![
                "ValueError: No available memory for the cache blocks.".into(),
                "File \"x.py\", in capture_model\ntorch.OutOfMemoryError: CUDA out of memory.".into(),
                "ValueError: To serve at least one request with the models's max seq len (262144), (24.0 GiB KV cache is needed".into(),
            ],
            Box::new(|t: &str| match headroom::diagnose::recognise(t) {
                Ok(s) => s.label().len(),
                Err(e) => e.len(),
            }),
        ),
    ]
}

fn run(cases: u64) {
    let seed: u64 = std::env::var("FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20);
    let quiet = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    for (name, seeds, f) in targets() {
        assert!(!seeds.is_empty(), "{name}: no seeds");
        let mut rng = Rng(seed ^ name.len() as u64);
        let t = Instant::now();
        for case in 0..cases {
            let base = &seeds[rng.below(seeds.len())];
            let input = mutate(&mut rng, base);
            check(name, seed, case, &input, f.as_ref());
        }
        eprintln!(
            "{name}: {cases} inputs in {:.1} s",
            t.elapsed().as_secs_f64()
        );
    }
    std::panic::set_hook(quiet);
}

/// The slice the default test command runs.
#[test]
fn a_deterministic_slice_of_every_target() {
    run(2_000);
}

/// The full run: `FUZZ_CASES` inputs per target (a million by default).
#[test]
#[ignore]
fn a_million_inputs_per_target() {
    let cases = std::env::var("FUZZ_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000);
    run(cases);
}
