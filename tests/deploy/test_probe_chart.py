"""The chart's probe component: one replica of `llm-sidecar probe`, the key from a Secret,
settings that load, and values the schema and the templates refuse."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from sidecar.settings import load_settings

from .conftest import REPO, VALUES_ALL, Render, RenderError, by_kind, env_of
from .test_chart import validate_offline

PROBE = {
    "probe": {
        "enabled": True,
        "baseUrl": "https://models.example.com/v1",
        "model": "support-model",
        "apiKey": {"existingSecret": "target-key"},
        "extraHeaders": {"X-Team": "safety"},
        "systemPrompt": "You are the support assistant of Acme Bikes. Talk about bikes only.",
        "probesPerHour": 720,
        "tokensPerMinute": 20000,
        "route": "/v1/chat",
    }
}


def overlay(tmp_path: Path, values: dict[str, Any], name: str = "probe.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(values), encoding="utf-8")
    return path


def probe_parts(docs: list[dict[str, Any]]) -> tuple[dict[str, Any], dict[str, Any]]:
    (deployment,) = [
        d for d in by_kind(docs, "Deployment") if d["metadata"]["name"].endswith("-probe")
    ]
    (c,) = deployment["spec"]["template"]["spec"]["containers"]
    return deployment, c


def test_probe_renders_one_replica_with_its_service_and_valid_manifests(
    render: Render, tmp_path: Path
) -> None:
    docs = render(VALUES_ALL, overlay(tmp_path, PROBE))
    deployment, c = probe_parts(docs)
    assert deployment["spec"]["replicas"] == 1
    assert deployment["spec"]["strategy"] == {"type": "Recreate"}
    assert c["args"][0] == "probe"
    env = env_of(c)
    assert env["LLM_SIDECAR_PROBE__API_KEY"]["valueFrom"] == {
        "secretKeyRef": {"name": "target-key", "key": "api-key"}
    }
    assert "value" not in env["LLM_SIDECAR_PROBE__API_KEY"]
    (service,) = [s for s in by_kind(docs, "Service") if s["metadata"]["name"].endswith("-probe")]
    assert service["spec"]["selector"].items() <= (
        deployment["spec"]["template"]["metadata"]["labels"].items()
    )
    monitor = by_kind(docs, "ServiceMonitor")[0]
    assert (
        monitor["spec"]["selector"]["matchLabels"].items() <= service["metadata"]["labels"].items()
    )
    validate_offline(docs)
    assert not by_kind(render(VALUES_ALL), "Deployment")[1:], "off by default"


def test_rendered_probe_settings_load_and_dry_run(
    render: Render, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    docs = render(overlay(tmp_path, PROBE))
    _, c = probe_parts(docs)
    (prompt_cm,) = [cm for cm in by_kind(docs, "ConfigMap") if "system-prompt.txt" in cm["data"]]
    prompt = tmp_path / "system-prompt.txt"
    prompt.write_text(prompt_cm["data"]["system-prompt.txt"], encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("LLM_SIDECAR_")}
    for name, e in env_of(c).items():
        env[name] = e.get("value", "from-a-secret")
    env["LLM_SIDECAR_PROBE__SYSTEM_PROMPT_FILE"] = str(prompt)
    for name, value in env.items():
        if name.startswith("LLM_SIDECAR_"):
            monkeypatch.setenv(name, value)
    settings = load_settings(None)
    p = settings.probe
    assert p.enabled and p.base_url == "https://models.example.com/v1"
    assert p.model == "support-model" and p.extra_headers == {"X-Team": "safety"}
    assert p.api_key is not None and p.api_key.get_secret_value() == "from-a-secret"
    assert p.probes_per_hour == 720 and p.tokens_per_minute == 20000 and p.route == "/v1/chat"
    done = subprocess.run(
        [sys.executable, "-m", "sidecar", "probe", "--dry-run"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "https://models.example.com/v1/chat/completions, model support-model" in done.stdout
    assert "720 probes/hour" in done.stdout


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"baseUrl": ""}, "probe.enabled needs probe.baseUrl and probe.model"),
        ({"systemPromptId": "support"}, "one of probe.systemPromptId and probe.systemPrompt"),
        ({"systemPrompt": ""}, "one of probe.systemPromptId and probe.systemPrompt"),
        ({"probesPerHour": 0}, "schema"),
        ({"replicas": 2}, "schema"),
    ],
)
def test_bad_probe_values_fail_the_render(
    render: Render, tmp_path: Path, change: dict[str, Any], message: str
) -> None:
    values = {"probe": {**PROBE["probe"], **change}}
    with pytest.raises(RenderError, match=re.escape(message)):
        render(overlay(tmp_path, values))


def test_probe_publishes_over_mqtt_too(
    render: Render, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    values = {
        **PROBE,
        "source": "mqtt",
        "mqtt": {"host": "broker", "topics": ["llm/events/#"]},
        "probe": {**PROBE["probe"], "topic": "llm/events/redteam"},
    }
    _, c = probe_parts(render(overlay(tmp_path, values)))
    for name in list(os.environ):
        if name.startswith("LLM_SIDECAR_"):
            monkeypatch.delenv(name)
    for name, e in env_of(c).items():
        monkeypatch.setenv(name, e.get("value", "from-a-secret"))
    settings = load_settings(None)
    assert settings.source == "mqtt" and settings.mqtt.host == "broker"
    assert settings.probe.topic == "llm/events/redteam"
