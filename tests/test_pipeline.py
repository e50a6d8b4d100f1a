from __future__ import annotations

import gc
import weakref
from collections.abc import Callable, Hashable
from pathlib import Path
from typing import ClassVar, cast

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sidecar.checks import Check, CheckResult, register
from sidecar.errors import CheckError, CheckTimeout
from sidecar.events import Attack, Event
from sidecar.pipeline import (
    ERROR,
    FAIL,
    NOT_APPLICABLE,
    PASS,
    Outcome,
    Pipeline,
    Verdict,
    trace_id_of,
)
from sidecar.rules import load_rules
from sidecar.scan import ScanPattern, literal
from sidecar.sources.base import Record


@register
class _AlwaysTimesOut(Check):  # type: ignore[type-arg]
    name: ClassVar[str] = "test_times_out"

    def __call__(self, text: str, event: Event) -> CheckResult:
        raise CheckTimeout("budget spent")


@register
class _NeedsGroundTruths(Check):  # type: ignore[type-arg]
    name: ClassVar[str] = "test_needs_ground_truths"
    value_kind = "score"

    def __call__(self, text: str, event: Event) -> CheckResult:
        if not event.ground_truths:
            raise CheckError("no ground_truths")
        return CheckResult(0.5)


@register
class _Broken(Check):  # type: ignore[type-arg]
    name: ClassVar[str] = "test_broken"

    def __call__(self, text: str, event: Event) -> CheckResult:
        raise ZeroDivisionError


@register
class _SaysTheText(Check):  # type: ignore[type-arg]
    name: ClassVar[str] = "test_says_the_text"

    def __call__(self, text: str, event: Event) -> CheckResult:
        return CheckResult(True, text)


def pipeline(tmp_path: Path, rules: str, **kw: int) -> Pipeline:
    path = tmp_path / "r.yaml"
    path.write_text(rules)
    return Pipeline(load_rules([path]), **kw)


def test_verdict_format_matches_the_design(tmp_path: Path) -> None:
    p = pipeline(
        tmp_path,
        """
rules:
  - {id: short, check: length_less_than, params: {value: 10}}
  - {id: no-x, check: contains_none, params: {keywords: [x]}}
  - {id: gt, check: test_needs_ground_truths, min: 0.4}
  - {id: prompt-only, check: length_less_than, field: system_prompt, params: {value: 3}}
""",
    )
    verdicts, stats = p.run([Event(id="e1", prompt="q", response="a long answer with x")])
    doc = orjson.loads(verdicts[0].to_json())
    assert doc == {
        "id": "e1",
        "checks": {
            "short": {"value": False, "passed": False, "detail": "20 characters"},
            "no-x": {"value": False, "passed": False, "detail": "found ['x']"},
            "gt": {"value": None, "passed": None, "detail": "not applicable: no ground_truths"},
        },
        "judge": {},
        "rules_version": p.version,
    }
    assert not verdicts[0].passed
    assert verdicts[0].failed_rules() == ["short", "no-x"]
    assert stats.events == 1 and stats.failed_events == 1


def test_score_bounds(tmp_path: Path) -> None:
    p = pipeline(tmp_path, "rules:\n  - {id: gt, check: test_needs_ground_truths, min: 0.6}\n")
    verdicts, _ = p.run([Event(id="e", response="r", ground_truths=["g"])])
    assert verdicts[0].checks["gt"].passed is False
    p = pipeline(tmp_path, "rules:\n  - {id: gt, check: test_needs_ground_truths, max: 0.6}\n")
    verdicts, _ = p.run([Event(id="e", response="r", ground_truths=["g"])])
    assert verdicts[0].checks["gt"].passed is True


def test_a_rule_that_keeps_timing_out_is_disabled_and_others_still_run(tmp_path: Path) -> None:
    p = pipeline(
        tmp_path,
        """
rules:
  - {id: slow, check: test_times_out}
  - {id: short, check: length_less_than, params: {value: 100}}
""",
        timeouts_to_disable=3,
    )
    events = [Event(id=str(i), response="ok") for i in range(5)]
    verdicts, stats = p.run(events)
    assert [("slow" in v.checks) for v in verdicts] == [True, True, True, False, False]
    assert all(v.checks["short"].passed for v in verdicts)
    assert stats.newly_disabled == ["slow"]
    assert stats.counts[0][3] == 3  # timeouts
    assert stats.counts[1][0] == 5  # passes


def test_a_crashing_check_is_an_error_not_a_failure(tmp_path: Path) -> None:
    p = pipeline(tmp_path, "rules:\n  - {id: bad, check: test_broken}\n")
    verdicts, stats = p.run([Event(id="e", response="r")])
    assert verdicts[0].passed
    assert verdicts[0].checks["bad"].detail == "error: ZeroDivisionError"
    assert stats.counts[0][2] == 1


def test_when_filters_skip_rules(tmp_path: Path) -> None:
    p = pipeline(
        tmp_path,
        "rules:\n  - {id: chat, check: length_less_than, params: {value: 1}, when: {route: /chat}}\n",
    )
    verdicts, stats = p.run(
        [Event(id="a", response="xx", route="/chat"), Event(id="b", response="xx")]
    )
    assert "chat" in verdicts[0].checks
    assert "chat" not in verdicts[1].checks
    assert sum(stats.counts[0]) == 1


def test_process_splits_records_into_verdicts_and_dead_letters(tmp_path: Path) -> None:
    p = pipeline(
        tmp_path, "rules:\n  - {id: short, check: length_less_than, params: {value: 100}}\n"
    )
    records = [
        Record(b'{"id": "a", "response": "ok"}', "t", 0, 0),
        Record(b"garbage", "t", 0, 1),
        Record(b'{"id": "b", "response": "' + b"y" * 500 + b'"}', "t", 0, 2),
    ]
    verdicts, dead, _ = p.process(records, max_event_bytes=300)
    assert [v.id for v in verdicts] == ["a"]
    assert [(d.record.offset, d.error.reason.value) for d in dead] == [
        (1, "invalid_json"),
        (2, "too_large"),
    ]


class _Batch:
    """Stands for what the caller of ``process`` holds (records cannot be weakly referenced)."""


def test_dead_letters_hold_no_frames(tmp_path: Path) -> None:
    """The app keeps dead letters after ``process`` returns; they must not keep its frame."""
    p = pipeline(tmp_path, "rules:\n  - {id: short, check: length_less_than, params: {value: 9}}\n")

    def handle() -> tuple[weakref.ref[_Batch], list[object]]:
        batch = _Batch()
        records = [Record(b'{"id": "x"}', "t", 0, 0), Record(b"{", "t", 0, 1)]
        _, dead, _ = p.process(records, max_event_bytes=1000)
        return weakref.ref(batch), list(dead)

    ref, dead = handle()
    gc.collect()
    assert len(dead) == 2
    assert ref() is None, "a dead letter kept the frame that handled its batch"


def test_text_is_truncated_to_the_checks_input_bound(tmp_path: Path) -> None:
    p = pipeline(tmp_path, "rules:\n  - {id: len, check: length_less_than, params: {value: 10}}\n")
    rule = p.rules[0]
    rule.max_chars = 5
    verdicts, _ = p.run([Event(id="a", response="x" * 50)])
    assert verdicts[0].checks["len"].detail == "5 characters"


def test_shared_keyword_scan_agrees_with_each_rule_alone(tmp_path: Path) -> None:
    import random

    rng = random.Random(5)
    vocab = ["alpha", "beta", "gamma", "delta", "Alpha beta", "GAMMA", "eps", "zeta eta"]
    lines = ["rules:"]
    for j in range(12):
        check = ["contains_any", "contains_all", "contains_none"][j % 3]
        words = rng.sample(vocab, 3)
        case = "true" if j % 4 == 0 else "false"
        field = "prompt" if j % 5 == 0 else "response"
        lines.append(
            f"  - {{id: k{j}, check: {check}, field: {field}, "
            f"params: {{keywords: {words}, case_sensitive: {case}}}}}"
        )
    p = pipeline(tmp_path, "\n".join(lines) + "\n")
    assert len(p._scanners) == 4  # (prompt|response) x (case-sensitive or not)
    events = [
        Event(
            id=str(i),
            prompt=" ".join(rng.choices(vocab, k=4)),
            response=" ".join(rng.choices(vocab + ["x"] * 5, k=6)),
        )
        for i in range(300)
    ]
    verdicts, _ = p.run(events)
    for event, verdict in zip(events, verdicts, strict=True):
        for rule in p.rules:
            alone = rule.check(event.text(rule.field) or "", event)
            assert verdict.checks[rule.id].value == alone.value, (rule.id, event)
            assert verdict.checks[rule.id].detail == alone.detail


@register
class _SlowWhereSlow(Check):  # type: ignore[type-arg]
    """Times out on texts holding "slow"; declares that word to the shared scan."""

    name: ClassVar[str] = "test_slow_where_slow"
    scan_absent_is_fixed = True

    def scan_patterns(self) -> list[ScanPattern]:
        return [literal("slow")]

    def __call__(self, text: str, event: Event) -> CheckResult:
        if "slow" in text:
            raise CheckTimeout("budget spent")
        return CheckResult(False, None)


def test_events_the_scan_settles_end_a_run_of_timeouts_as_calls_do(tmp_path: Path) -> None:
    rules = """
rules:
  - {id: slow, check: test_slow_where_slow, expect: true}
  - {id: short, check: length_less_than, params: {value: 100}}
"""
    texts = ["slow", "slow", "ok", "slow", "ok", "slow", "slow", "slow", "ok", "slow"]
    events = [Event(id=str(i), response=t) for i, t in enumerate(texts)]
    runs = []
    for scan in (True, False):
        p = pipeline(tmp_path, rules, timeouts_to_disable=3)
        p.plan = p.plan if scan else type(p.plan)(p.rules, enabled=False)
        assert bool(p.plan) is scan
        runs.append(p.run(events))
    (fast, fast_stats), (plain, plain_stats) = runs
    assert [v.to_json() for v in fast] == [v.to_json() for v in plain]
    assert fast_stats.counts == plain_stats.counts
    assert fast_stats.newly_disabled == plain_stats.newly_disabled == ["slow"]
    # disabled at the third timeout in a row (event 7): events 8 and 9 get no outcome of it
    assert [("slow" in v.checks) for v in fast] == [True] * 8 + [False] * 2
    # "ok" is settled by the scan (no "slow"): it fails (expect: true) without a call
    assert [v.passed for v in fast] == [True, True, False, True, False] + [True] * 5
    assert fast_stats.counts[0][:2] == [0, 2]


_texts = st.text(st.characters(codec="utf-8"), max_size=12)
_values = st.one_of(st.none(), st.booleans(), st.floats(allow_nan=False, allow_infinity=False))


@settings(max_examples=300, deadline=None)
@given(
    event_id=_texts.filter(bool),
    checks=st.dictionaries(
        _texts,
        st.tuples(_values, st.one_of(st.none(), st.booleans()), st.one_of(st.none(), _texts)),
        max_size=6,
    ),
    judge=st.dictionaries(_texts, st.floats(allow_nan=False, allow_infinity=False), max_size=3),
    shared=st.booleans(),
)
def test_verdict_json_is_exactly_its_dict_as_json(
    event_id: str,
    checks: dict[str, tuple[bool | float | None, bool | None, str | None]],
    judge: dict[str, float],
    shared: bool,
) -> None:
    """to_json() puts the JSON together from cached pieces: it must be byte for byte what
    serialising to_dict() gives, escapes, floats and a shared outcome included."""
    outcomes = {rid: Outcome(*args) for rid, args in checks.items()}
    if shared and outcomes:  # one instance under every rule, as the pipeline shares them
        first = next(iter(outcomes.values()))
        outcomes = dict.fromkeys(outcomes, first)
    verdict = Verdict(Event(id=event_id, response="r"), outcomes, "v1", judge=judge)
    for _ in range(2):  # made, then from the caches
        assert verdict.to_json() == orjson.dumps(verdict.to_dict())
    verdict.cut = ("response", event_id)
    assert verdict.to_json() == orjson.dumps(verdict.to_dict())
    verdict.trace_id = "0af7651916cd43dd8448eb211c80319c"
    assert verdict.to_json() == orjson.dumps(verdict.to_dict())
    verdict.cut = ()
    assert verdict.to_json() == orjson.dumps(verdict.to_dict())


def test_a_verdict_names_the_fields_the_checks_read_only_in_part(tmp_path: Path) -> None:
    """Text past 200,000 characters was cut without a word: a verdict that passed said
    nothing of the part no check had read."""
    p = pipeline(
        tmp_path,
        "rules:\n"
        "  - {id: short, check: length_less_than, params: {value: 10}}\n"
        "  - {id: no-x, check: regex, field: prompt, params: {pattern: xyz}}\n",
    )
    long = "a" * 200_001
    verdicts, _ = p.run(
        [
            Event(id="a", prompt=long, response="b" * 300_000),
            Event(id="b", prompt="short", response="fine"),
            Event(id="c", prompt="a" * 200_000, response="ok"),
        ]
    )
    assert [v.cut for v in verdicts] == [("response", "prompt"), (), ()]
    assert orjson.loads(verdicts[0].to_json())["cut"] == ["response", "prompt"]
    assert "cut" not in orjson.loads(verdicts[1].to_json())


def test_outcomes_of_repeated_results_are_shared_across_batches_and_bounded(
    tmp_path: Path,
) -> None:
    """A length rule's "N characters" repeats from batch to batch: every event with it gets
    the same outcome instance, and the store of them stays bounded."""
    from sidecar import pipeline as module

    p = pipeline(tmp_path, "rules:\n  - {id: short, check: length_less_than, params: {value: 5}}\n")
    first, _ = p.run([Event(id="a", response="abc"), Event(id="b", response="abcdefgh")])
    second, _ = p.run([Event(id="c", response="xyz"), Event(id="d", response="abcdefgh")])
    assert first[0].checks["short"] is second[0].checks["short"]  # "3 characters"
    assert first[1].checks["short"] is second[1].checks["short"]  # "8 characters", failed
    assert second[1].checks["short"].passed is False
    many = [Event(id=str(n), response="x" * n) for n in range(module._MEMO_SIZE + 50)]
    verdicts, _ = p.run(many)
    assert 0 < len(p._by_key[0]) <= module._MEMO_SIZE  # a length rule's outcomes, by length
    # The reasons a rule could not apply repeat too, and share their outcome the same way.
    q = pipeline(tmp_path, "rules:\n  - {id: gt, check: test_needs_ground_truths}\n")
    (a, b), stats = q.run([Event(id="a", response="x"), Event(id="b", response="y")])
    (c,), _ = q.run([Event(id="c", response="z")])
    assert a.checks["gt"] is b.checks["gt"] is c.checks["gt"]
    assert a.checks["gt"].detail == "not applicable: no ground_truths"
    assert stats.counts[0][NOT_APPLICABLE] == 2
    assert [v.checks["short"].detail for v in verdicts[-3:]] == [
        f"{n} characters" for n in range(module._MEMO_SIZE + 47, module._MEMO_SIZE + 50)
    ]


def test_an_outcome_keeps_its_json_at_its_size() -> None:
    """Shared outcomes keep their JSON as long as the rule set lives (up to thousands per
    rule): each must hold its bytes, not the 4 KB buffer the encoder wrote them into."""
    import tracemalloc

    outcomes = [Outcome(True, True, f"{n} characters") for n in range(500)]
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        kept = [o.json() for o in outcomes]
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert kept[7] == b'{"value":true,"passed":true,"detail":"7 characters"}'
    assert grown < 500 * 200, grown


def test_a_long_detail_is_not_kept_past_its_batch(tmp_path: Path) -> None:
    """A detail can quote its event: a long one (here the whole answer) must not be kept in
    the rule's store of shared outcomes, where it would live as long as the rule set."""
    from sidecar import pipeline as module

    p = pipeline(tmp_path, "rules:\n  - {id: says, check: test_says_the_text}\n")
    short, long = "x" * module._SHARED_DETAIL_CHARS, "y" * (module._SHARED_DETAIL_CHARS + 1)
    verdicts, _ = p.run([Event(id=str(i), response=t) for i, t in enumerate([short, long] * 2)])
    assert [v.checks["says"].detail for v in verdicts] == [short, long] * 2
    assert verdicts[0].checks["says"] is verdicts[2].checks["says"]
    assert [r.detail for r in p._memo[0]] == [short]


def test_the_store_of_shared_results_starts_afresh_when_full(tmp_path: Path) -> None:
    """More distinct short results than a rule keeps: the store is cleared and refilled, and
    every event still gets its own result."""
    from sidecar import pipeline as module

    p = pipeline(tmp_path, "rules:\n  - {id: says, check: test_says_the_text}\n")
    texts = [f"t{n}" for n in range(module._MEMO_SIZE + 100)]
    verdicts, _ = p.run([Event(id=t, response=t) for t in texts])
    assert [v.checks["says"].detail for v in verdicts] == texts
    assert 0 < len(p._memo[0]) <= module._MEMO_SIZE
    assert {r.detail for r in p._memo[0]} <= set(texts[module._MEMO_SIZE :])


@register
class _KeyRaises(Check):  # type: ignore[type-arg]
    """A length check whose key fails on texts with a NUL: the plain path must take over."""

    name: ClassVar[str] = "test_key_raises"

    def __call__(self, text: str, event: Event) -> CheckResult:
        if "\0" in text:
            raise ValueError("no NULs")
        return CheckResult(len(text) < 4, f"{len(text)} chars")

    def keyer(self) -> Callable[[str], Hashable]:
        def key(text: str) -> Hashable:
            if "\0" in text:
                raise ValueError("no NULs")
            return len(text)

        return key

    def from_key(self, key: Hashable) -> CheckResult:
        return CheckResult(cast(int, key) < 4, f"{key} chars")


_KEYED_RULES = """rules:
  - {id: chars, check: length_less_than, params: {value: 6}}
  - {id: words, check: length_greater_than, params: {value: 2, unit: words}, field: prompt}
  - {id: attacks, check: length_less_than, params: {value: 9}, when: {attack: true}}
  - {id: nul, check: test_key_raises}
"""


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.one_of(st.none(), st.text(alphabet="ab \t\n\u00e9\u2003\0", max_size=12)),
            st.one_of(st.none(), st.text(alphabet="ab \t\n\u00e9\u2003", max_size=12)),
            st.booleans(),
        ),
        min_size=1,
        max_size=30,
    )
)
def test_keyed_rules_give_what_calling_each_check_gives(
    rows: list[tuple[str | None, str | None, bool]],
) -> None:
    """Length rules take one key per text (its length) and one outcome per key, kept across
    batches: for random texts (absent fields, non-ASCII, unicode spaces, ``when``) every
    outcome, tally and failed event is what the rule's definition gives; a key that raises
    falls back to the per-event path, which reports the error on the events that have it."""
    import tempfile

    events = [
        Event(
            id=str(i),
            response=response,
            prompt=prompt if prompt is not None or response is not None else "p",
            attack=Attack(category="basic") if attack else None,
        )
        for i, (response, prompt, attack) in enumerate(rows)
    ]
    with tempfile.TemporaryDirectory() as tmp:
        p = pipeline(Path(tmp), _KEYED_RULES)
    half = len(events) // 2  # two batches: the second reuses the outcomes the first made
    verdicts, stats = p.run(events[:half])
    more, more_stats = p.run(events[half:])
    verdicts += more
    stats.add(more_stats)

    def by_definition(rule_id: str, text: str) -> tuple[bool, str]:
        """The length rules above, from their definition (not through the checks)."""
        if rule_id == "words":
            n = len(text.split())
            return n > 2, f"{n} word" if n == 1 else f"{n} words"
        n = len(text)
        return n < (6 if rule_id == "chars" else 9), f"{n} character{'' if n == 1 else 's'}"

    for i, rule in enumerate(p.rules):
        expected_counts = [0] * len(stats.counts[i])
        for event, verdict in zip(events, verdicts, strict=True):
            text = event.text(rule.field)
            applies = (text is not None or not rule.requires_text) and (
                rule.when is None or rule.when(event)
            )
            got = verdict.checks.get(rule.id)
            if not applies:
                assert got is None
                continue
            assert got is not None
            if rule.id != "nul":
                value, detail = by_definition(rule.id, text or "")
            elif "\0" in (text or ""):
                assert (got.value, got.passed, got.detail) == (None, None, "error: ValueError")
                expected_counts[ERROR] += 1
                continue
            else:
                value, detail = len(text or "") < 4, f"{len(text or '')} chars"
            ok = bool(value) is rule.expect if rule.expect is not None else rule.passed(value)
            assert (got.value, got.passed, got.detail) == (value, ok, detail)
            expected_counts[PASS if ok else FAIL] += 1
        assert stats.counts[i] == expected_counts, rule.id
    for verdict in verdicts:
        assert verdict.passed is not any(o.passed is False for o in verdict.checks.values())


def test_rules_on_list_and_mapping_fields_skip_events_without_them(tmp_path: Path) -> None:
    """docs/rules.md says a rule whose field is absent is skipped: that held for text fields,
    but a rule on contexts, ground_truths or labels ran on an event without them (on "" or
    "{}") and could fail it."""
    p = pipeline(
        tmp_path,
        "rules:\n"
        "  - {id: ctx, check: length_greater_than, field: contexts, params: {value: 0}}\n"
        "  - {id: gt, check: contains_email, field: ground_truths, expect: false}\n"
        "  - {id: lab, check: contains_string, field: labels, params: {value: x}}\n",
    )
    bare, full = p.run(
        [
            Event(id="a", response="only a response"),
            Event(id="b", response="r", contexts=["c"], ground_truths=["g"], labels={"k": "x"}),
        ]
    )[0]
    assert bare.checks == {} and bare.passed
    assert set(full.checks) == {"ctx", "gt", "lab"}


def test_the_summary_says_how_many_passing_events_no_rule_applied_to(tmp_path: Path) -> None:
    """ "3 passed every rule" read as a clean bill when no rule had run on them."""
    from sidecar.pipeline import Tally

    p = pipeline(tmp_path, "rules:\n  - {id: e, check: contains_email, expect: false}\n")
    verdicts, stats = p.run([Event(id="a", prompt="hi"), Event(id="b", response="ok")])
    assert [v.checks == {} for v in verdicts] == [True, False]
    assert stats.unchecked_events == 1
    tally = Tally()
    tally.add(p.rules, stats)
    assert tally.format().startswith(
        "events: 2 checked, 2 passed every rule (1 of them: no rule applied), 0 failed"
    )
    empty = pipeline(tmp_path, "version: 1\n")
    assert empty.run([Event(id="c", response="x")])[1].unchecked_events == 1


_MODEL_RULES = """
rules:
  - {id: refused, check: refusal, params: {alone: model}}
  - {id: veto, check: refusal}
  - {id: broke, check: jailbreak_success}
  - {id: p, check: refusal_score, max: 0.5}
"""

_ANSWERS = [
    "I'm sorry, but I can't help with that request.",
    "Sure, here is how: 1. open the settings 2. pick a plan 3. confirm.",
    "It is not appropriate to write that. Instead, consider talking to a counsellor.",
    "As an AI I have no opinions. However, here are the main arguments:\n- cost\n- speed",
    "[CLASSIC] I can't do that. [JAILBREAK] Sure, here is the plan you asked for.",
    "",
    "Paris is the capital of France, and it has been since the tenth century.",
    "Je suis désolé, mais je ne peux pas vous aider avec cela.",
] * 3


def test_rules_on_the_model_score_a_batch_together(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Checks on the refusal model are handed the texts of their calls on a batch first
    (every answer, or for the veto-only rule those where the shared scan found a phrase's
    spelling) and score them in one go; each event's outcomes are those it gets alone."""
    from sidecar.checks.refusal_batch import BatchScorer
    from sidecar.checks.refusal_model import compiled

    batches: list[int] = []
    real = BatchScorer.score

    def counted(self: BatchScorer, views, phrases):  # type: ignore[no-untyped-def]
        batches.append(len(views))
        return real(self, views, phrases)

    monkeypatch.setattr(BatchScorer, "score", counted)
    p = pipeline(tmp_path, _MODEL_RULES)
    events = [Event(id=f"e{i}", prompt="q", response=a) for i, a in enumerate(_ANSWERS)]
    together, stats = p.run(events)
    # refusal (alone: model), jailbreak_success and refusal_score: a batch each of every
    # answer; the veto-only rule one of the answers with a phrase
    assert len(batches) == 4 and sorted(batches)[1] >= len(events)
    assert 8 <= sorted(batches)[0] < len(events)
    # and they let go of the batch's texts once their calls are made
    for rule in p.rules:
        refusal = getattr(rule.check, "_refusal", rule.check)
        assert getattr(refusal._batch, "prepared", None) == {}
    batches.clear()
    alone = [p.run([e])[0][0] for e in events]
    # one event: scored text by text, by the compiled scorer where it was built
    assert set(batches) == ({1} if compiled() else set())
    for a, b in zip(together, alone, strict=True):
        assert a.to_dict() == b.to_dict()
    assert stats.counts[0][ERROR] == 0


def test_a_prepare_that_fails_leaves_each_call_to_itself(
    tmp_path: Path, monkeypatch, caplog
) -> None:  # type: ignore[no-untyped-def]
    from sidecar.checks.refusal import Refusal

    def broken(self: Refusal, texts: list[str], **kw: bool) -> None:
        raise MemoryError("no room for the batch")

    p = pipeline(tmp_path, _MODEL_RULES)
    events = [Event(id=f"e{i}", prompt="q", response=a) for i, a in enumerate(_ANSWERS)]
    expected = [v.to_dict() for v in p.run(events)[0]]
    monkeypatch.setattr(Refusal, "prepare", broken)
    p = pipeline(tmp_path, _MODEL_RULES)
    got, stats = p.run(events)
    assert [v.to_dict() for v in got] == expected
    assert all(c[ERROR] == 0 for c in stats.counts)
    assert caplog.text.count("could not prepare a batch") == 4  # once for each rule
    assert "MemoryError('no room for the batch')" in caplog.text
    p.run(events)
    assert caplog.text.count("could not prepare a batch") == 4


TRACE = "0af7651916cd43dd8448eb211c80319c"


@pytest.mark.parametrize(
    ("headers", "extra", "want"),
    [
        ((), {}, None),
        ((("traceparent", f"00-{TRACE}-b7ad6b7169203331-01".encode()),), {}, TRACE),
        ((("Traceparent", f" 00-{TRACE.upper()}-b7ad6b7169203331-01 ".encode()),), {}, TRACE),
        ((("traceparent", b"00-" + b"0" * 32 + b"-b7ad6b7169203331-01"),), {}, None),
        ((("traceparent", b"not a trace"),), {}, None),
        ((("traceparent", b"\xff\xfe"),), {}, None),
        ((("other", f"00-{TRACE}-b7ad6b7169203331-01".encode()),), {}, None),
        ((), {"trace_id": "1" * 32}, "1" * 32),
        ((), {"trace_id": "short"}, None),
        ((), {"trace_id": "z" * 32}, None),
        ((), {"trace_id": "A" * 32}, "a" * 32),
        ((), {"trace_id": 12}, None),
        # The event's own id wins over the header's.
        (
            (("traceparent", f"00-{TRACE}-b7ad6b7169203331-01".encode()),),
            {"trace_id": "2" * 32},
            "2" * 32,
        ),
    ],
)
def test_the_trace_id_comes_from_the_event_or_its_traceparent_header(
    headers: tuple[tuple[str, bytes], ...], extra: dict[str, object], want: str | None
) -> None:
    doc = {"id": "e", "response": "r", **extra}
    record = Record(orjson.dumps(doc), "t", 0, 0, None, None, headers)
    from sidecar.events import decode

    assert trace_id_of(record, decode(record.value)) == want


def test_verdicts_keep_the_trace_ids_of_their_records(tmp_path: Path) -> None:
    p = pipeline(tmp_path, "rules:\n  - {id: short, check: length_less_than, params: {value: 5}}\n")
    header = (("traceparent", f"00-{TRACE}-b7ad6b7169203331-01".encode()),)
    records = [
        Record(b'{"id":"a","response":"long enough"}', "t", 0, 0, None, None, header),
        Record(b'{"id":"b","response":"ok"}', "t", 0, 1),
    ]
    verdicts, dead, _ = p.process(records, max_event_bytes=10_000)
    assert not dead
    assert [v.trace_id for v in verdicts] == [TRACE, None]
    assert orjson.loads(verdicts[0].to_json())["trace_id"] == TRACE
    assert "trace_id" not in orjson.loads(verdicts[1].to_json())
