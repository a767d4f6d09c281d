#!/usr/bin/env bash
# Regenerates tests/golden/oracle_v32.json: DeepSeek-V3.2's KV layout (sparse MLA latent plus
# the indexer's K cache) as vLLM 0.33.0's own code plans it. CI never runs this; the output is
# committed. Needs the oracle's venv (/work/shared/oracle/setup.sh, ~/.cache/vllm-oracle).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
py="${ORACLE_VENV:-$HOME/.cache/vllm-oracle}/bin/python"
work="$(mktemp -d "${TMPDIR:-/tmp}/headroom-v32.XXXXXX")"
trap 'rm -rf "$work"' EXIT
"$py" "$here/v32_golden.py" > "$work/golden_full.json" 2> "$work/stderr.log"
python3 "$here/compact.py" "$work"
python3 "$here/lines.py" "$work" "$here/../../oracle_v32.json"
