#!/usr/bin/env bash
# Instructions per `calc::plan` under callgrind, for the scenarios `cargo bench --bench plan`
# times (not a test: it prints numbers). Unlike the bench's microseconds, which move by 25-30 %
# between days on the same kind of machine, an instruction count is the same on any run, so a
# change to the planner shows as a change here. Each scenario is planned 1 and 101 times; the
# difference over 100 is one plan, without start-up and the catalog's parsing.
#
#   bash scripts/plan-instructions.sh           # the work tree
#   bash scripts/plan-instructions.sh COMMIT    # a commit, for comparison (a worktree in .tmp/)
#
# Needs valgrind (Debian: apt-get install valgrind); runs offline once `cargo fetch` has run.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
command -v valgrind >/dev/null || { echo "plan-instructions.sh: needs valgrind (apt-get install valgrind)" >&2; exit 2; }

SRC=$ROOT
if [[ $# -gt 0 ]]; then
  SRC="$ROOT/.tmp/plan-instructions-src"
  rm -rf "$SRC"
  git worktree prune
  git worktree add --detach --force "$SRC" "$1" >/dev/null
fi
WORK="$ROOT/.tmp/plan-instructions"
mkdir -p "$WORK/src"
cat >"$WORK/Cargo.toml" <<EOF
[package]
name = "plan-instructions"
version = "0.0.0"
edition = "2021"
publish = false
[dependencies]
headroom = { path = "$SRC", default-features = false }
[profile.release]
debug = false
[workspace]
EOF
cat >"$WORK/src/main.rs" <<'EOF'
use headroom::calc::scenario::MaxLen;
use headroom::calc::{plan, Scenario};
use headroom::catalog;
use std::hint::black_box;

fn scenario(model: &str, gpu: &str, tp: u32, pp: u32) -> Scenario {
    let m = catalog::model(model).expect("catalog model").model.clone();
    let g = catalog::gpu(gpu).expect("catalog GPU").gpu.clone();
    let mut s = Scenario::new(m, g);
    s.parallel.tp = tp;
    s.parallel.pp = pp;
    s.gpus = tp * pp;
    s
}

fn main() {
    let mut args = std::env::args().skip(1);
    let case: usize = args.next().and_then(|a| a.parse().ok()).expect("case");
    let n: u32 = args.next().and_then(|a| a.parse().ok()).expect("count");
    let mut one = scenario("llama-3.1-8b-instruct", "h100-sxm-80gb", 1, 1);
    one.engine.max_model_len = MaxLen::Value(131_072);
    let s = match case {
        0 => one,
        1 => scenario("deepseek-r1", "h200-141gb", 8, 1),
        2 => scenario("llama-3.1-405b-instruct-fp8", "h200-141gb", 8, 1),
        _ => scenario("llama-3.1-70b-instruct", "h100-sxm-80gb", 4, 4),
    };
    for _ in 0..n {
        assert!(black_box(plan(black_box(&s))).is_ok());
    }
}
EOF
cp "$SRC/Cargo.lock" "$WORK/Cargo.lock"
(cd "$WORK" && cargo build --release --offline --quiet)
BIN="$WORK/target/release/plan-instructions"

count() {
  valgrind --tool=callgrind --callgrind-out-file=/dev/null "$BIN" "$1" "$2" 2>&1 |
    sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}
echo "calc::plan, instructions per plan (callgrind), $(git -C "$SRC" rev-parse --short HEAD)$([[ $SRC == "$ROOT" ]] && ! git diff --quiet HEAD && echo ' + work tree')"
names=("1 GPU: llama-3.1-8b-instruct on h100-sxm-80gb" "TP=8: deepseek-r1 on h200-141gb"
  "TP=8: llama-3.1-405b-instruct-fp8 on h200-141gb" "TP=4 x PP=4: llama-3.1-70b-instruct on h100-sxm-80gb")
for i in 0 1 2 3; do
  a=$(count "$i" 1)
  b=$(count "$i" 101)
  printf '%-56s %9d\n' "${names[$i]}" $(((b - a) / 100))
done
if [[ $SRC != "$ROOT" ]]; then
  git worktree remove --force "$SRC"
fi
