"""Content analysis of a response against its source, keyword inclusion and question robustness.

Content analysis (``coverage``, ``density``, ``compression``, ``abstractness``) compares the
response with a *source*: the event's ``prompt`` (the model input, the default), its
``contexts`` (for retrieval-augmented answers) or its system prompt. The first three use the
extractive fragments of Grusky et al.'s Newsroom statistics: walking through the response, each
fragment is the longest run of words, starting at the current word, that also occurs verbatim
in the source (found greedily, left to right, as the Newsroom reference code does).

* ``coverage`` = (sum of fragment lengths) / (response words): the share of response words
  that come from the source, in [0, 1].
* ``density`` = (sum of squared fragment lengths) / (response words): the average length of
  the fragment each response word belongs to; high for copy-paste, low for paraphrase.
* ``compression`` = (source words) / (response words): how many times shorter the response is.
* ``abstractness`` = share of the response's distinct n-grams absent from the source, in [0, 1].
* ``repetitiveness`` = share of the response's distinct n-grams that occur more than once
  in the response, in [0, 1].

Words are lowercased runs of letters and digits (inner apostrophes kept); punctuation is not a
word. Contexts are joined with a barrier so no fragment or n-gram spans two passages. An empty
response scores 0 on the first three (as the reference code does).

Not applicable: when a check needs something the event lacks — the chosen source (no prompt,
no contexts, no system prompt), ``ground_truths`` for ``keyword_inclusion``, or, for the
n-gram checks, a response with at least ``n`` words — the check raises
:class:`~sidecar.errors.CheckError`, which the pipeline records as "not applicable" for that
event instead of a failure.

``keyword_inclusion`` compares the keywords of the response and of the ground truths. The
definition counts nouns; without a part-of-speech tagger on the hot path, keywords are
approximated as the distinct content words: words that are not in a fixed list of English
function words (articles, pronouns, auxiliaries, prepositions, conjunctions, common adverbs).

``question_robustness`` is the share of the prompt's words that an English dictionary
(``pyspellchecker``) does not know. The dictionary is built once per process, when the first
rule using the check loads (about 0.6 s and 15 MB resident); looking words up is then a set
membership per word.

Cost per event: linear in the words of response and source (each response position looks up
the source positions of its next two words, at most :data:`FRAGMENT_TRIES` of them).
"""

from __future__ import annotations

import itertools
import math
import re
import threading
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Literal

from pydantic import Field

from ..errors import CheckError, ConfigError
from ..events import Event
from .base import Check, CheckContext, CheckResult, Params
from .registry import register

if TYPE_CHECKING:
    from spellchecker import SpellChecker

__all__ = [
    "Abstractness",
    "Compression",
    "Coverage",
    "Density",
    "KeywordInclusion",
    "QuestionRobustness",
    "Repetitiveness",
    "fragments",
    "keywords",
    "words",
]

Source = Literal["prompt", "contexts", "system_prompt"]

_WORD = re.compile(r"[^\W_]+(?:['\u2019][^\W_]+)*")
_BARRIER = "\x00"  # never a word, so it ends every fragment and n-gram


def words(text: str) -> list[str]:
    """Lowercased words: runs of letters and digits, with inner apostrophes."""
    return [w.replace("\u2019", "'") for w in _WORD.findall(text.lower())]


FRAGMENT_TRIES = 512
"""The most source positions tried from one summary position (see :func:`fragments`)."""


def fragments(summary: Sequence[str], source: Sequence[str]) -> list[int]:
    """Lengths of the greedy extractive fragments of ``summary`` in ``source`` (Newsroom).

    From each summary position, every source position holding the same word is tried in
    order, skipping those inside the match just found, and the longest run wins; the walk
    then jumps past it (or one word, if there is none).

    A source position whose next word differs from the summary's gives a run of one word and
    moves the skip to the position after it, which the next position tried is anyway: so
    only the positions of the summary's next two words are tried (a word common in both,
    "the", no longer costs its count in the summary times its count in the source), at most
    :data:`FRAGMENT_TRIES` of them: past that many places of one pair of words in the source
    (a source that repeats itself), the later ones are not tried.
    """
    pairs: dict[tuple[str, str], list[int]] = {}
    for i in range(len(source) - 1):
        pairs.setdefault((source[i], source[i + 1]), []).append(i)
    words = set(source)
    n, m = len(summary), len(source)
    out: list[int] = []
    a = 0
    while a < n:
        if summary[a] not in words:
            a += 1
            continue
        best = 1
        resume = 0
        tried = pairs.get((summary[a], summary[a + 1]), ()) if a + 1 < n else ()
        for b in itertools.islice(tried, FRAGMENT_TRIES):
            if b < resume:
                continue
            k = 2
            while a + k < n and b + k < m and summary[a + k] == source[b + k]:
                k += 1
            if k > best:
                best = k
            resume = b + k
        out.append(best)
        a += best
    return out


def _ngrams(tokens: Sequence[str], n: int) -> Iterable[tuple[str, ...]]:
    return (tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))


class SourceParams(Params):
    source: Source = Field("prompt", description="what the response is compared with")


class NgramSourceParams(SourceParams):
    n: int = Field(3, ge=1, le=10, description="n-gram length")


class NgramParams(Params):
    n: int = Field(3, ge=1, le=10, description="n-gram length")


def _source_missing(event: Event, source: Source, ctx: CheckContext) -> str | None:
    """Why the event has no such source, or None."""
    if source == "contexts":
        return None if event.contexts else "no contexts"
    if source == "prompt":
        return None if event.prompt is not None else "no prompt"
    if event.system_prompt is not None:
        return None
    if event.system_prompt_id is not None and event.system_prompt_id in ctx.system_prompts:
        return None
    return f"no {source}"


def _source_tokens(event: Event, source: Source, ctx: CheckContext) -> list[str]:
    """The source's words; with contexts, a barrier between passages."""
    why = _source_missing(event, source, ctx)
    if why is not None:
        raise CheckError(why)
    if source == "contexts":
        out: list[str] = []
        for passage in event.contexts or ():
            if out:
                out.append(_BARRIER)
            out.extend(words(passage))
        return out
    if source == "prompt":
        return words(event.prompt or "")
    text = event.system_prompt
    if text is None:
        text = ctx.system_prompts[event.system_prompt_id or ""]
    return words(text)


class _SourceCheck(Check[SourceParams]):
    params_model = SourceParams
    value_kind = "score"

    def __init__(self, params: SourceParams, ctx: CheckContext) -> None:
        super().__init__(params, ctx)
        self.source: Source = params.source

    def missing(self, event: Event) -> str | None:
        return _source_missing(event, self.source, self.ctx)


@register
class Coverage(_SourceCheck):
    """Share of response words inside fragments copied from the source, in [0, 1]."""

    name = "coverage"

    def __call__(self, text: str, event: Event) -> CheckResult:
        summary = words(text)
        frags = fragments(summary, _source_tokens(event, self.source, self.ctx))
        value = sum(frags) / len(summary) if summary else 0.0
        return CheckResult(value, f"{sum(frags)} of {len(summary)} words from {self.source}")


@register
class Density(_SourceCheck):
    """Mean squared fragment length per response word (0 up to the response length)."""

    name = "density"
    score_range = (0.0, math.inf)

    def __call__(self, text: str, event: Event) -> CheckResult:
        summary = words(text)
        frags = fragments(summary, _source_tokens(event, self.source, self.ctx))
        value = sum(f * f for f in frags) / len(summary) if summary else 0.0
        longest = max(frags, default=0)
        return CheckResult(value, f"{len(frags)} fragments, longest {longest} words")


@register
class Compression(_SourceCheck):
    """Source words per response word (0 for an empty response); higher is more concise."""

    name = "compression"
    score_range = (0.0, math.inf)

    def __call__(self, text: str, event: Event) -> CheckResult:
        summary = len(words(text))
        source = sum(1 for t in _source_tokens(event, self.source, self.ctx) if t != _BARRIER)
        value = source / summary if summary else 0.0
        return CheckResult(value, f"{source} {self.source} words / {summary} response words")


@register
class Abstractness(Check[NgramSourceParams]):
    """Share of the response's distinct n-grams that the source does not contain, in [0, 1]."""

    name = "abstractness"
    params_model = NgramSourceParams
    value_kind = "score"

    def __init__(self, params: NgramSourceParams, ctx: CheckContext) -> None:
        super().__init__(params, ctx)
        self.source: Source = params.source
        self.n = params.n

    def missing(self, event: Event) -> str | None:
        return _source_missing(event, self.source, self.ctx)

    def __call__(self, text: str, event: Event) -> CheckResult:
        source = _source_tokens(event, self.source, self.ctx)
        grams = set(_ngrams(words(text), self.n))
        if not grams:
            raise CheckError(f"response has fewer than {self.n} words")
        novel = len(grams - set(_ngrams(source, self.n)))
        return CheckResult(novel / len(grams), f"{novel} of {len(grams)} {self.n}-grams novel")


@register
class Repetitiveness(Check[NgramParams]):
    """Share of the text's distinct n-grams that occur more than once, in [0, 1]."""

    name = "repetitiveness"
    params_model = NgramParams
    value_kind = "score"

    def __init__(self, params: NgramParams, ctx: CheckContext) -> None:
        super().__init__(params, ctx)
        self.n = params.n

    def __call__(self, text: str, event: Event) -> CheckResult:
        counts = Counter(_ngrams(words(text), self.n))
        if not counts:
            raise CheckError(f"text has fewer than {self.n} words")
        repeated = sum(1 for c in counts.values() if c > 1)
        return CheckResult(
            repeated / len(counts), f"{repeated} of {len(counts)} {self.n}-grams repeat"
        )


# --------------------------------------------------------------------------- keywords

# English function words; what is left of a text once these go approximates its nouns.
_FUNCTION_WORDS_TEXT = """
    a an the this that these those such what which who whom whose whoever whatever
    i me my mine myself we us our ours ourselves you your yours yourself yourselves
    he him his himself she her hers herself it its itself they them their theirs themselves
    one ones someone something anyone anything everyone everything nobody nothing none
    am is are was were be been being do does did doing done have has had having
    will would shall should can could may might must ought
    i'm i've i'd i'll you're you've you'd you'll he's she's it's we're we've we'd we'll
    they're they've they'd they'll that's there's here's what's who's let's
    isn't aren't wasn't weren't don't doesn't didn't haven't hasn't hadn't won't wouldn't
    can't cannot couldn't shouldn't mustn't
    and or but nor so yet if then else than because as while although though unless until
    since whether either neither both
    of in on at by for with without within about above below over under into onto out
    off up down from to through during before after between among against along across
    around behind beyond near upon toward towards via per
    not no yes very too also just only even still already again ever never always often
    sometimes here there where when why how all any each every few more most other some
    many much own same so than quite rather really well
"""
_FUNCTION_WORDS = frozenset(_FUNCTION_WORDS_TEXT.split())


def keywords(text: str) -> set[str]:
    """The distinct content words of a text (its words minus English function words)."""
    return {w for w in words(text) if w not in _FUNCTION_WORDS}


class KeywordParams(Params):
    measure: Literal["precision", "recall", "f1"] = Field(
        "f1", description="keyword precision, recall or F1 against the best ground truth"
    )


def _prf(found: set[str], wanted: set[str]) -> tuple[float, float, float]:
    common = len(found & wanted)
    precision = common / len(found) if found else 0.0
    recall = common / len(wanted) if wanted else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


@register
class KeywordInclusion(Check[KeywordParams]):
    """Keyword precision, recall or F1 of the text against ``ground_truths`` (best one), [0, 1].

    precision = shared / response keywords, recall = shared / ground-truth keywords, F1 their
    harmonic mean; 0 when the side divided by has no keywords.
    """

    name = "keyword_inclusion"
    needs = ("ground_truths",)
    params_model = KeywordParams
    value_kind = "score"

    def __init__(self, params: KeywordParams, ctx: CheckContext) -> None:
        super().__init__(params, ctx)
        self.index = {"precision": 0, "recall": 1, "f1": 2}[params.measure]

    def __call__(self, text: str, event: Event) -> CheckResult:
        if not event.ground_truths:
            raise CheckError("no ground_truths")
        found = keywords(text)
        best = max(
            (_prf(found, keywords(gt)) for gt in event.ground_truths),
            key=lambda s: s[self.index],
        )
        p, r, f = best
        return CheckResult(best[self.index], f"p={p:.3f} r={r:.3f} f1={f:.3f}")


# --------------------------------------------------------------------------- spelling

_SPELL_LOCK = threading.Lock()
_SPELL: list[SpellChecker] = []
_SPELL_WORD = re.compile(r"[^\W\d_]+(?:['\u2019][^\W\d_]+)*")


def _spellchecker() -> SpellChecker:
    """The process-wide English spell checker, built on first use (about 0.6 s, 15 MB)."""
    if not _SPELL:
        with _SPELL_LOCK:
            if not _SPELL:
                try:
                    from spellchecker import SpellChecker
                except ImportError as exc:  # pragma: no cover - depends on the install
                    raise ConfigError(
                        "question_robustness needs the 'pyspellchecker' package"
                    ) from exc
                _SPELL.append(SpellChecker(language="en"))
    return _SPELL[0]


class SpellingParams(Params):
    ignore: list[str] = Field(
        default_factory=list,
        description="words never counted (case-insensitive): product names, jargon",
    )
    skip_uppercase: bool = Field(
        True, description="leave out words written in capitals (acronyms such as API)"
    )


@register
class QuestionRobustness(Check[SpellingParams]):
    """Share of the prompt's words that are not English dictionary words, in [0, 1].

    Words are runs of letters (digits and symbols are not words); ignored words and, by
    default, all-capital words are left out of both counts. A prompt without countable words
    scores 0. A rule ``max: 0`` makes the failure rate the share of prompts with any
    misspelling, the definition's "percentage of incorrect questions".
    """

    name = "question_robustness"
    params_model = SpellingParams
    value_kind = "score"
    default_field = "prompt"

    def __init__(self, params: SpellingParams, ctx: CheckContext) -> None:
        super().__init__(params, ctx)
        self.ignore = frozenset(w.replace("\u2019", "'").lower() for w in params.ignore)
        self.skip_uppercase = params.skip_uppercase
        self.checker = _spellchecker()

    def __call__(self, text: str, event: Event) -> CheckResult:
        counted: list[str] = []
        for raw in _SPELL_WORD.findall(text):
            if self.skip_uppercase and len(raw) > 1 and raw.isupper():
                continue
            word = raw.replace("\u2019", "'").lower()
            if word not in self.ignore:
                counted.append(word)
        if not counted:
            return CheckResult(0.0, "no words")
        unknown = self.checker.unknown(counted)
        if unknown:
            # A possessive or contraction of a known word is not a misspelling.
            unknown = {w for w in unknown if not self._known_base(w)}
        bad = sum(1 for w in counted if w in unknown)
        return CheckResult(bad / len(counted), f"{bad} of {len(counted)} words unknown")

    def _known_base(self, word: str) -> bool:
        base, sep, _ = word.rpartition("'")
        return bool(sep) and bool(base) and not self.checker.unknown([base])
