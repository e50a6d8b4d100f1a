"""Log lines about bad records are bounded: the first few a minute, then one summary."""

from __future__ import annotations

import logging
import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry

from sidecar.app import App
from sidecar.logs import LogBudget
from sidecar.settings import Settings
from sidecar.sinks import Sink
from sidecar.sources.base import Record
from sidecar.sources.file import FileSource
from tests.conftest import REPO


def test_a_budget_lets_the_first_lines_through_then_sums_up_the_rest(
    caplog: pytest.LogCaptureFixture,
) -> None:
    now = [0.0]
    log = logging.getLogger("test.budget")
    budget = LogBudget("dead letters", log, limit=3, every_s=60, clock=lambda: now[0])
    with caplog.at_level(logging.WARNING, logger="test.budget"):
        allowed = [budget.allow("invalid_json" if i % 2 else "too_large") for i in range(10)]
        assert allowed == [True] * 3 + [False] * 7
        budget.tick()  # the minute is not over: nothing said yet
        assert caplog.records == []
        now[0] = 61.0
        assert budget.allow("invalid_json")  # a new minute, and the summary of the last one
    assert [r.getMessage() for r in caplog.records] == [
        "7 more dead letters in the last 61s not logged (invalid_json 4, too_large 3); "
        "all of them are counted"
    ]
    caplog.clear()
    budget.flush()  # nothing left out since: nothing to say
    assert caplog.records == []


async def test_a_burst_of_bad_records_logs_ten_lines_and_one_summary(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    events = tmp_path / "events.jsonl"
    events.write_text("not json\n" * 40 + '{"id": "ok", "response": "fine"}\n' + "[1]\n" * 5)
    registry = CollectorRegistry()
    settings = Settings(rules=[REPO / "rules" / "default.yaml"], reload_interval_s=0)
    app = App(settings, source=FileSource(events), sink=Sink(), registry=registry)
    with caplog.at_level(logging.WARNING, logger="sidecar"):
        async with app:
            await app.run()
    lines = [r.getMessage() for r in caplog.records if r.name == "sidecar.app"]
    assert sum(line.startswith("dead letter ") for line in lines) == 10
    assert re.fullmatch(
        r"35 more dead letters in the last \d+s not logged \(invalid_json 30, not_an_object 5\); "
        r"all of them are counted",
        lines[-1],
    )
    assert app.tally.events == 1
    for reason, n in (("invalid_json", 40), ("not_an_object", 5)):
        assert registry.get_sample_value("llm_sidecar_dead_letters_total", {"reason": reason}) == n


class _IdleSource(FileSource):
    """Bad records, then empty fetches, as a quiet Kafka topic gives them."""

    def __init__(self, path: Path, idle_turns: int, clock: list[float]) -> None:
        super().__init__(path)
        self.idle_turns, self.clock = idle_turns, clock

    async def batches(self) -> AsyncIterator[list[Record]]:
        async for batch in super().batches():
            yield batch
        for _ in range(self.idle_turns):
            self.clock[0] += 30.0  # each fetch timeout moves time on
            yield []


async def test_the_summary_of_a_burst_comes_while_the_stream_is_idle(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    events = tmp_path / "events.jsonl"
    events.write_text("not json\n" * 25)
    rules = tmp_path / "rules.yaml"
    rules.write_text("rules:\n  - {id: short, check: length_less_than, params: {value: 5}}\n")
    now = [0.0]
    app = App(
        Settings(rules=[rules], reload_interval_s=0),
        source=_IdleSource(events, idle_turns=3, clock=now),
        sink=Sink(),
        registry=CollectorRegistry(),
    )
    app._dead_logs = LogBudget(
        "dead letters", logging.getLogger("sidecar.app"), clock=lambda: now[0]
    )
    caplog.set_level(logging.WARNING, "sidecar.app")
    async with app:
        await app.run()
        summaries = [r.getMessage() for r in caplog.records if "not logged" in r.getMessage()]
        # Before stop() flushes: the idle turns ended the minute.
        assert len(summaries) == 1 and summaries[0].startswith("15 more dead letters")
