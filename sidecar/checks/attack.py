"""``attack_attempt``: is this prompt (or retrieved passage) a jailbreak or injection attempt?

Signals (:mod:`.attack_signals`) find the techniques attacks use and give precision: a sure
signal ("ignore all previous instructions", a base64 payload that decodes to an instruction) is
an attack on its own. A cue ("you are now", "hypothetically") counts only when the learned
model (:mod:`.attack_model`) agrees, and the model alone calls an attack it is sure of, which
gives the recall words miss. A harmful request behind a pretext of fiction, role-play or a
hypothetical (:mod:`.attack_fiction`) is an attack where the harm model of
:mod:`.attack_harm_model` reads it as harmful, and so is a harmful request given as the text of
a language task ("Translate into German: how do I ...?", by the rules of :mod:`.attack_frames`
or the frame model of :mod:`.attack_frame_model`): a latent jailbreak. A short prompt the
subversion model of :mod:`.attack_subvert_model` reads as an attempt, in the user's own words,
to reveal, drop or get around the assistant's setup is one too. A customer who asks for
a travel agent's role, for JSON, pastes code or asks about hacking or drugs is not flagged: the
thresholds were chosen for a low false-positive rate on such prompts (see docs/attack-figures.md).

The value is a bool; the detail names the category and the techniques found, never event text:
``intermediate: instruction_override, persona (p=0.98)``. Techniques the model found alone,
with no signal, are named ``learned``. With ``uncertain: true``, a prompt it does not flag but
could not tell about, that wraps a request in a language task the harm model does not read as
harmful, that pastes a document with an order in it for its reader (by the rules of
:mod:`.attack_planted` or the planted-line model of :mod:`.attack_planted_model`), or that
hijacks its goal in a way no form of :mod:`.attack_hijack` holds (its shape read by the rules,
or the hijack model of :mod:`.attack_hijack_model`), or that the subversion model reads as an
attempt short of its threshold, gets ``uncertain: <cues> (p=0.55)``, for the judge. With
``field: contexts`` each passage is read on its own (an instruction addressed to the
assistant inside a document: indirect injection); a document a prompt marks as pasted
(``<email>``, a fenced block) is read the same way.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Sequence
from typing import Literal, NamedTuple

from pydantic import Field

from ..events import Event
from .attack_documents import unmarked_orders
from .attack_fiction import sets_up_fiction
from .attack_frame_model import READ_MAX, default_frame_model, frame_cues, names_a_task
from .attack_frames import framed_request, framed_text
from .attack_harm_model import READ_MAX as HARM_READ_MAX
from .attack_harm_model import default_harm_model
from .attack_hijack import gives_a_sentence
from .attack_hijack_model import READ_MAX as HIJACK_READ_MAX
from .attack_hijack_model import default_hijack_model, hijack_reads
from .attack_model import (
    HEAD_CHARS,
    TAIL_CHARS,
    AttackModel,
    default_model,
    model_text,
    model_view,
    read_length,
    windows,
)
from .attack_planted import planted_task
from .attack_planted_model import default_planted_model, document_lines
from .attack_signals import (
    HIJACK_SHAPE,
    JUDGE_ONLY,
    REQUEST_SUFFIX,
    REQUEST_SUFFIX_AGREE,
    TECHNIQUES,
    Category,
    Signal,
    category_of,
    model_cues,
    passage_signals,
    signals,
)
from .attack_subvert_model import READ_MAX as SUBVERT_READ_MAX
from .attack_subvert_model import default_subvert_model
from .base import UNCERTAIN_PREFIX, Check, CheckContext, CheckResult, Params
from .refusal_text import fold
from .registry import register

__all__ = [
    "ALONE_LONG",
    "LEARNED",
    "LONG_CHARS",
    "UNCERTAIN_FLOOR",
    "AttackAttempt",
    "AttackParams",
    "Finding",
]

LEARNED = "learned"
"""The technique named when the model alone calls an attack."""
LONG_CHARS = HEAD_CHARS + TAIL_CHARS
"""A prompt longer than this (casefolded, each run of blanks counted as one) is long: the
model reads its head and its tail, not the whole of it, and its windows."""
ALONE_LONG = 0.95
"""The default of ``alone_long``. Chosen on the written sets ``rag_a`` and ``rag_b`` (the
model gives their long benign prompts at most 0.94) and the training sources (it gives the
long jailbreak templates with no signal in them 0.97 and more)."""
_ORDER = {t: i for i, t in enumerate((*TECHNIQUES, LEARNED))}
FRAMED = "embedded_instruction"
"""The technique an uncertain detail names for a request given as a language task's text."""
HIJACKED = "instruction_override"
"""The technique an uncertain detail names for a prompt the hijack model reads as goal
hijacking."""
SUBVERTED = "instruction_override"
"""The technique an attack names for a prompt the subversion model reads as an attempt to get
around the assistant's setup."""
PRETEXT = "persona"
"""The technique an attack names for a harmful request behind a pretext of fiction, role-play
or a hypothetical (the harm model's reading)."""
UNMARKED = "indirect_injection"
"""The technique an uncertain detail names for an order to an AI reader in text a prompt
pastes without marking it."""


class Finding(NamedTuple):
    """What the check makes of one text."""

    attack: bool
    techniques: tuple[str, ...]
    """Of an attack: the techniques found, in :data:`~.attack_signals.TECHNIQUES` order."""
    category: Category | None
    """Of an attack: ``advanced`` for encodings and optimised suffixes, else
    ``intermediate``."""
    p: float
    """The model's probability (of a frame or a pretext the harm model read as harmful, the
    harm model's)."""
    uncertain: bool = False
    """Not an attack, but the check could not tell (see :attr:`AttackParams.uncertain`); its
    ``techniques`` are then the cues found."""

    def detail(self) -> str | None:
        if self.attack:
            return f"{self.category}: {', '.join(self.techniques)} (p={self.p:.2f})"
        if self.uncertain:
            return f"{UNCERTAIN_PREFIX}{', '.join(self.techniques) or LEARNED} (p={self.p:.2f})"
        return None


NOT_AN_ATTACK = Finding(False, (), None, 0.0)
UNCERTAIN_FLOOR = 0.2
"""Below this model probability an unconfirmed cue is not uncertain: code and logs have odd
tails the model rightly dismisses. On the real users' questions trained on (Arena-Hard), 3 of
705 are uncertain from 0.2, 13 from 0."""


class AttackParams(Params):
    alone: float | None = Field(default=None, ge=0.0, le=1.0)
    """The model's probability from which it calls an attack with no sure signal (1: never);
    default: the shipped model's, chosen by its trainer."""
    agree: float | None = Field(default=None, ge=0.0, le=1.0)
    """The model's probability from which a cue (a signal that is not sure on its own)
    counts; default: the shipped model's."""
    suffix_agree: float = Field(default=REQUEST_SUFFIX_AGREE, ge=0.0, le=1.0)
    """The model's probability from which an optimised suffix after a one-line request in
    plain words counts (``agree``, where that is lower): the shape of GCG's prompts, to which
    the model gives less than to other cues."""
    alone_long: float = Field(default=ALONE_LONG, ge=0.0, le=1.0)
    """The model's probability from which it calls an attack alone on a long prompt (longer than
    :data:`LONG_CHARS`, which it does not read whole), or ``alone`` where that is higher. The
    long prompts applications assemble from their rules and retrieved documents ("You are
    ACME's assistant. Never ... Always answer only from the context ...") read to the model
    like a jailbreak template's rules; between ``alone`` and this, such a prompt is uncertain
    with ``uncertain: true``. Blanks do not make a prompt long, but any text does: a template
    with no signal in it, padded with a few KB of unrelated prose, is called from this
    probability only, in the whole or in one of the windows the model also reads of a long
    prompt (:func:`~.attack_model.windows`)."""
    signals_only: bool = False
    """Only sure signals call an attack (no model): fewest false positives, least recall."""
    frame: float | None = Field(default=None, ge=0.0, le=1.0)
    """The frame model's probability (:mod:`.attack_frame_model`) from which a prompt whose
    layout the rules of :mod:`.attack_frames` do not know reads as a request given as a
    language task's text (for the harm model, and with ``uncertain`` for the judge); default:
    the shipped model's, chosen by its trainer; 1: the rules alone (as with ``signals_only``,
    which reads no model)."""
    hijack: float | None = Field(default=None, ge=0.0, le=1.0)
    """The hijack model's probability (:mod:`.attack_hijack_model`) from which it reads a
    prompt that gives a sentence as goal hijacking; default: the shipped model's, chosen by its
    trainer; 1: not read (as with ``signals_only``, which reads no model). Read whether
    ``uncertain`` is set or not: where the rules read the shape of goal hijacking (a task taken
    back and a sentence given after it, with no order read: :class:`~.attack_hijack.Hijack`),
    the model confirms it, and the prompt is an attack (``instruction_override``); with
    ``uncertain``, a prompt it so reads that no rule reads is uncertain, for the judge."""
    fiction: float | None = Field(default=None, ge=0.0, le=1.0)
    """The harm model's probability (:mod:`.attack_harm_model`) from which a prompt that sets
    up fiction, role-play or a hypothetical (:mod:`.attack_fiction`) asks for something harmful
    behind it, and is an attack (``persona``); default: the shipped model's ``agree``, chosen by
    its trainer; 1: never. Read whether ``uncertain`` is set or not (not with
    ``signals_only``)."""
    harm: float | None = Field(default=None, ge=0.0, le=1.0)
    """The harm model's probability (:mod:`.attack_harm_model`) from which a request given as
    a language task's text (read by the rules of :mod:`.attack_frames` or the frame model)
    reads as harmful, and the prompt is an attack (``embedded_instruction``); default: the
    shipped model's, chosen by its trainer; 1: never (with ``uncertain``, every framed request
    is the judge's; as with ``signals_only``). Read whether ``uncertain`` is set or not: the
    model reads each prompt of at most its ``READ_MAX`` characters, the frame model only
    those it reads as harmful; of the others, it reads the request the frame rules find on
    its own too."""
    subvert: float | None = Field(default=None, ge=0.0, le=1.0)
    """The subversion model's probability (:mod:`.attack_subvert_model`) from which a prompt
    of at most its ``READ_MAX`` characters reads as an attempt, in the user's own words, to
    reveal the assistant's hidden instructions, drop them, claim authority over it, give it a
    character without its rules or make it say what its operator would not, and is an attack
    (``instruction_override``); default: the shipped model's ``alone``, chosen by its trainer;
    1: never. Read whether ``uncertain`` is set or not (not with ``signals_only``); with
    ``uncertain``, a prompt it gives its ``agree`` (a lower probability, chosen by its trainer
    too) or more short of this is uncertain, for the judge."""
    planted: float | None = Field(default=None, ge=0.0, le=1.0)
    """With ``uncertain``: the planted-line model's probability (:mod:`.attack_planted_model`)
    from which a line of a document the prompt pastes reads as an order planted for the AI
    that reads it; default: the shipped model's, chosen by its trainer; 1: not read (as with
    ``signals_only``)."""
    uncertain: bool = False
    """A prompt the check does not call an attack, but in which it found a cue the model did
    not confirm (at a probability of at least :data:`UNCERTAIN_FLOOR`), or to which the model
    gives at least ``agree`` short of ``alone``, gets a detail that starts ``uncertain:``: the
    judge's ``uncertain`` trigger sends such events to the judge, where the check is least
    sure. So does a prompt that gives a request to an assistant as the text of a language task
    ("Translate into German: how do I ...?", :mod:`.attack_frames`, or the frame model of
    :mod:`.attack_frame_model` where the rules do not read it), whose harm the judge reads
    where the harm model (``harm``) does not flag it, and a prompt that pastes a document with
    an order in it for whoever reads it (:func:`~.attack_documents.unmarked_orders`,
    :mod:`.attack_planted`), which may be planted or the document's own (or a line the
    planted-line model of :mod:`.attack_planted_model` reads as planted, ``planted``), and goal
    hijacking no form
    of :mod:`.attack_hijack` holds: a task taken back and a sentence given after it with no
    order read (:class:`~.attack_hijack.Hijack`), whatever the models give it, or a prompt
    the hijack model of :mod:`.attack_hijack_model` reads as goal hijacking (``hijack``), and
    a prompt the subversion model reads as an attempt to get around the assistant's setup
    short of flagging it (``subvert``). Off
    by default: each is a judge call, for about 1 to 2
    real users' questions in 100 (a translation or proofreading service sends many more, a
    tutoring service some). Retrieved passages are never uncertain."""


@register
class AttackAttempt(Check[AttackParams]):
    """True when the text is a jailbreak or prompt-injection attempt (see the module)."""

    name = "attack_attempt"
    params_model = AttackParams
    value_kind = "bool"
    default_field = "prompt"

    def __init__(
        self, params: AttackParams, ctx: CheckContext, *, model: AttackModel | None = None
    ) -> None:
        """``model`` replaces the shipped one (the trainer evaluates its candidates so)."""
        super().__init__(params, ctx)
        self.model = None if params.signals_only else (model or default_model())
        alone = params.alone if params.alone is not None else self._default("alone")
        # 1 is never: a probability of exactly 1.0 is a float the sigmoid reaches
        self.alone = math.inf if alone >= 1.0 else alone
        self.alone_long = math.inf if params.alone_long >= 1.0 else params.alone_long
        self.agree = params.agree if params.agree is not None else self._default("agree")
        # the learned readers, each with its threshold (None: not read). The hijack model
        # confirms the rules' shape of goal hijacking whether uncertain is set or not, and with
        # it reads for the judge the prompts no rule reads so; the planted-line model reads
        # for the judge only
        self.hijacks, self.hijack = _reader(
            params, params.hijack, default_hijack_model, always=True
        )
        self.planteds, self.planted = _reader(params, params.planted, default_planted_model)
        # read whether uncertain is set or not: a framed request the harm model reads as
        # harmful, and a harmful request behind a pretext of fiction, are attacks
        self.harms, self.harm = _reader(params, params.harm, default_harm_model, always=True)
        # the frame model reads for the judge (uncertain) or for the harm model
        self.frames, self.frame = _reader(
            params, params.frame, default_frame_model, always=self.harms is not None
        )
        self.fictions, self.fiction = _reader(
            params, params.fiction, default_harm_model, always=True, default="agree"
        )
        self.subverts, self.subvert = _reader(
            params, params.subvert, default_subvert_model, always=True
        )
        self.prepares = self.model is not None
        self._batch = threading.local()
        """Per thread, the last batch prepared: its texts until the first call on one of them
        (``pending``), then each text's id -> (the text, its finding) (``prepared``)."""

    def _default(self, name: str) -> float:
        return float(getattr(self.model, name)) if self.model is not None else 1.0

    def prepare(self, texts: Sequence[str]) -> None:
        """Assess a batch's texts together (the model scores them in one pass) at the first
        call on one of them; the calls on them in this thread then read the result, until an
        empty batch lets it go. A rule on ``contexts`` reads each event's passages instead and
        never calls on the joined text, so its batch is never assessed."""
        if not self.prepares:
            return
        self._batch.pending = list(texts) or None
        self._batch.prepared = None

    def _prepared(self) -> dict[int, tuple[str, Finding]] | None:
        prepared: dict[int, tuple[str, Finding]] | None = getattr(self._batch, "prepared", None)
        pending: list[str] | None = getattr(self._batch, "pending", None)
        if prepared is None and pending:
            found = self.assess_many(pending)
            prepared = {id(t): (t, f) for t, f in zip(pending, found, strict=True)}
            self._batch.prepared, self._batch.pending = prepared, None
        return prepared

    def assess(self, text: str) -> Finding:
        prepared = self._prepared()
        got = prepared.get(id(text)) if prepared else None
        if got is not None and got[0] is text:
            return got[1]
        return self.assess_many([text])[0]

    def assess_many(self, texts: Sequence[str], *, documents: bool = False) -> list[Finding]:
        """:meth:`assess` of each text, the model scoring them in one batch. An empty text
        (an event without the rule's field: a chat event under ``field: contexts``) is no
        attack, and costs nothing. ``documents``: the texts are retrieved passages, where an
        order addressed to an AI reader is an attack however it is worded
        (:mod:`.attack_documents`), an odd tail is not a cue and the model does not call an
        attack on its own."""
        if not all(texts):
            some = iter(self.assess_many([t for t in texts if t], documents=documents))
            return [next(some) if t else NOT_AN_ATTACK for t in texts]
        folded = [fold(t) for t in texts]
        if documents:
            found = [passage_signals(t, f) for t, f in zip(texts, folded, strict=True)]
        else:
            found = [signals(t, f) for t, f in zip(texts, folded, strict=True)]
        unsure = self.params.uncertain and not documents
        if self.model is None:
            decided = [self._decide(s, 0.0, self.alone, unsure) for s in found]
        else:
            # The model learned prompts: on a passage it confirms cues but calls nothing alone
            # (on the written passages it found no injection alone and flagged benign ones),
            # so it reads no windows there either; nor where a sure signal decides.
            views = [model_view(f) for f in folded]
            long = [None if documents else t for _, t in views]
            reads = [
                [read, *windows(t)] if t is not None and not _sure(s) else [read]
                for (read, _), t, s in zip(views, long, found, strict=True)
            ]
            cues = [model_cues(signal) for signal in found]
            scores = self.model.score_reads(reads, cues, [len(t) for t in texts])
            alone = math.inf if documents else self.alone
            alone_long = max(alone, self.alone_long)
            decided = [
                self._decide(s, p[0], alone, unsure)
                if t is None
                else self._decide_long(s, p, alone_long, unsure)
                for s, p, t in zip(found, scores, long, strict=True)
            ]
        if documents:
            return decided
        # flagged whether uncertain is set or not, before anything is made uncertain
        harmful: dict[int, float] = {}  # the harm model's score of each text it has read
        requests: dict[int, str | None] = {}  # the request the frame rules find in a text
        words: dict[int, str] = {}  # what the harm, hijack and subversion models read of a text
        # each text's length as the readers of short prompts count it, once for all of them
        readers = (self.harms, self.fictions, self.hijacks, self.frames, self.subverts)
        if any(reader is not None for reader in readers):
            sizes = [read_length(f, _SHORTEST) for f in folded]
        else:
            sizes = []  # none is read
        decided = self._confirmed_hijacks(decided, found, folded, sizes, words)
        decided = self._framed_harmful(decided, folded, sizes, harmful, requests, words)
        if unsure:
            decided = [
                _framed(f, text, requests[i] is not None if i in requests else None)
                for i, (f, text) in enumerate(zip(decided, folded, strict=True))
            ]
            decided = self._learned_frames(decided, folded, sizes)
            decided = self._learned_hijacks(decided, folded, sizes)
            decided = self._learned_planted(decided, folded)
        # the pretexts are read by the same model (unless either reading is off): every text
        # they read, not an attack then either, has its score already
        shared = harmful if self.fictions is self.harms else {}
        decided = self._fictional(decided, folded, sizes, shared, words)
        return self._subverting(decided, folded, sizes, words, unsure)

    def _learned_frames(
        self, found: list[Finding], folded: Sequence[str], sizes: Sequence[int]
    ) -> list[Finding]:
        """``found``, with the prompts the frame model reads as a request given as a language
        task's text made uncertain: no longer than it reads and naming a language task."""

        def reads(i: int) -> list[str]:
            read = _frame_read(folded[i], sizes[i])
            return [] if read is None else [read]

        return _learned(found, self.frames, self.frame, FRAMED, reads, frame_cues)

    def _framed_harmful(
        self,
        found: list[Finding],
        folded: Sequence[str],
        sizes: Sequence[int],
        scores: dict[int, float],
        requests: dict[int, str | None],
        words: dict[int, str],
    ) -> list[Finding]:
        """``found``, with the requests given as a language task's text (by the rules of
        :mod:`.attack_frames` or the frame model) that the harm model reads as harmful called
        attacks: a harmful request so given is a latent jailbreak. The harm model reads each
        prompt not already an attack and no longer than it reads (few of real users' prompts
        read as harmful), and the frame readers those it reads as harmful; then the request
        the frame rules find in each prompt it does not, on its own: a task's words around a
        request ("Sentence: ...\nSentiment:") can hide it from the reading of the whole.
        ``scores`` gains the harm model's score of each prompt it reads, ``requests`` the frame
        rules' request of each prompt they read (None: none), ``words`` what the model reads of
        each prompt it reads."""
        if self.harms is None:
            return found
        read = [i for i, f in enumerate(found) if not f.attack and sizes[i] <= HARM_READ_MAX]

        def request(i: int) -> str | None:
            if i not in requests:
                requests[i] = framed_text(folded[i])
            return requests[i]

        def framed(i: int) -> bool:
            return request(i) is not None or self._frame_model_reads(folded[i], sizes[i])

        found = _learned_attacks(
            found, folded, read, self.harms, self.harm, FRAMED, scores, framed, words
        )
        asked = {i: text for i in read if not found[i].attack and (text := request(i))}
        if not asked:
            return found
        texts = [asked.get(i, text) for i, text in enumerate(folded)]
        return _learned_attacks(found, texts, list(asked), self.harms, self.harm, FRAMED, {})

    def _frame_model_reads(self, folded: str, size: int) -> bool:
        """Whether the frame model reads the prompt as a request given as a language task's
        text (:meth:`_learned_frames`, for one prompt)."""
        if self.frames is None or (read := _frame_read(folded, size)) is None:
            return False
        return self.frames.score_many([read], [frame_cues(read)], [len(read)])[0] >= self.frame

    def _fictional(
        self,
        found: list[Finding],
        folded: Sequence[str],
        sizes: Sequence[int],
        scores: dict[int, float],
        words: dict[int, str],
    ) -> list[Finding]:
        """``found``, with the prompts that set up fiction, role-play or a hypothetical and ask
        for something the harm model reads as harmful behind it called attacks (``persona``):
        of those not attacks already, no longer than it reads. ``scores``: the scores this
        reader's model already gave, by index; ``words``, what the models read of each text
        already read."""
        if self.fictions is None:
            return found
        read = [
            i
            for i, f in enumerate(found)
            if not f.attack and sizes[i] <= HARM_READ_MAX and sets_up_fiction(folded[i])
        ]
        return _learned_attacks(
            found, folded, read, self.fictions, self.fiction, PRETEXT, scores, words=words
        )

    def _subverting(
        self,
        found: list[Finding],
        folded: Sequence[str],
        sizes: Sequence[int],
        words: dict[int, str],
        unsure: bool,
    ) -> list[Finding]:
        """``found``, with the prompts the subversion model reads as an attempt to get around
        the assistant's setup called attacks (``instruction_override``): of those not attacks
        already, no longer than it reads (``words``: what the models read of each text already
        read). With ``unsure``, those it gives its ``agree`` or more short of that are
        uncertain, for the judge."""
        if self.subverts is None:
            return found
        read = [i for i, f in enumerate(found) if not f.attack and sizes[i] <= SUBVERT_READ_MAX]
        scores: dict[int, float] = {}
        found = _learned_attacks(
            found, folded, read, self.subverts, self.subvert, SUBVERTED, scores, words=words
        )
        if not unsure:
            return found
        floor = min(self.subverts.agree, self.subvert)
        out = list(found)
        for i in read:
            f = out[i]
            if not f.attack and not f.uncertain and scores[i] >= floor:
                out[i] = Finding(False, (SUBVERTED,), None, f.p, uncertain=True)
        return out

    def _confirmed_hijacks(
        self,
        found: list[Finding],
        cues: Sequence[list[Signal]],
        folded: Sequence[str],
        sizes: Sequence[int],
        words: dict[int, str],
    ) -> list[Finding]:
        """``found``, with the prompts whose goal hijacking the rules read in shape only (their
        ``cues`` hold :data:`~.attack_signals.HIJACK_SHAPE`) called attacks where the hijack
        model reads them as goal hijacking too (``instruction_override``): the rules read a
        task taken back and a sentence given after it, the model whether the sentence is one
        imposed on the answer. Few prompts have the shape, so the model reads few (``words``:
        what the models read of each text, shared with the harm and subversion models)."""
        if self.hijacks is None:
            return found
        read = [
            i
            for i, (f, s) in enumerate(zip(found, cues, strict=True))
            if not f.attack
            and sizes[i] <= HIJACK_READ_MAX
            and any(signal.cue == HIJACK_SHAPE for signal in s)
        ]
        return _learned_attacks(
            found, folded, read, self.hijacks, self.hijack, HIJACKED, {}, words=words
        )

    def _learned_hijacks(
        self, found: list[Finding], folded: Sequence[str], sizes: Sequence[int]
    ) -> list[Finding]:
        """``found``, with the prompts the hijack model reads as goal hijacking made uncertain
        (the rules' shape of it already is, see :meth:`_unsure`): no longer than it reads and
        giving a sentence."""

        def reads(i: int) -> list[str]:
            text = folded[i]
            fits = sizes[i] <= HIJACK_READ_MAX and gives_a_sentence(text)
            return hijack_reads([text]) if fits else []

        return _learned(found, self.hijacks, self.hijack, HIJACKED, reads)

    def _learned_planted(self, found: list[Finding], folded: Sequence[str]) -> list[Finding]:
        """``found``, with the prompts that paste a document one of whose lines the planted-line
        model reads as an order planted for its AI reader made uncertain."""
        return _learned(
            found,
            self.planteds,
            self.planted,
            UNMARKED,
            lambda i: hijack_reads(document_lines(folded[i])),
        )

    def _decide(self, found: list[Signal], p: float, alone: float, unsure: bool = False) -> Finding:
        if not found and (p < alone or self.model is None):
            # most texts: no signal, and no model alone
            return self._unsure((), p) if unsure else Finding(False, (), None, p)
        sure = [s.technique for s in found if s.sure]
        # signals_only: with no model, only sure signals call an attack
        model = self.model is not None
        cued = [s.technique for s in found if not s.sure and model and p >= self._agree(s.cue)]
        techniques = sure + cued
        if not techniques and p >= alone and model:
            techniques = [LEARNED]
        if not techniques:
            cues = tuple(s.technique for s in found)
            if not unsure:
                return Finding(False, (), None, p)
            return self._unsure(cues, p, judged=any(s.cue in JUDGE_ONLY for s in found))
        named = tuple(sorted(set(techniques), key=_ORDER.__getitem__))
        return Finding(True, named, category_of(named), p)

    def _decide_long(
        self, found: list[Signal], scores: list[float], alone: float, unsure: bool
    ) -> Finding:
        """:meth:`_decide` for a long prompt (``scores``: of its head and tail, then of its
        windows). The head and tail are read as a shorter prompt is; a window the model is as
        sure of as it must be of the whole (``alone``: ``alone_long``) decides instead: a
        template hidden before or after ordinary text. With ``unsure``, a window it gives what
        would call an attack in a shorter prompt (the check's ``alone``) makes the prompt
        uncertain, as the head and tail do."""
        decided = self._decide(found, scores[0], alone, unsure)
        window = max(scores[1:], default=0.0)
        if decided.attack:
            return decided
        if window >= alone:
            return self._decide(found, window, alone)
        if unsure and not decided.uncertain and window >= self.alone:
            return self._unsure(tuple(s.technique for s in found), window)
        return decided

    def _agree(self, cue: str) -> float:
        """The probability from which the model confirms a cue (never one of
        :data:`~.attack_signals.JUDGE_ONLY`)."""
        if cue in JUDGE_ONLY:
            return math.inf
        if cue == REQUEST_SUFFIX:
            return min(self.agree, self.params.suffix_agree)
        return self.agree

    def _unsure(self, cues: tuple[str, ...], p: float, judged: bool = False) -> Finding:
        """Not an attack: uncertain where a cue went unconfirmed at a probability of at least
        :data:`UNCERTAIN_FLOOR`, or the model reached ``agree`` (never without the model);
        ``judged`` (a cue of :data:`~.attack_signals.JUDGE_ONLY` among them): uncertain."""
        if not judged and (
            self.model is None or p < UNCERTAIN_FLOOR or not (cues or p >= self.agree)
        ):
            return Finding(False, (), None, p)
        named = tuple(sorted(set(cues), key=_ORDER.__getitem__))
        return Finding(False, named, None, p, uncertain=True)

    def __call__(self, text: str, event: Event) -> CheckResult:
        passages = event.contexts
        if passages and _joined(text, passages):
            # field: contexts: each passage on its own, as a document; the first attack found
            # decides
            findings = self.assess_many(passages, documents=True)
            found = next((f for f in findings if f.attack), max(findings, key=lambda f: f.p))
        else:
            found = self.assess(text)
        return CheckResult(found.attack, found.detail())


def _reader(
    params: AttackParams,
    threshold: float | None,
    load: Callable[[], AttackModel],
    *,
    always: bool = False,
    default: Literal["alone", "agree"] = "alone",
) -> tuple[AttackModel | None, float]:
    """A learned reader (``load``: the shipped one) and the probability from which it reads
    its shape (``threshold``, else the model's own ``default``: ``alone`` or ``agree``): none,
    and 1, where only sure signals are read, the threshold is 1 (a trainer that found none
    within its budget writes 1), or, for a reader of uncertain prompts only (not ``always``),
    where uncertain prompts are not asked for."""
    if (not always and not params.uncertain) or params.signals_only or threshold == 1.0:
        return None, 1.0
    model = load()
    found = float(getattr(model, default)) if threshold is None else threshold
    return (None, 1.0) if found >= 1.0 else (model, found)


def _learned_attacks(
    found: list[Finding],
    folded: Sequence[str],
    read: list[int],
    model: AttackModel,
    threshold: float,
    technique: str,
    scores: dict[int, float],
    confirm: Callable[[int], bool] | None = None,
    words: dict[int, str] | None = None,
) -> list[Finding]:
    """``found``, with the texts of ``read`` (their indices) a learned reader of words (the
    harm model, the subversion model) gives ``threshold`` or more called attacks of
    ``technique``, with its probability (and with ``confirm``, only those it confirms, asked
    only of those). ``scores`` holds the model's scores already given, by index; the texts it
    lacks are scored in one pass and added to it. ``words``: what these models read of each
    text (:func:`~.attack_hijack_model.hijack_reads`) where ``folded`` are the batch's texts,
    by index, taken from it and added to it (the models read the same words)."""
    if not read:
        return found
    new = [i for i in read if i not in scores]
    if new:
        if words is None:
            reads = hijack_reads([folded[i] for i in new])
        else:
            missing = [i for i in new if i not in words]
            words.update(zip(missing, hijack_reads([folded[i] for i in missing]), strict=True))
            reads = [words[i] for i in new]
        given = model.score_many(reads, [[] for _ in reads], [len(r) for r in reads])
        scores.update(zip(new, given, strict=True))
    out = list(found)
    for i in read:
        p = scores[i]
        if p >= threshold and (confirm is None or confirm(i)):
            out[i] = Finding(True, (technique,), category_of((technique,)), p)
    return out


def _learned(
    found: list[Finding],
    model: AttackModel | None,
    threshold: float,
    technique: str,
    reads: Callable[[int], list[str]],
    cues: Callable[[str], list[str]] | None = None,
) -> list[Finding]:
    """``found``, with the texts a learned reader of one shape reads as it made uncertain
    (``technique``): of those neither an attack nor uncertain already, each whose ``reads``
    (of its index: what the model reads of it, nothing where it reads none) has one read
    scoring ``threshold`` or more (with ``cues``, the features of a read that are not its
    words). The model scores every read of the batch in one pass."""
    if model is None:
        return found
    open_ = {
        i: read
        for i, f in enumerate(found)
        if not f.attack and not f.uncertain and (read := reads(i))
    }
    if not open_:
        return found
    flat = [r for read in open_.values() for r in read]
    scored = model.score_many(flat, [cues(r) if cues else [] for r in flat], [len(r) for r in flat])
    scores = iter(scored)
    out = list(found)
    for i, read in open_.items():
        if max(next(scores) for _ in read) >= threshold:
            out[i] = Finding(False, (technique,), None, found[i].p, uncertain=True)
    return out


def _frame_read(folded: str, size: int) -> str | None:
    """What the frame model reads of a folded prompt (``size``: its :func:`read_length`): none
    of one longer than it reads or that names no language task."""
    return model_text(folded) if size <= READ_MAX and names_a_task(folded) else None


_SHORTEST = min(READ_MAX, HARM_READ_MAX, HIJACK_READ_MAX, SUBVERT_READ_MAX)
"""The shortest length a reader of short prompts reads (:func:`read_length`)."""


def _framed(found: Finding, folded: str, framed: bool | None = None) -> Finding:
    """``found``, made uncertain where the prompt is not an attack but gives a request to an
    assistant as the text of a language task (:mod:`.attack_frames`; ``framed``: what the
    frame rules already read of it), holds an order to an AI reader in text it pastes without
    marking it (:func:`~.attack_documents.unmarked_orders`), or an order for whoever reads a
    document it pastes (:mod:`.attack_planted`): whether the request is harmful, or the order
    planted, is the judge's to read."""
    if found.attack or FRAMED in found.techniques or UNMARKED in found.techniques:
        return found
    if framed_request(folded) if framed is None else framed:
        technique = FRAMED
    elif unmarked_orders(folded) or planted_task(folded):
        technique = UNMARKED
    else:
        return found
    cues = tuple(sorted({*found.techniques, technique}, key=_ORDER.__getitem__))
    return Finding(False, cues, None, found.p, uncertain=True)


def _sure(found: list[Signal]) -> bool:
    return any(s.sure for s in found)


def _joined(text: str, passages: Sequence[str]) -> bool:
    """Whether ``text`` is the passages as ``Event.text("contexts")`` joins them."""
    size = sum(map(len, passages)) + 2 * (len(passages) - 1)
    return len(text) == size and text.startswith(passages[0]) and text.endswith(passages[-1])
