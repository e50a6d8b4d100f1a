"""OTLP topics (as the Collector's Kafka exporter fills them) through the embedded broker."""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter
from typing import Any

import orjson
import pytest
from prometheus_client import CollectorRegistry

from sidecar.app import App
from sidecar.embedded import EmbeddedBroker
from sidecar.errors import DecodeError
from sidecar.events import Event, decode
from sidecar.formats.encode import encode_request, events_to_requests
from sidecar.rules import bundled_path
from tests.conftest import kafka_settings, produce, read_topic
from tests.formats.otel import Spans, event_id
from tests.integration.test_kafka import committed_offsets, registry_text, samples, value, wait_for

pytestmark = pytest.mark.integration


def sample_lines(n: int) -> tuple[list[bytes], list[Event]]:
    lines = [line for line in bundled_path("events.jsonl").read_bytes().splitlines() if line]
    events = []
    for line in lines[:n]:
        with contextlib.suppress(DecodeError):
            events.append(decode(line))
    return lines[:n], events


def window_scores(registry: CollectorRegistry) -> dict[Any, float]:
    """The rolling scores that do not depend on judge sampling, by score/subject/segment."""
    return {
        key: v
        for key, v in samples(registry_text(registry)).items()
        if key[0] in ("llm_sidecar_window_score", "llm_sidecar_window_samples")
        and dict(key[1])["score"] in ("event_pass_rate", "rule_pass_rate", "refusal_rate")
    }


async def test_otlp_topics_drive_the_same_checks_and_rolling_scores_as_native_events(
    broker: EmbeddedBroker, topic_factory: Any, running: Any
) -> None:
    lines, events = sample_lines(160)
    bad = [line for line in lines if not _valid(line)]
    assert bad, "the sample stream should hold malformed lines"
    requests = events_to_requests(events, traces_per_record=5)
    apps: dict[str, App] = {}
    for fmt in ("llm-sidecar-v1", "otlp-proto", "otlp-json"):
        topic = await topic_factory(partitions=2)
        dlq = await topic_factory(prefix="dlq")
        records = (
            lines if fmt == "llm-sidecar-v1" else [encode_request(r, fmt) for r in requests] + bad
        )
        await produce(broker.bootstrap_servers, topic, records, partitions=2)
        settings = kafka_settings(
            broker.bootstrap_servers,
            topic,
            kafka={"dlq_topic": dlq},
            input={"format": fmt},
            windows={"windows": ["1h"]},
        )
        app = App(settings, registry=CollectorRegistry(), serve_http=False)
        apps[fmt] = app
        await running(app)
    for app in apps.values():
        await wait_for(lambda a=app: a.tally.events + sum(a.tally.dead.values()) >= len(lines))

    native = apps["llm-sidecar-v1"]
    assert native.tally.events == len(events)
    for fmt in ("otlp-proto", "otlp-json"):
        app = apps[fmt]
        assert app.tally.events == len(events), fmt
        assert app.tally.failed_events == native.tally.failed_events, fmt
        assert {k: t.counts for k, t in app.tally.rules.items()} == {
            k: t.counts for k, t in native.tally.rules.items()
        }, fmt
        # The malformed lines are dead letters here too: not OTLP at all.
        assert sum(app.tally.dead.values()) == len(bad)
        if fmt == "otlp-proto":
            assert set(app.tally.dead) == {"invalid_otlp"}
        else:  # read as JSON first, so the JSON reasons apply
            assert set(app.tally.dead) <= {
                "invalid_json",
                "invalid_utf8",
                "not_an_object",
                "invalid_otlp",
            }
        # Server spans around every call and retrieval spans of the RAG events are skipped.
        assert app.tally.skipped["not_llm"] == len(events)
        assert app.tally.skipped["retrieval"] == sum(1 for e in events if e.contexts)
        m = samples(registry_text(app.registry))
        assert value(m, "llm_sidecar_spans_skipped_total", reason="not_llm") == len(events)
        assert value(m, "llm_sidecar_records_total") == len(requests) + len(bad)
        # The dashboards' rolling scores are the same as with native events.
        assert window_scores(app.registry) == window_scores(native.registry), fmt
    assert window_scores(native.registry)


def _valid(line: bytes) -> bool:
    try:
        decode(line)
    except DecodeError:
        return False
    return True


def chat(s: Spans, prompt: str, response: str, *, start_ms: int = 100, **attrs: Any) -> Any:
    with s.span(
        "chat",
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.request.model": "gpt-4o",
            "gen_ai.input.messages": orjson.dumps(
                [{"role": "user", "parts": [{"type": "text", "content": prompt}]}]
            ).decode(),
            "gen_ai.output.messages": orjson.dumps(
                [{"role": "assistant", "parts": [{"type": "text", "content": response}]}]
            ).decode(),
            **attrs,
        },
        start_ms=start_ms,
        end_ms=start_ms + 50,
    ) as span:
        pass
    return span


def oi_rag(s: Spans, question: str, docs: list[str], answer: str) -> Any:
    with s.span("query", {"openinference.span.kind": "CHAIN"}, end_ms=500):
        with s.span(
            "retrieve",
            {
                "openinference.span.kind": "RETRIEVER",
                **{f"retrieval.documents.{i}.document.content": d for i, d in enumerate(docs)},
            },
            start_ms=10,
            end_ms=20,
        ):
            pass
        with s.span(
            "llm",
            {
                "openinference.span.kind": "LLM",
                "llm.model_name": "llama-3.1-70b",
                "llm.input_messages.0.message.role": "user",
                "llm.input_messages.0.message.content": question,
                "llm.output_messages.0.message.role": "assistant",
                "llm.output_messages.0.message.content": answer,
            },
            start_ms=30,
            end_ms=400,
        ) as span:
            pass
    return span


async def test_sdk_spans_through_the_broker_verdicts_dead_letters_and_commits(
    broker: EmbeddedBroker, topic_factory: Any, running: Any, registry: Any
) -> None:
    proto_topic = await topic_factory()
    json_topic = await topic_factory()
    native_topic = await topic_factory()
    verdicts_topic = await topic_factory(prefix="verdicts")
    dlq = await topic_factory(prefix="dlq")
    expected: dict[str, dict[str, bool]] = {}  # event id -> {rule: passed}
    proto_records, json_records = [], []
    for i in range(6):
        s = Spans(**{"service.name": "bot", "tenant.id": "acme"})
        a = chat(s, f"question {i}", f"Write to jane.doe{i}@example.com for help.")
        b = chat(s, "and then?", "Hello {{customer_name}}, thanks.", start_ms=300)
        c = oi_rag(s, "Tallest mountain?", ["Everest is 8,849 m."], "Mount Everest.")
        with s.span("embeddings", {"gen_ai.operation.name": "embeddings"}):
            pass
        expected[event_id(a)] = {"no-email-in-response": False, "no-placeholder-text": True}
        expected[event_id(b)] = {"no-email-in-response": True, "no-placeholder-text": False}
        expected[event_id(c)] = {"no-email-in-response": True, "no-placeholder-text": True}
        (proto_records if i % 2 == 0 else json_records).append(
            s.proto() if i % 2 == 0 else s.json()
        )
    proto_records.insert(1, b"\x00\xffgarbage")
    json_records.append(b'{"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "xyz"}]}]}]}')
    await produce(broker.bootstrap_servers, proto_topic, proto_records)
    await produce(broker.bootstrap_servers, json_topic, json_records)
    await produce(
        broker.bootstrap_servers, native_topic, [b'{"id": "n-1", "prompt": "p", "response": "r"}']
    )
    settings = kafka_settings(
        broker.bootstrap_servers,
        proto_topic,
        kafka={
            "topics": [proto_topic, json_topic, native_topic],
            "verdict_topic": verdicts_topic,
            "dlq_topic": dlq,
        },
        input={"topics": {proto_topic: "otlp-proto", json_topic: "otlp-json"}},
    )
    app = App(settings, registry=registry, serve_http=False)
    await running(app)
    n_records = len(proto_records) + len(json_records) + 1
    await wait_for(lambda: app.tally.events + sum(app.tally.dead.values()) >= len(expected) + 3)

    out = await read_topic(broker.bootstrap_servers, verdicts_topic, expect=len(expected) + 1)
    verdicts = {v["id"]: v for v in (orjson.loads(r.value) for r in out)}
    assert set(verdicts) == {*expected, "n-1"}
    for event, rules in expected.items():
        got = {rule: verdicts[event]["checks"][rule]["passed"] for rule in rules}
        assert got == rules, event
    dead = await read_topic(broker.bootstrap_servers, dlq, expect=2)
    reasons = Counter(dict(r.headers)["llm_sidecar.reason"].decode() for r in dead)
    assert reasons == {"invalid_otlp": 2}
    m = samples(registry_text(registry))
    assert value(m, "llm_sidecar_spans_skipped_total", reason="not_llm") == 6 * 2
    assert value(m, "llm_sidecar_spans_skipped_total", reason="retrieval") == 6
    assert value(m, "llm_sidecar_dead_letters_total", reason="invalid_otlp") == 2
    assert value(m, "llm_sidecar_events_total", outcome="failed", tenant="acme") == 12
    # Every record, whatever it carried, is committed.
    await wait_for(lambda: sum(app.source.lag().values()) == 0 and len(app.source.lag()) == 3)
    group = settings.kafka.group_id
    committed = [
        (await committed_offsets(broker.bootstrap_servers, group, t, 1))[0]
        for t in (proto_topic, json_topic, native_topic)
    ]
    assert sum(c or 0 for c in committed) == n_records


async def test_a_restart_mid_topic_loses_no_span_of_a_committed_record(
    broker: EmbeddedBroker, topic_factory: Any, running: Any
) -> None:
    """One record, many events: stopping between batches commits only whole records, and the
    next consumer of the group picks up every span of every record after them."""
    topic = await topic_factory()
    verdicts_topic = await topic_factory(prefix="verdicts")
    ids: list[list[str]] = []
    records = []
    for i in range(300):
        s = Spans()
        spans = [chat(s, f"q{i}-{j}", f"a{i}-{j}", start_ms=10 * j) for j in range(4)]
        ids.append([event_id(x) for x in spans])
        records.append(s.proto())
    await produce(broker.bootstrap_servers, topic, records)
    settings = kafka_settings(
        broker.bootstrap_servers,
        topic,
        kafka={"verdict_topic": verdicts_topic, "max_batch": 2, "group_id": "g-otlp-restart"},
        input={"format": "otlp-proto"},
    )
    first = App(settings, registry=CollectorRegistry(), serve_http=False)
    task = await running(first)
    await wait_for(lambda: first.tally.events >= 8, interval=0.005)
    first.request_stop()  # the batch in hand is finished and committed, then the loop ends
    await asyncio.wait_for(task, 10)
    await first.stop()
    committed = (
        await committed_offsets(broker.bootstrap_servers, settings.kafka.group_id, topic, 1)
    )[0]
    assert committed is not None and 0 < committed < len(records)
    assert first.tally.events == 4 * committed  # whole records only: 4 events each

    second = App(settings, registry=CollectorRegistry(), serve_http=False)
    await running(second)
    await wait_for(lambda: second.tally.events >= 4 * (len(records) - committed))
    out = await read_topic(broker.bootstrap_servers, verdicts_topic, expect=4 * len(records))
    seen = Counter(orjson.loads(r.value)["id"] for r in out)
    assert set(seen) == {x for group in ids for x in group}
    assert max(seen.values()) == 1  # the stop committed what it had handled: no duplicates


async def test_demo_publishes_the_sample_stream_as_otlp(capsys: pytest.CaptureFixture[str]) -> None:
    from sidecar.demo import demo, demo_settings

    settings = demo_settings(port=0)
    assert await demo(settings, once=True, fmt="otlp-json", timeout_s=90) == 0
    out = capsys.readouterr().out
    assert "records (otlp-json) published" in out
    summary = out.split("final summary", 1)[1]
    # What the native demo reports for the same stream (381 events and 9 malformed lines).
    assert "events: 381 checked, 259 passed every rule, 122 failed" in summary
    assert "spans skipped: 469 (not_llm: 381, retrieval: 88)" in summary
