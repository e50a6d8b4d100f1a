"""The process's heap: garbage collector settings for batch checking, and memory handed back.

Both are process-wide, so they belong to the process that runs the checks (``run``,
``replay``), not to a library caller that builds a :class:`~sidecar.pipeline.Pipeline`.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
from collections.abc import Callable

__all__ = ["YOUNG_COLLECTION_EVERY", "release_memory", "settle_heap"]


YOUNG_COLLECTION_EVERY = 50_000
"""Allocations between two collections of the youngest generation (Python's default: 700)."""


def settle_heap() -> None:
    """Tune the cyclic garbage collector for batch checking, once the rules are loaded.

    A batch allocates a few objects per event and rule (events, outcomes, verdicts) that all
    live until the batch is written, so with Python's default thresholds the collector runs
    every few events and walks them again and again without finding garbage (they are freed
    by reference counting). Everything alive now (modules, rules, automata, the refusal
    model) moves to the permanent generation, and the youngest generation is collected every
    :data:`YOUNG_COLLECTION_EVERY` allocations. Only cyclic garbage waits longer for its turn.

    Call it again after the rules are replaced: it first returns the frozen heap to the
    collector, so the replaced pipeline's reference cycles are freed by the full collection
    that follows instead of staying frozen for good.
    """
    gc.unfreeze()
    gc.collect()
    gc.freeze()
    _, middle, oldest = gc.get_threshold()
    gc.set_threshold(YOUNG_COLLECTION_EVERY, middle, oldest)


def release_memory(*, collect: bool = True) -> None:
    """Collect everything (unless the caller just did, ``collect=False``), then ask the C
    allocator to return its free pages to the system.

    After a rule reload the replaced rules (automata, the refusal model, compiled patterns)
    are freed, but glibc keeps the freed pages in its heap: without this, each reload left the
    resident set some 25 MiB higher (measured with ``bench/rss.py``) although no object was
    kept. A no-op where the C library has no ``malloc_trim`` (musl, macOS).
    """
    if collect:
        gc.collect()
    if _malloc_trim is not None:
        _malloc_trim(0)


def _find_malloc_trim() -> Callable[[int], int] | None:
    name = ctypes.util.find_library("c")
    try:
        trim = ctypes.CDLL(name).malloc_trim
    except (OSError, AttributeError, TypeError):
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return trim


_malloc_trim = _find_malloc_trim()
