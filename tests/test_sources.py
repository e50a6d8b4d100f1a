"""Source plumbing that needs no broker: outage reporting and aiokafka's log noise."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Any

import pytest

from sidecar.sources.base import Reachability
from sidecar.sources.kafka import _leave_if_stable, describe_unreachable, quiet_connection_logs


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_an_outage_is_logged_once_then_once_a_minute_then_its_end(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = Clock()
    log = logging.getLogger("test-reach")
    caplog.set_level(logging.INFO, "test-reach")
    link = Reachability("Kafka at k:9092", log, clock=clock)
    assert link.waiting_for() == "waiting for Kafka at k:9092: connecting"
    link.up()
    for _ in range(150):  # 150 s of failures, one a second
        clock.now += 1
        link.down("connection refused")
    assert link.waiting_for() == (
        "waiting for Kafka at k:9092: unreachable for 149s (connection refused)"
    )
    clock.now += 1
    link.up()
    link.up()
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 4, lines
    assert "Kafka at k:9092 is unreachable (connection refused)" in lines[0]
    assert "still unreachable after 60s and 61 attempts" in lines[1]
    assert "still unreachable after 120s" in lines[2]
    assert lines[3] == "Kafka at k:9092 is reachable again after 150s"
    assert link.waiting_for() is None


def test_a_wait_that_began_at_start_counts_from_the_start() -> None:
    clock = Clock()
    link = Reachability("Kafka at k:9092", logging.getLogger("test-reach"), clock=clock)
    clock.now += 30  # the first attempt took that long to fail
    link.down("no answer")
    assert "unreachable for 30s" in (link.waiting_for() or "")


@pytest.mark.parametrize(
    ("logger", "message", "demoted"),
    [
        ("aiokafka", "Unable connect to node with id 1: [Errno 111] Connect call failed", True),
        ("aiokafka.consumer.fetcher", "Failed fetch messages from 1: NodeNotReadyError", True),
        ("aiokafka.consumer.group_coordinator", "Heartbeat session expired", True),
        ("aiokafka.consumer.group_coordinator", "Marking the coordinator dead (node 1)", True),
        ("aiokafka", "Unable to request metadata from node with id 1: TimeoutError()", True),
        ("aiokafka.producer.sender", "Got error produce response: RequestTimedOutError", True),
        ("aiokafka.consumer.fetcher", "Fetch offset 5 is out of range for partition t-0", False),
        ("aiokafka.consumer.group_coordinator", "OffsetCommit failed: not authorized", False),
    ],
)
def test_aiokafka_connection_errors_go_to_debug_and_the_rest_stays(
    caplog: pytest.LogCaptureFixture, logger: str, message: str, demoted: bool
) -> None:
    quiet_connection_logs()
    caplog.set_level(logging.INFO)
    logging.getLogger(logger).error(message)
    shown = [r for r in caplog.records if r.getMessage() == message]
    assert (not shown) if demoted else (shown and shown[0].levelno == logging.ERROR)


def test_demoted_records_show_at_debug(caplog: pytest.LogCaptureFixture) -> None:
    quiet_connection_logs()
    caplog.set_level(logging.DEBUG)
    # The CLI raises aiokafka's level to WARNING; an earlier test may have left it so.
    caplog.set_level(logging.DEBUG, logger="aiokafka")
    logging.getLogger("aiokafka.conn").error("Unable connect to node with id 1")
    [record] = [r for r in caplog.records if r.name == "aiokafka.conn"]
    assert record.levelno == logging.DEBUG


@contextlib.asynccontextmanager
async def silent_port() -> AsyncIterator[int]:
    """A loopback port that accepts connections and never answers."""
    accepted: list[asyncio.StreamWriter] = []
    silent = await asyncio.start_server(lambda r, w: accepted.append(w), "127.0.0.1", 0)
    try:
        yield silent.sockets[0].getsockname()[1]
    finally:
        for w in accepted:
            w.close()
        silent.close()
        await silent.wait_closed()


async def test_unreachable_reasons_are_words() -> None:
    from aiokafka.errors import KafkaConnectionError

    from sidecar.embedded import free_port

    exc = KafkaConnectionError("Unable to bootstrap from [('127.0.0.1', 1)]")
    assert await describe_unreachable(f"127.0.0.1:{free_port()}", exc, 5) == "connection refused"
    async with silent_port() as port:
        reason = await describe_unreachable(f"127.0.0.1:{port}", TimeoutError(), 7.0)
        assert reason == "the port accepts connections but Kafka does not answer within 7s"
    assert "cannot resolve" in await describe_unreachable("nosuchhost.invalid:9092", exc, 5)


async def test_every_bootstrap_server_is_probed_and_each_named_when_they_differ() -> None:
    """The reason used to come from the first server alone: with a typo in the first name
    and the others refusing, it blamed the name for the whole cluster."""
    from aiokafka.errors import KafkaConnectionError

    from sidecar.embedded import free_port

    exc = KafkaConnectionError("Unable to bootstrap")
    refused = [f"127.0.0.1:{free_port()}" for _ in range(2)]
    # Alike: one reason, as for one server.
    assert await describe_unreachable(",".join(refused), exc, 5) == "connection refused"
    mixed = f"nosuchhost.invalid:9092, {refused[0]}"
    reason = await describe_unreachable(mixed, exc, 5)
    assert reason.startswith("nosuchhost.invalid:9092: cannot resolve nosuchhost.invalid")
    assert reason.endswith(f"; {refused[0]}: connection refused"), reason
    async with silent_port() as port:
        # One that accepts is the one to look at: Kafka there does not answer.
        reason = await describe_unreachable(f"{refused[0]},127.0.0.1:{port}", exc, 7.0)
        assert reason == "the port accepts connections but Kafka does not answer within 7s"


async def test_a_port_that_answers_but_not_as_kafka_is_not_called_silent(
    running: Any, registry: Any
) -> None:
    """Kafka pointed at another service's port (an MQTT broker here, played by a server
    that closes each connection at once) failed within milliseconds and was reported as
    "Kafka does not answer within 10s"."""
    from sidecar.app import App
    from tests.conftest import kafka_settings

    async def close_at_once(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.close()

    other = await asyncio.start_server(close_at_once, "127.0.0.1", 0)
    try:
        bootstrap = f"127.0.0.1:{other.sockets[0].getsockname()[1]}"
        app = App(kafka_settings(bootstrap, "t"), registry=registry, serve_http=False)
        await running(app)
        reason = None
        for _ in range(50):
            await asyncio.sleep(0.1)
            reason = app._not_ready()
            if reason is not None and "accepts connections" in reason:
                break
        assert reason is not None and "what answers there is not Kafka" in reason, reason
        assert "within 10s" not in reason
    finally:
        other.close()
        await other.wait_closed()
    # A port that never answers still says so.
    async with silent_port() as port:
        reason = await describe_unreachable(f"127.0.0.1:{port}", TimeoutError(), 10.0, took_s=10.0)
        assert reason == "the port accepts connections but Kafka does not answer within 10s"


async def test_while_kafka_is_unreachable_the_loop_turns_and_readiness_says_why(
    running: Any, registry: Any
) -> None:
    """Waiting for Kafka is not a wedged loop: /healthz must stay green (no restart), while
    /readyz says what the process waits for."""
    from sidecar.app import App
    from sidecar.embedded import free_port
    from tests.conftest import kafka_settings

    bootstrap = f"127.0.0.1:{free_port()}"  # nothing listens there: connection refused
    settings = kafka_settings(
        bootstrap, "t", kafka={"request_timeout_ms": 1500, "session_timeout_ms": 1000}
    )
    app = App(settings, registry=registry, serve_http=False)
    await running(app)
    started = app._last_turn
    for _ in range(50):
        await asyncio.sleep(0.1)
        if app._last_turn > started:
            break
    assert app._last_turn > started, "no loop turn while waiting for Kafka"
    assert app._healthy()
    reason = app._not_ready()
    assert reason is not None and reason.startswith(f"waiting for Kafka at {bootstrap}")
    assert "connection refused" in reason


async def test_the_http_endpoint_answers_while_a_silent_mqtt_broker_is_waited_for(
    registry: Any,
) -> None:
    """start() waits up to 10 s for a broker that accepts and never answers; /healthz and
    /readyz used to come up only after it, so a probe in that time found nothing."""
    import httpx

    from sidecar.app import App
    from sidecar.settings import Settings
    from tests.conftest import REPO

    async with silent_port() as port:
        settings = Settings(
            source="mqtt",
            mqtt={"host": "127.0.0.1", "port": port, "topics": ["llm/#"]},
            http={"host": "127.0.0.1", "port": 0},
            rules=[REPO / "rules" / "default.yaml"],
        )
        app = App(settings, registry=registry)
        start = asyncio.create_task(app.start())
        assert app.http is not None
        for _ in range(50):
            if app.http.port is not None:
                break
            await asyncio.sleep(0.05)
        assert app.http.port is not None, "no HTTP endpoint while the broker is waited for"
        assert not start.done()
        base = f"http://127.0.0.1:{app.http.port}"
        async with httpx.AsyncClient(timeout=2) as client:
            assert (await client.get(f"{base}/healthz")).status_code == 200
            ready = await client.get(f"{base}/readyz")
            assert (ready.status_code, ready.text) == (503, "not ready: starting\n")
        start.cancel()  # the attempt's client is closed (a polite disconnect, up to 5 s)
        with contextlib.suppress(asyncio.CancelledError):
            await start
        await app.stop()


async def test_an_mqtt_timeout_says_whether_the_port_took_the_connection() -> None:
    """The MQTT client says "timed out" for a host that takes no connection and for a port
    that takes one but does not speak MQTT (another service, a TLS port): the probe tells
    them apart, as for Kafka."""
    import aiomqtt

    from sidecar.embedded import free_port
    from sidecar.settings import MqttSettings
    from sidecar.sources.mqtt import MqttSource

    timed_out = aiomqtt.MqttError("Operation timed out")
    async with silent_port() as port:
        source = MqttSource(MqttSettings(host="127.0.0.1", port=port, topics=["a/#"]))
        assert await source._why(timed_out) == (
            "the port accepts connections but no MQTT broker answers there "
            "(another service, or a TLS port: then set mqtt.tls: true)"
        )
    refused = MqttSource(MqttSettings(host="127.0.0.1", port=free_port(), topics=["a/#"]))
    assert await refused._why(timed_out) == "connection refused"
    other = aiomqtt.MqttError("[Errno 104] Connection reset by peer")
    assert await refused._why(other) == "[Errno 104] Connection reset by peer"  # no TLS: as is


class Coordinator:
    """What :func:`_leave_if_stable` uses of aiokafka's group coordinator, answering each
    request with the error code given for its kind (a broker that refuses a leave cannot be
    staged with the embedded one)."""

    group_id, member_id, _group_instance_id = "g", "m-1", None

    def __init__(self, generation: int, codes: dict[str, int]) -> None:
        self.generation, self.codes, self.sent = generation, codes, list[str]()

    async def _send_req(self, request: object) -> Any:
        kind = type(request).__name__.removesuffix("Request").rstrip("_v0123456789")
        self.sent.append(kind)
        if self.codes.get(kind) == -1:
            raise OSError("connection reset")
        return type("Answer", (), {"error_code": self.codes.get(kind, 0)})()

    def reset_generation(self) -> None:
        self.generation = -1


@pytest.mark.parametrize(
    ("generation", "codes", "sent", "said"),
    [
        (-1, {}, [], None),  # never joined, or abandoned its join: nothing to leave
        (0, {}, ["Heartbeat", "LeaveGroup"], "left group g"),  # the embedded broker's first
        (4, {}, ["Heartbeat", "LeaveGroup"], "left group g"),
        (4, {"Heartbeat": 27}, ["Heartbeat"], "not asking to leave group g: it answers Rebal"),
        (4, {"LeaveGroup": 25}, ["Heartbeat", "LeaveGroup"], "could not leave group g (Unknown"),
        (4, {"LeaveGroup": -1}, ["Heartbeat", "LeaveGroup"], "could not leave group g (OSError)"),
    ],
)
async def test_a_stop_leaves_a_stable_group_and_says_when_it_could_not(
    generation: int,
    codes: dict[str, int],
    sent: list[str],
    said: str | None,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, "sidecar.sources.kafka")
    coordinator = Coordinator(generation, codes)
    await _leave_if_stable(coordinator)
    assert coordinator.sent == sent
    lines = [r.getMessage() for r in caplog.records]
    assert (lines == []) if said is None else (len(lines) == 1 and lines[0].startswith(said))
    assert coordinator.generation == -1
