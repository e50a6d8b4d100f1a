"""A bounded queue of judge jobs and a capped set of workers.

:meth:`JudgePool.offer` never waits: when the queue is full it returns False and the caller
(the sampler) counts a skip and samples less. That is the explicit choice between waiting and
dropping: the hot path drops. :meth:`JudgePool.stop` stops taking jobs, lets the workers
finish what is queued within a deadline, then cancels the rest and awaits the workers.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

from ..logs import LogBudget

__all__ = ["JudgePool"]

log = logging.getLogger(__name__)

T = TypeVar("T")


class JudgePool(Generic[T]):
    """``concurrency`` workers running ``handler`` on jobs from a queue of ``queue_size``."""

    def __init__(
        self,
        handler: Callable[[T], Awaitable[None]],
        *,
        queue_size: int,
        concurrency: int,
        name: str = "judge",
        on_failure: Callable[[], None] | None = None,
    ) -> None:
        self._handler = handler
        self._on_failure = on_failure
        self.queue_size = queue_size
        self.concurrency = concurrency
        self.name = name
        self._queue: asyncio.Queue[T] = asyncio.Queue(maxsize=queue_size)
        self._workers: list[asyncio.Task[None]] = []
        self._accepting = False
        self.in_flight = 0
        self.completed = 0
        self.abandoned = 0
        self.failed = 0
        """Jobs that raised: a fault of the handler, not of the judge endpoint (those are
        the handler's own outcomes)."""
        # A fault repeats on every job: the first few a minute with their traceback, the
        # rest summed up by exception type.
        self._failure_logs = LogBudget(f"{name} pool job failures", log, limit=3)

    @property
    def depth(self) -> int:
        """Jobs waiting in the queue (not counting those being worked on)."""
        return self._queue.qsize()

    @property
    def full(self) -> bool:
        return self._queue.full()

    @property
    def accepting(self) -> bool:
        return self._accepting

    def start(self) -> None:
        if self._workers or self._accepting:
            return
        self._accepting = True
        self._workers = [
            asyncio.create_task(self._work(), name=f"{self.name}-worker-{i}")
            for i in range(self.concurrency)
        ]

    def offer(self, job: T) -> bool:
        """Queue ``job`` if there is room; never waits. False when full or stopped."""
        if not self._accepting:
            return False
        try:
            self._queue.put_nowait(job)
        except asyncio.QueueFull:
            return False
        return True

    async def join(self) -> None:
        """Wait until every queued job has been handled."""
        await self._queue.join()

    async def stop(self, deadline: float) -> int:
        """Finish queued jobs within ``deadline`` seconds, then cancel; returns jobs abandoned.

        Idempotent: a second call finds nothing left to do and returns 0.
        """
        self._accepting = False
        workers, self._workers = self._workers, []
        if not workers:
            return 0
        if deadline > 0:
            try:
                await asyncio.wait_for(self._queue.join(), deadline)
            except TimeoutError:
                log.warning(
                    "%s pool: drain deadline of %.1fs passed with %d queued and %d in flight",
                    self.name,
                    deadline,
                    self._queue.qsize(),
                    self.in_flight,
                )
        abandoned = self.in_flight
        for worker in workers:
            worker.cancel()
        for worker in workers:
            with contextlib.suppress(asyncio.CancelledError):
                await worker
        while True:
            try:
                self._queue.get_nowait()
            except asyncio.QueueEmpty:
                break
            self._queue.task_done()
            abandoned += 1
        self.abandoned += abandoned
        self._failure_logs.flush()
        return abandoned

    async def _work(self) -> None:
        while True:
            job = await self._queue.get()
            self.in_flight += 1
            try:
                await self._handler(job)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                self.failed += 1
                if self._failure_logs.allow(type(exc).__name__):
                    log.exception("%s pool: a job failed", self.name)
                if self._on_failure is not None:
                    self._on_failure()
            else:
                self.completed += 1
            finally:
                self.in_flight -= 1
                self._queue.task_done()
