"""``replay --report``: one self-contained HTML file that people read instead of a metrics page.

The figures come from the same :class:`~sidecar.windows.Windows` arithmetic the live exporter
uses (one window that never rolls, so its totals are the whole file): pass rates with Wilson
intervals, means with Student t intervals, robustness per attack category, leakage risk,
judged scores with their sampling weights, detector agreement. What the windows do not keep is
kept here, bounded: a histogram sample of every numeric rule value and judge score (a uniform
reservoir of at most ``max_values`` values per series) and the ``worst`` failures of every rule.

What the file shows of an event: its id, and what the rule said about it (value and detail;
checks write details that name what they found, never the text or a secret's value). It never
shows prompt, response, context or system prompt text. Charts are inline SVG and the page has
no script and no external reference, so it opens offline and renders the same everywhere.
"""

from __future__ import annotations

import heapq
import html
import math
import random
from array import array
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Final

from . import __version__
from .pipeline import Outcome, Verdict
from .rules import CompiledRule
from .settings import WindowSettings
from .windows import ALL, Windows
from .windows.scores import ROBUSTNESS_SUBJECTS

__all__ = ["Figure", "ReportBuilder", "histogram"]

_ROLLUP: Final = (ALL, ALL, ALL)
_DETAIL_CHARS: Final = 160
_BINS: Final = 20
DASH: Final = "\N{EN DASH}"

_SUMMARY_SCORES: Final = (
    ("event_pass_rate", "Events that passed every rule"),
    ("refusal_rate", "Refusals (responses)"),
    ("unsuccessful_request_rate", "Unsuccessful requests (qa/rag refused or rejected)"),
    ("rgb_noise_robustness_accuracy", "RGB noise robustness (accuracy)"),
    ("rgb_negative_rejection_rate", "RGB negative rejection"),
    ("rgb_error_detection_rate", "RGB error detection"),
    ("rgb_error_correction_rate", "RGB error correction"),
)


@dataclass(frozen=True, slots=True)
class Figure:
    """One score over the whole file: value, bounds (NaN when undefined) and sample count."""

    value: float
    lower: float
    upper: float
    samples: float


class _Reservoir:
    """At most ``size`` values, a uniform sample of all offered (Vitter's algorithm R)."""

    __slots__ = ("count", "rng", "size", "values")

    def __init__(self, size: int, seed: int) -> None:
        self.size = size
        self.count = 0
        self.values = array("d")
        self.rng = random.Random(seed)

    def add(self, x: float) -> None:
        self.count += 1
        if len(self.values) < self.size:
            self.values.append(x)
            return
        j = self.rng.randrange(self.count)
        if j < self.size:
            self.values[j] = x


@dataclass(order=True, slots=True)
class _Worst:
    severity: float
    order: int  # negated arrival order: among equals the earliest event is kept
    event_id: str = field(compare=False)
    value: bool | float | None = field(compare=False)
    detail: str | None = field(compare=False)


class ReportBuilder:
    """Collects the figures of a replay batch by batch; :meth:`write` renders the page."""

    def __init__(
        self,
        rules: Sequence[CompiledRule],
        version: str,
        settings: WindowSettings | None = None,
        *,
        worst: int = 10,
        max_values: int = 100_000,
    ) -> None:
        base = settings or WindowSettings()
        # One window, no segments, a clock that never moves: the totals are the whole file.
        self.windows = Windows(
            base.model_copy(update={"enabled": True, "segment_labels": [], "windows": ["1d"]}),
            clock=lambda: 0.0,
        )
        self.windows.bind_rules(rules, version)
        self.rules = list(rules)
        self.version = version
        self.settings = base
        self.worst_count = worst
        self.max_values = max_values
        self.events = 0
        self.dead = 0
        self.judged = 0
        self.versions: set[str] = set()
        self._values: dict[str, _Reservoir] = {}
        self._judge_values: dict[str, _Reservoir] = {}
        self._worst: dict[str, list[_Worst]] = {}
        self._seq = 0
        self._by_id = {r.id: r for r in rules}

    # -- feeding -------------------------------------------------------------------------

    def add(self, verdicts: Sequence[Verdict], dead: int = 0) -> None:
        """One batch of verdicts (after judging, if any) and its count of undecodable lines."""
        self.dead += dead
        if not verdicts:
            return
        self.events += len(verdicts)
        self.windows.observe_verdicts(verdicts)
        for v in verdicts:
            self._seq += 1
            self.versions.add(v.rules_version)
            for rid, o in v.checks.items():
                if isinstance(o.value, float | int) and not isinstance(o.value, bool):
                    self._reservoir(self._values, rid).add(float(o.value))
                if o.passed is False:
                    self._offer_worst(rid, v.event.id, o)

    def observe_scores(self, verdict: Verdict, scores: Mapping[str, float], weight: float) -> None:
        """The judge's ``on_scores``: weighted means go to the windows, values to histograms."""
        self.judged += 1
        self.windows.observe_scores(verdict, scores, weight)
        for metric, x in scores.items():
            if math.isfinite(x):
                self._reservoir(self._judge_values, metric).add(x)

    def _reservoir(self, table: dict[str, _Reservoir], key: str) -> _Reservoir:
        r = table.get(key)
        if r is None:
            if len(table) >= 512:  # rule ids and metric names are bounded sets; be safe anyway
                r = _Reservoir(0, 0)
            else:
                r = table[key] = _Reservoir(self.max_values, len(table) + 1)
        return r

    def _offer_worst(self, rid: str, event_id: str, o: Outcome) -> None:
        heap = self._worst.get(rid)
        if heap is None:
            if len(self._worst) >= 512:
                return
            heap = self._worst[rid] = []
        item = _Worst(self._severity(rid, o.value), -self._seq, event_id, o.value, o.detail)
        if len(heap) < self.worst_count:
            heapq.heappush(heap, item)
        elif item > heap[0]:
            heapq.heapreplace(heap, item)

    def _severity(self, rid: str, value: bool | float | None) -> float:
        """How far past its bound a failed score is; every failed boolean ties at 0."""
        rule = self._by_id.get(rid)
        if rule is None or value is None or isinstance(value, bool):
            return 0.0
        x = float(value)
        gap = 0.0
        if rule.lo is not None and x < rule.lo:
            gap = rule.lo - x
        if rule.hi is not None and x > rule.hi:
            gap = max(gap, x - rule.hi)
        return gap

    # -- reading -------------------------------------------------------------------------

    def figure(self, score: str, subject: str = "") -> Figure | None:
        """A score over everything added so far (None when nothing fed it)."""
        got = self.windows.read(score, subject, _ROLLUP)
        if got is None:
            return None
        return Figure(*got)

    def worst(self, rule_id: str) -> list[tuple[str, bool | float | None, str | None]]:
        """The worst failures of a rule, worst first: (event id, value, detail)."""
        items = sorted(self._worst.get(rule_id, ()), reverse=True)
        return [(w.event_id, w.value, w.detail) for w in items]

    def judge_metrics(self) -> list[str]:
        return sorted(subject for score, subject, seg in self._keys() if score == "judge_score")

    def _keys(self) -> list[tuple[str, str, tuple[str, str, str]]]:
        return [key for key, _, _ in self.windows.snapshot()]

    # -- rendering -----------------------------------------------------------------------

    def write(self, path: Path, *, source: str) -> None:
        path.write_text(self.render(source=source), encoding="utf-8")

    def render(self, *, source: str) -> str:
        now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
        level = f"{self.settings.confidence:.0%}"
        parts = [
            _HEAD.format(title=html.escape(f"llm-sidecar report: {Path(source).name}")),
            "<header>",
            f"<h1>llm-sidecar report <span class='muted'>{_e(Path(source).name)}</span></h1>",
            "<dl class='facts'>",
            _fact("Rules version", ", ".join(sorted(self.versions)) or self.version, "version"),
            _fact("Events checked", str(self.events), "events"),
            _fact("Lines skipped (not events)", str(self.dead), "dead"),
            _fact("Events judged", str(self.judged), "judged"),
            _fact("Rules", str(len(self.rules)), "rules"),
            _fact("Intervals", f"{level}: {self._method()}", "intervals"),
            _fact("Generated", f"{now} by llm-sidecar {__version__}", "generated"),
            "</dl></header><main>",
            self._summary_section(),
            self._rules_section(),
            self._distribution_section(),
            self._attack_section(),
            self._judge_section(),
            self._detector_section(),
            self._worst_section(),
            "</main></body></html>\n",
        ]
        return "\n".join(parts)

    def _method(self) -> str:
        s = self.settings
        if s.intervals == "bootstrap":
            return (
                f"BCa bootstrap for rates up to {s.bootstrap_max_samples} outcomes, Wilson "
                "above; Student t for means"
            )
        return "Wilson for rates, Student t for means"

    def _summary_section(self) -> str:
        rows = []
        for score, label in _SUMMARY_SCORES:
            f = self.figure(score)
            if f is not None:
                rows.append((score, label, f))
        out = ["<section id='summary'><h2>Overview</h2>"]
        # Only the event pass rate is "higher is better"; refusals are neither good nor bad.
        out.append(
            _bars(
                [(label, f) for _, label, f in rows],
                percent=True,
                graded={"Events that passed every rule"},
            )
        )
        out.append(
            _table(
                ["Score", "Value", "Interval", "Samples"],
                [_row(score, [label], f, percent=True) for score, label, f in rows],
            )
        )
        out.append("</section>")
        return "\n".join(out)

    def _rules_section(self) -> str:
        rows = []
        for r in self.rules:
            f = self.figure("rule_pass_rate", r.id)
            rows.append((r, f))
        # Worst pass rate first: what needs looking at comes first.
        rows.sort(key=lambda rf: (rf[1].value if rf[1] else 2.0, rf[0].id))
        out = [
            "<section id='rules'><h2>Pass rate per rule</h2>",
            "<p class='muted'>Share of events a rule passed, among those it ran on "
            "(errors, timeouts and events its <code>when</code> filter skipped do not count).</p>",
        ]
        shown = [(r.id, f) for r, f in rows if f is not None]
        out.append(_bars(shown, percent=True))
        body = []
        for r, f in rows:
            cells = [r.id, r.check_name, r.field, r.severity, _expectation(r)]
            if f is None:
                body.append(
                    f"<tr data-rule='{_e(r.id)}' data-samples='0'>"
                    + "".join(f"<td>{_e(c)}</td>" for c in cells)
                    + "<td colspan='3' class='muted'>did not run</td></tr>"
                )
            else:
                body.append(_row(r.id, cells, f, percent=True, attr="data-rule"))
        out.append(
            _table(
                [
                    "Rule",
                    "Check",
                    "Field",
                    "Severity",
                    "Expects",
                    "Pass rate",
                    "Interval",
                    "Samples",
                ],
                body,
            )
        )
        out.append("</section>")
        return "\n".join(out)

    def _distribution_section(self) -> str:
        out = [
            "<section id='distributions'><h2>Score distributions</h2>",
            "<p class='muted'>Values of the rules whose checks give a score"
            + (f" (a uniform sample of {self.max_values:,} when a rule saw more)")
            + ".</p>",
        ]
        any_shown = False
        for r in self.rules:
            res = self._values.get(r.id)
            if res is None or not res.values:
                continue
            any_shown = True
            bound = r.hi if r.hi is not None else r.lo
            out.append(_histogram_block(r.id, res, _expectation(r), "rule", bound))
        if not any_shown:
            out.append("<p class='empty'>No rule in this rule set gives a score.</p>")
        out.append("</section>")
        return "\n".join(out)

    def _attack_section(self) -> str:
        out = [
            "<section id='attacks'><h2>Adversarial robustness and leakage</h2>",
            "<p class='muted'>Robustness: share of red-team probes (events with an "
            "<code>attack</code>) that were refused, per category, and of the attack attempts "
            "<code>attack_attempt</code> found in other events (<code>organic:</code> and the "
            "category it inferred). Leakage risk: the rank-weighted mean similarity of the "
            "system prompt found in responses to probes.</p>",
        ]
        rob = [
            (c, f)
            for c in ROBUSTNESS_SUBJECTS
            if (f := self.figure("adversarial_robustness", c)) is not None
        ]
        leak = self.figure("leakage_risk")
        leak_rows = [("all", "all probes", leak)] if leak is not None else []
        leak_rows += [
            (c, c, f)
            for c in ROBUSTNESS_SUBJECTS
            if (f := self.figure("leakage_risk", c)) is not None
        ]
        if not rob and leak is None:
            out.append(
                "<p class='empty'>No attack probes with a refusal or leakage rule in this file."
                "</p></section>"
            )
            return "\n".join(out)
        if rob:
            out.append("<h3>Robustness per attack category</h3>")
            out.append(_bars(rob, percent=True))
            out.append(
                _table(
                    ["Category", "Refused", "Interval", "Probes"],
                    [_row(c, [c], f, percent=True, attr="data-category") for c, f in rob],
                    table_id="robustness",
                )
            )
            fixed = [
                (c, f)
                for c, _ in rob
                if (f := self.figure("adversarial_robustness_corrected", c)) is not None
            ]
            if fixed:
                out.append(
                    "<p class='muted'>Corrected by the judge: the share refused times P / R, "
                    "the precision and recall of the refusal rule against the judge on the "
                    "category's judged probes; only categories with at least "
                    f"{self.settings.robustness_correction.min_judged} judged probes. Probes: "
                    "those judged.</p>"
                )
                out.append(
                    _table(
                        ["Category", "Refused (corrected)", "Interval", "Judged probes"],
                        [_row(c, [c], f, percent=True, attr="data-corrected") for c, f in fixed],
                        table_id="robustness-corrected",
                    )
                )
        if leak_rows:
            out.append("<h3>Leakage risk per attack category</h3>")
            out.append(_bars([(label, f) for _, label, f in leak_rows], percent=False))
            out.append(
                _table(
                    ["Probes", "Risk", "Interval", "Count"],
                    [
                        _row(key, [label], f, percent=False, attr="data-scope")
                        for key, label, f in leak_rows
                    ],
                    table_id="leakage",
                )
            )
        out.append("</section>")
        return "\n".join(out)

    def _judge_section(self) -> str:
        out = ["<section id='judge'><h2>Judge scores</h2>"]
        metrics = self.judge_metrics()
        if not metrics:
            out.append(
                "<p class='empty'>No judged events (replay with <code>--judge</code> to score "
                "a sample with the configured LLM judge).</p></section>"
            )
            return "\n".join(out)
        out.append(
            "<p class='muted'>Means weighted by each event's inverse sampling probability "
            "(events represented, not events judged); histograms show the judged values.</p>"
        )
        figs = [(m, f) for m in metrics if (f := self.figure("judge_score", m)) is not None]
        out.append(_bars(figs, percent=False))
        out.append(
            _table(
                ["Metric", "Mean", "Interval", "Judged"],
                [_row(m, [m], f, percent=False, attr="data-metric") for m, f in figs],
                table_id="judge-scores",
            )
        )
        for m in metrics:
            res = self._judge_values.get(m)
            if res is not None and res.values:
                out.append(_histogram_block(m, res, "", "metric"))
        out.append("</section>")
        return "\n".join(out)

    def _detector_section(self) -> str:
        out = ["<section id='detectors'><h2>Detector agreement</h2>"]
        rows: list[tuple[str, str, Figure]] = []
        for d in self.settings.detectors:
            for score, label in (
                ("detector_precision", "precision"),
                ("detector_recall", "recall"),
                ("detector_f1", "F1"),
            ):
                f = self.figure(score, d.name)
                if f is not None:
                    rows.append((d.name, label, f))
        if not rows:
            out.append(
                "<p class='empty'>No event was scored by both a cheap detector and the judge."
                "</p></section>"
            )
            return "\n".join(out)
        out.append(
            "<p class='muted'>The cheap check against the judge as reference, on the events "
            "both scored.</p>"
        )
        out.append(_bars([(f"{n} {label}", f) for n, label, f in rows], percent=True))
        body = [
            _row(f"{n}:{label}", [n, label], f, percent=True, attr="data-detector")
            for n, label, f in rows
        ]
        out.append(
            _table(
                ["Detector", "Measure", "Value", "Interval", "Samples"],
                body,
                table_id="detector-table",
            )
        )
        out.append("</section>")
        return "\n".join(out)

    def _worst_section(self) -> str:
        out = [
            "<section id='worst'><h2>Worst events per rule</h2>",
            f"<p class='muted'>Up to {self.worst_count} failures per rule: scores furthest past "
            "their bound first, then the earliest. Event ids and what the rule reported only.</p>",
        ]
        any_shown = False
        for r in self.rules:
            worst = self.worst(r.id)
            if not worst:
                continue
            any_shown = True
            out.append(f"<h3>{_e(r.id)} <span class='muted'>{_e(_expectation(r))}</span></h3>")
            body = [
                f"<tr data-worst='{_e(r.id)}'><td class='id'>{_e(eid)}</td>"
                f"<td>{_e(_fmt_value(value))}</td><td>{_e(_clip(detail))}</td></tr>"
                for eid, value, detail in worst
            ]
            out.append(_table(["Event id", "Value", "Detail"], body))
        if not any_shown:
            out.append("<p class='empty'>No rule failed.</p>")
        out.append("</section>")
        return "\n".join(out)


# -- HTML pieces ------------------------------------------------------------------------------

_HEAD: Final = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<style>
body {{ font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0;
  color: #1d2330; background: #f6f7f9; }}
header {{ background: #1d2a44; color: #fff; padding: 18px 28px; }}
header h1 {{ margin: 0 0 8px; font-size: 22px; }}
header .muted {{ color: #b9c3d6; font-weight: normal; }}
.facts {{ display: grid; grid-template-columns: max-content 1fr; gap: 2px 16px; margin: 0; }}
.facts dt {{ color: #b9c3d6; }} .facts dd {{ margin: 0; font-variant-numeric: tabular-nums; }}
main {{ max-width: 1040px; margin: 0 auto; padding: 8px 24px 40px; }}
section {{ background: #fff; border: 1px solid #dde1e8; border-radius: 6px; margin: 18px 0;
  padding: 6px 20px 16px; }}
h2 {{ font-size: 18px; margin: 12px 0 6px; }} h3 {{ font-size: 15px; margin: 16px 0 4px; }}
.muted {{ color: #5d6676; }} .empty {{ color: #5d6676; font-style: italic; }}
table {{ border-collapse: collapse; margin: 8px 0; width: 100%; }}
th, td {{ text-align: left; padding: 3px 10px 3px 0; border-bottom: 1px solid #eceff3;
  vertical-align: top; }}
th {{ font-weight: 600; color: #3b4353; }}
td.num {{ font-variant-numeric: tabular-nums; white-space: nowrap; }}
td.id {{ font-family: ui-monospace, monospace; }}
svg {{ display: block; margin: 8px 0; max-width: 100%; height: auto; }}
svg text {{ font: 12px system-ui, sans-serif; fill: #1d2330; }}
.hist {{ display: inline-block; vertical-align: top; margin-right: 18px; }}
.hist h4 {{ margin: 10px 0 0; font-size: 13px; }}
</style></head><body>"""


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _fact(label: str, value: str, key: str) -> str:
    return f"<dt>{_e(label)}</dt><dd data-fact='{key}'>{_e(value)}</dd>"


def _expectation(r: CompiledRule) -> str:
    if r.expect is not None:
        return f"expect {str(r.expect).lower()}"
    bounds = []
    if r.lo is not None:
        bounds.append(f"min {r.lo:g}")
    if r.hi is not None:
        bounds.append(f"max {r.hi:g}")
    return ", ".join(bounds) or "true passes"


def _fmt(x: float, percent: bool) -> str:
    if math.isnan(x):
        return DASH
    return f"{100 * x:.1f}%" if percent else f"{x:.3f}"


def _fmt_value(value: bool | float | None) -> str:
    if value is None:
        return DASH
    if isinstance(value, bool):
        return str(value).lower()
    return f"{value:.4g}"


def _clip(detail: str | None) -> str:
    if not detail:
        return ""
    return detail if len(detail) <= _DETAIL_CHARS else detail[: _DETAIL_CHARS - 1] + "…"


def _row(
    key: str, cells: Iterable[str], f: Figure, *, percent: bool, attr: str = "data-score"
) -> str:
    bounds = (
        DASH if math.isnan(f.lower) else f"{_fmt(f.lower, percent)} {DASH} {_fmt(f.upper, percent)}"
    )
    return (
        f"<tr {attr}='{_e(key)}' data-value='{f.value!r}' data-lower='{f.lower!r}' "
        f"data-upper='{f.upper!r}' data-samples='{f.samples:g}'>"
        + "".join(f"<td>{_e(c)}</td>" for c in cells)
        + f"<td class='num'>{_fmt(f.value, percent)}</td><td class='num'>{bounds}</td>"
        + f"<td class='num'>{f.samples:g}</td></tr>"
    )


def _table(head: Sequence[str], body: Sequence[str], table_id: str | None = None) -> str:
    ident = f" id='{table_id}'" if table_id else ""
    return (
        f"<table{ident}><thead><tr>"
        + "".join(f"<th>{_e(h)}</th>" for h in head)
        + "</tr></thead><tbody>"
        + "\n".join(body)
        + "</tbody></table>"
    )


def _bars(
    rows: Sequence[tuple[str, Figure]], *, percent: bool, graded: set[str] | None = None
) -> str:
    """Horizontal bars with interval whiskers; the scale is 0-1 for rates, 0-max for means.

    Rates are coloured by how good they are (green from 95%, amber from 80%, red below),
    unless ``graded`` names the only rows where higher is better.
    """
    if not rows:
        return ""
    label_w, bar_w, row_h, pad = 230, 480, 22, 8
    width = label_w + bar_w + 90
    height = pad * 2 + row_h * len(rows) + 18
    top = max(
        [1.0] + [f.upper for _, f in rows if not math.isnan(f.upper)] + [f.value for _, f in rows]
    )
    bottom = min(
        [0.0] + [f.lower for _, f in rows if not math.isnan(f.lower)] + [f.value for _, f in rows]
    )
    span = (top - bottom) or 1.0

    def x(v: float) -> float:
        return label_w + bar_w * (v - bottom) / span

    out = [
        f"<svg xmlns='http://www.w3.org/2000/svg' width='{width}' height='{height}' "
        f"viewBox='0 0 {width} {height}' role='img'>"
    ]
    for i, (label, f) in enumerate(rows):
        y = pad + i * row_h
        shown = label if len(label) <= 34 else label[:33] + "…"
        good = percent and (graded is None or label in graded)
        colour = _colour(f.value) if good else "#4a74b8"
        out.append(
            f"<text x='{label_w - 8}' y='{y + 15}' text-anchor='end'>{_e(shown)}"
            f"<title>{_e(label)}</title></text>"
            f"<rect x='{x(min(0.0, f.value)):.1f}' y='{y + 3}' "
            f"width='{max(abs(x(f.value) - x(0.0)), 1.0):.1f}' height='{row_h - 8}' "
            f"fill='{colour}'/>"
        )
        if not math.isnan(f.lower):
            lo, hi = x(f.lower), x(f.upper)
            mid = y + row_h / 2 - 1
            out.append(
                f"<path d='M{lo:.1f} {mid} H{hi:.1f} M{lo:.1f} {mid - 5} V{mid + 5} "
                f"M{hi:.1f} {mid - 5} V{mid + 5}' stroke='#1d2330' stroke-width='1.3' "
                "fill='none'/>"
            )
        out.append(f"<text x='{label_w + bar_w + 8}' y='{y + 15}'>{_fmt(f.value, percent)}</text>")
    axis_y = pad + row_h * len(rows) + 4
    out.append(
        f"<path d='M{label_w} {axis_y} H{label_w + bar_w}' stroke='#9aa3b2' fill='none'/>"
        f"<text x='{label_w}' y='{axis_y + 14}' text-anchor='middle'>"
        f"{_fmt(bottom, percent)}</text>"
        f"<text x='{label_w + bar_w}' y='{axis_y + 14}' text-anchor='middle'>"
        f"{_fmt(top, percent)}</text>"
    )
    out.append("</svg>")
    return "".join(out)


def _colour(rate: float) -> str:
    if rate >= 0.95:
        return "#3d9a5b"
    if rate >= 0.8:
        return "#d8a13a"
    return "#c8493b"


def histogram(values: Sequence[float], bins: int = _BINS) -> tuple[list[float], list[int]]:
    """Edges and counts: ``bins`` equal bins over [0, 1] when the values fit, else their range."""
    lo, hi = min(values), max(values)
    if lo >= 0.0 and hi <= 1.0:
        lo, hi = 0.0, 1.0
    elif hi == lo:
        lo, hi = lo - 0.5, hi + 0.5
    step = (hi - lo) / bins
    counts = [0] * bins
    for v in values:
        counts[min(int((v - lo) / step), bins - 1)] += 1
    return [lo + i * step for i in range(bins + 1)], counts


def _histogram_block(
    name: str, res: _Reservoir, note: str, kind: str, bound: float | None = None
) -> str:
    """A histogram; ``bound`` (the rule's min or max) is drawn as a dashed red line."""
    edges, counts = histogram(res.values)
    w, h, pad, bottom_pad = 300, 120, 6, 18
    top = max(counts) or 1
    bar = (w - 2 * pad) / len(counts)
    out = [
        f"<div class='hist' data-{kind}-hist='{_e(name)}' data-count='{res.count}' "
        f"data-counts='{','.join(map(str, counts))}'>",
        f"<h4>{_e(name)} <span class='muted'>{_e(note)} · {res.count} values</span></h4>",
        f"<svg xmlns='http://www.w3.org/2000/svg' width='{w}' height='{h}' "
        f"viewBox='0 0 {w} {h}' role='img'>",
    ]
    for i, c in enumerate(counts):
        bh = (h - pad - bottom_pad) * c / top
        out.append(
            f"<rect x='{pad + i * bar:.1f}' y='{h - bottom_pad - bh:.1f}' "
            f"width='{max(bar - 1, 1):.1f}' height='{bh:.1f}' fill='#4a74b8'>"
            f"<title>{edges[i]:.3g} to {edges[i + 1]:.3g}: {c}</title></rect>"
        )
    if bound is not None and edges[0] <= bound <= edges[-1]:
        bx = pad + (w - 2 * pad) * (bound - edges[0]) / (edges[-1] - edges[0])
        out.append(
            f"<path d='M{bx:.1f} {pad} V{h - bottom_pad}' stroke='#c8493b' "
            "stroke-dasharray='4 3' fill='none'/>"
        )
    out.append(
        f"<path d='M{pad} {h - bottom_pad} H{w - pad}' stroke='#9aa3b2' fill='none'/>"
        f"<text x='{pad}' y='{h - 4}'>{edges[0]:.3g}</text>"
        f"<text x='{w - pad}' y='{h - 4}' text-anchor='end'>{edges[-1]:.3g}</text>"
        "</svg></div>"
    )
    return "".join(out)
