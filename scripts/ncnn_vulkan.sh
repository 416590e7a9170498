#!/usr/bin/env bash
# ncnn's Python wheel (PyPI `ncnn`, built with Vulkan compute: it loads the system's Vulkan loader
# at run time), installed under PREFIX/site for tests/vulkan/test_ncnn.py and by hand:
#   P=$(bash scripts/ncnn_vulkan.sh)          (default PREFIX .hwtmp/ncnn; prints PREFIX)
#   VK_DRIVER_FILES=$(python -m emu vulkan-icd) PYTHONPATH=$P/site python tests/vulkan/clients/ncnn_net.py /tmp fp16
# Nothing of it enters the repository or the project's environment. Exit status 0 with the prefix
# on stdout; 1 with a reason on stderr when pip cannot fetch it.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
P=$(mkdir -p "${1:-$ROOT/.hwtmp/ncnn}" && cd "${1:-$ROOT/.hwtmp/ncnn}" && pwd)
if [ -d "$P/site/ncnn" ]; then echo "$P"; exit 0; fi
"${PYTHON:-python3}" -m pip install -q --no-deps --target "$P/site" ncnn >&2 \
  || { echo "ncnn_vulkan.sh: pip could not install ncnn (no network to PyPI?)" >&2; exit 1; }
echo "$P"
