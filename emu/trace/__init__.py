"""Tracing: trace events (JSON lines, Perfetto), lane-map pictures, `emu explain` (emu/docs/trace-schema.md).

    from emu.trace import Tracer, Selection
    with Tracer("run.jsonl", selection=Selection.parse(ops="coop,barrier")) as tr:
        dev = emu.Device("nvidia-h200", tracer=tr)
        ...
"""
from .schema import SCHEMA_VERSION, validate_records, validate_trace_file  # noqa: F401
from .select import Selection  # noqa: F401
from .tracer import MemorySink, Tracer  # noqa: F401
