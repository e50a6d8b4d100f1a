"""Does the LLM judge slow the hot path? Check throughput with the judge off, healthy, slow
and failing.

The hot path here is what App.handle does per batch without I/O: decode and check a batch of
events with the default rules, then call the verdict listeners. With the judge on, the
listener is ``JudgeService.submit`` and the judge is the scripted server running in its own
process (as a remote judge would: its CPU is not ours), answering at once (healthy), after a
delay (slow), or never / with 500s (failing). The batch loop yields to the event loop between
batches, as the real one does while it awaits the source, so our judge workers (HTTP client,
parsing, retries) compete with it for the CPU, as they do in production.

    python bench/judge_isolation.py [--events 20000] [--batch 500] [--repeat 3] [--rate 1.0]

Prints events/s per mode (best of ``--repeat``) and each mode's ratio to the judge-off run.
``--rate`` is the sample rate (1.0, the worst case, offers every event to the judge).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections.abc import Callable, Sequence

import orjson
from prometheus_client import CollectorRegistry

from sidecar.judge.config import JudgeSettings
from sidecar.judge.service import JudgeService
from sidecar.pipeline import Pipeline, Verdict
from sidecar.rules import bundled_path, load_rules
from sidecar.sources.base import Record

Listener = Callable[[Sequence[Verdict]], None]


def make_records(n: int) -> list[Record]:
    out = []
    for i in range(n):
        doc = {
            "id": f"bench-{i}",
            "prompt": f"What does clause {i} of the contract say about renewals?",
            "response": "The contract renews automatically each year. I think that is fair. " * 4,
            "contexts": ["Clause text about renewals and notice periods.", "Unrelated text."],
            "route": "rag",
        }
        out.append(
            Record(
                topic="bench",
                partition=0,
                offset=i,
                key=None,
                value=orjson.dumps(doc),
                timestamp_ms=None,
            )
        )
    return out


async def hot_path(records: Sequence[Record], batch: int, listener: Listener | None) -> float:
    """Events per second through decode, checks and the listener."""
    pipeline = Pipeline(load_rules([bundled_path("default.yaml")]))
    started = time.perf_counter()
    for i in range(0, len(records), batch):
        verdicts, _, _ = pipeline.process(records[i : i + batch], max_event_bytes=1 << 20)
        if listener is not None:
            listener(verdicts)
        await asyncio.sleep(0)  # the real loop awaits the source here
    return len(records) / (time.perf_counter() - started)


class JudgeProcess:
    """``python -m sidecar.testing`` in a child process; its base URL once it listens."""

    def __init__(self, *args: str) -> None:
        self.args = args
        self.proc: asyncio.subprocess.Process | None = None

    async def __aenter__(self) -> str:
        self.proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "sidecar.testing", *self.args, stdout=asyncio.subprocess.PIPE
        )
        assert self.proc.stdout is not None
        line = await asyncio.wait_for(self.proc.stdout.readline(), 30)
        return line.decode().strip()

    async def __aexit__(self, *exc: object) -> None:
        if self.proc is not None and self.proc.returncode is None:
            self.proc.terminate()
            await self.proc.wait()


MODES = {
    "healthy": (),
    "slow": ("--delay", "0.5"),
    "hanging": ("--hang",),
    "failing": ("--fail", "500"),
}


async def measure(
    events: int = 20_000, batch: int = 500, repeat: int = 3, rate: float = 1.0
) -> dict[str, float]:
    """Best-of-``repeat`` events/s for the judge off and each judge mode."""
    records = make_records(events)
    results: dict[str, float] = {}
    results["off"] = max([await hot_path(records, batch, None) for _ in range(repeat)])
    for mode, args in MODES.items():
        best = 0.0
        async with JudgeProcess(*args) as base_url:
            for _ in range(repeat):
                settings = JudgeSettings(
                    enabled=True,
                    base_url=base_url,
                    sample_rate=rate,
                    queue_size=1000,
                    concurrency=8,
                    timeout_s=1.0,
                    deadline_s=2.0,
                    backoff_base_s=0.05,
                )
                service = JudgeService(settings, CollectorRegistry())
                await service.start()
                try:
                    best = max(best, await hot_path(records, batch, service.submit))
                finally:
                    await service.stop(0)
        results[mode] = best
    return results


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--events", type=int, default=20_000)
    p.add_argument("--batch", type=int, default=500)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--rate", type=float, default=1.0)
    args = p.parse_args()
    results = asyncio.run(measure(args.events, args.batch, args.repeat, args.rate))
    off = results["off"]
    print(f"{'judge':<10} {'events/s':>10} {'ratio to off':>13}")
    for mode, rate in results.items():
        print(f"{mode:<10} {rate:>10.0f} {rate / off:>13.3f}")


if __name__ == "__main__":
    main()
