#!/usr/bin/env bash
# The whole test suite: the Rust crate's tests (`cargo test`), then the Python package's in a
# virtual environment of its own (.venv-test/, created on first use): the test requirements
# from PyPI, the package built and installed from ./python (release build), and pytest.
# Needs a Rust toolchain and Python 3 (3.10 or newer); PYTHON=... picks the interpreter.
set -euo pipefail
cd "$(dirname "$0")"
echo "== cargo test"
cargo test
echo "== Python: the virtual environment .venv-test"
if [ ! -x .venv-test/bin/python ]; then
    "${PYTHON:-python3}" -m venv .venv-test
fi
py=.venv-test/bin/python
"$py" -m pip install -q --disable-pip-version-check -r python/requirements-test.txt
echo "== Python: pip install ./python"
"$py" -m pip install -q --disable-pip-version-check --force-reinstall --no-deps ./python
echo "== pytest"
# The command line that `cargo test` built, for the tests that compare the two.
export MADBAYES_CLI="$PWD/${CARGO_TARGET_DIR:-target}/debug/madbayes"
"$py" -m pytest python/tests -q -p no:cacheprovider
