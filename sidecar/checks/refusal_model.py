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
import json
import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from itertools import repeat
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from .refusal_features import (
    BATCH_MIN,
    BEGIN_TOKENS,
    ENDING_CHARS,
    ENDING_TOKENS,
    FIXED,
    HEAD_CHARS,
    HEADS,
    LIST_MARKERS,
    OPENING_CHARS,
    OPENING_TOKENS,
    PAIR_TOKENS,
    PIVOT_CHARS,
    PIVOT_MIN_OFFSET,
    PIVOT_SEARCH_CHARS,
    PIVOT_TOKENS,
    PIVOTS,
    RefusalScore,
    View,
    compiled,
    features,
    find_pivot,
    has_list,
    native_state,
    positional,
    shape_features,
    sigmoid,
    words,
)

if TYPE_CHECKING:
    from .refusal_batch import BatchScorer

log = logging.getLogger(__name__)

__all__ = [
    "BATCH_MIN",
    "BEGIN_TOKENS",
    "ENDING_CHARS",
    "ENDING_TOKENS",
    "FIXED",
    "HEADS",
    "HEAD_CHARS",
    "LIST_MARKERS",
    "MODEL_FILE",
    "OPENING_CHARS",
    "OPENING_TOKENS",
    "PAIR_TOKENS",
    "PIVOTS",
    "PIVOT_CHARS",
    "PIVOT_MIN_OFFSET",
    "PIVOT_SEARCH_CHARS",
    "PIVOT_TOKENS",
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

_BATCH_LOCK = threading.Lock()
"""Held while a model's batch scorer is made (rarely: once per model)."""


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
