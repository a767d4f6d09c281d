//! A vLLM startup log, read line by line: every line Headroom knows, in the wording of each
//! release (the V0 engine's `Memory profiling` terms and `# GPU blocks`, the V1 engine's
//! `Model loading took`, `Available KV cache memory`, `GPU KV cache size`, `Maximum
//! concurrency`, the CUDA-graph lines, the init and capacity errors, `non-default args`), with
//! the rank each came from (`(Worker_PP1_TP0 pid=...)`, `(VllmWorker rank=0 pid=...)`).
//! Each reading keeps the number and unit as printed, and the line it came from. ANSI colours,
//! carriage returns (progress bars) and compose prefixes (`svc  | `) are set aside first.
//!
//! ```
//! use headroom::import::log::read;
//! let l = read("(EngineCore_DP0 pid=7) INFO 10-03 16:22:17 [gpu_worker.py:298] Available KV cache memory: 6.51 GiB\n\
//!     (EngineCore_DP0 pid=7) INFO 10-03 16:22:17 [kv_cache_utils.py:864] GPU KV cache size: 42,656 tokens").unwrap();
//! assert_eq!(l.readings[0].key, "available_kv_cache");
//! assert_eq!((l.readings[0].value, l.readings[0].unit), (6.51, "GiB"));
//! assert_eq!(l.readings[1].value, 42_656.0);
//! assert_eq!(l.readings[1].rank.as_deref(), Some("EngineCore_DP0"));
//! ```

use crate::calc::decimal::parse_f64;
use crate::calc::input::Input;
use crate::calc::units::GIB;

/// The longest log read (bytes): a startup log is tens of KiB; a long one a few MiB.
pub const MAX_LOG: usize = 16 << 20;

/// One figure read from the log, as printed.
#[derive(Clone, Debug, PartialEq)]
pub struct Reading {
    /// `available_kv_cache`, `gpu_kv_cache_tokens`, `max_concurrency`, `model_loading`,
    /// `num_gpu_blocks`, `num_cpu_blocks`, `cuda_graph_estimate`, `cuda_graph_actual`,
    /// `capacity_error`, `init_error`, `v0_capacity_error`, `memory_profiling`.
    pub key: &'static str,
    /// The number as printed (`26.87`; `251584` for `251,584`).
    pub value: f64,
    /// The unit as printed: `GiB`, `GB`, `tokens`, `blocks`, `x`, `s`.
    pub unit: &'static str,
    /// The line (1-based) in the text given.
    pub line: usize,
    /// The process prefix of the line (`Worker_PP1_TP0`, `VllmWorker rank=0`), when it has one.
    pub rank: Option<String>,
    /// The reading's other printed figures: `tokens_per_request` for `max_concurrency`;
    /// `max_seq_len`, `needed`, `available`, `estimated_max_model_len` for `capacity_error`;
    /// `free`, `total`, `requested`, `utilization` for `init_error`; `max_seq_len`, `kv_tokens`
    /// for `v0_capacity_error`; each printed term for `memory_profiling`.
    pub fields: Vec<(&'static str, f64)>,
}

impl Reading {
    pub fn field(&self, name: &str) -> Option<f64> {
        self.fields
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| *v)
    }

    /// The figure in bytes, for a reading in GiB (vLLM's `GiB`, and the V0 engine's `GB`,
    /// which it prints from bytes / 2^30).
    pub fn bytes(&self) -> Option<u64> {
        matches!(self.unit, "GiB" | "GB").then(|| (self.value * GIB as f64).round() as u64)
    }
}

/// What a log says.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Log {
    /// The release, `0.x.y`, when the log states it (formats only bound it: `version_basis`).
    pub vllm_version: Option<String>,
    /// How the release was found: `stated by the log (line N)`, or what the formats suggest
    /// (a lower and an upper bound), or why not. Only a stated release sets `vllm_version`.
    pub version_basis: String,
    pub readings: Vec<Reading>,
    /// `non-default args: {...}`: vLLM's destination names and their values as printed (a
    /// Python literal), with the line.
    pub non_default_args: Vec<(String, String)>,
    pub non_default_args_line: Option<usize>,
    /// Readings that contradict each other (two launches pasted together), flagged, never
    /// averaged.
    pub conflicts: Vec<String>,
    pub notes: Vec<String>,
}

/// A log Headroom cannot read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogError(pub String);

impl std::fmt::Display for LogError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for LogError {}

/// The line without ANSI escapes.
fn strip_ansi(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            if chars.peek() == Some(&'[') {
                chars.next();
                // Parameters, then one final byte in @..~.
                for d in chars.by_ref() {
                    if ('@'..='~').contains(&d) {
                        break;
                    }
                }
            }
            continue;
        }
        out.push(c);
    }
    out
}

/// The process prefix and the message: `(Worker_TP1 pid=448) INFO 08-14 14:07:20 [f.py:1] msg`
/// gives `Some("Worker_TP1")` and `msg`; a compose prefix `svc  | ` goes first.
fn split_line(line: &str) -> (Option<String>, &str) {
    let mut l = line.trim_start();
    if let Some((head, rest)) = l.split_once(" | ") {
        if !head.contains(' ')
            || head
                .trim_end()
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
        {
            l = rest.trim_start();
        }
    }
    let mut rank = None;
    if l.starts_with('(') {
        if let Some(end) = l.find(')') {
            let inside = &l[1..end];
            if inside.contains("pid=") {
                let label = inside
                    .split(" pid=")
                    .next()
                    .unwrap_or(inside)
                    .trim_end_matches(',')
                    .trim();
                rank = Some(label.to_string());
                l = l[end + 1..].trim_start();
            }
        }
    }
    // `INFO 07-24 03:57:18 file.py:141] msg` (V0) or `INFO 04-29 01:07:40 [file.py:458] msg`.
    for level in ["INFO", "WARNING", "ERROR", "DEBUG", "CRITICAL"] {
        if let Some(rest) = l.strip_prefix(level) {
            if let Some(i) = rest.find("] ") {
                if i < 80 {
                    return (rank, &rest[i + 2..]);
                }
            }
        }
    }
    (rank, l)
}

/// The first number in `s` after `after`, with the text that follows it: `1,234.5` is 1234.5.
fn number_after<'a>(s: &'a str, after: &str) -> Option<(f64, &'a str)> {
    let i = s.find(after)? + after.len();
    number_at(&s[i..])
}

/// How many decimals the number printed after `after` has.
fn decimals_after(s: &str, after: &str) -> Option<usize> {
    let i = s.find(after)? + after.len();
    let t = s[i..].trim_start();
    let num: String = t
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    let num = num.trim_end_matches('.');
    Some(num.split_once('.').map_or(0, |(_, d)| d.len()))
}

/// A number at the start of `s` (blanks first), with the rest.
fn number_at(s: &str) -> Option<(f64, &str)> {
    let t = s.trim_start();
    let end = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == ','))
        .unwrap_or(t.len());
    let digits: String = t[..end].trim_end_matches(['.', ',']).replace(',', "");
    if digits.is_empty() {
        return None;
    }
    let consumed = t[..end].trim_end_matches(['.', ',']).len();
    Some((parse_f64(&digits)?, &t[consumed..]))
}

/// `GiB` or `GB` right after a number (blanks allowed).
fn unit_of(rest: &str) -> Option<&'static str> {
    let r = rest.trim_start();
    if r.starts_with("GiB") {
        Some("GiB")
    } else if r.starts_with("GB") {
        Some("GB")
    } else {
        None
    }
}

/// Reads a log.
pub fn read(text: &str) -> Result<Log, LogError> {
    if text.len() > MAX_LOG {
        return Err(LogError(format!(
            "the log is over {MAX_LOG} bytes (16 MiB), the most Headroom reads: paste the start-up, up to the first request"
        )));
    }
    let mut log = Log::default();
    let mut stated: Option<(String, usize)> = None;
    let mut clues: Vec<(String, &'static str, usize)> = Vec::new();
    // Formats a later release changed: each bounds the release from above.
    let mut before: Vec<(String, &'static str, usize)> = Vec::new();
    let mut profiling: Option<usize> = None;
    for (n, raw) in text.split('\n').enumerate() {
        let line_no = n + 1;
        // A progress bar rewrites its line with carriage returns: the last state counts.
        let raw = raw
            .rsplit('\r')
            .find(|s| !s.trim().is_empty())
            .unwrap_or("");
        let clean = strip_ansi(raw);
        let (rank, msg) = split_line(&clean);
        let msg = msg.trim_end();
        macro_rules! push {
            ($key:expr, $value:expr, $unit:expr, $fields:expr $(,)?) => {
                log.readings.push(Reading {
                    key: $key,
                    value: $value,
                    unit: $unit,
                    line: line_no,
                    rank: rank.clone(),
                    fields: $fields,
                })
            };
        }
        if let Some(i) = msg.find("vLLM API server version ") {
            let v = msg[i + 24..].split_whitespace().next().unwrap_or("");
            if let Some(r) = super::command::release_of_tag(v) {
                stated.get_or_insert((r, line_no));
            }
        }
        for marker in [
            "Initializing a V0 LLM engine (v",
            "Initializing a V1 LLM engine (v",
            "Initializing an LLM engine (v",
        ] {
            if let Some(i) = msg.find(marker) {
                let v = msg[i + marker.len()..].split(')').next().unwrap_or("");
                if let Some(r) = super::command::release_of_tag(v) {
                    stated.get_or_insert((r, line_no));
                }
            }
        }
        if let Some(i) = msg.find("non-default args: ") {
            log.non_default_args = python_dict(&msg[i + 18..]);
            log.non_default_args_line = Some(line_no);
            if !msg.trim_end().ends_with('}') {
                log.notes.push(format!(
                    "Line {line_no}: the non-default args are cut off; Headroom read the complete ones ({}).",
                    log.non_default_args.len()
                ));
            }
            continue;
        }
        // V1: "Model loading took 14.2474 GiB and 558.87 seconds" (also "... GiB memory and");
        // V0 and early V1: "Loading model weights took 13.4966 GB" (bytes / 2^30).
        for marker in ["Model loading took ", "Loading model weights took "] {
            if let Some((v, rest)) = number_after(msg, marker) {
                if let Some(u) = unit_of(rest) {
                    push!("model_loading", v, u, Vec::new());
                    // 0.14 prints format_gib (at most two decimals); before, "%.4f".
                    if decimals_after(msg, marker) == Some(4) {
                        before.push((
                            "a \"Model loading took\" figure with four decimals".into(),
                            "0.13",
                            line_no,
                        ));
                    }
                    if marker.starts_with("Loading") {
                        clues.push((
                            "a V0-era \"Loading model weights took\" line".into(),
                            "0.7",
                            line_no,
                        ));
                    }
                }
            }
        }
        if let Some((v, rest)) = number_after(msg, "Available KV cache memory: ") {
            if let Some(u) = unit_of(rest) {
                push!("available_kv_cache", v, u, Vec::new());
                // "%.2f" keeps a trailing zero (43.60) before 0.14; format_gib drops it (43.6).
                let printed = msg
                    .split("Available KV cache memory: ")
                    .nth(1)
                    .and_then(|t| t.split_whitespace().next())
                    .unwrap_or("");
                if decimals_after(msg, "Available KV cache memory: ") == Some(2)
                    && printed.ends_with('0')
                {
                    before.push((
                        "an \"Available KV cache memory\" figure with a trailing zero (%.2f)"
                            .into(),
                        "0.13",
                        line_no,
                    ));
                } else if decimals_after(msg, "Available KV cache memory: ") == Some(1) {
                    // format_gib's "54.0" and "54.2" alike: one decimal is 0.14's.
                    clues.push((
                        "an \"Available KV cache memory\" figure with one decimal (format_gib)"
                            .into(),
                        "0.14",
                        line_no,
                    ));
                }
            }
        }
        if let Some((v, _)) = number_after(msg, "GPU KV cache size: ") {
            push!("gpu_kv_cache_tokens", v, "tokens", Vec::new());
        }
        if let Some((tokens, rest)) = number_after(msg, "Maximum concurrency for ") {
            if let Some((x, _)) = number_after(rest, "per request: ") {
                push!(
                    "max_concurrency",
                    x,
                    "x",
                    vec![("tokens_per_request", tokens)],
                );
            }
        }
        // "# GPU blocks", "# CUDA blocks" or "# cuda blocks": V0's executor names the device
        // as the release spells it (fixtures logs/01, 05 and 07).
        for marker in ["# GPU blocks: ", "# CUDA blocks: ", "# cuda blocks: "] {
            if let Some((g, rest)) = number_after(msg, marker) {
                push!("num_gpu_blocks", g, "blocks", Vec::new());
                if let Some((c, _)) = number_after(rest, "# CPU blocks: ") {
                    push!("num_cpu_blocks", c, "blocks", Vec::new());
                }
            }
        }
        if let Some((v, rest)) = number_after(msg, "Estimated CUDA graph memory: ") {
            if let Some(u) = unit_of(rest) {
                push!("cuda_graph_estimate", v, u, Vec::new());
                clues.push((
                    "the \"Estimated CUDA graph memory\" line (vLLM 0.18 and later)".into(),
                    "0.18",
                    line_no,
                ));
            }
        }
        if msg.contains("CUDA graph memory profiling is enabled (default since") {
            clues.push((
                "the CUDA-graph profiling default note (vLLM 0.20 and later)".into(),
                "0.20",
                line_no,
            ));
        }
        if let Some((v, rest)) = number_after(msg, "CUDA graph pool memory: ") {
            if let Some(u) = unit_of(rest) {
                push!("cuda_graph_actual", v, u, Vec::new());
            }
        }
        if let Some(i) = msg.find("Graph capturing finished") {
            if let Some((v, rest)) = number_after(&msg[i..], ", took ") {
                if let Some(u) = unit_of(rest) {
                    push!("cuda_graph_actual", v, u, Vec::new());
                }
            }
        }
        // "Free memory on device (7.34/139.72 GiB) on startup is less than desired GPU memory
        // utilization (0.9, 125.75 GiB)."
        // 0.14 names the device ("on device cuda:0 ("); before, none.
        let free_at = msg.find("Free memory on device ").map(|i| &msg[i + 22..]);
        let device_named = free_at.is_some_and(|t| !t.starts_with('('));
        if free_at.is_some_and(|t| t.contains("on startup is less than")) {
            if device_named {
                clues.push(("the init error naming its device".into(), "0.14", line_no));
            } else {
                before.push(("the init error naming no device".into(), "0.13", line_no));
            }
        }
        let free_msg = free_at
            .and_then(|t| t.find('(').map(|i| &t[i..]))
            .map(|t| format!("Free memory on device {t}"));
        if let Some((free, rest)) = free_msg
            .as_deref()
            .and_then(|m| number_after(m, "Free memory on device ("))
        {
            if let Some((total, rest)) = number_after(rest, "/") {
                if let (Some(u), Some((util, rest))) =
                    (unit_of(rest), number_after(rest, "utilization ("))
                {
                    if let Some((req, _)) = number_after(rest, ",") {
                        push!(
                            "init_error",
                            free,
                            u,
                            vec![
                                ("free", free),
                                ("total", total),
                                ("requested", req),
                                ("utilization", util),
                            ],
                        );
                    }
                }
            }
        }
        // "To serve at least one request with the models's max seq len (N), (X GiB KV cache is
        // needed, which is larger than the available KV cache memory (Y GiB). Based on the
        // available memory, the estimated maximum model length is M."
        if let Some(i) = msg.find("To serve at least one request with the model") {
            let m = &msg[i..];
            if let Some((len, rest)) = number_after(m, "max seq len (") {
                if let Some((needed, rest)) = number_after(rest, "(") {
                    // The figures are GiB (`Log::inputs` reads them so).
                    if let (Some("GiB"), Some((avail, rest))) = (
                        unit_of(rest),
                        number_after(rest, "available KV cache memory ("),
                    ) {
                        let mut fields = vec![
                            ("max_seq_len", len),
                            ("needed", needed),
                            ("available", avail),
                        ];
                        if let Some((est, _)) =
                            number_after(rest, "estimated maximum model length is ")
                        {
                            fields.push(("estimated_max_model_len", est));
                        }
                        push!("capacity_error", len, "tokens", fields);
                    }
                }
            }
        }
        // V0: "The model's max seq len (29000) is larger than the maximum number of tokens that
        // can be stored in KV cache (23648)."
        if let Some((len, rest)) = number_after(msg, "The model's max seq len (") {
            if let Some((kv, _)) = number_after(rest, "stored in KV cache (") {
                push!(
                    "v0_capacity_error",
                    len,
                    "tokens",
                    vec![("max_seq_len", len), ("kv_tokens", kv)],
                );
            }
        }
        // V0's profiling, one line (0.6.4) or a table of lines (0.6.5 to 0.7).
        if let Some(i) = msg.find("Memory profiling results:") {
            let terms = profiling_terms(&msg[i + 25..]);
            if terms.is_empty() {
                profiling = Some(log.readings.len());
                push!("memory_profiling", 0.0, "GiB", Vec::new());
            } else {
                let kv = terms
                    .iter()
                    .find(|(k, _)| *k == "kv_cache_size")
                    .map_or(0.0, |(_, v)| *v);
                push!("memory_profiling", kv, "GiB", terms);
            }
            clues.push((
                "the V0 engine's \"Memory profiling results\"".into(),
                "0.6",
                line_no,
            ));
            continue;
        }
        if msg.contains("Memory profiling takes") {
            profiling = Some(log.readings.len());
            push!("memory_profiling", 0.0, "GiB", Vec::new());
            clues.push((
                "the V0 engine's \"Memory profiling takes\"".into(),
                "0.6",
                line_no,
            ));
            continue;
        }
        // 0.6.5's budget line starts a profile when its "Memory profiling takes" line was cut
        // off above the excerpt.
        if profiling.is_none() && msg.contains("the current vLLM instance can use") {
            profiling = Some(log.readings.len());
            push!("memory_profiling", 0.0, "GiB", Vec::new());
        }
        if let Some(p) = profiling {
            let terms = profiling_terms(msg);
            // The table's "duration" row carries no memory term; the table goes on.
            if terms.is_empty() && msg.trim_start().starts_with("duration") {
                continue;
            }
            if terms.is_empty() {
                profiling = None;
            } else {
                let r = &mut log.readings[p];
                for (k, v) in terms {
                    if k == "kv_cache_size" || k == "available_kv_cache_memory" {
                        r.value = v;
                    }
                    r.fields.retain(|(n, _)| *n != k);
                    r.fields.push((k, v));
                }
            }
        }
    }
    match stated {
        Some((v, line)) => {
            log.version_basis = format!("stated by the log (line {line})");
            log.vllm_version = Some(v);
        }
        None => {
            let low = clues
                .iter()
                .max_by(|a, b| version_key(a.1).cmp(&version_key(b.1)));
            let high = before
                .iter()
                .min_by(|a, b| version_key(a.1).cmp(&version_key(b.1)));
            log.version_basis = match (low, high) {
                (Some((what, at_least, line)), None) => format!(
                    "not stated; {what} (line {line}) suggests vLLM {at_least} or later, which does not fix the release: give --vllm-version"
                ),
                (None, Some((what, at_most, line))) => format!(
                    "not stated; {what} (line {line}) suggests vLLM {at_most} or earlier, which does not fix the release: give --vllm-version"
                ),
                (Some((w1, lo, l1)), Some((w2, hi, l2))) => format!(
                    "not stated; {w1} (line {l1}) suggests vLLM {lo} or later and {w2} (line {l2}) vLLM {hi} or earlier, which does not fix the release: give --vllm-version"
                ),
                (None, None) => "not stated, and no line fixes it: give --vllm-version".into(),
            };
        }
    }
    // A profile whose terms were cut off says nothing.
    log.readings
        .retain(|r| r.key != "memory_profiling" || !r.fields.is_empty());
    flag_conflicts(&mut log);
    if log.readings.is_empty() && log.non_default_args.is_empty() {
        return Err(LogError(
            "no line Headroom reads was found: expected vLLM's start-up lines such as \"Model loading took\", \"Available KV cache memory\", \"GPU KV cache size\" or \"non-default args\"".into(),
        ));
    }
    Ok(log)
}

/// `0.18` as (0, 18), to order the clues.
fn version_key(v: &str) -> (u32, u32) {
    let mut p = v.split('.').map(|x| x.parse().unwrap_or(0));
    (p.next().unwrap_or(0), p.next().unwrap_or(0))
}

/// V0's profiling terms, in either layout: `total_gpu_memory=23.58GiB ...` or a table row
/// `model weights take   14.96GiB`.
fn profiling_terms(s: &str) -> Vec<(&'static str, f64)> {
    const TERMS: [(&str, &str); 11] = [
        ("total_gpu_memory", "total_gpu_memory"),
        ("initial_memory_usage", "initial_memory_usage"),
        ("peak_torch_memory", "peak_torch_memory"),
        ("memory_usage_post_profile", "memory_usage_post_profile"),
        ("non_torch_memory", "non_torch_memory"),
        ("kv_cache_size", "kv_cache_size"),
        ("gpu_memory_utilization", "gpu_memory_utilization"),
        ("model weights take", "model_weights"),
        ("PyTorch activation peak memory", "activation_peak"),
        ("available_kv_cache_memory", "available_kv_cache_memory"),
        ("the current vLLM instance can use", "budget"),
    ];
    let mut out = Vec::new();
    for (printed, key) in TERMS {
        if let Some(i) = s.find(printed) {
            let rest = s[i + printed.len()..].trim_start_matches(['=', ' ', '\t', ':', '(']);
            if let Some((v, _)) = number_at(rest) {
                out.push((key, v));
            }
        }
    }
    // The 0.6.5 line form: "... can use total_gpu_memory (23.55GiB) x gpu_memory_utilization
    // (0.90) = 21.19GiB", "model weights take 7.97GiB; non_torch_memory takes 0.12GiB; ...;
    // the rest of the memory reserved for KV Cache is 11.87GiB."
    if let Some((v, _)) = number_after(s, "reserved for KV Cache is ") {
        out.push(("kv_cache_size", v));
    }
    if let Some((v, _)) = number_after(s, "non_torch_memory takes ") {
        out.retain(|(k, _)| *k != "non_torch_memory");
        out.push(("non_torch_memory", v));
    }
    if let Some((v, _)) = number_after(s, "activation peak memory takes ") {
        out.retain(|(k, _)| *k != "activation_peak");
        out.push(("activation_peak", v));
    }
    if let Some(i) = s.find(") = ") {
        if s.contains("can use total_gpu_memory") {
            if let Some((v, _)) = number_at(&s[i + 4..]) {
                out.retain(|(k, _)| *k != "budget");
                out.push(("budget", v));
            }
        }
    }
    out
}

/// Readings of one figure on one rank that disagree: two launches pasted together.
fn flag_conflicts(log: &mut Log) {
    for key in [
        "model_loading",
        "available_kv_cache",
        "gpu_kv_cache_tokens",
        "num_gpu_blocks",
    ] {
        let mut seen: Vec<(&Option<String>, f64, usize)> = Vec::new();
        let mut previous: Option<&str> = None;
        // Whether an earlier phase's reading (a load, a pool) came since: a new launch.
        let mut restarted = false;
        for r in &log.readings {
            let after = previous.replace(r.key);
            if matches!(
                r.key,
                "model_loading" | "available_kv_cache" | "memory_profiling" | "init_error"
            ) {
                restarted = true;
            }
            if r.key != key {
                continue;
            }
            let engine_wide = matches!(key, "gpu_kv_cache_tokens" | "num_gpu_blocks");
            match seen.iter().find(|(rank, _, _)| **rank == r.rank) {
                // The pool's figures again with no earlier phase between: one start whose
                // workers each print their own (vLLM 0.10.2 and 0.11.0 under one prefix).
                Some((_, v, line)) if engine_wide && !restarted && *v != r.value => {
                    log.notes.push(format!(
                        "line {} prints {} {} after line {line}'s {v} with no earlier phase between them: each worker's own figure (vLLM 0.10.2 and 0.11.0 print one per worker; the engine uses the smallest)",
                        r.line, r.value, r.unit
                    ));
                }
                // Two loads in a row, before any later phase: a second model of the same start
                // (V0's speculative decoding loads its draft worker's weights next).
                Some((_, v, line)) if key == "model_loading" && after == Some(key) => {
                    log.notes.push(format!(
                        "line {} loads {} {} more after line {line}'s {v} with no phase between them: a second model of the same start (a speculative drafter?); --weights takes the first",
                        r.line, r.value, r.unit
                    ));
                }
                Some((_, v, line)) if *v != r.value => log.conflicts.push(format!(
                    "{key}: line {line} says {v}, line {} says {} for the same rank{}: two launches? Headroom reads the first and averages nothing",
                    r.line,
                    r.value,
                    r.rank.as_ref().map_or(String::new(), |k| format!(" ({k})"))
                )),
                Some(_) => {}
                None => seen.push((&r.rank, r.value, r.line)),
            }
            if engine_wide {
                restarted = false;
            }
        }
    }
}

/// A Python literal dict's top-level items as (key, value text): `{'a': 1, 'b': {'c': 'd'}}`
/// gives `a` = `1` and `b` = `{'c': 'd'}`. A cut-off dict gives its complete items.
pub fn python_dict(s: &str) -> Vec<(String, String)> {
    let s = s.trim();
    let Some(body) = s.strip_prefix('{') else {
        return Vec::new();
    };
    let chars: Vec<char> = body.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    loop {
        while i < chars.len() && (chars[i].is_whitespace() || chars[i] == ',') {
            i += 1;
        }
        if i >= chars.len() || chars[i] == '}' {
            break;
        }
        let Some((key, next)) = py_string(&chars, i) else {
            break;
        };
        i = next;
        while i < chars.len() && chars[i].is_whitespace() {
            i += 1;
        }
        if chars.get(i) != Some(&':') {
            break;
        }
        i += 1;
        let start = i;
        let mut depth = 0i32;
        let mut complete = false;
        while i < chars.len() {
            match chars[i] {
                '\'' | '"' => match py_string(&chars, i) {
                    Some((_, n)) => {
                        i = n;
                        continue;
                    }
                    None => break,
                },
                '{' | '[' | '(' => depth += 1,
                '}' | ']' | ')' if depth > 0 => depth -= 1,
                ',' | '}' if depth == 0 => {
                    complete = true;
                    break;
                }
                _ => {}
            }
            i += 1;
        }
        if !complete {
            break;
        }
        let value: String = chars[start..i].iter().collect();
        out.push((key, value.trim().to_string()));
    }
    out
}

/// A Python string literal at `i` (single or double quotes, backslash escapes).
fn py_string(chars: &[char], i: usize) -> Option<(String, usize)> {
    let q = *chars.get(i)?;
    if q != '\'' && q != '"' {
        return None;
    }
    let mut out = String::new();
    let mut j = i + 1;
    while j < chars.len() {
        match chars[j] {
            '\\' => {
                out.push(*chars.get(j + 1)?);
                j += 2;
            }
            c if c == q => return Some((out, j + 1)),
            c => {
                out.push(c);
                j += 1;
            }
        }
    }
    None
}

/// A Python literal as JSON text: quotes, `True`/`False`/`None`, tuples as lists.
pub fn python_to_json(v: &str) -> String {
    let chars: Vec<char> = v.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '\'' || c == '"' {
            match py_string(&chars, i) {
                Some((s, n)) => {
                    out.push('"');
                    for ch in s.chars() {
                        match ch {
                            '"' => out.push_str("\\\""),
                            '\\' => out.push_str("\\\\"),
                            '\n' => out.push_str("\\n"),
                            ch => out.push(ch),
                        }
                    }
                    out.push('"');
                    i = n;
                    continue;
                }
                None => return String::new(),
            }
        }
        let rest: String = chars[i..chars.len().min(i + 5)].iter().collect();
        let word = |w: &str| {
            rest.starts_with(w)
                && chars
                    .get(i + w.len())
                    .map_or(true, |c| !c.is_ascii_alphanumeric() && *c != '_')
                && (i == 0 || !chars[i - 1].is_ascii_alphanumeric())
        };
        if word("True") {
            out.push_str("true");
            i += 4;
        } else if word("False") {
            out.push_str("false");
            i += 5;
        } else if word("None") {
            out.push_str("null");
            i += 4;
        } else {
            out.push(match c {
                '(' => '[',
                ')' => ']',
                c => c,
            });
            i += 1;
        }
    }
    out
}

impl Log {
    /// The tensor-parallel size the log's `non-default args` give, if they do.
    pub fn tp(&self) -> Option<u32> {
        self.non_default_args
            .iter()
            .find(|(k, _)| k == "tensor_parallel_size")
            .and_then(|(_, v)| v.trim().parse().ok())
    }

    /// The readings of one key.
    pub fn all(&self, key: &str) -> impl Iterator<Item = &Reading> {
        let key = key.to_string();
        self.readings.iter().filter(move |r| r.key == key)
    }

    /// The measured inputs the log gives, as Headroom's inputs with texts the one builder
    /// takes: the weights (`Model loading took`), the available KV memory (the V1 line or the
    /// capacity error's), the CUDA-graph estimate vLLM subtracted, the free memory and the
    /// utilization of an init error. Per pipeline stage when the ranks say their stage and
    /// differ. `--available-kv` is not given with a capacity error's figure when the pool
    /// line is there.
    pub fn inputs(&self) -> Vec<(Input, String)> {
        let mut out = Vec::new();
        let bytes_of = |key: &str| -> Option<String> {
            let rs: Vec<&Reading> = self.all(key).collect();
            per_stage(&rs, self.tp())
        };
        if let Some(t) = bytes_of("model_loading") {
            out.push((Input::Weights, t));
        }
        let available = bytes_of("available_kv_cache").or_else(|| {
            let r = self.all("capacity_error").next()?;
            let v = r.field("available")?;
            Some(((v * GIB as f64).round() as u64).to_string())
        });
        if let Some(t) = available {
            out.push((Input::AvailableKv, t));
        }
        if let Some(r) = self.all("cuda_graph_estimate").next() {
            if let Some(b) = r.bytes() {
                out.push((Input::CudaGraph, b.to_string()));
            }
        }
        if let Some(r) = self.all("init_error").next() {
            if let Some(f) = r.field("free") {
                out.push((Input::Free, ((f * GIB as f64).round() as u64).to_string()));
            }
            if let Some(u) = r.field("utilization") {
                out.push((Input::Util, format!("{u}")));
            }
        }
        if let Some(v) = &self.vllm_version {
            out.push((Input::Vllm, v.clone()));
        }
        out
    }
}

/// The number after `tag` in a process label (`PP` in `Worker_PP1_TP0` gives 1, `rank=` in
/// `VllmWorker rank=3` gives 3).
pub(crate) fn label_number(label: &str, tag: &str) -> Option<u32> {
    let i = label.find(tag)?;
    label[i + tag.len()..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect::<String>()
        .parse()
        .ok()
}

/// One byte count for every rank, or one per pipeline stage when the ranks name their stage
/// (`PP1`, or `rank=N` with the tensor-parallel size the log's flags give: stage `N / tp`) and
/// the stages differ; `None` without readings.
fn per_stage(rs: &[&Reading], tp: Option<u32>) -> Option<String> {
    let first = rs.first()?.bytes()?;
    let stage_of = |r: &Reading| -> Option<u32> {
        let k = r.rank.as_deref()?;
        label_number(k, "PP").or_else(|| Some(label_number(k, "rank=")? / tp.filter(|t| *t > 0)?))
    };
    let mut stages: Vec<(u32, u64)> = Vec::new();
    for r in rs {
        if let (Some(s), Some(b)) = (stage_of(r), r.bytes()) {
            if !stages.iter().any(|(t, _)| *t == s) {
                stages.push((s, b));
            }
        }
    }
    stages.sort();
    let contiguous = stages
        .iter()
        .enumerate()
        .all(|(i, (s, _))| *s as usize == i);
    if stages.len() > 1 && contiguous && stages.iter().any(|(_, b)| *b != stages[0].1) {
        return Some(
            stages
                .iter()
                .map(|(_, b)| b.to_string())
                .collect::<Vec<_>>()
                .join(","),
        );
    }
    Some(first.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_of_each_release() {
        let l = read(concat!(
            "(APIServer pid=1) INFO 10-24 01:21:55 [api_server.py:1839] vLLM API server version 0.11.0\n",
            "(APIServer pid=1) INFO 10-24 01:21:55 [utils.py:233] non-default args: {'model_tag': 'm', 'tensor_parallel_size': 2, 'enforce_eager': True}\n",
            "(Worker_PP1_TP0 pid=9) INFO 01-01 00:00:00 [gpu_model_runner.py:1] Model loading took 14.2474 GiB memory and 5.1 seconds\n",
            "\u{1b}[1;36m(Worker_PP0_TP0 pid=8)\u{1b}[0m INFO 01-01 00:00:00 [gpu_model_runner.py:1] Model loading took 15.0 GiB and 5.1 seconds\n",
            "INFO 07-24 03:57:34 gpu_executor.py:86] # GPU blocks: 22839, # CPU blocks: 2048\r\n",
            "ValueError: Free memory on device (7.34/139.72 GiB) on startup is less than desired GPU memory utilization (0.9, 125.75 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.\n",
            "ValueError: To serve at least one request with the models's max seq len (221000), (10.12 GiB KV cache is needed, which is larger than the available KV cache memory (5.59 GiB). Based on the available memory, the estimated maximum model length is 122080. Try increasing\n",
            "Capturing CUDA graphs: 50%|#####     | 1/2\rCapturing CUDA graphs: 100%|##########| 2/2\n",
        ))
        .unwrap();
        assert_eq!(l.vllm_version.as_deref(), Some("0.11.0"));
        assert!(l.version_basis.contains("line 1"));
        assert_eq!(l.non_default_args.len(), 3);
        assert_eq!(
            l.non_default_args[2],
            ("enforce_eager".into(), "True".into())
        );
        let keys: Vec<&str> = l.readings.iter().map(|r| r.key).collect();
        assert_eq!(
            keys,
            [
                "model_loading",
                "model_loading",
                "num_gpu_blocks",
                "num_cpu_blocks",
                "init_error",
                "capacity_error"
            ]
        );
        assert_eq!(l.readings[0].rank.as_deref(), Some("Worker_PP1_TP0"));
        assert_eq!(l.readings[1].rank.as_deref(), Some("Worker_PP0_TP0"));
        let init = &l.readings[4];
        assert_eq!(
            (
                init.field("free"),
                init.field("total"),
                init.field("utilization"),
                init.field("requested")
            ),
            (Some(7.34), Some(139.72), Some(0.9), Some(125.75))
        );
        let cap = &l.readings[5];
        assert_eq!(cap.field("estimated_max_model_len"), Some(122_080.0));
        assert_eq!(cap.field("needed"), Some(10.12));
        let inputs = l.inputs();
        // Stage 0 first, from its own line.
        assert_eq!(
            inputs[0],
            (
                Input::Weights,
                format!(
                    "{},{}",
                    (15.0 * GIB as f64) as u64,
                    (14.2474f64 * GIB as f64).round() as u64
                )
            )
        );
    }

    #[test]
    fn v0_profiling_in_both_layouts() {
        let one = read("Memory profiling results: total_gpu_memory=23.58GiB initial_memory_usage=15.34GiB peak_torch_memory=17.98GiB memory_usage_post_profile=15.35GiB non_torch_memory=0.35GiB kv_cache_size=2.89GiB gpu_memory_utilization=0.90\nThe model's max seq len (29000) is larger than the maximum number of tokens that can be stored in KV cache (23648).").unwrap();
        let p = &one.readings[0];
        assert_eq!((p.key, p.value), ("memory_profiling", 2.89));
        assert_eq!(p.field("peak_torch_memory"), Some(17.98));
        assert_eq!(one.readings[1].field("kv_tokens"), Some(23_648.0));
        let table = read("INFO 12-13 19:54:18 worker.py:243] Memory profiling results:\nINFO 12-13 19:54:18 worker.py:243] total_gpu_memory     79.22GiB\nINFO 12-13 19:54:18 worker.py:243] model weights take   14.96GiB\nINFO 12-13 19:54:18 worker.py:243] available_kv_cache_memory    53.29GiB\nINFO 12-13 19:54:19 other.py:1] done").unwrap();
        let p = &table.readings[0];
        assert_eq!(p.value, 53.29);
        assert_eq!(p.field("model_weights"), Some(14.96));
        assert!(
            table.version_basis.contains("V0"),
            "{}",
            table.version_basis
        );
    }

    #[test]
    fn formats_bound_the_release_when_no_line_states_it() {
        // 0.14 names the device in the init error; before, none.
        let named = read("ValueError: Free memory on device cuda:0 (3.22/4.0 GiB) on startup is less than desired GPU memory utilization (0.9, 3.6 GiB).").unwrap();
        assert_eq!(named.readings[0].field("free"), Some(3.22));
        assert!(
            named.version_basis.contains("0.14 or later"),
            "{}",
            named.version_basis
        );
        let unnamed = read("ValueError: Free memory on device (3.22/4.0 GiB) on startup is less than desired GPU memory utilization (0.9, 3.6 GiB).").unwrap();
        assert!(
            unnamed.version_basis.contains("0.13 or earlier"),
            "{}",
            unnamed.version_basis
        );
        // "%.4f" and "%.2f" before 0.14, format_gib from 0.14; both bounds are said.
        let both = read(
            "Model loading took 14.2474 GiB and 5 seconds\nAvailable KV cache memory: 43.6 GiB",
        )
        .unwrap();
        assert!(
            both.version_basis.contains("0.14 or later")
                && both.version_basis.contains("0.13 or earlier"),
            "{}",
            both.version_basis
        );
        let zero = read("Available KV cache memory: 43.60 GiB").unwrap();
        assert!(
            zero.version_basis.contains("trailing zero"),
            "{}",
            zero.version_basis
        );
        // Two decimals without a trailing zero are both formats: no clue.
        let plain = read("Available KV cache memory: 43.61 GiB").unwrap();
        assert!(
            plain.version_basis.contains("no line fixes it"),
            "{}",
            plain.version_basis
        );
    }

    #[test]
    fn rank_labels_give_stages_with_the_logs_tensor_parallel_size() {
        let l = read(concat!(
            "non-default args: {'model_tag': 'm', 'tensor_parallel_size': 2, 'pipeline_parallel_size': 2}\n",
            "(VllmWorker rank=0 pid=1) INFO Model loading took 10.0000 GiB and 5 seconds\n",
            "(VllmWorker rank=1 pid=2) INFO Model loading took 10.0000 GiB and 5 seconds\n",
            "(VllmWorker rank=2 pid=3) INFO Model loading took 12.0000 GiB and 5 seconds\n",
            "(VllmWorker rank=3 pid=4) INFO Model loading took 12.0000 GiB and 5 seconds\n",
        ))
        .unwrap();
        let w = l
            .inputs()
            .into_iter()
            .find(|(i, _)| *i == Input::Weights)
            .unwrap()
            .1;
        assert_eq!(w, format!("{},{}", 10 * GIB, 12 * GIB));
    }

    #[test]
    fn two_launches_are_flagged_not_averaged() {
        let l = read("Available KV cache memory: 6.51 GiB\nAvailable KV cache memory: 9.10 GiB")
            .unwrap();
        assert_eq!(l.conflicts.len(), 1);
        assert_eq!(
            l.inputs(),
            [(
                Input::AvailableKv,
                ((6.51 * GIB as f64).round() as u64).to_string()
            )]
        );
    }

    #[test]
    fn hostile_text_gets_a_named_error() {
        assert!(read("just some words\nno vllm here")
            .unwrap_err()
            .0
            .contains("no line"));
        let huge = "x".repeat(MAX_LOG + 1);
        assert!(read(&huge).unwrap_err().0.contains("bytes"));
        // A cut-off dict and odd bytes never panic.
        let l = read("non-default args: {'a': 1, 'b': {'c'").unwrap();
        assert_eq!(l.non_default_args, [("a".to_string(), "1".to_string())]);
        assert!(read("Model loading took \u{1b}[ GiB").is_err());
        assert_eq!(
            python_to_json("{'a': True, 'b': (1, None), 'c': \"it's\"}"),
            "{\"a\": true, \"b\": [1, null], \"c\": \"it's\"}"
        );
    }
}
