"""Which vector goes next, and when: the library cycled within the budget.

Categories take turns (basic, intermediate, advanced, basic, ...), and each category walks its
own vectors in a shuffled order that is fixed by the run's seed, so techniques and goals spread
over time and a full cycle sends every vector once. Probes start at least ``3600 /
probes_per_hour`` seconds apart; jitter only lengthens a gap, so the budget holds in any hour.
A category therefore gets a probe at least every ``period`` seconds (its turn, at the longest
gap), and :meth:`Schedule.coverage_problem` refuses a budget too small for every category to
be probed in every window of the longest window length.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from .attacks import CATEGORIES, AttackLibrary, Vector

__all__ = ["Schedule"]


@dataclass(slots=True)
class _Cycle:
    vectors: list[Vector]
    cursor: int = 0
    sent_once: int = 0
    """Vectors of the current pass already taken (for ``--once``)."""


class Schedule:
    """The order of the vectors and the gaps between probes."""

    def __init__(
        self,
        library: AttackLibrary,
        *,
        categories: Sequence[str],
        probes_per_hour: float,
        jitter: float,
        seed: int = 0,
    ) -> None:
        self._rng = random.Random(seed)  # the order of a run, not a secret
        by = library.by_category()
        self.categories = [c for c in CATEGORIES if c in categories and by[c]]
        self._cycles = {}
        for c in self.categories:
            self._cycles[c] = _Cycle(self._spread(by[c]))
        self._turn = 0
        self.interval_s = 3600.0 / probes_per_hour
        self.jitter = jitter

    def _spread(self, vectors: Sequence[Vector]) -> list[Vector]:
        """Each kind shuffled, then the kinds merged evenly: leakage vectors come at regular
        intervals of a category's cycle instead of in clumps."""
        kinds: dict[str, list[Vector]] = {}
        for v in vectors:
            kinds.setdefault(v.kind, []).append(v)
        for group in kinds.values():
            self._rng.shuffle(group)
        total = len(vectors)
        keyed = [
            ((i + 0.5) / len(group), kind, v)
            for kind, group in sorted(kinds.items())
            for i, v in enumerate(group)
        ]
        keyed.sort(key=lambda item: (item[0], item[1]))
        out = [v for _, _, v in keyed]
        assert len(out) == total
        return out

    @property
    def empty(self) -> bool:
        return not self.categories

    def vectors(self, category: str) -> list[Vector]:
        return list(self._cycles[category].vectors)

    @property
    def longest_gap_s(self) -> float:
        return self.interval_s * (1.0 + self.jitter)

    def period_s(self, category: str) -> float:
        """The longest time between two probes of ``category`` when none is skipped."""
        return self.longest_gap_s * len(self.categories)

    def gap(self) -> float:
        """Seconds from this probe's start to the next one's: never below the interval."""
        return self.interval_s * (1.0 + self.jitter * self._rng.random())

    def coverage_problem(self, window_s: float) -> str | None:
        """Why some category could miss a whole window of ``window_s`` seconds, or None."""
        if self.empty:
            return "the library has no vector in the configured categories"
        period = self.period_s(self.categories[0])
        if period > window_s:
            need = 3600.0 * (1.0 + self.jitter) * len(self.categories) / window_s
            return (
                f"at {3600.0 / self.interval_s:g} probes per hour each of the "
                f"{len(self.categories)} categories is probed every {period:.0f}s, more than "
                f"the longest window ({window_s:.0f}s): raise probe.probes_per_hour to at least "
                f"{need:.4g}"
            )
        return None

    # -- taking vectors ---------------------------------------------------------------------

    def category(self) -> str:
        """The category whose turn it is."""
        return self.categories[self._turn % len(self.categories)]

    def peek(self) -> Vector:
        cycle = self._cycles[self.category()]
        return cycle.vectors[cycle.cursor % len(cycle.vectors)]

    def take(self) -> Vector:
        """The vector whose turn it is; the next call moves to the next category."""
        category = self.category()
        cycle = self._cycles[category]
        vector = cycle.vectors[cycle.cursor % len(cycle.vectors)]
        cycle.cursor += 1
        cycle.sent_once = min(cycle.sent_once + 1, len(cycle.vectors))
        self._advance()
        return vector

    def skip(self) -> None:
        """This turn goes unused (the budget said no): the vector stays first in line."""
        self._advance()

    def _advance(self) -> None:
        """To the next category that has vectors left in this pass (``--once`` ends when none
        has); in the continuous mode every category always has."""
        n = len(self.categories)
        for _ in range(n):
            self._turn += 1
            if not self.done_with(self.category()):
                return

    def done_with(self, category: str) -> bool:
        cycle = self._cycles[category]
        return cycle.sent_once >= len(cycle.vectors)

    @property
    def pass_done(self) -> bool:
        """Every vector has been taken once (the end of ``--once``)."""
        return all(self.done_with(c) for c in self.categories)

    def reset_pass(self) -> None:
        """Start counting a new pass (the continuous mode never ends one)."""
        for cycle in self._cycles.values():
            cycle.sent_once = 0

    def plan(self, window_s: float, *, first: int = 12) -> list[str]:
        """The schedule in words, for ``--dry-run``."""
        lines = [
            f"one probe every {self.interval_s:.2f}s to {self.longest_gap_s:.2f}s "
            f"({3600.0 / self.interval_s:g} per hour at most, jitter {self.jitter:g})",
        ]
        for c in self.categories:
            size = len(self._cycles[c].vectors)
            per_window = window_s / self.period_s(c)
            lines.append(
                f"  {c:<13} {size:4d} vectors, a probe at least every {self.period_s(c):.0f}s, "
                f"{per_window:.1f} per {window_s:.0f}s window, every vector within "
                f"{size * self.period_s(c) / 3600.0:.1f}h"
            )
        lines.append(
            f"first {min(first, sum(len(x.vectors) for x in self._cycles.values()))} probes:"
        )
        shadow = Schedule.__new__(Schedule)
        shadow.categories = list(self.categories)
        shadow._cycles = {c: _Cycle(list(x.vectors), x.cursor) for c, x in self._cycles.items()}
        shadow._turn = self._turn
        shadow._rng = random.Random(0)
        shadow.interval_s, shadow.jitter = self.interval_s, self.jitter
        for i in range(first):
            if shadow.pass_done:
                break
            v = shadow.take()
            lines.append(f"  {i + 1:3d}. {v.category:<13} {v.kind:<10} rank {v.rank}  {v.id}")
        return lines
