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

# Installs those of the named Debian packages that are not installed yet (apt-get, as root),
# saying which; asks no mirror when all are there.
install_missing_debian_packages() {
    local missing=() package
    for package in "$@"; do
        dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
    done
    if [ ${#missing[@]} -eq 0 ]; then
        if [ $# -le 4 ]; then say "Debian packages: all present ($*)"; else say "Debian packages: all $# present"; fi
        return 0
    fi
    say "Debian packages: installing ${missing[*]}"
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
}

# The Debian package sources this machine's apt uses, one "URI SUITE COMPONENT" a line (so a
# local mirror is used wherever the machine uses one).
debian_sources() {
    apt-get indextargets --format '$(REPO_URI) $(RELEASE) $(COMPONENT) $(ORIGIN) $(IDENTIFIER)' \
        | awk '$4 == "Debian" && $5 == "Packages" { print $1, $2, $3 }' | sort -u
}

# The release build: what `scripts/run` serves, what the whole-system tests run against, and
# what the benchmarks measure, in one configuration so each script reuses the others' build.
# `-enable-testing` lets the test bundle's `@testable import`s link against these very modules
# (it keeps internal symbols visible; the optimiser still runs in full).
PARLEY_RELEASE_FLAGS=(-c release -Xswiftc -enable-testing)
release_build() { swift build "${PARLEY_RELEASE_FLAGS[@]}" "$@"; }
release_bin_path() { swift build "${PARLEY_RELEASE_FLAGS[@]}" --show-bin-path; }
