"""`emu lanes`: text, SVG, HTML and JSON pictures of lane maps, and diffs."""
import json
import re
import xml.etree.ElementTree as ET

import pytest

from emu.profiles import load_profile
from emu.trace import lanes

CFG = "f16xf16->f32:16x16x16"


@pytest.mark.parametrize("profile,role,sg", [("nvidia-h200", "A", None), ("amd-rdna3", "B", 64),
                                             ("amd-rdna3", "C", 32), ("reference", "C", 128),
                                             ("intel-xe2", "B", None)])
def test_svg_is_well_formed_and_names_every_lane(profile, role, sg):
    p = load_profile(profile)
    cfg = p.configs[0] if profile == "intel-xe2" else p.find_config(16, 16, 16, "f16", "f32")
    v = lanes.view(profile, lanes.config_name(cfg), role, sg)
    root = ET.fromstring(lanes.render_svg(v))
    assert root.tag.endswith("svg")
    texts = ["".join(t.itertext()) for t in root.iter() if t.tag.endswith("text")]
    for lane in range(v.subgroup_size):
        assert f"lane {lane}" in texts
    # every cell of the grid is labelled "lane.element" with its owners
    labels = set(texts)
    for (r, c), own in v.owners_cache.items():
        assert "/".join(f"{l}.{i}" for l, i in own) in labels


def test_duplicated_ownership_is_visible():
    v = lanes.view("amd-rdna3", CFG, "A")
    text = lanes.render_text(v)
    assert "duplicated ownership" in text and " 0.0/16.0 " in text
    svg = lanes.render_svg(v)
    assert 'class="dup"' in svg
    assert 'class="dup"' not in lanes.render_svg(lanes.view("nvidia-h200", CFG, "A"))
    assert "td class='dup'" in lanes.render_html(v)


def test_json_format():
    v = lanes.view("nvidia-h200", CFG, "C")
    d = json.loads(lanes.render(v, "json"))
    assert {k: d[k] for k in ("profile", "config", "role", "rows", "cols", "subgroup_size")} == {
        "profile": "nvidia-h200", "config": CFG, "role": "C", "rows": 16, "cols": 16, "subgroup_size": 32}
    assert len(d["lanes"]) == 32 and all(len(x) == 8 for x in d["lanes"])
    lm = load_profile("nvidia-h200").lane_map(load_profile("nvidia-h200").find_config(16, 16, 16, "f16", "f32"), "C", 32)
    assert d["lanes"] == lm.coords.tolist()
    cells = sorted(tuple(rc) for lane in d["lanes"] for rc in lane)
    assert cells == [(r, c) for r in range(16) for c in range(16)]


def test_text_has_grid_and_inverse_view():
    t = lanes.render_text(lanes.view("nvidia-h200", CFG, "A"))
    assert re.search(r"^ *0 \|\s+0\.0\s+0\.1\s+1\.0\s+1\.1", t, re.M)     # row 0: lanes 0, 0, 1, 1
    assert "lane  0: (0,0) (0,1) (8,0) (8,1) (0,8) (0,9) (8,8) (8,9)" in t or \
           "lane  0: (0,0) (0,1)" in t


def test_diff_marks_differing_cells():
    a, b = lanes.view("amd-rdna3", CFG, "C"), lanes.view("amd-rdna4", CFG, "C")
    d = lanes.differing(a, b)
    assert (0, 0) not in d and (1, 0) in d
    assert len(d) == 224
    t = lanes.render_diff(a, b, "text")
    assert "224 of 256 cells differ" in t and "16.0*" in t
    svg = lanes.render_diff(a, b, "svg")
    ET.fromstring(svg)
    assert 'class="diff"' in svg
    j = json.loads(lanes.render_diff(a, b, "json"))
    assert len(j["differing"]) == 224 and j["diff"][1]["profile"] == "amd-rdna4"
    same = lanes.render_diff(lanes.view("nvidia-h200", CFG, "A"), lanes.view("nvidia-ampere", CFG, "A"), "text")
    assert "0 of 256 cells differ" in same
    assert "class='diff'" in lanes.render_diff(a, b, "html")


def test_config_syntax():
    assert lanes.parse_config("f16xf16->f32:16x16x16")["c"] == "f32"
    assert lanes.parse_config("u8xi8->i32:16x16x16:sat") == {
        "a": "u8", "b": "i8", "c": "i32", "r": "i32", "m": 16, "n": 16, "k": 16, "sat": True}
    assert lanes.parse_config("f16-f32:8x8x8")["b"] == "f16"
    with pytest.raises(lanes.ConfigSyntaxError):
        lanes.parse_config("f16xf16->f32")


def test_workgroup_and_flexible_matrices_show_the_driver_s_spread():
    """VK_NV_cooperative_matrix2 matrices (no config's shape, or workgroup scope) are drawn with
    the H200's spread (nvidia-h200's flexible_layout_nv, measured in H200 session 5): the
    "lanes" are the group's invocations; A and B repeat over the grid of subgroups."""
    import numpy as np
    c = lanes.view("nvidia-h200", "f16xf16->f32:32x32x16", "C", invocations=128)
    assert (c.rows, c.cols, c.subgroup_size) == (32, 32, 128) and not c.lm.has_duplicates
    assert c.lm.coords[33].tolist()[:2] == [[0, 18], [0, 19]]        # subgroup 1: columns 16..31
    t = lanes.render_text(c)
    assert "32x32 on 128 lanes, 8 elements per lane (nvidia-tiles (workgroup scope, 128 invocations))" in t
    a = lanes.view("nvidia-h200", "f16xf16->f32:32x32x16", "A", invocations=128)
    assert a.lm.has_duplicates and a.label((0, 0)) == "0.0/32.0"       # subgroups 0 and 1 share A's rows
    ET.fromstring(lanes.render(a, "svg"))
    b = lanes.view("nvidia-h200", "f16xf16->f32:32x32x32", "B")          # flexible, subgroup scope
    assert b.subgroup_size == 32 and b.lm.coords[0].tolist()[:2] == [[0, 0], [1, 0]]
    j = json.loads(lanes.render(b, "json"))
    assert np.array(j["lanes"]).shape == (32, 32, 2)
    with pytest.raises(Exception) as e:
        lanes.view("nvidia-h200", "f16xf16->f32:32x32x16", "C", invocations=96)
    assert "96 invocations" in str(e.value)


def test_png_lane_map(tmp_path):
    """`emu lanes --format png`: a valid PNG (checked chunk by chunk), each cell in its lane's color."""
    import struct
    import zlib
    import numpy as np
    from emu.cli import main
    from emu.trace import lanes, png
    out = tmp_path / "a.png"
    assert main(["lanes", "--profile", "nvidia-h200", "--config", "f16xf16->f32:16x16x16", "--role", "A",
                 "--format", "png", "-o", str(out)]) == 0
    data = out.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    chunks, at = [], 8
    while at < len(data):
        n, kind = struct.unpack(">I4s", data[at:at + 8])
        body = data[at + 8:at + 8 + n]
        assert struct.unpack(">I", data[at + 8 + n:at + 12 + n])[0] == zlib.crc32(kind + body)
        chunks.append((kind, body))
        at += 12 + n
    assert [k for k, _ in chunks] == [b"IHDR", b"IDAT", b"IEND"]
    w, h, depth, color, _, _, _ = struct.unpack(">IIBBBBB", chunks[0][1])
    assert (depth, color) == (8, 2)
    raw = np.frombuffer(zlib.decompress(chunks[1][1]), np.uint8).reshape(h, 1 + 3 * w)
    assert (raw[:, 0] == 0).all()
    img = raw[:, 1:].reshape(h, w, 3)
    v = lanes.view("nvidia-h200", "f16xf16->f32:16x16x16", "A")
    assert np.array_equal(img, png.draw(v, lanes.lane_color))
    # the cell (row 3, col 7): its top-left corner inside the outline is in the color of its lane
    cw = (img.shape[1] - 1 - (len(str(v.rows - 1)) * png.GLYPH_W + 8)) // v.cols
    x = len(str(v.rows - 1)) * png.GLYPH_W + 8 + 7 * cw + 1
    y = png.CELL_H + 3 * png.CELL_H + 1
    (lane, _), = v.owners_cache[(3, 7)]
    assert tuple(img[y, x]) == png._rgb(lanes.lane_color(lane, v.subgroup_size))
    assert main(["lanes", "--diff", "nvidia-h200", "amd-rdna3", "--config", "f16xf16->f32:16x16x16", "--role", "C",
                 "--format", "png", "-o", str(tmp_path / "d.png")]) == 0
    assert (tmp_path / "d.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
