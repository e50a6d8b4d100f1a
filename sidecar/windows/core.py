"""The rolling windows: the series table, the hot path that feeds it, and its reads.

:class:`Windows` keeps every live series (one score, one subject, one segment) in rings
(:mod:`sidecar.windows.ring`), feeds them from the App's verdicts and the judge's scores
(:mod:`sidecar.windows.scores` says which outcome feeds which score). The collector that
exports them (:mod:`sidecar.windows.export`) reads this table; :class:`sidecar.windows.Windows`
registers it, so that the exporter depends on the table and not the other way round.

Label values pass a :class:`~sidecar.metrics.LabelFolder` (allowlist, then ``other``), new
series beyond ``max_series`` fold into an all-``other`` series (except that the series of one
segment's judged attack probes are kept or folded together), and series idle for longer than
the longest window are dropped.

The hot path (:meth:`Windows.observe_verdicts`, an App listener) does a few dictionary updates
per event into a per-batch scratch table, then adds each touched series to its rings once per
batch.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Mapping, Sequence

from ..metrics import OTHER, LabelFolder
from ..pipeline import Verdict
from ..rules import CompiledRule
from ..settings import DIMENSIONS, LabelSettings, WindowSettings, parse_duration
from .ring import ALL, WIDTH, N, ScoreKey, Segment, SeriesKey, _accumulate, _Rings, _Series
from .scores import (
    _EVENT_PASS,
    _FIXED_KEYS,
    _JUDGED_BY,
    _LEAKAGE,
    _LEAKAGE_BY,
    _REFUSAL,
    _ROBUSTNESS,
    _ROBUSTNESS_DETECTOR,
    _UNSUCCESSFUL,
    CORRECTED,
    RGB_SCORES,
    SCORES,
    Figures,
    _correction_parts,
    _first,
    _rank,
    _Roles,
    organic_subject,
)


def _all(value: str | None, times: int = 1) -> str:
    return ALL


class Windows:
    """Rolling windows of every score; register once, feed from the App and the judge.

    ``observe_verdicts`` is an App listener (synchronous, cheap); ``observe_scores`` is the
    judge's ``on_scores`` callback. Rule ids are mapped to check names by :meth:`bind_rules`,
    called directly or, with ``rules=``, whenever a batch carries a new rules version.
    """

    def __init__(
        self,
        settings: WindowSettings | None = None,
        *,
        labels: LabelSettings | None = None,
        rules: Callable[[], Sequence[CompiledRule]] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.settings = s = settings or WindowSettings()
        labels = labels or LabelSettings()
        self.names = list(s.windows)
        self.spans = [parse_duration(w) / s.buckets for w in s.windows]
        self.longest = float(parse_duration(s.windows[-1]))
        self._rings = _Rings(self.spans, s.buckets)
        self.folders = {
            "route": LabelFolder(labels.routes),
            "model": LabelFolder(labels.models),
            "tenant": LabelFolder(labels.tenants),
        }
        self._dims = [d in s.segment_labels for d in DIMENSIONS]
        self._other_seg: Segment = tuple(  # type: ignore[assignment]
            OTHER if use else ALL for use in self._dims
        )
        self._clock = clock
        self._rules_source = rules
        self._rules_version: str | None = None
        self._roles = _Roles((), s)
        self._keys: list[ScoreKey] = list(_FIXED_KEYS)
        self._index: dict[str, int] = {}
        self._rgb_slots: list[tuple[int, list[str]]] = []
        self._series: dict[SeriesKey, _Series] = {}
        self._segment_count = 0
        self.folded_observations = 0
        self._lock = threading.Lock()
        self._pending: dict[Segment, list[int]] = {}
        self._pending_weighted: dict[tuple[ScoreKey, Segment], list[float]] = {}
        self._pending_idx: int | None = None
        self._last_sweep = 0.0
        self.figures = Figures(s)
        self._unsuccessful = frozenset(s.unsuccessful_tasks)
        self._ranks = dict(s.attack_ranks)
        self._detector_keys = {
            d.name: (
                ("detector_precision", d.name),
                ("detector_recall", d.name),
                ("detector_f1", d.name),
            )
            for d in s.detectors
        }
        # The series the corrected robustness of an attack category reads together (the raw
        # robustness and the series its judged sample feeds): a segment's are kept or folded
        # together (see _add).
        self._siblings: dict[ScoreKey, tuple[ScoreKey, ...]] = {}
        for subject, name in _ROBUSTNESS_DETECTOR.items():
            self._detector_keys[name] = (
                ("detector_precision", name),
                ("detector_recall", name),
                ("detector_f1", name),
            )
            group = (
                ("adversarial_robustness", subject),
                _JUDGED_BY[subject],
                *self._detector_keys[name],
            )
            for key in group:
                self._siblings[key] = tuple(k for k in group if k != key)
        self._correction = s.robustness_correction
        self._judge_keys: dict[str, ScoreKey] = {}

    # -- rules ---------------------------------------------------------------------------

    def bind_rules(self, rules: Sequence[CompiledRule], version: str | None = None) -> None:
        """Learn which rule is which check (call on every rule-set load)."""
        self._roles = _Roles(rules, self.settings)
        rgb_slot = {score: 2 * i for i, score in enumerate(RGB_SCORES.values(), start=6)}
        self._rgb_slots = [(rgb_slot[score], ids) for score, ids in self._roles.rgb]
        for r in rules:
            self._slot(r.id)
        self._rules_version = version

    def _slot(self, rule_id: str) -> int:
        """The scratch-table slot of a rule's pass rate (rules seen unbound get one too)."""
        slot = self._index.get(rule_id)
        if slot is None:
            slot = self._index[rule_id] = 2 * len(self._keys)
            self._keys.append(("rule_pass_rate", rule_id))
            for counts in self._pending.values():
                counts.extend((0, 0))
        return slot

    # -- the hot path --------------------------------------------------------------------

    def _segment(self, route: str | None, model: str | None, tenant: str | None) -> Segment:
        f, d = self.folders, self._dims
        return (
            f["route"](route) if d[0] else ALL,
            f["model"](model) if d[1] else ALL,
            f["tenant"](tenant) if d[2] else ALL,
        )

    def observe_verdicts(self, verdicts: Sequence[Verdict]) -> None:
        """Add one batch of verdicts (an App listener: synchronous, never waits).

        Per event: one lookup of its folded segment, one in the pending table
        (a flat list of ``[n, k]`` counters per segment) and two list increments per rule
        outcome. The pending table reaches the rings once per bucket of the shortest window.
        """
        if not verdicts or not self.settings.enabled:
            return
        version = verdicts[0].rules_version
        if version != self._rules_version and self._rules_source is not None:
            self.bind_rules(self._rules_source(), version)
        roles = self._roles
        index = self._index
        refusal_ids, leak_ids, rgb, negrej_ids, attack_ids = (
            roles.refusal,
            roles.leakage,
            self._rgb_slots,
            roles.negative_rejection,
            roles.attack,
        )
        refusal_one = refusal_ids[0] if len(refusal_ids) == 1 else None
        unsuccessful = self._unsuccessful
        ranks = self._ranks
        f, d = self.folders, self._dims
        route = f["route"] if d[0] else _all
        model = f["model"] if d[1] else _all
        tenant = f["tenant"] if d[2] else _all
        # Each distinct (route, model, tenant) of the batch is folded once, for as many events
        # as carry it, in the order of first appearance (which decides an unlisted folder's
        # labels), so that an event costs one lookup. Outside the lock: the folders have their
        # own, and both observers run on the event loop.
        raw: dict[tuple[str | None, str | None, str | None], int] = {}
        for v in verdicts:
            e = v.event
            labels = (e.route, e.model, e.tenant)
            raw[labels] = raw.get(labels, 0) + 1
        segment_of = {
            labels: (route(labels[0], n), model(labels[1], n), tenant(labels[2], n))
            for labels, n in raw.items()
        }
        with self._lock:
            self._roll(self._clock())
            table = self._pending
            weighted = self._pending_weighted
            width = 2 * len(self._keys)
            for v in verdicts:
                e = v.event
                seg = segment_of[(e.route, e.model, e.tenant)]
                c = table.get(seg)
                if c is None:
                    c = table[seg] = [0] * width
                checks = v.checks
                all_passed = True
                for rid, o in checks.items():
                    ok = o.passed
                    if ok is None:
                        continue
                    i = index.get(rid)
                    if i is None:
                        i = self._slot(rid)
                        width = 2 * len(self._keys)
                    c[i] += 1
                    if ok:
                        c[i + 1] += 1
                    else:
                        all_passed = False
                c[_EVENT_PASS] += 1
                if all_passed:
                    c[_EVENT_PASS + 1] += 1
                attack = e.attack
                # Probes count under their category; an event the attack check flagged
                # (and that is no probe) under the organic subject of the inferred category.
                if attack is not None:
                    subject: str | None = attack.category
                elif attack_ids:
                    subject = organic_subject(checks, attack_ids)
                else:
                    subject = None
                if refusal_ids or negrej_ids:
                    refused: bool | None = None
                    if refusal_one is not None:
                        r = checks.get(refusal_one)
                        if r is not None and r.value is None:
                            r = None
                    else:
                        r = _first(checks, refusal_ids)
                    if r is not None:
                        refused = bool(r.value)
                        c[_REFUSAL] += 1
                        if refused:
                            c[_REFUSAL + 1] += 1
                        if subject is not None:
                            j = _ROBUSTNESS[subject]
                            c[j] += 1
                            if refused:
                                c[j + 1] += 1
                    if e.task in unsuccessful:
                        r = _first(checks, negrej_ids) if negrej_ids else None
                        if r is not None:
                            refused = bool(refused) or bool(r.value)
                        if refused is not None:
                            c[_UNSUCCESSFUL] += 1
                            if refused:
                                c[_UNSUCCESSFUL + 1] += 1
                if leak_ids and subject is not None:
                    r = _first(checks, leak_ids)
                    if r is not None:
                        x = float(r.value or 0.0)
                        keys: tuple[tuple[ScoreKey, Segment], ...]
                        if attack is not None:
                            rank = float(_rank(attack, ranks))
                            # All probes, then the probe's attack category.
                            keys = ((_LEAKAGE, seg), (_LEAKAGE_BY[subject], seg))
                        else:  # organic: its own series only, ranked by the inferred category
                            rank = float(ranks.get(subject.removeprefix("organic:"), 1))
                            keys = ((_LEAKAGE_BY[subject], seg),)
                        for key in keys:
                            acc = weighted.get(key)
                            if acc is None:
                                acc = weighted[key] = [0.0] * WIDTH
                            _accumulate(acc, x, rank)
                for j, ids in rgb:
                    r = _first(checks, ids)
                    if r is not None:
                        c[j] += 1
                        if r.value:
                            c[j + 1] += 1

    def observe_scores(self, verdict: Verdict, scores: Mapping[str, float], weight: float) -> None:
        """Add one judged event (the judge's ``on_scores``): its scores and the detectors."""
        if not self.settings.enabled or not (0 < weight < math.inf):
            return
        e = verdict.event
        with self._lock:
            self._roll(self._clock())
            self._judged(verdict, self._segment(e.route, e.model, e.tenant), scores, weight)

    def _judged(
        self, verdict: Verdict, seg: Segment, scores: Mapping[str, float], weight: float
    ) -> None:
        weighted = self._pending_weighted

        def add(key: ScoreKey, x: float) -> None:
            acc = weighted.get((key, seg))
            if acc is None:
                acc = weighted[(key, seg)] = [0.0] * WIDTH
            _accumulate(acc, x, weight)

        for metric, value in scores.items():
            if not math.isfinite(value):
                continue
            key = self._judge_keys.get(metric)
            if key is None:
                if len(self._judge_keys) >= 64:  # the judge's metric names are a fixed set
                    continue
                key = self._judge_keys[metric] = ("judge_score", metric)
            add(key, value)

        def agree(name: str, cheap: bool, reference: bool) -> None:
            precision, recall, f1 = self._detector_keys[name]
            if cheap:
                add(precision, float(reference))
            if reference:
                add(recall, float(cheap))
            if cheap or reference:
                add(f1, float(cheap and reference))

        for d, ids in self._roles.detectors:
            judged = scores.get(d.judge_metric)
            if judged is None or not math.isfinite(judged):
                continue
            o = _first(verdict.checks, ids)
            if o is None:
                continue
            cheap = bool(o.value) if d.positive == "value" else o.passed is False
            reference = judged >= d.judge_threshold
            if d.judge_positive == "below":
                reference = not reference
            agree(d.name, cheap, reference)
        attack = verdict.event.attack
        if attack is not None:
            subject: str | None = attack.category
        else:
            subject = organic_subject(verdict.checks, self._roles.attack)
        corr = self._correction
        if subject is not None and corr.enabled and self._roles.refusal:
            judged = scores.get(corr.judge_metric)
            o = _first(verdict.checks, self._roles.refusal)
            if judged is not None and math.isfinite(judged) and o is not None:
                # The same cheap outcome the robustness counts, against the judge.
                refused = judged >= corr.judge_threshold
                add(_JUDGED_BY[subject], float(refused))
                agree(_ROBUSTNESS_DETECTOR[subject], bool(o.value), refused)

    def _roll(self, now: float, *, force: bool = False) -> None:
        """Move the pending tables into the rings when the shortest window's bucket changes.

        Pending observations are stamped with the start of the bucket they arrived in, so the
        time resolution of every window is one bucket of the shortest window. Called with the
        lock held.
        """
        idx = int(now // self.spans[0])
        if self._pending_idx is None:
            self._pending_idx = idx
        if idx == self._pending_idx and not force:
            return
        stamp = self._pending_idx * self.spans[0]
        self._pending_idx = idx
        keys = self._keys
        totals: dict[ScoreKey, list[float]] = {}
        for seg, c in self._pending.items():
            for i in range(0, len(c), 2):
                n = c[i]
                if n:
                    k = c[i + 1]
                    self._add(keys[i // 2], seg, stamp, (n, n, k, n, k, k), totals)
        for (key, seg), sums in self._pending_weighted.items():
            self._add(key, seg, stamp, sums, totals)
        for key, sums in totals.items():
            self._rings.add(self._get((key[0], key[1], (ALL, ALL, ALL))), stamp, sums)
        self._pending = {}
        self._pending_weighted = {}
        if now - self._last_sweep >= self.spans[0]:
            self._sweep(now)

    def _add(
        self,
        key: ScoreKey,
        seg: Segment,
        now: float,
        sums: Sequence[float],
        totals: dict[ScoreKey, list[float]],
    ) -> None:
        skey = (key[0], key[1], seg)
        series = self._series.get(skey)
        if (
            series is None
            and seg != (ALL, ALL, ALL)
            and seg != self._other_seg
            and self._segment_count >= self.settings.max_series
            # A series whose siblings this segment already keeps is kept too (at most four past
            # the limit per segment and attack category): the raw robustness, the judged share
            # and the detector's precision and recall make one corrected robustness, and one of
            # them folded alone would leave that segment without it and mix another segment's
            # probes into "other"'s.
            and not any((k[0], k[1], seg) in self._series for k in self._siblings.get(key, ()))
        ):
            self.folded_observations += int(sums[N])
            skey = (key[0], key[1], self._other_seg)
            series = self._series.get(skey)
        if series is None:
            series = self._get(skey)
        self._rings.add(series, now, sums)
        if seg != (ALL, ALL, ALL):
            t = totals.get(key)
            if t is None:
                totals[key] = list(sums)
            else:
                for j in range(WIDTH):
                    t[j] += sums[j]

    def _get(self, skey: SeriesKey) -> _Series:
        series = self._series.get(skey)
        if series is None:
            series = self._series[skey] = _Series(len(self.spans), self.settings.buckets)
            if skey[2] != (ALL, ALL, ALL):
                self._segment_count += 1
        return series

    def _sweep(self, now: float) -> None:
        """Drop series with nothing in their longest window."""
        self._last_sweep = now
        stale = [k for k, s in self._series.items() if now - s.last >= self.longest]
        for k in stale:
            del self._series[k]
            if k[2] != (ALL, ALL, ALL):
                self._segment_count -= 1

    # -- reading -------------------------------------------------------------------------

    def clock(self) -> float:
        """The windows' time (seconds; the collector's too)."""
        return self._clock()

    @property
    def series_count(self) -> int:
        """Live series, roll-ups included."""
        return len(self._series)

    def read(
        self, score: str, subject: str = "", segment: Segment = (ALL, ALL, ALL), window: str = ""
    ) -> tuple[float, float, float, float] | None:
        """(value, lower, upper, samples) of one series in one window (tests, debugging)."""
        w = self.names.index(window or self.names[0])
        if SCORES[score] == CORRECTED:
            parts = {}
            with self._lock:
                now = self._clock()
                self._roll(now, force=True)
                for name, key in _correction_parts(subject).items():
                    s = self._series.get((*key, segment))
                    if s is not None:
                        parts[name] = self._rings.window(s, w, now)
            return self.figures.corrected(**parts)
        with self._lock:
            self._roll(self._clock(), force=True)
            s = self._series.get((score, subject, segment))
            if s is None:
                return None
            sums = self._rings.window(s, w, self._clock())
        got = self.figures.interval(SCORES[score], sums)
        if got is None:
            return None
        return (*got, sums[N])

    def snapshot(self) -> list[tuple[SeriesKey, list[list[float]], list[float]]]:
        """Every series' window sums and cumulative totals, taken under the lock."""
        with self._lock:
            now = self._clock()
            self._roll(now, force=True)
            self._sweep(now)
            return [
                (
                    key,
                    [self._rings.window(s, w, now) for w in range(len(self.spans))],
                    list(s.total),
                )
                for key, s in self._series.items()
            ]
