"""Wiring and lifecycle: start, the batch loop, hot reload, drain, stop, signals.

The batch loop is the whole hot path::

    batch = await source.next()           # raw records
    for each slice of the batch:          # limits.verdict_slice records, the loop turns between
        pipeline.process()                # decode + checks, synchronous, no awaits
        listeners(verdicts)               # counted: rolling windows, the in-process judge
    metrics.observe_batch()               # counters added once per batch
    await sink.write(dead, verdicts)      # DLQ / verdict topic, acknowledged by the broker
    await source.ack(batch)               # commit (Kafka: runs beside the next batch)

A rule reload builds a new :class:`~sidecar.pipeline.Pipeline` off the loop and swaps it in
while no batch is being checked; nothing on the hot path ever waits for the judge.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import time
import weakref
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Protocol

from prometheus_client import CollectorRegistry

from .api import CheckApi
from .checks.reachability import ProberCollector
from .errors import ConfigError, DecodeError, DecodeReason, RuleSetError, rules_error
from .formats import Decoder
from .heap import release_memory, settle_heap
from .join import Joiner
from .judge.service import JudgeService, ScoreCallback
from .lifecycle import STOP_STEP_S, Lifecycle, StopStep, run_stop_steps
from .logs import LogBudget
from .metrics import SidecarMetrics, set_created_series
from .pipeline import BatchStats, DeadLetter, Pipeline, Tally, Verdict
from .rules import RuleSet, RuleWatcher, rule_files, rule_notes
from .server import HttpServer
from .settings import Settings, load_ruleset, rule_paths
from .sinks import KafkaSink, Sink, write_until_acknowledged
from .sources.base import Record, Source
from .windows import Windows

__all__ = ["App", "Service", "rule_paths", "serve"]

log = logging.getLogger(__name__)

VerdictListener = Callable[[Sequence[Verdict]], None]


async def _nothing() -> None:
    return None


def _check_input_topics(settings: Settings) -> None:
    """A format named for a topic the source does not read is most often a misspelling
    (otlp-spans for otlp_spans): that topic's records would silently be read as
    ``input.format``. (replay names files there, so this is the broker sources' check.)"""
    from .formats import topic_matches

    mqtt = settings.source == "mqtt"
    read = settings.mqtt.topics if mqtt else settings.kafka.topics
    for key in settings.input.topics:
        if mqtt and ("+" in key or "#" in key):
            continue  # a filter of its own: which topics it meets is the broker's business
        if not any(topic_matches(pattern, key) for pattern in read):
            raise ConfigError(
                f"input.topics names {key!r}, which is not read ({settings.source}.topics: "
                f"{', '.join(read)}): its records would be read as {settings.input.format}"
            )


def default_source(settings: Settings) -> Source:
    _check_input_topics(settings)
    if settings.source == "mqtt":
        from .sources.mqtt import MqttSource

        return MqttSource(settings.mqtt)
    from .sources.kafka import KafkaSource

    return KafkaSource(settings.kafka)


class App(Lifecycle):
    """One llm-sidecar process: a source, the pipeline, sinks, metrics and the HTTP endpoint."""

    def __init__(
        self,
        settings: Settings,
        *,
        source: Source | None = None,
        sink: Sink | None = None,
        registry: CollectorRegistry | None = None,
        serve_http: bool = True,
        judge_share: int = 1,
    ) -> None:
        """``judge_share``: processes splitting the judge budgets (``run --workers``)."""
        self.settings = settings
        self.registry = registry if registry is not None else CollectorRegistry()
        set_created_series(settings.windows.export.created_series)
        self.metrics = SidecarMetrics(self.registry, settings.labels)
        self.registry.register(ProberCollector())
        self.source = source if source is not None else default_source(settings)
        kafka = settings.source == "kafka"
        if kafka and settings.judge.topic is not None and not settings.judge.enabled:
            raise ConfigError(
                f"judge.topic {settings.judge.topic!r} is set but judge.enabled is false: "
                "nothing is sampled, so nothing would reach the judge workers (set "
                "judge.enabled: true)"
            )
        # With MQTT there is no Kafka to publish samples to: the judge runs in process. (It
        # used to count as publishing them, so nothing was judged at all.)
        judge_topic = settings.judge.topic if settings.judge.enabled and kafka else None
        if sink is None:
            # The MQTT source has no Kafka to write to: dead letters are counted and logged.
            if not kafka and (settings.kafka.verdict_topic or settings.judge.topic):
                log.warning(
                    "source is mqtt: kafka.verdict_topic is not written and judge.topic not "
                    "used (the judge, if enabled, runs in process; dead letters are counted "
                    "and logged only)"
                )
            sink = (
                KafkaSink(
                    settings.kafka,
                    dlq_max_bytes=settings.limits.dlq_max_bytes,
                    judge_topic=judge_topic,
                    max_request_bytes=max(1_048_576, settings.limits.max_event_bytes + 65_536),
                )
                if kafka
                else Sink()
            )
        self.sink = sink
        self.http = (
            HttpServer(
                settings.http, self.registry, healthy=self._healthy, not_ready=self._not_ready
            )
            if serve_http
            else None
        )
        if self.http is not None and settings.api.enabled:
            CheckApi(
                settings.api,
                lambda: self.pipeline,
                self.registry,
                max_event_bytes=settings.limits.max_event_bytes,
            ).install(self.http.app)
        self.decoder = Decoder(settings.input, max_bytes=settings.limits.max_event_bytes)
        self.tally = Tally()
        self.listeners: list[VerdictListener] = []
        self.judge: JudgeService | None = None
        self.publish_samples = judge_topic is not None
        if settings.judge.enabled:
            self.judge = JudgeService(
                settings.judge, self.registry, on_scores=self._on_scores, share=judge_share
            )
            if not self.publish_samples:
                self.listeners.append(self.judge.submit)
        self.score_listeners: list[ScoreCallback] = []
        self.windows: Windows | None = None
        if settings.windows.enabled:
            self.windows = Windows(settings.windows, self.registry, labels=settings.labels)
            self.listeners.append(self.windows.observe_verdicts)
            self.score_listeners.append(self.windows.observe_scores)
        # Judged verdicts waiting to go to the verdict topic with the next batch's writes.
        self._judged: deque[Verdict] = deque(maxlen=10_000)
        # Prompt and response as two events: joined before the checks (sidecar.join).
        self.joiner = Joiner(settings.join, self.registry) if settings.join.enabled else None
        self.pipeline: Pipeline | None = None
        self._watcher = RuleWatcher(settings.reload_interval_s, self._watched, self.reload)
        self._reload_task: asyncio.Task[None] | None = None
        self._checking = asyncio.Lock()
        """Held while a batch is checked; a reload swaps the rules only outside it."""
        self._stopping = False
        self._started = False
        self._last_turn = time.monotonic()
        self._seen: dict[str, int] = {}
        self._heap_settled = False
        # The first 10 dead letters a minute are logged one by one, the rest summed up.
        self._dead_logs = LogBudget("dead letters", log)

    # -- lifecycle -------------------------------------------------------------------------

    async def start(self) -> None:
        """Load rules (raising :class:`RuleSetError` if they are bad), then start everything."""
        if self._started:
            return
        self._install(load_ruleset(self.settings))
        try:
            if self.judge is not None:
                await self.judge.start()
            # Before the broker: a probe meets a live /healthz and a /readyz saying
            # "starting" while the source waits for its first connection (up to 10 s for
            # an MQTT broker that does not answer).
            if self.http is not None:
                await self.http.start()
            await self.sink.start()
            await self.source.start()
        except BaseException:
            await self.stop()
            raise
        self._reload_task = asyncio.create_task(self._watcher.run(), name="rule-reload")
        self._started = True

    async def stop(self) -> None:
        """Stop everything in reverse order; idempotent. Every step runs whatever the one
        before it did, each within a deadline; a failed step is one log line."""
        self._stopping = True
        self.source.stop_fetching()
        steps: list[StopStep] = [
            ("rule reload", self._stop_reload, STOP_STEP_S),
            ("http server", self.http.stop if self.http is not None else _nothing, STOP_STEP_S),
            (f"{self.source.name} source", self.source.stop, STOP_STEP_S),
        ]
        if self.judge is not None:
            # After the last commit: judging is best effort and must not hold offsets back.
            drain = self.settings.judge.drain_timeout_s
            steps.append(("judge", lambda: self._stop_judge(drain), drain + STOP_STEP_S))
        steps += [
            ("judged verdicts", self._flush_judged, STOP_STEP_S),
            ("sink", self.sink.stop, STOP_STEP_S),
        ]
        await run_stop_steps(steps, log)
        self._dead_logs.flush()
        self._started = False

    async def _stop_reload(self) -> None:
        task, self._reload_task = self._reload_task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _stop_judge(self, drain_timeout_s: float) -> None:
        if self.judge is not None:
            await self.judge.stop(drain_timeout_s)

    async def _flush_judged(self) -> None:
        """Scores that finished during the drain: one try, no retries."""
        if self._judged:
            judged = list(self._judged)
            self._judged.clear()
            await self.sink.write((), judged)

    def request_stop(self) -> None:
        """Begin the drain: stop fetching; the loop ends after the batch in hand."""
        if not self._stopping:
            log.info("stopping: finishing the batch in hand, then committing")
        self._stopping = True
        self.source.stop_fetching()

    # -- the batch loop --------------------------------------------------------------------

    async def run(self) -> None:
        """Process batches until the source ends or a stop is requested."""
        async for batch in self.source.batches():
            self._last_turn = time.monotonic()
            if batch or (self.joiner is not None and self.joiner.due()):
                await self.handle(batch)
            self._export_progress()
            # An idle stream still ends the minute of a burst of bad records: its summary
            # line comes then, not with the next record.
            self._dead_logs.tick()
            if self._stopping:
                break
        self._last_turn = time.monotonic()

    async def handle(self, batch: Sequence[Record]) -> list[Verdict]:
        """Everything that happens to one batch, up to and including its commit.

        The records are checked ``limits.verdict_slice`` at a time: each slice's verdicts are
        counted (listeners, event age) as soon as it is done, and the loop turns before the next
        slice, so fetches and commits go on and a record does not wait for its whole batch.
        The batch is then written and acknowledged as one. A record may carry many events (an
        OTLP record, many spans): all of them are checked and written before the batch is
        acknowledged, so at-least-once holds per record.
        """
        started = time.perf_counter()
        done: Sequence[Record] = batch
        limit = self.settings.limits.max_event_bytes
        # Native events only: the pipeline decodes them itself, with the same size limit.
        decoder = None if self.decoder.native else self.decoder
        verdicts: list[Verdict] = []
        dead: list[DeadLetter] = []
        records = batch
        if not all(r.value for r in batch):
            # Tombstones and empty payloads carry no event: skipped (counted), or dead letters.
            records = [r for r in batch if r.value]
            empty = [r for r in batch if not r.value]
            if self.settings.limits.empty_records == "skip":
                self.metrics.records_skipped.labels("empty").inc(len(empty))
            else:
                error = DecodeError(DecodeReason.EMPTY, "the record has no value (a tombstone)")
                dead = [DeadLetter(r, error) for r in empty]
        # A reload waits for the slices of the batch in hand: all of them count against the
        # rules they were checked with.
        async with self._checking:
            pipeline = self.pipeline
            assert pipeline is not None, "start() the app first"
            if self.joiner is None:
                step = self.settings.limits.verdict_slice
                stats = BatchStats.empty(len(pipeline.rules))
                for at in range(0, len(records), step):
                    if at:
                        await asyncio.sleep(0)
                    part = records[at : at + step]
                    got, lost, tallies = pipeline.process(
                        part, max_event_bytes=limit, decoder=decoder
                    )
                    self._counted(got, part)
                    stats.add(tallies)
                    verdicts += got
                    dead += lost
            else:
                # Halves wait for their pair; the records to acknowledge are the join's commit
                # points, which never pass a waiting half.
                decoded, lost = pipeline.decode(records, max_event_bytes=limit, decoder=decoder)
                dead += lost
                ready, done = self.joiner.offer(decoded, batch)
                verdicts, stats = pipeline.run_traced(ready)
                self._counted(verdicts, batch)
            # The Prometheus counters and tallies once per batch: they cost per rule, not per
            # event (a scrape between two slices sees the batch a moment later, whole).
            self._tally(pipeline, batch, verdicts, dead, stats)
            del pipeline  # a reload during the write below must be able to free the old rules
        m = self.metrics
        # Scale-out mode: sampled events go to the judge topic before the commit, so a crash
        # loses no sampled work.
        sampled = self.judge.select(verdicts) if self.publish_samples and self.judge else []
        judged = [self._judged.popleft() for _ in range(len(self._judged))]
        await write_until_acknowledged(
            self.sink,
            dead,
            [*verdicts, *judged] if judged else verdicts,
            sampled,
            on_retry=lambda _: m.dlq_write_failures.inc(),
        )
        await self.source.ack(done)
        m.batch_seconds.observe(time.perf_counter() - started)
        return verdicts

    def _counted(self, verdicts: Sequence[Verdict], records: Sequence[Record]) -> None:
        """Verdicts just out of the checks: their age, and the listeners (rolling windows,
        the in-process judge) count them."""
        self._observe_age(verdicts, records)
        for listener in self.listeners:
            listener(verdicts)

    def _tally(
        self,
        pipeline: Pipeline,
        records: Sequence[Record],
        verdicts: Sequence[Verdict],
        dead: Sequence[DeadLetter],
        stats: BatchStats,
    ) -> None:
        """Metrics and tallies of a checked batch."""
        m = self.metrics
        m.records.labels(self.source.name).inc(len(records))
        skipped = self.decoder.take_skipped()
        for reason, n in skipped.items():
            m.spans_skipped.labels(reason).inc(n)
        self.tally.add_skipped(skipped)
        m.observe_batch(stats, verdicts)
        dead_logs = self._dead_logs
        for d in dead:
            reason = d.error.reason.value
            m.dead_letters.labels(reason).inc()
            if dead_logs.allow(reason):
                log.warning(
                    "dead letter %s[%d]@%d: %s",
                    d.record.topic,
                    d.record.partition,
                    d.record.offset,
                    d.error,
                )
        self.tally.add(pipeline.rules, stats, dead)

    def _export_progress(self) -> None:
        """Counters kept by the source and sink, and the lag snapshot: once per loop turn."""
        m = self.metrics
        m.lag = self.source.lag()
        for result, total in (
            ("success", self.source.commit_successes),
            ("failure", self.source.commit_failures),
        ):
            seen = self._seen.get(result, 0)
            if total > seen:
                m.commits.labels(result).inc(total - seen)
                self._seen[result] = total
        for action, total in (self.source.undecodable or {}).items():
            key = f"undecodable:{action}"
            seen = self._seen.get(key, 0)
            if total > seen:
                m.undecodable_batches.labels(action).inc(total - seen)
                self._seen[key] = total
        seen = self._seen.get("skipped:undecodable", 0)
        if self.source.records_skipped > seen:
            m.records_skipped.labels("undecodable").inc(self.source.records_skipped - seen)
            self._seen["skipped:undecodable"] = self.source.records_skipped
        stuck = self.source.stuck_joins - self._seen.get("stuck_joins", 0)
        if stuck > 0:
            m.stuck_joins.inc(stuck)
            self._seen["stuck_joins"] = self.source.stuck_joins
        for kind, total in self.sink.dropped.items():
            seen = self._seen.get(kind, 0)
            if total > seen:
                m.sink_drops.labels(kind).inc(total - seen)
                self._seen[kind] = total

    def _observe_age(self, verdicts: Sequence[Verdict], batch: Sequence[Record]) -> None:
        """Observe the oldest event of a slice: how stale the freshest verdicts can be."""
        now = time.time()
        oldest: float | None = None
        stamped = [ts for v in verdicts if (ts := v.event.ts) is not None]
        earliest = None
        with contextlib.suppress(TypeError):  # zoned and zoneless times mixed
            earliest = min(stamped, default=None)
        if earliest is not None and earliest.tzinfo is not None:
            # Zoned times compare as instants: the earliest by comparison, converted once.
            with contextlib.suppress(ValueError, OverflowError, OSError):
                oldest = earliest.timestamp()
        else:
            # Zoneless (local) times do not compare as their timestamps do across a clock
            # change, and one may have no timestamp (year 1 without a zone, say): each is
            # converted on its own, the bad ones left out.
            for ts in stamped:
                try:
                    t = ts.timestamp()
                except (ValueError, OverflowError, OSError):
                    continue
                oldest = t if oldest is None else min(oldest, t)
        if oldest is None:
            stamps = [r.timestamp_ms for r in batch if r.timestamp_ms]
            if stamps:
                oldest = min(stamps) / 1000
        if oldest is not None:
            self.metrics.event_age.observe(max(0.0, now - oldest))

    def _on_scores(self, verdict: Verdict, scores: Mapping[str, float], weight: float) -> None:
        if self.settings.kafka.verdict_topic:
            self._judged.append(verdict)  # the verdict again, now with its judge scores
        for listener in self.score_listeners:
            listener(verdict, scores, weight)

    # -- rules -----------------------------------------------------------------------------

    def _install(self, ruleset: RuleSet) -> None:
        self.pipeline = Pipeline(
            ruleset, timeouts_to_disable=self.settings.limits.check_timeouts_to_disable
        )
        self.metrics.bind_rules(ruleset.rules, ruleset.version)
        if self.judge is not None:
            self.judge.apply_rules(ruleset)
        if self.windows is not None:
            self.windows.bind_rules(ruleset.rules, ruleset.version)
        self._watcher.mark()
        log.info(
            "loaded %d rules from %d files (version %s)",
            len(ruleset.rules),
            len(ruleset.files),
            ruleset.version,
        )
        for note in rule_notes(ruleset):
            log.warning("%s", note)

    def request_reload(self) -> None:
        """Reload the rule files now (SIGHUP)."""
        self._watcher.request()

    async def reload(self) -> bool:
        """Load the rule files again; keep the old rules if the new ones are bad."""
        try:
            ruleset = await asyncio.to_thread(load_ruleset, self.settings)
        except RuleSetError as exc:
            self.metrics.rule_reloads.labels("failure").inc()
            log.error(
                "rule reload failed, keeping version %s:\n%s",
                self.pipeline.version if self.pipeline else "-",
                exc,
            )
            self._watcher.mark()  # report a bad file once, not on every poll
            return False
        async with self._checking:
            replaced = weakref.ref(self.pipeline) if self.pipeline is not None else None
            self._install(ruleset)
        if self._heap_settled:
            settle_heap()  # the replaced pipeline's cycles are collected, the new one frozen
        release_memory(collect=not self._heap_settled)  # settle_heap has just collected
        held = replaced() if replaced is not None else None
        if held is not None:
            # Something still holds the replaced rules (an inline API batch, in its thread):
            # hand their pages back once the last holder lets go, whichever thread that is.
            weakref.finalize(held, _call_soon, asyncio.get_running_loop(), release_memory)
            del held
        self.metrics.rule_reloads.labels("success").inc()
        return True

    def settle_heap(self) -> None:
        """Tune the process's garbage collector for checking (:func:`~sidecar.heap.settle_heap`)
        now that the rules are loaded, and again after every reload. Process-wide, so it is for
        the process that runs this app (``serve``), not for a library caller."""
        settle_heap()
        self._heap_settled = True

    def _watched(self) -> list[Path]:
        loaded = self.pipeline.ruleset.files if self.pipeline is not None else ()
        return rule_files(rule_paths(self.settings), loaded)

    # -- probes ----------------------------------------------------------------------------

    def _healthy(self) -> bool:
        # getmany returns at least every fetch timeout, so a long silence means a wedged loop.
        return not self._started or time.monotonic() - self._last_turn < 120.0

    def _not_ready(self) -> str | None:
        if self._stopping:
            return "stopping"
        if not self._started:
            return "starting"
        return self.source.not_ready()


def _call_soon(loop: asyncio.AbstractEventLoop, callback: Callable[[], object]) -> None:
    """Run ``callback`` on ``loop`` from any thread; nothing once the loop is closed."""
    with contextlib.suppress(RuntimeError):
        loop.call_soon_threadsafe(callback)


class Service(Protocol):
    """What :func:`serve` runs: the check path (:class:`App`) or a judge worker."""

    async def start(self) -> None: ...
    async def run(self) -> None: ...
    async def stop(self) -> None: ...
    def request_stop(self) -> None: ...
    def request_reload(self) -> None: ...


async def serve(
    settings: Settings, *, app: Service | None = None, same_stop_within_s: float = 0.0
) -> int:
    """Run until SIGTERM/SIGINT, then drain within the deadline and exit 0.

    A second signal exits at once (status 130) without committing; with
    ``same_stop_within_s``, a repeat of the first signal that soon counts as the same request
    (a worker of ``run --workers``, see :mod:`sidecar.workers`).
    """
    app = app if app is not None else App(settings)
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    first: tuple[int, float] | None = None

    def on_signal(signum: int) -> None:
        nonlocal first
        if first is not None:
            if first[0] == signum and loop.time() - first[1] < same_stop_within_s:
                return
            log.warning("second signal: exiting now")
            os._exit(130)
        first = (signum, loop.time())
        log.info("received %s", signal.Signals(signum).name)
        app.request_stop()
        stop.set()

    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, on_signal, sig)
    loop.add_signal_handler(signal.SIGHUP, app.request_reload)
    # A worker of run --workers starts with these blocked, so that one sent while it started
    # waits for the handlers above instead of killing it; elsewhere this changes nothing.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, (signal.SIGTERM, signal.SIGINT, signal.SIGHUP))
    try:
        try:
            await app.start()
        except RuleSetError as exc:
            raise ConfigError(rules_error(exc)) from None
        if isinstance(app, App) and settings.limits.tune_gc:
            app.settle_heap()
        runner = asyncio.create_task(app.run(), name="batch-loop")
        stopper = asyncio.create_task(stop.wait(), name="stop-wait")
        done, _ = await asyncio.wait({runner, stopper}, return_when=asyncio.FIRST_COMPLETED)
        if stopper not in done:
            stopper.cancel()
            runner.result()  # a source that ended or failed
        else:
            # The runner may have finished in the same turn as the signal; waiting on a done
            # task returns at once, so a quick drain is still reported as one.
            try:
                await asyncio.wait_for(runner, settings.limits.drain_timeout_s)
                log.info("drained")
            except TimeoutError:
                log.error(
                    "drain deadline of %.0fs passed; stopping without finishing",
                    settings.limits.drain_timeout_s,
                )
    finally:
        try:
            await app.stop()
        finally:
            # Only now: a second signal while stopping (the last commit, the judge's drain)
            # must still exit 130 at once, not be killed by the default action (143).
            for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
                loop.remove_signal_handler(sig)
    return 0
