#!/usr/bin/env bash
# llama.cpp's WebGPU kernels (ggml/src/ggml-webgpu/wgsl-shaders/) for scripts/llama_webgpu.py, from
# the llama.cpp that PyPI's llama-cpp-python 0.3.19 source distribution bundles (vendor/llama.cpp):
# a version anyone can fetch again, checked against its sha256. pip downloads the sdist (no build,
# no dependencies); only the shader folder is extracted. Nothing of it enters the repository.
#   bash scripts/fetch_llama_wgsl.sh [DEST]     (default .hwtmp/llama-wgsl-0.3.19; prints DEST)
#   python scripts/llama_webgpu.py "$(bash scripts/fetch_llama_wgsl.sh)"
# Exit status 0 with DEST on stdout when the folder is there; 0 with the reason on stderr and
# nothing on stdout when it cannot be fetched (no network, no pip, another file than expected).
set -uo pipefail
VERSION=0.3.19
SHA256=6816e4a0a74ae9a356e7a0546e13147543f01f695c86a28d940e4b86519acf13
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DEST=${1:-$ROOT/.hwtmp/llama-wgsl-$VERSION}
PY=${PYTHON:-$(command -v python3 || command -v python)}
SUB=llama_cpp_python-$VERSION/vendor/llama.cpp/ggml/src/ggml-webgpu/wgsl-shaders

skip() { echo "fetch_llama_wgsl.sh: $1; skipping (llama_webgpu.py then says it has no folder)" >&2; exit 0; }

if [ -f "$DEST/flash_attn.wgsl" ] && [ -f "$DEST/.sdist-sha256" ] && [ "$(cat "$DEST/.sdist-sha256")" = "$SHA256" ]; then
  echo "$DEST"; exit 0
fi
[ -n "$PY" ] || skip "no python to run pip with"
TMP=$(mktemp -d) || skip "cannot make a temporary folder"
trap 'rm -rf "$TMP"' EXIT
"$PY" -m pip download --quiet --no-deps --no-binary :all: "llama-cpp-python==$VERSION" -d "$TMP" >"$TMP/pip.log" 2>&1 \
  || skip "pip could not download llama-cpp-python==$VERSION's sdist ($(tail -n 1 "$TMP/pip.log"))"
TAR="$TMP/llama_cpp_python-$VERSION.tar.gz"
[ -f "$TAR" ] || skip "pip saved no llama_cpp_python-$VERSION.tar.gz"
GOT=$(sha256sum "$TAR" | cut -d' ' -f1)
[ "$GOT" = "$SHA256" ] || skip "the sdist's sha256 is $GOT, not $SHA256 (another file under that version)"
tar -xzf "$TAR" -C "$TMP" "$SUB" 2>"$TMP/tar.log" || skip "the sdist has no $SUB ($(head -n 1 "$TMP/tar.log"))"
rm -rf "$DEST" && mkdir -p "$(dirname "$DEST")" && mv "$TMP/$SUB" "$DEST" || skip "cannot write $DEST"
echo "$SHA256" > "$DEST/.sdist-sha256"
echo "$DEST"
