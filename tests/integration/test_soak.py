"""Hostile input over time: waves of every kind of malformed record through ``llm-sidecar run``.

A bad record must cost its dead letter and nothing more: memory after the last wave stays
within 10 % of memory after the first.
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import orjson
import pytest
import yaml

from sidecar.embedded import EmbeddedBroker, free_port
from tests.conftest import produce, scraped_total

pytestmark = pytest.mark.integration

PAD = 30_000
WAVES = 6
PER_KIND = 60


def malformed(i: int) -> list[bytes]:
    """One record of every kind that goes to the dead-letter topic, each about 30 KB, and one
    valid event, so every batch mixes them as a hostile producer would."""
    pad = "x" * PAD
    return [
        orjson.dumps({"id": f"big-{i}", "prompt": "p", "pad": pad * 2}),  # too_large
        b'{"id": "u", "prompt": "\xff' + pad.encode() + b'"}',  # invalid_utf8
        b"{broken " + pad.encode(),  # invalid_json
        orjson.dumps([pad]),  # not_an_object
        orjson.dumps({"prompt": "no id", "pad": pad}),  # invalid_event: no id
        orjson.dumps({"id": f"n-{i}", "pad": pad}),  # invalid_event: no prompt or response
        orjson.dumps({"id": f"a-{i}", "prompt": "p", "attack": {"category": "x"}, "pad": pad}),
        orjson.dumps({"id": True, "prompt": "boolean id", "pad": pad}),  # invalid_event: type
        orjson.dumps({"id": f"ok-{i}", "prompt": "p", "response": "fine", "pad": pad}),
    ]


DEAD_LETTERS = "llm_sidecar_dead_letters_total"


def rss_mb(pid: int) -> float:
    status = Path(f"/proc/{pid}/status").read_text()
    match = re.search(r"VmRSS:\s+(\d+) kB", status)
    assert match, status
    return int(match.group(1)) / 1024


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs /proc for RSS")
async def test_waves_of_malformed_records_do_not_grow_memory(
    broker: EmbeddedBroker, topic_factory: Any, tmp_path: Path
) -> None:
    topic = await topic_factory()
    dlq = await topic_factory(prefix="dlq")
    port = free_port()
    config = tmp_path / "c.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "reload_interval_s": 0,
                "http": {"host": "127.0.0.1", "port": port},
                "kafka": {
                    "bootstrap_servers": broker.bootstrap_servers,
                    "topics": [topic],
                    "group_id": f"g-{topic}",
                    "dlq_topic": dlq,
                    "heartbeat_interval_ms": 300,
                    "session_timeout_ms": 3000,
                    "fetch_timeout_ms": 100,
                },
                "limits": {"max_event_bytes": 40_000, "dlq_max_bytes": 1024},
            }
        )
    )
    log = tmp_path / "run.log"
    with log.open("ab") as err:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "sidecar",
                "--log-level",
                "ERROR",
                "run",
                "--config",
                str(config),
            ],
            stdout=subprocess.DEVNULL,
            stderr=err,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
    per_wave = PER_KIND * (len(malformed(0)) - 1)
    after: list[float] = []
    try:
        for wave in range(WAVES):
            records = [r for i in range(PER_KIND) for r in malformed(wave * PER_KIND + i)]
            await produce(broker.bootstrap_servers, topic, records)
            deadline = time.monotonic() + 60
            while True:
                try:
                    if await asyncio.to_thread(scraped_total, port, DEAD_LETTERS) >= per_wave * (
                        wave + 1
                    ):
                        break
                except OSError:
                    pass
                assert time.monotonic() < deadline, log.read_text()[-3000:]
                assert proc.poll() is None, log.read_text()[-3000:]
                await asyncio.sleep(0.2)
            await asyncio.sleep(0.5)  # the last batch's commit
            after.append(rss_mb(proc.pid))
    finally:
        proc.send_signal(signal.SIGTERM)
        code = await asyncio.to_thread(proc.wait, 30)
    assert code == 0, log.read_text()[-3000:]
    print("RSS after each wave (MB):", [round(x, 1) for x in after])
    assert after[-1] <= after[0] * 1.10, f"RSS grew wave by wave: {after}"
