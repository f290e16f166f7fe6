# Shared helpers for Parley's scripts. Sourced, not run.
# Everything cached lives under $PARLEY_CACHE (default ~/.cache/parley).

PARLEY_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PARLEY_CACHE="${PARLEY_CACHE:-$HOME/.cache/parley}"
PARLEY_PREFIX="$PARLEY_CACHE/prefix"
PARLEY_VENV="$PARLEY_CACHE/venv"
PARLEY_MODELS="$PARLEY_CACHE/models"
export PARLEY_ROOT PARLEY_CACHE PARLEY_PREFIX PARLEY_VENV PARLEY_MODELS
export PKG_CONFIG_PATH="$PARLEY_PREFIX/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
export PARLEY_LLAMA_SERVER="${PARLEY_LLAMA_SERVER:-$PARLEY_PREFIX/bin/llama-server}"
export PARLEY_ONNXRUNTIME_LIBRARY="${PARLEY_ONNXRUNTIME_LIBRARY:-$PARLEY_PREFIX/lib/libonnxruntime.so}"
export PARLEY_MODEL_DIR="${PARLEY_MODEL_DIR:-$PARLEY_MODELS}"
export PARLEY_PYTHON="${PARLEY_PYTHON:-$PARLEY_VENV/bin/python}"

say() { printf '\033[1m==>\033[0m %s\n' "$*" >&2; }

# Runs a command as root: directly when we are root, through sudo otherwise.
as_root() {
    if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

# The release build: what `scripts/run` serves, what the whole-system tests run against, and
# what the benchmarks measure, in one configuration so each script reuses the others' build.
# `-enable-testing` lets the test bundle's `@testable import`s link against these very modules
# (it keeps internal symbols visible; the optimiser still runs in full).
PARLEY_RELEASE_FLAGS=(-c release -Xswiftc -enable-testing)
release_build() { swift build "${PARLEY_RELEASE_FLAGS[@]}" "$@"; }
release_bin_path() { swift build "${PARLEY_RELEASE_FLAGS[@]}" --show-bin-path; }
