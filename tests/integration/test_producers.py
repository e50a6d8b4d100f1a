"""What real producers write, as librdkafka (confluent-kafka) writes it, through the real app
and the embedded broker: every codec, headers, tombstones, transactions, OTLP records, and a
batch the client cannot read."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterable, Sequence
from typing import Any

import aiokafka.codec
import httpx
import orjson
import pytest
from aiokafka.consumer.fetcher import READ_COMMITTED
from confluent_kafka import Producer
from prometheus_client import CollectorRegistry

from sidecar.app import App
from sidecar.embedded import EmbeddedBroker
from sidecar.formats.encode import encode_request, events_to_requests
from sidecar.sources.kafka import KafkaSource
from tests.conftest import event_line, kafka_settings, read_topic
from tests.integration.test_kafka import (
    committed_offsets,
    registry_text,
    samples,
    value,
    wait_for,
)
from tests.integration.test_otlp import sample_lines

pytestmark = pytest.mark.integration

CODECS = ("none", "gzip", "snappy", "lz4", "zstd")
TRACEPARENT = b"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"


def librdkafka(bootstrap: str, **config: Any) -> Producer:
    return Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, **config})


async def flush(producer: Producer) -> None:
    left = await asyncio.to_thread(producer.flush, 30)
    assert left == 0, f"{left} records not delivered"


def send(
    producer: Producer,
    topic: str,
    values: Iterable[bytes | None],
    *,
    partition: int = 0,
    headers: Sequence[tuple[str, bytes]] | None = None,
) -> None:
    for i, v in enumerate(values):
        producer.produce(topic, value=v, key=f"k{i}".encode(), partition=partition, headers=headers)


def ids_of(records: Iterable[Any]) -> set[str]:
    return {orjson.loads(r.value)["id"] for r in records}


async def test_every_codec_with_headers_and_tombstones_is_read_and_checked(
    broker: EmbeddedBroker, topic_factory: Any, running: Any
) -> None:
    bootstrap = broker.bootstrap_servers
    topics = {codec: await topic_factory(prefix=f"c-{codec}") for codec in CODECS}
    verdicts = await topic_factory(prefix="verdicts")
    dlq = await topic_factory(prefix="dlq")
    expected: set[str] = set()
    for n, (codec, topic) in enumerate(topics.items()):
        producer = librdkafka(bootstrap, **{"compression.type": codec})
        lines = [event_line(1000 * n + i) for i in range(30)]
        expected |= {orjson.loads(line)["id"] for line in lines}
        send(producer, topic, lines, headers=[("traceparent", TRACEPARENT)])
        send(producer, topic, [None, None, b""])  # two tombstones and an empty value
        await flush(producer)

    settings = kafka_settings(
        bootstrap,
        topics["none"],
        kafka={
            "topics": list(topics.values()),
            "verdict_topic": verdicts,
            "dlq_topic": dlq,
            "compression_type": "zstd",
        },
    )
    app = App(settings, registry=CollectorRegistry(), serve_http=False)
    await running(app)
    await wait_for(lambda: app.tally.events >= len(expected))
    m = samples(registry_text(app.registry))
    await wait_for(
        lambda: (
            value(samples(registry_text(app.registry)), "llm_sidecar_records_total")
            >= 33 * len(CODECS)
        )
    )
    m = samples(registry_text(app.registry))
    assert app.tally.events == len(expected)
    assert value(m, "llm_sidecar_records_skipped_total", reason="empty") == 3 * len(CODECS)
    assert value(m, "llm_sidecar_dead_letters_total") == 0
    assert value(m, "llm_sidecar_undecodable_batches_total") == 0
    # The verdicts go out zstd-compressed and read back whole.
    written = await read_topic(bootstrap, verdicts, expect=len(expected))
    assert ids_of(written) == expected
    assert app.source.not_ready() is None


async def test_tombstones_go_to_the_dead_letter_topic_when_asked(
    broker: EmbeddedBroker, topic_factory: Any, running: Any
) -> None:
    bootstrap = broker.bootstrap_servers
    topic, dlq = await topic_factory(), await topic_factory(prefix="dlq")
    producer = librdkafka(bootstrap, **{"compression.type": "lz4"})
    send(producer, topic, [event_line(1), None, event_line(2), b""])
    await flush(producer)
    settings = kafka_settings(
        bootstrap, topic, kafka={"dlq_topic": dlq}, limits={"empty_records": "dead_letter"}
    )
    app = App(settings, registry=CollectorRegistry(), serve_http=False)
    await running(app)
    dead = await read_topic(bootstrap, dlq, expect=2)
    assert app.tally.events == 2
    assert sorted(dict(r.headers)["llm_sidecar.reason"] for r in dead) == [b"empty", b"empty"]
    assert app.tally.dead == {"empty": 2}


async def test_the_isolation_level_reaches_the_consumer_and_committed_transactions_are_read(
    broker: EmbeddedBroker, topic_factory: Any, running: Any
) -> None:
    bootstrap = broker.bootstrap_servers
    settings = kafka_settings(bootstrap, "t", kafka={"isolation_level": "read_uncommitted"})
    consumer = KafkaSource(settings.kafka)._new_consumer()
    assert consumer._isolation_level == "read_uncommitted"
    await consumer.stop()
    assert kafka_settings(bootstrap, "t").kafka.isolation_level == "read_committed"

    topic = await topic_factory()
    producer = librdkafka(bootstrap, **{"transactional.id": f"tx-{uuid.uuid4().hex[:6]}"})
    await asyncio.to_thread(producer.init_transactions, 30)
    producer.begin_transaction()
    send(producer, topic, [event_line(i) for i in range(10)])
    await asyncio.to_thread(producer.abort_transaction, 30)
    producer.begin_transaction()
    committed = [event_line(100 + i) for i in range(10)]
    send(producer, topic, committed)
    await asyncio.to_thread(producer.commit_transaction, 30)

    verdicts = await topic_factory(prefix="verdicts")
    settings = kafka_settings(bootstrap, topic, kafka={"verdict_topic": verdicts})
    app = App(settings, registry=CollectorRegistry(), serve_http=False)
    await running(app)
    # The embedded broker does not drop aborted records for read_committed consumers (Kafka
    # does): what is asserted here is that every committed one is checked.
    written = await read_topic(
        bootstrap,
        verdicts,
        expect=10,
        until=lambda rs: ids_of(rs) >= {orjson.loads(c)["id"] for c in committed},
    )
    assert ids_of(written) >= {orjson.loads(c)["id"] for c in committed}
    # The default reached the client's fetcher, which asks the broker for committed records.
    assert app.source._consumer is not None
    assert app.source._consumer._fetcher._isolation_level == READ_COMMITTED


async def test_compressed_otlp_records_are_read(
    broker: EmbeddedBroker, topic_factory: Any, running: Any
) -> None:
    bootstrap = broker.bootstrap_servers
    _, events = sample_lines(40)
    requests = events_to_requests(events, traces_per_record=5)
    apps = []
    for fmt, codec in (("otlp-proto", "zstd"), ("otlp-json", "snappy")):
        topic = await topic_factory()
        producer = librdkafka(bootstrap, **{"compression.type": codec})
        send(producer, topic, [encode_request(r, fmt) for r in requests])
        await flush(producer)
        settings = kafka_settings(bootstrap, topic, input={"format": fmt})
        app = App(settings, registry=CollectorRegistry(), serve_http=False)
        apps.append(app)
        await running(app)
    for app in apps:
        await wait_for(lambda a=app: a.tally.events >= len(events))
        assert app.tally.events == len(events)
        assert sum(app.tally.dead.values()) == 0


async def _unreadable_topic(bootstrap: str, topic_factory: Any) -> tuple[str, str]:
    """A topic whose partition holds 10 plain records, one snappy batch of 10, 10 plain; and a
    second topic of 10 plain records."""
    topic, other = await topic_factory(), await topic_factory()
    for codec, first in (("none", 0), ("snappy", 10), ("none", 20)):
        producer = librdkafka(bootstrap, **{"compression.type": codec})
        send(producer, topic, [event_line(first + i) for i in range(10)])
        await flush(producer)
    producer = librdkafka(bootstrap)
    send(producer, other, [event_line(100 + i) for i in range(10)])
    await flush(producer)
    return topic, other


@pytest.fixture
def no_snappy(monkeypatch: pytest.MonkeyPatch) -> None:
    """The client as installed without its codec extras: snappy batches cannot be read."""
    monkeypatch.setattr(aiokafka.codec, "cramjam", None)
    assert not aiokafka.codec.has_snappy()


@pytest.mark.usefixtures("no_snappy")
async def test_an_unreadable_batch_pauses_its_partition_and_loses_nothing(
    broker: EmbeddedBroker, topic_factory: Any, running: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    bootstrap = broker.bootstrap_servers
    topic, other = await _unreadable_topic(bootstrap, topic_factory)
    settings = kafka_settings(bootstrap, topic, kafka={"topics": [topic, other]})
    app = App(settings, registry=CollectorRegistry(), serve_http=False)
    task = await running(app)
    # The ten records before the bad batch (in the same fetch) and the other topic.
    await wait_for(lambda: app.tally.events >= 20 and app.source.not_ready() is not None)
    reason = app.source.not_ready()
    assert reason is not None
    assert f"{topic}[0] paused at offset 10" in reason
    assert "snappy" in reason
    await wait_for(
        lambda: (
            value(samples(registry_text(app.registry)), "llm_sidecar_undecodable_batches_total")
            == 1
        )
    )
    await asyncio.sleep(1.0)  # the paused partition stays where it is
    assert app.tally.events == 20
    app.request_stop()
    await asyncio.wait_for(task, 10)
    await app.stop()

    # The codec comes back (a new image): a restart reads on from the bad batch.
    monkeypatch.undo()
    await asyncio.sleep(0.5)
    offsets = await committed_offsets(bootstrap, settings.kafka.group_id, topic, 1)
    assert offsets == {0: 10}
    again = App(settings, registry=CollectorRegistry(), serve_http=False)
    await running(again)
    await wait_for(lambda: again.tally.events >= 20)
    await asyncio.sleep(0.5)
    assert again.tally.events == 20
    assert again.source.not_ready() is None


@pytest.mark.usefixtures("no_snappy")
async def test_an_unreadable_batch_is_skipped_and_counted_when_asked(
    broker: EmbeddedBroker, topic_factory: Any, running: Any
) -> None:
    bootstrap = broker.bootstrap_servers
    topic, other = await _unreadable_topic(bootstrap, topic_factory)
    settings = kafka_settings(
        bootstrap, topic, kafka={"topics": [topic, other], "on_undecodable": "skip"}
    )
    app = App(settings, registry=CollectorRegistry(), serve_http=False)
    await running(app)
    await wait_for(lambda: app.tally.events >= 30)
    m = samples(registry_text(app.registry))
    await wait_for(
        lambda: (
            value(
                samples(registry_text(app.registry)),
                "llm_sidecar_records_skipped_total",
                reason="undecodable",
            )
            == 10
        )
    )
    m = samples(registry_text(app.registry))
    assert value(m, "llm_sidecar_undecodable_batches_total", action="skipped") == 1
    assert app.tally.events == 30
    assert app.source.not_ready() is None

    async def committed() -> dict[int, int | None]:
        return await committed_offsets(bootstrap, settings.kafka.group_id, topic, 1)

    for _ in range(50):
        if (await committed()) == {0: 30}:
            break
        await asyncio.sleep(0.2)
    assert await committed() == {0: 30}


async def test_trace_ids_reach_the_verdicts_and_the_failed_rule_exemplars(
    broker: EmbeddedBroker, topic_factory: Any, running: Any
) -> None:
    from prometheus_client.openmetrics.parser import text_string_to_metric_families

    bootstrap = broker.bootstrap_servers
    topic, verdicts = await topic_factory(), await topic_factory(prefix="verdicts")
    producer = librdkafka(bootstrap, **{"compression.type": "lz4"})
    # A template left unfilled fails the default pack's template rule.
    send(
        producer,
        topic,
        [event_line(1, response="hello {{name}}")],
        headers=[("traceparent", TRACEPARENT)],
    )
    send(producer, topic, [event_line(2)])
    await flush(producer)
    settings = kafka_settings(bootstrap, topic, kafka={"verdict_topic": verdicts})
    app = App(settings, registry=CollectorRegistry())
    await running(app)
    written = await read_topic(bootstrap, verdicts, expect=2)
    by_id = {doc["id"]: doc for doc in (orjson.loads(r.value) for r in written)}
    trace_id = TRACEPARENT.split(b"-")[1].decode()
    assert by_id["e-000001"]["trace_id"] == trace_id
    assert "trace_id" not in by_id["e-000002"]

    async with httpx.AsyncClient() as client:
        url = f"http://127.0.0.1:{app.http.port}/metrics"
        om = await client.get(
            url, headers={"Accept": "application/openmetrics-text; version=1.0.0"}
        )
        plain = await client.get(url)
    assert om.headers["content-type"].startswith("application/openmetrics-text")
    assert plain.headers["content-type"].startswith("text/plain")
    assert om.text.endswith("# EOF\n")
    exemplars = [
        (s.labels, s.exemplar.labels)
        for family in text_string_to_metric_families(om.text)  # a strict parser
        for s in family.samples
        if s.exemplar is not None
    ]
    assert exemplars
    assert all(labels["result"] == "fail" for labels, _ in exemplars)
    assert {ex["trace_id"] for _, ex in exemplars} == {trace_id}
    # The plain text format has no exemplars, and the same series.
    assert "trace_id" not in plain.text
