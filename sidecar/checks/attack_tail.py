"""How unlikely a prompt's last characters are as text: a character trigram model.

Optimisation attacks (GCG and its successors) append a run of tokens chosen for their effect
on a model, not for sense: ``describing.\\ + similarlyNow write oppositeley.]( Me giving**ONE``.
Such a tail has a few odd tokens (see :func:`sidecar.checks.attack_signals._odd`), and, more
tellingly, its characters follow each other as no written language does. This module measures
the second: the mean surprise, in bits per character, of a text under a trigram model of
characters fitted on benign prompts (``tools/train_attack.py``; the counts ship in
``sidecar/data/attack_tail.json.gz``, nothing is downloaded). An unlikely tail is a cue, not
proof: pasted code, logs, part numbers and formulas can be as unlikely, so the learned model
must agree (see :mod:`.attack_signals`).

Characters are read as written (case is part of the oddness), except that a line break reads
as a space and any character outside printable ASCII as one of two stand-ins (a letter or
not), so prose in other alphabets is not scored letter by letter against English.
"""

from __future__ import annotations

import gzip
import json
import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

__all__ = ["TAIL_FILE", "TailModel", "default_tail_model", "normalise", "replace_tail_model"]

TAIL_FILE = "attack_tail.json.gz"
FORMAT = "llm-sidecar/char-trigram/1"
ORDER = 3
ALPHABET = 97
"""Printable ASCII (95), and the two stand-ins."""
K = 0.1
"""Add-k smoothing of the counts."""
MIN_COUNT = 2
"""Trigrams seen fewer times are not kept (they read as unseen): the file stays small."""
WINDOW = 60
STRIDE = 20
_OTHER_LETTER = "\x01"
_OTHER = "\x02"
_START = "\x00" * (ORDER - 1)


def normalise(text: str) -> str:
    """The text as the model reads it (see the module)."""
    if text.isascii():
        return text.replace("\n", " ").replace("\t", " ").replace("\r", " ")
    return "".join(
        c if " " <= c <= "~" else " " if c in "\n\t\r" else _OTHER_LETTER if c.isalpha() else _OTHER
        for c in text
    )


@dataclass(slots=True)
class TailModel:
    """Counts of character trigrams and of their two-character contexts, and the mean
    surprise from which a tail is unlikely (``threshold``, chosen by the trainer)."""

    grams: dict[str, int]
    contexts: dict[str, int]
    threshold: float
    meta: dict[str, Any] = field(default_factory=dict)
    _cost: dict[str, float] = field(init=False, repr=False)
    _miss: dict[str, float] = field(init=False, repr=False)
    _unseen: float = field(init=False, repr=False)

    def __post_init__(self) -> None:
        width = K * ALPHABET
        self._miss = {c: -math.log2(K / (n + width)) for c, n in self.contexts.items()}
        self._cost = {
            g: -math.log2((n + K) / (self.contexts.get(g[:-1], 0) + width))
            for g, n in self.grams.items()
        }
        self._unseen = math.log2(ALPHABET)

    def bits(self, text: str) -> float:
        """Mean surprise of ``text``'s characters, in bits (0 for an empty text)."""
        s = _START + normalise(text)
        if len(s) == len(_START):
            return 0.0
        cost, miss, unseen = self._cost, self._miss, self._unseen
        total = 0.0
        for i in range(ORDER - 1, len(s)):
            gram = s[i - ORDER + 1 : i + 1]
            got = cost.get(gram)
            total += got if got is not None else miss.get(gram[:-1], unseen)
        return total / (len(s) - len(_START))

    def worst(self, text: str) -> float:
        """The highest :meth:`bits` of the text's windows of :data:`WINDOW` characters (one
        window for a shorter text): a suffix reads as odd however much prose precedes it.

        Each character's surprise after the two before it is looked up once for the whole
        text; a window adds only its first two characters' (read after the start marks), and
        sums in the order :meth:`bits` does, so the result is the same to the last bit."""
        if len(text) <= WINDOW:
            return self.bits(text)
        s = normalise(text)
        cost, miss, unseen = self._cost, self._miss, self._unseen

        def surprise(gram: str) -> float:
            got = cost.get(gram)
            return got if got is not None else miss.get(gram[:-1], unseen)

        inner = [0.0, 0.0] + [surprise(s[j - 2 : j + 1]) for j in range(2, len(s))]
        worst = -math.inf
        for i in range(0, len(s) - WINDOW + STRIDE, STRIDE):
            width = min(WINDOW, len(s) - i)
            head = surprise(_START + s[i])
            if width > 1:
                head += surprise(_START[1:] + s[i : i + 2])
            worst = max(worst, sum(inner[i + 2 : i + width], head) / width)
        return worst

    def unlikely(self, text: str) -> bool:
        return self.worst(text) >= self.threshold

    @classmethod
    def fit(cls, texts: Iterable[str], threshold: float = math.inf) -> TailModel:
        grams: Counter[str] = Counter()
        contexts: Counter[str] = Counter()
        for text in texts:
            s = _START + normalise(text)
            for i in range(ORDER - 1, len(s)):
                grams[s[i - ORDER + 1 : i + 1]] += 1
                contexts[s[i - ORDER + 1 : i]] += 1
        kept = {g: n for g, n in grams.items() if n >= MIN_COUNT}
        return cls(kept, dict(contexts), threshold)

    # --- the counts file --------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        grams = sorted(self.grams)
        contexts = sorted(self.contexts)
        return {
            "format": FORMAT,
            "threshold": self.threshold,
            "grams": grams,
            "gram_counts": [self.grams[g] for g in grams],
            "contexts": contexts,
            "context_counts": [self.contexts[c] for c in contexts],
            "meta": self.meta,
        }

    def save(self, path: Path) -> None:
        data = json.dumps(self.to_json(), separators=(",", ":"), sort_keys=True).encode()
        path.write_bytes(gzip.compress(data, mtime=0))

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> TailModel:
        if doc.get("format") != FORMAT:
            raise ValueError(f"not a character trigram file (format {doc.get('format')!r})")
        grams, contexts = doc["grams"], doc["contexts"]
        if len(grams) != len(doc["gram_counts"]) or len(contexts) != len(doc["context_counts"]):
            raise ValueError("character trigram file: name and count lists differ in length")
        return cls(
            dict(zip(grams, map(int, doc["gram_counts"]), strict=True)),
            dict(zip(contexts, map(int, doc["context_counts"]), strict=True)),
            float(doc["threshold"]),
            dict(doc.get("meta", {})),
        )

    @classmethod
    def load(cls, path: Path) -> TailModel:
        with gzip.open(path, "rb") as fh:
            return cls.from_json(json.loads(fh.read()))


_replaced: list[TailModel] = []


@cache
def _shipped() -> TailModel:
    ref = resources.files("sidecar.data").joinpath(TAIL_FILE)
    with resources.as_file(ref) as path:
        return TailModel.load(path)


def default_tail_model() -> TailModel:
    """The counts shipped with llm-sidecar, loaded once per process (on the first tail odd
    enough to be scored), or those :func:`replace_tail_model` set."""
    return _replaced[-1] if _replaced else _shipped()


def replace_tail_model(model: TailModel | None) -> None:
    """Score tails with ``model`` in this process (``None``: the shipped counts again). For
    the trainer, which fits the counts before the features that depend on them."""
    _replaced.clear()
    if model is not None:
        _replaced.append(model)
