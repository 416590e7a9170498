"""The reference handler of every op: HANDLERS[op](batch, inst, mask, frame)."""
from __future__ import annotations

HANDLERS: dict = {}


def handler(*names):
    """Register the decorated function as the reference handler of the named ops."""
    def deco(fn):
        for n in names:
            HANDLERS[n] = fn
        return fn
    return deco
