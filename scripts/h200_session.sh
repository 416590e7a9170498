#!/usr/bin/env bash
# The H200 session (see scripts/h200_session.py): diffs, record, fit; reports in $OUT.
#
# On the device machine (tool `run`, carry [".gl", ".whl"]), from the repository root:
#   for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig; \
#   python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl && \
#   export PYTHONPATH=/tmp/site:$PWD VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json \
#     __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json; \
#   bash scripts/h200_session.sh
# .gl holds Debian's Vulkan loader and the glvnd libraries (libvulkan1 libegl1 libglvnd0 libopengl0
# libgl1 libglx0 libgles2: the NVIDIA Vulkan driver, libGLX_nvidia, needs glvnd), .whl the wheels
# the machine lacks: wgpudawn, wgpu, rendercanvas, cffi, pycparser (numpy, numba, llvmlite and
# ml_dtypes are there).
set -uo pipefail
OUT=${OUT:-h200-out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
export EMU_DAWN_TOGGLES=${EMU_DAWN_TOGGLES:-vulkan_enable_f16_on_nvidia}
probe() { VK_DRIVER_FILES="$1" timeout 60 python3 -c 'import sys; from emu.hw.runner import available_adapter as a; i, w = a("dawn"); print("  probe:", w); sys.exit(0 if i else 1)'; }
{
  echo "== $(date -u) on $(hostname)"
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -2
  python3 --version
  python3 -c 'import numpy, numba, ml_dtypes; print("numpy", numpy.__version__, "numba", numba.__version__, "ml_dtypes", ml_dtypes.__version__)'
  python3 -c 'import wgpudawn, cffi; print("wgpudawn", wgpudawn.__version__, "cffi", cffi.__version__)'
  echo "-- Vulkan: loader and driver"
  ldconfig -p | grep -E "libvulkan|libGLdispatch|libGLX" | head
  echo "VK_DRIVER_FILES=${VK_DRIVER_FILES:-}"; cat "${VK_DRIVER_FILES:-/dev/null}" 2>&1 | head -12
  glx=$(ldconfig -p | awk '/libGLX_nvidia.so.0/ {print $NF; exit}')
  [ -z "$glx" ] && glx=$(find /usr/local/nvidia /usr/lib /usr/lib64 -name 'libGLX_nvidia.so.0' 2>/dev/null | head -1)
  echo "libGLX_nvidia: ${glx:-not found}"; [ -n "$glx" ] && ldd "$glx" 2>&1 | grep -E "not found|GLdispatch|nvidia" | head
  ls /dev/nvidia* 2>&1 | head
  # the first ICD description with which Dawn finds the GPU
  cands=("${VK_DRIVER_FILES:-}" /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json /usr/share/vulkan/icd.d/nvidia_icd.json /etc/vulkan/icd.d/nvidia_icd.json)
  if [ -n "$glx" ]; then
    printf '{"file_format_version": "1.0.1", "ICD": {"library_path": "%s", "api_version": "1.4.0"}}\n' "$glx" > /tmp/nvidia_icd_abs.json
    cands+=(/tmp/nvidia_icd_abs.json)
  fi
  found=""
  for icd in "${cands[@]}"; do
    [ -n "$icd" ] && [ -f "$icd" ] || continue
    echo "-- trying $icd"
    if probe "$icd"; then found=$icd; break; fi
  done
  if [ -n "$found" ]; then export VK_DRIVER_FILES=$found; echo "== using VK_DRIVER_FILES=$found"; else echo "== no ICD worked"; fi
  timeout ${H200_TIMEOUT:-500} python3 ${H200_SCRIPT:-scripts/h200_session.py} "$OUT" ${H200_ARGS:-}
  echo "== exit $?"
} 2>&1 | tee "$OUT/session.log"
ls -la "$OUT" "$OUT/vectors" 2>/dev/null
