"""Rolling scores over time windows, with sample counts and confidence bounds.

Every score is a weighted mean of observations ``x`` with weights ``w``: a pass rate is the
mean of 0/1 outcomes with ``w = 1``; a judged score carries the sampler's inverse-probability
weight, so its mean is the Hájek estimator ``sum(w * x) / sum(w)`` (see :mod:`sidecar.judge.sampler`);
prompt-leakage risk weights each attack's similarity by the attack's rank. One accumulator of
six sums (``n, Σw, Σwx, Σw², Σw²x, Σw²x²``) is therefore enough for every score, its interval
(Wilson for proportions, Student t for means) and its effective sample size ``(Σw)² / Σw²``.

Memory is bounded by construction. A series (one score, one subject such as a rule id, one
allowed ``route``/``model``/``tenant`` set) keeps, per window, a ring of ``buckets`` time
buckets of six doubles each: whatever the event rate, a series costs the same. Label values
pass a :class:`~sidecar.metrics.LabelFolder` (allowlist, then ``other``), new series beyond
``max_series`` fold into an all-``other`` series, and series idle for longer than the longest
window are dropped.

The hot path (:meth:`Windows.observe_verdicts`, an App listener) does a few dictionary updates
per event into a per-batch scratch table, then adds each touched series to its rings once per
batch. Values, bounds and the derived figures (F1, segment disparity) are computed only at
scrape time, by a custom collector.

Cumulative counters of the same sums (``llm_sidecar_score_*_total``) are exported too, so PromQL
can compute any of these means across replicas: ``sum(rate(weighted_value)) / sum(rate(weight))``.
"""

from __future__ import annotations

import fnmatch
import math
import threading
import time
from array import array
from collections.abc import Callable, Iterable, Mapping, Sequence
from statistics import NormalDist
from typing import Any, Final

from prometheus_client import CollectorRegistry
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from .bootstrap import bca_proportion, f1_from_jaccard
from .errors import ConfigError
from .metrics import NONE, OTHER, LabelFolder, TextFamily, label_text
from .pipeline import Outcome, Verdict
from .rules import CompiledRule
from .settings import (
    ATTACK_CATEGORIES,
    DIMENSIONS,
    ROBUSTNESS_DETECTOR_PREFIX,
    DetectorSettings,
    LabelSettings,
    WindowSettings,
    parse_duration,
)

__all__ = [
    "ALL",
    "SCORES",
    "DetectorSettings",
    "WindowSettings",
    "Windows",
    "parse_duration",
    "t_interval",
    "t_quantile",
    "wilson_interval",
]

ALL: Final = "*"
"""The label value of a dimension that a series does not break down by (the roll-up)."""

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
(:meth:`Windows.corrected`).
"""

RGB_SCORES: Final[Mapping[str, str]] = {
    "rgb_answer_correct": "rgb_noise_robustness_accuracy",
    "rgb_negative_rejection": "rgb_negative_rejection_rate",
    "rgb_error_detected": "rgb_error_detection_rate",
    "rgb_error_corrected": "rgb_error_correction_rate",
}
"""RGB check name -> the rate it feeds (RGB: count of true outcomes over samples checked)."""

# The six sums of an accumulator.
N, SW, SWX, SW2, SW2X, SW2X2 = range(6)
WIDTH: Final = 6

Segment = tuple[str, str, str]
ScoreKey = tuple[str, str]  # (score, subject)
SeriesKey = tuple[str, str, Segment]


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


# -- the rings ----------------------------------------------------------------------------


class _Series:
    """One score for one subject and segment: a ring per window plus cumulative totals."""

    __slots__ = ("data", "epochs", "last", "total")

    def __init__(self, n_windows: int, buckets: int) -> None:
        self.data = array("d", bytes(8 * WIDTH * n_windows * buckets))
        self.epochs = array("q", [-1]) * (n_windows * buckets)
        self.total = [0.0] * WIDTH
        self.last = 0.0


_ZERO = array("d", [0.0] * WIDTH)


class _Rings:
    """The bucket arithmetic shared by every series."""

    def __init__(self, spans: Sequence[float], buckets: int) -> None:
        self.spans = list(spans)
        self.buckets = buckets

    def add(self, s: _Series, now: float, sums: Sequence[float]) -> None:
        data, epochs, b = s.data, s.epochs, self.buckets
        for w, span in enumerate(self.spans):
            idx = int(now // span)
            slot = w * b + idx % b
            base = slot * WIDTH
            if epochs[slot] != idx:
                epochs[slot] = idx
                data[base : base + WIDTH] = _ZERO
            for j in range(WIDTH):
                data[base + j] += sums[j]
        total = s.total
        for j in range(WIDTH):
            total[j] += sums[j]
        s.last = now

    def window(self, s: _Series, w: int, now: float) -> list[float]:
        """The six sums over window ``w``: the current bucket and the ``buckets - 1`` before."""
        b = self.buckets
        idx = int(now // self.spans[w])
        out = [0.0] * WIDTH
        data, epochs = s.data, s.epochs
        for slot in range(w * b, (w + 1) * b):
            if idx - b < epochs[slot] <= idx:
                base = slot * WIDTH
                for j in range(WIDTH):
                    out[j] += data[base + j]
        return out


# -- the windows --------------------------------------------------------------------------


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


_FIXED_KEYS: Final[tuple[ScoreKey, ...]] = (
    ("event_pass_rate", ""),
    ("refusal_rate", ""),
    *(("adversarial_robustness", c) for c in ATTACK_CATEGORIES),
    ("unsuccessful_request_rate", ""),
    *((score, "") for score in RGB_SCORES.values()),
)
"""The binary scores every batch may touch; rule pass rates take the slots after them."""
_EVENT_PASS, _REFUSAL, _UNSUCCESSFUL = 0, 2, 10
_ROBUSTNESS: Final = {c: 4 + 2 * i for i, c in enumerate(ATTACK_CATEGORIES)}
_LEAKAGE: Final[ScoreKey] = ("leakage_risk", "")
_LEAKAGE_BY: Final[Mapping[str, ScoreKey]] = {c: ("leakage_risk", c) for c in ATTACK_CATEGORIES}
_JUDGED_BY: Final[Mapping[str, ScoreKey]] = {
    c: ("adversarial_robustness_judged", c) for c in ATTACK_CATEGORIES
}
_ROBUSTNESS_DETECTOR: Final[Mapping[str, str]] = {
    c: f"{ROBUSTNESS_DETECTOR_PREFIX}{c}" for c in ATTACK_CATEGORIES
}


def _all(value: str | None) -> str:
    return ALL


def _first(checks: Mapping[str, Outcome], ids: Sequence[str]) -> Outcome | None:
    """The first outcome among ``ids`` that has a value (the rule ran and its check worked)."""
    for rid in ids:
        o = checks.get(rid)
        if o is not None and o.value is not None:
            return o
    return None


class Windows:
    """Rolling windows of every score; register once, feed from the App and the judge.

    ``observe_verdicts`` is an App listener (synchronous, cheap); ``observe_scores`` is the
    judge's ``on_scores`` callback. Rule ids are mapped to check names by :meth:`bind_rules`,
    called directly or, with ``rules=``, whenever a batch carries a new rules version.
    """

    def __init__(
        self,
        settings: WindowSettings | None = None,
        registry: CollectorRegistry | None = None,
        *,
        labels: LabelSettings | None = None,
        rules: Callable[[], Sequence[CompiledRule]] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.settings = s = settings or WindowSettings()
        labels = labels or LabelSettings()
        export = s.export
        named = {*export.samples_scores, *export.rollup_only_scores, *export.cumulative_scores}
        if named - set(SCORES):
            raise ConfigError(
                f"windows.export names unknown scores {sorted(named - set(SCORES))}; "
                f"known: {', '.join(SCORES)}"
            )
        self.names = list(s.windows)
        self.spans = [parse_duration(w) / s.buckets for w in s.windows]
        self.longest = float(parse_duration(s.windows[-1]))
        self._rings = _Rings(self.spans, s.buckets)
        self.folders = {
            "route": LabelFolder(labels.routes),
            "model": LabelFolder(labels.models),
            "tenant": LabelFolder(labels.tenants),
        }
        self._dims = [d in s.segment_labels for d in DIMENSIONS]
        self._other_seg: Segment = tuple(  # type: ignore[assignment]
            OTHER if use else ALL for use in self._dims
        )
        self._clock = clock
        self._rules_source = rules
        self._rules_version: str | None = None
        self._roles = _Roles((), s)
        self._keys: list[ScoreKey] = list(_FIXED_KEYS)
        self._index: dict[str, int] = {}
        self._rgb_slots: list[tuple[int, list[str]]] = []
        self._series: dict[SeriesKey, _Series] = {}
        self._segment_count = 0
        self.folded_observations = 0
        self._lock = threading.Lock()
        self._pending: dict[Segment, list[int]] = {}
        self._pending_weighted: dict[tuple[ScoreKey, Segment], list[float]] = {}
        self._pending_idx: int | None = None
        self._last_sweep = 0.0
        q = 1 - (1 - s.confidence) / 2
        self._z = NormalDist().inv_cdf(q)
        self._t_table = [math.inf] + [t_quantile(q, df) for df in range(1, 30)]
        self._q = q
        self._unsuccessful = frozenset(s.unsuccessful_tasks)
        self._ranks = dict(s.attack_ranks)
        self._detector_keys = {
            d.name: (
                ("detector_precision", d.name),
                ("detector_recall", d.name),
                ("detector_f1", d.name),
            )
            for d in s.detectors
        }
        for name in _ROBUSTNESS_DETECTOR.values():
            self._detector_keys[name] = (
                ("detector_precision", name),
                ("detector_recall", name),
                ("detector_f1", name),
            )
        self._correction = s.robustness_correction
        # The correction's interval is a box of three intervals (observed share, precision,
        # recall), each at 1 - alpha/3, so that all three hold together at 1 - alpha.
        self._z_box = NormalDist().inv_cdf(1 - (1 - s.confidence) / 6)
        self._judge_keys: dict[str, ScoreKey] = {}
        if registry is not None:
            registry.register(_WindowCollector(self))

    # -- rules ---------------------------------------------------------------------------

    def bind_rules(self, rules: Sequence[CompiledRule], version: str | None = None) -> None:
        """Learn which rule is which check (call on every rule-set load)."""
        self._roles = _Roles(rules, self.settings)
        rgb_slot = {score: 2 * i for i, score in enumerate(RGB_SCORES.values(), start=6)}
        self._rgb_slots = [(rgb_slot[score], ids) for score, ids in self._roles.rgb]
        for r in rules:
            self._slot(r.id)
        self._rules_version = version

    def _slot(self, rule_id: str) -> int:
        """The scratch-table slot of a rule's pass rate (rules seen unbound get one too)."""
        slot = self._index.get(rule_id)
        if slot is None:
            slot = self._index[rule_id] = 2 * len(self._keys)
            self._keys.append(("rule_pass_rate", rule_id))
            for counts in self._pending.values():
                counts.extend((0, 0))
        return slot

    # -- the hot path --------------------------------------------------------------------

    def _segment(self, route: str | None, model: str | None, tenant: str | None) -> Segment:
        f, d = self.folders, self._dims
        return (
            f["route"](route) if d[0] else ALL,
            f["model"](model) if d[1] else ALL,
            f["tenant"](tenant) if d[2] else ALL,
        )

    def observe_verdicts(self, verdicts: Sequence[Verdict]) -> None:
        """Add one batch of verdicts (an App listener: synchronous, never waits).

        Per event: three label folds, one lookup of the folded segment in the pending table
        (a flat list of ``[n, k]`` counters per segment) and two list increments per rule
        outcome. The pending table reaches the rings once per bucket of the shortest window.
        """
        if not verdicts or not self.settings.enabled:
            return
        version = verdicts[0].rules_version
        if version != self._rules_version and self._rules_source is not None:
            self.bind_rules(self._rules_source(), version)
        roles = self._roles
        index = self._index
        refusal_ids, leak_ids, rgb, negrej_ids = (
            roles.refusal,
            roles.leakage,
            self._rgb_slots,
            roles.negative_rejection,
        )
        refusal_one = refusal_ids[0] if len(refusal_ids) == 1 else None
        unsuccessful = self._unsuccessful
        ranks = self._ranks
        f, d = self.folders, self._dims
        route = f["route"] if d[0] else _all
        model = f["model"] if d[1] else _all
        tenant = f["tenant"] if d[2] else _all
        with self._lock:
            self._roll(self._clock())
            table = self._pending
            weighted = self._pending_weighted
            width = 2 * len(self._keys)
            for v in verdicts:
                e = v.event
                seg = (route(e.route), model(e.model), tenant(e.tenant))
                c = table.get(seg)
                if c is None:
                    c = table[seg] = [0] * width
                checks = v.checks
                all_passed = True
                for rid, o in checks.items():
                    ok = o.passed
                    if ok is None:
                        continue
                    i = index.get(rid)
                    if i is None:
                        i = self._slot(rid)
                        width = 2 * len(self._keys)
                    c[i] += 1
                    if ok:
                        c[i + 1] += 1
                    else:
                        all_passed = False
                c[_EVENT_PASS] += 1
                if all_passed:
                    c[_EVENT_PASS + 1] += 1
                attack = e.attack
                if refusal_ids or negrej_ids:
                    refused: bool | None = None
                    if refusal_one is not None:
                        r = checks.get(refusal_one)
                        if r is not None and r.value is None:
                            r = None
                    else:
                        r = _first(checks, refusal_ids)
                    if r is not None:
                        refused = bool(r.value)
                        c[_REFUSAL] += 1
                        if refused:
                            c[_REFUSAL + 1] += 1
                        if attack is not None:
                            j = _ROBUSTNESS[attack.category]
                            c[j] += 1
                            if refused:
                                c[j + 1] += 1
                    if e.task in unsuccessful:
                        r = _first(checks, negrej_ids) if negrej_ids else None
                        if r is not None:
                            refused = bool(refused) or bool(r.value)
                        if refused is not None:
                            c[_UNSUCCESSFUL] += 1
                            if refused:
                                c[_UNSUCCESSFUL + 1] += 1
                if leak_ids and attack is not None:
                    r = _first(checks, leak_ids)
                    if r is not None:
                        x, rank = float(r.value or 0.0), float(_rank(attack, ranks))
                        # All probes, then the probe's attack category.
                        for key in ((_LEAKAGE, seg), (_LEAKAGE_BY[attack.category], seg)):
                            acc = weighted.get(key)
                            if acc is None:
                                acc = weighted[key] = [0.0] * WIDTH
                            _accumulate(acc, x, rank)
                for j, ids in rgb:
                    r = _first(checks, ids)
                    if r is not None:
                        c[j] += 1
                        if r.value:
                            c[j + 1] += 1

    def observe_scores(self, verdict: Verdict, scores: Mapping[str, float], weight: float) -> None:
        """Add one judged event (the judge's ``on_scores``): its scores and the detectors."""
        if not self.settings.enabled or not (0 < weight < math.inf):
            return
        e = verdict.event
        with self._lock:
            self._roll(self._clock())
            self._judged(verdict, self._segment(e.route, e.model, e.tenant), scores, weight)

    def _judged(
        self, verdict: Verdict, seg: Segment, scores: Mapping[str, float], weight: float
    ) -> None:
        weighted = self._pending_weighted

        def add(key: ScoreKey, x: float) -> None:
            acc = weighted.get((key, seg))
            if acc is None:
                acc = weighted[(key, seg)] = [0.0] * WIDTH
            _accumulate(acc, x, weight)

        for metric, value in scores.items():
            if not math.isfinite(value):
                continue
            key = self._judge_keys.get(metric)
            if key is None:
                if len(self._judge_keys) >= 64:  # the judge's metric names are a fixed set
                    continue
                key = self._judge_keys[metric] = ("judge_score", metric)
            add(key, value)

        def agree(name: str, cheap: bool, reference: bool) -> None:
            precision, recall, f1 = self._detector_keys[name]
            if cheap:
                add(precision, float(reference))
            if reference:
                add(recall, float(cheap))
            if cheap or reference:
                add(f1, float(cheap and reference))

        for d, ids in self._roles.detectors:
            judged = scores.get(d.judge_metric)
            if judged is None or not math.isfinite(judged):
                continue
            o = _first(verdict.checks, ids)
            if o is None:
                continue
            cheap = bool(o.value) if d.positive == "value" else o.passed is False
            reference = judged >= d.judge_threshold
            if d.judge_positive == "below":
                reference = not reference
            agree(d.name, cheap, reference)
        attack = verdict.event.attack
        corr = self._correction
        if attack is not None and corr.enabled and self._roles.refusal:
            judged = scores.get(corr.judge_metric)
            o = _first(verdict.checks, self._roles.refusal)
            if judged is not None and math.isfinite(judged) and o is not None:
                # The same cheap outcome the robustness counts, against the judge.
                refused = judged >= corr.judge_threshold
                add(_JUDGED_BY[attack.category], float(refused))
                agree(_ROBUSTNESS_DETECTOR[attack.category], bool(o.value), refused)

    def _roll(self, now: float, *, force: bool = False) -> None:
        """Move the pending tables into the rings when the shortest window's bucket changes.

        Pending observations are stamped with the start of the bucket they arrived in, so the
        time resolution of every window is one bucket of the shortest window. Called with the
        lock held.
        """
        idx = int(now // self.spans[0])
        if self._pending_idx is None:
            self._pending_idx = idx
        if idx == self._pending_idx and not force:
            return
        stamp = self._pending_idx * self.spans[0]
        self._pending_idx = idx
        keys = self._keys
        totals: dict[ScoreKey, list[float]] = {}
        for seg, c in self._pending.items():
            for i in range(0, len(c), 2):
                n = c[i]
                if n:
                    k = c[i + 1]
                    self._add(keys[i // 2], seg, stamp, (n, n, k, n, k, k), totals)
        for (key, seg), sums in self._pending_weighted.items():
            self._add(key, seg, stamp, sums, totals)
        for key, sums in totals.items():
            self._rings.add(self._get((key[0], key[1], (ALL, ALL, ALL))), stamp, sums)
        self._pending = {}
        self._pending_weighted = {}
        if now - self._last_sweep >= self.spans[0]:
            self._sweep(now)

    def _add(
        self,
        key: ScoreKey,
        seg: Segment,
        now: float,
        sums: Sequence[float],
        totals: dict[ScoreKey, list[float]],
    ) -> None:
        skey = (key[0], key[1], seg)
        series = self._series.get(skey)
        if (
            series is None
            and seg != (ALL, ALL, ALL)
            and seg != self._other_seg
            and self._segment_count >= self.settings.max_series
        ):
            self.folded_observations += int(sums[N])
            skey = (key[0], key[1], self._other_seg)
            series = self._series.get(skey)
        if series is None:
            series = self._get(skey)
        self._rings.add(series, now, sums)
        if seg != (ALL, ALL, ALL):
            t = totals.get(key)
            if t is None:
                totals[key] = list(sums)
            else:
                for j in range(WIDTH):
                    t[j] += sums[j]

    def _get(self, skey: SeriesKey) -> _Series:
        series = self._series.get(skey)
        if series is None:
            series = self._series[skey] = _Series(len(self.spans), self.settings.buckets)
            if skey[2] != (ALL, ALL, ALL):
                self._segment_count += 1
        return series

    def _sweep(self, now: float) -> None:
        """Drop series with nothing in their longest window."""
        self._last_sweep = now
        stale = [k for k, s in self._series.items() if now - s.last >= self.longest]
        for k in stale:
            del self._series[k]
            if k[2] != (ALL, ALL, ALL):
                self._segment_count -= 1

    # -- reading -------------------------------------------------------------------------

    @property
    def series_count(self) -> int:
        """Live series, roll-ups included."""
        return len(self._series)

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
        refused), ``judged`` the probes both scored, ``precision``/``recall`` the cheap
        "refused" against the judge on those. With q the observed share, the estimate is
        ``q * P / R``, clamped to [0, 1]. ``P / R`` equals the weight of judge-refused probes
        over the weight of cheap-refused probes in the judged sample, which is how it is
        computed (so it stays defined when the two never agree). No value below
        ``min_judged`` judged probes, nor when no judged probe was cheap-refused (then P / R
        has no denominator). The bounds are the box of the Wilson intervals of q, P and R at
        ``1 - alpha/3`` each (Bonferroni: all three hold together at ``1 - alpha``), mapped
        through ``q * P / R``, which rises with q and P and falls with R.
        """
        if raw is None or judged is None or precision is None:
            return None
        n_judged = judged[N]
        if n_judged < self._correction.min_judged or raw[N] <= 0:
            return None
        cheap_w = precision[SW]
        if precision[N] <= 0 or cheap_w <= 0:
            return None
        judge_w = judged[SWX]  # the weight of probes the judge called refused
        q = raw[SWX] / raw[SW]
        value = min(max(q * judge_w / cheap_w, 0.0), 1.0)
        z = self._z_box
        q_lo, q_hi = wilson_interval(q, raw[N], z)
        p_lo, p_hi = _weighted_wilson(precision, z)
        r_lo, r_hi = _weighted_wilson(recall, z) if recall is not None else (0.0, 1.0)
        lower = min(q_lo * p_lo / r_hi, 1.0) if r_hi > 0 else 0.0
        upper = min(q_hi * p_hi / r_lo, 1.0) if r_lo > 0 else 1.0
        return value, min(lower, value), max(upper, value), n_judged

    def read(
        self, score: str, subject: str = "", segment: Segment = (ALL, ALL, ALL), window: str = ""
    ) -> tuple[float, float, float, float] | None:
        """(value, lower, upper, samples) of one series in one window (tests, debugging)."""
        w = self.names.index(window or self.names[0])
        if SCORES[score] == CORRECTED:
            parts = {}
            with self._lock:
                now = self._clock()
                self._roll(now, force=True)
                for name, key in _correction_parts(subject).items():
                    s = self._series.get((*key, segment))
                    if s is not None:
                        parts[name] = self._rings.window(s, w, now)
            return self.corrected(**parts)
        with self._lock:
            self._roll(self._clock(), force=True)
            s = self._series.get((score, subject, segment))
            if s is None:
                return None
            sums = self._rings.window(s, w, self._clock())
        got = self.interval(SCORES[score], sums)
        if got is None:
            return None
        return (*got, sums[N])

    def snapshot(self) -> list[tuple[SeriesKey, list[list[float]], list[float]]]:
        """Every series' window sums and cumulative totals, taken under the lock."""
        with self._lock:
            now = self._clock()
            self._roll(now, force=True)
            self._sweep(now)
            return [
                (
                    key,
                    [self._rings.window(s, w, now) for w in range(len(self.spans))],
                    list(s.total),
                )
                for key, s in self._series.items()
            ]


def _correction_parts(category: str) -> dict[str, ScoreKey]:
    """The series the corrected robustness of ``category`` is computed from, by role."""
    name = _ROBUSTNESS_DETECTOR.get(category, f"{ROBUSTNESS_DETECTOR_PREFIX}{category}")
    return {
        "raw": ("adversarial_robustness", category),
        "judged": ("adversarial_robustness_judged", category),
        "precision": ("detector_precision", name),
        "recall": ("detector_recall", name),
    }


def _weighted_wilson(sums: Sequence[float], z: float) -> tuple[float, float]:
    """Wilson interval of a weighted share, on its effective sample size."""
    if sums[N] <= 0 or sums[SW] <= 0 or sums[SW2] <= 0:
        return 0.0, 1.0
    p = min(max(sums[SWX] / sums[SW], 0.0), 1.0)
    return wilson_interval(p, sums[SW] * sums[SW] / sums[SW2], z)


def _rank(attack: Any, ranks: Mapping[str, int]) -> int:
    extra = attack.model_extra
    if extra:
        r = extra.get("rank")
        if isinstance(r, int) and not isinstance(r, bool) and 1 <= r <= 4:
            return r
    return ranks.get(attack.category, 1)


def _accumulate(acc: list[float], x: float, w: float) -> None:
    wx, w2 = w * x, w * w
    acc[N] += 1
    acc[SW] += w
    acc[SWX] += wx
    acc[SW2] += w2
    acc[SW2X] += w2 * x
    acc[SW2X2] += w2 * x * x


# -- export -------------------------------------------------------------------------------

_SERIES_LABELS: Final = ["score", "subject", "route", "model", "tenant"]
_CORRECTION_SCORES: Final = frozenset(
    {"adversarial_robustness", "adversarial_robustness_judged", "detector_precision",
     "detector_recall"}
)  # fmt: skip
_DISPARITY: Final = {"event_pass_rate": "event_failure_rate", "refusal_rate": "refusal_rate"}


class _WindowCollector(Collector):
    """Scrape-time export of the live series, as the export settings select them.

    The bulk (one line per series, window and figure) goes into :class:`TextFamily` rows whose
    label text is rendered once per series and reused while the series lives.
    """

    def __init__(self, windows: Windows) -> None:
        self.windows = windows
        self._label_cache: dict[tuple[SeriesKey, int], tuple[str, list[str]]] = {}

    def describe(self) -> list[Metric]:
        return self._families(empty=True)

    def collect(self) -> Iterable[Metric]:
        return self._families(empty=False)

    def _families(self, *, empty: bool) -> list[Metric]:
        labels = [*_SERIES_LABELS, "window"]
        value = TextFamily(
            "llm_sidecar_window_score",
            "Rolling score over the window: a ratio (0-1) or a mean, by score and subject.",
            "gauge",
            labels,
        )
        lower = TextFamily(
            "llm_sidecar_window_score_lower_bound",
            "Lower confidence bound of the rolling score (Wilson or bootstrap for ratios, Student "
            "t for means).",
            "gauge",
            labels,
        )
        upper = TextFamily(
            "llm_sidecar_window_score_upper_bound",
            "Upper confidence bound of the rolling score (Wilson or bootstrap for ratios, Student "
            "t for means).",
            "gauge",
            labels,
        )
        samples = TextFamily(
            "llm_sidecar_window_samples",
            "Observations behind the rolling score in the window.",
            "gauge",
            labels,
        )
        weight = TextFamily(
            "llm_sidecar_window_weight",
            "Sum of observation weights in the window (for judged scores: events represented).",
            "gauge",
            labels,
        )
        disparity = GaugeMetricFamily(
            "llm_sidecar_window_segment_disparity",
            "Largest gap in a rate between allowed segments of one label (statistical parity "
            "difference).",
            labels=["score", "label", "window"],
        )
        level = GaugeMetricFamily(
            "llm_sidecar_window_confidence_level",
            "Two-sided confidence level of the exported bounds.",
        )
        series = GaugeMetricFamily("llm_sidecar_window_series", "Live rolling-window series.")
        limit = GaugeMetricFamily(
            "llm_sidecar_window_series_limit",
            "Most segment series kept before new ones fold into 'other'.",
        )
        folded = CounterMetricFamily(
            "llm_sidecar_window_observations_folded",
            "Observations added to the 'other' segment because the series limit was reached.",
        )
        values_folded = CounterMetricFamily(
            "llm_sidecar_window_label_values_folded",
            "Label values of observed events exported as 'other' because they are not allowed.",
            labels=["label"],
        )
        c_obs = TextFamily(
            "llm_sidecar_score_observations",
            "Observations of each score (cumulative, for PromQL across replicas).",
            "counter",
            _SERIES_LABELS,
        )
        c_weight = TextFamily(
            "llm_sidecar_score_weight",
            "Sum of observation weights of each score (cumulative).",
            "counter",
            _SERIES_LABELS,
        )
        c_value = TextFamily(
            "llm_sidecar_score_weighted_value",
            "Sum of weight times value of each score (cumulative); divide by the weight sum.",
            "counter",
            _SERIES_LABELS,
        )
        win = self.windows
        export = win.settings.export
        families: list[Metric] = [value, lower, upper]
        if export.everything or export.samples_scores:
            families.append(samples)
        if export.everything or export.window_weight:
            families.append(weight)
        families += [disparity, level, series, limit, folded, values_folded]
        if export.everything or export.cumulative_scores:
            families += [c_obs, c_weight, c_value]
        if empty:
            return families
        everything = export.everything
        with_samples = frozenset(export.samples_scores)
        with_weight = everything or export.window_weight
        rollup_only = frozenset(() if everything else export.rollup_only_scores)
        # The correction's agreement series follow its judged share (roll-up only by default).
        inputs_rolled = "adversarial_robustness_judged" in rollup_only
        cumulative = frozenset(export.cumulative_scores)
        snap = win.snapshot()
        names = win.names
        level.add_metric([], win.settings.confidence)
        series.add_metric([], len(snap))
        limit.add_metric([], win.settings.max_series)
        folded.add_metric([], win.folded_observations)
        for name, folder in win.folders.items():
            values_folded.add_metric([name], folder.folded)
        cache = self._label_cache
        fresh: dict[tuple[SeriesKey, int], tuple[str, list[str]]] = {}
        isnan = math.isnan
        # disparity groups: (score, dimension index, window index) -> value -> [n, sw, swx]
        groups: dict[tuple[str, int, int], dict[str, list[float]]] = {}
        # the window sums the corrected robustness reads: (score, subject, segment) -> sums
        parts: dict[SeriesKey, list[list[float]]] = {}
        for key, per_window, total in snap:
            score, subject, seg = key
            if score in _CORRECTION_SCORES:
                parts[key] = per_window
            kind = SCORES[score]
            rolled = seg == (ALL, ALL, ALL)
            exported = rolled or (
                score not in rollup_only
                and not (inputs_rolled and subject.startswith(ROBUSTNESS_DETECTOR_PREFIX))
            )
            if exported and (everything or score in cumulative):
                base = fresh[(key, -1)] = cache.get((key, -1)) or _labels(
                    _SERIES_LABELS, [score, subject, *seg]
                )
                c_obs.add(base[0], base[1], total[N])
                c_weight.add(base[0], base[1], total[SW])
                c_value.add(base[0], base[1], total[SWX])
            counted = everything or score in with_samples
            for w, sums in enumerate(per_window):
                if exported:
                    text, values = fresh[(key, w)] = cache.get((key, w)) or _labels(
                        labels, [score, subject, *seg, names[w]]
                    )
                    if counted:
                        samples.add(text, values, sums[N])
                    if with_weight:
                        weight.add(text, values, sums[SW])
                got = win.interval(kind, sums)
                if got is None:
                    continue
                v, lo, hi = got
                if exported:
                    value.add(text, values, v)
                    if not isnan(lo):
                        lower.add(text, values, lo)
                        upper.add(text, values, hi)
                if score in _DISPARITY and not rolled:
                    for d, label_value in enumerate(seg):
                        if label_value in (ALL, OTHER, NONE):
                            continue
                        g = groups.setdefault((score, d, w), {}).setdefault(
                            label_value, [0.0, 0.0, 0.0]
                        )
                        g[0] += sums[N]
                        g[1] += sums[SW]
                        g[2] += sums[SWX]
        corrected = "adversarial_robustness_corrected"
        if win.settings.robustness_correction.enabled:
            counted = everything or corrected in with_samples
            rolled_only = corrected in rollup_only
            for score, category, seg in parts:
                if score != "adversarial_robustness" or (rolled_only and seg != (ALL, ALL, ALL)):
                    continue
                found = [parts.get((*k, seg)) for k in _correction_parts(category).values()]
                for w in range(len(names)):
                    fixed = win.corrected(*(f[w] if f is not None else None for f in found))
                    if fixed is None:
                        continue
                    ckey = (corrected, category, seg)
                    text, values = fresh[(ckey, w)] = cache.get((ckey, w)) or _labels(
                        labels, [corrected, category, *seg, names[w]]
                    )
                    value.add(text, values, fixed[0])
                    lower.add(text, values, fixed[1])
                    upper.add(text, values, fixed[2])
                    if counted:
                        samples.add(text, values, fixed[3])
        self._label_cache = fresh  # series that ended leave the cache with their last scrape
        minimum = win.settings.disparity_min_samples
        for (score, d, w), by_value in sorted(groups.items()):
            rates = [swx / sw for n, sw, swx in by_value.values() if n >= minimum and sw > 0]
            if len(rates) >= 2:
                # A failure rate is 1 - pass rate: the gap is the same either way.
                disparity.add_metric(
                    [_DISPARITY[score], DIMENSIONS[d], names[w]], max(rates) - min(rates)
                )
        return families


def _labels(names: Sequence[str], values: list[str]) -> tuple[str, list[str]]:
    return label_text(names, values), values
