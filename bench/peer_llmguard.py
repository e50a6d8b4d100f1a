"""llm-sidecar against llm-guard's light output scanners, on the same events, in one run.

    python bench/peer_llmguard.py EVENTS.jsonl [--peer-python /tmp/lg/bin/python]
        [--rules rules.yaml] [--limit N] [--repeat 3]

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

Two comparisons, each printing both rates (best of ``--repeat`` runs, by the clock and per CPU
second of the process, the steadier figure on a shared machine) and their ratio:

- *as replay runs*, the one the target is judged on: llm-sidecar decodes each raw line, checks
  it and writes its verdict's JSON; llm-guard's ``scan_output`` gets events parsed before its
  clock starts and writes nothing. This counts work on our side that the other side skips.
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

import yaml

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
out = {"events": len(docs)}
for name, run in (("parsed", parsed), ("raw", raw)):
    best = cpu = float("inf")
    for _ in range(int(sys.argv[4])):
        started, used = time.perf_counter(), time.process_time()
        run()
        best = min(best, time.perf_counter() - started)
        cpu = min(cpu, time.process_time() - used)
    out[name] = {"seconds": best, "cpu_seconds": cpu}
print(json.dumps(out))
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


def sidecar_rate(
    events: Path, rules: Path, limit: int, repeat: int, *, tuned: bool = True, encode: bool = True
) -> tuple[int, float, float]:
    """Events, best seconds and best CPU seconds of checking every event of ``events``
    from its raw line: decode and check, and with ``encode`` write each verdict's JSON."""
    from sidecar.heap import settle_heap
    from sidecar.pipeline import Pipeline
    from sidecar.rules import load_rules
    from sidecar.sources.file import read_batches

    pipeline = Pipeline(load_rules([rules]))
    with events.open("rb") as f:
        batches = list(read_batches(f, str(events), 500))
    records = [r for b in batches for r in b][:limit]
    batches = [records[i : i + 500] for i in range(0, len(records), 500)]
    if tuned:
        settle_heap()  # as replay does once its rules are loaded
    best = cpu = float("inf")
    for _ in range(repeat):
        started, used = time.perf_counter(), time.process_time()
        for batch in batches:
            verdicts, _, _ = pipeline.process(batch, max_event_bytes=1_048_576)
            if encode:
                b"".join(v.to_json() + b"\n" for v in verdicts)
        best = min(best, time.perf_counter() - started)
        cpu = min(cpu, time.process_time() - used)
    return len(records), best, cpu


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("events", type=Path)
    ap.add_argument("--peer-python", default=sys.executable)
    ap.add_argument("--rules", type=Path)
    ap.add_argument("--limit", type=int, default=10**9)
    ap.add_argument("--repeat", type=int, default=3)
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
    tuned = not args.untuned
    ours = {
        "replay": sidecar_rate(args.events, rules, args.limit, args.repeat, tuned=tuned),
        "checks": sidecar_rate(
            args.events, rules, args.limit, args.repeat, tuned=tuned, encode=False
        ),
    }
    peer = subprocess.run(
        [
            args.peer_python,
            "-c",
            PEER,
            str(args.events),
            json.dumps(peer_rules(rules)),
            str(args.limit),
            str(args.repeat),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=3600,
        check=False,
    )
    if peer.returncode != 0:
        print(peer.stderr[-2000:], file=sys.stderr)
        return 1
    got = json.loads(peer.stdout.strip().splitlines()[-1])
    # What each side's timed loop does; the first pair is the one the target is judged on.
    pairs = (
        ("as replay runs (ours: decode, check, write verdict JSON; llm-guard: scan_output "
         "on events parsed before the clock)", "replay", "parsed"),
        ("both from the raw line (ours: decode, check; llm-guard: json.loads, scan_output; "
         "neither writes its results)", "checks", "raw"),
    )  # fmt: skip
    for title, mine, theirs_key in pairs:
        n, seconds, cpu = ours[mine]
        theirs = got[theirs_key]
        a, a_cpu = n / seconds, n / cpu
        b, b_cpu = got["events"] / theirs["seconds"], got["events"] / theirs["cpu_seconds"]
        print(title)
        print(f"  llm-sidecar ({rules.name}):  {a:>9,.0f} events/s ({n} events; "
              f"{a_cpu:,.0f} per CPU second)")  # fmt: skip
        print(f"  llm-guard scan_output:        {b:>9,.0f} events/s ({got['events']} events; "
              f"{b_cpu:,.0f} per CPU second)")  # fmt: skip
        print(
            f"  ratio llm-sidecar/llm-guard:  {a / b:>9.1f} (per CPU second: {a_cpu / b_cpu:.1f})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
