#!/usr/bin/env bash
# A glslang that compiles GL_NV_cooperative_matrix2 (and GL_EXT_bfloat16), for EMU_GLSLANG: the
# emu-gpu[vulkan] wheel's glslang (13.1.1, the newest on PyPI) refuses them. Debian's newer
# glslang-tools needs a newer libc than bookworm's, so its package and the C/C++ runtime it links
# are fetched with apt (a temporary sources list under the prefix; nothing is installed system-wide)
# and unpacked under PREFIX; PREFIX/glslang runs it with that runtime's loader.
#   bash scripts/glslang_nv2.sh [PREFIX]          (default .hwtmp/glslang; prints the path)
#   export EMU_GLSLANG=$(bash scripts/glslang_nv2.sh)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
P=$(mkdir -p "${1:-$ROOT/.hwtmp/glslang}" && cd "${1:-$ROOT/.hwtmp/glslang}" && pwd)
if [ -x "$P/glslang" ] && "$P/glslang" --version >/dev/null 2>&1; then echo "$P/glslang"; exit 0; fi
mkdir -p "$P/apt/lists/partial" "$P/apt/cache/archives/partial" "$P/apt/sources" "$P/debs" "$P/root"
cat > "$P/apt/sources/sid.sources" <<SRC
Types: deb
URIs: http://deb.debian.org/debian
Suites: sid
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
APT=(-o Dir::Etc::SourceList=/dev/null -o Dir::Etc::SourceParts="$P/apt/sources"
     -o Dir::State::Lists="$P/apt/lists" -o Dir::Cache="$P/apt/cache" -o Debug::NoLocking=1)
apt-get "${APT[@]}" update -qq >&2
(cd "$P/debs" && apt-get "${APT[@]}" download glslang-tools libc6 libstdc++6 libgcc-s1 >&2 2>/dev/null)
for d in "$P"/debs/*.deb; do dpkg-deb -x "$d" "$P/root"; done
L=$P/root/usr/lib/x86_64-linux-gnu
cat > "$P/glslang" <<RUN
#!/bin/sh
exec "$L/ld-linux-x86-64.so.2" --library-path "$L" "$P/root/usr/bin/glslang" "\$@"
RUN
chmod +x "$P/glslang"
"$P/glslang" --version | head -1 >&2
echo "$P/glslang"
