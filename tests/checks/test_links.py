"""contains_link, no_invalid_links and contains_valid_link."""

from __future__ import annotations

import time
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from sidecar.checks import CheckContext, get_check
from sidecar.checks.base import Check, CheckResult
from sidecar.checks.links import _LINK, _link_tokens, find_links, link_problem
from sidecar.events import Event
from tests.checks.timing import ratio

EV = Event(id="e1", response="r")


def make(name: str, **params: Any) -> Check[Any]:
    cls = get_check(name)
    assert cls is not None, name
    return cls(cls.params_model.model_validate(params), CheckContext())


def run(name: str, text: str) -> CheckResult:
    return make(name)(text, EV)


@pytest.mark.parametrize(
    ("text", "links"),
    [
        ("see https://example.com/a.", ["https://example.com/a"]),
        ("(see https://example.com)", ["https://example.com"]),
        ("https://en.wikipedia.org/wiki/Foo_(bar)).", ["https://en.wikipedia.org/wiki/Foo_(bar)"]),
        ("[docs](https://docs.example.org/x?y=1&z=2)", ["https://docs.example.org/x?y=1&z=2"]),
        ('<a href="http://a.io/p">', ["http://a.io/p"]),
        ("visit www.example.org, or WWW.EXAMPLE.NET!", ["www.example.org", "WWW.EXAMPLE.NET"]),
        ("a http://x.io b ftp://y.io", ["http://x.io", "ftp://y.io"]),
        ("no links: example.com, config.py, a.b", []),
        ("", []),
    ],
)
def test_find_links(text: str, links: list[str]) -> None:
    assert find_links(text) == links


# Pieces that make and break links: schemes of every length (a scheme may hold "www." and
# "-"), the markers alone, characters the look-behind refuses, case, non-ASCII text (whose
# lower case can change length), and the characters that end a link.
_PIECES = [
    "http://", "HTTPS://", "://", "www.", "WwW.", "s3://", "ab-", "x", "-", ".", "+", "a" * 40,
    "b1", "\u0130", "\u00e9", "ftp", " ", "\n", "<", ">", "'", "`", '"', "(", ")", "/path",
    "?q=1", "example.com",
]  # fmt: skip


@pytest.mark.parametrize("link", ["www.a ", "a://b "])
def test_many_links_of_one_marker_are_read_once(link: str) -> None:
    """Text full of one marker and without the other: the search for the missing one must
    not run to the end of the text once per link (that took 2 s on these 198 KB)."""
    text = link * 33_000
    reference = [m.group() for m in _LINK.finditer(text)]
    assert _link_tokens(text) == reference
    assert ratio(lambda: _link_tokens(text), lambda: list(_LINK.finditer(text))) < 20


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=14))
def test_link_tokens_are_what_the_pattern_finds_everywhere(pieces: list[str]) -> None:
    """The marker-guided search finds exactly what running the link pattern from every
    position finds: the same tokens, in the same order."""
    text = "".join(pieces)
    assert _link_tokens(text) == [m.group() for m in _LINK.finditer(text)]


@pytest.mark.parametrize(
    "link",
    [
        "https://example.com",
        "http://example.com/path?q=1#frag",
        "HTTPS://EXAMPLE.COM",
        "www.example.co.uk/page",
        "https://sub.domain.example.io:8443/x",
        "http://10.0.0.1:80/",
        "http://[2001:db8::1]:8080/",
        "https://user:pass@host.example.com",
        "http://localhost:3000",
        "https://münchen.de/",
        "https://xn--mnchen-3ya.de",
        "http://example.com.",
    ],
)
def test_valid_links(link: str) -> None:
    assert link_problem(link) is None


@pytest.mark.parametrize(
    ("link", "problem"),
    [
        ("ftp://files.example.com", "scheme is not http or https"),
        ("htp://example.com", "scheme is not http or https"),
        ("https://", "no host"),
        ("http://exa", "host has no top-level domain"),
        ("http://-bad-.com", "host has an invalid label"),
        ("http://a..b.com", "host has an invalid label"),
        ("http://under_score.com", "host has an invalid label"),
        ("http://" + "a" * 64 + ".com", "host has an invalid label"),
        ("http://256.1.1.1", "host has an invalid top-level domain"),
        ("http://example.c0m", "host has an invalid top-level domain"),
        ("https://example.com:99999", "bad port or IPv6 host"),
        ("https://example.com:0", "bad port"),
        ("https://example.com:http", "bad port or IPv6 host"),
        ("http://[zz::1]/", "does not parse"),
    ],
)
def test_invalid_links(link: str, problem: str) -> None:
    assert link_problem(link) == problem


def test_long_host() -> None:
    host = ".".join(["a" * 60] * 5) + ".com"
    assert link_problem("http://" + host) == "host longer than 253 characters"


def test_contains_link() -> None:
    assert run("contains_link", "see https://example.com") == CheckResult(True, "1 links")
    assert run("contains_link", "see htp://broken").value is True  # invalid still counts
    assert run("contains_link", "no link here, example.com").value is False
    assert run("contains_link", "").value is False


def test_no_invalid_links() -> None:
    assert run("no_invalid_links", "fine https://a.example.com and www.b.org").value is True
    assert run("no_invalid_links", "no links at all").value is True
    result = run("no_invalid_links", "ok https://a.com bad https://exa:99999/secret-path")
    assert result.value is False
    assert result.detail == "1 of 2 links invalid; link 2: bad port or IPv6 host"
    assert "secret-path" not in (result.detail or "")


def test_contains_valid_link() -> None:
    assert run("contains_valid_link", "bad http://x then good https://y.org").value is True
    result = run("contains_valid_link", "bad http://x and ftp://z.org")
    assert result == CheckResult(False, "link 1: host has no top-level domain")
    assert run("contains_valid_link", "nothing") == CheckResult(False, "no links")


def test_unicode_text_around_links() -> None:
    text = "Voir https://exemple.fr/été « ici » — ou 参见 https://例子.中国/路径。"
    links = find_links(text)
    assert links[0] == "https://exemple.fr/été"
    assert run("no_invalid_links", text).value is True


def test_takes_no_params() -> None:
    cls = get_check("contains_link")
    assert cls is not None
    with pytest.raises(ValidationError):
        cls.params_model.model_validate({"schemes": ["ftp"]})


@pytest.mark.parametrize(
    "text",
    [
        "a" * 200_000,
        "http://" * 30_000,
        "https://x.com/" + ")" * 200_000,
        "www." * 50_000,
        ("https://" + "a." * 100 + " ") * 800,
    ],
)
def test_huge_input_is_linear(text: str) -> None:
    check = make("no_invalid_links")
    start = time.perf_counter()
    check(text, EV)
    assert time.perf_counter() - start < 10.0  # a guard against blow-ups, not a figure


@settings(max_examples=3000, deadline=None)
@given(
    st.one_of(
        st.text(alphabet="0123456789abcdefABCDEF.:%x-", max_size=45),
        st.ip_addresses().map(str),
    )
)
def test_only_what_could_be_an_address_is_parsed_as_one(host: str) -> None:
    """A host is tried as an IP address only if it starts with a digit or holds ":": every
    string the address parser accepts does, so no address is taken for a bad name."""
    import ipaddress

    try:
        ipaddress.ip_address(host)
    except ValueError:
        return
    assert host[0].isdigit() or ":" in host
    assert link_problem(f"http://{host}/" if ":" not in host else f"http://[{host}]/") is None
