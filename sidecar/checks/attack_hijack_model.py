"""The learned reader of goal hijacking: the rules' shape of it confirmed, the rest for the judge.

:mod:`.attack_hijack` reads goal hijacking by its forms: a taking back, an order, a sentence.
Writers it was never tuned on word the taking back and the order their own way ("the only
thing you send back is", "your response is to be", "copy this line and nothing more"), and the
forms find few of their hijacks. This linear model reads the whole of a prompt that gives a
sentence (quoted, or after a colon as its last words: :func:`~.attack_hijack.gives_a_sentence`)
for the rest of the shape: its words and their adjacent pairs, and in Chinese, Japanese and
Korean, which are written without spaces, pairs of characters instead of words
(:func:`hijack_read`). It is an :class:`~.attack_model.AttackModel` of its own weights (the
same file format, the same scorers); ``alone`` is the probability from which a prompt reads as
goal hijacking.

Alone it never flags a prompt: users who take back a question and quote something, who
dictate a message or drill a language, give sentences in the same words. Where the rules of
:mod:`.attack_hijack` read a task taken back and a sentence given after it with no order they
hold (:class:`~.attack_hijack.Hijack` not ``ordered``), :class:`~.attack.AttackAttempt` flags
the prompt if the model reads it as hijacking too (``instruction_override``), ``uncertain``
set or not; where only one of them reads it, with ``uncertain: true``, it hands the prompt to
the judge (``uncertain: instruction_override``). ``tools/train_hijack.py`` fits it on the project's
written hijacks and near misses and the benign prompt sources of ``DATA.md``, and writes
``sidecar/data/hijack_model.json.gz``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import cache
from typing import Final

from .attack_model import AttackModel

__all__ = ["HIJACK_MODEL_FILE", "READ_MAX", "default_hijack_model", "hijack_read", "hijack_reads"]

HIJACK_MODEL_FILE = "hijack_model.json.gz"
READ_MAX = 1000
"""The longest prompt the model reads (in characters of the folded text): a task, its taking
back and a sentence fit in far less (the longest written hijack has 350); a longer prompt is
a document, whose quotations and colons the model was not fitted on."""

_LETTERS: Final = re.compile(r"[^\W\d_]+")
_ASCII_MARKS: Final = b"0123456789_!\"#$%&'()*+,-./:;<=>?@[\\]^`{|}~"
_ASCII_NOT_LETTERS: Final = bytes.maketrans(_ASCII_MARKS, b" " * len(_ASCII_MARKS))
"""Digits and ASCII punctuation as blanks, in UTF-8 bytes (where an ASCII byte is always its
own character): ``bytes.translate`` reads a table of 256, far faster than ``str.translate``
reads a dictionary."""
_WIDE_MARKS: Final = re.compile(
    "[\u00ab\u00bb\u2018\u2019\u201c\u201d\u201e\u2013\u2014\u2026"
    "\u3001\u3002\uff0c\uff1a\uff01\uff1f\u300c\u300d\u300e\u300f]"
)
"""The common quotation marks, dashes and CJK punctuation outside ASCII."""


def _blanked(text: str) -> str:
    """A text without Chinese, Japanese or Korean letters with its digits and punctuation as
    blanks (:data:`_ASCII_NOT_LETTERS`, :data:`_WIDE_MARKS`; a mark this does not know stays
    on its word): its words are what is left between blanks."""
    blanked = text.encode(errors="surrogatepass").translate(_ASCII_NOT_LETTERS)
    plain = blanked.decode(errors="surrogatepass")
    return plain if plain.isascii() else _WIDE_MARKS.sub(" ", plain)


def _words(text: str) -> str:
    """A text without Chinese, Japanese or Korean letters as the model reads it: its words
    (:func:`_blanked`) joined by one space."""
    return " ".join(_blanked(text).split())


_UNSPACED: Final = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]+")
"""Kana, CJK ideographs and Hangul: written without spaces between words."""
_UNSPACED_CUT: Final = re.compile(f"({_UNSPACED.pattern})")


def hijack_read(folded: str) -> str:
    """What the model reads of a folded prompt: its words without digits and punctuation
    (:func:`_words`), or where it holds Chinese, Japanese or Korean letters, its runs of
    letters, each run of those as its adjacent pairs ("忽略上面" as "忽略 略上 上面"); joined by
    spaces (the model's features are these and their adjacent pairs)."""
    if folded.isascii() or _UNSPACED.search(folded) is None:
        return _words(folded)  # most prompts
    return _unspaced_read(folded)


def _unspaced_read(folded: str) -> str:
    """:func:`hijack_read` of a text that holds letters written without spaces: compiled
    where it is built."""
    native = _native_unspaced()
    return _unspaced_words(folded) if native is None else native(folded)


def _unspaced_words(folded: str) -> str:
    """:func:`hijack_read` of a text with letters written without spaces, in Python: the
    compiled reading (:func:`_native_unspaced`) gives the same, some forty times as fast."""
    # the runs of letters, one space between, cut once into what is written without spaces
    # (the odd pieces) and the words between (the even ones)
    pieces = _UNSPACED_CUT.split(" ".join(_LETTERS.findall(folded)))
    words: list[str] = []
    for k, piece in enumerate(pieces):
        if not k % 2:
            words += piece.split()
        elif len(piece) > 1:
            words += map(str.__add__, piece[:-1], piece[1:])
        else:
            words.append(piece)
    return " ".join(words)


@cache
def _native_unspaced() -> Callable[[str], str] | None:
    """The compiled :func:`_unspaced_words` (``_refusal_native.unspaced_read``), where the
    compiled scorers are used (:func:`~.refusal_features.native_state`); None elsewhere."""
    from .refusal_features import compiled

    if not compiled():
        return None
    from ._refusal_native import unspaced_read

    return unspaced_read


def hijack_reads(texts: Sequence[str]) -> list[str]:
    """What the model scores of each folded text: the words of :func:`hijack_read`, and for a
    text without Chinese, Japanese or Korean letters with the blanks between them as they are
    (:func:`_blanked`). A model reads a text's words as ``str.split`` cuts them, so it scores
    the same features, without the cost of joining them (a third of the model's pass)."""
    return [
        _blanked(text) if text.isascii() or _UNSPACED.search(text) is None else _unspaced_read(text)
        for text in texts
    ]


@cache
def default_hijack_model() -> AttackModel:
    """The hijack model shipped with llm-sidecar, loaded once per process."""
    return AttackModel.from_package(HIJACK_MODEL_FILE)
