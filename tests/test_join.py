"""The prompt/response join: pairs, orphans by side, duplicates, bounds and the commit point."""

from __future__ import annotations

from typing import Any

import pytest
from prometheus_client import CollectorRegistry

from sidecar.errors import ConfigError
from sidecar.events import Event, validate
from sidecar.join import Joiner
from sidecar.settings import JoinSettings, load_settings
from sidecar.sources.base import Record


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def half(rid: str, side: str, i: int, **extra: Any) -> Event:
    text = {"prompt": f"question {rid}"} if side == "prompt" else {"response": f"answer {rid}"}
    return validate({"id": f"{rid}-{side[0]}{i}", "request_id": rid, **text, **extra})


def rec(partition: int, offset: int, trace: str | None = None) -> Record:
    """A record; with ``trace``, a W3C ``traceparent`` header of that trace id."""
    headers = (("traceparent", f"00-{trace}-b7ad6b7169203331-01".encode()),) if trace else ()
    return Record(b"", "t", partition, offset, None, None, headers)


def make(**settings: Any) -> tuple[Joiner, Clock, CollectorRegistry]:
    clock, registry = Clock(), CollectorRegistry()
    return Joiner(JoinSettings(enabled=True, **settings), registry, clock=clock), clock, registry


def offer(j: Joiner, *items: tuple[Record, Event]) -> tuple[list[Event], dict[int, int]]:
    ready, acks = j.offer(list(items), [r for r, _ in items])
    return [event for event, _ in ready], {r.partition: r.offset + 1 for r in acks}


def traces(j: Joiner, *items: tuple[Record, Event]) -> dict[str, str | None]:
    """Event id -> trace id, of the events the joiner hands out for ``items``."""
    ready, _ = j.offer(list(items), [r for r, _ in items])
    return {event.id: trace for event, trace in ready}


def value(registry: CollectorRegistry, name: str, **labels: str) -> float:
    return registry.get_sample_value(name, labels) or 0.0


def test_halves_across_partitions_join_in_either_order() -> None:
    j, _, registry = make()
    ready, acks = offer(j, (rec(0, 0), half("r1", "response", 0, model="m", route="/chat")))
    assert ready == [] and acks == {}  # offset 0 waits: nothing to commit on partition 0
    ready, acks = offer(j, (rec(1, 5), half("r1", "prompt", 0, system_prompt="be nice")))
    (joined,) = ready
    assert joined.id == "r1"
    assert (joined.prompt, joined.response) == ("question r1", "answer r1")
    assert (joined.model, joined.route, joined.system_prompt) == ("m", "/chat", "be nice")
    assert acks == {0: 1, 1: 6}  # both partitions move past the pair's records
    assert value(registry, "llm_sidecar_join_pairs_total") == 1


def test_complete_events_pass_through_and_halves_hold_the_commit_point() -> None:
    j, _, _ = make()
    whole = Event(id="w", prompt="p", response="r")
    ready, acks = offer(j, (rec(0, 0), half("a", "prompt", 0)), (rec(0, 1), whole))
    assert ready == [whole]
    assert acks == {}  # offset 1 is checked, but offset 0 waits below it
    ready, acks = offer(j, (rec(0, 2), whole), (rec(0, 3), half("a", "response", 0)))
    assert [e.id for e in ready] == ["w", "a"]
    assert acks == {0: 4}


def test_orphans_expire_after_the_ttl_counted_by_side() -> None:
    j, clock, registry = make(ttl_s=10)
    offer(j, (rec(0, 0), half("p", "prompt", 0)), (rec(0, 1), half("q", "response", 0)))
    clock.now += 9.9
    assert not j.due()
    clock.now += 0.2
    assert j.due()
    ready, acks = offer(j)  # an idle turn
    assert sorted(e.id for e in ready) == ["p-p0", "q-r0"]  # checked alone, as they are
    assert acks == {0: 2}
    assert value(registry, "llm_sidecar_join_orphans_total", side="prompt", reason="expired") == 1
    assert value(registry, "llm_sidecar_join_orphans_total", side="response", reason="expired") == 1
    assert j.waiting == 0


def test_duplicates_are_dropped_and_counted_never_checked_twice() -> None:
    j, _, registry = make()
    ready, _ = offer(
        j,
        (rec(0, 0), half("d", "prompt", 0)),
        (rec(0, 1), half("d", "prompt", 1)),  # the gateway logged it twice
        (rec(1, 0), half("d", "response", 0)),
        (rec(1, 1), half("d", "response", 1)),  # redelivered after the pair completed
    )
    assert [e.id for e in ready] == ["d"]
    assert value(registry, "llm_sidecar_join_duplicates_total", side="prompt") == 1
    assert value(registry, "llm_sidecar_join_duplicates_total", side="response") == 1


def test_memory_is_bounded_the_oldest_half_overflows_as_an_orphan() -> None:
    j, _, registry = make(max_pending=3)
    ready, acks = offer(j, *((rec(0, i), half(f"k{i}", "prompt", 0)) for i in range(5)))
    assert [e.id for e in ready] == ["k0-p0", "k1-p0"]
    assert j.waiting == 3
    assert acks == {0: 2}  # k2 at offset 2 is the earliest still waiting
    assert value(registry, "llm_sidecar_join_orphans_total", side="prompt", reason="overflow") == 2


def test_halves_without_a_request_id_join_on_their_id() -> None:
    j, _, _ = make()
    ready, _ = offer(
        j, (rec(0, 0), Event(id="x", prompt="p")), (rec(0, 1), Event(id="x", response="r"))
    )
    (joined,) = ready
    assert (joined.id, joined.prompt, joined.response) == ("x", "p", "r")


def test_join_is_refused_with_mqtt(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LLM_SIDECAR_SOURCE", "mqtt")
    monkeypatch.setenv("LLM_SIDECAR_JOIN__ENABLED", "true")
    with pytest.raises(ConfigError, match=r"join\.enabled needs source kafka"):
        load_settings()


def test_replay_joins_halves_across_the_file(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import orjson

    from sidecar.cli import main

    lines = [
        {"id": "a-r", "request_id": "a", "response": "reach me at a@example.com"},
        {"id": "b-p", "request_id": "b", "prompt": "hello", "trace_id": "b" * 32},
        {"id": "whole", "prompt": "p", "response": "r"},
        {
            "id": "a-p",
            "request_id": "a",
            "prompt": "my mail is a@example.com",
            "trace_id": "a" * 32,
        },
        {"id": "c-r", "request_id": "c", "response": "an answer to nothing"},
    ]
    events = tmp_path / "e.jsonl"
    events.write_bytes(b"".join(orjson.dumps(d) + b"\n" for d in lines))
    rules = tmp_path / "rules.yaml"
    rules.write_text(
        "version: 1\nrules:\n"
        "  - {id: p-mail, check: contains_email, field: prompt, expect: false}\n"
        "  - {id: r-mail, check: contains_email, expect: false}\n"
    )
    out = tmp_path / "v.jsonl"
    monkeypatch.setenv("LLM_SIDECAR_JOIN__ENABLED", "true")
    code = main(["replay", str(events), "--rules", str(rules), "--out", str(out)])
    assert code == 0, capsys.readouterr().err
    verdicts = {v["id"]: v for v in map(orjson.loads, out.read_bytes().splitlines())}
    assert set(verdicts) == {"whole", "a", "b-p", "c-r"}
    assert set(verdicts["a"]["checks"]) == {"p-mail", "r-mail"}
    assert verdicts["a"]["checks"]["p-mail"]["passed"] is False
    assert set(verdicts["b-p"]["checks"]) == {"p-mail"}  # an orphan: its own field only
    assert set(verdicts["c-r"]["checks"]) == {"r-mail"}
    assert verdicts["a"]["trace_id"] == "a" * 32  # a pair's and an orphan's trace ids
    assert verdicts["b-p"]["trace_id"] == "b" * 32
    assert "trace_id" not in verdicts["c-r"]


T1, T2, T3 = "1" * 32, "2" * 32, "3" * 32


def test_joined_events_keep_the_trace_id_of_either_half() -> None:
    """A pair takes its merged ``trace_id`` field, else the prompt half's record's
    ``traceparent``, else the response half's; whole events and orphans their own."""
    j, clock, _ = make(ttl_s=10)
    assert traces(j, (rec(0, 0, T1), half("a", "prompt", 0))) == {}
    assert traces(j, (rec(1, 0), half("a", "response", 0))) == {"a": T1}
    assert traces(j, (rec(0, 1), half("b", "prompt", 0))) == {}
    assert traces(j, (rec(1, 1, T2), half("b", "response", 0))) == {"b": T2}
    assert traces(j, (rec(1, 2, T2), half("c", "response", 0))) == {}
    assert traces(j, (rec(0, 2, T1), half("c", "prompt", 0))) == {"c": T1}
    assert traces(j, (rec(0, 3, T1), half("d", "prompt", 0))) == {}
    assert traces(j, (rec(1, 3), half("d", "response", 0, trace_id=T3))) == {"d": T3}
    assert traces(j, (rec(0, 4), half("e", "prompt", 0))) == {}
    assert traces(j, (rec(1, 4), half("e", "response", 0))) == {"e": None}
    whole = Event(id="w", prompt="p", response="r")
    assert traces(j, (rec(0, 5, T3), whole)) == {"w": T3}
    assert traces(j, (rec(0, 6, T2), half("f", "prompt", 0))) == {}
    clock.now += 11
    assert traces(j) == {"f-p0": T2}  # an orphan keeps its record's trace id
    assert traces(j, (rec(0, 7, T2), half("g", "prompt", 0, trace_id=T3))) == {}
    assert [(e.id, t) for e, t in j.flush()] == [("g-p0", T3)]


async def test_the_app_gives_joined_verdicts_their_trace_ids(tmp_path: Any) -> None:
    """The stream with ``join.enabled``: the verdict of a pair carries the trace id of the
    prompt half's record, and so does its JSON."""
    import orjson

    from sidecar.app import App
    from sidecar.settings import Settings
    from sidecar.sinks import Sink
    from sidecar.sources.file import FileSource

    empty = tmp_path / "none.jsonl"
    empty.write_text("")
    rules = tmp_path / "rules.yaml"
    rules.write_text("version: 1\nrules:\n  - {id: r-mail, check: contains_email, expect: false}\n")
    settings = Settings(rules=[rules], reload_interval_s=0, join={"enabled": True})
    app = App(settings, source=FileSource(empty), sink=Sink(), registry=CollectorRegistry())
    await app.start()
    try:
        head = (("traceparent", f"00-{T1}-b7ad6b7169203331-01".encode()),)
        prompt = b'{"id": "a-p", "request_id": "a", "prompt": "hi"}'
        response = b'{"id": "a-r", "request_id": "a", "response": "mail a@example.com"}'
        assert await app.handle([Record(prompt, "t", 0, 0, None, None, head)]) == []
        (verdict,) = await app.handle([Record(response, "t", 1, 0)])
    finally:
        await app.stop()
    assert verdict.id == "a" and verdict.passed is False
    assert orjson.loads(verdict.to_json())["trace_id"] == T1


def test_a_field_sent_as_null_by_one_half_does_not_unset_the_other_halfs() -> None:
    from sidecar.join import _merge

    prompt_half = half("r", "prompt", 0, user="alice", attack={"category": "basic", "rank": 2})
    response_half = half("r", "response", 0, user=None, attack={"category": "basic", "rank": None})
    merged = _merge("r", prompt_half, response_half)
    assert merged.text("user") == "alice"
    assert merged.prompt == prompt_half.prompt and merged.response == response_half.response
    assert merged.attack is not None and merged.attack.extra == {}
