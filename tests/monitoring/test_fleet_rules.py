"""The fleet recording rules give the figures the package's own interval code gives.

Three processes export cumulative counters of the same observations that one window would hold
(one of them restarted inside the window: a counter reset); ``promtool test rules`` evaluates
the shipped rule file on them, and the expected value, bounds and sample count of every fleet
figure are computed here by :class:`sidecar.windows.scores.Figures` from the sums of the
observations in the window.
"""

from __future__ import annotations

import random
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from prometheus_client import CollectorRegistry

from sidecar.settings import ExportSettings, LabelSettings, WindowSettings
from sidecar.windows.fleet import COUNTERS, FLEET_WINDOWS, counter_sums, render, rule_groups
from sidecar.windows.ring import WIDTH, _accumulate
from sidecar.windows.scores import CORRECTED, SCORES, Figures, _correction_parts
from tests.conftest import REPO, require_tool
from tests.test_windows import Rule, event, make, samples, verdict, yes

ALERTS = REPO / "helm" / "llm-sidecar" / "files" / "alerts.yaml"
MINUTES = 75  # one sample a minute; the 1h window ends at minute 70, the 5m one at 70 too
EVAL = 70
RESTART = 68  # process p2 restarts inside both windows (exported at zero, then counts again)
PROCESSES = ("p0", "p1", "p2")

Obs = tuple[int, str, float, float]  # (minute, process, x, w)
Key = tuple[str, str]  # (score, subject)


def observations(rng: random.Random) -> dict[Key, list[Obs]]:
    """Observations of every kind of score, spread over the processes and minutes."""
    out: dict[Key, list[Obs]] = {}

    def add(key: Key, x: float, w: float = 1.0, minute: int | None = None) -> None:
        m = rng.randint(1, MINUTES - 1) if minute is None else minute
        if m == RESTART:
            m += 1  # the restarted process's first scrape shows zero
        out.setdefault(key, []).append((m, rng.choice(PROCESSES), x, w))

    for _ in range(400):
        add(("rule_pass_rate", "no-pii"), float(rng.random() < 0.9))
        add(("event_pass_rate", ""), float(rng.random() < 0.8))
    for _ in range(120):
        add(("refusal_rate", ""), float(rng.random() < 0.1))
    for _ in range(200):  # judged, sampler weights: t with many degrees of freedom
        add(("judge_score", "faithfulness"), rng.random(), rng.choice((1.0, 2.0, 4.0)))
    for _ in range(6):  # few judged events inside the 5m window: the t table
        add(("judge_score", "toxicity"), rng.random() / 3, rng.choice((1.0, 3.0)), EVAL - 1)
    for _ in range(60):  # rank-weighted leakage similarity
        add(("leakage_risk", ""), rng.random() / 2, float(rng.randint(1, 4)))
    for _ in range(150):  # agreement of a cheap detector with the judge
        add(("detector_f1", "toxicity"), float(rng.random() < 0.6), rng.choice((1.0, 2.0)))
    # Robustness and its correction: "basic" with many cheap-refused judged probes (the delta
    # method), "advanced" with few (the Bonferroni box); all inside the 5m window, so that
    # both windows have enough judged probes for a corrected figure.
    for category, probes, judged in (("basic", 300, 80), ("advanced", 90, 24)):
        for i in range(probes):
            m = rng.randint(EVAL - 4, EVAL)
            m = m + 1 if m == RESTART else m
            cheap = rng.random() < (0.7 if category == "basic" else 0.25)
            add(("adversarial_robustness", category), float(cheap), minute=m)
            if i >= judged:
                continue
            w = rng.choice((1.0, 2.0))
            judge = rng.random() < (0.9 if cheap else 0.3)
            add(("adversarial_robustness_judged", category), float(judge), w, m)
            name = f"robustness:{category}"
            if cheap:
                add(("detector_precision", name), float(judge), w, m)
            if judge:
                add(("detector_recall", name), float(cheap), w, m)
    return out


def window_sums(obs: list[Obs], start: int, end: int) -> list[float]:
    acc = [0.0] * WIDTH
    for m, _, x, w in obs:
        if start < m <= end:
            _accumulate(acc, x, w)
    return acc


def counter_values(obs: list[Obs], process: str, index: int) -> Iterator[float]:
    """One process's cumulative counter, minute by minute; p2 restarts at RESTART."""
    for minute in range(MINUTES):
        since = RESTART if process == "p2" and minute >= RESTART else -1
        acc = [0.0] * WIDTH
        for m, p, x, w in obs:
            if p == process and since < m <= minute:
                _accumulate(acc, x, w)
        yield acc[index]


def input_series(data: dict[Key, list[Obs]]) -> list[dict[str, str]]:
    series = []
    for (score, subject), obs in data.items():
        for name, index, _ in counter_sums(score):
            for process in PROCESSES:
                labels = (
                    f'score="{score}", subject="{subject}", route="*", model="*", tenant="*", '
                    f'job="llm-sidecar", instance="{process}"'
                )
                values = " ".join(repr(v) for v in counter_values(obs, process, index))
                series.append(
                    {"series": f"llm_sidecar_score_{name}_total{{{labels}}}", "values": values}
                )
    return series


def expected(data: dict[Key, list[Obs]], window: str) -> dict[tuple[str, str, str], float]:
    """(figure, score, subject) -> what the package's Figures say of the window's sums."""
    figures = Figures(WindowSettings())
    start = EVAL - {"5m": 5, "1h": 60}[window]
    sums = {key: window_sums(obs, start, EVAL) for key, obs in data.items()}
    out: dict[tuple[str, str, str], float] = {}

    def put(score: str, subject: str, got: tuple[float, ...] | None, samples: float) -> None:
        assert got is not None
        out[("score", score, subject)] = got[0]
        out[("score_lower_bound", score, subject)] = got[1]
        out[("score_upper_bound", score, subject)] = got[2]
        out[("samples", score, subject)] = samples

    for (score, subject), s in sums.items():
        if s[0] > 0:
            put(score, subject, figures.interval(SCORES[score], s), s[0])
    for category in ("basic", "advanced"):
        parts = {role: sums.get(key) for role, key in _correction_parts(category).items()}
        got = figures.corrected(**parts)
        assert got is not None
        put("adversarial_robustness_corrected", category, got[:3], got[3])
    return out


def promtool_case(data: dict[Key, list[Obs]], window: str) -> dict[str, object]:
    tests = []
    for (figure, score, subject), value in sorted(expected(data, window).items()):
        selector = (
            f'llm_sidecar:fleet_{figure}{{window="{window}", score="{score}", '
            f'subject="{subject}", route="*", model="*", tenant="*"}}'
        )
        subject_label = f'subject="{subject}", ' if subject else ""  # empty: no label
        labels = (
            f'{{score="{score}", {subject_label}route="*", model="*", tenant="*", '
            f'window="{window}"}}'
        )
        tests.append(
            {
                "expr": f"round(1e6 * {selector})",
                "eval_time": f"{EVAL}m",
                "exp_samples": [{"labels": labels, "value": round(1e6 * value)}],
            }
        )
    return {"interval": "1m", "input_series": input_series(data), "promql_expr_test": tests}


def test_the_shipped_rule_file_carries_the_generated_fleet_rules() -> None:
    text = ALERTS.read_text(encoding="utf-8")
    assert render(rule_groups()) in text
    names = {g["name"] for g in yaml.safe_load(text)["groups"]}
    assert {f"llm-sidecar.fleet.{w}" for w in FLEET_WINDOWS} <= names


def test_every_score_with_sums_has_fleet_counters_by_default() -> None:
    exported = set(WindowSettings().export.cumulative_scores)
    assert exported == {s for s, kind in SCORES.items() if kind != CORRECTED}
    assert [name for name, _, _ in COUNTERS][:3] == ["observations", "weight", "weighted_value"]


@pytest.mark.parametrize("window", FLEET_WINDOWS)
def test_fleet_figures_equal_the_package_intervals(window: str, tmp_path: Path) -> None:
    promtool = require_tool("promtool")
    data = observations(random.Random(20261128))
    case = promtool_case(data, window)
    scores = {t["expr"].split('score="')[1].split('"')[0] for t in case["promql_expr_test"]}  # type: ignore[attr-defined]
    # every kind: rates, weighted means (t table and expansion), F1, raw and corrected robustness
    assert scores >= {
        "rule_pass_rate", "event_pass_rate", "refusal_rate", "judge_score", "leakage_risk",
        "detector_f1", "adversarial_robustness", "adversarial_robustness_corrected",
    }  # fmt: skip
    doc = {"rule_files": [str(ALERTS)], "evaluation_interval": "1m", "tests": [case]}
    path = tmp_path / "fleet_test.yaml"
    path.write_text(yaml.safe_dump(doc, width=10_000), encoding="utf-8")
    done = subprocess.run(
        [promtool, "test", "rules", str(path)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]


def disparity_case() -> dict[str, object]:
    """One process's windows and its counters: the fleet's disparity per label is expected to
    be the one the process exports (``llm_sidecar_window_segment_disparity``)."""
    registry = CollectorRegistry()
    labels = LabelSettings(routes=["/a", "/b", "/c"], tenants=["x", "y"])
    w, _ = make(
        WindowSettings(export=ExportSettings(new_counter_hold=0)),
        [Rule("r", "x"), Rule("refuse", "refusal")],
        labels,
        registry=registry,
    )
    rng = random.Random(5)
    batch = []
    for i in range(400):
        route = rng.choice(["/a", "/b", "/c", "/z", None])
        ok = rng.random() < {"/a": 0.9, "/b": 0.6}.get(route or "", 0.75)
        refused = rng.random() < 0.2
        e = event(i, route=route, tenant=rng.choice(["x", "y", "q"]))
        batch.append(verdict(e, r=yes(True, ok), refuse=yes(refused, True)))
    w.observe_verdicts(batch)
    exported = {
        (dict(lbl)["score"], dict(lbl)["label"]): value
        for (name, lbl), value in samples(registry).items()
        if name == "llm_sidecar_window_segment_disparity" and dict(lbl)["window"] == "1h"
    }
    assert {label for _, label in exported} == {"route", "tenant"}
    series = []
    for (score, subject, seg), _, total in w.snapshot():
        for name, index, _ in counter_sums(score):
            lbl = f'score="{score}", subject="{subject}", route="{seg[0]}", model="{seg[1]}", '
            lbl += f'tenant="{seg[2]}", job="llm-sidecar", instance="p0"'
            values = " ".join(["0"] * 8 + [repr(total[index])] * 3)  # counted at minute 8
            series.append({"series": f"llm_sidecar_score_{name}_total{{{lbl}}}", "values": values})
    tests = [
        {
            "expr": f'round(1e6 * llm_sidecar:fleet_segment_disparity{{window="{window}"}})',
            "eval_time": "10m",
            "exp_samples": [
                {
                    "labels": f'{{score="{score}", label="{label}", window="{window}"}}',
                    "value": round(1e6 * value),
                }
                for (score, label), value in sorted(exported.items())
            ],
        }
        for window in FLEET_WINDOWS
    ]
    return {"interval": "1m", "input_series": series, "promql_expr_test": tests}


def test_fleet_segment_disparity_equals_the_exported_one(tmp_path: Path) -> None:
    promtool = require_tool("promtool")
    doc = {"rule_files": [str(ALERTS)], "evaluation_interval": "1m", "tests": [disparity_case()]}
    path = tmp_path / "disparity_test.yaml"
    path.write_text(yaml.safe_dump(doc, width=10_000), encoding="utf-8")
    done = subprocess.run(
        [promtool, "test", "rules", str(path)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]


def test_the_tool_rewrites_only_the_marked_section() -> None:
    from tools.fleet_rules import BEGIN, END, rewrite

    text = f"groups:\n  - name: mine\n    rules: []\n{BEGIN}  - stale\n{END}# tail\n"
    out = rewrite(text, confidence=0.9)
    assert out.startswith("groups:\n  - name: mine\n") and out.endswith(f"{END}# tail\n")
    assert "stale" not in out and render(rule_groups(confidence=0.9)) in out
    assert render(rule_groups()) not in out  # another z, other bounds
    with pytest.raises(SystemExit, match="marker"):
        rewrite("groups: []\n")
