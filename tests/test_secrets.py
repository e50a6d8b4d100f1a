"""Secrets never reach logs, reprs, errors or metrics."""

from __future__ import annotations

import os
from pathlib import Path

from sidecar.settings import load_settings
from tests.test_cli import run_until

CANARY = "canary-Zq81-do-not-log"


def test_settings_never_show_secrets(tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text(
        "kafka:\n"
        "  security_protocol: SASL_SSL\n"
        "  sasl_mechanism: SCRAM-SHA-512\n"
        "  sasl_plain_username: monitor\n"
        f"  sasl_plain_password: {CANARY}-kafka\n"
        f"  ssl_password: {CANARY}-tls\n"
        f"judge: {{api_key: {CANARY}-judge}}\n"
        f"api: {{token: {CANARY}-api}}\n"
        f"secrets: {{support: {CANARY}-secret}}\n"
    )
    settings = load_settings(config)
    for text in (repr(settings), str(settings), settings.model_dump_json()):
        assert CANARY not in text
    assert settings.kafka.sasl_plain_password is not None
    assert settings.kafka.sasl_plain_password.get_secret_value() == f"{CANARY}-kafka"


def test_a_run_that_cannot_reach_kafka_logs_no_secret_even_at_debug(tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text(
        "kafka:\n"
        "  bootstrap_servers: 127.0.0.1:1\n"
        "  request_timeout_ms: 2000\n"
        "  session_timeout_ms: 1500\n"
        "  heartbeat_interval_ms: 500\n"
        "  security_protocol: SASL_PLAINTEXT\n"
        "  sasl_mechanism: PLAIN\n"
        "  sasl_plain_username: monitor\n"
        "http: {host: 127.0.0.1, port: 0}\n"
    )
    env = {
        **os.environ,
        "LLM_SIDECAR_KAFKA__SASL_PLAIN_PASSWORD": f"{CANARY}-kafka",
        "LLM_SIDECAR_JUDGE__API_KEY": f"{CANARY}-judge",
        "LLM_SIDECAR_JUDGE__ENABLED": "true",
        "LLM_SIDECAR_API__TOKEN": f"{CANARY}-api",
    }
    log = tmp_path / "run.log"
    args = ("--log-level", "DEBUG", "run", "--config", str(config))
    assert run_until(log, *args, until="unreachable", env=env) == 0
    output = log.read_text()
    assert "Kafka at 127.0.0.1:1 is unreachable" in output
    assert "DEBUG" in output  # debug logging really was on
    assert CANARY not in output


def test_misspelled_environment_settings_are_refused(monkeypatch: object) -> None:
    import pytest

    from sidecar.errors import ConfigError

    monkeypatch.setenv("LLM_SIDECAR_KAFKA_BOOTSTRAP_SERVERS", "kafka:9092")  # type: ignore[attr-defined]
    with pytest.raises(ConfigError, match="LLM_SIDECAR_KAFKA_BOOTSTRAP_SERVERS"):
        load_settings()
    monkeypatch.delenv("LLM_SIDECAR_KAFKA_BOOTSTRAP_SERVERS")  # type: ignore[attr-defined]
    monkeypatch.setenv("LLM_SIDECAR_KAFKA__BOOTSTRAP_SERVERS", "kafka:9092")  # type: ignore[attr-defined]
    assert load_settings().kafka.bootstrap_servers == "kafka:9092"
