from __future__ import annotations

import gc
import json
import weakref
from datetime import timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sidecar import events
from sidecar.errors import DecodeError, DecodeReason
from sidecar.events import Event, EventModel, as_dict, decode, encode, validate


def test_a_full_event_decodes_and_keeps_unknown_fields() -> None:
    raw = (
        b'{"id": "e1", "ts": "2026-11-01T10:00:00Z", "prompt": "p", "response": "r",'
        b' "contexts": ["a", "b"], "ground_truths": ["g"], "task": "rag", "model": "m",'
        b' "route": "/chat", "tenant": "t", "attack": {"category": "basic", "technique": "dan"},'
        b' "labels": {"x": 1}, "trace_id": "abc"}'
    )
    event = decode(raw)
    assert event.id == "e1"
    assert event.attack is not None and event.attack.category == "basic"
    assert event.extra == {"trace_id": "abc"}
    assert event.ts is not None and event.ts.year == 2026
    assert event.text("contexts") == "a\n\nb"
    assert event.text("trace_id") == "abc"
    assert event.text("system_prompt") is None


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (b"not json", DecodeReason.INVALID_JSON),
        (b'{"id": "x", "prompt": "\xff"}', DecodeReason.INVALID_UTF8),
        (b"[1]", DecodeReason.NOT_AN_OBJECT),
        (b'"a string"', DecodeReason.NOT_AN_OBJECT),
        (b'{"prompt": "no id"}', DecodeReason.INVALID_EVENT),
        (b'{"id": "x"}', DecodeReason.INVALID_EVENT),
        (b'{"id": true, "prompt": "boolean id"}', DecodeReason.INVALID_EVENT),
        (b'{"id": null, "prompt": "null id"}', DecodeReason.INVALID_EVENT),
        (b'{"id": "", "prompt": "empty id"}', DecodeReason.INVALID_EVENT),
        (
            b'{"id": "x", "prompt": "p", "attack": {"category": "nuclear"}}',
            DecodeReason.INVALID_EVENT,
        ),
        (b"", DecodeReason.INVALID_JSON),
    ],
)
def test_malformed_records_get_a_bounded_reason(raw: bytes, reason: DecodeReason) -> None:
    with pytest.raises(DecodeError) as info:
        decode(raw)
    assert info.value.reason is reason
    assert info.value.message


class _Batch:
    """Stands for the batch in the caller's frame (bytes cannot be weakly referenced)."""


MALFORMED = [
    b"not json",
    b'{"id": "x", "prompt": "\xff"}',
    b"[1]",
    b'{"prompt": "no id"}',
    b'{"id": "x"}',  # the prompt-or-response rule: a validator that raises
    b'{"id": "x", "prompt": "p", "attack": {"category": "nuclear"}}',
    b'{"id": true, "prompt": "p"}',
]


@pytest.mark.parametrize("raw", MALFORMED)
def test_a_kept_decode_error_does_not_keep_the_callers_frame_alive(raw: bytes) -> None:
    """A DecodeError must carry no exception chain whose traceback reaches the caller: pydantic
    keeps a validator's exception where the garbage collector cannot see it, so such a chain
    keeps the caller's batch alive for good."""

    def handle() -> tuple[weakref.ref[_Batch], list[DecodeError]]:
        batch = _Batch()
        kept: list[DecodeError] = []
        try:
            decode(raw)
        except DecodeError as exc:
            kept.append(exc.with_traceback(None))  # as the pipeline keeps it
        return weakref.ref(batch), kept

    ref, kept = handle()
    gc.collect()
    assert ref() is None, "the caller's frame outlived it through the DecodeError"
    assert kept[0].__context__ is None and kept[0].__cause__ is None


def test_size_limit_is_checked_before_parsing() -> None:
    raw = b'{"id": "x", "response": "' + b"a" * 100 + b'"}'
    assert decode(raw, max_bytes=len(raw)).id == "x"
    with pytest.raises(DecodeError) as info:
        decode(raw, max_bytes=len(raw) - 1)
    assert info.value.reason is DecodeReason.TOO_LARGE


def test_either_prompt_or_response_is_enough() -> None:
    assert Event(id="a", prompt="p").response is None
    assert Event(id="b", response="r").prompt is None


def test_a_numeric_id_is_its_decimal_string() -> None:
    assert decode(b'{"id": 7, "prompt": "numeric id"}').id == "7"
    assert decode(b'{"id": 7.5, "prompt": "fractional id"}').id == "7.5"
    assert decode(b'{"id": -12345678901234567890, "prompt": "big"}').id == "-12345678901234567890"


def test_messages_lose_pydantics_prefix() -> None:
    with pytest.raises(DecodeError) as info:
        decode(b'{"id": "x"}')
    assert info.value.message == "event: an event needs a prompt or a response (or both)"


# --- the fast path against the model --------------------------------------------------------

_TEXT = st.text(st.characters(codec="utf-8"), max_size=12)
_STAMP = st.builds(
    "{}-{:02d}-{:02d}{}{:02d}:{:02d}:{:02d}{}{}".format,
    st.sampled_from(["2026", "1999", "0000", "9999", "26"]),
    st.integers(0, 13),
    st.integers(0, 32),
    st.sampled_from(["T", "t", " ", "_", ""]),
    st.integers(0, 25),
    st.integers(0, 60),
    st.integers(0, 61),
    st.one_of(st.just(""), st.from_regex(r"[.,][0-9]{0,12}", fullmatch=True)),
    st.sampled_from(["", "Z", "z", "+00:00", "-00:00", "+05:30", "+24:00", "-0800", "+05:30:15"]),
)
_SCALAR = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    _TEXT,
)


def _nested(depth: int, value: object) -> object:
    for k in range(depth):
        value = [value] if k % 2 else {"n": value}
    return value


_VALUE = st.one_of(
    _SCALAR,
    _STAMP,
    st.lists(_TEXT, max_size=3),
    st.lists(_SCALAR, max_size=3),
    st.dictionaries(_TEXT, _SCALAR, max_size=3),
    st.builds(_nested, st.integers(195, 203), _SCALAR),
)
_RFC3339 = st.builds(
    "{:04d}-{:02d}-{:02d}T{:02d}:{:02d}:{:02d}{}{}".format,
    st.integers(1, 9999),
    st.integers(1, 12),
    st.integers(1, 28),
    st.integers(0, 23),
    st.integers(0, 59),
    st.integers(0, 59),
    st.one_of(st.just(""), st.from_regex(r"\.[0-9]{1,12}", fullmatch=True)),
    st.sampled_from(["", "Z", "+00:00", "-00:00", "+05:30", "-08:00"]),
)
_STRINGS = st.lists(_TEXT, max_size=3)
# What a well-formed event may hold, field by field ...
_GOOD = {
    "ts": _RFC3339,
    "response": st.one_of(_TEXT, st.none()),
    "system_prompt": _TEXT,
    "system_prompt_id": _TEXT,
    "contexts": _STRINGS,
    "ground_truths": _STRINGS,
    "task": _TEXT,
    "model": _TEXT,
    "route": _TEXT,
    "tenant": _TEXT,
    "attack": st.fixed_dictionaries(
        {"category": st.sampled_from(["basic", "intermediate", "advanced"])},
        optional={"technique": st.one_of(_TEXT, st.none())},
    ),
    "counterfactual_answers": _STRINGS,
    "labels": st.dictionaries(_TEXT, st.one_of(_SCALAR, _STRINGS), max_size=3),
}
# ... and what else a producer might put in a field, right or wrong.
_ODD = {
    "id": st.one_of(
        st.text(max_size=2),
        st.text(min_size=511, max_size=513),
        st.integers(),
        st.floats(allow_nan=False),
        st.booleans(),
        st.none(),
    ),
    "ts": st.one_of(_STAMP, st.integers(0, 2**40), _VALUE),
    "prompt": st.one_of(st.none(), _VALUE),
    "response": _VALUE,
    "contexts": _VALUE,
    "attack": st.one_of(
        st.fixed_dictionaries(
            {"category": st.sampled_from(["basic", "other"])},
            optional={"technique": st.integers(), "rank": _SCALAR},
        ),
        _VALUE,
    ),
    "labels": st.one_of(st.dictionaries(_TEXT, _VALUE, max_size=3), _VALUE),
    "trace_id": _VALUE,
}


@st.composite
def _records(draw: st.DrawFn) -> dict[str, object]:
    """A well-formed event, then as often as not one or two fields set to something odd."""
    doc: dict[str, object] = {"id": draw(_TEXT.filter(bool)), "prompt": draw(_TEXT)}
    doc.update(draw(st.fixed_dictionaries({}, optional=_GOOD)))
    for name in draw(st.lists(st.sampled_from(sorted(_ODD)), max_size=2)):
        doc[name] = draw(_ODD[name])
    return doc


_RECORD = _records()


def _slow(raw: bytes) -> Event | DecodeError:
    try:
        return events._decode_by_model(raw)
    except DecodeError as exc:
        return exc


def _fast(raw: bytes) -> Event | DecodeError:
    try:
        return decode(raw)
    except DecodeError as exc:
        return exc


def _same(raw: bytes) -> None:
    slow = _slow(raw)
    for left in (0, 1):  # which reading decode() tries first must not change its result
        events._hint.left = left
        _same_as(raw, _fast(raw), slow)
    events._hint.left = 0


def _same_as(raw: bytes, fast: Event | DecodeError, slow: Event | DecodeError) -> None:
    if isinstance(slow, DecodeError):
        assert isinstance(fast, DecodeError), (raw, fast)
        assert (fast.reason, fast.message) == (slow.reason, slow.message)
        return
    assert repr(fast) == repr(slow), raw  # repr: NaN in labels is not equal to itself
    assert (
        encode(fast)
        == EventModel.model_validate_json(raw).model_dump_json(exclude_none=True).encode()
    )
    assert repr(validate(as_dict(fast))) == repr(fast)


@settings(max_examples=600, deadline=None)
@given(_RECORD)
def test_the_fast_path_decodes_as_the_model_does(doc: dict[str, object]) -> None:
    _same(json.dumps(doc).encode())


@settings(max_examples=300, deadline=None)
@given(_RECORD, st.integers(0, 400), st.sampled_from([b"", b"\xff", b"}", b",", b" x", b"\x00"]))
def test_broken_records_decode_as_the_model_says(
    doc: dict[str, object], at: int, junk: bytes
) -> None:
    raw = json.dumps(doc).encode()
    at = min(at, len(raw))
    _same(raw[:at] + junk + raw[at:])


@pytest.mark.parametrize(
    "raw",
    [
        b'{"id": "a", "prompt": "p", "ts": "2026-01-01T00:00:00.1234567Z"}',  # rounded, not cut
        b'{"id": "a", "prompt": "p", "ts": "2026-01-01T00:00:00.9999999+01:00"}',
        b'{"id": "a", "prompt": "p", "ts": "2026-01-01T00:00:00,5Z"}',  # the model only
        b'{"id": "a", "prompt": "p", "ts": 1700000000}',
        b'{"id": "a", "prompt": "p", "labels": {"x": NaN, "y": 1e400}}',
        b'{"id": "a", "id": "b", "prompt": "p"}',
        b'{"id": "a", "prompt": "\\ud800"}',
        b'{"id": "a", "prompt": "p", "extra_fields": {"k": 1}}',
        b'{"id": "a", "prompt": "p", "attack": {"category": "basic", "rank": 2}}',
        b'{"id": "a", "prompt": "p", "labels": {"x": ' + b"[" * 199 + b"]" * 199 + b"}}",
        b'{"id": "a", "prompt": "p", "labels": {"x": ' + b"[" * 200 + b"]" * 200 + b"}}",
        b'{"id": "a", "prompt": "p", "labels": {"x": ' + b"[" * 2000 + b"]" * 2000 + b"}}",
        b'\xef\xbb\xbf{"id": "a", "prompt": "p"}',
        # The nesting limit counts a value below the deepest container as a level.
        b'{"id": "a", "prompt": "p", "labels": {"x": ' + b"[" * 198 + b"1" + b"]" * 198 + b"}}",
        b'{"id": "a", "prompt": "p", "labels": {"x": ' + b"[" * 199 + b"1" + b"]" * 199 + b"}}",
        b'{"id": "a", "prompt": "p", "labels": {"x": ' + b'{"k":' * 198 + b"1" + b"}" * 198 + b"}}",
        b'{"id": "a", "prompt": "p", "labels": {"x": ' + b'{"k":' * 199 + b"1" + b"}" * 199 + b"}}",
        b'{"id": "a", "prompt": "p", "t": ' + b"[" * 199 + b"1" + b"]" * 199 + b"}",
        b'{"id": "a", "prompt": "p", "t": ' + b"[" * 200 + b"1" + b"]" * 200 + b"}",
        b'{"id": "a", "prompt": "p", "t": [' + b'{"k":' * 199 + b"{}" + b"}" * 199 + b"]}",
        # A number longer than the model reads, where any value goes, and a repeated key.
        b'{"id": "a", "prompt": "p", "labels": {"x": 1' + b"0" * 4301 + b"e-4300}}",
        b'{"id": "a", "prompt": "p", "x": 1' + b"0" * 4301 + b"e-4300}",
        b'{"id": "a", "prompt": "p", "x": 1.' + b"0" * 4301 + b"e1}",
        b'{"id": "a", "prompt": "p", "labels": {"x": 1' + b"0" * 4301 + b'e-4300, "x": 1}}',
        b'{"id": "a", "prompt": "p", "labels": {"x": 1.5e3}, "pad": "' + b"p" * 4400 + b'"}',
        b'{"id": "a", "prompt": "' + b"{[" * 150 + b'", "labels": {"k": [[1]]}}',
        b'{"id": "a", "prompt": "p", "x": 1, "x": 2, "y": null, "attack": {"category": "basic"}}',
        b'{"id": "a", "prompt": "p", "extra_fields": "not a mapping"}',
        # null means none for list and mapping fields too, as it does for the text ones.
        b'{"id": "a", "prompt": "p", "contexts": null, "ground_truths": null, "labels": null}',
        b'{"id": "a", "prompt": "p", "counterfactual_answers": null, "x": 1}',
    ],
)
def test_edge_records_decode_as_the_model_says(raw: bytes) -> None:
    _same(raw)


def test_null_list_and_mapping_fields_are_empty_not_invalid() -> None:
    """`"contexts": null` was a dead letter while `"model": null` was fine."""
    event = events.decode(
        b'{"id": "a", "response": "r", "contexts": null, "ground_truths": null, '
        b'"counterfactual_answers": null, "labels": null}'
    )
    assert (event.contexts, event.ground_truths, event.counterfactual_answers) == ([], [], [])
    assert event.labels == {}
    with pytest.raises(DecodeError, match="contexts"):
        events.decode(b'{"id": "a", "response": "r", "contexts": 5}')


def test_ordinary_events_never_reach_the_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """The point of the fast path: a well-formed event with every known field is read without
    the pydantic model; one with a field of its own goes to the model, which keeps it."""

    def model(raw: bytes) -> Event:
        raise AssertionError("the model was asked")

    monkeypatch.setattr(events, "_decode_by_model", model)
    event = decode(
        b'{"id": "e1", "ts": "2026-11-01T10:00:00.5+02:00", "prompt": "p", "response": "r",'
        b' "system_prompt": "s", "system_prompt_id": "s1", "contexts": ["a"],'
        b' "ground_truths": ["g"], "task": "rag", "model": "m", "route": "/chat", "tenant": "t",'
        b' "attack": {"category": "basic", "technique": "dan"},'
        b' "counterfactual_answers": ["c"], "labels": {"x": [1, {"y": null}]}}'
    )
    assert event.ts is not None and event.ts.utcoffset() == timedelta(hours=2)
    assert event.extra == {} and event.labels == {"x": [1, {"y": None}]}
    own = decode(b'{"id": "e1", "prompt": "p", "trace_id": "abc", "usage": {"in": 3}}')
    assert own.extra == {"trace_id": "abc", "usage": {"in": 3}}
    for raw in (
        b'{"id": 7.5, "prompt": "p"}',
        b'{"id": "e1", "prompt": "p", "attack": {"category": "basic", "rank": 2}}',
        b'{"id": "e1", "prompt": "p", "ts": 1700000000}',
        b'{"id": "e1", "prompt": "p", "labels": {"x": ' + b"[" * 200 + b"]" * 200 + b"}}",
    ):
        with pytest.raises(AssertionError, match="the model was asked"):
            decode(raw)


@pytest.mark.parametrize(
    "raw",
    [
        b'{"id": "a", "prompt": "p", "labels": {"x": ' + b"[" * 300 + b"]" * 300 + b', "x": 1}}',
        b'{"id": "a", "prompt": "p", "labels": {"x": '
        + b"[" * 300
        + b"]" * 300
        + b'}, "labels": {}}',
        b'{"id": "a", "prompt": "p", "t": ' + b'{"k":' * 250 + b"1" + b"}" * 250 + b', "t": null}',
        b'{"id": "a", "prompt": ' + b"[" * 250 + b"]" * 250 + b', "prompt": "p"}',
    ],
)
def test_a_repeated_key_hides_how_deep_its_first_value_was(raw: bytes) -> None:
    """The one difference from the model, documented in ``sidecar.events``: the first value of
    a repeated key is gone before the depth is looked at, so the record is read with its second
    value where the model refuses it as too deep."""
    assert isinstance(_slow(raw), DecodeError)
    events._hint.left = 1
    second_reading_first = decode(raw)
    events._hint.left = 0
    event = decode(raw)
    assert repr(second_reading_first) == repr(event)
    assert (
        event.id == "a"
        and event.prompt == "p"
        and all(v in (1, None) for v in [*event.labels.values(), *event.extra.values()])
    )


def test_the_struct_and_the_model_define_the_same_fields() -> None:
    assert tuple(EventModel.model_fields) == events.FIELDS
    assert tuple(events.AttackModel.model_fields) == events.Attack.__struct_fields__


def test_an_attack_reads_as_text_as_it_did() -> None:
    event = decode(b'{"id": "a", "prompt": "p", "attack": {"category": "basic", "rank": 2}}')
    assert event.text("attack") == "category='basic' technique=None rank=2"
    event = decode(
        b'{"id": "a", "prompt": "p", "attack": {"category": "basic", "technique": "dan"}}'
    )
    assert event.text("attack") == "category='basic' technique='dan'"


def test_a_field_of_the_events_own_is_read_by_name_not_as_an_attribute() -> None:
    event = decode(b'{"id": "a", "prompt": "p", "text": "own", "extra": "also own"}')
    assert event.text("text") == "own" and event.text("extra") == "also own"
    assert event.extra == {"text": "own", "extra": "also own"}
    assert decode(b'{"id": "a", "prompt": "p"}').text("extra") is None


def test_a_lone_surrogate_escape_is_named_as_such() -> None:
    """json.dumps writes half of a UTF-16 pair (text cut in the middle of an emoji) as
    "\\ud83d": the message spoke only of a hex escape, as if the syntax were wrong."""
    with pytest.raises(DecodeError, match=r"escape without its pair is not text"):
        events.decode(b'{"id": "a", "prompt": "cut \\ud83d"}')
    assert events.decode(b'{"id": "a", "prompt": "\\ud83d\\ude00"}').prompt == "\U0001f600"
    with pytest.raises(DecodeError) as bad:  # another bad escape: no such note
        events.decode(b'{"id": "a", "prompt": "\\uzzzz"}')
    assert "pair" not in bad.value.message
