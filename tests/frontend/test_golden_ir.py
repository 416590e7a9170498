"""Golden IR: tests/shaders/golden/NAME.ir is `python -m emu ir tests/shaders/NAME.wgsl`.

A lowering change shows up here as a diff. If the new IR is intended, regenerate with
`python -m tests.regen_golden` (or run this test with UPDATE_GOLDEN=1) and review the diff.
"""
from __future__ import annotations

import difflib
import os

import pytest

from tests.regen_golden import GOLDEN, regenerate, render_ir, shader_names


@pytest.mark.parametrize("name", shader_names())
def test_golden_ir(name):
    if os.environ.get("UPDATE_GOLDEN"):
        regenerate([name])
    path = GOLDEN / f"{name}.ir"
    assert path.exists(), f"no golden IR for {name}: run `python -m tests.regen_golden`"
    want, got = path.read_text(), render_ir(name)
    if got != want:
        diff = "".join(difflib.unified_diff(want.splitlines(True), got.splitlines(True),
                                            f"golden/{name}.ir", "emu ir", n=2))
        pytest.fail(f"IR of {name}.wgsl changed (regenerate with `python -m tests.regen_golden` "
                    f"if intended):\n{diff[:4000]}")


def test_golden_matches_the_command_line():
    import subprocess
    import sys
    from tests.regen_golden import ROOT
    r = subprocess.run([sys.executable, "-m", "emu", "ir", "tests/shaders/vecadd.wgsl"], cwd=ROOT,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout == (GOLDEN / "vecadd.ir").read_text()
