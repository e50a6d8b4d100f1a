"""The exporter: a Prometheus collector that renders the window series at scrape time.

Values, bounds and the derived figures (F1, the judge-corrected robustness, segment
disparity) are computed only here, from a snapshot of the window sums, for the series and
figures the export settings (``windows.export``) select.

Cumulative counters of the same sums (``llm_sidecar_score_*_total``) are exported too, so PromQL
computes the fleet's figures across replicas (:mod:`sidecar.windows.fleet`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Final

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from ..errors import ConfigError
from ..metrics import NONE, OTHER, TextFamily, label_text
from ..settings import DIMENSIONS, ROBUSTNESS_DETECTOR_PREFIX, ExportSettings
from .fleet import COUNTERS, WEIGHTED
from .ring import ALL, SW, SWX, N, SeriesKey
from .scores import SCORES, _correction_parts

if TYPE_CHECKING:
    from .core import Windows


def check_export(export: ExportSettings) -> None:
    """Refuse export settings that name scores that do not exist."""
    named = {*export.samples_scores, *export.rollup_only_scores, *export.cumulative_scores}
    if named - set(SCORES):
        raise ConfigError(
            f"windows.export names unknown scores {sorted(named - set(SCORES))}; "
            f"known: {', '.join(SCORES)}"
        )


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
        self._first_seen: dict[SeriesKey, float] = {}

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
        counters = [
            (TextFamily(f"llm_sidecar_score_{name}", doc, "counter", _SERIES_LABELS), i)
            for name, i, doc in COUNTERS
        ]
        win = self.windows
        export = win.settings.export
        families: list[Metric] = [value, lower, upper]
        if export.everything or export.samples_scores:
            families.append(samples)
        if export.everything or export.window_weight:
            families.append(weight)
        families += [disparity, level, series, limit, folded, values_folded]
        if export.everything or export.cumulative_scores:
            families += [family for family, _ in counters]
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
        seen, seen_now = self._first_seen, dict[SeriesKey, float]()
        now, hold = win.clock(), export.new_counter_hold
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
                # A new series' counters read zero for its first new_counter_hold seconds, so
                # that every scraper sees the zero it starts from and increase() over the
                # fleet counts the first observations too (Prometheus takes a series' first
                # sample as its starting point, not zero).
                born = seen_now[key] = seen.get(key, now)
                young = now - born < hold
                for family, i in counters[: 6 if score in WEIGHTED else 3]:
                    family.add(base[0], base[1], 0.0 if young else total[i])
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
                got = win.figures.interval(kind, sums)
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
                    fixed = win.figures.corrected(*(f[w] if f is not None else None for f in found))
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
        self._first_seen = seen_now
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
