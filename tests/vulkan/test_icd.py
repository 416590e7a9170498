"""emu's ICD through the real Vulkan loader: vulkaninfo, a C program of ours, a Python program
(the `vulkan` package, so the ICD runs in the host's own interpreter). Each skips, saying why,
where the loader, a compiler or the tool is missing."""
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(__file__).resolve().parent / "data"
LOADER = "/usr/lib/x86_64-linux-gnu/libvulkan.so.1"


def _env(manifest, **extra):
    env = dict(os.environ, VK_DRIVER_FILES=manifest, VK_LOADER_LAYERS_DISABLE="*", **extra)
    env.pop("VK_ICD_FILENAMES", None)
    return env


def test_manifest_names_the_library(manifest):
    import json
    m = json.loads(Path(manifest).read_text())
    assert m["file_format_version"] == "1.0.1" and m["ICD"]["api_version"] == "1.3.0"
    assert Path(m["ICD"]["library_path"]).is_file()


def test_vulkaninfo_describes_the_device(manifest):
    if not shutil.which("vulkaninfo"):
        pytest.skip("no vulkaninfo (Debian: apt install vulkan-tools)")
    r = subprocess.run(["vulkaninfo"], env=_env(manifest, EMU_PROFILE="nvidia-h200"), capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "emu vulkan" not in r.stderr and "ERROR" not in out, r.stderr
    for line in ("deviceName        = emu 0.1.0 (nvidia-h200: NVIDIA H200)", "vendorID          = 0x10de",
                 "deviceID          = 0x2335", "deviceType        = PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU",
                 "apiVersion        = 1.3.363", "conformanceVersion:"):
        assert line in out, line
    assert re.search(r"queueFlags\s+= QUEUE_COMPUTE \| QUEUE_TRANSFER", out)
    assert re.search(r"propertyFlags = 0x000f: count = 4\n\t+MEMORY_PROPERTY_DEVICE_LOCAL_BIT\n\t+MEMORY_PROPERTY_HOST_VISIBLE_BIT\n"
                     r"\t+MEMORY_PROPERTY_HOST_COHERENT_BIT\n\t+MEMORY_PROPERTY_HOST_CACHED_BIT", out)
    exts = re.search(r"Device Extensions: count = (\d+)\n((?:\t.*\n)+)", out)
    names = re.findall(r"(VK_\w+)\s+: extension revision (\d+)", exts[2])
    assert ("VK_KHR_cooperative_matrix", "2") in names and ("VK_NV_cooperative_matrix2", "1") in names
    assert ("VK_KHR_shader_bfloat16", "1") in names
    # the H200's driver does not report VK_EXT_shader_float8 (emu's front end reads 8-bit floats)
    assert "VK_EXT_shader_float8" not in dict(names)
    # what the SPIR-V front end now runs turns its feature on: 16-bit integers, integer dot
    # products, buffer device addresses (ggml's shaders need all three)
    assert {"VK_KHR_shader_integer_dot_product", "VK_KHR_buffer_device_address"} <= set(dict(names))
    assert re.search(r"subgroupSize\s+= 32", out) and re.search(r"minSubgroupSize\s+= 32", out)
    assert re.search(r"shaderFloat16\s+= true", out) and re.search(r"timelineSemaphore\s+= true", out)
    for feature in ("shaderInt16", "shaderIntegerDotProduct", "bufferDeviceAddress"):
        assert re.search(rf"\b{feature}\s+= true", out), feature
    # the compute limits and fast integer dot products NVIDIA's driver reports (recorded on an H100,
    # the same GH100 chip and driver: tests/data/hw/h100/vulkaninfo_580.159.04.json.gz)
    import gzip
    import json
    rec = json.load(gzip.open(ROOT / "tests/data/hw/h100/vulkaninfo_580.159.04.json.gz"))["capabilities"]["device"]
    limits = rec["properties"]["VkPhysicalDeviceProperties"]["limits"]
    assert limits["maxComputeSharedMemorySize"] == 49152
    assert re.search(r"maxComputeSharedMemorySize\s+= 49152\n", out)
    dot = rec["properties"]["VkPhysicalDeviceShaderIntegerDotProductProperties"]
    assert sum(dot.values()) == 6
    for name, fast in dot.items():
        assert re.search(rf"\b{name}\s+= {'true' if fast else 'false'}\n", out), name


def _glslang():
    g = os.environ.get("EMU_GLSLANG") or shutil.which("glslangValidator") or "/work/main/.hwtmp/glslang/glslang"
    return g if g and Path(g).exists() else None


def _vulkan_headers():
    for d in (ROOT / ".hwtmp/vkxml/root/usr/include", Path("/work/main/.hwtmp/vkxml/root/usr/include"),
              Path("/usr/include")):
        if (d / "vulkan/vulkan.h").is_file():
            return d
    return None


@pytest.fixture(scope="module")
def client(tmp_path_factory, manifest):
    g, inc = _glslang(), _vulkan_headers()
    if g is None:
        pytest.skip("no glslang to compile the GLSL shader (EMU_GLSLANG)")
    if inc is None:
        pytest.skip("no Vulkan headers (apt install libvulkan-dev, or bash scripts/vk_xml.sh)")
    d = tmp_path_factory.mktemp("client")
    subprocess.run([g, "-V", str(DATA / "scale_add.comp"), "-o", str(d / "scale_add.spv")], check=True,
                   capture_output=True)
    subprocess.run(["gcc", "-O1", "-o", str(d / "icd_client"), str(Path(__file__).parent / "icd_client.c"),
                    f"-I{inc}", f"-l:{Path(LOADER).name}"], check=True)
    return d


@pytest.mark.parametrize("n", [1000, 4096 + 3])
def test_c_program_runs_a_glsl_shader(client, manifest, n):
    r = subprocess.run([str(client / "icd_client"), str(client / "scale_add.spv"), str(n)], env=_env(manifest),
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["device: emu 0.1.0 (nvidia-h200: NVIDIA H200)", f"ok {n}"]
    assert r.stderr == ""


PY_CLIENT = r"""
import vulkan as vk
inst = vk.vkCreateInstance(vk.VkInstanceCreateInfo(pApplicationInfo=vk.VkApplicationInfo(
    apiVersion=vk.VK_MAKE_VERSION(1, 3, 0))), None)
pd = vk.vkEnumeratePhysicalDevices(inst)[0]
print(vk.vkGetPhysicalDeviceProperties(pd).deviceName)
q = vk.VkDeviceQueueCreateInfo(queueFamilyIndex=0, queueCount=1, pQueuePriorities=[1.0])
dev = vk.vkCreateDevice(pd, vk.VkDeviceCreateInfo(queueCreateInfoCount=1, pQueueCreateInfos=[q]), None)
for info in (vk.VkMemoryAllocateInfo(allocationSize=64, memoryTypeIndex=3),):
    try:
        vk.vkAllocateMemory(dev, info, None)
    except vk.VkError as e:
        print("refused:", type(e).__name__)
mem = vk.vkAllocateMemory(dev, vk.VkMemoryAllocateInfo(allocationSize=64, memoryTypeIndex=0), None)
try:
    vk.vkMapMemory(dev, mem, 128, 16, 0)
except vk.VkError as e:
    print("refused:", type(e).__name__)
vk.vkDestroyFence(dev, vk.ffi.cast("VkFence", mem), None)      # a memory handle is no fence
vk.vkFreeMemory(dev, mem, None)
vk.vkDestroyDevice(dev, None)
vk.vkDestroyInstance(inst, None)
print("done")
"""


def test_python_host_and_invalid_use(manifest):
    """The `vulkan` package loads the loader into a Python process: the ICD uses that interpreter;
    invalid use gives one message naming the call and the VUID, then the error code."""
    pytest.importorskip("vulkan")
    r = subprocess.run([sys.executable, "-c", PY_CLIENT], env=_env(manifest), capture_output=True, text=True,
                       timeout=300, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["emu 0.1.0 (nvidia-h200: NVIDIA H200)", "refused: VkErrorUnknown",
                                     "refused: VkErrorMemoryMapFailed", "done"]
    lines = r.stderr.splitlines()
    assert lines[:2] == [
        "emu vulkan: vkAllocateMemory [VUID-vkAllocateMemory-pAllocateInfo-01714]: memoryTypeIndex 3: the device "
        "has one memory type (0) -> VK_ERROR_UNKNOWN",
        "emu vulkan: vkMapMemory [VUID-vkMapMemory-offset-00679]: offset 128 is not below the allocation's 64 "
        "bytes -> VK_ERROR_MEMORY_MAP_FAILED"]
    assert re.fullmatch(r"emu vulkan: vkDestroyFence \[VUID-vkDestroyFence-fence-parameter\]: fence \(0x[0-9a-f]+\) is "
                        r"not a valid Fence handle", lines[2]), lines
    assert len(lines) == 3


@pytest.fixture(scope="module")
def oob_shader(client):
    """scale_add.comp writing 3 elements past the end of its output (the last three invocations)."""
    src = (DATA / "scale_add.comp").read_text().replace("b[i] = a[i]", "b[i + 3u] = a[i]")
    (client / "oob.comp").write_text(src)
    subprocess.run([_glslang(), "-V", str(client / "oob.comp"), "-o", str(client / "oob.spv")], check=True,
                   capture_output=True)
    return client / "oob.spv"


def test_out_of_bounds_write_is_reported_as_emu_run_does(client, manifest, oob_shader):
    r = subprocess.run([str(client / "icd_client"), str(oob_shader), "64"], env=_env(manifest),
                       capture_output=True, text=True, timeout=300)
    lines = r.stderr.splitlines()
    assert re.fullmatch(r"spirv-dis --no-header shader-[0-9a-f]{8}\.spv:\d+:\d+: warning: out-of-bounds index into "
                        r"buffer 'Out' \(@group\(0\) @binding\(1\)\) \(64 elements\): 3 accesses out of bounds; "
                        r"clamped to the last element, as WebGPU's robust access allows", lines[0]), lines
    assert lines[1:3] == ["   note: first in workgroup (0, 0, 0), subgroup 1, lane 29 (local_invocation_index 61)",
                          "   hint: EMU_VK_BOUNDS=strict stops at the first out-of-bounds access"]
    # the values moved 3 up: the program sees its check fail, the host program itself runs on
    assert r.returncode == 1 and "out[0] = 0, expected 7" in r.stderr


def test_strict_bounds_lose_the_device_with_one_message(client, manifest, oob_shader):
    r = subprocess.run([str(client / "icd_client"), str(oob_shader), "64"], env=_env(manifest, EMU_VK_BOUNDS="strict"),
                       capture_output=True, text=True, timeout=300)
    lines = r.stderr.splitlines()
    assert re.fullmatch(r"emu vulkan: vkQueueSubmit: vkCmdDispatch: spirv-dis --no-header shader-[0-9a-f]{8}\.spv:"
                        r"\d+:\d+: error: index 64 is out of bounds for an array of 64 elements in buffer 'Out' "
                        r"\(@group\(0\) @binding\(1\)\)", lines[0]), lines
    assert lines[-2:] == ["   hint: guard the access with a bounds check; without EMU_VK_BOUNDS=strict emu clamps "
                          "the index as WebGPU implementations do and reports the site -> VK_ERROR_DEVICE_LOST",
                          "vkQueueSubmit(queue, 1, &submit, fence) failed: -4"]
    assert r.returncode == 1



def test_a_long_loop_runs_to_its_end(client, manifest):
    """A program cannot pass --max-steps: an invocation whose loop takes 1.7 million steps (past
    `emu run`'s limit of 10^6, as llama.cpp's flash attention over 1,024 keys does) runs to its
    end on the device; EMU_VK_MAX_STEPS still stops it where a person asks."""
    src = (DATA / "scale_add.comp").read_text().replace(
        "if (i < pc.n) b[i] = a[i] * pc.scale + SHIFT;",
        "uint t = 0u;\n    for (uint k = 0u; k < 100000u; k++) t += k & 1u;\n"
        "    if (i < pc.n) b[i] = a[i] * pc.scale + SHIFT + t - 50000u;")
    (client / "long_loop.comp").write_text(src)
    subprocess.run([_glslang(), "-V", str(client / "long_loop.comp"), "-o", str(client / "long_loop.spv")],
                   check=True, capture_output=True)
    r = subprocess.run([str(client / "icd_client"), str(client / "long_loop.spv"), "64"], env=_env(manifest),
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["device: emu 0.1.0 (nvidia-h200: NVIDIA H200)", "ok 64"]
    r = subprocess.run([str(client / "icd_client"), str(client / "long_loop.spv"), "64"],
                       env=_env(manifest, EMU_VK_MAX_STEPS="100000"), capture_output=True, text=True, timeout=600)
    assert r.returncode == 1
    assert "error: the step limit (100000 steps per invocation) was reached in this loop by 64 invocations" in r.stderr

def test_reloaded_and_called_from_several_threads(client, manifest):
    """Instances made and destroyed three times (the loader unloads the driver and loads it again),
    then four threads at once, each with its own instance and device."""
    exe = client / "icd_lifecycle"
    subprocess.run(["gcc", "-O1", "-pthread", "-o", str(exe), str(Path(__file__).parent / "icd_lifecycle.c"),
                    f"-I{_vulkan_headers()}", f"-l:{Path(LOADER).name}"], check=True)
    r = subprocess.run([str(exe)], env=_env(manifest), capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    name = "emu 0.1.0 (nvidia-h200: NVIDIA H200)"
    lines = r.stdout.splitlines()
    assert lines[:3] == [f"round {k}: {name}" for k in range(3)]
    assert sorted(lines[3:]) == [f"thread {k}: {name}" for k in range(4)]
    assert r.stderr == ""


def test_dispatch_traces_by_environment(client, manifest, tmp_path):
    """EMU_VK_TRACE_DIR: emu's trace of each dispatch (the format of `emu run --trace`), selected
    as --trace-ops and --trace-lanes select."""
    import json
    r = subprocess.run([str(client / "icd_client"), str(client / "scale_add.spv"), "100", "2"], timeout=300,
                       env=_env(manifest, EMU_VK_TRACE_DIR=str(tmp_path), EMU_VK_TRACE_OPS="memory",
                                EMU_VK_TRACE_LANES="0-1", EMU_VK_TRACE_LIMIT="2",
                                EMU_VK_DUMP_DIR=str(tmp_path / "modules")), capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    # EMU_VK_DUMP_DIR: the program's SPIR-V, byte for byte, named as messages and traces name it
    dumped = list((tmp_path / "modules").iterdir())
    assert len(dumped) == 1 and dumped[0].read_bytes() == (client / "scale_add.spv").read_bytes()
    files = sorted(p.name for p in tmp_path.iterdir() if p.is_file())
    assert len(files) == 2 and all(re.fullmatch(r"000[12]-shader-[0-9a-f]{8}\.jsonl", f) for f in files)
    assert files[0][5:].replace(".jsonl", ".spv") == dumped[0].name
    recs = [json.loads(x) for x in (tmp_path / files[0]).read_text().splitlines()]
    head = recs[0]
    assert (head["record"], head["profile"], head["dispatch"], head["workgroup_size"], head["overrides"]) == \
        ("header", "nvidia-h200", [2, 1, 1], [64, 1, 1], {"SHIFT": 7})
    assert head["selection"]["ops"] == ["memory"] and head["selection"]["lanes"] == "0-1"
    first = recs[1]
    assert first["op"] == "load" and first["buffer"]["name"] == "push_constants"
    assert [(x["lane"], x["value"]) for x in first["lanes"]][:2] == [(0, 100), (1, 100)]     # pc.n
    assert recs[-1]["record"] == "summary" and recs[-1]["complete"] is True


@pytest.mark.parametrize("profile", ["reference", "amd-rdna3", "intel-xe2", "lavapipe", "apple-m1"])
def test_every_profile_is_a_device(manifest, profile):
    """EMU_PROFILE picks the GPU the device models: its name, vendor and subgroup sizes."""
    if not shutil.which("vulkaninfo"):
        pytest.skip("no vulkaninfo (Debian: apt install vulkan-tools)")
    from emu.profiles import load_profile
    prof = load_profile(profile)
    r = subprocess.run(["vulkaninfo"], env=_env(manifest, EMU_PROFILE=profile), capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0 and "emu vulkan" not in r.stderr and "ERROR" not in r.stdout, r.stderr
    assert f"deviceName        = emu 0.1.0 ({profile})" in r.stdout
    assert f"vendorID          = 0x{prof.adapter.vendor_id or 0:04x}" in r.stdout
    assert re.search(rf"minSubgroupSize\s+= {min(prof.subgroup_sizes)}\n", r.stdout)
    assert re.search(rf"maxSubgroupSize\s+= {max(prof.subgroup_sizes)}\n", r.stdout)
