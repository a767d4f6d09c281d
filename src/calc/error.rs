//! `CalcError`: a scenario `plan` cannot compute, with the input it names and a message.

use std::fmt;

/// A scenario `plan` cannot compute, naming the field (vLLM's flag name where it has one).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CalcError {
    field: &'static str,
    message: String,
}

impl CalcError {
    pub fn new(field: &'static str, message: impl Into<String>) -> CalcError {
        CalcError {
            field,
            message: message.into(),
        }
    }

    /// The flag or config field at fault, e.g. `tensor-parallel-size`.
    pub fn field(&self) -> &'static str {
        self.field
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
