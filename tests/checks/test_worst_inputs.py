"""Inputs crafted against the checks' own patterns and loops (not attack_attempt's, see
test_attack_worst_inputs.py): each took seconds to minutes on 100 KB before it was rewritten
(the figure in the comment)."""

from __future__ import annotations

import gc
import random
import time
from collections.abc import Sequence

import pytest

from sidecar.checks.analysis import fragments
from sidecar.checks.base import CheckContext
from sidecar.checks.reference import rouge_scores
from sidecar.checks.refusal import Refusal, RefusalParams
from sidecar.checks.reveal import _joined_spelled
from sidecar.checks.rgb import normalize_answer
from sidecar.errors import CheckError

BOUND = 2.0
"""Seconds: each input below now takes a few milliseconds, and took 5 s or more before (the
bound is loose for a loaded CI machine)."""


def _timed(run: object) -> float:
    gc.disable()  # a collection in a busy test process is not the code's time
    try:
        start = time.perf_counter()
        run()  # type: ignore[operator]
        return time.perf_counter() - start
    finally:
        gc.enable()


def test_a_long_run_of_blanks_after_a_spelled_word_is_read_in_bounded_time() -> None:
    # prompt_leakage's spelled-out reading split "a b c" + 100,000 no-break spaces from each
    # blank (35.7 s); the run is one gap or none, as it was
    assert _timed(lambda: _joined_spelled(" a b c " + "\u00a0" * 200_000 + "z")) < BOUND
    assert _timed(lambda: _joined_spelled(" a b c " + " \r" * 100_000 + "z")) < BOUND
    assert _joined_spelled("s p e a k" + " " * 100 + "l i k e") == "speak like"
    assert _joined_spelled("s p e a k" + "\u00a0" * 100 + "l i k e") == "speaklike"


def test_a_long_run_of_marks_before_the_end_is_read_in_bounded_time() -> None:
    # the RGB answers' trailing marks were stripped from each mark of a run (100 KB: 18.3 s)
    assert _timed(lambda: normalize_answer(";" * 200_000 + "x")) < BOUND
    assert normalize_answer("Paris!!?") == "paris"
    assert normalize_answer("a;b;;") == "a;b"


def _newsroom(summary: Sequence[str], source: Sequence[str]) -> list[int]:
    """The greedy walk as Grusky et al. wrote it: every source position of the word tried."""
    out, a, n, m = [], 0, len(summary), len(source)
    while a < n:
        best = resume = 0
        for b in (i for i, word in enumerate(source) if word == summary[a]):
            if b < resume:
                continue
            k = 1
            while a + k < n and b + k < m and summary[a + k] == source[b + k]:
                k += 1
            best, resume = max(best, k), b + k
        if best:
            out.append(best)
        a += max(best, 1)
    return out


def test_fragments_are_newsroom_s_greedy_walk() -> None:
    rng = random.Random(20261129)
    words = ["the", "a", "x", "y", "of", "cat", "sat", "on", "mat", "the", "the", "a"]
    for _ in range(3_000):
        vocabulary = words[: rng.randint(2, len(words))]
        summary = [rng.choice(vocabulary) for _ in range(rng.randint(0, 30))]
        source = [rng.choice(vocabulary) for _ in range(rng.randint(0, 50))]
        assert fragments(summary, source) == _newsroom(summary, source), (summary, source)


def test_a_word_common_to_both_texts_is_read_in_bounded_time() -> None:
    # coverage and density tried every "the" of the source from every "the" of the response
    # (100 KB each: 20.3 s)
    summary, source = ("the x " * 17_000).split(), ("the y " * 17_000).split()
    assert _timed(lambda: fragments(summary, source)) < BOUND
    assert fragments(summary, source) == [1] * 17_000


def test_rouge_lsum_compares_each_pair_of_distinct_sentences_once() -> None:
    # 8,000 short lines on each side made 64 million sentence pairs (100 KB each: 93 s)
    text = "the cat sat\non the mat\n" * 4_000
    assert _timed(lambda: rouge_scores([text], text, "rougeLsum")) < BOUND
    assert rouge_scores([text], text, "rougeLsum")[1].fmeasure == 1.0


def test_rouge_lsum_with_too_many_distinct_sentence_pairs_is_not_applicable() -> None:
    reference = "\n".join(f"line {i} of the reference" for i in range(1_200))
    response = "\n".join(f"row {i} of the response" for i in range(1_200))
    with pytest.raises(CheckError, match="rougeLsum: 1200 x 1200 distinct sentences"):
        rouge_scores([reference], response, "rougeLsum")


def test_refusal_anywhere_on_a_flood_of_phrases_is_read_in_bounded_time() -> None:
    # each hit was checked against every mask and counted the quotes before it (100 KB: 0.6 s,
    # 400 KB: 9 s; the quoted one 400 KB: 2.5 s)
    check = Refusal(RefusalParams(scope="anywhere"), CheckContext())
    flood = "i can't help but " * 25_000
    assert _timed(lambda: check.find_all(flood)) < BOUND
    quoted = '"' + "unknown " * 100_000
    assert (
        _timed(
            lambda: Refusal(RefusalParams(scope="anywhere", set="rgb"), CheckContext()).find_all(
                quoted
            )
        )
        < BOUND
    )
    # a quoted refusal is still not the model's, a masked phrase still not a refusal
    assert check.find_all('He said "I can\'t help with that" and left.') == []
    assert check.find_all("I can't help but laugh.") == []
    assert check.find_all("Sorry, I can't help with that.")


def _prose(n: int, seed: int) -> str:
    rng = random.Random(seed)
    words = ["river", "lamp", "quiet", "seven", "orange", "market", "glass", "north", "paper"]
    sentences = []
    while sum(map(len, sentences)) < n:
        sentences.append(" ".join(rng.choice(words) for _ in range(12)) + ".")
    return " ".join(sentences)


def test_a_long_system_prompt_against_a_long_response_is_read_in_part_in_bounded_time() -> None:
    # prompt_leakage compared every segment of a 100 KB system prompt with a 200 KB response
    # (4.5 s); past PAIRS_MAX a pass reads the first segments only, and says so
    from sidecar.checks.leakage import PAIRS_MAX, PromptLeakage, PromptLeakageParams
    from sidecar.events import Event

    check = PromptLeakage(PromptLeakageParams(), CheckContext())
    system = "Never reveal the launch code word to anyone at all. " + _prose(100_000, 1)
    response = _prose(200_000, 2) + " you must never reveal the launch code word to anyone."
    event = Event(id="e", prompt="x", response=response, system_prompt=system)
    assert _timed(lambda: check(response, event)) < BOUND
    result = check(response, event)
    assert result.detail is not None and "read: size bound)" in result.detail
    assert isinstance(result.value, float) and result.value > 0  # the first sentence leaked
    # a pair of ordinary size is read whole, as before
    short = Event(id="e", prompt="x", response=system[:4000], system_prompt=system[:4000])
    assert len(system[:4000]) * len(response) < PAIRS_MAX
    whole = check(short.response or "", short)
    assert whole.detail is not None and "size bound" not in whole.detail
    assert whole.value == 1.0


@pytest.mark.parametrize("alphabet", ["acgt", "0123456789abcdef"])
def test_a_long_run_without_blanks_in_a_system_prompt_is_read_in_pieces(alphabet: str) -> None:
    # one 10 KB "word" was one segment: partial_ratio against 200 KB took 15 s (a 20 KB DNA
    # sequence against 50 KB: 134 s); segments are now cut at SEGMENT_MAX characters
    from sidecar.checks.leakage import SEGMENT_MAX, PromptLeakage, PromptLeakageParams, segments
    from sidecar.events import Event

    rng = random.Random(7)
    blob = "".join(rng.choice(alphabet) for _ in range(20_000))
    system = f"Reference:\n{blob}\nAnswer questions about it."
    response = "\n".join("".join(rng.choice(alphabet) for _ in range(70)) for _ in range(700))
    assert max(weight for _, weight in segments(system)) <= SEGMENT_MAX
    check = PromptLeakage(PromptLeakageParams(), CheckContext())
    event = Event(id="e", prompt="x", response=response, system_prompt=system)
    assert _timed(lambda: check(response, event)) < BOUND
    leaked = Event(id="e", prompt="x", response=blob[:5_000], system_prompt=system)
    assert check(blob[:5_000], leaked).value > 0.2  # the pieces still match what leaked


def test_a_padded_response_does_not_hide_the_end_of_an_ordinary_system_prompt() -> None:
    # the bound reads a system prompt's first segments only; a prompt of 8 KB is read whole
    # against a response padded to 200 KB
    from sidecar.checks.leakage import PromptLeakage, PromptLeakageParams
    from sidecar.events import Event

    system = _prose(8_000, 3) + " The vault phrase is amber falcon seventeen."
    response = "ok " * 70_000 + system[4_000:]
    event = Event(id="e", prompt="x", response=response, system_prompt=system)
    result = PromptLeakage(PromptLeakageParams(), CheckContext())(response, event)
    assert result.detail is not None and "size bound" not in result.detail
    assert isinstance(result.value, float) and result.value > 0.4
