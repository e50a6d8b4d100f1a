"""The command line: exit codes, one-line errors, replay output."""

from __future__ import annotations

import argparse
import os
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import orjson
import pytest

from sidecar.cli import main
from sidecar.embedded import free_port

REPO = Path(__file__).resolve().parent.parent


def run(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sidecar", *args],
        input=stdin.decode() if stdin is not None else None,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def run_until(log: Path, *args: str, until: str, env: dict[str, str] | None = None) -> int:
    """Start the command, wait until its log shows ``until``, SIGTERM it; its exit status.
    Everything it wrote is in ``log``."""
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "sidecar", *args], stdout=out, stderr=out, env=env
        )
    try:
        deadline = time.monotonic() + 30
        while until not in log.read_text() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert proc.poll() is None, log.read_text()
        proc.send_signal(signal.SIGTERM)
        return proc.wait(20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_version(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    from sidecar.checks import refusal_model

    assert main(["version"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("llm-sidecar ")
    assert ("scorer: compiled" in out) == refusal_model.compiled()
    monkeypatch.setattr(refusal_model, "native_state", lambda: "missing")
    assert main(["version"]) == 0
    assert "scorer: numpy (the compiled one was not built" in capsys.readouterr().out
    monkeypatch.setattr(refusal_model, "native_state", lambda: "stale")
    assert main(["version"]) == 0
    assert "another version of its C file: pip install -e . rebuilds it" in capsys.readouterr().out


def test_validate_accepts_the_shipped_packs(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(REPO / "rules")]) == 0
    assert capsys.readouterr().out.startswith("ok: ")


def test_validate_says_which_patterns_stay_with_the_regex_module(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rules = tmp_path / "rx.yaml"
    rules.write_text(
        "rules:\n"
        "  - {id: plain, check: regex, params: {pattern: 'AKIA[0-9A-Z]{16}'}}\n"
        "  - {id: behind, check: regex, params: {pattern: '(?<=x)ab'}}\n"
        "  - {id: uni, check: regex, params: {pattern: '\\p{Lu}{3}', timeout_ms: 20}}\n"
    )
    assert main(["validate", str(rules)]) == 0
    out = capsys.readouterr().out
    assert "scan: 2 patterns in 1 shared scan(s) (re2)" in out
    assert "rule behind: scan prefilters, the regex module confirms" in out
    assert "rule uni: stays with the regex module (timeout 20 ms)" in out
    assert "rule plain" not in out


def test_validate_reports_file_rule_and_reason(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("rules:\n  - {id: r1, check: length_less_than, params: {value: many}}\n")
    assert main(["validate", str(bad)]) == 1
    err = capsys.readouterr().err
    assert f"{bad}: rule 'r1': params.value" in err
    assert "Traceback" not in err


def test_a_secret_leak_rule_with_nothing_to_look_for_is_a_rule_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """It was a settings error: validate exited 2 naming no file or rule, and hid the
    file's other problems."""
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "rules:\n"
        '  - {id: bad-regex, check: regex, params: {pattern: "(("}}\n'
        "  - {id: canary, check: secret_leak, params: {from_labels: []}, expect: false}\n"
    )
    assert main(["validate", str(bad)]) == 1
    err = capsys.readouterr().err
    assert f"{bad}: rule 'bad-regex'" in err
    assert f"{bad}: rule 'canary': cannot build check secret_leak: no secrets to look for" in err


def test_bad_options_and_files_are_one_line_errors(tmp_path: Path) -> None:
    missing = run("run", "--config", str(tmp_path / "nope.yaml"))
    assert missing.returncode == 2
    assert (
        missing.stderr.strip()
        == f"llm-sidecar: error: config file {tmp_path / 'nope.yaml'} does not exist"
    )
    bad = tmp_path / "c.yaml"
    bad.write_text("kafka: {max_batch: -3}\n")
    result = run("run", "--config", str(bad))
    assert result.returncode == 2
    assert "kafka.max_batch" in result.stderr and "Traceback" not in result.stderr
    unknown = run("frobnicate")
    assert unknown.returncode == 2
    assert run("replay", str(tmp_path / "none.jsonl")).returncode == 2


def test_an_unreachable_broker_keeps_run_up_not_ready_and_says_so_once(tmp_path: Path) -> None:
    """Kafka not there yet is no reason to exit (in Kubernetes that is a crash loop): run
    stays up, /readyz says what it waits for, the log says it once, SIGTERM exits 0."""
    port = free_port()
    config = tmp_path / "c.yaml"
    config.write_text(
        "kafka: {bootstrap_servers: '127.0.0.1:1', request_timeout_ms: 2000, session_timeout_ms: 1500, heartbeat_interval_ms: 500}\n"
        f"http: {{host: 127.0.0.1, port: {port}}}\n"
    )
    log = tmp_path / "run.log"
    with log.open("wb") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "sidecar", "run", "--config", str(config)],
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
    try:
        deadline = time.monotonic() + 30
        while "unreachable" not in log.read_text() and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(3)  # a few more attempts, which must not be logged
        assert proc.poll() is None, log.read_text()
        with pytest.raises(urllib.error.HTTPError) as info:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=5)
        assert info.value.code == 503
        body = info.value.read().decode()
        assert "waiting for Kafka at 127.0.0.1:1" in body and "connection refused" in body, body
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5) as r:
            assert r.status == 200
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(20) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    text = log.read_text()
    assert "Traceback" not in text
    loud = [line for line in text.splitlines() if " WARNING " in line or " ERROR " in line]
    assert len(loud) == 1, text
    assert "Kafka at 127.0.0.1:1 is unreachable (connection refused)" in loud[0]


def test_replay_writes_verdicts_and_reports_malformed_lines(tmp_path: Path) -> None:
    events = tmp_path / "e.jsonl"
    events.write_bytes(
        b'{"id": "a", "response": "fine"}\n'
        b"\n"
        b"{broken\n"
        b'{"id": "b", "response": "hello {{name}}"}\n'
        b"[]\n"
    )
    out = tmp_path / "v.jsonl"
    result = run(
        "replay", str(events), "--out", str(out), "--rules", str(REPO / "rules" / "default.yaml")
    )
    assert result.returncode == 0, result.stderr
    assert "line 3: skipped: invalid_json" in result.stderr
    assert "line 5: skipped: not_an_object" in result.stderr
    verdicts = [orjson.loads(line) for line in out.read_bytes().splitlines()]
    assert [v["id"] for v in verdicts] == ["a", "b"]
    assert verdicts[1]["checks"]["no-placeholder-text"]["passed"] is False
    assert "no-placeholder-text" in result.stdout
    assert "2 checked" in result.stdout


def test_replay_reads_stdin(tmp_path: Path) -> None:
    result = run("replay", "-", stdin=b'{"id": "a", "response": "fine"}\n')
    assert result.returncode == 0, result.stderr
    assert "1 checked" in result.stdout


def test_replay_of_the_bundled_sample_stream(tmp_path: Path) -> None:
    out = tmp_path / "v.jsonl"
    result = run(
        "replay",
        str(REPO / "samples" / "events.jsonl"),
        "--out",
        str(out),
        "--rules",
        str(REPO / "rules"),
    )
    assert result.returncode == 0, result.stderr
    lines = [
        line
        for line in (REPO / "samples" / "events.jsonl").read_bytes().splitlines()
        if line.strip()
    ]
    skipped = result.stderr.count("skipped:")
    assert skipped >= 6
    assert len(out.read_bytes().splitlines()) == len(lines) - skipped


def test_validate_checks_the_judge_settings_of_rule_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "judge.yaml"
    bad.write_text("judge: {sample_rate: 2.5}\nrules: []\n")
    assert main(["validate", str(bad)]) == 1
    assert "sample_rate" in capsys.readouterr().err
    bad.write_text("judge: {api_key: nope}\nrules: []\n")
    assert main(["validate", str(bad)]) == 1
    assert "api_key" in capsys.readouterr().err
    bad.write_text("judge: {sample_rate: 0.2, metrics: [faithfulness]}\nrules: []\n")
    assert main(["validate", str(bad)]) == 0


def test_json_logs_are_one_valid_object_per_line(tmp_path: Path) -> None:
    import json

    config = tmp_path / "c.yaml"
    config.write_text(
        "log_format: json\n"
        "kafka: {bootstrap_servers: '127.0.0.1:1', request_timeout_ms: 2000, session_timeout_ms: 1500, heartbeat_interval_ms: 500}\n"
        "http: {host: 127.0.0.1, port: 0}\n"
    )
    log = tmp_path / "run.log"
    code = run_until(log, "--log-level", "DEBUG", "run", "--config", str(config), until="unreach")
    assert code == 0
    lines = [line for line in log.read_text().splitlines() if line.startswith("{")]
    assert lines
    for line in lines:
        doc = json.loads(line)
        assert {"ts", "level", "logger", "msg"} <= set(doc)


@pytest.mark.parametrize("log_format", ["text", "json"])
def test_a_fatal_error_is_written_as_the_logs_are_and_names_the_worker(
    log_format: str, tmp_path: Path
) -> None:
    """A worker of ``run --workers`` that cannot start says which worker it is, and with JSON
    logs its last line is a JSON object like the others, not plain text among them."""
    import json
    import socket

    config = tmp_path / "c.yaml"
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        config.write_text(
            f"log_format: {log_format}\n"
            "kafka: {bootstrap_servers: '127.0.0.1:1', request_timeout_ms: 2000, session_timeout_ms: 1500, heartbeat_interval_ms: 500}\n"
            f"http: {{host: 127.0.0.1, port: {port - 1}}}\n"
        )
        result = run("run", "--config", str(config), "--worker=1/2")
    assert result.returncode == 2, result.stderr
    last = result.stderr.splitlines()[-1]
    if log_format == "json":
        doc = json.loads(last)
        assert doc["level"] == "ERROR" and doc["worker"] == "1"
        assert doc["msg"].startswith(f"cannot listen on 127.0.0.1:{port}")
    else:
        assert last.startswith(f"[worker 1] llm-sidecar: error: cannot listen on 127.0.0.1:{port}")


def test_every_line_of_a_workers_fatal_error_names_the_worker() -> None:
    from sidecar.cli import _plain_fatal_line

    message = "rules do not load:\n  a.yaml: rule x: unknown check"
    assert _plain_fatal_line(message, "2").splitlines() == [
        "[worker 2] llm-sidecar: error: rules do not load:",
        "[worker 2]   a.yaml: rule x: unknown check",
    ]
    assert _plain_fatal_line(message) == f"llm-sidecar: error: {message}"


def test_a_fatal_error_before_the_logs_are_set_up_is_plain(tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text("log_format: json\nkafka: {topics: []}\n")
    result = run("run", "--config", str(config), "--worker=0/2")
    assert result.returncode == 2
    assert result.stderr.startswith("llm-sidecar: error: "), result.stderr


@pytest.mark.parametrize(
    ("out", "reason"),
    [("/proc/nope/v.jsonl", "No such file or directory"), ("/tmp", "Is a directory")],
)
def test_replay_out_that_cannot_be_written_is_a_one_line_error(out: str, reason: str) -> None:
    result = run("replay", "-", "--out", out, stdin=b'{"id": "a", "response": "x"}\n')
    assert result.returncode == 2
    assert result.stderr == f"llm-sidecar: error: cannot write {out}: {reason}\n"


def test_replay_of_a_file_with_no_event_shows_a_few_lines_then_counts(tmp_path: Path) -> None:
    events = tmp_path / "e.jsonl"
    events.write_bytes(
        b"".join(b'{"id": %d, "response": "x", "ts": "nope"}\n' % i for i in range(20_000))
        + b"{broken\n" * 5
    )
    result = run("replay", str(events))
    assert result.returncode == 1
    err = result.stderr.splitlines()
    assert len(err) == 12  # ten lines, the count of the rest, the error
    assert err[0].startswith("line 1: skipped: invalid_event: ts:")
    assert err[10] == (
        "... 19995 more skipped lines not shown (20005 in all: invalid_event: 20000, invalid_json: 5)"
    )
    assert err[11] == f"llm-sidecar: error: no line of {events} is an event"
    assert "dead-lettered (invalid_event: 20000, invalid_json: 5)" in result.stdout


@pytest.mark.parametrize("content", [b"", b"\n  \n\n"])
def test_replay_of_an_empty_capture_fails(tmp_path: Path, content: bytes) -> None:
    """A capture that came out empty used to pass with status 0 and an empty table, so a
    CI job replaying it stayed green."""
    events = tmp_path / "e.jsonl"
    events.write_bytes(content)
    result = run("replay", str(events))
    assert result.returncode == 1
    assert result.stderr == f"llm-sidecar: error: {events} holds no event\n"
    piped = run("replay", "-", stdin=content)
    assert piped.returncode == 1
    assert piped.stderr == "llm-sidecar: error: standard input holds no event\n"


def test_replay_refuses_outputs_that_would_overwrite_the_input_or_each_other(
    tmp_path: Path,
) -> None:
    """``--out`` is opened for writing before the input is read: naming the input emptied
    it, and the run reported "0 checked" with status 0."""
    events = tmp_path / "e.jsonl"
    line = b'{"id": "a", "response": "fine"}\n'
    events.write_bytes(line)
    result = run("replay", str(events), "--out", str(events))
    assert result.returncode == 2
    assert result.stderr == (
        f"llm-sidecar: error: --out {events} is the input {events}: give another path\n"
    )
    assert events.read_bytes() == line  # untouched
    (tmp_path / "sub").mkdir()
    other_spelling = tmp_path / "sub" / ".." / "e.jsonl"
    assert run("replay", str(events), "--report", str(other_spelling)).returncode == 2
    assert events.read_bytes() == line
    both = tmp_path / "r.html"
    result = run("replay", str(events), "--out", str(both), "--report", str(both))
    assert result.returncode == 2
    assert "--report" in result.stderr and "is --out" in result.stderr
    assert not both.exists()


def test_a_byte_order_mark_before_the_first_line_is_not_part_of_the_event(
    tmp_path: Path,
) -> None:
    """Editors and PowerShell's redirection write one; it made the first event invalid
    JSON (and with one event, the run failed)."""
    events = tmp_path / "e.jsonl"
    events.write_bytes(b"\xef\xbb\xbf" + b'{"id": "a", "response": "fine"}\r\n')
    out = tmp_path / "v.jsonl"
    result = run("replay", str(events), "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert "skipped" not in result.stderr
    assert orjson.loads(out.read_bytes())["id"] == "a"


@pytest.mark.parametrize(
    ("fmt", "doc", "command"),
    [
        ("llm-sidecar-v1", {"id": "a", "response": "fine"}, "jq -c '.' FILE"),
        ("llm-sidecar-v1", [{"id": "a", "response": "fine"}], "jq -c '.[]' FILE"),
        ("otlp-json", {"resourceSpans": []}, "jq -c '.' FILE"),
    ],
)
def test_a_pretty_printed_file_gets_a_hint(
    tmp_path: Path, fmt: str, doc: object, command: str
) -> None:
    """An indented JSON file was one invalid_json skip per line and nothing else."""
    events = tmp_path / "e.json"
    events.write_bytes(orjson.dumps(doc, option=orjson.OPT_INDENT_2))
    result = run("replay", "--format", fmt, str(events))
    assert result.returncode == 1
    assert "the file looks like pretty-printed JSON" in result.stderr
    assert f"`{command}`" in result.stderr
    # A compact file whose first line is simply broken gets no such hint.
    events.write_bytes(b'{"id": "a", "response": \n{"id": "b", "response": "x"}\n')
    result = run("replay", str(events))
    assert result.returncode == 0 and "pretty-printed" not in result.stderr


def test_an_unwritable_report_or_out_dash_fails_before_the_run(tmp_path: Path) -> None:
    """The report path was tried only after every event was checked and --out written
    over; --out - wrote a file named "-"."""
    events = tmp_path / "e.jsonl"
    events.write_text('{"id": "a", "response": "fine"}\n')
    keep = tmp_path / "keep.jsonl"
    keep.write_text("precious\n")
    result = run("replay", str(events), "--out", str(keep), "--report", "/proc/r.html")
    assert result.returncode == 2
    assert "cannot write /proc/r.html" in result.stderr
    assert keep.read_text() == "precious\n"
    dash = run("replay", str(events), "--out", "-")
    assert dash.returncode == 2 and "--out takes a file" in dash.stderr
    report = tmp_path / "r.html"
    assert run("replay", str(events), "--report", str(report)).returncode == 0
    assert report.stat().st_size > 0


def test_numeric_ids_are_taken_as_their_decimal_string(tmp_path: Path) -> None:
    events = tmp_path / "e.jsonl"
    events.write_bytes(
        b'{"id": 42, "response": "fine"}\n{"id": true, "response": "x"}\n{"id": 1.5, "response": "x"}\n'
    )
    out = tmp_path / "v.jsonl"
    result = run("replay", str(events), "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert [orjson.loads(v)["id"] for v in out.read_bytes().splitlines()] == ["42", "1.5"]
    assert result.stderr == "line 2: skipped: invalid_event: id: Input should be a valid string\n"


# -- every subcommand on bad input: one line on stderr, the documented exit code -----------

MISSING = "/nonexistent/llm-sidecar/nothing.yaml"

BAD_INPUTS: list[tuple[list[str], dict[str, str], int, str]] = [
    # (arguments, environment, exit status, text on the one stderr line)
    (["run", "--config", MISSING], {}, 2, f"config file {MISSING} does not exist"),
    (["run", "--config", "{bad_yaml}"], {}, 2, "is not valid YAML: line 2, column 1"),
    (["run", "--config", "{list_yaml}"], {}, 2, "must hold a mapping at the top level"),
    (["run"], {"LLM_SIDECAR_KAFKA__MAX_BATCH": "-3"}, 2, "kafka.max_batch: Input should be"),
    (["run"], {"LLM_SIDECAR_LOGLEVEL": "DEBUG"}, 2, "did you mean LLM_SIDECAR_LOG_LEVEL?"),
    (["run"], {"LLM_SIDECAR_KAFKA__TOPICS": '["a",'}, 2, "topics: '[\"a\",' is not valid JSON"),
    (["run"], {"LLM_SIDECAR_RULES": MISSING}, 2, f"the rules do not load: {MISSING}: no such"),
    (["run", "--frob"], {}, 2, "unrecognized arguments: --frob"),
    (["run", "--log-level", "LOUD"], {}, 2, "argument --log-level: invalid choice: 'LOUD'"),
    (["demo", "--partitions", "0"], {}, 2, "--partitions: must be between 1 and 64, not 0"),
    (["demo", "--partitions", "-1"], {}, 2, "--partitions: must be between 1 and 64, not -1"),
    (["demo", "--partitions", "100000"], {}, 2, "must be between 1 and 64, not 100000"),
    (["demo", "--partitions", "many"], {}, 2, "--partitions: 'many' is not a whole number"),
    (["demo", "--port", "70000"], {}, 2, "--port: must be between 0 and 65535"),
    (["demo", "--events", MISSING], {}, 2, f"cannot read {MISSING}: No such file"),
    (["demo", "--events", "{empty_yaml}"], {}, 2, "holds no event: give a JSONL file"),
    (["demo"], {"LLM_SIDECAR_KAFKA_TOPICS": "x"}, 2, "did you mean LLM_SIDECAR_KAFKA__TOPICS?"),
    (["demo", "--once", "--port", "0", "--rules", MISSING], {}, 2, "the rules do not load"),
    (["replay", MISSING], {}, 2, f"cannot read {MISSING}: No such file or directory"),
    (["replay"], {}, 2, "the following arguments are required: file"),
    (["replay", "--rules", "r.yaml", "e.jsonl"], {}, 2, "put FILE before --rules"),
    (["replay", "-", "--config", "a", "--config", "b"], {}, 2, "--config is given twice"),
    (["replay", "-", "--out", "a", "--out", "b"], {}, 2, "--out is given twice"),
    (["run", "--config", "a", "--config", "b"], {}, 2, "--config is given twice"),
    (
        ["run"],
        {
            "LLM_SIDECAR_INPUT__TOPICS": "otlp-spans=otlp-proto",
            "LLM_SIDECAR_KAFKA__TOPICS": "otlp_spans",
        },
        2,
        "input.topics names 'otlp-spans', which is not read (kafka.topics: otlp_spans)",
    ),
    (
        ["run"],
        {"LLM_SIDECAR_SOURCE": "mqtt", "LLM_SIDECAR_INPUT__TOPICS": "otel/spans=otlp-json"},
        2,
        "input.topics names 'otel/spans', which is not read (mqtt.topics: llm/events/#)",
    ),
    (["replay", "-", "--out", "/proc/nope/v.jsonl"], {}, 2, "cannot write /proc/nope/v.jsonl"),
    (["replay", "-", "--out", "{tmp}"], {}, 2, "Is a directory"),
    (["replay", "-", "--rules", MISSING], {}, 2, f"the rules do not load: {MISSING}: no such"),
    (["replay", "-", "--rules", "{empty_yaml}"], {}, 2, "the file is empty"),
    (["replay", "-", "--judge"], {}, 2, "replay --judge needs a judge endpoint"),
    (["replay", "-"], {"LLM_SIDECAR_RULES": "/etc/llm-sidecar/nope"}, 2, "/etc/llm-sidecar/nope"),
    (["replay", "-", "--config", "{tmp}"], {}, 2, "is a directory"),
    (["judge"], {}, 2, "llm-sidecar judge needs judge.topic"),
    (
        ["judge"],
        {"LLM_SIDECAR_SOURCE": "mqtt", "LLM_SIDECAR_JUDGE__TOPIC": "jt"},
        2,
        "llm-sidecar judge reads judge.topic from Kafka, and a source: mqtt sidecar",
    ),
    (["replay", "-"], {"LLM_SIDECAR_JUDGE__MODEL": ""}, 2, "judge.model: String should have"),
    # It used to run, publishing nothing for the judge workers.
    (["run"], {"LLM_SIDECAR_JUDGE__TOPIC": "jt"}, 2, "judge.topic 'jt' is set but judge.enabled"),
    (["run", "--workers", "0"], {}, 2, "argument --workers: must be between 1 and 64, not 0"),
    (["run", "--workers", "two"], {}, 2, "argument --workers: 'two' is not a whole number"),
    (["run", "--workers", "2"], {"LLM_SIDECAR_SOURCE": "mqtt"}, 2, "run --workers needs source"),
    (["run", "--workers", "2", "--config", "{bad_rule_run}"], {}, 2, "params.value: Input"),
    (
        ["run", "--workers", "3"],
        {"LLM_SIDECAR_HTTP__PORT": "65534"},
        2,
        "ports 65534-65536; ports end at 65535",
    ),
    (["judge", "--config", MISSING], {}, 2, "does not exist"),
    (["validate", MISSING], {}, 2, f"no such file or directory: {MISSING}"),
    (["validate"], {}, 2, "the following arguments are required: paths"),
    (["validate", "{bad_rule}"], {}, 1, "rule 'r1': params.value: Input should be"),
    (["validate", "{empty_yaml}"], {}, 1, "the file is empty"),
    (["version", "extra"], {}, 2, "unrecognized arguments: extra"),
    ([], {}, 2, "the following arguments are required: COMMAND"),
    (["frobnicate"], {}, 2, "argument COMMAND: invalid choice: 'frobnicate'"),
]


@pytest.fixture(scope="module")
def bad_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    d = tmp_path_factory.mktemp("bad")
    files = {
        "bad_yaml": "kafka: [\n",
        "list_yaml": "- a\n- b\n",
        "empty_yaml": "",
        "bad_rule": "rules:\n  - {id: r1, check: length_less_than, params: {value: many}}\n",
    }
    rule = d / "bad_rule.yaml"
    # run reads rules from its settings: a --config that points at the bad rule file
    (d / "bad_rule_run.yaml").write_text(f"rules: [{rule}]\n")
    out = {"tmp": str(d)}
    for name, text in files.items():
        path = d / f"{name}.yaml"
        path.write_text(text)
        out[name] = str(path)
    out["bad_rule_run"] = str(d / "bad_rule_run.yaml")
    return out


@pytest.mark.parametrize(
    ("args", "env", "status", "message"),
    BAD_INPUTS,
    ids=[" ".join(a[:3]) + (f" {next(iter(e))}" if e else "") for a, e, _, _ in BAD_INPUTS],
)
def test_bad_input_is_one_line_and_the_documented_exit_code(
    bad_files: dict[str, str], args: list[str], env: dict[str, str], status: int, message: str
) -> None:
    argv = [a.format(**bad_files) for a in args]
    clean = {k: v for k, v in os.environ.items() if not k.startswith("LLM_SIDECAR_")}
    if "LLM_SIDECAR_TANSU_BIN" in os.environ:
        clean["LLM_SIDECAR_TANSU_BIN"] = os.environ["LLM_SIDECAR_TANSU_BIN"]
    result = subprocess.run(
        [sys.executable, "-m", "sidecar", *argv],
        input="",
        env={**clean, "LLM_SIDECAR_HTTP__PORT": "0", **env},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == status, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    prefix = "invalid: " if status == 1 else "llm-sidecar: error: "
    assert lines[0].startswith(prefix), lines[0]
    assert message.format(**bad_files) in lines[0]


# -- the docs say what the CLI and the settings do --------------------------------------


def test_docs_synopsis_lists_every_option_of_every_command() -> None:
    from sidecar.cli import _parser

    readme = (REPO / "docs" / "cli.md").read_text()
    pages = [readme]
    commands = next(
        a for a in _parser()._actions if isinstance(a, argparse._SubParsersAction)
    ).choices
    for name, sub in commands.items():
        row = next(
            line
            for page in pages
            for line in page.splitlines()
            if line.startswith(f"| `llm-sidecar {name}")
        )
        synopsis = row.split("`")[1]
        options = {
            o
            for action in sub._actions
            if action.help != argparse.SUPPRESS  # internal, e.g. run --worker I/N
            for o in action.option_strings
            if o.startswith("--") and o not in ("--help", "--log-level")
        }
        assert options == set(re.findall(r"--[a-z-]+", synopsis)), name
        assert sub.description, f"{name} --help has no description"
    assert "`--log-level DEBUG|INFO|WARNING|ERROR` is accepted before or after the" in readme


def test_rules_take_several_paths_and_log_level_comes_after_the_command(tmp_path: Path) -> None:
    a = tmp_path / "a.yaml"
    a.write_text("rules:\n  - {id: short, check: length_less_than, params: {value: 100}}\n")
    b = tmp_path / "b.yaml"
    b.write_text("rules:\n  - {id: no-x, check: contains_none, params: {keywords: [x]}}\n")
    result = run(
        "replay", "-", "--rules", str(a), str(b), "--log-level", "ERROR",
        stdin=b'{"id": "e", "response": "fine"}\n',
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "short" in result.stdout and "no-x" in result.stdout


def test_run_help_describes_the_settings() -> None:
    result = run("run", "--help")
    assert result.returncode == 0
    text = " ".join(result.stdout.split())
    assert "LLM_SIDECAR_" in text and "--config" in text and "exit status" in text
    assert "Consume events from Kafka or MQTT" in text


def test_every_option_has_help_text() -> None:
    from sidecar.cli import _parser

    commands = next(
        a for a in _parser()._actions if isinstance(a, argparse._SubParsersAction)
    ).choices
    for name, sub in commands.items():
        for action in sub._actions:
            assert action.help, f"{name} {action.dest} has no help text"


def test_validate_keeps_the_yaml_caret(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("rules:\n  - {id: a\n   x: [\n")
    result = run("validate", str(bad))
    assert result.returncode == 1
    lines = result.stderr.splitlines()
    assert lines[0] == (
        f"invalid: {bad}: not valid YAML: line 3, column 5: "
        "while parsing a flow mapping: expected ',' or '}', but got ':'"
    )
    assert lines[1].strip() == "x: [" and lines[2].strip() == "^"
    assert lines[2].index("^") == lines[1].index("x") + 1


def test_a_rule_reading_a_field_events_do_not_have_is_pointed_out(tmp_path: Path) -> None:
    """``field: respnse`` is valid (events may carry fields of their own) but almost always a
    typo after which the rule applies to no event: validate passed it without a word, and
    the events counted as passing every rule."""
    rules = tmp_path / "r.yaml"
    rules.write_text(
        "rules:\n"
        "  - {id: typo, check: length_greater_than, field: respnse, params: {value: 0}}\n"
        "  - {id: fine, check: length_greater_than, field: prompt, params: {value: 0}}\n"
    )
    result = run("validate", str(rules))
    assert result.returncode == 0  # still valid
    notes = [line for line in result.stdout.splitlines() if line.startswith("note: ")]
    assert notes == [
        f"note: {rules}: rule 'typo' reads field 'respnse', which events do not have unless "
        "they carry it as a field of their own (did you mean 'response'? the event's fields: "
        "prompt, response, system_prompt, contexts, ground_truths)"
    ]
    replayed = run("replay", "-", "--rules", str(rules), stdin=b'{"id": "a", "response": "x"}\n')
    assert replayed.returncode == 0
    assert f"note: {rules}: rule 'typo' reads field 'respnse'" in replayed.stderr


def test_rule_problems_lose_pydantics_prefix(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("rules:\n  - {id: k, check: contains_any, params: {keywords: ['']}}\n")
    result = run("validate", str(bad))
    assert result.returncode == 1
    assert result.stderr == (
        f"invalid: {bad}: rule 'k': params.keywords: keywords must not be empty strings\n"
    )


def test_a_closed_stdout_is_not_a_traceback() -> None:
    """`llm-sidecar validate rules/ | head -1` ended in a BrokenPipeError traceback."""
    read, write = os.pipe()
    os.close(read)  # the reader is gone before the first line
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "sidecar", "validate", str(REPO / "rules" / "default.yaml")],
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
            check=False,
        )
    finally:
        os.close(write)
    assert proc.returncode == 1
    assert proc.stderr == ""


def _in_mask(pid: int, mask: str, signum: int) -> bool:
    """Whether ``signum`` is in process ``pid``'s ``SigIgn`` (ignored) or ``SigCgt`` (caught)
    mask now (Linux: /proc/PID/status)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    bits = next((line.split()[1] for line in status.splitlines() if line.startswith(mask)), "0")
    return bool(int(bits, 16) >> (signum - 1) & 1)


def _wait_for_mask(pid: int, mask: str, signum: int) -> None:
    deadline = time.monotonic() + 30
    while not _in_mask(pid, mask, signum) and time.monotonic() < deadline:
        time.sleep(0.001)


def test_a_sighup_during_start_does_not_end_run() -> None:
    """SIGHUP (reload) in the first half second, before the handler was in place, ended the
    process with status 129 and no line."""
    env = {
        **os.environ,
        "LLM_SIDECAR_KAFKA__BOOTSTRAP_SERVERS": f"127.0.0.1:{free_port()}",  # waited for
        "LLM_SIDECAR_HTTP__PORT": "0",
    }
    with subprocess.Popen(
        [sys.executable, "-m", "sidecar", "run"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    ) as proc:
        try:
            # Imports under way: the command ignores SIGHUP until run's handler is in place.
            # Waiting for that, rather than a fixed time, keeps a loaded machine from
            # signalling an interpreter that has not started yet (which no code can help).
            _wait_for_mask(proc.pid, "SigIgn:", signal.SIGHUP)
            proc.send_signal(signal.SIGHUP)
            time.sleep(2.0)
            assert proc.poll() is None, proc.communicate()[1]
            _wait_for_mask(proc.pid, "SigCgt:", signal.SIGTERM)  # run is up: it drains
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(timeout=30) == 0
        finally:
            if proc.poll() is None:
                proc.kill()


def test_replay_and_validate_tell_of_a_missing_file_before_loading_anything(
    tmp_path: Path,
) -> None:
    """A wrong path is said before the rules load (a second or two of compiling) and without
    the service's stack (HTTP server, Kafka client): with rules that do not load, the
    missing input is what replay reports, and neither command imports that stack."""
    rules = tmp_path / "bad.yaml"
    rules.write_text("rules:\n  - {id: r1, check: length_less_than, params: {value: many}}\n")
    config = tmp_path / "c.yaml"
    config.write_text(f"rules: [{rules}]\n")
    missing = tmp_path / "nothing.jsonl"
    result = run("replay", str(missing), "--config", str(config))
    assert result.returncode == 2, result.stderr
    assert f"cannot read {missing}" in result.stderr and "r1" not in result.stderr
    probe = (
        "import sys; import sidecar.cli, sidecar.replay, sidecar.rules; "
        "print(sorted(m for m in ('sidecar.app', 'aiohttp', 'aiokafka') if m in sys.modules))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    assert loaded.stdout.strip() == "[]", loaded.stdout
