"""Rule files -> validated :class:`RuleSet` -> compiled rules the pipeline runs.

Loading happens at start, on ``llm-sidecar validate``, and on every hot reload, always through
:func:`load_rules`, which collects *every* problem (file, rule id, reason) before raising, so a
user fixes a broken pack in one pass. Compilation (building each check, with its regexes,
automata and schemas) happens here once; the hot path only calls the compiled objects.
"""

from __future__ import annotations

import asyncio
import contextlib
import difflib
import hashlib
import json
import math
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Literal

import yaml
from jsonschema import Draft202012Validator
from pydantic import BaseModel, ConfigDict, ValidationError, field_validator, model_validator

from .checks import Check, CheckContext, get_check, registered
from .errors import RuleError, RuleSetError
from .events import FIELDS, AttackCategory, Event

__all__ = [
    "CompiledRule",
    "RuleSet",
    "RuleSpec",
    "RuleWatcher",
    "When",
    "bundled_path",
    "expand_paths",
    "load_rules",
    "read_yaml_file",
    "rule_files",
]

Severity = Literal["info", "warning", "error", "critical"]
MAX_INCLUDE_DEPTH = 8


def bundled_path(name: str) -> Path:
    """A data file shipped inside the package (default rules, schema, sample stream)."""
    return Path(str(resources.files("sidecar") / "data" / name))


def _schema_validator() -> Draft202012Validator:
    schema = json.loads(bundled_path("rules.schema.json").read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


_VALIDATOR: Draft202012Validator | None = None


def _validator() -> Draft202012Validator:
    global _VALIDATOR
    if _VALIDATOR is None:
        _VALIDATOR = _schema_validator()
    return _VALIDATOR


class When(BaseModel):
    """A filter on event metadata; every key given must match."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    route: tuple[str, ...] | None = None
    model: tuple[str, ...] | None = None
    task: tuple[str, ...] | None = None
    tenant: tuple[str, ...] | None = None
    attack: bool | None = None
    attack_category: tuple[AttackCategory, ...] | None = None

    @model_validator(mode="after")
    def _satisfiable(self) -> When:
        if self.attack is False and self.attack_category is not None:
            raise ValueError(
                "attack: false and attack_category exclude each other: no event matches"
            )
        return self

    @classmethod
    def parse(cls, raw: Mapping[str, Any]) -> When:
        listed = {
            k: (v,) if isinstance(v, str) else v if isinstance(v, bool) else tuple(v)
            for k, v in raw.items()
        }
        return cls.model_validate(listed)

    def compile(self) -> Callable[[Event], bool]:
        """A predicate doing only the comparisons this filter needs."""
        tests: list[Callable[[Event], bool]] = []
        for name in ("route", "model", "task", "tenant"):
            allowed = getattr(self, name)
            if allowed is not None:
                tests.append(_field_in(name, frozenset(allowed)))
        if self.attack is not None:
            want = self.attack
            tests.append(lambda e: (e.attack is not None) is want)
        if self.attack_category is not None:
            cats = frozenset(self.attack_category)
            tests.append(lambda e: e.attack is not None and e.attack.category in cats)
        if len(tests) == 1:
            return tests[0]
        return lambda e: all(t(e) for t in tests)


def _field_in(name: str, values: frozenset[str]) -> Callable[[Event], bool]:
    return lambda e: getattr(e, name) in values


class RuleSpec(BaseModel):
    """A rule as written in a file, after schema validation and defaults."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    check: str
    description: str | None = None
    field: str | None = None
    params: dict[str, Any] = {}
    expect: bool | None = None
    min: float | None = None
    max: float | None = None
    when: When | None = None
    severity: Severity = "warning"
    enabled: bool = True
    file: str = ""

    @field_validator("min", "max")
    @classmethod
    def _finite(cls, v: float | None) -> float | None:
        if v is not None and not math.isfinite(v):
            raise ValueError("must be a finite number")
        return v


@dataclass(slots=True, eq=False)
class CompiledRule:
    """One rule ready for the hot path: a built check and how to judge its value."""

    id: str
    check_name: str
    field: str
    check: Check[Any]
    severity: Severity
    expect: bool | None
    lo: float | None
    hi: float | None
    when: Callable[[Event], bool] | None
    requires_text: bool
    max_chars: int
    file: str
    consecutive_timeouts: int = 0
    disabled: bool = False

    def passed(self, value: bool | float) -> bool:
        if self.expect is not None:
            return bool(value) is self.expect
        if isinstance(value, bool):  # a boolean check used without expect: true passes
            return value
        if self.lo is not None and value < self.lo:
            return False
        return not (self.hi is not None and value > self.hi)


TEXT_FIELDS = ("prompt", "response", "system_prompt", "contexts", "ground_truths")
"""The event fields that hold the text rules usually read."""


def rule_notes(ruleset: RuleSet) -> list[str]:
    """A line for each thing in a valid rule set that most likely does not do what its
    author meant: a rule reads a field the event format does not define (valid, since an
    event may carry a field of its own, but most often a typo after which the rule applies
    to no event), a check says something about its parameters (:meth:`Check.notes`), a
    disabled rule would not load, two files set one judge setting differently."""
    notes = list(ruleset.notes)
    if not ruleset.rules:
        notes.append("no rule is enabled: every event will pass, unchecked")
    for rule in ruleset.rules:
        where = f"{rule.file}: rule {rule.id!r}"
        if rule.field not in FIELDS:
            close = difflib.get_close_matches(rule.field, FIELDS, n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            notes.append(
                f"{where} reads field {rule.field!r}, which events do not have unless they "
                f"carry it as a field of their own ({hint}the event's fields: "
                f"{', '.join(TEXT_FIELDS)})"
            )
        notes.extend(f"{where}: {note}" for note in rule.check.notes())
    return notes


@dataclass(frozen=True, slots=True)
class RuleSet:
    """The compiled rules of one load, with the content hash that names this version."""

    rules: tuple[CompiledRule, ...]
    version: str
    files: tuple[Path, ...]
    judge: Mapping[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    """What the load noticed beyond the rules themselves (see :func:`rule_notes`)."""

    @property
    def ids(self) -> list[str]:
        return [r.id for r in self.rules]


def load_rules(
    paths: Sequence[Path],
    *,
    system_prompts: Mapping[str, str] | None = None,
    secrets: Mapping[str, str] | None = None,
    regex_timeout_s: float = 0.05,
) -> RuleSet:
    """Load, validate and compile rule files (directories mean every ``*.yaml`` in them).

    Raises :class:`RuleSetError` listing every problem found.
    """
    errors: list[RuleError] = []
    specs: list[RuleSpec] = []
    judge = _JudgeOverrides()
    digest = hashlib.sha256()
    seen: set[Path] = set()

    files = expand_paths(paths, errors)
    for path in files:
        _load_file(path, specs, judge, digest, seen, errors, depth=0)
    notes = list(judge.notes)

    ids: dict[str, str] = {}
    for spec in specs:
        if spec.id in ids:
            errors.append(
                RuleError(spec.file, spec.id, f"duplicate rule id (also in {ids[spec.id]})")
            )
        ids.setdefault(spec.id, spec.file)

    compiled: list[CompiledRule] = []
    for spec in specs:
        ctx = CheckContext(
            base_dir=Path(spec.file).parent,
            system_prompts=system_prompts or {},
            secrets=secrets or {},
            regex_timeout_s=regex_timeout_s,
        )
        if not spec.enabled:
            # Inert, so not built (a check may load a dictionary), but its parameters are
            # checked: enabling it later must not be what breaks a deploy.
            try:
                _validated_params(spec)
            except RuleError as exc:
                notes.append(
                    f"{spec.file}: rule {spec.id!r} is disabled, and would not load: {exc.reason}"
                )
            continue
        try:
            compiled.append(_compile(spec, ctx))
        except RuleError as exc:
            errors.append(exc)
        for extra in ctx.files_read:  # a schema file: part of the version, and watched
            with contextlib.suppress(OSError):
                digest.update(extra.read_bytes() + b"\0")
            seen.add(extra.resolve())

    if errors:
        raise RuleSetError(errors)
    if secrets and not any(r.check_name == "secret_leak" for r in compiled):
        notes.append(
            f"the settings register {len(secrets)} secret(s), but no enabled rule uses the "
            "secret_leak check, so none is looked for (add a rule with check: secret_leak)"
        )
    return RuleSet(
        rules=tuple(compiled),
        version=digest.hexdigest()[:12],
        files=tuple(sorted(seen)),
        judge=dict(judge.values),
        notes=tuple(notes),
    )


class _JudgeOverrides:
    """The ``judge:`` mappings of every rule file, merged in load order (a later file's key
    wins), noting each key two files set to different values."""

    def __init__(self) -> None:
        self.values: dict[str, Any] = {}
        self._from: dict[str, str] = {}
        self.notes: list[str] = []

    def update(self, file: str, overrides: Mapping[str, Any]) -> None:
        for key, value in overrides.items():
            before = self._from.get(key)
            if before is not None and before != file and self.values[key] != value:
                self.notes.append(
                    f"judge.{key} is {self.values[key]!r} in {before} and {value!r} in "
                    f"{file}: the later file's value, {value!r}, is used"
                )
            self.values[key] = value
            self._from[key] = file


def read_yaml_file(path: Path, name: str, errors: list[RuleError]) -> tuple[Any, bytes] | None:
    """A YAML file's document and bytes; None, with the reason in ``errors`` under ``name``,
    when it cannot be read, is not UTF-8 or is not YAML (with the lines around the fault)."""
    try:
        raw = path.read_bytes()
        return load_yaml(raw.decode("utf-8")), raw
    except OSError as exc:
        errors.append(RuleError(name, None, f"cannot read: {exc.strerror}"))
    except UnicodeDecodeError as exc:
        errors.append(RuleError(name, None, f"not valid UTF-8 (at byte {exc.start})"))
    except yaml.YAMLError as exc:
        errors.append(RuleError(name, None, f"not valid YAML: {yaml_problem(exc)}"))
        errors[-1].context = yaml_snippet(exc)
    return None


def expand_paths(paths: Iterable[Path], errors: list[RuleError], what: str = "rule") -> list[Path]:
    """The YAML files of ``paths`` (files, and the ``.yaml``/``.yml`` files of directories);
    a missing path, or a directory without ``what`` files, is an error in ``errors``."""
    out: list[Path] = []
    for p in paths:
        if p.is_dir():
            found = sorted([*p.glob("*.yaml"), *p.glob("*.yml")])
            if not found:
                errors.append(RuleError(str(p), None, f"directory holds no .yaml {what} files"))
            out.extend(found)
        elif p.is_file():
            out.append(p)
        else:
            errors.append(RuleError(str(p), None, "no such file or directory"))
    return out


def _load_file(
    path: Path,
    specs: list[RuleSpec],
    judge: _JudgeOverrides,
    digest: Any,
    seen: set[Path],
    errors: list[RuleError],
    depth: int,
) -> None:
    real = path.resolve()
    if real in seen:
        return
    seen.add(real)
    # Named as given, not by the target of a link: a Kubernetes ConfigMap mounts each file
    # as a link into a "..2025_01_01_00_00_00.123" directory, which is not what the user
    # wrote. Includes are found beside the file itself (real), as before.
    name = str(path.absolute())
    read = read_yaml_file(path, name, errors)
    if read is None:
        return
    doc, raw_bytes = read
    digest.update(raw_bytes + b"\0")
    if doc is None:
        errors.append(RuleError(name, None, "the file is empty (a rule file needs rules:)"))
        return

    schema_errors = sorted(_validator().iter_errors(doc), key=lambda e: list(e.absolute_path))
    bad_rules: set[int] = set()
    for err in schema_errors:
        errors.append(RuleError(name, _rule_id_at(doc, err.absolute_path), _schema_message(err)))
        where = list(err.absolute_path)
        if len(where) >= 2 and where[0] == "rules" and isinstance(where[1], int):
            bad_rules.add(where[1])
        else:
            return  # the file's structure is wrong: nothing more in it can be trusted

    if depth >= MAX_INCLUDE_DEPTH:
        errors.append(RuleError(name, None, f"includes nested deeper than {MAX_INCLUDE_DEPTH}"))
        return
    for inc in doc.get("include", []):
        inc_path = real.parent / inc
        if not inc_path.is_file():
            what = "is a directory" if inc_path.is_dir() else "does not exist"
            errors.append(RuleError(name, None, f"included file {inc} {what}"))
            continue
        _load_file(inc_path, specs, judge, digest, seen, errors, depth + 1)

    if "judge" in doc:
        problem = _judge_problem(doc["judge"])
        if problem is None:
            judge.update(name, doc["judge"])
        else:
            errors.append(RuleError(name, None, f"judge: {problem}"))
    defaults = doc.get("defaults", {})
    for index, raw in enumerate(doc.get("rules", [])):
        if index in bad_rules:
            continue  # reported above; keep checking the others
        merged = {**{k: v for k, v in defaults.items() if k != "when"}, **raw}
        when = raw.get("when", defaults.get("when"))
        # What the schema cannot say (min: .nan, an attack category no event can have).
        try:
            merged["when"] = When.parse(when) if when is not None else None
            specs.append(RuleSpec(**merged, file=name))
        except ValidationError as exc:
            prefix = "when." if exc.title == "When" else ""
            reasons = "; ".join(
                prefix + ".".join(str(p) for p in e["loc"]) + ": " + _msg(e["msg"])
                if e["loc"]
                else f"{prefix.rstrip('.') or 'rule'}: {_msg(e['msg'])}"
                for e in exc.errors(include_url=False)
            )
            errors.append(RuleError(name, str(raw.get("id")), reasons))


def _judge_problem(overrides: Mapping[str, Any]) -> str | None:
    """What is wrong with one file's ``judge:`` mapping on its own (so that the error can
    name the file), or None. Values that clash only with the process's own judge settings
    are found when the two are merged."""
    from .errors import ConfigError
    from .judge.config import JudgeSettings

    try:
        JudgeSettings().merge(overrides)
    except ConfigError as exc:
        return str(exc).removeprefix("invalid judge settings in rule files: ")
    return None


def _compile(spec: RuleSpec, ctx: CheckContext) -> CompiledRule:
    cls, params = _validated_params(spec)
    try:
        check = cls(params, ctx)
    except (ValueError, OSError) as exc:
        raise RuleError(spec.file, spec.id, f"cannot build check {spec.check}: {exc}") from None
    expect = spec.expect
    if cls.value_kind == "bool" and expect is None:
        expect = True
    return CompiledRule(
        id=spec.id,
        check_name=spec.check,
        field=spec.field or cls.default_field,
        check=check,
        severity=spec.severity,
        expect=expect,
        lo=spec.min,
        hi=spec.max,
        when=spec.when.compile() if spec.when is not None else None,
        requires_text=cls.requires_text,
        max_chars=cls.max_input_chars,
        file=spec.file,
    )


def _validated_params(spec: RuleSpec) -> tuple[type[Check[Any]], Any]:
    """The rule's check class and its validated parameters (everything short of building
    the check), or the :class:`RuleError` that says what is wrong."""
    cls = get_check(spec.check)
    if cls is None:
        known = ", ".join(sorted(registered()))
        raise RuleError(spec.file, spec.id, f"unknown check {spec.check!r}; known checks: {known}")
    if cls.value_kind == "bool" and (spec.min is not None or spec.max is not None):
        raise RuleError(
            spec.file, spec.id, f"check {spec.check} gives true/false: use expect, not min/max"
        )
    if cls.value_kind == "score" and spec.expect is not None:
        raise RuleError(
            spec.file, spec.id, f"check {spec.check} gives a score: use min/max, not expect"
        )
    if spec.min is not None and spec.max is not None and spec.min > spec.max:
        raise RuleError(spec.file, spec.id, "min is greater than max")
    if cls.value_kind == "score":
        low, high = cls.score_range
        if (spec.min is not None and spec.min > high) or (spec.max is not None and spec.max < low):
            raise RuleError(
                spec.file,
                spec.id,
                f"{spec.check} scores run from {low:g} to {high:g}: with "
                + (f"min {spec.min:g}" if spec.min is not None and spec.min > high else "")
                + (f"max {spec.max:g}" if spec.max is not None and spec.max < low else "")
                + " the rule fails every event",
            )
    try:
        params = cls.params_model.model_validate(spec.params)
    except ValidationError as exc:
        reasons = "; ".join(
            f"params.{'.'.join(str(p) for p in e['loc'])}: {_msg(e['msg'])}"
            if e["loc"]
            else _msg(e["msg"])
            for e in exc.errors(include_url=False)
        )
        raise RuleError(spec.file, spec.id, reasons) from None
    return cls, params


def _msg(msg: str) -> str:
    return msg.removeprefix("Value error, ")


def _rule_id_at(doc: Any, path: Iterable[Any]) -> str | None:
    parts = list(path)
    if len(parts) >= 2 and parts[0] == "rules" and isinstance(doc, dict):
        try:
            rid = doc["rules"][parts[1]].get("id")
        except (AttributeError, IndexError, KeyError, TypeError):
            return None
        return str(rid) if rid is not None else f"#{parts[1] + 1}"
    return None


def _schema_message(err: Any) -> str:
    where = "/".join(str(p) for p in err.absolute_path)
    msg = str(err.message)
    if len(msg) > 200:
        msg = msg[:200] + "..."
    return f"{where}: {msg}" if where else msg


class _StrictLoader(yaml.SafeLoader):
    """safe_load, except that a key given twice in one mapping is an error: YAML keeps the
    last silently, so a second ``rules:`` block hid the first one's rules."""


def _mapping_once(loader: _StrictLoader, node: yaml.MappingNode) -> dict[Any, Any]:
    seen: dict[Any, yaml.Node] = {}
    for key_node, _ in node.value:
        if key_node.tag == "tag:yaml.org,2002:merge":
            continue  # "<<: *defaults": the keys after it may override the merged ones
        key = loader.construct_object(key_node, deep=True)
        try:
            first = seen.get(key)
        except TypeError:  # an unhashable key: construct_mapping says so
            break
        if first is not None:
            raise yaml.constructor.ConstructorError(
                f"while reading a mapping (its key {key!r} first at line {first.start_mark.line + 1})",
                node.start_mark,
                f"key {key!r} is given twice",
                key_node.start_mark,
            )
        seen[key] = key_node
    return loader.construct_mapping(node, deep=True)


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping_once)

_FastLoader: type[Any] | None = None
"""The same loader over libyaml's parser, where PyYAML was built with it: three times faster
on a large rule file (33,000 rules: 4.4 s against 12.7 s)."""
if getattr(yaml, "__with_libyaml__", False):

    class _CStrictLoader(yaml.CSafeLoader):
        """:class:`_StrictLoader` over libyaml."""

    _CStrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping_once)
    _FastLoader = _CStrictLoader


def load_yaml(text: str) -> Any:
    """``yaml.safe_load``, with a key given twice in one mapping an error. Read with libyaml
    when PyYAML has it; a text it refuses is read again in Python, whose errors show the
    offending line (libyaml's marks carry none)."""
    if _FastLoader is not None:
        try:
            return yaml.load(text, Loader=_FastLoader)  # a SafeLoader: plain data only
        except yaml.YAMLError:
            pass
    return yaml.load(text, Loader=_StrictLoader)


def yaml_problem(exc: yaml.YAMLError) -> str:
    """A YAML error in one line: where (line and column, 1-based), then what."""
    if isinstance(exc, yaml.MarkedYAMLError) and exc.problem_mark is not None:
        mark = exc.problem_mark
        what = " ".join(str(exc.problem or "").split())
        if exc.context:
            what = f"{' '.join(exc.context.split())}: {what}"
        return f"line {mark.line + 1}, column {mark.column + 1}: {what}"
    return " ".join(str(exc).split())


def yaml_snippet(exc: yaml.YAMLError) -> str | None:
    """The offending line with a caret under the problem, when PyYAML has it."""
    if isinstance(exc, yaml.MarkedYAMLError) and exc.problem_mark is not None:
        snippet = exc.problem_mark.get_snippet()
        return snippet if snippet else None
    return None


# -- hot reload ----------------------------------------------------------------------------------


def rule_files(paths: Iterable[Path], loaded: Iterable[Path] = ()) -> list[Path]:
    """Every rule file that matters: those ``loaded`` (includes too) and every YAML file of
    the configured ``paths`` that are directories, so a file added to a mounted directory is
    noticed."""
    files = {Path(f) for f in loaded}
    for p in paths:
        if p.is_dir():
            files.update(f.resolve() for f in (*p.glob("*.yaml"), *p.glob("*.yml")))
        elif p.is_file():
            files.add(p.resolve())
    return sorted(files)


def _mtimes(files: Iterable[Path]) -> dict[Path, float]:
    out = {}
    for f in files:
        with contextlib.suppress(OSError):
            out[f] = f.stat().st_mtime
    return out


class RuleWatcher:
    """Polls the rule files every ``interval_s`` (0: never; only on request, as on SIGHUP) and
    awaits ``reload`` when they changed or a reload was requested.

    Whoever loads rules calls :meth:`mark` afterwards, whether the files loaded or not, so a
    bad file is reported once rather than on every poll.
    """

    def __init__(
        self,
        interval_s: float,
        files: Callable[[], Sequence[Path]],
        reload: Callable[[], Awaitable[object]],
    ) -> None:
        self.interval_s = interval_s
        self._files = files
        self._reload = reload
        self._requested = asyncio.Event()
        self._seen: dict[Path, float] = {}

    def request(self) -> None:
        self._requested.set()

    def mark(self) -> None:
        self._seen = _mtimes(self._files())

    def changed(self) -> bool:
        return _mtimes(self._files()) != self._seen

    async def run(self) -> None:
        while True:
            if self.interval_s > 0:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._requested.wait(), self.interval_s)
            else:
                await self._requested.wait()
            requested = self._requested.is_set()
            self._requested.clear()
            if requested or await asyncio.to_thread(self.changed):
                await self._reload()
