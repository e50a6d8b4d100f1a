"""Length bounds and literal containment: the cheapest content checks."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from ..events import Event
from .base import Check, CheckContext, CheckResult, Params
from .registry import register

__all__ = [
    "ContainsAll",
    "ContainsAny",
    "ContainsNone",
    "LengthGreaterThan",
    "LengthLessThan",
]


class LengthParams(Params):
    value: int = Field(ge=0, description="the bound, in `unit`s")
    unit: Literal["characters", "words"] = "characters"


def _length(text: str, unit: str) -> int:
    return len(text) if unit == "characters" else len(text.split())


@register
class LengthLessThan(Check[LengthParams]):
    """True when the text is shorter than ``value`` characters (or words)."""

    name = "length_less_than"
    params_model = LengthParams

    def __init__(self, params: LengthParams, ctx: CheckContext) -> None:
        super().__init__(params, ctx)
        self.value, self.unit = params.value, params.unit

    def __call__(self, text: str, event: Event) -> CheckResult:
        n = _length(text, self.unit)
        return CheckResult(n < self.value, f"{n} {self.unit}")


@register
class LengthGreaterThan(Check[LengthParams]):
    """True when the text is longer than ``value`` characters (or words)."""

    name = "length_greater_than"
    params_model = LengthParams

    def __init__(self, params: LengthParams, ctx: CheckContext) -> None:
        super().__init__(params, ctx)
        self.value, self.unit = params.value, params.unit

    def __call__(self, text: str, event: Event) -> CheckResult:
        n = _length(text, self.unit)
        return CheckResult(n > self.value, f"{n} {self.unit}")


class KeywordsParams(Params):
    keywords: list[str] = Field(min_length=1)
    case_sensitive: bool = False

    @field_validator("keywords")
    @classmethod
    def _non_empty(cls, v: list[str]) -> list[str]:
        if any(not k for k in v):
            raise ValueError("keywords must not be empty strings")
        return v


class _Keywords(Check[KeywordsParams]):
    params_model = KeywordsParams

    def __init__(self, params: KeywordsParams, ctx: CheckContext) -> None:
        super().__init__(params, ctx)
        self.case_sensitive = params.case_sensitive
        self.keywords = [k if self.case_sensitive else k.casefold() for k in params.keywords]

    def _found(self, text: str) -> list[str]:
        hay = text if self.case_sensitive else text.casefold()
        return [k for k in self.keywords if k in hay]


@register
class ContainsAny(_Keywords):
    """True when at least one keyword occurs in the text."""

    name = "contains_any"

    def __call__(self, text: str, event: Event) -> CheckResult:
        found = self._found(text)
        return CheckResult(bool(found), f"found {found[:3]}" if found else None)


@register
class ContainsAll(_Keywords):
    """True when every keyword occurs in the text."""

    name = "contains_all"

    def __call__(self, text: str, event: Event) -> CheckResult:
        found = self._found(text)
        missing = [k for k in self.keywords if k not in found]
        return CheckResult(not missing, f"missing {missing[:3]}" if missing else None)


@register
class ContainsNone(_Keywords):
    """True when no keyword occurs in the text."""

    name = "contains_none"

    def __call__(self, text: str, event: Event) -> CheckResult:
        found = self._found(text)
        return CheckResult(not found, f"found {found[:3]}" if found else None)
