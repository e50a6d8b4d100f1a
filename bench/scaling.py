"""How throughput scales with consumer-group members: `llm-sidecar run --workers N`.

    python bench/scaling.py [--events 120000] [--partitions 6] [--members 1,2]
                            [--rules rules/default.yaml]

Produces N events of about 1 KB (the same generator as ``bench/throughput.py``) to a topic on
the embedded broker, then for each member count N runs ``llm-sidecar run --workers N`` (plain
``run`` for 1) in a fresh consumer group, exactly as a user would (its own group per count, so
each count reads every event), and polls the group's committed offsets. The rate is taken
between 10 % and 90 % of the events committed, so process start, the group join and the last
commit are not counted; the broker's raw ``getmany`` rate on the same topic is measured beside
it. Also prints each
count's CPU seconds per event (the workers', from /proc) and the speed-up over one member.

The broker shares the machine's cores with the members: on a 2-core machine two members and the
broker compete for two cores, so the figure is what one such machine gives, not a per-core
bound.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from aiokafka import AIOKafkaConsumer, TopicPartition

from sidecar.embedded import EmbeddedBroker, create_topic

sys.path.insert(0, str(Path(__file__).resolve().parent))
from throughput import produce, raw_consume

REPO = Path(__file__).resolve().parent.parent
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User plus system time of a process so far, from /proc."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


async def committed(consumer: AIOKafkaConsumer, partitions: list[TopicPartition]) -> int:
    total = 0
    for tp in partitions:
        offset = await consumer.committed(tp)
        total += offset or 0
    return total


def start_members(members: int, env: dict[str, str], logs: Path) -> subprocess.Popen[bytes]:
    """``llm-sidecar run --workers N``, logging to ``logs/run.log``."""
    with open(logs / "run.log", "wb") as log:
        return subprocess.Popen(
            [sys.executable, "-m", "sidecar", "run", "--workers", str(members)],
            env=env,
            cwd=logs,
            stdout=subprocess.DEVNULL,
            stderr=log,
        )


def workers_of(proc: subprocess.Popen[bytes], members: int) -> list[int]:
    """The pids that check: the process itself, or its children with ``--workers``."""
    if members == 1:
        return [proc.pid]
    with open(f"/proc/{proc.pid}/task/{proc.pid}/children", encoding="ascii") as f:
        return [int(pid) for pid in f.read().split()]


async def members_rate(
    bootstrap: str, topic: str, partitions: int, n: int, members: int, rules: list[Path]
) -> tuple[float, float]:
    """Events per second between 10 % and 90 % committed, and CPU seconds per event."""
    group = f"scaling-{members}-{uuid.uuid4().hex[:6]}"
    env = dict(
        os.environ,
        LLM_SIDECAR_KAFKA__BOOTSTRAP_SERVERS=bootstrap,
        LLM_SIDECAR_KAFKA__TOPICS=topic,
        LLM_SIDECAR_KAFKA__GROUP_ID=group,
        LLM_SIDECAR_KAFKA__AUTO_OFFSET_RESET="earliest",
        LLM_SIDECAR_KAFKA__DLQ_TOPIC="",
        LLM_SIDECAR_RULES=",".join(str(r) for r in rules),
        LLM_SIDECAR_RELOAD_INTERVAL_S="0",
        LLM_SIDECAR_HTTP__PORT="0",
        LLM_SIDECAR_LOG_LEVEL="WARNING",
    )
    tps = [TopicPartition(topic, p) for p in range(partitions)]
    probe = AIOKafkaConsumer(bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False)
    await probe.start()
    with tempfile.TemporaryDirectory() as tmp:
        proc = start_members(members, env, Path(tmp))
        try:
            marks: dict[str, tuple[float, int, float]] = {}
            deadline = time.monotonic() + 600
            while "end" not in marks:
                if time.monotonic() > deadline:
                    raise SystemExit("the members did not commit every event within 10 minutes")
                if proc.poll() is not None:
                    log = (Path(tmp) / "run.log").read_text()[-2000:]
                    raise SystemExit(f"run exited with {proc.returncode}:\n{log}")
                done = await committed(probe, tps)
                now = time.perf_counter()
                if "start" not in marks and done >= 0.1 * n:
                    pids = workers_of(proc, members)
                    marks["start"] = (now, done, sum(map(cpu_seconds, pids)))
                elif "start" in marks and done >= 0.9 * n:
                    marks["end"] = (now, done, sum(map(cpu_seconds, pids)))
                await asyncio.sleep(0.05)
        finally:
            proc.terminate()
            proc.wait(60)
            await probe.stop()
    (t0, d0, c0), (t1, d1, c1) = marks["start"], marks["end"]
    return (d1 - d0) / (t1 - t0), (c1 - c0) / (d1 - d0)


async def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--events", type=int, default=120_000)
    ap.add_argument("--partitions", type=int, default=6)
    ap.add_argument("--members", default="1,2", help="member counts to measure, comma-separated")
    ap.add_argument("--rules", type=Path, action="append")
    args = ap.parse_args()
    rules = args.rules or [REPO / "rules" / "default.yaml"]
    counts = [int(c) for c in args.members.split(",")]
    with EmbeddedBroker() as broker:
        topic = f"scaling-{uuid.uuid4().hex[:6]}"
        await create_topic(broker.bootstrap_servers, topic, args.partitions)
        await produce(broker.bootstrap_servers, topic, args.events)
        print(f"{args.events} events on {args.partitions} partitions, {os.cpu_count()} cores")
        raw = await raw_consume(broker.bootstrap_servers, topic, args.events, 500)
        print(f"raw aiokafka getmany, one consumer: {raw:>9,.0f} events/s")
        print(f"{'members':>7} {'events/s':>10} {'of raw':>7} {'speed-up':>9} {'µs CPU/event':>13}")
        first: float | None = None
        for members in counts:
            rate, cpu = await members_rate(
                broker.bootstrap_servers, topic, args.partitions, args.events, members, rules
            )
            first = first or rate
            print(
                f"{members:>7} {rate:>10,.0f} {rate / raw:>7.2f} {rate / first:>8.2f}x "
                f"{cpu * 1e6:>13.1f}"
            )


if __name__ == "__main__":
    asyncio.run(main())
