"""Reference-based overlap scores: ROUGE (1, 2, L, Lsum) and sentence BLEU.

Both compare the rule's field (the response, by default) with the event's ``ground_truths``.
They are written here, without the reference packages, and reproduce them exactly: ROUGE
follows Google's ``rouge-score`` (its default tokenizer, ``score`` for one reference and
``score_multi`` for several) and BLEU follows NLTK's ``sentence_bleu`` with its default
(absent) smoothing. The tests compare both against those packages on generated text.

Not applicable: an event without ``ground_truths`` raises :class:`~sidecar.errors.CheckError`
(``"no ground_truths"``), which the pipeline records as "not applicable" for that event rather
than as a failure. An empty response is applicable and scores 0.

Cost: ROUGE-1/2 and BLEU are linear in the token counts. ROUGE-L needs a longest common
subsequence, computed with a bit-parallel row update (one big-integer step per reference
token), so a 1 KB response against a 1 KB reference costs tens of microseconds rather than
the milliseconds of the textbook table. ROUGE-Lsum also recovers which tokens form each
sentence-pair LCS (the same one ``rouge-score`` picks) and is the slowest of the four.
"""

from __future__ import annotations

import importlib
import math
import re
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any, Literal, NamedTuple

from pydantic import Field, field_validator

from ..errors import CheckError, ConfigError
from ..events import Event
from .base import Check, CheckContext, CheckResult, Params
from .registry import register

__all__ = [
    "Bleu",
    "BleuParams",
    "Rouge",
    "RougeParams",
    "RougeScore",
    "bleu_tokenize",
    "rouge_scores",
    "rouge_tokenize",
    "sentence_bleu",
]

RougeVariant = Literal["rouge1", "rouge2", "rougeL", "rougeLsum"]

# --------------------------------------------------------------------------- ROUGE

_NON_ALNUM = re.compile(r"[^a-z0-9]+")
_SPACES = re.compile(r"\s+")
_VALID_TOKEN = re.compile(r"^[a-z0-9]+$")


class RougeScore(NamedTuple):
    precision: float
    recall: float
    fmeasure: float


_ZERO = RougeScore(0.0, 0.0, 0.0)


def _fmeasure(precision: float, recall: float) -> float:
    if precision + recall > 0:
        return 2 * precision * recall / (precision + recall)
    return 0.0


def rouge_tokenize(text: str, stem: Callable[[str], str] | None = None) -> list[str]:
    """Tokens as ``rouge-score``'s default tokenizer makes them.

    Lowercase, turn every run of characters outside ``[a-z0-9]`` into a space, split, stem
    tokens longer than three characters if a stemmer is given, and keep the non-empty ones.
    """
    cleaned = _NON_ALNUM.sub(" ", text.lower())
    if stem is None:
        # Only [a-z0-9] and spaces are left, so every non-empty piece is a valid token.
        return cleaned.split()
    tokens = [stem(t) if len(t) > 3 else t for t in _SPACES.split(cleaned)]
    return [t for t in tokens if _VALID_TOKEN.match(t)]


@lru_cache(maxsize=1)
def _porter_stem() -> Callable[[str], str]:
    """NLTK's Porter stemmer (the one ``rouge-score`` uses), memoised per token."""
    try:
        porter: Any = importlib.import_module("nltk.stem.porter")
    except ImportError as exc:
        raise ConfigError("rouge with use_stemmer: true needs the 'nltk' package") from exc
    stemmer = porter.PorterStemmer()

    @lru_cache(maxsize=65_536)
    def stem(token: str) -> str:
        return str(stemmer.stem(token))

    return stem


def _ngram_counts(tokens: Sequence[str], n: int) -> Counter[tuple[str, ...]]:
    return Counter(zip(*(tokens[i:] for i in range(n)), strict=False))


def _score_ngrams(target: Sequence[str], prediction: Sequence[str], n: int) -> RougeScore:
    target_counts = _ngram_counts(target, n)
    prediction_counts = _ngram_counts(prediction, n)
    overlap = sum(min(c, prediction_counts[g]) for g, c in target_counts.items())
    precision = overlap / max(sum(prediction_counts.values()), 1)
    recall = overlap / max(sum(target_counts.values()), 1)
    return RougeScore(precision, recall, _fmeasure(precision, recall))


def _lcs_rows(ref: Sequence[str], can: Sequence[str]) -> list[int]:
    """Bit-parallel LCS table (Hyyrö's row update), one integer per row of ``ref``.

    Bit ``j`` of row ``i`` is 0 exactly where the classic table steps up, so the table value
    at (i, j) is ``j - popcount(row_i & (2**j - 1))``; the LCS length is the number of zeros
    in the last row.
    """
    masks: dict[str, int] = {}
    for j, tok in enumerate(can):
        masks[tok] = masks.get(tok, 0) | (1 << j)
    full = (1 << len(can)) - 1
    v = full
    rows = [v]
    for tok in ref:
        u = v & masks.get(tok, 0)
        v = ((v + u) | (v - u)) & full
        rows.append(v)
    return rows


def _lcs_length(ref: Sequence[str], can: Sequence[str]) -> int:
    if not ref or not can:
        return 0
    last = _lcs_rows(ref, can)[-1]
    return len(can) - last.bit_count()


def _lcs_indices(ref: Sequence[str], can: Sequence[str]) -> list[int]:
    """Indices into ``ref`` of one LCS, the same one ``rouge-score``'s backtrack reads out."""
    if not ref or not can:
        return []
    rows = _lcs_rows(ref, can)

    def table(i: int, j: int) -> int:
        return j - (rows[i] & ((1 << j) - 1)).bit_count()

    i, j = len(ref), len(can)
    out: list[int] = []
    while i > 0 and j > 0:
        if ref[i - 1] == can[j - 1]:
            out.append(i - 1)
            i -= 1
            j -= 1
        elif table(i, j - 1) > table(i - 1, j):
            j -= 1
        else:
            i -= 1
    out.reverse()
    return out


def _score_lcs(target: Sequence[str], prediction: Sequence[str]) -> RougeScore:
    if not target or not prediction:
        return _ZERO
    lcs = _lcs_length(target, prediction)
    precision = lcs / len(prediction)
    recall = lcs / len(target)
    return RougeScore(precision, recall, _fmeasure(precision, recall))


SUMMARY_PAIRS_MAX = 1_000_000
"""The most pairs of distinct reference and response sentences rougeLsum compares (a second
or two of work); past it the check is not applicable to the event (a clear error, counted)."""


def _score_summary_lcs(
    target_sents: Sequence[Sequence[str]], prediction_sents: Sequence[Sequence[str]]
) -> RougeScore:
    """Summary-level LCS: per reference sentence, the union of its LCS with every candidate
    sentence, each token counted at most as often as it occurs on both sides."""
    if not target_sents or not prediction_sents:
        return _ZERO
    m = sum(map(len, target_sents))
    n = sum(map(len, prediction_sents))
    if not m or not n:
        return _ZERO
    left_target: Counter[str] = Counter()
    left_prediction: Counter[str] = Counter()
    for s in target_sents:
        left_target.update(s)
    for s in prediction_sents:
        left_prediction.update(s)
    # one LCS per pair of distinct sentences: the union does not change for a repeated one
    candidates = list(dict.fromkeys(map(tuple, prediction_sents)))
    distinct_refs = len(set(map(tuple, target_sents)))
    if distinct_refs * len(candidates) > SUMMARY_PAIRS_MAX:
        raise CheckError(
            f"rougeLsum: {distinct_refs} x {len(candidates)} distinct sentences, more than "
            f"{SUMMARY_PAIRS_MAX:,} pairs to compare"
        )
    unions: dict[tuple[str, ...], list[int]] = {}
    hits = 0
    for ref in target_sents:
        key = tuple(ref)
        if key not in unions:
            union: set[int] = set()
            for can in candidates:
                union.update(_lcs_indices(ref, can))
            unions[key] = sorted(union)
        for i in unions[key]:
            tok = ref[i]
            if left_prediction[tok] > 0 and left_target[tok] > 0:
                hits += 1
                left_prediction[tok] -= 1
                left_target[tok] -= 1
    precision = hits / n
    recall = hits / m
    return RougeScore(precision, recall, _fmeasure(precision, recall))


def _sentences(text: str) -> list[str]:
    return [s for s in text.split("\n") if s]


def _rouge_one(
    target: str, prediction: str, variant: RougeVariant, stem: Callable[[str], str] | None
) -> RougeScore:
    if variant == "rougeLsum":
        return _score_summary_lcs(
            [rouge_tokenize(s, stem) for s in _sentences(target)],
            [rouge_tokenize(s, stem) for s in _sentences(prediction)],
        )
    target_tokens = rouge_tokenize(target, stem)
    prediction_tokens = rouge_tokenize(prediction, stem)
    if variant == "rougeL":
        return _score_lcs(target_tokens, prediction_tokens)
    return _score_ngrams(target_tokens, prediction_tokens, 1 if variant == "rouge1" else 2)


def rouge_scores(
    targets: Sequence[str],
    prediction: str,
    variant: RougeVariant = "rouge1",
    *,
    use_stemmer: bool = False,
) -> tuple[int, RougeScore]:
    """The score against the target with the highest F-measure (the first on ties), and its
    index: ``rouge-score``'s ``score_multi`` for one variant."""
    if not targets:
        raise ValueError("rouge needs at least one target")
    stem = _porter_stem() if use_stemmer else None
    best_index, best = 0, _rouge_one(targets[0], prediction, variant, stem)
    for index in range(1, len(targets)):
        score = _rouge_one(targets[index], prediction, variant, stem)
        if score.fmeasure > best.fmeasure:
            best_index, best = index, score
    return best_index, best


class RougeParams(Params):
    variant: RougeVariant = Field("rouge1", description="which ROUGE")
    measure: Literal["f", "p", "r"] = Field(
        "f", description="F-measure, precision or recall of the best-matching reference"
    )
    use_stemmer: bool = Field(False, description="Porter-stem tokens longer than 3 characters")


@register
class Rouge(Check[RougeParams]):
    """ROUGE of the text against ``ground_truths`` (score in [0, 1]).

    With several ground truths the one with the highest F-measure is chosen, as
    ``rouge-score``'s ``score_multi`` does, and ``measure`` picks F, precision or recall of
    that one. ``rougeLsum`` treats newlines as sentence breaks. ``use_stemmer`` needs NLTK.
    """

    name = "rouge"
    needs = ("ground_truths",)
    params_model = RougeParams
    value_kind = "score"

    def __init__(self, params: RougeParams, ctx: CheckContext) -> None:
        super().__init__(params, ctx)
        self.variant: RougeVariant = params.variant
        self.field_index = {"p": 0, "r": 1, "f": 2}[params.measure]
        self.use_stemmer = params.use_stemmer
        if self.use_stemmer:
            _porter_stem()  # fail at rule load, not on the first event, if NLTK is missing

    def __call__(self, text: str, event: Event) -> CheckResult:
        if not event.ground_truths:
            raise CheckError("no ground_truths")
        index, score = rouge_scores(
            event.ground_truths, text, self.variant, use_stemmer=self.use_stemmer
        )
        return CheckResult(
            float(score[self.field_index]),
            f"{self.variant} p={score.precision:.3f} r={score.recall:.3f} "
            f"f={score.fmeasure:.3f} (ground truth {index})",
        )


# --------------------------------------------------------------------------- BLEU

# The tokenizer the metric definition uses with NLTK's RegexpTokenizer: words, dollar
# amounts, and any other run of non-space characters except periods (which are dropped).
_BLEU_TOKEN = re.compile(r"\w+|\$[\d]+|[^\s\.]+", re.UNICODE | re.MULTILINE | re.DOTALL)


def bleu_tokenize(text: str, tokenizer: Literal["regexp", "whitespace"] = "regexp") -> list[str]:
    """Case-preserving BLEU tokens: the definition's regular expression, or plain whitespace."""
    return _BLEU_TOKEN.findall(text) if tokenizer == "regexp" else text.split()


def sentence_bleu(
    references: Sequence[Sequence[str]],
    hypothesis: Sequence[str],
    weights: Sequence[float] = (0.25, 0.25, 0.25, 0.25),
) -> float:
    """BLEU of one tokenised hypothesis against several tokenised references, as NLTK's
    ``sentence_bleu`` without smoothing computes it.

    Modified n-gram precisions (counts clipped by the most any one reference has), a brevity
    penalty against the closest reference length (the shorter on ties), 0 when no unigram
    matches, and an order with no match contributing the smallest positive float — so the
    score is then effectively 0 — instead of a warning.
    """
    if not references:
        raise ValueError("BLEU needs at least one reference")
    hyp_len = len(hypothesis)
    ratios: list[float] = []
    first_numerator = 0
    for n in range(1, len(weights) + 1):
        counts = _ngram_counts(hypothesis, n) if hyp_len >= n else Counter()
        max_counts: dict[tuple[str, ...], int] = dict.fromkeys(counts, 0)
        for ref in references:
            if len(ref) < n:
                continue
            ref_counts = _ngram_counts(ref, n)
            for gram in counts:
                c = ref_counts.get(gram, 0)
                if c > max_counts[gram]:
                    max_counts[gram] = c
        numerator = sum(min(c, max_counts[g]) for g, c in counts.items())
        denominator = max(1, sum(counts.values()))
        if n == 1:
            first_numerator = numerator
        ratios.append(numerator / denominator if numerator else sys.float_info.min)
    if first_numerator == 0:
        return 0.0
    ref_len = min((len(r) for r in references), key=lambda r: (abs(r - hyp_len), r))
    if hyp_len > ref_len:
        bp = 1.0
    elif hyp_len == 0:
        bp = 0.0
    else:
        bp = math.exp(1 - ref_len / hyp_len)
    return bp * math.exp(math.fsum(w * math.log(p) for w, p in zip(weights, ratios, strict=True)))


class BleuParams(Params):
    weights: tuple[float, ...] = Field(
        (0.25, 0.25, 0.25, 0.25),
        min_length=1,
        max_length=10,
        description="weights of the 1..N-gram precisions (BLEU-4 by default)",
    )
    tokenizer: Literal["regexp", "whitespace"] = Field(
        "regexp", description="the definition's regular expression, or split on whitespace"
    )

    @field_validator("weights")
    @classmethod
    def _usable(cls, v: tuple[float, ...]) -> tuple[float, ...]:
        if any(w < 0 or not math.isfinite(w) for w in v) or not any(v):
            raise ValueError("weights must be finite, non-negative and not all zero")
        return v


@register
class Bleu(Check[BleuParams]):
    """Sentence BLEU of the text against all ``ground_truths`` at once (score in [0, 1]).

    Several ground truths are used together as BLEU's multiple references (n-gram counts are
    clipped by the most generous reference, the brevity penalty uses the closest length), as
    the metric definition does, rather than taking the best single reference.
    """

    name = "bleu"
    needs = ("ground_truths",)
    params_model = BleuParams
    value_kind = "score"

    def __init__(self, params: BleuParams, ctx: CheckContext) -> None:
        super().__init__(params, ctx)
        self.weights = params.weights
        self.tokenizer: Literal["regexp", "whitespace"] = params.tokenizer

    def __call__(self, text: str, event: Event) -> CheckResult:
        if not event.ground_truths:
            raise CheckError("no ground_truths")
        references = [bleu_tokenize(r, self.tokenizer) for r in event.ground_truths]
        hypothesis = bleu_tokenize(text, self.tokenizer)
        value = sentence_bleu(references, hypothesis, self.weights)
        return CheckResult(value, f"{len(hypothesis)} tokens vs {len(references)} reference(s)")
