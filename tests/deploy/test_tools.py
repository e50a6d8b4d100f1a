"""The test helpers' tool rule and the tool installer."""

from __future__ import annotations

import subprocess
from pathlib import Path

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


FAKE_PYTHON = """#!/bin/sh
# Records every call; acts as python3 (creating a fake venv) or as that venv's python.
echo "$0 $*" >> "{log}"
if [ "$1" = "-m" ] && [ "$2" = "venv" ]; then
  mkdir -p "$3/bin"
  cp "$0" "$3/bin/python"
  exit 0
fi
if [ "$1" = "-c" ]; then
  echo "$(dirname "$0")"
  exit 0
fi
if [ "$1" = "-m" ] && [ "$2" = "pip" ] && [ "$3" = "install" ]; then
  for t in kubernetes-validate hadolint; do
    printf '#!/bin/sh\\necho %s 1.0\\n' "$t" > "$(dirname "$0")/$t"
    chmod +x "$(dirname "$0")/$t"
  done
fi
exit 0
"""


def _sandbox(tmp_path: Path) -> tuple[Path, dict[str, str], Path]:
    root = tmp_path / "repo"
    (root / ".ci").mkdir(parents=True)
    (root / ".ci" / "install-tools.sh").write_text((REPO / ".ci" / "install-tools.sh").read_text())
    (root / ".tools" / "bin").mkdir(parents=True)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "calls.log"
    stubs = {
        "python3": FAKE_PYTHON.replace("{log}", str(log)),
        "promtool": "#!/bin/sh\nexit 0\n",
        "mosquitto": "#!/bin/sh\nexit 0\n",
    }
    stubs_dir = {"helm": root / ".tools" / "bin"}
    for name, text in {**stubs, "helm": "#!/bin/sh\necho v3.17.3\n"}.items():
        path = stubs_dir.get(name, bin_dir) / name
        path.write_text(text)
        path.chmod(0o755)
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(tmp_path)}
    return root, env, log


def test_install_tools_never_pip_installs_into_the_system_python(tmp_path: Path) -> None:
    root, env, log = _sandbox(tmp_path)
    proc = subprocess.run(
        ["bash", str(root / ".ci" / "install-tools.sh")],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    calls = log.read_text().splitlines()
    system = str(tmp_path / "bin" / "python3")
    venv_python = str(root / ".venv" / "bin" / "python")
    assert all(" -m pip" not in c for c in calls if c.startswith(system + " ")), calls
    assert f"{system} -m venv {root}/.venv" in calls  # the venv comes first
    assert any(c.startswith(f"{venv_python} -m pip install") for c in calls), calls
    assert (root / ".tools" / "bin" / "hadolint").resolve().parent == root / ".venv" / "bin"


def test_ci_creates_the_venv_before_installing_tools() -> None:
    lines = [
        line
        for line in (REPO / ".ci" / "run").read_text().splitlines()
        if line and not line.startswith("#")
    ]
    venv = lines.index("python3 -m venv .venv")
    tools = next(i for i, line in enumerate(lines) if "install-tools.sh" in line)
    assert venv < tools and 'PYTHON="$PWD/.venv/bin/python"' in lines[tools]
    # ...and ends with exactly the README's test command.
    readme = (REPO / "README.md").read_text()
    assert lines[-1] in readme
    assert (
        lines[-1] == "python3 -m venv .venv && .venv/bin/pip install -c constraints.txt -e '.[dev]'"
        " && .venv/bin/pytest -n 4"
    )
