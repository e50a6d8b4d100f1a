"""The chart in judge scale-out mode, its KEDA authentication for SASL, and its values schema."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from sidecar.settings import Settings, load_settings

from .conftest import CHART, KUBE_VERSION, VALUES_ALL, Render, RenderError, by_kind, env_of
from .test_chart import validate_offline

SCALE_OUT = {"judgeWorker": {"enabled": True, "topic": "llm-judge", "replicas": 3}}


def overlay(tmp_path: Path, values: dict[str, Any]) -> Path:
    path = tmp_path / "scale-out.yaml"
    path.write_text(yaml.safe_dump(values), encoding="utf-8")
    return path


def deployments(docs: list[dict[str, Any]]) -> tuple[dict[str, Any], dict[str, Any]]:
    (check,) = [
        d
        for d in by_kind(docs, "Deployment")
        if not d["metadata"]["name"].endswith("-judge-worker")
    ]
    (worker,) = [
        d for d in by_kind(docs, "Deployment") if d["metadata"]["name"].endswith("-judge-worker")
    ]
    return check, worker


def matches(selector: dict[str, str], labels: dict[str, str]) -> bool:
    return selector.items() <= labels.items()


def settings_of(
    container: dict[str, Any], docs: list[dict[str, Any]], tmp_path: Path, mp: pytest.MonkeyPatch
) -> Settings:
    (config_cm,) = [cm for cm in by_kind(docs, "ConfigMap") if "settings.yaml" in cm["data"]]
    config = tmp_path / "settings.yaml"
    config.write_text(config_cm["data"]["settings.yaml"], encoding="utf-8")
    for name in list(os.environ):
        if name.startswith("LLM_SIDECAR_"):
            mp.delenv(name)
    for name, e in env_of(container).items():
        if "value" in e:
            mp.setenv(name, e["value"])
        elif "secretKeyRef" in e["valueFrom"]:
            mp.setenv(name, "from-a-secret")
        else:
            mp.setenv(name, "pod-abc12")
    return load_settings(config)


def test_scale_out_renders_a_worker_deployment_beside_the_check_path(
    render: Render, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    docs = render(VALUES_ALL, overlay(tmp_path, SCALE_OUT))
    validate_offline(docs)  # the worker Deployment and Service are strictly valid
    check, worker = deployments(docs)
    pod = worker["spec"]["template"]
    (c,) = pod["spec"]["containers"]
    assert c["args"] == ["judge", "--config", "/etc/llm-sidecar/config/settings.yaml"]
    assert worker["spec"]["replicas"] == 3
    # Workers poll the rule files for judge: changes: the rules directory is mounted.
    assert "/etc/llm-sidecar/rules" in [m["mountPath"] for m in c["volumeMounts"]]
    assert all("subPath" not in m for m in c["volumeMounts"])
    assert c["resources"]["limits"] and c["resources"]["requests"]

    # No selector of one workload matches the other's pods.
    check_pods = check["spec"]["template"]["metadata"]["labels"]
    worker_pods = pod["metadata"]["labels"]
    assert not matches(check["spec"]["selector"]["matchLabels"], worker_pods)
    assert not matches(worker["spec"]["selector"]["matchLabels"], check_pods)
    services = {s["metadata"]["name"]: s for s in by_kind(docs, "Service")}
    main = services["demo-llm-sidecar"]
    workers = services["demo-llm-sidecar-judge-worker"]
    assert not matches(main["spec"]["selector"], worker_pods)
    assert matches(workers["spec"]["selector"], worker_pods)
    # One ServiceMonitor scrapes both Services (the judged windows live in the workers).
    (monitor,) = by_kind(docs, "ServiceMonitor")
    selector = monitor["spec"]["selector"]["matchLabels"]
    assert matches(selector, main["metadata"]["labels"])
    assert matches(selector, workers["metadata"]["labels"])

    # Both load valid settings: the check path publishes samples, the worker consumes them.
    worker_settings = settings_of(c, docs, tmp_path, monkeypatch)
    assert worker_settings.judge.topic == "llm-judge"
    assert worker_settings.judge.workers == 3
    (check_c,) = check["spec"]["template"]["spec"]["containers"]
    check_settings = settings_of(check_c, docs, tmp_path, monkeypatch)
    assert check_settings.judge.enabled and check_settings.judge.topic == "llm-judge"


def test_keda_scales_workers_on_judge_lag_with_the_charts_sasl_authentication(
    render: Render, tmp_path: Path
) -> None:
    values = {
        "keda": {"authenticationRef": ""},  # let the chart render the TriggerAuthentication
        "judgeWorker": {
            "enabled": True,
            "topic": "llm-judge",
            "keda": {"enabled": True, "maxReplicaCount": 5, "lagThreshold": 20},
        },
    }
    docs = render(VALUES_ALL, overlay(tmp_path, values))
    validate_offline(docs)
    (auth,) = by_kind(docs, "TriggerAuthentication")
    assert auth["apiVersion"] == "keda.sh/v1alpha1"
    # The password from the Secret llm-sidecar uses; never a literal.
    assert auth["spec"]["secretTargetRef"] == [
        {"parameter": "password", "name": "kafka-credentials", "key": "sasl-password"}
    ]
    assert auth["spec"]["env"] == [
        {"parameter": "username", "name": "LLM_SIDECAR_KAFKA__SASL_PLAIN_USERNAME"}
    ]
    scaled = {s["metadata"]["name"]: s for s in by_kind(docs, "ScaledObject")}
    assert set(scaled) == {"demo-llm-sidecar", "demo-llm-sidecar-judge-worker"}
    for s in scaled.values():
        for t in s["spec"]["triggers"]:
            assert t["authenticationRef"] == {"name": auth["metadata"]["name"]}
            assert t["metadata"]["sasl"] == "scram_sha512"
            assert t["metadata"]["tls"] == "enable"
    (trigger,) = scaled["demo-llm-sidecar-judge-worker"]["spec"]["triggers"]
    assert trigger["metadata"]["topic"] == "llm-judge"
    assert trigger["metadata"]["consumerGroup"] == "llm-sidecar-prod-judge"
    assert trigger["metadata"]["lagThreshold"] == "20"
    check, worker = deployments(docs)
    assert "replicas" not in worker["spec"]  # KEDA owns it
    # Every worker enforces a share of the budgets sized for KEDA's maximum.
    (c,) = worker["spec"]["template"]["spec"]["containers"]
    assert env_of(c)["LLM_SIDECAR_JUDGE__WORKERS"]["value"] == "5"
    # The TriggerAuthentication reads the user name from the scaled containers' environment.
    for d in (check, worker):
        (first, *_) = d["spec"]["template"]["spec"]["containers"]
        assert "LLM_SIDECAR_KAFKA__SASL_PLAIN_USERNAME" in env_of(first)


@pytest.mark.parametrize(
    ("mechanism", "protocol", "sasl", "tls"),
    [
        ("PLAIN", "SASL_PLAINTEXT", "plaintext", "disable"),
        ("SCRAM-SHA-256", "SASL_SSL", "scram_sha256", "enable"),
    ],
)
def test_keda_sasl_mode_follows_the_mechanism(
    render: Render, mechanism: str, protocol: str, sasl: str, tls: str
) -> None:
    docs = render(
        set_values=[
            "keda.enabled=true",
            f"kafka.securityProtocol={protocol}",
            f"kafka.saslMechanism={mechanism}",
            "kafka.saslUsername=svc",
            "kafka.saslPassword.existingSecret=kafka-auth",
        ]
    )
    (scaled,) = by_kind(docs, "ScaledObject")
    (trigger,) = scaled["spec"]["triggers"]
    assert (trigger["metadata"]["sasl"], trigger["metadata"]["tls"]) == (sasl, tls)
    assert len(by_kind(docs, "TriggerAuthentication")) == 1


def test_no_trigger_authentication_without_sasl_or_with_your_own(render: Render) -> None:
    assert not by_kind(render(set_values=["keda.enabled=true"]), "TriggerAuthentication")
    docs = render(VALUES_ALL)  # names its own: keda.authenticationRef
    assert not by_kind(docs, "TriggerAuthentication")
    (scaled,) = by_kind(docs, "ScaledObject")
    assert all("sasl" not in t["metadata"] for t in scaled["spec"]["triggers"])


@pytest.mark.parametrize(
    ("values", "message"),
    [
        (["source=mqtt", "judgeWorker.enabled=true"], "needs source kafka"),
        (["judgeWorker.enabled=true", "judgeWorker.topic="], "needs judgeWorker.topic"),
        (["judgeWorker.enabled=true", "judgeWorker.topic=llm-events"], "also in kafka.topics"),
        (["judgeWorker.keda.enabled=true"], "needs judgeWorker.enabled"),
        # Read back what it writes: one bad record became thousands of dead letters.
        (["kafka.dlqTopic=llm-events"], 'kafka.dlqTopic "llm-events" is also in kafka.topics'),
        (["kafka.verdictTopic=llm-events"], "kafka.verdictTopic .* is also in kafka.topics"),
    ],
)
def test_scale_out_misconfigurations_fail_the_render(
    render: Render, values: list[str], message: str
) -> None:
    with pytest.raises(RenderError, match=message):
        render(set_values=values)


@pytest.mark.parametrize(
    ("values", "field"),
    [
        (["replicaCount=two"], "replicaCount"),
        (["judgeWorker.replicas=0"], "judgeWorker.replicas"),
        (["kafka.securityProtocol=SASL"], "kafka.securityProtocol"),
        (["replicas=3"], "replicas"),  # a typo of replicaCount
        (["keda.lagTreshold=10"], "lagTreshold"),
        (["port=70000"], "port"),
    ],
)
def test_values_schema_rejects_bad_values(render: Render, values: list[str], field: str) -> None:
    with pytest.raises(RenderError, match="schema") as err:
        render(set_values=values)
    assert field in str(err.value)


def test_helm_lint_strict_in_scale_out_mode(helm: str, tmp_path: Path) -> None:
    proc = subprocess.run(
        [
            helm, "lint", "--strict", str(CHART), "--kube-version", KUBE_VERSION,
            "--values", str(VALUES_ALL), "--values", str(overlay(tmp_path, SCALE_OUT)),
        ],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_notes_name_the_worker_deployment(render: Render, tmp_path: Path) -> None:
    import shutil

    chart = tmp_path / "llm-sidecar"
    shutil.copytree(CHART, chart)
    shutil.copy(chart / "templates" / "NOTES.txt", chart / "notes-under-test.txt")
    (chart / "templates" / "zz-notes-under-test.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: notes-under-test\ndata:\n"
        '  notes: {{ tpl (.Files.Get "notes-under-test.txt") . | toJson }}\n',
        encoding="utf-8",
    )
    docs = render(chart=chart, set_values=["judgeWorker.enabled=true"])
    notes = next(d for d in docs if d["metadata"]["name"] == "notes-under-test")["data"]["notes"]
    assert "Judge scale-out mode" in notes
    assert "demo-llm-sidecar-judge-worker (2 replicas)" in notes
