"""The shared scan (fast path) gives exactly what each check's own walk (plain path) gives."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
import regex
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sidecar import scan as scan_mod
from sidecar.checks.base import Check, CheckContext
from sidecar.checks.registry import get_check
from sidecar.errors import DecodeError
from sidecar.events import Event, decode
from sidecar.pipeline import Pipeline
from sidecar.rules import load_rules
from sidecar.scan import FieldScan, ScanPlan, translate

REPO = Path(__file__).resolve().parent.parent
# The rules of the llm-guard comparison (bench/peer_llmguard.py): user regexes, a banned list
# with non-ASCII entries, JSON, refusal and a word count on one field.
PEER_RULES = r"""
rules:
  - {id: rx-email, check: regex, params: {pattern: '[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}'}, expect: false}
  - {id: rx-url, check: regex, params: {pattern: 'https?://[^\s)\]]+'}, expect: false}
  - {id: rx-phone, check: regex, params: {pattern: '(?:\+\d{1,3}[ -]?)?\(?\d{2,4}\)?[ -]?\d{3,4}[ -]?\d{4}'}, expect: false}
  - {id: rx-ssn, check: regex, params: {pattern: '\b\d{3}-\d{2}-\d{4}\b'}, expect: false}
  - {id: rx-aws, check: regex, params: {pattern: '\bAKIA[0-9A-Z]{16}\b'}, expect: false}
  - id: banned
    check: contains_none
    params: {keywords: ['[DAN]', 'DAN:', '[🔓JAILBREAK]', 'successfully jailbroken', '![http']}
  - {id: json, check: contains_json}
  - {id: refusal, check: refusal, expect: false}
  - {id: reading-time, check: length_less_than, params: {value: 200, unit: words}}
"""

pytestmark = pytest.mark.skipif(not scan_mod.engine_available(), reason="google-re2 missing")

# Fragments that make detectors fire (or nearly fire) when glued together at random.
FRAGMENTS = [
    " ", "  ", "\n", "-", ".", "(", ")", "+", "+44 ", "00", "555", "1234", "4111", "1111",
    "4111 1111 1111 1111", "5500-0000-0000-0004", "12", "2024-01-05", "DE89", "3704 0044 0532",
    "0130 00", "GB82WEST12345698765432", "@", "a.b", "bob@example.com", "x@y", "sk-", "AKIA",
    "ABCDEFGHIJKLMNOP", "ghp_", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "xoxb-", "eyJ",
    "eyJhbGciOi.eyJzdWIiOi.sig", "-----BEGIN RSA PRIVATE KEY-----", "api_key=", "Password: ",
    "s3cr3tValue99", "bearer ", "http://", "https://ex.com/a", "www.", "WWW.Example.org",
    "://", "10.0.0.1", "::1", "fe80::1", "1.2.3", "{{", "[INSERT", "DAN:", "Hello", "x",
    "\t", "\x0b", "\x1c", "_", "'", '"', ")", "]", "9", "0", '{"a": 1}', "[1, 2]", "[1]", "{",
    "}", "[", "{ }", "[\x1c]", "STRASSE",
]  # fmt: skip

texts = st.lists(st.sampled_from(FRAGMENTS), max_size=14).map("".join)

DETECTORS: list[tuple[str, dict[str, Any]]] = [
    ("contains_email", {}),
    ("contains_phone", {}),
    ("contains_credit_card", {}),
    ("contains_iban", {}),
    ("contains_ip_address", {}),
    ("contains_ip_address", {"versions": [6], "public_only": True}),
    ("contains_secret", {}),
    ("contains_secret", {"kinds": ["generic", "jwt"]}),
    ("contains_link", {}),
    ("no_invalid_links", {}),
    ("contains_valid_link", {}),
    ("contains_any", {"keywords": ["dan:", "hello", "{{"]}),
    ("contains_none", {"keywords": ["DAN:", "Hello", "[INSERT"], "case_sensitive": True}),
    ("contains_all", {"keywords": ["x", "www."]}),
    ("contains_any", {"keywords": ["[\U0001f513JAILBREAK]", "DAN:", "stra\u00dfe"]}),
    ("contains_json", {}),
    ("contains_json", {"kinds": ["object"], "min_chars": 5}),
    ("regex", {"pattern": r"[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}"}),
    ("regex", {"pattern": r"(?:\+\d{1,3}[ -]?)?\(?\d{2,4}\)?[ -]?\d{3,4}[ -]?\d{4}"}),
    ("regex", {"pattern": r"(?<![\w])sk-\w{3,}(?!x)$", "flags": ["IGNORECASE"]}),
    ("regex", {"pattern": r"\S+\s\S+", "flags": ["MULTILINE"]}),
]


def build(name: str, params: dict[str, Any]) -> Check[Any]:
    cls = get_check(name)
    assert cls is not None
    return cls(cls.params_model.model_validate(params), CheckContext())


def fast(check: Check[Any], text: str, event: Event) -> Any:
    patterns = check.scan_patterns()
    assert patterns, "this check should declare what it needs from the scan"
    found = frozenset(FieldScan("response", 10**6, [p.expr for p in patterns]).scan(text))
    return check.from_scan(found, text, event)


@pytest.mark.parametrize(("name", "params"), DETECTORS, ids=[d[0] for d in DETECTORS])
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=texts)
def test_fast_path_equals_plain_path(name: str, params: dict[str, Any], text: str) -> None:
    check = build(name, params)
    event = Event(id="e", response=text)
    assert fast(check, text, event) == check(text, event)


def test_the_fragments_reach_both_outcomes() -> None:
    """The randomized texts are only a proof if the detectors fire on some of them."""
    rng = random.Random(3)
    fired: dict[str, set[bool]] = {}
    for _ in range(3000):
        text = "".join(rng.choices(FRAGMENTS, k=rng.randint(0, 14)))
        for name, params in DETECTORS:
            value = build(name, params)(text, Event(id="e", response=text)).value
            fired.setdefault(name, set()).add(bool(value))
    assert all(seen == {True, False} for seen in fired.values()), fired


# --------------------------------------------------------------------- random user patterns

ATOMS = [
    "a", "b", "1", " ", "-", r"\.", ".", r"\d", r"\w", r"\s", r"\S", r"\W", "[a-c]", "[^a ]",
    "[0-9-]", r"\b", r"\B", "^", "$", r"\A", r"\Z", "[[]", r"\n",
]  # fmt: skip


def _patterns() -> st.SearchStrategy[str]:
    atom = st.sampled_from(ATOMS)

    def extend(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        return st.one_of(
            st.tuples(inner, inner).map("".join),
            st.tuples(inner, inner).map(lambda t: f"(?:{t[0]}|{t[1]})"),
            st.tuples(
                inner, st.sampled_from(["*", "+", "?", "{2}", "{1,3}", "*?", "+?", "??"])
            ).map(lambda t: f"(?:{t[0]}){t[1]}"),
            inner.map(lambda s: f"({s})"),
            inner.map(lambda s: f"(?={s})"),
            inner.map(lambda s: f"(?!{s})"),
            st.sampled_from(["(?<=a)", "(?<!b)", r"(a)\1", "(?>a+)", "a++"]),
        )

    return st.recursive(atom, extend, max_leaves=6)


ptexts = st.text(alphabet="ab1 -.\n\x1cA_", max_size=20)
pflags = st.sampled_from([[], ["IGNORECASE"], ["MULTILINE"], ["DOTALL"], ["IGNORECASE", "DOTALL"]])


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pattern=_patterns(), flags=pflags, text=ptexts)
def test_translation_never_misses_and_exact_ones_agree(
    pattern: str, flags: list[str], text: str
) -> None:
    import re2

    try:
        original = regex.compile(pattern, sum(getattr(regex, f) for f in flags))
    except regex.error:
        return
    t = translate(pattern, flags)
    if t.expr is None:
        return
    rewritten = re2.compile(t.expr)
    m = original.search(text)
    r = rewritten.search(text)
    if m is not None:
        assert r is not None, (pattern, flags, text, t.expr)
    if t.exact:
        assert (m is None) == (r is None), (pattern, flags, text, t.expr)
        if m is not None and r is not None:
            assert m.span() == r.span(), (pattern, flags, text, t.expr)


def test_translate_refuses_what_it_cannot_rewrite() -> None:
    assert translate(r"\p{L}+").expr is None
    assert translate("[[:alpha:]]").expr is None  # regex reads a POSIX class, re a nested set
    assert translate("caf\u00e9").expr is None
    assert translate("ab", ["WORD"]).expr is None
    widened = translate(r"(?<=x)ab$")
    assert widened.expr is not None and not widened.exact
    assert "look-around" in widened.note
    assert translate(r"\bAKIA[0-9A-Z]{16}\b").exact


# ----------------------------------------------------------------- whole pipeline, both paths


def sample_events() -> list[Event]:
    events: list[Event] = []
    for line in (REPO / "samples" / "events.jsonl").read_bytes().splitlines():
        try:
            events.append(decode(line))
        except DecodeError:
            continue
    return events


def random_events(n: int, seed: int) -> list[Event]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        text = "".join(rng.choices(FRAGMENTS, k=rng.randint(0, 30)))
        if rng.random() < 0.1:
            text += " caf\u00e9 \u00df"  # non-ASCII: the plain path within the fast pipeline
        out.append(Event(id=str(i), prompt=text[::-1], response=text))
    return out


@pytest.mark.parametrize(
    "rules",
    [[REPO / "rules"], [REPO / "rules" / "default.yaml"], None],
    ids=["all-packs", "default", "llmguard-equivalent"],
)
def test_pipeline_verdicts_equal_with_and_without_the_scan(
    rules: list[Path] | None, tmp_path: Path
) -> None:
    if rules is None:
        (tmp_path / "peer.yaml").write_text(PEER_RULES, encoding="utf-8")
        rules = [tmp_path / "peer.yaml"]
    ruleset = load_rules(rules)
    with_scan = Pipeline(ruleset)
    without = Pipeline(load_rules(rules), scan=False)
    assert with_scan.plan and not without.plan
    events = sample_events() + random_events(1500, seed=11)
    a, stats_a = with_scan.run(events)
    b, stats_b = without.run(events)
    assert [v.to_json() for v in a] == [v.to_json() for v in b]
    assert stats_a.counts == stats_b.counts


def test_without_the_engine_every_rule_takes_its_plain_path(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ruleset = load_rules([REPO / "rules" / "default.yaml"])
    monkeypatch.setattr(scan_mod, "_re2", None)
    plan = ScanPlan(ruleset.rules)
    assert not plan and all(m is None for m in plan.member)


def test_the_scan_calls_the_compiled_set_directly() -> None:
    """The wrapper's Match costs a third of a scan; google-re2 keeps the compiled set as
    ``_set``. If a release stops doing so, this says the scan fell back to the wrapper."""
    scan = FieldScan("response", 10**6, ["foo", "ba[rz]+", "foo"])
    inner = scan._set._set  # type: ignore[attr-defined]
    assert scan._match == inner.Match
    wrapped = scan._set.Match  # type: ignore[attr-defined]
    for text in ["", "nothing here", "a foo and a bazz", "barfoo"]:
        assert sorted(scan._match(text.encode()) or []) == sorted(wrapped(text) or [])
    assert sorted(scan.scan("a foo and a bazz")) == [0, 1, 2]


def test_plans_of_the_same_patterns_share_one_compiled_set() -> None:
    """A rule file reloaded unchanged, or a second pipeline of the same rules, takes the set
    compiled for the first (compiling it is most of a pipeline's making); other patterns
    get a set of their own, and each plan finds the same as a set compiled on its own."""
    rules = [REPO / "rules" / "default.yaml"]
    first, again = ScanPlan(load_rules(rules).rules), ScanPlan(load_rules(rules).rules)
    assert first.scans and [id(s) for s in first.scans] == [id(s) for s in again.scans]
    other = ScanPlan(load_rules([REPO / "rules"]).rules)
    assert not {id(s) for s in other.scans} & {id(s) for s in first.scans}
    own = FieldScan("response", 10**6, ["sorry", "foo"])
    shared = scan_mod._field_scan("response", 10**6, ("sorry", "foo"))
    assert shared is scan_mod._field_scan("response", 10**6, ("sorry", "foo"))
    for text in ["", "sorry, foo", "nothing"]:
        assert sorted(shared.scan(text)) == sorted(own.scan(text))
