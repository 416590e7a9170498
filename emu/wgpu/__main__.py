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


def build_parser():
    """The launcher's options; everything from the program (or -m MODULE) on is the program's."""
    import argparse
    ap = argparse.ArgumentParser(prog="python -m emu.wgpu", description=__doc__.strip().splitlines()[0],
                                 usage=__doc__.split("\n\n", 1)[1].rstrip())
    ap.add_argument("--profile", help="the device profile emu's adapter emulates (else EMU_PROFILE)")
    for opt, what in (("--install-hook", "write emu_wgpu.pth: then EMU_WGPU=1 selects emu's adapter"),
                      ("--uninstall-hook", "remove emu_wgpu.pth"),
                      ("--boot-dir", "print the folder of the sitecustomize start-up hook"),
                      ("--info", "print the adapter emu would hand out")):
        ap.add_argument(opt, action="append_const", const=opt, dest="actions", default=[], help=what)
    ap.add_argument("-m", dest="module", nargs=argparse.REMAINDER, metavar="MODULE ARGS",
                    help="run a module as a program, with its arguments")
    ap.add_argument("program", nargs=argparse.REMAINDER, metavar="program.py ARGS",
                    help="the program and its arguments (unchanged)")
    return ap


def main(argv=None):
    args = build_parser().parse_args(sys.argv[1:] if argv is None else argv)
    profile, actions = args.profile, args.actions
    if profile:
        os.environ["EMU_PROFILE"] = profile
    if os.environ.get("EMU_PROFILE") and (not actions or actions[0] == "--info"):   # the adapter's
        from ..errors import EmuError
        from ..profiles import load_profile
        try:
            load_profile(os.environ["EMU_PROFILE"])     # fail now, and say why, not at request time
        except EmuError as e:
            print(e.format(), file=sys.stderr)
            return 2
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
            a = _install.flavor_gpu("emu").request_adapter_sync()
            lines = [a.summary] + [f"  {k}: {v}" for k, v in a.info.items()]
            lines.append(f"  features: {', '.join(sorted(a.features))}")
            lines += [f"  subgroup matrix: {c}" for c in _install.adapter_properties(a).get("subgroup_matrix_configs", [])]
            try:
                print("\n".join(lines), flush=True)
            except BrokenPipeError:     # `| head`: the reader went away
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return 0
    if args.module is not None and not args.module:
        build_parser().error("-m needs a module name")
    argv = ["-m"] + args.module if args.module else args.program
    if not argv:
        build_parser().error("give the program to run (program.py ARGS or -m MODULE ARGS)")
    # what python itself would refuse, said as python says it, before emu's adapter is put in place
    if argv[0] == "-m":
        import importlib.util
        try:
            found = importlib.util.find_spec(argv[1])
        except (ImportError, ValueError):
            found = None
        if found is None:
            print(f"python -m emu.wgpu: error: no module named {argv[1]!r}", file=sys.stderr)
            return 1
    elif not os.path.isfile(argv[0]):
        print(f"python -m emu.wgpu: error: cannot open the program '{argv[0]}': no such file", file=sys.stderr)
        return 2
    os.environ["EMU_WGPU"] = "1"    # child processes of the program that have the hook also get emu
    from . import install
    install()
    if argv[0] == "-m":
        sys.argv = argv[1:]
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
    else:
        sys.argv = argv
        sys.path.insert(0, os.path.dirname(os.path.abspath(argv[0])))
        runpy.run_path(argv[0], run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main())
