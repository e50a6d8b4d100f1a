"""Organic attack attempts in the robustness windows: events the ``attack_attempt`` check
flagged, without an ``attack`` of their own, count under ``organic:<category>``."""

from __future__ import annotations

import pytest
from prometheus_client import CollectorRegistry

from sidecar.events import Attack
from sidecar.judge.config import JudgeSettings
from sidecar.judge.sampler import Sampler
from sidecar.pipeline import Outcome
from sidecar.windows.scores import ORGANIC_SUBJECTS, organic_subject
from tests.test_windows import (
    TOTAL,
    Rule,
    event,
    make,
    robustness_labels,
    samples,
    verdict,
    yes,
)

RULES = [Rule("refuse", "refusal"), Rule("atk", "attack_attempt", field="prompt")]


def flagged(category: str) -> Outcome:
    """What the attack rule (``expect: false``) says of a prompt it flagged."""
    return Outcome(True, False, f"{category}: persona (p=0.97)")


def test_the_subject_is_the_inferred_category_of_the_first_flag() -> None:
    assert organic_subject({"atk": flagged("advanced")}, ["atk"]) == "organic:advanced"
    assert organic_subject({"atk": Outcome(False, True, None)}, ["atk"]) is None
    assert organic_subject({"atk": Outcome(True, False, "basic: x")}, ["atk"]) is None
    assert organic_subject({}, ["atk"]) is None
    assert set(ORGANIC_SUBJECTS) == {"intermediate", "advanced"}


def test_flagged_events_count_as_organic_probes_beside_the_red_team_ones() -> None:
    w, _ = make(rules=RULES)  # type: ignore[arg-type]
    batch = []
    # organic intermediate: 4 of 6 refused; organic advanced: 0 of 2; 2 ordinary events
    for i in range(6):
        batch.append(verdict(event(i), refuse=yes(i < 4, i >= 4), atk=flagged("intermediate")))
    for i in range(6, 8):
        batch.append(verdict(event(i), refuse=yes(False), atk=flagged("advanced")))
    for i in range(8, 10):
        batch.append(verdict(event(i), refuse=yes(False), atk=Outcome(False, True, None)))
    # red-team probes: 1 of 2 refused; the attack check flagging them changes nothing
    for i in range(10, 12):
        probe = event(i, attack=Attack(category="intermediate"))
        batch.append(verdict(probe, refuse=yes(i == 10), atk=flagged("advanced")))
    w.observe_verdicts(batch)

    def read(subject: str) -> tuple[float, float]:
        got = w.read("adversarial_robustness", subject, TOTAL, "5m")
        assert got is not None, subject
        return got[0], got[3]

    assert read("organic:intermediate") == (pytest.approx(4 / 6), 6)
    assert read("organic:advanced") == (0.0, 2)
    assert read("intermediate") == (0.5, 2)
    assert w.read("adversarial_robustness", "advanced", TOTAL, "5m") is None


def test_organic_leakage_has_its_own_series_and_stays_out_of_the_probes() -> None:
    w, _ = make(rules=[*RULES, Rule("leak", "prompt_leakage")])  # type: ignore[arg-type]
    w.observe_verdicts(
        [
            verdict(event(0), atk=flagged("intermediate"), leak=yes(0.8, False)),
            verdict(event(1), atk=Outcome(False, True, None), leak=yes(1.0, False)),
            verdict(event(2, attack=Attack(category="basic")), leak=yes(0.2)),
        ]
    )
    organic = w.read("leakage_risk", "organic:intermediate", TOTAL, "5m")
    assert organic is not None and organic[0] == pytest.approx(0.8) and organic[3] == 1
    probes = w.read("leakage_risk", "", TOTAL, "5m")
    assert probes is not None and probes[0] == pytest.approx(0.2) and probes[3] == 1


def test_the_judge_corrects_organic_robustness_and_measures_the_detector() -> None:
    registry = CollectorRegistry()
    w, _ = make(rules=RULES, registry=registry)  # type: ignore[arg-type]
    # 40 flagged events, the cheap refusal calls 20 refused: observed 0.5
    w.observe_verdicts(
        [
            verdict(event(i), refuse=yes(i < 20, i >= 20), atk=flagged("intermediate"))
            for i in range(40)
        ]
    )
    # The judge on all 40 (weight 1): it upholds 18 of the 20 cheap refusals, finds none
    # among the compliances, and says 30 of the 40 prompts were attacks.
    for i in range(40):
        cheap = i < 20
        judge_refused = i < 18
        scores = {"refusal": float(judge_refused), "attack_attempt": float(i % 4 != 0)}
        v = verdict(event(i), refuse=yes(cheap, not cheap), atk=flagged("intermediate"))
        w.observe_scores(v, scores, 1.0)
    got = samples(registry)
    corrected = robustness_labels("adversarial_robustness_corrected", "organic:intermediate")
    # P = 18/20, R = 18/18: 0.5 * 0.9 = 0.45
    assert got[("llm_sidecar_window_score", corrected)] == pytest.approx(0.45)
    precision = robustness_labels("detector_precision", "robustness:organic:intermediate")
    assert got[("llm_sidecar_window_score", precision)] == pytest.approx(0.9)
    # the detector's own precision on live traffic: the judge said 30 of 40 were attacks
    attack_precision = robustness_labels("detector_precision", "attack_attempt")
    assert got[("llm_sidecar_window_score", attack_precision)] == pytest.approx(0.75)


def test_the_sampler_sends_flagged_events_to_the_judge() -> None:
    sampler = Sampler(JudgeSettings(enabled=True, sample_rate=0.0))
    sampler.set_rule_checks({"atk": "attack_attempt", "refuse": "refusal"}, "v1")
    assert sampler.triggered(verdict(event(0), atk=flagged("advanced")))
    assert not sampler.triggered(verdict(event(1), atk=Outcome(False, True, None)))
    off = Sampler(
        JudgeSettings.model_validate(
            {"enabled": True, "sample_rate": 0.0, "triggers": {"attack_attempt": False}}
        )
    )
    off.set_rule_checks({"atk": "attack_attempt"}, "v1")
    assert not off.triggered(verdict(event(0), atk=flagged("advanced")))
