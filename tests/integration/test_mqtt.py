"""The MQTT source against a real Mosquitto started per test on a free port."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import logging
import os
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import aiomqtt
import pytest
from prometheus_client import CollectorRegistry

from sidecar.app import App
from sidecar.embedded import free_port
from sidecar.errors import ConfigError
from sidecar.settings import MqttSettings, Settings
from sidecar.sources.mqtt import MqttSource
from tests.conftest import REPO, event_line, require_tool

pytestmark = pytest.mark.integration


@contextlib.asynccontextmanager
async def running_mosquitto(
    tmp_path: Path, port: int, users: dict[str, str] | None = None
) -> AsyncIterator[int]:
    """Mosquitto on ``port``: anonymous, or with ``users`` (name -> password) only."""
    binary = require_tool("mosquitto", Path("/usr/sbin"))
    conf = tmp_path / "mosquitto.conf"
    access = "allow_anonymous true\n"
    if users is not None:
        passwd = require_tool("mosquitto_passwd", Path("/usr/bin"))
        pwfile = tmp_path / "passwords"
        pwfile.write_text("")
        for user, password in users.items():
            args = [passwd, "-b", str(pwfile), user, password]
            await asyncio.to_thread(subprocess.run, args, check=True)
        access = f"allow_anonymous false\npassword_file {pwfile}\n"
        if os.geteuid() == 0:
            # Started as root, Mosquitto drops to its own user, who cannot read tmp_path.
            access += "user root\n"
    conf.write_text(f"listener {port} 127.0.0.1\n{access}persistence false\n")
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


def mqtt_app(port: int, client_id: str, **mqtt: Any) -> App:
    """An App on the MQTT source with the default rules, HTTP on a free loopback port."""
    settings = Settings(
        source="mqtt",
        mqtt=mqtt_settings(port, client_id, **mqtt),
        http={"host": "127.0.0.1", "port": 0},
        rules=[REPO / "rules" / "default.yaml"],
    )
    return App(settings, registry=CollectorRegistry())


def run_sidecar(port: int, tmp_path: Path, **mqtt: Any) -> subprocess.CompletedProcess[str]:
    """``llm-sidecar run`` on the MQTT source until it exits (at most 30 s)."""
    config = tmp_path / "sidecar.yaml"
    settings = {
        "source": "mqtt",
        "mqtt": {"host": "127.0.0.1", "port": port, "client_id": "refused", **mqtt},
        "http": {"host": "127.0.0.1", "port": 0},
    }
    config.write_text(json.dumps(settings))  # JSON is YAML
    return subprocess.run(
        [sys.executable, "-m", "sidecar", "run", "--config", str(config)],
        capture_output=True,
        text=True,
        timeout=30,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )


async def test_wrong_credentials_stop_the_sidecar_with_a_line_that_says_what_to_check(
    tmp_path: Path,
) -> None:
    """A broker that refuses the credentials refuses them again on every retry: the sidecar
    exits 2 at once with one line naming the settings to check, instead of retrying for ever
    as if the broker were down and never becoming ready."""
    async with running_mosquitto(tmp_path, free_port(), {"alice": "right"}) as port:
        started = time.monotonic()
        done = await asyncio.to_thread(
            run_sidecar, port, tmp_path, username="alice", password="wrong"
        )
        assert time.monotonic() - started < 20
        assert done.returncode == 2, done.stderr
        assert "Traceback" not in done.stderr
        last = done.stderr.strip().splitlines()[-1]
        assert f"MQTT broker at 127.0.0.1:{port} refused the connection" in last, done.stderr
        assert "mqtt.password" in last
        assert "wrong" not in done.stderr  # the password itself is never shown
        assert "unreachable" not in done.stderr  # it answered: it is not an outage

        # The same user with the right password reads the events.
        app = mqtt_app(port, "allowed", username="alice", password="right")
        await app.start()
        task = asyncio.create_task(app.run())
        try:
            async with aiomqtt.Client(
                "127.0.0.1", port, identifier="pub", username="alice", password="right"
            ) as client:
                for i in range(3):
                    await client.publish("llm/events/chat", event_line(i), qos=1)
            assert await until(lambda: app.tally.events >= 3)
        finally:
            app.request_stop()
            await asyncio.wait_for(task, 10)
            await app.stop()


async def test_credentials_refused_at_a_reconnect_end_the_run_with_the_same_error(
    tmp_path: Path,
) -> None:
    """The broker comes back after an outage with the sidecar's user removed (credentials
    rotated without the sidecar's secret): the batch loop ends with the configuration error,
    which ``run`` reports as above, rather than waiting for ever as not ready."""
    port = free_port()
    app = mqtt_app(port, "rotated", username="alice", password="old")
    async with running_mosquitto(tmp_path, port, {"alice": "old"}):
        await app.start()
        task = asyncio.create_task(app.run())
        assert await until(app.source.ready)
    try:
        async with running_mosquitto(tmp_path, port, {"alice": "new"}):
            with pytest.raises(ConfigError, match="refused the connection"):
                await asyncio.wait_for(task, 20)
    finally:
        app.request_stop()
        await app.stop()


@pytest.mark.parametrize(
    ("mqtt", "says"),
    [
        ({"topics": ["llm/#/chat"]}, "'#' must be a whole level"),
        ({"topics": ["llm/ev+"]}, "'+' must be a whole level"),
        ({"topics": [""]}, "it is empty"),
        ({"client_id": ""}, "client_id"),
    ],
)
def test_a_topic_filter_or_client_id_the_broker_cannot_take_is_a_settings_error(
    tmp_path: Path, mqtt: dict[str, Any], says: str
) -> None:
    """Caught when the settings load, before any connection: exit 2 and one line, where the
    MQTT client used to raise a traceback at the first subscription."""
    done = run_sidecar(1, tmp_path, **mqtt)  # port 1: nothing is ever asked of it
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert says in done.stderr


def test_which_refusals_are_for_good() -> None:
    """The codes a broker gives for settings that cannot work stop the sidecar; a busy or
    unavailable broker, and a subscription granted at any QoS, do not. Mosquitto grants
    every subscription (it applies its access rules on delivery), so the SUBACK failure is
    shown here on the codes themselves."""
    from aiomqtt.exceptions import MqttConnectError
    from paho.mqtt.packettypes import PacketTypes
    from paho.mqtt.reasoncodes import ReasonCode

    from sidecar.sources.mqtt import _failed_grant, refused_for_good

    def connect_error(code: int) -> aiomqtt.MqttCodeError:
        return MqttConnectError(ReasonCode(PacketTypes.CONNACK, identifier=code))

    assert "mqtt.password" in str(refused_for_good(connect_error(134)))
    assert "mqtt.password" in str(refused_for_good(connect_error(135)))
    assert "mqtt.client_id" in str(refused_for_good(connect_error(133)))
    assert refused_for_good(MqttConnectError(5)) == refused_for_good(connect_error(135))
    for transient in (136, 137, 151, 159):  # unavailable, busy, quota, rate: retried
        assert refused_for_good(connect_error(transient)) is None
    assert refused_for_good(aiomqtt.MqttError("timed out")) is None
    assert refused_for_good(MqttConnectError(3)) is None  # 3.1.1: unavailable

    def suback(*codes: int) -> list[ReasonCode]:
        return [ReasonCode(PacketTypes.SUBACK, identifier=c) for c in codes]

    assert _failed_grant(suback(0, 1)) is None
    assert str(_failed_grant(suback(1, 135))) == "Not authorized"
    assert _failed_grant([1, 128]) == 128  # MQTT 3.1.1 brokers' plain failure code


def test_with_mqtt_the_judge_runs_in_process_even_with_a_judge_topic(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """There is no Kafka to publish samples to with MQTT. A judge.topic in the settings used
    to make the sidecar count samples as published (and skip the in-process judge), while the
    sink wrote none: nothing was judged at all, behind a warning about topics."""
    caplog.set_level(logging.WARNING, "sidecar.app")
    settings = Settings(
        source="mqtt",
        mqtt=mqtt_settings(1883, "judged"),
        judge={"enabled": True, "topic": "llm-sidecar-judge"},
        http={"host": "127.0.0.1", "port": 0},
    )
    app = App(settings, registry=CollectorRegistry())
    assert app.judge is not None
    assert app.publish_samples is False
    assert app.judge.submit in app.listeners
    [warning] = [r.getMessage() for r in caplog.records if "source is mqtt" in r.getMessage()]
    assert "judge.topic not used (the judge, if enabled, runs in process" in warning


# paho's connect leaves the socket of a failed TLS handshake to the collector, which closes it
# at once (with a ResourceWarning): not a leak of ours to fix.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
@pytest.mark.filterwarnings("ignore::ResourceWarning")
async def test_tls_against_a_plain_listener_is_named_as_such(mosquitto: int) -> None:
    """It read "connection reset by peer", which sends one looking for a broker that is
    down; the broker is up and the TLS setting does not match its listener."""
    source = MqttSource(mqtt_settings(mosquitto, "sidecar-tls", tls=True))
    await source.start()
    try:
        reason = source.not_ready()
        assert reason is not None
        assert "(mqtt.tls is true: does the broker take TLS on this port?)" in reason
    finally:
        await source.stop()
