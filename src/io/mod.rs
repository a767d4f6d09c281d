//! The front doors' old paths: `io::url` (the page's URL state) and, re-exported, `io::cli` and
//! `io::json`, which now live in [`crate::cli`]. The input adapters proper are [`crate::input`].
pub use crate::cli;
pub use crate::cli::json;
pub mod url;
