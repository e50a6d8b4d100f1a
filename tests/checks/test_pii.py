"""Emails, phones, cards, IBANs, IP addresses and secrets."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from sidecar.checks import CheckContext, get_check
from sidecar.checks.base import Check, CheckResult
from sidecar.checks.pii import IBAN_LENGTHS, SecretParams, iban_valid, luhn_valid
from sidecar.events import Event
from tests.checks.timing import best_of_three

EV = Event(id="e1", response="r")


def make(name: str, **params: Any) -> Check[Any]:
    cls = get_check(name)
    assert cls is not None, name
    return cls(cls.params_model.model_validate(params), CheckContext())


def run(name: str, text: str, **params: Any) -> CheckResult:
    return make(name, **params)(text, EV)


# --- emails ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "detail"),
    [
        ("Write to john.doe@example.com.", "email j***@example.com"),
        ("first.last+tag@sub.example.co.uk", "email f***@sub.example.co.uk"),
        ("x@y.co is short", "email x***@y.co"),
        ("Mail: O'Brien@Example.ORG", "email O***@example.org"),
        ("a@xn--mnchen-3ya.de", "email a***@xn--mnchen-3ya.de"),
    ],
)
def test_contains_email(text: str, detail: str) -> None:
    assert run("contains_email", text) == CheckResult(True, detail)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "no address here",
        "user@localhost",
        "user@@example.com",
        "a@b",
        "@example.com",
        "trailing.dot.@example.com",
        "x@-bad.com",
        "x@example.c",
        "python decorators: @property",
        "a" * 65 + "@example.com",
    ],
)
def test_contains_no_email(text: str) -> None:
    assert run("contains_email", text).value is False


def test_is_email() -> None:
    assert run("is_email", "  jane@example.com\n").value is True
    assert run("is_email", "Jane <jane@example.com>").value is False
    assert run("is_email", "jane@example.com and bob@example.com").value is False
    assert run("is_email", "").value is False
    assert run("is_email", "a" * 65 + "@example.com") == CheckResult(
        False, "local part or domain too long"
    )
    assert run("is_email", "a@" + "b" * 300 + ".com").value is False


# --- phones ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "detail"),
    [
        ("Call +1 (555) 123-4567 now", "phone ...67"),
        ("(555) 123-4567", "phone ...67"),
        ("555-123-4567", "phone ...67"),
        ("555.123.4567", "phone ...67"),
        ("+44 20 7946 0958", "phone ...58"),
        ("020 7946 0958", "phone ...58"),
        ("06 12 34 56 78", "phone ...78"),
        ("+33 6 12 34 56 78", "phone ...78"),
        ("0044 20 7946 0958", "phone ...58"),
        ("+14155552671", "phone ...71"),
        ("tel. +49 30 12345678", "phone ...78"),
        ("1-800-555-0199", "phone ...99"),
        ("555-123-4567 555-987-6543", "phone ...67"),
    ],
)
def test_contains_phone(text: str, detail: str) -> None:
    assert run("contains_phone", text) == CheckResult(True, detail)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "order 12345678901",
        "tracking 1Z999AA10123456784",
        "on 2023-01-15 10:30",
        "15/01/2023",
        "from 1990-2000",
        "pi is 3.14159265",
        "1 234 567 people",
        "1.234.567 EUR",
        "server 10.0.0.1",
        "1 2 3 4 5 6 7 8",
        "ISBN 978-3-16-148410-0",
        "$1,234,567.89",
        "+123 45",
        "version 1.2.3",
    ],
)
def test_no_phone(text: str) -> None:
    assert run("contains_phone", text).value is False


# --- cards ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "detail"),
    [
        ("card 4111 1111 1111 1111 exp 12/25", "visa card ****1111"),
        ("4111-1111-1111-1111", "visa card ****1111"),
        ("5555555555554444", "mastercard card ****4444"),
        ("3782 822463 10005", "amex card ****0005"),
        ("6011111111111117", "discover card ****1117"),
        ("4111 1111 1111 1111 12 25", "visa card ****1111"),
        ("ref 555 4111 1111 1111 1111", "visa card ****1111"),
    ],
)
def test_contains_credit_card(text: str, detail: str) -> None:
    result = run("contains_credit_card", text)
    assert result == CheckResult(True, detail)
    assert "4111 1111" not in detail


@pytest.mark.parametrize(
    "text",
    [
        "4111 1111 1111 1112",  # Luhn fails
        "5555555555554445",  # Luhn fails
        "1234567812345670",  # Luhn passes, no issuer starts with 1
        "4111 1111-1111 1111",  # mixed separators
        "41111111111111111111111",  # too long: an id
        "4111 1111 1111",  # too short
        "",
    ],
)
def test_no_credit_card(text: str) -> None:
    assert run("contains_credit_card", text).value is False


def test_luhn() -> None:
    assert luhn_valid("79927398713")
    assert not luhn_valid("79927398710")
    assert luhn_valid("0")


# --- IBANs ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "detail"),
    [
        ("DE89 3704 0044 0532 0130 00", "iban DE** ****3000"),
        ("IBAN DE89370400440532013000.", "iban DE** ****3000"),
        ("GB82 WEST 1234 5698 7654 32", "iban GB** ****5432"),
        ("FR14 2004 1010 0505 0001 3M02 606", "iban FR** ****2606"),
        ("NO9386011117947", "iban NO** ****7947"),
        ("DE89 3704 0044 0532 0130 00 BANK X", "iban DE** ****3000"),
    ],
)
def test_contains_iban(text: str, detail: str) -> None:
    assert run("contains_iban", text) == CheckResult(True, detail)


@pytest.mark.parametrize(
    "text",
    [
        "DE88 3704 0044 0532 0130 00",  # bad checksum
        "DE89 3704 0044 0532 0130 0",  # wrong length for DE
        "ZZ89 3704 0044 0532 0130 00",  # no such country
        "de89370400440532013000",  # lower case
        "XDE89370400440532013000",
        "",
    ],
)
def test_no_iban(text: str) -> None:
    assert run("contains_iban", text).value is False


def test_iban_valid() -> None:
    assert iban_valid("GB82WEST12345698765432")
    assert not iban_valid("GB82WEST12345698765433")
    assert not iban_valid("GB82WEST1234569876543")
    assert all(15 <= n <= 34 for n in IBAN_LENGTHS.values())


# --- IP addresses ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "detail"),
    [
        ("server at 10.0.0.1.", "ipv4 10.x.x.x (private)"),
        ("dns 8.8.8.8", "ipv4 8.x.x.x (public)"),
        ("localhost is 127.0.0.1", "ipv4 127.x.x.x (loopback)"),
        ("use 2606:4700:4700::1111 please", "ipv6 2606:... (public)"),
        ("[::1]:8080", "ipv6 0000:... (loopback)"),
        ("mapped ::ffff:192.0.2.1", "ipv6 0000:... (private)"),
        ("fe80::1%eth0", "ipv6 fe80:... (private)"),
    ],
)
def test_contains_ip(text: str, detail: str) -> None:
    assert run("contains_ip_address", text) == CheckResult(True, detail)


@pytest.mark.parametrize(
    "text",
    [
        "999.1.1.1",
        "1.2.3",
        "v1.2.3.4",
        "1.2.3.4.5",
        "std::vector<int>",
        "at 12:30:45",
        "mac 00:1A:2B:3C:4D:5E",
        "a :: b",
        "",
    ],
)
def test_no_ip(text: str) -> None:
    assert run("contains_ip_address", text).value is False


def test_ip_params() -> None:
    assert run("contains_ip_address", "10.0.0.1", public_only=True).value is False
    assert run("contains_ip_address", "10.0.0.1 and 1.1.1.1", public_only=True).value is True
    assert run("contains_ip_address", "10.0.0.1", versions=[6]).value is False
    assert run("contains_ip_address", "::1", versions=[6]).value is True
    with pytest.raises(ValidationError):
        make("contains_ip_address", versions=[5])
    with pytest.raises(ValidationError):
        make("contains_ip_address", versions=[])


# --- secrets --------------------------------------------------------------------------------

GITHUB = "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z5A"
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.dGhpc2lzYXNpZ25hdHVyZQ"


@pytest.mark.parametrize(
    ("text", "detail"),
    [
        ("key AKIAIOSFODNN7EXAMPLE here", "aws access key id AKIA*** (20 chars)"),
        (f"token={GITHUB}", "github token ghp_*** (40 chars)"),
        ("xoxb-1234567890-1234567890-AbCdEfGhIjKl", "slack token xoxb*** (39 chars)"),
        ("use sk-proj-Ab3De5Gh7Jk9Mn1Pq3St5Vw7", "sk- api key sk-p*** (32 chars)"),
        ("-----BEGIN RSA PRIVATE KEY-----\nMIIE", "private key header"),
        ("-----BEGIN OPENSSH PRIVATE KEY-----", "private key header"),
        (f"Bearer {JWT}", "jwt eyJh*** (63 chars)"),
        ('api_key = "a8f7d6s5a4d3"', "secret assignment api_key=***"),
        ('{"client_secret": "Zx9Yw8Vu7Ts6"}', "secret assignment client_secret=***"),
        ("PASSWORD: s3cretPassw0rd", "secret assignment password=***"),
        ("Authorization: Bearer abcdef1234567890abcdef", "secret assignment bearer=***"),
    ],
)
def test_contains_secret(text: str, detail: str) -> None:
    result = run("contains_secret", text)
    assert result == CheckResult(True, detail)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "API_KEY=<your-api-key>",
        "api_key = os.environ['OPENAI_API_KEY']",
        "password: ********",
        "api_key=xxxxxxxxxxxx",
        "secret = YOUR_SECRET_HERE_123",
        "password=short1",
        "the task-list is long",
        "ghp_tooshort",
        "AKIA lowercase akiaiosfodnn7example",
        "-----BEGIN PUBLIC KEY-----",
    ],
)
def test_no_secret(text: str) -> None:
    assert run("contains_secret", text).value is False


def test_secret_detail_never_holds_the_secret() -> None:
    for text in (GITHUB, JWT, "AKIAIOSFODNN7EXAMPLE", 'api_key="a8f7d6s5a4d3"'):
        detail = run("contains_secret", text).detail
        assert detail is not None
        assert "a8f7d6" not in detail
        assert text[6:] not in detail


def test_secret_kinds() -> None:
    text = f"aws AKIAIOSFODNN7EXAMPLE and {GITHUB}"
    assert (
        run("contains_secret", text, kinds=["github"]).detail == "github token ghp_*** (40 chars)"
    )
    assert run("contains_secret", text, kinds=["jwt", "slack"]).value is False
    with pytest.raises(ValidationError):
        SecretParams.model_validate({"kinds": ["passport"]})
    with pytest.raises(ValidationError):
        SecretParams.model_validate({"kinds": []})


# --- bounded cost ---------------------------------------------------------------------------

ADVERSARIAL = [
    "a" * 200_000,
    "1" * 200_000,
    "1 " * 100_000,
    "1-" * 100_000,
    "a." * 100_000,
    "a@" * 100_000,
    "a@b." * 50_000,
    "x" * 100_000 + "@" + "y" * 99_999,
    "DE89" * 50_000,
    "DE89 " * 40_000,
    "1.1." * 50_000,
    "::" * 100_000,
    "a:" * 100_000,
    "eyJ" * 66_000,
    "eyJa." * 40_000,
    "api_key=" * 25_000,
    "-----BEGIN " * 18_000,
]
NAMES = [
    "contains_email",
    "is_email",
    "contains_phone",
    "contains_credit_card",
    "contains_iban",
    "contains_ip_address",
    "contains_secret",
]


@pytest.mark.parametrize("name", NAMES)
def test_huge_adversarial_input_is_linear(name: str) -> None:
    check = make(name)
    for text in ADVERSARIAL:
        elapsed = best_of_three(lambda: check(text, EV))  # noqa: B023 (called at once)
        assert elapsed < 0.5, (name, text[:12], elapsed)


def test_unicode_text() -> None:
    text = "Kontakt: jürgen@example.de, Tel. +49 30 12345678 — 🙂 ünïcödé"
    assert run("contains_phone", text).value is True
    assert run("contains_email", text).value is True  # "rgen@example.de": ASCII tail only
    assert run("contains_credit_card", text).value is False


def test_email_among_many_at_signs() -> None:
    assert run("contains_email", "@ " * 100 + "mail bob@example.com").value is True  # dense
    assert run("contains_email", "@handle " * 3 + "mail bob@example.com").value is True
    assert run("contains_email", "@ " * 100 + "no address").value is False


def test_generic_secret_search_finds_what_a_full_scan_finds() -> None:
    """The anchored search of the generic pattern gives exactly finditer's matches."""
    import random

    from sidecar.checks.pii import _SECRET_PATTERNS, _generic_matches

    rng = random.Random(11)
    pieces = [
        "api_key=",
        "API-Secret: ",
        "access_token => ",
        "Auth_Token=",
        "secret_key:",
        "client_secret = ",
        "private-token=",
        "password: ",
        "passwd=",
        "pwd=",
        "Bearer ",
        "bearer_token: ",
        "capital",
        "rapid",
        "xapi_key=",
        "9secret=",
        "'",
        '"',
        "Zx81Kq2mPw7Rt",
        "abcdef123456",
        "YOUR_KEY_HERE",
        "hunter2",
        " ",
        "\n",
        "=",
        "ß",
        "İ",
    ]
    pattern = _SECRET_PATTERNS["generic"]
    for _ in range(2000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 25)))
        expected = [m.span() for m in pattern.finditer(text)]
        assert [m.span() for m in _generic_matches(text)] == expected, text
