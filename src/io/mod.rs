//! Input adapters: text in, `Scenario` (or a named error) out, and back where it round-trips.
pub mod url;
