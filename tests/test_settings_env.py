"""Settings from the environment: plain lists and mappings, one-line errors, hints."""

from __future__ import annotations

from pathlib import Path

import pytest

from sidecar.errors import ConfigError
from sidecar.settings import load_settings


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    for key in list(os.environ):
        if key.startswith("LLM_SIDECAR_"):
            monkeypatch.delenv(key)


def test_lists_may_be_comma_separated(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LLM_SIDECAR_RULES", "/etc/llm-sidecar/rules, /etc/extra.yaml")
    monkeypatch.setenv("LLM_SIDECAR_KAFKA__TOPICS", "llm-events")
    monkeypatch.setenv("LLM_SIDECAR_LABELS__ROUTES", "/chat,/search")
    monkeypatch.setenv("LLM_SIDECAR_JUDGE__TRIGGERS__FAILED_CHECKS", "refusal")
    monkeypatch.setenv("LLM_SIDECAR_WINDOWS__WINDOWS", "1m,5m")
    s = load_settings()
    assert s.rules == [Path("/etc/llm-sidecar/rules"), Path("/etc/extra.yaml")]
    assert s.kafka.topics == ["llm-events"]
    assert s.labels.routes == ["/chat", "/search"]
    assert s.judge.triggers.failed_checks == ["refusal"]
    assert s.windows.windows == ["1m", "5m"]


def test_json_still_works(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LLM_SIDECAR_KAFKA__TOPICS", '["a", "b,c"]')
    monkeypatch.setenv("LLM_SIDECAR_SYSTEM_PROMPTS", '{"support": "Be brief, be kind."}')
    s = load_settings()
    assert s.kafka.topics == ["a", "b,c"]
    assert s.system_prompts == {"support": "Be brief, be kind."}


def test_mappings_may_be_key_value_pairs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LLM_SIDECAR_SYSTEM_PROMPTS", "support=You help, sales=You sell")
    monkeypatch.setenv("LLM_SIDECAR_JUDGE__ROUTE_RATES", "/chat=0.5")
    s = load_settings()
    assert s.system_prompts == {"support": "You help", "sales": "You sell"}
    assert s.judge.route_rates == {"/chat": 0.5}


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("LLM_SIDECAR_KAFKA__TOPICS", '["a",', "topics: '[\"a\",' is not valid JSON"),
        ("LLM_SIDECAR_SECRETS", "canary", "secrets: 'canary' is not key=value"),
        ("LLM_SIDECAR_KAFKA__MAX_BATCH", "-1", "kafka.max_batch: Input should be greater"),
        ("LLM_SIDECAR_MQTT__HOST", "mqtt..svc", "mqtt.host: 'mqtt..svc' is not a host name"),
        ("LLM_SIDECAR_MQTT__HOST", "x" * 64, "is not a host name"),
    ],
)
def test_bad_values_are_one_line_errors(
    monkeypatch: pytest.MonkeyPatch, name: str, value: str, message: str
) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(ConfigError) as info:
        load_settings()
    text = str(info.value)
    assert "\n" not in text
    assert text.startswith("invalid settings (from the environment): ")
    assert message in text


def test_validator_messages_lose_pydantics_prefix(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LLM_SIDECAR_KAFKA__SECURITY_PROTOCOL", "SASL_SSL")
    with pytest.raises(ConfigError) as info:
        load_settings()
    assert "needs sasl_plain_username" in str(info.value)
    assert "Value error" not in str(info.value)


@pytest.mark.parametrize(
    ("name", "hint"),
    [
        ("LLM_SIDECAR_LOGLEVEL", "LLM_SIDECAR_LOG_LEVEL"),
        ("LLM_SIDECAR_KAFKA_TOPICS", "LLM_SIDECAR_KAFKA__TOPICS"),
        ("LLM_SIDECAR_JUDGE_BASE_URL", "LLM_SIDECAR_JUDGE__BASE_URL"),
    ],
)
def test_unknown_variables_name_the_likely_setting(
    monkeypatch: pytest.MonkeyPatch, name: str, hint: str
) -> None:
    monkeypatch.setenv(name, "x")
    with pytest.raises(ConfigError, match=f"did you mean {hint}\\?"):
        load_settings()
