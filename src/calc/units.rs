//! Byte counts, the two unit systems (GiB = 2^30, GB = 10^9), and the exact number formatting
//! vLLM's log lines use (Python's `round(x, 2)`, `f"{n:,}"`, `"%.2f"`).
//!
//! Every rounding rule lives here in one named helper, with a comment saying whose rule it is.

use std::fmt;

/// 2^30 bytes: vLLM's `GiB_bytes`, the unit of every vLLM log line.
pub const GIB: u64 = 1 << 30;
/// 2^20 bytes.
pub const MIB: u64 = 1 << 20;
/// 10^9 bytes: the decimal gigabyte marketing sheets and seed 003 use.
pub const GB: u64 = 1_000_000_000;

/// A byte count. Never `usize`: on wasm32 that is 32 bits and wraps at 4 GiB.
///
/// ```
/// use headroom::calc::units::{Bytes, GIB};
/// assert_eq!(Bytes(3 * GIB).gib(), 3.0);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Bytes(pub u64);

impl Bytes {
    pub const ZERO: Bytes = Bytes(0);

    /// The value in GiB, for display only.
    pub fn gib(self) -> f64 {
        self.0 as f64 / GIB as f64
    }

    /// The value in GB (10^9), for display only.
    pub fn gb(self) -> f64 {
        self.0 as f64 / GB as f64
    }

    pub fn checked_add(self, other: Bytes) -> Option<Bytes> {
        self.0.checked_add(other.0).map(Bytes)
    }

    pub fn saturating_sub(self, other: Bytes) -> Bytes {
        Bytes(self.0.saturating_sub(other.0))
    }
}

impl fmt::Display for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} B", thousands(self.0 as u128))
    }
}

/// `math.ceil(total * fraction)` exactly as vLLM's `request_memory` computes it: the integer
/// total is converted to a float64, multiplied, then rounded up (vLLM >= 0.14.0).
///
/// ```
/// use headroom::calc::units::ceil_fraction;
/// assert_eq!(ceil_fraction(85_029_158_912, 0.9), 76_526_243_021);
/// ```
pub fn ceil_fraction(total: u64, fraction: f64) -> u64 {
    let product = total as f64 * fraction;
    // A float64 above 2^64 cannot occur: fraction <= 1 is validated before this is called.
    product.ceil() as u64
}

/// `cdiv(a, b)` from vLLM's `vllm.utils.math_utils`: integer division rounding up.
pub fn cdiv(a: u64, b: u64) -> u64 {
    if b == 0 {
        return 0;
    }
    a / b + u64::from(a % b != 0)
}

/// `f"{n:,}"`: thousands separated by commas.
pub fn thousands(n: u128) -> String {
    let mut out = String::new();
    // Writing into a String cannot fail.
    let _ = write_grouped(&mut out, false, n);
    out
}

/// Signed variant of [`thousands`] for values that can go negative.
pub fn thousands_signed(n: i128) -> String {
    Grouped(n).to_string()
}

/// Writes `abs` with a comma every three digits, after a `-` when `negative`: the one rule
/// behind [`thousands`] and [`Grouped`], without allocating.
fn write_grouped(out: &mut impl fmt::Write, negative: bool, abs: u128) -> fmt::Result {
    // Least significant digit first. u128 division is slow, so the rest is done in u64 as soon
    // as it fits (every real byte count does from the start).
    let mut digits = [0u8; 40];
    let mut len = 0;
    let mut wide = abs;
    let mut n = loop {
        match u64::try_from(wide) {
            Ok(n) => break n,
            Err(_) => {
                digits[len] = b'0' + (wide % 10) as u8;
                len += 1;
                wide /= 10;
            }
        }
    };
    loop {
        digits[len] = b'0' + (n % 10) as u8;
        len += 1;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    let mut text = [0u8; 56];
    let mut o = 0;
    if negative {
        text[o] = b'-';
        o += 1;
    }
    for i in (0..len).rev() {
        text[o] = digits[i];
        o += 1;
        if i > 0 && i % 3 == 0 {
            text[o] = b',';
            o += 1;
        }
    }
    // Only ASCII digits, commas and a sign were written.
    out.write_str(std::str::from_utf8(&text[..o]).unwrap_or(""))
}

/// The least common multiple of two positive integers.
///
/// ```
/// assert_eq!(headroom::calc::units::lcm(16, 64), 64);
/// assert_eq!(headroom::calc::units::lcm(48, 64), 192);
/// ```
pub fn lcm(a: u64, b: u64) -> u64 {
    if a == 0 || b == 0 {
        return 0;
    }
    let (mut x, mut y) = (a, b);
    while y != 0 {
        (x, y) = (y, x % y);
    }
    a / x * b
}

/// Python's `str(float)`: the shortest repr that round-trips, with `.0` on integral values.
pub fn py_float_str(x: f64) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf".into() } else { "-inf".into() };
    }
    let s = format!("{x}");
    if s.contains('.') || s.contains('e') {
        s
    } else {
        format!("{s}.0")
    }
}

/// Python's `round(x, ndigits)` for small `ndigits`: rounds the exact binary value to the nearest
/// decimal with `ndigits` places (ties to even), returned as the nearest float64.
// Never inlined: no link the first verdict is trained on calls it (DESIGN.md, "Rare code").
#[inline(never)]
pub fn py_round(x: f64, ndigits: usize) -> f64 {
    // Rust's fixed-precision formatting rounds the exact binary value correctly, which is what
    // CPython's float_round does through its own correctly rounded dtoa.
    super::decimal::parse_f64(&format!("{x:.ndigits$}")).unwrap_or(x)
}

/// vLLM's `vllm/utils/mem_utils.py::format_gib`: `str(round(b / GiB_bytes, 2))` (v0.14.0+).
///
/// ```
/// use headroom::calc::units::format_gib;
/// assert_eq!(format_gib(46_812_176_057), "43.6");
/// assert_eq!(format_gib(0), "0.0");
/// ```
pub fn format_gib(bytes: i128) -> String {
    GibText(bytes).to_string()
}

/// [`format_gib`] as a `Display`, written straight into the text around it.
pub struct GibText(pub i128);

impl std::fmt::Display for GibText {
    // Never inlined: no link the first verdict is trained on calls it (DESIGN.md, "Rare code").
    #[inline(never)]
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let bytes = self.0;
        // Below 2^53 bytes, b / 2^30 is exact in float64, so its two-place rounding (ties to
        // even on the exact value, as Python's round and Rust's `{:.2}` do) is integer
        // arithmetic: no float formatting on the plan's hot path (a dozen of these per stage).
        if bytes.unsigned_abs() < 1 << 53 {
            let q = shr_half_even(bytes.unsigned_abs() * 100, 30);
            // Digits into a stack buffer, right to left: "-123.45" or "-123.4".
            let mut buf = [0u8; 48];
            let mut i = buf.len();
            let mut push = |d: u8| {
                i -= 1;
                buf[i] = d;
            };
            let (whole, hundredths) = (q / 100, (q % 100) as u8);
            if hundredths % 10 == 0 {
                push(b'0' + hundredths / 10);
            } else {
                push(b'0' + hundredths % 10);
                push(b'0' + hundredths / 10);
            }
            push(b'.');
            let mut w = whole;
            loop {
                push(b'0' + (w % 10) as u8);
                w /= 10;
                if w == 0 {
                    break;
                }
            }
            if bytes < 0 {
                push(b'-');
            }
            // ASCII digits, a point and a sign only.
            return f.write_str(std::str::from_utf8(&buf[i..]).unwrap_or_default());
        }
        f.write_str(&format_gib_float(bytes))
    }
}

/// Python's `str(round(b / 2**30, 2))` of a float byte count (vLLM before 0.14 prints its float
/// `total x utilization` so).
///
/// ```
/// use headroom::calc::units::gib_round_f64;
/// assert_eq!(gib_round_f64(85_029_158_912.0 * 0.9), "71.27");
/// assert_eq!(gib_round_f64(85_029_158_912.0 * 0.95), "75.23");
/// ```
pub fn gib_round_f64(bytes: f64) -> String {
    gib_text_of(bytes / GIB as f64)
}

fn format_gib_float(bytes: i128) -> String {
    gib_text_of(bytes as f64 / GIB as f64)
}

/// `str(round(x, 2))` for a figure already in GiB.
// Never inlined: no link the first verdict is trained on calls it (DESIGN.md, "Rare code").
#[inline(never)]
fn gib_text_of(x: f64) -> String {
    if x.abs() >= 1e15 {
        // Python switches to exponent notation at 1e16; take the general path out there.
        return py_float_str(py_round(x, 2));
    }
    // The correctly rounded two-place decimal, trailing zeros dropped down to one: the same
    // digits as `str(round(x, 2))`, because the nearest double to a two-place decimal of this
    // magnitude prints back as that decimal.
    let mut s = format!("{x:.2}");
    if s.ends_with('0') {
        s.pop();
    }
    s
}

/// Python's `"%.2f" % x` (and `f"{x:.2f}"`).
pub fn py_fixed(x: f64, places: usize) -> String {
    fixed_fast(x, places).unwrap_or_else(|| format!("{x:.places$}"))
}

/// `n / 2^shift` rounded to nearest, ties to even (`shift` from 1 to 127).
fn shr_half_even(n: u128, shift: u32) -> u128 {
    let (q, r) = (n >> shift, n & ((1 << shift) - 1));
    let half = 1u128 << (shift - 1);
    if r > half || (r == half && q & 1 == 1) {
        q + 1
    } else {
        q
    }
}

/// `format!("{x:.places$}")` by integer arithmetic where that is exact and cheap: every f64 is
/// `m x 2^e`, so `x x 10^places` rounded half to even is a shift of `m x 10^places` with its
/// remainder. The plan prints a few of these per stage; core's formatting can fall back to
/// Dragon4's big numbers (a microsecond each). `None` outside the fast range.
fn fixed_fast(x: f64, places: usize) -> Option<String> {
    if !x.is_finite() || places > 9 {
        return None;
    }
    let bits = x.to_bits();
    let biased = ((bits >> 52) & 0x7ff) as i32;
    if biased == 0 {
        return None;
    }
    let m = u128::from((bits & ((1 << 52) - 1)) | (1 << 52));
    let e = biased - 1075;
    let scale = 10u128.pow(places as u32);
    let q = if e >= 0 {
        if e > 40 {
            return None;
        }
        (m << e) * scale
    } else {
        let shift = (-e) as u32;
        if shift > 120 {
            return None;
        }
        shr_half_even(m * scale, shift)
    };
    let sign = if bits >> 63 == 1 { "-" } else { "" };
    let (whole, frac) = (q / scale, q % scale);
    Some(if places == 0 {
        format!("{sign}{whole}")
    } else {
        format!("{sign}{whole}.{frac:0places$}")
    })
}

/// A human figure in the chosen unit system, e.g. `"36.08 GiB"` or `"38.74 GB"`.
pub fn human(bytes: i128, unit: UnitSystem) -> String {
    let (div, name) = match unit {
        UnitSystem::Binary => (GIB as f64, "GiB"),
        UnitSystem::Decimal => (GB as f64, "GB"),
    };
    format!("{} {name}", grouped_fixed(bytes as f64 / div, 2))
}

/// `x` to `decimals` places with its whole part grouped in thousands: `15,685.00`. For figures
/// read by people; vLLM's own log lines keep Python's ungrouped `{:.2f}`.
pub fn grouped_fixed(x: f64, decimals: usize) -> String {
    let s = format!("{x:.decimals$}");
    let digits = s.strip_prefix('-').unwrap_or(&s);
    let int_len = digits.find('.').unwrap_or(digits.len());
    if int_len <= 3 || !digits[..int_len].bytes().all(|b| b.is_ascii_digit()) {
        return s;
    }
    // A comma before every group of three whole digits, counted from the point.
    let mut out = String::with_capacity(s.len() + int_len / 3);
    if s.starts_with('-') {
        out.push('-');
    }
    for (i, c) in digits.char_indices() {
        if i > 0 && i < int_len && (int_len - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Which unit the user reads figures in. Byte counts are always exact either way.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum UnitSystem {
    /// GiB = 2^30 bytes, the unit of vLLM's logs.
    #[default]
    Binary,
    /// GB = 10^9 bytes, the unit of spec sheets.
    Decimal,
}

/// The word for `n` things: `plural(1, "stage", "stages")` is "stage".
pub fn plural(n: u64, one: &'static str, many: &'static str) -> &'static str {
    if n == 1 {
        one
    } else {
        many
    }
}

/// Why a byte string could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseBytesError(pub String);

impl fmt::Display for ParseBytesError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Reads a byte count in every form Headroom accepts:
/// - plain integers (`1073741824`, `1_073_741_824`, `1,073,741,824`: commas only between
///   groups of three digits);
/// - vLLM's `human_readable_int` forms: `9g` = 9 x 10^9, `9G` = 9 x 2^30 (also k/m/t, K/M/T),
///   and scientific notation such as `10e9`;
/// - unit suffixes: `79.29GiB`, `46.1GB`, `512MiB`, `1.5 TB`, `2048 B`.
///
/// Without a unit the number must be whole (`1.5` bytes is refused); with one, a fraction is
/// truncated toward zero as Python's `int(float)` does in vLLM (`1.5g`).
///
/// ```
/// use headroom::calc::units::parse_bytes;
/// assert_eq!(parse_bytes("9G").unwrap(), 9 << 30);
/// assert_eq!(parse_bytes("9g").unwrap(), 9_000_000_000);
/// assert_eq!(parse_bytes("10e9").unwrap(), 10_000_000_000);
/// assert_eq!(parse_bytes("512MiB").unwrap(), 512 << 20);
/// assert!(parse_bytes("1.5").is_err());
/// ```
pub fn parse_bytes(input: &str) -> Result<u64, ParseBytesError> {
    parse_amount(input, Amount::Bytes)
}

/// Reads a count (of tokens, sequences, blocks, GPUs ...) in vLLM's `human_readable_int` forms:
/// `4096`, `131,072`, `128k` = 128,000, `128K` = 131,072, `1e6`. The CLI and the page share it.
///
/// ```
/// use headroom::calc::units::parse_count;
/// assert_eq!(parse_count("128K").unwrap(), 131_072);
/// assert_eq!(parse_count("1.5k").unwrap(), 1_500);
/// assert!(parse_count("2.5").is_err());
/// assert!(parse_count("1,6").is_err());
/// assert!(parse_count("8GiB").is_err());
/// ```
pub fn parse_count(input: &str) -> Result<u64, ParseBytesError> {
    parse_amount(input, Amount::Count)
}

#[derive(Clone, Copy, PartialEq)]
enum Amount {
    Bytes,
    Count,
}

fn parse_amount(input: &str, what: Amount) -> Result<u64, ParseBytesError> {
    let noun = match what {
        Amount::Bytes => "a byte count",
        Amount::Count => "a count",
    };
    let err = |why: &str| {
        ParseBytesError(format!(
            "{} is not {noun}: {why}",
            crate::calc::quoted(input.trim())
        ))
    };
    let s: String = input.trim().chars().filter(|c| *c != '_').collect();
    if s.is_empty() {
        return Err(err("it is empty"));
    }
    if s.starts_with('-') {
        return Err(err("it is negative"));
    }
    // Split the number from its unit.
    let split = s
        .find(|c: char| c.is_ascii_alphabetic() && c != 'e' && c != 'E')
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let num = thousands_free(num.trim())
        .ok_or_else(|| err("commas separate groups of three digits, as in 131,072"))?;
    let unit = unit.trim();
    let multiplier: u64 = match unit {
        "" => 1,
        // vLLM's human_readable_int: lower case is decimal, upper case binary.
        "k" => 1_000,
        "m" => 1_000_000,
        "g" => GB,
        "t" => 1_000_000_000_000,
        "K" => 1 << 10,
        "M" => 1 << 20,
        "G" => 1 << 30,
        "T" => 1 << 40,
        _ if what == Amount::Count => {
            return Err(err(&format!(
                "unknown unit {} (counts take k, m, g, t or K, M, G, T)",
                crate::calc::quoted(unit)
            )))
        }
        "B" | "b" => 1,
        "KiB" | "kib" | "KIB" => 1 << 10,
        "MiB" | "mib" | "MIB" => 1 << 20,
        "GiB" | "gib" | "GIB" => 1 << 30,
        "TiB" | "tib" | "TIB" => 1 << 40,
        "kB" | "KB" | "kb" => 1_000,
        "MB" | "mb" => 1_000_000,
        "GB" | "gb" => GB,
        "TB" | "tb" => 1_000_000_000_000,
        other => return Err(err(&format!("unknown unit {}", crate::calc::quoted(other)))),
    };
    if num.is_empty() {
        return Err(err("no number before the unit"));
    }
    if let Ok(n) = num.parse::<u64>() {
        return n
            .checked_mul(multiplier)
            .ok_or_else(|| err("it is larger than 2^64 - 1"));
    }
    // vLLM refuses decimals with binary single-letter suffixes ("Decimals are not allowed with
    // binary suffixes like G"); keep that rule so a pasted flag means what vLLM would take.
    if matches!(unit, "K" | "M" | "G" | "T") {
        return Err(err(&format!(
            "Decimals are not allowed with binary suffixes like {unit} (vLLM refuses decimals with them). Did you mean to use {num}{} instead?",
            unit.to_ascii_lowercase()
        )));
    }
    let x = super::decimal::parse_f64(&num)
        .ok_or_else(|| err(&format!("{} is not a number", crate::calc::quoted(&num))))?;
    if !x.is_finite() || x < 0.0 {
        return Err(err("it is not a finite positive number"));
    }
    let product = x * multiplier as f64;
    if product >= 18_446_744_073_709_551_615.0 {
        return Err(err("it is larger than 2^64 - 1"));
    }
    // A plain number names whole bytes or items; `1.5` or `1e-3` would be silently truncated.
    if unit.is_empty() && product.fract() != 0.0 {
        return Err(err("it is not a whole number"));
    }
    // Python's int(float) truncates toward zero, as vLLM does for `10e9` and `1.5g`.
    Ok(product as u64)
}

/// The number with its thousands separators removed, if they are where thousands separators
/// go (`1,073,741,824`, `1,234.5`); `None` for a comma anywhere else (`1,6`, `12,34`).
pub fn thousands_free(num: &str) -> Option<String> {
    if !num.contains(',') {
        return Some(num.to_string());
    }
    let int_end = num
        .find(|c: char| !c.is_ascii_digit() && c != ',')
        .unwrap_or(num.len());
    let (int, rest) = num.split_at(int_end);
    let mut groups = int.split(',');
    let first = groups.next()?;
    let grouped = (1..=3).contains(&first.len()) && groups.all(|g| g.len() == 3);
    (grouped && !rest.contains(',')).then(|| format!("{}{rest}", int.replace(',', "")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_formatting_matches_core() {
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut values = vec![
            0.0,
            -0.0,
            0.5,
            1.5,
            2.5,
            0.125,
            0.92,
            0.9125,
            3.6077880859375,
            1e-7,
            123456.789,
            -0.001,
            9.99995,
            0.00005,
            1e12,
            4503599627370497.0,
        ];
        for _ in 0..50_000 {
            values.push(f64::from_bits(next()));
            values.push((next() % 10_000_000) as f64 / (next() % 9_999 + 1) as f64);
            values.push((next() % 100_000) as f64 / 10_000.0);
        }
        for x in values {
            for places in [0, 1, 2, 4, 9] {
                assert_eq!(
                    py_fixed(x, places),
                    format!("{x:.places$}"),
                    "{x:e} {places}"
                );
            }
        }
    }

    #[test]
    fn format_gib_integer_path_matches_float_formatting() {
        let float = |b: i128| {
            let x = b as f64 / GIB as f64;
            let mut s = format!("{x:.2}");
            if s.ends_with('0') {
                s.pop();
            }
            s
        };
        // A tie: 100 b = 2^29 (mod 2^30), so b / 2^30 sits exactly between two hundredths.
        let inv25 = (1..1u128 << 28)
            .find(|k| (25 * k) % (1 << 28) == 1)
            .unwrap();
        let tie = ((1u128 << 27) * inv25 % (1 << 28)) as i128;
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        let mut values = vec![0, 1, -1, tie, tie + (1 << 30), -tie, GIB as i128 - 1];
        for _ in 0..20_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            values.push((state >> 11) as i128 * if state % 3 == 0 { -1 } else { 1 });
            values.push((state % (200 * GIB)) as i128);
        }
        for b in values {
            assert_eq!(format_gib(b), float(b), "{b}");
        }
    }

    #[test]
    fn format_gib_matches_python() {
        assert_eq!(format_gib(38_739_217_613), "36.08");
        assert_eq!(format_gib(35_278_831_616), "32.86");
        assert_eq!(format_gib(5_609_399_256), "5.22");
        assert_eq!(format_gib(80 * GIB as i128), "80.0");
        assert_eq!(format_gib(-(GIB as i128)), "-1.0");
    }

    #[test]
    fn format_gib_fast_path_agrees_with_python_rounding() {
        let mut x: i128 = 1;
        for i in 0..20_000i128 {
            x = (x * 6_364_136_223_846_793_005 + 1_442_695_040_888_963_407) % (1 << 50);
            for b in [x, -x, i * 10_737_418, i * GIB as i128 / 200] {
                let slow = py_float_str(py_round(b as f64 / GIB as f64, 2));
                assert_eq!(format_gib(b), slow, "{b}");
            }
        }
    }

    #[test]
    fn thousands_groups() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(472_880), "472,880");
        assert_eq!(thousands(1_234_567_890), "1,234,567,890");
        assert_eq!(
            thousands(u128::MAX),
            "340,282,366,920,938,463,463,374,607,431,768,211,455"
        );
        assert_eq!(
            thousands_signed(-18_446_744_073_709_551_616),
            "-18,446,744,073,709,551,616"
        );
    }

    #[test]
    fn parse_bytes_forms() {
        assert_eq!(parse_bytes("1073741824").unwrap(), GIB);
        assert_eq!(
            parse_bytes("79.29GiB").unwrap(),
            (79.29 * GIB as f64) as u64
        );
        assert_eq!(parse_bytes("46.1GB").unwrap(), 46_100_000_000);
        assert_eq!(parse_bytes(" 8e9 ").unwrap(), 8_000_000_000);
        assert_eq!(parse_bytes("1.5g").unwrap(), 1_500_000_000);
        assert!(parse_bytes("1.5G").unwrap_err().0.contains("decimals"));
        assert!(parse_bytes("-5").is_err());
        assert!(parse_bytes("abc").is_err());
        assert!(parse_bytes("5 parsecs").is_err());
        assert!(parse_bytes("99999999999999999999").is_err());
        assert!(parse_bytes("1e300").is_err());
        assert!(parse_bytes("").is_err());
    }

    #[test]
    fn ceil_fraction_matches_spec() {
        assert_eq!(ceil_fraction(85_029_158_912, 0.92), 78_226_826_200);
        assert_eq!(ceil_fraction(150_118_055_936, 0.92), 138_108_611_462);
    }
}

/// `f"{n:,}"` as a `Display` value: writes the grouped digits straight into the formatter, so a
/// `format!` with several figures allocates once.
///
/// ```
/// use headroom::calc::units::Grouped;
/// assert_eq!(format!("{}", Grouped(1_234_567)), "1,234,567");
/// assert_eq!(format!("{}", Grouped(-1_000)), "-1,000");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Grouped(pub i128);

impl fmt::Display for Grouped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_grouped(f, self.0 < 0, self.0.unsigned_abs())
    }
}
