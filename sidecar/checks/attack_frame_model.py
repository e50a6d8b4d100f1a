"""The learned reader of requests given as a language task's text.

:mod:`.attack_frames` reads a language task around a request ("Translate into German: how do I
...?") from the layouts its rules know; users lay such prompts out in more ways than rules
enumerate (a template's ``INPUT_TEXT=`` field, "zh→en:", a line of the task after the text in
their own words). This linear model reads the same prompt as a whole: the words and word pairs
of what :func:`~.attack_model.model_text` keeps, with the first words of its first line and the
last words of its last line marked as such (a task opens or closes a prompt). It is an
:class:`~.attack_model.AttackModel` of its own weights (the same file format, the same scorers):
``alone`` is the probability from which a prompt reads as such a request. It reads prompts of
at most :data:`READ_MAX` characters that name a language task somewhere (:func:`names_a_task`):
a few lines of chat ("hey\nquick q\nhow long do i boil eggs") have the layout of a task over a
request: of 400 ordinary chat prompts written blind, the model reads 30 as framed, with this
condition 6 (the check hands the judge 31 and 7 of them, one more by the rules).

``tools/train_frames.py`` fits it on the project's written framed prompts (requests in frames
against texts that are not requests in the same frames and ordinary prompts in a task's words)
and the benign prompt sources of ``DATA.md``, and writes ``sidecar/data/frame_model.json.gz``.
Like the rules, it finds the shape only: whether the request is harmful is the harm model's
to read (:mod:`.attack_harm_model`), and where it does not flag it, the judge's
(:class:`~.attack.AttackAttempt` with ``uncertain: true``).
"""

from __future__ import annotations

import re
from functools import cache
from typing import Final

from .attack_frames import TASK_WORD
from .attack_model import AttackModel
from .prefilter import searcher

__all__ = [
    "EDGE_WORDS",
    "FRAME_MODEL_FILE",
    "READ_MAX",
    "default_frame_model",
    "frame_cues",
    "names_a_task",
]

FRAME_MODEL_FILE = "frame_model.json.gz"
EDGE_WORDS = 6
"""How many words of the first line, and of the last, are marked."""
READ_MAX = 1000
"""The longest prompt the model reads (in characters of the folded text): a task and a request
given as its text fit in far less (the longest written one is under 700); a longer prompt is a
document to work on, as in the rules (:data:`~.attack_frames.PAYLOAD_MAX`)."""


_TASK: Final = re.compile(
    rf"{TASK_WORD.pattern}|[→⇒]|->"
    r"|\b(?:classif|extract|detect|identif|formal|informal|polite|passive|keyword|entit|json"
    r"|yaml|xml|csv|markdown|table|edit|polish|fix|correct|improv|tighten|clean[ \t]up|tag"
    r"|label|transcri|convert|transform|render|output|format|task|instruction|input|text"
    r"|sentence|shorter|simpler|clearer)\w*",
    re.ASCII,
)
"""A language task named anywhere: its verb or noun ("translate", "proofread", "make it
polite", "sentiment"), a language, an arrow ("zh→en"), a template's field ("TASK=",
"input"). Word boundaries are ASCII's, as RE2 reads them, so that both engines give the same
answer: a task's word right after a letter of another script counts ("请translate这段话")."""


_FLOW: Final = r"flow(?=[ \t]+of\b)"
_SEARCH: Final = searcher(_TASK, _TASK.pattern.replace(_FLOW, r"flow[ \t]+of\b"))
""":data:`_TASK` in one RE2 pass where RE2 is installed, "flow of" matched rather than looked
ahead at (RE2 has no look-arounds). A prompt of 1,000 characters costs about 45 us searched
with ``re``, 1 so."""


def names_a_task(folded: str) -> bool:
    """Whether a folded prompt names a language task anywhere (:data:`_TASK`): the model reads
    no other (a chat message of a few lines asks nothing of a task, and reads like one)."""
    return _SEARCH(folded)


def frame_cues(read: str) -> list[str]:
    """The features of ``read`` (a folded prompt's :func:`~.attack_model.model_text`) that are
    not its words: ``f<US><word>`` for each of the first :data:`EDGE_WORDS` words of its first
    line, ``l<US><word>`` for each of the last of its last line, and ``one<US>line`` for a
    prompt of one line. US is the unit separator (U+001F), which ``str.split`` takes for a
    blank: no word or pair of words a user types can be named like one of these (the batch
    scorers would count it twice, one text's scorer once)."""
    text = read.strip()
    if not text:
        return []
    # the first and last lines read from the ends: no pass over a long prompt's middle
    first = text[: text.find("\n")] if "\n" in text else text
    last = text[text.rfind("\n") + 1 :]
    cues = [f"f\x1f{w}" for w in first.split(maxsplit=EDGE_WORDS)[:EDGE_WORDS]]
    cues += [f"l\x1f{w}" for w in last.rsplit(maxsplit=EDGE_WORDS)[-EDGE_WORDS:]]
    if first is text:
        cues.append("one\x1fline")
    return list(dict.fromkeys(cues))


@cache
def default_frame_model() -> AttackModel:
    """The frame model shipped with llm-sidecar, loaded once per process."""
    return AttackModel.from_package(FRAME_MODEL_FILE)
