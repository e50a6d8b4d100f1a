"""The judge client: questions about events, asked of an OpenAI-compatible chat model.

The HTTP part (circuit breaker, request budget, timeouts, retries with ``Retry-After``) is
:class:`~sidecar.llm.client.ChatClient`, shared with ``llm-sidecar probe``. Each question
(:meth:`JudgeClient.ask`) is one :class:`~sidecar.judge.prompts.Prompt` with its inputs and
adds, around that:

* the **cache**, keyed by prompt id, prompt version, judge model and a hash of the inputs
  (bounded LRU with a TTL), so replays and metrics sharing a step ask once;
* strict parsing of the JSON answer, and **one repair attempt** that shows the judge its
  unusable reply and the reason before giving up with outcome ``invalid_answer``; an
  unusable answer neither counts against the circuit nor resets its count.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any

import httpx
import orjson
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from ..llm.client import (
    CIRCUIT_STATES,
    OUTCOMES,
    RETRY_REASONS,
    ChatClient,
    CircuitBreaker,
    parse_retry_after,
)
from ..llm.client import ChatFailure as JudgeFailure
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
    "parse_retry_after",
]

log = logging.getLogger(__name__)

DURATION_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 20.0, 40.0, 60.0, 120.0)


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


class JudgeClient(ChatClient):
    """Asks one OpenAI-compatible endpoint judge questions; see the module docstring."""

    settings: JudgeSettings

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
        if metrics is None:
            metrics = ClientMetrics(registry if registry is not None else CollectorRegistry())
        self.metrics = metrics
        self._on_tokens = on_tokens
        super().__init__(
            settings,
            requests=requests,
            on_retry=metrics.retry,
            on_circuit=metrics.set_circuit,
            on_usage=self._usage,
            transport=transport,
            clock=clock,
            log_failures=log_failures,
            name="judge",
            logger=log,
        )
        self.cache = JudgeCache(settings.cache_size, settings.cache_ttl_s, clock=clock)

    def _usage(self, p: int, c: int) -> None:
        self.metrics.prompt_tokens.inc(p)
        self.metrics.completion_tokens.inc(c)
        s = self.settings
        cost = p / 1000 * s.price_per_1k_prompt_tokens + c / 1000 * s.price_per_1k_completion_tokens
        if cost:
            self.metrics.cost.inc(cost)
        if self._on_tokens is not None:
            self._on_tokens(p + c)

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
            content = (await self._complete(messages, deadline)).content
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
                content = (await self._complete(messages, deadline)).content
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
