"""Hot reload of rule files, and safe execution of user patterns."""

from __future__ import annotations

import asyncio
import gc
import time
import weakref
from pathlib import Path
from typing import Any

import pytest
from prometheus_client import CollectorRegistry, generate_latest

from sidecar.app import App, serve
from sidecar.events import Event
from sidecar.heap import YOUNG_COLLECTION_EVERY
from sidecar.pipeline import Pipeline
from sidecar.rules import load_rules
from sidecar.settings import Settings
from sidecar.sinks import Sink
from sidecar.sources.file import FileSource

RULE = "rules:\n  - {{id: {id}, check: length_less_than, params: {{value: {value}}}}}\n"


async def wait_until(predicate: object, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():  # type: ignore[operator]
        assert time.monotonic() < deadline, "condition not met in time"
        await asyncio.sleep(0.02)


def counter(registry: CollectorRegistry, result: str) -> float:
    value = registry.get_sample_value("llm_sidecar_rule_reloads_total", {"result": result})
    return value or 0.0


async def test_rule_files_reload_on_change_and_bad_files_keep_the_old_set(tmp_path: Path) -> None:
    rules = tmp_path / "rules.yaml"
    rules.write_text(RULE.format(id="first", value=5))
    events = tmp_path / "events.jsonl"
    events.write_text("")
    registry = CollectorRegistry()
    settings = Settings(rules=[rules], reload_interval_s=0.05, http={"port": 0})
    app = App(settings, source=FileSource(events), sink=Sink(), registry=registry, serve_http=False)
    async with app:
        assert app.pipeline is not None
        first = app.pipeline.version
        rules.write_text(RULE.format(id="second", value=7))
        await wait_until(lambda: app.pipeline is not None and app.pipeline.version != first)
        assert [r.id for r in app.pipeline.rules] == ["second"]
        assert counter(registry, "success") == 1
        text = generate_latest(registry).decode()
        assert f'llm_sidecar_rules_info{{version="{app.pipeline.version}"}} 1.0' in text
        assert 'rule="first"' not in text

        good = app.pipeline.version
        rules.write_text("rules:\n  - {id: broken, check: nope}\n")
        await wait_until(lambda: counter(registry, "failure") == 1)
        await asyncio.sleep(0.3)  # several more polls: a bad file is reported once, not per poll
        assert counter(registry, "failure") == 1
        assert app.pipeline.version == good

        # An explicit reload (what SIGHUP does) also works without a file change.
        rules.write_text(RULE.format(id="third", value=9))
        app.request_reload()
        await wait_until(
            lambda: [r.id for r in app.pipeline.rules] == ["third"] if app.pipeline else False
        )


def test_catastrophic_pattern_is_cut_off_and_the_event_keeps_its_other_verdicts(
    tmp_path: Path,
) -> None:
    path = tmp_path / "r.yaml"
    path.write_text(
        "rules:\n"
        "  - {id: evil, check: regex, params: {pattern: '(a|aa)+$', timeout_ms: 20}}\n"
        "  - {id: short, check: length_less_than, params: {value: 100000}}\n"
    )
    pipeline = Pipeline(load_rules([path]), timeouts_to_disable=3)
    # The shared scan proves "no match" for "a...ab" in linear time (see the next test); the
    # trailing "aa" passes its prefilter, so the regex module runs and backtracks.
    event = Event(id="x", response="a" * 5000 + "b\naa")
    started = time.perf_counter()
    verdicts, stats = pipeline.run([event])
    elapsed = time.perf_counter() - started
    assert elapsed < 0.5, f"the event loop was blocked for {elapsed:.2f}s"
    assert verdicts[0].checks["evil"].passed is None
    assert verdicts[0].checks["evil"].detail is not None
    assert verdicts[0].checks["evil"].detail.startswith("timeout")
    assert verdicts[0].checks["short"].passed is True
    # After three consecutive timeouts the rule is disabled; the rest keep running.
    verdicts, stats = pipeline.run([event, event, event])
    assert stats.newly_disabled == ["evil"]
    assert "evil" not in verdicts[2].checks
    assert verdicts[2].checks["short"].passed is True


def test_the_shared_scan_answers_a_catastrophic_pattern_without_running_it(
    tmp_path: Path,
) -> None:
    path = tmp_path / "r.yaml"
    path.write_text(
        "rules:\n  - {id: evil, check: regex, params: {pattern: '(a|aa)+$', timeout_ms: 20}}\n"
    )
    pipeline = Pipeline(load_rules([path]), timeouts_to_disable=3)
    assert pipeline.plan, "google-re2 is a dependency"
    event = Event(id="x", response="a" * 5000 + "b")
    started = time.perf_counter()
    verdicts, stats = pipeline.run([event] * 5)
    assert time.perf_counter() - started < 0.1
    assert all(v.checks["evil"].value is False for v in verdicts)
    assert not stats.newly_disabled


async def test_linked_and_relative_rule_paths_do_not_reload_without_a_change(
    tmp_path: Path, monkeypatch: object
) -> None:
    real = tmp_path / "real.yaml"
    real.write_text(RULE.format(id="r", value=5))
    (tmp_path / "linked.yaml").symlink_to(real)
    monkeypatch.chdir(tmp_path)  # type: ignore[attr-defined]
    events = tmp_path / "events.jsonl"
    events.write_text("")
    registry = CollectorRegistry()
    settings = Settings(rules=[Path("linked.yaml")], reload_interval_s=0.05)
    app = App(settings, source=FileSource(events), sink=Sink(), registry=registry, serve_http=False)
    async with app:
        await asyncio.sleep(0.5)  # ten polls
        assert counter(registry, "success") == 0


async def test_a_file_added_to_a_rules_directory_is_picked_up(tmp_path: Path) -> None:
    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / "a.yaml").write_text(RULE.format(id="a", value=5))
    events = tmp_path / "events.jsonl"
    events.write_text("")
    settings = Settings(rules=[rules], reload_interval_s=0.05)
    app = App(settings, source=FileSource(events), sink=Sink(), serve_http=False)
    async with app:
        (rules / "b.yaml").write_text(RULE.format(id="b", value=5))
        await wait_until(
            lambda: app.pipeline is not None and [r.id for r in app.pipeline.rules] == ["a", "b"]
        )


def file_app(tmp_path: Path, events: str = "", **settings: Any) -> tuple[Path, App]:
    """An app over a file of ``events`` with one rule (``first``) in ``rules.yaml``, which the
    caller may rewrite and reload; the rule file's path and the app."""
    rules = tmp_path / "rules.yaml"
    rules.write_text(RULE.format(id="first", value=5))
    path = tmp_path / "events.jsonl"
    path.write_text(events)
    config = Settings(rules=[rules], reload_interval_s=0, **settings)
    return rules, App(config, source=FileSource(path), sink=Sink(), registry=CollectorRegistry())


async def test_a_reload_after_the_heap_was_settled_frees_the_replaced_pipeline(
    tmp_path: Path,
) -> None:
    """``serve`` freezes the heap once the rules are loaded (``limits.tune_gc``). A frozen
    pipeline is never collected, so a reload must thaw it; otherwise every reload would leak
    the replaced rules' reference cycles for good."""
    rules, app = file_app(tmp_path)
    async with app:
        app.settle_heap()
        assert gc.get_freeze_count() > 0
        assert gc.get_threshold()[0] == YOUNG_COLLECTION_EVERY
        old = app.pipeline
        assert old is not None
        # A cycle through the pipeline, as closures and bound methods make: reference
        # counting alone can never free it, only the collector.
        cycle: list[object] = [old]
        cycle.append(cycle)
        old_ref = weakref.ref(old)
        gc.collect()
        gc.freeze()  # what settle_heap did to everything alive at the time
        del old, cycle
        rules.write_text(RULE.format(id="second", value=7))
        assert await app.reload()
        assert old_ref() is None, "the replaced pipeline stayed frozen"
        assert app.pipeline is not None and [r.id for r in app.pipeline.rules] == ["second"]
        assert gc.get_freeze_count() > 0  # the new rules are frozen in their turn


@pytest.mark.parametrize("tune_gc", [True, False])
async def test_serve_settles_the_heap_once_the_rules_are_loaded_unless_told_not_to(
    tmp_path: Path, tune_gc: bool
) -> None:
    _, app = file_app(tmp_path, '{"id": "a", "response": "hi"}\n', limits={"tune_gc": tune_gc})
    settings = app.settings
    # The collector is as a fresh process has it (conftest undoes other tests' tuning).
    assert gc.get_freeze_count() == 0 and gc.get_threshold()[0] != YOUNG_COLLECTION_EVERY
    assert await serve(settings, app=app) == 0
    assert app.tally.events == 1
    assert (gc.get_freeze_count() > 0) is tune_gc
    assert (gc.get_threshold()[0] == YOUNG_COLLECTION_EVERY) is tune_gc


async def test_replaced_rules_held_past_the_reload_are_trimmed_when_let_go(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An inline API batch may still hold the replaced pipeline when the reload hands memory
    back; the pages are handed back again once the last holder lets go."""
    trims: list[float] = []
    monkeypatch.setattr("sidecar.app.release_memory", lambda **_: trims.append(time.monotonic()))
    rules, app = file_app(tmp_path)
    async with app:
        held = app.pipeline  # what a batch in flight keeps
        rules.write_text(RULE.format(id="second", value=7))
        assert await app.reload()
        assert len(trims) == 1
        del held  # the batch is done
        await asyncio.sleep(0)
        assert len(trims) == 2
        # Nothing held: the reload's own trim is the only one.
        rules.write_text(RULE.format(id="third", value=9))
        assert await app.reload()
        await asyncio.sleep(0)
        assert len(trims) == 3
