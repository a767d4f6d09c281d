#!/usr/bin/env bash
# Installs what Headroom's web build and browser tests need, from the registries only, and skips
# every step whose tool is already present at the right version (a re-run takes about a second).
#
#   bash scripts/setup.sh            # wasm32 target, rust-src, trunk, wasm-bindgen-cli, npm tools,
#                                    # Debian's binaryen 108 for wasm-split (unpacked, no root), crates
#   bash scripts/setup.sh --browser  # the same, plus Debian's chromium for the browser tests
#
# Versions: trunk 0.21.14 is the newest release that builds on rustc 1.95; wasm-bindgen-cli must
# equal the `wasm-bindgen` that Cargo.lock resolves (Trunk downloads a mismatched one, which
# fails here); wasm-opt is npm's binaryen 132 (Debian's 108 cannot optimise wasm-bindgen
# 0.2.130 output; its wasm-split, which npm's does not ship, splits it after npm's wasm-opt).
# See /work/shared/reference/toolchain.md for the measurements behind each choice.
set -euo pipefail

cd "$(dirname "$0")/.."
# cargo install puts tools in $CARGO_HOME/bin (~/.cargo/bin unless CARGO_HOME is set).
export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"

TRUNK_VERSION=0.21.14
want_browser=0
for arg in "$@"; do
  case "$arg" in
    --browser) want_browser=1 ;;
    *) echo "setup.sh: unknown argument $arg" >&2; exit 2 ;;
  esac
done

step() { printf '[setup] %s\n' "$*"; }

# The wasm-bindgen version Cargo.lock resolves; Cargo.toml pins it with `=` as a fallback.
wasm_bindgen_version() {
  local v=""
  if [[ -f Cargo.lock ]]; then
    v=$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/version = |"/, ""); print; exit }' Cargo.lock)
  fi
  if [[ -z "$v" ]]; then
    v=$(sed -n 's/^wasm-bindgen = {[^}]*version = "=\([0-9.]*\)".*/\1/p' Cargo.toml | head -n1)
  fi
  [[ -n "$v" ]] || { echo "setup.sh: cannot find the wasm-bindgen version in Cargo.lock or Cargo.toml" >&2; exit 1; }
  echo "$v"
}

# 1. The wasm target.
if rustup target list --installed 2>/dev/null | grep -qx wasm32-unknown-unknown; then
  step "wasm32-unknown-unknown: present"
else
  step "installing the wasm32-unknown-unknown target"
  rustup target add wasm32-unknown-unknown
fi

# 1b. std's source: the verdict programs compile the standard library again for their size
#     (scripts/inline-loader.mjs, -Zbuild-std).
if [[ -f "$(rustc --print sysroot)/lib/rustlib/src/rust/library/Cargo.lock" ]]; then
  step "rust-src: present"
else
  step "installing the rust-src component"
  rustup component add rust-src
fi

# 2. Trunk (about 15 minutes to compile on a fresh machine).
if [[ "$(trunk --version 2>/dev/null || true)" == "trunk $TRUNK_VERSION" ]]; then
  step "trunk $TRUNK_VERSION: present"
else
  step "installing trunk $TRUNK_VERSION (cargo install, about 15 min)"
  cargo install --locked trunk --version "$TRUNK_VERSION"
fi

# 3. wasm-bindgen-cli at exactly the library's version. No --locked: its lock file names a
#    webpki-roots release the registry does not have.
WBG=$(wasm_bindgen_version)
if [[ "$(wasm-bindgen --version 2>/dev/null || true)" == "wasm-bindgen $WBG" ]]; then
  step "wasm-bindgen-cli $WBG: present"
else
  step "installing wasm-bindgen-cli $WBG (cargo install, about 4 min)"
  cargo install wasm-bindgen-cli --version "$WBG"
fi

# 4. npm tools: binaryen (wasm-opt), zopfli (the verdict programs' gzip), terser (the page's
#    inline scripts) and playwright-core,
#    exactly as package-lock.json says.
npm_ok=1
[[ "$(node_modules/.bin/wasm-opt --version 2>/dev/null || true)" == *"(version_132)"* ]] || npm_ok=0
[[ -f node_modules/playwright-core/package.json ]] || npm_ok=0
[[ -f node_modules/@gfx/zopfli/package.json ]] || npm_ok=0
[[ -f node_modules/terser/package.json ]] || npm_ok=0
if [[ -f node_modules/.package-lock.json && package-lock.json -nt node_modules/.package-lock.json ]]; then
  npm_ok=0
fi
if [[ $npm_ok == 1 ]]; then
  step "node_modules (binaryen 132, zopfli, terser, playwright-core): present"
else
  step "installing node_modules with npm ci"
  npm ci --no-audit --no-fund
fi

# 4b. wasm-split, which npm's binaryen does not ship: Debian's binaryen 108 package, unpacked
#     into tools/binaryen-108 (git-ignored; its binaries find their library beside them), not
#     installed, so that its wasm-opt 108 never shadows npm's 132 and no root is needed.
#     scripts/split-verdict.mjs splits the verdict programs with it (and works around its one
#     bug there). From this machine's apt sources when they list it (Debian 12), else from
#     deb.debian.org's pool, checked against the archive's SHA-256.
SPLIT_BIN=tools/binaryen-108/usr/bin/wasm-split
BINARYEN_DEB=binaryen_108-1_amd64.deb
BINARYEN_SHA256=3e78e82c38b9faa7e5645f19ab3d386f8da7c71f8dc19edfaa0ff1b080bd81a8
if [[ "$("$SPLIT_BIN" --version 2>/dev/null || true)" == *"version 108"* ]]; then
  step "wasm-split (Debian binaryen 108): present"
else
  step "unpacking Debian's binaryen 108 for wasm-split"
  deb_dir=$(mktemp -d)
  trap 'rm -rf "$deb_dir"' EXIT
  if ! (cd "$deb_dir" && apt-get download binaryen=108-1 >/dev/null 2>&1); then
    [[ "$(dpkg --print-architecture 2>/dev/null || uname -m)" == amd64 || "$(uname -m)" == x86_64 ]] || {
      echo "setup.sh: no binaryen 108 in this machine's apt sources, and only the amd64 package's checksum is pinned here" >&2
      exit 1
    }
    curl -fsSL --retry 3 -o "$deb_dir/$BINARYEN_DEB" "http://deb.debian.org/debian/pool/main/b/binaryen/$BINARYEN_DEB"
    echo "$BINARYEN_SHA256  $deb_dir/$BINARYEN_DEB" | sha256sum -c --quiet - || { echo "setup.sh: $BINARYEN_DEB does not match its SHA-256" >&2; exit 1; }
  fi
  rm -rf tools/binaryen-108
  mkdir -p tools/binaryen-108
  dpkg -x "$deb_dir"/binaryen_108-1_*.deb tools/binaryen-108
  rm -rf "$deb_dir"
  trap - EXIT
  [[ "$("$SPLIT_BIN" --version 2>/dev/null || true)" == *"version 108"* ]] || { echo "setup.sh: $SPLIT_BIN does not run" >&2; exit 1; }
fi

# 5. Debian's chromium, only for the browser tests.
if [[ $want_browser == 1 ]]; then
  if [[ -x /usr/bin/chromium ]]; then
    step "chromium: present"
  else
    step "installing Debian chromium (apt-get, about 1.5 min)"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update
    apt-get install -y chromium fonts-dejavu-core
  fi
fi

# 6. Crates, so that Trunk's offline build (which passes --offline to cargo) finds them.
step "cargo fetch"
cargo fetch --quiet
step "done"
