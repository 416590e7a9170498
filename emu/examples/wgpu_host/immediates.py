"""Row scaling with immediate data: each dispatch of one pass gets its row and scale through
var<immediate> (push constants), set with pass.set_immediates() between dispatches.

A plain wgpu-py host program: the 'immediates' feature and the max-immediate-size limit asked for
when requesting the device, a pipeline layout with immediate_size, set_immediates with
wgpu-py's byte offsets, the result read back with queue.read_buffer.

    python immediates.py [OUT.npz]              # on the real adapter
    python -m emu.wgpu immediates.py [OUT.npz]  # on emu's virtual GPU
"""
import sys

import numpy as np
import wgpu

SHADER = """
struct Push {
    row: u32,
    scale: f32,
    bias: vec2f,
}
var<immediate> push: Push;

@group(0) @binding(0) var<storage, read_write> m: array<f32>;

const COLS: u32 = 64u;

@compute @workgroup_size(64)
fn main(@builtin(local_invocation_id) lid: vec3<u32>) {
    let i = push.row * COLS + lid.x;
    m[i] = m[i] * push.scale + push.bias[lid.x % 2u];
}
"""


def main(out_path=None):
    rows, cols = 8, 64
    rng = np.random.default_rng(3)
    # entries with 12 significant bits and power-of-two scales: every result is exact in f32, so
    # the bits compare across adapters whether or not a compiler fuses the multiply-add
    m0 = (np.round(rng.standard_normal((rows, cols)) * 256) / 256).astype(np.float32)

    adapter = wgpu.gpu.request_adapter_sync(power_preference="high-performance")
    print("adapter:", adapter.summary)
    if "immediates" not in adapter.features:
        print("this adapter has no immediate data")
        return 1
    device = adapter.request_device_sync(required_features=["immediates"],
                                         required_limits={"max-immediate-size": 16})
    buf = device.create_buffer_with_data(data=m0, usage=wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC)
    bgl = device.create_bind_group_layout(entries=[
        {"binding": 0, "visibility": wgpu.ShaderStage.COMPUTE, "buffer": {"type": "storage"}}])
    layout = device.create_pipeline_layout(bind_group_layouts=[bgl], immediate_size=16)
    module = device.create_shader_module(code=SHADER, label="row_scale.wgsl")
    pipeline = device.create_compute_pipeline(layout=layout, compute={"module": module, "entry_point": "main"})
    bind_group = device.create_bind_group(layout=bgl, entries=[{"binding": 0, "resource": {"buffer": buf}}])

    expected = m0.copy()
    push = np.zeros(4, np.uint32)
    encoder = device.create_command_encoder()
    cpass = encoder.begin_compute_pass()
    cpass.set_pipeline(pipeline)
    cpass.set_bind_group(0, bind_group)
    for row in range(rows):
        scale, bias = 2.0 ** (row - 3), (0.5 * row, -0.25)
        push[0] = row
        push[1:].view(np.float32)[:] = (scale, *bias)
        cpass.set_immediates(0, push, 0, push.nbytes)
        if row % 2:     # a partial update: only the bias words change for odd rows
            cpass.set_immediates(8, push, 8, 8)
        cpass.dispatch_workgroups(1)
        expected[row] = expected[row] * np.float32(scale) + np.array(bias, np.float32)[np.arange(cols) % 2]
    cpass.end()
    device.queue.submit([encoder.finish()])
    got = np.frombuffer(device.queue.read_buffer(buf), np.float32).reshape(rows, cols).copy()

    err = np.abs(got - expected).max()
    print(f"{rows} dispatches, one row each: max |got - numpy| = {err:.3g}")
    if not np.array_equal(got, expected):
        print("MISMATCH")
        return 1
    if out_path:
        np.savez(out_path, m=got)
    print("OK")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
