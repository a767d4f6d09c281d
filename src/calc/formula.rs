//! A ledger line's formula, rendered only when someone reads it.
//!
//! `plan` builds thousands of formulas in a sweep that nobody reads; a `Formula` keeps its
//! template and numbers and writes the text on first use (then keeps it). It reads like a
//! `&str` (`Deref`, `Display`), so views format it as they would a string.

use std::fmt;
use std::ops::Deref;
use std::sync::{Arc, OnceLock};

use super::units::{format_gib, Grouped};

/// One value substituted into a formula's `{}`.
#[derive(Clone, Copy, Debug)]
pub enum Arg {
    /// A count or byte figure with thousands separators: `1,310,720`.
    Grouped(i128),
    /// A plain integer: `80`.
    Plain(i128),
    /// vLLM's `format_gib`: `36.08`.
    Gib(i128),
    /// A float as Rust prints it shortest: `0.9`.
    Float(f64),
    /// Fixed text.
    Text(&'static str),
}

impl PartialEq for Arg {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Arg::Grouped(a), Arg::Grouped(b))
            | (Arg::Plain(a), Arg::Plain(b))
            | (Arg::Gib(a), Arg::Gib(b)) => a == b,
            (Arg::Float(a), Arg::Float(b)) => a.to_bits() == b.to_bits(),
            (Arg::Text(a), Arg::Text(b)) => a == b,
            (Arg::Grouped(_), _)
            | (Arg::Plain(_), _)
            | (Arg::Gib(_), _)
            | (Arg::Float(_), _)
            | (Arg::Text(_), _) => false,
        }
    }
}

impl fmt::Display for Arg {
    // Never inlined: no link the first verdict is trained on calls it (DESIGN.md, "Rare code").
    #[inline(never)]
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Arg::Grouped(n) => write!(f, "{}", Grouped(*n)),
            Arg::Plain(n) => write!(f, "{n}"),
            Arg::Gib(n) => f.write_str(&format_gib(*n)),
            Arg::Float(x) => write!(f, "{x}"),
            Arg::Text(t) => f.write_str(t),
        }
    }
}

const MAX_ARGS: usize = 8;

// Both variants live behind the formula's one `Arc`, allocated once per formula, so the
// template's inline arguments cost no extra allocation and their size does not spread.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq)]
enum Spec {
    Text(Box<str>),
    Template {
        template: &'static str,
        args: [Option<Arg>; MAX_ARGS],
    },
}

/// A formula with the numbers substituted, as text on demand.
///
/// ```
/// use headroom::calc::formula::{Arg, Formula};
/// let f = Formula::template("ceil({} x {}) = {}", &[Arg::Grouped(85_029_158_912), Arg::Float(0.9), Arg::Grouped(76_526_243_021)]);
/// assert_eq!(&*f, "ceil(85,029,158,912 x 0.9) = 76,526,243,021");
/// ```
#[derive(Clone)]
pub struct Formula(Arc<Inner>);

/// Shared between the copies of a formula (the TP ranks of a stage), so the text is written at
/// most once for all of them.
struct Inner {
    spec: Spec,
    text: OnceLock<Box<str>>,
}

impl Formula {
    /// A template whose `{}` marks take `args` in order (at most eight).
    pub fn template(template: &'static str, args: &[Arg]) -> Formula {
        let mut slots = [None; MAX_ARGS];
        for (slot, a) in slots.iter_mut().zip(args) {
            *slot = Some(*a);
        }
        debug_assert!(
            args.len() <= MAX_ARGS,
            "at most {MAX_ARGS} formula arguments"
        );
        Formula(Arc::new(Inner {
            spec: Spec::Template {
                template,
                args: slots,
            },
            text: OnceLock::new(),
        }))
    }

    // Never inlined: no link the first verdict is trained on calls it (DESIGN.md, "Rare code").
    #[inline(never)]
    fn render(&self) -> Box<str> {
        match &self.0.spec {
            Spec::Text(t) => t.clone(),
            Spec::Template { template, args } => {
                let mut out = String::with_capacity(template.len() + 24);
                let mut args = args.iter().flatten();
                let mut rest: &str = template;
                while let Some(at) = rest.find("{}") {
                    out.push_str(&rest[..at]);
                    if let Some(a) = args.next() {
                        use fmt::Write;
                        let _ = write!(out, "{a}");
                    }
                    rest = &rest[at + 2..];
                }
                out.push_str(rest);
                out.into()
            }
        }
    }
}

impl Deref for Formula {
    type Target = str;

    fn deref(&self) -> &str {
        if let Spec::Text(t) = &self.0.spec {
            return t;
        }
        self.0.text.get_or_init(|| self.render())
    }
}

impl fmt::Display for Formula {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self)
    }
}

impl fmt::Debug for Formula {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

impl PartialEq for Formula {
    /// Equal templates and numbers, or equal text: compared without rendering when both are
    /// templates.
    fn eq(&self, other: &Self) -> bool {
        if Arc::ptr_eq(&self.0, &other.0) {
            return true;
        }
        match (&self.0.spec, &other.0.spec) {
            (Spec::Template { .. }, Spec::Template { .. }) | (Spec::Text(_), Spec::Text(_)) => {
                self.0.spec == other.0.spec
            }
            _ => **self == **other,
        }
    }
}

impl From<String> for Formula {
    fn from(s: String) -> Formula {
        Formula(Arc::new(Inner {
            spec: Spec::Text(s.into()),
            text: OnceLock::new(),
        }))
    }
}

impl From<&'static str> for Formula {
    fn from(s: &'static str) -> Formula {
        Formula::template(s, &[])
    }
}

/// The empty formula.
impl Default for Formula {
    fn default() -> Formula {
        Formula::from("")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_once_and_compares_by_value() {
        let a = Formula::template(
            "{} x {} = {}",
            &[Arg::Plain(80), Arg::Grouped(16_384), Arg::Gib(1 << 30)],
        );
        assert_eq!(&*a, "80 x 16,384 = 1.0");
        let b = Formula::template(
            "{} x {} = {}",
            &[Arg::Plain(80), Arg::Grouped(16_384), Arg::Gib(1 << 30)],
        );
        assert_eq!(a, b);
        assert_eq!(a, Formula::from("80 x 16,384 = 1.0".to_string()));
        assert_ne!(
            a,
            Formula::template(
                "{} x {} = {}",
                &[Arg::Plain(81), Arg::Grouped(16_384), Arg::Gib(1 << 30)]
            )
        );
        assert_eq!(format!("{}", Formula::from("no args")), "no args");
    }
}
