"""scripts/ggml_spirv.py: the SPIR-V modules found in a library's bytes (magic number, a well-formed
instruction stream, duplicates once), and the corpus job on a .spv module (bytes, as `emu ir` reads it)."""
from __future__ import annotations

import struct
import sys
from pathlib import Path

import pytest

from emu.cluster.jobs import compile_one

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
import ggml_spirv  # noqa: E402


def _module(bound: int) -> bytes:
    """A small module (OpCapability Shader ... one function), made by hand: header + words."""
    def inst(op, *words):
        return struct.pack(f"<{1 + len(words)}I", (1 + len(words)) << 16 | op, *words)
    body = (inst(17, 1)                        # OpCapability Shader
            + inst(14, 0, 1)                   # OpMemoryModel Logical GLSL450
            + inst(19, 1)                      # %1 = OpTypeVoid
            + inst(33, 2, 1)                   # %2 = OpTypeFunction %1
            + inst(54, 1, 3, 0, 2)             # %3 = OpFunction %1 None %2
            + inst(248, 4)                     # %4 = OpLabel
            + inst(253)                        # OpReturn
            + inst(56))                        # OpFunctionEnd
    return struct.pack("<5I", 0x07230203, 0x00010300, 0, bound, 0) + body


def test_modules_are_found_by_their_magic_and_stream_and_counted_once():
    a, b = _module(5), _module(6)
    junk = b"\x00" * 12 + struct.pack("<I", 0x07230203) + b"\xff" * 20     # the magic alone is no module
    data = b"\x7fELF" + a + junk + b + b"\x01\x02" + a + b"\x00" * 8
    found = ggml_spirv.extract(data)
    assert [m for _, m in found] == [a, b]
    assert [off for off, _ in found] == [4, 4 + len(a) + len(junk)]
    assert ggml_spirv.module_at(a[:-4], 0) is None                  # cut before its OpFunctionEnd
    bad_version = bytearray(a)
    bad_version[4:8] = struct.pack("<I", 0x00020000)
    assert ggml_spirv.module_at(bytes(bad_version), 0) is None


def test_the_corpus_job_reads_a_spv_module_as_bytes(tmp_path):
    p = tmp_path / "m.spv"
    p.write_bytes(_module(5))
    r = compile_one(str(p), 20.0)
    # decoded as SPIR-V (read as text, its bytes would not be): refused for what it lacks
    assert r["class"] == "rejected" and r["message"] == f"{p} has no GLCompute entry point", r


def test_the_script_skips_without_the_library(tmp_path, capsys):
    assert ggml_spirv.main([str(tmp_path / "libggml-vulkan.so")]) == 0
    assert "skipped" in capsys.readouterr().err


@pytest.mark.skipif(not ggml_spirv.default_library().is_file(), reason="scripts/ggml_vulkan.sh has not unpacked ggml")
def test_the_library_holds_its_distinct_modules():
    assert len(ggml_spirv.extract(ggml_spirv.default_library().read_bytes())) == 1452


def test_with_a_profile_the_job_also_makes_the_pipeline():
    shaders = ROOT / "tests" / "shaders" / "spirv"
    assert compile_one(str(shaders / "aliased_bindings.comp"), 60.0, profile="lavapipe")["class"] == "ok"
    ir_only = compile_one(str(shaders / "mma_int8.comp"), 60.0)
    on_lavapipe = compile_one(str(shaders / "mma_int8.comp"), 60.0, profile="lavapipe")
    assert ir_only["class"] == "ok" and on_lavapipe["class"] == "rejected"
    assert "'lavapipe' has no" in on_lavapipe["message"]
