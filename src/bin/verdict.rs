//! The first verdict before the app: a small program (the core without the page's framework)
//! that public/boot.js runs while the app's larger wasm is still on its way. It plans the
//! scenario the page opens with, through the same functions the app calls
//! (`headroom::verdict`), and hands the banner's words and the leading figures to the loader,
//! which writes them into the static shell as text. The app then replaces the shell with the
//! live page, showing the same words.

// No `main` in the page's program: the page calls `first_verdict` and nothing else, and a
// `main` brings std's runtime start and stdout's flush at exit into its first part. (A native
// build, for the tests' and lints' sake, keeps an empty one.)
#![cfg_attr(target_arch = "wasm32", no_main)]

use wasm_bindgen::prelude::*;

#[cfg(not(target_arch = "wasm32"))]
fn main() {}

/// The first verdict of the page opened on `link` (`location.search + location.hash`), with
/// the browser's stored state and a reload's typed texts (`null` when absent): the banner's
/// class, headline, second line and warning, the test id of the unit radio to check, then per
/// leading figure its test id, text and provenance label, as one list of strings. The page's
/// build (`catalog-compiled,config-reader`, split in six parts by scripts/split-verdict.mjs)
/// plans every state; a build with `catalog-compiled` alone answers an empty list for a pasted
/// config.json, which it cannot read (`verdict::handed_over`), and public/boot.js paints no
/// such answer.
#[wasm_bindgen]
pub fn first_verdict(link: &str, stored: Option<String>, typed: Option<String>) -> Vec<String> {
    let (stored, typed) = (stored.as_deref(), typed.as_deref());
    if headroom::verdict::handed_over(link, stored, typed) {
        return Vec::new();
    }
    headroom::verdict::first_verdict(link, stored, typed).words()
}
