"""``llm-sidecar replay``: the same pipeline over a JSONL file, without a broker."""

from __future__ import annotations

import sys
from contextlib import ExitStack
from pathlib import Path
from typing import BinaryIO

from .app import load_ruleset
from .errors import ConfigError, RuleSetError
from .pipeline import Pipeline, Tally
from .settings import Settings
from .sources.file import read_batches

__all__ = ["replay"]


def replay(settings: Settings, file: str, *, out: Path | None = None, batch_size: int = 500) -> int:
    """Check every event of ``file`` (``-`` for stdin); report malformed lines and go on."""
    try:
        ruleset = load_ruleset(settings)
    except RuleSetError as exc:
        raise ConfigError(f"the rules do not load:\n{exc}") from None
    pipeline = Pipeline(ruleset, timeouts_to_disable=settings.limits.check_timeouts_to_disable)
    tally = Tally()
    with ExitStack() as stack:
        stream: BinaryIO
        if file == "-":
            stream = sys.stdin.buffer
        else:
            try:
                stream = stack.enter_context(open(file, "rb"))
            except OSError as exc:
                raise ConfigError(f"cannot read {file}: {exc.strerror}") from None
        sink = stack.enter_context(open(out, "wb")) if out is not None else None
        for batch in read_batches(stream, file, batch_size):
            verdicts, dead, stats = pipeline.process(
                batch, max_event_bytes=settings.limits.max_event_bytes
            )
            for d in dead:
                print(f"line {d.record.offset + 1}: skipped: {d.error}", file=sys.stderr)
            tally.add(pipeline.rules, stats, dead)
            if sink is not None:
                sink.write(b"".join(v.to_json() + b"\n" for v in verdicts))
    print(f"rules version {ruleset.version}")
    print(tally.format())
    return 0
