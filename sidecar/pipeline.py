"""Runs a compiled :class:`~sidecar.rules.RuleSet` over a batch of events.

The hot path, rule by rule over the batch: each rule whose ``when`` matches gets the field text
(bounded) of each event. A rule that declared patterns reads them from the field's shared scan
(:mod:`sidecar.scan`, one pass per field and event) and runs only its validator; a rule whose
result depends on a key of the text alone (a length) takes every text's key and makes one
outcome per distinct key; the others are called once per event. Nothing here awaits or touches
Prometheus: the per-rule tallies go into a :class:`BatchStats` that the metrics layer adds to
pre-bound counters once per batch.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from itertools import repeat
from operator import attrgetter
from typing import Any, cast

import msgspec
import orjson

from .checks.base import CheckResult, asks_missing
from .checks.text import KeywordCheck, KeywordScanner
from .errors import CheckError, CheckTimeout, DecodeError
from .events import Event, decode
from .rules import CompiledRule, RuleSet
from .scan import ScanPlan
from .sources.base import Record

__all__ = [
    "RESULTS",
    "BatchStats",
    "DeadLetter",
    "Outcome",
    "Pipeline",
    "Tally",
    "Verdict",
]

log = logging.getLogger(__name__)

RESULTS = ("pass", "fail", "error", "timeout", "not_applicable")
PASS, FAIL, ERROR, TIMEOUT, NOT_APPLICABLE = range(len(RESULTS))
_UNSCANNED: Any = object()
_NOTHING_FOUND: frozenset[int] = frozenset()
_ANY_EVENT = Event(id="-", response="")
_MEMO_SIZE = 2048
"""Distinct boolean results (or keys, :meth:`Pipeline._keyed`) per rule whose outcome
instance is kept and shared (a length rule's "850 characters", say: 1,336 distinct lengths in
20k benchmark events): past that, the rule's store starts afresh."""
_SHARED_DETAIL_CHARS = 80
"""Only results with a detail this short are kept and shared, so a rule's store holds at most
about 1 MB. A detail can quote its event (a secret's name, a masked address): a short one may
stay in memory as long as the rule set, a longer one goes with its batch."""


@dataclass(slots=True)
class Outcome:
    """One rule's result on one event. ``passed`` is None when the check could not run.

    Never modified once made: the pipeline gives many events the same instance."""

    value: bool | float | None
    passed: bool | None
    detail: str | None = None
    _json: bytes | None = field(default=None, init=False, repr=False, compare=False)
    """The outcome's JSON, made on first use: a shared instance makes it once."""

    def json(self) -> bytes:
        text = self._json
        if text is None:
            doc = {"value": self.value, "passed": self.passed, "detail": self.detail}
            # A copy of exactly its size: orjson's own result keeps a 4 KB buffer, and a
            # shared outcome keeps its JSON for as long as the rule set lives.
            text = self._json = bytes(memoryview(orjson.dumps(doc)))
        return text


@dataclass(slots=True)
class Verdict:
    """Everything llm-sidecar concluded about one event."""

    event: Event
    checks: dict[str, Outcome]
    rules_version: str
    passed: bool = True
    """False if any rule failed; rules that could not run do not count as failures."""
    judge: dict[str, float] = field(default_factory=dict)
    cut: tuple[str, ...] = ()
    """Fields longer than the checks read (:attr:`Check.max_input_chars`): the checks saw
    only their beginning. Named in the JSON as ``cut``, only when there is one."""
    trace_id: str | None = None
    """The W3C trace id of the request behind the event: the event's own ``trace_id``, else
    the record's ``traceparent`` header. In the JSON only when there is one."""

    @property
    def id(self) -> str:
        return self.event.id

    def failed_rules(self) -> list[str]:
        return [rid for rid, o in self.checks.items() if o.passed is False]

    def to_dict(self) -> dict[str, Any]:
        return (
            {
                "id": self.event.id,
                "checks": {
                    rid: {"value": o.value, "passed": o.passed, "detail": o.detail}
                    for rid, o in self.checks.items()
                },
                "judge": self.judge,
                "rules_version": self.rules_version,
            }
            | ({"cut": list(self.cut)} if self.cut else {})
            | ({"trace_id": self.trace_id} if self.trace_id else {})
        )

    def to_json(self) -> bytes:
        """``to_dict()`` as JSON, put together from each outcome's JSON (made once per
        outcome, and most outcomes are shared) and each rule id's (made once per id)."""
        keys = _JSON_KEYS
        checks = []
        for rid, o in self.checks.items():
            key = keys.get(rid)
            if key is None:
                key = _json_key(rid)
            checks.append(key + (o._json or o.json()))
        return b"".join(
            (
                b'{"id":',
                orjson.dumps(self.event.id),
                b',"checks":{',
                b",".join(checks),
                b'},"judge":',
                orjson.dumps(self.judge) if self.judge else b"{}",
                b',"rules_version":',
                orjson.dumps(self.rules_version),
                b',"cut":' + orjson.dumps(self.cut) if self.cut else b"",
                b',"trace_id":' + orjson.dumps(self.trace_id) + b"}" if self.trace_id else b"}",
            )
        )


_TRACEPARENT = re.compile(r"[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}")
_TRACE_ID = re.compile(r"[0-9a-fA-F]{32}")
_NO_TRACE = "0" * 32


def trace_id_of(record: Record, event: Event) -> str | None:
    """The trace id of the request behind ``event``: its own ``trace_id`` field (OTLP spans
    carry one), else a W3C ``traceparent`` header of its record; None for neither, or for
    a malformed or all-zero id."""
    return own_trace_id(event) or header_trace_id(record.headers)


def own_trace_id(event: Event) -> str | None:
    """The event's own ``trace_id`` field, lowercase; None if absent, malformed or zero."""
    own = event.extra.get("trace_id") if event.extra else None
    if isinstance(own, str) and _TRACE_ID.fullmatch(own) and own != _NO_TRACE:
        return own.lower()
    return None


def header_trace_id(headers: Iterable[tuple[str, bytes | str]]) -> str | None:
    """The trace id of the first W3C ``traceparent`` among ``headers`` (a record's, or an HTTP
    request's); None if there is none, or it is malformed or zero."""
    for name, value in headers:
        if name.lower() == "traceparent":
            text = value.decode("ascii", "replace") if isinstance(value, bytes) else value
            m = _TRACEPARENT.fullmatch(text.strip().lower())
            if m is not None and m.group(1) != _NO_TRACE:
                return m.group(1)
    return None


def trace(decoded: Sequence[tuple[Record, Event]], verdicts: Sequence[Verdict]) -> None:
    """Give each verdict the trace id of its event, where there is one."""
    for (record, event), verdict in zip(decoded, verdicts, strict=True):
        if record.headers or event.extra:
            verdict.trace_id = trace_id_of(record, event)


_JSON_KEYS: dict[str, bytes] = {}
"""Rule id -> its JSON and the colon after it, for :meth:`Verdict.to_json`."""
_MAX_JSON_KEYS = 4096


def _json_key(rid: str) -> bytes:
    if len(_JSON_KEYS) >= _MAX_JSON_KEYS:  # rule ids changed over many reloads: start afresh
        _JSON_KEYS.clear()
    key = _JSON_KEYS[rid] = orjson.dumps(rid) + b":"
    return key


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
    unchecked_events: int = 0
    """Events no rule applied to (their verdict's ``checks`` is empty): they pass."""
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
        self.unchecked_events += other.unchecked_events
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
        """The shared multi-pattern scans; ``scan=False`` keeps every rule on its plain path,
        without them and without keys (the reference the fast paths are tested against)."""
        self._keys = scan
        """Whether rules whose check has a key (a length) take :meth:`_keyed`."""
        self._scanners, self._scan_of = _shared_scans(self.rules)
        self._absent: dict[int, CheckResult] = {}
        """Per rule whose result without any of its patterns is fixed: that result, made
        once per pipeline (not per batch: a batch of one event is the inline API's case)."""
        self._absent_outcomes: dict[int, Outcome] = {}
        """The outcomes of those results, also made once per pipeline."""
        self._memo: list[dict[CheckResult, Outcome]] = [{} for _ in self.rules]
        """Per rule, the outcome instance of each boolean result seen (bounded by
        :data:`_MEMO_SIZE`), shared by every event with that result, across batches."""
        self._not_applicable: list[dict[str, Outcome]] = [{} for _ in self.rules]
        """Per rule, the same for each reason it could not apply (its detail)."""
        self._asks_missing = [asks_missing(rule.check) for rule in self.rules]
        """Per rule, whether its check can tell what an event lacks before a call."""
        self._by_key: list[dict[Hashable, Outcome]] = [{} for _ in self.rules]
        """Per rule whose check has a key (:meth:`~sidecar.checks.base.Check.keyer`), the
        outcome of each key seen, bounded and shared like ``_memo``."""
        self._prepare_failed: set[str] = set()
        """The rules whose check failed to prepare a batch (logged once each)."""

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
        trace(decoded, verdicts)
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

    def run_traced(
        self, ready: Sequence[tuple[Event, str | None]], *, track: bool = True
    ) -> tuple[list[Verdict], BatchStats]:
        """:meth:`run` on events whose trace ids are known (the join's, which come from
        either half's record; the inline API's, from the request): each verdict gets its
        event's."""
        verdicts, stats = self.run([event for event, _ in ready], track=track)
        for verdict, (_, trace_id) in zip(verdicts, ready, strict=True):
            verdict.trace_id = trace_id
        return verdicts, stats

    def run(
        self, events: Sequence[Event], *, track: bool = True
    ) -> tuple[list[Verdict], BatchStats]:
        """Check ``events``. ``track=False`` (the inline API, in another thread) leaves the
        rules' timeout bookkeeping alone, so only the stream disables a rule.

        Rule by rule over the batch, not event by event: each rule fills a column of
        outcomes (a rule's settings are read and its clock taken once per batch), each field
        is read (and scanned) once per event whichever rule asks first, and the events whose
        scan found none of a rule's patterns share one precomputed outcome without a call.
        The columns then become each event's outcomes, in rule order.
        """
        n = len(events)
        stats = BatchStats.empty(len(self.rules))
        failed = [False] * n
        texts: dict[tuple[str, int], list[str | None]] = {}
        hits: list[list[Any]] = [[_UNSCANNED] * n for _ in self.plan.scans]
        found: list[list[frozenset[str] | None]] = [[None] * n for _ in self._scanners]
        by_pattern: list[dict[int, list[int]] | None] = [None] * len(self.plan.scans)
        ids: list[str] = []
        columns: list[list[Outcome | None]] = []
        cut: dict[int, list[str]] = {}
        complete = True
        clock = time.perf_counter
        for i, rule in enumerate(self.rules):
            if rule.disabled:
                continue
            key = (rule.field, rule.max_chars)
            field_texts = texts.get(key)
            if field_texts is None:
                field_texts = texts[key] = _field_texts(events, *key, cut)
            start = clock()
            column, whole = self._column(
                i, events, field_texts, hits, by_pattern, found, stats, failed, track
            )
            stats.seconds[i] += clock() - start
            if column is None:  # the rule applies to none of these events (its `when`, say)
                continue
            ids.append(rule.id)
            columns.append(column)
            complete = complete and whole
        rows: list[dict[str, Outcome]]
        if not columns:
            rows = [{} for _ in range(n)]
            stats.unchecked_events = n
        elif complete:  # every rule has an outcome for every event: the usual case
            # Each column holds n outcomes by construction; map() keeps the loop in C (0.4 µs
            # an event less than a comprehension with strict zips, at 12 rules).
            rows = list(map(dict, map(zip, repeat(ids), zip(*columns, strict=False))))
        else:
            rows = [
                {rid: o for rid, o in zip(ids, row, strict=True) if o is not None}
                for row in zip(*columns, strict=True)
            ]
            stats.unchecked_events = rows.count({})
        version = self.version
        verdicts = [
            Verdict(event, row, version, not bad)
            for event, row, bad in zip(events, rows, failed, strict=True)
        ]
        for j, fields in cut.items():  # rare: a field over 200,000 characters
            verdicts[j].cut = tuple(dict.fromkeys(fields))
        stats.events = n
        stats.failed_events = sum(failed)
        return verdicts, stats

    def _column(
        self,
        i: int,
        events: Sequence[Event],
        field_texts: list[str | None],
        hits: list[list[Any]],
        by_pattern: list[dict[int, list[int]] | None],
        found: list[list[frozenset[str] | None]],
        stats: BatchStats,
        failed: list[bool],
        track: bool,
    ) -> tuple[list[Outcome | None] | None, bool]:
        """Rule i's outcome on each event (None where it does not apply; no list at all when
        it applies to none), and whether it has one on every event. Leaving out the rules
        that apply to no event keeps a batch on the quick way to its rows when every other
        rule applies everywhere. ``hits[s]`` holds each event's scan of field scan s, and
        ``by_pattern[s]``, once every event is scanned, the events in which each pattern
        occurs (:func:`_events_by_pattern`)."""
        rule = self.rules[i]
        n = len(events)
        when, requires_text = rule.when, rule.requires_text
        everywhere = when is None and not (requires_text and None in field_texts)
        targets: Sequence[int]
        if everywhere:
            targets = range(n)
        else:
            targets = [
                j
                for j in range(n)
                if (field_texts[j] is not None or not requires_text)
                and (when is None or when(events[j]))
            ]
            if not targets:
                return None, False
        whole = len(targets) == n  # a `when` that every event of the batch meets, say
        member = self.plan.member[i]
        check = rule.check
        if member is None or not check.scan_absent_is_fixed:
            keyer = check.keyer() if self._keys else None
            if keyer is not None:
                keyed = self._keyed(i, keyer, targets, field_texts, stats, failed, track)
                if keyed is not None:
                    return keyed, whole
            column: list[Outcome | None] = [None] * n
            stop = self._evaluate(i, targets, None, len(targets), events, field_texts, column,
                                  hits, found, stats, failed, track)  # fmt: skip
            return column, whole and stop is None
        # The shared scan of the field, for the events that need it, then one precomputed
        # outcome for every event in which none of the rule's own patterns occur.
        scan = self.plan.scans[member.scan]
        got_of = hits[member.scan]
        if everywhere and got_of and got_of[0] is _UNSCANNED and got_of[-1] is _UNSCANNED:
            # the first rule to read the field on every event: scan them all in one go
            scan_text = scan.scan
            got_of[:] = [
                scan_text(text) if text.isascii() else None
                for text in (t if t is not None else "" for t in field_texts)
            ]
        else:
            for j in targets:
                if got_of[j] is _UNSCANNED:
                    text = field_texts[j]
                    if text is None:
                        text = ""
                    got_of[j] = scan.scan(text) if text.isascii() else None
        lo, hi = member.offset, member.offset + member.size
        calls: list[int]
        positions: list[int]
        if everywhere:  # every event is scanned now: look up the events with a hit of ours
            index = by_pattern[member.scan]
            if index is None:
                index = by_pattern[member.scan] = _events_by_pattern(got_of)
            mine = [index[h] for h in range(lo, hi) if h in index]
            if _NOT_SCANNED in index:
                mine.append(index[_NOT_SCANNED])
            if not mine:
                calls = positions = []
            elif len(mine) == 1:
                calls = positions = mine[0]
            else:
                calls = positions = sorted(set().union(*mine))
        else:
            # Usually nothing was found at all: only the events with a hit are looked at.
            calls, positions = [], []
            for at, j in enumerate(targets):
                got = got_of[j]
                if got is None or (got and any(lo <= h < hi for h in got)):
                    calls.append(j)
                    positions.append(at)
        absent = self._absent_outcome(i)
        if everywhere:
            column = [absent] * n
        else:
            column = [None] * n
            for j in targets:
                column[j] = absent
        for j in calls:
            column[j] = None  # evaluated below
        stop = self._evaluate(i, calls, positions, len(targets), events, field_texts, column,
                              hits, found, stats, failed, track)  # fmt: skip
        if stop is not None:  # disabled there: the later events get no outcome of it
            for j in targets[stop + 1 :]:
                column[j] = None
            targets = targets[: stop + 1]
        shared = len(targets) - sum(1 for at in positions if stop is None or at <= stop)
        stats.counts[i][PASS if absent.passed else FAIL] += shared
        if not absent.passed:
            evaluated = set(calls)
            for j in targets:
                if j not in evaluated:
                    failed[j] = True
        return column, whole and stop is None

    def _keyed(
        self,
        i: int,
        keyer: Callable[[str], Hashable],
        targets: Sequence[int],
        field_texts: list[str | None],
        stats: BatchStats,
        failed: list[bool],
        track: bool,
    ) -> list[Outcome | None] | None:
        """Rule i's column when its result depends on a key of the text alone (``keyer``, a
        length, say): every text's key in one pass, then one outcome per distinct key, kept
        across batches like the outcomes of boolean results. None if a key or its result
        cannot be had: the rule then goes the plain way, which reports the error per event."""
        rule = self.rules[i]
        n = len(field_texts)
        if len(targets) == n:
            texts = field_texts if None not in field_texts else [t or "" for t in field_texts]
        else:
            texts = [field_texts[j] or "" for j in targets]
        memo = self._by_key[i]
        column: list[Outcome | None] = [None] * n
        bad: list[int] = []
        try:
            keys = list(map(keyer, cast(list[str], texts)))
            for j, key in zip(targets, keys, strict=True):
                o = memo.get(key)
                if o is None:
                    o = self._outcome(rule, rule.check.from_key(key))
                    if o.detail is None or len(o.detail) <= _SHARED_DETAIL_CHARS:
                        if len(memo) >= _MEMO_SIZE:
                            memo.clear()
                        memo[key] = o
                column[j] = o
                if not o.passed:
                    bad.append(j)
        except Exception:
            return None  # nothing counted yet: the plain path starts from scratch
        for j in bad:
            failed[j] = True
        counts = stats.counts[i]
        counts[PASS] += len(keys) - len(bad)
        counts[FAIL] += len(bad)
        if track and keys:
            rule.consecutive_timeouts = 0  # every event had its outcome: a run of timeouts ends
        return column

    def _absent_outcome(self, i: int) -> Outcome:
        """Rule i's outcome on a text in which none of its patterns occur (one instance for
        every such event: outcomes are never modified once made)."""
        outcome = self._absent_outcomes.get(i)
        if outcome is None:
            outcome = self._absent_outcomes[i] = self._outcome(
                self.rules[i], self._absent_result(i)
            )
        return outcome

    def _absent_result(self, i: int) -> CheckResult:
        """Rule i's result on a text in which none of its patterns occur (fixed for it)."""
        result = self._absent.get(i)
        if result is None:
            check = self.rules[i].check
            result = self._absent[i] = check.from_scan(_NOTHING_FOUND, "", _ANY_EVENT)
        return result

    @staticmethod
    def _outcome(rule: CompiledRule, result: CheckResult) -> Outcome:
        value, detail = result
        expect = rule.expect
        ok = bool(value) is expect if expect is not None else rule.passed(value)
        return Outcome(value, ok, detail)

    def _evaluate(
        self,
        i: int,
        calls: Sequence[int],
        positions: Sequence[int] | None,
        total: int,
        events: Sequence[Event],
        field_texts: list[str | None],
        column: list[Outcome | None],
        hits: list[list[Any]],
        found: list[list[frozenset[str] | None]],
        stats: BatchStats,
        failed: list[bool],
        track: bool,
    ) -> int | None:
        """Call rule i on the events ``calls`` (ascending), filling their places in
        ``column``. ``positions`` are their places among the rule's ``total`` events (None:
        all of them, in order): the events in between had their outcome without a call,
        which counts as a call that returned (it ends a run of timeouts). Returns the place
        at which the rule was disabled (its later events get no outcome), or None."""
        rule = self.rules[i]
        if not calls:  # every event had its outcome without a call (the usual case)
            if track and positions is not None and total:
                rule.consecutive_timeouts = 0  # which ends a run of timeouts
            return None
        check = rule.check
        call = self._caller(i, hits, found)
        expect, passed, rid = rule.expect, rule.passed, rule.id
        prepared = check.prepares and len(calls) > 1
        if prepared:
            self._prepare(rule, [field_texts[j] or "" for j in calls])
        counts = stats.counts[i]
        consecutive = rule.consecutive_timeouts
        limit = self.timeouts_to_disable
        # Outcomes of boolean results repeat (False, no detail; "850 characters"): one
        # instance each serves every event of every batch (outcomes are never modified once
        # made, so the inline API's thread may share them too).
        memo = self._memo[i]
        missing = check.missing if self._asks_missing[i] else None
        prev = -1
        stop: int | None = None
        for k, j in enumerate(calls):
            if positions is not None:
                at = positions[k]
                if at != prev + 1:
                    consecutive = 0
                prev = at
            text = field_texts[j]
            if text is None:
                text = ""
            event = events[j]
            # What the event lacks, asked before the call: the same outcome as the call's
            # CheckError, without raising one on every event of a stream that never has it.
            if missing is not None and (why := missing(event)) is not None:
                counts[NOT_APPLICABLE] += 1
                column[j] = self._not_applicable_outcome(i, why)
                continue
            try:
                result = check(text, event) if call is None else call(j, text, event)
            except CheckTimeout as exc:
                counts[TIMEOUT] += 1
                column[j] = Outcome(None, None, f"timeout: {exc}")
                if track:
                    consecutive += 1
                    if consecutive >= limit:
                        self._disable(rule, consecutive, stats)
                        stop = positions[k] if positions is not None else k
                        break
                continue
            except CheckError as exc:
                counts[NOT_APPLICABLE] += 1
                column[j] = self._not_applicable_outcome(i, str(exc))
                continue
            except Exception as exc:
                counts[ERROR] += 1
                if counts[ERROR] == 1:
                    log.warning(
                        "rule %s (%s) raised on event %s: %r", rid, rule.check_name, event.id, exc
                    )
                column[j] = Outcome(None, None, f"error: {type(exc).__name__}")
                continue
            consecutive = 0
            value, detail = result
            shareable = (value is True or value is False) and (
                detail is None or (type(detail) is str and len(detail) <= _SHARED_DETAIL_CHARS)
            )
            o = memo.get(result) if shareable else None
            if o is None:
                ok = bool(value) is expect if expect is not None else passed(value)
                o = Outcome(value, ok, detail)
                if shareable:
                    if len(memo) >= _MEMO_SIZE:
                        memo.clear()
                    memo[result] = o
            if o.passed:
                counts[PASS] += 1
            else:
                counts[FAIL] += 1
                failed[j] = True
            column[j] = o
        else:
            if positions is not None and prev != total - 1:
                consecutive = 0  # the rule's last events had their outcome without a call
        if prepared:
            self._prepare(rule, [])  # lets go of the batch's texts
        if track:
            rule.consecutive_timeouts = consecutive
        return stop

    def _not_applicable_outcome(self, i: int, why: str) -> Outcome:
        """Rule i's outcome on an event that lacks what its check needs (no ground truths,
        say): the same few reasons over and over, so their outcomes are shared like boolean
        results."""
        skipped = self._not_applicable[i]
        reason = f"not applicable: {why}"
        o = skipped.get(reason)
        if o is None:
            o = Outcome(None, None, reason)
            if len(reason) <= _SHARED_DETAIL_CHARS:
                if len(skipped) >= _MEMO_SIZE:
                    skipped.clear()
                skipped[reason] = o
        return o

    def _prepare(self, rule: CompiledRule, texts: list[str]) -> None:
        """Let the rule's check work out a batch's texts together. If that fails, each call
        still computes its own result (and raises, if it raises, where it is counted); the
        first failure of each rule is logged, not one a batch."""
        try:
            rule.check.prepare(texts)
        except Exception as exc:
            if rule.id not in self._prepare_failed:
                self._prepare_failed.add(rule.id)
                log.warning(
                    "rule %s (%s) could not prepare a batch, so its calls go one by one (logged "
                    "once): %r",
                    rule.id,
                    rule.check_name,
                    exc,
                )

    def _caller(
        self, i: int, hits: list[list[Any]], found: list[list[frozenset[str] | None]]
    ) -> Callable[[int, str, Event], CheckResult] | None:
        """How rule i computes its value on event j of the batch: from the shared scan of its
        field, from the shared keyword pass, or (None) by calling the check on the text."""
        check = self.rules[i].check
        member = self.plan.member[i]
        if member is not None:
            scan = self.plan.scans[member.scan]
            got_of = hits[member.scan]
            lo, hi = member.offset, member.offset + member.size
            from_scan = check.from_scan
            # The usual case, computed once: none of the rule's patterns occur.
            absent = self._absent_result(i) if check.scan_absent_is_fixed else None

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
        return None

    def _disable(self, rule: CompiledRule, timeouts: int, stats: BatchStats) -> None:
        rule.consecutive_timeouts = timeouts
        rule.disabled = True
        stats.newly_disabled.append(rule.id)
        log.error(
            "rule %s disabled after %d consecutive timeouts; it comes back on the next rule reload",
            rule.id,
            timeouts,
        )


_NOT_SCANNED = -1
"""The key of :func:`_events_by_pattern` for the events that were not scanned (not ASCII)."""


def _events_by_pattern(got_of: Sequence[list[int] | None]) -> dict[int, list[int]]:
    """For each pattern id, the events (ascending) in which the field's scan found it; the
    events left to the plain path (not ASCII) under :data:`_NOT_SCANNED`. Built once per
    field and batch, so each rule looks at the few events with a hit, not at every event."""
    index: dict[int, list[int]] = {}
    for j, got in enumerate(got_of):
        if got is None:
            index.setdefault(_NOT_SCANNED, []).append(j)
            continue
        for h in got:  # a scan names each pattern once
            events = index.get(h)
            if events is None:
                index[h] = [j]
            else:
                events.append(j)
    return index


def _field_texts(
    events: Sequence[Event], field: str, max_chars: int, cut: dict[int, list[str]]
) -> list[str | None]:
    """Every event's text of ``field``, cut at ``max_chars`` (the field is added to ``cut``
    under the index of each event whose text was cut)."""
    out: list[str | None]
    if field in _STRING_FIELDS:  # what Event.text returns for them, read directly
        out = list(map(attrgetter(field), events))
    else:
        out = [e.text(field) for e in events]
    if max(map(len, filter(None, out)), default=0) > max_chars:
        for j, text in enumerate(out):
            if text is not None and len(text) > max_chars:
                out[j] = text[:max_chars]
                cut.setdefault(j, []).append(field)
    return out


_STRING_FIELDS = frozenset(f.name for f in msgspec.structs.fields(Event) if f.type == str | None)
"""The event fields that hold a string or None."""


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
        self.unchecked_events = 0
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
        self.unchecked_events += stats.unchecked_events
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
            "rule"
            + (
                f" ({self.unchecked_events} of them: no rule applied)"
                if self.unchecked_events
                else ""
            )
            + f", {self.failed_events} failed one or more; {dead} dead-lettered"
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
