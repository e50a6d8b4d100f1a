"""Metric names and label bounds; the exposition passes promtool."""

from __future__ import annotations

import subprocess
from pathlib import Path

from prometheus_client import CollectorRegistry, generate_latest

from sidecar.checks.reachability import ProberCollector
from sidecar.events import Event
from sidecar.metrics import OTHER, LabelFolder, SidecarMetrics
from sidecar.pipeline import Pipeline
from sidecar.rules import load_rules
from sidecar.settings import LabelSettings
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
