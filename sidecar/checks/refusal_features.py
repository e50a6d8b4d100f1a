"""What the refusal model reads of a text: its features, and the constants that place them.

:mod:`sidecar.checks.refusal_model` (one text at a time, by name) and
:mod:`sidecar.checks.refusal_batch` (a batch at once, by hash, in C or numpy) both build on
this module and must name the same features, so that both give the same scores to the bit.
"""

from __future__ import annotations

import hashlib
import logging
import math
import re
import sys
from bisect import bisect_right
from collections.abc import Sequence
from functools import cache
from itertools import pairwise
from pathlib import Path
from typing import Any, Literal, NamedTuple, Protocol

import ahocorasick

log = logging.getLogger("sidecar.checks.refusal_model")

__all__ = [
    "BATCH_MIN",
    "BEGIN_TOKENS",
    "ENDING_CHARS",
    "ENDING_TOKENS",
    "FIXED",
    "HEADS",
    "HEAD_CHARS",
    "LIST_MARKERS",
    "OPENING_CHARS",
    "OPENING_TOKENS",
    "PAIR_TOKENS",
    "PIVOTS",
    "PIVOT_CHARS",
    "PIVOT_MIN_OFFSET",
    "PIVOT_SEARCH_CHARS",
    "PIVOT_TOKENS",
    "RefusalScore",
    "View",
    "Weights",
    "compiled",
    "features",
    "find_pivot",
    "has_list",
    "native_state",
    "positional",
    "shape_features",
    "sigmoid",
    "words",
]

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
    """The parts of a text the model reads, folded as :func:`sidecar.checks.refusal_text.fold`
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


SHAPE_PREFIXES = ("len:", "lines:", "sh:", "ph:", "ph=", "pv:", "pv=", "pvlen:")
"""How each name :func:`shape_features` gives starts: the only names the compiled batch scorer
looks up in Python, all others' weights being in its table."""


def shape_heads(
    heads: tuple[dict[str, int], dict[str, int]],
) -> tuple[dict[str, int], dict[str, int]]:
    """Of each head's weights, those of names :func:`shape_features` can give."""
    refusal, full = (
        {n: w for n, w in head.items() if n.startswith(SHAPE_PREFIXES)} for head in heads
    )
    return refusal, full


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


class Weights(Protocol):
    """What the batch scorer reads of a model (a :class:`~sidecar.checks.refusal_model.
    RefusalModel`): its heads' weights and biases, in units of 1/:data:`FIXED`."""

    def _all_heads(self) -> tuple[dict[str, int], dict[str, int]]: ...
    @property
    def _bias(self) -> tuple[int, int]: ...
