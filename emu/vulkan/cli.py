"""`emu vulkan-icd`: build emu's Vulkan driver if needed and print its manifest's path."""
from __future__ import annotations


def register(sub, device_args) -> None:
    v = sub.add_parser("vulkan-icd", help="build emu's Vulkan driver (ICD) if needed and print its manifest's "
                                          "path: VK_DRIVER_FILES=$(emu vulkan-icd) program")
    v.add_argument("--rebuild", action="store_true", help="build it again even where the cache holds it")
    v.set_defaults(func=cmd_vulkan_icd)


def cmd_vulkan_icd(args, sources) -> int:
    import shutil
    from .build import build, build_dir
    if args.rebuild:
        shutil.rmtree(build_dir(), ignore_errors=True)
    print(build())
    return 0
