"""Where llm-sidecar writes: the dead-letter topic and the optional verdict topic.

One idempotence-free producer (``acks="all"``) serves both. :meth:`KafkaSink.write` returns only
when the broker has acknowledged every record of the batch, so the app can commit offsets
afterwards; if it raises, nothing may be committed and the batch is written again. The producer
connects on the first write (and again after a failed connect), never at start: a process whose
Kafka is not there yet must come up and wait, not exit.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Iterator, Sequence

import orjson
from aiokafka import AIOKafkaProducer
from aiokafka.errors import KafkaError

from .errors import SourceError
from .events import encode
from .pipeline import DeadLetter, Verdict
from .settings import KafkaSettings
from .sources.kafka import client_options, quiet_connection_logs

__all__ = [
    "ATTEMPT_HEADER",
    "CHECKS_HEADER",
    "VERSION_HEADER",
    "WEIGHT_HEADER",
    "DeadLetter",
    "KafkaSink",
    "NullSink",
    "Sink",
    "dlq_headers",
    "judge_record",
    "write_until_acknowledged",
]

log = logging.getLogger(__name__)

HEADER_PREFIX = "llm_sidecar."


def dlq_headers(dead: DeadLetter, truncated: bool) -> list[tuple[str, bytes]]:
    """The headers that make a dead letter traceable to its origin."""
    r = dead.record
    ours = [
        ("reason", dead.error.reason.value),
        ("error", dead.error.message[:500]),
        ("source_topic", r.topic),
        ("source_partition", str(r.partition)),
        ("source_offset", str(r.offset)),
        ("original_size", str(len(r.value))),
        ("truncated", "true" if truncated else "false"),
    ]
    return [*r.headers, *((HEADER_PREFIX + k, v.encode()) for k, v in ours)]


class Sink:
    """Writes nothing; the base of real sinks and what replay uses."""

    def __init__(self) -> None:
        self.dropped: dict[str, int] = {}
        """Records refused for good, by kind (dlq, verdict, judge)."""

    async def start(self) -> None:
        return None

    async def stop(self) -> None:
        return None

    async def write(
        self,
        dead: Sequence[DeadLetter],
        verdicts: Sequence[Verdict],
        sampled: Sequence[tuple[Verdict, float]] = (),
    ) -> None:
        return None


NullSink = Sink

WEIGHT_HEADER = HEADER_PREFIX + "weight"
CHECKS_HEADER = HEADER_PREFIX + "checks"
VERSION_HEADER = HEADER_PREFIX + "rules_version"
ATTEMPT_HEADER = HEADER_PREFIX + "attempt"
DETAILS_HEADER = HEADER_PREFIX + "details"
DETAIL_MAX = 200
"""Characters of a flagged check's detail the judge topic's details header carries."""


def judge_record(
    verdict: Verdict, weight: float, attempt: int = 0
) -> tuple[bytes, list[tuple[str, bytes]]]:
    """A sampled event for the judge topic: the event in wire format; in headers its weight,
    the cheap checks' values (``{rule id: [value, passed]}``, for detector agreement in the
    workers' windows), the details of the checks that flagged it (``{rule id: detail}``: the
    organic robustness subject is the category an ``attack_attempt`` rule names there; a
    header of its own, which workers of an older version ignore), the rules version and, when
    a worker queued it again, the attempt."""
    value = encode(verdict.event)
    headers = [(WEIGHT_HEADER, repr(weight).encode())]
    checks = {rid: [o.value, o.passed] for rid, o in verdict.checks.items() if o.value is not None}
    if checks:
        headers.append((CHECKS_HEADER, orjson.dumps(checks)))
    details = {
        rid: o.detail[:DETAIL_MAX]
        for rid, o in verdict.checks.items()
        if o.value is True and o.detail
    }
    if details:
        headers.append((DETAILS_HEADER, orjson.dumps(details)))
    if verdict.rules_version:
        headers.append((VERSION_HEADER, verdict.rules_version.encode()))
    if attempt:
        headers.append((ATTEMPT_HEADER, str(attempt).encode()))
    return value, headers


class KafkaSink(Sink):
    """Dead letters and (optionally) verdicts to Kafka topics."""

    def __init__(
        self,
        cfg: KafkaSettings,
        *,
        dlq_max_bytes: int,
        judge_topic: str | None = None,
        send_timeout_s: float = 30.0,
        max_request_bytes: int = 1_048_576,
    ) -> None:
        super().__init__()
        self.cfg = cfg
        self.judge_topic = judge_topic
        self.attempts: dict[str, int] = {}
        """Event id -> attempt number of judge records a worker queues again (set per write)."""
        self.dlq_max_bytes = dlq_max_bytes
        self.send_timeout_s = send_timeout_s
        self.max_request_bytes = max_request_bytes
        self._producer: AIOKafkaProducer | None = None
        self._closed = False
        quiet_connection_logs()

    async def start(self) -> None:
        """Nothing to do: the producer connects on the first write."""
        self._closed = False

    async def _connected(self) -> AIOKafkaProducer | None:
        """The producer, started now if need be (SourceError if Kafka does not answer)."""
        if self._producer is not None or self._closed:
            return self._producer
        if not (self.cfg.dlq_topic or self.cfg.verdict_topic or self.judge_topic):
            return None
        producer = AIOKafkaProducer(
            acks="all",
            enable_idempotence=False,
            linger_ms=5,
            compression_type=self.cfg.compression_type,
            # Room for the largest event the source accepts, plus headers.
            max_request_size=self.max_request_bytes,
            **client_options(self.cfg),
        )
        try:
            await asyncio.wait_for(producer.start(), self.send_timeout_s)
        except (KafkaError, OSError, TimeoutError) as exc:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(producer.stop(), 5.0)
            raise SourceError(
                f"cannot reach Kafka at {self.cfg.bootstrap_servers} (producer): {exc!r}"
            ) from exc
        self._producer = producer
        return producer

    async def stop(self) -> None:
        self._closed = True
        producer, self._producer = self._producer, None
        if producer is not None:
            await producer.stop()

    def _records(
        self,
        dead: Sequence[DeadLetter],
        verdicts: Sequence[Verdict],
        sampled: Sequence[tuple[Verdict, float]],
    ) -> Iterator[tuple[str, str, bytes, bytes | None, list[tuple[str, bytes]] | None]]:
        """(kind, topic, value, key, headers) of every record this batch writes."""
        if self.cfg.dlq_topic:
            for d in dead:
                value = d.record.value
                truncated = len(value) > self.dlq_max_bytes
                yield (
                    "dlq",
                    self.cfg.dlq_topic,
                    value[: self.dlq_max_bytes] if truncated else value,
                    d.record.key,
                    dlq_headers(d, truncated),
                )
        if self.cfg.verdict_topic:
            for v in verdicts:
                yield "verdict", self.cfg.verdict_topic, v.to_json(), v.id.encode(), None
        if self.judge_topic:
            for v, weight in sampled:
                value, headers = judge_record(v, weight, self.attempts.get(v.id, 0))
                yield "judge", self.judge_topic, value, v.id.encode(), headers

    async def write(
        self,
        dead: Sequence[DeadLetter],
        verdicts: Sequence[Verdict],
        sampled: Sequence[tuple[Verdict, float]] = (),
    ) -> None:
        """Write and wait for the broker's acknowledgements.

        A record the broker can never take (too large, invalid) is dropped, logged and counted
        in ``dropped`` rather than retried forever; any other failure raises
        :class:`SourceError` and the caller writes the whole batch again.
        """
        if not (dead or verdicts or sampled):
            return
        producer = await self._connected()
        if producer is None:
            return
        pending: list[tuple[str, str, asyncio.Future[object]]] = []
        try:
            for kind, topic, value, key, headers in self._records(dead, verdicts, sampled):
                try:
                    future = await producer.send(topic, value=value, key=key, headers=headers)
                except KafkaError as exc:
                    if exc.retriable:
                        raise
                    self._drop(kind, topic, exc)
                    continue
                pending.append((kind, topic, future))
            if not pending:
                return
            results = await asyncio.wait_for(
                asyncio.gather(*(f for _, _, f in pending), return_exceptions=True),
                self.send_timeout_s,
            )
        except (KafkaError, TimeoutError) as exc:
            for _, _, f in pending:
                f.cancel()
            raise SourceError(f"writing to Kafka failed: {exc!r}") from exc
        retry: BaseException | None = None
        for (kind, topic, _), result in zip(pending, results, strict=True):
            if isinstance(result, KafkaError) and not result.retriable:
                self._drop(kind, topic, result)
            elif isinstance(result, BaseException):
                retry = result
        if retry is not None:
            raise SourceError(f"writing to Kafka failed: {retry!r}") from retry

    def _drop(self, kind: str, topic: str, exc: KafkaError) -> None:
        self.dropped[kind] = self.dropped.get(kind, 0) + 1
        log.error("a %s record for topic %s was refused for good and dropped: %r", kind, topic, exc)


async def write_until_acknowledged(
    sink: Sink,
    dead: Sequence[DeadLetter],
    verdicts: Sequence[Verdict],
    sampled: Sequence[tuple[Verdict, float]] = (),
    *,
    on_retry: Callable[[SourceError], None] | None = None,
    report_every_s: float = 60.0,
) -> None:
    """Write until the broker acknowledges, backing off (0.1 s doubling to 5 s) between tries:
    nothing after an unwritten record may be committed. The first failure is logged, then at
    most one line every ``report_every_s`` while it lasts, and one when the write goes through."""
    delay = 0.1
    tries = 0
    loop = asyncio.get_running_loop()
    first_failure = reported = 0.0
    while True:
        try:
            await sink.write(dead, verdicts, sampled)
        except SourceError as exc:
            if on_retry is not None:
                on_retry(exc)
            tries += 1
            now = loop.time()
            if tries == 1:
                first_failure = reported = now
                log.warning("sink write failed, retrying with backoff: %s", exc)
            elif now - reported >= report_every_s:
                reported = now
                log.warning(
                    "sink write still failing after %d tries in %.0fs: %s",
                    tries,
                    now - first_failure,
                    exc,
                )
            else:
                log.debug("sink write failed (try %d), retrying in %.1fs: %s", tries, delay, exc)
            await asyncio.sleep(delay)
            delay = min(delay * 2, 5.0)
            continue
        if tries:
            log.warning(
                "sink write went through after %d failed tries in %.0fs",
                tries,
                loop.time() - first_failure,
            )
        return
