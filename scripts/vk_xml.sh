#!/usr/bin/env bash
# The Vulkan registry (vk.xml) and headers emu's ICD is generated from: Debian sid's libvulkan-dev
# (bookworm's 1.3.239 lacks VK_NV_cooperative_matrix2, VK_KHR_shader_bfloat16, VK_EXT_shader_float8),
# fetched with apt through a temporary sources list under PREFIX and unpacked there (nothing is
# installed system-wide, nothing enters the repository).
#   bash scripts/vk_xml.sh [PREFIX]     (default .hwtmp/vkxml; prints the path of vk.xml)
#   python -m emu.vulkan.gen "$(bash scripts/vk_xml.sh)"    regenerates emu/vulkan/vk_types.h, vk_registry.py
# Exit status 0 with the path on stdout; 1 with a reason on stderr when apt cannot fetch it.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
P=$(mkdir -p "${1:-$ROOT/.hwtmp/vkxml}" && cd "${1:-$ROOT/.hwtmp/vkxml}" && pwd)
X=$P/root/usr/share/vulkan/registry/vk.xml
if [ -f "$X" ]; then echo "$X"; exit 0; fi
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
apt-get "${APT[@]}" update -qq >&2 || { echo "vk_xml.sh: apt-get update failed (no network to Debian?)" >&2; exit 1; }
(cd "$P/debs" && apt-get "${APT[@]}" download libvulkan-dev >&2 2>/dev/null) \
  || { echo "vk_xml.sh: could not download libvulkan-dev from sid" >&2; exit 1; }
for d in "$P"/debs/*.deb; do dpkg-deb -x "$d" "$P/root"; done
echo "$X"
