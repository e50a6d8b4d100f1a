"""The judge client against a scripted OpenAI-compatible server: real HTTP, real httpx."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest
from prometheus_client import CollectorRegistry

from sidecar.errors import JudgeError
from sidecar.judge.client import (
    CircuitBreaker,
    JudgeCache,
    JudgeClient,
    JudgeFailure,
    parse_retry_after,
)
from sidecar.judge.config import JudgeSettings
from sidecar.judge.prompts import PROMPTS, Prompt
from sidecar.testing import Fault, ScriptedJudge

from .conftest import FakeClock

Make = Callable[..., JudgeSettings]
OPINIONS = PROMPTS["opinions"]
RELEVANCE = PROMPTS["context_relevance"]


def sample(registry: CollectorRegistry, name: str, **labels: str) -> float:
    value = registry.get_sample_value(name, labels)
    return 0.0 if value is None else value


async def test_answer_usage_and_headers(
    judge: ScriptedJudge, judge_settings: Make, registry: CollectorRegistry
) -> None:
    settings = judge_settings(
        api_key="sk-test", extra_headers={"X-Team": "ml"}, price_per_1k_prompt_tokens=2.0
    )
    async with JudgeClient(settings, registry=registry) as client:
        got = await client.ask(
            OPINIONS, {"text": "I think tea is better. Water is wet."}, metric="bias"
        )
    assert got == ["I think tea is better."]
    assert judge.headers["Authorization"] == "Bearer sk-test"
    assert judge.headers["X-Team"] == "ml"
    body = judge.requests[-1]
    assert body["model"] == "judge-test"
    assert body["response_format"] == {"type": "json_object"}
    assert body["temperature"] == 0.0
    assert (
        sample(registry, "llm_sidecar_judge_requests_total", metric="bias", outcome="success") == 1
    )
    prompt_tokens = sample(registry, "llm_sidecar_judge_tokens_total", kind="prompt")
    assert prompt_tokens > 10
    assert sample(registry, "llm_sidecar_judge_tokens_total", kind="completion") > 0
    cost = sample(registry, "llm_sidecar_judge_estimated_cost_total")
    assert cost == pytest.approx(prompt_tokens / 1000 * 2.0)
    assert "sk-test" not in repr(settings)


async def test_azure_uses_api_key_header_and_version(
    judge: ScriptedJudge, judge_settings: Make
) -> None:
    settings = judge_settings(api_key="azure-key", api_version="2024-06-01", json_mode=False)
    async with JudgeClient(settings) as client:
        await client.ask(OPINIONS, {"text": "Plain."}, metric="bias")
    assert judge.headers["api-key"] == "azure-key"
    assert "Authorization" not in judge.headers
    assert judge.query == {"api-version": "2024-06-01"}
    assert "response_format" not in judge.requests[-1]


async def test_server_errors_are_retried(
    judge: ScriptedJudge, judge_settings: Make, registry: CollectorRegistry
) -> None:
    judge.fail(500, times=2)
    async with JudgeClient(judge_settings(max_retries=3), registry=registry) as client:
        assert await client.ask(OPINIONS, {"text": "No views."}, metric="bias") == []
    assert judge.total == 3
    assert sample(registry, "llm_sidecar_judge_retries_total", reason="server_error") == 2
    assert (
        sample(registry, "llm_sidecar_judge_requests_total", metric="bias", outcome="success") == 1
    )


async def test_gives_up_after_max_retries(
    judge: ScriptedJudge, judge_settings: Make, registry: CollectorRegistry
) -> None:
    judge.fail(502, times=10)
    async with JudgeClient(judge_settings(max_retries=2), registry=registry) as client:
        with pytest.raises(JudgeFailure) as info:
            await client.ask(OPINIONS, {"text": "x"}, metric="bias")
    assert isinstance(info.value, JudgeError)
    assert info.value.outcome == "server_error"
    assert info.value.status == 502
    assert judge.total == 3
    assert (
        sample(registry, "llm_sidecar_judge_requests_total", metric="bias", outcome="server_error")
        == 1
    )


async def test_429_waits_for_retry_after(judge: ScriptedJudge, judge_settings: Make) -> None:
    judge.fail(429, retry_after=0.3)
    async with JudgeClient(judge_settings(backoff_base_s=0.001, backoff_max_s=0.001)) as client:
        started = time.monotonic()
        await client.ask(OPINIONS, {"text": "x"}, metric="bias")
        elapsed = time.monotonic() - started
    assert judge.total == 2
    assert elapsed >= 0.3


async def test_retry_after_past_the_deadline_gives_up_at_once(
    judge: ScriptedJudge, judge_settings: Make
) -> None:
    judge.fail(503, retry_after=30)
    async with JudgeClient(judge_settings(deadline_s=3.0)) as client:
        started = time.monotonic()
        with pytest.raises(JudgeFailure) as info:
            await client.ask(OPINIONS, {"text": "x"}, metric="bias")
    assert info.value.outcome == "server_error"
    assert time.monotonic() - started < 1.0
    assert judge.total == 1


async def test_client_errors_are_not_retried(judge: ScriptedJudge, judge_settings: Make) -> None:
    judge.fail(401, times=5)
    async with JudgeClient(judge_settings()) as client:
        with pytest.raises(JudgeFailure) as info:
            await client.ask(OPINIONS, {"text": "x"}, metric="bias")
    assert info.value.outcome == "client_error"
    assert not info.value.retriable
    assert judge.total == 1


async def test_hang_hits_the_per_call_timeout(
    judge: ScriptedJudge, judge_settings: Make, registry: CollectorRegistry
) -> None:
    judge.hang(times=1)
    settings = judge_settings(timeout_s=0.2, deadline_s=2.0, max_retries=1)
    async with JudgeClient(settings, registry=registry) as client:
        started = time.monotonic()
        assert await client.ask(OPINIONS, {"text": "x"}, metric="toxicity") == []
    assert 0.2 <= time.monotonic() - started < 1.5
    assert sample(registry, "llm_sidecar_judge_retries_total", reason="timeout") == 1


async def test_total_deadline_bounds_retries(judge: ScriptedJudge, judge_settings: Make) -> None:
    judge.hang(times=100)
    settings = judge_settings(timeout_s=0.2, deadline_s=0.5, max_retries=10)
    async with JudgeClient(settings) as client:
        started = time.monotonic()
        with pytest.raises(JudgeFailure) as info:
            await client.ask(OPINIONS, {"text": "x"}, metric="bias")
    assert info.value.outcome == "timeout"
    assert time.monotonic() - started < 0.9


@pytest.mark.parametrize("fault", ["malformed", "wrong_schema"])
async def test_one_repair_attempt_fixes_a_bad_answer(
    judge: ScriptedJudge, judge_settings: Make, fault: str
) -> None:
    judge.inject(Fault(fault))  # type: ignore[arg-type]
    async with JudgeClient(judge_settings()) as client:
        got = await client.ask(
            RELEVANCE,
            {"query": "cats", "contexts": ["cats purr", "dogs"]},
            metric="context_relevance",
        )
    assert got == [True, False]
    assert judge.total == 2
    repair = judge.requests[-1]["messages"]
    assert [m["role"] for m in repair] == ["system", "user", "assistant", "user"]
    assert "could not be used" in repair[-1]["content"]


async def test_second_bad_answer_is_invalid(
    judge: ScriptedJudge, judge_settings: Make, registry: CollectorRegistry
) -> None:
    judge.malformed(times=2)
    async with JudgeClient(judge_settings(), registry=registry) as client:
        with pytest.raises(JudgeFailure) as info:
            await client.ask(OPINIONS, {"text": "x"}, metric="bias")
        assert client.breaker.state == "closed"  # the endpoint is up; its answer was bad
    assert info.value.outcome == "invalid_answer"
    assert judge.total == 2
    assert (
        sample(
            registry, "llm_sidecar_judge_requests_total", metric="bias", outcome="invalid_answer"
        )
        == 1
    )


async def test_not_a_chat_completion(judge: ScriptedJudge, judge_settings: Make) -> None:
    judge.inject(Fault("not_completion"))
    async with JudgeClient(judge_settings()) as client:
        with pytest.raises(JudgeFailure) as info:
            await client.ask(OPINIONS, {"text": "x"}, metric="bias")
        assert client.failed_attempts == {"the answer is not JSON (text/html)": 1}
    assert info.value.outcome == "invalid_answer"


async def test_a_base_url_that_is_not_a_chat_api_is_named_and_opens_the_circuit(
    judge: ScriptedJudge, judge_settings: Make
) -> None:
    """A base URL that reaches a web page (a gateway's login, a UI) answers every request
    with HTTP 200 and HTML. The failures used to read "HTTP 200", and the circuit stayed
    closed, so every sampled event kept asking. Now they say what came back, and count
    against the circuit like an outage; a completion whose text does not parse still does
    not (test_second_bad_answer_is_invalid)."""
    judge.inject(Fault("not_completion", times=10))
    settings = judge_settings(max_retries=0, circuit_failures=3, circuit_reset_s=60)
    async with JudgeClient(settings) as client:
        for _ in range(5):
            with pytest.raises(JudgeFailure):
                await client.ask(OPINIONS, {"text": "x"}, metric="bias")
        assert client.breaker.state == "open"
        assert client.failed_attempts["the answer is not JSON (text/html)"] == 3
    assert judge.total == 3  # the last two were refused without a request


async def test_verdict_count_must_match(judge: ScriptedJudge, judge_settings: Make) -> None:
    judge.verdicts("context_relevance", ["yes"])  # two contexts, one verdict: always wrong
    async with JudgeClient(judge_settings()) as client:
        with pytest.raises(JudgeFailure) as info:
            await client.ask(RELEVANCE, {"query": "q", "contexts": ["a", "b"]}, metric="hit_rate")
    assert info.value.outcome == "invalid_answer"
    assert judge.total == 2


async def test_circuit_opens_then_probes(
    judge: ScriptedJudge, judge_settings: Make, registry: CollectorRegistry
) -> None:
    judge.fail(500, times=2)
    settings = judge_settings(max_retries=0, circuit_failures=2, circuit_reset_s=0.2)
    async with JudgeClient(settings, registry=registry) as client:
        for _ in range(2):
            with pytest.raises(JudgeFailure):
                await client.ask(OPINIONS, {"text": "x"}, metric="bias")
        assert client.breaker.state == "open"
        assert sample(registry, "llm_sidecar_judge_circuit_state", state="open") == 1
        with pytest.raises(JudgeFailure) as info:
            await client.ask(OPINIONS, {"text": "y"}, metric="bias")
        assert info.value.outcome == "circuit_open"
        assert judge.total == 2  # refused without a request
        await asyncio_sleep(0.25)
        assert await client.ask(OPINIONS, {"text": "z"}, metric="bias") == []
        assert client.breaker.state == "closed"
    assert judge.total == 3
    assert sample(registry, "llm_sidecar_judge_circuit_opens_total") == 1
    assert sample(registry, "llm_sidecar_judge_circuit_state", state="closed") == 1


def test_breaker_half_open_allows_one_probe_and_reopens_on_failure() -> None:
    clock = FakeClock()
    states: list[str] = []
    breaker = CircuitBreaker(3, 10.0, clock=clock, on_change=states.append)
    for _ in range(2):
        breaker.failure()
    breaker.success()  # a success resets the consecutive count
    for _ in range(3):
        assert breaker.allow()
        breaker.failure()
    assert breaker.is_open and not breaker.allow()
    clock.advance(10)
    assert breaker.allow()  # the probe
    assert breaker.state == "half_open"
    assert not breaker.allow()  # only one at a time
    breaker.failure()
    assert breaker.state == "open" and breaker.is_open
    clock.advance(10)
    assert breaker.allow()
    breaker.release()  # a cancelled probe frees the slot
    assert breaker.allow()
    breaker.success()
    assert states == ["open", "half_open", "open", "half_open", "closed"]


async def test_cache_keys_on_prompt_version_and_inputs(
    judge: ScriptedJudge, judge_settings: Make
) -> None:
    async with JudgeClient(judge_settings()) as client:
        for _ in range(3):
            await client.ask(OPINIONS, {"text": "I think so."}, metric="bias")
        assert judge.total == 1
        await client.ask(OPINIONS, {"text": "I think not."}, metric="toxicity")
        assert judge.total == 2
        v2 = Prompt(OPINIONS.id, "2", OPINIONS.instructions, OPINIONS.answer_shape, OPINIONS.read)
        await client.ask(v2, {"text": "I think so."}, metric="bias")
        assert judge.total == 3


def test_cache_is_bounded_and_expires() -> None:
    clock = FakeClock()
    cache = JudgeCache(2, 5.0, clock=clock)
    for key in (b"a", b"b", b"c"):
        cache.put(key, key)
    assert len(cache) == 2
    assert cache.get(b"a") == (False, None)
    assert cache.get(b"c") == (True, b"c")
    clock.advance(6)
    assert cache.get(b"c") == (False, None)


def test_parse_retry_after() -> None:
    assert parse_retry_after("3") == 3.0
    assert parse_retry_after("0.5") == 0.5
    assert parse_retry_after(None) is None
    assert parse_retry_after("soon") is None
    when = format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)
    assert 25 < (parse_retry_after(when) or 0) <= 30


async def test_connection_refused_is_a_connection_error(judge_settings: Make) -> None:
    settings = judge_settings(base_url="http://127.0.0.1:9/v1", max_retries=1)
    async with JudgeClient(settings) as client:
        with pytest.raises(JudgeFailure) as info:
            await client.ask(OPINIONS, {"text": "x"}, metric="bias")
    assert info.value.outcome == "connection_error"


async def asyncio_sleep(seconds: float) -> None:
    import asyncio

    await asyncio.sleep(seconds)


async def test_unusable_answers_neither_reset_nor_trip_the_breaker(
    judge: ScriptedJudge, judge_settings: Make
) -> None:
    # A judge mixing errors with garbage is broken: the garbage must not hide the errors.
    for _ in range(3):
        judge.fail(500)
        judge.malformed(times=2)
    settings = judge_settings(max_retries=0, circuit_failures=3, circuit_reset_s=60)
    async with JudgeClient(settings) as client:
        outcomes = []
        for i in range(6):
            with pytest.raises(JudgeFailure) as info:
                await client.ask(OPINIONS, {"text": f"x{i}"}, metric="bias")
            outcomes.append(info.value.outcome)
        assert client.breaker.state == "open"
        assert client.failed_attempts == {"HTTP 500": 3, "unparseable answer": 4}
    assert outcomes == ["server_error", "invalid_answer"] * 2 + ["server_error", "circuit_open"]
