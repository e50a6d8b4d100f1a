"""The prompt sets the project wrote (``bench/data/written_prompts/``, one file per set; DATA.md
describes each): what ``bench/prompt_sets_eval.py`` and the tests of ``attack_attempt`` read."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

WRITTEN = Path(__file__).resolve().parent.parent / "bench" / "data" / "written_prompts"


def written_set(name: str) -> dict[str, Any]:
    """One set: its ``name``, its ``role`` (``tuned``, ``trained`` or ``held_out``) and its ``rows``
    (``prompt``, ``attack``, ``kind``)."""
    doc: dict[str, Any] = json.loads((WRITTEN / f"{name}.json").read_text(encoding="utf-8"))
    return doc


def written_sets() -> list[dict[str, Any]]:
    """Every set, by name."""
    return [written_set(path.stem) for path in sorted(WRITTEN.glob("*.json"))]


def written_rows(name: str) -> list[dict[str, Any]]:
    """The rows of one set."""
    rows: list[dict[str, Any]] = written_set(name)["rows"]
    return rows
