"""Metric names and label bounds; the exposition passes promtool."""

from __future__ import annotations

import random
import subprocess
import time
from collections import Counter
from datetime import datetime
from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry, generate_latest

from sidecar.app import App
from sidecar.checks.reachability import ProberCollector
from sidecar.errors import ConfigError
from sidecar.events import Attack, Event, validate
from sidecar.metrics import OTHER, LabelFolder, SidecarMetrics, render, set_created_series
from sidecar.pipeline import BatchStats, Outcome, Pipeline, Verdict
from sidecar.rules import load_rules
from sidecar.settings import ExportSettings, LabelSettings, Settings, WindowSettings
from sidecar.sinks import Sink
from sidecar.sources.base import Record
from sidecar.sources.file import FileSource
from sidecar.windows import Windows
from tests.conftest import REPO, require_tool


def test_label_folder_with_allowlist() -> None:
    fold = LabelFolder(["/chat", "/search"])
    assert fold("/chat") == "/chat"
    assert fold("/admin") == OTHER
    assert fold(None) == "none"
    assert fold.folded == 1


def test_label_folder_without_allowlist_admits_the_first_values_only() -> None:
    fold = LabelFolder([], max_values=3)
    assert [fold(v) for v in ["a", "b", "c", "d", "a"]] == ["a", "b", "c", OTHER, "a"]


def metrics_text(tmp_path: Path) -> str:
    registry = CollectorRegistry()
    m = SidecarMetrics(registry, LabelSettings(routes=["/chat"]))
    ruleset = load_rules([REPO / "rules"])
    m.bind_rules(ruleset.rules, ruleset.version)
    pipeline = Pipeline(ruleset)
    events = [
        Event(id=str(i), prompt="p", response="r" * i, route=f"/r{i % 50}") for i in range(200)
    ]
    verdicts, stats = pipeline.run(events)
    m.observe_batch(stats, verdicts)
    m.batch_seconds.observe(0.01)
    registry.register(ProberCollector())
    return generate_latest(registry).decode()


def test_exposition_passes_promtool(tmp_path: Path) -> None:
    promtool = require_tool("promtool")
    text = metrics_text(tmp_path)
    result = subprocess.run(
        [promtool, "check", "metrics"], input=text, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip() == "" and result.stderr.strip() == "", (
        result.stdout + result.stderr
    )


def test_route_labels_are_bounded(tmp_path: Path) -> None:
    text = metrics_text(tmp_path)
    routes = {
        line.split('route="')[1].split('"')[0]
        for line in text.splitlines()
        if line.startswith("llm_sidecar_events_total{")
    }
    assert routes == {"/chat", OTHER} or routes <= {"/chat", OTHER}
    assert OTHER in routes
    assert 'llm_sidecar_label_values_folded_total{label="route"} 200.0' in text


def test_rebinding_drops_series_of_removed_rules(tmp_path: Path) -> None:
    registry = CollectorRegistry()
    m = SidecarMetrics(registry)
    a = tmp_path / "a.yaml"
    a.write_text("rules:\n  - {id: gone, check: length_less_than, params: {value: 5}}\n")
    first = load_rules([a])
    m.bind_rules(first.rules, first.version)
    assert 'rule="gone"' in generate_latest(registry).decode()
    a.write_text("rules:\n  - {id: kept, check: length_less_than, params: {value: 5}}\n")
    second = load_rules([a])
    m.bind_rules(second.rules, second.version)
    text = generate_latest(registry).decode()
    assert 'rule="gone"' not in text and 'rule="kept"' in text
    assert f'llm_sidecar_rules_info{{version="{second.version}"}} 1.0' in text


# -- what /metrics carries of the windows, and how fast ------------------------------------


class _Rule:
    def __init__(self, rule_id: str, check: str) -> None:
        self.id, self.check_name, self.field = rule_id, check, "response"


def filled_windows(
    export: ExportSettings, n_series: int = 2000
) -> tuple[CollectorRegistry, Windows]:
    """Windows with about ``n_series`` live series over many (route, model, tenant) segments."""
    routes, models, tenants = (
        [f"/r{i}" for i in range(20)],
        [f"m{i}" for i in range(10)],
        [f"t{i}" for i in range(10)],
    )
    registry = CollectorRegistry()
    rules = [_Rule(f"rule-{i}", "contains_none") for i in range(6)] + [_Rule("refuse", "refusal")]
    windows = Windows(
        WindowSettings(max_series=n_series, export=export),
        registry,
        labels=LabelSettings(routes=routes, models=models, tenants=tenants),
    )
    windows.bind_rules(rules, "v1")  # type: ignore[arg-type]
    i = 0
    while windows.series_count < n_series:
        batch = []
        for _ in range(500):
            e = Event(
                id=str(i),
                response="x",
                route=routes[i % 20],
                model=models[(i // 20) % 10],
                tenant=tenants[(i // 200) % 10],
                attack=Attack(category="basic") if i % 9 == 0 else None,
            )
            checks = {r.id: Outcome(i % 5 == 0, i % 7 != 0) for r in rules}
            batch.append(Verdict(e, checks, "v1", i % 7 != 0))
            i += 1
        windows.observe_verdicts(batch)
        windows.snapshot()
    return registry, windows


def test_render_writes_the_bytes_generate_latest_writes() -> None:
    for export in (ExportSettings(), ExportSettings(everything=True)):
        registry, _ = filled_windows(export, 300)
        SidecarMetrics(registry).records.labels("kafka").inc(3)
        assert render(registry) == generate_latest(registry)


def test_default_export_leaves_out_what_no_dashboard_or_alert_reads() -> None:
    set_created_series(False)
    try:
        registry, _ = filled_windows(ExportSettings(), 300)
        SidecarMetrics(registry).records.labels("kafka").inc(3)
        lean = render(registry).decode()
        set_created_series(True)
        full_registry, _ = filled_windows(ExportSettings(everything=True, created_series=True), 300)
        SidecarMetrics(full_registry).records.labels("kafka").inc(3)
        full = render(full_registry).decode()
    finally:
        set_created_series(False)
    assert "_created" not in lean and "llm_sidecar_records_created" in full
    assert "llm_sidecar_window_weight" not in lean and "llm_sidecar_window_weight{" in full
    rule_rates = [
        line
        for line in lean.splitlines()
        if line.startswith("llm_sidecar_window_score{") and 'score="rule_pass_rate"' in line
    ]
    assert rule_rates and all('route="*",' in line for line in rule_rates)
    assert any(
        'score="rule_pass_rate"' in line and 'route="/r1"' in line for line in full.splitlines()
    )
    samples = {
        line.split('score="')[1].split('"')[0]
        for line in lean.splitlines()
        if line.startswith("llm_sidecar_window_samples{")
    }
    assert samples == {"adversarial_robustness", "event_pass_rate"}  # of the scores filled here
    counters = {
        line.split('score="')[1].split('"')[0]
        for line in lean.splitlines()
        if line.startswith("llm_sidecar_score_observations_total{")
    }
    # the fleet figures of every score the dashboards and alerts read come from these counters
    assert counters == {
        "adversarial_robustness",
        "event_pass_rate",
        "refusal_rate",
        "rule_pass_rate",
    }
    assert len(lean) * 3 < len(full)


def test_two_thousand_window_series_render_every_exported_figure() -> None:
    # How fast this renders is bench/metrics_render.py's business (a figure, not a test).
    registry, windows = filled_windows(ExportSettings(), 2000)
    assert windows.series_count >= 2000
    lines = [ln for ln in render(registry).decode().splitlines() if ln and ln[0] != "#"]
    by_name = Counter(ln.split("{")[0] for ln in lines)
    scores = by_name["llm_sidecar_window_score"]
    assert scores > 1000
    assert by_name["llm_sidecar_window_score_lower_bound"] == scores
    assert by_name["llm_sidecar_window_score_upper_bound"] == scores


def test_export_settings_refuse_unknown_score_names() -> None:
    with pytest.raises(ConfigError, match="rule_pass_rates"):
        Windows(WindowSettings(export=ExportSettings(rollup_only_scores=["rule_pass_rates"])))


def _age_app(tmp_path: Path) -> tuple[App, CollectorRegistry]:
    rules = tmp_path / "rules.yaml"
    rules.write_text("rules:\n  - {id: short, check: length_less_than, params: {value: 5}}\n")
    registry = CollectorRegistry()
    app = App(
        Settings(rules=[rules], reload_interval_s=0),
        source=FileSource(tmp_path / "none.jsonl"),
        sink=Sink(),
        registry=registry,
    )
    return app, registry


@pytest.mark.parametrize(
    ("stamps", "oldest"),
    [
        # zoned times compare as instants: 10:00+05:00 is earlier than 06:00Z
        (["2026-01-01T06:00:00Z", "2026-01-01T10:00:00+05:00"], "2026-01-01T05:00:00Z"),
        # zoned and zoneless mixed: each converted on its own (zoneless is local time)
        (["2026-01-02T00:00:00Z", "2026-01-01T00:00:00"], "2026-01-01T00:00:00"),
        # a zoneless year-1 time has no timestamp: left out, the others still count
        (["0001-01-01T00:00:00", "2026-01-03T00:00:00Z"], "2026-01-03T00:00:00Z"),
    ],
)
def test_event_age_is_taken_from_the_earliest_event_of_a_slice(
    tmp_path: Path, stamps: list[str], oldest: str
) -> None:
    app, registry = _age_app(tmp_path)
    events = [validate({"id": str(i), "response": "x", "ts": ts}) for i, ts in enumerate(stamps)]
    verdicts = [Verdict(e, {}, "v") for e in events]
    before = time.time()
    app._observe_age(verdicts, [Record(b"", "t", 0, i) for i in range(len(events))])
    age = registry.get_sample_value("llm_sidecar_event_age_seconds_sum")
    expected = before - datetime.fromisoformat(oldest).timestamp()
    assert age is not None and expected - 1 <= age <= expected + 60


def test_event_age_falls_back_to_the_record_time_without_event_times(tmp_path: Path) -> None:
    app, registry = _age_app(tmp_path)
    verdicts = [Verdict(Event(id="a", response="x"), {}, "v")]
    now_ms = int(time.time() * 1000)
    records = [Record(b"", "t", 0, 0, timestamp_ms=now_ms - 30_000)]
    app._observe_age(verdicts, records)
    age = registry.get_sample_value("llm_sidecar_event_age_seconds_sum")
    assert age is not None and 29 <= age <= 90


def test_a_batch_counts_events_and_folds_labels_as_one_by_one_would() -> None:
    """The events counter folds each distinct label set of a batch once, for all its events:
    the same labels, counts and folded tallies as observing the events one at a time."""
    rng = random.Random(3)
    verdicts = [
        Verdict(
            Event(
                id=str(i),
                response="x",
                route=f"/r{rng.randrange(40)}",
                model=rng.choice(["a", "b", None]),
                tenant=f"t{rng.randrange(30)}",
            ),
            {},
            "v",
            passed=rng.random() < 0.8,
        )
        for i in range(2_000)
    ]
    texts = []
    for size in (400, 1):
        registry = CollectorRegistry()
        m = SidecarMetrics(registry)
        for i in range(0, len(verdicts), size):
            m.observe_batch(BatchStats.empty(0), verdicts[i : i + size])
        texts.append(
            sorted(
                line
                for line in generate_latest(registry).decode().splitlines()
                if line.startswith(("llm_sidecar_events_total", "llm_sidecar_label_values_folded"))
                # a counter's _created sample is its registry's creation time, not a count
                and "_created{" not in line
            )
        )
    assert texts[0] == texts[1]
    assert any(f'route="{OTHER}"' in line for line in texts[0])
    assert any('label_values_folded_total{label="tenant"}' in line for line in texts[0])


def test_event_age_of_zoneless_times_follows_their_timestamps_across_a_clock_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """02:30 does not exist on the night New York's clocks go forward: it sorts before 03:15
    but its timestamp is later. The age comes from the timestamps, not the wall times."""
    app, registry = _age_app(tmp_path)
    monkeypatch.setenv("TZ", "America/New_York")
    time.tzset()
    try:
        stamps = [datetime(2026, 3, 8, 2, 30), datetime(2026, 3, 8, 3, 15)]
        assert stamps[0].timestamp() > stamps[1].timestamp()
        oldest = stamps[1].timestamp()
        verdicts = [
            Verdict(Event(id=str(i), response="x", ts=t), {}, "v") for i, t in enumerate(stamps)
        ]
        before = time.time()
        app._observe_age(verdicts, [])
    finally:
        monkeypatch.undo()
        time.tzset()
    age = registry.get_sample_value("llm_sidecar_event_age_seconds_sum")
    assert age is not None and before - oldest - 1 <= age <= before - oldest + 60
