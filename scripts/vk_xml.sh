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
. "$ROOT/scripts/sid_unpack.sh"
sid_unpack "$P" vk_xml.sh libvulkan-dev || exit 1
echo "$X"
