"""JSON checks: is the answer JSON, does it contain JSON, does it match a schema.

Parsing uses the standard library with two tightenings: the non-standard constants ``NaN``,
``Infinity`` and ``-Infinity`` that Python accepts are rejected, and a document nested deeper
than the interpreter's recursion limit counts as not JSON rather than crashing the check.
``is_json`` and ``json_schema`` want an object or an array at the top level unless
``allow_scalars`` is set, since an answer such as ``42`` or ``"yes"`` is rarely what a rule
asking for JSON means.
"""

from __future__ import annotations

import json as _json
import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError
from pydantic import Field, field_validator, model_validator
from referencing import Registry
from referencing.exceptions import Unresolvable
from referencing.jsonschema import DRAFT202012

from ..events import Event
from ..scan import ScanPattern
from .base import Check, CheckContext, CheckResult, Params
from .registry import register

__all__ = [
    "ContainsJson",
    "ContainsJsonParams",
    "IsJson",
    "IsJsonParams",
    "JsonSchema",
    "JsonSchemaParams",
    "strip_code_fence",
]

_FENCE = "```"
_FENCE_LANGS = frozenset({"", "json", "jsonc", "json5"})


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


_DECODER = _json.JSONDecoder(parse_constant=_reject_constant)


def strip_code_fence(text: str) -> str | None:
    """The body of a Markdown code fence that is the whole (stripped) text, or None.

    Accepts a fence with no language or with ``json``; anything else (```python) is not a
    JSON answer, so None.
    """
    s = text.strip()
    if len(s) < 6 or not s.startswith(_FENCE) or not s.endswith(_FENCE):
        return None
    newline = s.find("\n")
    if newline < 0:
        return None
    if s[:newline].strip("`").strip().lower() not in _FENCE_LANGS:
        return None
    body = s[newline + 1 : -3]
    if _FENCE in body:  # several fences, or prose between them: not one fenced answer
        return None
    return body


def _parse(text: str) -> tuple[bool, Any, str | None]:
    """(ok, value, reason): parse the whole text as one JSON document."""
    try:
        return True, _DECODER.decode(text), None
    except _json.JSONDecodeError as exc:
        return False, None, f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
    except ValueError as exc:  # rejected constant, or an integer over the digit limit
        return False, None, f"invalid JSON: {str(exc)[:80]}"
    except RecursionError:
        return False, None, "JSON nested too deeply"


def _type_name(value: Any) -> str:
    if isinstance(value, dict):
        return "object"
    return "array" if isinstance(value, list) else "scalar"


def _both_kinds() -> list[Literal["object", "array"]]:
    return ["object", "array"]


class _WholeTextParams(Params):
    allow_code_fence: bool = Field(
        default=False, description="also accept a JSON answer wrapped in a ```json fence"
    )
    allow_scalars: bool = Field(
        default=False, description="accept a top-level string, number, boolean or null"
    )


class _WholeText(Check[Any]):
    """Shared parsing for the checks that read the whole text as one JSON document."""

    def _setup(self, params: _WholeTextParams) -> None:
        self.allow_code_fence = params.allow_code_fence
        self.allow_scalars = params.allow_scalars

    def _document(self, text: str) -> tuple[bool, Any, str | None]:
        if self.allow_code_fence:
            body = strip_code_fence(text)
            if body is not None:
                text = body
        if not text.strip():
            return False, None, "empty text"
        ok, value, reason = _parse(text)
        if ok and not self.allow_scalars and not isinstance(value, dict | list):
            return False, None, "top-level value is not an object or array"
        return ok, value, reason


class IsJsonParams(_WholeTextParams):
    pass


@register
class IsJson(_WholeText):
    """True when the whole text (surrounding whitespace aside) is one JSON document."""

    name = "is_json"
    params_model = IsJsonParams

    def __init__(self, params: IsJsonParams, ctx: CheckContext) -> None:
        super().__init__(params, ctx)
        self._setup(params)

    def __call__(self, text: str, event: Event) -> CheckResult:
        ok, value, reason = self._document(text)
        return CheckResult(ok, _type_name(value) if ok else reason)


class ContainsJsonParams(Params):
    kinds: list[Literal["object", "array"]] = Field(
        default_factory=_both_kinds,
        min_length=1,
        description="which embedded values count; use [object] when answers cite sources as [1]",
    )
    min_chars: int = Field(
        default=2, ge=2, description="ignore embedded values shorter than this ({} is 2)"
    )


_OPENERS = {
    # An opener followed by something that cannot start its contents is skipped unparsed.
    "object": r"\{(?=\s*[\"}])",
    "array": r"\[(?=\s*[\[\]{\"\-0-9tfn])",
}
_SPACE = r"[\t-\r\x{1c}-\x{20}]*"  # what re's \s matches in ASCII text
_OPENER_GATES = {
    # An opener and what its look-ahead wants, consumed: occurs wherever an opener matches.
    "object": ScanPattern(rf"\{{{_SPACE}[\"}}]"),
    "array": ScanPattern(rf"\[{_SPACE}[\[\]{{\"\-0-9tfn]"),
}


@register
class ContainsJson(Check[ContainsJsonParams]):
    """True when some object (or array) parses as JSON somewhere in the text.

    Each ``{`` (and ``[``) that could open a value is tried, in order, until one parses, so a
    JSON block inside prose or a code fence is found. The work is bounded: at most
    ``MAX_ATTEMPTS`` failed starts and parsing effort of a few times the text length, so a text
    full of unbalanced brackets stays cheap; when a bound is reached the value is False and
    the detail says so.
    """

    name = "contains_json"
    params_model = ContainsJsonParams
    scan_absent_is_fixed = True
    MAX_ATTEMPTS = 500
    _BUDGET_FACTOR = 4
    _BUDGET_MIN = 20_000

    def __init__(self, params: ContainsJsonParams, ctx: CheckContext) -> None:
        super().__init__(params, ctx)
        self.opener = re.compile("|".join(_OPENERS[k] for k in sorted(set(params.kinds))))
        self.min_chars = params.min_chars
        self._gates = tuple(_OPENER_GATES[k] for k in sorted(set(params.kinds)))

    def scan_patterns(self) -> Sequence[ScanPattern]:
        return self._gates

    def from_scan(self, found: frozenset[int], text: str, event: Event) -> CheckResult:
        if not found:  # no opener anywhere: nothing to parse
            return CheckResult(False, None)
        return self(text, event)

    def __call__(self, text: str, event: Event) -> CheckResult:
        budget = self._BUDGET_FACTOR * len(text) + self._BUDGET_MIN
        attempts = 0
        m = self.opener.search(text)
        while m is not None:
            i = m.start()
            nxt = i + 1
            try:
                value, end = _DECODER.raw_decode(text, i)
            except _json.JSONDecodeError as exc:
                budget -= max(exc.pos - i, 1)
                attempts += 1
            except (ValueError, RecursionError):
                budget -= 1000  # work unknown: charge generously
                attempts += 1
            else:
                if end - i >= self.min_chars:
                    return CheckResult(True, f"{_type_name(value)} at {i}, {end - i} chars")
                budget -= end - i
                nxt = end
            if budget <= 0 or attempts >= self.MAX_ATTEMPTS:
                return CheckResult(False, "search bound reached")
            m = self.opener.search(text, nxt)
        return CheckResult(False, None)


class JsonSchemaParams(_WholeTextParams):
    json_schema: dict[str, Any] | None = Field(
        default=None, alias="schema", description="the JSON Schema (draft 2020-12), inline"
    )
    schema_file: str | None = Field(
        default=None, description="a JSON file holding the schema, relative to the rule file"
    )
    check_formats: bool = Field(
        default=False, description='also enforce "format" (date-time, email, ...)'
    )

    @field_validator("json_schema")
    @classmethod
    def _valid_schema(cls, v: dict[str, Any] | None) -> dict[str, Any] | None:
        if v is not None:
            _check_schema(v, "inline schema")
        return v

    @model_validator(mode="after")
    def _exactly_one(self) -> JsonSchemaParams:
        if (self.json_schema is None) == (self.schema_file is None):
            raise ValueError("give exactly one of 'schema' and 'schema_file'")
        return self


def _check_schema(schema: Mapping[str, Any], where: str) -> None:
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        path = "/".join(str(p) for p in exc.path) or "(root)"
        raise ValueError(f"{where} is not a valid JSON Schema at {path}: {exc.message}") from None
    _check_refs(schema, where)


_SCHEMA_URI = "urn:llm-sidecar:schema"


def _check_refs(schema: Mapping[str, Any], where: str) -> None:
    """Every ``$ref`` must point inside the schema: one that points nowhere (or to a file
    or URL, which are never fetched) raised on every event, and the rule then never failed
    valid JSON. Refs under a nested ``$id`` are left to the validator (they resolve against
    that id)."""
    resolver = (
        Registry()
        .with_resource(_SCHEMA_URI, DRAFT202012.create_resource(dict(schema)))
        .resolver(base_uri=_SCHEMA_URI)
    )

    def walk(node: Any, path: str) -> None:
        if isinstance(node, dict):
            if "$id" in node and path:
                return
            ref = node.get("$ref")
            if isinstance(ref, str):
                try:
                    resolver.lookup(ref)
                except Unresolvable:
                    what = (
                        "points nowhere in the schema"
                        if ref.startswith("#")
                        else "is outside the schema (files and URLs are never fetched)"
                    )
                    raise ValueError(
                        f"{where}: $ref {ref!r} at {path or '(root)'} {what}"
                    ) from None
            for key, value in node.items():
                if key not in ("const", "enum", "default", "examples"):
                    walk(value, f"{path}/{key}")
        elif isinstance(node, list):
            for i, value in enumerate(node):
                walk(value, f"{path}/{i}")

    walk(schema, "")


class _DuplicateKey(Exception):
    def __init__(self, key: str) -> None:
        self.key = key


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object whose keys are all different: a repeated key (the last one silently
    winning) is refused, as the rule files' YAML loader refuses one."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(key)
        out[key] = value
    return out


def _error_path(path: Any) -> str:
    return "/" + "/".join(str(p) for p in path) if path else "(root)"


def _expected(error: Any) -> str:
    """What the schema asked for where the answer failed, from the schema alone: the
    validator's own message quotes the answer's values, and verdicts, logs and reports must
    not carry the answer's text."""
    if error.validator is None:  # a `false` subschema
        return "not allowed by the schema"
    if error.validator == "required":  # names only properties of the schema
        message = str(error.message)
    else:
        message = "expected " + _json.dumps(error.validator_value, ensure_ascii=False)
    if len(message) > 60:
        message = message[:57] + "..."
    return f"{error.validator} ({message})"


@register
class JsonSchema(_WholeText):
    """True when the text is JSON that validates against the schema.

    The detail names the first failing location as a JSON pointer and the failing keyword;
    the validator's message, which may quote the answer, is cut to a short snippet.
    """

    name = "json_schema"
    params_model = JsonSchemaParams

    def __init__(self, params: JsonSchemaParams, ctx: CheckContext) -> None:
        super().__init__(params, ctx)
        self._setup(params)
        schema = params.json_schema
        if schema is None:
            assert params.schema_file is not None  # guaranteed by the params model
            schema = self._load(ctx, params.schema_file)
        fc = Draft202012Validator.FORMAT_CHECKER if params.check_formats else None
        self.validator = Draft202012Validator(schema, format_checker=fc)

    @staticmethod
    def _load(ctx: CheckContext, name: str) -> dict[str, Any]:
        path = ctx.base_dir / name
        ctx.files_read.append(path)
        try:
            raw = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise ValueError(f"schema_file {name!r}: cannot read {path}: {exc.strerror}") from None
        except UnicodeDecodeError:
            raise ValueError(f"schema_file {name!r}: not UTF-8 text") from None
        try:
            schema = _json.loads(raw, object_pairs_hook=_unique_keys)
        except _DuplicateKey as exc:
            raise ValueError(f"schema_file {name!r}: key {exc.key!r} given twice") from None
        except ValueError as exc:
            raise ValueError(f"schema_file {name!r}: not JSON: {exc}") from None
        if not isinstance(schema, dict):
            raise ValueError(f"schema_file {name!r}: a schema must be a JSON object")
        _check_schema(schema, f"schema_file {name!r}")
        return schema

    def __call__(self, text: str, event: Event) -> CheckResult:
        ok, value, reason = self._document(text)
        if not ok:
            return CheckResult(False, reason)
        try:
            error = next(self.validator.iter_errors(value), None)
        except RecursionError:
            return CheckResult(False, "JSON nested too deeply to validate")
        if error is None:
            return CheckResult(True, None)
        return CheckResult(False, f"at {_error_path(error.absolute_path)}: {_expected(error)}")
