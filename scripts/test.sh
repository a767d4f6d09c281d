#!/usr/bin/env bash
# Headroom's whole test suite, the one command for humans and CI (.ci/run calls it):
#   1. setup (tools from the registries, chromium included);
#   2. style: `cargo fmt --check`, then `cargo clippy --all-targets -D warnings` native with and
#      without the `web` feature, and for the wasm page (the lints are Cargo.toml's [lints]);
#   3. native Rust tests: `cargo test --all-targets` (everyone's unit, integration and golden tests);
#   4. `cargo test --no-default-features --lib --tests`: calc and catalog build and pass without
#      the web feature; then the doc examples; then the library's tests as the first verdict's
#      builds have it (`--features verdict,catalog-compiled,config-reader`: the page's program,
#      the catalog as values with the config.json reader; `verdict,catalog-compiled`: without the
#      reader; `--features verdict`: build.rs's compact catalog without sources);
#   5. Trunk's release build into dist/;
#   6. the browser tests (node's test runner + playwright-core + Debian chromium) against dist/
#      served on 127.0.0.1 by a small static server this script starts and stops.
# Exits non-zero on the first failure; each runner prints its own summary lines.
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD
bash scripts/setup.sh --browser

# cargo install puts tools in $CARGO_HOME/bin (~/.cargo/bin unless CARGO_HOME is set).
export PATH="$ROOT/node_modules/.bin:${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"
export TRUNK_SKIP_VERSION_CHECK=true TRUNK_OFFLINE=true
export CARGO_TERM_COLOR=never
# Chromium leaves scoped profile directories in TMPDIR; keep them inside the project.
mkdir -p "$ROOT/.tmp"
export TMPDIR="$ROOT/.tmp"

echo "== cargo fmt --check"
cargo fmt --all -- --check

echo "== cargo clippy --all-targets (web, native)"
cargo clippy --all-targets -- -D warnings
echo "== cargo clippy --no-default-features --all-targets"
cargo clippy --no-default-features --all-targets -- -D warnings
echo "== cargo clippy --target wasm32-unknown-unknown (the page)"
cargo clippy --target wasm32-unknown-unknown --lib --bin headroom-web -- -D warnings
echo "== cargo clippy --target wasm32-unknown-unknown --features verdict (the first verdict)"
cargo clippy --target wasm32-unknown-unknown --no-default-features --features verdict --bin headroom-verdict -- -D warnings
echo "== cargo clippy --target wasm32-unknown-unknown --features verdict,catalog-compiled (the first verdict without the config.json reader)"
cargo clippy --target wasm32-unknown-unknown --no-default-features --features verdict,catalog-compiled --bin headroom-verdict -- -D warnings
echo "== cargo clippy --target wasm32-unknown-unknown --features verdict,catalog-compiled,config-reader (the page's first verdict program)"
cargo clippy --target wasm32-unknown-unknown --no-default-features --features verdict,catalog-compiled,config-reader --bin headroom-verdict -- -D warnings

echo "== cargo test --all-targets"
cargo test --all-targets

echo "== cargo test --no-default-features --lib --tests"
cargo test --no-default-features --lib --tests

echo "== cargo test --no-default-features --doc"
cargo test --no-default-features --doc

echo "== cargo test --no-default-features --features verdict --lib (the first verdict's catalog copy)"
cargo test --no-default-features --features verdict --lib
echo "== cargo test --no-default-features --features verdict,catalog-compiled --lib (the catalog as values)"
cargo test --no-default-features --features verdict,catalog-compiled --lib
echo "== cargo test --no-default-features --features verdict,catalog-compiled,config-reader --lib (and the config.json reader: the page's program)"
cargo test --no-default-features --features verdict,catalog-compiled,config-reader --lib

echo "== trunk build --release"
trunk build --release --offline

echo "== browser tests"
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
python3 -m http.server --bind 127.0.0.1 "$PORT" --directory "$ROOT/dist" >"$ROOT/.tmp/http.log" 2>&1 &
SERVER_PID=$!
trap 'kill "$SERVER_PID" 2>/dev/null || true' EXIT
for _ in $(seq 1 50); do
  if python3 -c "import urllib.request,sys; urllib.request.urlopen('http://127.0.0.1:$PORT/', timeout=1)" 2>/dev/null; then
    break
  fi
  sleep 0.2
done

BASE_URL="http://127.0.0.1:$PORT" node --test --test-concurrency=1 tests/browser/
