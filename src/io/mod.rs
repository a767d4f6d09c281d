//! Input adapters: text in, `Scenario` (or a named error) out, and back where it round-trips.
pub mod cli;
pub mod json;
pub mod url;
