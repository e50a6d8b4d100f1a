"""The shipped sample stream is exactly what samples/generate.py makes from samples/corpus.yaml."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

from sidecar.checks.attack import AttackAttempt, AttackParams
from sidecar.checks.base import CheckContext

REPO = Path(__file__).resolve().parents[1]
SHIPPED = REPO / "sidecar" / "data" / "events.jsonl"
README = REPO / "samples" / "README.md"


def _counts_block(text: str) -> str:
    return text.split("<!-- counts:begin -->\n", 1)[1].split("\n<!-- counts:end -->", 1)[0]


def test_generator_reproduces_the_shipped_stream_and_readme_counts(tmp_path: Path) -> None:
    out = tmp_path / "events.jsonl"
    readme = tmp_path / "README.md"
    readme.write_text(
        "# stale\n\n<!-- counts:begin -->\nold\n<!-- counts:end -->\ntail\n", encoding="utf-8"
    )
    done = subprocess.run(
        [
            sys.executable,
            str(REPO / "samples" / "generate.py"),
            "--out",
            str(out),
            "--readme",
            str(readme),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    # Byte for byte, so a change to the corpus or the generator must ship a regenerated stream.
    assert out.read_bytes() == SHIPPED.read_bytes()
    shipped_counts = _counts_block(README.read_text(encoding="utf-8"))
    assert done.stdout.rstrip("\n") == shipped_counts
    assert readme.read_text(encoding="utf-8") == (
        f"# stale\n\n<!-- counts:begin -->\n{shipped_counts}\n<!-- counts:end -->\ntail\n"
    )


def test_the_demo_stream_fills_the_organic_robustness_series(tmp_path: Path) -> None:
    """The stream's attack attempts that nobody labelled are found by the default pack's
    attack check alone, and the replay report (the windows' figures) gives their robustness
    per category the check infers, as the labels say: refused ones over all."""
    events = []
    for line in SHIPPED.read_text(encoding="utf-8").splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue  # the stream's malformed records
        if isinstance(event, dict) and event.get("labels", {}).get("kind", "").startswith(
            "organic_"
        ):
            events.append(event)
    assert len(events) >= 8 and not any("attack" in e for e in events)
    check = AttackAttempt(AttackParams(), CheckContext())
    refused: Counter[str] = Counter()
    seen: Counter[str] = Counter()
    for e in events:
        found = check.assess(e["prompt"])
        assert found.attack, e["prompt"]
        seen[f"organic:{found.category}"] += 1
        refused[f"organic:{found.category}"] += e["labels"]["outcome"] == "refused"
    assert set(seen) == {"organic:intermediate", "organic:advanced"}
    report = tmp_path / "report.html"
    env = {k: v for k, v in os.environ.items() if not k.startswith("LLM_SIDECAR_")}
    done = subprocess.run(
        [sys.executable, "-m", "sidecar", "replay", str(SHIPPED), "--report", str(report)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr  # its malformed records are skipped
    rows = {
        m["subject"]: (float(m["value"]), int(m["samples"]))
        for m in re.finditer(
            r"data-category='(?P<subject>organic:[a-z]+)' data-value='(?P<value>[0-9.]+)'"
            r"[^>]*data-samples='(?P<samples>[0-9]+)'",
            report.read_text(encoding="utf-8"),
        )
    }
    assert rows == {k: (refused[k] / seen[k], seen[k]) for k in seen}
