"""The refusal model scored for many texts at once, with numpy or in C.

:meth:`RefusalModel.score <sidecar.checks.refusal_model.RefusalModel.score>` builds every
feature of a text as a Python string and looks each one up in a dictionary. Most of that cost
is making the strings: a 1 KB answer has about 200 words and pairs, and allocating them costs
more than the arithmetic. This scorer makes no string per word. It lays the texts of a batch
out as one array of code points and computes a 64-bit hash of every feature from it: the
words of the head, their first pairs, the opening, pivot and ending n-grams with their
prefixes. It then looks the hashes up in an open-addressing table built once from the
model's vocabulary. The handful of features that are not words (length and line buckets, the
shape, the phrase and the pivot found) are still named and looked up one by one.

The hash of a name is its polynomial hash over code points, ``H(s) = sum((ord(c) + 1) *
P**i)`` modulo 2**64. It composes, ``H(x + y) = H(x) + P**len(x) * H(y)``, which is what lets
"o:" + previous word + " " + word be hashed from the hashes of its parts, and a token's hash
be read off prefix sums over the whole batch. The features are those that
:func:`~sidecar.checks.refusal_model.positional` and
:func:`~sidecar.checks.refusal_model.words` name, and the weights are whole multiples of
1/:data:`~sidecar.checks.refusal_model.FIXED`, so the sums are exact in any order: the tests
hold the two scorers equal to the bit. Two different names with one hash would count as one.
The hash is linear, so anyone who knows its base can compute a token that hashes like a word
of the vocabulary; the base is therefore drawn at random when the process starts (as Python
does for its own string hashes), and a chance collision of two names has odds of 2**-64. A
collision inside the vocabulary is refused when the table is built.

Where the package was built with a C compiler, the word features are hashed, looked up and
summed by ``_refusal_native.c`` instead of numpy: the same hash, the same table, the same
sums, read straight from the strings with no array made (about twice as fast again; see
``setup.py``). This module still names the shape features and finds the pivot, and the numpy
path stays for installs without the compiled part; the tests hold all three scorers equal.
"""

from __future__ import annotations

import secrets
import threading
from collections.abc import Callable, Iterator, Sequence

import numpy as np
import numpy.typing as npt

from .refusal_features import (
    BEGIN_TOKENS,
    ENDING_TOKENS,
    FIXED,
    OPENING_CHARS,
    OPENING_TOKENS,
    PAIR_TOKENS,
    PIVOT_CHARS,
    PIVOT_TOKENS,
    RefusalScore,
    View,
    Weights,
    compiled,
    find_pivot,
    native_state,
    shape_features,
    shape_heads,
    sigmoid,
)

__all__ = [
    "BatchScorer",
    "Table",
    "chunks",
    "compiled",
    "hash_names",
    "join_hashes",
    "name_hash",
    "native_word_sums",
    "tokens",
]

U64 = npt.NDArray[np.uint64]
F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]
Bools = npt.NDArray[np.bool_]

_MASK = (1 << 64) - 1
_P = secrets.randbits(64) | 1
"""The hash's base, drawn per process (see the module): odd, so it has an inverse modulo
2**64. No hash outlives the process, so nothing depends on its value."""
_P_INV = pow(_P, -1, 1 << 64)
_MIX = np.uint64(0x9E3779B97F4A7C15)
"""Spreads a hash over the table's slots (the slot is the top bits of the product)."""
CHUNK_CHARS = 1 << 16
"""A batch is laid out in chunks of about this many characters: the tables of powers are as
long as a chunk, and a chunk's arrays stay in the processor's cache."""
_CHUNK_SLACK = 8192
"""A chunk may pass :data:`CHUNK_CHARS` by its last event: room for one of a usual size (a
longer one grows the tables)."""


def name_hash(name: str) -> int:
    """``H(name)``, in Python: what the batch scorer computes for a feature's name."""
    h = 0
    power = 1
    for c in name:
        h = (h + (ord(c) + 1) * power) & _MASK
        power = (power * _P) & _MASK
    return h


def _powers(base: int, n: int) -> U64:
    """base**i modulo 2**64 for i below n, by doubling: each step multiplies the powers so
    far by the next power of two of ``base``."""
    out = np.ones(max(n, 1), dtype=np.uint64)
    have, step = 1, base
    while have < n:
        take = min(have, n - have)
        out[have : have + take] = out[:take] * np.uint64(step)
        have += take
        step = step * step & _MASK
    return out[:n]


class _Powers:
    """P**i, P**-i and the sum of P**j for j < i, for i below a length that grows when a
    chunk needs more. The three tables are replaced together, as one tuple, so a thread that
    reads them while another grows them gets the old ones or the new ones, never a mix."""

    def __init__(self) -> None:
        empty = np.ones(0, dtype=np.uint64)
        self.tables = (empty, empty, empty)
        self._lock = threading.Lock()

    def upto(self, n: int) -> tuple[U64, U64, U64]:
        tables = self.tables
        if n > len(tables[0]):
            with self._lock:
                tables = self.tables
                if n > len(tables[0]):
                    size = max(n, CHUNK_CHARS + _CHUNK_SLACK, 2 * len(tables[0]))
                    up = _powers(_P, size)
                    series = np.zeros(size, dtype=np.uint64)
                    np.cumsum(up[:-1], out=series[1:])
                    tables = self.tables = (up, _powers(_P_INV, size), series)
        return tables


_POWERS = _Powers()


def _code_points(text: str) -> tuple[npt.NDArray[np.uint8] | npt.NDArray[np.uint32], bytes | None]:
    """The text's code points, and its bytes when it is ASCII (then a byte each)."""
    if text.isascii():
        raw = text.encode("ascii")
        return np.frombuffer(raw, np.uint8), raw
    return np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32), None


def _span_hashes(
    cp: npt.NDArray[np.uint8] | npt.NDArray[np.uint32], start: I64, length: I64
) -> U64:
    """``H`` of the spans of ``cp`` that start at ``start`` and are ``length`` long: the
    sum of ord(c) * P**i read off prefix sums over the whole array, plus sum(P**i) for the
    "+ 1" of each character. Grows the tables of powers to the array's length."""
    up, down, series = _POWERS.upto(len(cp) + 1)
    prefix = np.empty(len(cp) + 1, dtype=np.uint64)
    prefix[0] = 0
    np.cumsum(np.multiply(cp, up[: len(cp)], dtype=np.uint64), out=prefix[1:])
    return (prefix[start + length] - prefix[start]) * down[start] + series[length]  # type: ignore[no-any-return]


def _chunks(sizes: Sequence[int]) -> Iterator[tuple[int, int]]:
    """Consecutive ranges [lo, hi) of the items, each of about :data:`CHUNK_CHARS` in all
    (at least one item, however large)."""
    lo = 0
    while lo < len(sizes):
        hi, chars = lo, 0
        while hi < len(sizes) and (hi == lo or chars < CHUNK_CHARS):
            chars += sizes[hi]
            hi += 1
        yield lo, hi
        lo = hi


chunks = _chunks


def hash_names(names: Sequence[str]) -> U64:
    """:func:`name_hash` of each name, with numpy (a model's 30,000 names in a few ms)."""
    out = np.empty(len(names), dtype=np.uint64)
    for lo, hi in _chunks([len(n) for n in names]):
        cp, _ = _code_points("".join(names[lo:hi]))
        length = np.fromiter(map(len, names[lo:hi]), dtype=np.int64, count=hi - lo)
        out[lo:hi] = _span_hashes(cp, np.cumsum(length) - length, length)
    return out


def _whitespace() -> Bools:
    """Which code points :meth:`str.split` splits on, up to U+3000 (the last of them), and
    one more entry, False, that every higher code point is clipped to."""
    lut = np.zeros(0x3002, dtype=np.bool_)
    for c in range(0x3001):
        lut[c] = chr(c).isspace()
    return lut


_WS = _whitespace()
_WS_LAST = len(_WS) - 1
_WS_BYTES = bytes(_WS[:256].view(np.uint8))
"""``bytes.translate`` table: each ASCII byte to 1 if it is a space, else to 0."""


def _name(text: str) -> tuple[int, int]:
    return name_hash(text), len(text)


_OPENING = (_name("o:"), _name("o:^ "))
_BEGIN = [_name(f"b{i}:") for i in range(BEGIN_TOKENS)]
_PIVOT = (_name("p:"), _name("p:^ "))
_ENDING = (_name("e:"), _name("e:^ "))
_SPACE = 33
"""The hash's value of " " (its code point plus one)."""


class _Table:
    """Open addressing on the hash's top bits, with linear probing: each name sits at most
    ``reach`` slots past its home slot. A slot holding 0 is empty (no name hashes to 0: that
    is refused with the collisions). Each column of weights has one more entry, 0, which
    :meth:`find` gives for the names it does not hold."""

    def __init__(self, keys: U64, weights: Sequence[F64]) -> None:
        n = len(keys)
        if len(np.unique(keys)) != n or (n and not keys.all()):
            raise ValueError("refusal model: two feature names share a hash")
        bits = max(4, (n * 4 - 1).bit_length())
        size = 1 << bits
        self.shift = np.uint64(64 - bits)
        self.mask = size - 1
        self.missing = size
        slot_keys = np.zeros(size, dtype=np.uint64)
        home = self.home(keys)
        at = home.copy()  # where each name is tried next
        slot = np.empty(n, dtype=np.int64)
        todo = np.arange(n)
        # Linear probing, all names at once: each round, of the names trying a free slot the
        # first takes it, and those that find their slot taken move one on. A name so only
        # ever passes taken slots, and slots are never freed, as find() relies on.
        while len(todo):
            tried = at[todo]
            free = np.flatnonzero(slot_keys[tried] == 0)
            taken, first = np.unique(tried[free], return_index=True)
            won = todo[free[first]]
            slot_keys[taken], slot[won] = keys[won], taken
            todo = todo[slot_keys[tried] != keys[todo]]
            at[todo] = (at[todo] + 1) & self.mask
        slot_w = [np.zeros(size + 1, dtype=np.float64) for _ in weights]
        for column, w in zip(slot_w, weights, strict=True):
            column[slot] = w
        reach = int(((slot - home) & self.mask).max()) if n else 0
        self.keys, self.weights, self.reach = slot_keys, slot_w, reach
        self._steps = np.arange(1, reach + 1)

    def home(self, keys: U64) -> I64:
        return ((keys * _MIX) >> self.shift).astype(np.int64)

    def find(self, keys: U64) -> I64:
        """The slot of each key, or :attr:`missing` where the key is not in the table."""
        slots = self.home(keys)
        there = self.keys[slots]
        found = there == keys
        out = np.where(found, slots, self.missing)
        # The rest: a key whose home slot holds another may sit up to ``reach`` slots on
        # (keys are unique, so a match there is the key itself).
        todo = np.flatnonzero(there.astype(np.bool_) & ~found)
        if len(todo) and self.reach:
            at = (slots[todo, None] + self._steps) & self.mask
            match = self.keys[at] == keys[todo, None]
            hit = np.flatnonzero(match.any(axis=1))
            out[todo[hit]] = at[hit, match[hit].argmax(axis=1)]
        return out


Table = _Table
"""The open-addressing table of a vocabulary's hashes (the attack model's batch scorer
builds one too)."""

_Sums = Callable[[list[str], list[str], list[str], list[str]], tuple[list[int], list[int]]]
"""The two heads' sums of the word features' weights, per event, from the four blocks."""


def _native_sums(table: _Table) -> _Sums | None:
    """The compiled scorer's ``sums`` with the model's table and this process's hash bound,
    or None where it is not used (:func:`~.refusal_model.native_state`)."""
    if native_state() != "built":
        return None
    from ._refusal_native import sums as native

    # The compiled scorer names three prefixes "b0:" to "b2:"; the model's format fixes it.
    assert BEGIN_TOKENS == 3, "the compiled refusal scorer takes three opening places"
    names = ("o:", "o:^ ", *(f"b{i}:" for i in range(BEGIN_TOKENS)), "p:", "p:^ ", "e:", "e:^ ")
    prefixes = tuple((name_hash(n), pow(_P, len(n), 1 << 64)) for n in names)
    limits = (PAIR_TOKENS, OPENING_TOKENS, PIVOT_TOKENS, ENDING_TOKENS)
    view, shift, reach = _slots(table), int(table.shift), table.reach

    def sums(
        heads: list[str], openings: list[str], afters: list[str], tails: list[str]
    ) -> tuple[list[int], list[int]]:
        return native(heads, openings, afters, tails, _P, prefixes, limits, view, shift, reach)

    return sums


def _slots(table: _Table) -> memoryview:
    """The table as the compiled refusal scorer reads it: one row per slot, (key, first
    weight, second weight, 0 where the table has one column), and a last of zeros for names
    not in the table; a look-up then reads one place in memory, not three."""
    if not 1 <= len(table.weights) <= 2:
        raise ValueError("the compiled scorers read one or two columns of weights")
    slots = np.zeros((len(table.keys) + 1, 3), dtype=np.uint64)
    slots[:-1, 0] = table.keys
    for column, w in enumerate(table.weights, 1):
        slots[:, column] = w.astype(np.int64).view(np.uint64)
    return slots.data


def _word_slots(table: _Table) -> memoryview:
    """The table as the compiled word scorer reads it: one row per slot, (key, first weight),
    and a last of zeros for names not in the table (two thirds of :func:`_slots`' rows, for
    tables of tens of thousands of names)."""
    slots = np.zeros((len(table.keys) + 1, 2), dtype=np.uint64)
    slots[:-1, 0] = table.keys
    slots[:, 1] = table.weights[0].astype(np.int64).view(np.uint64)
    return slots.data


def native_word_sums(table: _Table) -> Callable[[list[str]], list[int]] | None:
    """Per text, the sum of the first weights of its whitespace tokens and of each adjacent
    pair ``"a b"`` (the attack model's word features), by the compiled scorer with this
    process's hash; None where it is not used (:func:`~.refusal_model.native_state`)."""
    if native_state() != "built":
        return None
    from ._refusal_native import word_sums as native

    view, shift, reach = _word_slots(table), int(table.shift), table.reach

    def sums(texts: list[str]) -> list[int]:
        return native(texts, _P, view, shift, reach)

    return sums


def tokens(segments: Sequence[str]) -> tuple[U64, I64, I64, U64]:
    """The whitespace tokens of many texts at once, as :meth:`str.split` cuts them: each
    token's hash ``H`` and length, the index of each segment's first token (one more entry,
    the number of tokens, closes the last segment: the tokens of segment i are
    ``first[i]:first[i + 1]``), and the table of powers of the hash's base the hashes used
    (for :func:`join_hashes`). The batch scorers of the refusal and attack models read their
    words through this."""
    # The segments in order, a space before each and one at the end.
    text = " " + " ".join(segments) + " "
    lengths = np.fromiter(map(len, segments), dtype=np.int64, count=len(segments))
    seg_at = np.cumsum(lengths + 1) - lengths  # after the space before each segment
    cp, raw = _code_points(text)
    if raw is not None:  # the common case, ASCII: spaces by bytes.translate
        space = np.frombuffer(raw.translate(_WS_BYTES), dtype=np.bool_)
    else:
        space = _WS[np.minimum(cp, _WS_LAST)]
    # The text starts and ends with a space, so token edges alternate: start, end, ...
    edges = np.flatnonzero(space[1:] ^ space[:-1]) + 1
    start, end = edges[0::2], edges[1::2]
    t_len: I64 = end - start
    t_hash = _span_hashes(cp, start, t_len)
    up = _POWERS.upto(len(cp) + 1)[0]  # the tables _span_hashes used
    # Each segment's first token: tokens of a segment are a run.
    first = np.append(np.searchsorted(start, seg_at), len(start))
    return t_hash, t_len, first, up


def join_hashes(h1: U64, len1: I64, h2: U64, up: U64) -> U64:
    """``H(a + " " + b)`` from ``H(a)``, ``len(a)`` and ``H(b)``: a word pair's hash."""
    return _join(h1, len1, h2, up)


_OTHER_CHARS = OPENING_CHARS // 4 + PIVOT_CHARS + 8
"""About what an event adds to a chunk besides its head and ending: its opening's words,
the words after its pivot, the spaces between."""

_Add = Callable[[U64, I64], None]
"""Takes feature hashes and the event each belongs to."""


class BatchScorer:
    """Scores many views at once; equal to ``model.score`` on each (see the module)."""

    def __init__(self, model: Weights, *, native: bool | None = None) -> None:
        """``native``: True needs the compiled scorer, False uses numpy, None (the default)
        the compiled one where it was built."""
        refusal, full = model._all_heads()
        names = list(refusal.keys() | full.keys())
        keys = hash_names(names)
        columns = [
            np.fromiter((head.get(n, 0) for n in names), dtype=np.float64, count=len(names))
            for head in (refusal, full)
        ]
        table = _Table(keys, columns)
        self._bias = model._bias
        self._native = _native_sums(table) if native is not False else None
        if native and self._native is None:
            why = "is not built" if native_state() != "stale" else "is stale (see native_state)"
            raise RuntimeError(f"the compiled refusal scorer {why}")
        # The compiled scorer keeps its own copy of the table: numpy's is kept only for numpy,
        # and of the weights by name, only those of the shape's names, which it looks up here.
        self._table = None if self._native is not None else table
        self._heads = (refusal, full) if self._native is None else shape_heads((refusal, full))

    @property
    def native(self) -> bool:
        """Whether the word features are summed by the compiled scorer (else numpy)."""
        return self._native is not None

    def score(self, views: Sequence[View], phrases: Sequence[str | None]) -> list[RefusalScore]:
        if len(views) != len(phrases):
            raise ValueError("one phrase (or None) per view")
        out: list[RefusalScore] = []
        sizes = [len(v.head) + len(v.tail) + _OTHER_CHARS for v in views]
        for lo, hi in _chunks(sizes):
            out += self._chunk(views[lo:hi], phrases[lo:hi])
        return out

    def _chunk(self, views: Sequence[View], phrases: Sequence[str | None]) -> list[RefusalScore]:
        n = len(views)
        refusal, full = self._heads
        z0, z1 = [self._bias[0]] * n, [self._bias[1]] * n  # in units of 1/FIXED, as ints
        openings: list[str] = []
        afters: list[str] = []
        for e, (view, phrase) in enumerate(zip(views, phrases, strict=True)):
            head = view.head
            pivot = find_pivot(head)
            afters.append(head[pivot[1] : pivot[1] + PIVOT_CHARS] if pivot is not None else "")
            openings.append(
                " ".join(head[:OPENING_CHARS].split(None, OPENING_TOKENS)[:OPENING_TOKENS])
            )
            a, b = z0[e], z1[e]
            for name in shape_features(view, phrase, pivot):
                a += refusal.get(name, 0)
                b += full.get(name, 0)
            z0[e], z1[e] = a, b
        blocks = ([v.head for v in views], openings, afters, [v.tail for v in views])
        if self._native is not None:
            s0, s1 = self._native(*blocks)
        else:
            s0, s1 = self._sums(blocks, n)
        return [
            RefusalScore(sigmoid((z0[e] + s0[e]) / FIXED), sigmoid((z1[e] + s1[e]) / FIXED))
            for e in range(n)
        ]

    def _sums(self, blocks: tuple[list[str], ...], n: int) -> tuple[list[int], list[int]]:
        """The two heads' sums of the word features' weights, per event, with numpy."""
        # Four blocks, each the events' segments in order, a space before each: the heads
        # (words and pairs), the openings' words, the words after the pivots, the endings.
        t_hash, t_len, first, up = tokens([s for b in blocks for s in b])
        keys: list[U64] = []
        owner: list[I64] = []

        def add(k: U64, who: I64) -> None:
            keys.append(k)
            owner.append(who)

        def block(i: int) -> tuple[int, int, I64, I64, I64]:
            """Block i's token range, and each of its tokens' event, place in its segment and
            the number of tokens in that segment."""
            at = first[i * n : (i + 1) * n + 1]
            lo, hi = int(at[0]), int(at[-1])
            count = np.diff(at)
            event = np.repeat(np.arange(n), count)
            return lo, hi, event, np.arange(lo, hi) - at[event], count[event]

        lo, hi, event, rank, _ = block(0)
        h, length = t_hash[lo:hi], t_len[lo:hi]
        add(h, event)  # every word of the head
        second = np.flatnonzero((rank >= 1) & (rank < PAIR_TOKENS))
        add(_join(h[second - 1], length[second - 1], h[second], up), event[second])
        words = len(h) + len(second)  # read by the refusal head alone; the rest by both
        lo, hi, event, rank, _ = block(1)  # the opening: its words
        h = t_hash[lo:hi]
        _grams(add, _OPENING, h, t_len[lo:hi], rank == 0, event, up)
        for i, begin in enumerate(_BEGIN):
            at_i = np.flatnonzero(rank == i)
            add(_cat(begin, h[at_i], up), event[at_i])
        lo, hi, event, rank, _ = block(2)  # the words after the pivot
        pv = np.flatnonzero(rank < PIVOT_TOKENS)
        _grams(add, _PIVOT, t_hash[lo:hi][pv], t_len[lo:hi][pv], rank[pv] == 0, event[pv], up)
        lo, hi, event, rank, count = block(3)  # the ending: its last words
        back = count - 1 - rank  # words after this one
        en = np.flatnonzero(back < ENDING_TOKENS)
        leads = (back[en] == ENDING_TOKENS - 1) | (rank[en] == 0)
        _grams(add, _ENDING, t_hash[lo:hi][en], t_len[lo:hi][en], leads, event[en], up)

        table = self._table
        assert table is not None, "numpy's table is made when the compiled scorer is not used"
        slot = table.find(np.concatenate(keys))
        who = np.concatenate(owner)
        w0, w1 = table.weights
        s0 = np.bincount(who, weights=w0[slot], minlength=n)
        s1 = np.bincount(who[words:], weights=w1[slot[words:]], minlength=n)
        # the sums are whole numbers below 2**53, so exact in a float64 (see FIXED)
        return s0.astype(np.int64).tolist(), s1.astype(np.int64).tolist()


def _cat(prefix: tuple[int, int], h: U64, up: U64) -> U64:
    """``H(x + y)`` from ``(H(x), len(x))`` and ``H(y)``."""
    return np.uint64(prefix[0]) + up[prefix[1]] * h  # type: ignore[no-any-return]


def _join(h1: U64, len1: I64, h2: U64, up: U64) -> U64:
    """``H(a + " " + b)`` from ``H(a)``, ``len(a)`` and ``H(b)``."""
    return h1 + up[len1] * (np.uint64(_SPACE) + up[1] * h2)  # type: ignore[no-any-return]


def _grams(
    add: _Add,
    names: tuple[tuple[int, int], tuple[int, int]],
    h: U64,
    length: I64,
    leads: Bools,
    who: I64,
    up: U64,
) -> None:
    """With ``names`` = (prefix, prefix + "^ "): ``prefix + tok`` for every token, and
    ``prefix + prev + " " + tok`` for each, where prev is the token before it or "^" for
    the first of a run (``leads`` marks those; the first token given always leads one)."""
    prefix, opener = names
    add(_cat(prefix, h, up), who)
    lead = np.flatnonzero(leads)
    add(_cat(opener, h[lead], up), who[lead])
    rest = np.flatnonzero(~leads)
    add(_cat(prefix, _join(h[rest - 1], length[rest - 1], h[rest], up), up), who[rest])
