#!/usr/bin/env bash
# Regenerates tests/golden/oracle_v4.json: DeepSeek-V4-Flash's KV layout (sliding-window,
# compressed, indexer and compressor-state caches, packed groups) as vLLM 0.33.0's own code
# plans it, for the cases in golden_cases.json. CI never runs this; the output is committed.
# Needs the oracle's venv (/work/shared/oracle/setup.sh, ~/.cache/vllm-oracle).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
py="${ORACLE_VENV:-$HOME/.cache/vllm-oracle}/bin/python"
work="$(mktemp -d "${TMPDIR:-/tmp}/headroom-v4.XXXXXX")"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/model" && cp "$here/config.json" "$work/model/config.json"
python3 "$here/make_golden.py" "$py" "$work/model"
