"""What the NVIDIA driver made of each SPIR-V module: its pipeline-cache blob and what
VK_KHR_pipeline_executable_properties reports (statistics and internal representations).

    python scripts/h200_sass.py OUT BUNDLE [--limit N]      # on the device machine, through
        scripts/h200_session.sh (H200_SCRIPT=scripts/h200_sass.py H200_ARGS="BUNDLE")

For each BUNDLE/spv/NAME.spv (a compute shader whose entry point is `main`, storage buffers at set 0
bindings 0..3): one compute pipeline, created into a fresh VkPipelineCache, whose data is written to
OUT/cache/NAME.bin; the executables' statistics and internal representations (where the driver
gives them) go to OUT/exec/NAME.json and OUT/exec/NAME.K.txt|bin. The blobs are read here with
nvdisasm (scripts/sass_read.py). Also OUT/vulkaninfo.json and .txt where BUNDLE/../.vt holds
Debian's vulkan-tools.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

EXEC_EXT = "VK_KHR_pipeline_executable_properties"
CAPTURE_STATISTICS, CAPTURE_INTERNAL = 0x40, 0x80


def vulkaninfo(out: Path, vt: Path) -> None:
    """Debian's vulkaninfo, unpacked beside the bundle (no X or Wayland libraries on the machine)."""
    debs = sorted(vt.glob("*.deb"))
    if not debs:
        print("vulkaninfo: no debs in", vt)
        return
    root = Path("/tmp/vt")
    for d in debs:
        subprocess.run(["dpkg", "-x", str(d), str(root)], check=False)
    env = dict(os.environ, LD_LIBRARY_PATH=f"{root}/usr/lib/x86_64-linux-gnu:{root}/lib/x86_64-linux-gnu")
    exe = root / "usr/bin/vulkaninfo"
    for args, name in ((["--json"], "vulkaninfo.json"), ([], "vulkaninfo.txt")):
        r = subprocess.run([str(exe), *args], env=env, capture_output=True, text=True, timeout=60, cwd=out)
        (out / name).write_text(r.stdout + r.stderr)
        print("vulkaninfo", args, "exit", r.returncode, len(r.stdout), "chars")
    for p in out.glob("VP_VULKANINFO*.json"):    # --json writes its profile to the working folder
        print("vulkaninfo profile:", p.name)


def entry_point_name(spirv: bytes, name: str) -> str:
    """The name of the module's first OpEntryPoint (glslang's is `main`, Tint's `dawn_entry_point`)."""
    from emu.frontend.spirv.grammar import decode
    return next(i.ops[2] for i in decode(spirv, name)[0] if i.opname == "OpEntryPoint")


def main(argv) -> int:
    out, bundle = Path(argv[0]), Path(argv[1])
    limit = int(argv[argv.index("--limit") + 1]) if "--limit" in argv else 10 ** 9
    (out / "cache").mkdir(parents=True, exist_ok=True)
    (out / "exec").mkdir(parents=True, exist_ok=True)
    try:
        vulkaninfo(out, bundle.parent / ".vt" if not (bundle / ".vt").exists() else bundle / ".vt")
    except Exception as e:
        print("vulkaninfo failed:", type(e).__name__, e)

    import vulkan as vk
    from emu.hw import vulkan as hv
    have = hv._extensions()
    use_exec = EXEC_EXT in have
    print("pipeline executable properties:", use_exec)
    keep = []
    if use_exec:
        orig = vk.VkDeviceCreateInfo

        def device_create_info(**kw):
            names = list(kw.get("ppEnabledExtensionNames") or []) + [EXEC_EXT]
            feat = vk.ffi.new("VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR*")
            feat.sType = vk.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR
            feat.pipelineExecutableInfo = 1
            nxt = kw.get("pNext")
            if nxt is not None and vk.ffi.typeof(nxt).kind == "struct":
                nxt = vk.ffi.addressof(nxt)
            feat.pNext = nxt if nxt is not None else vk.ffi.NULL
            keep.append(feat)
            kw.update(ppEnabledExtensionNames=names, enabledExtensionCount=len(names), pNext=feat)
            return orig(**kw)
        vk.VkDeviceCreateInfo = device_create_info
    dev = hv._device()[0]
    ffi, lib = vk.ffi, vk.lib

    def proc(name, pfn):
        return ffi.cast(pfn, lib.vkGetDeviceProcAddr(dev, name.encode()))
    if use_exec:
        get_execs = proc("vkGetPipelineExecutablePropertiesKHR", "PFN_vkGetPipelineExecutablePropertiesKHR")
        get_stats = proc("vkGetPipelineExecutableStatisticsKHR", "PFN_vkGetPipelineExecutableStatisticsKHR")
        get_reprs = proc("vkGetPipelineExecutableInternalRepresentationsKHR",
                         "PFN_vkGetPipelineExecutableInternalRepresentationsKHR")

    binds = [vk.VkDescriptorSetLayoutBinding(binding=b, descriptorType=vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                             descriptorCount=1, stageFlags=vk.VK_SHADER_STAGE_COMPUTE_BIT)
             for b in range(4)]
    dsl = vk.vkCreateDescriptorSetLayout(dev, vk.VkDescriptorSetLayoutCreateInfo(
        sType=vk.VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO, bindingCount=4, pBindings=binds), None)
    layout = vk.vkCreatePipelineLayout(dev, vk.VkPipelineLayoutCreateInfo(
        sType=vk.VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO, setLayoutCount=1, pSetLayouts=[dsl]), None)
    files = sorted((bundle / "spv").glob("*.spv"), key=lambda p: (len(p.stem), p.stem))[:limit]
    t0, done, errors = time.time(), 0, {}
    for f in files:
        if time.time() - t0 > float(os.environ.get("SASS_BUDGET_S", "300")):
            print("budget spent after", done)
            break
        spirv = f.read_bytes()
        try:
            cache = vk.vkCreatePipelineCache(dev, vk.VkPipelineCacheCreateInfo(
                sType=vk.VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO), None)
            shader = vk.vkCreateShaderModule(dev, vk.VkShaderModuleCreateInfo(
                sType=vk.VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO, codeSize=len(spirv), pCode=spirv), None)
            stage = vk.VkPipelineShaderStageCreateInfo(
                sType=vk.VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, stage=vk.VK_SHADER_STAGE_COMPUTE_BIT,
                module=shader, pName=entry_point_name(spirv, f.name))
            pipe = vk.vkCreateComputePipelines(dev, cache, 1, [vk.VkComputePipelineCreateInfo(
                sType=vk.VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO, stage=stage, layout=layout,
                flags=(CAPTURE_STATISTICS | CAPTURE_INTERNAL) if use_exec else 0)], None)[0]
            size = ffi.new("size_t*")
            lib.vkGetPipelineCacheData(dev, cache, size, ffi.NULL)
            buf = ffi.new("char[]", size[0])
            lib.vkGetPipelineCacheData(dev, cache, size, buf)
            (out / "cache" / f"{f.stem}.bin").write_bytes(ffi.buffer(buf, size[0])[:])
            if use_exec:
                info = ffi.new("VkPipelineInfoKHR*")
                info.sType = vk.VK_STRUCTURE_TYPE_PIPELINE_INFO_KHR
                info.pipeline = pipe
                n = ffi.new("uint32_t*")
                get_execs(dev, info, n, ffi.NULL)
                props = ffi.new("VkPipelineExecutablePropertiesKHR[]", n[0])
                for p in props:
                    p.sType = vk.VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_PROPERTIES_KHR
                get_execs(dev, info, n, props)
                report = []
                for k in range(n[0]):
                    ei = ffi.new("VkPipelineExecutableInfoKHR*")
                    ei.sType = vk.VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR
                    ei.pipeline, ei.executableIndex = pipe, k
                    m = ffi.new("uint32_t*")
                    get_stats(dev, ei, m, ffi.NULL)
                    stats = ffi.new("VkPipelineExecutableStatisticKHR[]", m[0])
                    for s in stats:
                        s.sType = vk.VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR
                    get_stats(dev, ei, m, stats)
                    st = {ffi.string(s.name).decode(): [s.format, s.value.u64] for s in stats}
                    get_reprs(dev, ei, m, ffi.NULL)
                    reprs = ffi.new("VkPipelineExecutableInternalRepresentationKHR[]", m[0])
                    for r in reprs:
                        r.sType = vk.VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INTERNAL_REPRESENTATION_KHR
                    get_reprs(dev, ei, m, reprs)
                    datas = []
                    for r in reprs:
                        d = ffi.new("char[]", max(1, r.dataSize))
                        datas.append(d)
                        r.pData = d
                    get_reprs(dev, ei, m, reprs)
                    names = []
                    for j, r in enumerate(reprs):
                        raw = ffi.buffer(r.pData, r.dataSize)[:]
                        ext = "txt" if r.isText else "bin"
                        (out / "exec" / f"{f.stem}.{k}.{j}.{ext}").write_bytes(raw)
                        names.append([ffi.string(r.name).decode(), ffi.string(r.description).decode(),
                                      int(r.isText), int(r.dataSize)])
                    report.append({"name": ffi.string(props[k].name).decode(),
                                   "subgroup": props[k].subgroupSize, "stats": st, "reprs": names})
                (out / "exec" / f"{f.stem}.json").write_text(json.dumps(report))
            vk.vkDestroyPipeline(dev, pipe, None)
            vk.vkDestroyShaderModule(dev, shader, None)
            vk.vkDestroyPipelineCache(dev, cache, None)
            done += 1
        except Exception as e:
            errors[f.stem] = f"{type(e).__name__}: {e}"
        if done and done % 200 == 0:
            print(done, "modules", round(time.time() - t0, 1), "s", flush=True)
    (out / "errors.json").write_text(json.dumps(errors))
    print("modules done:", done, "errors:", len(errors), list(errors.items())[:3], round(time.time() - t0, 1), "s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
