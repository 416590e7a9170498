#!/usr/bin/env bash
# Programs built on llama.cpp's ggml Vulkan backend, as Debian (sid) ships them: whisper.cpp's
# whisper-bench (whisper.cpp-tools 1.9.5, libwhisper1) and llama.cpp's llama-completion,
# llama-simple and llama-bench (llama.cpp-tools and -examples 0.7.0), over libggml0 and
# libggml0-backend-vulkan 0.27.0, their C/C++ runtime and sid's Vulkan loader. As in
# scripts/ggml_vulkan.sh, sid's packages need a newer C library than bookworm's: they are fetched
# with apt (a temporary sources list under the prefix; nothing is installed system-wide), unpacked
# under PREFIX, and PREFIX/NAME runs each program with that runtime's own dynamic loader. Nothing of
# them enters the repository. No model comes with them (nor can one be downloaded here):
# scripts/ggml_tiny_models.py writes tiny random-weight ones.
#   P=$(bash scripts/ggml_clients.sh [PREFIX])      (default .hwtmp/ggml_clients; prints PREFIX)
#   python scripts/ggml_tiny_models.py whisper /tmp/w.bin
#   VK_DRIVER_FILES=$(python -m emu vulkan-icd) $P/whisper-bench -m /tmp/w.bin -t 1
#   GGML_VK_VISIBLE_DEVICES=0 $P/whisper-bench -m /tmp/w.bin -t 1      (lavapipe)
#   $P/whisper-bench -m /tmp/w.bin -t 1 -ng                            (ggml's CPU backend)
# whisper-cli is not wrapped: it links FFmpeg's libraries, which pull in dozens of packages.
# Exit status 0 with the prefix on stdout; 1 with a reason on stderr when apt cannot fetch them.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
P=$(mkdir -p "${1:-$ROOT/.hwtmp/ggml_clients}" && cd "${1:-$ROOT/.hwtmp/ggml_clients}" && pwd)
L=$P/root/usr/lib/x86_64-linux-gnu
TOOLS="whisper-bench llama-completion llama-simple llama-bench"
ready=1
for t in $TOOLS; do [ -x "$P/$t" ] || ready=0; done
if [ $ready = 1 ] && [ -f "$L/ggml/backends0/libggml-vulkan.so" ]; then echo "$P"; exit 0; fi
. "$ROOT/scripts/sid_unpack.sh"
sid_unpack "$P" ggml_clients.sh whisper.cpp-tools libwhisper1 llama.cpp-tools llama.cpp-examples \
  libllama0 libggml0 libggml0-backend-vulkan libvulkan1 libgomp1 libc6 libstdc++6 libgcc-s1 \
  libssl3t64 || exit 1
# ggml looks for its backends in a compiled-in folder and beside the executable, which is the
# dynamic loader here: link them there
for f in "$L"/ggml/backends0/*.so; do ln -sf "ggml/backends0/$(basename "$f")" "$L/"; done
# the loader's ICD search paths stay the system's (/usr/share/vulkan/icd.d, VK_DRIVER_FILES)
for t in $TOOLS; do sid_wrap "$P" "$t" "$P/root/usr/bin/$t" "$L:$L/ggml/backends0"; done
echo "$P"
