"""OTLP records (built with the real SDK) mapped to events: both conventions, both encodings."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import orjson
import pytest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.trace import SpanKind

from sidecar.errors import ConfigError, DecodeError, DecodeReason
from sidecar.events import Event, as_dict
from sidecar.formats import Decoder, InputSettings, OtlpMapping, make_adapter, topic_matches
from sidecar.formats.base import Adapter
from sidecar.sources.base import Record
from tests.formats.otel import Spans, collector_json, event_id

FORMATS = ["otlp-proto", "otlp-json"]


def run(spans: Spans, fmt: str, **kw: Any) -> tuple[list[Event], dict[str, int]]:
    adapter = make_adapter(fmt, max_bytes=kw.pop("max_bytes", 4_194_304), **kw)
    raw = spans.proto() if fmt == "otlp-proto" else spans.json()
    events = adapter.decode(raw)
    return events, {k.value: v for k, v in adapter.skipped.items()}


def msgs(*pairs: tuple[str, str]) -> str:
    return json.dumps([{"role": r, "parts": [{"type": "text", "content": c}]} for r, c in pairs])


@pytest.fixture(params=FORMATS)
def fmt(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def test_genai_chat_with_message_attributes(fmt: str) -> None:
    s = Spans(**{"service.name": "support-bot", "tenant.id": "acme"})
    with (
        s.span("POST /v1/chat", {"http.route": "/v1/chat"}, end_ms=500, kind=SpanKind.SERVER),
        s.span(
            "chat gpt-4o",
            {
                "gen_ai.operation.name": "chat",
                "gen_ai.provider.name": "openai",
                "gen_ai.request.model": "gpt-4o",
                "gen_ai.response.model": "gpt-4o-2024-08-06",
                "gen_ai.usage.input_tokens": 31,
                "gen_ai.usage.output_tokens": 12,
                "gen_ai.system_instructions": json.dumps(
                    [{"type": "text", "content": "You are a support agent."}]
                ),
                "gen_ai.input.messages": msgs(
                    ("user", "Hi"), ("assistant", "Hello!"), ("user", "Where is my order?")
                ),
                "gen_ai.output.messages": json.dumps(
                    [
                        {
                            "role": "assistant",
                            "parts": [{"type": "text", "content": "It ships tomorrow."}],
                            "finish_reason": "stop",
                        }
                    ]
                ),
            },
            start_ms=10,
            end_ms=400,
            kind=SpanKind.CLIENT,
        ) as llm,
    ):
        pass
    events, skipped = run(s, fmt)
    assert skipped == {"not_llm": 1}
    (e,) = events
    assert e.id == event_id(llm)
    assert e.prompt == "Where is my order?"
    assert e.response == "It ships tomorrow."
    assert e.system_prompt == "You are a support agent."
    assert e.model == "gpt-4o-2024-08-06"
    assert e.route == "/v1/chat"  # from the server span around the call
    assert e.tenant == "acme"  # from the resource
    assert e.task == "chat"
    assert e.ts is not None and e.ts.timestamp() == pytest.approx(1_790_000_000.4)
    extra = e.extra
    assert extra["usage"] == {"input_tokens": 31, "output_tokens": 12}
    assert extra["provider"] == "openai"
    assert extra["convention"] == "gen_ai"


def test_genai_older_span_event_forms(fmt: str) -> None:
    s = Spans()
    with s.span("chat", {"gen_ai.operation.name": "chat", "gen_ai.system": "az.ai.inference"}) as a:
        a.add_event("gen_ai.system.message", {"gen_ai.event.content": '{"content": "Be brief."}'})
        a.add_event(
            "gen_ai.user.message", {"gen_ai.event.content": '{"role": "user", "content": "2+2?"}'}
        )
        a.add_event(
            "gen_ai.choice",
            {
                "gen_ai.event.content": json.dumps(
                    {"index": 0, "finish_reason": "stop", "message": {"content": "4"}}
                )
            },
        )
        a.add_event(
            "gen_ai.choice",
            {"gen_ai.event.content": json.dumps({"index": 1, "message": {"content": "four"}})},
        )
    with s.span("chat", {"gen_ai.operation.name": "chat"}) as b:  # semconv 1.26/1.27
        b.add_event(
            "gen_ai.content.prompt", {"gen_ai.prompt": msgs(("user", "Capital of France?"))}
        )
        b.add_event("gen_ai.content.completion", {"gen_ai.completion": "Paris."})
    with s.span("chat", {"gen_ai.operation.name": "chat"}) as c:  # body fields as attributes
        c.add_event("gen_ai.user.message", {"content": "ping"})
        c.add_event("gen_ai.choice", {"message.content": "ignored", "index": 0})
    events, _ = run(s, fmt)
    by_id = {e.id: e for e in events}
    ea, eb, ec = by_id[event_id(a)], by_id[event_id(b)], by_id[event_id(c)]
    assert (ea.prompt, ea.response, ea.system_prompt) == ("2+2?", "4", "Be brief.")
    assert (eb.prompt, eb.response) == ("Capital of France?", "Paris.")
    assert ec.prompt == "ping"


def test_openllmetry_indexed_attributes_and_tool_calls(fmt: str) -> None:
    s = Spans()
    with s.span(
        "openai.chat",
        {
            "llm.request.type": "chat",
            "gen_ai.system": "openai",
            "gen_ai.request.model": "gpt-4o-mini",
            "gen_ai.prompt.0.role": "system",
            "gen_ai.prompt.0.content": "You book flights.",
            "gen_ai.prompt.1.role": "user",
            "gen_ai.prompt.1.content": "Book me to Oslo",
            "gen_ai.completion.0.role": "assistant",
            "gen_ai.completion.0.finish_reason": "tool_calls",
            "gen_ai.completion.0.tool_calls.0.name": "book_flight",
            "gen_ai.completion.0.tool_calls.0.arguments": '{"to": "OSL"}',
            "gen_ai.usage.prompt_tokens": 20,
        },
    ) as span:
        pass
    (e,), _ = run(s, fmt)
    assert e.id == event_id(span)
    assert e.prompt == "Book me to Oslo"
    assert e.system_prompt == "You book flights."
    assert e.response is None  # a tool call, no text
    assert e.model == "gpt-4o-mini"
    extra = e.extra
    assert extra["tool_calls"] == ['book_flight({"to": "OSL"})']
    assert extra["usage"] == {"input_tokens": 20}


def test_genai_tool_call_parts_and_tool_results(fmt: str) -> None:
    s = Spans()
    inputs = [
        {"role": "user", "parts": [{"type": "text", "content": "Weather in Paris?"}]},
        {
            "role": "assistant",
            "parts": [{"type": "tool_call", "id": "c1", "name": "weather", "arguments": {}}],
        },
        {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1", "result": "rain"}]},
    ]
    outputs = [
        {
            "role": "assistant",
            "parts": [
                {"type": "text", "content": "It rains."},
                {"type": "tool_call", "name": "notify", "arguments": {"to": "me"}},
            ],
        }
    ]
    with s.span(
        "chat",
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.input.messages": json.dumps(inputs),
            "gen_ai.output.messages": json.dumps(outputs),
        },
    ):
        pass
    (e,), _ = run(s, fmt)
    assert e.prompt == "Weather in Paris?"
    assert e.response == "It rains."
    assert (e.extra)["tool_calls"] == ['notify({"to":"me"})']


def test_openinference_chat_messages_and_values(fmt: str) -> None:
    s = Spans(**{"service.name": "rag-api"})
    with s.span(
        "ChatCompletion",
        {
            "openinference.span.kind": "LLM",
            "llm.model_name": "claude-3-5-sonnet",
            "llm.provider": "anthropic",
            "llm.input_messages.0.message.role": "system",
            "llm.input_messages.0.message.content": "Answer in French.",
            "llm.input_messages.1.message.role": "user",
            "llm.input_messages.1.message.contents.0.message_content.type": "text",
            "llm.input_messages.1.message.contents.0.message_content.text": "Hello?",
            "llm.output_messages.0.message.role": "assistant",
            "llm.output_messages.0.message.content": "Bonjour !",
            "llm.token_count.prompt": 9,
            "llm.token_count.completion": 3,
        },
    ) as a:
        pass
    with s.span(
        "Completion",
        {
            "openinference.span.kind": "LLM",
            "input.value": json.dumps({"messages": [{"role": "user", "content": "From JSON?"}]}),
            "input.mime_type": "application/json",
            "output.value": json.dumps({"choices": [{"message": {"content": "Yes."}}]}),
        },
    ) as b:
        pass
    with s.span(
        "llm",
        {"openinference.span.kind": "LLM", "input.value": "plain in", "output.value": "plain out"},
    ) as c:
        pass
    with s.span("chain", {"openinference.span.kind": "CHAIN", "input.value": "x"}):
        pass
    events, skipped = run(s, fmt)
    assert skipped == {"not_llm": 1}
    by_id = {e.id: e for e in events}
    ea = by_id[event_id(a)]
    assert (ea.prompt, ea.response, ea.system_prompt) == (
        "Hello?",
        "Bonjour !",
        "Answer in French.",
    )
    assert ea.model == "claude-3-5-sonnet"
    assert ea.route == "rag-api"  # no http.route anywhere: the service name
    assert (ea.extra)["usage"] == {"input_tokens": 9, "output_tokens": 3}
    assert (ea.extra)["convention"] == "openinference"
    eb = by_id[event_id(b)]
    assert (eb.prompt, eb.response) == ("From JSON?", "Yes.")
    ec = by_id[event_id(c)]
    assert (ec.prompt, ec.response) == ("plain in", "plain out")


def test_retrieval_spans_become_contexts_of_the_llm_span_after_them(fmt: str) -> None:
    s = Spans()
    with s.span("rag", end_ms=1000) as root:
        with s.span(
            "retrieve",
            {
                "openinference.span.kind": "RETRIEVER",
                "retrieval.documents.0.document.content": "Oslo is the capital of Norway.",
                "retrieval.documents.1.document.content": "Norway has fjords.",
            },
            start_ms=10,
            end_ms=50,
        ):
            pass
        with s.span(
            "search",
            {
                "gen_ai.operation.name": "retrieval",
                "gen_ai.retrieval.documents": json.dumps(
                    [{"id": "d9", "score": 0.8, "content": "Oslo has 700k people."}]
                ),
            },
            start_ms=20,
            end_ms=60,
        ):
            pass
        with s.span(
            "answer",
            {
                "openinference.span.kind": "LLM",
                "input.value": "What is the capital of Norway?",
                "output.value": "Oslo.",
            },
            start_ms=70,
            end_ms=400,
        ) as answer:
            pass
        with s.span(
            "follow-up",
            {"gen_ai.operation.name": "chat", "gen_ai.input.messages": msgs(("user", "More?"))},
            start_ms=500,
            end_ms=600,
        ) as follow:
            pass
        with s.span(  # after every LLM span: no one to give its documents to
            "late",
            {
                "openinference.span.kind": "RETRIEVER",
                "retrieval.documents.0.document.content": "unused",
            },
            start_ms=700,
            end_ms=710,
        ):
            pass
    other = Spans()  # another trace in the same record gets nothing
    with other.span(
        "chat",
        {"gen_ai.operation.name": "chat", "gen_ai.input.messages": msgs(("user", "hi"))},
        start_ms=80,
    ) as unrelated:
        pass
    request = s.request()
    request.resource_spans.extend(other.request().resource_spans)
    adapter = make_adapter(fmt, max_bytes=1 << 20)
    raw = request.SerializeToString() if fmt == "otlp-proto" else collector_json(request)
    events = {e.id: e for e in adapter.decode(raw)}
    assert events[event_id(answer)].contexts == [
        "Oslo is the capital of Norway.",
        "Norway has fjords.",
        "Oslo has 700k people.",
    ]
    assert events[event_id(answer)].task == "rag"
    assert events[event_id(follow)].contexts == []
    assert events[event_id(unrelated)].contexts == []
    assert {k.value: v for k, v in adapter.skipped.items()} == {"retrieval": 3, "not_llm": 1}
    assert root.get_span_context().trace_id != unrelated.get_span_context().trace_id


def test_streaming_spans_keep_the_assembled_response(fmt: str) -> None:
    s = Spans()
    with s.span(
        "chat",
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.request.stream": True,
            "gen_ai.response.time_to_first_chunk": 0.21,
            "gen_ai.input.messages": msgs(("user", "Tell me a story")),
            "gen_ai.output.messages": msgs(("assistant", "Once upon a time.")),
        },
    ) as span:
        for i in range(50):
            span.add_event("gen_ai.content.chunk", {"index": i})
    with s.span(
        "openai.chat",
        {
            "llm.request.type": "chat",
            "llm.is_streaming": True,
            "gen_ai.prompt.0.role": "user",
            "gen_ai.prompt.0.content": "Stream please",
            "gen_ai.completion.0.content": "Streamed.",
        },
    ):
        pass
    events, _ = run(s, fmt)
    assert [(e.prompt, e.response) for e in events] == [
        ("Tell me a story", "Once upon a time."),
        ("Stream please", "Streamed."),
    ]
    assert all((e.extra).get("streaming") is True for e in events)


def test_huge_attribute_values_pass_whole_and_the_record_limit_holds(fmt: str) -> None:
    s = Spans()
    big = "lorem ipsum " * 40_000  # 480 KB
    with s.span(
        "chat",
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.input.messages": msgs(("user", big)),
            "gen_ai.output.messages": msgs(("assistant", "ok")),
        },
    ):
        pass
    request = s.request()
    raw = request.SerializeToString() if fmt == "otlp-proto" else collector_json(request)
    (e,) = make_adapter(fmt, max_bytes=1 << 20).decode(raw)
    assert e.prompt == big
    with pytest.raises(DecodeError) as err:
        make_adapter(fmt, max_bytes=100_000).decode(raw)
    assert err.value.reason is DecodeReason.TOO_LARGE


def test_missing_attributes(fmt: str) -> None:
    s = Spans()
    with s.span("chat", {"gen_ai.operation.name": "chat"}):  # content capture off
        pass
    with s.span(
        "chat",
        {"gen_ai.operation.name": "chat", "gen_ai.output.messages": msgs(("assistant", "x"))},
    ) as bare:
        pass
    with s.span("embeddings", {"gen_ai.operation.name": "embeddings"}):
        pass
    with s.span("execute_tool", {"gen_ai.operation.name": "execute_tool"}):
        pass
    with s.span("GET /health", {"http.route": "/health"}):
        pass
    events, skipped = run(s, fmt)
    (e,) = events
    assert e.id == event_id(bare)
    assert (e.prompt, e.response, e.model, e.tenant) == (None, "x", None, None)
    assert e.route is not None and e.route.startswith("unknown_service")  # the SDK default
    assert skipped == {"no_text": 1, "not_llm": 3}


def test_attributes_of_unforeseen_types_make_the_span_invalid_not_empty(fmt: str) -> None:
    """Messages given as a number were counted as a span with content capture off
    (``no_text``), and an operation name given as a number as a span of something else
    (``not_llm``): both hid a broken instrumentation behind a normal-looking count."""
    s = Spans()
    with s.span("chat", {"gen_ai.operation.name": "chat", "gen_ai.input.messages": 7}):
        pass
    with s.span("chat", {"gen_ai.operation.name": 3, "gen_ai.output.messages": "x"}):
        pass
    with s.span("llm", {"openinference.span.kind": 1.5, "output.value": "x"}):
        pass
    with s.span(
        "chat",
        {"gen_ai.operation.name": "chat", "gen_ai.output.messages": msgs(("assistant", "ok"))},
    ):
        pass
    events, skipped = run(s, fmt)
    assert [e.response for e in events] == ["ok"]
    assert skipped == {"invalid": 3}


def test_route_tenant_and_model_from_configured_attributes(fmt: str) -> None:
    s = Spans(**{"service.name": "svc", "deployment.environment": "prod"})
    with (
        s.span("req", {"app.tenant": "globex", "http.route": "/outer"}),
        s.span(
            "chat",
            {
                "gen_ai.operation.name": "chat",
                "gen_ai.request.model": "m-requested",
                "gen_ai.input.messages": msgs(("user", "q")),
                "http.route": "/inner",
            },
        ),
    ):
        pass
    mapping = OtlpMapping(
        route=["resource:deployment.environment"],
        tenant=["span:app.tenant", "app.tenant"],
        model=["gen_ai.response.model", "gen_ai.request.model"],
    )
    (e,), _ = run(s, fmt, mapping=mapping)
    assert (e.route, e.tenant, e.model) == ("prod", "globex", "m-requested")
    with pytest.raises(ValueError, match="attribute key"):
        OtlpMapping(route=["attr:x"])


def test_structured_attribute_values_are_read() -> None:
    s = Spans()
    with s.span("chat", {"gen_ai.operation.name": "chat"}):
        pass
    request = s.request()
    span = request.resource_spans[0].scope_spans[0].spans[0]
    message = AnyValue()
    message.kvlist_value.values.extend(
        [
            KeyValue(key="role", value=AnyValue(string_value="user")),
            KeyValue(key="parts", value=AnyValue()),
        ]
    )
    part = AnyValue()
    part.kvlist_value.values.extend(
        [
            KeyValue(key="type", value=AnyValue(string_value="text")),
            KeyValue(key="content", value=AnyValue(string_value="structured!")),
        ]
    )
    message.kvlist_value.values[1].value.array_value.values.append(part)
    value = AnyValue()
    value.array_value.values.append(message)
    span.attributes.append(KeyValue(key="gen_ai.input.messages", value=value))
    for fmt in FORMATS:
        raw = request.SerializeToString() if fmt == "otlp-proto" else collector_json(request)
        (e,) = make_adapter(fmt, max_bytes=1 << 20).decode(raw)
        assert e.prompt == "structured!"


def test_collector_shaped_json_written_by_hand() -> None:
    """OTLP/JSON as the spec writes it: hex ids, camelCase, intValue as a string, kind as int."""
    doc = {
        "resourceSpans": [
            {
                "resource": {
                    "attributes": [{"key": "service.name", "value": {"stringValue": "chatbot"}}]
                },
                "scopeSpans": [
                    {
                        "scope": {"name": "openinference.instrumentation.openai"},
                        "spans": [
                            {
                                "traceId": "5B8EFFF798038103D269B633813FC60C",
                                "spanId": "EEE19B7EC3C1B174",
                                "parentSpanId": "EEE19B7EC3C1B173",
                                "name": "ChatCompletion",
                                "kind": 3,
                                "startTimeUnixNano": "1544712660000000000",
                                "endTimeUnixNano": "1544712661000000000",
                                "attributes": [
                                    {
                                        "key": "openinference.span.kind",
                                        "value": {"stringValue": "LLM"},
                                    },
                                    {"key": "input.value", "value": {"stringValue": "hi"}},
                                    {"key": "output.value", "value": {"stringValue": "hello"}},
                                    {"key": "llm.token_count.prompt", "value": {"intValue": "3"}},
                                    {"key": "unknownField", "value": {"boolValue": True}},
                                ],
                                "status": {"code": 2, "message": "rate limited"},
                                "someFutureField": 1,
                            }
                        ],
                    }
                ],
            }
        ]
    }
    (e,) = make_adapter("otlp-json", max_bytes=1 << 20).decode(orjson.dumps(doc))
    assert e.id == "5b8efff798038103d269b633813fc60c-eee19b7ec3c1b174"
    assert (e.prompt, e.response, e.route) == ("hi", "hello", "chatbot")
    assert (e.extra)["usage"] == {"input_tokens": 3}
    assert (e.extra)["error"] == "rate limited"


@pytest.mark.parametrize(
    ("fmt", "raw", "reason"),
    [
        ("otlp-proto", b"\xff\xff\xff\xff garbage", DecodeReason.INVALID_OTLP),
        ("otlp-proto", b"", DecodeReason.INVALID_OTLP),  # no spans
        ("otlp-proto", b'{"resourceSpans": []}', DecodeReason.INVALID_OTLP),
        ("otlp-json", b"not json", DecodeReason.INVALID_JSON),
        ("otlp-json", b'{"a": "\xff"}', DecodeReason.INVALID_UTF8),
        ("otlp-json", b"[1]", DecodeReason.NOT_AN_OBJECT),
        ("otlp-json", b'{"resourceSpans": []}', DecodeReason.INVALID_OTLP),
        ("otlp-json", b'{"resourceSpans": "x"}', DecodeReason.INVALID_OTLP),
        (
            "otlp-json",
            b'{"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "zz", "spanId": "01"}]}]}]}',
            DecodeReason.INVALID_OTLP,
        ),
        (
            "otlp-json",
            b'{"resourceSpans": [{"scopeSpans": [{"spans": [{"name": 5, "kind": "nope"}]}]}]}',
            DecodeReason.INVALID_OTLP,
        ),
    ],
)
def test_records_that_do_not_decode(fmt: str, raw: bytes, reason: DecodeReason) -> None:
    with pytest.raises(DecodeError) as err:
        make_adapter(fmt, max_bytes=1 << 20).decode(raw)
    assert err.value.reason is reason


def test_decoder_picks_the_format_by_topic() -> None:
    cfg = InputSettings(
        format="llm-sidecar-v1",
        topics={"otlp_spans": "otlp-proto", "llm/otlp/#": "otlp-json", "a/+/b": "otlp-json"},
    )
    d = Decoder(cfg, max_bytes=1 << 20)
    assert d.adapter_for("otlp_spans").format == "otlp-proto"
    assert d.adapter_for("llm/otlp/x/y").format == "otlp-json"
    assert d.adapter_for("a/1/b").format == "otlp-json"
    assert d.adapter_for("a/1/c").format == "llm-sidecar-v1"
    assert d.adapter_for("events").format == "llm-sidecar-v1"
    assert topic_matches("#", "anything/at/all")
    assert not topic_matches("a/+", "a/b/c")
    native = d(Record(value=b'{"id": "n1", "prompt": "p"}', topic="events", partition=0, offset=0))
    assert [e.id for e in native] == ["n1"]
    assert d.take_skipped() == {}


def test_unknown_format_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="unknown input format"):
        make_adapter("avro", max_bytes=10)


def test_skip_reasons_are_a_fixed_set() -> None:
    from sidecar.formats.base import SkipReason

    assert {r.value for r in SkipReason} == {"not_llm", "retrieval", "no_text", "invalid"}
    assert issubclass(type(make_adapter("otlp-proto", max_bytes=10)), Adapter)


def reference_parse(raw: bytes) -> bytes:
    """OTLP/JSON through protobuf's own JSON parser (hex ids turned to base64 first): the
    reference the direct JSON reader is held to."""
    import base64

    from google.protobuf import json_format
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    doc = orjson.loads(raw)
    for rs in doc.get("resourceSpans", []):
        for ss in rs.get("scopeSpans", []):
            for span in ss.get("spans", []):
                for key in ("traceId", "spanId", "parentSpanId"):
                    if span.get(key):
                        span[key] = base64.b64encode(bytes.fromhex(span[key])).decode()
    request = ExportTraceServiceRequest()
    json_format.ParseDict(doc, request, ignore_unknown_fields=True)
    return request.SerializeToString()


def test_the_json_reader_agrees_with_protobufs_json_parser() -> None:
    from sidecar.formats.encode import encode_request, events_to_requests
    from tests.formats.test_replay_formats import sample_events

    records = [encode_request(r, "otlp-json") for r in events_to_requests(sample_events())]
    s = Spans(**{"service.name": "x", "ratio": 0.5, "flags": [1, 2], "on": True})
    with s.span("chat", {"gen_ai.operation.name": "chat", "n": 3}) as span:
        span.add_event("gen_ai.user.message", {"content": "hi", "k": 1.5})
        span.add_event("gen_ai.choice", {"gen_ai.event.content": '{"message": {"content": "yo"}}'})
        span.set_status(trace_status_error())
    records.append(s.json())
    direct = make_adapter("otlp-json", max_bytes=1 << 22)
    reference = make_adapter("otlp-proto", max_bytes=1 << 22)
    for raw in records:
        mine = [as_dict(e) for e in direct.decode(raw)]
        theirs = [as_dict(e) for e in reference.decode(reference_parse(raw))]
        assert mine == theirs
    assert mine[-1]["error"] == "boom" and mine[-1]["response"] == "yo"


def trace_status_error() -> Any:
    from opentelemetry.trace import Status, StatusCode

    return Status(StatusCode.ERROR, "boom")


@pytest.mark.parametrize(
    "span",
    [
        {"traceId": "ab", "spanId": "cd", "attributes": [{"key": "a", "value": {"intValue": "x"}}]},
        # float("abc") raised ValueError past the reader: run stopped on it at every restart.
        {
            "traceId": "ab",
            "spanId": "cd",
            "attributes": [{"key": "a", "value": {"doubleValue": "abc"}}],
        },
        {"traceId": "ab", "spanId": "cd", "attributes": [{"key": "a", "value": "plain"}]},
        {"traceId": "ab", "spanId": "cd", "startTimeUnixNano": 1.5},
        {"traceId": "ab", "spanId": "cd", "status": {"code": "SOMETIMES"}},
        {
            "traceId": "ab",
            "spanId": "cd",
            "attributes": [{"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}}],
            "events": [{"name": "gen_ai.user.message", "attributes": "nope"}],
        },
    ],
)
def test_json_spans_with_wrong_types_are_invalid_otlp(span: dict[str, Any]) -> None:
    doc = {"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}
    with pytest.raises(DecodeError) as err:
        make_adapter("otlp-json", max_bytes=1 << 20).decode(orjson.dumps(doc))
    assert err.value.reason is DecodeReason.INVALID_OTLP


def test_a_reader_fault_on_one_record_is_that_records_dead_letter() -> None:
    """Whatever an adapter raises on some input is a dead letter of that record, never an
    exception out of the decoder: the uncommitted record would stop every restart again."""
    d = Decoder(InputSettings(format="otlp-json"), max_bytes=1 << 20)
    adapter = d.adapter_for("t")

    def broken(raw: bytes) -> list[Any]:
        raise KeyError("a case the reader did not foresee")

    adapter.decode = broken  # type: ignore[method-assign]
    with pytest.raises(DecodeError) as err:
        d(Record(value=b"{}", topic="t", partition=0, offset=7))
    assert err.value.reason is DecodeReason.INVALID_OTLP
    assert err.value.message == (
        "the otlp-json reader failed on it: KeyError: 'a case the reader did not foresee'"
    )
    # NaN and the infinities are numbers in proto3 JSON, written as strings.
    span = {"traceId": "ab", "spanId": "cd", "attributes": [
        {"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
        {"key": "x", "value": {"doubleValue": "NaN"}},
    ]}  # fmt: skip
    raw = orjson.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]})
    from sidecar.formats.base import SkipReason

    reader = make_adapter("otlp-json", max_bytes=1 << 20)
    assert reader.decode(raw) == []  # read, and skipped for want of text, not invalid
    assert dict(reader.skipped) == {SkipReason.NO_TEXT: 1}


def test_json_status_code_by_name() -> None:
    doc = {
        "resourceSpans": [
            {
                "scopeSpans": [
                    {
                        "spans": [
                            {
                                "traceId": "0af7651916cd43dd8448eb211c80319c",
                                "spanId": "b7ad6b7169203331",
                                "attributes": [
                                    {
                                        "key": "openinference.span.kind",
                                        "value": {"stringValue": "LLM"},
                                    },
                                    {"key": "output.value", "value": {"stringValue": "partial"}},
                                ],
                                "status": {"code": "STATUS_CODE_ERROR"},
                            }
                        ]
                    }
                ]
            }
        ]
    }
    (e,) = make_adapter("otlp-json", max_bytes=1 << 20).decode(orjson.dumps(doc))
    assert (e.extra)["error"] == "error"
    assert e.ts is None


def test_the_documented_settings_example_loads(tmp_path: Any) -> None:
    from pathlib import Path

    from sidecar.settings import load_settings

    section = (Path(__file__).resolve().parents[2] / "docs" / "otlp.md").read_text(encoding="utf-8")
    block = section.split("llm-sidecar's settings", 1)[1].split("```yaml\n", 1)[1]
    config = tmp_path / "settings.yaml"
    config.write_text(block.split("```", 1)[0], encoding="utf-8")
    settings = load_settings(config)
    assert settings.input.topics == {"otlp_spans": "otlp-proto"}
    decoder = Decoder(settings.input, max_bytes=1024)
    assert decoder.adapter_for("otlp_spans").format == "otlp-proto"
    assert decoder.adapter_for("llm-events").format == "llm-sidecar-v1"


def test_formats_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    from sidecar.settings import load_settings

    monkeypatch.setenv("LLM_SIDECAR_INPUT__FORMAT", "otlp-json")
    monkeypatch.setenv("LLM_SIDECAR_INPUT__TOPICS", '{"otlp_spans": "otlp-proto"}')
    settings = load_settings()
    assert settings.input.format == "otlp-json"
    assert settings.input.topics == {"otlp_spans": "otlp-proto"}
    monkeypatch.setenv("LLM_SIDECAR_INPUT__FORMAT", "protobuf")
    with pytest.raises(ConfigError, match=r"input\.format"):
        load_settings()


def test_spans_without_ids_and_newer_openinference_prompts() -> None:
    llm = [{"key": "openinference.span.kind", "value": {"stringValue": "LLM"}}]
    doc = {
        "resourceSpans": [
            {
                "scopeSpans": [
                    {
                        "spans": [
                            {"attributes": [*llm, _kv("output.value", "no ids")]},
                            {
                                "traceId": "0af7651916cd43dd8448eb211c80319c",
                                "spanId": "b7ad6b7169203331",
                                "attributes": [
                                    *llm,
                                    _kv("llm.prompts.0.prompt.text", "Complete: roses are"),
                                    _kv("output.value", "red"),
                                ],
                            },
                        ]
                    }
                ]
            }
        ]
    }
    adapter = make_adapter("otlp-json", max_bytes=1 << 20)
    (e,) = adapter.decode(orjson.dumps(doc))
    assert (e.prompt, e.response) == ("Complete: roses are", "red")
    assert {k.value: v for k, v in adapter.skipped.items()} == {"invalid": 1}


def _kv(key: str, value: str) -> dict[str, Any]:
    return {"key": key, "value": {"stringValue": value}}


def test_timestamps_out_of_range_leave_ts_empty() -> None:
    span = {
        "traceId": "0af7651916cd43dd8448eb211c80319c",
        "spanId": "b7ad6b7169203331",
        "endTimeUnixNano": str(10**40),
        "attributes": [
            {"key": "openinference.span.kind", "value": {"stringValue": "LLM"}},
            _kv("output.value", "x"),
        ],
    }
    doc = {"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}
    (e,) = make_adapter("otlp-json", max_bytes=1 << 20).decode(orjson.dumps(doc))
    assert e.ts is None


@pytest.mark.parametrize("fmt", FORMATS)
def test_mutated_records_never_crash_the_decoder(fmt: str) -> None:
    """Flip bytes of a real record: every result is events or a DecodeError, nothing else."""
    import random

    s = Spans(**{"service.name": "fuzz"})
    with s.span("root", {"http.route": "/x"}, end_ms=500):
        with s.span(
            "retrieve",
            {"openinference.span.kind": "RETRIEVER", "retrieval.documents.0.document.content": "d"},
            end_ms=20,
        ):
            pass
        with s.span(
            "chat",
            {
                "gen_ai.operation.name": "chat",
                "gen_ai.input.messages": msgs(("user", "q")),
                "gen_ai.output.messages": msgs(("assistant", "a")),
            },
            start_ms=30,
        ) as span:
            span.add_event("gen_ai.user.message", {"content": "q"})
    raw = s.proto() if fmt == "otlp-proto" else s.json()
    adapter = make_adapter(fmt, max_bytes=1 << 20)
    rng = random.Random(11)
    outcomes: Counter[str] = Counter()
    for _ in range(1500):
        data = bytearray(raw)
        for _ in range(rng.randint(1, 4)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        try:
            adapter.decode(bytes(data))
            outcomes["events"] += 1
        except DecodeError as exc:
            outcomes[exc.reason.value] += 1
    assert outcomes["events"] > 0 and sum(outcomes.values()) == 1500


def test_a_missing_otlp_extra_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.delitem(sys.modules, "sidecar.formats.otlp", raising=False)
    monkeypatch.setitem(
        sys.modules, "opentelemetry.proto.collector.trace.v1.trace_service_pb2", None
    )
    with pytest.raises(ConfigError, match=r"pip install 'llm-sidecar\[otlp\]'"):
        Decoder(InputSettings(topics={"spans": "otlp-proto"}), max_bytes=1024)
    # Native-only settings never import the OTLP adapters.
    assert Decoder(InputSettings(), max_bytes=1024).adapter_for("x").format == "llm-sidecar-v1"
