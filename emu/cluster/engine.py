"""What emu needs to know of Dask's errors, apart from the modules that use them."""
from __future__ import annotations


def gone(e: BaseException) -> bool:
    """Whether `e` says that the scheduler (or the connection to it) went away."""
    return isinstance(e, (OSError, TimeoutError)) or type(e).__name__ in (
        "CommClosedError", "CancelledError", "FutureCancelledError", "FuturesCancelledError")
