"""The event (wire format v1) and ``decode()``, which turns raw record bytes into one.

Decoding is the first thing the hot path does to every record, so it is a single call of
the model's JSON validator; only a failure pays for working out *why* it failed.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from .errors import DecodeError, DecodeReason

__all__ = ["Attack", "Event", "decode"]

DEFAULT_MAX_EVENT_BYTES = 1_048_576


class Attack(BaseModel):
    """Marks a red-team probe: which class of attack, and the technique used."""

    model_config = ConfigDict(extra="allow", frozen=True)

    category: Literal["basic", "intermediate", "advanced"]
    technique: str | None = None


class Event(BaseModel):
    """One prompt/response exchange of an LLM service. Unknown fields are kept."""

    model_config = ConfigDict(extra="allow", frozen=True)

    # A number is taken as its decimal string, as most producers would expect (in the
    # validator's Rust core: no cost on the hot path); true/false are not ids.
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
    attack: Attack | None = None
    counterfactual_answers: list[str] = Field(default_factory=list)
    labels: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _prompt_or_response(self) -> Event:
        if self.prompt is None and self.response is None:
            raise ValueError("an event needs a prompt or a response (or both)")
        return self

    def text(self, field: str) -> str | None:
        """The text of a named field; list fields are joined with blank lines."""
        value = getattr(self, field, None)
        if value is None and self.model_extra:
            value = self.model_extra.get(field)
        if value is None or isinstance(value, str):
            return value
        if isinstance(value, list):
            return "\n\n".join(str(v) for v in value)
        return str(value)


def decode(raw: bytes, *, max_bytes: int = DEFAULT_MAX_EVENT_BYTES) -> Event:
    """Parse one record; raise :class:`DecodeError` with a bounded reason if it is not an event."""
    if len(raw) > max_bytes:
        raise DecodeError(DecodeReason.TOO_LARGE, f"{len(raw)} bytes, limit {max_bytes}")
    try:
        # The validator itself: BaseModel.model_validate_json only forwards to it, at 0.4 µs
        # a call.
        event: Event = Event.__pydantic_validator__.validate_json(raw)
        return event
    except ValidationError as exc:
        error = _classify(raw, exc)
    # Raised outside the ``except`` block, so the ValidationError is not kept as
    # ``__context__``: pydantic-core holds a validator's exception (and so its traceback, whose
    # frames reach the caller's batch) where the garbage collector cannot follow it. One kept
    # DecodeError would otherwise keep its whole batch alive for good.
    raise error


def _classify(raw: bytes, exc: ValidationError) -> DecodeError:
    errors = exc.errors(include_url=False, include_input=False)
    first = errors[0] if errors else {"type": "", "loc": (), "msg": str(exc)}
    if first["type"] == "json_invalid":
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError as ude:
            return DecodeError(DecodeReason.INVALID_UTF8, f"invalid UTF-8 at byte {ude.start}")
        return DecodeError(DecodeReason.INVALID_JSON, str(first["msg"]))
    if first["type"] == "model_type" and not first["loc"]:
        return DecodeError(DecodeReason.NOT_AN_OBJECT, "the record is JSON but not an object")
    parts = []
    for err in errors[:3]:
        loc = ".".join(str(p) for p in err["loc"]) or "event"
        msg = str(err["msg"]).removeprefix("Value error, ")
        parts.append(f"{loc}: {msg}")
    return DecodeError(DecodeReason.INVALID_EVENT, "; ".join(parts))
