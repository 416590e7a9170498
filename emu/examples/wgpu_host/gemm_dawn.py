"""C = A @ B (f16 inputs, f32 result) with Dawn's subgroup matrices, through wgpudawn.

A plain wgpudawn host program (the wgpu-py API on Dawn): it asks Dawn for the experimental
feature 'chromium-experimental-subgroup-matrix', reads the adapter's subgroup-matrix configs
with extras.get_adapter_properties(adapter), picks an f16 x f16 -> f32 one and builds a tiled
GEMM from it: one subgroup per M x N tile of C, looping over K with
subgroupMatrixMultiplyAccumulate. Exits with 77 (skipped) on an adapter without subgroup
matrices (lavapipe, for one).

    python gemm_dawn.py [OUT.npz]                                    # on the real adapter
    EMU_PROFILE=nvidia-h200 python -m emu.wgpu gemm_dawn.py [OUT.npz]  # on emu's virtual GPU
"""
import sys

import numpy as np
import wgpudawn as wgpu
from wgpudawn.backends.dawn import extras

FEATURE = "chromium-experimental-subgroup-matrix"


def shader(cfg, m_total, n_total, k_total, sg):
    M, N, K = cfg["m"], cfg["n"], cfg["k"]
    return f"""
enable f16;
enable chromium_experimental_subgroup_matrix;

@group(0) @binding(0) var<storage, read> a: array<f16>;        // m_total x k_total, row-major
@group(0) @binding(1) var<storage, read> b: array<f16>;        // k_total x n_total, row-major
@group(0) @binding(2) var<storage, read_write> c: array<f32>;  // m_total x n_total, row-major

@compute @workgroup_size({sg})
fn main(@builtin(workgroup_id) wg: vec3<u32>) {{
    let row0 = wg.y * {M}u;
    let col0 = wg.x * {N}u;
    var acc = subgroup_matrix_result<f32, {N}, {M}>();
    for (var kk = 0u; kk < {k_total}u; kk += {K}u) {{
        let ma = subgroupMatrixLoad<subgroup_matrix_left<f16, {K}, {M}>, row_major>(
            &a, row0 * {k_total}u + kk, {k_total}u);
        let mb = subgroupMatrixLoad<subgroup_matrix_right<f16, {N}, {K}>, row_major>(
            &b, kk * {n_total}u + col0, {n_total}u);
        acc = subgroupMatrixMultiplyAccumulate(ma, mb, acc);
    }}
    subgroupMatrixStore<row_major>(&c, row0 * {n_total}u + col0, acc, {n_total}u);
}}
"""


def main(out_path=None):
    extras.set_instance_extras(backends=["Vulkan"],
                               enable_toggles=["allow_unsafe_apis", "vulkan_enable_f16_on_nvidia"])
    adapter = wgpu.gpu.request_adapter_sync(power_preference="high-performance")
    print("adapter:", adapter.summary)
    if FEATURE not in adapter.features or "shader-f16" not in adapter.features:
        print(f"SKIP: the adapter has no {FEATURE} (with shader-f16)")
        return 77
    configs = extras.get_adapter_properties(adapter).get("subgroup_matrix_configs") or []
    usable = [c for c in configs if c["component_type"] == "f16" and c["result_component_type"] == "f32"]
    if not usable:
        print(f"SKIP: no f16 x f16 -> f32 subgroup-matrix config among {configs}")
        return 77
    cfg = max(usable, key=lambda c: (c["m"] * c["n"] * c["k"], c["m"]))
    sg = cfg["max_subgroup_size"]
    print(f"config: {cfg['m']}x{cfg['n']}x{cfg['k']} f16 -> f32 on subgroups of {sg}")
    device = adapter.request_device_sync(required_features=[FEATURE, "shader-f16"])

    m_total, n_total, k_total = 4 * cfg["m"], 4 * cfg["n"], 6 * cfg["k"]
    rng = np.random.default_rng(5)
    A = rng.uniform(-1, 1, (m_total, k_total)).astype(np.float16)
    B = rng.uniform(-1, 1, (k_total, n_total)).astype(np.float16)

    BU = wgpu.BufferUsage
    buf_a = device.create_buffer_with_data(data=A, usage=BU.STORAGE)
    buf_b = device.create_buffer_with_data(data=B, usage=BU.STORAGE)
    buf_c = device.create_buffer(size=m_total * n_total * 4, usage=BU.STORAGE | BU.COPY_SRC)

    module = device.create_shader_module(code=shader(cfg, m_total, n_total, k_total, sg), label="gemm.wgsl")
    pipeline = device.create_compute_pipeline(layout="auto", compute={"module": module, "entry_point": "main"})
    bind_group = device.create_bind_group(layout=pipeline.get_bind_group_layout(0), entries=[
        {"binding": i, "resource": {"buffer": buf}} for i, buf in enumerate((buf_a, buf_b, buf_c))])

    encoder = device.create_command_encoder()
    cpass = encoder.begin_compute_pass()
    cpass.set_pipeline(pipeline)
    cpass.set_bind_group(0, bind_group)
    cpass.dispatch_workgroups(n_total // cfg["n"], m_total // cfg["m"])
    cpass.end()
    device.queue.submit([encoder.finish()])
    C = np.frombuffer(device.queue.read_buffer(buf_c), np.float32).reshape(m_total, n_total).copy()

    ref = A.astype(np.float64) @ B.astype(np.float64)
    err = np.abs(C - ref).max()
    print(f"C = A @ B, {m_total}x{n_total}x{k_total}: max |C - numpy float64| = {err:.3g}")
    if not np.allclose(C, ref, rtol=1e-5, atol=1e-5):
        print("MISMATCH")
        return 1
    if out_path:
        np.savez(out_path, A=A, B=B, C=C, config=np.array([cfg["m"], cfg["n"], cfg["k"], sg]))
    print("OK")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
