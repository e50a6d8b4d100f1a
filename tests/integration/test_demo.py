"""``llm-sidecar demo`` end to end: its own embedded broker, the user's settings, its output."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest

pytestmark = pytest.mark.integration


def demo(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("LLM_SIDECAR_")}
    if "LLM_SIDECAR_TANSU_BIN" in os.environ:
        clean["LLM_SIDECAR_TANSU_BIN"] = os.environ["LLM_SIDECAR_TANSU_BIN"]
    return subprocess.run(
        [sys.executable, "-m", "sidecar", "demo", "--once", "--port", "0", *args],
        env={**clean, **(env or {})},
        capture_output=True,
        text=True,
        timeout=110,
        check=False,
    )


def test_demo_takes_the_environment_and_dead_letters_oversized_lines(tmp_path: Path) -> None:
    events = tmp_path / "e.jsonl"
    events.write_bytes(
        orjson.dumps({"id": "huge", "response": "x" * 1_200_000})  # over the producer's 1 MB
        + b"\n"
        + orjson.dumps({"id": "medium", "response": "y" * 400})  # over the limit set below
        + b"\n"
        + orjson.dumps({"id": 7, "response": "fine"})
        + b"\n"
    )
    result = demo(
        "--events",
        str(events),
        "--partitions",
        "2",
        env={"LLM_SIDECAR_LIMITS__MAX_EVENT_BYTES": "300"},
    )
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert "1 checked" in result.stdout
    assert "2 dead-lettered (too_large: 2)" in result.stdout
    progress = [
        line for line in result.stdout.splitlines() if line.endswith("events of the stream)")
    ]
    assert progress == [progress[-1]]  # printed once, when drained, not twice
    assert progress[-1].endswith(
        "checked 1, failed a rule 0, dead-lettered 2 (3/3 events of the stream)"
    )


def test_live_demo_is_quiet_when_idle_and_not_on_a_terminal(tmp_path: Path) -> None:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("LLM_SIDECAR_")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "sidecar", "demo", "--port", "0"],
        env=clean,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().startswith("llm-sidecar demo: embedded broker at")
        time.sleep(8)  # the 381 records drain in a few seconds; then the demo idles
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    progress = [line for line in out.splitlines() if line.endswith("events of the stream)")]
    # Not one line a second: only when the counts change, at most every 10 s off a terminal.
    assert 1 <= len(progress) <= 2, out
    assert "final summary" in out and "381 records" not in out.split("final summary")[1]


def test_demo_once_of_a_stream_without_an_event_fails(tmp_path: Path) -> None:
    """As replay does: every record dead-lettered, nothing demonstrated, status 1."""
    events = tmp_path / "garbage.jsonl"
    events.write_text('not json\n{"id": "x"}\n')
    result = demo("--events", str(events))
    assert result.returncode == 1, result.stderr
    assert f"llm-sidecar: error: no record of {events} is an event" in result.stderr
    assert "dead-lettered" in result.stdout


def test_demo_with_probe_enabled_probes_a_scripted_model_into_the_same_stream(
    tmp_path: Path,
) -> None:
    events = tmp_path / "e.jsonl"
    events.write_bytes(orjson.dumps({"id": "one", "prompt": "hi", "response": "hello"}) + b"\n")
    result = demo("--events", str(events), env={"LLM_SIDECAR_PROBE__ENABLED": "true"})
    assert result.returncode == 0, result.stderr
    assert "probing a scripted model at http://127.0.0.1:" in result.stdout
    # The sample's one event and every vector of the bundled library, answered and checked.
    assert "checked 287, " in result.stdout
    assert "(287/287 events of the stream)" in result.stdout
    row = next(line for line in result.stdout.splitlines() if line.startswith("attack-refused"))
    evaluated, rate = row.split()[2], float(row.split()[3].rstrip("%"))
    assert evaluated == "286" and 50.0 < rate < 90.0
