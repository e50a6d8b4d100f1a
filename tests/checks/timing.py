"""Timing for the tests that bound a check's cost on a worst-case input. The suite runs four
processes on two cores: the best of three runs is what the input costs, not what a busy
neighbour cost it, and no run holds a garbage collection (a pause the size of a whole run when
a test process has allocated much before it)."""

from __future__ import annotations

import gc
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

T = TypeVar("T")


@contextmanager
def quiet() -> Iterator[None]:
    """No garbage collection inside the block (restored as it was after it)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def timed(run: Callable[[], T]) -> tuple[T, float]:
    """What ``run`` returns, and the shortest of three runs of it, in seconds."""
    best = float("inf")
    with quiet():
        for _ in range(3):
            started = time.perf_counter()
            result = run()
            best = min(best, time.perf_counter() - started)
    return result, best


def best_of_three(run: Callable[[], object]) -> float:
    """The shortest of three runs of ``run``, in seconds."""
    return timed(run)[1]


def ratio(run: Callable[[], object], reference: Callable[[], object], rounds: int = 5) -> float:
    """The cost of ``run`` over the cost of ``reference``: the shortest of ``rounds`` runs of
    each, taken in turn so that a loaded machine slows both alike."""
    runs: list[float] = []
    references: list[float] = []
    with quiet():
        for _ in range(rounds):
            started = time.perf_counter()
            reference()
            references.append(time.perf_counter() - started)
            started = time.perf_counter()
            run()
            runs.append(time.perf_counter() - started)
    return min(runs) / max(min(references), 1e-9)
