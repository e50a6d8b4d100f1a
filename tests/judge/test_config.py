"""JudgeSettings: validation, secrets, and overrides from rule files."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from sidecar.errors import ConfigError
from sidecar.judge.config import METRICS, JudgeSettings


def test_defaults_are_off_and_cover_every_metric() -> None:
    s = JudgeSettings()
    assert s.enabled is False
    assert tuple(s.metrics) == METRICS
    assert s.triggers.failed_checks == ["refusal", "prompt_leakage"]


def test_secret_is_hidden() -> None:
    s = JudgeSettings(api_key="sk-very-secret")
    assert "sk-very-secret" not in repr(s) and "sk-very-secret" not in str(s.model_dump())


@pytest.mark.parametrize(
    "bad",
    [
        {"sample_rate": 1.5},
        {"route_rates": {"chat": -0.1}},
        {"metrics": ["vibes"]},
        {"metrics": []},
        {"timeout_s": 30, "deadline_s": 10},
        {"base_url": "ftp://judge"},
        {"unknown": 1},
    ],
)
def test_invalid_settings_are_refused(bad: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        JudgeSettings(**bad)  # type: ignore[arg-type]


def test_rate_for_route() -> None:
    s = JudgeSettings(sample_rate=0.1, route_rates={"rag": 0.5})
    assert s.rate_for("rag") == 0.5
    assert s.rate_for("chat") == 0.1
    assert s.rate_for(None) == 0.1


def test_merge_applies_rule_file_overrides() -> None:
    base = JudgeSettings(api_key="k", sample_rate=0.01, triggers={"attack": False})
    merged = base.merge(
        {
            "sample_rate": 0.2,
            "metrics": ["faithfulness"],
            "triggers": {"failed_rules": ["leak-*"]},
            "max_tokens_per_minute": 5000,
        }
    )
    assert merged.sample_rate == 0.2
    assert merged.metrics == ["faithfulness"]
    assert merged.triggers.failed_rules == ["leak-*"]
    assert merged.triggers.attack is False  # kept: triggers merge key by key
    assert merged.max_tokens_per_minute == 5000
    assert merged.api_key is not None and merged.api_key.get_secret_value() == "k"
    assert base.sample_rate == 0.01  # frozen, untouched
    assert base.merge({}) is base


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"base_url": "http://evil/v1"}, "base_url"),
        ({"sample_rate": 2}, "sample_rate"),
        ({"metrics": ["nope"]}, "metrics"),
        ({"metrics": []}, "metrics"),
    ],
)
def test_merge_refuses_what_rules_may_not_set(overrides: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        JudgeSettings().merge(overrides)
