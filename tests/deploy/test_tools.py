"""The test helpers' tool rule and the tool installer."""

from __future__ import annotations

import subprocess

import pytest

from .conftest import REPO, require_tool

MISSING = "llm-sidecar-no-such-tool"


def test_missing_tool_skips_outside_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception):
        require_tool(MISSING)


def test_missing_tool_fails_in_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match=MISSING):
        require_tool(MISSING)


def test_present_tool_is_found(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    assert require_tool("sh").endswith("/sh")


def test_install_script_parses() -> None:
    script = REPO / ".ci" / "install-tools.sh"
    proc = subprocess.run(
        ["bash", "-n", str(script)], capture_output=True, text=True, timeout=30, check=False
    )
    assert proc.returncode == 0, proc.stderr
