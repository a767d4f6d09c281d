//! Whether a weight estimate is plausible: the parameter count Headroom derives from a config
//! against the count the model's name states (`120B`, `30B-A3B`, Llama 4's `17B-16E`) or the
//! checkpoint's own `total_size`. An estimate more than 25 % away from either is most likely a
//! structure Headroom read wrong (or a config that does not belong to the name), and every
//! figure downstream inherits it: the plan says so, and names what dominates the estimate.

use super::model::{Model, ModelDtype, WeightQuant};
use super::units::Grouped;
use super::weights::{self, Placement};

/// How far the estimate may sit from a stated count before the plan says so.
pub const TOLERANCE: f64 = 0.25;

/// Parameters by component, at TP 1 with every stage's parts (MTP and vision included).
#[derive(Clone, Debug, PartialEq)]
pub struct Census {
    pub total: u64,
    /// Parameters a token meets: the routed experts counted at top_k / n_experts, without the
    /// MTP layers (a drafter, not part of the model's forward pass).
    pub active: u64,
    /// Each kind with its parameters, largest first.
    pub kinds: Vec<(&'static str, u64)>,
}

/// The model's parameters by kind, from the same per-layer shapes as its weights (each
/// parameter counted once, at two bytes).
pub fn census(model: &Model) -> Census {
    let mut m = model.clone();
    m.quant = WeightQuant::None;
    m.dtype = ModelDtype::Bfloat16;
    let p = Placement::whole(&m);
    let w = weights::rank_weights(&m, &p);
    let half = |b: u64| b / 2;
    let mut kinds: Vec<(&'static str, u64)> = w
        .parts
        .named()
        .into_iter()
        .map(|(n, b)| (n, half(b)))
        .collect();
    kinds.extend([
        ("embedding and LM head", half(w.embedding + w.head)),
        ("MTP layers", half(w.drafter)),
        ("vision encoder", half(w.vision)),
    ]);
    kinds.retain(|(_, n)| *n > 0);
    weights::sort_largest_first(&mut kinds);
    let total = half(w.target().saturating_add(w.drafter));
    let experts = half(w.parts.experts);
    let active = match &m.moe {
        Some(moe) if moe.n_experts > 0 => {
            let routed = (experts as u128 * u128::from(moe.top_k.min(moe.n_experts))
                / u128::from(moe.n_experts)) as u64;
            total - half(w.drafter) - experts + routed
        }
        _ => total - half(w.drafter),
    };
    Census {
        total,
        active,
        kinds,
    }
}

/// Counts a name states: (total, active), in parameters. `Qwen3-30B-A3B` gives (30e9, 3e9),
/// `gpt-oss-120b` (120e9, none), Llama 4's `Llama-4-Scout-17B-16E` (none, 17e9); `8x7B`
/// (experts times a size) and Gemma's effective `E4B` state nothing exact and are skipped.
///
/// ```
/// use headroom::calc::plausible::stated_params;
/// assert_eq!(stated_params("Qwen/Qwen3-30B-A3B"), (Some(30_000_000_000), Some(3_000_000_000)));
/// assert_eq!(stated_params("openai/gpt-oss-120b"), (Some(120_000_000_000), None));
/// assert_eq!(stated_params("Qwen2.5-0.5B-Instruct"), (Some(500_000_000), None));
/// assert_eq!(stated_params("meta-llama/Llama-4-Scout-17B-16E"), (None, Some(17_000_000_000)));
/// assert_eq!(stated_params("mistralai/Mixtral-8x7B-v0.1"), (None, None));
/// assert_eq!(stated_params("nvidia/Nemotron-H-8B-Base-8K"), (Some(8_000_000_000), None));
/// assert_eq!(stated_params("DeepSeek-V3"), (None, None));
/// assert_eq!(stated_params("org/Llama-70B (/tmp/config.json)"), (Some(70_000_000_000), None));
/// ```
pub fn stated_params(name: &str) -> (Option<u64>, Option<u64>) {
    let (total, active) = stated_counts(name);
    (total.map(|c| c.0), active.map(|c| c.0))
}

/// A count a name states and the worth of its last digit, in parameters.
pub type Stated = (u64, u64);

/// [`stated_params`] with each count's last digit's worth ("3B": 1B, "1.5B": 0.1B): a name
/// rounds down as often as not ("A3B" for 3.3B active), so a count is read as the range from
/// it to one more of its last digit.
pub fn stated_counts(name: &str) -> (Option<Stated>, Option<Stated>) {
    // The CLI names a config by its model and path ("org/Name-70B (/models/x/config.json)"):
    // every word counts, wherever it sits.
    let tokens: Vec<&str> = name.split(['-', '_', ' ', '/', '(', ')']).collect();
    let size = |t: &str| -> Option<(u64, u64)> {
        let (num, unit) = t.split_at(t.len().checked_sub(1)?);
        let mult = match unit {
            "B" | "b" => 1e9,
            "M" | "m" => 1e6,
            "T" | "t" => 1e12,
            _ => return None,
        };
        if num.is_empty() || !num.chars().all(|c| c.is_ascii_digit() || c == '.') {
            return None;
        }
        let v = super::decimal::parse_f64(num)?;
        let decimals = num.split_once('.').map_or(0, |(_, d)| d.len()) as i32;
        let digit = mult / 10f64.powi(decimals);
        (v > 0.0 && v < 1e5).then(|| ((v * mult).round() as u64, digit.round() as u64))
    };
    let mut total = None;
    let mut active = None;
    for (i, t) in tokens.iter().enumerate() {
        if let Some(rest) = t.strip_prefix(['A', 'a']) {
            if let Some(a) = size(rest) {
                active.get_or_insert(a);
                continue;
            }
        }
        if let Some(n) = size(t) {
            // Llama 4 names its active count before its experts: 17B-16E.
            let experts_next = tokens.get(i + 1).is_some_and(|n| {
                n.len() > 1
                    && n.ends_with(['E', 'e'])
                    && n[..n.len() - 1].chars().all(|c| c.is_ascii_digit())
            });
            if experts_next {
                active.get_or_insert(n);
            } else if total.is_none() && active.is_none() {
                total = Some(n);
            }
        }
    }
    (total, active)
}

/// A weight estimate that disagrees with what the model says of itself.
#[derive(Clone, Debug, PartialEq)]
pub struct WeightsCheck {
    /// What the estimate was held against: "the name's 120B", "the checkpoint's total_size".
    pub against: String,
    pub stated: u64,
    pub estimated: u64,
    /// Estimated / stated.
    pub ratio: f64,
    /// The kinds that dominate the estimate, largest first (parameters, or bytes against a
    /// total_size).
    pub dominant: Vec<(&'static str, u64)>,
    /// The sentence the plan shows.
    pub message: String,
}

impl WeightsCheck {
    /// One sentence for the verdict: `Doubtful weights: the estimate counts 1,512B parameters
    /// where the name says 120B (12.60x); routed experts are the largest part.`
    pub fn short(&self) -> String {
        let largest = self
            .dominant
            .first()
            .map(|(n, _)| format!("; largest part: {n}"))
            .unwrap_or_default();
        if self.against.starts_with("the checkpoint") {
            format!(
                "Doubtful weights: the estimate is {:.2}x the checkpoint's total_size{largest}.",
                self.ratio
            )
        } else {
            format!(
                "Doubtful weights: the estimate counts {} parameters where the name says {} ({:.2}x){largest}.",
                billions(self.estimated),
                billions(self.stated),
                self.ratio
            )
        }
    }
}

fn billions(n: u64) -> String {
    let b = n as f64 / 1e9;
    if b >= 100.0 {
        format!("{}B", super::units::grouped_fixed(b, 0))
    } else if b >= 1.0 && (b - b.round()).abs() < 0.05 {
        format!("{}B", b.round())
    } else if b >= 1.0 {
        format!("{b:.1}B")
    } else {
        format!("{:.0}M", n as f64 / 1e6)
    }
}

/// The check, or `None` when the estimate agrees with everything the model states (or it
/// states nothing).
pub fn check(model: &Model) -> Option<WeightsCheck> {
    let c = census(model);
    let off = |est: u64, stated: u64| {
        let r = est as f64 / stated.max(1) as f64;
        ((r - 1.0).abs() > TOLERANCE).then_some(r)
    };
    let top = |kinds: &[(&'static str, u64)]| kinds.iter().take(3).copied().collect::<Vec<_>>();
    let listed = |kinds: &[(&'static str, u64)], fmt: &dyn Fn(u64) -> String| {
        kinds
            .iter()
            .map(|(n, v)| format!("{n} {}", fmt(*v)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    if let Some(total) = model.checkpoint_bytes {
        let est = weights::checkpoint_estimate(model);
        if let Some(ratio) = off(est, total) {
            let dominant = top(&c.kinds);
            return Some(WeightsCheck {
                against: "the checkpoint's total_size".into(),
                stated: total,
                estimated: est,
                ratio,
                message: format!(
                    "The weights estimated from the config ({} bytes) are {ratio:.2}x the checkpoint's total_size ({} bytes), so Headroom scales every weight line by {:.2}: a structure it read wrong, or a config that is not this checkpoint's. Largest parts of the estimate: {}.",
                    Grouped(i128::from(est)),
                    Grouped(i128::from(total)),
                    1.0 / ratio,
                    listed(&dominant, &|v| format!("{} parameters", billions(v)))
                ),
                dominant,
            });
        }
    }
    let (total, active) = stated_counts(&model.name);
    // Outside [stated x 0.75, (stated + one of its last digit) x 1.25].
    let outside = |est: u64, (stated, digit): (u64, u64)| {
        let e = est as f64;
        e < stated as f64 * (1.0 - TOLERANCE) || e > (stated + digit) as f64 * (1.0 + TOLERANCE)
    };
    let (against, stated, est) = match (total, active) {
        (Some(t), _) if outside(c.total, t) => ("total", t.0, c.total),
        (_, Some(a)) if outside(c.active, a) => ("active", a.0, c.active),
        _ => return None,
    };
    let ratio = est as f64 / stated as f64;
    let dominant = top(&c.kinds);
    Some(WeightsCheck {
        against: format!("the name's {} ({against} parameters)", billions(stated)),
        stated,
        estimated: est,
        ratio,
        message: format!(
            "The weights estimate counts {} {against} parameters where the name {} states {} ({ratio:.2}x): every figure built on the weights is off by as much. Largest parts of the estimate: {}. Check the config, or give the measured weights (vLLM's \"Model loading took\").",
            billions(est),
            crate::calc::quoted(&model.name),
            billions(stated),
            listed(&dominant, &billions)
        ),
        dominant,
    })
}
