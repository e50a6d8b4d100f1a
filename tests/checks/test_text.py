"""Length, keyword and literal string checks."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from sidecar.checks import CheckContext, get_check
from sidecar.checks.base import Check, CheckResult
from sidecar.checks.text import _words
from sidecar.events import Event
from tests.checks.timing import timed

EV = Event(id="e1", response="r")


def make(name: str, **params: Any) -> Check[Any]:
    cls = get_check(name)
    assert cls is not None, name
    return cls(cls.params_model.model_validate(params), CheckContext())


def run(name: str, text: str, **params: Any) -> CheckResult:
    return make(name, **params)(text, EV)


# --- length and keywords (the document's examples) ----------------------------------------


def test_length_bounds() -> None:
    assert run("length_less_than", "abc", value=4).value is True
    assert run("length_less_than", "abcd", value=4).value is False
    assert run("length_greater_than", "one two three", value=2, unit="words").value is True
    assert run("length_greater_than", "", value=0).value is False


def test_length_detail_counts_in_words() -> None:
    assert run("length_less_than", "a", value=4).detail == "1 character"
    assert run("length_less_than", "ab", value=4).detail == "2 characters"
    assert run("length_greater_than", "one", value=0, unit="words").detail == "1 word"


def test_keywords() -> None:
    text = "Paris is the capital of France."
    assert run("contains_all", text, keywords=["paris", "FRANCE"]).value is True
    assert run("contains_all", text, keywords=["paris", "Berlin"]).value is False
    assert run("contains_any", text, keywords=["berlin", "paris"]).value is True
    assert run("contains_none", text, keywords=["berlin", "rome"]).value is True
    assert run("contains_none", text, keywords=["berlin", "france"]).value is False


# --- starts_with / ends_with / equals_to / contains_string ----------------------------------


def test_starts_with() -> None:
    assert run("starts_with", "Answer: 42", value="Answer:").value is True
    assert run("starts_with", "  Answer: 42", value="Answer:").value is True  # strip
    assert run("starts_with", "  Answer: 42", value="Answer:", strip=False).value is False
    assert run("starts_with", "answer: 42", value="Answer:").value is False  # case-sensitive
    assert run("starts_with", "answer: 42", value="Answer:", case_sensitive=False).value is True
    assert run("starts_with", "", value="A").value is False


def test_ends_with() -> None:
    assert run("ends_with", "Thanks for asking.\n", value="asking.").value is True
    assert run("ends_with", "Thanks for asking.\n", value="asking.", strip=False).value is False
    assert run("ends_with", "DONE", value="done", case_sensitive=False).value is True
    assert run("ends_with", "done!", value="done").value is False


def test_equals_to() -> None:
    assert run("equals_to", "  yes\n", value="yes").value is True
    assert run("equals_to", "Yes", value="yes").value is False
    assert run("equals_to", "Yes", value="yes", case_sensitive=False).value is True
    assert run("equals_to", "yes ", value="yes", strip=False).value is False
    result = run("equals_to", "no way", value="yes")
    assert result == CheckResult(False, "6 chars, expected 3")


def test_equals_to_empty_value() -> None:
    assert run("equals_to", "   ", value="").value is True
    assert run("equals_to", "x", value="").value is False


def test_contains_string() -> None:
    assert run("contains_string", "the Order ID is 7", value="Order ID").value is True
    assert run("contains_string", "the order id is 7", value="Order ID").value is False
    result = run("contains_string", "the order id is 7", value="Order ID", case_sensitive=False)
    assert result == CheckResult(True, "at 4")


def test_casefold_handles_unicode() -> None:
    assert run("equals_to", "STRASSE", value="straße", case_sensitive=False).value is True
    assert run("starts_with", "Ärger", value="är", case_sensitive=False).value is True
    assert run("contains_string", "日本語のテキスト", value="テキスト").value is True


@pytest.mark.parametrize("name", ["starts_with", "ends_with", "contains_string"])
def test_empty_value_rejected(name: str) -> None:
    cls = get_check(name)
    assert cls is not None
    with pytest.raises(ValidationError):
        cls.params_model.model_validate({"value": ""})


@pytest.mark.parametrize("name", ["starts_with", "ends_with", "equals_to", "contains_string"])
def test_unknown_param_rejected(name: str) -> None:
    cls = get_check(name)
    assert cls is not None
    with pytest.raises(ValidationError, match="valeu"):
        cls.params_model.model_validate({"valeu": "x"})


def test_huge_input_is_linear() -> None:
    text = "a" * 200_000
    names = ("starts_with", "ends_with", "equals_to", "contains_string")
    values, seconds = timed(
        lambda: [run(name, text, value="ab", case_sensitive=False).value for name in names]
    )
    assert values == [False] * len(names)
    assert seconds < 0.5


@settings(max_examples=2000, deadline=None)
@given(text=st.text(alphabet=" \t\n\x0b\x0c\r\x1c\x1d\x1e\x1f\x85\xa0ab.\u3000x", max_size=40))
def test_word_count_is_the_length_of_split(text: str) -> None:
    assert _words(text) == len(text.split())


@settings(max_examples=500, deadline=None)
@given(
    text=st.text(alphabet=" \t\n\x1c\x85\xa0ab.\u3000x", max_size=40).map(lambda t: t * 40),
    value=st.integers(0, 1500),
    unit=st.sampled_from(["characters", "words"]),
)
def test_length_bounds_are_their_definition(text: str, value: int, unit: str) -> None:
    """Both bounds, in both units, on ASCII and other text, on either side of the value and
    past the lengths whose detail is made in advance."""
    n = len(text) if unit == "characters" else len(text.split())
    word = unit.removesuffix("s") if n == 1 else unit
    below = run("length_less_than", text, value=value, unit=unit)
    above = run("length_greater_than", text, value=value, unit=unit)
    assert below == CheckResult(n < value, f"{n} {word}")
    assert above == CheckResult(n > value, f"{n} {word}")
