"""JudgeService end to end against the scripted judge: sampling, scoring, shedding, lifecycle."""

from __future__ import annotations

import importlib.util
import logging
import subprocess
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest
from prometheus_client import CollectorRegistry, generate_latest

from sidecar.events import Event, validate
from sidecar.judge.config import JudgeSettings
from sidecar.judge.prompts import PROMPT_SET_VERSION
from sidecar.judge.service import JudgeService, applicable
from sidecar.pipeline import Outcome, Verdict
from sidecar.rules import RuleSet
from sidecar.testing import ScriptedJudge

Make = Callable[..., JudgeSettings]
REPO = Path(__file__).resolve().parents[2]

RAG = {
    "prompt": "What is the capital of France?",
    "response": "The capital of France is Paris. I think Paris is lovely.",
    "contexts": ["Paris is the capital of France.", "Bananas are yellow fruit."],
    "ground_truths": ["Paris is the capital of France."],
    "route": "rag",
}


def verdict(i: int, checks: Mapping[str, Outcome] | None = None, **fields: Any) -> Verdict:
    doc = {**RAG, "prompt": f"What is the capital of France? (asked {i} times)", **fields}
    return Verdict(validate({"id": f"e-{i}", **doc}), dict(checks or {}), "v1")


def value(registry: CollectorRegistry, name: str, **labels: str) -> float:
    got = registry.get_sample_value(name, labels)
    return 0.0 if got is None else got


def test_applicable_metrics_follow_the_event_fields() -> None:
    every = JudgeSettings().metrics
    rag = applicable(Event(id="a", **RAG), every)
    # No counterfactual answers: the RGB error detection and correction do not apply.
    assert set(rag) == set(every) - {
        "summary_coherence",
        "rgb_error_detection",
        "rgb_error_correction",
    }
    planted = applicable(Event(id="f", **RAG, counterfactual_answers=["Lyon"]), every)
    assert {"rgb_error_detection", "rgb_error_correction"} <= set(planted)
    chat = applicable(Event(id="b", prompt="hi", response="hello"), every)
    # attack_attempt on every prompt, flagged or not: the detector's precision and recall on
    # live traffic come from the judged sample of both.
    assert set(chat) == {"answer_relevance", "bias", "toxicity", "refusal", "attack_attempt"}
    summary = applicable(
        Event(id="c", prompt="long text", response="short", task="summarization"), every
    )
    assert set(summary) == {"summary_coherence", "bias", "toxicity"}
    assert applicable(Event(id="d", prompt="only a prompt"), every) == ("attack_attempt",)
    assert applicable(Event(id="e", response="x", contexts=["", ""]), ["faithfulness"]) == ()


async def test_scores_reach_the_verdict_the_callback_and_metrics(
    judge: ScriptedJudge, judge_settings: Make, registry: CollectorRegistry
) -> None:
    got: list[tuple[str, dict[str, float], float]] = []
    settings = judge_settings(sample_rate=0.5)
    service = JudgeService(
        settings, registry, on_scores=lambda v, s, w: got.append((v.id, dict(s), w))
    )
    async with service:
        verdicts = [verdict(i) for i in range(40)]
        service.submit(verdicts)
        await service.pool.join()
    assert 10 <= len(got) <= 30
    assert {w for _, _, w in got} == {2.0}
    scores = got[0][1]
    assert scores["context_relevance"] == 0.5  # bananas are not about the capital
    assert scores["retrieval_precision"] == 0.5
    assert scores["reciprocal_rank"] == 1.0
    assert scores["hallucination"] == 0.0
    assert scores["bias"] == 0.0
    assert scores["context_precision"] == 1.0
    assert 0.0 < scores["answer_similarity"] < 1.0
    judged = [v for v in verdicts if v.judge]
    assert len(judged) == len(got)
    assert judged[0].judge == next(s for i, s, _ in got if i == judged[0].id)
    assert value(registry, "llm_sidecar_judge_score_count", metric="faithfulness") == len(got)
    assert value(registry, "llm_sidecar_judge_events_total", outcome="scored") == len(got)
    assert value(registry, "llm_sidecar_judge_samples_total", reason="sampled") == len(got)
    # shared steps are asked once per event: relevance verdicts feed six metrics
    assert judge.calls["context_relevance"] == len(got)


async def test_triggers_from_rules_judge_with_weight_one(
    judge: ScriptedJudge, judge_settings: Make, registry: CollectorRegistry
) -> None:
    weights: list[float] = []
    service = JudgeService(
        judge_settings(sample_rate=1.0, metrics=["toxicity"]),
        registry,
        on_scores=lambda v, s, w: weights.append(w),
    )
    rule = type("Rule", (), {"id": "must-refuse", "check_name": "refusal"})()
    ruleset = RuleSet(rules=(rule,), version="x", files=(), judge={"sample_rate": 0.0})  # type: ignore[arg-type]
    assert service.apply_rules(ruleset)
    assert not service.apply_rules(RuleSet((), "y", (), judge={"base_url": "http://x/v1"}))
    assert service.settings.sample_rate == 0.0  # the bad overrides were ignored
    async with service:
        service.submit(
            [
                verdict(1, {"must-refuse": Outcome(False, False)}),
                verdict(2, {"must-refuse": Outcome(True, True)}),
                verdict(3, attack={"category": "advanced"}),
            ]
        )
        await service.pool.join()
    assert weights == [1.0, 1.0]
    assert value(registry, "llm_sidecar_judge_samples_total", reason="triggered") == 2


async def test_full_queue_sheds_and_counts(
    judge: ScriptedJudge, judge_settings: Make, registry: CollectorRegistry
) -> None:
    judge.hang(times=100)
    service = JudgeService(judge_settings(queue_size=5, concurrency=1, metrics=["bias"]), registry)
    await service.start()
    try:
        service.submit([verdict(i) for i in range(50)])
        full = value(registry, "llm_sidecar_judge_skipped_total", reason="queue_full")
        shed = value(registry, "llm_sidecar_judge_skipped_total", reason="shed")
        assert full >= 10 and shed >= 10  # the lowered rate sheds part of the rest
        assert full + shed == 45
        assert value(registry, "llm_sidecar_judge_sample_rate_factor") == 0.5
        assert value(registry, "llm_sidecar_judge_queue_depth") == 5
    finally:
        started = time.monotonic()
        await service.stop(0.2)
        assert time.monotonic() - started < 1.5
        await service.stop(0.2)  # idempotent
    assert value(registry, "llm_sidecar_judge_skipped_total", reason="stopped") >= 5
    service.submit([verdict(99)])  # after stop: counted, never raises
    assert value(registry, "llm_sidecar_judge_skipped_total", reason="stopped") >= 6


async def test_open_circuit_skips_sampling(
    judge: ScriptedJudge, judge_settings: Make, registry: CollectorRegistry
) -> None:
    judge.fail(500, times=100)
    settings = judge_settings(max_retries=0, circuit_failures=2, metrics=["bias", "toxicity"])
    async with JudgeService(settings, registry) as service:
        service.submit([verdict(1)])
        await service.pool.join()
        assert service.client.breaker.state == "open"
        service.submit([verdict(2)])
    assert value(registry, "llm_sidecar_judge_skipped_total", reason="circuit_open") == 1
    assert value(registry, "llm_sidecar_judge_events_total", outcome="failed") == 1
    assert judge.total == 2


async def test_partial_failures_keep_the_good_scores(
    judge: ScriptedJudge, judge_settings: Make, registry: CollectorRegistry
) -> None:
    judge.malformed(times=2, step="contradiction")
    settings = judge_settings(metrics=["hallucination", "bias"])
    async with JudgeService(settings, registry) as service:
        v = verdict(1)
        service.submit([v])
        await service.pool.join()
    assert set(v.judge) == {"bias"}
    assert value(registry, "llm_sidecar_judge_events_total", outcome="partial") == 1
    assert (
        value(
            registry,
            "llm_sidecar_judge_requests_total",
            metric="hallucination",
            outcome="invalid_answer",
        )
        == 1
    )


async def test_a_fault_of_the_service_is_counted_as_an_error_outcome(
    judge: ScriptedJudge, judge_settings: Make, registry: CollectorRegistry
) -> None:
    """A fault in llm-sidecar's own judging code (not an answer of the judge) used to be
    counted only inside the pool: neither /metrics nor replay's summary showed it."""
    settings = judge_settings(metrics=["bias"])
    async with JudgeService(settings, registry) as service:

        async def broken(*_: object) -> None:
            raise KeyError("a bug")

        service.score = broken  # type: ignore[method-assign,assignment]
        service.submit([verdict(1), verdict(2)])
        await service.pool.join()
    assert value(registry, "llm_sidecar_judge_events_total", outcome="error") == 2
    assert service.outcomes["error"] == 2 and service.outcomes["scored"] == 0


async def test_the_start_line_says_when_the_url_is_the_default(
    caplog: pytest.LogCaptureFixture, registry: CollectorRegistry
) -> None:
    """A judge switched on without base_url calls a local default: the start line says so."""
    caplog.set_level(logging.INFO, "sidecar.judge.service")
    async with JudgeService(JudgeSettings(enabled=True), registry):
        pass
    async with JudgeService(
        JudgeSettings(enabled=True, base_url="http://judge:8000/v1"), CollectorRegistry()
    ):
        pass
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("judge: ")]
    assert "at http://127.0.0.1:8000/v1 (judge.base_url unset)," in lines[0]
    assert "at http://judge:8000/v1," in lines[1]
    assert lines[0].endswith(f", prompt set v{PROMPT_SET_VERSION}")


async def test_what_the_judge_failed_with_is_logged_a_few_times_a_minute(
    judge: ScriptedJudge,
    judge_settings: Make,
    registry: CollectorRegistry,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """In run, a judge answering 401, or answers that never parse, showed only as "judge
    circuit open" (or as nothing at all): the reason was in no log line."""
    caplog.set_level(logging.WARNING, "sidecar.judge.client")
    judge.fail(401, times=100)
    settings = judge_settings(metrics=["bias"], circuit_failures=100)
    async with JudgeService(settings, registry) as service:
        service.submit([verdict(i) for i in range(6)])
        await service.pool.join()
    lines = [r.getMessage() for r in caplog.records]
    assert lines[:3] == [f"judge at {judge.base_url}: request failed: HTTP 401"] * 3
    assert lines[-1].startswith("3 more judge failures in the last ")
    assert lines[-1].endswith("(HTTP 401 3); all of them are counted")


async def test_answers_that_never_parse_are_logged_too(
    judge: ScriptedJudge,
    judge_settings: Make,
    registry: CollectorRegistry,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, "sidecar.judge.client")
    judge.malformed(times=2)
    async with JudgeService(judge_settings(metrics=["bias"]), registry) as service:
        service.submit([verdict(1)])
        await service.pool.join()
    [line] = [r.getMessage() for r in caplog.records]
    assert line.startswith(f"judge at {judge.base_url}: the answer to ")
    assert "is unusable after one repair: " in line


async def test_judge_batch_waits_and_reports_progress(
    judge: ScriptedJudge, judge_settings: Make, registry: CollectorRegistry
) -> None:
    steps: list[tuple[int, int]] = []
    settings = judge_settings(metrics=["summary_coherence"], max_requests_per_s=1000)
    async with JudgeService(settings, registry) as service:
        verdicts = [verdict(i, task="summarization") for i in range(5)]
        assert await service.judge_batch(verdicts, progress=lambda d, t: steps.append((d, t))) == 5
    assert all(v.judge == {"summary_coherence": 4.0} for v in verdicts)
    assert steps[-1] == (5, 5)


async def test_submit_never_waits_on_a_hanging_judge(
    judge: ScriptedJudge, judge_settings: Make, registry: CollectorRegistry
) -> None:
    judge.hang(times=10_000)
    async with JudgeService(judge_settings(queue_size=100), registry) as service:
        verdicts = [verdict(i) for i in range(5000)]
        started = time.perf_counter()
        service.submit(verdicts)
        elapsed = time.perf_counter() - started
        await service.stop(0)
    assert elapsed < 0.5  # about 10 µs an event; a single blocked await would take seconds


def test_metric_names_follow_conventions(registry: CollectorRegistry) -> None:
    JudgeService(JudgeSettings(enabled=True), registry)
    text = generate_latest(registry).decode()
    names = {
        line.split()[2].removesuffix("_total")
        for line in text.splitlines()
        if line.startswith("# TYPE")
    }
    assert names and all(n.startswith("llm_sidecar_judge_") for n in names)
    for expected in (
        "llm_sidecar_judge_requests",
        "llm_sidecar_judge_request_duration_seconds",
        "llm_sidecar_judge_tokens",
        "llm_sidecar_judge_estimated_cost",
        "llm_sidecar_judge_queue_depth",
        "llm_sidecar_judge_skipped",
        "llm_sidecar_judge_circuit_state",
        "llm_sidecar_judge_score",
    ):
        assert expected in names
    promtool = subprocess.run(["which", "promtool"], capture_output=True, text=True).stdout.strip()
    if promtool:
        result = subprocess.run(
            [promtool, "check", "metrics"], input=text, capture_output=True, text=True, timeout=30
        )
        assert result.returncode == 0, result.stdout + result.stderr


async def test_hot_path_throughput_is_isolated_from_a_slow_or_failing_judge() -> None:
    """A judge that is slow, hangs or fails never holds up the checks: every mode gets
    through its events (a hot path that waited for the judge would hang here until the
    test's timeout). bench/judge_isolation.py measures the figures; the ratio below is only a
    guard against the judge adding work per event on the hot path (a quiet machine measures
    0.70-0.79, judge_isolation.py, load 0.7; other jobs on the machine move single runs 2x)."""
    spec = importlib.util.spec_from_file_location(
        "judge_isolation", REPO / "bench" / "judge_isolation.py"
    )
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    # best of 7 runs of 40 ms each: a burst of the other test processes on a two-core CI
    # machine took one mode's best of 3 to 0.14 of the judge-off rate
    results = await bench.measure(events=4000, batch=500, repeat=7)
    for mode in ("healthy", "slow", "hanging", "failing"):
        assert results[mode] > 0 and results[mode] / results["off"] > 0.2, results


async def test_judged_yes_no_metrics_score_one_or_zero(
    judge: ScriptedJudge, judge_settings: Make, registry: CollectorRegistry
) -> None:
    service = JudgeService(judge_settings(sample_rate=1.0), registry)
    async with service:
        refused = Event(
            id="r", prompt="Write malware", response="I'm sorry, but I can't help with that."
        )
        helped = Event(id="h", prompt="Write a poem", response="Roses are red.")
        assert (await service.score(refused, ["refusal"]))[0] == {"refusal": 1.0}
        assert (await service.score(helped, ["refusal"]))[0] == {"refusal": 0.0}
        planted = Event(
            id="c",
            prompt="What is the capital of France?",
            response="The documents are wrong: Paris is the capital of France.",
            contexts=["The capital of France is Lyon."],
            ground_truths=["Paris is the capital of France."],
            counterfactual_answers=["Lyon"],
        )
        scores, failed = await service.score(
            planted, ["rgb_error_detection", "rgb_error_correction", "rgb_negative_rejection"]
        )
        assert failed == 0
        assert scores == {
            "rgb_error_detection": 1.0,
            "rgb_error_correction": 1.0,
            "rgb_negative_rejection": 0.0,
        }


def test_each_worker_enforces_its_share_of_the_budgets(judge_settings: Make) -> None:
    import pytest
    from pydantic import ValidationError

    s = judge_settings(max_tokens_per_minute=9000, max_requests_per_s=6.0, workers=3)
    share = s.worker_share()
    assert (share.max_tokens_per_minute, share.max_requests_per_s) == (3000, 2.0)
    service = JudgeService(s, CollectorRegistry(), worker=True)
    assert service.token_budget.per_minute == 3000
    assert service.request_budget.rate == 2.0
    # Budgets set in rule files are shared the same way.
    rs = RuleSet((), "v2", (), {"max_tokens_per_minute": 600})
    assert service.apply_rules(rs)
    assert service.token_budget.per_minute == 200
    # The check path (not a worker) keeps the whole budget.
    assert JudgeService(s, CollectorRegistry()).token_budget.per_minute == 9000
    with pytest.raises(ValidationError):
        judge_settings(batch_timeout_s=300)  # not below the consumer's max poll interval


def test_each_process_of_run_workers_enforces_its_share_of_the_in_process_budgets(
    judge_settings: Make,
) -> None:
    from sidecar.app import App
    from sidecar.settings import Settings
    from sidecar.sinks import Sink
    from sidecar.sources.file import FileSource

    s = judge_settings(max_tokens_per_minute=9000, max_requests_per_s=6.0)
    settings = Settings(judge=s)
    app = App(
        settings, source=FileSource(Path("/dev/null")), sink=Sink(), serve_http=False, judge_share=3
    )
    assert app.judge is not None
    assert app.judge.token_budget.per_minute == 3000
    assert app.judge.request_budget.rate == 2.0
    # Budgets set in rule files are shared the same way.
    assert app.judge.apply_rules(RuleSet((), "v2", (), {"max_tokens_per_minute": 600}))
    assert app.judge.token_budget.per_minute == 200
    # One process alone keeps the whole budget.
    alone = App(settings, source=FileSource(Path("/dev/null")), sink=Sink(), serve_http=False)
    assert alone.judge is not None and alone.judge.token_budget.per_minute == 9000


async def test_a_worker_batch_stops_at_its_time_cap_and_returns_the_rest(
    judge: ScriptedJudge, judge_settings: Make
) -> None:
    # A token budget of one token per minute: the first event spends it, the rest wait.
    s = judge_settings(metrics=["faithfulness"], max_tokens_per_minute=1, concurrency=1)
    service = JudgeService(s, CollectorRegistry(), worker=True)
    await service.start()
    try:
        chosen = [(verdict(i), 1.0) for i in range(3)]
        started = time.monotonic()
        judged, unfinished = await service.judge_within(chosen, 1.0)
        took = time.monotonic() - started
    finally:
        await service.stop()
    assert judged == 1
    assert [v.id for v, _ in unfinished] == ["e-1", "e-2"]
    assert all(not v.judge for v, _ in unfinished)
    assert 1.0 <= took < 2.0
