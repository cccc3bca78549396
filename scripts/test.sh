#!/usr/bin/env bash
# Builds bloatlab from this checkout (release build of the Rust extension),
# installs it with its test extras, and runs every test: Rust, then Python.
# Fails on the first failure.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

PYTHON="${PYTHON:-python3}"
if ! command -v cargo >/dev/null 2>&1 && [ -x "$HOME/.cargo/bin/cargo" ]; then
    export PATH="$HOME/.cargo/bin:$PATH"
fi
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_ROOT_USER_ACTION=ignore PIP_PROGRESS_BAR=off

echo "== install: $PYTHON -m pip install '.[test]'"
"$PYTHON" -m pip install '.[test]'

echo "== rust: cargo test --release -p bloatlab-sim"
cargo test --release -p bloatlab-sim

echo "== python: pytest tests/python"
# The sources live in python/, not on sys.path: the tests import the installed package.
"$PYTHON" -m pytest -q tests/python
