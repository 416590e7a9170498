"""Host arrays from .npy files, checked before anything is allocated: a file that is not a .npy
array, or whose header claims more data than the file holds, is one message, not a traceback or
an attempt to allocate what the header says."""
from __future__ import annotations

import warnings

import numpy as np

from ..errors import EmuError, HostError


def load_npy(path: str, what: str) -> tuple[np.ndarray, list[EmuError]]:
    """The array in `path` and warnings about how its bytes will be bound. `what` names the
    argument in messages (e.g. "--buffer 0:1")."""
    from numpy.lib import format as npf

    def bad(why: str):
        return HostError(f"{what}: cannot load '{path}' as a .npy array ({why})",
                         hint="save the input with numpy.save")
    try:
        f = open(path, "rb")
    except OSError as e:
        raise bad(e.strerror or str(e)) from None
    with f:
        try:
            version = npf.read_magic(f)
            with warnings.catch_warnings():     # numpy's note on Python 2 headers is not the user's concern
                warnings.simplefilter("ignore", UserWarning)
                if version == (1, 0):
                    shape, fortran, dtype = npf.read_array_header_1_0(f)
                elif version in ((2, 0), (3, 0)):
                    shape, fortran, dtype = npf.read_array_header_2_0(f)   # 3.0 differs in encoding only
                else:
                    raise ValueError(f"unknown .npy format version {version}")
        except Exception as e:          # numpy's header parser on untrusted bytes: any failure means malformed
            raise bad(f"not a .npy file: {str(e).splitlines()[0][:200] if str(e) else type(e).__name__}") \
                from None
        if dtype.hasobject:
            raise bad("it holds Python objects, not numbers")
        if not isinstance(shape, tuple) or not all(isinstance(n, int) and n >= 0 for n in shape):
            raise bad(f"its header gives the shape {shape!r}: sizes are whole numbers, 0 or more")
        if dtype.subdtype is not None:      # a header's '6i8': six i8 an element, as numpy.load reads it
            dtype, sub = dtype.subdtype
            shape = tuple(shape) + sub
        count = 1
        for n in shape:
            count *= int(n)
        need = count * dtype.itemsize
        have = _remaining(f)
        if need > have:
            raise bad(f"its header says {shape} of {dtype} ({need} bytes) but the file holds {have} "
                      f"bytes of data")
        data = np.frombuffer(f.read(need), dtype=dtype, count=count) if need else np.zeros(0, dtype)
        arr = data.reshape(shape, order="F" if fortran else "C")
    notes = []
    if fortran and arr.ndim > 1:
        notes.append(EmuError(f"{what}: '{path}' is stored in Fortran (column-major) order; emu binds "
                                 f"it row-major (C order), as numpy.ascontiguousarray would lay it out",
                                 severity="warning", hint="save numpy.ascontiguousarray(a) to say so"))
    if dtype.names is not None:
        notes.append(EmuError(f"{what}: '{path}' holds a structured array ({dtype}); emu binds its raw "
                                 f"bytes as numpy packs them ({dtype.itemsize} bytes a record), whatever "
                                 f"the shader's struct layout is", severity="warning",
                                 hint="check the field offsets against WGSL's layout rules"))
    return arr, notes


def _remaining(f) -> int:
    here = f.tell()
    f.seek(0, 2)
    end = f.tell()
    f.seek(here)
    return end - here


def reinterpreted(dtype: np.dtype, elem_name: str) -> bool:
    """Whether binding host data of `dtype` to elements of `elem_name` reinterprets numbers (f64
    data bound to array<u32>) rather than passing bytes: uint8 data is bytes, and integers of any
    width packed into i32/u32 words are WGSL's way of holding 8- and 16-bit values. One rule for
    the Python API's DtypeWarning and the CLI's --buffer warning."""
    from ..numerics.dtypes import NP
    want = NP.get(elem_name)
    if want is None or dtype.names is not None or dtype == np.uint8 or dtype == want:
        return False
    return not (elem_name in ("i32", "u32") and (dtype.itemsize < 4 or dtype.kind in "iu"))


def type_mismatch(arr: np.ndarray, elem_name: str | None, what: str, var: str):
    """A warning when a host array's numbers are not the kind the binding declares (f64 data bound
    to array<u32>: the bytes are reinterpreted, not converted), else None."""
    if elem_name is None or not reinterpreted(arr.dtype, elem_name):
        return None
    return EmuError(f"{what}: the array holds {arr.dtype} but '{var}' is declared with {elem_name} "
                    f"elements; its bytes are bound as they are, not converted",
                    severity="warning", hint=f"convert it first, e.g. a.astype(numpy.{_np_name(elem_name)})")


def _np_name(elem_name: str) -> str:
    return {"f32": "float32", "f16": "float16", "i32": "int32", "u32": "uint32"}.get(elem_name, elem_name)
