"""The shipped sample stream is exactly what samples/generate.py makes from samples/corpus.yaml."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHIPPED = REPO / "sidecar" / "data" / "events.jsonl"
README = REPO / "samples" / "README.md"


def _counts_block(text: str) -> str:
    return text.split("<!-- counts:begin -->\n", 1)[1].split("\n<!-- counts:end -->", 1)[0]


def test_generator_reproduces_the_shipped_stream_and_readme_counts(tmp_path: Path) -> None:
    out = tmp_path / "events.jsonl"
    readme = tmp_path / "README.md"
    readme.write_text(
        "# stale\n\n<!-- counts:begin -->\nold\n<!-- counts:end -->\ntail\n", encoding="utf-8"
    )
    done = subprocess.run(
        [
            sys.executable,
            str(REPO / "samples" / "generate.py"),
            "--out",
            str(out),
            "--readme",
            str(readme),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    # Byte for byte, so a change to the corpus or the generator must ship a regenerated stream.
    assert out.read_bytes() == SHIPPED.read_bytes()
    shipped_counts = _counts_block(README.read_text(encoding="utf-8"))
    assert done.stdout.rstrip("\n") == shipped_counts
    assert readme.read_text(encoding="utf-8") == (
        f"# stale\n\n<!-- counts:begin -->\n{shipped_counts}\n<!-- counts:end -->\ntail\n"
    )
