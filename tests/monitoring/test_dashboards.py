"""Every Grafana panel's PromQL parses (promtool) and names only metrics llm-sidecar exports."""

from __future__ import annotations

import functools
import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from sidecar.judge.config import JudgeSettings
from sidecar.judge.sampler import Sampler
from sidecar.judge.service import JudgeMetrics, _SamplerCollector
from sidecar.metrics import SidecarMetrics
from sidecar.probe.runner import ProbeMetrics
from sidecar.windows import Windows
from tests.conftest import REPO, require_tool

DASHBOARDS = REPO / "helm" / "llm-sidecar" / "dashboards"
ALERTS = REPO / "helm" / "llm-sidecar" / "files" / "alerts.yaml"
EXPECTED = {"overview.json", "quality.json", "adversarial.json", "judge.json"}

# What Grafana would put in place of each template variable.
VARIABLES = {
    "__rate_interval": "5m",
    "__interval": "1m",
    "__range": "1h",
    "window": "5m",
    "job": ".*",
    "route": ".*",
    "model": ".*",
    "tenant": ".*",
    "datasource": "prometheus",
}
_VAR = re.compile(r"\$\{(\w+)(?::\w+)?\}|\[\[(\w+)\]\]|\$(\w+)")
_FUNCTIONS_AND_KEYWORDS = {
    "sum", "max", "min", "avg", "count", "by", "without", "rate", "increase", "irate",
    "histogram_quantile", "and", "or", "unless", "on", "ignoring", "group_left", "deriv",
    "label_values", "le",
}  # fmt: skip


def substitute(expr: str) -> str:
    def one(m: re.Match[str]) -> str:
        name = m.group(1) or m.group(2) or m.group(3)
        assert name in VARIABLES, f"unknown dashboard variable ${name} in {expr}"
        return VARIABLES[name]

    return _VAR.sub(one, expr)


def panels(doc: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for p in doc.get("panels", []):
        out.append(p)
        out.extend(p.get("panels", []))
    return out


def exprs() -> list[tuple[str, str, str]]:
    """(dashboard, panel title, PromQL with variables substituted) for every target."""
    out = []
    for path in sorted(DASHBOARDS.glob("*.json")):
        doc = json.loads(path.read_text(encoding="utf-8"))
        for p in panels(doc):
            for t in p.get("targets", []):
                out.append((path.name, p["title"], substitute(t["expr"])))
    return out


def test_the_four_dashboards_exist_with_unique_uids_and_panel_ids() -> None:
    assert {p.name for p in DASHBOARDS.glob("*.json")} == EXPECTED
    uids = set()
    for path in DASHBOARDS.glob("*.json"):
        doc = json.loads(path.read_text(encoding="utf-8"))
        uids.add(doc["uid"])
        ids = [p["id"] for p in panels(doc)]
        assert len(ids) == len(set(ids)), path.name
        for p in panels(doc):
            if p["type"] != "row":
                assert p["targets"], f"{path.name}: panel {p['title']!r} has no query"
                assert p["datasource"]["uid"] == "${datasource}"
    assert len(uids) == len(EXPECTED)


def test_every_panel_query_is_valid_promql(tmp_path: Path) -> None:
    promtool = require_tool("promtool")
    found = exprs()
    assert len(found) > 40
    rules = [
        {"record": f"llm_sidecar_dashboard:{Path(board).stem}:q{i}", "expr": expr}
        for i, (board, _title, expr) in enumerate(found)
    ]
    path = tmp_path / "dashboards.rules.yaml"
    path.write_text(yaml.safe_dump({"groups": [{"name": "dashboards", "rules": rules}]}))
    done = subprocess.run(
        [promtool, "check", "rules", str(path)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"SUCCESS: {len(rules)} rules found" in done.stdout


@functools.cache
def recorded_names() -> frozenset[str]:
    """The series the shipped rule file records (the fleet figures)."""
    doc = yaml.safe_load(ALERTS.read_text(encoding="utf-8"))
    return frozenset(r["record"] for g in doc["groups"] for r in g["rules"] if "record" in r)


def test_rolling_scores_read_the_fleet_figures_by_default() -> None:
    """Panels read the fleet series; a process's own window only in a per-instance drill-down."""
    per_instance = [
        (board, title) for board, title, expr in exprs() if "llm_sidecar_window_score" in expr
    ]
    fleet = [board for board, _, expr in exprs() if "llm_sidecar:fleet_score" in expr]
    assert len(fleet) > 30
    assert per_instance and all("per instance" in title for _, title in per_instance)


@functools.cache
def exported_names() -> frozenset[str]:
    """Every sample name the llm-sidecar collectors can expose."""
    registry = CollectorRegistry()
    SidecarMetrics(registry)
    JudgeMetrics(registry)
    registry.register(_SamplerCollector(Sampler(JudgeSettings())))
    Windows(registry=registry)
    ProbeMetrics(registry, ["basic"])
    names: set[str] = set()
    for family in text_string_to_metric_families(generate_latest(registry).decode()):
        names.add(family.name)
        suffixes = {
            "counter": ["_total", "_created"],
            "histogram": ["_bucket", "_count", "_sum", "_created"],
            "info": ["_info"],
        }.get(family.type, [])
        names.update(family.name + s for s in suffixes)
    return frozenset(names)


@pytest.mark.parametrize(("board", "title", "expr"), exprs(), ids=lambda v: str(v)[:40])
def test_panel_queries_name_only_exported_metrics(board: str, title: str, expr: str) -> None:
    known = exported_names()
    without_strings = re.sub(r'"[^"]*"', '""', expr)
    without_labels = re.sub(
        r"\{[^}]*\}|\([^()]*\)\s*(?=\()|by \([^)]*\)|without \([^)]*\)", "", without_strings
    )
    idents = set(re.findall(r"[a-zA-Z_:][a-zA-Z0-9_:]*", without_labels))
    metrics = {i for i in idents if i.startswith(("llm_sidecar_", "llm_sidecar:"))}
    assert metrics, f"{board} / {title}: no llm-sidecar metric in {expr}"
    unknown = metrics - known - recorded_names()
    assert not unknown, f"{board} / {title}: {sorted(unknown)} are not exported"
