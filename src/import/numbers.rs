//! Python's `int()` as vLLM's argparse applies it to most integer flags (vLLM's
//! `human_readable_int` ones are `calc::units::parse_count`'s).

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
