"""A chaos run: a consumer group of ``llm-sidecar run`` members kept busy while it is hurt.

    python bench/chaos.py [--events 1000000] [--rate 3000] [--members 3] [--seed 31]
                          [--session-timeout-ms 10000]

Starts the embedded broker behind a TCP proxy (the broker keeps data in memory only, so the
outage is staged at the proxy, not by stopping the broker), ``--members`` processes of
``llm-sidecar run`` in one group on a 3-partition topic, and a producer of ``--events`` events
at ``--rate`` a second. While the events flow, all at once and at random times (``--seed``):

- SIGKILL to a member, which is started again at once;
- SIGTERM during a rebalance: a member is restarted, and another one is stopped with SIGTERM
  as soon as it has revoked its partitions for the rebalance that restart began (then started
  again);
- a broker outage of 6 s, twice: connections refused, then accepted and never answered;
- waves of malformed records (broken JSON, a wrong type, binary, empty) among the events.

The events start once every member has partitions; the disturbances stop when 90 % of the events are produced. The run ends when every event
has a verdict or 5 minutes after the last event, then prints: events lost (produced, acked
by the broker, and never given a verdict: must be 0), duplicate verdicts (at-least-once
redelivery), malformed records sent and dead letters written, the longest stall (the longest
time without a new verdict while events were waiting) overall and after the last
disturbance (verdict times are the members' write times), and the members' peak RSS. Exit status 1 if an event was lost.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import logging
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from bisect import bisect_right
from pathlib import Path

import orjson
import yaml
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.errors import KafkaError

from sidecar.embedded import EmbeddedBroker, create_topic, free_port
from sidecar.testing import TcpProxy

PARTITIONS = 3
CHUNK = 300
MALFORMED = (b"{not json", b'{"id": 5, "prompt": ["a list"]}', b"\xff\xfe\x00binary", b"")


def event(i: int) -> bytes:
    return orjson.dumps({"id": f"c-{i:07d}", "prompt": f"question {i}", "response": f"answer {i}"})


class Member:
    """One ``llm-sidecar run`` process, restarted under the same config; its log is kept."""

    def __init__(self, config: Path) -> None:
        self.config = config
        self.log = config.with_suffix(".log")
        self.proc: subprocess.Popen[bytes] | None = None
        self.peak_rss_kib = 0

    def start(self) -> None:
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "sidecar", "run", "--config", str(self.config)],
                stdout=subprocess.DEVNULL,
                stderr=log,
                env={**os.environ, "PYTHONUNBUFFERED": "1"},
            )

    async def signal(self, how: signal.Signals) -> int:
        assert self.proc is not None
        self.sample_rss()
        self.proc.send_signal(how)
        try:
            return await asyncio.to_thread(self.proc.wait, 30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return await asyncio.to_thread(self.proc.wait)

    def revoked(self) -> int:
        return self.log.read_text(errors="replace").count("partitions revoked")

    def sample_rss(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        with contextlib.suppress(OSError), open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    self.peak_rss_kib = max(self.peak_rss_kib, int(line.split()[1]))


def write_config(
    path: Path, bootstrap: str, topic: str, verdicts: str, dlq: str, args: argparse.Namespace
) -> Path:
    doc = {
        "rules": [str(Path(__file__).resolve().parent.parent / "rules" / "default.yaml")],
        "reload_interval_s": 0,
        "http": {"host": "127.0.0.1", "port": 0},
        "kafka": {
            "bootstrap_servers": bootstrap,
            "topics": [topic],
            "group_id": args.group,
            "dlq_topic": dlq,
            "verdict_topic": verdicts,
            "session_timeout_ms": args.session_timeout_ms,
            "heartbeat_interval_ms": max(300, args.session_timeout_ms // 10),
        },
    }
    path.write_text(yaml.safe_dump(doc))
    return path


class Producer:
    """Sends the events at a steady rate; a send that fails (the outage) is sent again."""

    def __init__(self, bootstrap: str, topic: str, total: int, rate: float) -> None:
        self.bootstrap, self.topic, self.total, self.rate = bootstrap, topic, total, rate
        self.acked_at: list[float] = []  # monotonic time of each chunk's ack, per event
        self.malformed = 0
        self._producer: AIOKafkaProducer | None = None

    async def start(self) -> None:
        self._producer = AIOKafkaProducer(
            bootstrap_servers=self.bootstrap,
            acks="all",
            enable_idempotence=False,
            linger_ms=5,
            request_timeout_ms=10_000,
        )
        await self._producer.start()

    async def stop(self) -> None:
        if self._producer is not None:
            await self._producer.stop()

    async def _send_all(self, values: list[tuple[int, bytes]]) -> None:
        assert self._producer is not None
        pending = values
        while pending:
            futures = [await self._producer.send(self.topic, v, partition=p) for p, v in pending]
            results = await asyncio.gather(*futures, return_exceptions=True)
            pending = [
                pv for pv, r in zip(pending, results, strict=True) if isinstance(r, Exception)
            ]
            if pending:
                await asyncio.sleep(0.5)

    async def run(self) -> None:
        started = time.time()
        for first in range(0, self.total, CHUNK):
            values = [
                (i % PARTITIONS, event(i)) for i in range(first, min(self.total, first + CHUNK))
            ]
            while True:
                try:
                    await self._send_all(values)
                    break
                except KafkaError:
                    await asyncio.sleep(0.5)
            now = time.time()
            self.acked_at.extend([now] * len(values))
            ahead = started + (first + CHUNK) / self.rate - now
            if ahead > 0:
                await asyncio.sleep(ahead)

    async def malformed_wave(self, n: int) -> None:
        values = [(i % PARTITIONS, MALFORMED[i % len(MALFORMED)]) for i in range(n)]
        while True:
            try:
                await self._send_all(values)
                break
            except KafkaError:
                await asyncio.sleep(0.5)
        self.malformed += n


class Reader:
    """Reads a topic from offset 0 (no group), each offset once, noting when each value first
    came; it goes back for offsets it passed over (the embedded broker can store concurrent
    producers' batches out of offset order)."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        self.consumer = AIOKafkaConsumer(
            bootstrap_servers=bootstrap, enable_auto_commit=False, auto_offset_reset="earliest"
        )
        self.topic = topic
        self.seen: set[tuple[int, int]] = set()
        self.first: dict[str, float] = {}  # verdict id -> first arrival
        self.records = 0

    async def run(self, stop: asyncio.Event) -> None:
        await self.consumer.start()
        try:
            tps = [TopicPartition(self.topic, 0)]
            self.consumer.assign(tps)
            self.consumer.seek(tps[0], 0)
            progress = time.time()
            while not stop.is_set():
                try:
                    data = await self.consumer.getmany(timeout_ms=200, max_records=5000)
                except KafkaError:
                    await asyncio.sleep(0.5)
                    continue
                now = time.time()
                for tp, msgs in data.items():
                    for m in msgs:
                        if (tp.partition, m.offset) in self.seen:
                            continue
                        self.seen.add((tp.partition, m.offset))
                        self.records += 1
                        # When the member wrote it (its producer's timestamp), not when it was
                        # read here: the reader's own connection suffers the outage too.
                        self.note(m.value, m.timestamp / 1000 if m.timestamp else now)
                if data:
                    progress = now
                elif now - progress > 2.0:
                    progress = now
                    high = self.consumer.highwater(tps[0]) or 0
                    gap = next((o for o in range(high) if (0, o) not in self.seen), None)
                    if gap is not None:
                        self.consumer.seek(tps[0], gap)
        finally:
            await self.consumer.stop()

    def note(self, value: bytes, now: float) -> None:
        with contextlib.suppress(orjson.JSONDecodeError, KeyError, TypeError):
            self.first.setdefault(orjson.loads(value)["id"], now)


async def sigterm_during_rebalance(members: list[Member], rng: random.Random) -> str:
    """Restart one member; stop another with SIGTERM once it revoked for that rebalance."""
    a, b = rng.sample(range(len(members)), 2)
    before = members[b].revoked()
    await members[a].signal(signal.SIGTERM)
    members[a].start()
    deadline = time.time() + 10
    while members[b].revoked() == before and time.time() < deadline:  # noqa: ASYNC110
        await asyncio.sleep(0.05)  # a log file to watch, no event to wait on
    await asyncio.sleep(rng.uniform(0.0, 0.5))
    code = await members[b].signal(signal.SIGTERM)
    members[b].start()
    return f"SIGTERM m{b} in the rebalance of m{a}'s restart (exit {code})"


async def outage(proxy: TcpProxy, mode: str, seconds: float) -> str:
    await proxy.set_mode(mode)  # type: ignore[arg-type]
    await asyncio.sleep(seconds)
    await proxy.set_mode("up")
    return f"outage: {mode} for {seconds:.0f}s"


def longest_stall(acked: list[float], arrivals: list[float], after: float = 0.0) -> float:
    """The longest time without a new verdict while some acked event had none, counting only
    stalls that end after ``after``."""
    worst = 0.0
    for done, (t0, t1) in enumerate(itertools.pairwise(arrivals), start=1):
        if t1 <= after:
            continue
        if bisect_right(acked, t0) > done:  # events were waiting at t0
            worst = max(worst, t1 - max(t0, after))
    return worst


async def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--events", type=int, default=1_000_000)
    p.add_argument("--rate", type=float, default=3000.0, help="events per second")
    p.add_argument("--members", type=int, default=3)
    p.add_argument("--seed", type=int, default=31)
    p.add_argument("--session-timeout-ms", type=int, default=10_000)
    p.add_argument("--every", type=float, default=6.0, help="mean seconds between disturbances")
    args = p.parse_args()
    logging.getLogger("aiokafka").setLevel(logging.CRITICAL)  # this script's own clients
    args.group = f"chaos-{uuid.uuid4().hex[:6]}"
    rng = random.Random(args.seed)
    work = Path(tempfile.mkdtemp(prefix="llm-sidecar-chaos-"))
    proxy_port = free_port()
    broker = EmbeddedBroker(advertised_port=proxy_port)
    await asyncio.to_thread(broker.start)
    proxy = TcpProxy("127.0.0.1", broker.port, port=proxy_port)
    await proxy.start()
    bootstrap = f"127.0.0.1:{proxy_port}"
    members: list[Member] = []
    producer: Producer | None = None
    try:
        topic, verdicts, dlq = "chaos-events", "chaos-verdicts", "chaos-dead-letters"
        await create_topic(bootstrap, topic, PARTITIONS)
        await create_topic(bootstrap, verdicts, 1)
        await create_topic(bootstrap, dlq, 1)
        for m in range(args.members):
            config = write_config(work / f"m{m}.yaml", bootstrap, topic, verdicts, dlq, args)
            members.append(Member(config))
            members[-1].start()
        producer = Producer(bootstrap, topic, args.events, args.rate)
        await producer.start()
        reader, dead = Reader(bootstrap, verdicts), Reader(bootstrap, dlq)
        stop_reading = asyncio.Event()
        readers = [asyncio.create_task(r.run(stop_reading)) for r in (reader, dead)]
        deadline = time.time() + 120
        while time.time() < deadline and not all(  # noqa: ASYNC110
            "partitions assigned: chaos" in m.log.read_text(errors="replace") for m in members
        ):
            await asyncio.sleep(0.2)  # until the group is up, every member with partitions
        t0 = time.time()
        producing = asyncio.create_task(producer.run())
        log: list[tuple[float, str]] = []
        last_disturbance = t0

        async def note(what: asyncio.Future[str] | str) -> None:
            nonlocal last_disturbance
            text = what if isinstance(what, str) else await what
            last_disturbance = time.time()
            log.append((last_disturbance - t0, text))
            print(f"{last_disturbance - t0:7.1f}s  {text}", flush=True)

        async def rss_sampler() -> None:
            while True:
                for member in members:
                    member.sample_rss()
                await asyncio.sleep(1.0)

        sampler = asyncio.create_task(rss_sampler())
        side: set[asyncio.Task[None]] = set()
        outages = [(0.35, "refuse"), (0.65, "hang")]
        while len(producer.acked_at) < 0.9 * args.events and not producing.done():
            await asyncio.sleep(rng.expovariate(1 / args.every))
            share = len(producer.acked_at) / args.events
            if outages and share >= outages[0][0]:
                _, mode = outages.pop(0)
                side.add(asyncio.create_task(note(asyncio.ensure_future(outage(proxy, mode, 6)))))
            roll = rng.random()
            if roll < 0.3:
                m = rng.randrange(len(members))
                code = await members[m].signal(signal.SIGKILL)
                members[m].start()
                await note(f"SIGKILL m{m} (exit {code})")
            elif roll < 0.7:
                await note(await sigterm_during_rebalance(members, rng))
            n = rng.choice((200, 1000, 3000))
            side.add(asyncio.create_task(note(asyncio.ensure_future(_wave(producer, n)))))
        await asyncio.gather(*side)
        await producing
        produced_at = time.time()
        want = {f"c-{i:07d}" for i in range(args.events)}
        while time.time() - produced_at < 300 and not want.issubset(reader.first):  # noqa: ASYNC110
            await asyncio.sleep(1.0)
        await asyncio.sleep(2.0)  # late duplicates
        stop_reading.set()
        await asyncio.gather(*readers)
        sampler.cancel()
        for member in members:
            member.sample_rss()
        got = {k: v for k, v in reader.first.items() if k in want}
        lost = len(want) - len(got)
        arrivals = sorted(got.values())
        acked = producer.acked_at
        caught_up = (arrivals[-1] - last_disturbance) if arrivals and not lost else float("nan")
        print()
        print(
            f"events: {args.events} at {args.rate:.0f}/s, {args.members} members, session "
            f"{args.session_timeout_ms} ms, seed {args.seed}; {len(log)} disturbances over "
            f"{last_disturbance - t0:.0f}s; run {time.time() - t0:.0f}s; logs in {work}"
        )
        print(f"events lost: {lost}")
        print(f"duplicate verdicts: {reader.records - len(reader.first)}")
        print(f"malformed records sent: {producer.malformed}; dead letters written: {dead.records}")
        print(
            f"longest stall: {longest_stall(acked, arrivals):.1f}s; after the last "
            f"disturbance: {longest_stall(acked, arrivals, last_disturbance):.1f}s; the last "
            f"verdict {caught_up:.1f}s after the last disturbance and "
            f"{arrivals[-1] - acked[-1] if arrivals else float('nan'):.1f}s after the last event"
        )
        print(
            "peak RSS per member (MiB): "
            + ", ".join(f"m{i} {m.peak_rss_kib / 1024:.0f}" for i, m in enumerate(members))
        )
        return 1 if lost else 0
    finally:
        for member in members:
            if member.proc is not None and member.proc.poll() is None:
                member.proc.send_signal(signal.SIGTERM)
        for member in members:
            if member.proc is not None:
                try:
                    member.proc.wait(20)
                except subprocess.TimeoutExpired:
                    member.proc.kill()
        if producer is not None:
            with contextlib.suppress(KafkaError):
                await producer.stop()
        await proxy.stop()
        await asyncio.to_thread(broker.stop)


async def _wave(producer: Producer, n: int) -> str:
    await producer.malformed_wave(n)
    return f"malformed wave: {n} records"


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
