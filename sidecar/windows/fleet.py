"""Fleet-wide scores: the counters every process exports, and the recording rules that read them.

A process's rolling windows see only the events of its own partitions, so with N processes each
interval is about √N times wider than the fleet's, and a restart or a rebalance empties them.
What adds up across processes is the six sums (:mod:`sidecar.windows.ring`): each process
exports them as cumulative counters (``llm_sidecar_score_*_total``), and Prometheus computes
the fleet's window ``W`` as ``sum(increase(...[W]))`` over processes (a restart is a counter
reset, which ``increase`` absorbs; a rebalance moves events between processes, not out of the
sum). The recording rules made here turn those sums into value, bounds and sample count with
the same formulas :class:`~sidecar.windows.scores.Figures` applies to one process's window:
Wilson on the effective sample size for rates, the Student t interval for weighted means,
the Jaccard-mapped Wilson interval for detector F1, and the judge-corrected robustness.

The rule text is generated (:func:`rule_groups`), shipped in ``helm/llm-sidecar/files/alerts.yaml``
between markers (``tools/fleet_rules.py`` rewrites it), and a test keeps the two equal.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import NormalDist
from typing import Final

from ..metrics import NONE, OTHER
from ..settings import DIMENSIONS
from .ring import SW, SW2, SW2X, SW2X2, SWX, N
from .scores import F1, MEAN, PROPORTION, RATIO_MIN_PROBES, SCORES, t_quantile

FLEET_WINDOWS: Final = ("5m", "1h")
"""The window lengths the shipped alerts and dashboards read."""

LABELS: Final = "score, subject, route, model, tenant"
"""What a fleet series keeps: everything but the process (job, instance, pod)."""

COUNTERS: Final[tuple[tuple[str, int, str], ...]] = (
    ("observations", N, "Observations of each score (cumulative, for PromQL across replicas)."),
    ("weight", SW, "Sum of observation weights of each score (cumulative)."),
    (
        "weighted_value",
        SWX,
        "Sum of weight times value of each score (cumulative); divide by the weight sum.",
    ),
    ("squared_weight", SW2, "Sum of squared weights of each weighted score (cumulative)."),
    (
        "squared_weight_value",
        SW2X,
        "Sum of squared weight times value of each weighted score (cumulative).",
    ),
    (
        "squared_weight_value_squared",
        SW2X2,
        "Sum of squared weight times squared value of each weighted score (cumulative).",
    ),
)
"""(name, sum index, help) of the ``llm_sidecar_score_<name>_total`` counters."""

WEIGHTED: Final = frozenset(
    {
        "judge_score",
        "leakage_risk",
        "adversarial_robustness_judged",
        "detector_precision",
        "detector_recall",
        "detector_f1",
    }
)
"""Scores whose observations carry weights other than 1 (the sampler's inverse probability, an
attack's rank). Only these export the squared-weight sums: for the others ``Σw² = Σw = n`` and
``Σw²x = Σw²x² = Σwx``, so three counters say it all."""


def counter_sums(score: str) -> tuple[tuple[str, int, str], ...]:
    """The counters a score exports: three for unweighted rates, six for weighted scores."""
    return COUNTERS if score in WEIGHTED else COUNTERS[:3]


_CORRECTED = "adversarial_robustness_corrected"


def _names(kind: int) -> str:
    return "|".join(s for s, k in SCORES.items() if k == kind)


def _sel(metric: str, window: str, score: str) -> str:
    """A selector of one recorded fleet series; ``score`` is a regular expression."""
    return f'llm_sidecar:fleet_{metric}{{window="{window}", score=~"{score}"}}'


def _aligned(metric: str, window: str, score: str) -> str:
    """A correction input relabelled to the corrected score's labels (subject: the category)."""
    subject = ', subject=~"robustness:.+"' if score.startswith("detector_") else ""
    inner = f'llm_sidecar:fleet_{metric}{{window="{window}", score="{score}"{subject}}}'
    return (
        f'label_replace(label_replace({inner}, "subject", "$1", "subject", "robustness:(.+)"), '
        f'"score", "{_CORRECTED}", "score", ".*")'
    )


def _wilson(p: str, n: str, z: float) -> tuple[str, str]:
    """PromQL of :func:`~sidecar.windows.scores.wilson_interval` for vectors ``p`` and ``n``."""
    z2 = _num(z * z)
    centre = f"(({p}) + {z2} / (2 * ({n}))) / (1 + {z2} / ({n}))"
    half = (
        f"{_num(z)} / (1 + {z2} / ({n})) * sqrt(clamp_min(({p}) * (1 - ({p})) / ({n}) "
        f"+ {z2} / (4 * ({n}) ^ 2), 0))"
    )
    return f"clamp_min({centre} - {half}, 0)", f"clamp_max({centre} + {half}, 1)"


def _num(x: float) -> str:
    return repr(float(x))


def _rule(record: str, expr: str, window: str) -> dict[str, object]:
    return {"record": f"llm_sidecar:fleet_{record}", "expr": expr, "labels": {"window": window}}


def _t_quantile(df: str, q: float) -> str:
    """PromQL of :meth:`Figures.t_value`: the floor of ``df`` in a table below 30, else the
    Cornish-Fisher expansion of :func:`t_quantile`."""
    table = [t_quantile(q, k) for k in range(1, 30)]
    parts = [f"({df} < 2) * 0 + {_num(table[0])}"]
    parts += [f"({df} >= {k} < {k + 1}) * 0 + {_num(table[k - 1])}" for k in range(2, 30)]
    z = NormalDist().inv_cdf(q)
    z2 = z * z
    g = (
        (z2 + 1) * z / 4,
        ((5 * z2 + 16) * z2 + 3) * z / 96,
        (((3 * z2 + 19) * z2 + 17) * z2 - 15) * z / 384,
        ((((79 * z2 + 776) * z2 + 1482) * z2 - 1920) * z2 - 945) * z / 92160,
    )
    big = f"({df} >= 30)"
    parts.append(
        f"{_num(z)} + " + " + ".join(f"{_num(c)} / {big} ^ {i + 1}" for i, c in enumerate(g))
    )
    return "\n  or ".join(f"({p})" for p in parts)


def window_rules(
    window: str,
    confidence: float = 0.95,
    min_judged: int = 20,
    disparity_min_samples: int = 20,
) -> list[dict[str, object]]:
    """The recording rules of one window length, in evaluation order (later rules read earlier
    ones of the same evaluation)."""
    w = window
    q = 1 - (1 - confidence) / 2
    z = NormalDist().inv_cdf(q)
    z_box = NormalDist().inv_cdf(1 - (1 - confidence) / 6)
    rates, means, f1 = _names(PROPORTION), _names(MEAN), _names(F1)
    plain = rates + "|" + means

    def s(metric: str, score: str) -> str:
        return _sel(metric, w, score)

    rules = [
        _rule(name, f"sum by ({LABELS}) (increase(llm_sidecar_score_{name}_total[{w}]))", w)
        for name, _, _ in COUNTERS
    ]
    obs, weight = s("observations", ".+"), s("weight", ".+")
    rules.append(
        _rule(
            "effective_samples",
            f"{weight} ^ 2 / ({s('squared_weight', '.+')} > 0)\nor\n{weight}",
            w,
        )
    )
    # The clamped share of rates and F1 (a mean's value is its score, unclamped).
    ratios = rates + "|" + f1
    rules.append(
        _rule(
            "share",
            f"clamp({s('weighted_value', ratios)} / ({s('weight', ratios)} > 0), 0, 1)"
            f" and {s('observations', ratios)} > 0",
            w,
        )
    )
    rules += _correction_inputs(w, min_judged)
    rules += _disparity_rules(w, disparity_min_samples)
    c_value, c_samples, c_lower, c_upper = _correction_figures(w, z, z_box)
    rules.append(
        _rule(
            "score",
            f"{s('weighted_value', plain)} / ({s('weight', plain)} > 0)"
            f" and {s('observations', plain)} > 0"
            f"\nor\n2 * {s('weighted_value', f1)}"
            f" / (({s('weight', f1)} + {s('weighted_value', f1)}) > 0)"
            f" and {s('observations', f1)} > 0"
            f"\nor\n{c_value}",
            w,
        )
    )
    rules.append(_rule("samples", f"{obs} > 0\nor\n{c_samples}", w))
    # Means: Student t on the ratio estimator's variance (n >= 2).
    rules.append(
        _rule(
            "degrees_of_freedom",
            f"clamp_min({s('effective_samples', means)} - 1, 1) and {s('observations', means)} >= 2",
            w,
        )
    )
    rules.append(_rule("t_quantile", _t_quantile(s("degrees_of_freedom", means), q), w))
    m = s("score", means)
    var = (
        f"({s('squared_weight_value_squared', means)} - 2 * {m} * "
        f"{s('squared_weight_value', means)} + {m} ^ 2 * {s('squared_weight', means)})"
        f" / {s('weight', means)} ^ 2"
        f" * {s('observations', means)} / ({s('observations', means)} - 1)"
    )
    rules.append(
        _rule(
            "standard_error",
            f"sqrt(clamp_min({var}, 0)) and {s('observations', means)} >= 2",
            w,
        )
    )
    tse = f"{s('t_quantile', means)} * {s('standard_error', means)}"
    # Rates: Wilson on the effective sample size; F1: the Jaccard index's, mapped 2J / (1 + J).
    lo, hi = _wilson(s("share", rates), s("effective_samples", rates), z)
    jlo, jhi = _wilson(s("share", f1), s("effective_samples", f1), z)
    rules.append(
        _rule(
            "score_lower_bound",
            f"{lo}\nor\n2 * ({jlo}) / (1 + ({jlo}))\nor\n{m} - {tse}\nor\n{c_lower}",
            w,
        )
    )
    rules.append(
        _rule(
            "score_upper_bound",
            f"{hi}\nor\n2 * ({jhi}) / (1 + ({jhi}))\nor\n{m} + {tse}\nor\n{c_upper}",
            w,
        )
    )
    return rules


def _disparity_rules(w: str, minimum: int) -> list[dict[str, object]]:
    """The segment disparity of the export (``llm_sidecar_window_segment_disparity``) for the
    fleet: per label, the rate of each allowed value over every segment that carries it (with
    at least ``minimum`` observations), then the largest minus the smallest."""
    parts = []
    for dim in DIMENSIONS:
        sel = f'{{window="{w}", score=~"{"|".join(_DISPARITY)}", {dim}!~"[*]|{OTHER}|{NONE}"}}'

        def total(metric: str, sel: str = sel, dim: str = dim) -> str:
            return f"sum by (score, {dim}) (llm_sidecar:fleet_{metric}{sel})"

        rate = (
            f"{total('weighted_value')} / ({total('weight')} > 0)"
            f" and {total('observations')} >= {minimum}"
        )
        parts.append(
            f'label_replace(label_replace({rate}, "value", "$1", "{dim}", "(.*)"), '
            f'"label", "{dim}", "score", ".*")'
        )
    rate = "\nor\n".join(parts)
    # A failure rate is 1 - pass rate: the gap is the same, under the failure rate's name.
    relabelled = (
        f"label_replace(\n  sum by (score, label, value) (\n  {rate}\n  ),\n"
        f'  "score", "event_failure_rate", "score", "event_pass_rate"\n)'
    )
    rates = f'llm_sidecar:fleet_segment_rate{{window="{w}"}}'
    return [
        _rule("segment_rate", relabelled, w),
        _rule(
            "segment_disparity",
            f"max by (score, label) ({rates}) - min by (score, label) ({rates})"
            f"\nand count by (score, label) ({rates}) >= 2",
            w,
        ),
    ]


_DISPARITY: Final = ("event_pass_rate", "refusal_rate")

_RAW, _JUDGED = "adversarial_robustness", "adversarial_robustness_judged"
_PREC, _REC = "detector_precision", "detector_recall"
_INPUTS: Final = {
    # name: (fleet series, score) of the corrected robustness's inputs, on its labels
    "share": ("share", _RAW),
    "share_samples": ("effective_samples", _RAW),
    "judged": ("observations", _JUDGED),
    "judged_refused": ("weighted_value", _JUDGED),
    "judged_squared_weight": ("squared_weight", _JUDGED),
    "judged_squared_weight_refused": ("squared_weight_value", _JUDGED),
    "cheap": ("observations", _PREC),
    "cheap_weight": ("weight", _PREC),
    "cheap_agreed": ("weighted_value", _PREC),
    "cheap_squared_weight": ("squared_weight", _PREC),
    "cheap_squared_weight_agreed": ("squared_weight_value", _PREC),
    "precision": ("share", _PREC),
    "precision_samples": ("effective_samples", _PREC),
    "recall": ("share", _REC),
    "recall_samples": ("effective_samples", _REC),
}


def _own(metric: str, w: str) -> str:
    return f'llm_sidecar:fleet_correction_{metric}{{window="{w}"}}'


def _correction_inputs(w: str, min_judged: int) -> list[dict[str, object]]:
    """The corrected robustness's inputs on one label set (subject: the attack category), its
    ratio ``P / R`` (as ``A / B``, see :meth:`Figures.corrected`) and that ratio's variance."""
    rules = [
        _rule(f"correction_{name}", _aligned(metric, w, score), w)
        for name, (metric, score) in _INPUTS.items()
    ]

    def o(metric: str) -> str:
        return _own(metric, w)

    rules.append(
        _rule(
            "correction_ratio",
            f"{o('judged_refused')} / ({o('cheap_weight')} > 0)"
            f"\nand {o('judged')} >= {min_judged}"
            f"\nand {o('cheap')} > 0"
            # The cheap-refused probes are a subset of the judged ones (see Figures.corrected).
            f"\nand {o('cheap')} <= {o('judged')} * (1 + 1e-6)"
            f"\nand {o('cheap_agreed')} <= {o('judged_refused')} * (1 + 1e-6) + 1e-9",
            w,
        )
    )
    ratio, jn = o("ratio"), o("judged")
    spread = (
        f"clamp_min({o('judged_squared_weight_refused')} - 2 * {ratio} * "
        f"{o('cheap_squared_weight_agreed')} + {ratio} ^ 2 * {o('cheap_squared_weight')}, 0)"
        f" + {o('judged_squared_weight')} / {jn} * (1 + {ratio} ^ 2)"
    )
    rules.append(
        _rule(
            "correction_ratio_variance",
            f"({spread}) / {o('cheap_weight')} ^ 2 * {jn} / clamp_min({jn} - 1, 1)"
            f"\nand {o('cheap')} >= {RATIO_MIN_PROBES}",
            w,
        )
    )
    return rules


def _correction_figures(w: str, z: float, z_box: float) -> tuple[str, str, str, str]:
    """PromQL of the corrected robustness's value, judged probes, lower and upper bound (its
    inputs carry ``score="adversarial_robustness_corrected"`` already)."""

    def o(metric: str) -> str:
        return _own(metric, w)

    share, n_raw, ratio, var_r = o("share"), o("share_samples"), o("ratio"), o("ratio_variance")
    value = f"clamp({share} * {ratio}, 0, 1)"
    v = f'llm_sidecar:fleet_score{{window="{w}", score="{_CORRECTED}"}}'
    # The delta method on the log scale, with at least RATIO_MIN_PROBES cheap-refused probes.
    var_q = f"({share} * (1 - {share}) / {n_raw})"
    centre = f"({share} * {ratio})"
    log_spread = f"{_num(z)} * sqrt({var_q} / {share} ^ 2 + {var_r} / {ratio} ^ 2)"
    plain = f"{_num(z)} * sqrt({ratio} ^ 2 * {var_q} + {share} ^ 2 * {var_r})"
    delta_lo = (
        f"clamp_max(({centre} > 0) * exp(-{log_spread}), 1)\nor\n({centre} <= 0) * 0 and {var_r}"
    )
    delta_hi = f"clamp_max(({centre} > 0) * exp({log_spread}), 1)\nor\nclamp_max({plain}, 1) and {centre} <= 0"
    # Fewer cheap-refused probes: the Bonferroni box of three Wilson intervals at 1 - alpha/3.
    few = f"{o('cheap')} < {RATIO_MIN_PROBES}"
    q_lo, q_hi = _wilson(share, n_raw, z_box)
    p_lo, p_hi = _wilson(o("precision"), o("precision_samples"), z_box)
    r_lo, r_hi = _wilson(o("recall"), o("recall_samples"), z_box)
    r_lo = f"({r_lo} or {share} * 0)"  # no recall series: R in [0, 1]
    r_hi = f"({r_hi} or {share} * 0 + 1)"
    box_lo = f"clamp_max(({q_lo}) * ({p_lo}) / ({r_hi} > 0), 1) or {share} * 0"
    box_hi = f"clamp_max(({q_hi}) * ({p_hi}) / ({r_lo} > 0), 1) or {share} * 0 + 1"
    lower = f"{delta_lo}\nor\n(({box_lo}) < {v} or {v}) and {few}"
    upper = f"{delta_hi}\nor\n(({box_hi}) > {v} or {v}) and {few}"
    return value, f"{o('judged')} and {v}", lower, upper


def rule_groups(
    windows: Sequence[str] = FLEET_WINDOWS,
    confidence: float = 0.95,
    min_judged: int = 20,
    disparity_min_samples: int = 20,
) -> list[dict[str, object]]:
    """One rule group per window length (a group's rules run in order, so each reads the
    figures the ones before it recorded in the same evaluation)."""
    if not 0.5 < confidence < 1 or math.isnan(confidence):
        raise ValueError(f"confidence must be in (0.5, 1), got {confidence}")
    return [
        {
            "name": f"llm-sidecar.fleet.{w}",
            "rules": window_rules(w, confidence, min_judged, disparity_min_samples),
        }
        for w in windows
    ]


def render(groups: Sequence[dict[str, object]]) -> str:
    """The groups as promtool rule-file YAML, expressions as literal blocks (readable diffs)."""
    out: list[str] = []
    for g in groups:
        out.append(f"  - name: {g['name']}\n    rules:\n")
        rules = g["rules"]
        assert isinstance(rules, list)
        for r in rules:
            expr = str(r["expr"]).replace("\n", "\n          ")
            labels = r["labels"]
            out.append(
                f"      - record: {r['record']}\n"
                f"        expr: |\n          {expr}\n"
                f"        labels:\n          window: {labels['window']}\n"
            )
    return "".join(out)


__all__ = [
    "COUNTERS",
    "FLEET_WINDOWS",
    "LABELS",
    "WEIGHTED",
    "counter_sums",
    "render",
    "rule_groups",
    "window_rules",
]
