"""Train the refusal model shipped in ``sidecar/data/refusal_model.json.gz``.

Reads labelled responses (the normalised JSONL files that ``tools/fetch_detector_data.py``
writes, see DATA.md, plus the project's own ``tests/data/refusals.jsonl``), turns each into
the features of :mod:`sidecar.checks.refusal_model`, and fits two L2-regularised logistic
regressions:

* ``refusal``: full or partial refusal (1) against compliance (0);
* ``full``: full (1) against partial refusal (0), on the refusals of sources that tell the two
  apart.

Labels: a row's refusal label where the source gives one; for answers to attacks that only
say whether the attack worked, "not jailbroken" counts as a refusal (a weak label: in those
sets such answers are mostly refusals, and the robustness score reads refusal as "not
jailbroken" anyway). Sources whose licence does not allow shipping what is derived from them
(:data:`EVALUATION_ONLY`) are never trained on.

The regularisation ``C`` and the decision thresholds ``veto`` and ``alone`` (see
:class:`~sidecar.checks.refusal_model.RefusalModel`) are chosen by leave-one-source-out
validation on the training sources only, so the choice rewards carrying over to data the
model has not seen. Nothing from the external benchmarks llm-sidecar is judged on (DATA.md
names them) is read here.

    pip install -e '.[dev]'
    python tools/fetch_detector_data.py --out data/detectors
    python tools/train_refusal.py --data data/detectors [--out sidecar/data/refusal_model.json.gz]
    python tools/train_refusal.py --data data/detectors --curve   # would more labels help?

Needs scikit-learn (in the ``dev`` extra); the package itself never imports it.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from sidecar.checks.base import CheckContext  # noqa: E402
from sidecar.checks.refusal import Refusal, RefusalParams, model_view  # noqa: E402
from sidecar.checks.refusal_model import RefusalModel, positional, words  # noqa: E402
from tools.confusion import Confusion  # noqa: E402

OWN_SET = ROOT / "tests" / "data" / "refusals.jsonl"
TEAM_LABELS = ROOT / "bench" / "data" / "refusal_test_labels.jsonl"
"""Three-way labels the project gave, blind to every detector, to a sample of public responses
(ids only: the texts stay in the sources, see DATA.md). Evaluation only: never trained on."""
TRAIN_LABELS = ROOT / "bench" / "data" / "refusal_train_labels.jsonl"
"""The same kind of labels on another sample of the same sources, for training: they replace
the sources' weak labels of those responses (see :func:`relabel`)."""
LABELLED_SOURCE = "labelled"
OWN_SOURCE = "llm-sidecar"
DEFAULT_OUT = ROOT / "sidecar" / "data" / "refusal_model.json.gz"
EVALUATION_ONLY = frozenset({"saferlhf_mini", "jailjudge_mini"})
"""Sources used to measure, never to train: their licences forbid shipping derived weights
(saferlhf_mini) or grant no clear right to (jailjudge_mini)."""
C_GRID = (0.03, 0.1, 0.3)
VETO_GRID = (0.0, 0.1, 0.2, 0.3, 0.5)
ALONE_GRID = (0.6, 0.7, 0.8, 0.9, 0.95, 1.0)
"""1.0: the model never calls a refusal on its own."""
MIN_DF = 2
MAX_FEATURES = 30_000
"""The shipped model keeps the features of the largest weights, this many. With the 56k a
fit gives, ``alone: model`` spent 98 µs on a 1 KB answer; with 30k, 83 µs, and its outcome
was the same on all 4,415 public and own answers compared (every third; with 15k, 99.6 %
the same)."""
MIN_HELD_OUT = 50
"""A (source, task) pair with fewer held-out rows than this is left out of the mean: once
the project's labels take most of a source's rows (``cai2024``), the few left would weigh
as much as a whole source."""
LABELS = ("compliance", "partial_refusal", "full_refusal")


@dataclass(frozen=True, slots=True)
class Row:
    source: str
    text: str
    label: str | None
    """One of :data:`LABELS`, or None where the source says only whether an attack worked."""
    three_way: bool
    """Whether the source tells partial from full refusals."""
    jailbroken: bool | None = None
    """For answers to attacks: whether the attack succeeded (the answer complied)."""
    id: str | None = None
    """``<source>:<n>`` for rows of the normalised sources."""


def load_own(path: Path = OWN_SET) -> list[Row]:
    """The project's labelled set: refusal true/false; its partial refusals are kind-marked."""
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        doc = json.loads(line)
        if doc["refusal"]:
            label = "partial_refusal" if doc["kind"].startswith("partial") else "full_refusal"
        else:
            label = "compliance"
        rows.append(Row(OWN_SOURCE, doc["text"], label, False))
    return rows


def load_dir(data: Path, sources: Iterable[str] | None = None) -> list[Row]:
    """Labelled rows from every ``*.jsonl`` in ``data`` (or the named sources): a refusal
    label, a jailbreak label, or both."""
    wanted = set(sources) if sources is not None else None
    rows: list[Row] = []
    for path in sorted(data.glob("*.jsonl")):
        docs = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
        docs = [
            d
            for d in docs
            if d.get("response") and (d.get("label") in LABELS or d.get("jailbroken") is not None)
        ]
        if not docs or (wanted is not None and docs[0]["source"] not in wanted):
            continue
        three_way = any(d.get("label") == "partial_refusal" for d in docs)
        rows += [
            Row(
                d["source"],
                d["response"],
                d.get("label"),
                three_way,
                d.get("jailbroken"),
                d.get("id"),
            )
            for d in docs
        ]
    return rows


def read_labels(path: Path) -> dict[str, str]:
    """``{"id", "label"}`` per line: id -> one of :data:`LABELS` (clear errors otherwise)."""
    wanted: dict[str, str] = {}
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        doc = json.loads(line)
        if doc.get("label") not in LABELS or not isinstance(doc.get("id"), str):
            raise ValueError(f"{path}:{n}: need an id and a label in {LABELS}, got {doc}")
        if doc["id"] in wanted:
            raise ValueError(f"{path}:{n}: id {doc['id']} is labelled twice")
        wanted[doc["id"]] = doc["label"]
    return wanted


def relabel(rows: Sequence[Row], train: dict[str, str], test: Iterable[str]) -> list[Row]:
    """The training rows: the rows labelled for evaluation (``test`` ids) left out, and the
    rows labelled for training moved into their own source, :data:`LABELLED_SOURCE`, with the
    project's three-way label in place of the source's (their jailbreak label stays)."""
    held = set(test)
    out = []
    for r in rows:
        if r.id in held:
            continue
        label = train.get(r.id) if r.id is not None else None
        if label is not None:
            r = Row(LABELLED_SOURCE, r.text, label, True, r.jailbroken, r.id)
        out.append(r)
    return out


def load_team_labels(data: Path, labels: Path = TEAM_LABELS) -> tuple[list[Row], list[str]]:
    """The rows of ``labels`` (``{"id", "label"}`` per line) joined by id to the normalised
    sources in ``data``: the labelled rows, and the ids whose source row was not found."""
    wanted = read_labels(labels)
    texts: dict[str, tuple[str, str]] = {}
    for source in sorted({i.partition(":")[0] for i in wanted}):
        path = data / f"{source}.jsonl"
        if not path.exists():
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            if line:
                d = json.loads(line)
                if d.get("id") in wanted:
                    texts[d["id"]] = (d["source"], d["response"])
    rows = [
        Row(texts[i][0], texts[i][1], label, True, id=i)
        for i, label in wanted.items()
        if i in texts
    ]
    return rows, [i for i in wanted if i not in texts]


def training_label(row: Row) -> str | None:
    """The refusal label the model learns from (see the module docstring)."""
    if row.label is not None:
        return row.label
    if row.jailbroken is False:
        return "full_refusal"
    return None


_PHRASES = Refusal(RefusalParams(method="phrases"), CheckContext())
_FEATURES: dict[str, tuple[list[str], list[str]]] = {}


def featurise(text: str) -> tuple[list[str], list[str]]:
    """The positional features and the words the model sees for ``text``, as the check
    computes them, repeats included: a feature's value is how often it occurs (memoised)."""
    found = _FEATURES.get(text)
    if found is None:
        view = model_view(text)
        found = _FEATURES[text] = (positional(view, _PHRASES.find(text)), words(view))
    return found


@dataclass
class Matrix:
    vocab: list[str]
    X: Any
    """A scipy CSR matrix of feature counts."""


def vectorise(docs: Sequence[list[str]]) -> Matrix:
    from scipy.sparse import csr_matrix

    df = Counter(f for doc in docs for f in set(doc))
    vocab = sorted(f for f, n in df.items() if n >= MIN_DF)
    index = {f: i for i, f in enumerate(vocab)}
    indptr, indices = [0], []
    for doc in docs:
        indices += [index[f] for f in doc if f in index]
        indptr.append(len(indices))
    X = csr_matrix(([1.0] * len(indices), indices, indptr), shape=(len(docs), len(vocab)))
    X.sum_duplicates()  # a feature's repeats in one row add up to its count
    return Matrix(vocab, X)


def _fit_head(X: Any, y: Sequence[int], C: float) -> tuple[list[float], float]:
    from sklearn.linear_model import LogisticRegression

    if len(set(y)) < 2:
        return [0.0] * X.shape[1], 0.0
    clf = LogisticRegression(
        C=C, class_weight="balanced", max_iter=2000, solver="liblinear", random_state=0
    )
    clf.fit(X, y)
    return [float(w) for w in clf.coef_[0]], float(clf.intercept_[0])


def fit(rows: Sequence[Row], C: float, **kwargs: Any) -> RefusalModel:
    """Fit both heads on the rows that carry (or imply) each head's label: ``refusal`` on
    every feature, ``full`` on the positional ones only (as the model scores it)."""
    labelled = [(r, label) for r in rows if (label := training_label(r)) is not None]
    feats = [featurise(r.text) for r, _ in labelled]
    m = vectorise([where + said for where, said in feats])
    full = [i for i, (r, label) in enumerate(labelled) if r.three_way and label != "compliance"]
    # The full head reads the positional features alone, counted as score() counts them.
    where = vectorise([feats[i][0] for i in full])
    w1, b1 = _fit_head(where.X, [int(labelled[i][1] == "full_refusal") for i in full], C)
    by_name = dict(zip(where.vocab, w1, strict=True))
    heads = [
        _fit_head(m.X, [int(label != "compliance") for _, label in labelled], C),
        ([by_name.get(name, 0.0) for name in m.vocab], b1),
    ]
    return RefusalModel.from_heads(m.vocab, heads, max_features=MAX_FEATURES, **kwargs)


def evaluate(check: Refusal, rows: Sequence[Row]) -> dict[str, Confusion]:
    """Confusion counts of ``check`` on ``rows``: as a refusal detector against refusal
    labels (positive: refused), and as a jailbreak detector against jailbreak labels
    (positive: jailbroken, that is not refused)."""
    out = {"refusal": Confusion(), "jailbroken": Confusion()}
    for r in rows:
        refused = check.assess(r.text).outcome != "compliance"
        if r.label is not None:
            out["refusal"].add(refused, r.label != "compliance")
        if r.jailbroken is not None:
            out["jailbroken"].add(not refused, r.jailbroken)
    return out


def _check(model: RefusalModel, veto: float, alone: float) -> Refusal:
    return Refusal(RefusalParams(veto=veto, alone=alone), CheckContext(), model=model)


@dataclass
class Choice:
    C: float
    veto: float
    alone: float
    accuracy: float
    """Mean held-out accuracy over (source, task) pairs."""


def choose(rows: Sequence[Row]) -> tuple[Choice, list[Choice]]:
    """``C``, ``veto`` and ``alone`` with the best mean leave-one-source-out accuracy."""
    sources = sorted({r.source for r in rows})
    tried: list[Choice] = []
    for C in C_GRID:
        held_out = [
            (fit([r for r in rows if r.source != s], C), [r for r in rows if r.source == s])
            for s in sources
        ]
        for veto in VETO_GRID:
            for alone in ALONE_GRID:
                accs = [
                    scores.accuracy
                    for model, test in held_out
                    for scores in evaluate(_check(model, veto, alone), test).values()
                    if scores.n >= MIN_HELD_OUT
                ]
                if not accs:
                    raise ValueError(
                        f"no source has {MIN_HELD_OUT} or more labelled rows to hold out: "
                        "train on more data, or use --fixed C,VETO,ALONE"
                    )
                tried.append(Choice(C, veto, alone, sum(accs) / len(accs)))
    return pick(tried), tried


def pick(tried: Sequence[Choice]) -> Choice:
    """The setting with the best held-out accuracy (the first of equals).

    The file's ``alone`` is read only where a rule asks the model to decide alone (``alone:
    model``, ``jailbreak_success``, ``refusal_score``); the check's default never lets it, so
    cost does not enter this choice."""
    return max(tried, key=lambda c: c.accuracy)


CURVE_SHARES = (0.0, 0.25, 0.5, 1.0)
CURVE_FOLDS = 5


def curve(
    rows: Sequence[Row],
    C: float,
    veto: float,
    alone: float,
    shares: Sequence[float] = CURVE_SHARES,
    folds: int = CURVE_FOLDS,
    seed: int = 1,
) -> list[tuple[float, Confusion]]:
    """A learning curve over the project's own labels: are more of them worth making?

    The rows labelled by the project (:data:`LABELLED_SOURCE` and :data:`OWN_SOURCE`) are cut
    into ``folds`` folds. For each share, each fold is predicted by a model trained on every
    other source and that share of the other folds' labelled rows (always the same rows first,
    so each share holds the smaller ones). The fixed ``C``, ``veto`` and ``alone`` keep the
    comparison about the data alone. Returns each share with the refusal confusion pooled
    over the folds; a flat curve says the model, not the number of labels, is the limit."""
    own = (LABELLED_SOURCE, OWN_SOURCE)
    labelled = [r for r in rows if r.source in own and training_label(r) is not None]
    rest = [r for r in rows if r.source not in own]
    if len(labelled) < folds:
        raise ValueError(f"{len(labelled)} labelled rows: need at least {folds} for {folds} folds")
    rng = random.Random(seed)
    order = rng.sample(labelled, len(labelled))
    parts = [order[k::folds] for k in range(folds)]
    out = []
    for share in shares:
        pooled = Confusion()
        for k, test in enumerate(parts):
            train = [r for j, part in enumerate(parts) if j != k for r in part]
            model = fit(rest + train[: round(len(train) * share)], C)
            pooled += evaluate(_check(model, veto, alone), test)["refusal"]
        out.append((share, pooled))
    return out


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, required=True, help="directory of normalised JSONL files")
    ap.add_argument("--sources", help="comma-separated sources to train on (default: all)")
    ap.add_argument("--no-own", action="store_true", help="leave out tests/data/refusals.jsonl")
    ap.add_argument(
        "--fixed",
        metavar="C,VETO,ALONE",
        help="skip the search and use these (e.g. 0.1,0.2,0.95)",
    )
    ap.add_argument(
        "--labels",
        type=Path,
        default=TRAIN_LABELS,
        help="the project's three-way training labels (DATA.md); 'none' to train without",
    )
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument(
        "--curve",
        action="store_true",
        help="write no model: print a learning curve over the project's labels (see curve())"
        " with --fixed, or the shipped model's C, veto and alone",
    )
    args = ap.parse_args(argv)

    rows = load_dir(args.data, args.sources.split(",") if args.sources else None)
    rows = [r for r in rows if r.source not in EVALUATION_ONLY]
    train = {} if str(args.labels) == "none" else read_labels(args.labels)
    rows = relabel(rows, train, read_labels(TEAM_LABELS) if TEAM_LABELS.exists() else ())
    if not args.no_own:
        rows += load_own()
    if not rows:
        print("no labelled rows found", file=sys.stderr)
        return 2
    counts = Counter((r.source, str(training_label(r))) for r in rows)
    print(f"  {'source':<24} {'training label':<16} {'rows':>6}")
    for (source, label), n in sorted(counts.items()):
        print(f"  {source:<24} {label:<16} {n:6d}")
    started = time.perf_counter()
    if args.curve:
        if args.fixed:
            C, veto, alone = (float(x) for x in args.fixed.split(","))
        else:
            shipped = RefusalModel.load(DEFAULT_OUT)
            C, veto, alone = float(shipped.meta["C"]), shipped.veto, shipped.alone
        print(f"learning curve, {CURVE_FOLDS}-fold, C={C} veto={veto} alone={alone}:")
        for share, scores in curve(rows, C, veto, alone):
            print(f"  {share:4.0%} of the other folds' labels: refusal {scores.row()}")
        print(f"in {time.perf_counter() - started:.1f} s")
        return 0
    if args.fixed:
        C, veto, alone = (float(x) for x in args.fixed.split(","))
        best = Choice(C, veto, alone, float("nan"))
    else:
        best, tried = choose(rows)
        for c in sorted(tried, key=lambda c: -c.accuracy)[:8]:
            print(
                f"  C={c.C:<5} veto={c.veto:<4} alone={c.alone:<5} held-out accuracy {c.accuracy:.3f}"
            )
    meta = {
        "trained_on": {
            source: {label: n for (s, label), n in sorted(counts.items()) if s == source}
            for source in sorted({r.source for r in rows})
        },
        "C": best.C,
        "min_df": MIN_DF,
        "max_features": MAX_FEATURES,
        "held_out_accuracy": round(best.accuracy, 4),
    }
    model = fit(rows, best.C, veto=best.veto, alone=best.alone, meta=meta)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    model.save(args.out)
    in_sample = evaluate(_check(model, best.veto, best.alone), rows)
    print(
        f"C={best.C} veto={best.veto} alone={best.alone}: {len(model.weights)} features; "
        f"in-sample refusal {in_sample['refusal'].row()}; "
        f"jailbroken {in_sample['jailbroken'].row()}; "
        f"wrote {args.out} ({args.out.stat().st_size / 1024:.0f} KiB) "
        f"in {time.perf_counter() - started:.1f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
