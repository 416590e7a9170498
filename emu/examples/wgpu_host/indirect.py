"""A histogram with atomics, then a dispatch whose size the GPU computed (dispatch_workgroups_indirect).

A plain wgpu-py host program, three compute pipelines (layout="auto"):
1. histogram: atomicAdd into 16 bins;
2. plan (one invocation, an override picks the bin): writes the indirect arguments
   (x, y, z) = (ceil(count / 32), 1, 1) and the count into a STORAGE|INDIRECT buffer;
3. fill, dispatched indirectly from that buffer (which it also reads as read-only storage):
   writes one value per counted element, using @builtin(num_workgroups).

    python indirect.py [OUT.npz]              # on the real adapter
    python -m emu.wgpu indirect.py [OUT.npz]  # on emu's virtual GPU
"""
import sys

import numpy as np
import wgpu

HISTOGRAM = """
@group(0) @binding(0) var<storage, read> values: array<u32>;
@group(0) @binding(1) var<storage, read_write> hist: array<atomic<u32>, 16>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x >= arrayLength(&values)) {
        return;
    }
    atomicAdd(&hist[values[gid.x] % 16u], 1u);
}
"""

PLAN = """
struct Args { x: u32, y: u32, z: u32, count: u32 }
override BIN: u32 = 0u;
@group(0) @binding(0) var<storage, read> hist: array<u32, 16>;
@group(0) @binding(1) var<storage, read_write> args: Args;

@compute @workgroup_size(1)
fn main() {
    let c = hist[BIN];
    args = Args((c + 31u) / 32u, 1u, 1u, c);
}
"""

FILL = """
struct Args { x: u32, y: u32, z: u32, count: u32 }
@group(0) @binding(0) var<storage, read> args: Args;
@group(0) @binding(1) var<storage, read_write> out: array<u32>;

@compute @workgroup_size(32)
fn main(@builtin(global_invocation_id) gid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>) {
    if (gid.x >= args.count) {
        return;
    }
    out[gid.x] = gid.x * 3u + nwg.x * 1000u;
}
"""


def main(out_path=None):
    rng = np.random.default_rng(3)
    values = rng.integers(0, 1 << 20, size=5000, dtype=np.uint32)
    which_bin = 5

    adapter = wgpu.gpu.request_adapter_sync(power_preference="high-performance")
    print("adapter:", adapter.summary)
    device = adapter.request_device_sync()
    BU = wgpu.BufferUsage

    buf_values = device.create_buffer_with_data(data=values, usage=BU.STORAGE)
    buf_hist = device.create_buffer(size=16 * 4, usage=BU.STORAGE | BU.COPY_SRC | BU.COPY_DST)
    buf_args = device.create_buffer(size=16, usage=BU.STORAGE | BU.INDIRECT | BU.COPY_SRC)
    buf_out = device.create_buffer(size=values.nbytes, usage=BU.STORAGE | BU.COPY_SRC | BU.COPY_DST)

    def pipeline(code, **constants):
        module = device.create_shader_module(code=code)
        compute = {"module": module, "entry_point": "main"}
        if constants:
            compute["constants"] = constants
        return device.create_compute_pipeline(layout="auto", compute=compute)

    p_hist, p_plan, p_fill = pipeline(HISTOGRAM), pipeline(PLAN, BIN=which_bin), pipeline(FILL)

    def bind(p, *buffers):
        return device.create_bind_group(layout=p.get_bind_group_layout(0), entries=[
            {"binding": i, "resource": {"buffer": b, "offset": 0, "size": b.size}}
            for i, b in enumerate(buffers)])

    bg_hist = bind(p_hist, buf_values, buf_hist)
    bg_plan = bind(p_plan, buf_hist, buf_args)
    bg_fill = bind(p_fill, buf_args, buf_out)

    encoder = device.create_command_encoder()
    encoder.clear_buffer(buf_hist)
    encoder.clear_buffer(buf_out)
    cpass = encoder.begin_compute_pass()
    cpass.set_pipeline(p_hist)
    cpass.set_bind_group(0, bg_hist)
    cpass.dispatch_workgroups((values.size + 63) // 64)
    cpass.set_pipeline(p_plan)
    cpass.set_bind_group(0, bg_plan)
    cpass.dispatch_workgroups(1)
    cpass.end()
    cpass = encoder.begin_compute_pass()
    cpass.set_pipeline(p_fill)
    cpass.set_bind_group(0, bg_fill)
    cpass.dispatch_workgroups_indirect(buf_args, 0)
    cpass.end()
    device.queue.submit([encoder.finish()])

    hist = np.frombuffer(device.queue.read_buffer(buf_hist), np.uint32).copy()
    args = np.frombuffer(device.queue.read_buffer(buf_args), np.uint32).copy()
    out = np.frombuffer(device.queue.read_buffer(buf_out), np.uint32).copy()

    want_hist = np.bincount(values % 16, minlength=16).astype(np.uint32)
    count = int(want_hist[which_bin])
    groups = (count + 31) // 32
    want_out = np.zeros(values.size, np.uint32)
    want_out[:count] = np.arange(count, dtype=np.uint32) * 3 + groups * 1000
    ok = (np.array_equal(hist, want_hist) and list(args) == [groups, 1, 1, count]
          and np.array_equal(out, want_out))
    print(f"bin {which_bin}: {count} values -> indirect dispatch of {args[:3].tolist()} workgroups")
    if not ok:
        print("MISMATCH", hist, args)
        return 1
    if out_path:
        np.savez(out_path, hist=hist, args=args, out=out)
    print("OK")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
