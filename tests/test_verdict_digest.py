"""bench/verdict_digest.py runs from any directory on the checkout it belongs to."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO


def test_verdict_digest_imports_its_own_checkout(tmp_path: Path) -> None:
    """Another ``sidecar`` ahead on the path (another checkout, an installed version) is not
    the one the script digests: it puts its repository first."""
    other = tmp_path / "other" / "sidecar"
    other.mkdir(parents=True)
    (other / "__init__.py").write_text('raise ImportError("another checkout\'s sidecar")\n')
    env = {**os.environ, "PYTHONPATH": str(other.parent)}
    run = subprocess.run(
        [
            sys.executable,
            str(REPO / "bench" / "verdict_digest.py"),
            "--rules",
            str(REPO / "rules" / "extraction.yaml"),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    assert re.fullmatch(r"[0-9a-f]{16}  events\.jsonl  extraction\.yaml\n", run.stdout)
