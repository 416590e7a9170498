"""emu's pytest plugin: a test suite's GPU kernels on emu's virtual devices, the way Triton's
users run theirs with TRITON_INTERPRET=1. Installed with emu (entry point ``pytest11``), so a
project's tests get, with nothing to configure:

* ``emu_device``: an ``emu.Device``; the test runs once per device profile. ``--emu-profile NAME``
  (repeatable, or comma-separated) picks the profiles; by default every profile that has the
  cooperative-matrix configs the test names with ``@pytest.mark.emu_configs("f16xf16->f32:16x16x16")``
  (every profile when it names none).
* ``gpu_device``: a device of a real WebGPU adapter (wgpu-py, else wgpudawn), or a skip that says
  why there is none.
* ``gpu_backend``: the test runs once per WebGPU binding ("wgpu" for wgpu-py, "dawn" for
  wgpudawn) that finds an adapter here, skipped with the reason for each that does not; with
  ``EMU_REQUIRE_HW=1`` (for a CI that must not pass by skipping) a binding that is installed but
  finds no adapter fails instead.
* ``@pytest.mark.emu_hardware("dawn", "vulkan", ...)``: the test needs a real device of each kind
  named ("wgpu" and "dawn": a WebGPU binding's adapter; "vulkan": a Vulkan device through the
  ``vulkan`` package); it is skipped, saying what is missing, where one is not there (no package,
  no Vulkan loader, no driver), and fails instead under ``EMU_REQUIRE_HW=1`` where the package is
  installed. ``need_hardware(kind)`` does the same inside a test or fixture and returns the
  device's info. One rule for every hardware test, so a machine without Vulkan runs the suite
  green, skips counted and named.
* ``assert_bits_equal(actual, expected, ...)``: the arrays' bits are equal, else a failure that
  names the first differing elements, their values and bits, and the lanes that hold them.
* ``emu_cli``: runs emu's command line in-process, ``code, out, err = emu_cli("run", "k.wgsl",
  "--dispatch", "4")``: its exit status (0, 1 a shader or input error, 2 a usage error), its
  standard output and standard error.

Example (tests/test_saxpy.py of a user's project)::

    import numpy as np

    def test_saxpy(emu_device, assert_bits_equal):
        mod = emu_device.create_shader_module(open("saxpy.wgsl").read(), "saxpy.wgsl")
        pipe = emu_device.create_compute_pipeline(mod)
        x, y = np.arange(64, dtype=np.float32), np.ones(64, np.float32)
        emu_device.dispatch(pipe, {(0, 0): x, (0, 1): y}, 1)
        assert_bits_equal(y, 2 * np.arange(64, dtype=np.float32) + 1, subgroup_size=emu_device.subgroup_size)
"""
from __future__ import annotations

import numpy as np
import pytest

MARKER = "emu_configs"
HARDWARE = "emu_hardware"
HARDWARE_KINDS = ("wgpu", "dawn", "vulkan")


def pytest_addoption(parser):
    group = parser.getgroup("emu", "emu's virtual GPU")
    group.addoption("--emu-profile", action="append", default=[], metavar="NAME",
                    help="device profile(s) for the emu_device fixture (repeat or comma-separate; "
                         "default: every profile with the configs a test marks with emu_configs)")


def pytest_configure(config):
    config.addinivalue_line("markers", f"{MARKER}(*configs): the cooperative-matrix configs the test needs, "
                                       f"as 'f16xf16->f32:16x16x16'; emu_device runs it on the profiles that have them")
    config.addinivalue_line("markers", f"{HARDWARE}(*kinds): the test needs a real device of each kind "
                                       f"({', '.join(HARDWARE_KINDS)}); skipped where there is none (failed "
                                       f"under EMU_REQUIRE_HW=1 where the package is installed)")
    for name in _asked(config):      # a wrong name is one line from pytest, not a collection traceback
        from .errors import EmuError
        from .profiles import load_profile
        try:
            load_profile(name)
        except EmuError as e:
            raise pytest.UsageError(f"--emu-profile {name}: {e.message}" + (f" ({e.hint})" if e.hint else "")) from None


def _asked(config) -> list[str]:
    return [n.strip() for opt in config.getoption("emu_profile") for n in opt.split(",") if n.strip()]


def _has_configs(profile, configs) -> str | None:
    """None if the profile has every config, else why not."""
    from .errors import EmuError
    from .trace.lanes import config_named
    for text in configs:
        try:
            config_named(profile, text)
        except EmuError as e:
            return e.message
    return None


def pytest_generate_tests(metafunc):
    if "emu_device" not in metafunc.fixturenames:
        return
    from .profiles import list_profiles, load_profile
    asked = _asked(metafunc.config)
    configs = [c for m in metafunc.definition.iter_markers(MARKER) for c in m.args]
    params = []
    for name in asked or list_profiles():
        why = _has_configs(load_profile(name), configs)
        if why is None:
            params.append(pytest.param(name, id=name))
        elif asked:                  # asked for by name: say why it does not run there
            params.append(pytest.param(name, id=name, marks=pytest.mark.skip(reason=why)))
    if not params:
        params = [pytest.param(None, id="no-profile", marks=pytest.mark.skip(
            reason=f"no emu profile has every config of {configs}"))]
    metafunc.parametrize("emu_device", params, indirect=True)


@pytest.fixture
def emu_device(request):
    """An emu.Device of the profile this run of the test is for."""
    from .api import Device
    return Device(request.param)


@pytest.fixture(scope="session")
def gpu_device():
    """A device of a real WebGPU adapter (wgpu-py, else wgpudawn), with shader-f16 and subgroups
    where the adapter has them; skips, saying why, where there is none."""
    from .hw import adapters
    reasons = []
    for backend in adapters.BACKENDS:
        info, why = adapters.available(backend)
        if info is None:
            reasons.append(why)        # "BACKEND: why"
            continue
        adapter = adapters.get_adapter(backend)
        wanted = [f for f in ("shader-f16", "subgroups", "subgroup") if f in adapter.features]
        return adapter.request_device_sync(required_features=wanted)
    pytest.skip("no real WebGPU adapter: " + "; ".join(reasons))


def hardware_required() -> bool:
    """EMU_REQUIRE_HW=1: a hardware test whose package is installed fails rather than skips."""
    import os
    return os.environ.get("EMU_REQUIRE_HW", "").strip().lower() not in ("", "0", "false", "no")


_found: dict = {}


def _find(kind: str) -> tuple[dict | None, str, bool]:
    """(the device's info or None, why not, whether the kind's package is installed); once per
    process and kind."""
    if kind not in _found:
        import importlib.util
        if kind == "vulkan":
            from .hw import vulkan
            info, why = vulkan.available()
            installed = importlib.util.find_spec("vulkan") is not None
        elif kind in HARDWARE_KINDS:
            from .hw import adapters
            info, why = adapters.available(kind)
            installed = adapters.package_installed(kind)
        else:
            raise pytest.UsageError(f"{HARDWARE}({kind!r}): expected one of {HARDWARE_KINDS}")
        _found[kind] = (info, why, installed)
    return _found[kind]


def need_hardware(kind: str) -> dict:
    """The info of a real device of `kind` ("wgpu", "dawn" or "vulkan"), else a skip saying what
    is missing; under EMU_REQUIRE_HW=1 a failure where the kind's package is installed."""
    info, why, installed = _find(kind)
    if info is not None:
        return info
    if not installed:
        pytest.skip(f"no {kind} package: {why}")
    if hardware_required():
        pytest.fail(f"EMU_REQUIRE_HW is set and the {kind} package is installed but finds no device: {why}")
    pytest.skip(f"no {kind} device: {why}")


def pytest_runtest_setup(item):
    for mark in item.iter_markers(HARDWARE):
        for kind in mark.args:
            need_hardware(kind)


def _backends():
    from .hw import adapters
    return adapters.BACKENDS


@pytest.fixture(params=_backends())
def gpu_backend(request) -> str:
    """The name of a WebGPU binding with an adapter on this machine ("wgpu", "dawn"), one run per
    binding; a skip saying why where there is none (a failure, with EMU_REQUIRE_HW=1, where the
    binding is installed but finds no adapter)."""
    need_hardware(request.param)
    return request.param


@pytest.fixture
def emu_cli(capsys):
    """``emu_cli(*argv)`` runs `emu ARGV...` in-process: (exit status, stdout, stderr)."""
    from .cli import main

    def run(*argv):
        capsys.readouterr()                  # what the test printed before is not the command's
        code = main([str(a) for a in argv])
        out, err = capsys.readouterr()
        return code, out, err
    return run


def _bits(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    if a.dtype.kind == "b":
        return a.view(np.uint8)
    return a.view(np.dtype(f"u{a.dtype.itemsize}"))


def _lanes(index, shape, device, config, role, subgroup_size) -> str:
    """Which lanes hold an element: by the profile's lane map (a matrix result in tiles of the
    config), or lane = flat index mod subgroup size (one invocation per element)."""
    if config is not None and device is not None and len(shape) == 2:
        from .trace.lanes import config_named
        cfg = config_named(device.profile, config)
        rows, cols = (cfg.m, cfg.n) if role == "C" else (cfg.m, cfg.k) if role == "A" else (cfg.k, cfg.n)
        r, c = index
        owners = device.profile.lane_map(cfg, role, device.subgroup_size).owners(r % rows, c % cols)
        tile = f"tile ({r // rows}, {c // cols}) element ({r % rows}, {c % cols})"
        return f"{tile}, held by " + ", ".join(f"lane {lane} [{i}]" for lane, i in owners)
    if subgroup_size:
        flat = int(np.ravel_multi_index(index, shape)) if shape else 0
        return f"(if invocation i wrote element i: subgroup {flat // subgroup_size}, lane {flat % subgroup_size})"
    return ""


def assert_bits_equal(actual, expected, *, device=None, config: str | None = None, role: str = "C",
                      subgroup_size: int | None = None, show: int = 5) -> None:
    """Fail unless ``actual`` and ``expected`` have the same dtype, shape and bits (NaN payloads
    and the sign of zero count). The failure names the first ``show`` differing elements with
    their values, bits and lanes: give ``device`` (an emu.Device) and ``config`` ('f16xf16->f32:16x16x16')
    for a matrix result laid out in tiles, or ``subgroup_size`` when invocation i wrote element i."""
    a, e = np.asarray(actual), np.asarray(expected)
    if a.dtype != e.dtype or a.shape != e.shape:
        raise AssertionError(f"assert_bits_equal: actual is {a.dtype}{list(a.shape)}, expected "
                             f"{e.dtype}{list(e.shape)}; compare arrays of one dtype and shape")
    if subgroup_size is None and device is not None and config is None:
        subgroup_size = device.subgroup_size
    diff = np.argwhere(_bits(a) != _bits(e))
    if diff.size == 0:
        return
    width = a.dtype.itemsize * 2
    lines = [f"{len(diff)} of {a.size} elements differ in their bits; the first {min(show, len(diff))}:"]
    for index in map(tuple, diff[:show]):
        where = _lanes(index, a.shape, device, config, role, subgroup_size)
        lines.append(f"  [{', '.join(map(str, index))}]: {a[index]!r} (0x{int(_bits(a)[index]):0{width}x}) != "
                     f"expected {e[index]!r} (0x{int(_bits(e)[index]):0{width}x})" + (f"  {where}" if where else ""))
    raise AssertionError("\n".join(lines))


@pytest.fixture(name="assert_bits_equal")
def assert_bits_equal_fixture(request):
    """``assert_bits_equal(actual, expected, device=..., config=..., subgroup_size=...)``; in a
    test that uses ``emu_device``, ``device`` defaults to it."""
    if "emu_device" not in request.fixturenames:
        return assert_bits_equal
    device = request.getfixturevalue("emu_device")

    def check(actual, expected, **kw):
        kw.setdefault("device", device)
        return assert_bits_equal(actual, expected, **kw)
    return check
