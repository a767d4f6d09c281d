//! The catalog: model and GPU rows embedded with `include_str!`, parsed once, turned into
//! validated `calc` types. A catalog model row and a pasted Hugging Face `config.json` go
//! through the same parser ([`parse_config_json`]).

pub mod config;
pub mod examples;

use std::sync::OnceLock;

use serde::Deserialize;

use crate::calc::model::{MeasuredKv, Model};
use crate::calc::scenario::Gpu;
use crate::calc::units::Bytes;
pub use config::{parse_config_json, parse_config_value, ConfigError};

/// A model of the catalog, with where its numbers came from.
#[derive(Clone, Debug)]
pub struct ModelRow {
    pub id: String,
    pub name: String,
    pub hf_repo: String,
    pub source: String,
    pub retrieved: String,
    pub model: Model,
    /// Config keys or figures that could not be confirmed from a source.
    pub unconfirmed: Vec<String>,
    pub notes: String,
    /// Where the checkpoint size came from, when the row has one.
    pub checkpoint_source: Option<String>,
}

/// A GPU of the catalog.
#[derive(Clone, Debug)]
pub struct GpuRow {
    pub gpu: Gpu,
    pub memory_marketing: String,
    pub source: String,
    pub retrieved: String,
    /// How `total_bytes` was obtained.
    pub basis: String,
}

/// The model files, by id. A test checks this list against `catalog/models/`.
pub const MODEL_FILES: &[(&str, &str)] = &[
    (
        "deepseek-r1",
        include_str!("../../catalog/models/deepseek-r1.json"),
    ),
    (
        "deepseek-v3.2",
        include_str!("../../catalog/models/deepseek-v3.2.json"),
    ),
    (
        "deepseek-v3",
        include_str!("../../catalog/models/deepseek-v3.json"),
    ),
    (
        "deepseek-v4-flash",
        include_str!("../../catalog/models/deepseek-v4-flash.json"),
    ),
    (
        "gemma-2-27b-it",
        include_str!("../../catalog/models/gemma-2-27b-it.json"),
    ),
    (
        "gemma-2-9b-it",
        include_str!("../../catalog/models/gemma-2-9b-it.json"),
    ),
    (
        "gemma-3-12b-it",
        include_str!("../../catalog/models/gemma-3-12b-it.json"),
    ),
    (
        "gemma-3-27b-it",
        include_str!("../../catalog/models/gemma-3-27b-it.json"),
    ),
    (
        "gemma-3-4b-it",
        include_str!("../../catalog/models/gemma-3-4b-it.json"),
    ),
    (
        "gpt-oss-120b",
        include_str!("../../catalog/models/gpt-oss-120b.json"),
    ),
    (
        "gpt-oss-20b",
        include_str!("../../catalog/models/gpt-oss-20b.json"),
    ),
    (
        "kimi-k2-instruct",
        include_str!("../../catalog/models/kimi-k2-instruct.json"),
    ),
    (
        "llama-3.1-405b-instruct-fp8",
        include_str!("../../catalog/models/llama-3.1-405b-instruct-fp8.json"),
    ),
    (
        "llama-3.1-70b-instruct",
        include_str!("../../catalog/models/llama-3.1-70b-instruct.json"),
    ),
    (
        "llama-3.1-8b-instruct",
        include_str!("../../catalog/models/llama-3.1-8b-instruct.json"),
    ),
    (
        "llama-3.3-70b-instruct",
        include_str!("../../catalog/models/llama-3.3-70b-instruct.json"),
    ),
    (
        "mistral-7b-instruct-v0.3",
        include_str!("../../catalog/models/mistral-7b-instruct-v0.3.json"),
    ),
    (
        "mixtral-8x22b-instruct-v0.1",
        include_str!("../../catalog/models/mixtral-8x22b-instruct-v0.1.json"),
    ),
    (
        "mixtral-8x7b-instruct-v0.1",
        include_str!("../../catalog/models/mixtral-8x7b-instruct-v0.1.json"),
    ),
    (
        "qwen2.5-14b-instruct",
        include_str!("../../catalog/models/qwen2.5-14b-instruct.json"),
    ),
    (
        "qwen2.5-72b-instruct",
        include_str!("../../catalog/models/qwen2.5-72b-instruct.json"),
    ),
    (
        "qwen2.5-7b-instruct",
        include_str!("../../catalog/models/qwen2.5-7b-instruct.json"),
    ),
    (
        "qwen3-14b",
        include_str!("../../catalog/models/qwen3-14b.json"),
    ),
    (
        "qwen3-235b-a22b-fp8",
        include_str!("../../catalog/models/qwen3-235b-a22b-fp8.json"),
    ),
    (
        "qwen3-235b-a22b-instruct-2507",
        include_str!("../../catalog/models/qwen3-235b-a22b-instruct-2507.json"),
    ),
    (
        "qwen3-235b-a22b",
        include_str!("../../catalog/models/qwen3-235b-a22b.json"),
    ),
    (
        "qwen3-30b-a3b",
        include_str!("../../catalog/models/qwen3-30b-a3b.json"),
    ),
    (
        "qwen3-32b",
        include_str!("../../catalog/models/qwen3-32b.json"),
    ),
    (
        "qwen3-4b",
        include_str!("../../catalog/models/qwen3-4b.json"),
    ),
    (
        "qwen3-8b",
        include_str!("../../catalog/models/qwen3-8b.json"),
    ),
    (
        "qwen3-next-80b-a3b-instruct",
        include_str!("../../catalog/models/qwen3-next-80b-a3b-instruct.json"),
    ),
];

const GPUS_JSON: &str = include_str!("../../catalog/gpus.json");

#[derive(Deserialize)]
struct RawCheckpoint {
    total_bytes: u64,
    source: String,
}

#[derive(Deserialize)]
struct RawMeasured {
    kv_pool_bytes: Option<u64>,
    kv_tokens: Option<u64>,
    tp: Option<u32>,
    source: String,
}

#[derive(Deserialize)]
struct RawModel {
    id: String,
    name: String,
    #[serde(default)]
    hf_repo: String,
    source: String,
    retrieved: String,
    config: serde_json::Value,
    checkpoint: Option<RawCheckpoint>,
    measured: Option<RawMeasured>,
    #[serde(default)]
    unconfirmed: Vec<String>,
    #[serde(default)]
    notes: String,
}

#[derive(Deserialize)]
struct RawGpu {
    id: String,
    name: String,
    #[serde(default)]
    memory_marketing: String,
    total_bytes: u64,
    total_bytes_basis: String,
    total_bytes_confirmed: bool,
    unified_memory: bool,
    compute_capability: Option<String>,
    source: String,
    retrieved: String,
}

/// Parses one catalog model file: the row's metadata around a `config.json`.
pub fn parse_model_row(text: &str) -> Result<ModelRow, ConfigError> {
    let raw: RawModel = serde_json::from_str(text)
        .map_err(|e| ConfigError::new("catalog row", format!("not a catalog row: {e}")))?;
    let mut model = parse_config_value(&raw.config)?;
    model.name = raw.name.clone();
    if let Some(c) = &raw.checkpoint {
        model.checkpoint_bytes = Some(c.total_bytes);
    }
    if let Some(m) = &raw.measured {
        if let (Some(pool), Some(tokens)) = (m.kv_pool_bytes, m.kv_tokens) {
            model.measured_kv = Some(MeasuredKv {
                pool_bytes: pool,
                tokens,
                tp: m.tp.unwrap_or(1),
                source: m.source.clone(),
            });
        }
    }
    Ok(ModelRow {
        id: raw.id,
        name: raw.name,
        hf_repo: raw.hf_repo,
        source: raw.source,
        retrieved: raw.retrieved,
        model,
        unconfirmed: raw.unconfirmed,
        notes: raw.notes,
        checkpoint_source: raw.checkpoint.map(|c| c.source),
    })
}

fn parse_cc(s: Option<&str>) -> (u32, u32) {
    let Some(s) = s else { return (0, 0) };
    let mut it = s.split('.');
    let major = it.next().and_then(|x| x.parse().ok()).unwrap_or(0);
    let minor = it.next().and_then(|x| x.parse().ok()).unwrap_or(0);
    (major, minor)
}

/// Parses `catalog/gpus.json`.
pub fn parse_gpus(text: &str) -> Result<Vec<GpuRow>, ConfigError> {
    let raw: Vec<RawGpu> = serde_json::from_str(text)
        .map_err(|e| ConfigError::new("gpus.json", format!("not a GPU list: {e}")))?;
    Ok(raw
        .into_iter()
        .map(|g| GpuRow {
            gpu: Gpu {
                id: g.id,
                name: g.name,
                total: Bytes(g.total_bytes),
                total_confirmed: g.total_bytes_confirmed,
                unified_memory: g.unified_memory,
                compute_capability: parse_cc(g.compute_capability.as_deref()),
            },
            memory_marketing: g.memory_marketing,
            source: g.source,
            retrieved: g.retrieved,
            basis: g.total_bytes_basis,
        })
        .collect())
}

/// Every model row, parsed once. A row that fails to parse is a bug the catalog tests catch;
/// here it is skipped so the app keeps working.
pub fn models() -> &'static [ModelRow] {
    static ROWS: OnceLock<Vec<ModelRow>> = OnceLock::new();
    ROWS.get_or_init(|| {
        MODEL_FILES
            .iter()
            .filter_map(|(_, text)| parse_model_row(text).ok())
            .collect()
    })
}

/// Every GPU row, parsed once.
pub fn gpus() -> &'static [GpuRow] {
    static ROWS: OnceLock<Vec<GpuRow>> = OnceLock::new();
    ROWS.get_or_init(|| parse_gpus(GPUS_JSON).unwrap_or_default())
}

/// The model row with this id.
///
/// Parses only that row (file names are ids), so a page that shows one model before anything
/// else does not pay for the whole catalog.
pub fn model(id: &str) -> Option<&'static ModelRow> {
    static ROWS: OnceLock<Vec<OnceLock<Option<ModelRow>>>> = OnceLock::new();
    let cells = ROWS.get_or_init(|| MODEL_FILES.iter().map(|_| OnceLock::new()).collect());
    let i = MODEL_FILES.iter().position(|(file_id, _)| *file_id == id)?;
    cells[i]
        .get_or_init(|| {
            parse_model_row(MODEL_FILES[i].1)
                .ok()
                .filter(|r| r.id == id)
        })
        .as_ref()
}

/// The GPU row with this id.
pub fn gpu(id: &str) -> Option<&'static GpuRow> {
    gpus().iter().find(|r| r.gpu.id == id)
}

/// A GPU the user describes only by its total (`--gpu-memory`).
pub fn custom_gpu(total: u64) -> Gpu {
    Gpu {
        id: "custom".into(),
        name: format!(
            "custom GPU ({} B)",
            crate::calc::units::thousands(u128::from(total))
        ),
        total: Bytes(total),
        total_confirmed: true,
        unified_memory: false,
        compute_capability: (9, 0),
    }
}
