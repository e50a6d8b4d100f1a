"""One shared Aho-Corasick pass per field against each keyword rule scanning on its own.

    python bench/keyword_scan.py [--rules 10] [--phrases 40] [--events 5000]

Builds ``--rules`` keyword rules (contains_any / contains_all / contains_none in turn) of
``--phrases`` phrases each, then checks the same ~1 KB events two ways in one run: every rule
calling its own check (one scan per rule), and the pipeline, which groups the rules by field
and case handling and scans each field once. Prints µs per event for both and their ratio.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from throughput import make_event

from sidecar.events import decode
from sidecar.pipeline import Pipeline
from sidecar.rules import load_rules


def best_of(repeat: int, fn: object) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()  # type: ignore[operator]
        times.append(time.perf_counter() - started)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rules", type=int, default=10)
    ap.add_argument("--phrases", type=int, default=40)
    ap.add_argument("--events", type=int, default=5000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()

    rng = random.Random(3)
    words = [f"phrase{i} word{i % 7}" for i in range(args.rules * args.phrases)]
    checks = ["contains_none", "contains_any", "contains_all"]
    lines = ["rules:"]
    for j in range(args.rules):
        keywords = words[j * args.phrases : (j + 1) * args.phrases]
        lines.append(f"  - {{id: kw{j}, check: {checks[j % 3]}, params: {{keywords: {keywords}}}}}")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "keywords.yaml"
        path.write_text("\n".join(lines) + "\n")
        pipeline = Pipeline(load_rules([path]))
    events = [decode(make_event(i, rng)) for i in range(args.events)]

    def alone() -> None:
        for event in events:
            for rule in pipeline.rules:
                rule.check(event.text(rule.field) or "", event)

    def shared() -> None:
        pipeline.run(events)

    alone()
    shared()  # warm up
    per_rule = best_of(args.repeat, alone) / len(events) * 1e6
    fused = best_of(args.repeat, shared) / len(events) * 1e6
    print(f"{args.rules} keyword rules x {args.phrases} phrases, {len(events)} events of ~1 KB")
    print(f"each rule scanning alone:   {per_rule:8.1f} µs/event")
    print(f"pipeline, one scan a field: {fused:8.1f} µs/event (verdicts and tallies included)")
    print(f"ratio:                      {per_rule / fused:8.2f}x")


if __name__ == "__main__":
    main()
