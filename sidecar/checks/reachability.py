"""Link reachability: are the links in the text live, without ever waiting on the network.

``links_reachable`` is True when every link the text carries (up to ``max_links_per_event``
distinct links, found as :mod:`sidecar.checks.links` finds them) is known to answer, False as
soon as one is known not to, and *not applicable* (a :class:`~sidecar.errors.CheckError`)
while any of them is still unknown. The check itself only reads a cache: an unknown link is
put on a bounded queue (never waiting; a full queue drops the link and counts it) and probed
in the background, so a later event carrying the same link gets the real answer.

What counts as reachable: the final answer, after following at most ``max_redirects``
redirects, has a status below 400, or is 401 or 403 — the server is there and the resource
exists behind authentication, which is a live link, not a broken one. Every other status
(404, 410, 429, 5xx ...), a DNS failure, a refused or timed-out connection, a TLS failure,
too many redirects, a redirect to a non-http(s) URL and a refused target are unreachable.
A link that is not syntactically valid (see ``no_invalid_links``) is unreachable without
any probe.

Probing: one daemon thread per process runs an asyncio loop; every rule with the same probe
settings shares one prober on it (one ``httpx.AsyncClient``, one cache, one queue). A probe
sends ``HEAD`` (``GET`` when the server answers 405 or 501, or when ``method: GET``), reads
no body, and must finish — resolution, connections and redirects included — within
``timeout_s``. At most ``concurrency`` links are probed at once.

Safety (see :mod:`sidecar.checks.ssrf`): only http and https; the host is resolved before any
connection and refused if any address is loopback, private, link-local, multicast, reserved,
unspecified or a cloud metadata endpoint; the connection goes to the checked address (the
URL's host travels in the ``Host`` header and TLS SNI), so a second DNS answer cannot
redirect it; every redirect hop is checked again. Credentials in a link are never sent,
proxy environment variables are ignored, and connections are not reused.

Caching: a result is kept ``cache_ttl_s`` (network failures and 429/5xx answers only
``failure_ttl_s``), for at most ``cache_size`` URLs, least recently used out first. A host
that cannot be resolved, is refused, or refuses connections is remembered for
``failure_ttl_s``, so its other URLs are answered without a probe.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import functools
import logging
import os
import ssl
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Literal, NamedTuple
from urllib.parse import urlsplit

import httpx
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector
from pydantic import Field

from ..errors import CheckError
from ..events import Event
from . import ssrf
from .base import Check, CheckContext, CheckResult, Params
from .links import find_links, link_problem
from .registry import register

__all__ = [
    "LinksReachable",
    "Probe",
    "ProbeSettings",
    "Prober",
    "ProberStats",
    "ReachableParams",
    "Target",
    "get_prober",
    "shutdown_probers",
    "target_of",
]

log = logging.getLogger(__name__)

Resolver = Callable[..., list[ssrf.IPAddress]]
"""``resolver(host, port, allow_private=...)``: :func:`sidecar.checks.ssrf.resolve_public`."""

MAX_URL_CHARS = 2048
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_TRANSIENT = frozenset({408, 425, 429, 500, 502, 503, 504})
_USER_AGENT = "llm-sidecar-linkcheck/1 (+https://llm-sidecar.dev)"
_DNS_THREADS = 16


class ReachableParams(Params):
    timeout_s: float = Field(3.0, gt=0, le=60)
    """Budget for one link: resolution, connections, redirects and the GET fallback."""
    max_redirects: int = Field(3, ge=0, le=10)
    cache_ttl_s: float = Field(3600.0, gt=0)
    """How long an answer is kept (network failures and 429/5xx: ``failure_ttl_s``)."""
    failure_ttl_s: float = Field(300.0, gt=0)
    """How long a network failure, a 429/5xx answer or a dead or refused host is kept."""
    max_links_per_event: int = Field(5, ge=1, le=100)
    """Only the first this many distinct links of a text are looked at."""
    method: Literal["HEAD", "GET"] = "HEAD"
    """HEAD falls back to GET on 405 and 501; GET always sends GET (and reads no body)."""
    allow_private: bool = False
    """Allow loopback, private and reserved addresses: for tests and trusted intranets only."""
    queue_size: int = Field(1000, ge=1, le=100_000)
    """Links waiting or being probed; more are dropped (and counted) until some finish."""
    concurrency: int = Field(8, ge=1, le=128)
    cache_size: int = Field(10_000, ge=1, le=1_000_000)


@dataclass(frozen=True, slots=True)
class ProbeSettings:
    """What a prober depends on; rules with equal settings share one prober."""

    timeout_s: float = 3.0
    max_redirects: int = 3
    cache_ttl_s: float = 3600.0
    failure_ttl_s: float = 300.0
    method: Literal["HEAD", "GET"] = "HEAD"
    allow_private: bool = False
    queue_size: int = 1000
    concurrency: int = 8
    cache_size: int = 10_000

    @classmethod
    def of(cls, p: ReachableParams) -> ProbeSettings:
        return cls(
            timeout_s=p.timeout_s,
            max_redirects=p.max_redirects,
            cache_ttl_s=p.cache_ttl_s,
            failure_ttl_s=p.failure_ttl_s,
            method=p.method,
            allow_private=p.allow_private,
            queue_size=p.queue_size,
            concurrency=p.concurrency,
            cache_size=p.cache_size,
        )


@dataclass(frozen=True, slots=True)
class Probe:
    """What is known of one URL. ``reachable`` None: the probe itself failed (a bug)."""

    reachable: bool | None
    reason: str
    """A short fixed phrase such as ``HTTP 404`` or ``blocked: loopback address``."""


class Target(NamedTuple):
    """A link made ready to probe: ``url`` is the cache key (no credentials, no fragment)."""

    url: str
    host: str
    port: int


def target_of(link: str) -> Target | str:
    """The probe target of a link, or why it has none (a short phrase)."""
    return _cached_target(link) if len(link) <= MAX_URL_CHARS else _target(link)


def _target(link: str) -> Target | str:
    problem = link_problem(link)
    if problem is not None:
        return problem
    url = "http://" + link if link[:4].lower() == "www." else link
    try:
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        host = ssrf.normalize_host(parts.hostname or "")
        port = parts.port
    except (ValueError, ssrf.UnresolvableHost):
        return "does not parse"
    default = 443 if scheme == "https" else 80
    netloc = f"[{host}]" if ":" in host else host
    if port is not None and port != default:
        netloc += f":{port}"
    key = f"{scheme}://{netloc}{parts.path or '/'}"
    if parts.query:
        key += "?" + parts.query
    if len(key) > MAX_URL_CHARS:
        return "too long to probe"
    return Target(key, host, port or default)


_cached_target = functools.lru_cache(maxsize=4096)(_target)


class ProberStats(NamedTuple):
    probed: int
    """Probes finished."""
    dropped: int
    """Links not queued because the queue was full."""
    pending: int
    """Links queued or being probed now."""
    cached: int


class _Expiring(NamedTuple):
    probe: Probe
    expires: float


class _Runtime:
    """The one background thread and event loop that all probers of this process share."""

    def __init__(self) -> None:
        self.pid = os.getpid()
        self.loop = asyncio.new_event_loop()
        self.dns = ThreadPoolExecutor(_DNS_THREADS, thread_name_prefix="llm-sidecar-dns")
        self.thread = threading.Thread(target=self._main, name="llm-sidecar-links", daemon=True)
        self.thread.start()

    def _main(self) -> None:
        loop = self.loop
        asyncio.set_event_loop(loop)
        try:
            loop.run_forever()
        finally:
            tasks = asyncio.all_tasks(loop)
            for task in tasks:
                task.cancel()
            loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()

    def stop(self, probers: list[Prober], timeout: float) -> None:
        if self.thread.is_alive():
            closing = asyncio.run_coroutine_threadsafe(_close_all(probers), self.loop)
            try:
                closing.result(timeout)
            except Exception:  # a stuck close must not stop the shutdown
                log.warning("link probers did not close within %.1fs", timeout)
            with contextlib.suppress(RuntimeError):  # the loop is already closed
                self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(timeout)
        self.dns.shutdown(wait=False, cancel_futures=True)


async def _close_all(probers: list[Prober]) -> None:
    for prober in probers:
        await prober.aclose()


_STATE_LOCK = threading.RLock()
_runtime_now: _Runtime | None = None
_probers: dict[ProbeSettings, Prober] = {}
_every_prober: weakref.WeakSet[Prober] = weakref.WeakSet()
_state_pid = os.getpid()


def _forget_if_forked() -> None:
    """After a fork the background thread is gone: start afresh in the child. Holds the lock."""
    global _runtime_now, _state_pid
    if _state_pid != os.getpid():
        _runtime_now = None
        _probers.clear()
        _every_prober.clear()
        _state_pid = os.getpid()


def _runtime() -> _Runtime:
    global _runtime_now
    with _STATE_LOCK:
        _forget_if_forked()
        if _runtime_now is None:
            _runtime_now = _Runtime()
        return _runtime_now


def get_prober(settings: ProbeSettings) -> Prober:
    """The process's prober for these settings, made on first use (no thread until a probe)."""
    prober = _probers.get(settings)
    if prober is not None and not prober.closed and _state_pid == os.getpid():
        return prober
    with _STATE_LOCK:
        _forget_if_forked()
        prober = _probers.get(settings)
        if prober is None or prober.closed:
            prober = _probers[settings] = Prober(settings)
        return prober


def shutdown_probers(timeout: float = 2.0) -> None:
    """Cancel every probe, close the HTTP clients and stop the background thread.

    Idempotent; the next check call starts afresh with empty caches. Called at exit.
    """
    global _runtime_now
    with _STATE_LOCK:
        _forget_if_forked()
        runtime, _runtime_now = _runtime_now, None
        probers = list(_every_prober)
        _every_prober.clear()
        _probers.clear()
    for prober in probers:
        prober.closed = True
    if runtime is not None:
        runtime.stop(probers, timeout)


atexit.register(shutdown_probers, 1.0)


class Prober:
    """A cache of link answers in front of a bounded background queue of HTTP probes.

    :meth:`lookup` and :meth:`submit` are for the hot path: thread-safe, never blocking on
    the network. Everything else runs on the shared background loop.
    """

    def __init__(
        self,
        settings: ProbeSettings,
        *,
        resolver: Resolver | None = None,
        verify: ssl.SSLContext | bool = True,
    ) -> None:
        """``resolver`` and ``verify`` (TLS trust) are for tests; rules use the defaults."""
        self.settings = settings
        self.closed = False
        self._resolver: Resolver = resolver or ssrf.resolve_public
        self._verify = verify
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self._urls: OrderedDict[str, _Expiring] = OrderedDict()
        self._hosts: OrderedDict[tuple[str, int], _Expiring] = OrderedDict()
        self._pending: set[str] = set()
        self._probed = 0
        self._dropped = 0
        self._rt: _Runtime | None = None
        # Made on the loop, on first probe.
        self._client: httpx.AsyncClient | None = None
        self._sem: asyncio.Semaphore | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        with _STATE_LOCK:
            _every_prober.add(self)

    # ---- hot path -------------------------------------------------------------------

    def lookup(self, target: Target) -> Probe | None:
        """The known answer for a target, or None when it has to be probed."""
        now = time.monotonic()
        with self._lock:
            hit = self._urls.get(target.url)
            if hit is not None:
                if hit.expires > now:
                    self._urls.move_to_end(target.url)
                    return hit.probe
                del self._urls[target.url]
            dead = self._hosts.get((target.host, target.port))
            if dead is not None:
                if dead.expires > now:
                    return dead.probe
                del self._hosts[(target.host, target.port)]
        problem = ssrf.host_problem(target.host, allow_private=self.settings.allow_private)
        if problem is not None:  # a refused literal address or metadata name: no probe needed
            probe = Probe(False, f"blocked: {problem}")
            self._remember_host(target.host, target.port, probe)
            return probe
        return None

    def submit(self, target: Target) -> bool:
        """Queue a target for probing; False (and counted) when the queue is full.

        A target already queued or being probed is not queued twice (and counts as queued).
        """
        with self._lock:
            if self.closed:
                return False
            if target.url in self._pending:
                return True
            if len(self._pending) >= self.settings.queue_size:
                self._dropped += 1
                first = self._dropped == 1
                accepted = False
            else:
                self._pending.add(target.url)
                first = accepted = True
        if not accepted:
            if first:
                log.warning(
                    "link probe queue full (%d); further links are dropped and counted",
                    self.settings.queue_size,
                )
            return False
        if self._rt is None:
            self._rt = _runtime()
        try:
            self._rt.loop.call_soon_threadsafe(self._start, target)
        except RuntimeError:  # the loop was stopped under us (shutdown)
            self._finished(target.url)
            return False
        return True

    def stats(self) -> ProberStats:
        with self._lock:
            return ProberStats(self._probed, self._dropped, len(self._pending), len(self._urls))

    def wait_idle(self, timeout: float) -> bool:
        """Block until nothing is queued or being probed (for tests and tools, not the hot path)."""
        with self._idle:
            return self._idle.wait_for(lambda: not self._pending, timeout)

    # ---- cache ----------------------------------------------------------------------

    def _remember(self, url: str, probe: Probe, ttl: float) -> None:
        with self._lock:
            self._urls[url] = _Expiring(probe, time.monotonic() + ttl)
            self._urls.move_to_end(url)
            while len(self._urls) > self.settings.cache_size:
                self._urls.popitem(last=False)

    def _remember_host(self, host: str, port: int, probe: Probe) -> None:
        key = (host, port)
        with self._lock:
            self._hosts[key] = _Expiring(probe, time.monotonic() + self.settings.failure_ttl_s)
            self._hosts.move_to_end(key)
            while len(self._hosts) > self.settings.cache_size:
                self._hosts.popitem(last=False)

    def _dead_host(self, host: str, port: int) -> Probe | None:
        with self._lock:
            dead = self._hosts.get((host, port))
        return dead.probe if dead is not None and dead.expires > time.monotonic() else None

    def _finished(self, url: str) -> None:
        with self._idle:
            self._pending.discard(url)
            if not self._pending:
                self._idle.notify_all()

    # ---- background loop ------------------------------------------------------------

    def _start(self, target: Target) -> None:
        if self.closed:
            self._finished(target.url)
            return
        task = asyncio.get_running_loop().create_task(self._run(target))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _run(self, target: Target) -> None:
        try:
            if self._sem is None:
                self._sem = asyncio.Semaphore(self.settings.concurrency)
            async with self._sem:
                probe = await self.probe(target.url)
            transient = probe.reachable is None or _is_transient(probe)
            ttl = self.settings.failure_ttl_s if transient else self.settings.cache_ttl_s
            self._remember(target.url, probe, ttl)
            with self._lock:
                self._probed += 1
        except Exception:
            log.exception("link probe failed unexpectedly")
            self._remember(target.url, Probe(None, "probe failed"), self.settings.failure_ttl_s)
        finally:
            self._finished(target.url)

    def _http(self) -> httpx.AsyncClient:
        if self._client is None:
            s = self.settings
            self._client = httpx.AsyncClient(
                follow_redirects=False,
                trust_env=False,  # no proxies from the environment: the checked IP is the peer
                timeout=httpx.Timeout(s.timeout_s),
                limits=httpx.Limits(max_connections=s.concurrency, max_keepalive_connections=0),
                headers={"User-Agent": _USER_AGENT, "Accept": "*/*"},
                verify=self._verify,
            )
        return self._client

    async def aclose(self) -> None:
        """Cancel this prober's probes and close its client (on the background loop)."""
        self.closed = True
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    async def probe(self, url: str) -> Probe:
        """Probe one URL now, bypassing the cache; never raises for network trouble."""
        try:
            async with asyncio.timeout(self.settings.timeout_s):
                return await self._follow(httpx.URL(url))
        except TimeoutError:
            return Probe(False, "timeout")
        except httpx.InvalidURL:
            return Probe(False, "does not parse")

    async def _follow(self, url: httpx.URL) -> Probe:
        s = self.settings
        for hop in range(s.max_redirects + 1):
            if url.scheme not in ("http", "https"):
                return Probe(False, "redirect to a non-http(s) URL")
            host = url.raw_host.decode("ascii")
            if not host:
                return Probe(False, "bad redirect")
            port = url.port or (443 if url.scheme == "https" else 80)
            dead = self._dead_host(host, port)
            if dead is not None:
                return dead
            try:
                status, location = await self._request(url, host, port)
            except _HostFailure as exc:
                self._remember_host(host, port, exc.probe)
                return exc.probe
            except httpx.TimeoutException:
                return Probe(False, "timeout")
            except httpx.TransportError:
                return Probe(False, "network error")
            if status in _REDIRECTS and location:
                if hop == s.max_redirects:
                    return Probe(False, "too many redirects")
                try:
                    url = url.join(location)
                except httpx.InvalidURL:
                    return Probe(False, "bad redirect")
                continue
            after = f" after {hop} redirect(s)" if hop else ""
            return Probe(_reachable_status(status), f"HTTP {status}{after}")
        raise AssertionError("unreachable")  # pragma: no cover - the loop always returns

    async def _request(self, url: httpx.URL, host: str, port: int) -> tuple[int, str | None]:
        """Status and Location of one request to a checked, pinned address."""
        s = self.settings
        loop = asyncio.get_running_loop()
        rt = self._rt or _runtime()
        try:
            addresses = await loop.run_in_executor(
                rt.dns, lambda: self._resolver(host, port, allow_private=s.allow_private)
            )
        except ssrf.TargetRefused as exc:
            raise _HostFailure(Probe(False, f"blocked: {exc.reason}")) from None
        except ssrf.UnresolvableHost:
            raise _HostFailure(Probe(False, "DNS lookup failed")) from None
        method = s.method
        while True:
            status, location = await self._send_pinned(url, host, addresses, method)
            if method == "HEAD" and status in (405, 501):
                method = "GET"
                continue
            return status, location

    async def _send_pinned(
        self, url: httpx.URL, host: str, addresses: list[ssrf.IPAddress], method: str
    ) -> tuple[int, str | None]:
        # Connect to a checked address, never to the name: the Host header and TLS SNI carry
        # the name, so certificates are verified against it. Two addresses at most (one
        # family may be unroutable here).
        headers = {"Host": url.netloc.decode("ascii")}
        extensions = {"sni_hostname": host} if ssrf.literal_ip(host) is None else {}
        failure: Exception | None = None
        for ip in addresses[:2]:
            pinned = url.copy_with(host=str(ip), username=None, password=None, fragment=None)
            request = self._http().build_request(
                method, pinned, headers=headers, extensions=extensions
            )
            try:
                response = await self._http().send(request, stream=True)
            except httpx.ConnectTimeout as exc:
                failure = exc
                continue
            except httpx.ConnectError as exc:
                failure = exc
                continue
            try:
                return response.status_code, response.headers.get("location")
            finally:
                await response.aclose()
        if isinstance(failure, httpx.ConnectTimeout):
            raise _HostFailure(Probe(False, "connect timeout"))
        raise _HostFailure(Probe(False, "connect failed"))


class _HostFailure(Exception):
    """The host, not just this URL, cannot be probed: remembered per host."""

    def __init__(self, probe: Probe) -> None:
        super().__init__(probe.reason)
        self.probe = probe


def _reachable_status(status: int) -> bool:
    return status < 400 or status in (401, 403)


def _is_transient(probe: Probe) -> bool:
    if probe.reason.startswith("HTTP "):
        return int(probe.reason.split()[1]) in _TRANSIENT
    return probe.reachable is False  # network trouble: timeouts, refused, DNS, blocked


@register
class LinksReachable(Check[ReachableParams]):
    """True when every link in the text is known to answer (see the module docstring)."""

    name = "links_reachable"
    params_model = ReachableParams

    def __init__(self, params: ReachableParams, ctx: CheckContext) -> None:
        super().__init__(params, ctx)
        self._settings = ProbeSettings.of(params)

    def __call__(self, text: str, event: Event) -> CheckResult:
        links = find_links(text)
        if not links:
            return CheckResult(True, None)
        distinct = list(dict.fromkeys(links))
        looked_at = distinct[: self.params.max_links_per_event]
        prober = get_prober(self._settings)
        first_bad: str | None = None
        unknown: list[Target] = []
        unsettled = reachable = 0
        for i, link in enumerate(looked_at, 1):
            target = target_of(link)
            if isinstance(target, str):
                first_bad = first_bad or f"link {i}: {target}"
                continue
            probe = prober.lookup(target)
            if probe is None:
                unknown.append(target)
            elif probe.reachable is None:
                unsettled += 1
            elif probe.reachable:
                reachable += 1
            elif first_bad is None:
                first_bad = f"link {i}: {probe.reason}"
        dropped = sum(not prober.submit(t) for t in unknown)
        of = f" (first {len(looked_at)} of {len(distinct)} links)" if looked_at != distinct else ""
        if first_bad is not None:
            return CheckResult(False, first_bad + of)
        if unknown or unsettled:
            full = f"; {dropped} not queued (queue full)" if dropped else ""
            raise CheckError(f"reachability pending for {len(unknown) + unsettled} link(s){full}")
        return CheckResult(True, f"{reachable} links reachable{of}")


class ProberCollector(Collector):
    """Exports the link probers' counts at scrape time (all probers of this process)."""

    def collect(self) -> Iterable[Metric]:
        with _STATE_LOCK:
            probers = list(_every_prober)
        stats = [p.stats() for p in probers]
        probed = CounterMetricFamily(
            "llm_sidecar_link_probes", "Link reachability probes finished."
        )
        probed.add_metric([], sum(s.probed for s in stats))
        dropped = CounterMetricFamily(
            "llm_sidecar_link_probes_dropped",
            "Links not queued for a reachability probe because the queue was full.",
        )
        dropped.add_metric([], sum(s.dropped for s in stats))
        pending = GaugeMetricFamily(
            "llm_sidecar_link_probes_pending", "Links queued or being probed."
        )
        pending.add_metric([], sum(s.pending for s in stats))
        cached = GaugeMetricFamily("llm_sidecar_link_probes_cached", "Link answers cached.")
        cached.add_metric([], sum(s.cached for s in stats))
        return [probed, dropped, pending, cached]
