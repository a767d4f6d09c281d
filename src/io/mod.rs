//! The page's URL state under its old path, `io::url`. The input adapters proper are
//! [`crate::input`]; the command line and its JSON view are [`crate::cli`].
pub mod url;
