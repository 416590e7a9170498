"""Several bind groups with explicit layouts, sub-range buffer bindings and dynamic offsets.

A plain wgpu-py host program:
- inputs a and b live in one 'arena' buffer, uploaded through a MAP_WRITE staging buffer
  (map_sync + write_mapped + unmap + copy_buffer_to_buffer), bound as two sub-ranges
  ({"buffer", "offset", "size"}) at offsets aligned to the device's limit;
- the outputs are two sub-ranges of another buffer (the bytes around them must stay as they
  were: clear_buffer zeroes the arena first, write_buffer puts a marker in the gap);
- a uniform buffer holds two parameter blocks, chosen per dispatch with a dynamic offset;
- one shader module, two entry points, one explicit pipeline layout of three bind groups.

    python bind_groups.py [OUT.npz]              # on the real adapter
    python -m emu.wgpu bind_groups.py [OUT.npz]  # on emu's virtual GPU
"""
import sys

import numpy as np
import wgpu

SHADER = """
struct Params {
    n: u32,
    scale: f32,
}

@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(1) @binding(0) var<storage, read_write> sum_out: array<f32>;
@group(1) @binding(1) var<storage, read_write> prod_out: array<f32>;
@group(2) @binding(0) var<uniform> params: Params;

@compute @workgroup_size(64)
fn combine(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i >= params.n) {
        return;
    }
    sum_out[i] = (a[i] + b[i]) * params.scale;
    prod_out[i] = a[i] * b[i];
}

@compute @workgroup_size(64)
fn tail(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i >= arrayLength(&sum_out)) {
        return;
    }
    sum_out[i] = sum_out[i] + f32(arrayLength(&sum_out)) * params.scale;
}
"""


def align(n, a):
    return (n + a - 1) // a * a


def main(out_path=None):
    n = 300
    rng = np.random.default_rng(11)
    a = rng.standard_normal(n).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)

    adapter = wgpu.gpu.request_adapter_sync(power_preference="high-performance")
    print("adapter:", adapter.summary)
    device = adapter.request_device_sync()
    s_align = device.limits["min-storage-buffer-offset-alignment"]
    u_align = device.limits["min-uniform-buffer-offset-alignment"]
    BU, SS = wgpu.BufferUsage, wgpu.ShaderStage

    # --- inputs: one arena, uploaded through a mappable staging buffer
    off_a, off_b = 0, align(a.nbytes, s_align)
    arena_size = off_b + b.nbytes
    upload = device.create_buffer(size=arena_size, usage=BU.MAP_WRITE | BU.COPY_SRC)
    upload.map_sync(wgpu.MapMode.WRITE)
    upload.write_mapped(a, off_a)
    upload.write_mapped(b, off_b)
    upload.unmap()
    arena = device.create_buffer(size=arena_size, usage=BU.STORAGE | BU.COPY_DST)

    # --- outputs: two ranges of one buffer, with a marked gap between them
    off_sum = s_align
    off_prod = align(off_sum + n * 4 + 64, s_align)      # leaves a gap of at least 64 bytes
    out_size = off_prod + n * 4 + 64
    out = device.create_buffer(size=out_size, usage=BU.STORAGE | BU.COPY_DST | BU.COPY_SRC)
    device.queue.write_buffer(out, 0, np.full(out_size // 4, 7.0, np.float32))
    marker = np.arange(8, dtype=np.float32) + 100
    gap = off_sum + n * 4

    # --- parameters: two blocks in one uniform buffer, picked by a dynamic offset
    params = np.zeros(2 * u_align // 4, np.uint32)
    for k, scale in enumerate((0.5, 3.0)):
        params[k * u_align // 4] = n
        params[k * u_align // 4 + 1:k * u_align // 4 + 2].view(np.float32)[0] = scale
    ubuf = device.create_buffer_with_data(data=params, usage=BU.UNIFORM)

    bgl_in = device.create_bind_group_layout(entries=[
        {"binding": 0, "visibility": SS.COMPUTE, "buffer": {"type": wgpu.BufferBindingType.read_only_storage}},
        {"binding": 1, "visibility": SS.COMPUTE, "buffer": {"type": "read-only-storage"}},
    ])
    bgl_out = device.create_bind_group_layout(entries=[
        {"binding": 0, "visibility": SS.COMPUTE, "buffer": {"type": "storage"}},
        {"binding": 1, "visibility": SS.COMPUTE, "buffer": {"type": "storage"}},
    ])
    bgl_par = device.create_bind_group_layout(entries=[
        {"binding": 0, "visibility": SS.COMPUTE,
         "buffer": {"type": "uniform", "has_dynamic_offset": True, "min_binding_size": 8}},
    ])
    layout = device.create_pipeline_layout(bind_group_layouts=[bgl_in, bgl_out, bgl_par])
    module = device.create_shader_module(code=SHADER, label="bind_groups.wgsl")
    combine = device.create_compute_pipeline(layout=layout, compute={"module": module, "entry_point": "combine"})
    tail = device.create_compute_pipeline(layout=layout, compute={"module": module, "entry_point": "tail"})

    bg_in = device.create_bind_group(layout=bgl_in, entries=[
        {"binding": 0, "resource": {"buffer": arena, "offset": off_a, "size": a.nbytes}},
        {"binding": 1, "resource": {"buffer": arena, "offset": off_b, "size": b.nbytes}},
    ])
    bg_out = device.create_bind_group(layout=bgl_out, entries=[
        {"binding": 0, "resource": {"buffer": out, "offset": off_sum, "size": n * 4}},
        {"binding": 1, "resource": {"buffer": out, "offset": off_prod, "size": n * 4}},
    ])
    bg_par = device.create_bind_group(layout=bgl_par, entries=[
        {"binding": 0, "resource": {"buffer": ubuf, "offset": 0, "size": 16}},
    ])

    encoder = device.create_command_encoder()
    encoder.copy_buffer_to_buffer(upload, 0, arena, 0, arena_size)
    encoder.clear_buffer(out)
    cpass = encoder.begin_compute_pass()
    cpass.set_pipeline(combine)
    cpass.set_bind_group(0, bg_in)
    cpass.set_bind_group(1, bg_out)
    cpass.set_bind_group(2, bg_par, [0])
    cpass.dispatch_workgroups((n + 63) // 64)
    cpass.set_pipeline(tail)
    cpass.set_bind_group(2, bg_par, [u_align])
    cpass.dispatch_workgroups((n + 63) // 64)
    cpass.end()
    device.queue.submit([encoder.finish()])
    device.queue.write_buffer(out, gap, marker)

    got = np.frombuffer(device.queue.read_buffer(out), np.float32).copy()

    expected = np.zeros(out_size // 4, np.float32)
    s = ((a + b) * np.float32(0.5)).astype(np.float32)
    s = (s + np.float32(n) * np.float32(3.0)).astype(np.float32)
    expected[off_sum // 4: off_sum // 4 + n] = s
    expected[off_prod // 4: off_prod // 4 + n] = a * b
    expected[gap // 4:gap // 4 + 8] = marker
    bad = np.flatnonzero(got != expected)
    print(f"sum, product and the bytes around them: {bad.size} of {got.size} floats differ from numpy")
    if bad.size:
        print("MISMATCH at float", bad[:10])
        return 1
    if out_path:
        # (the sizes of the gaps depend on the adapter's offset alignment: keep what does not)
        np.savez(out_path, sum=got[off_sum // 4:off_sum // 4 + n], prod=got[off_prod // 4:off_prod // 4 + n],
                 marker=got[gap // 4:gap // 4 + 8])
    print("OK")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
