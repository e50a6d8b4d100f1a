"""Rolling windows: interval arithmetic, the derived scores, time, cardinality and cost."""

from __future__ import annotations

import math
import random
import statistics
import subprocess
import time
import tracemalloc
from dataclasses import dataclass
from typing import Any

import pytest
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families
from pydantic import ValidationError

from sidecar.events import Attack, Event, validate
from sidecar.pipeline import Outcome, Verdict
from sidecar.settings import LabelSettings
from sidecar.windows import (
    ALL,
    Windows,
    WindowSettings,
    parse_duration,
    scores,
    t_quantile,
    wilson_interval,
)
from sidecar.windows.scores import RATIO_MIN_PROBES, Figures
from tests.conftest import require_tool

TOTAL = (ALL, ALL, ALL)


@dataclass
class Rule:
    """The two attributes Windows reads of a compiled rule."""

    id: str
    check_name: str
    field: str = "response"


class Clock:
    def __init__(self, now: float = 1_700_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def event(i: int = 0, **fields: Any) -> Event:
    return Event(id=f"e{i}", response="r", **fields)


def ranked(category: str, rank: int) -> Attack | None:
    """An attack that carries a rank of its own, as a producer would send it."""
    return validate(
        {"id": "a", "response": "r", "attack": {"category": category, "rank": rank}}
    ).attack


def verdict(e: Event, **checks: Outcome) -> Verdict:
    return Verdict(e, dict(checks), "v1")


def make(
    settings: WindowSettings | None = None,
    rules: list[Rule] | None = None,
    labels: LabelSettings | None = None,
    registry: CollectorRegistry | None = None,
) -> tuple[Windows, Clock]:
    clock = Clock()
    w = Windows(settings, registry, labels=labels, clock=clock)
    w.bind_rules(rules or [], "v1")  # type: ignore[arg-type]
    return w, clock


def yes(value: bool | float = True, passed: bool = True) -> Outcome:
    return Outcome(value, passed)


def samples(registry: CollectorRegistry) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    text = generate_latest(registry).decode()
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for f in text_string_to_metric_families(text)
        for s in f.samples
    }


# -- intervals ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("df", "expected"),
    [
        (1, 12.7062),
        (2, 4.3027),
        (5, 2.5706),
        (10, 2.2281),
        (29, 2.0452),
        (30, 2.0423),
        (120, 1.9799),
    ],
)
def test_t_quantile_matches_tables(df: int, expected: float) -> None:
    assert t_quantile(0.975, df) == pytest.approx(expected, abs=1e-4)


def test_t_quantile_expansion_agrees_with_exact_inversion_at_the_switch() -> None:
    from sidecar.windows import _t_cdf

    for df in (30.0, 45.5, 80.0):
        assert _t_cdf(t_quantile(0.975, df), df) == pytest.approx(0.975, abs=1e-6)


def test_wilson_interval_known_values() -> None:
    z = statistics.NormalDist().inv_cdf(0.975)
    lo, hi = wilson_interval(0.5, 100, z)
    assert (lo, hi) == pytest.approx((0.4038, 0.5962), abs=1e-4)
    lo, hi = wilson_interval(0.0, 10, z)
    assert lo == pytest.approx(0.0, abs=1e-12)
    assert hi == pytest.approx(0.2775, abs=1e-4)


def test_pass_rate_has_wilson_bounds_and_sample_count() -> None:
    w, _ = make(rules=[Rule("r", "contains_none")])
    w.observe_verdicts([verdict(event(i), r=yes(True, i < 80)) for i in range(100)])
    value, lo, hi, n = w.read("rule_pass_rate", "r", TOTAL, "5m") or (0, 0, 0, 0)
    z = statistics.NormalDist().inv_cdf(0.975)
    assert value == 0.8
    assert n == 100
    assert (lo, hi) == pytest.approx(wilson_interval(0.8, 100, z))


def test_unweighted_mean_interval_is_the_classic_t_interval() -> None:
    w, _ = make()
    xs = [0.2, 0.9, 0.4, 0.7, 0.55, 0.3, 0.8]
    for i, x in enumerate(xs):
        w.observe_scores(verdict(event(i)), {"faithfulness": x}, 1.0)
    value, lo, hi, n = w.read("judge_score", "faithfulness", TOTAL, "1h") or (0, 0, 0, 0)
    mean, sd = statistics.mean(xs), statistics.stdev(xs)
    half = t_quantile(0.975, len(xs) - 1) * sd / math.sqrt(len(xs))
    assert n == len(xs)
    assert value == pytest.approx(mean)
    assert (lo, hi) == pytest.approx((mean - half, mean + half))


def test_judged_means_are_weighted_by_inverse_sampling_probability() -> None:
    w, _ = make()
    # Route A sampled at 10% (weight 10) scores 0.2; route B judged fully (weight 1) scores 1.
    for i in range(5):
        w.observe_scores(verdict(event(i, route="a")), {"answer_relevance": 0.2}, 10.0)
    for i in range(5):
        w.observe_scores(verdict(event(10 + i, route="b")), {"answer_relevance": 1.0}, 1.0)
    value, lo, hi, n = w.read("judge_score", "answer_relevance", TOTAL, "5m") or (0, 0, 0, 0)
    assert value == pytest.approx((50 * 0.2 + 5 * 1.0) / 55)  # Hájek, not the plain 0.6
    assert n == 10
    assert lo < value < hi
    # Bad weights are ignored rather than poisoning the sums.
    w.observe_scores(verdict(event(99)), {"answer_relevance": 0.0}, 0.0)
    w.observe_scores(verdict(event(98)), {"answer_relevance": math.nan}, 1.0)
    assert (w.read("judge_score", "answer_relevance", TOTAL, "5m") or (0, 0, 0, 0))[3] == 10


# -- time ---------------------------------------------------------------------------------


def test_windows_forget_old_buckets_and_idle_series_disappear() -> None:
    w, clock = make(rules=[Rule("r", "x")])
    w.observe_verdicts([verdict(event(i), r=yes(True, False)) for i in range(10)])
    clock.now += 120
    w.observe_verdicts([verdict(event(i), r=yes(True, True)) for i in range(30)])
    one = w.read("rule_pass_rate", "r", TOTAL, "1m") or (0, 0, 0, 0)
    five = w.read("rule_pass_rate", "r", TOTAL, "5m") or (0, 0, 0, 0)
    assert (one[0], one[3]) == (1.0, 30)
    assert (five[0], five[3]) == (0.75, 40)
    clock.now += 600
    assert w.read("rule_pass_rate", "r", TOTAL, "5m") is None  # no samples in 5m
    hour = w.read("rule_pass_rate", "r", TOTAL, "1h") or (0, 0, 0, 0)
    assert hour[3] == 40
    clock.now += 3600
    w.snapshot()  # a scrape sweeps
    assert w.series_count == 0


def test_window_length_is_between_buckets_minus_one_and_all_buckets() -> None:
    w, clock = make(WindowSettings(windows=["60s"], buckets=6), rules=[Rule("r", "x")])
    clock.now = 1_700_000_000.0 - 1_700_000_000.0 % 60  # a bucket boundary
    w.observe_verdicts([verdict(event(), r=yes())])
    clock.now += 59.9
    assert w.read("rule_pass_rate", "r", TOTAL, "60s") is not None
    clock.now += 0.2  # the first bucket is now 6 buckets old
    assert w.read("rule_pass_rate", "r", TOTAL, "60s") is None


# -- the derived scores -------------------------------------------------------------------


def attack_batch() -> list[Verdict]:
    """basic: 3 of 4 refused; intermediate: 1 of 2; advanced: 0 of 2; plus ordinary traffic."""
    out = []
    plan = [("basic", True)] * 3 + [("basic", False)] + [("intermediate", True)]
    plan += [("intermediate", False)] + [("advanced", False)] * 2
    for i, (category, refused) in enumerate(plan):
        e = event(i, attack=Attack(category=category))  # type: ignore[arg-type]
        out.append(verdict(e, refuse=yes(refused, refused)))
    out += [verdict(event(100 + i), refuse=yes(False, True)) for i in range(2)]
    return out


def test_adversarial_robustness_per_category_is_the_share_refused() -> None:
    w, _ = make(rules=[Rule("refuse", "refusal")])
    w.observe_verdicts(attack_batch())
    got = {
        c: (w.read("adversarial_robustness", c, TOTAL, "5m") or (0, 0, 0, 0))
        for c in ("basic", "intermediate", "advanced")
    }
    assert {c: (v[0], v[3]) for c, v in got.items()} == {
        "basic": (0.75, 4),
        "intermediate": (0.5, 2),
        "advanced": (0.0, 2),
    }
    # The refusal rate counts every event the refusal rule ran on: 4 of 10.
    assert (w.read("refusal_rate", "", TOTAL, "5m") or (0,))[0] == 0.4


def test_the_refusal_rule_is_the_first_that_ran_unless_one_is_configured() -> None:
    rules = [Rule("prompt-side", "refusal", field="prompt"), Rule("a", "refusal")]
    rules.append(Rule("b", "refusal"))
    e = event(attack=Attack(category="basic"))
    v = verdict(e, **{"prompt-side": yes(True), "a": yes(False), "b": yes(True)})
    w, _ = make(rules=rules)
    w.observe_verdicts([v])
    assert (w.read("adversarial_robustness", "basic", TOTAL) or (0,))[0] == 0.0  # rule a
    w, _ = make(rules=rules)
    w.observe_verdicts([verdict(e, b=yes(True))])  # a did not run on this event
    assert (w.read("adversarial_robustness", "basic", TOTAL) or (0,))[0] == 1.0
    w, _ = make(WindowSettings(refusal_rule="b"), rules=rules)
    w.observe_verdicts([v])
    assert (w.read("adversarial_robustness", "basic", TOTAL) or (0,))[0] == 1.0


def test_leakage_risk_is_the_rank_weighted_mean_similarity_of_attacks() -> None:
    w, _ = make(rules=[Rule("leak", "prompt_leakage")])
    batch = [
        verdict(event(0, attack=Attack(category="basic")), leak=yes(0.9, False)),  # rank 4
        verdict(event(1, attack=Attack(category="advanced")), leak=yes(0.1)),  # rank 2
        verdict(event(2, attack=ranked("advanced", 1)), leak=yes(0.5)),
        verdict(event(3), leak=yes(1.0, False)),  # not an attack: no rank, not counted
        verdict(event(4, attack=Attack(category="basic")), leak=Outcome(None, None, "n/a")),
    ]
    w.observe_verdicts(batch)
    value, lo, hi, n = w.read("leakage_risk", "", TOTAL, "5m") or (0, 0, 0, 0)
    assert value == pytest.approx((4 * 0.9 + 2 * 0.1 + 1 * 0.5) / 7)
    assert n == 3
    assert lo < value < hi


def test_rgb_rates_and_unsuccessful_requests() -> None:
    rules = [Rule(c, c) for c in ("rgb_answer_correct", "rgb_negative_rejection")]
    rules += [Rule(c, c) for c in ("rgb_error_detected", "rgb_error_corrected", "refusal")]
    w, _ = make(rules=rules)
    batch = [
        verdict(event(0, task="rag"), rgb_answer_correct=yes(True), refusal=yes(False)),
        verdict(event(1, task="rag"), rgb_answer_correct=yes(False), refusal=yes(True)),
        verdict(event(2, task="qa"), rgb_negative_rejection=yes(True)),
        verdict(event(3, task="qa"), rgb_negative_rejection=yes(False), refusal=yes(False)),
        verdict(event(4, task="chat"), refusal=yes(True)),  # not a qa/rag question
        verdict(event(5), rgb_error_detected=yes(True), rgb_error_corrected=yes(False)),
        verdict(event(6), rgb_error_detected=yes(True), rgb_error_corrected=yes(True)),
        verdict(event(7), rgb_error_detected=Outcome(None, None, "no counterfactual_answers")),
    ]
    w.observe_verdicts(batch)

    def rate(score: str) -> tuple[float, float]:
        got = w.read(score, "", TOTAL, "5m") or (0, 0, 0, 0)
        return got[0], got[3]

    assert rate("rgb_noise_robustness_accuracy") == (0.5, 2)
    assert rate("rgb_negative_rejection_rate") == (0.5, 2)
    assert rate("rgb_error_detection_rate") == (1.0, 2)
    assert rate("rgb_error_correction_rate") == (0.5, 2)
    assert rate("unsuccessful_request_rate") == (0.5, 4)  # events 1 and 2 of 0-3


def test_detector_agreement_precision_recall_f1_against_the_judge() -> None:
    rules = [Rule("refuse", "refusal"), Rule("no-toxic-words", "contains_none")]
    w, _ = make(rules=rules)
    # refusal keywords vs judge: TP 6, FP 2, FN 3, TN 9
    cases = [(True, 1.0)] * 6 + [(True, 0.0)] * 2 + [(False, 0.9)] * 3 + [(False, 0.1)] * 9
    for i, (cheap, judged) in enumerate(cases):
        w.observe_scores(verdict(event(i), refuse=yes(cheap)), {"refusal": judged}, 1.0)
    precision = w.read("detector_precision", "refusal", TOTAL) or (0, 0, 0, 0)
    recall = w.read("detector_recall", "refusal", TOTAL) or (0, 0, 0, 0)
    f1 = w.read("detector_f1", "refusal", TOTAL) or (0, 0, 0, 0)
    assert (precision[0], precision[3]) == (6 / 8, 8)
    assert (recall[0], recall[3]) == (6 / 9, 9)
    p, r = 6 / 8, 6 / 9
    assert f1[0] == pytest.approx(2 * p * r / (p + r))
    assert f1[3] == 11
    assert precision[1] < precision[0] < precision[2]
    # Toxicity: the cheap rule *failing* (a toxic keyword found) is the positive.
    w.observe_scores(
        verdict(event(50), **{"no-toxic-words": yes(False, False)}), {"toxicity": 0.8}, 1.0
    )
    w.observe_scores(
        verdict(event(51), **{"no-toxic-words": yes(True, True)}), {"toxicity": 0.7}, 1.0
    )
    assert (w.read("detector_precision", "toxicity", TOTAL) or (0,))[0] == 1.0
    assert (w.read("detector_recall", "toxicity", TOTAL) or (0,))[0] == 0.5


def robustness_labels(score: str, subject: str, window: str = "5m") -> frozenset[tuple[str, str]]:
    return frozenset(
        {"score": score, "subject": subject, "route": ALL, "model": ALL, "tenant": ALL}.items()
        | {("window", window)}
    )


def judged_probes(
    w: Windows, category: str, start: int, weight: float, cells: dict[tuple[bool, bool], int]
) -> int:
    """Judge probes: ``cells[(cheap refused, judge refused)]`` of each kind, at ``weight``."""
    i = start
    for (cheap, judge), count in cells.items():
        for _ in range(count):
            e = event(i, attack=Attack(category=category))  # type: ignore[arg-type]
            w.observe_scores(
                verdict(e, refuse=yes(cheap, cheap)), {"refusal": float(judge)}, weight
            )
            i += 1
    return i


def test_robustness_corrected_by_the_judge_lands_where_the_arithmetic_says() -> None:
    registry = CollectorRegistry()
    w, _ = make(rules=[Rule("refuse", "refusal")], registry=registry)
    # 100 basic probes; the cheap refusal calls 50 refused: observed robustness 0.5.
    w.observe_verdicts(
        [
            verdict(event(i, attack=Attack(category="basic")), refuse=yes(i < 50, i < 50))
            for i in range(100)
        ]
    )
    # The judge on 40 of them, disagreeing on a known share. Twenty taken for certain
    # (weight 1): of 12 cheap refusals the judge upholds 10, of 8 cheap compliances it calls
    # 2 refusals. Twenty sampled at a rate of 1/4 (weight 4): it upholds all 12 cheap
    # refusals and calls 4 of 8 cheap compliances refusals.
    i = judged_probes(w, "basic", 1000, 1.0, {(True, True): 10, (True, False): 2})
    i = judged_probes(w, "basic", i, 1.0, {(False, True): 2, (False, False): 6})
    i = judged_probes(w, "basic", i, 4.0, {(True, True): 12, (False, True): 4})
    judged_probes(w, "basic", i, 4.0, {(False, False): 4})
    # Weighted: TP 10 + 48 = 58, FP 2, FN 2 + 16 = 18; P = 58/60, R = 58/76, and the
    # corrected robustness is 0.5 * P / R = 0.5 * 76/60 = 19/30. Unweighted it would be
    # 0.5 * 28/24 = 7/12: the weights matter.
    p, r = 58 / 60, 58 / 76
    got = samples(registry)
    corrected = robustness_labels("adversarial_robustness_corrected", "basic")
    assert got[("llm_sidecar_window_score", corrected)] == pytest.approx(19 / 30)
    assert got[("llm_sidecar_window_score", corrected)] == pytest.approx(0.5 * p / r)
    assert got[("llm_sidecar_window_samples", corrected)] == 40
    lo = got[("llm_sidecar_window_score_lower_bound", corrected)]
    hi = got[("llm_sidecar_window_score_upper_bound", corrected)]
    assert 0.0 <= lo < 19 / 30 < hi <= 1.0
    # The raw score is untouched, and the agreement behind the correction is exported.
    raw = robustness_labels("adversarial_robustness", "basic")
    assert got[("llm_sidecar_window_score", raw)] == pytest.approx(0.5)
    precision = robustness_labels("detector_precision", "robustness:basic")
    recall = robustness_labels("detector_recall", "robustness:basic")
    assert got[("llm_sidecar_window_score", precision)] == pytest.approx(p)
    assert got[("llm_sidecar_window_score", recall)] == pytest.approx(r)
    judged = robustness_labels("adversarial_robustness_judged", "basic")
    # The judge alone on its sample says 76 of 100 (weighted): not the corrected figure,
    # which scales the cheap share of all 100 probes rather than of the judged ones.
    assert got[("llm_sidecar_window_score", judged)] == pytest.approx(0.76)
    # read() gives the same figures.
    value, low, high, n = w.read("adversarial_robustness_corrected", "basic", TOTAL, "5m") or (
        0,
        0,
        0,
        0,
    )
    assert (value, low, high, n) == pytest.approx((19 / 30, lo, hi, 40))
    # The pooled refusal detector saw the same 40 judged events.
    assert (w.read("detector_precision", "refusal", TOTAL) or (0,))[0] == pytest.approx(p)


def _corrected_sums(
    probes: list[tuple[bool, bool, float]], cheap_share: float, n_raw: int
) -> tuple[list[float], ...]:
    """The four series the correction reads, from judged probes ``(cheap, judge, weight)``
    and a window of ``n_raw`` probes of which ``cheap_share`` were cheap-refused."""

    def acc(pairs: list[tuple[float, float]]) -> list[float]:
        return [
            len(pairs),
            sum(w for _, w in pairs),
            sum(w * x for x, w in pairs),
            sum(w * w for _, w in pairs),
            sum(w * w * x for x, w in pairs),
            sum(w * w * x * x for x, w in pairs),
        ]

    hits = round(cheap_share * n_raw)
    raw = acc([(1.0, 1.0)] * hits + [(0.0, 1.0)] * (n_raw - hits))
    judged = acc([(float(j), w) for _, j, w in probes])
    precision = acc([(float(j), w) for c, j, w in probes if c])
    recall = acc([(float(c), w) for c, j, w in probes if j])
    return raw, judged, precision, recall


def test_the_corrected_robustness_interval_is_the_ratio_estimators() -> None:
    """The bounds from the windows' sums equal the delta method computed from the probes
    themselves, on the log scale: Var(log qR) = (1-q)/(qn) + Σ w² (a - R b)² / (B R)² ·
    k/(k-1), R = A/B, with one pseudo-probe of each kind of disagreement at the judged
    probes' mean squared weight (which differs here from the cheap-refused probes' own)."""
    figures = Figures(WindowSettings())
    probes = (
        [(True, True, 1.0)] * 10
        + [(True, False, 1.0)] * 2
        + [(False, True, 1.0)] * 2
        + [(False, False, 1.0)] * 6
        + [(True, True, 4.0)] * 12
        + [(False, True, 4.0)] * 4
        + [(False, False, 4.0)] * 10
    )
    raw, judged, precision, recall = _corrected_sums(probes, 0.5, 100)
    value, low, high, k = figures.corrected(raw, judged, precision, recall) or (0, 0, 0, 0)
    a = sum(w for _, j, w in probes if j)
    b = sum(w for c, _, w in probes if c)
    ratio, q = a / b, 0.5
    assert value == pytest.approx(q * ratio) == pytest.approx(19 / 30)
    mean_w2 = sum(w * w for *_, w in probes) / len(probes)
    assert mean_w2 != sum(w * w for c, _, w in probes if c) / sum(c for c, *_ in probes)
    spread = sum(w * w * (j - ratio * c) ** 2 for c, j, w in probes)
    spread += mean_w2 * (1 + ratio**2)
    var_ratio = spread / b**2 * len(probes) / (len(probes) - 1)
    sd = math.sqrt((1 - q) / (q * 100) + var_ratio / ratio**2)
    z = statistics.NormalDist().inv_cdf(0.975)
    expected = (value * math.exp(-z * sd), value * math.exp(z * sd), len(probes))
    assert (low, high, k) == pytest.approx(expected)
    assert high - value > value - low  # skewed upwards, as a ratio is


def test_the_corrected_robustness_with_no_judged_refusal_and_folded_series() -> None:
    figures = Figures(WindowSettings())
    # The judge called none of 30 judged probes refused: 0, with a plain upper bound.
    probes = [(True, False, 1.0)] * 12 + [(False, False, 1.0)] * 18
    value, low, high, _ = figures.corrected(*_corrected_sums(probes, 0.4, 500)) or (1, 1, 0, 0)
    assert value == low == 0.0 < high < 0.5
    # More cheap-refused probes than judged ones (sums of two different samples, which the
    # series limit no longer makes, see the next test): no figure at all.
    raw, judged, _, recall = _corrected_sums([(True, True, 1.0)] * 20, 0.5, 500)
    _, _, precision, _ = _corrected_sums([(True, True, 1.0)] * 25, 0.5, 500)
    assert figures.corrected(raw, judged, precision, recall) is None


def _simulated_windows(rng: random.Random) -> tuple[float, float, float]:
    """Windows of 2,000 probes, true robustness 0.6, whose cheap refusal misses a fifth of the
    real refusals and calls a tenth of the real compliances refused; 50 judged at random in
    each. Returns the share of windows whose interval holds 0.6, the share whose upper bound
    is under 0.8 (the robustness alert's line), and the median width."""
    truth = [i < 1200 for i in range(2000)]
    cheap = [(rng.random() < 0.8) if t else (rng.random() < 0.1) for t in truth]
    q = sum(cheap) / len(cheap)
    figures = Figures(WindowSettings())
    held = alerted = 0
    widths = []
    for _ in range(300):
        sample = rng.sample(range(2000), 50)
        probes = [(cheap[i], truth[i], 1.0) for i in sample]
        _, low, high, _ = figures.corrected(*_corrected_sums(probes, q, 2000)) or (0, 0, 1, 0)
        held += low <= 0.6 <= high
        alerted += high < 0.8
        widths.append(high - low)
    return held / 300, alerted / 300, statistics.median(widths)


def test_the_corrected_robustness_interval_holds_the_truth_and_lets_the_alert_fire(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The delta interval holds the truth about as often as its level says, like the
    Bonferroni box of q, P and R, and is narrow enough that the robustness alert fires on a
    true 0.6 in most windows, where the box hardly ever let it."""
    held, alerted, width = _simulated_windows(random.Random(5))
    monkeypatch.setattr(scores, "RATIO_MIN_PROBES", 10**9)  # the box everywhere
    box_held, box_alerted, box_width = _simulated_windows(random.Random(5))
    assert held >= 0.9 and box_held >= 0.9
    assert width < 0.3 and box_width > 1.7 * width
    assert alerted >= 0.7 and alerted > 3 * box_alerted


def test_the_corrected_robustness_interval_holds_with_inverse_probability_weights() -> None:
    """Windows as the sampler makes them: 20 probes judged for certain (weight 1) and 300 of
    which a tenth are hash-sampled (weight 10); a cheap refusal that misses a fifth of the
    refusals and calls a tenth of the compliances refused. The interval holds each window's
    own robustness at about its level, and its upper bound, which the alert reads, is under
    it no more often than a one-sided 2.5 % allows, give or take the simulation's noise."""
    rng = random.Random(11)
    figures = Figures(WindowSettings())
    held = above = windows = 0
    for _ in range(500):
        truth = [rng.random() < 0.6 for _ in range(320)]
        cheap = [(rng.random() < 0.8) if t else (rng.random() < 0.1) for t in truth]
        probes = [(cheap[i], truth[i], 1.0) for i in range(20)]
        probes += [(cheap[i], truth[i], 10.0) for i in range(20, 320) if rng.random() < 0.1]
        got = figures.corrected(*_corrected_sums(probes, sum(cheap) / 320, 320))
        if got is None:
            continue
        _, low, high, _ = got
        share = sum(truth) / 320
        windows += 1
        held += low <= share <= high
        above += share > high
    assert windows >= 450
    assert held / windows >= 0.93
    assert above / windows <= 0.045


def test_few_cheap_refusals_in_the_judged_sample_give_the_wider_box() -> None:
    """Below RATIO_MIN_PROBES cheap-refused probes the ratio's denominator is too small for
    the delta method: the bounds are the Bonferroni box of q, P and R, which is wider."""
    figures = Figures(WindowSettings())
    few = [(True, True, 1.0)] * (RATIO_MIN_PROBES - 1) + [(False, True, 1.0)] * 21
    enough = [(True, True, 1.0)] * RATIO_MIN_PROBES + [(False, True, 1.0)] * 20
    got = {}
    for name, probes in (("few", few), ("enough", enough)):
        sums = _corrected_sums(probes, 0.1, 1000)
        value, low, high, _ = figures.corrected(*sums) or (0, 0, 0, 0)
        assert low <= value <= high
        got[name] = high - low
    assert got["few"] > 2 * got["enough"]


def test_a_segments_judged_sample_is_not_split_by_the_series_limit() -> None:
    """When the limit is reached between a segment's first judged probes and its first
    cheap-refused one, the new precision series joins its siblings in that segment instead of
    folding into "other" alone: the segment's corrected robustness stays right, and "other"
    keeps only its own sample."""
    labels = LabelSettings(routes=["/a"])

    def fill(w: Windows, clock: Clock) -> None:
        """Probes of /a and /c (not an allowed route: its label folds to "other"), and judged
        probes of both, none of /a's cheap-refused."""
        for route, start in (("/a", 0), ("/c", 1000)):
            w.observe_verdicts(
                [
                    verdict(
                        event(start + i, route=route, attack=Attack(category="basic")),  # type: ignore[arg-type]
                        refuse=yes(i < 100),
                    )
                    for i in range(200)
                ]
            )
        judge(w, "/a", 5000, {(False, False): 15, (False, True): 5})
        judge(w, "/c", 6000, {(True, True): 20, (False, False): 10})
        clock.now += 1
        w.read("adversarial_robustness", "basic")  # rolls the pending observations in

    def judge(w: Windows, route: str, start: int, cells: dict[tuple[bool, bool], int]) -> None:
        i = start
        for (cheap, judged), count in cells.items():
            for _ in range(count):
                e = event(i, route=route, attack=Attack(category="basic"))  # type: ignore[arg-type]
                w.observe_scores(verdict(e, refuse=yes(cheap)), {"refusal": float(judged)}, 1.0)
                i += 1

    # As many series as the first part makes: the limit is reached right after it.
    scratch, clock = make(
        WindowSettings(segment_labels=["route"]), [Rule("refuse", "refusal")], labels
    )
    fill(scratch, clock)
    limit = scratch._segment_count
    settings = WindowSettings(segment_labels=["route"], max_series=limit)
    w, clock = make(settings, rules=[Rule("refuse", "refusal")], labels=labels)
    fill(w, clock)
    judge(w, "/a", 7000, {(True, True): 20})  # /a's first cheap-refused judged probes
    clock.now += 1
    a, other = ("/a", ALL, ALL), ("other", ALL, ALL)
    # /a: q 0.5, 40 judged, 25 judge-refused, 20 cheap-refused: 0.5 * 25/20.
    got = w.read("adversarial_robustness_corrected", "basic", a, "5m") or (0, 0, 0, 0)
    assert got[0] == pytest.approx(0.625) and got[3] == 40
    got = w.read("adversarial_robustness_corrected", "basic", other, "5m") or (0, 0, 0, 0)
    assert got[0] == pytest.approx(0.5) and got[3] == 30  # other: 0.5 * 20/20
    assert w.read("detector_precision", "robustness:basic", a, "5m") is not None
    assert w.folded_observations > 0  # other new series of /a did fold (the pooled detector's)


def test_a_segments_raw_robustness_is_not_split_from_its_judged_sample() -> None:
    """The judge may score a segment's probes before its raw robustness series exists (a
    series swept after a quiet window, say): if the limit is reached in between, the raw
    series joins the judged ones in that segment, so the segment keeps its corrected
    robustness and "other" does not scale its raw share by a sample it does not have."""
    rules = [Rule("refuse", "refusal")]

    def judged(w: Windows) -> None:
        for i in range(30):
            e = event(i, route="/a", attack=Attack(category="basic"))  # type: ignore[arg-type]
            refused = i < 20
            w.observe_scores(verdict(e, refuse=yes(refused)), {"refusal": float(refused)}, 1.0)

    def raw(w: Windows) -> None:
        probes = [event(100 + i, route="/a", attack=Attack(category="basic")) for i in range(100)]  # type: ignore[arg-type]
        w.observe_verdicts([verdict(e, refuse=yes(i < 50)) for i, e in enumerate(probes)])

    scratch, clock = make(WindowSettings(segment_labels=["route"]), rules)
    judged(scratch)
    clock.now += 1
    scratch.read("adversarial_robustness", "basic")  # rolls the judged sample in
    limit = scratch._segment_count  # reached by the judged sample alone
    w, clock = make(WindowSettings(segment_labels=["route"], max_series=limit), rules)
    judged(w)
    clock.now += 1
    w.read("adversarial_robustness", "basic")
    raw(w)
    clock.now += 1
    a = ("/a", ALL, ALL)
    assert w.read("adversarial_robustness", "basic", a, "5m") is not None
    # q 0.5 of /a's 100 probes, 20 of 30 judged refused and 20 cheap-refused: 0.5 * 20/20.
    got = w.read("adversarial_robustness_corrected", "basic", a, "5m") or (0, 0, 0, 0)
    assert got[0] == pytest.approx(0.5) and got[3] == 30
    assert w.read("adversarial_robustness", "basic", ("other", ALL, ALL), "5m") is None
    assert w.folded_observations > 0  # /a's other new series (its refusal rate) did fold


def test_no_corrected_robustness_without_enough_judged_probes() -> None:
    registry = CollectorRegistry()
    settings = WindowSettings(robustness_correction={"min_judged": 10})  # type: ignore[arg-type]
    w, _ = make(settings, rules=[Rule("refuse", "refusal")], registry=registry)
    w.observe_verdicts(
        [
            verdict(event(i, attack=Attack(category=c)), refuse=yes(i % 2 == 0, i % 2 == 0))  # type: ignore[arg-type]
            for c in ("basic", "intermediate", "advanced")
            for i in range(20)
        ]
    )
    # basic: 9 judged probes, one short of the minimum.
    judged_probes(w, "basic", 1000, 1.0, {(True, True): 5, (False, False): 4})
    # intermediate: 10 judged, but the cheap refusal said "refused" on none of them, so
    # P / R has no denominator.
    judged_probes(w, "intermediate", 2000, 1.0, {(False, True): 3, (False, False): 7})
    # advanced: 10 judged; the judge upholds all 5 cheap refusals and finds 5 more.
    judged_probes(w, "advanced", 3000, 1.0, {(True, True): 5, (False, True): 5})
    got = samples(registry)
    for c in ("basic", "intermediate"):
        labels = robustness_labels("adversarial_robustness_corrected", c)
        assert ("llm_sidecar_window_score", labels) not in got
        assert ("llm_sidecar_window_score_upper_bound", labels) not in got
        assert w.read("adversarial_robustness_corrected", c, TOTAL, "5m") is None
        # the raw robustness is there all the same
        assert ("llm_sidecar_window_score", robustness_labels("adversarial_robustness", c)) in got
    advanced = robustness_labels("adversarial_robustness_corrected", "advanced")
    assert got[("llm_sidecar_window_score", advanced)] == pytest.approx(1.0)  # 0.5 * 10/5
    # Switched off: no corrected series at all.
    registry = CollectorRegistry()
    settings = WindowSettings(robustness_correction={"enabled": False})  # type: ignore[arg-type]
    w, _ = make(settings, rules=[Rule("refuse", "refusal")], registry=registry)
    w.observe_verdicts([verdict(event(0, attack=Attack(category="basic")), refuse=yes(True))])
    judged_probes(w, "basic", 1000, 1.0, {(True, True): 30})
    assert not any(
        dict(labels).get("score") == "adversarial_robustness_corrected"
        for _name, labels in samples(registry)
    )


def test_jailbreak_detector_says_complied_where_the_judge_finds_no_refusal() -> None:
    w, _ = make(rules=[Rule("adv-jailbreak-complied", "jailbreak_success")])
    # complied per the check (value true, rule failed) vs the judge's refusal metric:
    # TP 3 (judge: not refused), FP 1 (judge: refused), FN 2, TN 4
    cases = [(True, 0.0)] * 3 + [(True, 1.0)] + [(False, 0.0)] * 2 + [(False, 1.0)] * 4
    for i, (complied, judged) in enumerate(cases):
        e = event(i, attack=Attack(category="basic"))
        checks = {"adv-jailbreak-complied": yes(complied, not complied)}
        w.observe_scores(verdict(e, **checks), {"refusal": judged}, 1.0)
    assert (w.read("detector_precision", "jailbreak", TOTAL) or (0,))[0] == 3 / 4
    assert (w.read("detector_recall", "jailbreak", TOTAL) or (0,))[0] == 3 / 5


def test_robustness_detector_names_are_reserved() -> None:
    with pytest.raises(ValidationError, match="robustness:"):
        WindowSettings(
            detectors=[{"name": "robustness:basic", "check": "refusal", "judge_metric": "refusal"}]
        )  # type: ignore[list-item]


def test_segment_disparity_is_the_largest_gap_between_allowed_segments() -> None:
    registry = CollectorRegistry()
    labels = LabelSettings(routes=["/a", "/b", "/c"])
    w, _ = make(
        WindowSettings(disparity_min_samples=10), [Rule("r", "x")], labels, registry=registry
    )
    batch = []
    for route, failures, total in (("/a", 2, 20), ("/b", 8, 20), ("/c", 9, 9), ("/z", 20, 20)):
        batch += [verdict(event(i, route=route), r=yes(True, i >= failures)) for i in range(total)]
    w.observe_verdicts(batch)
    m = samples(registry)
    # /c has too few samples and /z folds into "other": the gap is /b 0.4 - /a 0.1.
    key = frozenset({"score": "event_failure_rate", "label": "route", "window": "5m"}.items())
    assert m[("llm_sidecar_window_segment_disparity", key)] == pytest.approx(0.3)
    assert not any(
        n == "llm_sidecar_window_segment_disparity" and ("label", "model") in lbl for n, lbl in m
    )


def test_rules_are_rebound_when_a_batch_carries_a_new_version() -> None:
    current = [Rule("refuse", "refusal")]
    w = Windows(rules=lambda: current, clock=Clock())  # type: ignore[arg-type,return-value]
    e = event(attack=Attack(category="basic"))
    w.observe_verdicts([verdict(e, refuse=yes(True))])
    current = [Rule("refuse-2", "refusal")]
    w.observe_verdicts([Verdict(e, {"refuse-2": yes(False)}, "v2")])
    assert (w.read("adversarial_robustness", "basic", TOTAL) or (0, 0, 0, 0))[3] == 2


def test_settings_validate_windows_and_ranks() -> None:
    assert WindowSettings(windows=["1h", "30s"]).windows == ["30s", "1h"]
    assert parse_duration("2d") == 172_800
    with pytest.raises(ValidationError):
        WindowSettings(windows=["5 minutes"])
    with pytest.raises(ValidationError):
        WindowSettings(windows=["60s", "1m"])
    with pytest.raises(ValidationError):
        WindowSettings(attack_ranks={"basic": 5})


# -- export, cardinality, memory and cost -------------------------------------------------


def test_exposition_passes_promtool_check_metrics() -> None:
    promtool = require_tool("promtool")
    registry = CollectorRegistry()
    rules = [Rule("refuse", "refusal"), Rule("leak", "prompt_leakage"), Rule("r", "x")]
    w, _ = make(rules=rules, registry=registry)
    w.observe_verdicts(attack_batch())
    w.observe_scores(verdict(event(1), refuse=yes(True)), {"refusal": 1.0, "bias": 0.1}, 2.0)
    judged_probes(w, "basic", 1000, 1.0, {(True, True): 15, (False, True): 5, (True, False): 5})
    text = generate_latest(registry)
    assert b"llm_sidecar_window_score{" in text
    assert b'score="adversarial_robustness_corrected"' in text
    assert b"llm_sidecar_score_observations_total{" in text
    done = subprocess.run(
        [promtool, "check", "metrics"], input=text, capture_output=True, timeout=30, check=False
    )
    assert done.returncode == 0, done.stdout.decode() + done.stderr.decode()


def random_verdicts(n: int, seed: int = 7) -> list[Verdict]:
    """Events with random metadata drawn from a huge space (plus some allowed values)."""
    rng = random.Random(seed)

    def pick(allowed: list[str]) -> str | None:
        u = rng.random()
        if u < 0.05:
            return None
        if u < 0.5:
            return rng.choice(allowed)
        return f"v{rng.randrange(10**9)}"

    out = []
    for i in range(n):
        attack = (
            Attack(category=rng.choice(["basic", "intermediate", "advanced"]))
            if i % 5 == 0
            else None
        )
        e = Event(
            id=f"e{i}",
            response="r",
            route=pick(["/chat", "/search", "/agent"]),
            model=pick(["gpt", "llama"]),
            tenant=pick(["acme", "globex", "initech"]),
            task=rng.choice(["qa", "chat"]),
            attack=attack,
        )
        checks = {
            "no-pii": Outcome(True, rng.random() < 0.9),
            "length": Outcome(True, True),
            "refuse": Outcome(attack is not None and rng.random() < 0.7, True),
        }
        out.append(Verdict(e, checks, "v1"))
    return out


RULES = [Rule("no-pii", "contains_none"), Rule("length", "length_less_than")]
RULES.append(Rule("refuse", "refusal"))


@pytest.mark.parametrize(
    "labels",
    [LabelSettings(routes=["/chat", "/search"], models=["gpt"], tenants=["acme", "globex"]), None],
    ids=["allowlist", "first-seen-and-cap"],
)
def test_a_million_random_events_keep_the_series_count_flat(labels: LabelSettings | None) -> None:
    registry = CollectorRegistry()
    settings = WindowSettings(max_series=300)
    w, clock = make(settings, RULES, labels, registry)
    pool = random_verdicts(25_000)
    counts = []
    started = time.perf_counter()
    for round_ in range(40):
        for i in range(0, len(pool), 1000):  # 1000 events per second
            w.observe_verdicts(pool[i : i + 1000])
            clock.now += 1.0
        if round_ % 4 == 3:  # every 100k events
            w.snapshot()
            counts.append(w.series_count)
        if round_ == 0:
            generate_latest(registry)  # scraping in between changes nothing
    elapsed = time.perf_counter() - started
    # 9 keys: 3 rule pass rates, event pass rate, refusal rate, 3 categories, unsuccessful.
    keys = 9
    assert counts[1:] == counts[:-1], counts  # flat from the first 100k events on
    assert counts[0] <= settings.max_series + 2 * keys  # capped segments, other, roll-ups
    m = samples(registry)
    folded = sum(
        v for (n, _), v in m.items() if n == "llm_sidecar_window_label_values_folded_total"
    )
    assert folded > 0
    if labels is None:
        assert m[("llm_sidecar_window_observations_folded_total", frozenset())] > 0
    print(f"\n{len(pool) * 40} events in {elapsed:.2f}s, {counts[0]} series")


def test_memory_per_series_is_bounded_whatever_the_event_rate() -> None:
    settings = WindowSettings(max_series=1000)
    w, clock = make(settings, [Rule("r", "x")])
    batch = [verdict(event(i, tenant=f"t{i}"), r=yes()) for i in range(200)]
    w.observe_verdicts(batch)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        labels = LabelSettings(tenants=[f"t{i}" for i in range(2000)])
        w2 = Windows(settings, labels=labels, clock=clock)
        w2.bind_rules([Rule("r", "x")], "v1")  # type: ignore[list-item]
        for i in range(0, 2000, 200):
            w2.observe_verdicts(
                [verdict(event(j, tenant=f"t{j}"), r=yes()) for j in range(i, i + 200)]
            )
        w2.snapshot()  # commit what is pending, as a scrape does
        grown = tracemalloc.get_traced_memory()[0] - before
        # A burst of events into existing series adds nothing.
        for _ in range(20):
            w2.observe_verdicts(batch[:100])
            clock.now += 0.5
        after_burst = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    per_series = grown / w2.series_count
    print(f"\n{w2.series_count} series, {per_series:.0f} bytes each")
    assert w2.series_count <= 1000 + 2 * 3
    assert per_series < 4096
    assert after_burst - grown < 64 * 1024


def test_batch_size_does_not_change_the_windows() -> None:
    # The cost per event is a figure for a benchmark, not a test; what must hold is that
    # observing in batches of 500 or all at once gives the same windows.
    pool = random_verdicts(20_000, seed=3)
    pages = []
    for step in (500, len(pool)):
        registry = CollectorRegistry()
        w, clock = make(None, RULES, LabelSettings(routes=["/chat", "/search"]), registry)
        for i in range(0, len(pool), step):
            w.observe_verdicts(pool[i : i + step])
        clock.now += 1
        w.snapshot()
        pages.append(generate_latest(registry))
    assert pages[0] == pages[1]
    assert b"llm_sidecar_window_score{" in pages[0]


def test_leakage_risk_per_attack_category() -> None:
    w, _ = make(rules=[Rule("leak", "prompt_leakage")])
    w.observe_verdicts(
        [
            verdict(event(0, attack=Attack(category="basic")), leak=yes(0.9, False)),
            verdict(event(1, attack=Attack(category="basic")), leak=yes(0.3)),
            verdict(event(2, attack=Attack(category="advanced")), leak=yes(0.1)),
            verdict(event(3, attack=ranked("advanced", 1)), leak=yes(0.4)),
        ]
    )
    basic = w.read("leakage_risk", "basic", TOTAL) or (0, 0, 0, 0)
    advanced = w.read("leakage_risk", "advanced", TOTAL) or (0, 0, 0, 0)
    overall = w.read("leakage_risk", "", TOTAL) or (0, 0, 0, 0)
    assert (basic[0], basic[3]) == (pytest.approx(0.6), 2)
    assert (advanced[0], advanced[3]) == (pytest.approx((2 * 0.1 + 1 * 0.4) / 3), 2)
    assert overall[0] == pytest.approx((4 * 0.9 + 4 * 0.3 + 2 * 0.1 + 0.4) / 11)
    assert overall[3] == 4
    assert w.read("leakage_risk", "intermediate", TOTAL) is None


def test_bootstrap_bounds_for_small_unweighted_windows_wilson_above() -> None:
    from sidecar.bootstrap import bca_proportion

    settings = WindowSettings(intervals="bootstrap", bootstrap_max_samples=30)
    w, _ = make(settings, rules=[Rule("r", "contains_email")])
    w.observe_verdicts([verdict(event(i), r=yes(True, i % 5 != 0)) for i in range(20)])
    value, lo, hi, n = w.read("rule_pass_rate", "r", TOTAL) or (0, 0, 0, 0)
    assert (value, n) == (0.8, 20)
    assert (lo, hi) == bca_proportion(16, 20, 0.95)
    assert (lo, hi) != pytest.approx(wilson_interval(0.8, 20, 1.959963984540054))
    # Beyond bootstrap_max_samples: Wilson again.
    w.observe_verdicts([verdict(event(i), r=yes(True, i % 5 != 0)) for i in range(20, 40)])
    value, lo, hi, n = w.read("rule_pass_rate", "r", TOTAL) or (0, 0, 0, 0)
    assert n == 40
    assert (lo, hi) == pytest.approx(wilson_interval(0.8, 40, 1.959963984540054))
    # All passed: the bootstrap is degenerate, Wilson still says how sure we are.
    w2, _ = make(settings, rules=[Rule("r", "contains_email")])
    w2.observe_verdicts([verdict(event(i), r=yes(True, True)) for i in range(10)])
    _, lo, hi, _ = w2.read("rule_pass_rate", "r", TOTAL) or (0, 0, 0, 0)
    assert lo == pytest.approx(wilson_interval(1.0, 10, 1.959963984540054)[0]) and hi == 1.0


def test_detector_f1_has_bounds_from_the_jaccard_share() -> None:
    w, _ = make(rules=[Rule("refuse", "refusal")])
    cases = [(True, 1.0)] * 6 + [(True, 0.0)] * 2 + [(False, 0.9)] * 3 + [(False, 0.1)] * 9
    for i, (cheap, judged) in enumerate(cases):
        w.observe_scores(verdict(event(i), refuse=yes(cheap)), {"refusal": judged}, 1.0)
    f1, lo, hi, n = w.read("detector_f1", "refusal", TOTAL) or (0, 0, 0, 0)
    j_lo, j_hi = wilson_interval(6 / 11, 11, 1.959963984540054)
    assert n == 11
    assert lo == pytest.approx(2 * j_lo / (1 + j_lo)) and hi == pytest.approx(2 * j_hi / (1 + j_hi))
    assert lo < f1 < hi


@pytest.mark.parametrize("seed", [1, 2])
def test_a_batch_folds_labels_as_its_events_one_by_one_would(seed: int) -> None:
    """Each distinct label triple of a batch is folded once, weighted by its events: the
    series, their counts and the folded tallies are those of observing event by event."""
    rng = random.Random(seed)
    pool = [  # label values that repeat, more of them than a folder keeps
        Verdict(
            Event(
                id=v.event.id,
                response="r",
                route=f"/r{rng.randrange(40)}",
                model=rng.choice(["gpt", "llama", None]),
                tenant=f"t{rng.randrange(30)}",
                attack=v.event.attack,
            ),
            v.checks,
            "v1",
        )
        for v in random_verdicts(3_000, seed)
    ]
    exported = []
    for size in (500, 1):
        registry = CollectorRegistry()
        w, _ = make(WindowSettings(max_series=300), RULES, None, registry)
        for i in range(0, len(pool), size):
            w.observe_verdicts(pool[i : i + size])
        w.snapshot()
        exported.append(samples(registry))
    batched, single = exported
    assert batched == single
    assert batched[("llm_sidecar_window_observations_folded_total", frozenset())] > 0
