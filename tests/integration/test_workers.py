"""``llm-sidecar run --workers N`` as a real process tree against the embedded broker."""

from __future__ import annotations

import asyncio
import os
import random
import re
import signal
import socket
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from sidecar.embedded import EmbeddedBroker
from tests.conftest import event_line, produce, scraped_total
from tests.integration.test_delivery import verdict_ids, wait_for_log, write_config

pytestmark = pytest.mark.integration

PARTITIONS = 4
RUN = [sys.executable, "-m", "sidecar", "run"]


def two_free_ports() -> int:
    """A port p such that p and p + 1 are both free now, below the range the system hands out
    for outgoing connections and port 0 (32768-60999 here): a port from that range, freed to
    be bound again by the worker, was at times taken first by another test's connection."""
    rng = random.Random()
    for _ in range(200):
        port = rng.randrange(20_000, 32_000)
        with socket.socket() as a, socket.socket() as b:
            try:
                a.bind(("127.0.0.1", port))
                b.bind(("127.0.0.1", port + 1))
            except OSError:
                continue
        return port
    raise AssertionError("no two consecutive free ports")


def start_workers(config: Path, workers: int) -> subprocess.Popen[bytes]:
    """The parent in a process group of its own, as a shell starts a command: a signal to
    the group is what Ctrl-C in a terminal sends."""
    with open(config.with_suffix(".log"), "ab") as log:
        return subprocess.Popen(
            [*RUN, "--config", str(config), "--workers", str(workers), "--log-level", "INFO"],
            stdout=subprocess.DEVNULL,
            stderr=log,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
            start_new_session=True,
        )


def worker_config(tmp_path: Path, broker: EmbeddedBroker, topic: str, verdicts: str) -> Path:
    """A group of its own per test: workers stopped before they finished joining leave the
    group only when their session times out, which would hold up the next test's split."""
    config = write_config(
        tmp_path / "c.yaml", broker.bootstrap_servers, topic, verdicts, f"g-{topic}"
    )
    doc = yaml.safe_load(config.read_text())
    doc["http"]["port"] = two_free_ports()
    config.write_text(yaml.safe_dump(doc))
    return config


def assignments(log: Path) -> dict[str, set[str]]:
    """Each worker's latest assignment, from its log lines."""
    latest: dict[str, set[str]] = {}
    for m in re.finditer(
        r"\[worker (\d+)\] \S+: partitions assigned: (.*)$", log.read_text(), re.M
    ):
        latest[m.group(1)] = {p.strip() for p in m.group(2).split(",") if p.strip()}
    return latest


async def split_between(log: Path, workers: int, timeout: float = 60) -> dict[str, set[str]]:
    """Wait until the group's rebalance gave every worker partitions, none twice."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while loop.time() < deadline:
        latest = assignments(log) if log.exists() else {}
        parts = [p for ps in latest.values() for p in ps]
        split = len(latest) == workers and all(latest.values())
        if split and len(parts) == len(set(parts)) == PARTITIONS:
            return latest
        await asyncio.sleep(0.2)
    raise AssertionError(f"the partitions were not split: {log.read_text()[-3000:]}")


@dataclass
class Started:
    """Two workers of ``run --workers 2`` on a fresh topic, once the parent said so."""

    topic: str
    verdicts: str
    config: Path
    log: Path
    proc: subprocess.Popen[bytes]


async def start_two(broker: EmbeddedBroker, topic_factory: Any, tmp_path: Path) -> Started:
    topic = await topic_factory(partitions=PARTITIONS)
    verdicts = await topic_factory(prefix="verdicts")
    config = worker_config(tmp_path, broker, topic, verdicts)
    log = config.with_suffix(".log")
    proc = start_workers(config, 2)
    try:
        await wait_for_log(log, "started 2 workers")
    except BaseException:
        proc.kill()
        proc.wait()
        raise
    return Started(topic, verdicts, config, log, proc)


async def test_two_workers_split_the_partitions_check_every_event_and_stop_cleanly(
    broker: EmbeddedBroker, topic_factory: Any, tmp_path: Path
) -> None:
    w = await start_two(broker, topic_factory, tmp_path)
    topic, verdicts, log, proc = w.topic, w.verdicts, w.log, w.proc
    port = yaml.safe_load(w.config.read_text())["http"]["port"]
    try:
        await split_between(log, 2)
        n = 400
        await produce(
            broker.bootstrap_servers, topic, [event_line(i) for i in range(n)], PARTITIONS
        )
        ids = await verdict_ids(broker.bootstrap_servers, verdicts, n, timeout=60)
        assert set(ids) == {f"e-{i:06d}" for i in range(n)}
        # Each worker serves its own /metrics, on http.port + i, and each checked its share.
        await asyncio.sleep(0.5)
        counts = [scraped_total(p, "llm_sidecar_events_total") for p in (port, port + 1)]
        assert all(c > 0 for c in counts), counts
        assert sum(counts) >= n
        # SIGHUP reaches every worker: both reload their rules.
        proc.send_signal(signal.SIGHUP)
        for w in ("0", "1"):
            await wait_for_log(log, f"[worker {w}] sidecar.app: loaded", count=2)
    finally:
        proc.send_signal(signal.SIGTERM)
        code = await asyncio.to_thread(proc.wait, 40)
    text = log.read_text()
    assert code == 0, text[-3000:]
    pids = [int(p) for p in re.search(r"started 2 workers \(pids ([\d, ]+)\)", text)[1].split(",")]
    for pid in pids:  # reaped by the parent
        assert not Path(f"/proc/{pid}").exists()
    assert "Traceback" not in text


async def test_a_worker_that_dies_stops_the_others_and_the_parent_fails(
    broker: EmbeddedBroker, topic_factory: Any, tmp_path: Path
) -> None:
    w = await start_two(broker, topic_factory, tmp_path)
    log, proc = w.log, w.proc
    try:
        await split_between(log, 2)
        text = log.read_text()
        pids = re.search(r"started 2 workers \(pids ([\d, ]+)\)", text)[1].split(",")
        os.kill(int(pids[1]), signal.SIGKILL)
        code = await asyncio.to_thread(proc.wait, 40)
    finally:
        if proc.poll() is None:
            proc.kill()
    text = log.read_text()
    assert code == 1, text[-3000:]
    assert re.search(r"worker 1 \(pid \d+\) exited with status -9; stopping the other", text)
    assert not Path(f"/proc/{int(pids[0])}").exists()


async def test_ctrl_c_to_the_process_group_drains_every_worker_once(
    broker: EmbeddedBroker, topic_factory: Any, tmp_path: Path
) -> None:
    """Ctrl-C signals the terminal's whole process group. The workers are not in it: they
    hear it once, through the parent, drain and exit 0 (they used to hear it twice and exit
    130 without committing)."""
    w = await start_two(broker, topic_factory, tmp_path)
    log, proc = w.log, w.proc
    try:
        await split_between(log, 2)
        os.killpg(proc.pid, signal.SIGINT)
        code = await asyncio.to_thread(proc.wait, 40)
    finally:
        if proc.poll() is None:
            proc.kill()
    text = log.read_text()
    assert code == 0, text[-3000:]
    assert text.count("sidecar.app: drained") == 2, text[-3000:]
    assert "second signal" not in text


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
async def test_a_signal_while_the_workers_start_neither_kills_nor_fails_them(
    broker: EmbeddedBroker, topic_factory: Any, tmp_path: Path, signum: signal.Signals
) -> None:
    """Sent while the workers are still importing: a stop waits for their handlers and
    drains (exit 0), a reload leaves them running (it used to kill them, failing the set)."""
    w = await start_two(broker, topic_factory, tmp_path)
    log, proc = w.log, w.proc
    try:
        proc.send_signal(signum)  # the workers have not loaded their rules yet
        if signum == signal.SIGHUP:
            await split_between(log, 2)
            assert proc.poll() is None
            proc.send_signal(signal.SIGTERM)
        code = await asyncio.to_thread(proc.wait, 40)
    finally:
        if proc.poll() is None:
            proc.kill()
    text = log.read_text()
    assert code == 0, text[-3000:]
    assert "exited with status" not in text, text[-3000:]
    assert "Traceback" not in text
