"""links_reachable: real HTTP against a local aiohttp server, and the SSRF refusals."""

from __future__ import annotations

import asyncio
import shutil
import socket
import ssl
import subprocess
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from aiohttp import web
from pydantic import ValidationError

from sidecar.checks import CheckContext, get_check, ssrf
from sidecar.checks.base import CheckResult
from sidecar.checks.reachability import (
    LinksReachable,
    Probe,
    Prober,
    ProbeSettings,
    ReachableParams,
    Target,
    get_prober,
    shutdown_probers,
    target_of,
)
from sidecar.errors import CheckError
from sidecar.events import Event

EV = Event(id="e1", response="r")


class Server:
    """An aiohttp server on 127.0.0.1 in its own thread, recording every request it gets."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str, str]] = []
        self._lock = threading.Lock()
        self.loop = asyncio.new_event_loop()
        self.port = 0
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._main, daemon=True)
        self._thread.start()
        assert self._ready.wait(5)

    def requests(self) -> list[tuple[str, str, str]]:
        with self._lock:
            return list(self.seen)

    def paths(self) -> list[str]:
        return [path for _, path, _ in self.requests()]

    def clear(self) -> None:
        with self._lock:
            self.seen.clear()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    async def handle(self, request: web.Request) -> web.StreamResponse:
        with self._lock:
            self.seen.append((request.method, request.path_qs, request.headers.get("Host", "")))
        path = request.path
        if path == "/ok":
            return web.Response(text="fine")
        if path.startswith("/status/"):
            return web.Response(status=int(path.rsplit("/", 1)[1]))
        if path == "/head-405":
            return web.Response(status=405 if request.method == "HEAD" else 200)
        if path.startswith("/chain/"):
            left = int(path.rsplit("/", 1)[1])
            if left == 0:
                return web.Response(text="end")
            return web.Response(status=301, headers={"Location": f"/chain/{left - 1}"})
        if path == "/loop":
            return web.Response(status=302, headers={"Location": "/loop"})
        if path == "/to":
            return web.Response(status=302, headers={"Location": request.query["url"]})
        if path == "/slow":
            await asyncio.sleep(float(request.query.get("s", "1")))
            return web.Response(text="late")
        if path == "/ua":
            return web.Response(
                status=200 if "llm-sidecar" in request.headers["User-Agent"] else 400
            )
        return web.Response(status=404)

    def _main(self) -> None:
        asyncio.set_event_loop(self.loop)
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self.handle)
        self.runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.5)
        self.loop.run_until_complete(self.runner.setup())
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        self.loop.run_until_complete(site.start())
        self.port = self.runner.addresses[0][1]
        self._ready.set()
        self.loop.run_forever()
        self.loop.run_until_complete(self.runner.cleanup())
        self.loop.close()

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(10)


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    srv = Server()
    yield srv
    srv.stop()


@pytest.fixture(autouse=True)
def fresh_probers(server: Server) -> Iterator[None]:
    shutdown_probers()
    server.clear()
    yield
    shutdown_probers()


def make(**params: Any) -> LinksReachable:
    return LinksReachable(ReachableParams.model_validate(params), CheckContext())


def settle(check: LinksReachable, text: str, timeout: float = 5.0) -> CheckResult:
    """The answer once every link of ``text`` has been probed (the first call may be pending)."""
    try:
        return check(text, EV)
    except CheckError:
        pass
    assert get_prober(ProbeSettings.of(check.params)).wait_idle(timeout)
    return check(text, EV)


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


# ---- the check's contract -------------------------------------------------------------


def test_registered_with_strict_params() -> None:
    assert get_check("links_reachable") is LinksReachable
    defaults = ReachableParams()
    assert (defaults.timeout_s, defaults.max_redirects, defaults.cache_ttl_s) == (3.0, 3, 3600.0)
    assert (defaults.max_links_per_event, defaults.method, defaults.allow_private) == (
        5,
        "HEAD",
        False,
    )
    assert (defaults.queue_size, defaults.concurrency) == (1000, 8)
    with pytest.raises(ValidationError):
        ReachableParams.model_validate({"timeout": 3})
    with pytest.raises(ValidationError):
        ReachableParams.model_validate({"method": "POST"})
    with pytest.raises(ValidationError):
        ReachableParams.model_validate({"concurrency": 0})


def test_pending_then_known(server: Server) -> None:
    check = make(allow_private=True)
    text = f"see {server.url('/ok')} for details"
    with pytest.raises(CheckError, match=r"reachability pending for 1 link\(s\)"):
        check(text, EV)
    assert get_prober(ProbeSettings.of(check.params)).wait_idle(5)
    assert check(text, EV) == CheckResult(True, "1 links reachable")
    assert check(text, EV).value is True
    assert server.requests() == [("HEAD", "/ok", f"127.0.0.1:{server.port}")]  # probed once


def test_probe_counts_are_exported(server: Server) -> None:
    from prometheus_client import CollectorRegistry

    from sidecar.checks.reachability import ProberCollector

    registry = CollectorRegistry()
    registry.register(ProberCollector())
    before = registry.get_sample_value("llm_sidecar_link_probes_total") or 0.0
    check = make(allow_private=True)
    with pytest.raises(CheckError):
        check(f"see {server.url('/status/410')}", EV)
    assert get_prober(ProbeSettings.of(check.params)).wait_idle(5)
    assert registry.get_sample_value("llm_sidecar_link_probes_total") == before + 1
    assert registry.get_sample_value("llm_sidecar_link_probes_pending") == 0
    assert (registry.get_sample_value("llm_sidecar_link_probes_cached") or 0) >= 1


def test_unreachable_link_is_false_once_known(server: Server) -> None:
    check = make(allow_private=True)
    text = f"see {server.url('/status/404')}"
    with pytest.raises(CheckError):
        check(text, EV)
    get_prober(ProbeSettings.of(check.params)).wait_idle(5)
    assert check(text, EV) == CheckResult(False, "link 1: HTTP 404")


@pytest.mark.parametrize(
    ("path", "value", "reason"),
    [
        ("/ok", True, "HTTP 200"),
        ("/status/204", True, "HTTP 204"),
        ("/status/401", True, "HTTP 401"),  # behind authentication: live, not broken
        ("/status/403", True, "HTTP 403"),
        ("/status/404", False, "HTTP 404"),
        ("/status/410", False, "HTTP 410"),
        ("/status/429", False, "HTTP 429"),
        ("/status/503", False, "HTTP 503"),
        ("/chain/3", True, "HTTP 200 after 3 redirect(s)"),
        ("/chain/4", False, "too many redirects"),
        ("/loop", False, "too many redirects"),
        ("/head-405", True, "HTTP 200"),
        ("/ua", True, "HTTP 200"),
    ],
)
def test_statuses_and_redirects(server: Server, path: str, value: bool, reason: str) -> None:
    prober = Prober(ProbeSettings(allow_private=True))
    target = target_of(server.url(path))
    assert isinstance(target, Target)
    assert prober.submit(target)
    assert prober.wait_idle(5)
    assert prober.lookup(target) == Probe(value, reason)


def test_head_falls_back_to_get_and_get_mode(server: Server) -> None:
    settle(make(allow_private=True), server.url("/head-405"))
    assert [(m, p) for m, p, _ in server.requests()] == [
        ("HEAD", "/head-405"),
        ("GET", "/head-405"),
    ]
    server.clear()
    assert settle(make(allow_private=True, method="GET"), server.url("/ok")).value is True
    assert [m for m, _, _ in server.requests()] == ["GET"]


def test_redirect_limit_is_a_parameter(server: Server) -> None:
    assert settle(make(allow_private=True, max_redirects=1), server.url("/chain/1")).value is True
    result = settle(make(allow_private=True, max_redirects=1), server.url("/chain/2"))
    assert result == CheckResult(False, "link 1: too many redirects")
    assert settle(make(allow_private=True, max_redirects=0), server.url("/chain/1")).value is False


def test_every_link_must_be_reachable(server: Server) -> None:
    check = make(allow_private=True)
    both = f"{server.url('/ok')} and then {server.url('/status/404')}"
    assert settle(check, both) == CheckResult(False, "link 2: HTTP 404")
    # A link known to be broken decides False even while another link is still pending.
    new = f"{server.url('/status/404')} and {server.url('/ok?fresh=1')}"
    assert check(new, EV) == CheckResult(False, "link 1: HTTP 404")
    assert get_prober(ProbeSettings.of(check.params)).wait_idle(5)
    assert "/ok?fresh=1" in server.paths()  # ... and the unknown one was still queued


def test_no_links_invalid_links_and_link_budget(server: Server) -> None:
    check = make(allow_private=True, max_links_per_event=2)
    assert check("no links here, example.com", EV) == CheckResult(True, None)
    # Not http(s) or malformed: unreachable without any probe.
    assert check("get it at ftp://files.example.org/x", EV) == CheckResult(
        False, "link 1: scheme is not http or https"
    )
    assert check("http://exa:99999/p", EV).value is False
    many = " ".join(server.url(f"/ok?n={i}") for i in range(6))
    result = settle(check, many + " " + server.url("/ok?n=0"))  # duplicates count once
    assert result == CheckResult(True, "2 links reachable (first 2 of 6 links)")
    assert sorted(server.paths()) == ["/ok?n=0", "/ok?n=1"]


def test_slow_server_times_out(server: Server) -> None:
    check = make(allow_private=True, timeout_s=0.3)
    start = time.monotonic()
    assert settle(check, server.url("/slow?s=2")) == CheckResult(False, "link 1: timeout")
    assert time.monotonic() - start < 1.9  # the server answers after 2 s


def test_connection_refused_is_remembered_per_host(server: Server) -> None:
    check = make(allow_private=True, timeout_s=1)
    port = closed_port()
    assert settle(check, f"http://127.0.0.1:{port}/a") == CheckResult(
        False, "link 1: connect failed"
    )
    # Another URL on the dead host is answered at once, with no probe queued.
    assert check(f"http://127.0.0.1:{port}/b", EV) == CheckResult(False, "link 1: connect failed")
    assert get_prober(ProbeSettings.of(check.params)).stats().pending == 0


def test_answers_expire(server: Server) -> None:
    check = make(allow_private=True, cache_ttl_s=0.2)
    assert settle(check, server.url("/ok")).value is True
    time.sleep(0.25)
    with pytest.raises(CheckError):
        check(server.url("/ok"), EV)
    assert get_prober(ProbeSettings.of(check.params)).wait_idle(5)
    assert server.paths() == ["/ok", "/ok"]


def test_rules_with_equal_settings_share_one_prober(server: Server) -> None:
    first, second = make(allow_private=True), make(allow_private=True, max_links_per_event=9)
    assert settle(first, server.url("/ok")).value is True
    assert second(server.url("/ok"), EV).value is True  # no second probe, no pending
    assert server.paths() == ["/ok"]
    other = make(allow_private=True, timeout_s=2)
    with pytest.raises(CheckError):
        other(server.url("/ok"), EV)
    assert ProbeSettings.of(other.params) != ProbeSettings.of(first.params)


def test_full_queue_drops_and_counts_without_blocking(server: Server) -> None:
    # answers take 1 s: the first link holds the one queue slot through a loaded machine's
    # scheduling delays, so the next two find the queue full
    check = make(allow_private=True, queue_size=1, concurrency=1, timeout_s=2)
    settings = ProbeSettings.of(check.params)
    with pytest.raises(CheckError, match=r"pending for 1 link\(s\)$"):
        check(server.url("/slow?s=1&n=1"), EV)
    for _ in range(3):  # the same pending link is not queued again
        with pytest.raises(CheckError):
            check(server.url("/slow?s=1&n=1"), EV)
    assert get_prober(settings).stats().dropped == 0
    text = f"{server.url('/slow?s=1&n=2')} {server.url('/slow?s=1&n=3')}"
    start = time.perf_counter()
    with pytest.raises(CheckError, match=r"pending for 2 link\(s\); 2 not queued \(queue full\)"):
        check(text, EV)
    assert time.perf_counter() - start < 0.5  # not waiting for the 1 s answers
    assert get_prober(settings).stats().dropped == 2
    # Dropping is not forgetting: once the queue has room the link is queued again.
    assert get_prober(settings).wait_idle(5)
    with pytest.raises(CheckError, match=r"pending for 2 link\(s\); 1 not queued"):
        check(text, EV)
    assert get_prober(settings).wait_idle(5)
    assert server.paths() == ["/slow?s=1&n=1", "/slow?s=1&n=2"]


def test_shutdown_is_idempotent_and_restartable(server: Server) -> None:
    check = make(allow_private=True)
    assert settle(check, server.url("/ok")).value is True
    shutdown_probers()
    shutdown_probers()
    with pytest.raises(CheckError):  # a fresh prober: the cache went with the old one
        check(server.url("/ok"), EV)
    assert settle(check, server.url("/ok")).value is True
    assert server.paths() == ["/ok", "/ok"]


# ---- SSRF: what is refused, and that nothing connects ---------------------------------


def test_default_policy_refuses_local_targets_without_connecting(server: Server) -> None:
    check = make()  # allow_private defaults to false
    port = server.port
    for link, reason in [
        (f"http://127.0.0.1:{port}/secret", "loopback address"),
        (f"http://localhost:{port}/secret", "loopback address"),  # refused after resolution
        (f"http://LOCALHOST:{port}/secret", "loopback address"),
        (f"http://[::1]:{port}/secret", "loopback address"),
        (f"http://[::ffff:127.0.0.1]:{port}/secret", "loopback address (embedded in IPv6)"),
        (f"http://[::ffff:7f00:1]:{port}/secret", "loopback address (embedded in IPv6)"),
        (f"http://0.0.0.0:{port}/secret", "unspecified address"),
        ("http://10.0.0.1/secret", "private address"),
        ("http://192.168.1.1/secret", "private address"),
        ("http://169.254.169.254/latest/meta-data/", "cloud metadata address"),
        ("http://[fd00:ec2::254]/latest/meta-data/", "cloud metadata address"),
        ("http://100.100.100.200/latest/meta-data/", "cloud metadata address"),
        ("http://metadata.google.internal/computeMetadata/v1/", "cloud metadata host"),
    ]:
        assert settle(check, f"see {link}") == CheckResult(False, f"link 1: blocked: {reason}"), (
            link
        )
    assert server.requests() == []


def test_literal_refusals_are_decided_on_the_hot_path() -> None:
    check = make()
    result = check("http://169.254.169.254/latest/meta-data/iam", EV)  # no CheckError first
    assert result == CheckResult(False, "link 1: blocked: cloud metadata address")
    assert get_prober(ProbeSettings.of(check.params)).stats().pending == 0


@pytest.mark.parametrize(
    ("location", "reason"),
    [
        ("http://169.254.169.254/latest/meta-data/", "blocked: cloud metadata address"),
        ("http://[fd00:ec2::254]/latest/meta-data/", "blocked: cloud metadata address"),
        ("http://100.100.100.200/latest/meta-data/", "blocked: cloud metadata address"),
        ("http://[::ffff:169.254.169.254]/", "blocked: cloud metadata address (embedded in IPv6)"),
        ("http://metadata.google.internal/", "blocked: cloud metadata host"),
        ("http://169.254.10.10/", "blocked: link-local address"),
        ("http://0.0.0.0:{port}/secret", "blocked: unspecified address"),
        ("file:///etc/passwd", "redirect to a non-http(s) URL"),
        ("ftp://127.0.0.1:{port}/secret", "redirect to a non-http(s) URL"),
        ("gopher://127.0.0.1:{port}/_secret", "redirect to a non-http(s) URL"),
    ],
)
def test_each_redirect_hop_is_checked_again(server: Server, location: str, reason: str) -> None:
    check = make(allow_private=True)  # the test server is on loopback
    link = server.url("/to?url=" + location.format(port=server.port))
    assert settle(check, link) == CheckResult(False, f"link 1: {reason}")
    assert server.paths() == ["/to?url=" + location.format(port=server.port)]  # never /secret


def fake_public(host: str, port: int, *, allow_private: bool = False) -> list[ssrf.IPAddress]:
    """A resolver under which ``public.test`` is a public host living at 127.0.0.1."""
    if host == "public.test":
        return [ssrf.literal_ip("127.0.0.1")]  # type: ignore[list-item]
    return ssrf.resolve_public(host, port, allow_private=allow_private)


def probe_with_fake_dns(link: str) -> Probe | None:
    prober = Prober(ProbeSettings(), resolver=fake_public)  # the default policy
    target = target_of(link)
    assert isinstance(target, Target)
    assert prober.submit(target)
    assert prober.wait_idle(5)
    return prober.lookup(target)


def test_connection_is_pinned_to_the_checked_address(server: Server) -> None:
    # Nothing but our resolver knows public.test: httpx reached the server only because it
    # connected to the address we checked, carrying the name in the Host header.
    probe = probe_with_fake_dns(f"http://user:pw@public.test:{server.port}/ok#frag")
    assert probe == Probe(True, "HTTP 200")
    (method, path, host), *_ = server.requests()
    assert (method, path, host) == ("HEAD", "/ok", f"public.test:{server.port}")


@pytest.mark.parametrize("target", ["127.0.0.1:{port}", "localhost:{port}", "[::1]:{port}"])
def test_redirect_from_public_host_into_loopback_is_refused(server: Server, target: str) -> None:
    secret = f"http://{target.format(port=server.port)}/secret"
    probe = probe_with_fake_dns(f"http://public.test:{server.port}/to?url={secret}")
    assert probe == Probe(False, "blocked: loopback address")
    assert server.paths() == [f"/to?url={secret}"]  # the first hop only, never /secret


# ---- targets --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("link", "url", "host", "port"),
    [
        ("https://Example.COM/a?b=1#frag", "https://example.com/a?b=1", "example.com", 443),
        ("www.example.org", "http://www.example.org/", "www.example.org", 80),
        ("http://u:p@example.com:8080/x", "http://example.com:8080/x", "example.com", 8080),
        ("http://example.com:80/x", "http://example.com/x", "example.com", 80),
        ("https://[2001:db8::1]:8443/", "https://[2001:db8::1]:8443/", "2001:db8::1", 8443),
        ("https://bücher.de/ä", "https://xn--bcher-kva.de/ä", "xn--bcher-kva.de", 443),
    ],
)
def test_target_of(link: str, url: str, host: str, port: int) -> None:
    assert target_of(link) == Target(url, host, port)


def test_target_of_refuses_what_it_cannot_probe() -> None:
    assert target_of("ftp://example.com/x") == "scheme is not http or https"
    assert target_of("https://example.com/" + "a" * 3000) == "too long to probe"


# ---- TLS: the pinned connection still verifies the certificate against the link's name ----


@pytest.fixture(scope="module")
def tls_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[int, ssl.SSLContext]]:
    """An HTTPS server on 127.0.0.1 whose self-signed certificate names only public.test."""
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("openssl is not installed")
    d = tmp_path_factory.mktemp("tls")
    subprocess.run(
        [openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
         "-nodes", "-keyout", str(d / "key.pem"), "-out", str(d / "cert.pem"), "-days", "1",
         "-subj", "/CN=public.test", "-addext", "subjectAltName=DNS:public.test"],
        check=True,
        capture_output=True,
    )  # fmt: skip
    server_ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_ctx.load_cert_chain(d / "cert.pem", d / "key.pem")
    client_ctx = ssl.create_default_context(cafile=str(d / "cert.pem"))
    loop = asyncio.new_event_loop()
    ready: list[int] = []

    async def ok(request: web.Request) -> web.Response:
        return web.Response(text="secure")

    def main() -> None:
        asyncio.set_event_loop(loop)
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", ok)
        runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.5)
        loop.run_until_complete(runner.setup())
        site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=server_ctx)
        loop.run_until_complete(site.start())
        ready.append(runner.addresses[0][1])
        loop.run_forever()
        loop.run_until_complete(runner.cleanup())
        loop.close()

    thread = threading.Thread(target=main, daemon=True)
    thread.start()
    deadline = time.monotonic() + 5
    while not ready and time.monotonic() < deadline:
        time.sleep(0.01)
    assert ready
    yield ready[0], client_ctx
    loop.call_soon_threadsafe(loop.stop)
    thread.join(10)


def resolve_test_names(
    host: str, port: int, *, allow_private: bool = False
) -> list[ssrf.IPAddress]:
    """``public.test`` and ``other.test`` are public hosts living at 127.0.0.1."""
    if host in ("public.test", "other.test"):
        return [ssrf.literal_ip("127.0.0.1")]  # type: ignore[list-item]
    return ssrf.resolve_public(host, port, allow_private=allow_private)


def test_https_pinned_to_the_address_verifies_the_name(
    tls_server: tuple[int, ssl.SSLContext],
) -> None:
    port, trust = tls_server
    prober = Prober(ProbeSettings(timeout_s=2), resolver=resolve_test_names, verify=trust)
    good = target_of(f"https://public.test:{port}/x")
    wrong = target_of(f"https://other.test:{port}/x")  # same address, certificate does not match
    assert isinstance(good, Target)
    assert isinstance(wrong, Target)
    assert prober.submit(good)
    assert prober.submit(wrong)
    assert prober.wait_idle(5)
    assert prober.lookup(good) == Probe(True, "HTTP 200")
    assert prober.lookup(wrong) == Probe(False, "connect failed")
