"""The sampled LLM judge as one component: sampler, bounded pool, client and metrics.

:meth:`JudgeService.submit` is an App verdict listener: it runs on the hot path, decides per
verdict whether the event is judged (:mod:`sidecar.judge.sampler`), and offers a job to the bounded
queue without ever waiting. Workers then ask the judge the questions each applicable metric
needs (:mod:`sidecar.judge.prompts`), score the answers with :mod:`sidecar.judge.metrics`,
write the scores into ``verdict.judge``, observe them, and hand them to ``on_scores`` with the
event's inverse-probability weight (see :mod:`sidecar.judge.sampler` for how windows use it).

Because judging finishes after the hot path has moved on, a verdict already written to the
verdict topic does not carry its judge scores; ``replay --judge`` uses :meth:`judge_batch`,
which waits, so its output does.

Which metrics apply to an event depends only on the fields it has: a query (``prompt``) and
an answer (``response``) for the answer metrics, ``contexts`` for the context and retrieval
metrics, faithfulness and hallucination, ``ground_truths`` for the reference-based ones, and
``task: summarization`` for summary coherence (where ``prompt`` is the text summarised, so
only coherence, bias and toxicity apply). Metrics that do not apply are skipped silently.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import httpx
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

from ..errors import ConfigError
from ..events import Event
from ..lifecycle import Lifecycle
from . import metrics as m
from .client import ClientMetrics, JudgeClient, JudgeFailure
from .config import METRICS, JudgeSettings
from .pool import JudgePool
from .prompts import PROMPT_SET_VERSION, PROMPTS, Correctness
from .sampler import RequestBudget, Sampler, TokenBudget

if TYPE_CHECKING:
    from ..pipeline import Verdict
    from ..rules import RuleSet

__all__ = ["REQUIREMENTS", "JudgeMetrics", "JudgeService", "ScoreCallback", "applicable"]

log = logging.getLogger(__name__)

ScoreCallback = Callable[["Verdict", Mapping[str, float], float], None]
"""``on_scores(verdict, scores, weight)``: called on the event loop for every judged event."""

SCORE_BUCKETS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 2.0, 3.0, 4.0, 5.0)
EVENT_OUTCOMES: Final = ("scored", "partial", "failed", "error")
"""``error``: the judging of an event stopped on a fault of llm-sidecar itself (logged)."""

# query, answer, contexts, ground truths, summarization, counterfactual answers
_Q, _A, _C, _G, _S, _F = 1, 2, 4, 8, 16, 32

REQUIREMENTS: Final[Mapping[str, int]] = {
    "answer_correctness": _A | _G,
    "answer_relevance": _Q | _A,
    "answer_similarity": _A | _G,
    "bias": _A,
    "toxicity": _A,
    "context_precision": _Q | _C | _G,
    "context_recall": _C | _G,
    "context_relevance": _Q | _C,
    "faithfulness": _A | _C,
    "hallucination": _A | _C,
    "summary_coherence": _Q | _A | _S,
    "retrieval_precision": _Q | _C,
    "average_precision": _Q | _C,
    "reciprocal_rank": _Q | _C,
    "hit_rate": _Q | _C,
    "ndcg": _Q | _C,
    "refusal": _A,
    "attack_attempt": _Q,
    "rgb_negative_rejection": _Q | _A | _C,
    "rgb_error_detection": _Q | _A | _C | _F,
    "rgb_error_correction": _Q | _A | _G | _F,
}
"""What each metric needs of an event, as a bit mask of the features above."""

_SUMMARY_METRICS = frozenset({"summary_coherence", "bias", "toxicity"})


def _features(event: Event) -> int:
    f = 0
    if event.prompt:
        f |= _Q
    if event.response:
        f |= _A
    if any(c for c in event.contexts):
        f |= _C
    if any(g for g in event.ground_truths):
        f |= _G
    if event.task == "summarization":
        f |= _S
    if any(a for a in event.counterfactual_answers):
        f |= _F
    return f


def applicable(event: Event, metrics: Iterable[str]) -> tuple[str, ...]:
    """The metrics among ``metrics`` that this event has the fields for."""
    return _for_features(_features(event), tuple(metrics))


def _for_features(f: int, metrics: tuple[str, ...]) -> tuple[str, ...]:
    summary = bool(f & _S)
    return tuple(
        name
        for name in metrics
        if REQUIREMENTS[name] & f == REQUIREMENTS[name]
        and (not summary or name in _SUMMARY_METRICS)
    )


# --- scoring -----------------------------------------------------------------------------

Ask = Callable[[str, Mapping[str, Any]], Awaitable[Any]]


async def _statements(ask: Ask, text: str) -> list[str]:
    result: list[str] = await ask("statements", {"text": text})
    return result


async def _answer_relevance(ask: Ask, e: Event) -> float:
    statements = await _statements(ask, e.response or "")
    if not statements:
        return m.answer_relevance([])
    verdicts = await ask("statement_relevance", {"query": e.prompt, "statements": statements})
    return m.answer_relevance(verdicts)


async def _opinion_share(ask: Ask, e: Event, step: str, fn: Callable[[list[bool]], float]) -> float:
    opinions = await ask("opinions", {"text": e.response})
    if not opinions:
        return fn([])  # no opinions: 0, as the source prescribes
    return fn(await ask(step, {"opinions": opinions}))


async def _answer_correctness(ask: Ask, e: Event) -> float:
    answer = await _statements(ask, e.response or "")
    counts = []
    for truth in _truths(e):
        reference = await _statements(ask, truth)
        if not answer or not reference:
            counts.append((0, len(answer), len(reference)))  # no tp possible: scores 0
            continue
        c: Correctness = await ask(
            "correctness",
            {
                "query": e.prompt or "",
                "answer_statements": answer,
                "reference_statements": reference,
            },
        )
        counts.append((c.tp, c.fp, c.fn))
    return m.best_answer_correctness(counts)


async def _answer_similarity(ask: Ask, e: Event) -> float:
    scores = []
    for truth in _truths(e):
        value = await ask(
            "answer_similarity", {"query": e.prompt or "", "answer": e.response, "reference": truth}
        )
        scores.append(m.answer_similarity(value))
    return m.best_over_ground_truths(scores)


async def _context_precision(ask: Ask, e: Event) -> float:
    contexts = _contexts(e)
    per_truth = [
        await ask("context_usefulness", {"query": e.prompt, "reference": t, "contexts": contexts})
        for t in _truths(e)
    ]
    return m.context_precision(m.aggregate_context_verdicts(per_truth))


async def _context_recall(ask: Ask, e: Event) -> float:
    contexts = _contexts(e)
    per_truth: list[list[bool]] = []
    for truth in _truths(e):
        statements = await _statements(ask, truth)
        if not statements:
            per_truth.append([])
            continue
        per_truth.append(
            await ask("statement_attribution", {"contexts": contexts, "statements": statements})
        )
    return m.best_context_recall(per_truth)


def _relevance_family(
    fn: Callable[[list[bool]], float],
) -> Callable[[Ask, Event], Awaitable[float]]:
    """Context relevance and the retrieval measures share one verdict per context."""

    async def score(ask: Ask, e: Event) -> float:
        return fn(await ask("context_relevance", {"query": e.prompt, "contexts": _contexts(e)}))

    return score


async def _faithfulness(ask: Ask, e: Event) -> float:
    claims = await ask("claims", {"text": e.response})
    if not claims:
        return m.faithfulness([])
    return m.faithfulness(await ask("claim_support", {"contexts": _contexts(e), "claims": claims}))


async def _hallucination(ask: Ask, e: Event) -> float:
    verdicts = await ask("contradiction", {"text": e.response, "contexts": _contexts(e)})
    return m.hallucination(verdicts)


async def _summary_coherence(ask: Ask, e: Event) -> float:
    score = await ask("summary_coherence", {"source": e.prompt, "summary": e.response})
    return float(m.summary_coherence(score))


def _contexts(e: Event) -> list[str]:
    return [c for c in e.contexts if c]


def _truths(e: Event) -> list[str]:
    return [g for g in e.ground_truths if g]


async def _yes_no(ask: Ask, step: str, inputs: Mapping[str, Any]) -> float:
    """A judged yes/no as a score: 1.0 for yes, 0.0 for no (their mean is a rate)."""
    return 1.0 if await ask(step, inputs) else 0.0


async def _refusal(ask: Ask, e: Event) -> float:
    return await _yes_no(ask, "refusal", {"query": e.prompt or "", "answer": e.response})


async def _attack_attempt(ask: Ask, e: Event) -> float:
    inputs: dict[str, Any] = {"query": e.prompt or ""}
    if any(e.contexts):
        inputs["contexts"] = _contexts(e)
    return await _yes_no(ask, "attack_attempt", inputs)


async def _negative_rejection(ask: Ask, e: Event) -> float:
    inputs = {"query": e.prompt, "contexts": _contexts(e), "answer": e.response}
    return await _yes_no(ask, "negative_rejection", inputs)


async def _error_detection(ask: Ask, e: Event) -> float:
    inputs = {"query": e.prompt, "contexts": _contexts(e), "answer": e.response}
    return await _yes_no(ask, "error_detection", inputs)


async def _error_correction(ask: Ask, e: Event) -> float:
    inputs = {
        "query": e.prompt,
        "reference": _truths(e)[0],
        "false_answer": next(a for a in e.counterfactual_answers if a),
        "answer": e.response,
    }
    return await _yes_no(ask, "error_correction", inputs)


SCORERS: Final[Mapping[str, Callable[[Ask, Event], Awaitable[float]]]] = {
    "answer_correctness": _answer_correctness,
    "answer_relevance": _answer_relevance,
    "answer_similarity": _answer_similarity,
    "bias": lambda ask, e: _opinion_share(ask, e, "bias_verdicts", m.bias),
    "toxicity": lambda ask, e: _opinion_share(ask, e, "toxicity_verdicts", m.toxicity),
    "context_precision": _context_precision,
    "context_recall": _context_recall,
    "context_relevance": _relevance_family(m.context_relevance),
    "faithfulness": _faithfulness,
    "hallucination": _hallucination,
    "summary_coherence": _summary_coherence,
    "retrieval_precision": _relevance_family(m.retrieval_precision),
    "average_precision": _relevance_family(m.average_precision),
    "reciprocal_rank": _relevance_family(m.reciprocal_rank),
    "hit_rate": _relevance_family(m.hit_rate),
    "ndcg": _relevance_family(m.ndcg),
    "refusal": _refusal,
    "attack_attempt": _attack_attempt,
    "rgb_negative_rejection": _negative_rejection,
    "rgb_error_detection": _error_detection,
    "rgb_error_correction": _error_correction,
}


# --- metrics -----------------------------------------------------------------------------


class JudgeMetrics(ClientMetrics):
    """Every ``llm_sidecar_judge_*`` collector: the client's plus queue, sampler and scores."""

    def __init__(self, registry: CollectorRegistry) -> None:
        super().__init__(registry)
        r = registry
        self.scores = Histogram(
            "llm_sidecar_judge_score",
            "Judged scores by metric (0 to 1; summary coherence 1 to 5).",
            ["metric"],
            buckets=SCORE_BUCKETS,
            registry=r,
        )
        self.events = Counter(
            "llm_sidecar_judge_events",
            "Events the judge worked on, by outcome (scored: every metric; partial; failed; "
            "error: a fault of llm-sidecar, logged).",
            ["outcome"],
            registry=r,
        )
        self.queue_depth = Gauge(
            "llm_sidecar_judge_queue_depth", "Judge jobs waiting in the queue.", registry=r
        )
        self.in_flight = Gauge(
            "llm_sidecar_judge_in_flight", "Judge jobs being worked on.", registry=r
        )
        self.queue_capacity = Gauge(
            "llm_sidecar_judge_queue_capacity", "Size of the judge queue.", registry=r
        )
        self._score: dict[str, Any] = {name: self.scores.labels(name) for name in METRICS}
        self._event = {o: self.events.labels(o) for o in EVENT_OUTCOMES}

    def observe_scores(self, scores: Mapping[str, float]) -> None:
        for name, value in scores.items():
            self._score[name].observe(value)

    def event(self, outcome: str) -> None:
        self._event[outcome].inc()


class _SamplerCollector(Collector):
    """Skip and sample counts and the shedding factor, read from the sampler at scrape time."""

    def __init__(self, sampler: Sampler) -> None:
        self.sampler = sampler

    def describe(self) -> list[Any]:
        return list(self._families(empty=True))

    def collect(self) -> Iterable[Any]:
        return self._families(empty=False)

    def _families(self, *, empty: bool) -> Iterable[Any]:
        s = self.sampler
        skipped = CounterMetricFamily(
            "llm_sidecar_judge_skipped",
            "Events that would have been judged but were not, by reason.",
            labels=["reason"],
        )
        taken = CounterMetricFamily(
            "llm_sidecar_judge_samples",
            "Events sent to the judge, by why they were taken.",
            labels=["reason"],
        )
        factor = GaugeMetricFamily(
            "llm_sidecar_judge_sample_rate_factor",
            "Multiplier on every configured sample rate (below 1 while shedding load).",
        )
        if not empty:
            for reason, n in list(s.skipped.items()):
                skipped.add_metric([reason], n)
            for reason, n in list(s.taken.items()):
                taken.add_metric([reason], n)
            factor.add_metric([], s.factor)
        return [skipped, taken, factor]


# --- the service -------------------------------------------------------------------------


@dataclass(slots=True)
class _Job:
    verdict: Verdict
    metrics: tuple[str, ...]
    weight: float


class JudgeService(Lifecycle):
    """Sampled, bounded, non-blocking LLM judging of verdicts; see the module docstring."""

    def __init__(
        self,
        settings: JudgeSettings,
        registry: CollectorRegistry,
        *,
        on_scores: ScoreCallback | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        clock: Callable[[], float] = time.monotonic,
        worker: bool = False,
        share: int = 1,
        log_failures: bool = True,
    ) -> None:
        self.base_settings = settings
        # A scale-out worker enforces its share of the budgets (judge.workers); one of the
        # processes of `run --workers N` enforces 1/N (share).
        self.worker = worker
        self.share = share
        settings = settings.worker_share(None if worker else share)
        self.settings = settings
        self.on_scores = on_scores
        self.metrics = JudgeMetrics(registry)
        self.request_budget = RequestBudget(settings.max_requests_per_s, clock=clock)
        self.token_budget = TokenBudget(settings.max_tokens_per_minute, clock=clock)
        self.client = JudgeClient(
            settings,
            metrics=self.metrics,
            requests=self.request_budget,
            on_tokens=self.token_budget.add,
            transport=transport,
            clock=clock,
            log_failures=log_failures,
        )
        self.sampler = Sampler(
            settings,
            clock=clock,
            requests=self.request_budget,
            tokens=self.token_budget,
            circuit_open=lambda: self.client.breaker.is_open,
        )
        self.pool: JudgePool[_Job] = JudgePool(
            self._run,
            queue_size=settings.queue_size,
            concurrency=settings.concurrency,
            on_failure=self._fault,
        )
        registry.register(_SamplerCollector(self.sampler))
        self.metrics.queue_depth.set_function(lambda: self.pool.depth)
        self.metrics.in_flight.set_function(lambda: self.pool.in_flight)
        self.metrics.queue_capacity.set(settings.queue_size)
        self._metrics = tuple(settings.metrics)
        self._by_features: dict[int, tuple[str, ...]] = {}
        self.outcomes: dict[str, int] = dict.fromkeys(EVENT_OUTCOMES, 0)
        """Events judged so far by outcome (scored, partial, failed): for summaries."""
        self.failures: dict[str, int] = {}
        """Metric scores that failed, by outcome (``server_error``, ``circuit_open``, ...)."""
        self._running = False
        self._closed = False

    # -- lifecycle -------------------------------------------------------------------------

    async def start(self) -> None:
        if self._running:
            return
        if self._closed:
            raise RuntimeError("a stopped JudgeService cannot start again")
        self.pool.start()
        self._running = True
        log.info(
            "judge: %s at %s%s, metrics %s, sample rate %g, prompt set v%s",
            self.settings.model,
            self.settings.base_url,
            "" if "base_url" in self.base_settings.model_fields_set else " (judge.base_url unset)",
            ",".join(self._metrics),
            self.settings.sample_rate,
            PROMPT_SET_VERSION,
        )

    async def stop(self, deadline: float | None = None) -> None:
        """Stop taking events, finish queued ones within ``deadline`` seconds, close; idempotent."""
        if self._closed:
            return
        self._running = False
        self._closed = True
        wait = self.settings.drain_timeout_s if deadline is None else deadline
        abandoned = await self.pool.stop(wait)
        if abandoned:
            self.sampler.count_skip("stopped", abandoned)
        await self.client.aclose()

    # -- configuration ---------------------------------------------------------------------

    def apply_rules(self, ruleset: RuleSet) -> bool:
        """Apply a rule set's ``judge:`` overrides and learn its rule-to-check mapping.

        Returns False (and keeps the current settings) when the overrides are invalid.
        """
        try:
            settings = self.base_settings.merge(ruleset.judge)
        except ConfigError as exc:
            log.error("judge settings in the rules ignored: %s", exc)
            return False
        settings = settings.worker_share(None if self.worker else self.share)
        self.settings = settings
        self._metrics = tuple(settings.metrics)
        self._by_features = {}
        self.sampler.configure(settings)
        self.sampler.set_rule_checks({r.id: r.check_name for r in ruleset.rules}, ruleset.version)
        return True

    # -- the hot path ----------------------------------------------------------------------

    def submit(self, verdicts: Sequence[Verdict]) -> None:
        """Sample ``verdicts`` and queue the chosen ones; never waits, never raises."""
        if not self._running:
            self.sampler.count_skip("stopped", len(verdicts))
            return
        decide = self.sampler.decide
        pool = self.pool
        by_features = self._by_features
        for verdict in verdicts:
            decision = decide(verdict)
            if not decision.take:
                continue
            if pool.full:
                self.sampler.reject(decision, "queue_full")
                continue
            f = _features(verdict.event)
            metrics = by_features.get(f)
            if metrics is None:
                metrics = by_features[f] = _for_features(f, self._metrics)
            if not metrics:
                self.sampler.reject(decision, "not_applicable")
            elif not pool.offer(_Job(verdict, metrics, decision.weight)):
                self.sampler.reject(decision, "queue_full")

    # -- judging ---------------------------------------------------------------------------

    def select(self, verdicts: Sequence[Verdict]) -> list[tuple[Verdict, float]]:
        """Sample without queueing: the chosen events and their weights.

        Used in scale-out mode, where the chosen events are published to the judge topic and
        judged by ``llm-sidecar judge`` workers; the budgets are theirs to keep.
        """
        chosen = []
        for verdict in verdicts:
            decision = self.sampler.decide(verdict, check_budgets=False)
            if not decision.take:
                continue
            if applicable(verdict.event, self._metrics):
                chosen.append((verdict, decision.weight))
            else:
                self.sampler.reject(decision, "not_applicable")
        return chosen

    async def judge_batch(
        self,
        verdicts: Sequence[Verdict],
        *,
        progress: Callable[[int, int], None] | None = None,
    ) -> int:
        """Judge the sampled events of ``verdicts`` now and wait for them (replay).

        The same sampling as :meth:`submit`, but nothing is dropped for want of room: requests
        are paced to the request budget, concurrency is capped, and the token budget does not
        apply. Returns how many events were judged; ``progress(done, total)`` follows along.
        """
        return await self.judge_now(self.select(verdicts), progress=progress)

    async def judge_now(
        self,
        chosen: Sequence[tuple[Verdict, float]],
        *,
        progress: Callable[[int, int], None] | None = None,
    ) -> int:
        """Judge already-sampled events with capped concurrency and wait for all of them."""
        jobs = [_Job(v, applicable(v.event, self._metrics), w) for v, w in chosen]
        jobs = [j for j in jobs if j.metrics]
        if not jobs:
            return 0
        gate = asyncio.Semaphore(self.settings.concurrency)
        done = 0

        async def one(job: _Job) -> None:
            nonlocal done
            async with gate:
                await self._run(job)
            done += 1
            if progress is not None:
                progress(done, len(jobs))

        await asyncio.gather(*(one(j) for j in jobs))
        return len(jobs)

    async def judge_within(
        self, chosen: Sequence[tuple[Verdict, float]], seconds: float
    ) -> tuple[int, list[tuple[Verdict, float]]]:
        """Judge already-sampled events for at most ``seconds`` (a worker's batch).

        Concurrency is capped and requests are paced as in :meth:`judge_now`; an event also
        waits while the token budget (this worker's share) is spent. Returns how many events
        were judged and the events that did not finish in time (cancelled, not judged).
        """
        jobs = [_Job(v, applicable(v.event, self._metrics), w) for v, w in chosen]
        jobs = [j for j in jobs if j.metrics]
        if not jobs:
            return 0, []
        gate = asyncio.Semaphore(self.settings.concurrency)
        tokens = self.token_budget

        async def one(job: _Job) -> None:
            async with gate:
                # The budget refills as its minute slides on: there is no event to wait for.
                while tokens.exhausted:  # noqa: ASYNC110
                    await asyncio.sleep(0.5)
                await self._run(job)

        tasks = {asyncio.create_task(one(j)): j for j in jobs}
        _, pending = await asyncio.wait(tasks, timeout=seconds)
        for t in pending:
            t.cancel()
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)
        unfinished = [(j.verdict, j.weight) for t, j in tasks.items() if t in pending]  # in order
        return len(jobs) - len(pending), unfinished

    async def score(self, event: Event, metrics: Iterable[str]) -> tuple[dict[str, float], int]:
        """Ask the judge for ``metrics`` on ``event``: the scores, and how many failed."""
        names = tuple(metrics)
        scores: dict[str, float] = {}
        failed = 0
        for name in names:

            def ask(step: str, inputs: Mapping[str, Any], _metric: str = name) -> Awaitable[Any]:
                return self.client.ask(PROMPTS[step], inputs, metric=_metric)

            try:
                scores[name] = float(await SCORERS[name](ask, event))
            except JudgeFailure as exc:
                failed += 1
                log.debug("judge: %s on event %s failed: %s", name, event.id, exc)
                if exc.outcome == "circuit_open":  # the rest would fail the same way
                    self._count_failure("circuit_open", len(names) - len(scores) - failed + 1)
                    failed = len(names) - len(scores)
                    break
                self._count_failure(exc.outcome)
            except ValueError as exc:  # the arithmetic refused what the judge said
                failed += 1
                self._count_failure("unscorable")
                log.debug("judge: %s on event %s unscorable: %s", name, event.id, exc)
        return scores, failed

    def _count_failure(self, reason: str, n: int = 1) -> None:
        self.failures[reason] = self.failures.get(reason, 0) + n

    def _fault(self) -> None:
        self.outcomes["error"] += 1
        self.metrics.event("error")

    async def _run(self, job: _Job) -> None:
        verdict = job.verdict
        scores, failed = await self.score(verdict.event, job.metrics)
        outcome = "failed" if not scores else "partial" if failed else "scored"
        self.outcomes[outcome] += 1
        self.metrics.event(outcome)
        if not scores:
            return
        verdict.judge.update(scores)
        self.metrics.observe_scores(scores)
        if self.on_scores is not None:
            try:
                self.on_scores(verdict, scores, job.weight)
            except Exception:
                log.exception("judge: on_scores callback failed")
