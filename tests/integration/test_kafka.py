"""End to end on the embedded broker: consume, check, count, dead-letter, commit."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import orjson
import pytest
from aiokafka import AIOKafkaConsumer, TopicPartition
from prometheus_client.parser import text_string_to_metric_families

from sidecar.app import App
from sidecar.embedded import EmbeddedBroker
from tests.conftest import event_line, kafka_settings, produce, read_topic

pytestmark = pytest.mark.integration


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    out = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def value(metrics: dict[Any, float], name: str, **labels: str) -> float:
    """Sum of the samples of ``name`` whose labels include ``labels``."""
    return sum(
        v
        for (n, lbls), v in metrics.items()
        if n == name and all(dict(lbls).get(k) == want for k, want in labels.items())
    )


async def wait_for(predicate: Any, timeout: float = 30.0, interval: float = 0.1) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        if loop.time() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(interval)


async def test_events_are_checked_and_counted_in_metrics(
    broker: EmbeddedBroker, topic_factory: Any, running: Any, registry: Any
) -> None:
    topic = await topic_factory(partitions=2)
    lines = [event_line(i) for i in range(40)]
    lines += [event_line(100 + i, response="hello {{name}}") for i in range(10)]
    await produce(broker.bootstrap_servers, topic, lines)
    app = App(kafka_settings(broker.bootstrap_servers, topic), registry=registry)
    await running(app)
    await wait_for(lambda: app.tally.events >= 50)
    # The last batch's commit runs beside the next fetch, and its count reaches /metrics on
    # the loop's next turn: wait for both before reading the page.
    await wait_for(lambda: app.source.commit_successes >= 1)
    committed = {"result": "success"}
    await wait_for(
        lambda: (registry.get_sample_value("llm_sidecar_offset_commits_total", committed) or 0) >= 1
    )

    assert app.http is not None
    async with httpx.AsyncClient(timeout=5) as client:
        response = await client.get(f"http://127.0.0.1:{app.http.port}/metrics")
        ready = await client.get(f"http://127.0.0.1:{app.http.port}/readyz")
        healthy = await client.get(f"http://127.0.0.1:{app.http.port}/healthz")
    assert response.status_code == 200
    assert ready.status_code == 200
    assert healthy.status_code == 200
    m = samples(response.text)
    assert value(m, "llm_sidecar_records_total") == 50
    assert value(m, "llm_sidecar_events_total", outcome="passed") == 40
    assert value(m, "llm_sidecar_events_total", outcome="failed") == 10
    assert (
        value(m, "llm_sidecar_rule_results_total", rule="no-placeholder-text", result="fail") == 10
    )
    assert (
        value(m, "llm_sidecar_rule_results_total", rule="no-placeholder-text", result="pass") == 40
    )
    assert value(m, "llm_sidecar_batch_processing_seconds_count") >= 1
    assert value(m, "llm_sidecar_offset_commits_total", result="success") >= 1
    assert value(m, "llm_sidecar_offset_commits_total", result="failure") == 0
    # Lag is known per assigned partition and reaches zero once everything is handled.
    await wait_for(lambda: len(app.source.lag()) == 2 and sum(app.source.lag().values()) == 0)
    await wait_for(lambda: len(app.metrics.lag) == 2)
    lag = {
        labels: v
        for (n, labels), v in samples(registry_text(registry)).items()
        if n == "llm_sidecar_consumer_lag"
    }
    assert len(lag) == 2
    assert set(lag.values()) == {0.0}


async def test_malformed_records_go_to_the_dlq_with_their_reason(
    broker: EmbeddedBroker, topic_factory: Any, running: Any, registry: Any
) -> None:
    topic = await topic_factory()
    dlq = await topic_factory(prefix="dlq")
    bad = {
        b"this is not json": "invalid_json",
        b"[1, 2, 3]": "not_an_object",
        b'{"id": "x1"}': "invalid_event",
        b'{"id": "x2", "prompt": "\xff\xfe"}': "invalid_utf8",
        b'{"id": "x3", "response": "' + b"a" * 3000 + b'"}': "too_large",
    }
    lines = [event_line(0), *bad, event_line(1)]
    await produce(broker.bootstrap_servers, topic, lines)
    settings = kafka_settings(
        broker.bootstrap_servers,
        topic,
        kafka={"dlq_topic": dlq},
        limits={"max_event_bytes": 2048, "dlq_max_bytes": 1000},
    )
    app = App(settings, registry=registry)
    await running(app)
    await wait_for(lambda: app.tally.events + sum(app.tally.dead.values()) >= len(lines))

    records = await read_topic(broker.bootstrap_servers, dlq, expect=len(bad))
    assert len(records) == len(bad)
    by_reason = {}
    for r in records:
        headers = {k: v.decode() for k, v in r.headers}
        assert headers["llm_sidecar.source_topic"] == topic
        assert headers["llm_sidecar.source_partition"] == "0"
        by_reason[headers["llm_sidecar.reason"]] = (r, headers)
    assert set(by_reason) == set(bad.values())
    for raw, reason in bad.items():
        record, headers = by_reason[reason]
        assert int(headers["llm_sidecar.source_offset"]) == lines.index(raw)
        if reason == "too_large":
            assert headers["llm_sidecar.truncated"] == "true"
            assert record.value == raw[:1000]
            assert headers["llm_sidecar.original_size"] == str(len(raw))
        else:
            assert record.value == raw
    assert app.tally.events == 2
    text = registry_text(registry)
    m = samples(text)
    for reason in bad.values():
        assert value(m, "llm_sidecar_dead_letters_total", reason=reason) == 1


def registry_text(registry: Any) -> str:
    from prometheus_client import generate_latest

    return generate_latest(registry).decode()


async def test_two_consumers_split_partitions_and_process_everything(
    broker: EmbeddedBroker, topic_factory: Any, running: Any
) -> None:
    from prometheus_client import CollectorRegistry

    topic = await topic_factory(partitions=4)
    verdicts = await topic_factory(prefix="verdicts", partitions=1)
    settings = kafka_settings(broker.bootstrap_servers, topic, kafka={"verdict_topic": verdicts})
    a = App(settings, registry=CollectorRegistry(), serve_http=False)
    b = App(settings, registry=CollectorRegistry(), serve_http=False)
    await running(a)
    await running(b)

    def assigned(app: App) -> set[TopicPartition]:
        consumer = app.source._consumer  # type: ignore[attr-defined]
        return set(consumer.assignment()) if consumer is not None else set()

    await wait_for(lambda: len(assigned(a)) == 2 and len(assigned(b)) == 2, timeout=40)
    assert not assigned(a) & assigned(b)

    n = 400
    await produce(broker.bootstrap_servers, topic, [event_line(i) for i in range(n)], partitions=4)
    await wait_for(lambda: a.tally.events + b.tally.events >= n)
    assert a.tally.events > 0
    assert b.tally.events > 0
    out = await read_topic(broker.bootstrap_servers, verdicts, expect=n)
    ids = {orjson.loads(r.value)["id"] for r in out}
    assert ids == {f"e-{i:06d}" for i in range(n)}
    assert a.tally.events + b.tally.events == n


async def test_offsets_are_committed_after_processing(
    broker: EmbeddedBroker, topic_factory: Any, running: Any, registry: Any
) -> None:
    topic = await topic_factory(partitions=2)
    n = 120
    await produce(broker.bootstrap_servers, topic, [event_line(i) for i in range(n)], partitions=2)
    settings = kafka_settings(broker.bootstrap_servers, topic)
    app = App(settings, registry=registry, serve_http=False)
    await running(app)
    await wait_for(lambda: app.tally.events >= n)
    await wait_for(lambda: app.source.commit_successes > 0)  # type: ignore[attr-defined]
    committed = await committed_offsets(broker.bootstrap_servers, settings.kafka.group_id, topic, 2)
    assert committed == {0: n // 2, 1: n // 2}


async def committed_offsets(
    bootstrap: str, group: str, topic: str, partitions: int
) -> dict[int, int | None]:
    consumer = AIOKafkaConsumer(
        bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False
    )
    await consumer.start()
    try:
        return {p: await consumer.committed(TopicPartition(topic, p)) for p in range(partitions)}
    finally:
        await consumer.stop()


async def test_an_idle_consumer_stays_healthy_and_odd_timestamps_do_not_stop_it(
    broker: EmbeddedBroker, topic_factory: Any, running: Any, registry: Any
) -> None:
    topic = await topic_factory()
    app = App(kafka_settings(broker.bootstrap_servers, topic), registry=registry, serve_http=False)
    await running(app)
    source: Any = app.source  # the batch loop connects: the consumer comes with it
    await wait_for(lambda: source._consumer is not None and bool(source._consumer.assignment()))
    await asyncio.sleep(0.5)
    first = app._last_turn
    await asyncio.sleep(1.0)  # nothing arrives: the loop still turns
    assert app._last_turn > first
    assert app._healthy()
    # Year 1 without a zone: valid for the model, but no POSIX timestamp exists for it.
    odd = event_line(1, ts="0001-01-01T00:00:00")
    await produce(broker.bootstrap_servers, topic, [odd, event_line(2)])
    await wait_for(lambda: app.tally.events >= 2)


async def test_a_record_the_broker_can_never_take_is_dropped_and_counted(
    broker: EmbeddedBroker, topic_factory: Any
) -> None:
    from sidecar.events import Event
    from sidecar.pipeline import Verdict
    from sidecar.settings import KafkaSettings
    from sidecar.sinks import KafkaSink

    verdicts_topic = await topic_factory(prefix="verdicts")
    judge_topic = await topic_factory(prefix="judge")
    sink = KafkaSink(
        KafkaSettings(
            bootstrap_servers=broker.bootstrap_servers, dlq_topic=None, verdict_topic=verdicts_topic
        ),
        dlq_max_bytes=1000,
        judge_topic=judge_topic,
        max_request_bytes=4096,
    )
    await sink.start()
    try:
        small = Verdict(Event(id="small", response="ok"), {}, "v")
        huge = Verdict(Event(id="huge", response="x" * 10_000), {}, "v")
        await sink.write((), [small], [(small, 1.0), (huge, 2.0)])  # does not raise
    finally:
        await sink.stop()
    assert sink.dropped == {"judge": 1}
    written = await read_topic(broker.bootstrap_servers, judge_topic, expect=1, timeout=5)
    assert [r.key for r in written] == [b"small"]
    assert len(await read_topic(broker.bootstrap_servers, verdicts_topic, expect=1)) == 1
