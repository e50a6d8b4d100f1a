"""is_json, contains_json and json_schema."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from sidecar.checks import CheckContext, get_check
from sidecar.checks.base import Check, CheckResult
from sidecar.checks.json import JsonSchemaParams, strip_code_fence
from sidecar.events import Event

EV = Event(id="e1", response="r")

SCHEMA = {
    "type": "object",
    "required": ["name", "items"],
    "properties": {
        "name": {"type": "string"},
        "items": {
            "type": "array",
            "items": {"type": "object", "properties": {"qty": {"type": "integer"}}},
        },
    },
}


def make(name: str, base_dir: Path | None = None, **params: Any) -> Check[Any]:
    cls = get_check(name)
    assert cls is not None, name
    ctx = CheckContext(base_dir=base_dir) if base_dir else CheckContext()
    return cls(cls.params_model.model_validate(params), ctx)


def run(name: str, text: str, **params: Any) -> CheckResult:
    return make(name, **params)(text, EV)


# --- is_json --------------------------------------------------------------------------------


def test_is_json_objects_and_arrays() -> None:
    assert run("is_json", '{"a": 1}') == CheckResult(True, "object")
    assert run("is_json", '  [1, 2, {"b": [null]}]\n') == CheckResult(True, "array")
    assert run("is_json", '{"a": 1').value is False
    assert run("is_json", "{'a': 1}").value is False  # Python, not JSON
    assert run("is_json", '{"a": 1} trailing').value is False


def test_is_json_scalars_need_opt_in() -> None:
    result = run("is_json", "42")
    assert result.value is False
    assert result.detail == "top-level value is not an object or array"
    assert run("is_json", "42", allow_scalars=True).value is True
    assert run("is_json", '"yes"', allow_scalars=True).value is True


def test_is_json_rejects_non_standard_constants() -> None:
    assert run("is_json", '{"x": NaN}').value is False
    assert run("is_json", "[Infinity]").value is False
    assert run("is_json", "[-Infinity]").value is False


def test_is_json_empty_and_unicode() -> None:
    assert run("is_json", "") == CheckResult(False, "empty text")
    assert run("is_json", "   \n").value is False
    assert run("is_json", '{"ville": "Zürich", "emoji": "🙂"}').value is True


def test_is_json_nested_deeply() -> None:
    nested = '{"a": ' * 50 + "1" + "}" * 50
    assert run("is_json", nested).value is True
    too_deep = "[" * 100_000 + "]" * 100_000
    result = run("is_json", too_deep)
    assert result == CheckResult(False, "JSON nested too deeply")


def test_is_json_error_detail_locates_without_text() -> None:
    result = run("is_json", '{\n  "password": "hunter2",\n  oops\n}')
    assert result.value is False
    assert result.detail is not None
    assert "line 3" in result.detail
    assert "hunter2" not in result.detail


FENCED = '```json\n{"answer": 42}\n```'


def test_code_fence_needs_opt_in() -> None:
    assert run("is_json", FENCED).value is False
    assert run("is_json", FENCED, allow_code_fence=True) == CheckResult(True, "object")
    assert run("is_json", "\n```\n[1, 2]\n```\n", allow_code_fence=True).value is True
    assert run("is_json", "```JSON\n[1]\n```", allow_code_fence=True).value is True


def test_code_fence_other_language_or_prose_is_not_json() -> None:
    assert run("is_json", '```python\n{"a": 1}\n```', allow_code_fence=True).value is False
    text = 'Here it is:\n```json\n{"a": 1}\n```'
    assert run("is_json", text, allow_code_fence=True).value is False
    assert strip_code_fence("```json\n[1]\n```\ntext\n```json\n[2]\n```") is None
    assert strip_code_fence("```json [1]```") is None  # no newline: not a fence block


def test_code_fence_allowed_still_accepts_bare_json() -> None:
    assert run("is_json", '{"a": 1}', allow_code_fence=True).value is True


# --- contains_json --------------------------------------------------------------------------


def test_contains_json_in_prose_and_fences() -> None:
    text = 'Sure! Here is the record: {"id": 7, "tags": ["x"]} Let me know.'
    result = run("contains_json", text)
    assert result.value is True
    assert result.detail == "object at 26, 24 chars"
    assert run("contains_json", "Result:\n" + FENCED + "\nbye").value is True


def test_contains_json_skips_broken_candidates() -> None:
    text = 'Broken {not json} and {"a": {"b": [1, 2]}} later'
    assert run("contains_json", text).value is True
    # an invalid outer object with a valid inner one: the inner one counts
    assert run("contains_json", '{"outer": {"inner": 1} oops').value is True


def test_contains_json_without_json() -> None:
    assert run("contains_json", "").value is False
    assert run("contains_json", "No braces here at all.").value is False
    assert run("contains_json", "set notation {x | x > 0} and f(x)").value is False


def test_contains_json_kinds_and_citations() -> None:
    text = "Paris is the capital [1]."
    assert run("contains_json", text).value is True  # [1] is a JSON array
    assert run("contains_json", text, kinds=["object"]).value is False
    assert run("contains_json", '{"a": 1}', kinds=["array"]).value is False


def test_contains_json_min_chars() -> None:
    assert run("contains_json", "empty {} here").value is True
    assert run("contains_json", "empty {} here", min_chars=3).value is False
    assert run("contains_json", 'empty {} then {"a": 1}', min_chars=3).value is True


def test_contains_json_adversarial_input_is_bounded() -> None:
    texts = [
        "[" * 200_000,
        "[1," * 66_000,
        "{" * 200_000,
        '{"a": ' * 30_000,
        "x" * 200_000,
    ]
    check = make("contains_json")
    for text in texts:
        start = time.perf_counter()
        result = check(text, EV)
        elapsed = time.perf_counter() - start
        assert result.value is False
        # A guard against super-linear blow-ups (seconds to minutes), not a speed figure.
        assert elapsed < 10.0, (text[:10], elapsed)


# --- json_schema ----------------------------------------------------------------------------


def test_json_schema_valid_and_invalid() -> None:
    check = make("json_schema", schema=SCHEMA)
    assert check('{"name": "n", "items": [{"qty": 2}]}', EV) == CheckResult(True, None)
    result = check('{"name": "n", "items": [{"qty": 2}, {"qty": "two"}]}', EV)
    assert result.value is False
    assert result.detail is not None
    assert result.detail.startswith("at /items/1/qty: type (")


def test_json_schema_missing_property_detail_is_root() -> None:
    result = run("json_schema", '{"items": []}', schema=SCHEMA)
    assert result == CheckResult(False, "at (root): required ('name' is a required property)")


def test_json_schema_detail_does_not_echo_long_values() -> None:
    secret = "s3cr3t-" + "x" * 500
    result = run("json_schema", json.dumps({"name": 5, "items": [], "k": 1}), schema=SCHEMA)
    assert result.value is False
    result = run("json_schema", json.dumps({"name": ["a"], "items": secret}), schema=SCHEMA)
    assert result.detail is not None
    assert len(result.detail) < 100
    assert "x" * 60 not in result.detail


def test_json_schema_detail_never_quotes_the_answer() -> None:
    """The validator's message quotes the failing value: a string field holding a card
    number or an SSN went into verdicts, logs and the HTML report."""
    schema = {
        "type": "object",
        "properties": {
            "ssn": {"type": "integer"},
            "tier": {"enum": ["gold", "silver"]},
            "note": {"maxLength": 3},
        },
        "additionalProperties": False,
    }
    pii = "SSN 123-45-6789, card 4111 1111 1111 1111"
    for doc, detail in [
        ({"ssn": pii}, 'at /ssn: type (expected "integer")'),
        ({"tier": pii}, 'at /tier: enum (expected ["gold", "silver"])'),
        ({"note": pii}, "at /note: maxLength (expected 3)"),
        ({"extra": pii}, "at (root): additionalProperties (expected false)"),
    ]:
        result = run("json_schema", json.dumps(doc), schema=schema)
        assert result == CheckResult(False, detail)
    result = run("json_schema", json.dumps({"a": pii}), schema={"properties": {"a": False}})
    assert result == CheckResult(False, "at (root): not allowed by the schema")  # as reported


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        ({"$ref": "#/$defs/missing"}, "$ref '#/$defs/missing' at (root) points nowhere"),
        (
            {"properties": {"a": {"$ref": "https://example.com/s.json"}}},
            "$ref 'https://example.com/s.json' at /properties/a is outside the schema",
        ),
        ({"items": {"$ref": "other.json#/x"}}, "$ref 'other.json#/x' at /items is outside"),
    ],
)
def test_a_schema_ref_that_cannot_be_resolved_fails_at_load(
    schema: dict[str, object], message: str
) -> None:
    """It used to load, then raise on every event: the rule never failed valid JSON."""
    with pytest.raises(ValueError, match=re.escape(message)):
        make("json_schema", schema=schema)
    # Refs that resolve inside the schema load, and a const holding "$ref" is data.
    make(
        "json_schema",
        schema={
            "$defs": {"qty": {"type": "integer"}},
            "properties": {"q": {"$ref": "#/$defs/qty"}, "c": {"const": {"$ref": "#/x"}}},
        },
    )


def test_json_schema_not_json() -> None:
    result = run("json_schema", "not json", schema=SCHEMA)
    assert result.value is False
    assert result.detail is not None
    assert result.detail.startswith("invalid JSON")


def test_json_schema_with_fence() -> None:
    fenced = '```json\n{"name": "n", "items": []}\n```'
    assert run("json_schema", fenced, schema=SCHEMA).value is False
    assert run("json_schema", fenced, schema=SCHEMA, allow_code_fence=True).value is True


def test_json_schema_scalar_schema_with_allow_scalars() -> None:
    assert run("json_schema", "7", schema={"type": "integer"}).value is False
    assert run("json_schema", "7", schema={"type": "integer"}, allow_scalars=True).value is True


def test_json_schema_formats_opt_in() -> None:
    schema = {"type": "object", "properties": {"when": {"type": "string", "format": "date"}}}
    text = '{"when": "not a date"}'
    assert run("json_schema", text, schema=schema).value is True
    assert run("json_schema", text, schema=schema, check_formats=True).value is False


def test_json_schema_nested_document() -> None:
    schema = {"type": "object", "properties": {"a": {"$ref": "#"}}, "additionalProperties": False}
    deep = '{"a": ' * 40 + "{}" + "}" * 40
    assert run("json_schema", deep, schema=schema).value is True
    bad = '{"a": ' * 40 + '{"b": 1}' + "}" * 40
    result = run("json_schema", bad, schema=schema)
    assert result.value is False
    assert result.detail is not None
    assert result.detail.startswith("at /" + "a/" * 39 + "a: additionalProperties")


def test_a_schema_file_with_a_key_given_twice_is_refused(tmp_path: Path) -> None:
    (tmp_path / "s.json").write_text('{"type": "object", "required": ["a"], "required": []}')
    with pytest.raises(
        ValueError, match=re.escape("schema_file 's.json': key 'required' given twice")
    ):
        make("json_schema", base_dir=tmp_path, schema_file="s.json")


def test_schema_file_relative_to_base_dir(tmp_path: Path) -> None:
    (tmp_path / "schemas").mkdir()
    (tmp_path / "schemas" / "order.json").write_text(json.dumps(SCHEMA), encoding="utf-8")
    check = make("json_schema", base_dir=tmp_path, schema_file="schemas/order.json")
    assert check('{"name": "n", "items": []}', EV).value is True
    assert check('{"name": 1, "items": []}', EV).value is False


def test_schema_file_missing(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"schema_file 'nope\.json': cannot read"):
        make("json_schema", base_dir=tmp_path, schema_file="nope.json")


def test_schema_file_not_json(tmp_path: Path) -> None:
    (tmp_path / "s.json").write_text("{type: object", encoding="utf-8")
    with pytest.raises(ValueError, match=r"schema_file 's\.json': not JSON"):
        make("json_schema", base_dir=tmp_path, schema_file="s.json")


def test_schema_file_invalid_schema(tmp_path: Path) -> None:
    (tmp_path / "s.json").write_text('{"type": "objekt"}', encoding="utf-8")
    with pytest.raises(ValueError, match=r"schema_file 's\.json' is not a valid JSON Schema"):
        make("json_schema", base_dir=tmp_path, schema_file="s.json")
    (tmp_path / "a.json").write_text("[1]", encoding="utf-8")
    with pytest.raises(ValueError, match="must be a JSON object"):
        make("json_schema", base_dir=tmp_path, schema_file="a.json")


def test_inline_schema_checked_at_validation() -> None:
    with pytest.raises(ValidationError, match=r"not a valid JSON Schema at properties/n/type"):
        JsonSchemaParams.model_validate(
            {"schema": {"type": "object", "properties": {"n": {"type": 5}}}}
        )


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"schema": SCHEMA, "schema_file": "x.json"},
        {"json_schema": SCHEMA},  # the key is "schema"
        {"schema": SCHEMA, "allow_fence": True},
    ],
)
def test_json_schema_params_errors(params: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        JsonSchemaParams.model_validate(params)


def test_json_schema_huge_input() -> None:
    check = make("json_schema", schema=SCHEMA)
    text = json.dumps({"name": "n", "items": [{"qty": i} for i in range(20_000)]})
    start = time.perf_counter()
    assert check(text, EV).value is True
    assert time.perf_counter() - start < 10.0  # a guard against blow-ups, not a figure
