"""The learned half of refusal detection: a linear model over word n-grams.

Phrase lists are precise but miss refusals worded as a judgment ("It is not appropriate
to..."), as an AI persona ("I would respond by politely declining") or as a lecture, and they
fire on disclaimers that are followed by a real answer ("As an AI I have no opinions.
However, ..."). The model reads where those cues live and weighs them:

* the opening (its first words, and the n-grams of its first sentences), where refusals lead;
* the words after the first *pivot* ("however", "but", "instead", "that said", ...) past the
  opening, since what follows a disclaimer decides whether the answer complied;
* the ending, where refusals close with offers ("feel free to ask") and answers with content;
* the shape: length, lines, list items, code, and how much text follows the pivot;
* which refusal phrase (if any) the phrase automaton found in the opening;
* every word of the first :data:`HEAD_CHARS` characters, as often as it occurs, and the
  word pairs of the first :data:`PAIR_TOKENS` words: a refusal is often a lecture or a
  redirection with no "I can't" in it ("It is not appropriate to...", "Instead,
  consider..."), which only the words of the whole answer give away.

Two logistic heads share those features: ``refusal`` (full or partial refusal against
compliance) and ``full`` (full against partial refusal, among refusals). Phrases and model
decide together (see :class:`RefusalModel`): the phrases give precision, the model vetoes
disclaimers that turn into answers and adds refusals it is sure of. The weights file
(``sidecar/data/refusal_model.json.gz``) holds the vocabulary, the weights and where they came
from; ``tools/train_refusal.py`` writes it from the data listed in ``DATA.md``. Nothing is
downloaded at run time. One text is scored in pure Python, one dictionary look-up per feature
and head, made by ``map`` over the feature list; a batch of texts is scored in C or with
numpy (:mod:`sidecar.checks.refusal_batch`), to the same bits.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import logging
import math
import re
import sys
import threading
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from itertools import pairwise, repeat
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

import ahocorasick

if TYPE_CHECKING:
    from .refusal_batch import BatchScorer

log = logging.getLogger(__name__)

__all__ = [
    "HEADS",
    "HEAD_CHARS",
    "LIST_MARKERS",
    "MODEL_FILE",
    "Outcome",
    "RefusalModel",
    "RefusalScore",
    "View",
    "compiled",
    "default_model",
    "features",
    "find_pivot",
    "has_list",
    "native_state",
    "positional",
    "shape_features",
    "sigmoid",
    "words",
]

MODEL_FILE = "refusal_model.json.gz"
"""The shipped weights, a resource of the ``sidecar.data`` package."""

FORMAT = "llm-sidecar/refusal-linear/2"
"""Written into the weights file, so a file of another layout is refused at load."""

Outcome = Literal["compliance", "partial_refusal", "full_refusal"]
"""The three outcomes people label: the main request answered, declined with something else
offered instead (or answered after a refusal), or declined."""

HEAD_CHARS = 1000
"""The model reads this many leading characters (and the ending): its features lie there."""
OPENING_CHARS = 320
OPENING_TOKENS = 8
"""Whitespace-separated tokens of the opening that give n-grams."""
BEGIN_TOKENS = 3
"""Leading tokens that also count with their position ("sure" first means more)."""
PIVOT_MIN_OFFSET = 24
"""A pivot word this close to the start belongs to the refusal itself ("Sorry, but I...")."""
PIVOT_SEARCH_CHARS = 800
"""Pivots are looked for in this many leading characters: disclaimers come first."""
PIVOT_CHARS = 120
PIVOT_TOKENS = 4
ENDING_CHARS = 120
ENDING_TOKENS = 8
FIXED = 1 << 36
"""Weights are added as whole multiples of 1/FIXED (a change below 1e-11 each), so a sum is
exact whatever the order of its terms: the one-by-one and the batch scorer then give the
same bits, on every Python (``sum`` of floats rounds differently from 3.12 on). The batch
scorer holds sums in float64s, exact below 2**53: some 130,000 features of weight 1 (the
shipped model's largest weighs 1.5; a 1 KB answer has about 300)."""
BATCH_MIN = 8
"""Without the compiled scorer, from this many texts on :meth:`RefusalModel.score_many`
scores them with numpy, which costs more than the dictionary look-ups for one text and far
less per text for many. The compiled scorer is the cheaper from one text on."""
PAIR_TOKENS = 40
"""Words of the head whose adjacent pairs are features too (the opening decides most)."""

PIVOTS = (
    "however",
    "but",
    "instead",
    "that said",
    "nevertheless",
    "nonetheless",
    "alternatively",
    "here is",
    "here are",
    "here's",
    "sure",
    "of course",
    "certainly",
)
"""Words after which the rest of the answer says whether the disclaimer before them held."""

LIST_MARKERS = ("\n1.", "\n- ", "\n* ", "\n1)", "\nstep 1")


def _pivot_automaton() -> Any:
    automaton = ahocorasick.Automaton()
    for word in PIVOTS:
        automaton.add_word(word, (word, len(word)))
    automaton.make_automaton()
    return automaton


_PIVOT_AUTOMATON = _pivot_automaton()


_LIST_RE = re.compile("|".join(re.escape(m) for m in LIST_MARKERS))


def has_list(text: str) -> bool:
    """Whether any of :data:`LIST_MARKERS` occurs in ``text``, in one pass (a search per
    marker cost 3 µs of a 1 KB text)."""
    return _LIST_RE.search(text) is not None


def _is_word(c: str) -> bool:
    return c.isalnum() or c == "_"


def find_pivot(folded: str) -> tuple[str, int] | None:
    """The first pivot word (on word boundaries) past the opening words, and where it ends."""
    n = len(folded)
    stop = min(n, PIVOT_SEARCH_CHARS)
    for end, (word, length) in _PIVOT_AUTOMATON.iter(folded, PIVOT_MIN_OFFSET, stop):
        start = end - length + 1
        if _is_word(folded[start - 1]) or (end + 1 < n and _is_word(folded[end + 1])):
            continue
        return word, end + 1
    return None


def _bucket(n: int, edges: Sequence[int]) -> int:
    """How many of the ascending ``edges`` are at most ``n``."""
    return bisect_right(edges, n)


_LENGTH_EDGES = (40, 100, 200, 400, 800, 1600, 3200)
_LINE_EDGES = (1, 3, 8, 20)
_TAIL_EDGES = (40, 150, 400, 1000)


def _grams(out: list[str], prefix: str, tokens: Sequence[str]) -> None:
    prev = "^"
    for tok in tokens:
        out.append(prefix + tok)
        out.append(f"{prefix}{prev} {tok}")
        prev = tok


class View(NamedTuple):
    """The parts of a text the model reads, folded as :func:`sidecar.checks.refusal.fold`
    leaves them (casefolded, quotes made ASCII, line breaks kept)."""

    head: str
    """The first :data:`HEAD_CHARS` characters."""
    tail: str
    """The last :data:`ENDING_CHARS` characters of a text longer than the opening, else ""."""
    length: int
    """Of the whole text."""


def features(view: View, phrase: str | None) -> list[str]:
    """Every feature name of one text: :func:`positional` then :func:`words`."""
    return positional(view, phrase) + words(view)


def positional(view: View, phrase: str | None) -> list[str]:
    """The features that say where a word stands: the opening, the pivot, the ending, the
    shape and the phrase found (``phrase``: the refusal phrase the automaton found in the
    opening, if any). Each name carries a prefix ("o:", "pv=", ...).

    Tokens are whitespace-separated words with their punctuation, which keeps this cheap and
    keeps "sorry," apart from "sorry". A name counts as often as it occurs.
    """
    head = view.head
    out: list[str] = []
    tokens = head[:OPENING_CHARS].split(None, OPENING_TOKENS)[:OPENING_TOKENS]
    _grams(out, "o:", tokens)
    out += [f"b{i}:{tok}" for i, tok in enumerate(tokens[:BEGIN_TOKENS])]
    pivot = find_pivot(head)
    out += shape_features(view, phrase, pivot)
    if pivot is not None:
        end = pivot[1]
        _grams(out, "p:", head[end : end + PIVOT_CHARS].split()[:PIVOT_TOKENS])
    if view.tail:
        _grams(out, "e:", view.tail.split()[-ENDING_TOKENS:])
    return out


def shape_features(view: View, phrase: str | None, pivot: tuple[str, int] | None) -> list[str]:
    """The positional features that are not words: the length and line buckets, the shape,
    the phrase found and the pivot found (``pivot``: :func:`find_pivot` of the head)."""
    head, length = view.head, view.length
    out = [
        f"len:{_bucket(length, _LENGTH_EDGES)}",
        f"lines:{_bucket(head.count(chr(10)), _LINE_EDGES)}",
    ]
    if has_list(head):
        out.append("sh:list")
    if "```" in head:
        out.append("sh:code")
    if phrase is None:
        out.append("ph:none")
    else:
        out.append("ph:any")
        out.append("ph=" + phrase)
    if pivot is None:
        out.append("pv:none")
    else:
        word, end = pivot
        out.append("pv=" + word)
        out.append(f"pvlen:{_bucket(length - end, _TAIL_EDGES)}")
    return out


def words(view: View) -> list[str]:
    """The words of the head, as often as they occur, and the pairs of its first
    :data:`PAIR_TOKENS` words, unprefixed (a pair holds one space). Only the ``refusal`` head
    reads them; a word that happens to read like a positional name counts as that name
    there, in training as at run time."""
    tokens = view.head.split()
    pairs = tokens[:PAIR_TOKENS]
    tokens += map(" ".join, pairwise(pairs))
    return tokens


HEADS = ("refusal", "full")
"""The model's heads, in the order their weights are stored. ``full`` reads only the
:func:`positional` features: among refusals, where the words stand tells full from partial,
and leaving the words out saves it a look-up per word."""


class RefusalScore(NamedTuple):
    """What the model says of one text."""

    refusal: float
    """Probability of a full or partial refusal."""
    full: float
    """Probability that a refusal is a full one (given that it is a refusal)."""


def sigmoid(z: float) -> float:
    if z >= 0:
        return 1.0 / (1.0 + math.exp(-z))
    e = math.exp(z)
    return e / (1.0 + e)


_BATCH_LOCK = threading.Lock()
"""Held while a model's batch scorer is made (rarely: once per model)."""


@cache
def native_state() -> Literal["built", "missing", "stale"]:
    """Whether the batch scorer's compiled part was built with the package (``setup.py``
    builds it where a C compiler is found), and from the C file beside it where there is one.

    An installed package has no C file. A source checkout does, and an editable install keeps
    the module it built until it is installed again: after the file changes, that module is
    old code (``stale``), so numpy scores instead and a warning says how to rebuild."""
    try:
        from ._refusal_native import sums  # noqa: F401  (the module loads)
    except ImportError:
        return "missing"
    native = sys.modules[f"{__package__}._refusal_native"]
    try:
        source = Path(__file__).with_name("_refusal_native.c").read_bytes()
    except OSError:
        return "built"
    if getattr(native, "SOURCE_SHA256", "") != hashlib.sha256(source).hexdigest():
        log.warning(
            "the refusal model's compiled scorer was built from another version of %s; "
            "scoring with numpy instead (pip install -e . rebuilds it)",
            "sidecar/checks/_refusal_native.c",
        )
        return "stale"
    return "built"


def compiled() -> bool:
    """Whether the compiled scorer is used (:func:`native_state` says why not)."""
    return native_state() == "built"


@dataclass(slots=True)
class RefusalModel:
    """Vocabulary, one weight per head for each feature, and how it was trained.

    ``veto`` and ``alone`` say how the model and the phrases decide together: a phrase found
    in the opening is a refusal unless the model's probability is below ``veto`` (a
    disclaimer followed by an answer); without a phrase, the model alone calls a refusal at
    ``alone`` or above. The trainer chooses both on held-out sources. The ``refusal`` check
    takes ``alone`` from here only when a rule says ``alone: model``; by default the model
    only vetoes.
    """

    weights: dict[str, tuple[float, float]]
    bias: tuple[float, float]
    veto: float = 0.2
    alone: float = 0.95
    meta: dict[str, Any] = field(default_factory=dict)
    _heads: tuple[dict[str, int], dict[str, int]] = field(init=False, repr=False)
    """One dictionary per head, for :meth:`score`, built from ``weights`` when the model is
    made: change ``weights`` afterwards and the scores do not follow (make a new model).
    Its weights are in units of 1/:data:`FIXED` (see there)."""
    _bias: tuple[int, int] = field(init=False, repr=False)
    _batch: BatchScorer | None = field(init=False, repr=False, default=None)
    """The batch scorer of :meth:`score_many`, made on first use (see :meth:`batch_scorer`)."""

    def __post_init__(self) -> None:
        heads: tuple[dict[str, int], dict[str, int]] = ({}, {})
        for n, w in self.weights.items():
            for head, weight in zip(heads, w, strict=True):
                if fixed := round(weight * FIXED):
                    head[n] = fixed
        self._heads = heads
        self._bias = (round(self.bias[0] * FIXED), round(self.bias[1] * FIXED))

    def score(self, view: View, phrase: str | None) -> RefusalScore:
        where = positional(view, phrase)
        refusal, full = self._heads
        z0 = sum(map(refusal.get, where, repeat(0)), self._bias[0])
        z0 = sum(map(refusal.get, words(view), repeat(0)), z0)
        z1 = sum(map(full.get, where, repeat(0)), self._bias[1])
        return RefusalScore(sigmoid(z0 / FIXED), sigmoid(z1 / FIXED))

    def score_many(
        self, views: Sequence[View], phrases: Sequence[str | None]
    ) -> list[RefusalScore]:
        """:meth:`score` of each view (with its phrase), in one batch, by
        :class:`~sidecar.checks.refusal_batch.BatchScorer`, which makes no string per word.
        Without its compiled part, below :data:`BATCH_MIN` views one by one, which is then
        cheaper; with it, always (one text costs a third of :meth:`score`)."""
        if len(views) != len(phrases):
            raise ValueError("score_many: one phrase (or None) per view")
        if not views:
            return []
        if len(views) < BATCH_MIN and not compiled():
            return [self.score(v, p) for v, p in zip(views, phrases, strict=True)]
        return self.batch_scorer().score(views, phrases)

    def batch_scorer(self) -> BatchScorer:
        """The batch scorer of :meth:`score_many` (compiled where it was built, else numpy),
        made on first use (about 0.07 s and 3 MB for the shipped model: it hashes the
        vocabulary into a table). Threads that ask at once wait for one to make it."""
        if self._batch is None:
            with _BATCH_LOCK:
                if self._batch is None:
                    from .refusal_batch import BatchScorer

                    self._batch = BatchScorer(self)
        return self._batch

    def explain(
        self, view: View, phrase: str | None, head: int = 0, top: int = 5
    ) -> list[tuple[str, float]]:
        """The features that pushed a head most (weight times count), for debugging a
        verdict."""
        names = features(view, phrase) if head == 0 else positional(view, phrase)
        weights = self._heads[head]
        pushed: dict[str, float] = {}
        for n in names:
            if n in weights:
                pushed[n] = pushed.get(n, 0.0) + weights[n] / FIXED
        return sorted(pushed.items(), key=lambda kv: -abs(kv[1]))[:top]

    # --- the weights file -------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        names = sorted(self.weights)
        doc: dict[str, Any] = {
            "format": FORMAT,
            "heads": list(HEADS),
            "veto": self.veto,
            "alone": self.alone,
            "bias": list(self.bias),
            "features": names,
            "meta": self.meta,
        }
        for i, head in enumerate(HEADS):
            doc[head] = [round(self.weights[n][i], 5) for n in names]
        return doc

    def save(self, path: Path) -> None:
        data = json.dumps(self.to_json(), separators=(",", ":"), sort_keys=True).encode()
        path.write_bytes(gzip.compress(data, mtime=0))

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> RefusalModel:
        if doc.get("format") != FORMAT or tuple(doc.get("heads", ())) != HEADS:
            raise ValueError(f"not a refusal model file (format {doc.get('format')!r})")
        names: list[str] = doc["features"]
        columns: list[list[float]] = [doc[head] for head in HEADS]
        if any(len(c) != len(names) for c in columns):
            raise ValueError("refusal model file: feature and weight lists differ in length")
        b0, b1 = (float(b) for b in doc["bias"])
        return cls(
            {n: (r, f) for n, r, f in zip(names, *columns, strict=True)},
            (b0, b1),
            float(doc["veto"]),
            float(doc["alone"]),
            dict(doc.get("meta", {})),
        )

    @classmethod
    def load(cls, path: Path) -> RefusalModel:
        with gzip.open(path, "rb") as fh:
            return cls.from_json(json.loads(fh.read()))

    @classmethod
    def from_heads(
        cls,
        names: Sequence[str],
        heads: Sequence[tuple[Sequence[float], float]],
        *,
        veto: float = 0.2,
        alone: float = 0.95,
        meta: dict[str, Any] | None = None,
        min_weight: float = 1e-4,
        max_features: int | None = None,
    ) -> RefusalModel:
        """Build a model from the trainer's per-head (weights, bias), in :data:`HEADS` order;
        features that weigh nothing in every head are dropped, and with ``max_features``
        only that many are kept, those of the largest weight in either head (a smaller
        dictionary is a faster one to look words up in)."""
        (w0, b0), (w1, b1) = heads
        weights = {
            n: (a, b)
            for n, a, b in zip(names, w0, w1, strict=True)
            if max(abs(a), abs(b)) >= min_weight
        }
        if max_features is not None and len(weights) > max_features:
            kept = sorted(weights, key=lambda n: (-max(map(abs, weights[n])), n))[:max_features]
            weights = {n: weights[n] for n in sorted(kept)}
        return cls(weights, (b0, b1), veto, alone, meta or {})


@cache
def default_model() -> RefusalModel:
    """The model shipped with llm-sidecar, loaded once per process."""
    ref = resources.files("sidecar.data").joinpath(MODEL_FILE)
    with resources.as_file(ref) as path:
        return RefusalModel.load(path)
