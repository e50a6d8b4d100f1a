"""Group churn with ``llm-sidecar run`` as real processes on the embedded broker: members
stopped (SIGTERM, or SIGKILL about a third of the time) and started again a few seconds apart,
several stops landing in the middle of a join. The group must go on: every event produced is
processed within a bound after the last change, none lost."""

from __future__ import annotations

import asyncio
import os
import random
import signal
import subprocess
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml

from sidecar.embedded import EmbeddedBroker
from tests.integration.test_delivery import (
    PARTITIONS,
    produce_slowly,
    start,
    verdict_ids,
    wait_for_log,
    write_config,
)
from tests.integration.test_kafka import committed_offsets

pytestmark = pytest.mark.integration

MEMBERS = 3
SESSION_MS = 3000
CHANGES = int(os.environ.get("CHURN_CHANGES", "6"))
EVENTS = int(os.environ.get("CHURN_EVENTS", "1800"))
SEED = int(os.environ.get("CHURN_SEED", "31"))
PROGRESS_BOUND_S = 25.0
"""After the last change: a killed member's session (3 s) and two rebalances, with room for a
loaded machine. A group that does not go on never gets there."""


@contextmanager
def members(configs: list[Path]) -> Iterator[list[subprocess.Popen[bytes]]]:
    procs = [start(c) for c in configs]
    try:
        yield procs
    finally:
        for p in procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in procs:
            try:
                p.wait(15)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


def revoked_count(log: Path) -> int:
    return log.read_text().count("partitions revoked") if log.exists() else 0


async def test_churn_with_stops_during_joins_and_kills_keeps_the_group_going(
    broker: EmbeddedBroker, topic_factory: Any, tmp_path: Path
) -> None:
    rng = random.Random(SEED)
    bootstrap = broker.bootstrap_servers
    topic = await topic_factory(partitions=PARTITIONS)
    verdicts = await topic_factory(prefix="verdicts")
    group = f"g-churn-{uuid.uuid4().hex[:6]}"
    configs = []
    for m in range(MEMBERS):
        config = write_config(tmp_path / f"m{m}.yaml", bootstrap, topic, verdicts, group)
        doc = yaml.safe_load(config.read_text())
        doc["kafka"]["session_timeout_ms"] = SESSION_MS
        doc["limits"]["drain_timeout_s"] = 5
        config.write_text(yaml.safe_dump(doc))
        configs.append(config)
    logs = [c.with_suffix(".log") for c in configs]
    loop = asyncio.get_running_loop()
    with members(configs) as procs:
        for log in logs:
            await wait_for_log(log, "partitions assigned", timeout=60)
        # The events arrive all through the churn and a little past it.
        per_batch = 60
        pause = max(0.05, (CHANGES * 2.5 + 3) / (EVENTS / per_batch))
        producer = asyncio.create_task(produce_slowly(bootstrap, topic, EVENTS, per_batch, pause))
        changes: list[str] = []
        born = [loop.time()] * MEMBERS
        last = -1
        for k in range(CHANGES):
            if k % 2 == 1:
                # In the middle of a join: the start before this one made the group rebalance.
                # The member longest in the group (the likeliest leader) is stopped once it has
                # revoked its partitions for that round, with SIGTERM: it has a generation.
                m = min((i for i in range(MEMBERS) if i != last), key=lambda i: born[i])
                before = revoked_count(logs[m])
                t0 = loop.time()
                while revoked_count(logs[m]) == before and loop.time() - t0 < 5:
                    await asyncio.sleep(0.05)
                await asyncio.sleep(rng.uniform(0.0, 0.4))
                how = signal.SIGTERM
            else:
                m = rng.randrange(MEMBERS)
                await asyncio.sleep(rng.uniform(1.5, 3.5))
                how = signal.SIGKILL if rng.random() < 0.6 else signal.SIGTERM  # ~30 % overall
            procs[m].send_signal(how)
            code = await asyncio.to_thread(procs[m].wait, 30)
            changes.append(f"{how.name} m{m} -> {code}")
            if how == signal.SIGTERM:
                assert code == 0, logs[m].read_text()[-3000:]
            procs[m] = start(configs[m])
            born[m], last = loop.time(), m
        last_change = loop.time()
        await producer
        want = {f"e-{i:06d}" for i in range(EVENTS)}
        ids: set[str] = set()
        while loop.time() - last_change < PROGRESS_BOUND_S:
            ids = set(await verdict_ids(bootstrap, verdicts, expect=10**9, timeout=0.5))
            if ids >= want:
                break
            await asyncio.sleep(0.5)
        took = loop.time() - last_change
        missing = want - ids
        tails = "\n".join(f"--- m{m}\n{log.read_text()[-1500:]}" for m, log in enumerate(logs))
        assert not missing, (
            f"{len(missing)} of {EVENTS} events not processed {took:.1f}s after the last "
            f"change; changes: {changes}\n{tails}"
        )
        # And the group commits to the end of every partition: a new owner will not go back.
        end = {p: EVENTS // PARTITIONS + (1 if p < EVENTS % PARTITIONS else 0) for p in range(3)}
        committed: dict[int, int | None] = {}
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            committed = await committed_offsets(bootstrap, group, topic, PARTITIONS)
            if committed == end:
                break
            await asyncio.sleep(0.5)
        assert committed == end, (committed, changes)
        print(f"churn: {changes}; all {EVENTS} processed {took:.1f}s after the last change")
