"""``wgpu.utils.compute.compute_with_buffers`` for the stand-in modules (emu/wgpu/_standin.py):
the one-call helper of wgpu-py's utils, on emu's adapter. Inputs are bound read-only unless they
are outputs too; outputs come back as memoryviews cast to (shape, format), or as the ctypes array
type given; n defaults to the length of the first output."""
from __future__ import annotations

import ctypes

_SIZES = {"b": 1, "B": 1, "h": 2, "H": 2, "e": 2, "i": 4, "I": 4, "f": 4, "l": 4, "L": 4,
          "q": 8, "Q": 8, "d": 8}


def _output(key, descr) -> dict:
    if isinstance(descr, str) and "x" in descr:
        descr = tuple(descr.split("x"))
    if isinstance(descr, int) and not isinstance(descr, bool):
        return {"length": descr, "nbytes": descr, "format": "B", "shape": (descr,)}
    if isinstance(descr, tuple) and descr:
        fmt = descr[-1]
        if fmt not in _SIZES:
            raise ValueError(f"Invalid format for output array {key}: {fmt}")
        shape = tuple(int(i) for i in descr[:-1])
        if not shape or any(i <= 0 for i in shape):
            raise ValueError(f"Invalid shape for output array {key}: {shape}")
        nbytes = _SIZES[fmt]
        for i in shape:
            nbytes *= i
        return {"length": shape[0], "nbytes": nbytes, "format": fmt, "shape": shape}
    if isinstance(descr, type) and issubclass(descr, ctypes.Array):
        return {"length": descr._length_, "nbytes": ctypes.sizeof(descr), "ctypes": descr}
    raise TypeError(f"Invalid value for output array description: {descr}")


def _grid(n, first_length) -> tuple[int, int, int]:
    if n is None:
        n = (first_length, 1, 1)
    elif isinstance(n, int) and not isinstance(n, bool):
        n = (n, 1, 1)
    elif not (isinstance(n, tuple) and len(n) == 3):
        raise TypeError("compute_with_buffers: n must be None, an int, or 3-int tuple.")
    n = tuple(int(x) for x in n)
    if min(n) < 1:
        raise ValueError("compute_with_buffers: n value(s) must be >= 1.")
    return n


def compute_with_buffers(wgpu, input_arrays, output_arrays, shader, constants=None, n=None) -> dict:
    """Run `shader` ('main') once with storage buffers at @group(0) @binding(key); see the module."""
    if not isinstance(input_arrays, dict):
        raise TypeError("input_arrays must be a dict.")
    for key, array in input_arrays.items():
        if not isinstance(key, int):
            raise TypeError("keys of input_arrays must be int.")
        memoryview(array)           # the buffer protocol, or a TypeError here
    if not isinstance(output_arrays, dict) or not output_arrays:
        raise TypeError("output_arrays must be a nonempty dict.")
    if not all(isinstance(key, int) for key in output_arrays):
        raise TypeError("keys of output_arrays must be int.")
    outs = {key: _output(key, d) for key, d in output_arrays.items()}
    grid = _grid(n, next(iter(outs.values()))["length"])
    device = wgpu.utils.get_default_device()
    module = device.create_shader_module(code=shader)
    U = wgpu.BufferUsage
    buffers = {key: device.create_buffer_with_data(data=a, usage=U.STORAGE | (U.COPY_SRC if key in outs else 0))
               for key, a in input_arrays.items()}
    buffers.update({key: device.create_buffer(size=o["nbytes"], usage=U.STORAGE | U.COPY_SRC)
                    for key, o in outs.items() if key not in buffers})
    kinds = (wgpu.BufferBindingType.read_only_storage, wgpu.BufferBindingType.storage)
    layout = device.create_bind_group_layout(entries=[
        {"binding": key, "visibility": wgpu.ShaderStage.COMPUTE, "buffer": {"type": kinds[key in outs]}}
        for key in buffers])
    group = device.create_bind_group(layout=layout, entries=[
        {"binding": key, "resource": {"buffer": b, "offset": 0, "size": b.size}} for key, b in buffers.items()])
    stage = {"module": module, "entry_point": "main"}
    if constants:
        stage["constants"] = constants
    pipeline = device.create_compute_pipeline(
        layout=device.create_pipeline_layout(bind_group_layouts=[layout]), compute=stage)
    encoder = device.create_command_encoder()
    cpass = encoder.begin_compute_pass()
    cpass.set_pipeline(pipeline)
    cpass.set_bind_group(0, group)
    cpass.dispatch_workgroups(*grid)
    cpass.end()
    device.queue.submit([encoder.finish()])
    result = {}
    for key, o in outs.items():
        m = device.queue.read_buffer(buffers[key])
        result[key] = o["ctypes"].from_buffer(m) if "ctypes" in o else m.cast(o["format"], shape=o["shape"])
    return result
