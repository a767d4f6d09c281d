#!/usr/bin/env bash
# Regenerates tests/golden/oracle_kv.jsonl and tests/golden/oracle_pp.jsonl from
# vLLM 0.33.0's own KV-cache planning code (the oracle in /work/shared/oracle).
# CI never runs this; the outputs are committed. See README.md in this folder.
#
#   tests/golden/gen/run.sh                 # ~1-2 minutes once the oracle venv exists
#   ORACLE_DIR=/path/to/oracle KEEP_WORK=1 tests/golden/gen/run.sh
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
golden="$(dirname "$here")"
oracle="${ORACLE_DIR:-/work/shared/oracle}"
work="$(mktemp -d "${TMPDIR:-/tmp}/headroom-golden.XXXXXX")"
if [ -z "${KEEP_WORK:-}" ]; then trap 'rm -rf "$work"' EXIT; else echo "work dir: $work"; fi

python3 "$here/make_cases.py" gen --out "$work"
start=$(date +%s)
# one process for all cases: vLLM's *_once logs are de-duplicated per process,
# so the case order (fixed by make_cases.py) is part of the recipe
"$oracle/run" oracle.py --jsonl < "$work/oracle_in.jsonl" > "$work/oracle_out.jsonl" 2> "$work/oracle.stderr"
echo "oracle: $(( $(date +%s) - start )) s"
python3 "$here/make_cases.py" merge \
  --cases "$work/cases.jsonl" --outputs "$work/oracle_out.jsonl" \
  --kv "$golden/oracle_kv.jsonl" --pp "$golden/oracle_pp.jsonl" \
  --failures "$work/failures.jsonl"
ls -l "$golden/oracle_kv.jsonl" "$golden/oracle_pp.jsonl"
