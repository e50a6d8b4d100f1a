"""What the attack readers share: the record of a signal found, and the words an order to an AI
reader is made of.

:mod:`.attack_signals` reads a prompt and :mod:`.attack_documents` a document; both name what
they find with :class:`Signal` and build their orders from :data:`ORDER_VERBS` and
:data:`READ_WORDS`. They live here so that the document reader needs nothing of the prompt
reader, which reads the documents a prompt pastes with it.
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["ORDER_VERBS", "READ_WORDS", "Signal"]


class Signal(NamedTuple):
    technique: str
    sure: bool
    """An attack on its own; otherwise a cue the model must agree with."""
    cue: str
    """Which rule fired (a fixed name, never event text): also a feature of the model."""


READ_WORDS = (
    "reading",
    "processing",
    "parsing",
    "summarizing",
    "summarising",
    "crawling",
    "scraping",
    "indexing",
    "analyzing",
    "analysing",
    "reviewing",
    "evaluating",
    "screening",
    "reads",
    "processes",
    "parses",
    "summarizes",
    "summarises",
    "reviews",
    "evaluates",
    "screens",
    "analyzes",
    "analyses",
    "visiting",
    "browsing",
    "accessing",
    "visits",
    "browses",
    "accesses",
)
"""What an AI does to the text it is addressed in ("... reading this", "... that reviews
this"); the document patterns (:mod:`.attack_documents`) read more."""
ORDER_VERBS = (
    "ignore",
    "disregard",
    "reply",
    "respond",
    "answer",
    "say",
    "tell",
    "write",
    "output",
    "print",
    "include",
    "recommend",
    "rate",
    "rank",
    "give",
    "mention",
    "append",
    "add",
    "do not",
    "don't",
    "never",
    "always",
    "classify",
    "treat",
    "consider",
    "score",
    "describe",
    "summari[sz]e",
    "forget",
    "remember",
    "make sure",
    "ensure",
    "state",
    "insert",
    "report",
    "call",
    "refer",
    "return",
    "label",
    "mark",
    "approve",
    "select",
)
"""Orders given to an AI reader, at the start of a clause; the document patterns read more."""
