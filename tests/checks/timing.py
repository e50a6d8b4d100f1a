"""Timing for the tests that bound a check's cost on a worst-case input. The suite runs four
processes on two cores: the best of three runs is what the input costs, not what a busy
neighbour cost it."""

from __future__ import annotations

import time
from collections.abc import Callable


def best_of_three(run: Callable[[], object]) -> float:
    """The shortest of three runs of ``run``, in seconds."""
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - started)
    return best
