"""Fuzzy matching of the text against one or more target strings, with rapidfuzz.

The value is a score in [0, 1]: the best similarity of the text to any target, divided by
100. ``threshold`` (0-100) is passed to rapidfuzz as ``score_cutoff``: a target scoring
below it counts as 0, which lets rapidfuzz abandon hopeless comparisons early, so a rule
with ``min: 0.8`` should say ``threshold: 80`` as well; the value is then either 0 or at
least 0.8, and the rule's verdict is unchanged. With several targets the cutoff rises to the
best score found so far, which is faster still.

By default both sides are preprocessed (lower-cased, non-alphanumerics turned to spaces,
trimmed), so punctuation and case do not count as differences.

Work is bounded per call. ``partial_ratio`` slides a target over the text: its cost grows
with the text's length times the target's length squared, and with the target's length cubed
at the text's ends; ``WRatio`` runs it and more; ``ratio`` and the token scorers grow with the
text's length times the target's. On a text nothing like the targets (another script, one
letter repeated) nothing is cut short: one 2,000-character target against 100 KB of Chinese
took 7 s with ``partial_ratio``, 20 s with ``WRatio``. :func:`work` models the worst case,
:func:`text_bound` gives for the targets the longest text read within :data:`WORK_BOUND`
(about a quarter of a second); a longer text is read up to it and the detail says so.
Targets that would leave less than :data:`READ_MIN` characters of text are refused when the
rule loads.

Scorers, in short: ``ratio`` compares whole strings; ``partial_ratio`` finds the target
inside a longer text (the usual choice for "does the answer mention X"); ``token_sort_ratio``
and ``token_set_ratio`` ignore word order (and, for set, repeated or extra words);
``WRatio`` picks a weighted best of these.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from pydantic import Field, field_validator
from rapidfuzz import fuzz, process
from rapidfuzz.utils import default_process

from ..events import Event
from .base import Check, CheckContext, CheckResult, Params
from .registry import register

__all__ = ["READ_MIN", "WORK_BOUND", "FuzzyMatch", "FuzzyParams", "text_bound", "work"]

Scorer = Literal["ratio", "partial_ratio", "token_set_ratio", "token_sort_ratio", "WRatio"]

_SCORERS: dict[str, Callable[..., float]] = {
    "ratio": fuzz.ratio,
    "partial_ratio": fuzz.partial_ratio,
    "token_set_ratio": fuzz.token_set_ratio,
    "token_sort_ratio": fuzz.token_sort_ratio,
    "WRatio": fuzz.WRatio,
}

MAX_TARGET_CHARS = 2_000
MAX_TARGETS = 1_000
WORK_BOUND = 4 * 10**9
"""Units of :func:`work` one call may take: about a quarter of a second (a unit is about
60 ps on a 2-core VM)."""
READ_MIN = 10_000
"""The fewest characters of text the targets must leave room to read (see the module)."""


def work(scorer: str, target: int, text: int) -> int:
    """What comparing one target with one text may cost at worst, in units of
    :data:`WORK_BOUND` (both lengths in characters, as compared), measured on texts nothing
    like the target (Chinese, one letter repeated, random letters), which leave rapidfuzz
    nothing to cut short: ``partial_ratio``'s windows of the shorter over the longer (1.2 ns
    per character and 64 of the shorter's characters squared) and the windows at its ends;
    twice that for ``WRatio``; a bit-parallel pass for ``ratio`` and the token scorers (up to
    0.1 ns per character and 64 of the shorter's)."""
    short, long = min(target, text), max(target, text)
    if scorer == "partial_ratio":
        return 20 * long * (64 + short * short // 64) + short**3 // 3
    if scorer == "WRatio":
        return 2 * work("partial_ratio", target, text)
    return 2 * long * (64 + short)


def text_bound(scorer: str, targets: list[str]) -> int:
    """The longest text compared with all ``targets`` within :data:`WORK_BOUND`."""

    def total(n: int) -> int:
        return sum(work(scorer, len(t), n) for t in targets)

    lo, hi = 0, 1
    while total(hi) <= WORK_BOUND:  # the work grows with the text: double, then bisect
        lo, hi = hi, hi * 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if total(mid) <= WORK_BOUND else (lo, mid)
    return lo


class FuzzyParams(Params):
    target: str | list[str] = Field(description="one string, or a list: the best match counts")
    scorer: Scorer = "ratio"
    threshold: float = Field(
        default=0.0, ge=0, le=100, description="scores below this (0-100) count as 0"
    )
    preprocess: bool = Field(
        default=True, description="compare lower-cased text with punctuation removed"
    )

    @field_validator("target")
    @classmethod
    def _targets(cls, v: str | list[str]) -> str | list[str]:
        targets = [v] if isinstance(v, str) else v
        if not targets:
            raise ValueError("give at least one target")
        if len(targets) > MAX_TARGETS:
            raise ValueError(f"at most {MAX_TARGETS} targets")
        for t in targets:
            if not t.strip():
                raise ValueError("targets must not be empty or blank")
            if len(t) > MAX_TARGET_CHARS:
                raise ValueError(f"a target is longer than {MAX_TARGET_CHARS} characters")
        return v


@register
class FuzzyMatch(Check[FuzzyParams]):
    """Score in [0, 1]: the best similarity of the text to the target(s), per ``scorer``."""

    name = "fuzzy_match"
    params_model = FuzzyParams
    value_kind = "score"

    def __init__(self, params: FuzzyParams, ctx: CheckContext) -> None:
        super().__init__(params, ctx)
        targets = [params.target] if isinstance(params.target, str) else list(params.target)
        self.preprocess = params.preprocess
        self.targets = [default_process(t) for t in targets] if self.preprocess else targets
        if not all(self.targets):
            raise ValueError("a target has no letters or digits left after preprocessing")
        self.scorer = _SCORERS[params.scorer]
        self.cutoff = params.threshold
        self.read_max = text_bound(params.scorer, self.targets)
        if self.read_max < READ_MIN:
            longest = max(map(len, self.targets))
            others = [
                name
                for name in ("ratio", "token_set_ratio")
                if name != params.scorer and text_bound(name, self.targets) >= READ_MIN
            ]
            raise ValueError(
                f"{params.scorer} over {len(self.targets)} target(s), the longest "
                f"{longest:,} characters, could read only {self.read_max:,} characters of a "
                "text in about a quarter of a second: give fewer or shorter targets"
                + (f", or use the {' or '.join(others)} scorer" if others else "")
            )

    def __call__(self, text: str, event: Event) -> CheckResult:
        query = default_process(text) if self.preprocess else text
        if not query:
            return CheckResult(0.0, "empty text")
        if len(query) > self.read_max:
            found = self._compare(query[: self.read_max])
            note = f"first {self.read_max:,} characters read: size bound"
            return CheckResult(found.value, f"{found.detail} ({note})" if found.detail else note)
        return self._compare(query)

    def _compare(self, query: str) -> CheckResult:
        if len(self.targets) == 1:
            score = self.scorer(query, self.targets[0], score_cutoff=self.cutoff)
            best: Any = (None, score, 0) if score else None
        else:
            best = process.extractOne(
                query, self.targets, scorer=self.scorer, processor=None, score_cutoff=self.cutoff
            )
        if best is None or not best[1]:
            return CheckResult(0.0, f"below {self.cutoff:g}" if self.cutoff else None)
        score, index = float(best[1]), int(best[2])
        return CheckResult(score / 100.0, f"{score:.1f} vs target {index}")
