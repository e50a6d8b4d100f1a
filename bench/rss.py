"""Resident memory over many events: decode, checks, windows, metrics and a scrape per 100k.

    python bench/rss.py EVENTS.jsonl [--events 1000000] [--rules rules/default.yaml]
                        [--untuned-gc] [--no-reload]

Feeds the file's records again and again (in batches of 500, as a source would) through the
pipeline, the rolling windows and the Prometheus counters, renders /metrics every 100,000
events, and prints the resident set size at each of those points: it should stay flat.
The garbage collector is tuned as ``llm-sidecar run`` tunes it (``limits.tune_gc``), and at
each of those points the rules are reloaded as a rule-file change would (a new pipeline, the
heap settled again), so RSS also shows whether replaced rules are freed.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from prometheus_client import CollectorRegistry

from sidecar.heap import release_memory, settle_heap
from sidecar.metrics import SidecarMetrics, render
from sidecar.pipeline import Pipeline
from sidecar.rules import load_rules
from sidecar.sources.base import Record
from sidecar.windows import Windows

REPO = Path(__file__).resolve().parent.parent


def rss_mib() -> float:
    with open("/proc/self/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("events", type=Path)
    ap.add_argument("--events", dest="total", type=int, default=1_000_000)
    ap.add_argument("--rules", type=Path, default=REPO / "rules" / "default.yaml")
    ap.add_argument("--untuned-gc", action="store_true", help="Python's default collector")
    ap.add_argument("--no-reload", action="store_true", help="keep one pipeline throughout")
    args = ap.parse_args()
    raw = [line for line in args.events.read_bytes().splitlines() if line.strip()]
    ruleset = load_rules([args.rules])
    pipeline = Pipeline(ruleset)
    registry = CollectorRegistry()
    metrics = SidecarMetrics(registry)
    metrics.bind_rules(ruleset.rules, ruleset.version)
    windows = Windows(registry=registry)
    windows.bind_rules(ruleset.rules, ruleset.version)
    if not args.untuned_gc:
        settle_heap()
    done, marks, started = 0, [], time.perf_counter()
    while done < args.total:
        for i in range(0, len(raw), 500):
            records = [
                Record(value=v, topic="t", partition=0, offset=done + k)
                for k, v in enumerate(raw[i : i + 500])
            ]
            verdicts, _, stats = pipeline.process(records, max_event_bytes=1_048_576)
            metrics.observe_batch(stats, verdicts)
            windows.observe_verdicts(verdicts)
            for v in verdicts:
                v.to_json()
            done += len(records)
            if done % 100_000 < len(records):
                render(registry)
                marks.append((done, rss_mib()))
                if not args.no_reload:  # what App.reload does
                    ruleset = load_rules([args.rules])
                    pipeline = Pipeline(ruleset)
                    metrics.bind_rules(ruleset.rules, ruleset.version)
                    windows.bind_rules(ruleset.rules, ruleset.version)
                    if not args.untuned_gc:
                        settle_heap()
                    release_memory(collect=args.untuned_gc)
            if done >= args.total:
                break
    spread = (max(r for _, r in marks) / min(r for _, r in marks) - 1) * 100
    print(
        f"{done} events in {time.perf_counter() - started:.0f} s; RSS (MiB) every 100k: "
        + ", ".join(f"{r:.0f}" for _, r in marks)
        + f"; spread {spread:.1f} %"
    )


if __name__ == "__main__":
    main()
