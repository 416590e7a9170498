"""The fusion JIT never folds two shader names into one, and imports code only from a private folder."""
from __future__ import annotations

import os
import re

import numpy as np
import pytest

import emu

# `fi` and U+FB01 (the ligature) are different WGSL identifiers; Python folds both to `fi` (NFKC)
FI = """
@group(0) @binding(0) var<storage, read_write> o : array<u32>;
var<workgroup> fi : array<u32, 1>;
var<workgroup> \ufb01 : array<u32, 1>;
@compute @workgroup_size(1)
fn main() {
  fi[0] = 2u;
  \ufb01[0] = 10u;
  o[0] = fi[0] + \ufb01[0];
}
"""


@pytest.mark.parametrize("jit", [False, True])
def test_nfkc_twins_stay_two_variables(monkeypatch, jit):
    monkeypatch.setenv("EMU_JIT", "1" if jit else "0")
    dev = emu.Device("reference")
    pipe = dev.create_compute_pipeline(dev.create_shader_module(FI, "fi.wgsl"))
    out = dev.create_buffer(size=16)
    dev.dispatch(pipe, {(0, 0): out}, (1, 1, 1))
    assert (pipe.pipeline._jit is not None) == jit
    assert out.read(np.uint32)[0] == 12
    if jit:
        assert not re.search(r"fi\b|\ufb01", pipe.pipeline._jit.source)    # no shader name in it


def test_jit_cache_refuses_a_folder_others_can_write(tmp_path, monkeypatch):
    from emu.jit import fuse
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o777)
    monkeypatch.setenv("EMU_JIT_CACHE", str(shared))
    monkeypatch.setattr(fuse, "_CACHE", {})
    with pytest.warns(RuntimeWarning, match="not a private folder"):
        d = fuse._cache_dir()
    assert d != shared and fuse._private(d)
    assert oct(os.stat(d).st_mode & 0o777) == "0o700"


def test_jit_cache_created_private(tmp_path, monkeypatch):
    from emu.jit import fuse
    monkeypatch.setenv("EMU_JIT_CACHE", str(tmp_path / "a" / "jit"))
    monkeypatch.setattr(fuse, "_CACHE", {})
    d = fuse._cache_dir()
    assert d == tmp_path / "a" / "jit"
    assert os.stat(d).st_mode & 0o777 == 0o700
