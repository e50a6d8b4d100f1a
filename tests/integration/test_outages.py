"""A broker that goes away: at start, mid-stream, and during a shutdown.

Each test runs ``llm-sidecar run`` as a real process against an embedded broker behind a TCP
proxy (:class:`~sidecar.testing.TcpProxy`) whose mode stages the outage: ``refuse`` (connection
refused) or ``hang`` (accepted, never answered).
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
import yaml

from sidecar.embedded import EmbeddedBroker, create_topic, free_port
from tests.conftest import event_line, produce, read_topic

pytestmark = pytest.mark.integration


async def create_topics(bootstrap: str, topic: str) -> None:
    for name in (topic, f"{topic}-dlq", f"{topic}-verdicts"):
        await create_topic(bootstrap, name)


def config_file(tmp_path: Path, bootstrap: str, topic: str, **kafka: Any) -> tuple[Path, int]:
    port = free_port()
    config = {
        "reload_interval_s": 0,
        "http": {"host": "127.0.0.1", "port": port},
        "kafka": {
            "bootstrap_servers": bootstrap,
            "topics": [topic],
            "group_id": f"g-{topic}",
            "dlq_topic": f"{topic}-dlq",
            "verdict_topic": f"{topic}-verdicts",
            "heartbeat_interval_ms": 300,
            "session_timeout_ms": 3000,
            "fetch_timeout_ms": 100,
            "request_timeout_ms": 5000,
            **kafka,
        },
        "limits": {"drain_timeout_s": 5},
    }
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(config))
    return path, port


def start(config: Path) -> subprocess.Popen[bytes]:
    with open(config.with_suffix(".log"), "ab") as log:
        return subprocess.Popen(
            [sys.executable, "-m", "sidecar", "run", "--config", str(config)],
            stdout=subprocess.DEVNULL,
            stderr=log,
            env={**os.environ, "PYTHONUNBUFFERED": "1", "PYTHONWARNINGS": "default"},
        )


def log_of(config: Path) -> str:
    path = config.with_suffix(".log")
    return path.read_text() if path.exists() else ""


async def wait_for_log(config: Path, text: str, count: int = 1, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if log_of(config).count(text) >= count:
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"{text!r} did not appear {count} time(s):\n{log_of(config)}")


def get(port: int, path: str) -> tuple[int, str, float]:
    """(status, body, seconds) of one GET on the process's HTTP endpoint."""
    started = time.perf_counter()
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as r:
            status, body = r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        status, body = e.code, e.read().decode()
    return status, body, time.perf_counter() - started


async def wait_http(port: int, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            await asyncio.to_thread(get, port, "/healthz")
            return
        except OSError:
            await asyncio.sleep(0.1)
    raise AssertionError(f"nothing answered on port {port}")


async def wait_ready(port: int, want: bool, timeout: float = 30) -> str:
    deadline = time.monotonic() + timeout
    body = ""
    while time.monotonic() < deadline:
        status, body, _ = await asyncio.to_thread(get, port, "/readyz")
        if (status == 200) == want:
            return body
        await asyncio.sleep(0.1)
    raise AssertionError(f"/readyz never became {'ready' if want else 'not ready'}: {body}")


def stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.kill()
        proc.wait(10)


async def test_sigterm_during_an_outage_exits_zero_and_closes_everything(
    proxied_broker: tuple[EmbeddedBroker, Any], tmp_path: Path
) -> None:
    _, proxy = proxied_broker
    bootstrap = f"127.0.0.1:{proxy.port}"
    await create_topics(bootstrap, "in")
    config, _ = config_file(tmp_path, bootstrap, "in")
    proc = start(config)
    try:
        await wait_for_log(config, "partitions assigned")
        await produce(bootstrap, "in", [event_line(i) for i in range(20)] + [b"{broken"])
        assert len(await read_topic(bootstrap, "in-verdicts", expect=20, timeout=20)) == 20
        await proxy.set_mode("refuse")
        await asyncio.sleep(3)  # the consumer, coordinator and producer have all noticed
        proc.send_signal(signal.SIGTERM)
        code = await asyncio.to_thread(proc.wait, 30)
    finally:
        stop(proc)
    log = log_of(config)
    assert code == 0, log
    assert "Traceback" not in log
    assert "Unclosed" not in log  # aiokafka warns when a consumer or producer is not closed
    # The batch in hand may finish or not (a commit can wait out its timeout): either way the
    # stop steps ran, and any that failed said so in one line each.
    assert "drained" in log or "drain deadline" in log
    # The leave request could not be sent, and the log says so rather than nothing.
    assert "could not leave group g-in" in log, log
    steps = [line for line in log.splitlines() if "sidecar.app: stopping " in line]
    assert len(steps) <= 6, steps


async def test_an_outage_is_reported_once_and_its_end_once(
    proxied_broker: tuple[EmbeddedBroker, Any], tmp_path: Path
) -> None:
    _, proxy = proxied_broker
    bootstrap = f"127.0.0.1:{proxy.port}"
    await create_topics(bootstrap, "in")
    config, port = config_file(tmp_path, bootstrap, "in")
    proc = start(config)
    try:
        await wait_for_log(config, "partitions assigned")
        await wait_ready(port, True)
        before = len(log_of(config).splitlines())
        await proxy.set_mode("refuse")
        body = await wait_ready(port, False, timeout=20)
        assert "Kafka" in body and bootstrap in body
        await asyncio.sleep(8)
        await proxy.set_mode("up")
        await wait_ready(port, True)
        await produce(bootstrap, "in", [event_line(1)])
        assert await read_topic(bootstrap, "in-verdicts", expect=1, timeout=30)
        during = log_of(config).splitlines()[before:]
    finally:
        proc.send_signal(signal.SIGTERM)
        assert await asyncio.to_thread(proc.wait, 30) == 0
    loud = [line for line in during if " WARNING " in line or " ERROR " in line]
    unreachable = [line for line in loud if "unreachable" in line]
    assert len(unreachable) == 1, "\n".join(loud)
    assert not any("aiokafka" in line for line in loud), "\n".join(loud)
    assert len(loud) <= 3, "\n".join(loud)
    assert sum("reachable again" in line for line in during) == 1, "\n".join(during)


async def test_readyz_answers_from_loop_state_while_connections_hang(
    proxied_broker: tuple[EmbeddedBroker, Any], tmp_path: Path
) -> None:
    _, proxy = proxied_broker
    bootstrap = f"127.0.0.1:{proxy.port}"
    await create_topics(bootstrap, "in")
    config, port = config_file(tmp_path, bootstrap, "in")
    proc = start(config)
    try:
        await wait_for_log(config, "partitions assigned")
        await wait_ready(port, True)
        await proxy.set_mode("hang")
        timings = []
        deadline = time.monotonic() + 12  # past any cache of an earlier answer
        while time.monotonic() < deadline:
            _, _, seconds = await asyncio.to_thread(get, port, "/readyz")
            timings.append(seconds)
            await asyncio.sleep(0.2)
        body = await wait_ready(port, False, timeout=10)
        assert "Kafka" in body
        await proxy.set_mode("up")
        await wait_ready(port, True, timeout=30)
    finally:
        proc.send_signal(signal.SIGTERM)
        assert await asyncio.to_thread(proc.wait, 30) == 0
    timings.sort()
    assert timings[len(timings) // 2] < 0.010, timings
    assert timings[-1] < 0.25, timings  # loaded machines stall now and then; seconds did not


@pytest.mark.parametrize("mode", ["refuse", "hang"])
async def test_run_waits_for_an_unreachable_broker_and_consumes_when_it_appears(
    proxied_broker: tuple[EmbeddedBroker, Any], tmp_path: Path, mode: str
) -> None:
    _, proxy = proxied_broker
    bootstrap = f"127.0.0.1:{proxy.port}"
    await create_topics(bootstrap, "in")
    await produce(bootstrap, "in", [event_line(i) for i in range(5)])
    await proxy.set_mode(mode)  # type: ignore[arg-type]
    config, port = config_file(tmp_path, bootstrap, "in")
    proc = start(config)
    try:
        await wait_http(port)
        await asyncio.sleep(6)  # several connection attempts
        assert proc.poll() is None, log_of(config)
        status, body, _ = await asyncio.to_thread(get, port, "/readyz")
        assert status == 503
        assert f"waiting for Kafka at {bootstrap}" in body, body
        assert get(port, "/healthz")[0] == 200  # alive: no restart, just not ready
        await proxy.set_mode("up")
        await wait_ready(port, True, timeout=40)
        assert len(await read_topic(bootstrap, "in-verdicts", expect=5, timeout=30)) == 5
    finally:
        proc.send_signal(signal.SIGTERM)
        code = await asyncio.to_thread(proc.wait, 30)
    log = log_of(config)
    assert code == 0, log
    assert "Traceback" not in log
    loud = [line for line in log.splitlines() if " WARNING " in line or " ERROR " in line]
    assert sum("unreachable" in line for line in loud) == 1, "\n".join(loud)
    assert not any("aiokafka" in line for line in loud), "\n".join(loud)
    assert sum("reachable again" in line for line in log.splitlines()) == 1, log


async def test_a_write_during_an_outage_is_logged_once_and_goes_through_after_it(
    proxied_broker: tuple[EmbeddedBroker, Any], caplog: pytest.LogCaptureFixture
) -> None:
    from sidecar.errors import DecodeError, DecodeReason
    from sidecar.pipeline import DeadLetter
    from sidecar.settings import KafkaSettings
    from sidecar.sinks import KafkaSink, write_until_acknowledged
    from sidecar.sources.base import Record

    _, proxy = proxied_broker
    bootstrap = f"127.0.0.1:{proxy.port}"
    await create_topics(bootstrap, "in")
    await proxy.set_mode("refuse")
    sink = KafkaSink(
        KafkaSettings(
            bootstrap_servers=bootstrap,
            dlq_topic="in-dlq",
            request_timeout_ms=2000,
            session_timeout_ms=1500,
        ),
        dlq_max_bytes=1024,
    )
    dead = [DeadLetter(Record(b"{", "in", 0, 7), DecodeError(DecodeReason.INVALID_JSON, "x"))]
    caplog.set_level(logging.DEBUG, "sidecar.sinks")
    retries = 0

    def count(_: object) -> None:
        nonlocal retries
        retries += 1

    await sink.start()  # no network at start: the producer connects on the first write
    try:
        writing = asyncio.create_task(write_until_acknowledged(sink, dead, [], on_retry=count))
        await asyncio.sleep(4)
        assert not writing.done()
        await proxy.set_mode("up")
        await asyncio.wait_for(writing, 30)
    finally:
        await sink.stop()
    assert retries >= 4
    loud = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(loud) == 2, loud
    assert loud[0].startswith("sink write failed, retrying with backoff")
    assert loud[1].startswith(f"sink write went through after {retries} failed tries")
    assert len(await read_topic(bootstrap, "in-dlq", expect=1, timeout=10)) == 1
