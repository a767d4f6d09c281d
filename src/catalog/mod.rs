//! The catalog: model and GPU rows embedded with `include_str!`, parsed once, turned into
//! validated `calc` types. A catalog model row and a pasted Hugging Face `config.json` go
//! through the same parser ([`parse_config_json`]).

pub mod config;
pub mod examples;
pub mod json;

use std::sync::OnceLock;

use crate::calc::model::{MeasuredKv, Model};
use crate::calc::scenario::Gpu;
use crate::calc::units::Bytes;
pub use config::{parse_config_json, parse_config_value, ConfigError};
use json::{Map, Value};

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

/// A catalog file's text: `catalog/` itself, or, in the first verdict's program (the `verdict`
/// feature without `web`), build.rs's copy with the sources and notes emptied (the first verdict
/// never shows them, and its program is the page's critical path).
#[cfg(not(all(feature = "verdict", not(feature = "web"))))]
macro_rules! catalog_file {
    ($name:literal) => {
        include_str!(concat!("../../catalog/", $name))
    };
}
#[cfg(all(feature = "verdict", not(feature = "web")))]
macro_rules! catalog_file {
    ($name:literal) => {
        include_str!(concat!(env!("OUT_DIR"), "/catalog-min/", $name))
    };
}

/// The model files, by id. A test checks this list against `catalog/models/`.
pub const MODEL_FILES: &[(&str, &str)] = &[
    ("deepseek-r1", catalog_file!("models/deepseek-r1.json")),
    ("deepseek-v3.2", catalog_file!("models/deepseek-v3.2.json")),
    ("deepseek-v3", catalog_file!("models/deepseek-v3.json")),
    (
        "deepseek-v4-flash",
        catalog_file!("models/deepseek-v4-flash.json"),
    ),
    (
        "gemma-2-27b-it",
        catalog_file!("models/gemma-2-27b-it.json"),
    ),
    ("gemma-2-9b-it", catalog_file!("models/gemma-2-9b-it.json")),
    (
        "gemma-3-12b-it",
        catalog_file!("models/gemma-3-12b-it.json"),
    ),
    (
        "gemma-3-27b-it",
        catalog_file!("models/gemma-3-27b-it.json"),
    ),
    ("gemma-3-4b-it", catalog_file!("models/gemma-3-4b-it.json")),
    ("glm-4.5-air", catalog_file!("models/glm-4.5-air.json")),
    ("gpt-oss-120b", catalog_file!("models/gpt-oss-120b.json")),
    ("gpt-oss-20b", catalog_file!("models/gpt-oss-20b.json")),
    (
        "kimi-k2-instruct",
        catalog_file!("models/kimi-k2-instruct.json"),
    ),
    (
        "llama-3.1-405b-instruct-fp8",
        catalog_file!("models/llama-3.1-405b-instruct-fp8.json"),
    ),
    (
        "llama-3.1-70b-instruct",
        catalog_file!("models/llama-3.1-70b-instruct.json"),
    ),
    (
        "llama-3.1-8b-instruct",
        catalog_file!("models/llama-3.1-8b-instruct.json"),
    ),
    (
        "llama-3.3-70b-instruct",
        catalog_file!("models/llama-3.3-70b-instruct.json"),
    ),
    (
        "llama-3.3-nemotron-super-49b-v1",
        catalog_file!("models/llama-3.3-nemotron-super-49b-v1.json"),
    ),
    (
        "llama-4-scout-17b-16e-instruct",
        catalog_file!("models/llama-4-scout-17b-16e-instruct.json"),
    ),
    (
        "magistral-small-2509",
        catalog_file!("models/magistral-small-2509.json"),
    ),
    ("minimax-m2.7", catalog_file!("models/minimax-m2.7.json")),
    (
        "mistral-7b-instruct-v0.3",
        catalog_file!("models/mistral-7b-instruct-v0.3.json"),
    ),
    (
        "mistral-nemo-base-2407",
        catalog_file!("models/mistral-nemo-base-2407.json"),
    ),
    (
        "mixtral-8x22b-instruct-v0.1",
        catalog_file!("models/mixtral-8x22b-instruct-v0.1.json"),
    ),
    (
        "mixtral-8x7b-instruct-v0.1",
        catalog_file!("models/mixtral-8x7b-instruct-v0.1.json"),
    ),
    (
        "nemotron-3-nano-30b-a3b",
        catalog_file!("models/nemotron-3-nano-30b-a3b.json"),
    ),
    ("phi-4", catalog_file!("models/phi-4.json")),
    (
        "qwen2.5-14b-instruct",
        catalog_file!("models/qwen2.5-14b-instruct.json"),
    ),
    (
        "qwen2.5-32b-instruct-gptq-int4",
        catalog_file!("models/qwen2.5-32b-instruct-gptq-int4.json"),
    ),
    (
        "qwen2.5-72b-instruct",
        catalog_file!("models/qwen2.5-72b-instruct.json"),
    ),
    (
        "qwen2.5-7b-instruct",
        catalog_file!("models/qwen2.5-7b-instruct.json"),
    ),
    ("qwen3-14b", catalog_file!("models/qwen3-14b.json")),
    (
        "qwen3-235b-a22b-fp8",
        catalog_file!("models/qwen3-235b-a22b-fp8.json"),
    ),
    (
        "qwen3-235b-a22b-instruct-2507",
        catalog_file!("models/qwen3-235b-a22b-instruct-2507.json"),
    ),
    (
        "qwen3-235b-a22b",
        catalog_file!("models/qwen3-235b-a22b.json"),
    ),
    (
        "qwen3-30b-a3b-thinking-2507-fp8",
        catalog_file!("models/qwen3-30b-a3b-thinking-2507-fp8.json"),
    ),
    ("qwen3-30b-a3b", catalog_file!("models/qwen3-30b-a3b.json")),
    ("qwen3-32b-fp8", catalog_file!("models/qwen3-32b-fp8.json")),
    ("qwen3-32b", catalog_file!("models/qwen3-32b.json")),
    ("qwen3-4b", catalog_file!("models/qwen3-4b.json")),
    ("qwen3-8b", catalog_file!("models/qwen3-8b.json")),
    (
        "qwen3-next-80b-a3b-instruct",
        catalog_file!("models/qwen3-next-80b-a3b-instruct.json"),
    ),
    (
        "qwen3.5-35b-a3b",
        catalog_file!("models/qwen3.5-35b-a3b.json"),
    ),
    (
        "qwen3.5-397b-a17b-nvfp4",
        catalog_file!("models/qwen3.5-397b-a17b-nvfp4.json"),
    ),
];

const GPUS_JSON: &str = catalog_file!("gpus.json");

/// One object of a catalog file, read field by field; errors name the file's field.
struct Row<'a> {
    what: &'static str,
    map: &'a Map,
}

impl<'a> Row<'a> {
    fn new(what: &'static str, v: &'a Value) -> Result<Row<'a>, ConfigError> {
        v.as_object().map(|map| Row { what, map }).ok_or_else(|| {
            ConfigError::new(
                what,
                format!("{what} must be a JSON object, not {}", v.kind()),
            )
        })
    }

    /// The field, `None` when it is missing or null.
    fn get(&self, key: &str) -> Option<&'a Value> {
        self.map.get(key).filter(|v| !v.is_null())
    }

    fn wrong(&self, key: &str, want: &str, v: &Value) -> ConfigError {
        ConfigError::new(
            key,
            format!("{}: {key} must be {want}, not {}", self.what, v.kind()),
        )
    }

    fn missing(&self, key: &str) -> ConfigError {
        ConfigError::new(key, format!("{}: {key} is missing", self.what))
    }

    fn opt_str(&self, key: &str) -> Result<Option<String>, ConfigError> {
        self.get(key)
            .map(|v| {
                v.as_str()
                    .map(str::to_string)
                    .ok_or_else(|| self.wrong(key, "a string", v))
            })
            .transpose()
    }

    fn str(&self, key: &str) -> Result<String, ConfigError> {
        self.opt_str(key)?.ok_or_else(|| self.missing(key))
    }

    fn opt_u64(&self, key: &str) -> Result<Option<u64>, ConfigError> {
        self.get(key)
            .map(|v| {
                v.as_u64()
                    .ok_or_else(|| self.wrong(key, "a non-negative integer", v))
            })
            .transpose()
    }

    fn u64(&self, key: &str) -> Result<u64, ConfigError> {
        self.opt_u64(key)?.ok_or_else(|| self.missing(key))
    }

    fn bool(&self, key: &str) -> Result<bool, ConfigError> {
        let v = self.get(key).ok_or_else(|| self.missing(key))?;
        v.as_bool()
            .ok_or_else(|| self.wrong(key, "true or false", v))
    }

    fn strings(&self, key: &str) -> Result<Vec<String>, ConfigError> {
        let Some(v) = self.get(key) else {
            return Ok(Vec::new());
        };
        v.as_array()
            .and_then(|a| a.iter().map(|x| x.as_str().map(str::to_string)).collect())
            .ok_or_else(|| self.wrong(key, "a list of strings", v))
    }

    fn object(&self, key: &str) -> Result<Option<Row<'a>>, ConfigError> {
        self.get(key)
            .map(|v| {
                v.as_object()
                    .map(|map| Row {
                        what: self.what,
                        map,
                    })
                    .ok_or_else(|| self.wrong(key, "an object", v))
            })
            .transpose()
    }
}

/// Parses one catalog model file: the row's metadata around a `config.json`.
pub fn parse_model_row(text: &str) -> Result<ModelRow, ConfigError> {
    let v = json::parse(text)
        .map_err(|e| ConfigError::new("catalog row", format!("not a catalog row: {e}")))?;
    let row = Row::new("catalog row", &v)?;
    let config = row.get("config").ok_or_else(|| row.missing("config"))?;
    let mut model = parse_config_value(config)?;
    let name = row.str("name")?;
    model.name = name.clone();
    let mut checkpoint_source = None;
    if let Some(c) = row.object("checkpoint")? {
        model.checkpoint_bytes = Some(c.u64("total_bytes")?);
        checkpoint_source = Some(c.str("source")?);
    }
    if let Some(m) = row.object("measured")? {
        let source = m.str("source")?;
        let tp = m.opt_u64("tp")?;
        if let (Some(pool), Some(tokens)) = (m.opt_u64("kv_pool_bytes")?, m.opt_u64("kv_tokens")?) {
            model.measured_kv = Some(MeasuredKv {
                pool_bytes: pool,
                tokens,
                tp: tp
                    .map(u32::try_from)
                    .transpose()
                    .map_err(|_| ConfigError::new("tp", "catalog row: measured.tp is too large"))?
                    .unwrap_or(1),
                source,
            });
        }
    }
    Ok(ModelRow {
        id: row.str("id")?,
        name,
        hf_repo: row.opt_str("hf_repo")?.unwrap_or_default(),
        source: row.str("source")?,
        retrieved: row.str("retrieved")?,
        model,
        unconfirmed: row.strings("unconfirmed")?,
        notes: row.opt_str("notes")?.unwrap_or_default(),
        checkpoint_source,
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
    let v = json::parse(text)
        .map_err(|e| ConfigError::new("gpus.json", format!("not a GPU list: {e}")))?;
    let list = v.as_array().ok_or_else(|| {
        ConfigError::new(
            "gpus.json",
            format!("not a GPU list: a JSON array is expected, not {}", v.kind()),
        )
    })?;
    list.iter()
        .map(|g| {
            let g = Row::new("gpus.json", g)?;
            Ok(GpuRow {
                gpu: Gpu {
                    id: g.str("id")?,
                    name: g.str("name")?,
                    total: Bytes(g.u64("total_bytes")?),
                    total_confirmed: g.bool("total_bytes_confirmed")?,
                    unified_memory: g.bool("unified_memory")?,
                    compute_capability: parse_cc(g.opt_str("compute_capability")?.as_deref()),
                },
                memory_marketing: g.opt_str("memory_marketing")?.unwrap_or_default(),
                source: g.str("source")?,
                retrieved: g.str("retrieved")?,
                basis: g.str("total_bytes_basis")?,
            })
        })
        .collect()
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
    // The id as typed, or as a name reads (`Qwen3 14B` is `qwen3-14b`): any case, spaces or
    // underscores for hyphens.
    let slug: String = id
        .trim()
        .chars()
        .map(|c| match c {
            ' ' | '_' => '-',
            c => c.to_ascii_lowercase(),
        })
        .collect();
    let Some(i) = MODEL_FILES
        .iter()
        .position(|(file_id, _)| *file_id == id || *file_id == slug)
    else {
        // The Hugging Face repo, as `vllm serve` takes it (`meta-llama/Llama-3.1-8B-Instruct`).
        return models()
            .iter()
            .find(|r| r.hf_repo.eq_ignore_ascii_case(id.trim()));
    };
    let id = MODEL_FILES[i].0;
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
    gpus()
        .iter()
        .find(|r| r.gpu.id.eq_ignore_ascii_case(id.trim()))
}

/// A GPU the user describes only by its total (`--gpu-memory`).
/// Applies a total read from the driver (`--gpu-memory`, the page's `gpu-memory`): `alone`
/// (no GPU chosen), a custom GPU of that total; otherwise the chosen GPU with its total
/// replaced, which is then a measurement of this very GPU.
pub fn set_gpu_total(gpu: &mut Gpu, total: u64, alone: bool) {
    if alone {
        *gpu = custom_gpu(total);
        return;
    }
    if gpu.id != "custom" && gpu.total.0 != total {
        gpu.name = format!(
            "{} (total given: {} B)",
            gpu.name,
            crate::calc::units::thousands(u128::from(total))
        );
    }
    gpu.total = Bytes(total);
    gpu.total_confirmed = true;
}

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
