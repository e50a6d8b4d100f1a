"""The learned reader of requests given as a language task's text.

:mod:`.attack_frames` reads a language task around a request ("Translate into German: how do I
...?") from the layouts its rules know; users lay such prompts out in more ways than rules
enumerate (a template's ``INPUT_TEXT=`` field, "zh→en:", a line of the task after the text in
their own words). This linear model reads the same prompt as a whole: the words and word pairs
of what :func:`~.attack_model.model_text` keeps, with the first words of its first line and the
last words of its last line marked as such (a task opens or closes a prompt). It is an
:class:`~.attack_model.AttackModel` of its own weights (the same file format, the same scorers):
``alone`` is the probability from which a prompt reads as such a request. It reads prompts of
at most :data:`READ_MAX` characters.

``tools/train_frames.py`` fits it on the project's written framed prompts (requests in frames
against texts that are not requests in the same frames and ordinary prompts in a task's words)
and the benign prompt sources of ``DATA.md``, and writes ``sidecar/data/frame_model.json.gz``.
Like the rules, it finds the shape only: whether the request is harmful is the judge's to read
(:class:`~.attack.AttackAttempt` with ``uncertain: true``).
"""

from __future__ import annotations

from functools import cache
from importlib import resources

from .attack_model import AttackModel

__all__ = ["EDGE_WORDS", "FRAME_MODEL_FILE", "READ_MAX", "default_frame_model", "frame_cues"]

FRAME_MODEL_FILE = "frame_model.json.gz"
EDGE_WORDS = 6
"""How many words of the first line, and of the last, are marked."""
READ_MAX = 1000
"""The longest prompt the model reads (in characters): a task and a request given as its text
fit in far less (the longest written one is under 700); a longer prompt is a document to work
on, as in the rules (:data:`~.attack_frames.PAYLOAD_MAX`)."""


def frame_cues(read: str) -> list[str]:
    """The features of ``read`` (a folded prompt's :func:`~.attack_model.model_text`) that are
    not its words: ``f:<word>`` for each of the first :data:`EDGE_WORDS` words of its first
    line, ``l:<word>`` for each of the last of its last line, and ``one_line`` for a prompt of
    one line."""
    text = read.strip()
    if not text:
        return []
    # the first and last lines read from the ends: no pass over a long prompt's middle
    first = text[: text.find("\n")] if "\n" in text else text
    last = text[text.rfind("\n") + 1 :]
    cues = [f"f:{w}" for w in first.split(maxsplit=EDGE_WORDS)[:EDGE_WORDS]]
    cues += [f"l:{w}" for w in last.rsplit(maxsplit=EDGE_WORDS)[-EDGE_WORDS:]]
    if first is text:
        cues.append("one_line")
    return list(dict.fromkeys(cues))


@cache
def default_frame_model() -> AttackModel:
    """The frame model shipped with llm-sidecar, loaded once per process."""
    ref = resources.files("sidecar.data").joinpath(FRAME_MODEL_FILE)
    with resources.as_file(ref) as path:
        return AttackModel.load(path)
