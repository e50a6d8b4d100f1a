"""Which events go to the LLM judge, and with what weight.

The decision runs on the hot path for every verdict, so it is a hash, a few comparisons and
no I/O:

1. **Triggers** first: an event whose verdict failed a configured check (a refusal or
   prompt-leakage rule, say) or that is a red-team probe is always judged, with weight 1.
2. Otherwise the event id is hashed (blake2b, 64 bits, with an optional shared salt) into
   ``u`` in ``[0, 1)`` and the event is sampled when ``u < rate(route) * factor``. The same id
   always hashes the same, so replicas and replays pick the same events; and since a lower
   rate keeps a subset of what a higher rate keeps, shedding never swaps events around.
3. **Minimum per window**: while fewer than ``min_samples_per_window`` events were taken in
   the current window, an event that the hash did not pick is taken anyway (weight 1).
4. **Budgets and back-pressure**: an event that would be taken is skipped, and counted by
   reason, when the request or token budget is spent, the judge's circuit is open, or (told
   afterwards through :meth:`Sampler.reject`) the judge queue is full. Budget and queue
   pressure also halve ``factor``, at most once a second, down to ``min_rate_factor``; after
   ``recover_s`` without pressure it doubles back towards 1. Events the hash would have picked
   at the configured rate but not at the lowered one are counted as skipped (``shed``).

Weights. A sampled event carries ``weight = 1 / (rate * factor)``, the inverse of its chance
of being picked; triggered and minimum-top-up events carry 1, since they were taken for
certain. A rolling window should keep ``sum(w * score)`` and ``sum(w)`` and report their ratio
(the Hájek estimator): that mean is unbiased however the rate differs across routes and over
time. ``sum(w)`` estimates how many events the scores stand for; the plain count of judged
events is what a confidence interval's ``n`` should be.
"""

from __future__ import annotations

import fnmatch
import hashlib
import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from ..checks.base import UNCERTAIN_PREFIX
from ..llm.budget import RequestBudget, TokenBudget
from .config import JudgeSettings

if TYPE_CHECKING:
    from ..pipeline import Verdict

__all__ = [
    "SKIP_REASONS",
    "TAKE_REASONS",
    "Decision",
    "RequestBudget",
    "Sampler",
    "TokenBudget",
    "hash_unit",
]

TAKE_REASONS: Final = ("sampled", "triggered", "minimum")
"""Why an event was taken (a bounded label)."""
SKIP_REASONS: Final = (
    "shed",
    "queue_full",
    "request_budget",
    "token_budget",
    "circuit_open",
    "not_applicable",
    "stopped",
)
"""Why an event that would have been judged was not (a bounded label)."""

_TWO_64 = float(2**64)
_LOWER_INTERVAL_S = 1.0
_MAX_RULE_CACHE = 10_000


def hash_unit(event_id: str, salt: str = "") -> float:
    """The event id mapped to a uniform number in ``[0, 1)``, identical on every machine."""
    data = f"{salt}\x00{event_id}" if salt else event_id
    digest = hashlib.blake2b(data.encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / _TWO_64


@dataclass(frozen=True, slots=True)
class Decision:
    """What the sampler decided for one event."""

    take: bool
    reason: str | None
    """One of :data:`TAKE_REASONS` when taken, of :data:`SKIP_REASONS` when skipped, None
    when the hash simply did not pick the event."""
    weight: float = 1.0


NOT_PICKED: Final = Decision(False, None, 0.0)


class Sampler:
    """Decides, per verdict, whether the judge sees the event; keeps counts by reason.

    ``circuit_open`` is a callable telling whether the judge endpoint is refusing calls.
    """

    def __init__(
        self,
        settings: JudgeSettings,
        *,
        clock: Callable[[], float] = time.monotonic,
        requests: RequestBudget | None = None,
        tokens: TokenBudget | None = None,
        circuit_open: Callable[[], bool] | None = None,
    ) -> None:
        self._clock = clock
        self.requests = requests if requests is not None else RequestBudget(None, clock=clock)
        self.tokens = tokens if tokens is not None else TokenBudget(None, clock=clock)
        self._circuit_open = circuit_open or (lambda: False)
        self.taken: dict[str, int] = dict.fromkeys(TAKE_REASONS, 0)
        self.skipped: dict[str, int] = dict.fromkeys(SKIP_REASONS, 0)
        self.factor = 1.0
        now = clock()
        self._last_lower = -math.inf
        self._last_pressure = now
        self._window_start = now
        self._window_taken = 0
        self._rule_checks: Mapping[str, str] = {}
        self._trigger_rule: dict[str, bool] = {}
        self._trigger_ids: tuple[str, ...] | None = None
        self._trigger_version: str | None = None
        self.settings = settings
        self.configure(settings)

    # -- configuration ---------------------------------------------------------------------

    def configure(self, settings: JudgeSettings) -> None:
        """Apply new settings (a rule reload); counts and the shedding factor carry over."""
        self.settings = settings
        self._salt = settings.sample_salt
        self._triggers = settings.triggers
        self._checks = frozenset(settings.triggers.failed_checks)
        self._patterns = tuple(settings.triggers.failed_rules)
        self._trigger_rule = {}
        self._trigger_ids = self._find_trigger_ids()
        self._attack_ids = self._find_attack_ids()
        self.requests.configure(settings.max_requests_per_s)
        self.tokens.configure(settings.max_tokens_per_minute)
        self.factor = max(self.factor, settings.min_rate_factor)

    def set_rule_checks(self, rule_checks: Mapping[str, str], version: str | None = None) -> None:
        """Tell the sampler which check each rule id runs (for ``triggers.failed_checks``).

        With the rules ``version``, verdicts of that version are tested on their trigger rules
        only, instead of on every rule they carry.
        """
        self._rule_checks = dict(rule_checks)
        self._trigger_version = version
        self._trigger_rule = {}
        self._trigger_ids = self._find_trigger_ids()
        self._attack_ids = self._find_attack_ids()

    def _find_attack_ids(self) -> tuple[str, ...]:
        """The ``attack_attempt`` rules, whose flag triggers the judge on an organic attack."""
        if not self._triggers.attack_attempt:
            return ()
        return tuple(rid for rid, check in self._rule_checks.items() if check == "attack_attempt")

    def _find_trigger_ids(self) -> tuple[str, ...] | None:
        """With the rule set known, a verdict needs only its trigger rules looked at."""
        if not self._rule_checks:
            return None
        return tuple(rid for rid in self._rule_checks if self._is_trigger_rule(rid))

    # -- the decision ----------------------------------------------------------------------

    def effective_rate(self, route: str | None) -> float:
        return self.settings.rate_for(route) * self.factor

    def triggered(self, verdict: Verdict) -> bool:
        if self._triggers.attack and verdict.event.attack is not None:
            return True
        checks = verdict.checks
        for rule_id in self._attack_ids:
            outcome = checks.get(rule_id)
            if outcome is not None and outcome.value is True:
                return True
        if self._triggers.uncertain and any(
            o.detail is not None and o.detail.startswith(UNCERTAIN_PREFIX) for o in checks.values()
        ):
            return True
        if not (self._checks or self._patterns):
            return False
        if self._trigger_ids is not None and verdict.rules_version == self._trigger_version:
            for rule_id in self._trigger_ids:
                outcome = checks.get(rule_id)
                if outcome is not None and outcome.passed is False:
                    return True
            return False
        for rule_id, outcome in checks.items():
            if outcome.passed is False and self._is_trigger_rule(rule_id):
                return True
        return False

    def _is_trigger_rule(self, rule_id: str) -> bool:
        known = self._trigger_rule.get(rule_id)
        if known is None:
            known = self._rule_checks.get(rule_id) in self._checks or any(
                fnmatch.fnmatchcase(rule_id, p) for p in self._patterns
            )
            if len(self._trigger_rule) >= _MAX_RULE_CACHE:
                self._trigger_rule.clear()
            self._trigger_rule[rule_id] = known
        return known

    def decide(self, verdict: Verdict, *, check_budgets: bool = True) -> Decision:
        """Whether to judge this event, why, and with what weight. Never blocks.

        ``check_budgets=False`` (replay, which paces instead) skips the budget checks.
        """
        now = self._clock()
        if now - self._window_start >= self.settings.window_s:
            self._window_start = now
            self._window_taken = 0
        if self.factor < 1.0 and now - self._last_pressure >= self.settings.recover_s:
            self.factor = min(1.0, self.factor * 2.0)
            self._last_pressure = now

        if self.triggered(verdict):
            reason, weight = "triggered", 1.0
        else:
            rate = self.settings.rate_for(verdict.event.route)
            effective = rate * self.factor
            u = hash_unit(verdict.event.id, self._salt)
            if u < effective:
                reason, weight = "sampled", 1.0 / effective
            elif self._window_taken < self.settings.min_samples_per_window:
                reason, weight = "minimum", 1.0
            elif u < rate:
                return self._skip("shed")
            else:
                return NOT_PICKED

        if self._circuit_open():
            return self._skip("circuit_open")
        if check_budgets and self.requests.exhausted:
            self._pressure(now)
            return self._skip("request_budget")
        if check_budgets and self.tokens.exhausted:
            self._pressure(now)
            return self._skip("token_budget")
        self._window_taken += 1
        self.taken[reason] += 1
        return Decision(True, reason, weight)

    def reject(self, decision: Decision, reason: str) -> None:
        """An event the sampler took could not be judged after all (``queue_full``, ...)."""
        if decision.take and decision.reason in self.taken:
            self.taken[decision.reason] -= 1
            self._window_taken = max(0, self._window_taken - 1)
        self.skipped[reason] += 1
        if reason == "queue_full":
            self._pressure(self._clock())

    def count_skip(self, reason: str, n: int = 1) -> None:
        self.skipped[reason] += n

    def _skip(self, reason: str) -> Decision:
        self.skipped[reason] += 1
        return Decision(False, reason, 0.0)

    def _pressure(self, now: float) -> None:
        self._last_pressure = now
        if now - self._last_lower >= _LOWER_INTERVAL_S:
            self._last_lower = now
            self.factor = max(self.settings.min_rate_factor, self.factor / 2.0)
