"""ONNX Runtime's WebGPU program assembly, reimplemented from its documented behaviour: the
wgsl-template syntax (fs-eire/wgsl-template: #param, #use, #define, #include, #if/#elif/#else/
#endif, $MAIN, the indices-helper utilities) and the ShaderHelper that wraps a program's code in
its prelude (enables, workgroup_size constants, bindings, the Uniforms struct, the per-variable
aliases and index helpers, the entry point with its builtins). Nothing of ONNX Runtime is kept
here; scripts/ort_webgpu.py feeds it the templates from a fetched snapshot.
"""
from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from llama_webgpu import _truth  # noqa: E402  (C integer expressions, shared with llama.cpp's preprocessor)

# ShaderUsage bits (ORT's shader_variable.h names them; the values are its public enum's)
INDICES_ALIAS, VALUE_ALIAS, ELEMENT_ALIAS = 1, 2, 4
SHAPE_AND_STRIDE, OFFSET_TO_INDICES, INDICES_TO_OFFSET = 16, 32, 64
SET, SET_BY_INDICES, GET, GET_BY_INDICES, UNIFORM = 256, 512, 1024, 2048, 32768
DEFAULT_USAGE = INDICES_ALIAS | VALUE_ALIAS | UNIFORM

# a tensor's WGSL types by its program data type: storage (array element), value, element
TYPES = {
    "f32": ("f32", "f32", "f32"), "vec2<f32>": ("vec2<f32>", "vec2<f32>", "f32"),
    "vec4<f32>": ("vec4<f32>", "vec4<f32>", "f32"), "f16": ("f16", "f16", "f16"),
    "vec2<f16>": ("vec2<f16>", "vec2<f16>", "f16"), "vec4<f16>": ("vec4<f16>", "vec4<f16>", "f16"),
    "i32": ("i32", "i32", "i32"), "u32": ("u32", "u32", "u32"), "vec4<u32>": ("vec4<u32>", "vec4<u32>", "u32"),
    "u8x4": ("u32", "u32", "u32"), "i8x4": ("u32", "u32", "i32"),
}


def indices_type(rank: int) -> str:
    return "u32" if rank < 2 else (f"vec{rank}<u32>" if rank <= 4 else f"array<u32, {rank}>")


def element_at(var: str, idx, rank: int) -> str:
    """One component of a shape/stride/indices value: uniforms of more than 4 are packed as
    array<vec4<u32>>, a rank-1 value is the scalar itself."""
    if var.startswith("uniforms.") and rank > 4:
        return f"{var}[{idx // 4}][{idx % 4}]" if isinstance(idx, int) else f"{var}[({idx}) / 4][({idx}) % 4]"
    return f"{var}[{idx}]" if rank > 1 else var


@dataclass
class Var:
    """A program input or output (or an indices-only helper with type None)."""
    name: str
    type: str | None
    usage: int = DEFAULT_USAGE
    shape: tuple = (1,)

    @property
    def rank(self):
        return len(self.shape)

    def _names(self):
        u = self.usage & UNIFORM
        return (("uniforms." if u else "") + self.name + "_shape", ("uniforms." if u else "") + self.name + "_stride")

    def value_type(self):
        return f"{self.name}_value_t" if self.usage & VALUE_ALIAS else TYPES[self.type][1]

    def idx_type(self):
        return f"{self.name}_indices_t" if self.usage & INDICES_ALIAS else indices_type(self.rank)

    # -- the expressions the templates' utilities stand for
    def offset_to_indices(self, off):
        self.usage |= OFFSET_TO_INDICES | SHAPE_AND_STRIDE
        return off if self.rank < 2 else f"o2i_{self.name}({off})"

    def indices_to_offset(self, ind):
        self.usage |= INDICES_TO_OFFSET | SHAPE_AND_STRIDE
        return ind if self.rank < 2 else f"i2o_{self.name}({ind})"

    def get_by_offset(self, off):
        return f"{self.name}[{off}]"

    def set_by_offset(self, off, value):
        return f"{self.name}[{off}]={value};"

    def indices_get(self, var, idx):
        self.usage |= SHAPE_AND_STRIDE
        return var if self.rank < 2 else element_at(var, idx, self.rank)

    def indices_set(self, var, idx, value):
        self.usage |= SHAPE_AND_STRIDE
        return f"{var}={value};" if self.rank < 2 else f"{element_at(var, idx, self.rank)}={value};"

    def get_by_indices(self, ind):
        self.usage |= SHAPE_AND_STRIDE
        if self.rank < 2:
            return self.get_by_offset(ind)
        self.usage |= GET_BY_INDICES | INDICES_TO_OFFSET
        return f"get_{self.name}_by_indices({ind})"

    def set_by_indices(self, ind, value):
        self.usage |= SHAPE_AND_STRIDE
        if self.rank < 2:
            return self.set_by_offset(ind, value)
        self.usage |= SET_BY_INDICES | INDICES_TO_OFFSET
        return f"set_{self.name}_by_indices({ind}, {value});"

    def get(self, *ind):
        self.usage |= SHAPE_AND_STRIDE
        if len(ind) <= 1:
            return self.get_by_offset(ind[0] if ind else "0")
        self.usage |= GET | GET_BY_INDICES | INDICES_TO_OFFSET
        return f"get_{self.name}({', '.join(ind)})"

    def set(self, *args):
        self.usage |= SHAPE_AND_STRIDE
        if len(args) <= 2:
            return self.set_by_offset(*(args if len(args) == 2 else ("0", *args)))
        self.usage |= SET | SET_BY_INDICES | INDICES_TO_OFFSET
        return f"set_{self.name}({', '.join(args)});"

    def impl(self) -> str:
        """The aliases and helper functions this variable's usage asks for."""
        shape, stride = self._names()
        r, out = self.rank, []
        if self.usage & VALUE_ALIAS:
            out.append(f"alias {self.name}_value_t = {TYPES[self.type][1]};")
        if self.usage & INDICES_ALIAS:
            out.append(f"alias {self.name}_indices_t = {indices_type(r)};")
        if self.usage & ELEMENT_ALIAS:
            out.append(f"alias {self.name}_element_t = {TYPES[self.type][2]};")
        if not self.usage & UNIFORM and self.usage & SHAPE_AND_STRIDE and r > 0:
            out.append(f"const {shape} = {indices_type(r)}({','.join(map(str, self.shape))});")
            if r > 1:
                strides = [int(_prod(self.shape[i:])) for i in range(1, r)]
                out.append(f"const {stride} = {indices_type(r - 1)}({','.join(map(str, strides))});")
        it = self.idx_type()
        if self.usage & OFFSET_TO_INDICES and r >= 2:
            body = [f"fn o2i_{self.name}(offset : u32)->{it} {{", f"  var indices: {it};", "  var current = offset;"]
            for i in range(r - 1):
                s = element_at(stride, i, r - 1)
                body += [f"  indices[{i}] = current / {s};", f"  current = current % {s};"]
            out += body + [f"  indices[{r - 1}] = current;", "  return indices;", "}"]
        if self.usage & INDICES_TO_OFFSET and r >= 2:
            terms = "".join(f"indices[{i}] * {element_at(stride, i, r - 1)} + " for i in range(r - 1))
            out += [f"fn i2o_{self.name}(indices : {it})->u32 {{", f"  return {terms}indices[{r - 1}];", "}"]
        if self.type is None:
            return "".join(x + "\n" for x in out)
        vt, dims = self.value_type(), [f"d{i}" for i in range(r)]
        if self.usage & SET and r >= 2:
            out += [f"fn set_{self.name}({', '.join(d + ': u32' for d in dims)}, value: {vt}) {{",
                    f"  set_{self.name}_by_indices({', '.join(dims)}, value);", "}"]
        if self.usage & SET_BY_INDICES and r >= 2:
            out += [f"fn set_{self.name}_by_indices(indices: {it}, value: {vt}) {{",
                    f"  {self.set_by_offset(f'i2o_{self.name}(indices)', 'value')}", "}"]
        if self.usage & GET and r >= 2:
            out += [f"fn get_{self.name}({', '.join(d + ': u32' for d in dims)})->{vt} {{",
                    f"  return get_{self.name}_by_indices({', '.join(dims)});", "}"]
        if self.usage & GET_BY_INDICES and r >= 2:
            out += [f"fn get_{self.name}_by_indices(indices_fnarg: {it})->{vt} {{",
                    f"  return {self.get_by_offset(f'i2o_{self.name}(indices_fnarg)')};", "}"]
        return "".join(x + "\n" for x in out)


def _prod(xs):
    p = 1
    for x in xs:
        p *= x
    return p


@dataclass
class Program:
    """What a program's C++ side gives ShaderHelper: its variables (inputs first, then outputs,
    bound in that order), its uniforms (name, WGSL scalar type, length), workgroup size and
    dispatch. `code` is filled by apply_template."""
    inputs: list
    outputs: list
    uniforms: list
    workgroup: tuple = (64, 1, 1)
    dispatch: tuple = (1, 1, 1)
    features: tuple = ("subgroups",)
    additional: str = ""
    body: str = ""
    indices: list = field(default_factory=list)

    def source(self) -> str:
        """ShaderHelper's GenerateSourceCode: the program's WGSL as the device receives it."""
        vs = self.inputs + self.outputs
        out = []
        if any(TYPES[v.type][2] == "f16" for v in vs):
            out.append("enable f16;")
        if "subgroups" in self.features:
            out.append("enable subgroups;")
        if "subgroup_matrix" in self.features:
            # the matrix builtins sit in loops bounded by local_idx / 32 (one split-K subgroup
            # each): Tint's default would refuse them, so the program turns that check off
            out += ["enable chromium_experimental_subgroup_matrix;",
                    "diagnostic(off, chromium.subgroup_matrix_uniformity);"]
        wx, wy, wz = self.workgroup
        out += [f"const workgroup_size_x: u32 = {wx};", f"const workgroup_size_y: u32 = {wy};",
                f"const workgroup_size_z: u32 = {wz};"]
        for i, v in enumerate(self.inputs):
            out.append(f"@group(0) @binding({i}) var<storage, read> {v.name}: array<{TYPES[v.type][0]}>;")
        for i, v in enumerate(self.outputs, len(self.inputs)):
            out.append(f"@group(0) @binding({i}) var<storage, read_write> {v.name}: array<{TYPES[v.type][0]}>;")
        members = []
        for v in vs + self.indices:
            if v.rank > 0 and v.usage & UNIFORM and v.usage & SHAPE_AND_STRIDE:
                members += [(v.name + "_shape", "u32", v.rank), (v.name + "_stride", "u32", v.rank - 1)]
        members += list(self.uniforms)
        decl = []
        for name, t, n in members:
            if n == 0:
                continue
            if n > 4:
                ty = f"array<mat2x4<{t}>, {(n + 7) // 8}>" if t == "f16" else f"array<vec4<{t}>, {(n + 3) // 4}>"
                decl.append(("@align(16) " if t == "f16" else "") + f"{name}: {ty}")
            else:
                decl.append(f"{name}: " + (f"vec{n}<{t}>" if n > 1 else t))
        if decl:
            out.append("struct Uniforms {" + ",".join("\n  " + d for d in decl) + "\n};")
            out.append(f"@group(0) @binding({len(vs)}) var<uniform> uniforms: Uniforms;")
        out.append("")
        text = "\n".join(out) + "\n" + "".join(v.impl() for v in vs + self.indices) + "\n" + self.additional
        return text + self.main_header() + self.body + "\n}\n"

    def main_header(self) -> str:
        one_d = self.dispatch[1] == 1 and self.dispatch[2] == 1
        args = ["@builtin(global_invocation_id) global_id : vec3<u32>", "@builtin(workgroup_id) workgroup_id : vec3<u32>",
                "@builtin(local_invocation_index) local_idx : u32", "@builtin(local_invocation_id) local_id : vec3<u32>"]
        if "subgroups" in self.features:
            args += ["@builtin(subgroup_invocation_id) sg_id : u32", "@builtin(subgroup_size) sg_size : u32"]
        if not one_d:
            args.append("@builtin(num_workgroups) num_workgroups : vec3<u32>")
        head = ("@compute @workgroup_size(workgroup_size_x, workgroup_size_y, workgroup_size_z)\n"
                "fn main(" + ",\n        ".join(args) + ") {\n")
        if one_d:
            return head + "  let global_idx = global_id.x;\n  let workgroup_idx = workgroup_id.x;\n"
        return head + ("  let workgroup_idx = workgroup_id.z * num_workgroups[0] * num_workgroups[1] + "
                       "workgroup_id.y * num_workgroups[0] + workgroup_id.x;\n"
                       "  let global_idx = workgroup_idx * (workgroup_size_x * workgroup_size_y * workgroup_size_z) "
                       "+ local_idx;\n")


class TemplateError(Exception):
    pass


def _strip_comments(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def _args(text: str, start: int):
    """The comma-separated arguments of the call whose '(' is at text[start]; returns them and
    the index after the ')'."""
    depth, cur, args, i = 0, [], [], start
    while i < len(text):
        c = text[i]
        if c in "([":
            depth += 1
            if depth > 1:
                cur.append(c)
        elif c in ")]":
            depth -= 1
            if depth == 0:
                args.append("".join(cur).strip())
                return [a for a in args if a != ""] if args != [""] else [], i + 1
            cur.append(c)
        elif c == "," and depth == 1:
            args.append("".join(cur).strip())
            cur = []
        else:
            cur.append(c)
        i += 1
    raise TemplateError("unbalanced parentheses in a utility call")


_METHODS = {"offsetToIndices": "offset_to_indices", "indicesToOffset": "indices_to_offset",
            "getByOffset": "get_by_offset", "setByOffset": "set_by_offset", "getByIndices": "get_by_indices",
            "setByIndices": "set_by_indices", "indicesGet": "indices_get", "indicesSet": "indices_set",
            "get": "get", "set": "set"}


def _utilities(text: str, variables: dict) -> str:
    """Expand `v.method(...)`, `v.rank`, `v.numComponents`, getElementAt(...) and
    guardAgainstOutOfBoundsWorkgroupSizes(...) the way the generated C++ does."""
    names = "|".join(map(re.escape, variables)) or r"(?!)"
    pat = re.compile(rf"\b(?:({names})\s*\.\s*(\w+)|(getElementAt|guardAgainstOutOfBoundsWorkgroupSizes))\b")
    out, pos = [], 0
    while True:
        m = pat.search(text, pos)
        if not m:
            return "".join(out) + text[pos:]
        out.append(text[pos:m.start()])
        var, meth, fn = m.groups()
        rest = m.end()
        if var and meth in ("rank", "numComponents"):
            v = variables[var]
            out.append(str(v.rank if meth == "rank" else _components(v)))
            pos = rest
            continue
        paren = re.match(r"\s*\(", text[rest:])
        if not paren or (var and meth not in _METHODS):
            out.append(m.group(0))
            pos = rest
            continue
        args, pos = _args(text, rest + paren.end() - 1)
        args = [_utilities(a, variables) for a in args]
        if fn == "getElementAt":
            out.append(element_at(args[0], int(args[1]) if args[1].isdigit() else args[1], int(eval(args[2]))))
        elif fn:
            out.append(f"  if (global_idx >= {args[0]}) {{ return; }}\n")
        else:
            out.append(getattr(variables[var], _METHODS[meth])(*args))


def _components(v: Var) -> int:
    t = TYPES[v.type][0]
    return int(t[3]) if t.startswith("vec") else 1


def apply_template(prog: Program, path: Path, params: dict, variables: dict, root: Path | None = None) -> Program:
    """WGSL_TEMPLATE_APPLY: the template at `path` with its #params given (ints; bools as 0/1)
    and its variables bound to the program's; the text outside $MAIN goes to the additional
    implementation, $MAIN's body to the entry point."""
    root = root or path.parent
    text = _strip_comments(_include(path.read_text(), root, ()))
    defines, declared, lines, stack = {}, set(), [], []
    params = {k: int(v) for k, v in params.items()}

    def cond(expr):
        expr = re.sub(r"\b(\w+)\s*\.\s*(rank|numComponents)\b",
                      lambda m: str(variables[m.group(1)].rank if m.group(2) == "rank" else _components(variables[m.group(1)])),
                      expr)
        return _truth(expr, {**{k: str(v) for k, v in defines.items()}, **{k: str(v) for k, v in params.items()}})

    for n, line in enumerate(text.split("\n"), 1):
        s = line.strip()
        word = re.match(r"#(\w+)", s)
        word = word.group(1) if word else ""
        rest = s[1 + len(word):].strip()
        active = all(st[1] for st in stack)
        if word == "if":
            v = active and cond(rest)
            stack.append([active, v, v])
        elif word == "elif":
            parent, _, taken = stack.pop()
            v = parent and not taken and cond(rest)
            stack.append([parent, v, taken or v])
        elif word == "else":
            parent, _, taken = stack.pop()
            stack.append([parent, parent and not taken, True])
        elif word == "endif":
            stack.pop()
        elif not active:
            continue
        elif word == "define":
            name, _, value = rest.partition(" ")
            defines[name] = value.strip()
        elif word == "param":
            declared.update(rest.split())
        elif word == "use":
            pass                                   # the generator's import list; nothing to emit
        elif word:
            raise TemplateError(f"{path.name}:{n}: unknown directive #{word}")
        else:
            lines.append(line)
    missing = declared - set(params)
    if missing:
        raise TemplateError(f"{path.name}: parameters not given: {', '.join(sorted(missing))}")
    body = "\n".join(lines)
    for name, value in {**defines, **params}.items():
        body = re.sub(rf"\b{re.escape(name)}\b", str(value), body)
    body = _utilities(body, variables)
    m = re.search(r"(?<![A-Za-z0-9_])\$MAIN\s*\{", body)
    if not m:
        prog.additional += body
        return prog
    depth, i = 1, m.end()
    while depth:
        depth += {"{": 1, "}": -1}.get(body[i], 0)
        i += 1
    prog.additional += body[:m.start()] + body[i:]
    prog.body += body[m.end():i - 1]
    return prog


def _include(text: str, root: Path, seen) -> str:
    def one(m):
        p = root / m.group(1)
        if p in seen:
            raise TemplateError(f"circular #include of {m.group(1)}")
        return _include(p.read_text(), root, (*seen, p))
    return re.sub(r'(?m)^\s*#include\s+"([^"]+)"\s*$', one, text)
