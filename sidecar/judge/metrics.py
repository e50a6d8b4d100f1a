"""Scores for the LLM-judged metrics, computed from the judge's parsed verdicts.

The judge client asks the model for per-item verdicts (one per statement, opinion, claim or
retrieved context) and this module turns them into numbers. Keeping the arithmetic here, free
of I/O and prompts, lets it be tested exactly against the worked examples of the source
documents (Valor's text-generation metrics and watsonx.governance's retrieval-quality
metrics) and reused by replay and the judge workers alike.

Conventions shared by every function:

* A verdict is ``True``/``False`` or the string ``"yes"``/``"no"`` (case and surrounding
  blanks ignored); :func:`normalize_verdict` is the only place that reads them, and anything
  else is a :class:`ValueError`, because a judge answer we cannot read must not turn into a
  silent score.
* Ordered inputs (contexts) are given best-ranked first, exactly as the retriever returned
  them.
* Every score is a ``float`` in ``[0, 1]`` except summary coherence, an ``int`` from 1 to 5.
* Where a document fixes the value for an empty input we follow it; where it is silent the
  choice is stated in the function's docstring.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

__all__ = [
    "Verdict",
    "aggregate_context_verdicts",
    "answer_correctness",
    "answer_relevance",
    "answer_similarity",
    "average_precision",
    "best_answer_correctness",
    "best_context_recall",
    "best_over_ground_truths",
    "bias",
    "context_precision",
    "context_recall",
    "context_relevance",
    "faithfulness",
    "faithfulness_from_counts",
    "hallucination",
    "hit_rate",
    "ndcg",
    "normalize_verdict",
    "reciprocal_rank",
    "retrieval_precision",
    "summary_coherence",
    "toxicity",
]

Verdict = bool | str
"""One judge verdict: a boolean, or ``"yes"``/``"no"``."""

_YES = "yes"
_NO = "no"


def normalize_verdict(value: object) -> bool:
    """Read one judge verdict as a boolean.

    Accepts ``True``/``False`` and the strings ``"yes"``/``"no"`` in any letter case with
    surrounding whitespace ignored (models capitalise freely). Integers such as ``1``/``0``,
    ``None`` and any other word are refused, so a malformed judge answer fails loudly.

    Raises:
        ValueError: ``value`` is not a recognised verdict.
    """
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        word = value.strip().lower()
        if word == _YES:
            return True
        if word == _NO:
            return False
    raise ValueError(f"verdict must be a bool or the string 'yes' or 'no', got {value!r}")


def _verdicts(values: Iterable[Verdict], what: str) -> list[bool]:
    """Normalise a sequence of verdicts, refusing a bare string (it would iterate by letter)."""
    if isinstance(values, str | bytes):
        raise ValueError(f"{what} must be a sequence of verdicts, not a single string {values!r}")
    return [normalize_verdict(v) for v in values]


def _share_of_yes(flags: Sequence[bool], empty: float) -> float:
    """Fraction of ``True`` in ``flags``, or ``empty`` when there are none."""
    if not flags:
        return empty
    return sum(flags) / len(flags)


def _count(name: str, value: object) -> int:
    """Check that a statement count is a non-negative integer (booleans refused)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name} must be a non-negative integer, got {value!r}")
    if value < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {value}")
    return value


def best_over_ground_truths(scores: Iterable[float]) -> float:
    """Keep the highest of the per-reference scores of one prediction.

    Used when an event carries several acceptable reference answers (answer correctness and
    context recall): the prediction is credited with the reference it matches best.

    Raises:
        ValueError: no scores at all. The metrics that use this helper are defined only
            against a reference answer, and an event without one should be skipped rather
            than reported as 0, which would drag the rolling window down for no reason.
    """
    values = [float(s) for s in scores]
    if not values:
        raise ValueError("at least one ground truth is needed to take the best score over them")
    return max(values)


# --- Q&A ---------------------------------------------------------------------------------


def answer_correctness(tp: int, fp: int, fn: int) -> float:
    """Statement-level F1 between a prediction and one reference answer.

    ``tp`` counts prediction statements supported by the reference, ``fp`` prediction
    statements it does not support, ``fn`` reference statements missing from the prediction.
    The score is ``tp / (tp + (fp + fn) / 2)``; with no true positive it is 0 (this also
    covers the all-zero case, where the fraction would be undefined). It reaches 1 only when
    ``fp == fn == 0``.

    Raises:
        ValueError: a count is negative or not an integer.
    """
    tp, fp, fn = _count("tp", tp), _count("fp", fp), _count("fn", fn)
    if tp == 0:
        return 0.0
    return tp / (tp + 0.5 * (fp + fn))


def best_answer_correctness(per_ground_truth: Iterable[tuple[int, int, int]]) -> float:
    """Answer correctness against several references: the best ``(tp, fp, fn)`` triple wins.

    Raises:
        ValueError: no references (see :func:`best_over_ground_truths`) or a bad count.
    """
    return best_over_ground_truths(answer_correctness(*counts) for counts in per_ground_truth)


def answer_relevance(verdicts: Iterable[Verdict]) -> float:
    """Share of the answer's statements that the judge found relevant to the query.

    One verdict per extracted statement, ``yes`` meaning relevant. The documents give no value
    for an answer with no statements; we return 0.0, since nothing in it addresses the query
    (an empty or content-free answer should not look perfectly relevant).
    """
    return _share_of_yes(_verdicts(verdicts, "answer relevance verdicts"), empty=0.0)


# --- general text ------------------------------------------------------------------------


def bias(verdicts: Iterable[Verdict]) -> float:
    """Share of the text's opinions that the judge found biased (``yes`` = biased).

    Text without opinions scores 0, as the source prescribes: there is no biased opinion.
    """
    return _share_of_yes(_verdicts(verdicts, "bias verdicts"), empty=0.0)


def toxicity(verdicts: Iterable[Verdict]) -> float:
    """Share of the text's opinions that the judge found toxic (``yes`` = toxic).

    Text without opinions scores 0, as the source prescribes: there is no toxic opinion.
    """
    return _share_of_yes(_verdicts(verdicts, "toxicity verdicts"), empty=0.0)


# --- RAG ---------------------------------------------------------------------------------


def _mean_precision_at_hits(flags: Sequence[bool]) -> float:
    """Average of precision@k over the ranks k that hold a ``True``; 0 when there is none."""
    hits = 0
    total = 0.0
    for k, flag in enumerate(flags, start=1):
        if flag:
            hits += 1
            total += hits / k
    if hits == 0:
        return 0.0
    return total / hits


def aggregate_context_verdicts(per_ground_truth: Iterable[Iterable[Verdict]]) -> list[bool]:
    """Merge context-precision verdicts from several references into one verdict per context.

    A context counts as useful when it is useful for at least one reference (element-wise OR).
    The source deliberately aggregates the verdicts before scoring instead of keeping the best
    per-reference score, so feed the result to :func:`context_precision`.

    Raises:
        ValueError: no references, lists of different lengths, or an unreadable verdict.
    """
    lists = [_verdicts(v, "context precision verdicts") for v in per_ground_truth]
    if not lists:
        raise ValueError("at least one ground truth's verdicts are needed to aggregate them")
    length = len(lists[0])
    if any(len(v) != length for v in lists):
        sizes = sorted({len(v) for v in lists})
        raise ValueError(
            f"every ground truth needs one verdict per context; got list lengths {sizes}"
        )
    return [any(column) for column in zip(*lists, strict=True)]


def context_precision(verdicts: Iterable[Verdict]) -> float:
    """Rank-weighted precision of the retrieved contexts, best-ranked first.

    With ``v_k`` = 1 when the k-th context is useful for producing the reference answer,
    precision@k is ``sum(v_1..v_k) / k`` and the score is the mean of precision@k over the
    ranks where ``v_k`` = 1. Order matters: ``yes, no, no, yes`` gives (1 + 0.5) / 2 = 0.75
    but ``no, yes, no, yes`` gives (0.5 + 0.5) / 2 = 0.5. All ``no`` scores 0, as the source
    says; it is silent on an empty list, which we also score 0 (nothing useful retrieved).
    For several references, first combine with :func:`aggregate_context_verdicts`.
    """
    return _mean_precision_at_hits(_verdicts(verdicts, "context precision verdicts"))


def context_recall(verdicts: Iterable[Verdict]) -> float:
    """Share of one reference answer's statements attributable to the retrieved contexts.

    One verdict per reference statement, ``yes`` meaning the contexts support it. The source
    does not say what a reference without statements scores; we return 0.0, which is the
    neutral value under :func:`best_context_recall` (an empty reference cannot outrank a real
    one) and never reports recall that was not shown.
    """
    return _share_of_yes(_verdicts(verdicts, "context recall verdicts"), empty=0.0)


def best_context_recall(per_ground_truth: Iterable[Iterable[Verdict]]) -> float:
    """Context recall against several references: the highest per-reference recall.

    Raises:
        ValueError: no references (see :func:`best_over_ground_truths`) or a bad verdict.
    """
    return best_over_ground_truths(context_recall(v) for v in per_ground_truth)


def context_relevance(verdicts: Iterable[Verdict]) -> float:
    """Share of the retrieved contexts that are relevant to the query (``yes`` = relevant).

    A context is relevant if any part of it helps answer the query. The source is silent on
    an empty retrieval; we return 0.0, because a retriever that returned nothing supplied no
    relevant context.
    """
    return _share_of_yes(_verdicts(verdicts, "context relevance verdicts"), empty=0.0)


def faithfulness(verdicts: Iterable[Verdict]) -> float:
    """Share of the answer's claims that the retrieved contexts imply (``yes`` = implied).

    Following the source (which sides with RAGAS against DeepEval), a claim that the contexts
    neither imply nor contradict is *not* faithful: both contradicted and unrelated claims must
    arrive here as ``no``. :func:`faithfulness_from_counts` makes that split explicit. The
    source is silent on an answer with no claims; we return 1.0, since such an answer states
    nothing the contexts fail to back (mirroring how bias and toxicity treat no opinions).
    """
    return _share_of_yes(_verdicts(verdicts, "faithfulness verdicts"), empty=1.0)


def faithfulness_from_counts(implied: int, contradicted: int, unrelated: int) -> float:
    """Faithfulness from a three-way claim tally: ``implied / (implied + contradicted + unrelated)``.

    Unrelated claims count against the score exactly like contradicted ones. No claims at all
    scores 1.0, as in :func:`faithfulness`.

    Raises:
        ValueError: a count is negative or not an integer.
    """
    implied = _count("implied", implied)
    total = implied + _count("contradicted", contradicted) + _count("unrelated", unrelated)
    if total == 0:
        return 1.0
    return implied / total


def hallucination(verdicts: Iterable[Verdict]) -> float:
    """Share of the retrieved contexts that the answer contradicts (``yes`` = contradicted).

    Lower is better. With no contexts there is nothing to contradict, and the source says an
    answer contradicting no context scores 0, so an empty list gives 0.0.
    """
    return _share_of_yes(_verdicts(verdicts, "hallucination verdicts"), empty=0.0)


# --- summarization -----------------------------------------------------------------------


def summary_coherence(score: object) -> int:
    """Validate the judge's summary-coherence rating, an integer from 1 (worst) to 5 (best).

    The judge outputs the score directly, so there is no formula; this only checks it. An
    integral float such as ``4.0`` (as JSON may deliver) is accepted and returned as ``4``;
    booleans, fractions, NaN and values outside 1..5 are refused.

    Raises:
        ValueError: the rating is not an integer between 1 and 5.
    """
    if isinstance(score, bool) or not isinstance(score, int | float):
        raise ValueError(f"summary coherence must be an integer from 1 to 5, got {score!r}")
    if isinstance(score, float) and not score.is_integer():
        raise ValueError(f"summary coherence must be an integer from 1 to 5, got {score!r}")
    value = int(score)
    if not 1 <= value <= 5:
        raise ValueError(f"summary coherence must be an integer from 1 to 5, got {score!r}")
    return value


# --- answer quality ----------------------------------------------------------------------


def answer_similarity(score: object) -> float:
    """Validate the judge's answer-similarity score against the reference, in ``[0, 1]``.

    The source defines this metric only as an LLM-as-judge output bounded by 0 and 1 (higher
    means closer to the reference), so there is nothing to compute: the value is checked and
    returned as a float.

    Raises:
        ValueError: not a real number, NaN, or outside ``[0, 1]``.
    """
    if isinstance(score, bool) or not isinstance(score, int | float):
        raise ValueError(f"answer similarity must be a number from 0 to 1, got {score!r}")
    value = float(score)
    if math.isnan(value) or not 0.0 <= value <= 1.0:
        raise ValueError(f"answer similarity must be a number from 0 to 1, got {score!r}")
    return value


# --- retrieval quality -------------------------------------------------------------------
#
# All five take one relevance verdict per retrieved context, in rank order. They judge only
# the retrieved list: the judge never sees the rest of the corpus, so "all relevant contexts"
# means all relevant contexts that were retrieved.


def retrieval_precision(verdicts: Iterable[Verdict]) -> float:
    """Share of the retrieved contexts that are relevant; order does not matter.

    1 means every retrieved context is relevant, 0 none. An empty retrieval scores 0.0
    (the source is silent; nothing relevant was retrieved).
    """
    return _share_of_yes(_verdicts(verdicts, "retrieval verdicts"), empty=0.0)


def average_precision(verdicts: Iterable[Verdict]) -> float:
    """Mean of precision@k over the ranks k that hold a relevant context.

    This is the source's "mean of the precision scores of relevant contexts"; the divisor is
    the number of relevant contexts retrieved, since the judge cannot know how many relevant
    passages exist outside the retrieved list. It is the same arithmetic as
    :func:`context_precision` applied to relevance verdicts. 1 means every relevant context
    is ranked above every irrelevant one; no relevant context (or no context) scores 0.0, as
    the source says.
    """
    return _mean_precision_at_hits(_verdicts(verdicts, "retrieval verdicts"))


def reciprocal_rank(verdicts: Iterable[Verdict]) -> float:
    """``1 / rank`` of the first relevant context (rank 1 is the top); 0.0 when none is relevant."""
    for rank, relevant in enumerate(_verdicts(verdicts, "retrieval verdicts"), start=1):
        if relevant:
            return 1.0 / rank
    return 0.0


def hit_rate(verdicts: Iterable[Verdict]) -> float:
    """1.0 when at least one retrieved context is relevant, else 0.0 (also for no context).

    Averaged over events in a rolling window it becomes the hit *rate*.
    """
    return 1.0 if any(_verdicts(verdicts, "retrieval verdicts")) else 0.0


def _dcg(flags: Sequence[bool]) -> float:
    """Discounted cumulative gain with binary gains and a ``log2(rank + 1)`` discount."""
    return sum(1.0 / math.log2(rank + 1) for rank, flag in enumerate(flags, start=1) if flag)


def ndcg(verdicts: Iterable[Verdict]) -> float:
    """Normalised discounted cumulative gain of the retrieved ranking.

    Variant: binary gains (1 for a relevant context, 0 otherwise) and the logarithmic discount
    ``1 / log2(rank + 1)``, normalised by the DCG of the ideal reordering of the *same*
    retrieved list (all relevant contexts first). Justification from the source: it defines
    NDCG as ranking quality where 1 means "the retrieved contexts are ranked in the correct
    order", which is normalisation against the best order of the retrieved contexts; and the
    judge yields a yes/no relevance per context, so the gains can only be binary (with binary
    gains the two usual gain formulas, ``rel`` and ``2**rel - 1``, coincide, so the choice
    between them does not matter). The source is silent when no context is relevant (or none
    was retrieved), where the ratio is 0/0; we return 0.0 so that a useless retrieval never
    looks perfectly ranked, in line with the other retrieval measures.
    """
    flags = _verdicts(verdicts, "retrieval verdicts")
    ideal = _dcg(sorted(flags, reverse=True))
    if ideal == 0.0:
        return 0.0
    return _dcg(flags) / ideal
