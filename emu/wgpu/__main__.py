"""Run an unmodified wgpu-py / wgpudawn program on emu's virtual GPU.

    python -m emu.wgpu [--profile NAME] program.py [ARGS...]
    python -m emu.wgpu [--profile NAME] -m package.module [ARGS...]
    python -m emu.wgpu --install-hook     # then EMU_WGPU=1 python program.py works
    python -m emu.wgpu --uninstall-hook
    python -m emu.wgpu --boot-dir         # for EMU_WGPU=1 PYTHONPATH=<it> python program.py
    python -m emu.wgpu --info             # the adapter emu would hand out
"""
from __future__ import annotations

import os
import runpy
import sys
import sysconfig

PTH_NAME = "emu_wgpu.pth"
# One line, run by site.py at every start of this interpreter: it reads one environment variable
# and imports emu only when EMU_WGPU is set (then installs the adapter before the program runs).
PTH_LINE = ("import os; exec(\"if os.environ.get('EMU_WGPU', '').strip().lower() in ('1', 'true', 'yes', 'on'):"
            "\\n try:\\n  import emu.wgpu as _m; _m.install_from_env()"
            "\\n except Exception as _e:\\n  import sys; print('emu.wgpu: EMU_WGPU is set but emu could not be "
            "installed: %r' % (_e,), file=sys.stderr)\")\n")


def boot_dir() -> str:
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "_boot")


def site_packages() -> str:
    return sysconfig.get_paths()["purelib"]


def install_hook(directory: str | None = None) -> str:
    path = os.path.join(directory or site_packages(), PTH_NAME)
    with open(path, "w") as f:
        f.write(PTH_LINE)
    return path


def uninstall_hook(directory: str | None = None) -> str | None:
    path = os.path.join(directory or site_packages(), PTH_NAME)
    if os.path.exists(path):
        os.remove(path)
        return path
    return None


def _usage(code=2):
    print(__doc__.strip(), file=sys.stderr if code else sys.stdout)
    sys.exit(code)


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    profile, actions = None, []
    while argv and argv[0].startswith("-") and argv[0] != "-m":
        opt = argv.pop(0)
        if opt in ("-h", "--help"):
            _usage(0)
        elif opt == "--profile" and argv:
            profile = argv.pop(0)
        elif opt.startswith("--profile="):
            profile = opt.split("=", 1)[1]
        elif opt in ("--install-hook", "--uninstall-hook", "--boot-dir", "--info"):
            actions.append(opt)
        else:
            print(f"emu.wgpu: unknown option {opt}", file=sys.stderr)
            _usage()
    for opt in actions:
        if opt == "--install-hook":
            print(f"installed {install_hook()}: EMU_WGPU=1 now selects emu's adapter for this interpreter")
            return 0
        elif opt == "--uninstall-hook":
            path = uninstall_hook()
            print(f"removed {path}" if path else "no hook was installed")
            return 0
        elif opt == "--boot-dir":
            print(boot_dir())
            return 0
        elif opt == "--info":
            from . import _install
            if profile:
                os.environ["EMU_PROFILE"] = profile
            a = _install.flavor_gpu("emu").request_adapter_sync()
            print(a.summary)
            for k, v in a.info.items():
                print(f"  {k}: {v}")
            print(f"  features: {', '.join(sorted(a.features))}")
            for c in _install.adapter_properties(a).get("subgroup_matrix_configs", []):
                print(f"  subgroup matrix: {c}")
            return 0
    if not argv:
        _usage()
    if profile:
        os.environ["EMU_PROFILE"] = profile
    if os.environ.get("EMU_PROFILE"):
        from ..errors import EmuError
        from ..profiles import load_profile
        try:
            load_profile(os.environ["EMU_PROFILE"])     # fail now, and say why, not at request time
        except EmuError as e:
            print(e.format(), file=sys.stderr)
            return 2
    os.environ["EMU_WGPU"] = "1"    # child processes of the program that have the hook also get emu
    from . import install
    install()
    if argv[0] == "-m":
        if len(argv) < 2:
            _usage()
        sys.argv = argv[1:]
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
    else:
        sys.argv = argv
        sys.path.insert(0, os.path.dirname(os.path.abspath(argv[0])))
        runpy.run_path(argv[0], run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main())
