"""An RE2 prefilter of a Python ``re`` pattern: an expression that matches every text in which
the pattern matches, even when the pattern is searched in a window of it.

A check that searches many ``re`` patterns in each text (the worded signals of
:mod:`.attack_signals`) puts their prefilters into one RE2 set: one linear pass over the text
says which patterns cannot match anywhere, and only the others are searched with ``re``. So
the prefilter may match where the pattern does not (that costs a search), never the other way
round (that would lose a finding). :func:`superset` writes it from the pattern's parse tree (the
stdlib parser, as :func:`sidecar.scan.translate` does for user patterns, which it reads with
``regex``'s ASCII semantics instead) so that this holds by construction:

* every assertion is dropped (``\\b``, ``\\B``, ``$``, ``\\Z``, look-behinds, negative
  look-aheads): dropping a condition only adds matches. They must be dropped, not
  translated: RE2 has no look-arounds and reads ``\\b`` as ASCII, and a search that stops at
  ``endpos`` counts a word cut there as ended, so ``\\b`` and ``$`` can hold in a window
  where they fail in the whole text. A look-ahead that closes the pattern is read as
  characters (what it looks at lies inside the window the match ends in). One ``\\b`` is
  kept: before what always opens with an ASCII letter, digit or ``_`` (``\\bfoo``,
  ``\\b(?:if|when)``). ``re`` reads the character before it in the whole text, not the
  window, and where ``re`` sees no word character there, RE2, which knows fewer, sees none
  either; so a word's letters inside another ("egal" in "illegal") open no candidate;
* ``^`` stays (a search that starts at ``pos`` matches it only where the whole text does);
* a repeat of more than one is made unbounded (``.{0,200}`` becomes ``.*``): a superset, and
  it keeps RE2's automaton small;
* classes are written out: ``\\s`` exactly as ``re`` reads it (every character
  ``str.isspace`` accepts), ``\\w`` and ``\\d`` exact on ASCII and taking every other
  character (their negations alike), so that a class and its complement are both supersets.

A pattern with flags other than DOTALL, MULTILINE and VERBOSE (IGNORECASE, ASCII, inline flag
groups that set them), or with a construct this does not know, has no prefilter (None): its check must then
search it in every text. RE2 reads UTF-8, which a ``str`` with a lone surrogate has no
encoding for: such a text cannot be prefiltered either.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from typing import Any

from ..scan import RE2

_re2: Any = RE2  # None where google-re2 is not installed (see sidecar.scan)

__all__ = ["Prefilter", "searcher", "superset"]

_PARSER: Any = importlib.import_module("re._parser")  # the stdlib re's own parser
_C: Any = importlib.import_module("re._constants")
_FLAGS = re.DOTALL | re.MULTILINE | re.VERBOSE | re.UNICODE
"""The flags whose meaning :func:`superset` keeps (VERBOSE only changes the parse)."""
_LAST = 0x10FFFF
_NOTHING = "[^\\x00-\\x{10ffff}]"


class _Unknown(Exception):
    pass


def _char(c: int) -> str:
    if 0xD800 <= c <= 0xDFFF:
        raise _Unknown("a surrogate, which UTF-8 has no encoding for")
    return chr(c) if chr(c).isascii() and chr(c).isalnum() else f"\\x{{{c:x}}}"


def _span(lo: int, hi: int) -> str:
    return _char(lo) if lo == hi else f"{_char(lo)}-{_char(hi)}"


def _runs(codes: list[int]) -> list[tuple[int, int]]:
    runs: list[tuple[int, int]] = []
    for c in codes:
        if runs and runs[-1][1] == c - 1:
            runs[-1] = (runs[-1][0], c)
        else:
            runs.append((c, c))
    return runs


def _complement(runs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out, at = [], 0
    for lo, hi in runs:
        if lo > at:
            out.append((at, lo - 1))
        at = hi + 1
    if at <= _LAST:
        out.append((at, _LAST))
    return out


def _items(runs: list[tuple[int, int]]) -> str:
    """A class's items; the surrogates left out (no UTF-8 text holds one)."""
    parts = []
    for lo, hi in runs:
        if lo <= 0xDFFF and hi >= 0xD800:
            parts += [_span(lo, 0xD7FF)] if lo < 0xD800 else []
            parts += [_span(0xE000, hi)] if hi > 0xDFFF else []
        else:
            parts.append(_span(lo, hi))
    return "".join(parts)


_SPACE = _runs([c for c in range(0x3001) if chr(c).isspace()])  # re's \s: str.isspace
_ASCII_WORD = _runs([c for c in range(128) if chr(c).isalnum() or c == ord("_")])
_ASCII_DIGIT = [(ord("0"), ord("9"))]
_NON_ASCII = [(0x80, _LAST)]


def _ascii(runs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    return [(lo, min(hi, 0x7F)) for lo, hi in runs if lo < 0x80]


def _categories() -> dict[Any, tuple[str, str]]:
    """Each class escape as (a superset of what ``re`` matches, a subset of it): a class
    takes the superset, a negated class the subset, so both are supersets."""
    not_word, not_digit = _ascii(_complement(_ASCII_WORD)), _ascii(_complement(_ASCII_DIGIT))
    space, not_space = _items(_SPACE), _items(_complement(_SPACE))
    return {
        _C.CATEGORY_SPACE: (space, space),
        _C.CATEGORY_NOT_SPACE: (not_space, not_space),
        _C.CATEGORY_WORD: (_items(_ASCII_WORD + _NON_ASCII), _items(_ASCII_WORD)),
        _C.CATEGORY_NOT_WORD: (_items(not_word + _NON_ASCII), _items(not_word)),
        _C.CATEGORY_DIGIT: (_items(_ASCII_DIGIT + _NON_ASCII), _items(_ASCII_DIGIT)),
        _C.CATEGORY_NOT_DIGIT: (_items(not_digit + _NON_ASCII), _items(not_digit)),
    }


_CATEGORIES = _categories()


def superset(pattern: re.Pattern[str]) -> str | None:
    """An RE2 expression (see the module) that matches, somewhere in a text, wherever
    ``pattern.search(text, pos, endpos)`` finds a match for any window; None where the
    pattern has none (its flags or constructs)."""
    if not isinstance(pattern.pattern, str):
        return None
    try:
        tree = _PARSER.parse(pattern.pattern, pattern.flags)
        flags = tree.state.flags
        if flags & ~_FLAGS:
            return None
        return _emit(list(tree), flags, closes=True)
    except (_Unknown, re.error, RecursionError):
        return None


def _emit(items: list[tuple[Any, Any]], flags: int, *, closes: bool, bounded: bool = False) -> str:
    """``closes``: nothing of the pattern follows these items; ``bounded``: a word boundary
    comes before them (kept where they open with an ASCII word character, and handed to the
    alternatives of a group that opens them, each of which may)."""
    out: list[str] = []
    for i, (op, av) in enumerate(items):
        if op is _C.AT and av is _C.AT_BOUNDARY:
            bounded = True
            continue
        if bounded and op not in _ZERO_WIDTH:
            if _opens_ascii_word(items[i:]):
                out.append("\\b")
            elif op is _C.BRANCH or op is _C.SUBPATTERN:
                out.append(_one(op, av, flags, closes=closes and i == len(items) - 1, bounded=True))
                bounded = False
                continue
            bounded = False
        out.append(_one(op, av, flags, closes=closes and i == len(items) - 1))
    return "".join(out)


_ZERO_WIDTH = (_C.AT, _C.ASSERT, _C.ASSERT_NOT)


def _opens_ascii_word(items: list[tuple[Any, Any]]) -> bool:
    """Whether the first character every match of ``items`` consumes is an ASCII letter,
    digit or ``_`` (assertions before it consume none); False where that cannot be told."""
    for op, av in items:
        if op in _ZERO_WIDTH:
            continue
        if op is _C.LITERAL:
            return _ascii_word(av, av)
        if op is _C.IN:
            return bool(av) and all(
                (o is _C.LITERAL and _ascii_word(a, a)) or (o is _C.RANGE and _ascii_word(*a))
                for o, a in av
            )
        if op is _C.BRANCH:
            return all(_opens_ascii_word(list(alt)) for alt in av[1])
        if op is _C.SUBPATTERN or op is _C.ATOMIC_GROUP:
            sub = av[3] if op is _C.SUBPATTERN else av
            return _opens_ascii_word(list(sub))
        if op in (_C.MAX_REPEAT, _C.MIN_REPEAT, _C.POSSESSIVE_REPEAT):
            lo, _hi, sub = av
            return lo >= 1 and _opens_ascii_word(list(sub))
        return False
    return False


def _ascii_word(lo: int, hi: int) -> bool:
    """Whether every character from ``lo`` to ``hi`` is an ASCII letter, digit or ``_``."""
    return any(a <= lo and hi <= b for a, b in _ASCII_WORD)


def _one(op: Any, av: Any, flags: int, *, closes: bool, bounded: bool = False) -> str:
    """One item; ``bounded`` (a group after a word boundary): see :func:`_emit`."""
    if op is _C.LITERAL:
        return _char(av)
    if op is _C.NOT_LITERAL:
        return f"[^{_char(av)}]"
    if op is _C.ANY:
        return "(?s:.)" if flags & re.DOTALL else "[^\\n]"
    if op is _C.IN:
        return _class(av)
    if op is _C.BRANCH:
        alternatives = (_emit(list(alt), flags, closes=closes, bounded=bounded) for alt in av[1])
        return "(?:" + "|".join(alternatives) + ")"
    if op is _C.SUBPATTERN:
        _group, add, remove, sub = av
        inner = (flags | add) & ~remove
        if inner & ~_FLAGS:
            raise _Unknown("inline flags")
        return "(?:" + _emit(list(sub), inner, closes=closes, bounded=bounded) + ")"
    if op is _C.ATOMIC_GROUP:
        return "(?:" + _emit(list(av), flags, closes=closes) + ")"
    if op in (_C.MAX_REPEAT, _C.MIN_REPEAT, _C.POSSESSIVE_REPEAT):
        lo, hi, sub = av
        body = "(?:" + _emit(list(sub), flags, closes=False) + ")"
        if hi <= 1:
            return f"{body}{{{lo},{hi}}}"
        return f"{body}{{{min(lo, 1000)},}}"
    if op is _C.AT:
        if av is _C.AT_BEGINNING:
            return "(?m:^)" if flags & re.MULTILINE else "\\A"
        if av is _C.AT_BEGINNING_STRING:
            return "\\A"
        return ""  # boundaries and ends: dropped (see the module)
    if op is _C.ASSERT:
        direction, sub = av
        if direction == 1 and closes:  # a closing look-ahead, read as characters
            return "(?:" + _emit(list(sub), flags, closes=True) + ")"
        return ""
    if op is _C.ASSERT_NOT:
        return ""
    if op is _C.GROUPREF:
        return "(?s:.*)"
    if op is _C.GROUPREF_EXISTS:
        _group, yes, no = av
        no_expr = _emit(list(no), flags, closes=closes) if no else ""
        return "(?:" + _emit(list(yes), flags, closes=closes) + "|" + no_expr + ")"
    raise _Unknown(f"construct {op}")


def _class(items: list[tuple[Any, Any]]) -> str:
    negated = bool(items) and items[0][0] is _C.NEGATE
    parts = []
    for op, av in items[1:] if negated else items:
        if op is _C.LITERAL:
            parts.append(_char(av))
        elif op is _C.RANGE:
            parts.append(_items([av]))
        elif op is _C.CATEGORY and av in _CATEGORIES:
            parts.append(_CATEGORIES[av][1 if negated else 0])
        else:
            raise _Unknown(f"class item {op}")
    if not "".join(parts):  # surrogates only, which no UTF-8 text holds
        return "(?s:.)" if negated else _NOTHING
    return ("[^" if negated else "[") + "".join(parts) + "]"


class Prefilter:
    """One RE2 set of the patterns' :func:`superset`: which of them may match a text, in one
    linear pass. Without RE2, for a pattern with no superset, and in a text RE2 cannot read,
    every pattern may."""

    def __init__(
        self, patterns: dict[str, re.Pattern[str]], *, given: dict[str, str] | None = None
    ) -> None:
        """``given``: RE2 expressions to use instead of the patterns' :func:`superset`, each
        one the caller knows to match wherever its pattern does (RE2 reads ``\\b`` as ASCII,
        which a superset can keep around a word whose first and last letters are ASCII)."""
        self.everything = frozenset(patterns)
        self.names: list[str] = []
        """The patterns in the set, by their index there."""
        self._match: Any = None
        if _re2 is not None:
            options = _re2.Options()
            options.log_errors = False
            options.max_mem = 64 << 20
            found = _re2.Set.SearchSet(options)
            for name, pattern in patterns.items():
                expr = given[name] if given and name in given else superset(pattern)
                if expr is not None and _compiles(expr, options):
                    found.Add(expr)
                    self.names.append(name)
            if self.names and _compiles_set(found):
                # the compiled set's own Match, past the wrapper's type test and encode call
                # (as sidecar.scan does); both take bytes
                inner = getattr(getattr(found, "_set", None), "Match", None)
                self._match = inner or found.Match
            else:
                self.names = []
        self.always = self.everything.difference(self.names)
        """The patterns that may match every text: those with no superset in the set."""

    def __call__(self, text: str) -> frozenset[str]:
        """The names of the patterns that may match somewhere in ``text``."""
        if self._match is None:
            return self.everything
        try:
            data = text.encode()
        except UnicodeEncodeError:  # a lone surrogate: RE2 reads UTF-8
            return self.everything
        hits = self._match(data)
        if not hits:
            return self.always
        names = self.names
        return self.always.union([names[i] for i in hits])


def _compiles(expr: str, options: Any) -> bool:
    try:
        _re2.compile(expr, options)
    except Exception:  # google-re2 raises its own error type; any refusal is a no
        return False
    return True


def _compiles_set(found: Any) -> bool:
    try:
        found.Compile()
    except Exception:  # too large for its memory budget: no set, every pattern may match
        return False
    return True


def searcher(pattern: re.Pattern[str], given: str | None = None) -> Callable[[str], bool]:
    """A function that says whether ``pattern`` occurs in a text, in one RE2 pass where RE2 is
    installed (``re`` tries an alternation of words at every position of a text, RE2 reads it
    once). The pattern must read the same in both: compiled with ``re.ASCII`` and no other flag
    (RE2's ``\\b`` is ASCII's, and the other flags would be lost), no ``\\s`` (RE2's leaves
    out the vertical tab), no look-around, or ``given``: an RE2 expression the caller knows to
    occur exactly where the pattern does (a look-ahead matched instead). One RE2 cannot
    compile, or a text it cannot read (a lone surrogate), is searched with ``re``. Its ``re2``
    attribute says which it is."""
    if pattern.flags != re.ASCII or "\\s" in pattern.pattern:
        raise ValueError(
            "searcher: the pattern must have re.ASCII alone and no \\s, as RE2 reads it"
        )
    match = None
    if _re2 is not None:
        options = _re2.Options()
        options.log_errors = False
        options.max_mem = 16 << 20
        found = _re2.Set.SearchSet(options)
        expr = pattern.pattern if given is None else given
        if _compiles(expr, options):
            found.Add(expr)
            if _compiles_set(found):
                match = getattr(getattr(found, "_set", None), "Match", None) or found.Match

    def search(text: str) -> bool:
        if match is not None:
            try:
                return bool(match(text.encode()))
            except UnicodeEncodeError:
                pass
        return pattern.search(text) is not None

    search.re2 = match is not None  # type: ignore[attr-defined]
    return search
