"""Transfer and synchronisation commands of emu's ICD, driven through the real loader by a Python
program (tests/vulkan/clients/transfer_sync.py, the `vulkan` package)."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


@pytest.fixture(autouse=True)
def _vulkan_package():
    pytest.importorskip("vulkan")


def test_transfers_events_timestamps_timeline(manifest):
    env = dict(os.environ, VK_DRIVER_FILES=manifest, VK_LOADER_LAYERS_DISABLE="*")
    r = subprocess.run([sys.executable, str(HERE / "clients" / "transfer_sync.py")], env=env, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        "event before: VkEventReset", "event after: VkEventSet", "timeline: 5",
        "copy: [2, 3, 4, 5, 6, 7, 8, 9, 10, 11] update: [7, 9]",     # 40 bytes from byte 8; 2 words at 64
        "fill: [0, 43981] True 0",                                   # 64 bytes of 0xABCD from byte 16
        "timestamps ordered: True available: 1 1", "done"]
    assert r.stderr == ""


@pytest.fixture(scope="module")
def scale_add(tmp_path_factory):
    g = os.environ.get("EMU_GLSLANG") or "/work/main/.hwtmp/glslang/glslang"
    if not Path(g).exists():
        pytest.skip("no glslang to compile the GLSL shader (EMU_GLSLANG)")
    spv = tmp_path_factory.mktemp("spv") / "scale_add.spv"
    subprocess.run([g, "-V", str(HERE / "data" / "scale_add.comp"), "-o", str(spv)], check=True, capture_output=True)
    return spv


def test_indirect_dispatch_and_dynamic_offsets(manifest, scale_add):
    spv = scale_add
    env = dict(os.environ, VK_DRIVER_FILES=manifest, VK_LOADER_LAYERS_DISABLE="*")
    r = subprocess.run([sys.executable, str(HERE / "clients" / "dispatch_kinds.py"), str(spv)], env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    # out = in * scale + 11 (the specialization constant); the dynamic offset of 1024 bytes moves
    # the second dispatch's output 256 words up and leaves the first's in place
    assert r.stdout.splitlines() == ["indirect: [11, 13, 15] 209 True", "dynamic: [11, 16, 21] True True"]


def test_dispatch_base(manifest, tmp_path):
    """vkCmdDispatchBase and its KHR alias with a nonzero base: WorkgroupId and GlobalInvocationId
    offset by the base, NumWorkgroups the count, every other position untouched (exact words);
    a pipeline made without VK_PIPELINE_CREATE_DISPATCH_BASE_BIT refuses a nonzero base."""
    spv = _glslang(HERE / "data" / "dispatch_base.comp", tmp_path)
    env = dict(os.environ, VK_DRIVER_FILES=manifest, VK_LOADER_LAYERS_DISABLE="*")
    r = subprocess.run([sys.executable, str(HERE / "clients" / "dispatch_base.py"), str(spv)], env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        "VK_KHR_device_group: True",
        "vkCmdDispatchBase (2, 1, 1) (3, 2, 2): 96 invocations, exact: True",
        "vkCmdDispatchBaseKHR (5, 3, 2) (1, 1, 1): 8 invocations, exact: True",
        "vkCmdDispatchBase zero base (0, 0, 0) (6, 4, 3): 576 invocations, exact: True",
        "without the flag: 0 invocations", "done"]
    assert r.stderr.splitlines() == [
        "emu vulkan: vkCmdDispatchBase [VUID-vkCmdDispatchBase-baseGroupX-00427]: base workgroup (1, 0, 0) is not "
        "(0, 0, 0) but the bound pipeline was not created with VK_PIPELINE_CREATE_DISPATCH_BASE_BIT"]


def _glslang(src: Path, out: Path) -> Path:
    g = os.environ.get("EMU_GLSLANG") or "/work/main/.hwtmp/glslang/glslang"
    if not Path(g).exists():
        pytest.skip("no glslang to compile the GLSL shader (EMU_GLSLANG)")
    spv = out / (src.stem + ".spv")
    subprocess.run([g, "-V", str(src), "-o", str(spv)], check=True, capture_output=True)
    return spv


def test_invalid_use_is_one_message_then_the_code(manifest, scale_add):
    """Memory bound past its end, a descriptor range past its buffer, a dispatch reading a
    descriptor never written: each one line naming the call and the VUID; the program goes on."""
    env = dict(os.environ, VK_DRIVER_FILES=manifest, VK_LOADER_LAYERS_DISABLE="*")
    r = subprocess.run([sys.executable, str(HERE / "clients" / "invalid_use.py"), str(scale_add)], env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["bind past the end: VkErrorUnknown", "bind: ok", "bind: ok",
                                     "submit: VkErrorUnknown", "done"]
    assert r.stderr.splitlines() == [
        "emu vulkan: vkBindBufferMemory [VUID-vkBindBufferMemory-size-01037]: the buffer's 512 bytes at "
        "memoryOffset 640 pass the allocation's 1024 bytes -> VK_ERROR_UNKNOWN",
        "emu vulkan: vkUpdateDescriptorSets [VUID-VkDescriptorBufferInfo-range-00342]: pDescriptorWrites[0]."
        "pBufferInfo[0]: offset 256 + range 512 passes the buffer's 512 bytes",
        "emu vulkan: vkQueueSubmit [VUID-vkCmdDispatch-None-08114]: vkCmdDispatch: set 0 binding 1 ('Out') was "
        "never written (vkUpdateDescriptorSets) -> VK_ERROR_UNKNOWN"]


def test_buffer_device_addresses_through_the_icd(manifest):
    """tests/shaders/spirv/buffer_address.comp (buffers reached by addresses in push constants and
    in a linked list, pointer arithmetic, an atomic through a reference) with emu's ICD as the
    Vulkan device (the lavapipe profile): the scenario that tests/hw compares with lavapipe gives
    emu's API's results, with the ICD's own addresses (vkGetBufferDeviceAddress)."""
    env = dict(os.environ, VK_DRIVER_FILES=manifest, VK_LOADER_LAYERS_DISABLE="*", EMU_PROFILE="lavapipe")
    test = "tests/hw/test_vulkan_breadth_lavapipe.py::test_buffer_device_addresses_match_lavapipe"
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider", test], env=env,
                       capture_output=True, text=True, timeout=600, cwd=HERE.parents[1])
    assert r.returncode == 0 and f"PASSED {test}" in r.stdout, r.stdout[-3000:] + r.stderr[-2000:]


def test_mapped_memory_is_aligned_as_reported(manifest):
    """Every allocation's mapped pointer is on minMemoryMapAlignment (the spec's rule for
    vkMapMemory): llama.cpp's ggml wraps a mapped host buffer as a CPU buffer and aborts when it is
    not 32-byte aligned (numpy's own allocations are 16-byte aligned)."""
    env = dict(os.environ, VK_DRIVER_FILES=manifest, VK_LOADER_LAYERS_DISABLE="*")
    r = subprocess.run([sys.executable, str(HERE / "clients" / "memory_map.py")], env=env, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["minMemoryMapAlignment: 64", "remainders: [0, 0, 0, 0, 0, 0, 0, 0]",
                                     "offset 100: 36", "done"]
    assert r.stderr == ""
