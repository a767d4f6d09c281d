#!/usr/bin/env bash
# Serves the release build of the web app with Trunk on http://127.0.0.1:8080 (or PORT=...),
# rebuilding on change. Trunk runs offline so it never tries to download a tool.
#
#   bash scripts/serve.sh            PORT=9000 bash scripts/serve.sh
set -euo pipefail

cd "$(dirname "$0")/.."
bash scripts/setup.sh
# cargo install puts tools in $CARGO_HOME/bin (~/.cargo/bin unless CARGO_HOME is set).
export PATH="$PWD/node_modules/.bin:${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"
export TRUNK_SKIP_VERSION_CHECK=true TRUNK_OFFLINE=true

exec trunk serve --release --offline \
  --address 127.0.0.1 --port "${PORT:-8080}" --disable-address-lookup --no-autoreload
