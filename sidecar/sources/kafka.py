"""Kafka source: one aiokafka consumer in a group, batches from ``getmany``, manual commits.

At-least-once: the app handles a whole batch (checks, verdicts, dead letters) before it calls
:meth:`KafkaSource.ack`, which commits ``last offset + 1`` of every partition in the batch that
is still assigned. The commit runs beside the next batch, not before it: ``ack`` starts it and
returns, and waits only when the previous commit is still in flight, so at most one commit is
outstanding and a crash redelivers at most two batches. On a rebalance, the listener waits for
that commit, then commits what is already done for the partitions being revoked; records of a
revoked partition still in hand are not committed and will be delivered again to the new owner.
:meth:`KafkaSource.stop` waits for the commit in flight and commits what is left; during a
rebalance it abandons the join and does not ask to leave (:func:`_abandon_join`). A join that
runs past the rebalance timeout plus a session timeout is given up and the consumer replaced.

Nothing in :meth:`KafkaSource.start` waits on the network: the batch loop connects, retrying
with backoff, so a process whose Kafka is not there yet stays up, not ready, and says what it
waits for. A watcher keeps the reachability that ``/readyz`` reports; aiokafka's own
connection errors are logged at DEBUG (:func:`quiet_connection_logs`), and the outage is
reported once, then once a minute, and once more when it ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import importlib
import logging
from collections.abc import AsyncIterator, Awaitable, Sequence
from typing import Any, TypeVar

from aiokafka import AIOKafkaConsumer, ConsumerRebalanceListener, TopicPartition
from aiokafka.errors import CommitFailedError, KafkaError, for_code
from aiokafka.protocol.group import HeartbeatRequest, LeaveGroupRequest

from ..errors import SourceError
from ..settings import KafkaSettings, kafka_server, kafka_ssl_context
from . import kafka_batches
from .base import Reachability, Record, Source, tcp_problem

__all__ = ["KafkaSource", "client_options", "describe_unreachable", "quiet_connection_logs"]

log = logging.getLogger(__name__)

T = TypeVar("T")

ATTEMPT_S = 10.0
"""The longest one connection attempt may take."""
WATCH_UP_S = 5.0
"""How often the watcher asks for metadata while Kafka answers..."""
WATCH_DOWN_S = 1.0
"""...and while it does not, so its return is noticed at once."""
LEAVE_S = 2.0
"""The longest the check and the leave request at a stop may take together."""

_CONNECTION_TROUBLE = (
    "connect",
    "connection",
    "not ready",
    "nodenotready",
    "coordinator",
    "heartbeat",
    "metadata",
    "timed out",
    "timedout",
    "timeout",
    "joingroup",
    "syncgroup",
    "leavegroup",
    "failed fetch",
    "broken pipe",
    "reset by peer",
    "produce response",
    "bootstrap",
    "leader",
)


class _ConnectionTroubleToDebug(logging.Filter):
    """Demotes aiokafka's connection errors to DEBUG: during an outage it logs several a
    second, while llm-sidecar says once (then once a minute) that the broker is unreachable."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.WARNING or record.levelno >= logging.CRITICAL:
            return True
        text = record.getMessage().lower()
        if record.exc_info and record.exc_info[1] is not None:
            text += " " + type(record.exc_info[1]).__name__.lower()
        if not any(word in text for word in _CONNECTION_TROUBLE):
            return True
        record.levelno, record.levelname = logging.DEBUG, "DEBUG"
        return logging.getLogger(record.name).isEnabledFor(logging.DEBUG)


_FILTER = _ConnectionTroubleToDebug()
_AIOKAFKA_MODULES = (
    "aiokafka.client",
    "aiokafka.conn",
    "aiokafka.consumer.fetcher",
    "aiokafka.consumer.group_coordinator",
    "aiokafka.producer.sender",
)


def quiet_connection_logs() -> None:
    """Install the filter on every aiokafka logger (a logger's filter does not apply to its
    children's records, so each needs its own). Idempotent."""
    for module in _AIOKAFKA_MODULES:  # so that every module's logger exists
        importlib.import_module(module)

    names = [n for n in logging.root.manager.loggerDict if n.split(".")[0] == "aiokafka"]
    for name in ["aiokafka", *names]:
        logger = logging.getLogger(name)
        if _FILTER not in logger.filters:
            logger.addFilter(_FILTER)


PROBED_SERVERS = 5
"""At most this many bootstrap servers are tried for :func:`describe_unreachable`."""


async def _tcp_problem(server: str) -> str | None:
    """Why the bootstrap server ``host:port`` does not take a TCP connection, or None."""
    try:
        host, port = kafka_server(server)
    except ValueError as err:
        return str(err)
    return await tcp_problem(host, port)


async def describe_unreachable(
    bootstrap_servers: str, exc: BaseException, wait_s: float, *, took_s: float | None = None
) -> str:
    """Why a connection attempt failed, in words: aiokafka's own error says only "Unable to
    bootstrap", so try the servers' TCP ports (the first :data:`PROBED_SERVERS`, at once) to
    tell refused, unknown and silent apart. Servers that fail alike are one reason; servers
    that fail differently are each named with theirs. ``took_s``, how long the attempt ran,
    tells a silent port (it used up ``wait_s``) from one that answered, but not as Kafka."""
    servers = [s.strip() for s in bootstrap_servers.split(",") if s.strip()][:PROBED_SERVERS]
    problems = await asyncio.gather(*(_tcp_problem(s) for s in servers))
    if not servers or None in problems:  # a port accepts: Kafka itself did not answer
        text = str(exc).removeprefix(f"{type(exc).__name__}: ")
        if (
            isinstance(exc, TimeoutError)
            or "bootstrap" in text.lower()
            or "metadata" in text.lower()
        ):
            if took_s is not None and took_s < wait_s / 2:
                return (
                    "the port accepts connections but what answers there is not Kafka: the "
                    f"attempt failed after {took_s:.1f}s, so another service listens there or "
                    "the TLS setting does not match the listener"
                )
            return f"the port accepts connections but Kafka does not answer within {wait_s:.0f}s"
        return text or type(exc).__name__
    if len(set(problems)) == 1:
        return str(problems[0])
    return "; ".join(
        f"{server}: {problem}" for server, problem in zip(servers, problems, strict=True)
    )


def client_options(cfg: KafkaSettings) -> dict[str, Any]:
    """Connection and security options shared by the consumer and the producers."""
    opts: dict[str, Any] = {
        "bootstrap_servers": cfg.bootstrap_servers,
        "client_id": cfg.client_id,
        "request_timeout_ms": cfg.request_timeout_ms,
        "security_protocol": cfg.security_protocol,
    }
    if cfg.security_protocol.startswith("SASL"):
        opts["sasl_mechanism"] = cfg.sasl_mechanism
        opts["sasl_plain_username"] = cfg.sasl_plain_username
        if cfg.sasl_plain_password is not None:
            opts["sasl_plain_password"] = cfg.sasl_plain_password.get_secret_value()
    if cfg.security_protocol in ("SSL", "SASL_SSL"):
        opts["ssl_context"] = kafka_ssl_context(cfg)
    return opts


class _Stopped(Exception):
    """The stop came while waiting for Kafka."""


class _Rebalance(ConsumerRebalanceListener):  # type: ignore[misc]
    def __init__(self, source: KafkaSource) -> None:
        self.source = source

    async def on_partitions_revoked(self, revoked: list[TopicPartition]) -> None:
        await self.source._on_revoked(revoked)

    async def on_partitions_assigned(self, assigned: list[TopicPartition]) -> None:
        self.source._joining = False
        self.source._joining_since = None
        self.source._stuck_streak = 0
        log.info("partitions assigned: %s", _fmt(assigned))


def _fmt(tps: Sequence[TopicPartition]) -> str:
    return ", ".join(f"{tp.topic}[{tp.partition}]" for tp in sorted(tps)) or "none"


class KafkaSource(Source):
    """Consumes the configured topics in the configured group."""

    name = "kafka"

    def __init__(self, cfg: KafkaSettings, *, report_every_s: float = 60.0) -> None:
        self.cfg = cfg
        self._consumer: AIOKafkaConsumer | None = None
        self._started = False
        self._stopping = asyncio.Event()
        self._done: dict[TopicPartition, int] = {}
        """Next offset to commit per partition: everything before it is handled."""
        self._committed: dict[TopicPartition, int] = {}
        self.link = Reachability(f"Kafka at {cfg.bootstrap_servers}", log, every_s=report_every_s)
        self._watcher: asyncio.Task[None] | None = None
        self.commit_successes = 0
        self.commit_failures = 0
        self._commit_task: asyncio.Task[None] | None = None
        """The commit started by the last :meth:`ack`, running beside the next batch."""
        self._commit_lock = asyncio.Lock()
        """One commit at a time, so offsets reach the broker in order."""
        self._joining = False
        """Between a join's start (subscribed, or partitions revoked) and its assignment."""
        self._bad_batches = kafka_batches.Watch()
        self._paused: dict[TopicPartition, kafka_batches.BadBatch] = {}
        """Partitions stopped at a batch that cannot be read (``on_undecodable: pause``)."""
        self.undecodable: dict[str, int] = {"paused": 0, "skipped": 0}
        """Unreadable record batches met, by what was done about them."""
        self.records_skipped = 0
        """Records in the batches skipped (``on_undecodable: skip``): never checked."""
        self._joining_since: float | None = None
        """When the join in progress started (loop time), for the stuck-join watchdog."""
        self.stuck_joins = 0
        """Joins given up as stuck, each followed by a fresh consumer."""
        self._stuck_streak = 0
        """Consumers replaced since the last assignment: each waits twice as long as the one
        before it (up to 8 times), so that replacements cannot keep a slow group rebalancing."""
        quiet_connection_logs()
        kafka_batches.install()

    async def start(self) -> None:
        """Nothing here waits on the network: :meth:`batches` connects (see the module doc)."""
        self._started = True

    def _new_consumer(self) -> AIOKafkaConsumer:
        return AIOKafkaConsumer(
            group_id=self.cfg.group_id,
            group_instance_id=self.cfg.group_instance_id,
            enable_auto_commit=False,
            auto_offset_reset=self.cfg.auto_offset_reset,
            session_timeout_ms=self.cfg.session_timeout_ms,
            heartbeat_interval_ms=self.cfg.heartbeat_interval_ms,
            rebalance_timeout_ms=self.cfg.rebalance_timeout_ms,
            max_poll_records=self.cfg.max_batch,
            fetch_max_wait_ms=self.cfg.fetch_max_wait_ms,
            isolation_level=self.cfg.isolation_level,
            **client_options(self.cfg),
        )

    async def _until_stopped(self, aw: Awaitable[T], within_s: float) -> T:
        """Await ``aw`` unless the stop comes first (:class:`_Stopped`) or ``within_s`` passes
        (TimeoutError); ``aw`` is cancelled in both cases."""
        task = asyncio.ensure_future(aw)
        stop = asyncio.ensure_future(self._stopping.wait())
        try:
            done, _ = await asyncio.wait(
                {task, stop}, timeout=within_s, return_when=asyncio.FIRST_COMPLETED
            )
        finally:
            stop.cancel()
        if task in done:
            return task.result()
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        if self._stopping.is_set():
            raise _Stopped
        raise TimeoutError

    async def _connect(self) -> AIOKafkaConsumer | None:
        """One attempt to connect; None if it failed (:attr:`link` says why) or the stop came.

        An attempt gets at most ATTEMPT_S, however long the request timeout: a port that
        accepts and never answers is reported within seconds, not after the request timeout."""
        wait_s = min(self.cfg.request_timeout_ms / 1000 + 1.0, ATTEMPT_S)
        if self.link.reachable is None and self.link.failures == 0:
            log.info("connecting to Kafka at %s", self.cfg.bootstrap_servers)
        consumer = self._new_consumer()
        loop = asyncio.get_running_loop()
        started = loop.time()
        try:
            await self._until_stopped(consumer.start(), wait_s)
        except _Stopped:
            await _close_quietly(consumer)
            return None
        except (KafkaError, OSError, TimeoutError) as exc:
            took = loop.time() - started
            await _close_quietly(consumer)
            reason = await describe_unreachable(
                self.cfg.bootstrap_servers, exc, wait_s, took_s=took
            )
            self.link.down(reason)
            return None
        _leave_only_a_stable_group(consumer)
        consumer.subscribe(self.cfg.topics, listener=_Rebalance(self))
        self._join_started()
        self._consumer = consumer
        self.link.up()
        log.info(
            "consuming %s as group %s%s",
            ", ".join(self.cfg.topics),
            self.cfg.group_id,
            f" (static member {self.cfg.group_instance_id})" if self.cfg.group_instance_id else "",
        )
        self._watcher = asyncio.create_task(self._watch(consumer), name="kafka-watch")
        return consumer

    async def _watch(self, consumer: AIOKafkaConsumer) -> None:
        """Keep :attr:`link` current with a metadata request now and then, off the probe path."""
        wait_s = min(self.cfg.request_timeout_ms / 1000, 5.0)
        while not self._stopping.is_set():
            try:
                await asyncio.wait_for(consumer.topics(), wait_s)
            except (KafkaError, OSError, TimeoutError) as exc:
                self.link.down(await describe_unreachable(self.cfg.bootstrap_servers, exc, wait_s))
            else:
                self.link.up()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(
                    self._stopping.wait(), WATCH_UP_S if self.link.reachable else WATCH_DOWN_S
                )

    async def stop(self) -> None:
        self._stopping.set()
        watcher, self._watcher = self._watcher, None
        if watcher is not None:
            watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watcher
        consumer = self._consumer
        if consumer is None:
            return
        try:
            # The last acknowledged batch: its commit may still be running.
            await self._settle()
            await self._commit()
        finally:
            self._consumer = None
            if self._joining:
                await _abandon_join(consumer, "stopping during a rebalance")
            await _close(consumer)

    def stop_fetching(self) -> None:
        self._stopping.set()

    async def batches(self) -> AsyncIterator[list[Record]]:
        if not self._started:
            raise SourceError("start() the source first")
        async for idle in self._connecting():
            yield idle
        consumer = self._consumer
        if consumer is None:  # the stop came first
            return
        # getmany waits for the group's assignment whenever a rebalance is in progress, past
        # its own timeout: a join held by the broker for a departed member's session (10 s and
        # more) kept a SIGTERM waiting for it, and the loop from turning. It must not be
        # cancelled for that (it waits on the consumer's own assignment future, which a
        # cancellation would break), so a call that outlasts its timeout is left running and
        # awaited again after an idle turn; only a stop, or a join given up as stuck (the
        # consumer is then replaced), abandons it.
        wait_s = self.cfg.fetch_timeout_ms / 1000 + 1.0
        fetch: asyncio.Future[dict[TopicPartition, list[Any]]] | None = None
        # The fetches run where a batch that cannot be read is reported, not raised.
        loop, watched = asyncio.get_running_loop(), kafka_batches.watched(self._bad_batches)
        stop: asyncio.Future[Any] = asyncio.ensure_future(self._stopping.wait())  # one for all
        try:
            while not self._stopping.is_set():
                stuck_s = self._join_stuck()
                if stuck_s is not None:
                    if fetch is not None:
                        fetch.cancel()
                        await asyncio.gather(fetch, return_exceptions=True)
                        fetch = None
                    await self._replace_stuck(consumer, stuck_s)
                    async for idle in self._connecting():
                        yield idle
                    if self._consumer is None:
                        return
                    consumer = self._consumer
                    continue
                if fetch is None:
                    fetch = loop.create_task(
                        consumer.getmany(
                            timeout_ms=self.cfg.fetch_timeout_ms, max_records=self.cfg.max_batch
                        ),
                        context=watched,
                    )
                await asyncio.wait(
                    {fetch, stop}, timeout=wait_s, return_when=asyncio.FIRST_COMPLETED
                )
                if not fetch.done():
                    if self._stopping.is_set():  # nothing taken yet: redelivered after the stop
                        fetch.cancel()
                        await asyncio.gather(fetch, return_exceptions=True)
                        return
                    yield []  # a rebalance holds it: an idle turn, then wait on
                    continue
                data, fetch = fetch.result(), None
                for bad in self._bad_batches.take():
                    await self._unreadable(consumer, bad)
                if not data:
                    yield []  # an idle turn: lets the caller show it is alive
                    continue
                if not self.link.reachable:
                    self.link.up()
                batch: list[Record] = []
                for tp, messages in data.items():
                    topic, partition = tp.topic, tp.partition
                    # Positional: keyword arguments cost a quarter of a microsecond per record.
                    batch.extend(
                        Record(
                            m.value if m.value is not None else b"",
                            topic,
                            partition,
                            m.offset,
                            m.key,
                            m.timestamp,
                            tuple(m.headers) if m.headers else (),
                        )
                        for m in messages
                    )
                yield batch
        finally:
            stop.cancel()
            if fetch is not None:  # left by a caller that stopped iterating: abandon it
                fetch.cancel()

    async def _unreadable(self, consumer: AIOKafkaConsumer, bad: kafka_batches.BadBatch) -> None:
        """A record batch the client cannot read: pause its partition, or skip the batch."""
        tp = bad.tp
        if tp not in consumer.assignment() or tp in self._paused:
            return
        where = f"{tp.topic}[{tp.partition}] offsets {bad.first}-{bad.end - 1}"
        if self.cfg.on_undecodable == "skip":
            consumer.seek(tp, bad.end)
            self.undecodable["skipped"] += 1
            self.records_skipped += bad.end - bad.first
            log.error(
                "skipped the record batch at %s, which cannot be read (%s): %d offsets not "
                "checked (kafka.on_undecodable=skip)",
                where,
                bad.error,
                bad.end - bad.first,
            )
            # Committed at once: an idle partition would otherwise show the skipped offsets
            # as lag, and a restart would meet the batch again.
            if bad.end > self._done.get(tp, -1):
                self._done[tp] = bad.end
            await self._settle()
            self._commit_task = asyncio.create_task(self._commit(), name="kafka-commit")
            return
        consumer.pause(tp)
        self._paused[tp] = bad
        self.undecodable["paused"] += 1
        log.error(
            "cannot read the record batch at %s (%s): partition paused, nothing after it is "
            "read until the process restarts; install the codec or fix the producer, or set "
            "kafka.on_undecodable=skip to go past it",
            where,
            bad.error,
        )

    async def _connecting(self) -> AsyncIterator[list[Record]]:
        """Connect, retrying; yields idle turns meanwhile. :attr:`_consumer` is set after it,
        unless the stop came first."""
        delay = 0.5
        while self._consumer is None:
            # Until Kafka answers: an attempt, then an idle turn (the loop is alive, /healthz
            # stays green, so the pod is not restarted), then a backoff of 0.5 s doubling to 15 s.
            consumer = await self._connect()
            if self._stopping.is_set():
                return
            if consumer is None:
                yield []
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._stopping.wait(), delay)
                delay = min(delay * 2, 15.0)

    async def _replace_stuck(self, consumer: AIOKafkaConsumer, stuck_s: float) -> None:
        """Give up a join that has run past any broker's hold and close its consumer; the
        caller connects a fresh one, which joins as a new member. Nothing is in hand during a
        join (the revoked partitions' progress was committed when they were revoked) and the
        consumer had no assignment, so nothing is lost or committed twice: the new assignment
        starts from the group's committed offsets."""
        self.stuck_joins += 1
        self._stuck_streak += 1
        # Said once; a replacement that does not get an assignment either is only counted.
        (log.warning if self._stuck_streak == 1 else log.info)(
            "the group join has taken %.0fs, past the rebalance timeout plus a session timeout: "
            "replacing the consumer with a fresh one, which joins again",
            stuck_s,
        )
        await self._settle()
        self._consumer = None
        self._joining, self._joining_since = False, None
        self._done.clear()
        self._committed.clear()
        self._paused.clear()
        watcher, self._watcher = self._watcher, None
        if watcher is not None:
            watcher.cancel()
            await asyncio.gather(watcher, return_exceptions=True)
        await _abandon_join(consumer, "replacing a stuck consumer")
        await _close_quietly(consumer)

    async def ack(self, batch: Sequence[Record]) -> None:
        consumer = self._consumer
        if consumer is None:
            return
        # Progress of a partition revoked while the batch was in hand is not ours to commit:
        # its new owner may already be past it.
        assigned = consumer.assignment()
        last: dict[tuple[str, int], int] = {}
        for r in batch:
            key = (r.topic, r.partition)
            if r.offset > last.get(key, -1):
                last[key] = r.offset
        for (topic, partition), offset in last.items():
            tp = TopicPartition(topic, partition)
            if tp in assigned and offset + 1 > self._done.get(tp, -1):
                self._done[tp] = offset + 1
        # The round trip runs beside the next batch; only a commit still in flight from the
        # batch before is waited for, so at most one is outstanding.
        await self._settle()
        self._commit_task = asyncio.create_task(self._commit(), name="kafka-commit")
        await asyncio.sleep(0)  # let it send the request before the next batch holds the loop

    async def _settle(self) -> None:
        """Wait for the commit started by the last :meth:`ack`, if it is still running."""
        task, self._commit_task = self._commit_task, None
        if task is not None:
            await asyncio.shield(task)

    async def _commit(self, only: Sequence[TopicPartition] | None = None) -> None:
        async with self._commit_lock:
            await self._commit_now(only)

    async def _commit_now(self, only: Sequence[TopicPartition] | None) -> None:
        consumer = self._consumer
        if consumer is None:
            return
        assigned = consumer.assignment()
        offsets = {
            tp: off
            for tp, off in self._done.items()
            if tp in assigned and (only is None or tp in only) and self._committed.get(tp) != off
        }
        if not offsets:
            return
        try:
            await asyncio.wait_for(consumer.commit(offsets), self.cfg.request_timeout_ms / 1000)
        except (CommitFailedError, KafkaError, TimeoutError) as exc:
            # Not fatal: the records are delivered again (to us or the partition's new owner).
            self.commit_failures += 1
            log.warning("offset commit failed, records will be redelivered: %s", exc)
            return
        self.commit_successes += 1
        self._committed.update(offsets)

    def _join_started(self) -> None:
        self._joining = True
        if self._joining_since is None:
            self._joining_since = asyncio.get_running_loop().time()

    def _join_stuck(self) -> float | None:
        """How long the join in progress has run, once that is past the rebalance timeout plus
        a session timeout: no broker holds a live member's join that long, whatever the cause."""
        since = self._joining_since
        if since is None:
            return None
        took = asyncio.get_running_loop().time() - since
        rebalance_ms = self.cfg.rebalance_timeout_ms or self.cfg.session_timeout_ms
        limit_s = (rebalance_ms + self.cfg.session_timeout_ms) / 1000
        limit_s *= 2 ** min(self._stuck_streak, 3)
        return took if took > limit_s else None

    async def _on_revoked(self, revoked: list[TopicPartition]) -> None:
        self._join_started()
        log.info("partitions revoked: %s", _fmt(revoked))
        await self._settle()
        await self._commit(only=revoked)
        for tp in revoked:
            self._done.pop(tp, None)
            self._committed.pop(tp, None)
            self._paused.pop(tp, None)  # its next owner meets the batch and decides alike

    def not_ready(self) -> str | None:
        """From the state the batch loop and the watcher keep; no network call."""
        if self._stopping.is_set():
            return "stopping"
        if not self._started:
            return "not started"
        if self._paused:
            bad = next(iter(self._paused.values()))
            more = f" (and {len(self._paused) - 1} more)" if len(self._paused) > 1 else ""
            return (
                f"partition {bad.tp.topic}[{bad.tp.partition}] paused at offset {bad.first}{more}: "
                f"its record batch cannot be read ({bad.error})"
            )
        return self.link.waiting_for()

    def lag(self) -> dict[tuple[str, int], int]:
        consumer = self._consumer
        if consumer is None:
            return {}
        out: dict[tuple[str, int], int] = {}
        for tp in consumer.assignment():
            high = consumer.highwater(tp)
            if high is None:
                continue
            done = self._done.get(tp, self._committed.get(tp))
            if done is None:
                continue
            out[(tp.topic, tp.partition)] = max(0, high - done)
        return out


async def _abandon_join(consumer: AIOKafkaConsumer, why: str) -> None:
    """End the consumer's join in progress, so that its stop does not wait for it, and do not
    ask to leave: the broker drops the member after its session.

    aiokafka's ``stop()`` first waits for the task that runs the group protocol, and during a
    rebalance that task waits for the join, which the broker may hold for a dead member's whole
    session. A stopping process has no use for that join: the task is cancelled (it commits
    nothing of ours, auto commit being off). The leave request that ``stop()`` would then send
    is dropped on purpose: the embedded broker (Tansu 0.6), asked to let the group's leader
    leave while the group is rebalancing, removes the member but keeps it as the leader, so no
    later round has a leader and the group never gets an assignment again. Forgetting the
    generation here keeps ``stop()`` from sending it; the group goes on after one session."""
    coordinator = getattr(consumer, "_coordinator", None)
    task = getattr(coordinator, "_coordination_task", None)
    if isinstance(task, asyncio.Task) and not task.done():
        log.info(
            "%s: abandoning the group join; the broker drops this member after its session", why
        )
        task.cancel()
        await asyncio.wait({task})  # ends it without raising its cancellation here
    if coordinator is not None:
        coordinator.generation = -1  # no leave request (aiokafka leaves only with a generation)


def _leave_only_a_stable_group(consumer: AIOKafkaConsumer) -> None:
    """Make the consumer's leave request (at its stop, or after ``max_poll_interval_ms`` idle)
    ask first whether the group is stable: a heartbeat answered without error. If the group is
    rebalancing the member does not leave, it lets its session expire (see
    :func:`_abandon_join` for why a leave during a rebalance is unsafe on the embedded broker;
    Kafka would take it, and only waits the rebalance timeout without it)."""
    coordinator = getattr(consumer, "_coordinator", None)
    if coordinator is None:  # made by the consumer's start()
        return
    coordinator._maybe_leave_group = functools.partial(_leave_if_stable, coordinator)


async def _leave_if_stable(coordinator: Any) -> None:
    try:
        # No generation (aiokafka's -1, also set by _abandon_join), nothing to leave; a static
        # member stays. Unlike aiokafka's own check, generation 0 is one: the embedded broker
        # numbers a group's first generation 0, and its members would otherwise never leave.
        if coordinator.generation < 0 or coordinator._group_instance_id is not None:
            return
        group, member = coordinator.group_id, coordinator.member_id

        async def ask() -> bool:
            beat = await coordinator._send_req(
                HeartbeatRequest(group, coordinator.generation, member)
            )
            error = for_code(beat.error_code)
            if error.errno != 0:
                log.info(
                    "not asking to leave group %s: it answers %s (a rebalance); the broker "
                    "drops this member after its session",
                    group,
                    error.__name__,
                )
                return False
            left = await coordinator._send_req(LeaveGroupRequest(group, member))
            refused = for_code(left.error_code)
            if refused.errno != 0:
                raise refused()
            return True

        try:
            if await asyncio.wait_for(ask(), LEAVE_S):
                log.info("left group %s", group)
        except (KafkaError, OSError) as exc:  # OSError: TimeoutError too
            log.info(
                "could not leave group %s (%s); the broker drops this member after its session",
                group,
                type(exc).__name__,
            )
    finally:
        coordinator.reset_generation()


async def _close(consumer: AIOKafkaConsumer) -> None:
    try:
        await consumer.stop()
    except asyncio.CancelledError:
        task = asyncio.current_task()
        if task is not None and task.cancelling():
            raise
        # aiokafka's fetcher, closed while it waits to retry an unreachable broker, re-raises
        # its own task's cancellation and skips closing the connections: close them here.
        log.info("the consumer's fetcher was mid-retry when closed; closing its connections")
        await consumer._client.close()


async def _close_quietly(consumer: AIOKafkaConsumer) -> None:
    """Close a consumer whose start failed; nothing about it is worth reporting."""
    with contextlib.suppress(Exception):
        await asyncio.wait_for(_close(consumer), 5.0)
