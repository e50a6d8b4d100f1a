"""RGB benchmark checks: answer correctness, negative rejection, counterfactual robustness.

The RGB evaluation (Chen et al., "Benchmarking Large Language Models in Retrieval-Augmented
Generation") scores four abilities. Per event these become boolean checks whose pass rate over
a window is the benchmark's rate:

* noise robustness and information integration -> ``rgb_answer_correct`` (accuracy);
* negative rejection -> ``rgb_negative_rejection`` (rejection rate);
* counterfactual robustness -> ``rgb_error_detected`` and ``rgb_error_corrected``.

Matching follows the benchmark's evaluation code exactly, including its leniency:

* Normalisation: lowercase, trim, drop a run of ``.!?,;:`` at the end, collapse whitespace.
  Punctuation inside the text stays (``"paris, france"`` has the token ``"paris,"``).
* A response matches a ground truth when both normalise to something non-empty and either
  (strict) they are equal, or (default) the truth is a substring of the response, or the
  response is shorter and a substring of the truth, or at least 80 % of the truth's distinct
  whitespace tokens occur in the response. The second rule makes a very short response such
  as ``"a"`` match any truth containing that letter; that is the benchmark's behaviour.
* Rejection: the lowered, trimmed response contains one of the benchmark's phrases
  (the paper's own wording first, then its wider keyword list).
* Error detection: the response contains one of the benchmark's correction keywords, or says
  ``"not <counterfactual>"`` or ``"<counterfactual> is wrong"``.
* Error correction: the response matches a ground truth and does not mention a
  counterfactual answer without also containing that ground truth.

With several ground truths, the best one counts (correct if any matches). The phrase lists are
the benchmark's own and deliberately independent of the general ``refusal`` check.

Not applicable: a check whose inputs the event lacks — ``ground_truths`` for correctness and
correction, ``counterfactual_answers`` for detection and correction (an event without them is
not a counterfactual probe) — raises :class:`~sidecar.errors.CheckError`, which the pipeline
records as "not applicable" for that event. An empty response is applicable: it is never
correct and never a rejection.

Cost: substring searches and set operations, linear in the text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pydantic import Field

from ..errors import CheckError
from ..events import Event
from .base import Check, CheckContext, CheckResult, NoParams, Params
from .registry import register

__all__ = [
    "ERROR_DETECTION_KEYWORDS",
    "PRIMARY_REJECTION_PHRASES",
    "REJECTION_KEYWORDS",
    "RgbAnswerCorrect",
    "RgbErrorCorrected",
    "RgbErrorDetected",
    "RgbNegativeRejection",
    "corrects_error",
    "detects_error",
    "is_correct",
    "normalize_answer",
    "rejection_phrase",
]

PRIMARY_REJECTION_PHRASES: tuple[str, ...] = (
    "i can not answer the question because of the insufficient information in documents",
    "insufficient information in documents",
    "can not answer",
    "cannot answer",
)
"""The rejection wording the RGB paper asks models to use."""

REJECTION_KEYWORDS: tuple[str, ...] = (
    "i don't know",
    "i cannot",
    "i can't",
    "unable to",
    "not able to",
    "insufficient information",
    "no information",
    "cannot determine",
    "cannot answer",
    "not enough information",
    "don't have enough",
    "unable to determine",
    "cannot find",
    "no relevant",
    "not mentioned",
    "not provided",
    "not specified",
    "unclear",
    "unknown",
    "i'm not sure",
    "i am not sure",
    "cannot be determined",
    "information is not available",
    "does not provide",
)
"""The benchmark's wider list of phrases that count as declining to answer."""

ERROR_DETECTION_KEYWORDS: tuple[str, ...] = (
    "incorrect",
    "wrong",
    "false",
    "error",
    "mistake",
    "inaccurate",
    "not true",
    "not correct",
    "factually incorrect",
    "contradicts",
    "actually",
    "in fact",
    "however",
    "but actually",
    "the correct answer",
    "should be",
)
"""Words by which a response flags that the documents are wrong."""

_TRAILING_PUNCT = re.compile(r"(?<![.!?,;:])[.!?,;:]+$")
"""Read from a run's first mark only: from each, a long run cost its length squared."""
_OVERLAP = 0.8


def normalize_answer(answer: str) -> str:
    """Lowercase, trim, drop trailing ``.!?,;:`` and collapse whitespace."""
    answer = _TRAILING_PUNCT.sub("", answer.lower().strip())
    return " ".join(answer.split())


def _matches(norm_response: str, norm_truth: str, strict: bool) -> bool:
    if not norm_response or not norm_truth:
        return False
    if strict:
        return norm_response == norm_truth
    if norm_truth in norm_response:
        return True
    if len(norm_response) < len(norm_truth) and norm_response in norm_truth:
        return True
    truth_tokens = set(norm_truth.split())
    overlap = len(truth_tokens & set(norm_response.split())) / len(truth_tokens)
    return overlap >= _OVERLAP


def is_correct(response: str, ground_truth: str, strict: bool = False) -> bool:
    """Whether the response gives the ground truth, by the benchmark's matching rules."""
    return _matches(normalize_answer(response), normalize_answer(ground_truth), strict)


def rejection_phrase(response: str) -> str | None:
    """The first rejection phrase the response contains, or None."""
    lowered = response.lower().strip()
    for phrase in PRIMARY_REJECTION_PHRASES:
        if phrase in lowered:
            return phrase
    for phrase in REJECTION_KEYWORDS:
        if phrase in lowered:
            return phrase
    return None


def _detection_cue(response: str, counterfactuals: Sequence[str]) -> str | None:
    lowered = response.lower()
    for keyword in ERROR_DETECTION_KEYWORDS:
        if keyword in lowered:
            return repr(keyword)
    for index, cf in enumerate(counterfactuals):
        if not cf:
            continue
        cf_lower = cf.lower()
        if f"not {cf_lower}" in lowered or f"{cf_lower} is wrong" in lowered:
            return f"rejects counterfactual {index}"
    return None


def detects_error(response: str, counterfactual_answer: str | None) -> bool:
    """Whether the response flags the documents' (counterfactual) answer as wrong."""
    return _detection_cue(response, [counterfactual_answer or ""]) is not None


def _corrects(
    norm_response: str, norm_truth: str, norm_counterfactuals: Sequence[str], strict: bool
) -> bool:
    if not _matches(norm_response, norm_truth, strict):
        return False
    if norm_truth in norm_response:
        return True
    return not any(cf in norm_response for cf in norm_counterfactuals)


def corrects_error(
    response: str, correct_answer: str, counterfactual_answer: str | None, strict: bool = False
) -> bool:
    """Whether the response gives the right answer rather than only the counterfactual one."""
    cfs = [normalize_answer(counterfactual_answer)] if counterfactual_answer else []
    return _corrects(normalize_answer(response), normalize_answer(correct_answer), cfs, strict)


class StrictParams(Params):
    strict: bool = Field(False, description="require the normalised texts to be equal")


@register
class RgbAnswerCorrect(Check[StrictParams]):
    """True when the text gives one of the ``ground_truths`` (RGB accuracy)."""

    name = "rgb_answer_correct"
    needs = ("ground_truths",)
    params_model = StrictParams

    def __init__(self, params: StrictParams, ctx: CheckContext) -> None:
        super().__init__(params, ctx)
        self.strict = params.strict

    def __call__(self, text: str, event: Event) -> CheckResult:
        if not event.ground_truths:
            raise CheckError("no ground_truths")
        norm = normalize_answer(text)
        for index, truth in enumerate(event.ground_truths):
            if _matches(norm, normalize_answer(truth), self.strict):
                return CheckResult(True, f"matches ground truth {index}")
        return CheckResult(False, f"matches none of {len(event.ground_truths)} ground truths")


@register
class RgbNegativeRejection(Check[NoParams]):
    """True when the text declines to answer, by RGB's rejection phrases."""

    name = "rgb_negative_rejection"

    def __call__(self, text: str, event: Event) -> CheckResult:
        phrase = rejection_phrase(text)
        return CheckResult(phrase is not None, f"found {phrase!r}" if phrase else None)


@register
class RgbErrorDetected(Check[NoParams]):
    """True when the text flags the documents' counterfactual answer as wrong."""

    name = "rgb_error_detected"
    needs = ("counterfactual_answers",)

    def __call__(self, text: str, event: Event) -> CheckResult:
        if not event.counterfactual_answers:
            raise CheckError("no counterfactual_answers")
        cue = _detection_cue(text, event.counterfactual_answers)
        return CheckResult(cue is not None, f"found {cue}" if cue else None)


@register
class RgbErrorCorrected(Check[StrictParams]):
    """True when the text gives a ground truth instead of only the counterfactual answer."""

    name = "rgb_error_corrected"
    needs = ("ground_truths", "counterfactual_answers")
    params_model = StrictParams

    def __init__(self, params: StrictParams, ctx: CheckContext) -> None:
        super().__init__(params, ctx)
        self.strict = params.strict

    def __call__(self, text: str, event: Event) -> CheckResult:
        if not event.ground_truths:
            raise CheckError("no ground_truths")
        if not event.counterfactual_answers:
            raise CheckError("no counterfactual_answers")
        norm = normalize_answer(text)
        cfs = [normalize_answer(cf) for cf in event.counterfactual_answers if cf]
        for index, truth in enumerate(event.ground_truths):
            if _corrects(norm, normalize_answer(truth), cfs, self.strict):
                return CheckResult(True, f"gives ground truth {index}")
        mentions = any(cf in norm for cf in cfs)
        return CheckResult(
            False, "repeats the counterfactual answer" if mentions else "no ground truth given"
        )
