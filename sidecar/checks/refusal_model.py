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
downloaded at run time. A batch of texts is scored in C or with numpy
(:mod:`sidecar.checks.refusal_batch`); one text without the compiled scorer in pure Python, one
dictionary look-up per feature and head, made by ``map`` over the feature list; both to the
same bits.
"""

from __future__ import annotations

import gzip
import json
import logging
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from itertools import repeat
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar

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
    shape_heads,
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
    "ModelFile",
    "Outcome",
    "RefusalModel",
    "RefusalScore",
    "View",
    "WeightsFile",
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

_W = TypeVar("_W")


class WeightsFile(Mapping[str, _W], Generic[_W]):
    """A model's weights by name, read from its file when first asked for (``parse`` makes
    them of the file's document): what a model loaded from a file keeps once the compiled
    scorer holds its vocabulary (:meth:`RefusalModel.batch_scorer`,
    :meth:`~.attack_model.AttackModel.native_sums`). Scoring never asks; the trainers, the
    tests and ``explain`` do."""

    __slots__ = ("_parse", "_read", "_weights")

    def __init__(
        self, read: Callable[[], bytes], parse: Callable[[dict[str, Any]], dict[str, _W]]
    ) -> None:
        self._read = read
        self._parse = parse
        self._weights: dict[str, _W] | None = None

    def _all(self) -> dict[str, _W]:
        if self._weights is None:
            self._weights = self._parse(json.loads(gzip.decompress(self._read())))
        return self._weights

    def __getitem__(self, name: str) -> _W:
        return self._all()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())


_M = TypeVar("_M", bound="ModelFile")


class ModelFile:
    """How a model is read from its file (gzipped JSON), and read again: a model read so
    keeps how (``_file``), to let its vocabulary go once a compiled scorer holds it."""

    __slots__ = ()
    _file: Callable[[], bytes] | None

    @classmethod
    def from_json(cls: type[_M], doc: dict[str, Any]) -> _M:
        raise NotImplementedError

    @classmethod
    def load(cls: type[_M], path: Path) -> _M:
        return cls._read(path.read_bytes)

    @classmethod
    def from_package(cls: type[_M], name: str) -> _M:
        """The model file ``name`` shipped in ``sidecar/data``."""
        return cls._read(resources.files("sidecar.data").joinpath(name).read_bytes)

    @classmethod
    def _read(cls: type[_M], read: Callable[[], bytes]) -> _M:
        model = cls.from_json(json.loads(gzip.decompress(read())))
        model._file = read
        return model


@dataclass(slots=True)
class RefusalModel(ModelFile):
    """Vocabulary, one weight per head for each feature, and how it was trained.

    ``veto`` and ``alone`` say how the model and the phrases decide together: a phrase found
    in the opening is a refusal unless the model's probability is below ``veto`` (a
    disclaimer followed by an answer); without a phrase, the model alone calls a refusal at
    ``alone`` or above. The trainer chooses both on held-out sources. The ``refusal`` check
    takes ``alone`` from here only when a rule says ``alone: model``; by default the model
    only vetoes.

    A model read from a file (:meth:`load`, :meth:`from_package`) lets its vocabulary go once
    the compiled scorer holds it (:meth:`batch_scorer`); a model made in memory keeps it.
    """

    weights: Mapping[str, tuple[float, float]]
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
    _file: Callable[[], bytes] | None = field(init=False, repr=False, default=None)
    """How to read the model's file again (:meth:`load`, :meth:`from_package`); None for a
    model made in memory."""

    def __post_init__(self) -> None:
        self._heads = _fixed_heads(self.weights)
        self._bias = (round(self.bias[0] * FIXED), round(self.bias[1] * FIXED))

    def score(self, view: View, phrase: str | None) -> RefusalScore:
        # the heads read before the weights: a model lets its words go weights first
        refusal, full = self._heads
        if isinstance(self.weights, WeightsFile):  # its words are only in the batch scorer
            return self.batch_scorer().score([view], [phrase])[0]
        where = positional(view, phrase)
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
        vocabulary into a table). Threads that ask at once wait for one to make it.

        A model read from a file lets its vocabulary go once the compiled scorer holds it
        (7.5 MiB for the shipped model): scoring then needs only the weights of the names of
        :func:`shape_features`, and ``weights`` reads the rest from the file again when a
        trainer, a test or :meth:`explain` asks (:class:`WeightsFile`)."""
        if self._batch is None:
            with _BATCH_LOCK:
                if self._batch is None:
                    from .refusal_batch import BatchScorer

                    batch = BatchScorer(self)
                    if batch.native and self._file is not None:
                        # weights first: a thread that finds them in the file reads no heads
                        self.weights = WeightsFile(self._file, _file_weights)
                        self._heads = shape_heads(self._heads)
                    self._batch = batch
        return self._batch

    def explain(
        self, view: View, phrase: str | None, head: int = 0, top: int = 5
    ) -> list[tuple[str, float]]:
        """The features that pushed a head most (weight times count), for debugging a
        verdict."""
        names = features(view, phrase) if head == 0 else positional(view, phrase)
        weights = self._all_heads()[head]
        pushed: dict[str, float] = {}
        for n in names:
            if n in weights:
                pushed[n] = pushed.get(n, 0.0) + weights[n] / FIXED
        return sorted(pushed.items(), key=lambda kv: -abs(kv[1]))[:top]

    def _all_heads(self) -> tuple[dict[str, int], dict[str, int]]:
        """Every name's weights in units of 1/FIXED, one dictionary per head, from the file
        again where the model let its vocabulary go (:meth:`batch_scorer`)."""
        heads = self._heads  # read before the weights, as in score
        if isinstance(self.weights, WeightsFile):
            return _fixed_heads(self.weights)
        return heads

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
        weights = _file_weights(doc)
        b0, b1 = (float(b) for b in doc["bias"])
        return cls(
            weights,
            (b0, b1),
            float(doc["veto"]),
            float(doc["alone"]),
            dict(doc.get("meta", {})),
        )

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


def _file_weights(doc: dict[str, Any]) -> dict[str, tuple[float, float]]:
    """The weights by name, one per head, of a model file's document."""
    if doc.get("format") != FORMAT or tuple(doc.get("heads", ())) != HEADS:
        raise ValueError(f"not a refusal model file (format {doc.get('format')!r})")
    names: list[str] = doc["features"]
    columns: list[list[float]] = [doc[head] for head in HEADS]
    if any(len(c) != len(names) for c in columns):
        raise ValueError("refusal model file: feature and weight lists differ in length")
    return {n: (r, f) for n, r, f in zip(names, *columns, strict=True)}


def _fixed_heads(
    weights: Mapping[str, tuple[float, float]],
) -> tuple[dict[str, int], dict[str, int]]:
    """One dictionary per head of the weights in whole units of 1/FIXED, those that round to 0
    left out."""
    heads: tuple[dict[str, int], dict[str, int]] = ({}, {})
    for n, w in weights.items():
        for head, weight in zip(heads, w, strict=True):
            if fixed := round(weight * FIXED):
                head[n] = fixed
    return heads


@cache
def default_model() -> RefusalModel:
    """The model shipped with llm-sidecar, loaded once per process."""
    return RefusalModel.from_package(MODEL_FILE)
