"""MQTT source (aiomqtt): topic filters, QoS 1, a persistent session, acknowledgement after
processing.

aiomqtt has no public manual-acknowledgement switch, but the paho client under it does: with
``manual_ack`` on, a QoS 1 PUBACK is sent only when :meth:`MqttSource.ack` runs, i.e. after the
batch is handled. Unacknowledged messages are redelivered by the broker when the session
resumes (``clean_session=False`` with a stable client id), which gives at-least-once across a
crash or a reconnect.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import ssl
from collections.abc import AsyncIterator, Sequence
from typing import Any

from ..errors import SourceError
from ..settings import MqttSettings
from .base import Reachability, Record, Source

__all__ = ["MqttSource"]

log = logging.getLogger(__name__)


class MqttSource(Source):
    """Subscribes to the configured topic filters with QoS 1."""

    name = "mqtt"

    def __init__(self, cfg: MqttSettings) -> None:
        self.cfg = cfg
        self._client: Any = None
        self._stopping = asyncio.Event()
        self._pending: dict[int, tuple[int, int]] = {}
        """Record offset (our sequence) -> (MQTT message id, QoS), until acknowledged."""
        self._seq = 0
        self._connected = False
        self._receive: asyncio.Future[Any] | None = None
        self.link = Reachability(f"MQTT at {cfg.host}:{cfg.port}", log)
        """Whether the broker answers: an outage is logged once (and once a minute while it
        lasts), and ``/readyz`` says what it waits for."""

    def _make_client(self) -> Any:
        try:
            import aiomqtt
        except ImportError:
            raise SourceError(
                "the MQTT source needs the 'mqtt' extra: pip install 'llm-sidecar[mqtt]'"
            ) from None
        client = aiomqtt.Client(
            self.cfg.host,
            self.cfg.port,
            identifier=self.cfg.client_id,
            clean_session=False,
            username=self.cfg.username,
            password=self.cfg.password.get_secret_value() if self.cfg.password else None,
            tls_context=ssl.create_default_context() if self.cfg.tls else None,
            max_queued_incoming_messages=self.cfg.queue_size,
            timeout=10,
        )
        # Send PUBACK only after processing (see the module docstring).
        client._client.manual_ack_set(True)
        return client

    async def _connect(self) -> bool:
        """One attempt to connect and subscribe; False if the broker did not answer
        (:attr:`link` says why). A missing extra raises :class:`SourceError`."""
        import aiomqtt

        client = self._make_client()
        entered = False
        try:
            await client.__aenter__()
            entered = True
            for topic in self.cfg.topics:
                await client.subscribe(topic, qos=1)
        except aiomqtt.MqttError as exc:
            if entered:  # connected but not subscribed: let go of the connection
                with contextlib.suppress(Exception):
                    await client.__aexit__(None, None, None)
            self.link.down(str(exc) or type(exc).__name__)
            return False
        self._client = client
        self._pending.clear()  # message ids of a previous connection mean nothing now
        self._connected = True
        self.link.up()
        log.info(
            "subscribed to %s on %s:%d", ", ".join(self.cfg.topics), self.cfg.host, self.cfg.port
        )
        return True

    async def start(self) -> None:
        """Connect once; a broker that does not answer yet is retried by :meth:`batches`, as
        the Kafka source does, so a sidecar that starts before its broker waits for it."""
        if self._client is None:
            await self._connect()

    def _cancel_receive(self) -> None:
        receive, self._receive = self._receive, None
        if receive is not None and not receive.done():
            receive.cancel()  # the connection goes too: the broker redelivers unacked ones

    async def stop(self) -> None:
        self._stopping.set()
        self._cancel_receive()
        client, self._client = self._client, None
        self._connected = False
        if client is not None:
            with contextlib.suppress(Exception):
                await client.__aexit__(None, None, None)

    def stop_fetching(self) -> None:
        self._stopping.set()

    async def batches(self) -> AsyncIterator[list[Record]]:
        import aiomqtt

        delay = 0.5
        while not self._stopping.is_set():
            if self._client is None:
                if await self._connect():
                    delay = 0.5
                else:
                    yield []  # an idle turn: the loop shows it is alive while it waits
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(self._stopping.wait(), delay)
                    delay = min(delay * 2, 10.0)
                    continue
            try:
                batch = await self._next_batch()
            except aiomqtt.MqttError as exc:
                self.link.down(f"connection lost: {exc}")
                await self.stop_client()
                continue
            yield batch  # empty when idle: lets the caller show it is alive

    async def stop_client(self) -> None:
        self._cancel_receive()
        client, self._client = self._client, None
        self._connected = False
        if client is not None:
            with contextlib.suppress(Exception):
                await client.__aexit__(None, None, None)

    async def _next_batch(self) -> list[Record]:
        batch: list[Record] = []
        loop = asyncio.get_running_loop()
        deadline: float | None = None
        while len(batch) < self.cfg.max_batch:
            timeout = (
                self.cfg.batch_timeout_ms / 1000
                if deadline is None
                else max(0.0, deadline - loop.time())
            )
            # One receive stays pending across batches: cancelling it on a timeout could
            # drop a message it had already taken off the client's queue.
            if self._receive is None:
                self._receive = asyncio.ensure_future(anext(self._client.messages))
            done, _ = await asyncio.wait({self._receive}, timeout=timeout)
            if not done:
                break
            receive, self._receive = self._receive, None
            message = receive.result()
            if deadline is None:
                deadline = loop.time() + self.cfg.batch_timeout_ms / 1000
            payload = message.payload
            value = payload if isinstance(payload, bytes) else str(payload or "").encode()
            self._seq += 1
            self._pending[self._seq] = (message.mid, message.qos)
            batch.append(
                Record(value=value, topic=str(message.topic), partition=0, offset=self._seq)
            )
            if self._stopping.is_set():
                break
        return batch

    async def ack(self, batch: Sequence[Record]) -> None:
        client = self._client
        for r in batch:
            entry = self._pending.pop(r.offset, None)
            if entry is None or client is None:
                continue  # from a lost connection: the broker redelivers it
            mid, qos = entry
            if qos > 0:
                client._client.ack(mid, qos)

    def not_ready(self) -> str | None:
        if self._stopping.is_set():
            return "stopping"
        if not self._connected:
            return self.link.waiting_for() or f"waiting for MQTT at {self.cfg.host}:{self.cfg.port}"
        return None
