"""Content analysis, keyword inclusion and question robustness."""

from __future__ import annotations

import random
from typing import Any

import pytest

from sidecar.checks import CheckContext, get_check
from sidecar.checks.analysis import fragments, keywords, words
from sidecar.checks.base import Check, CheckResult
from sidecar.errors import CheckError
from sidecar.events import Event

CTX = CheckContext(system_prompts={"sp": "Answer only about the Eiffel Tower in Paris."})


def make(name: str, **params: Any) -> Check[Any]:
    cls = get_check(name)
    assert cls is not None, name
    return cls(cls.params_model.model_validate(params), CTX)


def run(name: str, response: str, **event: Any) -> CheckResult:
    params = event.pop("params", {})
    return make(name, **params)(response, Event(id="e", response=response, **event))


# --- extractive fragments -------------------------------------------------------------------


def _newsroom_fragments(a: list[str], b: list[str]) -> list[int]:
    """The Newsroom reference loop, scanning the source from the start for every word."""
    out = []
    a_start = b_start = 0
    while a_start < len(a):
        best = 0
        while b_start < len(b):
            if a[a_start] == b[b_start]:
                a_end, b_end = a_start, b_start
                while a_end < len(a) and b_end < len(b) and b[b_end] == a[a_end]:
                    a_end += 1
                    b_end += 1
                best = max(best, a_end - a_start)
                b_start = b_end
            else:
                b_start += 1
        b_start = 0
        if best:
            out.append(best)
            a_start += best
        else:
            a_start += 1
    return out


def test_fragments_match_the_reference_loop() -> None:
    rng = random.Random(11)
    for _ in range(400):
        a = [rng.choice("abcde") for _ in range(rng.randint(0, 40))]
        b = [rng.choice("abcdef") for _ in range(rng.randint(0, 40))]
        assert fragments(a, b) == _newsroom_fragments(a, b)


def test_words() -> None:
    assert words("Don\u2019t STOP: the café, 42-x_y!") == [
        "don't",
        "stop",
        "the",
        "café",
        "42",
        "x",
        "y",
    ]


PROMPT = "Summarise: The Eiffel Tower was completed in 1889 and is 330 metres tall."


def test_coverage_density_compression() -> None:
    response = "The Eiffel Tower was completed in 1889. It is tall."
    # Fragments: "the eiffel tower was completed in 1889" (7), "is" (1), "tall" (1); "it" new.
    cov = run("coverage", response, prompt=PROMPT)
    assert cov.value == pytest.approx(9 / 10)
    assert run("density", response, prompt=PROMPT).value == pytest.approx((49 + 1 + 1) / 10)
    assert run("compression", response, prompt=PROMPT).value == pytest.approx(13 / 10)


def test_copy_and_paraphrase_extremes() -> None:
    copy = "the eiffel tower was completed in 1889"
    assert run("coverage", copy, prompt=PROMPT).value == 1.0
    assert run("density", copy, prompt=PROMPT).value == 7.0
    novel = "Gustave built a famous landmark"
    assert run("coverage", novel, prompt=PROMPT).value == 0.0
    assert run("density", novel, prompt=PROMPT).value == 0.0


def test_empty_response_scores_zero() -> None:
    for name in ("coverage", "density", "compression"):
        assert run(name, "", prompt=PROMPT).value == 0.0


def test_contexts_source_does_not_join_passages() -> None:
    contexts = ["The tower is in Paris", "built in 1889"]
    result = run(
        "density",
        "Paris built in 1889",
        prompt="q",
        contexts=contexts,
        params={"source": "contexts"},
    )
    # "paris" ends the first passage, so it cannot extend into "built in 1889".
    assert result.value == pytest.approx((1 + 9) / 4)
    single = run(
        "density",
        "Paris built in 1889",
        prompt="q",
        contexts=[" ".join(contexts)],
        params={"source": "contexts"},
    )
    assert single.value == pytest.approx(16 / 4)
    assert (
        run(
            "compression", "a b", prompt="q", contexts=contexts, params={"source": "contexts"}
        ).value
        == 4.0
    )


def test_system_prompt_source_by_id() -> None:
    response = "I answer only about the Eiffel Tower."
    by_id = run(
        "coverage", response, prompt="q", system_prompt_id="sp", params={"source": "system_prompt"}
    )
    inline = run(
        "coverage",
        response,
        prompt="q",
        system_prompt=CTX.system_prompts["sp"],
        params={"source": "system_prompt"},
    )
    assert by_id.value == inline.value == pytest.approx(6 / 7)


@pytest.mark.parametrize(
    ("source", "event"),
    [
        ("prompt", {}),
        ("contexts", {"prompt": "q"}),
        ("system_prompt", {"prompt": "q", "system_prompt_id": "nope"}),
    ],
)
def test_missing_source_is_not_applicable(source: str, event: dict[str, Any]) -> None:
    for name in ("coverage", "density", "compression", "abstractness"):
        with pytest.raises(CheckError, match=f"no {source}"):
            run(name, "some response text here", params={"source": source}, **event)


def test_abstractness() -> None:
    assert run("abstractness", "the eiffel tower was completed", prompt=PROMPT).value == 0.0
    assert run("abstractness", "a brand new sentence", prompt=PROMPT).value == 1.0
    # Unigrams: "tower" and "1889" appear in the prompt, "famous" does not.
    assert run(
        "abstractness", "famous tower 1889", prompt=PROMPT, params={"n": 1}
    ).value == pytest.approx(1 / 3)
    with pytest.raises(CheckError, match="fewer than 3 words"):
        run("abstractness", "Yes.", prompt=PROMPT)


def test_repetitiveness() -> None:
    # Trigrams of "a b c a b c": abc (twice), bca, cab -> 1 of 3 distinct repeats.
    assert run("repetitiveness", "a b c a b c", prompt="q").value == pytest.approx(1 / 3)
    assert run("repetitiveness", "one two three four", prompt="q").value == 0.0
    assert run("repetitiveness", "go go go go", prompt="q", params={"n": 1}).value == 1.0
    with pytest.raises(CheckError):
        run("repetitiveness", "too short", prompt="q")


def test_unicode_words_count() -> None:
    response = "東京 は 日本 の 首都 です"
    assert run("coverage", response, prompt="首都 です").value == pytest.approx(2 / 6)
    assert run("compression", response, prompt="首都 です").value == pytest.approx(2 / 6)


# --- keyword inclusion -----------------------------------------------------------------------


def test_keywords_drop_function_words() -> None:
    assert keywords("It is the capital of France and it has 2 million people.") == {
        "capital",
        "france",
        "2",
        "million",
        "people",
    }


def test_keyword_inclusion_measures() -> None:
    truth = ["Paris is the capital of France."]
    response = "The capital is Paris, a large city."
    # Response keywords {capital, paris, large, city}; truth {paris, capital, france}.
    assert (
        run(
            "keyword_inclusion", response, ground_truths=truth, params={"measure": "precision"}
        ).value
        == 0.5
    )
    assert run(
        "keyword_inclusion", response, ground_truths=truth, params={"measure": "recall"}
    ).value == pytest.approx(2 / 3)
    assert run("keyword_inclusion", response, ground_truths=truth).value == pytest.approx(4 / 7)


def test_keyword_inclusion_best_ground_truth_and_edges() -> None:
    truths = ["Berlin", "Paris is the capital"]
    assert run("keyword_inclusion", "Paris is the capital.", ground_truths=truths).value == 1.0
    assert run("keyword_inclusion", "", ground_truths=truths).value == 0.0
    assert run("keyword_inclusion", "It is.", ground_truths=["it is"]).value == 0.0
    with pytest.raises(CheckError, match="no ground_truths"):
        run("keyword_inclusion", "Paris")


# --- question robustness ---------------------------------------------------------------------


@pytest.fixture
def spelling() -> None:
    pytest.importorskip("spellchecker")


def robustness(prompt: str, **params: Any) -> CheckResult:
    return make("question_robustness", **params)(prompt, Event(id="e", prompt=prompt))


@pytest.mark.usefixtures("spelling")
def test_question_robustness_counts_unknown_words() -> None:
    assert robustness("What is the capital of France?").value == 0.0
    result = robustness("Waht is the captial of France?")
    assert result.value == pytest.approx(2 / 6)
    assert result.detail == "2 of 6 words unknown"


@pytest.mark.usefixtures("spelling")
def test_question_robustness_ignore_list_and_acronyms() -> None:
    prompt = "How do I deploy llmsidecar on Kubernetes with the REST API?"
    base = robustness(prompt).value
    assert isinstance(base, float)
    assert base > 0
    assert robustness(prompt, ignore=["LLMSidecar", "kubernetes"]).value == 0.0
    # Capitalised acronyms are skipped by default, counted on request.
    assert robustness("Is XQZW down?").value == 0.0
    assert robustness("Is XQZW down?", skip_uppercase=False).value == pytest.approx(1 / 3)


@pytest.mark.usefixtures("spelling")
def test_question_robustness_edges() -> None:
    assert robustness("").value == 0.0
    assert robustness("42 + 7 = ?").value == 0.0
    assert robustness("Where is John\u2019s car? I don't know.").value == 0.0
    assert robustness("Wo ist der Bahnhof?").value == pytest.approx(0.5, abs=0.26)


@pytest.mark.usefixtures("spelling")
def test_spell_checker_is_built_once() -> None:
    a = make("question_robustness")
    b = make("question_robustness", ignore=["x"])
    assert a.checker is b.checker  # type: ignore[attr-defined]


def test_registered_kinds_and_fields() -> None:
    expected = {
        "coverage": "response",
        "density": "response",
        "compression": "response",
        "abstractness": "response",
        "repetitiveness": "response",
        "keyword_inclusion": "response",
        "question_robustness": "prompt",
    }
    for name, field in expected.items():
        cls = get_check(name)
        assert cls is not None
        assert cls.value_kind == "score"
        assert cls.default_field == field
