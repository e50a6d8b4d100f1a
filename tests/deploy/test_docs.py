"""docs/deploy.md: its values files render into valid manifests and its sidecar snippet matches
what the chart prints."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from .conftest import REPO, Render, container, env_of, one
from .test_chart import CRD_KINDS, validate_offline

DOC = REPO / "docs" / "deploy.md"


def yaml_blocks() -> list[Any]:
    text = DOC.read_text(encoding="utf-8")
    blocks = re.findall(r"```yaml\n(.*?)```", text, flags=re.S)
    return [doc for b in blocks for doc in yaml.safe_load_all(b)]


def write(tmp_path: Path, values: dict[str, Any]) -> Path:
    path = tmp_path / "values.yaml"
    path.write_text(yaml.safe_dump(values), encoding="utf-8")
    return path


def test_worked_values_file_renders_valid_manifests(render: Render, tmp_path: Path) -> None:
    text = DOC.read_text(encoding="utf-8")
    block = text.split("<!-- values-example", 1)[1].split("```yaml\n", 1)[1].split("```", 1)[0]
    docs = render(write(tmp_path, yaml.safe_load(block)))
    assert validate_offline(docs) == CRD_KINDS
    env = env_of(container(docs))
    assert "secretKeyRef" in env["LLM_SIDECAR_KAFKA__SASL_PLAIN_PASSWORD"]["valueFrom"]


def test_sidecar_example_matches_the_chart(render: Render, tmp_path: Path) -> None:
    blocks = yaml_blocks()
    (values,) = [b for b in blocks if isinstance(b, dict) and b.get("mode") == "sidecar"]
    (pod,) = [b for b in blocks if isinstance(b, dict) and "containers" in b.get("spec", {})]
    docs = render(write(tmp_path, values))
    validate_offline(docs)
    service = one(docs, "Service")
    assert service["spec"]["selector"] == values["sidecar"]["podSelector"]
    # The documented container sets the same variables the chart's snippet would.
    (documented,) = [c for c in pod["spec"]["containers"] if c["name"] == "llm-sidecar"]
    chart = render(
        write(tmp_path, {**values, "mode": "standalone"}),
    )
    rendered = container(chart)
    assert set(env_of(documented)) == set(env_of(rendered)) - {"LLM_SIDECAR_KAFKA__CLIENT_ID"}
    for name, e in env_of(documented).items():
        assert e == env_of(rendered)[name], name
    assert [m["mountPath"] for m in documented["volumeMounts"]] == [
        m["mountPath"] for m in rendered["volumeMounts"]
    ]


def test_worked_values_file_settings_load(render: Render, tmp_path: Path, monkeypatch: Any) -> None:
    """The settings the worked values file gives the pods load as llm-sidecar reads them."""
    from sidecar.settings import load_settings

    text = DOC.read_text(encoding="utf-8")
    block = text.split("<!-- values-example", 1)[1].split("```yaml\n", 1)[1].split("```", 1)[0]
    docs = render(write(tmp_path, yaml.safe_load(block)))
    assert validate_offline(docs) == CRD_KINDS
    env = env_of(container(docs))
    settings_cm = next(
        d for d in docs if d["kind"] == "ConfigMap" and "settings.yaml" in d.get("data", {})
    )
    config = tmp_path / "settings.yaml"
    config.write_text(settings_cm["data"]["settings.yaml"], encoding="utf-8")
    for name, e in env.items():
        if "value" in e:
            monkeypatch.setenv(name, e["value"])
    monkeypatch.setenv("LLM_SIDECAR_KAFKA__SASL_PLAIN_PASSWORD", "from-a-secret")
    settings = load_settings(config)
    assert settings.judge.enabled
    assert settings.kafka.topics == ["chat-events", "rag-events"]
