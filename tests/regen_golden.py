"""Regenerate the golden IR of every shader under tests/shaders/:

    python -m tests.regen_golden            # from the repository root
    UPDATE_GOLDEN=1 python -m pytest tests/frontend/test_golden_ir.py   # same, through the test

Each tests/shaders/golden/NAME.ir holds exactly what `python -m emu ir tests/shaders/NAME.wgsl`
prints (run from the repository root, so the locations read tests/shaders/NAME.wgsl:LINE:COL).
"""
from __future__ import annotations

import contextlib
import io
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHADERS = ROOT / "tests" / "shaders"
GOLDEN = SHADERS / "golden"


def shader_names() -> list[str]:
    return sorted(p.stem for p in SHADERS.glob("*.wgsl"))


def render_ir(name: str) -> str:
    """The stdout of `python -m emu ir tests/shaders/NAME.wgsl`, run from the repository root."""
    from emu.cli import main
    out, err = io.StringIO(), io.StringIO()
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = main(["ir", f"tests/shaders/{name}.wgsl"])
    finally:
        os.chdir(cwd)
    if rc != 0:
        raise RuntimeError(f"emu ir tests/shaders/{name}.wgsl failed:\n{err.getvalue()}")
    return out.getvalue()


def regenerate(names=None) -> list[str]:
    GOLDEN.mkdir(exist_ok=True)
    written = []
    for name in names or shader_names():
        path = GOLDEN / f"{name}.ir"
        text = render_ir(name)
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
            written.append(name)
    return written


if __name__ == "__main__":
    changed = regenerate(sys.argv[1:] or None)
    print(f"{len(changed)} golden file(s) rewritten" + (": " + ", ".join(changed) if changed else ""))
