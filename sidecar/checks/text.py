"""Length bounds and literal containment: the cheapest content checks.

The string checks (``starts_with``, ``ends_with``, ``equals_to``, ``contains_string``) compare
literally: no Unicode normalisation and no whitespace folding inside the text. They are
case-sensitive unless ``case_sensitive: false`` (which compares casefolded text), and by default
ignore whitespace around the text (``strip``), since model answers often end with a newline.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import ClassVar, Literal, cast

import ahocorasick
from pydantic import Field, field_validator

from ..events import Event
from ..scan import NOTHING, ScanPattern, literal
from .base import Check, CheckContext, CheckResult, Params
from .registry import register

__all__ = [
    "ContainsAll",
    "ContainsAny",
    "ContainsNone",
    "ContainsString",
    "EndsWith",
    "EqualsTo",
    "KeywordCheck",
    "KeywordScanner",
    "LengthGreaterThan",
    "LengthLessThan",
    "StartsWith",
    "StringParams",
]


class LengthParams(Params):
    value: int = Field(ge=0, description="the bound, in `unit`s")
    unit: Literal["characters", "words"] = "characters"

    @field_validator("value", mode="before")
    @classmethod
    def _not_a_bool(cls, v: object) -> object:
        if isinstance(v, bool):  # YAML's yes/no/true: a typo, not a length of 1 or 0
            raise ValueError("must be a whole number, not true or false")
        return v


# ASCII text with every character str.split() splits on made a space and every other an "x":
# its words are then the places where an "x" follows a space (or starts the text).
_WORD_MAP = bytes(32 if chr(c).isspace() else 120 for c in range(256))


def _words(text: str) -> int:
    """``len(text.split())`` without building the list (ASCII text; the rest splits)."""
    if not text.isascii():
        return len(text.split())
    marks = text.encode("ascii").translate(_WORD_MAP)
    return marks.count(b" x") + (marks[:1] == b"x")


_COUNTS = 1024
"""Details ("12 words") made once per rule for lengths below this."""


def _count(n: int, unit: str) -> str:
    """``1 character``, ``2 characters``, ``1 word``."""
    return f"{n} {unit.removesuffix('s') if n == 1 else unit}"


class _LengthCheck(Check[LengthParams]):
    """A bound on the text's length in characters or words; the subclass says which side.

    The pipeline computes it through :meth:`keyer` and :meth:`from_key`, not ``__call__``: a
    subclass that changes the result must change :meth:`from_key`."""

    params_model = LengthParams
    below: bool
    """True: the value is ``length < value``; False: ``length > value``."""

    def __init__(self, params: LengthParams, ctx: CheckContext) -> None:
        super().__init__(params, ctx)
        self.value, self.unit = params.value, params.unit
        self.words = params.unit == "words"
        self._counts = [_count(n, self.unit) for n in range(_COUNTS)]

    def __call__(self, text: str, event: Event) -> CheckResult:
        return self.from_key(_words(text) if self.words else len(text))

    def notes(self) -> list[str]:
        if self.below and self.value == 0:
            return [f"no text is shorter than 0 {self.unit}: the check is never true"]
        return []

    def keyer(self) -> Callable[[str], Hashable]:
        # The pipeline's path: each text's length (a C call over a batch) or word count, and
        # one outcome per distinct length.
        return _words if self.words else len

    def from_key(self, key: Hashable) -> CheckResult:
        n = cast(int, key)
        value = n < self.value if self.below else n > self.value
        return CheckResult(value, self._counts[n] if n < _COUNTS else _count(n, self.unit))


@register
class LengthLessThan(_LengthCheck):
    """True when the text is shorter than ``value`` characters (or words)."""

    name = "length_less_than"
    below = True


@register
class LengthGreaterThan(_LengthCheck):
    """True when the text is longer than ``value`` characters (or words)."""

    name = "length_greater_than"
    below = False


class KeywordsParams(Params):
    keywords: list[str] = Field(min_length=1)
    case_sensitive: bool = False

    @field_validator("keywords")
    @classmethod
    def _non_empty(cls, v: list[str]) -> list[str]:
        if any(not k for k in v):
            raise ValueError("keywords must not be empty strings")
        return v


class KeywordScanner:
    """Finds every keyword of a set in one Aho-Corasick pass over the text.

    The pipeline builds one scanner per (field, case sensitivity) for all keyword rules of a
    rule set, so a field is scanned once however many keyword rules read it.
    """

    def __init__(self, keywords: Iterable[str], *, case_sensitive: bool) -> None:
        self.case_sensitive = case_sensitive
        self._automaton = ahocorasick.Automaton()
        for keyword in keywords:
            self._automaton.add_word(keyword, keyword)
        self._automaton.make_automaton()

    def scan(self, text: str) -> frozenset[str]:
        hay = text if self.case_sensitive else text.casefold()
        return frozenset(keyword for _, keyword in self._automaton.iter(hay))


class KeywordCheck(Check[KeywordsParams]):
    """Base of the keyword checks: the value is decided from the set of keywords found."""

    params_model = KeywordsParams
    scan_absent_is_fixed = True

    def __init__(self, params: KeywordsParams, ctx: CheckContext) -> None:
        super().__init__(params, ctx)
        self.case_sensitive = params.case_sensitive
        self.keywords = list(
            dict.fromkeys(k if self.case_sensitive else k.casefold() for k in params.keywords)
        )
        self.scanner = KeywordScanner(self.keywords, case_sensitive=self.case_sensitive)
        # On ASCII text, casefold() is lower(): an ASCII keyword is found by an ASCII
        # case-insensitive literal, and a non-ASCII one (already casefolded) cannot occur.
        self._scan = tuple(
            literal(k, caseless=not self.case_sensitive) if k.isascii() else NOTHING
            for k in self.keywords
        )

    def __call__(self, text: str, event: Event) -> CheckResult:
        return self.decide(self.scanner.scan(text))

    def scan_patterns(self) -> Sequence[ScanPattern]:
        return self._scan

    def from_scan(self, found: frozenset[int], text: str, event: Event) -> CheckResult:
        keywords = self.keywords
        return self.decide(frozenset(keywords[j] for j in found))

    def decide(self, found: frozenset[str]) -> CheckResult:
        """The result given the keywords (of any rule sharing the scan) found in the text."""
        raise NotImplementedError

    def _present(self, found: frozenset[str]) -> list[str]:
        return [k for k in self.keywords if k in found]


@register
class ContainsAny(KeywordCheck):
    """True when at least one keyword occurs in the text."""

    name = "contains_any"

    def decide(self, found: frozenset[str]) -> CheckResult:
        present = self._present(found)
        return CheckResult(bool(present), f"found {present[:3]}" if present else None)


@register
class ContainsAll(KeywordCheck):
    """True when every keyword occurs in the text."""

    name = "contains_all"

    def decide(self, found: frozenset[str]) -> CheckResult:
        missing = [k for k in self.keywords if k not in found]
        return CheckResult(not missing, f"missing {missing[:3]}" if missing else None)


@register
class ContainsNone(KeywordCheck):
    """True when no keyword occurs in the text."""

    name = "contains_none"

    def decide(self, found: frozenset[str]) -> CheckResult:
        present = self._present(found)
        return CheckResult(not present, f"found {present[:3]}" if present else None)


class StringParams(Params):
    value: str = Field(min_length=1, description="the string to compare with")
    case_sensitive: bool = True
    strip: bool = Field(
        default=True, description="ignore whitespace at both ends of the text (not of `value`)"
    )


class EqualsParams(StringParams):
    value: str = Field(description="the string the text must equal (may be empty)")


class _StringCheck(Check[StringParams]):
    params_model = StringParams

    def __init__(self, params: StringParams, ctx: CheckContext) -> None:
        super().__init__(params, ctx)
        self.case_sensitive, self.strip = params.case_sensitive, params.strip
        self.value = params.value if self.case_sensitive else params.value.casefold()

    def _prepare(self, text: str) -> str:
        if self.strip:
            text = text.strip()
        return text if self.case_sensitive else text.casefold()

    ends: ClassVar[str] = ""
    """Which ends of ``value`` must meet the stripped text: "start", "end" or both."""

    def notes(self) -> list[str]:
        v = self.params.value
        padded = ("start" in self.ends and v[:1].isspace()) or (
            "end" in self.ends and v[-1:].isspace()
        )
        if self.strip and padded:
            return [
                f"value {v!r} has whitespace at an end that strip: true removes from the text, "
                "so it can never match there (set strip: false, or trim the value)"
            ]
        return []


@register
class StartsWith(_StringCheck):
    """True when the text begins with ``value``."""

    name = "starts_with"
    ends = "start"

    def __call__(self, text: str, event: Event) -> CheckResult:
        return CheckResult(self._prepare(text).startswith(self.value), None)


@register
class EndsWith(_StringCheck):
    """True when the text ends with ``value``."""

    name = "ends_with"
    ends = "end"

    def __call__(self, text: str, event: Event) -> CheckResult:
        return CheckResult(self._prepare(text).endswith(self.value), None)


@register
class EqualsTo(_StringCheck):
    """True when the whole text equals ``value``."""

    name = "equals_to"
    ends = "start end"
    params_model = EqualsParams

    def __call__(self, text: str, event: Event) -> CheckResult:
        prepared = self._prepare(text)
        if prepared == self.value:
            return CheckResult(True, None)
        return CheckResult(False, f"{len(prepared)} chars, expected {len(self.value)}")


class ContainsStringParams(Params):
    value: str = Field(min_length=1, description="the string to look for")
    case_sensitive: bool = True


@register
class ContainsString(Check[ContainsStringParams]):
    """True when ``value`` occurs in the text (one literal string; see contains_any for lists)."""

    name = "contains_string"
    params_model = ContainsStringParams

    def __init__(self, params: ContainsStringParams, ctx: CheckContext) -> None:
        super().__init__(params, ctx)
        self.case_sensitive = params.case_sensitive
        self.value = params.value if self.case_sensitive else params.value.casefold()

    def __call__(self, text: str, event: Event) -> CheckResult:
        hay = text if self.case_sensitive else text.casefold()
        at = hay.find(self.value)
        return CheckResult(at >= 0, f"at {at}" if at >= 0 else None)
