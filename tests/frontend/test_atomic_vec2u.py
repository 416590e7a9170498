"""atomic<vec2<u32>> (WGSL's atomic_vec2u_min_max extension) is refused with one message naming the
extension, at the type's source location, not "expected a scalar type". Our own shader."""
import pytest

import emu
from emu.cli import main
from emu.errors import EmuError

SRC = """enable atomic_vec2u_min_max;
@group(0) @binding(0) var<storage, read_write> hi_lo: atomic<vec2<u32>>;
@compute @workgroup_size(1)
fn main() {
    atomicMax(&hi_lo, vec2u(1u, 2u));
}
"""


def test_atomic_vec2u_names_the_extension():
    with pytest.raises(EmuError) as e:
        emu.Device("nvidia-h200").create_shader_module(SRC, "max64.wgsl")
    err = e.value
    assert (err.loc.line, err.loc.col) == (2, 55)
    assert err.message == "atomic<vec2<u32>> (WGSL's 'atomic_vec2u_min_max' extension) is not supported by emu"
    assert "two atomic<u32>" in err.hint


def test_atomic_vec2u_on_the_command_line(tmp_path, capsys):
    path = tmp_path / "max64.wgsl"
    path.write_text(SRC)
    assert main(["ir", str(path)]) == 1
    out = capsys.readouterr().err
    assert f"{path}:2:55: error: atomic<vec2<u32>> (WGSL's 'atomic_vec2u_min_max' extension)" in out
    assert "Traceback" not in out
