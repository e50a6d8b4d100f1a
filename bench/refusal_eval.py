"""Quality and cost of the ``refusal`` check on the labelled set, measured in this run.

Runs the check over ``tests/data/refusals.jsonl`` in each scope (and RGB's phrase set for
comparison), prints precision, recall, F1, accuracy and the confusion counts, the cost per
event in microseconds, and every misclassified text.

    python bench/refusal_eval.py [--data PATH] [--repeat N] [--no-misses]
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sidecar.checks.base import CheckContext
from sidecar.checks.refusal import Refusal, RefusalParams
from sidecar.events import Event

DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "refusals.jsonl"

CONFIGS: dict[str, dict[str, Any]] = {
    "default/opening": {"scope": "opening"},
    "default/anywhere": {"scope": "anywhere"},
    "rgb/anywhere": {"set": "rgb", "scope": "anywhere"},
}


@dataclass(frozen=True)
class Example:
    text: str
    refusal: bool
    kind: str


@dataclass
class Scores:
    tp: int = 0
    fp: int = 0
    tn: int = 0
    fn: int = 0

    def add(self, predicted: bool, actual: bool) -> None:
        if predicted and actual:
            self.tp += 1
        elif predicted:
            self.fp += 1
        elif actual:
            self.fn += 1
        else:
            self.tn += 1

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 0.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 0.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    @property
    def accuracy(self) -> float:
        n = self.tp + self.fp + self.tn + self.fn
        return (self.tp + self.tn) / n if n else 0.0


def load(path: Path = DATA) -> list[Example]:
    with path.open(encoding="utf-8") as f:
        return [
            Example(row["text"], bool(row["refusal"]), row["kind"])
            for row in map(json.loads, filter(str.strip, f))
        ]


def make_check(**params: Any) -> Refusal:
    return Refusal(RefusalParams(**params), CheckContext())


def evaluate(
    check: Refusal, examples: list[Example]
) -> tuple[Scores, list[tuple[Example, str | None]]]:
    """Scores on the set, and the misclassified examples with the phrase that matched."""
    scores, misses = Scores(), []
    event = Event(id="eval", response="")
    for ex in examples:
        result = check(ex.text, event)
        predicted = bool(result.value)
        scores.add(predicted, ex.refusal)
        if predicted != ex.refusal:
            misses.append((ex, result.detail))
    return scores, misses


def cost_us(check: Refusal, texts: list[str], repeat: int) -> float:
    """Mean wall-clock microseconds of one call, best of three rounds."""
    event = Event(id="bench", response="")
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter_ns()
        for _ in range(repeat):
            for text in texts:
                check(text, event)
        best = min(best, (time.perf_counter_ns() - t0) / (repeat * len(texts)))
    return best / 1000


def kilobyte_texts(examples: list[Example]) -> list[str]:
    """About 1 KB compliant answers, the size the design's cost figures use."""
    pool = [ex.text for ex in examples if not ex.refusal and len(ex.text) > 60]
    out, cur = [], ""
    for text in pool * 4:
        cur = f"{cur} {text}" if cur else text
        if len(cur) >= 1000:
            out.append(cur[:1024])
            cur = ""
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--repeat", type=int, default=20, help="timing passes over the set")
    parser.add_argument("--no-misses", action="store_true", help="do not list misclassified")
    args = parser.parse_args()

    examples = load(args.data)
    positives = sum(ex.refusal for ex in examples)
    kb = kilobyte_texts(examples)
    t0 = time.perf_counter()
    make_check()
    build_ms = (time.perf_counter() - t0) * 1000
    print(
        f"{len(examples)} labelled texts ({positives} refusals, {len(examples) - positives} not);"
        f" building the default automaton took {build_ms:.1f} ms"
    )
    header = (
        f"{'config':18} {'prec':>6} {'recall':>6} {'F1':>6} {'acc':>6}"
        f" {'TP':>4} {'FP':>4} {'TN':>4} {'FN':>4} {'us/event':>9} {'us/1KB':>7}"
    )
    print(header)
    print("-" * len(header))
    all_misses: dict[str, list[tuple[Example, str | None]]] = {}
    for name, params in CONFIGS.items():
        check = make_check(**params)
        s, misses = evaluate(check, examples)
        all_misses[name] = misses
        per_event = cost_us(check, [ex.text for ex in examples], args.repeat)
        per_kb = cost_us(check, kb, max(1, args.repeat // 2)) if kb else float("nan")
        print(
            f"{name:18} {s.precision:6.3f} {s.recall:6.3f} {s.f1:6.3f} {s.accuracy:6.3f}"
            f" {s.tp:4d} {s.fp:4d} {s.tn:4d} {s.fn:4d} {per_event:9.2f} {per_kb:7.2f}"
        )
    if args.no_misses:
        return
    for name, misses in all_misses.items():
        print(f"\nmisclassified by {name} ({len(misses)}):")
        for ex, phrase in misses:
            label = "FN" if ex.refusal else "FP"
            why = f" [matched {phrase!r}]" if phrase else ""
            text = ex.text.replace("\n", " ")
            text = text if len(text) <= 110 else text[:107] + "..."
            print(f"  {label} {ex.kind:24} {text!r}{why}")


if __name__ == "__main__":
    main()
