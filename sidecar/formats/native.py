"""``llm-sidecar-v1``: one JSON event per record (the wire format v1 of docs/events.md)."""

from __future__ import annotations

from ..events import Event, decode
from .base import Adapter

__all__ = ["NativeAdapter"]


class NativeAdapter(Adapter):
    format = "llm-sidecar-v1"

    def decode(self, raw: bytes) -> list[Event]:
        return [decode(raw, max_bytes=self.max_bytes)]
