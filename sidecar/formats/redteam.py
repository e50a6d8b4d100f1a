"""Other red-team tools' output as events: garak's report JSONL and promptfoo's results file.

``replay --format garak|promptfoo`` reads them, so their attacks are scored by the same rules
and windows as ``llm-sidecar probe``'s. Each answered attempt becomes one event per output,
with ``attack`` (category, technique, rank) and ``labels.origin = "probe"``; the mapping of
their probes and strategies onto the three categories is :data:`GARAK_CATEGORIES` and
:data:`PROMPTFOO_CATEGORIES` (a table in docs/probe.md). A record that is not an answered
attempt is counted by reason, never fatal.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

import orjson

__all__ = [
    "GARAK_CATEGORIES",
    "PROMPTFOO_CATEGORIES",
    "RANKS",
    "from_garak",
    "from_promptfoo",
]

RANKS: Final = {"basic": 4, "intermediate": 3, "advanced": 2}

GARAK_CATEGORIES: Final[Mapping[str, str]] = {
    # direct requests and plain injections
    "promptinject": "basic",
    "goodside": "basic",
    "lmrc": "basic",
    "donotanswer": "basic",
    "realtoxicityprompts": "basic",
    "continuation": "basic",
    "misleading": "basic",
    "snowball": "basic",
    "packagehallucination": "basic",
    "malwaregen": "basic",
    "topic": "basic",
    "divergence": "basic",
    "leakreplay": "basic",
    "av_spam_scanning": "basic",
    "test": "basic",
    # natural-language pre-conditioning: personas, role play, framing, hidden instructions
    "dan": "intermediate",
    "grandma": "intermediate",
    "phrasing": "intermediate",
    "latentinjection": "intermediate",
    "tap": "intermediate",
    "atkgen": "intermediate",
    # encodings, token-level and format tricks
    "encoding": "advanced",
    "glitch": "advanced",
    "suffix": "advanced",
    "gcg": "advanced",
    "ansiescape": "advanced",
    "fileformats": "advanced",
    "visual_jailbreak": "advanced",
    "xss": "advanced",
}
"""garak probe module -> attack category; a module not listed counts as ``basic``."""

PROMPTFOO_CATEGORIES: Final[Mapping[str, str]] = {
    "basic": "basic",
    "": "basic",
    "jailbreak": "intermediate",
    "jailbreak:composite": "intermediate",
    "prompt-injection": "intermediate",
    "crescendo": "intermediate",
    "goat": "intermediate",
    "citation": "intermediate",
    "jailbreak:likert": "intermediate",
    "jailbreak:tree": "advanced",
    "best-of-n": "advanced",
    "base64": "advanced",
    "hex": "advanced",
    "rot13": "advanced",
    "leetspeak": "advanced",
    "homoglyph": "advanced",
    "multilingual": "advanced",
    "math-prompt": "advanced",
    "camelcase": "advanced",
    "morse": "advanced",
    "piglatin": "advanced",
    "emoji": "advanced",
}
"""promptfoo red-team strategy id -> attack category; a strategy not listed counts as
``intermediate`` (promptfoo's strategies transform a plain attack)."""

_LEAKAGE_PLUGINS: Final = ("prompt-extraction", "system-prompt-override")


def _text(value: Any) -> str | None:
    """A prompt or output as text: a string, ``{"text": ...}``, or garak's turns."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        if isinstance(value.get("text"), str):
            return str(value["text"])
        turns = value.get("turns")
        if isinstance(turns, list):
            for turn in turns:
                if isinstance(turn, dict) and turn.get("role", "user") == "user":
                    return _text(turn.get("content"))
        if "content" in value:
            return _text(value["content"])
    return None


def _event(
    eid: str, prompt: str, response: str, category: str, technique: str, labels: dict[str, Any]
) -> dict[str, Any]:
    return {
        "id": eid,
        "prompt": prompt,
        "response": response,
        "attack": {"category": category, "technique": technique, "rank": RANKS[category]},
        "labels": {"origin": "probe", **labels},
    }


def from_garak(lines: Iterable[bytes]) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """Events from a garak report (JSONL), and the lines left out by reason.

    garak writes an attempt when its outputs arrive and again once detectors scored it: the
    last line of each attempt (by ``uuid``) is the one kept.
    """
    attempts: dict[str, dict[str, Any]] = {}
    skipped: dict[str, int] = {}

    def skip(reason: str) -> None:
        skipped[reason] = skipped.get(reason, 0) + 1

    for line in lines:
        if not line.strip():
            continue
        try:
            doc = orjson.loads(line)
        except orjson.JSONDecodeError:
            skip("not JSON")
            continue
        if not isinstance(doc, dict):
            skip("not an object")
            continue
        if doc.get("entry_type") != "attempt":
            skip(f"entry_type {doc.get('entry_type')!s}"[:60])
            continue
        key = str(doc.get("uuid") or f"seq-{doc.get('seq')}-{len(attempts)}")
        attempts[key] = doc
    events = []
    for key, doc in attempts.items():
        prompt = _text(doc.get("prompt"))
        outputs = doc.get("outputs")
        probe = doc.get("probe_classname")
        if prompt is None or not isinstance(outputs, list) or not isinstance(probe, str):
            skip("attempt without prompt, outputs or probe_classname")
            continue
        module = probe.split(".", 1)[0]
        category = GARAK_CATEGORIES.get(module, "basic")
        answered = 0
        for i, output in enumerate(outputs):
            text = _text(output)
            if text is None:
                continue
            answered += 1
            labels = {"vector": probe, "run": "garak", "tool": "garak"}
            events.append(_event(f"garak-{key}-{i}", prompt, text, category, probe, labels))
        if not answered:
            skip("attempt without an output")
    return events, skipped


def from_promptfoo(raw: bytes) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """Events from a promptfoo results file (``promptfoo eval -o results.json``), and the
    results left out by reason.

    Raises:
        ValueError: the file is not a promptfoo results document.
    """
    try:
        doc = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise ValueError(f"not JSON: {exc}") from None
    results: Any = doc.get("results") if isinstance(doc, dict) else None
    if isinstance(results, dict):
        results = results.get("results")
    if not isinstance(results, list):
        raise ValueError("no results list (expected results.results, as promptfoo writes it)")
    events = []
    skipped: dict[str, int] = {}
    for n, r in enumerate(results):
        if not isinstance(r, dict):
            skipped["not an object"] = skipped.get("not an object", 0) + 1
            continue
        response = r.get("response")
        output = response.get("output") if isinstance(response, dict) else None
        prompt = (
            _text((r.get("prompt") or {}).get("raw")) if isinstance(r.get("prompt"), dict) else None
        )
        if prompt is None:
            prompt = _text(r.get("prompt"))
        if not isinstance(output, str) or prompt is None:
            reason = "no response output" if prompt is not None else "no prompt"
            skipped[reason] = skipped.get(reason, 0) + 1
            continue
        meta: dict[str, Any] = {}
        case = r.get("testCase")
        if isinstance(case, dict) and isinstance(case.get("metadata"), dict):
            meta = case["metadata"]
        elif isinstance(r.get("metadata"), dict):
            meta = r["metadata"]
        strategy = str(meta.get("strategyId") or "")
        plugin = str(meta.get("pluginId") or "unknown")
        category = PROMPTFOO_CATEGORIES.get(strategy, "intermediate")
        technique = f"{plugin}/{strategy or 'basic'}"
        labels: dict[str, Any] = {"vector": technique, "run": "promptfoo", "tool": "promptfoo"}
        if plugin in _LEAKAGE_PLUGINS:
            labels["kind"] = "leakage"
        eid = str(r.get("id") or f"{doc.get('evalId', 'promptfoo')}-{n}")
        events.append(_event(f"promptfoo-{eid}", prompt, output, category, technique, labels))
    return events, skipped
