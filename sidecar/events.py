"""The event (wire format v1) and ``decode()``, which turns raw record bytes into one.

Decoding is the first thing the hot path does to every record, so it is two-tiered:

* the **fast path** decodes straight into :class:`Event`, a frozen ``msgspec`` struct (about
  1 µs for a 1 KB event, against 2.5 µs for the pydantic model). It takes only events it can
  read exactly as the pydantic model would: fields of the right types, timestamps in RFC 3339,
  a prompt or a response, and nesting the model allows. Fields of the event's own, or a whole
  number as its id, cost a second reading of the record, as a plain mapping;
* everything else (a fraction as the id, other timestamp forms, fields of its own in
  ``attack``, a broken record) goes through :class:`EventModel`, the pydantic model that
  defines the wire format. It gives the same values for what the fast path takes, and says why
  a record is not an event: the dead-letter reasons and messages come from it alone.

``tests/test_events.py`` holds the two paths equal on randomised records. One difference is
left, knowingly: a key sent twice whose first value nests past the model's limit (over 200
levels) is read with its second value, where the model refuses the record as too deep.
Looking for it would cost a count of the record's brackets, a twentieth of the whole check.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from datetime import datetime
from types import MappingProxyType
from typing import Annotated, Any, Final, Literal

import msgspec
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from .errors import DecodeError, DecodeReason

__all__ = ["Attack", "AttackModel", "Event", "EventModel", "decode", "encode", "validate"]

DEFAULT_MAX_EVENT_BYTES = 1_048_576

AttackCategory = Literal["basic", "intermediate", "advanced"]
_NO_EXTRA: Final[Mapping[str, Any]] = MappingProxyType({})

_LABELS_ROOM: Final = 199
"""How deep a value in ``labels`` may nest for the model's JSON reader (see :func:`_fits`); a
field of the event's own, one level up, may take one level more. Only these take any value."""


class Attack(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Marks a red-team probe: which class of attack, and the technique used."""

    category: AttackCategory
    technique: str | None = None

    @property
    def extra(self) -> Mapping[str, Any]:
        """Fields beyond the known ones, as sent."""
        return _NO_EXTRA

    def __str__(self) -> str:
        """As a rule reads ``attack`` as text: ``category='basic' technique='dan' rank=2``."""
        pairs = {"category": self.category, "technique": self.technique, **self.extra}
        return " ".join(f"{k}={v!r}" for k, v in pairs.items())


class _AttackWithExtra(Attack, frozen=True, kw_only=True):
    extra_fields: dict[str, Any]

    @property
    def extra(self) -> Mapping[str, Any]:
        return self.extra_fields


class Event(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """One prompt/response exchange of an LLM service. Unknown fields are kept in ``extra``.

    Made by :func:`decode` or :func:`validate`, which check it; constructing one directly
    checks nothing (tests and adapters that build a known-good event)."""

    id: Annotated[str, msgspec.Meta(min_length=1, max_length=512)]
    ts: datetime | None = None
    prompt: str | None = None
    response: str | None = None
    system_prompt: str | None = None
    system_prompt_id: str | None = None
    contexts: list[str] = []
    ground_truths: list[str] = []
    task: str | None = None
    model: str | None = None
    route: str | None = None
    tenant: str | None = None
    attack: Attack | None = None
    counterfactual_answers: list[str] = []
    labels: dict[str, Any] = {}

    @property
    def extra(self) -> Mapping[str, Any]:
        """Fields beyond the known ones, as sent (an event's own additions: trace ids,
        usage, a latency stamp); rules can read them by name."""
        return _NO_EXTRA

    def text(self, field: str) -> str | None:
        """The text of a named field; list fields are joined with blank lines. An empty list
        or mapping (``contexts``, ``ground_truths``, ``labels`` not sent) is absent: None."""
        value = getattr(self, field) if field in _KNOWN else self.extra.get(field)
        if value is None or isinstance(value, str):
            return value
        if isinstance(value, list):
            return "\n\n".join(str(v) for v in value) if value else None
        if not value and isinstance(value, dict):
            return None
        return str(value)


class _EventWithExtra(Event, frozen=True, kw_only=True):
    extra_fields: dict[str, Any]

    @property
    def extra(self) -> Mapping[str, Any]:
        return self.extra_fields


FIELDS: Final[tuple[str, ...]] = Event.__struct_fields__
"""The known fields of an event, in wire order."""
_KNOWN: Final = frozenset(FIELDS)


class AttackModel(BaseModel):
    """:class:`Attack` as the pydantic model that defines it."""

    model_config = ConfigDict(extra="allow", frozen=True)

    category: AttackCategory
    technique: str | None = None


class EventModel(BaseModel):
    """The wire format's definition: what an event may hold and why a record is not one."""

    model_config = ConfigDict(extra="allow", frozen=True)

    # A number is taken as its decimal string, as most producers would expect (in the
    # validator's Rust core); true/false are not ids.
    id: str = Field(min_length=1, max_length=512, coerce_numbers_to_str=True)
    ts: datetime | None = None
    prompt: str | None = None
    response: str | None = None
    system_prompt: str | None = None
    system_prompt_id: str | None = None
    contexts: list[str] = Field(default_factory=list)
    ground_truths: list[str] = Field(default_factory=list)
    task: str | None = None
    model: str | None = None
    route: str | None = None
    tenant: str | None = None
    attack: AttackModel | None = None
    counterfactual_answers: list[str] = Field(default_factory=list)
    labels: dict[str, Any] = Field(default_factory=dict)

    @field_validator("contexts", "ground_truths", "counterfactual_answers", "labels", mode="before")
    @classmethod
    def _null_is_empty(cls, value: Any, info: ValidationInfo) -> Any:
        if value is None:
            return {} if info.field_name == "labels" else []
        return value

    @field_validator("ts", mode="before")
    @classmethod
    def _rfc3339_as_the_fast_path_reads_it(cls, value: Any) -> Any:
        # An RFC 3339 string is read as the fast path reads it (digits past the microsecond
        # rounded, not cut), so an event decodes the same either way; other forms (a Unix
        # time, a bare date) are left to pydantic.
        if isinstance(value, str):
            try:
                return _datetime(value)
            except msgspec.ValidationError:
                pass
        return value

    @model_validator(mode="after")
    def _prompt_or_response(self) -> EventModel:
        if self.prompt is None and self.response is None:
            raise ValueError("an event needs a prompt or a response (or both)")
        return self

    def event(self) -> Event:
        """The checked event as :class:`Event`."""
        fields = dict(self.__dict__)  # the declared fields; the extra ones are kept apart
        attack = self.attack
        if attack is not None:
            extra = attack.__pydantic_extra__
            fields["attack"] = (
                _AttackWithExtra(
                    category=attack.category, technique=attack.technique, extra_fields=extra
                )
                if extra
                else Attack(category=attack.category, technique=attack.technique)
            )
        if self.__pydantic_extra__:
            return _EventWithExtra(**fields, extra_fields=dict(self.__pydantic_extra__))
        return Event(**fields)


def _float(text: str) -> float:
    # The model's JSON reader refuses a number of more than 4,300 digits before its exponent,
    # where msgspec reads it: leave any number that long to the model.
    if len(text) > _LONGEST_NUMBER:
        raise ValueError("a number too long for the model")
    return float(text)


_LONGEST_NUMBER: Final = 4300
# A record longer than that may hold such a number in ``labels`` or a field of its own (where
# any value goes): its decoders look at every untyped float, at 0.3 µs each.
_fast, _fast_long = msgspec.json.Decoder(Event), msgspec.json.Decoder(Event, float_hook=_float)
_whole = msgspec.json.Decoder(dict[str, Any])
_whole_long = msgspec.json.Decoder(dict[str, Any], float_hook=_float)
_FAST_ERRORS = (msgspec.MsgspecError, ValueError, RecursionError)


def _datetime(value: str) -> datetime:
    """An RFC 3339 timestamp as the fast path reads it."""
    result: datetime = msgspec.convert(value, datetime)
    return result


def decode(raw: bytes, *, max_bytes: int = DEFAULT_MAX_EVENT_BYTES) -> Event:
    """Parse one record; raise :class:`DecodeError` with a bounded reason if it is not an event."""
    if len(raw) > max_bytes:
        raise DecodeError(DecodeReason.TOO_LARGE, f"{len(raw)} bytes, limit {max_bytes}")
    event = _with_extra(raw) if _hint.left else _known_only(raw)
    if (
        event is not None
        and (event.prompt is not None or event.response is not None)
        and (not event.labels or _fits(event.labels.values(), _LABELS_ROOM))
    ):
        return event
    # Outside any ``except`` block, so that no exception of the fast path is chained to what
    # the model raises.
    return _decode_by_model(raw)


class _Hint:
    """Which reading to try first: a stream whose events carry fields of their own (a join's
    request id, a trace id) or whole numbers as ids goes straight to the second reading, until
    :data:`_STICKY` records in a row have not needed it. Only the cost depends on it, never the
    result; threads that race on it are harmless."""

    left = 0
    """Records still to read the second way first."""


_STICKY: Final = 16


_hint = _Hint()


def _known_only(raw: bytes) -> Event | None:
    """The event if it is JSON of known fields of the right types, else what
    :func:`_with_extra` reads (a field the struct does not know or cannot take may be one of
    the event's own, a whole-number id, or a repeated key whose last value is right)."""
    retry = False
    try:
        event: Event = (_fast_long if len(raw) > _LONGEST_NUMBER else _fast).decode(raw)
        return event
    except msgspec.ValidationError:
        retry = True
    except _FAST_ERRORS:
        pass
    return _with_extra(raw) if retry else None


def _with_extra(raw: bytes) -> Event | None:
    """The second reading, of the record as a plain mapping: for fields of the event's own
    (kept as sent) and a whole number as its id (taken as its decimal string, as the model
    takes it). The known fields are checked as the fast path checks them; anything else they
    hold (an unknown field in ``attack``, a wrong type) is None, for the model to explain."""
    try:
        doc = (_whole_long if len(raw) > _LONGEST_NUMBER else _whole).decode(raw)
        numeric = type(doc.get("id")) is int
        if numeric:
            doc["id"] = str(doc["id"])
        for name in _NULL_IS_EMPTY:
            if name in doc and doc[name] is None:
                del doc[name]
        extra = {name: doc.pop(name) for name in [n for n in doc if n not in _KNOWN]}
        _hint.left = _STICKY if numeric or extra else max(_hint.left - 1, 0)
        if not extra:
            event: Event = msgspec.convert(doc, Event)
            return event
        doc["extra_fields"] = extra
        event = msgspec.convert(doc, _EventWithExtra)
    except _FAST_ERRORS:
        return None
    return event if _fits(extra.values(), _LABELS_ROOM + 1) else None


_NULL_IS_EMPTY: Final = ("contexts", "ground_truths", "counterfactual_answers", "labels")
"""List and mapping fields where null means "none", as it does for the text fields."""


def _decode_by_model(raw: bytes) -> Event:
    try:
        model: EventModel = EventModel.__pydantic_validator__.validate_json(raw)
        return model.event()
    except ValidationError as exc:
        error = _classify(raw, exc)
    # Raised outside the ``except`` block, so the ValidationError is not kept as
    # ``__context__``: pydantic-core holds a validator's exception (and so its traceback, whose
    # frames reach the caller's batch) where the garbage collector cannot follow it. One kept
    # DecodeError would otherwise keep its whole batch alive for good.
    raise error


def _fits(values: Iterable[Any], room: int) -> bool:
    """Whether no value nests deeper than ``room`` levels, as the model's JSON reader counts
    them: a scalar or an empty container is one level, a container one more than its
    deepest item."""
    level = [v for v in values if v and isinstance(v, dict | list)]
    depth = 1
    while level:
        depth += 1  # the depth of the items of this level's containers
        if depth > room:
            return False
        items: list[Any] = []
        for value in level:
            items.extend(value.values() if isinstance(value, dict) else value)
        level = [v for v in items if v and isinstance(v, dict | list)]
    return True


def validate(doc: Mapping[str, Any]) -> Event:
    """An event from a mapping of its fields (as an adapter builds it); raises pydantic's
    ``ValidationError`` if it is not one."""
    model: EventModel = EventModel.model_validate(doc)
    return model.event()


def as_dict(event: Event) -> dict[str, Any]:
    """The event's fields that are set (not None, not the default), then its extra fields."""
    doc: dict[str, Any] = {}
    for name in FIELDS:
        value = getattr(event, name)
        if value is None or (not value and isinstance(value, list | dict)):
            continue
        if isinstance(value, Attack):
            value = {"category": value.category, "technique": value.technique, **value.extra}
        doc[name] = value
    doc.update(event.extra)
    return doc


def encode(event: Event) -> bytes:
    """The event in wire format, as the model writes it (None fields left out). The event is
    taken as checked: made by :func:`decode` or :func:`validate`."""
    fields = {name: getattr(event, name) for name in FIELDS}
    attack = event.attack
    if attack is not None:
        fields["attack"] = AttackModel.model_construct(
            category=attack.category, technique=attack.technique, **attack.extra
        )
    model = EventModel.model_construct(**fields, **event.extra)
    return model.model_dump_json(exclude_none=True).encode()


_SURROGATE_ESCAPE: Final = re.compile(rb"\\u[dD]([89abAB]|[c-fC-F])[0-9a-fA-F]{2}")


def _lone_surrogate(raw: bytes) -> bool:
    """Whether ``raw`` escapes half of a UTF-16 pair without the other half."""
    high_at = -1
    for m in _SURROGATE_ESCAPE.finditer(raw):
        if m.group(1) in b"89abAB":
            if high_at >= 0:
                return True  # a high half followed by another high half
            high_at = m.end()
        elif high_at != m.start():
            return True  # a low half not right after a high one
        else:
            high_at = -1
    return high_at >= 0


def _classify(raw: bytes, exc: ValidationError) -> DecodeError:
    errors = exc.errors(include_url=False, include_input=False)
    first = errors[0] if errors else {"type": "", "loc": (), "msg": str(exc)}
    if first["type"] == "json_invalid":
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError as ude:
            return DecodeError(DecodeReason.INVALID_UTF8, f"invalid UTF-8 at byte {ude.start}")
        message = str(first["msg"])
        if "hex escape" in message and _lone_surrogate(raw):
            # What json.dumps writes for a string holding half of a UTF-16 pair (cut text):
            # the message alone points at the escape's syntax, which is fine.
            message += " (a \\ud800-\\udfff escape without its pair is not text)"
        return DecodeError(DecodeReason.INVALID_JSON, message)
    if first["type"] == "model_type" and not first["loc"]:
        return DecodeError(DecodeReason.NOT_AN_OBJECT, "the record is JSON but not an object")
    parts = []
    for err in errors[:3]:
        loc = ".".join(str(p) for p in err["loc"]) or "event"
        msg = str(err["msg"]).removeprefix("Value error, ")
        parts.append(f"{loc}: {msg}")
    return DecodeError(DecodeReason.INVALID_EVENT, "; ".join(parts))
