"""The ring arithmetic of the rolling windows: six sums, time buckets, one ring per window.

Every score is kept as one accumulator of six sums (``n, Σw, Σwx, Σw², Σw²x, Σw²x²``) of its
observations ``x`` with weights ``w`` (see :mod:`sidecar.windows.scores` for what they feed).

Memory is bounded by construction. A series (one score, one subject such as a rule id, one
allowed ``route``/``model``/``tenant`` set) keeps, per window, a ring of ``buckets`` time
buckets of six doubles each: whatever the event rate, a series costs the same. A bucket is
reused, zeroed, when its slot comes round again; a window's sums are those of its current
bucket and the ``buckets - 1`` before.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from typing import Final

ALL: Final = "*"
"""The label value of a dimension that a series does not break down by (the roll-up)."""

# The six sums of an accumulator.
N, SW, SWX, SW2, SW2X, SW2X2 = range(6)
WIDTH: Final = 6

Segment = tuple[str, str, str]
ScoreKey = tuple[str, str]  # (score, subject)
SeriesKey = tuple[str, str, Segment]


# -- the rings ----------------------------------------------------------------------------


class _Series:
    """One score for one subject and segment: a ring per window plus cumulative totals."""

    __slots__ = ("data", "epochs", "last", "total")

    def __init__(self, n_windows: int, buckets: int) -> None:
        self.data = array("d", bytes(8 * WIDTH * n_windows * buckets))
        self.epochs = array("q", [-1]) * (n_windows * buckets)
        self.total = [0.0] * WIDTH
        self.last = 0.0


_ZERO = array("d", [0.0] * WIDTH)


class _Rings:
    """The bucket arithmetic shared by every series."""

    def __init__(self, spans: Sequence[float], buckets: int) -> None:
        self.spans = list(spans)
        self.buckets = buckets

    def add(self, s: _Series, now: float, sums: Sequence[float]) -> None:
        data, epochs, b = s.data, s.epochs, self.buckets
        for w, span in enumerate(self.spans):
            idx = int(now // span)
            slot = w * b + idx % b
            base = slot * WIDTH
            if epochs[slot] != idx:
                epochs[slot] = idx
                data[base : base + WIDTH] = _ZERO
            for j in range(WIDTH):
                data[base + j] += sums[j]
        total = s.total
        for j in range(WIDTH):
            total[j] += sums[j]
        s.last = now

    def window(self, s: _Series, w: int, now: float) -> list[float]:
        """The six sums over window ``w``: the current bucket and the ``buckets - 1`` before."""
        b = self.buckets
        idx = int(now // self.spans[w])
        out = [0.0] * WIDTH
        data, epochs = s.data, s.epochs
        for slot in range(w * b, (w + 1) * b):
            if idx - b < epochs[slot] <= idx:
                base = slot * WIDTH
                for j in range(WIDTH):
                    out[j] += data[base + j]
        return out


def _accumulate(acc: list[float], x: float, w: float) -> None:
    wx, w2 = w * x, w * w
    acc[N] += 1
    acc[SW] += w
    acc[SWX] += wx
    acc[SW2] += w2
    acc[SW2X] += w2 * x
    acc[SW2X2] += w2 * x * x
