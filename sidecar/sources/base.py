"""The interface every event source implements (Kafka, MQTT, a file).

A source yields batches of raw :class:`Record` s and is told, batch by batch, when every
record of a batch has been fully handled (checked, verdict and dead letters written); only then
may it acknowledge them upstream. That is the whole at-least-once contract.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import time
from abc import abstractmethod
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass

from ..lifecycle import Lifecycle

__all__ = ["Reachability", "Record", "Source"]


@dataclass(slots=True)
class Record:
    """One raw record as the source delivered it. Never modified once made.

    Not a frozen dataclass: every record of the stream is made on the hot path, and a frozen
    dataclass's constructor sets each field through ``object.__setattr__``, which costs
    0.6 µs more per record (0.78 against 0.16 µs, positional arguments).
    """

    value: bytes
    topic: str
    partition: int
    offset: int
    key: bytes | None = None
    timestamp_ms: int | None = None
    headers: tuple[tuple[str, bytes], ...] = ()


class Source(Lifecycle):
    """Base class: ``start()``, ``batches()``, ``ack()``, idempotent ``stop()``."""

    name: str = "source"
    commit_successes: int = 0
    """Acknowledgements upstream that succeeded / failed (Kafka offset commits)."""
    commit_failures: int = 0
    undecodable: dict[str, int] | None = None
    """Record batches the client could not read, by what was done (``paused``, ``skipped``);
    None for a source that has no such batches."""
    records_skipped: int = 0
    """Records never checked because their batch was skipped."""
    stuck_joins: int = 0
    """Group joins given up as stuck, each followed by a fresh consumer (Kafka)."""

    @abstractmethod
    def batches(self) -> AsyncIterator[list[Record]]:
        """Yield batches until :meth:`stop_fetching` is called or the source ends."""

    @abstractmethod
    def stop_fetching(self) -> None:
        """Make :meth:`batches` end after the batch in hand (the drain starts here)."""

    @abstractmethod
    async def ack(self, batch: Sequence[Record]) -> None:
        """Every record of ``batch`` is handled: commit or acknowledge it upstream."""

    def not_ready(self) -> str | None:
        """None when consuming and the server is reachable, else what the source waits for.

        Answered from state the batch loop keeps, never by a network call: ``/readyz`` must
        answer at once, also while connections hang."""
        return None

    async def ready(self) -> bool:
        """``not_ready() is None``, for callers that want a yes or no."""
        return self.not_ready() is None

    def lag(self) -> dict[tuple[str, int], int]:
        """Records behind the end of each assigned partition, where the source knows it."""
        return {}


class Reachability:
    """Whether a server answers, as the loop that talks to it last saw, and the log of it.

    An outage is logged once when it starts, then at most once every ``every_s`` while it
    lasts, and once when it ends, however often the loop retries in between.
    """

    def __init__(
        self,
        what: str,
        log: logging.Logger,
        *,
        every_s: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.what = what
        self.log = log
        self.every_s = every_s
        self.clock = clock
        self.reachable: bool | None = None
        """None until the first attempt has an outcome."""
        self.reason = "connecting"
        self.failures = 0
        self.since = clock()
        self._logged_at = 0.0

    def down(self, reason: str) -> None:
        now = self.clock()
        self.reason = reason
        self.failures += 1
        if self.reachable is not False:
            if self.reachable:  # it was up, so the outage starts now (else: at start)
                self.since = now
            self.reachable = False
            self.failures = 1
            self._logged_at = now
            self.log.warning(
                "%s is unreachable (%s); retrying with backoff, not ready until it answers",
                self.what,
                reason,
            )
        elif now - self._logged_at >= self.every_s:
            self._logged_at = now
            self.log.warning(
                "%s still unreachable after %.0fs and %d attempts (%s)",
                self.what,
                now - self.since,
                self.failures,
                reason,
            )

    def up(self, since: float | None = None) -> None:
        """It answers; ``since``: from when on (by :attr:`clock`), if earlier than now (a
        connection that is counted as up only once it has held)."""
        if self.reachable is False:
            back = self.clock() if since is None else since
            self.log.warning("%s is reachable again after %.0fs", self.what, back - self.since)
        self.reachable = True
        self.reason = ""

    def waiting_for(self) -> str | None:
        """None when reachable, else a sentence for ``/readyz``."""
        if self.reachable:
            return None
        if self.reachable is None:
            return f"waiting for {self.what}: {self.reason}"
        return (
            f"waiting for {self.what}: unreachable for {self.clock() - self.since:.0f}s "
            f"({self.reason})"
        )


async def tcp_problem(host: str, port: int) -> str | None:
    """Why ``host:port`` does not take a TCP connection within 3 s, or None if it does: what
    tells a broker that is down or misnamed from one whose port answers but not as the
    client expects (another service, a TLS mismatch)."""
    try:
        _, writer = await asyncio.wait_for(asyncio.open_connection(host, port), 3.0)
    except ConnectionRefusedError:
        return "connection refused"
    except socket.gaierror as err:
        return f"cannot resolve {host}: {err.strerror}"
    except TimeoutError:
        return "no TCP answer within 3s"
    except (OSError, ValueError) as err:
        return str(err) or type(err).__name__
    writer.close()
    with contextlib.suppress(OSError):
        await writer.wait_closed()
    return None
