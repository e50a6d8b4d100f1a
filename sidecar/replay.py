"""``llm-sidecar replay``: the same pipeline over a JSONL file, without a broker.

``--format`` says what the file holds: native events or OTLP/JSON requests one per line, or
``otlp-proto`` requests each behind a 4-byte big-endian length (a captured topic).

With ``--judge`` the configured LLM judge scores the sampled events too (sampling, budgets and
concurrency as configured, but nothing is shed: replay waits for the judge), and the scores are
written into the verdicts. Once the judge's circuit breaker opens, replay stops asking it and
counts the remaining sampled events as not judged, so a broken judge cannot stall a replay.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import BinaryIO

from prometheus_client import CollectorRegistry

from .errors import ConfigError, DecodeReason, RuleSetError, rules_error
from .formats import Decoder
from .heap import settle_heap
from .join import Joiner
from .pipeline import BatchStats, DeadLetter, Pipeline, Tally, Verdict
from .rules import rule_notes
from .settings import Settings, load_ruleset
from .sources.file import CutOff, read_batches, read_framed_batches

__all__ = ["replay"]

Progress = Callable[[int, int], None]


def _progress_bar(width: int = 30) -> Progress:
    def show(done: int, total: int) -> None:
        filled = width * done // max(total, 1)
        print(
            f"\rjudging [{'#' * filled}{'.' * (width - filled)}] {done}/{total}",
            end="\n" if done >= total else "",
            file=sys.stderr,
            flush=True,
        )

    return show


MAX_SKIP_LINES = 10
"""Skipped lines reported one by one; the rest are only counted (by reason, in the summary)."""


def _reasons(counts: dict[str, int]) -> str:
    return ", ".join(f"{k}: {v}" for k, v in sorted(counts.items(), key=lambda kv: -kv[1]))


def _distinct_files(file: str, out: Path | None, report: Path | None) -> None:
    """Refuse outputs that would overwrite the input or each other: ``--out`` is opened
    for writing before the input is read, so ``--out`` naming the input emptied it."""
    named = [("the input", None if file == "-" else Path(file)), ("--out", out),
             ("--report", report)]  # fmt: skip
    seen: list[tuple[str, Path]] = []
    for what, path in named:
        if path is None:
            continue
        for earlier, other in seen:
            if _same_file(path, other):
                raise ConfigError(f"{what} {path} is {earlier} {other}: give another path")
        seen.append((what, path))


def _writable(path: Path) -> None:
    """Refuse a report path that cannot be written before the run, not after it (a whole
    capture checked, then nothing to show for it). Leaves no file behind."""
    existed = path.exists()
    try:
        with open(path, "ab"):
            pass
    except OSError as exc:
        raise ConfigError(f"cannot write {path}: {exc.strerror}") from None
    if not existed:
        path.unlink(missing_ok=True)


def _pretty_printed(dead: DeadLetter) -> bytes:
    """The bracket a dead first line opens a pretty-printed JSON document with, or b""."""
    line = dead.record.value.strip()
    if dead.error.reason is DecodeReason.INVALID_JSON and line in (b"{", b"["):
        return line
    return b""


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve() or (a.exists() and b.exists() and a.samefile(b))
    except OSError:
        return False


def replay(
    settings: Settings,
    file: str,
    *,
    out: Path | None = None,
    batch_size: int = 500,
    judge: bool = False,
    report: Path | None = None,
    fmt: str | None = None,
) -> int:
    """Check every event of ``file`` (``-`` for stdin); report malformed records and go on.

    ``fmt`` is the file's input format (default: ``input.format`` of the settings). Returns 0,
    or 1 when the file holds no event at all or the judge (``judge=True``) scored none of the
    sampled events. Raises :class:`ConfigError` (exit 2) for files that cannot be read or
    written, rules that do not load, and ``judge`` without an endpoint.
    """
    if judge and "base_url" not in settings.judge.model_fields_set:
        raise ConfigError(
            "replay --judge needs a judge endpoint: set judge.base_url "
            "(LLM_SIDECAR_JUDGE__BASE_URL or --config)"
        )
    decoder = Decoder(settings.input, max_bytes=settings.limits.max_event_bytes, fmt=fmt)
    framed = decoder.default == "otlp-proto"
    unit = "record" if framed else "line"
    # what can be told of the arguments before the rules load (a second or two)
    if report is not None and not report.parent.is_dir():
        raise ConfigError(f"cannot write {report}: no directory {report.parent}")
    if out is not None and str(out) == "-":
        raise ConfigError(
            "--out takes a file: the summary goes to standard output (for verdicts there "
            "too, give --out /dev/stdout)"
        )
    _distinct_files(file, out, report)
    if report is not None:
        _writable(report)
    sampled = 0
    not_judged = 0
    skipped = 0
    pretty = b""
    with ExitStack() as stack:
        stream: BinaryIO
        if file == "-":
            stream = sys.stdin.buffer
        else:
            try:
                stream = stack.enter_context(open(file, "rb"))
            except OSError as exc:
                raise ConfigError(f"cannot read {file}: {exc.strerror}") from None
        try:
            ruleset = load_ruleset(settings)
        except RuleSetError as exc:
            raise ConfigError(rules_error(exc)) from None
        for note in rule_notes(ruleset):
            print(f"note: {note}", file=sys.stderr)
        pipeline = Pipeline(ruleset, timeouts_to_disable=settings.limits.check_timeouts_to_disable)
        if settings.limits.tune_gc:
            settle_heap()
        tally = Tally()
        builder = None
        if report is not None:
            from .report import ReportBuilder

            builder = ReportBuilder(ruleset.rules, ruleset.version, settings.windows)
        sink = None
        if out is not None:
            try:
                sink = stack.enter_context(open(out, "wb"))
            except OSError as exc:
                raise ConfigError(f"cannot write {out}: {exc.strerror}") from None
        service = None
        runner = None
        if judge:
            from .judge.service import JudgeService

            service = JudgeService(
                settings.judge.model_copy(update={"enabled": True}),
                CollectorRegistry(),
                on_scores=builder.observe_scores if builder is not None else None,
                log_failures=False,  # the summary at the end names every failure
            )
            service.apply_rules(ruleset)
            runner = stack.enter_context(asyncio.Runner())
            runner.run(service.start())
            stack.callback(lambda: runner.run(service.stop()) if runner else None)
        progress = _progress_bar() if judge and sys.stderr.isatty() else None
        # Prompt and response as two events: halves pair up across the whole file (the join's
        # clock stands still, so only max_pending bounds the wait); those left unpaired at its
        # end are checked alone.
        joiner = Joiner(settings.join, clock=lambda: 0.0) if settings.join.enabled else None

        def finish(verdicts: list[Verdict], dead: list[DeadLetter], stats: BatchStats) -> None:
            nonlocal skipped, sampled, not_judged, pretty
            for d in dead:
                skipped += 1
                if d.record.offset == 0 and not framed:
                    pretty = _pretty_printed(d)
                if skipped <= MAX_SKIP_LINES:
                    print(f"{unit} {d.record.offset + 1}: skipped: {d.error}", file=sys.stderr)
            tally.add(pipeline.rules, stats, dead)
            tally.add_skipped(decoder.take_skipped())
            if service is not None and runner is not None:
                chosen = service.select(verdicts)
                sampled += len(chosen)
                if service.client.breaker.state == "closed":
                    runner.run(service.judge_now(chosen, progress=progress))
                else:  # the circuit opened: stop calling a judge that keeps failing
                    not_judged += len(chosen)
            if sink is not None:
                sink.write(b"".join(v.to_json() + b"\n" for v in verdicts))
            if builder is not None:
                builder.add(verdicts, len(dead))

        limit = settings.limits.max_event_bytes
        reader = read_framed_batches if framed else read_batches
        try:
            try:
                for batch in reader(stream, file, batch_size):
                    if joiner is None:
                        finish(*pipeline.process(batch, max_event_bytes=limit, decoder=decoder))
                    else:
                        decoded, dead = pipeline.decode(
                            batch, max_event_bytes=limit, decoder=decoder
                        )
                        ready, _ = joiner.offer(decoded, batch)
                        verdicts, stats = pipeline.run_traced(ready)
                        finish(verdicts, dead, stats)
            except CutOff as exc:
                # The whole records were checked; the cut one counts as a skipped record.
                skipped += 1
                tally.dead["cut_off"] = tally.dead.get("cut_off", 0) + 1
                print(f"{exc}: skipped", file=sys.stderr)
            if joiner is not None:
                verdicts, stats = pipeline.run_traced(joiner.flush())
                finish(verdicts, [], stats)
        except OSError as exc:  # a read or write failing half-way (a full disk, say)
            raise ConfigError(f"replay failed: {exc.strerror or exc}") from None
    if skipped > MAX_SKIP_LINES:
        print(
            f"... {skipped - MAX_SKIP_LINES} more skipped {unit}s not shown "
            f"({skipped} in all: {_reasons(tally.dead)})",
            file=sys.stderr,
        )
    if pretty:
        print(
            f"hint: the first line is a lone {pretty.decode()!r}: the file looks like "
            "pretty-printed JSON, but replay reads one JSON document per line (make it so "
            f"with `jq -c {'.' if pretty == b'{' else '.[]'!r} FILE`)",
            file=sys.stderr,
        )
    if builder is not None and report is not None:
        try:
            builder.write(report, source=file if file != "-" else "standard input")
        except OSError as exc:
            raise ConfigError(f"cannot write {report}: {exc.strerror}") from None
    print(f"rules version {ruleset.version}")
    print(tally.format())
    if report is not None:
        print(f"report written to {report}")
    status = 0
    if service is not None:
        o = service.outcomes
        failures = dict(service.failures)
        if not_judged:
            failures["not asked: circuit open"] = not_judged
        line = (
            f"judge: {sampled} event{'' if sampled == 1 else 's'} sampled, "
            f"{o['scored']} scored, {o['partial']} partly "
            f"scored, {o['failed'] + not_judged} failed"
            + (f", {o['error']} stopped on an error (logged)" if o["error"] else "")
        )
        print(line + (f"; failed scores by reason: {_reasons(failures)}" if failures else ""))
        attempts = service.client.failed_attempts
        if attempts:
            print(f"judge: failed requests by reason: {_reasons(attempts)}")
        if sampled and not o["scored"] and not o["partial"]:
            why = _reasons(attempts) if attempts else _reasons(failures)
            print(
                f"llm-sidecar: error: the judge at {settings.judge.base_url} scored none of the "
                f"{sampled} sampled event{'' if sampled == 1 else 's'} (failed requests: {why})",
                file=sys.stderr,
            )
            status = 1
    if tally.events == 0:
        # A capture that came out empty must not pass a CI job as "all checks passed".
        name = "standard input" if file == "-" else file
        what = f"no {unit} of {name} is an event" if skipped else f"{name} holds no event"
        print(f"llm-sidecar: error: {what}", file=sys.stderr)
        status = 1
    return status
