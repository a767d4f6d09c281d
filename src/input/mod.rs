//! The input layer: text in, `Scenario` (or an error naming the input) out, for the page and
//! the CLI alike. std only, like `calc`.
//!
//! - [`schema`]: the one table, a row per input (key, flag, parser and bounds, default, label,
//!   help, section). An input is one `Input` variant, one row there and one builder arm.
//! - [`values`]: the parsers the rows name (vLLM's count and byte forms, lists, partitions).
//! - [`query`]: the query-string codec, shared by the page, `headroom link` and
//!   `headroom plan --url`.
//! - [`scenario`]: the one builder, [`scenario()`], from the inputs' texts to a `Scenario`.

pub mod query;
pub mod scenario;
pub mod schema;
pub mod values;

pub use crate::calc::input::Input;
/// The inputs, by the name the URL codec and the page have always used.
pub use crate::calc::input::Input as Field;
pub use query::UrlState;
pub use scenario::{attribute, scenario, InputError};
pub use schema::{row_of, Row, Section, ROWS};
