"""The Helm chart: lint, render, validate offline, and the behaviours the chart promises."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml

from sidecar.errors import ConfigError
from sidecar.rules import load_rules
from sidecar.settings import Settings, load_settings

from .conftest import (
    CHART,
    KUBE_VERSION,
    NAMESPACE,
    REPO,
    VALUES_ALL,
    Render,
    RenderError,
    by_kind,
    container,
    env_of,
    helm_template,
    one,
    require_tool,
)

# Kinds defined by CRDs (prometheus-operator, KEDA): kubernetes-validate has no schema for them,
# so their structure is checked by assertions below instead.
CRD_KINDS = {"ServiceMonitor", "PrometheusRule", "ScaledObject"}
# The chart's own TriggerAuthentication (SASL without keda.authenticationRef): also a KEDA CRD,
# checked by assertions in test_judge_worker.py.
CRD_ONLY = CRD_KINDS | {"TriggerAuthentication"}
SIDECAR_VALUES = ["mode=sidecar", "sidecar.podSelector.app=chat-api"]


def validate_offline(docs: list[dict[str, Any]]) -> set[str]:
    """Validate every built-in kind strictly with kubernetes-validate; return the CRD kinds
    that were left out."""
    tool = require_tool("kubernetes-validate")
    builtin = [d for d in docs if d["kind"] not in CRD_ONLY]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "manifests.yaml"
        path.write_text(yaml.safe_dump_all(builtin), encoding="utf-8")
        proc = subprocess.run(
            [tool, "--strict", "--kubernetes-version", KUBE_VERSION, "--quiet", str(path)],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    output = proc.stdout + proc.stderr
    # A kind without a schema is only a warning for the tool; here it is an error.
    assert proc.returncode == 0 and "WARN" not in output and "ERROR" not in output, output
    return {d["kind"] for d in docs} & CRD_KINDS


@pytest.fixture(scope="module")
def everything(render: Render, chart_with_dashboard: Path) -> list[dict[str, Any]]:
    return render(VALUES_ALL, chart=chart_with_dashboard)


# -- lint and offline validation -----------------------------------------------------------


@pytest.mark.parametrize(
    ("values", "extra"),
    [
        pytest.param([], [], id="defaults"),
        pytest.param([VALUES_ALL], [], id="everything"),
        pytest.param([], SIDECAR_VALUES, id="sidecar"),
    ],
)
def test_helm_lint_strict(helm: str, values: list[Path], extra: list[str]) -> None:
    cmd = [helm, "lint", "--strict", str(CHART), "--kube-version", KUBE_VERSION]
    for v in values:
        cmd += ["--values", str(v)]
    for s in extra:
        cmd += ["--set", s]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_offline_validation_catches_a_bad_manifest() -> None:
    bad = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "x"},
        "spec": {"ports": [{"port": "metrics"}], "publishNotReady": True},
    }
    with pytest.raises(AssertionError, match="did not validate"):
        validate_offline([bad])


def test_defaults_render_valid_manifests(render: Render) -> None:
    docs = render()
    assert sorted(d["kind"] for d in docs) == ["Deployment", "Service", "ServiceAccount"]
    assert validate_offline(docs) == set()


def test_everything_renders_valid_manifests(everything: list[dict[str, Any]]) -> None:
    kinds = {d["kind"] for d in everything}
    assert kinds == {
        "ServiceAccount",
        "ConfigMap",
        "Service",
        "Deployment",
        "PodDisruptionBudget",
        *CRD_KINDS,
    }
    assert validate_offline(everything) == CRD_KINDS
    # KEDA owns the replica count; a fixed one would fight it.
    assert "replicas" not in one(everything, "Deployment")["spec"]


# -- CRDs: structure -----------------------------------------------------------------------


def test_service_monitor_scrapes_the_metrics_port(everything: list[dict[str, Any]]) -> None:
    monitor = one(everything, "ServiceMonitor")
    service = one(everything, "Service")
    assert monitor["apiVersion"] == "monitoring.coreos.com/v1"
    assert monitor["metadata"]["labels"]["release"] == "kube-prometheus-stack"
    selector = monitor["spec"]["selector"]["matchLabels"]
    assert selector.items() <= service["metadata"]["labels"].items()
    assert monitor["spec"]["namespaceSelector"] == {"matchNames": [NAMESPACE]}
    (endpoint,) = monitor["spec"]["endpoints"]
    assert endpoint["port"] == "metrics"
    assert endpoint["path"] == "/metrics"
    assert [p["name"] for p in service["spec"]["ports"]] == ["metrics"]
    assert service["spec"]["ports"][0]["port"] == 9464


def test_prometheus_rule_carries_the_alert_file(everything: list[dict[str, Any]]) -> None:
    rule = one(everything, "PrometheusRule")
    assert rule["apiVersion"] == "monitoring.coreos.com/v1"
    on_disk = yaml.safe_load((CHART / "files" / "alerts.yaml").read_text(encoding="utf-8"))
    assert rule["spec"] == on_disk
    alerts = {r["alert"]: r for g in rule["spec"]["groups"] for r in g["rules"] if "alert" in r}
    assert "LlmSidecarNoEvents" in alerts
    assert "llm_sidecar_records_total" in alerts["LlmSidecarNoEvents"]["expr"]


def test_prometheus_rule_passes_promtool(everything: list[dict[str, Any]], tmp_path: Path) -> None:
    promtool = require_tool("promtool")
    spec = one(everything, "PrometheusRule")["spec"]
    path = tmp_path / "rules.yaml"
    path.write_text(yaml.safe_dump(spec), encoding="utf-8")
    proc = subprocess.run(
        [promtool, "check", "rules", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "SUCCESS" in proc.stdout + proc.stderr


def test_scaled_object_scales_the_deployment_on_group_lag(
    everything: list[dict[str, Any]],
) -> None:
    scaled = one(everything, "ScaledObject")
    values = yaml.safe_load(VALUES_ALL.read_text(encoding="utf-8"))
    assert scaled["apiVersion"] == "keda.sh/v1alpha1"
    target = scaled["spec"]["scaleTargetRef"]
    assert (target["kind"], target["name"]) == (
        "Deployment",
        one(everything, "Deployment")["metadata"]["name"],
    )
    assert scaled["spec"]["minReplicaCount"] == 2
    assert scaled["spec"]["maxReplicaCount"] == 12
    triggers = scaled["spec"]["triggers"]
    assert [t["metadata"]["topic"] for t in triggers] == values["kafka"]["topics"]
    for t in triggers:
        assert t["type"] == "kafka"
        meta = t["metadata"]
        assert meta["consumerGroup"] == values["kafka"]["groupId"]
        assert meta["bootstrapServers"] == values["kafka"]["bootstrapServers"]
        # KEDA reads metadata values as strings.
        assert meta["lagThreshold"] == "500"
        assert all(isinstance(v, str) for v in meta.values())
        assert t["authenticationRef"] == {"name": "llm-sidecar-kafka"}


def test_dashboards_become_labelled_config_maps(everything: list[dict[str, Any]]) -> None:
    dashboards = [
        cm
        for cm in by_kind(everything, "ConfigMap")
        if cm["metadata"]["labels"].get("grafana_dashboard") == "1"
    ]
    names = sorted(n for cm in dashboards for n in cm["data"])
    on_disk = sorted(p.name for p in (CHART / "dashboards").glob("*.json"))
    assert names == sorted([*on_disk, "test_overview.json"])
    for cm in dashboards:
        assert cm["metadata"]["annotations"] == {"grafana_folder": "LLM"}
        assert len(cm["metadata"]["name"]) <= 63
        for text in cm["data"].values():
            json.loads(text)


# -- behaviours ----------------------------------------------------------------------------


@pytest.mark.parametrize(("grace", "drain"), [(20, 20), (25, 30), (10, 20.5)])
def test_grace_period_must_exceed_drain_deadline(
    render: Render, grace: float, drain: float
) -> None:
    with pytest.raises(RenderError, match="must be longer than drainTimeoutSeconds"):
        render(
            set_values=[
                f"terminationGracePeriodSeconds={grace}",
                f"drainTimeoutSeconds={drain}",
            ]
        )


def test_drain_deadline_reaches_the_app_below_the_grace_period(
    everything: list[dict[str, Any]],
) -> None:
    pod = one(everything, "Deployment")["spec"]["template"]["spec"]
    env = env_of(container(everything))
    drain = float(env["LLM_SIDECAR_LIMITS__DRAIN_TIMEOUT_S"]["value"])
    assert drain == 25
    assert pod["terminationGracePeriodSeconds"] == 40 > drain


def test_secrets_come_from_secret_key_refs(everything: list[dict[str, Any]]) -> None:
    env = env_of(container(everything))
    assert env["LLM_SIDECAR_JUDGE__API_KEY"] == {
        "name": "LLM_SIDECAR_JUDGE__API_KEY",
        "valueFrom": {"secretKeyRef": {"name": "llm-judge", "key": "api-key"}},
    }
    assert env["LLM_SIDECAR_KAFKA__SASL_PLAIN_PASSWORD"] == {
        "name": "LLM_SIDECAR_KAFKA__SASL_PLAIN_PASSWORD",
        "valueFrom": {"secretKeyRef": {"name": "kafka-credentials", "key": "sasl-password"}},
    }
    assert env["LLM_SIDECAR_API__TOKEN"] == {
        "name": "LLM_SIDECAR_API__TOKEN",
        "valueFrom": {"secretKeyRef": {"name": "gateway-token", "key": "token"}},
    }
    # The chart never creates or inlines a secret.
    assert not by_kind(everything, "Secret")
    for name, e in env.items():
        if any(word in name for word in ("PASSWORD", "API_KEY", "SECRET", "TOKEN")):
            assert "value" not in e, name


def test_no_secret_env_without_an_existing_secret(render: Render) -> None:
    env = env_of(container(render()))
    assert "LLM_SIDECAR_JUDGE__API_KEY" not in env
    assert "LLM_SIDECAR_KAFKA__SASL_PLAIN_PASSWORD" not in env


def test_sasl_without_credentials_fails_the_render(render: Render) -> None:
    with pytest.raises(RenderError, match=r"saslPassword\.existingSecret"):
        render(set_values=["kafka.securityProtocol=SASL_SSL", "kafka.saslUsername=u"])


@pytest.mark.parametrize("values", [[], [VALUES_ALL]], ids=["defaults", "everything"])
def test_probes_point_at_healthz_and_readyz(render: Render, values: list[Path]) -> None:
    c = container(render(*values))
    ports = {p["name"]: p["containerPort"] for p in c["ports"]}
    assert ports == {"metrics": 9464}
    assert c["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "metrics"}
    assert c["startupProbe"]["httpGet"] == {"path": "/healthz", "port": "metrics"}
    assert c["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "metrics"}
    assert env_of(c)["LLM_SIDECAR_HTTP__PORT"]["value"] == "9464"


def test_runs_as_non_root_with_a_read_only_root(render: Render) -> None:
    docs = render()
    pod = one(docs, "Deployment")["spec"]["template"]["spec"]
    c = container(docs)
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["runAsUser"] == 10001
    sc = c["securityContext"]
    assert sc["runAsNonRoot"] is True
    assert sc["readOnlyRootFilesystem"] is True
    assert sc["allowPrivilegeEscalation"] is False
    assert sc["capabilities"]["drop"] == ["ALL"]
    assert pod["automountServiceAccountToken"] is False
    # A writable /tmp, since the root filesystem is read-only.
    mounts = {m["mountPath"]: m["name"] for m in c["volumeMounts"]}
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert "emptyDir" in volumes[mounts["/tmp"]]
    dockerfile = (REPO / "Dockerfile").read_text(encoding="utf-8")
    assert "USER 10001:10001" in dockerfile


def test_resources_have_requests_and_limits(render: Render) -> None:
    resources = container(render())["resources"]
    assert set(resources["requests"]) == {"cpu", "memory"}
    assert set(resources["limits"]) == {"cpu", "memory"}


def test_rules_config_map_is_a_hot_reloadable_directory(
    everything: list[dict[str, Any]], tmp_path: Path
) -> None:
    deployment = one(everything, "Deployment")
    pod = deployment["spec"]["template"]["spec"]
    c = container(everything)
    (mount,) = [m for m in c["volumeMounts"] if m["mountPath"] == "/etc/llm-sidecar/rules"]
    # A subPath mount is never updated by kubelet, so hot reload would never see a change.
    assert "subPath" not in mount
    volume = {v["name"]: v for v in pod["volumes"]}[mount["name"]]
    (rules_cm,) = [
        cm
        for cm in by_kind(everything, "ConfigMap")
        if cm["metadata"]["name"] == volume["configMap"]["name"]
    ]
    assert json.loads(env_of(c)["LLM_SIDECAR_RULES"]["value"]) == ["/etc/llm-sidecar/rules"]
    # Rule changes reload in place: no checksum annotation may restart the pods for them.
    annotations = deployment["spec"]["template"]["metadata"].get("annotations", {})
    assert not [a for a in annotations if "rules" in a]
    # What the ConfigMap carries is a rule set llm-sidecar accepts.
    for name, text in rules_cm["data"].items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    ruleset = load_rules([tmp_path])
    assert {r.id for r in ruleset.rules} == {"no-email-in-response", "answer-not-empty"}


def test_settings_change_rolls_the_pods(render: Render) -> None:
    def checksum(value: str) -> str:
        docs = render(VALUES_ALL, set_values=[f"config.kafka.max_batch={value}"])
        meta = one(docs, "Deployment")["spec"]["template"]["metadata"]
        return str(meta["annotations"]["checksum/config"])

    assert checksum("100") != checksum("300")


def settings_from_render(
    docs: list[dict[str, Any]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    extra_env: dict[str, str] | None = None,
) -> Settings:
    """Settings as the rendered container would load them (secrets read "from-a-secret")."""
    c = container(docs)
    assert c["args"] == ["run", "--config", "/etc/llm-sidecar/config/settings.yaml"]
    (config_cm,) = [cm for cm in by_kind(docs, "ConfigMap") if "settings.yaml" in cm["data"]]
    config = tmp_path / "settings.yaml"
    config.write_text(config_cm["data"]["settings.yaml"], encoding="utf-8")
    for name in list(os.environ):
        if name.startswith("LLM_SIDECAR_"):
            monkeypatch.delenv(name)
    for name, e in env_of(c).items():
        if "value" in e:
            monkeypatch.setenv(name, e["value"])
        elif "secretKeyRef" in e["valueFrom"]:
            monkeypatch.setenv(name, "from-a-secret")
        elif "fieldRef" in e["valueFrom"]:
            monkeypatch.setenv(name, "demo-llm-sidecar-abc12")
    for name, value in (extra_env or {}).items():
        monkeypatch.setenv(name, value)
    return load_settings(config)


def test_rendered_env_and_config_make_valid_settings(
    everything: list[dict[str, Any]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The variables and the --config file the chart renders are accepted by Settings."""
    settings = settings_from_render(everything, tmp_path, monkeypatch)
    assert settings.source == "kafka"
    assert settings.kafka.topics == ["chat-events", "rag-events"]
    assert settings.kafka.group_id == "llm-sidecar-prod"
    assert settings.kafka.client_id == "demo-llm-sidecar-abc12"
    assert settings.kafka.group_instance_id == "demo-llm-sidecar-abc12"  # static membership
    assert settings.kafka.security_protocol == "SASL_SSL"
    assert settings.kafka.sasl_mechanism == "SCRAM-SHA-512"
    assert settings.kafka.sasl_plain_password is not None
    assert settings.kafka.sasl_plain_password.get_secret_value() == "from-a-secret"
    assert settings.kafka.verdict_topic == "llm-sidecar-verdicts"
    assert settings.kafka.max_batch == 200  # from the --config file
    assert settings.limits.drain_timeout_s == 25
    assert settings.limits.max_event_bytes == 262144
    assert settings.http.port == 9464
    assert [str(p) for p in settings.rules] == ["/etc/llm-sidecar/rules"]
    assert settings.labels.routes == ["/v1/chat", "/v1/rag"]
    assert settings.log_format == "json"


def test_service_links_neither_reach_the_pods_nor_stop_the_process(
    render: Render,
    everything: list[dict[str, Any]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A release named llm-sidecar makes a Service of that name, and Kubernetes gives every
    pod of the namespace LLM_SIDECAR_SERVICE_HOST, LLM_SIDECAR_PORT_9464_TCP and the like:
    settings refused them as unknown, so every pod would have exited 2 at start."""
    workloads = by_kind(render(set_values=["judgeWorker.enabled=true"]), "Deployment")
    assert len(workloads) == 2  # the check path and the judge workers
    for d in workloads:
        assert d["spec"]["template"]["spec"]["enableServiceLinks"] is False
    # The same variables from another pod spec (sidecar mode, in the user's own pod).
    links = {
        "LLM_SIDECAR_SERVICE_HOST": "10.96.12.34",
        "LLM_SIDECAR_SERVICE_PORT": "9464",
        "LLM_SIDECAR_SERVICE_PORT_METRICS": "9464",
        "LLM_SIDECAR_PORT": "tcp://10.96.12.34:9464",
        "LLM_SIDECAR_PORT_9464_TCP": "tcp://10.96.12.34:9464",
        "LLM_SIDECAR_PORT_9464_TCP_PROTO": "tcp",
        "LLM_SIDECAR_PORT_9464_TCP_PORT": "9464",
        "LLM_SIDECAR_PORT_9464_TCP_ADDR": "10.96.12.34",
        "LLM_SIDECAR_JUDGE_WORKER_SERVICE_HOST": "10.96.0.9",
        "LLM_SIDECAR_JUDGE_WORKER_PORT_9464_TCP": "tcp://10.96.0.9:9464",
    }
    settings = settings_from_render(everything, tmp_path, monkeypatch, links)
    assert settings.http.port == 9464
    # Without the Service's _SERVICE_HOST it is a typo like any other.
    del links["LLM_SIDECAR_SERVICE_HOST"]
    with pytest.raises(ConfigError, match="unknown setting in the environment: LLM_SIDECAR_PORT,"):
        settings_from_render(everything, tmp_path, monkeypatch, links)


def test_static_membership_uses_the_pod_name_and_can_be_turned_off(render: Render) -> None:
    env = env_of(container(render()))
    ref = env["LLM_SIDECAR_KAFKA__GROUP_INSTANCE_ID"]["valueFrom"]["fieldRef"]
    assert ref["fieldPath"] == "metadata.name"  # unique per pod, stable across its restarts
    off = env_of(container(render(set_values=["kafka.staticMembership=false"])))
    assert "LLM_SIDECAR_KAFKA__GROUP_INSTANCE_ID" not in off
    assert "LLM_SIDECAR_KAFKA__CLIENT_ID" in off


def test_judge_key_reaches_settings(
    everything: list[dict[str, Any]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = settings_from_render(everything, tmp_path, monkeypatch)
    if "judge" not in type(settings).model_fields:
        pytest.xfail("Settings has no judge section yet: LLM_SIDECAR_JUDGE__API_KEY is ignored")
    judge = settings.judge  # type: ignore[attr-defined]
    assert judge.api_key.get_secret_value() == "from-a-secret"


def test_mqtt_source_renders_its_own_settings(render: Render) -> None:
    env = env_of(
        container(
            render(
                set_values=[
                    "source=mqtt",
                    "mqtt.password.existingSecret=mqtt-auth",
                    "mqtt.username=sidecar",
                ]
            )
        )
    )
    assert env["LLM_SIDECAR_SOURCE"]["value"] == "mqtt"
    assert json.loads(env["LLM_SIDECAR_MQTT__TOPICS"]["value"]) == ["llm/events/#"]
    assert env["LLM_SIDECAR_MQTT__PASSWORD"]["valueFrom"]["secretKeyRef"]["name"] == "mqtt-auth"
    # Each pod its own MQTT session unless a fixed client id is asked for.
    assert (
        env["LLM_SIDECAR_MQTT__CLIENT_ID"]["valueFrom"]["fieldRef"]["fieldPath"] == "metadata.name"
    )
    one = ["source=mqtt", "mqtt.clientId=sidecar-1", "replicaCount=1"]  # a fixed id: one pod
    fixed = env_of(container(render(set_values=one)))
    assert fixed["LLM_SIDECAR_MQTT__CLIENT_ID"]["value"] == "sidecar-1"
    assert not [n for n in env if n.startswith("LLM_SIDECAR_KAFKA__")]


# -- sidecar mode --------------------------------------------------------------------------


def test_sidecar_mode_renders_no_workload(render: Render) -> None:
    docs = render(set_values=SIDECAR_VALUES)
    assert not by_kind(docs, "Deployment")
    assert not by_kind(docs, "ServiceAccount")
    service = one(docs, "Service")
    assert service["spec"]["selector"] == {"app": "chat-api"}
    assert validate_offline(docs) == set()


def test_sidecar_mode_needs_a_pod_selector(render: Render) -> None:
    with pytest.raises(RenderError, match=r"sidecar\.podSelector"):
        render(set_values=["mode=sidecar"])


@pytest.mark.parametrize(
    ("values", "key"),
    [
        (["config.kafka.bootstrap_servers=prod:9092"], "config.kafka.bootstrap_servers"),
        (["config.log_level=DEBUG"], "config.log_level"),
        (["config.http.port=9000"], "config.http.port"),
        (["source=mqtt", "config.mqtt.topics={a/#}"], "config.mqtt.topics"),
    ],
)
def test_config_keys_the_chart_sets_itself_are_refused(
    render: Render, values: list[str], key: str
) -> None:
    """The chart's environment variables win over config:, so these used to be ignored
    while the ConfigMap showed them (a Kafka address in config: was never used)."""
    with pytest.raises(RenderError, match=rf"{re.escape(key)} is set by the chart itself"):
        render(set_values=values)
    # Keys the chart does not set stay config:'s to give, and another source's are inert.
    render(set_values=["config.kafka.max_batch=100", "config.judge.sample_rate=0.5"])
    render(set_values=["source=mqtt", "config.kafka.bootstrap_servers=prod:9092"])


@pytest.mark.parametrize(
    ("values", "key"),
    [
        # values.yaml's own advice for turning the DLQ off did nothing: dlqTopic still set it.
        (['config={"kafka":{"dlq_topic":null}}'], "kafka.dlq_topic"),
        (['config={"kafka":{"group_instance_id":"x"}}'], "kafka.group_instance_id"),
        (['labels={"routes":["/a"]}', 'config={"labels":{"routes":["/b"]}}'], "labels.routes"),
        (
            ['judgeWorker={"enabled":true}', 'config={"judge":{"enabled":false}}'],
            "judge.enabled",
        ),
        (
            ['checkApi={"token":{"existingSecret":"t"}}', 'config={"api":{"token":"x"}}'],
            "api.token",
        ),
        (
            [
                'extraEnv=[{"name":"LLM_SIDECAR_KAFKA__MAX_BATCH","value":"9"}]',
                'config={"kafka":{"max_batch":100}}',
            ],
            "kafka.max_batch",
        ),
    ],
)
def test_config_keys_any_pod_variable_sets_are_refused(
    helm: str, values: list[str], key: str
) -> None:
    """Set only by some values (or by extraEnv), so the fixed list above missed them."""
    with pytest.raises(RenderError, match=rf"config\.{re.escape(key)} is also set by the pods'"):
        helm_template(helm, set_json=values)
    # The documented way to turn the DLQ off renders.
    helm_template(
        helm, set_values=["kafka.dlqTopic="], set_json=['config={"kafka":{"dlq_topic":null}}']
    )


@pytest.mark.parametrize(
    ("values", "message"),
    [
        (
            ["rules.existingConfigMap=mine", "rules.files.a\\.yaml=rules: []"],
            "rules.files and rules.existingConfigMap are both set",
        ),
        (
            ["source=mqtt", "mqtt.clientId=fixed", "replicaCount=3"],
            'mqtt.clientId "fixed" with replicaCount 3: replicas with one client id take',
        ),
        (
            ["keda.minReplicaCount=5", "keda.maxReplicaCount=2"],
            r"keda\.minReplicaCount \(5\) is above keda\.maxReplicaCount \(2\)",
        ),
        (["judgeWorker.keda.minReplicaCount=9"], r"judgeWorker\.keda\.minReplicaCount \(9\)"),
    ],
)
def test_values_that_would_be_ignored_or_fight_each_other_fail_the_render(
    render: Render, values: list[str], message: str
) -> None:
    """These rendered without a word: rule files silently ignored, replicas taking one MQTT
    session from each other, a KEDA range that cannot hold."""
    with pytest.raises(RenderError, match=message):
        render(set_values=values)
    render(set_values=["source=mqtt", "mqtt.clientId=fixed", "replicaCount=1"])  # one: fine


@pytest.mark.parametrize(
    "value",
    [
        "resources.limits.cpu=-1",
        "resources.requests.memory=1Gb",
        "judgeWorker.resources.limits.memory=lots",
    ],
)
def test_resource_quantities_are_checked_at_render(render: Render, value: str) -> None:
    """A negative or misspelt quantity rendered, and only the API server refused it, at
    install time."""
    key = value.partition("=")[0]
    with pytest.raises(RenderError, match=re.escape(key)):
        render(set_values=[value])
    quantities = ["cpu=250m", "cpu=0.5", "memory=512Mi", "memory=1e9", "ephemeral-storage=2G"]
    render(set_values=[f"resources.requests.{q}" for q in quantities])


def test_keda_needs_standalone_kafka(render: Render) -> None:
    with pytest.raises(RenderError, match=r"keda\.enabled"):
        render(set_values=[*SIDECAR_VALUES, "keda.enabled=true"])


def test_sidecar_snippet_in_notes_makes_a_valid_pod(render: Render, tmp_path: Path) -> None:
    """NOTES.txt's snippet, pasted next to an LLM container, gives a valid pod spec.

    helm template does not render NOTES.txt, so a copy of the chart renders it into a
    ConfigMap with ``tpl``.
    """
    chart = tmp_path / "llm-sidecar"
    shutil.copytree(CHART, chart)
    shutil.copy(chart / "templates" / "NOTES.txt", chart / "notes-under-test.txt")
    (chart / "templates" / "zz-notes-under-test.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: notes-under-test\ndata:\n"
        '  notes: {{ tpl (.Files.Get "notes-under-test.txt") . | toJson }}\n',
        encoding="utf-8",
    )
    docs = render(
        chart=chart,
        set_values=[
            *SIDECAR_VALUES,
            "judge.apiKey.existingSecret=llm-judge",
            "rules.files.guardrails\\.yaml=version: 1",
        ],
    )
    notes = next(d for d in docs if d["metadata"]["name"] == "notes-under-test")["data"]["notes"]
    begin = "# --- llm-sidecar sidecar snippet: begin ---"
    end = "# --- llm-sidecar sidecar snippet: end ---"
    snippet = yaml.safe_load(notes.split(begin, 1)[1].split(end, 1)[0])
    (sidecar,) = snippet["containers"]
    assert sidecar["name"] == "llm-sidecar"
    assert snippet["terminationGracePeriodSeconds"] == 30
    assert (
        sidecar["env"][[e["name"] for e in sidecar["env"]].index("LLM_SIDECAR_JUDGE__API_KEY")][
            "valueFrom"
        ]["secretKeyRef"]["name"]
        == "llm-judge"
    )
    mounted = {m["name"] for m in sidecar["volumeMounts"]}
    assert mounted <= {v["name"] for v in snippet["volumes"]}
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "chat-api", "labels": {"app": "chat-api"}},
        "spec": {
            "terminationGracePeriodSeconds": snippet["terminationGracePeriodSeconds"],
            "containers": [{"name": "chat-api", "image": "chat-api:1.0"}, sidecar],
            "volumes": snippet["volumes"],
        },
    }
    validate_offline([pod])


def test_what_real_producers_write_is_configurable_in_the_chart(
    render: Render, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = env_of(container(render()))
    assert env["LLM_SIDECAR_KAFKA__ISOLATION_LEVEL"]["value"] == "read_committed"
    assert env["LLM_SIDECAR_KAFKA__ON_UNDECODABLE"]["value"] == "pause"
    assert "LLM_SIDECAR_KAFKA__COMPRESSION_TYPE" not in env  # uncompressed by default
    env = env_of(
        container(
            render(
                set_values=[
                    "kafka.compressionType=zstd",
                    "kafka.isolationLevel=read_uncommitted",
                    "kafka.onUndecodable=skip",
                ]
            )
        )
    )
    for name in ("COMPRESSION_TYPE", "ISOLATION_LEVEL", "ON_UNDECODABLE"):
        monkeypatch.setenv(f"LLM_SIDECAR_KAFKA__{name}", env[f"LLM_SIDECAR_KAFKA__{name}"]["value"])
    kafka = Settings().kafka
    assert (kafka.compression_type, kafka.isolation_level, kafka.on_undecodable) == (
        "zstd",
        "read_uncommitted",
        "skip",
    )
    with pytest.raises(RenderError, match="compressionType"):
        render(set_values=["kafka.compressionType=brotli"])
