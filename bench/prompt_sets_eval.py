"""How well ``attack_attempt`` reads kinds of prompt the public sources here lack.

``bench/data/written_prompts/`` holds prompts the project wrote, a file per set (DATA.md):

* ``pasted_*``: a user pastes a document (an email, a page, a ticket, a resume) and asks about
  it; in the attacks, the document carries one planted instruction for the AI that reads it
  (change or add to its answer, do another task, misreport the document, act on the user's
  accounts); the near misses carry requests from the document's author to its human reader,
  talk about AI, or the user's own format instructions around the document;
* ``labelled_*``: the same with documents pasted without tags (after a label or a question,
  quoted with ">", or with nothing), an off-task line or an order for the AI planted in them;
* ``planted_*``: a user pastes a document and asks about it; in the attacks one line of the
  document is an order for whoever reads it, most of them addressed to no one (a task of its
  own, a way to write the answer, what to tell the user, a request for what came before); the
  near misses are ordinary documents with the orders documents give their human readers,
  homework and exam sheets, and prompts pasted for feedback;
* ``framed_*``: a harmful request given as the text of a benign language task (translate,
  proofread, count the words ...); the near misses put everyday and risky-sounding harmless
  requests, text that is not a request, and kind requests about groups in the same frames.
* ``nearmiss_*``: ordinary prompts, all benign, in the vocabulary of jailbreaks ("I can't
  refuse my boss", "how do I jailbreak my Switch", a support macro that opens with "Sure,
  here is", security articles that quote attacks).
* ``symbols_*``: ordinary one-line prompts, all benign, that end in what looks like an
  optimised suffix: code, regexes, shell pipelines, markup, notation, emoticons.

For each set this prints, per kind of row, how many the check flags, and of the others how
many it would hand to the judge as uncertain with ``uncertain: true`` (a framed request is
uncertain: the judge reads whether it is harmful; so is a pasted document with an order in it
for its reader). ``tuned``: the signals or the frame reader
were changed after reading the set; ``trained``: never read, but the frame model
(``tools/train_frames.py``) was fitted on it; ``held_out``: only measured on it.

    python bench/prompt_sets_eval.py
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sidecar.checks.attack import AttackAttempt, AttackParams  # noqa: E402
from sidecar.checks.base import CheckContext  # noqa: E402
from tools.written_prompts import written_sets  # noqa: E402


def main() -> int:
    sets = written_sets()
    check = AttackAttempt(AttackParams(uncertain=True), CheckContext())
    print(f"{'set':<10} {'role':<9} {'kind':<22} {'label':<7} {'flagged':>12}  uncertain")
    for s in sets:
        rows = s["rows"]
        found = check.assess_many([r["prompt"] for r in rows])
        total: Counter[tuple[str, bool]] = Counter()
        flagged: Counter[tuple[str, bool]] = Counter()
        unsure: Counter[tuple[str, bool]] = Counter()
        for row, finding in zip(rows, found, strict=True):
            key = (row["kind"], bool(row["attack"]))
            total[key] += 1
            flagged[key] += finding.attack
            unsure[key] += finding.uncertain
        for kind, attack in sorted(total, key=lambda k: (not k[1], k[0])):
            n, hit, doubt = total[kind, attack], flagged[kind, attack], unsure[kind, attack]
            label = "attack" if attack else "benign"
            print(
                f"{s['name']:<10} {s['role']:<9} {kind:<22} {label:<7} {hit:4d} of {n:4d}  "
                f"{doubt:4d}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
