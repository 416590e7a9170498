"""y = alpha * x + y over n floats, with a uniform block and pipeline-overridable constants.

A plain wgpu-py host program: storage buffers, a uniform buffer (updated with
queue.write_buffer), overrides given through compute={"constants": ...}, layout="auto", and
the result read back through a MAP_READ staging buffer (copy_buffer_to_buffer + map_sync).

    python storage_uniform.py [OUT.npz]              # on the real adapter
    python -m emu.wgpu storage_uniform.py [OUT.npz]  # on emu's virtual GPU
"""
import sys

import numpy as np
import wgpu

SHADER = """
struct Params {
    n: u32,
    alpha: f32,
    offset: f32,
    _pad: u32,
}

override WG: u32 = 64;          // workgroup size, set by the host
override BIAS: f32 = 0.0;       // added to every result
override DOUBLE_X: bool = false;

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<uniform> params: Params;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i >= params.n) {
        return;
    }
    var xv = x[i];
    if (DOUBLE_X) {
        xv = xv * 2.0;
    }
    let p = params.alpha * xv;
    y[i] = (p + y[i]) + (params.offset + BIAS);
}
"""


def main(out_path=None):
    n = 1000
    rng = np.random.default_rng(7)
    # x has at most 14 significant bits, so alpha * (2 x) is exact in f32 and the result is
    # the same whether a compiler fuses the multiply-add or not (the bits compare across adapters)
    x = (np.round(rng.standard_normal(n) * 1024) / 1024).astype(np.float32)
    y0 = rng.standard_normal(n).astype(np.float32)

    adapter = wgpu.gpu.request_adapter_sync(power_preference="high-performance")
    print("adapter:", adapter.summary)
    device = adapter.request_device_sync()

    BU = wgpu.BufferUsage
    buf_x = device.create_buffer_with_data(data=x, usage=BU.STORAGE)
    buf_y = device.create_buffer_with_data(data=y0, usage=BU.STORAGE | BU.COPY_SRC)
    params = np.zeros(4, np.uint32)
    buf_p = device.create_buffer(size=params.nbytes, usage=BU.UNIFORM | BU.COPY_DST)
    staging = device.create_buffer(size=buf_y.size, usage=BU.MAP_READ | BU.COPY_DST)

    module = device.create_shader_module(code=SHADER, label="saxpy.wgsl")
    wg = 128
    pipeline = device.create_compute_pipeline(
        layout="auto",
        compute={"module": module, "entry_point": "main",
                 "constants": {"WG": wg, "BIAS": 0.5, "DOUBLE_X": 1}},
    )
    bind_group = device.create_bind_group(
        layout=pipeline.get_bind_group_layout(0),
        entries=[
            {"binding": 0, "resource": {"buffer": buf_x, "offset": 0, "size": buf_x.size}},
            {"binding": 1, "resource": {"buffer": buf_y}},
            {"binding": 2, "resource": {"buffer": buf_p}},
        ],
    )

    results = []
    expected = y0.copy()
    for alpha, offset in ((1.5, 0.25), (-0.75, 1.0)):
        params.view(np.float32)[1] = alpha
        params.view(np.float32)[2] = offset
        params[0] = n
        device.queue.write_buffer(buf_p, 0, params)

        encoder = device.create_command_encoder()
        cpass = encoder.begin_compute_pass()
        cpass.set_pipeline(pipeline)
        cpass.set_bind_group(0, bind_group)
        cpass.dispatch_workgroups((n + wg - 1) // wg)
        cpass.end()
        encoder.copy_buffer_to_buffer(buf_y, 0, staging, 0, buf_y.size)
        device.queue.submit([encoder.finish()])

        staging.map_sync(wgpu.MapMode.READ)
        got = np.frombuffer(staging.read_mapped(), np.float32).copy()
        staging.unmap()
        results.append(got)

        p = (np.float32(alpha) * (x * np.float32(2))).astype(np.float32)
        expected = ((p + expected) + np.float32(offset + 0.5)).astype(np.float32)
        err = np.abs(got - expected).max()
        print(f"alpha={alpha} offset={offset}: max |got - numpy| = {err:.3g}")
        if not np.allclose(got, expected, rtol=1e-6, atol=1e-6):
            print("MISMATCH")
            return 1

    if out_path:
        np.savez(out_path, pass1=results[0], pass2=results[1])
    print("OK")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
