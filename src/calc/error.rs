//! `CalcError`: a scenario `plan` cannot compute, with what it names at fault and a message.

use std::fmt;

use super::input::Input;

/// What a `CalcError` names at fault. Most errors name one of the scenario's inputs; the others
/// name a figure no single input sets, and say which kind it is, so that a front door places
/// the message by the input and never by a string it has to recognise.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Culprit {
    /// One of the scenario's inputs, named by its flag (`tensor-parallel-size`).
    Input(Input),
    /// A key of the model's config.json or catalog row (`num_hidden_layers`,
    /// `linear_conv_kernel_dim`, `measured.kv_tokens`): the model is at fault, through a value
    /// no input sets on its own.
    ConfigKey(&'static str),
    /// A term of the unified-memory gate that comes with a seed example and no input sets
    /// (`prefill-term`, `seat-term`).
    ExampleTerm(&'static str),
    /// An argument of a solver in `calc::solve`, not of the scenario (`extras`, `for`,
    /// `per-layer weights`).
    SolverArg(&'static str),
}

impl Culprit {
    /// The name the error is filed under: the input's flag, or the key or argument as written.
    pub fn name(self) -> &'static str {
        match self {
            Culprit::Input(i) => i.flag(),
            Culprit::ConfigKey(k) | Culprit::ExampleTerm(k) | Culprit::SolverArg(k) => k,
        }
    }
}

impl From<Input> for Culprit {
    fn from(i: Input) -> Culprit {
        Culprit::Input(i)
    }
}

/// A scenario `plan` cannot compute, naming what is at fault (an input, by vLLM's flag name
/// where it has one) with a human message.
///
/// ```
/// use headroom::calc::{CalcError, Input};
/// let e = CalcError::new(Input::Tp, "tensor-parallel-size 3 does not divide 64 attention heads");
/// assert_eq!(e.field(), "tensor-parallel-size");
/// assert_eq!(e.input(), Some(Input::Tp));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CalcError {
    culprit: Culprit,
    message: String,
}

impl CalcError {
    pub fn new(culprit: impl Into<Culprit>, message: impl Into<String>) -> CalcError {
        CalcError {
            culprit: culprit.into(),
            message: message.into(),
        }
    }

    /// The flag or config field at fault, e.g. `tensor-parallel-size`.
    pub fn field(&self) -> &'static str {
        self.culprit.name()
    }

    /// The input at fault; `None` when the error names a config key, an example's gate term or
    /// a solver's argument (see `culprit`).
    pub fn input(&self) -> Option<Input> {
        match self.culprit {
            Culprit::Input(i) => Some(i),
            Culprit::ConfigKey(_) | Culprit::ExampleTerm(_) | Culprit::SolverArg(_) => None,
        }
    }

    /// What the error names at fault.
    pub fn culprit(&self) -> Culprit {
        self.culprit
    }

    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for CalcError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for CalcError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_is_the_flag_or_the_key() {
        for i in Input::ALL {
            let e = CalcError::new(i, "m");
            assert_eq!(e.field(), i.flag());
            assert_eq!(e.input(), Some(i));
            assert_eq!(Input::from_flag(e.field()), Some(i), "{i:?}");
        }
        let e = CalcError::new(Culprit::ConfigKey("num_hidden_layers"), "m");
        assert_eq!((e.field(), e.input()), ("num_hidden_layers", None));
        let e = CalcError::new(Culprit::SolverArg("extras"), "m");
        assert_eq!((e.field(), e.input()), ("extras", None));
        let e = CalcError::new(Culprit::ExampleTerm("seat-term"), "m");
        assert_eq!((e.field(), e.input()), ("seat-term", None));
    }
}
