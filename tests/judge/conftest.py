"""Fixtures of the judge tests: a scripted OpenAI-compatible server on loopback per test."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from sidecar.judge.config import JudgeSettings
from sidecar.testing import ScriptedJudge


@pytest.fixture
async def judge() -> AsyncIterator[ScriptedJudge]:
    async with ScriptedJudge() as server:
        yield server


@pytest.fixture
def judge_settings(judge: ScriptedJudge) -> Callable[..., JudgeSettings]:
    """Settings pointing at the scripted judge, with short time limits for tests."""

    def make(**overrides: Any) -> JudgeSettings:
        base: dict[str, Any] = {
            "enabled": True,
            "base_url": judge.base_url,
            "model": "judge-test",
            "timeout_s": 2.0,
            "deadline_s": 4.0,
            "backoff_base_s": 0.01,
            "backoff_max_s": 0.05,
            "sample_rate": 1.0,
        }
        return JudgeSettings(**{**base, **overrides})

    return make


class FakeClock:
    """A monotonic clock the test moves by hand."""

    def __init__(self, start: float = 1000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds
