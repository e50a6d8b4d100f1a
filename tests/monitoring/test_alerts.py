"""The alert rules load in promtool, each alert has a unit test that makes it fire, and they pass."""

from __future__ import annotations

import random
import subprocess
from pathlib import Path

import pytest
import yaml

from sidecar.windows.fleet import FLEET_WINDOWS
from tests.conftest import REPO, require_tool
from tests.monitoring.test_fleet_rules import disparity_case, observations, promtool_case

ALERTS = REPO / "helm" / "llm-sidecar" / "files" / "alerts.yaml"
UNIT_TESTS = Path(__file__).with_name("alerts_test.yaml")
REQUIRED = {
    "LlmSidecarQualityDrop",
    "LlmSidecarRobustnessDrop",
    "LlmSidecarLeakageSpike",
    "LlmSidecarDlqSpike",
    "LlmSidecarLagGrowing",
    "LlmSidecarJudgeCircuitOpen",
    "LlmSidecarNoEvents",
}


def alert_names() -> set[str]:
    doc = yaml.safe_load(ALERTS.read_text(encoding="utf-8"))
    return {r["alert"] for g in doc["groups"] for r in g["rules"] if "alert" in r}


def test_every_required_alert_is_defined_with_severity_and_annotations() -> None:
    doc = yaml.safe_load(ALERTS.read_text(encoding="utf-8"))
    assert alert_names() >= REQUIRED
    for group in doc["groups"]:
        for rule in group["rules"]:
            if "record" in rule:
                continue  # recording rules: their unit tests are below
            assert rule["labels"]["severity"] in {"info", "warning", "critical"}
            assert rule["annotations"]["summary"]
            assert rule["annotations"]["description"]


def test_every_alert_has_a_unit_test_in_which_it_fires() -> None:
    doc = yaml.safe_load(UNIT_TESTS.read_text(encoding="utf-8"))
    firing = {
        case["alertname"]
        for test in doc["tests"]
        for case in test.get("alert_rule_test", [])
        if case.get("exp_alerts")
    }
    assert alert_names() == firing


def test_promtool_check_rules() -> None:
    promtool = require_tool("promtool")
    done = subprocess.run(
        [promtool, "check", "rules", str(ALERTS)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stdout + done.stderr


PROMTOOL_PARTS = 4
"""promtool evaluates every rule at every step of every test group, some 40 s of one core for
the whole file: its groups are run in this many parts, which the test workers share."""


@pytest.mark.parametrize("part", range(PROMTOOL_PARTS))
def test_promtool_test_rules(part: int, tmp_path: Path) -> None:
    promtool = require_tool("promtool")
    doc = yaml.safe_load(UNIT_TESTS.read_text(encoding="utf-8"))
    assert len(doc["tests"]) >= PROMTOOL_PARTS
    doc["rule_files"] = [str((UNIT_TESTS.parent / f).resolve()) for f in doc["rule_files"]]
    doc["tests"] = doc["tests"][part::PROMTOOL_PARTS]
    (tmp_path / UNIT_TESTS.name).write_text(yaml.safe_dump(doc), encoding="utf-8")
    done = subprocess.run(
        [promtool, "test", "rules", UNIT_TESTS.name],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_every_recording_rule_read_by_alerts_has_a_unit_test_of_its_value() -> None:
    rules = yaml.safe_load(ALERTS.read_text(encoding="utf-8"))
    recorded = {r["record"] for g in rules["groups"] for r in g["rules"] if "record" in r}
    assert recorded, "the rule file records the fleet figures"
    doc = yaml.safe_load(UNIT_TESTS.read_text(encoding="utf-8"))
    data = observations(random.Random(1))
    cases = [case for test in doc["tests"] for case in test.get("promql_expr_test", [])]
    cases += [case for w in FLEET_WINDOWS for case in promtool_case(data, w)["promql_expr_test"]]
    cases += disparity_case()["promql_expr_test"]  # type: ignore[operator]
    tested = " ".join(case["expr"] for case in cases if case.get("exp_samples"))
    read = " ".join(str(r["expr"]) for g in rules["groups"] for r in g["rules"] if "alert" in r)
    # The figures alerts and dashboards read are tested against the package's interval code
    # (test_fleet_rules.py); the other fleet series are the steps that compute them.
    figures = {name for name in recorded if name in read}
    assert figures >= {"llm_sidecar:fleet_score_upper_bound", "llm_sidecar:fleet_samples"}
    assert all(name in tested for name in figures)
    assert all(name.startswith("llm_sidecar:fleet_") for name in recorded)
