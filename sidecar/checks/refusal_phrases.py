"""The refusal phrase sets: the default list, its built-in ignores, RGB's lists, and the
contraction variants each listed phrase is expanded into when a rule is compiled."""

from __future__ import annotations

import itertools
from collections.abc import Iterable

from .rgb import PRIMARY_REJECTION_PHRASES, REJECTION_KEYWORDS

__all__ = [
    "DEFAULT_IGNORE_PHRASES",
    "DEFAULT_PHRASES",
    "MAX_VARIANTS_PER_PHRASE",
    "RGB_PHRASES",
    "variants",
]

MAX_VARIANTS_PER_PHRASE = 64
"""Bound on the contraction variants one phrase expands into."""

# Spellings that mean the same; a phrase written with one matches all of them.
_EQUIVALENT: tuple[tuple[str, ...], ...] = (
    ("can't", "cannot", "can not", "cant"),
    ("won't", "will not"),
    ("i'm", "i am"),
    ("i'll", "i will"),
    ("i'd", "i would"),
    ("i've", "i have"),
    ("don't", "do not"),
    ("doesn't", "does not"),
    ("didn't", "did not"),
    ("isn't", "is not"),
    ("aren't", "are not"),
    ("wasn't", "was not"),
    ("couldn't", "could not"),
    ("wouldn't", "would not"),
    ("shouldn't", "should not"),
    ("it's", "it is"),
    ("that's", "that is"),
    ("there's", "there is"),
    ("apologize", "apologise"),
    ("fulfill", "fulfil"),
)
_ALTERNATIVES: dict[str, tuple[str, ...]] = {form: group for group in _EQUIVALENT for form in group}


def _product(*groups: Iterable[str]) -> list[str]:
    return [" ".join(words) for words in itertools.product(*groups)]


_FIRST_PERSON_VERBS = (
    "help",
    "assist",
    "provide",
    "give",
    "share",
    "create",
    "write",
    "generate",
    "produce",
    "make",
    "do that",
    "do this",
    "comply",
    "fulfill",
    "support",
    "engage",
    "participate",
    "offer",
    "answer",
    "discuss",
    "talk about",
    "tell you",
    "complete",
    "continue",
    "go along",
    "play along",
    "access",
    "browse",
    "open",
    "view",
    "see",
    "process",
    "disclose",
    "reveal",
    "reproduce",
    "role-play",
    "roleplay",
    "pretend",
    "act as",
    "impersonate",
    "condone",
    "encourage",
    "endorse",
    "facilitate",
    "contribute",
    "accommodate",
    "respond",
    "in good conscience",
    "find",
    "determine",
    "verify",
    "confirm",
    "be of help",
    "be of assistance",
    "invent",
    "fabricate",
    "make up",
    "add that",
    "set aside",
    "ignore my",
    "bypass",
    "walk you through",
    "guide you",
    "show you",
    "teach",
    "instruct",
    "advise",
    "explain how to",
)
_ADVERBS = ("actually", "really", "simply", "directly", "personally", "currently", "ethically")
"""Words that may stand between "I can't" and its verb ("I can't actually access...")."""

_FUTURE_VERBS = (
    "be able to",
    "be providing",
    "be helping",
    "be sharing",
    "be writing",
    "be creating",
    "be assisting",
)

_RAG_SUBJECTS = (
    "the documents",
    "the document",
    "the provided documents",
    "the provided document",
    "the given documents",
    "the retrieved documents",
    "the documents provided",
    "the context",
    "the provided context",
    "the given context",
    "the context provided",
    "the passages",
    "the provided passages",
    "the passages provided",
    "the retrieved passages",
    "the provided text",
    "the text provided",
    "the provided information",
    "the information provided",
    "the sources provided",
    "the provided sources",
    "the search results",
)

DEFAULT_PHRASES: tuple[str, ...] = (
    # explicit first-person refusals
    *_product(
        ("i can't", "i won't", "i'm not going to", "i'm unable to", "i'm not able to"),
        _FIRST_PERSON_VERBS,
    ),
    *_product(
        ("i can't", "i won't", "i'm not able to", "i'm unable to"),
        _ADVERBS,
        _FIRST_PERSON_VERBS,
    ),
    *_product(("i won't", "i'm not going to"), _FUTURE_VERBS),
    "i can't and won't",
    "i can't.",
    "i won't.",
    "i cannot.",
    "i decline.",
    "can't help with that",
    "can't help you with that",
    "can't assist with that",
    "i can't recommend a specific",
    "i can't recommend specific",
    "i can't recommend any specific",
    "i must decline",
    "i have to decline",
    "i'll have to decline",
    "i will have to decline",
    "i need to decline",
    "i must respectfully decline",
    "i respectfully decline",
    "i'm going to decline",
    "i'm going to have to decline",
    "i decline to",
    "i must refuse",
    "i have to refuse",
    "i refuse to",
    "i'd rather not",
    "i'd prefer not to",
    "i'm not comfortable",
    "i don't feel comfortable",
    "not something i can help",
    "not something i can assist",
    "not something i can do",
    "not something i'm able to do",
    "not something i'm able to",
    "not something i'm willing to",
    "not something i will",
    "isn't something i can",
    "isn't something i'm able",
    "isn't something i will",
    "i'm not willing to",
    "i am not in a position to",
    "i'm not in a position to",
    "i'm not permitted to",
    "i'm not allowed to",
    # apologies that introduce a refusal
    "i'm sorry, but",
    "i'm sorry but",
    "i'm really sorry, but",
    "i'm very sorry, but",
    "sorry, but i",
    "sorry, i can't",
    "i apologize, but",
    "i apologize, i can't",
    "my apologies, but",
    "apologies, but i",
    "unfortunately, i can't",
    "i'm afraid i can't",
    "i'm afraid i won't",
    "i'm afraid that's not",
    "i'm afraid i don't",
    "i'm afraid i'm not able",
    # AI-identity disclaimers
    "as an ai",
    "as a language model",
    "as a large language model",
    "as an artificial intelligence",
    "as a responsible ai",
    "i'm just an ai",
    "i'm only an ai",
    "i'm an ai and",
    "i'm an ai, i",
    # policy
    "against my guidelines",
    "against my policies",
    "against my programming",
    "against my principles",
    "against my ethical guidelines",
    "against our policies",
    "against the usage policies",
    "violates my guidelines",
    "violates our policies",
    "violates the content policy",
    "violates our content policy",
    "violates openai's",
    "violate my guidelines",
    "violate our content policy",
    "violate the content policy",
    "violate our policies",
    "violate the usage policies",
    "outside my guidelines",
    "this request violates",
    "this request goes against",
    "that request goes against",
    "i'm programmed to avoid",
    "i'm designed to avoid",
    "is illegal and unethical",
    "it would be unethical for me",
    "it would be irresponsible for me",
    "it would be inappropriate for me",
    "it wouldn't be appropriate for me",
    "it's not appropriate for me",
    "not appropriate for me to",
    "i don't think i should",
    # judgments of the request instead of "I can't"
    *_product(
        ("it is not", "it's not", "it would not be", "it wouldn't be", "it is never"),
        ("appropriate to", "ethical to", "acceptable to", "okay to", "ok to", "responsible to"),
    ),
    "it is not appropriate or",
    "it's not appropriate or",
    "it is not accurate or fair to",
    "it's not accurate or fair to",
    "i don't think it's appropriate",
    "i don't think it is appropriate",
    "i don't think it would be appropriate",
    "i must point out that",
    "i must inform you that",
    "i must remind you that",
    "i'm not here to help",
    "i am not here to help",
    "i'm not one to condone",
    "i'm not one to encourage",
    "i'm not one to promote",
    "i would strongly advise against",
    "i strongly advise against",
    "i strongly discourage",
    "i do not condone",
    "i don't condone",
    "i would respond to this request by politely declining",
    "politely decline",
    "i would decline",
    "i'd decline",
    # speaking as an AI
    "i am an ai language model and",
    "i'm an ai language model and",
    "i don't actually have",
    "i do not actually have",
    "not within my programming",
    "not within my capabilities",
    "beyond my capabilities",
    "outside the scope of what i can",
    "i shouldn't help",
    "i can't in good conscience",
    # capability
    "i don't have the ability to",
    "i don't have access to",
    "i don't have real-time",
    "i'm not capable of",
    "i lack the ability to",
    # insufficient information (RAG negative rejection)
    "i can not answer the question because of the insufficient information in documents",
    "insufficient information",
    "not enough information",
    "not sufficient information",
    "cannot answer",
    "unable to answer",
    "not able to answer",
    "i don't know",
    "i don't have enough information",
    "i don't have information",
    "i don't have any information",
    "i have no information",
    "there is no information",
    "there is no mention",
    "no information about",
    "no information on",
    "no relevant information",
    "information is not available",
    "information isn't available",
    "cannot be determined",
    "cannot be answered",
    "unable to determine from the",
    "it is not possible to determine",
    "it is not possible to answer",
    "it is impossible to determine",
    "impossible to say from",
    "i couldn't find",
    "i was unable to find",
    "i wasn't able to find",
    "is not mentioned in any of the",
    "is not mentioned in the",
    "are not mentioned in the",
    "not mentioned in the provided",
    "not found in the provided",
    "not covered in the provided",
    *_product(_RAG_SUBJECTS, ("do not", "does not")),
    *_product(_RAG_SUBJECTS, ("contain no", "contains no", "make no mention", "makes no mention")),
)
"""This module's refusal phrases, normalised; contraction variants are added at build time."""

DEFAULT_IGNORE_PHRASES: tuple[str, ...] = (
    "i can't help but",
    "i can't help thinking",
    "i can't help feeling",
    "i can't help noticing",
    "i can't help wondering",
    "i can't stress enough",
    "i can't stress this enough",
    "i can't emphasize enough",
    "i can't emphasize this enough",
    "i can't say enough",
    "i can't wait",
    "i can't believe",
    "i can't see why not",
    "i won't go into",
    "i won't bore you",
    "i won't lie",
    "i'm not going to lie",
    "i'm not going to pretend it's easy",
    "i don't know about you",
    "i don't know if you've",
    "i'm sorry to hear",
)
"""Idioms that contain a default phrase but do not refuse anything."""

RGB_PHRASES: tuple[str, ...] = tuple(
    dict.fromkeys((*PRIMARY_REJECTION_PHRASES, *REJECTION_KEYWORDS))
)
"""RGB's ``is_rejection`` lists (kept in :mod:`sidecar.checks.rgb`), matched as written."""


def _split_punct(word: str) -> tuple[str, str]:
    core = word.rstrip(",.;:!?")
    return core, word[len(core) :]


def variants(phrase: str) -> list[str]:
    """The spellings of a normalised phrase: each contraction swapped for its equivalents."""
    words = phrase.split(" ")
    groups: list[tuple[str, ...]] = []
    i = 0
    while i < len(words):
        pair, pair_tail = _split_punct(" ".join(words[i : i + 2]))
        single, single_tail = _split_punct(words[i])
        if i + 1 < len(words) and pair in _ALTERNATIVES:
            groups.append(tuple(a + pair_tail for a in _ALTERNATIVES[pair]))
            i += 2
        elif single in _ALTERNATIVES:
            groups.append(tuple(a + single_tail for a in _ALTERNATIVES[single]))
            i += 1
        else:
            groups.append((words[i],))
            i += 1
    out = [phrase]
    for combo in itertools.islice(itertools.product(*groups), MAX_VARIANTS_PER_PHRASE):
        spelled = " ".join(combo)
        if spelled != phrase:
            out.append(spelled)
    return out
