"""Where llm-sidecar writes: the dead-letter topic and the optional verdict topic.

One idempotence-free producer (``acks="all"``) serves both. :meth:`KafkaSink.write` returns only
when the broker has acknowledged every record of the batch, so the app can commit offsets
afterwards; if it raises, nothing may be committed and the batch is written again.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence

from aiokafka import AIOKafkaProducer
from aiokafka.errors import KafkaError

from .errors import SourceError
from .pipeline import DeadLetter, Verdict
from .settings import KafkaSettings
from .sources.kafka import client_options

__all__ = [
    "WEIGHT_HEADER",
    "DeadLetter",
    "KafkaSink",
    "NullSink",
    "Sink",
    "dlq_headers",
    "judge_record",
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


def judge_record(verdict: Verdict, weight: float) -> tuple[bytes, list[tuple[str, bytes]]]:
    """A sampled event for the judge topic: the event in wire format, its weight in a header."""
    value = verdict.event.model_dump_json(exclude_none=True).encode()
    return value, [(WEIGHT_HEADER, repr(weight).encode())]


class KafkaSink(Sink):
    """Dead letters and (optionally) verdicts to Kafka topics."""

    def __init__(
        self,
        cfg: KafkaSettings,
        *,
        dlq_max_bytes: int,
        judge_topic: str | None = None,
        send_timeout_s: float = 30.0,
    ) -> None:
        self.cfg = cfg
        self.judge_topic = judge_topic
        self.dlq_max_bytes = dlq_max_bytes
        self.send_timeout_s = send_timeout_s
        self._producer: AIOKafkaProducer | None = None

    async def start(self) -> None:
        if self._producer is not None or not (
            self.cfg.dlq_topic or self.cfg.verdict_topic or self.judge_topic
        ):
            return
        producer = AIOKafkaProducer(
            acks="all",
            enable_idempotence=False,
            linger_ms=5,
            **client_options(self.cfg),
        )
        try:
            await producer.start()
        except KafkaError as exc:
            await producer.stop()
            raise SourceError(
                f"cannot reach Kafka at {self.cfg.bootstrap_servers} (producer): {exc}"
            ) from exc
        self._producer = producer

    async def stop(self) -> None:
        producer, self._producer = self._producer, None
        if producer is not None:
            await producer.stop()

    async def write(
        self,
        dead: Sequence[DeadLetter],
        verdicts: Sequence[Verdict],
        sampled: Sequence[tuple[Verdict, float]] = (),
    ) -> None:
        producer = self._producer
        if producer is None:
            return
        futures: list[asyncio.Future[object]] = []
        try:
            if self.cfg.dlq_topic:
                for d in dead:
                    value = d.record.value
                    truncated = len(value) > self.dlq_max_bytes
                    futures.append(
                        await producer.send(
                            self.cfg.dlq_topic,
                            value=value[: self.dlq_max_bytes] if truncated else value,
                            key=d.record.key,
                            headers=dlq_headers(d, truncated),
                        )
                    )
            if self.cfg.verdict_topic:
                for v in verdicts:
                    futures.append(
                        await producer.send(
                            self.cfg.verdict_topic, value=v.to_json(), key=v.id.encode()
                        )
                    )
            if self.judge_topic:
                for v, weight in sampled:
                    value, headers = judge_record(v, weight)
                    futures.append(
                        await producer.send(
                            self.judge_topic, value=value, key=v.id.encode(), headers=headers
                        )
                    )
            if futures:
                await asyncio.wait_for(asyncio.gather(*futures), self.send_timeout_s)
        except (KafkaError, TimeoutError) as exc:
            for f in futures:
                f.cancel()
            raise SourceError(f"writing to Kafka failed: {exc!r}") from exc
