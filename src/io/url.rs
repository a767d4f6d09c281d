//! URL state: the form's inputs as a readable query string, and back.
//!
//! The state is the text of every input the user set, keyed by [`Field`]; an input not in the
//! state takes its default (vLLM's, or the loaded example's). Only valid texts enter a
//! [`UrlState`]: [`decode`] checks each parameter with the same rules the form uses and returns
//! the ones it ignored with a reason, so a malformed or hostile URL never fails the page.
//! [`scenario`] turns a state into the `calc::Scenario` the page plans.
//!
//! Keys are vLLM's flag names, shortened where the flag is long (`tp`, `util`, `kv-bytes`); `v` is
//! the format version. A custom model's pasted config.json travels base64url-encoded in `config`.
//!
//! ```
//! use headroom::io::url::{decode, encode, Field};
//! let d = decode("?v=1&tp=4&util=0.92&tp=8&bogus=1");
//! assert_eq!(d.state.get(Field::Tp), Some("4"));
//! assert_eq!(d.ignored.len(), 2); // the repeated tp and the unknown key
//! assert_eq!(encode(&d.state), "v=1&tp=4&util=0.92");
//! ```

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Mutex, OnceLock};

use crate::calc::model::Model;
use crate::calc::scenario::{
    parse_attention_backend, KvCacheDtype, MaxLen, Measured, Scenario, Speculative, StageTerm,
    Unified,
};
use crate::calc::units::{parse_bytes, Bytes, UnitSystem};
use crate::calc::version::VllmVersion;
use crate::catalog;

/// The inputs, by their old name here: `calc::Input` is the one closed set.
pub use crate::calc::input::Input as Field;

/// The format version this code writes as `v=`.
pub const FORMAT_VERSION: u32 = 1;

/// Longest value accepted for any parameter but `config` (characters after percent-decoding).
const MAX_VALUE_LEN: usize = 4096;
/// Longest pasted config.json accepted in `config` (bytes, after base64url decoding).
const MAX_CONFIG_LEN: usize = 256 * 1024;
/// A notice lists at most this many ignored parameters; a summary line stands for the rest.
const MAX_NOTICES: usize = 20;

/// The value rule of a field: what text it accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Rule {
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

impl Field {
    fn rule(self) -> Rule {
        match self {
            Field::Example => Rule::ExampleId,
            Field::Model | Field::DraftModel => Rule::ModelId,
            Field::Config => Rule::Config,
            Field::Gpu => Rule::GpuId,
            Field::Gpus => Rule::Count {
                min: 1,
                max: 65_536,
            },
            Field::Tp | Field::Pp => Rule::Count { min: 1, max: 1_024 },
            Field::Dp => Rule::Count { min: 1, max: 4_096 },
            Field::PpPartition => Rule::Partition,
            Field::Ep | Field::Eager | Field::NoHybrid | Field::NoAsync => Rule::Bool,
            Field::Util => Rule::Fraction,
            Field::KvBytes
            | Field::GpuMemory
            | Field::Drafter
            | Field::Activation
            | Field::NonTorch
            | Field::CudaGraph
            | Field::LoadPeak
            | Field::Free
            | Field::Tenants
            | Field::MemAvailable
            | Field::Headroom
            | Field::Overhead => Rule::Bytes,
            Field::Weights | Field::AvailableKv => Rule::BytesList,
            Field::MaxModelLen => Rule::MaxLen,
            Field::MaxNumSeqs => Rule::Count {
                min: 1,
                max: 1 << 20,
            },
            Field::MaxNumBatchedTokens | Field::AvgLen => Rule::Count {
                min: 1,
                max: 1 << 31,
            },
            Field::KvDtype => Rule::KvDtype,
            Field::AttnBackend => Rule::AttnBackend,
            Field::BlockSize => Rule::Count {
                min: 1,
                max: 1 << 20,
            },
            Field::NumGpuBlocksOverride => Rule::Count {
                min: 1,
                max: 1 << 40,
            },
            Field::Spec => Rule::Method,
            Field::SpecTokens => Rule::Count { min: 1, max: 64 },
            Field::Vllm => Rule::Version,
            Field::Unit => Rule::Unit,
        }
    }

    /// Checks a text for this field with the rule the form and the URL share; the error says
    /// what is wrong, naming the flag.
    pub fn validate(self, text: &str) -> Result<(), String> {
        let t = text.trim();
        if t.is_empty() {
            return Ok(());
        }
        let limit = if self == Field::Config {
            MAX_CONFIG_LEN
        } else {
            MAX_VALUE_LEN
        };
        if t.len() > limit {
            return Err(format!(
                "{}: the value is longer than {limit} characters",
                self.flag()
            ));
        }
        let flag = self.flag();
        match self.rule() {
            Rule::Count { min, max } => parse_count(t, min, max).map(drop),
            Rule::Bytes => parse_bytes(t).map(drop).map_err(|e| format!("{flag}: {e}")),
            Rule::BytesList => parse_bytes_list(t)
                .map(drop)
                .map_err(|e| format!("{flag}: {e}")),
            Rule::Partition => parse_partition(t).map(drop),
            Rule::Fraction => parse_fraction(t).map(drop),
            Rule::Bool => parse_bool(t).map(drop),
            Rule::MaxLen => parse_max_len(t).map(drop),
            Rule::KvDtype => KvCacheDtype::parse(t).map(drop),
            Rule::AttnBackend => parse_attention_backend(t).map(drop),
            Rule::Version => VllmVersion::parse(t).map(drop),
            Rule::Unit => parse_unit(t).map(drop),
            Rule::Method => parse_method(t).map(drop),
            Rule::ModelId => model_row(self, t).map(drop),
            Rule::GpuId => catalog::gpu(t)
                .map(drop)
                .ok_or_else(|| format!("gpu {t:?} is not in the catalog")),
            Rule::ExampleId => catalog::examples::info(t)
                .map(drop)
                .ok_or_else(|| format!("example {t:?} is not one of the seed examples")),
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

/// The inputs the user set, as the texts they typed. Only valid, non-empty texts are stored.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UrlState {
    texts: BTreeMap<Field, String>,
}

impl UrlState {
    /// The text of a field the user set.
    pub fn get(&self, field: Field) -> Option<&str> {
        self.texts.get(&field).map(String::as_str)
    }

    /// Sets a field after checking it; an empty text clears it. A rejected text leaves the
    /// state unchanged.
    pub fn set(&mut self, field: Field, text: &str) -> Result<(), String> {
        let t = trim_text(field, text);
        if t.is_empty() {
            self.texts.remove(&field);
            return Ok(());
        }
        field.validate(t)?;
        self.texts.insert(field, t.to_string());
        Ok(())
    }

    /// The fields set, in query order.
    pub fn iter(&self) -> impl Iterator<Item = (Field, &str)> {
        self.texts.iter().map(|(f, t)| (*f, t.as_str()))
    }

    pub fn is_empty(&self) -> bool {
        self.texts.is_empty()
    }

    /// The unit figures are shown in (`unit=`), binary GiB when unset.
    pub fn unit(&self) -> UnitSystem {
        self.get(Field::Unit)
            .and_then(|t| parse_unit(t).ok())
            .unwrap_or_default()
    }
}

/// Config text keeps its inner whitespace; every other field is trimmed.
fn trim_text(field: Field, text: &str) -> &str {
    if field == Field::Config {
        if text.trim().is_empty() {
            ""
        } else {
            text
        }
    } else {
        text.trim()
    }
}

/// A parameter `decode` did not use, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ignored {
    /// The key as given, shortened and with control characters removed (safe to show).
    pub key: String,
    pub reason: String,
}

/// What `decode` found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Decoded {
    pub state: UrlState,
    /// The format version given in `v`, if any.
    pub version: Option<u32>,
    /// Parameters left out, in the order met.
    pub ignored: Vec<Ignored>,
}

/// Writes a state as a query string (without the leading `?`): `v` first, then the fields in
/// [`Field::ALL`] order. `config` is base64url-encoded; other values are percent-encoded where
/// needed and otherwise stay readable.
pub fn encode(state: &UrlState) -> String {
    let mut out = format!("v={FORMAT_VERSION}");
    for (field, text) in state.iter() {
        out.push('&');
        out.push_str(field.key());
        out.push('=');
        if field == Field::Config {
            out.push_str(&base64url_encode(text.as_bytes()));
        } else {
            percent_encode_into(text, &mut out);
        }
    }
    out
}

/// The longest query a link keeps: servers refuse longer request lines (nginx's default
/// buffer is 8 KiB, Python's http.server 64 KiB), so past it a pasted config travels in the
/// fragment, which the browser never sends.
pub const MAX_QUERY_LEN: usize = 2_000;

/// A state as the page's link ends: `?query`, with `#config=...` instead of `&config=...`
/// when the query would be longer than [`MAX_QUERY_LEN`]. [`decode`] reads both.
pub fn link(state: &UrlState) -> String {
    let query = encode(state);
    match state.get(Field::Config) {
        Some(config) if query.len() > MAX_QUERY_LEN => {
            let mut rest = state.clone();
            rest.texts.remove(&Field::Config);
            format!(
                "?{}#{}={}",
                encode(&rest),
                Field::Config.key(),
                base64url_encode(config.as_bytes())
            )
        }
        _ => format!("?{query}"),
    }
}

/// The texts of the inputs as typed, valid or not, in the query's form (`key=value&...`,
/// percent-encoded): what the page keeps for a reload, so a text still being fixed is not lost.
pub fn encode_texts(texts: &[(Field, &str)]) -> String {
    let mut out = String::new();
    for (field, text) in texts.iter().filter(|(_, t)| !t.is_empty()) {
        if !out.is_empty() {
            out.push('&');
        }
        out.push_str(field.key());
        out.push('=');
        percent_encode_into(text, &mut out);
    }
    out
}

/// Reads [`encode_texts`]' form back; unknown keys and malformed values are skipped.
pub fn decode_texts(s: &str) -> Vec<(Field, String)> {
    s.split('&')
        .filter_map(|part| {
            let (k, v) = part.split_once('=')?;
            Some((Field::from_key(k)?, percent_decode(v).ok()?))
        })
        .collect()
}

/// Reads a query string (with or without the leading `?`, or a whole URL), and the parameters
/// of its fragment (`#config=...`, see [`link`]; a fragment without `=` is an anchor and is
/// not read). Never fails: every parameter it cannot use is listed in `ignored` with the
/// reason.
pub fn decode(query: &str) -> Decoded {
    let mut d = Decoded::default();
    let mut q = query.trim();
    if let Some(i) = q.find('?') {
        q = &q[i + 1..];
    }
    let mut fragment = "";
    if let Some(i) = q.find('#') {
        fragment = &q[i + 1..];
        q = &q[..i];
    }
    let mut seen: Vec<Field> = Vec::new();
    let mut seen_v = false;
    let mut dropped = 0usize;
    let mut ignore = |d: &mut Decoded, key: &str, reason: String| {
        if d.ignored.len() < MAX_NOTICES {
            d.ignored.push(Ignored {
                key: safe_key(key),
                reason,
            });
        } else {
            dropped += 1;
        }
    };
    let fragment_parts = fragment.split('&').filter(|p| p.contains('='));
    for part in q.split('&').chain(fragment_parts) {
        if part.is_empty() {
            continue;
        }
        let (raw_key, raw_value) = part.split_once('=').unwrap_or((part, ""));
        let key = match percent_decode(raw_key) {
            Ok(k) => k,
            Err(why) => {
                ignore(&mut d, raw_key, format!("the key is malformed: {why}"));
                continue;
            }
        };
        if key == "v" {
            if seen_v {
                ignore(
                    &mut d,
                    &key,
                    "repeated; only the first value is read".into(),
                );
                continue;
            }
            seen_v = true;
            match raw_value.parse::<u32>() {
                Ok(v) if v == FORMAT_VERSION => d.version = Some(v),
                Ok(v) => {
                    d.version = Some(v);
                    ignore(
                        &mut d,
                        "v",
                        format!(
                            "format version {v} is not this page's version {FORMAT_VERSION}; \
                             the parameters were read as version {FORMAT_VERSION}"
                        ),
                    );
                }
                Err(_) => ignore(
                    &mut d,
                    "v",
                    format!(
                        "the format version must be a number (this page writes {FORMAT_VERSION})"
                    ),
                ),
            }
            continue;
        }
        let Some(field) = Field::from_key(&key) else {
            ignore(&mut d, &key, "unknown parameter".into());
            continue;
        };
        if seen.contains(&field) {
            ignore(
                &mut d,
                &key,
                "repeated; only the first value is read".into(),
            );
            continue;
        }
        seen.push(field);
        let value = if field == Field::Config {
            decode_config(raw_value)
        } else {
            percent_decode(raw_value).map_err(|why| format!("the value is malformed: {why}"))
        };
        let value = match value {
            Ok(v) => v,
            Err(why) => {
                ignore(&mut d, &key, why);
                continue;
            }
        };
        if trim_text(field, &value).is_empty() {
            ignore(&mut d, &key, "empty value; the default is used".into());
            continue;
        }
        if let Err(why) = d.state.set(field, &value) {
            // The notice already names the key: "gpus: gpus: ..." would say it twice.
            let why = why
                .strip_prefix(&format!("{key}: "))
                .map_or(why.clone(), str::to_string);
            ignore(&mut d, &key, why);
        }
    }
    if dropped > 0 {
        d.ignored.push(Ignored {
            key: "…".into(),
            reason: format!("and {dropped} more parameters"),
        });
    }
    d
}

/// A key made safe to show: control characters dropped, at most 40 characters.
fn safe_key(key: &str) -> String {
    let cleaned: String = key.chars().filter(|c| !c.is_control()).collect();
    if cleaned.chars().count() > 40 {
        let mut s: String = cleaned.chars().take(39).collect();
        s.push('…');
        s
    } else if cleaned.is_empty() {
        "(empty key)".into()
    } else {
        cleaned
    }
}

/// `config=`: base64url (the form `encode` writes), or a percent-encoded JSON text.
fn decode_config(raw: &str) -> Result<String, String> {
    if raw.len() > MAX_CONFIG_LEN * 2 {
        return Err(format!("the config is longer than {MAX_CONFIG_LEN} bytes"));
    }
    if let Some(bytes) = base64url_decode(raw) {
        return String::from_utf8(bytes).map_err(|_| "the config is not UTF-8 text".to_string());
    }
    let text = percent_decode(raw).map_err(|why| format!("the value is malformed: {why}"))?;
    if text.trim_start().starts_with('{') {
        Ok(text)
    } else {
        Err("the config is neither base64url nor a JSON object".into())
    }
}

/// The catalog row a model field names (an id or a Hugging Face repo), or why not, in words
/// fit for that field.
fn model_row(field: Field, text: &str) -> Result<&'static catalog::ModelRow, String> {
    catalog::model(text).ok_or_else(|| {
        if field == Field::DraftModel {
            format!("draft-model {text:?} is not in the catalog (a catalog id or its Hugging Face repo; the CLI also reads a config.json path in the speculative config's model)")
        } else {
            format!("model {text:?} is not in the catalog (pick one from the list, or paste its config.json below)")
        }
    })
}

/// Characters left as they are in a value: RFC 3986 unreserved plus a few that read well and
/// mean nothing special inside a query value (`/` keeps a Hugging Face repo readable).
fn is_plain(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b',' | b':' | b'/')
}

fn percent_encode_into(text: &str, out: &mut String) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    for &b in text.as_bytes() {
        if is_plain(b) {
            out.push(b as char);
        } else {
            out.push('%');
            out.push(HEX[usize::from(b >> 4)] as char);
            out.push(HEX[usize::from(b & 15)] as char);
        }
    }
}

/// Percent-decoding as `application/x-www-form-urlencoded` does it (`+` is a space), but strict:
/// a `%` not followed by two hex digits, or bytes that are not UTF-8, are errors.
fn percent_decode(s: &str) -> Result<String, String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' => {
                let hex = |b: u8| (b as char).to_digit(16);
                let (Some(h), Some(l)) = (
                    bytes.get(i + 1).copied().and_then(hex),
                    bytes.get(i + 2).copied().and_then(hex),
                ) else {
                    return Err("a % is not followed by two hex digits".into());
                };
                out.push((h * 16 + l) as u8);
                i += 3;
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).map_err(|_| "it is not UTF-8 text".to_string())
}

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// Base64url without padding (RFC 4648 §5).
pub fn base64url_encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &b)| n | (u32::from(b) << (16 - 8 * i)));
        let chars = chunk.len() + 1;
        for i in 0..chars {
            out.push(B64[((n >> (18 - 6 * i)) & 63) as usize] as char);
        }
    }
    out
}

/// Reads base64url, padded or not; `None` for any other character or a bad length.
pub fn base64url_decode(s: &str) -> Option<Vec<u8>> {
    let s = s.trim_end_matches('=');
    if s.len() % 4 == 1 {
        return None;
    }
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    for chunk in s.as_bytes().chunks(4) {
        let mut n = 0u32;
        for (i, &c) in chunk.iter().enumerate() {
            let v = B64.iter().position(|&b| b == c)? as u32;
            n |= v << (18 - 6 * i);
        }
        for i in 0..chunk.len() - 1 {
            out.push((n >> (16 - 8 * i)) as u8);
        }
    }
    Some(out)
}

/// A count in vLLM's `human_readable_int` forms ([`crate::calc::units::parse_count`]) within
/// `[min, max]`.
pub fn parse_count(text: &str, min: u64, max: u64) -> Result<u64, String> {
    let n = crate::calc::units::parse_count(text).map_err(|e| e.0)?;
    in_range(n, min, max)
}

/// `n` if it lies in `[min, max]`, else a message that says so in words.
pub fn in_range(n: u64, min: u64, max: u64) -> Result<u64, String> {
    use crate::calc::units::Grouped;
    if n < min || n > max {
        return Err(format!(
            "{} must be between {} and {}",
            Grouped(i128::from(n)),
            Grouped(i128::from(min)),
            Grouped(i128::from(max))
        ));
    }
    Ok(n)
}

/// The pieces of a per-stage list: `,`, `;` and `/` separate stages, except that a single
/// integer written with thousands separators (`1,073,741,824`) is one value. The CLI and the
/// page share this rule.
pub fn split_bytes_list(text: &str) -> Vec<&str> {
    let t = text.trim();
    let grouped_integer = t.contains(',')
        && crate::calc::units::thousands_free(t)
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    if text.contains([';', '/']) {
        text.split([';', '/']).collect()
    } else if text.contains(',') && !grouped_integer {
        text.split(',').collect()
    } else {
        vec![text]
    }
}

/// One byte count, or one per stage; `-` for a stage that keeps its estimate. An error in one
/// value of a list names its stage.
pub fn parse_bytes_list(text: &str) -> Result<Vec<Option<u64>>, String> {
    let pieces = split_bytes_list(text);
    if pieces.len() > 1_024 {
        return Err("more than 1,024 values".into());
    }
    let many = pieces.len() > 1;
    let values: Vec<Option<u64>> = pieces
        .iter()
        .enumerate()
        .map(|(i, p)| match p.trim() {
            "-" => Ok(None),
            t => parse_bytes(t).map(Some).map_err(|e| {
                if many {
                    format!("stage {i}: {}", e.0)
                } else {
                    e.0
                }
            }),
        })
        .collect::<Result<_, _>>()?;
    if values.iter().all(Option::is_none) {
        return Err("no value given (- keeps a stage's estimate)".into());
    }
    Ok(values)
}

/// `VLLM_PP_LAYER_PARTITION`: comma-separated layer counts.
pub fn parse_partition(text: &str) -> Result<Vec<u32>, String> {
    let parts: Vec<&str> = text.split(',').collect();
    if parts.len() > 1_024 {
        return Err("more than 1,024 stages".into());
    }
    // vLLM's get_pp_indices takes any whole counts (a stage of 0 layers included) that sum to
    // the model's layers; the sum is checked where the model is known.
    parts
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let p = p.trim();
            if p.is_empty() {
                return Err(format!(
                    "stage {i} is empty: give every stage a layer count, e.g. 14,15,14"
                ));
            }
            p.parse::<u32>()
                .ok()
                .filter(|n| *n <= 100_000)
                .ok_or_else(|| {
                    format!("stage {i}: {p:?} is not a layer count from 0 to 100,000; write e.g. 14,15,14")
                })
        })
        .collect()
}

/// `--gpu-memory-utilization`: a fraction in (0, 1].
pub fn parse_fraction(text: &str) -> Result<f64, String> {
    let x = crate::calc::decimal::parse_f64(text.trim())
        .ok_or_else(|| format!("{:?} is not a number like 0.92", text.trim()))?;
    if !(x > 0.0 && x <= 1.0) {
        return Err(format!("{} must be in (0, 1]", text.trim()));
    }
    Ok(x)
}

pub fn parse_bool(text: &str) -> Result<bool, String> {
    match text.trim().to_ascii_lowercase().as_str() {
        "true" | "1" | "yes" | "on" => Ok(true),
        "false" | "0" | "no" | "off" => Ok(false),
        other => Err(format!(
            "{other:?} is not true or false (1/0, yes/no and on/off also work)"
        )),
    }
}

/// `--max-model-len`: a count, or `auto` / `-1` (vLLM fits the longest length the pool holds).
pub fn parse_max_len(text: &str) -> Result<MaxLen, String> {
    match text.trim() {
        t if t.eq_ignore_ascii_case("auto") || t == "-1" => Ok(MaxLen::Auto),
        t => parse_count(t, 1, 1 << 31).map(MaxLen::Value),
    }
}

pub fn parse_unit(text: &str) -> Result<UnitSystem, String> {
    match text.trim().to_ascii_lowercase().as_str() {
        "gib" => Ok(UnitSystem::Binary),
        "gb" => Ok(UnitSystem::Decimal),
        other => Err(format!("unit {other:?} is not gib or gb")),
    }
}

/// The `unit=` text for a unit system.
pub fn unit_text(unit: UnitSystem) -> &'static str {
    match unit {
        UnitSystem::Binary => "gib",
        UnitSystem::Decimal => "gb",
    }
}

/// The speculative methods vLLM knows whose memory Headroom plans, after `none` (first: the
/// CLI's speculative config takes the rest, and `null` for none).
pub const SPEC_METHODS: [&str; 8] = [
    "none",
    "mtp",
    "deepseek_mtp",
    "dspark",
    "eagle",
    "eagle3",
    "draft_model",
    "ngram",
];

/// A speculative method: `None` for `none`.
pub fn parse_method(text: &str) -> Result<Option<String>, String> {
    let t = text.trim();
    match SPEC_METHODS.iter().find(|m| **m == t) {
        Some(&"none") => Ok(None),
        Some(m) => Ok(Some((*m).to_string())),
        None => Err(format!("{t:?} is not one of {}", SPEC_METHODS.join(", "))),
    }
}

/// Why a state could not become a scenario: the field to flag and the message to show there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputError {
    pub field: Field,
    pub message: String,
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// A pasted config.json as a model, through the catalog's parser. The last text and its
/// result are kept: the page checks and plans the same config on every other input's change.
pub fn parse_config(text: &str) -> Result<Model, String> {
    type Last = Option<(String, Result<Model, String>)>;
    static LAST: Mutex<Last> = Mutex::new(None);
    let mut last = LAST.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((t, r)) = last.as_ref() {
        if t == text {
            return r.clone();
        }
    }
    let r = catalog::parse_config_json(text).map_err(|e| e.to_string());
    *last = Some((text.to_string(), r.clone()));
    r
}

/// The seed examples' menu entries (static: listing them builds no scenario).
pub fn examples() -> &'static [catalog::examples::ExampleInfo] {
    &catalog::examples::INFO
}

/// The scenario of one seed example, built once per example: every plan of an example
/// scenario starts from it, and building it parses catalog rows.
fn example_scenario(id: &str) -> Option<&'static Scenario> {
    static BUILT: [OnceLock<Scenario>; catalog::examples::INFO.len()] =
        [const { OnceLock::new() }; catalog::examples::INFO.len()];
    let i = catalog::examples::INFO
        .iter()
        .position(|e| e.id.eq_ignore_ascii_case(id.trim()))?;
    Some(BUILT[i].get_or_init(catalog::examples::INFO[i].build))
}

/// A boolean flag's value in a scenario (`None` for a field that is not a flag).
pub fn flag_value(field: Field, s: &Scenario) -> Option<bool> {
    match field {
        Field::Ep => Some(s.parallel.expert_parallel),
        Field::Eager => Some(s.engine.enforce_eager),
        Field::NoHybrid => Some(s.engine.disable_hybrid_kv_cache_manager),
        Field::NoAsync => Some(s.engine.no_async_scheduling),
        _ => None,
    }
}

/// The text a flag's checkbox writes into the state: `true` when on; when off, nothing (the
/// key leaves the URL) unless the base scenario, an example's, has the flag on, which `false`
/// then overrides.
pub fn flag_text(state: &UrlState, field: Field, on: bool) -> &'static str {
    if on {
        return "true";
    }
    let base_on = state
        .get(Field::Example)
        .and_then(example_scenario)
        .and_then(|s| flag_value(field, s))
        .unwrap_or(false);
    if base_on {
        "false"
    } else {
        ""
    }
}

/// The catalog model a page without state starts from.
pub const DEFAULT_MODEL: &str = "llama-3.1-8b-instruct";
/// The catalog GPU a page without state starts from.
pub const DEFAULT_GPU: &str = "h100-sxm-80gb";

/// The base scenario of a state: the example's, else the chosen (or default) model on the
/// chosen (or default) GPU with vLLM's defaults.
fn base(state: &UrlState) -> Result<Scenario, InputError> {
    if let Some(id) = state.get(Field::Example) {
        if let Some(s) = example_scenario(id) {
            return Ok(s.clone());
        }
        return Err(InputError {
            field: Field::Example,
            message: format!("example {id:?} is not one of the seed examples"),
        });
    }
    let model = catalog::model(DEFAULT_MODEL)
        .or_else(|| catalog::models().first())
        .map(|r| r.model.clone());
    let gpu = catalog::gpu(DEFAULT_GPU)
        .or_else(|| catalog::gpus().first())
        .map(|r| r.gpu.clone());
    match (model, gpu) {
        (Some(m), Some(g)) => Ok(Scenario::new(m, g)),
        _ => Err(InputError {
            field: Field::Model,
            message: "the catalog is empty".into(),
        }),
    }
}

/// The scenario a state describes: the base scenario with every field the user set applied.
/// Texts in a `UrlState` are already valid, so the errors here are the ones only the
/// combination shows (an unknown id from a hand-built state, a bad config).
pub fn scenario(state: &UrlState) -> Result<Scenario, InputError> {
    let mut s = base(state)?;
    let fail = |field: Field, message: String| InputError { field, message };
    let measured = |field: Field, text: &str| -> Result<Measured, InputError> {
        let bytes = parse_bytes(text).map_err(|e| fail(field, format!("{}: {e}", field.flag())))?;
        Ok(Measured::new(
            bytes,
            format!("given: --{} {text}", field.flag()),
        ))
    };
    // The gate's other terms tune a gate that only MemAvailable (or an example) turns on.
    let gated = s.unified.is_some() || state.get(Field::MemAvailable).is_some();
    for (field, text) in state.iter() {
        let err = |m: String| fail(field, m);
        if matches!(field, Field::Headroom | Field::Overhead) && !gated {
            return Err(err(format!(
                "{} belongs to the unified-memory gate; give mem-available to turn it on",
                field.flag()
            )));
        }
        match field {
            Field::Example | Field::Unit => {}
            Field::Model => {
                s.model = model_row(field, text).map_err(err)?.model.clone();
            }
            Field::Config => {
                s.model = parse_config(text).map_err(err)?;
            }
            Field::Gpu => {
                let row = catalog::gpu(text)
                    .ok_or_else(|| err(format!("gpu {text:?} is not in the catalog")))?;
                s.gpu = row.gpu.clone();
            }
            Field::Gpus => s.gpus = count(field, text)? as u32,
            Field::Tp => s.parallel.tp = count(field, text)? as u32,
            Field::Pp => s.parallel.pp = count(field, text)? as u32,
            Field::Dp => s.parallel.dp = count(field, text)? as u32,
            Field::PpPartition => {
                s.parallel.pp_layer_partition = Some(parse_partition(text).map_err(err)?)
            }
            Field::Ep => s.parallel.expert_parallel = parse_bool(text).map_err(err)?,
            Field::Util => {
                s.engine.gpu_memory_utilization = Some(parse_fraction(text).map_err(err)?)
            }
            Field::KvBytes => {
                s.engine.kv_cache_memory_bytes = Some(parse_bytes(text).map_err(|e| err(e.0))?)
            }
            Field::MaxModelLen => s.engine.max_model_len = parse_max_len(text).map_err(err)?,
            Field::MaxNumSeqs => s.engine.max_num_seqs = Some(count(field, text)?),
            Field::MaxNumBatchedTokens => {
                s.engine.max_num_batched_tokens = Some(count(field, text)?)
            }
            Field::KvDtype => s.engine.kv_cache_dtype = KvCacheDtype::parse(text).map_err(err)?,
            Field::BlockSize => s.engine.block_size = Some(count(field, text)?),
            Field::Eager => s.engine.enforce_eager = parse_bool(text).map_err(err)?,
            Field::NumGpuBlocksOverride => {
                s.engine.num_gpu_blocks_override = Some(count(field, text)?)
            }
            Field::Spec => match parse_method(text).map_err(err)? {
                None => s.engine.speculative = None,
                Some(method) => {
                    let old = s.engine.speculative.take();
                    s.engine.speculative = Some(Speculative {
                        draft_model: None,
                        num_speculative_tokens: old
                            .as_ref()
                            .map_or(1, |o| o.num_speculative_tokens),
                        // An example's drafter brings its count; otherwise 1 stands in
                        // until spec-tokens gives one (the plan notes it).
                        count_assumed: old.as_ref().map_or(true, |o| o.count_assumed),
                        // An example's drafter measurement belongs to its method: another
                        // method's drafter is estimated (or given with drafter-weights).
                        // (every MTP name builds the same drafter: vLLM reads them as mtp).
                        drafter_weights: old
                            .filter(|o| {
                                o.method == method
                                    || (o.method.contains("mtp") && method.contains("mtp"))
                            })
                            .and_then(|o| o.drafter_weights),
                        method,
                    });
                }
            },
            // Applied after the loop, once the method (or the GPU) is known.
            Field::SpecTokens | Field::Drafter | Field::DraftModel | Field::GpuMemory => {}
            Field::NoHybrid => {
                s.engine.disable_hybrid_kv_cache_manager = parse_bool(text).map_err(err)?
            }
            Field::NoAsync => s.engine.no_async_scheduling = parse_bool(text).map_err(err)?,
            Field::AttnBackend => {
                s.engine.attention_backend = parse_attention_backend(text).map_err(err)?
            }
            Field::Vllm => s.version = VllmVersion::parse(text).map_err(err)?,
            Field::Weights => s
                .runtime
                .set_per_stage(StageTerm::Weights, measured_list(field, text)?),
            Field::Activation => s.runtime.activation_peak = Some(measured(field, text)?),
            Field::NonTorch => s.runtime.non_torch = Some(measured(field, text)?),
            Field::CudaGraph => s.runtime.cuda_graph = Some(measured(field, text)?),
            Field::LoadPeak => s.runtime.load_peak = Some(measured(field, text)?),
            Field::Free => s.runtime.free_memory = Some(measured(field, text)?),
            Field::AvailableKv => s
                .runtime
                .set_per_stage(StageTerm::AvailableKv, measured_list(field, text)?),
            Field::Tenants => {
                s.runtime.other_tenants = Bytes(parse_bytes(text).map_err(|e| err(e.0))?)
            }
            Field::MemAvailable => {
                s.unified.get_or_insert_with(Unified::default).mem_available =
                    measured(field, text)?
            }
            Field::Headroom => {
                s.unified.get_or_insert_with(Unified::default).headroom =
                    Bytes(parse_bytes(text).map_err(|e| err(e.0))?)
            }
            Field::Overhead => {
                s.unified.get_or_insert_with(Unified::default).overhead =
                    Some(measured(field, text)?)
            }
            Field::AvgLen => s.average_request_len = Some(count(field, text)?),
        }
    }
    // The drafter's terms need a drafter (the CLI refuses them the same way).
    let no_drafter = |field: Field| {
        fail(
            field,
            format!(
                "{} belongs to speculative decoding; choose a method in spec (speculative-config) first",
                field.flag()
            ),
        )
    };
    if let Some(text) = state.get(Field::SpecTokens) {
        let n = count(Field::SpecTokens, text)? as u32;
        let spec = s
            .engine
            .speculative
            .as_mut()
            .ok_or_else(|| no_drafter(Field::SpecTokens))?;
        spec.num_speculative_tokens = n;
        spec.count_assumed = false;
    }
    if let Some(text) = state.get(Field::Drafter) {
        let m = measured(Field::Drafter, text)?;
        let spec = s
            .engine
            .speculative
            .as_mut()
            .ok_or_else(|| no_drafter(Field::Drafter))?;
        spec.drafter_weights = Some(m);
    }
    if let Some(text) = state.get(Field::DraftModel) {
        let row = model_row(Field::DraftModel, text).map_err(|e| fail(Field::DraftModel, e))?;
        let spec = s
            .engine
            .speculative
            .as_mut()
            .filter(|sp| sp.method == "draft_model")
            .ok_or_else(|| {
                fail(
                    Field::DraftModel,
                    "draft-model names the drafter of the draft_model method; choose draft_model in spec (speculative-config) first".into(),
                )
            })?;
        spec.draft_model = Some(Box::new(row.model.clone()));
    }
    if let Some(text) = state.get(Field::GpuMemory) {
        let total = parse_bytes(text).map_err(|e| fail(Field::GpuMemory, e.0))?;
        let alone = state.get(Field::Gpu).is_none() && state.get(Field::Example).is_none();
        catalog::set_gpu_total(&mut s.gpu, total, alone);
    }
    // An example's measurements give way to the user's changes (the CLI applies the same rule).
    if state.get(Field::Example).is_some() {
        let example = base(state)?;
        let typed = |flag: &str| Field::from_flag(flag).is_some_and(|f| state.get(f).is_some());
        catalog::examples::give_way(&mut s, &example, typed).map_err(|(flag, message)| {
            fail(Field::from_flag(flag).unwrap_or(Field::Example), message)
        })?;
    }
    // Without `gpus`, the deployment has exactly the GPUs its layout uses.
    if state.get(Field::Gpus).is_none() && state.get(Field::Example).is_none() {
        s.gpus = s
            .parallel
            .tp
            .saturating_mul(s.parallel.pp)
            .saturating_mul(s.parallel.dp);
    }
    Ok(s)
}

fn count(field: Field, text: &str) -> Result<u64, InputError> {
    let Rule::Count { min, max } = field.rule() else {
        unreachable!("count() is only called for count fields")
    };
    parse_count(text, min, max).map_err(|e| InputError {
        field,
        message: format!("{}: {e}", field.flag()),
    })
}

fn measured_list(field: Field, text: &str) -> Result<Vec<Option<Measured>>, InputError> {
    let values = parse_bytes_list(text).map_err(|e| InputError {
        field,
        message: format!("{}: {e}", field.flag()),
    })?;
    Ok(values
        .into_iter()
        .map(|b| b.map(|b| Measured::new(b, format!("given: --{} {text}", field.flag()))))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An unchecked box drops its key unless the example it overrides has the flag on, and
    /// the state it writes plans with the flag as the box shows it.
    #[test]
    fn flag_text_drops_a_default_and_overrides_an_example() {
        let flags = [Field::Ep, Field::Eager, Field::NoHybrid, Field::NoAsync];
        let mut states = vec![UrlState::default()];
        for e in examples() {
            let mut st = UrlState::default();
            st.set(Field::Example, e.id).unwrap();
            states.push(st);
        }
        for st in &states {
            for f in flags {
                assert_eq!(flag_text(st, f, true), "true");
                for on in [true, false] {
                    let mut set = st.clone();
                    set.set(f, flag_text(st, f, on)).unwrap();
                    let s = scenario(&set).unwrap();
                    assert_eq!(flag_value(f, &s), Some(on), "{f:?} {on}");
                    if !on && st.get(Field::Example).is_none() {
                        assert_eq!(set.get(f), None, "{f:?} off stays out of the URL");
                    }
                }
            }
        }
        assert_eq!(flag_value(Field::Tp, &scenario(&states[0]).unwrap()), None);
    }

    /// A tiny deterministic generator (xorshift64*), so the round-trip test needs no crate.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
        fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
            xs[self.below(xs.len() as u64) as usize]
        }
    }

    /// A valid text for a field that needs no catalog.
    fn sample(field: Field, r: &mut Rng) -> Option<String> {
        let bytes = [
            "79.29GiB",
            "10e9",
            "46.1GB",
            "17500000000",
            "8G",
            "512MiB",
            "1_073_741_824",
        ];
        Some(match field.rule() {
            Rule::Count { min, max } => {
                let n = min + r.below((max - min).min(1 << 20) + 1);
                match r.below(3) {
                    0 => n.to_string(),
                    1 if n >= 1000 && n % 1000 == 0 => format!("{}k", n / 1000),
                    _ => n.to_string(),
                }
            }
            Rule::Bytes => r.pick(&bytes).to_string(),
            Rule::BytesList => {
                if r.below(2) == 0 {
                    r.pick(&bytes).to_string()
                } else {
                    "51.64GiB,53.76GiB,52.86GiB".to_string()
                }
            }
            Rule::Partition => r.pick(&["14,15,14", "15,16,12", "80", "31,30"]).to_string(),
            Rule::Fraction => r.pick(&["0.92", "0.9", "0.85", "1", "0.5"]).to_string(),
            Rule::Bool => r.pick(&["true", "false", "1", "0"]).to_string(),
            Rule::MaxLen => r.pick(&["auto", "131072", "-1", "8k", "4096"]).to_string(),
            Rule::KvDtype => r.pick(&["auto", "fp8", "bfloat16", "fp8_e5m2"]).to_string(),
            Rule::AttnBackend => r
                .pick(&[
                    "auto",
                    "FLASHINFER_MLA_SPARSE_DSV4",
                    "FLASHMLA_SPARSE_DSV4",
                    "FLASHINFER",
                    "CUTLASS_MLA",
                    "flash_attn",
                ])
                .to_string(),
            Rule::Version => r.pick(&["0.33", "0.19.1", "0.14", "v0.20.0"]).to_string(),
            Rule::Unit => r.pick(&["gib", "gb"]).to_string(),
            Rule::Method => r.pick(&SPEC_METHODS).to_string(),
            Rule::ModelId | Rule::GpuId | Rule::ExampleId | Rule::Config => return None,
        })
    }

    #[test]
    fn decode_of_encode_is_identity_over_many_states() {
        let mut r = Rng(0x9E37_79B9_7F4A_7C15);
        for _ in 0..2_000 {
            let mut s = UrlState::default();
            for f in Field::ALL {
                if r.below(3) == 0 {
                    if let Some(t) = sample(f, &mut r) {
                        s.set(f, &t).unwrap_or_else(|e| panic!("{f:?} {t:?}: {e}"));
                    }
                }
            }
            let q = encode(&s);
            let d = decode(&q);
            assert_eq!(d.ignored, vec![], "query {q}");
            assert_eq!(d.state, s, "query {q}");
            assert_eq!(d.version, Some(FORMAT_VERSION));
            assert_eq!(encode(&d.state), q);
        }
    }

    #[test]
    fn keys_are_readable_and_unique() {
        let q = {
            let mut s = UrlState::default();
            s.set(Field::Tp, "4").unwrap();
            s.set(Field::Util, "0.92").unwrap();
            s.set(Field::Weights, "79.29GiB").unwrap();
            s.set(Field::MaxModelLen, "auto").unwrap();
            s.set(Field::PpPartition, "15,16,12").unwrap();
            encode(&s)
        };
        assert_eq!(
            q,
            "v=1&tp=4&pp-partition=15,16,12&util=0.92&max-model-len=auto&weights=79.29GiB"
        );
        for (i, a) in Field::ALL.iter().enumerate() {
            for b in &Field::ALL[i + 1..] {
                assert_ne!(a.key(), b.key());
                assert_ne!(a.flag(), b.flag());
            }
            assert_eq!(Field::from_key(a.key()), Some(*a));
            assert_eq!(Field::from_flag(a.flag()), Some(*a));
        }
        // ALL is sorted the way BTreeMap orders fields, so `encode` lists them in ALL order.
        let mut sorted = Field::ALL;
        sorted.sort();
        assert_eq!(sorted, Field::ALL);
    }

    #[test]
    fn hostile_inputs_are_ignored_with_reasons() {
        let cases = [
            "tp=99999999999999999999999",
            "tp=0",
            "tp=-3",
            "util=1.5",
            "util=NaN",
            "util=inf",
            "kv-bytes=1e400",
            "kv-bytes=184467440737095516160",
            "weights=%ZZ",
            "weights=%E2%82",
            "max-model-len=%3Cscript%3Ealert(1)%3C/script%3E",
            "model=%3Cscript%3Ealert(1)%3C%2Fscript%3E",
            "%3Cscript%3E=1",
            "unit=parsecs",
            "kv-dtype=int3",
            "vllm=0.9",
            "vllm=99.0",
            "spec=rm%20-rf",
            "config=!!!notbase64",
            "config=e30",
            "pp-partition=1,,2",
            "block-size=ünïcødé",
            "gpus=1e12",
        ];
        for q in cases {
            let d = decode(q);
            assert!(d.state.is_empty(), "{q}: {:?}", d.state);
            assert_eq!(d.ignored.len(), 1, "{q}: {:?}", d.ignored);
            assert!(!d.ignored[0].reason.is_empty());
        }
        let d = decode("?tp=2&tp=4&&=&x&v=7&v=1#frag");
        assert_eq!(d.state.get(Field::Tp), Some("2"));
        let keys: Vec<&str> = d.ignored.iter().map(|i| i.key.as_str()).collect();
        assert_eq!(keys, ["tp", "(empty key)", "x", "v", "v"]);
        assert_eq!(d.version, Some(7));
    }

    #[test]
    fn garbage_never_panics_and_notices_stay_bounded() {
        let mut r = Rng(42);
        let alphabet: Vec<char> = "=&%?#+ ,.-_~:;/aZ09éあ\u{0}\u{7f}<>\"'".chars().collect();
        for _ in 0..5_000 {
            let len = r.below(80) as usize;
            let q: String = (0..len)
                .map(|_| alphabet[r.below(alphabet.len() as u64) as usize])
                .collect();
            let d = decode(&q);
            assert!(d.ignored.len() <= MAX_NOTICES + 1);
            for i in &d.ignored {
                assert!(i.key.chars().count() <= 40);
                assert!(!i.key.chars().any(char::is_control));
            }
            // Whatever survived is valid and survives again.
            assert_eq!(decode(&encode(&d.state)).state, d.state);
        }
        let many: String = (0..500).map(|i| format!("k{i}=1&")).collect();
        let d = decode(&many);
        assert_eq!(d.ignored.len(), MAX_NOTICES + 1);
        assert!(d.ignored.last().unwrap().reason.contains("480 more"));
        let huge = format!("tp={}", "9".repeat(100_000));
        assert_eq!(decode(&huge).ignored.len(), 1);
    }

    #[test]
    fn base64url_round_trips() {
        for len in 0..70 {
            let data: Vec<u8> = (0..len).map(|i| (i * 37 + 11) as u8).collect();
            let e = base64url_encode(&data);
            assert!(!e.contains(['+', '/', '=']));
            assert_eq!(base64url_decode(&e).unwrap(), data);
        }
        assert_eq!(base64url_encode(b"{}"), "e30");
        assert_eq!(base64url_decode("e30=").unwrap(), b"{}");
        assert!(base64url_decode("e").is_none());
        assert!(base64url_decode("e3$0").is_none());
    }

    #[test]
    fn parsers_accept_vllm_forms() {
        assert_eq!(parse_count("128k", 1, 1 << 31), Ok(128_000));
        assert_eq!(parse_count("128K", 1, 1 << 31), Ok(131_072));
        assert_eq!(parse_count("131,072", 1, 1 << 31), Ok(131_072));
        assert!(parse_count("8GiB", 1, 1 << 40).is_err());
        assert_eq!(parse_max_len("-1"), Ok(MaxLen::Auto));
        assert_eq!(
            parse_bytes_list("51.64GiB,53.76GiB, 52.86GiB")
                .unwrap()
                .len(),
            3
        );
        assert_eq!(
            parse_bytes_list("1,073,741,824").unwrap(),
            vec![Some(1 << 30)]
        );
        assert_eq!(
            parse_bytes_list("10e9; 8e9").unwrap(),
            vec![Some(10_000_000_000), Some(8_000_000_000)]
        );
        assert_eq!(
            parse_bytes_list("-,53.76GiB,-").unwrap(),
            vec![None, Some((53.76 * (1u64 << 30) as f64) as u64), None]
        );
        assert!(parse_bytes_list("-").is_err());
        // A list is split even where one value lacks a unit, and an error names its stage.
        assert_eq!(
            parse_bytes_list("40GiB,0,-").unwrap(),
            vec![Some(40 << 30), Some(0), None]
        );
        assert!(parse_bytes_list("1.5G,2,3")
            .unwrap_err()
            .starts_with("stage 0: "));
        assert!(parse_bytes_list("10GiB,,12GiB")
            .unwrap_err()
            .starts_with("stage 1: "));
        assert_eq!(parse_partition("14, 15,14").unwrap(), vec![14, 15, 14]);
        // vLLM takes a stage of no layers; an empty box names its stage.
        assert_eq!(parse_partition("0,80").unwrap(), vec![0, 80]);
        assert!(parse_partition("10,,11")
            .unwrap_err()
            .starts_with("stage 1 is empty"));
        assert!(parse_partition("10,x")
            .unwrap_err()
            .starts_with("stage 1: \"x\""));
        assert!(parse_fraction("0").is_err());
        assert_eq!(parse_method("none"), Ok(None));
        assert_eq!(Field::Tp.validate("3"), Ok(()));
        assert!(Field::Tp
            .validate("0")
            .unwrap_err()
            .starts_with("tensor-parallel-size"));
    }

    #[test]
    fn states_become_scenarios() {
        let mut st = UrlState::default();
        st.set(Field::Tp, "2").unwrap();
        st.set(Field::Util, "0.85").unwrap();
        st.set(Field::Weights, "51.64GiB,53.76GiB,52.86GiB")
            .unwrap();
        st.set(Field::KvBytes, "10e9").unwrap();
        st.set(Field::MaxModelLen, "8k").unwrap();
        st.set(Field::Spec, "mtp").unwrap();
        st.set(Field::SpecTokens, "2").unwrap();
        st.set(Field::Drafter, "5.06GiB").unwrap();
        st.set(Field::MemAvailable, "114.5GiB").unwrap();
        let s = scenario(&st).expect("catalog default model and gpu");
        assert_eq!(s.parallel.tp, 2);
        assert_eq!(s.gpus, 2);
        assert_eq!(s.engine.gpu_memory_utilization, Some(0.85));
        assert_eq!(s.engine.kv_cache_memory_bytes, Some(10_000_000_000));
        assert_eq!(s.engine.max_model_len, MaxLen::Value(8_000));
        assert_eq!(s.runtime.weights_per_stage.as_ref().map(Vec::len), Some(3));
        let spec = s.engine.speculative.as_ref().unwrap();
        assert_eq!(
            (spec.method.as_str(), spec.num_speculative_tokens),
            ("mtp", 2)
        );
        assert!(spec.drafter_weights.is_some());
        assert!(s.unified.is_some());
    }

    #[test]
    fn the_gate_belongs_to_unified_memory() {
        // Headroom or overhead alone would gate the start on a MemAvailable of 0.
        let mut st = UrlState::default();
        st.set(Field::Headroom, "4GiB").unwrap();
        let e = scenario(&st).unwrap_err();
        assert_eq!(e.field, Field::Headroom);
        assert!(e.message.contains("give mem-available"), "{}", e.message);
        st.set(Field::MemAvailable, "60GiB").unwrap();
        // On a GPU with memory of its own, plan refuses the gate by name ...
        let s = scenario(&st).unwrap();
        let e = crate::calc::plan(&s).unwrap_err();
        assert_eq!(e.field(), "mem-available");
        assert!(e.message().contains("memory of its own"), "{}", e.message());
        // ... and on a unified-memory GPU it plans it.
        st.set(Field::Gpu, "gb10-128gb").unwrap();
        let p = crate::calc::plan(&scenario(&st).unwrap()).unwrap();
        assert!(p.unified.is_some());
        // An example that carries the gate takes its terms without mem-available.
        let mut st = UrlState::default();
        st.set(Field::Example, "s2-unified-gate").unwrap();
        st.set(Field::Headroom, "4GiB").unwrap();
        assert_eq!(scenario(&st).unwrap().unified.unwrap().headroom.0, 4 << 30);
    }

    #[test]
    fn every_example_is_a_url() {
        for e in catalog::examples::examples() {
            let mut st = UrlState::default();
            st.set(Field::Example, e.id).unwrap();
            assert_eq!(encode(&st), format!("v=1&example={}", e.id));
            assert_eq!(scenario(&decode(&encode(&st)).state).unwrap(), e.scenario);
        }
    }

    #[test]
    fn custom_config_travels_in_the_url() {
        let config = r#"{"architectures":["LlamaForCausalLM"],"hidden_size":4096,"intermediate_size":14336,"num_attention_heads":32,"num_hidden_layers":32,"num_key_value_heads":8,"vocab_size":128256,"max_position_embeddings":131072,"torch_dtype":"bfloat16","tie_word_embeddings":false,"model_type":"llama"}"#;
        let mut st = UrlState::default();
        st.set(Field::Config, config).unwrap();
        st.set(Field::Model, &catalog::models()[0].id).unwrap();
        let q = encode(&st);
        assert!(q.contains("config=eyJ"));
        let d = decode(&q);
        assert_eq!(d.state, st);
        assert_eq!(d.ignored, vec![]);
        // The config names the model; the catalog id beside it is only remembered.
        assert_eq!(scenario(&d.state).unwrap().model.n_layers, 32);
    }
}
