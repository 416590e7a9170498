"""Tracing: trace events (JSON lines, Perfetto), lane-map pictures, `emu explain` (emu/docs/trace-schema.md).

    from emu.trace import Tracer, Selection
    with Tracer("run.jsonl", selection=Selection.parse(ops="coop,barrier")) as tr:
        dev = emu.Device("nvidia-h200", tracer=tr)
        ...
"""
# The names are imported when first asked for: `emu run` without --trace imports none of them.
_NAMES = {"SCHEMA_VERSION": "schema", "validate_records": "schema", "validate_trace_file": "schema",
          "Selection": "select", "MemorySink": "tracer", "Tracer": "tracer"}
__all__ = list(_NAMES)


def __getattr__(name):
    if name not in _NAMES:
        raise AttributeError(f"module 'emu.trace' has no attribute '{name}'")
    import importlib
    return getattr(importlib.import_module(f".{_NAMES[name]}", __name__), name)
