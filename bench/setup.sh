#!/usr/bin/env bash
# Creates bench/.venv with the Python side of the benchmarks (scikit-learn, numpy, threadpoolctl,
# Pillow for the tabletop photos).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
if [ ! -x "$here/.venv/bin/python" ]; then
    python3 -m venv "$here/.venv"
fi
"$here/.venv/bin/pip" install --quiet --upgrade pip
"$here/.venv/bin/pip" install --quiet scikit-learn numpy threadpoolctl pillow
"$here/.venv/bin/python" -c "import sklearn, numpy, threadpoolctl; print('sklearn', sklearn.__version__, 'numpy', numpy.__version__, 'threadpoolctl', threadpoolctl.__version__)"
