"""The layer rules of docs/architecture.md, checked on every run: an import inside `emu` goes down
(or sideways within one package), never up, never in a circle. Imports are read with `ast`, lazy
imports inside functions included, so a deferred import cannot hide a cycle."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2] / "emu"

# Lowest first. A module may import modules of its own layer's package and of any lower layer.
# Packages on one line share a layer but may not import each other unless listed in SIDEWAYS.
LAYERS = [
    ["emu.version", "emu.diagnostic", "emu.errors"],
    ["emu.startup", "emu.server"],    # the command's own start and end, `emu serve` (run before numpy loads)
    ["emu.examples"],                 # the bundled kernels (data)
    ["emu.numerics"],
    ["emu.isa", "emu.profiles"],
    ["emu.memory", "emu.frontend"],
    ["emu.scheduler"],
    ["emu.jit"],
    ["emu.cliargs"],
    ["emu.api", "emu.trace", "emu.hw", "emu.demo"],
    ["emu.cluster"],                  # dispatches and campaigns over Dask (the cluster extra)
    ["emu.wgpu"],
    ["emu.vulkan"],                   # the Vulkan driver (ICD): programs load emu through the Vulkan loader
    ["emu.cli", "emu.__main__", "emu.pytest_plugin", "emu"],   # the front doors: command, plugin
]
# (importer, imported) pairs within one layer that are allowed, one way only.
SIDEWAYS = {
    ("emu.errors", "emu.diagnostic"),
    ("emu.server", "emu.startup"),
    ("emu.profiles", "emu.isa"),
    ("emu.frontend", "emu.memory"),
    ("emu.trace", "emu.api"), ("emu.hw", "emu.api"), ("emu.demo", "emu.api"),
    ("emu.hw", "emu.trace"),
    ("emu.cli", "emu"), ("emu.__main__", "emu.cli"),
    ("emu.pytest_plugin", "emu.cli"),       # the emu_cli fixture runs the command in-process
}


def unit(module: str) -> str:
    """The layer unit a module belongs to: the longest prefix named in LAYERS."""
    best = None
    for row in LAYERS:
        for u in row:
            if module == u or module.startswith(u + "."):
                if best is None or len(u) > len(best):
                    best = u
    assert best is not None, module
    return best


def rank(u: str) -> int:
    return next(i for i, row in enumerate(LAYERS) if u in row)


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def is_module(name: str) -> bool:
    path = ROOT.parent / name.replace(".", "/")
    return path.with_suffix(".py").exists() or path.is_dir()


def import_sources(path: Path):
    """(module imported from, names, line) of every `emu` import in `path` (top level or inside a
    function), relative imports resolved; `import emu.x` gives names []."""
    me = module_name(path)
    package = me if path.name == "__init__.py" else me.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] == "emu":
                    yield a.name, [], node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] == "emu":
                yield target, node.names, node.lineno


def imports(path: Path) -> list[tuple[str, int]]:
    """Every `emu` module `path` imports (top level or inside a function), with the line."""
    found = []
    for target, names, line in import_sources(path):
        found += [(target, line)] if not names else [
            (f"{target}.{a.name}" if is_module(f"{target}.{a.name}") else target, line)
            for a in names]           # `from . import x` may name a submodule
    return found


def private_uses(path: Path) -> list[str]:
    """Where `path` takes a `_name` from a module of another package: `from m import _x` or
    `m._x` on an imported module. A layer below offers its seams under public names."""
    me = unit(module_name(path))
    found, aliases = [], {}
    for target, names, line in import_sources(path):
        for a in names:
            sub = f"{target}.{a.name}"
            if is_module(sub):
                aliases[a.asname or a.name] = sub
            elif a.name.startswith("_") and not a.name.startswith("__") and unit(target) != me:
                found.append(f"{module_name(path)}:{line}: from {target} import {a.name}")
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                and node.value.id in aliases and node.attr.startswith("_") and not node.attr.startswith("__") \
                and unit(aliases[node.value.id]) != me:
            found.append(f"{module_name(path)}:{node.lineno}: {aliases[node.value.id]}.{node.attr}")
    return found


def graph() -> dict[str, list[tuple[str, int]]]:
    return {module_name(p): imports(p) for p in sorted(ROOT.rglob("*.py"))}


def layer_violations(g) -> list[str]:
    """`importer -> imported` for every module pair that breaks a layer rule (first line given)."""
    bad = {}
    for mod, deps in g.items():
        mu = unit(mod)
        for dep, line in deps:
            du = unit(dep)
            if du == mu:
                continue
            if rank(du) > rank(mu) or (rank(du) == rank(mu) and (mu, du) not in SIDEWAYS):
                bad.setdefault(f"{mod} -> {dep}", line)
    return sorted(bad)


def cycles(g) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), each a circle of imports."""
    edges = {m: sorted({d for d, _ in deps if d in g and d != m}) for m, deps in g.items()}
    index, low, stack, on, out, n = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = n[0]; n[0] += 1
        stack.append(v); on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w); low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop(); on.discard(w); comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in edges:
        if v not in index:
            visit(v)
    return out


def package_cycles(g) -> list[list[str]]:
    """Circles between packages (emu.cli <-> emu.trace even when no single module pair closes one)."""
    pg = {}
    for mod, deps in g.items():
        pg.setdefault(unit(mod), []).extend((unit(d), l) for d, l in deps)
    return cycles(pg)


def test_every_import_goes_down():
    assert layer_violations(graph()) == []


def test_no_module_cycle():
    assert cycles(graph()) == []


def test_no_package_cycle():
    assert package_cycles(graph()) == []


def test_no_private_name_crosses_a_package():
    assert [u for p in sorted(ROOT.rglob("*.py")) for u in private_uses(p)] == []


def test_checker_sees_lazy_and_relative_imports(tmp_path):
    """The checker itself: a function-local relative import going up is found."""
    src = "def f():\n    from ..jit import fuse\n"
    tree_mod = ROOT / "scheduler" / "_probe_.py"
    try:
        tree_mod.write_text(src)
        assert "emu.scheduler._probe_ -> emu.jit.fuse" in layer_violations(graph())
        tree_mod.write_text("def f(batch):\n    from ..memory import coop\n    return coop._x(batch)\n"
                            "from ..isa.ops import _y\n")
        assert private_uses(tree_mod) == ["emu.scheduler._probe_:4: from emu.isa.ops import _y",
                                          "emu.scheduler._probe_:3: emu.memory.coop._x"]
    finally:
        tree_mod.unlink()
