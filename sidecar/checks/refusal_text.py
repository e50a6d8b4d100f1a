"""Text folding and normalisation for the refusal phrase matcher, and the opening sentences
it reads: phrases and event text are matched in the one form :func:`normalise` gives them.

Other detectors fold text the same way (:mod:`sidecar.checks.attack`), so that one form
serves them all.
"""

from __future__ import annotations

import re
import sys
import unicodedata

__all__ = ["OPENING_MAX_CHARS", "fold", "normalise", "opening", "rstrip_drawn", "visible", "wide"]

OPENING_MAX_CHARS = 1000
"""In ``opening`` scope at most this many leading characters are read, sentences or not."""

_REPLACE: dict[str, str] = {
    **dict.fromkeys("\u2019\u2018\u201b\u02bc\u2032\u00b4\uff07", "'"),
    **dict.fromkeys("\u201c\u201d\u201e\u201f\u2033\u00ab\u00bb\u300c\u300d", '"'),
    "\u2800": " ",  # the blank braille cell: a space
}
_IGNORABLE = (
    "\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
    "\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufff8"
)
"""Unicode's default-ignorable code points (zero-width characters, joiners, bidirectional
marks, invisible operators, variation selectors, fillers; beyond the Basic Multilingual Plane,
:data:`_ASTRAL_IGNORABLE`): drawn as nothing, they are dropped, so that a word with them
between its letters reads as the word."""
# A regex with a callback is about ten times faster than str.translate with a dict; a class
# with ranges beyond the BMP is three times slower than one without, hence two.
_REPLACEABLE = re.compile("[" + "".join(_REPLACE) + _IGNORABLE + "]")
_ASTRAL_IGNORABLE = re.compile("[\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e0fff]+")
"""The default-ignorable code points beyond the BMP: format controls of shorthand and of
musical notation, and the tags (which :mod:`.attack_signals` reads in the original text)."""


_ASTRAL_LEADS = (b"\xf3\xa0", b"\xf0\x9b\xb2", b"\xf0\x9d\x85")
"""How the UTF-8 of each of :data:`_ASTRAL_IGNORABLE`'s ranges starts (with some neighbours):
a search for them in the encoded text costs a third of the class's."""


def _may_hide(text: str) -> bool:
    """Whether a text :func:`wide` admits may hold one of :data:`_ASTRAL_IGNORABLE` (an emoji
    is beyond the BMP too, and nearly every wide text holds no other)."""
    data = text.encode("utf-8", "surrogatepass")
    return any(lead in data for lead in _ASTRAL_LEADS)


def _replace(m: re.Match[str]) -> str:
    return _REPLACE.get(m.group(), "")


_NARROWED = re.compile("[\u3000\uff01-\uff5e]")
"""The ideographic space and the full-width forms of ASCII, which NFKC makes the ASCII
character each stands for. Chinese and Japanese text is full of them (the full-width comma,
colon, question mark and brackets), and one is enough for NFKC to rebuild the whole text:
about 60 us a KB, against 1 for a text NFKC leaves as it is."""
_NARROW = {c: unicodedata.normalize("NFKC", c) for c in map(chr, (0x3000, *range(0xFF01, 0xFF5F)))}


def _nfkc(text: str) -> str:
    """``unicodedata.normalize("NFKC", text)``, with each of :data:`_NARROWED` made what NFKC
    makes it first, by ``str.replace``: a character replaced by its own NFKC form leaves the
    text's NFKC the same, and what is left is often already normal."""
    if unicodedata.is_normalized("NFKC", text):
        return text
    for char in set(_NARROWED.findall(text)):
        text = text.replace(char, _NARROW[char])
    return unicodedata.normalize("NFKC", text)


def wide(text: str) -> bool:
    """Whether ``text`` may hold a character beyond the BMP, at no cost: CPython stores such a
    text in four bytes a character (PEP 393). A short text of two bytes a character can pass
    too, which costs a needless search, never a miss."""
    return sys.getsizeof(text) >= 4 * len(text)


_INVISIBLE = re.compile("[\u2800" + _IGNORABLE + "]")


def visible(text: str) -> str:
    """The text as it is drawn, case and all: without its default-ignorable code points, the
    blank braille cell a space (what :func:`fold` does besides quotes, NFKC and case)."""
    if text.isascii():
        return text
    if _INVISIBLE.search(text) is not None:
        text = _INVISIBLE.sub(lambda m: " " if m.group() == "\u2800" else "", text)
    return _ASTRAL_IGNORABLE.sub("", text) if wide(text) and _may_hide(text) else text


def rstrip_drawn(text: str) -> str:
    """``text`` less the blanks and the characters drawn as nothing it ends with, the rest as
    it is. A text that ends in a visible character (nearly all) is not read past its end."""
    text = text.rstrip()
    end = len(text) - 1
    if end >= 0 and (
        _INVISIBLE.match(text, end) is not None or _ASTRAL_IGNORABLE.match(text, end) is not None
    ):
        return visible(text).rstrip()
    return text


# Sentence ends: "." "!" "?" (and closing quotes or brackets) before whitespace or the end;
# an ellipsis; a line break; CJK full stops, which need no space after them.
_TERMINATOR = re.compile("[.!?\n\u2026\u3002\uff01\uff1f\uff0e]")
_CLOSERS = frozenset(".!?\"')]\u2026\u201d\u2019")
_NEED_SPACE = frozenset(".!?\u2026\uff0e")


def fold(text: str) -> str:
    """Quotes to ASCII, characters drawn as nothing dropped, NFKC, casefold: everything but
    whitespace collapsing."""
    if text.isascii():  # the common case: nothing to translate or compose
        return text.lower()
    text = _REPLACEABLE.sub(_replace, text)
    if wide(text) and _may_hide(text):
        text = _ASTRAL_IGNORABLE.sub("", text)
    return _nfkc(text).casefold()


def normalise(text: str) -> str:
    """The form both phrases and event text are matched in."""
    return " ".join(fold(text).split())


def opening(text: str, sentences: int) -> str:
    """The first ``sentences`` sentences of ``text``, normalised.

    Sentences are found in the raw text, so only the opening pays for normalisation.
    """
    text = text[:OPENING_MAX_CHARS]
    length = len(text)
    pos = length - len(text.lstrip())
    seen = 0
    while (m := _TERMINATOR.search(text, pos)) is not None:
        end = m.end()
        if m.group() in _NEED_SPACE:
            while end < length and text[end] in _CLOSERS:
                end += 1
            if end < length and not text[end].isspace():
                pos = end  # "3.5", "e.g.x", "www.example.com": not a sentence end
                continue
        seen += 1
        if seen == sentences:
            return normalise(text[:end])
        while end < length and text[end].isspace():
            end += 1
        pos = end
    return normalise(text)
