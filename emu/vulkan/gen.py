"""Generate the ICD's C declarations and command table from the Vulkan registry (vk.xml).

    python -m emu.vulkan.gen [path/to/vk.xml]      (default: $EMU_VK_XML, then the usual places)

Writes, beside this file:
  vk_types.h      the C types of Vulkan 1.0-1.3 and of the extensions in EXTENSIONS (handles,
                  enums as 32-bit integers, bitmasks, structs, unions, function pointers): the cffi
                  declarations the shim is built from, and the only Vulkan header it uses
  vk_registry.py  the same selection as Python data: every command's parameters, each struct's
                  sType, the enum values and API constants, the extensions' spec versions

Nothing in them is written by hand; tests/vulkan/test_gen.py regenerates them from the same vk.xml
and compares. scripts/vk_xml.sh fetches a vk.xml new enough (Debian sid's libvulkan-dev)."""
from __future__ import annotations

import os
import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

HERE = Path(__file__).resolve().parent
API_VERSION = (1, 3)
# The extensions whose types and commands the ICD declares: instance extensions the loader or
# clients ask for, and the device extensions a profile's GPU may report (which ones it does is
# emu/vulkan/device.py's business).
EXTENSIONS = (
    "VK_KHR_get_physical_device_properties2", "VK_KHR_portability_enumeration",
    "VK_KHR_cooperative_matrix", "VK_NV_cooperative_matrix2", "VK_KHR_shader_bfloat16", "VK_EXT_shader_float8",
    "VK_EXT_pipeline_robustness", "VK_KHR_shader_subgroup_rotate", "VK_KHR_shader_float_controls2",
    "VK_KHR_shader_subgroup_uniform_control_flow", "VK_KHR_maintenance5", "VK_KHR_shader_expect_assume",
    "VK_KHR_shader_integer_dot_product", "VK_EXT_subgroup_size_control", "VK_KHR_shader_subgroup_extended_types",
    "VK_KHR_16bit_storage", "VK_KHR_8bit_storage", "VK_KHR_shader_float16_int8", "VK_KHR_vulkan_memory_model",
    "VK_KHR_timeline_semaphore", "VK_KHR_buffer_device_address", "VK_KHR_maintenance4",
    "VK_KHR_synchronization2", "VK_KHR_storage_buffer_storage_class", "VK_EXT_memory_budget",
    "VK_KHR_driver_properties", "VK_EXT_host_query_reset", "VK_KHR_uniform_buffer_standard_layout",
    "VK_KHR_device_group",
)
SEARCH = ("/usr/share/vulkan/registry/vk.xml",)


def find_vk_xml() -> Path | None:
    """$EMU_VK_XML, the copy scripts/vk_xml.sh unpacks, or the system's."""
    root = HERE.parents[1]
    for p in (os.environ.get("EMU_VK_XML"), root / ".hwtmp/vkxml/root/usr/share/vulkan/registry/vk.xml",
              Path("/work/main/.hwtmp/vkxml/root/usr/share/vulkan/registry/vk.xml"), *SEARCH):
        if p and Path(p).is_file() and _new_enough(Path(p)):
            return Path(p)
    return None


def _new_enough(path: Path) -> bool:
    text = path.read_text(errors="replace")
    return all(f'name="{e}"' in text for e in EXTENSIONS)


def _api_ok(el) -> bool:
    api = el.get("api")
    return api is None or "vulkan" in api.split(",")


def _version(name: str) -> tuple | None:
    m = re.fullmatch(r"VK_(?:[A-Z]+_)?VERSION_(\d)_(\d)", name)
    return (int(m[1]), int(m[2])) if m else None


class Registry:
    def __init__(self, path: Path):
        self.root = ET.parse(path).getroot()
        self.types = {}
        for t in self.root.find("types"):
            if t.tag != "type" or not _api_ok(t):
                continue
            tag = t.find("name") if t.find("name") is not None else t.find("proto/name")
            name = t.get("name") or (tag.text if tag is not None else None)
            if name:
                self.types[name] = t
        self.commands = {}
        for c in self.root.find("commands"):
            if not _api_ok(c):
                continue
            if c.get("alias"):
                self.commands[c.get("name")] = c
            else:
                self.commands[c.find("proto/name").text] = c
        self.enum_blocks = {e.get("name"): e for e in self.root.findall("enums")}
        self.extensions = {e.get("name"): e for e in self.root.find("extensions")}
        self.header_version = int(re.search(r"VK_HEADER_VERSION (\d+)", "".join(self.types["VK_HEADER_VERSION"].itertext()))[1])

    # ------------------------------------------------------------ selection
    def select(self):
        """The types, commands and extended enum values required by the chosen versions and
        extensions."""
        types, commands, values = set(), [], {}        # values: enum type -> [(name, value)]
        features = [f for f in self.root.findall("feature") if _api_ok(f) and _version(f.get("name"))
                    and _version(f.get("name")) <= API_VERSION]
        chosen = {f.get("name") for f in features} | set(EXTENSIONS)
        ext_meta = {}
        for block, ext_number in [(f, None) for f in features] + [(self.extensions[e], int(self.extensions[e].get("number")))
                                                                for e in EXTENSIONS]:
            for req in block.findall("require"):
                if not _api_ok(req) or not _depends_ok(req.get("depends"), chosen):
                    continue
                for el in req:
                    if el.tag == "type":
                        types.add(el.get("name"))
                    elif el.tag == "command" and el.get("name") not in commands:
                        commands.append(el.get("name"))
                    elif el.tag == "enum" and _api_ok(el):
                        if el.get("extends"):
                            v = self._ext_value(el, ext_number)
                            if v is not None:
                                values.setdefault(el.get("extends"), []).append((el.get("name"), v))
                        elif block.tag == "extension" and el.get("name").endswith("_SPEC_VERSION"):
                            ext_meta[block.get("name")] = int(el.get("value"))
        for name in commands:
            c = self._command(name)
            for p in [c.find("proto")] + c.findall("param"):
                if _api_ok(p) and p.find("type") is not None:
                    types.add(p.find("type").text)
        types = self._closure(types)
        return types, commands, values, ext_meta

    def _ext_value(self, el, ext_number):
        if el.get("alias"):
            return ("alias", el.get("alias"))
        if el.get("bitpos") is not None:
            return 1 << int(el.get("bitpos"))
        if el.get("value") is not None:
            return int(el.get("value"), 0)
        if el.get("offset") is not None:
            n = int(el.get("extnumber") or ext_number)
            v = 1000000000 + (n - 1) * 1000 + int(el.get("offset"))
            return -v if el.get("dir") == "-" else v
        return None

    def _command(self, name):
        c = self.commands[name]
        return self.commands[c.get("alias")] if c.get("alias") else c

    def _closure(self, types: set) -> set:
        todo, seen = list(types), set()
        while todo:
            n = todo.pop()
            if n in seen or n not in self.types:
                continue
            seen.add(n)
            t = self.types[n]
            if t.get("alias"):
                todo.append(t.get("alias"))
            for m in t.findall("member") + t.findall("param") + t.findall("proto"):
                if _api_ok(m) and m.find("type") is not None:
                    todo.append(m.find("type").text)
            for sub in t.findall("type"):
                todo.append(sub.text)
            if t.get("requires"):
                todo.append(t.get("requires"))
            if t.get("bitvalues"):
                todo.append(t.get("bitvalues"))
        return seen

    # ------------------------------------------------------------ C text
    def constants(self) -> dict:
        out = {}
        for e in self.enum_blocks["API Constants"].findall("enum"):
            if e.get("alias"):
                continue
            v = e.get("value")
            out[e.get("name")] = v
        return out

    def enum_values(self, name: str, extra: list) -> list:
        block = self.enum_blocks.get(name)
        out = []
        if block is not None:
            for e in block.findall("enum"):
                if not _api_ok(e):
                    continue
                if e.get("alias"):
                    out.append((e.get("name"), ("alias", e.get("alias"))))
                elif e.get("bitpos") is not None:
                    out.append((e.get("name"), 1 << int(e.get("bitpos"))))
                elif e.get("value") is not None:
                    out.append((e.get("name"), int(e.get("value"), 0)))
        out += extra
        resolved, by_name = [], {}
        for n, v in out:
            if n in by_name:
                continue
            by_name[n] = v
        for n, v in by_name.items():
            while isinstance(v, tuple):
                v = by_name.get(v[1])
            if v is not None:
                resolved.append((n, v))
        return resolved

    def c_text(self, types: set, consts: dict) -> str:
        order, done = [], set()

        def visit(n):
            if n in done or n not in types or n not in self.types:
                return
            done.add(n)
            t = self.types[n]
            cat = t.get("category")
            if t.get("alias"):
                visit(t.get("alias"))
            elif cat in ("struct", "union"):
                for m in t.findall("member"):
                    if not _api_ok(m):
                        continue
                    mt = m.find("type").text
                    tail = "".join(m.itertext())
                    if "*" not in tail or self.types.get(mt, ET.Element("x")).get("category") not in ("struct", "union"):
                        visit(mt)       # a pointer to a struct needs only the struct's tag
            elif cat == "funcpointer":
                for m in t.findall("param") + t.findall("proto"):
                    visit(m.find("type").text)
            elif cat in ("bitmask",):
                for sub in t.findall("type"):
                    visit(sub.text)
            order.append(n)

        for n in sorted(types):
            visit(n)
        # structs may point to each other: declare every struct tag first
        lines = [f"typedef {self.types[n].get('category')} {n} {n};" for n in order
                 if self.types[n].get("category") in ("struct", "union") and not self.types[n].get("alias")]
        for n in order:
            line = self._c_decl(n, consts)
            if line:
                lines.append(line)
        return "\n".join(lines) + "\n"

    def _c_decl(self, n, consts) -> str | None:
        t = self.types[n]
        cat = t.get("category")
        if t.get("alias"):
            target = t.get("alias")
            if cat in ("struct", "union"):
                return f"typedef {target} {n};"
            return f"typedef {target} {n};"
        if cat == "basetype":
            tt = t.find("type")
            if tt is None:
                return None               # opaque platform types: not used by the selection
            return f"typedef {tt.text} {n};"
        if cat == "handle":
            kind = t.find("type").text
            return (f"typedef struct {n}_T* {n};" if kind == "VK_DEFINE_HANDLE" else f"typedef uint64_t {n};")
        if cat == "enum":
            wide = self.enum_blocks.get(n) is not None and self.enum_blocks[n].get("bitwidth") == "64"
            return f"typedef {'uint64_t' if wide else 'int32_t'} {n};"
        if cat == "bitmask":
            base = t.find("type").text
            return f"typedef {base} {n};"
        if cat == "funcpointer":
            proto = t.find("proto")
            ret = _decl_text(proto).replace(proto.find("name").text, "").strip()
            params = ", ".join(_decl_text(p) for p in t.findall("param")) or "void"
            return f"typedef {ret} (*{n})({params});"
        if cat in ("struct", "union"):
            members = []
            for m in t.findall("member"):
                if not _api_ok(m):
                    continue
                text = _decl_text(m)
                text = re.sub(r"\[([A-Z_][A-Z0-9_]*)\]", lambda mm: f"[{consts[mm[1]]}]", text)
                members.append(f"    {text};")
            return f"{cat} {n} {{\n" + "\n".join(members) + "\n};"
        return None


def _decl_text(el) -> str:
    """A member's or parameter's C declaration from its XML (comments dropped)."""
    parts = [el.text or ""]
    for sub in el:
        if sub.tag != "comment":
            parts.append(sub.text or "")
        parts.append(sub.tail or "")
    return re.sub(r"\s+", " ", "".join(parts)).strip()


def _depends_ok(expr: str | None, chosen: set) -> bool:
    """A require block's `depends` expression ("A+B,C", with parentheses) against the selection."""
    if not expr:
        return True
    py = re.sub(r"[A-Za-z_][A-Za-z0-9_:]*", lambda m: str(m[0].split("::")[0] in chosen), expr)
    return bool(eval(py.replace("+", " and ").replace(",", " or ")))   # noqa: S307 (our own True/False text)


def _param(p) -> tuple:
    """(C declaration, name, type, pointer depth, is const, length expression) of a parameter."""
    text = _decl_text(p)
    return (text, p.find("name").text, p.find("type").text, text.count("*"), text.startswith("const "),
            p.get("len"))


def generate(path: Path) -> dict[str, str]:
    reg = Registry(path)
    types, commands, ext_values, ext_meta = reg.select()
    raw_consts = reg.constants()
    consts = {}
    for n, v in raw_consts.items():
        m = re.fullmatch(r"\(?(~?)(\d+)(U?L?L?)\)?", v)
        if m:
            bits = 64 if "LL" in m[3] else 32
            consts[n] = (~int(m[2]) & ((1 << bits) - 1)) if m[1] else int(m[2])
    header = reg.c_text(types, consts)
    enums = {}
    for n in sorted(types):
        t = reg.types.get(n)
        if t is not None and t.get("category") == "enum" and not t.get("alias"):
            enums[n] = reg.enum_values(n, ext_values.get(n, []))
    stypes = {}
    for n in sorted(types):
        t = reg.types[n]
        if t.get("category") == "struct" and not t.get("alias"):
            for m in t.findall("member"):
                if m.find("name").text == "sType" and m.get("values"):
                    stypes[n] = m.get("values")
    cmds = {}
    for name in commands:
        c = reg._command(name)
        ret = c.find("proto/type").text
        cmds[name] = (ret, tuple(_param(p) for p in c.findall("param") if _api_ok(p)))
    aliases = {n: reg.commands[n].get("alias") for n in commands if reg.commands[n].get("alias")}
    dispatchable = sorted(n for n in types if reg.types[n].get("category") == "handle"
                          and not reg.types[n].get("alias") and reg.types[n].find("type").text == "VK_DEFINE_HANDLE")
    extensions = {e: (ext_meta.get(e, 1), reg.extensions[e].get("type")) for e in EXTENSIONS}
    src = path.name
    head = (f"/* Generated by emu/vulkan/gen.py from {src} (VK_HEADER_VERSION {reg.header_version}): "
            f"Vulkan {API_VERSION[0]}.{API_VERSION[1]} and {len(EXTENSIONS)} extensions. Do not edit. */\n")
    py = [f'"""Generated by emu/vulkan/gen.py from {src} (VK_HEADER_VERSION {reg.header_version}). Do not edit."""',
          f"HEADER_VERSION = {reg.header_version}",
          f"CONSTANTS = {_fmt(consts)}",
          f"DISPATCHABLE = {tuple(dispatchable)!r}",
          f"EXTENSIONS = {_fmt(extensions)}",
          f"STYPES = {_fmt(stypes)}",
          f"ENUMS = {_fmt(enums)}",
          f"ALIASES = {_fmt(aliases)}",
          f"COMMANDS = {_fmt(cmds)}", ""]
    return {"vk_types.h": head + header, "vk_registry.py": "\n".join(py)}


def _fmt(d: dict) -> str:
    return "{\n" + "".join(f"    {k!r}: {v!r},\n" for k, v in d.items()) + "}"


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    path = Path(argv[0]) if argv else find_vk_xml()
    if path is None:
        sys.exit("gen.py: no vk.xml new enough; run scripts/vk_xml.sh or give its path")
    for name, text in generate(path).items():
        (HERE / name).write_text(text)
        print(f"wrote {HERE / name}")


if __name__ == "__main__":
    main()
