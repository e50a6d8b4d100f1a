"""Shared fixtures: a fresh Prometheus registry per test, the embedded broker per session,
unique topics, and helpers to produce and read records."""

from __future__ import annotations

import asyncio
import compileall
import gc
import os
import re
import shutil
import urllib.request
import uuid
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import orjson
import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from prometheus_client import CollectorRegistry

from sidecar.embedded import EmbeddedBroker, create_topic, free_port
from sidecar.settings import Settings

REPO = Path(__file__).resolve().parent.parent
IN_CI = os.environ.get("CI", "").lower() == "true"


def pytest_configure(config: pytest.Config) -> None:
    """Before any worker starts (in the process that starts them): the package's bytecode,
    written once. The tests start some 180 Python processes (``llm-sidecar run``, ``replay``,
    ``demo``); where Python is told not to write bytecode (``PYTHONDONTWRITEBYTECODE``) each
    compiled the package from source, 0.3 s of a 1.7 s start. Nothing is written where the
    bytecode is fresh already, or where the tree cannot be written (then they compile)."""
    if not hasattr(config, "workerinput"):
        compileall.compile_dir(REPO / "sidecar", quiet=2)


def require_tool(name: str, *extra_dirs: Path) -> str:
    """The path of a command-line tool; fail in CI when it is missing, skip elsewhere."""
    found = shutil.which(
        name, path=os.pathsep.join([*(str(d) for d in extra_dirs), os.environ.get("PATH", "")])
    )
    if found:
        return found
    message = f"{name} is not installed (run .ci/install-tools.sh)"
    if IN_CI:
        pytest.fail(message)
    pytest.skip(message)


@pytest.fixture(autouse=True)
def _collector_as_found() -> Iterator[None]:
    """Undo what an in-process ``replay`` or ``serve`` did to the garbage collector (a frozen
    heap, a higher threshold: :mod:`sidecar.heap`), so that no test sees another's tuning."""
    threshold, frozen = gc.get_threshold(), gc.get_freeze_count()
    yield
    if gc.get_threshold() != threshold or gc.get_freeze_count() != frozen:
        gc.unfreeze()
        gc.set_threshold(*threshold)


@pytest.fixture
def registry() -> CollectorRegistry:
    return CollectorRegistry()


@pytest.fixture(scope="session")
def broker() -> Iterator[EmbeddedBroker]:
    with EmbeddedBroker() as b:
        yield b


@pytest.fixture
async def proxied_broker() -> AsyncIterator[tuple[EmbeddedBroker, Any]]:
    """A broker of its own behind a :class:`~sidecar.testing.TcpProxy`; clients use
    ``127.0.0.1:<proxy.port>``, and the proxy's mode stages outages."""
    from sidecar.testing import TcpProxy

    proxy_port = free_port()
    broker = EmbeddedBroker(advertised_port=proxy_port)
    await asyncio.to_thread(broker.start)
    proxy = TcpProxy("127.0.0.1", broker.port, port=proxy_port)
    try:
        await proxy.start()
        yield broker, proxy
    finally:
        await proxy.stop()
        await asyncio.to_thread(broker.stop)


@pytest.fixture
def topic_factory(broker: EmbeddedBroker) -> Callable[..., Any]:
    async def make(partitions: int = 1, prefix: str = "t") -> str:
        name = f"{prefix}-{uuid.uuid4().hex[:10]}"
        await create_topic(broker.bootstrap_servers, name, partitions)
        return name

    return make


def event_line(i: int, **extra: Any) -> bytes:
    doc = {"id": f"e-{i:06d}", "prompt": f"question {i}", "response": f"answer number {i}", **extra}
    return orjson.dumps(doc)


async def produce(
    bootstrap: str, topic: str, values: Sequence[bytes], partitions: int | None = None
) -> None:
    producer = AIOKafkaProducer(
        bootstrap_servers=bootstrap, acks="all", enable_idempotence=False, linger_ms=2
    )
    await producer.start()
    try:
        futures = []
        for i, v in enumerate(values):
            part = i % partitions if partitions else None
            futures.append(await producer.send(topic, v, partition=part))
        await asyncio.gather(*futures)
    finally:
        await producer.stop()


async def read_topic(
    bootstrap: str,
    topic: str,
    *,
    expect: int,
    timeout: float = 30.0,
    until: Callable[[list[Any]], bool] | None = None,
) -> list[Any]:
    """Read a topic (no group) until ``expect`` records (or, with ``until``, until it holds
    for the records read) or the timeout; each offset once, in offset order per partition.
    Delivery is at least once, so a retried write can add a duplicate: a test that needs
    particular records should say so with ``until`` rather than count them.

    It reads from offset 0, not from the offset the broker calls earliest, and it goes back
    for offsets it passed over: when two producers write to one partition at once, the
    embedded broker can store their batches out of offset order, and then it names a later
    batch's offset as the earliest, or a fetch passes over a batch. Test topics are new and
    never truncated, so 0 is where each partition starts.
    """
    consumer = AIOKafkaConsumer(
        bootstrap_servers=bootstrap, enable_auto_commit=False, auto_offset_reset="earliest"
    )
    await consumer.start()
    try:
        parts = consumer.partitions_for_topic(topic)
        for _ in range(50):
            if parts:
                break
            await consumer.topics()
            await asyncio.sleep(0.1)
            parts = consumer.partitions_for_topic(topic)
        tps = [TopicPartition(topic, p) for p in sorted(parts or {0})]
        consumer.assign(tps)
        for tp in tps:
            consumer.seek(tp, 0)
        seen: dict[tuple[int, int], Any] = {}
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        progress = loop.time()

        def done() -> bool:
            if until is None:
                return len(seen) >= expect
            return until([seen[k] for k in sorted(seen)])

        while not done() and loop.time() < deadline:
            data = await consumer.getmany(timeout_ms=200)
            before = len(seen)
            for tp, msgs in data.items():
                for m in msgs:
                    seen.setdefault((tp.partition, m.offset), m)
            if len(seen) > before:
                progress = loop.time()
            elif loop.time() - progress > 1.0:
                progress = loop.time()
                for tp in tps:  # back to the first offset below the high watermark not read
                    have = {o for p, o in seen if p == tp.partition}
                    gap = next(
                        (o for o in range(consumer.highwater(tp) or 0) if o not in have), None
                    )
                    if gap is not None:
                        consumer.seek(tp, gap)
        return [seen[k] for k in sorted(seen)]
    finally:
        await consumer.stop()


def kafka_settings(bootstrap: str, topic: str, **overrides: Any) -> Settings:
    kafka = {
        "bootstrap_servers": bootstrap,
        "topics": [topic],
        "group_id": f"g-{uuid.uuid4().hex[:8]}",
        "dlq_topic": None,
        "heartbeat_interval_ms": 300,
        "session_timeout_ms": 3000,
        "fetch_timeout_ms": 100,
        **overrides.pop("kafka", {}),
    }
    return Settings(
        kafka=kafka,
        http=overrides.pop("http", {"host": "127.0.0.1", "port": 0}),
        rules=overrides.pop("rules", [REPO / "rules" / "default.yaml"]),
        **overrides,
    )


@pytest.fixture
async def running() -> AsyncIterator[Callable[..., Any]]:
    """Start Apps as background tasks; stop and await them all at the end of the test."""
    from sidecar.app import App

    started: list[tuple[App, asyncio.Task[None]]] = []

    async def start(app: App) -> asyncio.Task[None]:
        await app.start()
        task = asyncio.create_task(app.run())
        started.append((app, task))
        return task

    yield start
    for app, _ in started:
        app.request_stop()
    for app, task in started:
        try:
            await asyncio.wait_for(task, 10)
        finally:
            await app.stop()


def scraped_total(port: int, metric: str) -> float:
    """The sum over every label set of ``metric`` on the /metrics page served at ``port``."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as resp:
        text = resp.read().decode()
    pattern = rf"^{re.escape(metric)}(?:\{{[^}}]*\}})? (\S+)$"
    return sum(float(m.group(1)) for m in re.finditer(pattern, text, re.M))
