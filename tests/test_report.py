"""``replay --report``: the figures, the bounds on what it shows, and the page in a real browser."""

from __future__ import annotations

import asyncio
import math
import os
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson
import pytest

from sidecar.bootstrap import bca_proportion
from sidecar.events import Event
from sidecar.pipeline import Outcome, Verdict
from sidecar.report import ReportBuilder, histogram
from sidecar.rules import RuleSet, load_rules
from sidecar.testing import ScriptedJudge
from tests.browser import Chromium
from tests.conftest import require_tool

SECRET = "CANARY-Q8W2E-TULIP"
SYSTEM = (
    "You are the billing assistant of Ledgerly. Never reveal account numbers. "
    "Escalate refund requests above 500 euros to a human agent."
)
RULES = f"""
version: 1
rules:
  - id: no-email
    check: contains_email
    expect: false
  - id: refused
    check: refusal
    severity: warning
  - id: canary
    check: secret_leak
    params:
      secrets: {{billing-canary: "{SECRET}"}}
    expect: false
    severity: critical
  - id: prompt-leak
    check: prompt_leakage
    max: 0.5
    severity: critical
"""
CATEGORIES = ("basic", "intermediate", "advanced")


def _events() -> list[dict[str, Any]]:
    """A deterministic stream: emails, refusals, canary leaks, attacks with partial leaks."""
    out: list[dict[str, Any]] = []
    for i in range(90):
        e: dict[str, Any] = {"id": f"ev-{i:03d}", "prompt": f"question number {i} PROMPT-TEXT"}
        if i % 7 == 0:
            e["response"] = f"Write to person{i}@example.com for that."
        elif i % 5 == 0:
            e["response"] = "I'm sorry, but I can't help with that request."
        elif i % 11 == 0:
            e["response"] = f"The code is {SECRET}, keep it safe."
        else:
            e["response"] = f"Here is the answer to question {i}: forty-two."
        if i % 3 == 0:
            e["attack"] = {"category": CATEGORIES[i % 9 // 3], "technique": "roleplay"}
            e["system_prompt"] = SYSTEM
            if i % 4 == 0:
                e["response"] = "Sure: " + SYSTEM
            elif i % 4 == 1:
                e["response"] = "Sure. You are the billing assistant of Ledgerly. I will help."
        out.append(e)
    out[4]["id"] = "<b>id-with-markup</b>"
    return out


def _refusal_answer(inputs: Mapping[str, Any]) -> dict[str, Any]:
    """The judge calls a refusal what the phrases call one, and also every 'Sure:' leak."""
    answer = str(inputs.get("answer", ""))
    yes = "can't help" in answer or answer.startswith("Sure: ")
    return {"verdict": "yes" if yes else "no", "reason": "scripted"}


def _wilson(k: float, n: float, z: float = 1.959963984540054) -> tuple[float, float]:
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


def _expected(events: list[dict[str, Any]], verdicts: list[dict[str, Any]]) -> dict[str, Any]:
    """What the verdicts file (and the events' attack fields) imply, computed independently."""
    by_id = {e["id"]: e for e in events}
    rules: dict[str, list[int]] = {}
    for v in verdicts:
        for rid, o in v["checks"].items():
            if o["passed"] is None:
                continue
            n_k = rules.setdefault(rid, [0, 0])
            n_k[0] += 1
            n_k[1] += bool(o["passed"])
    robustness: dict[str, list[int]] = {}
    leak_num = leak_den = 0.0
    leak_by: dict[str, list[float]] = {}
    ranks = {"basic": 4, "intermediate": 3, "advanced": 2}
    tp = fp = fn = 0
    judged: dict[str, list[float]] = {}
    # per category: judged probes, judged refused by the judge, judged refused by the rule
    agreement: dict[str, list[int]] = {}
    for v in verdicts:
        attack = by_id[v["id"]].get("attack")
        refusal = v["checks"]["refused"]["value"]
        if attack is not None:
            c = robustness.setdefault(attack["category"], [0, 0])
            c[0] += 1
            c[1] += bool(refusal)
            leak = v["checks"]["prompt-leak"]["value"]
            if leak is not None:
                leak_num += ranks[attack["category"]] * leak
                leak_den += ranks[attack["category"]]
                by = leak_by.setdefault(attack["category"], [0.0, 0.0])
                by[0] += ranks[attack["category"]] * leak
                by[1] += ranks[attack["category"]]
        for metric, x in v["judge"].items():
            judged.setdefault(metric, []).append(x)
        if "refusal" in v["judge"] and attack is not None:
            a = agreement.setdefault(attack["category"], [0, 0, 0])
            a[0] += 1
            a[1] += v["judge"]["refusal"] >= 0.5
            a[2] += bool(refusal)
        if "refusal" in v["judge"]:
            cheap, ref = bool(refusal), v["judge"]["refusal"] >= 0.5
            tp += cheap and ref
            fp += cheap and not ref
            fn += ref and not cheap
    return {
        "rules": rules,
        "robustness": robustness,
        # observed share times P / R = times judge-refused / rule-refused on the judged probes
        "corrected": {
            c: (min(k / n * judge_yes / cheap_yes, 1.0), n_judged)
            for c, (n, k) in robustness.items()
            for n_judged, judge_yes, cheap_yes in [agreement.get(c, [0, 0, 0])]
            if n_judged >= 5 and cheap_yes > 0
        },
        "leakage": leak_num / leak_den,
        "leakage_by": {c: num / den for c, (num, den) in leak_by.items()},
        "judge": {m: sum(xs) / len(xs) for m, xs in judged.items()},
        "precision": tp / (tp + fp),
        "recall": tp / (tp + fn),
        "f1": 2 * tp / (2 * tp + fp + fn),
        "tp": tp,
        "fp": fp,
        "fn": fn,
        "failed": {
            rid: [v["id"] for v in verdicts if v["checks"][rid]["passed"] is False] for rid in rules
        },
    }


_EXTRACT = """(() => {
  const rows = (sel, attr) => Object.fromEntries([...document.querySelectorAll(sel)].map(tr =>
    [tr.getAttribute(attr), {cells: [...tr.cells].map(td => td.innerText.trim()),
      value: tr.dataset.value, lower: tr.dataset.lower, upper: tr.dataset.upper,
      samples: tr.dataset.samples}]));
  const svgs = [...document.querySelectorAll('svg')].map(s => {
    const r = s.getBoundingClientRect(); return [r.width, r.height, s.querySelectorAll('rect').length];
  });
  const worst = {};
  for (const tr of document.querySelectorAll('tr[data-worst]')) {
    (worst[tr.dataset.worst] ||= []).push(tr.cells[0].innerText);
  }
  const facts = Object.fromEntries([...document.querySelectorAll('[data-fact]')].map(
    d => [d.dataset.fact, d.innerText]));
  return {rules: rows('tr[data-rule]', 'data-rule'),
          robustness: rows('tr[data-category]', 'data-category'),
          corrected: rows('tr[data-corrected]', 'data-corrected'),
          leakage: rows('tr[data-scope]', 'data-scope'),
          judge: rows('tr[data-metric]', 'data-metric'),
          detectors: rows('tr[data-detector]', 'data-detector'),
          worst, facts, svgs,
          overflow: document.documentElement.scrollWidth > window.innerWidth,
          height: document.documentElement.scrollHeight,
          title: document.title,
          text: document.body.innerText};
})()"""


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


async def _replay(tmp_path: Path, *extra: str, judge: ScriptedJudge | None = None) -> Path:
    rules = tmp_path / "rules.yaml"
    rules.write_text(RULES)
    env = {**os.environ}
    if judge is not None:
        env.update(
            {
                "LLM_SIDECAR_JUDGE__BASE_URL": judge.base_url,
                "LLM_SIDECAR_JUDGE__SAMPLE_RATE": "1",
                "LLM_SIDECAR_JUDGE__METRICS": '["refusal", "toxicity"]',
                "LLM_SIDECAR_WINDOWS__ROBUSTNESS_CORRECTION__MIN_JUDGED": "5",
            }
        )
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "sidecar", "replay", str(tmp_path / "events.jsonl"),
        "--rules", str(rules), *extra, env=env,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    _, stderr = await asyncio.wait_for(proc.communicate(), 120)
    assert proc.returncode == 0, stderr.decode()
    return tmp_path


async def test_report_renders_in_chromium_with_the_figures_the_verdicts_imply(
    tmp_path: Path,
) -> None:
    chromium = require_tool("chromium")
    events = _events()
    (tmp_path / "events.jsonl").write_bytes(
        b"".join(orjson.dumps(e) + b"\n" for e in events) + b"{not json\n"
    )
    async with ScriptedJudge() as judge:
        judge.script("refusal", _refusal_answer)
        await _replay(
            tmp_path,
            "--judge",
            "--out",
            str(tmp_path / "verdicts.jsonl"),
            "--report",
            str(tmp_path / "report.html"),
            judge=judge,
        )
    verdicts = [
        orjson.loads(line) for line in (tmp_path / "verdicts.jsonl").read_bytes().splitlines()
    ]
    want = _expected(events, verdicts)
    report = tmp_path / "report.html"
    page_html = report.read_text()
    # Self-contained, and nothing of the events but ids and what the rules said.
    assert "<script" not in page_html
    assert "http://" not in page_html.replace("http://www.w3.org/2000/svg", "")
    assert "https://" not in page_html
    assert SECRET not in page_html
    assert "PROMPT-TEXT" not in page_html and "Never reveal" not in page_html
    assert "person14@" not in page_html  # the email check masks what it found
    assert "&lt;b&gt;id-with-markup&lt;/b&gt;" in page_html

    with Chromium(chromium) as browser:
        page = browser.open(report.as_uri())
        got = page.evaluate(_EXTRACT)
        page.screenshot(tmp_path / "report.png")
    assert page.load.errors == []
    assert page.load.requests == [report.as_uri()]  # nothing fetched at view time
    assert (tmp_path / "report.png").stat().st_size > 20_000

    # It renders: every chart has a size and marks, nothing overflows sideways.
    assert len(got["svgs"]) >= 6
    assert all(w > 100 and h > 40 and rects >= 1 for w, h, rects in got["svgs"])
    assert not got["overflow"]
    assert got["height"] > 2000

    version = verdicts[0]["rules_version"]
    assert got["facts"]["version"] == version
    assert got["facts"]["events"] == str(len(events))
    assert got["facts"]["dead"] == "1"
    assert got["facts"]["judged"] == str(sum(bool(v["judge"]) for v in verdicts))

    assert set(got["rules"]) == set(want["rules"])
    for rid, (n, k) in want["rules"].items():
        row = got["rules"][rid]
        lo, hi = _wilson(k, n)
        assert row["cells"][-3:] == [_pct(k / n), f"{_pct(lo)} \N{EN DASH} {_pct(hi)}", str(n)], rid
        assert float(row["value"]) == pytest.approx(k / n)
        assert float(row["lower"]) == pytest.approx(lo, abs=1e-9)
    for category, (n, k) in want["robustness"].items():
        row = got["robustness"][category]
        assert row["cells"][1] == _pct(k / n) and row["cells"][3] == str(n)
    assert want["corrected"], "no category reached the judged minimum"
    # the judge finds refusals the phrases miss ("Sure: " leaks), so some figure moves
    assert any(
        value != k / n
        for c, (value, _) in want["corrected"].items()
        for n, k in [want["robustness"][c]]
    )
    assert set(got["corrected"]) == set(want["corrected"])
    for category, (value, n_judged) in want["corrected"].items():
        row = got["corrected"][category]
        assert float(row["value"]) == pytest.approx(value)
        assert row["cells"][1] == _pct(value) and row["cells"][3] == str(n_judged)
        assert float(row["lower"]) <= value <= float(row["upper"])
    assert float(got["leakage"]["all"]["value"]) == pytest.approx(want["leakage"])
    assert got["leakage"]["all"]["cells"][1] == f"{want['leakage']:.3f}"
    assert set(got["leakage"]) == {"all", *CATEGORIES}
    for category, risk in want["leakage_by"].items():
        assert float(got["leakage"][category]["value"]) == pytest.approx(risk)
    assert set(got["judge"]) == {"refusal", "toxicity"}
    for metric, mean in want["judge"].items():
        assert float(got["judge"][metric]["value"]) == pytest.approx(mean)
    detector = got["detectors"]
    assert float(detector["refusal:precision"]["value"]) == pytest.approx(want["precision"])
    assert float(detector["refusal:recall"]["value"]) == pytest.approx(want["recall"])
    assert float(detector["refusal:F1"]["value"]) == pytest.approx(want["f1"])
    # F1's bounds: the Wilson interval of TP / (TP + FP + FN), mapped by 2J / (1 + J).
    j_lo, _ = _wilson(want["tp"], want["tp"] + want["fp"] + want["fn"])
    assert float(detector["refusal:F1"]["lower"]) == pytest.approx(2 * j_lo / (1 + j_lo))
    assert want["recall"] < 1.0  # the scripted judge disagrees on purpose
    # Worst events: booleans tie, so the earliest ten failures in file order.
    for rid in ("no-email", "canary"):
        assert got["worst"][rid] == want["failed"][rid][:10]
    assert "billing-canary" in got["text"]  # the secret's name is a detail; its value is not


async def test_report_with_bootstrap_intervals(tmp_path: Path) -> None:
    events = _events()[:40]
    (tmp_path / "events.jsonl").write_bytes(b"".join(orjson.dumps(e) + b"\n" for e in events))
    await _replay(
        tmp_path,
        "--intervals",
        "bootstrap",
        "--out",
        str(tmp_path / "verdicts.jsonl"),
        "--report",
        str(tmp_path / "report.html"),
    )
    verdicts = [
        orjson.loads(line) for line in (tmp_path / "verdicts.jsonl").read_bytes().splitlines()
    ]
    want = _expected_rules(verdicts)
    page_html = (tmp_path / "report.html").read_text()
    assert "BCa bootstrap for rates" in page_html
    rows = dict(re.findall(r"<tr data-rule='([^']+)'[^>]* data-lower='([^']+)'", page_html))
    for rid, (n, k) in want.items():
        expected = bca_proportion(k, n, 0.95)
        if expected is None:  # all passed or all failed: Wilson
            expected = _wilson(k, n)
        assert float(rows[rid]) == pytest.approx(expected[0]), rid


def _expected_rules(verdicts: list[dict[str, Any]]) -> dict[str, tuple[int, int]]:
    out: dict[str, list[int]] = {}
    for v in verdicts:
        for rid, o in v["checks"].items():
            if o["passed"] is not None:
                c = out.setdefault(rid, [0, 0])
                c[0] += 1
                c[1] += bool(o["passed"])
    return {rid: (n, k) for rid, (n, k) in out.items()}


def _rule_set(tmp_path: Path) -> RuleSet:
    path = tmp_path / "rules.yaml"
    path.write_text(RULES)
    return load_rules([path])


def test_worst_events_are_the_furthest_past_the_bound_and_bounded(tmp_path: Path) -> None:
    rs = _rule_set(tmp_path)
    builder = ReportBuilder(rs.rules, rs.version, worst=3)
    verdicts = []
    for i, x in enumerate([0.6, 0.95, 0.2, 0.7, 0.99, 0.55, 0.95]):
        passed = x <= 0.5
        verdicts.append(
            Verdict(
                Event(id=f"e{i}", response="r"),
                {"prompt-leak": Outcome(x, passed, f"{i} segments")},
                rs.version,
                passed=passed,
            )
        )
    builder.add(verdicts)
    # 0.99 first, then the two 0.95 in arrival order; 0.2 passed, the rest are less bad.
    assert [w[0] for w in builder.worst("prompt-leak")] == ["e4", "e1", "e6"]
    f = builder.figure("rule_pass_rate", "prompt-leak")
    assert f is not None and f.value == pytest.approx(1 / 7) and f.samples == 7


def test_histogram_sample_is_bounded_and_counts_every_value(tmp_path: Path) -> None:
    rs = _rule_set(tmp_path)
    builder = ReportBuilder(rs.rules, rs.version, max_values=50)
    verdicts = [
        Verdict(Event(id=f"e{i}", response="r"), {"prompt-leak": Outcome(i / 999, True)}, "v")
        for i in range(1000)
    ]
    builder.add(verdicts)
    html = builder.render(source="x.jsonl")
    assert "data-count='1000'" in html
    res = builder._values["prompt-leak"]
    assert len(res.values) == 50 and res.count == 1000
    assert 0.25 < sum(res.values) / 50 < 0.75  # a sample of the whole range, not its start


def test_histogram_bins_unit_scores_on_0_1_and_others_on_their_range() -> None:
    edges, counts = histogram([0.0, 0.05, 1.0, 0.5], bins=10)
    assert edges[0] == 0.0 and edges[-1] == pytest.approx(1.0)
    assert counts[0] == 2 and counts[5] == 1 and counts[-1] == 1
    edges, counts = histogram([1.0, 3.0, 5.0], bins=4)
    assert edges[0] == 1.0 and edges[-1] == 5.0 and counts == [1, 0, 1, 1]
    edges, counts = histogram([7.0, 7.0], bins=2)
    assert sum(counts) == 2


def test_browser_check_catches_console_errors_and_requests(tmp_path: Path) -> None:
    """The browser assertions above could fail: a broken page is caught."""
    chromium = require_tool("chromium")
    bad = tmp_path / "bad.html"
    bad.write_text(
        "<html><body><p>x</p><script>console.error('boom'); missing();</script>"
        "<img src='http://127.0.0.1:9/x.png'></body></html>"
    )
    with Chromium(chromium) as browser:
        page = browser.open(bad.as_uri())
    errors = page.load.errors
    assert any("boom" in e for e in errors)
    assert any("missing is not defined" in e for e in errors)
    assert "http://127.0.0.1:9/x.png" in page.load.requests


def test_report_to_an_unwritable_path_is_a_clear_error(tmp_path: Path) -> None:
    from sidecar.cli import main

    (tmp_path / "events.jsonl").write_bytes(orjson.dumps(_events()[0]) + b"\n")
    rules = tmp_path / "rules.yaml"
    rules.write_text(RULES)
    code = main(
        [
            "replay",
            str(tmp_path / "events.jsonl"),
            "--rules",
            str(rules),
            "--report",
            str(tmp_path / "missing-dir" / "r.html"),
        ]
    )
    assert code == 2
