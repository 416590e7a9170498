"""How a program gets emu's adapter: install() in process, the launcher, EMU_WGPU=1 with the
start-up hooks, and what stays the real binding's."""
import os
import subprocess
import sys
import textwrap

import pytest

import emu.wgpu
from wgpuhost import ROOT, WITHOUT_BINDINGS, clean_env

BOOT = str(ROOT / "emu" / "wgpu" / "_boot")


def py(code: str, tmp_path, *, env=None, args=(), prefix=()) -> subprocess.CompletedProcess:
    script = tmp_path / "prog.py"
    script.write_text(textwrap.dedent(code))
    return subprocess.run([sys.executable, *prefix, str(script), *args], capture_output=True, text=True,
                          timeout=120, env=env or clean_env(), cwd=tmp_path)


@pytest.fixture
def installed():
    """emu.wgpu.install() for one test, undone afterwards (other tests use the real bindings)."""
    wgpu = pytest.importorskip("wgpu")
    before = wgpu.gpu
    emu.wgpu.install(profile="nvidia-h200")
    try:
        yield
    finally:
        emu.wgpu.uninstall()
        assert wgpu.gpu is before and not emu.wgpu.installed()


def test_install_in_process(installed):
    import wgpu
    a = wgpu.gpu.request_adapter_sync(power_preference="high-performance")
    assert a.info["vendor"] == "emu" and a.info["emu_profile"] == "nvidia-h200"
    assert "subgroup" in a.features and "cooperative-matrix" in a.features     # wgpu-native's names
    assert emu.wgpu.BufferUsage is wgpu.BufferUsage                            # the real flags
    d = a.request_device_sync()
    with pytest.raises(wgpu.GPUValidationError):
        d.create_shader_module(code="fn (")


def test_install_patches_wgpudawn_and_its_extras(installed):
    wgpudawn = pytest.importorskip("wgpudawn")
    try:
        from wgpudawn.backends.dawn import extras
    except Exception as e:  # pragma: no cover - Dawn's library missing
        pytest.skip(f"wgpudawn's native extras do not load: {e}")
    a = wgpudawn.gpu.request_adapter_sync()
    assert "chromium-experimental-subgroup-matrix" in a.features and "subgroups" in a.features
    props = extras.get_adapter_properties(a)
    assert {"component_type": "f16", "result_component_type": "f32", "m": 16, "n": 16, "k": 16,
            "min_subgroup_size": 32, "max_subgroup_size": 32} in props["subgroup_matrix_configs"]
    d = extras.request_device_sync(a, required_features=["shader-f16"], enable_toggles=[])
    assert d.adapter is a and "shader-f16" in d.features
    with pytest.raises(emu.wgpu.NotSupportedError, match="get_memory_usage"):
        extras.get_memory_usage(d)
    import wgpu
    try:
        d.create_shader_module(code="fn (")
    except Exception as e:        # caught as either binding's validation error
        assert isinstance(e, wgpudawn.GPUValidationError) and isinstance(e, wgpu.GPUValidationError)
    else:
        pytest.fail("no error")


def test_backend_import_after_install_keeps_emu(tmp_path):
    r = py("""
        import emu.wgpu; emu.wgpu.install()
        import wgpu
        import wgpu.backends.wgpu_native      # older programs do this; it must not replace emu
        print(wgpu.gpu.request_adapter_sync().info["vendor"])
    """, tmp_path)
    assert r.returncode == 0 and r.stdout.split() == ["emu"], r.stderr


def test_env_var_with_sitecustomize_hook_chains(tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    (other / "sitecustomize.py").write_text("print('their sitecustomize ran')\n")
    env = clean_env(EMU_WGPU="1", EMU_PROFILE="amd-rdna3")
    env["PYTHONPATH"] = os.pathsep.join([BOOT, str(other), env["PYTHONPATH"]])
    r = py("""
        import wgpudawn
        a = wgpudawn.gpu.request_adapter_sync()
        print(a.info["vendor"], a.info["emu_profile"])
    """, tmp_path, env=env)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["their sitecustomize ran", "emu amd-rdna3"]
    env["EMU_WGPU"] = "0"
    r = py("import wgpu, sys; print(type(wgpu.gpu).__module__, 'emu' in sys.modules)", tmp_path, env=env)
    assert r.returncode == 0 and r.stdout.splitlines()[-1] == "wgpu._classes False", r.stdout + r.stderr


def test_env_var_with_pth_hook(tmp_path):
    from emu.wgpu.__main__ import install_hook, PTH_NAME
    site = tmp_path / "site"
    site.mkdir()
    assert install_hook(str(site)).endswith(PTH_NAME)
    code = f"""
        import site; site.addsitedir({str(site)!r})      # what site.py does for site-packages
        import os, wgpu
        if os.environ.get("EMU_WGPU"):
            print(wgpu.gpu.request_adapter_sync().info["vendor"])
        else:
            print(type(wgpu.gpu).__module__)               # the real wgpu-py, untouched
    """
    r = py(code, tmp_path, env=clean_env(EMU_WGPU="1"))
    assert r.returncode == 0 and r.stdout.split() == ["emu"], r.stderr
    r = py(code, tmp_path)
    assert r.returncode == 0 and r.stdout.split() == ["wgpu._classes"], r.stderr


def test_launcher_runs_a_module_and_keeps_install_as_wgpu_working(tmp_path):
    (tmp_path / "mymod.py").write_text(textwrap.dedent("""
        import sys
        import wgpudawn
        wgpudawn.install_as_wgpu()          # pygfx-style: 'import wgpu' gives wgpudawn
        import wgpu
        a = wgpu.gpu.request_adapter_sync()
        print(a.info["vendor"], a.info["emu_profile"], sys.argv[1:])
    """))
    env = clean_env()
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), env["PYTHONPATH"]])
    r = subprocess.run([sys.executable, "-m", "emu.wgpu", "--profile", "apple-m1", "-m", "mymod", "x", "y"],
                       capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["emu", "apple-m1", "['x',", "'y']"]


def test_launcher_reports_a_bad_profile(tmp_path):
    r = subprocess.run([sys.executable, "-m", "emu.wgpu", "--profile", "nvidia-h201", "prog.py"],
                       capture_output=True, text=True, timeout=120, env=clean_env(), cwd=tmp_path)
    assert r.returncode == 2 and "did you mean 'nvidia-h200'" in r.stderr and "Traceback" not in r.stderr


def test_without_any_real_binding(tmp_path):
    """With neither wgpu nor wgpudawn importable, emu.wgpu has its own flags, enums and errors."""
    r = py("""
        import sys
        sys.modules["wgpu"] = sys.modules["wgpudawn"] = None      # as if not installed
        import numpy as np
        import emu.wgpu as wgpu
        d = wgpu.gpu.request_adapter_sync().request_device_sync()
        b = d.create_buffer_with_data(data=np.arange(4, dtype=np.uint32),
                                      usage=wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC)
        code = '''@group(0) @binding(0) var<storage, read_write> x: array<u32>;
        @compute @workgroup_size(4) fn main(@builtin(local_invocation_index) i: u32) { x[i] = x[i] * 5u; }'''
        p = d.create_compute_pipeline(layout="auto", compute={"module": d.create_shader_module(code=code),
                                                              "entry_point": "main"})
        e = d.create_command_encoder(); c = e.begin_compute_pass(); c.set_pipeline(p)
        c.set_bind_group(0, d.create_bind_group(layout=p.get_bind_group_layout(0),
                                                entries=[{"binding": 0, "resource": {"buffer": b}}]))
        c.dispatch_workgroups(1); c.end(); d.queue.submit([e.finish()])
        print(np.frombuffer(d.queue.read_buffer(b), np.uint32).tolist(), wgpu.BufferUsage.__module__)
        try:
            d.create_shader_module(code="fn (")
        except wgpu.GPUValidationError as err:
            print(type(err).__mro__[1].__name__, "MAP_READ" in list(wgpu.BufferUsage.__members__))
    """, tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["[0, 5, 10, 15] emu.wgpu._fallback", "_FallbackValidationError True"]


@pytest.mark.parametrize("binding", ["wgpu", "wgpudawn"])
def test_objects_are_instances_of_the_binding_classes(binding, tmp_path):
    """Host code that checks types: emu's objects are instances of the binding's classes."""
    pytest.importorskip(binding)
    r = py(f"""
        import {binding} as wgpu
        import emu.wgpu
        emu.wgpu.install()
        p = wgpu.gpu.request_adapter_async()
        a = p.sync_wait()
        d = a.request_device_sync()
        b = d.create_buffer(size=16, usage=wgpu.BufferUsage.STORAGE)
        e = d.create_command_encoder()
        checks = [(wgpu.gpu, wgpu.GPU), (p, wgpu.GPUPromise), (a, wgpu.GPUAdapter), (a.info, wgpu.GPUAdapterInfo),
                  (d, wgpu.GPUDevice), (d.queue, wgpu.GPUQueue), (b, wgpu.GPUBuffer), (e, wgpu.GPUCommandEncoder),
                  (e.begin_compute_pass(), wgpu.GPUComputePassEncoder), (d, wgpu.GPUObjectBase)]
        print(a.info["vendor"], [type(o).__name__ for o, cls in checks if not isinstance(o, cls)], str(b))
    """, tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split(" ", 2)[:2] == ["emu", "[]"], r.stdout
    assert r.stdout.split(" ", 2)[2].startswith("<emu.wgpu.GPUBuffer ''"), r.stdout


def test_standin_modules_where_no_binding_is_installed(tmp_path):
    r = py(WITHOUT_BINDINGS + """
import emu.wgpu
emu.wgpu.install()
import wgpu, wgpu.utils, wgpudawn
from wgpudawn.backends.dawn import extras
a = wgpudawn.gpu.request_adapter_sync()
print(wgpu.__emu_standin__, wgpudawn.__emu_standin__, a.info["vendor"], isinstance(a, wgpu.GPUAdapter))
print(sorted(extras.get_adapter_properties(a)), extras.set_instance_extras(backends=["Vulkan"]))
print(wgpu.utils.get_default_device() is wgpu.utils.get_default_device(), wgpu.BufferUsage.__module__)
try:
    extras.create_surface()
except emu.wgpu.NotSupportedError as e:
    print(str(e).split(";")[0])
emu.wgpu.uninstall()
import importlib
for name in list(sys.modules):
    if name.split(".")[0] in ("wgpu", "wgpudawn"):
        del sys.modules[name]
try:
    importlib.import_module("wgpu")
except ModuleNotFoundError as e:
    print("after uninstall:", e)
""", tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        "True True emu True",
        "['emu', 'subgroup_matrix_configs'] None",
        "True emu.wgpu._fallback",
        "wgpudawn.backends.dawn.extras.create_surface() is a native extra of the real binding",
        "after uninstall: No module named 'wgpu'"]


def test_launcher_options_stop_at_the_program(tmp_path):
    """argparse with REMAINDER: what follows the program (or -m MODULE) is the program's, options
    included; the launcher's own mistakes end in a usage message and exit 2."""
    (tmp_path / "echo.py").write_text("import sys; print(sys.argv[1:])\n")
    run = lambda *a: subprocess.run([sys.executable, "-m", "emu.wgpu", *a], capture_output=True, text=True,
                                    timeout=120, env=clean_env(), cwd=tmp_path)
    r = run("--profile", "apple-m1", "echo.py", "--profile", "x", "-m", "y")
    assert r.returncode == 0 and r.stdout.strip() == "['--profile', 'x', '-m', 'y']", r.stderr
    r = run("--bogus", "echo.py")
    assert r.returncode == 2 and "error: unrecognized arguments: --bogus" in r.stderr and "Traceback" not in r.stderr
    r = run()
    assert r.returncode == 2 and "error: give the program to run" in r.stderr


@pytest.mark.parametrize("argv, code, says", [
    (["--profile", "nvidia-h20", "--info"], 2, "emu: error: no profile named 'nvidia-h20' and no such file"),
    (["missing.py"], 2, "python -m emu.wgpu: error: cannot open the program 'missing.py': no such file"),
    (["-m", "no_such_module_here"], 1, "python -m emu.wgpu: error: no module named 'no_such_module_here'"),
    (["-m", "no_such_package.sub"], 1, "python -m emu.wgpu: error: no module named 'no_such_package.sub'"),
])
def test_launcher_mistakes_are_one_message(tmp_path, monkeypatch, capsys, argv, code, says):
    """(was: a traceback from the adapter request or from runpy)"""
    from emu.wgpu.__main__ import main
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("EMU_PROFILE", "")           # main() sets it from --profile
    assert main(argv) == code
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.splitlines()[0] == says


def test_launcher_info_into_a_closed_pipe(monkeypatch):
    """`python -m emu.wgpu --info | head -1`: the reader went away; no BrokenPipeError traceback."""
    import os
    from emu.wgpu.__main__ import main
    r, w = os.pipe()
    os.close(r)
    out = os.fdopen(w, "w")
    monkeypatch.setattr(sys, "stdout", out)
    try:
        assert main(["--info"]) == 0
    finally:
        out.close()


COMPUTE = """
import ctypes
import numpy as np
from wgpu.utils.compute import compute_with_buffers
import wgpu.utils.compute
shader = '''
override scale: f32 = 2.0;
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read_write> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> c: array<u32>;
@compute @workgroup_size(1)
fn main(@builtin(global_invocation_id) i: vec3<u32>) { b[i.x] = a[i.x] * scale; c[i.x] = i.x * 3u; }
'''
out = compute_with_buffers({0: np.arange(8, dtype=np.float32)}, {1: (2, 4, "f"), 2: ctypes.c_uint32 * 8}, shader,
                           constants={"scale": 0.5}, n=8)
print(compute_with_buffers({0: np.arange(8, dtype=np.float32)}, {1: (2, 4, "f"), 2: 32}, shader)[1].tolist())  # n: 2
print(getattr(wgpu.utils.compute, "__emu_standin__", False), out[1].shape, out[1].format, out[1].tolist(),
      list(out[2]))
out = compute_with_buffers({0: np.ones(4, np.float32)}, {1: 16, 2: "4xI"}, shader, n=(4, 1, 1))
print(out[1].format, len(out[1]), out[2].tolist())
for bad in ([], {1: "y"}, {1: (4, "z")}):
    try:
        compute_with_buffers({}, bad, shader)
    except (TypeError, ValueError) as e:
        print(type(e).__name__, e)
"""


@pytest.mark.parametrize("bindings", ["standin", "real"])
def test_utils_compute_with_buffers(tmp_path, bindings):
    """wgpu.utils.compute (wgpu-py's one-call helper): was 'No module named wgpu.utils.compute' where
    no binding is installed; the stand-in answers as the real module does on emu's adapter."""
    if bindings == "real":
        pytest.importorskip("wgpu")
    r = py((WITHOUT_BINDINGS if bindings == "standin" else "") + "import emu.wgpu\nemu.wgpu.install()\n" + COMPUTE,
           tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        "[[0.0, 2.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]]",
        f"{bindings == 'standin'} (2, 4) f [[0.0, 0.5, 1.0, 1.5], [2.0, 2.5, 3.0, 3.5]] [0, 3, 6, 9, 12, 15, 18, 21]",
        "B 16 [0, 3, 6, 9]",
        "TypeError output_arrays must be a nonempty dict.",
        "TypeError Invalid value for output array description: y",
        "ValueError Invalid format for output array 1: z"]
