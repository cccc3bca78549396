#!/usr/bin/env bash
# Builds bloatlab from this checkout (release build of the Rust extension),
# installs it with its test and ray extras, and runs the lint gates (ruff, rustfmt,
# clippy with warnings as errors) and every test: Rust, the golden manifest, then Python (the docs'
# generated tables among them). Fails on the first failure.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

PYTHON="${PYTHON:-python3}"
if ! command -v cargo >/dev/null 2>&1 && [ -x "$HOME/.cargo/bin/cargo" ]; then
    export PATH="$HOME/.cargo/bin:$PATH"
fi
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_ROOT_USER_ACTION=ignore PIP_PROGRESS_BAR=off

# Programs some Python tests drive: tshark reads the pcap captures, headless Chromium
# renders the HTML report. Installed from Debian's packages when missing (as root).
missing=()
command -v tshark >/dev/null 2>&1 || missing+=(tshark)
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
if [ "${#missing[@]}" -gt 0 ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "== apt: installing ${missing[*]}"
        export DEBIAN_FRONTEND=noninteractive
        # tshark's package asks whether non-root users may capture packets: no.
        echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections 2>/dev/null || true
        apt-get update -qq >/dev/null
        apt-get install -y -qq "${missing[@]}" >/dev/null
    else
        echo "== note: ${missing[*]} not installed (and not root with apt-get): their tests are skipped"
    fi
fi
if command -v tshark >/dev/null 2>&1 && command -v chromium >/dev/null 2>&1; then
    export BLOATLAB_REQUIRE_TOOLS=1   # the tests fail, not skip, if a tool goes missing
fi

echo "== install: $PYTHON -m pip install '.[test,ray]'"
"$PYTHON" -m pip install '.[test,ray]'

echo "== lint: ruff check python tests scripts"
"$PYTHON" -m ruff check python tests scripts

echo "== lint: cargo fmt --check (rustfmt.toml)"
cargo fmt --check

echo "== lint: cargo clippy --workspace --all-targets --release -- -D warnings"
cargo clippy --workspace --all-targets --release -q -- -D warnings

echo "== rust: cargo test --release -p bloatlab-sim -p bloatlab-emu"
cargo test --release -p bloatlab-sim -p bloatlab-emu

echo "== golden: python3 scripts/golden.py (outputs byte-identical to tests/golden/manifest.json)"
"$PYTHON" scripts/golden.py

echo "== python: pytest tests/python"
# The sources live in python/, not on sys.path: the tests import the installed package.
# On every core (pytest-xdist); conftest.py keeps each file on one worker and the emulations
# one at a time.
"$PYTHON" -m pytest -q -n auto --dist loadgroup tests/python
