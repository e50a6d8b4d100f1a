"""The inline check API: ``POST /v1/check`` on the sidecar's HTTP port.

A gateway can ask for verdicts synchronously, before a response reaches the user, and block on
a failed rule. The same compiled rules as the stream run on the posted events, in a worker
thread so the stream's event loop keeps turning, under a deadline. Concurrency is capped (a
request that cannot start in time gets 503), the body size is limited (413), and an optional
bearer token is compared in constant time (401), and the body must be sent as JSON
(``Content-Type: application/json``, 415 otherwise), which a cross-origin page cannot do
without a CORS preflight. The API is described by ``GET /openapi.json``.

Requests are checked in micro-batches: a request goes to a worker thread at once when one of
``api.concurrency`` batch slots is free; otherwise it waits in a bounded queue (``api.max_queue``,
503 when full) and every request queued when a slot frees goes in one batch, one hand-off and
one ``Pipeline.run`` (whose scan is per batch) for all of them. The worker also renders each
request's answer, so the event loop only parses, queues and writes. Each request keeps its own
deadline: a timer answers 503 if it is still queued then, 504 if its batch is still running (the
batch keeps its slot until it ends, so slow checks still count against the cap).
"""

from __future__ import annotations

import asyncio
import hmac
import json
import time
from collections import deque
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import orjson
from aiohttp import web
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from .errors import DecodeError, DecodeReason
from .events import Event, decode
from .pipeline import Pipeline, header_trace_id, own_trace_id
from .rules import bundled_path
from .settings import ApiSettings

__all__ = ["CheckApi", "openapi_document"]

OUTCOMES = (
    "ok",
    "bad_request",
    "unauthorized",
    "too_large",
    "unsupported_media_type",
    "busy",
    "deadline",
    "unavailable",
    "not_found",
    "method_not_allowed",
)


# What a queued request's future resolves to besides its answer.
_BUSY = 1
_LATE = 2
_UNAVAILABLE = 3
BATCH_EVENTS = 256
"""A batch takes queued requests up to this many events (a larger request goes alone)."""


@dataclass(slots=True, eq=False)
class _Pending:
    """One request waiting for, or in, a batch."""

    events: list[Event]
    single: bool
    errors: list[dict[str, Any]]
    future: asyncio.Future[bytes | int]
    trace_id: str | None
    """The trace id of the request's ``traceparent`` header: the verdict of an event without
    a ``trace_id`` of its own carries it."""
    timer: asyncio.TimerHandle | None = None
    running: bool = False


class CheckApi:
    """Adds the inline check routes to an aiohttp application."""

    def __init__(
        self,
        cfg: ApiSettings,
        pipeline: Callable[[], Pipeline | None],
        registry: CollectorRegistry,
        *,
        max_event_bytes: int,
    ) -> None:
        self.cfg = cfg
        self._pipeline = pipeline
        self._queue: deque[_Pending] = deque()
        self._running = 0
        self._token = cfg.token.get_secret_value().encode() if cfg.token else None
        self.max_event_bytes = max_event_bytes
        self.requests = Counter(
            "llm_sidecar_check_api_requests",
            "Inline check requests by outcome.",
            ["outcome"],
            registry=registry,
        )
        self._outcome = {outcome: self.requests.labels(outcome) for outcome in OUTCOMES}
        self.seconds = Histogram(
            "llm_sidecar_check_api_request_seconds",
            "Inline check request latency, body read to answer.",
            buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5),
            registry=registry,
        )
        queued = Gauge(
            "llm_sidecar_check_api_queued", "Requests waiting for a batch.", registry=registry
        )
        queued.set_function(lambda: len(self._queue))
        self.batches = Histogram(
            "llm_sidecar_check_api_batch_requests",
            "Requests checked together in one batch (one hand-off to a worker thread).",
            buckets=(1, 2, 4, 8, 16, 32, 64, 128, 256),
            registry=registry,
        )

    def install(self, app: web.Application) -> None:
        app.router.add_post("/v1/check", self.check)
        app.router.add_get("/openapi.json", self.openapi)
        app.middlewares.append(_json_errors(self._outcome))

    async def openapi(self, request: web.Request) -> web.Response:
        return web.Response(
            body=bundled_path("openapi.json").read_bytes(), content_type="application/json"
        )

    def _error(self, status: int, outcome: str, message: str) -> web.Response:
        self._outcome[outcome].inc()
        body = orjson.dumps({"error": outcome, "message": message})
        headers = {"Retry-After": "1"} if status == 503 else None
        if status == 401:
            headers = {"WWW-Authenticate": "Bearer"}
        return web.Response(
            status=status, body=body, content_type="application/json", headers=headers
        )

    def _authorized(self, request: web.Request) -> bool:
        if self._token is None:
            return True
        header = request.headers.get("Authorization", "")
        scheme, _, given = header.partition(" ")
        return scheme.lower() == "bearer" and hmac.compare_digest(
            given.strip().encode(), self._token
        )

    async def _body(self, request: web.Request) -> bytes | bytearray | None:
        """The whole body, or None when it is over ``api.max_body_bytes``."""
        limit = self.cfg.max_body_bytes
        length = request.content_length
        if length is not None:
            if length > limit:
                return None
            return await request.read()  # one piece, its length checked above
        body = bytearray()
        async for chunk in request.content.iter_chunked(65_536):  # chunked bodies
            body += chunk
            if len(body) > limit:
                return None
        return body

    async def check(self, request: web.Request) -> web.Response:
        started = time.perf_counter()
        if not self._authorized(request):
            return self._error(401, "unauthorized", "a valid bearer token is required")
        # JSON only: a browser cannot send application/json cross-origin without a preflight.
        ctype = request.content_type
        if ctype != "application/json" and not (
            ctype.startswith("application/") and ctype.endswith("+json")
        ):
            return self._error(
                415,
                "unsupported_media_type",
                f"send the body as Content-Type: application/json, not {ctype or 'none'}",
            )
        encoding = request.headers.get("Content-Encoding", "identity").strip().lower()
        if encoding != "identity":
            # Refused unread: a small compressed body can expand past every limit (the
            # server does not decompress it either, see HttpServer).
            return self._error(
                415,
                "unsupported_media_type",
                f"send the body uncompressed (Content-Encoding {encoding} is not accepted)",
            )
        body = await self._body(request)
        if body is None:
            return self._error(413, "too_large", f"body over {self.cfg.max_body_bytes} bytes")
        try:
            doc = orjson.loads(body)
        except orjson.JSONDecodeError as exc:
            try:
                bytes(body).decode("utf-8")
            except UnicodeDecodeError as ude:
                return self._error(
                    400, "bad_request", f"the body is not valid UTF-8 (at byte {ude.start})"
                )
            return self._error(400, "bad_request", f"the body is not JSON: {exc}")
        single = isinstance(doc, dict) and "events" not in doc
        if isinstance(doc, dict) and not single and len(doc) > 1:
            # Either an event with a field of its own named "events", or a batch with
            # something beside it: guessing would check the wrong thing.
            others = ", ".join(sorted(k for k in doc if k != "events")[:5])
            return self._error(
                400,
                "bad_request",
                'a batch is {"events": [...]} with no other key; this body also has '
                f"{others} (to check one event, send it without an 'events' field)",
            )
        items = [doc] if single else doc.get("events") if isinstance(doc, dict) else doc
        if isinstance(items, list) and not items:
            return self._error(400, "bad_request", "no events: send at least one event")
        if not isinstance(items, list):
            return self._error(
                400, "bad_request", 'send one event object, or {"events": [...]} / a JSON array'
            )
        if len(items) > self.cfg.max_events:
            return self._error(413, "too_large", f"more than {self.cfg.max_events} events")
        events: list[Event] = []
        errors: list[dict[str, Any]] = []
        if single:
            try:
                events.append(decode(orjson.dumps(doc), max_bytes=self.max_event_bytes))
            except DecodeError as exc:
                if exc.reason is DecodeReason.TOO_LARGE:
                    return self._error(
                        413, "too_large", f"the event is {exc.message} (limits.max_event_bytes)"
                    )
                return self._error(400, "bad_request", f"{exc.reason.value}: {exc.message}")
        else:
            for index, item in enumerate(items):
                try:
                    events.append(decode(orjson.dumps(item), max_bytes=self.max_event_bytes))
                except DecodeError as exc:
                    errors.append(
                        {"index": index, "reason": exc.reason.value, "message": exc.message}
                    )
        if self._pipeline() is None:
            return self._error(503, "unavailable", "rules are not loaded yet")
        if len(self._queue) >= self.cfg.max_queue:
            return self._error(503, "busy", "too many check requests waiting")
        loop = asyncio.get_running_loop()
        traced = (
            header_trace_id(request.headers.items()) if "traceparent" in request.headers else None
        )
        pending = _Pending(events, single, errors, loop.create_future(), traced)
        left = self.cfg.deadline_ms / 1000 - (time.perf_counter() - started)
        pending.timer = loop.call_later(max(left, 0.0), self._expire, pending)
        self._queue.append(pending)
        if self._running < self.cfg.concurrency:
            self._dispatch(loop)
        try:
            answer = await pending.future
        except asyncio.CancelledError:  # the server is stopping, or the client went away
            pending.timer.cancel()
            if not pending.running and not pending.future.done():
                self._queue.remove(pending)
            raise
        if answer == _BUSY:
            return self._error(503, "busy", "too many concurrent check requests")
        if answer == _LATE:
            return self._error(
                504, "deadline", f"checks did not finish within {self.cfg.deadline_ms} ms"
            )
        if answer == _UNAVAILABLE:
            return self._error(503, "unavailable", "rules are not loaded yet")
        assert isinstance(answer, bytes)
        self._outcome["ok"].inc()
        self.seconds.observe(time.perf_counter() - started)
        return web.Response(body=answer, content_type="application/json")

    # -- micro-batches ------------------------------------------------------------------------

    def _expire(self, pending: _Pending) -> None:
        """A request's deadline: 503 while it still waits for a batch, 504 once it is in one."""
        if pending.future.done():
            return
        if not pending.running:
            self._queue.remove(pending)
        pending.future.set_result(_LATE if pending.running else _BUSY)

    def _dispatch(self, loop: asyncio.AbstractEventLoop) -> None:
        """Start batches of queued requests while a slot is free."""
        queue = self._queue
        while queue and self._running < self.cfg.concurrency:
            batch = [queue.popleft()]
            size = len(batch[0].events)
            while queue and size + len(queue[0].events) <= BATCH_EVENTS:
                size += len(queue[0].events)
                batch.append(queue.popleft())
            for pending in batch:
                pending.running = True
            pipeline = self._pipeline()
            if pipeline is None:  # not after the first load; kept for the type
                self._finish(loop, batch, [_UNAVAILABLE] * len(batch))
                continue
            self._running += 1
            self.batches.observe(len(batch))
            # track=False: gateway traffic must not disable rules of the stream it shares them
            # with. The slot is released when the checks finish, not when a request stops
            # waiting for them, so requests past their deadline still count against the cap.
            work = loop.run_in_executor(None, _check_batch, pipeline, batch)
            work.add_done_callback(partial(self._done, loop, batch))

    def _done(
        self,
        loop: asyncio.AbstractEventLoop,
        batch: list[_Pending],
        work: asyncio.Future[list[bytes | Exception]],
    ) -> None:
        self._running -= 1
        exc = work.exception()
        if exc is not None:  # the checks themselves failed: every request of the batch gets 500
            self._finish(loop, batch, [exc] * len(batch))  # type: ignore[list-item]
        else:
            self._finish(loop, batch, work.result())
        self._dispatch(loop)

    @staticmethod
    def _finish(
        loop: asyncio.AbstractEventLoop,
        batch: list[_Pending],
        answers: Sequence[bytes | int | Exception],
    ) -> None:
        for pending, answer in zip(batch, answers, strict=True):
            if pending.timer is not None:
                pending.timer.cancel()
            if pending.future.done():
                continue
            if isinstance(answer, Exception):
                pending.future.set_exception(answer)
            else:
                pending.future.set_result(answer)


def _json_errors(counters: Mapping[str, Any]) -> Any:
    """A middleware answering the router's own 404 and 405 under ``/v1/`` as JSON, like every
    answer of the API (they were aiohttp's plain text), keeping the ``Allow`` header, and
    counting them with the API's other outcomes."""

    @web.middleware
    async def json_errors(
        request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
    ) -> web.StreamResponse:
        try:
            return await handler(request)
        except web.HTTPException as exc:
            if not request.path.startswith("/v1/") or exc.status not in (404, 405):
                raise
            outcome = "not_found" if exc.status == 404 else "method_not_allowed"
            counters[outcome].inc()
            message = (
                f"no such endpoint: {request.path} (the API is POST /v1/check)"
                if exc.status == 404
                else f"{request.method} is not allowed here: use {exc.headers.get('Allow', 'POST')}"
            )
            return web.Response(
                status=exc.status,
                body=orjson.dumps({"error": outcome, "message": message}),
                content_type="application/json",
                headers={"Allow": exc.headers["Allow"]} if "Allow" in exc.headers else None,
            )

    return json_errors


def _nothing_applied(event: Event) -> str:
    """Why an answer holds no outcome: a gateway reading only ``passed`` would let through an
    event whose text went unchecked (a misspelled ``response``, say)."""
    missing = [f for f in ("prompt", "response") if getattr(event, f) is None]
    own = sorted(event.extra)
    return (
        "no rule applied to this event"
        + (f": it has no {' and no '.join(missing)}" if missing else "")
        + (f" (fields of its own: {', '.join(own)})" if own else "")
    )


def _check_batch(pipeline: Pipeline, batch: list[_Pending]) -> list[bytes | Exception]:
    """In a worker thread: one ``Pipeline.run`` over the events of every request in ``batch``,
    then each request's answer as JSON (or what kept it from being rendered: that request alone
    gets 500)."""
    ready = [
        (event, own_trace_id(event) or pending.trace_id)
        for pending in batch
        for event in pending.events
    ]
    verdicts, _ = pipeline.run_traced(ready, track=False)
    answers: list[bytes | Exception] = []
    at = 0
    for pending in batch:
        mine = verdicts[at : at + len(pending.events)]
        at += len(pending.events)
        try:
            docs = []
            for v in mine:
                doc = v.to_dict()
                doc["passed"] = v.passed
                if not v.checks:
                    doc["note"] = _nothing_applied(v.event)
                docs.append(doc)
            payload: Any = (
                docs[0] if pending.single else {"verdicts": docs, "errors": pending.errors}
            )
            answers.append(orjson.dumps(payload))
        except Exception as exc:  # this request alone: the others keep their answers
            answers.append(exc)
    return answers


def openapi_document() -> dict[str, Any]:
    """The OpenAPI description served at ``/openapi.json`` (kept in the package data)."""
    result: dict[str, Any] = json.loads(bundled_path("openapi.json").read_text(encoding="utf-8"))
    return result
