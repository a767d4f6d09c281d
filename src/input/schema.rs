//! The one input schema: a row per [`Input`] with everything a front door needs to read it.
//!
//! A row holds the input's URL key and flag (from [`Input`] itself), vLLM's short form, the
//! value's rule (its parser and bounds), its default and where that default comes from, the
//! page's label, the help text, and the section both the form and `--help` list it under.
//! The URL codec ([`super::query`]), the scenario builder ([`super::scenario`]), the CLI's
//! argument parser and `--help`, the page's form, and the input tables of `docs/url.md` and
//! `docs/cli.md` (checked by `tests/input_schema.rs`) all read [`ROWS`]; adding an input is a
//! new `Input` variant, one row here and one arm in the builder.
//!
//! Bounds are chosen once, here. Where vLLM 0.33.0 bounds a value its bound is taken (the
//! fraction in (0, 1], `num_speculative_tokens` > 0); where vLLM takes any Python int, the
//! bound is the one `calc::plan` holds the value to ([`MAX_COUNT`]; byte counts are held to 1 PiB
//! by `calc` itself) or, for the
//! layout, far above any deployment (see `docs/url.md`, "Bounds").

use std::fmt;

use crate::calc::input::Input;
use crate::calc::scenario::{parse_attention_backend, KvCacheDtype};
use crate::calc::version::VllmVersion;
use crate::calc::weight_format;
use crate::catalog;

use super::values::{
    parse_bool, parse_byte_count, parse_bytes_list, parse_checkpoint_bytes, parse_config,
    parse_count, parse_fraction, parse_max_len, parse_method, parse_partition, parse_unit,
    MAX_COUNT,
};

/// The inputs, by the name the URL codec has always used for them.
type Field = Input;

/// Longest value accepted for any parameter but `config` (characters after percent-decoding).
pub const MAX_VALUE_LEN: usize = 4096;
/// Longest pasted config.json accepted in `config` (bytes, after base64url decoding).
pub const MAX_CONFIG_LEN: usize = 256 * 1024;

/// Where an input is listed: a section of the page's form and of `plan --help` alike.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Section {
    /// What is planned: model, GPU, release.
    Model,
    /// vLLM's parallel layout.
    Parallel,
    /// vLLM's engine flags.
    Engine,
    /// The speculative drafter.
    Speculative,
    /// Runtime terms a GPU measured (vLLM's log lines): each replaces an estimate.
    Measured,
    /// The unified-memory start gate (GB10 / DGX Spark boxes).
    Unified,
    /// How the answer is shown.
    Output,
    /// `headroom solve` only (CLI-only flags).
    Solve,
}

impl Section {
    /// Every section, in the order the form and `--help` list them.
    pub const ALL: [Section; 8] = [
        Section::Model,
        Section::Parallel,
        Section::Engine,
        Section::Speculative,
        Section::Measured,
        Section::Unified,
        Section::Output,
        Section::Solve,
    ];

    /// The heading in `--help`.
    pub fn cli_title(self) -> &'static str {
        match self {
            Section::Model => "Model and hardware",
            Section::Parallel => "Parallelism (vLLM's flags)",
            Section::Engine => "Engine (vLLM's flags)",
            Section::Speculative => "Speculative decoding",
            Section::Measured => "Measured terms (each replaces an estimate)",
            Section::Unified => "Unified memory start gate",
            Section::Output => "Output",
            Section::Solve => "Solve",
        }
    }

    /// The heading in the page's form.
    pub fn form_title(self) -> &'static str {
        match self {
            Section::Model => "Model and hardware",
            Section::Parallel => "Parallelism",
            Section::Engine => "Engine flags",
            Section::Speculative => "Speculative decoding",
            Section::Measured => "Measured terms (override the estimates)",
            Section::Unified => "Unified memory start gate",
            Section::Output => "Output",
            Section::Solve => "Solve",
        }
    }
}

/// How the command line gives an input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cli {
    /// `--flag VALUE` (or `--flag=VALUE`); the placeholder shown in `--help`.
    Value(&'static str),
    /// A switch: the flag alone means true; `--no-flag` and `--flag=false` mean false.
    Switch,
    /// A key of `--speculative-config`'s JSON (the CLI maps the JSON onto these inputs).
    SpeculativeConfig,
    /// The text of a config.json, which the CLI reads from MODEL's path.
    ModelFile,
}

/// One input's row.
#[derive(Clone, Copy, Debug)]
pub struct Row {
    pub input: Input,
    /// vLLM's short form, with its single dash (`-tp`).
    pub short: Option<&'static str>,
    /// The value's parser and bounds.
    pub rule: Rule,
    pub cli: Cli,
    pub section: Section,
    /// The page's label; `None` for an input the form does not show (the example menu and the
    /// unit toggle sit in the header).
    pub label: Option<&'static str>,
    /// What the input means (`--help`, and the docs' tables say the same at more length).
    pub help: &'static str,
    /// The value taken when the input is not given, and whose rule that is; empty when
    /// leaving it out means "none".
    pub default: &'static str,
}

/// The inputs' prose (labels, help and default texts) is read by the page, the CLI and the docs;
/// the first verdict's program (the `verdict` feature without `web`) never shows it, and every
/// byte of that program is on the page's critical path, so its rows carry none.
const PROSE: bool = !cfg!(all(feature = "verdict", not(feature = "web")));

const fn row(
    input: Input,
    rule: Rule,
    cli: Cli,
    section: Section,
    label: Option<&'static str>,
    help: &'static str,
    default: &'static str,
) -> Row {
    Row {
        input,
        short: None,
        rule,
        cli,
        section,
        label: if PROSE { label } else { None },
        help: if PROSE { help } else { "" },
        default: if PROSE { default } else { "" },
    }
}

const fn short(r: Row, s: &'static str) -> Row {
    Row {
        short: Some(s),
        ..r
    }
}

use Cli::{ModelFile, SpeculativeConfig, Switch, Value};
use Section as S;

const BYTES: Rule = Rule::Bytes;
const fn count(min: u64, max: u64) -> Rule {
    Rule::Count { min, max }
}

/// Every input, once, in the order the form and `--help` list them.
pub const ROWS: [Row; 46] = [
    row(Input::Model, Rule::ModelId, Value("MODEL"), S::Model, Some("Model (search the catalog)"),
        "A catalog model id or its Hugging Face repo; on the command line also a path to a config.json (or its directory), and the same as the MODEL argument.",
        "llama-3.1-8b-instruct on the page; the CLI needs MODEL or --example"),
    row(Input::Example, Rule::ExampleId, Value("ID"), S::Model, None,
        "Start from a seed example (headroom examples); other inputs apply on top, and its measurements give way to what they no longer describe.",
        ""),
    row(Input::Config, Rule::Config, ModelFile, S::Model, Some("Custom model: paste its config.json"),
        "A custom model: the text of a Hugging Face config.json (overrides model).",
        ""),
    row(Input::CheckpointBytes, Rule::Checkpoint, Value("BYTES"), S::Model, Some("Checkpoint size: bytes, or paste its model.safetensors.index.json"),
        "The checkpoint's bytes, metadata.total_size of its model.safetensors.index.json (the page reads it from the pasted file; the CLI from the file beside MODEL's config.json): the weight estimate is scaled to it.",
        "the catalog row's, where it has one; else none"),
    short(row(Input::Quantization, Rule::Quantization, Value("METHOD"), S::Model, Some("Quantization (--quantization)"),
        "The weights' format: a checkpoint's method (awq, gptq, fp8, compressed-tensors, modelopt, modelopt_fp4, mxfp4 ...; on an unquantized config, that method's checkpoint of the model is planned, its usual format assumed and said) or a method vLLM quantizes with as it loads (fp8_per_tensor, fp8_per_block, fp8_per_channel, mxfp8, mxfp4, int8_per_channel_weight_only, nvfp4_per_token; fp8 on an unquantized config).",
        "the checkpoint's quantization_config (vLLM's)"), "-q"),
    row(Input::Dtype, Rule::Dtype, Value("DTYPE"), S::Model, Some("Weights dtype (--dtype)"),
        "auto, half, float16, bfloat16, float or float32: the unquantized weights' and activations' dtype (and the KV cache's under kv-cache-dtype auto).",
        "auto: the config's torch_dtype; float32 becomes bfloat16, or float16 before compute capability 8.0 (vLLM's)"),
    row(Input::Gpu, Rule::GpuId, Value("ID"), S::Model, Some("GPU"),
        "A catalog GPU id (headroom gpus).",
        "h100-sxm-80gb"),
    row(Input::GpuMemory, BYTES, Value("BYTES"), S::Model, Some("GPU total as the driver reports it, in bytes (alone: a GPU not in the catalog)"),
        "The GPU's total as the driver reports it (torch.cuda.mem_get_info total). Alone: a custom GPU; with --gpu or --example: replaces that GPU's total.",
        "the catalog GPU's"),
    row(Input::Gpus, count(1, 65_536), Value("N"), S::Model, Some("GPUs available"),
        "GPUs available.",
        "tp x pp x dp (an example's own count)"),
    row(Input::Vllm, Rule::Version, Value("V"), S::Model, Some("vLLM version"),
        "Whose rules apply: 0.10.2, 0.11.0, 0.11.2, 0.12, 0.13 and 0.14 to 0.33.",
        "0.33"),
    short(row(Input::Tp, count(1, 1_024), Value("N"), S::Parallel, Some("Tensor parallel size"),
        "Tensor-parallel size.",
        "1 (vLLM's)"), "-tp"),
    short(row(Input::Pp, count(1, 1_024), Value("N"), S::Parallel, Some("Pipeline parallel size"),
        "Pipeline-parallel size.",
        "1 (vLLM's)"), "-pp"),
    row(Input::PpPartition, Rule::Partition, Value("A,B,C"), S::Parallel, Some("Layers per stage (VLLM_PP_LAYER_PARTITION)"),
        "VLLM_PP_LAYER_PARTITION: decoder layers per stage.",
        "vLLM's get_pp_indices split"),
    short(row(Input::Dp, count(1, 4_096), Value("N"), S::Parallel, Some("Data parallel size"),
        "Data-parallel size: each DP rank is its own engine with the same plan.",
        "1 (vLLM's)"), "-dp"),
    row(Input::Ep, Rule::Bool, Switch, S::Parallel, Some("Expert parallel"),
        "Experts are owned whole by ranks instead of split by TP.",
        "off (vLLM's)"),
    row(Input::Util, Rule::Fraction, Value("F"), S::Engine, Some("GPU memory utilization"),
        "Fraction of the total vLLM budgets, in (0, 1].",
        "0.92; 0.90 before vLLM 0.20 (vLLM's, by release)"),
    row(Input::KvBytes, BYTES, Value("BYTES"), S::Engine, Some("KV cache memory bytes (not set: the budget sizes the pool)"),
        "Pin the KV pool per rank; the fraction no longer sizes it.",
        ""),
    row(Input::MaxModelLen, Rule::MaxLen, Value("N|auto|-1"), S::Engine, Some("Max model len"),
        "Context length; auto or -1 fits the longest the pool holds. vLLM reads 128k as 128,000 and 128K as 131,072 (lower case k is 1,000, upper case K is 1,024).",
        "vLLM's length derived from the config (its length keys and RoPE scaling)"),
    row(Input::MaxNumSeqs, count(1, MAX_COUNT), Value("N"), S::Engine, Some("Max num seqs"),
        "Scheduler seats.",
        "by GPU size (vLLM's defaults)"),
    row(Input::MaxNumBatchedTokens, count(1, MAX_COUNT), Value("N"), S::Engine, Some("Max num batched tokens"),
        "Tokens per scheduler step.",
        "by GPU size (vLLM's defaults)"),
    row(Input::KvDtype, Rule::KvDtype, Value("DTYPE"), S::Engine, Some("KV cache dtype"),
        "auto, bfloat16, float16, fp8, fp8_e4m3, fp8_e5m2 or fp8_ds_mla (fp8_inc, Intel Gaudi's, is refused: no CUDA backend takes it).",
        "auto: the model's dtype (vLLM's)"),
    row(Input::AttnBackend, Rule::AttnBackend, Value("NAME"), S::Engine, Some("Attention backend"),
        "A backend for ordinary attention (FLASH_ATTN, TRITON_ATTN, FLASHINFER, FLEX_ATTENTION, FLASH_ATTN_MLA, FLASHMLA, FLASHINFER_MLA, CUTLASS_MLA, TRITON_MLA; checked as vLLM checks a selected one), or DeepSeek-V4's sparse backend: FLASHMLA_SPARSE_DSV4 or FLASHINFER_MLA_SPARSE_DSV4 (on SM 10.x: plain bf16 or fp8 rows, so a bf16 KV cache).",
        "vLLM's choice"),
    row(Input::BlockSize, count(1, 1 << 20), Value("N"), S::Engine, Some("Block size"),
        "Tokens per KV block.",
        "the attention backend's"),
    row(Input::Eager, Rule::Bool, Switch, S::Engine, Some("Enforce eager (no CUDA graphs)"),
        "No CUDA graphs.",
        "off (vLLM's)"),
    row(Input::NumGpuBlocksOverride, count(1, MAX_COUNT), Value("N"), S::Engine, Some("GPU blocks override"),
        "Use exactly N KV blocks.",
        ""),
    row(Input::NoHybrid, Rule::Bool, Switch, S::Engine, Some("Disable hybrid KV cache manager"),
        "Sliding-window and chunked layers keep full-length KV.",
        "off (vLLM's)"),
    row(Input::NoAsync, Rule::Bool, Switch, S::Engine, Some("No async scheduling (as with the Ray executor)"),
        "One batch in flight per pipeline stage instead of one more (vLLM also turns async scheduling off with the Ray executor); sliding-window layers then need fewer blocks.",
        "off (vLLM's)"),
    row(Input::Spec, Rule::Method, SpeculativeConfig, S::Speculative, Some("Method"),
        "The speculative method (the speculative config's method), or none.",
        "none"),
    row(Input::SpecTokens, count(1, 64), SpeculativeConfig, S::Speculative, Some("Speculative tokens"),
        "num_speculative_tokens of the speculative config (needs a method).",
        "1, with a note (vLLM itself needs it)"),
    row(Input::DraftModel, Rule::ModelId, SpeculativeConfig, S::Speculative, Some("Draft model (method draft_model: a catalog id or Hugging Face repo)"),
        "The drafter of the draft_model method (the speculative config's model): a catalog id or its Hugging Face repo.",
        ""),
    row(Input::Drafter, BYTES, Value("BYTES"), S::Speculative, Some("Drafter weights per last-stage rank"),
        "The speculative drafter's weights on a last-stage rank, measured (needs a drafter).",
        "estimated"),
    row(Input::Weights, Rule::BytesList, Value("BYTES[,..]"), S::Measured, Some("Weights per rank: Model loading took (one, or one per stage)"),
        "Weights per rank (\"Model loading took X GiB\"); a comma list gives one value per PP stage, - keeps a stage's estimate.",
        "estimated"),
    row(Input::Activation, BYTES, Value("BYTES"), S::Measured, Some("Activation peak"),
        "The profile run's activation peak above the resting allocation.",
        "estimated"),
    row(Input::NonTorch, BYTES, Value("BYTES"), S::Measured, Some("Non-torch / other consumption"),
        "Other consumption after the snapshot (non-torch memory, runner buffers).",
        "estimated"),
    row(Input::CudaGraph, BYTES, Value("BYTES"), S::Measured, Some("CUDA graph memory"),
        "CUDA-graph memory.",
        "estimated"),
    row(Input::LoadPeak, BYTES, Value("BYTES"), S::Measured, Some("Load-time transient peak"),
        "A load-time transient above the weights (e.g. an expert repack).",
        "estimated"),
    row(Input::Free, BYTES, Value("BYTES"), S::Measured, Some("Free memory at the init snapshot"),
        "Free memory at vLLM's init snapshot (torch.cuda.mem_get_info free).",
        "the total less other-tenants"),
    row(Input::AvailableKv, Rule::BytesList, Value("BYTES[,..]"), S::Measured, Some("Available KV cache memory (one, or one per stage)"),
        "vLLM's \"Available KV cache memory\": the pool is planned from it directly; a comma list gives one value per PP stage.",
        "derived"),
    row(Input::Tenants, BYTES, Value("BYTES"), S::Measured, Some("Held by other processes per GPU"),
        "Memory other processes hold on each GPU (when free-memory is not given).",
        "0"),
    row(Input::AvgLen, count(1, MAX_COUNT), Value("N"), S::Measured, Some("Average request length (tokens)"),
        "Request length for the concurrency-at-average figure.",
        "max-model-len / 4"),
    row(Input::MemAvailable, BYTES, Value("BYTES"), S::Unified, Some("MemAvailable before the start"),
        "The box's MemAvailable before the start; turns the unified-memory gate on (unified-memory GPUs only, e.g. gb10-128gb).",
        ""),
    row(Input::Headroom, BYTES, Value("BYTES"), S::Unified, Some("Headroom the gate keeps free"),
        "What the gate keeps free (needs the gate).",
        "8 GiB"),
    row(Input::Overhead, BYTES, Value("BYTES"), S::Unified, Some("Overhead besides weights and KV"),
        "Everything a rank holds besides weights and KV (graphs, workspaces, activations), measured (needs the gate).",
        "estimated"),
    row(Input::GuardThreshold, BYTES, Value("BYTES"), S::Unified, None,
        "The memory guard's kill threshold during the load: the check fails when MemAvailable after the start would fall below it (needs the gate).",
        "8 GiB"),
    row(Input::Unit, Rule::Unit, Value("gib|gb"), S::Output, None,
        "Show figures in GiB (2^30, vLLM's unit) or GB (10^9). Bytes are exact either way.",
        "gib"),
    row(Input::Step, count(1, 16), Value("N"), S::Output, None,
        "The step of an example's walkthrough the page shows (needs --example; the step's inputs are given beside it, as its link carries them).",
        ""),
];

/// An input's row.
pub fn row_of(input: Input) -> &'static Row {
    // ROWS holds every input once (a test checks it); the fallback is never taken.
    ROWS.iter().find(|r| r.input == input).unwrap_or(&ROWS[0])
}

/// The value rule of a field: what text it accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rule {
    /// An integer in `[min, max]`; vLLM's human forms (`128k`, `10e9`) are accepted.
    Count {
        min: u64,
        max: u64,
    },
    /// A byte count in any form `calc::units::parse_bytes` reads.
    Bytes,
    /// One byte count, or one per stage, comma-separated.
    BytesList,
    /// Layer counts per stage, comma-separated.
    Partition,
    /// `--gpu-memory-utilization`: a fraction in (0, 1].
    Fraction,
    /// `true`/`false` (also 1/0, yes/no, on/off).
    Bool,
    /// `--max-model-len`: a count or `auto` / `-1`.
    MaxLen,
    KvDtype,
    /// A byte count, or a pasted `model.safetensors.index.json` (its `metadata.total_size`).
    Checkpoint,
    /// `--quantization`: one of vLLM's methods.
    Quantization,
    /// `--dtype`: `auto`, `half`, `float16`, `bfloat16`, `float`, `float32`.
    Dtype,
    /// `--attention-backend`: `auto`, a dense or MLA backend, or one of DeepSeek-V4's sparse backends.
    AttnBackend,
    Version,
    Unit,
    /// A speculative method name, or `none`.
    Method,
    /// A catalog model id.
    ModelId,
    /// A catalog GPU id.
    GpuId,
    /// A seed example id.
    ExampleId,
    /// A config.json text the catalog parser accepts.
    Config,
}

impl Rule {
    /// How `docs/url.md` describes the values this rule takes (its value column starts with
    /// it; `tests/input_schema.rs` checks), or `None` where the docs list the choices.
    pub fn summary(self) -> Option<String> {
        use crate::calc::units::Grouped;
        let range = |min: u64, max: u64| {
            format!(
                "count, {} to {}",
                Grouped(i128::from(min)),
                Grouped(i128::from(max))
            )
        };
        Some(match self {
            Rule::Count { min, max } => range(min, max),
            Rule::Bytes => "bytes".into(),
            Rule::BytesList => "bytes, or one per stage".into(),
            Rule::Partition => "layers per stage".into(),
            Rule::Fraction => "a fraction in (0, 1]".into(),
            Rule::Bool => "`true` / `false`".into(),
            Rule::MaxLen => format!("{}, or `auto` / `-1`", range(1, MAX_COUNT)),
            Rule::Checkpoint => "bytes, or a model.safetensors.index.json".into(),
            Rule::KvDtype
            | Rule::Quantization
            | Rule::Dtype
            | Rule::AttnBackend
            | Rule::Version
            | Rule::Unit
            | Rule::Method
            | Rule::ModelId
            | Rule::GpuId
            | Rule::ExampleId
            | Rule::Config => return None,
        })
    }
}

impl Field {
    /// The value rule of this input, from its schema row.
    pub fn rule(self) -> Rule {
        row_of(self).rule
    }

    /// Whether a value of `len` bytes (trimmed) is within this field's limit: [`MAX_CONFIG_LEN`]
    /// for `config`, [`MAX_VALUE_LEN`] for the rest. Checked before anything parses it.
    pub fn within_limit(self, len: usize) -> Result<(), String> {
        let limit = if matches!(self, Field::Config | Field::CheckpointBytes) {
            MAX_CONFIG_LEN
        } else {
            MAX_VALUE_LEN
        };
        if len > limit {
            return Err(format!(
                "{}: the value is {} bytes, over the {} bytes it may have",
                self.flag(),
                crate::calc::units::thousands(len as u128),
                crate::calc::units::thousands(limit as u128)
            ));
        }
        Ok(())
    }

    /// Checks a text for this field with the rule the form and the URL share; the error says
    /// what is wrong, naming the flag.
    pub fn validate(self, text: &str) -> Result<(), String> {
        let t = text.trim();
        if t.is_empty() {
            return Ok(());
        }
        self.within_limit(t.len())?;
        let flag = self.flag();
        match self.rule() {
            Rule::Count { min, max } => parse_count(t, min, max).map(drop),
            Rule::Bytes => parse_byte_count(t)
                .map(drop)
                .map_err(|e| format!("{flag}: {e}")),
            Rule::BytesList => parse_bytes_list(t)
                .map(drop)
                .map_err(|e| format!("{flag}: {e}")),
            Rule::Partition => parse_partition(t).map(drop),
            Rule::Fraction => parse_fraction(t).map(drop),
            Rule::Bool => parse_bool(t).map(drop),
            Rule::MaxLen => parse_max_len(t).map(drop),
            Rule::KvDtype => KvCacheDtype::parse(t).map(drop),
            Rule::Quantization => weight_format::parse_method(t).map(drop),
            Rule::Checkpoint => parse_checkpoint_bytes(t).map(drop),
            Rule::Dtype => weight_format::Dtype::parse(t).map(drop),
            Rule::AttnBackend => parse_attention_backend(t).map(drop),
            Rule::Version => VllmVersion::parse(t).map(drop),
            Rule::Unit => parse_unit(t).map(drop),
            Rule::Method => parse_method(t).map(drop),
            Rule::ModelId => catalog::model_known(t)
                .then_some(())
                .ok_or_else(|| unknown_model(self, t)),
            Rule::GpuId => catalog::gpu(t).map(drop).ok_or_else(|| unknown_gpu(t)),
            // By id alone (the menu's words are the page's).
            Rule::ExampleId => catalog::examples::position(t).map(drop).ok_or_else(|| {
                format!(
                    "example {} is not one of the seed examples",
                    crate::calc::quoted(t)
                )
            }),
            // The catalog links' first-verdict program keeps a pasted config's text unread: the
            // state then names it, and the program hands it over (verdict::beyond_catalog)
            // instead of planning as if no config were given. The one with `config-reader`
            // reads it.
            Rule::Config
                if cfg!(all(
                    feature = "catalog-compiled",
                    not(feature = "config-reader")
                )) =>
            {
                Ok(())
            }
            Rule::Config => parse_config(t).map(drop),
        }
        .map_err(|e| {
            // Name the flag once, whoever wrote the message.
            if e.starts_with(flag) || e.contains(flag) {
                e
            } else {
                format!("{flag}: {e}")
            }
        })
    }
}

impl fmt::Display for Field {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.flag())
    }
}

/// The catalog row a model field names (an id or a Hugging Face repo), or why not, in words
/// fit for that field.
/// Why a GPU id is refused, with the catalog ids that contain it.
pub(crate) fn unknown_gpu(id: &str) -> String {
    let lower = id.to_ascii_lowercase();
    let near: Vec<&str> = catalog::gpus()
        .iter()
        .map(|r| r.gpu.id.as_str())
        .filter(|g| !id.is_empty() && g.contains(&lower))
        .collect();
    if near.is_empty() {
        format!("gpu {} is not in the catalog", crate::calc::quoted(id))
    } else {
        format!(
            "gpu {} is not in the catalog; did you mean {}?",
            crate::calc::quoted(id),
            near.join(" or ")
        )
    }
}

pub(crate) fn model_row(field: Field, text: &str) -> Result<&'static catalog::ModelRow, String> {
    catalog::model(text).ok_or_else(|| unknown_model(field, text))
}

/// The error of a model or draft-model input that names no catalog row.
pub(crate) fn unknown_model(field: Field, text: &str) -> String {
    if field == Field::DraftModel {
        format!("draft-model {} is not in the catalog (a catalog id or its Hugging Face repo; the CLI also reads a config.json path in the speculative config's model)", crate::calc::quoted(text))
    } else {
        format!("model {} is not in the catalog (pick one from the list, or paste its config.json below)", crate::calc::quoted(text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_input_has_one_row_in_query_order_within_nothing_else() {
        for input in Input::ALL {
            assert_eq!(
                ROWS.iter().filter(|r| r.input == input).count(),
                1,
                "{input:?}"
            );
            assert_eq!(row_of(input).input, input);
        }
        // Bounds are whole ranges that the parsers can reach.
        for r in &ROWS {
            if let Rule::Count { min, max } = r.rule {
                assert!(1 <= min && min < max && max <= MAX_COUNT, "{:?}", r.input);
            }
            assert!(!r.help.is_empty() || !PROSE, "{:?}", r.input);
        }
    }
}
