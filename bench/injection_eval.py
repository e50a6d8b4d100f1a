"""How well ``attack_attempt`` finds orders to an AI reader in retrieved passages.

No public data set here holds indirect prompt injections of the kind a retriever brings back
(a note to AI screeners in a resume, an HTML comment to the LLM in a product page), so the
project wrote its own: ``bench/data/injected_passages.json``, passages with one injected order
each and passages that are not injections, many of them near misses (runbooks for human agents,
policy on AI tools, developer docs for AI products, emails to people called Claude; in
``answers_a``, documents that tell their human reader what to put in their own answer). Each set
says whether the signals were written while reading it (``tuned``) or only measured on it
(``held_out``): only the held-out figures say how the check does on text it has not seen.

For each set this prints how many injections the check finds and how many benign passages it
flags, read as passages (``field: contexts``, the rag pack's ``contexts-not-injected``) and read
as prompts (the default pack), and what the document patterns cost beside the signals every
text gets.

    python bench/injection_eval.py
    python bench/injection_eval.py --treebanks DIR   # benign text in other languages at scale
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sidecar.checks.attack import AttackAttempt, AttackParams  # noqa: E402
from sidecar.checks.attack_documents import document_signals  # noqa: E402
from sidecar.checks.attack_signals import signals  # noqa: E402
from sidecar.checks.base import CheckContext  # noqa: E402
from sidecar.checks.refusal_text import fold  # noqa: E402

DATA = ROOT / "bench" / "data" / "injected_passages.json"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--treebanks",
        type=Path,
        help="a directory of Universal Dependencies treebanks (.conllu files, at any depth): "
        "their sentences, alone and four to a passage, read as passages (benign text at scale)",
    )
    args = parser.parse_args()
    sets = json.loads(DATA.read_text(encoding="utf-8"))["sets"]
    check = AttackAttempt(AttackParams(), CheckContext())
    if args.treebanks:
        return treebanks(check, args.treebanks)
    print(f"{'set':<12} {'role':<9} {'read as':<9} {'injections found':>18} {'benign flagged':>16}")
    for s in sets:
        attacks, benign = s["attack"], s["benign"]
        for mode, documents in (("passages", True), ("prompts", False)):
            found = sum(f.attack for f in check.assess_many(attacks, documents=documents))
            flagged = sum(f.attack for f in check.assess_many(benign, documents=documents))
            print(
                f"{s['name']:<12} {s['role']:<9} {mode:<9} "
                f"{found:>5} of {len(attacks):<3} {_rate(found, len(attacks))} "
                f"{flagged:>4} of {len(benign):<3} {_rate(flagged, len(benign))}"
            )
    languages(check, [s for s in sets if "attack_languages" in s])
    print()
    english = [t for s in sets if "attack_languages" not in s for t in s["attack"] + s["benign"]]
    others = [t for s in sets if "attack_languages" in s for t in s["attack"] + s["benign"]]
    cost(f"the {len(english)} passages in English", english)
    cost(f"the {len(others)} passages in other languages", others)
    return 0


def _rate(hit: int, n: int) -> str:
    return f"{hit / n:5.3f}" if n else "  -  "


def cost(what: str, texts: list[str]) -> None:
    """What the document patterns cost beside the signals every passage gets (best of 7, the
    two in turn so that a drift of the machine's speed reaches both)."""
    folded = [fold(t) for t in texts]
    kb = sum(map(len, texts)) / 1000

    def timed(run: Callable[[], object]) -> float:
        started = time.perf_counter()
        run()
        return (time.perf_counter() - started) * 1e6

    documents, worded = float("inf"), float("inf")
    for _ in range(7):
        documents = min(documents, timed(lambda: [document_signals(f) for f in folded]))
        worded = min(worded, timed(lambda: list(map(signals, texts, folded))))
    busy = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"cost on {what} ({kb:.0f} KB; best of 7, load average {busy:.1f}): the document "
        f"patterns {documents / kb:.1f} us per KB, the signals every text gets "
        f"{worded / kb:.1f} us per KB"
    )


def treebanks(check: AttackAttempt, root: Path) -> int:
    """How many sentences and passages of news, wiki and web text in other languages the check
    flags when they are read as retrieved passages, and when they are read as prompts."""
    files = sorted(root.rglob("*.conllu"))
    if not files:
        print(f"no .conllu file under {root}", file=sys.stderr)
        return 2
    total = flagged = as_prompts = 0
    passages: list[str] = []
    for path in files:
        lines = [
            line[len("# text = ") :].strip()
            for line in path.read_text(encoding="utf-8").splitlines()
            if line.startswith("# text = ")
        ]
        four = [" ".join(lines[i : i + 4]) for i in range(0, len(lines), 4)]
        passages += four
        texts = lines + four
        hits = [
            t
            for t, f in zip(texts, check.assess_many(texts, documents=True), strict=True)
            if f.attack
        ]
        prompt_hits = [t for t, f in zip(texts, check.assess_many(texts), strict=True) if f.attack]
        total, flagged = total + len(texts), flagged + len(hits)
        as_prompts += len(prompt_hits)
        print(
            f"{path.name:<32} {len(texts):>6} read {len(hits):>4} flagged as passages"
            f" {len(prompt_hits):>4} as prompts"
        )
        for text in (hits + prompt_hits)[:3]:
            print(f"    {text[:150]}")
    print(f"all: {total} read, {flagged} flagged as passages, {as_prompts} as prompts")
    cost("their passages of four sentences", passages)
    return 0


def languages(check: AttackAttempt, sets: list[dict[str, Any]]) -> None:
    """Read as passages, each language of the sets written in other languages than English."""
    if not sets:
        return
    print("\nread as passages, by language (the sets written in other languages)")
    print(f"{'set':<12} {'role':<9} " + " ".join(f"{c:>9}" for c in _codes(sets)))
    for s in sets:
        cells = []
        for code in _codes(sets):
            attacks = [
                t for t, c in zip(s["attack"], s["attack_languages"], strict=True) if c == code
            ]
            benign = [
                t for t, c in zip(s["benign"], s["benign_languages"], strict=True) if c == code
            ]
            if not attacks and not benign:
                cells.append(f"{'-':>9}")
                continue
            found = sum(f.attack for f in check.assess_many(attacks, documents=True))
            flagged = sum(f.attack for f in check.assess_many(benign, documents=True))
            cells.append(f"{found:>2}/{len(attacks):<2} {flagged:>1}/{len(benign):<2}")
        print(f"{s['name']:<12} {s['role']:<9} " + " ".join(cells))
    print("(each cell: injections found / written, benign passages flagged / written)")


def _codes(sets: list[dict[str, Any]]) -> list[str]:
    return sorted({c for s in sets for c in s["attack_languages"] + s["benign_languages"]})


if __name__ == "__main__":
    sys.exit(main())
