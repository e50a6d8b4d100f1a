"""The judge sampler: deterministic picks, triggers, minimums, budgets, shedding, weights."""

from __future__ import annotations

from typing import Any

import pytest

from sidecar.events import validate
from sidecar.judge.config import JudgeSettings
from sidecar.judge.sampler import RequestBudget, Sampler, TokenBudget, hash_unit
from sidecar.pipeline import Outcome, Verdict


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def verdict(
    i: int | str, *, route: str | None = None, checks: dict[str, Outcome] | None = None, **kw: Any
) -> Verdict:
    ident = str(i) if isinstance(i, str) else f"evt-{i}"
    event = validate({"id": ident, "response": "r", "route": route, **kw})
    return Verdict(event, checks or {}, "v1")


def settings(**kw: Any) -> JudgeSettings:
    return JudgeSettings(enabled=True, **kw)


def picked(sampler: Sampler, n: int, **kw: Any) -> set[int]:
    return {i for i in range(n) if sampler.decide(verdict(i, **kw)).take}


def test_hash_unit_is_stable_and_uniform() -> None:
    assert hash_unit("abc") == hash_unit("abc")
    assert 0.0 <= hash_unit("abc") < 1.0
    values = [hash_unit(f"id-{i}") for i in range(20_000)]
    assert sum(values) / len(values) == pytest.approx(0.5, abs=0.01)
    assert sum(v < 0.1 for v in values) / len(values) == pytest.approx(0.1, abs=0.01)
    assert hash_unit("abc", "salt") != hash_unit("abc")


def test_replicas_agree_and_lower_rates_keep_a_subset() -> None:
    a = picked(Sampler(settings(sample_rate=0.1)), 5000)
    b = picked(Sampler(settings(sample_rate=0.1)), 5000)
    assert a == b
    assert len(a) == pytest.approx(500, rel=0.15)
    low = picked(Sampler(settings(sample_rate=0.02)), 5000)
    assert low < a
    salted = picked(Sampler(settings(sample_rate=0.1, sample_salt="x")), 5000)
    assert salted != a


def test_route_rates_and_weights() -> None:
    s = Sampler(settings(sample_rate=0.0, route_rates={"rag": 0.25}))
    assert not picked(s, 500, route="chat")
    decisions = [s.decide(verdict(i, route="rag")) for i in range(2000)]
    taken = [d for d in decisions if d.take]
    assert len(taken) == pytest.approx(500, rel=0.15)
    assert {d.weight for d in taken} == {4.0}
    assert {d.reason for d in taken} == {"sampled"}
    assert s.taken["sampled"] == len(taken)


def test_weights_keep_the_mean_unbiased_under_stratified_rates() -> None:
    """Route a scores 1 and is sampled at 50%; route b scores 0 at 5%; half the events each."""
    s = Sampler(settings(sample_rate=0.0, route_rates={"a": 0.5, "b": 0.05}))
    num = den = 0.0
    plain: list[float] = []
    for i in range(40_000):
        route = "a" if i % 2 else "b"
        d = s.decide(verdict(i, route=route))
        if d.take:
            score = 1.0 if route == "a" else 0.0
            num += d.weight * score
            den += d.weight
            plain.append(score)
    assert num / den == pytest.approx(0.5, abs=0.03)  # the true mean
    assert sum(plain) / len(plain) > 0.85  # the unweighted mean is badly biased
    assert den == pytest.approx(40_000, rel=0.05)  # the weights stand for every event


def test_triggers() -> None:
    s = Sampler(settings(sample_rate=0.0, triggers={"failed_rules": ["leak-*"]}))
    s.set_rule_checks({"no-refusal": "refusal", "len": "length_less_than"})
    failed, passed, unknown = Outcome(True, False), Outcome(False, True), Outcome(None, None)
    cases = [
        ({"no-refusal": failed}, True),
        ({"no-refusal": passed}, False),
        ({"no-refusal": unknown}, False),
        ({"len": failed}, False),
        ({"leak-system": failed}, True),
    ]
    for i, (checks, expected) in enumerate(cases):
        d = s.decide(verdict(i, checks=checks))
        assert d.take is expected, checks
        if expected:
            assert (d.reason, d.weight) == ("triggered", 1.0)
    assert s.decide(verdict(99, attack={"category": "basic"})).reason == "triggered"
    quiet = Sampler(settings(sample_rate=0.0, triggers={"attack": False, "failed_checks": []}))
    assert not quiet.decide(verdict(99, attack={"category": "basic"})).take


def test_uncertain_checks_trigger_the_judge() -> None:
    unsure = {"jb": Outcome(False, True, "uncertain: refused (p=0.60)")}
    sure = {"jb": Outcome(False, True, "refused (p=0.97)")}
    off = {"attack": False, "failed_checks": []}
    s = Sampler(settings(sample_rate=0.0, triggers=off))
    assert s.decide(verdict(1, checks=unsure)).reason == "triggered"
    assert not s.decide(verdict(2, checks=sure)).take
    quiet = Sampler(settings(sample_rate=0.0, triggers={**off, "uncertain": False}))
    assert not quiet.decide(verdict(3, checks=unsure)).take


def test_minimum_samples_per_window() -> None:
    clock = Clock()
    s = Sampler(settings(sample_rate=0.0, min_samples_per_window=3, window_s=10), clock=clock)
    first = [s.decide(verdict(i)) for i in range(10)]
    assert [d.take for d in first] == [True] * 3 + [False] * 7
    assert {d.reason for d in first[:3]} == {"minimum"}
    clock.now += 10
    assert sum(s.decide(verdict(i)).take for i in range(10, 20)) == 3


def test_request_budget_skips_and_sheds() -> None:
    clock = Clock()
    budget = RequestBudget(2.0, clock=clock)
    s = Sampler(
        settings(sample_rate=1.0, recover_s=5, max_requests_per_s=2.0), clock=clock, requests=budget
    )
    assert budget.wait_time() == 0 and budget.wait_time() == 0
    assert budget.wait_time() == pytest.approx(0.5)
    d = s.decide(verdict(1))
    assert (d.take, d.reason) == (False, "request_budget")
    assert s.skipped["request_budget"] == 1
    assert s.factor == 0.5
    s.decide(verdict(2))
    assert s.factor == 0.5  # lowered at most once a second
    clock.now += 1.0  # the bucket refills
    assert s.decide(verdict(3)).reason != "request_budget"
    clock.now += 5.0
    s.decide(verdict(4))
    assert s.factor == 1.0  # recovered after a quiet spell


def test_shed_events_are_counted() -> None:
    s = Sampler(settings(sample_rate=1.0, min_rate_factor=0.25))
    s.factor = 0.25
    decisions = [s.decide(verdict(i)) for i in range(4000)]
    taken = sum(d.take for d in decisions)
    assert taken == pytest.approx(1000, rel=0.1)
    assert s.skipped["shed"] == 4000 - taken
    assert all(d.weight == 4.0 for d in decisions if d.take)


def test_token_budget() -> None:
    clock = Clock()
    tokens = TokenBudget(1000, clock=clock)
    s = Sampler(settings(sample_rate=1.0, max_tokens_per_minute=1000), clock=clock, tokens=tokens)
    assert s.decide(verdict(1)).take
    tokens.add(600)
    tokens.add(500)
    assert s.decide(verdict(2)).reason == "token_budget"
    clock.now += 61
    assert tokens.used() == 0
    assert s.decide(verdict(3)).take


def test_queue_full_rejection_and_circuit() -> None:
    open_ = False
    s = Sampler(settings(sample_rate=1.0), circuit_open=lambda: open_)
    d = s.decide(verdict(1))
    s.reject(d, "queue_full")
    assert s.taken["sampled"] == 0 and s.skipped["queue_full"] == 1
    assert s.factor == 0.5
    open_ = True
    assert s.decide(verdict(2)).reason == "circuit_open"


def test_configure_keeps_counts() -> None:
    s = Sampler(settings(sample_rate=1.0))
    s.decide(verdict(1))
    s.configure(settings(sample_rate=0.0, triggers={"attack": False}))
    assert not s.decide(verdict(1)).take
    assert s.taken["sampled"] == 1


def test_triggers_of_a_known_rule_set_look_only_at_trigger_rules() -> None:
    s = Sampler(settings(sample_rate=0.0, triggers={"failed_rules": ["leak-*"]}))
    s.set_rule_checks({"no-refusal": "refusal", "leak-a": "prompt_leakage", "len": "x"}, "v1")
    failed = Outcome(True, False)
    for rid, expected in (("no-refusal", True), ("leak-a", True), ("len", False)):
        v = verdict(1, checks={rid: failed})
        v.rules_version = "v1"
        assert s.decide(v).take is expected, rid
    # A verdict of another rules version (a reload in between) is still read in full.
    stale = verdict(2, checks={"leak-old": failed})
    stale.rules_version = "v0"
    assert s.decide(stale).take
