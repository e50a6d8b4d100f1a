"""The interface every event source implements (Kafka, MQTT, a file).

A source yields batches of raw :class:`Record` s and is told, batch by batch, when every
record of a batch has been fully handled (checked, verdict and dead letters written); only then
may it acknowledge them upstream. That is the whole at-least-once contract.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass

from ..lifecycle import Lifecycle

__all__ = ["Record", "Source"]


@dataclass(frozen=True, slots=True)
class Record:
    """One raw record as the source delivered it."""

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

    @abstractmethod
    def batches(self) -> AsyncIterator[list[Record]]:
        """Yield batches until :meth:`stop_fetching` is called or the source ends."""

    @abstractmethod
    def stop_fetching(self) -> None:
        """Make :meth:`batches` end after the batch in hand (the drain starts here)."""

    @abstractmethod
    async def ack(self, batch: Sequence[Record]) -> None:
        """Every record of ``batch`` is handled: commit or acknowledge it upstream."""

    async def ready(self) -> bool:
        """Is the source consuming and its server reachable? (``/readyz``)"""
        return True

    def lag(self) -> dict[tuple[str, int], int]:
        """Records behind the end of each assigned partition, where the source knows it."""
        return {}
