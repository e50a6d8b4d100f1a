"""The exception tree of llm-sidecar.

Every error the package raises on purpose derives from :class:`SidecarError`, carries the data
needed to report it in one line, and says whether retrying could help::

    SidecarError
    ├── ConfigError              bad settings or command-line options (not retriable)
    ├── RuleError                a rule file that does not load (file, rule id, reason)
    │   └── RuleSetError         several RuleErrors collected from one load
    ├── DecodeError              a record that is not a valid event (bounded reason code)
    ├── CheckError               a check failed on one event (the event keeps its other verdicts)
    │   └── CheckTimeout         a check ran past its budget (retriable on another event)
    ├── SourceError              the broker or MQTT server misbehaved (retriable)
    ├── EmbeddedBrokerError      the embedded demo/test broker did not start
    └── JudgeError               the LLM judge failed (retriable unless ``retriable`` is False)
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum

__all__ = [
    "CheckError",
    "CheckTimeout",
    "ConfigError",
    "DecodeError",
    "DecodeReason",
    "EmbeddedBrokerError",
    "JudgeError",
    "RuleError",
    "RuleSetError",
    "SidecarError",
    "SourceError",
    "rules_error",
]


class SidecarError(Exception):
    """Base class; ``retriable`` tells callers whether the same call may succeed later."""

    retriable: bool = False


class ConfigError(SidecarError):
    """Settings or options that cannot work; raised at start so the process exits early."""


class RuleError(SidecarError):
    """One problem in one rule file, located by file and rule id."""

    def __init__(self, file: str, rule_id: str | None, reason: str) -> None:
        self.file = file
        self.rule_id = rule_id
        self.reason = reason
        self.context: str | None = None
        """Lines that show the problem in the file (a YAML error's caret), if any."""
        where = f"{file}: rule {rule_id!r}" if rule_id else file
        super().__init__(f"{where}: {reason}")


class RuleSetError(RuleError):
    """Every problem found while loading a set of rule files, so users fix them in one pass."""

    def __init__(self, errors: Sequence[RuleError]) -> None:
        self.errors = list(errors)
        first = self.errors[0]
        super().__init__(first.file, first.rule_id, first.reason)
        self.args = ("\n".join(str(e) for e in self.errors),)


def rules_error(exc: RuleSetError) -> str:
    """What a command says when its rules do not load: one line for one problem."""
    if len(exc.errors) == 1:
        return f"the rules do not load: {exc.errors[0]}"
    lines = "".join(f"\n  {e}" for e in exc.errors)
    return f"the rules do not load ({len(exc.errors)} problems):{lines}"


class DecodeReason(StrEnum):
    """The fixed set of reasons a record goes to the dead-letter topic (a bounded label)."""

    TOO_LARGE = "too_large"
    INVALID_UTF8 = "invalid_utf8"
    INVALID_JSON = "invalid_json"
    NOT_AN_OBJECT = "not_an_object"
    INVALID_EVENT = "invalid_event"
    INVALID_OTLP = "invalid_otlp"
    """An OTLP-format record that is not an ExportTraceServiceRequest, or holds no span."""
    EMPTY = "empty"
    """A record with no value (a Kafka tombstone, an empty MQTT payload), with
    ``limits.empty_records: dead_letter``; by default such records are skipped and counted."""


class DecodeError(SidecarError):
    """A record that is not an event; ``reason`` is bounded, ``message`` is for humans."""

    def __init__(self, reason: DecodeReason, message: str) -> None:
        self.reason = reason
        self.message = message
        super().__init__(f"{reason.value}: {message}")


class CheckError(SidecarError):
    """A check raised on one event; the pipeline records it and moves on."""


class CheckTimeout(CheckError):
    """A check ran past its time budget (a user regex, typically)."""

    retriable = True


class SourceError(SidecarError):
    """The event source (Kafka, MQTT) failed in a way the caller may retry."""

    retriable = True


class EmbeddedBrokerError(SidecarError):
    """The embedded Kafka-compatible broker could not be found or started."""


class JudgeError(SidecarError):
    """A judge call failed; ``status`` is the HTTP status when there was one."""

    def __init__(self, message: str, *, retriable: bool, status: int | None = None) -> None:
        super().__init__(message)
        self.retriable = retriable
        self.status = status
