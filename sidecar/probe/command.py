"""``llm-sidecar probe``: load the library, then print the plan, run once, or run for ever.

Continuous mode publishes to the events topic (``probe.topic``, default the first of
``kafka.topics``, or with ``source: mqtt`` the first MQTT filter with ``#`` made ``probe``) and serves ``/metrics`` on ``http``, or with ``--score`` checks the events in
this process (the same pipeline and windows as ``run``, exported on that ``/metrics``) and
publishes nothing; ``--once`` sends every vector once and
writes the events to ``--out`` (and with ``--score`` checks them in this process, as
``replay`` would, with ``--report`` for the HTML report); ``--dry-run`` prints the plan and
opens no connection at all.
"""

from __future__ import annotations

import asyncio
import signal
import sys
import tempfile
from pathlib import Path

from prometheus_client import CollectorRegistry

from ..errors import ConfigError, RuleSetError
from ..settings import Settings
from .attacks import AttackLibrary, load_library
from .runner import FileSink, KafkaSink, MqttSink, Prober, ScoringSink, mqtt_topic

__all__ = ["library_for", "probe_command"]


def library_for(settings: Settings) -> AttackLibrary:
    try:
        return load_library(settings.probe.attacks, builtin=settings.probe.builtin_attacks)
    except RuleSetError as exc:
        lines = "".join(f"\n  {e}" for e in exc.errors)
        raise ConfigError(
            f"the attack library does not load ({len(exc.errors)} problem(s)):{lines}"
        ) from None


class _NoSink:
    async def write(self, event: object) -> None:  # pragma: no cover - never called
        raise AssertionError("a dry run writes nothing")


def probe_command(
    settings: Settings,
    *,
    dry_run: bool = False,
    once: bool = False,
    out: Path | None = None,
    score: bool = False,
    report: Path | None = None,
    seed: int | None = None,
) -> int:
    """Run the command; returns the exit status."""
    if out is not None and not once:
        raise ConfigError("--out goes with --once (the continuous mode publishes)")
    if report is not None and not (score and once):
        raise ConfigError("--report goes with --once --score")
    library = library_for(settings)
    if dry_run:
        prober = Prober(settings, library, _NoSink(), seed=seed)
        for line in prober.plan():
            print(line)
        return 0
    if once:
        with tempfile.TemporaryDirectory() as tmp:
            path = out if out is not None else Path(tmp) / "probe-events.jsonl"
            sink = FileSink(path)
            prober = Prober(settings, library, sink, seed=seed)
            try:
                status = asyncio.run(_run(prober, once=True))
            finally:
                sink.close()
            print(
                f"probe: {prober.sent} events written to {path if out else 'the scoring run'}, "
                f"{prober.failed} failed, {prober.skipped} turns skipped by the budget",
                file=sys.stderr,
            )
            if score and prober.sent:
                from ..replay import replay

                scored = replay(settings, str(path), report=report)
                status = status or scored
        return status
    registry = CollectorRegistry()
    if score:
        scoring = ScoringSink(settings, registry)
        prober = Prober(settings, library, scoring, registry=registry, seed=seed)
        return asyncio.run(_serve(prober, None, registry))
    if settings.source == "mqtt":
        mqtt = MqttSink(settings, mqtt_topic(settings))
        prober = Prober(settings, library, mqtt, registry=registry, seed=seed)
        return asyncio.run(_serve(prober, mqtt, registry))
    topic = settings.probe.topic or (settings.kafka.topics[0] if settings.kafka.topics else None)
    if not topic:
        raise ConfigError("set probe.topic or kafka.topics: the topic the events go to")
    kafka = KafkaSink(settings, topic)
    prober = Prober(settings, library, kafka, registry=registry, seed=seed)
    return asyncio.run(_serve(prober, kafka, registry))


async def _run(prober: Prober, *, once: bool) -> int:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        return await prober.run(stop, once=once)
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)


async def _serve(
    prober: Prober, kafka: KafkaSink | MqttSink | None, registry: CollectorRegistry
) -> int:
    from ..server import HttpServer

    http = HttpServer(prober.settings.http, registry, healthy=lambda: True, not_ready=lambda: None)
    if kafka is not None:
        await kafka.start()
    try:
        await http.start()
        try:
            return await _run(prober, once=False)
        finally:
            await http.stop()
    finally:
        if kafka is not None:
            await kafka.stop()
