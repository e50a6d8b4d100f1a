"""Input formats: adapters that turn a raw record into zero or more events, before the checks.

:class:`Decoder` picks the adapter of a record's topic (``input.topics``, else
``input.format``) and keeps the tally of skipped spans for the metrics. The OTLP adapters need
the ``otlp`` extra (``pip install 'llm-sidecar[otlp]'``); they are imported only when a format
asks for them, so native-only deployments never load protobuf.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..errors import ConfigError, DecodeError, DecodeReason
from ..events import Event
from ..sources.base import Record
from .base import Adapter, SkipReason
from .config import FORMATS, FormatName, InputSettings, OtlpMapping
from .native import NativeAdapter

__all__ = [
    "FORMATS",
    "Adapter",
    "Decoder",
    "FormatName",
    "InputSettings",
    "OtlpMapping",
    "SkipReason",
    "make_adapter",
    "topic_matches",
]

_CACHE_LIMIT = 4096


def make_adapter(fmt: str, *, max_bytes: int, mapping: OtlpMapping | None = None) -> Adapter:
    """The adapter of one format; a :class:`ConfigError` if it is unknown or not installed."""
    if fmt == "llm-sidecar-v1":
        return NativeAdapter(max_bytes=max_bytes)
    if fmt not in FORMATS:
        raise ConfigError(f"unknown input format {fmt!r} (choose from {', '.join(FORMATS)})")
    try:
        from .otlp import OtlpJsonAdapter, OtlpProtoAdapter
    except ImportError as exc:
        raise ConfigError(
            f"the {fmt} input format needs the opentelemetry-proto package: "
            f"pip install 'llm-sidecar[otlp]' ({exc})"
        ) from None
    cls = OtlpProtoAdapter if fmt == "otlp-proto" else OtlpJsonAdapter
    return cls(max_bytes=max_bytes, mapping=mapping)


def topic_matches(pattern: str, topic: str) -> bool:
    """MQTT filter matching (``+`` one level, ``#`` the rest); Kafka names match exactly."""
    if pattern == topic:
        return True
    if "+" not in pattern and "#" not in pattern:
        return False
    want, have = pattern.split("/"), topic.split("/")
    for i, level in enumerate(want):
        if level == "#":
            return True
        if i >= len(have) or (level != "+" and level != have[i]):
            return False
    return len(want) == len(have)


class Decoder:
    """Decodes records by the format of their topic; one adapter per format, built at start."""

    def __init__(
        self, cfg: InputSettings | None = None, *, max_bytes: int, fmt: str | None = None
    ) -> None:
        cfg = cfg or InputSettings()
        self.default = fmt or cfg.format
        self.topics: Mapping[str, str] = cfg.topics
        self.adapters: dict[str, Adapter] = {
            f: make_adapter(f, max_bytes=max_bytes, mapping=cfg.otlp)
            for f in {self.default, *cfg.topics.values()}
        }
        self._by_topic: dict[str, Adapter] = {}
        self.native = all(type(a) is NativeAdapter for a in self.adapters.values())
        """Every topic carries native events: the pipeline can decode records without asking
        this decoder (one call per record less on the hot path)."""

    def adapter_for(self, topic: str) -> Adapter:
        adapter = self._by_topic.get(topic)
        if adapter is None:
            fmt = self.topics.get(topic)
            if fmt is None:
                fmt = next(
                    (f for p, f in self.topics.items() if topic_matches(p, topic)), self.default
                )
            adapter = self.adapters[fmt]
            if len(self._by_topic) < _CACHE_LIMIT:
                self._by_topic[topic] = adapter
        return adapter

    def __call__(self, record: Record) -> list[Event]:
        """The events of one record; raises ``DecodeError`` for a record that does not decode.

        An adapter's own mistake on some input (any other exception) is that record's dead
        letter too: raised from here it would stop the process, and a restart would meet the
        same uncommitted record again, for ever."""
        adapter = self.adapter_for(record.topic)
        try:
            return adapter.decode(record.value)
        except DecodeError:
            raise
        except Exception as exc:
            otlp = adapter.format.startswith("otlp")
            raise DecodeError(
                DecodeReason.INVALID_OTLP if otlp else DecodeReason.INVALID_EVENT,
                f"the {adapter.format} reader failed on it: {type(exc).__name__}: {exc}",
            ) from None

    def take_skipped(self) -> dict[str, int]:
        """Spans skipped (by reason) since the last call."""
        out: dict[str, int] = {}
        for adapter in self.adapters.values():
            if adapter.skipped:
                for reason, n in adapter.skipped.items():
                    out[reason.value] = out.get(reason.value, 0) + n
                adapter.skipped.clear()
        return out
