"""RGB checks: the evaluation document's examples, its matching rules, and missing inputs."""

from __future__ import annotations

from typing import Any

import pytest

from sidecar.checks import CheckContext, get_check
from sidecar.checks.base import Check, CheckResult
from sidecar.checks.rgb import corrects_error, detects_error, is_correct, normalize_answer
from sidecar.errors import CheckError
from sidecar.events import Event


def make(name: str, **params: Any) -> Check[Any]:
    cls = get_check(name)
    assert cls is not None, name
    return cls(cls.params_model.model_validate(params), CheckContext())


def run(
    name: str,
    response: str,
    truths: list[str] | None = None,
    cfs: list[str] | None = None,
    **params: Any,
) -> CheckResult:
    event = Event(
        id="e",
        response=response,
        ground_truths=truths or [],
        counterfactual_answers=cfs or [],
    )
    return make(name, **params)(response, event)


# --- normalisation and matching -------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "norm"),
    [
        ("Paris.", "paris"),
        ("The capital is Paris!!!", "the capital is paris"),
        ("  Paris,\tFrance ;: ", "paris, france"),
        ("Wait... what?", "wait... what"),
        ("", ""),
        ("!!!", ""),
    ],
)
def test_normalize_answer(raw: str, norm: str) -> None:
    assert normalize_answer(raw) == norm


def test_document_example_substring() -> None:
    assert is_correct("The capital of France is Paris.", "Paris")


def test_short_answer_inside_long_truth() -> None:
    assert is_correct("Paris", "Paris, the capital of France")
    # The rule's leniency, kept as the benchmark has it.
    assert is_correct("a", "Paris, the capital of France")
    assert not is_correct("Lyon", "Paris, the capital of France")


def test_token_overlap_threshold() -> None:
    truth = "fossil fuels deforestation industry agriculture"
    assert is_correct("agriculture, industry, deforestation and fossil fuels", truth) is False
    # 4 of 5 truth tokens (80 %) present as whitespace tokens.
    assert is_correct("fossil fuels deforestation industry and farming", truth)
    assert not is_correct("fossil fuels deforestation and farming", truth)


def test_strict_mode() -> None:
    assert is_correct("Paris!", "paris", strict=True)
    assert not is_correct("It is Paris", "Paris", strict=True)
    assert run("rgb_answer_correct", "It is Paris", ["Paris"]).value is True
    assert run("rgb_answer_correct", "It is Paris", ["Paris"], strict=True).value is False


def test_answer_correct_best_of_ground_truths() -> None:
    result = run("rgb_answer_correct", "It was built in 1889.", ["1887", "1889"])
    assert result.value is True
    assert result.detail == "matches ground truth 1"
    assert run("rgb_answer_correct", "It was built in 1900.", ["1887", "1889"]).value is False


def test_answer_correct_edge_cases() -> None:
    assert run("rgb_answer_correct", "", ["Paris"]).value is False
    assert run("rgb_answer_correct", "Paris", ["..."]).value is False
    assert run("rgb_answer_correct", "Die Hauptstadt ist München.", ["münchen"]).value is True
    with pytest.raises(CheckError, match="no ground_truths"):
        run("rgb_answer_correct", "Paris", [])


# --- negative rejection ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("response", "rejects"),
    [
        ("I cannot answer this question because the documents don't contain it.", True),
        ("Based on the provided documents, I cannot determine the answer.", True),
        ("The documents do not mention this topic, so I cannot provide an answer.", True),
        ("The answer is probably 42 but I'm not sure.", True),
        ("Based on the information, the answer is London.", False),
        (
            "I can not answer the question because of the insufficient information in documents.",
            True,
        ),
        ("", False),
    ],
)
def test_negative_rejection_document_examples(response: str, rejects: bool) -> None:
    assert run("rgb_negative_rejection", response).value is rejects


def test_negative_rejection_detail_names_the_phrase_not_the_text() -> None:
    result = run("rgb_negative_rejection", "Sorry, CANNOT ANSWER that, Bob.")
    assert result.value is True
    assert result.detail == "found 'cannot answer'"


# --- counterfactual robustness ---------------------------------------------------------------

R1 = "The documents state London, but that is incorrect. The actual capital is Paris."
R2 = "According to the documents, the capital is London."
R3 = "The documents are wrong - the capital is Tokyo."


def test_error_detection_document_examples() -> None:
    assert run("rgb_error_detected", R1, ["Paris"], ["London"]).value is True
    assert run("rgb_error_detected", R2, ["Paris"], ["London"]).value is False
    assert run("rgb_error_detected", R3, ["Paris"], ["London"]).value is True


def test_error_detection_by_rejecting_the_counterfactual() -> None:
    result = run("rgb_error_detected", "It is not London, it is Paris.", ["Paris"], ["London"])
    assert result.value is True
    assert result.detail == "found rejects counterfactual 0"
    assert detects_error("Big Ben is wrong here", "big ben")
    assert not detects_error("It is London.", None)


def test_error_correction_document_examples() -> None:
    assert run("rgb_error_corrected", R1, ["Paris"], ["London"]).value is True
    assert run("rgb_error_corrected", R2, ["Paris"], ["London"]).value is False
    assert run("rgb_error_corrected", R3, ["Paris"], ["London"]).value is False


def test_error_correction_rejects_counterfactual_only_answers() -> None:
    # "london" is short and inside the truth, so it matches it, but it is the counterfactual.
    assert is_correct("London", "London Paris")
    assert not corrects_error("London", "London Paris", "London")
    assert corrects_error("London", "London Paris", None)
    result = run("rgb_error_corrected", "London", ["London Paris"], ["London"])
    assert result.value is False
    assert result.detail == "repeats the counterfactual answer"


def test_error_correction_with_several_answers() -> None:
    assert run("rgb_error_corrected", "Paris.", ["Lyon", "Paris"], ["London", "Rome"]).value
    assert not run("rgb_error_corrected", "Rome.", ["Lyon", "Paris"], ["London", "Rome"]).value


@pytest.mark.parametrize(
    ("name", "truths", "cfs", "missing"),
    [
        ("rgb_error_detected", ["Paris"], [], "no counterfactual_answers"),
        ("rgb_error_corrected", ["Paris"], [], "no counterfactual_answers"),
        ("rgb_error_corrected", [], ["London"], "no ground_truths"),
    ],
)
def test_counterfactual_checks_need_their_inputs(
    name: str, truths: list[str], cfs: list[str], missing: str
) -> None:
    with pytest.raises(CheckError, match=missing):
        run(name, "Paris", truths, cfs)


def test_registered_as_bool_checks_on_the_response() -> None:
    for name in (
        "rgb_answer_correct",
        "rgb_negative_rejection",
        "rgb_error_detected",
        "rgb_error_corrected",
    ):
        cls = get_check(name)
        assert cls is not None
        assert cls.value_kind == "bool"
        assert cls.default_field == "response"
