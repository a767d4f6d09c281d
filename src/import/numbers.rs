//! Numbers as vLLM's argparse reads them: Python's `int()` and vLLM's `human_readable_int`.

use crate::calc::decimal::parse_f64;

/// Python's `int()` on a command-line text: digits, an optional sign, underscores between
/// digits, surrounding blanks.
pub fn py_int(t: &str) -> Option<i64> {
    let t = t.trim();
    let (neg, digits) = match t.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    if digits.is_empty()
        || digits.starts_with('_')
        || digits.ends_with('_')
        || digits.contains("__")
        || !digits.chars().all(|c| c.is_ascii_digit() || c == '_')
    {
        return None;
    }
    let n: i64 = digits.replace('_', "").parse().ok()?;
    Some(if neg { -n } else { n })
}

/// vLLM's `human_readable_int`: `25.6k` is 25,600, `32K` 32,768 (no decimals with K, M, G, T).
pub fn human_readable_int(t: &str) -> Result<i64, String> {
    let t = t.trim();
    if let Some(last) = t.chars().last().filter(|c| "kmgtKMGT".contains(*c)) {
        let num = &t[..t.len() - 1];
        let valid = !num.is_empty()
            && num.split('.').count() <= 2
            && num
                .split('.')
                .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()));
        if valid {
            let (mult, binary): (f64, bool) = match last {
                'k' => (1e3, false),
                'm' => (1e6, false),
                'g' => (1e9, false),
                't' => (1e12, false),
                'K' => (1024.0, true),
                'M' => (1_048_576.0, true),
                'G' => (1_073_741_824.0, true),
                _ => (1_099_511_627_776.0, true),
            };
            if binary && num.contains('.') {
                return Err(format!(
                    "Decimals are not allowed with binary suffixes like {last}. Did you mean to use {num}{} instead? (vLLM's words)",
                    last.to_ascii_lowercase()
                ));
            }
            let x = parse_f64(num).ok_or_else(|| format!("invalid int value: {t:?}"))?;
            let v = (x * mult).trunc();
            if v > 9.0e18 {
                return Err(format!("{t:?} is too large"));
            }
            return Ok(v as i64);
        }
    }
    py_int(t).ok_or_else(|| format!("invalid int value: {t:?} (vLLM's argparse)"))
}
