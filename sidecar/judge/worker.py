"""``llm-sidecar judge``: judge workers that scale apart from the check path.

In scale-out mode (``judge.topic`` set), the check path publishes each sampled event to the
judge topic, with its sampling weight and its cheap checks' values in headers, before it
commits the batch. Workers consume that topic in their own consumer group, judge every event in
a batch (capped concurrency, their share of the budgets, at most ``judge.batch_timeout_s`` for
the whole batch), hand the scores on, and only then commit, so a crashed worker loses no
sampled work: its batch is judged again by whoever takes the partition. Events a batch did not
finish in time are published to the judge topic again (up to ``judge.max_attempts``) before the
commit, so the commit point stays "everything before it is judged or queued again".

The workers keep the judged rolling windows themselves (judge scores and detector agreement, the
same series and labels as in-process judging) and export them on their own ``/metrics``: each
judged event is counted by exactly one worker, the one that commits it, whereas reading judged
verdicts back into the check path would need every check replica to see the results for its own
partitions, which a consumer group cannot promise across rebalances. Workers follow the rule
files' ``judge:`` settings (polled like the check path does) and learn from them which rule is
which check for the detectors.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson
from prometheus_client import CollectorRegistry, Counter, Info

from .. import __version__
from ..errors import DecodeError, RuleSetError
from ..events import decode
from ..lifecycle import STOP_STEP_S, Lifecycle, StopStep, run_stop_steps
from ..logs import LogBudget
from ..pipeline import Outcome, Verdict
from ..rules import RuleSet, RuleWatcher, rule_files
from ..server import HttpServer
from ..settings import Settings
from ..sinks import (
    ATTEMPT_HEADER,
    CHECKS_HEADER,
    DETAIL_MAX,
    DETAILS_HEADER,
    VERSION_HEADER,
    WEIGHT_HEADER,
    KafkaSink,
    write_until_acknowledged,
)
from ..sources.base import Record
from ..sources.kafka import KafkaSource
from ..windows import Windows
from .service import JudgeService

__all__ = ["JudgeWorker", "parse_checks", "parse_weight"]

log = logging.getLogger(__name__)


def parse_weight(record: Record) -> float:
    """The sampling weight the check path attached; 1.0 when absent or unreadable."""
    for key, value in record.headers:
        if key == WEIGHT_HEADER:
            try:
                weight = float(value)
            except ValueError:
                return 1.0
            return weight if weight >= 1.0 and math.isfinite(weight) else 1.0
    return 1.0


def _header(record: Record, name: str) -> bytes | None:
    for key, value in record.headers:
        if key == name:
            return value
    return None


def _mapping(raw: bytes) -> dict[str, Any] | None:
    """A header's JSON object of at most 10,000 entries, or None when it is not one."""
    try:
        doc: Any = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    return doc if isinstance(doc, dict) and len(doc) <= 10_000 else None


def parse_checks(record: Record) -> tuple[dict[str, Outcome], str] | None:
    """The cheap checks' values (with the details of those that flagged the event) and the
    rules version the check path attached.

    Empty when the record has none; None when a header is there but unreadable.
    """
    raw = _header(record, CHECKS_HEADER)
    version = (_header(record, VERSION_HEADER) or b"").decode("utf-8", "replace")
    if raw is None:
        return {}, version
    doc = _mapping(raw)
    if doc is None:
        return None
    checks: dict[str, Outcome] = {}
    for rid, pair in doc.items():
        if not (isinstance(pair, list) and len(pair) == 2):
            return None
        value, passed = pair
        if not (value is None or isinstance(value, bool | int | float)):
            return None
        if not (passed is None or isinstance(passed, bool)):
            return None
        checks[rid] = Outcome(value, passed)
    raw = _header(record, DETAILS_HEADER)
    details = {} if raw is None else _mapping(raw)
    if details is None:
        return None
    for rid, detail in details.items():
        if not isinstance(detail, str) or len(detail) > DETAIL_MAX:
            return None
        o = checks.get(rid)
        if o is not None:
            checks[rid] = Outcome(o.value, o.passed, detail)
    return checks, version


def _attempt(record: Record) -> int:
    raw = _header(record, ATTEMPT_HEADER)
    try:
        return int(raw) if raw is not None else 0
    except ValueError:
        return 0


class JudgeWorker(Lifecycle):
    """Consumes the judge topic; same lifecycle as :class:`~sidecar.app.App`."""

    def __init__(
        self,
        settings: Settings,
        *,
        registry: CollectorRegistry | None = None,
        serve_http: bool = True,
    ) -> None:
        if not settings.judge.topic:
            raise ValueError("the judge worker needs judge.topic")
        self.settings = settings
        self.registry = registry if registry is not None else CollectorRegistry()
        kafka = settings.kafka.model_copy(
            update={
                "topics": [settings.judge.topic],
                "group_id": settings.judge.group_id or f"{settings.kafka.group_id}-judge",
                # A batch is judged before its commit: keep it to a few rounds of the pool so
                # it usually finishes well within batch_timeout_s.
                "max_batch": settings.judge.concurrency * 4,
            }
        )
        self.source = KafkaSource(kafka)
        # Judged verdicts (id, judge scores) go to the verdict topic when one is configured;
        # events a batch did not finish go back to the judge topic.
        self.sink = KafkaSink(
            kafka.model_copy(update={"dlq_topic": None}),
            dlq_max_bytes=0,
            judge_topic=settings.judge.topic,
            max_request_bytes=max(1_048_576, settings.limits.max_event_bytes + 65_536),
        )
        self.windows = (
            Windows(settings.windows, self.registry, labels=settings.labels)
            if settings.windows.enabled
            else None
        )
        self.service = JudgeService(
            settings.judge.model_copy(update={"enabled": True}),
            self.registry,
            on_scores=self.windows.observe_scores if self.windows is not None else None,
            worker=True,
        )
        self.http = (
            HttpServer(
                settings.http, self.registry, healthy=self._healthy, not_ready=self._not_ready
            )
            if serve_http
            else None
        )
        # Dashboards list jobs from the build info: the workers' job must be among them.
        Info("llm_sidecar_build", "Version of llm-sidecar.", registry=self.registry).info(
            {"version": __version__}
        )
        self.batches_timed_out = Counter(
            "llm_sidecar_judge_batch_timeouts",
            "Worker batches that reached judge.batch_timeout_s before every event was judged.",
            registry=self.registry,
        )
        self.requeued = Counter(
            "llm_sidecar_judge_requeued",
            "Events a worker batch did not finish in time, published to the judge topic again.",
            registry=self.registry,
        )
        self.abandoned = Counter(
            "llm_sidecar_judge_abandoned",
            "Events given up after judge.max_attempts timed-out batches.",
            registry=self.registry,
        )
        self.bad_headers = Counter(
            "llm_sidecar_judge_bad_check_headers",
            "Judge-topic records whose checks header was unreadable (judged without detectors).",
            registry=self.registry,
        )
        self.undecodable_records = Counter(
            "llm_sidecar_judge_undecodable_records",
            "Judge-topic records that are not events, by reason (skipped; only the check path "
            "should write this topic).",
            ["reason"],
            registry=self.registry,
        )
        # The first few a minute with their offset, the rest summed up (a producer writing
        # garbage to the topic logged one ERROR line per record).
        self._undecodable_logs = LogBudget("undecodable judge-topic records", log)
        self.judged = 0
        self.undecodable = 0
        self.rules_version: str | None = None
        self._stopping = False
        self._started = False
        self._last_turn = time.monotonic()
        self._watch: asyncio.Task[None] | None = None
        self._loaded: Sequence[Path] = ()
        self._watcher = RuleWatcher(settings.reload_interval_s, self._watched, self._reload)

    async def start(self) -> None:
        if self._started:
            return
        self.apply_rules()
        try:
            await self.service.start()
            await self.sink.start()
            await self.source.start()
            if self.http is not None:
                await self.http.start()
        except BaseException:
            await self.stop()
            raise
        self._watch = asyncio.create_task(self._watcher.run(), name="judge-rule-reload")
        self._started = True

    def apply_rules(self) -> bool:
        """Take the ``judge:`` settings and rule-to-check mapping of the rule files, as the
        check path does; a bad rule set keeps the current ones."""
        from ..settings import load_ruleset

        self._watcher.mark()
        try:
            ruleset: RuleSet = load_ruleset(self.settings)
        except RuleSetError as exc:
            log.error("judge worker: rule files do not load, keeping judge settings: %s", exc)
            return False
        self._loaded = ruleset.files
        self._watcher.mark()  # with the included files too
        ok = self.service.apply_rules(ruleset)
        if self.windows is not None:
            self.windows.bind_rules(ruleset.rules, ruleset.version)
        self.rules_version = ruleset.version
        if ok:
            log.info(
                "judge worker: rules version %s, metrics %s",
                ruleset.version,
                ",".join(self.service.settings.metrics),
            )
        return ok

    def _watched(self) -> list[Path]:
        from ..settings import rule_paths

        return rule_files(rule_paths(self.settings), self._loaded)

    async def _reload(self) -> None:
        await asyncio.to_thread(self.apply_rules)

    def request_reload(self) -> None:
        self._watcher.request()

    def request_stop(self) -> None:
        self._stopping = True
        self.source.stop_fetching()

    async def stop(self) -> None:
        self._stopping = True
        self.source.stop_fetching()
        task, self._watch = self._watch, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        drain = self.settings.judge.drain_timeout_s
        steps: list[StopStep] = [
            ("kafka source", self.source.stop, STOP_STEP_S),
            ("sink", self.sink.stop, STOP_STEP_S),
            ("judge", lambda: self.service.stop(drain), drain + STOP_STEP_S),
        ]
        if self.http is not None:
            steps.insert(0, ("http server", self.http.stop, STOP_STEP_S))
        await run_stop_steps(steps, log)
        self._undecodable_logs.flush()
        self._started = False

    async def run(self) -> None:
        async for batch in self.source.batches():
            self._last_turn = time.monotonic()
            if batch:
                await self.handle(batch)
            # An idle topic still ends the minute of a burst: its summary comes then.
            self._undecodable_logs.tick()
            if self._stopping:
                break

    async def handle(self, batch: Sequence[Record]) -> list[Verdict]:
        chosen: list[tuple[Verdict, float]] = []
        attempts: dict[str, int] = {}
        for record in batch:
            try:
                event = decode(record.value, max_bytes=self.settings.limits.max_event_bytes)
            except DecodeError as exc:
                # Only the check path writes this topic; a bad record here is a bug, not data.
                self.undecodable += 1
                self.undecodable_records.labels(exc.reason.value).inc()
                if self._undecodable_logs.allow(exc.reason.value):
                    log.error(
                        "judge topic record %s@%d is not an event: %s",
                        record.topic,
                        record.offset,
                        exc,
                    )
                continue
            parsed = parse_checks(record)
            if parsed is None:
                self.bad_headers.inc()
                parsed = {}, ""
            checks, version = parsed
            chosen.append((Verdict(event, checks, version), parse_weight(record)))
            attempts[event.id] = _attempt(record)
        cfg = self.service.settings
        judged, unfinished = await self.service.judge_within(chosen, cfg.batch_timeout_s)
        self.judged += judged
        again: list[tuple[Verdict, float]] = []
        if unfinished:
            self.batches_timed_out.inc()
            for v, w in unfinished:
                attempt = attempts.get(v.id, 0) + 1
                if attempt >= cfg.max_attempts:
                    self.abandoned.inc()
                    log.warning(
                        "judge worker: gave up on event %s after %d attempts", v.id, attempt
                    )
                else:
                    again.append((v, w))
                    self.sink.attempts[v.id] = attempt
            self.requeued.inc(len(again))
        verdicts = [v for v, _ in chosen if v.judge]
        if verdicts or again:
            await write_until_acknowledged(self.sink, (), verdicts, again)
        self.sink.attempts.clear()
        await self.source.ack(batch)
        return verdicts

    def _healthy(self) -> bool:
        return not self._started or time.monotonic() - self._last_turn < 300.0

    def _not_ready(self) -> str | None:
        if self._stopping:
            return "stopping"
        if not self._started:
            return "starting"
        return self.source.not_ready()
