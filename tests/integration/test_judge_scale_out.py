"""Scale-out mode: the check path publishes samples to a judge topic; workers judge and commit."""

from __future__ import annotations

import asyncio
from typing import Any

import orjson
import pytest
from prometheus_client import CollectorRegistry

from sidecar.app import App
from sidecar.embedded import EmbeddedBroker
from sidecar.judge.worker import JudgeWorker
from sidecar.settings import Settings
from sidecar.testing import ScriptedJudge
from tests.conftest import kafka_settings, produce, read_topic
from tests.integration.test_kafka import committed_offsets, wait_for

pytestmark = pytest.mark.integration


def rag(i: int) -> bytes:
    return orjson.dumps(
        {
            "id": f"rag-{i:04d}",
            "task": "rag",
            "route": "/search",
            "prompt": f"Which year is mentioned in passage {i}?",
            "response": f"Passage {i} mentions the year 1990.",
            "contexts": [f"Passage {i}: the telescope was launched in 1990."],
        }
    )


def judge_settings(base: Settings, judge_url: str, topic: str, **extra: Any) -> Settings:
    judge = {
        "enabled": True,
        "base_url": judge_url,
        "topic": topic,
        "sample_rate": 1.0,
        "metrics": ["faithfulness"],
        "timeout_s": 2.0,
        "deadline_s": 3.0,
        "max_retries": 0,
        **extra,
    }
    return base.model_copy(update={"judge": base.judge.model_copy(update=judge)})


async def test_sampled_events_reach_workers_and_survive_a_worker_crash(
    broker: EmbeddedBroker, topic_factory: Any, running: Any
) -> None:
    events_topic = await topic_factory(partitions=2)
    judge_topic = await topic_factory(prefix="judge", partitions=2)
    verdicts_topic = await topic_factory(prefix="verdicts")
    n = 30
    await produce(broker.bootstrap_servers, events_topic, [rag(i) for i in range(n)])

    async with ScriptedJudge() as judge:
        base = kafka_settings(broker.bootstrap_servers, events_topic, kafka={"verdict_topic": None})
        settings = judge_settings(base, judge.base_url, judge_topic)
        # The check path: publishes every sampled event, with its weight, before committing.
        checker = App(settings, registry=CollectorRegistry(), serve_http=False)
        await running(checker)
        await wait_for(lambda: checker.tally.events >= n)
        published = await read_topic(broker.bootstrap_servers, judge_topic, expect=n)
        assert sorted(orjson.loads(r.value)["id"] for r in published) == [
            f"rag-{i:04d}" for i in range(n)
        ]
        assert all(dict(r.headers)["llm_sidecar.weight"] == b"1.0" for r in published)

        # A worker whose judge hangs never commits; it is stopped ("crashes") mid-batch.
        worker_settings = settings.model_copy(
            update={"kafka": settings.kafka.model_copy(update={"verdict_topic": verdicts_topic})}
        )
        judge.hang(times=1000)
        stuck = JudgeWorker(worker_settings, registry=CollectorRegistry(), serve_http=False)
        await stuck.start()
        task = asyncio.create_task(stuck.run())
        await asyncio.sleep(4)  # joined, fetched a batch, waiting on the judge
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await stuck.stop()
        group = f"{settings.kafka.group_id}-judge"
        committed = await committed_offsets(broker.bootstrap_servers, group, judge_topic, 2)
        assert not any(committed.values()), committed

        # A healthy worker in the same group picks the work up: every sampled event is judged.
        judge.clear_faults()
        worker = JudgeWorker(worker_settings, registry=CollectorRegistry(), serve_http=False)
        await running(worker)
        await wait_for(lambda: worker.judged >= n, timeout=60)
        judged = await read_topic(broker.bootstrap_servers, verdicts_topic, expect=n)
        scores = {orjson.loads(r.value)["id"]: orjson.loads(r.value)["judge"] for r in judged}
        assert set(scores) == {f"rag-{i:04d}" for i in range(n)}
        assert all(set(s) == {"faithfulness"} for s in scores.values())
        await wait_for(lambda: worker.source.commit_successes > 0)
        committed = await committed_offsets(broker.bootstrap_servers, group, judge_topic, 2)
        assert sum(c or 0 for c in committed.values()) == n


async def test_in_process_judge_scores_follow_on_the_verdict_topic(
    broker: EmbeddedBroker, topic_factory: Any, running: Any
) -> None:
    events_topic = await topic_factory()
    verdicts_topic = await topic_factory(prefix="verdicts")
    async with ScriptedJudge() as judge:
        base = kafka_settings(
            broker.bootstrap_servers, events_topic, kafka={"verdict_topic": verdicts_topic}
        )
        settings = judge_settings(base, judge.base_url, topic=None)
        app = App(settings, registry=CollectorRegistry(), serve_http=False)
        await running(app)
        await produce(broker.bootstrap_servers, events_topic, [rag(i) for i in range(10)])
        await wait_for(lambda: app.tally.events >= 10)
        await wait_for(lambda: len(app._judged) == 10)
        # Judged verdicts leave with the next batch's writes.
        await produce(broker.bootstrap_servers, events_topic, [rag(100)])
        records = await read_topic(broker.bootstrap_servers, verdicts_topic, expect=21)
    docs = [orjson.loads(r.value) for r in records]
    first = [d for d in docs if not d["judge"]]
    judged = [d for d in docs if d["judge"]]
    assert len(first) == 11
    assert sorted(d["id"] for d in judged) == [f"rag-{i:04d}" for i in range(10)]
    assert all(0 <= d["judge"]["faithfulness"] <= 1 for d in judged)
    assert all(d["checks"] for d in judged)  # the whole verdict again, with its scores
