"""fuzzy_match: scorers, thresholds as cutoffs, several targets."""

from __future__ import annotations

import functools
import random
from typing import Any

import pytest
from pydantic import ValidationError
from rapidfuzz import fuzz
from rapidfuzz.utils import default_process

from sidecar.checks import CheckContext, get_check
from sidecar.checks.base import CheckResult
from sidecar.checks.fuzzy import (
    READ_MIN,
    WORK_BOUND,
    FuzzyMatch,
    FuzzyParams,
    text_bound,
    work,
)
from sidecar.events import Event
from tests.checks.timing import best_of_three, timed

EV = Event(id="e1", response="r")


def make(**params: Any) -> FuzzyMatch:
    return FuzzyMatch(FuzzyParams.model_validate(params), CheckContext())


def run(text: str, **params: Any) -> CheckResult:
    return make(**params)(text, EV)


def test_registered_as_score() -> None:
    assert get_check("fuzzy_match") is FuzzyMatch
    assert FuzzyMatch.value_kind == "score"


def test_exact_match_is_one() -> None:
    assert run("Paris", target="Paris") == CheckResult(1.0, "100.0 vs target 0")


def test_preprocessing_ignores_case_and_punctuation() -> None:
    assert run("  PARIS!! ", target="paris").value == 1.0
    assert run("  PARIS!! ", target="paris", preprocess=False).value < 0.7


def test_score_is_rapidfuzz_over_100() -> None:
    text, target = "the capital is paris", "paris is the capital"
    for scorer in ("ratio", "token_sort_ratio", "token_set_ratio", "WRatio", "partial_ratio"):
        expected = getattr(fuzz, scorer)(text, target) / 100
        assert run(text, target=target, scorer=scorer).value == pytest.approx(expected)
    assert run(text, target=target, scorer="token_sort_ratio").value == 1.0
    assert run(text, target=target, scorer="ratio").value < 0.8


def test_partial_ratio_finds_target_in_longer_text() -> None:
    text = "After checking the records, the refund was approved yesterday."
    assert run(text, target="refund approved", scorer="ratio").value < 0.5
    assert run(text, target="refund was approved", scorer="partial_ratio").value == 1.0


def test_best_of_several_targets() -> None:
    result = run("I cannot help with that", target=["sure thing", "i can't help with that"])
    assert result.detail is not None
    assert result.detail.endswith("vs target 1")
    assert 0.9 < float(result.value) < 1.0


def test_threshold_is_a_cutoff() -> None:
    text, target = "colour", "color"
    plain = run(text, target=target).value
    assert 0.9 < float(plain) < 1.0
    assert run(text, target=target, threshold=90).value == plain
    assert run(text, target=target, threshold=95) == CheckResult(0.0, "below 95")
    assert run(text, target=["nope", "nothing"], threshold=80) == CheckResult(0.0, "below 80")


def test_empty_and_unicode_text() -> None:
    assert run("", target="x") == CheckResult(0.0, "empty text")
    assert run("?!", target="x") == CheckResult(0.0, "empty text")  # nothing left
    assert run("Zürich ist schön", target="zurich ist schon").value > 0.8
    assert run("東京都", target="東京").value > 0.7


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"target": ""},
        {"target": "   "},
        {"target": []},
        {"target": ["ok", ""]},
        {"target": "x", "scorer": "levenshtein"},
        {"target": "x", "threshold": 101},
        {"target": "x", "threshold": -1},
        {"target": "x" * 2001},
        {"target": "x", "cutoff": 50},
    ],
)
def test_bad_params(params: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        FuzzyParams.model_validate(params)


def test_target_without_letters_rejected_at_construction() -> None:
    with pytest.raises(ValueError, match="after preprocessing"):
        make(target="!!!")
    assert make(target="!!!", preprocess=False)("!!!", EV).value == 1.0


@pytest.mark.parametrize(
    "scorer", ["ratio", "partial_ratio", "token_set_ratio", "token_sort_ratio", "WRatio"]
)
def test_huge_input_is_bounded(scorer: str) -> None:
    check = make(target=[f"phrase number {i}" for i in range(20)], scorer=scorer, threshold=80)
    text = "lorem ipsum dolor sit amet " * 7_400
    assert best_of_three(lambda: check(text, EV)) < 1.0


def _words(n: int, seed: int) -> str:
    rng = random.Random(seed)
    text = " ".join(f"w{rng.randrange(500)}" for _ in range(n // 3 + 1))
    return text[:n]


def test_the_text_bound_is_the_longest_text_within_the_work_bound() -> None:
    for scorer, targets in [
        ("partial_ratio", [_words(1000, 1)]),
        ("partial_ratio", [_words(60, i) for i in range(100)]),
        ("WRatio", [_words(500, i) for i in range(2)]),
        ("ratio", [_words(2000, i) for i in range(50)]),
        ("token_set_ratio", [_words(500, i) for i in range(100)]),
    ]:
        bound = text_bound(scorer, targets)
        assert bound >= READ_MIN, scorer
        total = [sum(work(scorer, len(t), n) for t in targets) for n in (bound, bound + 1)]
        assert total[0] <= WORK_BOUND < total[1], scorer


@functools.cache
def _chinese() -> str:
    """A million Han characters (made once a test asks: every worker imports this module)."""
    return "".join(chr(0x4E00 + (i * 7919) % 3000) for i in range(1_000_000))


@pytest.mark.parametrize(
    ("scorer", "count", "length"),
    [
        ("partial_ratio", 1, 1000),
        ("partial_ratio", 100, 60),
        ("WRatio", 2, 500),
        ("ratio", 50, 2000),
        ("token_set_ratio", 1000, 60),
    ],
)
@pytest.mark.parametrize("text", ["chinese", "one letter"])
def test_a_text_nothing_like_the_targets_is_read_in_bounded_time(
    scorer: str, count: int, length: int, text: str
) -> None:
    """1 MB of text that leaves rapidfuzz nothing to cut short (a partial_ratio target of 1,000
    characters took 1.5 s on 100 KB of it): read up to the bound, about a quarter of a second
    on the machine it was measured on (the bound here is loose for a loaded CI machine)."""
    targets = [_words(length, i) for i in range(count)]
    check = make(target=targets, scorer=scorer, preprocess=False)
    long = _chinese() if text == "chinese" else "a" * 1_000_000
    result, seconds = timed(lambda: check(long, EV))
    assert seconds < 2.0
    assert result.detail is not None and "characters read: size bound" in result.detail


def test_a_long_target_slid_over_a_long_text_reads_its_start_and_says_so() -> None:
    """One 1,000-character target, partial_ratio, 300 KB of text: the text is read up to the
    bound, the score is the scorer's on that."""
    target = _words(1000, 7)
    text = _words(300_000, 8)
    check = make(target=target, scorer="partial_ratio")
    assert READ_MIN <= check.read_max < len(text)
    result = check(text, EV)
    read = default_process(text)[: check.read_max]
    target = default_process(target)
    assert result.value == pytest.approx(fuzz.partial_ratio(read, target) / 100)
    assert result.detail is not None
    assert result.detail.endswith(f"(first {check.read_max:,} characters read: size bound)")
    # a text within the bound is read whole, its detail as before
    short = text[:5000]
    assert make(target=target, scorer="partial_ratio")(short, EV).detail == (
        f"{fuzz.partial_ratio(default_process(short), target):.1f} vs target 0"
    )


@pytest.mark.parametrize(
    ("scorer", "count", "length"),
    [
        ("partial_ratio", 1, 2000),
        ("partial_ratio", 1000, 60),
        ("WRatio", 5, 1000),
        ("ratio", 1000, 2000),
        ("token_sort_ratio", 1000, 2000),
    ],
)
def test_targets_that_leave_too_little_text_to_read_are_refused(
    scorer: str, count: int, length: int
) -> None:
    """50 targets of 2,000 characters slid over 20 KB took 8 s: such a rule does not load, and
    the message says what would."""
    targets = [_words(length, i) for i in range(count)]
    with pytest.raises(ValueError, match=f"{scorer} over {count} target.*fewer or shorter") as e:
        make(target=targets, scorer=scorer)
    for other in ("ratio", "token_set_ratio"):  # what the message offers instead loads
        if f"use the {other}" in str(e.value) or f"or {other} scorer" in str(e.value):
            assert make(target=targets, scorer=other).read_max >= READ_MIN
    assert make(target=targets[:1], scorer="token_set_ratio").read_max >= READ_MIN
