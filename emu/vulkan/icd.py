"""The ICD's Python side: the loader's entry points, handles, and the error rule.

The C shim (emu/vulkan/build.py) gives each Vulkan command a C entry point that calls the
function registered here under the command's name with @command. Every entry point runs inside
`_guarded`: invalid use raises VkError (one message naming the command and the VUID, then the
error code goes back to the program); anything else is emu's own fault, reported the same way as
VK_ERROR_UNKNOWN (or VK_ERROR_DEVICE_LOST from a queue), never a crash of the host program.

Environment: EMU_VK_TRACE=1 prints each command as it is called (to stderr);
EMU_VK_DEBUG=1 adds Python tracebacks to internal errors."""
from __future__ import annotations

import os
import sys
import threading

from . import vk_registry as reg

VK: dict[str, int] = {n: v for values in reg.ENUMS.values() for n, v in values}
VK.update(reg.CONSTANTS)
STYPE_NAME = {VK[v]: s for s, v in reg.STYPES.items() if v in VK}      # sType value -> struct name
ICD_LOADER_MAGIC = 0x01CDC0DE
INTERFACE_VERSION = 7

ffi = lib = None
COMMANDS: dict = {}               # name -> the Python function implementing it
ON_DESTROY_INSTANCE: list = []    # callables run at each vkDestroyInstance (the profile's dump)
AT_EXIT: list = []                # callables run when a host that is not Python exits
_LOCK = threading.RLock()         # one command at a time: the device's state is Python's
_TRACE = bool(os.environ.get("EMU_VK_TRACE"))


class VkError(Exception):
    """Invalid use of the API: report `message` (naming `vuid`) and return `code`."""

    def __init__(self, message: str, code: str = "VK_ERROR_UNKNOWN", vuid: str | None = None):
        super().__init__(message)
        self.code, self.vuid = code, vuid


def report(call: str, message: str, vuid: str | None = None, code: str | None = None) -> None:
    where = f" [{vuid}]" if vuid else ""
    tail = f" -> {code}" if code else ""
    sys.stderr.write(f"emu vulkan: {call}{where}: {message}{tail}\n")
    sys.stderr.flush()


def command(fn):
    COMMANDS[fn.__name__] = fn
    return fn


def _guarded(name: str, fn, ret: str):
    failing = VK["VK_ERROR_DEVICE_LOST"] if name.startswith("vkQueue") else VK["VK_ERROR_UNKNOWN"]

    def entry(*args):
        with _LOCK:
            if _TRACE:
                sys.stderr.write(f"emu vulkan: {name}\n")
            try:
                out = fn(*args)
                return (VK["VK_SUCCESS"] if out is None else out) if ret == "VkResult" else out
            except VkError as e:
                code = e.code if e.code in VK else "VK_ERROR_UNKNOWN"
                report(name, str(e), e.vuid, code if ret == "VkResult" else None)
                if ret == "VkResult":
                    return VK[code]
                return _zero(ret)
            except BaseException as e:    # emu's bug: say so, keep the program alive
                from ..errors import EmuError
                if isinstance(e, EmuError):
                    report(name, e.format() if hasattr(e, "format") else str(e))
                else:
                    report(name, f"internal error: {type(e).__name__}: {e}")
                if os.environ.get("EMU_VK_DEBUG"):
                    import traceback
                    traceback.print_exc()
                return failing if ret == "VkResult" else _zero(ret)
    return entry


def _zero(ret: str):
    if ret == "void":
        return None
    if ret in ("PFN_vkVoidFunction",) or ret.startswith("Vk") and ret in reg.DISPATCHABLE:
        return ffi.NULL
    return 0


def connect(ffi_, lib_) -> None:
    """Set the shim's cffi objects (before the modules of commands are imported: they take them
    by name), then connect every implemented command (emu/vulkan/driver.py imports them)."""
    global ffi, lib
    ffi, lib = ffi_, lib_


def attach() -> None:
    if hasattr(lib, "emu_icd_at_exit"):       # a shim built before the exit hook has none
        ffi.def_extern(name="emu_icd_at_exit")(_at_exit)
    for name, fn in COMMANDS.items():
        ret = reg.COMMANDS[name][0]
        ffi.def_extern(name=f"emu_{name}")(_guarded(name, fn, ret))
    for export, fn in (("vk_icdNegotiateLoaderICDInterfaceVersion", _negotiate),
                       ("vk_icdGetInstanceProcAddr", _get_proc_addr),
                       ("vk_icdGetPhysicalDeviceProcAddr", _get_physical_device_proc_addr)):
        ffi.def_extern(name=export)(_guarded(export, fn, "VkResult" if "Negotiate" in export else "PFN_vkVoidFunction"))


def _at_exit() -> None:
    for fn in AT_EXIT:
        try:
            fn()
        except Exception as e:     # the host is exiting: say what failed, nothing more
            report("exit", f"{type(e).__name__}: {e}")


def _negotiate(p_version):
    if p_version[0] < 5:
        raise VkError(f"the loader offers interface version {p_version[0]}; emu's ICD needs 5 or newer",
                      "VK_ERROR_INCOMPATIBLE_DRIVER")
    p_version[0] = min(p_version[0], INTERFACE_VERSION)


_POINTERS: dict = {}


def proc_addr(name: str):
    """The C entry point of a command emu implements (or of an alias of one), else NULL."""
    p = _POINTERS.get(name)
    if p is None:
        target = reg.ALIASES.get(name, name)
        if target not in COMMANDS:
            return ffi.NULL
        p = _POINTERS[name] = ffi.cast("PFN_vkVoidFunction", getattr(lib, f"emu_{target}"))
    return p


def _get_proc_addr(instance, p_name):
    return proc_addr(ffi.string(p_name).decode())


def _get_physical_device_proc_addr(instance, p_name):
    name = ffi.string(p_name).decode()
    params = reg.COMMANDS.get(name, (None, ()))[1]
    if not params or params[0][2] != "VkPhysicalDevice":
        return ffi.NULL
    return proc_addr(name)


@command
def vkGetInstanceProcAddr(instance, p_name):
    return proc_addr(ffi.string(p_name).decode())


@command
def vkGetDeviceProcAddr(device, p_name):
    name = ffi.string(p_name).decode()
    params = reg.COMMANDS.get(reg.ALIASES.get(name, name), (None, ()))[1]
    if not params or params[0][2] not in ("VkDevice", "VkQueue", "VkCommandBuffer"):
        return ffi.NULL             # instance-level commands are not device commands
    return proc_addr(name)


# ------------------------------------------------------------------ handles
class Dispatchable:
    """A dispatchable object: C memory whose first word the loader overwrites with its dispatch
    table (ICD_LOADER_MAGIC until then), a second word naming the Python object."""
    kind = "object"

    def _make_handle(self):
        self._c = ffi.new("uintptr_t[2]")
        self._c[0] = ICD_LOADER_MAGIC
        self.address = int(ffi.cast("uintptr_t", self._c))
        _DISPATCHABLE[self.address] = self
        return self.address

    @property
    def handle(self):
        return ffi.cast(f"{self.c_type}", self._c)

    def forget(self):
        _DISPATCHABLE.pop(self.address, None)


_DISPATCHABLE: dict[int, object] = {}
_OBJECTS: dict[int, object] = {}
_NEXT = [0x1000]


def new_handle(obj) -> int:
    """A non-dispatchable handle (a 64-bit number) for `obj`."""
    _NEXT[0] += 1
    obj.handle_value = _NEXT[0]
    _OBJECTS[_NEXT[0]] = obj
    return _NEXT[0]


def drop_handle(handle: int) -> None:
    _OBJECTS.pop(int(handle), None)


def destroyer(name: str, cls, param: str) -> None:
    """Register vkDestroyX(device, handle, pAllocator) for a non-dispatchable object of `cls`:
    VK_NULL_HANDLE does nothing; any other handle must be one of `cls`."""
    def destroy(device, handle, p_alloc):
        if handle:
            get(handle, cls, name, param)
            drop_handle(handle)
    destroy.__name__ = name
    command(destroy)


def get(handle, cls, call: str, param: str, vuid: str | None = None, null_ok: bool = False):
    """The object behind a handle parameter, or VkError naming the parameter and the VUID."""
    if issubclass(cls, Dispatchable):
        key = int(ffi.cast("uintptr_t", handle))
        obj = _DISPATCHABLE.get(key)
    else:
        key = int(handle)
        obj = _OBJECTS.get(key)
    if key == 0 and null_ok:
        return None
    if not isinstance(obj, cls):
        what = "VK_NULL_HANDLE" if key == 0 else f"0x{key:x}"
        raise VkError(f"{param} ({what}) is not a valid {cls.__name__} handle",
                      vuid=vuid or f"VUID-{call}-{param}-parameter")
    return obj


# ------------------------------------------------------------------ structs
def chain(p):
    """(struct name, typed pointer) of each structure in a pNext chain."""
    p = ffi.cast("VkBaseOutStructure *", p)
    while p != ffi.NULL:
        name = STYPE_NAME.get(int(p.sType))
        if name is not None:
            yield name, ffi.cast(f"{name} *", p)
        p = p.pNext


def find(p, name: str):
    for n, s in chain(p):
        if n == name:
            return s
    return None


def put_string(field, text: str) -> None:
    raw = text.encode()[: len(field) - 1]
    ffi.memmove(field, raw + b"\0", len(raw) + 1)


def fill_array(p_count, p_items, items: list, write) -> int | None:
    """Vulkan's two-call idiom: the count alone, or up to *p_count items (VK_INCOMPLETE if cut)."""
    if p_items == ffi.NULL:
        p_count[0] = len(items)
        return None
    n = min(p_count[0], len(items))
    for i in range(n):
        write(p_items[i], items[i])
    p_count[0] = n
    return VK["VK_INCOMPLETE"] if n < len(items) else None
