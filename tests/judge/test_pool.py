"""The bounded judge pool: dropping when full, capped concurrency, drain with a deadline."""

from __future__ import annotations

import asyncio
import logging
import time

import pytest

from sidecar.judge.pool import JudgePool


async def test_offer_refuses_when_full_or_stopped() -> None:
    gate = asyncio.Event()

    async def handler(job: int) -> None:
        await gate.wait()

    pool: JudgePool[int] = JudgePool(handler, queue_size=2, concurrency=1)
    assert not pool.offer(0)  # not started
    pool.start()
    assert pool.offer(1)
    await asyncio.sleep(0)  # the worker takes job 1
    assert pool.offer(2) and pool.offer(3)
    assert not pool.offer(4)
    assert pool.depth == 2 and pool.in_flight == 1
    gate.set()
    assert await pool.stop(1.0) == 0
    assert pool.completed == 3
    assert not pool.offer(5)
    assert await pool.stop(1.0) == 0  # idempotent


async def test_concurrency_is_capped() -> None:
    running = peak = 0

    async def handler(job: int) -> None:
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await asyncio.sleep(0.01)
        running -= 1

    pool: JudgePool[int] = JudgePool(handler, queue_size=100, concurrency=3)
    pool.start()
    for i in range(20):
        assert pool.offer(i)
    await pool.join()
    await pool.stop(1.0)
    assert peak == 3
    assert pool.completed == 20


async def test_stop_abandons_what_misses_the_deadline() -> None:
    async def handler(job: int) -> None:
        await asyncio.sleep(3600)

    pool: JudgePool[int] = JudgePool(handler, queue_size=10, concurrency=2)
    pool.start()
    for i in range(5):
        pool.offer(i)
    await asyncio.sleep(0)
    started = time.monotonic()
    assert await pool.stop(0.1) == 5  # 2 in flight, 3 queued
    assert time.monotonic() - started < 0.5
    assert pool.depth == 0 and pool.in_flight == 0


async def test_a_failing_job_does_not_kill_its_worker() -> None:
    seen: list[int] = []

    async def handler(job: int) -> None:
        if job == 0:
            raise RuntimeError("boom")
        seen.append(job)

    pool: JudgePool[int] = JudgePool(handler, queue_size=10, concurrency=1)
    pool.start()
    for i in range(3):
        pool.offer(i)
    await pool.join()
    await pool.stop(0)
    assert seen == [1, 2]


async def test_a_fault_on_every_job_is_logged_a_few_times_then_summed_up(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A handler fault repeats on every sampled event: each used to log a full traceback
    (2,563 stderr lines for 30 events in one run). Now the first three a minute, then one
    line with the count; every one is counted in ``failed``."""

    async def handler(job: int) -> None:
        raise OverflowError("port must be 0-65535")

    pool: JudgePool[int] = JudgePool(handler, queue_size=50, concurrency=2)
    pool.start()
    caplog.set_level(logging.WARNING, "sidecar.judge.pool")
    for i in range(40):
        assert pool.offer(i)
    await pool.join()
    await pool.stop(0)
    assert pool.failed == 40 and pool.completed == 0
    tracebacks = [r for r in caplog.records if r.exc_info is not None]
    assert len(tracebacks) == 3
    [summary] = [r.getMessage() for r in caplog.records if r.exc_info is None]
    assert summary.startswith("37 more judge pool job failures in the last ")
    assert summary.endswith("(OverflowError 37); all of them are counted")
