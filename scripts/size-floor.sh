#!/usr/bin/env bash
# Where the page's size goes, measured (not a test: it prints numbers). Builds two small wasm
# programs with the page's release settings (opt-level z, LTO, one codegen unit, panic=abort,
# then wasm-bindgen and wasm-opt -Oz) and prints their gzip -9 sizes:
#
#   core:   Headroom's accounting core with its catalog, and nothing of the page: decode a URL,
#           plan, render the ledger, the checks and the log lines, run the three solvers, list
#           the catalog. This is what any page built on the core carries.
#   leptos: Leptos 0.8.23 (csr) mounting one view with a signal, a memo and an effect. This is
#           what any Leptos page carries.
#
# Their sum is the least any Leptos page on this core can weigh; the core alone bounds the first
# verdict's program (dist/headroom-verdict-*_bg.wasm, printed beside it) against the 150 KB
# critical path.
# Usage: bash scripts/size-floor.sh   (needs what scripts/setup.sh installs; runs offline)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
export PATH="$ROOT/node_modules/.bin:${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"
WORK="$ROOT/.tmp/size-floor"
mkdir -p "$WORK"

PROFILE='[profile.release]
opt-level = "z"
lto = true
codegen-units = 1
panic = "abort"'

mkdir -p "$WORK/core/src" "$WORK/leptos/src"
cat >"$WORK/core/Cargo.toml" <<EOF
[package]
name = "floor-core"
version = "0.0.0"
edition = "2021"
publish = false
[lib]
crate-type = ["cdylib"]
[dependencies]
headroom = { path = "$ROOT", default-features = false }
wasm-bindgen = "=0.2.130"
[workspace]
$PROFILE
EOF
cat >"$WORK/core/src/lib.rs" <<'EOF'
use headroom::{calc, io::url};
use std::fmt::Write;
use wasm_bindgen::prelude::*;

/// The core's part of the page, as text.
#[wasm_bindgen]
pub fn run(query: &str) -> String {
    let d = url::decode(query);
    let mut out = String::new();
    for i in &d.ignored {
        let _ = writeln!(out, "{} {}", i.key, i.reason);
    }
    for m in headroom::catalog::models() {
        let _ = writeln!(out, "{} {} {}", m.id, m.name, m.source);
    }
    for g in headroom::catalog::gpus() {
        let _ = writeln!(out, "{} {}", g.source, g.basis);
    }
    let s = match url::scenario(&d.state) {
        Ok(s) => s,
        Err(e) => return format!("{} {}", e.field.key(), e.message),
    };
    let p = match calc::plan(&s) {
        Ok(p) => p,
        Err(e) => return e.to_string(),
    };
    for r in &p.ranks {
        for l in &r.ledger {
            let _ = writeln!(out, "{} {} {} {}", l.term.label(), l.bytes, &*l.formula, l.provenance.label());
        }
    }
    for c in &p.checks {
        let _ = writeln!(out, "{} {:?} {:?}", c.message, c.vllm_error, c.knobs);
    }
    for l in &p.log_lines {
        let _ = writeln!(out, "{l}");
    }
    let _ = writeln!(out, "{:?}", calc::solve::largest_kv_pin(&s).ok());
    let _ = writeln!(out, "{:?}", calc::solve::smallest_utilization_for(&s, 2).ok());
    let _ = writeln!(out, "{:?}", calc::solve::longest_max_model_len(&s).ok());
    out + &url::encode(&d.state)
}
EOF
cat >"$WORK/leptos/Cargo.toml" <<EOF
[package]
name = "floor-leptos"
version = "0.0.0"
edition = "2021"
publish = false
[dependencies]
leptos = { version = "=0.8.23", features = ["csr"] }
wasm-bindgen = "=0.2.130"
[workspace]
$PROFILE
EOF
cat >"$WORK/leptos/src/main.rs" <<'EOF'
use leptos::prelude::*;

fn main() {
    leptos::mount::mount_to_body(|| {
        let text = RwSignal::new(String::from("1"));
        let doubled = Memo::new(move |_| text.with(|s| s.len() * 2));
        Effect::new(move |_| {
            if let Some(el) = document().get_element_by_id("x") {
                el.set_text_content(Some(if doubled.get() > 2 { "long" } else { "short" }));
            }
        });
        view! {
            <input on:input=move |ev| text.set(event_target_value(&ev)) />
            <p id="x">{move || if doubled.get() > 3 { "a" } else { "b" }}</p>
        }
    });
}
EOF

total=0
for name in core leptos; do
  dir="$WORK/$name"
  cp "$ROOT/Cargo.lock" "$dir/Cargo.lock"
  (cd "$dir" && cargo build --release --offline --quiet --target wasm32-unknown-unknown)
  wasm=$(ls "$dir"/target/wasm32-unknown-unknown/release/floor*.wasm)
  rm -rf "$dir/out"
  wasm-bindgen --target web --out-dir "$dir/out" "$wasm"
  wasm-opt -Oz "$dir"/out/*_bg.wasm -o "$dir/out/opt.wasm"
  w=$(gzip -9c "$dir/out/opt.wasm" | wc -c)
  j=$(gzip -9c "$dir"/out/floor*.js | wc -c)
  printf '%-7s wasm %7d B gzip, js %6d B gzip, together %7d B\n' "$name" "$w" "$j" $((w + j))
  total=$((total + w + j))
  [[ $name == core ]] && core_total=$((w + j))
done
printf 'both    %7d B gzip: no Leptos page on this core is smaller\n' "$total"
# The first verdict's critical path (150 KB target) carries the verdict program, the core's
# planning path alone: the core floor above bounds it from below. It is in dist/ as one file of
# six parts (scripts/split-verdict.mjs: C, what every common link runs; B, the examples'
# builders and their rows; K, the other rows; V, the uncommon flags and the refused inputs; X,
# the rest; R, the config.json reader), with
# data-verdict-parts in the page giving their sizes.
found=0
for verdict in "$ROOT"/dist/headroom-verdict-*_bg.wasm; do
  [[ -e "$verdict" ]] || continue
  found=1
  v=$(gzip -9c "$verdict" | wc -c)
  # Served as its zopfli gzip where the browser can decompress a stream (public/early.js).
  z=''
  [[ -e "$verdict.gz" ]] && z=", $(wc -c < "$verdict.gz") B as served (zopfli)"
  printf 'verdict %7d B gzip%s in dist/ (the core floor with its solvers and ledger: %d B), against the 150 KB critical path\n' "$v" "$z" "$core_total"
  parts=$(grep -o 'data-verdict-parts="[^"]*"' "$ROOT/dist/index.html" | sed 's/.*="\(.*\)"/\1/' || true)
  if [[ -n "$parts" ]]; then
    offset=0
    for p in ${parts//,/ }; do
      n=${p%%:*}
      size=${p#*:}
      printf '        part %s: %d B, %d B gzip alone\n' "$n" "$size" "$(tail -c +$((offset + 1)) "$verdict" | head -c "$size" | gzip -9 | wc -c)"
      offset=$((offset + size))
    done
    echo '        (scripts/measure-budgets.mjs gives what each kind of link waits for)'
  fi
done
if [[ $found == 0 ]]; then
  echo 'verdict: no dist/headroom-verdict-*_bg.wasm (run trunk build --release first)'
fi
