"""Prometheus metrics: one registry passed in, children bound once, counts added per batch.

Counters carry everything countable so PromQL can sum across replicas. Label values come only
from bounded sets: rule ids, check names, fixed reason/result names, and ``route``/``model``/
``tenant`` values that pass a :class:`LabelFolder` (an allowlist, or the first few values seen
when no allowlist is configured), everything else folded into ``other``.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterable, Sequence
from typing import Any

import prometheus_client
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, Info, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.openmetrics import exposition as _openmetrics
from prometheus_client.registry import Collector
from prometheus_client.samples import Sample
from prometheus_client.utils import floatToGoString

from . import __version__
from .errors import DecodeReason
from .formats.base import SkipReason
from .pipeline import FAIL, RESULTS, BatchStats, Verdict
from .rules import CompiledRule
from .settings import LabelSettings

__all__ = [
    "OTHER",
    "LabelFolder",
    "SidecarMetrics",
    "TextFamily",
    "label_text",
    "render",
    "set_created_series",
]

OTHER = "other"
NONE = "none"

LATENCY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)
AGE_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0, 900.0, 3600.0)


def set_created_series(enabled: bool) -> None:
    """Whether counters and histograms carry ``_created`` series (process-wide in
    prometheus_client; llm-sidecar exports none by default: no dashboard reads them)."""
    switch: Any = (
        prometheus_client.enable_created_metrics
        if enabled
        else prometheus_client.disable_created_metrics
    )
    switch()


def _escape(value: str) -> str:
    return value.replace("\\", r"\\").replace("\n", r"\n").replace('"', r"\"")


def label_text(names: Sequence[str], values: Sequence[str]) -> str:
    """``{a="x",b="y"}`` as the text exposition writes it: names sorted, values escaped."""
    pairs = sorted(zip(names, values, strict=True))
    return "{" + ",".join(f'{k}="{_escape(v)}"' for k, v in pairs) + "}"


class TextFamily(Metric):
    """A gauge or counter family kept as exposition lines: labels rendered once per series
    (and cached by the collector across scrapes), values formatted at scrape time.

    :func:`render` writes the lines as they are; ``samples`` rebuilds prometheus_client
    samples on demand, so ``generate_latest`` and every other consumer see the same family.
    """

    def __init__(self, name: str, documentation: str, typ: str, labelnames: Sequence[str]) -> None:
        super().__init__(name, documentation, typ)
        self.labelnames = list(labelnames)
        self.rows: list[tuple[str, Sequence[str], float]] = []
        """(rendered label text, label values, value)."""

    @property
    def samples(self) -> list[Sample]:
        name = self.name + "_total" if self.type == "counter" else self.name
        return [
            Sample(name, dict(zip(self.labelnames, values, strict=True)), value, None, None)
            for _, values, value in self.rows
        ]

    @samples.setter
    def samples(self, value: list[Sample]) -> None:
        pass  # Metric.__init__ assigns an empty list; the rows are the samples

    def add(self, labels: str, values: Sequence[str], value: float) -> None:
        self.rows.append((labels, values, value))

    def text(self, *, openmetrics: bool = False) -> str:
        """The family's exposition lines; in OpenMetrics a counter family is named without
        ``_total`` (its samples keep it)."""
        name = self.name + "_total" if self.type == "counter" else self.name
        doc = self.documentation.replace("\\", r"\\").replace("\n", r"\n")
        if openmetrics:
            doc = doc.replace('"', r"\"")
            head = f"# HELP {self.name} {doc}\n# TYPE {self.name} {self.type}\n"
        else:
            head = f"# HELP {name} {doc}\n# TYPE {name} {self.type}\n"
        fmt: Any = floatToGoString
        return head + "".join(f"{name}{labels} {fmt(value)}\n" for labels, _, value in self.rows)


class _One:
    def __init__(self, metric: Metric) -> None:
        self.metric = metric

    def collect(self) -> list[Metric]:
        return [self.metric]


def render(registry: CollectorRegistry, *, openmetrics: bool = False) -> bytes:
    """The registry in the Prometheus text format: the same bytes as ``generate_latest``,
    with :class:`TextFamily` families written straight from their pre-rendered lines.

    ``openmetrics``: the OpenMetrics text format instead (what Prometheus asks for first),
    which alone carries exemplars: the trace ids on failed-rule counters."""
    parts: list[bytes] = []
    for metric in registry.collect():
        if isinstance(metric, TextFamily):
            parts.append(metric.text(openmetrics=openmetrics).encode())
        else:
            one: Any = _One(metric)
            if openmetrics:
                text: bytes = _openmetrics.generate_latest(one)  # type: ignore[no-untyped-call]
                parts.append(text.removesuffix(b"# EOF\n"))
            else:
                parts.append(generate_latest(one))
    if openmetrics:
        parts.append(b"# EOF\n")
    return b"".join(parts)


class LabelFolder:
    """Maps a free-form label value into a bounded set.

    With an allowlist, only listed values pass. Without one, the first ``max_values`` distinct
    values seen pass (so a small deployment needs no configuration) and later ones fold.
    """

    def __init__(self, allow: Sequence[str], max_values: int = 20) -> None:
        self.fixed = bool(allow)
        self.allowed: set[str] = set(allow)
        self.max_values = max_values
        self.folded = 0
        self._lock = threading.Lock()

    def __call__(self, value: str | None, times: int = 1) -> str:
        """The label for ``value``; ``times``: how many observations carry it (each one
        folded counts in :attr:`folded`)."""
        if value is None or value == "":
            return NONE
        if value in self.allowed:
            return value
        if not self.fixed:
            with self._lock:
                if len(self.allowed) < self.max_values:
                    self.allowed.add(value)
                    return value
                self.fixed = True  # full: from now on it is a plain allowlist
        self.folded += times
        return OTHER


class SidecarMetrics:
    """All collectors of the check path, registered on the given registry."""

    def __init__(self, registry: CollectorRegistry, labels: LabelSettings | None = None) -> None:
        labels = labels or LabelSettings()
        self.registry = registry
        self.route = LabelFolder(labels.routes)
        self.model = LabelFolder(labels.models)
        self.tenant = LabelFolder(labels.tenants)
        r = registry
        self.build_info = Info("llm_sidecar_build", "Version of llm-sidecar.", registry=r)
        self.build_info.info({"version": __version__})
        self.records = Counter(
            "llm_sidecar_records", "Records read from the source.", ["source"], registry=r
        )
        self.events = Counter(
            "llm_sidecar_events",
            "Events checked, by outcome (passed: every rule passed) and allowed labels.",
            ["outcome", "route", "model", "tenant"],
            registry=r,
        )
        self.dead_letters = Counter(
            "llm_sidecar_dead_letters",
            "Records that are not valid events, by reason.",
            ["reason"],
            registry=r,
        )
        for reason in DecodeReason:
            self.dead_letters.labels(reason.value)
        self.spans_skipped = Counter(
            "llm_sidecar_spans_skipped",
            "Spans of OTLP records that became no event, by reason.",
            ["reason"],
            registry=r,
        )
        for skip in SkipReason:
            self.spans_skipped.labels(skip.value)
        self.dlq_write_failures = Counter(
            "llm_sidecar_dlq_write_failures",
            "Dead-letter records that could not be written (the batch is retried).",
            registry=r,
        )
        self.rule_results = Counter(
            "llm_sidecar_rule_results",
            "Rule evaluations by rule, check and result.",
            ["rule", "check", "result"],
            registry=r,
        )
        self.check_seconds = Counter(
            "llm_sidecar_check_seconds",
            "Time spent in each rule's check.",
            ["rule", "check"],
            registry=r,
        )
        self.rules_disabled = Counter(
            "llm_sidecar_rules_disabled",
            "Rules disabled after repeated timeouts.",
            ["rule"],
            registry=r,
        )
        self.rules_info = Info("llm_sidecar_rules", "The loaded rule set.", registry=r)
        self.rules_loaded = Gauge(
            "llm_sidecar_rules_loaded", "Rules in the loaded rule set.", registry=r
        )
        self.rule_reloads = Counter(
            "llm_sidecar_rule_reloads", "Rule reloads by result.", ["result"], registry=r
        )
        for result in ("success", "failure"):
            self.rule_reloads.labels(result)
        self.batch_seconds = Histogram(
            "llm_sidecar_batch_processing_seconds",
            "Time from a batch's fetch to its acknowledgement (Kafka: its offset commit sent).",
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.event_age = Histogram(
            "llm_sidecar_event_age_seconds",
            "Age of an event (from its timestamp) when its verdict was ready.",
            buckets=AGE_BUCKETS,
            registry=r,
        )
        self.commits = Counter(
            "llm_sidecar_offset_commits", "Offset commits by result.", ["result"], registry=r
        )
        for result in ("success", "failure"):
            self.commits.labels(result)
        self.undecodable_batches = Counter(
            "llm_sidecar_undecodable_batches",
            "Record batches the Kafka client could not read (unknown codec, corrupt), by what "
            "was done: the partition paused, or the batch skipped.",
            ["action"],
            registry=r,
        )
        for action in ("paused", "skipped"):
            self.undecodable_batches.labels(action)
        self.records_skipped = Counter(
            "llm_sidecar_records_skipped",
            "Records read but not checked, by reason: empty (a tombstone or an empty payload), "
            "undecodable (in a skipped batch).",
            ["reason"],
            registry=r,
        )
        for why in ("empty", "undecodable"):
            self.records_skipped.labels(why)
        self.stuck_joins = Counter(
            "llm_sidecar_stuck_group_joins",
            "Consumer group joins given up as stuck (longer than the rebalance timeout plus a "
            "session timeout), each followed by a fresh consumer that joins again.",
            registry=r,
        )
        self.lag: dict[tuple[str, int], int] = {}
        """Set by the app every loop turn; exported at scrape time (assigned partitions only)."""
        registry.register(_LagCollector(self))
        self.sink_drops = Counter(
            "llm_sidecar_sink_records_dropped",
            "Records the broker refused for good (too large, invalid), by kind.",
            ["kind"],
            registry=r,
        )
        for kind in ("dlq", "verdict", "judge"):
            self.sink_drops.labels(kind)
        self.label_folds = Counter(
            "llm_sidecar_label_values_folded",
            "Label values exported as 'other' because they are not allowed.",
            ["label"],
            registry=r,
        )
        self._rule_children: list[tuple[list[Any], Any]] = []
        self._rule_ids: list[str] = []
        self._bound_rules: set[tuple[str, str]] = set()
        self._folds_seen = {"route": 0, "model": 0, "tenant": 0}

    def bind_rules(self, rules: Sequence[CompiledRule], version: str) -> None:
        """Bind one child per rule and result; drop series of rules that are gone."""
        current = {(r.id, r.check_name) for r in rules}
        for rule_id, check in self._bound_rules - current:
            for result in RESULTS:
                self._remove(self.rule_results, rule_id, check, result)
            self._remove(self.check_seconds, rule_id, check)
        self._bound_rules = current
        self._rule_ids = [r.id for r in rules]
        self._rule_children = [
            (
                [self.rule_results.labels(r.id, r.check_name, res) for res in RESULTS],
                self.check_seconds.labels(r.id, r.check_name),
            )
            for r in rules
        ]
        self.rules_info.info({"version": version})
        self.rules_loaded.set(len(rules))

    @staticmethod
    def _remove(metric: Counter, *labels: str) -> None:
        with contextlib.suppress(KeyError):
            metric.remove(*labels)

    def observe_batch(self, stats: BatchStats, verdicts: Sequence[Verdict]) -> None:
        """Add one batch's tallies to the bound children.

        A rule's failures carry, as an OpenMetrics exemplar, the trace id of one failing event
        of the batch that has one, so a spike on a dashboard leads to a trace behind it."""
        traced: dict[str, str] = {}
        for v in verdicts:
            if v.trace_id is not None and not v.passed:
                for rule_id in v.failed_rules():
                    traced[rule_id] = v.trace_id
        for rule_id, (children, seconds), counts, spent in zip(
            self._rule_ids, self._rule_children, stats.counts, stats.seconds, strict=True
        ):
            for result, (child, n) in enumerate(zip(children, counts, strict=True)):
                if not n:
                    continue
                if result == FAIL and rule_id in traced:
                    child.inc(n, exemplar={"trace_id": traced[rule_id]})
                else:
                    child.inc(n)
            if spent:
                seconds.inc(spent)
        for rule_id in stats.newly_disabled:
            self.rules_disabled.labels(rule_id).inc()
        # Counted by the raw values first, then each distinct value folded once (in the order
        # of first appearance, which is what decides the labels of an unlisted folder).
        raw: dict[tuple[bool, str | None, str | None, str | None], int] = {}
        for v in verdicts:
            e = v.event
            labels = (v.passed, e.route, e.model, e.tenant)
            raw[labels] = raw.get(labels, 0) + 1
        groups: dict[tuple[str, str, str, str], int] = {}
        for (passed, route, model, tenant), n in raw.items():
            label = (
                "passed" if passed else "failed",
                self.route(route, n),
                self.model(model, n),
                self.tenant(tenant, n),
            )
            groups[label] = groups.get(label, 0) + n
        for label, n in groups.items():
            self.events.labels(*label).inc(n)
        for name, folder in (("route", self.route), ("model", self.model), ("tenant", self.tenant)):
            new = folder.folded - self._folds_seen[name]
            if new:
                self.label_folds.labels(name).inc(new)
                self._folds_seen[name] = folder.folded


class _LagCollector(Collector):
    """``llm_sidecar_consumer_lag`` from the app's latest snapshot, so partitions revoked in a
    rebalance disappear instead of keeping their last value."""

    def __init__(self, metrics: SidecarMetrics) -> None:
        self.metrics = metrics

    def describe(self) -> list[Metric]:
        return [self._family()]

    def collect(self) -> Iterable[Metric]:
        family = self._family()
        for (topic, partition), lag in sorted(self.metrics.lag.items()):
            family.add_metric([topic, str(partition)], lag)
        return [family]

    @staticmethod
    def _family() -> GaugeMetricFamily:
        return GaugeMetricFamily(
            "llm_sidecar_consumer_lag",
            "Records in a partition not yet processed (high-water mark minus position).",
            labels=["topic", "partition"],
        )
