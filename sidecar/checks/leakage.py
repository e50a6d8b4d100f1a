"""Leakage checks: how much of the system prompt a response reveals, and secret leaks.

``prompt_leakage`` scores, from 0 to 1, how much of the system prompt reappears in the
response. The prompt is the event's ``system_prompt`` or, failing that, the registered prompt
named by ``system_prompt_id``. Method:

1. Both texts are normalised: lowercase, every run of non-alphanumeric characters becomes one
   space. Quoting marks, markdown and line breaks then no longer matter.
2. The prompt is cut into segments: sentences (split after ``.``, ``!``, ``?`` and at line
   breaks), long sentences into windows of at most ``window_words`` words, and segments of
   fewer than 4 words merged into a neighbour, since short phrases match by chance; a segment
   longer than :data:`SEGMENT_MAX` characters is cut into pieces of that length.
3. Each segment's similarity is rapidfuzz's ``partial_ratio`` against the response (the best
   alignment of the segment with any stretch of the response, so quoting and light edits
   still score high), scaled down when the response is shorter than the segment.
   Similarities at or below ``floor`` (chance level for unrelated English text lies around
   0.45-0.6) count as 0 and the rest are stretched linearly to [0, 1].
4. ``aggregate: coverage`` (default) weighs segments by their length: the value is the share
   of the prompt that leaked, 1 for a verbatim dump. ``aggregate: max`` takes the most leaked
   segment: 1 as soon as any one sentence is quoted.
5. With ``decode: true`` (default) the text's other readings are scored too and the highest
   value wins, the detail naming the reading ("6 of 6 prompt segments leaked (base64)"):
   base64 and hex blobs decoded, spelled-out letters joined, and, only when the text does not
   read as English but the reading does (stopword counts), rot13, the reversed text, each word
   reversed and leetspeak (see :mod:`sidecar.checks.reveal`).

Segments of registered prompts are prepared when the rule loads; inline prompts are segmented
on first sight and cached (256 most recent). Cost: one ``partial_ratio`` per segment, about
10-20 us each against a 1 KB response, plus one more pass per reading found; looking for
readings costs ~50 us on 1 KB of ordinary prose. A pass reads segments in order until their
characters times the text's reach :data:`PAIRS_MAX` (a system prompt that carries retrieved
documents, a response of 200 KB): the value is then of the segments read, and the detail says
how many ("3 of 700 prompt segments leaked (first 36 read: size bound)").

``secret_leak`` is True when a secret or canary occurs in the text: a registered one
(``CheckContext.secrets``), one of the rule's ``secrets``, or one the event carries in the
labels named by ``from_labels`` (default ``canary`` and ``secrets``: a string, a list of
strings or a mapping name -> secret), e.g. a canary the service planted in this request's
system prompt. Besides verbatim it is found with its case or separators changed, spelled out,
reversed, in leetspeak, rot13, base64 or hex (``forms``), and with ``fuzzy: true`` by
``partial_ratio`` of at least ``threshold``. Precision rules: a secret that is a common
English word or phrase matches only as whole words, its letters either together or all
spelled out alike, never fuzzily; one shorter than ``min_length`` only verbatim as a whole word;
reversal and rot13 are skipped when they give another common word. The detail names each
secret, the form it leaked in and the rule applied ("leaked: door (spelled out; common word:
whole words only)"), never the secret. An event with no secret at all (none registered, none
in its labels) makes the check not applicable.

Not applicable: an event with neither a system prompt nor a registered ``system_prompt_id``
makes ``prompt_leakage`` raise :class:`~sidecar.errors.CheckError`, which the pipeline records
as "not applicable" for that event.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Literal

from pydantic import Field, field_validator
from rapidfuzz import fuzz

from ..errors import CheckError
from ..events import Event
from .base import Check, CheckContext, CheckResult, Params
from .registry import register
from .reveal import SecretMatcher, skeletons, text_forms

__all__ = [
    "PromptLeakage",
    "PromptLeakageParams",
    "SecretLeak",
    "SecretLeakParams",
    "normalize",
    "segments",
]

_NON_ALNUM = re.compile(r"[\W_]+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|(?<!\s)\s*\n\s*")
"""A sentence's or a line's end with the blanks around it; read from a run's first blank only
(from each, a long run of spaces cost its length squared)."""
_MIN_WORDS = 4
_DEFAULT_WINDOW = 25
SEGMENT_MAX = 500
"""The longest segment, in characters (a default window of 25 words is about 150): a longer
one (a hex blob, a DNA sequence, a wide ``window_words``) is cut into pieces of this length.
``partial_ratio`` costs more than in proportion to its shorter string: against 200 KB, a
segment of 10 KB took 15 s, of 1 KB 0.02-0.12 s, of 500 characters 4-25 ms."""
PAIRS_MAX = 2_000_000_000
"""The most characters of segments times characters of text one pass compares (0.1-0.5 s):
past it, a long system prompt's later segments are not read. A 10 KB prompt against a 200 KB
response is read whole, of a 100 KB one its first 10 KB."""

Segments = tuple[tuple[str, int], ...]
"""Normalised segment text and its weight (its length in characters)."""


def normalize(text: str) -> str:
    """Lowercase, with every run of non-alphanumeric characters turned into one space."""
    return _NON_ALNUM.sub(" ", text.lower()).strip()


def segments(prompt: str, window_words: int = _DEFAULT_WINDOW) -> Segments:
    """Cut a system prompt into normalised sentences and windows, as described above."""
    pieces: list[list[str]] = []
    for sentence in _SENTENCE_END.split(prompt):
        tokens = normalize(sentence).split()
        for start in range(0, len(tokens), window_words):
            pieces.append(tokens[start : start + window_words])
    merged: list[list[str]] = []
    carry: list[str] = []
    for piece in pieces:
        piece = carry + piece
        carry = []
        if len(piece) < _MIN_WORDS:
            carry = piece
        else:
            merged.append(piece)
    if carry:
        if merged:
            merged[-1].extend(carry)
        else:
            merged.append(carry)
    joined = (" ".join(p) for p in merged if p)
    cut = (t[i : i + SEGMENT_MAX] for t in joined for i in range(0, len(t), SEGMENT_MAX))
    return tuple((t, len(t)) for t in cut)


@lru_cache(maxsize=256)
def _cached_segments(prompt: str, window_words: int) -> Segments:
    return segments(prompt, window_words)


class PromptLeakageParams(Params):
    aggregate: Literal["coverage", "max"] = Field(
        "coverage",
        description="coverage: length-weighted share of the prompt leaked; max: worst segment",
    )
    floor: float = Field(
        0.6, ge=0, lt=1, description="segment similarity counted as no leak at all"
    )
    window_words: int = Field(
        _DEFAULT_WINDOW, ge=4, le=200, description="longest segment, in words"
    )
    decode: bool = Field(
        True,
        description="also score decoded readings of the text (base64, hex, spelled out; "
        "rot13, reversed, leetspeak when the text looks like it) and keep the highest",
    )


@register
class PromptLeakage(Check[PromptLeakageParams]):
    """How much of the system prompt the text reveals: 0 none, 1 all of it."""

    name = "prompt_leakage"
    params_model = PromptLeakageParams
    value_kind = "score"

    def __init__(self, params: PromptLeakageParams, ctx: CheckContext) -> None:
        super().__init__(params, ctx)
        self.use_max = params.aggregate == "max"
        self.floor = params.floor
        self.cutoff = params.floor * 100
        self.window = params.window_words
        self.decode = params.decode
        self.registered = {
            pid: segments(text, self.window) for pid, text in ctx.system_prompts.items()
        }

    def missing(self, event: Event) -> str | None:
        if event.system_prompt is not None:
            return None
        if event.system_prompt_id is None:
            return "no system_prompt"
        if event.system_prompt_id not in self.registered:
            return "system_prompt_id is not registered"
        return None

    def _segments(self, event: Event) -> Segments:
        why = self.missing(event)
        if why is not None:
            raise CheckError(why)
        if event.system_prompt is not None:
            return _cached_segments(event.system_prompt, self.window)
        return self.registered[event.system_prompt_id or ""]

    def __call__(self, text: str, event: Event) -> CheckResult:
        segs = self._segments(event)
        if not segs:
            return CheckResult(0.0, "empty system prompt")
        value, hits, read = self._score(segs, normalize(text))
        form = None
        if self.decode and value < 1.0:
            for name, reading in text_forms(text):
                v, h, n = self._score(segs, normalize(reading))
                if v > value:
                    value, hits, read, form = v, h, n, name
                    if value >= 1.0:
                        break
        notes = [form] if form else []
        if read < len(segs):
            notes.append(f"first {read} read: size bound")
        detail = f"{hits} of {len(segs)} prompt segments leaked"
        return CheckResult(value, f"{detail} ({'; '.join(notes)})" if notes else detail)

    def _score(self, segs: Segments, response: str) -> tuple[float, int, int]:
        """The value, the segments leaked and the segments read (see :data:`PAIRS_MAX`)."""
        segs = _within(segs, PAIRS_MAX // max(1, len(response)))
        total = sum(weight for _, weight in segs)
        leaked = 0.0
        worst = 0.0
        hits = 0
        if response:
            for seg, weight in segs:
                raw = fuzz.partial_ratio(seg, response, score_cutoff=self.cutoff)
                sim = raw / 100 * min(1.0, len(response) / weight)
                if sim <= self.floor:
                    continue
                stretched = (sim - self.floor) / (1 - self.floor)
                hits += 1
                leaked += weight * stretched
                worst = max(worst, stretched)
        return (worst if self.use_max else leaked / total), hits, len(segs)


def _within(segs: Segments, chars: int) -> Segments:
    """The first segments whose characters add up to at most ``chars`` (at least one)."""
    used = 0
    for i, (_, weight) in enumerate(segs):
        used += weight
        if used > chars:
            return segs[: max(1, i)]
    return segs


Form = Literal["plain", "leetspeak", "reversed", "rot13", "base64", "hex"]
_FORMS: tuple[Form, ...] = ("plain", "leetspeak", "reversed", "rot13", "base64", "hex")


class SecretLeakParams(Params):
    secrets: dict[str, str] = Field(
        default_factory=dict,
        description="extra secrets or canaries by name, besides the registered ones",
    )
    from_labels: list[str] = Field(
        default_factory=lambda: ["canary", "secrets"],
        description="event labels holding this event's own secrets: a string, a list of "
        "strings or a mapping name -> secret",
    )
    forms: list[Form] = Field(
        default_factory=lambda: list(_FORMS),
        description="disguises to see through besides verbatim; plain covers case, "
        "separators and spelling out",
    )
    min_length: int = Field(
        4, ge=1, le=64, description="shorter secrets (letters and digits) count only verbatim"
    )
    common_words: bool = Field(
        True, description="common-word secrets match as whole words only, never fuzzily"
    )
    fuzzy: bool = Field(False, description="also catch near matches (partial_ratio)")
    fuzzy_min_length: int = Field(8, ge=1, description="shorter secrets are never matched fuzzily")
    threshold: float = Field(
        0.9, gt=0, le=1, description="least partial_ratio similarity (0-1) of a fuzzy match"
    )
    case_sensitive: bool = Field(
        True, description="verbatim means the same case; other cases count as case-changed"
    )

    @field_validator("secrets")
    @classmethod
    def _non_empty(cls, v: dict[str, str]) -> dict[str, str]:
        empty = sorted(name for name, value in v.items() if not value)
        if empty:
            raise ValueError(f"secrets with an empty value: {', '.join(empty)}")
        return v


@lru_cache(maxsize=1024)
def _matcher(value: str, min_length: int, case_sensitive: bool, words: bool) -> SecretMatcher:
    return SecretMatcher(
        value, min_length=min_length, case_sensitive=case_sensitive, strict_words=words
    )


@register
class SecretLeak(Check[SecretLeakParams]):
    """True when a secret or canary appears in the text, in any of its disguises."""

    name = "secret_leak"
    params_model = SecretLeakParams

    def __init__(self, params: SecretLeakParams, ctx: CheckContext) -> None:
        super().__init__(params, ctx)
        merged = {name: value for name, value in ctx.secrets.items() if value}
        merged.update(params.secrets)
        if not merged and not params.from_labels:
            # A rule error (file and rule id named, with the file's other problems), not a
            # settings error that stopped validate at the first such rule.
            raise ValueError(
                "no secrets to look for: register some (settings: secrets), list them "
                "(params.secrets) or read them from event labels (params.from_labels)"
            )
        self.case_sensitive = params.case_sensitive
        self.min_length = params.min_length
        self.words = params.common_words
        forms = set(params.forms)
        self.readings = forms & {"plain", "leetspeak", "reversed", "rot13"}
        self.encodings = forms & {"base64", "hex"}
        self.labels = params.from_labels
        self.secrets = sorted((name, self._compile(value)) for name, value in merged.items())
        self.fuzzy = params.fuzzy
        self.fuzzy_min = params.fuzzy_min_length
        self.cutoff = params.threshold * 100

    def _compile(self, value: str) -> SecretMatcher:
        return _matcher(value, self.min_length, self.case_sensitive, self.words)

    def missing(self, event: Event) -> str | None:
        # Only the plain case: no secrets of the rule's own, and none of the labels it reads.
        if self.secrets:
            return None
        labels = event.labels
        if labels and any(labels.get(key) is not None for key in self.labels):
            return None  # the call reads them (and says what is wrong with them)
        return "no secrets for this event"

    def _event_secrets(self, event: Event) -> tuple[list[tuple[str, SecretMatcher]], str | None]:
        """This event's own secrets, and what was wrong with a label that could not be read."""
        out: list[tuple[str, SecretMatcher]] = []
        problem = None
        for key in self.labels:
            raw = event.labels.get(key)
            if raw is None:
                continue
            if isinstance(raw, str):
                items: list[tuple[str, object]] = [(key, raw)]
            elif isinstance(raw, list):
                items = [(f"{key}[{i}]", v) for i, v in enumerate(raw)]
            elif isinstance(raw, dict):
                items = [(str(k), v) for k, v in raw.items()]
            else:
                problem = f"labels.{key} is not a string, list or mapping of secrets"
                continue
            for name, value in items:
                if not isinstance(value, str):
                    problem = f"labels.{key} holds a secret that is not a string"
                elif value:
                    out.append((name, self._compile(value)))
        return out, problem

    def __call__(self, text: str, event: Event) -> CheckResult:
        secrets = self.secrets
        problem = None
        if self.labels and event.labels:
            extra, problem = self._event_secrets(event)
            if extra:
                secrets = sorted([*secrets, *extra], key=lambda item: item[0])
        if not secrets:
            raise CheckError(problem or "no secrets for this event")
        skel, leet_skel = skeletons(text)
        found: list[str] = []
        for name, matcher in secrets:
            form = matcher.find(text, skel, leet_skel, self.readings)
            if form is None and self.encodings:
                form = matcher.encoded(text, skel, self.encodings)
            if form is None and self._near(matcher, text):
                form = "fuzzy"
            if form is None:
                continue
            notes = [] if form == "verbatim" else [form]
            if matcher.rule:
                notes.append(matcher.rule)
            found.append(f"{name} ({'; '.join(notes)})" if notes else name)
        if not found:
            if problem:
                # The readable secrets did not leak, but this event's own could not be read.
                raise CheckError(problem)
            return CheckResult(False, None)
        shown = ", ".join(found[:5]) + (f" and {len(found) - 5} more" if len(found) > 5 else "")
        return CheckResult(True, f"leaked: {shown}")

    def _near(self, matcher: SecretMatcher, text: str) -> bool:
        # Common words and short secrets look like ordinary text at 90% similarity.
        if not self.fuzzy or matcher.strict or len(matcher.value) < self.fuzzy_min or not text:
            return False
        value = matcher.value if self.case_sensitive else matcher.value.lower()
        hay = text if self.case_sensitive else text.lower()
        # A response shorter than the secret can only reveal part of it.
        score = fuzz.partial_ratio(value, hay, score_cutoff=self.cutoff)
        return score * min(1.0, len(hay) / len(value)) >= self.cutoff
