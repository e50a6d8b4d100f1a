"""Link checks: does the text contain links, and are they well-formed.

A *link* is a token that starts with ``scheme://`` (any scheme) or with ``www.``, and runs to
the next whitespace, quote, backtick or angle bracket; trailing sentence punctuation and an
unbalanced closing bracket are not part of it, so ``(see https://example.com).`` yields
``https://example.com``. Bare domains (``example.com``) are not links here: in prose they are
indistinguishable from file names and abbreviations.

A link is *valid* when it parses with scheme http or https (``www.`` links count as http),
its host is an IP address (IPv6 in brackets) or a domain name of 1-63 character labels of
letters, digits and inner hyphens, at most 253 characters, with an alphabetic or punycode
top-level label (or ``localhost``), and any port is in 1-65535. Internationalised names are
checked in their IDNA form. This is syntax only: nothing is resolved or fetched.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Sequence
from typing import NamedTuple
from urllib.parse import urlsplit

from ..events import Event
from ..scan import ScanPattern, literal
from .base import Check, CheckResult, NoParams
from .registry import register

__all__ = ["ContainsLink", "ContainsValidLink", "NoInvalidLinks", "find_links", "link_problem"]

# The look-behind lets a link start only at the beginning of a run of scheme characters,
# so a long run of letters costs one attempt, not one per position.
_LINK = re.compile(
    r"(?<![A-Za-z0-9+.\-])(?:[A-Za-z][A-Za-z0-9+.\-]{0,31}://|www\.)[^\s<>\"'`]*",
    re.IGNORECASE,
)
_TRAILING = ".,;:!?*_~\u3002\uff0c\u3001\uff01\uff1f"  # with CJK full stop, commas, !, ?
_PAIRS = {")": "(", "]": "[", "}": "{"}
_LABEL = re.compile(r"[a-z0-9](?:[a-z0-9\-]{0,61}[a-z0-9])?\Z")
_TLD = re.compile(r"(?:[a-z]{2,63}|xn--[a-z0-9\-]{1,59})\Z")


def _trim(token: str) -> str:
    opened = {c: token.count(o) for c, o in _PAIRS.items()}
    closed = {c: token.count(c) for c in _PAIRS}
    end = len(token)
    while end:
        last = token[end - 1]
        if last in _TRAILING:
            end -= 1
        elif last in _PAIRS and closed[last] > opened[last]:
            closed[last] -= 1
            end -= 1
        else:
            break
    return token[:end]


_GATE = re.compile(r"://|www\.", re.IGNORECASE)
"""What every link holds; where a link starts is at most :data:`_SCHEME_MAX` before it."""
_SCHEME_MAX = 32


def _link_tokens(text: str) -> list[str]:
    """What ``_LINK.finditer(text)`` finds, without running ``_LINK`` from every position:
    its look-behind and scheme make it cost about 50 µs on 1 KB of prose, while every match
    holds "://" (at most 32 characters after its start) or starts at "www.". So each search
    starts at most 32 characters before the next such marker: no match can start earlier,
    and the search finds the same match that ``finditer`` would find next."""
    out: list[str] = []
    pos = 0
    folded = text.lower() if text.isascii() else None  # the same indices as text
    # The next "://" and "www." at or after pos (-1: none left). Each is looked for again only
    # once pos has passed it, so text full of one marker and short of the other is still read
    # once, not once per link.
    scheme = www = -2
    while True:
        if folded is not None:
            if scheme != -1 and scheme < pos:
                scheme = folded.find("://", pos)
            if www != -1 and www < pos:
                www = folded.find("www.", pos)
            at = scheme if www < 0 else www if scheme < 0 else min(scheme, www)
            if at < 0:
                return out
        else:
            gate = _GATE.search(text, pos)
            if gate is None:
                return out
            at = gate.start()
        m = _LINK.search(text, max(pos, at - _SCHEME_MAX))
        if m is None:
            return out
        out.append(m.group())
        pos = m.end()


def find_links(text: str) -> list[str]:
    """Every link-looking token in the text, trimmed, in order."""
    return [t for t in map(_trim, _link_tokens(text)) if t]


def _host_problem(host: str) -> str | None:
    if not host:
        return "no host"
    # Only what could be an address is parsed as one: an IPv4 address starts with a digit
    # and an IPv6 one holds ":"; a name's failed parse costs half the time of the checks.
    if host[0].isdigit() or ":" in host:
        try:
            ipaddress.ip_address(host)
            return None
        except ValueError:
            pass
    if host == "localhost":
        return None
    try:
        ascii_host = host.encode("idna").decode("ascii") if not host.isascii() else host
    except UnicodeError:
        return "host is not a valid internationalised name"
    ascii_host = ascii_host.lower()
    if ascii_host.endswith("."):
        ascii_host = ascii_host[:-1]
    if len(ascii_host) > 253:
        return "host longer than 253 characters"
    labels = ascii_host.split(".")
    if len(labels) < 2:
        return "host has no top-level domain"
    if not all(_LABEL.match(label) for label in labels):
        return "host has an invalid label"
    if not _TLD.match(labels[-1]):
        return "host has an invalid top-level domain"
    return None


def link_problem(link: str) -> str | None:
    """Why a link is not valid, or None when it is."""
    url = "http://" + link if link[:4].lower() == "www." else link
    try:
        parts = urlsplit(url)
    except ValueError:
        return "does not parse"
    if parts.scheme.lower() not in ("http", "https"):
        return "scheme is not http or https"
    netloc = parts.netloc.rpartition("@")[2]
    try:
        host = parts.hostname or ""
        port = parts.port
    except ValueError:
        return "bad port or IPv6 host"
    if port == 0:
        return "bad port"
    if netloc.startswith("["):
        try:
            ipaddress.IPv6Address(host)
        except ValueError:
            return "bad IPv6 host"
        return None
    return _host_problem(host)


class _Scan(NamedTuple):
    links: int
    valid: int
    first_problem: str | None


def _scan(text: str, stop_at_valid: bool = False) -> _Scan:
    links = valid = 0
    first: str | None = None
    for link in find_links(text):
        links += 1
        problem = link_problem(link)
        if problem is None:
            valid += 1
            if stop_at_valid:
                break
        elif first is None:
            first = f"link {links}: {problem}"
    return _Scan(links, valid, first)


_LINK_GATES = (literal("://"), literal("www.", caseless=True))
"""Every link contains one of these (see :func:`find_links`)."""


class _LinkCheck(Check[NoParams]):
    """Link checks decide from the links found, so a text without link markers gives the
    value of an empty text."""

    scan_absent_is_fixed = True

    def scan_patterns(self) -> Sequence[ScanPattern]:
        return _LINK_GATES

    def from_scan(self, found: frozenset[int], text: str, event: Event) -> CheckResult:
        return self(text if found else "", event)


@register
class ContainsLink(_LinkCheck):
    """True when the text contains at least one link-looking token, valid or not."""

    name = "contains_link"

    def __call__(self, text: str, event: Event) -> CheckResult:
        links = find_links(text)
        return CheckResult(bool(links), f"{len(links)} links" if links else None)


@register
class NoInvalidLinks(_LinkCheck):
    """True when every link in the text is valid (so also True for a text without links)."""

    name = "no_invalid_links"

    def __call__(self, text: str, event: Event) -> CheckResult:
        scan = _scan(text)
        bad = scan.links - scan.valid
        if bad:
            return CheckResult(False, f"{bad} of {scan.links} links invalid; {scan.first_problem}")
        return CheckResult(True, f"{scan.links} links" if scan.links else None)


@register
class ContainsValidLink(_LinkCheck):
    """True when at least one link in the text is valid."""

    name = "contains_valid_link"

    def __call__(self, text: str, event: Event) -> CheckResult:
        scan = _scan(text, stop_at_valid=True)
        if scan.valid:
            return CheckResult(True, None)
        return CheckResult(False, scan.first_problem or "no links")
