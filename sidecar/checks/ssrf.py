"""Which network targets an outbound link probe may contact (server-side request forgery guard).

Links come from model output, so whoever steers the model chooses the URLs the sidecar would
fetch. Before any connection the probe resolves the host name and refuses the whole host if
*any* of its addresses is not a public unicast address: loopback, private (RFC 1918, unique
local IPv6), shared (carrier-grade NAT), link-local, multicast, reserved, unspecified, or
anything else the standard library does not call global. IPv4 addresses embedded in IPv6
(IPv4-mapped ``::ffff:a.b.c.d``, 6to4 ``2002::/16`` and NAT64 ``64:ff9b::/96``) are unwrapped
and judged as the IPv4 address they reach. Cloud metadata endpoints — by address and by their
well-known host names — are refused always.

``allow_private=True`` (for tests and trusted intranets only) lifts the loopback, private,
shared and reserved restrictions; link-local, multicast, unspecified and metadata targets stay
refused even then.

Resolution alone does not stop DNS rebinding (a name that answers a public address to the
check and a private one to the connect): callers must connect to an address this module
returned, not to the name. Everything here is synchronous and free of side effects except
:func:`resolve_public`, which calls :func:`socket.getaddrinfo` (run it off the hot path).
"""

from __future__ import annotations

import ipaddress
import socket

__all__ = [
    "METADATA_ADDRESSES",
    "METADATA_HOSTS",
    "IPAddress",
    "TargetRefused",
    "UnresolvableHost",
    "address_problem",
    "embedded_ipv4",
    "host_problem",
    "literal_ip",
    "normalize_host",
    "resolve_public",
]

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

METADATA_ADDRESSES: frozenset[IPAddress] = frozenset(
    ipaddress.ip_address(a)
    for a in (
        "169.254.169.254",  # AWS, GCP, Azure, OpenStack, DigitalOcean, Oracle ...
        "169.254.170.2",  # AWS ECS task metadata and credentials
        "fd00:ec2::254",  # AWS IMDS over IPv6
        "100.100.100.200",  # Alibaba Cloud
    )
)
"""Instance-metadata endpoints, refused even with ``allow_private``."""

METADATA_HOSTS: frozenset[str] = frozenset(
    {
        "metadata",
        "metadata.google.internal",
        "metadata.goog",
        "instance-data",
        "instance-data.ec2.internal",
    }
)
"""Host names of metadata services, refused before any resolution."""

_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")


class TargetRefused(ValueError):
    """The target may not be contacted; ``reason`` is a short fixed phrase, free of the host."""

    def __init__(self, reason: str, target: str) -> None:
        self.reason = reason
        self.target = target
        super().__init__(f"refusing {target}: {reason}")


class UnresolvableHost(OSError):
    """The host name has no usable address (or is not a valid name at all)."""

    def __init__(self, host: str, why: str) -> None:
        self.host = host
        super().__init__(f"cannot resolve {host}: {why}")


def normalize_host(host: str) -> str:
    """Lower case, one trailing dot removed, internationalised names in IDNA (ASCII) form.

    Raises :class:`UnresolvableHost` for a name that has no IDNA form.
    """
    host = host.strip().lower()
    if host.endswith("."):
        host = host[:-1]
    if not host.isascii():
        try:
            host = host.encode("idna").decode("ascii")
        except UnicodeError as exc:
            raise UnresolvableHost(host, "not a valid internationalised name") from exc
    return host


def literal_ip(host: str) -> IPAddress | None:
    """The address when ``host`` is an IP literal (IPv6 with or without brackets), else None.

    Only canonical forms count; legacy forms such as ``2130706433`` or ``0x7f.1`` are host
    names here, and :func:`resolve_public` judges the address the resolver makes of them.
    """
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if not host or not (host[0].isdigit() or ":" in host):
        return None
    try:
        return ipaddress.ip_address(host.partition("%")[0])
    except ValueError:
        return None


def embedded_ipv4(ip: IPAddress) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address reaches (mapped, 6to4 or NAT64), if any."""
    if isinstance(ip, ipaddress.IPv4Address):
        return None
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip in _NAT64:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def address_problem(ip: IPAddress, *, allow_private: bool = False) -> str | None:
    """Why a probe may not connect to ``ip`` (a short phrase), or None when it may."""
    inner = embedded_ipv4(ip)
    if inner is not None:
        problem = address_problem(inner, allow_private=allow_private)
        return f"{problem} (embedded in IPv6)" if problem else None
    if ip in METADATA_ADDRESSES:
        return "cloud metadata address"
    if ip.is_unspecified:
        return "unspecified address"
    if ip.is_multicast:
        return "multicast address"
    if ip.is_link_local:
        return "link-local address"
    if allow_private:
        return None
    if ip.is_loopback:
        return "loopback address"
    if ip.is_private:
        return "private address"
    if ip.is_reserved:
        return "reserved address"
    if not ip.is_global:
        return "non-global address"
    return None


def host_problem(host: str, *, allow_private: bool = False) -> str | None:
    """What can be said of a host without resolving it: a refused metadata name or literal.

    ``host`` must be normalised (:func:`normalize_host`). None means "not refused yet": a
    name still has to go through :func:`resolve_public`.
    """
    if host in METADATA_HOSTS:
        return "cloud metadata host"
    ip = literal_ip(host)
    if ip is not None:
        return address_problem(ip, allow_private=allow_private)
    return None


def resolve_public(host: str, port: int, *, allow_private: bool = False) -> list[IPAddress]:
    """The addresses a probe may connect to for ``host``, in resolver order, duplicates removed.

    Raises :class:`TargetRefused` when the host is a metadata name or when any of its
    addresses is refused (one bad answer taints the name: the resolver may hand the connect a
    different answer than the check), and :class:`UnresolvableHost` when it has no address.
    Blocks on DNS for a host name; literals are judged without any lookup.
    """
    name = normalize_host(host)
    if not name:
        raise UnresolvableHost(host, "empty host name")
    problem = host_problem(name, allow_private=allow_private)
    if problem is not None:
        raise TargetRefused(problem, name)
    literal = literal_ip(name)
    if literal is not None:
        return [literal]
    try:
        infos = socket.getaddrinfo(name, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP)
    except (OSError, UnicodeError) as exc:
        raise UnresolvableHost(name, str(exc)) from exc
    found: list[IPAddress] = []
    for family, _type, _proto, _canon, sockaddr in infos:
        if family not in (socket.AF_INET, socket.AF_INET6):
            continue
        ip = ipaddress.ip_address(str(sockaddr[0]).partition("%")[0])
        problem = address_problem(ip, allow_private=allow_private)
        if problem is not None:
            raise TargetRefused(problem, name)
        if ip not in found:
            found.append(ip)
    if not found:
        raise UnresolvableHost(name, "no IPv4 or IPv6 address")
    return found
