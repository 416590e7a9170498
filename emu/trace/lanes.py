"""`emu lanes`: pictures of a profile's lane maps.

For one (config, role, subgroup size): the matrix as a grid whose cells read "lane.element",
colored by lane; the inverse view (lane -> the elements it holds); elements held by several
lanes (RDNA3 replicates A and B) are drawn with every owner and outlined. As text, SVG, HTML or
JSON; `--diff P1 P2` puts two profiles side by side and marks the cells that differ.

A config is written `A[xB]->C[->R]:MxNxK[:sat]`, e.g. `f16xf16->f32:16x16x16` (M x N x K); quote
it in a shell (`>` redirects), or write `-` for `->`: `f16xf16-f32:16x16x16`.
"""
from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass


from ..errors import HostError
from .tracer import config_name

_CFG = re.compile(r"^\s*(?P<a>[a-wyz0-9]+)(?:x(?P<b>[a-wyz0-9]+))?-(?:>)?(?P<c>[a-z0-9]+)(?:->?(?P<r>[a-z0-9]+))?"
                  r":(?P<m>\d+)x(?P<n>\d+)x(?P<k>\d+)(?P<sat>:sat)?\s*$")


class ConfigSyntaxError(HostError):
    """A --config that cannot be read (a usage error)."""


def parse_config(text: str) -> dict:
    m = _CFG.match(text or "")
    if m is None:
        raise ConfigSyntaxError(f"--config {text!r}: expected A[xB]->C:MxNxK, e.g. f16xf16->f32:16x16x16",
                                hint="types f16, bf16, f32, i8, u8, i32, u32; sizes M x N x K; "
                                     "add ':sat' for a saturating integer config")
    d = m.groupdict()
    return {"a": d["a"], "b": d["b"] or d["a"], "c": d["c"], "r": d["r"] or d["c"],
            "m": int(d["m"]), "n": int(d["n"]), "k": int(d["k"]), "sat": bool(d["sat"])}


def config_named(profile, text: str):
    """The profile's config that `--config TEXT` names."""
    want = parse_config(text)
    cfg = profile.find_config(want["m"], want["n"], want["k"], want["a"], want["c"], b_type=want["b"],
                              result_type=want["r"], saturating=want["sat"], scope=None)
    if cfg is not None:
        return cfg
    listing = ", ".join(config_name(c) for c in profile.configs)
    raise HostError(f"profile '{profile.name}' has no config {text}",
                    hint=f"its configs: {listing}")


@dataclass
class MapView:
    profile: str
    config: str
    role: str
    subgroup_size: int
    lm: object

    @property
    def rows(self):
        return self.lm.rows

    @property
    def cols(self):
        return self.lm.cols

    def owners(self) -> dict:
        """(row, col) -> [(lane, i), ...] in lane order."""
        out: dict = {}
        co = self.lm.coords.tolist()
        for lane, elems in enumerate(co):
            for i, (r, c) in enumerate(elems):
                if r >= 0:
                    out.setdefault((r, c), []).append((lane, i))
        return out

    def label(self, rc) -> str:
        return "/".join(f"{l}.{i}" for l, i in self.owners_cache[rc])

    def __post_init__(self):
        self.owners_cache = self.owners()


def view(profile_name: str, config: str, role: str, subgroup_size: int | None = None,
         invocations: int | None = None) -> MapView:
    """The lane map of a config's role; with `invocations` (a workgroup-scope matrix spread over
    that many invocations), or for a shape no config has (VK_NV_cooperative_matrix2's flexible
    dimensions at subgroup scope), the driver's spread of the matrix, where the profile knows it
    (flexible_layout_nv): the "lanes" are then the group's invocations."""
    from ..profiles import load_profile
    prof = load_profile(profile_name)
    role = str(role).upper()
    if role not in ("A", "B", "C"):
        raise HostError(f"--role {role!r}: use A, B or C (the result uses C's map)")
    sg = subgroup_size or prof.default_subgroup_size
    if not prof.supports_subgroup_size(sg):
        raise HostError(f"profile '{prof.name}' does not run subgroups of {sg} invocations",
                        hint=f"use --subgroup-size {' or '.join(map(str, prof.subgroup_sizes))}")
    want = parse_config(config)
    cfg = prof.find_config(want["m"], want["n"], want["k"], want["a"], want["c"], b_type=want["b"],
                           result_type=want["r"], saturating=want["sat"], scope=None)
    if cfg is not None and invocations is None:
        return MapView(prof.name, config_name(cfg), role, sg, prof.lane_map(cfg, role, sg))
    return _flexible_view(prof, config, want, role, sg, invocations)


def _flexible_view(prof, config, want, role, sg, invocations):
    from ..isa.types import SCALARS, CoopMatrixType
    from ..profiles.lanemap import LaneMap
    import numpy as np
    scope = "workgroup" if invocations is not None else "subgroup"
    rows, cols = {"A": (want["m"], want["k"]), "B": (want["k"], want["n"]), "C": (want["m"], want["n"])}[role]
    elem = want["a"] if role == "A" else want["b"] if role == "B" else want["c"]
    if elem not in SCALARS:
        raise HostError(f"--config {config}: no type {elem}", hint="types f16, bf16, f32, i8, u8, i32, u32")
    t = CoopMatrixType(rows, cols, SCALARS[elem], role, scope)
    got = prof.flexible_elements(t, invocations or sg, sg) if prof.flexible_for(t, invocations) is not None else None
    if got is None:
        listing = ", ".join(config_name(c) for c in prof.configs)
        why = ("its driver's spread of such matrices is not measured (no flexible_layout_nv)" if not prof.flexible_layout_nv
               else "no flexible-dimension entry admits it, or it does not split over the invocations")
        raise HostError(f"profile '{prof.name}' has no config {config}"
                        + (f" and no {scope}-scope {t} for {invocations or sg} invocations: {why}"
                           if prof.flexible_nv else ""),
                        hint=f"its configs: {listing}" + ("; `emu props` lists its flexible dimensions"
                                                          if prof.flexible_nv else ""))
    r, c = got
    lm = LaneMap(rows, cols, r.shape[0], np.stack([r, c], axis=-1),
                 duplicated=bool(r.shape[0] * r.shape[1] > rows * cols),
                 name=f"{prof.flexible_layout_nv} ({scope} scope, {r.shape[0]} invocations)")
    return MapView(prof.name, config, role, r.shape[0], lm)


def to_json(v: MapView) -> dict:
    return {"profile": v.profile, "config": v.config, "role": v.role, "rows": v.rows, "cols": v.cols,
            "subgroup_size": v.subgroup_size, "map": v.lm.name, "duplicated": bool(v.lm.has_duplicates),
            "elements_per_lane": int(v.lm.elements_per_lane), "lanes": v.lm.coords.tolist()}


def differing(v1: MapView, v2: MapView) -> list[tuple[int, int]]:
    if (v1.rows, v1.cols) != (v2.rows, v2.cols):
        return [(r, c) for r in range(max(v1.rows, v2.rows)) for c in range(max(v1.cols, v2.cols))]
    return [(r, c) for r in range(v1.rows) for c in range(v1.cols)
            if v1.owners_cache.get((r, c)) != v2.owners_cache.get((r, c))]


def diff_json(v1: MapView, v2: MapView) -> dict:
    return {"diff": [to_json(v1), to_json(v2)], "differing": [list(rc) for rc in differing(v1, v2)]}


# ------------------------------------------------------------------------------------ text

def _title(v: MapView) -> str:
    dup = ", duplicated ownership" if v.lm.has_duplicates else ""
    return (f"{v.profile} {v.config} role {v.role}: {v.rows}x{v.cols} on {v.subgroup_size} lanes, "
            f"{v.lm.elements_per_lane} elements per lane ({v.lm.name}{dup})")


def _grid_lines(v: MapView, marked=frozenset()) -> list[str]:
    w = max(len(v.label(rc)) for rc in v.owners_cache) + 1
    w = max(w, len(str(v.cols - 1)) + 1)
    rw = len(str(v.rows - 1)) + 1
    lines = [" " * (rw + 2) + " ".join(f"{c:>{w}}" for c in range(v.cols))]
    for r in range(v.rows):
        cells = []
        for c in range(v.cols):
            lab = v.label((r, c)) if (r, c) in v.owners_cache else "?"
            cells.append(f"{lab + ('*' if (r, c) in marked else ''):>{w}}")
        lines.append(f"{r:>{rw}} |" + " " + " ".join(cells))
    return lines


def _inverse_lines(v: MapView) -> list[str]:
    out = []
    lw = len(str(v.subgroup_size - 1))
    for lane, elems in enumerate(v.lm.coords.tolist()):
        cells = " ".join(f"({r},{c})" if r >= 0 else "(pad)" for r, c in elems)
        out.append(f"lane {lane:>{lw}}: {cells}")
    return out


def render_text(v: MapView) -> str:
    lines = [_title(v), "cell = lane.element (element = index in the lane's fragment)"
             + ("; a/b = held by several lanes" if v.lm.has_duplicates else ""), ""]
    lines += _grid_lines(v)
    lines += ["", "lane -> elements (row,col) in fragment order:"]
    lines += _inverse_lines(v)
    return "\n".join(lines) + "\n"


def render_text_diff(v1: MapView, v2: MapView) -> str:
    d = set(differing(v1, v2))
    a, b = _grid_lines(v1, d), _grid_lines(v2, d)
    wa = max(len(x) for x in a)
    out = [f"left:  {_title(v1)}", f"right: {_title(v2)}",
           f"{len(d)} of {v1.rows * v1.cols} cells differ (marked *)", ""]
    for i in range(max(len(a), len(b))):
        out.append(f"{a[i] if i < len(a) else '':<{wa}}   ||   {b[i] if i < len(b) else ''}")
    return "\n".join(out) + "\n"


# ------------------------------------------------------------------------------------ colors

def lane_color(lane: int, n: int) -> str:
    """A light color per lane; neighbouring lanes get far-apart hues."""
    hue = (lane * 137.508) % 360
    light = 78 if lane % 2 == 0 else 86
    return _hsl_hex(hue, 0.62, light / 100)


def _hsl_hex(h, s, l) -> str:
    c = (1 - abs(2 * l - 1)) * s
    x = c * (1 - abs((h / 60) % 2 - 1))
    m = l - c / 2
    r, g, b = [(c, x, 0), (x, c, 0), (0, c, x), (0, x, c), (x, 0, c), (c, 0, x)][int(h // 60) % 6]
    return "#" + "".join(f"{round((v + m) * 255):02x}" for v in (r, g, b))


# ------------------------------------------------------------------------------------ SVG

_CH = 6.1      # width of a character at the 10px monospace font


def _svg_grid(v: MapView, x0: float, y0: float, marked=frozenset()) -> tuple[list[str], float, float]:
    """The matrix grid: one path per lane (its cells, or its stripe of a shared cell), the
    "lane.element" labels row by row, dashed outlines on shared cells, red ones on `marked`."""
    labels = {rc: v.label(rc) for rc in v.owners_cache}
    cw = max(34, int(max(len(s) for s in labels.values()) * _CH) + 8)
    ch = 18
    out = [f'<g class="grid" transform="translate({x0:g},{y0:g})">']
    out.append('<g class="h">' + "".join(f'<text x="{30 + c * cw + cw / 2:g}" y="12">{c}</text>'
                                         for c in range(v.cols)) + "</g>")
    paths: dict = {}
    dup, diff = [], []
    for (r, c), own in sorted(v.owners_cache.items()):
        x, y, n = 30 + c * cw, 18 + r * ch, len(own)
        for j, (lane, _) in enumerate(own):
            w = cw / n
            paths.setdefault(lane, []).append(f"M{x + j * w:g} {y}h{w:g}v{ch}h{-w:g}z")
        if n > 1:
            dup.append(f"M{x} {y}h{cw}v{ch}h{-cw}z")
    for r, c in sorted(marked):
        if r < v.rows and c < v.cols:
            diff.append(f"M{30 + c * cw} {18 + r * ch}h{cw}v{ch}h{-cw}z")
    for lane in sorted(paths):
        out.append(f'<path class="c{lane}" d="{"".join(paths[lane])}"/>')
    if dup:
        out.append(f'<path class="dup" d="{"".join(dup)}"/>')
    if diff:
        out.append(f'<path class="diff" d="{"".join(diff)}"/>')
    for r in range(v.rows):
        row = [f'<g transform="translate(0,{18 + r * ch + 13})"><text class="h" x="14">{r}</text>']
        for c in range(v.cols):
            mark = "*" if (r, c) in marked else ""
            row.append(f'<text x="{30 + c * cw + cw / 2:g}">{html.escape(labels.get((r, c), "?"))}{mark}</text>')
        out.append("".join(row) + "</g>")
    out.append("</g>")
    return out, 30 + v.cols * cw, 18 + v.rows * ch


def _svg_inverse(v: MapView, x0: float, y0: float) -> tuple[list[str], float, float]:
    out = [f'<g class="inverse" transform="translate({x0:g},{y0:g})">',
           f'<text class="t" x="0" y="12">lane -&gt; elements (row,col) in fragment order</text>']
    lh = 15
    width = 0
    for lane, elems in enumerate(v.lm.coords.tolist()):
        y = 20 + lane * lh
        txt = " ".join(f"({r},{c})" if r >= 0 else "(pad)" for r, c in elems)
        out.append(f'<rect class="c{lane}" x="0" y="{y}" width="56" height="{lh - 2}"/>')
        out.append(f'<text class="l" x="4" y="{y + 10}">lane {lane}</text>')
        out.append(f'<text class="l" x="62" y="{y + 10}">{txt}</text>')
        width = max(width, 62 + len(txt) * _CH)
    out.append("</g>")
    return out, width, 20 + v.subgroup_size * lh


_STYLE = ("text{font:10px monospace;text-anchor:middle}.h text,text.h{fill:#666}"
          "text.t{font:bold 12px sans-serif;text-anchor:start}text.l{text-anchor:start}"
          "path,rect{stroke:#fff;stroke-width:0.5}path.dup{fill:none;stroke:#000;stroke-width:1.5;"
          "stroke-dasharray:3 2}path.diff{fill:none;stroke:#d00000;stroke-width:2.5}")


def _svg_doc(body: list[str], width: float, height: float, lanes: int) -> str:
    colors = "".join(f".c{l}{{fill:{lane_color(l, lanes)}}}" for l in range(lanes))
    return ("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
            f'viewBox="0 0 {width:.0f} {height:.0f}">\n<style>{_STYLE}{colors}</style>\n'
            f'<rect x="0" y="0" width="{width:.0f}" height="{height:.0f}" fill="#fff" stroke="none"/>\n'
            + "\n".join(body) + "\n</svg>\n")


def render_svg(v: MapView) -> str:
    body = [f'<text class="t" x="10" y="18">{html.escape(_title(v))}</text>']
    note = "cell = lane.element" + ("; dashed outline: held by several lanes" if v.lm.has_duplicates else "")
    body.append(f'<text class="l" x="10" y="34">{html.escape(note)}</text>')
    grid, gw, gh = _svg_grid(v, 10, 44)
    inv, iw, ih = _svg_inverse(v, 10, 44 + gh + 16)
    body += grid + inv
    return _svg_doc(body, max(gw, iw, len(_title(v)) * 7.5) + 20, 44 + gh + 16 + ih + 10, v.subgroup_size)


def render_svg_diff(v1: MapView, v2: MapView) -> str:
    d = set(differing(v1, v2))
    top = 84
    body = [f'<text class="t" x="10" y="18">{len(d)} of {v1.rows * v1.cols} cells differ '
            f'(outlined red, marked *)</text>',
            f'<text class="l" x="10" y="36">left:  {html.escape(_title(v1))}</text>',
            f'<text class="l" x="10" y="52">right: {html.escape(_title(v2))}</text>']
    g1, w1, h1 = _svg_grid(v1, 10, top, d)
    x2 = 10 + w1 + 30
    g2, w2, h2 = _svg_grid(v2, x2, top, d)
    body.append(f'<text class="t" x="10" y="{top - 6}">{html.escape(v1.profile)}</text>')
    body.append(f'<text class="t" x="{x2:g}" y="{top - 6}">{html.escape(v2.profile)}</text>')
    i1, iw1, ih1 = _svg_inverse(v1, 10, top + max(h1, h2) + 16)
    i2, iw2, ih2 = _svg_inverse(v2, x2, top + max(h1, h2) + 16)
    body += g1 + g2 + i1 + i2
    width = max(x2 + max(w2, iw2), 10 + iw1, (len(_title(v2)) + 7) * _CH + 10) + 20
    return _svg_doc(body, width, top + max(h1, h2) + 16 + max(ih1, ih2) + 10,
                    max(v1.subgroup_size, v2.subgroup_size))


# ------------------------------------------------------------------------------------ HTML

def _html_grid(v: MapView, marked=frozenset()) -> str:
    rows = ["<table class='grid'><tr><th></th>" + "".join(f"<th>{c}</th>" for c in range(v.cols)) + "</tr>"]
    for r in range(v.rows):
        cells = [f"<th>{r}</th>"]
        for c in range(v.cols):
            own = v.owners_cache.get((r, c), [])
            if len(own) == 1:
                bg = lane_color(own[0][0], v.subgroup_size)
            else:
                stops = ",".join(f"{lane_color(l, v.subgroup_size)} {100 * j / len(own):.0f}% "
                                 f"{100 * (j + 1) / len(own):.0f}%" for j, (l, _) in enumerate(own))
                bg = f"linear-gradient(90deg,{stops})"
            cls = " ".join(x for x in ("dup" if len(own) > 1 else "", "diff" if (r, c) in marked else "") if x)
            tip = ", ".join(f"lane {l} element {i}" for l, i in own)
            cells.append(f"<td class='{cls}' style='background:{bg}' title='{v.role}[{r},{c}]: {tip}'>"
                         f"{html.escape(v.label((r, c)) if own else '?')}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return "\n".join(rows) + "</table>"


def _html_inverse(v: MapView) -> str:
    rows = ["<table class='inverse'><tr><th>lane</th><th colspan='99'>elements (row,col), fragment order</th></tr>"]
    for lane, elems in enumerate(v.lm.coords.tolist()):
        bg = lane_color(lane, v.subgroup_size)
        cells = "".join(f"<td>{f'({r},{c})' if r >= 0 else '(pad)'}</td>" for r, c in elems)
        rows.append(f"<tr style='background:{bg}'><th>lane {lane}</th>{cells}</tr>")
    return "\n".join(rows) + "</table>"


_CSS = ("body{font-family:sans-serif}table{border-collapse:collapse;margin:8px 0}"
        "td,th{font:11px monospace;padding:2px 4px;border:1px solid #fff;text-align:center}"
        "td.dup{outline:2px dashed #000;outline-offset:-2px}td.diff{outline:3px solid #d00000;"
        "outline-offset:-3px}.side{display:flex;gap:24px}")


def render_html(v: MapView) -> str:
    return (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(_title(v))}</title>"
            f"<style>{_CSS}</style></head><body><h3>{html.escape(_title(v))}</h3>"
            f"<p>cell = lane.element{'; dashed: held by several lanes' if v.lm.has_duplicates else ''}</p>"
            f"{_html_grid(v)}<h4>lane &rarr; elements</h4>{_html_inverse(v)}</body></html>\n")


def render_html_diff(v1: MapView, v2: MapView) -> str:
    d = set(differing(v1, v2))
    cols = "".join(f"<div><h4>{html.escape(_title(v))}</h4>{_html_grid(v, d)}{_html_inverse(v)}</div>"
                   for v in (v1, v2))
    return (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>lane map diff</title>"
            f"<style>{_CSS}</style></head><body><h3>{len(d)} of {v1.rows * v1.cols} cells differ "
            f"(outlined red)</h3><div class='side'>{cols}</div></body></html>\n")


def render(v: MapView, format: str) -> str:
    if format == "json":
        return json.dumps(to_json(v), separators=(",", ":")) + "\n"
    if format == "png":
        from .png import render_png
        return render_png(v, lane_color)
    return {"text": render_text, "svg": render_svg, "html": render_html}[format](v)


def render_diff(v1: MapView, v2: MapView, format: str) -> str:
    if format == "json":
        return json.dumps(diff_json(v1, v2), separators=(",", ":")) + "\n"
    if format == "png":
        from .png import render_png_diff
        return render_png_diff(v1, v2, differing(v1, v2), lane_color)
    return {"text": render_text_diff, "svg": render_svg_diff, "html": render_html_diff}[format](v1, v2)
