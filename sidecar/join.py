"""Prompt and response logged as two events: a bounded in-memory join by request id.

Gateways often log the request when it arrives and the response when it completes: two records
with the same ``request_id`` (or the same ``id``), at different times, maybe in different
partitions. With ``join.enabled``, an event that carries exactly one of ``prompt`` and
``response`` is a *half*. Halves wait here, keyed by ``request_id`` (else ``id``), until the
other half arrives; the pair becomes one event (``id`` = the key, the prompt half's fields,
then the response half's, the response's ``ts``) and every rule runs on it. A half that finds
no pair within ``join.ttl_s``, or that is pushed out because ``join.max_pending`` halves wait
already (the oldest goes first), is an *orphan*: it is checked alone, so only rules whose field
it has (and rules that need no text) run, and it is counted by side. A half that repeats a
waiting half, or a pair completed within the last ``max_pending`` pairs, is a duplicate:
counted and dropped. Events with both fields pass straight through.

**Trace ids.** Every event handed out comes with the trace id its verdict carries (see
:func:`~sidecar.pipeline.trace_id_of`): an event's own ``trace_id`` field, else its record's
``traceparent`` header. A pair's is its merged ``trace_id`` field (the response half's over the
prompt half's), else the prompt half's record's header, else the response half's.

**The commit point.** Nothing may be committed before a waiting half is checked or expired. For
each partition the joiner knows the highest offset handed to it and the offsets of records
whose halves still wait; the partition may be committed up to (not including) the earliest
waiting offset, or past the last record handed in when nothing waits. :meth:`Joiner.offer`
returns, per partition whose commit point moved, one record marker at ``commit point - 1``
(value empty) for the source's ``ack``, which commits "everything up to here is handled".
This holds for a source that commits offsets (Kafka); the MQTT source acknowledges messages one
by one, so the join is refused there.

**A restart** loses the waiting halves, and that is safe: their records were never committed,
so the group reads them again from the commit point and they wait again (a pair can complete
across the restart). Events after the commit point that were already checked are checked again:
duplicate verdicts, as at-least-once allows. A stop does not flush waiting halves as orphans.
A half from a partition revoked while it waits is still joined or expired here; its records
are also read again by the partition's new owner (a duplicate, never a loss).
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

from prometheus_client import CollectorRegistry, Counter, Gauge
from pydantic import ValidationError

from .events import Event, as_dict, validate
from .pipeline import header_trace_id, own_trace_id, trace_id_of
from .settings import JoinSettings
from .sources.base import Record

__all__ = ["SIDES", "JoinMetrics", "JoinSettings", "Joiner", "Ready"]

Side = Literal["prompt", "response"]
SIDES: Final[tuple[Side, Side]] = ("prompt", "response")
Partition = tuple[str, int]
Ready = tuple[Event, str | None]
"""An event to check now, and the trace id of the request behind it (None for none)."""


@dataclass(slots=True)
class _Half:
    event: Event
    side: Side
    where: Partition
    offset: int
    arrived: float
    header_trace: str | None
    """The trace id of its record's ``traceparent`` header (the record is not kept)."""


class JoinMetrics:
    def __init__(self, registry: CollectorRegistry | None) -> None:
        r = registry if registry is not None else CollectorRegistry()
        self.pairs = Counter(
            "llm_sidecar_join_pairs", "Prompt and response halves joined into one event.",
            registry=r,
        )  # fmt: skip
        self.orphans = Counter(
            "llm_sidecar_join_orphans",
            "Halves checked alone: no pair within join.ttl_s (expired), pushed out of the "
            "bounded join (overflow) or left at the end of a replay (end), by side.",
            ["side", "reason"],
            registry=r,
        )
        self.duplicates = Counter(
            "llm_sidecar_join_duplicates",
            "Halves dropped because the same side of the same request was already waiting or "
            "was joined recently.",
            ["side"],
            registry=r,
        )
        self.pending = Gauge(
            "llm_sidecar_join_pending", "Halves waiting for their pair.", registry=r
        )
        for side in SIDES:
            self.duplicates.labels(side)
            for reason in ("expired", "overflow", "end"):
                self.orphans.labels(side, reason)


class Joiner:
    """The join state of one consumer; :meth:`offer` once per batch (and when :meth:`due`)."""

    def __init__(
        self,
        settings: JoinSettings,
        registry: CollectorRegistry | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.settings = settings
        self.metrics = JoinMetrics(registry)
        self._clock = clock
        self._waiting: OrderedDict[tuple[str, Side], _Half] = OrderedDict()
        self._done_keys: OrderedDict[str, None] = OrderedDict()
        self._seen: dict[Partition, int] = {}  # highest offset handed in
        self._held: dict[Partition, dict[int, int]] = {}  # offset -> halves waiting there
        self._acked: dict[Partition, int] = {}  # commit point last handed out
        self.metrics.pending.set_function(lambda: len(self._waiting))

    # -- what the app calls ----------------------------------------------------------------

    @property
    def waiting(self) -> int:
        return len(self._waiting)

    def due(self) -> bool:
        """Is a waiting half older than the TTL (so an idle loop turn should expire it)?"""
        if not self._waiting:
            return False
        oldest = next(iter(self._waiting.values()))
        return self._clock() - oldest.arrived >= self.settings.ttl_s

    def offer(
        self, decoded: Sequence[tuple[Record, Event]], batch: Sequence[Record]
    ) -> tuple[list[Ready], list[Record]]:
        """Take a batch's events; return the events to check now (with their trace ids) and
        the records to ack.

        ``decoded`` pairs each event with its record; ``batch`` is every record of the batch
        (dead letters included: they are handled once the batch is written).
        """
        ready: list[Ready] = []
        for record, event in decoded:
            self._take(record, event, ready)
        for r in batch:
            key = (r.topic, r.partition)
            if r.offset > self._seen.get(key, -1):
                self._seen[key] = r.offset
        self._expire(ready)
        return ready, self._commit_points()

    def flush(self) -> list[Ready]:
        """Every waiting half, as orphans (reason ``end``): the input is over (replay)."""
        ready: list[Ready] = []
        while self._waiting:
            _, half = self._waiting.popitem(last=False)
            self._orphan(half, "end", ready)
        return ready

    # -- joining ---------------------------------------------------------------------------

    def _take(self, record: Record, event: Event, ready: list[Ready]) -> None:
        side = _side(event)
        if side is None:
            traced = trace_id_of(record, event) if record.headers or event.extra else None
            ready.append((event, traced))
            return
        key = _key(event, self.settings.key)
        if key in self._done_keys:
            self.metrics.duplicates.labels(side).inc()
            return
        if (key, side) in self._waiting:
            self.metrics.duplicates.labels(side).inc()
            return
        header_trace = header_trace_id(record.headers) if record.headers else None
        other = self._waiting.pop((key, _other(side)), None)
        if other is not None:
            self._release(other)
            if side == "response":
                merged = _merge(key, other.event, event)
                traced = own_trace_id(merged) or other.header_trace or header_trace
            else:
                merged = _merge(key, event, other.event)
                traced = own_trace_id(merged) or header_trace or other.header_trace
            ready.append((merged, traced))
            self.metrics.pairs.inc()
            self._done_keys[key] = None
            if len(self._done_keys) > self.settings.max_pending:
                self._done_keys.popitem(last=False)
            return
        where = (record.topic, record.partition)
        self._waiting[(key, side)] = _Half(
            event, side, where, record.offset, self._clock(), header_trace
        )
        held = self._held.setdefault(where, {})
        held[record.offset] = held.get(record.offset, 0) + 1
        while len(self._waiting) > self.settings.max_pending:
            _, oldest = self._waiting.popitem(last=False)
            self._orphan(oldest, "overflow", ready)

    def _expire(self, ready: list[Ready]) -> None:
        horizon = self._clock() - self.settings.ttl_s
        while self._waiting:
            half = next(iter(self._waiting.values()))
            if half.arrived > horizon:
                break
            self._waiting.popitem(last=False)
            self._orphan(half, "expired", ready)

    def _orphan(self, half: _Half, reason: str, ready: list[Ready]) -> None:
        self._release(half)
        self.metrics.orphans.labels(half.side, reason).inc()
        ready.append((half.event, own_trace_id(half.event) or half.header_trace))

    def _release(self, half: _Half) -> None:
        held = self._held[half.where]
        n = held[half.offset] - 1
        if n:
            held[half.offset] = n
        else:
            del held[half.offset]

    def _commit_points(self) -> list[Record]:
        """One marker record per partition whose commit point moved (see the module doc)."""
        markers = []
        for where, seen in self._seen.items():
            held = self._held.get(where)
            point = min(held) if held else seen + 1
            if point > self._acked.get(where, 0):
                self._acked[where] = point
                markers.append(Record(b"", where[0], where[1], point - 1))
        return markers


def _side(event: Event) -> Side | None:
    has_prompt, has_response = event.prompt is not None, event.response is not None
    if has_prompt == has_response:
        return None
    return "prompt" if has_prompt else "response"


def _other(side: Side) -> Side:
    return "response" if side == "prompt" else "prompt"


def _key(event: Event, field: str) -> str:
    if field != "id" and event.extra:
        value = event.extra.get(field)
        if isinstance(value, str | int) and not isinstance(value, bool) and str(value):
            return str(value)
    return event.id


def _set(event: Event) -> dict[str, Any]:
    """A half's fields that are set: a field sent as null (one of its own, or in ``attack``)
    does not unset the other half's."""
    doc = {}
    for name, value in as_dict(event).items():
        if value is None:
            continue
        if name == "attack":
            value = {k: v for k, v in value.items() if v is not None}
        doc[name] = value
    return doc


def _merge(key: str, prompt_half: Event, response_half: Event) -> Event:
    """One event from two halves: the prompt half's fields, then the response half's."""
    doc = _set(prompt_half)
    for name, value in _set(response_half).items():
        if name != "prompt":
            doc[name] = value
    doc["id"] = key
    doc["prompt"] = prompt_half.prompt
    try:
        return validate(doc)
    except ValidationError:  # two halves that each decoded cannot fail together; be safe
        return response_half
