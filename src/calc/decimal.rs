//! Decimal text to `f64`, correctly rounded (to nearest, ties to even), as
//! `str::parse::<f64>` does.
//!
//! Why not `str::parse`: the standard library's parser carries a 10 KB table of 128-bit powers
//! of five (for the Eisel-Lemire algorithm) that gzip cannot shrink, a twentieth of the
//! browser app. Headroom parses a handful of short numbers (`0.92`, `79.29GiB`, `1e-05` in a
//! config.json), so this module takes the exact fast path for them (Clinger: an integer
//! mantissa of at most 2^53 times a power of ten of at most 10^22, one rounding) and falls back
//! to exact big-integer arithmetic for everything else. The tests check it against
//! `str::parse` bit for bit, on tricky cases and on a hundred thousand random ones.
//!
//! Accepted: an optional sign, digits with an optional decimal point (`1.`, `.5`), an optional
//! exponent (`e-5`, `E+10`). Refused (`None`): anything else, including `inf` and `nan`.
//!
//! ```
//! use headroom::calc::decimal::parse_f64;
//! assert_eq!(parse_f64("0.92"), Some(0.92));
//! assert_eq!(parse_f64("1e-05"), Some(1e-5));
//! assert_eq!(parse_f64("9007199254740993"), Some(9007199254740992.0)); // ties to even
//! assert_eq!(parse_f64("nan"), None);
//! ```

/// Digits kept exactly; any nonzero digit after them only breaks ties (768 digits decide
/// every rounding of an f64).
const MAX_DIGITS: usize = 800;

/// 10^0 ..= 10^22, each exactly representable.
const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// Parses `text` (see the module's documentation for the accepted forms).
pub fn parse_f64(text: &str) -> Option<f64> {
    let b = text.as_bytes();
    let mut i = 0;
    let negative = match b.first() {
        Some(b'-') => {
            i = 1;
            true
        }
        Some(b'+') => {
            i = 1;
            false
        }
        _ => false,
    };
    let sign = |x: f64| if negative { -x } else { x };
    // Significant digits (no leading zeros) and the power of ten that scales them.
    let mut digits: Vec<u8> = Vec::new();
    let mut exp: i64 = 0;
    let (mut any, mut point, mut dropped_nonzero) = (false, false, false);
    while let Some(&c) = b.get(i) {
        match c {
            b'0'..=b'9' => {
                any = true;
                let d = c - b'0';
                if digits.is_empty() && d == 0 {
                    if point {
                        exp -= 1;
                    }
                } else if digits.len() < MAX_DIGITS {
                    digits.push(d);
                    if point {
                        exp -= 1;
                    }
                } else {
                    dropped_nonzero |= d != 0;
                    if !point {
                        exp += 1;
                    }
                }
            }
            b'.' if !point => point = true,
            _ => break,
        }
        i += 1;
    }
    if !any {
        return None;
    }
    if let Some(&c) = b.get(i) {
        if c != b'e' && c != b'E' {
            return None;
        }
        i += 1;
        let e_negative = match b.get(i) {
            Some(b'-') => {
                i += 1;
                true
            }
            Some(b'+') => {
                i += 1;
                false
            }
            _ => false,
        };
        let start = i;
        let mut e: i64 = 0;
        while let Some(&c @ b'0'..=b'9') = b.get(i) {
            e = (e * 10 + i64::from(c - b'0')).min(1_000_000_000);
            i += 1;
        }
        if i == start || i != b.len() {
            return None;
        }
        exp += if e_negative { -e } else { e };
    }
    if dropped_nonzero {
        // Something nonzero lies past the kept digits: a 1 right after them stands for it.
        digits.push(1);
        exp -= 1;
    } else {
        while digits.last() == Some(&0) {
            digits.pop();
            exp += 1;
        }
    }
    if digits.is_empty() {
        return Some(sign(0.0));
    }
    let n = digits.len() as i64;
    // Beyond these the value is at least 10^310 or below 10^-325 (half the least subnormal
    // is 2.47e-324).
    if n + exp > 310 {
        return Some(sign(f64::INFINITY));
    }
    if n + exp < -324 {
        return Some(sign(0.0));
    }
    // Clinger's fast path: both operands exact, one correctly rounded operation.
    if n <= 19 {
        let m = digits.iter().fold(0u64, |m, d| m * 10 + u64::from(*d));
        if m <= 1 << 53 {
            if (0..=22).contains(&exp) {
                return Some(sign(m as f64 * POW10[exp as usize]));
            }
            if (-22..0).contains(&exp) {
                return Some(sign(m as f64 / POW10[(-exp) as usize]));
            }
        }
    }
    Some(sign(exact(&digits, exp)))
}

/// digits x 10^exp, correctly rounded, by big-integer arithmetic.
// Never inlined: no link the first verdict is trained on calls it (DESIGN.md, "Rare code").
#[inline(never)]
fn exact(digits: &[u8], exp: i64) -> f64 {
    let mut n = Big::from_digits(digits);
    if exp >= 0 {
        n.mul_pow10(exp as u32);
        let len = n.bits();
        if len <= 128 {
            return round(n.low_u128(), 0, false);
        }
        let drop = len - 128;
        let sticky = n.any_below(drop);
        n.shr(drop);
        return round(n.low_u128(), i64::from(drop), sticky);
    }
    let mut d = Big::from_digits(&[1]);
    d.mul_pow10((-exp) as u32);
    // Scale the numerator so that the quotient has 66 or 67 bits, then divide. Bits shifted
    // out of a long numerator only make the remainder nonzero: the quotient stays its floor.
    let shift = i64::from(d.bits()) + 66 - i64::from(n.bits());
    let mut sticky = false;
    if shift >= 0 {
        n.shl(shift as u32);
    } else {
        let drop = (-shift) as u32;
        sticky = n.any_below(drop);
        n.shr(drop);
    }
    let (q, rest) = n.div_small_quotient(&d);
    round(q, -shift, rest || sticky)
}

/// (q + a nonzero fraction if `sticky`) x 2^shift, rounded to an f64.
fn round(q: u128, shift: i64, sticky: bool) -> f64 {
    if q == 0 {
        return 0.0;
    }
    let len = 128 - i64::from(q.leading_zeros());
    let e2 = len - 1 + shift; // the leading bit's power of two
    if e2 > 1023 {
        return f64::INFINITY;
    }
    // Significant bits an f64 has at this magnitude: 53, fewer among the subnormals.
    let p = if e2 >= -1022 { 53 } else { e2 + 1075 };
    if p < 0 {
        return 0.0;
    }
    if p == 0 {
        // Between half the least subnormal and the least subnormal: ties go to zero (even).
        let exactly_half = q.is_power_of_two() && !sticky;
        return if exactly_half { 0.0 } else { f64::from_bits(1) };
    }
    let drop = (len - p).max(0) as u32;
    let mut m = q >> drop;
    let mut scale = shift + i64::from(drop);
    if drop > 0 {
        let rest = q & ((1u128 << drop) - 1);
        let half = 1u128 << (drop - 1);
        if rest > half || (rest == half && (sticky || m & 1 == 1)) {
            m += 1;
            if m == 1u128 << p {
                m >>= 1;
                scale += 1;
                if e2 + 1 > 1023 {
                    return f64::INFINITY;
                }
            }
        }
    }
    ldexp(m as f64, scale)
}

/// x * 2^k for an x and k whose product is exactly representable (or overflows).
fn ldexp(mut x: f64, mut k: i64) -> f64 {
    let pow2 = |e: i64| f64::from_bits(((e + 1023) as u64) << 52);
    while k > 1000 {
        x *= pow2(1000);
        k -= 1000;
    }
    while k < -1000 {
        x *= pow2(-1000);
        k += 1000;
    }
    x * pow2(k)
}

/// A non-negative big integer, little-endian 32-bit limbs.
struct Big(Vec<u32>);

impl Big {
    fn from_digits(digits: &[u8]) -> Big {
        let mut n = Big(Vec::new());
        for chunk in digits.chunks(9) {
            let (mut v, mut scale) = (0u32, 1u32);
            for d in chunk {
                v = v * 10 + u32::from(*d);
                scale *= 10;
            }
            n.mul_add(scale, v);
        }
        n
    }

    fn mul_add(&mut self, m: u32, add: u32) {
        let mut carry = u64::from(add);
        for limb in &mut self.0 {
            let t = u64::from(*limb) * u64::from(m) + carry;
            *limb = t as u32;
            carry = t >> 32;
        }
        if carry > 0 {
            self.0.push(carry as u32);
        }
    }

    fn mul_pow10(&mut self, mut e: u32) {
        while e >= 9 {
            self.mul_add(1_000_000_000, 0);
            e -= 9;
        }
        if e > 0 {
            self.mul_add(10u32.pow(e), 0);
        }
    }

    fn trim(&mut self) {
        while self.0.last() == Some(&0) {
            self.0.pop();
        }
    }

    fn bits(&self) -> u32 {
        match self.0.iter().rposition(|l| *l != 0) {
            None => 0,
            Some(i) => i as u32 * 32 + (32 - self.0[i].leading_zeros()),
        }
    }

    fn low_u128(&self) -> u128 {
        self.0
            .iter()
            .take(4)
            .enumerate()
            .fold(0, |v, (i, l)| v | u128::from(*l) << (32 * i))
    }

    /// Whether any of the lowest `k` bits is set.
    fn any_below(&self, k: u32) -> bool {
        let (whole, part) = ((k / 32) as usize, k % 32);
        self.0.iter().take(whole).any(|l| *l != 0)
            || (part > 0
                && self
                    .0
                    .get(whole)
                    .is_some_and(|l| l & ((1 << part) - 1) != 0))
    }

    fn shl(&mut self, k: u32) {
        let (whole, part) = ((k / 32) as usize, k % 32);
        if part > 0 {
            let mut carry = 0u32;
            for limb in &mut self.0 {
                let next = *limb >> (32 - part);
                *limb = (*limb << part) | carry;
                carry = next;
            }
            if carry > 0 {
                self.0.push(carry);
            }
        }
        self.0.splice(0..0, std::iter::repeat(0).take(whole));
    }

    fn shr(&mut self, k: u32) {
        let (whole, part) = ((k / 32) as usize, k % 32);
        self.0.drain(..whole.min(self.0.len()));
        if part > 0 {
            let mut carry = 0u32;
            for limb in self.0.iter_mut().rev() {
                let next = *limb << (32 - part);
                *limb = (*limb >> part) | carry;
                carry = next;
            }
        }
        self.trim();
    }

    fn cmp(&self, other: &Big) -> std::cmp::Ordering {
        let (a, b) = (self.bits(), other.bits());
        if a != b {
            return a.cmp(&b);
        }
        for i in (0..self.0.len().max(other.0.len())).rev() {
            let (x, y) = (
                self.0.get(i).copied().unwrap_or(0),
                other.0.get(i).copied().unwrap_or(0),
            );
            if x != y {
                return x.cmp(&y);
            }
        }
        std::cmp::Ordering::Equal
    }

    /// self -= other, for other <= self.
    fn sub(&mut self, other: &Big) {
        let mut borrow = 0i64;
        for i in 0..self.0.len() {
            let t = i64::from(self.0[i]) - i64::from(other.0.get(i).copied().unwrap_or(0)) - borrow;
            self.0[i] = t.rem_euclid(1 << 32) as u32;
            borrow = i64::from(t < 0);
        }
        self.trim();
    }

    /// The quotient self / d (which must fit 128 bits) and whether a remainder is left.
    fn div_small_quotient(mut self, d: &Big) -> (u128, bool) {
        let mut q = 0u128;
        let top = self.bits().saturating_sub(d.bits());
        for bit in (0..=top).rev() {
            let mut t = Big(d.0.clone());
            t.shl(bit);
            if self.cmp(&t) != std::cmp::Ordering::Less {
                self.sub(&t);
                q |= 1u128 << bit;
            }
        }
        (q, self.bits() > 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(s: &str) {
        let want: f64 = s.parse().unwrap();
        let got = parse_f64(s).unwrap_or_else(|| panic!("{s:?} was refused"));
        assert_eq!(
            got.to_bits(),
            want.to_bits(),
            "{s:?}: {got:e} is not {want:e}"
        );
    }

    #[test]
    fn agrees_with_std_on_hard_cases() {
        for s in [
            "0",
            "-0",
            "0.0",
            "1",
            "0.92",
            "0.9",
            "0.1",
            "0.3",
            "1e-05",
            "1e-5",
            "8.0",
            "10e9",
            "79.29",
            "46.1",
            ".5",
            "1.",
            "+2.5",
            "1e23",
            "8.589973e9",
            "9007199254740993",
            "9007199254740992.5",
            "9007199254740993.0000000001",
            "18446744073709551616",
            "123456789012345678901234567890",
            "3.141592653589793238462643383279",
            "2.2250738585072011e-308",
            "2.2250738585072014e-308",
            "4.9406564584124654e-324",
            "2.4703282292062327e-324",
            "2.4703282292062328e-324",
            "5e-324",
            "1e-400",
            "1.7976931348623157e308",
            "1.7976931348623158e308",
            "1.7976931348623159e308",
            "1e309",
            "0.000000000000000000000000000001",
            "100000000000000000000000",
            "1e22",
            "1e-22",
            "123e-25",
            "7.038531e-26",
            "1448997445238699",
            "0.30000000000000004",
            "2.225073858507201136057409796709131975934819546351645648e-308",
            "1.00000000000000011102230246251565404236316680908203125",
            "1.00000000000000011102230246251565404236316680908203124",
            "1.00000000000000011102230246251565404236316680908203126",
            "39935214700241972565063000759934770820570.1490",
            "1234567890123456789012345678901234567890123456789.5e-3",
        ] {
            check(s);
        }
        // The exact halfway point between 1 and the next f64, then 800 digits later a 1.
        let mut s = String::from("1.00000000000000011102230246251565404236316680908203125");
        s.push_str(&"0".repeat(900));
        check(&s);
        s.push('1');
        check(&s);
        check(&format!("0.{}1", "0".repeat(330)));
        check(&format!("{}e-400", "9".repeat(1000)));
    }

    #[test]
    fn agrees_with_std_on_random_numbers() {
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for _ in 0..100_000 {
            let len = 1 + next() % 25;
            let mut s: String = (0..len)
                .map(|_| char::from(b'0' + (next() % 10) as u8))
                .collect();
            if next() % 2 == 0 {
                let at = (next() % (len + 1)) as usize;
                s.insert(at, '.');
            }
            if next() % 3 > 0 {
                let e = (next() % 700) as i64 - 350;
                s.push_str(&format!("e{e}"));
            }
            check(&s);
        }
    }

    #[test]
    fn refuses_what_is_not_a_decimal() {
        for s in [
            "", "-", ".", "e5", "1e", "1e+", "1.2.3", "1x", "inf", "nan", "0x10", " 1", "1 ",
        ] {
            assert_eq!(parse_f64(s), None, "{s:?}");
        }
    }
}
