"""Timing for the identification benches: the best of several runs."""

from __future__ import annotations

import time
from typing import Any, Callable


def best_of(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    """Run ``fn`` ``repeat`` times; return the shortest wall time (s) and the last result. The minimum is
    the figure least disturbed by other programs on a shared machine."""
    best, out = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out
