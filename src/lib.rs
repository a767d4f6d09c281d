//! Headroom: vLLM's GPU memory plan for every rank of a TP x PP deployment.
//!
//! The crate is one data flow: inputs become a [`calc::Scenario`], [`calc::plan()`] turns it into a
//! [`calc::Plan`], and views (the CLI, the web page, JSON, URLs) only format that plan.
//! `calc` is std-only and knows nothing of serde or the browser; `catalog`, `input`, `import` and `io` adapt
//! text to `calc` types; `ui` (feature `web`) is the Leptos page.

// `catalog-compiled` builds the first verdict's program (with `config-reader`, the page's: the
// catalog as values, the examples and the reader; without it, a program that leaves a pasted
// config.json unread and unplanned): the page, the CLI and the tests read the catalog's JSON.
#[cfg(all(
    feature = "catalog-compiled",
    any(feature = "web", not(feature = "verdict"))
))]
compile_error!("the `catalog-compiled` feature builds only the first verdict's program: use it as `--no-default-features --features verdict,catalog-compiled`");

pub mod calc;
pub mod catalog;
pub mod cli;
pub mod contrast;
pub mod diagnose;
pub mod fixes;
pub mod import;
pub mod input;
pub mod io;
pub mod probes;
#[cfg(feature = "web")]
pub mod ui;
pub mod verdict;
pub mod walkthrough;
