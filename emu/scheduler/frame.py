"""The state of one function activation in the lockstep executor."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


class Frame:
    """One function activation: values by id, the lanes that left through break/continue/return."""

    __slots__ = ("vals", "dead", "retval", "breakables")

    def __init__(self, vals: list, lanes: int):
        self.vals = vals
        self.dead = np.zeros(lanes, np.bool_)
        self.retval = None
        self.breakables: list[Breakable] = []


@dataclass
class Breakable:
    is_loop: bool
    broken: np.ndarray
    continued: np.ndarray | None = None
