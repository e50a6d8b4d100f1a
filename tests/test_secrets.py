"""Secrets never reach logs, reprs, errors or metrics."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from sidecar.settings import load_settings

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


def test_a_failing_run_logs_no_secret_even_at_debug(tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text(
        "kafka:\n"
        "  bootstrap_servers: 127.0.0.1:1\n"
        "  request_timeout_ms: 2000\n"
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
    result = subprocess.run(
        [sys.executable, "-m", "sidecar", "--log-level", "DEBUG", "run", "--config", str(config)],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        check=False,
    )
    assert result.returncode == 1
    assert "cannot reach Kafka" in result.stderr
    assert "DEBUG" in result.stderr  # debug logging really was on
    assert CANARY not in result.stderr + result.stdout


def test_misspelled_environment_settings_are_refused(monkeypatch: object) -> None:
    import pytest

    from sidecar.errors import ConfigError

    monkeypatch.setenv("LLM_SIDECAR_KAFKA_BOOTSTRAP_SERVERS", "kafka:9092")  # type: ignore[attr-defined]
    with pytest.raises(ConfigError, match="LLM_SIDECAR_KAFKA_BOOTSTRAP_SERVERS"):
        load_settings()
    monkeypatch.delenv("LLM_SIDECAR_KAFKA_BOOTSTRAP_SERVERS")  # type: ignore[attr-defined]
    monkeypatch.setenv("LLM_SIDECAR_KAFKA__BOOTSTRAP_SERVERS", "kafka:9092")  # type: ignore[attr-defined]
    assert load_settings().kafka.bootstrap_servers == "kafka:9092"
