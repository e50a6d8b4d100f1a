"""The HTTP endpoint on the event loop: ``/metrics``, ``/healthz``, ``/readyz``.

``/healthz`` answers whether the process is alive and its main loop turning (a wedged loop should
be restarted); ``/readyz`` whether it is consuming and its broker reachable (a pod that cannot
reach Kafka should leave the Service, not be killed), and if not, what it waits for. Both answer
from state the loop keeps, never by a network call.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry
from prometheus_client.openmetrics.exposition import CONTENT_TYPE_LATEST as OPENMETRICS_TYPE

from .errors import ConfigError
from .lifecycle import Lifecycle
from .metrics import render
from .settings import HttpSettings

__all__ = ["HttpServer"]

log = logging.getLogger(__name__)


class HttpServer(Lifecycle):
    """Serves the registry and the probes; more routes can be added before ``start()``."""

    def __init__(
        self,
        cfg: HttpSettings,
        registry: CollectorRegistry,
        *,
        healthy: Callable[[], bool],
        not_ready: Callable[[], str | None],
    ) -> None:
        self.cfg = cfg
        self.registry = registry
        self._healthy = healthy
        self._not_ready = not_ready
        # Bodies are read by the handlers themselves, with their own limits.
        self.app = web.Application(client_max_size=64 * 1_048_576)
        self.app.router.add_get("/metrics", self._metrics)
        self.app.router.add_get("/healthz", self._healthz)
        self.app.router.add_get("/readyz", self._readyz)
        self._runner: web.AppRunner | None = None
        self.port: int | None = None

    async def start(self) -> None:
        if self._runner is not None:
            return
        # auto_decompress off: request bodies are read as sent, so a gzip body cannot
        # expand past the size limits before they are checked (POST /v1/check refuses it).
        runner = web.AppRunner(
            self.app, access_log=None, handle_signals=False, auto_decompress=False
        )
        await runner.setup()
        site = web.TCPSite(runner, self.cfg.host, self.cfg.port, reuse_address=True)
        try:
            await site.start()
        except OSError as exc:
            await runner.cleanup()
            raise ConfigError(
                f"cannot listen on {self.cfg.host}:{self.cfg.port}: {exc.strerror or exc}"
            ) from None
        self._runner = runner
        server = site._server
        sockets = getattr(server, "sockets", None) or []
        self.port = sockets[0].getsockname()[1] if sockets else self.cfg.port
        log.info("serving /metrics, /healthz and /readyz on %s:%s", self.cfg.host, self.port)

    async def stop(self) -> None:
        runner, self._runner = self._runner, None
        if runner is not None:
            await runner.cleanup()

    async def _metrics(self, request: web.Request) -> web.Response:
        # Off the event loop: a large exposition must not pause the batch loop or heartbeats.
        # OpenMetrics when the scraper asks for it (Prometheus does): only it carries exemplars.
        openmetrics = "application/openmetrics-text" in request.headers.get("Accept", "")
        body = await asyncio.to_thread(render, self.registry, openmetrics=openmetrics)
        content_type = OPENMETRICS_TYPE if openmetrics else CONTENT_TYPE_LATEST
        return web.Response(body=body, headers={"Content-Type": content_type})

    async def _healthz(self, request: web.Request) -> web.Response:
        if self._healthy():
            return web.Response(text="ok\n")
        return web.Response(status=503, text="main loop stalled\n")

    async def _readyz(self, request: web.Request) -> web.Response:
        reason = self._not_ready()
        if reason is None:
            return web.Response(text="ready\n")
        return web.Response(status=503, text=f"not ready: {reason}\n")
