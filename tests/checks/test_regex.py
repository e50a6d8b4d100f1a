"""The user-regex check: flags, validation at load, and the time budget."""

from __future__ import annotations

import time

import pytest
from pydantic import ValidationError

from sidecar.checks import CheckContext, get_check
from sidecar.checks.regex import Regex, RegexParams
from sidecar.errors import CheckError, CheckTimeout
from sidecar.events import Event
from tests.checks.timing import timed

EV = Event(id="e1", response="r")


def make(ctx: CheckContext | None = None, **params: object) -> Regex:
    return Regex(RegexParams.model_validate(params), ctx or CheckContext())


def test_registered_as_regex() -> None:
    assert get_check("regex") is Regex
    assert Regex.value_kind == "bool"


def test_search_not_fullmatch() -> None:
    check = make(pattern=r"order #\d{4}")
    assert check("your order #1234 shipped", EV).value is True
    assert check("your order #12 shipped", EV).value is False


def test_detail_gives_position_not_text() -> None:
    result = make(pattern=r"secret\w+")("a secretSauce b", EV)
    assert result.value is True
    assert result.detail == "match at 2, 11 chars"
    assert "Sauce" not in (result.detail or "")


def test_flags() -> None:
    assert make(pattern="^hello$")("say\nhello\nthere", EV).value is False
    assert make(pattern="^hello$", flags=["MULTILINE"])("say\nhello\nthere", EV).value is True
    assert make(pattern="HELLO")("hello", EV).value is False
    assert make(pattern="HELLO", flags=["IGNORECASE"])("hello", EV).value is True
    assert make(pattern="a.b", flags=["DOTALL"])("a\nb", EV).value is True


def test_unicode() -> None:
    assert make(pattern=r"\bcafé\b", flags=["IGNORECASE"])("Un CAFÉ noir", EV).value is True
    assert make(pattern=r"\p{Han}+")("答案是 42", EV).value is True  # regex-module syntax


def test_empty_text() -> None:
    assert make(pattern="x")("", EV).value is False
    assert make(pattern="^$")("", EV).value is True


def test_bad_pattern_is_a_validation_error_naming_it() -> None:
    with pytest.raises(ValidationError, match=r"invalid regular expression '\(unclosed'"):
        RegexParams.model_validate({"pattern": "(unclosed"})


@pytest.mark.parametrize(
    "params",
    [
        {"pattern": ""},
        {"pattern": "a", "flags": ["NOPE"]},
        {"pattern": "a", "timeout_ms": 0},
        {"pattern": "a", "timeout_ms": -5},
        {"pattern": "a", "extra": 1},
    ],
)
def test_bad_params(params: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        RegexParams.model_validate(params)


def test_catastrophic_pattern_times_out_quickly() -> None:
    check = make(pattern=r"(a|aa)+$", timeout_ms=20)
    start = time.perf_counter()
    with pytest.raises(CheckTimeout) as info:
        check("a" * 5000 + "b", EV)
    assert time.perf_counter() - start < 0.5
    assert isinstance(info.value, CheckError)
    assert info.value.retriable is True
    assert "20 ms" in str(info.value)


def test_timeout_defaults_to_context_budget() -> None:
    assert make(pattern="a").timeout_s == pytest.approx(0.05)
    assert make(CheckContext(regex_timeout_s=0.2), pattern="a").timeout_s == pytest.approx(0.2)
    assert make(CheckContext(regex_timeout_s=0.2), pattern="a", timeout_ms=5).timeout_s == (
        pytest.approx(0.005)
    )


def test_huge_input_is_fine_for_a_linear_pattern() -> None:
    check = make(pattern=r"needle\d+")
    text = "hay " * 50_000 + "needle42"
    result, seconds = timed(lambda: check(text, EV))
    assert result.value is True
    assert seconds < 0.5
