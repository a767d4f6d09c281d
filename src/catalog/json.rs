//! A small JSON reader for catalog rows and pasted `config.json` files.
//!
//! The browser app carries this instead of `serde_json` (which the CLI still uses to write its
//! `--json` output): it is a few kilobytes of code where serde's generic deserializers were
//! tens, and the page parses a catalog row before its first verdict. It reads RFC 8259 JSON
//! plus the three literals Python's `json` module writes and reads (`Infinity`, `-Infinity`,
//! `NaN`): Hugging Face and vLLM load config.json with Python, and NVIDIA's Nemotron configs
//! carry `"time_step_limit": [0.0, Infinity]`. No comments, no trailing commas. Numbers keep
//! the text they were written as, so messages quote a value exactly as the file has it.
//!
//! ```
//! use headroom::catalog::json::{parse, Value};
//! let v = parse(r#"{"hidden_size": 4096, "rms_norm_eps": 1e-05, "tie": false}"#).unwrap();
//! assert_eq!(v.get("hidden_size").and_then(Value::as_u64), Some(4096));
//! assert_eq!(v.get("rms_norm_eps").and_then(Value::as_f64), Some(1e-5));
//! assert_eq!(v.get("rms_norm_eps").unwrap().to_string(), "1e-05");
//! assert!(parse("[1, 2,]").unwrap_err().to_string().contains("line 1, column 7"));
//! ```

use std::fmt;

/// Arrays and objects nested deeper than this are refused (as `serde_json` does), so a
/// hostile input cannot exhaust the stack.
pub const MAX_DEPTH: usize = 128;

/// A JSON value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Number(Number),
    String(String),
    Array(Vec<Value>),
    Object(Map),
}

/// A number, with the text it was written as.
#[derive(Clone, Debug, PartialEq)]
pub struct Number {
    text: Box<str>,
    kind: NumberKind,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum NumberKind {
    /// An integer that fits `u64`.
    Unsigned(u64),
    /// A negative integer that fits `i64`.
    Negative(i64),
    /// A fraction, an exponent, or an integer too large for 64 bits.
    Float(f64),
}

/// An object's members in the order written; a repeated key keeps its last value, as in
/// `serde_json`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Map {
    members: Vec<(String, Value)>,
}

impl Map {
    /// The value of `key`.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.members.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// The members, in the order written.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Value)> {
        self.members.iter().map(|(k, v)| (k.as_str(), v))
    }

    pub fn len(&self) -> usize {
        self.members.len()
    }

    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    /// The map of members read in order, a repeated key at its first place with its last
    /// value. Sorting an index finds the repeats: O(n log n) in the members, where checking
    /// each key against those before it was quadratic (100,000 keys took 15 s).
    fn from_members(mut members: Vec<(String, Value)>) -> Map {
        if members.len() < 2 {
            return Map { members };
        }
        let mut order: Vec<usize> = (0..members.len()).collect();
        crate::calc::sort_by_less(&mut order, |a, b| (&members[a].0, a) < (&members[b].0, b));
        let mut keep = vec![true; members.len()];
        let mut i = 0;
        while i < order.len() {
            let mut j = i + 1;
            while j < order.len() && members[order[j]].0 == members[order[i]].0 {
                j += 1;
            }
            if j - i > 1 {
                // The first place keeps the last value; the later places go.
                let last = std::mem::replace(&mut members[order[j - 1]].1, Value::Null);
                members[order[i]].1 = last;
                for &k in &order[i + 1..j] {
                    keep[k] = false;
                }
            }
            i = j;
        }
        let mut place = 0;
        members.retain(|_| {
            place += 1;
            keep[place - 1]
        });
        Map { members }
    }
}

impl Value {
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// A non-negative integer written without a fraction or exponent (`8`, not `8.0`).
    pub fn as_u64(&self) -> Option<u64> {
        match self {
            Value::Number(Number {
                kind: NumberKind::Unsigned(n),
                ..
            }) => Some(*n),
            _ => None,
        }
    }

    /// Any number, as the nearest `f64`.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Number(n) => Some(match n.kind {
                NumberKind::Unsigned(u) => u as f64,
                NumberKind::Negative(i) => i as f64,
                NumberKind::Float(f) => f,
            }),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_array(&self) -> Option<&Vec<Value>> {
        match self {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }

    pub fn as_object(&self) -> Option<&Map> {
        match self {
            Value::Object(m) => Some(m),
            _ => None,
        }
    }

    /// The member `key` of an object.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.as_object().and_then(|m| m.get(key))
    }

    /// What kind of value this is, for messages ("a string", "an array").
    pub fn kind(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "a boolean",
            Value::Number(_) => "a number",
            Value::String(_) => "a string",
            Value::Array(_) => "an array",
            Value::Object(_) => "an object",
        }
    }
}

/// Compact JSON, numbers as written.
impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Null => f.write_str("null"),
            Value::Bool(b) => write!(f, "{b}"),
            Value::Number(n) => f.write_str(&n.text),
            Value::String(s) => write_string(f, s),
            Value::Array(a) => {
                f.write_str("[")?;
                for (i, v) in a.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{v}")?;
                }
                f.write_str("]")
            }
            Value::Object(m) => {
                f.write_str("{")?;
                for (i, (k, v)) in m.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write_string(f, k)?;
                    write!(f, ":{v}")?;
                }
                f.write_str("}")
            }
        }
    }
}

fn write_string(f: &mut fmt::Formatter<'_>, s: &str) -> fmt::Result {
    f.write_str("\"")?;
    for c in s.chars() {
        match c {
            '"' => f.write_str("\\\"")?,
            '\\' => f.write_str("\\\\")?,
            '\n' => f.write_str("\\n")?,
            '\r' => f.write_str("\\r")?,
            '\t' => f.write_str("\\t")?,
            c if (c as u32) < 0x20 => write!(f, "\\u{:04x}", c as u32)?,
            c => write!(f, "{c}")?,
        }
    }
    f.write_str("\"")
}

/// Why a text is not JSON, and where (1-based line and column, in characters).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JsonError {
    pub message: &'static str,
    pub line: usize,
    pub column: usize,
}

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} at line {}, column {}",
            self.message, self.line, self.column
        )
    }
}

impl std::error::Error for JsonError {}

/// Parses one JSON text (surrounding whitespace allowed).
pub fn parse(text: &str) -> Result<Value, JsonError> {
    let mut p = Parser {
        text,
        bytes: text.as_bytes(),
        pos: 0,
    };
    p.skip_ws();
    let v = p.value(0)?;
    p.skip_ws();
    if p.pos < p.bytes.len() {
        return Err(p.error("trailing characters after the value"));
    }
    Ok(v)
}

struct Parser<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
}

impl Parser<'_> {
    fn error(&self, message: &'static str) -> JsonError {
        let end = self.pos.min(self.bytes.len());
        // Back up to a character boundary so the slice below cannot split a character.
        let end = (0..=end)
            .rev()
            .find(|i| self.text.is_char_boundary(*i))
            .unwrap_or(0);
        let before = &self.text[..end];
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        JsonError {
            message,
            line,
            column,
        }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn skip_ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.pos += 1;
        }
    }

    fn expect_word(&mut self, word: &str, v: Value) -> Result<Value, JsonError> {
        if self.bytes[self.pos..].starts_with(word.as_bytes()) {
            self.pos += word.len();
            Ok(v)
        } else {
            Err(self.error("expected a value"))
        }
    }

    fn value(&mut self, depth: usize) -> Result<Value, JsonError> {
        match self.peek() {
            None => Err(self.error("unexpected end of input, expected a value")),
            Some(b'n') => self.expect_word("null", Value::Null),
            Some(b't') => self.expect_word("true", Value::Bool(true)),
            Some(b'f') => self.expect_word("false", Value::Bool(false)),
            Some(b'"') => self.string().map(Value::String),
            Some(b'N') => self.python_literal("NaN", f64::NAN),
            Some(b'I') => self.python_literal("Infinity", f64::INFINITY),
            Some(b'-') if self.bytes[self.pos..].starts_with(b"-Infinity") => {
                self.python_literal("-Infinity", f64::NEG_INFINITY)
            }
            Some(b'-' | b'0'..=b'9') => self.number().map(Value::Number),
            Some(b'[') => {
                let mut items = Vec::new();
                self.members(depth, b']', |p| {
                    items.push(p.value(depth + 1)?);
                    Ok(())
                })?;
                Ok(Value::Array(items))
            }
            Some(b'{') => {
                let mut members = Vec::new();
                self.members(depth, b'}', |p| {
                    match p.peek() {
                        Some(b'"') => {}
                        None => return Err(p.error("unexpected end of input in an object")),
                        _ => return Err(p.error("expected a key in double quotes")),
                    }
                    let key = p.string()?;
                    p.skip_ws();
                    if p.peek() != Some(b':') {
                        return Err(p.error("expected `:`"));
                    }
                    p.pos += 1;
                    p.skip_ws();
                    let v = p.value(depth + 1)?;
                    members.push((key, v));
                    Ok(())
                })?;
                Ok(Value::Object(Map::from_members(members)))
            }
            Some(_) => Err(self.error("expected a value")),
        }
    }

    /// The members of an array or object; `pos` is at its opening bracket. `member` reads one
    /// (whitespace before it is skipped); this handles the nesting limit, the commas and the
    /// closing bracket.
    fn members(
        &mut self,
        depth: usize,
        close: u8,
        mut member: impl FnMut(&mut Self) -> Result<(), JsonError>,
    ) -> Result<(), JsonError> {
        if depth >= MAX_DEPTH {
            return Err(self.error("arrays and objects nested too deeply"));
        }
        self.pos += 1;
        self.skip_ws();
        if self.peek() == Some(close) {
            self.pos += 1;
            return Ok(());
        }
        loop {
            self.skip_ws();
            member(self)?;
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(c) if c == close => {
                    self.pos += 1;
                    return Ok(());
                }
                None => {
                    return Err(self.error(if close == b']' {
                        "unexpected end of input in an array"
                    } else {
                        "unexpected end of input in an object"
                    }))
                }
                _ => {
                    return Err(self.error(if close == b']' {
                        "expected `,` or `]`"
                    } else {
                        "expected `,` or `}`"
                    }))
                }
            }
        }
    }

    /// A string; `pos` is at its opening quote.
    fn string(&mut self) -> Result<String, JsonError> {
        self.pos += 1;
        let mut out = String::new();
        loop {
            let start = self.pos;
            while let Some(b) = self.peek() {
                if b == b'"' || b == b'\\' || b < 0x20 {
                    break;
                }
                self.pos += 1;
            }
            // `start..pos` ends before an ASCII byte or at the end: both are boundaries.
            out.push_str(&self.text[start..self.pos]);
            match self.peek() {
                None => return Err(self.error("unexpected end of input in a string")),
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    self.pos += 1;
                    let c = match self.peek() {
                        Some(b'"') => '"',
                        Some(b'\\') => '\\',
                        Some(b'/') => '/',
                        Some(b'b') => '\u{8}',
                        Some(b'f') => '\u{c}',
                        Some(b'n') => '\n',
                        Some(b'r') => '\r',
                        Some(b't') => '\t',
                        Some(b'u') => {
                            self.pos += 1;
                            let hi = self.hex4()?;
                            let code = if (0xD800..0xDC00).contains(&hi) {
                                if !self.bytes[self.pos..].starts_with(b"\\u") {
                                    return Err(
                                        self.error("lone leading surrogate in a \\u escape")
                                    );
                                }
                                self.pos += 2;
                                let lo = self.hex4()?;
                                if !(0xDC00..0xE000).contains(&lo) {
                                    return Err(
                                        self.error("invalid trailing surrogate in a \\u escape")
                                    );
                                }
                                0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)
                            } else {
                                hi
                            };
                            out.push(
                                char::from_u32(code)
                                    .ok_or_else(|| self.error("invalid \\u escape"))?,
                            );
                            continue;
                        }
                        _ => return Err(self.error("invalid escape in a string")),
                    };
                    self.pos += 1;
                    out.push(c);
                }
                Some(_) => return Err(self.error("control character in a string")),
            }
        }
    }

    fn hex4(&mut self) -> Result<u32, JsonError> {
        let digits = self
            .bytes
            .get(self.pos..self.pos + 4)
            .ok_or_else(|| self.error("unexpected end of input in a \\u escape"))?;
        let mut v = 0u32;
        for d in digits {
            let x = (*d as char)
                .to_digit(16)
                .ok_or_else(|| self.error("invalid \\u escape"))?;
            v = v * 16 + x;
        }
        self.pos += 4;
        Ok(v)
    }

    fn digits(&mut self) -> usize {
        let start = self.pos;
        while let Some(b'0'..=b'9') = self.peek() {
            self.pos += 1;
        }
        self.pos - start
    }

    /// Python's non-finite literals, as `json.loads` reads them.
    fn python_literal(&mut self, word: &'static str, f: f64) -> Result<Value, JsonError> {
        self.expect_word(
            word,
            Value::Number(Number {
                text: word.into(),
                kind: NumberKind::Float(f),
            }),
        )
    }

    fn number(&mut self) -> Result<Number, JsonError> {
        let start = self.pos;
        let negative = self.peek() == Some(b'-');
        if negative {
            self.pos += 1;
        }
        let int_start = self.pos;
        let n = self.digits();
        if n == 0 {
            return Err(self.error("expected a digit"));
        }
        if n > 1 && self.bytes[int_start] == b'0' {
            return Err(self.error("a number cannot start with 0"));
        }
        let mut integer = true;
        if self.peek() == Some(b'.') {
            integer = false;
            self.pos += 1;
            if self.digits() == 0 {
                return Err(self.error("expected a digit after the decimal point"));
            }
        }
        if let Some(b'e' | b'E') = self.peek() {
            integer = false;
            self.pos += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.pos += 1;
            }
            if self.digits() == 0 {
                return Err(self.error("expected a digit in the exponent"));
            }
        }
        let text = &self.text[start..self.pos];
        let exact = if !integer {
            None
        } else if negative {
            text.parse::<i64>().ok().map(NumberKind::Negative)
        } else {
            text.parse::<u64>().ok().map(NumberKind::Unsigned)
        };
        let kind = match exact {
            Some(k) => k,
            None => {
                let f = crate::calc::decimal::parse_f64(text)
                    .ok_or_else(|| self.error("invalid number"))?;
                if !f.is_finite() {
                    return Err(self.error("number out of range"));
                }
                NumberKind::Float(f)
            }
        };
        Ok(Number {
            text: text.into(),
            kind,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_pythons_non_finite_literals() {
        // NVIDIA's Nemotron-H configs, as published: Python's json writes and reads these.
        let v = parse(r#"{"time_step_limit": [0.0, Infinity], "a": -Infinity, "b": NaN}"#).unwrap();
        let limit = v.get("time_step_limit").and_then(Value::as_array).unwrap();
        assert_eq!(limit[1].as_f64(), Some(f64::INFINITY));
        assert_eq!(limit[1].to_string(), "Infinity");
        assert_eq!(v.get("a").and_then(Value::as_f64), Some(f64::NEG_INFINITY));
        assert!(v.get("b").and_then(Value::as_f64).unwrap().is_nan());
    }

    #[test]
    fn reads_every_kind_of_value() {
        let v = parse(
            " {\"a\": [1, -2, 3.5, 1e3, 18446744073709551616], \"b\": {\"c\": null}, \"d\": true, \"e\": \"x\\n\\u00e9\\ud83d\\ude00\"} ",
        )
        .unwrap();
        let a = v.get("a").and_then(Value::as_array).unwrap();
        assert_eq!(a[0].as_u64(), Some(1));
        assert_eq!(a[1].as_u64(), None);
        assert_eq!(a[1].as_f64(), Some(-2.0));
        assert_eq!(a[2].as_f64(), Some(3.5));
        assert_eq!(a[3].as_u64(), None, "1e3 is not written as an integer");
        assert_eq!(a[4].as_u64(), None, "2^64 does not fit");
        assert_eq!(a[4].as_f64(), Some(18446744073709551616.0));
        assert!(v.get("b").unwrap().get("c").unwrap().is_null());
        assert_eq!(v.get("d").and_then(Value::as_bool), Some(true));
        assert_eq!(v.get("e").and_then(Value::as_str), Some("x\né😀"));
        assert_eq!(
            v.to_string(),
            "{\"a\":[1,-2,3.5,1e3,18446744073709551616],\"b\":{\"c\":null},\"d\":true,\"e\":\"x\\né😀\"}"
        );
    }

    #[test]
    fn a_repeated_key_keeps_its_last_value() {
        let v = parse(r#"{"k": 1, "k": 2}"#).unwrap();
        assert_eq!(v.get("k").and_then(Value::as_u64), Some(2));
        assert_eq!(v.as_object().unwrap().len(), 1);
        // At its first place, among other keys, however often it repeats.
        let v = parse(r#"{"b": 1, "a": 2, "b": 3, "c": 4, "a": 5, "b": 6}"#).unwrap();
        let members: Vec<(&str, u64)> = v
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| (k, v.as_u64().unwrap()))
            .collect();
        assert_eq!(members, [("b", 6), ("a", 5), ("c", 4)]);
    }

    #[test]
    fn a_large_object_keeps_every_key_in_order() {
        // 100,000 distinct keys and one repeated: read in linearithmic work (this took 15 s
        // when each key was checked against those before it).
        let mut text = String::from("{");
        for i in 0..100_000 {
            text.push_str(&format!("\"k{i}\": {i}, "));
        }
        text.push_str("\"k7\": 0}");
        let v = parse(&text).unwrap();
        let m = v.as_object().unwrap();
        assert_eq!(m.len(), 100_000);
        assert_eq!(m.iter().nth(99_999).map(|(k, _)| k), Some("k99999"));
        assert_eq!(v.get("k7").and_then(Value::as_u64), Some(0));
        assert_eq!(v.get("k8").and_then(Value::as_u64), Some(8));
    }

    #[test]
    fn refuses_what_is_not_json_and_says_where() {
        for (text, what) in [
            ("", "end of input"),
            ("{", "end of input"),
            ("[1,]", "expected a value"),
            ("{\"a\" 1}", "expected `:`"),
            ("{a: 1}", "key in double quotes"),
            ("01", "cannot start with 0"),
            ("1.", "after the decimal point"),
            ("1e", "exponent"),
            ("-", "expected a digit"),
            ("1e400", "out of range"),
            ("Nan", "expected a value"),
            ("-Inf", "expected a digit"),
            ("\"\\x\"", "invalid escape"),
            ("\"a\u{1}\"", "control character"),
            ("\"\\ud800\"", "surrogate"),
            ("\"\\u12\"", "\\u escape"),
            ("{} {}", "trailing characters"),
            ("nul", "expected a value"),
            ("\"é", "end of input"),
        ] {
            let e = parse(text).expect_err(text);
            assert!(e.to_string().contains(what), "{text:?}: {e}");
        }
        let e = parse("{\n  \"a\": tru\n}").unwrap_err();
        assert_eq!((e.line, e.column), (2, 8));
    }

    #[test]
    fn random_text_never_panics() {
        // Fragments of JSON, shuffled: whatever the text, the reader answers or refuses.
        const BITS: [&str; 24] = [
            "{", "}", "[", "]", ":", ",", "\"", "\\", "\\u", "d83d", "dc00", "0", "-", "1.5", "e",
            "E+", "true", "nul", " ", "\n", "é", "😀", "\u{1}", "\"k\":",
        ];
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        for _ in 0..20_000 {
            let mut text = String::new();
            for _ in 0..(state % 24) {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                text.push_str(BITS[(state % BITS.len() as u64) as usize]);
            }
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1);
            let _ = parse(&text);
            let _ = crate::calc::decimal::parse_f64(&text);
        }
    }

    #[test]
    fn deep_nesting_is_refused_not_a_stack_overflow() {
        let deep = "[".repeat(100_000);
        assert!(parse(&deep)
            .unwrap_err()
            .to_string()
            .contains("nested too deeply"));
        let ok = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        assert!(parse(&ok).is_ok());
    }
}
