"""The Dockerfile: hadolint, the runtime contract the chart relies on, and the wheel it ships.

No image can be built here (no Docker engine), so the Dockerfile is linted and read, and the
wheel its build stage makes is built the same way and inspected.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from .conftest import REPO, require_tool

DOCKERFILE = REPO / "Dockerfile"


def instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs, continuation lines joined, comments dropped."""
    out: list[tuple[str, str]] = []
    pending = ""
    for raw in DOCKERFILE.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        line, pending = pending + line, ""
        word, _, rest = line.partition(" ")
        out.append((word.upper(), rest.strip()))
    return out


def final_stage() -> list[tuple[str, str]]:
    ins = instructions()
    last_from = max(i for i, (word, _) in enumerate(ins) if word == "FROM")
    return ins[last_from:]


def test_hadolint_is_clean() -> None:
    hadolint = require_tool("hadolint")
    proc = subprocess.run(
        [hadolint, "--no-color", str(DOCKERFILE)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_ignored_hadolint_rules_are_justified() -> None:
    lines = DOCKERFILE.read_text(encoding="utf-8").splitlines()
    for i, line in enumerate(lines):
        if "hadolint ignore" in line:
            assert i > 0, "an ignore needs a comment above it saying why"
            assert lines[i - 1].lstrip().startswith("#"), line
            assert "hadolint" not in lines[i - 1], line


def test_multi_stage_from_a_pinned_slim_python() -> None:
    ins = instructions()
    args = dict(a.split("=", 1) for w, a in ins if w == "ARG" and "=" in a)
    images = [a.split()[0] for w, a in ins if w == "FROM"]
    assert len(images) == 2
    resolved = [re.sub(r"\$\{(\w+)\}", lambda m: args[m.group(1)], i) for i in images]
    for image in resolved:
        assert re.fullmatch(r"python:3\.11\.\d+-slim(-\w+)?", image), image
    last_from = max(i for i, (w, _) in enumerate(ins) if w == "FROM")
    build_stage = " ".join(a for w, a in ins[:last_from] if w == "RUN")
    assert "pip wheel" in build_stage
    assert "gcc" in build_stage  # the compiled scorer is built, not left out


def test_final_stage_installs_wheels_without_build_tools() -> None:
    runs = " ".join(a for w, a in final_stage() if w == "RUN")
    assert "pip install --no-index" in runs
    assert "from=build" in runs
    for tool in ("apt-get", "gcc", "build-essential", "setuptools", "pip wheel"):
        assert tool not in runs, tool


def test_runtime_contract() -> None:
    final = final_stage()
    words = [w for w, _ in final]
    value = {w: a for w, a in final}
    assert value["USER"] == "10001:10001"
    assert words.index("USER") < words.index("ENTRYPOINT")
    assert value["EXPOSE"] == "9464"
    assert json.loads(value["ENTRYPOINT"]) == ["llm-sidecar"]
    assert json.loads(value["CMD"]) == ["run"]
    assert json.loads(value["VOLUME"]) == ["/etc/llm-sidecar/rules"]
    env = dict(pair.split("=", 1) for w, a in final if w == "ENV" for pair in shlex.split(a))
    assert json.loads(env["LLM_SIDECAR_RULES"]) == ["/etc/llm-sidecar/rules"]


def test_build_smoke_checks_the_bundled_rules() -> None:
    """The final stage validates the rule directory, so a wheel without its data fails the build."""
    final = final_stage()
    assert ("RUN", "llm-sidecar validate /etc/llm-sidecar/rules") in final
    copies = [a.split() for w, a in final if w == "COPY" and "--from" not in a]
    assert ["sidecar/data/default.yaml", "/etc/llm-sidecar/rules/default.yaml"] in copies
    proc = subprocess.run(
        [sys.executable, "-m", "sidecar", "validate", str(REPO / "sidecar/data/default.yaml")],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_healthcheck_asks_healthz_with_the_standard_library() -> None:
    value = dict(final_stage())["HEALTHCHECK"]
    assert "CMD" in value
    exec_form = json.loads(value.split("CMD", 1)[1])
    assert exec_form[:2] == ["python", "-c"]
    code = exec_form[2]
    assert "urllib.request" in code
    assert "/healthz" in code
    assert "curl" not in value
    # The snippet is valid Python (it is compiled, not run: nothing listens here).
    compile(code, "<healthcheck>", "exec")


def test_dockerignore_keeps_the_context_small() -> None:
    lines = [
        line.strip()
        for line in (REPO / ".dockerignore").read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert lines[0] == "*"
    copied = {
        src
        for w, a in instructions()
        if w == "COPY" and "--from" not in a
        for src in a.split()[:-1]
        if not src.startswith("--")
    }
    allowed = {line[1:].rstrip("/") for line in lines if line.startswith("!")}
    for src in copied:
        top = src.split("/", 1)[0]
        assert top in allowed, f"COPY {src} is excluded by .dockerignore"


def test_wheel_ships_the_data_the_app_loads(tmp_path: Path) -> None:
    """The image installs a wheel; the rules schema and default pack must be inside it, and
    the refusal model's compiled scorer, built from source (the build stage has gcc)."""
    src = tmp_path / "project"
    src.mkdir()
    for name in ("pyproject.toml", "setup.py", "README.md"):
        (src / name).write_bytes((REPO / name).read_bytes())
    # what .dockerignore lets in: no compiled module of an in-place build
    subprocess.run(
        ["cp", "-r", str(REPO / "sidecar"), str(src / "sidecar")], check=True, timeout=60
    )
    for built in (src / "sidecar").rglob("*.so"):
        built.unlink()
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", "out", "./project"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        check=False,
    )
    if proc.returncode != 0:
        message = f"pip could not build the wheel: {proc.stderr[-800:]}"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    (wheel,) = (tmp_path / "out").glob("llm_sidecar-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "sidecar/data/rules.schema.json" in names
    assert "sidecar/data/default.yaml" in names
    assert "sidecar/checks/_refusal_native.pyi" in names
    if not any(re.fullmatch(r"sidecar/checks/_refusal_native\..*\.so", n) for n in names):
        message = f"the wheel has no compiled refusal scorer (no C compiler?): {sorted(names)}"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    # Built from this C file, with its digest compiled in (what tells a stale build apart).
    (so,) = (n for n in names if re.fullmatch(r"sidecar/checks/_refusal_native\..*\.so", n))
    (tmp_path / "mod").mkdir()
    (tmp_path / "mod" / Path(so).name).write_bytes(zipfile.ZipFile(wheel).read(so))
    probe = subprocess.run(
        [sys.executable, "-c", "import _refusal_native as m; print(m.SOURCE_SHA256)"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path / "mod",
        check=True,
    )
    source = (REPO / "sidecar" / "checks" / "_refusal_native.c").read_bytes()
    assert probe.stdout.strip() == hashlib.sha256(source).hexdigest()
