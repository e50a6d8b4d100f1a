"""Group churn with ``llm-sidecar run`` as real processes on the embedded broker: members
stopped (SIGTERM, or SIGKILL about a third of the time) and started again a few seconds apart,
several stops landing in the middle of a join. The group must go on: every event produced is
processed within a bound after the last change, none lost."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import random
import signal
import subprocess
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import orjson
import pytest
import yaml
from aiokafka import AIOKafkaConsumer
from prometheus_client import CollectorRegistry

from sidecar.app import App
from sidecar.embedded import EmbeddedBroker
from tests.conftest import event_line, kafka_settings, produce, read_topic
from tests.integration.test_delivery import (
    PARTITIONS,
    produce_slowly,
    start,
    verdict_ids,
    wait_for_log,
    write_config,
)
from tests.integration.test_kafka import committed_offsets, wait_for

pytestmark = pytest.mark.integration

MEMBERS = 3
SESSION_MS = 3000
CHANGES = int(os.environ.get("CHURN_CHANGES", "6"))
EVENTS = int(os.environ.get("CHURN_EVENTS", "1800"))
SEED = int(os.environ.get("CHURN_SEED", "31"))
PROGRESS_BOUND_S = 25.0
"""After the last change: a killed member's session (3 s) and two rebalances, with room for a
loaded machine. A group that does not go on never gets there."""


@contextmanager
def members(configs: list[Path]) -> Iterator[list[subprocess.Popen[bytes]]]:
    procs = [start(c) for c in configs]
    try:
        yield procs
    finally:
        for p in procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in procs:
            try:
                p.wait(15)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


def revoked_count(log: Path) -> int:
    return log.read_text().count("partitions revoked") if log.exists() else 0


async def test_churn_with_stops_during_joins_and_kills_keeps_the_group_going(
    broker: EmbeddedBroker, topic_factory: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTHONFAULTHANDLER", "1")  # a member that dies of a signal says where
    rng = random.Random(SEED)
    bootstrap = broker.bootstrap_servers
    topic = await topic_factory(partitions=PARTITIONS)
    verdicts = await topic_factory(prefix="verdicts")
    group = f"g-churn-{uuid.uuid4().hex[:6]}"
    configs = []
    for m in range(MEMBERS):
        config = write_config(tmp_path / f"m{m}.yaml", bootstrap, topic, verdicts, group)
        doc = yaml.safe_load(config.read_text())
        doc["kafka"]["session_timeout_ms"] = SESSION_MS
        # The embedded broker pauses every follower's join 3 s, whatever the session: with
        # 3 s sessions a join through two rounds would pass the stuck-join limit (rebalance
        # timeout plus a session timeout), so the rebalance timeout is the default's 10 s.
        doc["kafka"]["rebalance_timeout_ms"] = 10_000
        doc["limits"]["drain_timeout_s"] = 5
        config.write_text(yaml.safe_dump(doc))
        configs.append(config)
    logs = [c.with_suffix(".log") for c in configs]
    loop = asyncio.get_running_loop()
    with members(configs) as procs:
        for log in logs:
            await wait_for_log(log, "partitions assigned", timeout=60)
        # The events arrive all through the churn and a little past it.
        per_batch = 60
        pause = max(0.05, CHANGES * 2.0 / (EVENTS / per_batch))
        producer = asyncio.create_task(produce_slowly(bootstrap, topic, EVENTS, per_batch, pause))
        changes: list[str] = []
        born = [loop.time()] * MEMBERS
        starts = [1] * MEMBERS
        last = -1
        for k in range(CHANGES):
            if k % 2 == 1:
                # In the middle of a join: the start before this one made the group rebalance.
                # The member longest in the group (the likeliest leader) is stopped once it has
                # revoked its partitions for that round, with SIGTERM: it has a generation.
                m = min((i for i in range(MEMBERS) if i != last), key=lambda i: born[i])
                with contextlib.suppress(AssertionError):  # no revoke seen: stop it anyway
                    await wait_for_log(
                        logs[m], "partitions revoked", count=revoked_count(logs[m]) + 1, timeout=5
                    )
                await asyncio.sleep(rng.uniform(0.0, 0.4))
                how = signal.SIGTERM
            else:
                m = rng.randrange(MEMBERS)
                await asyncio.sleep(rng.uniform(1.0, 2.5))
                how = signal.SIGKILL if rng.random() < 0.6 else signal.SIGTERM  # ~30 % overall
            # A process still importing has no handler yet and dies of a SIGTERM (-15): let
            # this start of it get as far as consuming first.
            await wait_for_log(logs[m], "kafka: consuming", count=starts[m], timeout=30)
            procs[m].send_signal(how)
            code = await asyncio.to_thread(procs[m].wait, 30)
            changes.append(f"{how.name} m{m} -> {code}")
            if how == signal.SIGTERM:
                assert code == 0, (code, changes, logs[m].read_text()[-3000:])
            procs[m] = start(configs[m])
            born[m], last = loop.time(), m
            starts[m] += 1
        await producer
        last_change = loop.time()  # the later of the last change and the last event
        want = {f"e-{i:06d}" for i in range(EVENTS)}
        ids: set[str] = set()
        while loop.time() - last_change < PROGRESS_BOUND_S:
            ids = set(await verdict_ids(bootstrap, verdicts, expect=10**9, timeout=0.5))
            if ids >= want:
                break
            await asyncio.sleep(0.5)
        took = loop.time() - last_change
        missing = want - ids
        tails = "\n".join(f"--- m{m}\n{log.read_text()[-1500:]}" for m, log in enumerate(logs))
        assert not missing, (
            f"{len(missing)} of {EVENTS} events not processed {took:.1f}s after the last "
            f"change; changes: {changes}\n{tails}"
        )
        # And the group commits to the end of every partition: a new owner will not go back.
        end = {p: EVENTS // PARTITIONS + (1 if p < EVENTS % PARTITIONS else 0) for p in range(3)}
        committed: dict[int, int | None] = {}
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            committed = await committed_offsets(bootstrap, group, topic, PARTITIONS)
            if committed == end:
                break
            await asyncio.sleep(0.5)
        assert committed == end, (committed, changes)
        replaced = sum(log.read_text().count("replacing a stuck consumer") for log in logs)
        print(
            f"churn: {changes}; all {EVENTS} processed {took:.1f}s after the last change "
            f"and event; stuck joins replaced: {replaced}"
        )


async def test_a_stuck_join_is_reported_once_and_a_fresh_consumer_joins_again(
    broker: EmbeddedBroker,
    topic_factory: Any,
    running: Any,
    registry: CollectorRegistry,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A join that never ends (here its response never comes: the consumer's rejoin is made to
    wait forever, as a lost response or a broker-side wedge would) is given up after the
    rebalance timeout plus a session timeout: one WARNING line, one count, a fresh consumer.
    Nothing is lost and nothing is processed twice."""
    bootstrap = broker.bootstrap_servers
    topic = await topic_factory(partitions=PARTITIONS)
    other = await topic_factory()
    verdicts = await topic_factory(prefix="verdicts")
    settings = kafka_settings(bootstrap, topic, kafka={"verdict_topic": verdicts})
    group = settings.kafka.group_id
    app = App(settings, registry=registry, serve_http=False)
    await running(app)
    source: Any = app.source
    await wait_for(lambda: source._consumer is not None and len(source._consumer.assignment()) == 3)
    first = [event_line(i) for i in range(300)]
    await produce(bootstrap, topic, first, partitions=PARTITIONS)
    await wait_for(lambda: app.tally.events >= 300, timeout=30)
    stuck = source._consumer

    async def never(*_: Any) -> bool:
        await asyncio.Event().wait()
        return False

    stuck._coordinator._do_rejoin_group = never
    # Another member of the group (reading another topic) makes the group rebalance.
    helper = AIOKafkaConsumer(
        other, bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False,
        session_timeout_ms=3000, heartbeat_interval_ms=300,
    )  # fmt: skip
    await helper.start()
    polling = asyncio.create_task(_poll(helper))
    try:
        with caplog.at_level(logging.WARNING, logger="sidecar.sources.kafka"):
            await wait_for(lambda: source.stuck_joins >= 1, timeout=40)
            await wait_for(
                lambda: (
                    source._consumer is not None
                    and source._consumer is not stuck
                    and len(source._consumer.assignment()) == 3
                ),
                timeout=40,
            )
        second = [event_line(i) for i in range(300, 600)]
        await produce(bootstrap, topic, second, partitions=PARTITIONS)
        records = await read_topic(bootstrap, verdicts, expect=600, timeout=40)
        ids = [orjson.loads(r.value)["id"] for r in records]
        assert sorted(ids) == [f"e-{i:06d}" for i in range(600)]  # none lost, none twice
        await asyncio.sleep(1.0)  # more time for a duplicate to show
        records = await read_topic(bootstrap, verdicts, expect=601, timeout=1)
        assert len(records) == 600
        await wait_for(
            lambda: registry.get_sample_value("llm_sidecar_stuck_group_joins_total") == 1
        )
        warnings = [r for r in caplog.records if "group join has taken" in r.getMessage()]
        assert len(warnings) == 1, warnings
        assert source.stuck_joins == 1
        end = {p: 200 for p in range(PARTITIONS)}
        for _ in range(50):
            if await committed_offsets(bootstrap, group, topic, PARTITIONS) == end:
                break
            await asyncio.sleep(0.2)
        assert await committed_offsets(bootstrap, group, topic, PARTITIONS) == end
    finally:
        polling.cancel()
        await asyncio.gather(polling, return_exceptions=True)
        await helper.stop()


async def _poll(consumer: AIOKafkaConsumer) -> None:
    while True:
        await consumer.getmany(timeout_ms=200)
