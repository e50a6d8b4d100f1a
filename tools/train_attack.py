"""Train the attack-attempt model shipped in ``sidecar/data/attack_model.json.gz``.

Reads the prompt sources ``tools/fetch_detector_data.py`` writes (attack or not, see DATA.md),
turns each prompt into the features of :mod:`sidecar.checks.attack_model` (words, pairs,
the signals found, a length bucket) and fits one L2-regularised logistic regression with the
refusal trainer's code (:func:`tools.train_refusal.vectorise`, ``_fit_head``).

Whole sources are held out (:data:`HELD_OUT`) and never trained on: ``bench/detectors.py
--attack`` measures on them, so its figures are cross-dataset. The thresholds are chosen by
five-fold cross-validation over the training sources only: ``alone`` is the lowest
probability at which the model, reading rows it was not fitted on, flags at most
:data:`FPR_BUDGET` of benign prompts; ``agree`` (a cue confirmed) is the lowest at most twice
that.

    python tools/fetch_detector_data.py --out data/detectors --only <the sources in DATA.md>
    python tools/train_attack.py --data data/detectors [--out sidecar/data/attack_model.json.gz]

Needs scikit-learn (in the ``dev`` extra); the package itself never imports it.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from sidecar.checks.attack_model import AttackModel, features, model_text  # noqa: E402
from sidecar.checks.attack_signals import (  # noqa: E402
    SUFFIX_LM_CHARS,
    _suffix,
    model_cues,
    signals,
)
from sidecar.checks.attack_tail import TAIL_FILE, TailModel, replace_tail_model  # noqa: E402
from sidecar.checks.refusal_text import fold  # noqa: E402
from tools.fetch_detector_data import ATTACK_HELD_OUT  # noqa: E402
from tools.train_refusal import _fit_head, vectorise  # noqa: E402

DEFAULT_OUT = ROOT / "sidecar" / "data" / "attack_model.json.gz"
TAIL_FPR_BUDGET = 0.005
"""At most this share of benign training prompts (one in 200) may have a tail the trigram
model calls unlikely (a cue the learned model must confirm), each scored by counts fitted on
the other half of them."""
TAIL_THRESHOLDS = tuple(round(3.0 + 0.1 * i, 1) for i in range(51))
HELD_OUT = ATTACK_HELD_OUT
"""Sources the model never sees (the fetch script's list): the bench's cross-dataset figures
come from them (``promptmap`` is GPL-3.0, ``staqc_sql_titles`` share-alike, ``alpaca_eval_chat``
non-commercial, ``phtest_harmless`` with no licence file: evaluation only in any case)."""
C = 0.3
FPR_BUDGET = 0.002
MAX_FEATURES = 40_000
THRESHOLDS = tuple(round(0.5 + 0.01 * i, 2) for i in range(50))


@dataclass(frozen=True, slots=True)
class Row:
    source: str
    prompt: str
    attack: bool


def load(data: Path, sources: frozenset[str] | None = None) -> list[Row]:
    """Every attack-labelled prompt record in ``data`` (or of the named sources)."""
    rows: list[Row] = []
    for path in sorted(data.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            doc = json.loads(line)
            if "attack" not in doc:
                break  # a response source
            if sources is None or doc["source"] in sources:
                rows.append(Row(doc["source"], doc["prompt"], bool(doc["attack"])))
    return rows


_FEATURES: dict[str, list[str]] = {}


def featurise(text: str) -> list[str]:
    """The features the check computes for ``text`` (memoised)."""
    found = _FEATURES.get(text)
    if found is None:
        folded = fold(text)
        cues = model_cues(signals(text, folded))
        found = _FEATURES[text] = features(model_text(folded), cues, len(text))
    return found


def fit_linear(
    found: Sequence[list[str]], labels: Sequence[bool], c: float, **kwargs: float
) -> AttackModel:
    """A logistic regression over each text's features (``found``), ``c`` its inverse
    regularisation, the weights under 1e-4 dropped: the model of every learned reader."""
    m = vectorise(list(found))
    weights, bias = _fit_head(m.X, [int(label) for label in labels], c)
    kept = {n: w for n, w in zip(m.vocab, weights, strict=True) if abs(w) >= 1e-4}
    return AttackModel(kept, bias, **kwargs)


def fit(rows: Sequence[Row], **kwargs: float) -> AttackModel:
    model = fit_linear([featurise(r.prompt) for r in rows], [r.attack for r in rows], C, **kwargs)
    kept = model.weights
    if len(kept) > MAX_FEATURES:
        top = sorted(kept, key=lambda n: (-abs(kept[n]), n))[:MAX_FEATURES]
        model = AttackModel({n: kept[n] for n in sorted(top)}, model.bias, **kwargs)
    return model


FOLDS = 5


def out_of_fold(
    rows: Sequence[Row],
    fitter: Callable[[Sequence[Row]], AttackModel] | None = None,
    scored: Callable[[str], tuple[str, list[str], int]] | None = None,
    also: Callable[[str], tuple[str, list[str], int] | None] | None = None,
) -> list[float]:
    """Each row's probability from a model fitted on the other folds (every fifth row, in a
    fixed shuffled order); ``fitter`` and ``scored`` (a prompt's arguments to
    :meth:`AttackModel.score`) default to this model's. With ``also``, a second read of a
    prompt where it gives one: the row's probability is then the higher of the two. Leaving
    whole sources out instead was tried: with four benign sources of four different styles
    (role-play set-ups, risky-sounding questions, tasks, long prompted tasks), each left out is
    a style the model never saw, and no threshold kept the budget; the held-out sources measure
    that transfer instead (bench/detectors.py)."""
    return _out_of_fold(rows, fitter or fit, scored or _args, also)[1]


def _out_of_fold(
    rows: Sequence[Row],
    fitter: Callable[[Sequence[Row]], AttackModel],
    scored: Callable[[str], tuple[str, list[str], int]],
    also: Callable[[str], tuple[str, list[str], int] | None] | None,
) -> tuple[list[float], list[float]]:
    """:func:`out_of_fold`'s probabilities of the first read, and of the higher read."""
    order = list(range(len(rows)))
    random.Random(7).shuffle(order)
    first, best = [0.0] * len(rows), [0.0] * len(rows)
    for k in range(FOLDS):
        inside = set(order[k::FOLDS])
        model = fitter([r for i, r in enumerate(rows) if i not in inside])
        for i in inside:
            first[i] = best[i] = model.score(*scored(rows[i].prompt))
            second = also(rows[i].prompt) if also is not None else None
            if second is not None:
                best[i] = max(first[i], model.score(*second))
    return first, best


def _args(text: str) -> tuple[str, list[str], int]:
    folded = fold(text)
    return (
        model_text(folded),
        model_cues(signals(text, folded)),
        len(text),
    )


def reader_main(
    argv: Sequence[str] | None,
    *,
    description: str,
    default_out: Path,
    sets: Sequence[str],
    training_rows: Callable[[Path, Sequence[str]], list[Row]],
    **write: Any,
) -> int:
    """A reader's trainer's command line (``--data``, ``--out``, ``--sets``): its rows from
    ``training_rows`` of the data and the written sets (exit status 2 for a set it refuses or
    cannot find), then :func:`write_reader` with ``write``."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--data", type=Path, required=True, help="directory of normalised JSONL files")
    ap.add_argument("--out", type=Path, default=default_out)
    ap.add_argument("--sets", nargs="+", default=list(sets), help="written sets")
    args = ap.parse_args(argv)
    try:
        rows = training_rows(args.data, args.sets)
    except (ValueError, FileNotFoundError) as exc:
        print(exc, file=sys.stderr)
        return 2
    return write_reader(rows, out=args.out, **write)


def write_reader(
    rows: Sequence[Row],
    *,
    fitter: Callable[..., AttackModel],
    scored: Callable[[str], tuple[str, list[str], int]],
    budget: float,
    label: str,
    meta: dict[str, Any],
    out: Path,
    counted: Callable[[Row], bool] | None = None,
    agree_budget: float | None = None,
    agree_counted: Callable[[Row], bool] | None = None,
    also: Callable[[str], tuple[str, list[str], int] | None] | None = None,
) -> int:
    """Fit a reader of one shape (the frame model, the hijack model) on ``rows`` (``attack``:
    the shape, counted as ``label``), its threshold (``alone``, and ``agree`` the same) the
    lowest at which, out of fold, at most ``budget`` of the benign rows (with ``counted``: of
    those it is true of) read as the shape (with ``agree_budget``, ``agree`` the lowest within
    that budget instead, of the benign rows ``agree_counted`` is true of); write it to ``out``
    with ``meta`` and what it was trained on. With ``also`` (see :func:`out_of_fold`), a row's
    probability for ``alone`` is the higher of its two reads, for ``agree`` the first one's.
    The exit status: 2 where the rows hold only one label."""
    if not any(r.attack for r in rows) or all(r.attack for r in rows):
        print(f"need {label} rows and benign prompts to train on", file=sys.stderr)
        return 2
    counts = source_counts(rows, (label, "other"))
    started = time.perf_counter()
    first, scores = _out_of_fold(rows, fitter, scored, also)
    kept = [(s, r) for s, r in zip(scores, rows, strict=True) if counted is None or counted(r)]
    alone = lowest([s for s, _ in kept], [r for _, r in kept], budget)
    agree = alone
    if agree_budget is not None:
        pairs = [
            (s, r)
            for s, r in zip(first, rows, strict=True)
            if agree_counted is None or agree_counted(r)
        ]
        agree = lowest([s for s, _ in pairs], [r for _, r in pairs], agree_budget)
    shaped = [s for s, r in zip(scores, rows, strict=True) if r.attack]
    recall = sum(s >= alone for s in shaped) / len(shaped)
    model = fitter(rows, alone=alone, agree=agree)
    model.meta = {
        "trained_on": {
            s: {label if a else "other": n for (s2, a), n in counts.items() if s2 == s}
            for s in sorted({r.source for r in rows})
        },
        **meta,
        "held_out_sources": sorted(HELD_OUT),
        "fpr_budget": budget,
        **({} if agree_budget is None else {"agree_fpr_budget": agree_budget}),
        "out_of_fold_recall": round(recall, 4),
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    model.save(out)
    print(
        f"threshold {alone}: out-of-fold recall {recall:.3f} of {len(shaped)} {label} rows; "
        f"{len(model.weights)} features; wrote {out} "
        f"({out.stat().st_size / 1024:.0f} KiB) in {time.perf_counter() - started:.1f} s"
    )
    return 0


def lowest(scores: Sequence[float], rows: Sequence[Row], budget: float) -> float:
    """The lowest threshold at which at most ``budget`` of the benign rows score above."""
    benign = [s for s, r in zip(scores, rows, strict=True) if not r.attack]
    for t in THRESHOLDS:
        if sum(s >= t for s in benign) <= budget * len(benign):
            return t
    return 1.0


def _odd_tail(text: str) -> str | None:
    """The tail the suffix signal would score, if the text has one, its brackets aside: the
    threshold is chosen on every tail of odd tokens, as it was before the signal also asked
    for a bracket left unmatched (with that, 4 of 7,427 benign training prompts have a tail
    to score, and no threshold is told from another)."""
    odd, tail = _suffix(text, unbalanced=0)
    return tail[-SUFFIX_LM_CHARS:] if odd else None


def fit_tail(rows: Sequence[Row]) -> TailModel:
    """The character trigram model of the benign prompts, with the lowest threshold at which
    at most :data:`TAIL_FPR_BUDGET` of them have an unlikely tail, each scored by counts fitted
    on the other half (alternate rows)."""
    benign = [r.prompt for r in rows if not r.attack]
    halves = (benign[0::2], benign[1::2])
    scores: list[float] = []
    for fitted, scored in (halves, halves[::-1]):
        counts = TailModel.fit(fitted)
        tails = (_odd_tail(t) for t in scored)
        scores += [counts.worst(t) for t in tails if t is not None]

    def lowest_within(budget: float) -> float:
        allowed = budget * len(benign)
        return next(
            (t for t in TAIL_THRESHOLDS if sum(s >= t for s in scores) <= allowed),
            float("inf"),
        )

    model = TailModel.fit(benign, lowest_within(TAIL_FPR_BUDGET))
    model.meta = {
        "benign_prompts": len(benign),
        "odd_tails": len(scores),
        "fpr_budget": TAIL_FPR_BUDGET,
    }
    return model


def read_args(read: Callable[[str], str | None]) -> Callable[[str], tuple[str, list[str], int]]:
    """A reader of words' arguments to :meth:`AttackModel.score` for a prompt, as the check
    scores it: what ``read`` reads of it (nothing where it reads none), and no cues."""

    def args(text: str) -> tuple[str, list[str], int]:
        found = read(text) or ""
        return found, [], len(found)

    return args


def read_fitter(read: Callable[[str], str | None], c: float) -> Callable[..., AttackModel]:
    """:func:`fit_linear` of rows on the features of what ``read`` reads of each prompt
    (:func:`read_args`), ``c`` its inverse regularisation."""
    args = read_args(read)

    def fit(rows: Sequence[Row], **kwargs: float) -> AttackModel:
        found = [features(*args(r.prompt)) for r in rows]
        return fit_linear(found, [r.attack for r in rows], c, **kwargs)

    return fit


def written_reader_rows(
    data: Path,
    sets: Sequence[str],
    benign_sets: Sequence[str],
    held_out_sets: Sequence[str],
    read: Callable[[str], str | None],
) -> list[Row]:
    """A learned reader's training rows: the rows of the written ``sets`` (``attack``: the
    shape it reads), the benign rows of ``benign_sets`` (their attacks are other techniques':
    neither side) and the benign prompts of the training sources in ``data``, each one ``read``
    reads (not None). ValueError where a set is one of ``held_out_sets``."""
    from tools.written_prompts import written_rows

    held = (set(sets) | set(benign_sets)) & set(held_out_sets)
    if held:
        raise ValueError(f"held-out written sets are never trained on: {sorted(held)}")
    rows = [Row(s, r["prompt"], bool(r["attack"])) for s in sets for r in written_rows(s)]
    rows += [
        Row(s, r["prompt"], False) for s in benign_sets for r in written_rows(s) if not r["attack"]
    ]
    rows += [
        Row(r.source, r.prompt, False)
        for r in load(data)
        if r.source not in HELD_OUT and not r.attack
    ]
    return [r for r in rows if read(r.prompt) is not None]


def source_counts(
    rows: Sequence[Row], names: tuple[str, str] = ("attack", "benign")
) -> Counter[tuple[str, bool]]:
    """How many rows of each source and label, printed a line each (``names``: the labels')."""
    counts = Counter((r.source, r.attack) for r in rows)
    for (source, label), n in sorted(counts.items()):
        print(f"  {source:<24} {names[0] if label else names[1]:<7} {n:6d}")
    return counts


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, required=True, help="directory of normalised JSONL files")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = ap.parse_args(argv)
    rows = [r for r in load(args.data) if r.source not in HELD_OUT]
    if not rows:
        print("no attack-labelled prompts found", file=sys.stderr)
        return 2
    counts = source_counts(rows)
    started = time.perf_counter()
    tail = fit_tail(rows)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    tail_out = args.out.with_name(TAIL_FILE)
    tail.save(tail_out)
    replace_tail_model(tail)  # the signals (features of the model) read these counts
    _FEATURES.clear()
    print(
        f"tail model: threshold {tail.threshold} bits/char over {tail.meta['odd_tails']} odd "
        f"tails of {tail.meta['benign_prompts']} benign prompts; wrote {tail_out} "
        f"({tail_out.stat().st_size / 1024:.0f} KiB)"
    )
    scores = out_of_fold(rows)
    alone = lowest(scores, rows, FPR_BUDGET)
    agree = min(alone, lowest(scores, rows, 2 * FPR_BUDGET))
    attacks = [s for s, r in zip(scores, rows, strict=True) if r.attack]
    recall = sum(s >= alone for s in attacks) / len(attacks)
    meta = {
        "trained_on": {
            s: {"attack" if a else "benign": n for (s2, a), n in counts.items() if s2 == s}
            for s in sorted({r.source for r in rows})
        },
        "held_out": sorted(HELD_OUT),
        "C": C,
        "fpr_budget": FPR_BUDGET,
        "out_of_fold_model_recall": round(recall, 4),
    }
    model = fit(rows, alone=alone, agree=agree)
    model.meta = meta
    model.save(args.out)
    print(
        f"alone={alone} agree={agree}: out-of-fold model-alone recall {recall:.3f}; "
        f"{len(model.weights)} features; wrote {args.out} "
        f"({args.out.stat().st_size / 1024:.0f} KiB) in {time.perf_counter() - started:.1f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
