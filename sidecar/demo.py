"""``llm-sidecar demo``: the whole product on one machine, with nothing to configure.

Starts the embedded broker, publishes a JSONL stream (the bundled sample by default), runs the
sidecar on it as ``run`` would (with the same settings from the environment and ``--config``,
except ``source`` and ``kafka``, which are the demo's own), serves ``/metrics``, and prints a
summary line whenever the counts change. With ``--format otlp-proto|otlp-json`` the stream is
published as OTLP traces, a few traces per record, as an OpenTelemetry Collector's Kafka
exporter would write them (lines that are not valid events are published as they are, and
dead-lettered).
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson
from aiokafka import AIOKafkaProducer

from .app import App
from .embedded import EmbeddedBroker, create_topic
from .errors import ConfigError, DecodeError, RuleSetError, rules_error
from .events import decode
from .pipeline import Tally
from .rules import bundled_path
from .settings import KafkaSettings, Settings, load_settings

__all__ = ["demo"]

TOPIC = "llm-events"
DLQ_TOPIC = "llm-sidecar-dlq"


def _read_stream(path: Path) -> list[bytes]:
    try:
        return [line for line in path.read_bytes().splitlines() if line.strip()]
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror}") from None


def _key(line: bytes) -> bytes | None:
    try:
        doc = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    key = doc.get("id") if isinstance(doc, dict) else None
    if isinstance(key, int | float) and not isinstance(key, bool):
        key = str(key)  # numeric ids are taken as their decimal string, as decode() does
    return key.encode() if isinstance(key, str) else None


def as_otlp(lines: Sequence[bytes], fmt: str) -> list[bytes]:
    """The stream as OTLP records (see :mod:`sidecar.formats.encode`)."""
    try:
        from .formats.encode import encode_request, events_to_requests
    except ImportError as exc:
        raise ConfigError(
            f"demo --format {fmt} needs the opentelemetry-proto package: "
            f"pip install 'llm-sidecar[otlp]' ({exc})"
        ) from None
    events, rest = [], []
    for line in lines:
        try:
            events.append(decode(line))
        except DecodeError:
            rest.append(line)
    return [encode_request(r, fmt) for r in events_to_requests(events)] + rest


# Room around the largest record for the record batch and request framing.
_REQUEST_OVERHEAD = 64 * 1024


async def publish(bootstrap: str, topic: str, lines: Sequence[bytes]) -> None:
    """Publish raw records, keyed by event id where there is one (malformed and oversized too).

    The producer's request limit is raised to fit the largest record, so a line over the
    sidecar's ``limits.max_event_bytes`` reaches it and is dead-lettered as ``too_large``,
    exactly as ``run`` would handle it.
    """
    largest = max((len(line) for line in lines), default=0)
    producer = AIOKafkaProducer(
        bootstrap_servers=bootstrap,
        acks="all",
        enable_idempotence=False,
        linger_ms=5,
        max_request_size=max(1_048_576, largest + _REQUEST_OVERHEAD),
    )
    await producer.start()
    try:
        futures = [await producer.send(topic, value=line, key=_key(line)) for line in lines]
        await asyncio.gather(*futures)
    finally:
        await producer.stop()


def demo_settings(
    config: Path | None = None,
    *,
    rules: Sequence[Path] | None = None,
    port: int | None = None,
) -> Settings:
    """The settings ``run`` would use (environment, ``--config``), pointed at the demo broker.

    The source and the whole ``kafka`` section are the demo's own; everything else (rules,
    judge, limits, labels, windows, HTTP) comes from the environment and ``config`` as for
    ``run``, with HTTP on 127.0.0.1:9464 unless set. Misspelled variables are refused here too.
    """
    base = load_settings(config)
    http = base.http.model_fields_set
    overrides: dict[str, Any] = {
        "http": {
            "host": base.http.host if "host" in http else "127.0.0.1",
            "port": port if port is not None else base.http.port,
        },
    }
    if rules:
        overrides["rules"] = list(rules)
    kafka = KafkaSettings(
        bootstrap_servers="127.0.0.1:9",  # replaced by the embedded broker's address
        topics=[TOPIC],
        group_id="llm-sidecar-demo",
        dlq_topic=DLQ_TOPIC,
        heartbeat_interval_ms=500,
        session_timeout_ms=6000,
    )
    settings = load_settings(config, **overrides)
    return settings.model_copy(update={"source": "kafka", "kafka": kafka})


def _progress(tally: Tally, total: int, elapsed: float) -> str:
    handled = tally.events + sum(tally.dead.values())
    return (
        f"  {elapsed:5.1f}s  checked {tally.events}, failed a rule {tally.failed_events}, "
        f"dead-lettered {sum(tally.dead.values())} ({handled}/{total} events of the stream)"
    )


async def demo(
    settings: Settings | None = None,
    *,
    events: Path | None = None,
    once: bool = False,
    partitions: int = 3,
    timeout_s: float = 120.0,
    quiet_s: float | None = None,
    fmt: str = "llm-sidecar-v1",
) -> int:
    """Run the demo; ``quiet_s`` is the longest gap between two progress lines (default: 1 s
    on a terminal, 10 s otherwise); a line is printed only when the counts have changed."""
    settings = settings or demo_settings()
    path = events or bundled_path("events.jsonl")
    lines = _read_stream(path)
    if not lines:
        raise ConfigError(f"{path} holds no event: give a JSONL file of events")
    records = lines if fmt == "llm-sidecar-v1" else as_otlp(lines, fmt)
    out = sys.stdout
    if quiet_s is None:
        quiet_s = 1.0 if out.isatty() else 10.0
    async with EmbeddedBroker() as broker:
        await create_topic(broker.bootstrap_servers, TOPIC, partitions)
        await create_topic(broker.bootstrap_servers, DLQ_TOPIC, 1)
        await publish(broker.bootstrap_servers, TOPIC, records)
        kafka = settings.kafka.model_copy(update={"bootstrap_servers": broker.bootstrap_servers})
        source_format = settings.input.model_copy(update={"format": fmt, "topics": {}})
        app = App(settings.model_copy(update={"kafka": kafka, "input": source_format}))
        try:
            await app.start()
        except RuleSetError as exc:
            raise ConfigError(rules_error(exc)) from None
        port = app.http.port if app.http else settings.http.port
        print(
            f"llm-sidecar demo: embedded broker at {broker.bootstrap_servers}, "
            f"{len(records)} records ({fmt}) published to '{TOPIC}'\n"
            f"metrics: http://127.0.0.1:{port}/metrics" + ("" if once else "   (Ctrl-C to stop)"),
            file=out,
            flush=True,
        )
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, app.request_stop)
        runner = asyncio.create_task(app.run(), name="batch-loop")
        started = time.monotonic()
        last_line = _progress(app.tally, len(lines), 0.0)  # nothing handled: not worth a line
        last_at = float("-inf")
        status = 0
        try:
            while not runner.done():
                await asyncio.wait({runner}, timeout=min(1.0, quiet_s))
                t = app.tally
                handled = t.events + sum(t.dead.values())
                now = time.monotonic()
                drained = handled >= len(lines)
                line = _progress(t, len(lines), now - started)
                changed = line.split("s  ", 1)[1] != last_line.split("s  ", 1)[-1]
                if changed and (now - last_at >= quiet_s or (once and drained)):
                    print(line, file=out, flush=True)
                    last_line, last_at = line, now
                if once and drained:
                    app.request_stop()
                elif once and now - started > timeout_s:
                    print(f"the stream did not drain within {timeout_s:.0f}s", file=sys.stderr)
                    app.request_stop()
                    status = 1
            runner.result()
        finally:
            for sig in (signal.SIGINT, signal.SIGTERM):
                loop.remove_signal_handler(sig)
            if not runner.done():
                runner.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await runner
            await app.stop()
        print("\nfinal summary", file=out)
        print(app.tally.format(), file=out, flush=True)
    if once and status == 0 and app.tally.events == 0:
        # As replay: a stream of which no record is an event did not demonstrate anything.
        print(f"llm-sidecar: error: no record of {path} is an event", file=sys.stderr)
        status = 1
    return status
