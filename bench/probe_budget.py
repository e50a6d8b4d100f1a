"""How fast does ``llm-sidecar probe`` go through the library, and does its budget hold?

Both against the scripted target on loopback, which answers at once (the worst case for a
budget: nothing but the budget slows the prober down).

    python bench/probe_budget.py [--seconds 60] [--rate 36000]

Prints the library's load time, the time of a ``--once`` pass over the whole bundled library
at 360,000 probes/hour, and for a continuous run of ``--seconds`` at ``--rate`` probes/hour
(jitter 0.2): requests made, the most in any window of a tenth of a minute (against what the
budget allows in it) and the shortest gap between two requests.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import time
from typing import Any

from sidecar.probe.attacks import load_library
from sidecar.probe.runner import Prober
from sidecar.settings import Settings
from sidecar.testing import ScriptedTarget


class _Count:
    def __init__(self) -> None:
        self.n = 0

    async def write(self, event: dict[str, Any]) -> None:
        self.n += 1


def _settings(target: ScriptedTarget, rate: float, jitter: float) -> Settings:
    return Settings(
        system_prompts={"s": "You are the support assistant of Acme Bikes. " * 4},
        probe={
            "base_url": target.base_url,
            "system_prompt_id": "s",
            "probes_per_hour": rate,
            "jitter": jitter,
            "concurrency": 8,
        },
    )


async def main(seconds: float, rate: float) -> None:
    started = time.perf_counter()
    library = load_library()
    print(f"library: {len(library.vectors)} vectors loaded in {time.perf_counter() - started:.2f}s")
    async with ScriptedTarget() as target:
        prober = Prober(_settings(target, 360_000, 0.0), library, _Count(), seed=1)
        started = time.perf_counter()
        await prober.run(asyncio.Event(), once=True)
        took = time.perf_counter() - started
        print(f"--once at 360000/h: {prober.sent} events in {took:.2f}s")
    async with ScriptedTarget() as target:
        prober = Prober(_settings(target, rate, 0.2), library, _Count(), seed=1)
        stop = asyncio.Event()
        asyncio.get_running_loop().call_later(seconds, stop.set)
        await prober.run(stop)
    times = prober.request_times
    span = 6.0
    worst = max(sum(1 for t in times if a <= t < a + span) for a in times)
    gap = min(b - a for a, b in itertools.pairwise(times))
    print(
        f"{rate:g}/h for {seconds:g}s, jitter 0.2: {len(times)} requests, at most {worst} in "
        f"any {span:g}s (budget {rate * span / 3600:g}), shortest gap {gap:.4f}s "
        f"(interval {3600 / rate:.4f}s)"
    )


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seconds", type=float, default=60.0)
    p.add_argument("--rate", type=float, default=36_000.0)
    args = p.parse_args()
    asyncio.run(main(args.seconds, args.rate))
