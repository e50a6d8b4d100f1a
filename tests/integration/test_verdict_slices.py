"""A batch is checked and counted in slices; its offsets are committed only after its verdicts,
the commit running beside the next batch (embedded broker)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import Any

import pytest
from aiokafka import AIOKafkaConsumer, TopicPartition
from prometheus_client import CollectorRegistry

from sidecar.app import App
from sidecar.embedded import EmbeddedBroker
from sidecar.pipeline import Pipeline, Tally, Verdict
from sidecar.sources.base import Record
from tests.conftest import event_line, kafka_settings, produce
from tests.integration.test_kafka import committed_offsets, wait_for

pytestmark = pytest.mark.integration

MAX_BATCH = 100
SLICE = 30


def sliced_app(bootstrap: str, topic: str) -> App:
    settings = kafka_settings(
        bootstrap, topic, kafka={"max_batch": MAX_BATCH}, limits={"verdict_slice": SLICE}
    )
    return App(settings, registry=CollectorRegistry(), serve_http=False)


async def test_batches_are_bounded_counted_in_slices_and_committed_after_their_verdicts(
    broker: EmbeddedBroker, topic_factory: Any, running: Any
) -> None:
    topic = await topic_factory(partitions=1)
    n = 430
    # Produced before the start: the first getmany finds more than one batch waiting.
    await produce(broker.bootstrap_servers, topic, [event_line(i) for i in range(n)])
    app = sliced_app(broker.bootstrap_servers, topic)

    batch_sizes: list[int] = []
    handle = app.handle

    async def observed(batch: Sequence[Record]) -> list[Verdict]:
        batch_sizes.append(len(batch))
        return await handle(batch)

    app.handle = observed  # type: ignore[method-assign]
    counted: list[tuple[float, list[str]]] = []  # (when, ids) per listener call
    app.listeners.append(lambda vs: counted.append((time.monotonic(), [v.id for v in vs])))

    # The broker's view of the group's committed offset, polled all along: whenever it says
    # c, the verdicts of offsets 0..c-1 (ids e-0..e-(c-1)) were counted before its answer.
    tp = TopicPartition(topic, 0)
    seen: list[tuple[float, int | None]] = []
    poller = AIOKafkaConsumer(
        bootstrap_servers=broker.bootstrap_servers,
        group_id=app.settings.kafka.group_id,
        enable_auto_commit=False,
    )
    await poller.start()

    async def poll() -> None:
        while True:
            committed = await poller.committed(tp)
            seen.append((time.monotonic(), committed))
            if committed == n:
                return
            await asyncio.sleep(0.005)

    try:
        polling = asyncio.create_task(poll())
        await running(app)
        await asyncio.wait_for(polling, 60)
    finally:
        await poller.stop()

    # getmany's bound is honoured, and was reached.
    assert max(batch_sizes) == MAX_BATCH
    assert sum(batch_sizes) == n
    # Every batch was counted slice by slice.
    sizes = [len(ids) for _, ids in counted]
    assert max(sizes) <= SLICE
    assert len(counted) >= sum(-(-b // SLICE) for b in batch_sizes)
    # No verdict lost or counted twice.
    ids = [i for _, got in counted for i in got]
    assert sorted(ids) == [f"e-{i:06d}" for i in range(n)]
    # The tallies and counters, added once per batch from its slices, are those of one pass.
    assert app.pipeline is not None
    reference = Tally()
    everything = [Record(event_line(i), topic, 0, i) for i in range(n)]
    _, _, stats = Pipeline(app.pipeline.ruleset).process(everything, max_event_bytes=1 << 20)
    reference.add(app.pipeline.rules, stats)
    assert app.tally.events == reference.events == n
    assert app.tally.failed_events == reference.failed_events
    assert {r: t.counts for r, t in app.tally.rules.items()} == {
        r: t.counts for r, t in reference.rules.items()
    }
    # Nothing committed before its verdict.
    assert seen[-1][1] == n
    for when, committed in seen:
        if committed is None:
            continue
        before = {i for t, got in counted if t <= when for i in got}
        missing = {f"e-{i:06d}" for i in range(committed)} - before
        assert not missing, f"offset {committed} committed before {len(missing)} verdicts"


async def test_a_stop_right_after_the_last_batch_still_commits_it(
    broker: EmbeddedBroker, topic_factory: Any
) -> None:
    topic = await topic_factory(partitions=2)
    n = 260
    await produce(broker.bootstrap_servers, topic, [event_line(i) for i in range(n)], partitions=2)
    app = sliced_app(broker.bootstrap_servers, topic)
    await app.start()
    runner = asyncio.create_task(app.run())
    try:
        await wait_for(lambda: app.tally.events >= n, interval=0.001)
    finally:
        # At once: the last batch's commit may still be on its way.
        app.request_stop()
        await asyncio.wait_for(runner, 30)
        await app.stop()
    committed = await committed_offsets(
        broker.bootstrap_servers, app.settings.kafka.group_id, topic, 2
    )
    assert committed == {0: n // 2, 1: n // 2}
