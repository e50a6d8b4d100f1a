"""The reference pages list what exists: docs/configuration.md every field of the settings
model (nested ones included, with the defaults the model has) and docs/rules.md every check,
and neither names anything that does not exist."""

from __future__ import annotations

import re
import sys
import typing
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel
from pydantic_core import PydanticUndefined

from sidecar.settings import Settings

REPO = Path(__file__).resolve().parent.parent
DOC = REPO / "docs" / "configuration.md"
ROW = re.compile(r"^\| ((?:`[a-z0-9_.\[\]]+`(?:, )?)+) \|([^|]*)\|")


def _model_in(annotation: Any) -> tuple[type[BaseModel] | None, bool]:
    """The settings model an annotation holds, and whether it is a list of them."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation, False
    for arg in typing.get_args(annotation):
        model, _ = _model_in(arg)
        if model is not None:
            return model, typing.get_origin(annotation) is list
    return None, False


def fields(model: type[BaseModel] = Settings, prefix: str = "") -> dict[str, Any]:
    """``dotted.key -> default`` of every leaf field (``a.b[].c`` for a list of models; the
    list itself is a key too)."""
    out: dict[str, Any] = {}
    for name, info in model.model_fields.items():
        key = prefix + name
        nested, is_list = _model_in(info.annotation)
        if nested is not None and is_list:
            out[key] = info.get_default(call_default_factory=True)
            out.update(fields(nested, key + "[]."))
        elif nested is not None:
            out.update(fields(nested, key + "."))
        else:
            out[key] = info.get_default(call_default_factory=True)
    return out


def documented() -> dict[str, str]:
    """``key -> default cell`` of every row of the doc's tables (a row may list several keys,
    with one default each or one for all)."""
    out: dict[str, str] = {}
    for line in DOC.read_text(encoding="utf-8").splitlines():
        m = ROW.match(line)
        if not m:
            continue
        keys = re.findall(r"`([a-z0-9_.\[\]]+)`", m.group(1))
        values = [v.strip().strip("`") for v in m.group(2).split(",")]
        if len(values) == len(keys):
            out.update(zip(keys, values, strict=True))
        else:
            out.update(dict.fromkeys(keys, m.group(2).strip()))
    return out


def shown(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def test_every_setting_is_documented_and_every_documented_one_exists() -> None:
    model, doc = set(fields()), set(documented())
    assert not model - doc, f"settings missing from docs/configuration.md: {sorted(model - doc)}"
    assert not doc - model, f"docs/configuration.md names no such setting: {sorted(doc - model)}"


def test_the_documented_scalar_defaults_are_the_models() -> None:
    doc = documented()
    wrong = {}
    for key, default in fields().items():
        if isinstance(default, (bool, int, float, str)):
            if doc[key] != shown(default) and not (default == "" and doc[key] == '""'):
                wrong[key] = (doc[key], shown(default))
        elif default is None and doc[key] not in ("null", "none", ""):
            wrong[key] = (doc[key], "null")
        elif default is PydanticUndefined and doc[key] != "required":
            wrong[key] = (doc[key], "required")
    assert not wrong, wrong


def test_the_check_finds_a_missing_and_an_extra_key(tmp_path: Path, monkeypatch: Any) -> None:
    """The comparison above is not vacuous: a doc without a row, or with an invented one,
    fails it."""
    text = DOC.read_text(encoding="utf-8")
    row = next(line for line in text.splitlines() if line.startswith("| `join.enabled`"))
    for changed in (
        text.replace(row + "\n", ""),
        text + "\n| `join.no_such_key` | `1` | invented |\n",
    ):
        fake = tmp_path / "configuration.md"
        fake.write_text(changed, encoding="utf-8")
        monkeypatch.setattr(sys.modules[__name__], "DOC", fake)
        with pytest.raises(AssertionError):
            test_every_setting_is_documented_and_every_documented_one_exists()


def test_every_check_is_in_the_catalogue() -> None:
    """docs/rules.md has a table row for every registered check, and no row for a check
    that does not exist."""
    import sidecar.checks

    text = (REPO / "docs" / "rules.md").read_text(encoding="utf-8")
    catalogue = text.split("## Checks", 1)[1]
    rows = set()
    for line in catalogue.splitlines():
        if line.startswith("| `"):
            rows.update(re.findall(r"`([a-z_]+)`", line.split(" | ", 1)[0]))
    shipped = {
        name
        for name, cls in sidecar.checks.registered().items()
        if cls.__module__.startswith("sidecar.checks.")  # not the checks tests define
    }
    assert rows == shipped
