"""The process heap: freed memory goes back to the system after a reload."""

from __future__ import annotations

import ctypes.util
import sys

import pytest

from sidecar import heap


def rss_mib() -> float:
    with open("/proc/self/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS in /proc/self/status")


glibc = pytest.mark.skipif(
    not sys.platform.startswith("linux") or ctypes.util.find_library("c") != "libc.so.6",
    reason="malloc_trim is glibc's",
)


@glibc
def test_malloc_trim_is_found_on_glibc() -> None:
    assert heap._malloc_trim is not None


@glibc
def test_release_memory_returns_freed_pages_that_the_allocator_kept() -> None:
    # 200 MB in blocks below glibc's mmap threshold, then all freed but the last one, which
    # pins the top of the heap: glibc keeps the freed pages resident until it is told to trim.
    blocks = [bytearray(50_000) for _ in range(4_000)]
    last = blocks[-1]
    del blocks
    kept = rss_mib()
    heap.release_memory()
    assert rss_mib() < kept - 100, "the freed 200 MB stayed resident"
    assert len(last) == 50_000
