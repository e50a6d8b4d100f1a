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
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from types import FrameType

from .errors import ConfigError
from .settings import Settings

__all__ = ["MAX_WORKERS", "check_workers", "run_workers", "worker_settings"]

log = logging.getLogger("sidecar.workers")

MAX_WORKERS = 64
POLL_S = 0.1
KILL_AFTER_S = 30.0
"""Past the drain deadline, a worker that still has not exited is killed."""


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

    def forward(signum: int, _frame: FrameType | None) -> None:
        nonlocal stopping
        if signum != signal.SIGHUP:
            stopping = True
        for proc in procs:
            if proc.poll() is None:
                proc.send_signal(signum)

    handled = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
    previous = {sig: signal.signal(sig, forward) for sig in handled}
    try:
        for i in range(workers):
            procs.append(
                subprocess.Popen(
                    [sys.executable, "-m", "sidecar", "run", *run_args, f"--worker={i}/{workers}"],
                    preexec_fn=_die_with_parent(),
                )
            )
        if stopping:  # a signal came while the workers were starting
            for proc in procs:
                proc.terminate()
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
                proc.wait()
    if status is not None:
        return status
    codes = [p.wait() for p in procs]  # all have exited: no wait
    return max(code if code >= 0 else 1 for code in codes)


def _die_with_parent() -> Callable[[], None] | None:
    """A ``preexec_fn`` that makes the child get SIGTERM when its parent dies (Linux)."""
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
