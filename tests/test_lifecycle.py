from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from sidecar.app import serve
from sidecar.lifecycle import run_stop_steps
from sidecar.settings import Settings

log = logging.getLogger("test-stop")


async def test_every_stop_step_runs_whatever_the_one_before_did(
    caplog: pytest.LogCaptureFixture,
) -> None:
    ran: list[str] = []

    async def inner_cancel() -> None:
        # What aiokafka's fetcher does when closed mid-retry: awaits its own cancelled task.
        task = asyncio.create_task(asyncio.sleep(10))
        await asyncio.sleep(0)
        task.cancel()
        ran.append("cancelled")
        await task

    async def hangs() -> None:
        ran.append("hangs")
        await asyncio.sleep(60)

    async def raises() -> None:
        ran.append("raises")
        raise RuntimeError("boom")

    async def fine() -> None:
        ran.append("fine")

    caplog.set_level(logging.INFO, "test-stop")
    loop = asyncio.get_running_loop()
    started = loop.time()
    failed = await run_stop_steps(
        [
            ("consumer", inner_cancel, 1.0),
            ("judge", hangs, 0.2),
            ("producer", raises, 1.0),
            ("sink", fine, 1.0),
        ],
        log,
    )
    assert ran == ["cancelled", "hangs", "raises", "fine"]
    assert failed == 3
    assert loop.time() - started < 1.0
    lines = [r.getMessage() for r in caplog.records if r.name == "test-stop"]
    assert len(lines) == 3
    assert "consumer" in lines[0] and "judge" in lines[1] and "boom" in lines[2]


async def test_cancelling_the_stopping_task_itself_still_cancels_it() -> None:
    async def hangs() -> None:
        await asyncio.sleep(60)

    task = asyncio.create_task(run_stop_steps([("x", hangs, 30.0)], log))
    await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


class _QuickService:
    """A service whose batch loop ends the moment it is asked to stop: the drain of an idle
    consumer, which finishes in the same turn of the loop as the signal."""

    def __init__(self) -> None:
        self.asked = asyncio.Event()
        self.stopped = False

    async def start(self) -> None:
        pass

    async def run(self) -> None:
        await self.asked.wait()

    async def stop(self) -> None:
        self.stopped = True

    def request_stop(self) -> None:
        self.asked.set()

    def request_reload(self) -> None:
        pass


async def test_a_drain_that_ends_with_the_signal_is_reported_as_drained(
    caplog: pytest.LogCaptureFixture,
) -> None:
    service = _QuickService()
    caplog.set_level(logging.INFO, "sidecar.app")
    asyncio.get_running_loop().call_later(0.05, os.kill, os.getpid(), signal.SIGTERM)
    assert await serve(Settings(), app=service) == 0
    assert service.stopped
    lines = [r.getMessage() for r in caplog.records if r.name == "sidecar.app"]
    assert lines == ["received SIGTERM", "drained"]


SLOW_STOP = """
import asyncio, sys
from sidecar.app import serve
from sidecar.settings import Settings

class SlowStop:
    def __init__(self):
        self.asked = asyncio.Event()
    async def start(self):
        print("started", flush=True)
    async def run(self):
        await self.asked.wait()
    async def stop(self):
        print("stopping", flush=True)
        await asyncio.sleep(float(sys.argv[2]))
    def request_stop(self):
        self.asked.set()
    def request_reload(self):
        pass

sys.exit(asyncio.run(serve(Settings(), app=SlowStop(), same_stop_within_s=float(sys.argv[1]))))
"""


def test_a_second_signal_while_stopping_exits_130_at_once(tmp_path: Path) -> None:
    """The last commit and the judge's drain can take a while; a second signal then must
    still end the process at once with 130, not leave it to the default action (143)."""
    with slow_stop(tmp_path, same_stop_within_s=0, stop_s=30) as proc:
        proc.send_signal(signal.SIGTERM)
        assert proc.stdout is not None and proc.stdout.readline().strip() == "stopping"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 130


def test_a_worker_takes_the_same_signal_twice_at_once_for_one_stop(tmp_path: Path) -> None:
    """A worker of run --workers under a service manager that signals the whole unit gets the
    stop twice at once (directly and through its parent): it still drains and exits 0."""
    with slow_stop(tmp_path, same_stop_within_s=5, stop_s=1) as proc:
        proc.send_signal(signal.SIGTERM)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0
        assert proc.stdout is not None and proc.stdout.read().split() == ["stopping"]


@contextlib.contextmanager
def slow_stop(
    tmp_path: Path, *, same_stop_within_s: float, stop_s: float
) -> Iterator[subprocess.Popen[str]]:
    """A process serving a service whose stop() takes ``stop_s``, once it has started."""
    with subprocess.Popen(
        [sys.executable, "-c", SLOW_STOP, str(same_stop_within_s), str(stop_s)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
    ) as proc:
        try:
            assert proc.stdout is not None and proc.stdout.readline().strip() == "started"
            yield proc
        finally:
            proc.kill()
