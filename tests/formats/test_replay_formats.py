"""``replay --format``, length-prefixed capture files, and the sample stream as OTLP."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import orjson
import pytest

from sidecar.cli import main
from sidecar.errors import ConfigError, DecodeError
from sidecar.events import Event, decode
from sidecar.formats import make_adapter
from sidecar.formats.encode import encode_request, events_to_requests
from sidecar.pipeline import Pipeline
from sidecar.rules import bundled_path, load_rules
from sidecar.sources.file import CutOff, read_framed_batches
from tests.formats.otel import Spans

REPO = Path(__file__).resolve().parents[2]


def sample_events() -> list[Event]:
    out = []
    for line in bundled_path("events.jsonl").read_bytes().splitlines():
        if line.strip():
            with contextlib.suppress(DecodeError):
                out.append(decode(line))
    return out


def framed(*values: bytes) -> bytes:
    return b"".join(len(v).to_bytes(4, "big") + v for v in values)


def chat_record(prompt: str, response: str) -> Spans:
    s = Spans(**{"service.name": "bot"})
    with s.span(
        "chat",
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.input.messages": orjson.dumps(
                [{"role": "user", "parts": [{"type": "text", "content": prompt}]}]
            ).decode(),
            "gen_ai.output.messages": orjson.dumps(
                [{"role": "assistant", "parts": [{"type": "text", "content": response}]}]
            ).decode(),
        },
    ):
        pass
    with s.span("GET /", {"http.route": "/"}):
        pass
    return s


def test_replay_reads_length_prefixed_otlp_proto(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    records = [
        chat_record("hi", "Hello {{name}}").proto(),  # a placeholder: fails a default rule
        b"\xff\xff not a request",
        chat_record("and you?", "Fine, thanks.").proto(),
    ]
    capture = tmp_path / "capture.bin"
    capture.write_bytes(framed(*records))
    out = tmp_path / "verdicts.jsonl"
    assert main(["replay", str(capture), "--format", "otlp-proto", "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert "record 2: skipped: invalid_otlp" in captured.err
    assert "events: 2 checked, 1 passed every rule, 1 failed" in captured.out
    assert "spans skipped: 2 (not_llm: 2)" in captured.out
    verdicts = [orjson.loads(line) for line in out.read_bytes().splitlines()]
    assert [v["checks"]["no-placeholder-text"]["passed"] for v in verdicts] == [False, True]
    assert all(len(v["id"]) == 32 + 1 + 16 for v in verdicts)


def test_replay_reads_otlp_json_lines(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = [chat_record(f"q{i}", f"a{i}").json() for i in range(3)]
    path = tmp_path / "spans.jsonl"
    path.write_bytes(b"\n".join([*lines, b"{not json"]) + b"\n")
    assert main(["replay", str(path), "--format", "otlp-json"]) == 0
    captured = capsys.readouterr()
    assert "line 4: skipped: invalid_json" in captured.err
    assert "events: 3 checked" in captured.out


def test_replay_of_native_events_read_as_otlp_dead_letters_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "native.jsonl"
    path.write_bytes(b'{"id": "a", "prompt": "p"}\n')
    # No line is an event: dead-lettered, and the run says so with exit status 1.
    assert main(["replay", str(path), "--format", "otlp-json"]) == 1
    err = capsys.readouterr().err
    assert "line 1: skipped: invalid_otlp: the record holds no spans" in err
    assert "no line of" in err


def test_framed_reader_reports_bad_files() -> None:
    ok = list(read_framed_batches(io.BytesIO(framed(b"a", b"bc", b"")), "f", 2))
    assert [[r.value for r in b] for b in ok] == [[b"a", b"bc"], [b""]]
    assert [r.offset for b in ok for r in b] == [0, 1, 2]
    # A cut-off last record comes after every whole one (a stopped capture keeps them).
    reader = read_framed_batches(io.BytesIO(framed(b"a") + b"\x00\x00\x00\x09abc"), "f", 10)
    assert [r.value for r in next(reader)] == [b"a"]
    with pytest.raises(CutOff, match="record 2 is cut off"):
        next(reader)
    with pytest.raises(ConfigError, match="not length-prefixed"):
        list(read_framed_batches(io.BytesIO(b'{"id": "x"}\n'), "f", 10))
    with pytest.raises(ConfigError, match="inside its length prefix"):
        list(read_framed_batches(io.BytesIO(b"\x00\x01"), "f", 10))


def test_replay_of_a_capture_cut_off_mid_record_checks_the_whole_records(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Stopping kcat usually cuts the last record. The run used to exit 2 with nothing
    checked and --out left empty; now the whole records are checked and the cut one is
    counted as skipped."""
    requests = events_to_requests(sample_events()[:6])
    whole = [encode_request(r, "otlp-proto") for r in requests]
    path = tmp_path / "capture.bin"
    data = framed(*whole)
    path.write_bytes(data[:-5])  # the last record loses its end
    out = tmp_path / "v.jsonl"
    assert main(["replay", str(path), "--format", "otlp-proto", "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert f"{path}: record {len(whole)} is cut off (" in captured.err
    assert captured.err.rstrip().endswith("bytes): skipped")
    assert "(cut_off: 1)" in captured.out
    checked = len(out.read_bytes().splitlines())
    assert checked == sum(
        len(make_adapter("otlp-proto", max_bytes=4 << 20).decode(w)) for w in whole[:-1]
    )
    assert checked > 0


@pytest.mark.parametrize("fmt", ["otlp-proto", "otlp-json"])
def test_the_sample_stream_as_otlp_gives_the_same_events_and_verdicts(fmt: str) -> None:
    native = sample_events()
    adapter = make_adapter(fmt, max_bytes=4 << 20)
    decoded: list[Event] = []
    for request in events_to_requests(native):
        decoded.extend(adapter.decode(encode_request(request, fmt)))
    assert len(decoded) == len(native)
    fields = ("prompt", "response", "system_prompt", "contexts", "model", "route", "tenant")
    for a, b in zip(native, decoded, strict=True):
        assert [getattr(a, f) for f in fields] == [getattr(b, f) for f in fields], a.id
        assert (a.task or "chat", a.attack, a.ground_truths, a.ts) == (
            b.task,
            b.attack,
            b.ground_truths,
            b.ts,
        )
    ruleset = load_rules([REPO / "rules" / "default.yaml"])
    pipeline = Pipeline(ruleset)
    mine, _ = pipeline.run(native)
    theirs, _ = pipeline.run(decoded)
    for a, b in zip(mine, theirs, strict=True):
        assert {k: (o.value, o.passed) for k, o in a.checks.items()} == {
            k: (o.value, o.passed) for k, o in b.checks.items()
        }


async def test_otlp_events_are_judged_with_the_contexts_of_their_retrieval_spans(
    tmp_path: Path,
) -> None:
    import asyncio
    import os
    import sys

    from sidecar.testing import ScriptedJudge
    from tests.formats.otel import event_id

    s = Spans(**{"service.name": "rag-api"})
    with s.span("query", {"openinference.span.kind": "CHAIN"}, end_ms=500):
        with s.span(
            "retrieve",
            {
                "openinference.span.kind": "RETRIEVER",
                "retrieval.documents.0.document.content": "The Hubble Space Telescope was "
                "launched into orbit in April 1990.",
            },
            start_ms=10,
            end_ms=20,
        ):
            pass
        with s.span(
            "llm",
            {
                "openinference.span.kind": "LLM",
                "input.value": "When did the Hubble telescope launch?",
                "output.value": "The Hubble telescope launched in 1990.",
            },
            start_ms=30,
            end_ms=400,
        ) as rag:
            pass
    path = tmp_path / "spans.jsonl"
    path.write_bytes(s.json() + b"\n")
    out = tmp_path / "v.jsonl"
    async with ScriptedJudge() as judge:
        env = {
            **os.environ,
            "LLM_SIDECAR_JUDGE__BASE_URL": judge.base_url,
            "LLM_SIDECAR_JUDGE__SAMPLE_RATE": "1",
            "LLM_SIDECAR_JUDGE__METRICS": '["faithfulness", "context_relevance"]',
        }
        proc = await asyncio.create_subprocess_exec(
            *(sys.executable, "-m", "sidecar", "replay", str(path), "--format", "otlp-json"),
            *("--judge", "--out", str(out), "--rules", str(REPO / "rules" / "default.yaml")),
            env=env,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        stdout, stderr = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 0, stderr.decode()
    assert "judge: 1 event sampled, 1 scored" in stdout.decode()
    (verdict,) = [orjson.loads(line) for line in out.read_bytes().splitlines()]
    assert verdict["id"] == event_id(rag)
    assert set(verdict["judge"]) == {"faithfulness", "context_relevance"}
    assert verdict["judge"]["faithfulness"] > 0.5


@pytest.mark.parametrize("otlp_topic", [False, True], ids=["all-native", "one-otlp-topic"])
async def test_the_app_decodes_each_topic_in_its_format(tmp_path: Path, otlp_topic: bool) -> None:
    """With native topics only, the pipeline decodes records itself (same size limit, same
    dead letters); a topic mapped to OTLP still goes through its adapter."""
    from prometheus_client import CollectorRegistry

    from sidecar.app import App
    from sidecar.settings import Settings
    from sidecar.sinks import Sink
    from sidecar.sources.file import FileSource

    path = tmp_path / "in.jsonl"
    if otlp_topic:
        lines = [chat_record(f"q{i}", f"a{i}").json() for i in range(3)]
    else:
        lines = [orjson.dumps({"id": str(i), "response": f"a{i}"}) for i in range(3)]
    path.write_bytes(b"\n".join([*lines, b'{"id": "big", "response": "' + b"x" * 2500 + b'"}']))
    rules = tmp_path / "rules.yaml"
    rules.write_text("rules:\n  - {id: short, check: length_less_than, params: {value: 5}}\n")
    settings = Settings(
        rules=[rules],
        reload_interval_s=0,
        limits={"max_event_bytes": 2000},
        input={"topics": {str(path): "otlp-json"}} if otlp_topic else {},
    )
    registry = CollectorRegistry()
    app = App(settings, source=FileSource(path), sink=Sink(), registry=registry)
    assert app.decoder.native is not otlp_topic
    async with app:
        await app.run()
    assert app.tally.events == 3
    reason = "too_large"
    assert registry.get_sample_value("llm_sidecar_dead_letters_total", {"reason": reason}) == 1
