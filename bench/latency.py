"""Time from a record's production to its verdict, at a steady rate, over Kafka.

    python bench/latency.py [--rate 5000] [--seconds 20] [--partitions 3]
        [--rules rules/default.yaml] [--fetch-wait-ms 20] [--max-batch 500]
        [--verdict-slice 100] [--backlog]

Starts the embedded broker and the sidecar (the same App as ``run``), and a separate producer
process that sends ~1 KB events at ``--rate`` events per second, each stamped with its send
time. A verdict listener records, for every event, the time from that stamp to the moment its
verdict is counted (after the checks, before the sinks and the commit). Prints the rate
reached and the latency percentiles. The target is p99 <= 50 ms at half the maximum rate: take
the maximum from ``bench/throughput.py`` and pass half of it as ``--rate``.

Beside it, in the same run, two baselines: how late the producer itself sends (its send time
against its schedule; on a busy machine the producer falls behind too), and a plain aiokafka
consumer in its own process and group, doing nothing but ``getmany`` on the same topic with the
same fetch wait: the time from send to its receipt is what the broker and the machine cost
before llm-sidecar does anything.

A last line gives the sidecar's own share: for every record, the time from the moment its batch
reached the sidecar's batch loop (the consumer's ``getmany`` returned it) to its verdict. It
leaves out the broker and the time a record waits in the consumer's fetch buffer while the
batch before it is checked. ``--backlog`` measures it at the sidecar's maximum rate: every event
is sent before the sidecar starts reading, so each batch it takes is as large as
``kafka.max_batch`` allows, which bounds that time at any lower rate.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

from prometheus_client import CollectorRegistry

from sidecar.app import App
from sidecar.embedded import EmbeddedBroker, create_topic
from sidecar.pipeline import Verdict
from sidecar.settings import Settings
from sidecar.sources.base import Record

REPO = Path(__file__).resolve().parent.parent

PRODUCER = r"""
import asyncio, random, sys, time
sys.path.insert(0, sys.argv[5])
from aiokafka import AIOKafkaProducer
from throughput import make_event

async def main(bootstrap, topic, rate, seconds):
    rng = random.Random(11)
    bodies = [make_event(i, rng)[:-1] + b',"sent":' for i in range(2000)]  # before the clock
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks=1, linger_ms=1,
                                enable_idempotence=False)
    await producer.start()
    started = time.perf_counter()
    sent = 0
    late = []
    try:
        while time.perf_counter() - started < seconds:
            due = int((time.perf_counter() - started) * rate)
            while sent < due:
                late.append(time.perf_counter() - started - sent / rate)
                stamp = repr(time.time()).encode()
                await producer.send(topic, bodies[sent % len(bodies)] + stamp + b"}")
                sent += 1
            await asyncio.sleep(0.001)
        await producer.flush()
    finally:
        await producer.stop()
    late.sort()
    print(sent, *(1000 * late[min(len(late) - 1, int(q * len(late)))] for q in (0.5, 0.99)))

asyncio.run(main(sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])))
"""

# A plain consumer in its own group: getmany and the send stamp, nothing else. It prints
# "ready" once it has its partitions, then the latencies (ms) once the stream has been quiet
# for 3 s.
BASELINE = r"""
import asyncio, sys, time
from aiokafka import AIOKafkaConsumer

async def main(bootstrap, topic, group, wait_ms):
    consumer = AIOKafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=group,
                                enable_auto_commit=False, auto_offset_reset="earliest",
                                fetch_max_wait_ms=wait_ms, max_poll_records=500)
    await consumer.start()
    try:
        while not consumer.assignment():
            await consumer.getmany(timeout_ms=100)
        print("ready", flush=True)
        out, last = [], None
        while last is None or time.monotonic() - last < 3:
            data = await consumer.getmany(timeout_ms=500, max_records=500)
            now = time.time()
            for messages in data.values():
                for m in messages:
                    out.append(1000 * (now - float(m.value.rsplit(b'"sent":', 1)[1][:-1])))
            if data:
                last = time.monotonic()
    finally:
        await consumer.stop()
    print(" ".join(f"{x:.2f}" for x in out))

asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])))
"""


def percentile(sorted_values: Sequence[float], q: float) -> float:
    return sorted_values[min(len(sorted_values) - 1, int(q * len(sorted_values)))]


def summary(ms: list[float]) -> str:
    ms = sorted(ms)
    return (
        f"p50 {percentile(ms, 0.50):.1f} ms, p90 {percentile(ms, 0.90):.1f} ms, "
        f"p99 {percentile(ms, 0.99):.1f} ms, max {ms[-1]:.1f} ms, "
        f"mean {statistics.fmean(ms):.1f} ms"
    )


async def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--rate", type=float, default=5000)
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--partitions", type=int, default=3)
    ap.add_argument("--rules", type=Path, action="append")
    ap.add_argument("--fetch-wait-ms", type=int, default=20)
    ap.add_argument("--max-batch", type=int, default=None, help="kafka.max_batch")
    ap.add_argument("--verdict-slice", type=int, default=None, help="limits.verdict_slice")
    ap.add_argument(
        "--backlog",
        action="store_true",
        help="send everything first, then let the sidecar read it at its maximum rate "
        "(its own receipt->verdict time at full batches, an upper bound for lower rates)",
    )
    args = ap.parse_args()
    rules = args.rules or [REPO / "rules" / "default.yaml"]
    latencies: list[float] = []
    own: list[float] = []
    """From the moment the sidecar's batch loop received the record to its verdict."""
    received: dict[float, float] = {}
    span = [float("inf"), 0.0]
    """The first receipt and the last verdict."""
    expected = 0
    all_in = asyncio.Event()

    def record(verdicts: Sequence[Verdict]) -> None:
        now = span[1] = time.time()
        for v in verdicts:
            sent = v.event.extra.get("sent")
            if isinstance(sent, float):
                latencies.append(now - sent)
                got = received.pop(sent, None)
                if got is not None:
                    own.append(now - got)
        if expected and len(latencies) >= expected:
            all_in.set()

    def stamp_receipt(app: App) -> None:
        """Note when each record reaches the batch loop (its send stamp is the key)."""
        batches = app.source.batches

        async def stamped() -> AsyncIterator[list[Record]]:
            async for batch in batches():
                now = time.time()
                if batch:  # an idle turn is not the first receipt
                    span[0] = min(span[0], now)
                for r in batch:
                    received[float(r.value.rsplit(b'"sent":', 1)[1][:-1])] = now
                yield batch

        app.source.batches = stamped  # type: ignore[method-assign]

    with EmbeddedBroker() as broker:
        topic = f"latency-{uuid.uuid4().hex[:6]}"
        await create_topic(broker.bootstrap_servers, topic, args.partitions)
        kafka: dict[str, object] = {
            "bootstrap_servers": broker.bootstrap_servers,
            "topics": [topic],
            "group_id": f"latency-{uuid.uuid4().hex[:6]}",
            "dlq_topic": None,
            # The embedded broker holds every fetch for its whole wait (Kafka answers as
            # soon as a record is there): with the default 500 ms that wait, not the
            # sidecar, would set the latency.
            "fetch_max_wait_ms": args.fetch_wait_ms,
        }
        if args.max_batch is not None:
            kafka["max_batch"] = args.max_batch
        limits = {} if args.verdict_slice is None else {"verdict_slice": args.verdict_slice}
        settings = Settings(rules=rules, kafka=kafka, limits=limits, reload_interval_s=0)
        app = App(settings, registry=CollectorRegistry(), serve_http=False)
        app.listeners.append(record)
        baseline = await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            BASELINE,
            broker.bootstrap_servers,
            topic,
            f"baseline-{uuid.uuid4().hex[:6]}",
            str(args.fetch_wait_ms),
            stdout=subprocess.PIPE,
        )
        await app.start()
        app.settle_heap()  # as `llm-sidecar run` does (limits.tune_gc)
        stamp_receipt(app)
        # With --backlog the sidecar starts reading only once everything is sent.
        runner = None if args.backlog else asyncio.create_task(app.run())
        try:
            assert baseline.stdout is not None
            await asyncio.wait_for(baseline.stdout.readline(), 60)  # "ready"
            await asyncio.sleep(5)  # the sidecar's group join (with --backlog: its start)
            load = Path("/proc/loadavg").read_text().split()[0]
            producer = await asyncio.create_subprocess_exec(
                sys.executable,
                "-c",
                PRODUCER,
                broker.bootstrap_servers,
                topic,
                str(args.rate),
                str(args.seconds),
                str(REPO / "bench"),
                stdout=subprocess.PIPE,
            )
            out, _ = await producer.communicate()
            if runner is None:
                runner = asyncio.create_task(app.run())
            fields = out.decode().split()
            sent = expected = int(fields[0]) if fields else 0
            late = [float(x) for x in fields[1:3]]
            if len(latencies) >= sent:
                all_in.set()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(all_in.wait(), 30)
            base_out, _ = await asyncio.wait_for(baseline.communicate(), 60)
        finally:
            if baseline.returncode is None:
                baseline.kill()
            app.request_stop()
            if runner is not None:
                await asyncio.wait_for(runner, 30)
            await app.stop()
    if not latencies:
        print("no verdicts: did the producer run?")
        return
    if args.backlog:
        print(
            f"{sent} events sent first, then read as fast as the sidecar goes: about "
            f"{len(own) / (span[1] - span[0]):,.0f} events/s (its maximum here); the time "
            "from send includes the wait in the backlog and is not shown"
        )
        print(f"llm-sidecar, receipt->verdict: {summary([x * 1000 for x in own])}")
        return
    base_ms = [float(x) for x in base_out.decode().split()]
    cfg = settings.kafka
    print(
        f"{sent} events at {args.rate:.0f}/s for {args.seconds:.0f} s on {args.partitions} "
        f"partitions (fetch wait {cfg.fetch_max_wait_ms} ms, max_batch {cfg.max_batch}, "
        f"verdict_slice {getattr(settings.limits, 'verdict_slice', '-')}); load average {load} at the start"
    )
    if late:
        print(f"producer behind its schedule:  p50 {late[0]:.1f} ms, p99 {late[1]:.1f} ms")
    if base_ms:
        print(f"plain consumer, send->receipt: {summary(base_ms)} ({len(base_ms)} records)")
    print(
        f"llm-sidecar, send->verdict:    {summary([x * 1000 for x in latencies])} "
        f"({len(latencies)} verdicts)"
    )
    if own:
        print(
            f"llm-sidecar, receipt->verdict: {summary([x * 1000 for x in own])} "
            f"({len(own)} verdicts)"
        )


if __name__ == "__main__":
    asyncio.run(main())
