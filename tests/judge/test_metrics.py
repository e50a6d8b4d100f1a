"""Tests for the judge metric arithmetic: the documents' worked examples plus edge cases."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable

import pytest

from sidecar.judge import metrics
from sidecar.judge.metrics import (
    Verdict,
    aggregate_context_verdicts,
    answer_correctness,
    answer_relevance,
    answer_similarity,
    average_precision,
    best_answer_correctness,
    best_context_recall,
    best_over_ground_truths,
    bias,
    context_precision,
    context_recall,
    context_relevance,
    faithfulness,
    faithfulness_from_counts,
    hallucination,
    hit_rate,
    ndcg,
    normalize_verdict,
    reciprocal_rank,
    retrieval_precision,
    summary_coherence,
    toxicity,
)

VerdictMetric = Callable[[Iterable[Verdict]], float]

# Every function that scores one flat list of verdicts.
VERDICT_METRICS: list[VerdictMetric] = [
    answer_relevance,
    bias,
    toxicity,
    context_precision,
    context_recall,
    context_relevance,
    faithfulness,
    hallucination,
    retrieval_precision,
    average_precision,
    reciprocal_rank,
    hit_rate,
    ndcg,
]

# Plain shares of "yes": the score is (#yes / #verdicts).
SHARE_METRICS: list[VerdictMetric] = [
    answer_relevance,
    bias,
    toxicity,
    context_recall,
    context_relevance,
    faithfulness,
    hallucination,
    retrieval_precision,
]


def _yn(text: str) -> list[str]:
    """'ynny' -> ['yes', 'no', 'no', 'yes'], to keep rank-ordered cases readable."""
    return ["yes" if c == "y" else "no" for c in text]


# --- public surface ----------------------------------------------------------------------


def test_all_is_sorted_and_matches_public_names() -> None:
    assert metrics.__all__ == sorted(metrics.__all__)
    public = {
        name
        for name, value in vars(metrics).items()
        if not name.startswith("_")
        and getattr(value, "__module__", None) == metrics.__name__
        and callable(value)
    }
    assert public <= set(metrics.__all__)
    for name in metrics.__all__:
        assert hasattr(metrics, name), name


# --- verdict normalisation ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (True, True),
        (False, False),
        ("yes", True),
        ("no", False),
        ("YES", True),
        (" No\n", False),
        ("Yes", True),
    ],
)
def test_normalize_verdict_accepts_booleans_and_yes_no(raw: object, expected: bool) -> None:
    assert normalize_verdict(raw) is expected


@pytest.mark.parametrize("raw", ["y", "n", "true", "false", "", "yes!", "maybe", 1, 0, None, 0.5])
def test_normalize_verdict_rejects_anything_else(raw: object) -> None:
    with pytest.raises(ValueError, match="verdict must be a bool or the string 'yes' or 'no'"):
        normalize_verdict(raw)


@pytest.mark.parametrize("metric", VERDICT_METRICS)
def test_every_verdict_metric_rejects_a_bad_verdict(metric: VerdictMetric) -> None:
    with pytest.raises(ValueError, match="'maybe'"):
        metric(["yes", "maybe"])


@pytest.mark.parametrize("metric", VERDICT_METRICS)
def test_every_verdict_metric_rejects_a_bare_string(metric: VerdictMetric) -> None:
    with pytest.raises(ValueError, match="not a single string"):
        metric("yes")


@pytest.mark.parametrize("metric", VERDICT_METRICS)
def test_mixed_verdict_spellings_score_like_booleans(metric: VerdictMetric) -> None:
    as_words: list[Verdict] = ["no", "YES", False, " yes "]
    as_bools: list[Verdict] = [False, True, False, True]
    assert metric(as_words) == metric(as_bools)


@pytest.mark.parametrize("metric", VERDICT_METRICS)
def test_every_verdict_metric_accepts_a_generator(metric: VerdictMetric) -> None:
    verdicts = [True, False, True]
    assert metric(v for v in verdicts) == metric(verdicts)


# --- shares -------------------------------------------------------------------------------


@pytest.mark.parametrize("metric", SHARE_METRICS)
@pytest.mark.parametrize(
    ("verdicts", "expected"),
    [
        ("y", 1.0),
        ("n", 0.0),
        ("yyyy", 1.0),
        ("nnnn", 0.0),
        ("ynn", 1 / 3),
        ("nyny", 0.5),
        ("yyyn", 0.75),
    ],
)
def test_share_metrics_count_yes_over_total(
    metric: VerdictMetric, verdicts: str, expected: float
) -> None:
    assert metric(_yn(verdicts)) == pytest.approx(expected)


@pytest.mark.parametrize("metric", SHARE_METRICS)
def test_share_metrics_ignore_order(metric: VerdictMetric) -> None:
    assert metric(_yn("yynnn")) == metric(_yn("nnnyy"))


@pytest.mark.parametrize("metric", [bias, toxicity])
def test_bias_and_toxicity_are_zero_without_opinions(metric: VerdictMetric) -> None:
    assert metric([]) == 0.0


@pytest.mark.parametrize(
    "metric",
    [answer_relevance, context_recall, context_relevance, hallucination, retrieval_precision],
)
def test_documented_zero_for_empty_lists(metric: VerdictMetric) -> None:
    assert metric([]) == 0.0


def test_faithfulness_without_claims_is_one() -> None:
    assert faithfulness([]) == 1.0


# --- answer correctness ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tp", "fp", "fn", "expected"),
    [
        (1, 0, 0, 1.0),
        (3, 0, 0, 1.0),
        (1, 1, 0, 1 / 1.5),
        (1, 0, 1, 1 / 1.5),
        (2, 1, 1, 2 / 3),
        (3, 2, 4, 0.5),
        (0, 0, 0, 0.0),
        (0, 5, 0, 0.0),
        (0, 0, 5, 0.0),
        (0, 2, 3, 0.0),
    ],
)
def test_answer_correctness_is_statement_f1(tp: int, fp: int, fn: int, expected: float) -> None:
    assert answer_correctness(tp, fp, fn) == pytest.approx(expected)


def test_answer_correctness_matches_precision_recall_f1() -> None:
    # The document's expression equals the harmonic mean of precision and recall.
    tp, fp, fn = 4, 3, 1
    precision, recall = tp / (tp + fp), tp / (tp + fn)
    f1 = 2 * precision * recall / (precision + recall)
    assert answer_correctness(tp, fp, fn) == pytest.approx(f1)


def test_answer_correctness_is_one_only_without_errors() -> None:
    assert answer_correctness(5, 0, 0) == 1.0
    assert answer_correctness(5, 1, 0) < 1.0
    assert answer_correctness(5, 0, 1) < 1.0


@pytest.mark.parametrize(
    ("counts", "name"),
    [((-1, 0, 0), "tp"), ((1, -1, 0), "fp"), ((1, 0, -2), "fn"), ((True, 0, 0), "tp")],
)
def test_answer_correctness_rejects_bad_counts(counts: tuple[int, int, int], name: str) -> None:
    with pytest.raises(ValueError, match=f"^{name} must be a non-negative integer"):
        answer_correctness(*counts)


def test_answer_correctness_rejects_float_counts() -> None:
    with pytest.raises(ValueError, match="fp must be a non-negative integer"):
        answer_correctness(1, 0.5, 0)  # type: ignore[arg-type]


def test_best_answer_correctness_takes_the_best_reference() -> None:
    per_ground_truth = [(1, 2, 2), (3, 0, 1), (0, 4, 4)]
    assert best_answer_correctness(per_ground_truth) == pytest.approx(3 / 3.5)


def test_best_answer_correctness_single_reference_equals_plain_score() -> None:
    assert best_answer_correctness([(2, 1, 3)]) == answer_correctness(2, 1, 3)


def test_best_answer_correctness_ties_and_all_zero() -> None:
    assert best_answer_correctness([(1, 1, 1), (2, 2, 2)]) == pytest.approx(0.5)
    assert best_answer_correctness([(0, 1, 1), (0, 3, 0)]) == 0.0


def test_best_answer_correctness_needs_a_reference() -> None:
    with pytest.raises(ValueError, match="at least one ground truth"):
        best_answer_correctness([])


# --- best over ground truths -------------------------------------------------------------


def test_best_over_ground_truths_takes_the_maximum() -> None:
    assert best_over_ground_truths([0.2, 0.9, 0.5]) == 0.9
    assert best_over_ground_truths(iter([0.0])) == 0.0


def test_best_over_ground_truths_needs_a_score() -> None:
    with pytest.raises(ValueError, match="at least one ground truth"):
        best_over_ground_truths([])


# --- context precision -------------------------------------------------------------------


def test_context_precision_document_examples() -> None:
    assert context_precision(["yes", "no", "no", "yes"]) == pytest.approx(0.75)
    assert context_precision(["no", "yes", "no", "yes"]) == pytest.approx(0.5)


@pytest.mark.parametrize(
    ("verdicts", "expected"),
    [
        ("y", 1.0),
        ("yyyy", 1.0),
        ("nnnn", 0.0),
        ("", 0.0),
        ("n", 0.0),
        ("ny", 0.5),
        ("nny", 1 / 3),
        ("yyn", 1.0),
        ("yny", (1 + 2 / 3) / 2),
        ("nyy", (1 / 2 + 2 / 3) / 2),
    ],
)
def test_context_precision_cases(verdicts: str, expected: float) -> None:
    assert context_precision(_yn(verdicts)) == pytest.approx(expected)


def test_context_precision_rewards_earlier_useful_contexts() -> None:
    assert (
        context_precision(_yn("ynn"))
        > context_precision(_yn("nyn"))
        > context_precision(_yn("nny"))
    )


def test_context_precision_trailing_noise_does_not_change_score() -> None:
    # Irrelevant contexts after the last useful one add no precision@k term.
    assert context_precision(_yn("yny")) == context_precision(_yn("ynynnnn"))


def test_aggregate_context_verdicts_is_elementwise_or() -> None:
    per_ground_truth: list[list[Verdict]] = [
        [*_yn("ynnn")],
        ["no", "no", "no", "yes"],
        [False, False, True, False],
    ]
    assert aggregate_context_verdicts(per_ground_truth) == [True, False, True, True]


def test_context_precision_aggregates_before_scoring() -> None:
    # Each reference alone would score 1.0 (its single useful context is ranked first or
    # alone), but the aggregate list "yny" scores (1 + 2/3) / 2: the document aggregates the
    # verdicts, it does not take the best per-reference score.
    first, second = _yn("ynn"), _yn("nny")
    merged = aggregate_context_verdicts([first, second])
    assert merged == [True, False, True]
    assert context_precision(merged) == pytest.approx((1 + 2 / 3) / 2)
    assert context_precision(merged) != max(context_precision(first), context_precision(second))


def test_aggregate_context_verdicts_single_reference_is_identity() -> None:
    assert aggregate_context_verdicts([_yn("nyn")]) == [False, True, False]


def test_aggregate_context_verdicts_no_contexts() -> None:
    assert aggregate_context_verdicts([[], []]) == []


def test_aggregate_context_verdicts_rejects_ragged_lists() -> None:
    with pytest.raises(ValueError, match=r"one verdict per context; got list lengths \[2, 3\]"):
        aggregate_context_verdicts([_yn("yn"), _yn("ynn")])


def test_aggregate_context_verdicts_needs_a_reference() -> None:
    with pytest.raises(ValueError, match="at least one ground truth"):
        aggregate_context_verdicts([])


def test_aggregate_context_verdicts_rejects_bad_verdicts() -> None:
    with pytest.raises(ValueError, match="'sure'"):
        aggregate_context_verdicts([["yes", "sure"]])


# --- context recall ----------------------------------------------------------------------


def test_best_context_recall_takes_the_best_reference() -> None:
    assert best_context_recall([_yn("ynnn"), _yn("yyn"), _yn("nn")]) == pytest.approx(2 / 3)


def test_best_context_recall_empty_reference_never_wins() -> None:
    assert best_context_recall([[], _yn("ynnn")]) == pytest.approx(0.25)


def test_best_context_recall_ties() -> None:
    assert best_context_recall([_yn("yn"), _yn("nyny")]) == pytest.approx(0.5)


def test_best_context_recall_all_yes_and_all_no() -> None:
    assert best_context_recall([_yn("nn"), _yn("yyy")]) == 1.0
    assert best_context_recall([_yn("nn"), _yn("nnn")]) == 0.0


def test_best_context_recall_needs_a_reference() -> None:
    with pytest.raises(ValueError, match="at least one ground truth"):
        best_context_recall([])


# --- faithfulness and hallucination ------------------------------------------------------


def test_faithfulness_from_counts_counts_unrelated_claims_against() -> None:
    # RAGAS's definition, which the document adopts: 2 implied out of 4 claims.
    assert faithfulness_from_counts(implied=2, contradicted=1, unrelated=1) == pytest.approx(0.5)
    # DeepEval would have scored unrelated claims as faithful (3/4); we must not.
    assert faithfulness_from_counts(implied=2, contradicted=1, unrelated=1) != 0.75
    assert faithfulness_from_counts(implied=1, contradicted=0, unrelated=3) == pytest.approx(0.25)


def test_faithfulness_from_counts_agrees_with_verdicts() -> None:
    # implied -> yes; contradicted and unrelated -> no.
    assert faithfulness_from_counts(3, 1, 2) == faithfulness(_yn("ynyynn"))


def test_faithfulness_from_counts_edges() -> None:
    assert faithfulness_from_counts(0, 0, 0) == 1.0
    assert faithfulness_from_counts(4, 0, 0) == 1.0
    assert faithfulness_from_counts(0, 0, 4) == 0.0


def test_faithfulness_from_counts_rejects_bad_counts() -> None:
    with pytest.raises(ValueError, match="unrelated must be a non-negative integer"):
        faithfulness_from_counts(1, 0, -1)


def test_hallucination_is_share_of_contradicted_contexts() -> None:
    # "yes" means the answer contradicts that context; lower is better.
    assert hallucination([False, False, False]) == 0.0
    assert hallucination([True, False, False, False]) == pytest.approx(0.25)


# --- summary coherence -------------------------------------------------------------------


@pytest.mark.parametrize(("raw", "expected"), [(1, 1), (3, 3), (5, 5), (4.0, 4), (1.0, 1)])
def test_summary_coherence_accepts_integers_one_to_five(raw: object, expected: int) -> None:
    result = summary_coherence(raw)
    assert result == expected
    assert type(result) is int


@pytest.mark.parametrize("raw", [0, 6, -1, 3.5, 0.0, 5.0001, math.nan, math.inf, True, "4", None])
def test_summary_coherence_rejects_other_values(raw: object) -> None:
    with pytest.raises(ValueError, match="summary coherence must be an integer from 1 to 5"):
        summary_coherence(raw)


# --- answer similarity -------------------------------------------------------------------


@pytest.mark.parametrize(("raw", "expected"), [(0, 0.0), (1, 1.0), (0.42, 0.42), (1.0, 1.0)])
def test_answer_similarity_accepts_unit_interval(raw: object, expected: float) -> None:
    result = answer_similarity(raw)
    assert result == expected
    assert type(result) is float


@pytest.mark.parametrize("raw", [-0.01, 1.01, 2, math.nan, math.inf, False, "0.5", None])
def test_answer_similarity_rejects_other_values(raw: object) -> None:
    with pytest.raises(ValueError, match="answer similarity must be a number from 0 to 1"):
        answer_similarity(raw)


# --- retrieval quality -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("verdicts", "expected"),
    [
        ("", 0.0),
        ("nnn", 0.0),
        ("yyy", 1.0),
        ("ynny", 0.75),
        ("nyny", 0.5),
        ("nny", 1 / 3),
        ("yyn", 1.0),
        ("nyy", (1 / 2 + 2 / 3) / 2),
    ],
)
def test_average_precision(verdicts: str, expected: float) -> None:
    assert average_precision(_yn(verdicts)) == pytest.approx(expected)


def test_average_precision_equals_context_precision_arithmetic() -> None:
    for case in ["ynny", "nyny", "nnny", "yyyy", "nyyn", ""]:
        assert average_precision(_yn(case)) == context_precision(_yn(case))


@pytest.mark.parametrize(
    ("verdicts", "expected"),
    [("", 0.0), ("nnn", 0.0), ("y", 1.0), ("yny", 1.0), ("ny", 0.5), ("nnnyy", 0.25)],
)
def test_reciprocal_rank(verdicts: str, expected: float) -> None:
    assert reciprocal_rank(_yn(verdicts)) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("verdicts", "expected"),
    [("", 0.0), ("nnn", 0.0), ("y", 1.0), ("nnny", 1.0), ("yyy", 1.0)],
)
def test_hit_rate(verdicts: str, expected: float) -> None:
    assert hit_rate(_yn(verdicts)) == expected


@pytest.mark.parametrize(
    ("verdicts", "expected"),
    [
        ("", 0.0),
        ("nnn", 0.0),
        ("y", 1.0),
        ("yyy", 1.0),
        ("yynn", 1.0),
        ("ny", (1 / math.log2(3)) / 1.0),
        ("nny", 0.5),
        ("yny", (1 + 0.5) / (1 + 1 / math.log2(3))),
        ("nyy", (1 / math.log2(3) + 0.5) / (1 + 1 / math.log2(3))),
    ],
)
def test_ndcg_binary_gain_log2_discount(verdicts: str, expected: float) -> None:
    assert ndcg(_yn(verdicts)) == pytest.approx(expected)


def test_ndcg_is_one_exactly_for_ideal_orderings() -> None:
    assert ndcg(_yn("yyynn")) == 1.0
    assert ndcg(_yn("yynyn")) < 1.0


def test_ndcg_prefers_relevant_contexts_higher() -> None:
    assert ndcg(_yn("ynnn")) > ndcg(_yn("nynn")) > ndcg(_yn("nnyn")) > ndcg(_yn("nnny")) > 0.0


@pytest.mark.parametrize(
    "metric", [retrieval_precision, average_precision, reciprocal_rank, hit_rate, ndcg]
)
def test_retrieval_measures_stay_in_unit_interval(metric: VerdictMetric) -> None:
    for size in range(1, 6):
        for mask in range(2**size):
            flags: list[Verdict] = [bool(mask >> i & 1) for i in range(size)]
            score = metric(flags)
            assert 0.0 <= score <= 1.0
            assert (score == 0.0) == (not any(flags))
