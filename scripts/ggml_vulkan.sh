#!/usr/bin/env bash
# llama.cpp's ggml Vulkan backend and its test-backend-ops, as Debian (sid) ships them:
# libggml0 and libggml0-backend-vulkan 0.27.0, llama.cpp-tests 0.7.0 (test-backend-ops), their C/C++
# runtime and sid's Vulkan loader. Sid's packages need a newer C library than bookworm's, so they
# are fetched with apt (a temporary sources list under the prefix; nothing is installed
# system-wide) and unpacked under PREFIX, and PREFIX/test-backend-ops runs the program with that
# runtime's own dynamic loader. Nothing of them enters the repository.
#   bash scripts/ggml_vulkan.sh [PREFIX]      (default .hwtmp/ggml; prints PREFIX)
#   P=$(bash scripts/ggml_vulkan.sh)
#   GGML_VK_VISIBLE_DEVICES=0 $P/test-backend-ops support -b Vulkan0   (lavapipe: ggml skips CPU
#                                                 devices unless GGML_VK_VISIBLE_DEVICES names them)
#   VK_DRIVER_FILES=$(emu vulkan-icd) $P/test-backend-ops test -b Vulkan0 -o ADD
#   $P/root/usr/lib/x86_64-linux-gnu/ggml/backends0/libggml-vulkan.so holds the SPIR-V modules
# Exit status 0 with the prefix on stdout; 1 with a reason on stderr when apt cannot fetch them.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
P=$(mkdir -p "${1:-$ROOT/.hwtmp/ggml}" && cd "${1:-$ROOT/.hwtmp/ggml}" && pwd)
L=$P/root/usr/lib/x86_64-linux-gnu
T=$P/root/usr/libexec/x86_64-linux-gnu/llama.cpp-tests/test-backend-ops
if [ -x "$P/test-backend-ops" ] && [ -f "$L/ggml/backends0/libggml-vulkan.so" ]; then
  echo "$P"; exit 0
fi
. "$ROOT/scripts/sid_unpack.sh"
sid_unpack "$P" ggml_vulkan.sh llama.cpp-tests libllama0 libggml0 \
  libggml0-backend-vulkan libvulkan1 libgomp1 libc6 libstdc++6 libgcc-s1 libssl3t64 || exit 1
# ggml looks for its backends in a compiled-in folder and beside the executable, which is the
# dynamic loader here: link them there
for f in "$L"/ggml/backends0/*.so; do ln -sf "ggml/backends0/$(basename "$f")" "$L/"; done
# the loader's ICD search paths stay the system's (/usr/share/vulkan/icd.d, VK_DRIVER_FILES)
sid_wrap "$P" test-backend-ops "$T" "$L:$L/ggml/backends0"
echo "$P"
