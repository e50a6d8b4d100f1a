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

from ..errors import ConfigError, SourceError
from ..settings import MqttSettings
from .base import Reachability, Record, Source, tcp_problem

__all__ = ["MqttSource"]

log = logging.getLogger(__name__)


class _LostConnectionAtDebug(logging.Filter):
    """paho logs each lost connection as an ERROR of its own ("failed to receive on socket:
    [Errno 104] Connection reset by peer"). The source already says it, once per outage (see
    :class:`Reachability`), so those lines go to DEBUG; paho's other lines pass as they are."""

    _LOST = ("failed to receive on socket", "timeout on socket")

    def filter(self, record: logging.LogRecord) -> bool:
        if not (isinstance(record.msg, str) and record.msg.startswith(self._LOST)):
            return True
        if record.levelno > logging.DEBUG:
            if _paho_log.isEnabledFor(logging.DEBUG):
                _paho_log.debug("%s", record.getMessage())
            return False
        return True


_paho_log = logging.getLogger(f"{__name__}.paho")
"""The MQTT client library's own log lines (aiomqtt's default is the ``mqtt`` logger)."""
_paho_log.addFilter(_LostConnectionAtDebug())

_HELD_S = 10.0
"""A connection counts as the broker being back (and resets the reconnect backoff) once it
has held this long: one lost at once, again and again (another client with the same client_id
taking the session over, and back), is an outage, logged as one."""


_REFUSED_FOR_GOOD = {
    132: "mqtt.host/mqtt.port: the broker does not speak this MQTT version",
    133: "mqtt.client_id: the broker does not take it (MQTT 3.1.1 brokers must take 1-23 "
    "letters and digits)",
    134: "mqtt.username and mqtt.password",
    135: "mqtt.username, mqtt.password and the broker's access rules for that user",
    138: "the broker's ban list: it has banned this client",
    140: "the broker's authentication settings: it wants another method",
}
"""CONNACK reason codes (MQTT 5 numbering, which paho also gives MQTT 3.1.1 brokers' codes) that
the same settings will get again, and what to check. Retrying them would only hide the
mistake behind a sidecar that never becomes ready."""


_V311 = {1: 132, 2: 133, 4: 134, 5: 135}
"""MQTT 3.1.1 CONNACK return codes, where a client hands them on as plain numbers."""


def refused_for_good(exc: BaseException) -> str | None:
    """What to check, when ``exc`` is a refusal that retrying cannot mend; else None."""
    rc = getattr(exc, "rc", None)
    if isinstance(rc, int):
        code: object = _V311.get(rc)
    else:
        code = getattr(rc, "value", None)
    return _REFUSED_FOR_GOOD.get(code) if isinstance(code, int) else None


def _failed_grant(granted: Sequence[Any]) -> Any:
    """The first failure code in a SUBACK's list (code 128 or above), or None."""
    for code in granted:
        if getattr(code, "value", code) >= 0x80:
            return code
    return None


async def _discard(client: Any) -> None:
    """Close a client, connected or not: an attempt that timed out waiting for the broker's
    answer leaves paho's socket (and aiomqtt's task that serves it) open until closed."""
    if client._client.socket() is None:
        return  # nothing was opened (the connection was refused)
    with contextlib.suppress(Exception):
        await asyncio.wait_for(client.__aexit__(None, None, None), 5)


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
        self._connections = 0
        self._connected_at = 0.0
        self.held_s = _HELD_S

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
            logger=_paho_log,
        )
        # Send PUBACK only after processing (see the module docstring).
        client._client.manual_ack_set(True)
        return client

    async def _connect(self) -> bool:
        """One attempt to connect and subscribe; False if the broker did not answer
        (:attr:`link` says why) or a stop came meanwhile. A missing extra raises
        :class:`SourceError`; a refusal that the same settings would meet again (credentials,
        client id, a subscription refused) raises :class:`ConfigError`. A client that is not
        kept is closed, whatever ended the attempt (a failure, a stop, the task cancelled)."""
        import aiomqtt

        client = self._make_client()
        where = f"the MQTT broker at {self.cfg.host}:{self.cfg.port}"
        try:
            await client.__aenter__()
            for topic in self.cfg.topics:
                failed = _failed_grant(await client.subscribe(topic, qos=1))
                if failed is not None:
                    raise ConfigError(
                        f"{where} refused the subscription to {topic!r} ({failed}): check "
                        "mqtt.topics and the broker's access rules for this client"
                    )
        except aiomqtt.MqttError as exc:
            await _discard(client)
            check = refused_for_good(exc)
            if check is not None:
                raise ConfigError(
                    f"{where} refused the connection ({exc}): check {check}"
                ) from None
            self.link.down(await self._why(exc))
            return False
        except BaseException:
            await _discard(client)
            raise
        if self._stopping.is_set():  # stopped while connecting: nobody would read or ack
            await _discard(client)
            return False
        self._client = client
        self._pending.clear()  # message ids of a previous connection mean nothing now
        self._connected = True
        self._connected_at = self.link.clock()
        # Reconnects are reported by the link, once the connection has held.
        log.log(
            logging.INFO if self._connections == 0 else logging.DEBUG,
            "subscribed to %s on %s:%d",
            ", ".join(self.cfg.topics),
            self.cfg.host,
            self.cfg.port,
        )
        self._connections += 1
        return True

    async def _why(self, exc: BaseException) -> str:
        """A failed attempt in words. The client says "timed out" both for a host that takes
        no connection and for a port that takes one but does not speak MQTT (another
        service, or a TLS mismatch), and "connection reset" when a plain port meets TLS: a
        TCP probe tells these apart, as the Kafka source does."""
        text = str(exc) or type(exc).__name__
        lowered = text.lower()
        tls = self.cfg.tls
        if "timed out" in lowered:
            problem = await tcp_problem(self.cfg.host, self.cfg.port)
            if problem is not None:
                return problem
            return "the port accepts connections but no MQTT broker answers there " + (
                "(mqtt.tls is true: does the broker take TLS on this port?)"
                if tls
                else "(another service, or a TLS port: then set mqtt.tls: true)"
            )
        if tls and any(w in lowered for w in ("reset", "eof", "wrong version", "record layer")):
            return f"{text} (mqtt.tls is true: does the broker take TLS on this port?)"
        return text

    async def start(self) -> None:
        """Connect once; a broker that does not answer yet is retried by :meth:`batches`, as
        the Kafka source does, so a sidecar that starts before its broker waits for it."""
        if self._client is None:
            await self._connect()

    def _cancel_receive(self) -> None:
        receive, self._receive = self._receive, None
        if receive is None:
            return
        if not receive.done():
            receive.cancel()  # the connection goes too: the broker redelivers unacked ones
        elif not receive.cancelled():
            receive.exception()  # a lost connection's error, already reported: retrieved

    async def stop(self) -> None:
        self._stopping.set()
        await self.stop_client()

    def stop_fetching(self) -> None:
        self._stopping.set()

    async def batches(self) -> AsyncIterator[list[Record]]:
        import aiomqtt

        delay = 0.5
        failed = self._client is None and self.link.reachable is False  # start() failed
        while not self._stopping.is_set():
            if failed:
                # An idle turn (the loop shows it is alive), then the backoff: after a failed
                # attempt, and after a lost connection, so that a connection that is lost at
                # once (another client with the same client_id takes the session over, and
                # back) is not retried in a tight loop.
                failed = False
                yield []
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._stopping.wait(), delay)
                delay = min(delay * 2, 10.0)
                continue
            if self._client is None and not await self._connect():
                failed = True
                continue
            try:
                batch = await self._next_batch()
            except aiomqtt.MqttError as exc:
                self.link.down(f"connection lost: {exc}")
                await self.stop_client()
                failed = True
                continue
            if not self.link.reachable and self.link.clock() - self._connected_at >= self.held_s:
                self.link.up(since=self._connected_at)
                delay = 0.5  # it has held: the next loss starts the backoff afresh
            yield batch  # empty when idle: lets the caller show it is alive

    async def stop_client(self) -> None:
        self._cancel_receive()
        client, self._client = self._client, None
        self._connected = False
        if client is not None:
            await _discard(client)

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
