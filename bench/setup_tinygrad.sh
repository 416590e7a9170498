#!/usr/bin/env bash
# Make bench/.venv-tinygrad: tinygrad on Python >= 3.12 for `python -m bench`.
# tinygrad's PYTHON device supports half (and so the emulated f16 tensor cores) only on
# Python >= 3.12; on 3.11 it emulates half as float and picks no tensor core.
set -euo pipefail
cd "$(dirname "$0")"
PY="${PYTHON312:-}"
for c in python3.13 python3.12 /root/.pyenv/versions/3.13.0/bin/python /root/.pyenv/versions/3.12.1/bin/python; do
  [ -n "$PY" ] && break
  if command -v "$c" >/dev/null 2>&1 && "$c" -c 'import sys, venv; assert sys.version_info >= (3, 12)' >/dev/null 2>&1; then
    PY="$(command -v "$c")"
  fi
done
[ -n "$PY" ] || { echo "no python3.12 or newer found; set PYTHON312=/path/to/python" >&2; exit 1; }
"$PY" -m venv .venv-tinygrad
.venv-tinygrad/bin/pip install -q tinygrad numpy
echo "bench/.venv-tinygrad: $(.venv-tinygrad/bin/python --version), tinygrad $(.venv-tinygrad/bin/python -c 'import tinygrad; print(getattr(tinygrad, "__version__", "?"))' 2>/dev/null)"
