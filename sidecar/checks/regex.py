"""User regular expressions, run with a wall-clock budget.

Rule authors write the patterns, so a pattern may backtrack catastrophically on some input
(``(a|aa)+$`` against a long run of ``a``). The third-party ``regex`` engine accepts a
``timeout`` per search; when it expires the check raises :class:`~sidecar.errors.CheckTimeout`
and the pipeline counts the event as errored for this rule (and disables repeat offenders)
instead of stalling the hot path.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import regex
from pydantic import Field, field_validator, model_validator

from ..errors import CheckTimeout
from ..events import Event
from ..scan import ScanPattern, compile_exact, translate
from .base import Check, CheckContext, CheckResult, Params
from .registry import register

__all__ = ["Regex", "RegexParams"]

RegexFlag = Literal["ASCII", "DOTALL", "FULLCASE", "IGNORECASE", "MULTILINE", "VERBOSE", "WORD"]

_FLAGS: dict[str, int] = {
    "ASCII": regex.ASCII,
    "DOTALL": regex.DOTALL,
    "FULLCASE": regex.FULLCASE,
    "IGNORECASE": regex.IGNORECASE,
    "MULTILINE": regex.MULTILINE,
    "VERBOSE": regex.VERBOSE,
    "WORD": regex.WORD,
}


def _flag_bits(flags: list[RegexFlag]) -> int:
    bits = 0
    for f in flags:
        bits |= _FLAGS[f]
    return bits


def _compile(pattern: str, flags: list[RegexFlag]) -> regex.Pattern[str]:
    try:
        return regex.compile(pattern, _flag_bits(flags))
    except regex.error as exc:
        raise ValueError(f"invalid regular expression {pattern!r}: {exc}") from None


class RegexParams(Params):
    pattern: str = Field(min_length=1, description="the expression, in `regex` module syntax")
    flags: list[RegexFlag] = Field(default_factory=list, description='e.g. ["IGNORECASE"]')
    timeout_ms: float | None = Field(
        default=None,
        gt=0,
        le=10_000,
        description="budget of one search; default is the context's regex_timeout_s",
    )

    @field_validator("flags")
    @classmethod
    def _unique(cls, v: list[RegexFlag]) -> list[RegexFlag]:
        return sorted(set(v), key=v.index)

    @model_validator(mode="after")
    def _compiles(self) -> RegexParams:
        _compile(self.pattern, self.flags)
        return self


@register
class Regex(Check[RegexParams]):
    """True when the pattern matches somewhere in the text (a search, not a full match).

    Anchor the pattern (``^...$``, with ``\\A``/``\\Z`` or the MULTILINE flag) to test the
    whole text. A search that runs past ``timeout_ms`` raises ``CheckTimeout``.
    """

    name = "regex"
    params_model = RegexParams
    scan_absent_is_fixed = True

    def __init__(self, params: RegexParams, ctx: CheckContext) -> None:
        super().__init__(params, ctx)
        self.pattern = _compile(params.pattern, params.flags)
        ms = params.timeout_ms
        self.timeout_s = ms / 1000.0 if ms is not None else ctx.regex_timeout_s
        t = translate(params.pattern, params.flags)
        self.scan_note = t.note
        """How the shared scan takes this pattern (``validate`` prints it)."""
        self._scan = (ScanPattern(t.expr),) if t.expr is not None else ()
        self._exact = compile_exact(t.expr) if t.exact and t.expr is not None else None

    def notes(self) -> list[str]:
        notes = []
        controls = sorted({c for c in self.params.pattern if ord(c) < 32 and c not in "\t\n\r"})
        if controls:
            codes = ", ".join(f"\\x{ord(c):02x}" for c in controls)
            notes.append(
                f"the pattern holds control characters ({codes}): in double-quoted YAML, "
                '"\\b" is a backspace, not a word boundary; quote the pattern with single '
                "quotes or write \\\\b"
            )
        if all(self.pattern.search(t) is not None for t in ("", "zq", "Q\n7 ")):
            notes.append(
                "the pattern matches an empty string anywhere, so it is true on every event"
                + (" (with VERBOSE, # starts a comment)" if "VERBOSE" in self.params.flags else "")
            )
        return notes

    def scan_patterns(self) -> Sequence[ScanPattern]:
        return self._scan

    def from_scan(self, found: frozenset[int], text: str, event: Event) -> CheckResult:
        # The shared scan's prefilter proves "no match"; a match is confirmed (and located)
        # by the regex module, so the detail is the same as on the plain path.
        if not found:
            return CheckResult(False, None)
        if self._exact is not None:  # the same match, found in linear time
            m = self._exact.search(text.encode("ascii"))
            if m is not None:
                return CheckResult(True, f"match at {m.start()}, {m.end() - m.start()} chars")
        return self(text, event)

    def __call__(self, text: str, event: Event) -> CheckResult:
        try:
            m = self.pattern.search(text, timeout=self.timeout_s)
        except TimeoutError:
            raise CheckTimeout(
                f"regex search ran past {self.timeout_s * 1000:g} ms on {len(text)} chars"
            ) from None
        if m is None:
            return CheckResult(False, None)
        return CheckResult(True, f"match at {m.start()}, {m.end() - m.start()} chars")
