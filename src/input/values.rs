//! The value parsers every front door shares: counts in vLLM's forms, byte counts, per-stage
//! lists, layer partitions, fractions, switches, and the two bounds every count and byte count
//! meets. The schema ([`super::schema`]) says which input takes which parser; the page, a link
//! and the CLI all reach these through it, so one text gets one verdict and one message.

use std::sync::Mutex;

use crate::calc::model::Model;
use crate::calc::scenario::{MaxLen, SpecMethod};
use crate::calc::units::{self, parse_bytes, UnitSystem};

/// The largest count an engine count takes (`max-model-len`, `max-num-seqs`,
/// `max-num-batched-tokens`, `num-gpu-blocks-override`, `average-request-len`): 2^32, the bound
/// `calc::plan` itself holds them to so that products of counts and sizes stay within 64 bits.
/// vLLM 0.33.0 types them as plain `int` (`SchedulerConfig.max_num_seqs`,
/// `max_num_batched_tokens`, `ModelConfig.max_model_len`, `CacheConfig.num_gpu_blocks_override`)
/// with no upper bound, so the input layer takes calc's and says so before planning.
pub const MAX_COUNT: u64 = 1 << 32;

/// A count in vLLM's `human_readable_int` forms ([`crate::calc::units::parse_count`]) within
/// `[min, max]`.
pub fn parse_count(text: &str, min: u64, max: u64) -> Result<u64, String> {
    let n = units::parse_count(text).map_err(|e| e.0)?;
    in_range(n, min, max)
}

/// `n` if it lies in `[min, max]`, else a message that says so in words.
pub fn in_range(n: u64, min: u64, max: u64) -> Result<u64, String> {
    use units::Grouped;
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
        && units::thousands_free(t)
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    if text.contains([';', '/']) {
        text.split([';', '/']).collect()
    } else if text.contains(',') && !grouped_integer {
        text.split(',').collect()
    } else {
        vec![text]
    }
}

/// A byte count in any form [`parse_bytes`] reads. Its bound is `calc::plan`'s own (1 PiB,
/// "beyond any GPU"), checked there for every byte term whatever door it came through, so the
/// page and the CLI refuse an absurd reading with the same message.
pub fn parse_byte_count(text: &str) -> Result<u64, String> {
    parse_bytes(text).map_err(|e| e.0)
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
            t => parse_byte_count(t).map(Some).map_err(|e| {
                if many {
                    format!("stage {i}: {e}")
                } else {
                    e
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
                    format!(
                        "stage {i}: {} is not a layer count from 0 to 100,000; write e.g. 14,15,14",
                        crate::calc::quoted(p)
                    )
                })
        })
        .collect()
}

/// `--gpu-memory-utilization`: a fraction in (0, 1].
pub fn parse_fraction(text: &str) -> Result<f64, String> {
    let x = crate::calc::decimal::parse_f64(text.trim()).ok_or_else(|| {
        format!(
            "{} is not a number like 0.92",
            crate::calc::quoted(text.trim())
        )
    })?;
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
            "{} is not true or false (1/0, yes/no and on/off also work)",
            crate::calc::quoted(other)
        )),
    }
}

/// `--max-model-len`: a count, or `auto` / `-1` (vLLM fits the longest length the pool holds).
pub fn parse_max_len(text: &str) -> Result<MaxLen, String> {
    match text.trim() {
        t if t.eq_ignore_ascii_case("auto") || t == "-1" => Ok(MaxLen::Auto),
        t => parse_count(t, 1, MAX_COUNT).map(MaxLen::Value),
    }
}

pub fn parse_unit(text: &str) -> Result<UnitSystem, String> {
    match text.trim().to_ascii_lowercase().as_str() {
        "gib" => Ok(UnitSystem::Binary),
        "gb" => Ok(UnitSystem::Decimal),
        other => Err(format!(
            "unit {} is not gib or gb",
            crate::calc::quoted(other)
        )),
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
/// Written from [`SpecMethod::OFFERED`], so the form's choices are the enum's.
pub const SPEC_METHODS: [&str; 8] = {
    let mut names = ["none"; 8];
    let mut i = 0;
    while i < SpecMethod::OFFERED.len() {
        names[i + 1] = SpecMethod::OFFERED[i].as_str();
        i += 1;
    }
    names
};

/// A speculative method: `None` for `none`.
pub fn parse_method(text: &str) -> Result<Option<SpecMethod>, String> {
    let t = text.trim();
    if t == "none" {
        return Ok(None);
    }
    // vLLM reads each of its MTP model types (`qwen3_next_mtp`, ...) as `mtp`; the CLI's
    // speculative config takes them, so a link written from it must too.
    SpecMethod::from_name(t).map(Some).ok_or_else(|| {
        format!(
            "{} is not one of {}",
            crate::calc::quoted(t),
            SPEC_METHODS.join(", ")
        )
    })
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
    let r = read_config(text);
    *last = Some((text.to_string(), r.clone()));
    r
}

#[cfg(any(not(feature = "catalog-compiled"), feature = "config-reader"))]
fn read_config(text: &str) -> Result<Model, String> {
    crate::catalog::parse_config_json(text).map_err(|e| e.to_string())
}

/// The first verdict's program for catalog links has no config.json reader: it hands a state
/// with a pasted config to the program that has one (`src/bin/verdict.rs`), and never shows this.
#[cfg(all(feature = "catalog-compiled", not(feature = "config-reader")))]
fn read_config(_: &str) -> Result<Model, String> {
    Err("this program does not read a pasted config.json".to_string())
}

/// The catalog model a page without state starts from.
pub const DEFAULT_MODEL: &str = "llama-3.1-8b-instruct";
/// The catalog GPU a page without state starts from.
pub const DEFAULT_GPU: &str = "h100-sxm-80gb";

/// The checkpoint's bytes: a byte count, or a pasted `model.safetensors.index.json`, whose
/// `"total_size"` (under `metadata`) is read by a linear scan, so a multi-megabyte index costs
/// one pass and no tree.
pub fn parse_checkpoint_bytes(text: &str) -> Result<u64, String> {
    let t = text.trim();
    if !t.starts_with('{') {
        return parse_byte_count(t);
    }
    let missing = || {
        "the pasted JSON has no \"total_size\": paste the checkpoint's model.safetensors.index.json, whose metadata.total_size is its bytes".to_string()
    };
    let at = t.find("\"total_size\"").ok_or_else(missing)?;
    let rest = t[at + "\"total_size\"".len()..].trim_start();
    let rest = rest.strip_prefix(':').ok_or_else(missing)?.trim_start();
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    if digits.is_empty() {
        return Err(format!(
            "\"total_size\" is not a whole number of bytes: {}",
            crate::calc::quoted(&rest.chars().take(24).collect::<String>())
        ));
    }
    parse_byte_count(&digits)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::Field;

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
        // The form's choices, in its order, as they were written out before the enum.
        assert_eq!(
            SPEC_METHODS,
            [
                "none",
                "mtp",
                "deepseek_mtp",
                "dspark",
                "eagle",
                "eagle3",
                "draft_model",
                "ngram"
            ]
        );
        assert_eq!(
            parse_method(" qwen3_next_mtp "),
            Ok(Some(SpecMethod::Mtp("qwen3_next_mtp")))
        );
        assert_eq!(
            parse_method("magic"),
            Err("\"magic\" is not one of none, mtp, deepseek_mtp, dspark, eagle, eagle3, draft_model, ngram".into())
        );
        assert_eq!(Field::Tp.validate("3"), Ok(()));
        assert!(Field::Tp
            .validate("0")
            .unwrap_err()
            .starts_with("tensor-parallel-size"));
    }
}
