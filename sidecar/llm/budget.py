"""Budgets of calls to a model: requests per second and tokens per sliding minute.

Shared by the judge (its sampler stops admitting work the budget cannot serve) and the probe
(which skips a turn rather than go over).
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable

__all__ = ["RequestBudget", "TokenBudget"]


class RequestBudget:
    """A token bucket of HTTP requests per second.

    Workers ``await acquire()`` before each request, which paces them; the sampler checks
    :attr:`exhausted` (no whole request left) to stop admitting work the budget cannot serve.
    ``rate=None`` means unlimited.
    """

    def __init__(
        self,
        rate: float | None,
        *,
        burst: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._clock = clock
        self.rate = rate
        self.burst = burst if burst is not None else max(1.0, rate or 1.0)
        self._tokens = self.burst
        self._stamp = clock()

    def configure(self, rate: float | None) -> None:
        self._refill()
        self.rate = rate
        self.burst = max(1.0, rate or 1.0)
        self._tokens = min(self._tokens, self.burst)

    def _refill(self) -> None:
        now = self._clock()
        if self.rate is not None:
            self._tokens = min(self.burst, self._tokens + (now - self._stamp) * self.rate)
        self._stamp = now

    @property
    def exhausted(self) -> bool:
        if self.rate is None:
            return False
        self._refill()
        return self._tokens < 1.0

    def wait_time(self) -> float:
        """Seconds until one request may go; 0 when it may go now (and then it is taken)."""
        if self.rate is None:
            return 0.0
        self._refill()
        if self._tokens >= 1.0:
            self._tokens -= 1.0
            return 0.0
        return (1.0 - self._tokens) / self.rate


class TokenBudget:
    """Tokens (prompt plus completion) used in a sliding minute, against a limit."""

    def __init__(
        self,
        per_minute: int | None,
        *,
        clock: Callable[[], float] = time.monotonic,
        max_entries: int = 100_000,
    ) -> None:
        self._clock = clock
        self.per_minute = per_minute
        self._used: deque[tuple[float, int]] = deque(maxlen=max_entries)
        self._total = 0

    def configure(self, per_minute: int | None) -> None:
        self.per_minute = per_minute

    def add(self, tokens: int) -> None:
        if tokens <= 0:
            return
        if len(self._used) == self._used.maxlen:
            self._total -= self._used[0][1]
        self._used.append((self._clock(), tokens))
        self._total += tokens

    def used(self) -> int:
        horizon = self._clock() - 60.0
        while self._used and self._used[0][0] <= horizon:
            self._total -= self._used.popleft()[1]
        return self._total

    @property
    def exhausted(self) -> bool:
        return self.per_minute is not None and self.used() >= self.per_minute
