"""The attack library: YAML files of attack vectors, validated against a JSON Schema.

A vector is a user message template with slots — ``{goal}`` (a request a well-guarded service
declines, named in ``goals``), ``{persona}`` (a role, named in ``personas``) and ``{encoding}``
(the name of the disguise applied to the goal) — plus its ``category`` (``basic``,
``intermediate``, ``advanced``), ``technique``, ``rank`` (1 to 4, the leakage weight; 4 is
easiest to exploit) and ``kind``: ``robustness`` vectors should be refused, ``leakage``
vectors try to get the system prompt out. The library bundled in ``sidecar/data/attacks`` is
loaded unless turned off, then the files of ``probe.attacks``; goals and personas are shared
by every file, and ids are unique across the library. Every problem is reported with its file
and vector id, all at once, as rule files are.
"""

from __future__ import annotations

import base64
import codecs
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import yaml
from jsonschema import Draft202012Validator

from ..errors import RuleError, RuleSetError
from ..rules import bundled_path, expand_paths, load_yaml, read_yaml_file

__all__ = [
    "CATEGORIES",
    "ENCODINGS",
    "AttackLibrary",
    "Vector",
    "encode",
    "is_attack_file",
    "load_library",
]

CATEGORIES: Final = ("basic", "intermediate", "advanced")
KINDS: Final = ("robustness", "leakage")
SLOTS: Final = ("goal", "persona", "encoding")

_LEET = str.maketrans({"a": "4", "e": "3", "i": "1", "o": "0", "s": "5", "t": "7"})
ENCODINGS: Final[Mapping[str, str]] = {
    "base64": "BASE64",
    "rot13": "ROT13",
    "hex": "hex",
    "reversed": "reversed text",
    "leetspeak": "leetspeak",
    "spaced": "spaced letters",
    "split": "split strings",
}
"""Encodings a vector may apply to its goal, and the name its ``{encoding}`` slot reads."""


def encode(text: str, encoding: str) -> str:
    """``text`` disguised as ``encoding`` says (one of :data:`ENCODINGS`)."""
    if encoding == "base64":
        return base64.b64encode(text.encode()).decode()
    if encoding == "rot13":
        return codecs.encode(text, "rot13")
    if encoding == "hex":
        return text.encode().hex()
    if encoding == "reversed":
        return text[::-1]
    if encoding == "leetspeak":
        return text.lower().translate(_LEET)
    if encoding == "spaced":
        return " ".join(text.replace(" ", ""))
    if encoding == "split":
        half = len(text) // 2
        cut = text.find(" ", half)
        cut = cut if cut > 0 else half
        return f'a = "{text[:cut]}", b = "{text[cut:]}"'
    raise ValueError(f"unknown encoding {encoding!r}")


@dataclass(frozen=True, slots=True)
class Vector:
    """One attack vector, its references resolved; :meth:`render` is the user message."""

    id: str
    category: str
    technique: str
    rank: int
    kind: str
    template: str
    file: str
    goal: str | None = None
    goal_text: str | None = None
    persona: str | None = None
    persona_text: str | None = None
    encoding: str | None = None
    source: str | None = None

    def render(self) -> str:
        text = self.template
        if self.goal_text is not None:
            goal = self.goal_text
            if self.encoding is not None:
                goal = encode(goal, self.encoding)
            text = text.replace("{goal}", goal)
        if self.persona_text is not None:
            text = text.replace("{persona}", self.persona_text)
        if self.encoding is not None:
            text = text.replace("{encoding}", ENCODINGS[self.encoding])
        return text[:1].upper() + text[1:]


@dataclass(frozen=True, slots=True)
class AttackLibrary:
    """Every vector, in file order, and the files read."""

    vectors: tuple[Vector, ...]
    files: tuple[str, ...]

    def by_category(self) -> dict[str, list[Vector]]:
        out: dict[str, list[Vector]] = {c: [] for c in CATEGORIES}
        for v in self.vectors:
            out[v.category].append(v)
        return out

    def counts(self) -> dict[tuple[str, str], int]:
        """Vectors by (category, kind)."""
        out = {(c, k): 0 for c in CATEGORIES for k in KINDS}
        for v in self.vectors:
            out[(v.category, v.kind)] += 1
        return out


_VALIDATOR: Draft202012Validator | None = None


def _validator() -> Draft202012Validator:
    global _VALIDATOR
    if _VALIDATOR is None:
        schema = json.loads(bundled_path("attacks.schema.json").read_text(encoding="utf-8"))
        Draft202012Validator.check_schema(schema)
        _VALIDATOR = Draft202012Validator(schema)
    return _VALIDATOR


def bundled_files() -> list[Path]:
    return sorted(bundled_path("attacks").glob("*.yaml"))


def is_attack_file(path: Path) -> bool:
    """Whether a YAML file is an attack library file (a top-level ``attacks`` list), for
    ``validate``, which takes rule files and attack files alike."""
    try:
        doc = load_yaml(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return False
    return isinstance(doc, dict) and "attacks" in doc and "rules" not in doc


def _where(doc: Any, path: Iterable[Any]) -> str | None:
    parts = list(path)
    if len(parts) >= 2 and parts[0] == "attacks" and isinstance(parts[1], int):
        try:
            vid = doc["attacks"][parts[1]].get("id")
        except (AttributeError, IndexError, KeyError, TypeError):
            return f"#{parts[1] + 1}"
        return str(vid) if vid is not None else f"#{parts[1] + 1}"
    return None


def load_library(paths: Iterable[Path] = (), *, builtin: bool = True) -> AttackLibrary:
    """The bundled library (unless ``builtin`` is False) and the files under ``paths``.

    Raises:
        RuleSetError: every problem found, each naming its file and vector id.
    """
    errors: list[RuleError] = []
    files = (bundled_files() if builtin else []) + expand_paths(paths, errors, "attack")
    docs: list[tuple[str, dict[str, Any]]] = []
    goals: dict[str, str] = {}
    personas: dict[str, str] = {}
    seen_files: set[Path] = set()
    for path in files:
        real = path.resolve()
        if real in seen_files:
            continue
        seen_files.add(real)
        name = str(path)
        read = read_yaml_file(path, name, errors)
        if read is None:
            continue
        doc = read[0]
        problems = sorted(_validator().iter_errors(doc), key=lambda e: list(e.absolute_path))
        if problems:
            for err in problems:
                where = ".".join(str(p) for p in err.absolute_path)
                message = f"{where}: {err.message}" if where else err.message
                errors.append(RuleError(name, _where(doc, err.absolute_path), message))
            continue
        for table, into in (("goals", goals), ("personas", personas)):
            for key, text in doc.get(table, {}).items():
                if key in into and into[key] != text:
                    errors.append(RuleError(name, None, f"{table}.{key} is defined twice"))
                into[key] = text
        docs.append((name, doc))

    vectors: list[Vector] = []
    ids: dict[str, str] = {}
    for name, doc in docs:
        for raw in doc["attacks"]:
            vid = raw["id"]
            problem = _problem(raw, goals, personas)
            if vid in ids:
                problem = f"id is also used in {ids[vid]}"
            if problem is not None:
                errors.append(RuleError(name, vid, problem))
                continue
            ids[vid] = name
            vectors.append(
                Vector(
                    id=vid,
                    category=raw["category"],
                    technique=raw["technique"],
                    rank=raw["rank"],
                    kind=raw["kind"],
                    template=raw["template"],
                    file=name,
                    goal=raw.get("goal"),
                    goal_text=goals.get(raw["goal"]) if "goal" in raw else None,
                    persona=raw.get("persona"),
                    persona_text=personas.get(raw["persona"]) if "persona" in raw else None,
                    encoding=raw.get("encoding"),
                    source=raw.get("source"),
                )
            )
    if not errors and not vectors:
        errors.append(
            RuleError(
                ", ".join(map(str, paths)) or "probe.attacks", None, "the attack library is empty"
            )
        )
    if errors:
        raise RuleSetError(errors)
    return AttackLibrary(tuple(vectors), tuple(name for name, _ in docs))


def _problem(
    raw: Mapping[str, Any], goals: Mapping[str, str], personas: Mapping[str, str]
) -> str | None:
    """What the schema cannot say: slots used and filled agree, references exist."""
    template = raw["template"]
    for slot in SLOTS:
        used = "{" + slot + "}" in template
        given = slot in raw
        if used and not given:
            return f"the template uses {{{slot}}} but the vector sets no {slot}"
        if given and not used and not (slot == "encoding" and "{goal}" in template):
            return f"{slot} is set but the template has no {{{slot}}} slot"
    if "goal" in raw and raw["goal"] not in goals:
        return f"goal {raw['goal']!r} is not defined in any file's goals"
    if "persona" in raw and raw["persona"] not in personas:
        return f"persona {raw['persona']!r} is not defined in any file's personas"
    if raw["kind"] == "robustness" and "goal" not in raw:
        return "a robustness vector needs a goal (what the service should decline)"
    return None
