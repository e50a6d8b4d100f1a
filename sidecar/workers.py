"""``llm-sidecar run --workers N``: N check processes in one consumer group, from one command.

One Python process checks on one core. Past that, llm-sidecar scales the way Kafka consumers do:
more members of the same consumer group, each with its share of the partitions. In Kubernetes
those are replicas; on a plain machine this module starts them.

Each worker is an ordinary ``llm-sidecar run`` process with the same settings: it joins the
group, checks and commits its partitions, and serves its own ``/metrics``, ``/healthz``,
``/readyz`` and ``/v1/check`` on ``http.port + i`` (worker ``i`` of ``0..N-1``); a static member
id (``kafka.group_instance_id``) gets ``-i`` appended, so the workers do not fence each other.
The in-process judge's budgets (``judge.max_requests_per_s``, ``judge.max_tokens_per_minute``)
are divided among the workers, so N workers spend what one would. The parent only supervises:

* SIGTERM or SIGINT goes to every worker, which drains and commits as ``run`` does; the parent
  exits once all have, with 0 if all did;
* SIGHUP goes to every worker (each reloads its rules);
* a worker that exits on its own (a crash, a bad port) stops the others, and the parent exits
  with that worker's status, so the supervisor above restarts the whole set;
* on Linux, a worker whose parent dies gets SIGTERM (no orphans after ``kill -9``).

Signals reach a worker only through the parent: each worker runs in a session of its own, so
Ctrl-C in a terminal (which signals the whole process group) does not reach it twice. It starts
with SIGTERM, SIGINT and SIGHUP blocked, and ``serve`` unblocks them once its handlers are in
place: a signal sent while a worker is still starting waits for it instead of killing it. A
service manager that signals every process of the unit (systemd's default) still reaches a
worker twice, once directly and once through the parent; a worker counts the same signal
twice within :data:`SAME_STOP_WITHIN_S` as one request to stop.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from types import FrameType

from .errors import ConfigError, SidecarError
from .settings import Settings

__all__ = ["MAX_WORKERS", "check_workers", "run_workers", "worker_settings"]

log = logging.getLogger("sidecar.workers")

MAX_WORKERS = 64
POLL_S = 0.1
KILL_AFTER_S = 30.0
"""Past the drain deadline, a worker that still has not exited is killed."""
SAME_STOP_WITHIN_S = 1.0
"""A worker's second SIGTERM/SIGINT this soon after the first, of the same kind, is the same
request (see the module docstring), not the operator's "exit now"."""
FORWARDED_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
"""What the parent passes on to every worker."""


def check_workers(settings: Settings, workers: int) -> None:
    """Raise :class:`ConfigError` if ``workers`` processes cannot share these settings."""
    if settings.source != "kafka":
        raise ConfigError(
            f"run --workers needs source kafka, not {settings.source}: every MQTT subscriber "
            "receives every message, so each event would be checked once per worker"
        )
    last = settings.http.port + workers - 1
    if settings.http.port and last > 65535:
        raise ConfigError(
            f"run --workers {workers} serves HTTP on ports {settings.http.port}-{last}; "
            "ports end at 65535: lower http.port"
        )


def worker_settings(settings: Settings, index: int, workers: int) -> Settings:
    """Worker ``index``'s settings: HTTP on ``http.port + index`` (0 stays 0: any free port),
    and a static member id ``kafka.group_instance_id`` of its own (the id, ``-``, the index)."""
    if workers == 1:
        return settings
    update: dict[str, object] = {}
    if settings.http.port:
        update["http"] = settings.http.model_copy(update={"port": settings.http.port + index})
    if settings.kafka.group_instance_id:
        member = f"{settings.kafka.group_instance_id}-{index}"
        update["kafka"] = settings.kafka.model_copy(update={"group_instance_id": member})
    return settings.model_copy(update=update)


def run_workers(settings: Settings, workers: int, run_args: Sequence[str]) -> int:
    """Start ``workers`` ``llm-sidecar run`` processes with ``run_args`` and supervise them
    until they have all exited; returns the exit status (see the module docstring)."""
    check_workers(settings, workers)
    procs: list[subprocess.Popen[bytes]] = []
    stopping = False
    stop_signal = signal.SIGTERM
    told: set[int] = set()
    """The pids that were sent the stop signal."""

    def forward(signum: int, _frame: FrameType | None) -> None:
        nonlocal stopping, stop_signal
        if signum != signal.SIGHUP:
            stopping, stop_signal = True, signal.Signals(signum)
        for proc in procs:
            if proc.poll() is None:
                proc.send_signal(signum)
                if stopping:
                    told.add(proc.pid)

    previous = {sig: signal.signal(sig, forward) for sig in FORWARDED_SIGNALS}
    prepare = _worker_preexec(os.getpid())
    try:
        for i in range(workers):
            if stopping:  # a signal came while the workers were starting: start no more
                break
            try:
                proc = subprocess.Popen(
                    [sys.executable, "-m", "sidecar", "run", *run_args, f"--worker={i}/{workers}"],
                    preexec_fn=prepare,
                    start_new_session=True,
                )
            except OSError as exc:  # the workers started so far are stopped below
                raise SidecarError(f"cannot start worker {i}: {exc}") from None
            procs.append(proc)
        if stopping:  # a worker started while the signal was being forwarded gets it too
            for proc in procs:
                if proc.pid not in told and proc.poll() is None:
                    proc.send_signal(stop_signal)
                    told.add(proc.pid)
        port = settings.http.port
        log.info(
            "started %d workers (pids %s)%s",
            workers,
            ", ".join(str(p.pid) for p in procs),
            f", HTTP on ports {port}-{port + workers - 1}" if port else "",
        )
        status: int | None = None  # set by the first worker to exit on its own
        deadline: float | None = None
        exited: set[int] = set()
        while len(exited) < len(procs):
            for i, proc in enumerate(procs):
                code = proc.poll()
                if code is None or i in exited:
                    continue
                exited.add(i)
                if not stopping:
                    log.error(
                        "worker %d (pid %d) exited with status %d; stopping the other workers",
                        i,
                        proc.pid,
                        code,
                    )
                    status = code if code > 0 else 1
                    stopping = True
                    for other in procs:
                        if other.poll() is None:
                            other.terminate()
            if stopping and deadline is None:
                deadline = time.monotonic() + settings.limits.drain_timeout_s + KILL_AFTER_S
            if deadline is not None and time.monotonic() > deadline:
                for proc in procs:
                    if proc.poll() is None:
                        log.error("worker pid %d did not stop in time; killing it", proc.pid)
                        proc.kill()
                        proc.wait()
            if len(exited) < len(procs):
                time.sleep(POLL_S)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        for proc in procs:  # only if the parent itself failed
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(settings.limits.drain_timeout_s + KILL_AFTER_S)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
    if status is not None:
        return status
    codes = [p.wait() for p in procs]  # all have exited: no wait
    return max(code if code >= 0 else 1 for code in codes)


def _worker_preexec(parent: int) -> Callable[[], None]:
    """A ``preexec_fn`` (run in the child between fork and exec): the forwarded signals blocked
    until ``serve`` handles them (the mask survives exec), and on Linux SIGTERM when the
    parent dies; a child whose parent died before that was set exits at once."""
    death_signal = _death_signal()

    def prepare() -> None:
        signal.pthread_sigmask(signal.SIG_BLOCK, FORWARDED_SIGNALS)
        if death_signal is not None:
            death_signal()
            if os.getppid() != parent:  # the parent died between fork and prctl
                os._exit(1)

    return prepare


def _death_signal() -> Callable[[], None] | None:
    """A function that makes the calling process get SIGTERM when its parent dies (Linux)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    pr_set_pdeathsig = 1

    def set_death_signal() -> None:
        prctl(pr_set_pdeathsig, signal.SIGTERM)

    return set_death_signal
