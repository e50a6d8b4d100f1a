"""Throughput of llm-sidecar against raw aiokafka consumption, measured in one run.

    python bench/throughput.py [--events 50000] [--partitions 3] [--rules rules/default.yaml]
                               [--decode-only] [--traces-per-record 10]

Produces N events of about 1 KB to the embedded broker, then on the same topic measures
(1) a bare aiokafka consumer doing ``getmany`` and nothing else, and (2) the sidecar's whole
batch loop (decode, checks, metrics, commit). Both clocks start at the first record received,
so the consumer-group join is not counted. Prints both rates, their ratio, the sidecar's CPU
time per event (this process only: steadier than the rate on a shared machine), the peak RSS, and
the per-event cost of every rule measured by the sidecar itself.

First it measures the decode cost of each input format on the same events, in process (no
broker): native JSON lines, and the same events as OTLP traces (a server span and an LLM span
per event, ``--traces-per-record`` traces per record, GenAI and OpenInference alternating) in
``otlp-proto`` and ``otlp-json``; then that of native events by shape (fields of their own,
numeric ids). ``--decode-only`` stops there. After the run over the broker, in process again,
where the CPU of ``App.handle`` goes by stage (decode, checks, windows, the rest: metrics,
sinks, slices) on the same events, and so what the run over the broker spent outside it
(consuming, committing, the event loop).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import resource
import sys
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from pathlib import Path

import orjson
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from prometheus_client import CollectorRegistry

from sidecar.app import App
from sidecar.embedded import EmbeddedBroker, create_topic
from sidecar.events import decode
from sidecar.formats import FORMATS, Decoder, InputSettings
from sidecar.settings import Settings
from sidecar.sinks import Sink
from sidecar.sources.base import Record, Source

REPO = Path(__file__).resolve().parent.parent
WORDS = [
    "the",
    "model",
    "answered",
    "question",
    "about",
    "refund",
    "policy",
    "order",
    "shipping",
    "account",
    "password",
    "customer",
    "support",
    "retrieval",
    "context",
    "document",
    "summary",
    "invoice",
    "delivery",
    "week",
    "days",
    "please",
    "contact",
    "team",
    "email",
    "address",
    "service",
    "request",
    "billing",
    "plan",
    "upgrade",
    "cancel",
]


def make_event(i: int, rng: random.Random) -> bytes:
    def text(n: int) -> str:
        return " ".join(rng.choice(WORDS) for _ in range(n))

    doc = {
        "id": f"bench-{i:08d}",
        "ts": "2026-11-01T12:00:00Z",
        "prompt": text(25) + "?",
        "response": text(110) + ".",
        "model": rng.choice(["gpt-4o-mini", "llama-3.1-70b"]),
        "route": rng.choice(["/chat", "/support", "/search"]),
        "tenant": "acme",
        "task": "chat",
    }
    return orjson.dumps(doc)


def decode_cost(n: int, traces_per_record: int) -> None:
    """Decode the same n events in every input format; best of three runs per format."""
    from sidecar.formats.encode import encode_request, events_to_requests

    rng = random.Random(7)
    lines = [make_event(i, rng) for i in range(n)]
    events = [decode(line) for line in lines]
    requests = events_to_requests(events, traces_per_record=traces_per_record)
    print(
        f"decode cost, {n} events ({traces_per_record} traces = "
        f"{2 * traces_per_record} spans per OTLP record):"
    )
    print(f"{'format':<16} {'records':>8} {'bytes/event':>11} {'µs/event':>9} {'events/s':>10}")
    base = None
    for fmt in FORMATS:
        values = lines if fmt == "llm-sidecar-v1" else [encode_request(r, fmt) for r in requests]
        records = [
            Record(value=v, topic="bench", partition=0, offset=i) for i, v in enumerate(values)
        ]
        decoder = Decoder(InputSettings(format=fmt), max_bytes=16 * 1_048_576)
        best = float("inf")
        for _ in range(3):
            started = time.perf_counter()
            got = sum(len(decoder(r)) for r in records)
            best = min(best, time.perf_counter() - started)
            assert got == n, (fmt, got)
        per = best / n * 1e6
        base = base or per
        size = sum(len(v) for v in values) / n
        print(
            f"{fmt:<16} {len(values):>8} {size:>11.0f} {per:>9.1f} {n / best:>10,.0f}"
            f"   ({per / base:.1f}x native)"
        )
    print()
    shape_cost(lines)


def shape_cost(lines: list[bytes]) -> None:
    """The native decode by the shape of the events (which reading takes them): best of seven
    runs each. Run it on two checkouts to compare them."""
    docs = [orjson.loads(line) for line in lines]

    def own(doc: dict[str, object]) -> dict[str, object]:
        return {**doc, "trace_id": "abc"}

    shapes = {
        "known fields only": docs,
        "each with a field of its own": [own(d) for d in docs],
        "one in four with one": [own(d) if i % 4 == 3 else d for i, d in enumerate(docs)],
        "a whole-number id": [{**d, "id": i} for i, d in enumerate(docs)],
        "a fraction as the id": [{**d, "id": i + 0.5} for i, d in enumerate(docs)],
    }
    print("native decode by event shape:")
    for name, shaped in shapes.items():
        raws = [orjson.dumps(d) for d in shaped]
        best = float("inf")
        for _ in range(7):
            started = time.perf_counter()
            for raw in raws:
                decode(raw)
            best = min(best, time.perf_counter() - started)
        print(f"  {name:<30} {best / len(raws) * 1e6:>6.2f} µs/event")
    print()


class _Nowhere(Source):
    """A source that is never read from: the stage measurement hands the batches in itself."""

    name = "kafka"

    async def start(self) -> None:
        pass

    async def stop(self) -> None:
        pass

    def batches(self) -> AsyncIterator[list[Record]]:
        raise NotImplementedError("the stage measurement hands its batches to App.handle")

    def stop_fetching(self) -> None:
        pass

    async def ack(self, batch: Sequence[Record]) -> None:
        pass


async def stage_cost(n: int, rules: list[Path], batch: int) -> dict[str, float]:
    """CPU µs per event of ``App.handle``'s stages, in process (no broker), best of five:
    the whole of it, the same without windows, ``Pipeline.process`` (decode and checks), and
    the decode alone. The differences are the stages."""
    rng = random.Random(7)
    records = [Record(make_event(i, rng), "t", i % 3, i, None, 0) for i in range(n)]
    batches = [records[i : i + batch] for i in range(0, n, batch)]

    async def app_for(windows: bool) -> App:
        settings = Settings(rules=rules, reload_interval_s=0, windows={"enabled": windows})
        app = App(
            settings, source=_Nowhere(), sink=Sink(), registry=CollectorRegistry(), serve_http=False
        )
        await app.start()
        app.settle_heap()
        return app

    whole, bare = await app_for(True), await app_for(False)
    slice_ = whole.settings.limits.verdict_slice
    limit = whole.settings.limits.max_event_bytes

    async def handle(app: App) -> None:
        for b in batches:
            await app.handle(b)

    async def process() -> None:
        pipeline = whole.pipeline
        assert pipeline is not None
        for b in batches:
            for i in range(0, len(b), slice_):
                pipeline.process(b[i : i + slice_], max_event_bytes=limit)

    async def decode_all() -> None:
        for r in records:
            decode(r.value, max_bytes=limit)

    async def handle_whole() -> None:
        await handle(whole)

    async def handle_bare() -> None:
        await handle(bare)

    runs: tuple[tuple[str, Callable[[], Awaitable[None]]], ...] = (
        ("handle", handle_whole),
        ("handle without windows", handle_bare),
        ("pipeline", process),
        ("decode", decode_all),
    )
    best: dict[str, float] = {}
    try:
        for _ in range(5):
            for name, run in runs:
                started = time.process_time()
                await run()
                spent = (time.process_time() - started) / n * 1e6
                best[name] = min(best.get(name, spent), spent)
    finally:
        await whole.stop()
        await bare.stop()
    stages = {
        "decode": best["decode"],
        "checks and verdicts": best["pipeline"] - best["decode"],
        "windows": best["handle"] - best["handle without windows"],
        "the rest of handle": best["handle without windows"] - best["pipeline"],
    }
    print(f"App.handle by stage, {n} events in batches of {batch}, in process (CPU µs/event):")
    for name, spent in stages.items():
        print(f"  {name:<22} {spent:>6.2f}")
    print(f"  {'App.handle in all':<22} {best['handle']:>6.2f}")
    print()
    return best


async def produce(bootstrap: str, topic: str, n: int) -> int:
    rng = random.Random(7)
    producer = AIOKafkaProducer(
        bootstrap_servers=bootstrap,
        acks="all",
        enable_idempotence=False,
        linger_ms=20,
        max_batch_size=1_048_576,
    )
    await producer.start()
    size = 0
    try:
        pending = []
        for i in range(n):
            value = make_event(i, rng)
            size += len(value)
            pending.append(await producer.send(topic, value))
            if len(pending) >= 5000:
                await asyncio.gather(*pending)
                pending.clear()
        await asyncio.gather(*pending)
    finally:
        await producer.stop()
    return size // n


async def raw_consume(bootstrap: str, topic: str, n: int, max_batch: int) -> float:
    consumer = AIOKafkaConsumer(
        topic,
        bootstrap_servers=bootstrap,
        group_id=f"raw-{uuid.uuid4().hex[:6]}",
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        max_poll_records=max_batch,
    )
    await consumer.start()
    try:
        seen, first = 0, None
        while seen < n:
            data = await consumer.getmany(timeout_ms=500, max_records=max_batch)
            got = sum(len(v) for v in data.values())
            if got and first is None:
                first = time.perf_counter()
            seen += got
        assert first is not None
        return n / (time.perf_counter() - first)
    finally:
        await consumer.stop()


async def sidecar_consume(
    bootstrap: str, topic: str, n: int, max_batch: int, rules: list[Path], tune_gc: bool = True
) -> tuple[float, float, App]:
    settings = Settings(
        rules=rules,
        kafka={
            "bootstrap_servers": bootstrap,
            "topics": [topic],
            "group_id": f"sidecar-{uuid.uuid4().hex[:6]}",
            "dlq_topic": None,
            "max_batch": max_batch,
        },
        reload_interval_s=0,
    )
    app = App(settings, registry=CollectorRegistry(), serve_http=False)
    await app.start()
    if tune_gc:
        app.settle_heap()  # as `llm-sidecar run` does (limits.tune_gc)
    first: float | None = None
    cpu = 0.0
    try:
        async for batch in app.source.batches():
            if first is None and batch:  # the idle turns while the group forms do not count
                first, cpu = time.perf_counter(), time.process_time()
            await app.handle(batch)
            if app.tally.events >= n:
                break
        assert first is not None
        cpu_per_event = (time.process_time() - cpu) / n
        return n / (time.perf_counter() - first), cpu_per_event, app
    finally:
        await app.stop()


async def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--events", type=int, default=50_000)
    ap.add_argument("--partitions", type=int, default=3)
    ap.add_argument("--max-batch", type=int, default=500)
    ap.add_argument("--rules", type=Path, action="append")
    ap.add_argument("--traces-per-record", type=int, default=10)
    ap.add_argument("--decode-only", action="store_true", help="measure decode cost only")
    ap.add_argument(
        "--untuned-gc",
        action="store_true",
        help="also measure the sidecar first with Python's default collector (limits.tune_gc off)",
    )
    args = ap.parse_args()
    rules = args.rules or [REPO / "rules" / "default.yaml"]
    decode_cost(min(args.events, 20_000), args.traces_per_record)
    if args.decode_only:
        return

    with EmbeddedBroker() as broker:
        topic = f"bench-{uuid.uuid4().hex[:6]}"
        await create_topic(broker.bootstrap_servers, topic, args.partitions)
        size = await produce(broker.bootstrap_servers, topic, args.events)
        print(
            f"{args.events} events of ~{size} bytes on {args.partitions} partitions; rules: "
            + ", ".join(str(r) for r in rules)
        )
        raw = await raw_consume(broker.bootstrap_servers, topic, args.events, args.max_batch)
        if args.untuned_gc:  # before the tuned run: settling the heap is process-wide
            untuned, untuned_cpu, _ = await sidecar_consume(
                broker.bootstrap_servers, topic, args.events, args.max_batch, rules, False
            )
            print(f"llm-sidecar, default gc: {untuned:>9,.0f} events/s, ", end="")
            print(f"{untuned_cpu * 1e6:.1f} µs/event CPU")
        rate, cpu_per_event, app = await sidecar_consume(
            broker.bootstrap_servers, topic, args.events, args.max_batch, rules
        )

    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    # after the broker runs: --untuned-gc must run before anything settles the heap
    stages = await stage_cost(min(args.events, 50_000), rules, args.max_batch)
    print(f"raw aiokafka getmany:   {raw:>10,.0f} events/s")
    print(f"llm-sidecar (checked):  {rate:>10,.0f} events/s")
    print(f"ratio sidecar/raw:      {rate / raw:>10.2f}")
    # CPU time of this process (the broker is another one): steadier than the rate when
    # other work shares the cores.
    print(f"llm-sidecar CPU:        {cpu_per_event * 1e6:>10.1f} µs/event")
    outside = cpu_per_event * 1e6 - stages["handle"]
    print(f"  of which outside App.handle (consume, commit, event loop): {outside:.1f} µs/event")
    print(f"peak RSS:               {rss_mb:>10.0f} MiB")
    # Per-rule cost, from the time the pipeline spent in each check.
    assert app.pipeline is not None
    seconds = {
        s.labels["rule"]: s.value
        for metric in app.registry.collect()
        if metric.name == "llm_sidecar_check_seconds"
        for s in metric.samples
        if s.name.endswith("_total")
    }
    print(f"\n{'rule':<34} {'check':<24} {'ran on':>7} {'µs/call':>8}")
    by_family: dict[str, float] = {}
    for rule in app.pipeline.rules:
        tally = app.tally.rules.get(rule.id)
        calls = sum(tally.counts) if tally else 0
        spent = seconds.get(rule.id, 0.0)
        family = type(rule.check).__module__.rsplit(".", 1)[-1]
        by_family[family] = by_family.get(family, 0.0) + spent
        per = f"{spent / calls * 1e6:8.1f}" if calls else "       -"
        print(f"{rule.id:<34} {rule.check_name:<24} {calls:>7} {per}")
    total = sum(by_family.values())
    print(
        f"\n{'check family':<20} {'µs/event':>9}   (all checks: {total / args.events * 1e6:.1f} µs/event)"
    )
    for family, spent in sorted(by_family.items(), key=lambda kv: -kv[1]):
        print(f"{family:<20} {spent / args.events * 1e6:>9.1f}")
    sys.stdout.flush()


if __name__ == "__main__":
    asyncio.run(main())
