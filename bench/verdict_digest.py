"""A digest of the verdicts of a stream under each rule pack, to compare two versions.

    python bench/verdict_digest.py [EVENTS.jsonl ...] [--rules PACK ...]

Runs every bundled pack (or the ``--rules`` given) over each stream (the bundled sample by
default) exactly as ``llm-sidecar replay --out`` writes verdicts, and prints one SHA-256 per
stream and pack. Run it on two checkouts: equal digests mean byte-identical verdicts (verdicts
carry no timings). ``git stash; python bench/verdict_digest.py; git stash pop`` is enough.

It puts its own repository first on ``sys.path``, so it digests the checkout it is in, from
any directory and without ``PYTHONPATH``, whichever version of llm-sidecar is installed.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from sidecar.pipeline import Pipeline  # noqa: E402
from sidecar.rules import load_rules  # noqa: E402
from sidecar.sources.file import read_batches  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("events", type=Path, nargs="*", default=[REPO / "samples" / "events.jsonl"])
    ap.add_argument("--rules", type=Path, action="append")
    args = ap.parse_args()
    packs = args.rules or sorted((REPO / "rules").glob("*.yaml"))
    for stream in args.events:
        for pack in packs:
            pipeline = Pipeline(load_rules([pack]))
            digest = hashlib.sha256()
            with stream.open("rb") as f:
                for batch in read_batches(f, str(stream), 500):
                    verdicts, _, _ = pipeline.process(batch, max_event_bytes=1_048_576)
                    for v in verdicts:
                        digest.update(v.to_json() + b"\n")
            print(f"{digest.hexdigest()[:16]}  {stream.name}  {pack.name}")


if __name__ == "__main__":
    main()
