"""What the package hands out (package data): the example kernels `emu demo` runs, the
wgpu-py / wgpudawn host programs of emu/examples/wgpu_host/ with emu/wgpu/README.md, and the
documents under emu/docs/ with emu/profiles/README.md (docs/profiles.md: how to write a profile).
`emu examples` lists them, `emu examples --copy DIR` copies them out, `emu run @gemm_dawn` runs a
bundled kernel by name."""
from __future__ import annotations

from pathlib import Path

from ..errors import HostError


def bundled() -> dict[str, Path]:
    """{name relative to the copy folder: file}: kernels at the top, host programs under
    wgpu_host/, documents under docs/."""
    root = Path(__file__).resolve().parents[1]      # the emu package (importlib.resources: ~10 ms to import)
    out = {}
    for sub, pattern, into in (("examples", "*.wgsl", ""), ("examples/wgpu_host", "*.py", "wgpu_host/"),
                               ("wgpu", "README.md", "wgpu_host/"),      # emu.wgpu's guide, with its programs
                               ("docs", "*.md", "docs/"), ("docs", "*.json", "docs/"),
                               ("profiles", "README.md", "docs/")):     # profile files: the format
        for f in sorted((root / sub).glob(pattern)):
            out[into + ("profiles.md" if sub == "profiles" else f.name)] = f
    return out


def kernel(name: str) -> Path:
    """The bundled kernel `name` ('gemm_dawn' or 'gemm_dawn.wgsl', as in `emu run @gemm_dawn`)."""
    stem = name[:-5] if name.endswith(".wgsl") else name
    kernels = {n[:-5]: f for n, f in bundled().items() if n.endswith(".wgsl") and "/" not in n}
    if stem not in kernels:
        raise HostError(f"there is no bundled kernel '@{stem}'",
                        hint=f"the bundled kernels are {', '.join('@' + k for k in sorted(kernels))} "
                             f"(see `emu examples`)")
    return kernels[stem]


def summary(path: Path) -> str:
    """The first line of a file's leading comment or docstring (a JSON Schema's title)."""
    if path.suffix == ".json":
        import json
        return json.loads(path.read_text()).get("title", "")
    for line in path.read_text().splitlines():
        line = line.strip().lstrip("/#").strip().strip('"').strip()
        if line and not line.startswith(("enable", "import", "from")):
            return line
    return ""


def copy(dest: Path, force: bool = False) -> list[Path]:
    """Copy every bundled file into `dest` (made if missing); files there that differ stay
    unless `force`."""
    files = bundled()
    if dest.exists() and not dest.is_dir():
        raise HostError(f"{dest}: not a folder", hint="give a folder to copy the examples into (made if missing)")
    clashes = [n for n, f in files.items() if (dest / n).exists()
               and (not (dest / n).is_file() or (dest / n).read_bytes() != f.read_bytes())]
    if clashes and not force:
        raise HostError(f"{dest}: {len(clashes)} file(s) there differ from the bundled ones "
                        f"({', '.join(clashes[:3])}{', ...' if len(clashes) > 3 else ''})",
                        hint="copy into an empty folder, or pass --force to overwrite them")
    written = []
    for name, f in files.items():
        target = dest / name
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(f.read_bytes())
        except OSError as e:
            raise HostError(f"cannot write {target}: {e.strerror or e}",
                            hint="copy into a folder you can write to") from None
        written.append(target)
    return written
