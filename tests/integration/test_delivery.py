"""At-least-once across crashes and shutdowns, with ``llm-sidecar run`` as a real process."""

from __future__ import annotations

import asyncio
import collections
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
import yaml

from sidecar.embedded import EmbeddedBroker
from tests.conftest import REPO, event_line, produce, read_topic
from tests.integration.test_kafka import committed_offsets

pytestmark = pytest.mark.integration

PARTITIONS = 3
MAX_BATCH = 50


def write_config(
    path: Path,
    bootstrap: str,
    topic: str,
    verdicts: str,
    group: str,
    rules: Path | None = None,
    **kafka: Any,
) -> Path:
    """A ``run`` config for one member of ``group``; ``kafka`` overrides its Kafka settings."""
    config = {
        "rules": [str(rules or REPO / "rules" / "default.yaml")],
        "reload_interval_s": 0,
        "http": {"host": "127.0.0.1", "port": 0},
        "kafka": {
            "bootstrap_servers": bootstrap,
            "topics": [topic],
            "group_id": group,
            "dlq_topic": None,
            "verdict_topic": verdicts,
            "max_batch": MAX_BATCH,
            "heartbeat_interval_ms": 300,
            "session_timeout_ms": 3000,
            "fetch_timeout_ms": 100,
            **kafka,
        },
        "limits": {"drain_timeout_s": 10},
    }
    path.write_text(yaml.safe_dump(config))
    return path


def group_configs(
    tmp_path: Path,
    bootstrap: str,
    topic: str,
    verdicts: str,
    group: str,
    *,
    names: tuple[str, ...],
    **kafka: Any,
) -> dict[str, Path]:
    """:func:`write_config` for each member of ``group``, by name."""
    return {
        name: write_config(tmp_path / f"{name}.yaml", bootstrap, topic, verdicts, group, **kafka)
        for name in names
    }


def start(config: Path) -> subprocess.Popen[bytes]:
    """Start ``llm-sidecar run``; its log goes to a file beside the config."""
    with open(config.with_suffix(".log"), "ab") as log:
        return subprocess.Popen(
            [sys.executable, "-m", "sidecar", "run", "--config", str(config)],
            stdout=subprocess.DEVNULL,
            stderr=log,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )


async def wait_for_log(path: Path, text: str, count: int = 1, timeout: float = 30) -> None:
    for _ in range(int(timeout * 10)):
        if path.exists() and path.read_text().count(text) >= count:
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"{text!r} did not appear {count} time(s) in {path}")


async def verdict_ids(bootstrap: str, topic: str, expect: int, timeout: float) -> list[str]:
    records = await read_topic(bootstrap, topic, expect=expect, timeout=timeout)
    return [orjson.loads(r.value)["id"] for r in records]


async def produce_slowly(bootstrap: str, topic: str, n: int, per_batch: int, pause: float) -> None:
    """Event i goes to partition i % PARTITIONS (so per_batch must be a multiple of it)."""
    assert per_batch % PARTITIONS == 0
    for start_at in range(0, n, per_batch):
        lines = [event_line(i) for i in range(start_at, min(n, start_at + per_batch))]
        await produce(bootstrap, topic, lines, partitions=PARTITIONS)
        await asyncio.sleep(pause)


async def test_sigkill_mid_stream_then_restart_loses_nothing(
    broker: EmbeddedBroker, topic_factory: Any, tmp_path: Path
) -> None:
    topic = await topic_factory(partitions=PARTITIONS)
    verdicts = await topic_factory(prefix="verdicts")
    config = write_config(tmp_path / "c.yaml", broker.bootstrap_servers, topic, verdicts, "g-kill")
    n = 3000
    producer = asyncio.create_task(produce_slowly(broker.bootstrap_servers, topic, n, 150, 0.1))
    first = start(config)
    try:
        # Kill once the process is visibly mid-stream: some verdicts out, the stream not done.
        seen: list[str] = []
        for _ in range(300):
            seen = await verdict_ids(broker.bootstrap_servers, verdicts, expect=1, timeout=0.3)
            if len(seen) >= 300:
                break
            await asyncio.sleep(0.1)
        assert seen, "the first process never produced a verdict"
        first.send_signal(signal.SIGKILL)
        first.wait(10)
        killed_at = len(seen)
    finally:
        if first.poll() is None:
            first.kill()
    await producer
    assert killed_at < n, "the stream was fully processed before the kill; the test proves nothing"

    second = start(config)
    try:
        ids: list[str] = []
        for _ in range(60):
            ids = await verdict_ids(
                broker.bootstrap_servers, verdicts, expect=n + 10_000, timeout=0.5
            )
            if set(ids) >= {f"e-{i:06d}" for i in range(n)}:
                break
        missing = {f"e-{i:06d}" for i in range(n)} - set(ids)
        assert not missing, f"{len(missing)} events never processed"
        duplicates = sum(c - 1 for c in collections.Counter(ids).values())
        assert duplicates <= MAX_BATCH * PARTITIONS, duplicates
    finally:
        second.send_signal(signal.SIGTERM)
        assert second.wait(20) == 0


async def test_sigterm_drains_commits_and_exits_zero(
    broker: EmbeddedBroker, topic_factory: Any, tmp_path: Path
) -> None:
    topic = await topic_factory(partitions=PARTITIONS)
    verdicts = await topic_factory(prefix="verdicts")
    group = "g-term"
    config = write_config(tmp_path / "c.yaml", broker.bootstrap_servers, topic, verdicts, group)
    proc = start(config)
    try:
        n = 900
        producer = asyncio.create_task(produce_slowly(broker.bootstrap_servers, topic, n, 99, 0.05))
        for _ in range(300):
            if await verdict_ids(broker.bootstrap_servers, verdicts, expect=1, timeout=0.2):
                break
            await asyncio.sleep(0.05)
        proc.send_signal(signal.SIGTERM)  # while events are still arriving
        code = await asyncio.to_thread(proc.wait, 20)
        stderr = config.with_suffix(".log").read_text()
        assert code == 0, stderr
        assert "drained" in stderr
        await producer
    finally:
        if proc.poll() is None:
            proc.kill()
    # Whatever was committed was processed: every offset below the commit has its verdict.
    ids = await verdict_ids(broker.bootstrap_servers, verdicts, expect=n, timeout=2)
    committed = await committed_offsets(broker.bootstrap_servers, group, topic, PARTITIONS)
    assert sum(c or 0 for c in committed.values()) > 0
    per_partition = collections.Counter(int(i[2:]) % PARTITIONS for i in set(ids))
    for p in range(PARTITIONS):
        assert (committed[p] or 0) <= per_partition[p]
    # And a restarted consumer picks up exactly where the commit left off: nothing is lost.
    proc = start(config)
    try:
        await wait_for_log(config.with_suffix(".log"), "partitions assigned", count=2)
        for _ in range(60):
            ids = await verdict_ids(
                broker.bootstrap_servers, verdicts, expect=n + 10_000, timeout=0.5
            )
            if len(set(ids)) >= n:
                break
        assert set(ids) == {f"e-{i:06d}" for i in range(n)}
    finally:
        proc.send_signal(signal.SIGTERM)
        assert await asyncio.to_thread(proc.wait, 20) == 0


async def test_sighup_reloads_rules(
    broker: EmbeddedBroker, topic_factory: Any, tmp_path: Path
) -> None:
    topic = await topic_factory()
    verdicts = await topic_factory(prefix="verdicts")
    rules = tmp_path / "rules.yaml"
    rules.write_text("rules:\n  - {id: before, check: length_less_than, params: {value: 5}}\n")
    config = write_config(
        tmp_path / "c.yaml", broker.bootstrap_servers, topic, verdicts, "g-hup", rules
    )
    proc = start(config)
    try:
        log = config.with_suffix(".log")
        await wait_for_log(log, "partitions assigned")
        await produce(broker.bootstrap_servers, topic, [event_line(1)])
        assert await read_topic(broker.bootstrap_servers, verdicts, expect=1, timeout=20)
        rules.write_text("rules:\n  - {id: after, check: length_less_than, params: {value: 5}}\n")
        proc.send_signal(signal.SIGHUP)
        await wait_for_log(log, "loaded 1 rules", count=2)
        await produce(broker.bootstrap_servers, topic, [event_line(2)])
        records = await read_topic(broker.bootstrap_servers, verdicts, expect=2, timeout=20)
        checks = {
            orjson.loads(r.value)["id"]: set(orjson.loads(r.value)["checks"]) for r in records
        }
        assert checks == {"e-000001": {"before"}, "e-000002": {"after"}}
    finally:
        proc.send_signal(signal.SIGTERM)
        assert await asyncio.to_thread(proc.wait, 20) == 0


async def test_a_static_member_killed_and_restarted_resumes_before_its_session_expires(
    broker: EmbeddedBroker, topic_factory: Any, tmp_path: Path
) -> None:
    """With kafka.group_instance_id, a restarted member takes its partitions back without
    waiting for the dead one's session to time out: the first verdict after the restart comes
    sooner than the session timeout, which dynamic membership can never do."""
    topic = await topic_factory(partitions=PARTITIONS)
    verdicts = await topic_factory(prefix="verdicts")
    # The embedded broker holds a static member's join, the first and the restart's alike, for
    # three quarters of the session (9 s of a 12 s session, measured with aiokafka alone), and
    # a loaded machine takes a few seconds to start the process; a dynamic member killed and
    # started again is back only after some 1.8 sessions. 28 s (under the 30 s request
    # timeout) leaves the restart 7 s, less the start, to come in under the session.
    session_s = 28
    config = write_config(
        tmp_path / "c.yaml",
        broker.bootstrap_servers,
        topic,
        verdicts,
        "g-st",
        group_instance_id="llm-sidecar-0",
        session_timeout_ms=session_s * 1000,
        heartbeat_interval_ms=2000,
    )
    log = config.with_suffix(".log")
    first = start(config)
    try:
        await wait_for_log(log, "partitions assigned", timeout=60)
        await produce(broker.bootstrap_servers, topic, [event_line(i) for i in range(30)])
        assert len(await verdict_ids(broker.bootstrap_servers, verdicts, 30, timeout=30)) == 30
        first.send_signal(signal.SIGKILL)
        first.wait(10)
    finally:
        if first.poll() is None:
            first.kill()
    loop = asyncio.get_running_loop()
    restarted = loop.time()
    second = start(config)
    try:
        await produce(broker.bootstrap_servers, topic, [event_line(i) for i in range(30, 60)])
        ids: list[str] = []
        while len(set(ids)) < 60 and loop.time() - restarted < session_s * 3:
            ids = await verdict_ids(broker.bootstrap_servers, verdicts, 60, timeout=0.5)
        gap = loop.time() - restarted
        assert len(set(ids)) == 60
        assert gap < session_s, f"first verdicts {gap:.1f}s after the restart"
        assert "static member llm-sidecar-0" in log.read_text()
    finally:
        second.send_signal(signal.SIGTERM)
        assert await asyncio.to_thread(second.wait, 30) == 0


async def test_a_member_stopped_cleanly_leaves_and_the_other_takes_over_within_its_session(
    broker: EmbeddedBroker, topic_factory: Any, tmp_path: Path
) -> None:
    """A SIGTERM outside a rebalance asks to leave, so the member left takes the partitions
    without waiting for the stopped one's session. The embedded broker numbers a group's first
    generation 0, and members of it did not leave (a check for generation > 0): every restart
    of a pod of the first generation held the group for a whole session."""
    session_s = 10
    topic = await topic_factory(partitions=PARTITIONS)
    verdicts = await topic_factory(prefix="verdicts")
    configs = list(
        group_configs(
            tmp_path,
            broker.bootstrap_servers,
            topic,
            verdicts,
            "g-leave",
            names=("a", "b"),
            session_timeout_ms=session_s * 1000,
        ).values()
    )
    a, b = start(configs[0]), start(configs[1])  # together: both in the first generation
    logs = [config.with_suffix(".log") for config in configs]
    try:
        for log in logs:
            await wait_for_log(log, "partitions assigned: t-", timeout=60)
        # Both joined the first round (generation 0 on the embedded broker): a member that
        # came after it would have made a give its partitions up and take some back.
        assert logs[0].read_text().count("partitions assigned: t-") == 1, "not one round"
        assigned = logs[1].read_text().count("partitions assigned: t-")
        loop = asyncio.get_running_loop()
        stopped = loop.time()
        a.send_signal(signal.SIGTERM)
        assert await asyncio.to_thread(a.wait, 30) == 0
        assert "left group g-leave" in logs[0].read_text(), logs[0].read_text()
        await wait_for_log(logs[1], "partitions assigned: t-", count=assigned + 1, timeout=60)
        took = loop.time() - stopped
        last = logs[1].read_text().split("partitions assigned: ")[-1].splitlines()[0]
        assert last.count(f"{topic}[") == PARTITIONS, last
        # Without the leave the broker waits for a's session before it even starts the round.
        assert took < session_s, f"b took a's partitions {took:.1f}s after a's stop"
    finally:
        for proc in (a, b):
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                proc.wait(30)


async def test_sigterm_while_the_group_waits_for_a_dead_member_does_not_wait_with_it(
    broker: EmbeddedBroker, topic_factory: Any, tmp_path: Path
) -> None:
    """A member killed without leaving holds the group's next join for its whole session.
    A SIGTERM to the member joining then waited for that join (17.6 s with a 10 s session,
    past the drain deadline), since the consumer's fetch waits for the assignment; then, with
    the fetch left behind, for the consumer's own stop (5 s and an ERROR line), which waits
    for the join too. The join is now abandoned: the member stops at once."""
    topic = await topic_factory(partitions=1)
    verdicts = await topic_factory(prefix="verdicts")
    configs = list(
        group_configs(
            tmp_path,
            broker.bootstrap_servers,
            topic,
            verdicts,
            "g-join",
            names=("a", "b"),
            session_timeout_ms=10_000,  # the dead member's, waited out
        ).values()
    )
    first = start(configs[0])
    try:
        await wait_for_log(configs[0].with_suffix(".log"), "partitions assigned")
    finally:
        first.kill()  # gone without a leave request
        first.wait()
    second = start(configs[1])
    try:
        await wait_for_log(configs[1].with_suffix(".log"), "partitions revoked")
        await asyncio.sleep(0.5)  # its join is now held for the dead member's session
        started = asyncio.get_running_loop().time()
        second.send_signal(signal.SIGTERM)
        code = await asyncio.to_thread(second.wait, 30)
        took = asyncio.get_running_loop().time() - started
        log = configs[1].with_suffix(".log").read_text()
        assert code == 0, log
        assert "drained" in log and "drain deadline" not in log
        # The join is abandoned, not waited for: no 5 s stop step running out, no ERROR line.
        assert "abandoning the group join" in log
        assert " ERROR " not in log and "not done within" not in log, log
        assert took < 2.5, (took, log)
    finally:
        if second.poll() is None:
            second.kill()


async def test_sigterm_to_the_leader_in_a_held_rebalance_abandons_its_join_and_the_group_goes_on(
    broker: EmbeddedBroker, topic_factory: Any, tmp_path: Path
) -> None:
    """The same with the group's leader, which had partitions (a generation) when the
    rebalance came: it abandons the held join at once and does not ask to leave. A leave
    request there made the embedded broker keep the departed member as the group's leader,
    and the members left never got an assignment again; without it the broker drops the
    member after its session and the group goes on."""
    topic = await topic_factory(partitions=PARTITIONS)
    verdicts = await topic_factory(prefix="verdicts")
    configs = group_configs(
        tmp_path,
        broker.bootstrap_servers,
        topic,
        verdicts,
        "g-held",
        names=("a", "dead", "b"),
        session_timeout_ms=10_000,  # the dead member's, waited out
    )
    logs = {name: config.with_suffix(".log") for name, config in configs.items()}
    a = start(configs["a"])
    others = []
    try:
        await wait_for_log(logs["a"], "partitions assigned: t-")
        dead = start(configs["dead"])
        others.append(dead)
        await wait_for_log(logs["dead"], "partitions assigned: t-")
        dead.kill()  # gone without a leave request: the next join waits for its session
        dead.wait()
        revoked = logs["a"].read_text().count("partitions revoked")
        others.append(start(configs["b"]))
        await wait_for_log(logs["a"], "partitions revoked", count=revoked + 1)
        await asyncio.sleep(0.5)  # a's join is now held for the dead member's session
        started = asyncio.get_running_loop().time()
        a.send_signal(signal.SIGTERM)
        code = await asyncio.to_thread(a.wait, 30)
        took = asyncio.get_running_loop().time() - started
        log = logs["a"].read_text()
        assert code == 0, log
        assert "abandoning the group join" in log, log
        assert "left group" not in log, log
        assert " ERROR " not in log and "not done within" not in log, log
        assert took < 2.5, (took, log)
        # The group goes on without a: b gets partitions once the dead member's and a's
        # sessions (10 s) have run out.
        await wait_for_log(logs["b"], "partitions assigned: t-", timeout=40)
    finally:
        for proc in (a, *others):
            if proc.poll() is None:
                proc.kill()
                proc.wait()
