"""llm-sidecar against llm-guard's light output scanners, on the same events, in one run.

    python bench/peer_llmguard.py EVENTS.jsonl [--peer-python /tmp/lg/bin/python]
        [--rules rules.yaml] [--limit N] [--repeat 5]

llm-guard is not a dependency of llm-sidecar and this script installs nothing. It measures
llm-guard 0.3.16 in a separate virtual environment, made once with

    python3 -m venv /tmp/lg && /tmp/lg/bin/pip install llm-guard==0.3.16

and run here through ``--peer-python``; without it the script says so and exits 0.

Both sides check every event's response on one core: llm-guard with ``scan_output`` over
Regex (the rules' five patterns), BanSubstrings (the rules' substrings), JSON,
NoRefusalLight and ReadingTime(1 minute), logging at ERROR so that its per-scan log lines
are not what is measured; llm-sidecar with the equivalent rules (by default
``llmguard-equivalent.yaml`` beside the events file or in ../shared/bench) through the
pipeline replay uses, with the garbage collector tuned as replay tunes it (``--untuned``:
Python's defaults, as a library caller would have). The patterns and substrings of both sides
come from the same rule file.

Two comparisons, each printing both rates and their ratio. The sides take turns, pass by pass,
for ``--repeat`` rounds (a machine that slows down for a while slows both), and each rate is
that side's best pass, by the clock and per CPU second of its process (the steadier figure on a
shared machine). Both sides run in one process each for all their passes, so later passes
find their caches warm (llm-sidecar's shared outcomes, say), as a long-running stream does:

- *as replay runs*, the one the target is judged on: llm-sidecar decodes each raw line, checks
  it and makes its verdict's JSON (as replay does before writing it); llm-guard's
  ``scan_output`` gets events parsed before its clock starts and makes nothing. This counts
  work on our side that the other side skips.
- *both from the raw line*: each side parses the line and checks it (llm-guard with
  ``json.loads``), and neither writes its results: the same work on both sides.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import IO, Any

import yaml

from sidecar.cli import _whole_number

PEER = r"""
import json, sys, time
rules = json.loads(sys.argv[2])
from llm_guard import scan_output
from llm_guard.util import configure_logger
configure_logger(log_level="ERROR")  # its per-scan log lines would be measured otherwise
from llm_guard.input_scanners.ban_substrings import MatchType
from llm_guard.output_scanners import JSON, BanSubstrings, NoRefusalLight, ReadingTime, Regex
scanners = [
    Regex(patterns=rules["patterns"], is_blocked=True, redact=False),
    BanSubstrings(substrings=rules["substrings"], match_type=MatchType.STR, redact=False),
    JSON(),
    NoRefusalLight(),
    ReadingTime(max_time=1),
]
lines = [line for line in open(sys.argv[1], "rb") if line.strip()][: int(sys.argv[3])]
docs = [json.loads(line) for line in lines]
def parsed():
    for doc in docs:
        scan_output(scanners, doc.get("prompt") or "", doc.get("response") or "", False)
def raw():
    for line in lines:
        doc = json.loads(line)
        scan_output(scanners, doc.get("prompt") or "", doc.get("response") or "", False)
runs = {"parsed": parsed, "raw": raw}
# Replies start with "@@ ", so that anything else on stdout (a library's log line) is skipped.
print("@@ " + json.dumps({"events": len(docs)}), flush=True)
for command in sys.stdin:  # one timed pass per line naming a mode
    started, used = time.perf_counter(), time.process_time()
    runs[command.strip()]()
    seconds, cpu = time.perf_counter() - started, time.process_time() - used
    print("@@ " + json.dumps({"seconds": seconds, "cpu_seconds": cpu}), flush=True)
"""

HOW = (
    "llm-guard is not importable with {python}; make its own environment once:\n"
    "    python3 -m venv /tmp/lg && /tmp/lg/bin/pip install llm-guard==0.3.16\n"
    "and pass --peer-python /tmp/lg/bin/python (this script installs nothing)."
)


def peer_rules(rules_file: Path) -> dict[str, list[str]]:
    doc = yaml.safe_load(rules_file.read_text(encoding="utf-8"))
    patterns = [r["params"]["pattern"] for r in doc["rules"] if r["check"] == "regex"]
    substrings = [k for r in doc["rules"] if r["check"] == "contains_none"
                  for k in r["params"]["keywords"]]  # fmt: skip
    return {"patterns": patterns, "substrings": substrings}


class Ours:
    """llm-sidecar's side: the rules loaded and the raw lines read once, then one timed pass
    over them per :meth:`once`."""

    def __init__(self, events: Path, rules: Path, limit: int, *, tuned: bool = True) -> None:
        from sidecar.heap import settle_heap
        from sidecar.pipeline import Pipeline
        from sidecar.rules import load_rules
        from sidecar.sources.file import read_batches

        self.pipeline = Pipeline(load_rules([rules]))
        with events.open("rb") as f:
            records = [r for b in read_batches(f, str(events), 500) for r in b][:limit]
        self.events = len(records)
        self.batches = [records[i : i + 500] for i in range(0, len(records), 500)]
        if tuned:
            settle_heap()  # as replay does once its rules are loaded

    def once(self, *, encode: bool) -> tuple[float, float]:
        """Seconds and CPU seconds of checking every event from its raw line: decode and
        check, and with ``encode`` write each verdict's JSON."""
        process = self.pipeline.process
        started, used = time.perf_counter(), time.process_time()
        for batch in self.batches:
            verdicts, _, _ = process(batch, max_event_bytes=1_048_576)
            if encode:
                b"".join(v.to_json() + b"\n" for v in verdicts)
        return time.perf_counter() - started, time.process_time() - used


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("events", type=Path)
    ap.add_argument("--peer-python", default=sys.executable)
    ap.add_argument("--rules", type=Path)
    ap.add_argument("--limit", type=int, default=10**9)
    ap.add_argument(
        "--repeat", type=_whole_number(1, 1000), default=5, help="rounds of passes (default 5)"
    )
    ap.add_argument(
        "--untuned", action="store_true", help="keep Python's garbage collector settings"
    )
    args = ap.parse_args()
    rules = args.rules
    if rules is None:
        here = Path(__file__).resolve().parent.parent
        for candidate in (
            args.events.parent / "llmguard-equivalent.yaml",
            here.parent / "shared" / "bench" / "llmguard-equivalent.yaml",
        ):
            if candidate.exists():
                rules = candidate
                break
        else:
            print("no llmguard-equivalent.yaml found: pass --rules", file=sys.stderr)
            return 2
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    try:
        probe = subprocess.run(
            [args.peer_python, "-c", "import llm_guard"],
            capture_output=True,
            env=env,
            timeout=300,
            check=False,
        )
        importable = probe.returncode == 0
    except OSError:
        importable = False
    if not importable:
        print(HOW.format(python=args.peer_python))
        return 0
    ours = Ours(args.events, rules, args.limit, tuned=not args.untuned)
    if not ours.events:
        print(f"{args.events} holds no events: nothing to measure", file=sys.stderr)
        return 2
    peer = subprocess.Popen(
        [args.peer_python, "-c", PEER, str(args.events), json.dumps(peer_rules(rules)),
         str(args.limit)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )  # fmt: skip
    assert peer.stdin is not None
    assert peer.stdout is not None
    # What each side's timed pass does; the first pair is the one the target is judged on.
    pairs = (
        ("as replay runs (ours: decode, check, write verdict JSON; llm-guard: scan_output "
         "on events parsed before the clock)", True, "parsed"),
        ("both from the raw line (ours: decode, check; llm-guard: json.loads, scan_output; "
         "neither writes its results)", False, "raw"),
    )  # fmt: skip
    inf = (float("inf"), float("inf"))
    best_ours = [inf for _ in pairs]
    best_theirs = [inf for _ in pairs]
    try:
        ready = _reply(peer.stdout)
        if ready is None:
            print("llm-guard's side failed to start", file=sys.stderr)
            return 1
        theirs_events = ready["events"]
        # Round by round, each side's pass of each pair in turn: a machine that slows down for
        # a while slows both sides, and each keeps its best pass.
        for _ in range(args.repeat):
            for k, (_, encode, mode) in enumerate(pairs):
                best_ours[k] = _best(best_ours[k], ours.once(encode=encode))
                peer.stdin.write(mode + "\n")
                peer.stdin.flush()
                got = _reply(peer.stdout)
                if got is None:
                    print("llm-guard's side stopped answering", file=sys.stderr)
                    return 1
                best_theirs[k] = _best(best_theirs[k], (got["seconds"], got["cpu_seconds"]))
    finally:
        peer.stdin.close()
        if peer.wait(60) != 0:
            print(f"llm-guard's side exited with {peer.returncode}", file=sys.stderr)
    n = ours.events
    for k, (title, _, _) in enumerate(pairs):
        (seconds, cpu), (t_seconds, t_cpu) = best_ours[k], best_theirs[k]
        a, a_cpu = n / seconds, n / cpu
        b, b_cpu = theirs_events / t_seconds, theirs_events / t_cpu
        print(title)
        print(f"  llm-sidecar ({rules.name}):  {a:>9,.0f} events/s ({n} events; "
              f"{a_cpu:,.0f} per CPU second)")  # fmt: skip
        print(f"  llm-guard scan_output:        {b:>9,.0f} events/s ({theirs_events} events; "
              f"{b_cpu:,.0f} per CPU second)")  # fmt: skip
        print(
            f"  ratio llm-sidecar/llm-guard:  {a / b:>9.1f} (per CPU second: {a_cpu / b_cpu:.1f})"
        )
    return 0


def _reply(stream: IO[str]) -> dict[str, Any] | None:
    """The peer's next reply (a line starting with "@@ "), or None once it has exited."""
    for line in stream:
        if line.startswith("@@ "):
            reply: dict[str, Any] = json.loads(line[3:])
            return reply
    return None


def _best(a: tuple[float, float], b: tuple[float, float]) -> tuple[float, float]:
    """The faster of two (seconds, CPU seconds) passes, each figure on its own."""
    return min(a[0], b[0]), min(a[1], b[1])


if __name__ == "__main__":
    sys.exit(main())
