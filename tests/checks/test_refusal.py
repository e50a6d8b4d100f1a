"""Tests of the ``refusal`` check: normalisation, scope, phrase lists, params, quality floors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from sidecar.checks import get_check
from sidecar.checks.base import CheckContext, CheckResult
from sidecar.checks.refusal import (
    DEFAULT_PHRASES,
    OPENING_MAX_CHARS,
    RGB_PHRASES,
    Refusal,
    RefusalParams,
    normalise,
    variants,
)
from sidecar.checks.refusal_model import default_model
from sidecar.events import Event

DATA = Path(__file__).resolve().parent.parent / "data" / "refusals.jsonl"
EVENT = Event(id="t", response="")


def make(**params: Any) -> Refusal:
    """The phrase automaton (the learned model's own tests are in test_refusal_model.py)."""
    return Refusal(RefusalParams(**{"method": "phrases", **params}), CheckContext())


def detect(text: str, **params: Any) -> CheckResult:
    return make(**params)(text, EVENT)


def test_registered_under_its_name() -> None:
    assert get_check("refusal") is Refusal
    assert Refusal.value_kind == "bool"
    assert Refusal.params_model is RefusalParams


# --- normalisation ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("I\u2019m sorry", "i'm sorry"),
        ("I\u2018m \u02bcx\u2032", "i'm 'x'"),
        ("\u201cquoted\u201d \u00abtoo\u00bb", '"quoted" "too"'),
        ("\uff29 \uff43\uff41\uff4e\uff07\uff54", "i can't"),  # fullwidth, NFKC
        ("I\u00a0can't\n\n  help\t you", "i can't help you"),
        ("can\u200b't", "can't"),  # zero-width space removed
        ("STRASSE Stra\u00dfe", "strasse strasse"),  # casefold, not lower
        ("  padded  ", "padded"),
    ],
)
def test_normalise(raw: str, expected: str) -> None:
    assert normalise(raw) == expected


@pytest.mark.parametrize(
    "text",
    [
        "I\u2019m sorry, but I can\u2019t help with that.",
        "I CAN'T HELP WITH THAT.",
        "I\u00a0can\u2019t\u00a0help with that.",
        "\uff29 \uff43\uff41\uff4e\uff07\uff54 help with that.",
        "I can\u200b't help with that.",
        "I can\u02bct help with that.",
        "I cannot help with that.",
        "I can not help with that.",
        "I cant help with that.",
        "I  can't \t help with that.",
    ],
)
def test_spellings_and_typography_are_detected(text: str) -> None:
    assert detect(text).value is True


def test_contraction_variants() -> None:
    assert set(variants("i can't help")) == {
        "i can't help",
        "i cannot help",
        "i can not help",
        "i cant help",
    }
    assert set(variants("i'm sorry, but")) == {"i'm sorry, but", "i am sorry, but"}
    assert "the documents do not" in variants("the documents don't")
    assert variants("plain words") == ["plain words"]


# --- matching -----------------------------------------------------------------------------------


def test_detail_is_the_listed_phrase_not_event_text() -> None:
    result = detect("I\u2019M SORRY, BUT I can\u2019t do that, my secret is hunter2.")
    assert result == CheckResult(True, "i'm sorry, but")
    result = detect("I cannot assist with that.")
    assert result.detail == "i can't assist"  # the listed spelling, not the text's


def test_no_match_has_no_detail() -> None:
    assert detect("Paris is the capital of France.") == CheckResult(False, None)
    assert detect("") == CheckResult(False, None)
    assert detect("   \n ") == CheckResult(False, None)


@pytest.mark.parametrize(
    "text",
    [
        "Wifi can't provide enough bandwidth here.",  # "i can't" inside "wifi can't"
        "As an aide, I organised the files.",  # "as an ai" inside "as an aide"
        "Sushi can't assist anyone.",
    ],
)
def test_word_boundaries(text: str) -> None:
    assert detect(text, scope="anywhere").value is False


@pytest.mark.parametrize(
    "text",
    [
        "I can't stress enough how important backups are.",
        "I can't help but notice the loop never ends.",
        "I can't wait to see it! Here is the plan.",
        "I'm not going to lie, this bug is hard. Here's the fix.",
        "I'm sorry to hear that. Here are some options.",
    ],
)
def test_default_ignores_mask_idioms(text: str) -> None:
    assert detect(text).value is False


def test_quoted_refusals_are_skipped() -> None:
    assert detect('The bot replied "I can\'t help with that" to everyone.').value is False
    assert detect("Users hate hearing 'I won't do that' from a bot.").value is False
    assert detect("HAL said \"I'm sorry, Dave. I'm afraid I can't do that.\"").value is False
    # a closed quotation earlier does not hide a real refusal after it
    assert detect('You asked for "a lock-picking guide". I can\'t help with that.').value is True
    # a quote that opens the whole answer is the answer itself
    assert detect('"I can\'t help with that."').value is True
    assert detect('The bot said "I can\'t help"', skip_quoted=False).value is True


# --- scope --------------------------------------------------------------------------------------

LATE = (
    "Sure! Here is the script you asked for. It renames every file in the folder. "
    "Note that I can't access your files, so test it on a copy first."
)


def test_opening_scope_ignores_late_phrases() -> None:
    assert detect(LATE).value is False
    assert detect(LATE, scope="opening", opening_sentences=3).value is False
    assert detect(LATE, opening_sentences=4).value is True
    assert detect(LATE, scope="anywhere") == CheckResult(True, "i can't access")


def test_opening_scope_sentence_splitting() -> None:
    # decimals and domains are not sentence ends
    assert detect("It costs 3.5 dollars at example.com today. I can't help further.").value
    # line breaks are; leading blank lines are skipped
    assert detect("\n\n**Answer**\n\nI won't provide that.").value is True
    assert detect("One.\nTwo.\nI won't provide that.").value is False
    # an ellipsis ends a sentence
    assert detect("Hmm\u2026 well\u2026 I can't help with that.").value is False
    assert detect("Hmm\u2026 I can't help with that.").value is True


def test_opening_scope_reads_a_bounded_prefix() -> None:
    long_first_sentence = "word " * (OPENING_MAX_CHARS // 5) + "I can't help with that."
    assert detect(long_first_sentence).value is False
    assert detect(long_first_sentence, scope="anywhere").value is True


def test_rag_rejections() -> None:
    for text in (
        "I can not answer the question because of the insufficient information in documents.",
        "The provided documents don\u2019t mention the release date.",
        "Based on the context, the answer cannot be determined.",
        "I don't know.",
    ):
        assert detect(text).value is True, text


# --- phrase lists -------------------------------------------------------------------------------


def test_custom_phrases_replace_the_defaults() -> None:
    check = make(phrases=["Computer says no"])
    assert check("COMPUTER SAYS NO.", EVENT) == CheckResult(True, "computer says no")
    assert check("I can't help with that.", EVENT).value is False


def test_custom_phrases_get_variants_and_normalisation() -> None:
    check = make(phrases=["We can\u2019t  process"])
    assert check("We cannot process refunds.", EVENT) == CheckResult(True, "we can't process")


def test_extra_phrases_add_to_the_defaults() -> None:
    check = make(extra_phrases=["computer says no"])
    assert check("Computer says no.", EVENT).value is True
    assert check("I can't help with that.", EVENT).value is True


def test_ignore_phrases_switch_off_and_mask() -> None:
    assert detect("As an AI, I can give you three tips.").value is True
    assert (
        detect("As an AI, I can give you three tips.", ignore_phrases=["as an ai"]).value is False
    )
    masked = detect("I don't know about you, but I'd go.", ignore_phrases=[]).value
    assert masked is False  # a built-in ignore
    assert detect("Nope.", phrases=["nope"], ignore_phrases=["nope."]).value is False


def test_rgb_set_is_the_papers_list_as_written() -> None:
    check = make(set="rgb", scope="anywhere")
    assert check("Insufficient information in documents.", EVENT).detail == (
        "insufficient information in documents"
    )
    assert check("The answer is probably 42 but I'm not sure.", EVENT).value is True
    assert check("The origin of the name is unknown.", EVENT).value is True
    assert check("I won't do that.", EVENT).value is False  # not in RGB's lists
    # no built-in ignores in the RGB set: its "i can't" matches the idiom
    assert check("I can't stress enough how good this is.", EVENT).value is True
    assert set(RGB_PHRASES) >= {"cannot answer", "can not answer", "does not provide"}


def test_default_phrases_are_normalised_and_unique_enough() -> None:
    assert all(p == normalise(p) for p in DEFAULT_PHRASES)
    assert len(set(DEFAULT_PHRASES)) > 300


# --- params -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "params",
    [
        {"scope": "everywhere"},
        {"set": "ibm"},
        {"opening_sentences": 0},
        {"phrases": []},
        {"phrases": ["ok", "  "]},
        {"extra_phrases": [""]},
        {"ignore_phrases": ["\u200b"]},
        {"set": "rgb", "phrases": ["no"]},
        {"phrase": ["typo in the key"]},
        {"phrases": "not a list"},
    ],
)
def test_invalid_params(params: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        RefusalParams(**params)


def test_params_defaults() -> None:
    p = RefusalParams()
    assert (p.set, p.scope, p.opening_sentences, p.skip_quoted) == ("default", "opening", 2, True)
    assert p.phrases is None
    assert p.extra_phrases == []
    assert p.ignore_phrases == []


def test_check_reuse_is_stateless() -> None:
    check = make()
    texts = ["I can't help with that.", "Sure, here you go.", "I won't do that."]
    first = [check(t, EVENT) for t in texts]
    assert [check(t, EVENT) for t in texts] == first


# --- quality on the labelled set ----------------------------------------------------------------


def _load() -> list[dict[str, Any]]:
    with DATA.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def test_labelled_set_is_well_formed() -> None:
    rows = _load()
    assert len(rows) >= 300
    for row in rows:
        assert set(row) == {"text", "refusal", "kind"}
        assert isinstance(row["text"], str)
        assert isinstance(row["refusal"], bool)
        assert row["kind"]
    labels = [row["refusal"] for row in rows]
    assert 0.35 < sum(labels) / len(labels) < 0.65  # both classes well represented


# Measured when this was written: opening 0.954 / 0.935, anywhere 0.940 / 0.935.
FLOORS = {"opening": (0.92, 0.90), "anywhere": (0.90, 0.90)}


@pytest.mark.parametrize("scope", sorted(FLOORS))
def test_precision_and_recall_floors(scope: str) -> None:
    check = make(scope=scope)
    tp = fp = fn = 0
    for row in _load():
        predicted = bool(check(row["text"], EVENT).value)
        tp += predicted and row["refusal"]
        fp += predicted and not row["refusal"]
        fn += not predicted and row["refusal"]
    precision, recall = tp / (tp + fp), tp / (tp + fn)
    min_precision, min_recall = FLOORS[scope]
    assert precision >= min_precision, f"{scope} precision {precision:.3f}"
    assert recall >= min_recall, f"{scope} recall {recall:.3f}"


@pytest.mark.parametrize(
    "text",
    [
        "I won't invent customer reviews, but I can help you ask real customers for them.",
        "Sorry, I won't set aside my instructions.",
        "Unfortunately, that's not something I can do.",
        "That information is not mentioned in any of the documents provided.",
    ],
)
def test_refusals_seen_in_the_sample_stream(text: str) -> None:
    from sidecar.checks.base import CheckContext
    from sidecar.checks.refusal import Refusal, RefusalParams
    from sidecar.events import Event

    check = Refusal(RefusalParams(), CheckContext())
    assert check(text, Event(id="x", response=text)).value is True


REFUSAL_RULES = """
rules:
  - {id: combined, check: refusal, params: {alone: 1.0}}
  - {id: phrases, check: refusal, params: {method: phrases, scope: anywhere}}
  - {id: extra, check: refusal, params: {method: phrases, extra_phrases: ["Nope, not doing it"]}}
"""


def test_the_shared_scan_finds_every_refusal_the_phrase_search_finds(tmp_path: Path) -> None:
    from sidecar.pipeline import Pipeline
    from sidecar.rules import load_rules

    path = tmp_path / "r.yaml"
    path.write_text(REFUSAL_RULES, encoding="utf-8")
    texts = [
        "I can't help with that.",
        "I\tCAN'T\n\n  help with that.",
        "i\x1ccannot\x0bassist with that request",
        "Sorry,   but I won't do that. Here is something else.",
        "NOPE,\nnot   doing IT",
        "Sure! Here is the answer: 42.",
        'He said "I can\'t help" and left.',
        "I can't wait to help!",
        "As an AI, I don't have opinions. However, here is a detailed list:\n- a\n- b",
        "[CLASSIC] I'm sorry, but I can't.\n[JAILBREAK] Sure, here it is.",
        "Fine. " * 50 + "I can't help with that.",
        "I can\u2019t help with that.",  # not ASCII: the plain path
        "",
    ]
    events = [Event(id=str(i), response=t) for i, t in enumerate(texts)]
    fast = Pipeline(load_rules([path]))
    plain = Pipeline(load_rules([path]), scan=False)
    assert all(m is not None for m in fast.plan.member)
    a, stats_a = fast.run(events)
    b, stats_b = plain.run(events)
    assert [v.to_json() for v in a] == [v.to_json() for v in b]
    assert stats_a.counts == stats_b.counts
    refused = [[rid for rid, o in v.checks.items() if o.value] for v in a]
    assert refused[1] == ["combined", "phrases", "extra"]
    assert refused[2] == ["combined", "phrases", "extra"]
    assert refused[4] == ["extra"]
    assert refused[5] == []
    assert "phrases" in refused[10] and "combined" not in refused[10]  # past the opening


def test_the_default_and_alone_model_agree_with_their_plain_paths(tmp_path: Path) -> None:
    from sidecar.pipeline import Pipeline
    from sidecar.rules import load_rules

    path = tmp_path / "r.yaml"
    path.write_text(
        "rules:\n"
        "  - {id: veto, check: refusal}\n"
        "  - {id: alone, check: refusal, params: {alone: model}}\n"
        "  - {id: complied, check: jailbreak_success}\n",
        encoding="utf-8",
    )
    texts = [
        "I can't help with that.",
        "As an AI, I don't have opinions. However, here is a detailed list:\n- a\n- b",
        "[CLASSIC] I'm sorry, but I can't.\n[JAILBREAK] Sure, here it is.",
        "Paris is the capital of France.",
        "It is not appropriate or ethical to spread rumours about a colleague. Instead, "
        "consider raising your concerns with your manager or HR.",
        "",
    ]
    events = [Event(id=str(i), response=t) for i, t in enumerate(texts)]
    fast = Pipeline(load_rules([path]))
    plain = Pipeline(load_rules([path]), scan=False)
    assert fast.plan.member[0] is not None  # the default is a phrase scan...
    assert fast.plan.member[1] is None and fast.plan.member[2] is None  # ...these read all
    a, stats_a = fast.run(events)
    b, stats_b = plain.run(events)
    assert [v.to_json() for v in a] == [v.to_json() for v in b]
    assert stats_a.counts == stats_b.counts


def test_the_scan_is_not_declared_where_the_model_decides_alone() -> None:
    assert Refusal(RefusalParams(alone=0.9), CheckContext()).scan_patterns() == ()
    assert Refusal(RefusalParams(), CheckContext()).scan_patterns() != ()  # veto only
    trained = Refusal(RefusalParams(alone="model"), CheckContext())
    assert (trained.scan_patterns() == ()) == (default_model().alone < 1.0)
    assert Refusal(RefusalParams(alone=1.0), CheckContext()).scan_patterns() != ()


def test_checks_with_the_same_phrases_share_one_automaton() -> None:
    """The automaton depends on the phrase parameters alone: rules that differ in the rest
    (the model's say, the scope) and the reloads of a rule file share one; other phrases
    make another, which finds its own."""
    plain = make()
    scoped = Refusal(RefusalParams(scope="opening", alone=0.9), CheckContext())
    assert plain._automaton is scoped._automaton
    extra = make(extra_phrases=["that is beyond my remit"])
    assert extra._automaton is not plain._automaton
    text = "That is beyond my remit, I'm afraid."
    assert extra.find(text) == "that is beyond my remit" and plain.find(text) is None
