"""The inline check API, over real HTTP against a running app."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any, ClassVar

import httpx
import pytest
from jsonschema import Draft202012Validator
from prometheus_client import CollectorRegistry

from sidecar.api import openapi_document
from sidecar.app import App
from sidecar.checks import Check, CheckResult, register
from sidecar.events import Event
from sidecar.settings import Settings
from sidecar.sinks import Sink
from sidecar.sources.file import FileSource

REPO = Path(__file__).resolve().parent.parent


@register
class _Slow(Check):  # type: ignore[type-arg]
    name: ClassVar[str] = "test_slow_check"

    def __call__(self, text: str, event: Event) -> CheckResult:
        time.sleep(0.3)
        return CheckResult(True)


def validator(name: str) -> Draft202012Validator:
    doc = openapi_document()
    return Draft202012Validator(
        {"$ref": f"#/components/schemas/{name}", "components": doc["components"]}
    )


Client = Callable[..., Any]


@pytest.fixture
async def api(tmp_path: Path) -> AsyncIterator[Callable[..., Any]]:
    """Start an app with the given API settings and rules; yields an httpx client to it."""
    opened: list[tuple[App, httpx.AsyncClient]] = []

    async def make(
        rules: str | None = None, **api: Any
    ) -> tuple[httpx.AsyncClient, CollectorRegistry]:
        events = tmp_path / "none.jsonl"
        events.write_text("")
        paths = [REPO / "rules" / "default.yaml"]
        if rules is not None:
            custom = tmp_path / "custom.yaml"
            custom.write_text(rules)
            paths = [custom]
        settings = Settings(
            rules=paths, reload_interval_s=0, http={"host": "127.0.0.1", "port": 0}, api=api
        )
        registry = CollectorRegistry()
        app = App(settings, source=FileSource(events), sink=Sink(), registry=registry)
        await app.start()
        assert app.http is not None
        client = httpx.AsyncClient(base_url=f"http://127.0.0.1:{app.http.port}", timeout=5)
        opened.append((app, client))
        return client, registry

    yield make
    for app, client in opened:
        await client.aclose()
        await app.stop()


async def verdict_of(client: httpx.AsyncClient, event: dict[str, Any]) -> dict[str, Any]:
    """The API's answer to one event, checked against the OpenAPI document."""
    r = await client.post("/v1/check", json=event)
    assert r.status_code == 200, r.text
    body: dict[str, Any] = r.json()
    validator("Verdict").validate(body)
    return body


async def test_one_event_gets_its_verdict(api: Any) -> None:
    client, registry = await api()
    body = await verdict_of(client, {"id": "a", "prompt": "hi", "response": "Hello {{name}}"})
    assert body["passed"] is False
    assert body["checks"]["no-placeholder-text"]["passed"] is False
    r = await client.post("/v1/check", json={"id": "b", "prompt": "hi", "response": "Hello there."})
    assert r.json()["passed"] is True
    assert registry.get_sample_value("llm_sidecar_check_api_requests_total", {"outcome": "ok"}) == 2


async def test_wrong_paths_and_methods_under_v1_are_json_too(api: Any) -> None:
    client, registry = await api()
    r = await client.get("/v1/check")
    assert r.status_code == 405 and r.headers["Allow"] == "POST"
    assert r.json() == {
        "error": "method_not_allowed",
        "message": "GET is not allowed here: use POST",
    }
    r = await client.post("/v1/check/", json={"id": "a", "response": "x"})
    assert r.status_code == 404
    assert r.json()["message"] == "no such endpoint: /v1/check/ (the API is POST /v1/check)"
    assert (await client.get("/nowhere")).status_code == 404  # outside the API: as before
    assert (await client.get("/healthz")).status_code == 200
    for outcome in ("method_not_allowed", "not_found"):  # counted with the API's others
        labels = {"outcome": outcome}
        assert registry.get_sample_value("llm_sidecar_check_api_requests_total", labels) == 1


async def test_an_event_no_rule_applied_to_says_so(api: Any) -> None:
    """A misspelled "response" left the rules nothing to read: the answer was
    {"checks": {}, "passed": true}, which a gateway takes for a clean answer. (The default
    pack reads prompts too; a gateway's own pack may read only responses.)"""
    client, _ = await api(
        rules="rules:\n  - {id: no-email, check: contains_email, expect: false}\n"
    )
    body = await verdict_of(client, {"id": "a", "prompt": "hi", "completion": "bob@example.com"})
    assert body["checks"] == {} and body["passed"] is True
    assert body["note"] == (
        "no rule applied to this event: it has no response (fields of its own: completion)"
    )
    checked = await client.post("/v1/check", json={"id": "b", "response": "fine"})
    assert "note" not in checked.json()


async def test_a_verdict_says_which_fields_were_checked_only_in_part(api: Any) -> None:
    client, _ = await api()
    body = await verdict_of(client, {"id": "a", "response": "fine. " * 40_000})
    assert body["cut"] == ["response"]
    assert "cut" not in (await verdict_of(client, {"id": "b", "response": "fine."}))


def traceparent(trace: str) -> dict[str, str]:
    return {"traceparent": f"00-{trace}-b7ad6b7169203331-01"}


async def test_verdicts_carry_the_trace_id_of_the_event_or_the_request(api: Any) -> None:
    """An event's own ``trace_id``, else the request's W3C ``traceparent`` header, as on the
    stream (where the header is the record's)."""
    client, _ = await api()
    own, header = "1" * 32, "2" * 32
    assert "trace_id" not in await verdict_of(client, {"id": "a", "response": "fine"})
    body = await verdict_of(client, {"id": "a", "response": "fine", "trace_id": own.upper()})
    assert body["trace_id"] == own
    r = await client.post(
        "/v1/check", json={"id": "a", "response": "x"}, headers=traceparent(header)
    )
    assert r.json()["trace_id"] == header
    batch = [{"id": "a", "response": "fine", "trace_id": own}, {"id": "b", "response": "fine"}]
    r = await client.post("/v1/check", json={"events": batch}, headers=traceparent(header))
    validator("BatchResult").validate(r.json())
    assert [v["trace_id"] for v in r.json()["verdicts"]] == [own, header]
    zero = traceparent("0" * 32)
    r = await client.post("/v1/check", json={"id": "a", "response": "x"}, headers=zero)
    assert "trace_id" not in r.json()


async def test_a_batch_reports_bad_items_by_index(api: Any) -> None:
    client, _ = await api()
    batch = [{"id": "a", "response": "fine"}, {"id": "b"}, {"id": "c", "response": "also fine"}]
    for payload in (batch, {"events": batch}):
        r = await client.post("/v1/check", json=payload)
        assert r.status_code == 200
        body = r.json()
        validator("BatchResult").validate(body)
        assert [v["id"] for v in body["verdicts"]] == ["a", "c"]
        assert body["errors"][0]["index"] == 1
        assert body["errors"][0]["reason"] == "invalid_event"


@pytest.mark.parametrize(
    ("content", "status"),
    [(b"{not json", 400), (b"[]", 400), (b'"text"', 400), (b'{"id": "x"}', 400)],
)
async def test_bad_requests(api: Any, content: bytes, status: int) -> None:
    client, _ = await api()
    r = await client.post(
        "/v1/check", content=content, headers={"Content-Type": "application/json"}
    )
    assert r.status_code == status
    validator("Error").validate(r.json())


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b'{"events": []}', "no events: send at least one event"),
        (b"[]", "no events: send at least one event"),
        (b'{"id": "x", "response": "\xff\xfe"}', "the body is not valid UTF-8 (at byte 25)"),
        # One event with a field "events" was taken for a batch and not checked at all.
        (
            b'{"id": "x", "response": "ok", "events": [{"id": "y", "response": "no"}]}',
            'a batch is {"events": [...]} with no other key; this body also has id, response '
            "(to check one event, send it without an 'events' field)",
        ),
    ],
)
async def test_bad_request_messages_say_what_is_wrong(
    api: Any, content: bytes, message: str
) -> None:
    client, _ = await api()
    r = await client.post(
        "/v1/check", content=content, headers={"Content-Type": "application/json"}
    )
    assert r.status_code == 400
    assert r.json()["message"] == message


@pytest.mark.parametrize(
    "ctype",
    [
        "text/plain",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
        None,
    ],
)
async def test_only_json_bodies_are_accepted(api: Any, ctype: str | None) -> None:
    # A page on another origin can post these without a CORS preflight; JSON it cannot.
    client, _ = await api()
    headers = {"Content-Type": ctype} if ctype else {}
    r = await client.post("/v1/check", content=b'{"id": "a", "response": "ok"}', headers=headers)
    assert r.status_code == 415
    assert r.json()["error"] == "unsupported_media_type"
    validator("Error").validate(r.json())
    ok = {"Content-Type": "application/json; charset=utf-8"}
    assert (
        await client.post("/v1/check", content=b'{"id": "a", "response": "ok"}', headers=ok)
    ).status_code == 200


async def test_bearer_token(api: Any) -> None:
    client, registry = await api(token="s3cret-token")
    event = {"id": "a", "response": "ok"}
    assert (await client.post("/v1/check", json=event)).status_code == 401
    wrong = {"Authorization": "Bearer s3cret-tokem"}
    assert (await client.post("/v1/check", json=event, headers=wrong)).status_code == 401
    right = {"Authorization": "Bearer s3cret-token"}
    assert (await client.post("/v1/check", json=event, headers=right)).status_code == 200
    assert (
        registry.get_sample_value(
            "llm_sidecar_check_api_requests_total", {"outcome": "unauthorized"}
        )
        == 2
    )


async def test_size_limits(api: Any) -> None:
    client, _ = await api(max_body_bytes=2048, max_events=3)
    big = {"id": "a", "response": "x" * 5000}
    assert (await client.post("/v1/check", json=big)).status_code == 413
    many = [{"id": str(i), "response": "ok"} for i in range(4)]
    assert (await client.post("/v1/check", json=many)).status_code == 413


async def test_an_event_over_the_event_limit_is_413_naming_the_setting(api: Any) -> None:
    client, _ = await api(max_body_bytes=5_000_000)
    r = await client.post("/v1/check", json={"id": "a", "response": "x" * 2_000_000})
    assert r.status_code == 413
    assert r.json() == {
        "error": "too_large",
        "message": "the event is 2000024 bytes, limit 1048576 (limits.max_event_bytes)",
    }


async def test_compressed_bodies_are_refused_unread(api: Any) -> None:
    """61 KB of gzip expanded to 60 MB before any limit was checked (the limit saw the
    compressed size): a few such requests at once took the process past its memory limit.
    Bodies are now read as sent, and any Content-Encoding but identity gets 415."""
    import gzip

    client, _ = await api(max_body_bytes=100_000)
    bomb = gzip.compress(b'{"id": "a", "response": "' + b"x" * 20_000_000 + b'"}')
    assert len(bomb) < 100_000
    headers = {"Content-Type": "application/json", "Content-Encoding": "gzip"}
    r = await client.post("/v1/check", content=bomb, headers=headers)
    assert r.status_code == 415
    assert r.json() == {
        "error": "unsupported_media_type",
        "message": "send the body uncompressed (Content-Encoding gzip is not accepted)",
    }
    # Not gzip at all: the same answer, where it used to be a 500 with three tracebacks.
    r = await client.post("/v1/check", content=b"not gzip", headers=headers)
    assert r.status_code == 415
    plain = {"Content-Type": "application/json", "Content-Encoding": "identity"}
    r = await client.post("/v1/check", content=b'{"id": "a", "response": "ok"}', headers=plain)
    assert r.status_code == 200


async def test_deadline_and_concurrency_cap(api: Any) -> None:
    client, registry = await api(
        rules="rules:\n  - {id: slow, check: test_slow_check}\n", deadline_ms=100, concurrency=1
    )
    event = {"id": "a", "response": "ok"}
    first, second = await asyncio.gather(
        client.post("/v1/check", json=event),
        client.post("/v1/check", json={**event, "id": "b"}),
    )
    # The first holds the only slot until its checks end (0.3 s), past its 100 ms deadline;
    # the second cannot get the slot within its deadline.
    assert sorted([first.status_code, second.status_code]) == [503, 504]
    await asyncio.sleep(0.4)
    assert (
        registry.get_sample_value("llm_sidecar_check_api_requests_total", {"outcome": "busy"}) == 1
    )
    assert (
        registry.get_sample_value("llm_sidecar_check_api_requests_total", {"outcome": "deadline"})
        == 1
    )


async def test_the_openapi_document_is_served(api: Any) -> None:
    client, _ = await api()
    r = await client.get("/openapi.json")
    assert r.status_code == 200
    doc = r.json()
    assert doc["openapi"].startswith("3.1")
    assert "post" in doc["paths"]["/v1/check"]
    for name in doc["components"]["schemas"]:
        Draft202012Validator.check_schema(validator(name).schema)


async def test_the_api_can_be_switched_off(api: Any) -> None:
    client, _ = await api(enabled=False)
    assert (await client.post("/v1/check", json={"id": "a", "response": "ok"})).status_code == 404


async def test_large_and_chunked_bodies_are_read_whole(api: Any) -> None:
    client, _ = await api()
    big = {"id": "big", "response": "fine words " * 60_000}  # ~660 KB, one piece
    r = await client.post("/v1/check", json=big)
    assert r.status_code == 200, r.text
    body = b'{"id": "chunked", "response": "' + b"x" * 100_000 + b'"}'

    async def chunks() -> Any:
        for i in range(0, len(body), 7_000):
            yield body[i : i + 7_000]
            await asyncio.sleep(0)

    r = await client.post(
        "/v1/check", content=chunks(), headers={"Content-Type": "application/json"}
    )
    assert r.status_code == 200, r.text
    assert r.json()["id"] == "chunked"


async def test_gateway_traffic_does_not_disable_stream_rules(api: Any, tmp_path: Path) -> None:
    client, _ = await api(
        rules="rules:\n  - {id: evil, check: regex, params: {pattern: '(a|aa)+$', timeout_ms: 5}}\n"
    )
    # "aa" at the end passes the shared scan's prefilter, so the regex module runs and times out
    event = {"id": "a", "response": "a" * 3000 + "b\naa"}
    for _ in range(8):  # more than limits.check_timeouts_to_disable
        r = await client.post("/v1/check", json=event)
        assert r.json()["checks"]["evil"]["detail"].startswith("timeout")
    r = await client.post("/v1/check", json=event)
    assert "evil" in r.json()["checks"]  # still enabled


HELD = threading.Event()
RELEASE = threading.Event()
RELEASE_LATE = threading.Event()


@register
class _Hold(Check):  # type: ignore[type-arg]
    """Passes unless the text says "fail"; ``labels.hold`` blocks until the test releases it."""

    name: ClassVar[str] = "test_hold_check"

    def __call__(self, text: str, event: Event) -> CheckResult:
        hold = event.labels.get("hold")
        if hold == "first":
            HELD.set()
            RELEASE.wait(10)
        elif hold == "late":
            RELEASE_LATE.wait(10)
        return CheckResult("fail" not in text)


HOLD_RULES = "rules:\n  - {id: hold, check: test_hold_check}\n"


@pytest.fixture
def holds() -> Iterator[None]:
    for flag in (HELD, RELEASE, RELEASE_LATE):
        flag.clear()
    yield
    RELEASE.set()  # never leave a worker thread blocked
    RELEASE_LATE.set()


async def block_the_slot(client: httpx.AsyncClient) -> asyncio.Task[httpx.Response]:
    """Send a request whose checks hold the only batch slot until RELEASE is set."""
    first = {"id": "first", "response": "ok", "labels": {"hold": "first"}}
    task = asyncio.create_task(client.post("/v1/check", json=first))
    assert await asyncio.to_thread(HELD.wait, 10)
    return task


async def until_queued(registry: CollectorRegistry, n: int) -> None:
    for _ in range(1000):
        if registry.get_sample_value("llm_sidecar_check_api_queued") == n:
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"never {n} requests queued")


@pytest.mark.usefixtures("holds")
async def test_queued_requests_go_in_one_batch_each_with_its_own_answer(api: Any) -> None:
    client, registry = await api(rules=HOLD_RULES, concurrency=1, deadline_ms=10_000)
    first = await block_the_slot(client)
    singles = [{"id": f"e{i}", "response": "fail" if i % 2 else "fine"} for i in range(5)]
    batch = [{"id": "b0", "response": "fine"}, {"id": "b1"}, {"id": "b2", "response": "fail"}]
    traces = [f"{i + 1:032x}" for i in range(len(singles))]
    sent = [
        asyncio.create_task(client.post("/v1/check", json=e, headers=traceparent(t)))
        for e, t in zip(singles, traces, strict=True)
    ]
    sent.append(asyncio.create_task(client.post("/v1/check", json={"events": batch})))
    await until_queued(registry, 6)
    RELEASE.set()
    assert (await first).status_code == 200
    answers = [(await task).json() for task in sent]
    for event, trace, answer in zip(singles, traces, answers, strict=False):
        validator("Verdict").validate(answer)
        assert answer["id"] == event["id"]
        assert answer["trace_id"] == trace  # its own request's, in a batch of several
        assert answer["passed"] is (event["response"] == "fine")
    validator("BatchResult").validate(answers[-1])
    assert [(v["id"], v["passed"]) for v in answers[-1]["verdicts"]] == [
        ("b0", True),
        ("b2", False),
    ]
    assert [(e["index"], e["reason"]) for e in answers[-1]["errors"]] == [(1, "invalid_event")]
    # Two hand-offs: the first request alone, then the six queued behind it together.
    assert registry.get_sample_value("llm_sidecar_check_api_batch_requests_count") == 2
    assert registry.get_sample_value("llm_sidecar_check_api_batch_requests_sum") == 7
    assert registry.get_sample_value("llm_sidecar_check_api_requests_total", {"outcome": "ok"}) == 7


@pytest.mark.usefixtures("holds")
async def test_a_slow_batch_answers_504_to_every_request_in_it_past_its_deadline(
    api: Any,
) -> None:
    client, registry = await api(rules=HOLD_RULES, concurrency=1, deadline_ms=2_000)
    first = await block_the_slot(client)
    quick = asyncio.create_task(client.post("/v1/check", json={"id": "q", "response": "ok"}))
    slow = {"id": "s", "response": "ok", "labels": {"hold": "late"}}
    held = asyncio.create_task(client.post("/v1/check", json=slow))
    await until_queued(registry, 2)
    RELEASE.set()
    assert (await first).status_code == 200
    # Both started in one batch, which does not end before their deadline.
    for task in (quick, held):
        r = await task
        assert r.status_code == 504
        assert r.json()["error"] == "deadline"
    # The batch holds its slot until its checks end; then the next request is checked.
    RELEASE_LATE.set()
    r = await client.post("/v1/check", json={"id": "after", "response": "ok"})
    assert r.status_code == 200
    assert r.json()["id"] == "after"
    deadline = {"outcome": "deadline"}
    assert registry.get_sample_value("llm_sidecar_check_api_requests_total", deadline) == 2


@pytest.mark.usefixtures("holds")
async def test_a_full_queue_answers_503_at_once(api: Any) -> None:
    client, registry = await api(rules=HOLD_RULES, concurrency=1, max_queue=2, deadline_ms=10_000)
    first = await block_the_slot(client)
    queued = [
        asyncio.create_task(client.post("/v1/check", json={"id": f"q{i}", "response": "ok"}))
        for i in range(2)
    ]
    await until_queued(registry, 2)
    r = await client.post("/v1/check", json={"id": "over", "response": "ok"})
    assert r.status_code == 503
    assert r.headers["Retry-After"] == "1"
    assert r.json() == {"error": "busy", "message": "too many check requests waiting"}
    RELEASE.set()
    assert (await first).status_code == 200
    assert [(await t).json()["id"] for t in queued] == ["q0", "q1"]
    assert (
        registry.get_sample_value("llm_sidecar_check_api_requests_total", {"outcome": "busy"}) == 1
    )


class _Unrenderable:
    """A check value that cannot be written as JSON."""

    def __bool__(self) -> bool:
        return True


@register
class _Odd(Check):  # type: ignore[type-arg]
    name: ClassVar[str] = "test_odd_value_check"

    def __call__(self, text: str, event: Event) -> CheckResult:
        value: Any = _Unrenderable() if event.labels.get("odd") else True
        return CheckResult(value)


@pytest.mark.usefixtures("holds")
async def test_an_answer_that_cannot_be_rendered_fails_its_request_alone(api: Any) -> None:
    client, registry = await api(
        rules=HOLD_RULES + "  - {id: odd, check: test_odd_value_check, expect: true}\n",
        concurrency=1,
        deadline_ms=10_000,
    )
    first = await block_the_slot(client)
    odd = asyncio.create_task(
        client.post("/v1/check", json={"id": "odd", "response": "ok", "labels": {"odd": True}})
    )
    fine = asyncio.create_task(client.post("/v1/check", json={"id": "fine", "response": "ok"}))
    await until_queued(registry, 2)
    RELEASE.set()
    assert (await first).status_code == 200
    assert (await odd).status_code == 500
    r = await fine
    assert r.status_code == 200
    assert r.json()["checks"]["odd"]["passed"] is True
    assert registry.get_sample_value("llm_sidecar_check_api_batch_requests_sum") == 3
