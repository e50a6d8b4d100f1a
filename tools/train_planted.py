"""Train the planted-line model shipped in ``sidecar/data/planted_model.json.gz``.

The model (:mod:`sidecar.checks.attack_planted_model`) reads whether a line of a document a
prompt pastes is an order planted for the AI that reads it. Positives: the planted lines the
project wrote (``bench/data/written_lines/``, label ``planted``). Negatives: the ordinary lines
written with them (label ``document``: e-mails', pages', homework sheets' and manuals' lines,
many of them orders to their human readers), and the lines of the documents pasted in the
benign rows of the written sets in :data:`BENIGN_SETS` and in the benign prompts of the
training sources ``tools/fetch_detector_data.py`` writes (the attack model's held-out sources
are never read). The written sets in :data:`HELD_OUT_SETS` are never trained on.

A prompt is read as its documents' likeliest line, so the threshold (the model's ``alone``) is
chosen on documents: the lowest probability at which, with the model fitted on the other
folds (five, each document or written line in one), at most :data:`FPR_BUDGET` of the benign
documents and lines have a line that reads as planted. Each is a judge call where
``uncertain: true`` is set.

    python tools/train_planted.py --data OUT_DIR [--out sidecar/data/planted_model.json.gz]

Needs scikit-learn (in the ``dev`` extra); the package itself never imports it.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from sidecar.checks.attack_hijack_model import hijack_read  # noqa: E402
from sidecar.checks.attack_model import AttackModel, features  # noqa: E402
from sidecar.checks.attack_planted_model import (  # noqa: E402
    PLANTED_MODEL_FILE,
    document_lines,
    text_lines,
)
from sidecar.checks.refusal_text import fold  # noqa: E402
from tools.train_attack import FOLDS, HELD_OUT, THRESHOLDS, fit_linear, load  # noqa: E402
from tools.written_prompts import written_rows  # noqa: E402

DEFAULT_OUT = ROOT / "sidecar" / "data" / PLANTED_MODEL_FILE
LINES = ROOT / "bench" / "data" / "written_lines"
BENIGN_SETS = (
    *("pasted_a", "labelled_a", "labelled_b", "planted_a", "planted_b"),
    *("rag_a", "rag_b", "ordinary_a"),
)
"""Written sets read or fitted on whose benign rows' documents are negatives."""
HELD_OUT_SETS = ("planted_c", "planted_d", "rag_c", "ordinary_b")
"""Written sets of pasted documents the model never sees."""
C = 1.0
FPR_BUDGET = 0.005
"""At most this share of the benign documents and lines (out of fold) may read as planted."""

GRID = (*THRESHOLDS, 0.995, 0.999)
"""The thresholds tried, finer than the attack model's above 0.99: a line is short, and the
model is surer of it than of a prompt; none within the budget writes 1 (not read)."""
Group = tuple[str, bool, list[str]]
"""A document (or one written line): where it is from, whether it is planted, its lines."""


def written_lines(path: Path = LINES) -> list[Group]:
    """Every written line, each a group of its own, read as the check reads a document's
    (:func:`~sidecar.checks.attack_planted_model.text_lines`: one written with two sentences
    is two lines, one shorter than the check reads none)."""
    groups: list[Group] = []
    for file in sorted(path.glob("*.json")):
        doc = json.loads(file.read_text(encoding="utf-8"))
        planted = doc["label"] == "planted"
        for line in doc["lines"]:
            read = text_lines(fold(line))
            if read:
                groups.append((doc["name"], planted, read))
    return groups


def training_groups(data: Path, lines: Path = LINES) -> list[Group]:
    """The written lines, and the documents of the benign written rows and training sources
    (those with a line the model reads)."""
    held = set(BENIGN_SETS) & set(HELD_OUT_SETS)
    if held:
        raise ValueError(f"held-out written sets are never trained on: {sorted(held)}")
    groups = written_lines(lines)
    texts = [(s, r["prompt"]) for s in BENIGN_SETS for r in written_rows(s) if not r["attack"]]
    texts += [(r.source, r.prompt) for r in load(data) if r.source not in HELD_OUT and not r.attack]
    for source, text in texts:
        found = document_lines(fold(text))
        if found:
            groups.append((source, False, found))
    return groups


def _features(line: str) -> list[str]:
    read = hijack_read(line)
    return features(read, [], len(read))  # as the check scores it


def fit(groups: Sequence[Group], **kwargs: float) -> AttackModel:
    rows = [(line, planted) for _, planted, lines in groups for line in lines]
    return fit_linear([_features(line) for line, _ in rows], [p for _, p in rows], C, **kwargs)


def scores(model: AttackModel, lines: Sequence[str]) -> float:
    """A document's score: its likeliest line's."""
    reads = [hijack_read(line) for line in lines]
    return max(model.score_many(reads, [[] for _ in reads], [len(r) for r in reads]), default=0.0)


def out_of_fold(groups: Sequence[Group]) -> list[float]:
    order = list(range(len(groups)))
    random.Random(7).shuffle(order)
    found = [0.0] * len(groups)
    for k in range(FOLDS):
        inside = set(order[k::FOLDS])
        model = fit([g for i, g in enumerate(groups) if i not in inside])
        for i in inside:
            found[i] = scores(model, groups[i][2])
    return found


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, required=True, help="directory of normalised JSONL files")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--lines", type=Path, default=LINES, help="directory of the written lines")
    args = ap.parse_args(argv)
    try:
        groups = training_groups(args.data, args.lines)
    except (ValueError, FileNotFoundError, KeyError) as exc:
        print(exc, file=sys.stderr)
        return 2
    if not any(g[1] for g in groups) or all(g[1] for g in groups):
        print("need planted lines and benign documents to train on", file=sys.stderr)
        return 2
    started = time.perf_counter()
    oof = out_of_fold(groups)
    benign = [s for s, g in zip(oof, groups, strict=True) if not g[1]]
    alone = next((t for t in GRID if sum(s >= t for s in benign) <= FPR_BUDGET * len(benign)), 1.0)
    planted = [s for s, g in zip(oof, groups, strict=True) if g[1]]
    recall = sum(s >= alone for s in planted) / len(planted)
    model = fit(groups, alone=alone, agree=alone)
    counts: dict[str, dict[str, int]] = {}
    for source, is_planted, lines in groups:
        kind = counts.setdefault(source, {})
        key = "planted lines" if is_planted else "benign lines"
        kind[key] = kind.get(key, 0) + len(lines)
    model.meta = {
        "trained_on": dict(sorted(counts.items())),
        "held_out_sets": list(HELD_OUT_SETS),
        "held_out_sources": sorted(HELD_OUT),
        "C": C,
        "fpr_budget": FPR_BUDGET,
        "out_of_fold_recall": round(recall, 4),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    model.save(args.out)
    print(
        f"threshold {alone}: out-of-fold recall {recall:.3f} of {len(planted)} planted lines, "
        f"{len(benign)} benign documents and lines; {len(model.weights)} features; wrote "
        f"{args.out} ({args.out.stat().st_size / 1024:.0f} KiB) in "
        f"{time.perf_counter() - started:.1f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
