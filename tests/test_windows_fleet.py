"""The counters the fleet figures are computed from: which sums each score exports, and the
zero a new series' counters read first."""

from __future__ import annotations

from prometheus_client import CollectorRegistry

from sidecar.settings import ExportSettings, WindowSettings
from sidecar.windows.fleet import WEIGHTED, counter_sums
from sidecar.windows.ring import WIDTH, _accumulate
from tests.test_windows import Rule, event, make, samples, verdict, yes


def counters(registry: CollectorRegistry, score: str, subject: str) -> dict[str, float]:
    return {
        name.removeprefix("llm_sidecar_score_").removesuffix("_total"): value
        for (name, labels), value in samples(registry).items()
        if name.startswith("llm_sidecar_score_")
        and dict(labels).get("score") == score
        and dict(labels).get("subject") == subject
        and dict(labels).get("route") == "*"
    }


def test_counters_read_zero_while_new_then_every_sum_their_kind_needs() -> None:
    registry = CollectorRegistry()
    settings = WindowSettings(export=ExportSettings(new_counter_hold=30))
    w, clock = make(settings, [Rule("r", "x")], registry=registry)
    w.observe_verdicts([verdict(event(i), r=yes(i % 4 != 0, i % 4 != 0)) for i in range(8)])
    scores = {"faithfulness": 0.8}
    w.observe_scores(verdict(event(20)), scores, 2.0)
    w.observe_scores(verdict(event(21)), {"faithfulness": 0.5}, 4.0)
    clock.now += 1
    first = counters(registry, "rule_pass_rate", "r")
    assert first == {"observations": 0, "weight": 0, "weighted_value": 0}
    clock.now += 30  # the hold is over: the sums themselves
    rate = counters(registry, "rule_pass_rate", "r")
    assert rate == {"observations": 8, "weight": 8, "weighted_value": 6}
    judged = counters(registry, "judge_score", "faithfulness")
    acc = [0.0] * WIDTH
    _accumulate(acc, 0.8, 2.0)
    _accumulate(acc, 0.5, 4.0)
    assert set(judged) == {name for name, _, _ in counter_sums("judge_score")}
    assert [judged[name] for name, _, _ in counter_sums("judge_score")] == acc
    assert "judge_score" in WEIGHTED and "rule_pass_rate" not in WEIGHTED


def test_without_a_hold_counters_read_their_sums_at_once() -> None:
    registry = CollectorRegistry()
    settings = WindowSettings(export=ExportSettings(new_counter_hold=0))
    w, clock = make(settings, [Rule("r", "x")], registry=registry)
    w.observe_verdicts([verdict(event(i), r=yes(True, True)) for i in range(3)])
    clock.now += 1
    assert counters(registry, "rule_pass_rate", "r")["observations"] == 3
