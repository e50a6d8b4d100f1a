"""The judge client: one OpenAI-compatible ``/chat/completions`` endpoint over httpx.

Works with OpenAI, Azure OpenAI (``api_version`` set: ``api-key`` header and ``api-version``
query), vLLM, Ollama and llama.cpp's server, which all speak this dialect. Each question
(:meth:`JudgeClient.ask`) is one :class:`~sidecar.judge.prompts.Prompt` with its inputs and
goes through, in order:

* the **cache**, keyed by prompt id, prompt version, judge model and a hash of the inputs
  (bounded LRU with a TTL), so replays and metrics sharing a step ask once;
* the **circuit breaker** of the endpoint: after ``circuit_failures`` consecutive failed
  attempts (an unusable answer neither counts nor resets the count) it opens and calls fail
  at once; after ``circuit_reset_s`` one probe is let through
  (half-open) and its result closes or reopens it;
* the **request budget**, which paces attempts to ``max_requests_per_s``;
* the HTTP attempt, bounded by ``timeout_s`` (and by what is left of ``deadline_s``);
* **retries** (the only retry layer: httpx's own are off) on timeouts, connection errors, 408,
  429 and 5xx, with jittered exponential backoff, waiting what ``Retry-After`` asks on 429 and
  503 as long as that fits in the deadline;
* strict parsing of the JSON answer, and **one repair attempt** that shows the judge its
  unusable reply and the reason before giving up with outcome ``invalid_answer``.
"""

from __future__ import annotations

import asyncio
import email.utils
import hashlib
import logging
import random
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from types import TracebackType
from typing import Any, Final, Self

import httpx
import orjson
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from .. import __version__
from ..errors import JudgeError
from ..logs import LogBudget
from .config import METRICS, JudgeSettings
from .prompts import AnswerError, Prompt
from .sampler import RequestBudget

__all__ = [
    "CIRCUIT_STATES",
    "OUTCOMES",
    "CircuitBreaker",
    "ClientMetrics",
    "JudgeCache",
    "JudgeClient",
    "JudgeFailure",
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
"""How one judge question ended (the bounded ``outcome`` label)."""
RETRY_REASONS: Final = ("timeout", "rate_limited", "server_error", "connection_error")
CIRCUIT_STATES: Final = ("closed", "open", "half_open")

DURATION_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 20.0, 40.0, 60.0, 120.0)
_RETRIABLE_STATUS = frozenset({408, 429, 500, 502, 503, 504})


class JudgeFailure(JudgeError):
    """A judge question that failed; ``outcome`` is one of :data:`OUTCOMES`."""

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


def _not_a_completion(reason: str) -> JudgeFailure:
    failure = JudgeFailure(reason, outcome="invalid_answer", retriable=False)
    failure.not_a_completion = True
    return failure


class ClientMetrics:
    """Collectors of the judge client; children for bounded label sets are bound up front."""

    def __init__(self, registry: CollectorRegistry) -> None:
        r = registry
        self.requests = Counter(
            "llm_sidecar_judge_requests",
            "Judge questions by metric and outcome (retries and repairs included in one).",
            ["metric", "outcome"],
            registry=r,
        )
        self.retries = Counter(
            "llm_sidecar_judge_retries",
            "HTTP attempts to the judge that were retried, by reason.",
            ["reason"],
            registry=r,
        )
        self.duration = Histogram(
            "llm_sidecar_judge_request_duration_seconds",
            "Time to answer one judge question, retries included, by metric.",
            ["metric"],
            buckets=DURATION_BUCKETS,
            registry=r,
        )
        self.tokens = Counter(
            "llm_sidecar_judge_tokens",
            "Tokens the judge reported using, by kind (prompt or completion).",
            ["kind"],
            registry=r,
        )
        self.cost = Counter(
            "llm_sidecar_judge_estimated_cost",
            "Estimated judge cost, in the currency of the configured prices per 1k tokens.",
            registry=r,
        )
        self.cache = Counter(
            "llm_sidecar_judge_cache_lookups",
            "Judge cache lookups by result (hit or miss).",
            ["result"],
            registry=r,
        )
        self.circuit_state = Gauge(
            "llm_sidecar_judge_circuit_state",
            "1 for the judge endpoint's current circuit-breaker state, 0 for the others.",
            ["state"],
            registry=r,
        )
        self.circuit_opens = Counter(
            "llm_sidecar_judge_circuit_opens",
            "Times the judge circuit breaker opened.",
            registry=r,
        )
        self._outcome: dict[tuple[str, str], Any] = {
            (m, o): self.requests.labels(m, o) for m in METRICS for o in OUTCOMES
        }
        self._duration: dict[str, Any] = {m: self.duration.labels(m) for m in METRICS}
        self._retry = {r_: self.retries.labels(r_) for r_ in RETRY_REASONS}
        self.prompt_tokens = self.tokens.labels("prompt")
        self.completion_tokens = self.tokens.labels("completion")
        self.cache_hit = self.cache.labels("hit")
        self.cache_miss = self.cache.labels("miss")
        self._state = {s: self.circuit_state.labels(s) for s in CIRCUIT_STATES}
        self.set_circuit("closed")

    def outcome(self, metric: str, outcome: str, seconds: float) -> None:
        self._outcome[(metric, outcome)].inc()
        if outcome != "circuit_open":
            self._duration[metric].observe(seconds)

    def retry(self, reason: str) -> None:
        self._retry[reason].inc()

    def set_circuit(self, state: str) -> None:
        for name, child in self._state.items():
            child.set(1.0 if name == state else 0.0)
        if state == "open":
            self.circuit_opens.inc()


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
    ) -> None:
        self.threshold = threshold
        self.reset_s = reset_s
        self._clock = clock
        self._on_change = on_change
        self.state = "closed"
        self.failures = 0
        self._opened_at = 0.0
        self._probing = False

    def _set(self, state: str) -> None:
        if state != self.state:
            self.state = state
            log.log(
                logging.WARNING if state == "open" else logging.INFO,
                "judge circuit %s",
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


class JudgeCache:
    """A bounded LRU of parsed judge answers with a time to live."""

    def __init__(
        self, size: int, ttl_s: float, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.size = size
        self.ttl_s = ttl_s
        self._clock = clock
        self._data: OrderedDict[bytes, tuple[float, Any]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._data)

    @staticmethod
    def key(prompt: Prompt, model: str, inputs: Mapping[str, Any]) -> bytes:
        h = hashlib.blake2b(digest_size=16)
        h.update(f"{prompt.id}\x00{prompt.version}\x00{model}\x00".encode())
        h.update(orjson.dumps(dict(inputs), option=orjson.OPT_SORT_KEYS))
        return h.digest()

    def get(self, key: bytes) -> tuple[bool, Any]:
        item = self._data.get(key)
        if item is None:
            return False, None
        stamp, value = item
        if self._clock() - stamp > self.ttl_s:
            del self._data[key]
            return False, None
        self._data.move_to_end(key)
        return True, value

    def put(self, key: bytes, value: Any) -> None:
        if self.size <= 0:
            return
        self._data[key] = (self._clock(), value)
        self._data.move_to_end(key)
        while len(self._data) > self.size:
            self._data.popitem(last=False)


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


class JudgeClient:
    """Asks one OpenAI-compatible endpoint judge questions; see the module docstring."""

    def __init__(
        self,
        settings: JudgeSettings,
        *,
        metrics: ClientMetrics | None = None,
        registry: CollectorRegistry | None = None,
        requests: RequestBudget | None = None,
        on_tokens: Callable[[int], None] | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        clock: Callable[[], float] = time.monotonic,
        log_failures: bool = True,
    ) -> None:
        self.settings = settings
        if metrics is None:
            metrics = ClientMetrics(registry if registry is not None else CollectorRegistry())
        self.metrics = metrics
        self.requests = requests
        self._on_tokens = on_tokens
        self._clock = clock
        self.breaker = CircuitBreaker(
            settings.circuit_failures,
            settings.circuit_reset_s,
            clock=clock,
            on_change=metrics.set_circuit,
        )
        self.cache = JudgeCache(settings.cache_size, settings.cache_ttl_s, clock=clock)
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
        # minute, the rest summed up by reason (replay prints its own summary instead).
        self._failure_logs = (
            LogBudget("judge failures", log, limit=3, clock=clock) if log_failures else None
        )

    async def aclose(self) -> None:
        if self._failure_logs is not None:
            self._failure_logs.flush()
        await self._http.aclose()

    def _log_failure(self, kind: str, message: str) -> None:
        if self._failure_logs is not None and self._failure_logs.allow(kind):
            log.warning("judge at %s: %s", self.settings.base_url, message)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    # -- one question ----------------------------------------------------------------------

    async def ask(self, prompt: Prompt, inputs: Mapping[str, Any], *, metric: str) -> Any:
        """The parsed answer to ``prompt`` on ``inputs``.

        Raises:
            JudgeFailure: the judge did not give a usable answer in time; ``outcome`` says how.
        """
        key = JudgeCache.key(prompt, self.settings.model, inputs)
        hit, value = self.cache.get(key)
        if hit:
            self.metrics.cache_hit.inc()
            return value
        self.metrics.cache_miss.inc()
        loop = asyncio.get_running_loop()
        started = loop.time()
        deadline = started + self.settings.deadline_s
        messages = prompt.messages(inputs)
        try:
            content = await self._complete(messages, deadline)
            try:
                value = prompt.parse(content, inputs)
                self.breaker.success()
            except AnswerError as first:
                self._count_attempt(None)
                log.debug("judge answer to %s unusable (%s); asking again", prompt.id, first)
                messages += [
                    {"role": "assistant", "content": content[:4000]},
                    prompt.repair_message(str(first)),
                ]
                content = await self._complete(messages, deadline)
                try:
                    value = prompt.parse(content, inputs)
                    self.breaker.success()
                except AnswerError as second:
                    self._count_attempt(None)
                    self._log_failure(
                        "unusable answer",
                        f"the answer to {prompt.id} is unusable after one repair: {second}",
                    )
                    raise JudgeFailure(
                        f"judge answer to {prompt.id} unusable after one repair: {second}",
                        outcome="invalid_answer",
                        retriable=False,
                    ) from None
        except JudgeFailure as exc:
            self.metrics.outcome(metric, exc.outcome, loop.time() - started)
            raise
        self.metrics.outcome(metric, "success", loop.time() - started)
        self.cache.put(key, value)
        return value

    async def _complete(self, messages: list[dict[str, str]], deadline: float) -> str:
        """One chat completion, retried; returns the message content."""
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
            except JudgeFailure as exc:
                if not exc.retriable or attempt >= s.max_retries or exc.outcome == "circuit_open":
                    raise
                if exc.retry_after is not None:
                    delay = exc.retry_after
                else:
                    cap = min(s.backoff_max_s, s.backoff_base_s * 2.0**attempt)
                    delay = cap / 2 + random.uniform(0, cap / 2)  # jitter, not crypto
                if loop.time() + delay >= deadline:
                    raise
                self.metrics.retry(exc.outcome)
                attempt += 1
                await asyncio.sleep(delay)

    async def _attempt(self, payload: bytes, deadline: float) -> str:
        loop = asyncio.get_running_loop()
        if self.breaker.is_open:
            raise JudgeFailure("judge circuit is open", outcome="circuit_open", retriable=True)
        if self.requests is not None:
            wait = self.requests.wait_time()
            while wait > 0:
                if loop.time() + wait >= deadline:
                    raise JudgeFailure(
                        "request budget leaves no room before the deadline",
                        outcome="timeout",
                        retriable=False,
                    )
                await asyncio.sleep(wait)
                wait = self.requests.wait_time()
        remaining = deadline - loop.time()
        if remaining <= 0:
            raise JudgeFailure("judge deadline passed", outcome="timeout", retriable=False)
        if not self.breaker.allow():
            raise JudgeFailure("judge circuit is open", outcome="circuit_open", retriable=True)
        try:
            try:
                async with asyncio.timeout(min(self.settings.timeout_s, remaining)):
                    response = await self._http.post(
                        self._url, content=payload, headers={"Content-Type": "application/json"}
                    )
            except (TimeoutError, httpx.TimeoutException):
                raise JudgeFailure(
                    "judge request timed out", outcome="timeout", retriable=True
                ) from None
            except httpx.TransportError as exc:
                raise JudgeFailure(
                    f"judge connection failed: {type(exc).__name__}",
                    outcome="connection_error",
                    retriable=True,
                ) from None
            content = self._read(response)
        except JudgeFailure as exc:
            self._count_attempt(exc)
            if exc.outcome == "invalid_answer" and not exc.not_a_completion:
                # The endpoint answered, but unusably: that neither proves it healthy nor
                # counts as an outage, so a judge mixing errors with garbage still trips.
                self.breaker.release()
            else:
                self.breaker.failure()
            raise
        except BaseException:
            self.breaker.release()  # cancelled: nothing learnt about the endpoint
            raise
        # Not a success yet: ask() calls breaker.success() once the answer parses.
        self.breaker.release()
        return content

    def _count_attempt(self, exc: JudgeFailure | None) -> None:
        """Count a failed HTTP attempt by reason (None: an answer that did not parse)."""
        if exc is None:
            reason = "unparseable answer"
        elif exc.not_a_completion:
            reason = str(exc)  # what came back: "the answer is not JSON (text/html)"
        elif exc.status is not None:
            reason = f"HTTP {exc.status}"
        elif exc.outcome == "connection_error":
            reason = exc.args[0].removeprefix("judge connection failed: ") if exc.args else "?"
            reason = f"connection failed ({reason})"
        else:
            reason = exc.outcome.replace("_", " ")
        if reason in self.failed_attempts or len(self.failed_attempts) < 64:
            self.failed_attempts[reason] = self.failed_attempts.get(reason, 0) + 1
        if exc is not None:
            self._log_failure(reason, f"request failed: {reason}")

    def _read(self, response: httpx.Response) -> str:
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
            failure = JudgeFailure(
                f"judge answered HTTP {status}",
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
        self._count_usage(doc.get("usage"))
        return content

    def _count_usage(self, usage: Any) -> None:
        if not isinstance(usage, dict):
            return
        prompt = usage.get("prompt_tokens")
        completion = usage.get("completion_tokens")
        p = prompt if isinstance(prompt, int) and prompt > 0 else 0
        c = completion if isinstance(completion, int) and completion > 0 else 0
        if not p and not c:
            return
        self.tokens_used["prompt"] += p
        self.tokens_used["completion"] += c
        self.metrics.prompt_tokens.inc(p)
        self.metrics.completion_tokens.inc(c)
        s = self.settings
        cost = p / 1000 * s.price_per_1k_prompt_tokens + c / 1000 * s.price_per_1k_completion_tokens
        if cost:
            self.metrics.cost.inc(cost)
        if self._on_tokens is not None:
            self._on_tokens(p + c)
