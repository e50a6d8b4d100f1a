"""The MQTT source against a real Mosquitto started per test on a free port."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import subprocess
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import aiomqtt
import pytest

from sidecar.app import App
from sidecar.embedded import free_port
from sidecar.settings import MqttSettings, Settings
from sidecar.sources.mqtt import MqttSource
from tests.conftest import REPO, event_line, require_tool

pytestmark = pytest.mark.integration


@contextlib.asynccontextmanager
async def running_mosquitto(tmp_path: Path, port: int) -> AsyncIterator[int]:
    binary = require_tool("mosquitto", Path("/usr/sbin"))
    conf = tmp_path / "mosquitto.conf"
    conf.write_text(f"listener {port} 127.0.0.1\nallow_anonymous true\npersistence false\n")
    with open(tmp_path / "mosquitto.log", "wb") as log:
        proc = subprocess.Popen([binary, "-c", str(conf)], stdout=log, stderr=subprocess.STDOUT)
    try:
        for _ in range(100):
            try:
                _, writer = await asyncio.open_connection("127.0.0.1", port)
                writer.close()
                await writer.wait_closed()
                break
            except OSError:
                await asyncio.sleep(0.05)
        yield port
    finally:
        proc.terminate()
        proc.wait(5)


@pytest.fixture
async def mosquitto(tmp_path: Path) -> AsyncIterator[int]:
    async with running_mosquitto(tmp_path, free_port()) as port:
        yield port


async def publish(port: int, topic: str, payloads: list[bytes]) -> None:
    async with aiomqtt.Client(
        "127.0.0.1", port, identifier=f"pub-{uuid.uuid4().hex[:6]}"
    ) as client:
        for p in payloads:
            await client.publish(topic, p, qos=1)


def mqtt_settings(port: int, client_id: str, **kw: Any) -> MqttSettings:
    return MqttSettings(
        host="127.0.0.1",
        port=port,
        topics=["llm/events/#"],
        client_id=client_id,
        batch_timeout_ms=100,
        **kw,
    )


async def test_events_from_mqtt_are_checked_and_counted(mosquitto: int, registry: Any) -> None:
    settings = Settings(
        source="mqtt",
        mqtt=mqtt_settings(mosquitto, "sidecar-a"),
        http={"host": "127.0.0.1", "port": 0},
        rules=[REPO / "rules" / "default.yaml"],
    )
    app = App(settings, registry=registry)
    await app.start()
    task = asyncio.create_task(app.run())
    try:
        lines = [event_line(i) for i in range(30)] + [b"not json", event_line(99, response="{{x}}")]
        await publish(mosquitto, "llm/events/chat", lines)
        for _ in range(100):
            if app.tally.events + sum(app.tally.dead.values()) >= len(lines):
                break
            await asyncio.sleep(0.1)
        assert app.tally.events == 31
        assert app.tally.failed_events == 1
        assert app.tally.dead == {"invalid_json": 1}
        assert await app.source.ready()
    finally:
        app.request_stop()
        await asyncio.wait_for(task, 10)
        await app.stop()


async def test_unacknowledged_messages_are_redelivered_to_the_same_session(mosquitto: int) -> None:
    client_id = f"sidecar-{uuid.uuid4().hex[:6]}"
    first = MqttSource(mqtt_settings(mosquitto, client_id))
    await first.start()
    await publish(mosquitto, "llm/events/x", [event_line(i) for i in range(5)])
    batches = first.batches()
    got: list[Any] = []
    while not got:
        got = await asyncio.wait_for(anext(batches), 10)
    # Crash before acknowledging: disconnect without PUBACKs.
    await batches.aclose()
    await first.stop()

    second = MqttSource(mqtt_settings(mosquitto, client_id))
    await second.start()
    seen: list[bytes] = []
    batches = second.batches()
    try:
        while len(seen) < 5:
            batch = await asyncio.wait_for(anext(batches), 10)
            seen.extend(r.value for r in batch)
            await second.ack(batch)
    finally:
        await batches.aclose()
        await second.stop()
    assert {r.value for r in got} <= set(seen)
    assert sorted(set(seen)) == sorted(event_line(i) for i in range(5))

    # Once acknowledged, a new connection of the same session gets nothing again.
    third = MqttSource(mqtt_settings(mosquitto, client_id))
    await third.start()
    batches = third.batches()
    try:
        loop = asyncio.get_running_loop()
        until = loop.time() + 1.5
        while loop.time() < until:  # only idle turns: nothing is delivered again
            assert await asyncio.wait_for(anext(batches), 5) == []
    finally:
        await batches.aclose()
        await third.stop()


async def until(predicate: Callable[[], bool | Awaitable[bool]], timeout: float = 15.0) -> bool:
    """Whether ``predicate`` (plain or async) came true within ``timeout`` seconds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        got = predicate()
        if await got if inspect.isawaitable(got) else got:
            return True
        if loop.time() > deadline:
            return False
        await asyncio.sleep(0.1)


async def test_a_broker_that_comes_late_is_waited_for_and_its_outage_logged_once(
    tmp_path: Path, registry: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """The sidecar starts before Mosquitto: it starts anyway, says in /readyz what it waits
    for, logs the outage once however often it retries, keeps its loop turning (liveness),
    and reads the events once the broker is up; the same when the broker goes away later."""
    require_tool("mosquitto", Path("/usr/sbin"))  # before waiting for a broker that cannot come
    port = free_port()
    settings = Settings(
        source="mqtt",
        mqtt=mqtt_settings(port, f"late-{uuid.uuid4().hex[:6]}"),
        http={"host": "127.0.0.1", "port": 0},
        rules=[REPO / "rules" / "default.yaml"],
    )
    app = App(settings, registry=registry)
    source = app.source
    assert isinstance(source, MqttSource)
    source.held_s = 1.0  # a connection counts as the broker being back once it held 1 s
    caplog.set_level(logging.INFO, "sidecar")
    started = time.monotonic()
    await app.start()  # no broker yet: this must not fail
    task = asyncio.create_task(app.run())
    try:
        await asyncio.sleep(4)  # attempts at about 0, 0.5, 1.5 and 3.5 s
        reason = app.source.not_ready()
        assert reason is not None and reason.startswith(f"waiting for MQTT at 127.0.0.1:{port}")
        # Each failed attempt is a turn of the batch loop, which /healthz watches.
        assert app._last_turn - started >= 1.0, "the batch loop stood still while it waited"
        async with running_mosquitto(tmp_path, port):
            assert await until(app.source.ready)
            await publish(port, "llm/events/chat", [event_line(i) for i in range(5)])
            assert await until(lambda: app.tally.events >= 5)
            assert app.tally.events == 5
            assert await until(lambda: bool(source.link.reachable))  # once it has held
        # The broker goes away and comes back: one line for each, the events still read.
        assert await until(lambda: app.source.not_ready() is not None)
        await asyncio.sleep(2)
        async with running_mosquitto(tmp_path, port):
            assert await until(app.source.ready)
            await publish(port, "llm/events/chat", [event_line(i) for i in range(5, 8)])
            assert await until(lambda: app.tally.events >= 8)
            assert app.tally.events == 8
            assert await until(lambda: bool(source.link.reachable))
            app.request_stop()  # while the broker is up: its going is not an outage here
            await asyncio.wait_for(task, 10)
    finally:
        app.request_stop()
        await asyncio.wait_for(task, 10)
        await app.stop()
    lines = [r.getMessage() for r in caplog.records if r.name == "sidecar.sources.mqtt"]
    assert sum("is unreachable" in line for line in lines) == 2, lines
    assert sum("connection lost" in line for line in lines) == 1, lines
    assert sum("reachable again" in line for line in lines) == 2, lines


async def test_two_sidecars_with_one_client_id_back_off_and_log_it_as_one_outage(
    mosquitto: int, caplog: pytest.LogCaptureFixture
) -> None:
    """Two replicas configured with the same client_id take the session from each other at
    every connect. Each reconnects with backoff, not in a tight loop, and the flapping is one
    outage in the log, not two lines per connection."""
    caplog.set_level(logging.INFO, "sidecar")
    client_id = f"twin-{uuid.uuid4().hex[:6]}"
    sources = [MqttSource(mqtt_settings(mosquitto, client_id)) for _ in range(2)]
    for source in sources:
        await source.start()

    async def consume(source: MqttSource) -> None:
        async for _ in source.batches():
            pass

    tasks = [asyncio.create_task(consume(source)) for source in sources]
    await asyncio.sleep(6)
    for source in sources:
        source.stop_fetching()
    await asyncio.wait_for(asyncio.gather(*tasks), 15)
    for source in sources:
        await source.stop()
    # Backoff 0.5, 1, 2, 4 s: at most about five connections each in 6 s (before: thousands).
    assert all(2 <= source._connections <= 7 for source in sources), [
        source._connections for source in sources
    ]
    lines = [r.getMessage() for r in caplog.records if r.name == "sidecar.sources.mqtt"]
    assert sum("is unreachable" in line for line in lines) <= 2, lines
    assert not any("reachable again" in line for line in lines), lines
