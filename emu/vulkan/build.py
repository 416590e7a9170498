"""Build the ICD's C shim with cffi's embedding mode, and write the loader's manifest.

The shim is the smallest C the Vulkan loader needs: the three exported vk_icd* functions and one
C entry point per Vulkan command (cffi's extern "Python" trampolines), all of them calling into
emu/vulkan/icd.py in the process's Python interpreter (the host's own one if it is a Python
program, else one the shim starts). It needs a C compiler (gcc or cc) and Python's headers (the
python3-dev package, or a Python built with them, as pyenv's are), and a Python built as a shared
library (--enable-shared: libpython3.X.so), which the shim links to.

    emu vulkan-icd              builds it if needed and prints the manifest's path
    VK_DRIVER_FILES=$(emu vulkan-icd) vulkaninfo

The build is cached per user (EMU_VULKAN_ICD_DIR, else ~/.cache/emu/vulkan-icd), in a folder
named by emu's version, the Python and a hash of the sources, so a change to any of them builds
anew."""
from __future__ import annotations

import hashlib
import json
import os
import sys
import sysconfig
from pathlib import Path

from ..errors import HostError
from ..startup import ICD_SHIM
from ..version import __version__

HERE = Path(__file__).resolve().parent
MODULE = ICD_SHIM               # the shim's module (emu.startup knows it loaded)
LIB_NAME = f"lib{MODULE}.so"
INTERFACE_VERSION = 7
ICD_API = "1.3.0"

EXPORTED = """
VkResult vk_icdNegotiateLoaderICDInterfaceVersion(uint32_t* pSupportedVersion);
PFN_vkVoidFunction vk_icdGetInstanceProcAddr(VkInstance instance, const char* pName);
PFN_vkVoidFunction vk_icdGetPhysicalDeviceProcAddr(VkInstance instance, const char* pName);
"""

# Runs once when the loader first calls into the library (or at cffi's first callback). The
# recorded paths let a host that is not Python find emu and its dependencies.
INIT = r"""
import sys
from {module} import ffi, lib
_paths = {paths!r}
if not lib.emu_host_had_python:
    import site                       # the shim set sys.path; add what the .pth files there say
    for _p in _paths['site']:
        site.addsitedir(_p)
else:
    for _p in _paths['path']:
        if _p not in sys.path:
            sys.path.append(_p)
try:
    from emu.vulkan import driver
    driver.install(ffi, lib)
except BaseException as _e:
    import traceback
    sys.stderr.write("emu ICD: could not start emu's Python side (%s: %s); the device is not available\n"
                     % (type(_e).__name__, _e))
    if __import__('os').environ.get('EMU_VK_DEBUG'):
        traceback.print_exc()
"""

# The shim's own C: keep the library loaded once loaded (the loader may dlclose it, but the
# interpreter keeps pointers into it); make libpython's symbols global so that the extension
# modules the interpreter loads (numpy...) resolve them although the loader opened us with
# RTLD_LOCAL; and where the host is not a Python program, start Python with the search path of
# the Python that built the shim (its venv first, so that its packages, not the base
# installation's, are imported), releasing the GIL for whichever thread calls first.
C_SOURCE = r"""
#include <dlfcn.h>
#include <stdlib.h>
int emu_host_had_python = 0;
void emu_icd_at_exit(void);
static void emu_icd_exit(void) {{
    if (Py_IsInitialized())       /* a host that is not Python never finalizes the interpreter */
        emu_icd_at_exit();
}}
static const char *emu_search_path[] = {{{paths}, NULL}};
__attribute__((constructor)) static void emu_icd_start(void) {{
    Dl_info info;
    if (dladdr((void *)&emu_icd_start, &info) && info.dli_fname)
        dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
    dlopen("{libpython}", RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD);
    emu_host_had_python = Py_IsInitialized();
    if (emu_host_had_python)
        return;
    atexit(emu_icd_exit);
    PyConfig config;
    PyConfig_InitPythonConfig(&config);
    config.install_signal_handlers = 0;
    config.parse_argv = 0;
    config.site_import = 0;
    config.module_search_paths_set = 1;
    for (const char **p = emu_search_path; *p; p++) {{
        wchar_t *w = Py_DecodeLocale(*p, NULL);
        if (w) {{ PyWideStringList_Append(&config.module_search_paths, w); PyMem_RawFree(w); }}
    }}
    PyStatus st = Py_InitializeFromConfig(&config);
    PyConfig_Clear(&config);
    if (PyStatus_Exception(st)) {{
        fprintf(stderr, "emu ICD: could not start Python: %s\n", st.err_msg ? st.err_msg : "?");
        return;
    }}
    PyEval_SaveThread();
}}
"""


def _sources() -> dict[str, str]:
    from . import vk_registry
    header = (HERE / "vk_types.h").read_text()
    externs = []
    for name, (ret, params) in vk_registry.COMMANDS.items():
        args = ", ".join(p[0] for p in params) or "void"
        externs.append(f'extern "Python" {ret} emu_{name}({args});')
    return {"header": header, "externs": "\n".join(externs)}


def _libpython() -> Path:
    libdir, so = sysconfig.get_config_var("LIBDIR"), sysconfig.get_config_var("INSTSONAME")
    if not sysconfig.get_config_var("Py_ENABLE_SHARED") or not libdir or not so:
        raise HostError(f"the Vulkan ICD needs a Python built as a shared library (libpython3.X.so); "
                        f"{sys.executable} is not", hint="use a Python built with --enable-shared (Debian's "
                        "python3, pyenv with PYTHON_CONFIGURE_OPTS=--enable-shared)")
    return Path(libdir) / so


def build_dir() -> Path:
    base = Path(os.environ.get("EMU_VULKAN_ICD_DIR") or Path.home() / ".cache" / "emu" / "vulkan-icd")
    h = hashlib.sha256()
    for f in ("build.py", "vk_types.h", "vk_registry.py"):
        h.update((HERE / f).read_bytes())
    h.update(sys.executable.encode())
    h.update(str(HERE).encode())         # the shim records where emu is: one build per checkout
    tag = f"{__version__}-py{sys.version_info[0]}{sys.version_info[1]}-{h.hexdigest()[:12]}"
    return base / tag


def _recorded_paths() -> dict:
    import site
    emu_root = str(HERE.parents[1])
    path = [emu_root] + [p for p in sys.path if p and Path(p).is_dir() and p != os.getcwd() and p != emu_root]
    sites = [p for p in site.getsitepackages() + [site.getusersitepackages()] if Path(p).is_dir()]
    return {"path": path, "site": sites}


def build(out: Path | None = None, quiet: bool = True) -> Path:
    """Compile the shim into `out` (default build_dir()) and write the manifest; its path."""
    out = out or build_dir()
    manifest = out / "emu_icd.json"
    if manifest.is_file() and (out / LIB_NAME).is_file():
        return manifest
    import shutil
    if not (shutil.which("gcc") or shutil.which("cc")):
        raise HostError("building emu's Vulkan ICD needs a C compiler (gcc or cc) and Python's headers",
                        hint="install gcc and python3-dev (Debian: apt install gcc python3-dev)")
    import cffi
    libpython = _libpython()
    src = _sources()
    ffi = cffi.FFI()
    ffi.cdef(src["header"])
    ffi.embedding_api(EXPORTED)
    ffi.cdef(src["externs"])
    ffi.cdef('extern int emu_host_had_python;\nextern "Python+C" void emu_icd_at_exit(void);')
    paths = _recorded_paths()
    c_paths = ", ".join(json.dumps(p) for p in paths["path"])
    ffi.set_source(MODULE, src["header"] + C_SOURCE.format(libpython=libpython, paths=c_paths),
                   extra_link_args=[f"-Wl,-rpath,{libpython.parent}", "-ldl"],
                   extra_compile_args=["-O1", "-w"])
    ffi.embedding_init_code(INIT.format(module=MODULE, paths=paths))
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(str(out) + f".tmp{os.getpid()}")
    tmp.mkdir(parents=True, exist_ok=True)
    import contextlib
    import io
    log = io.StringIO()
    try:
        with contextlib.redirect_stdout(log) if quiet else contextlib.nullcontext():
            lib = ffi.compile(tmpdir=str(tmp), target=LIB_NAME)
    except Exception as e:
        raise HostError(f"building emu's Vulkan ICD failed: {e}",
                        hint="it needs gcc and Python's headers (python3-dev); the build is in " + str(tmp)) from None
    shutil.copy(lib, tmp / "final.so")
    (tmp / "emu_icd.json").write_text(json.dumps({
        "file_format_version": "1.0.1",
        "ICD": {"library_path": str(out / LIB_NAME), "api_version": ICD_API, "is_portability_driver": False},
    }, indent=2) + "\n")
    out.mkdir(parents=True, exist_ok=True)
    os.replace(tmp / "final.so", out / LIB_NAME)
    os.replace(tmp / "emu_icd.json", manifest)
    shutil.rmtree(tmp, ignore_errors=True)
    return manifest
