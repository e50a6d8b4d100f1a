"""The SSRF guard of link probes: which addresses and hosts a probe may contact."""

from __future__ import annotations

import ipaddress
import socket
from typing import Any

import pytest

from sidecar.checks import ssrf
from sidecar.checks.ssrf import (
    TargetRefused,
    UnresolvableHost,
    address_problem,
    embedded_ipv4,
    host_problem,
    literal_ip,
    normalize_host,
    resolve_public,
)


def ip(text: str) -> ssrf.IPAddress:
    return ipaddress.ip_address(text)


@pytest.mark.parametrize(
    ("address", "problem"),
    [
        ("127.0.0.1", "loopback address"),
        ("127.255.3.4", "loopback address"),
        ("::1", "loopback address"),
        ("10.1.2.3", "private address"),
        ("172.16.0.1", "private address"),
        ("192.168.1.1", "private address"),
        ("fc00::1", "private address"),
        ("198.18.0.1", "private address"),
        ("169.254.169.254", "cloud metadata address"),
        ("169.254.170.2", "cloud metadata address"),
        ("fd00:ec2::254", "cloud metadata address"),
        ("100.100.100.200", "cloud metadata address"),
        ("169.254.1.1", "link-local address"),
        ("fe80::1", "link-local address"),
        ("224.0.0.1", "multicast address"),
        ("ff02::1", "multicast address"),
        ("0.0.0.0", "unspecified address"),
        ("::", "unspecified address"),
        ("240.0.0.1", "private address"),  # the standard library files 240/4 as private
        ("100.64.0.1", "non-global address"),  # carrier-grade NAT
        ("::ffff:127.0.0.1", "loopback address (embedded in IPv6)"),
        ("::ffff:10.0.0.1", "private address (embedded in IPv6)"),
        ("::ffff:169.254.169.254", "cloud metadata address (embedded in IPv6)"),
        ("2002:7f00:1::", "loopback address (embedded in IPv6)"),  # 6to4 of 127.0.0.1
        ("64:ff9b::a00:1", "private address (embedded in IPv6)"),  # NAT64 of 10.0.0.1
    ],
)
def test_refused_addresses(address: str, problem: str) -> None:
    assert address_problem(ip(address)) == problem


@pytest.mark.parametrize(
    "address",
    ["8.8.8.8", "1.1.1.1", "2606:4700:4700::1111", "::ffff:8.8.8.8", "64:ff9b::808:808"],
)
def test_public_addresses_pass(address: str) -> None:
    assert address_problem(ip(address)) is None


@pytest.mark.parametrize(
    ("address", "problem"),
    [
        ("127.0.0.1", None),
        ("::1", None),
        ("10.0.0.1", None),
        ("192.168.0.10", None),
        ("::ffff:127.0.0.1", None),
        ("169.254.169.254", "cloud metadata address"),
        ("fd00:ec2::254", "cloud metadata address"),
        ("100.100.100.200", "cloud metadata address"),
        ("169.254.1.1", "link-local address"),
        ("fe80::1", "link-local address"),
        ("0.0.0.0", "unspecified address"),
        ("224.0.0.1", "multicast address"),
    ],
)
def test_allow_private_keeps_metadata_link_local_and_unspecified_refused(
    address: str, problem: str | None
) -> None:
    assert address_problem(ip(address), allow_private=True) == problem


def test_embedded_ipv4() -> None:
    assert embedded_ipv4(ip("::ffff:1.2.3.4")) == ip("1.2.3.4")
    assert embedded_ipv4(ip("2002:0102:0304::1")) == ip("1.2.3.4")
    assert embedded_ipv4(ip("64:ff9b::102:304")) == ip("1.2.3.4")
    assert embedded_ipv4(ip("2606:4700::1")) is None
    assert embedded_ipv4(ip("1.2.3.4")) is None


@pytest.mark.parametrize(
    ("host", "expected"),
    [
        ("1.2.3.4", "1.2.3.4"),
        ("::1", "::1"),
        ("[::1]", "::1"),
        ("fe80::1%eth0", "fe80::1"),
        ("example.com", None),
        ("2130706433", None),  # legacy forms are names: the resolver's answer is judged
        ("0177.0.0.1", None),
        ("", None),
    ],
)
def test_literal_ip(host: str, expected: str | None) -> None:
    found = literal_ip(host)
    assert (str(found) if found is not None else None) == expected


def test_normalize_host() -> None:
    assert normalize_host("Example.COM.") == "example.com"
    assert normalize_host("bücher.de") == "xn--bcher-kva.de"
    with pytest.raises(UnresolvableHost):
        normalize_host("a\u3002" + "x" * 70 + ".de")


def test_host_problem_without_resolution() -> None:
    assert host_problem("metadata.google.internal") == "cloud metadata host"
    assert host_problem("metadata.google.internal", allow_private=True) == "cloud metadata host"
    assert host_problem("169.254.169.254", allow_private=True) == "cloud metadata address"
    assert host_problem("127.0.0.1") == "loopback address"
    assert host_problem("127.0.0.1", allow_private=True) is None
    assert host_problem("example.com") is None  # still has to be resolved


@pytest.fixture
def no_dns(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("getaddrinfo must not be called")

    monkeypatch.setattr(socket, "getaddrinfo", refuse)


@pytest.mark.usefixtures("no_dns")
@pytest.mark.parametrize(
    ("host", "reason"),
    [
        ("127.0.0.1", "loopback address"),
        ("[::1]", "loopback address"),
        ("::ffff:127.0.0.1", "loopback address (embedded in IPv6)"),
        ("0.0.0.0", "unspecified address"),
        ("10.0.0.1", "private address"),
        ("169.254.169.254", "cloud metadata address"),
        ("METADATA.google.internal.", "cloud metadata host"),
    ],
)
def test_literals_and_metadata_names_are_refused_without_dns(host: str, reason: str) -> None:
    with pytest.raises(TargetRefused) as caught:
        resolve_public(host, 80)
    assert caught.value.reason == reason


@pytest.mark.usefixtures("no_dns")
def test_allowed_literal_needs_no_dns() -> None:
    assert resolve_public("127.0.0.1", 80, allow_private=True) == [ip("127.0.0.1")]
    assert resolve_public("8.8.8.8", 80) == [ip("8.8.8.8")]


@pytest.mark.parametrize("host", ["localhost", "2130706433", "0177.0.0.1", "0x7f.1"])
def test_names_resolving_to_loopback_are_refused(host: str) -> None:
    # The system resolver turns these into 127.0.0.1 (or ::1) without a network query.
    with pytest.raises(TargetRefused) as caught:
        resolve_public(host, 80)
    assert caught.value.reason == "loopback address"


def test_localhost_allowed_only_with_allow_private() -> None:
    found = resolve_public("localhost", 80, allow_private=True)
    assert found
    assert all(a.is_loopback for a in found)


def fake_dns(monkeypatch: pytest.MonkeyPatch, *answers: str) -> None:
    def getaddrinfo(host: str, port: int, *args: Any, **kwargs: Any) -> list[Any]:
        out: list[Any] = []
        for a in answers:
            family = socket.AF_INET6 if ":" in a else socket.AF_INET
            sockaddr = (a, port, 0, 0) if family == socket.AF_INET6 else (a, port)
            out.append((family, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", sockaddr))
        return out

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)


def test_one_private_answer_taints_the_name(monkeypatch: pytest.MonkeyPatch) -> None:
    fake_dns(monkeypatch, "93.184.216.34", "10.0.0.7")
    with pytest.raises(TargetRefused) as caught:
        resolve_public("rebind.example", 443)
    assert caught.value.reason == "private address"
    assert "rebind.example" in str(caught.value)


def test_public_answers_are_returned_in_order_without_duplicates(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake_dns(monkeypatch, "2606:2800:220:1::", "93.184.216.34", "93.184.216.34")
    assert resolve_public("example.com", 443) == [ip("2606:2800:220:1::"), ip("93.184.216.34")]


def test_mapped_answer_is_unwrapped(monkeypatch: pytest.MonkeyPatch) -> None:
    fake_dns(monkeypatch, "::ffff:169.254.169.254")
    with pytest.raises(TargetRefused) as caught:
        resolve_public("sneaky.example", 80, allow_private=True)
    assert caught.value.reason == "cloud metadata address (embedded in IPv6)"


def test_unresolvable_host(monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(*args: Any, **kwargs: Any) -> Any:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(socket, "getaddrinfo", fail)
    with pytest.raises(UnresolvableHost):
        resolve_public("no-such-host.invalid", 80)
    fake_dns(monkeypatch)
    with pytest.raises(UnresolvableHost):
        resolve_public("empty.example", 80)
    with pytest.raises(UnresolvableHost):
        resolve_public("", 80)
