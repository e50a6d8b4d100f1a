"""The scores: which exist, which rules feed them, and how each figure is read from its sums.

Every score is a weighted mean of observations ``x`` with weights ``w``: a pass rate is the
mean of 0/1 outcomes with ``w = 1``; a judged score carries the sampler's inverse-probability
weight, so its mean is the Hájek estimator ``sum(w * x) / sum(w)`` (see :mod:`sidecar.judge.sampler`);
prompt-leakage risk weights each attack's similarity by the attack's rank. One accumulator of
six sums (:mod:`sidecar.windows.ring`) is therefore enough for every score, its interval
(Wilson for proportions, Student t for means) and its effective sample size ``(Σw)² / Σw²``.

Kinds: proportions (pass rates, refusal and robustness rates, RGB rates, detector precision
and recall), means (judge scores, leakage risk), detector F1 (from the agreement sums), and
the judge-corrected robustness, computed from other series at read time
(:meth:`Figures.corrected`).
"""

from __future__ import annotations

import fnmatch
import math
from collections.abc import Callable, Mapping, Sequence
from statistics import NormalDist
from typing import Any, Final

from ..bootstrap import bca_proportion, f1_from_jaccard
from ..pipeline import Outcome
from ..rules import CompiledRule
from ..settings import (
    ATTACK_CATEGORIES,
    ROBUSTNESS_DETECTOR_PREFIX,
    DetectorSettings,
    WindowSettings,
)
from .ring import SW, SW2, SW2X, SWX, N, ScoreKey

PROPORTION, MEAN, F1, CORRECTED = 0, 1, 2, 3
SCORES: Final[Mapping[str, int]] = {
    "rule_pass_rate": PROPORTION,
    "event_pass_rate": PROPORTION,
    "refusal_rate": PROPORTION,
    "adversarial_robustness": PROPORTION,
    "adversarial_robustness_judged": PROPORTION,
    "adversarial_robustness_corrected": CORRECTED,
    "leakage_risk": MEAN,
    "unsuccessful_request_rate": PROPORTION,
    "rgb_noise_robustness_accuracy": PROPORTION,
    "rgb_negative_rejection_rate": PROPORTION,
    "rgb_error_detection_rate": PROPORTION,
    "rgb_error_correction_rate": PROPORTION,
    "judge_score": MEAN,
    "detector_precision": PROPORTION,
    "detector_recall": PROPORTION,
    "detector_f1": F1,
}
"""Every score name (the ``score`` label) and how its interval is computed.

``adversarial_robustness_corrected`` keeps no sums of its own: it is computed at scrape time
from ``adversarial_robustness``, ``adversarial_robustness_judged`` and the
``robustness:<category>`` detector series of the same segment and window
(:meth:`Figures.corrected`).
"""

RGB_SCORES: Final[Mapping[str, str]] = {
    "rgb_answer_correct": "rgb_noise_robustness_accuracy",
    "rgb_negative_rejection": "rgb_negative_rejection_rate",
    "rgb_error_detected": "rgb_error_detection_rate",
    "rgb_error_corrected": "rgb_error_correction_rate",
}
"""RGB check name -> the rate it feeds (RGB: count of true outcomes over samples checked)."""


# -- intervals ----------------------------------------------------------------------------


def wilson_interval(p: float, n: float, z: float) -> tuple[float, float]:
    """Wilson score interval of a proportion ``p`` observed on ``n`` (effective) trials."""
    if n <= 0:
        return 0.0, 1.0
    z2n = z * z / n
    centre = (p + z2n / 2) / (1 + z2n)
    half = z / (1 + z2n) * math.sqrt(max(p * (1 - p) / n + z2n / (4 * n), 0.0))
    return max(0.0, centre - half), min(1.0, centre + half)


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1, a - 1
    c, d = 1.0, 1 - qab * x / qap
    d = 1 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 300):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1 + aa * d
        d = 1 / (d if abs(d) > tiny else tiny)
        c = 1 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1 + aa * d
        d = 1 / (d if abs(d) > tiny else tiny)
        c = 1 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1) < 1e-15:
            break
    return h


def _betai(a: float, b: float, x: float) -> float:
    """Regularised incomplete beta function I_x(a, b)."""
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    lbeta = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
    front = math.exp(lbeta + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1) / (a + b + 2):
        return front * _betacf(a, b, x) / a
    return 1 - front * _betacf(b, a, 1 - x) / b


def _t_cdf(t: float, df: float) -> float:
    tail = 0.5 * _betai(df / 2, 0.5, df / (df + t * t))
    return 1 - tail if t >= 0 else tail


def t_quantile(q: float, df: float) -> float:
    """Quantile ``q`` (above 0.5) of Student's t with ``df`` degrees of freedom.

    Exact (bisection on the CDF) below 30 degrees of freedom, the Cornish-Fisher expansion
    (Abramowitz and Stegun 26.7.5, error under 1e-5 there) above.
    """
    z = NormalDist().inv_cdf(q)
    if df >= 30:
        z2 = z * z
        g1 = (z2 + 1) * z / 4
        g2 = ((5 * z2 + 16) * z2 + 3) * z / 96
        g3 = (((3 * z2 + 19) * z2 + 17) * z2 - 15) * z / 384
        g4 = ((((79 * z2 + 776) * z2 + 1482) * z2 - 1920) * z2 - 945) * z / 92160
        return z + g1 / df + g2 / df**2 + g3 / df**3 + g4 / df**4
    lo, hi = z, 1e7
    for _ in range(200):
        mid = (lo + hi) / 2
        if _t_cdf(mid, df) < q:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-10 * max(1.0, lo):
            break
    return (lo + hi) / 2


def t_interval(sums: Sequence[float], t_of: Callable[[float], float]) -> tuple[float, float]:
    """Student-t interval of a weighted mean from its six sums (``n >= 2``).

    The variance of the ratio estimator is ``Σw²(x - mean)² / (Σw)²`` times ``n / (n - 1)``,
    which is the textbook ``s² / n`` when every weight is 1; the degrees of freedom are the
    effective sample size minus one.
    """
    n, sw, swx, sw2, sw2x, sw2x2 = sums
    mean = swx / sw
    var = (sw2x2 - 2 * mean * sw2x + mean * mean * sw2) / (sw * sw) * n / (n - 1)
    half = t_of(max(sw * sw / sw2 - 1, 1.0)) * math.sqrt(max(var, 0.0))
    return mean - half, mean + half


# -- reading a window's sums --------------------------------------------------------------


RATIO_MIN_PROBES: Final = 10
"""Cheap-refused probes the judged sample needs before the corrected robustness's interval is
the delta method's (:meth:`Figures.corrected`); below, the wider Bonferroni box."""


def _weighted_wilson(sums: Sequence[float], z: float) -> tuple[float, float]:
    """Wilson interval of a weighted share, on its effective sample size."""
    if sums[N] <= 0 or sums[SW] <= 0 or sums[SW2] <= 0:
        return 0.0, 1.0
    p = min(max(sums[SWX] / sums[SW], 0.0), 1.0)
    return wilson_interval(p, sums[SW] * sums[SW] / sums[SW2], z)


class Figures:
    """Value and bounds of a window's sums, at the configured confidence level."""

    def __init__(self, settings: WindowSettings) -> None:
        s = self.settings = settings
        q = 1 - (1 - s.confidence) / 2
        self._z = NormalDist().inv_cdf(q)
        self._t_table = [math.inf] + [t_quantile(q, df) for df in range(1, 30)]
        self._q = q
        self._correction = s.robustness_correction
        # The fallback interval of the corrected robustness is a box of three intervals
        # (observed share, precision, recall), each at 1 - alpha/3, so that all three hold
        # together at 1 - alpha.
        self._z_box = NormalDist().inv_cdf(1 - (1 - s.confidence) / 6)

    def t_value(self, df: float) -> float:
        """The t multiplier of the configured level (floor of ``df`` below 30: conservative)."""
        if df >= 30:
            return t_quantile(self._q, df)
        return self._t_table[max(1, int(df))]

    def interval(self, kind: int, sums: Sequence[float]) -> tuple[float, float, float] | None:
        """(value, lower, upper) of one window's sums; bounds are NaN when not defined."""
        n, sw, swx = sums[N], sums[SW], sums[SWX]
        if n <= 0 or sw <= 0:
            return None
        if kind == F1:  # sums over events where either side is positive; swx counts both
            # F1 = 2J / (1 + J) with J = TP / (TP + FP + FN), the share of those events where
            # both said positive: J's interval, mapped, bounds F1.
            lo, hi = self._rate_bounds(swx / sw, sums)
            return 2 * swx / (sw + swx), f1_from_jaccard(lo), f1_from_jaccard(hi)
        value = swx / sw
        if kind == PROPORTION:
            lo, hi = self._rate_bounds(value, sums)
            return value, lo, hi
        if n < 2:
            return value, math.nan, math.nan
        lo, hi = t_interval(sums, self.t_value)
        return value, lo, hi

    def _rate_bounds(self, p: float, sums: Sequence[float]) -> tuple[float, float]:
        """Bounds of a rate: BCa bootstrap for small unweighted windows if chosen, else Wilson."""
        n, sw, sw2 = sums[N], sums[SW], sums[SW2]
        s = self.settings
        if (
            s.intervals == "bootstrap"
            and n <= s.bootstrap_max_samples
            and abs(sw - n) < 1e-9
            and abs(sw2 - n) < 1e-9
        ):
            got = bca_proportion(round(sums[SWX]), round(n), s.confidence)
            if got is not None:
                return got
        return wilson_interval(min(max(p, 0.0), 1.0), sw * sw / sw2, self._z)

    def corrected(
        self,
        raw: Sequence[float] | None = None,
        judged: Sequence[float] | None = None,
        precision: Sequence[float] | None = None,
        recall: Sequence[float] | None = None,
    ) -> tuple[float, float, float, float] | None:
        """(value, lower, upper, judged probes) of the judge-corrected robustness, or None.

        ``raw`` is the window's cheap robustness (share of probes the cheap refusal called
        refused), ``judged`` the probes both scored (x: the judge called it refused),
        ``precision`` the judged probes the cheap refusal called refused (x: so did the judge),
        ``recall`` those the judge called refused (x: so did the cheap one). With q the
        observed share, the estimate is ``q * P / R``, clamped to [0, 1]. ``P / R`` equals the
        ratio ``A / B`` of the weight of judge-refused probes to the weight of cheap-refused
        probes in the judged sample, which is how it is computed (so it stays defined when the
        two never agree). No value below
        ``min_judged`` judged probes, nor when no judged probe was cheap-refused (then the ratio
        has no denominator).

        The bounds are a normal interval at the configured level for ``log(q * A / B)``, with
        the delta method's variance ``Var(q) / q² + Var(A / B) / (A / B)²``: a ratio is skewed,
        and on the plain scale the interval's upper bound, the one the robustness alert reads,
        fell below the truth up to three times as often as its level allows (in simulation:
        7.7 % against 2.5 % with a cheap check that misses most refusals; 4.0 % on the log
        scale). ``Var(q) = q(1 - q) / n`` over the window's probes; ``Var(A / B)`` is the ratio
        estimator's ``Σ w² (a - A/B · b)² / B²`` over the judged probes (a, b: judge and cheap
        refused; every sum it needs is one the windows keep), times ``k / (k - 1)`` for k
        probes. The probes where the two disagree weigh most in that sum (those where both
        said refused add ``w² (1 - A/B)²``, none where neither did), so a small sample with
        no disagreement would claim a certainty it does not have: one pseudo-probe of each
        kind of disagreement, at the judged sample's mean squared weight, is added to the sum
        (as Agresti and Coull add pseudo-counts to a proportion). When the judge called no
        judged probe refused (A = 0) the estimate is 0 and the interval is the plain one.

        With fewer than :data:`RATIO_MIN_PROBES` cheap-refused probes in the judged sample the
        ratio's denominator is too small for the delta method, and the bounds are the box of
        the Wilson intervals of q, P and R at ``1 - alpha/3`` each (Bonferroni: all three hold
        together at ``1 - alpha``) mapped through ``q * P / R``, which rises with q and P and
        falls with R. That box was the only interval before; it held the truth in every draw
        of ``bench/detectors.py``'s simulation but was 0.24-0.79 wide (0.24-0.50 with 100
        judged probes), too wide for an alert on its upper bound to fire.
        """
        if raw is None or judged is None or precision is None:
            return None
        n_judged = judged[N]
        if n_judged < self._correction.min_judged or raw[N] <= 0:
            return None
        cheap_w = precision[SW]
        if precision[N] <= 0 or cheap_w <= 0:
            return None
        if precision[N] > n_judged or precision[SWX] > judged[SWX] * (1 + 1e-9) + 1e-9:
            # The cheap-refused probes are a subset of the judged ones. The series limit keeps
            # a segment's judged-sample series together (Windows._add); should the sums still
            # disagree, no figure rather than a ratio of two different samples.
            return None
        ratio = judged[SWX] / cheap_w
        q = raw[SWX] / raw[SW]
        value = min(max(q * ratio, 0.0), 1.0)
        n_raw = raw[SW] * raw[SW] / raw[SW2] if raw[SW2] > 0 else raw[N]
        if precision[N] < RATIO_MIN_PROBES:
            z = self._z_box
            q_lo, q_hi = wilson_interval(q, n_raw, z)
            p_lo, p_hi = _weighted_wilson(precision, z)
            r_lo, r_hi = _weighted_wilson(recall, z) if recall is not None else (0.0, 1.0)
            lower = min(q_lo * p_lo / r_hi, 1.0) if r_hi > 0 else 0.0
            upper = min(q_hi * p_hi / r_lo, 1.0) if r_lo > 0 else 1.0
            return value, min(lower, value), max(upper, value), n_judged
        # Σ w² (a - R b)² = Σw²a - 2R Σw²ab + R² Σw²b for 0/1 outcomes a (judge) and b (cheap).
        spread = judged[SW2X] - 2 * ratio * precision[SW2X] + ratio * ratio * precision[SW2]
        spread = max(spread, 0.0) + judged[SW2] / n_judged * (1 + ratio * ratio)
        var_ratio = spread / (cheap_w * cheap_w) * n_judged / max(n_judged - 1, 1)
        var_q = q * (1 - q) / n_raw
        centre = q * ratio
        if centre <= 0:  # the judge called no judged probe refused: no log scale
            half = self._z * math.sqrt(ratio * ratio * var_q + q * q * var_ratio)
            return value, 0.0, min(half, 1.0), n_judged
        # On the log scale, where a ratio's skew is: Var(log qR) = Var(q)/q² + Var(R)/R².
        spread_log = self._z * math.sqrt(var_q / (q * q) + var_ratio / (ratio * ratio))
        lower = min(centre * math.exp(-spread_log), 1.0)
        return value, lower, min(centre * math.exp(spread_log), 1.0), n_judged


def _correction_parts(category: str) -> dict[str, ScoreKey]:
    """The series the corrected robustness of ``category`` is computed from, by role."""
    name = _ROBUSTNESS_DETECTOR.get(category, f"{ROBUSTNESS_DETECTOR_PREFIX}{category}")
    return {
        "raw": ("adversarial_robustness", category),
        "judged": ("adversarial_robustness_judged", category),
        "precision": ("detector_precision", name),
        "recall": ("detector_recall", name),
    }


# -- which rules feed which score ---------------------------------------------------------


class _Roles:
    """Which rules feed which derived score, resolved once per rule set."""

    def __init__(self, rules: Sequence[CompiledRule], settings: WindowSettings) -> None:
        if settings.refusal_rule is not None:
            self.refusal = [settings.refusal_rule]
        else:
            self.refusal = [
                r.id for r in rules if r.check_name == "refusal" and r.field == "response"
            ]
        self.leakage = [r.id for r in rules if r.check_name == "prompt_leakage"]
        self.attack = [r.id for r in rules if r.check_name == "attack_attempt"]
        """Rules whose flag makes an event without ``attack`` an organic attack attempt."""
        self.rgb: list[tuple[str, list[str]]] = [
            (score, ids)
            for check, score in RGB_SCORES.items()
            if (ids := [r.id for r in rules if r.check_name == check])
        ]
        self.negative_rejection = [r.id for r in rules if r.check_name == "rgb_negative_rejection"]
        self.detectors: list[tuple[DetectorSettings, list[str]]] = []
        for d in settings.detectors:
            ids = [
                r.id
                for r in rules
                if (d.check is not None and r.check_name == d.check)
                or (d.rule is not None and fnmatch.fnmatchcase(r.id, d.rule))
            ]
            self.detectors.append((d, ids))


ORGANIC_PREFIX: Final = "organic:"
"""Subjects of the robustness series of organic attack attempts: prompts the
``attack_attempt`` check flagged on events that carry no ``attack`` of their own, by the
category it inferred (``organic:intermediate``, ``organic:advanced``). Red-team probes keep
the bare category as subject; the recording rules give both an ``origin`` label."""
ORGANIC_CATEGORIES: Final = ("intermediate", "advanced")
"""The categories ``attack_attempt`` infers (a natural-language set-up, or an encoding or
optimised suffix); it never says ``basic``."""
ORGANIC_SUBJECTS: Final[Mapping[str, str]] = {c: ORGANIC_PREFIX + c for c in ORGANIC_CATEGORIES}
ROBUSTNESS_SUBJECTS: Final = (*ATTACK_CATEGORIES, *ORGANIC_SUBJECTS.values())
"""Every subject of the robustness, judged-share, leakage-by-category and correction series."""

_FIXED_KEYS: Final[tuple[ScoreKey, ...]] = (
    ("event_pass_rate", ""),
    ("refusal_rate", ""),
    *(("adversarial_robustness", c) for c in ATTACK_CATEGORIES),
    ("unsuccessful_request_rate", ""),
    *((score, "") for score in RGB_SCORES.values()),
    *(("adversarial_robustness", s) for s in ORGANIC_SUBJECTS.values()),
)
"""The binary scores every batch may touch; rule pass rates take the slots after them."""
_EVENT_PASS, _REFUSAL, _UNSUCCESSFUL = 0, 2, 10
_ROBUSTNESS: Final = {
    subject: 2 * _FIXED_KEYS.index(("adversarial_robustness", subject))
    for subject in ROBUSTNESS_SUBJECTS
}
_LEAKAGE: Final[ScoreKey] = ("leakage_risk", "")
_LEAKAGE_BY: Final[Mapping[str, ScoreKey]] = {s: ("leakage_risk", s) for s in ROBUSTNESS_SUBJECTS}
_JUDGED_BY: Final[Mapping[str, ScoreKey]] = {
    s: ("adversarial_robustness_judged", s) for s in ROBUSTNESS_SUBJECTS
}
_ROBUSTNESS_DETECTOR: Final[Mapping[str, str]] = {
    s: f"{ROBUSTNESS_DETECTOR_PREFIX}{s}" for s in ROBUSTNESS_SUBJECTS
}


def organic_subject(checks: Mapping[str, Outcome], ids: Sequence[str]) -> str | None:
    """The organic robustness subject of an event without ``attack``: that of the category
    the first ``attack_attempt`` rule that flagged it inferred (its detail starts with the
    category), or None when none flagged it."""
    for rid in ids:
        o = checks.get(rid)
        if o is not None and o.value is True and o.detail:
            subject = ORGANIC_SUBJECTS.get(o.detail.split(":", 1)[0])
            if subject is not None:
                return subject
    return None


def _first(checks: Mapping[str, Outcome], ids: Sequence[str]) -> Outcome | None:
    """The first outcome among ``ids`` that has a value (the rule ran and its check worked)."""
    for rid in ids:
        o = checks.get(rid)
        if o is not None and o.value is not None:
            return o
    return None


def _rank(attack: Any, ranks: Mapping[str, int]) -> int:
    extra = attack.extra
    if extra:
        r = extra.get("rank")
        if isinstance(r, int) and not isinstance(r, bool) and 1 <= r <= 4:
            return r
    return ranks.get(attack.category, 1)
