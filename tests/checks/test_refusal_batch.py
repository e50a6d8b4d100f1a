"""The batch scorers of the refusal model (numpy, and the compiled one where it was built)
against the dictionary scorer they replace on batches: the same scores for every text,
whatever its spaces, script or length."""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sidecar.checks import refusal_batch, refusal_model
from sidecar.checks.base import CheckContext
from sidecar.checks.refusal import (
    DEFAULT_PHRASES,
    JailbreakParams,
    JailbreakSuccess,
    Refusal,
    RefusalParams,
    RefusalScoreCheck,
    RefusalScoreParams,
    model_view,
)
from sidecar.checks.refusal_batch import BatchScorer, _Table, hash_names, name_hash
from sidecar.checks.refusal_features import SHAPE_PREFIXES
from sidecar.checks.refusal_model import (
    BATCH_MIN,
    HEAD_CHARS,
    OPENING_CHARS,
    PIVOTS,
    RefusalModel,
    View,
    default_model,
)
from sidecar.events import Event

EVENT = Event(id="e", response="x")
DATA = Path(__file__).resolve().parent.parent / "data" / "refusals.jsonl"
SAMPLE = Path(__file__).resolve().parents[2] / "sidecar" / "data" / "events.jsonl"

SPACES = [chr(c) for c in range(0x3001) if chr(c).isspace()]
PHRASES = [None, "i'm sorry", "i cannot", "as an ai language model"]


def _texts() -> list[str]:
    with DATA.open(encoding="utf-8") as fh:
        labelled = [json.loads(line)["text"] for line in fh if line.strip()]
    # and the sample stream's answers, which are longer (lists, code, personas); the stream
    # holds broken lines on purpose, which are left out here
    answers = []
    for line in SAMPLE.read_text(encoding="utf-8").splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict) and isinstance(event.get("response"), str):
            answers.append(event["response"])
    assert len(answers) > 200
    return labelled + answers


@functools.cache
def _keeping() -> RefusalModel:
    """The shipped model made in memory: it keeps its vocabulary (the default model lets it go
    once its compiled scorer is made), so its one-by-one scores are the dictionaries'."""
    return RefusalModel.from_json(default_model().to_json())


_SCORERS: dict[int, tuple[RefusalModel, list[BatchScorer]]] = {}


def _scorers(model: RefusalModel) -> list[BatchScorer]:
    """numpy's and, where it was built, the compiled one (made once per model)."""
    if id(model) not in _SCORERS:
        scorers = [BatchScorer(model, native=False)]
        if refusal_model.compiled():
            scorers.append(BatchScorer(model, native=True))
        _SCORERS[id(model)] = (model, scorers)
    return _SCORERS[id(model)][1]


def _assert_equal(model: RefusalModel, views: list[View], phrases: list[str | None]) -> None:
    for scorer in _scorers(model):
        got = scorer.score(views, phrases)
        assert len(got) == len(views)
        for view, phrase, batch in zip(views, phrases, got, strict=True):
            # to the bit: sums are exact
            assert batch == model.score(view, phrase), (scorer.native, view)


def test_equal_on_the_labelled_answers() -> None:
    texts = _texts()
    views = [model_view(t) for t in texts]
    phrases = [PHRASES[i % len(PHRASES)] for i in range(len(texts))]
    _assert_equal(_keeping(), views, phrases)


_word = st.text(
    alphabet=st.sampled_from([*"abcdefghij,.'!?:-^", "é", "ß", "\u4e00", "\U0001f600"]),
    min_size=1,
    max_size=12,
)
_piece = st.one_of(
    _word,
    st.sampled_from(PIVOTS),
    st.sampled_from(["sorry,", "i", "can't", "help", "sure", "here", "is", "1.", "```", "^"]),
    st.sampled_from(SPACES),
    st.text(alphabet=st.sampled_from(SPACES), min_size=1, max_size=3),
    st.integers(min_value=300, max_value=1200).map(lambda n: "x" * n),  # past the opening
)
_text = st.lists(_piece, max_size=120).map(" ".join)


@settings(max_examples=200, deadline=None)
@given(
    texts=st.lists(_text, min_size=1, max_size=12),
    phrases=st.lists(st.sampled_from(PHRASES), min_size=12, max_size=12),
)
def test_equal_on_random_texts(texts: list[str], phrases: list[str | None]) -> None:
    """Any whitespace str.split() splits on, letters outside ASCII, tokens across the
    opening's end and the head's, pivots and none: one score either way."""
    views = [model_view(t) for t in texts]
    _assert_equal(_keeping(), views, phrases[: len(views)])


def test_equal_on_views_the_check_never_makes() -> None:
    """Empty and space-only parts, a token longer than the tables of powers, a lone
    surrogate, and a word that reads like a positional feature's name."""
    model = _keeping()
    long_token = "y" * (HEAD_CHARS * 3)
    views = [
        View("", "", 0),
        View("   \u3000\x1c ", "\u2028", 9),
        View(long_token, long_token[-50:], len(long_token)),
        View("i can't \ud800 help o:sorry, with that", "", 40),
        View("z" * (OPENING_CHARS - 3) + " abcdefgh sorry", "", 400),
    ]
    _assert_equal(model, views, [None, "i cannot", None, "i'm sorry", None])


def test_equal_on_endings_of_few_words() -> None:
    """An ending of fewer than eight words starts its pairs at "^" too: texts whose last
    characters are spaces and then a word the model knows at the ending's start."""
    model = _keeping()
    starts = sorted(n[len("e:^ ") :] for n in model.weights if n.startswith("e:^ "))[:40]
    assert starts
    texts = ["a " * 200 + " " * 120 + word + " ok" for word in starts]
    views = [model_view(t) for t in texts]
    assert all(len(v.tail.split()) == 2 for v in views)
    _assert_equal(model, views, [None] * len(views))


def test_a_batch_longer_than_a_chunk_is_scored_in_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    texts = _texts()[:60]
    views = [model_view(t) for t in texts]
    phrases: list[str | None] = [None] * len(views)
    whole = BatchScorer(default_model(), native=False).score(views, phrases)
    monkeypatch.setattr(refusal_batch, "CHUNK_CHARS", 500)
    for scorer in _scorers(default_model()):
        assert scorer.score(views, phrases) == whole


@pytest.mark.parametrize("built", [False, True])
def test_score_many_batches_from_batch_min(monkeypatch: pytest.MonkeyPatch, built: bool) -> None:
    """Without the compiled scorer, from BATCH_MIN texts on; with it, from one."""
    if built and not refusal_model.compiled():
        pytest.skip("the compiled scorer is not built")
    monkeypatch.setattr(refusal_model, "compiled", lambda: built)
    # made in memory, it keeps its vocabulary: its one-by-one scores are the dictionaries'
    model = _keeping()
    views = [model_view(t) for t in _texts()[: BATCH_MIN + 2]]
    calls: list[int] = []
    real = BatchScorer.score

    def counted(self: BatchScorer, v: list[View], p: list[str | None]) -> object:
        calls.append(len(v))
        return real(self, v, p)

    monkeypatch.setattr(BatchScorer, "score", counted)
    few = model.score_many(views[: BATCH_MIN - 1], [None] * (BATCH_MIN - 1))
    assert calls == ([BATCH_MIN - 1] if built else []) and len(few) == BATCH_MIN - 1
    assert few == [model.score(v, None) for v in views[: BATCH_MIN - 1]]
    calls.clear()
    many = model.score_many(views, [None] * len(views))
    assert calls == [len(views)]
    assert many == [model.score(v, None) for v in views]
    with pytest.raises(ValueError, match="one phrase"):
        model.score_many(views, [None])


def test_the_compiled_scorer_is_built() -> None:
    """pip builds it wherever a C compiler is found (CI has one): without it the numpy scorer
    is used, which is slower, so a build that lost it must not pass unnoticed. A module built
    from another version of the C file fails everywhere: the tests would test old code."""
    state = refusal_model.native_state()
    assert state != "stale", "_refusal_native.c changed since it was built: pip install -e ."
    if state == "missing":
        message = "sidecar/checks/_refusal_native.c was not built (pip install -e . builds it)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    assert default_model().batch_scorer().native


def test_every_name_of_the_shape_has_a_prefix_the_released_model_keeps() -> None:
    """A model that let its vocabulary go keeps the weights of the names starting with
    SHAPE_PREFIXES: every name shape_features gives, on every branch (list, code, a phrase
    and none, a pivot and none), starts so."""
    from sidecar.checks.refusal_features import find_pivot, shape_features

    names: set[str] = set()
    pivoted = "I am sorry, I cannot help with building that. However, here is a safer idea:\n"
    for text in ["Sorry, I can't.", pivoted + "1. a\n2. b\n```x```\n" + "y " * 900]:
        view = model_view(text)
        for phrase in (None, "i'm sorry"):
            names.update(shape_features(view, phrase, find_pivot(view.head)))
    assert {n.split(":")[0].split("=")[0] for n in names} == {
        "len",
        "lines",
        "sh",
        "ph",
        "pv",
        "pvlen",
    }
    assert all(n.startswith(SHAPE_PREFIXES) for n in names)


@pytest.mark.skipif(not refusal_model.compiled(), reason="the compiled scorer is not built")
def test_a_model_read_from_a_file_lets_its_vocabulary_go() -> None:
    """Once the compiled scorer holds its words, a model read from a file keeps only the
    weights of the shape's names; its scores stay those of the dictionaries to the bit, and
    its weights, explanations, file and numpy's scorer are read from the file again."""
    model = RefusalModel.from_package(refusal_model.MODEL_FILE)
    assert isinstance(model.weights, dict) and len(model._heads[0]) > 10_000
    texts = _texts()
    views = [model_view(t) for t in texts]
    # every phrase the model weighs, and none
    known = [None, *sorted(n[3:] for n in model.weights if n.startswith("ph="))]
    phrases = [known[i % len(known)] for i in range(len(texts))]
    assert model.batch_scorer().native
    assert isinstance(model.weights, refusal_model.WeightsFile)
    kept = model._heads[0].keys() | model._heads[1].keys()
    assert 0 < len(kept) < 1_000
    assert all(n.startswith(SHAPE_PREFIXES) for n in kept)
    keeping = _keeping()
    assert model.score_many(views, phrases) == [
        keeping.score(v, p) for v, p in zip(views, phrases, strict=True)
    ]
    assert model.score(views[0], phrases[0]) == keeping.score(views[0], phrases[0])
    assert model.explain(views[0], "i'm sorry") == keeping.explain(views[0], "i'm sorry")
    assert model.to_json() == keeping.to_json()
    numpy_scorer = BatchScorer(model, native=False)
    assert numpy_scorer.score(views[:50], phrases[:50]) == model.score_many(
        views[:50], phrases[:50]
    )
    # made in memory, a model keeps its vocabulary with its compiled scorer
    assert keeping.batch_scorer().native and isinstance(keeping.weights, dict)


@pytest.mark.skipif(not refusal_model.compiled(), reason="the compiled scorer is not built")
def test_a_module_built_from_another_version_of_the_c_file_is_not_used(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """An editable install keeps the module it built after the C file changes: numpy scores
    then, and a warning says to rebuild."""
    from sidecar.checks import _refusal_native

    refusal_model.native_state.cache_clear()
    monkeypatch.setattr(_refusal_native, "SOURCE_SHA256", "0" * 64)
    try:
        with caplog.at_level("WARNING", logger="sidecar.checks.refusal_model"):
            assert refusal_model.native_state() == "stale"
        assert not refusal_model.compiled()
        assert "pip install -e ." in caplog.text
        assert not BatchScorer(default_model()).native
        with pytest.raises(RuntimeError, match="compiled refusal scorer is stale"):
            BatchScorer(default_model(), native=True)
    finally:
        monkeypatch.undo()
        refusal_model.native_state.cache_clear()
    assert refusal_model.native_state() == "built"


def test_threads_that_score_first_at_once_share_one_batch_scorer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Single texts go through the batch scorer too, so a service's first events come from
    several threads at once: one scorer is made, not one each."""
    model = RefusalModel(weights=dict(default_model().weights), bias=default_model().bias)
    made: list[int] = []
    real = BatchScorer.__init__

    def counted(self: BatchScorer, *args: object, **kwargs: object) -> None:
        made.append(1)
        real(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(BatchScorer, "__init__", counted)
    view = model_view("I'm sorry, but I can't help with that.")
    start = threading.Barrier(8)
    scores: list[object] = []

    def first() -> None:
        start.wait()
        scores.append(model.score_many([view] * BATCH_MIN, [None] * BATCH_MIN))

    threads = [threading.Thread(target=first) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert made == [1]
    assert len(scores) == 8 and all(s == scores[0] for s in scores)


def test_a_scorer_that_must_be_compiled_says_it_is_not_built(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(refusal_batch, "_native_sums", lambda table: None)
    assert not BatchScorer(default_model()).native  # the default falls back to numpy
    with pytest.raises(RuntimeError, match="compiled refusal scorer is not built"):
        BatchScorer(default_model(), native=True)


@pytest.mark.skipif(not refusal_model.compiled(), reason="the compiled scorer is not built")
def test_the_compiled_scorer_refuses_what_it_cannot_read() -> None:
    """Wrong arguments raise, they never read past a buffer."""
    from sidecar.checks import _refusal_native

    table = BatchScorer(default_model(), native=False)._table
    assert table is not None
    assert BatchScorer(default_model(), native=True)._table is None  # it keeps its own copy
    slots = np.zeros((len(table.keys) + 1, 3), dtype=np.uint64)
    prefixes = tuple((1, 1) for _ in range(9))
    limits = (40, 8, 4, 8)
    shift = int(table.shift)

    def call(*parts: object, **changed: object) -> object:
        args: dict[str, object] = {
            "prefixes": prefixes,
            "limits": limits,
            "slots": slots.data,
            "shift": shift,
            "reach": table.reach,
            **changed,
        }
        return _refusal_native.sums(*parts, 3, *args.values())  # type: ignore[arg-type]

    one = (["a b"], ["a"], [""], ["b"])
    assert call(*one) == ([0], [0])  # an empty table: nothing found, nothing added
    with pytest.raises(ValueError, match="one of each part"):
        call(["a"], ["a", "b"], [""], [""])
    with pytest.raises(TypeError, match="must be a str"):
        call([b"bytes"], ["a"], [""], [""])
    with pytest.raises(ValueError, match="9 prefixes"):
        call(*one, prefixes=prefixes[:8])
    with pytest.raises(ValueError, match="do not match"):
        call(*one, slots=slots[:-1].data)
    with pytest.raises(ValueError, match="do not match"):
        call(*one, shift=shift + 1)
    for wrong in (0, 1, 2, 3, 64):  # 1-3: a size whose byte count wraps round in 64 bits
        with pytest.raises(ValueError, match=r"bad table shape|do not match"):
            call(*one, shift=wrong, slots=slots[:1].data, reach=0)
    with pytest.raises(ValueError, match="bad table shape"):
        call(*one, reach=len(table.keys))
    with pytest.raises(ValueError, match="must be positive"):
        call(*one, limits=(40, 0, 4, 8))
    with pytest.raises(TypeError):
        call(*one, slots="not a buffer")


def test_name_hash_composes() -> None:
    """What the scorer relies on to hash "o:" + a + " " + b from the parts' hashes."""
    p = refusal_batch._P
    for x, y in [("o:", "sorry,"), ("sorry,", " can't"), ("", "x"), ("\u4e00é", "\U0001f600")]:
        assert name_hash(x + y) == (name_hash(x) + pow(p, len(x), 1 << 64) * name_hash(y)) % (
            1 << 64
        )
    assert name_hash("a") != name_hash("a\x00")


def test_names_hash_the_same_in_numpy(monkeypatch: pytest.MonkeyPatch) -> None:
    names = sorted(default_model().weights)[::40]
    names += ["", "a", "a\x00", "ph=i can't", "é\u4e00\U0001f600", "\ud800x", "y" * 5000]
    want = [name_hash(n) for n in names]
    assert hash_names(names).tolist() == want
    monkeypatch.setattr(refusal_batch, "CHUNK_CHARS", 64)  # many chunks, one name alone
    assert hash_names(names).tolist() == want


def test_table_finds_every_key_and_nothing_else() -> None:
    rng = np.random.default_rng(7)
    keys = np.unique(rng.integers(1, 2**63, 5000, dtype=np.uint64))
    weights = [rng.random(len(keys)), rng.random(len(keys))]
    table = _Table(keys, weights)
    assert table.reach >= 2  # some keys sit past their home slot
    slots = table.find(keys)
    assert (slots < table.missing).all()
    assert (table.keys[slots] == keys).all()
    assert (table.weights[0][slots] == weights[0]).all()
    absent = rng.integers(1, 2**63, 5000, dtype=np.uint64)
    absent = absent[~np.isin(absent, keys)]
    assert (table.find(absent) == table.missing).all()
    assert table.weights[0][table.missing] == table.weights[1][table.missing] == 0


def test_table_refuses_a_shared_hash() -> None:
    keys = np.array([5, 9, 5], dtype=np.uint64)
    with pytest.raises(ValueError, match="share a hash"):
        _Table(keys, [np.zeros(3)])


@pytest.mark.parametrize(
    "params",
    [
        RefusalParams(),
        RefusalParams(alone="model"),
        RefusalParams(method="phrases"),
        RefusalParams(alone=0.6, scope="anywhere", count_partial=False),
    ],
    ids=["default", "alone-model", "phrases", "alone-0.6-anywhere"],
)
def test_assess_many_equals_assess(params: RefusalParams) -> None:
    texts = _texts()
    texts.append("[CLASSIC] I'm sorry, I can't. [JAILBREAK] Sure, here is how: 1. first")
    many = Refusal(params, CheckContext()).assess_many(texts)
    single = Refusal(params, CheckContext())  # prepares nothing: each text on its own
    for text, got in zip(texts, many, strict=True):
        one = single.assess(text)
        assert got == one, text


def test_prepared_results_answer_the_calls() -> None:
    check = Refusal(RefusalParams(alone="model"), CheckContext())
    assert check.prepares
    texts = _texts()[:40]
    check.prepare(texts)
    kept = check._batch.prepared[id(texts[3])][1]
    assert check.assess(texts[3]) is kept
    copy = "".join(list(texts[3]))  # an equal text that was not handed over
    assert copy is not texts[3]
    assert check.assess(copy) is not kept and check.assess(copy) == kept
    check.prepare([])
    assert check._batch.prepared == {}
    phrases = Refusal(RefusalParams(method="phrases"), CheckContext())
    assert not phrases.prepares
    phrases.prepare(texts)
    assert getattr(phrases._batch, "prepared", None) is None


def test_each_thread_reads_its_own_batch() -> None:
    """The inline API runs the pipeline in other threads than the stream's: a batch one
    prepares is not overwritten by another's, nor let go by it."""
    check = Refusal(RefusalParams(alone="model"), CheckContext())
    mine, theirs = _texts()[:20], _texts()[20:40]
    check.prepare(mine)
    seen: list[object] = []

    def other() -> None:
        check.prepare(theirs)
        seen.append(check.assess(theirs[0]) is check._batch.prepared[id(theirs[0])][1])
        check.prepare([])

    worker = threading.Thread(target=other)
    worker.start()
    worker.join()
    assert seen == [True]
    assert check.assess(mine[0]) is check._batch.prepared[id(mine[0])][1]


def test_checks_that_need_the_probability_prepare_it() -> None:
    """jailbreak_success and refusal_score read the model's probability of every answer.
    With a model that never decides alone, an assessment made without it (an answer with no
    phrase) would not do: they prepare with it, and agree with their calls one by one."""
    m = default_model()
    never_alone = RefusalModel(m.weights, m.bias, m.veto, 1.0, m.meta)
    texts = _texts()[:10] + _texts()[-40:]  # refusals, and answers without a phrase
    assert sum(Refusal(RefusalParams(), CheckContext()).find(t) is None for t in texts) > 20
    for check in (
        JailbreakSuccess(JailbreakParams(), CheckContext()),
        RefusalScoreCheck(RefusalScoreParams(), CheckContext()),
    ):
        check._refusal = Refusal(RefusalParams(alone="model"), CheckContext(), model=never_alone)
        alone = [check(t, EVENT) for t in texts]
        check.prepare(texts)
        assert [check(t, EVENT) for t in texts] == alone


def test_the_hash_base_is_drawn_per_process() -> None:
    """Nobody outside the process knows the base, so nobody can compute a token that hashes
    like a word of the vocabulary."""
    code = "from sidecar.checks import refusal_batch; print(refusal_batch._P)"
    bases = {
        subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        ).stdout.strip()
        for _ in range(2)
    }
    assert len(bases) == 2 and all(int(b) % 2 == 1 for b in bases)


_ALONE = Refusal(RefusalParams(alone="model"), CheckContext())
_UNFILTERED = Refusal(RefusalParams(alone="model"), CheckContext())
_UNFILTERED._spelled = None
_phrase_words = st.one_of(
    st.sampled_from(DEFAULT_PHRASES[::40]).map(str.split).map(" ".join),
    st.sampled_from(DEFAULT_PHRASES[::40]).map(str.upper),
    st.sampled_from(["i", "I", "can't", "cannot", "sorry", "Sorry,", "AI", "help", "that"]),
)


@settings(max_examples=300, deadline=None)
@given(
    words=st.lists(st.one_of(_phrase_words, _word), max_size=12),
    gaps=st.lists(st.sampled_from([" ", "  ", "\n", "\t", " \r\n "]), min_size=30, max_size=30),
)
def test_the_spelling_filter_never_hides_a_phrase(words: list[str], gaps: list[str]) -> None:
    """Where the model may decide alone, RE2 looks for any spelling of a phrase before the
    automaton reads the opening: it must find one wherever the automaton finds a phrase."""
    text = "".join(w + g for w, g in zip(words, gaps, strict=False))
    assert _ALONE.find_all(text) == _UNFILTERED.find_all(text)


def test_the_spelling_filter_only_where_the_scan_does_not_filter() -> None:
    assert _ALONE._spelled is not None
    assert Refusal(RefusalParams(), CheckContext())._spelled is None  # the shared scan does
    assert Refusal(RefusalParams(method="phrases"), CheckContext())._spelled is None
    texts = _texts()
    assert [_ALONE.find_all(t) for t in texts] == [_UNFILTERED.find_all(t) for t in texts]
