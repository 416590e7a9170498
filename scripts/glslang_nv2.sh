#!/usr/bin/env bash
# A glslang that compiles GL_NV_cooperative_matrix2, GL_EXT_bfloat16 and
# GL_EXT_cooperative_matrix_maintenance1, for EMU_GLSLANG: the emu-gpu[vulkan] wheel's glslang
# (13.1.1, the newest on PyPI) refuses them. Debian's newer glslang-tools needs a newer libc than
# bookworm's, so its package, spirv-tools (spirv-as/-val/-dis that know maintenance1), spirv-headers
# (the SPIR-V grammar 1.6 revision 7, for EMU_SPIRV_GRAMMAR: the wheel's predates maintenance1) and
# the C/C++ runtime they link are fetched with apt (a temporary sources list under the prefix;
# nothing is installed system-wide) and unpacked under PREFIX; PREFIX/glslang, PREFIX/spirv-as,
# PREFIX/spirv-val and PREFIX/spirv-dis run them with that runtime's loader.
#   bash scripts/glslang_nv2.sh [PREFIX]          (default .hwtmp/glslang; prints the glslang path)
#   export EMU_GLSLANG=$(bash scripts/glslang_nv2.sh)
#   export EMU_SPIRV_GRAMMAR=$(dirname "$EMU_GLSLANG")/root/usr/include/spirv/unified1
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
P=$(mkdir -p "${1:-$ROOT/.hwtmp/glslang}" && cd "${1:-$ROOT/.hwtmp/glslang}" && pwd)
G=$P/root/usr/include/spirv/unified1/spirv.core.grammar.json
if [ -x "$P/glslang" ] && [ -f "$G" ] && [ -x "$P/spirv-as" ] && "$P/glslang" --version >/dev/null 2>&1; then
  echo "$P/glslang"; exit 0
fi
. "$ROOT/scripts/sid_unpack.sh"
sid_unpack "$P" glslang_nv2.sh glslang-tools spirv-tools spirv-headers libc6 libstdc++6 libgcc-s1 || exit 1
for t in glslang spirv-as spirv-val spirv-dis; do sid_wrap "$P" "$t" "$P/root/usr/bin/$t"; done
"$P/glslang" --version | head -1 >&2
echo "$P/glslang"
