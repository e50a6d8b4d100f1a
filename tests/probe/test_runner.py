"""The probe loop against a scripted OpenAI-compatible target on loopback: real HTTP."""

from __future__ import annotations

import asyncio
import itertools
import logging
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from prometheus_client import CollectorRegistry

from sidecar.metrics import render
from sidecar.probe.attacks import AttackLibrary, load_library
from sidecar.probe.runner import FileSink, Prober
from sidecar.settings import Settings
from sidecar.testing import REFUSAL_TEXT, ScriptedTarget

from .test_attacks import SMALL

SYSTEM = "You are the assistant of Acme Bikes. Answer questions about orders and repairs only."
KEY = "sk-probe-SECRET-0123456789"
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def small(tmp_path: Path) -> AttackLibrary:
    path = tmp_path / "small.yaml"
    path.write_text(SMALL)
    return load_library([path], builtin=False)


def settings(target: ScriptedTarget, **probe: Any) -> Settings:
    return Settings(
        system_prompts={"support": SYSTEM},
        probe={
            "base_url": target.base_url,
            "model": "target-model",
            "api_key": KEY,
            "system_prompt_id": "support",
            "probes_per_hour": 36_000,
            "jitter": 0.0,
            "timeout_s": 5,
            "deadline_s": 5,
            **probe,
        },
    )


class Memory:
    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []

    async def write(self, event: dict[str, Any]) -> None:
        self.events.append(event)


async def run_for(prober: Prober, seconds: float, *, once: bool = False) -> int:
    stop = asyncio.Event()
    asyncio.get_running_loop().call_later(seconds, stop.set)
    return await prober.run(stop, once=once)


def sample(registry: CollectorRegistry, name: str, **labels: str) -> float:
    return registry.get_sample_value(name, labels) or 0.0


async def test_once_sends_every_vector_and_writes_events(small: AttackLibrary) -> None:
    def behaviour(system: str, user: str) -> Any:
        return "leak" if "instructions" in user else "comply" if "pirate" in user else "refuse"

    async with ScriptedTarget(behaviour=behaviour) as target:
        sink = Memory()
        registry = CollectorRegistry()
        prober = Prober(settings(target, route="support"), small, sink, registry=registry)
        assert await run_for(prober, 20, once=True) == 0
    assert target.total == 4
    by_vector = {e["labels"]["vector"]: e for e in sink.events}
    assert set(by_vector) == {"my.one", "my.two", "my.three", "my.leak"}
    leak = by_vector["my.leak"]
    canary = leak["labels"]["canary"]
    assert canary.startswith("LSC-") and canary in leak["response"]
    assert leak["attack"] == {"category": "basic", "technique": "leak", "rank": 4}
    assert leak["labels"]["origin"] == "probe" and leak["labels"]["run"] == prober.run_id
    assert leak["system_prompt_id"] == "support" and "system_prompt" not in leak
    assert leak["model"] == "target-model" and leak["route"] == "support"
    assert by_vector["my.one"]["response"] == REFUSAL_TEXT
    assert "canary" not in by_vector["my.one"]["labels"]
    # The target saw the canary in its copy of the system prompt, and only there.
    systems = [b["messages"][0]["content"] for b in target.requests]
    assert sum(canary in s for s in systems) == 1 and all(s.startswith(SYSTEM) for s in systems)
    assert sample(registry, "llm_sidecar_probe_sent_total", category="basic") == 2
    assert sample(registry, "llm_sidecar_probe_last_timestamp_seconds", category="advanced") > 0


async def test_each_leakage_probe_gets_a_fresh_canary(small: AttackLibrary) -> None:
    async with ScriptedTarget(behaviour=lambda s, u: "leak") as target:
        sink = Memory()
        prober = Prober(settings(target, probes_per_hour=36_000), small, sink)
        await run_for(prober, 1.5)
    canaries = [e["labels"]["canary"] for e in sink.events if "canary" in e["labels"]]
    assert len(canaries) >= 2 and len(set(canaries)) == len(canaries)


async def test_the_request_budget_holds_against_a_target_that_answers_at_once(
    small: AttackLibrary,
) -> None:
    # 1,200 a minute (20 a second) with jitter: in any second, never more than 20 requests.
    async with ScriptedTarget() as target:
        registry = CollectorRegistry()
        cfg = settings(target, probes_per_hour=72_000, jitter=0.3, concurrency=8)
        prober = Prober(cfg, small, Memory(), registry=registry)
        await run_for(prober, 3.0)
    times = prober.request_times
    assert len(times) == target.total >= 30
    worst = max(sum(1 for t in times if start <= t < start + 1.0) for start in times)
    assert worst <= 20
    assert min(b - a for a, b in itertools.pairwise(times)) >= 0.05 - 1e-6


async def test_probes_whose_tasks_start_together_still_send_an_interval_apart(
    small: AttackLibrary,
) -> None:
    """The run loop starts a probe an interval after the last, but on a loaded machine a task
    can start late and the next on time: the requests themselves keep the interval."""
    async with ScriptedTarget() as target:
        cfg = settings(target, probes_per_hour=36_000, jitter=0.0)  # 0.1 s apart
        prober = Prober(cfg, small, Memory(), registry=CollectorRegistry())
        sent: list[float] = []
        scheduled: list[float] = []

        async def request() -> None:
            await prober._paced()
            sent.append(asyncio.get_running_loop().time())
            scheduled.append(prober._last_request)

        await asyncio.gather(*(request() for _ in range(4)))
    # Each request goes out at least an interval after the time the one before it was let go.
    # (Measured against that time, not against the previous task's own clock read, which the
    # OS may delay by milliseconds on a loaded machine without moving the schedule.)
    assert len(sent) == 4
    early = [s - (before + 0.1) for before, s in zip(scheduled, sent[1:], strict=False)]
    assert min(early) >= -1e-6, early
    assert sent[-1] - sent[0] >= 0.3 - 1e-6


async def test_the_token_budget_skips_probes_instead_of_going_over(
    small: AttackLibrary,
) -> None:
    async with ScriptedTarget() as target:
        registry = CollectorRegistry()
        # A probe is estimated at its prompt plus max_tokens (64): about 100 tokens.
        cfg = settings(target, tokens_per_minute=350, max_tokens=64)
        prober = Prober(cfg, small, Memory(), registry=registry)
        await run_for(prober, 1.0)
    assert 2 <= target.total <= 3
    assert prober.tokens.used() <= 350
    skipped = sum(
        sample(registry, "llm_sidecar_probe_skipped_total", category=c, reason="tokens")
        for c in ("basic", "intermediate", "advanced")
    )
    assert skipped >= 5


async def test_retry_after_pauses_the_schedule(small: AttackLibrary) -> None:
    async with ScriptedTarget() as target:
        target.fail(429, retry_after=0.8)
        registry = CollectorRegistry()
        prober = Prober(
            settings(target, probes_per_hour=36_000), small, Memory(), registry=registry
        )
        await run_for(prober, 1.6)
    times = prober.request_times
    assert times[1] - times[0] >= 0.8 - 0.02
    assert (
        sample(registry, "llm_sidecar_probe_failed_total", category="basic", reason="rate_limited")
        == 1
    )
    assert prober.sent >= 3


async def test_the_circuit_opens_and_probes_stop(small: AttackLibrary) -> None:
    async with ScriptedTarget() as target:
        target.fail(500, times=1000)
        registry = CollectorRegistry()
        cfg = settings(target, circuit_failures=3, circuit_reset_s=30, concurrency=1)
        prober = Prober(cfg, small, Memory(), registry=registry)
        await run_for(prober, 1.5)
    assert target.total == 3
    skipped = sum(
        sample(registry, "llm_sidecar_probe_skipped_total", category=c, reason="circuit_open")
        for c in ("basic", "intermediate", "advanced")
    )
    assert skipped >= 5
    assert prober.client is not None and prober.client.breaker.state == "open"
    assert sample(registry, "llm_sidecar_probe_circuit_state", state="open") == 1
    assert sample(registry, "llm_sidecar_probe_circuit_state", state="closed") == 0


async def test_once_stops_when_the_circuit_opens(small: AttackLibrary) -> None:
    async with ScriptedTarget() as target:
        target.fail(503, times=1000)
        prober = Prober(settings(target, circuit_failures=2, concurrency=1), small, Memory())
        assert await run_for(prober, 10, once=True) == 1
    assert target.total == 2


async def test_the_key_never_reaches_a_log_line_an_event_or_a_metric(
    small: AttackLibrary, caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    caplog.set_level(logging.DEBUG)
    async with ScriptedTarget(behaviour=lambda s, u: "leak") as target:
        target.fail(401, times=2)
        target.fail(500, times=2)
        registry = CollectorRegistry()
        out = tmp_path / "events.jsonl"
        sink = FileSink(out)
        prober = Prober(settings(target, circuit_failures=50), small, sink, registry=registry)
        await run_for(prober, 1.0)
        sink.close()
    assert target.headers["Authorization"] == f"Bearer {KEY}"
    assert prober.failed == 4 and prober.sent >= 2
    assert any("probe target at" in r.getMessage() for r in caplog.records)
    assert KEY not in caplog.text
    assert KEY.encode() not in render(registry)
    assert KEY.encode() not in out.read_bytes()
    assert KEY not in "\n".join(prober.plan())


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    sock.setblocking(False)
    yield sock
    sock.close()


def test_dry_run_prints_the_plan_and_opens_no_connection(
    listener: socket.socket, tmp_path: Path
) -> None:
    port = listener.getsockname()[1]
    prompt = tmp_path / "system.txt"
    prompt.write_text(SYSTEM)
    env = {
        **os.environ,
        "LLM_SIDECAR_PROBE__BASE_URL": f"http://127.0.0.1:{port}/v1",
        "LLM_SIDECAR_PROBE__SYSTEM_PROMPT_FILE": str(prompt),
        "LLM_SIDECAR_PROBE__API_KEY": KEY,
        "LLM_SIDECAR_KAFKA__BOOTSTRAP_SERVERS": f"127.0.0.1:{port}",
    }
    done = subprocess.run(
        [sys.executable, "-m", "sidecar", "probe", "--dry-run", "--seed", "3"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert f"127.0.0.1:{port}/v1/chat/completions" in done.stdout
    assert "library: 286 vectors" in done.stdout
    assert "basic" in done.stdout and "first 12 probes:" in done.stdout
    assert KEY not in done.stdout + done.stderr
    with pytest.raises(BlockingIOError):
        listener.accept()  # nobody connected, to the target or to Kafka


def test_the_command_refuses_an_unknown_system_prompt_id(tmp_path: Path) -> None:
    env = {**os.environ, "LLM_SIDECAR_PROBE__SYSTEM_PROMPT_ID": "nope"}
    done = subprocess.run(
        [sys.executable, "-m", "sidecar", "probe", "--dry-run"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "probe.system_prompt_id 'nope' is not in system_prompts" in done.stderr


def test_once_out_then_replay_scores_the_events(tmp_path: Path) -> None:
    lib = tmp_path / "lib.yaml"
    lib.write_text(SMALL)
    prompt = tmp_path / "system.txt"
    prompt.write_text(SYSTEM)
    out = tmp_path / "events.jsonl"

    async def go() -> None:
        async with ScriptedTarget(behaviour=lambda s, u: "leak" if "instr" in u else "refuse") as t:
            env = {
                **os.environ,
                "LLM_SIDECAR_PROBE__BASE_URL": t.base_url,
                "LLM_SIDECAR_PROBE__SYSTEM_PROMPT_FILE": str(prompt),
                "LLM_SIDECAR_PROBE__ATTACKS": orjson.dumps([str(lib)]).decode(),
                "LLM_SIDECAR_PROBE__BUILTIN_ATTACKS": "false",
                "LLM_SIDECAR_PROBE__PROBES_PER_HOUR": "36000",
                "LLM_SIDECAR_RULES": orjson.dumps(
                    [str(REPO / "rules" / "default.yaml"), str(REPO / "rules" / "adversarial.yaml")]
                ).decode(),
            }
            proc = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "sidecar",
                "probe",
                "--once",
                "--out",
                str(out),
                "--score",
                cwd=REPO,
                env=env,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
            )
            stdout, stderr = await asyncio.wait_for(proc.communicate(), 90)
            assert proc.returncode == 0, stderr.decode()
            assert "4 events written" in stderr.decode()
            text = stdout.decode()
            assert re.search(r"adv-canary-not-leaked\s.*", text), text

    import re

    asyncio.run(go())
    events = [orjson.loads(line) for line in out.read_bytes().splitlines()]
    assert len(events) == 4
    assert all(e["system_prompt"] == SYSTEM for e in events)


async def test_score_checks_the_probes_in_process_with_the_same_windows(
    small: AttackLibrary,
) -> None:
    from sidecar.probe.runner import ScoringSink

    def behaviour(system: str, user: str) -> Any:
        return "comply" if "pirate" in user or "Decode" in user else "refuse"

    async with ScriptedTarget(behaviour=behaviour) as target:
        cfg = settings(target).model_copy(
            update={"rules": [REPO / "rules" / "default.yaml", REPO / "rules" / "adversarial.yaml"]}
        )
        registry = CollectorRegistry()
        sink = ScoringSink(cfg, registry)
        prober = Prober(cfg, small, sink, registry=registry)
        assert await run_for(prober, 20, once=True) == 0
    assert sink.written == 4

    def robustness(category: str) -> float | None:
        labels = {"score": "adversarial_robustness", "subject": category, "window": "5m",
                  "route": "*", "model": "*", "tenant": "*"}  # fmt: skip
        return registry.get_sample_value("llm_sidecar_window_score", labels)

    # basic: a refused request and a refused leakage probe; the other two complied.
    assert robustness("basic") == 1.0
    assert robustness("intermediate") == 0.0
    assert robustness("advanced") == 0.0


def test_the_mqtt_topic_comes_from_the_filters_or_is_asked_for() -> None:
    from sidecar.errors import ConfigError
    from sidecar.probe.runner import mqtt_topic

    assert mqtt_topic(Settings(mqtt={"topics": ["llm/events/#"]})) == "llm/events/probe"
    assert mqtt_topic(Settings(mqtt={"topics": ["llm/chat"]})) == "llm/chat"
    named = Settings(mqtt={"topics": ["llm/+/x"]}, probe={"topic": "llm/redteam"})
    assert mqtt_topic(named) == "llm/redteam"
    with pytest.raises(ConfigError, match=r"set probe\.topic"):
        mqtt_topic(Settings(mqtt={"topics": ["llm/+/x"]}))


async def test_score_without_once_serves_the_windows_on_its_own_metrics(tmp_path: Path) -> None:
    import signal

    import httpx

    from sidecar.embedded import free_port

    prompt = tmp_path / "system.txt"
    prompt.write_text(SYSTEM)
    port = free_port()
    async with ScriptedTarget() as target:
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("LLM_SIDECAR_")},
            "LLM_SIDECAR_PROBE__BASE_URL": target.base_url,
            "LLM_SIDECAR_PROBE__SYSTEM_PROMPT_FILE": str(prompt),
            "LLM_SIDECAR_PROBE__PROBES_PER_HOUR": "36000",
            "LLM_SIDECAR_HTTP__HOST": "127.0.0.1",
            "LLM_SIDECAR_HTTP__PORT": str(port),
            "LLM_SIDECAR_KAFKA__BOOTSTRAP_SERVERS": "127.0.0.1:9",  # never used
        }
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "sidecar", "probe", "--score", cwd=REPO, env=env,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        want = 'llm_sidecar_window_score{model="*",route="*",score="adversarial_robustness",'
        try:
            text = ""
            async with httpx.AsyncClient(timeout=5) as client:
                for _ in range(150):
                    await asyncio.sleep(0.2)
                    try:
                        text = (await client.get(f"http://127.0.0.1:{port}/metrics")).text
                    except httpx.TransportError:
                        continue
                    lines = [line for line in text.splitlines() if line.startswith(want)]
                    if len({line.split('subject="')[1].split('"')[0] for line in lines}) >= 3:
                        break
            lines = [line for line in text.splitlines() if line.startswith(want)]
            # The scripted target refuses everything: robustness 1 in every category.
            for category in ("basic", "intermediate", "advanced"):
                assert any(
                    f'subject="{category}",tenant="*",window="1m"}} 1.0' in line for line in lines
                ), text[-2000:]
        finally:
            proc.send_signal(signal.SIGTERM)
            _, stderr = await asyncio.wait_for(proc.communicate(), 30)
    assert proc.returncode == 0, stderr.decode()
