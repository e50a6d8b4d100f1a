"""Record batches the Kafka client cannot read, kept from stopping the consumer.

aiokafka unpacks a fetched record batch when the caller takes its records, inside
``getmany``. A batch it cannot read (a codec it has no library for, a failed CRC, a payload
that does not decompress) raises there, without saying which partition it came from, and
the records of the same fetch taken before it are dropped with it while the consumer's
position moves past them. The next ``getmany`` fetches the same batch and raises again: a
process that lets the error through dies on every restart, and one that retries spins.

:func:`install` wraps the client's per-partition record iterator once per process. While a
caller has opened a :class:`Watch` (a context variable, so each consumer sees only the
batches of its own fetches), a batch that fails to unpack ends the iteration cleanly: the
records before it are delivered, the position stays at the start of the bad batch, and the
watch is told which partition and offsets it was, and why. What happens next (pause the
partition, or skip the batch) is the source's choice (``kafka.on_undecodable``).
"""

from __future__ import annotations

import contextvars
import logging
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from aiokafka.consumer import fetcher
from aiokafka.structs import TopicPartition

__all__ = ["BadBatch", "Watch", "install", "watched"]

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class BadBatch:
    """A record batch of ``tp`` holding offsets ``first`` to ``end - 1`` that cannot be read."""

    tp: TopicPartition
    first: int
    end: int
    error: str


class Watch:
    """Collects the bad batches met while it is the current watch."""

    def __init__(self) -> None:
        self.found: dict[TopicPartition, BadBatch] = {}

    def take(self) -> list[BadBatch]:
        found, self.found = list(self.found.values()), {}
        return found


_current: contextvars.ContextVar[Watch | None] = contextvars.ContextVar(
    "llm_sidecar_kafka_watch", default=None
)


def watched(watch: Watch) -> contextvars.Context:
    """A context in which ``watch`` is the current watch: run the fetches in it
    (``loop.create_task(..., context=...)``)."""
    ctx = contextvars.copy_context()
    ctx.run(_current.set, watch)
    return ctx


class _LastBatch:
    """The client's record set, remembering the last batch taken from it (its offsets can be
    read from the batch header even when its records cannot)."""

    __slots__ = ("inner", "last")

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.last: Any = None

    def has_next(self) -> bool:
        return bool(self.inner.has_next())

    def next_batch(self) -> Any:
        self.last = self.inner.next_batch()
        return self.last


_Base: Any = fetcher.PartitionRecords


class _GuardedPartitionRecords(_Base):  # type: ignore[misc]
    def __init__(self, tp: TopicPartition, records: Any, *args: Any) -> None:
        super().__init__(tp, _LastBatch(records), *args)

    def _unpack_records(self) -> Iterator[Any]:
        watch = _current.get()
        if watch is None:  # a consumer that is not ours: the client's own behaviour
            yield from super()._unpack_records()
            return
        try:
            yield from super()._unpack_records()
        except Exception as exc:  # whatever unpacking raises: codec, CRC, a short buffer
            batch = self._records.last
            if batch is None:
                raise
            first = int(self.next_fetch_offset)
            end = max(int(batch.next_offset), first + 1)
            watch.found[self._tp] = BadBatch(self._tp, first, end, f"{type(exc).__name__}: {exc}")
            # Ends cleanly: what came before the batch is delivered, and the client's position
            # stays at its start (``next_fetch_offset``), so nothing after it is read unseen.


def install() -> None:
    """Wrap the client's record iterator; idempotent. Consumers outside a :class:`Watch`
    behave exactly as before."""
    if fetcher.PartitionRecords is not _GuardedPartitionRecords:
        fetcher.PartitionRecords = _GuardedPartitionRecords
