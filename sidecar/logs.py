"""Log lines about records, bounded: a stream of bad records must not become a stream of logs.

Every dead letter is counted (``llm_sidecar_dead_letters_total{reason}``) and written to the
DLQ; its log line is for the operator who wants to see what one looks like. At thousands of
bad records a second one line each would flood the log collector and cost the hot path a
logging call per record, so :class:`LogBudget` lets the first few of each interval through and
then says once, when the interval is over, how many it left out and why.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Callable

__all__ = ["LogBudget"]


class LogBudget:
    """At most ``limit`` lines per ``every_s`` seconds; what is left out is summed up by kind
    in one line once the interval is over (on the next :meth:`allow` or :meth:`tick`) and on
    :meth:`flush`."""

    def __init__(
        self,
        what: str,
        log: logging.Logger,
        *,
        limit: int = 10,
        every_s: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.what = what
        self.log = log
        self.limit = limit
        self.every_s = every_s
        self.clock = clock
        self._started = clock()
        self._logged = 0
        self._left_out: Counter[str] = Counter()

    def allow(self, kind: str) -> bool:
        """Whether a line about one more ``kind`` may be logged now (else it is counted)."""
        self.tick()
        if self._logged < self.limit:
            self._logged += 1
            return True
        self._left_out[kind] += 1
        return False

    def tick(self) -> None:
        """Start a new interval if this one is over, saying what it left out."""
        now = self.clock()
        if now - self._started >= self.every_s:
            self.flush()
            self._started = now
            self._logged = 0

    def flush(self) -> None:
        """Say now what was left out so far, if anything."""
        if not self._left_out:
            return
        total = sum(self._left_out.values())
        kinds = ", ".join(f"{kind} {n}" for kind, n in sorted(self._left_out.items()))
        self.log.warning(
            "%d more %s in the last %.0fs not logged (%s); all of them are counted",
            total,
            self.what,
            self.clock() - self._started,
            kinds,
        )
        self._left_out.clear()
