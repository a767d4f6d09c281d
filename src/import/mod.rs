//! Importers beside the core: text a user already has (a `vllm serve` line, a vLLM startup log) in, Headroom's inputs (or a named error) out. Std-only like `calc`, and below
//! the views: the CLI and the page both read through it.
//!
//! - [`shell`]: shell text split into commands and words, as a POSIX shell would.
//! - [`flags`]: vLLM 0.33.0's `vllm serve` flags, each with what Headroom does with it.
//! - [`command`]: a launch command read into vLLM's destinations and Headroom's inputs.
//! - [`export`]: a scenario written back as a `vllm serve` command.
//! - [`log`]: a vLLM startup log read into readings (measured inputs) and the release.
//! - [`replay`]: a log's `non-default args` as flags, and its readings against a plan.

pub mod command;
pub mod export;
pub mod flags;
pub mod log;
mod numbers;
pub mod page;
pub mod replay;
pub mod shell;
