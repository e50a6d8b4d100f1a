"""ROUGE and BLEU: fixed examples, edge cases, and equality with rouge-score and NLTK."""

from __future__ import annotations

import random
import warnings
from typing import Any

import pytest
from pydantic import ValidationError

from sidecar.checks import CheckContext, get_check
from sidecar.checks.base import Check, CheckResult
from sidecar.checks.reference import (
    _lcs_indices,
    _lcs_length,
    bleu_tokenize,
    rouge_scores,
    rouge_tokenize,
    sentence_bleu,
)
from sidecar.errors import CheckError
from sidecar.events import Event

VARIANTS = ("rouge1", "rouge2", "rougeL", "rougeLsum")


def make(name: str, **params: Any) -> Check[Any]:
    cls = get_check(name)
    assert cls is not None, name
    return cls(cls.params_model.model_validate(params), CheckContext())


def run(name: str, response: str, truths: list[str], **params: Any) -> CheckResult:
    return make(name, **params)(response, Event(id="e", response=response, ground_truths=truths))


# --- a generated corpus -------------------------------------------------------------------

_VOCAB_TEXT = (
    "the a of and to in is was cat cats dog dogs sat sitting runs running ran quickly "
    "capital Paris France city river bank banks 42 1889 $5 U.S. e-mail naïve café Straße "
    "İstanbul résumé don't it's Kelvin\u212a mat hat on under over model models generalise"
)
_VOCAB = _VOCAB_TEXT.split()
_SEPARATORS = (" ", " ", " ", ", ", ". ", "\n", "! ", " - ", "; ")


def _sentence(rng: random.Random, lo: int = 0, hi: int = 24) -> list[str]:
    return [rng.choice(_VOCAB) for _ in range(rng.randint(lo, hi))]


def _join(rng: random.Random, tokens: list[str]) -> str:
    return "".join(t + rng.choice(_SEPARATORS) for t in tokens).rstrip(" ")


def _perturb(rng: random.Random, tokens: list[str]) -> list[str]:
    out = []
    for tok in tokens:
        roll = rng.random()
        if roll < 0.15:
            continue
        if roll < 0.3:
            out.append(rng.choice(_VOCAB))
        else:
            out.append(tok)
        if rng.random() < 0.1:
            out.append(rng.choice(_VOCAB))
    return out


def corpus(size: int = 80, seed: int = 20240611) -> list[tuple[list[str], str]]:
    """(references, prediction) pairs: predictions are edited copies of a reference, so the
    scores spread over [0, 1], plus a few unrelated, empty and identical cases."""
    rng = random.Random(seed)
    pairs: list[tuple[list[str], str]] = []
    for i in range(size):
        refs = [_sentence(rng, 1) for _ in range(rng.randint(1, 3))]
        if i % 10 == 0:
            pred = _sentence(rng)
        elif i % 10 == 1:
            pred = list(refs[0])
        else:
            pred = _perturb(rng, rng.choice(refs))
        pairs.append(([_join(rng, r) for r in refs], _join(rng, pred)))
    pairs += [([""], ""), (["the cat"], ""), ([""], "the cat"), (["...!"], "?? --")]
    return pairs


# --- equality with the reference implementations ------------------------------------------


@pytest.mark.parametrize("use_stemmer", [False, True])
def test_rouge_equals_rouge_score(use_stemmer: bool) -> None:
    rouge_scorer = pytest.importorskip("rouge_score.rouge_scorer")
    scorer = rouge_scorer.RougeScorer(list(VARIANTS), use_stemmer=use_stemmer)
    worst = 0.0
    fmeasures = []
    for refs, pred in corpus():
        expected = scorer.score_multi(refs, pred)
        single = scorer.score(refs[0], pred)
        for variant in VARIANTS:
            _, got = rouge_scores(refs, pred, variant, use_stemmer=use_stemmer)
            _, got_single = rouge_scores(refs[:1], pred, variant, use_stemmer=use_stemmer)
            for ours, theirs in ((got, expected[variant]), (got_single, single[variant])):
                worst = max(
                    worst,
                    abs(ours.precision - theirs.precision),
                    abs(ours.recall - theirs.recall),
                    abs(ours.fmeasure - theirs.fmeasure),
                )
            fmeasures.append(got.fmeasure)
    assert worst < 1e-6
    # The corpus is not degenerate: scores spread over the range.
    assert min(fmeasures) == 0.0
    assert max(fmeasures) == pytest.approx(1.0)
    assert sum(0.2 < f < 0.9 for f in fmeasures) > 100


@pytest.mark.parametrize(
    "weights", [(0.25, 0.25, 0.25, 0.25), (0.5, 0.5), (1.0,), (0.1, 0.3, 0.5, 0.1), (0.2,) * 5]
)
def test_bleu_equals_nltk_sentence_bleu(weights: tuple[float, ...]) -> None:
    bleu_score = pytest.importorskip("nltk.translate.bleu_score")
    regexp = pytest.importorskip("nltk.tokenize.regexp")
    tokenizer = regexp.RegexpTokenizer(r"\w+|\$[\d]+|[^\s\.]+")
    worst = 0.0
    values = []
    for refs, pred in corpus():
        with warnings.catch_warnings():
            # NLTK warns when an n-gram order has no match; the value is what we compare.
            warnings.simplefilter("ignore")
            expected = bleu_score.sentence_bleu(
                [tokenizer.tokenize(r) for r in refs], tokenizer.tokenize(pred), weights=weights
            )
        got = run("bleu", pred, refs, weights=list(weights)).value
        assert isinstance(got, float)
        worst = max(worst, abs(got - float(expected)))
        values.append(got)
    assert worst < 1e-6
    assert sum(v > 0.1 for v in values) >= 5


def test_bleu_whitespace_tokenizer_equals_nltk() -> None:
    bleu_score = pytest.importorskip("nltk.translate.bleu_score")
    for refs, pred in corpus(30, seed=5):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expected = bleu_score.sentence_bleu([r.split() for r in refs], pred.split())
        got = run("bleu", pred, refs, tokenizer="whitespace").value
        assert got == pytest.approx(float(expected), abs=1e-9)


# --- the LCS used by ROUGE-L ---------------------------------------------------------------


def _dp_lcs(a: list[str], b: list[str]) -> list[list[int]]:
    t = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            t[i][j] = t[i - 1][j - 1] + 1 if a[i - 1] == b[j - 1] else max(t[i - 1][j], t[i][j - 1])
    return t


def test_bit_parallel_lcs_matches_the_table() -> None:
    rng = random.Random(3)
    for _ in range(300):
        a = [rng.choice("abcd") for _ in range(rng.randint(0, 30))]
        b = [rng.choice("abcd") for _ in range(rng.randint(0, 30))]
        table = _dp_lcs(a, b)
        assert _lcs_length(a, b) == table[-1][-1]
        indices = _lcs_indices(a, b)
        assert len(indices) == table[-1][-1]
        assert indices == sorted(set(indices))
        # The indices pick out a common subsequence.
        picked = [a[i] for i in indices]
        it = iter(b)
        assert all(tok in it for tok in picked)


# --- fixed examples and edge cases ---------------------------------------------------------


def test_tokenizer_follows_rouge_score() -> None:
    assert rouge_tokenize("The U.S. café, naïve! 42nd") == [
        "the",
        "u",
        "s",
        "caf",
        "na",
        "ve",
        "42nd",
    ]
    # The Kelvin sign lowercases to an ASCII k, as in rouge-score.
    assert rouge_tokenize("\u212aelvin") == ["kelvin"]
    assert rouge_tokenize("") == []


def test_rouge_precision_recall_and_f() -> None:
    assert run("rouge", "the cat", ["the cat sat"], measure="p").value == 1.0
    assert run("rouge", "the cat", ["the cat sat"], measure="r").value == pytest.approx(2 / 3)
    assert run("rouge", "the cat", ["the cat sat"]).value == pytest.approx(0.8)
    assert run("rouge", "the cat", ["the cat sat"], variant="rouge2").value == pytest.approx(
        2 * 1 * 0.5 / 1.5
    )


def test_rouge_l_uses_order() -> None:
    # Same words, reversed: every unigram matches, the LCS is one word long.
    assert run("rouge", "c b a", ["a b c"]).value == 1.0
    assert run("rouge", "c b a", ["a b c"], variant="rougeL").value == pytest.approx(1 / 3)


def test_rouge_lsum_splits_on_newlines() -> None:
    ref = "the cat sat\nthe dog ran"
    assert run("rouge", "the dog ran\nthe cat sat", [ref], variant="rougeLsum").value == 1.0
    assert run("rouge", "the dog ran the cat sat", [ref], variant="rougeL").value < 1.0


def test_rouge_identical_and_best_ground_truth() -> None:
    result = run("rouge", "Paris is the capital.", ["no overlap here", "paris IS the capital"])
    assert result.value == 1.0
    assert result.detail is not None
    assert "ground truth 1" in result.detail
    assert "Paris" not in result.detail


def test_rouge_best_reference_is_chosen_by_f_measure() -> None:
    # Recall alone would prefer the short reference; score_multi picks by F-measure.
    idx, score = rouge_scores(["cat", "the cat sat on the mat"], "the cat sat on a mat")
    assert idx == 1
    value = run(
        "rouge", "the cat sat on a mat", ["cat", "the cat sat on the mat"], measure="r"
    ).value
    assert value == pytest.approx(score.recall)
    assert value < 1.0


def test_rouge_stemmer() -> None:
    pytest.importorskip("nltk")
    assert run("rouge", "the cats running", ["the cat runs"]).value == pytest.approx(1 / 3)
    assert run("rouge", "the cats running", ["the cat runs"], use_stemmer=True).value == 1.0


@pytest.mark.parametrize("name", ["rouge", "bleu"])
def test_empty_response_scores_zero(name: str) -> None:
    assert run(name, "", ["the cat sat on the mat"]).value == 0.0


@pytest.mark.parametrize("name", ["rouge", "bleu"])
def test_no_ground_truths_is_not_applicable(name: str) -> None:
    with pytest.raises(CheckError, match="no ground_truths"):
        run(name, "the cat", [])


def test_bleu_identical_and_short() -> None:
    assert run("bleu", "the cat sat on the mat", ["the cat sat on the mat"]).value == 1.0
    # No 4-gram in a 3-token hypothesis: BLEU-4 without smoothing is (practically) 0 ...
    short = run("bleu", "the cat sat", ["the cat sat"]).value
    assert 0.0 <= short < 1e-60
    # ... while BLEU-2 sees a perfect match.
    assert run("bleu", "the cat sat", ["the cat sat"], weights=[0.5, 0.5]).value == 1.0


def test_bleu_brevity_penalty() -> None:
    value = run("bleu", "the cat sat", ["the cat sat on the mat"], weights=[1.0]).value
    assert value == pytest.approx(pytest.approx(2.718281828 ** (1 - 6 / 3)))


def test_bleu_uses_all_references_together() -> None:
    hyp = "the cat sat on a mat here"
    refs = ["the cat sat on the mat", "a dog sat on a mat here"]
    together = run("bleu", hyp, refs, weights=[0.5, 0.5]).value
    separately = max(run("bleu", hyp, [r], weights=[0.5, 0.5]).value for r in refs)
    assert isinstance(together, float)
    assert together > separately
    tokens = [bleu_tokenize(r) for r in refs]
    assert together == sentence_bleu(tokens, bleu_tokenize(hyp), (0.5, 0.5))


def test_bleu_tokenizer_keeps_case_and_drops_periods() -> None:
    assert bleu_tokenize("It costs $5. U.S. e-mail!") == [
        "It",
        "costs",
        "$5",
        "U",
        "S",
        "e",
        "-mail!",
    ]
    assert bleu_tokenize("a  b\nc", "whitespace") == ["a", "b", "c"]


@pytest.mark.parametrize("weights", [[], [0.0, 0.0], [-0.5, 1.5], [float("nan")]])
def test_bleu_rejects_bad_weights(weights: list[float]) -> None:
    cls = get_check("bleu")
    assert cls is not None
    with pytest.raises(ValidationError):
        cls.params_model.model_validate({"weights": weights})


def test_rouge_rejects_unknown_variant() -> None:
    cls = get_check("rouge")
    assert cls is not None
    with pytest.raises(ValidationError):
        cls.params_model.model_validate({"variant": "rouge3"})


def test_unicode_only_text() -> None:
    # Nothing survives rouge-score's ASCII tokenizer; BLEU's \w tokenizer keeps the words.
    assert run("rouge", "日本語のテキスト", ["日本語のテキスト"]).value == 0.0
    assert run("bleu", "日本語 の テキスト です", ["日本語 の テキスト です"]).value == 1.0


def test_registered_kinds() -> None:
    for name in ("rouge", "bleu"):
        cls = get_check(name)
        assert cls is not None
        assert cls.value_kind == "score"
        assert cls.default_field == "response"
