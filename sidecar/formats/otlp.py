"""``otlp-proto`` and ``otlp-json``: traces as the OpenTelemetry Collector's Kafka exporter
writes them, one ``ExportTraceServiceRequest`` per record, mapped to events.

Every LLM span of a record becomes one event, whose id is ``<trace id>-<span id>`` in hex (so
a redelivered record yields the same ids). Two conventions are read: the OpenTelemetry GenAI
semantic conventions (with the older span-event and OpenLLMetry indexed-attribute forms) and
OpenInference. Retrieval spans become the contexts of the first LLM span of the same trace in
the same record that starts after they end. docs/otlp.md has the whole
mapping table.
"""

from __future__ import annotations

import base64
import bisect
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import orjson
from google.protobuf.message import DecodeError as ProtoDecodeError
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from pydantic import ValidationError

from ..errors import DecodeError, DecodeReason
from ..events import Event, validate
from .base import Adapter, SkipReason
from .config import OtlpMapping

__all__ = ["OtlpJsonAdapter", "OtlpProtoAdapter", "any_value"]

log = logging.getLogger(__name__)

LLM_OPERATIONS = frozenset({"chat", "text_completion", "generate_content", "completion"})
"""``gen_ai.operation.name`` values of a model call (``completion``: OpenLLMetry's name)."""
_MAX_ANCESTORS = 32
_SYSTEM_ROLES = frozenset({"system", "developer"})
_CHOICE_EVENTS = ("gen_ai.choice",)
_MESSAGE_EVENTS = {
    "gen_ai.system.message": "system",
    "gen_ai.user.message": "user",
    "gen_ai.assistant.message": "assistant",
    "gen_ai.tool.message": "tool",
}


def any_value(v: AnyValue) -> Any:
    """An OTLP ``AnyValue`` as plain Python (kvlists become dicts)."""
    kind = v.WhichOneof("value")
    if kind == "string_value":
        return v.string_value
    if kind == "int_value":
        return v.int_value
    if kind == "bool_value":
        return v.bool_value
    if kind == "double_value":
        return v.double_value
    if kind == "array_value":
        return [any_value(x) for x in v.array_value.values]
    if kind == "kvlist_value":
        return {kv.key: any_value(kv.value) for kv in v.kvlist_value.values}
    if kind == "bytes_value":
        return v.bytes_value.hex()
    return None


def _attrs(kvs: Iterable[KeyValue]) -> dict[str, Any]:
    return {kv.key: any_value(kv.value) for kv in kvs}


@dataclass(slots=True)
class _Message:
    role: str
    text: str | None
    tool_calls: list[str] = field(default_factory=list)


SpanEvents = list[tuple[str, dict[str, Any]]]


@dataclass(slots=True)
class _SpanView:
    """What the mapping reads of a span, whichever encoding it came in."""

    trace_id: bytes
    span_id: bytes
    parent_id: bytes
    name: str
    start: int
    end: int
    status_code: int
    status_message: str
    attrs: dict[str, Any]
    resource: dict[str, Any]
    order: int
    kind: str  # "llm" | "retrieval" | "other" | "invalid" (its kind is not a string)
    convention: str
    raw_events: Any
    """The span's events, read only for the LLM spans that need them (``read_events``)."""
    read_events: Callable[[Any], SpanEvents]

    def events(self) -> SpanEvents:
        return self.read_events(self.raw_events)


# -- helpers over attribute values ---------------------------------------------------------


def _text(value: Any) -> str | None:
    """Text of an attribute or JSON value: strings as they are, other values as JSON."""
    if value is None:
        return None
    if isinstance(value, str):
        return value
    return orjson.dumps(value).decode()


def _json(value: Any) -> Any:
    """A structured value, from a structured attribute or a JSON string (else None)."""
    if isinstance(value, str):
        s = value.lstrip()
        if not s or s[0] not in "[{":
            return None
        try:
            return orjson.loads(value)
        except orjson.JSONDecodeError:
            return None
    return value


def _indexed(attrs: Mapping[str, Any], prefix: str) -> list[dict[str, Any]]:
    """``prefix.N.rest = v`` attributes as a list (ordered by N) of ``{rest: v}``."""
    found: dict[int, dict[str, Any]] = {}
    cut = len(prefix)
    for key, value in attrs.items():
        if not key.startswith(prefix):
            continue
        index, _, rest = key[cut:].partition(".")
        if index.isdigit():
            found.setdefault(int(index), {})[rest] = value
    return [found[i] for i in sorted(found)]


def _tool_call(name: Any, arguments: Any) -> str:
    args = arguments if isinstance(arguments, str) else _text(arguments) or ""
    return f"{name or '?'}({args})"


# -- GenAI semantic conventions ------------------------------------------------------------


def _parts_message(doc: Any, default_role: str = "user") -> _Message | None:
    """One message of ``gen_ai.input.messages``/``output.messages`` (role + typed parts), or
    a plain ``{"role", "content"}`` message of the older forms."""
    if isinstance(doc, str):
        return _Message(default_role, doc)
    if not isinstance(doc, dict):
        return None
    role = str(doc.get("role") or default_role)
    texts: list[str] = []
    calls: list[str] = []
    parts = doc.get("parts")
    if isinstance(parts, list):
        for part in parts:
            if not isinstance(part, dict):
                continue
            kind = part.get("type")
            if kind == "text" and part.get("content") is not None:
                texts.append(str(part["content"]))
            elif kind == "tool_call":
                calls.append(_tool_call(part.get("name"), part.get("arguments")))
            elif kind == "tool_call_response":
                result = part.get("response", part.get("result"))
                if result is not None:
                    texts.append(_text(result) or "")
    content = doc.get("content")
    if content is None and isinstance(doc.get("message"), dict):  # gen_ai.choice bodies
        content = doc["message"].get("content")
        calls.extend(_openai_tool_calls(doc["message"].get("tool_calls")))
    if isinstance(content, str):
        texts.append(content)
    elif isinstance(content, list):  # content parts of an OpenAI-style message
        texts.extend(
            str(p.get("text", p.get("content")))
            for p in content
            if isinstance(p, dict) and p.get("text", p.get("content")) is not None
        )
    calls.extend(_openai_tool_calls(doc.get("tool_calls")))
    return _Message(role, "\n".join(texts) if texts else None, calls)


def _openai_tool_calls(value: Any) -> list[str]:
    """``tool_calls`` of an OpenAI-style message: ``{"function": {"name", "arguments"}}``."""
    out = []
    for call in value if isinstance(value, list) else ():
        if isinstance(call, dict):
            fn = call["function"] if isinstance(call.get("function"), dict) else call
            out.append(_tool_call(fn.get("name"), fn.get("arguments")))
    return out


def _message_list(value: Any, default_role: str = "user") -> list[_Message]:
    doc = _json(value)
    if doc is None and isinstance(value, str):
        return [_Message(default_role, value)]
    if isinstance(doc, dict):
        doc = [doc]
    if doc is None:
        return []
    if not isinstance(doc, list):  # a number or a boolean: the span is invalid, not empty
        raise TypeError(f"messages are a {type(doc).__name__}, not a list")
    return [m for m in (_parts_message(d, default_role) for d in doc) if m is not None]


def _genai_messages(view: _SpanView) -> tuple[list[_Message], list[_Message], str | None]:
    """(input messages, output messages, system instructions) of a GenAI span."""
    a = view.attrs
    system = None
    if "gen_ai.system_instructions" in a:
        parts = _json(a["gen_ai.system_instructions"])
        if isinstance(parts, list):
            system = "\n".join(
                str(p.get("content")) for p in parts if isinstance(p, dict) and p.get("content")
            )
        else:
            system = _text(a["gen_ai.system_instructions"])
    inputs = _message_list(a["gen_ai.input.messages"]) if "gen_ai.input.messages" in a else []
    outputs = (
        _message_list(a["gen_ai.output.messages"], "assistant")
        if "gen_ai.output.messages" in a
        else []
    )
    if not inputs:  # OpenLLMetry: gen_ai.prompt.N.role / .content
        inputs = [
            _Message(str(p.get("role") or "user"), _text(p.get("content")))
            for p in _indexed(a, "gen_ai.prompt.")
        ]
    if not outputs:  # OpenLLMetry: gen_ai.completion.N.content / .tool_calls.M.name
        for c in _indexed(a, "gen_ai.completion."):
            calls = [
                _tool_call(t.get("name"), t.get("arguments")) for t in _indexed(c, "tool_calls.")
            ]
            outputs.append(
                _Message(str(c.get("role") or "assistant"), _text(c.get("content")), calls)
            )
    if not inputs or not outputs:  # semconv <= 1.36: content on span events
        ev_in, ev_out = _genai_events(view.events())
        inputs = inputs or ev_in
        outputs = outputs or ev_out
    return inputs, outputs, system


def _genai_events(events: SpanEvents) -> tuple[list[_Message], list[_Message]]:
    inputs: list[_Message] = []
    outputs: list[_Message] = []
    for name, a in events:
        if name in _MESSAGE_EVENTS or name in _CHOICE_EVENTS:
            role = _MESSAGE_EVENTS.get(name, "assistant")
            body = a.get("gen_ai.event.content", a.get("content"))
            doc = _json(body) if body is not None else None
            if doc is None and body is None:
                doc = {k: v for k, v in a.items() if not k.startswith("gen_ai.")} or None
            if doc is None and isinstance(body, str):
                doc = {"content": body}
            msg = _parts_message(doc, role) if doc is not None else None
            if msg is None:
                continue
            if name in _CHOICE_EVENTS:
                index = doc.get("index", 0) if isinstance(doc, dict) else 0
                if index in (0, "0", None):
                    msg.role = "assistant"
                    outputs.append(msg)
            else:
                inputs.append(msg)
        elif name == "gen_ai.content.prompt":  # semconv 1.26/1.27
            inputs.extend(_message_list(a.get("gen_ai.prompt")))
        elif name == "gen_ai.content.completion":
            outputs.extend(_message_list(a.get("gen_ai.completion"), "assistant")[:1])
    return inputs, outputs


# -- OpenInference -------------------------------------------------------------------------


def _oi_messages(a: Mapping[str, Any], prefix: str, default_role: str) -> list[_Message]:
    out = []
    for m in _indexed(a, prefix):
        text = m.get("message.content")
        if text is None:
            parts = [
                p.get("message_content.text")
                for p in _indexed(m, "message.contents.")
                if p.get("message_content.type", "text") == "text"
            ]
            text = "\n".join(str(p) for p in parts if p is not None) or None
        calls = [
            _tool_call(t.get("tool_call.function.name"), t.get("tool_call.function.arguments"))
            for t in _indexed(m, "message.tool_calls.")
        ]
        out.append(_Message(str(m.get("message.role") or default_role), _text(text), calls))
    return out


def _value_text(value: Any, output: bool) -> tuple[list[_Message], str | None]:
    """``input.value`` / ``output.value``: an OpenAI-style JSON body, or plain text."""
    doc = _json(value)
    if isinstance(doc, dict):
        if not output and isinstance(doc.get("messages"), list):
            return _message_list(doc["messages"]), None
        choices = doc.get("choices")
        if output and isinstance(choices, list) and choices and isinstance(choices[0], dict):
            first = choices[0]
            if "text" in first:
                return [_Message("assistant", _text(first["text"]))], None
            msg = _parts_message(first, "assistant")
            return ([msg] if msg else []), None
    return [], _text(value)


def _oi(view: _SpanView) -> tuple[list[_Message], list[_Message], str | None]:
    a = view.attrs
    inputs = _oi_messages(a, "llm.input_messages.", "user")
    outputs = _oi_messages(a, "llm.output_messages.", "assistant")
    if not inputs and isinstance(a.get("llm.prompts"), list):
        inputs = [_Message("user", "\n".join(str(p) for p in a["llm.prompts"]))]
    if not inputs:  # newer OpenInference: llm.prompts.N.prompt.text
        texts = [str(p["prompt.text"]) for p in _indexed(a, "llm.prompts.") if "prompt.text" in p]
        if texts:
            inputs = [_Message("user", "\n".join(texts))]
    if not inputs and "input.value" in a:
        inputs, raw = _value_text(a["input.value"], output=False)
        if raw is not None:
            inputs = [_Message("user", raw)]
    if not outputs and "output.value" in a:
        outputs, raw = _value_text(a["output.value"], output=True)
        if raw is not None:
            outputs = [_Message("assistant", raw)]
    return inputs, outputs, None


# -- classification and retrieval ----------------------------------------------------------


def _classify(a: Mapping[str, Any]) -> tuple[str, str]:
    """(kind, convention) of a span from its attributes."""
    oi_kind = a.get("openinference.span.kind")
    op = a.get("gen_ai.operation.name")
    if not isinstance(oi_kind, str | None) or not isinstance(op, str | None):
        # A span that names its kind with a number or a list: not one to guess at.
        return "invalid", "openinference" if oi_kind is not None else "gen_ai"
    if isinstance(oi_kind, str):
        k = oi_kind.upper()
        return ("llm" if k == "LLM" else "retrieval" if k == "RETRIEVER" else "other"), (
            "openinference"
        )
    if isinstance(op, str):
        return ("llm" if op in LLM_OPERATIONS else "retrieval" if op == "retrieval" else "other"), (
            "gen_ai"
        )
    request_type = a.get("llm.request.type")  # OpenLLMetry before gen_ai.operation.name
    if request_type in ("chat", "completion"):
        return "llm", "gen_ai"
    if ("gen_ai.system" in a or "gen_ai.provider.name" in a) and any(
        k.startswith(("gen_ai.prompt", "gen_ai.completion", "gen_ai.input.", "gen_ai.output."))
        for k in a
    ):
        return "llm", "gen_ai"
    return "other", ""


def _documents(view: _SpanView) -> list[str]:
    a = view.attrs
    if view.convention == "openinference":
        return [
            str(d["document.content"])
            for d in _indexed(a, "retrieval.documents.")
            if d.get("document.content") is not None
        ]
    docs = _json(a.get("gen_ai.retrieval.documents"))
    out = []
    for d in docs if isinstance(docs, list) else ():
        if isinstance(d, dict):
            content = d.get("content", d.get("text"))
            if content is not None:
                out.append(_text(content) or "")
        elif isinstance(d, str):
            out.append(d)
    return out


# -- the mapping ---------------------------------------------------------------------------


def _lookup(
    keys: Sequence[str],
    view: _SpanView,
    by_id: Mapping[bytes, _SpanView],
) -> Any:
    for key in keys:
        scope, _, name = key.rpartition(":")
        if scope in ("", "span") and name in view.attrs:
            return view.attrs[name]
        if scope == "":
            parent = view.parent_id
            for _ in range(_MAX_ANCESTORS):
                up = by_id.get(parent) if parent else None
                if up is None:
                    break
                if name in up.attrs:
                    return up.attrs[name]
                parent = up.parent_id
        if scope in ("", "resource") and name in view.resource:
            return view.resource[name]
    return None


def _str_or_none(value: Any) -> str | None:
    if value is None or value == "":
        return None
    return value if isinstance(value, str) else _text(value)


def _pick_prompt(inputs: Sequence[_Message]) -> tuple[str | None, str | None]:
    """(prompt, system prompt): the last user message, and the system messages."""
    system = "\n".join(m.text for m in inputs if m.role in _SYSTEM_ROLES and m.text) or None
    for m in reversed(inputs):
        if m.role in ("user", "human") and m.text:
            return m.text, system
    for m in reversed(inputs):
        if m.role not in _SYSTEM_ROLES and m.text:
            return m.text, system
    return None, system


class _OtlpAdapter(Adapter):
    def __init__(self, *, max_bytes: int, mapping: OtlpMapping | None = None) -> None:
        super().__init__(max_bytes=max_bytes)
        self.mapping = mapping or OtlpMapping()

    def _events(self, views: list[_SpanView]) -> list[Event]:
        if not views:
            raise DecodeError(DecodeReason.INVALID_OTLP, "the record holds no spans")
        by_id = {v.span_id: v for v in views if v.span_id}
        llm = [v for v in views if v.kind == "llm"]
        contexts = self._contexts(views, llm)
        events = []
        for v in views:
            if v.kind == "other":
                self.skip(SkipReason.NOT_LLM)
            elif v.kind == "retrieval":
                self.skip(SkipReason.RETRIEVAL)
            elif v.kind == "invalid":
                self.skip(SkipReason.INVALID)
        for v in llm:
            try:
                event = self._event(v, by_id, contexts.get(v.order, []))
            except _Invalid:
                raise  # a JSON span event of the wrong shape: the record is a dead letter
            except (ValueError, TypeError, OverflowError, OSError) as exc:
                # A value no convention foresaw must cost this span, never the stream.
                log.debug("span %s: %r", v.span_id.hex(), exc)
                self.skip(SkipReason.INVALID)
                continue
            if event is not None:
                events.append(event)
        return events

    @staticmethod
    def _contexts(views: Sequence[_SpanView], llm: Sequence[_SpanView]) -> dict[int, list[str]]:
        """Documents of each retrieval span go to the first LLM span of the same trace that
        starts when (or after) the retrieval ended."""
        out: dict[int, list[str]] = {}
        retrievals = [v for v in views if v.kind == "retrieval"]
        if not retrievals or not llm:
            return out
        by_trace: dict[bytes, list[tuple[int, int, _SpanView]]] = {}
        for v in llm:
            by_trace.setdefault(v.trace_id, []).append((v.start, v.order, v))
        for group in by_trace.values():
            group.sort(key=lambda t: (t[0], t[1]))
        retrievals.sort(key=lambda v: (v.end or v.start, v.order))
        for r in retrievals:
            calls = by_trace.get(r.trace_id)
            if not calls:
                continue
            done = r.end or r.start
            i = bisect.bisect_left(calls, done, key=lambda t: t[0])
            if i < len(calls):
                out.setdefault(calls[i][2].order, []).extend(_documents(r))
        return out

    def _event(
        self, v: _SpanView, by_id: Mapping[bytes, _SpanView], contexts: list[str]
    ) -> Event | None:
        a = v.attrs
        if not v.trace_id or not v.span_id:  # no id to give the event
            self.skip(SkipReason.INVALID)
            return None
        if v.convention == "openinference":
            inputs, outputs, system = _oi(v)
        else:
            inputs, outputs, system = _genai_messages(v)
        prompt, system_from_messages = _pick_prompt(inputs)
        first = outputs[0] if outputs else None
        response = first.text if first is not None else None
        if prompt is None and response is None:
            self.skip(SkipReason.NO_TEXT)
            return None
        m = self.mapping
        ts_ns = v.end or v.start
        trace_id, span_id = v.trace_id.hex(), v.span_id.hex()
        doc: dict[str, Any] = {
            "id": f"{trace_id}-{span_id}",
            "ts": _datetime(ts_ns) if ts_ns else None,
            "prompt": prompt,
            "response": response,
            "system_prompt": system or system_from_messages,
            "contexts": contexts,
            "model": _str_or_none(_lookup(m.model, v, by_id)),
            "route": _str_or_none(_lookup(m.route, v, by_id)),
            "tenant": _str_or_none(_lookup(m.tenant, v, by_id)),
            "trace_id": trace_id,
            "span_id": span_id,
            "convention": v.convention,
            "span_name": v.name,
        }
        task = _lookup(("llm_sidecar.task",), v, by_id)
        op = a.get("gen_ai.operation.name")
        doc["task"] = _str_or_none(task) or (
            "rag" if contexts else "completion" if op == "text_completion" else "chat"
        )
        provider = a.get("gen_ai.provider.name", a.get("gen_ai.system", a.get("llm.provider")))
        if provider is not None:
            doc["provider"] = _str_or_none(provider)
        if first is not None and first.tool_calls:
            doc["tool_calls"] = first.tool_calls
        if a.get("gen_ai.request.stream") is True or a.get("llm.is_streaming") is True:
            doc["streaming"] = True
        usage = _usage(a)
        if usage:
            doc["usage"] = usage
        if v.status_code == 2:  # STATUS_CODE_ERROR
            doc["error"] = v.status_message or a.get("error.type") or "error"
        category = _lookup(("llm_sidecar.attack.category",), v, by_id)
        if category is not None:
            doc["attack"] = {
                "category": category,
                "technique": _lookup(("llm_sidecar.attack.technique",), v, by_id),
            }
        truths = _lookup(("llm_sidecar.ground_truths",), v, by_id)
        if isinstance(truths, list):
            doc["ground_truths"] = [str(t) for t in truths]
        try:
            return validate(doc)
        except ValidationError:
            self.skip(SkipReason.INVALID)
            return None


def _datetime(ns: int) -> datetime | None:
    """Nanoseconds since the epoch, exact to the microsecond (no float rounding); None when
    out of the range of a datetime."""
    try:
        return datetime.fromtimestamp(ns // 1_000_000_000, UTC).replace(
            microsecond=ns % 1_000_000_000 // 1000
        )
    except (OverflowError, ValueError, OSError):
        return None


def _usage(a: Mapping[str, Any]) -> dict[str, int]:
    out = {}
    for name, keys in (
        (
            "input_tokens",
            ("gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens", "llm.token_count.prompt"),
        ),
        (
            "output_tokens",
            (
                "gen_ai.usage.output_tokens",
                "gen_ai.usage.completion_tokens",
                "llm.token_count.completion",
            ),
        ),
    ):
        for key in keys:
            value = a.get(key)
            if isinstance(value, int) and not isinstance(value, bool):
                out[name] = value
                break
    return out


def _proto_events(events: Any) -> SpanEvents:
    return [(ev.name, _attrs(ev.attributes)) for ev in events]


class OtlpProtoAdapter(_OtlpAdapter):
    """A protobuf ``ExportTraceServiceRequest`` per record (the Collector's ``otlp_proto``),
    parsed by the official ``opentelemetry-proto`` messages."""

    format = "otlp-proto"

    def decode(self, raw: bytes) -> list[Event]:
        if len(raw) > self.max_bytes:
            raise DecodeError(DecodeReason.TOO_LARGE, f"{len(raw)} bytes, limit {self.max_bytes}")
        request = ExportTraceServiceRequest()
        try:
            request.ParseFromString(raw)
        except (ProtoDecodeError, RuntimeError) as exc:  # RuntimeError: nesting too deep
            raise DecodeError(
                DecodeReason.INVALID_OTLP, f"not a protobuf ExportTraceServiceRequest: {exc}"
            ) from None
        views: list[_SpanView] = []
        for rs in request.resource_spans:
            resource = _attrs(rs.resource.attributes)
            for ss in rs.scope_spans:
                for span in ss.spans:
                    a = _attrs(span.attributes)
                    kind, convention = _classify(a)
                    views.append(
                        _SpanView(
                            span.trace_id,
                            span.span_id,
                            span.parent_span_id,
                            span.name,
                            span.start_time_unix_nano,
                            span.end_time_unix_nano,
                            span.status.code,
                            span.status.message,
                            a,
                            resource,
                            len(views),
                            kind,
                            convention,
                            span.events,
                            _proto_events,
                        )
                    )
        return self._events(views)


# -- OTLP/JSON -----------------------------------------------------------------------------
# Read directly by the OTLP/JSON mapping rather than through protobuf's json_format.ParseDict,
# which cost about 6x the whole rest of the decode (bench/throughput.py); tests check both
# readers agree. Types are checked for every field read; anything off is ``invalid_otlp``.

_STATUS_CODES = {"STATUS_CODE_UNSET": 0, "STATUS_CODE_OK": 1, "STATUS_CODE_ERROR": 2}


class _Invalid(ValueError):
    pass


def _j_list(doc: Any, key: str) -> list[Any]:
    value = doc.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise _Invalid(f"{key} is not a list")
    return value


def _j_obj(value: Any, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _Invalid(f"{what} is not an object")
    return value


def _j_int(value: Any, what: str) -> int:
    if value is None:
        return 0
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            pass
    raise _Invalid(f"{what} is not an integer")


def _j_str(value: Any, what: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise _Invalid(f"{what} is not a string")
    return value


def _j_id(value: Any, what: str) -> bytes:
    if not value:
        return b""
    if not isinstance(value, str):
        raise _Invalid(f"{what} is not a hex string")
    try:
        return bytes.fromhex(value)
    except ValueError:
        raise _Invalid(f"{what} is not hex: {value[:40]!r}") from None


def _j_any(v: Any) -> Any:
    if not isinstance(v, dict):
        raise _Invalid("an attribute value is not an object")
    if "stringValue" in v:
        return _j_str(v["stringValue"], "stringValue")
    if "intValue" in v:
        return _j_int(v["intValue"], "intValue")
    if "boolValue" in v:
        if not isinstance(v["boolValue"], bool):
            raise _Invalid("boolValue is not a boolean")
        return v["boolValue"]
    if "doubleValue" in v:
        d = v["doubleValue"]
        if isinstance(d, bool) or not isinstance(d, int | float | str):
            raise _Invalid("doubleValue is not a number")
        try:
            return float(d)  # proto3 JSON writes NaN and infinities as strings
        except ValueError:
            raise _Invalid(f"doubleValue is not a number: {str(d)[:40]!r}") from None
    if "arrayValue" in v:
        return [_j_any(x) for x in _j_list(_j_obj(v["arrayValue"], "arrayValue"), "values")]
    if "kvlistValue" in v:
        return _j_attrs(_j_list(_j_obj(v["kvlistValue"], "kvlistValue"), "values"))
    if "bytesValue" in v:
        try:
            return base64.b64decode(_j_str(v["bytesValue"], "bytesValue"), validate=True).hex()
        except ValueError:
            raise _Invalid("bytesValue is not base64") from None
    return None


def _j_attrs(kvs: list[Any]) -> dict[str, Any]:
    out = {}
    for kv in kvs:
        kv = _j_obj(kv, "an attribute")
        out[_j_str(kv.get("key"), "key")] = _j_any(kv.get("value", {}))
    return out


def _json_events(events: Any) -> SpanEvents:
    out = []
    for ev in events:
        ev = _j_obj(ev, "a span event")
        out.append((_j_str(ev.get("name"), "event name"), _j_attrs(_j_list(ev, "attributes"))))
    return out


def _j_status(span: dict[str, Any]) -> tuple[int, str]:
    status = span.get("status")
    if status is None:
        return 0, ""
    status = _j_obj(status, "status")
    code = status.get("code", 0)
    if isinstance(code, str) and code in _STATUS_CODES:
        code = _STATUS_CODES[code]
    return _j_int(code, "status code"), _j_str(status.get("message"), "status message")


class OtlpJsonAdapter(_OtlpAdapter):
    """OTLP/JSON per record (the Collector's ``otlp_json``): hex ids, lowerCamelCase keys,
    64-bit integers as strings or numbers, enums as integers (or their names)."""

    format = "otlp-json"

    def decode(self, raw: bytes) -> list[Event]:
        if len(raw) > self.max_bytes:
            raise DecodeError(DecodeReason.TOO_LARGE, f"{len(raw)} bytes, limit {self.max_bytes}")
        try:
            doc = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError as ude:
                raise DecodeError(
                    DecodeReason.INVALID_UTF8, f"invalid UTF-8 at byte {ude.start}"
                ) from None
            raise DecodeError(DecodeReason.INVALID_JSON, str(exc)) from None
        if not isinstance(doc, dict):
            raise DecodeError(DecodeReason.NOT_AN_OBJECT, "the record is JSON but not an object")
        try:
            # Span events are read late (LLM spans only), so the mapping is inside the try.
            return self._events(self._views(doc))
        except _Invalid as exc:
            raise DecodeError(DecodeReason.INVALID_OTLP, f"not OTLP/JSON traces: {exc}") from None
        except RecursionError:
            raise DecodeError(
                DecodeReason.INVALID_OTLP, "attribute values nested too deep"
            ) from None

    @staticmethod
    def _views(doc: dict[str, Any]) -> list[_SpanView]:
        views: list[_SpanView] = []
        for rs in _j_list(doc, "resourceSpans"):
            rs = _j_obj(rs, "resourceSpans[]")
            res = _j_obj(rs.get("resource") or {}, "resource")
            resource = _j_attrs(_j_list(res, "attributes"))
            for ss in _j_list(rs, "scopeSpans"):
                for span in _j_list(_j_obj(ss, "scopeSpans[]"), "spans"):
                    span = _j_obj(span, "a span")
                    a = _j_attrs(_j_list(span, "attributes"))
                    kind, convention = _classify(a)
                    code, message = _j_status(span)
                    views.append(
                        _SpanView(
                            _j_id(span.get("traceId"), "traceId"),
                            _j_id(span.get("spanId"), "spanId"),
                            _j_id(span.get("parentSpanId"), "parentSpanId"),
                            _j_str(span.get("name"), "name"),
                            _j_int(span.get("startTimeUnixNano"), "startTimeUnixNano"),
                            _j_int(span.get("endTimeUnixNano"), "endTimeUnixNano"),
                            code,
                            message,
                            a,
                            resource,
                            len(views),
                            kind,
                            convention,
                            _j_list(span, "events"),
                            _json_events,
                        )
                    )
        return views
