"""One OpenAI-compatible ``/chat/completions`` endpoint over httpx, with its safeguards.

Works with OpenAI, Azure OpenAI (``api_version`` set: ``api-key`` header and ``api-version``
query), vLLM, Ollama and llama.cpp's server, which all speak this dialect. Every call goes
through, in order:

* the **circuit breaker** of the endpoint: after ``circuit_failures`` consecutive failed
  attempts it opens and calls fail at once; after ``circuit_reset_s`` one probe is let
  through (half-open) and its result closes or reopens it;
* the **request budget** (a :class:`~sidecar.judge.sampler.RequestBudget`), which paces
  attempts;
* the HTTP attempt, bounded by ``timeout_s`` (and by what is left of ``deadline_s``);
* **retries** (the only retry layer: httpx's own are off) on timeouts, connection errors, 408,
  429 and 5xx, with jittered exponential backoff, waiting what ``Retry-After`` asks on 429 and
  503 as long as that fits in the deadline.

The judge (:class:`~sidecar.judge.client.JudgeClient`) adds a cache and answer parsing on
top; the probe sends attack vectors with :meth:`ChatClient.chat`. The key is sent in a header
and never logged: failures are logged by kind and URL.
"""

from __future__ import annotations

import asyncio
import email.utils
import logging
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from types import TracebackType
from typing import TYPE_CHECKING, Any, Final, Self

import httpx
import orjson

from .. import __version__
from ..errors import JudgeError
from ..logs import LogBudget
from .endpoint import EndpointSettings

if TYPE_CHECKING:
    from .budget import RequestBudget

__all__ = [
    "CIRCUIT_STATES",
    "OUTCOMES",
    "RETRY_REASONS",
    "ChatClient",
    "ChatFailure",
    "CircuitBreaker",
    "Completion",
    "parse_retry_after",
]

log = logging.getLogger(__name__)

OUTCOMES: Final = (
    "success",
    "timeout",
    "rate_limited",
    "server_error",
    "client_error",
    "connection_error",
    "invalid_answer",
    "circuit_open",
)
"""How one call ended (the bounded ``outcome`` label)."""
RETRY_REASONS: Final = ("timeout", "rate_limited", "server_error", "connection_error")
CIRCUIT_STATES: Final = ("closed", "open", "half_open")

_RETRIABLE_STATUS = frozenset({408, 429, 500, 502, 503, 504})


class ChatFailure(JudgeError):
    """A call that failed; ``outcome`` is one of :data:`OUTCOMES`."""

    def __init__(
        self, message: str, *, outcome: str, retriable: bool, status: int | None = None
    ) -> None:
        super().__init__(message, retriable=retriable, status=status)
        self.outcome = outcome
        self.retry_after: float | None = None
        self.not_a_completion = False
        """The endpoint's answer was not a chat completion at all (an HTML page, other
        JSON): the base URL is likely not an OpenAI-compatible API, which counts against
        the circuit like an outage. A completion whose text does not parse does not."""


def _not_a_completion(reason: str) -> ChatFailure:
    failure = ChatFailure(reason, outcome="invalid_answer", retriable=False)
    failure.not_a_completion = True
    return failure


@dataclass(frozen=True, slots=True)
class Completion:
    """One chat completion: the text and the tokens the endpoint said it used."""

    content: str
    prompt_tokens: int
    completion_tokens: int
    model: str | None


class CircuitBreaker:
    """Closed, open after ``threshold`` consecutive failures, half-open after ``reset_s``.

    In half-open exactly one probe is allowed; its success closes the circuit, its failure
    reopens it for another ``reset_s``. A probe that ends without a result (cancelled) frees
    the slot so the next call probes.
    """

    def __init__(
        self,
        threshold: int,
        reset_s: float,
        *,
        clock: Callable[[], float] = time.monotonic,
        on_change: Callable[[str], None] | None = None,
        name: str = "judge",
        logger: logging.Logger = log,
    ) -> None:
        self.threshold = threshold
        self.reset_s = reset_s
        self._clock = clock
        self._on_change = on_change
        self._name = name
        self._log = logger
        self.state = "closed"
        self.failures = 0
        self._opened_at = 0.0
        self._probing = False

    def _set(self, state: str) -> None:
        if state != self.state:
            self.state = state
            self._log.log(
                logging.WARNING if state == "open" else logging.INFO,
                "%s circuit %s",
                self._name,
                state.replace("_", "-"),
            )
            if self._on_change is not None:
                self._on_change(state)

    @property
    def is_open(self) -> bool:
        """True while calls are refused outright (open and not yet due for a probe)."""
        return self.state == "open" and self._clock() - self._opened_at < self.reset_s

    def allow(self) -> bool:
        if self.state == "closed":
            return True
        if self.state == "open":
            if self._clock() - self._opened_at < self.reset_s:
                return False
            self._set("half_open")
        if self._probing:
            return False
        self._probing = True
        return True

    def success(self) -> None:
        self._probing = False
        self.failures = 0
        self._set("closed")

    def failure(self) -> None:
        self._probing = False
        self.failures += 1
        if self.state == "half_open" or self.failures >= self.threshold:
            self._opened_at = self._clock()
            self._set("open")

    def release(self) -> None:
        """An allowed call ended without a verdict on the endpoint (cancelled, say)."""
        self._probing = False


def parse_retry_after(value: str | None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta-seconds or an HTTP date)."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


class ChatClient:
    """Calls one OpenAI-compatible endpoint; see the module docstring.

    ``name`` says whose endpoint it is in log lines and failure messages (``judge``,
    ``probe target``); ``on_retry``, ``on_circuit`` and ``on_usage`` feed the caller's
    metrics.
    """

    def __init__(
        self,
        settings: EndpointSettings,
        *,
        requests: RequestBudget | None = None,
        on_retry: Callable[[str], None] | None = None,
        on_circuit: Callable[[str], None] | None = None,
        on_usage: Callable[[int, int], None] | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        clock: Callable[[], float] = time.monotonic,
        log_failures: bool = True,
        name: str = "judge",
        logger: logging.Logger = log,
    ) -> None:
        self.settings = settings
        self.requests = requests
        self.name = name
        self._log = logger
        self._on_retry = on_retry
        self._on_usage = on_usage
        self._clock = clock
        self.breaker = CircuitBreaker(
            settings.circuit_failures,
            settings.circuit_reset_s,
            clock=clock,
            on_change=on_circuit,
            name=name,
            logger=logger,
        )
        headers = {"User-Agent": f"llm-sidecar/{__version__}", **settings.extra_headers}
        params: dict[str, str] = {}
        key = settings.api_key.get_secret_value() if settings.api_key is not None else None
        if settings.api_version:
            params["api-version"] = settings.api_version
            if key:
                headers["api-key"] = key
        elif key:
            headers["Authorization"] = f"Bearer {key}"
        self._url = settings.base_url.rstrip("/") + "/chat/completions"
        self._http = httpx.AsyncClient(
            headers=headers,
            params=params,
            timeout=httpx.Timeout(settings.timeout_s),
            limits=httpx.Limits(
                max_connections=settings.concurrency,
                max_keepalive_connections=settings.concurrency,
            ),
            transport=transport,
            follow_redirects=False,
        )
        self.tokens_used = {"prompt": 0, "completion": 0}
        self.failed_attempts: dict[str, int] = {}
        """HTTP attempts that failed, by reason (``HTTP 401``, ``timeout``, ...): for summaries."""
        # What failed, in the log: the circuit's "open" alone did not say why. A few lines a
        # minute, the rest summed up by reason.
        self._failure_logs = (
            LogBudget(f"{name} failures", logger, limit=3, clock=clock) if log_failures else None
        )

    async def aclose(self) -> None:
        if self._failure_logs is not None:
            self._failure_logs.flush()
        await self._http.aclose()

    def _log_failure(self, kind: str, message: str) -> None:
        if self._failure_logs is not None and self._failure_logs.allow(kind):
            self._log.warning("%s at %s: %s", self.name, self.settings.base_url, message)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    # -- calls -----------------------------------------------------------------------------

    async def chat(self, messages: list[dict[str, str]]) -> Completion:
        """One chat completion of ``messages``, retried within ``deadline_s``; a completion
        with text counts as a success of the endpoint.

        Raises:
            ChatFailure: no completion in time; ``outcome`` says how.
        """
        deadline = asyncio.get_running_loop().time() + self.settings.deadline_s
        completion = await self._complete(messages, deadline)
        self.breaker.success()
        return completion

    async def _complete(self, messages: list[dict[str, str]], deadline: float) -> Completion:
        """One chat completion, retried."""
        s = self.settings
        body: dict[str, Any] = {
            "model": s.model,
            "messages": messages,
            "temperature": s.temperature,
            "max_tokens": s.max_tokens,
        }
        if s.json_mode:
            body["response_format"] = {"type": "json_object"}
        payload = orjson.dumps(body)
        loop = asyncio.get_running_loop()
        attempt = 0
        while True:
            try:
                return await self._attempt(payload, deadline)
            except ChatFailure as exc:
                if not exc.retriable or attempt >= s.max_retries or exc.outcome == "circuit_open":
                    raise
                if exc.retry_after is not None:
                    delay = exc.retry_after
                else:
                    cap = min(s.backoff_max_s, s.backoff_base_s * 2.0**attempt)
                    delay = cap / 2 + random.uniform(0, cap / 2)  # jitter, not crypto
                if loop.time() + delay >= deadline:
                    raise
                if self._on_retry is not None:
                    self._on_retry(exc.outcome)
                attempt += 1
                await asyncio.sleep(delay)

    async def _attempt(self, payload: bytes, deadline: float) -> Completion:
        loop = asyncio.get_running_loop()
        who = self.name
        if self.breaker.is_open:
            raise ChatFailure(f"{who} circuit is open", outcome="circuit_open", retriable=True)
        if self.requests is not None:
            wait = self.requests.wait_time()
            while wait > 0:
                if loop.time() + wait >= deadline:
                    raise ChatFailure(
                        "request budget leaves no room before the deadline",
                        outcome="timeout",
                        retriable=False,
                    )
                await asyncio.sleep(wait)
                wait = self.requests.wait_time()
        remaining = deadline - loop.time()
        if remaining <= 0:
            raise ChatFailure(f"{who} deadline passed", outcome="timeout", retriable=False)
        if not self.breaker.allow():
            raise ChatFailure(f"{who} circuit is open", outcome="circuit_open", retriable=True)
        try:
            try:
                async with asyncio.timeout(min(self.settings.timeout_s, remaining)):
                    response = await self._http.post(
                        self._url, content=payload, headers={"Content-Type": "application/json"}
                    )
            except (TimeoutError, httpx.TimeoutException):
                raise ChatFailure(
                    f"{who} request timed out", outcome="timeout", retriable=True
                ) from None
            except httpx.TransportError as exc:
                raise ChatFailure(
                    f"{who} connection failed: {type(exc).__name__}",
                    outcome="connection_error",
                    retriable=True,
                ) from None
            completion = self._read(response)
        except ChatFailure as exc:
            self._count_attempt(exc)
            if exc.outcome == "invalid_answer" and not exc.not_a_completion:
                # The endpoint answered, but unusably: that neither proves it healthy nor
                # counts as an outage, so an endpoint mixing errors with garbage still trips.
                self.breaker.release()
            else:
                self.breaker.failure()
            raise
        except BaseException:
            self.breaker.release()  # cancelled: nothing learnt about the endpoint
            raise
        # Not a success yet: the caller says so once it has what it asked for.
        self.breaker.release()
        return completion

    def _count_attempt(self, exc: ChatFailure | None) -> None:
        """Count a failed HTTP attempt by reason (None: an answer that did not parse)."""
        if exc is None:
            reason = "unparseable answer"
        elif exc.not_a_completion:
            reason = str(exc)  # what came back: "the answer is not JSON (text/html)"
        elif exc.status is not None:
            reason = f"HTTP {exc.status}"
        elif exc.outcome == "connection_error":
            prefix = f"{self.name} connection failed: "
            reason = exc.args[0].removeprefix(prefix) if exc.args else "?"
            reason = f"connection failed ({reason})"
        else:
            reason = exc.outcome.replace("_", " ")
        if reason in self.failed_attempts or len(self.failed_attempts) < 64:
            self.failed_attempts[reason] = self.failed_attempts.get(reason, 0) + 1
        if exc is not None:
            self._log_failure(reason, f"request failed: {reason}")

    def _read(self, response: httpx.Response) -> Completion:
        status = response.status_code
        if status != 200:
            retriable = status in _RETRIABLE_STATUS
            if status == 429:
                outcome = "rate_limited"
            elif status == 408:
                outcome = "timeout"
            elif status >= 500:
                outcome = "server_error"
            else:
                outcome = "client_error"
            failure = ChatFailure(
                f"{self.name} answered HTTP {status}",
                outcome=outcome,
                retriable=retriable,
                status=status,
            )
            if status in (429, 503):
                failure.retry_after = parse_retry_after(response.headers.get("Retry-After"))
            raise failure
        try:
            doc = orjson.loads(response.content)
        except orjson.JSONDecodeError:
            kind = response.headers.get("Content-Type", "").split(";")[0].strip()
            raise _not_a_completion(
                f"the answer is not JSON ({kind or 'no Content-Type'})"
            ) from None
        try:
            content = doc["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError):
            raise _not_a_completion("the answer has no choices[0].message.content") from None
        if not isinstance(content, str):
            raise _not_a_completion("the completion's content is not text")
        model = doc.get("model")
        p, c = self._count_usage(doc.get("usage"))
        return Completion(content, p, c, model if isinstance(model, str) else None)

    def _count_usage(self, usage: Any) -> tuple[int, int]:
        if not isinstance(usage, dict):
            return 0, 0
        prompt = usage.get("prompt_tokens")
        completion = usage.get("completion_tokens")
        p = prompt if isinstance(prompt, int) and prompt > 0 else 0
        c = completion if isinstance(completion, int) and completion > 0 else 0
        if not p and not c:
            return 0, 0
        self.tokens_used["prompt"] += p
        self.tokens_used["completion"] += c
        if self._on_usage is not None:
            self._on_usage(p, c)
        return p, c
