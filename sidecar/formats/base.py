"""The interface of input formats: an adapter turns one raw record into zero or more events.

Adapters run before the checks; everything after them sees :class:`~sidecar.events.Event`
objects only. A record an adapter cannot read raises :class:`~sidecar.errors.DecodeError` (it
goes to the dead-letter topic, as a malformed native event does); parts of a record that are
readable but are not LLM calls (an HTTP span, say) are skipped and tallied by
:class:`SkipReason`, a bounded label.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from enum import StrEnum
from typing import ClassVar

from ..events import Event

__all__ = ["Adapter", "SkipReason"]


class SkipReason(StrEnum):
    """Why a span of a readable record became no event (the fixed label set)."""

    NOT_LLM = "not_llm"
    """A span of something else: HTTP, database, tool, agent, embeddings ..."""
    RETRIEVAL = "retrieval"
    """A retrieval span: its documents become the contexts of the LLM span after it."""
    NO_TEXT = "no_text"
    """An LLM span that carries neither prompt nor response (content capture is off)."""
    INVALID = "invalid"
    """An LLM span that cannot be an event: no ids, a value of an unforeseen type (messages
    or a span kind given as a number), or a field the event model refuses."""


class Adapter(ABC):
    """One input format. ``decode`` is called on the hot path, once per record."""

    format: ClassVar[str]

    def __init__(self, *, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.skipped: dict[SkipReason, int] = {}
        """Spans skipped since the owner last took the tally."""

    @abstractmethod
    def decode(self, raw: bytes) -> list[Event]:
        """The events in one record; raise ``DecodeError`` if the record cannot be read."""

    def skip(self, reason: SkipReason, n: int = 1) -> None:
        self.skipped[reason] = self.skipped.get(reason, 0) + n
