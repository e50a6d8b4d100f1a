"""The scan plan: one multi-pattern pass per field instead of one pass per rule.

A check may declare the literals and patterns it needs found in its field
(:meth:`~sidecar.checks.base.Check.scan_patterns`). The plan puts every declared pattern of
every rule reading the same field (cut at the same length) into one RE2 set, scans the field
once per event, and hands each rule the indices of its own patterns that occur; the rule then
runs only its validator (:meth:`~sidecar.checks.base.Check.from_scan`), and usually nothing at
all, because most texts hold no candidate.

The contract that keeps the fast path equal to the plain one: a declared pattern must match
(somewhere) every ASCII text on which the check's plain call could find something, so a
pattern that does not occur proves there is nothing to find. Patterns are read with ASCII
semantics and are only ever applied to ASCII texts; a non-ASCII text takes the plain path
(the check's own ``__call__``), as does every text when the engine is not installed.

Engine: RE2's set matching (``google-re2``), linear-time by construction; measured against
Hyperscan in docs/performance.md. User regexes reach the set through :func:`translate`, which rewrites
a pattern into an RE2 prefilter (look-arounds and back-references widened to "anything"); a
pattern it cannot rewrite stays with the ``regex`` module and its timeout, and ``validate``
says so.
"""

from __future__ import annotations

import functools
import importlib
import re
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import regex

_re2: Any
try:  # the engine is optional: without it every rule takes its plain path
    import re2 as _re2  # type: ignore[no-redef]
except ImportError:  # pragma: no cover - exercised where google-re2 has no wheel
    _re2 = None
RE2: Any = _re2
"""The ``re2`` module (google-re2), or None where it is not installed: the one optional import
of it, for every module that uses RE2 when it can."""

__all__ = [
    "ENGINE",
    "NOTHING",
    "RE2",
    "FieldScan",
    "ScanPattern",
    "ScanPlan",
    "Translation",
    "compile_exact",
    "engine_available",
    "literal",
    "translate",
]

ENGINE = "re2" if _re2 is not None else None
"""The multi-pattern engine in use, or None (every rule on its plain path)."""

_RE2_MAX_REPEAT = 1000


def engine_available() -> bool:
    return _re2 is not None


@dataclass(frozen=True, slots=True)
class ScanPattern:
    """One entry of a check's scan needs: an RE2 expression read with ASCII semantics."""

    expr: str


NOTHING = ScanPattern("[^\\x00-\\x{10ffff}]")
"""A pattern that occurs in no text (for a need that cannot be met by ASCII text)."""


def literal(text: str, *, caseless: bool = False) -> ScanPattern:
    """A pattern that occurs wherever ``text`` does (ASCII case-insensitively if asked)."""
    return ScanPattern(_class_of_text(text, caseless))


def _class_of_text(text: str, caseless: bool) -> str:
    out = []
    for ch in text:
        if caseless and ch.isascii() and ch.isalpha():
            out.append(f"[{ch.lower()}{ch.upper()}]")
        else:
            out.append(_esc(ord(ch)))
    return "".join(out)


def _esc(cp: int) -> str:
    ch = chr(cp)
    if ch.isascii() and ch.isalnum():
        return ch
    return f"\\x{{{cp:x}}}"


# ---------------------------------------------------------------------- regex -> RE2 prefilter


class _Untranslatable(Exception):
    pass


_ASCII = [chr(c) for c in range(128)]
_CATEGORIES = {
    "CATEGORY_DIGIT": r"\d",
    "CATEGORY_NOT_DIGIT": r"\D",
    "CATEGORY_SPACE": r"\s",
    "CATEGORY_NOT_SPACE": r"\S",
    "CATEGORY_WORD": r"\w",
    "CATEGORY_NOT_WORD": r"\W",
}
"""Classes as the ``regex`` module (which runs user patterns) reads them: its ``\\s`` is
Unicode White_Space, which leaves out U+001C..U+001F that ``re`` counts as space."""


@functools.lru_cache(maxsize=4096)
def _matching(expr: str, caseless: bool) -> frozenset[str]:
    """The ASCII characters a one-character ``regex`` expression matches."""
    compiled = regex.compile(expr, regex.IGNORECASE if caseless else 0)
    return frozenset(c for c in _ASCII if compiled.fullmatch(c) is not None)


_FLAG_BITS = {"IGNORECASE": re.IGNORECASE, "DOTALL": re.DOTALL, "MULTILINE": re.MULTILINE}
_SAFE_FLAGS = {"ASCII", "VERBOSE", *_FLAG_BITS}
"""Flags that mean the same to ``regex`` and ``re`` on ASCII text. FULLCASE and WORD do not
(full case folding, Unicode word boundaries): such rules stay with ``regex``."""


@dataclass(frozen=True, slots=True)
class Translation:
    """A user pattern rewritten for RE2, or why it could not be."""

    expr: str | None
    """Matches every ASCII text the pattern matches (None: not rewritten)."""
    exact: bool
    """True when ``expr`` matches exactly where the pattern does on ASCII text (nothing was
    widened), so RE2 can also locate the match."""
    note: str


def translate(pattern: str, flags: Sequence[str] = ()) -> Translation:
    """An RE2 expression that matches every ASCII text ``pattern`` matches (``regex`` module
    syntax, search semantics), or None and why not.

    The pattern is parsed by Python's own ``re`` parser (the syntax ``regex`` shares with it;
    anything only ``regex`` knows is refused), then written out with explicit ASCII character
    classes, so the result never depends on how RE2 reads ``\\s``, ``$`` or case folding.
    """
    if not pattern.isascii():
        return Translation(None, False, "non-ASCII characters")
    unsafe = sorted(set(flags) - _SAFE_FLAGS)
    if unsafe:
        return Translation(None, False, f"flag {unsafe[0]}")
    bits = re.VERBOSE if "VERBOSE" in flags else 0
    for f in flags:
        bits |= _FLAG_BITS.get(f, 0)
    try:
        sre_parse: Any = importlib.import_module("re._parser")  # the stdlib re's parser

        with warnings.catch_warnings():
            warnings.simplefilter("error")  # e.g. "possible nested set": regex reads it otherwise
            tree = sre_parse.parse(pattern, bits)
    except (re.error, Warning, ValueError, RecursionError) as exc:
        return Translation(None, False, f"syntax the rewrite does not know ({exc})")
    state = tree.state.flags
    if state & ~(re.IGNORECASE | re.DOTALL | re.MULTILINE | re.VERBOSE | re.UNICODE | re.ASCII):
        return Translation(None, False, "inline flags the rewrite does not know")
    widened: list[str] = []
    try:
        expr = _emit(list(tree), state, widened)
    except _Untranslatable as exc:
        return Translation(None, False, str(exc))
    except RecursionError:
        return Translation(None, False, "nested too deeply")
    if _re2 is not None:
        try:
            _re2.compile(expr, _options())
        except Exception:
            return Translation(None, False, "RE2 rejects the rewritten pattern")
    if widened:
        return Translation(expr, False, f"prefilter ({', '.join(sorted(set(widened)))} widened)")
    return Translation(expr, True, "exact")


def _emit(items: list[Any], flags: int, widened: list[str]) -> str:
    return "".join(_emit_one(op, av, flags, widened) for op, av in items)


def _emit_one(op: Any, av: Any, flags: int, widened: list[str]) -> str:
    name = str(op)
    caseless = bool(flags & re.IGNORECASE)
    if name == "LITERAL":
        return _set_class(_matching(regex.escape(chr(av)), caseless))
    if name == "NOT_LITERAL":
        return _set_class(set(_ASCII) - _matching(regex.escape(chr(av)), caseless))
    if name == "ANY":
        return "(?s:.)" if flags & re.DOTALL else "[^\\n]"
    if name == "IN":
        return _set_class(_in_chars(av, caseless))
    if name == "BRANCH":
        return "(?:" + "|".join(_emit(list(alt), flags, widened) for alt in av[1]) + ")"
    if name == "SUBPATTERN":
        _group, add, dele, sub = av
        return "(?:" + _emit(list(sub), (flags | add) & ~dele, widened) + ")"
    if name == "ATOMIC_GROUP":
        widened.append("atomic group")
        return "(?:" + _emit(list(av), flags, widened) + ")"  # atomicity only removes matches
    if name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
        lo, hi, sub = av
        body = "(?:" + _emit(list(sub), flags, widened) + ")"
        lazy = "?" if name == "MIN_REPEAT" else ""
        if name == "POSSESSIVE_REPEAT":
            widened.append("possessive repeat")
        if hi > 1 and sub.getwidth()[0] == 0:
            # A loop whose body can match nothing: re stops such a loop where RE2 goes on,
            # so the same text can match with a different span (never a different yes/no).
            widened.append("empty-width loop")
        if lo > _RE2_MAX_REPEAT or (hi != _MAXREPEAT and hi > _RE2_MAX_REPEAT):
            widened.append("repeat count")  # widening a bound keeps every match
            return f"{body}{{{min(lo, _RE2_MAX_REPEAT)},}}{lazy}"
        if hi == _MAXREPEAT:
            return f"{body}{{{lo},}}{lazy}"
        return f"{body}{{{lo},{hi}}}{lazy}"
    if name == "AT":
        where = str(av)
        if where == "AT_BEGINNING":
            return "(?m:^)" if flags & re.MULTILINE else "\\A"
        if where == "AT_BEGINNING_STRING":
            return "\\A"
        if where == "AT_END":
            if not flags & re.MULTILINE:
                widened.append("$")  # RE2 has no "end, or before a final newline"
            return "(?m:$)"
        if where == "AT_END_STRING":
            return "\\z"
        if where == "AT_BOUNDARY":
            return "\\b"
        if where == "AT_NON_BOUNDARY":
            return "\\B"
        raise _Untranslatable(f"anchor {where}")
    if name in ("ASSERT", "ASSERT_NOT"):
        widened.append("look-around")
        return ""  # a look-around only removes matches: leave it to the validator
    if name == "GROUPREF":
        widened.append("back-reference")
        return "(?s:.*)"
    if name == "GROUPREF_EXISTS":
        widened.append("conditional")
        _group, yes, no = av
        yes_expr = _emit(list(yes), flags, widened)
        return "(?:" + yes_expr + "|" + (_emit(list(no), flags, widened) if no else "") + ")"
    raise _Untranslatable(f"construct {name}")


def _maxrepeat() -> int:
    return int(importlib.import_module("re._constants").MAXREPEAT)


_MAXREPEAT = _maxrepeat()


def _in_chars(items: list[tuple[Any, Any]], caseless: bool) -> set[str]:
    negate = False
    chars: set[str] = set()
    for op, av in items:
        name = str(op)
        if name == "NEGATE":
            negate = True
        elif name == "LITERAL":
            chars |= _matching(regex.escape(chr(av)), caseless)
        elif name == "RANGE":
            lo, hi = av
            chars |= _matching(f"[{regex.escape(chr(lo))}-{regex.escape(chr(hi))}]", caseless)
        elif name == "CATEGORY":
            expr = _CATEGORIES.get(str(av))
            if expr is None:
                raise _Untranslatable(f"class {av}")
            chars |= _matching(expr, caseless)
        else:
            raise _Untranslatable(f"class item {name}")
    return set(_ASCII) - chars if negate else chars


def _set_class(chars: set[str] | frozenset[str]) -> str:
    if not chars:
        return NOTHING.expr  # matches nothing, as the original does on ASCII text
    codes = sorted(ord(c) for c in chars)
    parts = []
    start = prev = codes[0]
    for cp in [*codes[1:], -2]:
        if cp == prev + 1:
            prev = cp
            continue
        parts.append(_esc(start) if start == prev else f"{_esc(start)}-{_esc(prev)}")
        start = prev = cp
    return "[" + "".join(parts) + "]"


# ----------------------------------------------------------------------------------- the plan


def _options() -> Any:
    assert _re2 is not None
    options = _re2.Options()
    options.log_errors = False
    options.max_mem = 64 << 20
    return options


def compile_exact(expr: str) -> Any:
    """An RE2 pattern object for an exact translation (to locate a match), or None.

    It searches bytes: the scan path only sees ASCII text, whose byte offsets are its
    character offsets, and the wrapper's search of a ``str`` costs about three times as
    much (it encodes the text and maps every offset back to characters)."""
    if _re2 is None:
        return None
    return _re2.compile(expr.encode("utf-8"), _options())


class FieldScan:
    """One field's set: every declared pattern of the rules reading it."""

    def __init__(self, field: str, max_chars: int, exprs: Sequence[str]) -> None:
        assert _re2 is not None
        self.field = field
        self.max_chars = max_chars
        self.size = len(exprs)
        self._set = _re2.Set.SearchSet(_options())
        # A pattern several rules declare (the refusal rules' phrases, say) enters the set once.
        entry: dict[str, int] = {}
        self._ids: list[list[int]] = []
        """The ids of the patterns behind each entry of the set."""
        for i, expr in enumerate(exprs):
            at = entry.get(expr)
            if at is None:
                at = entry[expr] = len(self._ids)
                self._set.Add(expr)
                self._ids.append([])
            self._ids[at].append(i)
        self._shared = len(entry) < len(exprs)
        self._set.Compile()
        # The compiled set's own Match, past the wrapper's type test and encode call (0.9 µs
        # of 2.8 per 1 KB text); google-re2 keeps it as ``_set``. Both take bytes.
        inner = getattr(getattr(self._set, "_set", None), "Match", None)
        self._match: Callable[[bytes], list[int] | None] = inner or self._set.Match

    def scan(self, text: str) -> list[int]:
        """The ids of the patterns that occur in ``text`` (ASCII), in any order."""
        hits = self._match(text.encode())
        if not hits:
            return []
        if self._shared:
            ids = self._ids
            return [i for at in hits for i in ids[at]]
        return hits


@functools.lru_cache(maxsize=8)
def _field_scan(field: str, max_chars: int, exprs: tuple[str, ...]) -> FieldScan:
    """A :class:`FieldScan`, shared by the plans with the same patterns (a rule file reloaded
    unchanged, pipelines of the same rules): it never changes once compiled, RE2 matches a
    compiled set from any thread, and compiling it takes some 70 ms."""
    return FieldScan(field, max_chars, exprs)


@dataclass(slots=True)
class _Member:
    scan: int
    offset: int
    size: int


class _Declares(Protocol):
    def scan_patterns(self) -> Sequence[ScanPattern]: ...


class ScannedRule(Protocol):
    """What the plan reads of a rule (a :class:`sidecar.rules.CompiledRule`), so that this
    module needs nothing of the rules module, which builds on it."""

    @property
    def id(self) -> str: ...
    @property
    def field(self) -> str: ...
    @property
    def max_chars(self) -> int: ...
    @property
    def check(self) -> _Declares: ...


class ScanPlan:
    """Which rules scan which field, and where their patterns sit in that field's set."""

    def __init__(self, rules: Sequence[ScannedRule], *, enabled: bool = True) -> None:
        self.scans: list[FieldScan] = []
        self.member: list[_Member | None] = [None] * len(rules)
        self.notes: list[str] = []
        """Human-readable remarks for ``validate`` (rules left on their plain path)."""
        if _re2 is None or not enabled:
            return
        groups: dict[tuple[str, int], list[tuple[int, list[str]]]] = {}
        for i, rule in enumerate(rules):
            try:
                patterns = rule.check.scan_patterns()
            except Exception as exc:  # a check that cannot declare stays on its plain path
                self.notes.append(f"{rule.id}: no scan ({exc})")
                continue
            if patterns:
                groups.setdefault((rule.field, rule.max_chars), []).append(
                    (i, [p.expr for p in patterns])
                )
        for (field, max_chars), members in groups.items():
            exprs: list[str] = []
            for i, own in members:
                self.member[i] = _Member(len(self.scans), len(exprs), len(own))
                exprs.extend(own)
            try:
                self.scans.append(_field_scan(field, max_chars, tuple(exprs)))
            except Exception as exc:  # too large for the engine's memory budget, say
                for i, _ in members:
                    self.member[i] = None
                self.notes.append(f"field {field}: no shared scan ({exc})")

    def __bool__(self) -> bool:
        return bool(self.scans)

    def report(self, rules: Sequence[ScannedRule]) -> list[str]:
        """What ``validate`` says about the scan: the engine, and every rule whose pattern
        the engine cannot take (it stays with the ``regex`` module and its timeout)."""
        if _re2 is None:
            return ["scan: google-re2 is not installed; every rule walks its field itself"]
        lines = [
            f"scan: {sum(s.size for s in self.scans)} patterns in {len(self.scans)} shared "
            f"scan(s) ({ENGINE})"
        ]
        for rule, member in zip(rules, self.member, strict=True):
            note = getattr(rule.check, "scan_note", None)
            if note is None or note == "exact":
                continue
            if member is None or note.startswith("prefilter"):
                timeout = getattr(rule.check, "timeout_s", 0.0) * 1000
                how = (
                    "scan prefilters, the regex module confirms"
                    if note.startswith("prefilter")
                    else "stays with the regex module"
                )
                lines.append(f"rule {rule.id}: {how} (timeout {timeout:g} ms): {note}")
        lines.extend(self.notes)
        return lines
