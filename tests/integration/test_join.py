"""The prompt/response join on the embedded broker: halves in different partitions, out of
order, duplicated, with a restart in the middle; nothing lost, the commit point held back."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson
import pytest
from aiokafka import AIOKafkaProducer
from prometheus_client import CollectorRegistry

from sidecar.app import App
from sidecar.embedded import EmbeddedBroker
from tests.conftest import kafka_settings, read_topic
from tests.integration.test_kafka import committed_offsets, wait_for

pytestmark = pytest.mark.integration

RULES = """version: 1
rules:
  - id: prompt-no-email
    check: contains_email
    field: prompt
    expect: false
  - id: response-no-email
    check: contains_email
    expect: false
"""


def prompt(rid: str, i: int = 0) -> bytes:
    return orjson.dumps({"id": f"{rid}-p{i}", "request_id": rid, "prompt": f"question {rid}"})


def response(rid: str, i: int = 0) -> bytes:
    return orjson.dumps({"id": f"{rid}-r{i}", "request_id": rid, "response": f"answer {rid}"})


async def send(bootstrap: str, topic: str, records: Sequence[tuple[int, bytes]]) -> None:
    producer = AIOKafkaProducer(
        bootstrap_servers=bootstrap, acks="all", enable_idempotence=False, linger_ms=2
    )
    await producer.start()
    try:
        for partition, value in records:  # one by one: the order within a partition is ours
            await (await producer.send(topic, value, partition=partition))
    finally:
        await producer.stop()


def waiting_offset(records: Sequence[tuple[int, bytes]], partition: int) -> int:
    """The offset of the first prompt of r10-r14 in a partition: where its commit must stop."""
    values = [v for p, v in records if p == partition]
    return next(i for i, v in enumerate(values) if orjson.loads(v).get("request_id", "") >= "r10")


def app(settings: Any) -> App:
    return App(settings, registry=CollectorRegistry(), serve_http=False)


async def stop(a: App, task: asyncio.Task[None]) -> None:
    a.request_stop()
    await asyncio.wait_for(task, 20)
    await a.stop()


async def test_split_events_join_across_partitions_and_a_restart(
    broker: EmbeddedBroker, topic_factory: Any, tmp_path: Path
) -> None:
    bootstrap = broker.bootstrap_servers
    topic = await topic_factory(partitions=3)
    verdict_topic = await topic_factory(prefix="verdicts")
    rules = tmp_path / "rules.yaml"
    rules.write_text(RULES)
    base = kafka_settings(bootstrap, topic, kafka={"verdict_topic": verdict_topic}, rules=[rules])
    settings = base.model_copy(
        update={"join": base.join.model_copy(update={"enabled": True, "ttl_s": 120.0})}
    )
    # Pairs r00-r09: the two halves in different partitions, every other one response first.
    first: list[tuple[int, bytes]] = []
    for i in range(10):
        rid = f"r{i:02d}"
        halves = [(i % 3, prompt(rid)), ((i + 1) % 3, response(rid))]
        first += reversed(halves) if i % 2 == 0 else halves
    first.append((0, prompt("r03", 1)))  # a duplicate of a half already joined
    # Pairs r10-r14: only the prompts arrive before the restart.
    first += [(i % 3, prompt(f"r{i:02d}")) for i in range(10, 15)]
    await send(bootstrap, topic, first)

    a1 = app(settings)
    await a1.start()
    t1 = asyncio.create_task(a1.run())
    await wait_for(lambda: a1.tally.events >= 10, timeout=60)
    assert a1.joiner is not None
    await wait_for(lambda: a1.joiner is not None and a1.joiner.waiting == 5, timeout=30)
    await asyncio.sleep(1.0)  # let the last commit land
    await stop(a1, t1)
    # The commit point stops at the earliest waiting prompt in every partition that holds one.
    group = settings.kafka.group_id
    committed = await committed_offsets(bootstrap, group, topic, 3)
    assert committed == {p: waiting_offset(first, p) for p in range(3)}
    assert (
        a1.registry.get_sample_value("llm_sidecar_join_duplicates_total", {"side": "prompt"}) == 1
    )  # the second r03 prompt

    # After the restart: the responses of r10-r14 (one twice), and two halves that never pair.
    second = [((i + 2) % 3, response(f"r{i:02d}")) for i in range(10, 15)]
    second += [(1, response("r12", 1)), (2, prompt("lonely-prompt")), (0, response("lonely-reply"))]
    await send(bootstrap, topic, second)
    s2 = settings.model_copy(update={"join": settings.join.model_copy(update={"ttl_s": 2.0})})
    a2 = app(s2)
    await a2.start()
    t2 = asyncio.create_task(a2.run())
    try:
        reg = a2.registry

        def orphaned(side: str) -> float:
            got = reg.get_sample_value(
                "llm_sidecar_join_orphans_total", {"side": side, "reason": "expired"}
            )
            return got or 0.0

        await wait_for(lambda: orphaned("prompt") >= 1 and orphaned("response") >= 1, timeout=30)
        await asyncio.sleep(0.5)  # the batch that checked them is written
        # Every verdict so far: the orphans' batch was the last one written.
        needed = {f"r{i:02d}" for i in range(15)} | {"lonely-prompt-p0", "lonely-reply-r0"}
        records = await read_topic(
            bootstrap,
            verdict_topic,
            expect=0,
            timeout=30,
            until=lambda rs: needed <= {orjson.loads(r.value)["id"] for r in rs},
        )
        verdicts = [orjson.loads(r.value) for r in records]
        ids = [v["id"] for v in verdicts]
        # Nothing lost: every pair was checked whole, with the rules of both fields.
        for i in range(15):
            rid = f"r{i:02d}"
            joined = [v for v in verdicts if v["id"] == rid]
            assert joined, rid
            assert set(joined[0]["checks"]) == {"prompt-no-email", "response-no-email"}
        # The halves that never paired were checked alone, with the rules of their own field.
        (lp,) = [v for v in verdicts if v["id"] == "lonely-prompt-p0"]
        (lr,) = [v for v in verdicts if v["id"] == "lonely-reply-r0"]
        assert set(lp["checks"]) == {"prompt-no-email"}
        assert set(lr["checks"]) == {"response-no-email"}
        # The pairs completed after the restart were checked once; the duplicate was dropped.
        assert all(ids.count(f"r{i:02d}") == 1 for i in range(10, 15))
        assert reg.get_sample_value("llm_sidecar_join_duplicates_total", {"side": "response"}) == 1
        # Finally every record is committed.
        total = {p: sum(1 for q, _ in first + second if q == p) for p in range(3)}
        await wait_for(lambda: a2.joiner is not None and a2.joiner.waiting == 0, timeout=20)

        async def all_committed() -> bool:
            return await committed_offsets(bootstrap, group, topic, 3) == total

        for _ in range(100):
            if await all_committed():
                break
            await asyncio.sleep(0.2)
        assert await committed_offsets(bootstrap, group, topic, 3) == total
    finally:
        await stop(a2, t2)
