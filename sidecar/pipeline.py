"""Runs a compiled :class:`~sidecar.rules.RuleSet` over a batch of events.

The hot path, rule by rule over the batch: each rule whose ``when`` matches gets the field text
(bounded) of each event. A rule that declared patterns reads them from the field's shared scan
(:mod:`sidecar.scan`, one pass per field and event) and runs only its validator; the others are
called once per event. Nothing here awaits or touches Prometheus: the per-rule tallies go into
a :class:`BatchStats` that the metrics layer adds to pre-bound counters once per batch.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import orjson

from .checks.base import CheckResult
from .checks.text import KeywordCheck, KeywordScanner
from .errors import CheckError, CheckTimeout, DecodeError
from .events import Event, decode
from .rules import CompiledRule, RuleSet
from .scan import ScanPlan
from .sources.base import Record

__all__ = ["RESULTS", "BatchStats", "DeadLetter", "Outcome", "Pipeline", "Tally", "Verdict"]

log = logging.getLogger(__name__)

RESULTS = ("pass", "fail", "error", "timeout", "not_applicable")
PASS, FAIL, ERROR, TIMEOUT, NOT_APPLICABLE = range(len(RESULTS))
_UNSCANNED: Any = object()
_NOTHING_FOUND: frozenset[int] = frozenset()
_ANY_EVENT = Event(id="-", response="")


@dataclass(slots=True)
class Outcome:
    """One rule's result on one event. ``passed`` is None when the check could not run."""

    value: bool | float | None
    passed: bool | None
    detail: str | None = None


@dataclass(slots=True)
class Verdict:
    """Everything llm-sidecar concluded about one event."""

    event: Event
    checks: dict[str, Outcome]
    rules_version: str
    passed: bool = True
    """False if any rule failed; rules that could not run do not count as failures."""
    judge: dict[str, float] = field(default_factory=dict)

    @property
    def id(self) -> str:
        return self.event.id

    def failed_rules(self) -> list[str]:
        return [rid for rid, o in self.checks.items() if o.passed is False]

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.event.id,
            "checks": {
                rid: {"value": o.value, "passed": o.passed, "detail": o.detail}
                for rid, o in self.checks.items()
            },
            "judge": self.judge,
            "rules_version": self.rules_version,
        }

    def to_json(self) -> bytes:
        return orjson.dumps(self.to_dict())


@dataclass(frozen=True, slots=True)
class DeadLetter:
    """A record that is not an event, and why."""

    record: Record
    error: DecodeError


@dataclass(slots=True)
class BatchStats:
    """Tallies of one batch, indexed like the rule set's rules."""

    counts: list[list[int]]
    """``counts[i][result]``: how often rule i ended with each of :data:`RESULTS`."""
    seconds: list[float]
    """Time spent on rule i over the batch: its checks, and the shared scan of its field
    where rule i was the first to read it."""
    events: int = 0
    failed_events: int = 0
    newly_disabled: list[str] = field(default_factory=list)

    @classmethod
    def empty(cls, n_rules: int) -> BatchStats:
        return cls([[0] * len(RESULTS) for _ in range(n_rules)], [0.0] * n_rules)

    def add(self, other: BatchStats) -> None:
        """Add the tallies of ``other`` (another slice of the same batch, same rules)."""
        for mine, theirs in zip(self.counts, other.counts, strict=True):
            for r, n in enumerate(theirs):
                mine[r] += n
        for i, spent in enumerate(other.seconds):
            self.seconds[i] += spent
        self.events += other.events
        self.failed_events += other.failed_events
        self.newly_disabled += other.newly_disabled


class Pipeline:
    """Applies one rule set; a reload builds a new Pipeline and swaps it between batches."""

    def __init__(
        self, ruleset: RuleSet, *, timeouts_to_disable: int = 5, scan: bool = True
    ) -> None:
        self.ruleset = ruleset
        self.rules: Sequence[CompiledRule] = ruleset.rules
        self.version = ruleset.version
        self.timeouts_to_disable = timeouts_to_disable
        self.plan = ScanPlan(self.rules, enabled=scan)
        """The shared multi-pattern scans; ``scan=False`` keeps every rule on its plain path
        (the reference the fast path is tested against)."""
        self._scanners, self._scan_of = _shared_scans(self.rules)

    def process(
        self,
        records: Sequence[Record],
        *,
        max_event_bytes: int,
        decoder: Callable[[Record], Sequence[Event]] | None = None,
    ) -> tuple[list[Verdict], list[DeadLetter], BatchStats]:
        """Decode a batch of raw records and check every event in it.

        ``decoder`` turns one record into its events (an input format's adapter); without
        one, every record is one native event of at most ``max_event_bytes``.
        """
        decoded, dead = self.decode(records, max_event_bytes=max_event_bytes, decoder=decoder)
        verdicts, stats = self.run([e for _, e in decoded])
        return verdicts, dead, stats

    @staticmethod
    def decode(
        records: Sequence[Record],
        *,
        max_event_bytes: int,
        decoder: Callable[[Record], Sequence[Event]] | None = None,
    ) -> tuple[list[tuple[Record, Event]], list[DeadLetter]]:
        """Each record's events (each with the record it came from), and the dead letters."""
        decoded: list[tuple[Record, Event]] = []
        dead: list[DeadLetter] = []
        for record in records:
            try:
                if decoder is None:
                    decoded.append((record, decode(record.value, max_bytes=max_event_bytes)))
                else:
                    decoded.extend((record, event) for event in decoder(record))
            except DecodeError as exc:
                # Without its traceback: a dead letter must not keep this frame (the batch)
                # alive for as long as someone holds on to it.
                dead.append(DeadLetter(record, exc.with_traceback(None)))
        return decoded, dead

    def run(
        self, events: Sequence[Event], *, track: bool = True
    ) -> tuple[list[Verdict], BatchStats]:
        """Check ``events``. ``track=False`` (the inline API, in another thread) leaves the
        rules' timeout bookkeeping alone, so only the stream disables a rule.

        Rule by rule over the batch, not event by event: a rule's settings are read and its
        clock taken once per batch, and each field is read (and scanned) once per event
        whichever rule asks first. Within an event the outcomes keep the rule order.
        """
        n = len(events)
        stats = BatchStats.empty(len(self.rules))
        checks: list[dict[str, Outcome]] = [{} for _ in range(n)]
        failed = [False] * n
        texts: dict[tuple[str, int], list[str | None]] = {}
        hits: list[list[Any]] = [[_UNSCANNED] * n for _ in self.plan.scans]
        found: list[list[frozenset[str] | None]] = [[None] * n for _ in self._scanners]
        clock = time.perf_counter
        limit = self.timeouts_to_disable
        for i, rule in enumerate(self.rules):
            if rule.disabled:
                continue
            key = (rule.field, rule.max_chars)
            field_texts = texts.get(key)
            if field_texts is None:
                field_texts = texts[key] = _field_texts(events, *key)
            call = self._caller(i, hits, found)
            when, requires_text, expect = rule.when, rule.requires_text, rule.expect
            rid, counts, passed = rule.id, stats.counts[i], rule.passed
            consecutive = rule.consecutive_timeouts
            start = clock()
            for j in range(n):
                text = field_texts[j]
                if text is None:
                    if requires_text:
                        continue
                    text = ""
                event = events[j]
                if when is not None and not when(event):
                    continue
                try:
                    value, detail = call(j, text, event)
                except CheckTimeout as exc:
                    counts[TIMEOUT] += 1
                    checks[j][rid] = Outcome(None, None, f"timeout: {exc}")
                    if track:
                        consecutive += 1
                        if consecutive >= limit:
                            self._disable(rule, consecutive, stats)
                            break
                    continue
                except CheckError as exc:
                    # The event lacks what the check needs (no ground truths, say).
                    counts[NOT_APPLICABLE] += 1
                    checks[j][rid] = Outcome(None, None, f"not applicable: {exc}")
                    continue
                except Exception as exc:
                    counts[ERROR] += 1
                    if counts[ERROR] == 1:
                        log.warning(
                            "rule %s (%s) raised on event %s: %r",
                            rid,
                            rule.check_name,
                            event.id,
                            exc,
                        )
                    checks[j][rid] = Outcome(None, None, f"error: {type(exc).__name__}")
                    continue
                consecutive = 0
                if bool(value) is expect if expect is not None else passed(value):
                    counts[PASS] += 1
                    checks[j][rid] = Outcome(value, True, detail)
                else:
                    counts[FAIL] += 1
                    failed[j] = True
                    checks[j][rid] = Outcome(value, False, detail)
            stats.seconds[i] += clock() - start
            if track:
                rule.consecutive_timeouts = consecutive
        version = self.version
        verdicts = [Verdict(events[j], checks[j], version, not failed[j]) for j in range(n)]
        stats.events = n
        stats.failed_events = sum(failed)
        return verdicts, stats

    def _caller(
        self, i: int, hits: list[list[Any]], found: list[list[frozenset[str] | None]]
    ) -> Callable[[int, str, Event], tuple[bool | float, str | None]]:
        """How rule i computes its value on event j of the batch: from the shared scan of its
        field, from the shared keyword pass, or by walking the text itself."""
        check = self.rules[i].check
        member = self.plan.member[i]
        if member is not None:
            scan = self.plan.scans[member.scan]
            got_of = hits[member.scan]
            lo, hi = member.offset, member.offset + member.size
            from_scan = check.from_scan
            # The usual case, computed once: none of the rule's patterns occur.
            absent = (
                from_scan(_NOTHING_FOUND, "", _ANY_EVENT) if check.scan_absent_is_fixed else None
            )

            def scanned(j: int, text: str, event: Event) -> CheckResult:
                got = got_of[j]
                if got is _UNSCANNED:
                    got = got_of[j] = scan.scan(text) if text.isascii() else None
                if got is None:  # not ASCII: the plain path
                    return check(text, event)
                own = frozenset(h - lo for h in got if lo <= h < hi) if got else _NOTHING_FOUND
                if not own and absent is not None:
                    return absent
                return from_scan(own, text, event)

            return scanned
        group = self._scan_of[i]
        if group is not None:
            scanner = self._scanners[group]
            kw_of = found[group]
            decide = cast(KeywordCheck, check).decide

            def keywords(j: int, text: str, event: Event) -> CheckResult:
                # one Aho-Corasick pass serves every keyword rule reading the field
                kw = kw_of[j]
                if kw is None:
                    kw = kw_of[j] = scanner.scan(text)
                return decide(kw)

            return keywords

        def plain(j: int, text: str, event: Event) -> CheckResult:
            return check(text, event)

        return plain

    def _disable(self, rule: CompiledRule, timeouts: int, stats: BatchStats) -> None:
        rule.consecutive_timeouts = timeouts
        rule.disabled = True
        stats.newly_disabled.append(rule.id)
        log.error(
            "rule %s disabled after %d consecutive timeouts; it comes back on the next rule reload",
            rule.id,
            timeouts,
        )


def _field_texts(events: Sequence[Event], field: str, max_chars: int) -> list[str | None]:
    """Every event's text of ``field``, cut at ``max_chars``."""
    out = [e.text(field) for e in events]
    for j, text in enumerate(out):
        if text is not None and len(text) > max_chars:
            out[j] = text[:max_chars]
    return out


def _shared_scans(
    rules: Sequence[CompiledRule],
) -> tuple[list[KeywordScanner], list[int | None]]:
    """Group keyword rules by what they scan, and build one scanner per group.

    Rules in a group read the same field, cut at the same length, with the same case handling,
    so one Aho-Corasick pass gives each of them the keywords it needs.
    """
    groups: dict[tuple[str, int, bool], list[int]] = {}
    for i, rule in enumerate(rules):
        if isinstance(rule.check, KeywordCheck):
            key = (rule.field, rule.max_chars, rule.check.case_sensitive)
            groups.setdefault(key, []).append(i)
    scanners: list[KeywordScanner] = []
    scan_of: list[int | None] = [None] * len(rules)
    for (_, _, case_sensitive), members in groups.items():
        keywords = {k for i in members for k in cast(KeywordCheck, rules[i].check).keywords}
        for i in members:
            scan_of[i] = len(scanners)
        scanners.append(KeywordScanner(sorted(keywords), case_sensitive=case_sensitive))
    return scanners, scan_of


@dataclass(slots=True)
class RuleTally:
    check: str
    counts: list[int]


class Tally:
    """Running totals for human summaries (demo, replay); Prometheus has its own counters."""

    def __init__(self) -> None:
        self.events = 0
        self.failed_events = 0
        self.dead: dict[str, int] = {}
        self.skipped: dict[str, int] = {}
        """Spans of OTLP records that became no event, by reason."""
        self.rules: dict[str, RuleTally] = {}

    def add_skipped(self, skipped: dict[str, int]) -> None:
        for reason, n in skipped.items():
            self.skipped[reason] = self.skipped.get(reason, 0) + n

    def add(
        self, rules: Sequence[CompiledRule], stats: BatchStats, dead: Sequence[DeadLetter] = ()
    ) -> None:
        self.events += stats.events
        self.failed_events += stats.failed_events
        for d in dead:
            self.dead[d.error.reason.value] = self.dead.get(d.error.reason.value, 0) + 1
        for rule, counts in zip(rules, stats.counts, strict=True):
            t = self.rules.setdefault(rule.id, RuleTally(rule.check_name, [0] * len(RESULTS)))
            for i, n in enumerate(counts):
                t.counts[i] += n

    def format(self) -> str:
        """A small fixed-width table of pass rates per rule."""
        dead = sum(self.dead.values())
        lines = [
            f"events: {self.events} checked, {self.events - self.failed_events} passed every "
            f"rule, {self.failed_events} failed one or more; {dead} dead-lettered"
            + (
                f" ({', '.join(f'{k}: {v}' for k, v in sorted(self.dead.items()))})" if dead else ""
            ),
            f"{'rule':<32} {'check':<22} {'evaluated':>9} {'pass rate':>9} {'errors':>6}",
        ]
        if self.skipped:
            lines.insert(
                1,
                f"spans skipped: {sum(self.skipped.values())} ("
                + ", ".join(f"{k}: {v}" for k, v in sorted(self.skipped.items()))
                + ")",
            )
        for rule_id, t in self.rules.items():
            ok, bad = t.counts[PASS], t.counts[FAIL]
            errors = t.counts[ERROR] + t.counts[TIMEOUT]
            rate = f"{ok / (ok + bad):.1%}" if ok + bad else "-"
            lines.append(f"{rule_id:<32} {t.check:<22} {ok + bad:>9} {rate:>9} {errors:>6}")
        return "\n".join(lines)
