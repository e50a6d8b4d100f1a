"""The schedule: categories take turns, gaps never undercut the budget, coverage is checked."""

from __future__ import annotations

import itertools

from sidecar.probe.attacks import load_library
from sidecar.probe.schedule import Schedule

LIB = load_library()


def make(per_hour: float = 360, jitter: float = 0.2, **kw: object) -> Schedule:
    return Schedule(
        LIB,
        categories=kw.pop("categories", ["basic", "intermediate", "advanced"]),  # type: ignore[arg-type]
        probes_per_hour=per_hour,
        jitter=jitter,
        seed=7,
    )


def test_categories_take_turns_and_a_pass_sends_every_vector_once() -> None:
    s = make()
    taken = []
    while not s.pass_done:
        taken.append(s.take())
    assert len(taken) == len(LIB.vectors)
    assert len({v.id for v in taken}) == len(LIB.vectors)
    assert [v.category for v in taken[:6]] == ["basic", "intermediate", "advanced"] * 2


def test_a_skipped_turn_keeps_the_vector_first_in_line() -> None:
    s = make()
    first = s.peek()
    s.skip()
    s.take()
    s.take()
    assert s.take() == first


def test_leakage_vectors_are_spread_over_a_category_cycle() -> None:
    s = make()
    basic = s.vectors("basic")
    positions = [i for i, v in enumerate(basic) if v.kind == "leakage"]
    gaps = [b - a for a, b in itertools.pairwise(positions)]
    assert len(positions) == 12 and max(gaps) <= 8


def test_gaps_never_undercut_the_interval_and_jitter_only_lengthens() -> None:
    s = make(per_hour=3600, jitter=0.5)
    gaps = [s.gap() for _ in range(1000)]
    assert min(gaps) >= 1.0 and max(gaps) <= 1.5 and max(gaps) > 1.3
    assert s.period_s("basic") == 4.5


def test_a_budget_too_small_for_every_window_is_refused() -> None:
    assert make(per_hour=360).coverage_problem(3600) is None
    problem = make(per_hour=2, jitter=0.0).coverage_problem(3600)
    assert problem is not None and "at least 3" in problem
    one = make(per_hour=2, jitter=0.0, categories=["basic"])
    assert one.categories == ["basic"] and one.coverage_problem(3600) is None
